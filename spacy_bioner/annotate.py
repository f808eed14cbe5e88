"""Bulk annotation: text or JSONL in, JSONL with entities out, streamed.

Each input line is one doc. Plain text lines are the text; JSONL lines are
objects with a "text" field, and every other field is passed through. A line
that cannot be read (bad JSON, no text) is skipped and reported with its line
number, or stops the run where that is asked for; nothing is dropped
silently. The output file appears under its name only when complete.

With several processes, each worker annotates whole batches of records and
sends back their output lines: records and JSON strings cross the process
boundary, not Docs. (`nlp.pipe(n_process=...)` sends every Doc back through
`Doc.to_bytes`, which costs more than tagging it: see README, Speed.)
"""
import itertools
import json
import multiprocessing
import os
from collections import deque
from pathlib import Path
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Tuple

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
    if n_process == -1:
        n_process = os.cpu_count() or 1
    if not isinstance(n_process, int) or n_process < 1:
        raise ValueError(f"n_process must be a positive number of processes (or -1 for one per CPU), got {n_process!r}.")
    if not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive number of docs, got {batch_size!r}.")
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
            batches = _batches(records(), batch_size)
            lines = _in_processes(nlp, batches, n_process) if n_process > 1 else _annotated_lines(nlp, batches)
            for line, n_entities in lines:
                out.write(line)
                counts["docs"] += 1
                counts["entities"] += n_entities
                on_doc()
        os.replace(partial, output)
    finally:
        if partial.exists():
            partial.unlink()
    return counts


def _batches(records: Iterable[Tuple[str, Dict[str, object]]], size: int) -> Iterator[List[Tuple[str, Dict[str, object]]]]:
    records = iter(records)
    while True:
        batch = list(itertools.islice(records, size))
        if not batch:
            return
        yield batch


def _annotated_lines(nlp: Language, batches: Iterable[List[Tuple[str, Dict[str, object]]]]) -> Iterator[Tuple[str, int]]:
    """The output line of each record, and its number of entities."""
    for batch in batches:
        for doc, record in nlp.pipe(batch, as_tuples=True, batch_size=len(batch)):
            found = entities(doc)
            yield srsly.json_dumps({**record, "entities": found}) + "\n", len(found)


_worker_nlp: Optional[Language] = None


def _start_worker(nlp: Language) -> None:
    global _worker_nlp
    _worker_nlp = nlp


def _annotate_batch(batch: List[Tuple[str, Dict[str, object]]]) -> List[Tuple[str, int]]:
    return list(_annotated_lines(_worker_nlp, [batch]))


def _in_processes(nlp: Language, batches: Iterable[list], n_process: int) -> Iterator[Tuple[str, int]]:
    """`_annotated_lines` from a pool of processes, in input order, with a few batches in flight."""
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    with context.Pool(n_process, initializer=_start_worker, initargs=(nlp,)) as pool:
        in_flight = deque()
        for batch in batches:
            in_flight.append(pool.apply_async(_annotate_batch, (batch,)))
            if len(in_flight) > 2 * n_process:  # bounded: the input is read as fast as it is annotated
                yield from in_flight.popleft().get()
        while in_flight:
            yield from in_flight.popleft().get()
