"""What the components trained by perceptron steps share (bioner, bioner_tagger, bioner_parser).

They update their weights in `update` itself, so there is no optimizer step,
no gradient and no parameter swap; their labels live in `cfg["labels"]`;
and they are saved as a JSON config plus a numpy archive, nothing unpickled, with a
manifest of their digests (serialize.write_files).
A subclass gives `_arrays()` (its averaged weights by name) and
`_load(cfg, arrays, where, cfg_where)` (checks them, naming the file, and takes them on).
"""

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Callable, NoReturn, Optional, Union

import numpy
from spacy.errors import Errors
from spacy.pipeline import TrainablePipe
from spacy.training import Example, validate_examples
from thinc.api import Optimizer

from . import serialize


def with_cost(scores: numpy.ndarray, gold: numpy.ndarray, margin: float) -> numpy.ndarray:
    """Cost-augmented scores, in place: every wrong tag of a token with a gold
    tag (gold >= 0) gets a head start of `margin`, so perceptron training goes
    on until the gold tags win by that much per token (bioner's and
    bioner_tagger's `margin`). A margin of 0 leaves them as they are."""
    if margin == 0:
        return scores
    known = gold >= 0
    if known.all():  # most sentences: no fancy indexing of whole rows
        scores += margin
        scores[numpy.arange(len(gold)), gold] -= margin
        return scores
    rows = numpy.nonzero(known)[0]
    scores[rows] += margin
    scores[rows, gold[rows]] -= margin
    return scores


def checked_examples(get_examples: Callable[[], Iterable[Example]], method: str) -> Iterator[Example]:
    """The examples of `get_examples()`, checked as spaCy's `validate_get_examples` checks them
    (E930 now, E978 on the way) in the one pass `initialize` makes: that function reads every
    example first, a whole extra pass over a training corpus read from disk."""
    if get_examples is None or not callable(get_examples):
        raise TypeError(Errors.E930.format(method=method, obj=type(get_examples)))
    examples = get_examples()
    if not examples:
        raise TypeError(Errors.E930.format(method=method, obj=examples))
    return _each_an_example(examples, method)


def _each_an_example(examples: Iterable[Example], method: str) -> Iterator[Example]:
    for example in examples:
        if not isinstance(example, Example):
            raise TypeError(Errors.E978.format(name=method, types={type(example)}))
        yield example


class PerceptronPipe(TrainablePipe):
    cfg: dict[str, Any]  # JSON-ready settings and labels, saved as the component's cfg file

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(self.cfg["labels"])

    @property
    def label_data(self) -> list[str]:
        return list(self.labels)

    def finish_update(self, sgd: Optional[Optimizer] = None) -> None:
        """Nothing to do: perceptron steps are applied in `update`, not by an optimizer."""

    def use_params(self, params: dict) -> Iterator[None]:
        """Predictions always use the perceptron's own averages, so nothing to swap.

        A plain generator, as `Language.use_params` expects.
        """
        yield

    def get_loss(self, examples: Iterable[Example], scores: Any) -> NoReturn:
        raise NotImplementedError(
            f"{type(self).__name__} trains by perceptron steps in update(); it has no gradient loss."
        )

    def score(self, examples: Iterable[Example], **kwargs: Any) -> dict[str, Any]:
        validate_examples(examples, f"{type(self).__name__}.score")
        return self.scorer(examples, **kwargs) if self.scorer is not None else {}

    def _arrays(self) -> dict[str, numpy.ndarray]:
        raise NotImplementedError

    def _load(self, cfg: dict, arrays: dict[str, numpy.ndarray], where: str, cfg_where: str) -> "PerceptronPipe":
        raise NotImplementedError

    def to_bytes(self, *, exclude: Iterable[str] = tuple()) -> bytes:
        return serialize.pack(self.cfg, self._arrays())

    def from_bytes(self, bytes_data: bytes, *, exclude: Iterable[str] = tuple()) -> "PerceptronPipe":
        cfg, arrays, _ = serialize.unpack(bytes_data, "bytes")
        return self._load(cfg, arrays, "bytes", "bytes")

    def to_disk(self, path: Union[str, Path], *, exclude: Iterable[str] = tuple()) -> None:
        serialize.write_model(Path(path), self.cfg, self._arrays())

    def from_disk(self, path: Union[str, Path], *, exclude: Iterable[str] = tuple()) -> "PerceptronPipe":
        cfg, arrays, _ = serialize.read_model(Path(path))
        self._load(cfg, arrays, str(Path(path) / "weights.npz"), str(Path(path) / "cfg"))
        serialize.check_meta_labels(Path(path), self.name, self.labels)
        return self
