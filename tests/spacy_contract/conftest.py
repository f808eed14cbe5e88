import pytest
from spacy.lang.en import English


@pytest.fixture
def en_vocab():
    """spaCy's test fixture of the same name: an English vocab."""
    return English().vocab
