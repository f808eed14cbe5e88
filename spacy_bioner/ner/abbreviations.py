"""Abbreviations defined in a doc: "atrial fibrillation ( AF )".

Biomedical text names a disease or chemical once in full and then by its
short form, which on its own says little ("AF", "STZ", "PB"). The long form
does: its words are in the lexicon and the first decoding pass types it.
long_forms.py finds a definition at a parenthesis.

Some acronyms are used without a definition: the title says "insulin -
dependent diabetes mellitus", the text "IDDM". Such an acronym's long form
is the first run of words elsewhere in the doc whose initials spell it
(`undefined_acronyms`).
"""

import string
from typing import NamedTuple, Optional

import numpy
from spacy.strings import StringStore, get_string_id

from ..core.templates import COLUMNS
from .long_forms import HYPHEN, MAX_SHORT_FORM, ORTH_OPENING, definitions_in
from .screens import short_form_docs

Definition = tuple[int, int]  # the long form's span of words [start, end)
ShortForm = tuple[int, ...]  # the ORTH hashes of its words
# An undefined acronym has at least this many letters: two letters are the
# initials of some run of words in most abstracts by chance.
MIN_UNDEFINED_ACRONYM = 3


class Words(NamedTuple):
    """A doc's words as the finders below read them: its tokens, or those that
    are not whitespace, so that raw text's line breaks change nothing."""

    strings: StringStore
    orths: numpy.ndarray  # uint64 ORTH hash of each word
    sentence: numpy.ndarray  # int32 sentence number of each word, nondecreasing


def definitions(words: Words) -> dict[ShortForm, Definition]:
    """The short forms defined among a doc's words, by their ORTH hashes: the long form's span
    (long_forms.definitions_in). Docs without an opening parenthesis cost a single array comparison."""
    if not (words.orths == ORTH_OPENING).any():
        return {}
    return definitions_in(words.strings, words.orths.tolist(), words.sentence.tolist())


# What undefined_acronyms reads of each word, from its row of the tagger's
# lexicon table (templates.word_attributes): the first character, as an ASCII
# code, and whether the word may be an acronym.
_LETTERS = string.ascii_lowercase + string.digits
_INITIAL_HASHES = numpy.array([get_string_id(f"prefix1={c}") for c in _LETTERS], dtype=numpy.uint64)
_INITIAL_ORDER = numpy.argsort(_INITIAL_HASHES)
_INITIAL_CODES = numpy.frombuffer(_LETTERS.encode("ascii"), dtype=numpy.uint8)[_INITIAL_ORDER]
_INITIAL_HASHES = _INITIAL_HASHES[_INITIAL_ORDER]
BREAK, SKIPPED = ord(" "), 0  # a run of words ends at a BREAK and passes over a SKIPPED token
_HYPHEN = get_string_id(f"orth={HYPHEN}")
_UPPER, _PLAIN = get_string_id("case=upper"), get_string_id("characters=plain")
_TOO_SHORT = [get_string_id(f"length={n}") for n in range(1, MIN_UNDEFINED_ACRONYM)]


class Initials:
    """Each token's initial and whether it may be an undefined acronym, read
    from its row of the tagger's lexicon (templates.word_attributes); what a
    row gives is worked out once, when the row is new. Also whether a batch
    may define a short form or use an acronym at all: most sentences do neither.
    """

    def __init__(self):
        self._clear(generation=-1)

    def _clear(self, generation: int) -> None:
        self._generation = generation
        self._done = 0  # the lexicon rows worked out; the arrays below have room for more, as the lexicon's table does
        # 0/1 bytes, not bools: the screen reads them as bytes, and a view per call costs more than it
        self._codes = numpy.zeros(0, dtype=numpy.uint8)
        self._capitals = numpy.zeros(0, dtype=numpy.uint8)
        self._long = numpy.zeros(0, dtype=numpy.uint8)

    def docs_with_mentions(
        self,
        lexicon,
        docs: list,
        rows: numpy.ndarray,
        is_space: numpy.ndarray,
        sentence: numpy.ndarray,
        acronyms: bool,
    ) -> tuple[list[int], dict[int, dict[ShortForm, Definition]]]:
        """The docs among these (their lexicon rows, whitespace tokens and sentence numbers laid end to
        end) that define a short form or, with `acronyms`, may use one undefined (`undefined_acronyms`),
        and the definitions of each doc that has some, as `definitions` finds them (screens.short_form_docs).
        The docs left out find nothing in the short-form stage."""
        self._update(lexicon)
        return short_form_docs(
            docs,
            rows,
            is_space.view(numpy.uint8),
            sentence,
            self._codes,
            self._capitals,
            self._long,
            acronyms,
            MAX_SHORT_FORM,
            SKIPPED,
        )

    def __call__(self, lexicon, rows: numpy.ndarray) -> tuple[numpy.ndarray, numpy.ndarray]:
        """lexicon (features.Lexicon), rows (int32[n]): its row for each token.

        RETURNS: initials (uint8[n]): the first character of each word, lowercased,
            if an ASCII letter or digit; SKIPPED for a hyphen; else BREAK. And
            acronyms (bool[n]): a word in capitals of MIN_UNDEFINED_ACRONYM letters
            or more, not next to another word in capitals (a headline's words are not acronyms).
        """
        self._update(lexicon)
        capitals = self._capitals[rows].view(numpy.bool_)
        beside_capitals = numpy.zeros(len(rows), dtype=numpy.bool_)
        beside_capitals[1:] |= capitals[:-1]
        beside_capitals[:-1] |= capitals[1:]
        return self._codes[rows], capitals & ~beside_capitals & self._long[rows].view(numpy.bool_)

    def _update(self, lexicon) -> None:
        """Work out what the lexicon's new rows give: in place, in arrays that double when full,
        so that a stream of new words costs each word once, not a copy of all rows per call."""
        if lexicon.generation != self._generation:  # the lexicon restarted: its rows are new
            self._clear(lexicon.generation)
        done, size = self._done, len(lexicon)
        if size <= done:
            return
        if size > len(self._codes):
            room = max(size, 2 * len(self._codes), 1024)
            self._codes, self._capitals, self._long = (
                numpy.concatenate([array[:done], numpy.zeros(room - done, dtype=array.dtype)])
                for array in (self._codes, self._capitals, self._long)
            )
        words = lexicon.table[done:size]
        first = words[:, COLUMNS["prefix1"]]
        at = numpy.minimum(numpy.searchsorted(_INITIAL_HASHES, first), len(_INITIAL_HASHES) - 1)
        codes = numpy.where(_INITIAL_HASHES[at] == first, _INITIAL_CODES[at], BREAK).astype(numpy.uint8)
        codes[words[:, COLUMNS["orth"]] == _HYPHEN] = SKIPPED
        capitals = (words[:, COLUMNS["case"]] == _UPPER) & (words[:, COLUMNS["characters"]] == _PLAIN)
        long = numpy.ones(len(words), dtype=numpy.bool_)
        for length in _TOO_SHORT:  # two hashes: comparisons, where numpy.isin costs ~90 µs a call
            long &= words[:, COLUMNS["length"]] != length
        self._codes[done:size], self._capitals[done:size], self._long[done:size] = codes, capitals, long
        self._done = size


def undefined_acronyms(
    words: Words, defined: dict[ShortForm, Definition], initials: numpy.ndarray, acronyms: numpy.ndarray
) -> dict[ShortForm, Definition]:
    """The acronyms a doc uses without defining them, by their ORTH hashes:
    the span of their long form, the first run of words elsewhere in the
    doc whose initials spell them ("insulin - dependent diabetes mellitus"
    for "IDDM"; hyphens are skipped, other punctuation ends a run).

    initials, acronyms: the words' (see `Initials`). An acronym here is one
    of those words of ASCII letters, up to MAX_SHORT_FORM, not among
    `defined`; its long form holds no mention of it. Each acronym is looked
    for once, however often the doc uses it (one search of the doc's initials).
    """
    found: dict[ShortForm, Definition] = {}
    at = numpy.flatnonzero(acronyms).tolist()
    if not at:
        return found
    spelled = initials.tobytes().replace(bytes([SKIPPED]), b"")  # hyphens skipped
    word_at = None  # the word of each letter of `spelled`, found when an acronym is spelled (seldom)
    tried = set(defined)
    for i in at:
        orth = int(words.orths[i])
        key = (orth,)
        if key in tried:
            continue
        tried.add(key)
        letters = words.strings[orth].lower()
        if not (letters.isascii() and letters.isalpha()) or len(letters) > MAX_SHORT_FORM:
            continue
        wanted = letters.encode("ascii")
        start = spelled.find(wanted)
        while start >= 0:
            if word_at is None:
                word_at = numpy.flatnonzero(initials != SKIPPED)
            first, last = int(word_at[start]), int(word_at[start + len(wanted) - 1])
            if (words.orths[first : last + 1] != orth).all():
                found[key] = (first, last + 1)
                break
            start = spelled.find(wanted, start + 1)
    return found


Mentions = tuple[numpy.ndarray, numpy.ndarray]  # heads and starts (see `mentions`)


def mentions(words: Words, found: dict[ShortForm, Definition], placed: Optional[Mentions] = None) -> Mentions:
    """Where the defined short forms occur among a doc's words (placed:
    mentions already placed, kept as they are).

    Mentions never overlap: longer short forms are placed first ("A - T"
    before a "T" of its own), and an occurrence overlapping one already
    placed is left out.

    RETURNS: heads (int64[n]): for each word of a mention, the index of its
        long form's last word (the head), else -1; and starts (bool[n]):
        True at each mention's first word.
    """
    orths = words.orths
    if placed is None:
        heads, starts = numpy.full(len(orths), -1, dtype=numpy.int64), numpy.zeros(len(orths), dtype=numpy.bool_)
    else:
        heads, starts = placed[0].copy(), placed[1].copy()
    if not found:
        return heads, starts
    for key, (_, end) in sorted(
        ((key, span) for key, span in found.items() if len(key) > 1), key=lambda item: -len(item[0])
    ):
        at = numpy.flatnonzero(orths[: len(orths) - len(key) + 1] == key[0])
        for offset in range(1, len(key)):
            at = at[orths[at + offset] == key[offset]]
        for start in at.tolist():  # in order, so a repeat overlapping the previous one is left out
            if (heads[start : start + len(key)] < 0).all():
                starts[start] = True
                heads[start : start + len(key)] = end - 1
    # One-token short forms last, all at once (a long doc may define thousands):
    # their occurrences cannot overlap one another.
    single = sorted((key[0], end - 1) for key, (_, end) in found.items() if len(key) == 1)
    if single:
        keys = numpy.array([orth for orth, _ in single], dtype=numpy.uint64)
        key_heads = numpy.array([head for _, head in single], dtype=numpy.int64)
        which = numpy.minimum(numpy.searchsorted(keys, orths), len(keys) - 1)
        at = numpy.flatnonzero((keys[which] == orths) & (heads < 0))
        starts[at], heads[at] = True, key_heads[which[at]]
    return heads, starts


def label_short_forms(
    tags: numpy.ndarray, heads: numpy.ndarray, starts: numpy.ndarray, scheme, allowed: numpy.ndarray
) -> numpy.ndarray:
    """Tags in which every untagged mention of a defined short form is an
    entity of its long form's type, where an entity ends on the long form's
    head ("atrial fibrillation ( AF ) ... AF recurred": both AFs are
    diseases if the tagger found atrial fibrillation to be one). Biomedical
    annotation guidelines tag short forms like their long forms, and the
    tagger, which sees the long form's type only as one feature among many,
    leaves about one in seven of them out (BC5CDR dev).

    tags (int32[n]): Tag ids of docs laid end to end, as decoded.
    heads, starts: Each token's long-form head, else -1, and the mentions'
        first tokens (`mentions`, in the same positions).
    scheme (TagScheme): The tag ids' scheme.
    allowed (bool[n, n_tags]): The tags each token may take (presets, spaces).
    """
    first = numpy.flatnonzero(starts)
    if not len(first):
        return tags
    tags = tags.copy()
    # A mention runs from its first token to the next start or the next token outside every mention.
    breaks = numpy.flatnonzero(starts | (heads < 0))
    position = numpy.searchsorted(breaks, first, side="right")
    last = numpy.where(position < len(breaks), breaks[numpy.minimum(position, len(breaks) - 1)], len(tags))
    tagged = numpy.concatenate([[0], numpy.cumsum(tags != 0)])
    long_heads = heads[first]
    after = numpy.minimum(long_heads + 1, len(tags) - 1)
    # The mention is untagged, and the head ends an entity: it is tagged and the next token does not carry that entity
    # on.
    ends = (tags[long_heads] != 0) & ((long_heads + 1 == len(tags)) | ~scheme.continuing()[tags[after]])
    keep = (tagged[last] == tagged[first]) & ends
    first, last, labels = first[keep], last[keep], (tags[long_heads[keep]] - 1) // len(scheme.moves)
    # Untagged tokens are followed by no continuing tag, so an entity fits wherever its tokens may take it.
    one_word = last - first == 1
    at, new_tags = first[one_word], scheme.one_word_tags()[labels[one_word]]
    fits = allowed[at, new_tags].astype(bool)
    tags[at[fits]] = new_tags[fits]
    for start, end, label in zip(first[~one_word].tolist(), last[~one_word].tolist(), labels[~one_word].tolist()):
        new_tags = scheme.from_spans([(0, end - start, label)], end - start)
        if allowed[numpy.arange(start, end), new_tags].all():
            tags[start:end] = new_tags
    return tags
