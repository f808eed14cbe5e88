"""Where raw text's layout ends an entity (`[rules] line_breaks`): blank lines, indents, and the breaks
after the short lines of lists and forms, but not those of hard-wrapped prose.

A whitespace token found here ends any entity before it, and no feature window reads across it
(batch.over_words).
"""

from typing import Optional

import numpy
from spacy.tokens import Doc


def entity_line_ends(
    docs: list[Doc],
    offsets: numpy.ndarray,
    is_space: numpy.ndarray,
    line_breaks: str,
    memory_matches: Optional[numpy.ndarray] = None,
) -> Optional[numpy.ndarray]:
    """The whitespace tokens that end any entity before them: with "blank_or_indented", a blank line
    or a line break followed by indentation or a tab (fields, addresses, signatures); with
    "short_lines", those and a line break after a short line (lists, forms, headers), unless an entity
    of the training data runs across it (`memory_matches`: a form's "New" and "York" on two lines); with "every", every
    line break; with "none", none. A single line break inside wrapped prose may join an entity."""
    if line_breaks == "none":
        return None
    ends = numpy.zeros(len(is_space), dtype=numpy.bool_)
    spaces = numpy.flatnonzero(is_space)
    doc_of = numpy.searchsorted(offsets, spaces, side="right") - 1
    short = short_line_ends(docs) if line_breaks == "short_lines" else {}
    bridged = numpy.zeros(len(is_space), dtype=numpy.bool_)  # inside a memory match of several words
    if short and memory_matches is not None:
        for start, end, _, _ in memory_matches.tolist():
            bridged[start + 1 : end - 1] = True
    for position, d in zip(spaces.tolist(), doc_of.tolist()):
        token = docs[d][position - int(offsets[d])]
        if line_breaks == "every":
            ends[position] = "\n" in token.text
        else:
            ends[position] = (
                token.text.count("\n") >= 2
                or "\n " in token.text
                or "\n\t" in token.text
                or (
                    d in short
                    and not bridged[position]
                    and "\n" in token.text
                    and token.idx + token.text.index("\n") in short[d]
                )
            )
    return ends if ends.any() else None


SHORT_LINE = 0.6  # of the doc's longest line: hard-wrapped prose fills its lines to near the width
LIST_WIDTH = 40  # characters: a doc whose lines are all shorter is a list or a form, not wrapped prose


def short_line_ends(docs: list[Doc]) -> dict[int, set[int]]:
    """Per doc with line breaks: the character offsets of the line breaks that end a short line."""
    found = {}
    for d, doc in enumerate(docs):
        text = doc.text
        if "\n" not in text:
            continue
        lines = text.split("\n")
        longest = max(len(line.rstrip()) for line in lines)
        breaks, at = set(), 0
        for line in lines[:-1]:
            at += len(line)
            if line.strip() and (longest < LIST_WIDTH or len(line.rstrip()) < SHORT_LINE * longest):
                breaks.add(at)
            at += 1
        found[d] = breaks
    return found
