"""Distant supervision: labels from term lists (entities, O, missing), ambiguity, self-training, and a
name in no list found after training on distant labels alone."""

import random
from collections import Counter

import pytest
import spacy
from spacy.attrs import ENT_IOB
from spacy.tokens import DocBin
from spacy.training import Example
from typer.testing import CliRunner

from spacy_bioner.cli import app
from spacy_bioner.distant.labeller import DistantLabeller, DistantSettings
from spacy_bioner.distant.self_training import relabel

PEOPLE = ["Anna Berg", "Boris Novak", "Carla Rossi", "Emil Dubois", "Farah Khan", "Greta Lund", "Hugo Marsh"]
PLACES = ["Oslo", "Paris", "Berlin", "Lisbon", "Vienna", "Dublin", "Prague"]
TEMPLATES = ["{p} met {q} in {l} .", "In {l} , {p} thanked {q} .", "{p} flew to {l} with {q} .", "{p} left {l} ."]


@pytest.fixture()
def terms(tmp_path):
    path = tmp_path / "terms.tsv"
    rows = [f"{name}\tPER" for name in PEOPLE] + [f"{place}\tLOC" for place in PLACES] + ["Will\tPER", "China\tLOC"]
    path.write_text("\n".join(rows) + "\n", encoding="utf8")
    return path


def texts(n: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    return [
        rng.choice(TEMPLATES).format(p=rng.choice(PEOPLE), q=rng.choice(PEOPLE), l=rng.choice(PLACES)) for _ in range(n)
    ]


def labelled(nlp, terms, text, **settings):
    return DistantLabeller(nlp, [terms], DistantSettings(**settings))(nlp.make_doc(text))


def iob(doc) -> list[int]:
    return doc.to_array(ENT_IOB).tolist()  # 0 missing, 1 inside, 2 outside, 3 begin


def test_matches_become_entities_and_unmatched_name_like_tokens_missing(terms):
    nlp = spacy.blank("en")
    doc = labelled(nlp, terms, "Anna Berg met Ivo Petrov in Oslo yesterday .", unknown_names=True)
    assert [(e.text, e.label_) for e in doc.ents] == [("Anna Berg", "PER"), ("Oslo", "LOC")]
    # "Ivo Petrov" is in no list but looks like a name: missing, neither entity nor O; "yesterday" is O
    assert iob(doc)[3:5] == [0, 0] and iob(doc)[7] == 2 and iob(doc)[2] == 2
    plain = labelled(nlp, terms, "Anna Berg met Ivo Petrov in Oslo yesterday .")  # the default: O
    assert iob(plain)[3:5] == [2, 2]


def test_ambiguous_and_lower_case_entries_are_no_entities(terms):
    nlp = spacy.blank("en")
    doc = labelled(nlp, terms, "Anna Berg will visit china , and Will said so .")
    assert [(e.text, e.label_) for e in doc.ents] == [("Anna Berg", "PER")]
    # "Will" is a common English word: its token is missing; lower-case "will" and "china" are no names: O
    assert iob(doc)[7] == 0 and iob(doc)[2] == 2 and iob(doc)[4] == 2
    # "China" is a frequent word, but one usually capitalized: a name
    assert [e.text for e in labelled(nlp, terms, "Anna Berg flew to China .").ents] == ["Anna Berg", "China"]


def labelled_by_list(tmp_path, rows: str, text: str):
    """A doc of the text labelled from one list of "term<TAB>label" rows."""
    path = tmp_path / "list.tsv"
    path.write_text(rows, encoding="utf8")
    nlp = spacy.blank("en")
    return DistantLabeller(nlp, [path])(nlp.make_doc(text))


def test_ordinary_and_calendar_words_in_name_lists_are_ambiguous(tmp_path):
    rows = "Sales\tPER\nMonday\tPER\nJuly\tPER\nNovak\tPER\n"
    doc = labelled_by_list(tmp_path, rows, "Sales rose on Monday , Novak said in July .")
    assert [(e.text, e.label_) for e in doc.ents] == [("Novak", "PER")]
    # usually lower case ("sales"), or a weekday or month: missing, neither a name nor O
    assert iob(doc)[0] == 0 and iob(doc)[3] == 0 and iob(doc)[8] == 0 and iob(doc)[1] == 2


def test_single_characters_numbers_and_frequent_words_in_term_lists_are_ambiguous(tmp_path):
    rows = "P\tChemical\nten\tChemical\ncontrol\tChemical\ncocaine\tChemical\n"
    doc = labelled_by_list(tmp_path, rows, "Ten rats took cocaine versus control ( P < 0.05 ) .")
    assert [(e.text, e.label_) for e in doc.ents] == [("cocaine", "Chemical")]
    # a single character, a number and a frequent English word: missing; "rats" and "versus" are O
    assert iob(doc)[0] == 0 and iob(doc)[5] == 0 and iob(doc)[7] == 0 and iob(doc)[1] == 2 and iob(doc)[4] == 2


def test_a_short_form_takes_the_label_of_its_long_form_throughout_the_doc(tmp_path):
    rows = "atrial fibrillation\tDisease\n"
    text = "Patients with atrial fibrillation ( AF ) were treated . AF recurred in two . A ( AB ) test ."
    doc = labelled_by_list(tmp_path, rows, text)
    expected = [("atrial fibrillation", "Disease"), ("AF", "Disease"), ("AF", "Disease")]
    assert [(e.text, e.label_) for e in doc.ents] == expected
    # a short form whose long form is no entity stays O
    assert iob(doc)[text.split().index("AB")] == 2
    nlp = spacy.blank("en")
    path = tmp_path / "list.tsv"
    off = DistantLabeller(nlp, [path], DistantSettings(short_forms=False))(nlp.make_doc(text))
    assert [e.text for e in off.ents] == ["atrial fibrillation"]


def test_a_word_of_text_more_than_of_names_is_ambiguous_in_a_list_of_people(tmp_path):
    rows = "Senate\tPER\nNovak\tPER\nBerlin\tLOC\n"
    doc = labelled_by_list(tmp_path, rows, "Novak told the Senate in Berlin .")
    # "Senate" is usual in text and a rare surname: missing as a person; "Berlin", a place, stays
    assert [(e.text, e.label_) for e in doc.ents] == [("Novak", "PER"), ("Berlin", "LOC")]
    assert iob(doc)[3] == 0
    organisations = labelled_by_list(tmp_path, "Senate\tORG\nNovak\tPER\n", "Novak told the Senate .")
    assert [(e.text, e.label_) for e in organisations.ents] == [("Novak", "PER"), ("Senate", "ORG")]


def test_a_name_runs_on_over_the_capitalized_words_no_list_has(terms):
    nlp = spacy.blank("en")
    doc = labelled(nlp, terms, "Yesterday Anna Berg Lindqvist met Paul in Oslo on Monday .")
    # "Lindqvist" is in no list; "Paul" neither, but nothing listed is beside it; "Monday" is a weekday
    assert [(e.text, e.label_) for e in doc.ents] == [("Anna Berg Lindqvist", "PER"), ("Oslo", "LOC")]
    plain = labelled(nlp, terms, "Yesterday Anna Berg Lindqvist met Paul in Oslo .", extend_names=False)
    assert [e.text for e in plain.ents] == ["Anna Berg", "Oslo"]


def test_a_full_names_surname_alone_is_the_person(terms):
    nlp = spacy.blank("en")
    text = "Anna Berg Lindqvist met Paul . Lindqvist said so , and Mr Lindqvist left . Berg Street is wide ."
    doc = labelled(nlp, terms, text)
    # alone between unlabelled lower-case words or punctuation: the person; beside a capital ("Mr", "Street"): not
    assert [(e.start, e.text, e.label_) for e in doc.ents] == [
        (0, "Anna Berg Lindqvist", "PER"),
        (6, "Lindqvist", "PER"),
    ]
    plain = labelled(nlp, terms, text, repeat_surnames=False)
    assert [e.text for e in plain.ents] == ["Anna Berg Lindqvist"]
    places = labelled(nlp, terms, "Anna Berg Lindqvist met Paul . Lindqvist said so .", person_labels=("PERSON",))
    assert [e.text for e in places.ents] == ["Anna Berg Lindqvist"]  # PER names no person here


def test_names_of_two_lists_side_by_side_are_missing(tmp_path):
    doc = labelled_by_list(tmp_path, "David\tLOC\nWilliams\tPER\nOslo\tLOC\n", "David Williams flew to Oslo .")
    assert [(e.text, e.label_) for e in doc.ents] == [("Oslo", "LOC")]
    assert iob(doc)[:2] == [0, 0] and iob(doc)[2] == 2  # a name of an unknown type: missing


def test_a_span_two_lists_label_differently(tmp_path):
    nlp = spacy.blank("en")
    first, second = tmp_path / "places.tsv", tmp_path / "people.tsv"
    first.write_text("Jordan\tLOC\n", encoding="utf8")
    second.write_text("Jordan\tPER\n", encoding="utf8")
    doc = DistantLabeller(nlp, [first, second])(nlp.make_doc("They met in Jordan ."))
    assert [(e.text, e.label_) for e in doc.ents] == [("Jordan", "LOC")]  # the list given first wins
    doc = DistantLabeller(nlp, [first, second], DistantSettings(clash="missing"))(nlp.make_doc("They met in Jordan ."))
    assert not doc.ents and iob(doc)[3] == 0


def train_on(nlp, docs, epochs=12):
    examples = [Example(nlp.make_doc(doc.text), doc) for doc in docs]
    nlp.initialize(lambda: examples)
    for _ in range(epochs):
        nlp.update(examples)
    return nlp


def test_a_name_in_no_list_is_found_after_training_on_distant_labels(terms):
    nlp = spacy.blank("en")
    nlp.add_pipe("bioner", config={"n_buckets": 2**16})
    labeller = DistantLabeller(nlp, [terms])
    docs = [labeller(nlp.make_doc(text)) for text in texts(300)]
    train_on(nlp, docs)
    doc = nlp("Ivo Petrov met Anna Berg in Riga .")
    assert ("Ivo Petrov", "PER") in [(e.text, e.label_) for e in doc.ents]


def test_self_training_rounds_run_and_add_the_models_entities(terms):
    nlp = spacy.blank("en")
    nlp.add_pipe("bioner", config={"n_buckets": 2**16})
    labeller = DistantLabeller(nlp, [terms], DistantSettings(unknown_names=True))
    docs = [labeller(nlp.make_doc(text)) for text in texts(300)]
    unknown = labeller(nlp.make_doc("Ivo Petrov met Anna Berg in Oslo ."))
    assert iob(unknown)[:2] == [0, 0]
    for _ in range(2):  # two rounds: train, relabel
        train_on(nlp, docs)
        counts: Counter = Counter()
        docs = list(relabel(nlp, docs + [unknown], threshold=0.5, counts=counts))
        unknown = docs.pop()
    assert ("Ivo Petrov", "PER") in [(e.text, e.label_) for e in unknown.ents]


def test_the_command_labels_a_folder_of_text_files(terms, tmp_path):
    folder = tmp_path / "texts"
    folder.mkdir()
    for i, text in enumerate(texts(5)):
        (folder / f"{i}.txt").write_text(text, encoding="utf8")
    output = tmp_path / "distant.spacy"
    result = CliRunner().invoke(app, ["distant", "label", str(folder), str(terms), "--output", str(output)])
    assert result.exit_code == 0, result.output
    docs = list(DocBin().from_disk(output).get_docs(spacy.blank("en").vocab))
    assert len(docs) == 5 and all(doc.ents for doc in docs)
    bad = CliRunner().invoke(app, ["distant", "label", str(terms), str(terms), "--output", str(output)])
    assert bad.exit_code == 1 and "a directory of .txt files" in " ".join(bad.output.split())


def test_the_command_reads_a_full_names_surname_unless_told_not_to(terms, tmp_path):
    text = tmp_path / "text.txt"
    text.write_text("Anna Berg Lindqvist met Paul . Lindqvist said so .\n", encoding="utf8")
    found = {}
    for flag in ([], ["--no-repeat-surnames"]):
        output = tmp_path / f"distant{len(flag)}.spacy"
        result = CliRunner().invoke(app, ["distant", "label", str(text), str(terms), "--output", str(output), *flag])
        assert result.exit_code == 0, result.output
        (doc,) = DocBin().from_disk(output).get_docs(spacy.blank("en").vocab)
        found[bool(flag)] = [e.text for e in doc.ents]
    assert found == {False: ["Anna Berg Lindqvist", "Lindqvist"], True: ["Anna Berg Lindqvist"]}


def test_the_trusted_entries_leave_out_clashing_terms_and_entries_ambiguous_everywhere(tmp_path):
    first, second = tmp_path / "chemicals.tsv", tmp_path / "places.tsv"
    first.write_text("P\tChemical\ncontrol\tChemical\ncocaine\tChemical\nJordan\tChemical\n", encoding="utf8")
    second.write_text("Jordan\tLOC\nOslo\tLOC\natrial fibrillation\tLOC\n", encoding="utf8")
    labeller = DistantLabeller(spacy.blank("en"), [first, second])
    assert list(labeller.trusted_terms()) == [("cocaine", "Chemical"), ("Oslo", "LOC"), ("atrial fibrillation", "LOC")]
    everything = DistantLabeller(spacy.blank("en"), [first], DistantSettings(ambiguous_words=False))
    assert [term for term, _ in everything.trusted_terms()] == ["P", "control", "cocaine", "Jordan"]


def test_the_command_writes_the_trusted_entries_for_the_models_features(terms, tmp_path):
    text, output, trusted = tmp_path / "text.txt", tmp_path / "distant.spacy", tmp_path / "lists" / "trusted.tsv"
    text.write_text("Anna Berg met Will in Oslo .\n", encoding="utf8")
    args = ["distant", "label", str(text), str(terms), "--output", str(output), "--terms-output", str(trusted)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    rows = [line.split("\t") for line in trusted.read_text(encoding="utf8").splitlines()]
    assert ["Anna Berg", "PER"] in rows and ["Oslo", "LOC"] in rows and ["Will", "PER"] not in rows
