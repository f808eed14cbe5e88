"""The `bioner` command line (also `python -m spacy_bioner`)."""
import time
from pathlib import Path
from typing import Optional

import spacy
import typer
from wasabi import msg

from .gazetteer import COMPILED_SUFFIX, Gazetteer

app = typer.Typer(name="bioner", help="spacy-bioner: fast classical NER for spaCy.", no_args_is_help=True)
gazetteer_app = typer.Typer(help="Term lists for the gazetteer.", no_args_is_help=True)
app.add_typer(gazetteer_app, name="gazetteer")


@gazetteer_app.command("compile")
def compile_gazetteer(
    source: Path = typer.Argument(..., help="A term file (.tsv, .jsonl, .txt) or a directory of them.", exists=True),
    output: Path = typer.Argument(..., help=f"Where to write the compiled gazetteer ({COMPILED_SUFFIX})."),
    label: Optional[str] = typer.Option(None, "--label", "-l", help="Label of plain-text (.txt) term lists."),
    lang: str = typer.Option("en", "--lang", help="Tokenize terms with this language's blank tokenizer."),
    model: Optional[str] = typer.Option(None, "--model", "-m", help="Tokenize terms with this pipeline's tokenizer instead."),
    case_sensitive: bool = typer.Option(False, "--case-sensitive", help="Match case exactly."),
) -> None:
    """Compile term lists once into a file that loads in seconds.

    Use the file wherever a term list goes: `[initialize.components.bioner]
    gazetteer`, `--paths.gazetteer`, `Gazetteer.load`. Terms are tokenized at
    compile time, so compile with the tokenizer of the pipeline that will use it.
    """
    if output.suffix != COMPILED_SUFFIX:
        msg.fail(f"Output file must end in {COMPILED_SUFFIX}: {output}", exits=1)
    nlp = spacy.load(model) if model else spacy.blank(lang)
    gazetteer = Gazetteer(nlp.tokenizer, case_sensitive=case_sensitive)
    start = time.perf_counter()
    try:
        added = gazetteer.load(source, label=label)
    except (ValueError, TypeError) as err:
        msg.fail(str(err), exits=1)
    data = gazetteer.to_bytes()
    output.parent.mkdir(parents=True, exist_ok=True)
    temporary = output.with_name(output.name + ".partial")
    temporary.write_bytes(data)
    temporary.replace(output)  # never a half-written gazetteer under the real name
    msg.good(
        f"{added:,} terms ({len(gazetteer):,} distinct, {gazetteer.skipped:,} skipped), "
        f"labels {', '.join(gazetteer.labels)}: {output} ({len(data) / 2**20:.1f} MB, {time.perf_counter() - start:.1f} s)"
    )


def main() -> None:
    app()
