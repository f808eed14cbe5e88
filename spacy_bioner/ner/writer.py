"""Spans to `Doc.ents`: tags become entity token values, presets are kept, term-list
matches add KB ids and (in "fallback" mode) entities, and scored spans go to `doc.spans`."""

import itertools

import numpy
from spacy.tokens import Doc, Span, SpanGroup

from ..gazetteer.matcher import filter_matches
from .batch import BEGIN, INSIDE, OUTSIDE, laid_end_to_end
from .entities import TagWriter, write_entities


def write(ner, docs: list[Doc], predictions: list) -> None:
    """Write entities to `doc.ents` (presets kept as they were) and all matches to `doc.spans`.

    Entities go in as token arrays (ENT_IOB, ENT_TYPE, ENT_KB_ID) made from
    the tags, for all docs at once: a small part of the cost of building
    Spans for `set_ents`, or of `Doc.from_array` per doc.
    """
    settings = ner.settings.gazetteer
    # Most docs need nothing more than their tags: no presets, no matches, no scored spans.
    every_doc = settings.mode == "fallback" or bool(ner.gazetteer.labels and settings.spans_key)
    if not every_doc and tag_writer(ner).write_plain(docs, predictions):
        return
    all_values = entity_values(
        ner,
        predictions[0].tags
        if len(predictions) == 1
        else numpy.concatenate([numpy.zeros(0, dtype=numpy.int32)] + [p.tags for p in predictions]),
    )
    offsets = [0, *itertools.accumulate(len(doc) for doc in docs)]
    link(ner, all_values, [p.matches for p in predictions], offsets)
    every_doc = every_doc or any(p.confidences is not None or p.alternatives is not None for p in predictions)
    for i, (doc, (_, matches, presets, confidences, alternatives)) in enumerate(zip(docs, predictions)):
        if not (presets or every_doc):
            continue
        values = all_values[offsets[i] : offsets[i + 1]]  # a view: the edits below land in all_values
        for ent in presets:  # presets with our labels were forced in the trellis; the others were kept O
            _write_entity(values, ent.start, ent.end, ent.label, ent.kb_id)
        if settings.mode == "fallback":
            for start, end, label, kb in filter_matches(matches, settings.filter):
                if (values[start:end, 0] == OUTSIDE).all():
                    span = ner.gazetteer.span(doc, (start, end, label, kb))
                    _write_entity(values, start, end, span.label, span.kb_id)
        for key, scored in ((ner.name, confidences), (f"{ner.name}_alternatives", alternatives)):
            if scored is not None:
                doc.spans[key] = SpanGroup(
                    doc,
                    name=key,
                    spans=[Span(doc, start, end, label=ner.labels[label]) for start, end, label, _ in scored],
                    attrs={"scores": [probability for *_, probability in scored]},
                )
        if ner.gazetteer.labels and settings.spans_key:
            doc.spans[settings.spans_key] = ner.gazetteer.span_group(doc, settings.spans_key, matches)
    write_entities(docs, all_values)


def _write_entity(values: numpy.ndarray, start: int, end: int, label: int, kb_id: int) -> None:
    values[start:end] = (INSIDE, label, kb_id)
    values[start, 0] = BEGIN


def entity_values(ner, tags: numpy.ndarray) -> numpy.ndarray:
    """(ENT_IOB, ENT_TYPE, ENT_KB_ID) of each token: uint64 (n, 3), from its tag."""
    return tag_writer(ner).table.take(tags, axis=0)  # take: for a sentence, half the cost of fancy indexing


def tag_writer(ner) -> TagWriter:
    """The writer of tags for the component's labels as they are now (its table: each tag's entity values)."""
    labels = tuple(ner.labels)
    made = ner.tag_writer
    if made is None or made.labels != labels:
        type_ids = [0] + [ner.vocab.strings.add(label) for label in labels]
        n_moves = len(ner.scheme.moves)
        table = numpy.zeros((1 + len(labels) * n_moves, 3), dtype=numpy.uint64)
        table[0, 0] = OUTSIDE
        for tag in range(1, len(table)):
            move = ner.scheme.moves[(tag - 1) % n_moves]
            table[tag, :2] = (BEGIN if move in "BU" else INSIDE, type_ids[(tag - 1) // n_moves + 1])
        made = ner.tag_writer = TagWriter(table, labels)
    return made


def link(ner, values: numpy.ndarray, matches: list[numpy.ndarray], offsets: list[int]) -> None:
    """Give each entity that is exactly a match of its label the KB id of the first such match.

    values: the batch's entity values, docs laid end to end at offsets; matches: each doc's match rows.
    """
    if not any(len(doc_matches) for doc_matches in matches):  # as for most docs without term lists
        return
    rows = laid_end_to_end(matches, offsets)
    gazetteer = ner.gazetteer
    type_ids = numpy.array(
        [ner.vocab.strings.add(label) if label in ner.labels else 0 for label in gazetteer.labels], dtype=numpy.uint64
    )
    starts, ends, types = rows[:, 0], rows[:, 1], type_ids[rows[:, 2]]
    iob = values[:, 0]
    # An entity that begins at a token ends at the next token that does not continue it
    # (a doc's first token never continues one, so entities end at doc ends too).
    boundaries = numpy.append(numpy.flatnonzero(iob != INSIDE), len(values))
    entity_ends = boundaries[numpy.searchsorted(boundaries, starts, side="right")]
    exact = numpy.flatnonzero(
        (types != 0) & (iob[starts] == BEGIN) & (values[starts, 1] == types) & (entity_ends == ends)
    )
    if not len(exact):
        return
    _, first = numpy.unique(
        rows[exact, :2], axis=0, return_index=True
    )  # matches are sorted: the first is the first row
    chosen = rows[exact[first]]
    lengths = chosen[:, 1] - chosen[:, 0]
    positions = numpy.repeat(chosen[:, 0] - numpy.cumsum(lengths) + lengths, lengths) + numpy.arange(lengths.sum())
    kb_hashes = gazetteer.kb_hashes(ner.vocab.strings, chosen[:, 3])
    values[positions, 2] = numpy.repeat(kb_hashes, lengths)
