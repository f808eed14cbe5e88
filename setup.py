"""Build the Cython kernels; all metadata lives in pyproject.toml."""

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

KERNELS = [
    "core.features",
    "core.word_scores",
    "core.weight_rows",
    "core.word_hashes",
    "core.perceptron",
    "core.sparse_perceptron",
    "core.decode",
    "core.marginals",
    "gazetteer.automaton",
    "gazetteer.token_codes",
    "gazetteer.spans",
    "gazetteer.doc_pass",
    "ner.definitions",
    "ner.document",
    "ner.entities",
    "ner.layout",
    "ner.list_parts",
    "ner.lone_surnames",
    "ner.passes",
    "ner.plain_decode",
    "ner.screens",
    "parser.transitions",
    "parser.state_features",
    "parser.greedy",
    "parser.beam",
    "parser.arc_writer",
    "parser.nodes",
    "tagger.sentence_starts",
    "tagger.tag_writer",
]

extensions = [
    Extension(
        f"spacy_bioner.{name}",
        [f"spacy_bioner/{name.replace('.', '/')}.pyx"],
        include_dirs=[numpy.get_include()],
        language="c++",
        extra_compile_args=["-O3"],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    )
    for name in KERNELS
]

setup(
    ext_modules=cythonize(
        extensions,
        compiler_directives={"language_level": "3", "boundscheck": False, "wraparound": False, "cdivision": True},
    )
)
