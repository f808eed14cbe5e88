"""The families that change how raw text is read: `sentences` (windows stop at a sentence's end) and
`lowercase_docs` (a doc with no capital reads the case templates with values of its own)."""

import numpy
import spacy

from spacy_bioner.core.features import Lexicon, batch_layout, lowercase_docs
from spacy_bioner.core.templates import (
    CASE_ATTRIBUTES,
    COLUMNS,
    DEFAULT_FAMILIES,
    N_ATTRIBUTES,
    template_parts,
    word_attributes,
)
from spacy_bioner.ner.batch import lay_out
from spacy_bioner.ner.explain import feature_names
from spacy_bioner.ner.featurizer import features

FAMILIES = ["word", "window", "shape", "flags", "conjunctions", "far_window"]


def _ner(features_list):
    nlp = spacy.blank("en")
    ner = nlp.add_pipe("bioner", config={"features": features_list})
    ner.add_label("PER")
    nlp.initialize()
    return nlp, ner


def test_both_families_are_on_by_default():
    assert {"sentences", "lowercase_docs"} <= set(DEFAULT_FAMILIES)


def test_a_doc_is_lowercase_without_a_capital_but_those_typing_adds():
    nlp = spacy.blank("en")
    lower = ["john smith works for microsoft", "Did you see elon musk? Then i left", "I think so", "Hi,\nthanks john"]
    cased = ["i met John", "i met  John", "i met an iPhone user", "IBM is here", "ok , Bye", "2024 - 12", ""]
    assert lowercase_docs([nlp(text) for text in lower + cased]).tolist() == [1] * len(lower) + [0] * len(cased)


def test_sentence_numbers_start_anew_after_sentence_final_punctuation_only_when_asked():
    nlp = spacy.blank("en")
    docs = [nlp("It rained. Kofi Annan spoke! Why? U.S. firms"), nlp("Next doc")]
    offsets, plain, starts, _ = batch_layout(docs)
    _, split, split_starts, _ = batch_layout(docs, sentence_ends=True)
    assert numpy.array_equal(starts, split_starts)  # the decoder's sentence starts are the doc's own
    assert plain.tolist() == [1] * len(docs[0]) + [2, 2]
    # "It rained ." | "Kofi Annan spoke !" | "Why ?" | "U.S. firms" ("U.S." is one token) | the next doc
    assert split.tolist() == [1, 1, 1, 2, 2, 2, 2, 3, 3, 4, 4, 5, 5]


def test_with_sentences_a_doc_s_first_sentence_reads_as_any_later_one():
    sentence = "Kofi Annan spoke to reporters ."
    for families, same in ((FAMILIES + ["sentences"], True), (FAMILIES, False)):
        nlp, ner = _ner(families)
        alone, later = nlp.make_doc(sentence), nlp.make_doc("It rained . " + sentence)
        found = [features(ner, lay_out(ner, [doc]), [numpy.zeros((0, 4), dtype=numpy.int64)]) for doc in (alone, later)]
        assert numpy.array_equal(found[0], found[1][3:]) == same


def test_a_lowercase_doc_changes_the_case_templates_alone():
    word = "smith"
    cased, lowered = word_attributes(word), word_attributes(word, lowercase=True)
    changed = {i for i in range(N_ATTRIBUTES) if cased[i] != lowered[i]}
    assert changed == {COLUMNS[name] for name in CASE_ATTRIBUTES}


def test_the_lexicon_keeps_a_row_per_reading_of_a_word():
    nlp = spacy.blank("en")
    lexicon = Lexicon(lambda text, lowercase=False: word_attributes(text, lowercase=lowercase), N_ATTRIBUTES)
    docs = [nlp("john met mary"), nlp("Yes , john met Mary")]
    rows, mention_ids = lexicon.rows_and_mentions(docs, lowercase_docs=True)
    assert rows[0] != rows[5] and rows[1] != rows[6]  # "john", "met": one row read in lower-case text, one not
    assert lexicon.batch_rows(docs[1:]).tolist() == rows[3:].tolist()  # a cased doc reads the rows it always did
    assert mention_ids.tolist() == lexicon.mention_ids[rows].tolist()
    orths = numpy.array([token.orth for doc in docs for token in doc], dtype=numpy.uint64)
    per_token = numpy.repeat(lowercase_docs(docs), [len(doc) for doc in docs])
    assert lexicon.rows(orths, nlp.vocab.strings, per_token).tolist() == rows.tolist()  # the same rows, token by token


def test_with_lowercase_docs_only_the_case_templates_differ_in_lowercase_text():
    nlp, ner = _ner(FAMILIES + ["lowercase_docs"])
    names = [name for name, _ in template_parts(ner.settings.features)]
    case_reading = [
        j
        for j, (_, parts) in enumerate(template_parts(ner.settings.features))
        if any(attribute in CASE_ATTRIBUTES for attribute, _ in parts)
    ]
    no_matches = [numpy.zeros((0, 4), dtype=numpy.int64)]
    lower, cased = nlp.make_doc("ask john about it ."), nlp.make_doc("ask john about it . OK")
    # the first two words' windows (up to three on) end before "OK"
    found = [features(ner, lay_out(ner, [doc]), no_matches)[:2] for doc in (lower, cased)]
    differ = {j for j in range(len(names)) if (found[0][:, j] != found[1][:, j]).any()}
    assert differ == set(case_reading)


def test_explanations_name_what_the_families_read():
    nlp, ner = _ner(FAMILIES + ["sentences", "lowercase_docs"])
    names = feature_names(ner, nlp.make_doc("it rained . kofi spoke"))
    assert "lower[-1]=<edge>" in names[3]  # "kofi" reads no "." before it
    assert "case[0]=lowercase:lower" in names[3]
    assert "case[0]=title" in feature_names(ner, nlp.make_doc("It rained . Kofi Annan spoke"))[3]
