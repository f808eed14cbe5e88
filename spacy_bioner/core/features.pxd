from libc.stdint cimport int32_t, uint32_t, uint64_t


cdef class FeatureExtractor:
    cdef readonly int n_buckets
    cdef readonly int n_features
    cdef int _max_parts
    cdef object _seeds, _columns, _offsets, _n_parts
    cdef object _templates

    cdef int extract_into(self, const int32_t[::1] rows, const uint64_t[:, ::1] table, const int32_t[::1] sentence,
                          uint32_t[:, :] out_view) except -1
