"""write_entities against spaCy's Doc.from_array, TagWriter against write_entities, entity_annotated
against Doc.has_annotation."""

import numpy
import pytest
import spacy
from spacy.attrs import ENT_IOB, ENT_KB_ID, ENT_TYPE
from spacy.tokens import Doc, Span

from spacy_bioner.ner.decoder import Prediction
from spacy_bioner.ner.entities import TagWriter, entity_annotated, write_entities


def test_writes_what_from_array_writes():
    nlp = spacy.blank("en")
    docs = [nlp.make_doc("Ada Lovelace met Charles Babbage in London ."), nlp.make_doc(""), nlp.make_doc("Paris")]
    per, loc, kb = (nlp.vocab.strings.add(s) for s in ("PER", "LOC", "Q7259"))
    values = numpy.array(
        [
            (3, per, kb),
            (1, per, kb),
            (2, 0, 0),
            (3, per, 0),
            (1, per, 0),
            (2, 0, 0),
            (3, loc, 0),
            (2, 0, 0),
            (3, loc, 0),
        ],
        dtype=numpy.uint64,
    )
    expected = [doc.copy() for doc in docs]
    offsets = numpy.cumsum([0] + [len(doc) for doc in docs])
    for doc, start, end in zip(expected, offsets[:-1], offsets[1:]):
        doc.from_array([ENT_IOB, ENT_TYPE, ENT_KB_ID], values[start:end])
    write_entities(docs, values)
    for doc, reference in zip(docs, expected):
        assert [(e.start, e.end, e.label_, e.kb_id_) for e in doc.ents] == [
            (e.start, e.end, e.label_, e.kb_id_) for e in reference.ents
        ]
    assert [(e.text, e.kb_id_) for e in docs[0].ents] == [
        ("Ada Lovelace", "Q7259"),
        ("Charles Babbage", ""),
        ("London", ""),
    ]


def test_bad_values_are_refused():
    nlp = spacy.blank("en")
    docs = [nlp.make_doc("one two")]
    with pytest.raises(ValueError, match="expected \\(2, 3\\)"):
        write_entities(docs, numpy.zeros((3, 3), dtype=numpy.uint64))
    with pytest.raises(ValueError, match="ENT_IOB codes"):
        write_entities(docs, numpy.full((2, 3), 9, dtype=numpy.uint64))


def tag_table(vocab) -> numpy.ndarray:
    """BIO tags of PER and LOC: O, B-PER, I-PER, B-LOC, I-LOC."""
    per, loc = vocab.strings.add("PER"), vocab.strings.add("LOC")
    return numpy.array([(2, 0, 0), (3, per, 0), (1, per, 0), (3, loc, 0), (1, loc, 0)], dtype=numpy.uint64)


def predicted(tags, matches=None, presets=(), confidences=None) -> Prediction:
    no_matches = numpy.zeros((0, 4), dtype=numpy.int64)
    tags = numpy.array(tags, dtype=numpy.int32)
    return Prediction(tags, no_matches if matches is None else matches, list(presets), confidences, None)


def test_the_tag_writer_writes_what_write_entities_writes_from_the_table():
    nlp = spacy.blank("en")
    table = tag_table(nlp.vocab)
    texts = ["Ada Lovelace met Charles in London .", "", "Paris"]
    tags = [[1, 2, 0, 1, 0, 3, 0], [], [3]]
    docs, expected = [nlp.make_doc(t) for t in texts], [nlp.make_doc(t) for t in texts]
    assert TagWriter(table, ("PER", "LOC")).write_plain(docs, [predicted(t) for t in tags])
    write_entities(expected, table.take(numpy.concatenate([numpy.array(t, dtype=numpy.int64) for t in tags]), axis=0))
    for doc, reference in zip(docs, expected):
        assert (
            doc.to_array([ENT_IOB, ENT_TYPE, ENT_KB_ID]).tolist()
            == reference.to_array([ENT_IOB, ENT_TYPE, ENT_KB_ID]).tolist()
        )
    assert [e.text for e in docs[0].ents] == ["Ada Lovelace", "Charles", "London"]


def test_the_tag_writer_leaves_docs_that_need_more_than_tags_to_the_writer():
    nlp = spacy.blank("en")
    writer = TagWriter(tag_table(nlp.vocab), ("PER", "LOC"))
    match = numpy.array([[0, 1, 0, 0]], dtype=numpy.int64)
    for needing_more in (
        predicted([3, 0], matches=match),
        predicted([3, 0], presets=[Span(nlp.make_doc("Paris is"), 0, 1, label="LOC")]),
        predicted([3, 0], confidences=[(0, 1, 1, 0.9)]),
    ):
        docs = [nlp.make_doc("Ada"), nlp.make_doc("Paris is")]
        assert not writer.write_plain(docs, [predicted([1]), needing_more])
        assert not any(entity_annotated(doc) for doc in docs)  # nothing written to either doc


def test_the_tag_writer_refuses_tags_it_cannot_write():
    nlp = spacy.blank("en")
    writer = TagWriter(tag_table(nlp.vocab), ("PER", "LOC"))
    docs = [nlp.make_doc("one two")]
    with pytest.raises(ValueError, match="2 tokens and 3 tags"):
        writer.write_plain(docs, [predicted([0, 0, 0])])
    with pytest.raises(ValueError, match="2 tokens and 1 tags"):
        writer.write_plain(docs, [predicted([0])])
    with pytest.raises(ValueError, match="tag 5 of doc 0"):
        writer.write_plain(docs, [predicted([0, 5])])
    with pytest.raises(ValueError, match="1 predictions for 2 docs"):
        writer.write_plain(docs * 2, [predicted([0, 0])])
    with pytest.raises(ValueError, match="ENT_IOB codes"):
        TagWriter(numpy.full((2, 3), 9, dtype=numpy.uint64), ("PER",))
    assert not any(entity_annotated(doc) for doc in docs)


def test_entity_annotated_is_has_annotation_of_ent_iob():
    nlp = spacy.blank("en")
    plain = nlp.make_doc("Ada met Charles in London")
    with_ents = nlp.make_doc("Ada met Charles in London")
    with_ents.ents = [Span(with_ents, 4, 5, label="LOC")]
    blocked = nlp.make_doc("Ada met Charles in London")
    blocked.set_ents([], blocked=[Span(blocked, 0, 1)])
    outside = Doc(nlp.vocab, words=["Ada", "met"], ents=["O", "O"])
    for doc in (plain, with_ents, blocked, outside):
        assert entity_annotated(doc) == doc.has_annotation("ENT_IOB")
    assert [entity_annotated(doc) for doc in (plain, with_ents, blocked, outside)] == [False, True, True, True]
    assert not entity_annotated(
        nlp.make_doc("")
    )  # has_annotation says True of an empty doc: it has no entity either way
