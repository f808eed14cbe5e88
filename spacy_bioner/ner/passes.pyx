# cython: language_level=3
"""Both decoding passes of a plain batch in one compiled call.

A plain batch has a word in every token (no whitespace tokens) and dense perceptron
weights: most sentences and most text.
`decoder.decode` runs such a batch through `decode_plain`, which does what its
steps from Python do (the features of the first pass, their scores, Viterbi, the
history features, their scores, Viterbi again) with the same kernels, in the same
order and over the same float32 sums, so scores and tags are the same to the bit.
A sentence then pays one call, not a Python call and a numpy array per step.
"""
from cymem.cymem cimport Pool
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t

from ..core.decode cimport Trellis, check_offsets, decode_sequences, prepare_trellis
from ..core.features cimport FeatureExtractor
from ..core.perceptron cimport emit
from ..core.weight_rows cimport WeightRows
from ..core.word_scores cimport WordScores
from .document cimport (
    fill_abbreviation_features, fill_abbreviation_history, fill_document_features, fill_history_features,
)

import numpy

from ..core.perceptron import DROPPED
from .document import ABBREVIATION_FEATURES, DOCUMENT_FEATURES, HISTORY_FEATURES, mention_slots


def decode_plain(layout, WordScores word_scores, FeatureExtractor joint, bint document, list match_sources,
                 short_form_heads, lexicon, uint64_t n_buckets, WeightRows weights, float entity_bias,
                 const uint8_t[:, ::1] allowed, decoding, bint history):
    """The scores the last pass read, the first pass's tags and the final ones (before the entity
    bound and the rules) of a plain batch.

    layout (batch.Layout): The batch; its rows, sentence, mentions and offsets are read.
    word_scores (WordScores): The single-word templates' cache (`Featurizer.word_scores`).
    joint (FeatureExtractor): The other templates (`Featurizer.joint_extractor`).
    document (bool): Whether the document family is on.
    match_sources (List[Tuple[intp[n, n_labels], uint32[n_labels, 5]]]): Each match source's codes and
        their feature ids, in column order (`featurizer.match_sources`).
    short_form_heads (Optional[int64[n]]): Each token's long-form head if it is in a defined short
        form's mention, else -1 (`layout.abbreviation_heads`); None without their columns.
    lexicon (features.Lexicon): The word table the layout's rows index.
    weights (WeightRows): The averaged emission weights (`AveragedPerceptron.scoring_rows`).
    allowed (uint8[n, n_tags]): Each token's allowed tags.
    decoding: (transitions, factors, legal, predecessors, entity_types, n_types) as `decode.viterbi`
        and `document.history_features` take them.
    history (bool): Whether the history family is on (a second pass).
    RETURNS (float32[n, n_tags], int32[n], int32[n]): the scores, the first pass's tags and the last pass's.
    """
    cdef const int32_t[::1] rows = layout.rows
    cdef const int32_t[::1] sentence = layout.sentence
    cdef const int32_t[::1] mentions = layout.mentions
    cdef const int64_t[::1] offsets = layout.offsets
    cdef const uint64_t[:, ::1] table = lexicon.table
    scores_array = word_scores.scores(rows, table, sentence, weights, lexicon.generation)
    cdef float[:, ::1] scores = scores_array
    cdef Py_ssize_t n = rows.shape[0], n_tags = scores.shape[1]
    if sentence.shape[0] != n or mentions.shape[0] != n:
        raise ValueError(f"rows, sentence and mentions must have a row per token ({n})")
    if allowed.shape[0] != n or allowed.shape[1] != n_tags:
        raise ValueError(f"allowed must have a row per token and {n_tags} tags")
    check_offsets(offsets, n)
    transitions, factors, legal, predecessors, entity_types, n_types = decoding
    cdef Pool mem = Pool()
    cdef Trellis trellis
    prepare_trellis(&trellis, transitions, legal, factors, predecessors, n_tags, mem)
    # Scratch shared by the document and history features; neither family, none needed.
    slots = mention_slots(mentions) if document or history else None
    cdef int32_t[::1] slot_view
    cdef int32_t* slot_table = NULL
    if slots is not None:
        slot_view = slots
        slot_table = &slot_view[0]

    # The first pass's hashed features, in the columns and order `featurizer.features` makes them:
    # the joint templates, the document family, the match sources, the short forms.
    cdef Py_ssize_t n_joint = joint.n_features, n_document = len(DOCUMENT_FEATURES) if document else 0
    cdef Py_ssize_t n_matches = 0
    for codes, _ in match_sources:  # a loop, not sum() over a generator: a sentence pays for the generator
        n_matches += codes.shape[1]
    cdef Py_ssize_t n_short = 0 if short_form_heads is None else len(ABBREVIATION_FEATURES)
    features = numpy.empty((n, n_joint + n_document + n_matches + n_short), dtype=numpy.uint32)
    cdef uint32_t[:, ::1] feature_view = features
    feature_view[:, :] = DROPPED  # a loop: numpy.full costs more for a sentence
    joint.extract_into(rows, table, sentence, feature_view[:, :n_joint])
    cdef Py_ssize_t d, start, end, i, label, column = n_joint + n_document
    for d in range(offsets.shape[0] - 1):
        start, end = offsets[d], offsets[d + 1]
        if document and end > start:
            fill_document_features(rows[start:end], table, mentions[start:end], slot_table, sentence[start:end],
                                   n_buckets,
                                   feature_view[start:end, n_joint : column])
    cdef const Py_ssize_t[:, ::1] code_view
    cdef const uint32_t[:, ::1] id_view
    for codes, ids in match_sources:
        code_view = codes
        id_view = ids
        if code_view.shape[0] != n:
            raise ValueError(f"match codes must have a row per token ({n})")
        for i in range(n):
            for label in range(code_view.shape[1]):
                feature_view[i, column + label] = id_view[label, code_view[i, label]]
        column += code_view.shape[1]
    cdef const int64_t[::1] heads
    if short_form_heads is not None:
        heads = short_form_heads
        fill_abbreviation_features(rows, table, heads, n_buckets, feature_view[:, column:])
    _add_scores(weights, feature_view, scores)
    cdef Py_ssize_t tag
    if entity_bias:  # the recall knob
        for i in range(n):
            for tag in range(1, n_tags):
                scores[i, tag] += entity_bias
    first_pass = numpy.zeros(n, dtype=numpy.int32)
    if n:
        decode_sequences(&trellis, &scores[0, 0], &allowed[0, 0], offsets, first_pass, mem)
    if not history:
        return scores_array, first_pass, first_pass

    # The second pass: the first's scores plus the weights of the history features alone.
    cdef const int64_t[::1] type_of_tag = entity_types
    cdef const int32_t[::1] first_view = first_pass
    types = numpy.empty(n, dtype=numpy.int64)
    cdef int64_t[::1] type_view = types
    for i in range(n):  # a loop, not numpy's fancy indexing, which costs more for a sentence
        type_view[i] = type_of_tag[first_view[i]]
    n_history = len(HISTORY_FEATURES)
    history_features = numpy.empty((n, n_history + (0 if short_form_heads is None else 1)), dtype=numpy.uint32)
    cdef uint32_t[:, ::1] history_view = history_features
    history_view[:, :] = DROPPED
    for d in range(offsets.shape[0] - 1):
        start, end = offsets[d], offsets[d + 1]
        if end > start:
            fill_history_features(rows[start:end], table, mentions[start:end], slot_table, type_view[start:end],
                                  n_types,
                                  n_buckets, history_view[start:end, :n_history])
    if short_form_heads is not None:
        fill_abbreviation_history(heads, type_view, n_buckets, history_view[:, n_history:])
    _add_scores(weights, history_view, scores)
    tags = numpy.zeros(n, dtype=numpy.int32)
    if n:
        decode_sequences(&trellis, &scores[0, 0], &allowed[0, 0], offsets, tags, mem)
    return scores_array, first_pass, tags


cdef int _add_scores(WeightRows weights, const uint32_t[:, ::1] features, float[:, ::1] scores) except -1:
    """scores += the summed weights of each token's features, as `scores += model.scores(features)` adds them."""
    cdef Py_ssize_t n = features.shape[0], n_features = features.shape[1], n_tags = scores.shape[1], i, tag
    if n == 0:
        return 0
    emitted = numpy.zeros((n, n_tags), dtype=numpy.float32)
    cdef float[:, ::1] emitted_view = emitted
    cdef const float[:, ::1] table = weights.table
    cdef const int32_t[::1] index = weights.index
    with nogil:
        if n_features:
            emit(&table[0, 0], &index[0], &features[0, 0], n, n_features, n_tags, &emitted_view[0, 0])
        for i in range(n):
            for tag in range(n_tags):
                scores[i, tag] += emitted_view[i, tag]
    return 0
