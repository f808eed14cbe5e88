"""Word clusters from the pipeline's static vectors: what an unseen word shares with seen ones.

Ratinov & Roth's largest single gain came from word clusters learned on
unlabelled text: a word never seen in training still falls in a cluster
with words that were. Here the clusters come from `nlp.vocab.vectors`:
spherical k-means (cosine) over the vectors gives the fine clusters, and
k-means over the fine centroids gives two coarser levels. Each word form
gets its nearest fine centroid and that centroid's parents, as three word
attributes that the `vectors` feature family reads (see templates.py).
Fitted once, when the component is initialized; saved with its weights.
"""

from typing import Optional

import numpy
from spacy.vocab import Vocab

from .serialize import ModelFileError

# (attribute, clusters) from coarse to fine; the attribute names are templates.CLUSTER_ATTRIBUTES.
LEVELS: tuple[tuple[str, int], ...] = (("cluster_coarse", 16), ("cluster_mid", 64), ("cluster_fine", 256))
# Vectors drawn to fit the centroids: enough for 256 clusters, and seconds on a large table.
FIT_SAMPLE = 50_000
ITERATIONS = 20
# Words a fine cluster holds on average, at least: on a small table a cluster
# of one word would say nothing that the word's own features don't.
MIN_CLUSTER_SIZE = 4


class VectorClusters:
    """Nearest-centroid cluster ids of word vectors at each of LEVELS.

    centroids (float32[k, dim]): Unit-length fine centroids.
    parents (int32[len(LEVELS) - 1, k]): Each fine cluster's cluster at the coarser levels.
    """

    def __init__(self, centroids: numpy.ndarray, parents: numpy.ndarray):
        self.centroids = numpy.ascontiguousarray(centroids, dtype=numpy.float32)
        self.parents = numpy.ascontiguousarray(parents, dtype=numpy.int32)

    @classmethod
    def fit(cls, vectors: numpy.ndarray, seed: int = 0) -> "VectorClusters":
        """Cluster the rows of a vectors table (all-zero rows are left out)."""
        data = _unit_rows(numpy.asarray(vectors, dtype=numpy.float32))
        data = data[numpy.abs(data).sum(axis=1) > 0]
        if len(data) < 2:
            raise ValueError(f"Vector clusters need at least 2 non-zero vectors, got {len(data)}.")
        rng = numpy.random.default_rng(seed)
        if len(data) > FIT_SAMPLE:
            data = data[rng.choice(len(data), FIT_SAMPLE, replace=False)]
        fine = _spherical_kmeans(data, min(LEVELS[-1][1], max(1, len(data) // MIN_CLUSTER_SIZE)), rng)
        parents = [
            _nearest(fine, _spherical_kmeans(fine, min(n_clusters, len(fine)), rng)) for _, n_clusters in LEVELS[:-1]
        ]
        return cls(fine, numpy.array(parents, dtype=numpy.int32).reshape(len(LEVELS) - 1, len(fine)))

    def ids(self, vector: Optional[numpy.ndarray]) -> Optional[tuple[int, ...]]:
        """The cluster of a vector at each level, coarse to fine; None for no (or an all-zero) vector."""
        if vector is None or not numpy.any(vector):
            return None
        return tuple(int(i) for i in self.rows_ids(numpy.asarray(vector, dtype=numpy.float32)[None])[0])

    def rows_ids(self, vectors: numpy.ndarray) -> numpy.ndarray:
        """The clusters of each row of float32[n, dim] at each level, coarse to fine: int32[n, len(LEVELS)]."""
        fine = _nearest(vectors, self.centroids)
        return numpy.column_stack([*(level[fine] for level in self.parents), fine]).astype(numpy.int32)

    def word_ids(self, vocab: Vocab, text: str) -> Optional[tuple[int, ...]]:
        """The clusters of a word form's vector in vocab (or its lowercase form's); None if it has none."""
        for form in (text, text.lower()):
            if vocab.has_vector(form):
                return self.ids(numpy.asarray(vocab.get_vector(form)))
        return None

    def to_arrays(self) -> dict[str, numpy.ndarray]:
        return {"cluster_centroids": self.centroids, "cluster_parents": self.parents}

    @classmethod
    def from_arrays(cls, arrays: dict[str, numpy.ndarray], where: str) -> "VectorClusters":
        centroids, parents = arrays.get("cluster_centroids"), arrays.get("cluster_parents")
        if centroids is None or parents is None:
            raise ModelFileError(
                f"Bad weights in {where}: the 'vectors' feature family needs cluster_centroids and cluster_parents."
            )
        if centroids.ndim != 2 or not len(centroids) or parents.shape != (len(LEVELS) - 1, len(centroids)):
            raise ModelFileError(
                f"Bad weights in {where}: cluster_centroids {centroids.shape} and cluster_parents {parents.shape} do "
                "not fit together."
            )
        if not (0 <= parents.min() and parents.max() < len(centroids)):
            raise ModelFileError(f"Bad weights in {where}: cluster_parents name clusters that do not exist.")
        return cls(centroids, parents)


def _unit_rows(data: numpy.ndarray) -> numpy.ndarray:
    norms = numpy.linalg.norm(data, axis=1, keepdims=True)
    return data / numpy.where(norms > 0, norms, 1)


def _nearest(data: numpy.ndarray, centroids: numpy.ndarray) -> numpy.ndarray:
    return numpy.argmax(data @ centroids.T, axis=1)


def _spherical_kmeans(data: numpy.ndarray, k: int, rng: numpy.random.Generator) -> numpy.ndarray:
    """k unit centroids of unit rows: k-means++ seeding on cosine distance, then Lloyd steps."""
    seeds = [data[rng.integers(len(data))]]
    distance = 1 - data @ seeds[0]
    for _ in range(1, k):
        weights = numpy.clip(distance, 0, None) ** 2
        total = weights.sum()
        pick = rng.choice(len(data), p=weights / total) if total > 0 else rng.integers(len(data))
        seeds.append(data[pick])
        distance = numpy.minimum(distance, 1 - data @ data[pick])
    centroids = numpy.array(seeds)
    for _ in range(ITERATIONS):
        assigned = _nearest(data, centroids)
        sums = numpy.zeros_like(centroids)
        numpy.add.at(sums, assigned, data)
        filled = numpy.bincount(assigned, minlength=k) > 0  # an empty cluster keeps its centroid
        updated = _unit_rows(sums[filled])
        if numpy.allclose(updated, centroids[filled]):
            break
        centroids[filled] = updated
    return centroids.astype(numpy.float32)
