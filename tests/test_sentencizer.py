"""bioner_sentencizer against spaCy's own sentencizer, the oracle it must match."""

import pickle

import pytest
import spacy
from hypothesis import given, settings
from hypothesis import strategies as st
from spacy.pipeline import Sentencizer
from spacy.tokens import Doc

from spacy_bioner.tagger.sentencizer import BioSentencizer

VOCAB = spacy.blank("en").vocab  # with English lexeme flags: is_punct is part of the rule
# words, punctuation that ends sentences (ASCII and not), punctuation that does not, whitespace
WORDS = ["It", "rained", ".", "!", "?", "。", "...", '"', ")", ",", ";", "\n", "\n\n", "x.", "Dr."]


@st.composite
def docs(draw):
    words = draw(st.lists(st.sampled_from(WORDS), max_size=14))
    starts = draw(st.lists(st.sampled_from([None, True, False]), min_size=len(words), max_size=len(words)))
    return Doc(VOCAB, words=words, sent_starts=starts) if draw(st.booleans()) else Doc(VOCAB, words=words)


def _starts(doc: Doc) -> list:
    return doc.to_array("SENT_START").tolist()


@settings(max_examples=300)
@given(st.lists(docs(), min_size=1, max_size=4), st.booleans(), st.sampled_from([None, [".", "!"], [";", "\n"]]))
def test_sentence_starts_are_spacys(batch, overwrite, punct_chars):
    ours = BioSentencizer(punct_chars=punct_chars, overwrite=overwrite)
    spacys = Sentencizer(punct_chars=punct_chars, overwrite=overwrite)
    expected = [doc.copy() for doc in batch]
    spacys.set_annotations(expected, spacys.predict(expected))
    guesses = ours.predict(batch)
    assert [g.tolist() for g in guesses] == [list(map(bool, g)) for g in spacys.predict(batch)]
    piped = list(ours.pipe(doc.copy() for doc in batch))
    called = [ours(doc.copy()) for doc in batch]
    for made in (piped, called):
        assert [_starts(doc) for doc in made] == [_starts(doc) for doc in expected]


def test_a_pipeline_splits_text_as_spacys_does():
    text = 'It rained. " Then it stopped!!! Really? 雨。Yes... fine\n\nNext one'
    ours, spacys = spacy.blank("en"), spacy.blank("en")
    ours.add_pipe("bioner_sentencizer")
    spacys.add_pipe("sentencizer")
    assert [s.text for s in ours(text).sents] == [s.text for s in spacys(text).sents]
    assert len(list(ours(text).sents)) == 4


def test_settings_are_saved_and_read_back(tmp_path):
    nlp = spacy.blank("en")
    nlp.add_pipe("bioner_sentencizer", config={"punct_chars": [";"], "overwrite": True})
    nlp.to_disk(tmp_path)
    loaded = spacy.load(tmp_path).get_pipe("bioner_sentencizer")
    assert isinstance(loaded, BioSentencizer)
    assert loaded.punct_chars == {";"} and loaded.overwrite
    assert [s.text for s in spacy.load(tmp_path)("a ; b . c").sents] == ["a ;", "b . c"]
    restored = BioSentencizer().from_bytes(loaded.to_bytes())
    assert restored.punct_chars == {";"} and restored(Doc(VOCAB, words=["a", ";", "b"]))[2].is_sent_start
    assert pickle.loads(pickle.dumps(loaded)).punct_chars == {";"}


def test_its_punctuation_is_changed_by_assigning_not_in_place():
    sentencizer = BioSentencizer()
    with pytest.raises(AttributeError):
        sentencizer.punct_chars.add(";")  # type: ignore[attr-defined]
    sentencizer.punct_chars = {";"}
    doc = sentencizer(Doc(VOCAB, words=["a", ";", "b", ".", "c"]))
    assert [token.is_sent_start for token in doc] == [True, False, True, False, False]


def test_empty_docs_pass():
    nlp = spacy.blank("en")
    nlp.add_pipe("bioner_sentencizer")
    assert len(nlp("")) == 0
    assert [len(list(doc.sents)) for doc in nlp.pipe(["", "Yes. No"])] == [0, 2]
