"""Confidence: entity probabilities and alternatives, by forward-backward over the trellis that decoding used."""

from typing import Optional

import numpy
from spacy.tokens import Span

from ..core.marginals import entity_probabilities as trellis_entity_probabilities
from ..core.marginals import span_probabilities
from .settings import MAX_ALTERNATIVE_LENGTH

Scored = tuple[int, int, int, float]  # (start, end, label, probability)


def span_confidence(span: Span) -> Optional[float]:
    """`span._.bioner_confidence`: the probability a bioner component gave this
    span (same tokens and label) in a scored span group of its doc
    (`doc.spans["bioner"]`, `doc.spans["bioner_alternatives"]`), or None."""
    key = (span.start, span.end, span.label)
    for group in span.doc.spans.values():
        scores = group.attrs.get("scores")
        if scores is None or len(scores) != len(group):
            continue
        for scored, probability in zip(group, scores):
            if (scored.start, scored.end, scored.label) == key:
                return probability
    return None


if not Span.has_extension("bioner_confidence"):
    Span.set_extension("bioner_confidence", getter=span_confidence)


def entity_probabilities(ner, decoded, temperature: Optional[float] = None) -> list[list[Scored]]:
    """Each doc's decoded entities (start, end, label, probability), at the given or the model's temperature."""
    scheme = ner.scheme
    offsets = decoded.layout.offsets.tolist()
    spans = [scheme.to_spans(decoded.tags[offsets[i] : offsets[i + 1]]) for i in range(len(offsets) - 1)]
    continuing = [scheme.tag_id("I", label) if scheme.name == "BIO" else -1 for label in range(len(ner.labels))]
    rows = numpy.array(
        [
            (i, offsets[i] + start, offsets[i] + end, continuing[label])
            for i, doc_spans in enumerate(spans)
            for start, end, label in doc_spans
        ],
        dtype=numpy.int64,
    ).reshape(-1, 4)
    trellis = decoded.trellis
    rows[:, 1], rows[:, 2] = (
        trellis.row_of(rows[:, 1]),
        trellis.row_of(rows[:, 2] - 1) + 1,
    )  # entities start and end on words
    probabilities = trellis_entity_probabilities(
        decoded.scores,
        ner.model.transitions(averaged=True),
        trellis.allowed,
        ner.legal,
        trellis.offsets,
        trellis.rows(decoded.tags),
        rows,
        temperature or ner.settings.confidence.temperature,
    ).tolist()
    found, k = [], 0
    for doc_spans in spans:
        found.append([(start, end, label, probabilities[k + j]) for j, (start, end, label) in enumerate(doc_spans)])
        k += len(doc_spans)
    return found


def alternatives(ner, decoded) -> list[list[Scored]]:
    """Each doc's most probable spans other than its decoded entities (start, end, label, probability)."""
    scheme, settings = ner.scheme, ner.settings.confidence
    label_tags = numpy.array(
        [
            [scheme.tag_id(move, label) if move in scheme.moves else -1 for move in "BILU"]
            for label in range(len(ner.labels))
        ],
        dtype=numpy.int32,
    ).reshape(-1, 4)
    trellis = decoded.trellis
    rows, probabilities = span_probabilities(
        decoded.scores,
        ner.model.transitions(averaged=True),
        trellis.allowed,
        ner.legal,
        trellis.offsets,
        label_tags,
        MAX_ALTERNATIVE_LENGTH,
        settings.alternatives_threshold,
        settings.temperature,
    )
    rows[:, 1], rows[:, 2] = trellis.token_of(rows[:, 1]), trellis.token_of(rows[:, 2] - 1) + 1
    offsets = decoded.layout.offsets.tolist()
    found: list[list[tuple[int, int, int, float]]] = [[] for _ in range(len(offsets) - 1)]
    for (doc, start, end, label), probability in zip(rows.tolist(), probabilities.tolist()):
        found[doc].append((start - offsets[doc], end - offsets[doc], label, probability))
    decoded_spans = [set(scheme.to_spans(decoded.tags[offsets[i] : offsets[i + 1]])) for i in range(len(found))]
    return [
        sorted((a for a in doc_found if a[:3] not in decoded_spans[i]), key=lambda a: -a[3])[: settings.alternatives]
        for i, doc_found in enumerate(found)
    ]
