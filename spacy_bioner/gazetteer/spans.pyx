# cython: language_level=3
"""Match rows -> spaCy spans and entities: overlapping matches filtered, span groups
filled and entities written without a Python `Span` per match.

`Span(doc, start, end)` makes two Token objects to find its characters. A long
document matched against a large term list has hundreds of matches, and making
their Spans cost more than finding them. Here a SpanGroup is filled with span
structs read straight from the doc's tokens, as spaCy's own Cython fills them,
and entities go straight into the tokens, as `Doc.set_ents` writes them.

The work is done on MatchRow arrays (token_codes.pxd), so that the component's
one compiled call (gazetteer/doc_pass.pyx) runs every step without an array
between them; the `def` functions are the same steps on int64 (n, 4) rows.
"""
from libc.stdint cimport int64_t, uint64_t
from libc.string cimport memcpy
from libcpp.algorithm cimport stable_sort
from libcpp.vector cimport vector
from spacy.strings cimport StringStore, hash_string
from spacy.structs cimport SpanC
from spacy.tokens.doc cimport Doc
from spacy.tokens.span_group cimport SpanGroup

from .token_codes cimport MatchRow, rows_array

import numpy

cdef extern from *:
    void _prefetch "__builtin_prefetch"(const void* address) noexcept nogil

cdef enum:
    PREFETCH_AHEAD = 8  # rows: a row's KB id record is fetched while earlier rows are filled

cdef enum:
    MISSING, INSIDE, OUTSIDE, BEGIN  # spaCy's ENT_IOB codes
    UNSEEN, SYMBOL, KEPT, ADDED  # how an Interned string's value is known


cdef class Interned:
    """A growing list of strings (a gazetteer's labels or KB ids) and their StringStore values,
    each added to a doc's StringStore when first used with it, as `Span(label=..., kb_id=...)` adds
    them. A value is found once, so a match's strings cost no Python call. A string added outside a
    memory zone stays in its store for as long as the store keeps its memory pool, so it is kept
    for that pool and costs no lookup either; one added inside a zone may be dropped with the zone,
    and a C lookup checks that the store still holds it (a store may also be another vocab's)."""
    def __init__(self, list strings):
        self.strings = strings  # appended to by the gazetteer's tables; never reordered

    cdef uint64_t value(self, StringStore store, Py_ssize_t index) except? 0:
        cdef Known unseen
        if not 0 <= index < <Py_ssize_t>self.known.size():
            if not 0 <= index < len(self.strings):
                raise IndexError(f"No string {index}: there are {len(self.strings)}.")
            unseen.value, unseen.generation, unseen.kind = 0, 0, UNSEEN
            self.known.resize(len(self.strings), unseen)
        if store._non_temp_mem is not self.pool:
            self.pool = store._non_temp_mem
            self.generation += 1
        cdef Known* string_of = &self.known[index]
        if string_of.kind == SYMBOL:
            return string_of.value  # spaCy's symbols (and "", 0) are in no store's map
        if string_of.kind == KEPT and string_of.generation == self.generation:
            return string_of.value
        if string_of.kind == ADDED and store._map.get(string_of.value) != NULL:
            return string_of.value
        string = self.strings[index]
        string_of.value = store.add(string)
        if not string or string_of.value != hash_string(string):
            string_of.kind = SYMBOL
        elif store.mem is store._non_temp_mem:  # outside a memory zone: kept with the pool
            string_of.kind, string_of.generation = KEPT, self.generation
        else:
            string_of.kind = ADDED
        return string_of.value

    def values_of(self, StringStore store, indices) -> numpy.ndarray:
        """uint64, the store's value of each of these strings (by index), added to it if new."""
        cdef const int64_t[::1] wanted = numpy.ascontiguousarray(indices, dtype=numpy.int64)
        found = numpy.empty(wanted.shape[0], dtype=numpy.uint64)
        cdef uint64_t[::1] out = found
        cdef Py_ssize_t k
        for k in range(wanted.shape[0]):
            out[k] = self.value(store, wanted[k])
        return found


cdef inline uint64_t _value(Interned strings, StringStore store, Py_ssize_t index) except? 0:
    """strings.value(store, index), with its common case inlined: a value known for this store's pool."""
    cdef const Known* string_of
    if 0 <= index < <Py_ssize_t>strings.known.size() and store._non_temp_mem is strings.pool:
        string_of = &strings.known[index]
        if string_of.kind == SYMBOL or (string_of.kind == KEPT and string_of.generation == strings.generation):
            return string_of.value
    return strings.value(store, index)


cdef inline int _check_row(Doc doc, const MatchRow& row) except -1:
    if not 0 <= row.start < row.end <= doc.length:
        raise ValueError(f"Match ({row.start}, {row.end}) does not lie in a doc of {doc.length} tokens.")
    return 0


cdef const MatchRow* _rows_of(rows, vector[MatchRow]& copy) except *:
    """int64 (n, 4) rows as MatchRows (copied into `copy`, which holds them)."""
    cdef const int64_t[:, ::1] matches = numpy.ascontiguousarray(rows, dtype=numpy.int64).reshape(-1, 4)
    copy.resize(matches.shape[0])
    if matches.shape[0]:
        memcpy(copy.data(), &matches[0, 0], matches.shape[0] * sizeof(MatchRow))
    return copy.data()


cdef int fill_group(Doc doc, SpanGroup group, const MatchRow* rows, Py_ssize_t n, Interned labels,
                    Interned kb_ids) except -1:
    """Append a span to the group for each row, as `Span(doc, start, end, label=..., kb_id=...)` makes it."""
    cdef StringStore store = doc.vocab.strings
    cdef SpanC span
    cdef Py_ssize_t k
    group.c.reserve(group.c.size() + n)
    for k in range(n):
        if k + PREFETCH_AHEAD < n and 0 <= rows[k + PREFETCH_AHEAD].kb < <Py_ssize_t>kb_ids.known.size():
            _prefetch(&kb_ids.known[rows[k + PREFETCH_AHEAD].kb])  # a large list's KB ids miss the cache
        _check_row(doc, rows[k])
        span.start, span.end = rows[k].start, rows[k].end
        span.start_char = doc.c[span.start].idx
        span.end_char = doc.c[span.end - 1].idx + doc.c[span.end - 1].lex.length
        span.label, span.kb_id, span.id = _value(labels, store, rows[k].label), _value(kb_ids, store, rows[k].kb), 0
        group.push_back(span)
    return 0


def span_group(Doc doc, str name, rows, Interned labels, Interned kb_ids):
    """A SpanGroup of a doc's match rows (start, end, label, kb id), each span as
    `Span(doc, start, end, label=labels[label], kb_id=kb_ids[kb id])` makes it."""
    cdef vector[MatchRow] copy
    cdef const MatchRow* matches = _rows_of(rows, copy)
    cdef SpanGroup group = SpanGroup(doc, name=name)
    fill_group(doc, group, matches, copy.size(), labels, kb_ids)
    return group


cdef int write_rows(Doc doc, const MatchRow* rows, Py_ssize_t n, Interned labels, Interned kb_ids,
                    bint keep_entities) except -1:
    """`write_ents` on MatchRows."""
    cdef StringStore store = doc.vocab.strings
    cdef vector[char] taken = vector[char](doc.length, 0)
    cdef Py_ssize_t i, k
    cdef bint in_entity = False, free
    if keep_entities:  # the tokens of doc.ents
        for i in range(doc.length):
            if doc.c[i].ent_iob == INSIDE and not in_entity:
                doc.ents  # an I that follows no B: spaCy's own error (E093)
            if doc.c[i].ent_iob == BEGIN:
                in_entity = doc.c[i].ent_type != 0
            elif doc.c[i].ent_iob != INSIDE:
                in_entity = False
            taken[i] = in_entity
    for k in range(n):
        _check_row(doc, rows[k])
        free = True
        for i in range(rows[k].start, rows[k].end):
            free = free and not taken[i]
        if not free:
            continue
        for i in range(rows[k].start, rows[k].end):
            doc.c[i].ent_iob = BEGIN if i == rows[k].start else INSIDE
            doc.c[i].ent_type = _value(labels, store, rows[k].label)
            doc.c[i].ent_kb_id = _value(kb_ids, store, rows[k].kb)
            taken[i] = True
    for i in range(doc.length - 1):  # as set_ents: an I after no entity, or after another type, begins one
        if doc.c[i + 1].ent_iob == INSIDE and (doc.c[i].ent_iob in (MISSING, OUTSIDE)
                                               or doc.c[i].ent_type != doc.c[i + 1].ent_type):
            doc.c[i + 1].ent_iob = BEGIN
    return 0


def write_ents(Doc doc, rows, Interned labels, Interned kb_ids, bint keep_entities):
    """Write match rows (start, end, label, kb id) to the doc's entities, as
    `doc.set_ents(spans, default="unmodified")` writes them: other tokens keep their values.
    A row that overlaps one written before it is left out (filter them first: non_overlapping).
    keep_entities: leave out the rows that overlap an entity the doc has; else they replace
    the tokens they cover, and what is left of such an entity stays an entity."""
    cdef vector[MatchRow] copy
    cdef const MatchRow* matches = _rows_of(rows, copy)
    write_rows(doc, matches, copy.size(), labels, kb_ids, keep_entities)


cdef struct Ranked:
    int64_t first, second, row


cdef bint _ranked_before(const Ranked& a, const Ranked& b) noexcept nogil:
    return a.first < b.first or (a.first == b.first and a.second < b.second)


cdef bint _starts_before(const Ranked& a, const Ranked& b) noexcept nogil:
    return a.second < b.second


def non_overlapping(rows, bint longest_first):
    """The rows (start, end, ...) that overlap no row taken before them, taken leftmost first then
    longest, or longest first then leftmost; ties in their order in `rows`. RETURNS the kept rows, by start."""
    cdef vector[MatchRow] copy, kept
    cdef const MatchRow* matches = _rows_of(rows, copy)
    kept_rows(matches, copy.size(), longest_first, kept)
    return rows_array(kept)


cdef void kept_rows(const MatchRow* rows, Py_ssize_t n, bint longest_first, vector[MatchRow]& kept) noexcept:
    """`non_overlapping` on MatchRows: the kept ones go to `kept`, by start."""
    kept.clear()
    if not longest_first and _by_start_then_length(rows, n):  # as Gazetteer.match gives them
        _leftmost_longest(rows, n, kept)
        return
    cdef vector[Ranked] order, chosen
    cdef Ranked item
    cdef Py_ssize_t k, i, n_tokens = 0
    cdef int64_t length
    for k in range(n):
        length = rows[k].end - rows[k].start
        if longest_first:
            item.first, item.second = -length, rows[k].start
        else:
            item.first, item.second = rows[k].start, -length
        item.row = k
        order.push_back(item)
        n_tokens = max(n_tokens, rows[k].end)
    stable_sort(order.begin(), order.end(), _ranked_before)
    cdef vector[char] taken = vector[char](n_tokens, 0)
    cdef bint free
    for item in order:
        free = True
        for i in range(rows[item.row].start, rows[item.row].end):
            if taken[i]:
                free = False
                break
        if free:
            for i in range(rows[item.row].start, rows[item.row].end):
                taken[i] = 1
            item.second = rows[item.row].start  # kept ones are disjoint: their starts order them
            chosen.push_back(item)
    stable_sort(chosen.begin(), chosen.end(), _starts_before)
    for item in chosen:
        kept.push_back(rows[item.row])


cdef bint _by_start_then_length(const MatchRow* rows, Py_ssize_t n) noexcept:
    cdef Py_ssize_t k
    for k in range(1, n):
        if rows[k].start < rows[k - 1].start or (rows[k].start == rows[k - 1].start and rows[k].end < rows[k - 1].end):
            return False
    return True


cdef void _leftmost_longest(const MatchRow* rows, Py_ssize_t n, vector[MatchRow]& kept) noexcept:
    """kept_rows's leftmost-longest rows of rows sorted by start, then length: with no sort,
    as a row overlaps one taken before it exactly when it starts before the last taken one ends."""
    cdef Py_ssize_t k = 0, last
    cdef int64_t taken_end = rows[0].start if n else 0
    while k < n:
        last = k  # the rows of this start end at last; the first row of the longest length wins
        while last + 1 < n and rows[last + 1].start == rows[k].start:
            last += 1
        while last > k and rows[last - 1].end == rows[last].end:
            last -= 1
        if rows[k].start >= taken_end:
            kept.push_back(rows[last])
            taken_end = rows[last].end
        while k < n and rows[k].start == rows[last].start:
            k += 1
