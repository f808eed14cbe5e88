# cython: language_level=3
"""Tokens -> hashed feature ids.

`Lexicon` caches, per word form, the hashes of its lexical attributes (one row
of a uint64 table), so the Python that derives affixes and shapes runs once per
new word, not once per token. `FeatureExtractor` combines attribute hashes
across a window by the templates and maps each combination to a weight row.
"""
cimport numpy as cnp
from cython.operator cimport dereference as deref
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from spacy.attrs cimport IS_LOWER, IS_SPACE, IS_TITLE
from spacy.structs cimport LexemeC
from spacy.lexeme cimport Lexeme
from spacy.tokens.doc cimport Doc

from .arrays cimport items_of
from .hashing cimport bucket as _bucket, mix as _mix

import numpy
from spacy.strings import get_string_id


cdef class Lexicon:
    """Word form hash -> row of attribute hashes.

    attributes (Callable[[str], List[int]]): The attribute hashes of a word.
    n_attributes (int): How many hashes it returns.
    max_size (int): Rows kept before the cache starts over (bounds memory on
        endless streams of new words).
    mention_column (int): The attribute whose equal values make two word forms
        mentions of one word (the lowercase form, for the document features);
        `mention_ids` numbers its values densely. -1: none.
    """
    def __init__(self, attributes, int n_attributes, int max_size=1_000_000, int mention_column=-1):
        if not -1 <= mention_column < n_attributes:
            raise ValueError(f"mention_column {mention_column} outside -1..{n_attributes - 1}")
        self._attributes = attributes
        self._max_size = max_size
        self._mention_column = mention_column
        self.table = numpy.zeros((1024, n_attributes), dtype=numpy.uint64)
        self.mention_ids = numpy.zeros(1024, dtype=numpy.int32)
        self._n_rows = 0
        self.generation = 0

    def __len__(self):
        return self._n_rows

    def rows(self, const uint64_t[::1] orths, strings, const uint8_t[::1] lowercase=None):
        """The table row of each word form (adding new ones).

        orths (uint64[n]): Word form hashes (spaCy's ORTH).
        strings (StringStore): Resolves a hash to its text.
        lowercase (uint8[n]): 1 for each token of a lower-case doc (lowercase_docs), or None.
            Such a token's word has a row of its own, `attributes(text, lowercase=True)`.
        RETURNS (int32[n]): Row ids into `table`.
        """
        cdef int i, n = orths.shape[0]
        self._make_room(n)
        out = numpy.empty(n, dtype=numpy.int32)
        cdef int32_t[::1] out_view = out
        for i in range(n):
            out_view[i] = self._row(orths[i], strings, lowercase is not None and lowercase[i])
        return out

    def batch_rows(self, docs):
        """`rows` of the tokens of docs laid end to end, read straight from the docs."""
        return self.rows_and_mentions(docs)[0]

    def rows_and_mentions(self, docs, bint lowercase_docs=False):
        """`rows` of the tokens of docs laid end to end, read straight from the docs, and the
        mention id of each (`mention_ids` of its row).

        lowercase_docs (bool): Whether a lower-case doc's words (`lowercase_docs`) read rows of their own.
        RETURNS (Tuple[int32[n], int32[n]]): Row ids into `table`, and mention ids.
        """
        docs = list(docs)
        cdef Py_ssize_t n = count_tokens(docs)
        rows = numpy.empty(n, dtype=numpy.int32)
        mentions = numpy.empty(n, dtype=numpy.int32)
        cdef int32_t[::1] row_view = rows, mention_view = mentions
        if n:
            self.fill_rows_and_mentions(docs, n, lowercase_docs, &row_view[0], &mention_view[0])
        return rows, mentions

    cdef int fill_rows_and_mentions(self, list docs, Py_ssize_t n, bint lowercase_docs, int32_t* rows,
                                    int32_t* mentions) except -1:
        """rows_and_mentions into rows and mentions, of room for the docs' n tokens."""
        cdef Doc doc
        cdef Py_ssize_t i, at = 0
        cdef bint lowercase
        self._make_room(n)
        for doc in docs:
            lowercase = lowercase_docs and _is_lowercase(doc)
            strings = doc.vocab.strings  # once a doc: two attribute lookups a token cost more than finding its row
            for i in range(doc.length):
                rows[at + i] = self._row(doc.c[i].lex.orth, strings, lowercase)
            at += doc.length
        # after the rows: adding them may grow it
        cdef const int32_t* mention_ids = <const int32_t*>items_of(self.mention_ids, cnp.NPY_INT32, self._n_rows)
        for i in range(n):  # a loop: numpy's fancy indexing costs more for a sentence
            mentions[i] = mention_ids[rows[i]]
        return 0

    cdef void _make_room(self, Py_ssize_t n):
        """Start over if n new words could take the table past max_size: in new arrays, so that a row
        once written is never written again (a call reading the old rows may hold them)."""
        if self._n_rows + n > self._max_size:
            self._rows.clear()
            self._mentions.clear()
            self._n_rows = 0
            self.generation += 1
            self.table = numpy.zeros_like(self.table)
            self.mention_ids = numpy.zeros_like(self.mention_ids)

    cdef int32_t _row(self, uint64_t orth, strings, bint lowercase) except -1:
        cdef uint64_t key = _mix(orth ^ _LOWERCASE_SALT) if lowercase else orth
        cdef unordered_map[uint64_t, int32_t].iterator found = self._rows.find(key)
        if found == self._rows.end():
            return self._add(key, strings[orth], lowercase)
        return deref(found).second

    cdef int32_t _add(self, uint64_t orth, str text, bint lowercase) except -1:
        cdef uint64_t key
        if self._n_rows == self.table.shape[0]:
            self.table = numpy.concatenate([self.table, numpy.zeros_like(self.table)])
            self.mention_ids = numpy.concatenate([self.mention_ids, numpy.zeros_like(self.mention_ids)])
        hashes = self._attributes(text, lowercase=True) if lowercase else self._attributes(text)
        cdef uint64_t[:, ::1] table = self.table
        if len(hashes) != table.shape[1]:
            raise ValueError(f"{len(hashes)} attribute hashes for {text!r}, the table holds {table.shape[1]}")
        cdef Py_ssize_t column
        for column in range(table.shape[1]):  # a loop: numpy's conversion of a list costs more for one row
            table[self._n_rows, column] = hashes[column]
        if self._mention_column >= 0:
            key = table[self._n_rows, self._mention_column]
            if self._mentions.count(key) == 0:
                self._mentions[key] = <int32_t>self._mentions.size()
            self.mention_ids[self._n_rows] = self._mentions[key]
        self._rows[orth] = self._n_rows
        self._n_rows += 1
        return self._n_rows - 1

    def __reduce__(self):
        return (Lexicon, (self._attributes, self.table.shape[1], self._max_size, self._mention_column))


cdef uint64_t _FULL_STOP = get_string_id("."), _EXCLAMATION = get_string_id("!"), _QUESTION = get_string_id("?")
cdef uint64_t _I = get_string_id("I")  # the pronoun, never lower case


cdef inline bint _ends_sentence(uint64_t orth) noexcept nogil:
    """Whether a token ends a sentence in raw text (batch_layout's sentence_ends, lowercase_docs)."""
    return orth == _FULL_STOP or orth == _EXCLAMATION or orth == _QUESTION


# A lower-case doc's words read in rows of their own (templates.CASE_ATTRIBUTES).
cdef uint64_t _LOWERCASE_SALT = 0x2545f4914f6cdd1dULL


def lowercase_docs(docs):
    """Whether each doc is lower-case text (uint8 per doc): a letter, and no capital but those that
    phones and habit add while the rest is typed in lower case: the first letter of a word that
    opens a sentence (the doc, a line, or after ".", "!" or "?"), and the pronoun "I"."""
    out = numpy.zeros(len(docs), dtype=numpy.uint8)
    cdef uint8_t[::1] out_view = out
    cdef Py_ssize_t d = 0
    cdef Doc doc
    for doc in docs:
        out_view[d] = _is_lowercase(doc)
        d += 1
    return out


cdef bint _is_lowercase(Doc doc) except -1:
    """lowercase_docs of one doc."""
    cdef Py_ssize_t i
    cdef bint lower = False, capital = False, opens
    cdef const LexemeC* lex
    cdef uint64_t before
    for i in range(doc.length):
        lex = doc.c[i].lex
        lower |= Lexeme.c_check_flag(lex, IS_LOWER)
        if lex.lower == lex.orth or lex.orth == _I:
            continue
        before = doc.c[i - 1].lex.orth if i > 0 else 0
        opens = i == 0 or _ends_sentence(before)
        if not opens and Lexeme.c_check_flag(doc.c[i - 1].lex, IS_SPACE):
            opens = "\n" in doc.vocab.strings[before]  # a line break; a tab or spaces open nothing
        capital |= not (opens and Lexeme.c_check_flag(lex, IS_TITLE))
    return lower and not capital


def batch_orths(docs):
    """The ORTH hash of every token of docs laid end to end (uint64), read straight from the docs."""
    cdef Doc doc
    cdef Py_ssize_t i, n = 0
    for doc in docs:
        n += doc.length
    orths = numpy.empty(n, dtype=numpy.uint64)
    cdef uint64_t[::1] orth_view = orths
    n = 0
    for doc in docs:
        for i in range(doc.length):
            orth_view[n + i] = doc.c[i].lex.orth
        n += doc.length
    return orths


def batch_layout(docs, bint sentence_ends=False):
    """Where each doc's tokens lie when docs are laid end to end, and what the
    decoder needs of each token, read straight from the docs.

    sentence_ends: the sentence numbers also start anew after a ".", "!" or "?",
        so that no window reads across the end of a sentence in raw text.
    RETURNS (Tuple[ndarray, ndarray, ndarray, ndarray]): int64 offsets of the
        docs (n_docs + 1); int32 sentence number of each token, a new one at
        each sentence start and each doc start, so no window crosses a doc;
        bool sentence starts (the first token of each doc included); bool
        whitespace tokens.
    """
    docs = list(docs)
    cdef Py_ssize_t n = count_tokens(docs)
    offsets = numpy.zeros(len(docs) + 1, dtype=numpy.int64)
    sentences = numpy.empty(n, dtype=numpy.int32)
    starts = numpy.empty(n, dtype=numpy.bool_)
    spaces = numpy.empty(n, dtype=numpy.bool_)
    cdef int64_t[::1] offset_view = offsets
    cdef int32_t[::1] sentence_view = sentences
    cdef uint8_t[::1] start_view = starts.view(numpy.uint8), space_view = spaces.view(numpy.uint8)
    if n:
        fill_layout(docs, sentence_ends, &offset_view[0], &sentence_view[0], &start_view[0], &space_view[0])
    return offsets, sentences, starts, spaces


cdef Py_ssize_t count_tokens(list docs) except -1:
    """The tokens of the docs."""
    cdef Doc doc
    cdef Py_ssize_t n = 0
    for doc in docs:
        n += doc.length
    return n


cdef int fill_layout(list docs, bint sentence_ends, int64_t* offsets, int32_t* sentence, uint8_t* starts,
                     uint8_t* spaces) except -1:
    """batch_layout into offsets (n_docs + 1) and the rest (a value per token), of room for the docs."""
    cdef Doc doc
    cdef Py_ssize_t i, d = 0, n = 0
    cdef int32_t number = 0
    offsets[0] = 0
    for doc in docs:
        for i in range(doc.length):
            starts[n + i] = i == 0 or doc.c[i].sent_start == 1
            if starts[n + i] or (sentence_ends and i > 0 and _ends_sentence(doc.c[i - 1].lex.orth)):
                number += 1
            sentence[n + i] = number
            spaces[n + i] = Lexeme.c_check_flag(doc.c[i].lex, IS_SPACE)
        n += doc.length
        d += 1
        offsets[d] = n
    return 0


def words_of(is_space, starts):
    """The tokens that are not whitespace, and where each stretch of tokens
    beginning at `starts` (docs, sentences) begins among them.

    Training corpora have no whitespace tokens, so the tagger, parser and
    bioner read raw text's newlines past them, as if they were not there.
    """
    spaces = numpy.asarray(is_space)
    if not spaces.any():  # most text: every token is a word
        return numpy.arange(len(spaces)), numpy.array(starts, dtype=numpy.intp)
    words = numpy.flatnonzero(spaces == 0)
    return words, numpy.searchsorted(words, starts)


cdef class FeatureExtractor:
    """Feature templates compiled to arrays.

    templates (List[Tuple[int, List[Tuple[int, int]]]]): Per template, its seed
        and its (attribute column, token offset) parts.
    n_buckets (int): Feature ids are taken modulo this.
    """
    # Attributes are declared in features.pxd, for ner/passes.pyx.

    def __init__(self, templates, int n_buckets):
        if n_buckets < 1:
            raise ValueError(f"n_buckets must be positive, got {n_buckets}")
        self._templates = templates
        self.n_buckets = n_buckets
        self.n_features = len(templates)
        self._max_parts = max([len(parts) for _, parts in templates] + [1])
        shape = (self.n_features, self._max_parts)
        self._seeds = numpy.array([seed for seed, _ in templates], dtype=numpy.uint64)
        self._columns = numpy.zeros(shape, dtype=numpy.int32)
        self._offsets = numpy.zeros(shape, dtype=numpy.int32)
        self._n_parts = numpy.array([len(parts) for _, parts in templates], dtype=numpy.int32)
        cdef Py_ssize_t j, k
        for j, (_, parts) in enumerate(templates):
            for k, (column, offset) in enumerate(parts):
                self._columns[j, k] = column
                self._offsets[j, k] = offset

    def extract(self, const int32_t[::1] rows, const uint64_t[:, ::1] table, const int32_t[::1] sentence):
        """Hashed feature ids of every token.

        rows (int32[n]): Each token's row in the lexicon table.
        table (uint64[rows, attributes]): The lexicon table.
        sentence (int32[n]): Sentence number of each token; windows stop at
            sentence edges and see a padding value there instead.
        RETURNS (uint32[n, n_features]): Feature ids in [0, n_buckets).
        """
        cdef Py_ssize_t n = rows.shape[0]
        if sentence.shape[0] != n:
            raise ValueError(f"sentence must have a number per token ({n})")
        out = numpy.zeros((n, self.n_features), dtype=numpy.uint32)
        cdef uint32_t[:, ::1] out_view = out
        if n and self.n_features:
            with nogil:
                self.extract_rows(&rows[0], &table[0, 0], table.shape[1], &sentence[0], n, &out_view[0, 0],
                                  self.n_features)
        return out

    cdef void extract_rows(self, const int32_t* rows, const uint64_t* table, Py_ssize_t n_columns,
                           const int32_t* sentence, Py_ssize_t n, uint32_t* out, Py_ssize_t stride) noexcept nogil:
        """`extract` into the first n_features places of n rows of out, `stride` apart: the lexicon
        table's rows are n_columns long."""
        cdef Py_ssize_t i, j, k, at
        cdef uint64_t h, value
        for i in range(n):
            for j in range(self.n_features):
                h = self._seeds[j]
                for k in range(self._n_parts[j]):
                    at = i + self._offsets[j, k]
                    if at < 0 or at >= n or sentence[at] != sentence[i]:
                        value = 0x9e3779b97f4a7c15ULL * <uint64_t>(2 + (self._offsets[j, k] > 0))
                    else:
                        value = table[rows[at] * n_columns + self._columns[j, k]]
                    h = _mix(h ^ value)
                out[i * stride + j] = <uint32_t>_bucket(h, <uint64_t>self.n_buckets)

    def __reduce__(self):
        return (FeatureExtractor, (self._templates, self.n_buckets))
