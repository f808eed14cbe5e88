"""write_tags (tagger/tag_writer.pyx) against spaCy's Doc.from_array, which the tagger called per doc."""

import numpy
import pytest
import spacy
from hypothesis import given, settings
from hypothesis import strategies as st
from spacy.attrs import POS, TAG
from spacy.parts_of_speech import IDS as UNIVERSAL_POS
from spacy.tokens import Doc

from spacy_bioner.tagger.tag_writer import write_tags

VOCAB = spacy.blank("en").vocab
TAGS = ["NN", "VBZ", "DT", "_SP", ""]
POS_IDS = sorted(set(UNIVERSAL_POS.values()))


@st.composite
def batches(draw):
    """Docs, a tag id per token (-1 for the last row) and a (TAG, POS) table."""
    lengths = draw(st.lists(st.integers(0, 6), min_size=1, max_size=4))
    docs = [Doc(VOCAB, words=[f"w{i}" for i in range(n)]) for n in lengths]
    n_rows = draw(st.integers(1, 5))
    values = numpy.array(
        [[VOCAB.strings.add(draw(st.sampled_from(TAGS))), draw(st.sampled_from(POS_IDS))] for _ in range(n_rows)],
        dtype=numpy.uint64,
    )
    ids = numpy.array(draw(st.lists(st.integers(-1, n_rows - 1), min_size=sum(lengths), max_size=sum(lengths))))
    return docs, ids.astype(numpy.int32), values


@settings(max_examples=300)
@given(batches(), st.sampled_from([(True, True), (True, False), (False, True)]))
def test_write_tags_sets_what_from_array_sets(batch, columns):
    docs, ids, values = batch
    tag, pos = columns
    attrs = [attr for attr, wanted in ((TAG, tag), (POS, pos)) if wanted]
    picked = values[:, [i for i, wanted in enumerate(columns) if wanted]]
    expected = [Doc(VOCAB, words=[t.text for t in doc]) for doc in docs]
    at = 0
    for doc in expected:
        rows = numpy.where(ids[at : at + len(doc)] >= 0, ids[at : at + len(doc)], len(values) - 1)
        doc.from_array(attrs, picked[rows])
        at += len(doc)
    write_tags(docs, ids, values, tag, pos)
    for doc, reference in zip(docs, expected):
        assert doc.to_array([TAG, POS]).tolist() == reference.to_array([TAG, POS]).tolist()


def test_write_tags_refuses_ids_and_shapes_that_do_not_fit_before_writing():
    docs = [Doc(VOCAB, words=["a", "b"]), Doc(VOCAB, words=["c"])]
    values = numpy.array([[VOCAB.strings.add("NN"), UNIVERSAL_POS["NOUN"]]], dtype=numpy.uint64)
    with pytest.raises(ValueError, match="tag ids must lie in -1..0"):
        write_tags(docs, numpy.array([0, 0, 1], dtype=numpy.int32), values, True, True)
    assert [token.tag_ for doc in docs for token in doc] == ["", "", ""]
    with pytest.raises(ValueError, match="expected 3 and 2"):
        write_tags(docs, numpy.array([0, 0], dtype=numpy.int32), values, True, True)
