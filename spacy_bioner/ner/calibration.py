"""Turning entity scores into calibrated probabilities.

A perceptron's scores are margins: exp(score) over the trellis is a
distribution, but an overconfident one. One temperature, fitted on held-out
gold docs, makes it honest: the temperature that gives the decoded entities
the lowest log loss of being right (exactly matching a gold entity).
Expected calibration error (ECE) says how honest: the gap between
confidence and accuracy, averaged over confidence bins weighted by size.
"""

from collections.abc import Iterable

import numpy
from spacy.tokens import Doc

from .batch import groups
from .component import BioNER
from .confidence import entity_probabilities

TEMPERATURES = numpy.geomspace(0.25, 256.0, 41)  # the grid searched: a factor of about 1.19 apart


def outcomes(
    ner: BioNER, pairs: Iterable[tuple[Doc, Doc]], temperatures: Iterable[float]
) -> tuple[numpy.ndarray, numpy.ndarray]:
    """Each decoded entity's probability at each temperature, and whether it is right.

    pairs: (gold doc, unannotated doc of the same text) pairs; the component
        decodes the second ones once, whatever the number of temperatures.
    RETURNS (Tuple[ndarray, ndarray]): float64 (n_temperatures, n_entities); bool (n_entities,).
    """
    temperatures = list(temperatures)
    probabilities: list[list[float]] = [[] for _ in temperatures]
    correct: list[bool] = []
    pairs = list(pairs)
    gold_by_doc = {id(doc): {(e.start_char, e.end_char, e.label_) for e in gold.ents} for gold, doc in pairs}
    for group in groups(doc for _, doc in pairs):
        decoded = ner.decode(group)
        for k, temperature in enumerate(temperatures):
            found = entity_probabilities(ner, decoded, temperature)
            probabilities[k].extend(p for doc_found in found for *_, p in doc_found)
            if k == 0:
                for doc, doc_found in zip(group, found):
                    gold = gold_by_doc[id(doc)]
                    correct.extend(
                        (doc[start:end].start_char, doc[start:end].end_char, ner.labels[label]) in gold
                        for start, end, label, _ in doc_found
                    )
    return numpy.array(probabilities, dtype=numpy.float64).reshape(len(temperatures), -1), numpy.array(
        correct, dtype=bool
    )


def log_loss(probabilities: numpy.ndarray, correct: numpy.ndarray) -> float:
    p = numpy.clip(probabilities, 1e-12, 1 - 1e-12)
    return float(-numpy.mean(numpy.where(correct, numpy.log(p), numpy.log1p(-p)))) if len(p) else 0.0


def expected_calibration_error(probabilities: numpy.ndarray, correct: numpy.ndarray, n_bins: int = 10) -> float:
    """The size-weighted mean gap between confidence and accuracy over equal-width bins."""
    if not len(probabilities):
        return 0.0
    bins = numpy.minimum((probabilities * n_bins).astype(int), n_bins - 1)
    gap = 0.0
    for b in range(n_bins):
        inside = bins == b
        if inside.any():
            gap += inside.sum() * abs(probabilities[inside].mean() - correct[inside].mean())
    return gap / len(probabilities)


def reliability(
    probabilities: numpy.ndarray, correct: numpy.ndarray, n_bins: int = 10
) -> list[tuple[float, float, int]]:
    """Per confidence bin: mean confidence, accuracy, entities (for a reliability diagram)."""
    bins = numpy.minimum((probabilities * n_bins).astype(int), n_bins - 1)
    return [
        (float(probabilities[bins == b].mean()), float(correct[bins == b].mean()), int((bins == b).sum()))
        for b in range(n_bins)
        if (bins == b).any()
    ]


def fit_temperature(ner: BioNER, pairs: Iterable[tuple[Doc, Doc]]) -> float:
    """The temperature of the grid with the lowest log loss on these gold docs."""
    probabilities, correct = outcomes(ner, pairs, TEMPERATURES)
    losses = [log_loss(row, correct) for row in probabilities]
    return float(TEMPERATURES[int(numpy.argmin(losses))])
