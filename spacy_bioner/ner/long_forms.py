"""A short form's definition at an opening parenthesis: "atrial fibrillation ( AF )".

A short form opens a parenthesis and ends it or a ";" or "," list ("( SJS ;
chondrodystrophic myotonia )"); it has a capital letter and is one token or
a few joined by hyphens ("( 5 - FU )", "( HPT - JT )": biomedical corpora
split words at hyphens). Its long form is the shortest run of words just
before the parenthesis whose characters contain the short form's, in order,
the first one starting a word (Schwartz & Hearst 2003).

`definitions_in` reads every parenthesis of a doc with `definition_at`, as
abbreviations.definitions does; the layout's screen (screens.short_form_docs) asks
about each parenthesis with only the words around it (LOOK_BEHIND, LOOK_AHEAD), so that a
doc whose parentheses define nothing skips the short-form stage without its words being
made into Python lists, and its search runs in C where the words are ASCII
(definitions.pyx, held to `definition_at`).
"""

from collections.abc import Sequence
from typing import Optional

from spacy.strings import StringStore, get_string_id

MAX_SHORT_FORM = 10  # characters
MAX_SHORT_FORM_PIECES = 3  # hyphen-joined tokens: "AO - GLD", "cis - RA"

OPENING, HYPHEN, CLOSERS = "(", "-", (")", ";", ",")  # "( short form" then a closer; pieces joined by hyphens
ORTH_OPENING, ORTH_HYPHEN = get_string_id(OPENING), get_string_id(HYPHEN)  # ORTH hashes, as StringStore gives them
ORTH_ENDS = frozenset(get_string_id(mark) for mark in CLOSERS)


def is_short_form(text: str) -> bool:
    return (
        2 <= len(text) <= MAX_SHORT_FORM
        and text[0].isalnum()
        and any(c.isupper() for c in text)
        and any(c.isalpha() for c in text)
    )


def max_long_form_words(short: str) -> int:
    """The most words a long form of `short` may have (Schwartz & Hearst)."""
    return min(len(short) + 5, 2 * len(short))


# The words definition_at reads around the "(" at word i lie in [i - LOOK_BEHIND, i + LOOK_AHEAD]:
# the longest long form before it, and after it the short form's pieces, the hyphens between them and its closer.
LOOK_BEHIND = max_long_form_words("x" * MAX_SHORT_FORM)
LOOK_AHEAD = 2 * MAX_SHORT_FORM_PIECES


def long_form(short: str, words: list[str]) -> int:
    """How many of `words` (those just before the parenthesis, in order) make
    the long form of `short`; 0 if none does.

    >>> long_form("AF", ["with", "atrial", "fibrillation"])
    2
    """
    short = short.lower()
    limit = max_long_form_words(short)
    words = [word.lower() for word in words[len(words) - min(limit, len(words)) :]]
    text = " ".join(words)
    # Match the short form's letters and digits right to left, the first one
    # where a word starts. The fewest words that hold the match start at the
    # first letter's word: one pass over the longest candidate finds them.
    position = len(text)
    for i in range(len(short) - 1, -1, -1):
        if not short[i].isalnum():
            continue
        position = text.rfind(short[i], 0, position)
        while i == 0 and position > 0 and text[position - 1].isalnum():
            position = text.rfind(short[i], 0, position)
        if position < 0:
            return 0
    start = 0
    for n_words in range(len(words), 0, -1):  # the candidate's first token opens the long form
        if start == position:
            return n_words
        start += len(words[len(words) - n_words]) + 1
    return 0


def definitions_in(
    strings: StringStore, orths: list[int], sentence: Sequence[int]
) -> dict[tuple[int, ...], tuple[int, int]]:
    """The short forms a doc's words define, by their words' ORTH hashes: their long form's span of
    words [start, end). The first definition of a short form counts.

    orths: the doc's words' ORTH hashes. sentence: each word's sentence number, nondecreasing.
    """
    found: dict[tuple[int, ...], tuple[int, int]] = {}
    for i, orth in enumerate(orths):
        if orth == ORTH_OPENING:
            definition = definition_at(strings, orths, sentence, i)
            if definition is not None and definition[0] not in found:
                found[definition[0]] = definition[1]
    return found


def definition_at(
    strings: StringStore, orths: list[int], sentence: Sequence[int], i: int
) -> Optional[tuple[tuple[int, ...], tuple[int, int]]]:
    """The short form that the "(" at word i of a doc defines, by its words' ORTH hashes, and its long
    form's span of words [start, end); None if it defines none.

    orths: the doc's words' ORTH hashes. sentence: each word's sentence number, nondecreasing.
    """
    end = i + 2  # past the short form's tokens: the first piece, then "- piece" pairs
    while end + 1 < len(orths) and orths[end] == ORTH_HYPHEN and end - i < 2 * MAX_SHORT_FORM_PIECES - 1:
        end += 2
    if i < 1 or end >= len(orths) or orths[end] not in ORTH_ENDS:
        return None
    key = tuple(orths[i + 1 : end])
    short = "".join(strings[orth] for orth in key)
    if not is_short_form(short):
        return None
    # The words long_form reads: as many as the short form allows, within the sentence of the word before "(".
    start = max(0, i - max_long_form_words(short))
    while sentence[start] != sentence[i - 1]:  # sentence numbers never fall: the sentence's first word is ahead
        start += 1
    n_words = long_form(short, [strings[orth] for orth in orths[start:i]])
    return (key, (i - n_words, i)) if n_words else None
