"""The seven parsers of Nivre (2008) on UD English EWT: dev LAS, UAS, label accuracy, training time, tokens/s.

Converts the treebank with `spacy convert -c conllu -n 10` (10 sentences per
doc: reading one doc per sentence made training a fifth slower; the config's
gold_preproc still trains and scores sentence by sentence, on gold tokens), trains configs/parser.cfg with `spacy train`
once per parser
(model-best on dev) and scores dev with the tags of the pipeline's own tagger.
Scores count every token, punctuation included (CoNLL 2018 style); spaCy's
scores without punctuation are printed too. Speed, once every parser is
trained, one pipeline at a time: the parser component alone over tagged
docs, and tagger + parser, medians of 3; beside them the peer, spaCy's own
tok2vec + parser and tok2vec + tagger + parser (`init config -p
tagger,parser -o efficiency`, trained for --peer-steps steps on the same
data: its speed does not depend on its accuracy), over the same docs. Also
the share of non-projective sentences and how many of them lift/lower
restores exactly. Figures are printed as JSON too.

With --beam-width K every parser searches a beam of K move sequences (trained
globally) instead of parsing greedily.

Usage: python bench/bench_parser.py [--data ../shared/data] [--parsers covington,arc-eager+pp,...] [--jobs 2]
       [--max-epochs 15] [--beam-width 1] [--peer-steps 300]
"""

import one_thread  # noqa: F401  (first: it sets the thread counts numpy reads on import)

# isort: split
import argparse
import json
import statistics
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import spacy
from common import ROOT, convert_treebank, gold_token_examples, train, train_spacy_pipeline, write_results
from spacy.tokens import DocBin

from spacy_bioner.parser.projectivity import is_projective, lift, lower

# name -> (transition_system, pseudo_projective)
PARSERS = {
    "covington": ("covington", False),
    "covington-projective": ("covington-projective", False),
    "covington-projective+pp": ("covington-projective", True),
    "arc-standard": ("arc-standard", False),
    "arc-standard+pp": ("arc-standard", True),
    "arc-eager": ("arc-eager", False),
    "arc-eager+pp": ("arc-eager", True),
}


def projectivity(path: Path) -> dict:
    """Non-projective sentences and the lift/lower round trip over a converted treebank."""
    nlp = spacy.blank("en")
    total = non_projective = restored = 0
    for doc in DocBin().from_disk(path).get_docs(nlp.vocab):
        for sent in doc.sents:
            heads = [-1] + [0 if t.head.i == t.i else t.head.i - sent.start + 1 for t in sent]
            labels = [""] + [t.dep_ for t in sent]
            total += 1
            if not is_projective(heads):
                non_projective += 1
                restored += lower(*lift(heads, labels)) == (heads, labels)
    return {"sentences": total, "non_projective": non_projective, "restored": restored}


def rate(process, docs, n_tokens: int, repeats: int) -> list:
    """Tokens/s of each of `repeats` passes of process over fresh copies of docs."""
    rates = []
    for _ in range(repeats):
        batch = [doc.copy() for doc in docs]
        start = time.perf_counter()
        for _ in process(batch):
            pass
        rates.append(n_tokens / (time.perf_counter() - start))
    return rates


def speed_figures(component: list, pipeline: list) -> dict:
    return {
        "parser_tokens_per_s": statistics.median(component),
        "parser_spread": [min(component), max(component)],
        "tagger_parser_tokens_per_s": statistics.median(pipeline),
    }


def speed(nlp, examples, repeats: int = 3) -> dict:
    docs = [eg.predicted for eg in examples]
    n_tokens = sum(len(doc) for doc in docs)
    tagger, parser = nlp.get_pipe("bioner_tagger"), nlp.get_pipe("bioner_parser")
    tagged = list(tagger.pipe([doc.copy() for doc in docs], batch_size=1000))
    component = rate(lambda batch: parser.pipe(batch, batch_size=1000), tagged, n_tokens, repeats)
    pipeline = rate(
        lambda batch: parser.pipe(tagger.pipe(batch, batch_size=1000), batch_size=1000), docs, n_tokens, repeats
    )
    return speed_figures(component, pipeline)


def peer_speed(nlp, examples, repeats: int = 3) -> dict:
    """spaCy's parser as it runs in a pipeline: after tok2vec, whose output it reads; then with the tagger too."""
    docs = [eg.predicted for eg in examples]
    n_tokens = sum(len(doc) for doc in docs)
    with nlp.select_pipes(enable=["tok2vec", "parser"]):
        component = rate(lambda batch: nlp.pipe(batch, batch_size=1000), docs, n_tokens, repeats)
    pipeline = rate(lambda batch: nlp.pipe(batch, batch_size=1000), docs, n_tokens, repeats)
    return speed_figures(component, pipeline)


def run(name: str, train_path: Path, dev_path: Path, work: Path, max_epochs: int, beam_width: int) -> dict:
    system, pseudo_projective = PARSERS[name]
    out = work / name
    seconds = train(
        train_path,
        dev_path,
        out,
        [
            "--components.bioner_parser.transition_system",
            system,
            "--components.bioner_parser.pseudo_projective",
            str(pseudo_projective).lower(),
            "--components.bioner_parser.beam_width",
            str(beam_width),
            "--training.max_epochs",
            str(max_epochs),
        ],
        config="parser.cfg",
    )
    nlp = spacy.load(out / "model-best")
    scores = nlp.evaluate(gold_token_examples(nlp, dev_path))
    return {
        "las": scores["dep_las_all"],
        "uas": scores["dep_uas_all"],
        "label_acc": scores["dep_label_acc"],
        "spacy_las": scores["dep_las"],
        "spacy_uas": scores["dep_uas"],
        "tag_acc": scores["tag_acc"],
        "train_seconds": seconds,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--parsers", default=",".join(PARSERS))
    parser.add_argument(
        "--jobs", type=int, default=2, help="parsers trained at once (training times are then measured side by side)"
    )
    parser.add_argument("--max-epochs", type=int, default=15)
    parser.add_argument("--beam-width", type=int, default=1, help="1: greedy parsing")
    parser.add_argument("--peer-steps", type=int, default=300, help="training steps of spaCy's parser, the speed peer")
    args = parser.parse_args()
    names = args.parsers.split(",")
    unknown = [name for name in names if name not in PARSERS]
    if unknown:
        parser.error(f"unknown parsers {unknown}: choose from {list(PARSERS)}")
    treebank = args.data / "ud_english_ewt"
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        train_path = convert_treebank(treebank / "en_ewt-ud-train.conllu", work)
        dev_path = convert_treebank(treebank / "en_ewt-ud-dev.conllu", work)
        figures = {
            "beam_width": args.beam_width,
            "train_projectivity": projectivity(train_path),
            "dev_projectivity": projectivity(dev_path),
        }
        with ThreadPoolExecutor(args.jobs) as pool:
            results = pool.map(
                lambda name: (name, run(name, train_path, dev_path, work, args.max_epochs, args.beam_width)), names
            )
            figures["parsers"] = dict(results)
        # Timed after training, one pipeline at a time, so that no run slows another.
        for name, parser_figures in figures["parsers"].items():
            nlp = spacy.load(work / name / "model-best")
            parser_figures.update(speed(nlp, gold_token_examples(nlp, dev_path)))
        peer = spacy.load(train_spacy_pipeline(train_path, dev_path, work, args.peer_steps, "tagger,parser"))
        figures["spacy_parser"] = peer_speed(peer, gold_token_examples(peer, dev_path))
    for split in ("train", "dev"):
        p = figures[f"{split}_projectivity"]
        print(
            f"{split}: {p['non_projective']} of {p['sentences']} sentences non-projective "
            f"({100 * p['non_projective'] / p['sentences']:.1f}%); lift then lower restores {p['restored']}"
        )
    print(
        f"{'parser':<26}{'LAS':>7}{'UAS':>7}{'label':>7}{'LAS-p':>7}{'UAS-p':>7}{'tags':>7}"
        f"{'train s':>9}{'parser tok/s':>14}{'+tagger tok/s':>15}"
    )
    for name, f in figures["parsers"].items():
        print(
            f"{name:<26}{100 * f['las']:7.2f}{100 * f['uas']:7.2f}{100 * f['label_acc']:7.2f}"
            f"{100 * f['spacy_las']:7.2f}{100 * f['spacy_uas']:7.2f}{100 * f['tag_acc']:7.2f}"
            f"{f['train_seconds']:9.0f}{f['parser_tokens_per_s']:14,.0f}{f['tagger_parser_tokens_per_s']:15,.0f}"
        )
    peer = figures["spacy_parser"]
    print(
        f"{'spaCy tok2vec + parser (efficiency)':<77}"
        f"{peer['parser_tokens_per_s']:14,.0f}{peer['tagger_parser_tokens_per_s']:15,.0f}"
    )
    for name, f in figures["parsers"].items():
        f["parser_vs_spacy"] = f["parser_tokens_per_s"] / peer["parser_tokens_per_s"]
        f["tagger_parser_vs_spacy"] = f["tagger_parser_tokens_per_s"] / peer["tagger_parser_tokens_per_s"]
        print(
            f"{name}: {f['parser_vs_spacy']:.1f}x spaCy's parser, {f['tagger_parser_vs_spacy']:.1f}x with the taggers"
        )
    print("LAS/UAS/label: every token, punctuation included; LAS-p/UAS-p: spaCy's scorer, without punctuation.")
    print(json.dumps(figures))
    print(f"written to {write_results('parser', figures)}")


if __name__ == "__main__":
    main()
