import itertools

import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spacy_bioner.core.decode import Decoder, predecessor_lists, viterbi
from spacy_bioner.core.schemes import TagScheme


def brute_force(scheme, emissions, transitions, allowed, sent_starts):
    best, best_tags = -numpy.inf, None
    n, n_tags = emissions.shape
    for tags in itertools.product(range(n_tags), repeat=n):
        if not all(allowed[i, t] for i, t in enumerate(tags)):
            continue
        if not scheme.is_valid(tags, sent_starts):
            continue
        score, prev = 0.0, n_tags
        for i, tag in enumerate(tags):
            score += transitions[prev, tag] + emissions[i, tag]
            prev = tag
        if score > best:
            best, best_tags = score, tags
    return best, best_tags


def path_score(emissions, transitions, tags):
    prev, score = emissions.shape[1], 0.0
    for i, tag in enumerate(tags):
        score += float(transitions[prev, tag]) + float(emissions[i, tag])
        prev = tag
    return score


@settings(max_examples=150)
@given(
    name=st.sampled_from(["BIO", "BILOU"]),
    n=st.integers(1, 5),
    seed=st.integers(0, 2**31),
    n_labels=st.integers(1, 2),
)
def test_viterbi_equals_brute_force(name, n, seed, n_labels):
    rng = numpy.random.default_rng(seed)
    scheme = TagScheme(name, ["A", "B"][:n_labels])
    n_tags = scheme.n_tags
    emissions = rng.normal(size=(n, n_tags)).astype(numpy.float32)
    transitions = rng.normal(size=(n_tags + 1, n_tags)).astype(numpy.float32)
    sent_starts = rng.random(n) < 0.3
    sent_starts[0] = True
    is_space = rng.random(n) < 0.2
    forced = numpy.full(n, -1, dtype=numpy.int32)
    if n >= 2 and rng.random() < 0.3:  # a preset single-token entity
        at = int(rng.integers(0, n))
        forced[at] = scheme.from_spans([(0, 1, 0)], 1)[0]
        is_space[at] = False
    allowed = scheme.allowed(sent_starts, is_space, forced)
    best, expected = brute_force(scheme, emissions, transitions, allowed, sent_starts)
    tags = viterbi(emissions, transitions, allowed, scheme.transitions().astype(numpy.uint8)).tolist()
    assert scheme.is_valid(tags, sent_starts)
    assert all(allowed[i, t] for i, t in enumerate(tags))
    # Equal scores (ties may pick a different, equally good path).
    assert abs(path_score(emissions, transitions, tags) - best) < 1e-4
    assert expected is not None


def test_viterbi_empty_and_shape_errors():
    scheme = TagScheme("BIO", ["A"])
    legal = scheme.transitions().astype(numpy.uint8)
    empty = numpy.zeros((0, 3), dtype=numpy.float32)
    transitions = numpy.zeros((4, 3), dtype=numpy.float32)
    assert viterbi(empty, transitions, numpy.zeros((0, 3), dtype=numpy.uint8), legal).tolist() == []
    with pytest.raises(ValueError, match="allowed has shape"):
        viterbi(numpy.zeros((2, 3), dtype=numpy.float32), transitions, numpy.ones((1, 3), dtype=numpy.uint8), legal)


def test_viterbi_reports_infeasible_constraints():
    scheme = TagScheme("BIO", ["A"])
    allowed = numpy.zeros((2, 3), dtype=numpy.uint8)
    allowed[1, 2] = 1  # only I-A at 1, but nothing at 0
    with pytest.raises(ValueError, match="No tag sequence"):
        viterbi(
            numpy.zeros((2, 3), dtype=numpy.float32),
            numpy.zeros((4, 3), dtype=numpy.float32),
            allowed,
            scheme.transitions().astype(numpy.uint8),
        )


@settings(max_examples=50)
@given(lengths=st.lists(st.integers(0, 6), min_size=1, max_size=6), seed=st.integers(0, 2**31))
def test_sequences_laid_end_to_end_decode_as_alone(lengths, seed):
    rng = numpy.random.default_rng(seed)
    scheme = TagScheme("BILOU", ["A", "B"])
    n_tags, n = scheme.n_tags, sum(lengths)
    emissions = rng.normal(size=(n, n_tags)).astype(numpy.float32)
    transitions = rng.normal(size=(n_tags + 1, n_tags)).astype(numpy.float32)
    offsets = numpy.cumsum([0] + lengths).astype(numpy.int64)
    allowed = numpy.concatenate(
        [scheme.allowed(numpy.zeros(k, bool), numpy.zeros(k, bool), numpy.full(k, -1, numpy.int32)) for k in lengths]
    ).reshape(n, n_tags)
    legal = scheme.transitions().astype(numpy.uint8)
    together = viterbi(emissions, transitions, allowed, legal, offsets)
    alone = [viterbi(emissions[a:b], transitions, allowed[a:b], legal) for a, b in zip(offsets[:-1], offsets[1:])]
    assert together.tolist() == [tag for tags in alone for tag in tags.tolist()]


def test_offsets_must_cover_the_sequence():
    scheme = TagScheme("BIO", ["A"])
    emissions = numpy.zeros((3, scheme.n_tags), dtype=numpy.float32)
    transitions = numpy.zeros((scheme.n_tags + 1, scheme.n_tags), dtype=numpy.float32)
    allowed = numpy.ones((3, scheme.n_tags), dtype=numpy.uint8)
    with pytest.raises(ValueError, match="offsets must rise from 0 to 3"):
        viterbi(
            emissions,
            transitions,
            allowed,
            scheme.transitions().astype(numpy.uint8),
            numpy.array([0, 2], dtype=numpy.int64),
        )


@settings(max_examples=150)
@given(
    name=st.sampled_from(["BIO", "BILOU"]),
    n=st.integers(1, 5),
    seed=st.integers(0, 2**31),
    n_labels=st.integers(1, 3),
)
def test_factored_viterbi_equals_brute_force_over_the_transitions_it_adds_up_to(name, n, seed, n_labels):
    rng = numpy.random.default_rng(seed)
    scheme = TagScheme(name, ["A", "B", "C"][:n_labels])
    n_tags = scheme.n_tags
    emissions = rng.normal(size=(n, n_tags)).astype(numpy.float32)
    pairs = rng.normal(size=(n_tags + 1, n_tags)).astype(numpy.float32)
    exits, entries = rng.normal(size=n_tags + 1).astype(numpy.float32), rng.normal(size=n_tags).astype(numpy.float32)
    full = pairs.copy()
    opening = ~scheme.continuing()
    full[:, opening] = exits[:, None] + entries[None, opening]
    sent_starts = rng.random(n) < 0.3
    sent_starts[0] = True
    allowed = scheme.allowed(sent_starts, numpy.zeros(n, dtype=bool), numpy.full(n, -1, dtype=numpy.int32))
    best, expected = brute_force(scheme, emissions, full, allowed, sent_starts)
    tags = viterbi(
        emissions, pairs, allowed, scheme.transitions().astype(numpy.uint8), factors=(exits, entries)
    ).tolist()
    assert scheme.is_valid(tags, sent_starts)
    assert path_score(emissions, full, tags) == pytest.approx(best, abs=1e-4)


def test_factored_transitions_need_factored_predecessor_lists():
    scheme = TagScheme("BILOU", ["A", "B"])
    n_tags, legal = scheme.n_tags, scheme.transitions().astype(numpy.uint8)
    emissions = numpy.zeros((2, n_tags), dtype=numpy.float32)
    transitions = numpy.zeros((n_tags + 1, n_tags), dtype=numpy.float32)
    factors = (numpy.zeros(n_tags + 1, dtype=numpy.float32), numpy.zeros(n_tags, dtype=numpy.float32))
    allowed = numpy.ones((2, n_tags), dtype=numpy.uint8)
    with pytest.raises(ValueError, match="factored=True"):
        viterbi(emissions, transitions, allowed, legal, None, factors, predecessor_lists(legal))
    starts, _, closing, openers = predecessor_lists(legal, factored=True)
    assert [scheme.tags[t] for t in openers] == ["O", "B-A", "U-A", "B-B", "U-B"]
    assert [scheme.tags[t] for t in closing] == ["O", "L-A", "U-A", "L-B", "U-B"]
    assert all(starts[t] == starts[t + 1] for t in openers)  # scored from the best exit, not listed


def reference_viterbi(emissions, transitions, allowed):
    """Viterbi over a free trellis (every move legal) in numpy, with the kernel's arithmetic (float32 weights
    added in float64) and its tie rule (the lowest tag before): the tags it must give to the bit."""
    n, n_tags = emissions.shape
    moves, start = transitions[:-1].astype(numpy.float64), transitions[-1].astype(numpy.float64)
    delta = numpy.where(allowed[0] > 0, start + emissions[0], -numpy.inf)
    pointers = numpy.zeros((n, n_tags), dtype=numpy.int64)
    for i in range(1, n):
        candidates = delta[:, None] + moves  # (before, tag)
        pointers[i] = candidates.argmax(axis=0)  # the first of equal maxima: the lowest tag before
        best = candidates.max(axis=0)
        reachable = (allowed[i] > 0) & (best > -numpy.inf)
        delta = numpy.where(reachable, best + emissions[i], -numpy.inf)
    tags = [int(delta.argmax())]
    for i in range(n - 1, 0, -1):
        tags.append(int(pointers[i, tags[-1]]))
    return tags[::-1]


@settings(max_examples=200)
@given(
    n=st.integers(1, 12),
    n_tags=st.integers(2, 40),
    seed=st.integers(0, 2**31),
    emission_scale=st.sampled_from([0.1, 1.0, 30.0]),
    whole=st.booleans(),
)
def test_free_trellis_prunes_to_the_same_tags(n, n_tags, seed, emission_scale, whole):
    """With every move legal (as the tagger decodes), a step reads only the tags before that can win:
    the tags are those of every move scored, ties included (whole-number weights tie often)."""
    rng = numpy.random.default_rng(seed)
    emissions = (rng.normal(size=(n, n_tags)) * emission_scale).astype(numpy.float32)
    transitions = rng.normal(size=(n_tags + 1, n_tags)).astype(numpy.float32)
    if whole:
        emissions, transitions = numpy.round(emissions), numpy.round(transitions)
    allowed = (rng.random((n, n_tags)) < 0.8).astype(numpy.uint8)
    allowed[numpy.arange(n), rng.integers(0, n_tags, n)] = 1  # every token keeps a tag
    legal = numpy.ones((n_tags + 1, n_tags), dtype=numpy.uint8)
    tags = viterbi(emissions, transitions, allowed, legal).tolist()
    assert tags == reference_viterbi(emissions, transitions, allowed)


@settings(max_examples=50)
@given(
    lengths=st.lists(st.lists(st.integers(1, 8), min_size=1, max_size=4), min_size=1, max_size=4),
    seed=st.integers(0, 2**31),
)
def test_a_decoder_made_once_decodes_each_batch_as_viterbi(lengths, seed):
    """Decoder keeps the trellis viterbi makes per call; batch after batch, it gives viterbi's tags."""
    rng = numpy.random.default_rng(seed)
    scheme = TagScheme("BILOU", ["A", "B"])
    transitions = rng.normal(size=(len(scheme.tags) + 1, len(scheme.tags))).astype(numpy.float32)
    decoder = Decoder(transitions, scheme.transitions())
    for batch in lengths:
        offsets = numpy.cumsum([0, *batch]).astype(numpy.int64)
        emissions = rng.normal(size=(int(offsets[-1]), len(scheme.tags))).astype(numpy.float32)
        allowed = numpy.ones(emissions.shape, dtype=numpy.uint8)
        expected = viterbi(emissions, transitions, allowed, scheme.transitions(), offsets)
        assert decoder.decode(emissions, allowed, offsets).tolist() == expected.tolist()
    with pytest.raises(ValueError, match="emissions have 3 tags"):
        decoder.decode(numpy.zeros((2, 3), dtype=numpy.float32), numpy.ones((2, 3), dtype=numpy.uint8))
