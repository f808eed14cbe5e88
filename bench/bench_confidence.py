"""Entity confidence on dev: calibration (ECE) and the recall knob.

For each corpus: trains the default config with `spacy train` (model-best on
dev), splits the dev docs in two halves (even and odd docs), fits the
temperature on one half and measures the expected calibration error (10
bins) of the decoded entities on the other, both ways; also the ECE with no
temperature (T = 1) and the cost of confidences in tokens/s. On CoNLL, the
recall knob: P/R/F1 on dev for a range of `entity_bias` values; and the
candidate spans, for routing to a person: the decoded entities plus every
other span whose probability reaches `alternatives_threshold` (up to
1000 per doc, `doc.spans["bioner_alternatives"]`), as P/R against
the gold entities for a range of thresholds, on the even dev docs with the
temperature fitted on the odd ones. Figures are printed as JSON too.

Usage: python bench/bench_confidence.py [--data ../shared/data] [--corpora conll2003,bc5cdr]
"""

import argparse
import json
import tempfile
import time
from pathlib import Path

import spacy
from common import ROOT, converted, spacy_evaluate_examples, train, write_results

from spacy_bioner.evaluate import candidate_curve, recall_curve
from spacy_bioner.ner.calibration import expected_calibration_error, fit_temperature, outcomes, reliability

BIASES = [0.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0]
THRESHOLDS = [0.5, 0.2, 0.1, 0.05, 0.02, 0.01, 0.005, 0.002, 0.001]


def calibration(ner, pairs) -> dict:
    halves = [pairs[0::2], pairs[1::2]]
    result = {"halves": []}
    for held_out, fitted_on in ((halves[0], halves[1]), (halves[1], halves[0])):
        temperature = fit_temperature(ner, fitted_on)
        (at_one, at_fit), correct = outcomes(ner, held_out, [1.0, temperature])
        result["halves"].append(
            {
                "temperature": temperature,
                "entities": int(len(correct)),
                "accuracy": float(correct.mean()),
                "ece": expected_calibration_error(at_fit, correct),
                "ece_at_t1": expected_calibration_error(at_one, correct),
                "reliability": reliability(at_fit, correct),
            }
        )
    result["ece"] = sum(h["ece"] for h in result["halves"]) / 2
    result["ece_at_t1"] = sum(h["ece_at_t1"] for h in result["halves"]) / 2
    return result


def confidence_cost(nlp, docs, temperature: float) -> dict:
    """Tokens/s without confidences, with them at T = 1 (uncalibrated), and at the fitted temperature."""
    tagger, rates = nlp.get_pipe("bioner"), {}
    n_tokens = sum(len(doc) for doc in docs)
    for name, on, t in (("without", False, 1.0), ("with", True, 1.0), ("with_fitted_t", True, temperature)):
        ner = tagger.with_settings(confidence={"probabilities": on, "temperature": t})
        runs = []
        for _ in range(3):
            copies = [doc.copy() for doc in docs]
            start = time.perf_counter()
            list(ner.pipe(copies, batch_size=1000))
            runs.append(n_tokens / (time.perf_counter() - start))
        rates[name] = sorted(runs)[1]
    return rates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--corpora", default="conll2003,bc5cdr")
    args = parser.parse_args()
    figures = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for corpus in args.corpora.split(","):
            train_path, dev_path = converted(args.data, corpus, work / corpus)
            train(train_path, dev_path, work / corpus / "model")
            nlp = spacy.load(work / corpus / "model" / "model-best")
            examples = spacy_evaluate_examples(nlp, dev_path)
            pairs = [(eg.reference, eg.predicted) for eg in examples]
            fitted = calibration(nlp.get_pipe("bioner"), pairs)
            figures[corpus] = {
                "calibration": fitted,
                "tokens_per_s": confidence_cost(
                    nlp, [eg.predicted for eg in examples], fitted["halves"][0]["temperature"]
                ),
            }
            if corpus == "conll2003":
                figures[corpus]["recall_knob"] = recall_curve(
                    nlp, "bioner", spacy_evaluate_examples(nlp, dev_path), BIASES
                )
                # On the even docs, with the temperature fitted on the odd ones.
                ner = nlp.get_pipe("bioner")
                ner.settings = ner.settings.replace(
                    confidence={"temperature": figures[corpus]["calibration"]["halves"][0]["temperature"]}
                )
                figures[corpus]["candidates"] = candidate_curve(
                    nlp, "bioner", spacy_evaluate_examples(nlp, dev_path)[0::2], THRESHOLDS
                )
    for corpus, f in figures.items():
        c = f["calibration"]
        print(
            f"{corpus} dev: ECE {c['ece']:.3f} with a temperature fitted on the other half "
            f"(T = {', '.join(format(h['temperature'], '.3g') for h in c['halves'])}), {c['ece_at_t1']:.3f} at T = 1; "
            f"tagging {f['tokens_per_s']['without']:,.0f} tokens/s, {f['tokens_per_s']['with']:,.0f} with confidences "
            "at T = 1, "
            f"{f['tokens_per_s']['with_fitted_t']:,.0f} at the fitted T"
        )
        for point in f.get("recall_knob", []):
            print(
                f"  entity_bias {point['entity_bias']:>5}: P {100 * point['p']:.2f} R {100 * point['r']:.2f} F1 "
                f"{100 * point['f']:.2f}"
            )
        for point in f.get("candidates", []):
            print(
                f"  candidates at threshold {point['threshold']:>6}: P {100 * point['p']:.2f} R {100 * point['r']:.2f} "
                f"({point['per_gold']:.2f} candidates per gold entity)"
            )
    print(json.dumps(figures))
    print(f"written to {write_results('confidence', figures)}")


if __name__ == "__main__":
    main()
