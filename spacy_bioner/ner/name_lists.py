"""Lists of names that Viterbi fused into one entity of a type none of them has.

Names in a row with no punctuation ("London London", "Paris Berlin Madrid Rome")
look to a first-order tagger like one long organisation name. An entity of two or
more words that is made up wholly of known names (the training data's entities, in
the entity memory, and the term lists' terms) is checked: each name is tagged on its
own, out of the context that misled the tagger, and if they all come out with one
label, not the entity's, the entity is split into them. An entity that is itself a
known name, whose parts come out with its own label ("John
Smith": two known PER names) or with mixed labels ("Cleveland Indians": LOC and MISC,
a team's name), or with a word that is no known name ("Real Madrid"), is left whole.
"""

from typing import Optional

import numpy
from spacy.tokens import Doc

from .batch import Layout, laid_end_to_end
from .list_parts import name_list_parts


def split_name_lists(
    ner,
    docs: list[Doc],
    layout: Layout,
    tags: numpy.ndarray,
    allowed: numpy.ndarray,
    matches: Optional[list[numpy.ndarray]],
) -> numpy.ndarray:
    """The tags with each fused list of names split into its names (`[rules] split_name_lists`).

    matches: each doc's gazetteer matches, as decoding found them.
    """
    if not ner.settings.rules.split_name_lists:
        return tags
    names = known_names(ner, layout, matches)
    entities, parts = name_list_parts(names, tags, ner.scheme.continuing_bytes())
    if not len(entities):
        return tags  # no entity is made up of two or more known names, as in most sentences
    doc_of = numpy.searchsorted(layout.offsets, parts[:, 1], side="right") - 1
    pieces = [
        _piece(docs[d], start - offset, end - offset)
        for d, offset, start, end in zip(doc_of.tolist(), layout.offsets[doc_of].tolist(), *parts[:, 1:].T.tolist())
    ]
    alone = _label_alone(ner, pieces)
    labels = ((tags[entities[:, 0]] - 1) // len(ner.scheme.moves)).tolist()
    # Each entity's names are a run of parts' rows.
    firsts = numpy.searchsorted(parts[:, 0], numpy.arange(len(entities) + 1)).tolist()
    tags = tags.copy()
    for number, (start, end) in enumerate(entities.tolist()):
        own = slice(firsts[number], firsts[number + 1])
        part_labels = alone[own]
        if part_labels[0] in (None, labels[number]) or len(set(part_labels)) > 1:
            continue  # a name of its own type, or names of mixed types ("Cleveland Indians"): a name, not a list
        spans = [(s - start, e - start, label) for (s, e), label in zip(parts[own, 1:].tolist(), part_labels)]
        retagged = ner.scheme.from_spans(spans, end - start)
        if allowed[numpy.arange(start, end), retagged].all():
            tags[start:end] = retagged
    return tags


def _piece(doc: Doc, start: int, end: int) -> Doc:
    """Tokens of a doc as a doc of their own: their words and spaces. Not `Span.as_doc`, which copies
    the whole doc's arrays each time (quadratic on a long doc). Nothing else is needed: a piece of
    a decoded entity holds no sentence start past its first token, and no preset (a preset is an
    entity of its own, which no split can change)."""
    tokens = doc[start:end]
    return Doc(doc.vocab, words=[token.text for token in tokens], spaces=[bool(token.whitespace_) for token in tokens])


def _label_alone(ner, pieces: list[Doc]) -> list[Optional[int]]:
    """The label each piece takes when tagged on its own, if it comes out as one entity, else None."""
    if not pieces:
        return []
    tags = ner.decode(pieces).tags
    labels, at = [], 0
    for piece in pieces:
        spans = ner.scheme.to_spans(tags[at : at + len(piece)])
        labels.append(spans[0][2] if len(spans) == 1 and spans[0][:2] == (0, len(piece)) else None)
        at += len(piece)
    return labels


def known_names(ner, layout: Layout, matches: Optional[list[numpy.ndarray]]) -> numpy.ndarray:
    """Where each known name (a training entity, or a term of one of the tagger's labels) starts and ends,
    int64 rows (start, end) in batch positions: the memory's matches, then the term lists'."""
    found = [numpy.zeros((0, 4), dtype=numpy.int64)] if layout.memory_matches is None else [layout.memory_matches]
    if matches is not None and ner.gazetteer.labels:
        to_labels = numpy.array(
            [ner.labels.index(label) if label in ner.labels else -1 for label in ner.gazetteer.labels]
        )
        rows = laid_end_to_end(matches, layout.offsets.tolist())
        found.append(rows[to_labels[rows[:, 2]] >= 0] if len(rows) else rows)
    return found[0][:, :2] if len(found) == 1 else numpy.concatenate(found)[:, :2]
