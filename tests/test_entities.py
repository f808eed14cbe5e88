"""write_entities against spaCy's Doc.from_array."""
import numpy
import pytest
import spacy
from spacy.attrs import ENT_IOB, ENT_KB_ID, ENT_TYPE

from spacy_bioner.ner.entities import write_entities


def test_writes_what_from_array_writes():
    nlp = spacy.blank("en")
    docs = [nlp.make_doc("Ada Lovelace met Charles Babbage in London ."), nlp.make_doc(""), nlp.make_doc("Paris")]
    per, loc, kb = (nlp.vocab.strings.add(s) for s in ("PER", "LOC", "Q7259"))
    values = numpy.array(
        [(3, per, kb), (1, per, kb), (2, 0, 0), (3, per, 0), (1, per, 0), (2, 0, 0), (3, loc, 0), (2, 0, 0), (3, loc, 0)],
        dtype=numpy.uint64,
    )
    expected = [doc.copy() for doc in docs]
    offsets = numpy.cumsum([0] + [len(doc) for doc in docs])
    for doc, start, end in zip(expected, offsets[:-1], offsets[1:]):
        doc.from_array([ENT_IOB, ENT_TYPE, ENT_KB_ID], values[start:end])
    write_entities(docs, values)
    for doc, reference in zip(docs, expected):
        assert [(e.start, e.end, e.label_, e.kb_id_) for e in doc.ents] == [(e.start, e.end, e.label_, e.kb_id_) for e in reference.ents]
    assert [(e.text, e.kb_id_) for e in docs[0].ents] == [("Ada Lovelace", "Q7259"), ("Charles Babbage", ""), ("London", "")]


def test_bad_values_are_refused():
    nlp = spacy.blank("en")
    docs = [nlp.make_doc("one two")]
    with pytest.raises(ValueError, match="expected \\(2, 3\\)"):
        write_entities(docs, numpy.zeros((3, 3), dtype=numpy.uint64))
    with pytest.raises(ValueError, match="ENT_IOB codes"):
        write_entities(docs, numpy.full((2, 3), 9, dtype=numpy.uint64))
