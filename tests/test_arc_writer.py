"""The compiled parse writer (parser/arc_writer.pyx) against the numpy one it replaced (arcs_oracle.py)."""

from types import SimpleNamespace

import numpy
import pytest
from arcs_oracle import write_parses as oracle_write
from hypothesis import given, settings
from hypothesis import strategies as st
from parser_trees import trees
from spacy.tokens import Doc
from spacy.vocab import Vocab

from spacy_bioner.parser.arcs import write_parses
from spacy_bioner.parser.component import Parse

LABELS = ["nsubj", "obj", "det", "root", "nsubj||obj", "obl||nsubj"]


@st.composite
def units(draw):
    """One unit: its tokens' words (whitespace tokens among them) and a parse of its words
    (heads: token offsets in the unit, a root heads itself; several roots may come out)."""
    heads = draw(trees(max_words=7))
    n_words = len(heads) - 1
    spaces = sorted(draw(st.lists(st.integers(0, n_words), max_size=3)))
    texts, word_positions = [], []
    for k in range(n_words + 1):
        texts += ["\n"] * spaces.count(k)
        if k < n_words:
            word_positions.append(len(texts))
            texts.append(f"w{k}")
    unit_heads = [word_positions[h - 1] if h > 0 else word_positions[k] for k, h in enumerate(heads[1:])]
    labels = draw(st.lists(st.integers(0, len(LABELS) - 1), min_size=n_words, max_size=n_words))
    return texts, word_positions, unit_heads, labels


def _parser(pseudo_projective: bool) -> SimpleNamespace:
    cfg = {"pseudo_projective": pseudo_projective, "root_label": "root"}
    return SimpleNamespace(cfg=cfg, labels=LABELS, vocab=Vocab())


def _docs_and_parse(vocab, drawn, sentences_given: bool) -> tuple[Doc, Doc, Parse]:
    texts, words, heads, labels, sent_starts, unit_bounds = [], [], [], [], [], []
    for unit_texts, unit_words, unit_heads, unit_labels in drawn:
        start = len(texts)
        texts += unit_texts
        words += [start + k for k in unit_words]
        heads += [start + k for k in unit_heads]
        labels += unit_labels
        sent_starts += [True] + [False] * (len(unit_texts) - 1)
        unit_bounds.append((start, len(texts)))
    docs = []
    for _ in range(2):
        doc = Doc(vocab, words=texts, spaces=[False] * len(texts))
        if sentences_given:
            for token, start in zip(doc, sent_starts):
                token.is_sent_start = start
        docs.append(doc)
    if not sentences_given:
        unit_bounds = [(0, len(texts))]
    parse = Parse(
        unit_bounds,
        numpy.array(words, dtype=numpy.int64),
        numpy.array(heads, dtype=numpy.int64),
        numpy.array(labels, dtype=numpy.int32),
        sentences_given,
    )
    return docs[0], docs[1], parse


def _arcs(doc: Doc) -> list:
    return [(t.head.i, t.dep_, t.is_sent_start, t.left_edge.i, t.right_edge.i, t.n_lefts, t.n_rights) for t in doc]


@settings(max_examples=300)
@given(drawn=st.lists(units(), min_size=1, max_size=4), sentences_given=st.booleans(), lifted=st.booleans())
def test_the_compiled_writer_writes_what_the_numpy_one_did(drawn, sentences_given, lifted):
    compiled_parser, oracle_parser = _parser(lifted), _parser(lifted)
    compiled_parser.vocab = oracle_parser.vocab
    compiled, oracle, parse = _docs_and_parse(oracle_parser.vocab, drawn, sentences_given)
    if not len(compiled):
        return
    write_parses(compiled_parser, [compiled], [parse])
    oracle_write(oracle_parser, [oracle], [parse])
    assert _arcs(compiled) == _arcs(oracle)


@pytest.mark.parametrize(
    "heads, labels, message",
    [([1, 2], [0, 0], "outside the doc's 2 tokens"), ([1, 1], [0, 9], "label id 9")],
    ids=["a head outside the doc", "a label id outside the labels"],
)
def test_a_parse_outside_the_doc_or_the_labels_is_refused(heads, labels, message):
    parser = _parser(False)
    doc = Doc(parser.vocab, words=["a", "b"])
    parse = Parse([(0, 2)], numpy.array([0, 1]), numpy.array(heads), numpy.array(labels, dtype=numpy.int32))
    with pytest.raises(ValueError, match=message):
        write_parses(parser, [doc], [parse])
