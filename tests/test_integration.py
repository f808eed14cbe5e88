"""bioner inside other people's components: negspacy's negex, the EntityRuler, displaCy."""

import pytest
import spacy
from conftest import train_nlp
from spacy import displacy


def ruled_nlp():
    """A trained bioner whose term list makes "pneumonia" a fixed DIS entity, then a sentencizer."""
    nlp = spacy.blank("en")
    ner = nlp.add_pipe("bioner", config={"gazetteer": {"mode": "ents"}})
    ner.add_patterns([{"label": "DIS", "pattern": "pneumonia", "id": "mesh:D011014"}])
    train_nlp(nlp=nlp, epochs=5)
    nlp.add_pipe("sentencizer")
    return nlp


def test_negex_reads_bioner_entities():
    pytest.importorskip("negspacy.negation")  # registers the negex factory
    nlp = ruled_nlp()
    nlp.add_pipe("negex", config={"ent_types": ["DIS"]})
    denied, affirmed = (
        nlp("The patient denies pneumonia . Alice Smith lives in Paris ."),
        nlp("The patient has pneumonia ."),
    )
    assert [(e.text, e._.negex, e.kb_id_) for e in denied.ents if e.label_ == "DIS"] == [
        ("pneumonia", True, "mesh:D011014")
    ]
    assert [(e.text, e._.negex) for e in affirmed.ents if e.label_ == "DIS"] == [("pneumonia", False)]


def test_entity_ruler_before_bioner_sets_presets_and_after_it_fills_gaps():
    nlp = train_nlp()
    text = "Alice Smith met Zorblax Industries in Paris ."
    before = nlp.add_pipe("entity_ruler", before="bioner")
    before.add_patterns([{"label": "ORG", "pattern": "Zorblax Industries"}])
    doc = nlp(text)
    assert ("Zorblax Industries", "ORG") in [(e.text, e.label_) for e in doc.ents]
    nlp.remove_pipe("entity_ruler")
    after = nlp.add_pipe("entity_ruler", name="ruler_after", after="bioner", config={"overwrite_ents": False})
    after.add_patterns([{"label": "PRODUCT", "pattern": "Zorblax"}])
    tagged = [(e.text, e.label_) for e in nlp.get_pipe("bioner")(nlp.make_doc(text)).ents]
    ruled = [(e.text, e.label_) for e in nlp(text).ents]
    assert all(entity in ruled for entity in tagged)


def test_displacy_renders_bioner_entities():
    nlp = ruled_nlp()
    doc = nlp("The patient has pneumonia .")
    html = displacy.render(doc, style="ent", jupyter=False)
    assert "pneumonia" in html and "DIS" in html
