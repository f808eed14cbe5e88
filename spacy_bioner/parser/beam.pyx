# cython: language_level=3
"""Beam-search parsing: configurations -> the k best move sequences -> the best tree.

Greedy parsing commits to each move; an early mistake then shapes every later
configuration. Here each step extends every sequence in the beam by each legal
move, scored by the move model, and keeps the k sequences with the highest
sums (Zhang & Clark 2008; Zhang & Nivre 2011). A sequence that has reached the
end is carried over unchanged until all have. An arc move takes the label
model's best label for its configuration, and that label's score adds to the
move's, so labels take part in the search.

Training is global: the same beam is run beside the static oracle's moves and
labels, and once per sentence both models are moved towards the oracle's
prefix and away from the best sequence at the step where that sequence
outscores the oracle's prefix by the most (Huang, Fayong & Guo 2012's
max-violation update).
"""
import numpy
from cymem.cymem cimport Pool
from libc.stdint cimport int32_t, int64_t, uint64_t
from libcpp.vector cimport vector

from ..core.perceptron cimport AveragedPerceptron
from .greedy import check_parse_arrays, gold_dependents
from .move_scores cimport MAX_TEMPLATES, checked_templates, class_scores, direction_salt, has_move, hashed_rows
from .state_features cimport StateFeatures
from .transitions cimport (
    LEFT_ARC, N_MOVES, RIGHT_ARC, State, apply, attach_roots, copy_state, fallback, is_legal, is_terminal, new_state,
    oracle,
)

# The move of a finished sequence that is carried over, and the oracle's once its sequence has finished.
cdef int CARRIED = -1


cdef struct Candidate:
    int parent      # the beam slot of the sequence it extends
    int move        # CARRIED for a finished sequence
    int label       # the label of the arc it adds, -1 for none
    double score    # the sum of its moves' and labels' scores
    bint gold       # whether it is the oracle's sequence so far


cdef struct Beam:
    State** states
    State** next_states
    double* scores
    bint* gold
    Candidate* candidates
    uint64_t* hashes  # the feature hashes of each slot's configuration, MAX_TEMPLATES per slot
    int width
    int size


cdef struct Weights:
    const float* moves         # [move_buckets, N_MOVES]
    const float* labels        # [label_buckets, n_labels]
    uint64_t move_buckets
    uint64_t label_buckets
    int n_templates
    int n_labels
    float* label_scores        # scratch of n_labels


cdef Beam* _new_beam(Pool mem, int n, int width) except NULL:
    cdef Beam* beam = <Beam*>mem.alloc(1, sizeof(Beam))
    cdef int b
    beam.states = <State**>mem.alloc(width, sizeof(State*))
    beam.next_states = <State**>mem.alloc(width, sizeof(State*))
    for b in range(width):
        beam.states[b] = new_state(mem, n)
        beam.next_states[b] = new_state(mem, n)
    beam.scores = <double*>mem.alloc(width, sizeof(double))
    beam.gold = <bint*>mem.alloc(width, sizeof(bint))
    beam.candidates = <Candidate*>mem.alloc(width * N_MOVES, sizeof(Candidate))
    beam.hashes = <uint64_t*>mem.alloc(width * MAX_TEMPLATES, sizeof(uint64_t))
    beam.width = width
    beam.size = 1
    beam.gold[0] = True
    return beam


cdef Weights _weights(const float[:, ::1] move_weights, const float[:, ::1] label_weights, int n_templates,
                      float* label_scores):
    cdef Weights weights
    weights.moves = &move_weights[0, 0]
    weights.labels = &label_weights[0, 0]
    weights.move_buckets = move_weights.shape[0]
    weights.label_buckets = label_weights.shape[0]
    weights.n_templates = n_templates
    weights.n_labels = label_weights.shape[1]
    weights.label_scores = label_scores
    return weights


cdef inline int _score_labels(const Weights* weights, const uint64_t* hashes, int move) noexcept nogil:
    """Every label's score (in weights.label_scores) for the arc a move adds in
    the configuration of these hashes; RETURNS the best label."""
    cdef uint64_t rows[MAX_TEMPLATES]
    hashed_rows(hashes, weights.n_templates, direction_salt(move), weights.label_buckets, rows)
    return class_scores(weights.labels, rows, weights.n_templates, weights.n_labels, weights.label_scores)


cdef int _extend(Beam* beam, StateFeatures features, int system, const uint64_t* nodes, const Weights* weights,
                 int gold_move, int gold_label) noexcept nogil:
    """Every sequence of the beam extended by each legal move (an arc with its
    best label), or carried over once finished, into beam.candidates; RETURNS
    how many, or 0 when every sequence has finished. gold_move, gold_label:
    the oracle's next move (CARRIED once it has finished, -2 when parsing) and
    label, which mark the oracle's candidate."""
    cdef uint64_t rows[MAX_TEMPLATES]
    cdef float move_scores[N_MOVES]
    cdef int b, move, label, n = 0
    cdef double score
    cdef bint moving = False
    cdef uint64_t* hashes
    cdef Candidate* candidate
    for b in range(beam.size):
        if is_terminal(beam.states[b]):
            candidate = &beam.candidates[n]
            candidate.parent, candidate.move, candidate.label, candidate.score = b, CARRIED, -1, beam.scores[b]
            candidate.gold = beam.gold[b] and gold_move == CARRIED
            n += 1
            continue
        moving = True
        hashes = beam.hashes + b * MAX_TEMPLATES
        features.extract(beam.states[b], nodes, hashes)
        hashed_rows(hashes, weights.n_templates, 0, weights.move_buckets, rows)
        class_scores(weights.moves, rows, weights.n_templates, N_MOVES, move_scores)
        for move in range(N_MOVES):
            if has_move(system, move) and is_legal(beam.states[b], system, move):
                label, score = -1, beam.scores[b] + move_scores[move]
                if move == LEFT_ARC or move == RIGHT_ARC:
                    label = _score_labels(weights, hashes, move)
                    score += weights.label_scores[label]
                candidate = &beam.candidates[n]
                candidate.parent, candidate.move, candidate.label, candidate.score = b, move, label, score
                candidate.gold = beam.gold[b] and move == gold_move and label == gold_label
                n += 1
    return n if moving else 0


cdef int _keep_best(Beam* beam, int n) noexcept nogil:
    """Move the beam's width best candidates to the front, best first (the
    earlier candidate wins a tie); RETURNS how many were kept."""
    cdef int kept = beam.width if beam.width < n else n, i, j, best
    cdef Candidate swap
    for i in range(kept):
        best = i
        for j in range(i + 1, n):
            if beam.candidates[j].score > beam.candidates[best].score:
                best = j
        if best != i:
            swap = beam.candidates[best]
            for j in range(best, i, -1):  # shift, not swap, so ties keep their order
                beam.candidates[j] = beam.candidates[j - 1]
            beam.candidates[i] = swap
    return kept


cdef void _advance(Beam* beam, int kept, int system) noexcept nogil:
    """Make the kept candidates the beam."""
    cdef int i
    cdef Candidate* candidate
    cdef State** swap
    for i in range(kept):
        candidate = &beam.candidates[i]
        copy_state(beam.next_states[i], beam.states[candidate.parent])
        if candidate.move != CARRIED:
            apply(beam.next_states[i], system, candidate.move, candidate.label)
        beam.scores[i] = candidate.score
        beam.gold[i] = candidate.gold
    swap = beam.states
    beam.states = beam.next_states
    beam.next_states = swap
    beam.size = kept


def parse_batch(
    StateFeatures features, int system,
    const uint64_t[:, ::1] nodes, const int64_t[::1] offsets,
    const float[:, ::1] move_weights, const float[:, ::1] label_weights, int root_label, int width,
):
    """Parse sentences laid end to end, each a root slot then its words, keeping
    the width best move sequences; arguments and result as greedy.parse_batch."""
    check_parse_arrays(nodes, offsets, move_weights, label_weights, root_label)
    if width < 1:
        raise ValueError(f"beam width must be at least 1, got {width}")
    cdef int N = nodes.shape[0]
    heads = numpy.full(N, -1, dtype=numpy.int32)
    labels = numpy.full(N, -1, dtype=numpy.int32)
    cdef int32_t[::1] heads_view = heads, labels_view = labels
    cdef int n_templates = checked_templates(features), n_labels = label_weights.shape[1]
    cdef Pool label_pool = Pool()
    cdef Weights weights = _weights(move_weights, label_weights, n_templates, <float*>label_pool.alloc(n_labels,
                                                                                                       sizeof(float)))
    cdef Pool mem
    cdef Beam* beam
    cdef Py_ssize_t u, start
    cdef int n, k, n_candidates
    for u in range(offsets.shape[0] - 1):
        start = offsets[u]
        n = offsets[u + 1] - start - 1
        mem = Pool()
        beam = _new_beam(mem, n, width)
        with nogil:
            while True:
                n_candidates = _extend(beam, features, system, &nodes[start, 0], &weights, -2, -1)
                if n_candidates == 0:
                    break
                _advance(beam, _keep_best(beam, n_candidates), system)
            attach_roots(beam.states[0], root_label)
            for k in range(1, n + 1):
                heads_view[start + k] = beam.states[0].heads[k]
                labels_view[start + k] = beam.states[0].labels[k]
    return heads, labels


def train_sentence(
    StateFeatures features, int system, AveragedPerceptron move_model, AveragedPerceptron label_model,
    const uint64_t[:, ::1] nodes, const int32_t[::1] gold_heads, const int32_t[::1] gold_labels, int width,
):
    """Beam-decode one sentence beside the oracle's moves and make one
    max-violation update of both models. Arguments as greedy.train_sentence.
    RETURNS (Tuple[int, int, int]): the oracle's moves, and the moves and the
        labels of the best sequence that differ from the oracle's, up to the updated step.
    """
    if width < 1:
        raise ValueError(f"beam width must be at least 1, got {width}")
    cdef const int32_t[::1] dependents = gold_dependents(nodes, gold_heads, gold_labels, move_model, label_model)
    cdef int n = nodes.shape[0] - 1, n_templates = checked_templates(features)
    cdef Pool mem = Pool()
    cdef Beam* beam = _new_beam(mem, n, width)
    cdef State* gold_state = new_state(mem, n)
    cdef Weights weights = _weights(move_model.emission, label_model.emission, n_templates,
                                    <float*>mem.alloc(label_model.n_tags, sizeof(float)))
    cdef uint64_t rows[MAX_TEMPLATES]
    cdef float move_scores[N_MOVES]
    # Per step: the oracle's move, label and configuration hashes; each kept candidate's parent slot, move and
    # label; each slot's hashes.
    cdef vector[int32_t] gold_moves, gold_step_labels, parents, moves, labels
    cdef vector[uint64_t] gold_hashes, slot_hashes
    cdef double gold_score = 0.0, violation, worst = 0.0
    cdef int step = 0, worst_step = -1, n_candidates, kept, gold_move, label, i
    cdef int n_moves = 0
    while True:
        gold_move, label = CARRIED, -1
        gold_hashes.resize((step + 1) * MAX_TEMPLATES)
        if not is_terminal(gold_state):
            features.extract(gold_state, &nodes[0, 0], &gold_hashes[step * MAX_TEMPLATES])
            gold_move = oracle(gold_state, system, &gold_heads[0], &gold_labels[0], &dependents[0], &label)
            if not is_legal(gold_state, system, gold_move):  # a tree the system cannot build
                gold_move, label = fallback(gold_state, system), -1
            hashed_rows(&gold_hashes[step * MAX_TEMPLATES], n_templates, 0, weights.move_buckets, rows)
            class_scores(weights.moves, rows, n_templates, N_MOVES, move_scores)
            gold_score += move_scores[gold_move]
            if label >= 0:
                _score_labels(&weights, &gold_hashes[step * MAX_TEMPLATES], gold_move)
                gold_score += weights.label_scores[label]
            n_moves += 1
        gold_moves.push_back(gold_move)
        gold_step_labels.push_back(label)
        n_candidates = _extend(beam, features, system, &nodes[0, 0], &weights, gold_move, label)
        if n_candidates == 0:
            break
        slot_hashes.insert(slot_hashes.end(), beam.hashes, beam.hashes + beam.size * MAX_TEMPLATES)
        slot_hashes.resize((step + 1) * width * MAX_TEMPLATES)
        kept = _keep_best(beam, n_candidates)
        for i in range(width):
            parents.push_back(beam.candidates[i].parent if i < kept else -1)
            moves.push_back(beam.candidates[i].move if i < kept else CARRIED)
            labels.push_back(beam.candidates[i].label if i < kept else -1)
        if not beam.candidates[0].gold:
            violation = beam.candidates[0].score - gold_score
            if violation >= worst:  # the latest step of the largest violation (a negative one is a search error)
                worst, worst_step = violation, step
        _advance(beam, kept, system)
        if gold_move != CARRIED:
            apply(gold_state, system, gold_move, label)
        step += 1
    wrong = (0, 0)
    if worst_step >= 0:
        wrong = _max_violation_update(move_model, label_model, worst_step, width, n_templates,
                                      gold_moves, gold_step_labels, gold_hashes, parents, moves, labels, slot_hashes)
    move_model.step += 1  # the averages count every sentence, updated or not
    label_model.step += 1
    return n_moves, wrong[0], wrong[1]


cdef void _add(AveragedPerceptron model, const uint64_t* hashes, int n_templates, uint64_t salt, int column,
               float delta):
    """delta on column of the rows of these hashes, and on the averaging totals."""
    cdef float[:, ::1] weights = model.emission
    cdef double[:, ::1] totals = model._emission_totals
    cdef uint64_t rows[MAX_TEMPLATES]
    cdef int j
    hashed_rows(hashes, n_templates, salt, model.n_buckets, rows)
    for j in range(n_templates):
        weights[rows[j], column] += delta
        totals[rows[j], column] += delta * model.step


cdef tuple _max_violation_update(AveragedPerceptron move_model, AveragedPerceptron label_model, int last, int width,
                                 int n_templates,
                                 vector[int32_t]& gold_moves, vector[int32_t]& gold_labels,
                                 vector[uint64_t]& gold_hashes,
                                 vector[int32_t]& parents, vector[int32_t]& moves, vector[int32_t]& labels,
                                 vector[uint64_t]& slot_hashes):
    """Add the oracle's moves and labels and subtract the best sequence's up to
    step last (its best is in slot 0); RETURNS how many of their moves and labels differ."""
    cdef int step, slot = 0, parent, move, label, wrong_moves = 0, wrong_labels = 0
    cdef const uint64_t* hashes
    for step in range(last, -1, -1):
        parent = parents[step * width + slot]
        move = moves[step * width + slot]
        label = labels[step * width + slot]
        wrong_moves += move != gold_moves[step]
        wrong_labels += label != gold_labels[step]
        if move != CARRIED:
            hashes = &slot_hashes[(step * width + parent) * MAX_TEMPLATES]
            _add(move_model, hashes, n_templates, 0, move, -1)
            if label >= 0:
                _add(label_model, hashes, n_templates, direction_salt(move), label, -1)
        if gold_moves[step] != CARRIED:
            hashes = &gold_hashes[step * MAX_TEMPLATES]
            _add(move_model, hashes, n_templates, 0, gold_moves[step], 1)
            if gold_labels[step] >= 0:
                _add(label_model, hashes, n_templates, direction_salt(gold_moves[step]), gold_labels[step], 1)
        slot = parent
    move_model._averages = None
    label_model._averages = None
    return wrong_moves, wrong_labels
