"""Gold tag ids and sentences of a training Example.

spaCy's `Example.get_aligned_ner` aligns the two tokenizations character by
character, in Python, token by token: in training it cost more than the
perceptron itself. Where the predicted doc has the reference's tokens (as in
corpora converted from CoNLL/IOB files), the alignment is the identity and
the tags are read from the reference's arrays instead, with the same result.
Where it has not (the case variants' predicted docs are the tokenizer's), the
tags are aligned once and kept for the next epochs (GoldCache).
"""

import hashlib
import weakref

import numpy
from spacy.attrs import ENT_IOB, ENT_TYPE, IDX, IS_SPACE, ORTH, SENT_START
from spacy.tokens import Doc
from spacy.training import Example

from ..core.schemes import TagScheme, words_within
from .entities import entity_annotated

_OUTSIDE = 2  # ENT_IOB: 0 missing, 1 inside, 2 outside, 3 begin


def gold_tags(example: Example, scheme: TagScheme) -> numpy.ndarray:
    """Tag ids of the predicted doc's tokens; -1 where the gold is missing.
    Whitespace tokens at an entity's edges are outside it (schemes.words_within).

    RETURNS (int32[n]): One tag id per predicted token.
    """
    predicted, reference = example.predicted, example.reference
    is_space = predicted.to_array(IS_SPACE) == 1
    if not _same_tokens(example):
        aligned, biluo = example.get_aligned_ents_and_ner()
        tags = scheme.from_biluo(biluo)
        for ent in aligned:
            tags[ent.start : ent.end] = 0
            within = words_within((ent.start, ent.end, scheme.labels.index(ent.label_)), is_space)
            if within is not None:
                start, end, label = within
                tags[start:end] = scheme.from_spans([(0, end - start, label)], end - start)
        return tags
    if not entity_annotated(reference):
        return numpy.full(len(predicted), -1, dtype=numpy.int32)
    label_ids = {label: i for i, label in enumerate(scheme.labels)}
    spans = []
    for ent in reference.ents:
        if ent.label_ not in label_ids:
            raise ValueError(
                f"Gold entity label {ent.label_!r} is not among the component's labels "
                f"{scheme.labels}: add it with add_label or pass it to initialize."
            )
        within = words_within((ent.start, ent.end, label_ids[ent.label_]), is_space)
        if within is not None:
            spans.append(within)
    tags = scheme.from_spans(spans, len(predicted))
    in_entity = numpy.zeros(len(predicted), dtype=bool)
    for start, end, _ in spans:
        in_entity[start:end] = True
    known = in_entity | (reference.to_array(ENT_IOB) == _OUTSIDE) | is_space
    tags[~known] = -1
    return tags


def sentence_runs(example: Example) -> list[tuple[int, int]]:
    """(start, end) of each sentence of the predicted doc: by its own sentence
    starts, or else the reference's (spaCy's corpus reader leaves them off the
    predicted doc)."""
    predicted, reference = example.predicted, example.reference
    if predicted.has_annotation("SENT_START"):
        starts = predicted.to_array(SENT_START) == 1
    elif _same_tokens(example):
        starts = reference.to_array(SENT_START) == 1
    else:
        starts = numpy.array([start is True for start in example.get_aligned_sent_starts()], dtype=numpy.bool_)
    cuts = (numpy.flatnonzero(starts[1:]) + 1).tolist()
    return list(zip([0, *cuts], [*cuts, len(predicted)]))


def _same_tokens(example: Example) -> bool:
    predicted, reference = example.predicted, example.reference
    return len(predicted) == len(reference) and numpy.array_equal(predicted.to_array(ORTH), reference.to_array(ORTH))


class GoldCache:
    """Gold tags and sentence runs by reference doc, aligned once and reused at the next epochs.

    spaCy's training loop reads its corpus once and hands over copies of the same examples at every
    epoch: the same reference docs beside copies of the same predicted docs. Aligning the two
    tokenizations is about a quarter of an epoch's update on CoNLL-2003 with its case variants, so each
    reference's tags and runs are kept while it lives (a weak reference: the cache keeps no doc alive)
    and reused while its tokens, entities and sentences, the predicted tokens and sentences and the tag
    scheme are the same.
    """

    def __init__(self):
        self._entries: weakref.WeakKeyDictionary[Doc, tuple] = weakref.WeakKeyDictionary()

    def gold(self, example: Example, scheme: TagScheme) -> tuple[numpy.ndarray, list[tuple[int, int]]]:
        """(gold_tags(example, scheme), sentence_runs(example)), from the cache where nothing they read changed."""
        fingerprint = _fingerprint(example)
        entry = self._entries.get(example.reference)
        if entry is not None and entry[0] == fingerprint and entry[1] == scheme.tags:
            return entry[2].copy(), entry[3]
        tags, runs = gold_tags(example, scheme), sentence_runs(example)
        self._entries[example.reference] = (fingerprint, list(scheme.tags), tags.copy(), runs)
        return tags, runs


def _fingerprint(example: Example) -> bytes:
    """A digest of what gold_tags and sentence_runs read: both docs' tokens, offsets and sentence starts,
    the reference's entities."""
    digest = hashlib.blake2b(digest_size=16)
    digest.update(example.predicted.to_array([ORTH, IDX, IS_SPACE, SENT_START]).tobytes())
    digest.update(example.reference.to_array([ORTH, IDX, ENT_IOB, ENT_TYPE, SENT_START]).tobytes())
    return digest.digest()
