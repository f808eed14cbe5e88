"""The ner parts of spaCy's tests/pipeline/test_entity_ruler.py (spaCy 3.8), run on `bioner`.

Of that file, only test_issue3345 builds a `ner`; the rest test the ruler on its own or
after a stand-in component ("add_ent") that sets entities the way a ner does. Here the
stand-in is a trained `bioner`, so the ruler's overwrite_ents contract is checked against
what bioner really writes.
"""

import pytest
from spacy.lang.en import English
from spacy.tokens import Doc
from spacy.training import Example

ENTITY_RULERS = ["entity_ruler", "future_entity_ruler"]
PATTERNS = [
    {"label": "HELLO", "pattern": "hello world"},
    {"label": "BYE", "pattern": [{"LOWER": "bye"}, {"LOWER": "bye"}]},
    {"label": "HELLO", "pattern": [{"ORTH": "HELLO"}]},
    {"label": "COMPLEX", "pattern": [{"ORTH": "foo", "OP": "*"}]},
]
TRAIN_DATA = [
    ("OH HELLO WORLD bye bye", [(0, 14, "ORG")]),
    ("foo foo bye bye", [(0, 3, "ORG")]),
    ("I live in Berlin", [(10, 16, "GPE")]),
    ("She moved to Paris", [(13, 18, "GPE")]),
]


def trained_bioner(nlp):
    """A bioner that tags as the file's "add_ent" stand-in does: ORG over the first words."""
    ner = nlp.add_pipe("bioner")
    examples = [Example.from_dict(nlp.make_doc(text), {"entities": ents}) for text, ents in TRAIN_DATA]
    nlp.initialize(lambda: examples)
    for _ in range(10):
        nlp.update(examples, sgd=None)
    return ner


@pytest.mark.skip(reason="not applicable: reads spaCy's transition system (ner.moves.is_valid on a parser state)")
def test_issue3345_moves():
    pass


@pytest.mark.parametrize("entity_ruler_factory", ENTITY_RULERS)
def test_issue3345(entity_ruler_factory):
    """A preset entity that crosses a sentence boundary: the ner must be able to keep it
    (spaCy's test asserts that B-GPE stays valid; here, that bioner keeps the entity)."""
    nlp = English()
    ruler = nlp.add_pipe(entity_ruler_factory, name="entity_ruler")
    trained_bioner(nlp)
    ruler.add_patterns([{"label": "GPE", "pattern": "New York"}])  # initialize cleared them
    doc = Doc(nlp.vocab, words=["I", "live", "in", "New", "York"])
    doc[4].is_sent_start = True
    doc = nlp(doc)
    assert [(ent.text, ent.label_) for ent in doc.ents] == [("New York", "GPE")]


@pytest.mark.parametrize("entity_ruler_factory", ENTITY_RULERS)
def test_entity_ruler_existing(entity_ruler_factory):
    nlp = English()
    trained_bioner(nlp)
    ruler = nlp.add_pipe(entity_ruler_factory, name="entity_ruler", after="bioner")
    ruler.add_patterns(PATTERNS)
    doc = nlp("OH HELLO WORLD bye bye")
    assert len(doc.ents) == 2
    assert doc.ents[0].label_ == "ORG"
    assert doc.ents[1].label_ == "BYE"


@pytest.mark.parametrize("entity_ruler_factory", ENTITY_RULERS)
def test_entity_ruler_existing_overwrite(entity_ruler_factory):
    nlp = English()
    trained_bioner(nlp)
    ruler = nlp.add_pipe(entity_ruler_factory, name="entity_ruler", after="bioner", config={"overwrite_ents": True})
    ruler.add_patterns(PATTERNS)
    doc = nlp("OH HELLO WORLD bye bye")
    assert len(doc.ents) == 2
    assert doc.ents[0].label_ == "HELLO"
    assert doc.ents[0].text == "HELLO"
    assert doc.ents[1].label_ == "BYE"


@pytest.mark.parametrize("entity_ruler_factory", ENTITY_RULERS)
def test_entity_ruler_existing_complex(entity_ruler_factory):
    nlp = English()
    trained_bioner(nlp)
    ruler = nlp.add_pipe(entity_ruler_factory, name="entity_ruler", after="bioner", config={"overwrite_ents": True})
    ruler.add_patterns(PATTERNS)
    doc = nlp("foo foo bye bye")
    assert len(doc.ents) == 2
    assert doc.ents[0].label_ == "COMPLEX"
    assert doc.ents[1].label_ == "BYE"
    assert len(doc.ents[0]) == 2
    assert len(doc.ents[1]) == 2
