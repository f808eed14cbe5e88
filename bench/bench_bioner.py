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
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import spacy
from spacy.tokens import Doc, DocBin
from spacy.training import Corpus, Example

ROOT = Path(__file__).resolve().parent.parent


def convert(source: Path, out_dir: Path, sentences_per_doc="1") -> Path:
    """The project's conversion (scripts/convert_corpus.py): documents kept whole
    where the file marks them (-DOCSTART-), else sentences_per_doc sentences a
    doc, or "abstracts" (see project.yml)."""
    target = out_dir / (source.name + ".spacy")
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "convert_corpus.py"), str(source), str(target), str(sentences_per_doc)],
        check=True, capture_output=True,
    )
    return target


def train(train_path: Path, dev_path: Path, out_dir: Path, extra=(), config: str = "bioner.cfg") -> float:
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "spacy", "train", str(ROOT / "configs" / config),
         "--paths.train", str(train_path), "--paths.dev", str(dev_path), "--output", str(out_dir), *extra],
        check=True, capture_output=True,
    )
    return time.perf_counter() - start


def spacy_evaluate_examples(nlp, path: Path):
    return list(Corpus(str(path))(nlp))


def gold_token_examples(nlp, path: Path):
    """Examples whose predicted docs carry the reference tokens and sentence starts."""
    examples = []
    for ref in DocBin().from_disk(path).get_docs(nlp.vocab):
        words = [t.text for t in ref]
        spaces = [bool(t.whitespace_) for t in ref]
        predicted = Doc(nlp.vocab, words=words, spaces=spaces, sent_starts=[t.is_sent_start for t in ref])
        examples.append(Example(predicted, ref))
    return examples


def raw_text_examples(nlp, path: Path):
    return [Example(nlp.make_doc(ref.text), ref) for ref in DocBin().from_disk(path).get_docs(nlp.vocab)]


def throughput(nlp, examples, repeats: int):
    ner = nlp.get_pipe("bioner")
    n_tokens = sum(len(eg.reference) for eg in examples)
    texts = [eg.reference.text for eg in examples]
    component, end_to_end = [], []
    for _ in range(repeats):
        docs = [eg.predicted.copy() for eg in examples]
        start = time.perf_counter()
        for _ in ner.pipe(docs, batch_size=1000):
            pass
        component.append(n_tokens / (time.perf_counter() - start))
        start = time.perf_counter()
        for _ in nlp.pipe(texts, batch_size=1000):
            pass
        end_to_end.append(n_tokens / (time.perf_counter() - start))
    return {
        "tokens": n_tokens,
        "component_tokens_per_s": statistics.median(component),
        "component_spread": [min(component), max(component)],
        "raw_text_tokens_per_s": statistics.median(end_to_end),
        "raw_text_spread": [min(end_to_end), max(end_to_end)],
    }


def f1(nlp, examples) -> float:
    return round(100 * nlp.evaluate(examples)["ents_f"], 2)


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
        "model_mb": round(sum(p.stat().st_size for p in (work / "conll" / "model-best").rglob("*") if p.is_file()) / 2**20, 1),
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
    print(f"component only: {c['component_tokens_per_s']:,.0f} tokens/s (min-max {c['component_spread'][0]:,.0f}-{c['component_spread'][1]:,.0f})")
    print(f"raw text (tokenizer + bioner): {c['raw_text_tokens_per_s']:,.0f} tokens/s")
    print(f"seed toy test F1: {figures['seed_toy']}")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
