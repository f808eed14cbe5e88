from libc.stdint cimport int32_t, uint64_t


# long_forms.definition_at over n words: their ORTH hashes and sentence numbers, the "(" at word i.
cdef object definition_in_window(strings, const uint64_t* orths, const int32_t* sentence, Py_ssize_t n,
                                 Py_ssize_t i)

# Whether a word closes a short form: ")", ";" or ",".
cdef bint closes(uint64_t orth) noexcept nogil
