"""The bound on an entity's length: spans that Viterbi made too long, decoded again.

A first-order tagger cannot count: nothing stops I-ORG from following I-ORG three
thousand times ("London London London ..."). The bound is `[rules] max_entity_length`,
or else the longest entity training saw. Each entity longer than that is decoded again
with its length in the state, (tag, words so far), which is exact under the bound and
costs the bound times a plain Viterbi step: it runs on those spans alone. Entities set
before bioner (presets) keep their length.
"""

from typing import Optional

import numpy

from .screens import continuing_run


def entity_bound(ner) -> Optional[int]:
    """The most words an entity may have when tagging; None: no bound."""
    return ner.settings.rules.max_entity_length or ner.cfg.get("longest_entity")


def within_bound(
    ner, scores: numpy.ndarray, allowed: numpy.ndarray, offsets: numpy.ndarray, tags: numpy.ndarray
) -> numpy.ndarray:
    """The rows' tags with every entity longer than the bound decoded again under it.

    scores, allowed, offsets: the trellis's rows, as Viterbi read them; tags: what it gave.
    """
    bound = entity_bound(ner)
    if bound is None:
        return tags
    # An entity is its first tag and a run of continuing ones: with no run as long as the bound, none is too long.
    if not continuing_run(tags, ner.scheme.continuing_bytes(), bound):
        return tags
    # A span with a tag forced on it (a preset: an identifier, a rule's entity) keeps its length: the
    # bound holds what the model makes up, not what was set before it.
    forced = allowed.sum(axis=1) == 1
    too_long = [
        (start, end)
        for start, end, _ in ner.scheme.to_spans(tags)
        if end - start > bound and not forced[start:end].any()
    ]
    if not too_long:
        return tags
    tags = tags.copy()
    transitions, factors = ner.model.decoding_weights(averaged=True)
    doc_starts = numpy.asarray(offsets)
    for start, end in too_long:
        doc_start = int(doc_starts[numpy.searchsorted(doc_starts, start, side="right") - 1])
        doc_end = int(doc_starts[numpy.searchsorted(doc_starts, start, side="right")])
        previous = int(tags[start - 1]) if start > doc_start else ner.scheme.n_tags
        following = int(tags[end]) if end < doc_end else None
        tags[start:end] = bounded_viterbi(
            ner.scheme,
            scores[start:end],
            allowed[start:end],
            ner.legal,
            transitions,
            factors,
            bound,
            previous,
            following,
        )
    return tags


def bounded_viterbi(
    scheme,
    emissions: numpy.ndarray,
    allowed: numpy.ndarray,
    legal: numpy.ndarray,
    transitions: numpy.ndarray,
    factors: Optional[tuple[numpy.ndarray, numpy.ndarray]],
    bound: int,
    previous: int,
    following: Optional[int],
) -> numpy.ndarray:
    """The best tags of a stretch of rows in which no entity has more than `bound` words.

    The stretch starts a new entity or none (it may not continue the tag before it,
    `previous`, n_tags for the sequence start), and moves into `following` after its
    last row (None: the sequence ends there, as `allowed` says).
    """
    n, n_tags = emissions.shape
    continuing = scheme.continuing()
    opening = ~continuing
    is_legal = legal.astype(bool)
    transitions = transitions.astype(numpy.float64)
    closing = is_legal[:n_tags, 0]  # the tags an O (and so any opening tag) may follow
    # The B and I of its own label: a continuing tag's only predecessors.
    label_first = 1 + (numpy.arange(n_tags) - 1) // len(scheme.moves) * len(scheme.moves)
    inside_from = numpy.stack([label_first, label_first + 1])  # (2, n_tags), read where continuing
    ok = allowed.astype(bool) & numpy.isfinite(emissions)
    # delta[k, t]: the best score of rows so far ending in tag t with k + 1 words of its entity (k = 0 for O).
    delta = numpy.full((bound, n_tags), -numpy.inf)
    start_ok = ok[0] & is_legal[previous] & opening
    delta[0, start_ok] = (_moves_from(previous, transitions, factors, opening) + emissions[0])[start_ok]
    back_tag = numpy.zeros((n, bound, n_tags), dtype=numpy.int32)
    back_length = numpy.zeros((n, bound, n_tags), dtype=numpy.int32)
    cont = numpy.flatnonzero(continuing)
    for i in range(1, n):
        fresh = numpy.full((bound, n_tags), -numpy.inf)
        # Into an opening tag (a new entity, or O) from any length of any tag allowed before it.
        best_length = delta.argmax(axis=0)
        collapsed = delta[best_length, numpy.arange(n_tags)]
        if factors is None:
            into = numpy.where(is_legal[:n_tags], collapsed[:, None] + transitions[:n_tags], -numpy.inf)
            best_previous = into.argmax(axis=0)
            fresh[0, opening] = into[best_previous, numpy.arange(n_tags)][opening]
        else:  # one max over the closing tags serves every opening one (decode.pyx)
            leaving = numpy.where(closing, collapsed + factors[0][:n_tags], -numpy.inf)
            best_previous = numpy.full(n_tags, int(leaving.argmax()))
            fresh[0, opening] = leaving[best_previous[0]] + factors[1][opening]
        back_tag[i, 0, opening] = best_previous[opening]
        back_length[i, 0, opening] = best_length[best_previous[opening]]
        # Into I or L: one more word of the entity, from its B or I at one word fewer.
        if len(cont) and bound > 1:
            candidates = (
                delta[:-1][:, inside_from[:, cont]] + transitions[inside_from[:, cont], cont]
            )  # (bound - 1, 2, n_cont)
            which = candidates.argmax(axis=1)
            fresh[1:, cont] = numpy.take_along_axis(candidates, which[:, None, :], axis=1)[:, 0, :]
            back_tag[i][1:, cont] = inside_from[:, cont][which, numpy.arange(len(cont))]
            back_length[i][1:, cont] = numpy.arange(bound - 1)[:, None]
        fresh[:, ~ok[i]] = -numpy.inf
        delta = fresh + emissions[i]
    if following is not None:
        into_following = _moves_into(following, transitions, factors, opening)
        delta = delta + numpy.where(is_legal[:n_tags, following], into_following, -numpy.inf)[None, :]
    length, tag = numpy.unravel_index(int(delta.argmax()), delta.shape)
    if not numpy.isfinite(delta[length, tag]):
        raise ValueError("No tag sequence satisfies the constraints within the entity length bound")
    out = numpy.zeros(n, dtype=numpy.int32)
    for i in range(n - 1, -1, -1):
        out[i] = tag
        tag, length = back_tag[i, length, tag], back_length[i, length, tag]
    return out


def _moves_from(tag: int, transitions: numpy.ndarray, factors, opening: numpy.ndarray) -> numpy.ndarray:
    """The score of each move out of `tag` (n_tags for the start), factored ones added up."""
    if factors is None:
        return transitions[tag]
    return numpy.where(opening, factors[0][tag] + factors[1], transitions[tag])


def _moves_into(tag: int, transitions: numpy.ndarray, factors, opening: numpy.ndarray) -> numpy.ndarray:
    """The score of the move from each tag into `tag`."""
    if factors is None or not opening[tag]:
        return transitions[: len(opening), tag]
    return factors[0][: len(opening)] + factors[1][tag]


def longest_entity(spans: list[tuple[int, int]], is_space: numpy.ndarray) -> int:
    """The most words of any of these (start, end) token spans."""
    return max((int((~is_space[start:end]).sum()) for start, end in spans), default=0)
