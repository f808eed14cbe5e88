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
from typing import List, Sequence

import numpy
from spacy.attrs import ORTH
from spacy.tokens import Doc


def label_surnames(docs: List[Doc], tags: numpy.ndarray, offsets: numpy.ndarray, scheme, person_ids: Sequence[int],
                   allowed: numpy.ndarray) -> numpy.ndarray:
    """Tags in which every lone use of a surname the doc gives in full is a person entity.

    docs: The docs whose tags are laid end to end in `tags`.
    tags (int32[n]): Tag ids, as decoded.
    offsets (int64[n_docs + 1]): Where each doc starts in `tags`, and the end.
    scheme (TagScheme): The tag ids' scheme.
    person_ids: The labels (indices into scheme.labels) that name people.
    allowed (bool[n, n_tags]): The tags each token may take (presets, spaces).
    """
    if not len(tags) or not len(person_ids):
        return tags
    continuing = scheme.continuing()
    n_moves = len(scheme.moves)
    labels = numpy.where(tags > 0, (tags - 1) // n_moves, -1)
    ends = (tags > 0) & ~continuing[numpy.append(tags[1:], 0)]
    full_name_ends = numpy.flatnonzero(ends & continuing[tags] & numpy.isin(labels, person_ids))
    if not len(full_name_ends):
        return tags
    decoded, tags = tags, tags.copy()
    one_word = ends & ~continuing[decoded]
    unit_tags = [scheme.from_spans([(0, 1, label)], 1)[0] for label in range(len(scheme.labels))]
    starts = offsets[:-1]
    for d in numpy.unique(numpy.searchsorted(offsets, full_name_ends, side="right") - 1).tolist():
        doc, start = docs[d], int(starts[d])
        surnames = {}
        for i in full_name_ends[(full_name_ends >= start) & (full_name_ends < start + len(doc))].tolist():
            token = doc[i - start]
            if _is_name(token.text):
                surnames.setdefault(token.orth, int(labels[i]))
        if not surnames:
            continue
        orths = doc.to_array(ORTH)
        for j in numpy.flatnonzero(numpy.isin(orths, list(surnames))).tolist():
            i = start + j
            if decoded[i] == 0:
                if not (_free(doc, decoded, start, j - 1) and _free(doc, decoded, start, j + 1)):
                    continue
            elif not one_word[i] or labels[i] in person_ids:
                continue
            new_tag = unit_tags[surnames[int(orths[j])]]
            if allowed[i, new_tag]:
                tags[i] = new_tag
    return tags


def _is_name(text: str) -> bool:
    """A capitalized word of letters (apostrophes and hyphens allowed), not in capitals: "Jordan", "O'Neill", not "I" or "II"."""
    return text[:1].isupper() and any(c.islower() for c in text) and text.replace("'", "").replace("-", "").isalpha()


def _free(doc: Doc, tags: numpy.ndarray, start: int, j: int) -> bool:
    """Whether the doc's token j (if any) is untagged and not capitalized: a lone surname may stand beside it."""
    return not 0 <= j < len(doc) or (tags[start + j] == 0 and not doc[j].text[:1].isupper())
