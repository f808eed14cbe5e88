"""The bioner command's own surface: --version, help text as written, training pointed to spaCy."""
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
    assert 'spacy-bioner[glove]' in glove and "[initialize] vectors" in glove
