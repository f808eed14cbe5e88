# cython: language_level=3
"""Tag ids -> Token.tag_ and Token.pos_, written straight into the docs' tokens.

`Doc.from_array` builds its arguments anew for every doc: on docs of a sentence that
cost as much as tagging them. Here the tag ids of a batch, docs laid end to end, are
checked once and their values copied into the token structs, as `from_array` would.
"""
from libc.stdint cimport int32_t, uint64_t
from spacy.parts_of_speech cimport univ_pos_t
from spacy.tokens.doc cimport Doc


def write_tags(docs, const int32_t[::1] tag_ids, const uint64_t[:, ::1] values, bint tag, bint pos):
    """Set the tag and/or the part of speech of every token of docs from its tag id.

    docs (Sequence[Doc]): The docs, in the order their tag ids are laid out.
    tag_ids (int32[n_tokens]): A row of `values` per token; -1 for the last row (whitespace).
    values (uint64[n_rows, 2]): The TAG hash and the POS id of each row.
    tag, pos (bool): Whether to write the TAG column; the POS column.
    """
    cdef Doc doc
    cdef Py_ssize_t i, n = 0, n_rows = values.shape[0]
    for doc in docs:
        n += doc.length
    if tag_ids.shape[0] != n or values.shape[1] != 2:
        raise ValueError(f"{tag_ids.shape[0]} tag ids and values of width {values.shape[1]}: "
                         f"expected {n} and 2")
    for i in range(n):  # checked before any doc is written to
        if not -1 <= tag_ids[i] < n_rows:
            raise ValueError(f"tag ids must lie in -1..{n_rows - 1}")
    cdef Py_ssize_t row
    n = 0
    for doc in docs:
        for i in range(doc.length):
            row = tag_ids[n + i] if tag_ids[n + i] >= 0 else n_rows - 1
            if tag:
                doc.c[i].tag = values[row, 0]
            if pos:
                doc.c[i].pos = <univ_pos_t>values[row, 1]
        n += doc.length
