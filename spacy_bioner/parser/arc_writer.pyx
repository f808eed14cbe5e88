# cython: language_level=3
"""Parses -> token heads and dependency labels, written to the docs' tokens in C.

For each doc: its words take their parse's heads and labels; a sentence the parser was
given keeps one root (spaCy starts a sentence at every root); whitespace tokens hang from
the word before them in their sentence, else the word after, else the sentence's first
token; then spaCy's set_children_from_heads sets children and sentence starts, as
Doc.from_array([HEAD, DEP]) does.

arcs.py prepares what this reads (label ids to string ids; lifted arcs lowered).
"""
from libc.stdint cimport int32_t, int64_t, uint64_t
from libcpp.vector cimport vector
from spacy.structs cimport TokenC
from spacy.tokens.doc cimport Doc, set_children_from_heads


cdef struct Dependencies:
    uint64_t extra_root   # the arc of a word left without a head in a sentence that has its root already
    uint64_t whitespace   # the arc of a whitespace token
    uint64_t root         # the label of a whitespace token that is its sentence's root


cdef void _one_root(int start, int end, const vector[bint]& is_word, vector[int64_t]& heads,
                    vector[uint64_t]& deps, vector[int32_t]& n_dependents, uint64_t extra_root) noexcept nogil:
    """The unit's roots but the one with most dependents (the first of those) hang from it."""
    cdef int i, main = -1, n_roots = 0
    for i in range(start, end):
        n_dependents[i - start] = 0
    for i in range(start, end):
        if is_word[i] and start <= heads[i] < end:
            n_dependents[heads[i] - start] += 1  # a root counts itself, as every root does
    for i in range(start, end):
        if is_word[i] and heads[i] == i:
            n_roots += 1
            if main < 0 or n_dependents[i - start] > n_dependents[main - start]:
                main = i
    if n_roots < 2:
        return
    for i in range(start, end):
        if is_word[i] and heads[i] == i and i != main:
            heads[i] = main
            deps[i] = extra_root


cdef void _attach_whitespace(int start, int end, const vector[bint]& is_word, vector[int64_t]& heads,
                             vector[uint64_t]& deps, const Dependencies* labels) noexcept nogil:
    """Each whitespace token of the unit hangs from the word before it, else the word after it, else
    the unit's first token (the root of a unit of whitespace alone)."""
    cdef int i, before = -1, after = end
    for i in range(end - 1, start - 1, -1):  # the word after each token, or end
        if is_word[i]:
            after = i
        else:
            heads[i] = after
    for i in range(start, end):
        if is_word[i]:
            before = i
            continue
        if before >= 0:
            heads[i] = before
        elif heads[i] == end:
            heads[i] = start
        deps[i] = labels.root if heads[i] == i else labels.whitespace


cdef int _write(Doc doc, list units, const int64_t[::1] words, const int64_t[::1] word_heads,
                const uint64_t* word_deps, bint one_root_per_unit, const Dependencies* labels) except -1:
    cdef int n = doc.length, i, k, start, end
    cdef vector[int64_t] heads = vector[int64_t](n)
    cdef vector[uint64_t] deps = vector[uint64_t](n)
    cdef vector[bint] is_word = vector[bint](n)
    cdef vector[int32_t] n_dependents
    cdef TokenC* token
    if words.shape[0] != word_heads.shape[0]:
        raise ValueError("a parse needs one head per word")
    for i in range(n):
        heads[i] = i
    for k in range(words.shape[0]):
        i = words[k]
        if not 0 <= i < n or not 0 <= word_heads[k] < n:
            raise ValueError(f"word {i} with head {word_heads[k]} lies outside the doc's {n} tokens")
        heads[i], deps[i], is_word[i] = word_heads[k], word_deps[k], True
    for start, end in units:
        if not 0 <= start <= end <= n:
            raise ValueError(f"sentence ({start}, {end}) lies outside the doc's {n} tokens")
        if one_root_per_unit:
            n_dependents.resize(end - start)
            _one_root(start, end, is_word, heads, deps, n_dependents, labels.extra_root)
        if words.shape[0] < n:
            _attach_whitespace(start, end, is_word, heads, deps, labels)
    for i in range(n):
        token = &doc.c[i]
        token.head = heads[i] - i
        token.dep = deps[i]
    if n:
        set_children_from_heads(doc.c, 0, n)
    return 0


cdef Dependencies _dependencies(tuple extra_labels):
    cdef Dependencies labels
    labels.extra_root, labels.whitespace, labels.root = extra_labels
    return labels


def write_parses(list docs, list parses, const uint64_t[::1] label_deps, tuple extra_labels):
    """Write each parse (units, words, heads: int64 token offsets; labels: int32 label ids) to its doc;
    where the parse's sentences_given, each unit keeps one root.

    label_deps (uint64[n_labels]): Each label id's string id.
    extra_labels (Tuple[int, int, int]): String ids of the extra-root, whitespace and root labels.
    """
    cdef Dependencies labels = _dependencies(extra_labels)
    cdef vector[uint64_t] deps
    cdef const int32_t[::1] label_ids
    cdef int k, n_labels = label_deps.shape[0]
    for doc, parse in zip(docs, parses):
        if not parse.units:
            continue
        label_ids = parse.labels
        deps.resize(label_ids.shape[0])
        for k in range(label_ids.shape[0]):
            if not 0 <= label_ids[k] < n_labels:
                raise ValueError(f"label id {label_ids[k]} is not one of the parser's {n_labels} labels")
            deps[k] = label_deps[label_ids[k]]
        _write(doc, parse.units, parse.words, parse.heads, deps.data(), parse.sentences_given, &labels)


def write_parse(Doc doc, list units, const int64_t[::1] words, const int64_t[::1] heads, const uint64_t[::1] deps,
                bint sentences_given, tuple extra_labels):
    """Write one parse whose arcs carry string ids already (deps: one per word), as write_parses does."""
    cdef Dependencies labels = _dependencies(extra_labels)
    if deps.shape[0] != words.shape[0]:
        raise ValueError("a parse needs one label per word")
    _write(doc, units, words, heads, &deps[0] if deps.shape[0] else NULL, sentences_given, &labels)
