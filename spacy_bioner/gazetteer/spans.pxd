cimport cython
from libc.stdint cimport uint64_t
from libcpp.vector cimport vector
from spacy.strings cimport StringStore
from spacy.tokens.doc cimport Doc
from spacy.tokens.span_group cimport SpanGroup

from .token_codes cimport MatchRow


cdef struct Known:
    uint64_t value  # in the StringStore
    uint64_t generation  # of a KEPT value: the pool generation it was added in
    char kind  # UNSEEN, SYMBOL, KEPT or ADDED


@cython.final
cdef class Interned:
    cdef list strings
    cdef vector[Known] known
    cdef object pool  # the permanent memory pool of the store last used
    cdef uint64_t generation  # counts the pools seen

    cdef uint64_t value(self, StringStore store, Py_ssize_t index) except? 0


cdef int fill_group(Doc doc, SpanGroup group, const MatchRow* rows, Py_ssize_t n, Interned labels,
                    Interned kb_ids) except -1
cdef int write_rows(Doc doc, const MatchRow* rows, Py_ssize_t n, Interned labels, Interned kb_ids,
                    bint keep_entities) except -1
cdef void kept_rows(const MatchRow* rows, Py_ssize_t n, bint longest_first, vector[MatchRow]& kept) noexcept
