# cython: language_level=3
"""Both decoding passes of a plain batch in one compiled call.

A plain batch has a word in every token (no whitespace tokens) and dense perceptron
weights: most sentences and most text.
`decoder.decode` runs such a batch through `PlainPasses.run`, which does what its
steps from Python do (the features of the first pass, their scores, Viterbi, the
history features, their scores, Viterbi again) with the same kernels, in the same
order and over the same float32 sums, so scores and tags are the same to the bit.
A sentence then pays one call, not a Python call and a numpy array per step.
What does not change between calls (the trellis Viterbi reads, the weights, the
extractors) is made once per set of averaged weights (`decoder.plain_passes`).
"""
cimport numpy as cnp
from cymem.cymem cimport Pool
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libcpp.vector cimport vector

from ..core.arrays cimport data_of, items_of, new_array, new_matrix
from ..core.decode cimport check_offsets, decode_sequences, prepare_trellis
from ..core.features cimport FeatureExtractor
from ..core.perceptron cimport emit
from ..core.weight_rows cimport WeightRows
from ..core.word_scores cimport WordScores
from .document cimport (
    fill_abbreviation_features, fill_abbreviation_history, fill_document_features, fill_history_features,
)

from ..core.perceptron import DROPPED
from .document import ABBREVIATION_FEATURES, DOCUMENT_FEATURES, HISTORY_FEATURES, SHORT_BATCH, mention_slots

cdef Py_ssize_t _N_DOCUMENT = len(DOCUMENT_FEATURES), _N_HISTORY = len(HISTORY_FEATURES)
cdef Py_ssize_t _N_SHORT_FORM = len(ABBREVIATION_FEATURES), _SHORT_BATCH = SHORT_BATCH
cdef uint32_t _DROPPED = DROPPED


cdef class PlainPasses:
    """The passes of plain batches for one set of averaged weights.

    word_scores (WordScores): The single-word templates' cache (`Featurizer.word_scores`).
    joint (FeatureExtractor): The other templates (`Featurizer.joint_extractor`).
    document (bool): Whether the document family is on.
    lexicon (features.Lexicon): The word table the layouts' rows index.
    n_buckets (int): The hashed feature table's rows.
    weights (WeightRows): The averaged emission weights (`AveragedPerceptron.scoring_rows`).
    decoding: (transitions, factors, legal, predecessors, entity_types, n_types) as `decode.viterbi`
        and `document.history_features` take them.
    history (bool): Whether the history family is on (a second pass).
    """
    def __init__(self, WordScores word_scores, FeatureExtractor joint, bint document, lexicon, uint64_t n_buckets,
                 WeightRows weights, tuple decoding, bint history):
        transitions, factors, legal, predecessors, entity_types, n_types = decoding
        self._mem = Pool()
        prepare_trellis(&self._trellis, transitions, legal, factors, predecessors, weights.n_tags, self._mem)
        self.made_of = (word_scores, weights, transitions, factors, legal, predecessors)
        self._word_scores, self._joint, self._document, self._history = word_scores, joint, document, history
        self._lexicon, self._n_buckets, self._weights = lexicon, n_buckets, weights
        self._type_of_tag, self._n_types = entity_types, n_types

    def made_from(self, word_scores, weights, transitions, factors, legal, predecessors):
        """Whether these are the objects it was made from (`is`, not ==: a test as cheap as the call's)."""
        cdef tuple made_of = self.made_of
        return (made_of[0] is word_scores and made_of[1] is weights and made_of[2] is transitions
                and made_of[3] is factors and made_of[4] is legal and made_of[5] is predecessors)

    def run(self, layout, list match_sources, short_form_heads, float entity_bias, cnp.ndarray allowed):
        """The scores the last pass read, the first pass's tags and the final ones (before the entity
        bound and the rules) of a plain batch.

        layout (batch.Layout): The batch; its rows, sentence, mentions and offsets are read.
        match_sources (List[Tuple[intp[n, n_labels], uint32[n_labels, 5]]]): Each match source's codes and
            their feature ids, in column order (`featurizer.match_sources`).
        short_form_heads (Optional[int64[n]]): Each token's long-form head if it is in a defined short
            form's mention, else -1 (`layout.abbreviation_heads`); None without their columns.
        entity_bias (float): Added to every entity tag's score (the recall knob).
        allowed (uint8[n, n_tags]): Each token's allowed tags.
        RETURNS (float32[n, n_tags], int32[n], int32[n]): the scores, the first pass's tags and the last pass's.
        """
        return self.run_arrays(layout.rows, layout.sentence, layout.mentions, layout.offsets, match_sources,
                               short_form_heads, entity_bias, allowed)

    cdef tuple run_arrays(self, const int32_t[::1] rows, const int32_t[::1] sentence, const int32_t[::1] mentions,
                          const int64_t[::1] offsets, list match_sources, short_form_heads, float entity_bias,
                          cnp.ndarray allowed):
        """`run` over the layout's arrays (plain_decode.PlainDecode calls it with LayoutPass.run's)."""
        cdef const uint64_t[:, ::1] table = self._lexicon.table
        scores_array = self._word_scores.scores(rows, table, sentence, self._weights, self._lexicon.generation)
        cdef float[:, ::1] scores = scores_array
        cdef Py_ssize_t n = rows.shape[0], n_tags = scores.shape[1]
        if sentence.shape[0] != n or mentions.shape[0] != n:
            raise ValueError(f"rows, sentence and mentions must have a row per token ({n})")
        if cnp.PyArray_NDIM(allowed) != 2 or cnp.PyArray_DIM(allowed, 0) != n or cnp.PyArray_DIM(allowed, 1) != n_tags:
            raise ValueError(f"allowed must have a row per token and {n_tags} tags")
        cdef const uint8_t* allowed_tags = <const uint8_t*>items_of(allowed, cnp.NPY_UINT8, n * n_tags)
        check_offsets(offsets, n)
        # Scratch shared by the document and history features; a short batch needs none.
        slots = mention_slots(mentions) if (self._document or self._history) and n > _SHORT_BATCH else None
        cdef int32_t[::1] slot_view
        cdef int32_t* slot_table = NULL
        if slots is not None:
            slot_view = slots
            slot_table = &slot_view[0]

        # The first pass's hashed features, in the columns and order `featurizer.features` makes them:
        # the joint templates, the document family, the match sources, the short forms.
        cdef Py_ssize_t n_joint = self._joint.n_features, n_document = _N_DOCUMENT if self._document else 0
        cdef Py_ssize_t n_matches = 0
        for codes, _ in match_sources:  # a loop, not sum() over a generator: a sentence pays for the generator
            n_matches += codes.shape[1]
        cdef Py_ssize_t n_short = 0 if short_form_heads is None else _N_SHORT_FORM
        features = new_matrix(n, n_joint + n_document + n_matches + n_short, cnp.NPY_UINT32)
        cdef uint32_t[:, ::1] feature_view = features
        feature_view[:, :] = _DROPPED  # a loop: numpy.full costs more for a sentence
        self._joint.extract_into(rows, table, sentence, feature_view[:, :n_joint])
        cdef Py_ssize_t d, start, end, i, label, column = n_joint + n_document
        for d in range(offsets.shape[0] - 1):
            start, end = offsets[d], offsets[d + 1]
            if self._document and end > start:
                fill_document_features(rows[start:end], table, mentions[start:end], slot_table, sentence[start:end],
                                       self._n_buckets, feature_view[start:end, n_joint : column])
        cdef cnp.ndarray code_array, id_array
        cdef const Py_ssize_t* codes_of  # read through numpy's C API: typed views cost a sentence more
        cdef const uint32_t* ids_of
        cdef Py_ssize_t n_labels, n_codes
        for code_array, id_array in match_sources:
            n_labels = cnp.PyArray_DIM(code_array, 1) if cnp.PyArray_NDIM(code_array) == 2 else -1
            if (n_labels < 0 or cnp.PyArray_DIM(code_array, 0) != n
                    or cnp.PyArray_NDIM(id_array) != 2 or cnp.PyArray_DIM(id_array, 0) != n_labels):
                raise ValueError(f"match codes must have a row per token ({n}), and their ids a row per label")
            n_codes = cnp.PyArray_DIM(id_array, 1)
            codes_of = <const Py_ssize_t*>items_of(code_array, cnp.NPY_INTP, n * n_labels)
            ids_of = <const uint32_t*>items_of(id_array, cnp.NPY_UINT32, n_labels * n_codes)
            for i in range(n):
                for label in range(n_labels):
                    feature_view[i, column + label] = ids_of[label * n_codes + codes_of[i * n_labels + label]]
            column += n_labels
        cdef const int64_t[::1] heads
        if short_form_heads is not None:
            heads = short_form_heads
            fill_abbreviation_features(rows, table, heads, self._n_buckets, feature_view[:, column:])
        _add_scores(self._weights, feature_view, scores)
        cdef Py_ssize_t tag
        if entity_bias:
            for i in range(n):
                for tag in range(1, n_tags):
                    scores[i, tag] += entity_bias
        first_pass = new_array(n, cnp.NPY_INT32, zeroed=True)
        cdef int32_t* first_tags = <int32_t*>data_of(first_pass)
        if n:
            decode_sequences(&self._trellis, &scores[0, 0], allowed_tags, offsets, first_tags, n)
        if not self._history:
            return scores_array, first_pass, first_pass

        # The second pass: the first's scores plus the weights of the history features alone.
        types = new_array(n, cnp.NPY_INT64)
        cdef int64_t[::1] type_view = types
        for i in range(n):  # a loop, not numpy's fancy indexing, which costs more for a sentence
            type_view[i] = self._type_of_tag[first_tags[i]]
        history_features = new_matrix(n, _N_HISTORY + (0 if short_form_heads is None else 1), cnp.NPY_UINT32)
        cdef uint32_t[:, ::1] history_view = history_features
        history_view[:, :] = _DROPPED
        for d in range(offsets.shape[0] - 1):
            start, end = offsets[d], offsets[d + 1]
            if end > start:
                fill_history_features(rows[start:end], table, mentions[start:end], slot_table, type_view[start:end],
                                      self._n_types, self._n_buckets, history_view[start:end, :_N_HISTORY])
        if short_form_heads is not None:
            fill_abbreviation_history(heads, type_view, self._n_buckets, history_view[:, _N_HISTORY:])
        _add_scores(self._weights, history_view, scores)
        tags = new_array(n, cnp.NPY_INT32, zeroed=True)
        if n:
            decode_sequences(&self._trellis, &scores[0, 0], allowed_tags, offsets, <int32_t*>data_of(tags), n)
        return scores_array, first_pass, tags


cdef int _add_scores(WeightRows weights, const uint32_t[:, ::1] features, float[:, ::1] scores) except -1:
    """scores += the summed weights of each token's features, as `scores += model.scores(features)` adds them."""
    cdef Py_ssize_t n = features.shape[0], n_features = features.shape[1], n_tags = scores.shape[1], i, tag
    if n == 0:
        return 0
    cdef vector[float] emitted = vector[float](n * n_tags)
    with nogil:
        if n_features:
            emit(weights._table, weights._index, &features[0, 0], n, n_features, n_tags, emitted.data())
        for i in range(n):
            for tag in range(n_tags):
                scores[i, tag] += emitted[i * n_tags + tag]
    return 0
