"""spaCy's own tests of adding labels (spacy/tests/parser/test_add_label.py, spaCy 3.8), the ner parts run on `bioner`.

As in test_ner.py: assertions kept, spaCy internals marked not applicable, known gaps xfail.
"""

import pytest
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example
from spacy.vocab import Vocab

from spacy_bioner.ner.component import BioNER

PARSER = "tests spaCy's DependencyParser, not the ner (bioner_parser has tests of its own)"


def _ner_example(ner):
    doc = Doc(ner.vocab, words=["Joe", "loves", "visiting", "London", "during", "the", "weekend"])
    gold = {"entities": [(0, 3, "PERSON"), (19, 25, "LOC")]}
    return Example.from_dict(doc, gold)


@pytest.mark.skip(reason=f"not applicable: {PARSER}")
def test_init_parser():
    pass


@pytest.mark.skip(reason=f"not applicable: {PARSER}")
def test_add_label():
    pass


def test_add_label_deserializes_correctly():
    ner1 = BioNER(Vocab())
    ner1.add_label("C")
    ner1.add_label("B")
    ner1.add_label("A")
    ner1.initialize(lambda: [_ner_example(ner1)])
    ner2 = BioNER(Vocab())
    # (spaCy resizes its thinc model before from_bytes, and compares the transition system's
    # class names; bioner's labels and tags are what it saves)
    ner2.from_bytes(ner1.to_bytes())
    assert ner1.labels == ner2.labels == ("C", "B", "A", "PERSON", "LOC")
    assert ner1.scheme.tags == ner2.scheme.tags


def test_add_label_get_label():
    """Test that added labels are returned correctly (the ner case; move_names is spaCy's transition system's)."""
    labels = ["A", "B", "C"]
    pipe = BioNER(Vocab())
    for label in labels:
        pipe.add_label(label)
    pipe_labels = sorted(list(pipe.labels))
    assert pipe_labels == labels


def test_ner_labels_added_implicitly_on_predict():
    nlp = Language()
    ner = nlp.add_pipe("bioner")
    for label in ["A", "B", "C"]:
        ner.add_label(label)
    nlp.initialize()
    doc = Doc(nlp.vocab, words=["hello", "world"], ents=["B-D", "O"])
    ner(doc)
    assert [t.ent_type_ for t in doc] == ["D", ""]
    assert "D" in ner.labels


@pytest.mark.skip(reason="not applicable: tests spaCy's beam_ner")
def test_ner_labels_added_implicitly_on_beam_parse():
    pass


@pytest.mark.skip(reason="not applicable: tests spaCy's beam_ner")
def test_ner_labels_added_implicitly_on_greedy_parse():
    pass


def test_ner_labels_added_implicitly_on_update():
    nlp = Language()
    ner = nlp.add_pipe("bioner")
    for label in ["A", "B", "C"]:
        ner.add_label(label)
    nlp.initialize()
    doc = Doc(nlp.vocab, words=["hello", "world"], ents=["B-D", "O"])
    example = Example(nlp.make_doc(doc.text), doc)
    assert "D" not in ner.labels
    nlp.update([example])
    assert "D" in ner.labels
