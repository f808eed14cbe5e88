# cython: language_level=3
"""Entity arrays -> Doc.ents, written straight into the docs' tokens, and whether a doc has any.

`Doc.from_array` checks its ENT_IOB column in a Python loop and builds its
arguments anew for every doc: on short docs that cost more than tagging them.
Here a batch's (ENT_IOB, ENT_TYPE, ENT_KB_ID) rows, docs laid end to end, are
checked once and copied into the token structs, as `from_array` would.
"""
from libc.stdint cimport uint64_t
from spacy.tokens.doc cimport Doc

from spacy.tokens import Token

_N_IOB_CODES = len(Token.iob_strings())


def write_entities(docs, const uint64_t[:, ::1] values):
    """Set ent_iob, ent_type and ent_kb_id of every token of docs from values.

    docs (Sequence[Doc]): The docs, in the order their rows are laid out.
    values (uint64[n_tokens, 3]): ENT_IOB code, label hash and KB id hash per token.
    """
    cdef Doc doc
    cdef Py_ssize_t i, n = 0
    for doc in docs:
        n += doc.length
    if values.shape[0] != n or values.shape[1] != 3:
        raise ValueError(f"entity values have shape {(values.shape[0], values.shape[1])}, expected {(n, 3)}")
    for i in range(n):  # checked before any doc is written to
        if values[i, 0] >= _N_IOB_CODES:
            raise ValueError(f"ENT_IOB codes must lie in 0..{_N_IOB_CODES - 1}")
    n = 0
    for doc in docs:
        for i in range(doc.length):
            doc.c[i].ent_iob = <int>values[n + i, 0]
            doc.c[i].ent_type = values[n + i, 1]
            doc.c[i].ent_kb_id = values[n + i, 2]
        n += doc.length


def entity_annotated(Doc doc):
    """Whether any token has an ENT_IOB value (entities, or blocked tokens, set before):
    `doc.has_annotation("ENT_IOB")` in a C loop, which is asked of every doc tagged."""
    cdef int i
    for i in range(doc.length):
        if doc.c[i].ent_iob != 0:
            return True
    return False
