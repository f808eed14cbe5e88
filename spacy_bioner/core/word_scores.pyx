# cython: language_level=3
"""Emission scores of the templates that read a single word, cached per word.

Most templates read one token of the window: one attribute ("suffix3[0]",
"lower[-1]") or several of the same token ("usual_case[0]+case[0]"). With fixed
weights, what such a template adds to a token's tag scores depends only on the
word at that offset, so for each lexicon row the
sums over the templates of each offset are kept (one vector per offset), and
a token's score from all of them is one vector per offset: five additions
instead of some thirty hashed lookups. Templates that join two or more
tokens are still hashed per token (FeatureExtractor). For prediction with
the averaged weights only: training changes the weights every step.
"""
cimport numpy as cnp
from libc.stdint cimport int32_t, uint8_t, uint64_t

from .arrays cimport data_of, new_matrix
from .hashing cimport mix as _mix
from .prefetch cimport prefetch_row
from .weight_rows cimport WeightRows, weight_row

import numpy

# A word's vectors are asked for this many tokens before they are first read.
cdef Py_ssize_t _PREFETCH_DISTANCE = 4

cdef uint64_t _PADDING = 0x9E3779B97F4A7C15ULL  # FeatureExtractor's value outside the sentence, times 2 or 3
cdef enum:
    MAX_WORD_TEMPLATES = 256  # the single-word templates a WordScores takes: a word's rows are kept on the stack


def reads_one_word(parts) -> bool:
    """Whether a template's (column, offset) parts read one token at most (the bias reads none)."""
    return len({offset for _, offset in parts}) <= 1


def single_word_templates(templates):
    """The templates that read one token at most."""
    return [(seed, parts) for seed, parts in templates if reads_one_word(parts)]


cdef class WordScores:
    """Cached per-offset score vectors of single-word templates.

    templates (List[Tuple[int, List[Tuple[int, int]]]]): Seeds and (column,
        offset) parts, as FeatureExtractor takes them, at most one part each.
    n_buckets (int): Rows of the hashed weight table.
    """
    # Attributes are declared in word_scores.pxd, for ner/passes.pyx.

    def __init__(self, templates, uint64_t n_buckets):
        if not all(reads_one_word(parts) for _, parts in templates):
            raise ValueError("WordScores takes templates that read one token at most")
        words = [(seed, parts) for seed, parts in templates if parts]
        if len(words) > MAX_WORD_TEMPLATES:
            raise ValueError(f"WordScores takes at most {MAX_WORD_TEMPLATES} templates that read a word, "
                             f"got {len(words)}")
        offsets = [parts[0][1] for _, parts in words] or [0]
        self.min_offset = min(offsets)
        self.n_offsets = max(offsets) - self.min_offset + 1
        self._bias_seeds = numpy.array([seed for seed, parts in templates if not parts], dtype=numpy.uint64)
        self._seeds = numpy.array([seed for seed, _ in words], dtype=numpy.uint64)
        self._n_parts = numpy.array([len(parts) for _, parts in words], dtype=numpy.int32)
        columns = numpy.zeros((len(words), max([len(parts) for _, parts in words] + [1])), dtype=numpy.int32)
        for j, (_, parts) in enumerate(words):
            columns[j, : len(parts)] = [column for column, _ in parts]
        self._columns = columns
        self._slots = numpy.array([offset - self.min_offset for offset in offsets[: len(words)]], dtype=numpy.int32)
        self.n_buckets = n_buckets
        self._weights = None
        self._templates = templates

    def _reset(self, WeightRows weights, int generation, Py_ssize_t n_rows):
        cdef int n_tags = weights.n_tags
        cdef const float* w
        cdef Py_ssize_t j, slot, tag
        cdef int parts
        cdef uint64_t row, padding
        self._weights, self._generation = weights, generation
        self._cache = numpy.zeros((max(n_rows, 1024), self.n_offsets, n_tags), dtype=numpy.float32)
        self._filled = numpy.zeros(self._cache.shape[0], dtype=numpy.uint8)
        fixed = numpy.zeros((1 + self.n_offsets, n_tags), dtype=numpy.float32)
        cdef float[:, ::1] f = fixed
        for j in range(self._bias_seeds.shape[0]):
            w = weight_row(weights, self._bias_seeds[j] % self.n_buckets)
            for tag in range(n_tags):
                f[0, tag] += w[tag]
        for j in range(self._seeds.shape[0]):
            slot = self._slots[j]
            padding = _PADDING * <uint64_t>(2 + (slot + self.min_offset > 0))
            row = self._seeds[j]
            parts = self._n_parts[j]
            while parts > 0:  # as FeatureExtractor hashes the parts, each padded here
                row = _mix(row ^ padding)
                parts -= 1
            w = weight_row(weights, row % self.n_buckets)
            for tag in range(n_tags):
                f[1 + slot, tag] += w[tag]
        self._fixed = fixed

    cpdef scores(self, const int32_t[::1] rows, const uint64_t[:, ::1] table, const int32_t[::1] sentence,
                 WeightRows weights, int generation):
        """The single-word templates' scores of every token: float32[n, n_tags].

        rows, table, sentence: as FeatureExtractor.extract takes them.
        weights (WeightRows): The averaged emission weights (`AveragedPerceptron.scoring_rows`);
            new weights, or a new lexicon generation, empty the cache.
        generation (int): The lexicon's generation.
        """
        cdef Py_ssize_t n = rows.shape[0]
        if sentence.shape[0] != n:
            raise ValueError(f"sentence must have a number per token ({n})")
        cdef WordVectors vectors
        cdef cnp.ndarray out = new_matrix(n, weights.n_tags, cnp.NPY_FLOAT32)
        cdef float* scores = <float*>data_of(out)
        if n:
            _held = self.fill(&rows[0], n, &table[0, 0], table.shape[1], weights, generation, &vectors)
            with nogil:
                gather(&vectors, &rows[0], &sentence[0], n, scores)
        return out

    cdef tuple fill(self, const int32_t* rows, Py_ssize_t n, const uint64_t* table, Py_ssize_t n_columns,
                    WeightRows weights, int generation, WordVectors* vectors):
        """Work out the vectors of the rows that have none yet, and point `vectors` at the cache.
        With the GIL held, and with no Python between the rows, so that one thread writes a row and
        the row is marked filled only once written; `gather` then only reads.
        rows: n lexicon rows; table: the lexicon table, n_columns a row.
        RETURNS (tuple): The arrays `vectors` points into, to be held while it is read."""
        cdef Py_ssize_t max_row = 1, i
        for i in range(n):  # a loop, not numpy's max: for a sentence its call costs more than the loop
            max_row = max(max_row, rows[i] + 1)
        if weights is not self._weights or generation != self._generation:
            self._reset(weights, generation, max_row)
        if max_row > self._cache.shape[0]:
            self._cache, self._filled = _grown(self._cache.base, max_row), _grown(self._filled.base, max_row)
        cdef float* cache = &self._cache[0, 0, 0]
        cdef uint8_t* filled = &self._filled[0]
        cdef Py_ssize_t block = self.n_offsets * weights.n_tags
        cdef int32_t row
        for i in range(n):
            row = rows[i]
            if not filled[row]:
                self._fill(table + row * n_columns, weights, cache + row * block)
                filled[row] = 1
        vectors.rows, vectors.fixed = cache, &self._fixed[0, 0]
        vectors.min_offset, vectors.n_offsets, vectors.n_tags = self.min_offset, self.n_offsets, weights.n_tags
        return self._cache.base, self._fixed.base

    cdef void _fill(self, const uint64_t* attributes, WeightRows weights, float* vectors) noexcept nogil:
        """A word's vectors (n_offsets of n_tags, zeros before) from its attribute hashes: its templates'
        weight rows are all asked for first, so that they arrive together, not one cache miss after another."""
        cdef Py_ssize_t j, k, tag, n_tags = weights.n_tags
        cdef uint64_t bucket
        cdef const float* rows[MAX_WORD_TEMPLATES]
        cdef const float* source
        cdef float* vector
        for j in range(self._seeds.shape[0]):
            bucket = self._seeds[j]
            for k in range(self._n_parts[j]):
                bucket = _mix(bucket ^ attributes[self._columns[j, k]])
            rows[j] = weight_row(weights, bucket % self.n_buckets)
            prefetch_row(rows[j], n_tags)
        for j in range(self._seeds.shape[0]):
            # Pointers, not the memoryview's indexing: the compiler then adds a row's tags many at a time.
            vector, source = vectors + self._slots[j] * n_tags, rows[j]
            for tag in range(n_tags):
                vector[tag] += source[tag]

    def __reduce__(self):
        return (WordScores, (self._templates, self.n_buckets))  # a copy starts with an empty cache


cdef void gather(const WordVectors* vectors, const int32_t* rows, const int32_t* sentence, Py_ssize_t n,
                 float* out) noexcept nogil:
    """Each token's score (out: n rows of n_tags) from the filled vectors of the words around it."""
    cdef Py_ssize_t i, slot, at, tag, n_tags = vectors.n_tags, n_offsets = vectors.n_offsets
    cdef Py_ssize_t block = n_offsets * n_tags
    cdef const float* vector
    cdef float* scores
    # A word's vectors are asked for before the first token that reads them: the cache is far larger
    # than the CPU's, and a batch's words are scattered through it.
    cdef Py_ssize_t ahead = vectors.min_offset + n_offsets - 1 + _PREFETCH_DISTANCE
    for at in range(min(n, ahead)):
        prefetch_row(vectors.rows + rows[at] * block, block)
    for i in range(n):
        if i + ahead < n:
            prefetch_row(vectors.rows + rows[i + ahead] * block, block)
        scores = out + i * n_tags
        for tag in range(n_tags):
            scores[tag] = vectors.fixed[tag]
        for slot in range(n_offsets):
            at = i + slot + vectors.min_offset
            if at < 0 or at >= n or sentence[at] != sentence[i]:
                vector = vectors.fixed + (1 + slot) * n_tags
            else:
                vector = vectors.rows + rows[at] * block + slot * n_tags
            for tag in range(n_tags):
                scores[tag] += vector[tag]


def _grown(array, Py_ssize_t n_rows):
    """The array with at least n_rows rows, doubled; the new rows zero. The old rows are copied into
    numpy.zeros, not concatenated with zeros: rows no word has filled then stay unwritten pages, which
    take no memory until a word is scored."""
    grown = numpy.zeros((max(n_rows, 2 * array.shape[0]),) + array.shape[1:], dtype=array.dtype)
    grown[: array.shape[0]] = array
    return grown
