"""Docs to the parser's nodes and back (parser/nodes.pyx), against the numpy steps they replaced."""

import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from spacy.attrs import IS_SPACE, LOWER, SUFFIX, TAG
from spacy.tokens import Doc
from spacy.vocab import Vocab

from spacy_bioner.core.features import words_of
from spacy_bioner.parser.nodes import doc_units, lay_out_nodes, word_heads

VOCAB = Vocab()
ROOT = 12345


@st.composite
def docs_with_units(draw):
    """Docs of words and line breaks, tagged, each cut into units that tile it."""
    docs, units = [], []
    for _ in range(draw(st.integers(1, 4))):
        texts = draw(st.lists(st.sampled_from(["a", "Bee", "c", "\n", "dd", "\n\n"]), min_size=0, max_size=9))
        doc = Doc(VOCAB, words=texts, spaces=[False] * len(texts))
        for token in doc:
            token.tag_ = draw(st.sampled_from(["NN", "VB", "_SP"]))
        cuts = sorted(set(draw(st.lists(st.integers(1, max(len(doc) - 1, 1)), max_size=3)))) if len(doc) > 1 else []
        bounds = [0, *cuts, len(doc)] if len(doc) else []
        docs.append(doc)
        units.append(list(zip(bounds, bounds[1:])))
    return docs, units


def _numpy_nodes(docs, units):
    """What BioParser.predict did before: to_array per doc, words_of, numpy.insert of the root rows."""
    doc_starts = numpy.cumsum([0] + [len(doc) for doc in docs])
    values = numpy.concatenate([doc.to_array([LOWER, TAG, SUFFIX, IS_SPACE]) for doc in docs])
    unit_starts = [start + a for start, doc_units in zip(doc_starts.tolist(), units) for a, _ in doc_units]
    words, firsts = words_of(values[:, -1], unit_starts)
    sizes = numpy.diff(numpy.append(firsts, len(words)))
    firsts, sizes = firsts[sizes > 0], sizes[sizes > 0]
    nodes = numpy.insert(values[words, :3], firsts, ROOT, axis=0)
    offsets = numpy.cumsum(numpy.append(0, sizes + 1))
    return nodes, offsets, words, firsts, sizes, doc_starts


@settings(max_examples=200)
@given(docs_with_units(), st.randoms(use_true_random=False))
def test_nodes_and_heads_are_those_of_the_numpy_steps(drawn, random):
    docs, units = drawn
    if not sum(len(doc) for doc in docs):
        return
    nodes, offsets, words, doc_words, longest = lay_out_nodes(docs, units, ROOT)
    old_nodes, old_offsets, old_words, firsts, sizes, doc_starts = _numpy_nodes(docs, units)
    assert nodes.tolist() == old_nodes.tolist() and offsets.tolist() == old_offsets.tolist()
    doc_firsts = numpy.searchsorted(old_words, doc_starts)
    assert doc_words.tolist() == doc_firsts.tolist()
    assert (words + numpy.repeat(doc_starts[:-1], numpy.diff(doc_firsts))).tolist() == old_words.tolist()
    assert longest == (max(sizes.tolist()) if len(sizes) else 0)
    # any heads the parser may give: node 0..size of each unit, -1 for the root slots
    node_heads = numpy.full(len(nodes), -1, dtype=numpy.int32)
    for start, end in zip(offsets[:-1].tolist(), offsets[1:].tolist()):
        for k in range(start + 1, end):
            node_heads[k] = random.randint(0, end - start - 1)
    node_labels = numpy.arange(len(nodes), dtype=numpy.int32)
    heads, labels = word_heads(node_heads, node_labels, offsets, words)
    is_word = numpy.ones(len(nodes), dtype=bool)
    is_word[offsets[:-1]] = False
    unit_heads = node_heads[is_word].astype(numpy.int64)
    old_heads = numpy.where(unit_heads > 0, old_words[numpy.repeat(firsts, sizes) + unit_heads - 1], old_words)
    assert (heads + numpy.repeat(doc_starts[:-1], numpy.diff(doc_firsts))).tolist() == old_heads.tolist()
    assert labels.tolist() == node_labels[is_word].tolist()


def test_units_outside_their_doc_and_heads_outside_their_unit_are_refused():
    doc = Doc(VOCAB, words=["a", "b"])
    with pytest.raises(ValueError, match="outside a doc of 2 tokens"):
        lay_out_nodes([doc], [[(0, 3)]], ROOT)
    nodes, offsets, words, _, _ = lay_out_nodes([doc], [[(0, 2)]], ROOT)
    with pytest.raises(ValueError, match="has head 3"):
        word_heads(numpy.array([-1, 3, 0], dtype=numpy.int32), numpy.zeros(3, dtype=numpy.int32), offsets, words)


@st.composite
def docs_as_given(draw):
    """Docs with or without sentence starts (each token's is_sent_start False, None or True) and tags, some empty."""
    docs = []
    for _ in range(draw(st.integers(1, 4))):
        n = draw(st.integers(0, 8))
        doc = Doc(VOCAB, words=["w"] * n)
        for token in doc[1:]:
            token.is_sent_start = draw(st.sampled_from([False, None, None, True]))
        if n and draw(st.booleans()):
            doc[draw(st.integers(0, n - 1))].tag_ = "NN"
        docs.append(doc)
    return docs


@settings(max_examples=300, deadline=None)
@given(docs_as_given())
def test_doc_units_are_the_sentences_spacy_gives(docs):
    given, units, untagged = doc_units(docs)
    expected_given = [bool(len(doc)) and doc.has_annotation("SENT_START") for doc in docs]
    assert given == expected_given
    assert units == [
        [(sent.start, sent.end) for sent in doc.sents] if sentences else ([(0, len(doc))] if len(doc) else [])
        for doc, sentences in zip(docs, expected_given)
    ]
    assert untagged == any(len(doc) and not doc.has_annotation("TAG") for doc in docs)


def test_doc_units_follow_a_sentence_hook():
    doc = Doc(VOCAB, words=["a", "b", "c", "d"])
    doc.user_hooks["sents"] = lambda doc: iter([doc[0:1], doc[1:4]])
    assert doc_units([doc]) == ([True], [[(0, 1), (1, 4)]], True)
