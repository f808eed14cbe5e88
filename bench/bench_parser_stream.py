"""Memory over a long stream: tagger + parser on 1M short docs from raw text.

Trains bioner_tagger + bioner_parser (arc-eager, the defaults) on the
project's synthetic treebank (assets/sample_ud_train.conllu) with spacy
train, then streams N texts (the treebank's sentences, repeated) through the
pipeline with nlp.pipe, printing RSS after 10%, 50% and all of them: a leak
shows as growth between the marks. Figures are printed as JSON too.

Usage: python bench/bench_parser_stream.py [--docs 1000000]
"""

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import spacy
from common import ROOT, rss_mb, stream, train, write_results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=1_000_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for split in ("train", "dev"):
            subprocess.run(
                [
                    sys.executable,
                    str(ROOT / "scripts" / "convert_corpus.py"),
                    str(ROOT / "assets" / f"sample_ud_{split}.conllu"),
                    str(work / f"{split}.spacy"),
                    "1",
                ],
                check=True,
                capture_output=True,
            )
        train(
            work / "train.spacy",
            work / "dev.spacy",
            work / "model",
            ["--training.eval_frequency", "50"],
            config="parser.cfg",
        )
        nlp = spacy.load(work / "model" / "model-best")
    texts = [
        line[len("# text = ") :]
        for line in (ROOT / "assets" / "sample_ud_dev.conllu").read_text(encoding="utf8").splitlines()
        if line.startswith("# text = ")
    ]
    before = rss_mb()
    figures = {"rss_mb_before": before, **stream(nlp, texts, args.docs)}
    marks = [key for key in figures if key.startswith("rss_mb_after")]
    print(
        f"{args.docs:,} docs in {figures['seconds']:.0f} s; RSS before {before:.0f} MB, "
        + ", ".join(f"{key[len('rss_mb_') :]} {figures[key]:.0f} MB" for key in marks)
    )
    print(json.dumps(figures))
    print(f"written to {write_results('parser_stream', figures)}")


if __name__ == "__main__":
    main()
