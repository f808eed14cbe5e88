"""person_labels: a surname alone takes the label of the person the doc named in full."""

import numpy
import pytest
import spacy
from conftest import save_as_version_0_1, train_nlp
from hypothesis import given, settings
from hypothesis import strategies as st
from spacy.tokens import Doc
from typer.testing import CliRunner

from spacy_bioner.cli import app
from spacy_bioner.core.schemes import TagScheme
from spacy_bioner.ner.explain import explain
from spacy_bioner.ner.surnames import label_surnames

LABELS = ["LOC", "PER"]
PER = [1]


def relabelled(texts, entities, scheme_name="BILOU", person_ids=PER, allowed=None):
    """The entities of each text after label_surnames, from `entities` (token spans and labels) per text."""
    nlp = spacy.blank("en")
    scheme = TagScheme(scheme_name, LABELS)
    docs = [nlp.make_doc(text) for text in texts]
    tags = numpy.concatenate(
        [
            scheme.from_spans([(start, end, LABELS.index(label)) for start, end, label in doc_entities], len(doc))
            for doc, doc_entities in zip(docs, entities)
        ]
    ).astype(numpy.int32)
    offsets = numpy.cumsum([0] + [len(doc) for doc in docs])
    if allowed is None:
        allowed = numpy.ones((len(tags), len(scheme.tags)), dtype=bool)
    ids = {}
    words = numpy.array([ids.setdefault(token.text, len(ids)) for doc in docs for token in doc], dtype=numpy.int32)
    new_tags = label_surnames(docs, tags, offsets, words, scheme, person_ids, allowed)
    return [
        [(doc[start:end].text, LABELS[label]) for start, end, label in scheme.to_spans(new_tags[a:b])]
        for doc, a, b in zip(docs, offsets.tolist(), offsets[1:].tolist())
    ]


@pytest.mark.parametrize("scheme_name", ["BILOU", "BIO"])
def test_a_lone_surname_takes_the_full_names_label(scheme_name):
    text = "MaliVai Washington beat Jordan in Washington . Washington won , and Washington said so ."
    entities = [(0, 2, "PER"), (3, 4, "PER"), (5, 6, "LOC"), (7, 8, "LOC")]
    assert relabelled([text], [entities], scheme_name) == [
        [
            ("MaliVai Washington", "PER"),
            ("Jordan", "PER"),
            ("Washington", "PER"),
            ("Washington", "PER"),
            ("Washington", "PER"),
        ]
    ]


def test_untagged_surnames_beside_capitalized_or_tagged_words_stay_untagged():
    text = "Michael King met King Hussein . The King Center and King said ."
    entities = [(0, 2, "PER"), (4, 5, "PER")]
    assert relabelled([text], [entities]) == [[("Michael King", "PER"), ("Hussein", "PER"), ("King", "PER")]]


def test_other_docs_capitals_and_numerals_are_not_surnames():
    texts = [
        "MaliVai Washington won .",
        "Washington is a city .",
        "Baudouin I ruled . I said so .",
        "Bill CLINTON spoke . CLINTON left .",
    ]
    entities = [[(0, 2, "PER")], [(0, 1, "LOC")], [(0, 2, "PER")], [(0, 2, "PER")]]
    assert relabelled(texts, entities) == [
        [("MaliVai Washington", "PER")],
        [("Washington", "LOC")],
        [("Baudouin I", "PER")],
        [("Bill CLINTON", "PER")],
    ]


def test_longer_entities_presets_and_other_labels_are_kept():
    text = "Ann Jordan flew to Jordan Valley . Jordan won ."
    entities = [(0, 2, "PER"), (4, 6, "LOC"), (7, 8, "LOC")]
    allowed = numpy.ones((10, len(TagScheme("BILOU", LABELS).tags)), dtype=bool)
    allowed[7] = False
    allowed[7, TagScheme("BILOU", LABELS).tag_id("U", 0)] = True  # a preset LOC
    assert relabelled([text], [entities], allowed=allowed) == [
        [("Ann Jordan", "PER"), ("Jordan Valley", "LOC"), ("Jordan", "LOC")]
    ]
    assert relabelled([text], [entities], person_ids=[]) == [
        [("Ann Jordan", "PER"), ("Jordan Valley", "LOC"), ("Jordan", "LOC")]
    ]


def washington_nlp(person_labels=("PER",)):
    """A bioner that knows "Washington" alone as a place, and "MaliVai Washington" as a person from its term list."""
    nlp = spacy.blank("en")
    ner = nlp.add_pipe(
        "bioner", config={"gazetteer": {"mode": "ents"}, "rules": {"person_labels": list(person_labels)}}
    )
    ner.add_patterns([{"label": "PER", "pattern": "MaliVai Washington"}])
    data = [
        ("Washington is cold .", [(0, 10, "LOC")]),
        ("They flew to Washington .", [(13, 23, "LOC")]),
        ("Ann Lee won .", [(0, 7, "PER")]),
    ]
    return train_nlp(data=data, epochs=10, nlp=nlp)


TEXT = "MaliVai Washington won the final . Washington is cold ."


def test_the_component_labels_lone_surnames_and_explain_says_so(tmp_path):
    assert [(e.text, e.label_) for e in washington_nlp(())(TEXT).ents] == [
        ("MaliVai Washington", "PER"),
        ("Washington", "LOC"),
    ]
    nlp = washington_nlp()
    assert [(e.text, e.label_) for e in nlp(TEXT).ents] == [("MaliVai Washington", "PER"), ("Washington", "PER")]
    result = explain(nlp.get_pipe("bioner"), nlp.make_doc(TEXT))
    assert [token.get("rule") for token in result["entities"][1]["tokens"]] == ["person_labels"]
    nlp.to_disk(tmp_path / "model")
    assert [(e.text, e.label_) for e in spacy.load(tmp_path / "model")(TEXT).ents] == [
        ("MaliVai Washington", "PER"),
        ("Washington", "PER"),
    ]
    output = CliRunner().invoke(app, ["explain", str(tmp_path / "model"), TEXT]).output
    assert "Washington U-PER (person_labels: its full name's label)" in output


def test_models_saved_before_person_labels_keep_their_output(tmp_path):
    from spacy_bioner.upgrade import upgrade

    save_as_version_0_1(washington_nlp(), tmp_path, drop=("person_labels",))
    assert upgrade(tmp_path) == ["bioner"]
    nlp = spacy.load(tmp_path)
    assert nlp.get_pipe("bioner").settings.rules.person_labels == []
    assert [(e.text, e.label_) for e in nlp(TEXT).ents] == [("MaliVai Washington", "PER"), ("Washington", "LOC")]


@pytest.mark.parametrize("person_labels", ["PER", ["PER", ""], ["PER", 3]])
def test_person_labels_must_be_a_list_of_labels(person_labels):
    with pytest.raises(ValueError, match="person_labels"):
        spacy.blank("en").add_pipe("bioner", config={"rules": {"person_labels": person_labels}})


VOCAB = spacy.blank("en").vocab
SURNAMES = ["Jordan", "O'Neill", "I", "CLINTON"]  # two names, a numeral, a word in capitals
OTHERS = ["said", "the", ".", "Ann", "Paris"]


def reference(doc_words, doc_entities, person_ids):
    """label_surnames, one doc and one word at a time."""

    def is_name(w):
        return w[:1].isupper() and any(c.islower() for c in w) and w.replace("'", "").isalpha()

    surnames = {}
    for start, end, label in sorted(doc_entities):
        if label in person_ids and end - start >= 2 and is_name(doc_words[end - 1]):
            surnames.setdefault(doc_words[end - 1], label)
    tagged = {i for start, end, _ in doc_entities for i in range(start, end)}

    def free(j):
        return not 0 <= j < len(doc_words) or (j not in tagged and not doc_words[j][:1].isupper())

    result = []
    for start, end, label in doc_entities:
        one_word_other = end - start == 1 and label not in person_ids
        result.append(
            (start, end, surnames[doc_words[start]] if one_word_other and doc_words[start] in surnames else label)
        )
    for j, word in enumerate(doc_words):
        if j not in tagged and word in surnames and free(j - 1) and free(j + 1):
            result.append((j, j + 1, surnames[word]))
    return sorted(result)


@st.composite
def batches(draw):
    """Docs of full names, lone surnames (untagged or entities of any label) and other words."""
    docs = []
    for _ in range(draw(st.integers(1, 4))):
        words, entities = [], []
        for _ in range(draw(st.integers(1, 8))):
            kind, word = draw(st.sampled_from(["full", "lone", "entity", "other"])), draw(st.sampled_from(SURNAMES))
            if kind == "full":
                entities.append((len(words), len(words) + 2, draw(st.sampled_from([0, 1, 1]))))
                words += [draw(st.sampled_from(["Ann", "Bo"])), word]
            elif kind == "entity":
                entities.append((len(words), len(words) + 1, draw(st.integers(0, 2))))
                words.append(word)
            else:
                words.append(word if kind == "lone" else draw(st.sampled_from(OTHERS)))
        docs.append((words, entities))
    return docs


@settings(max_examples=500)
@given(batches(), st.sampled_from(["BILOU", "BIO"]))
def test_label_surnames_agrees_with_a_doc_at_a_time_reference(docs, scheme_name):
    labels, person_ids = ["LOC", "PER", "ORG"], [1]
    scheme = TagScheme(scheme_name, labels)
    spacy_docs = [Doc(VOCAB, words=words) for words, _ in docs]
    tags = numpy.concatenate([scheme.from_spans(entities, len(words)) for words, entities in docs]).astype(numpy.int32)
    offsets = numpy.cumsum([0] + [len(words) for words, _ in docs])
    ids = {}
    words = numpy.array([ids.setdefault(w, len(ids)) for doc_words, _ in docs for w in doc_words], dtype=numpy.int32)
    allowed = numpy.ones((len(tags), len(scheme.tags)), dtype=bool)
    new_tags = label_surnames(spacy_docs, tags, offsets, words, scheme, person_ids, allowed)
    for (doc_words, entities), a, b in zip(docs, offsets.tolist(), offsets[1:].tolist()):
        assert sorted(scheme.to_spans(new_tags[a:b])) == reference(doc_words, entities, person_ids)
