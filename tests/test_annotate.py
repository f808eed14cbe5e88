import json

import pytest
import spacy
from typer.testing import CliRunner

from spacy_bioner.annotate import annotate
from spacy_bioner.cli import app

from conftest import TRAIN_DATA, train_nlp


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    path = tmp_path_factory.mktemp("annotate") / "model"
    train_nlp().to_disk(path)
    return path


def run(*args):
    return CliRunner().invoke(app, ["annotate", *map(str, args)])


def test_text_lines_in_jsonl_out(model, tmp_path):
    source = tmp_path / "in.txt"
    texts = [text for text, _ in TRAIN_DATA] + [""]
    source.write_text("\n".join(texts) + "\n", encoding="utf8")
    result = run(model, source, tmp_path / "out.jsonl")
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [r["text"] for r in records] == texts  # one record per line, in order, empty docs included
    first = records[0]
    assert [(e["start"], e["end"], e["label"]) for e in first["entities"]] == TRAIN_DATA[0][1]
    assert all(first["text"][e["start"] : e["end"]] == e["text"] for e in first["entities"])


def test_jsonl_fields_pass_through_and_bad_lines_are_reported(model, tmp_path):
    source = tmp_path / "in.jsonl"
    lines = [json.dumps({"id": 1, "text": TRAIN_DATA[0][0]}), "{not json", json.dumps({"id": 3}),
             json.dumps({"id": 4, "text": TRAIN_DATA[2][0], "meta": {"source": "x"}})]
    source.write_text("\n".join(lines) + "\n", encoding="utf8")
    result = run(model, source, tmp_path / "out.jsonl", "--n-process", 2, "--batch-size", 1)
    assert result.exit_code == 0, result.output
    assert "line 2: not valid JSON" in result.output and "line 3: expected an object" in result.output
    records = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [r["id"] for r in records] == [1, 4] and records[1]["meta"] == {"source": "x"}
    assert "2 docs" in result.output and "2 lines skipped" in result.output


def test_strict_stops_without_writing(model, tmp_path):
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps({"text": "Paris"}) + "\n[1, 2]\n", encoding="utf8")
    result = run(model, source, tmp_path / "out.jsonl", "--strict")
    assert result.exit_code == 1 and "line 2" in result.output
    assert not (tmp_path / "out.jsonl").exists() and not (tmp_path / "out.jsonl.partial").exists()


def test_worker_processes_write_what_one_process_writes(model, tmp_path):
    source = tmp_path / "in.txt"
    texts = [text for text, _ in TRAIN_DATA] * 12 + ["Carol Jones visited Berlin"]
    source.write_text("\n".join(texts) + "\n", encoding="utf8")
    for n in (1, 2):
        result = run(model, source, tmp_path / f"out{n}.jsonl", "--n-process", n, "--batch-size", 5)
        assert result.exit_code == 0, result.output
    assert (tmp_path / "out1.jsonl").read_text() == (tmp_path / "out2.jsonl").read_text()
    assert len((tmp_path / "out2.jsonl").read_text().splitlines()) == len(texts)
    with pytest.raises(ValueError, match="n_process must be a positive number"):
        annotate(spacy.load(model), source, tmp_path / "out0.jsonl", "text", n_process=0)
    assert not (tmp_path / "out0.jsonl").exists()
