import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from parser_trees import labels_for, projective_trees, trees

from spacy_bioner.parser.projectivity import is_projective
from spacy_bioner.parser.transitions import PROJECTIVE_SYSTEMS, SYSTEM_MOVES, SYSTEMS, Configuration, oracle_transitions

STACK_BASED = ("arc-standard", "arc-eager")


def test_worked_example_arc_eager():
    # "Economic news had..." shortened: 1 <-SBJ- 2 -OBJ-> 3, 2 the root.
    config = Configuration(3, "arc-eager")
    SBJ, ROOT, OBJ = 1, 2, 3
    steps = [
        ("SHIFT", 0, [0, 1], [2, 3], {}),
        ("LEFT-ARC", SBJ, [0], [2, 3], {1: (2, SBJ)}),
        ("RIGHT-ARC", ROOT, [0, 2], [3], {1: (2, SBJ), 2: (0, ROOT)}),
        ("RIGHT-ARC", OBJ, [0, 2, 3], [], {1: (2, SBJ), 2: (0, ROOT), 3: (2, OBJ)}),
    ]
    assert (config.stack, config.buffer) == ([0], [1, 2, 3])
    for move, label, stack, buffer, arcs in steps:
        config.apply(move, label)
        assert (config.stack, config.buffer) == (stack, buffer)
        assert {d: (h, lab) for d, (h, lab) in enumerate(zip(config.heads, config.labels)) if h >= 0} == arcs
    assert config.is_terminal()


def test_illegal_moves_are_refused():
    config = Configuration(2, "arc-eager")
    with pytest.raises(ValueError, match="not legal"):
        config.apply("LEFT-ARC")  # node 0 may not take a head
    with pytest.raises(ValueError, match="not legal"):
        config.apply("REDUCE")  # the top has no head
    with pytest.raises(ValueError, match="not legal"):
        Configuration(2, "arc-standard").apply("NO-ARC")
    with pytest.raises(ValueError, match="Unknown transition system"):
        Configuration(2, "arc-hybrid")


def test_covington_acyclicity_and_defaults():
    config = Configuration(2, "covington")
    config.apply("SHIFT")
    config.apply("RIGHT-ARC", 0)  # 1 -> 2
    assert config.stack == [0] and config.skipped == [1]
    assert not config.is_legal("LEFT-ARC")  # 2 -> 0 is never allowed
    config.apply("SHIFT")
    assert config.stack == [0, 1, 2]
    projective = Configuration(2, "covington-projective")
    projective.apply("SHIFT")
    assert projective.fallback() == "SHIFT"  # NO-ARC over a node without a head is illegal
    assert Configuration(2, "covington").fallback() == "NO-ARC"
    assert Configuration(2, "arc-eager").fallback() == "SHIFT"


def _is_forest(heads):
    for node in range(1, len(heads)):
        seen, k = set(), node
        while k > 0 and heads[k] >= 0:
            if k in seen:
                return False
            seen.add(k)
            k = heads[k]
    return heads[0] == -1


@pytest.mark.parametrize("system", PROJECTIVE_SYSTEMS)
@settings(max_examples=150)
@given(heads=projective_trees())
def test_oracle_builds_every_projective_tree(system, heads):
    labels = labels_for(heads)
    moves, config = oracle_transitions(heads, labels, system)
    assert config.heads == heads
    assert config.labels[1:] == labels[1:]
    if system in STACK_BASED:
        assert len(moves) <= 2 * (len(heads) - 1)


@settings(max_examples=300)
@given(heads=trees())
def test_covington_oracle_builds_every_tree(heads):
    labels = labels_for(heads)
    _, config = oracle_transitions(heads, labels, "covington")
    assert config.heads == heads and config.labels[1:] == labels[1:]


@pytest.mark.parametrize("system", sorted(SYSTEMS))
@settings(max_examples=150)
@given(n=st.integers(0, 14), data=st.data())
def test_every_transition_sequence_gives_a_forest(system, n, data):
    config = Configuration(n, system)
    n_moves = 0
    while not config.is_terminal():
        move = data.draw(st.sampled_from(config.legal_moves()))
        config.apply(move, n_moves)
        n_moves += 1
        assert _is_forest(config.heads)  # ROOT, SINGLE-HEAD (one slot per node), ACYCLICITY
    if system in STACK_BASED:
        assert n_moves <= 2 * n
    if system in PROJECTIVE_SYSTEMS:
        # Roots attached to node 0, the forest is a projective tree.
        heads = [h if h >= 0 or k == 0 else 0 for k, h in enumerate(config.heads)]
        assert is_projective(heads), (system, config.heads)
    config.attach_roots(0)
    assert all(h >= 0 for h in config.heads[1:]) and _is_forest(config.heads)


def test_system_moves_are_the_reference_ones():
    assert SYSTEM_MOVES["arc-standard"] == ("SHIFT", "LEFT-ARC", "RIGHT-ARC")
    assert "REDUCE" in SYSTEM_MOVES["arc-eager"] and "NO-ARC" in SYSTEM_MOVES["covington"]
