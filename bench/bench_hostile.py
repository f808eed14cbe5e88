"""Hostile text against spaCy's tokenizer, and what `bioner annotate`'s limits leave of it.

spaCy's tokenizer splits a run of symbols (emoji, punctuation) without a space one affix
at a time, copying the rest of the run each time: time quadratic in the run. This times
`nlp.make_doc` on one run of emoji of several lengths, and on 100,000 characters of the
worst text the default limits (records.Limits: 100,000 characters, runs of at most 200
symbols) let through, each paired in the same run with 100,000 characters of prose from
CoNLL-2003 dev as the peer. Medians of --rounds runs; each text is new to the tokenizer
(its cache would otherwise answer a repeated run at once).

Usage: python bench/bench_hostile.py [--data ../shared/data] [--rounds 5]
"""

import argparse
import random
import statistics
import time
from pathlib import Path

import spacy
from common import ROOT, write_results

from spacy_bioner.records import Limits

SYMBOLS = [chr(code) for code in range(0x1F600, 0x1F650)] + list("!?.,;:'\"()[]{}<>-_=+*&^%$#@~`|/\\")
EMOJI_RUNS = (200, 1000, 4000, 8000)


def seconds(nlp, make_text, rounds: int) -> float:
    """The median time of make_doc over `rounds` texts of make_text(round)."""
    times = []
    for number in range(rounds):
        text = make_text(number)
        start = time.perf_counter()
        nlp.make_doc(text)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def emoji_run(length: int):
    return lambda number: "".join(random.Random(number).choice(SYMBOLS[:80]) for _ in range(length))


def worst_allowed(n_chars: int, run: int):
    """Runs of `run` random symbols, each after one letter: the slowest text of those tried that the limits pass."""

    def make(number: int) -> str:
        rng = random.Random(number)
        pieces = ["a" + "".join(rng.choice(SYMBOLS) for _ in range(run)) for _ in range(n_chars // (run + 1))]
        return "".join(pieces)

    return make


def prose(data: Path, n_chars: int):
    words = [
        line.split()[0]
        for line in (data / "conll2003" / "eng.testa").read_text(encoding="utf8").splitlines()
        if line.strip() and not line.startswith("-DOCSTART-")
    ]
    text = " ".join(words)
    return lambda number: text[number * 1000 : number * 1000 + n_chars]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    nlp = spacy.blank("en")
    limits = Limits()
    peer = seconds(nlp, prose(args.data, limits.max_chars), args.rounds)
    runs = {length: seconds(nlp, emoji_run(length), args.rounds) for length in EMOJI_RUNS}
    worst = seconds(nlp, worst_allowed(limits.max_chars, limits.max_symbol_run), args.rounds)
    figures = {
        "max_chars": limits.max_chars,
        "max_symbol_run": limits.max_symbol_run,
        "prose_seconds": peer,
        "emoji_runs": [{"length": length, "seconds": runs[length]} for length in EMOJI_RUNS],
        "worst_allowed_seconds": worst,
        "worst_allowed_vs_prose": worst / peer,
    }
    print(write_results("hostile", figures))
    for length in EMOJI_RUNS:
        print(f"a run of {length:,} emoji: {runs[length]:.3f} s")
    print(
        f"{limits.max_chars:,} characters: prose {peer:.3f} s, the worst the limits let through {worst:.2f} s "
        f"({worst / peer:.0f}x)"
    )


if __name__ == "__main__":
    main()
