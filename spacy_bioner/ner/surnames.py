"""A person named in full, then by surname alone (the `person_labels` setting).

News names a person in full once ("MaliVai Washington") and then by surname
("Washington won in straight sets"). The tagger reads the lone word much as
it reads it anywhere else, and "Washington" or "Jordan" are mostly places.
After decoding, a word that ends a person entity of two or more words takes
that entity's label where the same doc uses it alone: as a one-word entity
of another type, or untagged between two words that are neither tagged nor
capitalized ("King said", not "King Hussein" or "Washington Post"). This is
the one-sense-per-document reading of names (Mikheev, Moens & Grover 1999).
"""

from collections.abc import Sequence

import numpy
from spacy.tokens import Doc

from .lone_surnames import lone_surnames

PERSON_LABELS = ("PER", "PERSON", "person")  # the labels that name people, unless a setting says otherwise


def label_surnames(
    docs: list[Doc],
    tags: numpy.ndarray,
    offsets: numpy.ndarray,
    words: numpy.ndarray,
    scheme,
    person_ids: Sequence[int],
    allowed: numpy.ndarray,
) -> numpy.ndarray:
    """Tags in which every lone use of a surname the doc gives in full is a person entity.

    docs: The docs whose tags are laid end to end in `tags`.
    tags (int32[n]): Tag ids, as decoded.
    offsets (int64[n_docs + 1]): Where each doc starts in `tags`, and the end.
    words (int32[n]): An id per token, equal for equal word forms (the lexicon rows).
    scheme (TagScheme): The tag ids' scheme.
    person_ids: The labels (indices into scheme.labels) that name people.
    allowed (bool[n, n_tags]): The tags each token may take (presets, spaces).
    """
    if not len(tags) or not len(person_ids):
        return tags
    found = lone_surnames(
        tags,
        words,
        offsets,
        scheme.continuing_bytes(),
        scheme.tags_of(tuple(person_ids)).view(numpy.uint8),
        len(scheme.moves),
    )
    if not len(found):
        return tags  # no surname given in full recurs, as in most sentences
    one_word_tags = scheme.one_word_tags()
    names = {}  # word -> whether it is a name
    new_tags = tags.copy()
    for (i, label), d in zip(found.tolist(), _doc_numbers(offsets, found[:, 0]).tolist()):
        doc, j, word = docs[d], i - int(offsets[d]), int(words[i])
        if word not in names:
            names[word] = is_name(doc[j].text)
        if not names[word]:
            continue
        if tags[i] == 0 and not (_free(doc, tags, i - 1, j - 1) and _free(doc, tags, i + 1, j + 1)):
            continue
        new_tag = one_word_tags[label]
        if allowed[i, new_tag]:
            new_tags[i] = new_tag
    return new_tags


def _doc_numbers(offsets: numpy.ndarray, positions: numpy.ndarray) -> numpy.ndarray:
    """The doc each batch position falls in."""
    return numpy.searchsorted(offsets, positions, side="right") - 1


def is_name(text: str) -> bool:
    """A capitalized word of letters (apostrophes and hyphens allowed), not in capitals: "Jordan", "O'Neill", not "I" or
    "II"."""
    return text[:1].isupper() and any(c.islower() for c in text) and text.replace("'", "").replace("-", "").isalpha()


def _free(doc: Doc, tags: numpy.ndarray, i: int, j: int) -> bool:
    """Whether the doc's token j, the batch's token i, is untagged and not capitalized (or is past
    the doc's edge): a lone surname may stand beside it."""
    return not 0 <= j < len(doc) or (tags[i] == 0 and not doc[j].text[:1].isupper())
