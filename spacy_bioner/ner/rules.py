"""Rules after Viterbi: post-processors that retag tokens on evidence elsewhere in the doc.

Each rule takes the tags as decoded (or as the rule before it left them) and
returns new ones; `apply_rules` runs them in order and records which rule gave
each token its final tag, which `bioner explain` reports.
"""

import functools
from typing import Callable, NamedTuple

import numpy
from spacy.tokens import Doc

from .abbreviations import label_short_forms
from .batch import Layout, any_set
from .name_lists import split_name_lists
from .screens import NAME_LISTS, SHORT_FORMS, SURNAMES
from .surnames import label_surnames

# (ner, docs, layout, tags, allowed, each doc's gazetteer matches) -> new tags
Retag = Callable[[object, list[Doc], Layout, numpy.ndarray, numpy.ndarray, list[numpy.ndarray]], numpy.ndarray]


class Rule(NamedTuple):
    """A post-processor and how it names the tokens it retagged."""

    retag: Retag
    name_of: Callable[[Layout, numpy.ndarray], list[str]]  # (layout, changed token positions) -> a rule name per token
    step: int  # its bit in screens.AfterDecoding's answer


def _short_forms(
    ner, docs: list[Doc], layout: Layout, tags: numpy.ndarray, allowed: numpy.ndarray, matches
) -> numpy.ndarray:
    """short_form_labels and acronym_labels: an untagged short form takes its long form's type."""
    if layout.short_form_heads is None or layout.short_form_starts is None or not any_set(layout.short_form_starts):
        return tags  # no short form in the batch, as in most
    return label_short_forms(tags, layout.short_form_heads, layout.short_form_starts, ner.scheme, allowed)


def _short_form_names(layout: Layout, changed: numpy.ndarray) -> list[str]:
    heads = layout.abbreviation_heads
    return ["short_form_labels" if heads is not None and heads[i] >= 0 else "acronym_labels" for i in changed.tolist()]


def _surnames(
    ner, docs: list[Doc], layout: Layout, tags: numpy.ndarray, allowed: numpy.ndarray, matches
) -> numpy.ndarray:
    """person_labels: a lone surname takes the label of the full name it ends."""
    return label_surnames(docs, tags, layout.offsets, layout.rows, ner.scheme, person_ids(ner), allowed)


def person_ids(ner) -> tuple[int, ...]:
    """The indices of the labels that name people (`[rules] person_labels`) among the component's."""
    return _indices_of(tuple(ner.settings.rules.person_labels), tuple(ner.labels))


@functools.lru_cache(maxsize=16)
def _indices_of(wanted: tuple[str, ...], labels: tuple[str, ...]) -> tuple[int, ...]:
    """The indices of the wanted labels among the component's labels: kept per label set, not made per call."""
    return tuple(i for i, label in enumerate(labels) if label in wanted)


RULES = [
    Rule(split_name_lists, lambda layout, changed: ["split_name_lists"] * len(changed), NAME_LISTS),
    Rule(_short_forms, _short_form_names, SHORT_FORMS),
    Rule(_surnames, lambda layout, changed: ["person_labels"] * len(changed), SURNAMES),
]


def apply_rules(
    ner,
    docs: list[Doc],
    layout: Layout,
    tags: numpy.ndarray,
    allowed: numpy.ndarray,
    matches: list[numpy.ndarray],
    steps: int,
) -> tuple[numpy.ndarray, dict[int, str]]:
    """The tags after every rule, and the rule that last retagged each token it changed (batch positions).

    steps: the rules that may change these tags (screens.AfterDecoding); most sentences need none.
    """
    retagged: dict[int, str] = {}
    for rule in RULES:
        if not steps & rule.step:
            continue
        new_tags = rule.retag(ner, docs, layout, tags, allowed, matches)
        if new_tags is tags:  # the rule found nothing to do
            continue
        changed = numpy.flatnonzero(new_tags != tags)
        retagged.update(zip(changed.tolist(), rule.name_of(layout, changed)))
        tags = new_tags
        steps = ~0  # the screen read the tags before this rule changed them: the later rules run unscreened
    return tags, retagged
