"""bioner_values: each normalizer's values, no value (and a reason) for what it cannot read, serialization."""

import pytest
import spacy
from spacy.tokens import Doc, DocBin, Span


@pytest.fixture(scope="module")
def nlp():
    nlp = spacy.blank("en")
    nlp.add_pipe("bioner_values", config={"reference_date": "2024-05-07"})  # a Tuesday
    return nlp


def value_of(nlp, text, label):
    doc = nlp.make_doc(text)
    doc.ents = [Span(doc, 0, len(doc), label=label)]
    ent = nlp(doc).ents[0]
    return ent._.value, ent._.value_reason


@pytest.mark.parametrize(
    "text,label,value",
    [
        ("next Tuesday", "DATE", {"type": "date", "iso": "2024-05-14"}),
        ("yesterday", "DATE", {"type": "date", "iso": "2024-05-06"}),
        ("March 3, 2021", "DATE", {"type": "date", "iso": "2021-03-03"}),
        ("May 2020", "DATE", {"type": "date", "iso": "2020-05"}),
        ("2019", "DATE", {"type": "date", "iso": "2019"}),
        ("the last two weeks", "DATE", {"type": "interval", "start": "2024-04-23", "end": "2024-05-07"}),
        ("the 1990s", "DATE", {"type": "interval", "start": "1990-01-01", "end": "1999-12-31"}),
        # a decade without its century: the latest one begun by the reference date
        ("the 80s", "DATE", {"type": "interval", "start": "1980-01-01", "end": "1989-12-31"}),
        ("the '20s", "DATE", {"type": "interval", "start": "2020-01-01", "end": "2029-12-31"}),
        ("the late 30s", "DATE", {"type": "interval", "start": "1936-01-01", "end": "1939-12-31"}),
        ("Q3 2021", "DATE", {"type": "interval", "start": "2021-07-01", "end": "2021-09-30"}),
        # the reference date, 2024-05-07, is a Tuesday
        ("this weekend", "DATE", {"type": "interval", "start": "2024-05-11", "end": "2024-05-12"}),
        ("Last weekend", "DATE", {"type": "interval", "start": "2024-05-04", "end": "2024-05-05"}),
        ("3:30 pm", "TIME", {"type": "time", "iso": "2024-05-07T15:30"}),
        ("$1.2 million", "MONEY", {"type": "money", "amount": 1200000, "currency": "USD"}),
        ("EUR 300", "MONEY", {"type": "money", "amount": 300, "currency": "EUR"}),
        ("300 euros", "MONEY", {"type": "money", "amount": 300, "currency": "EUR"}),
        ("40 bucks", "MONEY", {"type": "money", "amount": 40, "currency": "USD"}),
        ("a hundred quid", "MONEY", {"type": "money", "amount": 100, "currency": "GBP"}),
        ("¥5bn", "MONEY", {"type": "money", "amount": 5000000000, "currency": "JPY"}),
        ("12.5%", "PERCENT", {"type": "percent", "percent": 12.5}),
        ("twelve percent", "PERCENT", {"type": "percent", "percent": 12}),
        ("5 km", "QUANTITY", {"type": "quantity", "number": 5, "unit": "kilometer"}),
        ("two miles", "QUANTITY", {"type": "quantity", "number": 2, "unit": "mile"}),
        ("twenty-five", "CARDINAL", {"type": "number", "number": 25}),
        ("1.2 million", "CARDINAL", {"type": "number", "number": 1200000}),
        ("a hundred", "CARDINAL", {"type": "number", "number": 100}),
        ("1,234", "CARDINAL", {"type": "number", "number": 1234}),
        ("third", "ORDINAL", {"type": "ordinal", "number": 3}),
        ("21st", "ORDINAL", {"type": "ordinal", "number": 21}),
        ("(415) 555-2671", "PHONE_NUMBER", {"type": "phone", "canonical": "+14155552671"}),
        ("GB82 WEST 1234 5698 7654 32", "IBAN_CODE", {"type": "iban", "canonical": "GB82WEST12345698765432"}),
        ("Jane@Example.COM", "EMAIL", {"type": "email", "canonical": "Jane@example.com"}),
    ],
)
def test_each_kind_gets_its_value(nlp, text, label, value):
    assert value_of(nlp, text, label) == (value, None)


@pytest.mark.parametrize(
    "text,label",
    [
        ("9" * 100_000, "CARDINAL"),
        ("9" * 100_000 + " dollars", "MONEY"),
        ("🙂", "DATE"),
        ("🙂 %", "PERCENT"),
        ("year 99999", "DATE"),
        ("99999-01-01", "DATE"),
        ("about 40 dollars", "MONEY"),
        ("the 1990s" * 20, "DATE"),
        ("5 foos", "QUANTITY"),
        ("several", "CARDINAL"),
        ("GB82 WEST 1234 5698 7654 33", "IBAN_CODE"),
        ("12th", "DATE"),  # another NER's label: an ordinal alone names no date
        ("5 am", "QUANTITY"),  # a time of day, not five attometers
        ("next weekend", "DATE"),  # said on a Tuesday: the coming one or the one after
    ],
)
def test_what_cannot_be_read_gets_no_value_and_a_reason(nlp, text, label):
    value, reason = value_of(nlp, text, label)
    assert value is None and isinstance(reason, str) and reason


def test_other_labels_get_nothing(nlp):
    assert value_of(nlp, "Paris", "LOC") == (None, None)


def test_the_reference_date_of_a_doc_wins(nlp):
    doc = nlp.make_doc("tomorrow")
    doc.user_data["reference_date"] = "2030-01-31"
    doc.ents = [Span(doc, 0, 1, label="DATE")]
    assert nlp(doc).ents[0]._.value == {"type": "date", "iso": "2030-02-01"}
    doc.user_data["reference_date"] = "last week"
    with pytest.raises(ValueError, match="must be an ISO date"):
        nlp(doc)


def test_the_label_mapping_is_a_setting():
    nlp = spacy.blank("en")
    nlp.add_pipe("bioner_values", config={"labels": {"BETRAG": "money"}})
    assert value_of(nlp, "EUR 5", "BETRAG") == ({"type": "money", "amount": 5, "currency": "EUR"}, None)
    with pytest.raises(ValueError, match="unknown normalizers"):
        spacy.blank("en").add_pipe("bioner_values", config={"labels": {"X": "colour"}})


def test_values_survive_docbin_and_to_bytes(nlp):
    doc = nlp.make_doc("They paid $1.2 million on 2024-05-01 .")
    doc.ents = [doc.char_span(10, 22, label="MONEY"), doc.char_span(26, 36, label="DATE")]
    doc = nlp(doc)
    values = [ent._.value for ent in doc.ents]
    assert values[0]["amount"] == 1200000 and values[1]["iso"] == "2024-05-01"
    again = Doc(nlp.vocab).from_bytes(doc.to_bytes())
    assert [ent._.value for ent in again.ents] == values
    docbin = DocBin(store_user_data=True, docs=[doc])
    (restored,) = DocBin().from_bytes(docbin.to_bytes()).get_docs(nlp.vocab)
    assert [ent._.value for ent in restored.ents] == values


def test_identifiers_then_values():
    nlp = spacy.blank("en")
    nlp.add_pipe("bioner_identifiers")
    nlp.add_pipe("bioner_values")
    doc = nlp("Call +44 20 7946 0958 or mail Jane@Example.COM")
    assert [ent._.value["canonical"] for ent in doc.ents] == ["+442079460958", "Jane@example.com"]
