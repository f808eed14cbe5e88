"""What each feature family adds: dev F1 with one family switched off (CoNLL-2003 by default).

In-process training (the same updates `spacy train` makes, batches of 8 docs,
shuffled with a fixed seed), the default config and then the default minus
each family, all for the same number of epochs; dev F1 after the last epoch
and the best epoch's. Figures are printed as JSON too.

With --config '{"margin": 5.0}' every run takes those settings too; with
--families "" only the default (so with --config) runs: one comparison of a
setting against the default is two invocations.

Usage: python bench/bench_ablation.py [--corpus conll2003] [--data ../shared/data] [--epochs 20] [--families
       word,document] [--config JSON] [--sentences-per-doc 1|abstracts]
"""

import argparse
import json
import random
import tempfile
import time
from pathlib import Path

import spacy
from common import CORPORA, ROOT, converted, write_results
from spacy.training import Corpus

from spacy_bioner.ner.settings import DEFAULT_CONFIG


def run(features, train_path: Path, dev_path: Path, epochs: int, config: dict) -> dict:
    nlp = spacy.blank("en")
    nlp.add_pipe("bioner", config={**config, "features": features})
    train = list(Corpus(str(train_path))(nlp))
    dev = list(Corpus(str(dev_path))(nlp))
    nlp.initialize(lambda: train)
    rng = random.Random(0)
    start, history = time.perf_counter(), []
    for _ in range(epochs):
        rng.shuffle(train)
        for i in range(0, len(train), 8):
            nlp.update(train[i : i + 8])
        history.append(round(100 * nlp.evaluate(dev)["ents_f"], 2))
    return {
        "last": history[-1],
        "best": max(history),
        "best_epoch": history.index(max(history)) + 1,
        "seconds": round(time.perf_counter() - start),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", choices=sorted(CORPORA), default="conll2003")
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--families", default=None, help='Comma-separated families to ablate (default: all; "": none).')
    parser.add_argument("--config", default="{}", help="JSON settings of the bioner component for every run.")
    parser.add_argument(
        "--sentences-per-doc",
        default=None,
        help="For files without document marks: a number or 'abstracts' (default: bench_accuracy.SENTENCES_PER_DOC).",
    )
    args = parser.parse_args()
    config = json.loads(args.config)
    default = list(config.pop("features", DEFAULT_CONFIG["features"]))
    ablate = default if args.families is None else [family for family in args.families.split(",") if family]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        train_path, dev_path = converted(args.data, args.corpus, work, args.sentences_per_doc)
        figures = {
            "corpus": args.corpus,
            "epochs": args.epochs,
            "default": run(default, train_path, dev_path, args.epochs, config),
            "config": config,
        }
        print(f"default {default}: {figures['default']}", flush=True)
        for family in ablate:
            figures[f"-{family}"] = result = run(
                [f for f in default if f != family], train_path, dev_path, args.epochs, config
            )
            print(f"without {family}: {result} ({result['last'] - figures['default']['last']:+.2f})", flush=True)
    print(json.dumps(figures))
    print(f"written to {write_results(f'ablation_{args.corpus}', figures)}")


if __name__ == "__main__":
    main()
