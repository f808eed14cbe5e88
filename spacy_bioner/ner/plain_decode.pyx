# cython: language_level=3
"""Tokens -> tags of a short plain batch in one compiled call.

Most single calls tag a plain doc: a word in every token, no short form or letter
for the rules to read, no entity set before, no term list; and most need no step
after Viterbi. `decoder.decode` runs such a batch stage by stage from Python, and
for one sentence the Python between the stages costs as much as the stages.
`PlainDecode.run` calls the same compiled stages in the same order, with nothing
between them:

1. the layout (layout.LayoutPass), whose screens say whether the batch is plain;
2. the tags each token may take at sentence edges (decode.fill_allowed, the mask
   TagScheme.allowed makes);
3. features, scores and both Viterbi passes (passes.PlainPasses);
4. the screen of the steps after Viterbi (screens.AfterDecoding).

Where the layout shows the batch is not plain, or the screen that a step after
Viterbi may change a tag, it hands back the layout and `decoder.decode` goes on
from it. tests/test_plain_decode.py holds the two paths to the same tags.
"""
cimport numpy as cnp
from libc.stdint cimport uint8_t
from libcpp.vector cimport vector

from ..core.arrays cimport data_of, new_matrix
from ..core.decode cimport fill_allowed
from ..core.features cimport count_tokens
from .passes cimport PlainPasses


cdef class PlainDecode:
    """`decoder.decode` of short plain batches, for one layout, set of weights and screen.

    layout (layout.LayoutPass), passes (passes.PlainPasses), after (screens.AfterDecoding): The stages,
        as decoder.layout_pass, plain_passes and after_decoding make them.
    continuing, closing (uint8[n_tags]): The tags that continue an entity, and those that may end one.
    memory_ids (Optional[uint32[n_labels, 5]]): The memory's match feature ids (featurizer.match_ids);
        None without the memory family.
    entity_bias (float): Added to every entity tag's score (`[confidence] entity_bias`).
    names (bool): Whether the screen reads the known names (`[rules] split_name_lists`): the memory's
        matches, as name_lists.known_names gives them without term lists.
    max_tokens (int): The longest batch it takes.
    """
    cdef object _layout, _after, _memory_ids
    cdef PlainPasses _passes
    cdef vector[uint8_t] _inside, _ending
    cdef float _entity_bias
    cdef bint _names
    cdef Py_ssize_t _max_tokens
    cdef readonly tuple made_of
    cdef public tuple state  # decoder.plain_state of the component when it was last checked

    def __init__(self, layout, PlainPasses passes, after, const uint8_t[::1] continuing,
                 const uint8_t[::1] closing, memory_ids, float entity_bias, bint names, Py_ssize_t max_tokens):
        if closing.shape[0] != continuing.shape[0]:
            raise ValueError("continuing and closing must have a flag per tag")
        self._layout, self._passes, self._after, self._memory_ids = layout, passes, after, memory_ids
        self._inside.assign(&continuing[0], &continuing[0] + continuing.shape[0])
        self._ending.assign(&closing[0], &closing[0] + closing.shape[0])
        self._entity_bias, self._names, self._max_tokens = entity_bias, names, max_tokens
        self.made_of = (layout, passes, after, memory_ids, entity_bias)
        self.state = ()

    def made_from(self, layout, passes, after, memory_ids, entity_bias):
        """Whether these are the stages and settings it was made from (`is`, not ==: a test as cheap as the call's)."""
        cdef tuple made_of = self.made_of
        return (made_of[0] is layout and made_of[1] is passes and made_of[2] is after and made_of[3] is memory_ids
                and made_of[4] == entity_bias)

    def run(self, list docs):
        """The batch's tags, or what decoder.decode goes on from.

        RETURNS (Optional[int32[n]], Optional[tuple]): The tags (docs laid end to end) and the layout
            (LayoutPass.run's tuple); the tags are None where the batch is not plain or a step after
            Viterbi applies, and both are None where the batch is longer than max_tokens.
        """
        if count_tokens(docs) > self._max_tokens:
            return None, None
        laid_out = self._layout.run(docs)
        offsets, sentence, sent_starts, _, rows, mentions, spaced, short_forms, letters, matches, codes = laid_out
        if spaced or (short_forms is not None and short_forms[0]) or letters:
            return None, laid_out  # whitespace tokens, a short form or a letter's lines: Python's stages
        cdef Py_ssize_t n = cnp.PyArray_SIZE(rows), n_tags = self._inside.size()
        cdef cnp.ndarray allowed = new_matrix(n, n_tags, cnp.NPY_UINT8)
        if n:
            fill_allowed(n, n_tags, <const uint8_t*>data_of(sent_starts), NULL, NULL, NULL, self._inside.data(),
                         self._ending.data(), NULL, <uint8_t*>data_of(allowed))
        sources = [] if codes is None else [(codes, self._memory_ids)]
        _, _, tags = self._passes.run_arrays(rows, sentence, mentions, offsets, sources, None, self._entity_bias,
                                             allowed)
        if self._after.run(tags, offsets, rows, matches if self._names else None, None):
            return None, laid_out
        return tags, laid_out
