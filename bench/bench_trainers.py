"""The trainers side by side: dev F1, training time and tagging speed.

For each corpus, trains the default config with `spacy train` once per
trainer (model-best on dev; the hmm's one counting pass, model-last) and reports dev P/R/F1, the training wall time
and tokens/s of the component (median of 3). Figures are printed as JSON too.

Usage: python bench/bench_trainers.py [--data ../shared/data] [--corpora conll2003,bc5cdr] [--trainers
       perceptron,crf,hmm] [--crf-learning-rate 0.1] [--crf-l2 0.001]
"""

import argparse
import json
import tempfile
from pathlib import Path

import spacy
from common import ROOT, converted, gold_token_examples, spacy_evaluate_examples, throughput, train, write_results

TRAINERS = ("perceptron", "crf", "hmm")
# The hmm counts, so one pass over the data is its training; it cannot use `history`.
HMM_OPTIONS = [
    "--training.max_epochs",
    "1",
    "--components.bioner.features",
    '["word","window","shape","affixes","flags","conjunctions","document"]',
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--corpora", default="conll2003,bc5cdr")
    parser.add_argument("--crf-learning-rate", type=float, default=0.1)
    parser.add_argument("--crf-l2", type=float, default=0.001)
    parser.add_argument("--trainers", default=",".join(TRAINERS))
    args = parser.parse_args()
    figures = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for corpus in args.corpora.split(","):
            train_path, dev_path = converted(args.data, corpus, work / corpus)
            for trainer in args.trainers.split(","):
                options = ["--components.bioner.trainer", json.dumps({"@misc": f"bioner.{trainer}.v1"})]
                if trainer == "crf":
                    options += [
                        "--components.bioner.trainer.learning_rate",
                        str(args.crf_learning_rate),
                        "--components.bioner.trainer.l2",
                        str(args.crf_l2),
                    ]
                options += HMM_OPTIONS if trainer == "hmm" else []
                out = work / corpus / trainer
                seconds = train(train_path, dev_path, out, options)
                # One counting pass has nothing to select: the hmm is its model-last.
                nlp = spacy.load(out / ("model-last" if trainer == "hmm" else "model-best"))
                scores = nlp.evaluate(spacy_evaluate_examples(nlp, dev_path))
                speed = throughput(nlp, gold_token_examples(nlp, dev_path), repeats=3)
                figures[f"{corpus}/{trainer}"] = {
                    "p": scores["ents_p"],
                    "r": scores["ents_r"],
                    "f": scores["ents_f"],
                    "train_seconds": seconds,
                    "component_tokens_per_s": speed["component_tokens_per_s"],
                }
    for key, f in figures.items():
        print(
            f"{key}: P {100 * f['p']:.2f} R {100 * f['r']:.2f} F1 {100 * f['f']:.2f}; "
            f"train {f['train_seconds']:.0f} s; {f['component_tokens_per_s']:,.0f} tokens/s"
        )
    print(json.dumps(figures))
    print(f"written to {write_results('trainers', figures)}")


if __name__ == "__main__":
    main()
