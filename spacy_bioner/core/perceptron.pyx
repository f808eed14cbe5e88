# cython: language_level=3
"""Averaged structured perceptron over hashed features (Collins 2002).

Weights are a dense (n_buckets, n_tags) matrix, so a feature's tag scores are
one contiguous row. Averaging is lazy (Daume's trick): each update of size d at
step c also adds c * d to an accumulator, and the average over all steps is
weights - accumulator / c, computed only when asked for.
"""
from libc.stdint cimport int32_t, uint32_t

import numpy

# A feature id that scores nothing and is never updated (dropped in training).
DROPPED = 0xFFFFFFFF
cdef uint32_t _DROPPED = DROPPED


cdef extern from *:
    void _prefetch "__builtin_prefetch"(const void* address) noexcept nogil

# Rows are looked up this many tokens ahead of their use: the table is far
# larger than the caches, and waiting for each row in turn costs more than the adds.
cdef int _PREFETCH_DISTANCE = 4


cdef void _emit(
    const float* weights, const uint32_t* features, int n, int n_features,
    int n_tags, float* out,
) noexcept nogil:
    cdef int i, j, tag
    cdef uint32_t feature
    cdef const float* row
    cdef const uint32_t* ahead
    cdef float* scores
    for i in range(n):
        if i + _PREFETCH_DISTANCE < n:
            ahead = features + (i + _PREFETCH_DISTANCE) * n_features
            for j in range(n_features):
                if ahead[j] != _DROPPED:
                    _prefetch(weights + <size_t>ahead[j] * n_tags)
        scores = out + i * n_tags
        for tag in range(n_tags):
            scores[tag] = 0.0
        for j in range(n_features):
            feature = features[i * n_features + j]
            if feature == _DROPPED:
                continue
            row = weights + <size_t>feature * n_tags
            for tag in range(n_tags):
                scores[tag] += row[tag]


cdef void _update_emissions(
    float* weights, double* totals, const uint32_t* features, const int32_t* gold,
    const int32_t* guess, int n, int n_features, int n_tags, double step,
) noexcept nogil:
    cdef int i, j
    cdef size_t row
    for i in range(n):
        if gold[i] == guess[i]:
            continue
        for j in range(n_features):
            if features[i * n_features + j] == _DROPPED:
                continue
            row = <size_t>features[i * n_features + j] * n_tags
            weights[row + gold[i]] += 1.0
            weights[row + guess[i]] -= 1.0
            totals[row + gold[i]] += step
            totals[row + guess[i]] -= step


cdef void _update_transitions(
    float* weights, double* totals, const int32_t* gold, const int32_t* guess,
    int n, int n_tags, double step,
) noexcept nogil:
    cdef int i, gold_prev = n_tags, guess_prev = n_tags  # row n_tags is the start
    for i in range(n):
        if gold_prev != guess_prev or gold[i] != guess[i]:
            weights[gold_prev * n_tags + gold[i]] += 1.0
            weights[guess_prev * n_tags + guess[i]] -= 1.0
            totals[gold_prev * n_tags + gold[i]] += step
            totals[guess_prev * n_tags + guess[i]] -= step
        gold_prev = gold[i]
        guess_prev = guess[i]


cdef class AveragedPerceptron:
    """Emission and transition weights with their running averages.

    n_buckets (int): Rows of the hashed emission matrix.
    n_tags (int): Columns (tag ids).
    """
    # Attributes are declared in perceptron.pxd, for the parser's training loop.

    def __init__(self, int n_buckets, int n_tags):
        self.emission = numpy.zeros((n_buckets, n_tags), dtype=numpy.float32)
        self.transition = numpy.zeros((n_tags + 1, n_tags), dtype=numpy.float32)
        self._reset_totals()

    def _reset_totals(self):
        self._emission_totals = numpy.zeros(self.emission.shape, dtype=numpy.float64)
        self._transition_totals = numpy.zeros(self.transition.shape, dtype=numpy.float64)
        self.step = 1
        self._averages = None

    @property
    def n_buckets(self):
        return self.emission.shape[0]

    @property
    def n_tags(self):
        return self.emission.shape[1]

    def resize(self, int n_tags):
        """Append zero columns for new tags (labels are added block-wise)."""
        extra = n_tags - self.n_tags
        if extra < 0:
            raise ValueError(f"Cannot shrink from {self.n_tags} to {n_tags} tags")
        self.emission = numpy.ascontiguousarray(numpy.pad(self.emission, ((0, 0), (0, extra))))
        self.transition = numpy.ascontiguousarray(numpy.pad(self.transition, ((0, extra), (0, extra))))
        # Move the start row back to the end, where the decoder expects it.
        start = self.transition[self.n_tags - extra].copy()
        self.transition[self.n_tags - extra] = 0
        self.transition[-1] = start
        self._emission_totals = numpy.pad(self._emission_totals, ((0, 0), (0, extra)))
        totals = numpy.pad(self._transition_totals, ((0, extra), (0, extra)))
        start_totals = totals[self.n_tags - extra].copy()
        totals[self.n_tags - extra] = 0
        totals[-1] = start_totals
        self._transition_totals = numpy.ascontiguousarray(totals)
        self._averages = None

    def averages(self):
        """(emission, transition) averaged over every step so far: float32, cached."""
        if self._averages is None:
            emission = self.emission - self._emission_totals / self.step
            transition = self.transition - self._transition_totals / self.step
            self._averages = (emission.astype(numpy.float32), transition.astype(numpy.float32))
        return self._averages

    def load_averages(self, emission, transition):
        """Start from trained (averaged) weights, e.g. after loading from disk."""
        self.emission = numpy.ascontiguousarray(emission, dtype=numpy.float32)
        self.transition = numpy.ascontiguousarray(transition, dtype=numpy.float32)
        self._reset_totals()

    def scores(self, const uint32_t[:, ::1] features, bint averaged=True):
        """Emission scores float32[n, n_tags] of hashed features uint32[n, F]."""
        emission = self.averages()[0] if averaged else self.emission
        cdef const float[:, ::1] weights = emission
        cdef int n = features.shape[0]
        cdef int n_features = features.shape[1]
        cdef int n_tags = weights.shape[1]
        out = numpy.empty((n, n_tags), dtype=numpy.float32)
        cdef float[:, ::1] out_view = out
        if n == 0 or n_features == 0:
            out.fill(0)
            return out
        with nogil:
            _emit(&weights[0, 0], &features[0, 0], n, n_features, n_tags, &out_view[0, 0])
        return out

    def transitions(self, bint averaged=True):
        return self.averages()[1] if averaged else self.transition

    def update(self, const uint32_t[:, ::1] features, const int32_t[::1] gold, const int32_t[::1] guess):
        """Move weights toward the gold sequence and away from the guess; one step."""
        cdef int n = features.shape[0]
        cdef int n_features = features.shape[1]
        cdef int n_tags = self.n_tags
        if gold.shape[0] != n or guess.shape[0] != n:
            raise ValueError("features, gold and guess must have one row per token")
        cdef float[:, ::1] emission = self.emission
        cdef double[:, ::1] emission_totals = self._emission_totals
        cdef float[:, ::1] transition = self.transition
        cdef double[:, ::1] transition_totals = self._transition_totals
        cdef double step = self.step
        if n > 0:
            with nogil:
                if n_features > 0:
                    _update_emissions(
                        &emission[0, 0], &emission_totals[0, 0], &features[0, 0],
                        &gold[0], &guess[0], n, n_features, n_tags, step,
                    )
                _update_transitions(
                    &transition[0, 0], &transition_totals[0, 0], &gold[0], &guess[0],
                    n, n_tags, step,
                )
        self.step += 1
        self._averages = None

    def update_dense(self, const uint32_t[:, ::1] features, const float[:, ::1] token_gradient,
                     const float[:, ::1] transition_gradient, double rate, double l2=0.0):
        """A gradient step (CRF training): every feature of token i moves by rate
        times its row of token_gradient; transitions by rate times theirs. With
        l2, each occurrence of a feature also shrinks its weights by rate * l2
        (the L2 penalty's gradient, applied where the feature occurs). One step."""
        cdef int n = features.shape[0], n_features = features.shape[1], n_tags = self.n_tags
        if token_gradient.shape[0] != n or token_gradient.shape[1] != n_tags:
            raise ValueError("token_gradient must have one row of n_tags per token")
        if transition_gradient.shape[0] != n_tags + 1 or transition_gradient.shape[1] != n_tags:
            raise ValueError("transition_gradient must have the transition matrix's shape")
        cdef float[:, ::1] emission = self.emission, transition = self.transition
        cdef double[:, ::1] emission_totals = self._emission_totals, transition_totals = self._transition_totals
        cdef double step = self.step, delta
        cdef int i, j, tag, row
        cdef uint32_t feature
        with nogil:
            for i in range(n):
                for j in range(n_features):
                    feature = features[i, j]
                    if feature == _DROPPED:
                        continue
                    for tag in range(n_tags):
                        delta = rate * (token_gradient[i, tag] - l2 * emission[feature, tag])
                        emission[feature, tag] += <float>delta
                        emission_totals[feature, tag] += step * delta
            for row in range(n_tags + 1):
                for tag in range(n_tags):
                    delta = rate * transition_gradient[row, tag]
                    transition[row, tag] += <float>delta
                    transition_totals[row, tag] += step * delta
        self.step += 1
        self._averages = None

    def __reduce__(self):
        emission, transition = self.averages()
        return (_from_averages, (emission, transition))


def _from_averages(emission, transition):
    model = AveragedPerceptron(0, emission.shape[1])
    model.load_averages(emission, transition)
    return model
