# cython: language_level=3
"""Tokens -> word ids -> the matches of the gazetteer's terms.

Every word of the term lists gets an id. A one-token term is found by its
word id; a longer one by the word automaton (automaton.pyx), which steps
along the word ids of the tokens. A token whose word is in no multi-token
term resets it: that is most tokens, and they cost one lookup each.

Term keys are kept as strings of their words' codes, CODE_LENGTH characters
a word (its base-64 digits, most significant first, each digit position
drawing on its own character range): compact to store, and the automaton
reads them back as word ids.
"""
from cpython.array cimport array
from libc.stdint cimport int8_t, int32_t, int64_t, uint16_t, uint64_t
from libc.string cimport memcpy
from libcpp.algorithm cimport stable_sort
from libcpp.vector cimport vector
from spacy.attrs cimport IS_SPACE
from spacy.lexeme cimport Lexeme
from spacy.tokens.doc cimport Doc

from .automaton cimport WordAutomaton

import numpy

cdef extern from "Python.h":
    object PyUnicode_FromKindAndData(int kind, const void* buffer, Py_ssize_t size)
    int PyUnicode_2BYTE_KIND

cdef extern from *:
    void _prefetch "__builtin_prefetch"(const void* address) noexcept nogil

cdef enum:
    PREFETCH_AHEAD = 8  # tokens, keys: a cell or a key's entries are fetched while earlier ones are read

cdef enum:
    BASE = 64
    FIRST_DIGIT = 0x100  # digit d at position p is chr(FIRST_DIGIT + BASE * p + d)
    UNKNOWN = -1  # cached word id of a token in no term
    SPACE = -2  # of a whitespace token
    FIRST_CELLS_BITS = 10  # an empty word cache has 2 ** 10 cells

cdef uint64_t MIX = 0x9E3779B97F4A7C15  # Fibonacci hashing: spreads word forms over the cells

CODE_LENGTH = 4
MAX_WORDS = BASE ** CODE_LENGTH


cdef inline void _write_code(uint16_t* out, int64_t word) noexcept nogil:
    out[0] = FIRST_DIGIT + (word >> 18)
    out[1] = FIRST_DIGIT + BASE + ((word >> 12) & 63)
    out[2] = FIRST_DIGIT + 2 * BASE + ((word >> 6) & 63)
    out[3] = FIRST_DIGIT + 3 * BASE + (word & 63)


def word_code(int64_t word_id) -> str:
    """The CODE_LENGTH characters that stand for a word id (as the encoder and term keys write them)."""
    if not 0 <= word_id < MAX_WORDS:
        raise ValueError(f"Gazetteer word id {word_id} outside 0..{MAX_WORDS - 1}: too many distinct words.")
    cdef uint16_t code[4]
    _write_code(code, word_id)
    return PyUnicode_FromKindAndData(PyUnicode_2BYTE_KIND, code, CODE_LENGTH)


cdef inline int _index_of(value, dict index, list values) except -1:
    """The position of a value in a list kept with its index, appended if new."""
    found = index.get(value)
    if found is None:
        found = index[value] = len(values)
        values.append(value)
    return found


def add_terms(tables, list terms, list term_words):
    """Add terms to a gazetteer's TermTables (tables.py), given each term's normalized words:
    the inner loop of loading millions of terms.

    New words get the next word id; a one-token term keys on its word, a
    longer one on its words' codes in the automaton; each (key, label, KB id)
    is appended to the entries.
    terms (List[Tuple[str, str, str]]): (term, label, KB id) triples.
    term_words (List[List[str]]): The normalized words of each term; empty to skip it.
    RETURNS (Tuple[int, int]): Terms added, terms skipped.
    """
    cdef dict word_ids = tables.word_ids, label_index = tables.label_index, kb_index = tables.kb_index
    cdef list words = tables.words, labels = tables.labels, kb_ids = tables.kb_ids
    cdef array unit_keys = tables.unit_keys, in_phrases = tables.in_phrases, key_tokens = tables.key_tokens
    cdef array entry_keys = tables.added[0], entry_labels = tables.added[1], entry_kbs = tables.added[2]
    cdef dict phrase_keys = tables.phrase_keys
    cdef Py_ssize_t added = 0, skipped = 0, i, n
    cdef int64_t word_id
    cdef int key_id, label_id, kb
    cdef list term_words_i
    cdef vector[int64_t] ids
    cdef vector[uint16_t] key
    for term, term_words_i in zip(terms, term_words):
        n = len(term_words_i)
        if n == 0:
            skipped += 1
            continue
        ids.clear()
        for word in term_words_i:
            found = word_ids.get(word)
            if found is None:
                word_id = len(words)
                if word_id == MAX_WORDS:
                    raise ValueError(f"Gazetteer full: more than {MAX_WORDS:,} distinct words in its terms.")
                word_ids[word] = word_id
                words.append(word)
                unit_keys.append(-1)
                in_phrases.append(0)
            else:
                word_id = found
            ids.push_back(word_id)
        if n == 1:
            key_id = unit_keys.data.as_ints[ids[0]]
            if key_id < 0:
                key_id = unit_keys.data.as_ints[ids[0]] = len(key_tokens)
                key_tokens.append(1)
        else:
            key.resize(CODE_LENGTH * n)
            for i in range(n):
                _write_code(&key[CODE_LENGTH * i], ids[i])
            text = PyUnicode_FromKindAndData(PyUnicode_2BYTE_KIND, key.data(), key.size())
            key_id = phrase_keys.get(text, -1)
            if key_id < 0:
                key_id = phrase_keys[text] = len(key_tokens)
                key_tokens.append(n)
                for i in range(n):
                    in_phrases.data.as_schars[ids[i]] = 1
        label_id = _index_of(term[1], label_index, labels)
        kb_id = term[2]
        kb = _index_of(kb_id if type(kb_id) is str else str(kb_id or ""), kb_index, kb_ids)
        entry_keys.append(key_id)
        entry_labels.append(label_id)
        entry_kbs.append(kb)
        added += 1
    return added, skipped


cdef struct Found:
    int64_t first, last, key


cdef bint _before(const Found& a, const Found& b) noexcept nogil:
    return a.first < b.first or (a.first == b.first and a.last - a.first < b.last - b.first)


cdef class TokenEncoder:
    """Caches what the term tables say of each word form (by hash), and matches docs.
    One probe of this cache, which holds the forms of the text read, is all a token
    costs unless it is in a multi-token term: the tables by word id are far bigger.
    A form's cell holds the form's hash and what the tables say of it, so that a probe
    reads one place in memory (a map to a list of words read two).

    word_id (Callable[[str], int]): The id of a token's text, -1 if no term has it.
    max_size (int): Cached forms kept before the cache starts over.
    """
    def __init__(self, word_id, size_t max_size=1_000_000):
        self._word_id = word_id
        self._max_size = max_size
        self.clear()

    def clear(self):
        """Forget the cached words (call whenever terms are added)."""
        cdef WordCell free
        free.orth = 0
        self._cells.assign(1 << FIRST_CELLS_BITS, free)
        self._shift = 64 - FIRST_CELLS_BITS
        self._n_words = 0
        self._entries_of = None

    cdef WordCell* _cell(self, uint64_t orth) noexcept nogil:
        """The cell of a word form: its own, or the free one where it would go."""
        cdef size_t mask = self._cells.size() - 1
        cdef size_t slot = (orth * MIX) >> self._shift
        while self._cells[slot].orth != 0 and self._cells[slot].orth != orth:
            slot = (slot + 1) & mask
        return &self._cells[slot]

    cdef Word _new_word(self, Doc doc, Py_ssize_t i, tables, WordAutomaton automaton) except *:
        """What the tables say of a doc's token, found and cached by its form (the empty form,
        hash 0, is not cached)."""
        cdef uint64_t orth = doc.c[i].lex.orth
        cdef const int32_t[::1] unit_keys = tables.unit_keys
        cdef const int8_t[::1] in_phrases = tables.in_phrases
        cdef Word word
        word.id = SPACE if Lexeme.c_check_flag(doc.c[i].lex, IS_SPACE) else self._word_id(doc.vocab.strings[orth])
        word.unit_key = unit_keys[word.id] if word.id >= 0 else -1
        word.in_phrase = word.id >= 0 and in_phrases[word.id]
        word.root_child = automaton.step(0, word.id) if word.in_phrase else -1
        if orth == 0:
            return word
        if 2 * (self._n_words + 1) > self._cells.size():
            self._grow()
        cdef WordCell* cell = self._cell(orth)
        cell.orth, cell.word = orth, word
        self._n_words += 1
        return word

    cdef void _grow(self) noexcept:
        """Twice the cells, the words placed again."""
        cdef vector[WordCell] old
        old.swap(self._cells)
        cdef WordCell free
        free.orth = 0
        self._cells.assign(2 * old.size(), free)
        self._shift -= 1
        for cell in old:
            if cell.orth != 0:
                self._cell(cell.orth)[0] = cell

    def match(self, docs, tables, relabel=None):
        """Every match of the term tables (tables.TermTables, compiled) in the docs laid end to end.

        Whitespace tokens are skipped, so multi-token terms match across any
        whitespace; no match crosses from one doc into the next.
        relabel (Optional[ndarray]): int64, a new label index for each term label,
            -1 to leave its matches out; the KB ids are then left out (0).
        RETURNS (ndarray): int64 rows (start, end, label, kb id) in positions
            of the batch, as find_rows sorts them.
        """
        cdef vector[MatchRow] found
        cdef const int64_t[::1] new_labels
        if relabel is None:
            self.find_rows(docs, tables, NULL, found)
        else:
            new_labels = numpy.ascontiguousarray(relabel, dtype=numpy.int64)
            if new_labels.shape[0] < len(tables.labels):
                raise ValueError(f"relabel has {new_labels.shape[0]} labels; the gazetteer has {len(tables.labels)}.")
            self.find_rows(docs, tables, &new_labels[0] if new_labels.shape[0] else NULL, found)
        return rows_array(found)

    cdef int find_rows(self, docs, tables, const int64_t* relabel, vector[MatchRow]& rows) except -1:
        """`match` into `rows`, with no array made: one call from tokens to rows, as for a
        sentence the arrays and calls between separate steps cost more than matching does."""
        entries = tables.entries
        if entries is None:
            entries = tables.compile()
        cdef WordAutomaton automaton = tables.word_automaton
        key_tokens = tables.key_tokens
        if self._entries_of is None or self._entries_of[0] is not entries or self._entries_of[1] is not key_tokens:
            self._point_at(entries, key_tokens)
        cdef Doc doc
        cdef Py_ssize_t i, n = 0, offset = 0
        cdef Word word
        cdef WordCell* cell
        cdef int32_t state, node
        cdef vector[int64_t] run  # batch positions of the words read since the automaton last reset
        cdef vector[Found] matches
        cdef Found item
        for doc in docs:
            n += doc.length
        if self._n_words + n > self._max_size:
            self.clear()
        cdef vector[uint64_t] orths  # the doc's word forms, read first: the loads do not wait on one another
        for doc in docs:
            state = 0
            run.clear()
            orths.resize(doc.length)
            for i in range(doc.length):
                orths[i] = doc.c[i].lex.orth
            for i in range(doc.length):
                if i + PREFETCH_AHEAD < doc.length:  # the cell a later token probes first
                    _prefetch(&self._cells[(orths[i + PREFETCH_AHEAD] * MIX) >> self._shift])
                cell = self._cell(orths[i])
                word = cell.word if cell.orth != 0 else self._new_word(doc, i, tables, automaton)
                if word.id == SPACE:
                    continue
                if word.unit_key >= 0:
                    item.first = item.last = offset + i
                    item.key = word.unit_key
                    matches.push_back(item)
                if not word.in_phrase:
                    state = 0
                    run.clear()
                    continue
                run.push_back(offset + i)
                state = automaton.advance(state, word.id, word.root_child)
                node = state if automaton.nodes[state].key >= 0 else automaton.nodes[state].output
                while node >= 0:
                    item.key = automaton.nodes[node].key
                    item.first = run[run.size() - self._entries.key_tokens[item.key]]
                    item.last = offset + i
                    matches.push_back(item)
                    node = automaton.nodes[node].output
            offset += doc.length
        _match_rows(matches, &self._entries, relabel, rows)
        return 0

    cdef int _point_at(self, tuple entries, key_tokens) except -1:
        """Take pointers into the compiled tables (TermTables.compile's entries, and the tokens of each
        key), kept until they are compiled again: for a sentence, views taken per call cost more than matching."""
        cdef const int64_t[::1] offsets = entries[0]
        cdef const int32_t[::1] labels = entries[1], kbs = entries[2], tokens = key_tokens
        if kbs.shape[0] != labels.shape[0] or offsets.shape[0] != tokens.shape[0] + 1:
            raise ValueError("the term tables' entries do not match their keys")
        self._entries.offsets = &offsets[0]
        self._entries.labels = &labels[0] if labels.shape[0] else NULL
        self._entries.kbs = &kbs[0] if kbs.shape[0] else NULL
        self._entries.key_tokens = &tokens[0] if tokens.shape[0] else NULL
        self._entries.n_entries = labels.shape[0]
        self._entries_of = (entries, key_tokens)
        return 0

    def __reduce__(self):
        return (TokenEncoder, (self._word_id, self._max_size))


cdef object rows_array(const vector[MatchRow]& rows):
    """MatchRows as int64 (n, 4) rows, `match`'s array."""
    found = numpy.empty((rows.size(), 4), dtype=numpy.int64)
    cdef int64_t[:, ::1] out = found
    if rows.size():
        memcpy(&out[0, 0], rows.data(), rows.size() * sizeof(MatchRow))
    return found


cdef struct Coded:
    Py_ssize_t length, row


cdef bint _shorter(const Coded& a, const Coded& b) noexcept nogil:
    return a.length < b.length


def match_codes(matches, int n_tokens, int n_labels):
    """Each token's place in a match of each label: intp (n_tokens, n_labels).

    0 none, 1 begin, 2 inside, 3 last, 4 unit (one-token match). Where matches
    of one label overlap, the longest one speaks (of equally long ones, the last).
    A loop, not numpy: a sentence has a few matches, and numpy's calls cost more than they do.
    """
    codes = numpy.zeros((n_tokens, n_labels), dtype=numpy.intp)
    rows = numpy.ascontiguousarray(numpy.asarray(matches, dtype=numpy.int64).reshape(-1, 4))
    cdef const int64_t[:, ::1] row_view = rows
    cdef Py_ssize_t[:, ::1] out = codes
    cdef Py_ssize_t k
    for k in range(row_view.shape[0]):
        if not (0 <= row_view[k, 0] < row_view[k, 1] <= n_tokens and 0 <= row_view[k, 2] < n_labels):
            raise ValueError(f"match {tuple(rows[k])} outside {n_tokens} tokens and {n_labels} labels")
    if row_view.shape[0]:
        fill_match_codes(<const MatchRow*>&row_view[0, 0], row_view.shape[0], n_labels, &out[0, 0])
    return codes


cdef void fill_match_codes(const MatchRow* rows, Py_ssize_t n_matches, Py_ssize_t n_labels,
                           Py_ssize_t* codes) noexcept:
    """match_codes of n_matches rows into codes (zeros, n_tokens by n_labels)."""
    cdef Py_ssize_t k, i, start, end, label
    # Shortest first (stable), so where a token gets several codes of one label the last (longest) is kept.
    cdef vector[Coded] order
    cdef Coded match
    for k in range(n_matches):
        match.length, match.row = rows[k].end - rows[k].start, k
        order.push_back(match)
    stable_sort(order.begin(), order.end(), _shorter)
    for match in order:
        start, end, label = rows[match.row].start, rows[match.row].end, rows[match.row].label
        if end - start == 1:
            codes[start * n_labels + label] = 4
            continue
        for i in range(start, end):
            codes[i * n_labels + label] = 2
        codes[start * n_labels + label], codes[(end - 1) * n_labels + label] = 1, 3


cdef void _match_rows(vector[Found]& found, const Entries* entries, const int64_t* relabel,
                      vector[MatchRow]& rows) noexcept:
    """The matches of keys found at tokens first..last, one row per entry of each key
    (an ambiguous term matches once per label and id): (start, end, label, kb id),
    sorted by start, then length, then the order found (units before phrases), then the
    key's entry order. With `relabel`, labels are mapped and KB ids dropped (TokenEncoder.match)."""
    cdef int64_t entry, label
    cdef Found item
    cdef MatchRow row
    cdef Py_ssize_t n = 0
    cdef const int64_t* offsets = entries.offsets
    for item in found:
        n += offsets[item.key + 1] - offsets[item.key]
    stable_sort(found.begin(), found.end(), _before)
    rows.clear()
    rows.reserve(n)
    cdef Py_ssize_t k
    for k in range(<Py_ssize_t>found.size()):
        if k + PREFETCH_AHEAD < <Py_ssize_t>found.size():  # a large list's entries miss the cache
            entry = offsets[found[k + PREFETCH_AHEAD].key]
            if entry < entries.n_entries:
                _prefetch(&entries.labels[entry])
                _prefetch(&entries.kbs[entry])
        item = found[k]
        for entry in range(offsets[item.key], offsets[item.key + 1]):
            label = entries.labels[entry] if relabel == NULL else relabel[entries.labels[entry]]
            if label < 0:
                continue
            row.start, row.end, row.label = item.first, item.last + 1, label
            row.kb = entries.kbs[entry] if relabel == NULL else 0
            rows.push_back(row)
