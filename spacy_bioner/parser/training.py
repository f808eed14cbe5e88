"""Training bioner_parser: the gold tree of each unit of an example, and a perceptron pass along it.

A unit is what the parser parses at once: a sentence of a doc with sentence starts, else the
whole doc. Its nodes are a root slot, then its words (whitespace tokens are not parsed).
"""

from collections.abc import Iterable, Sequence
from typing import NamedTuple

import numpy
from spacy.attrs import IS_SPACE, LOWER, SUFFIX, TAG
from spacy.strings import get_string_id
from spacy.training import Example

from ..core.features import words_of
from . import beam, greedy  # type: ignore[attr-defined]  # compiled modules, no stubs
from .projectivity import lift

ROOT_WORD = get_string_id("<root>")  # the root node's word, tag and suffix
NODE_ATTRIBUTES = [LOWER, TAG, SUFFIX]  # what the features read of each token (as nodes.pyx reads them)


class GoldUnit(NamedTuple):
    words: numpy.ndarray  # the unit's tokens but whitespace
    heads: list[int]  # per node 0..n, -1 for the root slot
    labels: list[str]


def gold_units(example: Example, starts: Sequence[int], pseudo_projective: bool) -> Iterable[GoldUnit]:
    """The words of each unit of the predicted doc (`starts`: where each begins) whose gold tree over them
    lies within it (no word's head outside it or whitespace), lifted when pseudo-projective. A predicted doc
    without sentences (raw text) is cut at the reference's sentence starts: when tagging, a sentence
    splitter before the parser gives it sentences to parse."""
    doc = example.predicted
    gold_heads, gold_deps = example.get_aligned_parse(projectivize=False)
    if len(doc) and not doc.has_annotation("SENT_START") and example.reference.has_annotation("SENT_START"):
        starts = [i for i, start in enumerate(example.get_aligned_sent_starts()) if start or i == 0]
    words, firsts = words_of(doc.to_array(IS_SPACE), starts)
    for unit_words in numpy.split(words, firsts[1:]):
        node_of = {token: k for k, token in enumerate(unit_words.tolist(), 1)}
        heads, labels = [-1], [""]
        for i in unit_words.tolist():
            head, dep = gold_heads[i], gold_deps[i]
            if head is None or not dep or (head != i and head not in node_of):
                break
            heads.append(0 if head == i else node_of[head])
            labels.append(dep)
        else:
            if len(unit_words):
                if pseudo_projective:
                    heads, labels = lift(heads, labels)
                yield GoldUnit(unit_words, heads, labels)


def node_values(example: Example) -> numpy.ndarray:
    """The predicted doc's NODE_ATTRIBUTES, a row per token; a doc no tagger ran on reads the reference's tags."""
    doc = example.predicted
    values = doc.to_array(NODE_ATTRIBUTES)
    if not doc.has_annotation("TAG"):
        strings = doc.vocab.strings
        values[:, 1] = [strings.add(tag) if tag else 0 for tag in example.get_aligned("TAG", as_string=True)]
    return values


def train_unit(
    unit: GoldUnit,
    values: numpy.ndarray,
    *,
    features,
    system,
    models: tuple,
    label_ids: dict[str, int],
    beam_width: int,
    explore: float,
    seed: int,
) -> int:
    """One perceptron pass along a unit's gold transitions (a beam's when beam_width > 1); RETURNS the
    wrong moves and labels.

    values (uint64[n_tokens, 3]): The doc's NODE_ATTRIBUTES, a row per token.
    features, system: The parser's StateFeatures and transition system.
    models: The move and label perceptrons, updated in place.
    label_ids: Each arc label's id in the label model.
    explore, seed: How often a greedy pass follows its own wrong moves, and its random seed.
    """
    nodes = numpy.ascontiguousarray(numpy.insert(values[unit.words], 0, ROOT_WORD, axis=0), dtype=numpy.uint64)
    gold_heads = numpy.array(unit.heads, dtype=numpy.int32)
    gold_labels = numpy.array([-1] + [label_ids[label] for label in unit.labels[1:]], dtype=numpy.int32)
    move_model, label_model = models
    if beam_width > 1:
        _, wrong_moves, wrong_labels = beam.train_sentence(
            features, system, move_model, label_model, nodes, gold_heads, gold_labels, beam_width
        )
    else:
        _, wrong_moves, wrong_labels = greedy.train_sentence(
            features, system, move_model, label_model, nodes, gold_heads, gold_labels, explore, seed
        )
    return wrong_moves + wrong_labels
