"""Bulk annotation over shards: in one process, and on a local Dask cluster."""

import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest
from conftest import train_nlp

from spacy_bioner.bulk import ClusterFailed, annotate_shards, find_shards, load_pipeline, pipeline_bytes

TEXTS = ["Bob works at Acme Corp in Berlin", "Alice Smith lives in Paris .", "Nothing happened today ."]


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    path = tmp_path_factory.mktemp("model") / "nlp"
    train_nlp().to_disk(path)
    return path


def _write_shards(folder, n_shards, per_shard=30, bad_line=None):
    folder.mkdir()
    for s in range(n_shards):
        lines = [json.dumps({"id": f"{s}-{i}", "text": TEXTS[(s + i) % len(TEXTS)]}) for i in range(per_shard)]
        if bad_line is not None and s == 0:
            lines.insert(bad_line - 1, "{not json")
        (folder / f"part-{s:03d}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf8")
    return folder


def _read_output(folder):
    return {
        path.name: [json.loads(line) for line in path.read_text(encoding="utf8").splitlines()]
        for path in sorted(folder.glob("*.jsonl"))
    }


def test_local_run_keeps_order_reports_bad_lines_and_skips_finished_shards(model, tmp_path):
    shards = _write_shards(tmp_path / "in", 3, bad_line=5)
    summaries = annotate_shards(model, shards, tmp_path / "out")
    assert [s["status"] for s in summaries] == ["done"] * 3
    assert summaries[0]["errors"] == [
        "part-000.jsonl, line 5: not valid JSON (Expecting property name enclosed in double quotes)"
    ]
    out = _read_output(tmp_path / "out")
    assert [r["id"] for r in out["part-000.jsonl"]] == [f"0-{i}" for i in range(30)]
    assert out["part-001.jsonl"][0]["entities"][0]["text"] == "Alice Smith"
    again = annotate_shards(model, shards, tmp_path / "out")
    assert [s["status"] for s in again] == ["skipped"] * 3


def test_an_unreadable_shard_fails_alone_and_is_retried_on_rerun(model, tmp_path):
    shards = _write_shards(tmp_path / "in", 2)
    (shards / "part-001.jsonl").unlink()
    (shards / "part-001.jsonl").mkdir()  # cannot be read as a file
    summaries = annotate_shards(model, shards, tmp_path / "out")
    assert [s["status"] for s in summaries] == ["done", "failed"]
    assert "part-001.jsonl" in summaries[1]["errors"][0] and "Is a directory" in summaries[1]["errors"][0]
    assert not (tmp_path / "out" / "part-001.jsonl").exists()
    (shards / "part-001.jsonl").rmdir()
    (shards / "part-001.jsonl").write_text('{"text": "Bob works at Acme Corp"}\n', encoding="utf8")
    again = annotate_shards(model, shards, tmp_path / "out")
    assert [s["status"] for s in again] == ["skipped", "done"]


def test_a_line_that_is_not_utf8_is_skipped_alone_with_its_true_line_number(model, tmp_path):
    shards = _write_shards(tmp_path / "in", 1, per_shard=0)
    (shards / "part-000.jsonl").write_bytes(b'{"text": "ok"}\n{"text": "a\rb"}\n\xff\xfe broken\n{"text": "Paris"}\n')
    [summary] = annotate_shards(model, shards, tmp_path / "out")
    assert summary["status"] == "done" and summary["records"] == 2
    assert summary["errors"] == [
        "part-000.jsonl, line 2: not valid JSON (Invalid control character at)",  # a raw \r: one line still
        "part-000.jsonl, line 3: not UTF-8 (invalid start byte at byte 1)",
    ]


def test_cli_annotates_a_directory_of_shards(model, tmp_path):
    from typer.testing import CliRunner

    from spacy_bioner.cli import app

    shards = _write_shards(tmp_path / "in", 2, bad_line=2)
    result = CliRunner().invoke(app, ["annotate", str(model), str(shards), str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert "2 shards annotated (60 records" in result.output
    assert "part-000.jsonl, line 2: not valid JSON" in result.output
    assert len(_read_output(tmp_path / "out")["part-001.jsonl"]) == 30


class FutureCancelledError(Exception):
    """As distributed raises when the workers holding a task are all gone."""


class FailingCluster:
    """A Dask client stand-in: each shard's task runs here, and `gather` then fails as a dead cluster does,
    after one task's earlier attempt left a half-written shard behind."""

    def __init__(self, output):
        self.output = output

    def scatter(self, data, broadcast):
        return data

    def submit(self, function, *args, key, retries, pure):
        return function(*args)

    def gather(self, futures):
        (self.output / "part-001.jsonl.partial-0123").write_text("{half", encoding="utf8")
        raise FutureCancelledError("bioner-1234-part-001.jsonl cancelled for reason: lost dependencies")


def test_a_failed_cluster_is_one_line_and_leaves_nothing_half_written(model, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    import spacy_bioner.bulk
    from spacy_bioner.cli import app

    shards, out = _write_shards(tmp_path / "in", 2), tmp_path / "out"
    with pytest.raises(ClusterFailed, match="FutureCancelledError: .*; 2 of 2 shards are finished and kept: rerun"):
        annotate_shards(model, shards, out, client=FailingCluster(out))
    assert not list(out.glob("*.partial-*"))
    real = spacy_bioner.bulk.annotate_shards
    cluster = FailingCluster(tmp_path / "out2")
    monkeypatch.setattr(
        "spacy_bioner.cli.annotate_shards", lambda *args, **kwargs: real(*args, **{**kwargs, "client": cluster})
    )
    result = CliRunner().invoke(
        app, ["annotate", str(model), str(shards), str(cluster.output), "--scheduler", "tcp://x:1"]
    )
    assert (
        result.exit_code == 1
        and len(result.stderr.strip().splitlines()) == 1
        and "rerun the same command" in result.stderr
    )
    assert not list(cluster.output.glob("*.partial-*"))


def test_a_fresh_run_reports_no_shard_as_already_finished(model, tmp_path):
    """A task retried after its first attempt wrote the shard finds the shard there: that is this run's work."""
    shards, out = _write_shards(tmp_path / "in", 2), tmp_path / "out"

    class RetriedCluster(FailingCluster):
        def submit(self, function, *args, key, retries, pure):
            function(*args)
            return function(*args)  # the retry: the shard is there now

        def gather(self, futures):
            return futures

    summaries = annotate_shards(model, shards, out, client=RetriedCluster(out))
    assert [s["status"] for s in summaries] == ["done", "done"]
    assert [s["status"] for s in annotate_shards(model, shards, out)] == ["skipped", "skipped"]


def test_pipeline_travels_as_bytes(model):
    import spacy

    nlp = spacy.load(model)
    loaded = load_pipeline(pipeline_bytes(nlp))
    assert [(e.text, e.label_) for e in loaded(TEXTS[0]).ents] == [(e.text, e.label_) for e in nlp(TEXTS[0]).ents]
    with pytest.raises(ValueError, match="No shards"):
        find_shards(model)


def test_parquet_shards(model, tmp_path):
    pyarrow = pytest.importorskip("pyarrow")
    from pyarrow import parquet

    (tmp_path / "in").mkdir()
    parquet.write_table(
        pyarrow.Table.from_pylist([{"id": i, "text": TEXTS[i % 3]} for i in range(6)] + [{"id": 6, "text": None}]),
        tmp_path / "in" / "a.parquet",
    )
    (summary,) = annotate_shards(model, tmp_path / "in", tmp_path / "out")
    assert summary["records"] == 6 and summary["errors"] == ['a.parquet, row 7: expected a string "text" column']
    rows = parquet.read_table(tmp_path / "out" / "a.parquet").to_pylist()
    assert [row["id"] for row in rows] == list(range(6)) and rows[0]["entities"][0]["label"] == "PER"


def test_the_core_never_imports_dask():
    code = (
        "import sys, spacy, spacy_bioner.bulk, spacy_bioner.cli; spacy.blank('en').add_pipe('bioner'); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None, silence_logs=50
    ) as local_cluster:
        yield local_cluster


def test_cluster_equals_single_process(model, cluster, tmp_path):
    shards = _write_shards(tmp_path / "in", 6, bad_line=3)
    local = annotate_shards(model, shards, tmp_path / "local")
    with distributed.Client(cluster) as client:
        remote = annotate_shards(model, shards, tmp_path / "remote", client=client)
    assert remote == local
    assert _read_output(tmp_path / "remote") == _read_output(tmp_path / "local")


def test_killing_a_worker_mid_run_loses_nothing(model, cluster, tmp_path):
    shards = _write_shards(tmp_path / "in", 24, per_shard=400)
    expected = _read_output(_expected(model, shards, tmp_path / "local"))
    out = tmp_path / "remote"
    finished_at_kill = []

    def kill_a_worker_once_output_appears():
        deadline = time.time() + 60
        while time.time() < deadline and not (out.exists() and any(out.glob("*.jsonl"))):
            time.sleep(0.02)
        nanny = next(iter(cluster.workers.values()))
        os.kill(nanny.process.process.pid, signal.SIGKILL)
        finished_at_kill.append(len(list(out.glob("*.jsonl"))))

    killer = threading.Thread(target=kill_a_worker_once_output_appears)
    killer.start()
    with distributed.Client(cluster) as client:
        summaries = annotate_shards(model, shards, out, client=client)
    killer.join()
    assert finished_at_kill and finished_at_kill[0] < 24  # killed mid-run
    # A shard whose task died after writing it is found there by the task's rerun: this run's work all the same.
    assert {s["status"] for s in summaries} == {"done"}
    assert _read_output(out) == expected
    assert not list(out.glob("*.partial-*"))


def test_both_workers_dying_is_one_error_and_a_rerun_finishes(model, tmp_path):
    shards = _write_shards(tmp_path / "in", 24, per_shard=400)
    out = tmp_path / "remote"
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None, silence_logs=50
    ) as doomed:

        def kill_both_once_output_appears():
            deadline = time.time() + 60
            while time.time() < deadline and not (out.exists() and any(out.glob("*.jsonl"))):
                time.sleep(0.02)
            for nanny in list(doomed.workers.values()):
                os.kill(nanny.process.process.pid, signal.SIGKILL)

        killer = threading.Thread(target=kill_both_once_output_appears)
        killer.start()
        with distributed.Client(doomed) as client:
            with pytest.raises(ClusterFailed, match="shards are finished and kept: rerun the same command"):
                annotate_shards(model, shards, out, client=client)
        killer.join()
    assert not list(out.glob("*.partial-*"))
    annotate_shards(model, shards, out)
    assert _read_output(out) == _read_output(_expected(model, shards, tmp_path / "local"))


def _expected(model, shards, folder):
    annotate_shards(model, shards, folder)
    return folder


def test_cli_with_a_scheduler_address(model, cluster, tmp_path):
    from typer.testing import CliRunner

    from spacy_bioner.cli import app

    shards = _write_shards(tmp_path / "in", 3)
    result = CliRunner().invoke(
        app, ["annotate", str(model), str(shards), str(tmp_path / "out"), "--scheduler", cluster.scheduler_address]
    )
    assert result.exit_code == 0, result.output
    assert "3 shards annotated (90 records" in result.output
    assert _read_output(tmp_path / "out") == _read_output(_expected(model, shards, tmp_path / "local"))
