import gc

import numpy
import pytest
import spacy
from conftest import TRAIN_DATA, make_examples
from spacy.tokens import Doc, Span
from spacy.training import Example

from spacy_bioner.core.schemes import TagScheme
from spacy_bioner.ner import gold
from spacy_bioner.ner.gold import GoldCache, gold_tags, sentence_runs


@pytest.fixture
def nlp():
    return spacy.blank("en")


def reference_doc(nlp, words, ents, spaces=None):
    return Doc(nlp.vocab, words=words, spaces=spaces, ents=ents)


CASES = [
    # every token annotated
    (
        ["Alice", "Smith", "met", "Bob", "in", "New", "York", "."],
        ["B-PER", "I-PER", "O", "B-PER", "O", "B-LOC", "I-LOC", "O"],
    ),
    # missing annotation on some tokens
    (["Alice", "Smith", "met", "Bob", "today"], ["B-PER", "I-PER", None, "B-PER", None]),
    # a whitespace token without annotation is outside
    (["Paris", "\n", "is", "big"], ["B-LOC", None, "O", None]),
    # nothing annotated
    (["just", "words"], [None, None]),
]


@pytest.mark.parametrize("scheme_name", ["BIO", "BILOU"])
@pytest.mark.parametrize("words,ents", CASES)
def test_identity_alignment_reads_the_same_tags_as_spacy(nlp, scheme_name, words, ents):
    scheme = TagScheme(scheme_name, ["PER", "LOC"])
    reference = reference_doc(nlp, words, ents)
    example = Example(Doc(nlp.vocab, words=words), reference)
    expected = scheme.from_biluo(example.get_aligned_ner())
    assert gold_tags(example, scheme).tolist() == expected.tolist()


def test_other_tokenization_falls_back_to_spacy_alignment(nlp):
    scheme = TagScheme("BILOU", ["LOC"])
    reference = reference_doc(nlp, ["New", "York", "-based"], ["B-LOC", "I-LOC", "O"], spaces=[True, False, False])
    example = Example(
        Doc(nlp.vocab, words=["New", "York", "-", "based"], spaces=[True, False, False, False]), reference
    )
    assert [t.text for t in example.predicted] != [t.text for t in reference]
    assert gold_tags(example, scheme).tolist() == scheme.from_biluo(example.get_aligned_ner()).tolist()


def test_unknown_gold_label_is_an_error(nlp):
    scheme = TagScheme("BILOU", ["PER"])
    reference = reference_doc(nlp, ["Paris"], ["B-LOC"])
    with pytest.raises(ValueError, match="'LOC' is not among"):
        gold_tags(Example(Doc(nlp.vocab, words=["Paris"]), reference), scheme)


def test_reference_without_entity_annotation_is_all_missing(nlp):
    scheme = TagScheme("BIO", ["PER"])
    example = Example(Doc(nlp.vocab, words=["a", "b"]), Doc(nlp.vocab, words=["a", "b"]))
    assert gold_tags(example, scheme).tolist() == [-1, -1]
    assert numpy.array_equal(scheme.from_biluo(example.get_aligned_ner()), [-1, -1])


def test_sentence_runs_come_from_the_predicted_doc_or_the_reference(nlp):
    words = ["Bob", "came", ".", "He", "left", ".", "Bye"]
    starts = [True, False, False, True, False, False, True]
    reference = Doc(nlp.vocab, words=words, sent_starts=starts)
    expected = [(0, 3), (3, 6), (6, 7)]
    # The predicted doc has no sentences (as spaCy's corpus reader makes it): the reference's.
    assert sentence_runs(Example(Doc(nlp.vocab, words=words), reference)) == expected
    # Its own sentences come first.
    own = Doc(nlp.vocab, words=words, sent_starts=[True] + [False] * 6)
    assert sentence_runs(Example(own, reference)) == [(0, 7)]
    # Other tokens: the reference's starts through spaCy's alignment.
    retokenized = Doc(
        nlp.vocab, words=["Bob", "came.", "He", "left", ".", "Bye"], spaces=[True, True, True, False, True, False]
    )
    assert sentence_runs(Example(retokenized, reference)) == [(0, 2), (2, 5), (5, 6)]
    # A reference without sentences: one run.
    assert sentence_runs(Example(Doc(nlp.vocab, words=words), Doc(nlp.vocab, words=words))) == [(0, 7)]


@pytest.mark.parametrize("same_tokens", [True, False])
def test_whitespace_at_a_gold_entity_edge_is_outside_it(nlp, same_tokens):
    """Raw text's line breaks at a gold entity's edges ("Bob Smith\\n\\n") are not part of
    it: the gold tags are those of the entity on its words (nothing starts or ends on whitespace)."""
    scheme = TagScheme("BILOU", ["PER"])
    words = ["We", "met", "\n", "Bob", "Smith", "\n\n", "in", "Paris", "."]
    reference_words = words if same_tokens else words[:-2] + ["Paris."]
    reference = Doc(nlp.vocab, words=reference_words, spaces=[False] * len(reference_words))
    reference.ents = [Span(reference, 2, 6, label="PER")]
    example = Example(Doc(nlp.vocab, words=words, spaces=[False] * len(words)), reference)
    tags = gold_tags(example, scheme).tolist()
    b_per, l_per = scheme.tag_id("B", 0), scheme.tag_id("L", 0)
    assert tags[:7] == [0, 0, 0, b_per, l_per, 0, 0]


def _retokenized_example(nlp):
    """An example whose predicted tokens are not the reference's, as a case variant's are."""
    words = ["Ann", "met", "Bob", "in", "New", "York-based", "Acme"]
    reference = reference_doc(nlp, words, [None] * 7, spaces=[True, True, True, True, True, True, False])
    reference.ents = [Span(reference, 0, 1, "PER"), Span(reference, 2, 3, "PER")]
    spaces = [True, True, True, True, True, False, False, True, False]
    words = ["Ann", "met", "Bob", "in", "New", "York", "-", "based", "Acme"]
    return Example(Doc(nlp.vocab, words=words, spaces=spaces), reference)


def test_the_gold_cache_aligns_an_example_once_while_nothing_it_reads_changes(nlp, monkeypatch):
    calls = []
    monkeypatch.setattr(gold, "gold_tags", lambda example, scheme: calls.append(1) or gold_tags(example, scheme))
    scheme = TagScheme("BILOU", ["PER"])
    cache = GoldCache()
    example = _retokenized_example(nlp)
    tags, runs = cache.gold(example, scheme)
    assert tags.tolist() == gold_tags(example, scheme).tolist() and runs == sentence_runs(example)
    tags[0] = 99  # the caller may change its copy
    copied = Example(example.predicted.copy(), example.reference)  # what spaCy's update hands over each epoch
    assert cache.gold(copied, scheme)[0].tolist() == gold_tags(example, scheme).tolist() and len(calls) == 1
    # Anything gold_tags reads changed: aligned anew.
    wider = TagScheme("BILOU", ["LOC", "PER"])  # PER's tags have other ids here
    assert cache.gold(copied, wider)[0].tolist() == gold_tags(example, wider).tolist() and len(calls) == 2
    assert gold_tags(example, wider).tolist() != gold_tags(example, scheme).tolist()
    example.reference.ents = [Span(example.reference, 0, 1, "PER")]
    assert cache.gold(copied, scheme)[0].tolist() == gold_tags(example, scheme).tolist() and len(calls) == 3
    retokenized = Example(Doc(nlp.vocab, words=[t.text for t in example.reference]), example.reference)
    assert cache.gold(retokenized, scheme)[0].tolist() == gold_tags(retokenized, scheme).tolist() and len(calls) == 4


def test_the_gold_cache_keeps_no_doc_alive(nlp):
    cache = GoldCache()
    example = _retokenized_example(nlp)
    cache.gold(example, TagScheme("BIO", ["PER"]))
    assert len(cache._entries) == 1
    del example
    gc.collect()
    assert len(cache._entries) == 0


def test_training_on_the_same_examples_again_learns_what_fresh_copies_teach():
    """The second epoch reads the cached gold of the same reference docs, or aligns fresh ones: same weights."""

    def trained(fresh: bool):
        nlp = spacy.blank("en")
        nlp.add_pipe("bioner")
        examples = make_examples(nlp, TRAIN_DATA)
        nlp.initialize(lambda: examples)
        for _ in range(3):
            nlp.update(make_examples(nlp, TRAIN_DATA) if fresh else examples)
        return nlp.get_pipe("bioner").model.averages()

    for cached, fresh in zip(trained(False), trained(True)):
        assert numpy.array_equal(cached, fresh)
