from libc.stdint cimport int32_t, uint8_t, uint64_t

from .weight_rows cimport WeightRows


# Where a WordScores' vectors are, for `gather` to read without the GIL.
cdef struct WordVectors:
    const float* rows  # per lexicon row, n_offsets vectors of n_tags
    const float* fixed  # the bias, then each offset's padding vector
    int min_offset, n_offsets, n_tags


cdef class WordScores:
    cdef uint64_t[::1] _bias_seeds
    cdef uint64_t[::1] _seeds
    cdef int32_t[:, ::1] _columns  # each template's columns, _n_parts of them
    cdef int32_t[::1] _n_parts
    cdef int32_t[::1] _slots  # each template's offset, as an index into the offsets
    cdef readonly int min_offset, n_offsets
    cdef uint64_t n_buckets
    cdef object _weights
    # per lexicon row: each offset's vector, and whether they are worked out; kept as views, taken once
    cdef float[:, :, ::1] _cache
    cdef uint8_t[::1] _filled
    cdef float[:, ::1] _fixed  # the bias, then each offset's padding vector
    cdef int _generation
    cdef object _templates

    cpdef scores(self, const int32_t[::1] rows, const uint64_t[:, ::1] table, const int32_t[::1] sentence,
                 WeightRows weights, int generation)
    cdef tuple fill(self, const int32_t* rows, Py_ssize_t n, const uint64_t* table, Py_ssize_t n_columns,
                    WeightRows weights, int generation, WordVectors* vectors)
    cdef void _fill(self, const uint64_t* attributes, WeightRows weights, float* vectors) noexcept nogil

cdef void gather(const WordVectors* vectors, const int32_t* rows, const int32_t* sentence, Py_ssize_t n,
                 float* out) noexcept nogil
