"""name_list_parts (ner/list_parts.pyx) against a plain Python reference of what split_name_lists covers."""

from collections import defaultdict
from typing import Optional

import numpy
from conftest import drawn_tags
from hypothesis import given, settings
from hypothesis import strategies as st

from spacy_bioner.core.schemes import TagScheme
from spacy_bioner.ner.list_parts import name_list_parts

LABELS = ["LOC", "PER", "ORG"]


def fewest_names(start: int, end: int, known: dict[int, list[int]]) -> Optional[list[tuple[int, int]]]:
    """The fewest known names, two or more, that make up [start, end) (on a tie, the last one
    starting earliest, and so on back); None if there are none such, or if it is a known name."""
    if end in known.get(start, ()):
        return None
    ends_at: dict[int, list[int]] = defaultdict(list)
    for s in range(start, end):
        for e in known.get(s, ()):
            if e <= end:
                ends_at[e].append(s)
    fewest = {start: (0, -1)}  # position -> (names so far, where the last one starts)
    for i in range(start + 1, end + 1):
        options = [(fewest[s][0] + 1, s) for s in ends_at[i] if s in fewest]
        if options:
            fewest[i] = min(options)
    if end not in fewest:
        return None
    parts, i = [], end
    while i > start:
        parts.append((fewest[i][1], i))
        i = fewest[i][1]
    return parts[::-1]


def reference(names: list[tuple[int, int]], tags: numpy.ndarray, scheme: TagScheme):
    """The entities (as to_spans reads the tags) that open with a known name shorter than themselves
    and are covered by known names, with their names."""
    known: dict[int, list[int]] = defaultdict(list)
    for start, end in names:
        known[start].append(end)
    entities, parts = [], []
    for start, end, _ in scheme.to_spans(tags):
        if not any(e < end for e in known.get(start, ())):
            continue
        cover = fewest_names(start, end, known)
        if cover is not None:
            parts.extend((len(entities), s, e) for s, e in cover)
            entities.append((start, end))
    return entities, parts


@st.composite
def tagged(draw):
    """Valid tags of a doc, its entities drawn as spans, some of them side by side."""
    scheme = TagScheme(draw(st.sampled_from(["BILOU", "BIO"])), LABELS)
    return scheme, numpy.asarray(drawn_tags(draw, scheme, draw(st.integers(1, 16)), 6), dtype=numpy.int32)


@settings(max_examples=600)
@given(tagged(), st.data())
def test_name_list_parts_finds_what_the_reference_finds(batch, data):
    scheme, tags = batch
    n = len(tags)
    pairs = data.draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(1, 4)), max_size=14))
    names = [(start, min(start + length, n)) for start, length in pairs]
    array = numpy.array(names, dtype=numpy.int64).reshape(-1, 2)
    wide = numpy.concatenate([array, numpy.zeros_like(array)], axis=1)[:, :2]  # a strided view, as memory rows give
    entities, parts = name_list_parts(wide, tags, scheme.continuing().view(numpy.uint8))
    expected_entities, expected_parts = reference(names, tags, scheme)
    assert [tuple(row) for row in entities.tolist()] == expected_entities
    assert [tuple(row) for row in parts.tolist()] == expected_parts


def test_the_fewest_names_win_and_ties_go_to_the_earlier_start():
    scheme = TagScheme("BILOU", LABELS)
    tags = numpy.asarray(scheme.from_spans([(0, 4, 2)], 5), dtype=numpy.int32)
    # [0, 4) as 0-1 1-2 2-4, or 0-2 2-4, or 0-1 1-4: two names win; of those, the one whose last begins earlier.
    names = numpy.array([(0, 1), (1, 2), (2, 4), (0, 2), (1, 4)], dtype=numpy.int64)
    entities, parts = name_list_parts(names, tags, scheme.continuing().view(numpy.uint8))
    assert entities.tolist() == [[0, 4]]
    assert parts.tolist() == [[0, 0, 1], [0, 1, 4]]
    known_whole = numpy.concatenate([names, [(0, 4)]])
    entities, parts = name_list_parts(known_whole, tags, scheme.continuing().view(numpy.uint8))
    assert entities.shape == (0, 2) and parts.shape == (0, 3)
