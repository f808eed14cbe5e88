from libc.stdint cimport int32_t, int64_t, uint64_t
from libcpp.vector cimport vector
from spacy.tokens.doc cimport Doc

from .automaton cimport WordAutomaton


cdef struct MatchRow:  # laid out as a row of match's int64 (n, 4) array
    int64_t start, end, label, kb


cdef struct Word:
    int64_t id  # word id, UNKNOWN or SPACE
    int32_t unit_key  # the key of the one-token term of this word, or -1
    int32_t root_child  # the automaton's node of a key that begins with this word, or -1
    bint in_phrase  # whether a multi-token term has this word


cdef struct WordCell:
    uint64_t orth  # the word form's hash; 0 where the cell is free
    Word word


cdef struct Entries:  # the compiled term tables, as matching reads them
    const int64_t* offsets  # per key id, where its entries start (one more than the keys)
    const int32_t* labels  # per entry
    const int32_t* kbs  # per entry
    const int32_t* key_tokens  # per key id, its tokens
    Py_ssize_t n_entries


cdef class TokenEncoder:
    cdef vector[WordCell] _cells  # open addressing by form, at most half full: a token costs one probe
    cdef size_t _n_words
    cdef int _shift  # a form's first cell: (orth * MIX) >> _shift
    cdef object _word_id
    cdef size_t _max_size
    cdef Entries _entries
    cdef object _entries_of  # (entries, key_tokens) of the tables _entries points into; None before any

    cdef int _point_at(self, tuple entries, key_tokens) except -1

    cdef WordCell* _cell(self, uint64_t orth) noexcept nogil
    cdef Word _new_word(self, Doc doc, Py_ssize_t i, tables, WordAutomaton automaton) except *
    cdef void _grow(self) noexcept
    cdef int find_rows(self, docs, tables, const int64_t* relabel, vector[MatchRow]& rows) except -1


cdef object rows_array(const vector[MatchRow]& rows)
cdef void fill_match_codes(const MatchRow* rows, Py_ssize_t n_matches, Py_ssize_t n_labels,
                           Py_ssize_t* codes) noexcept
