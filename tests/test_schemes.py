import numpy
import pytest
from hypothesis import given
from hypothesis import strategies as st

from spacy_bioner.core.schemes import TagScheme

LABELS = ["PER", "ORG", "LOC"]


@st.composite
def spans_and_length(draw):
    """Non-overlapping spans over a random length."""
    length = draw(st.integers(0, 20))
    spans, at = [], 0
    while at < length:
        gap = draw(st.integers(0, 3))
        size = draw(st.integers(1, 4))
        if at + gap + size > length:
            break
        spans.append((at + gap, at + gap + size, draw(st.integers(0, len(LABELS) - 1))))
        at += gap + size
    return spans, length


@pytest.mark.parametrize("name", ["BIO", "BILOU"])
@given(case=spans_and_length())
def test_spans_tags_round_trip(name, case):
    spans, length = case
    scheme = TagScheme(name, LABELS)
    tags = scheme.from_spans(spans, length)
    assert scheme.is_valid(tags.tolist())
    assert scheme.to_spans(tags) == spans


def test_tag_layout():
    assert TagScheme("BIO", ["PER", "LOC"]).tags == ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
    bilou = TagScheme("BILOU", ["PER"])
    assert bilou.tags == ["O", "B-PER", "I-PER", "L-PER", "U-PER"]


def test_entity_types_and_tags_of_labels():
    scheme = TagScheme("BILOU", ["PER", "LOC"])
    assert scheme.entity_types().tolist() == [0, 1, 1, 1, 1, 2, 2, 2, 2]
    assert numpy.flatnonzero(scheme.tags_of((1,))).tolist() == [5, 6, 7, 8]
    assert not scheme.tags_of((0, 1))[0] and scheme.tags_of((0, 1))[1:].all()
    assert TagScheme("BIO", ["PER", "LOC"]).entity_types().tolist() == [0, 1, 1, 2, 2]


def test_transitions_bio():
    scheme = TagScheme("BIO", ["PER", "LOC"])
    legal = scheme.transitions()
    start = scheme.n_tags
    ids = scheme.tag_ids
    assert not legal[start, ids["I-PER"]]
    assert legal[ids["B-PER"], ids["I-PER"]] and legal[ids["I-PER"], ids["I-PER"]]
    assert not legal[ids["B-LOC"], ids["I-PER"]] and not legal[ids["O"], ids["I-PER"]]
    assert legal[ids["I-PER"], ids["B-PER"]]


def test_transitions_bilou():
    scheme = TagScheme("BILOU", ["PER"])
    legal = scheme.transitions()
    ids = scheme.tag_ids
    assert not legal[ids["B-PER"], ids["O"]]  # an open entity must be closed by L
    assert legal[ids["B-PER"], ids["L-PER"]] and legal[ids["L-PER"], ids["U-PER"]]
    assert not legal[ids["U-PER"], ids["I-PER"]]
    assert scheme.closing().tolist() == [True, False, False, True, True]


def test_from_biluo_maps_missing_and_converts_for_bio():
    bio = TagScheme("BIO", ["PER"])
    assert bio.from_biluo(["U-PER", "B-PER", "L-PER", "O", None, "-"]).tolist() == [1, 1, 2, 0, -1, -1]
    with pytest.raises(ValueError, match="'ORG'"):
        bio.from_biluo(["U-ORG"])


def test_unknown_scheme():
    with pytest.raises(ValueError, match="IOBES"):
        TagScheme("IOBES", ["PER"])


def test_to_spans_repairs_orphan_inside():
    scheme = TagScheme("BIO", ["PER", "LOC"])
    # O I-PER I-LOC: each orphan starts its own span
    assert scheme.to_spans([0, 2, 4]) == [(1, 2, 0), (2, 3, 1)]


@pytest.mark.parametrize("name", ["BIO", "BILOU"])
def test_allowed_masks(name):
    scheme = TagScheme(name, ["PER"])
    sent_starts = numpy.array([True, False, True, False])
    is_space = numpy.array([False, True, False, False])
    forced = numpy.array([-1, -1, -1, 0], dtype=numpy.int32)
    allowed = scheme.allowed(sent_starts, is_space, forced)
    ids = scheme.tag_ids
    assert not allowed[2, ids["I-PER"]]  # a sentence start never continues
    assert not allowed[1, ids["B-PER"]]  # nothing starts on whitespace
    assert allowed[3].tolist() == [1] + [0] * (scheme.n_tags - 1)  # forced O
    if name == "BILOU":
        # whitespace right before a sentence start: nothing may open, stay open or end there
        assert allowed[1].tolist() == [1, 0, 0, 0, 0]


def _spans_token_by_token(scheme, tags):
    """The reading of any tag sequence, one token at a time (the reference for to_spans)."""
    spans, start, label = [], None, None
    for i, tag in enumerate(tags):
        move = scheme.move(tag)
        continues = move in "IL" and start is not None and scheme.label_of(tag) == label
        if start is not None and not continues:
            spans.append((start, i, label))
            start = None
        if move != "O" and start is None:
            start, label = i, scheme.label_of(tag)
        if move in "LU":
            spans.append((start, i + 1, label))
            start = None
    if start is not None:
        spans.append((start, len(tags), label))
    return spans


@pytest.mark.parametrize("name", ["BIO", "BILOU"])
@given(data=st.data())
def test_to_spans_reads_any_sequence_like_the_reference(name, data):
    scheme = TagScheme(name, ["A", "B", "C"])
    tags = data.draw(st.lists(st.integers(0, scheme.n_tags - 1), max_size=20))
    assert scheme.to_spans(tags) == _spans_token_by_token(scheme, tags)
