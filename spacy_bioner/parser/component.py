"""The `bioner_parser` component: tokens and tags -> configurations -> greedy
transitions -> (lowered) trees -> token.head, token.dep_ and sentence starts.

Whitespace tokens are not parsed: each hangs from a neighbouring word."""

import warnings
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Annotated, Any, Callable, Literal, NamedTuple, Optional

import numpy
from pydantic import Field, model_validator
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example, validate_examples
from spacy.vocab import Vocab
from thinc.api import Optimizer

from ..core import serialize
from ..core.perceptron import AveragedPerceptron
from ..core.perceptron_pipe import PerceptronPipe, checked_examples
from . import beam, greedy  # type: ignore[attr-defined]  # compiled modules, no stubs
from .arcs import write_parses
from .nodes import doc_units, lay_out_nodes, word_heads
from .noun_chunks import install_noun_chunks
from .scoring import score_parse
from .state_features import StateFeatures
from .training import ROOT_WORD, GoldUnit, gold_units, node_values, train_unit
from .transitions import MOVE_NAMES, PROJECTIVE_SYSTEMS, SYSTEMS

STACK_BASED_SYSTEMS = ("arc-standard", "arc-eager")  # linear time; the list-based ones are quadratic

# Saved weights are indexed by hashed templates: bump when ATOMS or TEMPLATES change.
PARSER_FEATURES_VERSION = 2  # 2: suffixes

DEFAULT_PARSER_CONFIG = {
    "transition_system": "arc-eager",
    "pseudo_projective": False,
    "n_buckets": 2**21,
    "label_buckets": 2**18,
    "explore": 0.9,
    "beam_width": 1,
    "seed": 0,
    "max_length": 5000,
    "scorer": {"@scorers": "bioner.parser_scorer.v1"},
}


@Language.factory(
    "bioner_parser",
    assigns=["token.head", "token.dep", "token.is_sent_start", "doc.sents"],
    default_config=DEFAULT_PARSER_CONFIG,
    default_score_weights={
        "dep_uas": 0.5,
        "dep_las": 0.5,
        "dep_las_per_type": None,
        "sents_p": None,
        "sents_r": None,
        "sents_f": 0.0,
        "dep_uas_all": None,
        "dep_las_all": None,
        "dep_label_acc": None,
    },
)
def make_bioner_parser(
    nlp: Language,
    name: str,
    transition_system: str,
    pseudo_projective: bool,
    n_buckets: int,
    label_buckets: int,
    explore: float,
    beam_width: int,
    seed: int,
    max_length: int,
    scorer: Optional[Callable],
) -> "BioParser":
    """Create a bioner_parser component.

    transition_system (str): "arc-eager", "arc-standard", "covington" (builds
        non-projective trees; quadratic time) or "covington-projective".
    pseudo_projective (bool): Train on projectivized trees whose labels record
        the lifts, and lower those arcs after parsing (Nivre & Nilsson 2005);
        for the projective systems only.
    n_buckets (int): Rows of the hashed table of the move classifier.
    label_buckets (int): Rows of the hashed table of the label classifier.
    explore (float): Arc-eager only: after the first pass over the training
        data, the share of moves where training follows the model's own
        choice and learns from the dynamic oracle; 0 for the static oracle.
        Greedy training only.
    beam_width (int): 1 parses greedily; k > 1 keeps the k best move
        sequences, labels included, and trains both models globally on them
        (beam.pyx): more accurate, and slower (on EWT, beam 8 parsed about a
        fourteenth as fast as greedy).
    seed (int): Seed of those choices.
    max_length (int): The longest unit (a sentence, or a doc without sentence
        boundaries) the list-based systems parse: their time grows with the
        square of its length (a 32,000-token doc took 25 s), so a longer one
        is refused with an error; add a sentencizer or senter before the
        parser. The stack-based systems are linear and parse any length.
    scorer (Optional[Callable]): Scores the parses.
    """
    return BioParser(
        nlp.vocab,
        name,
        transition_system=transition_system,
        pseudo_projective=pseudo_projective,
        n_buckets=n_buckets,
        label_buckets=label_buckets,
        explore=explore,
        beam_width=beam_width,
        seed=seed,
        max_length=max_length,
        scorer=scorer,
    )


class Parse(NamedTuple):
    """What `predict` hands to `set_annotations` for one doc."""

    units: list[tuple[int, int]]  # (start, end) token range of each unit (sentence, or the whole doc)
    words: numpy.ndarray  # int64 the doc's tokens but whitespace, in order
    heads: numpy.ndarray  # int64 the head token of each word (itself for a root)
    labels: numpy.ndarray  # int32 the label id of each word's arc
    sentences_given: bool = False  # the doc had sentence starts: each unit keeps one root


class BioParser(PerceptronPipe):
    """Greedy transition-based dependency parser over averaged perceptrons.

    A doc with sentence boundaries is parsed one sentence at a time; one
    without is parsed whole, and its roots start the sentences. Whitespace
    tokens (newlines, runs of spaces) are left out of parsing, as treebanks
    have none, and attached to the word before them.
    """

    def __init__(
        self,
        vocab: Vocab,
        name: str = "bioner_parser",
        *,
        transition_system: str = "arc-eager",
        pseudo_projective: bool = False,
        n_buckets: int = 2**21,
        label_buckets: int = 2**18,
        explore: float = 0.9,
        beam_width: int = 1,
        seed: int = 0,
        max_length: int = 5000,
        scorer: Optional[Callable] = score_parse,
    ):
        self.vocab = vocab
        install_noun_chunks(vocab)  # the docs the tokenizer makes from here on read UD labels
        self.name = name
        self.scorer = scorer
        settings = {
            "transition_system": transition_system,
            "pseudo_projective": bool(pseudo_projective),
            "n_buckets": n_buckets,
            "label_buckets": label_buckets,
            "explore": explore,
            "beam_width": beam_width,
            "seed": int(seed),
            "max_length": max_length,
        }
        self.cfg = {
            **_checked(settings),
            "labels": [],
            "root_label": "ROOT",
            "features_version": PARSER_FEATURES_VERSION,
        }
        self.features = StateFeatures()
        self._build()

    def _build(self) -> None:
        self._system = SYSTEMS[self.cfg["transition_system"]]
        self.move_model = AveragedPerceptron(self.cfg["n_buckets"], len(MOVE_NAMES))
        self.label_model = AveragedPerceptron(self.cfg["label_buckets"], max(len(self.labels), 1))
        self._label_ids = {label: i for i, label in enumerate(self.labels)}
        self._examples_seen = 0
        self._first_pass = 0  # examples in one pass over the training data; exploring starts after it
        self._warned_untagged = False

    def add_label(self, label: str) -> int:
        """Add an arc label (lifted ones look like "dep||headlabel"). RETURNS (int): 1 if new."""
        if not isinstance(label, str) or not label:
            raise ValueError(f"Invalid arc label {label!r}: labels are non-empty strings.")
        if label in self._label_ids:
            return 0
        self._label_ids[label] = len(self.cfg["labels"])
        self.cfg["labels"].append(label)
        if len(self.labels) > self.label_model.n_tags:
            self.label_model.resize(len(self.labels))
        return 1

    def initialize(
        self,
        get_examples: Callable[[], Iterable[Example]],
        *,
        nlp: Optional[Language] = None,
        labels: Optional[Sequence[str]] = None,
    ) -> None:
        """Set the arc labels (given ones, then those of the examples' trees, lifted
        when pseudo-projective) and reset the weights."""
        examples = checked_examples(get_examples, "BioParser.initialize")
        self.cfg["labels"] = []
        self._build()
        for label in labels or []:
            self.add_label(label)
        root_labels: Counter[str] = Counter()
        n_examples = 0
        for example in examples:
            n_examples += 1
            for unit in self._gold_units(example):
                root_labels.update(label for head, label in zip(unit.heads[1:], unit.labels[1:]) if head == 0)
                for label in unit.labels[1:]:
                    self.add_label(label)
        if not self.labels:
            raise ValueError(
                "BioParser.initialize found no parsed examples: pass labels=[...] or examples whose reference docs "
                "have heads and deps."
            )
        self.cfg["root_label"] = root_labels.most_common(1)[0][0] if root_labels else self.labels[0]
        self._first_pass = n_examples

    # Tokens -> (word, tag, suffix) per node -> parses

    def predict(self, docs: Iterable[Doc]) -> list[Parse]:
        """The parse of each doc (averaged weights)."""
        docs = list(docs)
        if not self.labels:
            raise ValueError(f"{self.name} has no labels: train it or call initialize first.")
        given, units, untagged = doc_units(docs)
        if untagged and not self._warned_untagged:
            warnings.warn(
                f"{self.name}: docs without part-of-speech tags (token.tag_): the parser reads them; "
                "put bioner_tagger or spaCy's tagger before it.",
                stacklevel=2,
            )
            self._warned_untagged = True
        # The docs laid end to end: the units with words, each a root slot then its words.
        nodes, offsets, words, doc_words, longest = lay_out_nodes(docs, units, ROOT_WORD)
        if self.cfg["transition_system"] not in STACK_BASED_SYSTEMS and longest > self.cfg["max_length"]:
            raise ValueError(
                f"{self.name}: a sentence (or a doc without sentence boundaries) of {longest:,} tokens is longer than "
                f"max_length = {self.cfg['max_length']:,}; {self.cfg['transition_system']} takes time quadratic in it. "
                "Add a sentencizer or senter before the parser, or raise max_length."
            )
        move_weights, _ = self.move_model.averages()
        label_weights, _ = self.label_model.averages()
        root_label = self._label_ids[self.cfg["root_label"]]
        if self.cfg["beam_width"] > 1:
            node_heads, node_labels = beam.parse_batch(
                self.features,
                self._system,
                nodes,
                offsets,
                move_weights,
                label_weights,
                root_label,
                self.cfg["beam_width"],
            )
        else:
            node_heads, node_labels = greedy.parse_batch(
                self.features, self._system, nodes, offsets, move_weights, label_weights, root_label
            )
        heads, labels = word_heads(node_heads, node_labels, offsets, words)
        bounds = doc_words.tolist()
        return [
            Parse(doc_units, words[a:b], heads[a:b], labels[a:b], sentences)
            for doc_units, sentences, a, b in zip(units, given, bounds, bounds[1:])
        ]

    def set_annotations(self, docs: Iterable[Doc], parses: list[Parse]) -> None:
        """Write heads and labels (spaCy sets the sentence starts from the heads), and read noun chunks
        from these UD labels."""
        docs = list(docs)
        write_parses(self, docs, parses)
        for doc in docs:
            install_noun_chunks(doc)

    # Training

    def update(
        self,
        examples: Iterable[Example],
        *,
        drop: float = 0.0,
        sgd: Optional[Optimizer] = None,
        losses: Optional[dict[str, float]] = None,
    ) -> dict[str, float]:
        """Perceptron steps along each example's transitions; the loss counts wrong moves and labels.

        Units with a word whose gold head is missing, outside the unit or whitespace are skipped.
        """
        if losses is None:
            losses = {}
        losses.setdefault(self.name, 0.0)
        validate_examples(examples, "BioParser.update")
        for example in examples:
            values = node_values(example)
            explore = self.cfg["explore"] if self._examples_seen >= self._first_pass else 0.0
            self._examples_seen += 1
            for unit in self._gold_units(example):
                for label in unit.labels[1:]:
                    self.add_label(label)
                losses[self.name] += train_unit(
                    unit,
                    values,
                    features=self.features,
                    system=self._system,
                    models=(self.move_model, self.label_model),
                    label_ids=self._label_ids,
                    beam_width=self.cfg["beam_width"],
                    explore=explore,
                    seed=self.cfg["seed"] * 1_000_003 + self._examples_seen,
                )
        return losses

    def _gold_units(self, example: Example) -> Iterable[GoldUnit]:
        starts = [start for start, _ in doc_units([example.predicted])[1][0]]
        return gold_units(example, starts, self.cfg["pseudo_projective"])

    # Serialization (see PerceptronPipe): these weights, checked on loading.

    def _arrays(self) -> dict[str, numpy.ndarray]:
        return {"moves": self.move_model.averages()[0], "labels": self.label_model.averages()[0]}

    def _load(self, cfg: Any, arrays: dict[str, numpy.ndarray], where: str, cfg_where: str) -> "BioParser":
        if isinstance(cfg, dict):
            cfg = {"beam_width": 1, **cfg}  # parsers saved before the setting existed are greedy
        _check_cfg(cfg, cfg_where)
        serialize.check_array(arrays, "moves", (cfg["n_buckets"], len(MOVE_NAMES)), where)
        serialize.check_array(arrays, "labels", (cfg["label_buckets"], len(cfg["labels"])), where)
        self.cfg = cfg
        self._build()
        self.move_model.load_averages(
            arrays["moves"], numpy.zeros((len(MOVE_NAMES) + 1, len(MOVE_NAMES)), dtype=numpy.float32)
        )
        self.label_model.load_averages(
            arrays["labels"], numpy.zeros((len(self.labels) + 1, len(self.labels)), dtype=numpy.float32)
        )
        return self

    def __reduce__(self) -> tuple:
        return (_unpickle_parser, (self.vocab, self.name, self.scorer, self.to_bytes()))


def _unpickle_parser(vocab: Vocab, name: str, scorer: Optional[Callable], data: bytes) -> "BioParser":
    # Used by nlp.pipe(n_process=...) to ship the component to worker processes.
    return BioParser(vocab, name, scorer=scorer).from_bytes(data)


if TYPE_CHECKING:
    SystemName = str
else:  # the systems are the compiled transitions module's: a Literal built at run time, which pydantic checks
    SystemName = Literal[tuple(SYSTEMS)]


class SavedParser(serialize.SavedFields):
    """What a parser's cfg file holds."""

    transition_system: SystemName
    pseudo_projective: bool
    n_buckets: int = Field(ge=1)
    label_buckets: int = Field(ge=1)
    explore: float = Field(ge=0, le=1)
    beam_width: int = Field(ge=1)
    seed: int
    max_length: int = Field(ge=1)
    labels: list[Annotated[str, Field(min_length=1)]] = Field(min_length=1)
    root_label: str
    features_version: int

    @model_validator(mode="after")
    def _root_is_a_label(self) -> "SavedParser":
        if self.root_label not in self.labels:
            raise ValueError(f"root_label {self.root_label!r} is not one of the labels")
        return self


def _checked(settings: dict[str, Any]) -> dict[str, Any]:
    """A new parser's settings, checked (a saved parser's cfg is checked by _check_cfg)."""
    system = settings["transition_system"]
    if system not in SYSTEMS:
        raise ValueError(f"Unknown transition_system {system!r}: use one of {sorted(SYSTEMS)}.")
    if settings["pseudo_projective"] and system not in PROJECTIVE_SYSTEMS:
        raise ValueError(
            f"pseudo_projective is for the projective systems {PROJECTIVE_SYSTEMS}; {system!r} builds "
            "non-projective trees itself."
        )
    for key in ("n_buckets", "label_buckets"):
        if not isinstance(settings[key], int) or not 1 <= settings[key] < 2**32:
            raise ValueError(f"{key} must be an integer in [1, 2**32), got {settings[key]!r}")
    if not 0 <= settings["explore"] < 1:
        raise ValueError(f"explore must be in [0, 1), got {settings['explore']!r}")
    beam_width = settings["beam_width"]
    if not isinstance(beam_width, int) or isinstance(beam_width, bool) or beam_width < 1:
        raise ValueError(f"beam_width must be a positive integer (1: greedy), got {beam_width!r}")
    if not isinstance(settings["max_length"], int) or settings["max_length"] < 1:
        raise ValueError(f"max_length must be a positive integer, got {settings['max_length']!r}")
    return {**settings, "explore": float(settings["explore"])}


def _check_cfg(cfg: Any, where: str) -> None:
    if isinstance(cfg, dict) and cfg.get("features_version", PARSER_FEATURES_VERSION) != PARSER_FEATURES_VERSION:
        raise serialize.ModelFileError(
            f"Parser in {where} was trained with features version {cfg['features_version']}; this spacy-bioner uses "
            f"{PARSER_FEATURES_VERSION}: retrain it."
        )
    serialize.validated(SavedParser, cfg, where)
