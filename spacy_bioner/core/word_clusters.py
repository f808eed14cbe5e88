"""Word clusters shipped with the package: the `clusters` feature family's table.

The `vectors` family clusters whatever static vectors the pipeline has, so it
needs them at training and tagging time. Most pipelines have none, and yet
word clusters were Ratinov & Roth's largest single gain. This table holds
the clusters of GloVe 6B 50d (400,000 lowercase words, PDDL 1.0) at the
three levels of vector_clusters.LEVELS, fitted once by
scripts/make_word_clusters.py, so every pipeline can read them: 4 MB, no
vectors, no download.

The file holds no strings (word_table.py): each word's hash beside its cluster
ids. Weights are indexed by cluster ids: if the table is ever refitted, bump
templates.TEMPLATES_VERSION.
"""

import functools
from pathlib import Path
from typing import Optional

import numpy

from .vector_clusters import LEVELS
from .word_table import HashedWordTable

TABLE_PATH = Path(__file__).parent.parent / "data" / "glove_6b_50d_clusters.npz"


class WordClusterTable(HashedWordTable):
    """Cluster ids (coarse to fine) of lowercase word forms: a row per word, a column per level of LEVELS."""

    name = "A word cluster table"
    values_key = "ids"
    dtype = numpy.uint16
    width = len(LEVELS)

    def word_ids(self, text: str) -> Optional[tuple[int, ...]]:
        """The clusters of a word form (case is ignored); None for a word the table lacks."""
        row = self.row(text)
        return None if row is None else tuple(row.tolist())


@functools.lru_cache(maxsize=1)
def shipped_clusters() -> WordClusterTable:
    """The package's GloVe cluster table, read once per process."""
    if not TABLE_PATH.is_file():
        raise ValueError(f"The 'clusters' feature family's table {TABLE_PATH} is missing: reinstall spacy-bioner.")
    return WordClusterTable.load(TABLE_PATH)
