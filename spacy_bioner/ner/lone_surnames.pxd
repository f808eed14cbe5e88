from libc.stdint cimport int32_t, int64_t, uint8_t
from libcpp.vector cimport vector


# lone_surnames over pointers: rows pushed to found, or with found NULL, whether there is one
cdef bint find_lone_surnames(const int32_t* tags, const int32_t* words, const int64_t* offsets, Py_ssize_t n_docs,
                             Py_ssize_t n, const uint8_t* continuing, const uint8_t* person, Py_ssize_t n_moves,
                             vector[int64_t]* found) noexcept nogil
