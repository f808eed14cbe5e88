"""What a pipeline component whose settings are all in its config needs beside __call__: pipe, and
serializers that write and read nothing (spaCy saves the config itself)."""

from collections.abc import Iterable, Iterator
from typing import Any

from spacy.tokens import Doc


class Stateless:
    """Mixin for rule components: `pipe` over `__call__`, and nothing of their own to save."""

    def __call__(self, doc: Doc) -> Doc:
        raise NotImplementedError

    def pipe(self, docs: Iterable[Doc], batch_size: int = 128) -> Iterator[Doc]:
        for doc in docs:
            yield self(doc)

    def to_bytes(self, *, exclude: Iterable[str] = ()) -> bytes:
        return b""

    def from_bytes(self, data: bytes, *, exclude: Iterable[str] = ()) -> "Stateless":
        return self

    def to_disk(self, path: Any, *, exclude: Iterable[str] = ()) -> None:
        pass

    def from_disk(self, path: Any, *, exclude: Iterable[str] = ()) -> "Stateless":
        return self
