from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t


# One doc's tokens (or a batch's) as the fill functions read them.
cdef struct Tokens:
    const int32_t* rows  # each token's lexicon row
    const uint64_t* table  # the lexicon table, n_columns a row
    Py_ssize_t n_columns
    const int32_t* mentions  # each token's mention id (Lexicon.mention_ids)
    const int32_t* sentence  # each token's sentence number; unread by the history features
    Py_ssize_t n


# Features into the n rows of out, `stride` apart (slots: mention_slots' scratch, or NULL for a short batch):
# one doc's document and history features, a batch's short-form features. Types must lie in 0..n_types - 1.
cdef void fill_document_features(const Tokens* tokens, int32_t* slots, uint64_t n_buckets, uint32_t* out,
                                 Py_ssize_t stride) noexcept nogil
cdef void fill_history_features(const Tokens* tokens, int32_t* slots, const int64_t* types, int n_types,
                                uint64_t n_buckets, uint32_t* out, Py_ssize_t stride) noexcept nogil
cdef void fill_abbreviation_features(const Tokens* tokens, const int64_t* heads, uint64_t n_buckets, uint32_t* out,
                                     Py_ssize_t stride) noexcept nogil
cdef void fill_abbreviation_history(const int64_t* heads, const int64_t* types, Py_ssize_t n, uint64_t n_buckets,
                                    uint32_t* out, Py_ssize_t stride) noexcept nogil
