"""Beam-search parsing: trees whatever the weights, and global training that fits what it sees."""

import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from parser_trees import is_tree, labels_for, projective_trees

from spacy_bioner.core.perceptron import AveragedPerceptron
from spacy_bioner.parser import beam
from spacy_bioner.parser.projectivity import is_projective
from spacy_bioner.parser.state_features import StateFeatures
from spacy_bioner.parser.transitions import MOVE_NAMES, PROJECTIVE_SYSTEMS, SYSTEMS

FEATURES = StateFeatures()


@settings(max_examples=60)
@given(
    system=st.sampled_from(sorted(SYSTEMS)),
    lengths=st.lists(st.integers(0, 15), min_size=1, max_size=4),
    width=st.integers(1, 6),
    seed=st.integers(0, 2**32 - 1),
)
def test_any_weights_give_a_tree_per_sentence(system, lengths, width, seed):
    rng = numpy.random.default_rng(seed)
    offsets = numpy.cumsum([0] + [n + 1 for n in lengths]).astype(numpy.int64)
    nodes = rng.integers(1, 2**63, size=(int(offsets[-1]), 3), dtype=numpy.uint64)
    move_weights = rng.normal(size=(257, len(MOVE_NAMES))).astype(numpy.float32)
    label_weights = rng.normal(size=(129, 3)).astype(numpy.float32)
    heads, labels = beam.parse_batch(FEATURES, SYSTEMS[system], nodes, offsets, move_weights, label_weights, 0, width)
    for start, end in zip(offsets[:-1], offsets[1:]):
        sentence = [-1] + heads[start + 1 : end].tolist()
        assert heads[start] == -1 and is_tree(sentence)
        assert all(0 <= label < 3 for label in labels[start + 1 : end])
        if system in PROJECTIVE_SYSTEMS:
            assert is_projective(sentence)


@pytest.mark.parametrize("system", ["arc-eager", "arc-standard", "covington-projective"])
@settings(max_examples=15)
@given(heads=projective_trees(max_words=8))
def test_training_on_one_tree_until_no_violation_parses_it(system, heads):
    n = len(heads) - 1
    labels = labels_for(heads)
    nodes = numpy.arange(3 * (n + 1), dtype=numpy.uint64).reshape(n + 1, 3) * 7919 + 1
    moves, labels_model = AveragedPerceptron(2**12, len(MOVE_NAMES)), AveragedPerceptron(2**12, n + 1)
    gold_heads, gold_labels = numpy.array(heads, dtype=numpy.int32), numpy.array(labels, dtype=numpy.int32)
    for _ in range(50):
        _, wrong_moves, wrong_labels = beam.train_sentence(
            FEATURES, SYSTEMS[system], moves, labels_model, nodes, gold_heads, gold_labels, 3
        )
        if wrong_moves == wrong_labels == 0:
            break
    assert wrong_moves == wrong_labels == 0
    # The raw weights (not the averages) are what the last update left: they parse the tree.
    parsed, parsed_labels = beam.parse_batch(
        FEATURES,
        SYSTEMS[system],
        nodes,
        numpy.array([0, n + 1], dtype=numpy.int64),
        moves.emission,
        labels_model.emission,
        0,
        3,
    )
    assert parsed[1:].tolist() == heads[1:]
    assert parsed_labels[1:].tolist() == labels[1:]


def test_bad_widths_and_arrays_are_refused():
    nodes = numpy.ones((3, 3), dtype=numpy.uint64)
    offsets = numpy.array([0, 3], dtype=numpy.int64)
    weights, label_weights = numpy.zeros((8, len(MOVE_NAMES)), numpy.float32), numpy.zeros((8, 2), numpy.float32)
    with pytest.raises(ValueError, match="beam width"):
        beam.parse_batch(FEATURES, SYSTEMS["arc-eager"], nodes, offsets, weights, label_weights, 0, 0)
    with pytest.raises(ValueError, match="offsets"):
        beam.parse_batch(
            FEATURES, SYSTEMS["arc-eager"], nodes, numpy.array([0, 2], dtype=numpy.int64), weights, label_weights, 0, 2
        )
    with pytest.raises(ValueError, match="root slot"):
        beam.parse_batch(
            FEATURES,
            SYSTEMS["arc-eager"],
            nodes,
            numpy.array([0, 0, 3], dtype=numpy.int64),
            weights,
            label_weights,
            0,
            2,
        )
    with pytest.raises(ValueError, match="gold head"):
        beam.train_sentence(
            FEATURES,
            SYSTEMS["arc-eager"],
            AveragedPerceptron(8, len(MOVE_NAMES)),
            AveragedPerceptron(8, 2),
            nodes,
            numpy.array([-1, 1, 0], dtype=numpy.int32),
            numpy.array([-1, 0, 0], dtype=numpy.int32),
            2,
        )
