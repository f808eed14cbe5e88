"""spacy-bioner: fast classical NER for spaCy."""
from .gazetteer import Gazetteer
from .gazetteer_component import GazetteerComponent, make_gazetteer
from .pipeline import BioNER, make_bioner
from .schemes import TagScheme

__all__ = ["BioNER", "Gazetteer", "GazetteerComponent", "TagScheme", "make_bioner", "make_gazetteer"]
__version__ = "0.1.0"
