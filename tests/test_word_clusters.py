"""The clusters feature family: the GloVe word cluster table shipped with the package."""

import numpy
import pytest
import spacy
from conftest import assert_clusters_carry_the_label, train_on_words

from spacy_bioner.core import word_clusters
from spacy_bioner.core.vector_clusters import LEVELS
from spacy_bioner.core.word_clusters import WordClusterTable, shipped_clusters

# In the shipped table each pair shares a fine cluster: drugs with drugs, verbs with verbs.
SEEN_DRUGS, UNSEEN_DRUGS = ["ibuprofen", "naproxen"], ["paracetamol", "warfarin"]
SEEN_VERBS, UNSEEN_VERBS = ["swims", "sings"], ["jumps"]


def test_the_shipped_table_covers_glove_and_ignores_case():
    table = shipped_clusters()
    assert len(table.keys) == 400_000 and table.values.shape == (400_000, len(LEVELS))
    for level, (_, n_clusters) in enumerate(LEVELS):
        assert table.values[:, level].max() < n_clusters
    assert table.word_ids("Paris") == table.word_ids("PARIS") == table.word_ids("paris") is not None
    assert table.word_ids("xq-not-a-word-zz") is None and table.word_ids("") is None
    for seen, unseen in ((SEEN_DRUGS, UNSEEN_DRUGS), (SEEN_VERBS[:1], UNSEEN_VERBS)):
        assert len({table.word_ids(word) for word in seen + unseen}) == 1


def test_a_table_saves_loads_and_refuses_bad_arrays(tmp_path):
    table = WordClusterTable.from_words(["Cat", "dog", "cat"], numpy.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]]))
    assert len(table.keys) == 2 and table.word_ids("CAT") == (1, 2, 3)  # the first of a duplicate is kept
    table.save(tmp_path / "table.npz")
    loaded = WordClusterTable.load(tmp_path / "table.npz")
    assert loaded.word_ids("dog") == (4, 5, 6) and loaded.word_ids("bird") is None
    with pytest.raises(ValueError, match="sorted and unique"):
        WordClusterTable(numpy.array([5, 1], dtype=numpy.uint64), numpy.zeros((2, 3)))
    with pytest.raises(ValueError, match=r"ids\[n, 3\]"):
        WordClusterTable(numpy.array([1, 5], dtype=numpy.uint64), numpy.zeros((2, 2)))
    numpy.savez(tmp_path / "objects.npz", keys=numpy.array([object()]), ids=numpy.zeros((1, 3)))
    with pytest.raises(ValueError, match="allow_pickle"):  # a data file must never run code
        WordClusterTable.load(tmp_path / "objects.npz")


def test_a_missing_table_is_named(monkeypatch, tmp_path):
    monkeypatch.setattr(word_clusters, "TABLE_PATH", tmp_path / "gone.npz")
    shipped_clusters.cache_clear()
    try:
        with pytest.raises(ValueError, match="gone.npz is missing"):
            shipped_clusters()
    finally:
        shipped_clusters.cache_clear()


def drug_pipeline(features):
    nlp = spacy.blank("en")
    nlp.add_pipe("bioner", config={"features": features})
    return train_on_words(nlp, "DRUG", SEEN_DRUGS, SEEN_VERBS)


def test_unseen_words_are_tagged_like_their_cluster(tmp_path):
    # No vectors are needed, at training or after loading.
    assert_clusters_carry_the_label(drug_pipeline, "clusters", "DRUG", UNSEEN_DRUGS, UNSEEN_VERBS, tmp_path)


def test_clusters_and_vectors_are_one_choice():
    nlp = spacy.blank("en")
    with pytest.raises(ValueError, match="choose one"):
        nlp.add_pipe("bioner", config={"features": ["word", "clusters", "vectors"]})
