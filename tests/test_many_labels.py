"""Many labels: sparse emission weights, factored transitions, and a component with 1,000 labels."""

import numpy
import pytest
import spacy
from conftest import reseal
from spacy.tokens import Doc, Span
from spacy.training import Example

from spacy_bioner.core.perceptron import DROPPED, AveragedPerceptron
from spacy_bioner.core.schemes import TagScheme
from spacy_bioner.core.sparse_perceptron import SparsePerceptron
from spacy_bioner.ner.featurizer import PACKED_ABOVE, match_columns


def trained_pair(factored: bool):
    """The same updates on dense and on sparse weights."""
    rng = numpy.random.default_rng(0)
    scheme = TagScheme("BILOU", ["A", "B", "C"])
    dense, sparse = AveragedPerceptron(50, scheme.n_tags), SparsePerceptron(50, scheme.n_tags)
    if factored:
        dense.factor(scheme.continuing())
        sparse.factor(scheme.continuing())
    for _ in range(30):
        features = rng.integers(0, 50, size=(6, 4)).astype(numpy.uint32)
        gold = scheme.from_spans([(0, 2, 0), (3, 4, 2)], 6)
        guess = scheme.from_spans([(1, 2, 1)], 6)
        for model in (dense, sparse):
            model.update(features, gold, guess)
    return dense, sparse, features


@pytest.mark.parametrize("factored", [False, True])
def test_sparse_weights_score_as_dense_ones(factored):
    dense, sparse, features = trained_pair(factored)
    for averaged in (False, True):
        numpy.testing.assert_allclose(
            sparse.scores(features, averaged=averaged), dense.scores(features, averaged=averaged), atol=1e-5
        )
        numpy.testing.assert_allclose(
            sparse.transitions(averaged=averaged), dense.transitions(averaged=averaged), atol=1e-5
        )
    converted = SparsePerceptron.from_dense(dense)
    numpy.testing.assert_allclose(converted.scores(features), dense.scores(features), atol=1e-5)
    loaded = SparsePerceptron(50, sparse.n_tags)
    loaded.load_arrays(sparse.to_arrays())
    numpy.testing.assert_allclose(loaded.scores(features), sparse.scores(features), atol=1e-6)


def test_long_sparse_rows_are_scored_dense_with_the_same_scores_until_the_next_update():
    rng = numpy.random.default_rng(1)
    scheme = TagScheme("BILOU", [f"L{i}" for i in range(20)])
    dense, sparse = AveragedPerceptron(40, scheme.n_tags), SparsePerceptron(40, scheme.n_tags)
    for _round in range(2):
        for _ in range(40):
            # feature 0 is on every token (a long row, as a bias's), the others rare (short rows)
            features = numpy.column_stack([numpy.zeros(5), rng.integers(1, 40, size=5)]).astype(numpy.uint32)
            gold, guess = rng.integers(0, scheme.n_tags, size=(2, 5)).astype(numpy.int32)
            for model in (dense, sparse):
                model.update(features, gold, guess)
        every = numpy.arange(40, dtype=numpy.uint32)[:, None]
        numpy.testing.assert_allclose(sparse.scores(every), dense.scores(every), atol=1e-6)
    kept = sparse._averaged("emission")
    assert kept["dense_of"][0] >= 0 and (kept["dense_of"][1:] < 0).sum() > 0


def test_match_columns_packed_keep_each_tokens_matches_in_label_order():
    n_labels = PACKED_ABOVE + 2
    ids = numpy.arange(n_labels * 5, dtype=numpy.uint32).reshape(n_labels, 5)  # codes 0-4
    ids[:, 0] = DROPPED  # code 0: no match
    codes = numpy.zeros((3, n_labels), dtype=numpy.uint8)
    codes[1, 1], codes[1, 3], codes[2, 0] = 2, 3, 1
    packed = match_columns(ids, codes, packed=True)
    assert packed.tolist() == [[DROPPED, DROPPED], [ids[1, 2], ids[3, 3]], [ids[0, 1], DROPPED]]
    full = match_columns(ids, codes, packed=False)
    assert full.shape == (3, n_labels) and [sorted(set(row) - {DROPPED}) for row in full.tolist()] == [
        sorted(set(row) - {DROPPED}) for row in packed.tolist()
    ]
    assert match_columns(ids, codes[:1], packed=True).shape == (1, 0)
    assert match_columns(ids[:4], codes[:, :4], packed=True).shape == (3, 4)  # few labels: a column each


def test_factored_transitions_add_up_and_refuse_learned_pairwise_weights():
    dense, _, _ = trained_pair(factored=True)
    exits, entries = dense.decoding_weights(averaged=True)[1]
    full = dense.transitions(averaged=True)
    scheme = TagScheme("BILOU", ["A", "B", "C"])
    begin_b = scheme.tag_id("B", 1)
    assert full[0, begin_b] == pytest.approx(exits[0] + entries[begin_b])
    pairwise, _, _ = trained_pair(factored=False)
    with pytest.raises(ValueError, match="before training"):
        pairwise.factor(scheme.continuing())


def labelled_docs(nlp, n_labels: int, n_docs: int):
    """Each label's name after a cue word: "see cue7 N7 today ."."""
    rng = numpy.random.default_rng(0)
    docs = []
    for _ in range(n_docs):
        label = int(rng.integers(n_labels))
        doc = Doc(nlp.vocab, words=["see", f"cue{label}", f"N{label}", "today", "."])
        doc.ents = [Span(doc, 2, 3, label=f"TYPE{label}")]
        docs.append(doc)
    return docs


def labelled_nlp(n_labels: int, n_docs: int, n_buckets: int, epochs: int):
    """A blank pipeline whose bioner has these labels, added one by one, trained on labelled_docs."""
    nlp = spacy.blank("en")
    ner = nlp.add_pipe("bioner", config={"n_buckets": n_buckets})
    for i in range(n_labels):
        ner.add_label(f"TYPE{i}")
    examples = [
        Example(Doc(nlp.vocab, words=[t.text for t in doc]), doc) for doc in labelled_docs(nlp, n_labels, n_docs)
    ]
    nlp.initialize(lambda: examples)
    for _ in range(epochs):
        nlp.update(examples)
    return nlp, ner


def test_a_thousand_labels_train_tag_and_survive_a_round_trip(tmp_path):
    nlp, ner = labelled_nlp(1000, 3000, 2**16, epochs=3)
    assert ner.settings.transitions == "auto" and ner.model.factored and not ner.model.dense
    tagged = nlp(Doc(nlp.vocab, words=["see", "cue123", "N123", "today", "."]))
    assert [(ent.text, ent.label_) for ent in tagged.ents] == [("N123", "TYPE123")]
    nlp.to_disk(tmp_path)
    loaded = spacy.load(tmp_path)
    again = loaded(Doc(loaded.vocab, words=["see", "cue123", "N123", "today", "."]))
    assert [(ent.text, ent.label_) for ent in again.ents] == [("N123", "TYPE123")]
    assert loaded.get_pipe("bioner").settings.transitions == "factored"


def test_labels_added_after_training_move_dense_weights_to_sparse_ones_with_the_same_scores():
    nlp = spacy.blank("en")
    ner = nlp.add_pipe("bioner", config={"n_buckets": 2**14, "transitions": "factored"})
    docs = labelled_docs(nlp, 4, 200)
    examples = [Example(Doc(nlp.vocab, words=[t.text for t in doc]), doc) for doc in docs]
    nlp.initialize(lambda: examples)
    nlp.update(examples)
    assert ner.model.dense
    probe = Doc(nlp.vocab, words=["see", "cue2", "N2", "today", "."])
    before = [(ent.text, ent.label_) for ent in ner(Doc(nlp.vocab, words=[t.text for t in probe])).ents]
    for i in range(4, 2000):
        ner.add_label(f"TYPE{i}")
    assert not ner.model.dense
    assert [(ent.text, ent.label_) for ent in ner(probe).ents] == before == [("N2", "TYPE2")]


def test_factored_transitions_with_the_crf_are_refused():
    nlp = spacy.blank("en")
    with pytest.raises(Exception, match="pairwise"):
        nlp.add_pipe("bioner", config={"transitions": "factored", "trainer": {"@misc": "bioner.crf.v1"}})


def test_a_config_that_asks_for_other_transitions_than_training_used_is_refused(tmp_path):
    nlp = spacy.blank("en")
    ner = nlp.add_pipe("bioner", config={"n_buckets": 2**12, "transitions": "factored"})
    docs = labelled_docs(nlp, 3, 30)
    nlp.initialize(lambda: [Example(Doc(nlp.vocab, words=[t.text for t in doc]), doc) for doc in docs])
    nlp.to_disk(tmp_path)
    assert ner.model.factored
    with pytest.raises(ValueError, match="transitions"):
        spacy.load(tmp_path, config={"components": {"bioner": {"transitions": "pairwise"}}})
    assert (
        spacy.load(tmp_path, config={"components": {"bioner": {"transitions": "auto"}}})
        .get_pipe("bioner")
        .model.factored
    )


def test_sparse_weights_round_trip_through_bytes_and_damaged_rows_are_named(tmp_path):
    nlp, ner = labelled_nlp(200, 400, 2**17, epochs=1)
    assert not ner.model.dense
    probe = ["see", "cue7", "N7", "today", "."]
    copy = spacy.blank("en").add_pipe("bioner", config={"n_buckets": 2**17})
    copy.from_bytes(ner.to_bytes())
    assert [(e.text, e.label_) for e in copy(Doc(copy.vocab, words=probe)).ents] == [
        (e.text, e.label_) for e in ner(Doc(nlp.vocab, words=probe)).ents
    ]
    nlp.to_disk(tmp_path)
    weights = tmp_path / "bioner" / "weights.npz"
    arrays = dict(numpy.load(weights))
    arrays["emission_tags"][:1] = 10**6  # a tag beyond the labels'
    numpy.savez_compressed(weights, **arrays)
    reseal(weights.parent)
    with pytest.raises(Exception, match="weights.npz.*sparse emission rows"):
        spacy.load(tmp_path)


def test_the_crf_refuses_labels_whose_dense_weights_would_not_fit():
    nlp = spacy.blank("en")
    ner = nlp.add_pipe("bioner", config={"trainer": {"@misc": "bioner.crf.v1"}})
    for i in range(100):
        ner.add_label(f"TYPE{i}")
    with pytest.raises(ValueError, match="crf trainer keeps dense weights"):
        nlp.initialize()
