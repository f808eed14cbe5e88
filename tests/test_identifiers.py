"""bioner_identifiers: each kind found and validated, its near misses refused, overlaps, presets kept by bioner."""

import pytest
import spacy
from conftest import train_nlp
from spacy.util import registry

from spacy_bioner.identifiers.kinds import Identifier, card_issuer


@pytest.fixture(scope="module")
def nlp():
    nlp = spacy.blank("en")
    nlp.add_pipe("bioner_identifiers")
    return nlp


def found(nlp, text):
    return [(ent.text, ent.label_) for ent in nlp(text).ents]


@pytest.mark.parametrize(
    "text,identifier,label,canonical",
    [
        (
            "Write to Jane.Doe+news@Example.co.uk today.",
            "Jane.Doe+news@Example.co.uk",
            "EMAIL",
            "Jane.Doe+news@example.co.uk",
        ),
        ("See https://docs.example.org/a/b?x=1#top.", "https://docs.example.org/a/b?x=1#top", "URL", None),
        ("Or www.example.com, then", "www.example.com", "URL", "http://www.example.com"),
        ("Host 10.0.0.255 is down", "10.0.0.255", "IP_ADDRESS", "10.0.0.255"),
        (
            "Host 2001:0db8:0000:0000:0000:ff00:0042:8329 too",
            "2001:0db8:0000:0000:0000:ff00:0042:8329",
            "IP_ADDRESS",
            "2001:db8::ff00:42:8329",
        ),
        ("Call (415) 555-2671 now", "(415) 555-2671", "PHONE_NUMBER", "+14155552671"),
        ("Call +44 20 7946 0958 now", "+44 20 7946 0958", "PHONE_NUMBER", "+442079460958"),
        (
            "Pay to GB82 WEST 1234 5698 7654 32 please",
            "GB82 WEST 1234 5698 7654 32",
            "IBAN_CODE",
            "GB82WEST12345698765432",
        ),
        ("Pay to DE89370400440532013000.", "DE89370400440532013000", "IBAN_CODE", "DE89370400440532013000"),
        ("Card 4111-1111-1111-1111 expires", "4111-1111-1111-1111", "CREDIT_CARD", "4111111111111111"),
        ("Amex 378282246310005 ok", "378282246310005", "CREDIT_CARD", "378282246310005"),
        (
            "Logged at 2024-05-07T14:30:00+02:00 by",
            "2024-05-07T14:30:00+02:00",
            "DATE_TIME",
            "2024-05-07T14:30:00+02:00",
        ),
        ("Due 2024-02-29.", "2024-02-29", "DATE_TIME", "2024-02-29"),
    ],
)
def test_each_kind_is_found_with_its_canonical_form(nlp, text, identifier, label, canonical):
    ents = nlp(text).ents
    assert [(ent.text, ent.label_) for ent in ents] == [(identifier, label)]
    assert ents[0]._.identifier == (canonical or identifier)


@pytest.mark.parametrize(
    "text",
    [
        "Write to jane@ or @example.com or jane@example",  # no domain, no local part, no top-level domain
        "Card 4111 1111 1111 1112 and order 1234567812345678",  # bad Luhn digit; no issuer
        "A 15-digit number 411111111111111 is no Visa card",
        "Pay to GB82 WEST 1234 5698 7654 33",  # bad IBAN check digits
        "Released as version 1.2.3.4 and build 10.0.19041.1",  # versions, not addresses
        "Host 256.1.1.1 and 1.2.3 are no addresses",
        "Due 2024-02-30 or 2023-13-01",  # impossible dates
        "Call 555-0000 or 123",  # too short for a phone number
        "Visit http://localhost or www.example",  # no top-level domain
        "The time was 12:30:45 and the ratio 3:2",
    ],
)
def test_near_misses_are_refused(nlp, text):
    assert found(nlp, text) == []


def test_card_issuers_read_prefix_ranges_and_lengths():
    assert card_issuer("5555555555554444") == "mastercard" and card_issuer("2223003122003222") == "mastercard"
    assert card_issuer("6011111111111117") == "discover" and card_issuer("1234567812345670") is None


def test_labels_are_settings_and_a_kind_can_be_left_out():
    nlp = spacy.blank("en")
    nlp.add_pipe("bioner_identifiers", config={"labels": {"email": "CONTACT", "ip": ""}})
    assert found(nlp, "a@example.com 10.0.0.1") == [("a@example.com", "CONTACT")]
    with pytest.raises(ValueError, match="unknown identifier kinds"):
        spacy.blank("en").add_pipe("bioner_identifiers", config={"labels": {"passport": "ID"}})


@registry.misc("test_order_number_check.v1")
def order_number_check():
    return lambda text: text.upper() if int(text[-1]) == sum(map(int, text[4:-1])) % 10 else None


def test_a_registered_kind_of_ones_own():
    nlp = spacy.blank("en")
    config = {
        "custom": {
            "ORDER": {
                "@misc": "bioner.identifier.v1",
                "pattern": r"(?i:ord)-\d{6}",
                "validate": {"@misc": "test_order_number_check.v1"},
            }
        }
    }
    ids = nlp.add_pipe("bioner_identifiers", config=config)
    doc = nlp("Orders ord-123455 and ORD-123456 shipped")
    assert [(ent.text, ent.label_, ent._.identifier) for ent in doc.ents] == [("ord-123455", "ORDER", "ORD-123455")]
    assert "ORDER" in ids.labels
    with pytest.raises(ValueError, match="capturing groups"):
        spacy.blank("en").add_pipe(
            "bioner_identifiers", config={"custom": {"X": {"@misc": "bioner.identifier.v1", "pattern": "(a)b"}}}
        )
    with pytest.raises(ValueError, match="Identifier"):
        from spacy_bioner.identifiers.component import Identifiers

        Identifiers(nlp, custom={"X": "not an identifier"})  # type: ignore[dict-item]
    assert Identifier("x", str).pattern == "x"


def test_overlaps_follow_overwrite_ents():
    for overwrite, expected in ((False, [("a@example.com", "PER")]), (True, [("a@example.com", "EMAIL")])):
        nlp = spacy.blank("en")
        ruler = nlp.add_pipe("entity_ruler")
        ruler.add_patterns([{"label": "PER", "pattern": "a@example.com"}])
        nlp.add_pipe("bioner_identifiers", config={"overwrite_ents": overwrite})
        assert found(nlp, "Mail a@example.com now") == expected


def test_spans_cover_whole_tokens():
    nlp = spacy.blank("en")
    nlp.add_pipe("bioner_identifiers")
    doc = nlp("IBAN:GB82WEST12345698765432 and 4111 1111 1111 1111")
    assert [ent.label_ for ent in doc.ents] == ["IBAN_CODE", "CREDIT_CARD"]
    assert all(ent.start_char == ent[0].idx and ent.end_char == ent[-1].idx + len(ent[-1]) for ent in doc.ents)
    assert len(doc.ents[1]) == 4  # the tokenizer splits a card number at its spaces; the span covers the parts


def test_bioner_keeps_identifiers_as_presets():
    nlp = spacy.blank("en")
    nlp.add_pipe("bioner_identifiers")
    nlp.add_pipe("bioner")
    train_nlp(nlp=nlp)
    doc = nlp("Alice Smith wrote to alice@example.com from Paris on 2024-05-07 , +47 22 12 34 56 .")
    found = [(ent.text, ent.label_) for ent in doc.ents]
    assert ("alice@example.com", "EMAIL") in found and ("Alice Smith", "PER") in found
    # presets longer than any entity training saw keep their length (bioner bounds only its own)
    assert ("2024-05-07", "DATE_TIME") in found and ("+47 22 12 34 56", "PHONE_NUMBER") in found


@pytest.mark.parametrize("text", ["9" * 100_000, "🙂📞 +1 🙂", "\x00\x01 @@@ ::: ...", "1-" * 5000, "a@" * 3000])
def test_hostile_input_gives_a_result_not_an_exception(nlp, text):
    assert isinstance(found(nlp, text), list)


def test_round_trip(nlp, tmp_path):
    nlp.to_disk(tmp_path / "p")
    loaded = spacy.load(tmp_path / "p")
    assert found(loaded, "mail a@example.com") == [("a@example.com", "EMAIL")]
