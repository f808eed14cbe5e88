# cython: language_level=3
"""Greedy transition-based parsing: configuration -> features -> move scores -> next configuration.

Two averaged perceptrons over the same hashed features: one scores the
moves, one the label of the arc a move adds (its features salted with the
arc's direction). Parsing takes the best-scoring move of the system, or the
system's default move when that one is illegal (Nivre 2008). Up to eight
sentences are parsed side by side (_parse_lanes): the tables are far larger than
the caches, and one sentence's rows arrive while the others work. Training
updates wherever the guess differs from the oracle's move: the static
oracle's, or for arc-eager with exploration the best move the dynamic oracle
allows (Goldberg & Nivre 2012), following the model's own moves part of the time.
"""
import numpy
from cymem.cymem cimport Pool
from libc.stdint cimport int32_t, int64_t, uint64_t

from ..core.perceptron cimport AveragedPerceptron
from ..core.prefetch cimport prefetch_row
from .move_scores cimport (
    MAX_TEMPLATES, checked_templates, class_scores, direction_salt, has_move, hashed_rows,
)
from .state_features cimport StateFeatures
from .transitions cimport (
    ARC_EAGER, LEFT_ARC, N_MOVES, NO_ARC, REDUCE, RIGHT_ARC, SHIFT,
    State, apply, attach_roots, fallback, is_legal, is_terminal, new_state, oracle, reset_state,
)

cdef uint64_t _GOLDEN = 0x9e3779b97f4a7c15ULL


cdef inline int _top_move(int system, const float* weights, const uint64_t* rows, int n_rows) noexcept nogil:
    """The system's best-scoring move, legal or not."""
    cdef float scores[N_MOVES]
    cdef int move, best = -1
    class_scores(weights, rows, n_rows, N_MOVES, scores)
    for move in range(N_MOVES):
        if has_move(system, move) and (best < 0 or scores[move] > scores[best]):
            best = move
    return best


def check_parse_arrays(const uint64_t[:, ::1] nodes, const int64_t[::1] offsets,
                       const float[:, ::1] move_weights, const float[:, ::1] label_weights, int root_label):
    """Raise ValueError unless the arrays of parse_batch fit together."""
    cdef Py_ssize_t N = nodes.shape[0]
    if nodes.shape[1] != 3:
        raise ValueError("nodes need 3 columns: word, tag, suffix")
    if move_weights.shape[1] != N_MOVES or label_weights.shape[1] < 1 or not 0 <= root_label < label_weights.shape[1]:
        raise ValueError("move weights need one column per move, label weights one per label, "
                         "and root_label one of them")
    if offsets.shape[0] < 1 or offsets[0] != 0 or (offsets.shape[0] > 1 and offsets[offsets.shape[0] - 1] != N):
        raise ValueError(f"offsets must rise from 0 to {N}")
    cdef Py_ssize_t u
    for u in range(offsets.shape[0] - 1):  # a loop: numpy's calls cost more than it for a sentence
        if offsets[u + 1] - offsets[u] < 1:
            raise ValueError("each sentence needs its root slot")


cdef enum:
    LANES = 8  # sentences parsed side by side


cdef struct Lane:
    State* state             # n < 0: no sentence
    Py_ssize_t start         # its sentence's root slot among the nodes
    int move
    uint64_t hashes[MAX_TEMPLATES]
    uint64_t rows[MAX_TEMPLATES]


cdef inline void _prefetch_rows(const float* weights, const uint64_t* rows, int n_rows, int n_classes) noexcept nogil:
    cdef int j
    for j in range(n_rows):
        prefetch_row(weights + rows[j] * n_classes, n_classes)


cdef inline bint _is_busy(const Lane* lane) noexcept nogil:
    return lane.state.n >= 0


cdef inline void _finish(Lane* lane, int root_label, int32_t* heads, int32_t* labels) noexcept nogil:
    """The lane's sentence made a tree and written out; the lane free."""
    cdef int k
    attach_roots(lane.state, root_label)
    for k in range(1, lane.state.n + 1):
        heads[lane.start + k] = lane.state.heads[k]
        labels[lane.start + k] = lane.state.labels[k]
    lane.state.n = -1


cdef void _parse_lanes(StateFeatures features, int system, const uint64_t* nodes, const int64_t* offsets,
                       Py_ssize_t n_sentences, Lane* lanes, int n_lanes,
                       const float* move_weights, uint64_t move_buckets,
                       const float* label_weights, uint64_t label_buckets, int n_labels, float* label_scores,
                       int root_label, int32_t* heads, int32_t* labels) noexcept nogil:
    """Each step of each lane in three rounds, so that the table rows one lane waits for
    arrive while the other lanes work: features and move rows asked for; moves chosen and
    label rows asked for; labels chosen and moves applied. Each sentence's moves are those
    of parsing it alone."""
    cdef int n_templates = features.n_templates, lane_index, label, active = 1
    cdef Py_ssize_t next_sentence = 0
    cdef Lane* lane
    while active:
        active = 0
        for lane_index in range(n_lanes):
            lane = &lanes[lane_index]
            if _is_busy(lane) and is_terminal(lane.state):
                _finish(lane, root_label, heads, labels)
            while not _is_busy(lane) and next_sentence < n_sentences:
                lane.start = offsets[next_sentence]
                reset_state(lane.state, offsets[next_sentence + 1] - lane.start - 1)
                next_sentence += 1
                if is_terminal(lane.state):  # a sentence of no words
                    _finish(lane, root_label, heads, labels)
            if not _is_busy(lane):
                continue
            active += 1
            features.extract(lane.state, nodes + lane.start * 3, lane.hashes)
            hashed_rows(lane.hashes, n_templates, 0, move_buckets, lane.rows)
            _prefetch_rows(move_weights, lane.rows, n_templates, N_MOVES)
        for lane_index in range(n_lanes):
            lane = &lanes[lane_index]
            if not _is_busy(lane):
                continue
            lane.move = _top_move(system, move_weights, lane.rows, n_templates)
            if not is_legal(lane.state, system, lane.move):
                lane.move = fallback(lane.state, system)
            if lane.move == LEFT_ARC or lane.move == RIGHT_ARC:
                hashed_rows(lane.hashes, n_templates, direction_salt(lane.move), label_buckets, lane.rows)
                _prefetch_rows(label_weights, lane.rows, n_templates, n_labels)
        for lane_index in range(n_lanes):
            lane = &lanes[lane_index]
            if not _is_busy(lane):
                continue
            label = -1
            if lane.move == LEFT_ARC or lane.move == RIGHT_ARC:
                label = class_scores(label_weights, lane.rows, n_templates, n_labels, label_scores)
            apply(lane.state, system, lane.move, label)


def parse_batch(
    StateFeatures features, int system,
    const uint64_t[:, ::1] nodes, const int64_t[::1] offsets,
    const float[:, ::1] move_weights, const float[:, ::1] label_weights, int root_label,
):
    """Parse sentences laid end to end, each a root slot then its words.

    nodes (uint64[N, 3]): (word, tag, suffix) per node; node 0 of each sentence is its root slot.
    offsets (int64[n_sentences + 1]): Where each sentence's root slot is.
    move_weights (float32[buckets, N_MOVES]), label_weights (float32[buckets, n_labels]).
    root_label (int): The label given to nodes left without a head.
    RETURNS (Tuple[int32[N], int32[N]]): each node's head (node index within
        its sentence, 0 the root; -1 for the root slots) and label id.
    """
    check_parse_arrays(nodes, offsets, move_weights, label_weights, root_label)
    checked_templates(features)
    cdef int N = nodes.shape[0], n_labels = label_weights.shape[1], longest = 0, lane_index
    cdef Py_ssize_t u, n_sentences = offsets.shape[0] - 1
    heads = numpy.full(N, -1, dtype=numpy.int32)
    labels = numpy.full(N, -1, dtype=numpy.int32)
    cdef int32_t[::1] heads_view = heads, labels_view = labels
    if n_sentences < 1 or N == 0:
        return heads, labels
    for u in range(n_sentences):
        longest = max(longest, offsets[u + 1] - offsets[u] - 1)
    cdef Pool mem = Pool()
    cdef int n_lanes = min(LANES, n_sentences)  # a sentence alone needs one
    cdef Lane* lanes = <Lane*>mem.alloc(n_lanes, sizeof(Lane))
    for lane_index in range(n_lanes):
        lanes[lane_index].state = new_state(mem, longest)
        lanes[lane_index].state.n = -1
    cdef float* label_scores = <float*>mem.alloc(n_labels, sizeof(float))
    with nogil:
        _parse_lanes(features, system, &nodes[0, 0], &offsets[0], n_sentences, lanes, n_lanes,
                     &move_weights[0, 0], move_weights.shape[0], &label_weights[0, 0], label_weights.shape[0],
                     n_labels, label_scores, root_label, &heads_view[0], &labels_view[0])
    return heads, labels


cdef void _update(AveragedPerceptron model, const uint64_t* rows, int n_rows, int gold, int guess):
    """Move the rows' weights towards gold and away from guess (when they differ), and tick the averaging clock."""
    cdef float[:, ::1] weights = model.emission
    cdef double[:, ::1] totals = model._emission_totals
    cdef double step = model.step
    cdef int j
    if gold != guess:
        for j in range(n_rows):
            weights[rows[j], gold] += 1
            weights[rows[j], guess] -= 1
            totals[rows[j], gold] += step
            totals[rows[j], guess] -= step
        model._averages = None
    model.step += 1


cdef void _arc_eager_costs(const State* s, const int32_t* gold_heads, int* costs) noexcept nogil:
    """How many gold arcs each move makes unreachable (Goldberg & Nivre 2012's
    dynamic oracle for arc-eager); a move of cost 0 keeps the best tree still
    reachable from this configuration in reach. Illegal moves cost -1."""
    cdef int i = s.stack[s.stack_len - 1], j = s.buffer[s.buffer_start], k, node
    cdef int move
    for move in range(N_MOVES):
        costs[move] = 0 if is_legal(s, ARC_EAGER, move) else -1
    costs[NO_ARC] = -1
    for k in range(s.buffer_start, s.n):
        node = s.buffer[k]
        if costs[LEFT_ARC] >= 0 and ((gold_heads[i] == node and node != j) or gold_heads[node] == i):
            costs[LEFT_ARC] += 1  # i's head or dependents still in the buffer
        if costs[REDUCE] >= 0 and gold_heads[node] == i:
            costs[REDUCE] += 1
        if costs[RIGHT_ARC] >= 0 and node != j and gold_heads[j] == node:
            costs[RIGHT_ARC] += 1  # j's head further on
    for k in range(s.stack_len):
        node = s.stack[k]
        if costs[RIGHT_ARC] >= 0 and ((node != i and gold_heads[j] == node)
                                      or (gold_heads[node] == j and s.heads[node] == -1)):
            costs[RIGHT_ARC] += 1  # j's head below i, or its dependents on the stack
        if gold_heads[j] == node or (gold_heads[node] == j and s.heads[node] == -1):
            costs[SHIFT] += 1  # every arc between j and the stack


cdef inline uint64_t _next_random(uint64_t* seed) noexcept nogil:
    seed[0] += _GOLDEN
    cdef uint64_t h = seed[0]
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL
    return h ^ (h >> 31)


def gold_dependents(const uint64_t[:, ::1] nodes, const int32_t[::1] gold_heads, const int32_t[::1] gold_labels,
                    AveragedPerceptron move_model, AveragedPerceptron label_model):
    """Each node's number of gold dependents, after checking a training sentence's arrays against the models.
    RETURNS (int32[n + 1])"""
    cdef int n = nodes.shape[0] - 1, k
    if n < 0 or nodes.shape[1] != 3 or gold_heads.shape[0] != n + 1 or gold_labels.shape[0] != n + 1:
        raise ValueError("nodes (3 columns), gold heads and labels need one row per node 0..n")
    if move_model.n_tags != N_MOVES:
        raise ValueError("the move model needs one column per move")
    dependents = numpy.zeros(n + 1, dtype=numpy.int32)
    for k in range(1, n + 1):
        if not 0 <= gold_heads[k] <= n or gold_heads[k] == k:
            raise ValueError(f"gold head of node {k} is {gold_heads[k]}: heads must be other nodes in 0..{n}")
        if not 0 <= gold_labels[k] < label_model.n_tags:
            raise ValueError(f"gold label of node {k} is {gold_labels[k]}, outside the {label_model.n_tags} labels")
        dependents[gold_heads[k]] += 1
    return dependents


def train_sentence(
    StateFeatures features, int system, AveragedPerceptron move_model, AveragedPerceptron label_model,
    const uint64_t[:, ::1] nodes, const int32_t[::1] gold_heads, const int32_t[::1] gold_labels,
    double explore=0.0, uint64_t seed=0,
):
    """One pass over a sentence, a perceptron step at each move.

    nodes (uint64[n + 1, 3]), gold_heads, gold_labels: per node 0..n (node 0 the root slot,
        gold head -1; each other node's gold head in 0..n).
    explore (float): arc-eager only: the share of moves where training follows
        the model's own (legal) choice instead of the oracle's, and learns
        from the dynamic oracle what is best from there; 0 follows the
        static oracle (the other systems always do).
    seed (int): Seed of those choices.
    RETURNS (Tuple[int, int, int]): moves, wrong moves, wrong labels.
    """
    cdef int n = nodes.shape[0] - 1
    cdef const int32_t[::1] dependents_view = gold_dependents(nodes, gold_heads, gold_labels, move_model, label_model)
    cdef Pool mem = Pool()
    cdef State* state = new_state(mem, n)
    cdef uint64_t hashes[MAX_TEMPLATES]
    cdef uint64_t rows[MAX_TEMPLATES]
    cdef float move_scores[N_MOVES]
    cdef int costs[N_MOVES]
    label_pool = Pool()
    cdef float* label_scores = <float*>label_pool.alloc(label_model.n_tags, sizeof(float))
    cdef int n_templates = checked_templates(features), gold, guess, label, guess_label, move, taken
    cdef int n_moves = 0, wrong_moves = 0, wrong_labels = 0
    cdef bint dynamic = system == ARC_EAGER and explore > 0
    cdef uint64_t move_buckets = move_model.n_buckets, label_buckets = label_model.n_buckets
    cdef uint64_t random_state = seed
    cdef const float[:, ::1] move_weights, label_weights
    while not is_terminal(state):
        features.extract(state, &nodes[0, 0], hashes)
        hashed_rows(hashes, n_templates, 0, move_buckets, rows)
        move_weights = move_model.emission
        # Parsing takes the top move only when it is legal, so every other move,
        # legal or not, must learn to score below the gold one.
        guess = _top_move(system, &move_weights[0, 0], rows, n_templates)
        if dynamic:
            _arc_eager_costs(state, &gold_heads[0], costs)
            class_scores(&move_weights[0, 0], rows, n_templates, N_MOVES, move_scores)
            gold = -1
            for move in range(N_MOVES):  # the best-scoring move of cost 0
                if costs[move] == 0 and (gold < 0 or move_scores[move] > move_scores[gold]):
                    gold = move
            if costs[guess] == 0:
                gold = guess
            label = -1
            if gold == LEFT_ARC and gold_heads[state.stack[state.stack_len - 1]] == state.buffer[state.buffer_start]:
                label = gold_labels[state.stack[state.stack_len - 1]]
            elif gold == RIGHT_ARC and gold_heads[state.buffer[state.buffer_start]] == state.stack[state.stack_len - 1]:
                label = gold_labels[state.buffer[state.buffer_start]]
        else:
            gold = oracle(state, system, &gold_heads[0], &gold_labels[0], &dependents_view[0], &label)
            if not is_legal(state, system, gold):  # a tree the system cannot build
                gold, label = fallback(state, system), -1
        _update(move_model, rows, n_templates, gold, guess)
        n_moves += 1
        wrong_moves += gold != guess
        if label >= 0:
            hashed_rows(hashes, n_templates, direction_salt(gold), label_buckets, rows)
            label_weights = label_model.emission
            guess_label = class_scores(&label_weights[0, 0], rows, n_templates, label_model.n_tags, label_scores)
            _update(label_model, rows, n_templates, label, guess_label)
            wrong_labels += guess_label != label
        taken = gold
        if dynamic and guess != gold and (_next_random(&random_state) >> 11) * (1.0 / 9007199254740992.0) < explore:
            taken = guess if is_legal(state, system, guess) else fallback(state, system)
            if taken != gold:
                label = -1
                if taken == LEFT_ARC or taken == RIGHT_ARC:  # the model's own label too
                    hashed_rows(hashes, n_templates, direction_salt(taken), label_buckets, rows)
                    label_weights = label_model.emission
                    label = class_scores(&label_weights[0, 0], rows, n_templates, label_model.n_tags, label_scores)
        apply(state, system, taken, label)
    return n_moves, wrong_moves, wrong_labels
