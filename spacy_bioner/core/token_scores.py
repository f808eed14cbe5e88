"""spaCy's token scores (`Scorer.score_token_attr`, `Scorer.score_deps`, and `Scorer.score_spans` of
sentences) counted over arrays.

For examples whose predicted tokens are the reference's (`spacy evaluate --gold-preproc`, and
the dev set during `spacy train` when the corpus reader keeps gold tokens), the alignment is
one to one and every count spaCy makes from sets of per-token tuples is a sum over arrays.
spaCy's scorers read each token through a Python `Token` and took longer than tagging and
parsing did. The numbers here are spaCy's to the bit, quirks included; tests/test_token_scores.py
holds them to spaCy's scorers over random examples. Other examples are scored by spaCy.
"""

from collections.abc import Sequence
from typing import Any, NamedTuple, Optional

import numpy
from spacy.attrs import DEP, HEAD, ORTH, POS, SENT_START, TAG
from spacy.scorer import PRFScore
from spacy.training import Example

COLUMNS = [ORTH, TAG, POS, HEAD, DEP, SENT_START]
IGNORED_DEPS = ("p", "punct")  # spaCy's parser scorer leaves these labels out of UAS, LAS and per label


class TokenArrays(NamedTuple):
    """The predicted and reference tokens of a list of examples, laid end to end."""

    predicted: dict[str, numpy.ndarray]  # "tag", "pos", "dep" ids; "head": the head's index in its doc; "sent_start"
    reference: dict[str, numpy.ndarray]
    example: numpy.ndarray  # int64: the example each token is of
    offsets: numpy.ndarray  # int64: where each example's tokens start, and the end
    position: numpy.ndarray  # int64: its index in its doc
    space: numpy.ndarray  # bool: its text is whitespace (spaCy's scorers pass over it)
    blank: numpy.ndarray  # bool: its text is whitespace or empty (`not text.strip()`)
    strings: Any  # the StringStore the ids are read with


def token_arrays(examples: Sequence[Example]) -> Optional[TokenArrays]:
    """The examples' token arrays, or None if some example's predicted tokens are not its reference's."""
    predicted, reference = [], []
    for example in examples:
        pred, gold = example.predicted.to_array(COLUMNS), example.reference.to_array(COLUMNS)
        if pred.shape != gold.shape or not numpy.array_equal(pred[:, 0], gold[:, 0]):
            return None
        predicted.append(pred)
        reference.append(gold)
    if not examples:
        return None
    lengths = numpy.array([len(values) for values in predicted], dtype=numpy.int64)
    example_of = numpy.repeat(numpy.arange(len(lengths)), lengths)
    position = numpy.arange(lengths.sum()) - numpy.repeat(numpy.cumsum(lengths) - lengths, lengths)
    pred_columns, gold_columns = numpy.concatenate(predicted), numpy.concatenate(reference)
    strings = examples[0].predicted.vocab.strings
    orths, orth_ids = numpy.unique(pred_columns[:, 0], return_inverse=True)
    texts = [strings[int(orth)] for orth in orths]
    space = numpy.array([text.isspace() for text in texts], dtype=bool)[orth_ids]
    blank = numpy.array([not text.strip() for text in texts], dtype=bool)[orth_ids]
    offsets = numpy.concatenate([[0], numpy.cumsum(lengths)])
    return TokenArrays(
        _columns(pred_columns, position),
        _columns(gold_columns, position),
        example_of,
        offsets,
        position,
        space,
        blank,
        strings,
    )


def _columns(values: numpy.ndarray, position: numpy.ndarray) -> dict[str, numpy.ndarray]:
    # HEAD is stored as the offset to the head, in uint64; a token whose label is unset is its own head (`token.head`)
    head = numpy.where(values[:, 4] == 0, position, position + values[:, 3].astype(numpy.int64))
    sent_start = values[:, 5].astype(numpy.int64)  # 1, -1, or 0 where unset
    return {"tag": values[:, 1], "pos": values[:, 2], "head": head, "dep": values[:, 4], "sent_start": sent_start}


def attr_accuracy(arrays: TokenArrays, attr: str) -> dict[str, Any]:
    """`Scorer.score_token_attr(examples, attr)` for "tag" or "pos" (values read with getattr)."""
    gold, pred = arrays.reference[attr], arrays.predicted[attr]
    scored = gold != 0  # 0: unset, one of spaCy's missing values
    counted = scored & ~arrays.space
    tp = int(numpy.count_nonzero(counted & (pred == gold)))
    score = _prf(tp, int(numpy.count_nonzero(counted)), int(numpy.count_nonzero(scored)))
    return {f"{attr}_acc": score.fscore if len(score) else None}


class DepLabels(NamedTuple):
    """The dependency labels compared in lower case, as the parser's scorers compare them."""

    names: numpy.ndarray  # the labels in lower case, sorted
    reference: numpy.ndarray  # each token's label among them
    predicted: numpy.ndarray


def dep_labels(arrays: TokenArrays) -> DepLabels:
    both = numpy.concatenate([arrays.reference["dep"], arrays.predicted["dep"]])
    dep_ids, dep_of_token = numpy.unique(both, return_inverse=True)
    lowered = numpy.array([arrays.strings[int(dep)].lower() for dep in dep_ids], dtype=object)
    names, label_of_dep = numpy.unique(lowered, return_inverse=True)
    gold_label, pred_label = numpy.split(label_of_dep[dep_of_token], 2)
    return DepLabels(names, gold_label, pred_label)


def dep_scores(arrays: TokenArrays, labels: DepLabels) -> dict[str, Any]:
    """spaCy's parser scores of the arcs (`Scorer.score_deps` with the parser scorer's lowercased
    labels, punctuation ignored): dep_uas, dep_las and dep_las_per_type."""
    if not len(arrays.space):
        return {"dep_uas": None, "dep_las": None, "dep_las_per_type": None}
    names, gold_label, pred_label = labels
    ignored = numpy.isin(names, IGNORED_DEPS)
    missing = arrays.reference["dep"] == 0
    gold_in = ~missing & ~ignored[gold_label]
    # spaCy's set of missing positions is made once per call, so a position missing in one example
    # is passed over in the examples after it too; counted the same way here.
    n_examples = len(arrays.offsets) - 1  # past every example: no position missing yet
    first_missing = numpy.full(int(arrays.position.max()) + 1, n_examples, dtype=numpy.int64)
    numpy.minimum.at(first_missing, arrays.position[missing], arrays.example[missing])
    passed_over = first_missing[arrays.position] <= arrays.example
    pred_in = ~arrays.space & ~passed_over & ~ignored[pred_label] & ~arrays.blank
    heads_right = pred_in & gold_in & (arrays.predicted["head"] == arrays.reference["head"])
    both_right = heads_right & (pred_label == gold_label)
    n_pred, n_gold = int(numpy.count_nonzero(pred_in)), int(numpy.count_nonzero(gold_in))
    unlabelled = _prf(int(numpy.count_nonzero(heads_right)), n_pred, n_gold)
    if not len(unlabelled):
        return {"dep_uas": None, "dep_las": None, "dep_las_per_type": None}
    labelled = _prf(int(numpy.count_nonzero(both_right)), n_pred, n_gold)
    counts = zip(
        *(
            numpy.bincount(labels, minlength=len(names)).tolist()
            for labels in (gold_label[both_right], pred_label[pred_in], gold_label[gold_in])
        )
    )
    per_label = [_prf(*label_counts) for label_counts in counts]
    seen = _first_seen(arrays, gold_label, gold_in, pred_label, pred_in)
    return {
        "dep_uas": unlabelled.fscore,
        "dep_las": labelled.fscore,
        "dep_las_per_type": {names[k]: per_label[k].to_dict() for k in seen},
    }


def sentence_scores(arrays: TokenArrays) -> dict[str, Optional[float]]:
    """`Scorer.score_spans(examples, "sents", has_annotation=...)` as the parser's scorer asks it, without
    the per-type scores: sents_p, sents_r, sents_f. For docs without a "sents" user hook (`doc.sents`
    then cuts at each token whose sent_start is 1)."""
    lengths = numpy.diff(arrays.offsets)
    gold = _sentences(arrays.reference["sent_start"], arrays.offsets, arrays.position)
    pred = _sentences(arrays.predicted["sent_start"], arrays.offsets, arrays.position)
    scored = _has_sentences(arrays.reference["sent_start"], arrays.offsets, lengths)
    predicted = scored & _has_sentences(arrays.predicted["sent_start"], arrays.offsets, lengths)
    gold_starts, pred_starts = gold[0] & scored[arrays.example], pred[0] & predicted[arrays.example]
    same = gold_starts & pred_starts & (gold[1] == pred[1])
    tp = int(numpy.count_nonzero(same))
    score = _prf(tp, int(numpy.count_nonzero(pred_starts)), int(numpy.count_nonzero(gold_starts)))
    if not len(score):
        return {"sents_p": None, "sents_r": None, "sents_f": None}
    return {"sents_p": score.precision, "sents_r": score.recall, "sents_f": score.fscore}


def _sentences(sent_start: numpy.ndarray, offsets: numpy.ndarray, position: numpy.ndarray):
    """Which tokens start a sentence of `doc.sents` (a doc's first token, and each whose sent_start is 1), and
    for each token where the next sentence, or its doc, starts (batch positions)."""
    starts = (sent_start == 1) | (position == 0)
    bounds = numpy.union1d(numpy.flatnonzero(starts), offsets)
    following = bounds[numpy.searchsorted(bounds, numpy.arange(len(starts)), side="right")]
    return starts, following


def _has_sentences(sent_start: numpy.ndarray, offsets: numpy.ndarray, lengths: numpy.ndarray) -> numpy.ndarray:
    """`doc.has_annotation("SENT_START")` of each doc: a doc of fewer than two tokens has them, a longer one
    if a token after its first has a sent_start set."""
    set_after_first = sent_start != 0
    set_after_first[offsets[:-1][lengths > 0]] = False
    running = numpy.concatenate([[0], numpy.cumsum(set_after_first)])
    return (lengths < 2) | (running[offsets[1:]] > running[offsets[:-1]])


def _prf(tp: int, n_pred: int, n_gold: int) -> PRFScore:
    return PRFScore(tp=tp, fp=n_pred - tp, fn=n_gold - tp)


def _first_seen(arrays: TokenArrays, gold_label, gold_in, pred_label, pred_in) -> list[int]:
    """The labels in the order spaCy's per-label dict gets them: example by example, the reference's
    tokens, then the predicted ones."""
    longest = int(arrays.position.max()) + 1
    order = 2 * longest * arrays.example + arrays.position
    keys = numpy.concatenate([order[gold_in], order[pred_in] + longest])
    events = numpy.concatenate([gold_label[gold_in], pred_label[pred_in]])[numpy.argsort(keys, kind="stable")]
    seen, first = numpy.unique(events, return_index=True)
    return seen[numpy.argsort(first)].tolist()


def all_token_scores(arrays: TokenArrays, labels: DepLabels) -> dict[str, float]:
    """UAS, LAS and label accuracy over every token with a reference label, punctuation included:
    dep_uas_all, dep_las_all, dep_label_acc (labels compared in lower case); {} if none has one."""
    labelled = arrays.reference["dep"] != 0
    n = int(numpy.count_nonzero(labelled))
    if not n:
        return {}
    _, gold_label, pred_label = labels
    heads_right = labelled & (arrays.predicted["head"] == arrays.reference["head"])
    labels_right = labelled & (pred_label == gold_label)
    return {
        "dep_uas_all": int(numpy.count_nonzero(heads_right)) / n,
        "dep_las_all": int(numpy.count_nonzero(heads_right & labels_right)) / n,
        "dep_label_acc": int(numpy.count_nonzero(labels_right)) / n,
    }
