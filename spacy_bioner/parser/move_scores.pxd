# Scoring a configuration's moves and arc labels, shared by greedy.pyx and beam.pyx.
from libc.stdint cimport uint64_t

from ..core.prefetch cimport prefetch_row
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


cdef inline void hashed_rows(const uint64_t* hashes, int n, uint64_t salt, uint64_t n_buckets,
                             uint64_t* rows) noexcept nogil:
    """The table rows of a configuration's feature hashes; a salt gives the label model's rows for one arc direction.
    Tables of a power of two rows (the configs') take a mask: a 64-bit division per row costs more than the rest."""
    cdef int j
    cdef uint64_t h, mask = n_buckets - 1
    cdef bint masked = (n_buckets & mask) == 0
    for j in range(n):
        h = (hashes[j] ^ salt) * 0x9e3779b97f4a7c15ULL if salt else hashes[j]
        rows[j] = h & mask if masked else h % n_buckets


# Rows are looked up this many ahead of their use (core/prefetch.pxd).
cdef enum:
    PREFETCH_DISTANCE = 8


cdef inline int class_scores(const float* weights, const uint64_t* rows, int n_rows, int n_classes,
                             float* scores) noexcept nogil:
    """Each class's score in scores; RETURNS the best class."""
    cdef int j, c, best = 0
    cdef const float* row
    for j in range(PREFETCH_DISTANCE if PREFETCH_DISTANCE < n_rows else n_rows):
        prefetch_row(weights + rows[j] * n_classes, n_classes)
    for c in range(n_classes):
        scores[c] = 0
    for j in range(n_rows):
        if j + PREFETCH_DISTANCE < n_rows:
            prefetch_row(weights + rows[j + PREFETCH_DISTANCE] * n_classes, n_classes)
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
