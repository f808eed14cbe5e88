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
(both public domain). Like the cluster table, it holds no strings
(word_table.py): each lowercase word's hash beside three small codes. Weights
are indexed by the codes' names: if the table is ever rebuilt with other
classes, bump templates.TEMPLATES_VERSION.
"""

import functools
from pathlib import Path

import numpy

from .word_table import HashedWordTable

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


class WordCaseTable(HashedWordTable):
    """Codes of lowercase word forms: a row per word of its usual case, frequency and name kind (indices
    into USUAL_CASES, FREQUENCIES and NAME_KINDS)."""

    name = "A word case table"
    values_key = "codes"
    dtype = numpy.uint8
    width = 3

    def __init__(self, keys: numpy.ndarray, codes: numpy.ndarray):
        super().__init__(keys, codes)
        limits = numpy.array([len(USUAL_CASES), len(FREQUENCIES), len(NAME_KINDS)])
        if len(self.values) and (self.values.max(axis=0) >= limits).any():
            raise ValueError("A word case table's codes must index the classes.")

    def values_of(self, text: str) -> tuple[str, str, str]:
        """The usual case, frequency and name kind of a word form (its case is ignored)."""
        row = self.row(text)
        if row is None:
            return "unknown", "unknown", "unknown"
        case, frequency, name = row.tolist()
        return USUAL_CASES[case], FREQUENCIES[frequency], NAME_KINDS[name]


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
