"""Convert one corpus file for the project: IOB/BILOU text or CoNLL-U to .spacy, or a .spacy file as it is.

Text files (CoNLL-2003 with -DOCSTART- lines, IOB1, IOB2 or BILOU tags in the
last column; the biomedical TSVs; WNUT-17) are normalized (see
normalize_conll.py) and converted by `spacy convert -c ner`; files that are
already .spacy are copied; .conllu treebanks go through `spacy convert -c
conllu` (SENTENCES_PER_DOC sentences per doc).

Usage: python scripts/convert_corpus.py INPUT OUTPUT.spacy SENTENCES_PER_DOC
"""
import shutil
import sys
import tempfile
from pathlib import Path

from spacy.cli.convert import convert

from normalize_conll import main as normalize


def convert_corpus(source: Path, target: Path, sentences_per_doc: int) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    if source.suffix == ".spacy":
        shutil.copyfile(source, target)
        return
    with tempfile.TemporaryDirectory() as tmp:
        if source.suffix == ".conllu":
            staged = Path(tmp) / (target.stem + ".conllu")
            shutil.copyfile(source, staged)
            convert(staged, Path(tmp), converter="conllu", n_sents=sentences_per_doc, file_type="spacy")
        else:
            normalized = Path(tmp) / (target.stem + ".iob")
            normalize(str(source), str(normalized))
            convert(normalized, Path(tmp), converter="ner", n_sents=sentences_per_doc, file_type="spacy")
        shutil.move(str(Path(tmp) / (target.stem + ".spacy")), target)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    convert_corpus(Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]))
