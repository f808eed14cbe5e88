import json

import spacy
from conftest import short_form_nlp, train_nlp
from typer.testing import CliRunner

from spacy_bioner.cli import app
from spacy_bioner.core.word_clusters import shipped_clusters
from spacy_bioner.ner.batch import lay_out
from spacy_bioner.ner.explain import explain, feature_names
from spacy_bioner.ner.featurizer import features as features_of

PATTERNS = [
    {"label": "LOC", "pattern": "Paris", "id": "geo:paris"},
    {"label": "LOC", "pattern": "lives"},
    {"label": "DRUG", "pattern": "aspirin"},
]


def trained():
    nlp = spacy.blank("en")
    nlp.add_pipe("bioner").add_patterns(PATTERNS)
    trained_nlp = train_nlp()
    nlp.get_pipe("bioner").from_bytes(trained_nlp.get_pipe("bioner").to_bytes())
    nlp.get_pipe("bioner").add_patterns(PATTERNS)
    return nlp


def test_the_word_itself_explains_an_obvious_entity():
    nlp = train_nlp()
    ner = nlp.get_pipe("bioner")
    result = explain(ner, nlp.make_doc("Alice Smith lives in Paris ."))
    assert [(e["text"], e["label"]) for e in result["entities"]] == [("Alice Smith", "PER"), ("Paris", "LOC")]
    paris = result["entities"][1]["tokens"][0]
    assert paris["tag"] == "U-LOC" and len(paris["features"]) == 5
    # Every LOC of the training data follows "in": that context leads; the word itself
    # (its form, and its shipped cluster, which the training cities share) pushes the same way.
    names = [name for name, _ in paris["features"]]
    assert names[0] == "lower[-1]=in"
    assert [w for _, w in paris["features"]] == sorted((w for _, w in paris["features"]), reverse=True)
    every = dict(
        explain(ner, nlp.make_doc("Alice Smith lives in Paris ."), top=1000)["entities"][1]["tokens"][0]["features"]
    )
    paris_cluster = shipped_clusters().word_ids("Paris")[-1]
    assert every["lower[0]=paris"] > 0 and every[f"cluster_fine[0]={paris_cluster}"] > 0
    assert paris["transition"][0] == "O"


def test_feature_names_cover_every_column():
    nlp = train_nlp({"features": ["word", "window", "document", "history", "abbreviations"]})
    ner = nlp.get_pipe("bioner")
    doc = nlp.make_doc("Bob met Bob in Paris")
    features = features_of(ner, lay_out(ner, [doc]), [ner.gazetteer.match(doc)])
    names = feature_names(ner, doc)
    assert len(names) == len(doc) and all(len(row) == features.shape[1] for row in names)
    assert names[0][1:3] == ["lower[0]=bob", "orth[0]=Bob"] and "lower[-2]=<edge>" in names[0]


def test_matches_not_taken_and_the_cli(tmp_path):
    nlp = trained()
    result = explain(nlp.get_pipe("bioner"), nlp.make_doc("Alice Smith lives in Paris with aspirin ."))
    not_taken = {m["text"]: m for m in result["matches_not_taken"]}
    assert "Paris" not in not_taken  # it became the entity
    assert not_taken["lives"]["score_lost"] > 0 and "lower" in not_taken["lives"]["reason"]
    assert "not among the tagger's labels" in not_taken["aspirin"]["reason"]
    nlp.to_disk(tmp_path / "model")
    out = tmp_path / "why.json"
    run = CliRunner().invoke(
        app, ["explain", str(tmp_path / "model"), "Alice Smith lives in Paris .", "--output", str(out)]
    )
    assert run.exit_code == 0, run.output
    assert "Paris (LOC)" in run.output and "not taken" in run.output
    assert json.loads(out.read_text())["entities"][1]["text"] == "Paris"


def test_a_short_form_labelled_by_rule_says_so(tmp_path):
    nlp = short_form_nlp()
    ner = nlp.get_pipe("bioner")
    text = "Patients with atrial fibrillation ( AF ) improved ."
    result = explain(ner, nlp.make_doc(text))
    rules = {entity["text"]: [token.get("rule") for token in entity["tokens"]] for entity in result["entities"]}
    assert rules == {"atrial fibrillation": [None, None], "AF": ["short_form_labels"]}
    nlp.to_disk(tmp_path / "model")
    output = CliRunner().invoke(app, ["explain", str(tmp_path / "model"), text]).output
    assert "AF U-DIS (short_form_labels" in output


def test_an_undefined_acronym_labelled_by_rule_says_so():
    nlp = short_form_nlp(term="chronic kidney disease")
    result = explain(
        nlp.get_pipe("bioner"), nlp.make_doc("Patients with chronic kidney disease improved . CKD was rare .")
    )
    rules = {entity["text"]: [token.get("rule") for token in entity["tokens"]] for entity in result["entities"]}
    assert rules == {"chronic kidney disease": [None, None, None], "CKD": ["acronym_labels"]}


def test_far_window_reads_a_coordinations_head():
    nlp = train_nlp(
        {"features": ["word", "far_window"]},
        data=[("breast and ovarian cancer runs in families .", [(0, 25, "DIS")])],
        epochs=2,
    )
    doc = nlp.make_doc("breast and ovarian cancer")
    names = feature_names(nlp.get_pipe("bioner"), doc)[0]
    assert {"lower[+3]=cancer", "lower[+1]+lower[+3]=and|cancer", "lower[-3]=<edge>"} <= set(names)


def test_whitespace_tokens_change_no_explanation():
    """A line break inside and around an entity changes none of its words' features,
    weights or transitions, and whitespace tokens have no entry of their own."""
    nlp = trained()
    # single line breaks transparent, as in wrapped prose (this short doc would read as a list under "short_lines")
    ner = nlp.get_pipe("bioner").with_settings(rules={"line_breaks": "blank_or_indented"})
    plain = explain(ner, nlp.make_doc("Bob lives at Acme Corp in Paris ."))
    spaced = explain(ner, nlp.make_doc("Bob lives\nat\nAcme\nCorp in  Paris ."))
    assert [e["label"] for e in spaced["entities"]] == [e["label"] for e in plain["entities"]]
    assert ("ORG", "Acme\nCorp") in [(e["label"], e["text"]) for e in spaced["entities"]]
    assert [e["tokens"] for e in spaced["entities"]] == [e["tokens"] for e in plain["entities"]]
    assert plain["matches_not_taken"] and spaced["matches_not_taken"] == plain["matches_not_taken"]
