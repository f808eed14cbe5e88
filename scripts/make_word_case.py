"""Build the word case table the `casing` and `names` feature families ship with.

    pip download --no-deps spacy-lookups-data==1.0.5     # a wheel: unzip it, or pip install it
    python scripts/make_word_case.py LEXEME_PROB NAMES_DIR [spacy_bioner/data/en_word_case.npz]

LEXEME_PROB is spacy-lookups-data's `spacy_lookups_data/data/en_lexeme_prob.json.gz`
(log-probabilities of a million cased English words). NAMES_DIR holds the
public-domain name lists of ../shared/data/gazetteers: ssa_baby_names/first_names_counts.tsv
(name, births 1880-2024) and us_census_1990_names/surnames.tsv (by frequency).

Every lowercase word whose casings together have a log-probability of at least
MIN_LOG_PROBABILITY gets its usual case (from the shares of its lower, title
and upper case forms) and frequency class; first names given to at least
MIN_BIRTHS babies and the census surnames get their name kind, common or rare.
Rebuilding with other classes changes what trained weights are indexed by:
bump templates.TEMPLATES_VERSION with it.
"""

import gzip
import json
import math
import sys
from collections import defaultdict
from pathlib import Path

import numpy

from spacy_bioner.core.word_case import TABLE_PATH, WordCaseTable, frequency_code, name_code, usual_case_code

MIN_LOG_PROBABILITY = -18.0  # about 228,000 words
COMMON_BIRTHS, MIN_BIRTHS = 5_000, 100  # about 4,200 common first names and 36,000 rare ones
COMMON_SURNAMES = 20_000  # of the census list's 88,799


def case_forms(lexeme_prob: Path) -> dict[str, list[float]]:
    """Per lowercase word: the probabilities of its lower, title and upper case forms, and of all its forms."""
    forms: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0, 0.0])
    with gzip.open(lexeme_prob, "rt", encoding="utf8") as file:
        for word, log_probability in json.load(file).items():
            p, lower = math.exp(log_probability), word.lower()
            row = forms[lower]
            row[3] += p
            if word == lower:
                row[0] += p
            elif word == lower.title() or word == lower[:1].upper() + lower[1:]:
                row[1] += p
            elif word == word.upper():
                row[2] += p
    return forms


def name_kinds(names_dir: Path) -> dict[str, int]:
    """Per lowercase name: its name_code, from its first-name class and surname class (1 common, 2 rare)."""
    first: dict[str, int] = {}
    with open(names_dir / "ssa_baby_names" / "first_names_counts.tsv", encoding="utf8") as file:
        for line in file:
            name, births = line.rstrip("\n").split("\t")
            if int(births) >= MIN_BIRTHS:
                first[name.lower()] = 1 if int(births) >= COMMON_BIRTHS else 2
    surname: dict[str, int] = {}
    with open(names_dir / "us_census_1990_names" / "surnames.tsv", encoding="utf8") as file:
        for rank, line in enumerate(file):  # most common first
            surname.setdefault(line.split("\t")[0].lower(), 1 if rank < COMMON_SURNAMES else 2)
    return {name: name_code(first.get(name, 0), surname.get(name, 0)) for name in set(first) | set(surname)}


def build(lexeme_prob: Path, names_dir: Path) -> WordCaseTable:
    forms, kinds = case_forms(lexeme_prob), name_kinds(names_dir)
    words, codes = [], []
    for word in sorted(set(forms) | set(kinds)):
        lower, title, upper, total = forms.get(word, (0.0, 0.0, 0.0, 0.0))
        known = total > 0 and math.log(total) >= MIN_LOG_PROBABILITY and lower + title + upper > 0
        if not known and word not in kinds:
            continue
        words.append(word)
        codes.append(
            (
                usual_case_code(lower, title, upper) if known else 0,
                frequency_code(math.log(total)) if known else 0,
                kinds.get(word, 0),
            )
        )
    return WordCaseTable.from_words(words, numpy.array(codes, dtype=numpy.uint8))


def main(lexeme_prob: Path, names_dir: Path, output: Path = TABLE_PATH) -> None:
    table = build(lexeme_prob, names_dir)
    output.parent.mkdir(parents=True, exist_ok=True)
    table.save(output)
    print(f"{len(table.keys):,} words -> {output} ({output.stat().st_size / 1e6:.1f} MB)")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]), *(Path(arg) for arg in sys.argv[3:4]))
