"""Letters, emails and forms: salutations, sign-offs and field labels, read from the layout.

A tagger trained on news has seen no letters. In "Hi Miles,\\n\\n... Best,\\nSarah" the greeting
and the sign-off look like the first words of names, and in a form ("Employer:\\nIBM\\nCity:\\n
New\\nYork") a field label follows the value before it with a single line break, which is how
wrapped prose continues a name. These rules read the lines of a doc before decoding, and
constrain Viterbi the way presets do:
- a salutation that opens a line ("Hi", "Dear", "Good morning") and a sign-off line ("Best,",
  "Kind regards,") are no entity;
- the name a salutation greets ("Hi Miles,", "Dear Dr. Chen:") and the name line under a sign-off
  are a person, when the component has a person label (`[rules] person_labels`);
- a field label ("City:", "Date of birth:") that opens a line is no entity, and no entity
  continues into it from the line before.
`[rules] letters = false` turns them off.
"""

from typing import NamedTuple, Optional

import numpy
from spacy.strings import get_string_id
from spacy.tokens import Doc, Token

from ..core.word_case import shipped_word_case
from .screens import letter_docs

SALUTATIONS = {
    ("hi",), ("hello",), ("hey",), ("dear",), ("greetings",), ("hiya",), ("howdy",), ("yo",),
    ("good", "morning"), ("good", "afternoon"), ("good", "evening"), ("good", "day"),
}  # fmt: skip
SIGN_OFFS = {
    ("best",), ("regards",), ("cheers",), ("thanks",), ("sincerely",), ("yours",), ("respectfully",), ("love",),
    ("thank", "you"), ("many", "thanks"), ("best", "regards"), ("kind", "regards"), ("warm", "regards"),
    ("warmest", "regards"), ("best", "wishes"), ("all", "the", "best"), ("take", "care"), ("yours", "truly"),
    ("yours", "sincerely"), ("sincerely", "yours"), ("with", "thanks"), ("thanks", "again"), ("talk", "soon"),
}  # fmt: skip
TITLES = {"mr", "mrs", "ms", "miss", "dr", "prof", "professor", "sir", "madam", "mx"}
MAX_NAME_WORDS = 3  # a greeted or signed name: "Miles", "Anna Maria Lopez"
MAX_LABEL_WORDS = 4  # a field label: "City", "Date of birth"
CLOSERS = {",", ":", "!", "."}


class LetterMarks(NamedTuple):
    """What the rules found in a batch, per token (batch positions)."""

    outside: numpy.ndarray  # bool: no entity may take this token
    ends: numpy.ndarray  # bool: no entity continues past this token (the line break before a field label)
    persons: list[tuple[int, int]]  # (start, end): a greeted or signed name


def letter_marks(
    docs: list[Doc], offsets: numpy.ndarray, is_space: numpy.ndarray, spaced: bool, read: Optional[list[int]] = None
) -> Optional[LetterMarks]:
    """The marks of a batch's docs; None if no doc has a salutation, sign-off or field label.
    Only docs with whitespace tokens (line breaks) or a first word that may greet are read.
    spaced: whether any token is whitespace (Layout.spaced). read: the docs the screen let through, if it
    ran already (screens.letter_docs, as layout.LayoutPass gives them)."""
    if read is None:
        read = letter_docs(docs, is_space.view(numpy.uint8), FIRST_WORD_HASHES)
    if not read:  # a sentence or a paragraph of prose, as most docs are
        return None
    bounds = offsets.tolist()
    outside, ends = numpy.zeros(bounds[-1], dtype=numpy.bool_), numpy.zeros(bounds[-1], dtype=numpy.bool_)
    persons: list[tuple[int, int]] = []
    for d in read:
        offset, end = bounds[d], bounds[d + 1]
        spaces = numpy.flatnonzero(is_space[offset:end]).tolist() if spaced else []
        _mark_doc(docs[d], _lines(docs[d], spaces), offset, outside, ends, persons)
    if not (outside.any() or persons):
        return None
    return LetterMarks(outside, ends, persons)


FIRST_WORD_HASHES = frozenset(get_string_id(phrase[0]) for phrase in SALUTATIONS)  # as a token's LOWER


LOOK = 10  # the words read at a line's start: every rule needs fewer, so a long line costs no more


def _lines(doc: Doc, spaces: list[int]) -> list[tuple[int, list[Token]]]:
    """Each line with words: where it starts, and its first LOOK words. Only the whitespace tokens
    (`spaces`, doc positions) are searched for line breaks, not every token."""
    breaks = [i for i in spaces if "\n" in doc[i].text]
    lines = []
    for start, end in zip([0] + [i + 1 for i in breaks], breaks + [len(doc)]):
        words: list[Token] = []
        for i in range(start, end):
            if not doc[i].is_space:
                words.append(doc[i])
                if len(words) == LOOK:
                    break
        if words:
            lines.append((start, words))
    return lines


def _mark_doc(
    doc: Doc,
    lines: list[tuple[int, list[Token]]],
    offset: int,
    outside: numpy.ndarray,
    ends: numpy.ndarray,
    persons: list[tuple[int, int]],
) -> None:
    for number, (start, words) in enumerate(lines):
        lowers = tuple(t.lower_ for t in words)
        if _is_sign_off(lowers):
            outside[offset + words[0].i : offset + words[-1].i + 1] = True
            if number + 1 < len(lines):
                name = lines[number + 1][1]
                if 1 <= len(name) <= MAX_NAME_WORDS and all(_is_name_word(t.text) for t in name) and _may_name(name):
                    persons.append((offset + name[0].i, offset + name[-1].i + 1))
            continue
        greeting = _salutation_length(lowers)
        if greeting:
            outside[offset + words[0].i : offset + words[greeting - 1].i + 1] = True
            name = _greeted_name(words[greeting:])
            if name:
                persons.append((offset + name[0].i, offset + name[-1].i + 1))
            continue
        label = _field_label_length(words)
        if label:
            outside[offset + words[0].i : offset + words[label - 1].i + 1] = True
            if start > 0:  # the line break before the label: nothing from the line above runs into it
                ends[offset + start - 1] = True


def _is_sign_off(lowers: tuple[str, ...]) -> bool:
    """A line of a sign-off phrase alone, with or without its comma ("Best,", "Kind regards")."""
    phrase = lowers[:-1] if lowers and lowers[-1] in {",", "!", "."} else lowers
    return phrase in SIGN_OFFS


def _salutation_length(lowers: tuple[str, ...]) -> int:
    """How many words of a line's start are a salutation (0: none), when a name or a comma follows it."""
    for size in (2, 1):
        if lowers[:size] in SALUTATIONS and len(lowers) > size:
            return size
    return 0


def _greeted_name(words: list[Token]) -> list[Token]:
    """The name a salutation greets: up to MAX_NAME_WORDS name words (after a title) that end the line
    or come before a comma, colon or "!"; [] for "Hi all," or "Hello there"."""
    if words and words[0].lower_.rstrip(".") in TITLES:
        words = words[2:] if len(words) > 1 and words[1].text == "." else words[1:]
    name: list[Token] = []
    for token in words:
        if token.text in CLOSERS:
            break
        if not _is_name_word(token.text) or len(name) == MAX_NAME_WORDS:
            return []
        name.append(token)
    return name if name and name[0].lower_ not in _NOT_NAMES and _may_name(name) else []


_NOT_NAMES = {"all", "everyone", "team", "there", "guys", "folks", "sir", "madam", "friends", "both", "you"}


def _field_label_length(words: list[Token]) -> int:
    """How many tokens of a line's start are a field label: up to MAX_LABEL_WORDS words and a colon,
    alone on the line (a form) or before its value ("City: Denver"). A label in capitals alone on
    its line before a colon reads as a speaker in a transcript ("OBAMA: Thank you") and is left out."""
    for i, token in enumerate(words[: MAX_LABEL_WORDS + 1]):
        if token.text == ":":
            if i == 0 or not all(t.is_alpha for t in words[:i]):
                return 0
            if len(words) > i + 1 and all(t.is_upper for t in words[:i]):
                return 0
            return i + 1
    return 0


def _may_name(words: list[Token]) -> bool:
    """Whether words may be a person's name: each a common first name or surname, or a word not usually
    written in lower case ("Sarah", "Liu Yang", "Grace"; not "Customer Service", "Grandma", "World")."""
    table = shipped_word_case()
    for token in words:
        usual_case, _, name_kind = table.values_of(token.text)
        common_name = any(part in ("first", "surname") for part in name_kind.split("+"))
        if not common_name and usual_case in ("lower", "mostly_lower"):
            return False
    return True


def _is_name_word(text: str) -> bool:
    """Letters, with an inner hyphen or apostrophe ("Anne-Marie", "O'Neill"), in any case."""
    return bool(text) and text[0].isalpha() and text.replace("-", "").replace("'", "").isalpha()
