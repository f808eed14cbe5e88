"""The `bioner` component: hashed features -> averaged perceptron -> constrained Viterbi -> Doc.ents."""
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Optional, Sequence

import numpy
from spacy.attrs import IS_SPACE, ORTH, SENT_START
from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.scorer import get_ner_prf
from spacy.tokens import Doc, Span
from spacy.training import Example, validate_examples, validate_get_examples
from spacy.vocab import Vocab

from . import serialize
from .decode import viterbi
from .features import FeatureExtractor, Lexicon
from .perceptron import DROPPED, AveragedPerceptron
from .schemes import TagScheme
from .templates import DEFAULT_FAMILIES, WORD_ATTRIBUTES, compile_templates, identity_templates, word_attributes

DEFAULT_BIONER_CONFIG = {
    "scheme": "BILOU",
    "n_buckets": 2**19,
    "features": DEFAULT_FAMILIES,
    "margin": 10.0,
    "word_dropout": 0.1,
    "seed": 0,
    "scorer": {"@scorers": "spacy.ner_scorer.v1"},
}


@Language.factory(
    "bioner",
    assigns=["doc.ents", "token.ent_iob", "token.ent_type"],
    default_config=DEFAULT_BIONER_CONFIG,
    default_score_weights={"ents_f": 1.0, "ents_p": 0.0, "ents_r": 0.0, "ents_per_type": None},
)
def make_bioner(
    nlp: Language,
    name: str,
    scheme: str,
    n_buckets: int,
    features: List[str],
    margin: float,
    word_dropout: float,
    seed: int,
    scorer: Optional[Callable],
) -> "BioNER":
    """Create a bioner component.

    scheme (str): Tag scheme, "BILOU" or "BIO".
    n_buckets (int): Rows of the hashed feature table; more means fewer collisions
        and a larger model.
    features (List[str]): Feature families to use (see spacy_bioner.templates.FAMILIES).
    margin (float): Per-token margin the gold tags must win by in training
        (cost-augmented updates); 0 is the plain perceptron.
    word_dropout (float): Share of training tokens whose word-identity features
        (word, affixes) are hidden in an update, so context and shape learn too.
    seed (int): Seed of the word dropout; same seed and data, same weights.
    scorer (Optional[Callable]): The scoring method, spaCy's NER scorer by default.
    """
    return BioNER(
        nlp.vocab,
        name,
        scheme=scheme,
        n_buckets=n_buckets,
        features=features,
        margin=margin,
        word_dropout=word_dropout,
        seed=seed,
        scorer=scorer,
    )


class BioNER(TrainablePipe):
    """Named entity tagger: averaged structured perceptron with BIO/BILOU-constrained Viterbi.

    Trains inside `spacy train`: `update` makes one perceptron step per example,
    `predict` and saved models use the averaged weights.
    """

    def __init__(
        self,
        vocab: Vocab,
        name: str = "bioner",
        *,
        scheme: str = "BILOU",
        n_buckets: int = 2**19,
        features: Sequence[str] = DEFAULT_FAMILIES,
        margin: float = 10.0,
        word_dropout: float = 0.1,
        seed: int = 0,
        scorer: Optional[Callable] = get_ner_prf,
    ):
        if not isinstance(n_buckets, int) or not 1 <= n_buckets < 2**32:
            raise ValueError(f"n_buckets must be an integer in [1, 2**32), got {n_buckets!r}")
        self.vocab = vocab
        self.name = name
        self.scorer = scorer
        if not margin >= 0:
            raise ValueError(f"margin must be >= 0, got {margin!r}")
        if not 0 <= word_dropout < 1:
            raise ValueError(f"word_dropout must be in [0, 1), got {word_dropout!r}")
        self.cfg = {
            "scheme": scheme,
            "n_buckets": n_buckets,
            "features": list(features),
            "margin": float(margin),
            "word_dropout": float(word_dropout),
            "seed": int(seed),
            "labels": [],
        }
        self._build()

    def _build(self) -> None:
        cfg = self.cfg
        self.scheme = TagScheme(cfg["scheme"], cfg["labels"])
        self.extractor = FeatureExtractor(compile_templates(cfg["features"]), cfg["n_buckets"])
        self.lexicon = Lexicon(word_attributes, len(WORD_ATTRIBUTES))
        self.model = AveragedPerceptron(cfg["n_buckets"], self.scheme.n_tags)
        self._identity = numpy.array(identity_templates(cfg["features"]), dtype=numpy.intp)
        self._rng = numpy.random.default_rng(cfg["seed"])
        self._legal = self.scheme.transitions().astype(numpy.uint8)

    @property
    def labels(self):
        return tuple(self.cfg["labels"])

    @property
    def label_data(self) -> List[str]:
        return list(self.labels)

    def add_label(self, label: str) -> int:
        """Add an entity label; existing weights are kept. RETURNS (int): 1 if new, else 0."""
        if not isinstance(label, str) or not label:
            raise ValueError(f"Invalid entity label {label!r}: labels are non-empty strings.")
        if label in self.cfg["labels"]:
            return 0
        self.cfg["labels"].append(label)
        self.scheme = TagScheme(self.cfg["scheme"], self.cfg["labels"])
        self._legal = self.scheme.transitions().astype(numpy.uint8)
        self.model.resize(self.scheme.n_tags)
        return 1

    def initialize(
        self,
        get_examples: Callable[[], Iterable[Example]],
        *,
        nlp: Optional[Language] = None,
        labels: Optional[Sequence[str]] = None,
    ) -> None:
        """Set the labels (given ones first, then those in the examples) and reset the weights.

        get_examples (Callable[[], Iterable[Example]]): Returns the training examples.
        nlp (Language): The pipeline.
        labels (Optional[Sequence[str]]): Labels to declare, e.g. from `spacy init labels`.
        """
        validate_get_examples(get_examples, "BioNER.initialize")
        found = list(labels or [])
        for example in get_examples():
            for ent in example.reference.ents:
                if ent.label_ not in found:
                    found.append(ent.label_)
        if not found:
            raise ValueError(
                "BioNER.initialize found no entity labels: pass labels=[...] or "
                "examples whose reference docs have entities."
            )
        self.cfg["labels"] = []
        self._build()
        for label in found:
            self.add_label(label)

    # Tokens -> features -> scores -> Viterbi

    def _features(self, doc: Doc) -> numpy.ndarray:
        arrays = doc.to_array([ORTH, SENT_START])
        rows = self.lexicon.rows(numpy.ascontiguousarray(arrays[:, 0]), self.vocab.strings)
        sentence = numpy.cumsum(arrays[:, 1].astype(numpy.int64) == 1).astype(numpy.int32)
        return self.extractor.extract(rows, self.lexicon.table, sentence)

    def _allowed(self, doc: Doc) -> numpy.ndarray:
        arrays = doc.to_array([SENT_START, IS_SPACE])
        forced = numpy.full(len(doc), -1, dtype=numpy.int32)
        labels = {label: i for i, label in enumerate(self.labels)}
        for ent in doc.ents:
            if ent.label_ in labels:
                forced[ent.start : ent.end] = self.scheme.from_spans([(0, len(ent), labels[ent.label_])], len(ent))
            else:  # a label we cannot tag: keep its tokens out of our entities
                forced[ent.start : ent.end] = 0
        ends = numpy.zeros(len(doc), dtype=numpy.bool_)
        ends[[ent.end for ent in doc.ents if ent.end < len(doc)]] = True
        return self.scheme.allowed(arrays[:, 0] == 1, arrays[:, 1].astype(bool), forced, closed_before=ends)

    def _decode(self, features, allowed, averaged: bool, cost_against=None) -> numpy.ndarray:
        scores = self.model.scores(features, averaged=averaged)
        if cost_against is not None:
            # Cost-augmented decoding: every wrong tag gets a head start of `margin`,
            # so training goes on until the gold wins by that much per token.
            known = numpy.nonzero(cost_against >= 0)[0]
            scores[known] += self.cfg["margin"]
            scores[known, cost_against[known]] -= self.cfg["margin"]
        return viterbi(scores, self.model.transitions(averaged=averaged), allowed, self._legal)

    def predict(self, docs: Iterable[Doc]) -> List[numpy.ndarray]:
        """Tag ids for each doc, decoded with the averaged weights."""
        return [self._decode(self._features(doc), self._allowed(doc), averaged=True) for doc in docs]

    def set_annotations(self, docs: Iterable[Doc], tag_ids: List[numpy.ndarray]) -> None:
        """Write the decoded entities to `doc.ents`, keeping preset entities as they were."""
        for doc, tags in zip(docs, tag_ids):
            preset = list(doc.ents)
            taken = numpy.zeros(len(doc), dtype=numpy.bool_)
            for ent in preset:
                taken[ent.start : ent.end] = True
            found = [
                Span(doc, start, end, label=self.labels[label])
                for start, end, label in self.scheme.to_spans(tags)
                if not taken[start]
            ]
            doc.set_ents(sorted(preset + found, key=lambda span: span.start), default="outside")

    # Training

    def update(
        self,
        examples: Iterable[Example],
        *,
        drop: float = 0.0,
        sgd=None,
        losses: Optional[Dict[str, float]] = None,
    ) -> Dict[str, float]:
        """One perceptron step per example; the loss is the count of mistagged tokens.

        Tokens with missing gold are not trained as "O": the gold sequence is
        completed by the best-scoring valid sequence that agrees with the known tags.
        """
        if losses is None:
            losses = {}
        losses.setdefault(self.name, 0.0)
        validate_examples(examples, "BioNER.update")
        for example in examples:
            doc = example.predicted
            if len(doc) == 0:
                continue
            known = self.scheme.from_biluo(example.get_aligned_ner())
            if (known < 0).all():
                continue
            features = self._dropout(self._features(doc))
            gold = known
            if (known < 0).any():
                free = numpy.zeros(len(doc), dtype=numpy.bool_)
                gold = self._decode(features, self.scheme.allowed(free, free, known), averaged=False)
            cost_against = known if self.cfg["margin"] > 0 else None
            guess = self._decode(features, self._allowed(doc), averaged=False, cost_against=cost_against)
            self.model.update(features, gold, guess)
            losses[self.name] += float((gold != guess).sum())
        return losses

    def _dropout(self, features: numpy.ndarray) -> numpy.ndarray:
        if self.cfg["word_dropout"] > 0 and len(self._identity):
            hidden = numpy.nonzero(self._rng.random(len(features)) < self.cfg["word_dropout"])[0]
            features[numpy.ix_(hidden, self._identity)] = DROPPED
        return features

    def finish_update(self, sgd=None) -> None:
        """Nothing to do: perceptron steps are applied in `update`, not by an optimizer."""

    def use_params(self, params: dict):
        """Predictions always use the perceptron's own averages, so nothing to swap.

        A plain generator, as `Language.use_params` expects.
        """
        yield

    def get_loss(self, examples, scores):
        raise NotImplementedError("BioNER trains by perceptron steps in update(); it has no gradient loss.")

    def score(self, examples: Iterable[Example], **kwargs) -> Dict[str, object]:
        validate_examples(examples, "BioNER.score")
        return self.scorer(examples, **kwargs) if self.scorer is not None else {}

    # Serialization: JSON config and a numpy archive; nothing is unpickled.

    def to_bytes(self, *, exclude=tuple()) -> bytes:
        emission, transition = self.model.averages()
        return serialize.pack(self.cfg, {"emission": emission, "transition": transition})

    def from_bytes(self, bytes_data: bytes, *, exclude=tuple()) -> "BioNER":
        cfg, arrays = serialize.unpack(bytes_data, where="bytes")
        return self._load(cfg, arrays, where="bytes")

    def to_disk(self, path, *, exclude=tuple()) -> None:
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        emission, transition = self.model.averages()
        serialize.write_cfg(path / "cfg", self.cfg)
        serialize.write_arrays(path / "weights.npz", {"emission": emission, "transition": transition})

    def from_disk(self, path, *, exclude=tuple()) -> "BioNER":
        path = Path(path)
        cfg = serialize.read_cfg(path / "cfg")
        arrays = serialize.read_arrays(path / "weights.npz")
        return self._load(cfg, arrays, where=str(path / "weights.npz"))

    def _load(self, cfg: dict, arrays: Dict[str, numpy.ndarray], where: str) -> "BioNER":
        serialize.check_cfg(cfg, where)
        n_tags = len(TagScheme(cfg["scheme"], cfg["labels"]).tags)
        serialize.check_array(arrays, "emission", (cfg["n_buckets"], n_tags), where)
        serialize.check_array(arrays, "transition", (n_tags + 1, n_tags), where)
        self.cfg = cfg
        self._build()
        self.model.load_averages(arrays["emission"], arrays["transition"])
        return self

    def __reduce__(self):
        return (_unpickle_bioner, (self.vocab, self.name, self.scorer, self.to_bytes()))


def _unpickle_bioner(vocab, name, scorer, data):
    # Used by nlp.pipe(n_process=...) to ship the component to worker processes.
    component = BioNER(vocab, name, scorer=scorer)
    return component.from_bytes(data)
