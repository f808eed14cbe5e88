# cython: language_level=3
"""Both decoding passes of a plain batch in one compiled call.

A plain batch has a word in every token (no whitespace tokens) and dense perceptron
weights: most sentences and most text.
`decoder.decode` runs such a batch through `PlainPasses.run`, which does what its
steps from Python do (the features of the first pass, their scores, Viterbi, the
history features, their scores, Viterbi again) with the same kernels, in the same
order and over the same float32 sums, so scores and tags are the same to the bit.
A sentence then pays one call, not a Python call and a numpy array per step.
The call makes its arrays and fills the word-score cache's new rows with the GIL
held, then runs every pass in one section without it: what that section writes
is the call's own, and the rows it reads of the lexicon and the word-score cache
are never written again (both grow and start over into new arrays).
What does not change between calls (the trellis Viterbi reads, the weights, the
extractors) is made once per set of averaged weights (`decoder.plain_passes`).
"""
cimport numpy as cnp
from cymem.cymem cimport Pool
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libcpp.algorithm cimport fill as fill_range
from libcpp.vector cimport vector

from ..core.arrays cimport data_of, items_of, new_array, new_matrix
from ..core.decode cimport backpointer_room, check_offsets_at, decode_checked, prepare_trellis
from ..core.features cimport FeatureExtractor
from ..core.perceptron cimport emit
from ..core.weight_rows cimport WeightRows
from ..core.word_scores cimport WordScores, WordVectors, gather
from .document cimport (
    Tokens, fill_abbreviation_features, fill_abbreviation_history, fill_document_features, fill_history_features,
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

    cdef tuple run_arrays(self, cnp.ndarray rows, cnp.ndarray sentence, cnp.ndarray mentions, cnp.ndarray offsets,
                          list match_sources, short_form_heads, float entity_bias, cnp.ndarray allowed):
        """`run` over the layout's arrays (plain_decode.PlainDecode calls it with LayoutPass.run's).
        The arrays and checks come first, with the GIL; the passes then run in one section without it."""
        cdef Py_ssize_t n = cnp.PyArray_SIZE(rows), n_tags = self._weights.n_tags
        if cnp.PyArray_SIZE(sentence) != n or cnp.PyArray_SIZE(mentions) != n:
            raise ValueError(f"rows, sentence and mentions must have a row per token ({n})")
        if cnp.PyArray_NDIM(allowed) != 2 or cnp.PyArray_DIM(allowed, 0) != n or cnp.PyArray_DIM(allowed, 1) != n_tags:
            raise ValueError(f"allowed must have a row per token and {n_tags} tags")
        cdef Tokens tokens
        tokens.rows = <const int32_t*>items_of(rows, cnp.NPY_INT32, n)
        tokens.sentence = <const int32_t*>items_of(sentence, cnp.NPY_INT32, n)
        tokens.mentions = <const int32_t*>items_of(mentions, cnp.NPY_INT32, n)
        tokens.n = n
        cdef const uint8_t* allowed_tags = <const uint8_t*>items_of(allowed, cnp.NPY_UINT8, n * n_tags)
        cdef Py_ssize_t n_offsets = cnp.PyArray_SIZE(offsets)
        cdef const int64_t* bounds = <const int64_t*>items_of(offsets, cnp.NPY_INT64, n_offsets)
        cdef Py_ssize_t longest = check_offsets_at(bounds, n_offsets, n)
        table = self._lexicon.table  # held here: the lexicon may grow into a new one
        tokens.n_columns = cnp.PyArray_DIM(table, 1) if cnp.PyArray_NDIM(table) == 2 else 0
        tokens.table = <const uint64_t*>items_of(table, cnp.NPY_UINT64, 0)
        cdef const int64_t* heads = NULL
        if short_form_heads is not None:
            heads = <const int64_t*>items_of(short_form_heads, cnp.NPY_INT64, n)
        cdef WordVectors vectors
        _held = self._word_scores.fill(tokens.rows, n, tokens.table, tokens.n_columns, self._weights,
                                       self._lexicon.generation, &vectors) if n else None
        # Scratch shared by the document and history features; a short batch needs none.
        slots = mention_slots(mentions) if (self._document or self._history) and n > _SHORT_BATCH else None
        cdef int32_t* slot_table = NULL
        if slots is not None:
            slot_table = <int32_t*>data_of(slots)
        cdef MatchColumns matches = MatchColumns(match_sources, n)

        # The first pass's hashed features, in the columns and order `featurizer.features` makes them:
        # the joint templates, the document family, the match sources, the short forms.
        cdef Py_ssize_t n_joint = self._joint.n_features, n_document = _N_DOCUMENT if self._document else 0
        cdef Py_ssize_t n_short = 0 if heads == NULL else _N_SHORT_FORM
        cdef Py_ssize_t n_columns = n_joint + n_document + matches.n_columns + n_short
        cdef Py_ssize_t n_history = _N_HISTORY + (0 if heads == NULL else 1)
        scores_array = new_matrix(n, n_tags, cnp.NPY_FLOAT32)
        first_pass = new_array(n, cnp.NPY_INT32, zeroed=True)
        tags = new_array(n, cnp.NPY_INT32, zeroed=True) if self._history else first_pass
        cdef float* scores = <float*>data_of(scores_array)
        cdef int32_t* first_tags = <int32_t*>data_of(first_pass)
        cdef int32_t* last_tags = <int32_t*>data_of(tags)
        cdef vector[uint32_t] features = vector[uint32_t](n * max(n_columns, n_history), _DROPPED)
        cdef vector[int64_t] types = vector[int64_t](n)
        cdef vector[float] emitted = vector[float](n * n_tags)
        cdef vector[double] deltas = vector[double](2 * n_tags)
        cdef vector[int32_t] pointers = vector[int32_t](backpointer_room(&self._trellis, longest))
        cdef Py_ssize_t d, i, tag, column = n_joint + n_document
        cdef Tokens doc
        cdef int status = 0
        if n == 0:
            return scores_array, first_pass, tags
        with nogil:
            gather(&vectors, tokens.rows, tokens.sentence, n, scores)
            self._joint.extract_rows(tokens.rows, tokens.table, tokens.n_columns, tokens.sentence, n,
                                     features.data(), n_columns)
            if self._document:
                for d in range(n_offsets - 1):
                    if _doc_of(&tokens, bounds, d, &doc):
                        fill_document_features(&doc, slot_table, self._n_buckets,
                                               features.data() + bounds[d] * n_columns + n_joint, n_columns)
            matches.fill(features.data() + column, n_columns)
            column += matches.n_columns
            if heads != NULL:
                fill_abbreviation_features(&tokens, heads, self._n_buckets, features.data() + column, n_columns)
            _add_scores(self._weights, features.data(), n, n_columns, scores, emitted.data())
            if entity_bias:
                for i in range(n):
                    for tag in range(1, n_tags):
                        scores[i * n_tags + tag] += entity_bias
            status = decode_checked(&self._trellis, scores, allowed_tags, bounds, n_offsets, first_tags,
                                    deltas.data(), pointers.data(), longest)
            if self._history and status == 0:
                # The second pass: the first's scores plus the weights of the history features alone.
                for i in range(n):
                    types[i] = self._type_of_tag[first_tags[i]]
                fill_range(features.begin(), features.begin() + n * n_history, _DROPPED)
                for d in range(n_offsets - 1):
                    if _doc_of(&tokens, bounds, d, &doc):
                        fill_history_features(&doc, slot_table, types.data() + bounds[d], self._n_types,
                                              self._n_buckets, features.data() + bounds[d] * n_history, n_history)
                if heads != NULL:
                    fill_abbreviation_history(heads, types.data(), n, self._n_buckets, features.data() + _N_HISTORY,
                                              n_history)
                _add_scores(self._weights, features.data(), n, n_history, scores, emitted.data())
                status = decode_checked(&self._trellis, scores, allowed_tags, bounds, n_offsets, last_tags,
                                        deltas.data(), pointers.data(), longest)
        if status != 0:
            raise ValueError("No tag sequence satisfies the constraints (conflicting preset entities?)")
        return scores_array, first_pass, tags


cdef bint _doc_of(const Tokens* tokens, const int64_t* bounds, Py_ssize_t d, Tokens* doc) noexcept nogil:
    """Point doc at the batch's d-th doc; False if it is empty."""
    cdef Py_ssize_t start = bounds[d]
    doc[0] = tokens[0]
    doc.rows, doc.mentions, doc.sentence = tokens.rows + start, tokens.mentions + start, tokens.sentence + start
    doc.n = bounds[d + 1] - start
    return doc.n > 0


cdef class MatchColumns:
    """The match sources' columns of the first pass's features: each token's code of each label, as
    the feature id of (label, code); read with the GIL, written without it."""
    cdef vector[const Py_ssize_t*] _codes
    cdef vector[const uint32_t*] _ids
    cdef vector[Py_ssize_t] _n_labels, _n_codes
    cdef list _arrays  # what the pointers point into
    cdef Py_ssize_t _n
    cdef readonly Py_ssize_t n_columns

    def __init__(self, list match_sources, Py_ssize_t n):
        cdef cnp.ndarray code_array, id_array
        cdef Py_ssize_t n_labels, n_codes
        self._arrays, self._n, self.n_columns = [], n, 0
        for code_array, id_array in match_sources:
            n_labels = cnp.PyArray_DIM(code_array, 1) if cnp.PyArray_NDIM(code_array) == 2 else -1
            if (n_labels < 0 or cnp.PyArray_DIM(code_array, 0) != n
                    or cnp.PyArray_NDIM(id_array) != 2 or cnp.PyArray_DIM(id_array, 0) != n_labels):
                raise ValueError(f"match codes must have a row per token ({n}), and their ids a row per label")
            n_codes = cnp.PyArray_DIM(id_array, 1)
            # read through numpy's C API: typed views cost a sentence more
            self._codes.push_back(<const Py_ssize_t*>items_of(code_array, cnp.NPY_INTP, n * n_labels))
            self._ids.push_back(<const uint32_t*>items_of(id_array, cnp.NPY_UINT32, n_labels * n_codes))
            self._n_labels.push_back(n_labels)
            self._n_codes.push_back(n_codes)
            self._arrays.append((code_array, id_array))
            self.n_columns += n_labels

    cdef void fill(self, uint32_t* out, Py_ssize_t stride) noexcept nogil:
        """The columns into each of the n rows of out (`stride` apart), from its first place on."""
        cdef Py_ssize_t source, i, label, n_labels, n_codes, column = 0
        cdef const Py_ssize_t* codes
        cdef const uint32_t* ids
        for source in range(<Py_ssize_t>self._codes.size()):
            codes, ids = self._codes[source], self._ids[source]
            n_labels, n_codes = self._n_labels[source], self._n_codes[source]
            for i in range(self._n):
                for label in range(n_labels):
                    out[i * stride + column + label] = ids[label * n_codes + codes[i * n_labels + label]]
            column += n_labels


cdef void _add_scores(WeightRows weights, const uint32_t* features, Py_ssize_t n, Py_ssize_t n_features,
                      float* scores, float* emitted) noexcept nogil:
    """scores += the summed weights of each token's features, as `scores += model.scores(features)` adds
    them (emitted: scratch of n rows of n_tags)."""
    cdef Py_ssize_t i, n_tags = weights.n_tags
    if n_features == 0:
        return
    emit(weights._table, weights._index, features, n, n_features, n_tags, emitted)
    for i in range(n * n_tags):
        scores[i] += emitted[i]
