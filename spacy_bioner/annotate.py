"""Bulk annotation: text or JSONL in, JSONL with entities out, streamed.

Each input line is one doc. Plain text lines are the text; JSONL lines are
objects with a "text" field, and every other field is passed through. A line
that cannot be read (bad JSON, no text) is skipped and reported with its line
number, or stops the run where that is asked for; nothing is dropped
silently. The output file appears under its name only when complete.
"""
import json
import os
from pathlib import Path
from typing import Callable, Dict, Iterator, List, Tuple

import srsly
from spacy.language import Language
from spacy.tokens import Doc

FORMATS = ("text", "jsonl")


class BadLine(ValueError):
    """An input line that is not a record."""


def read_records(path: Path, fmt: str) -> Iterator[Tuple[int, Dict[str, object]]]:
    """(line number, record) for each line; BadLine values for lines that are not records."""
    with open(path, encoding="utf8", errors="strict") as lines:
        line_no = 0
        try:
            for line_no, line in enumerate(lines, 1):
                line = line.rstrip("\r\n")
                if fmt == "text":
                    yield line_no, {"text": line}
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as err:
                    yield line_no, BadLine(f"line {line_no}: not valid JSON ({err.msg})")
                    continue
                if not isinstance(record, dict) or not isinstance(record.get("text"), str):
                    yield line_no, BadLine(f"line {line_no}: expected an object with a string \"text\" field")
                    continue
                yield line_no, record
        except UnicodeDecodeError as err:
            raise BadLine(f"{path}, line {line_no + 1}: not UTF-8 ({err.reason}); stopped there") from None


def entities(doc: Doc) -> List[Dict[str, object]]:
    """A doc's entities as character offsets, label and KB id."""
    return [
        {"start": ent.start_char, "end": ent.end_char, "label": ent.label_, "text": ent.text, "kb_id": ent.kb_id_}
        for ent in doc.ents
    ]


def annotate(
    nlp: Language,
    source: Path,
    output: Path,
    fmt: str,
    *,
    n_process: int = 1,
    batch_size: int = 1000,
    strict: bool = False,
    on_skip: Callable[[str], None] = lambda message: None,
    on_doc: Callable[[], None] = lambda: None,
) -> Dict[str, int]:
    """Annotate every line of `source` into `output` (JSONL, input order).

    RETURNS (Dict[str, int]): Counts of docs written, lines skipped, entities found.
    """
    if fmt not in FORMATS:
        raise ValueError(f"Unknown input format {fmt!r}: use one of {FORMATS}.")
    counts = {"docs": 0, "skipped": 0, "entities": 0}

    def records() -> Iterator[Tuple[str, Dict[str, object]]]:
        for line_no, record in read_records(source, fmt):
            if isinstance(record, BadLine):
                if strict:
                    raise record
                counts["skipped"] += 1
                on_skip(str(record))
                continue
            yield record["text"], record

    partial = output.with_name(output.name + ".partial")
    output.parent.mkdir(parents=True, exist_ok=True)
    try:
        with open(partial, "w", encoding="utf8") as out:
            for doc, record in nlp.pipe(records(), as_tuples=True, n_process=n_process, batch_size=batch_size):
                found = entities(doc)
                out.write(srsly.json_dumps({**record, "entities": found}) + "\n")
                counts["docs"] += 1
                counts["entities"] += len(found)
                on_doc()
        os.replace(partial, output)
    finally:
        if partial.exists():
            partial.unlink()
    return counts
