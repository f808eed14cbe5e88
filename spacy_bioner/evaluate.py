"""Detailed entity scores: where a model fails, not only how often.

Exact-match precision, recall and F1 overall and per type (the numbers
`spacy evaluate` gives), F1 on entities seen and unseen in a training set,
what went wrong with each miss (wrong type, wrong boundaries, missed
entirely, spurious), and a confusion matrix between types, "O" standing for
no entity.
"""

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any, Optional

from spacy.scorer import get_ner_prf
from spacy.tokens import Doc
from spacy.training import Example

Entity = tuple[int, int, str]  # start char, end char, label
OUTSIDE = "O"


def prf(n_correct: int, n_predicted: int, n_gold: int) -> dict[str, float]:
    """Precision, recall and F1 (fractions, 0.0 when undefined), with the counts."""
    p = n_correct / n_predicted if n_predicted else 0.0
    r = n_correct / n_gold if n_gold else 0.0
    return {
        "p": p,
        "r": r,
        "f": 2 * p * r / (p + r) if p + r else 0.0,
        "correct": n_correct,
        "predicted": n_predicted,
        "gold": n_gold,
    }


def entities(doc: Doc) -> set[Entity]:
    return {(ent.start_char, ent.end_char, ent.label_) for ent in doc.ents}


def overlaps(a: Entity, b: Entity) -> bool:
    return a[0] < b[1] and b[0] < a[1]


class EntityReport:
    """Accumulates gold and predicted docs; `scores()` sums them up.

    seen (Optional[Set[str]]): Entity texts of the training data; with it,
        scores are also given for entities seen and unseen in training.
    """

    def __init__(self, seen: Optional[set[str]] = None):
        self.seen = seen
        self.counts: Counter = Counter()  # (group, label, "correct" | "predicted" | "gold")
        self.errors: Counter = Counter()
        self.confusion: Counter = Counter()  # (gold label or O, predicted label or O)
        self.sentence_errors: list[tuple[int, int, int, int]] = []  # (errors, doc index, start char, end char)
        self.n_docs = 0

    def add(self, gold_doc: Doc, predicted_doc: Doc) -> None:
        gold, predicted = entities(gold_doc), entities(predicted_doc)
        text = gold_doc.text
        for group in self._groups():
            keep = self._in_group(group, text)
            group_gold, group_predicted = {e for e in gold if keep(e)}, {e for e in predicted if keep(e)}
            for label, key in (
                [(e[2], "gold") for e in group_gold]
                + [(e[2], "predicted") for e in group_predicted]
                + [(e[2], "correct") for e in group_gold & group_predicted]
            ):
                self.counts[(group, label, key)] += 1
        wrong = []  # an entity of each error, to place it in its sentence
        for entity in gold - predicted:
            same_span = [p for p in predicted if p[:2] == entity[:2]]
            if same_span:
                self.errors["type"] += 1
                self.confusion[(entity[2], same_span[0][2])] += 1
            elif any(overlaps(entity, p) for p in predicted):
                self.errors["boundary"] += 1
            else:
                self.errors["missed"] += 1
                self.confusion[(entity[2], OUTSIDE)] += 1
            wrong.append(entity)
        for entity in predicted - gold:
            if not any(overlaps(entity, g) for g in gold):
                self.errors["spurious"] += 1
                self.confusion[(OUTSIDE, entity[2])] += 1
                wrong.append(entity)
        for entity in gold & predicted:
            self.confusion[(entity[2], entity[2])] += 1
        sentences = (
            [(s.start_char, s.end_char) for s in gold_doc.sents]
            if gold_doc.has_annotation("SENT_START")
            else [(0, len(text))]
        )
        for start, end in sentences:
            n_errors = sum(start <= entity[0] < end for entity in wrong)
            if n_errors:
                self.sentence_errors.append((n_errors, self.n_docs, start, end))
        self.n_docs += 1

    def _groups(self) -> list[str]:
        return ["all"] if self.seen is None else ["all", "seen", "unseen"]

    def _in_group(self, group: str, text: str):
        if group == "all":
            return lambda entity: True
        wanted, seen = group == "seen", self.seen or set()
        return lambda entity: (text[entity[0] : entity[1]] in seen) == wanted

    def scores(self) -> dict[str, Any]:
        """Everything, as JSON-ready numbers."""

        def totals(group: str, label: Optional[str] = None) -> dict[str, float]:
            def count(key: str) -> int:
                return sum(
                    n
                    for (g, lab, k), n in self.counts.items()
                    if g == group and k == key and (label is None or lab == label)
                )

            return prf(count("correct"), count("predicted"), count("gold"))

        labels = sorted({label for _, label, _ in self.counts})
        result = {
            "overall": totals("all"),
            "per_type": {label: totals("all", label) for label in labels},
            "errors": dict(self.errors),
            "confusion": [[gold, predicted, n] for (gold, predicted), n in sorted(self.confusion.items())],
        }
        if self.seen is not None:
            result["seen"], result["unseen"] = totals("seen"), totals("unseen")
        return result

    def worst_sentences(self, n: int) -> list[tuple[int, int, int, int]]:
        """The n sentences with the most errors (ties: the first first), as
        (errors, doc index, start char, end char); the whole doc where it has no sentences."""
        return sorted(self.sentence_errors, key=lambda item: (-item[0], item[1], item[2]))[:n]


def corpus_stats(train: list[Doc], dev: list[Doc], make_doc) -> dict[str, Any]:
    """What a corpus holds before training on it: label counts and entity
    lengths per split, the share of dev entities unseen in train, and the
    entities whose boundaries the pipeline's tokenizer (`make_doc`) would not
    reproduce from the raw text (they cannot be found in raw text)."""
    seen = {ent.text for doc in train for ent in doc.ents}
    stats: dict[str, Any] = {}
    for split, docs in (("train", train), ("dev", dev)):
        labels: Counter[str] = Counter()
        lengths: Counter[int] = Counter()
        misaligned: Counter[str] = Counter()
        for doc in docs:
            retokenized = make_doc(doc.text)
            for ent in doc.ents:
                labels[ent.label_] += 1
                lengths[len(ent)] += 1
                if retokenized.char_span(ent.start_char, ent.end_char) is None:
                    misaligned[ent.label_] += 1
        stats[split] = {
            "docs": len(docs),
            "tokens": sum(len(doc) for doc in docs),
            "entities": sum(labels.values()),
            "labels": dict(sorted(labels.items())),
            "lengths": dict(sorted(lengths.items())),
            "misaligned": dict(sorted(misaligned.items())),
        }
    dev_entities = [ent.text for doc in dev for ent in doc.ents]
    stats["dev_unseen_share"] = (
        sum(text not in seen for text in dev_entities) / len(dev_entities) if dev_entities else 0.0
    )
    return stats


def report(pairs: Iterable[tuple[Doc, Doc]], seen: Optional[set[str]] = None) -> EntityReport:
    """An EntityReport over (gold doc, predicted doc) pairs."""
    entity_report = EntityReport(seen)
    for gold_doc, predicted_doc in pairs:
        entity_report.add(gold_doc, predicted_doc)
    return entity_report


def _predicted(nlp, name: str, component, examples: list[Example]) -> list[Example]:
    """The examples as the pipeline predicts them with `component` in place of its component `name`."""
    docs = [eg.predicted.copy() for eg in examples]
    for pipe_name, proc in nlp.pipeline:
        proc = component if pipe_name == name else proc
        docs = list(proc.pipe(docs)) if hasattr(proc, "pipe") else [proc(doc) for doc in docs]
    return [Example(doc, eg.reference) for doc, eg in zip(docs, examples)]


def recall_curve(nlp, name: str, examples: list[Example], biases: Sequence[float]) -> list[dict]:
    """P/R/F1 of the pipeline at each entity_bias of its bioner component `name` (the recall knob)."""
    ner, curve = nlp.get_pipe(name), []
    for bias in biases:
        scores = get_ner_prf(_predicted(nlp, name, ner.with_settings(confidence={"entity_bias": bias}), examples))
        curve.append({"entity_bias": bias, "p": scores["ents_p"], "r": scores["ents_r"], "f": scores["ents_f"]})
    return curve


def candidate_curve(
    nlp, name: str, examples: list[Example], thresholds: Sequence[float], max_candidates: int = 1000
) -> list[dict]:
    """P/R against the gold entities (exact span and label) of the candidates:
    the entities plus every other span whose probability, at the component's
    temperature, reaches each threshold (its `alternatives`)."""
    ner, curve = nlp.get_pipe(name), []
    for threshold in thresholds:
        variant = ner.with_settings(confidence={"alternatives": max_candidates, "alternatives_threshold": threshold})
        found = gold = right = 0
        for example in _predicted(nlp, name, variant, examples):
            truth = {(e.start_char, e.end_char, e.label_) for e in example.reference.ents}
            spans = list(example.predicted.ents) + list(example.predicted.spans[f"{name}_alternatives"])
            candidates = {(span.start_char, span.end_char, span.label_) for span in spans}
            found, gold, right = found + len(candidates), gold + len(truth), right + len(truth & candidates)
        curve.append(
            {
                "threshold": threshold,
                "p": right / max(found, 1),
                "r": right / max(gold, 1),
                "per_gold": found / max(gold, 1),
            }
        )
    return curve
