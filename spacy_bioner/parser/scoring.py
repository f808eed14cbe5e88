"""The parser's scores: spaCy's, plus UAS, LAS and label accuracy over every token."""

from collections.abc import Iterable
from typing import Any, Callable

from spacy.pipeline.dep_parser import parser_score
from spacy.scorer import Scorer
from spacy.tokens import Doc
from spacy.training import Example
from spacy.util import registry

from ..core.token_scores import all_token_scores, dep_labels, dep_scores, sentence_scores, token_arrays


@registry.scorers("bioner.parser_scorer.v1")
def make_parser_scorer() -> Callable:
    return score_parse


def score_parse(examples: Iterable[Example], **kwargs) -> dict[str, Any]:
    """spaCy's parser scores (UAS, LAS and per label without punctuation, sentence P/R/F),
    plus over every token, punctuation included (as the CoNLL 2018 shared task
    scores): dep_uas_all, dep_las_all and dep_label_acc."""
    examples = list(examples)
    arrays = None if kwargs else token_arrays(examples)
    if arrays is None:  # tokens not the reference's, or spaCy's scorer settings: spaCy's scorer
        return _scores_of_aligned_tokens(examples, **kwargs)
    if any("sents" in doc.user_hooks for example in examples for doc in (example.predicted, example.reference)):
        scores = Scorer.score_spans(examples, "sents", has_annotation=_has_sents)
        del scores["sents_per_type"]
    else:
        scores = sentence_scores(arrays)
    labels = dep_labels(arrays)
    scores.update(dep_scores(arrays, labels))
    scores.update(all_token_scores(arrays, labels))
    return scores


def _has_sents(doc: Doc) -> bool:
    return doc.has_annotation("SENT_START")


def _scores_of_aligned_tokens(examples: list[Example], **kwargs) -> dict[str, Any]:
    """score_parse through spaCy's parser scorer and the examples' alignments."""
    scores = parser_score(examples, **kwargs)
    n = heads_right = both_right = labels_right = 0
    for example in examples:
        gold_heads, gold_deps = example.get_aligned_parse(projectivize=False)
        for token, gold_head, gold_dep in zip(example.predicted, gold_heads, gold_deps):
            if gold_head is None or not gold_dep:
                continue
            n += 1
            head_right = token.head.i == gold_head
            label_right = token.dep_.lower() == gold_dep.lower()
            heads_right += head_right
            labels_right += label_right
            both_right += head_right and label_right
    if n:
        scores.update(dep_uas_all=heads_right / n, dep_las_all=both_right / n, dep_label_acc=labels_right / n)
    return scores
