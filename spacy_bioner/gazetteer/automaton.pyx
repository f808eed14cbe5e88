# cython: language_level=3
"""Multi-token terms -> an Aho-Corasick automaton whose alphabet is word ids.

A term of n words is a path of n edges from the root, one per word id, so the
automaton takes one step per token. Its edges live in one open-addressing hash
table keyed by (node, word); each node holds its failure link, the key it ends,
and the first node on its failure chain that ends a key (its output link).
Everything is built from the term keys when the tables compile, and only read
by TokenEncoder.match.

A byte-level automaton over the words' codes took four steps a token and scanned
a node's children one by one; on CoNLL text against 1.2M place names it spent
half the matching time there.
"""
from libc.stdint cimport int32_t, int64_t, uint64_t

import numpy

cdef enum:
    WORD_BITS = 24  # word ids are below BASE ** CODE_LENGTH = 2 ** 24 (token_codes)
    FIRST_DIGIT = 0x100
    BASE = 64
    CODE_LENGTH = 4

cdef uint64_t EMPTY = 0xFFFFFFFFFFFFFFFF
cdef uint64_t MIX = 0x9E3779B97F4A7C15  # Fibonacci hashing: spreads (node, word) keys over the table


cdef inline uint64_t _edge_key(int32_t node, int64_t word) noexcept nogil:
    return (<uint64_t>node << WORD_BITS) | <uint64_t>word


cdef class WordAutomaton:
    """The automaton of a gazetteer's multi-token keys.

    keys (dict[str, int]): key string (the words' codes, token_codes.word_code) -> key id.
    """

    def __init__(self, dict keys):
        cdef Py_ssize_t n_edges = sum(len(key) for key in keys) // CODE_LENGTH
        cdef int bits = 4
        while (1 << bits) < 2 * n_edges + 2:  # at most half full: probes stay short
            bits += 1
        self.shift = 64 - bits
        self.mask = (1 << bits) - 1
        self.edge_keys.assign(1 << bits, EMPTY)
        self.edge_children.assign(1 << bits, 0)
        parents = numpy.zeros(n_edges + 1, dtype=numpy.int32)
        words = numpy.zeros(n_edges + 1, dtype=numpy.int64)
        depths = numpy.zeros(n_edges + 1, dtype=numpy.int32)
        n_nodes = self._add_keys(keys, parents, words, depths)
        # Breadth first: a node's failure link is shallower than the node, so it is set first.
        order = numpy.argsort(depths[:n_nodes], kind="stable").astype(numpy.int32)
        self._link(order, parents, words)

    cdef int32_t _add_keys(self, dict keys, int32_t[::1] parents, int64_t[::1] words, int32_t[::1] depths) except -1:
        """The trie of the keys; RETURNS the number of nodes (the root is node 0)."""
        cdef Node empty
        empty.fail, empty.key, empty.output = 0, -1, -1
        self.nodes.assign(1, empty)
        cdef int32_t node, child
        cdef int64_t word
        cdef Py_ssize_t i, digit
        cdef str key
        for key, key_id in keys.items():
            if len(key) == 0 or len(key) % CODE_LENGTH:
                raise ValueError(f"Gazetteer key of {len(key)} characters: not a whole number of word codes.")
            node = 0
            for i in range(0, len(key), CODE_LENGTH):
                word = 0
                for digit in range(CODE_LENGTH):
                    word = word * BASE + (<int64_t>ord(key[i + digit]) - FIRST_DIGIT - BASE * digit)
                child = self.step(node, word)
                if child < 0:
                    child = self.nodes.size()
                    self.nodes.push_back(empty)
                    self._insert(node, word, child)
                    parents[child], words[child], depths[child] = node, word, depths[node] + 1
                node = child
            self.nodes[node].key = key_id
        return self.nodes.size()

    cdef void _insert(self, int32_t node, int64_t word, int32_t child) noexcept nogil:
        cdef uint64_t key = _edge_key(node, word)
        cdef uint64_t slot = (key * MIX) >> self.shift
        while self.edge_keys[slot] != EMPTY:
            slot = (slot + 1) & self.mask
        self.edge_keys[slot] = key
        self.edge_children[slot] = child

    cdef void _link(self, const int32_t[::1] order, const int32_t[::1] parents, const int64_t[::1] words) noexcept:
        cdef Py_ssize_t k
        cdef int32_t node, state, next_state
        for k in range(order.shape[0]):
            node = order[k]
            if node == 0 or parents[node] == 0:
                continue  # the root and its children fail to the root
            state = self.nodes[parents[node]].fail
            next_state = self.step(state, words[node])
            while next_state < 0 and state != 0:
                state = self.nodes[state].fail
                next_state = self.step(state, words[node])
            state = self.nodes[node].fail = next_state if next_state > 0 else 0
            self.nodes[node].output = state if self.nodes[state].key >= 0 else self.nodes[state].output

    cdef int32_t step(self, int32_t node, int64_t word) noexcept nogil:
        """The child of a node along a word, -1 if none."""
        cdef uint64_t key = _edge_key(node, word)
        cdef uint64_t slot = (key * MIX) >> self.shift
        while self.edge_keys[slot] != EMPTY:
            if self.edge_keys[slot] == key:
                return self.edge_children[slot]
            slot = (slot + 1) & self.mask
        return -1

    cdef int32_t advance(self, int32_t state, int64_t word, int32_t root_child) noexcept nogil:
        """The state after a word: the node of the longest key prefix that ends the words read so far.
        root_child: step(0, word), which callers cache, as most words are read at the root."""
        cdef int32_t next_state
        while state != 0:
            next_state = self.step(state, word)
            if next_state >= 0:
                return next_state
            state = self.nodes[state].fail
        return root_child if root_child > 0 else 0

    def __len__(self) -> int:
        """The number of nodes, the root included."""
        return self.nodes.size()
