"""Entity memory: the training data's entities, matched in new text (the `memory` feature family).

A word sequence that was an entity in training ("von Willebrand disease")
is likely one again, as a whole, where the window features see it a token
at a time. But a tagger trained on matches of its own training entities
would learn to trust them blindly: every training entity matches. So, as in
stacking, training reads a jackknifed memory: the training docs fall into
FOLDS folds by a hash of their text, and a training doc is matched against
the entities of the other folds only. Prediction matches all of them.
"""

import functools
import zlib
from collections.abc import Iterable, Sequence
from typing import Callable, Optional

import numpy
from spacy.tokens import Doc

from ..gazetteer.matcher import Gazetteer

FOLDS = 5


def fold(doc: Doc) -> int:
    """The fold of a training doc: the same for the same text, in every epoch."""
    return zlib.crc32(doc.text.encode("utf8")) % FOLDS


class EntityMemory:
    """The entities of the training docs, compiled for matching like a gazetteer.

    tokenizer (Callable[[str], Doc]): The pipeline's, so entries align with its tokens.
    """

    def __init__(self, tokenizer: Callable):
        self.tokenizer = tokenizer
        self.entries = Gazetteer(tokenizer)
        self._folds: list[Gazetteer] = []  # while training, each fold's view: the other folds' entities

    def __len__(self) -> int:
        return len(self.entries)

    def fill(self, docs: Iterable[Doc]) -> None:
        """Memorize the entities of these reference docs, replacing the memory's content."""
        by_fold: list[set[tuple[str, str]]] = [set() for _ in range(FOLDS)]
        for doc in docs:
            by_fold[fold(doc)].update((" ".join(token.text for token in ent), ent.label_) for ent in doc.ents)
        self.entries = self._gazetteer(set().union(*by_fold))
        self._folds = [self._gazetteer(set().union(*(by_fold[:k] + by_fold[k + 1 :]))) for k in range(FOLDS)]

    def _gazetteer(self, entities: set[tuple[str, str]]) -> Gazetteer:
        gazetteer = Gazetteer(self.tokenizer)
        gazetteer.add_patterns({"pattern": text, "label": label} for text, label in sorted(entities))
        return gazetteer

    def match(
        self, docs: Sequence[Doc], labels: Sequence[str], folds: Optional[Sequence[int]] = None
    ) -> list[numpy.ndarray]:
        """Each doc's matches as rows (start, end, index of the label in `labels`, 0).

        folds: the fold of each training doc, to match it against the other
            folds' entities; None to match against all. A memory loaded from
            disk keeps no folds, so training it further matches against all.
        """
        if folds is None or not self._folds:
            return self.entries.match_batch(docs, relabel=label_map_of(self.entries, labels))
        # one doc laid out is the doc itself: no batch to split back into docs
        return [
            self._folds[k].match_laid_out([doc], relabel=label_map_of(self._folds[k], labels))
            for doc, k in zip(docs, folds)
        ]

    def match_laid_out(self, docs: Sequence[Doc], labels: Sequence[str]) -> numpy.ndarray:
        """`match` against all entities, of docs laid end to end: rows in positions of the whole batch."""
        return self.entries.match_laid_out(list(docs), relabel=label_map_of(self.entries, labels))

    def to_bytes(self) -> bytes:
        return self.entries.to_bytes()

    def from_bytes(self, data: bytes, where: str = "bytes") -> "EntityMemory":
        self.entries = Gazetteer(self.tokenizer).from_bytes(data, where=where)
        self._folds = []
        return self


def label_map_of(gazetteer: Gazetteer, labels: Sequence[str]) -> numpy.ndarray:
    """Gazetteer.match_laid_out's relabel: the index in `labels` of each of the gazetteer's labels, -1 if not there."""
    return _label_map(tuple(gazetteer.labels), tuple(labels))


@functools.lru_cache(maxsize=16)
def _label_map(memorized: tuple[str, ...], labels: tuple[str, ...]) -> numpy.ndarray:
    """The index in `labels` of each memorized label, -1 for one not there; kept per label set, not made per call."""
    index = {label: i for i, label in enumerate(labels)}
    label_map = numpy.array([index.get(label, -1) for label in memorized] or [-1], dtype=numpy.int64)
    label_map.flags.writeable = False
    return label_map
