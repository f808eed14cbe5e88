# cython: language_level=3
"""Match rows -> spaCy spans: overlapping matches filtered, and span groups filled
without a Python `Span` per match.

`Span(doc, start, end)` makes two Token objects to find its characters. A long
document matched against a large term list has hundreds of matches, and making
their Spans cost more than finding them. Here a SpanGroup is filled with span
structs read straight from the doc's tokens, as spaCy's own Cython fills them.
"""
from libc.stdint cimport int64_t, uint64_t
from libcpp.algorithm cimport stable_sort
from libcpp.vector cimport vector
from spacy.structs cimport SpanC
from spacy.tokens.doc cimport Doc
from spacy.tokens.span_group cimport SpanGroup

import numpy


def span_group(Doc doc, str name, rows, const uint64_t[::1] label_hashes, const uint64_t[::1] kb_hashes):
    """A SpanGroup of a doc's match rows (start, end, label, kb id); label_hashes and kb_hashes
    are the StringStore hashes of the gazetteer's labels and KB ids, by index."""
    cdef const int64_t[:, :] matches = numpy.asarray(rows, dtype=numpy.int64).reshape(-1, 4)
    cdef SpanGroup group = SpanGroup(doc, name=name)
    cdef SpanC span
    cdef Py_ssize_t k
    for k in range(matches.shape[0]):
        span.start, span.end = matches[k, 0], matches[k, 1]
        if not 0 <= span.start < span.end <= doc.length:
            raise ValueError(f"Match ({span.start}, {span.end}) does not lie in a doc of {doc.length} tokens.")
        span.start_char = doc.c[span.start].idx
        span.end_char = doc.c[span.end - 1].idx + doc.c[span.end - 1].lex.length
        span.label, span.kb_id, span.id = label_hashes[matches[k, 2]], kb_hashes[matches[k, 3]], 0
        group.push_back(span)
    return group


cdef struct Ranked:
    int64_t first, second, row


cdef bint _ranked_before(const Ranked& a, const Ranked& b) noexcept nogil:
    return a.first < b.first or (a.first == b.first and a.second < b.second)


cdef bint _starts_before(const Ranked& a, const Ranked& b) noexcept nogil:
    return a.second < b.second


def non_overlapping(rows, bint longest_first):
    """The rows (start, end, ...) that overlap no row taken before them, taken leftmost first then
    longest, or longest first then leftmost; ties in their order in `rows`. RETURNS the kept rows, by start."""
    cdef const int64_t[:, :] matches = numpy.asarray(rows, dtype=numpy.int64).reshape(-1, 4)
    cdef vector[Ranked] order, kept
    cdef Ranked item
    cdef Py_ssize_t k, i, n_tokens = 0
    cdef int64_t length
    for k in range(matches.shape[0]):
        length = matches[k, 1] - matches[k, 0]
        if longest_first:
            item.first, item.second = -length, matches[k, 0]
        else:
            item.first, item.second = matches[k, 0], -length
        item.row = k
        order.push_back(item)
        n_tokens = max(n_tokens, matches[k, 1])
    stable_sort(order.begin(), order.end(), _ranked_before)
    cdef vector[char] taken = vector[char](n_tokens, 0)
    cdef bint free
    for item in order:
        free = True
        for i in range(matches[item.row, 0], matches[item.row, 1]):
            if taken[i]:
                free = False
                break
        if free:
            for i in range(matches[item.row, 0], matches[item.row, 1]):
                taken[i] = 1
            item.second = matches[item.row, 0]  # kept ones are disjoint: their starts order them
            kept.push_back(item)
    stable_sort(kept.begin(), kept.end(), _starts_before)
    return numpy.asarray(matches)[[item.row for item in kept]].reshape(-1, 4)
