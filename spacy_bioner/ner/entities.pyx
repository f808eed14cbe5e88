# cython: language_level=3
"""Entity arrays -> Doc.ents, written straight into the docs' tokens, and whether a doc has any.

`Doc.from_array` checks its ENT_IOB column in a Python loop and builds its
arguments anew for every doc: on short docs that cost more than tagging them.
Here a batch's (ENT_IOB, ENT_TYPE, ENT_KB_ID) rows, docs laid end to end, are
checked once and copied into the token structs, as `from_array` would.
`TagWriter` does the same from the tags of docs that need nothing but them.
"""
cimport numpy as cnp
from libc.stdint cimport int32_t, uint64_t
from libcpp.vector cimport vector
from spacy.tokens.doc cimport Doc

from ..core.arrays cimport items_of
from ..core.features cimport count_tokens

from spacy.tokens import Token

_N_IOB_CODES = len(Token.iob_strings())


def write_entities(docs, const uint64_t[:, ::1] values):
    """Set ent_iob, ent_type and ent_kb_id of every token of docs from values.

    docs (Sequence[Doc]): The docs, in the order their rows are laid out.
    values (uint64[n_tokens, 3]): ENT_IOB code, label hash and KB id hash per token.
    """
    docs = list(docs)
    cdef Doc doc
    cdef Py_ssize_t i, n = count_tokens(docs)
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


cdef class TagWriter:
    """Each doc's tags straight to its tokens' ENT_IOB and ENT_TYPE, through a table of tag -> values.

    table (uint64[n_tags, 3]): ENT_IOB code, label hash and KB id of each tag (writer.entity_values').
    labels (tuple): The labels the table was made for.
    """
    cdef vector[uint64_t] _values  # the table, row by row
    cdef Py_ssize_t _n_tags
    cdef readonly tuple labels
    cdef readonly object table

    def __init__(self, table, tuple labels):
        cdef const uint64_t[:, ::1] rows = table
        if rows.shape[1] != 3:
            raise ValueError(f"the table must have 3 columns, not {rows.shape[1]}")
        cdef Py_ssize_t tag
        for tag in range(rows.shape[0]):
            if rows[tag, 0] >= _N_IOB_CODES:
                raise ValueError(f"ENT_IOB codes must lie in 0..{_N_IOB_CODES - 1}")
        self._values.assign(&rows[0, 0], &rows[0, 0] + 3 * rows.shape[0])
        self._n_tags, self.labels, self.table = rows.shape[0], labels, table

    def write_plain(self, list docs, list predictions):
        """Write each doc's tags and return True, if no doc needs more than its tags (presets to keep,
        matches to link, scored spans); else write nothing and return False.

        predictions (List[decoder.Prediction]): A prediction per doc; tags (int32, a tag per token) come first,
            then matches, presets, confidences and alternatives.
        """
        if len(predictions) != len(docs):
            raise ValueError(f"{len(predictions)} predictions for {len(docs)} docs")
        cdef object prediction  # a NamedTuple, read by index
        cdef vector[const int32_t*] tags_of
        cdef Doc doc
        cdef Py_ssize_t d
        for d in range(len(docs)):
            doc, prediction = docs[d], predictions[d]
            if (len(prediction[1]) or prediction[2] or prediction[3] is not None
                    or prediction[4] is not None):
                return False
            tags_of.push_back(self._checked(doc, prediction[0], d))
        for d in range(len(docs)):
            self._write(docs[d], tags_of[d])
        return True

    def write_doc(self, Doc doc, cnp.ndarray tags):
        """Write one doc's tags (int32, a tag per token) to its tokens."""
        self._write(doc, self._checked(doc, tags, 0))

    cdef const int32_t* _checked(self, Doc doc, cnp.ndarray tags, Py_ssize_t d) except NULL:
        """Where the tags of doc d begin, once they are known to be a tag of the table per token."""
        if cnp.PyArray_SIZE(tags) != doc.length:
            raise ValueError(f"doc {d} has {doc.length} tokens and {cnp.PyArray_SIZE(tags)} tags")
        cdef const int32_t* tag_of = <const int32_t*>items_of(tags, cnp.NPY_INT32, doc.length)
        cdef Py_ssize_t i
        for i in range(doc.length):
            if not 0 <= tag_of[i] < self._n_tags:
                raise ValueError(f"tag {tag_of[i]} of doc {d} is not one of the {self._n_tags}")
        return tag_of

    cdef void _write(self, Doc doc, const int32_t* tags) noexcept:
        cdef const uint64_t* values
        cdef Py_ssize_t i
        for i in range(doc.length):
            values = &self._values[3 * tags[i]]
            doc.c[i].ent_iob = <int>values[0]
            doc.c[i].ent_type = values[1]
            doc.c[i].ent_kb_id = values[2]


def entity_annotated(Doc doc):
    """Whether any token has an ENT_IOB value (entities, or blocked tokens, set before):
    `doc.has_annotation("ENT_IOB")` in a C loop, which is asked of every doc tagged."""
    cdef int i
    for i in range(doc.length):
        if doc.c[i].ent_iob != 0:
            return True
    return False
