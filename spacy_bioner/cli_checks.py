"""What the `bioner` commands are given, checked before any long work: each problem is one
line on stderr naming the argument or file, and exit code 1 (never a traceback)."""

import os
from pathlib import Path
from typing import NoReturn, Optional

import spacy
import typer
from confection import ConfigValidationError
from spacy.language import Language
from spacy.training import Corpus, Example

from .core.serialize import ModelFileError
from .upgrade import saved_by_0_1


def fail(message: str, code: int = 1) -> NoReturn:
    """One line on stderr (wasabi would wrap it), then exit with `code`."""
    typer.echo(f"✘ {message}", err=True)
    raise typer.Exit(code)


def writable(path: Optional[Path], option: str) -> Optional[Path]:
    """`path`, once its folder exists and can be written to (checked before the work, not after),
    or one line naming the problem."""
    if path is None:
        return None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        fail(f"{option} {path}: cannot make its folder ({err.strerror})")
    if not os.access(path.parent, os.W_OK) or path.is_dir() and not os.access(path, os.W_OK):
        fail(f"{option} {path}: cannot write there")
    return path


def numbers(option: str, text: Optional[str], low: float, high: float) -> list[float]:
    """The comma-separated numbers of an option, each in [low, high], or one line naming the bad one."""
    values = []
    for value in text.split(",") if text else []:
        try:
            number = float(value)
        except ValueError:
            number = float("nan")
        if not low <= number <= high:  # NaN included
            fail(f"{option}: {value.strip()!r} is not a number from {low:g} to {high:g}")
        values.append(number)
    return values


def gold_docs(path: Path, nlp: Language, gold_preproc: bool = False) -> list[Example]:
    """The Examples of a .spacy file (or a folder of them), or one line naming the file and the problem."""
    if path.is_file() and path.suffix != ".spacy":
        fail(f"{path}: not a .spacy file (spaCy's DocBin); convert it first, e.g. with `python -m spacy convert`")
    try:
        examples = list(Corpus(str(path), gold_preproc=gold_preproc)(nlp))
    except Exception as err:  # a damaged DocBin fails in zlib, msgpack or spaCy, with no common error type
        fail(f"{path}: not a readable .spacy file ({type(err).__name__}: {err})")
    if not examples:
        fail(f"{path}: no docs in it")
    return examples


def load_pipeline(model: str) -> Language:
    """spacy.load(model), or one line naming the problem and exit 1."""
    try:
        return spacy.load(model)
    except OSError:
        fail(f"Cannot load {model!r}: it is neither an installed pipeline package nor a pipeline directory.")
    except ConfigValidationError:
        if saved_by_0_1(Path(model)):
            fail(
                f"{model} was saved by spacy-bioner 0.1, whose settings this version keeps in config blocks: run "
                f"`bioner upgrade {model}` once."
            )
        raise
    except ModelFileError as err:
        fail(str(err).replace("bioner upgrade PIPELINE", f"bioner upgrade {model}"))
