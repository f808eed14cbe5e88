from libc.stdint cimport int32_t, uint8_t


cdef struct ShortFormFlags:  # what short_form_docs reads by lexicon row, and its settings
    const uint8_t* initials
    const uint8_t* capitals
    const uint8_t* long_enough
    bint acronyms
    Py_ssize_t max_letters
    uint8_t skipped


cdef list screen_letters(list docs, const uint8_t* is_space, frozenset first_words)
cdef tuple screen_short_forms(list docs, const int32_t* rows, const uint8_t* is_space, const int32_t* sentence,
                              const ShortFormFlags* flags)
