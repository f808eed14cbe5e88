import numpy
import pytest
import spacy
from conftest import make_examples, resealed_bytes, train_nlp
from spacy.tokens import Doc

from spacy_bioner.core.serialize import ModelFileError
from spacy_bioner.ner.batch import lay_out
from spacy_bioner.ner.component import BioNER
from spacy_bioner.ner.explain import explain
from spacy_bioner.ner.featurizer import features as features_of
from spacy_bioner.ner.featurizer import match_ids
from spacy_bioner.ner.memory import FOLDS, EntityMemory, fold

# Firms that recur across docs, so each doc's fold of the memory still holds most of them.
FIRMS = ["Acme Corp", "Globex Inc", "Initech Ltd", "Umbrella Co"]
MEMORY_DATA = [
    (text, [(text.index(firm), text.index(firm) + len(firm), "ORG")])
    for i in range(12)
    for firm in [FIRMS[i % len(FIRMS)]]
    for text in [f"Report {i} : {firm} hired staff ."]
]


def reference_docs(nlp, data):
    return [example.reference for example in make_examples(nlp, data)]


def test_each_fold_sees_the_other_folds_entities_and_prediction_sees_all():
    nlp = spacy.blank("en")
    docs = reference_docs(nlp, MEMORY_DATA)
    memory = EntityMemory(nlp.tokenizer)
    memory.fill(docs)
    assert len({fold(doc) for doc in docs}) > 1  # the data spans several folds
    labels = ["PER", "ORG"]
    for doc in docs:
        own = {ent.text for ent in doc.ents}
        others = {ent.text for other in docs if fold(other) != fold(doc) for ent in other.ents}
        (rows,) = memory.match([doc], labels, folds=[fold(doc)])
        found = {doc[start:end].text for start, end, _, _ in rows.tolist()}
        assert found == own & others  # its own entities only where another fold has them too
        (rows,) = memory.match([doc], labels)
        assert [(doc[s:e].text, label) for s, e, label, _ in rows.tolist()] == [
            (text, 1) for text in own
        ]  # ORG is labels[1]


def test_memory_matches_whole_entities_case_insensitively():
    nlp = spacy.blank("en")
    memory = EntityMemory(nlp.tokenizer)
    memory.fill(reference_docs(nlp, [("Dr. Ann Lee met Zed Corp .", [(4, 11, "PER"), (16, 24, "ORG")])]))
    doc = nlp("ann lee and ZED CORP and Ann alone")
    (rows,) = memory.match([doc], ["ORG", "PER"])
    assert sorted((doc[s:e].text, label) for s, e, label, _ in rows.tolist()) == [("ZED CORP", 0), ("ann lee", 1)]
    (rows,) = memory.match([doc], ["PER"])  # a label the caller does not tag is left out
    assert [doc[s:e].text for s, e, _, _ in rows.tolist()] == ["ann lee"]


def test_a_batch_laid_out_matches_as_each_doc_does():
    nlp = spacy.blank("en")
    memory = EntityMemory(nlp.tokenizer)
    memory.fill(reference_docs(nlp, [("Dr. Ann Lee met Zed Corp .", [(4, 11, "PER"), (16, 24, "ORG")])]))
    docs = [nlp(text) for text in ["ann lee and ZED CORP", "nothing here", "", "Zed Corp , Ann Lee and Zed Corp"]]
    for labels in (["ORG", "PER"], ["PER"]):
        starts = numpy.cumsum([0] + [len(doc) for doc in docs])
        each = [rows + (start, start, 0, 0) for rows, start in zip(memory.match(docs, labels), starts)]
        laid_out = memory.match_laid_out(docs, labels)
        assert laid_out.tolist() == numpy.concatenate(each).tolist() and len(laid_out) == (5 if len(labels) == 2 else 2)


def test_trained_memory_weights_are_used_and_saved(tmp_path):
    nlp = train_nlp(data=MEMORY_DATA, epochs=10)
    ner = nlp.get_pipe("bioner")
    memory_ids = match_ids("memory", ner.labels, ner.settings.n_buckets)
    memory_ids = memory_ids[memory_ids != 0xFFFFFFFF]
    emission, _ = ner.model.averages()
    assert emission[memory_ids].any()  # training saw (jackknifed) matches and weighed them
    doc = nlp.make_doc("Yesterday Globex Inc hired staff .")
    assert numpy.isin(memory_ids, features_of(ner, lay_out(ner, [doc]), [ner.gazetteer.match(doc)])).any()
    nlp.to_disk(tmp_path / "model")
    assert (tmp_path / "model" / "bioner" / "memory").exists()
    loaded = spacy.load(tmp_path / "model")
    from_bytes = spacy.blank("en")
    from_bytes.add_pipe("bioner").from_bytes(ner.to_bytes())
    texts = ["Yesterday Globex Inc hired staff .", "Umbrella Co and Acme Corp merged ."]
    expected = [[(e.text, e.label_) for e in nlp(text).ents] for text in texts]
    for pipeline in (loaded, from_bytes):
        assert len(pipeline.get_pipe("bioner").memory) == len(ner.memory) == len(FIRMS)
        assert [[(e.text, e.label_) for e in pipeline(text).ents] for text in texts] == expected


def test_a_missing_memory_file_is_named(tmp_path):
    nlp = train_nlp(data=MEMORY_DATA, epochs=1)
    nlp.to_disk(tmp_path / "model")
    (tmp_path / "model" / "bioner" / "memory").unlink()
    with pytest.raises(ModelFileError, match="memory"):
        spacy.load(tmp_path / "model")


def test_a_corrupted_memory_file_is_named(tmp_path):
    nlp = train_nlp(data=MEMORY_DATA, epochs=1)
    nlp.to_disk(tmp_path / "model")
    (tmp_path / "model" / "bioner" / "memory").write_bytes(b"not a memory")
    with pytest.raises(ModelFileError, match="memory"):
        spacy.load(tmp_path / "model")


def test_bytes_without_the_memory_part_are_refused():
    ner = train_nlp(data=MEMORY_DATA, epochs=1).get_pipe("bioner")
    data = resealed_bytes(ner.to_bytes(), lambda message: message.pop("memory"))
    with pytest.raises(ModelFileError, match="memory"):
        spacy.blank("en").add_pipe("bioner").from_bytes(data)


def test_loading_a_model_without_the_family_forgets_the_memory():
    plain = train_nlp({"features": ["word", "window"]}, data=MEMORY_DATA, epochs=1)
    with_memory = train_nlp(data=MEMORY_DATA, epochs=1)
    ner = BioNER(with_memory.vocab).from_bytes(with_memory.get_pipe("bioner").to_bytes())  # made without a config
    assert len(ner.memory) == len(FIRMS)
    ner.from_bytes(plain.get_pipe("bioner").to_bytes())
    assert len(ner.memory) == 0


def test_without_the_family_there_is_no_memory(tmp_path):
    nlp = train_nlp({"features": ["word", "window"]}, data=MEMORY_DATA, epochs=1)
    assert len(nlp.get_pipe("bioner").memory) == 0
    nlp.to_disk(tmp_path / "model")
    assert not (tmp_path / "model" / "bioner" / "memory").exists()
    assert spacy.load(tmp_path / "model")("Acme Corp hired staff .") is not None


def test_explanations_name_the_memory_features():
    nlp = train_nlp({"features": ["word", "window", "memory"]}, data=MEMORY_DATA, epochs=5)
    doc = Doc(nlp.vocab, words="Report 99 : Initech Ltd hired staff .".split())
    found = explain(nlp.get_pipe("bioner"), doc)
    names = {name for entity in found["entities"] for token in entity["tokens"] for name, _ in token["features"]}
    assert any(name == "memory[ORG]" for name in names)


def test_folds_are_stable_and_bounded():
    nlp = spacy.blank("en")
    docs = [nlp.make_doc(f"Doc number {i} .") for i in range(50)]
    assert all(0 <= fold(doc) < FOLDS for doc in docs)
    assert [fold(doc) for doc in docs] == [fold(nlp.make_doc(doc.text)) for doc in docs]
