"""`bioner distant`: train bioner from term lists and raw text, without annotation.

    bioner distant label TEXTS TERMS... --output corpus/distant.spacy --terms-output corpus/distant_terms.tsv
    python -m spacy train configs/bioner_gazetteer.cfg --paths.train corpus/distant.spacy \
        --paths.gazetteer corpus/distant_terms.tsv ...
    bioner distant relabel training/model-last corpus/distant.spacy --output corpus/round1.spacy
    python -m spacy train ... --paths.train corpus/round1.spacy          (and so on, a round at a time)

The project's `distant` workflow runs these steps (docs/distant.md).
"""

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Optional

import spacy
import typer
from spacy.tokens import Doc, DocBin
from wasabi import msg

from .labeller import DistantLabeller, DistantSettings
from .self_training import relabel

TERMS_HELP = (
    "Term lists (.tsv term<TAB>label[<TAB>id], .jsonl, or directories); where two give one span two labels, "
    "the one given first wins"
)
distant_app = typer.Typer(
    help="Train from term lists and raw text, without annotation.", no_args_is_help=True, rich_markup_mode=None
)


def read_texts(nlp, source: Path) -> Iterator[Doc]:
    """Docs of raw text: a .spacy file (its annotation dropped, its tokens kept), a .txt file (a doc a
    non-empty line), or a directory of .txt files (a doc a file)."""
    if source.is_dir():
        files = sorted(source.rglob("*.txt"))
        if not files:
            raise ValueError(f"No .txt files in directory {source}.")
        for file in files:
            yield nlp.make_doc(file.read_text(encoding="utf8"))
    elif source.suffix == ".spacy":
        for doc in DocBin().from_disk(source).get_docs(nlp.vocab):
            words, spaces = [t.text for t in doc], [bool(t.whitespace_) for t in doc]
            yield Doc(nlp.vocab, words=words, spaces=spaces, sent_starts=[t.is_sent_start for t in doc])
    elif source.suffix == ".txt":
        with source.open(encoding="utf8") as lines:
            for line in lines:
                if line.strip():
                    yield nlp.make_doc(line.rstrip("\n"))
    else:
        raise ValueError(f"{source}: give a .txt file, a directory of .txt files or a .spacy file.")


@distant_app.command("label")
def label_cli(
    texts: Path = typer.Argument(..., help="Raw text: a .txt file (a doc a line), a directory of .txt, or .spacy"),
    terms: list[Path] = typer.Argument(..., help=TERMS_HELP),
    output: Path = typer.Option(..., "--output", "-o", help="The labelled docs (.spacy)"),
    lang: str = typer.Option("en", help="Language of the tokenizer"),
    clash: str = typer.Option("priority", help="A span two lists label differently: 'priority' or 'missing'"),
    ambiguous: bool = typer.Option(True, help="Common words matched alone are missing, not entities"),
    unknown_names: bool = typer.Option(False, help="Name-like tokens no list matched are missing, not O"),
    extend_names: bool = typer.Option(True, help="A name list's entity runs on over unmatched capitalized words"),
    repeat_surnames: bool = typer.Option(True, help="A full name's last word alone elsewhere in the doc is the person"),
    short_forms: bool = typer.Option(True, help="A short form the doc defines takes its long form's label throughout"),
    terms_output: Optional[Path] = typer.Option(
        None, help="Also write the list entries the labels trust (.tsv), for the model's term-list features"
    ),
) -> None:
    """Label raw text from term lists: matches become entities, ambiguous ones missing, the rest O."""
    if clash not in ("priority", "missing"):
        msg.fail(f"--clash must be 'priority' or 'missing', got {clash!r}.", exits=1)
    nlp = spacy.blank(lang)
    settings = DistantSettings(
        clash=clash,
        ambiguous_words=ambiguous,
        unknown_names=unknown_names,
        extend_names=extend_names,
        repeat_surnames=repeat_surnames,
        short_forms=short_forms,
    )
    try:
        labeller = DistantLabeller(nlp, terms, settings)
        docs = list(labeller.pipe(read_texts(nlp, texts)))
    except (ValueError, FileNotFoundError) as error:
        msg.fail(str(error), exits=1)
    output.parent.mkdir(parents=True, exist_ok=True)
    DocBin(docs=docs).to_disk(output)
    msg.good(f"{len(docs)} docs labelled to {output}: {dict(labeller.counts)}")
    if terms_output is not None:
        rows = write_terms(labeller.trusted_terms(), terms_output)
        if not rows:
            msg.fail(f"No .tsv or .jsonl term list entries to write to {terms_output}.", exits=1)
        msg.good(f"{rows} trusted list entries written to {terms_output}")


def write_terms(terms: Iterator[tuple[str, str]], path: Path) -> int:
    """Write (term, label) rows as a term list (.tsv); RETURNS how many."""
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = 0
    with path.open("w", encoding="utf8") as out:
        for term, label in terms:
            out.write(f"{' '.join(term.split())}\t{label}\n")
            rows += 1
    return rows


@distant_app.command("relabel")
def relabel_cli(
    model: Path = typer.Argument(..., help="A pipeline trained on the labelled docs"),
    docs_path: Path = typer.Argument(..., help="The labelled docs it was trained on (.spacy)"),
    output: Path = typer.Option(..., "--output", "-o", help="The docs with the model's confident entities (.spacy)"),
    threshold: float = typer.Option(0.9, help="Probability an entity of the model needs to be added"),
) -> None:
    """One round of self-training: add the model's confident entities to the labels; its unsure ones are missing."""
    if not 0.0 < threshold <= 1.0:
        msg.fail(f"--threshold must be in (0, 1], got {threshold}.", exits=1)
    nlp = spacy.load(model)
    counts: Counter = Counter()
    docs = list(DocBin().from_disk(docs_path).get_docs(nlp.vocab))
    relabelled = list(relabel(nlp, docs, threshold, counts))
    output.parent.mkdir(parents=True, exist_ok=True)
    DocBin(docs=relabelled).to_disk(output)
    msg.good(f"{len(relabelled)} docs relabelled to {output}: {dict(counts)}")
