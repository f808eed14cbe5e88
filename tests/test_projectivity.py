from pathlib import Path

import pytest
from hypothesis import given, settings
from parser_trees import trees

from spacy_bioner.parser.projectivity import is_projective, lift, lower, non_projective_arcs

EWT_DEV = Path(__file__).parents[2] / "shared" / "data" / "ud_english_ewt" / "en_ewt-ud-dev.conllu"

# Hand-made non-projective trees: (heads over nodes 0..n, labels).
NON_PROJECTIVE = [
    # "A hearing is scheduled on the issue today": "on the issue" hangs from "hearing" across the verb.
    ([-1, 2, 4, 4, 0, 2, 7, 5, 4], ["", "det", "nsubj", "aux", "root", "nmod", "det", "pobj", "tmod"]),
    # Two crossing arcs: 1 -> 3 and 2 -> 4.
    ([-1, 0, 1, 1, 2], ["", "root", "a", "b", "c"]),
    # A lifted arc that must go up twice.
    ([-1, 0, 5, 1, 2, 1, 3], ["", "root", "x", "y", "z", "w", "v"]),
]


@pytest.mark.parametrize("heads,labels", NON_PROJECTIVE)
def test_lift_then_lower_restores_hand_made_trees(heads, labels):
    assert non_projective_arcs(heads)
    lifted_heads, lifted_labels = lift(heads, labels)
    assert is_projective(lifted_heads)
    assert any("||" in label for label in lifted_labels)
    assert lower(lifted_heads, lifted_labels) == (heads, labels)


@settings(max_examples=300)
@given(heads=trees(max_words=10))
def test_lift_always_gives_a_projective_tree_and_lower_a_tree(heads):
    labels = [""] + [f"l{k % 3}" for k in range(1, len(heads))]
    lifted_heads, lifted_labels = lift(heads, labels)
    assert is_projective(lifted_heads)
    lowered_heads, lowered_labels = lower(lifted_heads, lifted_labels)
    assert lowered_labels == labels
    if is_projective(heads):
        assert (lifted_heads, lifted_labels) == (heads, labels)
    # Still a tree: every node reaches the root.
    for node in range(1, len(heads)):
        seen = set()
        while node > 0:
            assert node not in seen
            seen.add(node)
            node = lowered_heads[node]


def _read_conllu(path):
    sentence = []
    for line in path.read_text(encoding="utf8").splitlines():
        if not line.strip():
            if sentence:
                yield sentence
            sentence = []
        elif not line.startswith("#"):
            fields = line.split("\t")
            if fields[0].isdigit():
                sentence.append((int(fields[6]), fields[7]))
    if sentence:
        yield sentence


@pytest.mark.skipif(not EWT_DEV.exists(), reason="needs ../shared/data/ud_english_ewt")
def test_lift_then_lower_restores_ewt_dev():
    total = non_projective = restored = 0
    for sentence in _read_conllu(EWT_DEV):
        heads = [-1] + [h for h, _ in sentence]
        labels = [""] + [label for _, label in sentence]
        total += 1
        if is_projective(heads):
            continue
        non_projective += 1
        restored += lower(*lift(heads, labels)) == (heads, labels)
    print(f"EWT dev: {non_projective} of {total} sentences non-projective, {restored} restored exactly")
    assert non_projective > 0 and restored / non_projective >= 0.9
