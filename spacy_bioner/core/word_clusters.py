"""Word clusters shipped with the package: the `clusters` feature family's table.

The `vectors` family clusters whatever static vectors the pipeline has, so it
needs them at training and tagging time. Most pipelines have none, and yet
word clusters were Ratinov & Roth's largest single gain. This table holds
the clusters of GloVe 6B 50d (400,000 lowercase words, PDDL 1.0) at the
three levels of vector_clusters.LEVELS, fitted once by
scripts/make_word_clusters.py, so every pipeline can read them: 4 MB, no
vectors, no download.

The file holds no strings: each word is its spaCy hash (the StringStore's,
stable across spaCy v3), sorted, beside its cluster ids, so it loads in
milliseconds and a lookup is one binary search. Weights are indexed by
cluster ids: if the table is ever refitted, bump templates.TEMPLATES_VERSION.
"""

import functools
from pathlib import Path
from typing import Optional

import numpy
from spacy.strings import hash_string  # type: ignore[attr-defined]  # spaCy's strings.pyi omits it

from .vector_clusters import LEVELS

TABLE_PATH = Path(__file__).parent.parent / "data" / "glove_6b_50d_clusters.npz"


class WordClusterTable:
    """Cluster ids (coarse to fine) of lowercase word forms, looked up by hash.

    keys (uint64[n]): Sorted hashes of the words.
    ids (uint16[n, len(LEVELS)]): Each word's cluster at each level, coarse to fine.
    """

    def __init__(self, keys: numpy.ndarray, ids: numpy.ndarray):
        if keys.ndim != 1 or ids.shape != (len(keys), len(LEVELS)):
            raise ValueError(
                f"A word cluster table needs keys[n] and ids[n, {len(LEVELS)}], got {keys.shape} and {ids.shape}."
            )
        if len(keys) > 1 and not numpy.all(keys[1:] > keys[:-1]):
            raise ValueError("A word cluster table's keys must be sorted and unique.")
        self.keys = numpy.ascontiguousarray(keys, dtype=numpy.uint64)
        self.ids = numpy.ascontiguousarray(ids, dtype=numpy.uint16)

    @classmethod
    def from_words(cls, words, ids: numpy.ndarray) -> "WordClusterTable":
        """A table of words (lowercased) and their cluster ids; a later duplicate is dropped."""
        keys = numpy.array([hash_string(word.lower()) for word in words], dtype=numpy.uint64)
        keys, first = numpy.unique(keys, return_index=True)
        return cls(keys, numpy.asarray(ids)[first])

    def word_ids(self, text: str) -> Optional[tuple[int, ...]]:
        """The clusters of a word form (case is ignored); None for a word the table lacks."""
        key = numpy.uint64(hash_string(text.lower()))
        row = int(numpy.searchsorted(self.keys, key))
        if row == len(self.keys) or self.keys[row] != key:
            return None
        return tuple(int(i) for i in self.ids[row])

    def save(self, path: Path) -> None:
        numpy.savez_compressed(path, keys=self.keys, ids=self.ids)

    @classmethod
    def load(cls, path: Path) -> "WordClusterTable":
        with numpy.load(path, allow_pickle=False) as data:  # a data file must never run code
            return cls(data["keys"], data["ids"])


@functools.lru_cache(maxsize=1)
def shipped_clusters() -> WordClusterTable:
    """The package's GloVe cluster table, read once per process."""
    if not TABLE_PATH.is_file():
        raise ValueError(f"The 'clusters' feature family's table {TABLE_PATH} is missing: reinstall spacy-bioner.")
    return WordClusterTable.load(TABLE_PATH)
