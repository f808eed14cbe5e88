"""spacy-bioner: fast classical NER for spaCy."""
from .pipeline import BioNER, make_bioner
from .schemes import TagScheme

__all__ = ["BioNER", "TagScheme", "make_bioner"]
__version__ = "0.1.0"
