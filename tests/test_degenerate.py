"""Degenerate input: entity length bounded by training (or `[rules] max_entity_length`), and lists
of names that Viterbi fuses into one entity of a type none of them has, split (`[rules] split_name_lists`)."""

import itertools

import numpy
import pytest
import spacy
from conftest import train_nlp
from hypothesis import given, settings
from hypothesis import strategies as st
from spacy.tokens import Doc

from spacy_bioner.core.schemes import TagScheme
from spacy_bioner.ner.batch import lay_out
from spacy_bioner.ner.bounds import bounded_viterbi
from spacy_bioner.ner.name_lists import split_name_lists


def best_within(scheme, emissions, transitions, allowed, bound):
    """Brute force: the best valid tags with no entity longer than bound."""
    best, best_tags = -numpy.inf, None
    n, n_tags = emissions.shape
    for tags in itertools.product(range(n_tags), repeat=n):
        if not all(allowed[i, t] for i, t in enumerate(tags)) or not scheme.is_valid(tags):
            continue
        if any(end - start > bound for start, end, _ in scheme.to_spans(tags)):
            continue
        score = sum(
            float(transitions[p, t]) + float(emissions[i, t])
            for i, (p, t) in enumerate(zip((n_tags,) + tags[:-1], tags))
        )
        if score > best:
            best, best_tags = score, tags
    return best, best_tags


@settings(max_examples=80)
@given(name=st.sampled_from(["BIO", "BILOU"]), n=st.integers(1, 5), bound=st.integers(1, 3), seed=st.integers(0, 2**31))
def test_bounded_viterbi_is_the_best_path_with_no_entity_over_the_bound(name, n, bound, seed):
    rng = numpy.random.default_rng(seed)
    scheme = TagScheme(name, ["A", "B"])
    n_tags = scheme.n_tags
    emissions = rng.normal(size=(n, n_tags)) + 2 * (numpy.arange(n_tags) > 0)  # entities pay, so bounds bind
    transitions = rng.normal(size=(n_tags + 1, n_tags))
    allowed = scheme.allowed(
        numpy.eye(1, n, dtype=bool)[0], numpy.zeros(n, dtype=bool), numpy.full(n, -1, dtype=numpy.int32)
    )
    best, _ = best_within(scheme, emissions, transitions, allowed, bound)
    tags = bounded_viterbi(
        scheme, emissions, allowed, scheme.transitions().astype(numpy.uint8), transitions, None, bound, n_tags, None
    )
    assert scheme.is_valid(tags.tolist())
    assert all(end - start <= bound for start, end, _ in scheme.to_spans(tags))
    score = sum(
        float(transitions[p, t]) + float(emissions[i, t])
        for i, (p, t) in enumerate(zip([n_tags] + tags[:-1].tolist(), tags.tolist()))
    )
    assert score == pytest.approx(best, abs=1e-6)


REPEATED = [
    ("London is big .", [(0, 6, "LOC")]),
    ("Acme Corp Acme Corp Acme Corp hired Ann", [(0, 29, "ORG"), (36, 39, "PER")]),
]


def test_no_entity_is_longer_than_training_saw_or_the_setting_says(tmp_path):
    nlp = train_nlp(data=REPEATED)
    ner = nlp.get_pipe("bioner")
    assert ner.cfg["longest_entity"] == 6
    text = " ".join(["Acme Corp"] * 40)
    assert max(len(ent) for ent in nlp(text).ents) <= 6
    nlp.to_disk(tmp_path)
    loaded = spacy.load(tmp_path)
    assert max(len(ent) for ent in loaded(text).ents) <= 6
    strict = spacy.load(tmp_path, config={"components": {"bioner": {"rules": {"max_entity_length": 2}}}})
    assert max(len(ent) for ent in strict(text).ents) <= 2


def test_a_list_of_names_fused_into_another_type_is_split_into_its_names():
    data = [
        ("Paris is big .", [(0, 5, "LOC")]),
        ("Berlin is big .", [(0, 6, "LOC")]),
        ("Acme Corp is big .", [(0, 9, "ORG")]),
        ("Ann Lee and Bob Ray met", [(0, 7, "PER"), (12, 19, "PER")]),
    ]
    nlp = train_nlp(data=data, config={"features": ["word", "shape", "memory"]})
    ner = nlp.get_pipe("bioner")
    for words, fused, expected in [
        (["Paris", "Berlin"], "ORG", [("Paris", "LOC"), ("Berlin", "LOC")]),  # two LOC names are no ORG
        (["Ann", "Lee", "Bob", "Ray"], "PER", [("Ann Lee Bob Ray", "PER")]),  # names of its own type: kept
        (["Paris", "Zork"], "ORG", [("Paris Zork", "ORG")]),  # a word that is no known name: kept
    ]:
        doc = Doc(nlp.vocab, words=words)
        layout = lay_out(ner, [doc])
        tags = ner.scheme.from_spans([(0, len(words), ner.labels.index(fused))], len(words))
        allowed = numpy.ones((len(words), ner.scheme.n_tags), dtype=bool)
        split = split_name_lists(ner, [doc], layout, tags, allowed, [ner.gazetteer.match(doc)])
        assert [(doc[s:e].text, ner.labels[label]) for s, e, label in ner.scheme.to_spans(split)] == expected
    preset = Doc(nlp.vocab, words=["Paris", "Berlin", "is", "big"], ents=["B-ORG", "I-ORG", "O", "O"])
    assert [(ent.text, ent.label_) for ent in ner(preset).ents] == [("Paris Berlin", "ORG")]  # set before: never split
    off = spacy.blank("en")
    off.add_pipe("bioner", config={"rules": {"@misc": "bioner.rules.v1", "split_name_lists": False}})
    assert not off.get_pipe("bioner").settings.rules.split_name_lists
