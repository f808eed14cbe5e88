# cython: language_level=3
"""Tokens -> a batch's layout for prediction, read from the docs in one compiled call.

`batch.lay_out` builds a Layout stage by stage: the docs laid end to end
(features.batch_layout), their lexicon rows (Lexicon.rows_and_mentions), the
short-form screen (screens.short_form_docs), the entity memory's matches and
their codes, the letter rules' screen. For a sentence, the Python calls and
arrays between the stages cost more than their loops. `LayoutPass.run` does the
same steps with the same kernels, over C arrays, and hands `lay_out` what they
found; the stages after the screens (the short forms a doc defines, the letter
marks, line ends) run only where a screen lets a doc through, as before.
Training lays out its batches through the stages (it matches the memory by
fold); tests/test_layout.py holds the two to the same arrays.
"""
cimport numpy as cnp
from libc.stdint cimport int32_t, int64_t, uint8_t
from libcpp.vector cimport vector

from ..core.arrays cimport data_of, new_array, new_matrix
from ..core.features cimport Lexicon, count_tokens, fill_layout
from ..gazetteer.token_codes cimport MatchRow, TokenEncoder, fill_match_codes, rows_array
from .screens cimport ShortFormFlags, screen_letters, screen_short_forms

import numpy

from .abbreviations import MAX_SHORT_FORM, SKIPPED


cdef class LayoutPass:
    """The steps of `batch.lay_out` up to its screens, for one lexicon, memory and label set.

    lexicon (features.Lexicon): The featurizer's word table.
    initials (abbreviations.Initials): Its short-form flags by row; None: no short-form screen.
    acronyms (bool): Whether the screen counts undefined acronyms (`[rules] acronym_labels`).
    memory (Optional[Gazetteer]): The entity memory's entries; None without the memory family.
    relabel (Optional[int64[n_memory_labels]]): Each memorized label's index among the labels, -1 for none.
    n_labels (int): The component's labels (the codes' columns).
    sentence_ends, lowercase_docs (bool): As batch_layout and rows_and_mentions take them.
    first_words (Optional[frozenset]): The letter rules' screen's words; None: the rules are off.
    settings (Settings): The settings these were read from.
    """
    cdef Lexicon _lexicon
    cdef object _initials
    cdef bint _acronyms, _sentence_ends, _lowercase_docs, _memory_family, _match_memory
    cdef TokenEncoder _encoder
    cdef object _tables
    cdef const int64_t[::1] _relabel
    cdef Py_ssize_t _n_labels
    cdef object _first_words
    cdef object _flag_arrays  # the initials' arrays the flags below point into
    cdef ShortFormFlags _flags
    cdef int _flags_generation  # the lexicon's generation and rows when the flags were last brought up to it
    cdef Py_ssize_t _flags_rows
    cdef readonly tuple made_of

    def __init__(self, Lexicon lexicon, initials, bint acronyms, memory, relabel, Py_ssize_t n_labels,
                 bint sentence_ends, bint lowercase_docs, first_words, settings):
        self._lexicon, self._initials, self._acronyms = lexicon, initials, acronyms
        self._sentence_ends, self._lowercase_docs, self._n_labels = sentence_ends, lowercase_docs, n_labels
        self._first_words = first_words
        self._memory_family = memory is not None
        self._match_memory = memory is not None and len(memory) > 0
        if self._match_memory:
            self._encoder, self._tables = memory._encoder, memory.tables
            self._relabel = numpy.ascontiguousarray(relabel, dtype=numpy.int64)
            if self._relabel.shape[0] < len(memory.labels):
                raise ValueError(f"relabel has {self._relabel.shape[0]} labels; the memory has {len(memory.labels)}")
        self.made_of = (lexicon, initials, memory, settings, n_labels)
        self._flag_arrays = None

    def made_from(self, lexicon, initials, memory, settings, Py_ssize_t n_labels):
        """Whether these are the objects it was made from (`is`: a test as cheap as the call's), for as many
        labels (labels are only ever added; a new label set makes a new lexicon)."""
        cdef tuple made_of = self.made_of
        return (made_of[0] is lexicon and made_of[1] is initials and made_of[2] is memory and made_of[3] is settings
                and made_of[4] == n_labels)

    def run(self, docs):
        """The docs laid out, and what the screens let through.

        RETURNS (tuple): offsets (int64[n_docs + 1]), sentence (int32[n]), sent_starts (bool[n]),
            is_space (bool[n]), rows (int32[n]), mentions (int32[n]), spaced (bool), the short-form screen's
            (docs, definitions) or None without it, the letter screen's docs or None without it, and the
            memory's matches (int64[k, 4]) and codes (intp[n, n_labels]), or None without the memory.
        """
        docs = list(docs)
        cdef Py_ssize_t n = count_tokens(docs), i
        cdef cnp.ndarray offsets = new_array(len(docs) + 1, cnp.NPY_INT64, zeroed=True)
        cdef cnp.ndarray sentence = new_array(n, cnp.NPY_INT32), sent_starts = new_array(n, cnp.NPY_BOOL)
        cdef cnp.ndarray is_space = new_array(n, cnp.NPY_BOOL), rows = new_array(n, cnp.NPY_INT32)
        cdef cnp.ndarray mentions = new_array(n, cnp.NPY_INT32)
        cdef const uint8_t* spaces = <const uint8_t*>data_of(is_space)
        cdef const int32_t* row_ids = <const int32_t*>data_of(rows)
        cdef bint spaced = False
        short_forms = letters = matches = codes = None
        if n:
            fill_layout(docs, self._sentence_ends, <int64_t*>data_of(offsets), <int32_t*>data_of(sentence),
                        <uint8_t*>data_of(sent_starts), <uint8_t*>spaces)
            self._lexicon.fill_rows_and_mentions(docs, n, self._lowercase_docs, <int32_t*>row_ids,
                                                 <int32_t*>data_of(mentions))
        for i in range(n):
            if spaces[i]:
                spaced = True
                break
        if self._initials is not None:
            short_forms = ([], {}) if n == 0 else screen_short_forms(
                docs, row_ids, spaces, <const int32_t*>data_of(sentence), self._flags_now())
        if self._first_words is not None:
            letters = screen_letters(docs, spaces, self._first_words)
        if self._memory_family:
            matches, codes = self._memory_codes(docs, n)
        return offsets, sentence, sent_starts, is_space, rows, mentions, spaced, short_forms, letters, matches, codes

    cdef const ShortFormFlags* _flags_now(self) except NULL:
        """The initials' flags for every row of the lexicon, as Initials.docs_with_mentions reads them."""
        if (self._flag_arrays is not None and self._flags_generation == self._lexicon.generation
                and self._flags_rows == len(self._lexicon)):
            return &self._flags  # no row since the last call: the initials have nothing new to work out
        initials = self._initials
        initials._update(self._lexicon)
        arrays = (initials._codes, initials._capitals, initials._long)
        cdef const uint8_t[::1] codes, capitals, long_enough
        if self._flag_arrays is None or any(a is not b for a, b in zip(arrays, self._flag_arrays)):
            codes, capitals, long_enough = arrays  # replaced when they grow: pointers taken anew
            if min(codes.shape[0], capitals.shape[0], long_enough.shape[0]) < len(self._lexicon):
                raise ValueError("the initials' flags have fewer rows than the lexicon")
            self._flags.initials, self._flags.capitals, self._flags.long_enough = (
                &codes[0], &capitals[0], &long_enough[0])
            self._flags.acronyms, self._flags.max_letters, self._flags.skipped = (
                self._acronyms, MAX_SHORT_FORM, SKIPPED)
            self._flag_arrays = arrays
        self._flags_generation, self._flags_rows = self._lexicon.generation, len(self._lexicon)
        return &self._flags

    cdef tuple _memory_codes(self, list docs, Py_ssize_t n):
        """The memory's matches (EntityMemory.match_laid_out) and their codes (match_codes)."""
        cdef vector[MatchRow] found
        if self._match_memory and n:
            self._encoder.find_rows(docs, self._tables, &self._relabel[0], found)
        cdef cnp.ndarray codes = new_matrix(n, self._n_labels, cnp.NPY_INTP, zeroed=True)
        if found.size() and self._n_labels:
            fill_match_codes(found.data(), found.size(), self._n_labels, <Py_ssize_t*>data_of(codes))
        return rows_array(found), codes
