"""Document-level features: what the other mentions of a word in the same doc say.

A word's own context can leave its type open ("Jordan" opening a sentence);
its other mentions in the document often settle it. For each token, from the
other tokens with the same lowercase form (Ratinov & Roth's context
aggregation, in fixed width):
- `doc_case`: whether the word is lowercase elsewhere, and whether it is
  capitalized elsewhere away from a sentence start, with the token's own case;
- `first_prev`, `first_next`: the words around the word's first mention, for
  its later mentions (first mentions in news carry the fullest context).

And, in a second decoding pass, what the first pass made of the other mentions
(Ratinov & Roth's two-stage prediction aggregation):
- `history`, `history+case`: the entity type (or O) most of the word's other
  mentions got, alone and with the token's own case.
"""
import numpy
from spacy.strings import get_string_id

from .perceptron import DROPPED
from .templates import COLUMNS

DOCUMENT_FEATURES = ("doc_case", "first_prev", "first_next")
HISTORY_FEATURES = ("history", "history+case")
_SEEDS = numpy.array([get_string_id(f"template={name}") for name in DOCUMENT_FEATURES], dtype=numpy.uint64)
_HISTORY_SEEDS = numpy.array([get_string_id(f"template={name}") for name in HISTORY_FEATURES], dtype=numpy.uint64)
_LOWER = get_string_id("case=lower")
_CAPITALIZED = numpy.array([get_string_id("case=title"), get_string_id("case=upper")], dtype=numpy.uint64)
_PADDING = numpy.uint64(0x9E3779B97F4A7C15)


def _mix(h: numpy.ndarray) -> numpy.ndarray:
    # splitmix64's finalizer, as in features.pyx, on arrays.
    h = h ^ (h >> numpy.uint64(30))
    h = h * numpy.uint64(0xBF58476D1CE4E5B9)
    h = h ^ (h >> numpy.uint64(27))
    h = h * numpy.uint64(0x94D049BB133111EB)
    return h ^ (h >> numpy.uint64(31))


def document_features(rows: numpy.ndarray, table: numpy.ndarray, sentence: numpy.ndarray, n_buckets: int) -> numpy.ndarray:
    """The document features of every token of one doc.

    rows (int32[n]): Each token's row in the lexicon table.
    table (uint64[rows, attributes]): The lexicon table.
    sentence (int32[n]): Sentence number of each token.
    RETURNS (uint32[n, len(DOCUMENT_FEATURES)]): Feature ids, DROPPED where a token has none.
    """
    n = len(rows)
    out = numpy.full((n, len(DOCUMENT_FEATURES)), DROPPED, dtype=numpy.uint32)
    if n == 0:
        return out
    lower = table[rows, COLUMNS["lower"]]
    case = table[rows, COLUMNS["case"]]
    starts = numpy.ones(n, dtype=bool)
    starts[1:] = sentence[1:] != sentence[:-1]
    is_lower = (case == _LOWER).astype(numpy.int64)
    capitalized_inside = (numpy.isin(case, _CAPITALIZED) & ~starts).astype(numpy.int64)
    group = _mentions(lower)
    lower_elsewhere = numpy.bincount(group, weights=is_lower)[group] - is_lower > 0
    capitalized_elsewhere = numpy.bincount(group, weights=capitalized_inside)[group] - capitalized_inside > 0
    code = (1 + lower_elsewhere + 2 * capitalized_elsewhere).astype(numpy.uint64)
    buckets = numpy.uint64(n_buckets)
    out[:, 0] = _mix(_mix(_SEEDS[0] ^ code) ^ case) % buckets
    first = numpy.full(group.max() + 1, n, dtype=numpy.int64)
    numpy.minimum.at(first, group, numpy.arange(n))
    first = first[group]
    later = first != numpy.arange(n)
    for column, step in ((1, -1), (2, 1)):
        neighbour = first + step
        inside = (neighbour >= 0) & (neighbour < n)
        inside[inside] &= sentence[neighbour[inside]] == sentence[first[inside]]
        value = numpy.where(inside, lower[numpy.clip(neighbour, 0, n - 1)], _PADDING)
        ids = (_mix(_SEEDS[column] ^ value) % buckets).astype(numpy.uint32)
        out[later, column] = ids[later]
    return out


def history_features(rows: numpy.ndarray, table: numpy.ndarray, types: numpy.ndarray, n_types: int, n_buckets: int) -> numpy.ndarray:
    """The history features of every token of one doc, from a first pass's tags.

    types (int[n]): Each token's entity type in the first pass: 0 for O, else label + 1.
    n_types (int): Labels + 1.
    RETURNS (uint32[n, len(HISTORY_FEATURES)]): Feature ids, DROPPED where a word has no other mention.
    """
    n = len(rows)
    out = numpy.full((n, len(HISTORY_FEATURES)), DROPPED, dtype=numpy.uint32)
    if n == 0:
        return out
    group = _mentions(table[rows, COLUMNS["lower"]])
    counts = numpy.zeros((group.max() + 1, n_types), dtype=numpy.int64)
    numpy.add.at(counts, (group, types), 1)
    others = counts[group]
    others[numpy.arange(n), types] -= 1
    has_others = others.sum(axis=1) > 0
    majority = (1 + others.argmax(axis=1)).astype(numpy.uint64)
    buckets = numpy.uint64(n_buckets)
    case = table[rows, COLUMNS["case"]]
    out[has_others, 0] = (_mix(_HISTORY_SEEDS[0] ^ majority) % buckets)[has_others]
    out[has_others, 1] = (_mix(_mix(_HISTORY_SEEDS[1] ^ majority) ^ case) % buckets)[has_others]
    return out


def _mentions(lower: numpy.ndarray) -> numpy.ndarray:
    """A group id per token: tokens with the same lowercase form share one."""
    return numpy.unique(lower, return_inverse=True)[1].reshape(-1)
