"""A table shipped with the package that gives lowercase word forms a row of small integers.

The word cluster table (word_clusters.py) and the word case table (word_case.py) are both this:
no strings, each word its spaCy hash (the StringStore's, stable across spaCy v3), sorted, beside
its row, so a table of hundreds of thousands of words loads in milliseconds and a lookup is one
binary search. A subclass names its rows and says what they mean.
"""

from pathlib import Path
from typing import Any, Optional

import numpy
from spacy.strings import hash_string  # type: ignore[attr-defined]  # spaCy's strings.pyi omits it


class HashedWordTable:
    """Rows of `width` small integers of lowercase word forms, looked up by hash.

    keys (uint64[n]): Sorted, unique hashes of the lowercase words.
    values (dtype[n, width]): Each word's row.
    """

    name = "A hashed word table"
    values_key = "values"  # the rows' array in the saved file
    dtype: type = numpy.uint16
    width = 1

    def __init__(self, keys: numpy.ndarray, values: numpy.ndarray):
        if keys.ndim != 1 or values.shape != (len(keys), self.width):
            raise ValueError(
                f"{self.name} needs keys[n] and {self.values_key}[n, {self.width}], got {keys.shape} and "
                f"{values.shape}."
            )
        if len(keys) > 1 and not numpy.all(keys[1:] > keys[:-1]):
            raise ValueError(f"{self.name}'s keys must be sorted and unique.")
        self.keys = numpy.ascontiguousarray(keys, dtype=numpy.uint64)
        self.values: numpy.ndarray = numpy.ascontiguousarray(values, dtype=self.dtype)

    @classmethod
    def from_words(cls, words: list[str], values: numpy.ndarray):
        """A table of words (lowercased) and their rows; of a duplicate, the first is kept."""
        keys = numpy.array([hash_string(word.lower()) for word in words], dtype=numpy.uint64)
        keys, first = numpy.unique(keys, return_index=True)
        return cls(keys, numpy.asarray(values)[first])

    def row(self, text: str) -> Optional[numpy.ndarray]:
        """The row of a word form (its case is ignored); None for a word the table lacks."""
        key = numpy.uint64(hash_string(text.lower()))
        at = int(numpy.searchsorted(self.keys, key))
        if at == len(self.keys) or self.keys[at] != key:
            return None
        return self.values[at]

    def save(self, path: Path) -> None:
        arrays: dict[str, Any] = {"keys": self.keys, self.values_key: self.values}  # numpy's stub: a key is a flag
        numpy.savez_compressed(path, **arrays)

    @classmethod
    def load(cls, path: Path):
        with numpy.load(path, allow_pickle=False) as data:  # a data file must never run code
            return cls(data["keys"], data[cls.values_key])
