"""spaCy's own tests of its `ner` (spacy/tests/parser/test_ner.py, spaCy 3.8), run on `bioner`.

Ported with `bioner` in place of `ner` and their assertions kept. A test that only reads
spaCy's internals (the transition system, beam internals, the thinc model) is marked not
applicable, with the reason. A test of a contract bioner does not meet yet is marked
xfail with the gap it shows, so that it reports as failing, not as passing.
"""

import random
import tempfile
from pathlib import Path

import pytest
from numpy.testing import assert_equal
from spacy import util
from spacy.attrs import ENT_IOB
from spacy.lang.en import English
from spacy.lang.it import Italian
from spacy.language import Language
from spacy.tokens import Span
from spacy.training import Example, iob_to_biluo

TRAIN_DATA = [
    ("Who is Shaka Khan?", {"entities": [(7, 17, "PERSON")]}),
    ("I like London and Berlin.", {"entities": [(7, 13, "LOC"), (18, 24, "LOC")]}),
]
INTERNALS = "reads spaCy's transition system (moves, BiluoPushDown), which bioner does not have"
BEAM = "tests spaCy's beam_ner and its beam internals"
BEAM_SETTINGS = "passes spaCy's beam_width and beam_density, settings bioner's component does not have"


@pytest.fixture
def neg_key():
    return "non_entities"


@pytest.mark.skip(reason=f"not applicable: {INTERNALS} (ner.moves.get_actions)")
def test_issue1967():
    pass


def test_issue2179():
    """Test that spurious 'extra_labels' aren't created when initializing NER."""
    nlp = Italian()
    ner = nlp.add_pipe("bioner")
    ner.add_label("CITIZENSHIP")
    nlp.initialize()
    nlp2 = Italian()
    nlp2.add_pipe("bioner")
    assert len(nlp2.get_pipe("bioner").labels) == 0
    # (spaCy resizes its thinc model's output layer here; bioner's weights take their shape from the data)
    nlp2.from_bytes(nlp.to_bytes())
    assert "extra_labels" not in nlp2.get_pipe("bioner").cfg
    assert nlp2.get_pipe("bioner").labels == ("CITIZENSHIP",)


def test_issue2385():
    """Test that IOB tags are correctly converted to BILUO tags."""
    tags1 = ("B-BRAWLER", "I-BRAWLER", "I-BRAWLER")
    assert iob_to_biluo(tags1) == ["B-BRAWLER", "I-BRAWLER", "L-BRAWLER"]
    tags2 = ("I-ORG", "I-ORG", "B-ORG")
    assert iob_to_biluo(tags2) == ["B-ORG", "L-ORG", "U-ORG"]
    tags3 = ("B-PERSON", "I-PERSON", "B-PERSON")
    assert iob_to_biluo(tags3) == ["B-PERSON", "L-PERSON", "U-PERSON"]
    tags4 = ("B-MULTI-PERSON", "I-MULTI-PERSON", "B-MULTI-PERSON")
    assert iob_to_biluo(tags4) == ["B-MULTI-PERSON", "L-MULTI-PERSON", "U-MULTI-PERSON"]


def test_issue2800():
    """Test issue that arises when too many labels are added to NER model."""
    nlp = English()
    train_data = [Example.from_dict(nlp.make_doc("One sentence"), {"entities": []})]
    entity_types = [str(i) for i in range(1000)]
    ner = nlp.add_pipe("bioner")
    for entity_type in list(entity_types):
        ner.add_label(entity_type)
    optimizer = nlp.initialize()
    for _i in range(20):
        losses = {}
        random.shuffle(train_data)
        for example in train_data:
            nlp.update([example], sgd=optimizer, losses=losses, drop=0.5)


@pytest.mark.skip(reason=f"not applicable: {INTERNALS} (ner.move_names, the model's resize_output)")
def test_issue3209():
    pass


@pytest.mark.skip(reason=f"not applicable: {INTERNALS} (ner.move_names)")
def test_labels_from_BILUO():
    pass


def test_issue4267():
    """Test that running an entity_ruler after ner gives consistent results"""
    nlp = English()
    ner = nlp.add_pipe("bioner")
    ner.add_label("PEOPLE")
    nlp.initialize()
    assert "bioner" in nlp.pipe_names
    doc1 = nlp("hi")
    assert doc1.has_annotation("ENT_IOB")
    for token in doc1:
        assert token.ent_iob == 2
    patterns = [{"label": "SOFTWARE", "pattern": "spacy"}]
    ruler = nlp.add_pipe("entity_ruler")
    ruler.add_patterns(patterns)
    assert "entity_ruler" in nlp.pipe_names
    assert "bioner" in nlp.pipe_names
    doc2 = nlp("hi")
    assert doc2.has_annotation("ENT_IOB")
    for token in doc2:
        assert token.ent_iob == 2


@pytest.mark.skip(reason=f"not applicable: {BEAM}")
def test_issue4313():
    pass


@pytest.mark.skip(reason=f"not applicable: {INTERNALS} (get_oracle_moves)")
def test_get_oracle_moves():
    pass


@pytest.mark.skip(reason=f"not applicable: {INTERNALS} (negative samples through the transition system)")
def test_negative_samples_two_word_input():
    pass


@pytest.mark.skip(reason=f"not applicable: {INTERNALS} (negative samples through the transition system)")
def test_negative_samples_three_word_input():
    pass


@pytest.mark.skip(reason=f"not applicable: {INTERNALS} (negative samples through the transition system)")
def test_negative_samples_U_entity():
    pass


def test_negative_sample_key_is_in_config(neg_key):
    nlp = English()
    ner = nlp.add_pipe("bioner", config={"incorrect_spans_key": neg_key})
    assert ner.cfg["incorrect_spans_key"] == neg_key


@pytest.mark.skip(
    reason=(
        f"not applicable: {INTERNALS} (moves.is_valid on a blocked token; the blocked behaviour itself is "
        "test_block_ner)"
    )
)
def test_accept_blocked_token():
    pass


def test_train_empty():
    """Test that training an empty text does not throw errors."""
    train_data = [
        ("Who is Shaka Khan?", {"entities": [(7, 17, "PERSON")]}),
        ("", {"entities": []}),
    ]
    nlp = English()
    train_examples = []
    for t in train_data:
        train_examples.append(Example.from_dict(nlp.make_doc(t[0]), t[1]))
    ner = nlp.add_pipe("bioner", last=True)
    ner.add_label("PERSON")
    nlp.initialize()
    for _itn in range(2):
        losses = {}
        batches = util.minibatch(train_examples, size=8)
        for batch in batches:
            nlp.update(batch, losses=losses)


def test_train_negative_deprecated():
    """Test that the deprecated negative entity format raises a custom error."""
    train_data = [
        ("Who is Shaka Khan?", {"entities": [(7, 17, "!PERSON")]}),
    ]
    nlp = English()
    train_examples = []
    for t in train_data:
        train_examples.append(Example.from_dict(nlp.make_doc(t[0]), t[1]))
    ner = nlp.add_pipe("bioner", last=True)
    ner.add_label("PERSON")
    nlp.initialize()
    for _itn in range(2):
        losses = {}
        batches = util.minibatch(train_examples, size=8)
        for batch in batches:
            with pytest.raises(ValueError):
                nlp.update(batch, losses=losses)


@pytest.mark.skip(reason=f"not applicable: {INTERNALS} (a second ner's moves overwriting O)")
def test_overwrite_token():
    pass


def test_empty_ner():
    nlp = English()
    ner = nlp.add_pipe("bioner")
    ner.add_label("MY_LABEL")
    nlp.initialize()
    doc = nlp("John is watching the news about Croatia's elections")
    result = ["O", "O", "O", "O", "O", "O", "O", "O", "O"]
    assert [token.ent_iob_ for token in doc] == result


def test_ruler_before_ner():
    """Test that an NER works after an entity_ruler: the second can add annotations"""
    nlp = English()
    patterns = [{"label": "THING", "pattern": "This"}]
    ruler = nlp.add_pipe("entity_ruler")
    untrained_ner = nlp.add_pipe("bioner")
    untrained_ner.add_label("MY_LABEL")
    nlp.initialize()
    ruler.add_patterns(patterns)
    doc = nlp("This is Antti Korhonen speaking in Finland")
    expected_iobs = ["B", "O", "O", "O", "O", "O", "O"]
    expected_types = ["THING", "", "", "", "", "", ""]
    assert [token.ent_iob_ for token in doc] == expected_iobs
    assert [token.ent_type_ for token in doc] == expected_types


@pytest.mark.skip(reason="not applicable: constructs spaCy's EntityRecognizer with its thinc model")
def test_ner_constructor():
    pass


def test_ner_before_ruler():
    """Test that an entity_ruler works after an NER: the second can overwrite O annotations"""
    nlp = English()
    untrained_ner = nlp.add_pipe("bioner", name="uner")
    untrained_ner.add_label("MY_LABEL")
    nlp.initialize()
    patterns = [{"label": "THING", "pattern": "This"}]
    ruler = nlp.add_pipe("entity_ruler")
    ruler.add_patterns(patterns)
    doc = nlp("This is Antti Korhonen speaking in Finland")
    expected_iobs = ["B", "O", "O", "O", "O", "O", "O"]
    expected_types = ["THING", "", "", "", "", "", ""]
    assert [token.ent_iob_ for token in doc] == expected_iobs
    assert [token.ent_type_ for token in doc] == expected_types


def test_block_ner():
    """Test functionality for blocking tokens so they can't be in a named entity"""
    nlp = English()
    nlp.add_pipe("blocker", config={"start": 2, "end": 5})
    untrained_ner = nlp.add_pipe("bioner")
    untrained_ner.add_label("MY_LABEL")
    nlp.initialize()
    doc = nlp("This is Antti L Korhonen speaking in Finland")
    expected_iobs = ["O", "O", "B", "B", "B", "O", "O", "O"]
    expected_types = ["", "", "", "", "", "", "", ""]
    assert [token.ent_iob_ for token in doc] == expected_iobs
    assert [token.ent_type_ for token in doc] == expected_types


def test_overfitting_IO():
    # (spaCy parametrizes its thinc model's use_upper, and checks it after loading: not applicable)
    nlp = English()
    ner = nlp.add_pipe("bioner")
    train_examples = []
    for text, annotations in TRAIN_DATA:
        train_examples.append(Example.from_dict(nlp.make_doc(text), annotations))
        for ent in annotations.get("entities"):
            ner.add_label(ent[2])
    optimizer = nlp.initialize()
    for _i in range(50):
        losses = {}
        nlp.update(train_examples, sgd=optimizer, losses=losses)
    assert losses["bioner"] < 0.00001
    test_text = "I like London."
    doc = nlp(test_text)
    ents = doc.ents
    assert len(ents) == 1
    assert ents[0].text == "London"
    assert ents[0].label_ == "LOC"
    with tempfile.TemporaryDirectory() as tmp_dir:
        nlp.to_disk(tmp_dir)
        nlp2 = util.load_model_from_path(Path(tmp_dir))
        doc2 = nlp2(test_text)
        ents2 = doc2.ents
        assert len(ents2) == 1
        assert ents2[0].text == "London"
        assert ents2[0].label_ == "LOC"
        ner2 = nlp2.get_pipe("bioner")
        ner2.add_label("RANDOM_NEW_LABEL")
        doc3 = nlp2(test_text)
        ents3 = doc3.ents
        assert len(ents3) == 1
        assert ents3[0].text == "London"
        assert ents3[0].label_ == "LOC"
    texts = [
        "Just a sentence.",
        "Then one more sentence about London.",
        "Here is another one.",
        "I like London.",
    ]
    batch_deps_1 = [doc.to_array([ENT_IOB]) for doc in nlp.pipe(texts)]
    batch_deps_2 = [doc.to_array([ENT_IOB]) for doc in nlp.pipe(texts)]
    no_batch_deps = [doc.to_array([ENT_IOB]) for doc in [nlp(text) for text in texts]]
    assert_equal(batch_deps_1, batch_deps_2)
    assert_equal(batch_deps_1, no_batch_deps)
    test_text = "I like London and London."
    doc = nlp.make_doc(test_text)
    doc.ents = [Span(doc, 2, 3, label="LOC", kb_id=1234)]
    ents = doc.ents
    assert len(ents) == 1
    assert ents[0].text == "London"
    assert ents[0].label_ == "LOC"
    assert ents[0].kb_id == 1234
    doc = nlp.get_pipe("bioner")(doc)
    ents = doc.ents
    assert len(ents) == 2
    assert ents[0].text == "London"
    assert ents[0].label_ == "LOC"
    assert ents[0].kb_id == 1234
    assert ents[1].text == "London"
    assert ents[1].label_ == "LOC"
    assert ents[1].kb_id == 0


@pytest.mark.skip(reason=f"not applicable: {BEAM}")
def test_beam_ner_scores():
    pass


@pytest.mark.skip(reason=f"not applicable: {BEAM}")
def test_beam_overfitting_IO():
    pass


@pytest.mark.skip(reason=f"not applicable: {BEAM_SETTINGS}; test_neg_annotation_without_beam_settings runs the rest")
def test_neg_annotation_with_beam_settings():
    pass


def test_neg_annotation_without_beam_settings(neg_key):
    """Check that the NER update works with a negative annotation that is a different label of the correct one,
    or partly overlapping, etc"""
    nlp = English()
    config = {"incorrect_spans_key": neg_key}
    ner = nlp.add_pipe("bioner", config=config)
    train_text = "Who is Shaka Khan?"
    neg_doc = nlp.make_doc(train_text)
    ner.add_label("PERSON")
    ner.add_label("ORG")
    example = Example.from_dict(neg_doc, {"entities": [(7, 17, "PERSON")]})
    example.reference.spans[neg_key] = [
        Span(example.reference, 2, 4, "ORG"),
        Span(example.reference, 2, 3, "PERSON"),
        Span(example.reference, 1, 4, "PERSON"),
    ]
    optimizer = nlp.initialize()
    for _i in range(2):
        losses = {}
        nlp.update([example], sgd=optimizer, losses=losses)


def test_neg_annotation_conflict(neg_key):
    nlp = English()
    config = {"incorrect_spans_key": neg_key}
    ner = nlp.add_pipe("bioner", config=config)
    train_text = "Who is Shaka Khan?"
    neg_doc = nlp.make_doc(train_text)
    ner.add_label("PERSON")
    ner.add_label("LOC")
    example = Example.from_dict(neg_doc, {"entities": [(7, 17, "PERSON")]})
    example.reference.spans[neg_key] = [Span(example.reference, 2, 4, "PERSON")]
    assert len(example.reference.ents) == 1
    assert example.reference.ents[0].text == "Shaka Khan"
    assert example.reference.ents[0].label_ == "PERSON"
    assert len(example.reference.spans[neg_key]) == 1
    assert example.reference.spans[neg_key][0].text == "Shaka Khan"
    assert example.reference.spans[neg_key][0].label_ == "PERSON"
    optimizer = nlp.initialize()
    for _i in range(2):
        losses = {}
        with pytest.raises(ValueError):
            nlp.update([example], sgd=optimizer, losses=losses)


@pytest.mark.skip(reason=f"not applicable: {BEAM}")
def test_beam_valid_parse():
    pass


@pytest.mark.skip(
    reason="not applicable: spaCy's ner warns when its lexeme-norm lookup tables are missing; bioner reads none"
)
def test_ner_warns_no_lookups():
    pass


@Language.factory("blocker")
class BlockerComponent1:
    def __init__(self, nlp, start, end, name="my_blocker"):
        self.start = start
        self.end = end
        self.name = name

    def __call__(self, doc):
        doc.set_ents([], blocked=[doc[self.start : self.end]], default="unmodified")
        return doc
