"""bioner_tagger and bioner_parser where spaCy's tagger and parser were: fine and universal tags from
one pass, spaCy's Matcher, DependencyMatcher, rule lemmatizer and displaCy, and noun chunks from UD labels."""

import pytest
import spacy
from spacy.matcher import DependencyMatcher, Matcher
from spacy.tokens import Doc
from spacy.training import Example

from spacy_bioner.parser.noun_chunks import ud_noun_chunks

# (text, heads, UD deps, XPOS, UPOS)
TREES = [
    (
        "She ate the pizza with a fork .",
        [1, 1, 3, 1, 6, 6, 1, 1],
        ["nsubj", "ROOT", "det", "obj", "case", "det", "obl", "punct"],
        ["PRP", "VBD", "DT", "NN", "IN", "DT", "NN", "."],
        ["PRON", "VERB", "DET", "NOUN", "ADP", "DET", "NOUN", "PUNCT"],
    ),
    (
        "The cat sat on the mat .",
        [1, 2, 2, 5, 5, 2, 2],
        ["det", "nsubj", "ROOT", "case", "det", "obl", "punct"],
        ["DT", "NN", "VBD", "IN", "DT", "NN", "."],
        ["DET", "NOUN", "VERB", "ADP", "DET", "NOUN", "PUNCT"],
    ),
    (
        "I bought a new phone yesterday .",
        [1, 1, 4, 4, 1, 1, 1],
        ["nsubj", "ROOT", "det", "amod", "obj", "obl:tmod", "punct"],
        ["PRP", "VBD", "DT", "JJ", "NN", "NN", "."],
        ["PRON", "VERB", "DET", "ADJ", "NOUN", "NOUN", "PUNCT"],
    ),
    (
        "Dogs and cats bark .",
        [3, 2, 0, 3, 3],
        ["nsubj", "cc", "conj", "ROOT", "punct"],
        ["NNS", "CC", "NNS", "VBP", "."],
        ["NOUN", "CCONJ", "NOUN", "VERB", "PUNCT"],
    ),
]


def gold_doc(vocab, text, heads, deps, tags, pos) -> Doc:
    return Doc(vocab, words=text.split(), heads=heads, deps=deps, tags=tags, pos=pos)


@pytest.fixture(scope="module")
def nlp():
    nlp = spacy.blank("en")
    nlp.add_pipe("bioner_tagger", config={"attr": "tag+pos", "n_buckets": 2**16})
    nlp.add_pipe("bioner_parser", config={"n_buckets": 2**16, "label_buckets": 2**14})
    examples = [Example(Doc(nlp.vocab, words=tree[0].split()), gold_doc(nlp.vocab, *tree)) for tree in TREES]
    nlp.initialize(lambda: examples)
    for _ in range(40):
        nlp.update(examples)
    return nlp


def test_one_tagger_pass_writes_fine_and_universal_tags(nlp):
    for text, _, _, tags, pos in TREES:
        doc = nlp(text)
        assert [t.tag_ for t in doc] == tags
        assert [t.pos_ for t in doc] == pos
    assert "NN|NOUN" in nlp.get_pipe("bioner_tagger").labels
    scores = nlp.evaluate([Example(nlp.make_doc(t[0]), gold_doc(nlp.vocab, *t)) for t in TREES])
    assert scores["tag_acc"] == scores["pos_acc"] == pytest.approx(1.0)


@pytest.mark.parametrize("label, problem", [("NN", "joint tag"), ("NN|XYZ", "universal part of speech")])
def test_a_joint_tag_must_be_xpos_and_upos(nlp, label, problem):
    with pytest.raises(ValueError, match=problem):
        nlp.get_pipe("bioner_tagger").add_label(label)


def test_spacy_matcher_on_pos(nlp):
    matcher = Matcher(nlp.vocab)
    matcher.add("DET_NOUN", [[{"POS": "DET"}, {"POS": "ADJ", "OP": "?"}, {"POS": "NOUN"}]])
    doc = nlp("I bought a new phone yesterday .")
    assert [doc[start:end].text for _, start, end in matcher(doc)] == ["a new phone"]


def test_spacy_dependency_matcher_on_ud_labels(nlp):
    matcher = DependencyMatcher(nlp.vocab)
    pattern = [
        {"RIGHT_ID": "verb", "RIGHT_ATTRS": {"POS": "VERB"}},
        {"LEFT_ID": "verb", "REL_OP": ">", "RIGHT_ID": "subject", "RIGHT_ATTRS": {"DEP": "nsubj"}},
        {"LEFT_ID": "verb", "REL_OP": ">", "RIGHT_ID": "object", "RIGHT_ATTRS": {"DEP": "obj"}},
    ]
    matcher.add("SVO", [pattern])
    doc = nlp("She ate the pizza with a fork .")
    assert [[doc[i].text for i in ids] for _, ids in matcher(doc)] == [["ate", "She", "pizza"]]


def test_spacy_rule_lemmatizer_reads_the_tagger(nlp):
    pytest.importorskip("spacy_lookups_data")
    lemmatizer = nlp.add_pipe("lemmatizer", config={"mode": "rule"})
    try:
        lemmatizer.initialize()
        doc = nlp("She ate the pizza with a fork .")
        assert [t.lemma_ for t in doc] == ["she", "eat", "the", "pizza", "with", "a", "fork", "."]
        assert nlp("Dogs and cats bark .")[0].lemma_ == "dog"
    finally:
        nlp.remove_pipe("lemmatizer")


def test_displacy_draws_ud_labels(nlp):
    from spacy import displacy

    svg = displacy.render(nlp("The cat sat on the mat ."), style="dep", jupyter=False)
    assert ">nsubj<" in svg and ">obl<" in svg


def test_noun_chunks_from_the_parse_and_on_raw_text(nlp):
    assert [c.text for c in nlp("I bought a new phone yesterday .").noun_chunks] == ["I", "a new phone"]
    assert [c.text for c in nlp("The cat sat on the mat .").noun_chunks] == ["The cat", "the mat"]
    assert [c.text for c in nlp("Dogs and cats bark .").noun_chunks] == ["Dogs", "cats"]
    made_after = nlp.make_doc("The cat sat .")  # the vocab's iterator is UD's too
    assert made_after.noun_chunks_iterator is ud_noun_chunks


@pytest.mark.parametrize("tree", TREES)
def test_ud_noun_chunks_on_gold_trees(tree):
    doc = gold_doc(spacy.blank("en").vocab, *tree)
    chunks = [doc[start:end].text for start, end, _ in ud_noun_chunks(doc)]
    expected = {
        TREES[0][0]: ["She", "the pizza", "a fork"],  # "with" opens no noun phrase
        TREES[1][0]: ["The cat", "the mat"],
        TREES[2][0]: ["I", "a new phone"],  # "yesterday" (obl:tmod) is no chunk
        TREES[3][0]: ["Dogs", "cats"],  # a conjunct of a subject
    }
    assert chunks == expected[tree[0]]


def test_a_chunk_keeps_the_rest_of_a_flat_name():
    # UD heads "Darin Fisher" by "Darin" (Fisher is flat): the chunk must not end at its head
    doc = gold_doc(
        spacy.blank("en").vocab,
        "Yesterday Darin Fisher joined Google Inc. .",
        [3, 3, 1, 3, 3, 4, 3],
        ["obl:tmod", "nsubj", "flat", "ROOT", "obj", "flat", "punct"],
        ["NN", "NNP", "NNP", "VBD", "NNP", "NNP", "."],
        ["NOUN", "PROPN", "PROPN", "VERB", "PROPN", "PROPN", "PUNCT"],
    )
    assert [doc[start:end].text for start, end, _ in ud_noun_chunks(doc)] == ["Darin Fisher", "Google Inc."]


def test_noun_chunks_need_a_parse():
    with pytest.raises(ValueError, match="E029"):
        list(ud_noun_chunks(spacy.blank("en")("No parse here")))


def _raw_examples(nlp):
    """The trees two at a time as raw multi-sentence docs: predicted docs from the tokenizer, no sentences."""
    examples = []
    for first, second in zip(TREES, TREES[1:] + TREES[:1]):
        words = first[0].split() + second[0].split()
        n = len(first[0].split())
        reference = Doc(
            nlp.vocab,
            words=words,
            heads=first[1] + [h + n for h in second[1]],
            deps=first[2] + second[2],
            tags=first[3] + second[3],
            pos=first[4] + second[4],
            sent_starts=[i in (0, n) for i in range(len(words))],
        )
        examples.append(Example(nlp.make_doc(reference.text), reference))
    return examples


@pytest.fixture(scope="module")
def raw_nlp():
    nlp = spacy.blank("en")
    nlp.add_pipe("bioner_tagger", config={"attr": "tag+pos", "n_buckets": 2**16})
    nlp.add_pipe("bioner_senter", config={"n_buckets": 2**14})
    nlp.add_pipe("bioner_parser", config={"n_buckets": 2**16, "label_buckets": 2**14})
    examples = _raw_examples(nlp)
    nlp.initialize(lambda: examples)
    for _ in range(40):
        nlp.update(examples)
    return nlp


def test_raw_text_gets_sentences_tags_and_a_tree_per_sentence(raw_nlp):
    doc = raw_nlp("The cat sat on the mat . She ate the pizza with a fork .")
    assert [sent.text for sent in doc.sents] == ["The cat sat on the mat .", "She ate the pizza with a fork ."]
    assert [t.dep_ for t in doc][:7] == TREES[1][2]
    assert [t.pos_ for t in doc][7:] == TREES[0][4]
    assert [c.text for c in doc.noun_chunks] == ["The cat", "the mat", "She", "the pizza", "a fork"]
    scores = raw_nlp.evaluate(_raw_examples(raw_nlp))
    assert scores["sents_f"] == pytest.approx(1.0) and scores["dep_las"] == pytest.approx(1.0)


def test_the_senter_round_trips_and_travels_to_processes(raw_nlp, tmp_path):
    raw_nlp.to_disk(tmp_path / "pipeline")
    loaded = spacy.load(tmp_path / "pipeline")
    texts = ["I bought a new phone yesterday . Dogs and cats bark ."] * 3
    expected = [[s.text for s in doc.sents] for doc in raw_nlp.pipe(texts)]
    assert expected[0] == ["I bought a new phone yesterday .", "Dogs and cats bark ."]
    assert [[s.text for s in doc.sents] for doc in loaded.pipe(texts, n_process=2, batch_size=1)] == expected


def test_the_senter_tags_sentence_starts_only():
    senter = spacy.blank("en").add_pipe("bioner_senter")
    assert senter.labels == ("S", "I")
    with pytest.raises(ValueError, match="'S' and 'I' only"):
        senter.add_label("NN")


def test_sentences_set_before_the_senter_are_kept(raw_nlp):
    words = "The cat sat on the mat . She ate the pizza with a fork .".split()
    doc = Doc(raw_nlp.vocab, words=words, sent_starts=[i == 0 for i in range(len(words))])
    assert len(list(raw_nlp(doc).sents)) == 1


def test_the_senter_config_trains_on_whole_docs_and_the_assembly_sources_three_components():
    from conftest import ROOT
    from spacy.util import load_config, load_model_from_config

    config = load_config(ROOT / "configs" / "senter.cfg")
    nlp = load_model_from_config(config, auto_fill=True, validate=True)
    assert nlp.pipe_names == ["bioner_senter"]
    assert config["corpora"]["train"]["gold_preproc"] is False
    assembly = load_config(ROOT / "configs" / "parser_pipeline.cfg")
    assert assembly["nlp"]["pipeline"] == ["bioner_senter", "bioner_tagger", "bioner_parser"]
    assert {name: part["source"] for name, part in assembly["components"].items()} == {
        "bioner_tagger": "${paths.parser}",
        "bioner_senter": "${paths.senter}",
        "bioner_parser": "${paths.parser}",
    }


def test_the_parser_keeps_the_sentences_it_is_given():
    nlp = spacy.blank("en")
    nlp.add_pipe("bioner_parser", config={"n_buckets": 2**12, "label_buckets": 2**10})
    nlp.initialize(lambda: _raw_examples(nlp))  # untrained: most words end without a head
    words = "The cat sat on the mat . She ate the pizza with a fork .".split()
    doc = nlp(Doc(nlp.vocab, words=words, sent_starts=[i in (0, 7) for i in range(len(words))]))
    assert [sent.text for sent in doc.sents] == ["The cat sat on the mat .", "She ate the pizza with a fork ."]
    assert [sum(t.head == t for t in sent) for sent in doc.sents] == [1, 1]
    assert {t.dep_ for t in doc if t.head != t and t.head.head == t.head} <= set(
        nlp.get_pipe("bioner_parser").labels
    ) | {"dep"}


def test_a_blank_line_starts_a_sentence(raw_nlp):
    from spacy_bioner.tagger.senter import _after_blank_lines

    text = "I bought a new phone yesterday\n\nDogs and cats bark ."
    assert [sent.text.strip() for sent in raw_nlp(text).sents] == [
        "I bought a new phone yesterday",
        "Dogs and cats bark .",
    ]
    doc = raw_nlp.make_doc("one\n\ntwo\nthree \n \n four")  # a hard-wrapped line break is no paragraph
    assert [doc[i].text for i in _after_blank_lines(doc)] == ["two", "four"]
