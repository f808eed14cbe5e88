"""Training on docs that open anywhere: copies of examples that begin at a later sentence.

A news corpus's docs all open the same way, with a headline and a dateline. A
tagger trained on them learns that a doc's first words are a headline's (in
CoNLL-2003, often a firm's name), and takes the name that opens what a user
types ("Kofi Annan spoke to reporters.") for a firm. This augmenter hands
spaCy's training loop, for a share of the examples of several sentences, a copy
that begins at a later sentence chosen at random, so that a doc's first words
look like any sentence's. It wraps another augmenter (the case variants, in the
shipped configs) and gives a copy of what that one gives.

    [corpora.train.augmenter]
    @augmenters = "bioner.start_variants.v1"
    share = 0.3

    [corpora.train.augmenter.base]
    @augmenters = "bioner.case_variants.v1"
"""

import random
from collections.abc import Iterable, Iterator
from typing import Callable, Optional

from spacy.language import Language
from spacy.training import Example
from spacy.util import registry

from .case_variants import copy_span_groups

Augmenter = Callable[[Language, Example], Iterable[Example]]


@registry.augmenters("bioner.start_variants.v1")
def create_start_variants(share: float = 0.3, base: Optional[Augmenter] = None) -> Augmenter:
    """An augmenter that gives, with probability `share`, a copy of each example that begins at a later sentence.

    share (float): Share of examples given again from a later sentence on (none for a single sentence).
    base (Callable): An augmenter applied first, whose examples may be copied; null for none.
    RETURNS (Callable[[Language, Example], Iterator[Example]]): The augmenter.
    """
    if not isinstance(share, (int, float)) or isinstance(share, bool) or not 0.0 <= share <= 1.0:
        raise ValueError(f"bioner.start_variants.v1: share must be a share between 0 and 1, got {share!r}.")

    def augment(nlp: Language, example: Example) -> Iterator[Example]:
        for given in base(nlp, example) if base is not None else [example]:  # `random` is seeded by spaCy's training
            yield given
            # share 0 draws nothing, so that it trains exactly as the base augmenter alone
            if share and random.random() < share and (later := later_start(nlp, given)) is not None:
                yield later

    return augment


def later_start(nlp: Language, example: Example) -> Optional[Example]:
    """The example from a sentence start after its first, chosen at random, to its end: its entities (missing
    annotation too), tags, sentence starts and the spans of its span groups kept. None for an example of one
    sentence or without sentence starts. The predicted doc is the tokenizer's, as spaCy's corpus reader makes
    it from raw text."""
    reference = example.reference
    if not reference.has_annotation("SENT_START"):
        return None
    starts = [sentence.start for sentence in reference.sents][1:]
    if not starts:
        return None
    start = random.choice(starts)
    later = reference[start:].as_doc()
    copy_span_groups(reference, later, start)  # as_doc leaves span groups behind
    return Example(nlp.make_doc(later.text), later)
