"""Docs that open anywhere: the start-variant augmenter, and a name opening a doc read as at any sentence start."""

import random

import pytest
import spacy
from spacy.tokens import Doc, Span
from spacy.training import Example
from spacy.util import registry
from thinc.api import Config

from spacy_bioner.ner.start_variants import later_start

WORDS = ["Acme", "Corp", "sells", "shares", ".", "Anna", "Berg", "spoke", ".", "Oslo", "won", "."]
SENT_STARTS = [True, False, False, False, False, True, False, False, False, True, False, False]


def three_sentences(nlp) -> Example:
    doc = Doc(nlp.vocab, words=WORDS, sent_starts=SENT_STARTS)
    doc.set_ents([Span(doc, 0, 2, "ORG"), Span(doc, 5, 7, "PER")], default="missing")  # "Oslo" ... unknown
    doc.spans["negatives"] = [Span(doc, 0, 1, "PER"), Span(doc, 9, 10, "PER")]
    return Example(nlp.make_doc(doc.text), doc)


def test_a_later_start_begins_at_a_sentence_and_keeps_what_follows():
    nlp = spacy.blank("en")
    random.seed(0)
    starts = set()
    for _ in range(20):
        later = later_start(nlp, three_sentences(nlp))
        assert later is not None
        starts.add(later.reference[0].text)
        assert later.reference.text == later.predicted.text
        if later.reference[0].text == "Anna":
            assert later.get_aligned_ner() == ["B-PER", "L-PER", None, None, None, None, None]
            assert [(s.start, s.end, s.label_) for s in later.reference.spans["negatives"]] == [(4, 5, "PER")]
            assert [t.is_sent_start for t in later.reference] == SENT_STARTS[5:]
    assert starts == {"Anna", "Oslo"}  # never the first sentence


def test_one_sentence_or_no_sentence_starts_has_no_later_start():
    nlp = spacy.blank("en")
    one = Doc(nlp.vocab, words=["Anna", "spoke", "."], sent_starts=[True, False, False])
    unsplit = Doc(nlp.vocab, words=WORDS)
    for doc in (one, unsplit):
        assert later_start(nlp, Example(doc.copy(), doc)) is None


def test_the_augmenter_copies_a_share_of_what_its_base_gives():
    nlp = spacy.blank("en")
    make = registry.augmenters.get("bioner.start_variants.v1")
    lower = registry.augmenters.get("bioner.case_variants.v1")(lower=1.0, upper=0.0, title=0.0)
    random.seed(0)
    given = list(make(share=1.0, base=lower)(nlp, three_sentences(nlp)))
    # the original, its copy from a later sentence, the lower-case variant and its copy
    assert [eg.reference[0].text for eg in given][::2] == ["Acme", "acme"]
    assert [eg.reference[0].text in {"Anna", "Oslo", "anna", "oslo"} for eg in given[1::2]] == [True, True]
    state = random.getstate()
    assert len(list(make(share=0.0)(nlp, three_sentences(nlp)))) == 1
    assert random.getstate() == state  # share 0 trains exactly as without the copies
    counts = [len(list(make(share=0.5)(nlp, three_sentences(nlp)))) for _ in range(400)]
    assert 150 < counts.count(2) < 250


@pytest.mark.parametrize("share", [-0.1, 1.5, "half", True])
def test_a_bad_share_is_refused_by_name(share):
    with pytest.raises(ValueError, match="bioner.start_variants.v1"):
        registry.augmenters.get("bioner.start_variants.v1")(share=share)


def test_the_shipped_configs_copy_case_variants_from_later_starts():
    for name in ("bioner", "bioner_gazetteer", "bioner_accuracy"):
        block = Config().from_disk(f"configs/{name}.cfg")["corpora"]["train"]["augmenter"]
        assert block["@augmenters"] == "bioner.start_variants.v1"
        assert block["base"]["@augmenters"] == "bioner.case_variants.v1"
        assert callable(registry.resolve({"augmenter": block})["augmenter"])


def _news(people, firms):
    """Docs that open, as news does, with a firm's headline; the people only ever start later sentences."""
    data = []
    for firm, person in zip(firms, people):
        headline = f"{firm} sells shares ."
        body = f" {person} said so . The deal closed ."
        data.append(
            (
                headline + body,
                [(0, len(firm), "ORG"), (len(headline) + 1, len(headline) + 1 + len(person), "PER")],
            )
        )
    return data


PEOPLE = ["Anna Berg", "Carl Dahl", "Eva Falk", "Gus Holm", "Ida Juhl", "Kai Lund"]
FIRMS = ["Acme Corp", "Brix Ltd", "Coda Inc", "Dyna Corp", "Elko Ltd", "Fora Inc"]


def _train_on_news(share):
    nlp = spacy.blank("en")
    nlp.add_pipe("bioner", config={"features": ["word", "window", "shape"]})
    examples = []
    for text, entities in _news(PEOPLE, FIRMS):
        doc = nlp.make_doc(text)
        doc.set_ents([doc.char_span(start, end, label) for start, end, label in entities])
        for token in doc:
            token.is_sent_start = token.i == 0 or doc[token.i - 1].text == "."
        examples.append(Example(nlp.make_doc(text), doc))
    nlp.initialize(lambda: examples)
    augment = registry.augmenters.get("bioner.start_variants.v1")(share=share)
    random.seed(0)
    for _ in range(10):
        nlp.update([variant for eg in examples for variant in augment(nlp, eg)])
    return nlp


def test_trained_with_later_starts_a_name_opening_the_doc_reads_as_at_any_sentence_start():
    without, with_copies = _train_on_news(0.0), _train_on_news(1.0)
    text = "Olga Nyberg said so ."
    assert [(e.text, e.label_) for e in without(text).ents] == [("Olga Nyberg", "ORG")]  # read as a headline's
    assert [(e.text, e.label_) for e in with_copies(text).ents] == [("Olga Nyberg", "PER")]
