"""Model files that cannot lie: every file a component saves is listed with its SHA-256 in a manifest
written last and checked on load; every setting read back is checked by type and range; errors name
the file and the field."""

import json
import random
import shutil

import numpy
import pytest
import spacy
from conftest import reseal, resealed_bytes, train_nlp
from test_parser_component import _examples as parser_examples

from spacy_bioner.core.serialize import MANIFEST, ModelFileError, read_files
from spacy_bioner.gazetteer.matcher import Gazetteer
from spacy_bioner.ner.settings import Settings


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A pipeline with a bioner (term lists with KB ids, the memory family), a tagger and a parser,
    and a bioner_gazetteer, saved small enough to flip every bit of."""
    path = tmp_path_factory.mktemp("saved")
    nlp = train_nlp({"n_buckets": 64}, epochs=2)
    nlp.get_pipe("bioner").add_patterns([{"label": "LOC", "pattern": "Oslo", "id": "place:oslo"}])
    gazetteer = nlp.add_pipe("bioner_gazetteer", last=True)
    gazetteer.add_patterns([{"label": "LOC", "pattern": "Oslo", "id": "place:oslo"}])
    nlp.to_disk(path / "ner")
    parser_nlp = spacy.blank("en")
    parser_nlp.add_pipe("bioner_tagger", config={"n_buckets": 64})
    parser_nlp.add_pipe("bioner_parser", config={"n_buckets": 64, "label_buckets": 64})
    examples = parser_examples(parser_nlp)
    parser_nlp.initialize(lambda: examples)
    parser_nlp.update(examples)
    parser_nlp.to_disk(path / "parser")
    return path


COMPONENTS = [("ner", "bioner"), ("ner", "bioner_gazetteer"), ("parser", "bioner_tagger"), ("parser", "bioner_parser")]


@pytest.mark.parametrize("pipeline,component", COMPONENTS)
def test_every_file_is_in_the_manifest_with_its_digest(saved, pipeline, component):
    directory = saved / pipeline / component
    files = read_files(directory)
    assert set(files) | {MANIFEST} == {file.name for file in directory.iterdir()}
    assert {"cfg"} <= set(files)


@pytest.mark.parametrize("pipeline,component", COMPONENTS)
def test_every_bit_flip_in_every_file_is_caught(saved, tmp_path, pipeline, component):
    directory = tmp_path / component
    shutil.copytree(saved / pipeline / component, directory)
    for file in sorted(directory.iterdir()):
        data = file.read_bytes()
        for bit in range(8 * len(data)):
            flipped = bytearray(data)
            flipped[bit // 8] ^= 1 << (bit % 8)
            file.write_bytes(bytes(flipped))
            with pytest.raises(ModelFileError, match=str(directory)):
                read_files(directory)
        file.write_bytes(data)
    read_files(directory)  # undamaged again


@pytest.mark.parametrize("pipeline,component", COMPONENTS)
def test_the_loader_refuses_a_flipped_bit_naming_the_file(saved, tmp_path, pipeline, component):
    copy = tmp_path / pipeline
    shutil.copytree(saved / pipeline, copy)
    rng = random.Random(0)
    for file in sorted((copy / component).iterdir()):
        data = file.read_bytes()
        flipped = bytearray(data)
        flipped[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        file.write_bytes(bytes(flipped))
        with pytest.raises(ModelFileError, match=file.name):
            spacy.load(copy)
        file.write_bytes(data)
    assert spacy.load(copy).pipe_names


def test_a_save_cut_short_does_not_load(saved, tmp_path):
    copy = tmp_path / "ner"
    shutil.copytree(saved / "ner", copy)
    (copy / "bioner" / MANIFEST).unlink()  # the manifest is written last: a save cut short has none
    with pytest.raises(ModelFileError, match=f"No {MANIFEST} in .*bioner"):
        spacy.load(copy)


def test_component_bytes_carry_their_digest(saved):
    nlp = spacy.load(saved / "ner")
    data = nlp.get_pipe("bioner").to_bytes()
    fresh = spacy.blank("en").add_pipe("bioner", config={"n_buckets": 64})
    rng = random.Random(1)
    for _ in range(200):
        flipped = bytearray(data)
        flipped[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        with pytest.raises(ModelFileError, match="bytes"):
            fresh.from_bytes(bytes(flipped))
    assert fresh.from_bytes(data).labels == nlp.get_pipe("bioner").labels


def test_a_component_directory_from_another_pipeline_is_refused(tmp_path):
    one = train_nlp(data=[("Alice Smith lives in Paris .", [(0, 11, "PER"), (21, 26, "LOC")])], epochs=1)
    other = train_nlp(data=[("Acme Corp hired Carol", [(0, 9, "ORG")])], epochs=1)
    one.to_disk(tmp_path / "one")
    other.to_disk(tmp_path / "other")
    shutil.rmtree(tmp_path / "one" / "bioner")
    shutil.copytree(tmp_path / "other" / "bioner", tmp_path / "one" / "bioner")
    with pytest.raises(ModelFileError, match="meta.json lists labels \\['PER', 'LOC'\\] .* saved with \\['ORG'\\]"):
        spacy.load(tmp_path / "one")


def _resealed_gazetteer(directory, change):
    """The component's gazetteer file with `change` made to its meta, sealed again as a writer would."""

    def changed(message):
        message["meta"] = json.dumps(change(json.loads(message["meta"])))

    (directory / "gazetteer").write_bytes(resealed_bytes((directory / "gazetteer").read_bytes(), changed))
    reseal(directory)


@pytest.mark.parametrize("field,value", [("labels", "LOC"), ("labels", ["LOC", ""]), ("case_sensitive", "false")])
def test_gazetteer_meta_of_the_wrong_type_is_named(saved, tmp_path, field, value):
    copy = tmp_path / "ner"
    shutil.copytree(saved / "ner", copy)
    _resealed_gazetteer(copy / "bioner", lambda meta: {**meta, field: value})
    with pytest.raises(ModelFileError, match=f"gazetteer.*'{field}' should be"):
        spacy.load(copy)


def test_a_compiled_term_file_is_sealed(tmp_path):
    nlp = spacy.blank("en")
    gazetteer = Gazetteer(nlp.tokenizer)
    gazetteer.add("Oslo", "LOC", "place:oslo")
    data = bytearray(gazetteer.to_bytes())
    data[data.index(b"place:oslo") + 5] ^= 0x17  # "place:oslo" -> "place-oslo": still a valid table
    with pytest.raises(ModelFileError, match="terms.*SHA-256"):
        Gazetteer(nlp.tokenizer).from_bytes(bytes(data), where="terms")


@pytest.mark.parametrize("key,value", [("write_ents", "false"), ("filter", "shortest"), ("spans_key", "")])
def test_gazetteer_component_settings_are_checked_on_load(saved, tmp_path, key, value):
    copy = tmp_path / "ner"
    shutil.copytree(saved / "ner", copy)
    cfg_path = copy / "bioner_gazetteer" / "cfg"
    cfg_path.write_text(json.dumps({**json.loads(cfg_path.read_text()), key: value}))
    reseal(cfg_path.parent)
    with pytest.raises(ModelFileError, match=f"bioner_gazetteer/cfg: '{key}': "):
        spacy.load(copy)


@pytest.mark.parametrize("change", [{"features": []}, {"n_buckets": "64"}, {"case_sensitive": "false"}])
def test_a_bad_setting_in_the_component_cfg_is_named(saved, tmp_path, change):
    copy = tmp_path / "ner"
    shutil.copytree(saved / "ner", copy)
    cfg_path = copy / "bioner" / "cfg"
    cfg_path.write_text(json.dumps({**json.loads(cfg_path.read_text()), **change}))
    reseal(cfg_path.parent)
    with pytest.raises(ModelFileError, match=f"Bad config in .*bioner/cfg: .*{next(iter(change))}"):
        spacy.load(copy)


@pytest.mark.parametrize("bias", [float("nan"), float("inf"), 1e6, -1e6])
def test_entity_bias_must_be_finite_and_in_range(bias):
    with pytest.raises(ValueError, match="entity_bias"):
        Settings().replace(confidence={"entity_bias": bias})


def test_a_config_that_contradicts_training_names_the_cfg_file(saved):
    with pytest.raises(ValueError, match="bioner/cfg.* n_buckets|n_buckets.*bioner/cfg"):
        spacy.load(saved / "ner", config={"components": {"bioner": {"n_buckets": 128}}})


def test_numpy_advice_to_unpickle_never_reaches_the_user(saved, tmp_path):
    copy = tmp_path / "ner"
    shutil.copytree(saved / "ner", copy)
    numpy.savez(copy / "bioner" / "weights.npz", emission=numpy.array([object()], dtype=object))
    reseal(copy / "bioner")
    with pytest.raises(ModelFileError, match="weights.npz: it holds pickled objects") as caught:
        spacy.load(copy)
    assert "allow_pickle" not in str(caught.value)


@pytest.mark.parametrize(
    "pipeline,component,key,value",
    [
        ("parser", "bioner_tagger", "margin", -1.0),
        ("parser", "bioner_tagger", "n_buckets", True),
        ("parser", "bioner_tagger", "labels", ["NN", ""]),
        ("parser", "bioner_parser", "explore", 1.5),
        ("parser", "bioner_parser", "pseudo_projective", "true"),
        ("parser", "bioner_parser", "max_length", 0),
        ("parser", "bioner_parser", "root_label", "nothing"),
    ],
)
def test_tagger_and_parser_settings_are_checked_by_type_and_range(saved, tmp_path, pipeline, component, key, value):
    copy = tmp_path / pipeline
    shutil.copytree(saved / pipeline, copy)
    cfg_path = copy / component / "cfg"
    cfg_path.write_text(json.dumps({**json.loads(cfg_path.read_text()), key: value}))
    reseal(cfg_path.parent)
    with pytest.raises(
        ModelFileError,
        match=f"Bad config in .*{component}/cfg: ('{key}|.*root_label 'nothing' is not one of the labels)",
    ):
        spacy.load(copy)
