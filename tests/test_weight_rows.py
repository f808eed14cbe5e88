"""Emission weights kept as rows (WeightRows): the same scores as the dense matrix, saved and
loaded as rows, trained on again as the dense matrix, and refused when damaged."""

import shutil

import numpy
import pytest
import spacy
from conftest import reseal
from hypothesis import given, settings
from hypothesis import strategies as st
from spacy.training import Example
from test_model_files import saved  # noqa: F401 (the fixture)

from spacy_bioner.core.perceptron import DROPPED, AveragedPerceptron
from spacy_bioner.core.serialize import ModelFileError
from spacy_bioner.core.weight_rows import WeightRows


def sparse_matrix(rng, n_buckets, n_tags, share):
    """A float32 matrix whose rows are weights with probability `share`, else zeros."""
    dense = rng.normal(size=(n_buckets, n_tags)).astype(numpy.float32)
    dense[rng.random(n_buckets) >= share] = 0
    return dense


@settings(max_examples=40)
@given(seed=st.integers(0, 2**31), share=st.sampled_from([0.0, 0.1, 0.4, 0.9, 1.0]))
def test_rows_give_back_the_matrix(seed, share):
    rng = numpy.random.default_rng(seed)
    dense = sparse_matrix(rng, int(rng.integers(1, 200)), int(rng.integers(1, 9)), share)
    rows = WeightRows.of_dense(dense)
    assert numpy.array_equal(rows.dense(), dense)
    features = rng.integers(0, len(dense), size=7)
    assert numpy.array_equal(rows.take(features, 0), dense[features, 0])
    n_used = int(dense.any(axis=1).sum())
    # a mostly empty matrix keeps its used rows and one zero row; a mostly full one, its own rows
    assert len(rows.table) == (n_used + 1 if 2 * n_used <= len(dense) else len(dense))


@settings(max_examples=30)
@given(seed=st.integers(0, 2**31))
def test_scores_from_rows_equal_the_dense_sums(seed):
    rng = numpy.random.default_rng(seed)
    n_buckets, n_tags = 50, 5
    dense = sparse_matrix(rng, n_buckets, n_tags, 0.3)
    model = AveragedPerceptron(n_buckets, n_tags)
    model.load_averages(dense, numpy.zeros((n_tags + 1, n_tags), dtype=numpy.float32))
    features = rng.integers(0, n_buckets, size=(9, 4)).astype(numpy.uint32)
    features[rng.random(features.shape) < 0.2] = DROPPED
    expected = numpy.stack([dense[[f for f in row if f != DROPPED]].sum(axis=0) for row in features])
    assert len(model.scoring_rows().table) < n_buckets
    assert numpy.allclose(model.scores(features, averaged=True), expected, atol=1e-5)


def test_a_loaded_model_trains_on_from_its_rows():
    rng = numpy.random.default_rng(0)
    n_buckets, n_tags = 40, 3
    dense = sparse_matrix(rng, n_buckets, n_tags, 0.2)
    transition = numpy.zeros((n_tags + 1, n_tags), dtype=numpy.float32)
    from_rows, from_matrix = AveragedPerceptron(n_buckets, n_tags), AveragedPerceptron(n_buckets, n_tags)
    from_rows.load_arrays({**WeightRows.of_dense(dense).arrays(), "transition": transition})
    from_matrix.load_arrays({"emission": dense, "transition": transition})
    assert from_rows.n_buckets == n_buckets
    features = rng.integers(0, n_buckets, size=(6, 3)).astype(numpy.uint32)
    gold, guess = rng.integers(0, n_tags, size=6).astype(numpy.int32), numpy.zeros(6, dtype=numpy.int32)
    for model in (from_rows, from_matrix):
        model.update(features, gold, guess)
    assert numpy.array_equal(from_rows.emission, from_matrix.emission)
    assert numpy.array_equal(from_rows.averages()[0], from_matrix.averages()[0])


def test_rows_outside_the_table_are_refused():
    with pytest.raises(ValueError, match="outside the table of 2 rows"):
        WeightRows(numpy.array([0, 2], dtype=numpy.int32), numpy.zeros((2, 3), dtype=numpy.float32))


@pytest.mark.parametrize("pipeline,component", [("ner", "bioner"), ("parser", "bioner_tagger")])
def test_a_damaged_row_index_names_the_file(saved, tmp_path, pipeline, component):  # noqa: F811
    copy = tmp_path / pipeline
    shutil.copytree(saved / pipeline, copy)
    weights = copy / component / "weights.npz"
    arrays = dict(numpy.load(weights))
    assert "emission_index" in arrays and "emission" not in arrays  # saved as rows
    arrays["emission_index"] = arrays["emission_index"].copy()
    arrays["emission_index"][3] = len(arrays["emission_table"])
    numpy.savez(weights, **arrays)
    reseal(copy / component)
    with pytest.raises(ModelFileError, match=f"{component}/weights.npz.*'emission_index' points outside"):
        spacy.load(copy)


def test_a_loaded_pipeline_takes_a_new_label_and_trains_on(saved):  # noqa: F811
    """Loaded weights are rows; adding a label and updating makes them dense, and the new label is learned."""
    nlp = spacy.load(saved / "ner")
    nlp.get_pipe("bioner").add_label("DRUG")
    doc = nlp.make_doc("Aspirin helps Anna in Oslo .")
    example = Example.from_dict(doc, {"entities": [(0, 7, "DRUG")]})
    optimizer = nlp.resume_training()
    for _ in range(5):
        nlp.update([example], sgd=optimizer)
    assert ("Aspirin", "DRUG") in [(ent.text, ent.label_) for ent in nlp("Aspirin helps Anna in Oslo .").ents]
