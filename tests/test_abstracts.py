"""Recovering abstracts in files that lost them (scripts/abstracts.py) and converting with them."""

import sys
from pathlib import Path

import pytest
import spacy
from spacy.tokens import DocBin

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from abstracts import abstract_starts, mark_abstracts  # noqa: E402
from convert_corpus import convert_corpus  # noqa: E402

# Three abstracts, one after another as in the BC5CDR TSV: a title, then the body.
ABSTRACTS = [
    [
        "Amiodarone - induced atrial fibrillation in elderly cardiac patients .",
        "Atrial fibrillation ( AF ) is common in elderly cardiac patients .",
        "We studied amiodarone in cardiac patients with atrial fibrillation .",
        "AF recurred in patients given amiodarone .",
    ],
    [
        "Cisplatin nephrotoxicity in rats : tubular damage and kidney function .",
        "Cisplatin caused tubular damage in rat kidney .",
        "Kidney function of rats was measured after cisplatin .",
        "Tubular necrosis followed the highest cisplatin dose in rats .",
    ],
    [
        "Gemcitabine for pancreatic carcinoma .",
        "BACKGROUND : Pancreatic carcinoma responds poorly to chemotherapy .",
        "METHODS : Forty patients with pancreatic carcinoma received gemcitabine .",
        "RESULTS : Gemcitabine chemotherapy slowed pancreatic carcinoma growth .",
        "CONCLUSIONS : Gemcitabine is useful chemotherapy for pancreatic carcinoma .",
    ],
]
SENTENCES = [sentence.split() for abstract in ABSTRACTS for sentence in abstract]
STARTS = [0, 4, 8]
ENTITIES = {"Amiodarone", "amiodarone", "Cisplatin", "cisplatin", "Gemcitabine", "gemcitabine"}


def write_tsv(path: Path, docstart: bool = False) -> Path:
    lines = ["-DOCSTART-\tO", ""] if docstart else []
    for words in SENTENCES:
        lines += [f"{word}\t{'B-Chemical' if word in ENTITIES else 'O'}" for word in words] + [""]
    path.write_text("\n".join(lines) + "\n", encoding="utf8")
    return path


def test_abstract_starts_finds_each_title():
    assert abstract_starts(SENTENCES, sentences_per_abstract=len(SENTENCES) / 3) == STARTS


def test_a_section_heading_does_not_start_an_abstract():
    # Asked for one cut too many, the structured abstract's headings are still not cut.
    starts = abstract_starts(SENTENCES, sentences_per_abstract=len(SENTENCES) / 4)
    assert len(starts) == 4
    headed = [i for i, words in enumerate(SENTENCES) if words[1] == ":"]
    assert not set(starts) & set(headed)
    assert 8 in starts


def test_abstract_starts_edge_cases():
    assert abstract_starts([]) == [0]
    assert abstract_starts(SENTENCES[:2]) == [0]
    with pytest.raises(ValueError, match="sentences_per_abstract"):
        abstract_starts(SENTENCES, sentences_per_abstract=0.5)


def test_mark_abstracts_writes_doc_marks(tmp_path):
    source = write_tsv(tmp_path / "train.tsv")
    target = tmp_path / "marked.iob"
    assert mark_abstracts(source, target, sentences_per_abstract=len(SENTENCES) / 3) == 3
    lines = target.read_text(encoding="utf8").splitlines()
    marks = [i for i, line in enumerate(lines) if line.startswith("-DOCSTART-")]
    assert [lines[i + 2].split("\t")[0] for i in marks] == ["Amiodarone", "Cisplatin", "Gemcitabine"]
    # Every token line is kept, in order.
    assert [line for line in lines if line.strip() and not line.startswith("-DOCSTART-")] == [
        line for line in source.read_text(encoding="utf8").splitlines() if line.strip()
    ]


def test_mark_abstracts_refuses_a_file_with_doc_marks(tmp_path):
    with pytest.raises(ValueError, match="already marks its documents"):
        mark_abstracts(write_tsv(tmp_path / "train.tsv", docstart=True), tmp_path / "out.iob")


def test_convert_corpus_groups_abstracts(tmp_path):
    # At the default of a cut per 13 sentences, these 13 make one doc (one a sentence without "abstracts").
    target = tmp_path / "out" / "train.spacy"
    convert_corpus(write_tsv(tmp_path / "train.tsv"), target, "abstracts")
    docs = list(DocBin().from_disk(target).get_docs(spacy.blank("en").vocab))
    assert len(docs) == len(abstract_starts(SENTENCES)) == 1
    assert [token.text for token in docs[0]] == [word for words in SENTENCES for word in words]
    assert len(docs[0].ents) == sum(word in ENTITIES for words in SENTENCES for word in words)


def test_convert_corpus_refuses_bad_grouping(tmp_path):
    source = write_tsv(tmp_path / "train.tsv")
    with pytest.raises(ValueError, match="a number or 'abstracts'"):
        convert_corpus(source, tmp_path / "out.spacy", "paragraphs")
    treebank = tmp_path / "train.conllu"
    treebank.write_text("1\tHi\thi\tINTJ\tUH\t_\t0\troot\t_\t_\n\n", encoding="utf8")
    with pytest.raises(ValueError, match="IOB text files"):
        convert_corpus(treebank, tmp_path / "out.spacy", "abstracts")
