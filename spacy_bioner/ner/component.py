"""The `bioner` component: its factory and a thin TrainablePipe over the stages of ner/.

batch.py       tokens: docs laid end to end
featurizer.py  features
trellis.py     the tags each token may take, the rows Viterbi runs over
decoder.py     scores and Viterbi, then rules.py
confidence.py  probabilities and alternatives
writer.py      spans -> Doc.ents
trainers.py    perceptron, CRF and HMM steps
settings.py    the validated config blocks
weights.py     dense or sparse weights, grown as labels are added
saved.py       what the component's files hold, checked on loading
"""

import copy
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Callable, Optional, Union

import numpy
from spacy.errors import Errors
from spacy.language import Language
from spacy.scorer import get_ner_prf
from spacy.tokenizer import Tokenizer
from spacy.tokens import Doc
from spacy.training import Example, validate_examples
from spacy.vocab import Vocab
from thinc.api import Optimizer

from ..core import serialize
from ..core.decode import predecessor_lists
from ..core.perceptron_pipe import PerceptronPipe, checked_examples
from ..core.schemes import TagScheme
from ..core.templates import MEMORY_FAMILY, TEMPLATES_VERSION, VECTORS_FAMILY
from ..core.vector_clusters import VectorClusters
from ..gazetteer.matcher import Gazetteer
from . import trainers, writer
from .batch import groups
from .decoder import Decoded, Prediction, decode, plain_decode_for, predict_group
from .entities import TagWriter, entity_annotated
from .featurizer import Featurizer, check_vectors, fit_clusters, word_clusters
from .gold import GoldCache
from .layout import LayoutPass
from .memory import EntityMemory
from .passes import PlainPasses
from .plain_decode import PlainDecode
from .saved import FORMAT_VERSION, check_trained, check_weights, component_cfg, read_cfg
from .screens import AfterDecoding
from .settings import DEFAULT_CONFIG, Confidence, GazetteerSettings, Rules, Settings, Trainer
from .weights import grown_weights, loaded_weights, new_weights, saved_transitions


@Language.factory(
    "bioner",
    assigns=["doc.ents", "token.ent_iob", "token.ent_type"],
    default_config=DEFAULT_CONFIG,
    default_score_weights={"ents_f": 1.0, "ents_p": 0.0, "ents_r": 0.0, "ents_per_type": None},
)
def make_bioner(
    nlp: Language,
    name: str,
    scheme: str,
    transitions: str,
    n_buckets: int,
    features: list[str],
    seed: int,
    incorrect_spans_key: Optional[str],
    trainer: Trainer,
    confidence: Confidence,
    rules: Rules,
    gazetteer: GazetteerSettings,
    scorer: Optional[Callable],
) -> "BioNER":
    """Create a bioner component. Every setting is documented in spacy_bioner/ner/settings.py
    and on the configuration reference page (docs/configuration.md)."""
    settings = Settings(
        scheme=scheme,
        transitions=transitions,
        n_buckets=n_buckets,
        features=features,
        seed=seed,
        incorrect_spans_key=incorrect_spans_key,
        trainer=trainer,
        confidence=confidence,
        rules=rules,
        gazetteer=gazetteer,
    )
    return BioNER(nlp.vocab, name, settings=settings, tokenizer=nlp.tokenizer, scorer=scorer)


class BioNER(PerceptronPipe):
    """Named entity tagger: averaged structured perceptron with BIO/BILOU-constrained Viterbi.

    Trains inside `spacy train`: `update` makes one training step per sentence,
    `predict` and saved models use the averaged weights.
    """

    def __init__(
        self,
        vocab: Vocab,
        name: str = "bioner",
        *,
        settings: Optional[Settings] = None,
        tokenizer: Optional[Callable] = None,
        scorer: Optional[Callable] = get_ner_prf,
    ):
        self.vocab = vocab
        self.name = name
        self.scorer = scorer
        self.settings = settings or Settings()
        # Given by the pipeline's config (the factory): they win over a loaded model's, which must agree
        # on what training fixed. Not given (BioNER(vocab).from_disk(...)): the model's are taken.
        self._settings_given = settings is not None
        self.is_initialized = False  # by initialize, from_disk/from_bytes or a first update
        self.cfg = component_cfg(self.settings)
        self.clusters: Optional[VectorClusters] = None  # fitted at initialize for the vectors family
        self.warned_no_vectors = False
        self._predict_lock = threading.Lock()
        # Terms are split by the pipeline's own tokenizer, so they align with its tokens.
        self.gazetteer = Gazetteer(tokenizer or Tokenizer(vocab), case_sensitive=self.settings.gazetteer.case_sensitive)
        self.memory = EntityMemory(self.gazetteer.tokenizer)
        self.gold_cache = GoldCache()  # gold tags and sentences of the training examples
        self._build()

    def _build(self) -> None:
        """The features for the current settings, and empty weights for the labels (made when first used)."""
        settings = self.settings
        self.featurizer = Featurizer(
            settings.features, settings.n_buckets, word_clusters(settings.features, self.clusters, self.vocab)
        )
        self.rng = numpy.random.default_rng(settings.seed)
        self._model: Any = None  # the trainer's weights: perceptron, CRF or HMM, dense or sparse
        self._learned = False  # whether the weights have been trained or loaded, so must be kept
        self._labels_seen = -1  # how many labels the scheme, masks and weights were made for
        self.layout_pass: Optional[LayoutPass] = None  # batch.layout_pass' cache

    def _sync(self) -> None:
        """The scheme, its masks and the weights for the labels as they are now. Done on first use after
        labels change, not in add_label, so that adding many labels one by one stays linear."""
        if self._labels_seen == len(self.cfg["labels"]):
            return
        self._scheme = TagScheme(self.settings.scheme, self.cfg["labels"])
        self._legal = self._scheme.transitions().astype(numpy.uint8)
        if self._learned:
            self._model = grown_weights(self._model, self.settings, self._scheme)
        else:
            self._model = new_weights(self.settings, self._scheme)
        self._predecessors = predecessor_lists(self._legal, self._model.factored)
        self.tag_writer: Optional[TagWriter] = None  # writer.tag_writer's cache
        self.plain_passes: Optional[PlainPasses] = None  # decoder.plain_passes' cache
        self.after_decoding: Optional[AfterDecoding] = None  # decoder.after_decoding's cache
        self.plain_decode: Optional[PlainDecode] = None  # decoder.plain_decode's cache
        self._labels_seen = len(self.cfg["labels"])

    @property
    def scheme(self) -> TagScheme:
        self._sync()
        return self._scheme

    @property
    def legal(self) -> numpy.ndarray:
        """uint8 (n_tags + 1, n_tags): which tag may follow which (TagScheme.transitions)."""
        self._sync()
        return self._legal

    @property
    def predecessors(self) -> tuple[numpy.ndarray, numpy.ndarray]:
        """Each tag's legal predecessors, as Viterbi reads them (decode.predecessor_lists)."""
        self._sync()
        return self._predecessors

    @property
    def model(self) -> Any:
        """The weights: AveragedPerceptron, SparsePerceptron or CountedHMM (weights.py)."""
        self._sync()
        return self._model

    def with_settings(self, **changes: Any) -> "BioNER":
        """A copy that shares these weights, term lists and memory, with some settings changed
        (`with_settings(confidence={"entity_bias": 1.0})`); only settings read when tagging may change."""
        changed = self.settings.replace(**changes)
        check_trained(self.name, changed, self.settings, "this pipeline")
        variant = copy.copy(self)
        variant.settings = changed
        variant.cfg = {**self.cfg, "incorrect_spans_key": changed.incorrect_spans_key}
        return variant

    def add_patterns(self, patterns: Iterable[dict]) -> None:
        """Add EntityRuler-style phrase patterns to the gazetteer ({"label", "pattern", "id"})."""
        self.gazetteer.add_patterns(patterns)

    def add_label(self, label: str) -> int:
        """Add an entity label; existing weights are kept. RETURNS (int): 1 if new, else 0."""
        if not isinstance(label, str) or not label:
            raise ValueError(f"Invalid entity label {label!r}: labels are non-empty strings.")
        if label in self.cfg["labels"]:
            return 0
        self.cfg["labels"].append(label)
        self.vocab.strings.add(label)
        return 1

    def initialize(
        self,
        get_examples: Callable[[], Iterable[Example]],
        *,
        nlp: Optional[Language] = None,
        labels: Optional[Sequence[str]] = None,
        gazetteer: Optional[Union[str, Path]] = None,
        gazetteer_label: Optional[str] = None,
    ) -> None:
        """Set the labels (those added before, then the given ones, then those in the examples), load
        term lists, reset the weights, and with the `memory` family memorize the examples' entities.
        With no labels at all the component is ready and finds nothing, as spaCy's ner.

        get_examples (Callable[[], Iterable[Example]]): Returns the training examples.
        nlp (Language): The pipeline.
        labels (Optional[Sequence[str]]): Labels to declare, e.g. from `spacy init labels`.
        gazetteer (Optional[Union[str, Path]]): A term file (.jsonl, .tsv, .txt) or
            a directory of them, added to any patterns already there.
        gazetteer_label (Optional[str]): The label of plain-text term lists.
        """
        examples = checked_examples(get_examples, "BioNER.initialize")
        if gazetteer:
            self.gazetteer.load(gazetteer, label=gazetteer_label)
        remember = MEMORY_FAMILY in self.settings.features
        found = list(dict.fromkeys([*self.labels, *(labels or [])]))
        references = []  # kept for the memory only: a corpus is read once
        longest = 0
        for example in examples:
            if remember:
                references.append(example.reference)
            for ent in example.reference.ents:
                if ent.label_ not in found:
                    found.append(ent.label_)
                longest = max(longest, sum(not token.is_space for token in ent))
        self.cfg = component_cfg(self.settings, (), **({"longest_entity": longest} if longest else {}))
        self.clusters = (
            fit_clusters(self.vocab, self.settings.seed) if VECTORS_FAMILY in self.settings.features else None
        )
        self._build()
        for label in found:
            self.add_label(label)
        self.memory = EntityMemory(self.gazetteer.tokenizer)
        if remember:
            self.memory.fill(references)
        self._sync()  # the weights for these labels now, so that a label set they cannot hold is refused here
        self.is_initialized = True

    def __call__(self, doc: Doc) -> Optional[Doc]:
        """Tag one doc, as spaCy's TrainablePipe does (predict, then set_annotations, errors to the
        component's error handler); a doc that may be decoded in one compiled call is tagged by
        _tag_plain, without the predictions' objects between the two."""
        error_handler = self.get_error_handler()
        try:
            if not self._tag_plain(doc):
                self.set_annotations([doc], self.predict([doc]))
            return doc
        except Exception as e:
            error_handler(self.name, self, [doc], e)
        return None  # as TrainablePipe's: the handler let the error pass, and spaCy reports no doc

    def _tag_plain(self, doc: Doc) -> bool:
        """Tag a doc that plain_decode may decode, and write its entities; False, having done nothing, if
        it may not be (not initialized or with word vectors, which predict checks; see plain_decode_for)."""
        if not self.is_initialized or self.clusters is not None:
            return False
        quick = plain_decode_for(self, [doc])
        if quick is None:
            return False
        with self._predict_lock:
            tags, laid_out = quick.run([doc])
            if laid_out is None:  # longer than a short batch
                return False
            if tags is None:  # not plain: decoded on from its layout
                predictions = predict_group(self, [doc], laid_out)
        if tags is None:
            writer.write(self, [doc], predictions)
        else:
            writer.tag_writer(self).write_doc(doc, tags)
        return True

    def predict(self, docs: Iterable[Doc]) -> list[Prediction]:
        """Gazetteer matches, preset entities and tag ids (averaged weights) for each doc.

        Docs are tagged together, laid end to end, in groups (batch.groups).
        One call at a time: the word caches (lexicon, word scores) fill as
        new words arrive, and a thread must not read a row another one is writing.
        """
        if not self.is_initialized:
            raise ValueError(Errors.E109.format(name=self.name))
        if self.clusters is not None:
            check_vectors(self)
        docs = list(docs)
        with self._predict_lock:
            preset = {ent.label_ for doc in docs if entity_annotated(doc) for ent in doc.ents}
            for label in sorted(preset.difference(self.labels)) if preset else ():  # one order, whatever the seed
                self.add_label(label)
                self.cfg["labels_from_presets"].append(label)
            return [prediction for group in groups(docs) for prediction in predict_group(self, group)]

    def decode(self, docs: list[Doc]) -> Decoded:
        """A group of docs decoded, with the scores, masks and rules behind the tags (for calibration and explain)."""
        return decode(self, docs)

    def set_annotations(self, docs: Iterable[Doc], predictions: list[Prediction]) -> None:
        writer.write(self, list(docs), list(predictions))

    def update(
        self,
        examples: Iterable[Example],
        *,
        drop: float = 0.0,
        sgd: Optional[Optimizer] = None,
        losses: Optional[dict[str, float]] = None,
    ) -> dict[str, float]:
        """One training step per sentence of each example; the loss is the count of mistagged tokens."""
        examples = list(examples)
        validate_examples(examples, "BioNER.update")
        self._sync()
        self._learned = True  # from here on, weights are grown as labels are added, never remade
        losses = trainers.update(self, examples, {} if losses is None else losses)
        self.is_initialized = True
        return losses

    # Serialization (see PerceptronPipe), with the gazetteer and the memory beside the weights.

    def _saved_cfg(self) -> dict[str, Any]:
        learned = {key: self.cfg[key] for key in ("longest_entity", "labels_from_presets") if self.cfg.get(key)}
        return {
            **self.settings.trained_cfg(),
            "transitions": saved_transitions(self.model),
            "labels": list(self.labels),
            **learned,
            "templates_version": TEMPLATES_VERSION,
            "format_version": FORMAT_VERSION,
        }

    def _arrays(self) -> dict[str, numpy.ndarray]:
        clusters = self.clusters.to_arrays() if self.clusters is not None else {}
        return {**self.model.to_arrays(), **clusters}

    def to_bytes(self, *, exclude: Iterable[str] = tuple()) -> bytes:
        memory = {"memory": self.memory.to_bytes()} if MEMORY_FAMILY in self.settings.features else {}
        return serialize.pack(self._saved_cfg(), self._arrays(), gazetteer=self.gazetteer.to_bytes(), **memory)

    def from_bytes(self, bytes_data: bytes, *, exclude: Iterable[str] = tuple()) -> "BioNER":
        cfg, arrays, (gazetteer, memory) = serialize.unpack(
            bytes_data, "bytes", parts=("gazetteer",), optional=("memory",)
        )
        settings, labels, learned = read_cfg(cfg, "bytes")
        if MEMORY_FAMILY not in settings.features:
            memory = None
        elif memory is None:
            raise serialize.ModelFileError(
                "Corrupted component data in bytes: the memory family's 'memory' part is missing."
            )
        assert gazetteer is not None  # a required part: unpack raised if it was missing
        return self._restore(settings, labels, learned, arrays, gazetteer, where="bytes", memory=memory)

    def to_disk(self, path: Union[str, Path], *, exclude: Iterable[str] = tuple()) -> None:
        memory = {"memory": self.memory.to_bytes()} if MEMORY_FAMILY in self.settings.features else {}
        serialize.write_model(
            Path(path), self._saved_cfg(), self._arrays(), gazetteer=self.gazetteer.to_bytes(), **memory
        )

    def from_disk(self, path: Union[str, Path], *, exclude: Iterable[str] = tuple()) -> "BioNER":
        path = Path(path)
        cfg, arrays, files = serialize.read_model(path)
        settings, labels, learned = read_cfg(cfg, str(path / "cfg"))
        gazetteer = serialize.listed_file(files, path, "gazetteer")
        memory = serialize.listed_file(files, path, "memory") if MEMORY_FAMILY in settings.features else None
        self._restore(
            settings,
            labels,
            learned,
            arrays,
            gazetteer,
            where=str(path / "weights.npz"),
            cfg_where=str(path / "cfg"),
            gazetteer_where=str(path / "gazetteer"),
            memory=memory,
            memory_where=str(path / "memory"),
        )
        serialize.check_meta_labels(path, self.name, self.labels)
        return self

    def _restore(
        self,
        settings: Settings,
        labels: list[str],
        learned: dict[str, int],
        arrays: dict[str, numpy.ndarray],
        gazetteer: bytes,
        where: str,
        cfg_where: str = "bytes",
        gazetteer_where: str = "bytes",
        memory: Optional[bytes] = None,
        memory_where: str = "bytes",
    ) -> "BioNER":
        trained_transitions = settings.transitions
        if self._settings_given:
            check_trained(self.name, self.settings, settings, cfg_where)
            settings = self.settings.replace(transitions=trained_transitions)  # "auto" was decided in training
        check_weights(arrays, settings.n_buckets, TagScheme(settings.scheme, labels), trained_transitions, where)
        self.clusters = VectorClusters.from_arrays(arrays, where) if VECTORS_FAMILY in settings.features else None
        self.settings = settings
        self.cfg = component_cfg(self.settings, labels, **learned)
        for label in labels:
            self.vocab.strings.add(label)
        self._build()
        self._model, self._learned = loaded_weights(arrays, settings, settings.n_buckets), True
        self.gazetteer.from_bytes(gazetteer, where=gazetteer_where)
        self.memory = EntityMemory(self.gazetteer.tokenizer)
        if memory is not None:
            self.memory.from_bytes(memory, where=memory_where)
        self.is_initialized = True
        return self

    def __reduce__(self) -> tuple:
        settings = self.settings.to_cfg() if self._settings_given else None
        return (
            _unpickle_bioner,
            (self.vocab, self.name, self.gazetteer.tokenizer, self.scorer, settings, self.to_bytes()),
        )


def _unpickle_bioner(
    vocab: Vocab,
    name: str,
    tokenizer: Callable,
    scorer: Optional[Callable],
    settings: Optional[dict[str, Any]],
    data: bytes,
) -> BioNER:
    # Used by nlp.pipe(n_process=...) to ship the component to worker processes, settings included.
    given = Settings.from_cfg(settings) if settings is not None else None
    component = BioNER(vocab, name, settings=given, tokenizer=tokenizer, scorer=scorer)
    return component.from_bytes(data)
