"""Convert one corpus file for the project: IOB/BILOU text or CoNLL-U to .spacy, or a .spacy file as it is.

Text files (CoNLL-2003 with -DOCSTART- lines, IOB1, IOB2 or BILOU tags in the
last column; the biomedical TSVs; WNUT-17) are normalized (see
normalize_conll.py) and converted by `spacy convert -c ner`; files that are
already .spacy are copied; .conllu treebanks go through `spacy convert -c
conllu` (SENTENCES_PER_DOC sentences per doc). Text files without document
marks are grouped SENTENCES_PER_DOC sentences a doc, or, with "abstracts",
into the abstracts that abstracts.py recovers (BC5CDR, NCBI-disease).

Usage: python scripts/convert_corpus.py INPUT OUTPUT.spacy SENTENCES_PER_DOC|abstracts
"""

import shutil
import sys
import tempfile
from pathlib import Path

from abstracts import mark_abstracts
from normalize_conll import main as normalize
from spacy.cli.convert import convert

ABSTRACTS = "abstracts"


def convert_corpus(source: Path, target: Path, sentences_per_doc: str) -> None:
    """sentences_per_doc: a number, or "abstracts" (text files only)."""
    if sentences_per_doc != ABSTRACTS and not str(sentences_per_doc).isdigit():
        raise ValueError(f"SENTENCES_PER_DOC must be a number or '{ABSTRACTS}', got {sentences_per_doc!r}.")
    if sentences_per_doc == ABSTRACTS and source.suffix in (".spacy", ".conllu"):
        raise ValueError(f"'{ABSTRACTS}' groups the sentences of IOB text files; {source} is {source.suffix}.")
    # with -DOCSTART- lines (as mark_abstracts writes), spaCy groups by them and ignores n_sents
    n_sents = 1 if sentences_per_doc == ABSTRACTS else int(sentences_per_doc)
    target.parent.mkdir(parents=True, exist_ok=True)
    if source.suffix == ".spacy":
        shutil.copyfile(source, target)
        return
    with tempfile.TemporaryDirectory() as tmp:
        if source.suffix == ".conllu":
            staged = Path(tmp) / (target.stem + ".conllu")
            shutil.copyfile(source, staged)
            convert(staged, Path(tmp), converter="conllu", n_sents=n_sents, file_type="spacy")
        else:
            normalized = Path(tmp) / (target.stem + ".iob")
            normalize(str(source), str(normalized))
            if sentences_per_doc == ABSTRACTS:
                mark_abstracts(normalized, normalized)
            convert(normalized, Path(tmp), converter="ner", n_sents=n_sents, file_type="spacy")
        shutil.move(str(Path(tmp) / (target.stem + ".spacy")), target)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    try:
        convert_corpus(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3])
    except ValueError as error:
        sys.exit(str(error))
