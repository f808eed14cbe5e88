"""Tokens: a group of docs laid end to end, and what the features read of each token
(Layout). The trellis decoding runs over is made from it in trellis.py.

Functions here take the component (`ner`) for its settings, lexicon and memory;
they keep no state of their own but a cache of empty mentions (_read_only_no_mentions)
and the component's compiled layout (layout_pass, kept as `ner.layout_pass`).
"""

import functools
from collections.abc import Iterable
from typing import Callable, NamedTuple, Optional

import numpy
from spacy.tokens import Doc

from ..core.features import batch_layout, batch_orths, words_of
from ..core.templates import (
    ABBREVIATION_FAMILY,
    LOWERCASE_DOCS_FAMILY,
    MEMORY_FAMILY,
    SENTENCES_FAMILY,
    WINDOW,
)
from ..gazetteer.token_codes import match_codes
from .abbreviations import Words, mentions, undefined_acronyms
from .dropout import match_dropout
from .layout import LayoutPass
from .letters import FIRST_WORD_HASHES, LetterMarks, letter_marks
from .line_ends import entity_line_ends
from .memory import label_map_of
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
    spaced: bool = False  # whether any token is whitespace (any_set(is_space), asked once)
    # salutations, sign-offs and field labels ([rules] letters); None: none such
    letters: Optional[LetterMarks] = None


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


def any_set(flags: numpy.ndarray) -> bool:
    """Whether a bool array holds a True: numpy's `any` costs about a microsecond on a sentence's
    array and a search of its bytes a tenth of that, and a single call asks a few times."""
    return flags.tobytes().find(1) >= 0


def lay_out(ner, docs: list[Doc], folds: Optional[list[int]] = None, laid_out: Optional[tuple] = None) -> Layout:
    """The docs laid end to end, with what the features read of each token.

    folds: in training, each doc's fold of the entity memory (memory.py). Predicting,
    the steps up to the screens run in one compiled call (layout.pyx); laid_out: its
    result, if it ran already (plain_decode.PlainDecode).
    """
    rules = ner.settings.rules
    if folds is None:
        if laid_out is None:
            laid_out = layout_pass(ner).run(docs)
        offsets, sentence, sent_starts, is_space, rows, mention_ids, spaced = laid_out[:7]
        screened, read, memory_matches, memory = laid_out[7:]
    else:
        offsets, sentence, sent_starts, is_space, rows, mention_ids, memory_matches, memory = _stages(ner, docs, folds)
        screened, read = None, None
        spaced = any_set(is_space)
    heads, starts, short_form_heads, short_form_starts = _short_form_mentions(
        ner, docs, offsets, rows, sentence, is_space, folds, screened
    )
    line_ends = entity_line_ends(docs, offsets, is_space, rules.line_breaks, memory_matches) if spaced else None
    letters = letter_marks(docs, offsets, is_space, spaced, read) if rules.letters else None
    return Layout(
        offsets,
        rows,
        mention_ids,
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


def _stages(ner, docs: list[Doc], folds: Optional[list[int]]) -> tuple:
    """What layout.LayoutPass.run gives before its screens, step by step: how training lays out its
    batches (the memory matched by fold), and what tests hold the compiled pass to."""
    features = ner.settings.features
    offsets, sentence, sent_starts, is_space = batch_layout(docs, sentence_ends=SENTENCES_FAMILY in features)
    lexicon = ner.featurizer.lexicon
    rows, mention_ids = lexicon.rows_and_mentions(docs, lowercase_docs=LOWERCASE_DOCS_FAMILY in features)
    memory = memory_matches = None
    if MEMORY_FAMILY in features:
        if folds is None:
            memory_matches = ner.memory.match_laid_out(docs, ner.labels)
        else:
            found = [match_dropout(ner, doc_found) for doc_found in ner.memory.match(docs, ner.labels, folds)]
            memory_matches = laid_end_to_end(found, offsets.tolist())
        memory = match_codes(memory_matches, len(rows), len(ner.labels))
    return offsets, sentence, sent_starts, is_space, rows, mention_ids, memory_matches, memory


def layout_pass(ner) -> LayoutPass:
    """The compiled layout for the component's lexicon, memory, labels and settings as they are now: made
    again only when one of them has changed since the last call (training, adding a label)."""
    featurizer, settings, labels = ner.featurizer, ner.settings, ner.cfg["labels"]
    features, rules = settings.features, settings.rules
    initials = featurizer.initials if ABBREVIATION_FAMILY in features or rules.acronym_labels else None
    memory = ner.memory.entries if MEMORY_FAMILY in features else None
    made = ner.layout_pass
    if made is None or not made.made_from(featurizer.lexicon, initials, memory, settings, len(labels)):
        made = ner.layout_pass = LayoutPass(
            featurizer.lexicon,
            initials,
            rules.acronym_labels,
            memory,
            None if memory is None else label_map_of(memory, labels),
            len(labels),
            SENTENCES_FAMILY in features,
            LOWERCASE_DOCS_FAMILY in features,
            FIRST_WORD_HASHES if rules.letters else None,
            settings,
        )
    return made


def _short_form_mentions(
    ner,
    docs: list[Doc],
    offsets: numpy.ndarray,
    rows: numpy.ndarray,
    sentence: numpy.ndarray,
    is_space: numpy.ndarray,
    folds: Optional[list[int]],
    screened: Optional[tuple[list[int], dict]] = None,
) -> tuple[Optional[numpy.ndarray], ...]:
    """The mentions of short forms, laid end to end (laid_end_to_end_mentions): those defined in their doc, for
    the abbreviations family (heads, starts), and when predicting those labelled after decoding
    (short_form_heads, short_form_starts: defined ones with short_form_labels, undefined acronyms with
    acronym_labels). None where the family or rule is off. screened: the screen's result if it ran
    already (Initials.docs_with_mentions, as layout.LayoutPass gives it)."""
    features, rules = ner.settings.features, ner.settings.rules
    family = ABBREVIATION_FAMILY in features
    label_defined = family and rules.short_form_labels
    label_acronyms = folds is None and rules.acronym_labels
    heads = starts = short_form_heads = short_form_starts = None
    if not (family or label_acronyms):
        return heads, starts, short_form_heads, short_form_starts
    lexicon, initials = ner.featurizer.lexicon, ner.featurizer.initials
    labelled = label_acronyms or (folds is None and label_defined)
    if screened is None:
        screened = initials.docs_with_mentions(lexicon, docs, rows, is_space, sentence, label_acronyms)
    flagged, defined = screened
    if not flagged:  # as in most sentences
        return _mentionless(len(rows), family, labelled)
    # Found among the words: a line break is not part of a long form, nor does it end one.
    words, word_offsets = words_of(is_space, offsets)
    # Of the docs the screen let through (it read their definitions), only those with an acronym
    # may use one undefined; the others are not read word by word.
    using = set()
    if label_acronyms:
        codes, acronyms = initials(lexicon, rows[words])
        using = set(flagged) & _docs_with(acronyms, word_offsets)
    doc_span = [slice(a, b) for a, b in zip(word_offsets.tolist(), word_offsets[1:].tolist())]  # each doc's words
    word_orths = batch_orths(docs)[words]
    doc_words = {
        d: Words(docs[d].vocab.strings, word_orths[doc_span[d]], sentence[words[doc_span[d]]])
        for d in sorted(set(defined) | using)
    }
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
