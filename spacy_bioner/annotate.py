"""Bulk annotation: text or JSONL in, JSONL with entities out, streamed, and resumed
where an interrupted run stopped.

Each input line is one record (records.py). A line that is not a record, or whose
text is over the limits, or on which the pipeline fails, is skipped and reported
with its line number (or stops the run, with `strict`); the others are all written,
in input order. Lines read = records written + lines skipped.

The output is written to OUTPUT.partial and renamed to OUTPUT when complete. After
each batch, OUTPUT.partial.state records how many input lines are done and how many
bytes of the partial file hold them. A run that is interrupted (Ctrl-C, SIGTERM, a
dead worker, a full disk) keeps both, and a rerun with the same source, format,
limits and pipeline cuts the partial file to that length and goes on after that
line: its output is byte for byte what an uninterrupted run writes. A rerun with
any of those changed starts over.

With several processes, each worker annotates whole batches and sends back their
output lines: records and JSON strings cross the process boundary, not Docs
(`nlp.pipe(n_process=...)` sends every Doc back through `Doc.to_bytes`, which costs
more than tagging it). A worker that dies stops the run within a second, resumable.
"""

import hashlib
import itertools
import json
import multiprocessing
import os
import queue
import signal
from collections.abc import Iterable, Iterator, Sequence
from multiprocessing.process import BaseProcess
from multiprocessing.queues import Queue
from pathlib import Path
from typing import Any, BinaryIO, Callable, Optional, Union

from spacy.language import Language
from spacy.tokens import Doc

from .records import FORMATS, BadLine, Limits, Record, Windows, output_line, read_records

Entry = tuple[int, Union[tuple[Record, Windows], BadLine]]  # (line number, what read_records gives)
Output = Union[str, Record]  # a JSONL line, or a record for Parquet
Written = tuple[int, Union[tuple[Output, int], BadLine]]  # (line number, (output, entities) or why it is skipped)
Render = Callable[[Record, list[dict[str, Any]]], Output]  # a record and its entities -> the output
BATCHES_IN_FLIGHT = 2  # per worker: the input is read about as fast as it is annotated


class WorkerDied(RuntimeError):
    """A worker process ended without finishing its batch (killed, out of memory)."""


def entities(doc: Doc, offset: int = 0) -> list[dict[str, Any]]:
    """A doc's entities as character offsets (plus `offset`), label and KB id."""
    return [
        {
            "start": ent.start_char + offset,
            "end": ent.end_char + offset,
            "label": ent.label_,
            "text": ent.text,
            "kb_id": ent.kb_id_,
        }
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
    limits: Limits = Limits(),
    on_skip: Callable[[str], None] = lambda message: None,
    on_doc: Callable[[], None] = lambda: None,
    on_resume: Callable[[int], None] = lambda line: None,
) -> dict[str, int]:
    """Annotate every line of `source` into `output` (JSONL, input order), resuming an interrupted run.

    RETURNS (Dict[str, int]): Counts of lines read, docs written, lines skipped and entities found,
        over the whole source (a resumed run's earlier part included).
    """
    if fmt not in FORMATS:
        raise ValueError(f"Unknown input format {fmt!r}: use one of {FORMATS}.")
    if n_process == -1:
        n_process = os.cpu_count() or 1
    if not isinstance(n_process, int) or n_process < 1:
        raise ValueError(
            f"n_process must be a positive number of processes (or -1 for one per CPU), got {n_process!r}."
        )
    if not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive number of docs, got {batch_size!r}.")
    limits = limits.checked(nlp.max_length)
    partial = output.with_name(output.name + ".partial")
    output.parent.mkdir(parents=True, exist_ok=True)
    progress = Progress(partial, run_fingerprint(nlp, source, fmt, limits))
    after_line, counts = progress.resume()
    if after_line:
        on_resume(after_line)
    batches = _batches(read_records(source, fmt, limits, after_line=after_line), batch_size)
    with open(partial, "r+b" if after_line else "wb") as out:
        out.truncate(progress.bytes_done)
        out.seek(progress.bytes_done)
        try:
            written = (
                _in_processes(nlp, batches, n_process)
                if n_process > 1
                else (annotate_batch(nlp, batch) for batch in batches)
            )
            for batch in written:
                for line_no, result in batch:
                    if isinstance(result, BadLine):
                        if strict:
                            raise result
                        counts["skipped"] += 1
                        on_skip(str(result))
                    else:
                        out.write(str(result[0]).encode("utf8"))
                        counts["docs"] += 1
                        counts["entities"] += result[1]
                        on_doc()
                    counts["lines"] = line_no
                progress.save(out, counts)
        except BadLine:  # strict: nothing is written
            out.close()
            progress.discard()
            raise
    os.replace(partial, output)
    progress.discard()
    return counts


class Progress:
    """OUTPUT.partial.state: the input lines done, the partial file's bytes that hold them, the counts,
    and the run they belong to (`run_fingerprint`)."""

    def __init__(self, partial: Path, fingerprint: str):
        self.partial, self.path, self.fingerprint, self.bytes_done = (
            partial,
            partial.with_name(partial.name + ".state"),
            fingerprint,
            0,
        )

    def resume(self) -> tuple[int, dict[str, int]]:
        """The last input line done and the counts so far: 0 and none unless this run was interrupted."""
        fresh = {"lines": 0, "docs": 0, "skipped": 0, "entities": 0}
        try:
            state = json.loads(self.path.read_text(encoding="utf8"))
            resumable = (
                state["run"] == self.fingerprint
                and self.partial.stat().st_size >= state["bytes"]
                and set(state["counts"]) == set(fresh)
            )
        except (OSError, ValueError, KeyError, TypeError):  # no state, or not one to trust: start over
            return 0, fresh
        if not resumable:
            return 0, fresh
        self.bytes_done = state["bytes"]
        return state["counts"]["lines"], dict(state["counts"])

    def save(self, out: BinaryIO, counts: dict[str, int]) -> None:
        """Record that the lines so far are in the partial file: its bytes reach the disk first."""
        out.flush()
        os.fsync(out.fileno())
        self.bytes_done = out.tell()
        state = json.dumps({"run": self.fingerprint, "bytes": self.bytes_done, "counts": counts})
        written = self.path.with_name(self.path.name + ".new")
        written.write_text(state, encoding="utf8")
        os.replace(written, self.path)

    def discard(self) -> None:
        self.path.unlink(missing_ok=True)
        self.partial.unlink(missing_ok=True)


def run_fingerprint(nlp: Language, source: Path, fmt: str, limits: Limits) -> str:
    """What a run's output depends on: the source file as it is, the format, the limits, the pipeline."""
    stat = Path(source).stat()
    pipeline = {"config": nlp.config.to_str(), "meta": {key: nlp.meta.get(key) for key in ("lang", "name", "version")}}
    run = [str(Path(source).resolve()), stat.st_size, stat.st_mtime_ns, fmt, list(limits), pipeline]
    return hashlib.sha256(json.dumps(run, sort_keys=True).encode("utf8")).hexdigest()


def _batches(entries: Iterable[Entry], size: int) -> Iterator[list[Entry]]:
    """Batches of `size` records each, a bad line traveling in the batch it falls in (to keep the order)."""
    batch, n_records = [], 0
    for entry in entries:
        batch.append(entry)
        n_records += not isinstance(entry[1], BadLine)
        if n_records == size:
            yield batch
            batch, n_records = [], 0
    if batch:
        yield batch


def annotate_batch(
    nlp: Language, batch: list[Entry], render: Render = output_line, batch_size: Optional[int] = None
) -> list[Written]:
    """Each entry's output (`render` of the record and its entities) and entity count, or why it is skipped:
    a record the pipeline fails on is skipped alone (the batch is tried again one record at a time to find it)."""
    records = [(line_no, entry) for line_no, entry in batch if not isinstance(entry, BadLine)]
    try:
        annotated: dict[int, Union[tuple[Output, int], BadLine]] = dict(_annotated(nlp, records, render, batch_size))
    except Exception:  # one record broke the batch: find it
        annotated = {}
        for line_no, entry in records:
            try:
                annotated.update(_annotated(nlp, [(line_no, entry)], render))
            except Exception as err:
                annotated[line_no] = BadLine(f"line {line_no}: the pipeline failed on it ({type(err).__name__}: {err})")
    return [(line_no, entry if isinstance(entry, BadLine) else annotated[line_no]) for line_no, entry in batch]


def _annotated(
    nlp: Language, records: list[tuple[int, tuple[Record, Windows]]], render: Render, batch_size: Optional[int] = None
) -> Iterator[tuple[int, tuple[Output, int]]]:
    """(line number, (output, entities)) of each record, its windows tagged apart and their entities merged."""
    pieces = [(line_no, start) for line_no, (record, windows) in records for start, _ in windows]
    texts = (record["text"][start:end] for _, (record, windows) in records for start, end in windows)
    found: dict[int, list[dict[str, Any]]] = {line_no: [] for line_no, _ in records}
    for (line_no, start), doc in zip(pieces, nlp.pipe(texts, batch_size=batch_size or max(len(pieces), 1))):
        found[line_no].extend(entities(doc, start))
    for line_no, (record, _) in records:
        yield line_no, (render(record, found[line_no]), len(found[line_no]))


def _in_processes(nlp: Language, batches: Iterable[list[Entry]], n_process: int) -> Iterator[list[Written]]:
    """`annotate_batch` of each batch, in input order, from a pool of worker processes."""
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork") if "fork" in methods else multiprocessing.get_context("spawn")
    tasks, results = context.Queue(), context.Queue()
    workers = [context.Process(target=_work, args=(nlp, tasks, results), daemon=True) for _ in range(n_process)]
    for worker in workers:
        worker.start()
    batches, sent = iter(batches), 0
    done: dict[int, list[Written]] = {}
    try:
        for next_out in itertools.count():
            while sent < next_out + BATCHES_IN_FLIGHT * n_process:
                batch = next(batches, None)
                if batch is None:
                    break
                tasks.put((sent, batch))
                sent += 1
            if next_out == sent:
                return
            while next_out not in done:
                done.update([_next_result(results, workers)])
            yield done.pop(next_out)
    finally:
        for worker in workers:  # idle or not, interrupted or not: no worker outlives the run
            worker.kill()
            worker.join()
        tasks.cancel_join_thread()  # batches no worker will take: exit without waiting to send them


def _next_result(results: Queue, workers: Sequence[BaseProcess]) -> tuple[int, list[Written]]:
    """The next finished batch; a dead worker is an error within a second."""
    while True:
        try:
            return results.get(timeout=1.0)
        except queue.Empty:
            dead = [worker for worker in workers if not worker.is_alive()]
            if dead:
                raise WorkerDied(
                    f"a worker process ended (exit code {dead[0].exitcode}: killed, or out of memory?) before "
                    "finishing its batch"
                ) from None


def _work(nlp: Language, tasks: Queue, results: Queue) -> None:
    """A worker: annotate batches until the run ends, or the main process is gone.
    Ctrl-C is the main process's to handle: it stops the workers."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent = os.getppid()
    while True:
        try:
            number, batch = tasks.get(timeout=1.0)
        except queue.Empty:
            if os.getppid() != parent:
                return
            continue
        results.put((number, annotate_batch(nlp, batch)))
