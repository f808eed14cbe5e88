"""The `bioner_senter` component: sentence starts for raw text, from the tagger's machinery.

Each word is tagged "S" (it starts a sentence) or "I" by the same hashed features, averaged
perceptron and Viterbi as `bioner_tagger`, and the tags become `token.is_sent_start`. Its
feature windows run across the whole doc: a window cut at sentence boundaries would read
the answer. Train it on docs of several sentences (`spacy convert -n 10`, and
`gold_preproc = false`, so that its examples are whole docs, not one sentence each). Put it
before `bioner_parser`, which then parses one sentence at a time. A doc whose sentences are
already set (gold sentences, or a sentencizer before it) keeps them, as spaCy's senter does.
"""

from collections.abc import Iterable, Sequence
from typing import Any, Callable, Optional

import numpy
from spacy.attrs import SENT_START
from spacy.language import Language
from spacy.pipeline.senter import senter_score
from spacy.tokens import Doc
from spacy.training import Example
from spacy.vocab import Vocab

from ..core.features import batch_layout
from .component import BioTagger

STARTS, INSIDE = "S", "I"
DEFAULT_SENTER_CONFIG: dict[str, Any] = {
    "n_buckets": 2**18,
    # casing: a capital on a word usually written in lower case marks a sentence start (+0.9 F1 on EWT dev);
    # far_window: the words three away, for boundaries without punctuation (+0.4, mean of 3 seeds)
    "features": ["word", "window", "shape", "flags", "conjunctions", "casing", "far_window"],
    "margin": 10.0,
    "paragraph_breaks": True,
    "scorer": {"@scorers": "spacy.senter_scorer.v1"},
}


@Language.factory(
    "bioner_senter",
    assigns=["token.is_sent_start"],
    default_config=DEFAULT_SENTER_CONFIG,
    default_score_weights={"sents_f": 1.0, "sents_p": 0.0, "sents_r": 0.0},
)
def make_bioner_senter(
    nlp: Language,
    name: str,
    n_buckets: int,
    features: list[str],
    margin: float,
    paragraph_breaks: bool,
    scorer: Optional[Callable],
) -> "BioSenter":
    """Create a bioner_senter component.

    n_buckets (int): Rows of the hashed feature table.
    features (List[str]): Feature families (see spacy_bioner.core.templates.FAMILIES).
    margin (float): Per-token margin the gold tags must win by in training; 0 is the plain perceptron.
    paragraph_breaks (bool): A word after a blank line (whitespace with two line breaks) starts a sentence.
    scorer (Optional[Callable]): Scores the sentence starts (sents_p, sents_r, sents_f).
    """
    return BioSenter(
        nlp.vocab,
        name,
        n_buckets=n_buckets,
        features=features,
        margin=margin,
        paragraph_breaks=paragraph_breaks,
        scorer=scorer,
    )


class BioSenter(BioTagger):
    """Sentence starts: a two-tag averaged perceptron tagger over windows that cross sentences."""

    def __init__(
        self,
        vocab: Vocab,
        name: str = "bioner_senter",
        *,
        n_buckets: int = DEFAULT_SENTER_CONFIG["n_buckets"],
        features: Sequence[str] = DEFAULT_SENTER_CONFIG["features"],
        margin: float = DEFAULT_SENTER_CONFIG["margin"],
        paragraph_breaks: bool = DEFAULT_SENTER_CONFIG["paragraph_breaks"],
        scorer: Optional[Callable] = senter_score,
    ):
        # attr is the tagger's; this subclass reads and writes sentence starts in its own methods
        super().__init__(vocab, name, attr="tag", n_buckets=n_buckets, features=features, margin=margin, scorer=scorer)
        self.paragraph_breaks = paragraph_breaks
        for label in (STARTS, INSIDE):
            self.add_label(label)

    def add_label(self, label: str) -> int:
        if label not in (STARTS, INSIDE):
            raise ValueError(f"bioner_senter tags {STARTS!r} and {INSIDE!r} only, got {label!r}.")
        return super().add_label(label)

    def initialize(
        self,
        get_examples: Callable[[], Iterable[Example]],
        *,
        nlp: Optional[Language] = None,
        labels: Optional[Sequence[str]] = None,
    ) -> None:
        """Reset the weights (the labels are fixed)."""
        self.cfg["labels"] = []
        self._build()
        for label in (STARTS, INSIDE):
            self.add_label(label)

    def _layout(self, docs: list[Doc]) -> tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray, numpy.ndarray]:
        offsets, sentence, starts, spaces = batch_layout(docs)
        return offsets, numpy.zeros_like(sentence), starts, spaces  # one "sentence" per doc: windows cross them

    def _gold_values(self, example: Example) -> list[Optional[str]]:
        return [None if start is None else STARTS if start else INSIDE for start in example.get_aligned_sent_starts()]

    def __reduce__(self) -> tuple:
        return (_unpickle_senter, (self.vocab, self.name, self.scorer, self.paragraph_breaks, self.to_bytes()))

    def set_annotations(self, docs: Iterable[Doc], tag_ids: list[numpy.ndarray]) -> None:
        # S, I, and whitespace (id -1); as uint64, the type Doc.from_array takes (-1 wraps, and is read back as -1)
        starts = numpy.array([1, -1, -1], dtype=numpy.int64).view(numpy.uint64)
        for doc, ids in zip(docs, tag_ids):
            if len(doc) and not doc.has_annotation("SENT_START"):  # sentences set before it are kept
                values = starts[ids].reshape(-1, 1)
                values[0] = 1  # a doc's first token starts its first sentence
                if self.paragraph_breaks:
                    values[_after_blank_lines(doc)] = 1
                doc.from_array([SENT_START], values)


def _after_blank_lines(doc: Doc) -> list[int]:
    """The words that follow a whitespace token holding a blank line: a paragraph's first word."""
    return [
        token.i + 1
        for token in doc[:-1]
        if token.is_space and token.text.count("\n") >= 2 and not doc[token.i + 1].is_space
    ]


def _unpickle_senter(
    vocab: Vocab, name: str, scorer: Optional[Callable], paragraph_breaks: bool, data: bytes
) -> BioSenter:
    # Used by nlp.pipe(n_process=...) to ship the component to worker processes.
    return BioSenter(vocab, name, paragraph_breaks=paragraph_breaks, scorer=scorer).from_bytes(data)
