"""Training on text as people type it: lower-case, upper-case and title-case variants of examples.

A tagger trained on edited news leans on case: a capital says "name". Chat comes
in lower case, headlines and forms in upper or title case, and the model has
never seen a name without its capital. This augmenter, set on the training
corpus (`[corpora.train] augmenter`), hands spaCy's training loop a share of the
examples again in another case, with the same entities. Each variant is a whole doc,
as real lower-case or upper-case text is. The examples themselves are kept, so
cased text loses no training (`keep_original`).

    [corpora.train.augmenter]
    @augmenters = "bioner.case_variants.v1"
    lower = 0.2
    upper = 0.1
    title = 0.1
    keep_original = true
"""

import random
from collections.abc import Iterator
from typing import Any, Callable

from spacy.attrs import ENT_IOB, ENT_KB_ID, ENT_TYPE, POS, SENT_START, TAG
from spacy.language import Language
from spacy.tokens import Doc, Span
from spacy.training import Example
from spacy.util import registry

Variant = Callable[[str], str]


def title_word(word: str) -> str:
    """A headline's capital: the first letter raised, the rest kept ("iPhone" -> "IPhone", "IBM" stays)."""
    return word[:1].upper() + word[1:]


VARIANTS: dict[str, Variant] = {"lower": str.lower, "upper": str.upper, "title": title_word}
# What a variant's reference keeps of the original's, token by token (missing entity annotation stays missing).
KEPT = [ENT_IOB, ENT_TYPE, ENT_KB_ID, SENT_START, TAG, POS]


@registry.augmenters("bioner.case_variants.v1")
def create_case_variants(
    lower: float = 0.2, upper: float = 0.1, title: float = 0.1, keep_original: bool = True
) -> Callable[[Language, Example], Iterator[Example]]:
    """An augmenter that gives each example, with these probabilities, in lower, upper or title case.

    lower (float): Share of examples lower-cased ("john smith works for microsoft").
    upper (float): Share upper-cased ("JOHN SMITH WORKS FOR MICROSOFT").
    title (float): Share title-cased, every word's first letter raised ("John Smith Works For Microsoft").
    keep_original (bool): Give a varied example as it is too, so that cased text loses no training.
    RETURNS (Callable[[Language, Example], Iterator[Example]]): The augmenter.
    """
    shares = {"lower": lower, "upper": upper, "title": title}
    for name, share in shares.items():
        if not isinstance(share, (int, float)) or isinstance(share, bool) or not 0.0 <= share <= 1.0:
            raise ValueError(f"bioner.case_variants.v1: {name} must be a share between 0 and 1, got {share!r}.")
    if sum(shares.values()) > 1.0:
        raise ValueError(f"bioner.case_variants.v1: the shares add up to more than 1: {shares}.")

    def augment(nlp: Language, example: Example) -> Iterator[Example]:
        draw = random.random()  # spaCy's training loop seeds `random` from [training] seed
        for name, share in shares.items():
            if draw < share:
                if keep_original:
                    yield example
                yield case_variant(nlp, example, VARIANTS[name])
                return
            draw -= share
        yield example

    return augment


def case_variant(nlp: Language, example: Example, variant: Variant) -> Example:
    """The example with every reference token's text changed by `variant`; its entities, sentence starts,
    tags and span groups kept. A token whose changed form would have another length ("ß" upper-cased)
    keeps its text, so that character offsets still hold. The predicted doc is the tokenizer's, as
    spaCy's corpus reader makes it from raw text."""
    reference = example.reference
    words = [variant(token.text) for token in reference]
    words = [new if len(new) == len(token.text) else token.text for new, token in zip(words, reference)]
    changed = Doc(reference.vocab, words=words, spaces=[bool(token.whitespace_) for token in reference])
    kept: Any = reference.to_array(KEPT)  # spaCy's stub asks for thinc's Ints2d, which this array is
    changed.from_array(KEPT, kept)
    copy_span_groups(reference, changed)
    return Example(nlp.make_doc(changed.text), changed)


def copy_span_groups(reference: Doc, copy: Doc, start: int = 0) -> None:
    """Give `copy`, a doc of the reference's tokens from `start` on, the reference's span groups: the spans
    that lie in it, with their labels."""
    for key, group in reference.spans.items():
        copy.spans[key] = [
            Span(copy, span.start - start, span.end - start, label=span.label_) for span in group if span.start >= start
        ]
