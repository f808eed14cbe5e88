# cython: language_level=3
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

For the mentions of a short form defined in the doc ("atrial fibrillation (AF)",
see abbreviations.py): the long form's head word and its last three letters,
and in the second pass the type the first pass gave that head.
"""
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libcpp.vector cimport vector

from ..core.hashing cimport bucket as _bucket, mix as _mix

import numpy
from spacy.strings import get_string_id

from ..core.perceptron import DROPPED
from ..core.templates import COLUMNS

DOCUMENT_FEATURES = ("doc_case", "first_prev", "first_next")
HISTORY_FEATURES = ("history", "history+case")
ABBREVIATION_FEATURES = ("abbreviation_head", "abbreviation_head_suffix")
ABBREVIATION_HISTORY_FEATURES = ("abbreviation_history",)
# Each template's seed, in C arrays: the fill functions run without the GIL.
cdef uint64_t _SEEDS[3]
cdef uint64_t _HISTORY_SEEDS[2]
cdef uint64_t _ABBREVIATION_SEEDS[3]
for _i, _name in enumerate(DOCUMENT_FEATURES):
    _SEEDS[_i] = get_string_id(f"template={_name}")
for _i, _name in enumerate(HISTORY_FEATURES):
    _HISTORY_SEEDS[_i] = get_string_id(f"template={_name}")
for _i, _name in enumerate(ABBREVIATION_FEATURES + ABBREVIATION_HISTORY_FEATURES):
    _ABBREVIATION_SEEDS[_i] = get_string_id(f"template={_name}")
cdef uint64_t _LOWER = get_string_id("case=lower")
cdef uint64_t _TITLE = get_string_id("case=title")
cdef uint64_t _UPPER = get_string_id("case=upper")
cdef uint64_t _PADDING = 0x9E3779B97F4A7C15ULL
cdef uint32_t _DROPPED = DROPPED
cdef int _LOWER_COLUMN = COLUMNS["lower"]
cdef int _CASE_COLUMN = COLUMNS["case"]
cdef int _SUFFIX3_COLUMN = COLUMNS["suffix3"]


cdef int _mentions(const int32_t* mentions, Py_ssize_t n, int32_t* slots, int32_t* group) noexcept nogil:
    """A group id per token of one doc, numbered from 0 in order of first
    appearance (tokens with the same mention id share one); RETURNS the number
    of groups. slots (one per mention id, all -1) is left as it was found; NULL
    for a short batch, whose tokens are compared with those before them instead."""
    cdef Py_ssize_t i, j
    cdef int n_groups = 0
    if slots == NULL:
        for i in range(n):
            group[i] = -1
            for j in range(i):
                if mentions[j] == mentions[i]:
                    group[i] = group[j]
                    break
            if group[i] < 0:
                group[i] = n_groups
                n_groups += 1
        return n_groups
    for i in range(n):
        if slots[mentions[i]] < 0:
            slots[mentions[i]] = n_groups
            n_groups += 1
        group[i] = slots[mentions[i]]
    for i in range(n):
        slots[mentions[i]] = -1
    return n_groups


# Up to this many tokens, a batch's docs group mentions by comparing tokens: a table of
# every mention id (the whole lexicon's) costs more to fill than a sentence's comparisons.
SHORT_BATCH = 64


def mention_slots(const int32_t[::1] mentions):
    """Scratch for the mention groups (`_mentions`): -1 for every mention id of the batch; None for a short batch."""
    cdef Py_ssize_t i
    cdef int32_t top = 0
    for i in range(mentions.shape[0]):
        if mentions[i] < 0:
            raise ValueError("mention ids must not be negative")
        top = max(top, mentions[i])
    if mentions.shape[0] <= SHORT_BATCH:
        return None
    return numpy.full(top + 1, -1, dtype=numpy.int32)


def _check_length(Py_ssize_t found, Py_ssize_t n, str what):
    """That an array has an item per token: found items of `what` for n tokens."""
    if found != n:
        raise ValueError(f"{found} {what} for {n} tokens")


def _each_doc(offsets, Py_ssize_t n):
    """The (start, end) of each doc of a batch; the whole batch when offsets is None."""
    if offsets is None:
        return [(0, n)]
    bounds = numpy.asarray(offsets, dtype=numpy.int64).tolist()
    if not bounds or bounds[0] != 0 or bounds[len(bounds) - 1] != n or bounds != sorted(bounds):
        raise ValueError(f"offsets must rise from 0 to {n}")
    return list(zip(bounds, bounds[1:]))


def document_features(const int32_t[::1] rows, const uint64_t[:, ::1] table, const int32_t[::1] mentions,
                      const int32_t[::1] sentence, uint64_t n_buckets, offsets=None):
    """The document features of every token of one doc, or of docs laid end to end.

    rows (int32[n]): Each token's row in the lexicon table.
    table (uint64[rows, attributes]): The lexicon table.
    mentions (int32[n]): Each token's lowercase form as a small id (`Lexicon.mention_ids`).
    sentence (int32[n]): Sentence number of each token.
    offsets (Optional[int64[n_docs + 1]]): Where each doc starts; None for one doc.
    RETURNS (uint32[n, len(DOCUMENT_FEATURES)]): Feature ids, DROPPED where a token has none.
    """
    _check_length(mentions.shape[0], rows.shape[0], "mention ids")
    _check_length(sentence.shape[0], rows.shape[0], "sentence numbers")
    out = numpy.full((rows.shape[0], len(DOCUMENT_FEATURES)), DROPPED, dtype=numpy.uint32)
    cdef uint32_t[:, ::1] out_view = out
    cdef int32_t[::1] slots = mention_slots(mentions)
    cdef int32_t* slot_table = &slots[0] if slots is not None else NULL
    cdef Tokens tokens
    for start, end in _each_doc(offsets, rows.shape[0]):
        if end > start:
            tokens_of(&tokens, rows, table, mentions, sentence, start, end)
            fill_document_features(&tokens, slot_table, n_buckets, &out_view[start, 0], out_view.shape[1])
    return out


cdef void tokens_of(Tokens* tokens, const int32_t[::1] rows, const uint64_t[:, ::1] table,
                    const int32_t[::1] mentions, const int32_t[::1] sentence, Py_ssize_t start,
                    Py_ssize_t end) noexcept:
    """Point `tokens` at the tokens start..end (< end) of the arrays; mentions or sentence empty: not read."""
    tokens.rows, tokens.table, tokens.n_columns = &rows[start], &table[0, 0], table.shape[1]
    tokens.mentions = &mentions[start] if mentions.shape[0] else NULL
    tokens.sentence = &sentence[start] if sentence.shape[0] else NULL
    tokens.n = end - start


cdef void fill_document_features(const Tokens* tokens, int32_t* slots, uint64_t n_buckets, uint32_t* out,
                                 Py_ssize_t stride) noexcept nogil:
    cdef Py_ssize_t i, at, n = tokens.n, n_columns = tokens.n_columns
    cdef const int32_t* rows = tokens.rows
    cdef const int32_t* sentence = tokens.sentence
    cdef const uint64_t* table = tokens.table
    cdef vector[int32_t] group = vector[int32_t](n)
    cdef int n_groups = _mentions(tokens.mentions, n, slots, group.data())
    cdef vector[int32_t] lowercase = vector[int32_t](n_groups), capitalized = vector[int32_t](n_groups)
    cdef vector[int64_t] first = vector[int64_t](n_groups, -1)
    cdef vector[int32_t] is_lower = vector[int32_t](n), is_capitalized = vector[int32_t](n)
    cdef uint64_t case, code, value
    cdef uint64_t seed_case = _SEEDS[0], seed_prev = _SEEDS[1], seed_next = _SEEDS[2]
    for i in range(n):
        case = table[rows[i] * n_columns + _CASE_COLUMN]
        is_lower[i] = case == _LOWER
        # Capitalized where no sentence starts: evidence of a name.
        is_capitalized[i] = (case == _TITLE or case == _UPPER) and i > 0 and sentence[i - 1] == sentence[i]
        lowercase[group[i]] += is_lower[i]
        capitalized[group[i]] += is_capitalized[i]
        if first[group[i]] < 0:
            first[group[i]] = i
    for i in range(n):
        case = table[rows[i] * n_columns + _CASE_COLUMN]
        code = 1 + (lowercase[group[i]] - is_lower[i] > 0) + 2 * (capitalized[group[i]] - is_capitalized[i] > 0)
        out[i * stride] = <uint32_t>_bucket(_mix(_mix(seed_case ^ code) ^ case), n_buckets)
        at = first[group[i]]
        if at == i:
            continue  # a first mention: its own window already says this
        value = table[rows[at - 1] * n_columns + _LOWER_COLUMN] if at > 0 and sentence[at - 1] == sentence[at] \
            else _PADDING
        out[i * stride + 1] = <uint32_t>_bucket(_mix(seed_prev ^ value), n_buckets)
        value = table[rows[at + 1] * n_columns + _LOWER_COLUMN] if at + 1 < n and sentence[at + 1] == sentence[at] \
            else _PADDING
        out[i * stride + 2] = <uint32_t>_bucket(_mix(seed_next ^ value), n_buckets)


def history_features(const int32_t[::1] rows, const uint64_t[:, ::1] table, const int32_t[::1] mentions,
                     const int64_t[::1] types, int n_types, uint64_t n_buckets, offsets=None):
    """The history features of every token of one doc (or docs laid end to end), from a first pass's tags.

    mentions (int32[n]): Each token's lowercase form as a small id (`Lexicon.mention_ids`).
    types (int64[n]): Each token's entity type in the first pass: 0 for O, else label + 1.
    n_types (int): Labels + 1.
    offsets (Optional[int64[n_docs + 1]]): Where each doc starts; None for one doc.
    RETURNS (uint32[n, len(HISTORY_FEATURES)]): Feature ids, DROPPED where a word has no other mention.
    """
    _check_length(mentions.shape[0], rows.shape[0], "mention ids")
    _check_length(types.shape[0], rows.shape[0], "types")
    cdef Py_ssize_t i
    for i in range(types.shape[0]):
        if not 0 <= types[i] < n_types:
            raise ValueError(f"type {types[i]} of token {i} outside 0..{n_types - 1}")
    out = numpy.full((rows.shape[0], len(HISTORY_FEATURES)), DROPPED, dtype=numpy.uint32)
    cdef uint32_t[:, ::1] out_view = out
    cdef int32_t[::1] slots = mention_slots(mentions)
    cdef int32_t* slot_table = &slots[0] if slots is not None else NULL
    cdef Tokens tokens
    for start, end in _each_doc(offsets, rows.shape[0]):
        if end > start:
            tokens_of(&tokens, rows, table, mentions, mentions[:0], start, end)
            fill_history_features(&tokens, slot_table, &types[start], n_types, n_buckets, &out_view[start, 0],
                                  out_view.shape[1])
    return out


cdef void fill_history_features(const Tokens* tokens, int32_t* slots, const int64_t* types, int n_types,
                                uint64_t n_buckets, uint32_t* out, Py_ssize_t stride) noexcept nogil:
    cdef Py_ssize_t i, n = tokens.n
    cdef int t, best, best_count, count, total
    cdef vector[int32_t] group = vector[int32_t](n)
    cdef vector[int32_t] counts = vector[int32_t](_mentions(tokens.mentions, n, slots, group.data()) * n_types)
    cdef uint64_t majority, case, seed = _HISTORY_SEEDS[0], seed_case = _HISTORY_SEEDS[1]
    for i in range(n):
        counts[group[i] * n_types + types[i]] += 1
    for i in range(n):
        best, best_count, total = 0, -1, 0
        for t in range(n_types):
            count = counts[group[i] * n_types + t] - (t == types[i])
            total += count
            if count > best_count:
                best, best_count = t, count
        if total == 0:
            continue
        majority = 1 + best
        case = tokens.table[tokens.rows[i] * tokens.n_columns + _CASE_COLUMN]
        out[i * stride] = <uint32_t>_bucket(_mix(seed ^ majority), n_buckets)
        out[i * stride + 1] = <uint32_t>_bucket(_mix(_mix(seed_case ^ majority) ^ case), n_buckets)


def abbreviation_features(const int32_t[::1] rows, const uint64_t[:, ::1] table, const int64_t[::1] heads,
                          uint64_t n_buckets):
    """The long form's head word, and its last three letters, for every mention of a defined short form.

    heads (int64[n]): Each token's long-form head token, -1 if it is no defined short form.
    RETURNS (uint32[n, len(ABBREVIATION_FEATURES)]): Feature ids, DROPPED for other tokens.
    """
    _check_length(heads.shape[0], rows.shape[0], "heads")
    out = numpy.full((rows.shape[0], len(ABBREVIATION_FEATURES)), DROPPED, dtype=numpy.uint32)
    cdef uint32_t[:, ::1] out_view = out
    cdef Tokens tokens
    if rows.shape[0]:
        tokens_of(&tokens, rows, table, rows[:0], rows[:0], 0, rows.shape[0])
        fill_abbreviation_features(&tokens, &heads[0], n_buckets, &out_view[0, 0], out_view.shape[1])
    return out


cdef void fill_abbreviation_features(const Tokens* tokens, const int64_t* heads, uint64_t n_buckets, uint32_t* out,
                                     Py_ssize_t stride) noexcept nogil:
    cdef Py_ssize_t i
    cdef const uint64_t* head
    cdef uint64_t seed_head = _ABBREVIATION_SEEDS[0], seed_suffix = _ABBREVIATION_SEEDS[1]
    for i in range(tokens.n):
        if heads[i] >= 0:
            head = tokens.table + tokens.rows[heads[i]] * tokens.n_columns
            out[i * stride] = <uint32_t>_bucket(_mix(seed_head ^ head[_LOWER_COLUMN]), n_buckets)
            out[i * stride + 1] = <uint32_t>_bucket(_mix(seed_suffix ^ head[_SUFFIX3_COLUMN]), n_buckets)


def abbreviation_history(const int64_t[::1] heads, const int64_t[::1] types, uint64_t n_buckets):
    """The first pass's entity type of the long form's head, for every mention of a defined short form.

    types (int64[n]): Each token's entity type in the first pass: 0 for O, else label + 1.
    RETURNS (uint32[n, 1]): Feature ids, DROPPED for other tokens.
    """
    _check_length(types.shape[0], heads.shape[0], "types")
    out = numpy.full((heads.shape[0], 1), DROPPED, dtype=numpy.uint32)
    cdef uint32_t[:, ::1] out_view = out
    if heads.shape[0]:
        fill_abbreviation_history(&heads[0], &types[0], heads.shape[0], n_buckets, &out_view[0, 0], 1)
    return out


cdef void fill_abbreviation_history(const int64_t* heads, const int64_t* types, Py_ssize_t n, uint64_t n_buckets,
                                    uint32_t* out, Py_ssize_t stride) noexcept nogil:
    cdef Py_ssize_t i
    cdef uint64_t seed = _ABBREVIATION_SEEDS[2]
    for i in range(n):
        if heads[i] >= 0:
            out[i * stride] = <uint32_t>_bucket(_mix(seed ^ <uint64_t>(1 + types[heads[i]])), n_buckets)
