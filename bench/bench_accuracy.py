"""Dev accuracy per corpus, with and without public term lists.

Trains bioner with `spacy train` on a corpus's train split with
configs/bioner.cfg (and, with --lists, again with configs/bioner_gazetteer.cfg
and the corpus's public term lists), and reports dev P/R/F1 overall, per type,
and on entities whose text never occurs as an entity in the training data;
also training time and component tokens/s. Dev is evaluated about once an
epoch (every training-words / 1000 steps: 1000-word batches), so model-best
is chosen among the epochs on every corpus. Figures are printed as JSON too.
With --vectors DIR (`bioner glove DIR`), both runs train
configs/bioner_accuracy.cfg, which adds the `vectors` family, on those vectors.

With several seeds (--seed 0 1 2), each is trained in turn and the mean dev
F1 of each variant follows the per-seed lines.

Usage: python bench/bench_accuracy.py --corpus conll2003|bc5cdr|ncbi_disease|wnut17 [--lists] [--vectors DIR] [--data
       ../shared/data] [--seed N [N ...]] [--set SECTION.KEY=VALUE ...]
"""

import argparse
import json
import sys
import tempfile
from pathlib import Path

import spacy
from common import (
    CORPORA,
    LISTS,
    ROOT,
    converted,
    entity_texts,
    gold_token_examples,
    score,
    throughput,
    train,
    write_results,
)
from spacy.tokens import DocBin


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", choices=sorted(CORPORA), default="conll2003")
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--lists", action="store_true", help="Also train with the corpus's public term lists.")
    parser.add_argument(
        "--eval-frequency",
        type=int,
        default=None,
        help="Steps between dev evaluations (default: about one per epoch, the training words / 1000, the batch size).",
    )
    parser.add_argument(
        "--vectors",
        type=Path,
        default=None,
        help=(
            "A pipeline directory with static vectors (bioner glove DIR): train configs/bioner_accuracy.cfg with them."
        ),
    )
    parser.add_argument(
        "--seed",
        type=int,
        nargs="+",
        default=[None],
        help="Seed(s) of spaCy's shuffling and of bioner's dropout (default: the config's, 0), "
        "to see how much a run owes to chance; several seeds also print the mean.",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="SECTION.KEY=VALUE",
        help="A config override for both runs, as on the spacy train line (repeatable), "
        'e.g. --set \'components.bioner.features=["word","window"]\'.',
    )
    args = parser.parse_args()
    lists = [args.data / "gazetteers" / name for name in LISTS[args.corpus]]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        train_path, dev_path = converted(args.data, args.corpus, work)
        list_dir = work / "lists"
        list_dir.mkdir()
        for i, path in enumerate(lists):
            (list_dir / f"{i:02d}_{path.name}").symlink_to(path)
        eval_frequency = args.eval_frequency or max(
            1, round(sum(len(doc) for doc in DocBin().from_disk(train_path).get_docs(spacy.blank("en").vocab)) / 1000)
        )
        extra = ["--training.eval_frequency", str(eval_frequency)]
        for override in args.set:
            key, sep, value = override.partition("=")
            if not sep or not key:
                sys.exit(f"--set takes SECTION.KEY=VALUE, got {override!r}")
            extra += [f"--{key}", value]
        seen = entity_texts(spacy.blank("en"), train_path)
        runs = [("without", "bioner.cfg", [])]
        if args.lists:
            runs.append(("with", "bioner_gazetteer.cfg", ["--paths.gazetteer", str(list_dir)]))
        if args.vectors:
            runs = [
                (variant, "bioner_accuracy.cfg", [*options, "--paths.vectors", str(args.vectors)])
                for variant, _, options in runs
            ]
        results = []
        for seed in args.seed:
            # the configs seed bioner from the system seed too
            seeded = extra if seed is None else [*extra, "--system.seed", str(seed)]
            figures = {"corpus": args.corpus, "eval_frequency": eval_frequency, "seed": seed, "overrides": args.set}
            if args.lists:
                figures["lists"] = LISTS[args.corpus]
            if args.vectors:
                figures["vectors"] = str(args.vectors)
            for variant, config, options in runs:
                out = work / f"{variant}_seed{seed}"
                seconds = train(train_path, dev_path, out, [*seeded, *options], config=config)
                nlp = spacy.load(out / "model-best")
                speed = throughput(nlp, gold_token_examples(nlp, dev_path), repeats=3)
                figures[variant] = {
                    "train_seconds": round(seconds, 1),
                    **score(nlp, dev_path, seen),
                    "component_tokens_per_s": round(speed["component_tokens_per_s"]),
                }
            report(figures)
            results.append(figures)
    record = {"corpus": args.corpus, "runs": results}
    if len(results) > 1:
        variants = [variant for variant in ("without", "with") if variant in results[0]]
        means = {
            variant: round(sum(r[variant]["overall"]["f"] for r in results) / len(results), 2) for variant in variants
        }
        print(
            f"{args.corpus} dev F1, mean of seeds {', '.join(str(seed) for seed in args.seed)}: "
            + "; ".join(f"{variant} lists {means[variant]}" for variant in variants)
        )
        print(json.dumps({"corpus": args.corpus, "seeds": args.seed, "mean_f": means}))
        record["mean_f"] = means
    print(f"written to {write_results(f'accuracy_{args.corpus}', record)}")


def report(figures: dict) -> None:
    for variant in [v for v in ("without", "with") if v in figures]:
        f = figures[variant]
        types = ", ".join(f"{label} {s['f']}" for label, s in sorted(f["per_type"].items()))
        seed = "of the config" if figures["seed"] is None else figures["seed"]
        print(
            f"{figures['corpus']} dev, seed {seed}, {variant} lists: P {f['overall']['p']} R {f['overall']['r']} F1 "
            f"{f['overall']['f']}; "
            f"unseen F1 {f['unseen']['f']} ({f['unseen']['gold_entities']} entities); {types}; "
            f"train {f['train_seconds']} s; {f['component_tokens_per_s']:,} tokens/s"
        )
    print(json.dumps(figures), flush=True)


if __name__ == "__main__":
    main()
