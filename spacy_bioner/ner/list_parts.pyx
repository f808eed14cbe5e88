# cython: language_level=3
"""Rules, split_name_lists: the entities made up wholly of known names, and their names.

`name_list_parts` finds, over a batch's decoded tags, each entity that opens with a
known name shorter than itself, is not itself a known name, and is covered end to end
by known names inside it; of the ways to cover it, the one with the fewest names (on a
tie, the one whose names start earliest, counted from the end). name_lists.py then
tags each name on its own and decides whether to split the entity.
"""
from libc.stdint cimport int32_t, int64_t, uint8_t
from libcpp.algorithm cimport binary_search, sort
from libcpp.utility cimport pair
from libcpp.vector cimport vector

import numpy

ctypedef pair[int64_t, int64_t] Name


def name_list_parts(const int64_t[:, :] names, const int32_t[::1] tags, const uint8_t[::1] continuing):
    """The entities made up of two or more known names, and the fewest such names for each.

    names (int64[k, 2]): Each known name's start and end, batch positions, in any order.
    tags (int32[n]): The decoded tags (a valid sequence).
    continuing (bool[n_tags]): Whether each tag continues an entity (scheme.continuing()).
    RETURNS (int64[e, 2], int64[m, 3]): Each such entity's start and end, in order; and its names,
        rows of (entity number, start, end), in order.
    """
    cdef vector[int64_t] entities, parts
    cdef Py_ssize_t item = sizeof(int64_t)
    find_name_lists(&names[0, 0] if names.shape[0] else NULL, names.strides[0] // item, names.strides[1] // item,
                    names.shape[0], &tags[0] if tags.shape[0] else NULL, tags.shape[0], &continuing[0],
                    &entities, &parts)
    if entities.empty():  # as in most sentences: no list made into a Python list and an array
        return _NO_ENTITIES, _NO_PARTS
    return (numpy.array(entities, dtype=numpy.int64).reshape(-1, 2),
            numpy.array(parts, dtype=numpy.int64).reshape(-1, 3))


_NO_ENTITIES, _NO_PARTS = numpy.zeros((0, 2), dtype=numpy.int64), numpy.zeros((0, 3), dtype=numpy.int64)
_NO_ENTITIES.flags.writeable = _NO_PARTS.flags.writeable = False


cdef bint find_name_lists(const int64_t* names, Py_ssize_t row_stride, Py_ssize_t end_stride,
                          Py_ssize_t n_names, const int32_t* tags, Py_ssize_t n, const uint8_t* continuing,
                          vector[int64_t]* entities, vector[int64_t]* parts) noexcept nogil:
    """name_list_parts over pointers (names: rows of (start, end), row_stride items apart, each end
    end_stride items after its start); with entities NULL, stops at the first such entity. Returns
    whether it found one."""
    cdef Py_ssize_t k
    cdef vector[Name] spans
    for k in range(n_names):
        spans.push_back(Name(names[k * row_stride], names[k * row_stride + end_stride]))
    sort(spans.begin(), spans.end())
    cdef vector[int64_t] fewest, previous  # per position in the entity: names to reach it, where the last began
    cdef int64_t start, end, found = 0
    for k in range(<Py_ssize_t>spans.size()):
        start = spans[k].first
        if k and start == spans[k - 1].first:
            continue  # an entity is tried once, from the first name at its start
        if start < 0 or start >= n or tags[start] == 0 or continuing[tags[start]]:
            continue  # no entity starts here
        end = start + 1
        while end < n and continuing[tags[end]]:
            end += 1
        if end - start < 2 or _has(spans, start, end):
            continue  # a one-word entity, or one known as a whole
        _fewest_names(spans, k, start, end, fewest, previous)
        if fewest[end - start] < 0:
            continue  # not covered by known names
        if entities == NULL:
            return True
        entities.push_back(start)
        entities.push_back(end)
        _push_parts(previous, start, end, found, parts[0])
        found += 1
    return found > 0


cdef inline bint _has(vector[Name]& spans, int64_t start, int64_t end) noexcept nogil:
    return binary_search(spans.begin(), spans.end(), Name(start, end))


cdef void _fewest_names(vector[Name]& spans, Py_ssize_t first, int64_t start, int64_t end,
                        vector[int64_t]& fewest, vector[int64_t]& previous) noexcept nogil:
    """For each position of [start, end), the fewest known names inside the entity that reach it
    from its start (-1: none do), and where the last of them begins. Names are read in order of
    their start, so a position's count is final before any name from it is read; on a tie the
    earlier start is kept."""
    fewest.assign(end - start + 1, -1)
    previous.assign(end - start + 1, -1)
    fewest[0] = 0
    cdef Py_ssize_t k
    cdef int64_t name_start, name_end, count
    for k in range(first, <Py_ssize_t>spans.size()):
        name_start, name_end = spans[k].first, spans[k].second
        if name_start >= end:
            break
        if name_end > end or name_end <= name_start or fewest[name_start - start] < 0:
            continue
        count = fewest[name_start - start] + 1
        if fewest[name_end - start] < 0 or count < fewest[name_end - start]:
            fewest[name_end - start] = count
            previous[name_end - start] = name_start


cdef void _push_parts(vector[int64_t]& previous, int64_t start, int64_t end, int64_t entity,
                      vector[int64_t]& parts) noexcept nogil:
    """The names of the cover, in order: walked back from the entity's end, then pushed from its start."""
    cdef vector[int64_t] bounds
    cdef int64_t at = end
    bounds.push_back(at)
    while at > start:
        at = previous[at - start]
        bounds.push_back(at)
    cdef Py_ssize_t i
    for i in range(<Py_ssize_t>bounds.size() - 1, 0, -1):
        parts.push_back(entity)
        parts.push_back(bounds[i])
        parts.push_back(bounds[i - 1])
