"""The user's paths: spacy train through the CLI, and the project's `all` workflow."""

import shutil
import subprocess
import sys
import sysconfig
import venv

import pytest
import spacy
import srsly
from conftest import ROOT, make_examples
from spacy.tokens import DocBin

sys.path.insert(0, str(ROOT / "scripts"))
from normalize_conll import normalize  # noqa: E402


def run(*args, cwd=None):
    result = subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True, cwd=cwd)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result


def copy_project(tmp_path):
    """The project's files (project.yml, assets, configs, scripts) in a fresh folder."""
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(ROOT / "project.yml", project / "project.yml")
    for folder in ("assets", "configs", "scripts"):
        shutil.copytree(ROOT / folder, project / folder)
    return project


def test_spacy_train_cli_writes_loadable_model_best(tmp_path):
    nlp = spacy.blank("en")
    corpus = DocBin(docs=[eg.reference for eg in make_examples(nlp)] * 3)
    corpus.to_disk(tmp_path / "train.spacy")
    run(
        "spacy",
        "train",
        str(ROOT / "configs" / "bioner.cfg"),
        "--paths.train",
        str(tmp_path / "train.spacy"),
        "--paths.dev",
        str(tmp_path / "train.spacy"),
        "--output",
        str(tmp_path / "out"),
        "--training.max_epochs",
        "15",
        "--training.eval_frequency",
        "5",
    )
    trained = spacy.load(tmp_path / "out" / "model-best")
    doc = trained("Bob works at Acme Corp in Berlin")
    assert [(e.text, e.label_) for e in doc.ents] == [("Bob", "PER"), ("Acme Corp", "ORG"), ("Berlin", "LOC")]
    # Components that read sentences (negation detectors) find them: no E030.
    assert [sent.text for sent in trained("Bob works at Acme Corp . Carol lives in Berlin .").sents] == [
        "Bob works at Acme Corp .",
        "Carol lives in Berlin .",
    ]


def test_normalize_docstart_lines():
    lines = ["-DOCSTART- -X- -X- O\n", "\n", "EU I-ORG\n", "\t\n", "rejects O\n"]
    assert list(normalize(lines)) == ["-DOCSTART- -X- O O\n", "\n", "EU I-ORG\n", "\n", "rejects O\n"]


def test_project_all_runs_on_embedded_sample(tmp_path):
    project = copy_project(tmp_path)
    run("spacy", "project", "run", "all", str(project), cwd=project)
    trained = spacy.load(project / "training" / "model-best")
    doc = trained("Shares of Norvex Bank rose in Oslo .")
    assert [(s.text, s.kb_id_) for s in doc.spans["bioner_gazetteer"]] == [
        ("Norvex Bank", "firm:norvex"),
        ("Oslo", "place:oslo"),
    ]
    scores = srsly.read_json(project / "metrics" / "scores.json")
    assert scores["ents_f"] > 0.8
    report = srsly.read_json(project / "metrics" / "report.json")
    assert report["overall"]["f"] == scores["ents_f"] and report["unseen"]["gold"] > 0
    assert report["calibration"]["temperature"] > 0 and len(report["recall_knob"]) == 3
    assert [point["threshold"] for point in report["candidates"]] == [0.1, 0.02, 0.005]
    assert (project / "metrics" / "report" / "index.html").exists()
    pipeline = spacy.load(project / "training" / "pipeline")  # identifiers -> bioner -> values
    doc = pipeline("Shares of Norvex Bank rose in Oslo , anna@example.com wrote on 2024-05-07 .")
    found = {(e.text, e.label_): e._.value for e in doc.ents}
    assert ("Norvex Bank", "ORG") in found and ("Oslo", "LOC") in found
    assert found[("anna@example.com", "EMAIL")] == {"type": "email", "canonical": "anna@example.com"}
    assert found[("2024-05-07", "DATE_TIME")] == {"type": "date", "iso": "2024-05-07"}
    # Documents were kept whole: -DOCSTART- never became a token.
    nlp = spacy.blank("en")
    docs = list(DocBin().from_disk(project / "corpus" / "train.spacy").get_docs(nlp.vocab))
    assert len(docs) == 40
    assert all(len(list(doc.sents)) == 12 for doc in docs)
    assert not any(token.text == "-DOCSTART-" for doc in docs for token in doc)


def test_project_package_installs_and_loads_by_name(tmp_path):
    project = copy_project(tmp_path)
    run("spacy", "project", "run", "all", str(project), "--vars.max_epochs", "3", cwd=project)
    run("spacy", "project", "run", "package", str(project), cwd=project)
    package = project / "packages" / "en_bioner_sample-0.0.1"
    # A fresh venv that sees this one's packages (spacy, spacy-bioner) but not the pipeline package.
    env = tmp_path / "venv"
    venv.create(env, with_pip=True)
    python = env / "bin" / "python"
    site_packages = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    with open(f"{site_packages}/parent_env.pth", "w") as pth:
        pth.write(f"import site; site.addsitedir({sysconfig.get_paths()['purelib']!r})\n")
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", str(package)],
        capture_output=True,
        text=True,
    )
    assert install.returncode == 0, install.stdout[-2000:] + install.stderr[-2000:]
    code = (
        "import spacy; nlp = spacy.load('en_bioner_sample'); doc = nlp('Anna Adler met Boris in Oslo . He left .'); "
        "print(nlp.pipe_names, [e.label_ for e in doc.ents], len(list(doc.sents)))"
    )
    loaded = subprocess.run([str(python), "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert loaded.returncode == 0, loaded.stderr[-3000:]
    names = "['bioner_identifiers', 'bioner', 'bioner_values', 'sentencizer']"
    assert names in loaded.stdout and "LOC" in loaded.stdout and loaded.stdout.strip().endswith(" 2")


def test_convert_reads_bilou_text_and_passes_spacy_files_through(tmp_path):
    sys.path.insert(0, str(ROOT / "scripts"))
    from convert_corpus import convert_corpus

    source = tmp_path / "bilou.tsv"
    source.write_text(
        "-DOCSTART- -X- -X- O\n\nAlice\tB-PER\nSmith\tL-PER\nin\tO\nParis\tU-LOC\n\nHe\tO\nleft\tO\n\n", encoding="utf8"
    )
    convert_corpus(source, tmp_path / "out" / "train.spacy", 1)
    nlp = spacy.blank("en")
    docs = list(DocBin().from_disk(tmp_path / "out" / "train.spacy").get_docs(nlp.vocab))
    assert len(docs) == 1 and [(e.text, e.label_) for e in docs[0].ents] == [("Alice Smith", "PER"), ("Paris", "LOC")]
    convert_corpus(tmp_path / "out" / "train.spacy", tmp_path / "copy" / "dev.spacy", 1)
    assert (tmp_path / "copy" / "dev.spacy").read_bytes() == (tmp_path / "out" / "train.spacy").read_bytes()


@pytest.mark.parametrize("beam_width", ["1", "4"])
def test_project_parser_workflow_on_embedded_treebank(tmp_path, beam_width):
    project = copy_project(tmp_path)
    run("spacy", "project", "run", "parser", str(project), "--vars.beam_width", beam_width, cwd=project)
    scores = srsly.read_json(project / "metrics" / "parser_scores.json")
    assert scores["tag_acc"] > 0.95 and scores["dep_las_all"] > 0.8 and scores["dep_label_acc"] > 0.8
    raw_scores = srsly.read_json(project / "metrics" / "parser_raw_scores.json")
    assert raw_scores["sents_f"] > 0.9 and raw_scores["dep_las"] > 0.7
    nlp = spacy.load(project / "training" / "parser_pipeline")
    doc = nlp("The green river approved the report. Oslo visited every garden.")
    assert nlp.pipe_names == ["bioner_senter", "bioner_tagger", "bioner_parser"]
    assert nlp.get_pipe("bioner_parser").cfg["beam_width"] == int(beam_width)
    assert [sent.text for sent in doc.sents] == ["The green river approved the report.", "Oslo visited every garden."]
    assert doc[6].dep_ == "punct" and doc[3].head.i == 3 and doc[8].head.i == 8


def test_project_distant_workflow_trains_without_annotation(tmp_path):
    project = copy_project(tmp_path)
    run("spacy", "project", "run", "distant", str(project), "--vars.max_epochs", "3", cwd=project)
    labelled = list(DocBin().from_disk(project / "corpus" / "distant_0.spacy").get_docs(spacy.blank("en").vocab))
    assert any(doc.ents for doc in labelled) and all(not ent.label_ == "PER" for doc in labelled for ent in doc.ents)
    for round_ in (0, 1):
        assert "ents_f" in srsly.read_json(project / "metrics" / f"distant_{round_}_scores.json")
        model = spacy.load(project / "training" / f"distant_{round_}" / "model-last")
        assert set(model.get_pipe("bioner").labels) == {"ORG", "LOC"}  # the labels of the lists, nothing else
