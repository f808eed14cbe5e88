"""Letters, emails and forms: salutations, sign-offs and field labels constrain decoding."""

import numpy
import pytest
import spacy
from conftest import train_nlp

from spacy_bioner.ner.batch import lay_out
from spacy_bioner.ner.letters import letter_marks

LETTER = "Hi Miles,\n\nthe Acme Corp meeting moved to Berlin.\n\nBest,\nSarah"
FORM = "Employer:\nAcme Corp\nCity:\nNew\nYork"


def marks(text):
    """The texts of the tokens outside any entity, of those before which entities end, and the names."""
    nlp = spacy.blank("en")
    doc = nlp.make_doc(text)
    is_space = numpy.array([t.is_space for t in doc])
    found = letter_marks([doc], numpy.array([0, len(doc)]), is_space, bool(is_space.any()))
    if found is None:
        return doc, set(), [], []
    outside = {doc[i].text for i in numpy.flatnonzero(found.outside)}
    ends = [(doc[i].text, doc[i + 1].text) for i in numpy.flatnonzero(found.ends)]
    return doc, outside, ends, [doc[s:e].text for s, e in found.persons]


def test_a_letter_s_greeting_and_sign_off_are_outside_and_their_names_are_people():
    _, outside, _, persons = marks(LETTER)
    assert outside == {"Hi", "Best", ","}
    assert persons == ["Miles", "Sarah"]


@pytest.mark.parametrize(
    "text, persons",
    [
        ("Dear Dr. Chen,\nthanks for the report.", ["Chen"]),
        ("Good morning Anna Maria Lopez!", ["Anna Maria Lopez"]),
        ("hi miles, are we still on?", ["miles"]),
        ("Hi all,\nthe meeting moved.", []),
        ("Hello there, how are you?", []),
        ("Hey Jude is a song by the Beatles.", []),
        ("Kind regards,\nAnna Lopez\nAcme Corp", ["Anna Lopez"]),
        ("Sincerely,\nCustomer Service", []),  # words usually in lower case, and no known names
        ("Love,\nGrandma", []),
        ("Hello World", []),
    ],
)
def test_greeted_and_signed_names(text, persons):
    assert marks(text)[3] == persons


def test_a_field_label_is_outside_and_ends_the_entity_above_it():
    _, outside, ends, _ = marks(FORM)
    assert outside == {"Employer", "City", ":"}
    assert ends == [("\n", "City")]  # the line break before "City:" only: "New\nYork" may stay one entity


def test_a_transcript_speaker_is_not_a_field_label():
    assert marks("OBAMA: Thank you all.\nCity: Denver")[1] == {"City", ":"}


def test_prose_has_no_marks():
    assert marks("Angela Merkel visited Paris.\nShe met Emmanuel Macron there.")[1:] == (set(), [], [])


@pytest.fixture(scope="module")
def nlp():
    return train_nlp(epochs=20)


def test_decoding_keeps_greetings_sign_offs_and_labels_out_of_entities(nlp):
    for text in (LETTER, FORM):
        doc = nlp(text)
        inside = {token.text for ent in doc.ents for token in ent}
        assert not inside & {"Hi", "Best", "Employer", "City", ":"}
    letter = nlp(LETTER)
    assert ("Miles", "PER") in [(e.text, e.label_) for e in letter.ents]
    assert ("Sarah", "PER") in [(e.text, e.label_) for e in letter.ents]
    assert all("City" not in ent.text for ent in nlp(FORM).ents)


def test_letters_off_reads_no_marks_and_no_person_label_forces_no_name(nlp):
    doc = nlp.make_doc(LETTER)
    assert lay_out(nlp.get_pipe("bioner"), [doc]).letters is not None
    off = train_nlp(config={"rules": {"letters": False}}, epochs=5)
    assert lay_out(off.get_pipe("bioner"), [off.make_doc(LETTER)]).letters is None
    no_people = train_nlp(config={"rules": {"person_labels": []}}, epochs=20)
    letter = no_people(LETTER)
    assert not {token.text for ent in letter.ents for token in ent} & {"Hi", "Best"}
