"""Training: an example's gold tags and features, then one step per sentence by the
configured trainer (perceptron, CRF or HMM counts), all behind `train_example`.
"""

import numpy
from spacy.attrs import IS_SPACE
from spacy.errors import Errors
from spacy.training import Example

from ..core.marginals import expected_counts
from ..core.templates import HISTORY_FAMILY
from .batch import lay_out
from .bounds import longest_entity
from .decoder import best_tags
from .dropout import match_dropout, word_dropout
from .featurizer import features as features_of
from .featurizer import history
from .memory import fold
from .trellis import presets_of, trellis_of


def train_example(ner, example: Example) -> float:
    """Train on one example, a step per sentence; RETURNS its loss (0 for an example with no gold tags).

    Tokens with missing gold are not trained as "O": the gold sequence is
    completed by the best-scoring valid sequence that agrees with the known tags.
    """
    doc = example.predicted
    if len(doc) == 0:
        return 0.0
    for ent in example.reference.ents:  # a label first seen here is added, as spaCy's ner adds it
        if ent.label_.startswith("!"):
            raise ValueError(Errors.E869.format(label=ent.label_))
        if ent.label_ not in ner.labels:
            ner.add_label(ent.label_)
        if ent.label_ in ner.cfg["labels_from_presets"]:  # taught now
            ner.cfg["labels_from_presets"].remove(ent.label_)
    known, token_runs = ner.gold_cache.gold(example, ner.scheme)
    if (known < 0).all():
        return 0.0
    longest = longest_entity(
        [(start, end) for start, end, _ in ner.scheme.to_spans(numpy.maximum(known, 0))], doc.to_array(IS_SPACE) == 1
    )
    if longest > ner.cfg.get("longest_entity", 0):
        ner.cfg["longest_entity"] = longest
    negatives = _negative_spans(ner, example)
    matches = match_dropout(ner, ner.gazetteer.match(doc))
    layout = lay_out(ner, [doc], folds=[fold(example.reference)])
    presets = [presets_of(ner, doc, matches)]
    features = features_of(ner, layout, [matches])
    runs = token_runs
    # Trained over the rows it is decoded over: the words alone if there are whitespace tokens.
    trellis = trellis_of(ner, layout, presets)
    features, known = trellis.rows(features), trellis.rows(known)
    if trellis.positions is not None:
        run_bounds = trellis.row_of(numpy.array([start for start, _ in runs] + [len(doc)])).tolist()
        runs = [(start, end) for start, end in zip(run_bounds, run_bounds[1:]) if start < end]
    features = word_dropout(ner, features)
    allowed = trellis.allowed
    # Half the updates see the first pass's history, half none, as the first pass itself does.
    n_history = ner.featurizer.n_history
    if HISTORY_FAMILY in ner.settings.features and ner.rng.random() < 0.5:
        first_pass = trellis.with_spaces(
            best_tags(ner, ner.model.scores(features, averaged=False), allowed, trellis.offsets, averaged=False)
        )
        features[:, -n_history:] = trellis.rows(history(ner, layout, first_pass))
    gold = known
    if (known < 0).any():
        free = numpy.zeros(len(known), dtype=numpy.bool_)
        allowed_gold = ner.scheme.allowed(free, free, known)
        for start, end, label in negatives:
            # The completion never starts an entity of this label where a negative span of it starts.
            first = int(trellis.row_of(numpy.array([start]))[0])
            if known[first] < 0:
                move = "B" if end - start > 1 or ner.scheme.name == "BIO" else "U"
                allowed_gold[first, ner.scheme.tag_id(move, label)] = 0
        scores = ner.model.scores(features, averaged=False)
        gold = best_tags(ner, scores, allowed_gold, trellis.offsets, averaged=False)
    trainer = ner.settings.trainer
    if trainer.name == "hmm":
        ner.model.count(features, gold)
        return 0.0
    # One step per sentence, each scored with the weights the previous one
    # left: a step per multi-sentence doc learns measurably less. Each
    # sentence is a sequence of its own.
    if len(token_runs) > 1:
        starts = layout.sent_starts.copy()
        starts[[start for start, _ in token_runs]] = True
        allowed = trellis_of(ner, layout._replace(sent_starts=starts), presets).allowed
    if trainer.name == "crf":
        return sum(
            crf_step(ner, features[start:end], allowed[start:end], gold[start:end], known[start:end])
            for start, end in runs
        )
    return ner.model.steps(features, allowed, gold, known, runs, trainer.margin, ner.legal, ner.predecessors)


def _negative_spans(ner, example: Example) -> list[tuple[int, int, int]]:
    """The spans of the reference's `incorrect_spans_key` group, known not to be entities of their label,
    as (start, end, label) over the predicted tokens; one that is also a gold entity is an error (E868)."""
    key = ner.settings.incorrect_spans_key
    if key is None or key not in example.reference.spans:
        return []
    gold = {(ent.start_char, ent.end_char, ent.label_) for ent in example.reference.ents}
    found = []
    for span in example.reference.spans[key]:
        if (span.start_char, span.end_char, span.label_) in gold:
            raise ValueError(Errors.E868.format(span=(span.start_char, span.end_char, span.label_)))
        predicted = example.predicted.char_span(span.start_char, span.end_char)
        if predicted is not None and span.label_ in ner.labels:
            found.append((predicted.start, predicted.end, ner.labels.index(span.label_)))
    return found


def crf_step(ner, features: numpy.ndarray, allowed: numpy.ndarray, gold: numpy.ndarray, known: numpy.ndarray) -> float:
    """One stochastic gradient step on the conditional log-likelihood of the gold
    tags of one sentence (observed minus expected counts, by forward-backward). RETURNS the loss, -log P(gold)."""
    settings = ner.settings.trainer
    scores = ner.model.scores(features, averaged=False)
    transitions = ner.model.transitions(averaged=False)
    marginals, expected, log_z = expected_counts(scores, transitions, allowed, ner.legal, _one_sequence(gold))
    token_gradient = -marginals
    token_gradient[numpy.arange(len(gold)), gold] += 1.0
    transition_gradient = -expected
    previous = numpy.concatenate([[len(ner.scheme.tags)], gold[:-1]])
    numpy.add.at(transition_gradient, (previous, gold), 1.0)
    ner.model.update_dense(features, token_gradient, transition_gradient, settings.learning_rate, settings.l2)
    return log_z - float(scores[numpy.arange(len(gold)), gold].sum() + transitions[previous, gold].sum())


def _one_sequence(tags: numpy.ndarray) -> numpy.ndarray:
    return numpy.array([0, len(tags)], dtype=numpy.int64)


def update(ner, examples, losses: dict[str, float]) -> dict[str, float]:
    """Train on each example in turn; the loss adds up under the component's name."""
    losses.setdefault(ner.name, 0.0)
    for example in examples:
        losses[ner.name] += train_example(ner, example)
    return losses
