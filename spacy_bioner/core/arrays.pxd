# Arrays made and read through numpy's C API. For a sentence, numpy.empty and a typed
# memoryview each cost more than the loop that fills the array; these cost a tenth.
# A module that cimports them calls numpy.import_array() (Cython does so for it).
cimport numpy as cnp


cdef inline cnp.ndarray new_array(Py_ssize_t n, int typenum, bint zeroed=False):
    """A 1-d array of n items of a numpy type number (cnp.NPY_INT32, ...)."""
    cdef cnp.npy_intp dims[1]
    dims[0] = n
    return cnp.PyArray_ZEROS(1, dims, typenum, 0) if zeroed else cnp.PyArray_EMPTY(1, dims, typenum, 0)


cdef inline cnp.ndarray new_matrix(Py_ssize_t n, Py_ssize_t m, int typenum, bint zeroed=False):
    """A C-ordered (n, m) array of a numpy type number."""
    cdef cnp.npy_intp dims[2]
    dims[0], dims[1] = n, m
    return cnp.PyArray_ZEROS(2, dims, typenum, 0) if zeroed else cnp.PyArray_EMPTY(2, dims, typenum, 0)


cdef inline void* data_of(cnp.ndarray array) noexcept:
    """Where an array's items begin (of one this module made: C-ordered, aligned)."""
    return cnp.PyArray_DATA(array)


cdef inline const void* items_of(cnp.ndarray array, int typenum, Py_ssize_t n) except NULL:
    """Where the items of a C-ordered array of this type and at least n items begin; ValueError otherwise."""
    if cnp.PyArray_TYPE(array) != typenum or not cnp.PyArray_IS_C_CONTIGUOUS(array) or cnp.PyArray_SIZE(array) < n:
        raise ValueError(f"expected a C-ordered array of {n} or more items of numpy type number {typenum}, "
                         f"got {array.dtype} of shape {(<object>array).shape}")
    return cnp.PyArray_DATA(array)
