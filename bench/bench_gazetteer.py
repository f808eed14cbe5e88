"""The gazetteer at scale, against spaCy's PhraseMatcher in the same run; and over-trust.

Scale: builds both from the same term list (default: GeoNames cities500, all
names, 1.2M terms), matches the same pre-tokenized CoNLL-2003 train+dev
documents, and prints build time, RSS growth, match throughput and the ratios;
also the time to load our saved gazetteer, and one call per doc: the
bioner_gazetteer component (doc.spans and doc.ents written) against
PhraseMatcher making Spans. The speeds are medians of five rounds in which
the two take turns, so that a slow spell of the machine falls on both. A term
with several KB ids (a name shared by several places) gives a match row per
id: distinct spans are counted too.

Over-trust: on each split of the seed toy corpus, trains the default config
with `spacy train` without and with the toy's own location list (in
`features` mode, match dropout as configured) and prints test F1 of both: the
list must not cost accuracy. Figures are printed as JSON too.

Usage: python bench/bench_gazetteer.py [--terms FILE] [--data ../shared/data] [--no-phrasematcher] [--no-seed-toy]
"""

import one_thread  # noqa: F401  (first: it sets the thread counts numpy reads on import)

# isort: split
import argparse
import gc
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import spacy
from common import ROOT, convert, f1, rss_mb, spacy_evaluate_examples, train, write_results
from spacy.matcher import PhraseMatcher
from spacy.tokens import Doc

from spacy_bioner.gazetteer.component import GazetteerComponent
from spacy_bioner.gazetteer.matcher import Gazetteer

# The seed toy's location gazetteer (shared/data/seed_toy/README.md): single lowercase tokens.
SEED_TOY_LOCATIONS = ["paris", "lima", "oslo", "london", "new", "york", "san", "diego"]


def conll_docs(nlp, paths):
    docs, words = [], []
    for path in paths:
        for line in open(path, encoding="utf8"):
            if line.startswith("-DOCSTART-"):
                if words:
                    docs.append(Doc(nlp.vocab, words=words))
                words = []
            elif line.strip():
                words.append(line.split()[0])
    if words:
        docs.append(Doc(nlp.vocab, words=words))
    return docs


def read_terms(path: Path):
    with open(path, encoding="utf8") as lines:
        return [line.split("\t", 2)[:2] for line in lines if line.strip()]


def matching_rate(match_batch, docs, batch_size=1000):
    """Tokens/s of matching all docs in batches (as nlp.pipe hands them over), and the matches found."""
    start = time.perf_counter()
    n_matches = sum(
        len(matches) for i in range(0, len(docs), batch_size) for matches in match_batch(docs[i : i + batch_size])
    )
    return sum(len(doc) for doc in docs) / (time.perf_counter() - start), n_matches


def call_rate(call, docs):
    """Tokens/s of one call per doc, over fresh copies of the docs (a component writes to them)."""
    fresh = [Doc(doc.vocab, words=[token.text for token in doc]) for doc in docs]
    start = time.perf_counter()
    for doc in fresh:
        call(doc)
    return sum(len(doc) for doc in docs) / (time.perf_counter() - start)


def paired_rates(contenders, docs, rounds=5):
    """Median tokens/s of each contender's batch matching and calls per doc, the contenders taking
    turns a round at a time, so that a slow spell of the machine falls on both.

    contenders: name -> (match_batch, call per doc).
    """
    rates = {name: {"batches": [], "calls": []} for name in contenders}
    for _ in range(rounds):
        for name, (match_batch, call) in contenders.items():
            rates[name]["batches"].append(matching_rate(match_batch, docs)[0])
            rates[name]["calls"].append(call_rate(call, docs))
    return {name: {way: statistics.median(values) for way, values in found.items()} for name, found in rates.items()}


def distinct_spans(gazetteer, docs) -> set:
    """The matches as (doc, start, end), once each: a term with several KB ids matches once per id."""
    return {(i, int(start), int(end)) for i, doc in enumerate(docs) for start, end, _, _ in gazetteer.match(doc)}


def ours(nlp, terms_path, docs):
    """The gazetteer built, saved and loaded; its component (doc.spans and doc.ents written); its figures but speed."""
    gc.collect()
    before = rss_mb()
    start = time.perf_counter()
    gazetteer = Gazetteer(nlp.tokenizer)
    gazetteer.load(terms_path)
    gazetteer.match(docs[0])  # compiles the automaton
    build = time.perf_counter() - start
    growth = rss_mb() - before
    built_rate, n_matches = matching_rate(gazetteer.match_batch, docs)
    data = gazetteer.to_bytes()
    del gazetteer
    gc.collect()
    start = time.perf_counter()
    loaded = Gazetteer(nlp.tokenizer).from_bytes(data)
    loaded.match(docs[0])
    load = time.perf_counter() - start
    assert matching_rate(loaded.match_batch, docs)[1] == n_matches
    component = GazetteerComponent(nlp)
    component.gazetteer = loaded
    spans = distinct_spans(loaded, docs)
    return (
        loaded,
        component,
        spans,
        {
            "build_s": build,
            "rss_growth_mb": growth,
            "tokens_per_s_as_built": built_rate,
            "matches": n_matches,
            "distinct_spans": len(spans),
            "load_s": load,
            "saved_mb": len(data) / 2**20,
            "terms": len(loaded),
        },
    )


def phrasematcher(nlp, terms_path, docs):
    """spaCy's PhraseMatcher on LOWER built from the same list; its figures but speed."""
    gc.collect()
    before = rss_mb()
    start = time.perf_counter()
    matcher = PhraseMatcher(nlp.vocab, attr="LOWER")
    terms = read_terms(terms_path)
    by_label = {}
    for term, label in terms:
        by_label.setdefault(label, []).append(term)
    for label, texts in by_label.items():
        matcher.add(label, list(nlp.tokenizer.pipe(texts, batch_size=10000)))
    build = time.perf_counter() - start
    growth = rss_mb() - before
    spans = {(i, start, end) for i, doc in enumerate(docs) for _, start, end in matcher(doc)}
    return matcher, spans, {"build_s": build, "rss_growth_mb": growth, "matches": len(spans)}


def seed_toy_overtrust(data: Path) -> dict:
    """Test F1 on each seed toy split, trained on its train file without and with the toy's list."""
    result = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        terms = work / "toy_locations.txt"
        terms.write_text("\n".join(SEED_TOY_LOCATIONS) + "\n", encoding="utf8")
        for split in ("gaz", "nogaz"):
            train_path = convert(data / "seed_toy" / f"train_{split}.conll", work)
            test_path = convert(data / "seed_toy" / f"test_{split}.conll", work)
            runs = {
                "without_list": ("bioner.cfg", []),
                "with_list": (
                    "bioner_gazetteer.cfg",
                    ["--paths.gazetteer", str(terms), "--initialize.components.bioner.gazetteer_label", "LOC"],
                ),
            }
            for variant, (config, options) in runs.items():
                out = work / f"{split}_{variant}"
                # model-last, trained on train only: the toy has no dev split.
                train(train_path, train_path, out, ["--training.eval_frequency", "20", *options], config=config)
                nlp = spacy.load(out / "model-last")
                result[f"{split}_test_f1_{variant}"] = f1(nlp, spacy_evaluate_examples(nlp, test_path))
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--terms", type=Path, default=None)
    parser.add_argument("--no-phrasematcher", action="store_true")
    parser.add_argument("--no-seed-toy", action="store_true", help="Skip the over-trust runs on the seed toy.")
    args = parser.parse_args()
    terms = args.terms or args.data / "gazetteers" / "geonames_cities500_allnames" / "cities500_allnames.tsv"
    if not terms.exists():
        sys.exit(f"No term list at {terms}: pass --terms or --data.")
    nlp = spacy.blank("en")
    docs = conll_docs(nlp, [args.data / "conll2003" / "eng.train", args.data / "conll2003" / "eng.testa"])
    loaded, component, our_spans, found = ours(nlp, terms, docs)
    figures = {"tokens": sum(len(d) for d in docs), "bioner_gazetteer": found}
    contenders = {"bioner_gazetteer": (loaded.match_batch, component)}
    if not args.no_phrasematcher:
        matcher, their_spans, figures["phrasematcher"] = phrasematcher(nlp, terms, docs)
        figures["same_spans"] = our_spans == their_spans
        contenders["phrasematcher"] = (
            lambda batch: [matcher(doc) for doc in batch],
            lambda doc: matcher(doc, as_spans=True),
        )
    for name, rates in paired_rates(contenders, docs).items():
        figures[name]["tokens_per_s"], figures[name]["per_call_tokens_per_s"] = rates["batches"], rates["calls"]
    g = figures["bioner_gazetteer"]
    print(f"{figures['tokens']:,} tokens in {len(docs)} docs; {g['terms']:,} distinct terms from {terms.name}")
    print(
        f"bioner gazetteer: build {g['build_s']:.1f} s, RSS +{g['rss_growth_mb']:.0f} MB, "
        f"{g['tokens_per_s']:,.0f} tokens/s once saved and loaded ({g['tokens_per_s_as_built']:,.0f} as built), "
        f"{g['matches']:,} matches ({g['distinct_spans']:,} distinct spans), {g['per_call_tokens_per_s']:,.0f} "
        "tokens/s "
        f"as a component called per doc; saved {g['saved_mb']:.1f} MB, loads in {g['load_s']:.2f} s"
    )
    if not args.no_phrasematcher:
        p = figures["phrasematcher"]
        print(
            f"PhraseMatcher(LOWER): build {p['build_s']:.1f} s, RSS +{p['rss_growth_mb']:.0f} MB, "
            f"{p['tokens_per_s']:,.0f} tokens/s, {p['per_call_tokens_per_s']:,.0f} as Spans per call, "
            f"{p['matches']:,} matches; the same spans as ours: {figures['same_spans']}"
        )
        figures["ratios"] = {
            "build": g["build_s"] / p["build_s"],
            "rss_growth": g["rss_growth_mb"] / p["rss_growth_mb"],
            "throughput": g["tokens_per_s"] / p["tokens_per_s"],
            "per_call_with_spans": g["per_call_tokens_per_s"] / p["per_call_tokens_per_s"],
        }
        r = figures["ratios"]
        print(
            f"ratios bioner/PhraseMatcher: build {r['build']:.3f}, RSS growth {r['rss_growth']:.3f}, throughput "
            f"{r['throughput']:.2f}x, "
            f"one call per doc with spans {r['per_call_with_spans']:.2f}x"
        )
    if not args.no_seed_toy:
        toy = figures["seed_toy"] = seed_toy_overtrust(args.data)
        for split in ("gaz", "nogaz"):
            print(
                f"seed toy test_{split}.conll F1: without the location list {toy[f'{split}_test_f1_without_list']}, "
                f"with it {toy[f'{split}_test_f1_with_list']}"
            )
    print(json.dumps(figures))
    print(f"written to {write_results('gazetteer', figures)}")


if __name__ == "__main__":
    main()
