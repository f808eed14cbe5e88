"""The `bioner_sentencizer` component: spaCy's rule-based sentencizer, run in C.

It is spaCy's `Sentencizer` (same settings, scorer and files) whose rule runs over the
token arrays (sentence_starts.pyx) instead of through a Python `Token` per word, which
made spaCy's sentencizer cost as much as `bioner` itself. The sentence starts are the same.
"""

from collections.abc import Iterable, Iterator
from typing import Callable, Optional

import numpy
from spacy.language import Language
from spacy.pipeline import Sentencizer
from spacy.pipeline.senter import senter_score
from spacy.strings import get_string_id
from spacy.tokens import Doc

from .sentence_starts import sentence_starts, set_sentence_starts

DEFAULT_SENTENCIZER_CONFIG = {"punct_chars": None, "overwrite": False, "scorer": {"@scorers": "spacy.senter_scorer.v1"}}


@Language.factory(
    "bioner_sentencizer",
    assigns=["token.is_sent_start", "doc.sents"],
    default_config=DEFAULT_SENTENCIZER_CONFIG,
    default_score_weights={"sents_f": 1.0, "sents_p": 0.0, "sents_r": 0.0},
)
def make_bioner_sentencizer(
    nlp: Language, name: str, punct_chars: Optional[list[str]], overwrite: bool, scorer: Optional[Callable]
) -> "BioSentencizer":
    """Create a bioner_sentencizer component (the settings are spaCy's sentencizer's).

    punct_chars (Optional[List[str]]): The sentence-final characters; None: spaCy's default list.
    overwrite (bool): Whether to replace sentence starts set before it.
    scorer (Optional[Callable]): Scores the sentence starts (sents_p, sents_r, sents_f).
    """
    return BioSentencizer(name, punct_chars=punct_chars, overwrite=overwrite, scorer=scorer)


class BioSentencizer(Sentencizer):
    """spaCy's sentencizer with its rule in C. `punct_chars` is a frozenset: assign a new
    collection to change it (spaCy's `from_disk` and `from_bytes` do)."""

    def __init__(
        self,
        name: str = "bioner_sentencizer",
        *,
        punct_chars: Optional[Iterable[str]] = None,
        overwrite: bool = False,
        scorer: Optional[Callable] = senter_score,
    ):
        super().__init__(name, punct_chars=punct_chars, overwrite=overwrite, scorer=scorer)

    @property
    def punct_chars(self) -> frozenset:
        return self._punct_chars

    @punct_chars.setter
    def punct_chars(self, chars: Iterable[str]) -> None:
        self._punct_chars = frozenset(chars)
        # sorted once here: the kernel looks each token up by binary search
        self._final_orths = numpy.sort(
            numpy.array([get_string_id(char) for char in self._punct_chars], dtype=numpy.uint64)
        )

    def __call__(self, doc: Doc) -> Doc:
        try:
            set_sentence_starts([doc], self._final_orths, self.overwrite)
        except Exception as error:
            self.get_error_handler()(self.name, self, [doc], error)
        return doc

    def pipe(self, stream: Iterable[Doc], *, batch_size: int = 128) -> Iterator[Doc]:
        for doc in stream:
            yield self(doc)

    def predict(self, docs: Iterable[Doc]) -> list[numpy.ndarray]:
        """Each doc's sentence starts, as bools (`set_annotations` takes them)."""
        return sentence_starts(list(docs), self._final_orths)
