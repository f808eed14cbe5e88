# cython: language_level=3
"""Constrained first-order Viterbi over a tag trellis.

Transitions are pairwise, or factored into an exit weight of the tag before and an
entry weight of the tag after for the moves into tags that open nothing (O, B, U):
then one max over the tags before serves every such tag, and a step costs O(tags)
instead of O(tags^2) (perceptron.pyx has the weights).

Hard constraints come in two masks: `legal` says which tag may follow which
(its last row is the sequence start), `allowed` says which tags each token may
take (sentence starts, whitespace, preset entities, sequence end). A masked
cell is never entered, so an invalid sequence cannot come out.

When every move is legal and none is factored (the tagger's tens of tags), a step reads only
the tags before that can still win (_moves_pruned): the same tags, far fewer moves.
"""
from cymem.cymem cimport Pool
from libc.math cimport INFINITY, fabs
from libc.stdint cimport int32_t, int64_t, uint8_t
from libcpp.vector cimport vector

import numpy


def predecessor_lists(const uint8_t[:, ::1] legal, bint factored=False):
    """Each tag's legal predecessors in ascending order, as compressed rows: tag t's are
    predecessors[starts[t]:starts[t + 1]]. The scheme leaves most tags a few, so decoding
    skips the rest. Factored, the tags that may open a sequence (the openers) get none:
    one max over the closing tags serves them all. Made once per scheme, not per call.
    RETURNS (starts int32[n_tags + 1], predecessors int32[n], closing int32[c], openers int32[o]);
        closing and openers are empty unless factored."""
    n_tags = legal.shape[1]
    matrix = numpy.asarray(legal, dtype=numpy.bool_)
    closing = openers = numpy.zeros(0, dtype=numpy.int32)
    if factored:
        openers = numpy.flatnonzero(matrix[n_tags]).astype(numpy.int32)  # those the start row may reach
        closing = numpy.flatnonzero(matrix[:n_tags, openers[0]] if len(openers) else []).astype(numpy.int32)
        matrix = matrix.copy()
        matrix[:, openers] = False
    tags, predecessors = numpy.nonzero(matrix[:n_tags].T)  # the start row is read at the first token
    starts = numpy.zeros(n_tags + 1, dtype=numpy.int32)
    numpy.cumsum(numpy.bincount(tags, minlength=n_tags), out=starts[1:])
    return starts, predecessors.astype(numpy.int32), closing, openers


cdef _bytes(flags):
    """A bool or 0/1 array as contiguous uint8, a view where it can be (bools are bytes)."""
    array = numpy.ascontiguousarray(flags)
    return array.view(numpy.uint8) if array.dtype == numpy.bool_ else numpy.ascontiguousarray(array, dtype=numpy.uint8)


def allowed_mask(sent_starts, is_space, const int32_t[::1] forced, closed_before,
                 continuing, closing, bounds):
    """TagScheme.allowed's mask, uint8 (n, n_tags), in one loop: numpy's masked
    assignments cost more than the loop for a sentence. The bool arguments are
    per token (sent_starts, is_space, closed_before or None) or per tag (continuing,
    closing, bounds: tags nothing may start or end on whitespace with)."""
    cdef Py_ssize_t n = forced.shape[0], n_tags = len(continuing)
    allowed = numpy.empty((n, n_tags), dtype=numpy.uint8)
    if n == 0:
        return allowed
    cdef uint8_t[:, ::1] out = allowed
    cdef const uint8_t[::1] starts = _bytes(sent_starts)
    cdef const uint8_t[::1] spaces = _bytes(is_space)
    cdef const uint8_t[::1] closed = numpy.zeros(n,
                                                 dtype=numpy.uint8) if closed_before is None else _bytes(closed_before)
    cdef const uint8_t[::1] inside = _bytes(continuing)
    cdef const uint8_t[::1] ending = _bytes(closing)
    cdef const uint8_t[::1] edges = _bytes(bounds)
    with nogil:
        fill_allowed(n, n_tags, &starts[0], &spaces[0], &closed[0], &forced[0], &inside[0], &ending[0], &edges[0],
                     &out[0, 0])
    return allowed


cdef void fill_allowed(Py_ssize_t n, Py_ssize_t n_tags, const uint8_t* starts, const uint8_t* spaces,
                       const uint8_t* closed, const int32_t* forced, const uint8_t* inside, const uint8_t* ending,
                       const uint8_t* edges, uint8_t* out) noexcept nogil:
    """allowed_mask into out (n x n_tags); spaces, closed and forced may be NULL: none."""
    cdef Py_ssize_t i, tag
    cdef bint first, last
    cdef uint8_t* row
    for i in range(n):
        row = &out[i * n_tags]
        if forced != NULL and forced[i] >= 0:
            for tag in range(n_tags):
                row[tag] = 0
            row[forced[i]] = 1
            continue
        # a sentence start, or after a preset or line end
        first = i == 0 or starts[i] or (closed != NULL and closed[i])
        last = i == n - 1 or starts[i + 1]
        for tag in range(n_tags):
            row[tag] = not ((first and inside[tag]) or (last and not ending[tag])
                            or (spaces != NULL and spaces[i] and edges[tag]))


cdef inline void _moves(const Trellis* t, const double* delta, double* next_delta, int32_t* pointers) noexcept nogil:
    """The best move into each tag, scored pair by pair from its predecessor lists
    (ties go to the lowest predecessor; an unreachable one is -inf and never wins)."""
    cdef int tag, k, best_prev
    cdef bint better
    cdef double best, score
    for tag in range(t.n_tags):
        best, best_prev = -INFINITY, -1
        for k in range(t.starts[tag], t.starts[tag + 1]):
            # conditional moves, not a branch: which predecessor wins is a coin toss to the CPU
            score = delta[t.predecessors[k]] + t.moves[k]
            better = score > best
            best_prev = t.predecessors[k] if better else best_prev
            best = score if better else best
        next_delta[tag] = best
        pointers[tag] = best_prev


cdef void _moves_pruned(const Trellis* t, const double* delta, double* next_delta, int32_t* pointers,
                        int32_t* left) noexcept nogil:
    """The best move into each tag of a free trellis (t.max_in set), as _moves finds it, ties to the
    lowest tag before, but over the tags before that can win alone: a tag whose score is further below
    the best score than the best tag's furthest shortfall loses every move to the best tag, whatever
    the move. A tag into which the best tag's move falls short of the tag's highest move by less than
    the lead of the best score over the next wins from the best tag (most tags: set in one pass);
    each other tag is searched over the tags before that are left. A margin far above rounding
    error keeps both cuts exact."""
    cdef int n_tags = t.n_tags, n_left = 0, tag, before, k, j, best_prev, top_tag = 0
    cdef double top = -INFINITY, second = -INFINITY, cutoff, best, score, lead, margin
    for before in range(n_tags):
        if delta[before] > top:
            second, top, top_tag = top, delta[before], before
        elif delta[before] > second:
            second = delta[before]
    margin = 1e-9 * (1.0 + fabs(top) + t.move_scale)
    cutoff = top - t.shortfalls[top_tag * n_tags] - margin  # its furthest shortfall comes first
    for before in range(n_tags):  # in order: of equal scores, the first found is the lowest tag before
        if delta[before] >= cutoff and delta[before] > -INFINITY:
            left[n_left] = before
            n_left += 1
    if n_left == 0:  # no tag before is reachable
        for tag in range(n_tags):
            next_delta[tag], pointers[tag] = -INFINITY, -1
        return
    cdef const float* from_top = t.moves_from + top_tag * n_tags
    for tag in range(n_tags):
        next_delta[tag] = top + from_top[tag]
        pointers[tag] = top_tag
    lead = top - second - margin  # infinite when the best tag before is the only one reachable
    for j in range(n_tags):
        if t.shortfalls[top_tag * n_tags + j] < lead:
            break
        tag = t.shortfall_order[top_tag * n_tags + j]
        best, best_prev = -INFINITY, -1
        for k in range(n_left):
            before = left[k]
            score = delta[before] + t.moves[t.starts[tag] + before]
            if score > best:
                best, best_prev = score, before
        next_delta[tag] = best
        pointers[tag] = best_prev


cdef int _viterbi(
    const Trellis* t, const float* emissions, const uint8_t* allowed, int n, int32_t* out,
    double* delta, double* next_delta, int32_t* backpointers, int32_t* left,
) noexcept nogil:
    cdef int i, tag, exit_prev, k, n_tags = t.n_tags
    cdef double best, score, best_exit
    cdef double* swap
    cdef int32_t* pointers
    cdef const float* scores
    cdef const uint8_t* allowed_here
    cdef const float* start_scores = t.transitions + n_tags * n_tags
    cdef const uint8_t* start_legal = t.legal + n_tags * n_tags
    for tag in range(n_tags):
        if allowed[tag] and start_legal[tag]:
            score = t.exits[n_tags] + t.entries[tag] if t.exits != NULL else start_scores[tag]
            delta[tag] = score + emissions[tag]
        else:
            delta[tag] = -INFINITY
    for i in range(1, n):
        pointers = backpointers + i * n_tags
        if t.max_in != NULL:
            _moves_pruned(t, delta, next_delta, pointers, left)
        else:
            _moves(t, delta, next_delta, pointers)
        if t.exits != NULL:  # the openers, all from the one best exit
            best_exit, exit_prev = -INFINITY, -1
            for k in range(t.n_closing):
                score = delta[t.closing[k]] + t.exits[t.closing[k]]
                if score > best_exit:
                    best_exit, exit_prev = score, t.closing[k]
            for k in range(t.n_openers):
                next_delta[t.openers[k]] = best_exit + t.entries[t.openers[k]]
                pointers[t.openers[k]] = exit_prev
        scores, allowed_here = emissions + i * n_tags, allowed + i * n_tags
        for tag in range(n_tags):
            if allowed_here[tag] and pointers[tag] >= 0:
                next_delta[tag] += scores[tag]
            else:
                next_delta[tag], pointers[tag] = -INFINITY, -1
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
    factors=None,
    predecessors=None,
):
    """The best tag sequence that every mask allows, for each sequence of a batch.

    emissions (float32[n, T]): Per-token tag scores.
    transitions (float32[T + 1, T]): Tag bigram scores; the last row scores the start.
    allowed (uint8[n, T]): 1 where a token may take a tag.
    legal (uint8[T + 1, T]): 1 where a tag may follow another (last row: the start).
    offsets (Optional[int64[n_sequences + 1]]): Where each sequence starts when
        several are laid end to end; None for one sequence.
    factors (Optional[Tuple[float32[T + 1], float32[T]]]): Factored transitions
        (exits, entries) into the tags that may open a sequence; transitions then
        score only the moves into the others. As under BIO and BILOU, every
        opener must have the same legal predecessors.
    predecessors: `predecessor_lists(legal, factored)`, if the caller keeps them.
    RETURNS (int32[n]): The tag ids.
    """
    return Decoder(transitions, legal, factors, predecessors).decode(emissions, allowed, offsets)


cdef class Decoder:
    """`viterbi` with its transitions, legal moves and factors fixed: the trellis's moves (and a free
    trellis's bounds) are worked out once, for a caller that decodes many batches with the same
    weights. Decoding only reads it, so threads may share one.

    transitions, legal, factors, predecessors: as `viterbi` takes them; kept, not copied.
    """
    cdef Pool mem
    cdef Trellis trellis
    cdef object _kept  # the arrays the trellis points into
    cdef readonly object transitions  # the transitions it was made for

    def __init__(self, const float[:, ::1] transitions, const uint8_t[:, ::1] legal, factors=None, predecessors=None):
        if predecessors is None:
            predecessors = predecessor_lists(legal, factors is not None)
        self.mem = Pool()
        self._kept = (transitions, legal, factors, predecessors)
        self.transitions = transitions.base if transitions.base is not None else transitions
        prepare_trellis(&self.trellis, transitions, legal, factors, predecessors, transitions.shape[1], self.mem)

    def decode(self, const float[:, ::1] emissions, const uint8_t[:, ::1] allowed, const int64_t[::1] offsets=None):
        """The best tags of emissions (float32[n, T]) that allowed (uint8[n, T]) allows, for each sequence
        of offsets (as `viterbi` takes them). RETURNS (int32[n])"""
        cdef int n = emissions.shape[0]
        cdef int n_tags = self.trellis.n_tags
        if emissions.shape[1] != n_tags:
            raise ValueError(f"emissions have {emissions.shape[1]} tags, the transitions {n_tags}")
        if allowed.shape[0] != n or allowed.shape[1] != n_tags:
            raise ValueError(f"allowed has shape {(allowed.shape[0], allowed.shape[1])}, expected {(n, n_tags)}")
        if offsets is None:
            offsets = numpy.array([0, n], dtype=numpy.int64)
        out = numpy.zeros(n, dtype=numpy.int32)
        cdef int32_t[::1] out_view = out
        if n:
            decode_sequences(&self.trellis, &emissions[0, 0], &allowed[0, 0], offsets, &out_view[0], n)
        else:
            check_offsets(offsets, n)
        return out


cdef int decode_checked(const Trellis* t, const float* emissions, const uint8_t* allowed, const int64_t* offsets,
                        Py_ssize_t n_offsets, int32_t* out, double* deltas, int32_t* pointers,
                        Py_ssize_t longest) noexcept nogil:
    """decode_sequences over offsets that check_offsets has checked (the longest sequence `longest`
    tokens), with its scratch given: deltas (2 * n_tags), pointers (backpointer_room). RETURNS 0, or
    -1 where no tag sequence satisfies the constraints."""
    cdef Py_ssize_t s, start, length, n_tags = t.n_tags
    # Each sequence is traced back before the next starts: room for the longest one will do.
    cdef int32_t* left = pointers + max(1, longest * n_tags)
    for s in range(n_offsets - 1):
        start, length = offsets[s], offsets[s + 1] - offsets[s]
        if length and _viterbi(t, emissions + start * n_tags, allowed + start * n_tags, length, &out[start],
                               deltas, deltas + n_tags, pointers, left) != 0:
            return -1
    return 0


cdef Py_ssize_t check_offsets(const int64_t[::1] offsets, Py_ssize_t n) except -1:
    """That offsets rise from 0 to n; RETURNS the longest sequence. Checked in a loop,
    not with numpy: for a sentence, numpy's calls cost more than decoding."""
    return check_offsets_at(&offsets[0] if offsets.shape[0] else NULL, offsets.shape[0], n)


cdef Py_ssize_t check_offsets_at(const int64_t* offsets, Py_ssize_t n_offsets, Py_ssize_t n) except -1:
    """check_offsets over a pointer to n_offsets offsets."""
    cdef Py_ssize_t s, longest = 0
    if n_offsets < 1 or offsets[0] != 0 or offsets[n_offsets - 1] != n:
        raise ValueError(f"offsets must rise from 0 to {n}")
    for s in range(n_offsets - 1):
        if offsets[s + 1] < offsets[s]:
            raise ValueError(f"offsets must rise from 0 to {n}")
        longest = max(longest, offsets[s + 1] - offsets[s])
    return longest


cdef int prepare_trellis(Trellis* t, const float[:, ::1] transitions, const uint8_t[:, ::1] legal, factors,
                         predecessors,
                         int n_tags, Pool mem) except -1:
    """Fill `t` with the weights and moves Viterbi reads (as `viterbi` takes them). `t` points into
    transitions, legal, factors and predecessors, which the caller must keep until it is done with `t`;
    the moves it makes live in `mem`."""
    if transitions.shape[0] != n_tags + 1 or transitions.shape[1] != n_tags:
        raise ValueError(f"transitions have shape {(transitions.shape[0], transitions.shape[1])}, "
                         f"expected {(n_tags + 1, n_tags)}")
    if legal.shape[0] != n_tags + 1 or legal.shape[1] != n_tags:
        raise ValueError(f"legal has shape {(legal.shape[0], legal.shape[1])}, expected {(n_tags + 1, n_tags)}")
    cdef const int32_t[::1] starts = predecessors[0]
    cdef const int32_t[::1] predecessor_ids = predecessors[1]
    cdef const int32_t[::1] closing = predecessors[2]
    cdef const int32_t[::1] openers = predecessors[3]
    t.transitions, t.legal, t.n_tags = &transitions[0, 0], &legal[0, 0], n_tags
    t.starts = &starts[0]
    t.predecessors = &predecessor_ids[0] if predecessor_ids.shape[0] else NULL
    t.exits = t.entries = NULL
    t.closing = t.openers = NULL
    t.n_closing = t.n_openers = 0
    cdef const float[::1] exits, entries
    if factors is not None:
        exits, entries = factors
        if exits.shape[0] != n_tags + 1 or entries.shape[0] != n_tags:
            raise ValueError(f"factors have shapes {(exits.shape[0], entries.shape[0])}, "
                             f"expected {(n_tags + 1, n_tags)}")
        if openers.shape[0] == 0:
            raise ValueError("factored transitions need predecessor_lists(legal, factored=True)")
        t.exits, t.entries, t.n_closing, t.n_openers = &exits[0], &entries[0], closing.shape[0], openers.shape[0]
        t.openers = &openers[0]
        if closing.shape[0]:
            t.closing = &closing[0]
    # Each listed move's weight, read in order in the loop, not gathered from the (T + 1, T) matrix.
    cdef float* moves = <float*>mem.alloc(max(1, predecessor_ids.shape[0]), sizeof(float))
    cdef int tag, k
    for tag in range(n_tags):
        for k in range(starts[tag], starts[tag + 1]):
            moves[k] = transitions[predecessor_ids[k], tag]
    t.moves = moves
    t.max_in = NULL
    if factors is None and predecessor_ids.shape[0] == n_tags * n_tags:  # free: every tag follows every tag
        _prune_free(t, mem)
    return 0


cdef void _prune_free(Trellis* t, Pool mem) except *:
    """Set what _moves_pruned reads of a free trellis: each tag's highest move weight, the weights' scale,
    and for each tag before its moves, how far each falls short of the highest into its tag (furthest
    first, with the tags they move into)."""
    cdef int n = t.n_tags, tag, before, k
    cdef float* max_in = <float*>mem.alloc(n, sizeof(float))
    cdef float* moves_from = <float*>mem.alloc(n * n, sizeof(float))
    cdef int32_t* order = <int32_t*>mem.alloc(n * n, sizeof(int32_t))
    cdef double* shortfalls = <double*>mem.alloc(n * n, sizeof(double))
    cdef float move
    cdef double shortfall
    t.move_scale = 0.0
    for tag in range(n):
        max_in[tag] = t.moves[t.starts[tag]]
        for before in range(n):
            move = moves_from[before * n + tag] = t.moves[t.starts[tag] + before]
            max_in[tag] = max(max_in[tag], move)
            t.move_scale = max(t.move_scale, fabs(move))
    for before in range(n):
        for tag in range(n):
            shortfall = <double>max_in[tag] - moves_from[before * n + tag]
            k = before * n + tag  # an insertion sort of the row: once per trellis
            while k > before * n and shortfalls[k - 1] < shortfall:
                shortfalls[k], order[k] = shortfalls[k - 1], order[k - 1]
                k -= 1
            shortfalls[k], order[k] = shortfall, tag
    t.max_in, t.moves_from, t.shortfall_order, t.shortfalls = max_in, moves_from, order, shortfalls


cdef int decode_sequences(const Trellis* t, const float* emissions, const uint8_t* allowed, const int64_t[::1] offsets,
                          int32_t* out, Py_ssize_t n) except -1:
    """The best tags of each sequence (offsets) of emissions and allowed (n rows of t.n_tags) into out (n).
    Its scratch is vectors of its own, not a Pool: a Pool keeps each block in a dict, which costs a
    sentence more than decoding it."""
    cdef Py_ssize_t longest = check_offsets(offsets, n)
    cdef vector[double] deltas = vector[double](2 * t.n_tags)
    cdef vector[int32_t] pointers = vector[int32_t](backpointer_room(t, longest))
    cdef int status
    with nogil:
        status = decode_checked(t, emissions, allowed, &offsets[0], offsets.shape[0], out, deltas.data(),
                                pointers.data(), longest)
    if status != 0:
        raise ValueError("No tag sequence satisfies the constraints (conflicting preset entities?)")
    return 0
