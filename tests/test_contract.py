"""What applications rely on of spaCy's ner, for bioner: labels, initialization, blocked tokens."""

import pytest
import spacy
from conftest import TRAIN_DATA, make_examples, train_nlp
from spacy.language import Language
from spacy.tokens import Doc, Span
from spacy.training import Example


def test_labels_added_before_initialize_are_kept():
    nlp = spacy.blank("en")
    ner = nlp.add_pipe("bioner")
    ner.add_label("C")
    ner.add_label("B")
    examples = make_examples(nlp)
    nlp.initialize(lambda: examples)
    assert ner.labels == ("C", "B", "PER", "LOC", "ORG")


def test_initialize_without_labels_predicts_nothing():
    nlp = spacy.blank("en")
    ner = nlp.add_pipe("bioner")
    nlp.initialize()
    assert ner.labels == ()
    doc = nlp("Alice Smith lives in Paris .")
    assert doc.ents == () and all(token.ent_iob_ == "O" for token in doc)


@pytest.mark.parametrize("factory", ["bioner", "bioner_tagger", "bioner_parser"])
def test_initialize_reads_the_examples_once_and_checks_them_as_spacy_does(factory):
    nlp = spacy.blank("en")
    component = nlp.add_pipe(factory)
    annotation = {
        "tags": ["NNP", "VBZ", "IN", "NNP"],
        "heads": [1, 1, 1, 2],
        "deps": ["nsubj", "ROOT", "prep", "pobj"],
        "entities": [(0, 5, "PER"), (15, 20, "LOC")],
    }
    examples = [Example.from_dict(nlp.make_doc("Alice lives in Paris"), annotation)] * 2
    calls = []

    def get_examples():
        calls.append(1)
        return iter(examples)

    component.initialize(get_examples, nlp=nlp)
    assert len(calls) == 1  # spaCy's validate_get_examples would read them all first
    for bad, code in ((None, "E930"), (lambda: [], "E930"), (lambda: [examples[0], "not an example"], "E978")):
        with pytest.raises(TypeError, match=code):
            component.initialize(bad, nlp=nlp)


def test_a_gold_label_first_seen_in_update_is_added():
    nlp = train_nlp()
    examples = [Example.from_dict(nlp.make_doc("Mount Fuji is high ."), {"entities": [(0, 10, "MOUNTAIN")]})]
    for _ in range(20):
        nlp.update(examples)
    ner = nlp.get_pipe("bioner")
    assert "MOUNTAIN" in ner.labels
    assert [(e.text, e.label_) for e in nlp("Mount Fuji is high .").ents] == [("Mount Fuji", "MOUNTAIN")]


def test_labels_are_in_the_vocab_strings(tmp_path):
    nlp = spacy.blank("en")
    ner = nlp.add_pipe("bioner")
    ner.add_label("RARE_LABEL_ONE")
    assert "RARE_LABEL_ONE" in nlp.vocab.strings
    nlp.initialize()
    data = ner.to_bytes()
    fresh = spacy.blank("en")
    fresh.add_pipe("bioner").from_bytes(data)
    assert "RARE_LABEL_ONE" in fresh.vocab.strings


def test_an_uninitialized_component_says_so():
    nlp = spacy.blank("en")
    nlp.add_pipe("bioner")
    with pytest.raises(ValueError, match=r"E109.*initialize"):
        nlp("Alice Smith lives in Paris .")


@Language.component("test_blocker")
def _blocker(doc):
    doc.set_ents([], blocked=[doc[0:2]])
    return doc


def test_blocked_tokens_are_never_in_an_entity():
    nlp = train_nlp()
    text = TRAIN_DATA[0][0]
    assert [e.text for e in nlp(text).ents][0] == "Alice Smith"
    nlp.add_pipe("test_blocker", before="bioner")
    doc = nlp(text)
    assert [t.ent_iob_ for t in doc[0:2]] == ["B", "B"] and [t.ent_type_ for t in doc[0:2]] == ["", ""]
    assert all(ent.start >= 2 for ent in doc.ents) and "Paris" in [e.text for e in doc.ents]


def test_preset_entities_and_blocked_tokens_together():
    nlp = train_nlp()
    doc = nlp.make_doc("Alice Smith lives in Paris .")
    doc.set_ents([Span(doc, 4, 5, label="LOC")], blocked=[doc[0:1]])
    doc = nlp.get_pipe("bioner")(doc)
    assert doc[0].ent_iob_ == "B" and doc[0].ent_type_ == ""
    assert ("Paris", "LOC") in [(e.text, e.label_) for e in doc.ents]


LAYOUT = [
    "Best,\n  Maria  Garcia\n\tAmsterdam",
    "Name:\nJohn\nSmith\nEmployer:\nIBM\nCity:\nNew\nYork\n\n\nSigned",
    "Alice Smith\n\nParis Berlin\n    Acme Corp",
]


@pytest.mark.parametrize(
    "line_breaks, breaking",
    [
        ("blank_or_indented", ("\n\n", "\n ", "\n\t")),
        ("short_lines", ("\n",)),  # these texts' lines are all short: lists and forms
        ("every", ("\n",)),
    ],
)
def test_line_breaks_end_entities_as_configured(line_breaks, breaking):
    # A huge entity_bias makes every word part of some entity: only the constraints keep them apart.
    nlp = train_nlp({"rules": {"line_breaks": line_breaks}, "confidence": {"entity_bias": 1000.0}})
    for doc in nlp.pipe(LAYOUT):
        assert doc.ents
        for ent in doc.ents:
            assert not any(b in ent.text for b in breaking), (line_breaks, ent.text)


def test_without_the_rule_line_breaks_are_transparent():
    nlp = train_nlp({"rules": {"line_breaks": "none"}, "confidence": {"entity_bias": 1000.0}})
    assert any("\n" in ent.text for doc in nlp.pipe(LAYOUT) for ent in doc.ents)


def test_short_lines_join_a_name_across_wrapped_prose_and_split_a_list():
    nlp = train_nlp({"rules": {"line_breaks": "short_lines"}, "confidence": {"entity_bias": 1000.0}})
    prose = (
        "Nothing happened today , and then the long first line of this wrapped paragraph ends in Alice\n"
        "Smith , who lives in Paris , with a second line that runs about as long as the first ."
    )
    assert any("\n" in ent.text for ent in nlp(prose).ents)
    roster = nlp("Alice Smith\nCarol Jones\nBob")
    assert roster.ents and not any("\n" in ent.text for ent in roster.ents)


def test_short_lines_keep_a_name_of_the_training_data_whole_across_a_break():
    # every line is short, as in a form; "Acme Corp" is an entity of the training data (the memory family)
    nlp = train_nlp({"rules": {"line_breaks": "short_lines"}, "confidence": {"entity_bias": 1000.0}})
    texts = [ent.text for ent in nlp("Employer:\nAcme\nCorp\nCity:\nParis").ents]
    assert "Acme\nCorp" in texts and not any("Corp\nCity" in text for text in texts)


def test_a_single_line_break_or_a_run_of_spaces_may_join_an_entity():
    nlp = train_nlp({"rules": {"line_breaks": "blank_or_indented"}, "confidence": {"entity_bias": 1000.0}})
    texts = ["Maria  Garcia  Lopez  Diaz", "New\nYork\nCity\nHall"]
    assert any(
        ent.end - ent.start > 1 for doc in nlp.pipe(texts) for ent in doc.ents if " " in ent.text or "\n" in ent.text
    )


def test_negative_spans_steer_the_completion_of_missing_gold():
    """incorrect_spans_key: where the gold is missing, the tagger is not trained towards a span
    known not to be an entity of that label; a negative span that is a gold entity is an error."""

    def first_loss(negative: bool) -> float:
        nlp = train_nlp({"incorrect_spans_key": "not_entities"})
        assert [(e.text, e.label_) for e in nlp("Dana visited Paris .").ents][-1] == ("Paris", "LOC")
        example = Example.from_dict(nlp.make_doc("Dana visited Paris ."), {"entities": ["U-PER", "O", "-", "O"]})
        if negative:
            example.reference.spans["not_entities"] = [Span(example.reference, 2, 3, label="LOC")]
        return nlp.update([example])["bioner"]

    # Without the negative span, the missing tag is completed as the tagger's own LOC; with it, it may
    # not be LOC, so the tagger's LOC at "Paris" is a mistake to train away.
    assert first_loss(negative=True) >= first_loss(negative=False) + 1
    nlp = train_nlp({"incorrect_spans_key": "not_entities"})
    example = Example.from_dict(nlp.make_doc("Dana visited Paris ."), {"entities": [(13, 18, "LOC")]})
    example.reference.spans["not_entities"] = [Span(example.reference, 2, 3, label="LOC")]
    with pytest.raises(ValueError, match="E868"):
        nlp.update([example])


def test_a_label_met_on_a_preset_is_added_kept_and_never_predicted_until_taught(tmp_path):
    nlp = train_nlp()
    ner = nlp.get_pipe("bioner")
    preset = Doc(nlp.vocab, words=["Zed", "met", "Bob", "in", "Paris", "."], ents=["B-GADGET", "O", "O", "O", "O", "O"])
    tagged = nlp(preset)
    assert "GADGET" in ner.labels and ner.cfg["labels_from_presets"] == ["GADGET"]
    assert ("Zed", "GADGET") in [(e.text, e.label_) for e in tagged.ents]
    texts = ["Alice Smith lives in Paris .", "Zed Zorp met Bob", "the GADGET thing", "Nothing happened today ."] * 5
    assert not any(e.label_ == "GADGET" for doc in nlp.pipe(texts) for e in doc.ents)
    nlp.to_disk(tmp_path)
    assert spacy.load(tmp_path).get_pipe("bioner").cfg["labels_from_presets"] == ["GADGET"]
    nlp.update([Example.from_dict(nlp.make_doc("Zed is new"), {"entities": [(0, 3, "GADGET")]})])
    assert ner.cfg["labels_from_presets"] == []
