"""Features: each token's hashed feature ids, from the layout's lexicon rows, the doc-level
families, term-list and memory matches, short-form heads and (second pass) history.

A `Featurizer` holds what the feature families compile to; `features` and `history`
read a `Layout` (batch.py) and give a uint32 matrix, a row per token.
"""

import functools
import warnings
from collections.abc import Sequence
from typing import Callable, Optional

import numpy
from spacy.strings import get_string_id

from ..core.features import FeatureExtractor, Lexicon
from ..core.perceptron import DROPPED
from ..core.templates import (
    ABBREVIATION_FAMILY,
    CLUSTERS_FAMILY,
    COLUMNS,
    DOCUMENT_FAMILY,
    HISTORY_FAMILY,
    N_ATTRIBUTES,
    VECTORS_FAMILY,
    compile_templates,
    identity_templates,
    word_attributes,
    word_case_of,
)
from ..core.vector_clusters import VectorClusters
from ..core.weight_rows import WeightRows
from ..core.word_clusters import shipped_clusters
from ..core.word_scores import WordScores, reads_one_word, single_word_templates
from ..gazetteer.token_codes import match_codes
from .abbreviations import Initials
from .batch import Layout, any_set, laid_end_to_end, over_words
from .document import (
    ABBREVIATION_HISTORY_FEATURES,
    HISTORY_FEATURES,
    abbreviation_features,
    abbreviation_history,
    document_features,
    history_features,
)


class Featurizer:
    """The compiled feature families of one component: hashers, the word lexicon, the word-score cache."""

    def __init__(self, features: Sequence[str], n_buckets: int, word_clusters: Optional[Callable] = None):
        templates = compile_templates(features)
        self.families = list(features)
        self.n_buckets = n_buckets
        self.extractor = FeatureExtractor(templates, n_buckets)
        # Prediction scores single-word templates from a per-word cache and hashes only the others.
        self.word_scores = WordScores(single_word_templates(templates), n_buckets)
        self.joint_extractor = FeatureExtractor([t for t in templates if not reads_one_word(t[1])], n_buckets)
        attributes = functools.partial(word_attributes, clusters=word_clusters, word_case=word_case_of(features))
        self.lexicon = Lexicon(attributes, N_ATTRIBUTES, mention_column=COLUMNS["lower"])
        self.initials = Initials()
        self.identity = numpy.array(identity_templates(features), dtype=numpy.intp)
        # Columns filled from the first pass: history, and that of abbreviations with it.
        self.n_history = 0
        if HISTORY_FAMILY in features:
            self.n_history = len(HISTORY_FEATURES) + len(ABBREVIATION_HISTORY_FEATURES) * (
                ABBREVIATION_FAMILY in features
            )

    def scores(self, layout: Layout, emission: WeightRows) -> numpy.ndarray:
        """The summed weights of every token's single-word templates, from the word cache."""
        return over_words(
            layout,
            lambda view: self.word_scores.scores(
                view.rows, self.lexicon.table, view.sentence, emission, self.lexicon.generation
            ),
            0.0,
        )


def features(
    ner, layout: Layout, matches: list[numpy.ndarray], predicting: bool = False, packed: bool = True
) -> numpy.ndarray:
    """Feature ids per token of the batch; in training, history columns (if any) come last and empty (DROPPED).

    predicting: leave out the single-word templates (scored by `Featurizer.scores`)
        and the history columns (scored apart in the second pass).
    packed: the match columns (a column per label) with the matches of each token
        first and the columns no token matches left out; False keeps a column per
        label, in label order (for explanations, which name each column).
    """
    featurizer = ner.featurizer
    rows, n_buckets, lexicon = layout.rows, featurizer.n_buckets, featurizer.lexicon
    extractor = featurizer.joint_extractor if predicting else featurizer.extractor
    columns = [over_words(layout, functools.partial(_window_features, extractor, lexicon.table), DROPPED)]
    if DOCUMENT_FAMILY in featurizer.families:
        columns.append(over_words(layout, functools.partial(_document_features, lexicon.table, n_buckets), DROPPED))
    for codes, ids in match_sources(ner, layout, matches):
        columns.append(match_columns(ids, codes, packed))
    if reads_short_forms(layout, predicting):
        columns.append(abbreviation_features(rows, lexicon.table, layout.abbreviation_heads, n_buckets))
    if featurizer.n_history and not predicting:
        columns.append(numpy.full((len(rows), featurizer.n_history), DROPPED, dtype=numpy.uint32))
    return columns[0] if len(columns) == 1 else numpy.concatenate(columns, axis=1)


def match_sources(ner, layout: Layout, matches: list[numpy.ndarray]) -> list[tuple[numpy.ndarray, numpy.ndarray]]:
    """What the match columns are made of, in column order: the term lists' matches (unless in "ents"
    mode), then the entity memory's; for each, its codes (match_codes: n_tokens x labels) and
    their feature ids (match_ids)."""
    n_buckets = ner.featurizer.n_buckets
    sources = []
    if reads_term_lists(ner):
        codes = match_codes(
            laid_end_to_end(matches, layout.offsets.tolist()), len(layout.rows), len(ner.gazetteer.labels)
        )
        sources.append((codes, match_ids("gazetteer", ner.gazetteer.labels, n_buckets)))
    if layout.memory_codes is not None:
        sources.append((layout.memory_codes, match_ids("memory", ner.labels, n_buckets)))
    return sources


def reads_term_lists(ner) -> bool:
    """Whether the features have a column per term-list label: with term lists, except in "ents" mode."""
    return ner.settings.gazetteer.mode != "ents" and bool(ner.gazetteer.labels)


def reads_short_forms(layout: Layout, predicting: bool) -> bool:
    """Whether the short forms' columns are made: with the abbreviations family, except when predicting
    a batch with no short form, where every id in them is DROPPED, which scores nothing."""
    starts = layout.abbreviation_starts
    return layout.abbreviation_heads is not None and starts is not None and not (predicting and not any_set(starts))


def _window_features(extractor: FeatureExtractor, table: numpy.ndarray, view: Layout) -> numpy.ndarray:
    return extractor.extract(view.rows, table, view.sentence)


def _document_features(table: numpy.ndarray, n_buckets: int, view: Layout) -> numpy.ndarray:
    return document_features(view.rows, table, view.mentions, view.sentence, n_buckets, view.offsets)


def history(ner, layout: Layout, first_pass: numpy.ndarray, predicting: bool = False) -> numpy.ndarray:
    """The history features of every token, from a first pass's tags (predicting: as `features`
    leaves out the short forms' columns, so does this)."""
    n_buckets, lexicon = ner.featurizer.n_buckets, ner.featurizer.lexicon
    types = ner.scheme.entity_types()[first_pass]
    found = history_features(
        layout.rows, lexicon.table, layout.mentions, types, len(ner.labels) + 1, n_buckets, layout.offsets
    )
    if not reads_short_forms(layout, predicting):
        return found
    return numpy.concatenate([found, abbreviation_history(layout.abbreviation_heads, types, n_buckets)], axis=1)


@functools.lru_cache(maxsize=32)
def _match_feature_ids(source: str, labels: tuple[str, ...], n_buckets: int) -> numpy.ndarray:
    table = numpy.full((len(labels), 5), DROPPED, dtype=numpy.uint32)
    for i, label in enumerate(labels):
        for code, move in enumerate("BILU", 1):
            table[i, code] = get_string_id(f"{source}={label}:{move}") % n_buckets
    return table


PACKED_ABOVE = 16


def match_columns(ids: numpy.ndarray, codes: numpy.ndarray, packed: bool) -> numpy.ndarray:
    """The feature ids of match codes (n_tokens, n_labels), a column per label; packed, each
    token's matches in label order and then DROPPED, as wide as the most matches of a token.
    Scores add the same weights in the same order either way; packed, with many labels,
    scoring and training skip hundreds of empty columns per token. Up to PACKED_ABOVE
    labels, packing costs a call more than it saves, and the columns stay a label each."""
    if not packed or codes.shape[1] <= PACKED_ABOVE:
        return ids[numpy.arange(codes.shape[1]), codes]
    tokens, labels = numpy.nonzero(codes)
    per_token = numpy.bincount(tokens, minlength=len(codes))
    found = numpy.full((len(codes), int(per_token.max(initial=0))), DROPPED, dtype=numpy.uint32)
    place = numpy.arange(len(tokens)) - (numpy.cumsum(per_token) - per_token)[tokens]
    found[tokens, place] = ids[labels, codes[tokens, labels]]
    return found


def match_ids(source: str, labels: Sequence[str], n_buckets: int) -> numpy.ndarray:
    """Feature id of (label, position in the match) for matches of a source
    ("gazetteer" or "memory"), a row per label, DROPPED for no match (code 0)."""
    return _match_feature_ids(source, tuple(labels), n_buckets)


def word_clusters(
    features: Sequence[str], clusters: Optional[VectorClusters], vocab
) -> Optional[Callable[[str], Optional[tuple[int, ...]]]]:
    """A word form's clusters (coarse to fine) for the clusters or vectors family; None without them."""
    if CLUSTERS_FAMILY in features:
        return shipped_clusters().word_ids
    if clusters is None or VECTORS_FAMILY not in features:
        return None
    return functools.partial(clusters.word_ids, vocab)


def fit_clusters(vocab, seed: int) -> VectorClusters:
    """The `vectors` family's clusters of the pipeline's static vectors."""
    vectors = vocab.vectors
    if vectors.shape[0] == 0:
        raise ValueError(
            f"The '{VECTORS_FAMILY}' feature family clusters the pipeline's static vectors, and it has none: "
            "set [initialize] vectors (e.g. to a pipeline with vectors, or one made by `spacy init vectors`), "
            f"or drop '{VECTORS_FAMILY}' from features."
        )
    return VectorClusters.fit(numpy.asarray(vectors.data), seed=seed)


def check_vectors(ner) -> None:
    """The vectors family needs the pipeline's vectors to be the ones its clusters were fitted on."""
    rows, width = ner.vocab.vectors.shape
    fitted = ner.clusters.centroids.shape[1]
    if rows == 0:
        if not ner.warned_no_vectors:
            warnings.warn(
                f"{ner.name}: the pipeline has no static vectors, which the '{VECTORS_FAMILY}' features read: "
                "every word falls in no cluster. Load the model with the vectors it was trained with.",
                stacklevel=2,
            )
            ner.warned_no_vectors = True
    elif width != fitted:
        raise ValueError(
            f"{ner.name}: the pipeline's vectors have {width} dimensions, but the '{VECTORS_FAMILY}' clusters were "
            "fitted "
            f"on {fitted}: load the model with the vectors it was trained with."
        )
