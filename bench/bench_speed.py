"""Tagging speed and memory of bioner against spaCy's own ner, in one run.

Trains bioner (default config, `spacy train` on eng.train, model-best on
eng.testa; wall time reported) and spaCy's CNN ner (`spacy init config -p ner
-o efficiency`, trained here for a few hundred steps: its speed does not
depend on its accuracy). Then, on the same eng.testa docs, one thread:
tokens/s of the components alone (`nlp.pipe` over pre-tokenized Docs, batch
1000: bioner; spaCy's tok2vec + ner) and end to end from raw text (blank English tokenizer + the component),
medians and min-max of the repetitions, and the ratios bioner / spaCy. Each system runs once
untimed first (word caches fill on a word's first sight), then the systems take turns in every
repetition, the toy included, so that a slow spell of the machine falls on all of them. Also
model size on disk, RSS while tagging, RSS over a long stream of short docs,
one long document (time, RSS growth), and nlp.pipe with n_process=2 against
one process, for bioner and for a blank pipeline (the ceiling spaCy's
hand-over of docs between processes sets), and `bioner annotate` with two
worker processes against one. The seed's Rust toy tagger (seed_toy.py) is built
with cargo and times itself on its own sentences. Figures are printed as JSON too.

Usage: python bench/bench_speed.py [--data ../shared/data] [--seeds ../shared/seeds] [--repeats 7] [--stream-docs
       1000000] [--long-tokens 1000000]
"""

import one_thread  # noqa: F401  (first: it sets the thread counts numpy reads on import)

# isort: split
import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

import spacy
from common import (
    ROOT,
    convert,
    gold_token_examples,
    rss_mb,
    settled,
    stream,
    train,
    train_spacy_pipeline,
    write_results,
)
from seed_toy import build_toy, run_toy
from spacy.tokens import Doc

from spacy_bioner.annotate import annotate

WAYS = ("component", "raw_text")


def rates(run, n_tokens: int, repeats: int) -> dict:
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        seconds.append(time.perf_counter() - start)
    return spread([n_tokens / s for s in seconds])


def spread(per_s: list[float]) -> dict:
    per_s = sorted(per_s)
    return {"median": statistics.median(per_s), "min": per_s[0], "max": per_s[-1]}


def taking_turns(systems: dict[str, Callable[[], float]], repeats: int) -> dict:
    """Each system's tokens/s (median, min, max of the repeats), the systems taking turns within each
    repeat, so that a slow spell of the machine falls on all of them alike. A run returns its tokens/s."""
    per_s: dict[str, list[float]] = {name: [] for name in systems}
    for _ in range(repeats):
        for name, run in systems.items():
            per_s[name].append(run())
    return {name: spread(values) for name, values in per_s.items()}


def timed(nlp, inputs_of: Callable[[], list], n_tokens: int) -> Callable[[], float]:
    """A run of nlp.pipe over inputs made off the clock (fresh docs, or texts): its tokens/s."""

    def run() -> float:
        inputs = settled(inputs_of())
        start = time.perf_counter()
        for _ in nlp.pipe(inputs, batch_size=1000):
            pass
        return n_tokens / (time.perf_counter() - start)

    return run


def warmed_runs(nlp, docs: list[Doc], texts: list[str], n_tokens: int) -> dict:
    """A pipeline's runs over fresh copies of the docs and over the texts (WAYS), each run once
    untimed: the word caches fill on a word's first sight."""
    runs = {
        "component": timed(nlp, lambda: [doc.copy() for doc in docs], n_tokens),
        "raw_text": timed(nlp, lambda: texts, n_tokens),
    }
    for run in runs.values():
        run()
    return runs


def spacy_ner_runs(model: Path, docs: list[Doc], texts: list[str], n_tokens: int) -> dict:
    """spaCy's pipeline's warmed runs over the same docs (copied into its vocab) and texts."""
    spacy_nlp = spacy.load(model)
    spacy_docs = [
        Doc(spacy_nlp.vocab, words=[t.text for t in doc], spaces=[bool(t.whitespace_) for t in doc]) for doc in docs
    ]
    return warmed_runs(spacy_nlp, spacy_docs, texts, n_tokens)


def long_document(nlp, docs, n_tokens: int) -> dict:
    """One doc of about n_tokens tokens (dev docs repeated): time and RSS growth of tagging it."""
    parts, total = [], 0
    while total < n_tokens:
        for doc in docs:
            parts.append(doc)
            total += len(doc)
            if total >= n_tokens:
                break
    doc = Doc.from_docs(parts, ensure_whitespace=True)
    before = rss_mb()
    start = time.perf_counter()
    nlp.get_pipe("bioner")(doc)
    return {"tokens": len(doc), "seconds": time.perf_counter() - start, "rss_growth_mb": rss_mb() - before}


def multiprocess(nlp, texts, n_docs: int, repeats: int, batch_size: int) -> dict:
    """nlp.pipe in two processes against one, and the same for a blank pipeline
    (the tokenizer alone): what spaCy's own hand-over of docs between processes allows."""
    texts = [texts[i % len(texts)] for i in range(n_docs)]
    n_tokens = sum(len(nlp.make_doc(text)) for text in texts)
    figures = {"docs": n_docs}
    for name, pipeline in (("bioner", nlp), ("blank", spacy.blank("en"))):

        def run(processes: int, pipeline=pipeline) -> list:
            return [None for _ in pipeline.pipe(texts, batch_size=batch_size, n_process=processes)]

        one = rates(lambda: run(1), n_tokens, repeats)
        two = rates(lambda: run(2), n_tokens, repeats)
        figures[name] = {"one_process": one, "two_processes": two, "ratio": two["median"] / one["median"]}
    return figures


def annotate_processes(nlp, texts, n_docs: int, work: Path, repeats: int) -> dict:
    """`bioner annotate` over a text file of n_docs lines, in two worker processes against one."""
    source = work / "annotate_in.txt"
    source.write_text("\n".join(texts[i % len(texts)] for i in range(n_docs)) + "\n", encoding="utf8")
    n_tokens = sum(len(nlp.make_doc(texts[i % len(texts)])) for i in range(n_docs))
    one = rates(lambda: annotate(nlp, source, work / "annotate_out.jsonl", "text", n_process=1), n_tokens, repeats)
    two = rates(lambda: annotate(nlp, source, work / "annotate_out.jsonl", "text", n_process=2), n_tokens, repeats)
    return {"docs": n_docs, "one_process": one, "two_processes": two, "ratio": two["median"] / one["median"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument(
        "--seeds", type=Path, default=ROOT.parent / "shared" / "seeds", help="where the seed notes are (the Rust toy)"
    )
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--spacy-steps", type=int, default=300)
    parser.add_argument("--stream-docs", type=int, default=1_000_000)
    parser.add_argument("--long-tokens", type=int, default=1_000_000)
    args = parser.parse_args()
    if not (args.data / "conll2003" / "eng.train").exists():
        sys.exit(f"No CoNLL-2003 data under {args.data}: pass --data.")
    figures = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        train_path = convert(args.data / "conll2003" / "eng.train", work)
        dev_path = convert(args.data / "conll2003" / "eng.testa", work)
        figures["bioner_train_seconds"] = train(train_path, dev_path, work / "bioner")  # the default config as it is
        model = work / "bioner" / "model-best"
        figures["bioner_model_mb"] = sum(p.stat().st_size for p in model.rglob("*") if p.is_file()) / 2**20
        spacy_model = train_spacy_pipeline(train_path, dev_path, work, args.spacy_steps)
        nlp = spacy.load(model)
        examples = gold_token_examples(nlp, dev_path)
        docs, texts = [eg.predicted for eg in examples], [eg.reference.text for eg in examples]
        n_tokens = figures["tokens"] = sum(len(doc) for doc in docs)
        bioner = warmed_runs(nlp, docs, texts, n_tokens)
        figures["bioner_rss_mb_after_tagging"] = rss_mb()
        spacy_ner = spacy_ner_runs(spacy_model, docs, texts, n_tokens)
        peers = {"bioner": bioner, "spacy_ner": spacy_ner}
        systems = {f"{name} {way}": runs[way] for way in WAYS for name, runs in peers.items()}
        toy = build_toy(args.seeds, work)
        if toy is not None:
            systems["seed_toy"] = lambda: run_toy(toy)  # on its own synthetic sentences
        turns = taking_turns(systems, args.repeats)
        for name in ("bioner", "spacy_ner"):
            figures[name] = {way: turns[f"{name} {way}"] for way in WAYS}
        figures["seed_toy"] = None if toy is None else {**turns["seed_toy"], "runs": args.repeats}
        del peers, spacy_ner, systems  # spaCy's pipeline and docs go with its runs
        figures["ratios"] = {
            way: figures["bioner"][way]["median"] / figures["spacy_ner"][way]["median"] for way in WAYS
        }
        if figures["seed_toy"] is not None:
            figures["ratios"]["seed_toy"] = figures["bioner"]["component"]["median"] / figures["seed_toy"]["median"]
        sentences = [part for text in texts for part in text.split(" . ") if part]  # short docs
        figures["n_process"] = multiprocess(nlp, sentences, 20_000, max(3, args.repeats // 2), batch_size=1000)
        figures["n_process_documents"] = multiprocess(nlp, texts, 2_000, max(3, args.repeats // 2), batch_size=100)
        figures["annotate"] = annotate_processes(nlp, sentences, 20_000, work, max(3, args.repeats // 2))
        figures["long_document"] = long_document(nlp, docs, args.long_tokens)
        figures["stream"] = stream(nlp, sentences, args.stream_docs)
    b, s, r = figures["bioner"], figures["spacy_ner"], figures["ratios"]
    print(
        f"CoNLL-2003 eng.testa, {figures['tokens']:,} tokens, one thread; medians of {args.repeats} (min-max); "
        "component = bioner vs spaCy's tok2vec + ner over Docs"
    )
    for way in WAYS:
        print(
            f"  {way:9}: bioner {b[way]['median']:,.0f} ({b[way]['min']:,.0f}-{b[way]['max']:,.0f}) tokens/s, "
            f"spaCy ner {s[way]['median']:,.0f} ({s[way]['min']:,.0f}-{s[way]['max']:,.0f}); ratio {r[way]:.1f}x"
        )
    if figures["seed_toy"] is not None:
        toy = figures["seed_toy"]
        print(
            f"  seed's Rust toy: {toy['median']:,.0f} ({toy['min']:,.0f}-{toy['max']:,.0f}) tokens/s on its own "
            "sentences; "
            f"bioner's components {figures['ratios']['seed_toy']:.2f}x"
        )
    print(
        f"bioner training (spacy train, eng.train, default config): {figures['bioner_train_seconds']:.1f} s; "
        f"model-best {figures['bioner_model_mb']:.1f} MB; RSS after tagging "
        f"{figures['bioner_rss_mb_after_tagging']:.0f} MB"
    )
    for key, what in (("n_process", "sentences"), ("n_process_documents", "whole documents")):
        m = figures[key]
        for name in ("bioner", "blank"):
            print(
                f"n_process=2 on {m['docs']:,} {what}, {name} pipeline: {m[name]['two_processes']['median']:,.0f} vs "
                f"{m[name]['one_process']['median']:,.0f} tokens/s in one process, {m[name]['ratio']:.2f}x"
            )
    a = figures["annotate"]
    print(
        f"bioner annotate, {a['docs']:,} sentences from a text file: 2 workers {a['two_processes']['median']:,.0f} vs "
        f"one process {a['one_process']['median']:,.0f} tokens/s, {a['ratio']:.2f}x"
    )
    d = figures["long_document"]
    print(f"one {d['tokens']:,}-token doc: {d['seconds']:.2f} s, RSS +{d['rss_growth_mb']:.0f} MB")
    print(
        f"stream of {figures['stream']['docs']:,} short docs: "
        + ", ".join(f"{k} {v:.0f}" for k, v in figures["stream"].items() if k.startswith("rss"))
    )
    print(json.dumps(figures))
    print(f"written to {write_results('speed', figures)}")


if __name__ == "__main__":
    main()
