"""`bioner annotate` under faults: interrupted runs resume byte for byte, Ctrl-C and SIGTERM stop
at once, a dead worker stops the run within seconds, resumable."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import spacy
from conftest import TRAIN_DATA, train_nlp

from spacy_bioner.annotate import annotate

# A component that takes a millisecond a doc, so that a run lasts long enough to be interrupted.
SLOW = """
import time
from spacy.language import Language

@Language.component("slow")
def slow(doc):
    time.sleep(0.001)
    return doc
"""
CLI = "import sys, slow; from spacy_bioner.cli import main; sys.argv = ['bioner', *sys.argv[1:]]; main()"


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """A trained pipeline, and the same with the slow component after it."""
    folder = tmp_path_factory.mktemp("faults")
    nlp = train_nlp()
    nlp.to_disk(folder / "model")
    (folder / "slow.py").write_text(SLOW, encoding="utf8")
    sys.path.insert(0, str(folder))
    import slow  # noqa: F401  registers the component

    nlp.add_pipe("slow")
    nlp.to_disk(folder / "slow_model")
    return folder


def _source(path: Path, n: int) -> Path:
    lines = [json.dumps({"id": i, "text": TRAIN_DATA[i % 4][0]}) for i in range(n)]
    for bad in (7, n // 2, n - 3):  # bad lines before and after any interruption
        lines[bad] = "{not json"
    path.write_text("\n".join(lines) + "\n", encoding="utf8")
    return path


class Interrupt:
    """on_doc that raises KeyboardInterrupt at the n-th doc, as Ctrl-C would."""

    def __init__(self, n: int):
        self.n, self.seen = n, 0

    def __call__(self):
        self.seen += 1
        if self.seen == self.n:
            raise KeyboardInterrupt


def test_an_interrupted_run_resumes_byte_for_byte(models, tmp_path):
    nlp = spacy.load(models / "model")
    source = _source(tmp_path / "in.jsonl", 1000)
    expected = annotate(nlp, source, tmp_path / "whole.jsonl", "jsonl", batch_size=100)
    output = tmp_path / "out.jsonl"
    with pytest.raises(KeyboardInterrupt):
        annotate(nlp, source, output, "jsonl", batch_size=100, on_doc=Interrupt(650))
    assert not output.exists() and Path(f"{output}.partial").exists() and Path(f"{output}.partial.state").exists()
    resumed_at = []
    counts = annotate(nlp, source, output, "jsonl", batch_size=100, on_resume=resumed_at.append)
    assert resumed_at and 500 <= resumed_at[0] < 700
    assert output.read_bytes() == (tmp_path / "whole.jsonl").read_bytes()
    assert counts == expected and counts["lines"] == counts["docs"] + counts["skipped"] == 1000
    assert not Path(f"{output}.partial").exists() and not Path(f"{output}.partial.state").exists()


def test_a_changed_source_starts_over(models, tmp_path):
    nlp = spacy.load(models / "model")
    source = _source(tmp_path / "in.jsonl", 500)
    output = tmp_path / "out.jsonl"
    with pytest.raises(KeyboardInterrupt):
        annotate(nlp, source, output, "jsonl", batch_size=50, on_doc=Interrupt(300))
    _source(source, 400)
    resumed_at = []
    annotate(nlp, source, output, "jsonl", batch_size=50, on_resume=resumed_at.append)
    annotate(nlp, source, tmp_path / "whole.jsonl", "jsonl", batch_size=50)
    assert resumed_at == [] and output.read_bytes() == (tmp_path / "whole.jsonl").read_bytes()


def _start(models, source, output, *options):
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(models), *sys.path])}
    # As a command in a terminal's foreground: a shell's background job (CI, say) starts with SIGINT ignored,
    # and Python keeps it ignored.
    return subprocess.Popen(
        [sys.executable, "-c", CLI, "annotate", str(models / "slow_model"), str(source), str(output), *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=environment,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def _wait_for(path: Path, process, seconds: float = 60) -> None:
    deadline = time.time() + seconds
    while not path.exists():
        assert process.poll() is None and time.time() < deadline, "the run ended before it could be interrupted"
        time.sleep(0.02)


def _workers(pid: int):
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return [int(child) for child in children if b"resource_tracker" not in Path(f"/proc/{child}/cmdline").read_bytes()]


def _resume_and_compare(models, source, output, expected: Path):
    rerun = _start(models, source, output, "--n-process", "2", "--batch-size", "50")
    printed, _ = rerun.communicate(timeout=120)
    assert rerun.returncode == 0, printed
    assert f"resuming {output} after line" in printed and "3 lines skipped" in printed, printed
    assert output.read_bytes() == expected.read_bytes()


@pytest.fixture(scope="module")
def expected(models, tmp_path_factory):
    folder = tmp_path_factory.mktemp("expected")
    source = _source(folder / "in.jsonl", 4000)
    annotate(spacy.load(models / "model"), source, folder / "out.jsonl", "jsonl")
    return source, folder / "out.jsonl"


@pytest.mark.parametrize("how, n_process", [(signal.SIGINT, "2"), (signal.SIGINT, "1"), (signal.SIGTERM, "2")])
@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="finds worker processes through /proc")
def test_ctrl_c_and_sigterm_stop_at_once_and_the_rerun_resumes(models, expected, tmp_path, how, n_process):
    source, whole = expected
    output = tmp_path / "out.jsonl"
    process = _start(models, source, output, "--n-process", n_process, "--batch-size", "50")
    _wait_for(Path(f"{output}.partial.state"), process)
    workers = _workers(process.pid)
    process.send_signal(how)
    printed, _ = process.communicate(timeout=10)  # promptly, workers or not
    assert process.returncode == 130, printed
    assert "interrupted: the lines done so far are kept" in printed and "Traceback" not in printed
    assert all(
        not Path(f"/proc/{worker}").exists() or b"State:\tZ" in Path(f"/proc/{worker}/status").read_bytes()
        for worker in workers
    )
    _resume_and_compare(models, source, output, whole)


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="finds worker processes through /proc")
def test_a_killed_worker_stops_the_run_within_seconds_and_the_rerun_resumes(models, expected, tmp_path):
    source, whole = expected
    output = tmp_path / "out.jsonl"
    process = _start(models, source, output, "--n-process", "2", "--batch-size", "50")
    _wait_for(Path(f"{output}.partial.state"), process)
    os.kill(_workers(process.pid)[0], signal.SIGKILL)
    printed, _ = process.communicate(timeout=10)
    assert process.returncode == 1, printed
    assert "a worker process ended (exit code -9" in printed and "rerun the same command to resume" in printed
    assert "Traceback" not in printed
    _resume_and_compare(models, source, output, whole)
