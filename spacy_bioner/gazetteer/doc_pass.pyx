# cython: language_level=3
"""The bioner_gazetteer component's call in one compiled pass, with no array or Python
call between its steps (for one doc, they cost more than the steps themselves):

1. token_codes.TokenEncoder.find_rows: tokens -> word ids -> automaton -> match rows
2. spans.fill_group: every row -> a span of the doc's span group
3. spans.kept_rows: the rows that overlap no row kept before them
4. spans.write_rows: those rows -> the doc's entities

Gazetteer.match, span_group, non_overlapping and write_ents are the same steps one at a time.
"""
from libcpp.vector cimport vector
from spacy.tokens.doc cimport Doc
from spacy.tokens.span_group cimport SpanGroup

from .spans cimport Interned, fill_group, kept_rows, write_rows
from .token_codes cimport MatchRow, TokenEncoder


def annotate_doc(Doc doc, TokenEncoder encoder, tables, Interned labels, Interned kb_ids, str spans_key,
                 bint write_ents, bint longest_first, bint keep_entities):
    """Every match of the term tables in `doc` to `doc.spans[spans_key]`; with `write_ents`, the
    non-overlapping ones (leftmost longest, or longest first) to `doc.ents`, where `keep_entities`
    leaves out those that overlap an entity the doc has."""
    cdef vector[MatchRow] rows, kept
    if len(tables):
        encoder.find_rows((doc,), tables, NULL, rows)
    cdef SpanGroup group = SpanGroup(doc, name=spans_key)
    fill_group(doc, group, rows.data(), rows.size(), labels, kb_ids)
    doc.spans[spans_key] = group
    if write_ents:
        kept_rows(rows.data(), rows.size(), longest_first, kept)
        write_rows(doc, kept.data(), kept.size(), labels, kb_ids, keep_entities)
