# cython: language_level=3
"""Both decoding passes of a plain batch in one compiled call.

A plain batch has a word in every token (no whitespace tokens), dense weights,
and no term-list or short-form feature columns: most sentences and most text.
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
from .document cimport fill_document_features, fill_history_features

import numpy

from ..core.perceptron import DROPPED
from .document import DOCUMENT_FEATURES, HISTORY_FEATURES, mention_slots


def decode_plain(layout, FeatureExtractor joint, bint document, memory_ids, const uint64_t[:, ::1] table,
                 uint64_t n_buckets, float[:, ::1] scores, const float[:, ::1] weights, float entity_bias,
                 const uint8_t[:, ::1] allowed, decoding, bint history):
    """The first pass's tags and the final ones (before the entity bound and the rules) of a plain batch.

    layout (batch.Layout): The batch; its rows, sentence, mentions, offsets and memory_codes are read.
    joint (FeatureExtractor): The templates not scored from the word cache (`Featurizer.joint_extractor`).
    document (bool): Whether the document family is on.
    memory_ids (Optional[uint32[n_labels, 5]]): The memory's feature ids (`featurizer.match_ids`);
        None when the layout has no memory codes.
    table (uint64[rows, attributes]): The lexicon table.
    scores (float32[n, n_tags]): The word-cache scores; the hashed features' weights (and
        the entity bias) are added in place, as Viterbi's last pass read them.
    weights (float32[n_buckets, n_tags]): The averaged emission weights.
    allowed (uint8[n, n_tags]): Each token's allowed tags.
    decoding: (transitions, factors, legal, predecessors, entity_types, n_types) as `decode.viterbi`
        and `document.history_features` take them.
    history (bool): Whether the history family is on (a second pass).
    RETURNS (int32[n], int32[n]): the first pass's tags and the last pass's.
    """
    cdef const int32_t[::1] rows = layout.rows
    cdef const int32_t[::1] sentence = layout.sentence
    cdef const int32_t[::1] mentions = layout.mentions
    cdef const int64_t[::1] offsets = layout.offsets
    cdef Py_ssize_t n = rows.shape[0], n_tags = scores.shape[1]
    if sentence.shape[0] != n or mentions.shape[0] != n or scores.shape[0] != n:
        raise ValueError(f"rows, sentence, mentions and scores must have a row per token ({n})")
    if allowed.shape[0] != n or allowed.shape[1] != n_tags or weights.shape[1] != n_tags:
        raise ValueError(f"allowed and weights must have {n_tags} tags, and allowed a row per token")
    check_offsets(offsets, n)
    transitions, factors, legal, predecessors, entity_types, n_types = decoding
    cdef Pool mem = Pool()
    cdef Trellis trellis
    prepare_trellis(&trellis, transitions, legal, factors, predecessors, n_tags, mem)
    slots = mention_slots(mentions)  # scratch shared by the document and history features
    cdef int32_t[::1] slot_view
    cdef int32_t* slot_table = NULL
    if slots is not None:
        slot_view = slots
        slot_table = &slot_view[0]

    # The first pass's hashed features, in the columns and order `featurizer.features` makes them.
    cdef Py_ssize_t n_joint = joint.n_features, n_document = len(DOCUMENT_FEATURES) if document else 0
    codes = layout.memory_codes
    cdef Py_ssize_t n_labels = 0 if codes is None else codes.shape[1]
    features = numpy.full((n, n_joint + n_document + n_labels), DROPPED, dtype=numpy.uint32)
    cdef uint32_t[:, ::1] feature_view = features
    joint.extract_into(rows, table, sentence, feature_view[:, :n_joint])
    cdef Py_ssize_t d, start, end, i, label
    for d in range(offsets.shape[0] - 1):
        start, end = offsets[d], offsets[d + 1]
        if document and end > start:
            fill_document_features(rows[start:end], table, mentions[start:end], slot_table, sentence[start:end], n_buckets,
                                   feature_view[start:end, n_joint : n_joint + n_document])
    cdef const Py_ssize_t[:, ::1] code_view
    cdef const uint32_t[:, ::1] id_view
    if n_labels:
        code_view = codes
        id_view = memory_ids
        for i in range(n):
            for label in range(n_labels):
                feature_view[i, n_joint + n_document + label] = id_view[label, code_view[i, label]]
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
        return first_pass, first_pass

    # The second pass: the first's scores plus the weights of the history features alone.
    types = numpy.asarray(entity_types)[first_pass]
    history_features = numpy.full((n, len(HISTORY_FEATURES)), DROPPED, dtype=numpy.uint32)
    cdef uint32_t[:, ::1] history_view = history_features
    cdef const int64_t[::1] type_view = types
    for d in range(offsets.shape[0] - 1):
        start, end = offsets[d], offsets[d + 1]
        if end > start:
            fill_history_features(rows[start:end], table, mentions[start:end], slot_table, type_view[start:end], n_types,
                                  n_buckets, history_view[start:end])
    _add_scores(weights, history_view, scores)
    tags = numpy.zeros(n, dtype=numpy.int32)
    if n:
        decode_sequences(&trellis, &scores[0, 0], &allowed[0, 0], offsets, tags, mem)
    return first_pass, tags


cdef int _add_scores(const float[:, ::1] weights, const uint32_t[:, ::1] features, float[:, ::1] scores) except -1:
    """scores += the summed weights of each token's features, as `scores += model.scores(features)` adds them."""
    cdef Py_ssize_t n = features.shape[0], n_features = features.shape[1], n_tags = scores.shape[1], i, tag
    if n == 0:
        return 0
    emitted = numpy.zeros((n, n_tags), dtype=numpy.float32)
    cdef float[:, ::1] emitted_view = emitted
    with nogil:
        if n_features:
            emit(&weights[0, 0], &features[0, 0], n, n_features, n_tags, &emitted_view[0, 0])
        for i in range(n):
            for tag in range(n_tags):
                scores[i, tag] += emitted_view[i, tag]
    return 0
