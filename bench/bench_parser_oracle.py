"""Arc-eager on UD English EWT: static against dynamic oracle, gold against predicted tags.

Trains bioner_tagger (10 epochs) and then bioner_parser (arc-eager, not
pseudo-projective) in this process through the components' own update(),
one example at a time in a shuffled order, for each oracle setting (explore
0: static; 0.9: dynamic, after the first pass). After every epoch, dev is
parsed twice: with its gold tags and with the tagger's. Prints each
setting's scores at the epoch with the best LAS on predicted tags (every
token, punctuation included). Figures are printed as JSON too.

Usage: python bench/bench_parser_oracle.py [--data ../shared/data] [--epochs 12]
"""

import argparse
import json
import tempfile
from pathlib import Path

import numpy
import spacy
from common import ROOT, convert_treebank, dev_scores, write_results
from spacy.tokens import Doc, DocBin
from spacy.training import Example


def examples(nlp, path: Path):
    """One example per gold sentence, its predicted doc holding the gold words only."""
    out = []
    for ref in DocBin().from_disk(path).get_docs(nlp.vocab):
        for sent in ref.sents:
            sentence = sent.as_doc()
            out.append(Example(Doc(nlp.vocab, words=[t.text for t in sentence]), sentence))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--epochs", type=int, default=12)
    args = parser.parse_args()
    nlp = spacy.blank("en")
    with tempfile.TemporaryDirectory() as tmp:
        treebank = args.data / "ud_english_ewt"
        train = examples(nlp, convert_treebank(treebank / "en_ewt-ud-train.conllu", Path(tmp)))
        dev = examples(nlp, convert_treebank(treebank / "en_ewt-ud-dev.conllu", Path(tmp)))
    rng = numpy.random.default_rng(0)
    tagger = nlp.add_pipe("bioner_tagger")
    tagger.initialize(lambda: train, nlp=nlp)
    for _ in range(10):
        for i in rng.permutation(len(train)):
            tagger.update([train[i]])
    tagged = list(tagger.pipe([eg.predicted.copy() for eg in dev], batch_size=1000))
    predicted_tags = [[t.tag_ for t in doc] for doc in tagged]
    gold_tags = [[t.tag_ for t in eg.reference] for eg in dev]
    tag_acc = numpy.mean([p == g for ps, gs in zip(predicted_tags, gold_tags) for p, g in zip(ps, gs)])
    figures = {"tag_acc": float(tag_acc), "settings": {}}
    for name, explore in (("static", 0.0), ("dynamic", 0.9)):
        component = nlp.add_pipe(
            "bioner_parser", name=f"parser_{name}", config={"explore": explore, "pseudo_projective": False}
        )
        component.initialize(lambda: train, nlp=nlp)
        epochs = []
        for epoch in range(args.epochs):
            for i in rng.permutation(len(train)):
                component.update([train[i]])
            epochs.append(
                {
                    "epoch": epoch,
                    "gold_tags": dev_scores(component, dev, gold_tags),
                    "predicted_tags": dev_scores(component, dev, predicted_tags),
                }
            )
        best = max(epochs, key=lambda e: e["predicted_tags"]["las"])
        figures["settings"][name] = {"best": best, "epochs": epochs}
        nlp.remove_pipe(f"parser_{name}")
    print(f"dev tag accuracy {100 * figures['tag_acc']:.2f}")
    for name, f in figures["settings"].items():
        b = f["best"]
        print(
            f"{name} oracle, epoch {b['epoch'] + 1}: predicted tags UAS {100 * b['predicted_tags']['uas']:.2f} LAS "
            f"{100 * b['predicted_tags']['las']:.2f}; "
            f"gold tags UAS {100 * b['gold_tags']['uas']:.2f} LAS {100 * b['gold_tags']['las']:.2f}"
        )
    print(json.dumps(figures))
    print(f"written to {write_results('parser_oracle', figures)}")


if __name__ == "__main__":
    main()
