# Scoring a configuration's moves and arc labels, and the perceptron step; shared by greedy.pyx and beam.pyx.
from libc.stdint cimport uint64_t

from ..perceptron cimport AveragedPerceptron
from .state_features cimport StateFeatures
from .transitions cimport ARC_EAGER, COVINGTON, COVINGTON_PROJECTIVE, LEFT_ARC, N_MOVES, REDUCE, RIGHT_ARC, SHIFT

cdef enum:
    MAX_TEMPLATES = 128

cdef inline bint has_move(int system, int move) noexcept nogil:
    if move == SHIFT or move == LEFT_ARC or move == RIGHT_ARC:
        return True
    if move == REDUCE:
        return system == ARC_EAGER
    return system == COVINGTON or system == COVINGTON_PROJECTIVE


cdef inline void hashed_rows(const uint64_t* hashes, int n, uint64_t salt, uint64_t n_buckets, uint64_t* rows) noexcept nogil:
    """The table rows of a configuration's feature hashes; a salt gives the label model's rows for one arc direction."""
    cdef int j
    for j in range(n):
        rows[j] = ((hashes[j] ^ salt) * 0x9e3779b97f4a7c15ULL) % n_buckets if salt else hashes[j] % n_buckets


cdef inline int class_scores(const float* weights, const uint64_t* rows, int n_rows, int n_classes, float* scores) noexcept nogil:
    """Each class's score in scores; RETURNS the best class."""
    cdef int j, c, best = 0
    cdef const float* row
    for c in range(n_classes):
        scores[c] = 0
    for j in range(n_rows):
        row = weights + rows[j] * n_classes
        for c in range(n_classes):
            scores[c] += row[c]
    for c in range(1, n_classes):
        if scores[c] > scores[best]:
            best = c
    return best


cdef inline uint64_t direction_salt(int move) noexcept nogil:
    return 1 if move == LEFT_ARC else 2


cdef inline int checked_templates(StateFeatures features) except -1:
    """The number of templates, which the loops' fixed-size arrays must hold."""
    if features.n_templates > MAX_TEMPLATES:
        raise ValueError(f"At most {MAX_TEMPLATES} templates, got {features.n_templates}")
    return features.n_templates


cdef inline void perceptron_step(AveragedPerceptron model, const uint64_t* rows, int n_rows, int gold, int guess):
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
