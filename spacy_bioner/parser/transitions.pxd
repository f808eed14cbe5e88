from libc.stdint cimport int32_t, uint64_t
from cymem.cymem cimport Pool

cdef enum:
    SHIFT = 0
    LEFT_ARC = 1
    RIGHT_ARC = 2
    REDUCE = 3
    NO_ARC = 4
    N_MOVES = 5

cdef enum:
    ARC_STANDARD = 0
    ARC_EAGER = 1
    COVINGTON = 2
    COVINGTON_PROJECTIVE = 3


cdef struct State:
    int n                  # words 1..n; node 0 is the root
    int* heads             # -1: no head yet
    int* labels            # label id of the arc into each node, -1 for none
    int* stack             # sigma (stack-based) or lambda1 (list-based), top last
    int stack_len
    int* buffer            # beta is buffer[buffer_start:n]
    int buffer_start
    int* skipped           # lambda2, its first element last
    int skipped_len
    int* left1             # each node's leftmost dependent, -1 for none
    int* left2             # second leftmost
    int* right1
    int* right2
    int* n_left            # dependents to the left / right
    int* n_right
    uint64_t* left_labels  # bit (label % 64) set for each left dependent's label
    uint64_t* right_labels
    int* component         # union-find parent, for the list-based acyclicity check


cdef State* new_state(Pool mem, int n) except NULL
cdef void reset_state(State* state, int n) noexcept nogil
cdef void copy_state(State* target, const State* source) noexcept nogil
cdef bint is_terminal(const State* state) noexcept nogil
cdef bint is_legal(const State* state, int system, int move) noexcept nogil
cdef int fallback(const State* state, int system) noexcept nogil
cdef void apply(State* state, int system, int move, int label) noexcept nogil
cdef int oracle(const State* state, int system, const int32_t* gold_heads, const int32_t* gold_labels,
                const int32_t* gold_dependents, int* label) noexcept nogil
cdef void attach_roots(State* state, int label) noexcept nogil
