# cython: language_level=3
"""The four transition systems of Nivre (2008): configurations, moves with
their preconditions, and static oracles.

A configuration holds the nodes 0..n (0 is the root) in a stack (or, for the
list-based systems, the list lambda1 plus the skipped list lambda2), a buffer
and the arcs built so far. Every system ends when the buffer is empty; nodes
still without a head are then attached to the root, so the output is a tree.
"""
from cymem.cymem cimport Pool
from libc.stdint cimport int32_t, uint64_t
from libc.string cimport memcpy

SYSTEMS = {
    "arc-standard": ARC_STANDARD,
    "arc-eager": ARC_EAGER,
    "covington": COVINGTON,
    "covington-projective": COVINGTON_PROJECTIVE,
}
PROJECTIVE_SYSTEMS = ("arc-standard", "arc-eager", "covington-projective")
MOVE_NAMES = ("SHIFT", "LEFT-ARC", "RIGHT-ARC", "REDUCE", "NO-ARC")  # in move id order
MOVES = {name: move for move, name in enumerate(MOVE_NAMES)}
SYSTEM_MOVES = {
    "arc-standard": ("SHIFT", "LEFT-ARC", "RIGHT-ARC"),
    "arc-eager": ("SHIFT", "LEFT-ARC", "RIGHT-ARC", "REDUCE"),
    "covington": ("SHIFT", "LEFT-ARC", "RIGHT-ARC", "NO-ARC"),
    "covington-projective": ("SHIFT", "LEFT-ARC", "RIGHT-ARC", "NO-ARC"),
}


cdef State* new_state(Pool mem, int n) except NULL:
    """The initial configuration: ([0], [1..n], no arcs). reset_state reuses it for up to n words."""
    cdef State* state = <State*>mem.alloc(1, sizeof(State))
    cdef int size = n + 1
    state.heads = <int*>mem.alloc(size, sizeof(int))
    state.labels = <int*>mem.alloc(size, sizeof(int))
    state.stack = <int*>mem.alloc(size, sizeof(int))
    state.buffer = <int*>mem.alloc(size, sizeof(int))
    state.skipped = <int*>mem.alloc(size, sizeof(int))
    state.left1 = <int*>mem.alloc(size, sizeof(int))
    state.left2 = <int*>mem.alloc(size, sizeof(int))
    state.right1 = <int*>mem.alloc(size, sizeof(int))
    state.right2 = <int*>mem.alloc(size, sizeof(int))
    state.n_left = <int*>mem.alloc(size, sizeof(int))
    state.n_right = <int*>mem.alloc(size, sizeof(int))
    state.left_labels = <uint64_t*>mem.alloc(size, sizeof(uint64_t))
    state.right_labels = <uint64_t*>mem.alloc(size, sizeof(uint64_t))
    state.component = <int*>mem.alloc(size, sizeof(int))
    reset_state(state, n)
    return state


cdef void reset_state(State* state, int n) noexcept nogil:
    """The initial configuration of n words, in a state from new_state of at least n."""
    cdef int size = n + 1, i
    state.n = n
    for i in range(size):
        state.heads[i] = state.labels[i] = -1
        state.left1[i] = state.left2[i] = state.right1[i] = state.right2[i] = -1
        state.n_left[i] = state.n_right[i] = 0
        state.left_labels[i] = state.right_labels[i] = 0
        state.component[i] = i
    for i in range(n):
        state.buffer[i] = i + 1
    state.stack[0] = 0
    state.stack_len = 1
    state.buffer_start = 0
    state.skipped_len = 0


cdef void copy_state(State* target, const State* source) noexcept nogil:
    """Make target (a state of the same n, from new_state) a copy of source."""
    cdef size_t ints = (source.n + 1) * sizeof(int), masks = (source.n + 1) * sizeof(uint64_t)
    target.n = source.n
    target.stack_len = source.stack_len
    target.buffer_start = source.buffer_start
    target.skipped_len = source.skipped_len
    memcpy(target.heads, source.heads, ints)
    memcpy(target.labels, source.labels, ints)
    memcpy(target.stack, source.stack, ints)
    memcpy(target.buffer, source.buffer, ints)
    memcpy(target.skipped, source.skipped, ints)
    memcpy(target.left1, source.left1, ints)
    memcpy(target.left2, source.left2, ints)
    memcpy(target.right1, source.right1, ints)
    memcpy(target.right2, source.right2, ints)
    memcpy(target.n_left, source.n_left, ints)
    memcpy(target.n_right, source.n_right, ints)
    memcpy(target.left_labels, source.left_labels, masks)
    memcpy(target.right_labels, source.right_labels, masks)
    memcpy(target.component, source.component, ints)


cdef inline int _top(const State* state) noexcept nogil:
    return state.stack[state.stack_len - 1] if state.stack_len > 0 else -1


cdef inline int _front(const State* state) noexcept nogil:
    return state.buffer[state.buffer_start] if state.buffer_start < state.n else -1


cdef inline int _find(int* component, int node) noexcept nogil:
    while component[node] != node:
        component[node] = component[component[node]]  # path halving
        node = component[node]
    return node


cdef inline bint _connected(const State* state, int a, int b) noexcept nogil:
    return _find(state.component, a) == _find(state.component, b)


cdef bint is_terminal(const State* state) noexcept nogil:
    return state.buffer_start >= state.n


cdef bint is_legal(const State* state, int system, int move) noexcept nogil:
    if is_terminal(state):
        return False
    cdef int i = _top(state), j = _front(state)
    if move == SHIFT:
        return True
    if i < 0:
        return False
    if system == ARC_STANDARD:
        if move == LEFT_ARC:
            return i != 0 and state.heads[i] == -1
        if move == RIGHT_ARC:
            return j != 0 and state.heads[j] == -1
        return False
    if system == ARC_EAGER:
        if move == LEFT_ARC:
            return i != 0 and state.heads[i] == -1
        if move == RIGHT_ARC:
            return state.heads[j] == -1
        if move == REDUCE:
            return state.heads[i] != -1
        return False
    # The list-based systems: arcs keep the graph acyclic (union-find).
    if move == LEFT_ARC:
        return i != 0 and state.heads[i] == -1 and not _connected(state, i, j)
    if move == RIGHT_ARC:
        return state.heads[j] == -1 and not _connected(state, i, j)
    if move == NO_ARC:
        # The projective variant may not skip a node without a head: an arc
        # from beyond it would cross the one being skipped over.
        return system == COVINGTON or state.heads[i] != -1
    return False


cdef int fallback(const State* state, int system) noexcept nogil:
    """The default transition for an illegal choice: SHIFT, or NO-ARC for the list-based systems."""
    if (system == COVINGTON or system == COVINGTON_PROJECTIVE) and is_legal(state, system, NO_ARC):
        return NO_ARC
    return SHIFT


cdef void _add_arc(State* state, int head, int dependent, int label) noexcept nogil:
    state.heads[dependent] = head
    state.labels[dependent] = label
    cdef uint64_t bit = (<uint64_t>1) << (label & 63) if label >= 0 else 0
    if dependent < head:
        state.n_left[head] += 1
        state.left_labels[head] |= bit
        if state.left1[head] == -1 or dependent < state.left1[head]:
            state.left2[head] = state.left1[head]
            state.left1[head] = dependent
        elif state.left2[head] == -1 or dependent < state.left2[head]:
            state.left2[head] = dependent
    else:
        state.n_right[head] += 1
        state.right_labels[head] |= bit
        if state.right1[head] == -1 or dependent > state.right1[head]:
            state.right2[head] = state.right1[head]
            state.right1[head] = dependent
        elif state.right2[head] == -1 or dependent > state.right2[head]:
            state.right2[head] = dependent
    state.component[_find(state.component, dependent)] = _find(state.component, head)


cdef inline void _skip_top(State* state) noexcept nogil:
    """Move lambda1's last node to the front of lambda2."""
    state.stack_len -= 1
    state.skipped[state.skipped_len] = state.stack[state.stack_len]
    state.skipped_len += 1


cdef void apply(State* state, int system, int move, int label) noexcept nogil:
    """Apply a legal move (check with is_legal first)."""
    cdef int i = _top(state), j = _front(state), k
    cdef bint list_based = system == COVINGTON or system == COVINGTON_PROJECTIVE
    if move == SHIFT:
        if list_based:  # lambda1 . lambda2 | j
            for k in range(state.skipped_len - 1, -1, -1):
                state.stack[state.stack_len] = state.skipped[k]
                state.stack_len += 1
            state.skipped_len = 0
        state.stack[state.stack_len] = j
        state.stack_len += 1
        state.buffer_start += 1
    elif move == LEFT_ARC:
        _add_arc(state, j, i, label)
        if system == COVINGTON:
            _skip_top(state)
        else:
            state.stack_len -= 1
            if system == COVINGTON_PROJECTIVE:
                state.skipped_len = 0
    elif move == RIGHT_ARC:
        _add_arc(state, i, j, label)
        if system == ARC_STANDARD:  # the head goes back to the buffer
            state.stack_len -= 1
            state.buffer[state.buffer_start] = i
        elif system == COVINGTON:
            _skip_top(state)
        else:
            state.stack[state.stack_len] = j
            state.stack_len += 1
            state.buffer_start += 1
            if system == COVINGTON_PROJECTIVE:
                state.skipped_len = 0
    elif move == REDUCE:
        state.stack_len -= 1
    elif move == NO_ARC:
        _skip_top(state)


cdef inline bint _gold_arc(const int32_t* gold_heads, int a, int b) noexcept nogil:
    return gold_heads[a] == b or gold_heads[b] == a


cdef int oracle(const State* state, int system, const int32_t* gold_heads, const int32_t* gold_labels,
                const int32_t* gold_dependents, int* label) noexcept nogil:
    """The move that leads to the gold tree (static oracle); its label in label[0].

    gold_dependents: each node's number of dependents in the gold tree.
    The move may be illegal when the gold tree is beyond the system (a
    non-projective tree for a projective system): callers fall back.
    """
    cdef int i = _top(state), j = _front(state), k
    label[0] = -1
    if i >= 0 and i != 0 and state.heads[i] == -1 and gold_heads[i] == j:
        label[0] = gold_labels[i]
        return LEFT_ARC
    if system == ARC_STANDARD:
        if i >= 0 and j != 0 and gold_heads[j] == i and state.n_left[j] + state.n_right[j] == gold_dependents[j]:
            label[0] = gold_labels[j]
            return RIGHT_ARC
        return SHIFT
    if i >= 0 and gold_heads[j] == i:
        label[0] = gold_labels[j]
        return RIGHT_ARC
    if i < 0:
        return SHIFT
    # Arc-eager reduces, the list-based systems skip, while a node further down still has an arc with j.
    for k in range(state.stack_len - 1):
        if _gold_arc(gold_heads, state.stack[k], j):
            return REDUCE if system == ARC_EAGER else NO_ARC
    return SHIFT


cdef void attach_roots(State* state, int label) noexcept nogil:
    """Attach every node still without a head to the root."""
    cdef int k
    for k in range(1, state.n + 1):
        if state.heads[k] == -1:
            _add_arc(state, 0, k, label)


def _system_id(system):
    if system not in SYSTEMS:
        raise ValueError(f"Unknown transition system {system!r}: use one of {sorted(SYSTEMS)}.")
    return SYSTEMS[system]


cdef class Configuration:
    """A configuration of one sentence of n words, for inspecting the systems from Python.

    n (int): Number of words (nodes 1..n; 0 is the root).
    system (str): One of SYSTEMS.
    """
    cdef Pool mem
    cdef State* state
    cdef readonly int system_id
    cdef readonly str system

    def __init__(self, int n, str system="arc-eager"):
        if n < 0:
            raise ValueError(f"n must be >= 0, got {n}")
        self.system_id = _system_id(system)
        self.system = system
        self.mem = Pool()
        self.state = new_state(self.mem, n)

    @property
    def heads(self):
        """Head of each node 0..n, -1 where none."""
        return [self.state.heads[k] for k in range(self.state.n + 1)]

    @property
    def labels(self):
        return [self.state.labels[k] for k in range(self.state.n + 1)]

    @property
    def stack(self):
        """sigma, or lambda1 for the list-based systems; the top last."""
        return [self.state.stack[k] for k in range(self.state.stack_len)]

    @property
    def skipped(self):
        """lambda2 (list-based systems), first element first."""
        return [self.state.skipped[k] for k in range(self.state.skipped_len - 1, -1, -1)]

    @property
    def buffer(self):
        return [self.state.buffer[k] for k in range(self.state.buffer_start, self.state.n)]

    def is_terminal(self):
        return is_terminal(self.state)

    def is_legal(self, move):
        return is_legal(self.state, self.system_id, _move_id(move))

    def legal_moves(self):
        return [name for name in SYSTEM_MOVES[self.system] if is_legal(self.state, self.system_id, MOVES[name])]

    def fallback(self):
        return MOVE_NAMES[fallback(self.state, self.system_id)]

    def apply(self, move, int label=0):
        """Apply a move ("SHIFT", "LEFT-ARC", ...) with the label of the arc it adds."""
        cdef int move_id = _move_id(move)
        if MOVE_NAMES[move_id] not in SYSTEM_MOVES[self.system] or not is_legal(self.state, self.system_id, move_id):
            raise ValueError(f"{MOVE_NAMES[move_id]} is not legal here in {self.system} "
                             f"(stack {self.stack}, buffer {self.buffer})")
        apply(self.state, self.system_id, move_id, label)

    def oracle(self, gold_heads, gold_labels):
        """(move, label) the static oracle takes towards the gold tree (lists over nodes 0..n, head -1 for the root)."""
        cdef int label = -1
        heads, labels, dependents = _gold_arrays(gold_heads, gold_labels, self.state.n)
        cdef int32_t[::1] h = heads, lab = labels, d = dependents
        move = oracle(self.state, self.system_id, &h[0], &lab[0], &d[0], &label)
        return MOVE_NAMES[move], label

    def attach_roots(self, int label=0):
        attach_roots(self.state, label)


def _move_id(move):
    if isinstance(move, str):
        if move not in MOVES:
            raise ValueError(f"Unknown move {move!r}: use one of {MOVE_NAMES}.")
        return MOVES[move]
    return int(move)


def _gold_arrays(gold_heads, gold_labels, int n):
    import numpy
    heads = numpy.asarray(gold_heads, dtype=numpy.int32)
    labels = numpy.asarray(gold_labels, dtype=numpy.int32)
    if heads.shape != (n + 1,) or labels.shape != (n + 1,):
        raise ValueError(f"gold heads and labels must have n + 1 = {n + 1} entries (node 0 first)")
    dependents = numpy.bincount(heads[1:], minlength=n + 1).astype(numpy.int32) if n else numpy.zeros(1,
                                                                                                      dtype=numpy.int32)
    return heads, labels, dependents


def oracle_transitions(gold_heads, gold_labels, str system="arc-eager"):
    """The oracle's moves for a gold tree, and the configuration they end in.

    Where the oracle's move is illegal (a tree the system cannot build), the
    default transition is taken, as the parser does.
    RETURNS (Tuple[List[Tuple[str, int]], Configuration])
    """
    n = len(gold_heads) - 1
    config = Configuration(n, system)
    moves = []
    while not config.is_terminal():
        move, label = config.oracle(gold_heads, gold_labels)
        if not config.is_legal(move):
            move, label = config.fallback(), -1
        config.apply(move, label)
        moves.append((move, label))
    return moves, config
