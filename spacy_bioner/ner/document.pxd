from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t


# Features into the rows of out_view (slots: mention_slots' scratch, or NULL for a short batch): one doc's
# document and history features, a batch's short-form features. Types must lie in 0..n_types - 1.
cdef void fill_document_features(const int32_t[::1] rows, const uint64_t[:, ::1] table, const int32_t[::1] mentions,
                                 int32_t* slots, const int32_t[::1] sentence, uint64_t n_buckets,
                                 uint32_t[:, :] out_view) noexcept nogil
cdef void fill_history_features(const int32_t[::1] rows, const uint64_t[:, ::1] table, const int32_t[::1] mentions,
                                int32_t* slots, const int64_t[::1] types, int n_types, uint64_t n_buckets,
                                uint32_t[:, :] out_view) noexcept nogil
cdef void fill_abbreviation_features(const int32_t[::1] rows, const uint64_t[:, ::1] table, const int64_t[::1] heads,
                                     uint64_t n_buckets, uint32_t[:, :] out_view) noexcept nogil
cdef void fill_abbreviation_history(const int64_t[::1] heads, const int64_t[::1] types, uint64_t n_buckets,
                                    uint32_t[:, :] out_view) noexcept nogil
