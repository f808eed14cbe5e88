"""What the tagger looks at: word attributes and the feature templates over them.

A word attribute is a string computed once per word form (see `Lexicon`).
A template is a named conjunction of attributes at window offsets; adding a
template is one line. Templates are grouped into families that the config
switches on and off.
"""

import functools
from collections.abc import Sequence
from typing import Callable, Optional

from spacy.lang.lex_attrs import word_shape
from spacy.strings import get_string_id, hash_string  # type: ignore[attr-defined]  # strings.pyi omits hash_string

from .word_case import shipped_word_case
from .word_hashes import ASCII_ATTRIBUTES, ascii_word_hashes


def _short_shape(text: str) -> str:
    return _squeezed(word_shape(text))


def _squeezed(shape: str) -> str:
    return "".join(c for i, c in enumerate(shape) if i == 0 or c != shape[i - 1])


def _case(text: str) -> str:
    if text.istitle():
        return "title"
    if text.isupper():
        return "upper"
    if text.islower():
        return "lower"
    return "mixed" if any(c.isalpha() for c in text) else "none"


def _characters(text: str) -> str:
    if text.isdigit():
        return "digits"
    marks = [name for name, mark in (("hyphen", "-"), ("period", "."), ("apos", "'")) if mark in text]
    if any(c.isdigit() for c in text):
        marks.append("digit")
    if not any(c.isalnum() for c in text):
        marks.append("punct")
    return "+".join(marks) or "plain"


def _length(text: str) -> str:
    return str(min(len(text), 8))


# Saved weights are indexed by hashed template ids: bump this when a template
# or word attribute changes, so an older model is refused, not misread.
TEMPLATES_VERSION = 2  # 2: affixes of length 1-6 (were 1-4)

AFFIX_LENGTHS = range(1, 7)
WORD_ATTRIBUTES: list[tuple[str, Callable[[str], str]]] = [
    ("orth", lambda text: text),
    ("lower", str.lower),
    ("shape", word_shape),
    ("short_shape", _short_shape),
    *[(f"prefix{k}", lambda text, k=k: text[:k].lower()) for k in AFFIX_LENGTHS],
    *[(f"suffix{k}", lambda text, k=k: text[-k:].lower()) for k in AFFIX_LENGTHS],
    ("case", _case),
    ("characters", _characters),
    ("length", _length),
]
# The word's vector clusters, coarse to fine (vector_clusters.py); "none" without clusters or a vector.
CLUSTER_ATTRIBUTES = ["cluster_coarse", "cluster_mid", "cluster_fine"]
# How the word is usually written, whatever its case here (word_case.py): its usual case, frequency and name kind.
WORD_CASE_ATTRIBUTES = ["usual_case", "frequency", "name_kind"]
ATTRIBUTE_NAMES = [name for name, _ in WORD_ATTRIBUTES] + CLUSTER_ATTRIBUTES + WORD_CASE_ATTRIBUTES
if tuple(name for name, _ in WORD_ATTRIBUTES) != ASCII_ATTRIBUTES:  # word_hashes.pyx makes them in C
    raise ImportError("templates.WORD_ATTRIBUTES and word_hashes.ASCII_ATTRIBUTES must name the same attributes")
COLUMNS: dict[str, int] = {name: i for i, name in enumerate(ATTRIBUTE_NAMES)}
N_ATTRIBUTES = len(ATTRIBUTE_NAMES)
WordClusters = Callable[[str], Optional[Sequence[int]]]
WordCase = Callable[[str], tuple[str, str, str]]
WORD_CASE_FAMILIES = ("casing", "names")  # the families that read WORD_CASE_ATTRIBUTES


def attribute_values(
    text: str, clusters: Optional[WordClusters] = None, word_case: Optional[WordCase] = None
) -> list[str]:
    """Every word attribute of one word form, in column order.

    clusters: the word's cluster id at each level of CLUSTER_ATTRIBUTES, or None.
    word_case: the word's values of WORD_CASE_ATTRIBUTES (word_case.py), or None: "none", unread.
    """
    return [attr(text) for _, attr in WORD_ATTRIBUTES] + _looked_up(text, clusters, word_case)


def _looked_up(text: str, clusters: Optional[WordClusters], word_case: Optional[WordCase]) -> list[str]:
    """The values of CLUSTER_ATTRIBUTES and WORD_CASE_ATTRIBUTES, read from their tables."""
    return _looked_up_values(
        clusters(text) if clusters is not None else None, word_case(text) if word_case is not None else None
    )


def _looked_up_values(ids: Optional[Sequence[int]], case_values: Optional[tuple[str, str, str]]) -> list[str]:
    """The values of CLUSTER_ATTRIBUTES and WORD_CASE_ATTRIBUTES, from a word's cluster ids and case values."""
    clustered = ["none"] * len(CLUSTER_ATTRIBUTES) if ids is None else [str(i) for i in ids]
    return clustered + (["none"] * len(WORD_CASE_ATTRIBUTES) if case_values is None else list(case_values))


_PREFIXES = [f"{name}=" for name in ATTRIBUTE_NAMES]
_LOOKED_UP_PREFIXES = _PREFIXES[len(ASCII_ATTRIBUTES) :]


# The looked-up attributes take few values together (cluster ids, case classes): each combination is hashed
# once, and a new word pays one lookup for them, not a string and a hash per attribute.
@functools.lru_cache(maxsize=1 << 16)
def _looked_up_hashes(ids: Optional[tuple[int, ...]], case_values: Optional[tuple[str, str, str]]) -> list[int]:
    """The hashes of the looked-up attributes, "name=value", of a word with these cluster ids and case values.
    A cached list: callers extend their own lists with it, never change it."""
    return [
        hash_string(prefix + value) for prefix, value in zip(_LOOKED_UP_PREFIXES, _looked_up_values(ids, case_values))
    ]


# The attributes that say how a word is cased here. In lower-case text (the LOWERCASE_DOCS_FAMILY) they say
# nothing, and a word takes values of their own, "name@lowercase=value".
CASE_ATTRIBUTES = ("shape", "short_shape", "case")
_CASE_COLUMNS = [(COLUMNS[name], name, attribute) for name, attribute in WORD_ATTRIBUTES if name in CASE_ATTRIBUTES]


def word_attributes(
    text: str, clusters: Optional[WordClusters] = None, word_case: Optional[WordCase] = None, lowercase: bool = False
) -> list[int]:
    """The hashes of every word attribute of one word form (a row of the Lexicon's table): those of
    "name=value", as spaCy's StringStore hashes strings (no symbol has a "=").

    lowercase: the word is read in a lower-case doc: CASE_ATTRIBUTES hash "name@lowercase=value".
    """
    hashes = ascii_word_hashes(text)  # most words: WORD_ATTRIBUTES's hashes made in C
    if hashes is None:
        values = attribute_values(text, clusters, word_case)
        hashes = [hash_string(prefix + value) for prefix, value in zip(_PREFIXES, values)]
    else:
        ids = clusters(text) if clusters is not None else None
        hashes += _looked_up_hashes(
            None if ids is None else tuple(ids), word_case(text) if word_case is not None else None
        )
    if lowercase:
        for column, name, attribute in _CASE_COLUMNS:
            hashes[column] = hash_string(f"{name}@lowercase={attribute(text)}")
    return hashes


def word_case_of(features: Sequence[str]) -> Optional[WordCase]:
    """The word case table's lookup when a family reads it, else None: other pipelines skip the lookup."""
    return shipped_word_case().values_of if any(family in features for family in WORD_CASE_FAMILIES) else None


# Each family: template name -> ((attribute, offset), ...).
FAMILIES: dict[str, dict[str, tuple[tuple[str, int], ...]]] = {
    "word": {
        "lower[0]": (("lower", 0),),
        "orth[0]": (("orth", 0),),
    },
    "window": {
        "lower[-2]": (("lower", -2),),
        "lower[-1]": (("lower", -1),),
        "lower[+1]": (("lower", 1),),
        "lower[+2]": (("lower", 2),),
    },
    "shape": {
        "shape[-1]": (("shape", -1),),
        "shape[0]": (("shape", 0),),
        "shape[+1]": (("shape", 1),),
        "short_shape[0]": (("short_shape", 0),),
        "short_shape[-1..+1]": (("short_shape", -1), ("short_shape", 0), ("short_shape", 1)),
    },
    "affixes": {
        **{f"prefix{k}[0]": ((f"prefix{k}", 0),) for k in range(1, 7)},
        **{f"suffix{k}[0]": ((f"suffix{k}", 0),) for k in range(1, 7)},
    },
    "flags": {
        "case[-1]": (("case", -1),),
        "case[0]": (("case", 0),),
        "case[+1]": (("case", 1),),
        "characters[0]": (("characters", 0),),
        "length[0]": (("length", 0),),
    },
    "conjunctions": {
        "lower[-1]+lower[0]": (("lower", -1), ("lower", 0)),
        "lower[0]+lower[+1]": (("lower", 0), ("lower", 1)),
        "lower[-1]+shape[0]": (("lower", -1), ("shape", 0)),
        "shape[0]+lower[+1]": (("shape", 0), ("lower", 1)),
        "case[-1..+1]": (("case", -1), ("case", 0), ("case", 1)),
    },
    # Words three tokens away, and the next word joined with the one three on:
    # a coordination's head ("breast and ovarian cancer", "C6 or C7 deficiency").
    # It helps NCBI-disease and costs the other corpora a little.
    "far_window": {
        "lower[-3]": (("lower", -3),),
        "lower[+3]": (("lower", 3),),
        "lower[+1]+lower[+3]": (("lower", 1), ("lower", 3)),
    },
    # The word's clusters: from the table shipped with the package (word_clusters.py),
    # or, with `vectors` instead, from the pipeline's static vectors.
    "clusters": {
        "cluster_fine[-1]": (("cluster_fine", -1),),
        "cluster_fine[0]": (("cluster_fine", 0),),
        "cluster_fine[+1]": (("cluster_fine", 1),),
        "cluster_mid[0]": (("cluster_mid", 0),),
        "cluster_coarse[0]": (("cluster_coarse", 0),),
    },
    # How the word is usually cased and how common it is, alone and against its case here: evidence that
    # survives lower-case chat, title-case headlines and the capital that opens a sentence.
    "casing": {
        "usual_case[0]": (("usual_case", 0),),
        "usual_case[0]+case[0]": (("usual_case", 0), ("case", 0)),
        "usual_case[0]+case[-1]": (("usual_case", 0), ("case", -1)),
        "usual_case[-1]": (("usual_case", -1),),
        "usual_case[+1]": (("usual_case", 1),),
        "frequency[0]": (("frequency", 0),),
        "frequency[0]+usual_case[0]": (("frequency", 0), ("usual_case", 0)),
    },
    # Whether the word is a common first name or surname (US SSA and Census lists), here and beside it.
    "names": {
        "name_kind[-1]": (("name_kind", -1),),
        "name_kind[0]": (("name_kind", 0),),
        "name_kind[+1]": (("name_kind", 1),),
        "name_kind[0]+name_kind[+1]": (("name_kind", 0), ("name_kind", 1)),
        "name_kind[0]+usual_case[0]": (("name_kind", 0), ("usual_case", 0)),
    },
}
# Features from the whole doc rather than a window, and from a first decoding
# pass over it (see ner/document.pyx).
DOCUMENT_FAMILY = "document"
HISTORY_FAMILY = "history"
# Short forms defined in the doc read their long form (see ner/abbreviations.py).
ABBREVIATION_FAMILY = "abbreviations"
CLUSTERS_FAMILY = "clusters"
# The same templates as `clusters`, over clusters of the pipeline's static
# vectors (vector_clusters.py): it needs vectors, so it is off by default.
VECTORS_FAMILY = "vectors"
FAMILIES[VECTORS_FAMILY] = FAMILIES[CLUSTERS_FAMILY]
# How far any template reads from its token, either way.
WINDOW = max(abs(offset) for family in FAMILIES.values() for parts in family.values() for _, offset in parts)
# Matches of the training data's entities, jackknifed in training (see ner/memory.py).
MEMORY_FAMILY = "memory"
# Two families change how the templates above read raw text rather than add templates (ner/batch.py):
# windows stop at the end of a sentence, and a lower-case doc has case features of its own.
SENTENCES_FAMILY = "sentences"
LOWERCASE_DOCS_FAMILY = "lowercase_docs"
ALL_FAMILIES = [
    *FAMILIES,
    DOCUMENT_FAMILY,
    HISTORY_FAMILY,
    ABBREVIATION_FAMILY,
    MEMORY_FAMILY,
    SENTENCES_FAMILY,
    LOWERCASE_DOCS_FAMILY,
]
# names is opt-in: it helps headlines and forms, and costs WNUT-17 dev F1; vectors needs the pipeline's vectors
OPT_IN_FAMILIES = (VECTORS_FAMILY, "names")
DEFAULT_FAMILIES = [family for family in ALL_FAMILIES if family not in OPT_IN_FAMILIES]

# What each family reads, for the configuration reference (scripts/render_docs.py).
FAMILY_DESCRIPTIONS = {
    "word": "The word itself, as written and lowercased.",
    "window": "The lowercased words one and two tokens either side.",
    "shape": "The word's shape (Xxxx, dd-dd) and short shape, here and one token either side.",
    "affixes": "Prefixes and suffixes of length 1 to 6.",
    "flags": "The case pattern here and one token either side, the kinds of characters, and the length.",
    "conjunctions": (
        "The word with the previous and with the next word, a word with its neighbour's shape, "
        "the case of three tokens."
    ),
    "far_window": (
        "The words three tokens away, and the next word joined with the one three on (a coordination's head)."
    ),
    "clusters": "The word's GloVe 6B 50d cluster at 16, 64 and 256 clusters, from a table shipped with the package "
    "(no vectors needed); the fine cluster of the neighbours too.",
    "vectors": "The same templates over k-means clusters of the pipeline's own static vectors, fitted at initialize; "
    "needs vectors (`[initialize] vectors`), and replaces `clusters`.",
    DOCUMENT_FAMILY: "How the word's other mentions in the doc are cased, and the words around its first mention.",
    HISTORY_FAMILY: "A second decoding pass that sees the type the first pass gave the word's other mentions.",
    ABBREVIATION_FAMILY: (
        'A short form defined in the doc ("atrial fibrillation ( AF )") reads its long form\'s head word, '
        "and in the second pass its type."
    ),
    MEMORY_FAMILY: (
        "Matches of the training data's entities in the text, per label; jackknifed in training so the tagger "
        "learns how far to trust them."
    ),
    SENTENCES_FAMILY: (
        'Windows stop at the end of a sentence (after ".", "!" or "?"), not only at the doc\'s edges: the first words '
        "of any sentence read as those of a doc do, so that a doc's first sentence is not taken for a headline."
    ),
    LOWERCASE_DOCS_FAMILY: (
        "A doc typed in lower case reads the case templates (case, shape) with values of their own, learned from "
        "lower-case training text (the case variants): in such text a word's case says nothing of a name. A doc is "
        'read so when no word has a capital but the first letter of a sentence\'s first word and the pronoun "I".'
    ),
    "casing": (
        "How the word is usually cased in English text and how common it is (a table shipped with "
        "the package, from spaCy's word probabilities), alone and against its case here and the previous word's: "
        "evidence that lower-case, title-case and upper-case text and the first word of a sentence keep."
    ),
    "names": (
        "Off by default. Whether the word, and each neighbour, is a first name or surname, common or rare (US "
        "Social Security and Census lists, shipped with the package)."
    ),
}


# Attributes that name the word itself; dropping them in training makes the
# tagger learn from context and shape too, which is what unseen words have.
IDENTITY_ATTRIBUTES = {"orth", "lower", *[f"prefix{k}" for k in range(1, 7)], *[f"suffix{k}" for k in range(1, 7)]}


def identity_templates(families: Sequence[str]) -> list[int]:
    """Positions (in `compile_templates` order) of templates that read the word itself."""
    names = [parts for family in families if family in FAMILIES for parts in FAMILIES[family].values()]
    return [
        i + 1  # after the bias
        for i, parts in enumerate(names)
        if any(offset == 0 and attribute in IDENTITY_ATTRIBUTES for attribute, offset in parts)
    ]


def template_parts(families: Sequence[str]) -> list[tuple[str, tuple[tuple[str, int], ...]]]:
    """The templates of the chosen families by name, in `compile_templates` order (the bias first)."""
    return [("bias", ())] + [item for family in families if family in FAMILIES for item in FAMILIES[family].items()]


def compile_templates(families: Sequence[str]) -> list[tuple[int, list[tuple[int, int]]]]:
    """The templates of the chosen families as (seed, [(column, offset), ...]).

    The seed is the hash of the template's name, so switching a family off
    leaves every other feature's ids unchanged. A bias template always comes first.
    """
    unknown = [name for name in families if name not in ALL_FAMILIES]
    if unknown:
        raise ValueError(f"Unknown feature families {unknown}: choose from {ALL_FAMILIES}.")
    if CLUSTERS_FAMILY in families and VECTORS_FAMILY in families:
        raise ValueError(
            f"Feature families '{CLUSTERS_FAMILY}' and '{VECTORS_FAMILY}' are the same templates over two sources of "
            "word "
            f"clusters (the shipped table, the pipeline's vectors): choose one."
        )
    return [
        (get_string_id(f"template={name}"), [(COLUMNS[attribute], offset) for attribute, offset in parts])
        for name, parts in template_parts(families)
    ]
