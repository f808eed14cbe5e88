"""spacy-bioner: fast classical NER for spaCy."""

from .core.schemes import TagScheme
from .gazetteer.component import GazetteerComponent, make_gazetteer
from .gazetteer.matcher import Gazetteer
from .ner.component import BioNER, make_bioner

__all__ = ["BioNER", "Gazetteer", "GazetteerComponent", "TagScheme", "make_bioner", "make_gazetteer"]
__version__ = "0.3.0"
