from libc.stdint cimport uint64_t, int32_t

from .transitions cimport State


cdef class StateFeatures:
    cdef readonly int n_templates
    cdef object _seeds_array, _parts_array
    cdef const uint64_t* _seeds
    cdef const int32_t* _parts   # n_templates x MAX_PARTS atom indices, -1 padded

    cdef void extract(self, const State* state, const uint64_t* nodes, uint64_t* hashes) noexcept nogil
