# cython: language_level=3
"""Constrained first-order Viterbi over a tag trellis.

Hard constraints come in two masks: `legal` says which tag may follow which
(its last row is the sequence start), `allowed` says which tags each token may
take (sentence starts, whitespace, preset entities, sequence end). A masked
cell is never entered, so an invalid sequence cannot come out.
"""
from cymem.cymem cimport Pool
from libc.math cimport INFINITY
from libc.stdint cimport int32_t, int64_t, uint8_t

import numpy


cdef void _list_predecessors(
    const uint8_t* legal, const float* transitions, int n_tags, int32_t* predecessors, double* predecessor_scores,
) noexcept nogil:
    """Each tag's legal predecessors, in ascending order, then their counts: the
    scheme's constraints leave a few of them, so the inner loop skips the rest.
    Their transition scores are laid out alongside, in the same order."""
    cdef int tag, prev
    cdef int32_t* n_predecessors = predecessors + n_tags * n_tags
    for tag in range(n_tags):
        n_predecessors[tag] = 0
        for prev in range(n_tags):
            if legal[prev * n_tags + tag]:
                predecessors[tag * n_tags + n_predecessors[tag]] = prev
                predecessor_scores[tag * n_tags + n_predecessors[tag]] = transitions[prev * n_tags + tag]
                n_predecessors[tag] += 1


cdef int _viterbi(
    const float* emissions, const float* transitions, const uint8_t* allowed,
    const uint8_t* legal, int n, int n_tags, int32_t* out,
    double* delta, double* next_delta, int32_t* backpointers, const int32_t* predecessors,
    const double* predecessor_scores,
) noexcept nogil:
    cdef int i, tag, prev, best_prev, k, n_k
    cdef double best, score
    cdef double* swap
    cdef const int32_t* n_predecessors = predecessors + n_tags * n_tags
    cdef const int32_t* tag_predecessors
    cdef const double* tag_scores
    cdef const float* start_scores = transitions + n_tags * n_tags
    cdef const uint8_t* start_legal = legal + n_tags * n_tags
    for tag in range(n_tags):
        if allowed[tag] and start_legal[tag]:
            delta[tag] = start_scores[tag] + emissions[tag]
        else:
            delta[tag] = -INFINITY
    for i in range(1, n):
        for tag in range(n_tags):
            best = -INFINITY
            best_prev = -1
            if allowed[i * n_tags + tag]:
                tag_predecessors = predecessors + tag * n_tags
                tag_scores = predecessor_scores + tag * n_tags
                n_k = n_predecessors[tag]
                for k in range(n_k):
                    # An unreachable prev has delta -inf and never wins.
                    score = delta[tag_predecessors[k]] + tag_scores[k]
                    if score > best:  # strict: ties go to the lowest tag id
                        best = score
                        best_prev = tag_predecessors[k]
                if best_prev >= 0:
                    best += emissions[i * n_tags + tag]
            next_delta[tag] = best
            backpointers[i * n_tags + tag] = best_prev
        swap = delta
        delta = next_delta
        next_delta = swap
    best = -INFINITY
    out[n - 1] = -1
    for tag in range(n_tags):
        if delta[tag] > best:
            best = delta[tag]
            out[n - 1] = tag
    if out[n - 1] < 0:
        return -1
    for i in range(n - 1, 0, -1):
        out[i - 1] = backpointers[i * n_tags + out[i]]
    return 0


def viterbi(
    const float[:, ::1] emissions,
    const float[:, ::1] transitions,
    const uint8_t[:, ::1] allowed,
    const uint8_t[:, ::1] legal,
    const int64_t[::1] offsets=None,
):
    """The best tag sequence that every mask allows, for each sequence of a batch.

    emissions (float32[n, T]): Per-token tag scores.
    transitions (float32[T + 1, T]): Tag bigram scores; the last row scores the start.
    allowed (uint8[n, T]): 1 where a token may take a tag.
    legal (uint8[T + 1, T]): 1 where a tag may follow another (last row: the start).
    offsets (Optional[int64[n_sequences + 1]]): Where each sequence starts when
        several are laid end to end; None for one sequence.
    RETURNS (int32[n]): The tag ids.
    """
    cdef int n = emissions.shape[0]
    cdef int n_tags = emissions.shape[1]
    if allowed.shape[0] != n or allowed.shape[1] != n_tags:
        raise ValueError(f"allowed has shape {(allowed.shape[0], allowed.shape[1])}, expected {(n, n_tags)}")
    if transitions.shape[0] != n_tags + 1 or transitions.shape[1] != n_tags:
        raise ValueError(f"transitions have shape {(transitions.shape[0], transitions.shape[1])}, expected {(n_tags + 1, n_tags)}")
    if legal.shape[0] != n_tags + 1 or legal.shape[1] != n_tags:
        raise ValueError(f"legal has shape {(legal.shape[0], legal.shape[1])}, expected {(n_tags + 1, n_tags)}")
    if offsets is None:
        offsets = numpy.array([0, n], dtype=numpy.int64)
    if offsets.shape[0] < 1 or offsets[0] != 0 or offsets[offsets.shape[0] - 1] != n or (numpy.diff(offsets) < 0).any():
        raise ValueError(f"offsets must rise from 0 to {n}")
    out = numpy.zeros(n, dtype=numpy.int32)
    if n == 0:
        return out
    cdef int32_t[::1] out_view = out
    cdef Pool mem = Pool()
    cdef double* delta = <double*>mem.alloc(n_tags, sizeof(double))
    cdef double* next_delta = <double*>mem.alloc(n_tags, sizeof(double))
    cdef int32_t* backpointers = <int32_t*>mem.alloc(n * n_tags, sizeof(int32_t))
    cdef int32_t* predecessors = <int32_t*>mem.alloc((n_tags + 1) * n_tags, sizeof(int32_t))
    cdef double* predecessor_scores = <double*>mem.alloc(n_tags * n_tags, sizeof(double))
    cdef int status = 0
    cdef Py_ssize_t s, start, length
    with nogil:
        _list_predecessors(&legal[0, 0], &transitions[0, 0], n_tags, predecessors, predecessor_scores)
        for s in range(offsets.shape[0] - 1):
            start, length = offsets[s], offsets[s + 1] - offsets[s]
            if length == 0:
                continue
            status = _viterbi(
                &emissions[start, 0], &transitions[0, 0], &allowed[start, 0], &legal[0, 0],
                length, n_tags, &out_view[start], delta, next_delta, backpointers, predecessors, predecessor_scores,
            )
            if status != 0:
                break
    if status != 0:
        raise ValueError("No tag sequence satisfies the constraints (conflicting preset entities?)")
    return out
