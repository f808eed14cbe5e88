"""The compiled layout (ner/layout.pyx) gives what the layout's stages give, step by step."""

import numpy
import pytest
from conftest import train_nlp, trained_ner
from hypothesis import given, settings
from hypothesis import strategies as st
from spacy.tokens import Doc

from spacy_bioner.ner.batch import _stages, layout_pass
from spacy_bioner.ner.letters import FIRST_WORD_HASHES
from spacy_bioner.ner.screens import letter_docs

# Training words (the memory matches "Acme Corp" and "Alice Smith"), short forms and acronyms, salutations,
# line breaks, sentence ends, lower-case words, new words.
WORDS = ["Alice", "Smith", "Acme", "Corp", "Paris", "works", "at", "the", "alice", "smith", "acme", "corp", "."]
WORDS += ["(", ")", "-", "AF", "IDDM", "atrial", "fibrillation", "insulin", "dependent", "diabetes", "mellitus"]
WORDS += ["Hi", "Dear", ",", "\n", "\n\n", "  ", "!", "?", "NATO", "Oslo", "zebra"]

FEATURES = {
    "default features": None,
    "raw-text families": ["word", "window", "shape", "memory", "abbreviations", "sentences", "lowercase_docs"],
    "no memory, no short forms": ["word", "window", "shape"],
}
RULES = {
    "default rules": {},
    "no letters, no acronyms": {"letters": False, "acronym_labels": False},
}


@pytest.fixture(scope="module", params=sorted(FEATURES))
def ner(request):
    return trained_ner(FEATURES[request.param], epochs=2)


# Phrases that define a short form, or spell an acronym's initials, among single words.
PHRASES = [["atrial", "fibrillation", "(", "AF", ")"], ["insulin", "dependent", "diabetes", "mellitus"]]
pieces = st.one_of(st.sampled_from(WORDS).map(lambda word: [word]), st.sampled_from(PHRASES))
batches = st.lists(
    st.lists(pieces, max_size=8).map(lambda drawn: [word for piece in drawn for word in piece]), min_size=1, max_size=3
)


def screened_by_stages(ner, docs):
    """What LayoutPass.run gives, from the stages: batch_layout, rows_and_mentions, the memory and its
    codes (batch._stages), then the short-form and letter screens as lay_out's stages call them."""
    offsets, sentence, sent_starts, is_space, rows, mentions, matches, codes = _stages(ner, docs, None)
    rules, features = ner.settings.rules, ner.settings.features
    short_forms = None
    if "abbreviations" in features or rules.acronym_labels:
        short_forms = ner.featurizer.initials.docs_with_mentions(
            ner.featurizer.lexicon, docs, rows, is_space, sentence, rules.acronym_labels
        )
    letters = letter_docs(docs, is_space.view(numpy.uint8), FIRST_WORD_HASHES) if rules.letters else None
    spaced = bool(is_space.any())
    return offsets, sentence, sent_starts, is_space, rows, mentions, spaced, short_forms, letters, matches, codes


@pytest.mark.parametrize("rules", sorted(RULES))
@settings(max_examples=60, deadline=None)
@given(batch=batches)
def test_compiled_layout_is_the_stages_layout(ner, rules, batch):
    variant = ner.with_settings(rules=RULES[rules])
    docs = [Doc(ner.vocab, words=words) for words in batch]
    compiled = layout_pass(variant).run(docs)
    expected = screened_by_stages(variant, docs)
    assert len(compiled) == len(expected)
    for got, want in zip(compiled, expected):
        if isinstance(want, numpy.ndarray):
            assert got.dtype == want.dtype and got.shape == want.shape
            assert numpy.array_equal(got, want)
        else:
            assert got == want


def test_the_compiled_layout_follows_the_labels_and_settings():
    """Made again when a label is added (the codes gain a column) and for a variant's own rules."""
    nlp = train_nlp({"n_buckets": 4096}, epochs=2)
    ner = nlp.get_pipe("bioner")
    doc = Doc(nlp.vocab, words=["Hi", "Alice", "Smith", "at", "Acme", "Corp"])
    made = layout_pass(ner)
    assert layout_pass(ner) is made
    assert made.run([doc])[-1].shape == (6, len(ner.labels))
    ner.add_label("PRODUCT")
    assert layout_pass(ner) is not made
    assert layout_pass(ner).run([doc])[-1].shape == (6, len(ner.labels))
    quiet = ner.with_settings(rules={"letters": False})
    assert layout_pass(quiet).run([doc])[8] is None
    assert layout_pass(ner).run([doc])[8] == [0]  # "Hi" may open a salutation


def test_an_empty_batch_lays_out_empty():
    ner = train_nlp({"n_buckets": 4096}, epochs=1).get_pipe("bioner")
    laid_out = layout_pass(ner).run([Doc(ner.vocab, words=[])])
    assert laid_out[0].tolist() == [0, 0] and all(len(array) == 0 for array in laid_out[1:6])
    assert laid_out[9].shape == (0, 4) and laid_out[10].shape == (0, len(ner.labels))
