"""spaCy's own serialization and training tests that involve its ner (spacy/tests/serialize/, spacy/tests/training/,
spaCy 3.8), run on `bioner`. As in test_ner.py: assertions kept, internals not applicable, gaps xfail."""

import pickle
import random
import tempfile
from pathlib import Path

import spacy
from spacy.lang.en import English
from spacy.lang.it import Italian
from spacy.tokens import Span
from spacy.training import Example
from spacy.util import ensure_path, load_model, load_model_from_path
from spacy.vocab import Vocab

from spacy_bioner.ner.component import BioNER


def test_issue2482():
    """Test we can serialize and deserialize a blank NER or parser model."""
    nlp = Italian()
    nlp.add_pipe("bioner")
    b = nlp.to_bytes()
    Italian().from_bytes(b)


def test_issue4042():
    """Test that serialization of an EntityRuler before NER works fine."""
    nlp = English()
    ner = nlp.add_pipe("bioner")
    ner.add_label("SOME_LABEL")
    nlp.initialize()
    patterns = [
        {"label": "MY_ORG", "pattern": "Apple"},
        {"label": "MY_GPE", "pattern": [{"lower": "san"}, {"lower": "francisco"}]},
    ]
    ruler = nlp.add_pipe("entity_ruler", before="bioner")
    ruler.add_patterns(patterns)
    doc1 = nlp("What do you think about Apple ?")
    assert doc1.ents[0].label_ == "MY_ORG"
    with tempfile.TemporaryDirectory() as d:
        output_dir = ensure_path(d)
        nlp.to_disk(output_dir)
        nlp2 = load_model(output_dir)
        doc2 = nlp2("What do you think about Apple ?")
        assert doc2.ents[0].label_ == "MY_ORG"


def test_issue4042_bug2():
    """Test that serialization of an NER works fine when new labels were added."""
    nlp1 = English()
    ner1 = nlp1.add_pipe("bioner")
    ner1.add_label("SOME_LABEL")
    nlp1.initialize()
    doc1 = nlp1("What do you think about Apple ?")
    assert len(ner1.labels) == 1
    assert "SOME_LABEL" in ner1.labels
    apple_ent = Span(doc1, 5, 6, label="MY_ORG")
    doc1.ents = list(doc1.ents) + [apple_ent]
    ner1.add_label("MY_ORG")
    ner1(doc1)
    assert len(ner1.labels) == 2
    assert "SOME_LABEL" in ner1.labels
    assert "MY_ORG" in ner1.labels
    with tempfile.TemporaryDirectory() as d:
        output_dir = ensure_path(d)
        ner1.to_disk(output_dir)
        config = {}
        ner2 = nlp1.create_pipe("bioner", config=config)
        ner2.from_disk(output_dir)
        assert len(ner2.labels) == 2


def test_issue4725_1():
    """Ensure the pickling of the NER goes well (spaCy's update_with_oracle_cut_size is its parser's: a bioner setting
    instead)"""
    vocab = Vocab(vectors_name="test_vocab_add_vector")
    nlp = English(vocab=vocab)
    config = {"confidence": {"alternatives": 111}}
    ner = nlp.create_pipe("bioner", config=config)
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        with (tmp_path / "ner.pkl").open("wb") as file_:
            pickle.dump(ner, file_)
            assert ner.settings.confidence.alternatives == 111
        with (tmp_path / "ner.pkl").open("rb") as file_:
            ner2 = pickle.load(file_)
            assert ner2.settings.confidence.alternatives == 111


def test_serialize_parser_roundtrip_bytes(en_vocab):
    parser = BioNER(en_vocab)
    new_parser = BioNER(en_vocab)
    new_parser = new_parser.from_bytes(parser.to_bytes(exclude=["vocab"]))
    bytes_2 = new_parser.to_bytes(exclude=["vocab"])
    bytes_3 = parser.to_bytes(exclude=["vocab"])
    assert len(bytes_2) == len(bytes_3)
    assert bytes_2 == bytes_3


def test_serialize_parser_strings():
    vocab1 = Vocab()
    label = "FunnyLabel"
    assert label not in vocab1.strings
    parser1 = BioNER(vocab1)
    parser1.add_label(label)
    assert label in parser1.vocab.strings
    vocab2 = Vocab()
    assert label not in vocab2.strings
    parser2 = BioNER(vocab2)
    parser2 = parser2.from_bytes(parser1.to_bytes(exclude=["vocab"]))
    assert label in parser2.vocab.strings


def test_serialize_pipeline_disable_enable():
    nlp = English()
    nlp.add_pipe("bioner")
    nlp.add_pipe("tagger")
    nlp.disable_pipe("tagger")
    assert nlp.config["nlp"]["disabled"] == ["tagger"]
    config = nlp.config.copy()
    nlp2 = English.from_config(config)
    assert nlp2.pipe_names == ["bioner"]
    assert nlp2.component_names == ["bioner", "tagger"]
    assert nlp2.disabled == ["tagger"]
    assert nlp2.config["nlp"]["disabled"] == ["tagger"]
    with tempfile.TemporaryDirectory() as d:
        nlp2.to_disk(d)
        nlp3 = spacy.load(d)
    assert nlp3.pipe_names == ["bioner"]
    assert nlp3.component_names == ["bioner", "tagger"]
    with tempfile.TemporaryDirectory() as d:
        nlp3.to_disk(d)
        nlp4 = spacy.load(d, disable=["bioner"])
    assert nlp4.pipe_names == []
    assert nlp4.component_names == ["bioner", "tagger"]
    assert nlp4.disabled == ["bioner", "tagger"]
    with tempfile.TemporaryDirectory() as d:
        nlp.to_disk(d)
        nlp5 = spacy.load(d, exclude=["tagger"])
    assert nlp5.pipe_names == ["bioner"]
    assert nlp5.component_names == ["bioner"]
    assert nlp5.disabled == []


def test_issue999():
    """Test that adding entities and resuming training works passably OK."""
    TRAIN_DATA = [
        ["hey", []],
        ["howdy", []],
        ["hey there", []],
        ["hello", []],
        ["hi", []],
        ["i'm looking for a place to eat", []],
        ["i'm looking for a place in the north of town", [(31, 36, "LOCATION")]],
        ["show me chinese restaurants", [(8, 15, "CUISINE")]],
        ["show me chines restaurants", [(8, 14, "CUISINE")]],
    ]
    nlp = English()
    ner = nlp.add_pipe("bioner")
    for _, offsets in TRAIN_DATA:
        for _, _, label in offsets:
            ner.add_label(label)
    nlp.initialize()
    for _itn in range(20):
        random.shuffle(TRAIN_DATA)
        for raw_text, entity_offsets in TRAIN_DATA:
            example = Example.from_dict(nlp.make_doc(raw_text), {"entities": entity_offsets})
            nlp.update([example])
    with tempfile.TemporaryDirectory() as model_dir:
        nlp.to_disk(model_dir)
        nlp2 = load_model_from_path(Path(model_dir))
    for raw_text, entity_offsets in TRAIN_DATA:
        doc = nlp2(raw_text)
        ents = {(ent.start_char, ent.end_char): ent.label_ for ent in doc.ents}
        for start, end, label in entity_offsets:
            if (start, end) in ents:
                assert ents[(start, end)] == label
                break
            else:
                if entity_offsets:
                    raise Exception(ents)
