"""The compiled passes (ner/passes.pyx) give what decoding's Python steps give, to the bit."""

import numpy
import pytest
import spacy
from conftest import train_nlp
from hypothesis import given, settings
from hypothesis import strategies as st
from spacy.tokens import Doc

from spacy_bioner.ner import decoder
from spacy_bioner.ner.batch import lay_out
from spacy_bioner.ner.featurizer import match_sources
from spacy_bioner.ner.trellis import allowed_tags

# Training words (so the memory matches "Acme Corp" and "Alice Smith"), new words, punctuation.
WORDS = [
    "Alice",
    "Smith",
    "Bob",
    "Acme",
    "Corp",
    "Paris",
    "Berlin",
    "Carol",
    "Jones",
    "works",
    "in",
    "at",
    "lives",
    "hired",
    "the",
    "Oslo",
    "ACME",
    "paris",
    "Nothing",
    ".",
    ",",
    "-",
    ":",
]


def with_random_weights(features=None, patterns=()):
    """A trained bioner (small table) whose averaged weights are then drawn at random: every
    feature scores, so a different order of float32 additions would show in the scores."""
    config = {"n_buckets": 4096}
    if features is not None:
        config["features"] = features
    nlp = spacy.blank("en")
    nlp.add_pipe("bioner", config=config).add_patterns(patterns)
    train_nlp(nlp=nlp, epochs=3)
    model = nlp.get_pipe("bioner").model
    emission, transition = model.averages()
    rng = numpy.random.default_rng(0)
    model.load_averages(
        rng.normal(size=emission.shape).astype(numpy.float32), rng.normal(size=transition.shape).astype(numpy.float32)
    )
    return nlp


# 20 term-list labels (more than featurizer.PACKED_ABOVE: the Python steps pack the columns), several per term.
TERM_LABELS = [f"T{i}" for i in range(20)]
PATTERNS = [
    {"label": label, "pattern": term}
    for i, label in enumerate(TERM_LABELS)
    for term in ("Oslo", "Acme Corp", "Paris", "works at")[: 1 + i % 4]
]
PIPELINES = {
    "default features": lambda: with_random_weights(),
    "no document, history or memory": lambda: with_random_weights(features=["word", "window", "shape"]),
    "term lists": lambda: with_random_weights(patterns=PATTERNS),
}


@pytest.fixture(scope="module")
def default_nlp():
    return PIPELINES["default features"]()


@pytest.fixture(scope="module", params=sorted(PIPELINES))
def any_nlp(request):
    return PIPELINES[request.param]()


def decoded_both_ways(ner, docs):
    """decode(ner, docs) through the compiled passes, and through the Python steps alone."""
    compiled = decoder.decode(ner, docs)
    is_plain = decoder.is_plain
    decoder.is_plain = lambda ner, layout: False
    try:
        stepwise = decoder.decode(ner, docs)
    finally:
        decoder.is_plain = is_plain
    return compiled, stepwise


def assert_same(compiled, stepwise):
    assert compiled.scores.dtype == stepwise.scores.dtype == numpy.float32
    assert compiled.scores.tobytes() == stepwise.scores.tobytes()
    for name in ("first_pass", "best_path", "tags"):
        assert getattr(compiled, name).tolist() == getattr(stepwise, name).tolist(), name


docs_words = st.lists(st.lists(st.sampled_from(WORDS), min_size=0, max_size=25), min_size=1, max_size=4)


def make_docs(vocab, batch, starts_seed):
    """Docs of these words, some with sentence starts inside."""
    rng = numpy.random.default_rng(starts_seed)
    docs = []
    for words in batch:
        starts = [True] + [bool(rng.random() < 0.2) for _ in words[1:]] if words else []
        docs.append(Doc(vocab, words=words, sent_starts=starts or None))
    return docs


@settings(max_examples=40)
@given(batch=docs_words, starts_seed=st.integers(0, 2**16))
def test_compiled_passes_equal_the_python_steps(any_nlp, batch, starts_seed):
    ner = any_nlp.get_pipe("bioner")
    docs = make_docs(any_nlp.vocab, batch, starts_seed)
    assert decoder.is_plain(ner, lay_out(ner, docs))
    assert_same(*decoded_both_ways(ner, docs))


def test_compiled_passes_add_the_entity_bias_as_the_steps_do(default_nlp):
    biased = default_nlp.get_pipe("bioner").with_settings(confidence={"entity_bias": 1.7})
    docs = [
        Doc(default_nlp.vocab, words="Bob works at Acme Corp in Oslo .".split()),
        Doc(default_nlp.vocab, words=["Alice"]),
    ]
    compiled, stepwise = decoded_both_ways(biased, docs)
    assert_same(compiled, stepwise)
    assert not numpy.array_equal(compiled.scores, decoder.decode(default_nlp.get_pipe("bioner"), docs).scores)


def test_compiled_passes_with_short_form_columns(default_nlp):
    ner = default_nlp.get_pipe("bioner")
    defining = Doc(default_nlp.vocab, words="Bob works at Acme Corp ( AC ) in Oslo ; AC hired Alice .".split())
    layout = lay_out(ner, [defining, Doc(default_nlp.vocab, words=["AC", "works"])])
    assert layout.abbreviation_starts.any()
    assert_same(*decoded_both_ways(ner, [defining, Doc(default_nlp.vocab, words=["AC", "works"])]))


def test_batches_the_compiled_passes_do_not_take(default_nlp):
    """Whitespace tokens and weights other than dense perceptron ones go through the Python steps."""
    nlp = default_nlp
    ner = nlp.get_pipe("bioner")
    spaced = nlp.make_doc("Bob works\n\nat Acme Corp")
    assert not decoder.is_plain(ner, lay_out(ner, [spaced]))
    assert_same(*decoded_both_ways(ner, [spaced]))  # the same steps both ways
    hmm = train_nlp(
        {"n_buckets": 4096, "trainer": {"@misc": "bioner.hmm.v1"}, "features": ["word", "window"]}, epochs=1
    )
    hmm_ner = hmm.get_pipe("bioner")
    assert not decoder.is_plain(hmm_ner, lay_out(hmm_ner, [hmm.make_doc("Bob works")]))


def test_compiled_passes_are_made_once_per_set_of_weights():
    """Made on the first call and kept; training, or a new label, makes them again, and they follow."""
    nlp = with_random_weights()
    ner = nlp.get_pipe("bioner")
    docs = [Doc(nlp.vocab, words="Bob works at Acme Corp in Oslo .".split())]
    assert_same(*decoded_both_ways(ner, docs))
    made = ner.plain_passes
    decoder.decode(ner, docs)
    assert ner.plain_passes is made
    train_nlp(nlp=nlp, epochs=1)  # the averaged weights change
    compiled, stepwise = decoded_both_ways(ner, docs)
    assert_same(compiled, stepwise)
    assert ner.plain_passes is not made
    made = ner.plain_passes
    ner.add_label("EVENT")
    assert_same(*decoded_both_ways(ner, docs))
    assert ner.plain_passes is not made


def test_the_compiled_passes_check_their_arrays(default_nlp):
    """Arrays of the wrong shape or type are refused with a ValueError, not read past their ends."""
    ner = default_nlp.get_pipe("bioner")
    docs = [Doc(default_nlp.vocab, words=["Alice", "Smith", "works", "at", "Acme", "Corp"])]
    layout = lay_out(ner, docs)
    allowed = allowed_tags(ner, layout, [[]])
    sources = match_sources(ner, layout, ner.gazetteer.match_batch(docs))
    passes, heads = decoder.plain_passes(ner), layout.abbreviation_heads
    assert sources  # the memory's codes
    passes.run(layout, sources, heads, 0.0, allowed)
    with pytest.raises(ValueError, match="allowed"):
        passes.run(layout, sources, heads, 0.0, allowed[:-1])
    with pytest.raises(ValueError, match="C-ordered array"):
        passes.run(layout, sources, heads, 0.0, allowed.astype(numpy.int64))
    codes, ids = sources[0]
    with pytest.raises(ValueError, match="match codes"):
        passes.run(layout, [(codes[:-1], ids)], heads, 0.0, allowed)
    with pytest.raises(ValueError, match="C-ordered array"):
        passes.run(layout, [(codes.astype(numpy.int32), ids)], heads, 0.0, allowed)
