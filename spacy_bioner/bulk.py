"""Bulk annotation of sharded input, in one process or on a Dask cluster.

Each input shard (JSONL, or Parquet with a "text" column) becomes one output
shard of the same name: its records in input order, each with its
"entities". A shard is written under a temporary name and renamed only when
complete, so a rerun skips finished shards, and a task rerun after a worker
died leaves neither half a shard nor duplicates. Unreadable records, texts over
the limits (records.Limits) and records the pipeline fails on are reported with
their shard and line (or row) number and left out.

On a cluster (`distributed`, installed with `pip install spacy-bioner[dask]`;
only this module imports it) the pipeline travels to each worker once, as
bytes: its config and `nlp.to_bytes()`, from which every component loads
without unpickling anything. Each shard is one task. A cluster that fails (its
workers gone, its tasks cancelled) ends the run with one ClusterFailed error: the
shards finished are kept, and a rerun does the rest.
"""

import hashlib
import os
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional, Union, cast

import spacy
import srsly
from spacy.language import Language
from thinc.api import Config

from .annotate import Output, annotate_batch

if TYPE_CHECKING:  # dask is an optional extra, imported only for a cluster run
    from distributed import Client
from .records import BadLine, Limits, output_line, read_records, windowed

SHARD_SUFFIXES = (".jsonl", ".parquet")
_PIPELINES: dict[str, Language] = {}  # per worker process: pipelines loaded so far, by digest


class ClusterFailed(RuntimeError):
    """The cluster ended the run before every shard was annotated."""


def pipeline_bytes(nlp: Language) -> bytes:
    """The pipeline as bytes: its config and weights, for workers to load."""
    return srsly.msgpack_dumps({"config": nlp.config.to_str(), "weights": nlp.to_bytes()})


def load_pipeline(data: bytes) -> Language:
    """The pipeline of `pipeline_bytes` data, loaded once per process."""
    digest = hashlib.sha1(data).hexdigest()
    if digest not in _PIPELINES:
        message = srsly.msgpack_loads(data)
        config = Config().from_str(message["config"])
        nlp = spacy.util.load_model_from_config(config, auto_fill=False, validate=False)
        _PIPELINES[digest] = nlp.from_bytes(message["weights"])
    return _PIPELINES[digest]


def find_shards(source: Path) -> list[Path]:
    """The shards of a directory (sorted by name), or the one file given."""
    if source.is_dir():
        shards = sorted(path for path in source.iterdir() if path.suffix in SHARD_SUFFIXES)
    else:
        shards = [source] if source.suffix in SHARD_SUFFIXES else []
    if not shards:
        raise ValueError(f"No shards in {source}: expected files ending in {' or '.join(SHARD_SUFFIXES)}.")
    return shards


def _parquet() -> tuple[Any, Any]:
    try:
        import pyarrow.parquet
    except ImportError:
        raise ImportError("Parquet shards need pyarrow: pip install spacy-bioner[dask]") from None
    return pyarrow, pyarrow.parquet


def read_shard(path: Path, limits: Limits) -> Iterator[tuple[int, Union[tuple[dict, list], BadLine]]]:
    """(line or row number, (record, its text's windows) or BadLine) of each record of a shard."""
    if path.suffix == ".parquet":
        _, parquet = _parquet()
        for row, record in enumerate(parquet.read_table(path).to_pylist(), 1):
            if not isinstance(record.get("text"), str):
                yield row, BadLine(f'row {row}: expected a string "text" column')
                continue
            yield row, windowed(record, row, limits)
    else:
        yield from read_records(path, "jsonl", limits)


def write_shard(path: Path, records: Sequence[Output]) -> None:
    """Write a whole shard (records for Parquet, output lines for JSONL) under a temporary name, then rename it into
    place."""
    partial = path.with_name(f"{path.name}.partial-{uuid.uuid4().hex}")
    try:
        if path.suffix == ".parquet":
            pyarrow, parquet = _parquet()
            parquet.write_table(pyarrow.Table.from_pylist(records), partial)
        else:
            with open(partial, "w", encoding="utf8") as out:
                out.writelines(cast(Sequence[str], records))  # a JSONL shard is given its output lines
        os.replace(partial, path)
    finally:
        if partial.exists():
            partial.unlink()


def annotate_shard(
    pipeline: bytes, source: str, target: str, batch_size: int = 1000, limits: Limits = Limits()
) -> dict[str, Any]:
    """Annotate one shard into `target`, unless a finished `target` is already there.

    RETURNS (Dict[str, object]): The shard's name, status ("done", "skipped"
        or "failed"), records written, entities found, and errors ("shard, line N: why").
    """
    source_path, target_path = Path(source), Path(target)
    errors: list[str] = []
    summary: dict[str, Any] = {
        "shard": source_path.name,
        "status": "skipped",
        "records": 0,
        "entities": 0,
        "errors": errors,
    }
    if target_path.exists():
        return summary
    nlp = load_pipeline(pipeline)
    try:
        entries = list(read_shard(source_path, limits.checked(nlp.max_length)))
    except (OSError, ValueError) as err:  # unreadable shard: nothing written, a rerun tries again
        summary.update(status="failed", errors=[f"{source_path.name}: {err}"])
        return summary
    render = _with_entities if source_path.suffix == ".parquet" else output_line
    annotated = []
    for _, result in annotate_batch(nlp, entries, render, batch_size):
        if isinstance(result, BadLine):
            errors.append(f"{source_path.name}, {result}")
        else:
            annotated.append(result[0])
            summary["entities"] += result[1]
    write_shard(target_path, annotated)
    summary.update(status="done", records=len(annotated))
    return summary


def _with_entities(record: dict, entities: list[dict]) -> dict:
    return {**record, "entities": entities}


def annotate_shards(
    model: Union[str, Path, Language],
    source: Path,
    output: Path,
    *,
    scheduler: Optional[str] = None,
    client: Optional["Client"] = None,
    batch_size: int = 1000,
    retries: int = 3,
    limits: Limits = Limits(),
) -> list[dict[str, Any]]:
    """Annotate every shard of `source` into the directory `output`; those finished before (by an
    earlier run) are left as they are, with the status "skipped".

    model: A pipeline, or its package name or directory.
    scheduler (Optional[str]): A Dask scheduler's address ("tcp://host:8786");
        None, and no client, runs the shards one after another in this process.
    client: A `distributed.Client` to use instead of connecting to `scheduler`.
    retries (int): Times a shard's task is retried when it fails on a worker.
    limits (Limits): What a record's text may be (records.py).
    RETURNS (List[Dict[str, object]]): Each shard's summary (see annotate_shard), in shard order.
    """
    shards = find_shards(Path(source))
    nlp = model if isinstance(model, Language) else spacy.load(model)
    limits.checked(nlp.max_length)  # bad limits are refused here, before any shard is sent out
    data = pipeline_bytes(nlp)
    output = Path(output)
    output.mkdir(parents=True, exist_ok=True)
    finished = {shard.name for shard in shards if (output / shard.name).exists()}
    jobs = [(str(shard), str(output / shard.name)) for shard in shards if shard.name not in finished]
    try:
        if scheduler is None and client is None:
            done = [annotate_shard(data, shard, target, batch_size, limits) for shard, target in jobs]
        else:
            done = _on_cluster(data, jobs, scheduler, client, batch_size, retries, limits)
    finally:
        for leftover in output.glob("*.partial-*"):  # from attempts killed mid-write
            leftover.unlink()
    # A task retried after its first attempt wrote the shard finds it there: this run did it all the same.
    by_name = {
        summary["shard"]: {**summary, "status": "done"} if summary["status"] == "skipped" else summary
        for summary in done
    }
    skipped = {"status": "skipped", "records": 0, "entities": 0, "errors": []}
    return [by_name.get(shard.name) or {"shard": shard.name, **skipped} for shard in shards]


def _on_cluster(
    data: bytes,
    jobs: list[tuple[str, str]],
    scheduler: Optional[str],
    client: Optional["Client"],
    batch_size: int,
    retries: int,
    limits: Limits,
) -> list[dict[str, Any]]:
    try:
        from distributed import Client
    except ImportError:
        raise ImportError("Annotating on a Dask cluster needs distributed: pip install spacy-bioner[dask]") from None
    own_client = client is None
    client = client or Client(scheduler)
    try:
        shipped = client.scatter(data, broadcast=True)
        digest = hashlib.sha1(data).hexdigest()[:12]
        futures = [
            client.submit(
                annotate_shard,
                shipped,
                shard,
                target,
                batch_size,
                limits,
                key=f"bioner-{digest}-{Path(shard).name}",
                retries=retries,
                pure=False,
            )
            for shard, target in jobs
        ]
        try:
            return client.gather(futures)
        except Exception as err:  # workers gone, tasks cancelled or lost: distributed's errors have no common base
            finished = sum(Path(target).exists() for _, target in jobs)
            raise ClusterFailed(
                f"the cluster failed before every shard was annotated ({type(err).__name__}: {err}); "
                f"{finished} of {len(jobs)} shards are finished and kept: rerun the same command to do the rest"
            ) from None
    finally:
        if own_client:
            client.close()
