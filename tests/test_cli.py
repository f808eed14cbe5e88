"""The bioner command's own surface: --version, help text as written, training pointed to spaCy."""

import pytest
from conftest import make_examples, train_nlp
from spacy.tokens import DocBin
from typer.testing import CliRunner

import spacy_bioner
from spacy_bioner.cli import app


def test_version():
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0 and result.output.startswith(f"spacy-bioner {spacy_bioner.__version__}")


def test_help_says_where_training_goes_and_keeps_bracketed_text():
    result = CliRunner().invoke(app, ["--help"])
    assert result.exit_code == 0 and "spacy train" in result.output and "spacy project run" in result.output
    glove = CliRunner().invoke(app, ["glove", "--help"]).output
    assert "spacy-bioner[glove]" in glove and "[initialize] vectors" in glove


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cli")
    nlp = train_nlp()
    nlp.to_disk(folder / "model")
    DocBin(docs=[example.reference for example in make_examples(nlp)]).to_disk(folder / "gold.spacy")
    (folder / "gold.txt").write_text("Alice Smith lives in Paris .\n", encoding="utf8")
    (folder / "damaged.spacy").write_bytes(b"\x00not a DocBin" * 8)
    return folder


UNWRITABLE = "/proc/no_such_folder/out"


@pytest.mark.parametrize(
    "arguments, says",
    [
        (["evaluate", "{model}", "{gold_txt}"], "gold.txt: not a .spacy file"),
        (["evaluate", "{model}", "{damaged}"], "damaged.spacy: not a readable .spacy file"),
        (["evaluate", "{model}", "{gold_spacy}", "--train", "{damaged}"], "damaged.spacy: not a readable .spacy file"),
        (["debug-data", "{damaged}", "{gold_spacy}"], "damaged.spacy: not a readable .spacy file"),
        (["evaluate", "{folder}/no_such_model", "{gold_spacy}"], "Cannot load"),
        (["annotate", "{folder}/no_such_model", "{gold_txt}", "{folder}/out.jsonl"], "Cannot load"),
        (
            ["evaluate", "{model}", "{gold_spacy}", "--output", UNWRITABLE + ".json"],
            f"--output {UNWRITABLE}.json: cannot make its folder",
        ),
        (["evaluate", "{model}", "{gold_spacy}", "--html", UNWRITABLE], "--html"),
        (["calibrate", "{model}", "{gold_spacy}", "--output", UNWRITABLE], "--output"),
        (["explain", "{model}", "Bob", "--output", UNWRITABLE + ".json"], "--output"),
        (
            ["annotate", "{model}", "{gold_txt}", UNWRITABLE + ".jsonl"],
            f"OUTPUT {UNWRITABLE}.jsonl: cannot make its folder",
        ),
        (["gazetteer", "compile", "{gold_txt}", UNWRITABLE + ".gaz", "--label", "LOC"], "cannot make its folder"),
        (
            ["evaluate", "{model}", "{gold_spacy}", "--bias-curve", "1,x"],
            "--bias-curve: 'x' is not a number from -1000 to 1000",
        ),
        (["evaluate", "{model}", "{gold_spacy}", "--bias-curve", "5000"], "--bias-curve: '5000' is not a number"),
        (
            ["evaluate", "{model}", "{gold_spacy}", "--candidate-curve", "0.5,nan"],
            "--candidate-curve: 'nan' is not a number from 0 to 1",
        ),
    ],
)
def test_bad_arguments_and_files_are_one_line_naming_the_problem(files, arguments, says):
    names = {
        "model": files / "model",
        "folder": files,
        "gold_txt": files / "gold.txt",
        "gold_spacy": files / "gold.spacy",
        "damaged": files / "damaged.spacy",
    }
    result = CliRunner().invoke(app, [argument.format(**names) for argument in arguments])
    assert result.exit_code == 1, (result.exception, result.stderr)
    assert says in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_skipped_lines_and_the_progress_bar_never_share_a_line(files):
    source = files / "lines.jsonl"
    source.write_text('{"text": "Paris"}\n{bad\n{"text": "Berlin"}\n[1]\n', encoding="utf8")
    result = CliRunner().invoke(app, ["annotate", str(files / "model"), str(source), str(files / "lines_out.jsonl")])
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines() == [
        "skipped line 2: not valid JSON (Expecting property name enclosed in double quotes)",
        'skipped line 4: expected an object with a string "text" field',
    ]
