# cython: language_level=3
"""Averaged structured perceptron over hashed features (Collins 2002).

Weights are a dense (n_buckets, n_tags) matrix, so a feature's tag scores are
one contiguous row. Averaging is lazy (Daume's trick): each update of size d at
step c also adds c * d to an accumulator, and the average over all steps is
weights - accumulator / c, computed only when asked for.

The averaged weights are scored and saved as WeightRows (weight_rows.pyx: each
row that is not zeros, once). Weights that no step has changed since they were
loaded or set are kept as those rows alone, and made dense when training asks.

Transitions are pairwise, a weight per (previous tag, tag), or factored: a
move into a tag that opens nothing (O, B, U) scores an exit weight of the tag
before plus an entry weight of the new tag, so that decoding can take one max
over the tags before for all of them (decode.pyx), linear in the labels. Moves
inside an entity (into I, L) keep their pairwise weights either way.
"""
from cymem.cymem cimport Pool
from libc.stdint cimport int32_t, uint8_t, uint32_t

from .decode cimport Trellis, decode_sequences, prepare_trellis
from .prefetch cimport prefetch, prefetch_row
from .weight_rows cimport WeightRows

import numpy

# A feature id that scores nothing and is never updated (dropped in training).
DROPPED = 0xFFFFFFFF
cdef uint32_t _DROPPED = DROPPED


# Rows are looked up this many tokens ahead of their use.
cdef int _PREFETCH_DISTANCE = 4


cdef inline const float* _row(const float* weights, const int32_t* index, uint32_t feature,
                              int n_tags) noexcept nogil:
    return weights + <size_t>(index[feature] if index != NULL else feature) * n_tags


cdef void emit(
    const float* weights, const int32_t* index, const uint32_t* features, int n, int n_features,
    int n_tags, float* out,
) noexcept nogil:
    cdef int i, j, tag
    cdef uint32_t feature
    cdef const float* row
    cdef const uint32_t* ahead
    cdef float* scores
    for i in range(n):
        # Two stages: a row's place in the index is asked for twice as far ahead as the row,
        # so that finding the row's address does not wait on memory either.
        if index != NULL and i + 2 * _PREFETCH_DISTANCE < n:
            ahead = features + (i + 2 * _PREFETCH_DISTANCE) * n_features
            for j in range(n_features):
                if ahead[j] != _DROPPED:
                    prefetch(index + ahead[j])
        if i + _PREFETCH_DISTANCE < n:
            ahead = features + (i + _PREFETCH_DISTANCE) * n_features
            for j in range(n_features):
                if ahead[j] != _DROPPED:
                    prefetch_row(_row(weights, index, ahead[j], n_tags), n_tags)
        scores = out + i * n_tags
        for tag in range(n_tags):
            scores[tag] = 0.0
        for j in range(n_features):
            feature = features[i * n_features + j]
            if feature == _DROPPED:
                continue
            row = _row(weights, index, feature, n_tags)
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


cdef inline void _move(
    float* weights, double* totals, float* exits, double* exit_totals, float* entries, double* entry_totals,
    const uint8_t* continuing, int prev, int tag, int n_tags, float sign, double step,
) noexcept nogil:
    if continuing == NULL or continuing[tag]:
        weights[prev * n_tags + tag] += sign
        totals[prev * n_tags + tag] += sign * step
    else:
        exits[prev] += sign
        exit_totals[prev] += sign * step
        entries[tag] += sign
        entry_totals[tag] += sign * step


cdef void _update_transitions(
    float* weights, double* totals, float* exits, double* exit_totals, float* entries, double* entry_totals,
    const uint8_t* continuing, const int32_t* gold, const int32_t* guess, int n, int n_tags, double step,
) noexcept nogil:
    """continuing: NULL for pairwise transitions, else 1 for the tags moved into pairwise."""
    cdef int i, gold_prev = n_tags, guess_prev = n_tags
    for i in range(n):
        if gold_prev != guess_prev or gold[i] != guess[i]:
            _move(weights, totals, exits, exit_totals, entries, entry_totals, continuing, gold_prev, gold[i], n_tags,
                  1.0, step)
            _move(weights, totals, exits, exit_totals, entries, entry_totals, continuing, guess_prev, guess[i], n_tags,
                  -1.0, step)
        gold_prev = gold[i]
        guess_prev = guess[i]


cdef class AveragedPerceptron:
    """Emission and transition weights with their running averages.

    n_buckets (int): Rows of the hashed emission matrix.
    n_tags (int): Columns (tag ids).
    """
    # Attributes are declared in perceptron.pxd, for the parser's training loop.

    def __init__(self, int n_buckets, int n_tags):
        self._emission = numpy.zeros((n_buckets, n_tags), dtype=numpy.float32)
        self._stored_rows = None
        self.transition = numpy.zeros((n_tags + 1, n_tags), dtype=numpy.float32)
        self.continuing = None
        self.start_follows = None
        self.exits = numpy.zeros(n_tags + 1, dtype=numpy.float32)
        self.entries = numpy.zeros(n_tags, dtype=numpy.float32)
        self._reset_totals()

    def _reset_totals(self):
        self._reset_emission_totals()
        self._transition_totals = numpy.zeros(self.transition.shape, dtype=numpy.float64)
        self._exit_totals = numpy.zeros(self.exits.shape, dtype=numpy.float64)
        self._entry_totals = numpy.zeros(self.entries.shape, dtype=numpy.float64)
        self.step = 1
        self._weights_changed()

    def _reset_emission_totals(self):
        # None while the weights are kept as rows alone: `emission` makes both when training asks
        self._emission_totals = None if self._emission is None else numpy.zeros(self._emission.shape, numpy.float64)

    @property
    def emission(self):
        """The dense emission weights that training updates; made again from the rows they are
        kept as while no step changes them (`scoring_rows`), the first time they are asked for."""
        if self._emission is None and self._stored_rows is not None:
            self._emission = self._stored_rows.dense()
            self._stored_rows = None
            self._reset_emission_totals()
        return self._emission

    @emission.setter
    def emission(self, value):
        self._emission, self._stored_rows = value, None

    @property
    def n_buckets(self):
        return self._stored_rows.n_buckets if self._emission is None else self._emission.shape[0]

    @property
    def dense(self):
        """Whether the emission weights are a dense matrix (`averages()[0]`)."""
        return True

    @property
    def n_tags(self):
        return self.transition.shape[1]

    @property
    def factored(self):
        """Whether transitions into tags that open nothing are factored (exit + entry weights)."""
        return self.continuing is not None

    def factor(self, continuing):
        """Factor the transitions (see the module docstring); continuing: bool (n_tags,), the tags
        moved into pairwise (I, L). Before training only: learned pairwise weights would be lost."""
        if self.step > 1 or self.transition.any():
            raise ValueError("Transitions can be factored before training only")
        continuing = numpy.ascontiguousarray(continuing, dtype=numpy.uint8)
        if continuing.shape != (self.n_tags,):
            raise ValueError(f"continuing has shape {continuing.shape}, expected ({self.n_tags},)")
        self.continuing = continuing
        self._weights_changed()

    def resize(self, int n_tags, continuing=None):
        """Append zero columns for new tags (labels are added block-wise); factored
        transitions take the new tags' continuing mask."""
        extra = n_tags - self.n_tags
        if extra < 0:
            raise ValueError(f"Cannot shrink from {self.n_tags} to {n_tags} tags")
        if self.factored and continuing is None:
            raise ValueError("Factored transitions need the continuing mask of the new tags")
        self._resize_emission(n_tags)
        self.transition = _grown(self.transition, extra)
        self._transition_totals = _grown(self._transition_totals, extra)
        self.exits, self._exit_totals = _grown_start(self.exits, extra), _grown_start(self._exit_totals, extra)
        self.entries = numpy.pad(self.entries, (0, extra))
        self._entry_totals = numpy.pad(self._entry_totals, (0, extra))
        if self.factored:
            self.continuing = numpy.ascontiguousarray(continuing, dtype=numpy.uint8)
        self._weights_changed()

    def _resize_emission(self, int n_tags):
        extra = n_tags - self.emission.shape[1]
        self.emission = numpy.ascontiguousarray(numpy.pad(self.emission, ((0, 0), (0, extra))))
        self._emission_totals = numpy.pad(self._emission_totals, ((0, 0), (0, extra)))

    cdef void _weights_changed(self):
        """Forget the averages of the weights before; `revision` counts the changes."""
        self._averages = None
        self.revision += 1

    def averages(self):
        """(emission, transition) averaged over every step so far: float32, cached, valid until the
        next update (before any step, the emission weights themselves, read-only). Factored
        transitions come as the full matrix they add up to (decoding reads `decoding_weights`)."""
        return self._averaged("emission"), self._averaged("full")

    def scoring_rows(self):
        """The averaged emission weights as prediction reads them (WeightRows), cached until the next update."""
        return self._averaged("rows")

    def _averaged(self, str part):
        if self._averages is None:
            self._averages = {}
        if part not in self._averages:
            if part == "rows":
                if self.step == 1:  # no step since the weights were set: they are their own average
                    if self._stored_rows is None:  # kept as rows alone: a large model's matrix is mostly zeros
                        self._stored_rows = WeightRows.of_dense(self._emission)
                        self._emission = self._emission_totals = None
                    found = self._stored_rows
                else:  # the dense average is not kept beside them: in a large model it is hundreds of MB
                    found = WeightRows.of_dense(self._averaged_emission())
            elif part == "emission":
                found = self._averaged_emission()
            elif part == "pairs":
                found = (self.transition - self._transition_totals / self.step).astype(numpy.float32)
                self._start_as_follower(found)
            elif part == "factors":
                found = None if not self.factored else (
                    (self.exits - self._exit_totals / self.step).astype(numpy.float32),
                    (self.entries - self._entry_totals / self.step).astype(numpy.float32))
                if found is not None:
                    self._start_as_follower(found[0])
            else:
                found = self._full(self._averaged("pairs"), self._averaged("factors"))
            self._averages[part] = found
        return self._averages[part]

    def _start_as_follower(self, from_rows):
        """Give the start row (the last) of averaged transitions or exits the row of `start_follows`.
        Only averages of training steps: weights set or loaded since are kept as they are."""
        if self.start_follows is not None and self.step > 1:
            from_rows[-1] = from_rows[self.start_follows]

    def _averaged_emission(self):
        if self.step == 1:
            # No step since the weights were set (a loaded model): they are their own average. Averaging
            # a million-row table would cost a loaded model's first call a second and hundreds of MB.
            weights = self.emission.view()
            weights.flags.writeable = False
            return weights
        return (self.emission - self._emission_totals / self.step).astype(numpy.float32)

    def decoding_weights(self, bint averaged=True):
        """What Viterbi reads (decode.viterbi): the pairwise transitions, and the factored
        (exits, entries) or None. Factored, the matrix's moves into opening tags are unused."""
        if averaged:
            return self._averaged("pairs"), self._averaged("factors")
        return self.transition, (self.exits, self.entries) if self.factored else None

    def _full(self, pairs, factors):
        if factors is None:
            return pairs
        exits, entries = factors
        full = pairs.copy()
        opening = ~self.continuing.astype(numpy.bool_)
        full[:, opening] = exits[:, None] + entries[None, opening]
        return full

    def load_averages(self, emission, transition):
        """Start from trained (averaged) weights with pairwise transitions, e.g. after loading from disk."""
        self.load_arrays({"emission": emission, "transition": transition})

    def load_arrays(self, arrays):
        """Start from trained weights as `to_arrays` gives them."""
        self.transition = numpy.ascontiguousarray(arrays["transition"], dtype=numpy.float32)
        self._load_emission(arrays)
        if "continuing" in arrays:
            self.exits = numpy.ascontiguousarray(arrays["exits"], dtype=numpy.float32)
            self.entries = numpy.ascontiguousarray(arrays["entries"], dtype=numpy.float32)
            self.continuing = numpy.ascontiguousarray(arrays["continuing"], dtype=numpy.uint8)
        else:
            self.continuing = None
            self.exits = numpy.zeros(self.n_tags + 1, dtype=numpy.float32)
            self.entries = numpy.zeros(self.n_tags, dtype=numpy.float32)
        self._reset_totals()

    def _load_emission(self, arrays):
        if "emission_index" in arrays:
            self._stored_rows = WeightRows(arrays["emission_index"], arrays["emission_table"])
            self._emission = None
        else:  # a dense matrix (the parser's, the HMM's, files saved before the rows)
            self._stored_rows = None
            self._emission = numpy.ascontiguousarray(arrays["emission"], dtype=numpy.float32)

    def scores(self, const uint32_t[:, ::1] features, bint averaged=True):
        """Emission scores float32[n, n_tags] of hashed features uint32[n, F]."""
        cdef WeightRows rows = self.scoring_rows() if averaged else None
        cdef const float[:, ::1] weights = rows.table if averaged else self.emission
        cdef const int32_t[::1] index = rows.index if averaged else None
        cdef int n = features.shape[0]
        cdef int n_features = features.shape[1]
        cdef int n_tags = weights.shape[1]
        out = numpy.empty((n, n_tags), dtype=numpy.float32)
        cdef float[:, ::1] out_view = out
        if n == 0 or n_features == 0 or n_tags == 0:
            out.fill(0)
            return out
        with nogil:
            emit(&weights[0, 0], &index[0] if averaged else NULL, &features[0, 0], n, n_features, n_tags,
                 &out_view[0, 0])
        return out

    def weights_of(self, features, int tag):
        """The averaged emission weights of some feature ids for one tag (for explanations)."""
        return self.scoring_rows().take(features, tag)

    def transitions(self, bint averaged=True):
        """Transition scores float32[n_tags + 1, n_tags], the last row the start's (factored ones added up)."""
        if averaged:
            return self._averaged("full")
        return self._full(self.transition, (self.exits, self.entries) if self.factored else None)

    def update(self, const uint32_t[:, ::1] features, const int32_t[::1] gold, const int32_t[::1] guess):
        """Move weights toward the gold sequence and away from the guess; one step."""
        cdef int n = features.shape[0]
        cdef int n_tags = self.n_tags
        if gold.shape[0] != n or guess.shape[0] != n:
            raise ValueError("features, gold and guess must have one row per token")
        if n > 0:
            self._update_emission(features, gold, guess)
        cdef float[:, ::1] transition = self.transition
        cdef double[:, ::1] transition_totals = self._transition_totals
        cdef float[::1] exits = self.exits, entries = self.entries
        cdef double[::1] exit_totals = self._exit_totals, entry_totals = self._entry_totals
        cdef const uint8_t[::1] continuing = self.continuing
        cdef const uint8_t* continuing_ptr = &continuing[0] if self.continuing is not None else NULL
        cdef double step = self.step
        if n > 0:
            with nogil:
                _update_transitions(
                    &transition[0, 0], &transition_totals[0,
                                                          0], &exits[0], &exit_totals[0], &entries[0], &entry_totals[0],
                    continuing_ptr, &gold[0], &guess[0], n, n_tags, step,
                )
        self.step += 1
        self._weights_changed()

    def steps(self, features, const uint8_t[:, ::1] allowed, gold, const int32_t[::1] known, runs, float margin,
              legal, predecessors):
        """Cost-augmented training steps, one per run of rows (start, end), each with the weights the one
        before left: score the rows, give every wrong tag of a row whose gold tag is known (known >= 0)
        a head start of `margin`, take the best tags `allowed` allows (decode.viterbi, with `legal` and
        its `predecessors`), and update toward gold. RETURNS the number of mistagged rows over all steps.

        features (uint32[n, F]), gold (int32[n]): every row's features and gold tags (known, completed).
        """
        cdef Py_ssize_t start, end, i, tag, n_tags = self.n_tags
        cdef const int32_t[::1] gold_view = gold
        cdef float[:, ::1] score_view
        cdef int32_t[::1] guess_view
        cdef Trellis trellis
        cdef Pool mem
        cdef double mistagged = 0
        offsets = numpy.zeros(2, dtype=numpy.int64)
        for start, end in runs:
            row_features, row_gold = features[start:end], gold[start:end]
            scores = self.scores(row_features, averaged=False)
            score_view = scores
            if margin != 0:  # as perceptron_pipe.with_cost adds it
                for i in range(start, end):
                    if known[i] >= 0:
                        for tag in range(n_tags):
                            score_view[i - start, tag] += margin
                        score_view[i - start, known[i]] -= margin
            transitions, factors = self.decoding_weights(averaged=False)
            mem = Pool()
            prepare_trellis(&trellis, transitions, legal, factors, predecessors, n_tags, mem)
            guess = numpy.zeros(end - start, dtype=numpy.int32)
            offsets[1] = end - start
            guess_view = guess
            decode_sequences(&trellis, &score_view[0, 0], &allowed[start, 0], offsets, &guess_view[0], end - start)
            self.update(row_features, row_gold, guess)
            for i in range(end - start):
                mistagged += gold_view[start + i] != guess_view[i]
        return mistagged

    def _update_emission(self, const uint32_t[:, ::1] features, const int32_t[::1] gold, const int32_t[::1] guess):
        cdef float[:, ::1] emission = self.emission
        cdef double[:, ::1] emission_totals = self._emission_totals
        cdef int n = features.shape[0], n_features = features.shape[1], n_tags = self.n_tags
        cdef double step = self.step
        if n_features > 0:
            with nogil:
                _update_emissions(
                    &emission[0, 0], &emission_totals[0, 0], &features[0, 0],
                    &gold[0], &guess[0], n, n_features, n_tags, step,
                )

    def update_dense(self, const uint32_t[:, ::1] features, const float[:, ::1] token_gradient,
                     const float[:, ::1] transition_gradient, double rate, double l2=0.0):
        """A gradient step (CRF training): every feature of token i moves by rate
        times its row of token_gradient; transitions by rate times theirs. With
        l2, each occurrence of a feature also shrinks its weights by rate * l2
        (the L2 penalty's gradient, applied where the feature occurs). One step.
        Pairwise transitions only."""
        if self.factored:
            raise ValueError("The CRF trainer takes pairwise transitions: set transitions = \"pairwise\"")
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
        self._weights_changed()

    def to_arrays(self):
        """The averaged weights, as a model's weights.npz holds them."""
        arrays = {**self._emission_arrays(), "transition": self._averaged("pairs")}
        if self.factored:
            arrays["exits"], arrays["entries"] = self._averaged("factors")
            arrays["continuing"] = self.continuing
        return arrays

    def _emission_arrays(self):
        return self.scoring_rows().arrays()

    def __reduce__(self):
        return (_from_arrays, (type(self), self.n_buckets, self.to_arrays()))


def _grown(matrix, int extra):
    """A transition matrix (or its totals) with extra tags; the start row stays last."""
    if extra == 0:
        return matrix
    grown = numpy.pad(matrix, ((0, extra), (0, extra)))
    grown[grown.shape[0] - 1], grown[matrix.shape[0] - 1] = grown[matrix.shape[0] - 1].copy(), 0
    return numpy.ascontiguousarray(grown)


def _grown_start(vector, int extra):
    """Exit weights (or totals) with extra tags; the start's stays last."""
    if extra == 0:
        return vector
    grown = numpy.pad(vector, (0, extra))
    grown[grown.shape[0] - 1], grown[vector.shape[0] - 1] = grown[vector.shape[0] - 1], 0
    return grown


def _from_arrays(kind, n_buckets, arrays):
    model = kind(n_buckets, arrays["transition"].shape[1])
    model.load_arrays(arrays)
    return model
