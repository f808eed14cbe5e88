"""Text as people type it: the case-variant augmenter, the casing and names families, a lower-case sentence."""

import random

import pytest
import spacy
from conftest import make_examples
from spacy.tokens import Span
from spacy.training import Example
from spacy.util import registry
from thinc.api import Config

from spacy_bioner.core.word_case import WordCaseTable, shipped_word_case
from spacy_bioner.ner.case_variants import VARIANTS, case_variant, title_word

TEXT = "Angela Merkel visited Paris ."
ENTITIES = [(0, 13, "PER"), (22, 27, "LOC")]


def example(nlp):
    return Example.from_dict(nlp.make_doc(TEXT), {"entities": ENTITIES})


@pytest.mark.parametrize(
    "variant, text",
    [
        ("lower", "angela merkel visited paris ."),
        ("upper", "ANGELA MERKEL VISITED PARIS ."),
        ("title", "Angela Merkel Visited Paris ."),
    ],
)
def test_a_variant_keeps_the_entities_in_another_case(variant, text):
    nlp = spacy.blank("en")
    changed = case_variant(nlp, example(nlp), VARIANTS[variant])
    assert changed.reference.text == changed.predicted.text == text
    assert [(e.start_char, e.end_char, e.label_) for e in changed.reference.ents] == ENTITIES
    assert changed.get_aligned_ner() == ["B-PER", "L-PER", "O", "U-LOC", "O"]


def test_a_variant_keeps_missing_annotation_span_groups_and_lengths():
    nlp = spacy.blank("en")
    doc = nlp.make_doc("Straße in Köln")
    doc.set_ents([Span(doc, 2, 3, "LOC")], default="missing")  # "Straße" and "in" unknown, not O
    doc.spans["negatives"] = [Span(doc, 0, 1, "ORG")]
    changed = case_variant(nlp, Example(doc.copy(), doc), VARIANTS["upper"])
    assert changed.reference.text == "Straße IN KÖLN"  # "ß" upper-cased would be longer: kept
    assert changed.get_aligned_ner() == [None, None, "U-LOC"]
    assert [(s.start, s.end, s.label_) for s in changed.reference.spans["negatives"]] == [(0, 1, "ORG")]


def test_title_case_raises_first_letters_only():
    assert [title_word(w) for w in ["iPhone", "IBM", "the", "3rd"]] == ["IPhone", "IBM", "The", "3rd"]


def test_the_augmenter_gives_each_variant_at_its_share():
    nlp = spacy.blank("en")
    augment = registry.augmenters.get("bioner.case_variants.v1")(lower=0.5, upper=0.25, title=0.25)
    random.seed(0)
    given = [list(augment(nlp, example(nlp))) for _ in range(400)]
    assert all(len(examples) == 2 and examples[0].reference.text == TEXT for examples in given)  # original kept
    texts = [examples[-1].reference.text for examples in given]
    counts = {text: texts.count(text) for text in set(texts)}
    assert set(counts) == {
        "angela merkel visited paris .",
        "ANGELA MERKEL VISITED PARIS .",
        "Angela Merkel Visited Paris .",
    }
    assert 150 < counts["angela merkel visited paris ."] < 250
    keep = registry.augmenters.get("bioner.case_variants.v1")(lower=0.0, upper=0.0, title=0.0)
    assert [eg.reference.text for eg in keep(nlp, example(nlp))] == [TEXT]
    replace = registry.augmenters.get("bioner.case_variants.v1")(lower=1.0, upper=0.0, title=0.0, keep_original=False)
    assert [eg.reference.text for eg in replace(nlp, example(nlp))] == ["angela merkel visited paris ."]


@pytest.mark.parametrize("shares", [{"lower": -0.1}, {"upper": 1.5}, {"title": "half"}, {"lower": 0.6, "upper": 0.6}])
def test_bad_shares_are_refused_by_name(shares):
    with pytest.raises(ValueError, match="bioner.case_variants.v1"):
        registry.augmenters.get("bioner.case_variants.v1")(**shares)


def test_the_shipped_config_trains_with_case_variants():
    config = Config().from_disk("configs/bioner.cfg")
    augmenter = registry.resolve({"augmenter": config["corpora"]["train"]["augmenter"]})["augmenter"]
    assert callable(augmenter)
    features = set(config["components"]["bioner"]["features"])
    assert {"casing", "sentences", "lowercase_docs"} <= features
    assert "names" not in features  # opt-in


def test_the_word_case_table_knows_how_words_are_usually_written():
    table = shipped_word_case()
    assert table.values_of("seattle") == table.values_of("SEATTLE") == table.values_of("Seattle")
    assert table.values_of("seattle")[0] == "title"
    assert table.values_of("yesterday")[0] == "lower"
    assert table.values_of("john")[2] == "first+surname"
    assert table.values_of("kofi")[2] == "rare_first"
    assert table.values_of("qwzxv") == ("unknown", "unknown", "unknown")


def test_a_damaged_word_case_table_is_refused():
    import numpy

    with pytest.raises(ValueError, match="sorted"):
        WordCaseTable(numpy.array([3, 1], dtype=numpy.uint64), numpy.zeros((2, 3), dtype=numpy.uint8))
    with pytest.raises(ValueError, match="classes"):
        WordCaseTable(numpy.array([1], dtype=numpy.uint64), numpy.full((1, 3), 99, dtype=numpy.uint8))


PEOPLE = ["Alice Smith", "Bob Jones", "Carol White", "David Brown", "Emma Davis", "Frank Miller"]
PLACES = ["Paris", "Berlin", "Madrid", "Vienna", "Dublin", "Oslo"]


def _cased_data():
    data = []
    for person, place in zip(PEOPLE, PLACES):
        text = f"{person} lives in {place} ."
        data.append((text, [(0, len(person), "PER"), (len(person) + 10, len(person) + 10 + len(place), "LOC")]))
    # The same frame with no entity: in cased text only the capitals tell the two apart.
    others = [
        "the cat lives in town .",
        "my friend lives in style .",
        "a bird lives in trees .",
        "our dog lives in peace .",
    ]
    return data + [(text, []) for text in others]


def _train(augmenter, features):
    nlp = spacy.blank("en")
    nlp.add_pipe("bioner", config={"features": features})
    examples = make_examples(nlp, _cased_data())
    nlp.initialize(lambda: examples)
    random.seed(0)
    for _ in range(15):
        nlp.update([variant for eg in examples for variant in augmenter(nlp, eg)])
    return nlp


def test_trained_with_case_variants_a_lower_case_sentence_gets_its_entities():
    features = ["word", "window", "shape", "flags", "casing", "names"]
    make = registry.augmenters.get("bioner.case_variants.v1")
    cased_only = _train(make(lower=0.0, upper=0.0, title=0.0), features)
    varied = _train(make(lower=0.5, upper=0.0, title=0.0), features)
    text = "george clark lives in lisbon ."  # words no training sentence had
    expected = [("george clark", "PER"), ("lisbon", "LOC")]
    assert [(e.text, e.label_) for e in varied(text).ents] == expected
    assert [(e.text, e.label_) for e in cased_only(text).ents] != expected
    assert [(e.text, e.label_) for e in varied("George Clark lives in Lisbon .").ents] == [
        ("George Clark", "PER"),
        ("Lisbon", "LOC"),
    ]
