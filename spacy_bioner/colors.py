"""displaCy colors for the labels of the corpora bioner is trained on.

spaCy's defaults know its own OntoNotes labels (PERSON, GPE, ...), not
CoNLL-2003's PER and MISC, the biomedical Chemical and Disease, or WNUT-17's
types, which would all render grey. Registered through the
`spacy_displacy_colors` entry point, so `displacy.render` picks them up.
"""

COLORS: dict[str, str] = {
    # CoNLL-2003 (LOC and ORG keep spaCy's colors)
    "PER": "#aa9cfc",
    "MISC": "#e4e7d2",
    # BC5CDR, NCBI-disease
    "CHEMICAL": "#7aecec",
    "DISEASE": "#ff9561",
    # WNUT-17
    "PERSON": "#aa9cfc",
    "LOCATION": "#ff9561",
    "CORPORATION": "#7aecec",
    "PRODUCT": "#bfeeb7",
    "CREATIVE-WORK": "#c887fb",
    "GROUP": "#feca74",
}


def displacy_colors() -> dict[str, str]:
    """The label colors, for displaCy's registry (it calls entry points that are functions)."""
    return dict(COLORS)
