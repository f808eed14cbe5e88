import json

import pytest
import spacy
from conftest import TRAIN_DATA, train_nlp
from typer.testing import CliRunner

from spacy_bioner.annotate import annotate
from spacy_bioner.cli import app


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
    lines = [
        json.dumps({"id": 1, "text": TRAIN_DATA[0][0]}),
        "{not json",
        json.dumps({"id": 3}),
        json.dumps({"id": 4, "text": TRAIN_DATA[2][0], "meta": {"source": "x"}}),
    ]
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


def _summary_counts(output: str):
    """(lines read, docs written, lines skipped) from the summary line."""
    import re

    found = re.search(r"([\d,]+) lines read: ([\d,]+) docs written .* ([\d,]+) lines skipped", " ".join(output.split()))
    return tuple(int(group.replace(",", "")) for group in found.groups())


def test_hostile_records_are_skipped_alone_with_their_true_line_numbers(model, tmp_path):
    good = [json.dumps({"id": i, "text": TRAIN_DATA[i % 4][0]}) for i in range(1000)]
    hostile = {  # line number -> (line, what the report says)
        101: ('{"id": "s", "text": "caf\\ud800"}', "line 101: a lone surrogate"),
        202: ('{"id": "n", "text": "Paris", "score": NaN}', "line 202: not valid JSON (NaN is not a JSON number)"),
        303: (
            '{"id": "i", "text": "Paris", "score": -Infinity}',
            "line 303: not valid JSON (-Infinity is not a JSON number)",
        ),
        404: ('{"text": "Paris", "deep": ' + "[" * 100_000 + "]" * 100_000 + "}", "line 404: JSON nested too deeply"),
        505: (json.dumps({"text": "Paris " * 9_000_000}), "line 505: 54,000,000 characters (the limit is 100,000)"),
        606: (
            json.dumps({"text": "\U0001f600" * 20_000}),
            "line 606: a run of 20,000 symbols without a space (the limit is 200)",
        ),
    }
    lines = list(good)
    for line_no in sorted(hostile):
        lines.insert(line_no - 1, hostile[line_no][0])
    lines.insert(706, json.dumps({"id": "big", "text": "Paris", "count": 2**70}))  # valid JSON: passed through
    source = tmp_path / "in.jsonl"
    source.write_text("\n".join(lines) + "\n", encoding="utf8")
    result = run(model, source, tmp_path / "out.jsonl", "--n-process", 2, "--batch-size", 64)
    assert result.exit_code == 0, result.output[-2000:]
    reported = [line.split("skipped ", 1)[1] for line in result.output.splitlines() if "skipped line" in line]
    expected = [message for _, (_, message) in sorted(hostile.items())]
    assert len(reported) == len(expected) and all(
        line.startswith(message) for line, message in zip(reported, expected)
    ), reported
    written = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text(encoding="utf8").splitlines()]
    assert [record["id"] for record in written] == list(range(700)) + ["big"] + list(
        range(700, 1000)
    )  # "big" is line 707
    assert written[700]["count"] == 2**70
    assert _summary_counts(result.output) == (1007, 1001, 6)


def test_a_text_over_the_pipelines_max_length_is_skipped(model, tmp_path):
    nlp = spacy.load(model)
    nlp.max_length = 20
    source = tmp_path / "in.txt"
    source.write_text("Paris\n" + "Paris is a city in France .\n" + "Berlin\n", encoding="utf8")
    skipped = []
    counts = annotate(nlp, source, tmp_path / "out.jsonl", "text", on_skip=skipped.append)
    assert skipped == ["line 2: 27 characters (the limit is 20)"]
    assert counts == {"lines": 3, "docs": 2, "skipped": 1, "entities": counts["entities"]}


def test_a_lone_carriage_return_stays_inside_its_record(model, tmp_path):
    source = tmp_path / "in.txt"
    source.write_bytes(b"Alice Smith\rlives in Paris\r\nBob works at Acme Corp\n")
    result = run(model, source, tmp_path / "out.jsonl")
    assert result.exit_code == 0, result.output
    written = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text(encoding="utf8").splitlines()]
    assert [record["text"] for record in written] == ["Alice Smith\rlives in Paris", "Bob works at Acme Corp"]


def test_bytes_that_are_not_utf8_are_reported_at_their_line(model, tmp_path):
    source = tmp_path / "in.txt"
    lines = [f"Line {i} about Paris".encode() for i in range(1, 6001)]
    lines[4999] = b"caf\xe9 in Paris"  # latin-1, on line 5,000
    lines[100] = b"a lone \r inside"
    source.write_bytes(b"\n".join(lines) + b"\n")
    result = run(model, source, tmp_path / "out.jsonl")
    assert result.exit_code == 0, result.output
    assert "skipped line 5000: not UTF-8 (invalid continuation byte at byte 4)" in result.output
    assert _summary_counts(result.output) == (6000, 5999, 1)


def test_long_texts_split_into_windows_whose_entities_are_merged(model, tmp_path):
    paragraphs = ["Alice Smith lives in Paris .", "Bob works at Acme Corp in Berlin", "Acme Corp hired Carol Jones"]
    text = "\n\n".join(paragraphs)
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps({"text": text}) + "\n", encoding="utf8")
    result = run(model, source, tmp_path / "out.jsonl", "--max-chars", 40, "--split-long")
    assert result.exit_code == 0, result.output
    [record] = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text(encoding="utf8").splitlines()]
    nlp = spacy.load(model)
    offsets = [text.index(paragraph) for paragraph in paragraphs]
    expected = [
        (e.start_char + offset, e.end_char + offset, e.label_)
        for offset, paragraph in zip(offsets, paragraphs)
        for e in nlp(paragraph).ents
    ]
    assert [(e["start"], e["end"], e["label"]) for e in record["entities"]] == expected
    assert all(text[e["start"] : e["end"]] == e["text"] for e in record["entities"]) and len(expected) >= 4
    assert "1 lines skipped" in " ".join(run(model, source, tmp_path / "skip.jsonl", "--max-chars", 40).output.split())


def test_a_record_the_pipeline_fails_on_is_skipped_alone(model, tmp_path):
    nlp = spacy.load(model)

    @spacy.Language.component("fails_on_boom")
    def fails_on_boom(doc):
        if "boom" in doc.text:
            raise RuntimeError("cannot tag this")
        return doc

    nlp.add_pipe("fails_on_boom")
    source = tmp_path / "in.txt"
    source.write_text("Paris\nboom\nBerlin\n", encoding="utf8")
    skipped = []
    counts = annotate(nlp, source, tmp_path / "out.jsonl", "text", on_skip=skipped.append)
    assert skipped == ["line 2: the pipeline failed on it (RuntimeError: cannot tag this)"]
    assert [json.loads(line)["text"] for line in (tmp_path / "out.jsonl").read_text().splitlines()] == [
        "Paris",
        "Berlin",
    ]
    assert counts["lines"] == counts["docs"] + counts["skipped"] == 3
