"""The vectors feature family: clusters of the pipeline's static vectors as tagger features."""

import numpy
import pytest
import spacy
from conftest import assert_clusters_carry_the_label, train_on_words
from spacy.training import Example

from spacy_bioner.core.serialize import ModelFileError
from spacy_bioner.core.vector_clusters import LEVELS, VectorClusters

PLACES = ["Paris", "Lima", "Rome", "Tokyo", "Berlin", "Madrid"]
VERBS = ["Runs", "Sings", "Walks", "Talks", "Swims", "Reads"]
UNSEEN_PLACES = ["Oslo", "Cairo", "Quito"]
UNSEEN_VERBS = ["Jumps", "Eats", "Sleeps"]


def near(direction: int, rng, dim: int = 8) -> numpy.ndarray:
    vector = rng.normal(scale=0.05, size=dim).astype(numpy.float32)
    vector[direction] += 1
    return vector


def test_clusters_keep_distant_groups_apart():
    rng = numpy.random.default_rng(0)
    groups = [numpy.array([near(d, rng) for _ in range(30)]) for d in range(3)]
    clusters = VectorClusters.fit(numpy.concatenate(groups + [numpy.zeros((5, 8), numpy.float32)]), seed=0)
    assert clusters.parents.shape == (len(LEVELS) - 1, len(clusters.centroids))
    coarse = [{clusters.ids(v)[0] for v in group} for group in groups]
    assert not (coarse[0] & coarse[1] or coarse[0] & coarse[2] or coarse[1] & coarse[2])
    assert clusters.ids(None) is None and clusters.ids(numpy.zeros(8)) is None
    again = VectorClusters.fit(numpy.concatenate(groups), seed=0)
    assert numpy.array_equal(again.centroids, VectorClusters.fit(numpy.concatenate(groups), seed=0).centroids)


def test_saved_clusters_are_checked():
    with pytest.raises(ModelFileError, match="cluster_centroids"):
        VectorClusters.from_arrays({}, "here")
    with pytest.raises(ModelFileError, match="do not fit"):
        VectorClusters.from_arrays(
            {"cluster_centroids": numpy.ones((4, 3)), "cluster_parents": numpy.zeros((2, 5))}, "here"
        )
    with pytest.raises(ModelFileError, match="do not exist"):
        VectorClusters.from_arrays(
            {"cluster_centroids": numpy.ones((4, 3)), "cluster_parents": numpy.full((2, 4), 9)}, "here"
        )


def place_pipeline(features):
    rng = numpy.random.default_rng(1)
    nlp = spacy.blank("en")
    for word in PLACES:
        nlp.vocab.set_vector(word, near(0, rng))
    for word in VERBS:
        nlp.vocab.set_vector(word, near(1, rng))
    nlp.add_pipe("bioner", config={"features": features})
    train_on_words(nlp, "LOC", PLACES, VERBS)
    # Words that came after training, with vectors like the ones the tagger saw.
    for word in UNSEEN_PLACES:
        nlp.vocab.set_vector(word, near(0, rng))
    for word in UNSEEN_VERBS:
        nlp.vocab.set_vector(word, near(1, rng))
    return nlp


def test_unseen_words_are_tagged_like_their_cluster(tmp_path):
    assert_clusters_carry_the_label(place_pipeline, "vectors", "LOC", UNSEEN_PLACES, UNSEEN_VERBS, tmp_path)


def test_the_family_needs_vectors_and_warns_without_them(tmp_path):
    nlp = spacy.blank("en")
    nlp.add_pipe("bioner", config={"features": ["word", "vectors"]})
    examples = [Example.from_dict(nlp.make_doc("Paris"), {"entities": [(0, 5, "LOC")]})]
    with pytest.raises(ValueError, match="static vectors"):
        nlp.initialize(lambda: examples)
    trained = place_pipeline(["word", "vectors"])
    trained.get_pipe("bioner").to_disk(tmp_path / "bioner")
    bare = spacy.blank("en")
    bare.add_pipe("bioner", config={"features": ["word", "vectors"]}).from_disk(tmp_path / "bioner")
    with pytest.warns(UserWarning, match="no static vectors"):
        bare("Oslo")
    other = spacy.blank("en")
    other.vocab.set_vector("Oslo", numpy.ones(3, dtype=numpy.float32))
    other.add_pipe("bioner", config={"features": ["word", "vectors"]}).from_disk(tmp_path / "bioner")
    with pytest.raises(ValueError, match="vectors have 3 dimensions"):
        other("Oslo")


def test_explanations_name_the_cluster_features():
    from spacy_bioner.ner.explain import explain

    nlp = place_pipeline(["word", "shape", "affixes", "vectors"])
    ner = nlp.get_pipe("bioner")
    (entity,) = explain(ner, nlp.make_doc("Oslo"), top=10)["entities"]
    names = [name for name, _ in entity["tokens"][0]["features"]]
    assert any(name.startswith("cluster_fine[0]=") for name in names)
