# cython: language_level=3
"""Rules, person_labels: where a doc may use the surname of a person it names in full.

`lone_surnames` finds, over a batch's decoded tags, each token whose word ends a
person entity of two words or more in the same doc, and which is untagged or a
one-word entity of another label. surnames.py then checks the token's text and
its neighbours and relabels it.
"""
from cython.operator cimport dereference as deref
from libc.stdint cimport int32_t, int64_t, uint8_t
from libcpp.algorithm cimport lower_bound, sort
from libcpp.utility cimport pair
from libcpp.vector cimport vector

import numpy

ctypedef pair[int32_t, Py_ssize_t] WordAt


def lone_surnames(const int32_t[::1] tags, const int32_t[::1] words, const int64_t[::1] offsets,
                  const uint8_t[::1] continuing, const uint8_t[::1] person, Py_ssize_t n_moves):
    """The tokens that may be a lone surname, and the label of the full name it would take.

    tags (int32[n]): The decoded tags, docs laid end to end (a valid sequence).
    words (int32[n]): An id per token, equal for equal word forms (the lexicon rows).
    offsets (int64[n_docs + 1]): Where each doc starts, and the end.
    continuing, person (bool[n_tags]): Whether each tag continues an entity; is a person label's.
    n_moves (int): The scheme's moves per label (a tag's label is (tag - 1) // n_moves).
    RETURNS (int64[k, 2]): Rows of (batch position, label of the doc's first full name ending in
        that word), in order.
    """
    cdef Py_ssize_t n = tags.shape[0]
    if words.shape[0] != n or offsets.shape[0] < 1 or offsets[offsets.shape[0] - 1] != n:
        raise ValueError(f"words and offsets must cover the {n} tags")
    cdef vector[int64_t] found
    if n:
        find_lone_surnames(&tags[0], &words[0], &offsets[0], offsets.shape[0] - 1, n, &continuing[0], &person[0],
                           n_moves, &found)
    return numpy.array(found, dtype=numpy.int64).reshape(-1, 2)


cdef inline bint _ends_entity(const int32_t* tags, const uint8_t* continuing, Py_ssize_t i,
                              Py_ssize_t n) noexcept nogil:
    """Whether token i is tagged and the token after it (none past the batch's end) does not continue it."""
    return tags[i] > 0 and not (i + 1 < n and continuing[tags[i + 1]])


cdef bint find_lone_surnames(const int32_t* tags, const int32_t* words, const int64_t* offsets, Py_ssize_t n_docs,
                             Py_ssize_t n, const uint8_t* continuing, const uint8_t* person, Py_ssize_t n_moves,
                             vector[int64_t]* found) noexcept nogil:
    """lone_surnames over pointers; found: where to push its rows, or NULL to stop at the first.
    Returns whether it found one."""
    cdef vector[WordAt] surnames  # (word, position) of each full name's last token in the doc
    cdef vector[WordAt].iterator first
    cdef Py_ssize_t d, i
    cdef bint any_found = False
    for d in range(n_docs):
        surnames.clear()
        for i in range(offsets[d], offsets[d + 1]):
            if _ends_entity(tags, continuing, i, n) and continuing[tags[i]] and person[tags[i]]:
                surnames.push_back(WordAt(words[i], i))
        if surnames.empty():
            continue
        sort(surnames.begin(), surnames.end())
        for i in range(offsets[d], offsets[d + 1]):
            if not (tags[i] == 0 or (_ends_entity(tags, continuing, i, n) and not continuing[tags[i]]
                                     and not person[tags[i]])):
                continue  # not open to a surname's label
            first = lower_bound(surnames.begin(), surnames.end(), WordAt(words[i], -1))
            if first != surnames.end() and deref(first).first == words[i]:
                if found == NULL:
                    return True
                any_found = True
                found.push_back(i)
                found.push_back((tags[deref(first).second] - 1) // n_moves)
    return any_found
