"""Many labels: add_label, initialize, training and tagging time and peak memory at 4 to 1,000 labels.

The corpus is synthetic (made here, seeded): sentences of filler words with one or two
names each, a name's label told by a cue word before it (most of the time) and by the
name itself. Each label count runs in a process of its own, so that its peak RSS is
its own. Tagging speed is paired with spaCy's ner, initialized with the same labels,
on the same docs in the same process (its speed does not depend on training).

    python bench/bench_labels.py                      # 4, 18, 100 and 1,000 labels
    python bench/bench_labels.py --labels 4 18 --transitions pairwise factored --conll
With --conll, the pairwise and factored runs also train configs/bioner.cfg on CoNLL-2003
(4 labels) each way and score dev.
"""

import argparse
import json
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import spacy
from common import ROOT, converted, entity_texts, score, train, write_results
from spacy.tokens import Doc, Span
from spacy.training import Example

N_TRAIN, N_DEV, EPOCHS, BATCH = 10_000, 1_000, 3, 64


def synthetic(vocab, n_labels: int, n_sentences: int, seed: int):
    rng = random.Random(seed)
    fillers = [f"w{i}" for i in range(2_000)]
    pool = [f"N{i}" for i in range(3_000)]
    names = [[tuple(rng.sample(pool, rng.randint(1, 3))) for _ in range(6)] for _ in range(n_labels)]
    docs = []
    for _ in range(n_sentences):
        words, spans = [], []
        for _ in range(rng.randint(1, 2)):
            words += rng.sample(fillers, rng.randint(3, 7))
            label = rng.randrange(n_labels)
            if rng.random() < 0.7:
                words.append(f"cue{label}")
            name = rng.choice(names[label])
            spans.append((len(words), len(words) + len(name), f"TYPE{label}"))
            words += name
        words += rng.sample(fillers, rng.randint(2, 5)) + ["."]
        doc = Doc(vocab, words=words)
        doc.ents = [Span(doc, start, end, label=label) for start, end, label in spans]
        docs.append(doc)
    return docs


def examples_of(nlp, docs):
    return [Example(Doc(nlp.vocab, words=[t.text for t in doc]), doc) for doc in docs]


def tag_speed(component, docs, repeats: int = 3) -> float:
    n_tokens = sum(len(doc) for doc in docs)
    speeds = []
    for _ in range(repeats):
        copies = [Doc(doc.vocab, words=[t.text for t in doc]) for doc in docs]
        start = time.perf_counter()
        for _ in component.pipe(copies, batch_size=1000):
            pass
        speeds.append(n_tokens / (time.perf_counter() - start))
    return statistics.median(speeds)


def one(n_labels: int, transitions: str) -> dict:
    nlp = spacy.blank("en")
    ner = nlp.add_pipe("bioner", config={"transitions": transitions})
    # drawn together, so that dev names the same entities as training
    everything = synthetic(nlp.vocab, n_labels, N_TRAIN + N_DEV, seed=0)
    train, dev = examples_of(nlp, everything[:N_TRAIN]), examples_of(nlp, everything[N_TRAIN:])
    start = time.perf_counter()
    for i in range(n_labels):
        ner.add_label(f"TYPE{i}")
    add_label_s = time.perf_counter() - start
    start = time.perf_counter()
    nlp.initialize(lambda: train)
    initialize_s = time.perf_counter() - start
    rng = random.Random(0)
    start = time.perf_counter()
    for _ in range(EPOCHS):
        rng.shuffle(train)
        for i in range(0, len(train), BATCH):
            nlp.update(train[i : i + BATCH])
    train_s = time.perf_counter() - start
    dev_docs = [eg.reference for eg in dev]
    speed = tag_speed(ner, dev_docs)
    scores = nlp.evaluate(dev)
    peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    peer = spacy.blank("en")
    spacy_ner = peer.add_pipe("ner")
    for i in range(n_labels):
        spacy_ner.add_label(f"TYPE{i}")
    peer.initialize(lambda: examples_of(peer, dev_docs[:50]))
    spacy_speed = tag_speed(spacy_ner, [Doc(peer.vocab, words=[t.text for t in doc]) for doc in dev_docs])
    model = ner.model
    return {
        "labels": n_labels,
        "transitions": "factored" if model.factored else "pairwise",
        "weights": "dense" if model.dense else "sparse",
        "add_label_s": round(add_label_s, 3),
        "initialize_s": round(initialize_s, 2),
        "train_s": round(train_s, 1),
        "train_tokens": sum(len(eg.reference) for eg in train),
        "epochs": EPOCHS,
        "tag_tokens_per_s": round(speed),
        "spacy_ner_tokens_per_s": round(spacy_speed),
        "ratio": round(speed / spacy_speed, 1),
        "dev_f1": round(100 * scores["ents_f"], 2),
        "peak_rss_mb": round(peak_rss_mb),
    }


def conll(transitions: str, data: Path) -> dict:
    """configs/bioner.cfg trained on CoNLL-2003 with these transitions: dev scores and training time."""
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        train_path, dev_path = converted(data, "conll2003", work)
        seconds = train(train_path, dev_path, work / "model", ["--components.bioner.transitions", transitions])
        nlp = spacy.load(work / "model" / "model-best")
        found = score(nlp, dev_path, entity_texts(nlp, train_path))
    return {"transitions": transitions, "train_s": round(seconds), "dev": found["overall"], "unseen": found["unseen"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labels", type=int, nargs="+", default=[4, 18, 100, 1000])
    parser.add_argument("--transitions", nargs="+", default=["auto"], choices=["auto", "pairwise", "factored"])
    parser.add_argument("--conll", action="store_true")
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--one", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(int(args.one[0]), args.one[1])))
        return
    rows = []
    for n_labels in args.labels:
        for transitions in args.transitions:
            out = subprocess.run(
                [sys.executable, __file__, "--one", str(n_labels), transitions],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            rows.append(json.loads(out.strip().splitlines()[-1]))
            print(json.dumps(rows[-1]), flush=True)
    figures = {
        "corpus": f"synthetic: {N_TRAIN:,} training and {N_DEV:,} dev sentences (bench_labels.synthetic, seed 0)",
        "epochs": EPOCHS,
        "rows": rows,
    }
    if args.conll:
        figures["conll2003"] = [
            conll(transitions, args.data) for transitions in args.transitions if transitions != "auto"
        ]
        print(json.dumps(figures["conll2003"]), flush=True)
    print(write_results("labels" if args.transitions == ["auto"] else "labels_transitions", figures))


if __name__ == "__main__":
    main()
