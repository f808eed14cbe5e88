"""Pipelines saved by spacy-bioner 0.1 (tests/fixtures/pipeline_0_1, written by 0.1 itself) load after
`bioner upgrade`, or their component alone, and tag exactly as 0.1 tagged them."""

import json
import shutil
from pathlib import Path

import pytest
import spacy
from confection import ConfigValidationError
from typer.testing import CliRunner

from spacy_bioner.cli import app
from spacy_bioner.core.serialize import ModelFileError
from spacy_bioner.ner.component import BioNER
from spacy_bioner.upgrade import upgrade

FIXTURE = Path(__file__).parent / "fixtures" / "pipeline_0_1"
EXPECTED = json.loads((Path(__file__).parent / "fixtures" / "pipeline_0_1_expected.json").read_text(encoding="utf8"))


def tagged(nlp):
    return [
        [[e.text, e.label_, e.kb_id_, round(p, 6)] for e, p in zip(doc.ents, doc.spans["bioner"].attrs["scores"])]
        for doc in nlp.pipe(EXPECTED["texts"])
    ]


def test_a_0_1_component_loads_alone_once_upgraded_with_its_settings_and_tags_as_0_1_did(tmp_path):
    copy = tmp_path / "pipeline"
    shutil.copytree(FIXTURE, copy)
    nlp = spacy.blank("en")
    with pytest.raises(ModelFileError, match="No manifest.json .*bioner upgrade"):  # 0.1 recorded no checksums
        BioNER(nlp.vocab, tokenizer=nlp.tokenizer).from_disk(copy / "bioner")
    assert upgrade(copy) == ["bioner"]
    ner = BioNER(nlp.vocab, tokenizer=nlp.tokenizer).from_disk(copy / "bioner")
    assert ner.settings.confidence.probabilities and ner.settings.n_buckets == 1024
    docs = [ner(nlp.make_doc(text)) for text in EXPECTED["texts"]]
    assert [
        [[e.text, e.label_, e.kb_id_, round(p, 6)] for e, p in zip(doc.ents, doc.spans["bioner"].attrs["scores"])]
        for doc in docs
    ] == EXPECTED["entities"]


def test_a_0_1_pipeline_names_the_version_in_one_line_and_upgrade_makes_it_load(tmp_path):
    with pytest.raises(ConfigValidationError):
        spacy.load(FIXTURE)
    result = CliRunner().invoke(app, ["explain", str(FIXTURE), "Bob Jones ."])
    assert result.exit_code == 1 and "spacy-bioner 0.1" in result.output and "bioner upgrade" in result.output
    assert len(result.output.strip().splitlines()) == 1
    copy = tmp_path / "pipeline"
    shutil.copytree(FIXTURE, copy)
    result = CliRunner().invoke(app, ["upgrade", str(copy)])
    assert result.exit_code == 0 and "upgraded bioner" in " ".join(result.output.split())
    assert tagged(spacy.load(copy)) == EXPECTED["entities"]
    assert "nothing to do" in CliRunner().invoke(app, ["upgrade", str(copy)]).output


def test_a_missing_model_is_one_line():
    result = CliRunner().invoke(app, ["explain", "no_such_pipeline", "text"])
    assert (
        result.exit_code == 1 and "no_such_pipeline" in result.output and len(result.output.strip().splitlines()) == 1
    )
