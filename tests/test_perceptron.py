"""The Cython perceptron against a plain numpy reference."""

import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from spacy.strings import get_string_id

from spacy_bioner.core.features import FeatureExtractor, Lexicon
from spacy_bioner.core.perceptron import DROPPED, AveragedPerceptron
from spacy_bioner.core.schemes import OUTSIDE, TagScheme
from spacy_bioner.core.sparse_perceptron import SparsePerceptron
from spacy_bioner.core.templates import (
    ATTRIBUTE_NAMES,
    CLUSTER_ATTRIBUTES,
    N_ATTRIBUTES,
    WORD_ATTRIBUTES,
    attribute_values,
    compile_templates,
    word_attributes,
    word_case_of,
)
from spacy_bioner.core.word_case import shipped_word_case
from spacy_bioner.core.word_clusters import shipped_clusters


def reference_scores(weights, features):
    return numpy.stack([weights[[f for f in row if f != DROPPED]].sum(axis=0) for row in features])


@settings(max_examples=50)
@given(seed=st.integers(0, 2**31), steps=st.integers(1, 8))
def test_updates_and_averages_match_reference(seed, steps):
    rng = numpy.random.default_rng(seed)
    n_buckets, n_tags, n_features = 13, 4, 3
    model = AveragedPerceptron(n_buckets, n_tags)
    emission = numpy.zeros((n_buckets, n_tags))
    transition = numpy.zeros((n_tags + 1, n_tags))
    history = [(emission.copy(), transition.copy())]
    for _ in range(steps):
        n = int(rng.integers(1, 5))
        features = rng.integers(0, n_buckets, size=(n, n_features)).astype(numpy.uint32)
        features[rng.random((n, n_features)) < 0.2] = DROPPED
        gold = rng.integers(0, n_tags, size=n).astype(numpy.int32)
        guess = rng.integers(0, n_tags, size=n).astype(numpy.int32)
        assert numpy.allclose(model.scores(features, averaged=False), reference_scores(emission, features))
        model.update(features, gold, guess)
        for i in range(n):
            for f in features[i]:
                if f != DROPPED and gold[i] != guess[i]:
                    emission[f, gold[i]] += 1
                    emission[f, guess[i]] -= 1
        gold_path = [n_tags] + gold.tolist()
        guess_path = [n_tags] + guess.tolist()
        for i in range(n):
            if (gold_path[i], gold_path[i + 1]) != (guess_path[i], guess_path[i + 1]):
                transition[gold_path[i], gold_path[i + 1]] += 1
                transition[guess_path[i], guess_path[i + 1]] -= 1
        history.append((emission.copy(), transition.copy()))
        assert numpy.array_equal(model.emission, emission)
        assert numpy.array_equal(model.transition, transition)
    # The average is over the weights before the first and after every step.
    averaged_emission, averaged_transition = model.averages()
    assert numpy.allclose(averaged_emission, numpy.mean([e for e, _ in history], axis=0), atol=1e-5)
    assert numpy.allclose(averaged_transition, numpy.mean([t for _, t in history], axis=0), atol=1e-5)


def test_loaded_weights_are_their_own_average_until_trained_further():
    trained = AveragedPerceptron(64, 3)
    features = numpy.array([[1, 2], [3, 4]], dtype=numpy.uint32)
    for gold in ([0, 1], [2, 1], [0, 1]):
        trained.update(features, numpy.array(gold, dtype=numpy.int32), numpy.array([1, 2], dtype=numpy.int32))
    loaded = AveragedPerceptron(64, 3)
    loaded.load_arrays(trained.to_arrays())
    emission = loaded.averages()[0]
    start = emission.copy()
    assert numpy.shares_memory(emission, loaded.emission) and not emission.flags.writeable  # no averaging pass, no copy
    assert numpy.array_equal(emission, trained.averages()[0])
    assert numpy.array_equal(loaded.scores(features), trained.scores(features))
    # Trained further, the average is over the steps since loading, the loaded weights counting as the start.
    loaded.update(features, numpy.array([0, 0], dtype=numpy.int32), numpy.array([1, 2], dtype=numpy.int32))
    after = loaded.averages()[0]
    assert not numpy.shares_memory(after, loaded.emission)
    assert numpy.allclose(after, (start.astype(numpy.float64) + loaded.emission) / 2)


@settings(max_examples=600)
@given(
    text=st.one_of(
        st.text(max_size=12),
        st.text(alphabet=st.characters(max_codepoint=127), max_size=12),
        st.text(alphabet=st.characters(max_codepoint=127), min_size=60, max_size=70),  # C up to 64, then Python
        st.text(alphabet="aAzZ09-.'_+ \n", max_size=12),  # runs of one shape letter, marks, case edges
        st.sampled_from(["İstanbul", "ΣΑΣΑ", "Straße", "U.S.", "1,000", "O'Neill", "", "-", "McDonald", "iPhone"]),
        st.sampled_from(["the", "Seattle", "running", "Smith", "ibuprofen"]),  # in the cluster and case tables
    )
)
def test_word_attributes_are_the_templates_attributes_hashed(text):
    values = [attr(text) for _, attr in WORD_ATTRIBUTES] + ["none"] * len(CLUSTER_ATTRIBUTES)
    assert attribute_values(text) == values + ["none"] * 3  # the word case table unread: no family reads it
    cased = values + list(shipped_word_case().values_of(text))
    assert attribute_values(text, word_case=word_case_of(["casing"])) == cased
    assert word_attributes(text, word_case=shipped_word_case().values_of) == [
        get_string_id(f"{name}={value}") for name, value in zip(ATTRIBUTE_NAMES, cased)
    ]
    assert word_case_of(["word", "clusters"]) is None
    ids = shipped_clusters().word_ids(text)
    clustered = values[: len(WORD_ATTRIBUTES)] + (["none"] * 3 if ids is None else [str(i) for i in ids])
    assert word_attributes(text, clusters=shipped_clusters().word_ids, word_case=shipped_word_case().values_of) == [
        get_string_id(f"{name}={value}") for name, value in zip(ATTRIBUTE_NAMES, clustered + cased[-3:])
    ]


def test_resize_keeps_weights_and_moves_the_start_row():
    model = AveragedPerceptron(5, 3)
    model.update(
        numpy.array([[1], [2]], dtype=numpy.uint32),
        numpy.array([1, 2], dtype=numpy.int32),
        numpy.array([0, 0], dtype=numpy.int32),
    )
    emission, transition = (a.copy() for a in model.averages())
    model.resize(5)
    new_emission, new_transition = model.averages()
    assert numpy.array_equal(new_emission[:, :3], emission) and not new_emission[:, 3:].any()
    assert numpy.array_equal(new_transition[:3, :3], transition[:3])
    assert numpy.array_equal(new_transition[-1, :3], transition[-1])


def test_feature_extractor_matches_python_reference():
    templates = compile_templates(["word", "window", "conjunctions"])
    lexicon = Lexicon(word_attributes, N_ATTRIBUTES)
    words = ["Alice", "met", "Bob", "in", "Paris", "."]

    orths = numpy.array([get_string_id(w) for w in words], dtype=numpy.uint64)
    strings = {get_string_id(w): w for w in words}
    rows = lexicon.rows(orths, strings)
    sentence = numpy.array([1, 1, 1, 2, 2, 2], dtype=numpy.int32)
    extractor = FeatureExtractor(templates, 1000)
    features = extractor.extract(rows, lexicon.table, sentence)
    assert features.shape == (6, len(templates))
    # Same word in the same context gives the same ids; windows stop at sentence edges.
    words2 = ["in", "Paris", "."]
    orths2 = numpy.array([get_string_id(w) for w in words2], dtype=numpy.uint64)
    features2 = extractor.extract(lexicon.rows(orths2, strings), lexicon.table, numpy.ones(3, dtype=numpy.int32))
    assert numpy.array_equal(features[3:], features2)
    assert not numpy.array_equal(features[0], features2[0])
    assert features.max() < 1000
    assert len(lexicon) == 6


def test_scores_of_long_batches_match_reference():
    # Long enough for the kernel's look-ahead over later tokens' rows.
    rng = numpy.random.default_rng(7)
    n_buckets, n_tags = 4096, 17
    model = AveragedPerceptron(n_buckets, n_tags)
    weights = rng.normal(size=(n_buckets, n_tags)).astype(numpy.float32)
    model.load_averages(weights, numpy.zeros((n_tags + 1, n_tags), dtype=numpy.float32))
    features = rng.integers(0, n_buckets, size=(300, 9)).astype(numpy.uint32)
    features[rng.random(features.shape) < 0.3] = DROPPED
    assert numpy.allclose(model.scores(features), reference_scores(weights, features), atol=1e-5)


def test_power_of_two_tables_take_the_low_bits_of_the_hash():
    templates = compile_templates(["word", "window", "conjunctions"])
    lexicon = Lexicon(word_attributes, N_ATTRIBUTES)
    words = ["Alice", "met", "Bob", "in", "Paris", "."]
    rows = lexicon.rows(
        numpy.array([get_string_id(w) for w in words], dtype=numpy.uint64), {get_string_id(w): w for w in words}
    )
    sentence = numpy.ones(len(words), dtype=numpy.int32)
    wide = FeatureExtractor(templates, 2**30).extract(rows, lexicon.table, sentence)
    assert numpy.array_equal(FeatureExtractor(templates, 1024).extract(rows, lexicon.table, sentence), wide % 1024)
    assert FeatureExtractor(templates, 1000).extract(rows, lexicon.table, sentence).max() < 1000


def test_lexicon_rows_hold_the_attribute_hashes_and_refuse_a_short_row():
    words = ["Alice", "met", "Bob", "Alice"]
    orths = numpy.array([get_string_id(w) for w in words], dtype=numpy.uint64)
    strings = {get_string_id(w): w for w in words}
    lexicon = Lexicon(word_attributes, N_ATTRIBUTES)
    rows = lexicon.rows(orths, strings)
    assert rows.tolist() == [0, 1, 2, 0]
    assert lexicon.table[:3].tolist() == [word_attributes(w) for w in words[:3]]
    short = Lexicon(lambda text: word_attributes(text)[:-1], N_ATTRIBUTES)
    with pytest.raises(ValueError, match=f"{N_ATTRIBUTES - 1} attribute hashes for 'Alice'"):
        short.rows(orths, strings)


@settings(max_examples=40)
@given(seed=st.integers(0, 2**16), factored=st.booleans(), margin=st.sampled_from([0.0, 1.5, 100.0]))
def test_steps_equal_one_python_step_per_run(seed, factored, margin):
    """AveragedPerceptron.steps gives the weights and loss of scoring, adding the cost, decoding and
    updating each run in turn from Python (with_cost, viterbi, update), with unknown gold tags too."""
    from spacy_bioner.core.decode import predecessor_lists, viterbi
    from spacy_bioner.core.perceptron_pipe import with_cost
    from spacy_bioner.core.schemes import TagScheme
    from spacy_bioner.core.sparse_perceptron import SparsePerceptron

    rng = numpy.random.default_rng(seed)
    scheme = TagScheme("BILOU", ["A", "B"])
    legal = scheme.transitions().astype(numpy.uint8)
    predecessors = predecessor_lists(legal, factored)
    n, n_buckets = int(rng.integers(1, 30)), 64
    features = rng.integers(0, n_buckets, size=(n, 5)).astype(numpy.uint32)
    features[rng.random(features.shape) < 0.1] = DROPPED
    gold = numpy.array(
        [int(t) for t in scheme.from_spans([(0, 1, 0), (2, min(4, n), 1)] if n > 2 else [], n)], dtype=numpy.int32
    )
    known = numpy.where(rng.random(n) < 0.8, gold, -1).astype(numpy.int32)
    allowed = numpy.ones((n, scheme.n_tags), dtype=numpy.uint8)
    cuts = sorted({0, n, *rng.integers(1, n, size=3).tolist()}) if n > 1 else [0, n]
    runs = list(zip(cuts, cuts[1:]))
    for kind in (AveragedPerceptron, SparsePerceptron):
        stepped, by_hand = kind(n_buckets, scheme.n_tags), kind(n_buckets, scheme.n_tags)
        if factored:
            stepped.factor(scheme.continuing())
            by_hand.factor(scheme.continuing())
        for model in (stepped, by_hand):  # the same weights to start from, so that guesses differ from gold
            model.update(features, gold, numpy.roll(gold, 1).astype(numpy.int32))
        loss = stepped.steps(features, allowed, gold, known, runs, margin, legal, predecessors)
        expected = 0.0
        for start, end in runs:
            scores = with_cost(by_hand.scores(features[start:end], averaged=False), known[start:end], margin)
            transitions, factors = by_hand.decoding_weights(averaged=False)
            guess = viterbi(scores, transitions, allowed[start:end], legal, None, factors, predecessors)
            by_hand.update(features[start:end], gold[start:end], guess)
            expected += float((gold[start:end] != guess).sum())
        assert loss == expected
        every_row = numpy.arange(n_buckets, dtype=numpy.uint32)[:, None]  # each bucket's averaged weights
        for averaged in (True, False):
            assert (
                stepped.scores(every_row, averaged=averaged).tobytes()
                == by_hand.scores(every_row, averaged=averaged).tobytes()
            )
            assert stepped.transitions(averaged=averaged).tobytes() == by_hand.transitions(averaged=averaged).tobytes()


@pytest.mark.parametrize("kind", [AveragedPerceptron, SparsePerceptron])
@pytest.mark.parametrize("factored", [False, True])
def test_start_follows_gives_the_averaged_start_the_row_of_a_tag(kind, factored):
    scheme = TagScheme("BILOU", ["A", "B"])
    learned, tied = kind(20, scheme.n_tags), kind(20, scheme.n_tags)
    tied.start_follows = OUTSIDE
    features = numpy.array([[1], [2], [3]], dtype=numpy.uint32)
    for model in (learned, tied):
        if factored:
            model.factor(scheme.continuing())
        for _ in range(3):  # every sentence opens with an entity that the guesses miss
            model.update(features, scheme.from_spans([(0, 1, 0)], 3), scheme.from_spans([], 3))
    assert learned.transitions()[-1].argmax() == scheme.tag_id("U", 0)  # the start learned the opening entity
    for model, averaged in ((learned, True), (tied, False)):
        assert not numpy.array_equal(model.transitions(averaged=averaged)[-1], model.transitions(averaged=averaged)[0])
    assert numpy.array_equal(tied.transitions()[-1], tied.transitions()[OUTSIDE])
    pairs, factors = tied.decoding_weights()
    assert numpy.array_equal(pairs[-1], pairs[OUTSIDE])
    if factored:
        assert factors[0][-1] == factors[0][OUTSIDE]
    # The same averages survive conversion to sparse rows, and saved weights load as they were saved.
    if kind is AveragedPerceptron:
        assert numpy.array_equal(SparsePerceptron.from_dense(tied).transitions(), tied.transitions())
    loaded = kind(20, scheme.n_tags)
    loaded.start_follows = OUTSIDE
    learned_arrays = learned.to_arrays()
    loaded.load_arrays(learned_arrays)
    assert numpy.array_equal(loaded.decoding_weights()[0], learned_arrays["transition"])
