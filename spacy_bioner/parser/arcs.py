"""Parses to token heads and labels: label ids to string ids, lifted arcs lowered, then arc_writer.pyx writes them."""

import numpy
from spacy.tokens import Doc

from .arc_writer import write_parse
from .arc_writer import write_parses as write_all
from .projectivity import SEPARATOR, lower

WHITESPACE_LABEL = "dep"  # of a whitespace token's arc: UD's unspecified dependency
EXTRA_ROOT_LABEL = "dep"  # of a word left without a head in a sentence that has its root already


def write_parses(parser, docs: list[Doc], parses: list) -> None:
    """Write each parse's heads and labels to its doc; spaCy sets the sentence starts from the heads."""
    label_hashes, augmented = _label_table(parser)
    strings = parser.vocab.strings
    extra = (strings.add(EXTRA_ROOT_LABEL), strings.add(WHITESPACE_LABEL), strings.add(parser.cfg["root_label"]))
    if not parser.cfg["pseudo_projective"] or not augmented.any():
        write_all(docs, parses, label_hashes, extra)
        return
    for doc, parse in zip(docs, parses):
        if not parse.units or not augmented[parse.labels].any():
            write_all([doc], [parse], label_hashes, extra)
            continue
        heads, deps = parse.heads.copy(), label_hashes[parse.labels]
        for start, end in parse.units:
            first, last = numpy.searchsorted(parse.words, [start, end])
            if augmented[parse.labels[first:last]].any():
                _lower(parser, parse.words[first:last], heads[first:last], parse.labels[first:last], deps[first:last])
        write_parse(doc, parse.units, parse.words, heads, deps, parse.sentences_given, extra)


def _label_table(parser) -> tuple[numpy.ndarray, numpy.ndarray]:
    """Each label's string id, and whether it is a lifted one."""
    if getattr(parser, "_labels_hashed", None) != parser.labels:
        parser._label_hashes = numpy.array(
            [parser.vocab.strings.add(label) for label in parser.labels], dtype=numpy.uint64
        )
        parser._augmented = numpy.array([SEPARATOR in label for label in parser.labels], dtype=numpy.bool_)
        parser._labels_hashed = parser.labels
    return parser._label_hashes, parser._augmented


def _lower(parser, words: numpy.ndarray, heads: numpy.ndarray, labels: numpy.ndarray, deps: numpy.ndarray) -> None:
    """Lower the lifted arcs of one unit's words, rewriting their heads and labels (views of the parse's)."""
    nodes = numpy.searchsorted(words, heads) + 1  # node k is the (k-1)-th word; 0 the root slot
    nodes[heads == words] = 0
    lowered_heads, lowered_labels = lower([-1] + nodes.tolist(), [""] + [parser.labels[i] for i in labels.tolist()])
    for k in range(len(words)):
        heads[k] = words[lowered_heads[k + 1] - 1] if lowered_heads[k + 1] > 0 else words[k]
        deps[k] = parser.vocab.strings.add(lowered_labels[k + 1])
