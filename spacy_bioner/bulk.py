"""Bulk annotation of sharded input, in one process or on a Dask cluster.

Each input shard (JSONL, or Parquet with a "text" column) becomes one output
shard of the same name: its records in input order, each with its
"entities". A shard is written under a temporary name and renamed only when
complete, so a rerun skips finished shards, and a task rerun after a worker
died leaves neither half a shard nor duplicates. Unreadable records are
reported with their shard and line (or row) number and left out.

On a cluster (`distributed`, installed with `pip install spacy-bioner[dask]`;
only this module imports it) the pipeline travels to each worker once, as
bytes: its config and `nlp.to_bytes()`, from which every component loads
without unpickling anything. Each shard is one task.
"""
import hashlib
import os
import uuid
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Tuple, Union

import spacy
import srsly
from spacy.language import Language
from thinc.api import Config

from .annotate import BadLine, entities, read_records

SHARD_SUFFIXES = (".jsonl", ".parquet")
_PIPELINES: Dict[str, Language] = {}  # per worker process: pipelines loaded so far, by digest


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


def find_shards(source: Path) -> List[Path]:
    """The shards of a directory (sorted by name), or the one file given."""
    if source.is_dir():
        shards = sorted(path for path in source.iterdir() if path.suffix in SHARD_SUFFIXES)
    else:
        shards = [source] if source.suffix in SHARD_SUFFIXES else []
    if not shards:
        raise ValueError(f"No shards in {source}: expected files ending in {' or '.join(SHARD_SUFFIXES)}.")
    return shards


def _parquet():
    try:
        import pyarrow.parquet
    except ImportError:
        raise ImportError("Parquet shards need pyarrow: pip install spacy-bioner[dask]") from None
    return pyarrow, pyarrow.parquet


def read_shard(path: Path) -> Iterator[Tuple[int, Union[dict, BadLine]]]:
    """(line or row number, record or BadLine) of each record of a shard."""
    if path.suffix == ".parquet":
        _, parquet = _parquet()
        for row, record in enumerate(parquet.read_table(path).to_pylist(), 1):
            if not isinstance(record.get("text"), str):
                yield row, BadLine(f"row {row}: expected a string \"text\" column")
            else:
                yield row, record
    else:
        yield from read_records(path, "jsonl")


def write_shard(path: Path, records: List[dict]) -> None:
    """Write a whole shard under a temporary name, then rename it into place."""
    partial = path.with_name(f"{path.name}.partial-{uuid.uuid4().hex}")
    try:
        if path.suffix == ".parquet":
            pyarrow, parquet = _parquet()
            parquet.write_table(pyarrow.Table.from_pylist(records), partial)
        else:
            with open(partial, "w", encoding="utf8") as out:
                for record in records:
                    out.write(srsly.json_dumps(record) + "\n")
        os.replace(partial, path)
    finally:
        if partial.exists():
            partial.unlink()


def annotate_shard(pipeline: bytes, source: str, target: str, batch_size: int = 1000) -> Dict[str, object]:
    """Annotate one shard into `target`, unless a finished `target` is already there.

    RETURNS (Dict[str, object]): The shard's name, status ("done", "skipped"
        or "failed"), records written, entities found, and errors ("shard, line N: why").
    """
    source_path, target_path = Path(source), Path(target)
    summary = {"shard": source_path.name, "status": "skipped", "records": 0, "entities": 0, "errors": []}
    if target_path.exists():
        return summary
    records = []
    try:
        for _, record in read_shard(source_path):
            if isinstance(record, BadLine):
                summary["errors"].append(f"{source_path.name}, {record}")
            else:
                records.append(record)
    except (BadLine, OSError, ValueError) as err:  # unreadable shard: nothing written, a rerun tries again
        summary.update(status="failed", errors=summary["errors"] + [f"{source_path.name}: {err}"])
        return summary
    nlp = load_pipeline(pipeline)
    annotated = []
    for doc, record in zip(nlp.pipe((record["text"] for record in records), batch_size=batch_size), records):
        found = entities(doc)
        annotated.append({**record, "entities": found})
        summary["entities"] += len(found)
    write_shard(target_path, annotated)
    summary.update(status="done", records=len(annotated))
    return summary


def annotate_shards(
    model: Union[str, Path, Language],
    source: Path,
    output: Path,
    *,
    scheduler: Optional[str] = None,
    client=None,
    batch_size: int = 1000,
    retries: int = 3,
) -> List[Dict[str, object]]:
    """Annotate every shard of `source` into the directory `output`.

    model: A pipeline, or its package name or directory.
    scheduler (Optional[str]): A Dask scheduler's address ("tcp://host:8786");
        None, and no client, runs the shards one after another in this process.
    client: A `distributed.Client` to use instead of connecting to `scheduler`.
    retries (int): Times a shard's task is retried when it fails on a worker.
    RETURNS (List[Dict[str, object]]): Each shard's summary (see annotate_shard), in shard order.
    """
    shards = find_shards(Path(source))
    nlp = model if isinstance(model, Language) else spacy.load(model)
    data = pipeline_bytes(nlp)
    output = Path(output)
    output.mkdir(parents=True, exist_ok=True)
    jobs = [(str(shard), str(output / shard.name)) for shard in shards]
    if scheduler is None and client is None:
        summaries = [annotate_shard(data, shard, target, batch_size) for shard, target in jobs]
    else:
        summaries = _on_cluster(data, jobs, scheduler, client, batch_size, retries)
    for leftover in output.glob("*.partial-*"):  # from attempts killed mid-write
        leftover.unlink()
    return summaries


def _on_cluster(data: bytes, jobs, scheduler: Optional[str], client, batch_size: int, retries: int):
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
            client.submit(annotate_shard, shipped, shard, target, batch_size, key=f"bioner-{digest}-{Path(shard).name}", retries=retries, pure=False)
            for shard, target in jobs
        ]
        return client.gather(futures)
    finally:
        if own_client:
            client.close()
