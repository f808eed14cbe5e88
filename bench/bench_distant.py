"""Training without annotation: each step of the distant workflow on three corpora, from dictionary matching
alone to self-training, against the same model trained on the gold labels.

For each corpus, the train split's gold labels are dropped (its tokens are kept), the text is labelled from
public term lists in ../shared/data/gazetteers (`bioner distant label`), configs/bioner.cfg is trained on it
with `spacy train` for --epochs epochs, and model-last is scored on the dev split (no gold label chooses a
model). Steps, each adding one choice to the one before:
- dictionary alone: the lists' matches on dev (leftmost longest), and the labeller's entities on dev;
- lists, O elsewhere: trained on matches, every other token O (no ambiguity filter, no missing tokens);
- + ambiguous entries: common words, numbers and single characters matched alone missing, lower-case
  matches of name lists dropped;
- + repeated surnames: the last word of a person's full name, alone elsewhere in the doc, is the person;
- + short forms: a short form the doc defines ("atrial fibrillation ( AF )") takes its long form's label
  wherever it occurs (the workflow's labels);
- + lists as features: the same labels, configs/bioner_gazetteer.cfg trained with the list entries the
  labels trust (`--terms-output`) as term-list features (the workflow's round 0);
- + unknown names missing: the short-form step's labels with name-like unmatched tokens missing too
  (`--unknown-names`), without features;
- self-training: one `bioner distant relabel` round (--threshold) from round 0, and training again, with
  the features;
- gold: configs/bioner.cfg trained on the gold labels, and bioner_gazetteer.cfg with the same features
  (the ceilings).
Label agreement with the dropped gold labels is reported beside each labelling. Timing: the workflow's
steps on the corpus (label, train, relabel, train), on one core. Written to bench/results/distant_<corpus>.json.

Usage: python bench/bench_distant.py CORPUS [--data ../shared/data] [--epochs 10] [--threshold 0.9]
       (CORPUS: conll2003, bc5cdr or ncbi_disease)
"""

import argparse
import json
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Optional

import spacy
from bench_casing import prf
from common import ROOT, convert, train, write_results
from spacy.tokens import DocBin
from spacy.training import Corpus

from spacy_bioner.distant.cli import read_texts, write_terms
from spacy_bioner.distant.labeller import DistantLabeller, DistantSettings
from spacy_bioner.distant.self_training import relabel
from spacy_bioner.gazetteer.matcher import filter_matches

CORPORA = {
    "conll2003": ("eng.train", "eng.testa", "1", ["geonames/countries.tsv", "geonames/continents.tsv",
                  "geonames/us_states.tsv", "countries_mledoze/capitals.tsv", "countries_mledoze/countries.tsv",
                  "countries_mledoze/demonyms_en.tsv", "companies_us", "openfootball_clubs", "world_universities",
                  "geonames/cities15000_latin.tsv", "us_census_1990_names", "ssa_baby_names/first_names.tsv"]),
    "bc5cdr": ("train.tsv", "devel.tsv", "abstracts", ["mesh_diseases", "disease_ontology",
               "drugbank_open_vocabulary", "pubchem_chemicals"]),
    "ncbi_disease": ("train.tsv", "devel.tsv", "abstracts", ["mesh_diseases", "disease_ontology"]),
}  # fmt: skip
STEPS = {
    "lists_o_elsewhere": {"ambiguous_words": False, "repeat_surnames": False, "short_forms": False},
    "ambiguous_entries": {"ambiguous_words": True, "repeat_surnames": False, "short_forms": False},
    "repeated_surnames": {"ambiguous_words": True, "repeat_surnames": True, "short_forms": False},
    "short_forms": {"ambiguous_words": True, "repeat_surnames": True, "short_forms": True},
    "lists_as_features": {"ambiguous_words": True, "repeat_surnames": True, "short_forms": True},
    "unknown_names_missing": {
        "ambiguous_words": True,
        "repeat_surnames": True,
        "short_forms": True,
        "unknown_names": True,
    },
}
WITH_FEATURES = ("lists_as_features",)  # trained with the trusted list entries as term-list features
ROUND_0 = "lists_as_features"  # the workflow's default


def spans(doc) -> set:
    return {(ent.start, ent.end, ent.label_) for ent in doc.ents}


def agreement(gold_docs: list, docs: list) -> dict:
    gold = {(i, *span) for i, doc in enumerate(gold_docs) for span in spans(doc)}
    found = {(i, *span) for i, doc in enumerate(docs) for span in spans(doc)}
    return prf(gold, found)


def dev_scores(model: Path, dev: Path) -> dict:
    nlp = spacy.load(model)
    scores = nlp.evaluate(list(Corpus(str(dev))(nlp)))
    return {key: round(100 * scores[key], 2) for key in ("ents_p", "ents_r", "ents_f")}


def trained(name: str, docs: list, dev: Path, work: Path, epochs: int, features: Optional[Path] = None):
    """(dev scores, training seconds) of configs/bioner.cfg trained on the docs, or of bioner_gazetteer.cfg
    with the term list `features`."""
    path = work / f"{name}.spacy"
    DocBin(docs=docs).to_disk(path)
    extra = ["--training.max_epochs", str(epochs), "--training.patience", "0"]
    if features is not None:
        extra += ["--paths.gazetteer", str(features)]
    seconds = train(path, dev, work / name, extra, config="bioner_gazetteer.cfg" if features else "bioner.cfg")
    return dev_scores(work / name / "model-last", dev), seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", choices=sorted(CORPORA))
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--threshold", type=float, default=0.9)
    args = parser.parse_args()
    train_file, dev_file, per_doc, lists = CORPORA[args.corpus]
    work = Path(tempfile.mkdtemp(prefix=f"bench_distant_{args.corpus}_"))
    train_path = convert(args.data / args.corpus / train_file, work, per_doc)
    dev_path = convert(args.data / args.corpus / dev_file, work, per_doc)
    terms = [args.data / "gazetteers" / name for name in lists]
    nlp = spacy.blank("en")
    gold_train = list(DocBin().from_disk(train_path).get_docs(nlp.vocab))
    gold_dev = list(DocBin().from_disk(dev_path).get_docs(nlp.vocab))
    figures: dict = {"corpus": args.corpus, "lists": lists, "epochs": args.epochs, "steps": {}}

    labeller = DistantLabeller(nlp, terms)
    dev_texts = list(read_texts(nlp, dev_path))
    matched = []
    for doc in dev_texts:
        rows = filter_matches(labeller.gazetteer.match(doc))
        matched.append({(start, end, labeller.gazetteer.labels[label]) for start, end, label, _ in rows})
    gold = {(i, *span) for i, doc in enumerate(gold_dev) for span in spans(doc)}
    figures["dictionary_matches_on_dev"] = prf(gold, {(i, *span) for i, found in enumerate(matched) for span in found})
    figures["labeller_on_dev"] = agreement(gold_dev, [labeller(doc) for doc in read_texts(nlp, dev_path)])

    # the workflow: round 0 is the default labels and the lists' trusted entries as features
    round_0 = DistantLabeller(nlp, terms, DistantSettings(**STEPS[ROUND_0]))
    start = time.perf_counter()
    round_0_docs = list(round_0.pipe(read_texts(nlp, train_path)))
    trusted = work / "trusted_terms.tsv"
    figures["trusted_entries"] = write_terms(round_0.trusted_terms(), trusted)
    label_seconds = time.perf_counter() - start
    for step, settings in STEPS.items():
        step_labeller = DistantLabeller(nlp, terms, DistantSettings(**settings))
        docs = list(step_labeller.pipe(read_texts(nlp, train_path)))
        features = trusted if step in WITH_FEATURES else None
        scores, seconds = trained(step, docs, dev_path, work, args.epochs, features)
        figures["steps"][step] = {"dev": scores, "labels_vs_gold": agreement(gold_train, docs),
                                  "counts": dict(step_labeller.counts), "train_seconds": seconds}  # fmt: skip
        print(step, json.dumps(figures["steps"][step]), flush=True)
    # self-training from round 0's model
    seconds = figures["steps"][ROUND_0]["train_seconds"]
    start = time.perf_counter()
    model = spacy.load(work / ROUND_0 / "model-last")
    counts: Counter = Counter()
    round_1 = list(relabel(model, round_0_docs, args.threshold, counts))
    relabel_seconds = time.perf_counter() - start
    scores, seconds_1 = trained("self_training", round_1, dev_path, work, args.epochs, trusted)
    figures["steps"]["self_training"] = {"dev": scores, "labels_vs_gold": agreement(gold_train, round_1),
                                         "counts": dict(counts), "threshold": args.threshold}  # fmt: skip
    print("self_training", json.dumps(figures["steps"]["self_training"]), flush=True)
    gold_scores, _ = trained("gold", gold_train, dev_path, work, args.epochs)
    figures["gold"] = {"dev": gold_scores}
    gold_scores, _ = trained("gold_features", gold_train, dev_path, work, args.epochs, trusted)
    figures["gold_with_features"] = {"dev": gold_scores}
    figures["workflow_seconds"] = {
        "label": round(label_seconds),
        "train": round(seconds),
        "relabel": round(relabel_seconds),
        "train_again": round(seconds_1),
        "total": round(label_seconds + seconds + relabel_seconds + seconds_1),
    }
    print(json.dumps(figures, indent=1))
    write_results(f"distant_{args.corpus}", figures)


if __name__ == "__main__":
    main()
