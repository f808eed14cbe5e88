from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t


# One doc's features into its rows of out_view (slots: mention_slots' scratch, or NULL for a short batch).
cdef void fill_document_features(const int32_t[::1] rows, const uint64_t[:, ::1] table, const int32_t[::1] mentions, int32_t* slots,
                                 const int32_t[::1] sentence, uint64_t n_buckets, uint32_t[:, :] out_view) noexcept
cdef int fill_history_features(const int32_t[::1] rows, const uint64_t[:, ::1] table, const int32_t[::1] mentions, int32_t* slots,
                               const int64_t[::1] types, int n_types, uint64_t n_buckets, uint32_t[:, :] out_view) except -1
