"""write_entities against spaCy's Doc.from_array, entity_annotated against Doc.has_annotation."""

import numpy
import pytest
import spacy
from spacy.attrs import ENT_IOB, ENT_KB_ID, ENT_TYPE
from spacy.tokens import Doc, Span

from spacy_bioner.ner.entities import entity_annotated, write_entities


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
