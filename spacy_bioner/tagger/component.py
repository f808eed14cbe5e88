"""The `bioner_tagger` component: part-of-speech tags from the NER's sequence core.

Word attributes -> hashed templates -> averaged structured perceptron ->
Viterbi (no constraints: any tag may follow any other) -> `token.tag_`,
`token.pos_`, or both from one joint tag ("NN|NOUN"). It gives a blank pipeline the tags the parser reads; spaCy's
own tagger can take its place. Whitespace tokens are left out, so raw text's
newlines change no word's features, and get spaCy's whitespace tag.
"""

import functools
import threading
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Annotated, Any, Callable, Literal, Optional, get_args

import numpy
from pydantic import Field
from spacy.language import Language
from spacy.parts_of_speech import IDS as UNIVERSAL_POS
from spacy.scorer import Scorer
from spacy.tokens import Doc
from spacy.training import Example, validate_examples
from spacy.util import registry
from spacy.vocab import Vocab
from thinc.api import Optimizer

from ..core import serialize
from ..core.decode import Decoder, predecessor_lists
from ..core.features import FeatureExtractor, Lexicon, batch_layout, words_of
from ..core.perceptron import AveragedPerceptron
from ..core.perceptron_pipe import PerceptronPipe, checked_examples, with_cost
from ..core.templates import (
    CLUSTERS_FAMILY,
    FAMILIES,
    N_ATTRIBUTES,
    TEMPLATES_VERSION,
    VECTORS_FAMILY,
    compile_templates,
    word_attributes,
    word_case_of,
)
from ..core.token_scores import attr_accuracy, token_arrays
from ..core.word_clusters import shipped_clusters
from ..core.word_scores import WordScores, reads_one_word, single_word_templates
from .tag_writer import write_tags

Attribute = Literal["tag", "pos", "tag+pos"]
ATTRIBUTES = get_args(Attribute)
JOINT = "tag+pos"  # one tag per word, "XPOS|UPOS": token.tag_ and token.pos_ from one pass
SEPARATOR = "|"
# Vector clusters are fitted by the bioner component only.
TAGGER_FAMILIES = [family for family in FAMILIES if family != VECTORS_FAMILY]
DEFAULT_TAGGER_CONFIG: dict[str, Any] = {
    "attr": "tag",
    "n_buckets": 2**20,
    "features": ["word", "window", "shape", "affixes", "flags", "conjunctions"],
    "margin": 30.0,
    "scorer": {"@scorers": "bioner.tagger_scorer.v1"},
}
WHITESPACE_TAGS = {"tag": "_SP", "pos": "SPACE"}  # spaCy's own, for tokens of whitespace alone
WHITESPACE_TAGS[JOINT] = WHITESPACE_TAGS["tag"] + SEPARATOR + WHITESPACE_TAGS["pos"]


@registry.scorers("bioner.tagger_scorer.v1")
def make_tagger_scorer() -> Callable:
    return score_tags


def score_tags(examples: Iterable[Example], **kwargs: Any) -> dict[str, Any]:
    """Accuracy of both token.tag_ ("tag_acc") and token.pos_ ("pos_acc"), where tagged."""
    examples = list(examples)
    arrays = None if kwargs else token_arrays(examples)  # None: spaCy's scorer, through the alignments
    scores = {}
    for attr in ("tag", "pos"):
        if any(example.predicted.has_annotation(attr.upper()) for example in examples):
            scores.update(
                Scorer.score_token_attr(examples, attr, **kwargs) if arrays is None else attr_accuracy(arrays, attr)
            )
    return scores


@Language.factory(
    "bioner_tagger",
    assigns=["token.tag", "token.pos"],
    default_config=DEFAULT_TAGGER_CONFIG,
    default_score_weights={"tag_acc": 1.0, "pos_acc": None},
)
def make_bioner_tagger(
    nlp: Language, name: str, attr: str, n_buckets: int, features: list[str], margin: float, scorer: Optional[Callable]
) -> "BioTagger":
    """Create a bioner_tagger component.

    attr (str): What it tags: "tag" (fine-grained, token.tag_), "pos" (universal, token.pos_), or
        "tag+pos", both from one joint tag per word.
    n_buckets (int): Rows of the hashed feature table.
    features (List[str]): Feature families (see spacy_bioner.core.templates.FAMILIES).
    margin (float): Per-token margin the gold tags must win by in training
        (cost-augmented perceptron steps); 0 is the plain perceptron. The
        default was chosen on UD English EWT dev (bench/bench_parser_tags.py).
    scorer (Optional[Callable]): Scores tag and pos accuracy.
    """
    return BioTagger(nlp.vocab, name, attr=attr, n_buckets=n_buckets, features=features, margin=margin, scorer=scorer)


class BioTagger(PerceptronPipe):
    """Part-of-speech tagger: averaged structured perceptron and Viterbi over hashed word features."""

    def __init__(
        self,
        vocab: Vocab,
        name: str = "bioner_tagger",
        *,
        attr: str = "tag",
        n_buckets: int = 2**20,
        features: Sequence[str] = DEFAULT_TAGGER_CONFIG["features"],
        margin: float = DEFAULT_TAGGER_CONFIG["margin"],
        scorer: Optional[Callable] = score_tags,
    ):
        if attr not in ATTRIBUTES:
            raise ValueError(f"attr must be one of {ATTRIBUTES}, got {attr!r}")
        if not isinstance(n_buckets, int) or not 1 <= n_buckets < 2**32:
            raise ValueError(f"n_buckets must be an integer in [1, 2**32), got {n_buckets!r}")
        unknown = [family for family in features if family not in TAGGER_FAMILIES]
        if unknown:
            raise ValueError(f"Unknown feature families {unknown} for the tagger: choose from {TAGGER_FAMILIES}.")
        if isinstance(margin, bool) or not isinstance(margin, (int, float)) or not margin >= 0:
            raise ValueError(f"margin must be a number >= 0, got {margin!r}")
        self.vocab = vocab
        self.name = name
        self.scorer = scorer
        self.cfg = {
            "attr": attr,
            "n_buckets": n_buckets,
            "features": list(features),
            "margin": float(margin),
            "labels": [],
            "templates_version": TEMPLATES_VERSION,
        }
        self._build()
        self._predict_lock = threading.Lock()

    def _build(self) -> None:
        templates, n_buckets = compile_templates(self.cfg["features"]), self.cfg["n_buckets"]
        self.extractor = FeatureExtractor(templates, n_buckets)
        # Prediction scores single-word templates from a per-word cache and hashes only the others, as the NER does.
        self.word_scores = WordScores(single_word_templates(templates), n_buckets)
        self.joint_extractor = FeatureExtractor([t for t in templates if not reads_one_word(t[1])], n_buckets)
        with_clusters = CLUSTERS_FAMILY in self.cfg["features"]
        self.lexicon = Lexicon(
            functools.partial(
                word_attributes,
                clusters=shipped_clusters().word_ids if with_clusters else None,
                word_case=word_case_of(self.cfg["features"]),
            ),
            N_ATTRIBUTES,
        )
        self.model = AveragedPerceptron(self.cfg["n_buckets"], max(len(self.labels), 1))
        self._free_for(self.model.n_tags)
        self._label_values: Optional[tuple[tuple, numpy.ndarray, bool, bool]] = None  # its cache

    def _free_for(self, n_tags: int) -> None:
        """Every tag may follow every tag: the legal moves, and Viterbi's lists of them, made once per tag set."""
        self._free = numpy.ones((n_tags + 1, n_tags), dtype=numpy.uint8)
        self._free_predecessors = predecessor_lists(self._free)
        self._decoder: Optional[Decoder] = None  # Viterbi's trellis for the last transitions decoded with

    def add_label(self, label: str) -> int:
        if not isinstance(label, str) or not label:
            raise ValueError(f"Invalid tag {label!r}: tags are non-empty strings.")
        attr = self.cfg["attr"]
        if attr == JOINT and label.count(SEPARATOR) != 1:
            raise ValueError(f'{label!r} is not a joint tag "XPOS{SEPARATOR}UPOS" (attr = "{JOINT}").')
        universal = label.split(SEPARATOR)[1] if attr == JOINT else label
        if attr in ("pos", JOINT) and universal not in UNIVERSAL_POS:
            raise ValueError(
                f'{universal!r} is not a universal part of speech (attr = "{attr}"); use attr = "tag" for other tag '
                "sets."
            )
        if label in self.cfg["labels"]:
            return 0
        self.cfg["labels"].append(label)
        if len(self.labels) > self.model.n_tags:
            self.model.resize(len(self.labels))
            self._free_for(len(self.labels))
        return 1

    def initialize(
        self,
        get_examples: Callable[[], Iterable[Example]],
        *,
        nlp: Optional[Language] = None,
        labels: Optional[Sequence[str]] = None,
    ) -> None:
        """Set the tags (given ones first, then those of the examples' words) and reset the weights."""
        examples = checked_examples(get_examples, "BioTagger.initialize")
        found = list(labels or [])
        for example in examples:
            for token in example.reference:
                if token.is_space:
                    continue
                value = self._value_of(token.tag_, token.pos_)
                if value and value not in found:
                    found.append(value)
        if not found:
            raise ValueError(
                f"BioTagger.initialize found no {self.cfg['attr']} values in the examples: pass labels=[...] or "
                "tagged examples."
            )
        self.cfg["labels"] = []
        self._build()
        for label in found:
            self.add_label(label)

    def _value_of(self, tag: Optional[str], pos: Optional[str]) -> Optional[str]:
        """The label of a word with these tags ("" or None if the tags it needs are missing)."""
        attr = self.cfg["attr"]
        if attr == JOINT:
            return f"{tag}{SEPARATOR}{pos}" if tag and pos else None
        return tag if attr == "tag" else pos

    def _layout(self, docs: list[Doc]) -> tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray, numpy.ndarray]:
        """The docs laid end to end (features.batch_layout): windows stop at sentence boundaries."""
        return batch_layout(docs)

    def _gold_values(self, example: Example) -> list[Optional[str]]:
        """The label of each predicted token from the example's reference (None where unknown)."""
        tags, pos = (example.get_aligned(attr, as_string=True) for attr in ("TAG", "POS"))
        return [self._value_of(tag, p) for tag, p in zip(tags, pos)]

    def _words(self, docs: list[Doc]) -> tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray, numpy.ndarray]:
        """The docs' words (tokens but whitespace) laid end to end: their lexicon rows, sentence numbers,
        where each doc's words begin, and each word's position among the tokens."""
        offsets, sentence, _, spaces = self._layout(docs)
        rows = self.lexicon.batch_rows(docs)
        words, word_offsets = words_of(spaces, offsets)
        if len(words) < len(rows):
            rows, sentence, offsets = rows[words], sentence[words], word_offsets
        return rows, sentence, offsets, words

    def _scores(self, docs: list[Doc]) -> tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray, numpy.ndarray]:
        """Features and scores (the weights as training left them) of the docs' words (`_words`),
        where each doc's words begin, and each word's position among the tokens."""
        rows, sentence, offsets, words = self._words(docs)
        features = self.extractor.extract(rows, self.lexicon.table, sentence)
        return features, self.model.scores(features, averaged=False), offsets, words

    def _predicted_scores(self, docs: list[Doc]) -> tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]:
        """The docs' words' scores with the averaged weights, where each doc's words begin, and each word's
        position among the tokens. The same sums as `_scores`'s, in another order: the single-word templates'
        from the per-word cache, then the others."""
        rows, sentence, offsets, words = self._words(docs)
        table, emission = self.lexicon.table, self.model.scoring_rows()
        scores = self.word_scores.scores(rows, table, sentence, emission, self.lexicon.generation)
        scores += self.model.scores(self.joint_extractor.extract(rows, table, sentence), averaged=True)
        return scores, offsets, words

    def _decode(
        self, scores: numpy.ndarray, offsets: numpy.ndarray, averaged: bool, allowed: Optional[numpy.ndarray] = None
    ) -> numpy.ndarray:
        if allowed is None:
            allowed = numpy.ones(scores.shape, dtype=numpy.uint8)
        transitions = self.model.transitions(averaged=averaged)
        if not averaged:  # the weights training is changing, in place
            return Decoder(transitions, self._free, None, self._free_predecessors).decode(scores, allowed, offsets)
        # The averages are a new array after each update: the trellis made for them serves until then.
        # Threads share it read-only; two that find it stale each make one, and either serves.
        decoder = self._decoder
        if decoder is None or decoder.transitions is not transitions:
            decoder = self._decoder = Decoder(transitions, self._free, None, self._free_predecessors)
        return decoder.decode(scores, allowed, offsets)

    def predict(self, docs: Iterable[Doc]) -> list[numpy.ndarray]:
        """Tag ids of each doc's tokens (averaged weights); -1 for whitespace."""
        docs = list(docs)
        if not self.labels:
            raise ValueError(f"{self.name} has no tags: train it or call initialize first.")
        if not docs:
            return []
        with self._predict_lock:  # one call at a time: the lexicon and the word cache fill as new words arrive
            scores, offsets, words = self._predicted_scores(docs)
        tags = self._decode(scores, offsets, averaged=True)
        token_offsets = numpy.cumsum([0] + [len(doc) for doc in docs])
        if len(words) < token_offsets[-1]:
            token_tags = numpy.full(token_offsets[-1], -1, dtype=tags.dtype)
            token_tags[words] = tags
            tags, offsets = token_tags, token_offsets
        bounds = offsets.tolist()
        return [tags[bounds[i] : bounds[i + 1]] for i in range(len(docs))]

    def set_annotations(self, docs: Iterable[Doc], tag_ids: list[numpy.ndarray]) -> None:
        values, tag, pos = self._values_of_labels()
        ids = tag_ids[0] if len(tag_ids) == 1 else numpy.concatenate([numpy.zeros(0, dtype=numpy.int32), *tag_ids])
        write_tags(list(docs), ids.astype(numpy.int32, copy=False), values, tag, pos)

    def _values_of_labels(self) -> tuple[numpy.ndarray, bool, bool]:
        """The (TAG, POS) values of each tag id (uint64, a row per label, then the whitespace tag's,
        so that the id -1 picks it) and which of the two the tagger sets, made once per label set
        and string store. The tag strings are stored for good (allow_transient=False), as spaCy
        stores labels: a memory zone that made the table must not take its strings away."""
        key = (tuple(self.labels), id(self.vocab.strings))
        if self._label_values is None or self._label_values[0] != key:
            attr = self.cfg["attr"]
            names = [*key[0], WHITESPACE_TAGS[attr]]
            strings: Any = self.vocab.strings  # spaCy's stub of StringStore.add has no allow_transient
            if attr == JOINT:
                pairs = [name.split(SEPARATOR) for name in names]
                rows = [[strings.add(tag, allow_transient=False), UNIVERSAL_POS[pos]] for tag, pos in pairs]
            elif attr == "pos":
                rows = [[0, UNIVERSAL_POS[name]] for name in names]
            else:
                rows = [[strings.add(name, allow_transient=False), 0] for name in names]
            self._label_values = (key, numpy.array(rows, dtype=numpy.uint64), attr != "pos", attr != "tag")
        return self._label_values[1], self._label_values[2], self._label_values[3]

    def update(
        self,
        examples: Iterable[Example],
        *,
        drop: float = 0.0,
        sgd: Optional[Optimizer] = None,
        losses: Optional[dict[str, float]] = None,
    ) -> dict[str, float]:
        """One perceptron step per example; words without a gold tag take the best tag that agrees with the rest."""
        if losses is None:
            losses = {}
        losses.setdefault(self.name, 0.0)
        validate_examples(examples, "BioTagger.update")
        index = {label: i for i, label in enumerate(self.labels)}
        for example in examples:
            doc = example.predicted
            if len(doc) == 0:
                continue
            gold_values = self._gold_values(example)
            known = numpy.array([index.get(value, -1) if value else -1 for value in gold_values], dtype=numpy.int32)
            features, scores, offsets, words = self._scores([doc])
            known = known[words]
            if (known < 0).all():
                continue
            gold = known
            if (known < 0).any():
                allowed = numpy.ones(scores.shape, dtype=numpy.uint8)
                allowed[known >= 0] = 0
                allowed[numpy.nonzero(known >= 0)[0], known[known >= 0]] = 1
                gold = self._decode(scores, offsets, averaged=False, allowed=allowed)
            guess = self._decode(with_cost(scores, known, self.cfg["margin"]), offsets, averaged=False)
            self.model.update(features, gold, guess)
            losses[self.name] += float((gold != guess).sum())
        return losses

    # Serialization (see PerceptronPipe): these weights, checked on loading.

    def _arrays(self) -> dict[str, numpy.ndarray]:
        return {**self.model.scoring_rows().arrays(), "transition": self.model.averages()[1]}

    def _load(self, cfg: Any, arrays: dict[str, numpy.ndarray], where: str, cfg_where: str) -> "BioTagger":
        if isinstance(cfg, dict):  # saved before the margin setting: it only matters in training
            cfg.setdefault("margin", 0.0)
        _check_cfg(cfg, cfg_where)
        n_tags = len(cfg["labels"])
        serialize.check_emission(arrays, (cfg["n_buckets"], n_tags), where)
        serialize.check_array(arrays, "transition", (n_tags + 1, n_tags), where)
        self.cfg = cfg
        self._build()
        self.model.load_arrays(arrays)
        return self

    def __reduce__(self) -> tuple:
        return (_unpickle_tagger, (self.vocab, self.name, self.scorer, self.to_bytes()))


def _unpickle_tagger(vocab: Vocab, name: str, scorer: Optional[Callable], data: bytes) -> "BioTagger":
    # Used by nlp.pipe(n_process=...) to ship the component to worker processes.
    return BioTagger(vocab, name, scorer=scorer).from_bytes(data)


if TYPE_CHECKING:
    TaggerFamily = str
else:  # the families are computed from the feature templates: a Literal built at run time, which pydantic checks
    TaggerFamily = Literal[tuple(TAGGER_FAMILIES)]


class SavedTagger(serialize.SavedFields):
    """What a tagger's cfg file holds."""

    attr: Attribute
    n_buckets: int = Field(ge=1)
    features: list[TaggerFamily] = Field(min_length=1)
    margin: float = Field(ge=0)
    labels: list[Annotated[str, Field(min_length=1)]] = Field(min_length=1)
    templates_version: int


def _check_cfg(cfg: Any, where: str) -> None:
    if isinstance(cfg, dict) and cfg.get("templates_version", TEMPLATES_VERSION) != TEMPLATES_VERSION:
        raise serialize.ModelFileError(
            f"Tagger in {where} was trained with feature templates version {cfg['templates_version']}; this "
            f"spacy-bioner uses {TEMPLATES_VERSION}: retrain it."
        )
    serialize.validated(SavedTagger, cfg, where)
