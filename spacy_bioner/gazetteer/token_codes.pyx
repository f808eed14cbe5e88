# cython: language_level=3
"""Tokens -> the string the gazetteer's automaton reads.

Every word of the term lists gets an id, written as CODE_LENGTH characters:
its base-64 digits, most significant first, each digit position drawing on its
own character range. Because the ranges are disjoint, a match can only start on
a first digit and end on a last one, so matches align with tokens. The
automaton takes four steps a token instead of one a byte, and no trie node has
more than 64 children: pyahocorasick scans a node's children in order, and on
CoNLL text with 1.2M place names base 64 matched 1.7x faster than base 256.

Only multi-token terms go to the automaton. A one-token term is found by its
word id here, and a token whose word is in no multi-token term is written as
one SEPARATOR character: that halves the automaton's work and its size.
"""
from cpython.array cimport array
from cython.operator cimport dereference as deref
from libc.stdint cimport int8_t, int32_t, int64_t, uint16_t, uint64_t
from libcpp.algorithm cimport stable_sort
from libcpp.vector cimport vector
from libcpp.unordered_map cimport unordered_map
from spacy.attrs cimport IS_SPACE
from spacy.lexeme cimport Lexeme
from spacy.tokens.doc cimport Doc

import ahocorasick
import numpy

cdef extern from "Python.h":
    object PyUnicode_FromKindAndData(int kind, const void* buffer, Py_ssize_t size)
    int PyUnicode_2BYTE_KIND

cdef enum:
    BASE = 64
    FIRST_DIGIT = 0x100  # digit d at position p is chr(FIRST_DIGIT + BASE * p + d)
    SEPARATOR_CHAR = 1  # a token in no multi-token term, and the break between docs
    UNKNOWN = -1  # cached word id of a token in no term
    SPACE = -2  # of a whitespace token

CODE_LENGTH = 4
SEPARATOR = chr(SEPARATOR_CHAR)
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
    RETURNS (Tuple[int, int, bool]): Terms added, terms skipped, whether any word was new.
    """
    cdef dict word_ids = tables.word_ids, label_index = tables.label_index, kb_index = tables.kb_index
    cdef list words = tables.words, labels = tables.labels, kb_ids = tables.kb_ids
    cdef array unit_keys = tables.unit_keys, in_phrases = tables.in_phrases, key_tokens = tables.key_tokens
    cdef array entry_keys = tables.added[0], entry_labels = tables.added[1], entry_kbs = tables.added[2]
    get_key, add_key = tables.automaton.get, tables.automaton.add_word
    cdef Py_ssize_t added = 0, skipped = 0, i, n
    cdef int64_t word_id
    cdef int key_id, label_id, kb
    cdef bint new_words = False
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
                new_words = True
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
            key_id = get_key(text, -1)
            if key_id < 0:
                key_id = len(key_tokens)
                add_key(text, key_id)
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
    return added, skipped, new_words


cdef struct Found:
    int64_t first, last, key


cdef bint _before(const Found& a, const Found& b) noexcept nogil:
    return a.first < b.first or (a.first == b.first and a.last - a.first < b.last - b.first)


cdef class TokenEncoder:
    """Caches word form hash -> word id, and writes the text of docs.

    word_id (Callable[[str], int]): The id of a token's text, -1 if no term has it.
    max_size (int): Cached forms kept before the cache starts over.
    """
    cdef unordered_map[uint64_t, int64_t] _ids
    cdef object _word_id
    cdef size_t _max_size

    def __init__(self, word_id, size_t max_size=1_000_000):
        self._word_id = word_id
        self._max_size = max_size

    def clear(self):
        """Forget cached ids (call when the term lists gain words)."""
        self._ids.clear()

    def match(self, docs, tables, relabel=None):
        """Every match of the term tables (tables.TermTables, compiled) in the docs laid end to end.

        The docs become the automaton's text: whitespace tokens are skipped, so
        multi-token terms match across any whitespace, and one SEPARATOR between
        docs stops matches crossing them. One-token terms are found by word id.
        One call from tokens to rows: for a sentence, the arrays and numpy calls
        between separate steps cost more than matching does.
        relabel (Optional[ndarray]): int64, a new label index for each term label,
            -1 to leave its matches out; the KB ids are then left out (0).
        RETURNS (ndarray): int64 rows (start, end, label, kb id) in positions
            of the batch, as _match_rows sorts them.
        """
        entry_offsets, entry_labels, entry_kbs = tables.compile()
        cdef const int32_t[::1] unit_keys = tables.unit_keys
        cdef const int8_t[::1] in_phrases = tables.in_phrases
        cdef const int32_t[::1] key_tokens = tables.key_tokens
        cdef Doc doc
        cdef Py_ssize_t i, n = 0, offset = 0
        cdef int64_t word, end, key
        cdef uint64_t orth
        cdef unordered_map[uint64_t, int64_t].iterator found
        cdef vector[uint16_t] chars
        cdef vector[int32_t] char_tokens  # the batch position of each character's token
        cdef vector[Found] matches
        cdef Found item
        for doc in docs:
            n += doc.length + 1
        if self._ids.size() + n > self._max_size:
            self._ids.clear()
        chars.reserve(4 * n)
        char_tokens.reserve(4 * n)
        for doc in docs:
            for i in range(doc.length):
                orth = doc.c[i].lex.orth
                found = self._ids.find(orth)
                if found != self._ids.end():
                    word = deref(found).second
                elif Lexeme.c_check_flag(doc.c[i].lex, IS_SPACE):
                    word = self._ids[orth] = SPACE
                else:
                    word = self._ids[orth] = self._word_id(doc.vocab.strings[orth])
                if word == SPACE:
                    continue
                if word >= 0 and unit_keys[word] >= 0:
                    item.first = item.last = offset + i
                    item.key = unit_keys[word]
                    matches.push_back(item)
                if word >= 0 and in_phrases[word]:
                    chars.resize(chars.size() + 4)
                    _write_code(&chars[chars.size() - 4], word)
                    char_tokens.insert(char_tokens.end(), 4, offset + i)
                elif chars.empty() or chars.back() != SEPARATOR_CHAR:  # one separator holds a run
                    chars.push_back(SEPARATOR_CHAR)
                    char_tokens.push_back(offset + i)
            offset += doc.length
            chars.push_back(SEPARATOR_CHAR)
            char_tokens.push_back(offset)
        if tables.automaton.kind == ahocorasick.AHOCORASICK:
            text = PyUnicode_FromKindAndData(PyUnicode_2BYTE_KIND, chars.data(), chars.size())
            for end, key in tables.automaton.iter(text):
                item.first = char_tokens[end - CODE_LENGTH * key_tokens[key] + 1]
                item.last = char_tokens[end]
                item.key = key
                matches.push_back(item)
        return _match_rows(matches, entry_offsets, entry_labels, entry_kbs, relabel)

    def __reduce__(self):
        return (TokenEncoder, (self._word_id, self._max_size))


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
    cdef const int64_t[:, :] rows = numpy.asarray(matches, dtype=numpy.int64).reshape(-1, 4)
    cdef Py_ssize_t[:, ::1] out = codes
    cdef Py_ssize_t k, i, start, end, label
    # Shortest first (stable), so where a token gets several codes of one label the last (longest) is kept.
    cdef vector[Coded] order
    cdef Coded match
    for k in range(rows.shape[0]):
        match.length, match.row = rows[k, 1] - rows[k, 0], k
        order.push_back(match)
    stable_sort(order.begin(), order.end(), _shorter)
    for match in order:
        start, end, label = rows[match.row, 0], rows[match.row, 1], rows[match.row, 2]
        if end - start == 1:
            out[start, label] = 4
            continue
        for i in range(start, end):
            out[i, label] = 2
        out[start, label], out[end - 1, label] = 1, 3
    return codes


cdef _match_rows(vector[Found]& found, const int64_t[::1] entry_offsets, const int32_t[::1] entry_labels,
                 const int32_t[::1] entry_kbs, const int64_t[::1] relabel):
    """The matches of keys found at tokens first..last, one row per entry of each key
    (an ambiguous term matches once per label and id): int64 (start, end, label, kb id),
    sorted by start, then length, then the order found (units before phrases), then the
    key's entry order. With `relabel`, labels are mapped and KB ids dropped (TokenEncoder.match)."""
    cdef Py_ssize_t n = 0
    cdef int64_t entry, label
    cdef Found item
    for item in found:
        n += entry_offsets[item.key + 1] - entry_offsets[item.key]
    stable_sort(found.begin(), found.end(), _before)
    rows = numpy.empty((n, 4), dtype=numpy.int64)
    cdef int64_t[:, ::1] out = rows
    n = 0
    for item in found:
        for entry in range(entry_offsets[item.key], entry_offsets[item.key + 1]):
            label = entry_labels[entry] if relabel is None else relabel[entry_labels[entry]]
            if label < 0:
                continue
            out[n, 0], out[n, 1], out[n, 2] = item.first, item.last + 1, label
            out[n, 3] = entry_kbs[entry] if relabel is None else 0
            n += 1
    return rows[:n]
