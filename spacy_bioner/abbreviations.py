"""Abbreviations defined in a doc: "atrial fibrillation ( AF )".

Biomedical text names a disease or chemical once in full and then by its
short form, which on its own says little ("AF", "STZ", "PB"). The long form
does: its words are in the lexicon and the first decoding pass types it. A
short form is one token in parentheses with a capital letter and no space;
its long form is the shortest run of words just before the parenthesis whose
characters contain the short form's, in order, the first one starting a word
(Schwartz & Hearst 2003).
"""
from typing import Dict, List, Tuple

import numpy
from spacy.attrs import ORTH, SENT_START
from spacy.tokens import Doc

Definition = Tuple[int, int]  # the long form's token span [start, end)

MAX_SHORT_FORM = 10  # characters


def _is_short_form(text: str) -> bool:
    return (
        2 <= len(text) <= MAX_SHORT_FORM and text[0].isalnum() and any(c.isupper() for c in text)
        and any(c.isalpha() for c in text)
    )


def long_form(short: str, words: List[str]) -> int:
    """How many of `words` (those just before the parenthesis, in order) make
    the long form of `short`; 0 if none does.

    >>> long_form("AF", ["with", "atrial", "fibrillation"])
    2
    """
    short = short.lower()
    limit = min(len(short) + 5, 2 * len(short))
    for n_words in range(1, min(limit, len(words)) + 1):
        candidate = " ".join(words[-n_words:]).lower()
        if not candidate[:1].isalnum():
            continue
        # Match the short form's letters and digits right to left.
        position = len(candidate)
        for i, char in enumerate(reversed(short)):
            if not char.isalnum():
                continue
            first = i == len(short) - 1
            position = candidate.rfind(char, 0, position)
            while first and position > 0 and candidate[position - 1].isalnum():
                position = candidate.rfind(char, 0, position)
            if position < 0:
                break
        else:
            if position == 0:  # the first letter opens the candidate's first word
                return n_words
    return 0


def definitions(doc: Doc) -> Dict[int, Definition]:
    """The short forms defined in a doc, by ORTH hash: the long form's token span.

    Only tokens around an opening parenthesis are read, so docs without one cost
    a single array comparison.
    """
    orths = doc.to_array(ORTH)
    found: Dict[int, Definition] = {}
    opening, closing = doc.vocab.strings["("], doc.vocab.strings[")"]
    parentheses = numpy.flatnonzero(orths == opening).tolist()
    if not parentheses:
        return found
    # A long form stays in its sentence: the start of the sentence holding each token.
    starts = numpy.zeros(len(doc), dtype=numpy.int64)
    if doc.has_annotation("SENT_START"):
        starts = numpy.maximum.accumulate(numpy.where(doc.to_array(SENT_START) == 1, numpy.arange(len(doc)), 0))
    strings = doc.vocab.strings
    for i in parentheses:
        if i < 1 or i + 2 >= len(doc) or orths[i + 2] != closing or orths[i + 1] in found:
            continue
        short = strings[orths[i + 1]]
        if not _is_short_form(short):
            continue
        start = max(int(starts[i - 1]), i - 2 * MAX_SHORT_FORM)
        n_words = long_form(short, [strings[orth] for orth in orths[start:i].tolist()])
        if n_words:
            found[int(orths[i + 1])] = (i - n_words, i)
    return found


def mentions(doc: Doc, found: Dict[int, Definition]) -> numpy.ndarray:
    """For each token, the index of its short form's long-form end token (the
    head of the long form), or -1 if the token is no defined short form."""
    heads = numpy.full(len(doc), -1, dtype=numpy.int64)
    if found:
        orths = doc.to_array(ORTH)
        for orth, (_, end) in found.items():
            heads[orths == orth] = end - 1
    return heads


def label_short_forms(tags: numpy.ndarray, heads: numpy.ndarray, scheme, allowed: numpy.ndarray) -> numpy.ndarray:
    """Tags in which every untagged mention of a defined short form is a
    one-word entity of its long form's type, where an entity ends on the long
    form's head ("atrial fibrillation ( AF ) ... AF recurred": both AFs are
    diseases if the tagger found atrial fibrillation to be one). Biomedical
    annotation guidelines tag short forms like their long forms, and the
    tagger, which sees the long form's type only as one feature among many,
    leaves about one in seven of them out (BC5CDR dev).

    tags (int32[n]): Tag ids of docs laid end to end, as decoded.
    heads (int64[n]): Each token's long-form head (`mentions`, in the same positions), else -1.
    scheme (TagScheme): The tag ids' scheme.
    allowed (bool[n, n_tags]): The tags each token may take (presets, spaces).
    """
    tags = tags.copy()
    mentions_at = numpy.flatnonzero((heads >= 0) & (tags == 0))
    if not len(mentions_at):
        return tags
    long_heads = heads[mentions_at]
    after = numpy.minimum(long_heads + 1, len(tags) - 1)
    # The head ends an entity: it is tagged and the next token does not carry that entity on.
    ends = (tags[long_heads] != 0) & ((long_heads + 1 == len(tags)) | ~scheme.continuing()[tags[after]])
    mentions_at, long_heads = mentions_at[ends], long_heads[ends]
    one_word = numpy.array([scheme.tag_id("U" if "U" in scheme.moves else "B", label) for label in range(len(scheme.labels))], dtype=numpy.int32)
    new_tags = one_word[(tags[long_heads] - 1) // len(scheme.moves)]
    # An untagged token is followed by no continuing tag, so the one-word entity fits wherever the token may take it.
    fits = allowed[mentions_at, new_tags].astype(bool)
    tags[mentions_at[fits]] = new_tags[fits]
    return tags
