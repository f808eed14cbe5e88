"""Raw text's line breaks: a trained pipeline's dev scores with whitespace tokens put between the words.

Treebanks and NER corpora have no whitespace tokens, but spaCy's tokenizer
makes one of every newline or run of spaces in raw text. For each rate R,
every dev doc gets a newline token after each word with probability R and
after each sentence's last word (seed 1), is run through the pipeline, and
the predictions are scored on the original words (spaCy's Scorer):
entities, tags, and UAS / LAS over every word, punctuation included. With
--outside-entities no newline goes inside a gold entity; with
--sentences-as-docs each gold sentence is a doc of its own (as treebank
scores are given), else the pipeline finds the sentences itself. With
--probabilities, bioner also gives each entity its probability and each doc
its 3 most probable other spans (confidence, alternatives), and each rate
says how far those moved from the ones without newlines (the lowest
rate's). With --repeats N, each rate also times the pipeline over its docs
(nlp.pipe, one process, batch 256), median of N: words/s, the original
words only, so that rates compare. Figures are percentages (probability
shifts in points), and printed as JSON too.

Without MODEL and DEV, it trains configs/bioner.cfg on CoNLL-2003 and scores its dev set (--data).

Usage: python bench/bench_whitespace.py [MODEL DEV.spacy] [--rates 0 0.05 0.2] [--outside-entities]
       [--sentences-as-docs] [--probabilities] [--repeats N] [--describe TEXT]
"""

import argparse
import json
import random
import statistics
import tempfile
import time
from pathlib import Path

import spacy
from common import ROOT, conll_model, write_results
from spacy.scorer import Scorer
from spacy.tokens import Doc, DocBin, Span
from spacy.training import Example


def with_newlines(nlp, ref: Doc, rate: float, rng: random.Random, outside_entities: bool):
    """ref's words with newline tokens among them, and the position of each word."""
    words, spaces, positions = [], [], []
    for token in ref:
        positions.append(len(words))
        words.append(token.text)
        spaces.append(bool(token.whitespace_))
        inside = token.ent_iob_ in ("B", "I") and token.i + 1 < len(ref) and ref[token.i + 1].ent_iob_ == "I"
        if (rng.random() < rate or (rate > 0 and token.is_sent_end)) and not (outside_entities and inside):
            words.append("\n")
            spaces.append(False)
    return Doc(nlp.vocab, words=words, spaces=spaces), positions


def on_words(nlp, predicted: Doc, ref: Doc, positions) -> Doc:
    """The predictions of `predicted` on ref's words alone (a head on a newline counts as the word's own)."""
    word_of = {position: i for i, position in enumerate(positions)}
    tokens = [predicted[position] for position in positions]
    annotations = {}
    if predicted.has_annotation("TAG"):
        annotations["tags"] = [token.tag_ for token in tokens]
    if predicted.has_annotation("DEP"):
        annotations["heads"] = [word_of.get(token.head.i, i) for i, token in enumerate(tokens)]
        annotations["deps"] = [token.dep_ for token in tokens]
    doc = Doc(nlp.vocab, words=[t.text for t in ref], spaces=[bool(t.whitespace_) for t in ref], **annotations)
    entity_words = [([word_of[t.i] for t in e if t.i in word_of], e.label_) for e in predicted.ents]
    doc.ents = [Span(doc, found[0], found[-1] + 1, label=label) for found, label in entity_words if found]
    return doc


def scored_spans(predicted: Doc, positions) -> dict:
    """bioner's entity probabilities and alternatives, on the original words."""
    word_of = {position: i for i, position in enumerate(positions)}
    return {
        key: [
            ((word_of[s.start], word_of[s.end - 1] + 1, s.label_), p)
            for s, p in zip(predicted.spans[key], predicted.spans[key].attrs["scores"])
        ]
        for key in ("bioner", "bioner_alternatives")
        if key in predicted.spans
    }


def probability_shifts(spans: list, baseline: list) -> dict:
    """How far entity probabilities and alternatives moved from the baseline's (no newlines)."""
    shifts = [
        abs(p - dict(base["bioner"])[span])
        for doc, base in zip(spans, baseline)
        for span, p in doc["bioner"]
        if span in dict(base["bioner"])
    ]
    same = sum(
        [(span, round(p, 6)) for span, p in doc["bioner_alternatives"]]
        == [(span, round(p, 6)) for span, p in base["bioner_alternatives"]]
        for doc, base in zip(spans, baseline)
    )
    return {
        "probability_shift_mean": sum(shifts) / max(len(shifts), 1),
        "probability_shift_over_0.05": sum(shift > 0.05 for shift in shifts) / max(len(shifts), 1),
        "docs_with_the_same_alternatives": same / max(len(spans), 1),
    }


def words_per_second(nlp, docs, n_words: int, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        batch = [doc.copy() for doc in docs]
        start = time.perf_counter()
        for _ in nlp.pipe(batch, batch_size=256):
            pass
        times.append(time.perf_counter() - start)
    return n_words / statistics.median(times)


def scores(
    nlp, refs, rate: float, outside_entities: bool, probabilities: bool = False, baseline_spans=None, repeats: int = 0
) -> dict:
    """Scores at one rate; with probabilities, also the spans' moves from baseline_spans (None: it is the baseline)."""
    rng = random.Random(1)
    spaced = [with_newlines(nlp, ref, rate, rng, outside_entities) for ref in refs]
    predicted = list(nlp.pipe([doc.copy() for doc, _ in spaced], batch_size=256))
    examples = [
        Example(on_words(nlp, doc, ref, positions), ref) for doc, ref, (_, positions) in zip(predicted, refs, spaced)
    ]
    out = {"rate": rate, "whitespace_tokens": sum(len(doc) - len(ref) for (doc, _), ref in zip(spaced, refs))}
    if repeats:
        out["words_per_s"] = words_per_second(nlp, [doc for doc, _ in spaced], sum(len(ref) for ref in refs), repeats)
    if probabilities:
        out["spans"] = [scored_spans(doc, positions) for doc, (_, positions) in zip(predicted, spaced)]
        out.update(probability_shifts(out["spans"], baseline_spans or out["spans"]))
    if any(ref.has_annotation("ENT_IOB") for ref in refs):
        out["ents_f"] = Scorer.score_spans(examples, "ents")["ents_f"]
    if any(ref.has_annotation("TAG") for ref in refs) and examples and examples[0].predicted.has_annotation("TAG"):
        out["tag_acc"] = Scorer.score_token_attr(examples, "tag")["tag_acc"]
    if any(ref.has_annotation("DEP") for ref in refs) and examples and examples[0].predicted.has_annotation("DEP"):
        words = right_heads = right_arcs = 0
        for eg in examples:
            for token, gold in zip(eg.predicted, eg.reference):
                words += 1
                right_heads += token.head.i == gold.head.i
                right_arcs += token.head.i == gold.head.i and token.dep_ == gold.dep_
        out["uas_all"], out["las_all"] = right_heads / words, right_arcs / words
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", type=Path, nargs="?", default=None)
    parser.add_argument("dev", type=Path, nargs="?", default=None)
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--rates", type=float, nargs="+", default=[0.0, 0.05, 0.2])
    parser.add_argument("--outside-entities", action="store_true")
    parser.add_argument("--sentences-as-docs", action="store_true")
    parser.add_argument("--probabilities", action="store_true")
    parser.add_argument("--repeats", type=int, default=0)
    parser.add_argument("--describe", default=None, help="What the model is, for the results (default: its path)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if args.model is None:
            args.model, args.dev = conll_model(args.data, Path(tmp))
            args.describe = "configs/bioner.cfg trained on CoNLL-2003 train"
        run(args)


def run(args) -> None:
    confidence = {"components": {"bioner": {"confidence": {"probabilities": True, "alternatives": 3}}}}
    nlp = spacy.load(args.model, config=confidence if args.probabilities else {})
    refs = list(DocBin().from_disk(args.dev).get_docs(nlp.vocab))
    if args.sentences_as_docs:
        refs = [sentence.as_doc() for ref in refs for sentence in ref.sents]
    results, baseline_spans = [], None
    for rate in sorted(args.rates):  # the lowest rate (0 by default) is what the others are compared with
        result = scores(nlp, refs, rate, args.outside_entities, args.probabilities, baseline_spans, args.repeats)
        spans = result.pop("spans", None)
        baseline_spans = baseline_spans or spans
        results.append(result)
        speed = f"{result['words_per_s']:,.0f} words/s; " if args.repeats else ""
        print(
            f"rate {rate}: {result['whitespace_tokens']:,} whitespace tokens; {speed}"
            + ", ".join(
                f"{key} {100 * value:.2f}"
                for key, value in result.items()
                if key not in ("rate", "whitespace_tokens", "words_per_s")
            ),
            flush=True,
        )
    print(json.dumps(results))
    figures = {
        "model": args.describe or str(args.model),
        "dev": args.dev.name,
        "outside_entities": args.outside_entities,
        "sentences_as_docs": args.sentences_as_docs,
        "rates": results,
    }
    print(f"written to {write_results('whitespace', figures)}")


if __name__ == "__main__":
    main()
