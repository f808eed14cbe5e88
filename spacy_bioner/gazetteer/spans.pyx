# cython: language_level=3
"""Match rows -> spaCy spans and entities: overlapping matches filtered, span groups
filled and entities written without a Python `Span` per match.

`Span(doc, start, end)` makes two Token objects to find its characters. A long
document matched against a large term list has hundreds of matches, and making
their Spans cost more than finding them. Here a SpanGroup is filled with span
structs read straight from the doc's tokens, as spaCy's own Cython fills them,
and entities go straight into the tokens, as `Doc.set_ents` writes them.
"""
from libc.stdint cimport int64_t, uint64_t
from libcpp.algorithm cimport stable_sort
from libcpp.vector cimport vector
from spacy.strings cimport StringStore, hash_string
from spacy.structs cimport SpanC
from spacy.tokens.doc cimport Doc
from spacy.tokens.span_group cimport SpanGroup

import numpy

cdef enum:
    MISSING, INSIDE, OUTSIDE, BEGIN  # spaCy's ENT_IOB codes
    UNSEEN, SYMBOL, KEPT, ADDED  # how an Interned string's value is known


cdef struct Known:
    uint64_t value  # in the StringStore
    uint64_t generation  # of a KEPT value: the pool generation it was added in
    char kind  # UNSEEN, SYMBOL, KEPT or ADDED


cdef class Interned:
    """A growing list of strings (a gazetteer's labels or KB ids) and their StringStore values,
    each added to a doc's StringStore when first used with it, as `Span(label=..., kb_id=...)` adds
    them. A value is found once, so a match's strings cost no Python call. A string added outside a
    memory zone stays in its store for as long as the store keeps its memory pool, so it is kept
    for that pool and costs no lookup either; one added inside a zone may be dropped with the zone,
    and a C lookup checks that the store still holds it (a store may also be another vocab's)."""
    cdef list strings
    cdef vector[Known] known
    cdef object pool  # the permanent memory pool of the store last used
    cdef uint64_t generation  # counts the pools seen

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


cdef inline void _check_row(Doc doc, int64_t start, int64_t end) except *:
    if not 0 <= start < end <= doc.length:
        raise ValueError(f"Match ({start}, {end}) does not lie in a doc of {doc.length} tokens.")


def span_group(Doc doc, str name, rows, Interned labels, Interned kb_ids):
    """A SpanGroup of a doc's match rows (start, end, label, kb id), each span as
    `Span(doc, start, end, label=labels[label], kb_id=kb_ids[kb id])` makes it."""
    cdef const int64_t[:, :] matches = numpy.asarray(rows, dtype=numpy.int64).reshape(-1, 4)
    cdef StringStore store = doc.vocab.strings
    cdef SpanGroup group = SpanGroup(doc, name=name)
    cdef SpanC span
    cdef Py_ssize_t k
    group.c.reserve(matches.shape[0])
    for k in range(matches.shape[0]):
        span.start, span.end = matches[k, 0], matches[k, 1]
        _check_row(doc, span.start, span.end)
        span.start_char = doc.c[span.start].idx
        span.end_char = doc.c[span.end - 1].idx + doc.c[span.end - 1].lex.length
        span.label, span.kb_id, span.id = labels.value(store, matches[k, 2]), kb_ids.value(store, matches[k, 3]), 0
        group.push_back(span)
    return group


def write_ents(Doc doc, rows, Interned labels, Interned kb_ids, bint keep_entities):
    """Write match rows (start, end, label, kb id) to the doc's entities, as
    `doc.set_ents(spans, default="unmodified")` writes them: other tokens keep their values.
    A row that overlaps one written before it is left out (filter them first: non_overlapping).
    keep_entities: leave out the rows that overlap an entity the doc has; else they replace
    the tokens they cover, and what is left of such an entity stays an entity."""
    cdef const int64_t[:, :] matches = numpy.asarray(rows, dtype=numpy.int64).reshape(-1, 4)
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
    for k in range(matches.shape[0]):
        _check_row(doc, matches[k, 0], matches[k, 1])
        free = True
        for i in range(matches[k, 0], matches[k, 1]):
            free = free and not taken[i]
        if not free:
            continue
        for i in range(matches[k, 0], matches[k, 1]):
            doc.c[i].ent_iob = BEGIN if i == matches[k, 0] else INSIDE
            doc.c[i].ent_type = labels.value(store, matches[k, 2])
            doc.c[i].ent_kb_id = kb_ids.value(store, matches[k, 3])
            taken[i] = True
    for i in range(doc.length - 1):  # as set_ents: an I after no entity, or after another type, begins one
        if doc.c[i + 1].ent_iob == INSIDE and (doc.c[i].ent_iob in (MISSING, OUTSIDE)
                                               or doc.c[i].ent_type != doc.c[i + 1].ent_type):
            doc.c[i + 1].ent_iob = BEGIN


cdef struct Ranked:
    int64_t first, second, row


cdef bint _ranked_before(const Ranked& a, const Ranked& b) noexcept nogil:
    return a.first < b.first or (a.first == b.first and a.second < b.second)


cdef bint _starts_before(const Ranked& a, const Ranked& b) noexcept nogil:
    return a.second < b.second


def non_overlapping(rows, bint longest_first):
    """The rows (start, end, ...) that overlap no row taken before them, taken leftmost first then
    longest, or longest first then leftmost; ties in their order in `rows`. RETURNS the kept rows, by start."""
    rows = numpy.asarray(rows, dtype=numpy.int64).reshape(-1, 4)
    cdef const int64_t[:, :] matches = rows
    if not longest_first and _by_start_then_length(matches):  # as Gazetteer.match gives them
        return rows[_leftmost_longest(matches)]
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
    chosen = numpy.empty(kept.size(), dtype=numpy.intp)
    cdef Py_ssize_t[::1] rows_kept = chosen
    for k in range(<Py_ssize_t>kept.size()):
        rows_kept[k] = kept[k].row
    return rows[chosen]


cdef bint _by_start_then_length(const int64_t[:, :] matches) noexcept:
    cdef Py_ssize_t k
    for k in range(1, matches.shape[0]):
        if matches[k, 0] < matches[k - 1, 0] or (
            matches[k, 0] == matches[k - 1, 0] and matches[k, 1] < matches[k - 1, 1]
        ):
            return False
    return True


def _leftmost_longest(const int64_t[:, :] matches):
    """non_overlapping's leftmost-longest rows of rows sorted by start, then length: with no sort,
    as a row overlaps one taken before it exactly when it starts before the last taken one ends.
    RETURNS (ndarray): the kept rows' indices."""
    chosen = numpy.empty(matches.shape[0], dtype=numpy.intp)
    cdef Py_ssize_t[::1] kept = chosen
    cdef Py_ssize_t k = 0, last, n_kept = 0
    cdef int64_t taken_end = matches[0, 0] if matches.shape[0] else 0
    while k < matches.shape[0]:
        last = k  # the rows of this start end at last; the first row of the longest length wins
        while last + 1 < matches.shape[0] and matches[last + 1, 0] == matches[k, 0]:
            last += 1
        while last > k and matches[last - 1, 1] == matches[last, 1]:
            last -= 1
        if matches[k, 0] >= taken_end:
            kept[n_kept] = last
            n_kept += 1
            taken_end = matches[last, 1]
        while k < matches.shape[0] and matches[k, 0] == matches[last, 0]:
            k += 1
    return chosen[:n_kept]
