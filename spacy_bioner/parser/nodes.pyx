# cython: language_level=3
"""Docs -> the parser's nodes, and node heads -> the words' heads, each in one compiled call.

The parser reads each unit (a sentence, or a doc without sentences) as a root slot and then
its words, the tokens that are not whitespace. `lay_out_nodes` reads the docs' tokens in C
into those nodes (LOWER, TAG and SUFFIX, as Doc.to_array gives them); `word_heads` turns what
greedy.pyx or beam.pyx found for the nodes back into each word's head token. For a sentence,
the numpy calls that did this cost more than parsing it.
"""
from libc.stdint cimport int32_t, int64_t, uint64_t
from libcpp.vector cimport vector
from spacy.attrs cimport IS_SPACE
from spacy.lexeme cimport Lexeme
from spacy.tokens.doc cimport Doc

import numpy


def doc_units(list docs):
    """What the parser reads of each doc as its units: its sentences where it came with sentence starts
    (Doc.has_annotation("SENT_START"): a sentence per unit, as Doc.sents gives them), else the whole doc;
    and whether some doc with tokens has no part-of-speech tags (not Doc.has_annotation("TAG")). Read from
    the tokens in C: Doc.sents makes a Span a sentence, and each has_annotation call costs more than a
    sentence's loop.

    RETURNS (Tuple[List[bool], List[List[Tuple[int, int]]], bool]): whether each doc came with sentence
        starts; each doc's units, token offsets (start, end); whether a doc is untagged.
    """
    cdef Doc doc
    cdef Py_ssize_t i, start
    cdef bint given, tagged, untagged = False
    sentences_given, units = [], []
    for doc in docs:
        if doc.length == 0:
            sentences_given.append(False)
            units.append([])
            continue
        hooked = "sents" in doc.user_hooks
        given = hooked or doc.length == 1
        for i in range(1, doc.length):
            if given:
                break
            given = doc.c[i].sent_start != 0
        if hooked:
            own_units = [(sentence.start, sentence.end) for sentence in doc.sents]
        elif given:
            own_units, start = [], 0
            for i in range(1, doc.length):
                if doc.c[i].sent_start == 1:
                    own_units.append((start, i))
                    start = i
            own_units.append((start, doc.length))
        else:
            own_units = [(0, doc.length)]
        sentences_given.append(given)
        units.append(own_units)
        tagged = False
        for i in range(doc.length):
            if doc.c[i].tag != 0:
                tagged = True
                break
        untagged |= not tagged
    return sentences_given, units, untagged


def lay_out_nodes(list docs, list units, uint64_t root_word):
    """The nodes of the docs' units that have words, laid end to end.

    units (List[List[Tuple[int, int]]]): Each doc's units, token offsets (start, end).
    root_word (int): The value of each column of a root slot.
    RETURNS (Tuple): nodes (uint64[N, 3]); offsets (int64[n_units + 1]): where each unit's root slot
        is among the nodes; words (int64[n_words]): each word's token offset in its doc, docs and
        units in order; doc_words (int64[n_docs + 1]): where each doc's words begin among them;
        longest (int): the most words of a unit.
    """
    cdef Doc doc
    cdef Py_ssize_t d, i, start, end, n_nodes = 0, longest = 0, unit_words
    cdef vector[int64_t] word_offsets, unit_offsets, doc_words
    cdef vector[uint64_t] values
    if len(units) != len(docs):
        raise ValueError(f"{len(units)} lists of units for {len(docs)} docs")
    unit_offsets.push_back(0)
    for d in range(len(docs)):
        doc = docs[d]
        doc_words.push_back(word_offsets.size())
        for start, end in units[d]:
            if not 0 <= start <= end <= doc.length:
                raise ValueError(f"unit ({start}, {end}) lies outside a doc of {doc.length} tokens")
            unit_words = 0
            for i in range(start, end):
                if Lexeme.c_check_flag(doc.c[i].lex, IS_SPACE):
                    continue
                if unit_words == 0:  # the root slot
                    values.push_back(root_word)
                    values.push_back(root_word)
                    values.push_back(root_word)
                values.push_back(doc.c[i].lex.lower)
                values.push_back(doc.c[i].tag)
                values.push_back(doc.c[i].lex.suffix)
                word_offsets.push_back(i)
                unit_words += 1
            if unit_words:
                n_nodes += unit_words + 1
                unit_offsets.push_back(n_nodes)
                longest = max(longest, unit_words)
    doc_words.push_back(word_offsets.size())
    nodes = numpy.empty((n_nodes, 3), dtype=numpy.uint64)
    cdef uint64_t[:, ::1] node_view = nodes
    for i in range(n_nodes):
        node_view[i, 0], node_view[i, 1], node_view[i, 2] = values[3 * i], values[3 * i + 1], values[3 * i + 2]
    return nodes, _array(unit_offsets), _array(word_offsets), _array(doc_words), longest


cdef _array(const vector[int64_t]& values):
    array = numpy.empty(values.size(), dtype=numpy.int64)
    cdef int64_t[::1] view = array
    cdef Py_ssize_t i
    for i in range(<Py_ssize_t>values.size()):
        view[i] = values[i]
    return array


def word_heads(const int32_t[::1] node_heads, const int32_t[::1] node_labels, const int64_t[::1] offsets,
               const int64_t[::1] words):
    """Each word's head (the token offset of its head word in its doc; its own for a root) and label
    id, from the nodes' (node_heads: node index within the unit, 0 the root slot, as
    greedy.parse_batch gives them), with `lay_out_nodes`'s offsets and words.
    RETURNS (Tuple[int64[n_words], int32[n_words]])"""
    cdef Py_ssize_t u, k, first_word = 0, size
    cdef Py_ssize_t n_words = words.shape[0]
    if node_heads.shape[0] != node_labels.shape[0] or offsets.shape[0] < 1 or (
            offsets[offsets.shape[0] - 1] != node_heads.shape[0]) or (
            node_heads.shape[0] - (offsets.shape[0] - 1) != n_words):
        raise ValueError("node heads, labels, offsets and words do not fit together")
    heads = numpy.empty(n_words, dtype=numpy.int64)
    labels = numpy.empty(n_words, dtype=numpy.int32)
    cdef int64_t[::1] head_view = heads
    cdef int32_t[::1] label_view = labels
    cdef int32_t head
    for u in range(offsets.shape[0] - 1):
        size = offsets[u + 1] - offsets[u] - 1
        for k in range(1, size + 1):
            head = node_heads[offsets[u] + k]
            if not 0 <= head <= size:
                raise ValueError(f"node {k} of a unit of {size} words has head {head}")
            head_view[first_word + k - 1] = words[first_word + head - 1] if head > 0 else words[first_word + k - 1]
            label_view[first_word + k - 1] = node_labels[offsets[u] + k]
        first_word += size
    return heads, labels
