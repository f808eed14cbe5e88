# cython: language_level=3
"""Screens: the cheap, exact tests that let most sentences skip a stage.

The short-form mentions of the layout (batch.py), the letter rules (letters.py),
and after Viterbi the entity bound (bounds.py) and the rules (rules.py) find
nothing in most sentences, and the numpy calls that find out cost more than the
loops below. Each screen says whether its stage can find anything; only then
does the stage run, in Python, from the start (after Viterbi, one call,
`AfterDecoding.run`, screens the bound and every rule). A screen
never decides what a stage finds: where it says yes, the stage may still find
nothing, and where it says no, the stage would have found nothing either
(tests/test_screens.py holds each to its stage).
"""
cimport numpy as cnp
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libcpp.vector cimport vector
from spacy.tokens.doc cimport Doc

from ..core.arrays cimport items_of
from ..core.decode cimport check_offsets_at
from ..core.features cimport count_tokens
from .definitions cimport closes, definition_in_window
from .list_parts cimport find_name_lists
from .lone_surnames cimport find_lone_surnames

from .long_forms import (
    LOOK_AHEAD, LOOK_BEHIND, MAX_SHORT_FORM, MAX_SHORT_FORM_PIECES, ORTH_HYPHEN, ORTH_OPENING,
)

cdef uint64_t _ORTH_OPENING = ORTH_OPENING, _ORTH_HYPHEN = ORTH_HYPHEN
cdef Py_ssize_t _LOOK_BEHIND = LOOK_BEHIND, _LOOK_AHEAD = LOOK_AHEAD
cdef Py_ssize_t _MAX_SHORT_FORM = MAX_SHORT_FORM, _MAX_PIECES = MAX_SHORT_FORM_PIECES


def continuing_run(const int32_t[::1] tags, const uint8_t[::1] continuing, Py_ssize_t length):
    """Whether `length` tags in a row continue an entity: with length 1, whether any entity has two
    tokens or more (the rules' screen); with the entity bound, whether an entity may be longer than it
    (within_bound's).

    tags (int32[n]): The decoded tags.
    continuing (bool[n_tags]): Whether each tag continues an entity (scheme.continuing()).
    """
    return has_continuing_run(&tags[0] if tags.shape[0] else NULL, tags.shape[0], &continuing[0], length)


cdef bint has_continuing_run(const int32_t* tags, Py_ssize_t n, const uint8_t* continuing,
                             Py_ssize_t length) noexcept nogil:
    cdef Py_ssize_t i, run = 0
    for i in range(n):
        run = run + 1 if continuing[tags[i]] else 0
        if run >= length:
            return True
    return False


# The steps after Viterbi, in the order decoder.decode runs them, as bits of AfterDecoding.run's answer.
BOUND, NAME_LISTS, SHORT_FORMS, SURNAMES = 1, 2, 4, 8


cdef class AfterDecoding:
    """The screens of the steps after Viterbi, all in one call, for one scheme and its settings.

    continuing (uint8[n_tags]): Whether each tag continues an entity (scheme.continuing_bytes()).
    person (uint8[n_tags]): Whether each tag is a person label's (`[rules] person_labels`), all 0 if none.
    n_moves (int): The scheme's moves per label.
    bound (int): The entity bound (bounds.entity_bound), 0 for none.
    name_lists (bool): Whether `[rules] split_name_lists` is on.
    made_of (tuple): What the screen was made for (decoder.after_decoding compares it).
    """
    cdef vector[uint8_t] _continuing, _person
    cdef Py_ssize_t _n_moves, _bound
    cdef bint _name_lists
    cdef readonly tuple made_of

    def __init__(self, const uint8_t[::1] continuing, const uint8_t[::1] person, Py_ssize_t n_moves,
                 Py_ssize_t bound, bint name_lists, tuple made_of):
        if person.shape[0] != continuing.shape[0]:
            raise ValueError("continuing and person must have a flag per tag")
        self._continuing.assign(&continuing[0], &continuing[0] + continuing.shape[0])
        self._person.assign(&person[0], &person[0] + person.shape[0])
        self._n_moves, self._bound, self._name_lists, self.made_of = n_moves, bound, name_lists, made_of

    def run(self, cnp.ndarray tags, cnp.ndarray offsets, cnp.ndarray words, cnp.ndarray names,
            cnp.ndarray short_form_starts):
        """The steps that may change a batch's tags, as an int of BOUND, NAME_LISTS, SHORT_FORMS and SURNAMES
        bits; a step whose bit is clear would leave every tag as it is.

        tags (int32[n]): The decoded tags, docs laid end to end (no whitespace tokens: the bound reads the
            trellis's rows).
        offsets (int64[n_docs + 1]): Where each doc starts, and the end.
        words (int32[n]): The lexicon row of each token.
        names (Optional[int64[k, >= 2]]): The known names' starts and ends (name_lists.known_names), or None.
        short_form_starts (Optional[bool[n]]): The first token of each short form labelled after decoding, or None.
        """
        cdef Py_ssize_t n = cnp.PyArray_SIZE(tags), n_tags = self._continuing.size(), i
        cdef const int32_t* tag_of = <const int32_t*>items_of(tags, cnp.NPY_INT32, n)
        for i in range(n):
            if tag_of[i] < 0 or tag_of[i] >= n_tags:
                raise ValueError(f"tag {tag_of[i]} at {i} is not one of the scheme's {n_tags}")
        cdef const int64_t* starts = <const int64_t*>items_of(offsets, cnp.NPY_INT64, 1)
        cdef Py_ssize_t n_docs = cnp.PyArray_SIZE(offsets) - 1
        check_offsets_at(starts, n_docs + 1, n)
        cdef const int32_t* rows = <const int32_t*>items_of(words, cnp.NPY_INT32, n)
        cdef const uint8_t* continuing = self._continuing.data()
        cdef int steps = 0
        if self._bound and has_continuing_run(tag_of, n, continuing, self._bound):
            steps |= BOUND
        if self._name_lists and names is not None and _has_name_list(names, tag_of, n, continuing):
            steps |= NAME_LISTS
        if short_form_starts is not None and _any_set(short_form_starts, n):
            steps |= SHORT_FORMS
        if find_lone_surnames(tag_of, rows, starts, n_docs, n, continuing, self._person.data(), self._n_moves,
                              NULL):
            steps |= SURNAMES
        return steps


cdef bint _has_name_list(cnp.ndarray names, const int32_t* tags, Py_ssize_t n, const uint8_t* continuing) except -1:
    if (cnp.PyArray_NDIM(names) != 2 or cnp.PyArray_TYPE(names) != cnp.NPY_INT64
            or cnp.PyArray_DIM(names, 1) < 2):
        raise ValueError("names must be int64 rows of (start, end)")
    cdef Py_ssize_t item = sizeof(int64_t)
    return find_name_lists(<const int64_t*>cnp.PyArray_DATA(names), cnp.PyArray_STRIDE(names, 0) // item,
                           cnp.PyArray_STRIDE(names, 1) // item, cnp.PyArray_DIM(names, 0), tags, n, continuing,
                           NULL, NULL)


cdef bint _any_set(cnp.ndarray flags, Py_ssize_t n) except -1:
    cdef const uint8_t* flag_of = <const uint8_t*>items_of(flags, cnp.NPY_BOOL, n)
    cdef Py_ssize_t i
    for i in range(n):
        if flag_of[i]:
            return True
    return False


def letter_docs(docs, const uint8_t[::1] is_space, first_words):
    """The docs of a batch (their indices, in order) that the letter rules read (letters.letter_marks):
    those with a whitespace token (lines to read), and those whose first token may open a salutation
    ("Hi Miles, ..." in one line). The stage reads no other doc.

    docs (Sequence[Doc]): The batch's docs, laid end to end in `is_space`.
    is_space (bool[n]): Whitespace tokens.
    first_words (frozenset[int]): The LOWER hashes of the words a salutation may open with.
    """
    docs = list(docs)
    cdef Py_ssize_t n = count_tokens(docs)
    if n > is_space.shape[0]:
        raise ValueError(f"is_space has {is_space.shape[0]} tokens, fewer than the docs")
    return screen_letters(docs, &is_space[0] if n else NULL, first_words)


cdef list screen_letters(list docs, const uint8_t* is_space, frozenset first_words):
    """letter_docs over is_space, a flag per token of the docs."""
    cdef Doc doc
    cdef Py_ssize_t d = 0, i, offset = 0
    read = []
    for doc in docs:
        if doc.length and doc.c[0].lex.lower in first_words:
            read.append(d)
        else:
            for i in range(offset, offset + doc.length):
                if is_space[i]:
                    read.append(d)
                    break
        offset += doc.length
        d += 1
    return read


def short_form_docs(docs, const int32_t[::1] rows, const uint8_t[::1] is_space, const int32_t[::1] sentence,
                    const uint8_t[::1] initials, const uint8_t[::1] capitals, const uint8_t[::1] long_enough,
                    bint acronyms, Py_ssize_t max_letters, uint8_t skipped):
    """The docs of the batch (their indices, in order) that define a short form (long_forms.definition_at
    finds one at one of their "("), or (with acronyms) may use an acronym undefined:
    an acronym as abbreviations.Initials finds them (a word in capitals long enough, with no word in
    capitals beside it, read across the docs) of ASCII letters, at most max_letters, that the
    initials of its doc's words spell (abbreviations.undefined_acronyms). Words are the tokens that
    are not whitespace, as the stage reads them.

    docs (Sequence[Doc]): The batch's docs, laid end to end in `rows`.
    rows (int32[n]): Each token's lexicon row.
    is_space (bool[n]): Whitespace tokens.
    sentence (int32[n]): Each token's sentence number (batch.Layout.sentence).
    initials (uint8[n_rows]): Each row's initial code (Initials); `skipped` for a hyphen.
    capitals, long_enough (bool[n_rows]): Each row's word is in capitals; is long enough for an acronym.
    acronyms (bool): Whether undefined acronyms count.
    RETURNS (Tuple[List[int], Dict[int, dict]]): those docs, and the definitions of each doc that has
        some, as long_forms.definitions_in finds them.
    """
    docs = list(docs)
    cdef Py_ssize_t n = count_tokens(docs), i
    if n > rows.shape[0] or n > is_space.shape[0] or n > sentence.shape[0]:
        raise ValueError(f"rows, is_space and sentence need a value per token ({n})")
    cdef Py_ssize_t n_rows = min(initials.shape[0], capitals.shape[0], long_enough.shape[0])
    for i in range(n):
        if not 0 <= rows[i] < n_rows:
            raise ValueError(f"row {rows[i]} outside the {n_rows} rows of initials, capitals and long_enough")
    if n == 0:
        return [], {}
    cdef ShortFormFlags flags
    flags.initials, flags.capitals, flags.long_enough = &initials[0], &capitals[0], &long_enough[0]
    flags.acronyms, flags.max_letters, flags.skipped = acronyms, max_letters, skipped
    return screen_short_forms(docs, &rows[0], &is_space[0], &sentence[0], &flags)


cdef tuple screen_short_forms(list docs, const int32_t* rows, const uint8_t* is_space, const int32_t* sentence,
                              const ShortFormFlags* flags):
    """short_form_docs over C arrays: a value per token of the docs, flags by lexicon row."""
    cdef vector[Py_ssize_t] words  # batch positions of the words
    cdef vector[uint64_t] orths  # the ORTH hash of each word
    cdef vector[int32_t] lengths  # its characters
    cdef vector[Py_ssize_t] doc_of  # the doc of each word
    cdef vector[Py_ssize_t] first_words  # where each doc's words begin among the words, and the end
    cdef vector[Py_ssize_t] first_tokens  # where each doc's tokens begin in the batch
    cdef Py_ssize_t i, w, d, offset = 0
    cdef Doc doc
    cdef const uint8_t* capitals = flags.capitals
    cdef const uint8_t* long_enough = flags.long_enough
    for d in range(len(docs)):
        doc = docs[d]
        first_words.push_back(words.size())
        first_tokens.push_back(offset)
        for i in range(offset, offset + doc.length):
            if not is_space[i]:
                words.push_back(i)
                orths.push_back(doc.c[i - offset].lex.orth)
                lengths.push_back(doc.c[i - offset].lex.length)
                doc_of.push_back(d)
        offset += doc.length
    first_words.push_back(words.size())
    cdef Py_ssize_t n = words.size()
    cdef vector[Py_ssize_t] candidates  # the words that may be acronyms
    cdef vector[uint8_t] flagged = vector[uint8_t](len(docs))
    defined = {}  # each doc's definitions, where it has some
    cdef Py_ssize_t checked = -1  # the last doc whose parentheses were read
    for w in range(n):
        d = doc_of[w]
        if orths[w] == _ORTH_OPENING and d != checked:
            checked = d
            doc = docs[d]
            found = _definitions(doc.vocab.strings, orths, lengths, words, sentence, first_words[d], first_words[d + 1])
            if found:
                defined[d] = found
                flagged[d] = 1
        if (flags.acronyms and capitals[rows[words[w]]] and long_enough[rows[words[w]]]
                and not (w > 0 and capitals[rows[words[w - 1]]])
                and not (w + 1 < n and capitals[rows[words[w + 1]]])):
            candidates.push_back(w)
    spelled = {}  # each doc's initials, hyphens skipped, made when one of its acronyms is looked for
    for w in candidates:
        d = doc_of[w]
        if flagged[d]:
            continue
        doc = docs[d]
        letters = doc.vocab.strings[doc.c[words[w] - first_tokens[d]].lex.orth].lower()
        if not (letters.isascii() and letters.isalpha()) or len(letters) > flags.max_letters:
            continue
        if d not in spelled:
            spelled[d] = _spelled(flags.initials, rows, words, first_words[d], first_words[d + 1], flags.skipped)
        if letters.encode("ascii") in spelled[d]:
            flagged[d] = 1
    return [d for d in range(len(docs)) if flagged[d]], defined


cdef dict _definitions(strings, const vector[uint64_t]& orths, const vector[int32_t]& lengths,
                       const vector[Py_ssize_t]& words, const int32_t* sentence, Py_ssize_t first, Py_ssize_t end):
    """long_forms.definitions_in of the doc whose words are first..end: each "(" is read with only the
    words definition_at may read around it (definitions.pyx searches them), so a long doc is not made
    into lists of all its words, and only where _may_define lets it ("( 1 )" in a sports result does not)."""
    found = {}
    cdef Py_ssize_t w, v, start, stop
    cdef vector[int32_t] window_sentences  # the sentence of each word of the window read around a "("
    for w in range(first, end):
        if orths[w] != _ORTH_OPENING:
            continue
        start, stop = max(first, w - _LOOK_BEHIND), min(end, w + _LOOK_AHEAD + 1)
        if not _may_define(orths, lengths, w, first, stop):
            continue
        window_sentences.clear()
        for v in range(start, stop):
            window_sentences.push_back(sentence[words[v]])
        definition = definition_in_window(strings, &orths[start], window_sentences.data(), stop - start, w - start)
        if definition is not None and definition[0] not in found:  # the first definition of a short form counts
            short, (a, b) = definition
            found[short] = (a + start - first, b + start - first)
    return found


cdef bint _may_define(const vector[uint64_t]& orths, const vector[int32_t]& lengths, Py_ssize_t w,
                      Py_ssize_t first, Py_ssize_t stop) noexcept:
    """What definition_at asks first of the "(" at word w, reading words up to `stop`: a word before
    it, then hyphen-joined pieces and a closer, of MAX_SHORT_FORM characters or fewer and two or more.
    Where this is false, definition_at finds nothing; where true, it decides."""
    cdef Py_ssize_t end = w + 2, v, n_chars = 0
    while end + 1 < stop and orths[end] == _ORTH_HYPHEN and end - w < 2 * _MAX_PIECES - 1:
        end += 2
    if w <= first or end >= stop or not closes(orths[end]):
        return False
    for v in range(w + 1, end):
        n_chars += lengths[v]
    return 2 <= n_chars <= _MAX_SHORT_FORM


cdef bytes _spelled(const uint8_t* initials, const int32_t* rows, const vector[Py_ssize_t]& words,
                    Py_ssize_t first, Py_ssize_t end, uint8_t skipped):
    """The initials of words[first:end], hyphens (`skipped`) left out, as undefined_acronyms spells them."""
    cdef vector[char] codes
    cdef Py_ssize_t w
    for w in range(first, end):
        if initials[rows[words[w]]] != skipped:
            codes.push_back(<char>initials[rows[words[w]]])
    return codes.data()[:codes.size()] if codes.size() else b""
