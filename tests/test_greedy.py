"""Greedy parsing (parser/greedy.pyx): sentences parsed side by side, each as if alone."""

import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from parser_trees import is_tree

from spacy_bioner.parser import greedy
from spacy_bioner.parser.projectivity import is_projective
from spacy_bioner.parser.state_features import StateFeatures
from spacy_bioner.parser.transitions import MOVE_NAMES, PROJECTIVE_SYSTEMS, SYSTEMS

FEATURES = StateFeatures()


def _batch(lengths, seed, n_labels=3):
    rng = numpy.random.default_rng(seed)
    offsets = numpy.cumsum([0] + [n + 1 for n in lengths]).astype(numpy.int64)
    nodes = rng.integers(1, 2**20, size=(int(offsets[-1]), 3), dtype=numpy.uint64)  # repeated words and tags
    move_weights = rng.normal(size=(256, len(MOVE_NAMES))).astype(numpy.float32)
    label_weights = rng.normal(size=(128, n_labels)).astype(numpy.float32)
    return nodes, offsets, move_weights, label_weights


@settings(max_examples=80)
@given(
    system=st.sampled_from(sorted(SYSTEMS)),
    lengths=st.lists(st.integers(0, 20), min_size=1, max_size=30),
    seed=st.integers(0, 2**32 - 1),
)
def test_a_batch_parses_each_sentence_as_it_parses_alone(system, lengths, seed):
    nodes, offsets, move_weights, label_weights = _batch(lengths, seed)
    heads, labels = greedy.parse_batch(FEATURES, SYSTEMS[system], nodes, offsets, move_weights, label_weights, 0)
    for start, end in zip(offsets[:-1].tolist(), offsets[1:].tolist()):
        alone = numpy.array([0, end - start], dtype=numpy.int64)
        own_heads, own_labels = greedy.parse_batch(
            FEATURES, SYSTEMS[system], nodes[start:end], alone, move_weights, label_weights, 0
        )
        assert heads[start:end].tolist() == own_heads.tolist()
        assert labels[start:end].tolist() == own_labels.tolist()
        sentence = [-1] + heads[start + 1 : end].tolist()
        assert heads[start] == -1 and is_tree(sentence)
        assert all(0 <= label < 3 for label in labels[start + 1 : end])
        if system in PROJECTIVE_SYSTEMS:
            assert is_projective(sentence)


def test_tables_of_any_size_are_read():
    """Rows by mask for a power of two, by modulo otherwise: both parse."""
    nodes, offsets, _, _ = _batch([5, 0, 7], seed=1)
    rng = numpy.random.default_rng(2)
    for buckets in (256, 257):
        moves = rng.normal(size=(buckets, len(MOVE_NAMES))).astype(numpy.float32)
        labels = rng.normal(size=(buckets, 2)).astype(numpy.float32)
        heads, _ = greedy.parse_batch(FEATURES, SYSTEMS["arc-eager"], nodes, offsets, moves, labels, 0)
        assert is_tree([-1] + heads[1:6].tolist()) and is_tree([-1] + heads[8:].tolist())


def test_arrays_that_do_not_fit_are_refused():
    nodes, offsets, move_weights, label_weights = _batch([3], seed=0)
    with pytest.raises(ValueError, match="offsets must rise"):
        greedy.parse_batch(FEATURES, 1, nodes, offsets[:1] + 1, move_weights, label_weights, 0)
    with pytest.raises(ValueError, match="root_label"):
        greedy.parse_batch(FEATURES, 1, nodes, offsets, move_weights, label_weights, 5)
