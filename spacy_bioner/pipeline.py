"""The `bioner` component: hashed features -> averaged perceptron -> constrained Viterbi -> Doc.ents."""
import functools
import threading
import warnings
from pathlib import Path
from typing import Callable, Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple, Union

import numpy
from spacy.attrs import ORTH
from spacy.language import Language
from spacy.scorer import get_ner_prf
from spacy.strings import get_string_id
from spacy.tokenizer import Tokenizer
from spacy.tokens import Doc, Span, SpanGroup
from spacy.training import Example, validate_examples, validate_get_examples
from spacy.vocab import Vocab

from . import serialize
from .decode import viterbi
from .marginals import entity_probabilities, expected_counts, span_probabilities
from .abbreviations import Initials, Words, definitions, label_short_forms, mentions, undefined_acronyms
from .entities import write_entities
from .document import (
    ABBREVIATION_HISTORY_FEATURES, HISTORY_FEATURES, abbreviation_features, abbreviation_history, document_features,
    history_features,
)
from .features import FeatureExtractor, Lexicon, batch_layout, words_of
from .word_scores import WordScores, single_word_templates
from .gold import gold_tags, sentence_runs
from .gazetteer import FILTERS, GAZETTEER_MODES, Gazetteer, filter_matches, match_codes
from .hmm import CountedHMM
from .memory import EntityMemory, fold
from .perceptron import DROPPED, AveragedPerceptron
from .perceptron_pipe import PerceptronPipe, with_cost
from .schemes import TagScheme, words_within
from .surnames import label_surnames
from .templates import (
    TEMPLATES_VERSION, ABBREVIATION_FAMILY, CLUSTERS_FAMILY, COLUMNS, DEFAULT_FAMILIES, DOCUMENT_FAMILY, HISTORY_FAMILY, MEMORY_FAMILY, N_ATTRIBUTES,
    VECTORS_FAMILY,
    compile_templates, identity_templates, word_attributes,
)
from .vector_clusters import VectorClusters
from .word_clusters import shipped_clusters

TOKENS_PER_PASS = 2**15  # predict tags docs in groups of about this many tokens
TRAINERS = ("perceptron", "crf", "hmm")
MAX_ALTERNATIVE_LENGTH = 10  # tokens: longer spans are not offered as alternatives

DEFAULT_BIONER_CONFIG = {
    "scheme": "BILOU",
    "n_buckets": 2**19,
    "features": DEFAULT_FAMILIES,
    "trainer": "perceptron",
    "learning_rate": 0.1,
    "l2": 0.0,
    "margin": 100.0,
    "word_dropout": 0.1,
    "seed": 0,
    "entity_bias": 0.0,
    "short_form_labels": True,
    "acronym_labels": True,
    "person_labels": ["PER", "PERSON", "person"],
    "confidence": False,
    "temperature": 1.0,
    "alternatives": 0,
    "alternatives_threshold": 0.1,
    "gazetteer": {
        "mode": "features",
        "case_sensitive": False,
        "match_dropout": 0.3,
        "filter": "leftmost_longest",
        "spans_key": "bioner_gazetteer",
    },
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
    trainer: str,
    learning_rate: float,
    l2: float,
    margin: float,
    word_dropout: float,
    seed: int,
    entity_bias: float,
    short_form_labels: bool,
    acronym_labels: bool,
    person_labels: List[str],
    confidence: bool,
    temperature: float,
    alternatives: int,
    alternatives_threshold: float,
    gazetteer: Dict[str, object],
    scorer: Optional[Callable],
) -> "BioNER":
    """Create a bioner component.

    scheme (str): Tag scheme, "BILOU" or "BIO".
    n_buckets (int): Rows of the hashed feature table; more means fewer collisions
        and a larger model.
    features (List[str]): Feature families to use (see spacy_bioner.templates.FAMILIES).
    trainer (str): "perceptron" (averaged structured perceptron), "crf"
        (averaged stochastic gradient ascent on the conditional log-likelihood,
        by forward-backward over the same constrained trellis) or "hmm" (the
        generative baseline: smoothed counts, see hmm.py; no `history`).
    learning_rate (float): The CRF's step size (the perceptron takes unit steps).
    l2 (float): The CRF's L2 penalty, applied where a feature occurs.
    margin (float): Per-token margin the gold tags must win by in perceptron
        training (cost-augmented updates); 0 is the plain perceptron.
    word_dropout (float): Share of training tokens whose word-identity features
        (word, affixes) are hidden in an update, so context and shape learn too.
    seed (int): Seed of the word and match dropout; same seed and data, same weights.
    entity_bias (float): The recall knob: added to every entity tag's score when
        tagging (not in training); above 0 more entities are found, below 0 fewer.
    short_form_labels (bool): With the `abbreviations` family, a short form
        defined in the doc ("atrial fibrillation ( AF )") that the tagger left
        outside every entity becomes an entity (of one token, or of all the
        tokens of a hyphen-joined short form) of the type of the entity ending
        on its long form (see abbreviations.label_short_forms).
    acronym_labels (bool): The same for an acronym the doc uses without
        defining it ("IDDM"), whose letters are the initials of a run of words
        elsewhere in the doc ("insulin - dependent diabetes mellitus") that
        ends an entity (see abbreviations.undefined_acronyms); with or without
        the `abbreviations` family.
    person_labels (List[str]): The labels that name people. A word that ends
        an entity of one of them of two words or more ("MaliVai Washington")
        takes its label where the same doc uses it alone, as a one-word entity
        of another type or untagged ("Washington won"; see
        surnames.label_surnames). An empty list turns this off.
    confidence (bool): Also give each entity its probability (forward-backward,
        see marginals.pyx) in `doc.spans[name]`, spancat-style `attrs["scores"]`;
        slows tagging (BC5CDR dev, session 12: 1.17M vs 1.87M tokens/s at the
        fitted temperature, 991k at T = 1).
    temperature (float): Divides the scores before they become probabilities;
        fitted on held-out data by `bioner calibrate`.
    alternatives (int): Per doc, up to this many other spans (not the decoded
        entities) whose probability of being an entity is at least
        `alternatives_threshold`, in `doc.spans[name + "_alternatives"]` with
        `attrs["scores"]`: for routing doubtful cases; 0 for none.
    alternatives_threshold (float): The least probability of an alternative.
    gazetteer (Dict[str, object]): How term-list matches are used (terms are
        loaded at initialize or with add_patterns): `mode` "features" (tagger
        features), "fallback" (features, plus matches the tagger left unlabelled
        become entities) or "ents" (matches become fixed entities, the tagger
        fills the rest); `case_sensitive`; `match_dropout`, the share of matches
        hidden from each training update; `filter` for overlapping matches
        ("leftmost_longest" or "longest"); `spans_key`, where all matches go
        (null: nowhere, which saves building a Span for each match).
    scorer (Optional[Callable]): The scoring method, spaCy's NER scorer by default.
    """
    return BioNER(
        nlp.vocab,
        name,
        scheme=scheme,
        n_buckets=n_buckets,
        features=features,
        trainer=trainer,
        learning_rate=learning_rate,
        l2=l2,
        margin=margin,
        word_dropout=word_dropout,
        seed=seed,
        entity_bias=entity_bias,
        short_form_labels=short_form_labels,
        acronym_labels=acronym_labels,
        person_labels=person_labels,
        confidence=confidence,
        temperature=temperature,
        alternatives=alternatives,
        alternatives_threshold=alternatives_threshold,
        gazetteer=gazetteer,
        tokenizer=nlp.tokenizer,
        scorer=scorer,
    )


def span_confidence(span: Span) -> Optional[float]:
    """`span._.bioner_confidence`: the probability a bioner component gave this
    span (same tokens and label) in a scored span group of its doc
    (`doc.spans["bioner"]`, `doc.spans["bioner_alternatives"]`), or None."""
    key = (span.start, span.end, span.label)
    for group in span.doc.spans.values():
        scores = group.attrs.get("scores")
        if scores is None or len(scores) != len(group):
            continue
        for scored, probability in zip(group, scores):
            if (scored.start, scored.end, scored.label) == key:
                return probability
    return None


if not Span.has_extension("bioner_confidence"):
    Span.set_extension("bioner_confidence", getter=span_confidence)


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
        scheme: str = "BILOU",
        n_buckets: int = 2**19,
        features: Sequence[str] = DEFAULT_FAMILIES,
        trainer: str = "perceptron",
        learning_rate: float = 0.1,
        l2: float = 0.0,
        margin: float = 100.0,
        word_dropout: float = 0.1,
        seed: int = 0,
        entity_bias: float = 0.0,
        short_form_labels: bool = True,
        acronym_labels: bool = True,
        person_labels: Sequence[str] = ("PER", "PERSON", "person"),
        confidence: bool = False,
        temperature: float = 1.0,
        alternatives: int = 0,
        alternatives_threshold: float = 0.1,
        gazetteer: Optional[Dict[str, object]] = None,
        tokenizer: Optional[Callable] = None,
        scorer: Optional[Callable] = get_ner_prf,
    ):
        if not isinstance(n_buckets, int) or not 1 <= n_buckets < 2**32:
            raise ValueError(f"n_buckets must be an integer in [1, 2**32), got {n_buckets!r}")
        self.vocab = vocab
        self.name = name
        self.scorer = scorer
        if not margin >= 0:
            raise ValueError(f"margin must be >= 0, got {margin!r}")
        if not 0 <= l2 < 1:
            raise ValueError(f"l2 must be in [0, 1), got {l2!r}")
        if trainer not in TRAINERS or not learning_rate > 0:
            raise ValueError(f"trainer must be one of {TRAINERS} and learning_rate positive, got {trainer!r}, {learning_rate!r}")
        if not 0 <= word_dropout < 1:
            raise ValueError(f"word_dropout must be in [0, 1), got {word_dropout!r}")
        if not temperature > 0:
            raise ValueError(f"temperature must be positive, got {temperature!r}")
        if not (isinstance(alternatives, int) and alternatives >= 0 and 0 < alternatives_threshold <= 1):
            raise ValueError(f"alternatives must be an int >= 0 and alternatives_threshold in (0, 1], got {alternatives!r}, {alternatives_threshold!r}")
        if isinstance(person_labels, str) or not all(isinstance(label, str) and label for label in person_labels):
            raise ValueError(f"person_labels must be a list of labels (non-empty strings), got {person_labels!r}")
        self.cfg = {
            "scheme": scheme,
            "n_buckets": n_buckets,
            "features": list(features),
            "trainer": trainer,
            "learning_rate": float(learning_rate),
            "l2": float(l2),
            "margin": float(margin),
            "word_dropout": float(word_dropout),
            "seed": int(seed),
            "entity_bias": float(entity_bias),
            "short_form_labels": bool(short_form_labels),
            "acronym_labels": bool(acronym_labels),
            "person_labels": list(person_labels),
            "confidence": bool(confidence),
            "temperature": float(temperature),
            "alternatives": alternatives,
            "alternatives_threshold": float(alternatives_threshold),
            "gazetteer": _gazetteer_settings(gazetteer),
            "labels": [],
            "templates_version": TEMPLATES_VERSION,
        }
        self._clusters: Optional[VectorClusters] = None  # fitted at initialize for the vectors family
        self._warned_no_vectors = False
        self._build()
        self._predict_lock = threading.Lock()
        # Terms are split by the pipeline's own tokenizer, so they align with its tokens.
        self.gazetteer = Gazetteer(tokenizer or Tokenizer(vocab), case_sensitive=self.cfg["gazetteer"]["case_sensitive"])
        self.memory = EntityMemory(self.gazetteer.tokenizer)

    def _build(self) -> None:
        cfg = self.cfg
        self.scheme = TagScheme(cfg["scheme"], cfg["labels"])
        templates = compile_templates(cfg["features"])
        self.extractor = FeatureExtractor(templates, cfg["n_buckets"])
        # Prediction scores single-word templates from a per-word cache and hashes only the others.
        self._word_scores = WordScores(single_word_templates(templates), cfg["n_buckets"])
        self._joint_extractor = FeatureExtractor([t for t in templates if len(t[1]) > 1], cfg["n_buckets"])
        attributes = word_attributes if self.word_clusters is None else functools.partial(word_attributes, clusters=self.word_clusters)
        self.lexicon = Lexicon(attributes, N_ATTRIBUTES, mention_column=COLUMNS["lower"])
        self._initials = Initials()
        if cfg["trainer"] == "hmm" and HISTORY_FAMILY in cfg["features"]:
            raise ValueError(
                "The hmm trainer counts the features of the gold tags; 'history' needs a first decoding pass: "
                "drop it from features (e.g. features = [\"word\", \"window\", \"shape\", \"affixes\", \"flags\", \"conjunctions\", \"document\"])."
            )
        model_class = CountedHMM if cfg["trainer"] == "hmm" else AveragedPerceptron
        self.model = model_class(cfg["n_buckets"], self.scheme.n_tags)
        self._identity = numpy.array(identity_templates(cfg["features"]), dtype=numpy.intp)
        self._rng = numpy.random.default_rng(cfg["seed"])
        self._legal = self.scheme.transitions().astype(numpy.uint8)
        # Columns filled from the first pass: history, and that of abbreviations with it.
        self._n_history = 0
        if HISTORY_FAMILY in cfg["features"]:
            self._n_history = len(HISTORY_FEATURES) + len(ABBREVIATION_HISTORY_FEATURES) * (ABBREVIATION_FAMILY in cfg["features"])

    @property
    def word_clusters(self) -> Optional[Callable[[str], Optional[Tuple[int, ...]]]]:
        """A word form's clusters (coarse to fine) for the clusters or vectors family; None without them."""
        if CLUSTERS_FAMILY in self.cfg["features"]:
            return shipped_clusters().word_ids
        if self._clusters is None or VECTORS_FAMILY not in self.cfg["features"]:
            return None
        return functools.partial(self._clusters.word_ids, self.vocab)

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
        gazetteer: Optional[Union[str, Path]] = None,
        gazetteer_label: Optional[str] = None,
    ) -> None:
        """Set the labels (given ones first, then those in the examples), load term lists, reset the weights,
        and with the `memory` family memorize the examples' entities.

        get_examples (Callable[[], Iterable[Example]]): Returns the training examples.
        nlp (Language): The pipeline.
        labels (Optional[Sequence[str]]): Labels to declare, e.g. from `spacy init labels`.
        gazetteer (Optional[Union[str, Path]]): A term file (.jsonl, .tsv, .txt) or
            a directory of them, added to any patterns already there.
        gazetteer_label (Optional[str]): The label of plain-text term lists.
        """
        validate_get_examples(get_examples, "BioNER.initialize")
        if gazetteer:
            self.gazetteer.load(gazetteer, label=gazetteer_label)
        found = list(labels or [])
        references = []  # kept for the memory only: a corpus is read once
        for example in get_examples():
            if MEMORY_FAMILY in self.cfg["features"]:
                references.append(example.reference)
            for ent in example.reference.ents:
                if ent.label_ not in found:
                    found.append(ent.label_)
        if not found:
            raise ValueError(
                "BioNER.initialize found no entity labels: pass labels=[...] or "
                "examples whose reference docs have entities."
            )
        self.cfg["labels"] = []
        self._clusters = self._fit_clusters() if VECTORS_FAMILY in self.cfg["features"] else None
        self._build()
        for label in found:
            self.add_label(label)
        self.memory = EntityMemory(self.gazetteer.tokenizer)
        if MEMORY_FAMILY in self.cfg["features"]:
            self.memory.fill(references)

    def _fit_clusters(self) -> VectorClusters:
        vectors = self.vocab.vectors
        if vectors.shape[0] == 0:
            raise ValueError(
                f"The '{VECTORS_FAMILY}' feature family clusters the pipeline's static vectors, and it has none: "
                "set [initialize] vectors (e.g. to a pipeline with vectors, or one made by `spacy init vectors`), "
                f"or drop '{VECTORS_FAMILY}' from features."
            )
        return VectorClusters.fit(numpy.asarray(vectors.data), seed=self.cfg["seed"])

    # Tokens -> features -> scores -> Viterbi, a batch of docs laid end to end

    def _layout(self, docs: List[Doc], folds: Optional[List[int]] = None) -> "Layout":
        """The docs laid end to end, with what the features read of each token.

        folds: in training, each doc's fold of the entity memory (memory.py).
        """
        offsets, sentence, sent_starts, is_space = batch_layout(docs)
        family = ABBREVIATION_FAMILY in self.cfg["features"]
        label_defined = family and self.cfg["short_form_labels"]
        # When predicting: the short forms whose untagged mentions take their long form's type after decoding.
        label_acronyms = folds is None and self.cfg["acronym_labels"]
        heads = starts = short_form_heads = short_form_starts = None
        rows = self.lexicon.batch_rows(docs)
        if family or label_acronyms:
            # Found among the words: a line break is not part of a long form, nor does it end one.
            words, word_offsets = words_of(is_space, offsets)
            bounds = list(zip(word_offsets.tolist(), word_offsets[1:].tolist()))
            doc_words = [
                Words(doc.vocab.strings, doc.to_array(ORTH)[words[a:b] - offset], sentence[words[a:b]])
                for doc, (a, b), offset in zip(docs, bounds, offsets.tolist())
            ]
            defined = [definitions(w) for w in doc_words]
        if family:
            defined_mentions = [mentions(w, doc_defined) for w, doc_defined in zip(doc_words, defined)]
            heads, starts = _laid_end_to_end_mentions(defined_mentions, words, word_offsets, len(rows))
            if folds is None and label_defined:
                short_form_heads, short_form_starts = heads, starts
        if label_acronyms:
            codes, acronyms = self._initials(self.lexicon, rows[words])
            placed = defined_mentions if label_defined else [None] * len(docs)
            labelled_mentions = [
                mentions(w, undefined_acronyms(w, doc_defined, codes[a:b], acronyms[a:b]), doc_placed)
                for w, doc_defined, doc_placed, (a, b) in zip(doc_words, defined, placed, bounds)
            ]
            short_form_heads, short_form_starts = _laid_end_to_end_mentions(labelled_mentions, words, word_offsets, len(rows))
        memory = None
        if MEMORY_FAMILY in self.cfg["features"]:
            found = self.memory.match(docs, self.labels, folds)
            if folds is not None:
                found = [self._match_dropout(doc_found) for doc_found in found]
            memory = match_codes(_laid_end_to_end(found, offsets.tolist()), len(rows), len(self.labels))
        return Layout(offsets, rows, self.lexicon.mention_ids[rows], sentence, sent_starts, is_space, heads, starts, memory,
                      short_form_heads, short_form_starts)

    def _features(self, layout: "Layout", matches: List[numpy.ndarray], predicting: bool = False) -> numpy.ndarray:
        """Feature ids per token of the batch; in training, history columns (if any) come last and empty (DROPPED).

        predicting: leave out the single-word templates (scored by `_word_scores`)
            and the history columns (scored apart in the second pass).
        """
        rows, offsets = layout.rows, layout.offsets
        extractor = self._joint_extractor if predicting else self.extractor
        columns = [_over_words(layout, lambda view: extractor.extract(view.rows, self.lexicon.table, view.sentence), DROPPED)]
        if DOCUMENT_FAMILY in self.cfg["features"]:
            columns.append(_over_words(layout, lambda view: document_features(
                view.rows, self.lexicon.table, view.mentions, view.sentence, self.cfg["n_buckets"], view.offsets), DROPPED))
        if self.cfg["gazetteer"]["mode"] != "ents" and self.gazetteer.labels:
            batch_matches = _laid_end_to_end(matches, offsets.tolist())
            codes = match_codes(batch_matches, len(rows), len(self.gazetteer.labels))
            columns.append(self._match_ids("gazetteer", self.gazetteer.labels)[numpy.arange(codes.shape[1]), codes])
        if layout.memory_codes is not None:
            columns.append(self._match_ids("memory", self.labels)[numpy.arange(len(self.labels)), layout.memory_codes])
        if layout.abbreviation_heads is not None:
            columns.append(abbreviation_features(rows, self.lexicon.table, layout.abbreviation_heads, self.cfg["n_buckets"]))
        if self._n_history and not predicting:
            columns.append(numpy.full((len(rows), self._n_history), DROPPED, dtype=numpy.uint32))
        return columns[0] if len(columns) == 1 else numpy.ascontiguousarray(numpy.hstack(columns))

    def _history(self, layout: "Layout", first_pass: numpy.ndarray) -> numpy.ndarray:
        """The history features of every token, from a first pass's tags."""
        types = numpy.where(first_pass == 0, 0, (first_pass - 1) // len(self.scheme.moves) + 1).astype(numpy.int64)
        history = history_features(
            layout.rows, self.lexicon.table, layout.mentions, types, len(self.labels) + 1, self.cfg["n_buckets"], layout.offsets
        )
        if layout.abbreviation_heads is None:
            return history
        return numpy.ascontiguousarray(numpy.hstack([history, abbreviation_history(layout.abbreviation_heads, types, self.cfg["n_buckets"])]))

    def _match_ids(self, source: str, labels: Sequence[str]) -> numpy.ndarray:
        """Feature id of (label, position in the match) for matches of a source
        ("gazetteer" or "memory"), a row per label, DROPPED for no match (code 0)."""
        return _match_feature_ids(source, tuple(labels), self.cfg["n_buckets"])

    def _presets(self, doc: Doc, matches: numpy.ndarray) -> List[Span]:
        """Entities the tagger must keep: the doc's own, plus gazetteer matches in "ents" mode."""
        presets = list(doc.ents)
        if self.cfg["gazetteer"]["mode"] == "ents":
            taken = {i for ent in presets for i in range(ent.start, ent.end)}
            for start, end, label, kb in filter_matches(matches, self.cfg["gazetteer"]["filter"]):
                if not taken.intersection(range(start, end)):
                    presets.append(self.gazetteer.span(doc, (start, end, label, kb)))
        return sorted(presets, key=lambda span: span.start)

    def _allowed(self, layout: "Layout", presets: List[List[Span]]) -> numpy.ndarray:
        """Which tag each token of the batch may take (sentence and doc edges, whitespace, presets)."""
        forced, ends = self._presets_forced(layout, presets)
        return self.scheme.allowed(layout.sent_starts, layout.is_space, forced, closed_before=ends)

    def _presets_forced(self, layout: "Layout", presets: List[List[Span]]) -> Tuple[numpy.ndarray, numpy.ndarray]:
        """The tag presets force on each token (-1: free), and where an entity must not continue past one."""
        forced = numpy.full(len(layout.rows), -1, dtype=numpy.int32)
        ends = numpy.zeros(len(layout.rows), dtype=numpy.bool_)
        labels = {label: i for i, label in enumerate(self.labels)}
        for doc_presets, offset in zip(presets, layout.offsets.tolist()):
            for ent in doc_presets:
                start, end = offset + ent.start, offset + ent.end
                # A label we cannot tag keeps its tokens out of our entities; whitespace at an edge is outside too.
                forced[start:end] = 0
                within = words_within((start, end, labels.get(ent.label_, -1)), layout.is_space)
                if within is not None and within[2] >= 0:
                    first, last, label = within
                    forced[first:last] = self.scheme.from_spans([(0, last - first, label)], last - first)
                if end < len(ends):
                    ends[end] = True
        return forced, ends

    def _trellis(self, layout: "Layout", presets: List[List[Span]], allowed: Optional[numpy.ndarray] = None) -> "Trellis":
        """What Viterbi and the marginals run over: every token of the batch, or its words
        alone when it has whitespace tokens, so a line break inside an entity ("New\\nYork")
        splits nothing and no whitespace token's score counts.

        allowed: the tokens' allowed tags, if the caller has them (`_allowed`).
        """
        if not layout.is_space.any():
            return Trellis(None, self._allowed(layout, presets) if allowed is None else allowed, layout.offsets, lambda tags: tags)
        words, word_offsets = words_of(layout.is_space, layout.offsets)
        return Trellis(words, self._words_allowed(layout, presets, words), word_offsets, self._with_spaces(layout.is_space, words))

    def _decode_over(self, trellis: "Trellis", scores: numpy.ndarray, averaged: bool = True) -> numpy.ndarray:
        """Every token's tag, from the best tags of the trellis's rows (`scores`: one row per token)."""
        return trellis.with_spaces(self._decode(trellis.rows(scores), trellis.allowed, trellis.offsets, averaged=averaged))

    def _words_allowed(self, layout: "Layout", presets: List[List[Span]], words: numpy.ndarray) -> numpy.ndarray:
        """Which tag each of the batch's words may take when whitespace tokens are left
        out: a sentence start or a preset's end on whitespace moves to the next word."""
        next_word = numpy.searchsorted(words, numpy.arange(len(layout.rows)))
        forced, ends = self._presets_forced(layout, presets)
        word_starts, word_ends = numpy.zeros(len(words) + 1, dtype=numpy.bool_), numpy.zeros(len(words) + 1, dtype=numpy.bool_)
        word_starts[next_word[layout.sent_starts]] = True
        word_ends[next_word[ends]] = True
        return self.scheme.allowed(word_starts[:-1], numpy.zeros(len(words), dtype=numpy.bool_), forced[words], closed_before=word_ends[:-1])

    def _with_spaces(self, is_space: numpy.ndarray, words: numpy.ndarray) -> Callable[[numpy.ndarray], numpy.ndarray]:
        """The function that gives every token a tag from the words' tags:
        I-x to a whitespace token when the word after it continues an x entity, else O."""
        spaces = numpy.flatnonzero(is_space)
        next_word = numpy.searchsorted(words, spaces)
        inside_tags = numpy.array([0] + [self.scheme.tag_id("I", (tag - 1) // len(self.scheme.moves)) for tag in range(1, self.scheme.n_tags)])
        continuing = self.scheme.continuing()

        def with_spaces(word_tags: numpy.ndarray) -> numpy.ndarray:
            tags = numpy.zeros(len(is_space), dtype=word_tags.dtype)
            tags[words] = word_tags
            following = numpy.append(word_tags, 0)[next_word]  # O after the last word
            inside = continuing[following]
            tags[spaces[inside]] = inside_tags[following[inside]]
            return tags

        return with_spaces

    def _decode(self, scores, allowed, offsets, averaged: bool) -> numpy.ndarray:
        """The best tags of each doc of the batch, docs laid end to end."""
        return viterbi(scores, self.model.transitions(averaged=averaged), allowed, self._legal, offsets)

    def predict(self, docs: Iterable[Doc]) -> List["Prediction"]:
        """Gazetteer matches, preset entities and tag ids (averaged weights) for each doc.

        Docs are tagged together, laid end to end, in groups of about
        TOKENS_PER_PASS tokens: per-doc overhead is paid once per group, and
        the group's arrays stay a few megabytes whatever the batch size.
        One call at a time: the word caches (lexicon, word scores) fill as
        new words arrive, and a thread must not read a row another one is writing.
        """
        if self._clusters is not None:
            self._check_vectors()
        with self._predict_lock:
            return [prediction for group in _groups(docs) for prediction in self._predict_group(group)]

    def _check_vectors(self) -> None:
        """The vectors family needs the pipeline's vectors to be the ones its clusters were fitted on."""
        rows, width = self.vocab.vectors.shape
        if rows == 0:
            if not self._warned_no_vectors:
                warnings.warn(f"{self.name}: the pipeline has no static vectors, which the '{VECTORS_FAMILY}' features read: "
                              "every word falls in no cluster. Load the model with the vectors it was trained with.")
                self._warned_no_vectors = True
        elif width != self._clusters.centroids.shape[1]:
            raise ValueError(
                f"{self.name}: the pipeline's vectors have {width} dimensions, but the '{VECTORS_FAMILY}' clusters were fitted "
                f"on {self._clusters.centroids.shape[1]}: load the model with the vectors it was trained with."
            )

    def _predict_group(self, docs: List[Doc]) -> List["Prediction"]:
        decoded = self._decoded(docs)
        offsets = decoded.layout.offsets.tolist()
        confidences = self._entity_probabilities(decoded) if self.cfg["confidence"] else [None] * len(docs)
        alternatives = self._alternatives(decoded) if self.cfg["alternatives"] else [None] * len(docs)
        return [
            Prediction(decoded.tags[offsets[i] : offsets[i + 1]], decoded.matches[i], decoded.presets[i], confidences[i], alternatives[i])
            for i in range(len(docs))
        ]

    def _alternatives(self, decoded: "Decoded") -> List[List[Tuple[int, int, int, float]]]:
        """Each doc's most probable spans other than its decoded entities (start, end, label, probability)."""
        label_tags = numpy.array(
            [[self.scheme.tag_id(move, label) if move in self.scheme.moves else -1 for move in "BILU"] for label in range(len(self.labels))],
            dtype=numpy.int32,
        ).reshape(-1, 4)
        trellis = decoded.trellis
        rows, probabilities = span_probabilities(
            decoded.scores, self.model.transitions(averaged=True), trellis.allowed, self._legal, trellis.offsets,
            label_tags, MAX_ALTERNATIVE_LENGTH, self.cfg["alternatives_threshold"], self.cfg["temperature"],
        )
        rows[:, 1], rows[:, 2] = trellis.token_of(rows[:, 1]), trellis.token_of(rows[:, 2] - 1) + 1
        offsets = decoded.layout.offsets.tolist()
        found = [[] for _ in range(len(offsets) - 1)]
        for (doc, start, end, label), probability in zip(rows.tolist(), probabilities.tolist()):
            found[doc].append((start - offsets[doc], end - offsets[doc], label, probability))
        decoded_spans = [set(self.scheme.to_spans(decoded.tags[offsets[i] : offsets[i + 1]])) for i in range(len(found))]
        return [
            sorted((a for a in doc_found if a[:3] not in decoded_spans[i]), key=lambda a: -a[3])[: self.cfg["alternatives"]]
            for i, doc_found in enumerate(found)
        ]

    def _decoded(self, docs: List[Doc]) -> "Decoded":
        """Tags of a group of docs, with the scores and masks that chose them."""
        matches = self.gazetteer.match_batch(docs)
        presets = [self._presets(doc, doc_matches) for doc, doc_matches in zip(docs, matches)]
        layout = self._layout(docs)
        features, allowed = self._features(layout, matches, predicting=True), self._allowed(layout, presets)
        emission, _ = self.model.averages()
        scores = _over_words(layout, lambda view: self._word_scores.scores(view.rows, self.lexicon.table, view.sentence, emission, self.lexicon.generation), 0.0)
        scores += self.model.scores(features, averaged=True)
        if self.cfg["entity_bias"]:  # the recall knob
            scores[:, 1:] += self.cfg["entity_bias"]
        trellis = self._trellis(layout, presets, allowed)
        tags = first_pass = self._decode_over(trellis, scores)
        if HISTORY_FAMILY in self.cfg["features"]:
            # The first pass saw no history features, so the second pass's
            # scores are the first's plus the weights of those alone.
            scores += self.model.scores(self._history(layout, first_pass), averaged=True)
            tags = self._decode_over(trellis, scores)
        best_path = short_forms_path = tags
        if layout.short_form_heads is not None:
            tags = short_forms_path = label_short_forms(tags, layout.short_form_heads, layout.short_form_starts, self.scheme, allowed)
        person_ids = [i for i, label in enumerate(self.labels) if label in self.cfg["person_labels"]]
        tags = label_surnames(docs, tags, layout.offsets, layout.rows, self.scheme, person_ids, allowed)
        return Decoded(matches, presets, layout, trellis, trellis.rows(scores), allowed, tags, first_pass, best_path, short_forms_path)

    def _entity_probabilities(self, decoded: "Decoded", temperature: Optional[float] = None) -> List[List[Tuple[int, int, int, float]]]:
        """Each doc's decoded entities (start, end, label, probability), at the given or the model's temperature."""
        offsets = decoded.layout.offsets.tolist()
        spans = [self.scheme.to_spans(decoded.tags[offsets[i] : offsets[i + 1]]) for i in range(len(offsets) - 1)]
        continuing = [self.scheme.tag_id("I", label) if self.scheme.name == "BIO" else -1 for label in range(len(self.labels))]
        rows = numpy.array(
            [(i, offsets[i] + start, offsets[i] + end, continuing[label]) for i, doc_spans in enumerate(spans) for start, end, label in doc_spans],
            dtype=numpy.int64,
        ).reshape(-1, 4)
        trellis = decoded.trellis
        rows[:, 1], rows[:, 2] = trellis.row_of(rows[:, 1]), trellis.row_of(rows[:, 2] - 1) + 1  # entities start and end on words
        probabilities = entity_probabilities(
            decoded.scores, self.model.transitions(averaged=True), trellis.allowed, self._legal, trellis.offsets,
            trellis.rows(decoded.tags), rows, temperature or self.cfg["temperature"],
        ).tolist()
        found, k = [], 0
        for doc_spans in spans:
            found.append([(start, end, label, probabilities[k + j]) for j, (start, end, label) in enumerate(doc_spans)])
            k += len(doc_spans)
        return found

    def set_annotations(self, docs: Iterable[Doc], predictions: List["Prediction"]) -> None:
        """Write entities to `doc.ents` (presets kept as they were) and all matches to `doc.spans`.

        Entities go in as token arrays (ENT_IOB, ENT_TYPE, ENT_KB_ID) made from
        the tags, for all docs at once: a small part of the cost of building
        Spans for `set_ents`, or of `Doc.from_array` per doc.
        """
        settings = self.cfg["gazetteer"]
        docs, predictions = list(docs), list(predictions)
        all_values = self._entity_values(numpy.concatenate([numpy.zeros(0, dtype=numpy.int32)] + [p.tags for p in predictions]))
        offsets = numpy.cumsum([0] + [len(doc) for doc in docs]).tolist()
        self._link(all_values, [p.matches for p in predictions], offsets)
        for i, (doc, (_, matches, presets, confidences, alternatives)) in enumerate(zip(docs, predictions)):
            values = all_values[offsets[i] : offsets[i + 1]]  # a view: the edits below land in all_values
            for ent in presets:  # presets with our labels were forced in the trellis; the others were kept O
                _write_entity(values, ent.start, ent.end, ent.label, ent.kb_id)
            if settings["mode"] == "fallback":
                for start, end, label, kb in filter_matches(matches, settings["filter"]):
                    if (values[start:end, 0] == _OUTSIDE).all():
                        span = self.gazetteer.span(doc, (start, end, label, kb))
                        _write_entity(values, start, end, span.label, span.kb_id)
            for key, scored in ((self.name, confidences), (f"{self.name}_alternatives", alternatives)):
                if scored is not None:
                    doc.spans[key] = SpanGroup(
                        doc, name=key, spans=[Span(doc, start, end, label=self.labels[label]) for start, end, label, _ in scored],
                        attrs={"scores": [probability for *_, probability in scored]},
                    )
            if self.gazetteer.labels and settings["spans_key"]:
                doc.spans[settings["spans_key"]] = SpanGroup(doc, name=settings["spans_key"], spans=self.gazetteer.spans(doc, matches))
        write_entities(docs, all_values)

    def _entity_values(self, tags: numpy.ndarray) -> numpy.ndarray:
        """(ENT_IOB, ENT_TYPE, ENT_KB_ID) of each token: uint64 (n, 3), from its tag."""
        labels = tuple(self.labels)
        if getattr(self, "_tag_values", (None,))[0] != labels:
            type_ids = [0] + [self.vocab.strings.add(label) for label in labels]
            n_moves = len(self.scheme.moves)
            table = numpy.zeros((1 + len(labels) * n_moves, 3), dtype=numpy.uint64)
            table[0, 0] = _OUTSIDE
            for tag in range(1, len(table)):
                move = self.scheme.moves[(tag - 1) % n_moves]
                table[tag, :2] = (_BEGIN if move in "BU" else _INSIDE, type_ids[(tag - 1) // n_moves + 1])
            self._tag_values = (labels, table)
        return self._tag_values[1][tags]

    def _link(self, values: numpy.ndarray, matches: List[numpy.ndarray], offsets: List[int]) -> None:
        """Give each entity that is exactly a match of its label the KB id of the first such match.

        values: the batch's entity values, docs laid end to end at offsets; matches: each doc's match rows.
        """
        rows = _laid_end_to_end(matches, offsets)
        if not len(rows):
            return
        type_ids = numpy.array(
            [self.vocab.strings.add(label) if label in self.labels else 0 for label in self.gazetteer.labels], dtype=numpy.uint64
        )
        starts, ends, types = rows[:, 0], rows[:, 1], type_ids[rows[:, 2]]
        iob = values[:, 0]
        # An entity that begins at a token ends at the next token that does not continue it
        # (a doc's first token never continues one, so entities end at doc ends too).
        boundaries = numpy.append(numpy.flatnonzero(iob != _INSIDE), len(values))
        entity_ends = boundaries[numpy.searchsorted(boundaries, starts, side="right")]
        exact = numpy.flatnonzero((types != 0) & (iob[starts] == _BEGIN) & (values[starts, 1] == types) & (entity_ends == ends))
        if not len(exact):
            return
        _, first = numpy.unique(rows[exact, :2], axis=0, return_index=True)  # matches are sorted: the first is the first row
        chosen = rows[exact[first]]
        lengths = chosen[:, 1] - chosen[:, 0]
        positions = numpy.repeat(chosen[:, 0] - numpy.cumsum(lengths) + lengths, lengths) + numpy.arange(lengths.sum())
        kb_hashes = numpy.array([self.vocab.strings.add(self.gazetteer.kb_ids[kb]) for kb in chosen[:, 3].tolist()], dtype=numpy.uint64)
        values[positions, 2] = numpy.repeat(kb_hashes, lengths)

    # Training

    def update(
        self,
        examples: Iterable[Example],
        *,
        drop: float = 0.0,
        sgd=None,
        losses: Optional[Dict[str, float]] = None,
    ) -> Dict[str, float]:
        """One training step per sentence of each example; the loss is the count of mistagged tokens.

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
            known = gold_tags(example, self.scheme)
            if (known < 0).all():
                continue
            matches = self._match_dropout(self.gazetteer.match(doc))
            layout = self._layout([doc], folds=[fold(example.reference)])
            presets = [self._presets(doc, matches)]
            features = self._features(layout, [matches])
            token_runs = runs = sentence_runs(example)
            # Trained over the rows it is decoded over: the words alone if there are whitespace tokens.
            trellis = self._trellis(layout, presets)
            features, known = trellis.rows(features), trellis.rows(known)
            if trellis.positions is not None:
                run_bounds = trellis.row_of(numpy.array([start for start, _ in runs] + [len(doc)])).tolist()
                runs = [(start, end) for start, end in zip(run_bounds, run_bounds[1:]) if start < end]
            features = self._dropout(features)
            allowed = trellis.allowed
            # Half the updates see the first pass's history, half none, as the first pass itself does.
            if HISTORY_FAMILY in self.cfg["features"] and self._rng.random() < 0.5:
                first_pass = trellis.with_spaces(self._decode(self.model.scores(features, averaged=False), allowed, trellis.offsets, averaged=False))
                features[:, -self._n_history:] = trellis.rows(self._history(layout, first_pass))
            gold = known
            if (known < 0).any():
                free = numpy.zeros(len(known), dtype=numpy.bool_)
                scores = self.model.scores(features, averaged=False)
                gold = self._decode(scores, self.scheme.allowed(free, free, known), trellis.offsets, averaged=False)
            if self.cfg["trainer"] == "hmm":
                self.model.count(features, gold)
                continue
            # One step per sentence, each scored with the weights the previous one
            # left: a step per multi-sentence doc learns less (BC5CDR dev, local
            # features, 10-sentence docs: 81.85 vs 82.56 this way, 82.87 with one
            # doc per sentence). Each sentence is a sequence of its own.
            if len(token_runs) > 1:
                starts = layout.sent_starts.copy()
                starts[[start for start, _ in token_runs]] = True
                allowed = self._trellis(layout._replace(sent_starts=starts), presets).allowed
            for start, end in runs:
                losses[self.name] += self._step(features[start:end], allowed[start:end], gold[start:end], known[start:end])
        return losses

    def _step(self, features, allowed, gold: numpy.ndarray, known: numpy.ndarray) -> float:
        """One training step on one sentence; RETURNS its loss."""
        scores = self.model.scores(features, averaged=False)
        offsets = numpy.array([0, len(gold)], dtype=numpy.int64)
        if self.cfg["trainer"] == "crf":
            return self._crf_step(features, scores, allowed, offsets, gold)
        scores = with_cost(scores, known, self.cfg["margin"])
        guess = self._decode(scores, allowed, offsets, averaged=False)
        self.model.update(features, gold, guess)
        return float((gold != guess).sum())

    def _crf_step(self, features, scores, allowed, offsets: numpy.ndarray, gold: numpy.ndarray) -> float:
        """One stochastic gradient step on the conditional log-likelihood of the gold
        tags of one sentence (observed minus expected counts, by forward-backward). RETURNS the loss, -log P(gold)."""
        transitions = self.model.transitions(averaged=False)
        marginals, expected, log_z = expected_counts(scores, transitions, allowed, self._legal, offsets)
        token_gradient = -marginals
        token_gradient[numpy.arange(len(gold)), gold] += 1.0
        transition_gradient = -expected
        previous = numpy.concatenate([[len(self.scheme.tags)], gold[:-1]])
        numpy.add.at(transition_gradient, (previous, gold), 1.0)
        self.model.update_dense(features, token_gradient, transition_gradient, self.cfg["learning_rate"], self.cfg["l2"])
        return log_z - float(scores[numpy.arange(len(gold)), gold].sum() + transitions[previous, gold].sum())

    def _match_dropout(self, matches: numpy.ndarray) -> numpy.ndarray:
        rate = self.cfg["gazetteer"]["match_dropout"]
        if rate <= 0 or len(matches) == 0:
            return matches
        return matches[self._rng.random(len(matches)) >= rate]

    def _dropout(self, features: numpy.ndarray) -> numpy.ndarray:
        if self.cfg["word_dropout"] > 0 and len(self._identity):
            hidden = numpy.nonzero(self._rng.random(len(features)) < self.cfg["word_dropout"])[0]
            features[numpy.ix_(hidden, self._identity)] = DROPPED
        return features

    # Serialization (see PerceptronPipe), with the gazetteer beside the weights.

    def _arrays(self) -> Dict[str, numpy.ndarray]:
        emission, transition = self.model.averages()
        clusters = self._clusters.to_arrays() if self._clusters is not None else {}
        return {"emission": emission, "transition": transition, **clusters}

    def to_bytes(self, *, exclude=tuple()) -> bytes:
        memory = {"memory": self.memory.to_bytes()} if MEMORY_FAMILY in self.cfg["features"] else {}
        return serialize.pack(self.cfg, self._arrays(), gazetteer=self.gazetteer.to_bytes(), **memory)

    def from_bytes(self, bytes_data: bytes, *, exclude=tuple()) -> "BioNER":
        cfg, arrays, (gazetteer, memory) = serialize.unpack(bytes_data, "bytes", parts=("gazetteer",), optional=("memory",))
        if not _has_memory(cfg):
            memory = None
        elif memory is None:
            raise serialize.ModelFileError("Corrupted component data in bytes: the memory family's 'memory' part is missing.")
        return self._load(cfg, arrays, gazetteer, where="bytes", memory=memory)

    def to_disk(self, path, *, exclude=tuple()) -> None:
        path = Path(path)
        serialize.write_model(path, self.cfg, self._arrays())
        (path / "gazetteer").write_bytes(self.gazetteer.to_bytes())
        if MEMORY_FAMILY in self.cfg["features"]:
            (path / "memory").write_bytes(self.memory.to_bytes())

    def from_disk(self, path, *, exclude=tuple()) -> "BioNER":
        path = Path(path)
        cfg, arrays = serialize.read_model(path)
        gazetteer = serialize.read_bytes(path / "gazetteer")
        memory = serialize.read_bytes(path / "memory") if _has_memory(cfg) else None
        return self._load(cfg, arrays, gazetteer, where=str(path / "weights.npz"), gazetteer_where=str(path / "gazetteer"),
                          memory=memory, memory_where=str(path / "memory"))

    def _load(self, cfg, arrays, gazetteer: bytes, where: str, gazetteer_where: str = "bytes",
              memory: Optional[bytes] = None, memory_where: str = "bytes") -> "BioNER":
        for key in ("trainer", "learning_rate", "l2", "entity_bias", "confidence", "temperature", "alternatives", "alternatives_threshold"):  # newer: defaults for older models
            if isinstance(cfg, dict):
                cfg.setdefault(key, DEFAULT_BIONER_CONFIG[key])
        if isinstance(cfg, dict):  # models saved before short_form_labels, acronym_labels or person_labels keep their output
            cfg.setdefault("short_form_labels", False)
            cfg.setdefault("acronym_labels", False)
            cfg.setdefault("person_labels", [])
        serialize.check_cfg(cfg, where)
        n_tags = len(TagScheme(cfg["scheme"], cfg["labels"]).tags)
        serialize.check_array(arrays, "emission", (cfg["n_buckets"], n_tags), where)
        serialize.check_array(arrays, "transition", (n_tags + 1, n_tags), where)
        cfg["gazetteer"] = _gazetteer_settings(cfg["gazetteer"])
        self._clusters = VectorClusters.from_arrays(arrays, where) if VECTORS_FAMILY in cfg["features"] else None
        self.cfg = cfg
        self._build()
        self.model.load_averages(arrays["emission"], arrays["transition"])
        self.gazetteer.from_bytes(gazetteer, where=gazetteer_where)
        self.memory = EntityMemory(self.gazetteer.tokenizer)
        if memory is not None:
            self.memory.from_bytes(memory, where=memory_where)
        return self

    def __reduce__(self):
        return (_unpickle_bioner, (self.vocab, self.name, self.gazetteer.tokenizer, self.scorer, self.to_bytes()))


def _over_words(layout: "Layout", features: Callable[["Layout"], numpy.ndarray], fill) -> numpy.ndarray:
    """Context features (or the scores of window templates) of each token, a word's read as if
    the doc had no whitespace tokens: a line break in raw text then changes no word's window.
    Whitespace tokens get `fill`: decoding, training and probabilities read the words alone."""
    if not layout.is_space.any():
        return features(layout)
    words, word_offsets = words_of(layout.is_space, layout.offsets)
    view = layout._replace(offsets=word_offsets, rows=layout.rows[words],
                           mentions=layout.mentions[words], sentence=layout.sentence[words])
    of_words = features(view)
    out = numpy.full((len(layout.rows),) + of_words.shape[1:], fill, dtype=of_words.dtype)
    out[words] = of_words
    return out


class Layout(NamedTuple):
    """A batch of docs laid end to end (see features.batch_layout)."""

    offsets: numpy.ndarray  # int64, n_docs + 1
    rows: numpy.ndarray  # int32 lexicon row of each token
    mentions: numpy.ndarray  # int32 id of each token's lowercase form (Lexicon.mention_ids)
    sentence: numpy.ndarray  # int32 sentence number of each token
    sent_starts: numpy.ndarray  # bool
    is_space: numpy.ndarray  # bool
    abbreviation_heads: Optional[numpy.ndarray]  # int64 long-form head of each token of a defined short form's mention, else -1
    abbreviation_starts: Optional[numpy.ndarray]  # bool: the first token of each such mention
    memory_codes: Optional[numpy.ndarray] = None  # each token's place in an entity memory match per label (match_codes)
    # as abbreviation_heads/starts, for the short forms labelled after decoding (short_form_labels, acronym_labels)
    short_form_heads: Optional[numpy.ndarray] = None
    short_form_starts: Optional[numpy.ndarray] = None


class Trellis(NamedTuple):
    """The rows decoding runs over (BioNER._trellis): every token, or the words alone."""

    positions: Optional[numpy.ndarray]  # int64 token position of each row; None: a row per token
    allowed: numpy.ndarray  # each row's allowed tags
    offsets: numpy.ndarray  # int64 where each doc's rows begin
    with_spaces: Callable[[numpy.ndarray], numpy.ndarray]  # the rows' tags -> every token's

    def rows(self, per_token: numpy.ndarray) -> numpy.ndarray:
        """An array with a row per token, cut to the trellis's rows."""
        return per_token if self.positions is None else numpy.ascontiguousarray(per_token[self.positions])

    def row_of(self, tokens: numpy.ndarray) -> numpy.ndarray:
        """The row of each of these token positions (words, not whitespace, when rows are words)."""
        return tokens if self.positions is None else numpy.searchsorted(self.positions, tokens)

    def token_of(self, rows: numpy.ndarray) -> numpy.ndarray:
        """The token position of each of these rows."""
        return rows if self.positions is None else self.positions[rows]


class Prediction(NamedTuple):
    """What `predict` hands to `set_annotations` for one doc."""

    tags: numpy.ndarray
    matches: numpy.ndarray  # rows of (start, end, gazetteer label, kb id)
    presets: List[Span]
    confidences: Optional[List[Tuple[int, int, int, float]]]  # (start, end, label, probability) per decoded entity
    alternatives: Optional[List[Tuple[int, int, int, float]]]  # the same, for the most probable other spans


class Decoded(NamedTuple):
    """A group of docs as decoded: what produced the tags, for their probabilities."""

    matches: List[numpy.ndarray]
    presets: List[List[Span]]
    layout: Layout
    trellis: "Trellis"
    scores: numpy.ndarray  # the emission scores the last Viterbi pass read, a row per row of the trellis
    allowed: numpy.ndarray  # each token's allowed tags
    tags: numpy.ndarray
    first_pass: numpy.ndarray  # the tags the history features were made from (= tags without history)
    best_path: numpy.ndarray  # the last Viterbi pass's tags: `tags` before short_form_labels
    short_forms_path: numpy.ndarray  # `tags` before person_labels


def _has_memory(cfg) -> bool:
    """Whether a saved config (not yet checked) has the entity memory, so its file should be there."""
    return isinstance(cfg, dict) and isinstance(cfg.get("features"), list) and MEMORY_FAMILY in cfg["features"]


@functools.lru_cache(maxsize=32)
def _match_feature_ids(source: str, labels: Tuple[str, ...], n_buckets: int) -> numpy.ndarray:
    table = numpy.full((len(labels), 5), DROPPED, dtype=numpy.uint32)
    for i, label in enumerate(labels):
        for code, move in enumerate("BILU", 1):
            table[i, code] = get_string_id(f"{source}={label}:{move}") % n_buckets
    return table


def _groups(docs: Iterable[Doc]) -> Iterable[List[Doc]]:
    """Docs in groups of about TOKENS_PER_PASS tokens, in order."""
    group, n_tokens = [], 0
    for doc in docs:
        group.append(doc)
        n_tokens += len(doc)
        if n_tokens >= TOKENS_PER_PASS:
            yield group
            group, n_tokens = [], 0
    if group:
        yield group


_INSIDE, _OUTSIDE, _BEGIN = 1, 2, 3  # spaCy's ENT_IOB codes


def _laid_end_to_end_mentions(found: List[Tuple[numpy.ndarray, numpy.ndarray]], words: numpy.ndarray, word_offsets: numpy.ndarray,
                              n_tokens: int) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """Each doc's abbreviations.mentions (among its words) in batch token positions.

    words, word_offsets: the batch's words and where each doc's begin among them (features.words_of).
    """
    word_heads = numpy.concatenate([numpy.zeros(0, dtype=numpy.int64)] + [
        numpy.where(doc_heads >= 0, doc_heads + offset, -1) for (doc_heads, _), offset in zip(found, word_offsets.tolist())
    ])
    heads, starts = numpy.full(n_tokens, -1, dtype=numpy.int64), numpy.zeros(n_tokens, dtype=numpy.bool_)
    heads[words] = numpy.where(word_heads >= 0, words[numpy.maximum(word_heads, 0)], -1)
    starts[words] = numpy.concatenate([numpy.zeros(0, dtype=numpy.bool_)] + [doc_starts for _, doc_starts in found])
    return heads, starts


def _laid_end_to_end(matches: List[numpy.ndarray], offsets: List[int]) -> numpy.ndarray:
    """Each doc's match rows in batch token positions, docs laid end to end at offsets."""
    return numpy.concatenate([numpy.zeros((0, 4), dtype=numpy.int64)] + [m + (o, o, 0, 0) for m, o in zip(matches, offsets)])


def _write_entity(values: numpy.ndarray, start: int, end: int, label: int, kb_id: int) -> None:
    values[start:end] = (_INSIDE, label, kb_id)
    values[start, 0] = _BEGIN


def _gazetteer_settings(settings: Optional[Dict[str, object]]) -> Dict[str, object]:
    merged = dict(DEFAULT_BIONER_CONFIG["gazetteer"])
    unknown = set(settings or {}) - set(merged)
    if unknown:
        raise ValueError(f"Unknown gazetteer settings {sorted(unknown)}: use {sorted(merged)}.")
    merged.update(settings or {})
    if merged["mode"] not in GAZETTEER_MODES:
        raise ValueError(f"Unknown gazetteer mode {merged['mode']!r}: use one of {GAZETTEER_MODES}.")
    if merged["filter"] not in FILTERS:
        raise ValueError(f"Unknown gazetteer filter {merged['filter']!r}: use one of {FILTERS}.")
    if not 0 <= merged["match_dropout"] < 1:
        raise ValueError(f"match_dropout must be in [0, 1), got {merged['match_dropout']!r}")
    if merged["spans_key"] is not None and not (isinstance(merged["spans_key"], str) and merged["spans_key"]):
        raise ValueError(f"spans_key must be a non-empty string, or null to keep no matches, got {merged['spans_key']!r}")
    merged["case_sensitive"] = bool(merged["case_sensitive"])
    merged["match_dropout"] = float(merged["match_dropout"])
    return merged


def _unpickle_bioner(vocab, name, tokenizer, scorer, data):
    # Used by nlp.pipe(n_process=...) to ship the component to worker processes.
    component = BioNER(vocab, name, tokenizer=tokenizer, scorer=scorer)
    return component.from_bytes(data)
