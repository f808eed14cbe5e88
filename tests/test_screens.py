"""The screens (ner/screens.pyx) against what their stages find: a screen that says no must be right;
and the rules' candidates found in C (lone_surnames.pyx) against numpy."""

import numpy
import pytest
import spacy
from conftest import drawn_tags
from hypothesis import given, settings
from hypothesis import strategies as st
from spacy.tokens import Doc

from spacy_bioner.core.features import Lexicon, batch_orths, words_of
from spacy_bioner.core.schemes import TagScheme
from spacy_bioner.core.templates import N_ATTRIBUTES, word_attributes
from spacy_bioner.ner.abbreviations import (
    MAX_SHORT_FORM,
    SKIPPED,
    Initials,
    Words,
    definitions,
    undefined_acronyms,
)
from spacy_bioner.ner.letters import SALUTATIONS
from spacy_bioner.ner.list_parts import name_list_parts
from spacy_bioner.ner.lone_surnames import lone_surnames
from spacy_bioner.ner.screens import (
    BOUND,
    NAME_LISTS,
    SHORT_FORMS,
    SURNAMES,
    AfterDecoding,
    continuing_run,
    letter_docs,
)

LABELS = ["LOC", "PER", "ORG"]
VOCAB = spacy.blank("en").vocab


@st.composite
def tagged_batches(draw):
    """Valid tags of docs laid end to end (each doc's entities drawn as spans), the doc offsets and word ids."""
    scheme = TagScheme(draw(st.sampled_from(["BILOU", "BIO"])), LABELS)
    tags, offsets = [], [0]
    for _ in range(draw(st.integers(1, 3))):
        n = draw(st.integers(1, 10))
        tags.extend(drawn_tags(draw, scheme, n, 3).tolist())
        offsets.append(offsets[-1] + n)
    words = draw(st.lists(st.integers(0, 4), min_size=len(tags), max_size=len(tags)))
    return scheme, numpy.array(tags, dtype=numpy.int32), numpy.array(offsets), numpy.array(words, dtype=numpy.int32)


@settings(max_examples=300)
@given(tagged_batches())
def test_lone_surnames_are_a_full_names_last_word_again_in_its_doc(batch):
    scheme, tags, offsets, words = batch
    continuing, person = scheme.continuing(), scheme.tags_of((0, 1))  # two person labels: the first name's is taken
    # a full name's last word again in its doc, untagged or a one-word other entity; the doc's first such name's label
    ends = (tags > 0) & ~continuing[numpy.append(tags[1:], 0)]
    full_name_ends = numpy.flatnonzero(ends & continuing[tags] & person[tags])
    open_to_relabel = (tags == 0) | (ends & ~continuing[tags] & ~person[tags])
    doc_of = numpy.searchsorted(offsets, numpy.arange(len(tags)), side="right") - 1
    label_of = {}
    for i in full_name_ends.tolist():
        label_of.setdefault((int(doc_of[i]), int(words[i])), scheme.label_of(int(tags[i])))
    expected = [
        [i, label_of[(int(doc_of[i]), int(words[i]))]]
        for i in numpy.flatnonzero(open_to_relabel).tolist()
        if (int(doc_of[i]), int(words[i])) in label_of
    ]
    found = lone_surnames(
        tags, words, offsets, continuing.view(numpy.uint8), person.view(numpy.uint8), len(scheme.moves)
    )
    assert found.tolist() == expected


@settings(max_examples=300)
@given(tagged_batches(), st.integers(1, 4))
def test_continuing_run_is_true_where_an_entity_is_longer_than_the_bound(batch, bound):
    scheme, tags, _, _ = batch
    longest = max((end - start for start, end, _ in scheme.to_spans(tags)), default=0)
    assert continuing_run(tags, scheme.continuing().view(numpy.uint8), bound) is (longest > bound)


def after_decoding(scheme, bound, name_lists=True, person_labels=(1,)):
    continuing = scheme.continuing().view(numpy.uint8)
    person = scheme.tags_of(person_labels).view(numpy.uint8)
    return AfterDecoding(continuing, person, len(scheme.moves), bound, name_lists, ())


@settings(max_examples=300)
@given(tagged_batches(), st.integers(0, 4), st.data())
def test_after_decoding_flags_exactly_the_steps_whose_own_test_finds_something(batch, bound, data):
    scheme, tags, offsets, words = batch
    n = len(tags)
    starts = numpy.array(data.draw(st.lists(st.integers(0, n - 1), max_size=3)), dtype=numpy.int64)
    lengths = data.draw(st.lists(st.integers(1, 3), min_size=len(starts), max_size=len(starts)))
    ends = starts + numpy.array(lengths, dtype=numpy.int64)
    names = numpy.stack([starts, ends, starts, starts], axis=1)  # memory matches' rows: (start, end, label, 0)
    short_form_starts = numpy.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    continuing, person = scheme.continuing().view(numpy.uint8), scheme.tags_of((1,)).view(numpy.uint8)
    steps = after_decoding(scheme, bound).run(tags, offsets, words, names, short_form_starts)
    assert bool(steps & BOUND) is (bound > 0 and continuing_run(tags, continuing, bound))
    assert bool(steps & NAME_LISTS) is (len(name_list_parts(names[:, :2], tags, continuing)[0]) > 0)
    assert bool(steps & SHORT_FORMS) is bool(short_form_starts.any())
    found = lone_surnames(tags, words, offsets, continuing, person, len(scheme.moves))
    assert bool(steps & SURNAMES) is (len(found) > 0)
    # Off in the settings, or without names and short forms: never flagged.
    assert not after_decoding(scheme, 0, name_lists=False, person_labels=()).run(tags, offsets, words, names, None)


def test_after_decoding_refuses_tags_and_offsets_it_cannot_read():
    scheme = TagScheme("BILOU", LABELS)
    screen = after_decoding(scheme, 2)
    tags, words = numpy.array([0, 1, 0], dtype=numpy.int32), numpy.zeros(3, dtype=numpy.int32)
    offsets = numpy.array([0, 3])
    with pytest.raises(ValueError, match="not one of the scheme's"):
        screen.run(numpy.array([0, scheme.n_tags, 0], dtype=numpy.int32), offsets, words, None, None)
    with pytest.raises(ValueError, match="rise from 0 to 3"):
        screen.run(tags, numpy.array([0, 2]), words, None, None)
    with pytest.raises(ValueError, match="rise from 0 to 3"):
        screen.run(tags, numpy.array([0, 4, 3]), words, None, None)
    with pytest.raises(ValueError, match="int64 rows"):
        screen.run(tags, offsets, words, numpy.zeros((1, 2), dtype=numpy.int32), None)
    with pytest.raises(ValueError, match="C-ordered array"):
        screen.run(tags.astype(numpy.int64), offsets, words, None, None)


SHORT_FORM_WORDS = ["(", ")", "-", ";", "\n", "AF", "IDDM", "NATO", "ABC", "atrial", "Smith", "35", "UN", "insulin"]
SHORT_FORM_WORDS += ["dependent", "diabetes", "mellitus", "all", "boys", "can", "never", "ate", "trout", "only"]


@settings(max_examples=300)
@given(
    st.lists(st.lists(st.sampled_from(SHORT_FORM_WORDS), min_size=1, max_size=40), min_size=1, max_size=3),
    st.data(),
)
def test_docs_with_mentions_are_those_that_define_a_short_form_or_may_use_an_acronym(docs_words, data):
    """The layout's short-form stage reads the docs that define a short form (definitions) or, with
    acronyms, where an acronym Initials finds (over the words of the whole batch, line breaks passed
    over) is spelled by its doc's initials."""
    docs = [Doc(VOCAB, words=words) for words in docs_words]
    lexicon, initials = Lexicon(word_attributes, N_ATTRIBUTES), Initials()
    rows = lexicon.batch_rows(docs)
    is_space = numpy.array([token.is_space for doc in docs for token in doc])
    # sentence numbers that never fall, a new one at each doc
    sentence = numpy.cumsum(
        [data.draw(st.booleans()) or i == 0 for doc in docs for i in range(len(doc))], dtype=numpy.int32
    )
    offsets = numpy.cumsum([0] + [len(doc) for doc in docs])
    words, word_offsets = words_of(is_space, offsets[:-1])
    word_offsets = numpy.append(word_offsets, len(words)).tolist()
    word_orths = batch_orths(docs)[words]
    spans = list(zip(word_offsets, word_offsets[1:]))
    defining = {
        d for d, (a, b) in enumerate(spans) if definitions(Words(VOCAB.strings, word_orths[a:b], sentence[words[a:b]]))
    }
    codes, acronyms = initials(lexicon, rows[words])
    texts = [token.text for doc in docs for token in doc if not token.is_space]
    spelled = [codes[a:b].tobytes().replace(bytes([SKIPPED]), b"") for a, b in spans]
    doc_of = numpy.searchsorted(word_offsets, numpy.arange(len(words)), side="right") - 1
    using = {
        int(doc_of[w])
        for w in numpy.flatnonzero(acronyms).tolist()
        if texts[w].isascii()
        and texts[w].isalpha()
        and len(texts[w]) <= MAX_SHORT_FORM
        and texts[w].lower().encode() in spelled[doc_of[w]]
    }
    flagged, defined = initials.docs_with_mentions(lexicon, docs, rows, is_space, sentence, False)
    assert flagged == sorted(defining) and sorted(defined) == sorted(defining)
    for d, (a, b) in enumerate(spans):  # the definitions the stage reads, as definitions() finds them
        assert defined.get(d, {}) == definitions(Words(VOCAB.strings, word_orths[a:b], sentence[words[a:b]]))
    flagged, _ = initials.docs_with_mentions(lexicon, docs, rows, is_space, sentence, True)
    assert flagged == sorted(defining | using)
    # what the stage itself finds of undefined acronyms
    for d, (a, b) in enumerate(spans):
        doc_words = Words(VOCAB.strings, word_orths[a:b], sentence[words[a:b]])
        if undefined_acronyms(doc_words, {}, codes[a:b], acronyms[a:b]):
            assert d in using


def test_a_definition_read_from_the_words_around_its_parenthesis_is_that_of_the_whole_doc():
    """The screen reads each "(" with the LOOK_BEHIND words before it and LOOK_AHEAD after: a long form
    of the most words (15, for a short form of 10 letters) and a short form of the most pieces, in a
    long doc, are found as definitions() finds them over all its words."""
    filler = ["the", "report", "said", "."] * 6
    longest = ["alpha", "x", "x", "x", "x", "x", "b", "c", "d", "e", "f", "g", "h", "i", "j"]
    words = filler + longest + ["(", "ABCDEFGHIJ", ")"] + filler
    words += ["alpha", "beta", "cat", "dog", "eel", "fox", "(", "AB", "-", "CD", "-", "EF", ")"] + filler
    doc = Doc(VOCAB, words=words)
    lexicon, initials = Lexicon(word_attributes, N_ATTRIBUTES), Initials()
    rows = lexicon.batch_rows([doc])
    sentence = numpy.zeros(len(doc), dtype=numpy.int32)
    _, defined = initials.docs_with_mentions(lexicon, [doc], rows, numpy.zeros(len(doc), dtype=bool), sentence, False)
    expected = definitions(Words(VOCAB.strings, batch_orths([doc]), sentence))
    first = len(filler)
    assert expected[(VOCAB.strings["ABCDEFGHIJ"],)] == (first, first + len(longest))
    assert len(expected) == 2 and defined == {0: expected}


@settings(max_examples=200)
@given(
    st.lists(
        st.lists(st.sampled_from(["Hi", "hi", "DEAR", "Good", "Best", "Anna", ",", "\n", "\n\n", " "]), max_size=6),
        min_size=1,
        max_size=4,
    )
)
def test_letter_docs_are_those_with_lines_or_a_first_word_that_may_greet(docs_words):
    """The letter rules read a doc with a whitespace token, or one that opens with a salutation's first word."""
    docs = [Doc(VOCAB, words=words, spaces=[False] * len(words)) for words in docs_words]
    is_space = numpy.array([token.is_space for doc in docs for token in doc], dtype=numpy.bool_)
    first_words = {phrase[0] for phrase in SALUTATIONS}
    expected = [
        d for d, doc in enumerate(docs) if len(doc) and (any(t.is_space for t in doc) or doc[0].lower_ in first_words)
    ]
    hashes = frozenset(VOCAB.strings.add(word) for word in first_words)
    assert letter_docs(docs, is_space.view(numpy.uint8), hashes) == expected
