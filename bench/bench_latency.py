"""One doc at a time: single calls, short docs in bulk and two threads, each paired with its peer in the same run.

Over CoNLL-2003 eng.testa as pre-tokenized Docs, one sentence per doc (the corpus's
sentences), with a CoNLL model of configs/bioner.cfg (trained here unless --model is given)
and spaCy's CNN ner (`spacy init config -p ner -o efficiency`, trained here for a few
hundred steps unless --spacy-model is given: its speed does not depend on its accuracy):

- single calls: `ner(doc)` for bioner, `nlp(doc)` for spaCy (tok2vec + ner), taking
  turns a round at a time; medians in microseconds and their ratio. Also
  bioner's `nlp(text)` from raw text (blank English tokenizer + bioner), against the blank
  pipeline's `nlp(text)` (the tokenizer alone) in turns;
- short docs in bulk: `pipe` over one sentence per doc against the whole documents;
- two threads: each calling `ner(doc)` on half of the sentences, against one thread;
- where a single call's time goes: the time of each stage under cProfile
  (which slows Python more than the kernels: shares, not timings);
- tagger + parser (configs/parser.cfg, trained here on UD English EWT for
  --parser-epochs epochs unless --parser-model is given: a speed model, not an
  accuracy one) over EWT dev: `pipe` over a sentence per doc against the
  treebank's docs of 10 sentences, and what `spacy evaluate --gold-preproc`
  reports (`nlp.evaluate` of a freshly loaded pipeline, its caches empty), beside what it reports
  for a blank pipeline (spaCy's own loop, no components);
- peak RSS: a fresh process loads each pipeline and tags its dev docs, another only loads it.

    python bench/bench_latency.py [--model DIR] [--spacy-model DIR] [--parser-model DIR] [--rounds 5]
"""

import one_thread  # noqa: F401  (first: it sets the thread counts numpy reads on import)

# isort: split
import argparse
import cProfile
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import spacy
from common import (
    ROOT,
    conll_model,
    convert,
    convert_treebank,
    settled,
    train,
    train_spacy_pipeline,
    write_results,
)
from spacy.tokens import Doc, DocBin
from spacy.training import Corpus

# Where a single call's time goes: the functions whose time is each stage's, cumulative (the function and
# all it calls) or own (the compiled calls a function makes, which cProfile does not see as calls).
STAGES = {
    "the compiled decode of a plain doc (layout, allowed tags, both passes, the screen after them, Doc.ents)": (
        "component.py",
        "_tag_plain",
        "own",
    ),
    "checking that the compiled stages are the current weights' and settings'": (
        "decoder.py",
        "plain_decode",
        "cumulative",
    ),
    "decoding stage by stage (docs that are not plain, or that a rule may change)": (
        "decoder.py",
        "decode",
        "cumulative",
    ),
    "writing Doc.ents of docs decoded stage by stage": ("writer.py", "write", "cumulative"),
}


def sentence_docs(vocab, docs):
    """Each sentence of the docs as a Doc of its own, words only."""
    return [Doc(vocab, words=[t.text for t in sent]) for doc in docs for sent in doc.sents]


def fresh(vocab, docs):
    return [Doc(vocab, words=[t.text for t in doc]) for doc in docs]


def single_calls(ner, spacy_nlp, sentences, rounds: int) -> dict:
    """Median microseconds of one call, bioner's component and spaCy's ner pipeline in turns:
    all sentences through one, then through the other, each round (call by call, each would
    evict the other's tables from the caches between calls)."""
    ours, theirs = [], []
    for _ in range(rounds):
        for call, docs, times in (
            (ner, fresh(ner.vocab, sentences), ours),
            (spacy_nlp, fresh(spacy_nlp.vocab, sentences), theirs),
        ):
            for doc in docs:
                start = time.perf_counter()
                call(doc)
                times.append(time.perf_counter() - start)
    bioner_us, spacy_us = 1e6 * statistics.median(ours), 1e6 * statistics.median(theirs)
    return {"bioner_us": bioner_us, "spacy_ner_us": spacy_us, "ratio": spacy_us / bioner_us}


def raw_text_calls(nlp, blank, texts, rounds: int) -> dict:
    """Median microseconds of nlp(text) (tokenizer and bioner) and of a blank pipeline's (the tokenizer
    alone), taking turns a round at a time."""
    ours, blanks = [], []
    for _ in range(rounds):
        for pipeline, times in ((nlp, ours), (blank, blanks)):
            for text in texts:
                start = time.perf_counter()
                pipeline(text)
                times.append(time.perf_counter() - start)
    bioner_us, blank_us = 1e6 * statistics.median(ours), 1e6 * statistics.median(blanks)
    return {"bioner_us": bioner_us, "blank_us": blank_us, "ratio": bioner_us / blank_us}


def pipe_speed(ner, docs, rounds: int) -> float:
    """Median tokens/s of ner.pipe over fresh copies of docs."""
    n_tokens = sum(len(doc) for doc in docs)
    speeds = []
    for _ in range(rounds):
        copies = settled(fresh(ner.vocab, docs))
        start = time.perf_counter()
        for _ in ner.pipe(copies, batch_size=1000):
            pass
        speeds.append(n_tokens / (time.perf_counter() - start))
    return statistics.median(speeds)


def threads(ner, sentences, rounds: int) -> dict:
    """Tokens/s of single calls from two threads at once, against one thread."""
    n_tokens = sum(len(doc) for doc in sentences)

    def tag(docs):
        for doc in docs:
            ner(doc)

    one, two = [], []
    for _ in range(rounds):
        docs = settled(fresh(ner.vocab, sentences))
        start = time.perf_counter()
        tag(docs)
        one.append(n_tokens / (time.perf_counter() - start))
        docs = settled(fresh(ner.vocab, sentences))
        start = time.perf_counter()
        with ThreadPoolExecutor(2) as pool:
            list(pool.map(tag, [docs[0::2], docs[1::2]]))
        two.append(n_tokens / (time.perf_counter() - start))
    return {
        "one_thread": statistics.median(one),
        "two_threads": statistics.median(two),
        "ratio": statistics.median(two) / statistics.median(one),
    }


def profile(ner, sentences) -> dict:
    """Each stage's share of the time of single calls under cProfile, in percent."""
    docs = fresh(ner.vocab, sentences)
    profiler = cProfile.Profile()
    profiler.enable()
    for doc in docs:
        ner(doc)
    profiler.disable()
    stats = pstats.Stats(profiler).stats
    total = sum(t for (_, _, name), (_, _, t, _, _) in stats.items())  # tottime of everything
    shares = {}
    for stage, (file, function, which) in STAGES.items():
        seconds = sum(
            cumulative if which == "cumulative" else own
            for (path, _, name), (_, _, own, cumulative, _) in stats.items()
            if path.endswith(file) and name == function
        )
        shares[stage] = 100 * seconds / total
    shares["everything else (Python and numpy around the kernels)"] = max(0.0, 100 - sum(shares.values()))
    return shares


# Run in a fresh process: the peak resident memory of loading a pipeline and tagging the docs, and of
# loading it alone (what tagging adds is the word caches and the batches' arrays).
PEAK_RSS = """
import sys, spacy
from spacy.tokens import DocBin
nlp = spacy.load(sys.argv[1])
if sys.argv[3] == "tag":
    for _ in nlp.pipe(DocBin().from_disk(sys.argv[2]).get_docs(nlp.vocab), batch_size=1000):
        pass
# VmHWM, not ru_maxrss: Linux carries ru_maxrss over from the parent across fork and exec
peak = next(line for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(int(peak.split()[1]) / 1024)
"""


def peak_rss_mb(model: Path, docs_path: Path) -> dict:
    """Peak RSS (MB) of a fresh process that loads the pipeline and tags the docs, and of one that only loads it."""

    def peak(mode: str) -> float:
        command = [sys.executable, "-c", PEAK_RSS, str(model), str(docs_path), mode]
        return float(subprocess.run(command, check=True, capture_output=True, text=True).stdout.split()[-1])

    tagging, loaded = peak("tag"), peak("load")
    return {"tagging": tagging, "loaded": loaded}


def tagger_parser(model: Path, dev_path: Path, rounds: int) -> dict:
    """Tagger + parser over EWT dev: a sentence per doc against whole docs through `pipe`, one nlp(doc)
    per sentence, and the words/s `spacy evaluate --gold-preproc` reports, each load of the pipeline
    evaluated once."""
    nlp = spacy.load(model)
    whole = list(DocBin().from_disk(dev_path).get_docs(nlp.vocab))
    sentences = [eg.predicted for eg in Corpus(str(dev_path), gold_preproc=True)(nlp)]
    n_words = sum(len(doc) for doc in sentences)

    def speed(docs):
        copies = settled(
            [Doc(nlp.vocab, words=[t.text for t in doc], spaces=[bool(t.whitespace_) for t in doc]) for doc in docs]
        )
        start = time.perf_counter()
        for _ in nlp.pipe(copies, batch_size=1000):
            pass
        return n_words / (time.perf_counter() - start)

    def single_call_speed(docs):
        """Words/s of one nlp(doc) per sentence, as a service tags a request."""
        copies = settled(
            [Doc(nlp.vocab, words=[t.text for t in doc], spaces=[bool(t.whitespace_) for t in doc]) for doc in docs]
        )
        start = time.perf_counter()
        for doc in copies:
            nlp(doc)
        return n_words / (time.perf_counter() - start)

    speed(whole)  # the word caches filled
    whole_speeds, sentence_speeds, single_speeds = [], [], []
    for _ in range(rounds):
        whole_speeds.append(speed(whole))
        sentence_speeds.append(speed(sentences))
        single_speeds.append(single_call_speed(sentences))
    evaluated, blank_evaluated = [], []
    for _ in range(3):
        fresh_nlp = spacy.load(model)
        evaluated.append(fresh_nlp.evaluate(list(Corpus(str(dev_path), gold_preproc=True)(fresh_nlp)))["speed"])
        blank = spacy.blank("en")  # spaCy's own share: its evaluate loop over a pipeline with no components
        blank_evaluated.append(blank.evaluate(list(Corpus(str(dev_path), gold_preproc=True)(blank)))["speed"])
    return {
        "words": n_words,
        "whole_documents": statistics.median(whole_speeds),
        "one_sentence_per_doc": statistics.median(sentence_speeds),
        "ratio": statistics.median(sentence_speeds) / statistics.median(whole_speeds),
        "single_calls": statistics.median(single_speeds),
        "single_call_us": 1e6 * n_words / statistics.median(single_speeds) / len(sentences),
        "spacy_evaluate_words_per_s": statistics.median(evaluated),
        "spacy_evaluate_blank_words_per_s": statistics.median(blank_evaluated),
        "peak_rss_mb": peak_rss_mb(model, dev_path),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument(
        "--model", type=Path, help="a trained bioner pipeline (default: train configs/bioner.cfg on CoNLL)"
    )
    parser.add_argument("--spacy-model", type=Path, help="a spaCy ner pipeline (default: train one for --spacy-steps)")
    parser.add_argument("--spacy-steps", type=int, default=300)
    parser.add_argument(
        "--parser-model", type=Path, help="a tagger + parser pipeline (default: train configs/parser.cfg on EWT)"
    )
    parser.add_argument("--parser-epochs", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    if not (args.data / "conll2003" / "eng.testa").exists() or not (args.data / "ud_english_ewt").exists():
        sys.exit(f"No CoNLL-2003 or UD English EWT data under {args.data}: pass --data.")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        dev_path = convert(args.data / "conll2003" / "eng.testa", work)
        model = args.model or conll_model(args.data, work)[0]
        spacy_model = args.spacy_model or train_spacy_pipeline(
            convert(args.data / "conll2003" / "eng.train", work), dev_path, work, args.spacy_steps
        )
        ewt = args.data / "ud_english_ewt"
        ewt_dev = convert_treebank(ewt / "en_ewt-ud-dev.conllu", work / "ewt")
        parser_model = args.parser_model
        if parser_model is None:
            ewt_train = convert_treebank(ewt / "en_ewt-ud-train.conllu", work / "ewt")
            train(
                ewt_train,
                ewt_dev,
                work / "parser",
                ["--training.max_epochs", str(args.parser_epochs)],
                config="parser.cfg",
            )
            parser_model = work / "parser" / "model-best"
        tagging_and_parsing = tagger_parser(parser_model, ewt_dev, args.rounds)
        ner_peak_rss = peak_rss_mb(model, dev_path)
        nlp, spacy_nlp = spacy.load(model), spacy.load(spacy_model)
        ner = nlp.get_pipe("bioner")
        documents = list(DocBin().from_disk(dev_path).get_docs(nlp.vocab))
    sentences = sentence_docs(nlp.vocab, documents)
    texts = [sent.text for doc in documents for sent in doc.sents]
    tokenizer_and_ner = spacy.blank("en", vocab=nlp.vocab)
    tokenizer_and_ner.add_pipe("bioner", source=nlp)
    pipe_speed(ner, sentences, 1)  # the word caches filled, as in a running service
    single = single_calls(ner, spacy_nlp, sentences, args.rounds)
    whole, short = pipe_speed(ner, documents, args.rounds), pipe_speed(ner, sentences, args.rounds)
    figures = {
        "model": str(args.model) if args.model else "configs/bioner.cfg trained here on CoNLL-2003 eng.train",
        "sentences": len(sentences),
        "tokens_per_sentence": sum(len(doc) for doc in sentences) / len(sentences),
        "single_call": single,
        "raw_text": raw_text_calls(tokenizer_and_ner, spacy.blank("en", vocab=nlp.vocab), texts, args.rounds),
        "bulk": {"whole_documents": whole, "one_sentence_per_doc": short, "ratio": short / whole},
        "threads": threads(ner, sentences, args.rounds),
        "profile_percent": profile(ner, sentences),
        "peak_rss_mb": ner_peak_rss,
        "tagger_parser": {
            "model": str(args.parser_model)
            if args.parser_model
            else f"configs/parser.cfg trained here on UD English EWT train for {args.parser_epochs} epochs",
            **tagging_and_parsing,
        },
    }
    s, b, t = figures["single_call"], figures["bulk"], figures["threads"]
    print(
        f"single calls, {len(sentences):,} sentences of {figures['tokens_per_sentence']:.1f} tokens: bioner "
        f"{s['bioner_us']:.0f} us, spaCy ner {s['spacy_ner_us']:.0f} us, {s['ratio']:.1f}x; nlp(text) "
        f"{figures['raw_text']['bioner_us']:.0f} us, a blank pipeline's {figures['raw_text']['blank_us']:.0f} us"
    )
    print(
        f"pipe: whole documents {b['whole_documents']:,.0f} tokens/s, a sentence per doc "
        f"{b['one_sentence_per_doc']:,.0f} ({b['ratio']:.2f}x)"
    )
    print(f"two threads {t['two_threads']:,.0f} tokens/s against one {t['one_thread']:,.0f}: {t['ratio']:.2f}x")
    for name, peak in (("bioner", figures["peak_rss_mb"]), ("tagger + parser", tagging_and_parsing["peak_rss_mb"])):
        print(f"peak RSS, {name}: {peak['tagging']:,.0f} MB tagging dev, {peak['loaded']:,.0f} MB loaded")
    for stage, share in figures["profile_percent"].items():
        print(f"  {share:5.1f}%  {stage}")
    p = figures["tagger_parser"]
    print(
        f"tagger + parser on EWT dev: whole documents {p['whole_documents']:,.0f} words/s, a sentence per doc "
        f"{p['one_sentence_per_doc']:,.0f} ({p['ratio']:.2f}x), one nlp(doc) per sentence "
        f"{p['single_call_us']:,.0f} us "
        f"({p['single_calls']:,.0f} words/s); spacy evaluate {p['spacy_evaluate_words_per_s']:,.0f} "
        f"words/s, with no components {p['spacy_evaluate_blank_words_per_s']:,.0f}"
    )
    print(f"written to {write_results('latency', figures)}")


if __name__ == "__main__":
    main()
