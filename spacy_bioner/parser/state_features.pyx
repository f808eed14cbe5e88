# cython: language_level=3
"""What the parser looks at: atoms of a configuration and the feature templates over them.

An atom is one fact about the configuration (the tag of the stack's top, the
label of its leftmost dependent, the distance to the buffer's front...). A
template is a conjunction of atoms; each is hashed to a 64-bit feature. The
templates follow Zhang & Nivre (2011): words and tags, pairs and triples,
distance, valency, the dependents built so far and their labels.
Positions: s0..s2 are the stack's (or lambda1's) top three, n0..n2 the
buffer's first three; h is a head, lc1/lc2 the leftmost dependents, rc1/rc2
the rightmost.
"""
import numpy
from libc.stdint cimport uint64_t, int32_t
from spacy.strings import get_string_id

from .transitions cimport State

ATOMS = (
    "s0w", "s0t", "s1w", "s1t", "s2t", "n0w", "n0t", "n1w", "n1t", "n2w", "n2t",
    "s0hw", "s0ht", "s0l", "s0h2w", "s0h2t", "s0hl",
    "s0lc1w", "s0lc1t", "s0lc1l", "s0rc1w", "s0rc1t", "s0rc1l", "n0lc1w", "n0lc1t", "n0lc1l",
    "s0lc2w", "s0lc2t", "s0lc2l", "s0rc2w", "s0rc2t", "s0rc2l", "n0lc2w", "n0lc2t", "n0lc2l",
    "dist", "s0vl", "s0vr", "n0vl", "s0lset", "s0rset", "n0lset",
    "s0s", "n0s", "n1s",
)
cdef enum:
    N_ATOMS = 45
    MAX_PARTS = 4
    # The columns of a node's values (see training.py's NODE_ATTRIBUTES).
    WORD = 0
    TAG = 1
    SUFFIX = 2
    N_COLUMNS = 3

TEMPLATES = (
    # single words
    ("s0w", "s0t"), ("s0w",), ("s0t",), ("n0w", "n0t"), ("n0w",), ("n0t",),
    ("n1w", "n1t"), ("n1w",), ("n1t",), ("n2w", "n2t"), ("n2w",), ("n2t",),
    ("s1w", "s1t"), ("s1w",), ("s1t",),
    # pairs
    ("s0w", "s0t", "n0w", "n0t"), ("s0w", "s0t", "n0w"), ("s0w", "n0w", "n0t"), ("s0w", "s0t", "n0t"),
    ("s0t", "n0w", "n0t"), ("s0w", "n0w"), ("s0t", "n0t"), ("n0t", "n1t"), ("s1t", "s0t"), ("s1w", "s0w"),
    # triples
    ("n0t", "n1t", "n2t"), ("s0t", "n0t", "n1t"), ("s0ht", "s0t", "n0t"), ("s0t", "s0lc1t", "n0t"),
    ("s0t", "s0rc1t", "n0t"), ("s0t", "n0t", "n0lc1t"), ("s1t", "s0t", "n0t"), ("s2t", "s1t", "s0t"),
    # distance
    ("s0w", "dist"), ("s0t", "dist"), ("n0w", "dist"), ("n0t", "dist"), ("s0w", "n0w", "dist"), ("s0t", "n0t", "dist"),
    # valency
    ("s0w", "s0vr"), ("s0t", "s0vr"), ("s0w", "s0vl"), ("s0t", "s0vl"), ("n0w", "n0vl"), ("n0t", "n0vl"),
    # the arcs built so far
    ("s0hw",), ("s0ht",), ("s0l",), ("s0lc1w",), ("s0lc1t",), ("s0lc1l",), ("s0rc1w",), ("s0rc1t",), ("s0rc1l",),
    ("n0lc1w",), ("n0lc1t",), ("n0lc1l",),
    ("s0h2w",), ("s0h2t",), ("s0hl",), ("s0lc2w",), ("s0lc2t",), ("s0lc2l",), ("s0rc2w",), ("s0rc2t",), ("s0rc2l",),
    ("n0lc2w",), ("n0lc2t",), ("n0lc2l",),
    ("s0t", "s0lc1t", "s0lc2t"), ("s0t", "s0rc1t", "s0rc2t"), ("s0t", "s0ht", "s0h2t"), ("n0t", "n0lc1t", "n0lc2t"),
    # suffixes: what a wrong tag leaves of the word's class
    ("s0s",), ("n0s",), ("n1s",), ("s0s", "n0s"), ("s0t", "n0s"), ("s0s", "n0t"),
    # label sets
    ("s0w", "s0rset"), ("s0t", "s0rset"), ("s0w", "s0lset"), ("s0t", "s0lset"), ("n0w", "n0lset"), ("n0t", "n0lset"),
)

# Atom values for a missing node and a missing label; real values are hashes or small counts + 2.
cdef uint64_t _NONE = 1
cdef uint64_t _NO_LABEL = 1


cdef inline uint64_t mix(uint64_t h) noexcept nogil:
    # splitmix64's finalizer: every input bit reaches every output bit.
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL
    return h ^ (h >> 31)


cdef inline uint64_t _label(const State* s, int node) noexcept nogil:
    if node < 0:
        return _NONE
    return _NO_LABEL + 1 + <uint64_t>s.labels[node] if s.labels[node] >= 0 else _NO_LABEL


cdef inline int _at(const int* array, int node) noexcept nogil:
    return array[node] if node >= 0 else -1


cdef inline uint64_t _bucket(int value) noexcept nogil:
    """Small counts grouped: 0-4 as they are, then 5-9, then 10 and more."""
    return 2 + <uint64_t>(value if value < 5 else (5 if value < 10 else 6))


cdef class StateFeatures:
    """The templates compiled to atom indices, and their hashing."""

    def __init__(self):
        self.n_templates = len(TEMPLATES)
        index = {name: i for i, name in enumerate(ATOMS)}
        assert len(ATOMS) == N_ATOMS
        self._seeds_array = numpy.array([get_string_id("parser:" + "+".join(t)) for t in TEMPLATES], dtype=numpy.uint64)
        parts = numpy.full((len(TEMPLATES), MAX_PARTS), -1, dtype=numpy.int32)
        for j, template in enumerate(TEMPLATES):
            parts[j, : len(template)] = [index[name] for name in template]
        self._parts_array = parts
        cdef const uint64_t[::1] seeds = self._seeds_array
        cdef const int32_t[:, ::1] parts_view = self._parts_array
        self._seeds = &seeds[0]
        self._parts = &parts_view[0, 0]

    def __reduce__(self):
        return (StateFeatures, ())

    cdef void extract(self, const State* s, const uint64_t* nodes, uint64_t* hashes) noexcept nogil:
        """The 64-bit hash of every template for this configuration.

        nodes: (word, tag, suffix) of each node 0..n, row by row (node 0 holds the root's own values).
        """
        cdef uint64_t atoms[N_ATOMS]
        cdef int s0 = s.stack[s.stack_len - 1] if s.stack_len > 0 else -1
        cdef int s1 = s.stack[s.stack_len - 2] if s.stack_len > 1 else -1
        cdef int s2 = s.stack[s.stack_len - 3] if s.stack_len > 2 else -1
        cdef int n0 = s.buffer[s.buffer_start] if s.buffer_start < s.n else -1
        cdef int n1 = s.buffer[s.buffer_start + 1] if s.buffer_start + 1 < s.n else -1
        cdef int n2 = s.buffer[s.buffer_start + 2] if s.buffer_start + 2 < s.n else -1
        cdef int s0h = _at(s.heads, s0)
        cdef int s0h2 = _at(s.heads, s0h)
        cdef int s0lc1 = _at(s.left1, s0), s0rc1 = _at(s.right1, s0), n0lc1 = _at(s.left1, n0)
        cdef int s0lc2 = _at(s.left2, s0), s0rc2 = _at(s.right2, s0), n0lc2 = _at(s.left2, n0)
        cdef int[14] positions = [s0, s1, s2, n0, n1, n2, s0h, s0h2, s0lc1, s0rc1, n0lc1, s0lc2, s0rc2, n0lc2]
        cdef uint64_t[14] word, tag
        cdef int k, j, p, a
        for k in range(14):
            word[k] = nodes[positions[k] * N_COLUMNS + WORD] if positions[k] >= 0 else _NONE
            tag[k] = nodes[positions[k] * N_COLUMNS + TAG] if positions[k] >= 0 else _NONE
        # Each position's word, tag and (for the arcs) label, in the templates' order
        atoms[0] = word[0]
        atoms[1] = tag[0]
        atoms[2] = word[1]
        atoms[3] = tag[1]
        atoms[4] = tag[2]
        atoms[5] = word[3]
        atoms[6] = tag[3]
        atoms[7] = word[4]
        atoms[8] = tag[4]
        atoms[9] = word[5]
        atoms[10] = tag[5]
        atoms[11] = word[6]
        atoms[12] = tag[6]
        atoms[13] = _label(s, s0)
        atoms[14] = word[7]
        atoms[15] = tag[7]
        atoms[16] = _label(s, s0h)
        atoms[17] = word[8]
        atoms[18] = tag[8]
        atoms[19] = _label(s, s0lc1)
        atoms[20] = word[9]
        atoms[21] = tag[9]
        atoms[22] = _label(s, s0rc1)
        atoms[23] = word[10]
        atoms[24] = tag[10]
        atoms[25] = _label(s, n0lc1)
        atoms[26] = word[11]
        atoms[27] = tag[11]
        atoms[28] = _label(s, s0lc2)
        atoms[29] = word[12]
        atoms[30] = tag[12]
        atoms[31] = _label(s, s0rc2)
        atoms[32] = word[13]
        atoms[33] = tag[13]
        atoms[34] = _label(s, n0lc2)
        atoms[35] = _bucket(n0 - s0 if n0 > s0 else s0 - n0) if s0 >= 0 and n0 >= 0 else _NONE
        atoms[36] = _bucket(s.n_left[s0]) if s0 >= 0 else _NONE
        atoms[37] = _bucket(s.n_right[s0]) if s0 >= 0 else _NONE
        atoms[38] = _bucket(s.n_left[n0]) if n0 >= 0 else _NONE
        atoms[39] = mix(s.left_labels[s0] + 2) if s0 >= 0 else _NONE
        atoms[40] = mix(s.right_labels[s0] + 2) if s0 >= 0 else _NONE
        atoms[41] = mix(s.left_labels[n0] + 2) if n0 >= 0 else _NONE
        atoms[42] = nodes[s0 * N_COLUMNS + SUFFIX] if s0 >= 0 else _NONE
        atoms[43] = nodes[n0 * N_COLUMNS + SUFFIX] if n0 >= 0 else _NONE
        atoms[44] = nodes[n1 * N_COLUMNS + SUFFIX] if n1 >= 0 else _NONE
        cdef uint64_t h
        for j in range(self.n_templates):
            h = self._seeds[j]
            for p in range(MAX_PARTS):
                a = self._parts[j * MAX_PARTS + p]
                if a < 0:
                    break
                h = mix(h ^ atoms[a])
            hashes[j] = h
