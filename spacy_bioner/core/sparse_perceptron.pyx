# cython: language_level=3
"""Emission weights kept sparse: for each hashed feature, the tags it has weights for.

With many labels a dense (n_buckets, n_tags) matrix does not fit: 2**19 rows
by the 4,001 BILOU tags of 1,000 labels is 8 GB, twice that again for the
training totals. A perceptron only ever moves the weights of a feature's gold
and guessed tags, so most rows hold a handful of tags, and scores and updates
cost the rows' lengths instead of n_tags. Transitions are AveragedPerceptron's.
"""
from libc.stdint cimport int32_t, int64_t, uint32_t
from libcpp.vector cimport vector

import numpy

from .perceptron cimport AveragedPerceptron
from .perceptron import DROPPED

cdef uint32_t _DROPPED = DROPPED
# A row with weights for more than 1/DENSE_SHARE of the tags is also kept dense for scoring.
DENSE_SHARE = 8


cdef struct Cell:
    int32_t tag
    float weight
    double total  # the averaging accumulator, as AveragedPerceptron's totals


cdef inline void _add(vector[Cell]& row, int32_t tag, float delta, double step) noexcept nogil:
    cdef size_t k
    cdef Cell cell
    for k in range(row.size()):
        if row[k].tag == tag:
            row[k].weight += delta
            row[k].total += delta * step
            return
    cell.tag, cell.weight, cell.total = tag, delta, delta * step
    row.push_back(cell)


cdef class SparsePerceptron(AveragedPerceptron):
    """AveragedPerceptron with a list of (tag, weight) per feature instead of a dense row.

    n_buckets (int): Number of hashed feature ids.
    n_tags (int): Number of tags.
    """
    cdef vector[vector[Cell]] _rows

    def __init__(self, int n_buckets, int n_tags):
        self._rows.resize(n_buckets)
        self.emission = None
        self.transition = numpy.zeros((n_tags + 1, n_tags), dtype=numpy.float32)
        self.continuing = None
        self.start_follows = None
        self.exits = numpy.zeros(n_tags + 1, dtype=numpy.float32)
        self.entries = numpy.zeros(n_tags, dtype=numpy.float32)
        self._reset_totals()

    @classmethod
    def from_dense(cls, AveragedPerceptron dense):
        """The same weights, totals and step, kept sparse (when labels outgrow a dense matrix)."""
        cdef SparsePerceptron model = cls(dense.n_buckets, dense.n_tags)
        cdef Cell cell
        emission, totals = dense.emission, dense._emission_totals
        features, tags = numpy.nonzero((emission != 0) | (totals != 0))
        for feature, tag in zip(features.tolist(), tags.tolist()):
            cell.tag, cell.weight, cell.total = tag, emission[feature, tag], totals[feature, tag]
            model._rows[feature].push_back(cell)
        model.transition, model._transition_totals = dense.transition.copy(), dense._transition_totals.copy()
        model.exits, model._exit_totals = dense.exits.copy(), dense._exit_totals.copy()
        model.entries, model._entry_totals = dense.entries.copy(), dense._entry_totals.copy()
        model.continuing, model.step, model.start_follows = dense.continuing, dense.step, dense.start_follows
        return model

    def _reset_emission_totals(self):
        cdef size_t row, k
        for row in range(self._rows.size()):
            for k in range(self._rows[row].size()):
                self._rows[row][k].total = 0.0

    @property
    def n_buckets(self):
        return self._rows.size()

    @property
    def dense(self):
        return False

    @property
    def n_cells(self):
        """How many (feature, tag) weights are kept."""
        cdef size_t row, n = 0
        for row in range(self._rows.size()):
            n += self._rows[row].size()
        return n

    def _resize_emission(self, int n_tags):
        pass  # new tags have no weights yet

    def scores(self, const uint32_t[:, ::1] features, bint averaged=True):
        """Emission scores float32[n, n_tags] of hashed features uint32[n, F]."""
        if averaged:
            return self._averaged_scores(features)
        cdef int n = features.shape[0], n_features = features.shape[1], n_tags = self.n_tags
        out = numpy.zeros((n, n_tags), dtype=numpy.float32)
        cdef float[:, ::1] out_view = out
        cdef int i, j
        cdef size_t k
        cdef uint32_t feature
        with nogil:
            for i in range(n):
                for j in range(n_features):
                    feature = features[i, j]
                    if feature == _DROPPED:
                        continue
                    for k in range(self._rows[feature].size()):
                        out_view[i, self._rows[feature][k].tag] += self._rows[feature][k].weight
        return out

    def _averaged_scores(self, const uint32_t[:, ::1] features):
        # The same sums as adding each cell's average, in the same order: a long row's
        # tags without a cell add 0.
        scoring = self._averaged("emission")
        cdef const int64_t[::1] starts = scoring["emission_rows"]
        cdef const int32_t[::1] tags = scoring["emission_tags"]
        cdef const float[::1] weights = scoring["emission_weights"]
        cdef const int32_t[::1] dense_of = scoring["dense_of"]
        cdef const float[:, ::1] dense = scoring["dense"]
        cdef int n = features.shape[0], n_features = features.shape[1], n_tags = self.n_tags
        out = numpy.zeros((n, n_tags), dtype=numpy.float32)
        cdef float[:, ::1] out_view = out
        cdef int i, j, tag
        cdef int64_t k
        cdef uint32_t feature
        cdef float* row_out
        cdef const float* row
        with nogil:
            for i in range(n):
                row_out = &out_view[i, 0]
                for j in range(n_features):
                    feature = features[i, j]
                    if feature == _DROPPED:
                        continue
                    if dense_of[feature] >= 0:
                        row = &dense[dense_of[feature], 0]
                        for tag in range(n_tags):
                            row_out[tag] += row[tag]
                    else:
                        for k in range(starts[feature], starts[feature + 1]):
                            row_out[tags[k]] += weights[k]
        return out

    def _averaged_emission(self):
        """For scoring: the averaged cells as compressed rows (`_emission_arrays`), and the
        rows with weights for more than 1/DENSE_SHARE of the tags also as dense rows, as
        adding a whole row vectorizes where scattered adds do not. Kept until the next update."""
        arrays = self._emission_arrays()
        starts, tags, weights = arrays["emission_rows"], arrays["emission_tags"], arrays["emission_weights"]
        lengths = numpy.diff(starts)
        long_rows = numpy.flatnonzero(lengths * DENSE_SHARE > self.n_tags)
        dense_of = numpy.full(len(lengths), -1, dtype=numpy.int32)
        dense_of[long_rows] = numpy.arange(len(long_rows), dtype=numpy.int32)
        dense = numpy.zeros((len(long_rows), self.n_tags), dtype=numpy.float32)
        for at, row in enumerate(long_rows.tolist()):
            dense[at, tags[starts[row]:starts[row + 1]]] = weights[starts[row]:starts[row + 1]]
        return dict(arrays, dense_of=dense_of, dense=dense)

    def weights_of(self, features, int tag):
        """The averaged emission weights of some feature ids for one tag (for explanations)."""
        found = numpy.zeros(len(features), dtype=numpy.float32)
        cdef size_t k
        for i, feature in enumerate(features):
            for k in range(self._rows[feature].size()):
                if self._rows[feature][k].tag == tag:
                    found[i] = self._rows[feature][k].weight - self._rows[feature][k].total / self.step
        return found

    def _update_emission(self, const uint32_t[:, ::1] features, const int32_t[::1] gold, const int32_t[::1] guess):
        cdef int i, j, n = features.shape[0], n_features = features.shape[1]
        cdef uint32_t feature
        cdef double step = self.step
        with nogil:
            for i in range(n):
                if gold[i] == guess[i]:
                    continue
                for j in range(n_features):
                    feature = features[i, j]
                    if feature == _DROPPED:
                        continue
                    _add(self._rows[feature], gold[i], 1.0, step)
                    _add(self._rows[feature], guess[i], -1.0, step)

    def update_dense(self, *args, **kwargs):
        raise ValueError("The CRF trainer needs dense weights, which this many labels do not fit: use the perceptron")

    def _emission_arrays(self):
        """The averaged weights in compressed sparse rows: row i's tags and weights are
        emission_tags/emission_weights[emission_rows[i]:emission_rows[i + 1]]."""
        cdef size_t row, k, at = 0, n = self.n_cells
        starts = numpy.zeros(self._rows.size() + 1, dtype=numpy.int64)
        tags = numpy.zeros(n, dtype=numpy.int32)
        weights = numpy.zeros(n, dtype=numpy.float32)
        cdef int64_t[::1] starts_view = starts
        cdef int32_t[::1] tags_view = tags
        cdef float[::1] weights_view = weights
        cdef double scale = 1.0 / self.step
        for row in range(self._rows.size()):
            for k in range(self._rows[row].size()):
                tags_view[at] = self._rows[row][k].tag
                weights_view[at] = <float>(self._rows[row][k].weight - self._rows[row][k].total * scale)
                at += 1
            starts_view[row + 1] = at
        return {"emission_rows": starts, "emission_tags": tags, "emission_weights": weights}

    def _load_emission(self, arrays):
        cdef const int64_t[::1] starts = numpy.ascontiguousarray(arrays["emission_rows"], dtype=numpy.int64)
        cdef const int32_t[::1] tags = numpy.ascontiguousarray(arrays["emission_tags"], dtype=numpy.int32)
        cdef const float[::1] weights = numpy.ascontiguousarray(arrays["emission_weights"], dtype=numpy.float32)
        cdef size_t row
        cdef int64_t k
        cdef Cell cell
        self._rows.clear()
        self._rows.resize(starts.shape[0] - 1)
        for row in range(self._rows.size()):
            for k in range(starts[row], starts[row + 1]):
                cell.tag, cell.weight, cell.total = tags[k], weights[k], 0.0
                self._rows[row].push_back(cell)
