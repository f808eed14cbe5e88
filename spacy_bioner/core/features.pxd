cimport cython
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libcpp.unordered_map cimport unordered_map


@cython.final  # its row lookups are called directly, not through a table of methods
cdef class Lexicon:
    cdef unordered_map[uint64_t, int32_t] _rows
    cdef unordered_map[uint64_t, int32_t] _mentions
    cdef object _attributes
    cdef public object table
    cdef public object mention_ids  # int32 per row: equal for equal values of mention_column
    cdef int _mention_column
    cdef int _n_rows
    cdef int _max_size
    cdef readonly int generation  # counts restarts: row ids of one generation mean nothing in another

    cdef int fill_rows_and_mentions(self, list docs, Py_ssize_t n, bint lowercase_docs, int32_t* rows,
                                    int32_t* mentions) except -1
    cdef void _make_room(self, Py_ssize_t n)
    cdef int32_t _row(self, uint64_t orth, strings, bint lowercase) except -1
    cdef int32_t _add(self, uint64_t orth, str text, bint lowercase) except -1


cdef Py_ssize_t count_tokens(list docs) except -1
cdef int fill_layout(list docs, bint sentence_ends, int64_t* offsets, int32_t* sentence, uint8_t* starts,
                     uint8_t* spaces) except -1


cdef class FeatureExtractor:
    cdef readonly int n_buckets
    cdef readonly int n_features
    cdef int _max_parts
    # typed views, taken once here, not per call: for a sentence, taking four costs more than extracting
    cdef uint64_t[::1] _seeds
    cdef int32_t[:, ::1] _columns, _offsets
    cdef int32_t[::1] _n_parts
    cdef object _templates

    cdef void extract_rows(self, const int32_t* rows, const uint64_t* table, Py_ssize_t n_columns,
                           const int32_t* sentence, Py_ssize_t n, uint32_t* out, Py_ssize_t stride) noexcept nogil
