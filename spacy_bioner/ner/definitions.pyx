# cython: language_level=3
"""A short form's definition at a parenthesis, searched in C where its words are ASCII.

The same answer as long_forms.definition_at (Schwartz & Hearst's long-form search), without
a Python string per step: the short form's pieces and the words before the "(" are read as
their UTF-8 bytes, lowercased and searched in one buffer. Where one of them is not ASCII,
long_forms.definition_at answers: Unicode's case rules are Python's to apply.
tests/test_definitions.py holds the two to the same definitions over random words.
"""
from cpython.unicode cimport PyUnicode_AsUTF8AndSize, PyUnicode_GET_LENGTH
from libc.stdint cimport int32_t, uint64_t
from libcpp.string cimport string
from libcpp.vector cimport vector

from .long_forms import MAX_SHORT_FORM, MAX_SHORT_FORM_PIECES, ORTH_ENDS, ORTH_HYPHEN, definition_at

cdef uint64_t _ORTH_HYPHEN = ORTH_HYPHEN
cdef vector[uint64_t] _ORTH_ENDS = list(ORTH_ENDS)
cdef Py_ssize_t _MAX_SHORT_FORM = MAX_SHORT_FORM, _MAX_PIECES = MAX_SHORT_FORM_PIECES
cdef object _NOT_ASCII = object()


def definition_at_words(strings, orths, sentence, Py_ssize_t i):
    """long_forms.definition_at(strings, orths, sentence, i), searched in C where the words are ASCII."""
    cdef vector[uint64_t] orth_vector = orths
    cdef vector[int32_t] sentence_vector = sentence
    return definition_in_window(strings, orth_vector.data(), sentence_vector.data(), orth_vector.size(), i)


cdef object definition_in_window(strings, const uint64_t* orths, const int32_t* sentence, Py_ssize_t n,
                                 Py_ssize_t i):
    """The short form the "(" at word i of these n words defines, by its words' ORTH hashes, and its long
    form's span of words [start, end); None if it defines none. As long_forms.definition_at takes them:
    orths, each word's ORTH hash; sentence, each word's sentence number, nondecreasing."""
    found = _ascii_definition(strings, orths, sentence, n, i)
    if found is _NOT_ASCII:
        return definition_at(strings, [orths[k] for k in range(n)], [sentence[k] for k in range(n)], i)
    return found


cdef object _ascii_definition(strings, const uint64_t* orths, const int32_t* sentence, Py_ssize_t n, Py_ssize_t i):
    """definition_at's steps, in its order; _NOT_ASCII where a word it reads is not ASCII."""
    cdef Py_ssize_t end = i + 2, k, start, n_words
    while end + 1 < n and orths[end] == _ORTH_HYPHEN and end - i < 2 * _MAX_PIECES - 1:
        end += 2
    if i < 1 or end >= n or not closes(orths[end]):
        return None
    cdef string short
    for k in range(i + 1, end):
        if not _append_ascii(strings[orths[k]], &short, False):
            return _NOT_ASCII
    if not _is_short_form(short):
        return None
    start = max(0, i - _max_long_form_words(short.size()))
    while sentence[start] != sentence[i - 1]:  # sentence numbers never fall: the sentence's first word is ahead
        start += 1
    cdef vector[Py_ssize_t] word_ends  # each word's end in `text`, the words lowercased and joined by spaces
    cdef string text
    for k in range(start, i):
        if k > start:
            text.push_back(b" ")
        if not _append_ascii(strings[orths[k]], &text, True):
            return _NOT_ASCII
        word_ends.push_back(text.size())
    n_words = _long_form(short, text, word_ends)
    return (tuple([orths[k] for k in range(i + 1, end)]), (i - n_words, i)) if n_words else None


cdef int _append_ascii(str word, string* out, bint lower) except -1:
    """Append the word's characters to out (lowercased if `lower`); 0 if it is not ASCII."""
    cdef Py_ssize_t size, k
    cdef const char* data = PyUnicode_AsUTF8AndSize(word, &size)
    if size != PyUnicode_GET_LENGTH(word):  # a character took more than one byte
        return 0
    for k in range(size):
        out.push_back(_lower(data[k]) if lower else data[k])
    return 1


cdef inline char _lower(char c) noexcept nogil:
    return c + 32 if b"A" <= c <= b"Z" else c


cdef inline bint _is_alpha(char c) noexcept nogil:
    return b"a" <= c <= b"z" or b"A" <= c <= b"Z"


cdef inline bint _is_alnum(char c) noexcept nogil:
    return _is_alpha(c) or b"0" <= c <= b"9"


cdef bint closes(uint64_t orth) noexcept nogil:
    """Whether a word closes a short form (long_forms.ORTH_ENDS): ")", ";" or ","."""
    cdef uint64_t end
    for end in _ORTH_ENDS:
        if orth == end:
            return True
    return False


cdef bint _is_short_form(const string& short) noexcept nogil:
    """long_forms.is_short_form of ASCII text."""
    cdef bint upper = False, alpha = False
    cdef size_t k
    if not 2 <= short.size() <= _MAX_SHORT_FORM or not _is_alnum(short[0]):
        return False
    for k in range(short.size()):
        upper = upper or b"A" <= short[k] <= b"Z"
        alpha = alpha or _is_alpha(short[k])
    return upper and alpha


cdef inline Py_ssize_t _max_long_form_words(Py_ssize_t length) noexcept nogil:
    """long_forms.max_long_form_words."""
    return min(length + 5, 2 * length)


cdef Py_ssize_t _long_form(const string& short, const string& text, const vector[Py_ssize_t]& word_ends) noexcept:
    """long_forms.long_form of ASCII words (text: them lowercased, joined by spaces; word_ends: where each
    ends in it), which are no more than the short form allows: how many make its long form, 0 if none."""
    cdef Py_ssize_t position = text.size(), k, n_words = word_ends.size(), start
    cdef char c
    for k in range(<Py_ssize_t>short.size() - 1, -1, -1):
        c = _lower(short[k])
        if not _is_alnum(c):
            continue
        position = _rfind(text, c, position)
        while k == 0 and position > 0 and _is_alnum(text[position - 1]):
            position = _rfind(text, c, position)
        if position < 0:
            return 0
    # The fewest words that hold the match start at the word where the first letter's match is.
    for k in range(n_words):
        start = 0 if k == 0 else word_ends[k - 1] + 1
        if start == position:
            return n_words - k
    return 0


cdef inline Py_ssize_t _rfind(const string& text, char c, Py_ssize_t before) noexcept nogil:
    """The last position of c in text[:before], -1 if none (str.rfind(c, 0, before))."""
    cdef Py_ssize_t k = before - 1
    while k >= 0 and text[k] != c:
        k -= 1
    return k
