"""Scores and Viterbi: a group of docs from features to tags, in two passes when the
`history` family is on, then the rules after decoding.

`decode(ner, docs)` is what prediction, calibration and `bioner explain` share.
"""

from typing import NamedTuple, Optional

import numpy
from spacy.tokens import Doc, Span

from ..core.decode import viterbi
from ..core.perceptron import AveragedPerceptron
from ..core.templates import DOCUMENT_FAMILY, HISTORY_FAMILY, MEMORY_FAMILY
from ..gazetteer.matcher import NO_MATCHES
from .batch import Layout, lay_out, layout_pass
from .bounds import entity_bound, within_bound
from .confidence import alternatives, entity_probabilities
from .entities import entity_annotated
from .featurizer import features, history, match_ids, match_sources, reads_short_forms
from .name_lists import known_names
from .passes import PlainPasses
from .plain_decode import PlainDecode
from .rules import apply_rules, person_ids
from .screens import BOUND, AfterDecoding
from .trellis import KEPT_MASK_TOKENS, Trellis, allowed_tags, presets_of, trellis_of


class Prediction(NamedTuple):
    """What `predict` hands to `set_annotations` for one doc."""

    tags: numpy.ndarray
    matches: numpy.ndarray  # rows of (start, end, gazetteer label, kb id)
    presets: list[Span]
    confidences: Optional[list[tuple[int, int, int, float]]]  # (start, end, label, probability) per decoded entity
    alternatives: Optional[list[tuple[int, int, int, float]]]  # the same, for the most probable other spans


class Decoded(NamedTuple):
    """A group of docs as decoded: what produced the tags, for their probabilities and explanations."""

    matches: list[numpy.ndarray]
    presets: list[list[Span]]
    layout: Layout
    trellis: Trellis
    scores: numpy.ndarray  # the emission scores the last Viterbi pass read, a row per row of the trellis
    allowed: numpy.ndarray  # each token's allowed tags
    tags: numpy.ndarray
    first_pass: numpy.ndarray  # the tags the history features were made from (= tags without history)
    best_path: numpy.ndarray  # the last Viterbi pass's tags, before the rules
    retagged: dict[int, str]  # token position -> the rule that gave it its tag (rules.apply_rules)


def best_tags(
    ner, scores: numpy.ndarray, allowed: numpy.ndarray, offsets: numpy.ndarray, averaged: bool
) -> numpy.ndarray:
    """The best tags of each doc of the batch, docs laid end to end."""
    transitions, factors = ner.model.decoding_weights(averaged=averaged)
    return viterbi(scores, transitions, allowed, ner.legal, offsets, factors, ner.predecessors)


def best_tags_over(ner, trellis: Trellis, scores: numpy.ndarray, averaged: bool = True) -> numpy.ndarray:
    """Every token's tag, from the best tags of the trellis's rows (`scores`: one row per token)."""
    return trellis.with_spaces(
        best_tags(ner, trellis.rows(scores), trellis.allowed, trellis.offsets, averaged=averaged)
    )


def bounded_over(ner, trellis: Trellis, scores: numpy.ndarray, tags: numpy.ndarray) -> numpy.ndarray:
    """The tags with no entity longer than the bound (bounds.py): the final pass's only, as in training
    the first pass that history features are made from is not bounded either."""
    row_tags = trellis.rows(tags)
    bounded = within_bound(ner, trellis.rows(scores), trellis.allowed, trellis.offsets, row_tags)
    return tags if bounded is row_tags else trellis.with_spaces(bounded)


def decode(ner, docs: list[Doc], laid_out: Optional[tuple] = None) -> Decoded:
    """Tags of a group of docs, with the scores and masks that chose them (averaged weights).

    laid_out: the docs' layout.LayoutPass.run, if it ran already (PlainDecode.run hands it on).
    """
    matches = ner.gazetteer.match_batch(docs)
    # Only docs with entities or blocked tokens set before us have presets, or any doc in "ents" mode.
    all_docs = ner.settings.gazetteer.mode == "ents"
    presets = [
        presets_of(ner, doc, found) if all_docs or entity_annotated(doc) else [] for doc, found in zip(docs, matches)
    ]
    layout = lay_out(ner, docs, laid_out=laid_out)
    allowed = allowed_tags(ner, layout, presets)
    trellis = trellis_of(ner, layout, presets, allowed)
    if is_plain(ner, layout):
        scores, first_pass, tags = compiled_passes(ner, layout, matches, allowed)
    else:
        scores, first_pass, tags = passes(ner, layout, matches, trellis)
    steps = steps_after_decoding(ner, layout, tags, matches)
    if steps & BOUND:
        bounded = bounded_over(ner, trellis, scores, tags)
        if bounded is not tags:
            tags, steps = bounded, steps_after_decoding(ner, layout, bounded, matches)
    final, retagged = apply_rules(ner, docs, layout, tags, allowed, matches, steps)
    return Decoded(matches, presets, layout, trellis, trellis.rows(scores), allowed, final, first_pass, tags, retagged)


def steps_after_decoding(ner, layout: Layout, tags: numpy.ndarray, matches: list[numpy.ndarray]) -> int:
    """The steps after Viterbi (the bound, then the rules) that may change these tags (screens.AfterDecoding)."""
    names = known_names(ner, layout, matches) if ner.settings.rules.split_name_lists else None
    short_form_starts = layout.short_form_starts if layout.short_form_heads is not None else None
    steps = after_decoding(ner).run(tags, layout.offsets, layout.rows, names, short_form_starts)
    # With whitespace tokens, the bound reads the trellis's rows, in which an entity may run across one.
    return steps | BOUND if layout.spaced else steps


def after_decoding(ner) -> AfterDecoding:
    """The screens after Viterbi for the component's scheme, settings and bound as they are now."""
    scheme, settings, bound = ner.scheme, ner.settings, entity_bound(ner)
    made = ner.after_decoding
    if made is None or made.made_of != (scheme, settings, bound):
        person = scheme.tags_of(person_ids(ner)).view(numpy.uint8)
        made = ner.after_decoding = AfterDecoding(
            scheme.continuing_bytes(),
            person,
            len(scheme.moves),
            bound or 0,
            settings.rules.split_name_lists,
            (scheme, settings, bound),
        )
    return made


def passes(
    ner, layout: Layout, matches: list[numpy.ndarray], trellis: Trellis
) -> tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]:
    """The emission scores (a row per token) the last Viterbi pass read, the first pass's tags and the last's."""
    model = ner.model
    if model.dense:  # single-word templates from the per-word cache, the others hashed
        scores = ner.featurizer.scores(layout, model.scoring_rows())
        scores += model.scores(features(ner, layout, matches, predicting=True), averaged=True)
    else:  # a per-word cache of sparse rows would be dense: every template hashed
        scores = model.scores(features(ner, layout, matches), averaged=True)
    bias = ner.settings.confidence.entity_bias
    if bias:  # the recall knob
        scores[:, 1:] += bias
    tags = first_pass = best_tags_over(ner, trellis, scores)
    if HISTORY_FAMILY in ner.settings.features:
        # The first pass saw no history features, so the second pass's
        # scores are the first's plus the weights of those alone.
        scores += ner.model.scores(history(ner, layout, first_pass, predicting=True), averaged=True)
        tags = best_tags_over(ner, trellis, scores)
    return scores, first_pass, tags


def is_plain(ner, layout: Layout) -> bool:
    """Whether `compiled_passes` gives what `passes` would: every token a word, and dense perceptron weights."""
    return not layout.spaced and type(ner.model) is AveragedPerceptron


def compiled_passes(
    ner, layout: Layout, matches: list[numpy.ndarray], allowed: numpy.ndarray
) -> tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]:
    """`passes` of a plain batch (is_plain), in one compiled call (passes.pyx)."""
    short_form_heads = layout.abbreviation_heads if reads_short_forms(layout, predicting=True) else None
    return plain_passes(ner).run(
        layout, match_sources(ner, layout, matches), short_form_heads, ner.settings.confidence.entity_bias, allowed
    )


def plain_passes(ner) -> PlainPasses:
    """The compiled passes for the component's averaged weights as they are now: made again only when
    they, the labels or the features have changed since the last call (training, adding a label)."""
    model, featurizer = ner.model, ner.featurizer
    weights = model.scoring_rows()
    transitions, factors = model.decoding_weights(averaged=True)
    legal, predecessors = ner.legal, ner.predecessors
    made = ner.plain_passes
    if made is None or not made.made_from(featurizer.word_scores, weights, transitions, factors, legal, predecessors):
        decoding = (transitions, factors, legal, predecessors, ner.scheme.entity_types(), len(ner.labels) + 1)
        made = ner.plain_passes = PlainPasses(
            featurizer.word_scores,
            featurizer.joint_extractor,
            DOCUMENT_FAMILY in featurizer.families,
            featurizer.lexicon,
            featurizer.n_buckets,
            weights,
            decoding,
            HISTORY_FAMILY in ner.settings.features,
        )
    return made


def predict_group(ner, docs: list[Doc], laid_out: Optional[tuple] = None) -> list[Prediction]:
    """Each doc's prediction, the group decoded together: in one compiled call where it is short and
    plain (plain_decode.pyx), else stage by stage (decode). laid_out: the group's layout, if it was laid
    out already (PlainDecode.run hands it on)."""
    confidence = ner.settings.confidence
    quick = plain_decode_for(ner, docs) if laid_out is None else None
    if quick is not None:
        tags, laid_out = quick.run(docs)
        if tags is not None:
            offsets = laid_out[0].tolist()
            return [Prediction(tags[offsets[i] : offsets[i + 1]], NO_MATCHES, [], None, None) for i in range(len(docs))]
    decoded = decode(ner, docs, laid_out)
    offsets = decoded.layout.offsets.tolist()
    confidences = entity_probabilities(ner, decoded) if confidence.probabilities else [None] * len(docs)
    others = alternatives(ner, decoded) if confidence.alternatives else [None] * len(docs)
    return [
        Prediction(
            decoded.tags[offsets[i] : offsets[i + 1]], decoded.matches[i], decoded.presets[i], confidences[i], others[i]
        )
        for i in range(len(docs))
    ]


def plain_decode_for(ner, docs: list[Doc]) -> Optional[PlainDecode]:
    """The compiled decode (plain_decode), if these docs may take it: no probabilities or alternatives
    asked for, and no doc with presets."""
    confidence = ner.settings.confidence
    if confidence.probabilities or confidence.alternatives or any_entity_annotated(docs):
        return None
    return plain_decode(ner)


def any_entity_annotated(docs: list[Doc]) -> bool:
    """Whether any doc has entities or blocked tokens set before (presets)."""
    for doc in docs:
        if entity_annotated(doc):
            return True
    return False


def plain_decode(ner) -> Optional[PlainDecode]:
    """The compiled decode for the component as it is now, if it has one: dense averaged weights, no term
    lists and no labels taken from presets. The docs it decodes must have no presets (plain_decode_for)."""
    state = plain_state(ner)  # first: reading the weights brings them up to the labels (BioNER._sync)
    made = ner.plain_decode
    if made is not None and made.state == state:
        return made  # nothing it is made from has changed: one comparison, not a check of each stage
    if len(ner.gazetteer) or ner.cfg["labels_from_presets"] or type(ner.model) is not AveragedPerceptron:
        return None
    layout, passes, after = layout_pass(ner), plain_passes(ner), after_decoding(ner)
    memory = MEMORY_FAMILY in ner.settings.features
    memory_ids = match_ids("memory", ner.labels, ner.featurizer.n_buckets) if memory else None
    bias = ner.settings.confidence.entity_bias
    if made is None or not made.made_from(layout, passes, after, memory_ids, bias):
        made = ner.plain_decode = PlainDecode(
            layout,
            passes,
            after,
            ner.scheme.continuing_bytes(),
            ner.scheme.closing().view(numpy.uint8),
            memory_ids,
            bias,
            ner.settings.rules.split_name_lists,
            KEPT_MASK_TOKENS,
        )
    made.state = state
    return made


def plain_state(ner) -> tuple:
    """What the compiled decode's stages are made from, read without making them: the objects that are
    replaced when they change (settings, cfg, features, lexicon, memory, weights), the weights' revision
    (new labels grow the weights), and the sizes of the lists that grow in place."""
    cfg, featurizer, model = ner.cfg, ner.featurizer, ner.model
    return (
        ner.settings,
        cfg,
        len(cfg["labels_from_presets"]),
        cfg.get("longest_entity"),
        featurizer,
        featurizer.lexicon,
        featurizer.initials,
        featurizer.word_scores,
        ner.memory.entries,
        model,
        getattr(model, "revision", None),
        len(ner.gazetteer),
    )
