"""How English words are usually written: the `casing` and `names` feature families' table.

Case is the tagger's best clue to a name, and text as people type it (chat in
lower case, headlines in title or upper case, a name that opens a sentence)
hides it. This table gives every word evidence that does not depend on how it
is cased here: how the word is usually cased in English text, how common it
is, and whether it is a common first name or surname. "seattle" is usually
written "Seattle"; "yesterday" is usually lower case, so a capitalized
"Yesterday" opening a sentence is no name.

Made once by scripts/make_word_case.py from spaCy's `en_lexeme_prob` table
(spacy-lookups-data, MIT: log-probabilities of a million cased words), the US
Social Security Administration's baby names and the US Census 1990 surnames
(both public domain). Like the cluster table, it holds no strings: each
lowercase word is its spaCy hash, sorted, beside three small codes, so it loads
in milliseconds and a lookup is one binary search. Weights are indexed by the
codes' names: if the table is ever rebuilt with other classes, bump
templates.TEMPLATES_VERSION.
"""

import functools
from pathlib import Path

import numpy
from spacy.strings import hash_string  # type: ignore[attr-defined]  # spaCy's strings.pyi omits it

TABLE_PATH = Path(__file__).parent.parent / "data" / "en_word_case.npz"

# Each column's classes; code 0 is always "unknown" (a word the table lacks).
USUAL_CASES = ("unknown", "lower", "mostly_lower", "mixed", "mostly_title", "title", "upper")
# Frequency classes: the word's log-probability (all casings), in steps of 2 nats from the most common.
FREQUENCIES = ("unknown", "common", "frequent", "usual", "uncommon", "rare", "very_rare")
FREQUENCY_EDGES = (-8.0, -10.0, -12.0, -14.0, -16.0)  # common: above -8, ..., very rare: below -16
# Whether the word is a first name and a surname, common or rare: "first" names given to 5,000 babies or more,
# "rare_first" to 100 or more; "surname" the 20,000 most common, "rare_surname" the rest of the census list.
FIRST_NAMES = ("", "first", "rare_first")
SURNAMES = ("", "surname", "rare_surname")
NAME_KINDS = tuple(
    "+".join(part for part in (first, surname) if part) or "unknown" for first in FIRST_NAMES for surname in SURNAMES
)


class WordCaseTable:
    """Codes of lowercase word forms, looked up by hash.

    keys (uint64[n]): Sorted hashes of the lowercase words.
    codes (uint8[n, 3]): Each word's usual case, frequency and name kind (indices into the class tuples).
    """

    def __init__(self, keys: numpy.ndarray, codes: numpy.ndarray):
        if keys.ndim != 1 or codes.shape != (len(keys), 3):
            raise ValueError(f"A word case table needs keys[n] and codes[n, 3], got {keys.shape} and {codes.shape}.")
        if len(keys) > 1 and not numpy.all(keys[1:] > keys[:-1]):
            raise ValueError("A word case table's keys must be sorted and unique.")
        limits = numpy.array([len(USUAL_CASES), len(FREQUENCIES), len(NAME_KINDS)])
        if len(codes) and (codes.max(axis=0) >= limits).any():
            raise ValueError("A word case table's codes must index the classes.")
        self.keys = numpy.ascontiguousarray(keys, dtype=numpy.uint64)
        self.codes = numpy.ascontiguousarray(codes, dtype=numpy.uint8)

    @classmethod
    def from_words(cls, words: list[str], codes: numpy.ndarray) -> "WordCaseTable":
        """A table of words (lowercased) and their codes; a later duplicate is dropped."""
        keys = numpy.array([hash_string(word.lower()) for word in words], dtype=numpy.uint64)
        keys, first = numpy.unique(keys, return_index=True)
        return cls(keys, numpy.asarray(codes, dtype=numpy.uint8)[first])

    def values(self, text: str) -> tuple[str, str, str]:
        """The usual case, frequency and name kind of a word form (its case is ignored)."""
        key = numpy.uint64(hash_string(text.lower()))
        row = int(numpy.searchsorted(self.keys, key))
        if row == len(self.keys) or self.keys[row] != key:
            return "unknown", "unknown", "unknown"
        case, frequency, name = self.codes[row].tolist()
        return USUAL_CASES[case], FREQUENCIES[frequency], NAME_KINDS[name]

    def save(self, path: Path) -> None:
        numpy.savez_compressed(path, keys=self.keys, codes=self.codes)

    @classmethod
    def load(cls, path: Path) -> "WordCaseTable":
        with numpy.load(path, allow_pickle=False) as data:  # a data file must never run code
            return cls(data["keys"], data["codes"])


def usual_case_code(lower: float, title: float, upper: float) -> int:
    """The usual-case class of a word from the probabilities of its lower, title and upper case forms."""
    total = lower + title + upper
    if upper / total >= 0.5:
        return USUAL_CASES.index("upper")
    share = title / total  # of capitalized use; the rest is lower case
    for edge, name in ((0.9, "title"), (0.6, "mostly_title"), (0.4, "mixed"), (0.1, "mostly_lower")):
        if share >= edge:
            return USUAL_CASES.index(name)
    return USUAL_CASES.index("lower")


def name_code(first: int, surname: int) -> int:
    """The name kind of a word from its first-name class and surname class (indices into FIRST_NAMES, SURNAMES)."""
    return first * len(SURNAMES) + surname


def frequency_code(log_probability: float) -> int:
    """The frequency class of a word's log-probability (all its casings together)."""
    return 1 + sum(log_probability < edge for edge in FREQUENCY_EDGES)


@functools.lru_cache(maxsize=1)
def shipped_word_case() -> WordCaseTable:
    """The package's word case table, read once per process."""
    if not TABLE_PATH.is_file():
        raise ValueError(f"The word case table {TABLE_PATH} is missing: reinstall spacy-bioner.")
    return WordCaseTable.load(TABLE_PATH)
