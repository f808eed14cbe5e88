from libc.stdint cimport int32_t, int64_t, uint64_t
from libcpp.vector cimport vector


cdef struct Node:
    int32_t fail  # the node of its longest proper suffix in the trie
    int32_t key  # the key id of the term it ends, or -1
    int32_t output  # the next node on its failure chain that ends a key, or -1


cdef class WordAutomaton:
    cdef int shift
    cdef uint64_t mask
    cdef vector[uint64_t] edge_keys  # open addressing: (node << WORD_BITS | word), EMPTY where free
    cdef vector[int32_t] edge_children  # the child node of each edge
    cdef vector[Node] nodes

    cdef int32_t _add_keys(self, dict keys, int32_t[::1] parents, int64_t[::1] words, int32_t[::1] depths) except -1
    cdef void _insert(self, int32_t node, int64_t word, int32_t child) noexcept nogil
    cdef void _link(self, const int32_t[::1] order, const int32_t[::1] parents, const int64_t[::1] words) noexcept
    cdef int32_t step(self, int32_t node, int64_t word) noexcept nogil
    cdef int32_t advance(self, int32_t state, int64_t word, int32_t root_child) noexcept nogil
