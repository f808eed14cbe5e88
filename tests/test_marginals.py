import itertools

import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spacy_bioner.core.marginals import entity_probabilities
from spacy_bioner.core.schemes import TagScheme


def sequence_weights(scheme, emissions, transitions, allowed, temperature):
    """exp(score / T) of every tag sequence the masks allow, and their sum Z."""
    weights = {}
    n, n_tags = emissions.shape
    for tags in itertools.product(range(n_tags), repeat=n):
        if all(allowed[i, t] for i, t in enumerate(tags)) and scheme.is_valid(tags):
            score, prev = 0.0, n_tags
            for i, tag in enumerate(tags):
                score += float(transitions[prev, tag]) + float(emissions[i, tag])
                prev = tag
            weights[tags] = numpy.exp(score / temperature)
    return weights, sum(weights.values())


def continuation(scheme, tags, end, label):
    """The tag that would continue an entity after `end`: BIO's I, none in BILOU."""
    return scheme.tag_id("I", label) if scheme.name == "BIO" else -1


@settings(max_examples=60)
@given(
    name=st.sampled_from(["BIO", "BILOU"]),
    n=st.integers(1, 4),
    seed=st.integers(0, 2**31),
    temperature=st.sampled_from([0.5, 1.0, 3.0]),
)
def test_entity_probabilities_equal_brute_force(name, n, seed, temperature):
    rng = numpy.random.default_rng(seed)
    scheme = TagScheme(name, ["A", "B"])
    n_tags = scheme.n_tags
    emissions = rng.normal(size=(n, n_tags)).astype(numpy.float32)
    transitions = rng.normal(size=(n_tags + 1, n_tags)).astype(numpy.float32)
    allowed = scheme.allowed(numpy.zeros(n, bool), numpy.zeros(n, bool), numpy.full(n, -1, numpy.int32))
    legal = scheme.transitions().astype(numpy.uint8)
    weights, z = sequence_weights(scheme, emissions, transitions, allowed, temperature)
    decoded = max(weights, key=weights.get)
    spans = scheme.to_spans(decoded)
    entities = numpy.array(
        [[0, start, end, continuation(scheme, decoded, end, label)] for start, end, label in spans], dtype=numpy.int64
    ).reshape(-1, 4)
    probabilities = entity_probabilities(
        emissions,
        transitions,
        allowed,
        legal,
        numpy.array([0, n], dtype=numpy.int64),
        numpy.array(decoded, dtype=numpy.int32),
        entities,
        temperature,
    )
    for (start, end, label), probability in zip(spans, probabilities):
        expected = sum(w for tags, w in weights.items() if (start, end, label) in scheme.to_spans(tags)) / z
        assert probability == pytest.approx(expected, rel=1e-6, abs=1e-9)


def test_temperature_must_be_positive():
    scheme = TagScheme("BIO", ["A"])
    with pytest.raises(ValueError, match="temperature must be positive"):
        entity_probabilities(
            numpy.zeros((1, 3), numpy.float32),
            numpy.zeros((4, 3), numpy.float32),
            numpy.ones((1, 3), numpy.uint8),
            scheme.transitions().astype(numpy.uint8),
            numpy.array([0, 1]),
            numpy.zeros(1, numpy.int32),
            numpy.array([[0, 0, 1, 2]]),
            0.0,
        )


@settings(max_examples=40)
@given(name=st.sampled_from(["BIO", "BILOU"]), n=st.integers(1, 4), seed=st.integers(0, 2**31))
def test_span_probabilities_equal_brute_force(name, n, seed):
    from spacy_bioner.core.marginals import span_probabilities

    rng = numpy.random.default_rng(seed)
    scheme = TagScheme(name, ["A", "B"])
    n_tags, temperature = scheme.n_tags, 2.0
    emissions = rng.normal(size=(n, n_tags)).astype(numpy.float32)
    transitions = rng.normal(size=(n_tags + 1, n_tags)).astype(numpy.float32)
    allowed = scheme.allowed(numpy.zeros(n, bool), numpy.zeros(n, bool), numpy.full(n, -1, numpy.int32))
    weights, z = sequence_weights(scheme, emissions, transitions, allowed, temperature)
    moves = {m: [scheme.tag_id(m, label) if m in scheme.moves else -1 for label in range(2)] for m in "BILU"}
    label_tags = numpy.array([[moves[m][label] for m in "BILU"] for label in range(2)], dtype=numpy.int32)
    rows, probabilities = span_probabilities(
        emissions,
        transitions,
        allowed,
        scheme.transitions().astype(numpy.uint8),
        numpy.array([0, n], dtype=numpy.int64),
        label_tags,
        n,
        0.0,
        temperature,
    )
    listed = {(start, end, label): p for (_, start, end, label), p in zip(rows.tolist(), probabilities.tolist())}
    assert len(listed) == 2 * n * (n + 1) // 2  # every span of every label, at threshold 0
    for (start, end, label), probability in listed.items():
        expected = sum(w for tags, w in weights.items() if (start, end, label) in scheme.to_spans(tags)) / z
        assert probability == pytest.approx(expected, rel=1e-6, abs=1e-9)


@settings(max_examples=30)
@given(name=st.sampled_from(["BIO", "BILOU"]), n=st.integers(1, 4), seed=st.integers(0, 2**31))
def test_expected_counts_equal_brute_force(name, n, seed):
    from spacy_bioner.core.marginals import expected_counts

    rng = numpy.random.default_rng(seed)
    scheme = TagScheme(name, ["A"])
    n_tags = scheme.n_tags
    emissions = rng.normal(size=(n, n_tags)).astype(numpy.float32)
    transitions = rng.normal(size=(n_tags + 1, n_tags)).astype(numpy.float32)
    allowed = scheme.allowed(numpy.zeros(n, bool), numpy.zeros(n, bool), numpy.full(n, -1, numpy.int32))
    weights, z = sequence_weights(scheme, emissions, transitions, allowed, 1.0)
    marginals, counts, log_z = expected_counts(
        emissions,
        transitions,
        allowed,
        scheme.transitions().astype(numpy.uint8),
        numpy.array([0, n], dtype=numpy.int64),
    )
    expected_marginals = numpy.zeros((n, n_tags))
    expected_counts_ = numpy.zeros((n_tags + 1, n_tags))
    for tags, w in weights.items():
        previous = n_tags
        for i, tag in enumerate(tags):
            expected_marginals[i, tag] += w / z
            expected_counts_[previous, tag] += w / z
            previous = tag
    assert log_z == pytest.approx(
        numpy.log(z), rel=1e-6, abs=1e-6
    )  # float32 scores: near 0, only an absolute bound holds
    assert numpy.allclose(marginals, expected_marginals, atol=1e-5)
    assert numpy.allclose(counts, expected_counts_, atol=1e-5)


def log_space_sums(emissions, transitions, allowed, legal, inv_t):
    """Forward and backward log sums by logaddexp, in float64: the reference for `_trellis_sums`."""
    n, n_tags = emissions.shape
    em, tr = (
        emissions.astype(numpy.float64) * inv_t,
        numpy.where(legal, transitions.astype(numpy.float64) * inv_t, -numpy.inf),
    )
    alpha = numpy.full((n, n_tags), -numpy.inf)
    beta = numpy.full((n, n_tags), -numpy.inf)
    alpha[0] = numpy.where(allowed[0], tr[n_tags] + em[0], -numpy.inf)
    for i in range(1, n):
        alpha[i] = numpy.where(
            allowed[i], numpy.logaddexp.reduce(alpha[i - 1][:, None] + tr[:n_tags], axis=0) + em[i], -numpy.inf
        )
    beta[n - 1] = numpy.where(allowed[n - 1], 0.0, -numpy.inf)
    for i in range(n - 2, -1, -1):
        beta[i] = numpy.where(
            allowed[i], numpy.logaddexp.reduce(tr[:n_tags] + em[i + 1] + beta[i + 1], axis=1), -numpy.inf
        )
    return alpha, beta


@settings(max_examples=40)
@given(
    name=st.sampled_from(["BIO", "BILOU"]),
    n=st.integers(1, 30),
    seed=st.integers(0, 2**31),
    scale=st.sampled_from([1.0, 30.0, 1e5]),
    temperature=st.sampled_from([0.01, 1.0, 30.0]),
)
def test_trellis_sums_equal_log_space_sums(name, n, seed, scale, temperature):
    # Scores far apart at a low temperature underflow the rescaled sums; those sequences are summed in log space.
    from spacy_bioner.core.marginals import _trellis_sums

    rng = numpy.random.default_rng(seed)
    scheme = TagScheme(name, ["A", "B", "C"])
    emissions = (scale * rng.normal(size=(n, scheme.n_tags))).astype(numpy.float32)
    transitions = (scale * rng.normal(size=(scheme.n_tags + 1, scheme.n_tags))).astype(numpy.float32)
    starts = rng.random(n) < 0.2
    allowed = scheme.allowed(starts, numpy.zeros(n, bool), numpy.full(n, -1, numpy.int32))
    legal = scheme.transitions().astype(numpy.uint8)
    alpha, beta, log_zs = _trellis_sums(
        emissions, transitions, allowed, legal, numpy.array([0, n], dtype=numpy.int64), 1 / temperature
    )
    expected_alpha, expected_beta = log_space_sums(emissions, transitions, allowed, legal, 1 / temperature)
    for got, expected in ((alpha, expected_alpha), (beta, expected_beta)):
        assert numpy.array_equal(numpy.isfinite(got), numpy.isfinite(expected))
        finite = numpy.isfinite(expected)
        assert numpy.allclose(got[finite], expected[finite], rtol=1e-9, atol=1e-6)
    assert log_zs[0] == pytest.approx(numpy.logaddexp.reduce(expected_alpha[-1]), rel=1e-9, abs=1e-6)
