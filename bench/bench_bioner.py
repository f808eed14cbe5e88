"""Accuracy, training time and tagging speed of the default bioner config.

Trains with `spacy train` (default config, model-best selected on dev), then
reports dev entity F1 three ways: as `spacy evaluate` reads the corpus (gold
tokens, no sentence starts, since converted CoNLL has unknown spaces), on gold
tokens with the gold sentence starts, and on raw text through the tokenizer.
Also the seed toy's test F1,
and tokens/s of the component alone (nlp.pipe over pre-tokenized Docs) and
from raw text. Medians of repeated runs; figures are also printed as JSON.

Usage: python bench/bench_bioner.py [--data ../shared/data] [--repeats 5]
"""

import argparse
import json
import sys
import tempfile
from pathlib import Path

import spacy
from common import (
    ROOT,
    convert,
    f1,
    gold_token_examples,
    raw_text_examples,
    spacy_evaluate_examples,
    throughput,
    train,
    write_results,
)


def conll(data: Path, work: Path, repeats: int) -> dict:
    train_path = convert(data / "conll2003" / "eng.train", work)
    dev_path = convert(data / "conll2003" / "eng.testa", work)
    seconds = train(train_path, dev_path, work / "conll", ["--training.eval_frequency", "200"])
    nlp = spacy.load(work / "conll" / "model-best")
    gold = gold_token_examples(nlp, dev_path)
    result = {
        "train_seconds": round(seconds, 1),
        "dev_f1_spacy_evaluate": f1(nlp, spacy_evaluate_examples(nlp, dev_path)),
        "dev_f1_gold_sentences": f1(nlp, gold),
        "dev_f1_raw_text": f1(nlp, raw_text_examples(nlp, dev_path)),
        "model_mb": round(
            sum(p.stat().st_size for p in (work / "conll" / "model-best").rglob("*") if p.is_file()) / 2**20, 1
        ),
    }
    result.update(throughput(nlp, gold, repeats))
    return result


def seed_toy(data: Path, work: Path) -> dict:
    result = {}
    for variant in ("nogaz", "gaz"):
        train_path = convert(data / "seed_toy" / f"train_{variant}.conll", work)
        test_path = convert(data / "seed_toy" / f"test_{variant}.conll", work)
        train(train_path, train_path, work / f"toy_{variant}", ["--training.eval_frequency", "20"])
        nlp = spacy.load(work / f"toy_{variant}" / "model-last")
        result[f"test_f1_{variant}"] = f1(nlp, spacy_evaluate_examples(nlp, test_path))
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    if not (args.data / "conll2003" / "eng.train").exists():
        sys.exit(f"No CoNLL-2003 data under {args.data}: pass --data.")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        figures = {"conll2003": conll(args.data, work, args.repeats), "seed_toy": seed_toy(args.data, work)}
    c = figures["conll2003"]
    print(
        f"CoNLL-2003 eng.testa F1: {c['dev_f1_spacy_evaluate']} (as spacy evaluate), "
        f"{c['dev_f1_gold_sentences']} (gold tokens + sentence starts), {c['dev_f1_raw_text']} (raw text)"
    )
    print(f"training on eng.train (spacy train, default config): {c['train_seconds']} s wall; model {c['model_mb']} MB")
    print(
        f"component only: {c['component_tokens_per_s']:,.0f} tokens/s (min-max "
        f"{c['component_spread'][0]:,.0f}-{c['component_spread'][1]:,.0f})"
    )
    print(f"raw text (tokenizer + bioner): {c['raw_text_tokens_per_s']:,.0f} tokens/s")
    print(f"seed toy test F1: {figures['seed_toy']}")
    print(json.dumps(figures))
    print(f"written to {write_results('bioner', figures)}")


if __name__ == "__main__":
    main()
