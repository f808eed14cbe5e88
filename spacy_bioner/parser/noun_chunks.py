"""`doc.noun_chunks` over Universal Dependencies labels, which bioner_parser writes.

spaCy's English iterator reads ClearNLP labels (`dobj`, `pobj`, `nsubjpass`) and so finds
few chunks in a UD parse. This one takes the same view of a base noun phrase: a noun,
proper noun or pronoun in a nominal role (subject, object, oblique, nominal modifier,
apposition, root), from its leftmost dependent to itself and the rest of its name, and a noun
conjoined to one.
Possessives and compounds stay inside the chunk of their head ("my sister", "the phone
bill"), and temporal nominals ("yesterday", "last week") are no chunks, as in spaCy's
English iterator. bioner_parser installs it: on its vocab, for docs made after it is
created, and on every doc it parses.
"""

from collections.abc import Iterator
from typing import Any, Union

from spacy.symbols import NOUN, PRON, PROPN
from spacy.tokens import Doc, Span
from spacy.vocab import Vocab

NOMINAL_ROLES = (
    "nsubj",
    "nsubj:pass",
    "nsubj:outer",
    "obj",
    "iobj",
    "obl",
    "obl:agent",
    "nmod",
    "appos",
    "vocative",
    "dislocated",
    "expl",
    "root",
    "ROOT",
)
NOMINALS = (NOUN, PROPN, PRON)
# Dependents that UD attaches to a noun but that open no noun phrase: "in" of "in Paris", "and", a comma.
LEADING = ("case", "cc", "punct", "mark")
# Right dependents that belong to the word itself: the rest of a name ("Darin <- Fisher", flat) or of a
# multiword expression. UD heads a flat name by its first word, so a chunk ending at the head would cut it.
WORD_PARTS = ("flat", "flat:name", "flat:foreign", "fixed", "goeswith")


def install_noun_chunks(target: Union[Doc, Vocab]) -> None:
    """Make a doc's noun_chunks (or those of every doc a vocab makes from now on) read UD labels."""
    # spaCy's stubs omit Doc.noun_chunks_iterator and give Vocab.get_noun_chunks another return type
    settable: Any = target
    if isinstance(target, Doc):
        settable.noun_chunks_iterator = ud_noun_chunks
    else:
        settable.get_noun_chunks = ud_noun_chunks


def ud_noun_chunks(doclike: Union[Doc, Span]) -> Iterator[tuple[int, int, int]]:
    """(start, end, label) token offsets of the base noun phrases of a UD-parsed doc or span."""
    doc = doclike.doc
    if not doc.has_annotation("DEP"):
        raise ValueError("[E029] noun_chunks requires the dependency parse, which requires a parser in the pipeline.")
    roles = {doc.vocab.strings.add(role) for role in NOMINAL_ROLES}
    leading = {doc.vocab.strings.add(dep) for dep in LEADING}
    parts = {doc.vocab.strings.add(dep) for dep in WORD_PARTS}
    conj, label = doc.vocab.strings.add("conj"), doc.vocab.strings.add("NP")
    last_end = -1
    for word in doclike:
        if word.pos not in NOMINALS:
            continue
        start = word.left_edge.i
        while start < word.i and doc[start].dep in leading:
            start += 1
        if start <= last_end:
            continue
        head = word
        while head.dep == conj and head.head.i < head.i:  # a conjunct is a chunk if the first conjunct is one
            head = head.head
        if head.dep in roles:
            end = word.i + 1
            for child in word.rights:
                if child.dep in parts and child.left_edge.i == end:
                    end = child.right_edge.i + 1
            last_end = end - 1
            yield start, end, label
