from pathlib import Path

import pytest
import spacy
from hypothesis import settings
from hypothesis import strategies as st
from spacy.training import Example

ROOT = Path(__file__).resolve().parent.parent

# No test asserts how long anything takes: a slow machine, or tests run side by side, must fail none.
settings.register_profile("no_deadlines", deadline=None)
settings.load_profile("no_deadlines")

TRAIN_DATA = [
    ("Alice Smith lives in Paris .", [(0, 11, "PER"), (21, 26, "LOC")]),
    ("Bob works at Acme Corp in Berlin", [(0, 3, "PER"), (13, 22, "ORG"), (26, 32, "LOC")]),
    ("Acme Corp hired Carol Jones", [(0, 9, "ORG"), (16, 27, "PER")]),
    ("Nothing happened today .", []),
]


def make_examples(nlp, data=TRAIN_DATA):
    return [Example.from_dict(nlp.make_doc(text), {"entities": ents}) for text, ents in data]


def train_nlp(config=None, data=TRAIN_DATA, epochs=15, nlp=None):
    """A trained blank pipeline with a bioner of this config, or the given pipeline trained."""
    if nlp is None:
        nlp = spacy.blank("en")
        nlp.add_pipe("bioner", config=config or {})
    examples = make_examples(nlp, data)
    nlp.initialize(lambda: examples)
    for _ in range(epochs):
        nlp.update(examples)
    return nlp


def trained_ner(features=None, epochs=2):
    """A small trained bioner (4,096 buckets) with these feature families, or the default ones if None."""
    config = {"n_buckets": 4096}
    if features is not None:
        config["features"] = features
    return train_nlp(config, epochs=epochs).get_pipe("bioner")


def train_on_words(nlp, label, entities, others, epochs=10):
    """nlp trained on one-word docs: each of `entities` a `label` entity, each of `others` none."""
    data = [(word, [(0, len(word), label)]) for word in entities] + [(word, []) for word in others]
    return train_nlp(data=data, epochs=epochs, nlp=nlp)


def word_labels(nlp, words):
    """The entity labels nlp gives each word on its own."""
    return {word: [ent.label_ for ent in nlp(word).ents] for word in words}


def assert_clusters_carry_the_label(pipeline, family, label, unseen, others, tmp_path):
    """pipeline(features), trained with the word and a cluster `family`, tags each
    unseen word of `unseen` as `label` and each of `others` as nothing, also
    after saving and loading; the word alone does not."""
    expected = {**{word: [label] for word in unseen}, **{word: [] for word in others}}
    nlp = pipeline(["word", family])
    assert word_labels(nlp, expected) == expected
    assert word_labels(pipeline(["word"]), expected) != expected
    nlp.to_disk(tmp_path / "model")
    assert word_labels(spacy.load(tmp_path / "model"), expected) == expected


def short_form_nlp(
    short_form_labels: bool = True, acronym_labels: bool = True, term: str = "atrial fibrillation", features=None
):
    """A bioner (default features unless given) whose long form (`term`, "atrial fibrillation") is a
    fixed entity from its term list (gazetteer mode "ents") and whose tagger never saw its short form (AF)."""
    nlp = spacy.blank("en")
    config = {
        "gazetteer": {"mode": "ents"},
        "rules": {"short_form_labels": short_form_labels, "acronym_labels": acronym_labels},
    }
    if features is not None:
        config["features"] = features
    ner = nlp.add_pipe("bioner", config=config)
    ner.add_patterns([{"label": "DIS", "pattern": term}])
    text = f"Patients with {term} improved ."
    return train_nlp(data=[(text, [(14, 14 + len(term), "DIS")]), ("Nothing to see .", [])], epochs=5, nlp=nlp)


@pytest.fixture(scope="module")
def trained_nlp():
    return train_nlp()


def save_as_version_0_1(nlp, path, drop=()) -> None:
    """Save a pipeline as spacy-bioner 0.1 laid it out: the bioner settings as flat keys, in config.cfg
    and in the component's cfg; without the keys in `drop` (models saved before those settings existed)."""
    import json

    from spacy.util import load_config

    nlp.to_disk(path)
    ner = nlp.get_pipe("bioner")
    cfg = ner.settings.to_cfg()
    flat = {key: cfg[key] for key in ("scheme", "n_buckets", "features", "seed")}
    trainer = dict(cfg["trainer"])
    flat["trainer"] = trainer.pop("@misc").split(".")[1]
    trainer.pop("start_transitions", None)  # came later
    flat.update(trainer)
    confidence = {key: value for key, value in cfg["confidence"].items() if key != "@misc"}
    flat["confidence"] = confidence.pop("probabilities")
    flat.update(confidence)
    # The rules 0.1 had: the others came later.
    flat.update({key: cfg["rules"][key] for key in ("short_form_labels", "acronym_labels", "person_labels")})
    flat["gazetteer"] = {key: value for key, value in cfg["gazetteer"].items() if key != "@misc"}
    for key in drop:
        del flat[key]
    config = load_config(path / "config.cfg", interpolate=False)
    config["components"]["bioner"] = {"factory": "bioner", **flat, "scorer": {"@scorers": "spacy.ner_scorer.v1"}}
    config.to_disk(path / "config.cfg")
    saved = {
        **flat,
        "labels": list(ner.labels),
        "templates_version": json.loads((path / "bioner" / "cfg").read_text())["templates_version"],
    }
    (path / "bioner" / "cfg").write_text(json.dumps(saved), encoding="utf8")
    (path / "bioner" / "manifest.json").unlink()  # 0.1 recorded no checksums


def reseal(directory: Path) -> None:
    """Record a component directory's files as they are now in its manifest, as a writer that saved them
    so would have: for tests of the checks behind the digests (versions, shapes, settings)."""
    from spacy_bioner.core.serialize import MANIFEST, write_manifest

    write_manifest(
        directory,
        {file.name: file.read_bytes() for file in directory.iterdir() if file.is_file() and file.name != MANIFEST},
    )


def resealed_bytes(data: bytes, change) -> bytes:
    """Sealed bytes (component bytes, a gazetteer file) with `change` made to their message, sealed again with its
    digest."""
    import srsly

    from spacy_bioner.core.serialize import opened, seal

    message = srsly.msgpack_loads(opened(srsly.msgpack_loads(data)))
    change(message)
    return seal(srsly.msgpack_dumps(message))


def drawn_tags(draw, scheme, n: int, longest: int):
    """Valid tags of n tokens (a hypothesis draw): entities of up to `longest` tokens drawn as spans,
    some of them side by side."""
    spans, at = [], 0
    while at < n:
        length = draw(st.integers(1, longest))
        if at + length <= n and draw(st.booleans()):
            spans.append((at, at + length, draw(st.integers(0, len(scheme.labels) - 1))))
        at += length
    return scheme.from_spans(spans, n)
