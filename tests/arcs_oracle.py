"""The parser's writer in numpy and Doc.from_array, step by step: the oracle that
spacy_bioner/parser/arc_writer.pyx is checked against (test_arc_writer.py)."""

from collections.abc import Iterable
from typing import Any

import numpy
from spacy.attrs import DEP, HEAD
from spacy.tokens import Doc

from spacy_bioner.parser.arcs import _label_table
from spacy_bioner.parser.projectivity import lower

WHITESPACE_LABEL = "dep"  # of a whitespace token's arc: UD's unspecified dependency
EXTRA_ROOT_LABEL = "dep"  # of a word left without a head in a sentence that has its root already


def write_parses(parser, docs: Iterable[Doc], parses: list) -> None:
    """Write each parse's heads and labels to its doc; spaCy sets the sentence starts from the heads."""
    label_hashes, augmented = _label_table(parser)
    for doc, parse in zip(docs, parses):
        if not parse.units:
            continue
        keep_sentences = doc.has_annotation("SENT_START")
        tokens = numpy.arange(len(doc), dtype=numpy.int64)
        absolute, deps = tokens.copy(), numpy.zeros(len(doc), dtype=numpy.uint64)
        absolute[parse.words] = parse.heads
        deps[parse.words] = label_hashes[parse.labels]
        if parser.cfg["pseudo_projective"] and augmented[parse.labels].any():
            for start, end in parse.units:
                first, last = numpy.searchsorted(parse.words, [start, end])
                if augmented[parse.labels[first:last]].any():
                    _lower(parser, parse.words[first:last], absolute, parse.labels[first:last], deps)
        if keep_sentences:
            _one_root_per_unit(parser, parse.units, parse.words, absolute, deps)
        if len(parse.words) < len(doc):
            _attach_whitespace(parser, parse.units, parse.words, absolute, deps)
        # spaCy's stub asks for thinc's Ints2d, which a numpy array is at run time
        columns: Any = numpy.column_stack([(absolute - tokens).view(numpy.uint64), deps])
        doc.from_array([HEAD, DEP], columns)


def _one_root_per_unit(
    parser, units: list[tuple[int, int]], words: numpy.ndarray, absolute: numpy.ndarray, deps: numpy.ndarray
) -> None:
    """Keep the sentences given to the parser: spaCy starts a sentence at every root, so the words a
    sentence's parse left without a head hang from its root of most dependents (UD has one root)."""
    for start, end in units:
        unit_words = words[(words >= start) & (words < end)]
        roots = unit_words[absolute[unit_words] == unit_words]
        if len(roots) > 1:
            n_dependents = numpy.bincount(absolute[unit_words] - start, minlength=end - start)[roots - start]
            main = roots[numpy.argmax(n_dependents)]
            extra = roots[roots != main]
            absolute[extra] = main
            deps[extra] = parser.vocab.strings.add(EXTRA_ROOT_LABEL)


def _attach_whitespace(
    parser, units: list[tuple[int, int]], words: numpy.ndarray, absolute: numpy.ndarray, deps: numpy.ndarray
) -> None:
    """Hang each whitespace token from the word before it in its unit, else the
    word after it; in a unit of whitespace alone the first token is the root."""
    positions = numpy.arange(len(absolute))
    is_word = numpy.zeros(len(absolute), dtype=numpy.bool_)
    is_word[words] = True
    before = numpy.maximum.accumulate(numpy.where(is_word, positions, -1))
    after = numpy.minimum.accumulate(numpy.where(is_word, positions, len(positions))[::-1])[::-1]
    sizes = [end - start for start, end in units]
    unit_starts = numpy.repeat([start for start, _ in units], sizes)
    unit_ends = numpy.repeat([end for _, end in units], sizes)
    spaces = numpy.flatnonzero(~is_word)
    heads = numpy.where(
        before[spaces] >= unit_starts[spaces],
        before[spaces],
        numpy.where(after[spaces] < unit_ends[spaces], after[spaces], unit_starts[spaces]),
    )
    absolute[spaces] = heads
    deps[spaces] = numpy.where(
        heads == spaces, parser.vocab.strings.add(parser.cfg["root_label"]), parser.vocab.strings.add(WHITESPACE_LABEL)
    )


def _lower(parser, words: numpy.ndarray, absolute: numpy.ndarray, labels: numpy.ndarray, deps: numpy.ndarray) -> None:
    """Lower the lifted arcs of one unit's words, rewriting their heads and labels."""
    nodes = numpy.searchsorted(words, absolute[words]) + 1  # node k is the (k-1)-th word; 0 the root slot
    nodes[absolute[words] == words] = 0
    lowered_heads, lowered_labels = lower([-1] + nodes.tolist(), [""] + [parser.labels[i] for i in labels.tolist()])
    for k, token in enumerate(words.tolist(), 1):
        absolute[token] = words[lowered_heads[k] - 1] if lowered_heads[k] > 0 else token
        deps[token] = parser.vocab.strings.add(lowered_labels[k])
