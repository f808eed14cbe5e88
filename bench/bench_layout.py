"""Layout text: the dev set's gold entities written as forms, one field per line, against the same
entities in prose.

Real input is not only prose: forms, addresses, signatures and lists put one value per line. From
each dev doc's gold entities this writes two texts of the same entities:
- layout: a field name per label ("Name", "Employer", "City", "Other"), then the entity on its own
  line, in turn after a line break, after a tab, after a line break and an indent, with a blank
  line between fields;
- prose: "The name is Angela Merkel ." for each entity, on one line.
A pipeline (raw text through its tokenizer) is scored on the inserted entities alone: P/R/F1 with
exact character offsets and label, every other entity it finds (a field name, say) a false positive.

Usage: python bench/bench_layout.py [MODEL [--describe TEXT]] [--data DATA] [--line-breaks blank_or_indented every none]
Without MODEL it trains configs/bioner.cfg on CoNLL-2003 first.
"""

import argparse
import json
import tempfile
from pathlib import Path

import spacy
from common import ROOT, conll_model, convert, write_results
from spacy.tokens import DocBin

from spacy_bioner.evaluate import prf

FIELDS = {"PER": "Name", "ORG": "Employer", "LOC": "City", "MISC": "Other"}
LAYOUTS = ["{field}:\n{value}\n\n", "{field}:\t{value}\n\n", "{field}:\n  {value}\n\n"]


def texts_of(entities, layout: bool):
    """The text holding these (text, label) entities, and their gold (start, end, label) character spans."""
    text, gold = "", []
    for i, (value, label) in enumerate(entities):
        field = FIELDS.get(label, "Field")
        template = LAYOUTS[i % len(LAYOUTS)] if layout else "The {field} is {value} . "
        before = template.split("{value}")[0].format(field=field if layout else field.lower())
        after = template.split("{value}")[1]
        start = len(text) + len(before)
        text += before + value + after
        gold.append((start, start + len(value), label))
    return text, gold


def score(nlp, texts_and_gold) -> dict:
    right = predicted = expected = 0
    for doc, (_, gold) in zip(nlp.pipe(text for text, _ in texts_and_gold), texts_and_gold):
        found = {(e.start_char, e.end_char, e.label_) for e in doc.ents}
        right, predicted, expected = right + len(found & set(gold)), predicted + len(found), expected + len(gold)
    scores = prf(right, predicted, expected)
    return {**{key: round(100 * scores[key], 2) for key in "prf"}, "entities": expected}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", nargs="?", default=None)
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--line-breaks", nargs="+", default=["blank_or_indented", "every", "none"])
    parser.add_argument("--describe", default=None, help="What MODEL is, for the results (default: its path)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        if args.model is None:
            model, dev_path = conll_model(args.data, work)
        else:
            model, dev_path = args.model, convert(args.data / "conll2003" / "eng.testa", work)
        vocab = spacy.blank("en").vocab
        docs = [[(e.text, e.label_) for e in doc.ents] for doc in DocBin().from_disk(dev_path).get_docs(vocab)]
        docs = [entities for entities in docs if entities]
        figures = {
            "model": "configs/bioner.cfg trained on CoNLL-2003"
            if args.model is None
            else args.describe or str(args.model),
            "docs": len(docs),
        }
        for line_breaks in args.line_breaks:
            nlp = spacy.load(model, config={"components": {"bioner": {"rules": {"line_breaks": line_breaks}}}})
            figures[line_breaks] = {
                way: score(nlp, [texts_of(entities, way == "layout") for entities in docs])
                for way in ("prose", "layout")
            }
    for line_breaks in args.line_breaks:
        f = figures[line_breaks]
        print(
            f"line_breaks {line_breaks}: prose F1 {f['prose']['f']} (P {f['prose']['p']} R {f['prose']['r']}), "
            f"layout F1 {f['layout']['f']} (P {f['layout']['p']} R {f['layout']['r']}), {f['prose']['entities']:,} "
            "entities"
        )
    print(json.dumps(figures))
    print(f"written to {write_results('layout', figures)}")


if __name__ == "__main__":
    main()
