from libc.stdint cimport int32_t, int64_t, uint8_t
from libcpp.vector cimport vector


# name_list_parts over pointers: rows pushed to entities and parts, or with entities NULL, whether there is one
cdef bint find_name_lists(const int64_t* names, Py_ssize_t row_stride, Py_ssize_t end_stride,
                          Py_ssize_t n_names, const int32_t* tags, Py_ssize_t n, const uint8_t* continuing,
                          vector[int64_t]* entities, vector[int64_t]* parts) noexcept nogil
