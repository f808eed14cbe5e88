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

from collections import defaultdict
from typing import Optional

import numpy
from spacy.tokens import Doc

from .batch import Layout, laid_end_to_end
from .screens import may_split_a_list


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
    names = _known_names(ner, layout, matches)
    continuing_tags = ner.scheme.continuing()
    if not may_split_a_list(names, tags, continuing_tags.view(numpy.uint8)):
        return tags  # no entity is made up of two or more known names, as in most sentences
    continuing = continuing_tags[tags]
    # A list's first name starts an entity and ends before it does, on a token that continues it.
    firsts = names[(names[:, 1] < len(tags)) & (tags[names[:, 0]] > 0) & ~continuing[names[:, 0]]]
    firsts = firsts[continuing[firsts[:, 1]]]
    entities = _entities_at(ner.scheme, tags, continuing, numpy.unique(firsts[:, 0]))
    # Only the names inside those entities can make them up.
    inside = numpy.searchsorted(entities[:, 0], names[:, 0], side="right") - 1
    names = names[(inside >= 0) & (names[:, 1] <= entities[numpy.maximum(inside, 0), 1])]
    known: dict[int, list[int]] = defaultdict(list)
    for start, end in names.tolist():
        known[start].append(end)
    covered = [
        (entity, parts)
        for entity in map(tuple, entities.tolist())
        for parts in [_parts(entity[0], entity[1], known)]
        if parts is not None
    ]
    if not covered:
        return tags
    doc_of = numpy.searchsorted(layout.offsets, [start for (start, _, _), _ in covered], side="right") - 1
    pieces: list[Doc] = []
    for (_, parts), d in zip(covered, doc_of.tolist()):
        offset = int(layout.offsets[d])
        pieces.extend(_piece(docs[d], s - offset, e - offset) for s, e in parts)
    alone = iter(_label_alone(ner, pieces))
    tags = tags.copy()
    for (start, end, label), parts in covered:
        part_labels = [next(alone) for _ in parts]
        if part_labels[0] in (None, label) or len(set(part_labels)) > 1:
            continue  # a name of its own type, or names of mixed types ("Cleveland Indians"): a name, not a list
        spans = [(s - start, e - start, part_label) for (s, e), part_label in zip(parts, part_labels)]
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


def _entities_at(scheme, tags: numpy.ndarray, continuing: numpy.ndarray, starts: numpy.ndarray) -> numpy.ndarray:
    """The entities that begin at these sorted token positions, int64 rows (start, end, label): each runs
    over the tokens that continue it (Viterbi's tags are a valid sequence, as `to_spans` reads them)."""
    firsts = numpy.append(numpy.flatnonzero(~continuing), len(tags))  # where each entity, or an O, begins
    ends = firsts[numpy.searchsorted(firsts, starts, side="right")]
    return numpy.stack([starts, ends, (tags[starts] - 1) // len(scheme.moves)], axis=1).astype(numpy.int64)


def _known_names(ner, layout: Layout, matches: Optional[list[numpy.ndarray]]) -> numpy.ndarray:
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


def _parts(start: int, end: int, known: dict[int, list[int]]) -> Optional[list[tuple[int, int]]]:
    """The fewest known names, two or more, that make up [start, end); None if there are none such,
    or if [start, end) is itself a known name."""
    ends_at: dict[int, list[int]] = defaultdict(list)
    if end in known.get(start, ()):
        return None  # known as a whole
    for s in range(start, end):
        for e in known.get(s, ()):
            if e <= end:
                ends_at[e].append(s)
    fewest: dict[int, tuple[int, int]] = {start: (0, -1)}  # position -> (names so far, where the last one starts)
    for i in range(start + 1, end + 1):
        options = [(fewest[s][0] + 1, s) for s in ends_at[i] if s in fewest]
        if options:
            fewest[i] = min(options)
    if end not in fewest:
        return None
    parts, i = [], end
    while i > start:
        s = fewest[i][1]
        parts.append((s, i))
        i = s
    return parts[::-1]
