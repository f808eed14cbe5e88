"""The bioner component's settings: one validated model per config block.

    [components.bioner]                  scheme, transitions, n_buckets, features, seed
    [components.bioner.trainer]          bioner.perceptron.v1 | bioner.crf.v1 | bioner.hmm.v1
    [components.bioner.confidence]       bioner.confidence.v1: probabilities, alternatives, the recall knob
    [components.bioner.rules]            bioner.rules.v1: the rules applied after decoding
    [components.bioner.gazetteer]        bioner.gazetteer_settings.v1: how term-list matches are used

Each block is a frozen pydantic model registered in spaCy's `misc` registry, so
config files name it with `@misc` and confection fills in its defaults. The
field descriptions here are the configuration reference (docs/configuration.md
is generated from them by scripts/render_docs.py).
"""

from typing import Any, ClassVar, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, field_validator
from spacy.util import registry

from ..core.schemes import SchemeName
from ..core.templates import ALL_FAMILIES, DEFAULT_FAMILIES, HISTORY_FAMILY
from ..gazetteer.matcher import MatchFilter
from .surnames import PERSON_LABELS

# Docs are tagged together in groups of about this many tokens: per-doc overhead is
# paid once per group, and a group's arrays stay a few megabytes whatever the batch size.
TOKENS_PER_PASS = 2**15
# Spans longer than this many tokens are not offered as alternatives: the span
# marginals cost grows with it, and longer entities are rare in every corpus here.
MAX_ALTERNATIVE_LENGTH = 10

GazetteerMode = Literal["features", "fallback", "ents"]
LineBreaks = Literal["short_lines", "blank_or_indented", "every", "none"]
TransitionsKind = Literal["auto", "pairwise", "factored"]
StartTransitions = Literal["outside", "learned"]
# transitions = "auto" factors them above this many labels: pairwise decoding costs labels squared per token.
FACTORED_ABOVE = 50
# What a model's files keep of its settings (Settings.trained_cfg)
TRAINED_KEYS = ("scheme", "transitions", "n_buckets", "features", "trainer", "case_sensitive")
# Beyond this the float32 scores it is added to would lose the weights' precision, and every token is an entity long
# before.
MAX_ENTITY_BIAS = 1000.0


class Block(BaseModel):
    """A config block: its registered name, and its fields as the config holds them."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)
    registered_name: ClassVar[str]

    def to_config(self) -> dict[str, Any]:
        return {"@misc": self.registered_name, **self.model_dump()}


class PerceptronTrainer(Block):
    """The averaged structured perceptron, with cost-augmented updates."""

    registered_name: ClassVar[str] = "bioner.perceptron.v1"
    name: ClassVar[str] = "perceptron"
    margin: float = Field(
        100.0,
        ge=0,
        description=(
            "Training continues on a sentence until the gold tags win by this much per token; 0 is the plain "
            "perceptron."
        ),
    )
    word_dropout: float = Field(
        0.1,
        ge=0,
        lt=1,
        description=(
            "Share of training tokens whose word-identity features (word, affixes) are hidden in an update, "
            "so that context and shape learn too."
        ),
    )
    start_transitions: StartTransitions = Field(
        "outside",
        description=(
            '"outside": in the averaged weights, a sentence\'s first tag scores as if an O came before it. The start '
            "weights that training learns record how the training sentences open (CoNLL-2003's often open with a "
            "team's name, so that a name opening a sentence reads as ORG); with an O before it, the words decide. "
            '"learned": the start\'s own averaged weights, which can score a little higher on text like the '
            "training text (WNUT-17 trained and tested: 41.6 against 40.8 F1)."
        ),
    )


class CRFTrainer(Block):
    """A linear-chain CRF: averaged stochastic gradient ascent on the conditional log-likelihood,
    by forward-backward over the same constrained trellis."""

    registered_name: ClassVar[str] = "bioner.crf.v1"
    name: ClassVar[str] = "crf"
    learning_rate: float = Field(0.1, gt=0, description="The step size of each gradient step.")
    l2: float = Field(
        0.0, ge=0, lt=1, description="L2 penalty, applied to the weights of the features that occur in a step."
    )
    word_dropout: float = Field(0.1, ge=0, lt=1, description="As the perceptron's.")
    start_transitions: StartTransitions = Field("outside", description="As the perceptron's.")


class HMMTrainer(Block):
    """The generative baseline: smoothed counts of the gold tags' features (no `history` family)."""

    registered_name: ClassVar[str] = "bioner.hmm.v1"
    name: ClassVar[str] = "hmm"
    word_dropout: float = Field(0.1, ge=0, lt=1, description="As the perceptron's.")


Trainer = Union[PerceptronTrainer, CRFTrainer, HMMTrainer]
TRAINERS = {trainer.name: trainer for trainer in (PerceptronTrainer, CRFTrainer, HMMTrainer)}


class Confidence(Block):
    """Entity probabilities, alternatives, and the recall knob."""

    registered_name: ClassVar[str] = "bioner.confidence.v1"
    probabilities: StrictBool = Field(
        False,
        description=(
            "Give each entity its probability (forward-backward over the constrained trellis) in "
            '`doc.spans["bioner"]`, '
            'as `attrs["scores"]`. Slows tagging by about a third.'
        ),
    )
    temperature: float = Field(
        1.0,
        gt=0,
        description=(
            "Divides the scores before they become probabilities; `bioner calibrate` fits it on held-out data."
        ),
    )
    alternatives: StrictInt = Field(
        0,
        ge=0,
        description=(
            "Per doc, up to this many other spans (not the entities) whose probability of being an entity is at least "
            '`alternatives_threshold`, in `doc.spans["bioner_alternatives"]`; 0 for none.'
        ),
    )
    alternatives_threshold: float = Field(0.1, gt=0, le=1, description="The least probability of an alternative.")
    entity_bias: float = Field(
        0.0,
        ge=-MAX_ENTITY_BIAS,
        le=MAX_ENTITY_BIAS,
        description=(
            "The recall knob: added to every entity tag's score when tagging (not in training). "
            f"Above 0 more entities are found, below 0 fewer; at most {MAX_ENTITY_BIAS:g} either way."
        ),
    )


class Rules(Block):
    """Rules on evidence the tagger's features do not weigh: where raw text's layout ends an entity,
    and, after decoding, retagging on evidence elsewhere in the doc."""

    registered_name: ClassVar[str] = "bioner.rules.v1"
    line_breaks: LineBreaks = Field(
        "short_lines",
        description=(
            '"short_lines": a blank line, a line break followed by indentation or a tab, or a line break after a '
            "short line (under 60% of the doc's longest, or any line in a doc whose lines are all under 40 "
            "characters: lists, forms, headers) ends any entity, unless an entity of the training data runs "
            'across it ("City:\\nNew\\nYork"), while a line break in hard-wrapped prose, whose lines run near the '
            'width, may join one ("New\\nYork"); "blank_or_indented": the first two alone; '
            '"every": every line break ends an entity; "none": line breaks are transparent.'
        ),
    )
    letters: StrictBool = Field(
        True,
        description=(
            'Letters, emails and forms: a salutation that opens a line ("Hi", "Dear") and a sign-off line ("Best,", '
            '"Kind regards,") are no entity, the name they greet or sign is a person (with a `person_labels` label), '
            'and a field label that opens a line ("City:") is no entity, nor part of one from the line above.'
        ),
    )
    short_form_labels: StrictBool = Field(
        True,
        description=(
            'With the `abbreviations` family: a short form defined in the doc ("atrial fibrillation ( AF )") that the '
            "tagger left outside every entity takes the type of the entity ending on its long form."
        ),
    )
    acronym_labels: StrictBool = Field(
        True,
        description=(
            'The same for an acronym used without a definition ("IDDM") whose letters are the initials of a run of '
            "words elsewhere in the doc on which an entity ends."
        ),
    )
    split_name_lists: StrictBool = Field(
        True,
        description=(
            "A multi-word entity made wholly of known names (the training data's entities, kept by the `memory` "
            "family, "
            'and the term lists\' terms) that each take one same other label when tagged alone ("London London" or '
            '"Paris Berlin Madrid" as one ORG: LOC names) is split into those names.'
        ),
    )
    max_entity_length: Optional[StrictInt] = Field(
        None,
        ge=1,
        description=(
            "The most words an entity may have when tagging; null: the longest entity training saw. A first-order "
            'tagger cannot count, and would tag "London London London ..." as one entity however long.'
        ),
    )
    person_labels: list[str] = Field(
        list(PERSON_LABELS),
        description=(
            'The labels that name people: the last word of a full name ("MaliVai Washington") takes the label where '
            "the "
            'same doc uses it alone ("Washington won"). `[]` turns the rule off.'
        ),
    )

    @field_validator("person_labels")
    @classmethod
    def _non_empty(cls, labels: list[str]) -> list[str]:
        if not all(labels):
            raise ValueError("labels are non-empty strings")
        return labels


class GazetteerSettings(Block):
    """How the term-list matches are used (the terms themselves load at initialize or with add_patterns)."""

    registered_name: ClassVar[str] = "bioner.gazetteer_settings.v1"
    mode: GazetteerMode = Field(
        "features",
        description=(
            '"features": matches are tagger features; "fallback": also, matches the tagger left unlabelled become '
            'entities; "ents": matches are fixed entities and the tagger fills in the rest.'
        ),
    )
    case_sensitive: StrictBool = Field(False, description="Match case exactly.")
    match_dropout: float = Field(
        0.3,
        ge=0,
        lt=1,
        description=(
            "Share of matches (term lists and the `memory` family's) hidden from each training update, "
            "so the tagger never trusts them blindly."
        ),
    )
    filter: MatchFilter = Field(
        "leftmost_longest", description=("Which of overlapping matches count: the leftmost longest, or the longest.")
    )
    spans_key: Optional[str] = Field(
        "bioner_gazetteer",
        min_length=1,
        description=(
            "Every match, nested and overlapping ones too, goes to `doc.spans[spans_key]`; null keeps none "
            "(a Span per match costs about an eighth of tagging time on BC5CDR)."
        ),
    )


class Settings(BaseModel):
    """All of a bioner component's settings, as its factory takes them."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)
    scheme: SchemeName = Field("BILOU", description='Tag scheme, "BILOU" or "BIO" (IOB2).')
    transitions: TransitionsKind = Field(
        "auto",
        description=(
            '"pairwise": a weight for each (tag, next tag); decoding costs tags squared per token. '
            '"factored": a move into a tag that opens nothing (O, B, U) scores a weight of the tag it leaves '
            "plus one of the tag it enters, and decoding is linear in the labels. "
            f'"auto": pairwise up to {FACTORED_ABOVE} labels, factored above, decided when training starts '
            "(the model keeps what was decided). The CRF and HMM trainers are pairwise."
        ),
    )
    n_buckets: StrictInt = Field(
        2**19,
        ge=1,
        lt=2**32,
        description=(
            "Rows of the hashed feature table: more rows, fewer collisions and a larger model. While rows x tags "
            "is at most 2**26 training keeps the weights as a dense matrix (rows x tags x 4 bytes), and a trained "
            "model, in memory and on disk, a row number per row and only the rows that are not zeros; beyond, as with "
            "hundreds of labels, the perceptron keeps each row's tags sparse (the CRF and HMM refuse)."
        ),
    )
    features: list[str] = Field(
        list(DEFAULT_FAMILIES),
        min_length=1,
        description=("Feature families (at least one): see Feature families below."),
    )
    seed: StrictInt = Field(
        0,
        description=(
            "Seeds the word and match dropout and the k-means of the `vectors` family: same seed and data, same "
            "weights."
        ),
    )
    incorrect_spans_key: Optional[str] = Field(
        None,
        min_length=1,
        description=(
            "Training: the span group of each reference doc whose spans are known not to be entities of their label "
            "(negative examples, as for spaCy's ner). Where the gold annotation is missing, the completion the tagger "
            "trains towards never starts such an entity there; a negative span that is also a gold entity is an error."
        ),
    )
    trainer: Trainer = Field(PerceptronTrainer(), description="The trainer block.")
    confidence: Confidence = Field(Confidence(), description="The confidence block.")
    rules: Rules = Field(Rules(), description="The rules block.")
    gazetteer: GazetteerSettings = Field(GazetteerSettings(), description="The gazetteer block.")

    @field_validator("features")
    @classmethod
    def _known_families(cls, features: list[str]) -> list[str]:
        unknown = [family for family in features if family not in ALL_FAMILIES]
        if unknown:
            raise ValueError(f"unknown feature families {unknown}: use some of {list(ALL_FAMILIES)}")
        return features

    def model_post_init(self, _context) -> None:
        if self.trainer.name != "perceptron" and self.transitions == "factored":
            raise ValueError(
                f'The {self.trainer.name} trainer takes pairwise transitions: set transitions = "pairwise" or "auto".'
            )
        if self.trainer.name == "hmm" and HISTORY_FAMILY in self.features:
            raise ValueError(
                "The hmm trainer counts the features of the gold tags; 'history' needs a first decoding pass: "
                "drop it from features."
            )

    def replace(self, **changes) -> "Settings":
        """These settings with some changed, validated again: `replace(confidence={"entity_bias": 1.0})`
        changes one field of a block and keeps its others."""
        fields = self.model_dump()
        for key, value in changes.items():
            fields[key] = (
                {**fields[key], **value} if isinstance(value, dict) and isinstance(fields.get(key), dict) else value
            )
        fields["trainer"] = (
            TRAINERS[self.trainer.name](**fields["trainer"])
            if isinstance(fields["trainer"], dict)
            else fields["trainer"]
        )
        return Settings(**fields)

    def transitions_for(self, n_labels: int) -> str:
        """ "pairwise" or "factored", for a model about to be trained on this many labels."""
        if self.transitions != "auto":
            return self.transitions
        return "factored" if self.trainer.name == "perceptron" and n_labels > FACTORED_ABOVE else "pairwise"

    def to_cfg(self) -> dict[str, Any]:
        """The settings as saved with a model: blocks as the config writes them."""
        cfg = self.model_dump(include={"scheme", "transitions", "n_buckets", "features", "seed", "incorrect_spans_key"})
        for block in ("trainer", "confidence", "rules", "gazetteer"):
            cfg[block] = getattr(self, block).to_config()
        return cfg

    def trained_cfg(self) -> dict[str, Any]:
        """The settings that shape the trained weights and term tables, as a model's files hold them:
        they cannot change after training."""
        return {
            "scheme": self.scheme,
            "transitions": self.transitions,
            "n_buckets": self.n_buckets,
            "features": list(self.features),
            "trainer": self.trainer.registered_name,
            "case_sensitive": self.gazetteer.case_sensitive,
        }

    @classmethod
    def from_trained_cfg(cls, cfg: dict[str, Any]) -> "Settings":
        """Settings with these trained ones (`trained_cfg`) and the defaults for the rest."""
        kinds = {kind.registered_name: kind for kind in TRAINERS.values()}
        if cfg["trainer"] not in kinds:
            raise ValueError(f"unknown trainer {cfg['trainer']!r}: use one of {sorted(kinds)}")
        return cls(
            scheme=cfg["scheme"],
            transitions=cfg["transitions"],
            n_buckets=cfg["n_buckets"],
            features=cfg["features"],
            trainer=kinds[cfg["trainer"]](),
            gazetteer=GazetteerSettings(case_sensitive=cfg["case_sensitive"]),
        )

    @classmethod
    def from_cfg(cls, cfg: dict[str, Any]) -> "Settings":
        """The inverse of `to_cfg`."""
        fields = dict(cfg)
        blocks: dict[str, Any] = {"confidence": Confidence, "rules": Rules, "gazetteer": GazetteerSettings}
        for block, kind in blocks.items():
            fields[block] = kind(**_without_name(fields[block], kind.registered_name))
        trainer = dict(fields["trainer"])
        kinds = {kind.registered_name: kind for kind in TRAINERS.values()}
        if trainer.get("@misc") not in kinds:
            raise ValueError(f"unknown trainer {trainer.get('@misc')!r}: use one of {sorted(kinds)}")
        fields["trainer"] = kinds[trainer.pop("@misc")](**trainer)
        return cls(**fields)


def _without_name(block: dict[str, Any], name: str) -> dict[str, Any]:
    if not isinstance(block, dict) or block.get("@misc", name) != name:
        raise ValueError(f"expected a {name} block, got {block!r}")
    return {key: value for key, value in block.items() if key != "@misc"}


def from_version_0_1(cfg: dict[str, Any]) -> dict[str, Any]:
    """A model cfg saved by spacy-bioner 0.1 (flat keys), in this version's form.

    Keys that 0.1's older models lack take the values that kept their output:
    the rules off, the other settings at their defaults."""
    flat = dict(cfg)
    trainer = flat.pop("trainer", "perceptron")
    trainer_fields = {
        "perceptron": ("margin", "word_dropout"),
        "crf": ("learning_rate", "l2", "word_dropout"),
        "hmm": ("word_dropout",),
    }
    if trainer not in trainer_fields:
        raise ValueError(f"unknown trainer {trainer!r}")
    block = {"@misc": TRAINERS[trainer].registered_name}
    block.update({key: flat[key] for key in trainer_fields[trainer] if key in flat})
    for key in ("margin", "word_dropout", "learning_rate", "l2"):
        flat.pop(key, None)
    flat["trainer"] = block
    flat["confidence"] = {
        "@misc": Confidence.registered_name,
        "probabilities": flat.pop("confidence", False),
        **{
            key: flat.pop(key)
            for key in ("temperature", "alternatives", "alternatives_threshold", "entity_bias")
            if key in flat
        },
    }
    flat["rules"] = {
        "@misc": Rules.registered_name,
        "split_name_lists": False,
        **{
            key: flat.pop(key, default)
            for key, default in (("short_form_labels", False), ("acronym_labels", False), ("person_labels", []))
        },
    }
    flat["gazetteer"] = {"@misc": GazetteerSettings.registered_name, **flat.get("gazetteer", {})}
    return flat


for _block in (PerceptronTrainer, CRFTrainer, HMMTrainer, Confidence, Rules, GazetteerSettings):
    registry.misc.register(_block.registered_name, func=_block)

DEFAULT_CONFIG = {
    "scheme": "BILOU",
    "transitions": "auto",
    "n_buckets": 2**19,
    "features": list(DEFAULT_FAMILIES),
    "seed": 0,
    "incorrect_spans_key": None,
    "trainer": {"@misc": PerceptronTrainer.registered_name},
    "confidence": {"@misc": Confidence.registered_name},
    "rules": {"@misc": Rules.registered_name},
    "gazetteer": {"@misc": GazetteerSettings.registered_name},
    "scorer": {"@scorers": "spacy.ner_scorer.v1"},
}
