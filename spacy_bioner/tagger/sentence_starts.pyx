# cython: language_level=3
"""Sentence starts after sentence-final punctuation: spaCy's sentencizer rule over the docs' token arrays.

A doc's first token starts a sentence, and so does the first token after a sentence-final
character ("." "!" "?" and the like) that is neither punctuation nor such a character: in
'It rained. " Then it stopped', the second sentence starts at "Then", not at the quote.
This is what spaCy's `Sentencizer.predict` decides, but spaCy reads each token through a
Python `Token`, which costs more than tagging it; these loops read `TokenC` and the
lexeme's flags. tests/test_sentencizer.py holds them to spaCy's sentencizer over random docs.
"""
from libc.stdint cimport uint8_t, uint64_t
from libc.string cimport memset
from libcpp.algorithm cimport binary_search
from libcpp.vector cimport vector
from spacy.attrs cimport IS_PUNCT
from spacy.lexeme cimport Lexeme
from spacy.structs cimport TokenC
from spacy.tokens.doc cimport Doc

import numpy

cdef enum:
    FILTER_BITS = 4096  # a bit per value of an orth's low 12 bits: few tokens share one with a final character
    FILTER_BYTES = 512  # FILTER_BITS / 8


def sentence_starts(docs, const uint64_t[::1] final_orths) -> list:
    """Each doc's sentence starts (bool[len(doc)]), the docs left as they are.

    final_orths (uint64[k]): The orth ids of the sentence-final characters, sorted.
    """
    _check_sorted(final_orths)
    cdef uint8_t finals_filter[FILTER_BYTES]
    _fill_filter(final_orths, finals_filter)
    cdef Doc doc
    cdef uint8_t[::1] view
    out = []
    for doc in docs:
        starts = numpy.zeros(doc.length, dtype=numpy.bool_)
        if doc.length:
            view = starts.view(numpy.uint8)
            _fill_starts(doc.c, doc.length, final_orths, finals_filter, &view[0])
        out.append(starts)
    return out


def set_sentence_starts(docs, const uint64_t[::1] final_orths, bint overwrite) -> None:
    """Write each doc's sentence starts (`sentence_starts`) to its tokens: to those whose start is
    unset, or to every token with `overwrite`, as spaCy's `Sentencizer.set_annotations` does."""
    _check_sorted(final_orths)
    cdef uint8_t finals_filter[FILTER_BYTES]
    _fill_filter(final_orths, finals_filter)
    cdef vector[uint8_t] starts
    cdef Doc doc
    cdef int i
    for doc in docs:
        if not doc.length:
            continue
        starts.resize(doc.length)
        _fill_starts(doc.c, doc.length, final_orths, finals_filter, starts.data())
        for i in range(doc.length):
            if overwrite or doc.c[i].sent_start == 0:
                doc.c[i].sent_start = 1 if starts[i] else -1


cdef int _check_sorted(const uint64_t[::1] orths) except -1:
    cdef Py_ssize_t k
    for k in range(1, orths.shape[0]):
        if orths[k - 1] > orths[k]:
            raise ValueError("final_orths must be sorted")
    return 0


cdef void _fill_filter(const uint64_t[::1] finals, uint8_t* finals_filter) noexcept nogil:
    """A bit set for each final character's orth (its low bits): a token whose bit is clear is no final
    character, and most tokens are told so without the search."""
    cdef Py_ssize_t k
    cdef uint64_t bit
    memset(finals_filter, 0, FILTER_BYTES)
    for k in range(finals.shape[0]):
        bit = finals[k] & (FILTER_BITS - 1)
        finals_filter[bit >> 3] |= 1 << (bit & 7)


cdef void _fill_starts(const TokenC* tokens, int n, const uint64_t[::1] finals, const uint8_t* finals_filter,
                       uint8_t* starts) noexcept nogil:
    """starts[i] = 1 where token i starts a sentence (finals: the sentence-final characters' orths, sorted;
    finals_filter: their bits, _fill_filter)."""
    cdef bint seen_final = False, is_final
    cdef int i
    cdef uint64_t orth, bit
    cdef const uint64_t* first = &finals[0] if finals.shape[0] else NULL
    cdef const uint64_t* last = first + finals.shape[0]
    for i in range(n):
        starts[i] = i == 0
        orth = tokens[i].lex.orth
        bit = orth & (FILTER_BITS - 1)
        is_final = (finals_filter[bit >> 3] >> (bit & 7)) & 1 and binary_search(first, last, orth)
        if seen_final and not is_final and not Lexeme.c_check_flag(tokens[i].lex, IS_PUNCT):
            starts[i] = 1
            seen_final = False
        elif is_final:
            seen_final = True
