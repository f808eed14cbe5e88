"""Tokens: a group of docs laid end to end, what the features read of each token,
and the trellis that decoding runs over (every token, or the words alone).

Functions here take the component (`ner`) for its scheme, labels, lexicon,
gazetteer and memory; they keep no state of their own but a cache of edge masks (_edges_mask).
"""

import functools
from collections.abc import Iterable
from typing import Callable, NamedTuple, Optional

import numpy
from spacy.attrs import ENT_IOB, ENT_TYPE
from spacy.tokens import Doc, Span

from ..core.features import batch_layout, batch_orths, words_of
from ..core.schemes import words_within
from ..core.templates import ABBREVIATION_FAMILY, COLUMNS, MEMORY_FAMILY, WINDOW
from ..gazetteer.matcher import filter_matches
from ..gazetteer.token_codes import match_codes
from .abbreviations import Words, definitions, may_define, mentions, undefined_acronyms
from .dropout import match_dropout
from .entities import entity_annotated
from .letters import LetterMarks, letter_marks
from .line_ends import entity_line_ends
from .settings import TOKENS_PER_PASS

INSIDE, OUTSIDE, BEGIN = 1, 2, 3  # spaCy's ENT_IOB codes; B without a type is a blocked token


class Layout(NamedTuple):
    """A batch of docs laid end to end (see features.batch_layout)."""

    offsets: numpy.ndarray  # int64, n_docs + 1
    rows: numpy.ndarray  # int32 lexicon row of each token
    mentions: numpy.ndarray  # int32 id of each token's lowercase form (Lexicon.mention_ids)
    sentence: numpy.ndarray  # int32 sentence number of each token
    sent_starts: numpy.ndarray  # bool
    is_space: numpy.ndarray  # bool
    abbreviation_heads: Optional[
        numpy.ndarray
    ]  # int64 long-form head of each token of a defined short form's mention, else -1
    abbreviation_starts: Optional[numpy.ndarray]  # bool: the first token of each such mention
    memory_codes: Optional[numpy.ndarray] = None  # each token's place in an entity memory match per label (match_codes)
    # as abbreviation_heads/starts, for the short forms labelled after decoding (short_form_labels, acronym_labels)
    short_form_heads: Optional[numpy.ndarray] = None
    short_form_starts: Optional[numpy.ndarray] = None
    # bool per token: whitespace after which no entity continues ([rules] line_breaks); None: none such
    line_ends: Optional[numpy.ndarray] = None
    # the entity memory's matches, rows of (start, end, label, 0) in batch positions; None without the family
    memory_matches: Optional[numpy.ndarray] = None
    spaced: bool = False  # whether any token is whitespace (is_space.any(), asked once)
    # salutations, sign-offs and field labels ([rules] letters); None: none such
    letters: Optional[LetterMarks] = None


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


def groups(docs: Iterable[Doc]) -> Iterable[list[Doc]]:
    """Docs in groups of about TOKENS_PER_PASS tokens, in order."""
    group, n_tokens = [], 0
    for doc in docs:
        group.append(doc)
        n_tokens += len(doc)
        if n_tokens >= TOKENS_PER_PASS:
            yield group
            group, n_tokens = [], 0
    if group:
        yield group


def lay_out(ner, docs: list[Doc], folds: Optional[list[int]] = None) -> Layout:
    """The docs laid end to end, with what the features read of each token.

    folds: in training, each doc's fold of the entity memory (memory.py).
    """
    offsets, sentence, sent_starts, is_space = batch_layout(docs)
    features, rules = ner.settings.features, ner.settings.rules
    lexicon = ner.featurizer.lexicon
    rows = lexicon.batch_rows(docs)
    heads, starts, short_form_heads, short_form_starts = _short_form_mentions(
        ner, docs, offsets, rows, sentence, is_space, folds
    )
    memory = memory_matches = None
    if MEMORY_FAMILY in features:
        if folds is None:
            memory_matches = ner.memory.match_laid_out(docs, ner.labels)
        else:
            found = [match_dropout(ner, doc_found) for doc_found in ner.memory.match(docs, ner.labels, folds)]
            memory_matches = laid_end_to_end(found, offsets.tolist())
        memory = match_codes(memory_matches, len(rows), len(ner.labels))
    spaced = bool(is_space.any())
    line_ends = entity_line_ends(docs, offsets, is_space, rules.line_breaks, memory_matches) if spaced else None
    letters = letter_marks(docs, offsets, is_space) if rules.letters else None
    return Layout(
        offsets,
        rows,
        lexicon.mention_ids[rows],
        sentence,
        sent_starts,
        is_space,
        heads,
        starts,
        memory,
        short_form_heads,
        short_form_starts,
        line_ends,
        memory_matches,
        spaced,
        letters,
    )


def _short_form_mentions(
    ner,
    docs: list[Doc],
    offsets: numpy.ndarray,
    rows: numpy.ndarray,
    sentence: numpy.ndarray,
    is_space: numpy.ndarray,
    folds: Optional[list[int]],
) -> tuple[Optional[numpy.ndarray], ...]:
    """The mentions of short forms, laid end to end (laid_end_to_end_mentions): those defined in their doc, for
    the abbreviations family (heads, starts), and when predicting those labelled after decoding
    (short_form_heads, short_form_starts: defined ones with short_form_labels, undefined acronyms with
    acronym_labels). None where the family or rule is off."""
    features, rules = ner.settings.features, ner.settings.rules
    family = ABBREVIATION_FAMILY in features
    label_defined = family and rules.short_form_labels
    label_acronyms = folds is None and rules.acronym_labels
    heads = starts = short_form_heads = short_form_starts = None
    if not (family or label_acronyms):
        return heads, starts, short_form_heads, short_form_starts
    lexicon, initials = ner.featurizer.lexicon, ner.featurizer.initials
    labelled = label_acronyms or (folds is None and label_defined)
    if not initials.may_have_mentions(lexicon, docs, rows, is_space, label_acronyms):  # as in most sentences
        return _mentionless(len(rows), family, labelled)
    # Found among the words: a line break is not part of a long form, nor does it end one.
    words, word_offsets = words_of(is_space, offsets)
    # Only docs with an opening parenthesis can define a short form, and only docs with
    # an acronym use one undefined: the others are not read word by word.
    defining = _docs_with(may_define(lexicon.table[rows[words], COLUMNS["orth"]]), word_offsets)
    using = set()
    if label_acronyms:
        codes, acronyms = initials(lexicon, rows[words])
        using = _docs_with(acronyms, word_offsets)
    doc_span = [slice(a, b) for a, b in zip(word_offsets.tolist(), word_offsets[1:].tolist())]  # each doc's words
    word_orths = batch_orths(docs)[words]
    doc_words = {
        d: Words(docs[d].vocab.strings, word_orths[doc_span[d]], sentence[words[doc_span[d]]])
        for d in sorted(defining | using)
    }
    defined = {d: definitions(doc_words[d]) for d in defining}
    undefined = {
        d: undefined_acronyms(doc_words[d], defined.get(d, {}), codes[doc_span[d]], acronyms[doc_span[d]])
        for d in using
    }
    if not (any(defined.values()) or any(undefined.values())):  # a "(" that defines nothing, acronyms spelled nowhere
        return _mentionless(len(rows), family, labelled)
    # Only docs that define or use a short form have mentions (the others' would be empty, and are left out).
    if family:
        defined_mentions = {d: mentions(doc_words[d], defined[d]) for d in doc_words if defined.get(d)}
        heads, starts = laid_end_to_end_mentions(defined_mentions, words, word_offsets, len(rows))
        if folds is None and label_defined:
            short_form_heads, short_form_starts = heads, starts
    if label_acronyms:
        placed = defined_mentions if label_defined else {}
        labelled_mentions = {
            d: mentions(doc_words[d], undefined.get(d, {}), placed.get(d))
            for d in doc_words
            if undefined.get(d) or d in placed
        }
        short_form_heads, short_form_starts = laid_end_to_end_mentions(
            labelled_mentions, words, word_offsets, len(rows)
        )
    return heads, starts, short_form_heads, short_form_starts


def _docs_with(flags: numpy.ndarray, word_offsets: numpy.ndarray) -> set[int]:
    """The docs with a flagged word (word_offsets: where each doc's words begin)."""
    if len(word_offsets) == 2:  # one doc
        return {0} if flags.any() else set()
    return set((numpy.searchsorted(word_offsets, numpy.flatnonzero(flags), side="right") - 1).tolist())


def over_words(layout: Layout, features: Callable[[Layout], numpy.ndarray], fill) -> numpy.ndarray:
    """Context features (or the scores of window templates) of each token, a word's read as if
    the doc had no whitespace tokens: a line break in wrapped prose then changes no word's window.
    A line end (`layout.line_ends`: a blank line, or a break before an indent) fills the window
    slots on either side of it, as WINDOW tokens whose features training never saw: the words
    around it read no context across it ("City:\nManchester\n\nName:" reads no "Name" after
    "Manchester"), yet no sentence edge either, which reads as a clue of its own. Whitespace
    tokens get `fill`: decoding, training and probabilities read the words alone."""
    if not layout.spaced:
        return features(layout)
    words, word_offsets = words_of(layout.is_space, layout.offsets)
    if layout.line_ends is not None:
        words, word_offsets = _with_line_ends(words, word_offsets, layout.offsets, numpy.flatnonzero(layout.line_ends))
    view = layout._replace(
        offsets=word_offsets, rows=layout.rows[words], mentions=layout.mentions[words], sentence=layout.sentence[words]
    )
    of_words = features(view)
    out = numpy.full((len(layout.rows),) + of_words.shape[1:], fill, dtype=of_words.dtype)
    out[words] = of_words
    out[layout.is_space] = fill  # line ends included
    return out


def _with_line_ends(
    words: numpy.ndarray, word_offsets: numpy.ndarray, offsets: numpy.ndarray, line_ends: numpy.ndarray
) -> tuple[numpy.ndarray, numpy.ndarray]:
    """The words with each line end among them WINDOW times over, so that no window reaches across it,
    and where each doc (token `offsets`) begins among them."""
    at = numpy.searchsorted(words, line_ends)
    merged = numpy.insert(words, numpy.repeat(at, WINDOW), numpy.repeat(line_ends, WINDOW))
    return merged, word_offsets + WINDOW * numpy.searchsorted(line_ends, offsets)


def _no_mentions(n_tokens: int) -> tuple[numpy.ndarray, numpy.ndarray]:
    """laid_end_to_end_mentions where no doc has a mention."""
    return numpy.full(n_tokens, -1, dtype=numpy.int64), numpy.zeros(n_tokens, dtype=numpy.bool_)


def _mentionless(n_tokens: int, family: bool, labelled: bool) -> tuple[Optional[numpy.ndarray], ...]:
    """_short_form_mentions where no doc has a mention: empty mentions for the family and for the labelling
    rules if on (one read-only pair for both, and for every batch of this many tokens)."""
    empty = _read_only_no_mentions(n_tokens)
    return (*(empty if family else (None, None)), *(empty if labelled else (None, None)))


@functools.lru_cache(maxsize=256)
def _read_only_no_mentions(n_tokens: int) -> tuple[numpy.ndarray, numpy.ndarray]:
    heads, starts = _no_mentions(n_tokens)
    heads.flags.writeable = starts.flags.writeable = False
    return heads, starts


def laid_end_to_end_mentions(
    found: dict[int, tuple[numpy.ndarray, numpy.ndarray]],
    words: numpy.ndarray,
    word_offsets: numpy.ndarray,
    n_tokens: int,
) -> tuple[numpy.ndarray, numpy.ndarray]:
    """abbreviations.mentions of some docs (by doc number; the others have none) in batch token positions.

    words, word_offsets: the batch's words and where each doc's begin among them (features.words_of).
    """
    heads, starts = _no_mentions(n_tokens)
    for d, (doc_heads, doc_starts) in found.items():
        if doc_starts.any():
            first = int(word_offsets[d])
            doc_words = words[first : first + len(doc_heads)]
            heads[doc_words] = numpy.where(doc_heads >= 0, words[first + numpy.maximum(doc_heads, 0)], -1)
            starts[doc_words] = doc_starts
    return heads, starts


def laid_end_to_end(matches: list[numpy.ndarray], offsets: list[int]) -> numpy.ndarray:
    """Each doc's match rows in batch token positions, docs laid end to end at offsets."""
    if len(matches) == 1:
        return matches[0] + (offsets[0], offsets[0], 0, 0)
    rows = numpy.concatenate([numpy.zeros((0, 4), dtype=numpy.int64)] + matches)
    rows[:, :2] += numpy.repeat(numpy.asarray(offsets[: len(matches)], dtype=numpy.int64), [len(m) for m in matches])[
        :, None
    ]
    return rows


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
