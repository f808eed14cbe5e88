"""Bulk annotation of shards: one process against a local Dask cluster of 2 workers.

Trains bioner on CoNLL-2003 eng.train (spacy train, default config), writes
the sentences of eng.train + eng.testa as JSONL shards, and annotates them
with `spacy_bioner.bulk.annotate_shards` in this process, then on a
LocalCluster (2 worker processes, 1 thread each, loopback), into fresh
output directories. Prints records/s, tokens/s, the ratio and whether the
outputs are identical; the figures are printed as JSON too.

Usage: python bench/bench_bulk.py [--data ../shared/data] [--shards 16] [--copies 2]
"""

import argparse
import json
import tempfile
import time
from pathlib import Path

from common import ROOT, convert, train, write_results

from spacy_bioner.bulk import annotate_shards


def write_shards(sentences, folder: Path, n_shards: int) -> None:
    folder.mkdir(parents=True)
    for s in range(n_shards):
        with open(folder / f"part-{s:04d}.jsonl", "w", encoding="utf8") as out:
            for i in range(s, len(sentences), n_shards):
                out.write(json.dumps({"id": i, "text": sentences[i]}) + "\n")


def read_sentences(path: Path):
    sentences, words = [], []
    for line in path.read_text(encoding="utf8").splitlines() + [""]:
        if not line.strip() or line.startswith("-DOCSTART-"):
            if words:
                sentences.append(" ".join(words))
            words = []
        else:
            words.append(line.split()[0])
    return sentences


def timed(model, shards: Path, out: Path, **options) -> float:
    start = time.perf_counter()
    summaries = annotate_shards(model, shards, out, **options)
    assert all(s["status"] == "done" for s in summaries)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--shards", type=int, default=16)
    parser.add_argument("--copies", type=int, default=2, help="times the sentences are repeated")
    args = parser.parse_args()
    from distributed import Client, LocalCluster

    conll = args.data / "conll2003"
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "corpus").mkdir()
        train_path, dev_path = (
            convert(conll / "eng.train", work / "corpus"),
            convert(conll / "eng.testa", work / "corpus"),
        )
        train(train_path, dev_path, work / "model")
        model = work / "model" / "model-best"
        sentences = (read_sentences(conll / "eng.train") + read_sentences(conll / "eng.testa")) * args.copies
        n_tokens = sum(len(s.split()) for s in sentences)
        write_shards(sentences, work / "shards", args.shards)
        local = timed(model, work / "shards", work / "local")
        with (
            LocalCluster(
                n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
            ) as cluster,
            Client(cluster) as client,
        ):
            client.run(lambda: None)  # both workers up before the clock starts
            remote = timed(model, work / "shards", work / "cluster", client=client)
        same = all(
            (work / "local" / path.name).read_bytes() == path.read_bytes()
            for path in sorted((work / "cluster").glob("*.jsonl"))
        )
    figures = {
        "records": len(sentences),
        "tokens": n_tokens,
        "shards": args.shards,
        "one_process_records_per_s": len(sentences) / local,
        "cluster_records_per_s": len(sentences) / remote,
        "one_process_tokens_per_s": n_tokens / local,
        "cluster_tokens_per_s": n_tokens / remote,
        "ratio": local / remote,
        "identical_output": same,
    }
    print(f"{len(sentences):,} records ({n_tokens:,} tokens) in {args.shards} shards")
    print(
        f"one process: {local:.1f} s, {figures['one_process_records_per_s']:,.0f} records/s, "
        f"{figures['one_process_tokens_per_s']:,.0f} tokens/s"
    )
    print(
        f"LocalCluster, 2 workers: {remote:.1f} s, {figures['cluster_records_per_s']:,.0f} records/s, "
        f"{figures['cluster_tokens_per_s']:,.0f} tokens/s ({figures['ratio']:.2f}x; outputs identical: {same})"
    )
    print(json.dumps(figures))
    print(f"written to {write_results('bulk', figures)}")


if __name__ == "__main__":
    main()
