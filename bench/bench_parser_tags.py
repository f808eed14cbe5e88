"""Which tags the parser should read: tag sets and taggers on UD English EWT, through arc-eager.

Trains bioner_tagger and then bioner_parser (arc-eager, not pseudo-projective;
greedy with the dynamic oracle unless --parser-config sets beam_width) in
this process through the components' own update(), one sentence at a time
in a shuffled order (--seed, 0), on gold tokens and sentences. The parser trains on the gold tags of the chosen tag set;
after
every parser epoch dev is parsed twice, with its gold tags and with the
tagger's. Scores count every token, punctuation included. Also printed:
the tagger's most frequent confusions and its accuracy on words unseen in
training.

--tags: xpos (token.tag_, what configs/parser.cfg uses), upos (token.pos_
  written into token.tag_), or upos_xpos (the two joined, "AUX_VBZ").
--tagger-config JSON: settings of bioner_tagger, e.g. '{"features": [..., "far_window"]}'.
--tag-dropout P: in each parser epoch a share P of the training tags is
  replaced by an unseen value, so the parser must learn to do without them.
--parser-config JSON: settings of bioner_parser, e.g. '{"label_buckets": 65536}'.
--oracle-top K [K ...]: after the last epoch, also parse dev with the gold tag
  wherever it is among the tagger's K best-scoring tags of the token (else
  the tagger's tag): a bound on what choosing among K tags (joint tagging
  and parsing) could give this parser.

Usage: python bench/bench_parser_tags.py [--data ../shared/data] [--tags xpos] [--tagger-config '{}']
       [--tag-dropout 0] [--parser-config '{}'] [--oracle-top K ...] [--tagger-epochs 10] [--parser-epochs 10] [--seed
       0]
"""

import argparse
import collections
import json
import tempfile
import time
from pathlib import Path

import numpy
import spacy
from common import ROOT, convert_treebank, dev_scores, write_results
from spacy.tokens import Doc, DocBin
from spacy.training import Example

DROPPED_TAG = "<dropped>"


def tag_of(token, tags: str) -> str:
    if tags == "upos":
        return token.pos_
    if tags == "upos_xpos":
        return f"{token.pos_}_{token.tag_}"
    return token.tag_


def examples(nlp, path: Path, tags: str):
    """One example per gold sentence, its reference's tag_ holding the chosen tag set."""
    out = []
    for ref in DocBin().from_disk(path).get_docs(nlp.vocab):
        for sent in ref.sents:
            sentence = sent.as_doc()
            values = [tag_of(token, tags) for token in sentence]
            for token, value in zip(sentence, values):
                token.tag_ = value
            out.append(Example(Doc(nlp.vocab, words=[t.text for t in sentence]), sentence))
    return out


def accuracy(predicted, gold) -> float:
    return float(numpy.mean([p == g for ps, gs in zip(predicted, gold) for p, g in zip(ps, gs)]))


def tagging_errors(train, dev, predicted_tags) -> dict:
    """The most frequent (gold, predicted) confusions and the accuracy on words unseen in training."""
    seen = {token.text for eg in train for token in eg.reference}
    confusions = collections.Counter()
    unseen = unseen_right = 0
    for eg, tags in zip(dev, predicted_tags):
        for token, tag in zip(eg.reference, tags):
            if tag != token.tag_:
                confusions[f"{token.tag_}->{tag}"] += 1
            if token.text not in seen:
                unseen += 1
                unseen_right += tag == token.tag_
    return {
        "errors": sum(confusions.values()),
        "confusions": dict(confusions.most_common(10)),
        "unseen_words": unseen,
        "unseen_acc": unseen_right / max(unseen, 1),
    }


def oracle_top_tags(tagger, dev, predicted_tags, k: int):
    """Each dev token's gold tag where it is among the tagger's k best per-token scores, else its predicted tag."""
    # The per-token scores before Viterbi: the tagger has no public call for them.
    _, scores, _, _ = tagger._scores([eg.predicted.copy() for eg in dev], averaged=True)
    labels = tagger.labels
    best = numpy.argsort(-scores, axis=1)[:, :k].tolist()
    out, row = [], 0
    for eg, tags in zip(dev, predicted_tags):
        sentence = []
        for token, tag in zip(eg.reference, tags):
            sentence.append(token.tag_ if token.tag_ in {labels[j] for j in best[row]} else tag)
            row += 1
        out.append(sentence)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--tags", choices=["xpos", "upos", "upos_xpos"], default="xpos")
    parser.add_argument("--tagger-config", type=json.loads, default={})
    parser.add_argument("--tag-dropout", type=float, default=0.0)
    parser.add_argument("--parser-config", type=json.loads, default={})
    parser.add_argument("--oracle-top", type=int, nargs="*", default=[])
    parser.add_argument("--tagger-epochs", type=int, default=10)
    parser.add_argument("--parser-epochs", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    nlp = spacy.blank("en")
    with tempfile.TemporaryDirectory() as tmp:
        treebank = args.data / "ud_english_ewt"
        train = examples(nlp, convert_treebank(treebank / "en_ewt-ud-train.conllu", Path(tmp)), args.tags)
        dev = examples(nlp, convert_treebank(treebank / "en_ewt-ud-dev.conllu", Path(tmp)), args.tags)
    rng = numpy.random.default_rng(args.seed)
    start = time.perf_counter()
    tagger = nlp.add_pipe("bioner_tagger", config=args.tagger_config)
    tagger.initialize(lambda: train, nlp=nlp)
    for _ in range(args.tagger_epochs):
        for i in rng.permutation(len(train)):
            tagger.update([train[i]])
    tagged = list(tagger.pipe([eg.predicted.copy() for eg in dev], batch_size=1000))
    predicted_tags = [[t.tag_ for t in doc] for doc in tagged]
    gold_tags = [[t.tag_ for t in eg.reference] for eg in dev]
    figures = {"settings": vars(args) | {"data": str(args.data)}, "tag_acc": accuracy(predicted_tags, gold_tags)}
    if args.tags == "upos_xpos":

        def xpos(rows):
            return [[tag.split("_", 1)[1] for tag in row] for row in rows]

        figures["xpos_acc"] = accuracy(xpos(predicted_tags), xpos(gold_tags))
    figures["tagging_errors"] = errors = tagging_errors(train, dev, predicted_tags)
    print(
        f"dev tag accuracy {100 * figures['tag_acc']:.2f} ({time.perf_counter() - start:.0f} s); {errors['errors']} "
        "errors, most often "
        + ", ".join(f"{pair} {count}" for pair, count in errors["confusions"].items())
        + f"; {errors['unseen_words']} words unseen in training, {100 * errors['unseen_acc']:.2f}% right",
        flush=True,
    )
    component = nlp.add_pipe("bioner_parser", config={"pseudo_projective": False, **args.parser_config})
    component.initialize(lambda: train, nlp=nlp)
    training_tags = [[t.tag_ for t in eg.reference] for eg in train]
    dropout_rng = numpy.random.default_rng(1)
    figures["epochs"] = []
    for epoch in range(args.parser_epochs):
        if args.tag_dropout:
            for eg, tags in zip(train, training_tags):
                dropped = dropout_rng.random(len(tags)) < args.tag_dropout
                for token, tag, drop in zip(eg.reference, tags, dropped):
                    token.tag_ = DROPPED_TAG if drop else tag
        for i in rng.permutation(len(train)):
            component.update([train[i]])
        scores = {
            "epoch": epoch + 1,
            "predicted_tags": dev_scores(component, dev, predicted_tags),
            "gold_tags": dev_scores(component, dev, gold_tags),
        }
        figures["epochs"].append(scores)
        p, g = scores["predicted_tags"], scores["gold_tags"]
        print(
            f"parser epoch {epoch + 1}: predicted tags UAS {100 * p['uas']:.2f} LAS {100 * p['las']:.2f}; "
            f"gold tags UAS {100 * g['uas']:.2f} LAS {100 * g['las']:.2f} ({time.perf_counter() - start:.0f} s)",
            flush=True,
        )
    figures["oracle_top"] = {}
    for k in args.oracle_top:
        tags = oracle_top_tags(tagger, dev, predicted_tags, k)
        scores = {"tag_acc": accuracy(tags, gold_tags), **dev_scores(component, dev, tags)}
        figures["oracle_top"][k] = scores
        print(
            f"gold tag where among the tagger's {k} best: tags {100 * scores['tag_acc']:.2f}%, UAS "
            f"{100 * scores['uas']:.2f} LAS {100 * scores['las']:.2f}"
        )
    print(json.dumps(figures))
    print(f"written to {write_results('parser_tags', figures)}")


if __name__ == "__main__":
    main()
