"""The trellis: which tag each token may take, and the rows Viterbi runs over.

Sentence and doc edges, whitespace, entities set before us (presets), blocked
tokens, line ends and the letters' marks all become one boolean mask of allowed
tags per token. A batch with whitespace tokens is decoded over its words alone,
and `Trellis.with_spaces` gives the whitespace tokens their tags back.
"""

import functools
from typing import Callable, NamedTuple, Optional

import numpy
from spacy.attrs import ENT_IOB, ENT_TYPE
from spacy.tokens import Doc, Span

from ..core.features import words_of
from ..core.schemes import words_within
from ..gazetteer.matcher import filter_matches
from .batch import BEGIN, Layout
from .entities import entity_annotated
from .letters import LetterMarks


class Trellis(NamedTuple):
    """The rows decoding runs over: every token, or the words alone."""

    positions: Optional[numpy.ndarray]  # int64 token position of each row; None: a row per token
    allowed: numpy.ndarray  # each row's allowed tags
    offsets: numpy.ndarray  # int64 where each doc's rows begin
    with_spaces: Callable[[numpy.ndarray], numpy.ndarray]  # the rows' tags -> every token's

    def rows(self, per_token: numpy.ndarray) -> numpy.ndarray:
        """An array with a row per token, cut to the trellis's rows."""
        return per_token if self.positions is None else numpy.ascontiguousarray(per_token[self.positions])

    def row_of(self, tokens: numpy.ndarray) -> numpy.ndarray:
        """The row of each of these token positions (words, not whitespace, when rows are words)."""
        return tokens if self.positions is None else numpy.searchsorted(self.positions, tokens)

    def token_of(self, rows: numpy.ndarray) -> numpy.ndarray:
        """The token position of each of these rows."""
        return rows if self.positions is None else self.positions[rows]


def presets_of(ner, doc: Doc, matches: numpy.ndarray) -> list[Span]:
    """What the tagger must keep: the doc's entities, its blocked tokens (`doc.set_ents(blocked=...)`:
    each a one-token span without a label, which no entity may take), and gazetteer matches in "ents" mode."""
    presets = []
    if entity_annotated(doc):  # entities or blocked tokens set before us; most docs have neither
        presets = list(doc.ents)
        iob_types = doc.to_array([ENT_IOB, ENT_TYPE])
        blocked = numpy.flatnonzero((iob_types[:, 0] == BEGIN) & (iob_types[:, 1] == 0))
        presets.extend(Span(doc, i, i + 1) for i in blocked.tolist())
    settings = ner.settings.gazetteer
    if settings.mode == "ents":
        taken = {i for ent in presets for i in range(ent.start, ent.end)}
        for start, end, label, kb in filter_matches(matches, settings.filter):
            if not taken.intersection(range(start, end)):
                presets.append(ner.gazetteer.span(doc, (start, end, label, kb)))
    return sorted(presets, key=lambda span: span.start)


def allowed_tags(ner, layout: Layout, presets: list[list[Span]]) -> numpy.ndarray:
    """Which tag each token of the batch may take (sentence and doc edges, whitespace, presets)."""
    if (
        len(layout.rows) <= KEPT_MASK_TOKENS
        and layout.line_ends is None
        and layout.letters is None
        and not any(presets)
        and not ner.cfg["labels_from_presets"]
    ):
        return _edges_mask(ner.scheme, layout.sent_starts.tobytes(), layout.is_space.tobytes())
    forced, ends = presets_forced(ner, layout, presets)
    return _untaught_kept_out(
        ner, ner.scheme.allowed(layout.sent_starts, layout.is_space, forced, closed_before=ends), forced
    )


KEPT_MASK_TOKENS = (
    256  # short batches (single calls) share their masks: one per pattern of sentence starts and whitespace
)


@functools.lru_cache(maxsize=1024)
def _edges_mask(scheme, sent_starts: bytes, is_space: bytes) -> numpy.ndarray:
    """allowed_tags where only the sentence and doc edges and whitespace count, made once per scheme and
    pattern (the bool arrays' bytes), read-only: a sentence's mask depends on little more than its length."""
    starts, spaces = numpy.frombuffer(sent_starts, dtype=numpy.bool_), numpy.frombuffer(is_space, dtype=numpy.bool_)
    allowed = scheme.allowed(starts, spaces, numpy.full(len(starts), -1, dtype=numpy.int32))
    allowed.flags.writeable = False
    return allowed


def presets_forced(ner, layout: Layout, presets: list[list[Span]]) -> tuple[numpy.ndarray, numpy.ndarray]:
    """The tag presets force on each token (-1: free), and where an entity must not continue past one."""
    forced = numpy.full(len(layout.rows), -1, dtype=numpy.int32)
    ends = numpy.zeros(len(layout.rows), dtype=numpy.bool_)
    if any(presets):  # most docs have none: no label index to make
        _force_presets(ner, layout, presets, forced, ends)
    if layout.line_ends is not None:
        ends |= layout.line_ends
    if layout.letters is not None:
        _force_letters(ner, layout.letters, forced, ends)
    return forced, ends


def _force_letters(ner, letters: LetterMarks, forced: numpy.ndarray, ends: numpy.ndarray) -> None:
    """Salutations, sign-offs and field labels outside any entity, and the names they greet or sign
    a person, where no preset decided otherwise."""
    forced[letters.outside & (forced < 0)] = 0
    ends |= letters.ends
    person = next((ner.labels.index(label) for label in ner.settings.rules.person_labels if label in ner.labels), None)
    if person is None:
        return
    for start, end in letters.persons:
        if (forced[start:end] < 0).all():
            forced[start:end] = ner.scheme.from_spans([(0, end - start, person)], end - start)
            if end < len(ends):
                ends[end] = True


def _force_presets(ner, layout: Layout, presets: list[list[Span]], forced: numpy.ndarray, ends: numpy.ndarray) -> None:
    """Write each preset's tags into `forced` and mark the token after it in `ends`."""
    labels = {label: i for i, label in enumerate(ner.labels)}
    for doc_presets, offset in zip(presets, layout.offsets.tolist()):
        for ent in doc_presets:
            start, end = offset + ent.start, offset + ent.end
            # A label we cannot tag keeps its tokens out of our entities; whitespace at an edge is outside too.
            forced[start:end] = 0
            within = words_within((start, end, labels.get(ent.label_, -1)), layout.is_space)
            if within is not None and within[2] >= 0:
                first, last, label = within
                forced[first:last] = ner.scheme.from_spans([(0, last - first, label)], last - first)
            if end < len(ends):
                ends[end] = True


def trellis_of(ner, layout: Layout, presets: list[list[Span]], allowed: Optional[numpy.ndarray] = None) -> Trellis:
    """What Viterbi and the marginals run over: every token of the batch, or its words
    alone when it has whitespace tokens, so a line break inside an entity ("New\\nYork")
    splits nothing and no whitespace token's score counts.

    allowed: the tokens' allowed tags, if the caller has them (`allowed_tags`).
    """
    if not layout.spaced:
        return Trellis(None, allowed_tags(ner, layout, presets) if allowed is None else allowed, layout.offsets, _same)
    words, word_offsets = words_of(layout.is_space, layout.offsets)
    return Trellis(
        words,
        _words_allowed(ner, layout, presets, words),
        word_offsets,
        _with_spaces(ner.scheme, layout.is_space, words),
    )


def _same(tags: numpy.ndarray) -> numpy.ndarray:
    """with_spaces where every token is a word."""
    return tags


def _words_allowed(ner, layout: Layout, presets: list[list[Span]], words: numpy.ndarray) -> numpy.ndarray:
    """Which tag each of the batch's words may take when whitespace tokens are left
    out: a sentence start or a preset's end on whitespace moves to the next word."""
    next_word = numpy.searchsorted(words, numpy.arange(len(layout.rows)))
    forced, ends = presets_forced(ner, layout, presets)
    word_starts, word_ends = (
        numpy.zeros(len(words) + 1, dtype=numpy.bool_),
        numpy.zeros(len(words) + 1, dtype=numpy.bool_),
    )
    word_starts[next_word[layout.sent_starts]] = True
    word_ends[next_word[ends]] = True
    allowed = ner.scheme.allowed(
        word_starts[:-1], numpy.zeros(len(words), dtype=numpy.bool_), forced[words], closed_before=word_ends[:-1]
    )
    return _untaught_kept_out(ner, allowed, forced[words])


def _untaught_kept_out(ner, allowed: numpy.ndarray, forced: numpy.ndarray) -> numpy.ndarray:
    """No tag of a label met only on preset entities (cfg "labels_from_presets") where no preset forces it."""
    untaught = ner.cfg["labels_from_presets"]
    if untaught:
        columns = [ner.scheme.tag_id(move, ner.labels.index(label)) for label in untaught for move in ner.scheme.moves]
        allowed[numpy.ix_(forced < 0, columns)] = 0
    return allowed


def _with_spaces(scheme, is_space: numpy.ndarray, words: numpy.ndarray) -> Callable[[numpy.ndarray], numpy.ndarray]:
    """The function that gives every token a tag from the words' tags:
    I-x to a whitespace token when the word after it continues an x entity, else O."""
    spaces = numpy.flatnonzero(is_space)
    next_word = numpy.searchsorted(words, spaces)
    inside_tags = numpy.array(
        [0] + [scheme.tag_id("I", (tag - 1) // len(scheme.moves)) for tag in range(1, scheme.n_tags)]
    )
    continuing = scheme.continuing()

    def with_spaces(word_tags: numpy.ndarray) -> numpy.ndarray:
        tags = numpy.zeros(len(is_space), dtype=word_tags.dtype)
        tags[words] = word_tags
        following = numpy.append(word_tags, 0)[next_word]  # O after the last word
        inside = continuing[following]
        tags[spaces[inside]] = inside_tags[following[inside]]
        return tags

    return with_spaces
