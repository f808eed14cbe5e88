"""Recover the abstracts of a file that lost them (the BC5CDR and NCBI-disease TSVs).

Those files hold one PubMed title and abstract after another, a sentence per
block, with no document marks. The `document` and `abbreviations` feature
families need the abstract: a short form ("CIMD") is defined once, in one
sentence, and used in the others. A new abstract starts where the words of
the next few sentences share least with those of the few before
(lexical cohesion, as in Hearst's TextTiling), helped by two cues of
structured abstracts: a section heading ("METHODS :") seldom starts one, and
the sentence before an opening heading ("BACKGROUND :") is a title; a
sentence in the first person or the past tense ("we", "was") is less likely
a title. The weakest gaps are cut, about one per `sentences_per_abstract`
sentences, never two within MIN_SENTENCES. A missed cut only joins two
abstracts, while a wrong one separates a definition from its uses, so the
default cuts less often than abstracts end (about every 9 sentences in
both corpora): 13 was best on BC5CDR dev, and NCBI-disease agreed.

Usage: python scripts/abstracts.py INPUT OUTPUT [SENTENCES_PER_ABSTRACT]
  writes INPUT with a -DOCSTART- line before each abstract.
"""

import math
import sys
from collections.abc import Sequence
from pathlib import Path

from normalize_conll import DELIMITER
from spacy.lang.en.stop_words import STOP_WORDS

SENTENCES_PER_ABSTRACT = 13.0
WINDOW = 3  # sentences on each side of a gap
MIN_SENTENCES = 3  # the shortest abstract cut off
OPENING_HEADINGS = {
    "BACKGROUND",
    "OBJECTIVE",
    "OBJECTIVES",
    "PURPOSE",
    "AIM",
    "AIMS",
    "INTRODUCTION",
    "CONTEXT",
    "RATIONALE",
}
HEADINGS = OPENING_HEADINGS | {
    "METHODS",
    "METHOD",
    "RESULTS",
    "CONCLUSION",
    "CONCLUSIONS",
    "DESIGN",
    "SETTING",
    "PATIENTS",
    "FINDINGS",
    "INTERPRETATION",
    "MEASUREMENTS",
    "PARTICIPANTS",
    "INTERVENTIONS",
    "SUBJECTS",
    "MATERIALS",
}
BODY_WORDS = {"we", "our", "was", "were", "had", "this", "these", "there", "those", "they", "it", "its"}
BODY_WORD_PENALTY = 0.15


def _content_words(words: Sequence[str]) -> set[str]:
    return {w for w in (word.lower() for word in words) if len(w) >= 4 and w.isalpha() and w not in STOP_WORDS}


def _starts_with(words: Sequence[str], headings: set[str]) -> bool:
    return len(words) > 1 and words[0] in headings and words[1] == ":"


def gap_scores(sentences: Sequence[Sequence[str]]) -> list[float]:
    """For each sentence after the first, how unlikely an abstract starts there (lower: likelier)."""
    bags = [_content_words(words) for words in sentences]
    scores = []
    for gap in range(1, len(sentences)):
        before = set().union(*bags[max(0, gap - WINDOW) : gap])
        after = set().union(*bags[gap : gap + WINDOW])
        score = len(before & after) / math.sqrt(max(1, len(before)) * max(1, len(after)))
        words = sentences[gap]
        if _starts_with(words, HEADINGS):
            score += 1.0
        if gap + 1 < len(sentences) and _starts_with(sentences[gap + 1], OPENING_HEADINGS):
            score -= 1.0
        if any(word.lower() in BODY_WORDS for word in words):
            score += BODY_WORD_PENALTY
        scores.append(score)
    return scores


def abstract_starts(
    sentences: Sequence[Sequence[str]], sentences_per_abstract: float = SENTENCES_PER_ABSTRACT
) -> list[int]:
    """The sentences (by position) that start an abstract, 0 first.

    sentences: each sentence's words.
    """
    if sentences_per_abstract < 1:
        raise ValueError(f"sentences_per_abstract must be at least 1, got {sentences_per_abstract}.")
    scores = gap_scores(sentences)
    n_cuts = max(0, round(len(sentences) / sentences_per_abstract) - 1)
    cuts: list[int] = []
    for gap in sorted(range(1, len(sentences)), key=lambda g: scores[g - 1]):
        if len(cuts) == n_cuts:
            break
        if all(abs(gap - cut) >= MIN_SENTENCES for cut in cuts):
            cuts.append(gap)
    return [0] + sorted(cuts)


def read_sentences(lines: Sequence[str]) -> list[list[str]]:
    """The blocks of a one-token-a-line file (blank lines between sentences), each a list of lines."""
    sentences, current = [], []
    for line in lines:
        if line.startswith("-DOCSTART-"):
            raise ValueError("The file already marks its documents (-DOCSTART- lines): convert it as it is.")
        if line.strip():
            current.append(line.rstrip("\n"))
        elif current:
            sentences.append(current)
            current = []
    if current:
        sentences.append(current)
    return sentences


def mark_abstracts(source: Path, target: Path, sentences_per_abstract: float = SENTENCES_PER_ABSTRACT) -> int:
    """Write source with a -DOCSTART- line before each abstract; returns how many abstracts."""
    with open(source, encoding="utf8") as lines:
        sentences = read_sentences(lines)
    starts = set(abstract_starts([[line.split()[0] for line in block] for block in sentences], sentences_per_abstract))
    with open(target, "w", encoding="utf8") as out:
        for i, block in enumerate(sentences):
            if i in starts:
                out.write(DELIMITER + "\n\n")
            out.write("\n".join(block) + "\n\n")
    return len(starts)


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    mark_abstracts(Path(sys.argv[1]), Path(sys.argv[2]), *(float(a) for a in sys.argv[3:]))
