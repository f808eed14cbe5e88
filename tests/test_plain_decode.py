"""The compiled decode of short plain batches (ner/plain_decode.pyx) against decoder.decode's stages."""

import numpy
import pytest
import spacy
from conftest import train_nlp, trained_ner
from hypothesis import event, given, settings
from hypothesis import strategies as st
from spacy.tokens import Doc, Span
from spacy.training import Example

from spacy_bioner.ner.decoder import any_entity_annotated, decode, plain_decode

# Training words (the memory matches "Acme Corp" and "Alice Smith"), lone surnames, short forms and
# acronyms, salutations, line breaks, sentence ends, lower-case and new words.
WORDS = ["Alice", "Smith", "Acme", "Corp", "Paris", "Berlin", "works", "at", "the", "alice", "smith", "."]
WORDS += ["(", ")", "AF", "IDDM", "atrial", "fibrillation", "Hi", "Dear", ",", "\n", "NATO", "Oslo", "zebra"]

FEATURES = {
    "default features": None,
    "raw-text families": ["word", "window", "shape", "memory", "abbreviations", "sentences", "lowercase_docs"],
    "history and document families": ["word", "window", "shape", "document", "history"],
}
VARIANTS = {
    "as trained": {},
    "entity bias, no rules": {
        "confidence": {"entity_bias": 0.7},
        "rules": {"letters": False, "acronym_labels": False, "split_name_lists": False, "person_labels": []},
    },
    "bounded": {"rules": {"max_entity_length": 1}},
}


@pytest.fixture(scope="module", params=sorted(FEATURES))
def ner(request):
    return trained_ner(FEATURES[request.param], epochs=3)


batches = st.lists(st.lists(st.sampled_from(WORDS), max_size=12), min_size=1, max_size=3)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@settings(max_examples=60, deadline=None)
@given(batch=batches)
def test_the_compiled_decode_gives_the_stages_tags_or_hands_the_batch_on(ner, variant, batch):
    tagger = ner.with_settings(**VARIANTS[variant])
    docs = [Doc(ner.vocab, words=words) for words in batch]
    expected = decode(tagger, docs)
    compiled = plain_decode(tagger)
    assert compiled is not None  # no term lists, presets or probabilities
    tags, laid_out = compiled.run(docs)
    event("decoded in one call" if tags is not None else "handed on")
    if tags is not None:  # plain, and no step after Viterbi changes a tag
        assert tags.tolist() == expected.tags.tolist()
        assert not expected.retagged and not expected.layout.spaced
    else:  # decode goes on from the layout it was handed
        handed_on = decode(tagger, docs, laid_out)
        assert handed_on.tags.tolist() == expected.tags.tolist()
        assert handed_on.retagged == expected.retagged


def test_plain_sentences_are_decoded_in_one_call_and_others_handed_on():
    ner = train_nlp({"n_buckets": 4096}, epochs=5).get_pipe("bioner")
    compiled = plain_decode(ner)

    def tags_of(words):
        return compiled.run([Doc(ner.vocab, words=words)])[0]

    assert tags_of(["Bob", "works", "at", "Acme", "Corp", "in", "Berlin"]) is not None
    assert tags_of(["Bob", "works", "\n", "in", "Berlin"]) is None  # a whitespace token
    assert tags_of(["Dear", "Bob", ","]) is None  # a salutation for the letter rules
    # an entity of two words, with a bound of one: the bound may change a tag
    words = ["Alice", "Smith", "lives", "in", "Paris"]
    assert tags_of(words).tolist()[:2] == decode(ner, [Doc(ner.vocab, words=words)]).tags.tolist()[:2] != [0, 0]
    bounded = ner.with_settings(rules={"max_entity_length": 1})
    assert plain_decode(bounded).run([Doc(ner.vocab, words=words)])[0] is None
    assert compiled.run([Doc(ner.vocab, words=["Paris"] * 300)]) == (None, None)  # longer than a short batch


def test_the_compiled_decode_is_not_used_where_it_would_not_give_the_stages_tags():
    nlp = train_nlp({"n_buckets": 4096}, epochs=2)
    ner = nlp.get_pipe("bioner")
    doc = Doc(nlp.vocab, words=["Bob", "works", "in", "Berlin"])
    assert plain_decode(ner) is not None
    preset = Doc(nlp.vocab, words=["Bob", "works", "in", "Berlin"])
    preset.ents = [Span(preset, 3, 4, label="LOC")]
    assert any_entity_annotated([doc, preset]) and not any_entity_annotated([doc])  # presets: the trellis keeps them
    assert ("Berlin", "LOC") in [(e.text, e.label_) for e in ner(preset).ents]  # kept as set
    ner.add_patterns([{"label": "LOC", "pattern": "Berlin"}])
    assert plain_decode(ner) is None  # term lists: match columns and KB ids


def test_the_compiled_decode_follows_the_weights_and_settings():
    nlp = train_nlp({"n_buckets": 4096}, epochs=2)
    ner = nlp.get_pipe("bioner")
    made = plain_decode(ner)
    assert plain_decode(ner) is made
    nlp.update([Example.from_dict(nlp.make_doc("Dan lives in Rome"), {"entities": [(0, 3, "PER"), (13, 17, "LOC")]})])
    assert plain_decode(ner) is not made  # new weights
    biased = ner.with_settings(confidence={"entity_bias": 1.0})
    assert plain_decode(biased) is not plain_decode(ner)
    words = ["Dan", "lives", "in", "Rome"]
    tags = plain_decode(biased).run([Doc(nlp.vocab, words=words)])[0]
    assert tags is None or numpy.array_equal(tags, decode(biased, [Doc(nlp.vocab, words=words)]).tags)


def test_the_cached_decode_follows_every_change_it_is_made_from():
    settings = {"n_buckets": 4096, "features": ["word", "window", "shape", "memory"]}
    nlp = train_nlp(settings, epochs=2)
    ner = nlp.get_pipe("bioner")
    other = train_nlp(settings, epochs=4).get_pipe("bioner")
    docs = [nlp.make_doc("Dan lives in Rome"), nlp.make_doc("Alice Smith works at Acme Corp")]

    def agrees_with_the_stages():
        compiled = plain_decode(ner)
        assert compiled.made_from(*compiled.made_of)
        for doc in docs:
            tags = compiled.run([doc])[0]
            assert tags is None or tags.tolist() == decode(ner, [doc]).tags.tolist()
        return compiled

    made = agrees_with_the_stages()
    nlp.update([Example.from_dict(nlp.make_doc("Dan lives in Rome"), {"entities": [(0, 3, "PER"), (13, 17, "LOC")]})])
    assert agrees_with_the_stages() is not made  # new weights
    made = plain_decode(ner)
    ner.add_label("DRUG")
    assert agrees_with_the_stages() is not made  # a new label: more tags
    made = plain_decode(ner)
    ner.memory.fill([Doc(nlp.vocab, words=["Dan", "Rome"], ents=["B-PER", "B-LOC"])])
    assert agrees_with_the_stages() is not made  # another memory
    made = plain_decode(ner)
    ner.from_bytes(other.to_bytes())
    assert agrees_with_the_stages() is not made  # another model


def entities(doc):
    return [(ent.start, ent.end, ent.label_, ent.kb_id_) for ent in doc.ents]


@settings(max_examples=40, deadline=None)
@given(batch=batches)
def test_a_call_tags_as_predict_and_set_annotations_do(ner, batch):
    for words in batch + [["Paris", "Berlin", "."] * 100]:  # and one longer than a short batch
        called, predicted = Doc(ner.vocab, words=words), Doc(ner.vocab, words=words)
        assert ner(called) is called
        ner.set_annotations([predicted], ner.predict([predicted]))
        assert entities(called) == entities(predicted)


def test_a_call_hands_its_errors_to_the_error_handler():
    nlp = spacy.blank("en")
    ner = nlp.add_pipe("bioner")
    seen = []
    ner.set_error_handler(lambda name, component, docs, error: seen.append((name, len(docs), type(error))))
    ner(nlp.make_doc("Bob works"))  # not initialized
    assert seen == [("bioner", 1, ValueError)]
