from libc.stdint cimport int32_t, uint64_t


cdef class WeightRows:
    cdef readonly object index  # int32[n_buckets]: each bucket's row of the table
    cdef readonly object table  # float32[n_rows, n_tags]: row 0 is zeros, then each bucket row that is not
    cdef const int32_t* _index
    cdef const float* _table
    cdef readonly int n_tags


cdef inline const float* weight_row(WeightRows weights, uint64_t bucket) noexcept nogil:
    """The weights of a bucket (a hashed feature id), n_tags floats."""
    return weights._table + <size_t>weights._index[bucket] * weights.n_tags
