"""The scores counted over arrays (core/token_scores.py) against spaCy's own scorers, their oracle."""

import spacy
from hypothesis import given, settings
from hypothesis import strategies as st
from spacy.scorer import Scorer
from spacy.tokens import Doc
from spacy.training import Example

from spacy_bioner.core.token_scores import attr_accuracy, token_arrays
from spacy_bioner.parser.scoring import _scores_of_aligned_tokens, score_parse
from spacy_bioner.tagger.component import score_tags

VOCAB = spacy.blank("en").vocab
WORDS = ["We", "saw", "it", ".", "\n", " ", "Then", ",", "left"]
TAGS = ["NN", "VB", ".", ""]
POS = ["NOUN", "VERB", "PUNCT", ""]
# lower and upper case forms of one label, spaCy's ignored punctuation labels in both cases, missing labels
DEPS = ["nsubj", "ROOT", "obj", "Obj", "punct", "P", "dep", None]


@st.composite
def annotated(draw, words):
    """A doc of these words: tags and POS (some missing), and a parse (any tree, labels some missing), or
    sentence starts only, or neither."""
    n = len(words)
    kwargs = {}
    if draw(st.booleans()):
        kwargs["tags"] = draw(st.lists(st.sampled_from(TAGS), min_size=n, max_size=n))
        kwargs["pos"] = draw(st.lists(st.sampled_from(POS), min_size=n, max_size=n))
    shape = draw(st.sampled_from(["parse", "sentences", "none"]))
    if shape == "parse" and n:
        order = draw(st.permutations(range(n)))
        heads = [0] * n
        for rank, token in enumerate(order):  # a head earlier in the order: a tree, projective or not
            heads[token] = order[draw(st.integers(0, rank - 1))] if rank else token
        kwargs["heads"] = heads
        kwargs["deps"] = draw(st.lists(st.sampled_from(DEPS), min_size=n, max_size=n))
    elif shape == "sentences":
        kwargs["sent_starts"] = draw(st.lists(st.sampled_from([True, False, None]), min_size=n, max_size=n))
    return Doc(VOCAB, words=words, **kwargs)


@st.composite
def examples(draw):
    batch = []
    for _ in range(draw(st.integers(1, 4))):
        words = draw(st.lists(st.sampled_from(WORDS), max_size=8))
        batch.append(Example(draw(annotated(words)), draw(annotated(words))))
    return batch


@settings(max_examples=400, deadline=None)
@given(examples())
def test_parse_scores_are_spacys(batch):
    expected = _scores_of_aligned_tokens(batch)
    found = score_parse(batch)
    assert found == expected
    assert list(found) == list(expected)  # the same keys, in the same order
    if found["dep_las_per_type"] is not None:
        assert list(found["dep_las_per_type"]) == list(expected["dep_las_per_type"])


@settings(max_examples=400, deadline=None)
@given(examples())
def test_tag_and_pos_accuracy_are_spacys(batch):
    arrays = token_arrays(batch)
    for attr in ("tag", "pos"):
        assert attr_accuracy(arrays, attr) == Scorer.score_token_attr(batch, attr)


def test_examples_tokenized_otherwise_are_scored_by_spacy():
    predicted = Doc(VOCAB, words=["New", "York", "."], heads=[1, 1, 1], deps=["compound", "ROOT", "punct"])
    reference = Doc(VOCAB, words=["New York", "."], heads=[0, 0], deps=["ROOT", "punct"], tags=["NNP", "."])
    predicted.set_ents([])
    batch = [Example(predicted, reference)]
    assert token_arrays(batch) is None
    assert score_parse(batch) == _scores_of_aligned_tokens(batch)
    assert score_tags(batch) == {}  # the predicted doc is untagged, as spaCy's scorer is asked only for tagged docs
