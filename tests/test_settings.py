"""Settings live in the pipeline's config and win at load; the component's files keep only
what training fixed, and a config that contradicts it is refused with a clear error."""

import json

import numpy
import pytest
import spacy
from conftest import TRAIN_DATA, train_nlp

from spacy_bioner.core.schemes import OUTSIDE

TEXT = TRAIN_DATA[0][0]


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    path = tmp_path_factory.mktemp("model")
    nlp = train_nlp({"gazetteer": {"spans_key": "matches"}})
    nlp.get_pipe("bioner").add_patterns([{"label": "LOC", "pattern": "Paris", "id": "geo:paris"}])
    nlp.to_disk(path)
    return path


def test_the_component_files_hold_only_what_training_fixed(saved):
    cfg = json.loads((saved / "bioner" / "cfg").read_text(encoding="utf8"))
    assert set(cfg) == {
        "scheme",
        "transitions",
        "n_buckets",
        "features",
        "trainer",
        "case_sensitive",
        "labels",
        "longest_entity",
        "templates_version",
        "format_version",
    }
    assert cfg["transitions"] == "pairwise"  # "auto", with four labels


@pytest.mark.parametrize(
    "override, check",
    [
        (
            {"confidence": {"probabilities": True}},
            lambda doc: "bioner" in doc.spans and len(doc.spans["bioner"]) == len(doc.ents),
        ),
        (
            {"confidence": {"alternatives": 2, "alternatives_threshold": 1e-9, "temperature": 100.0}},
            lambda doc: 0 < len(doc.spans["bioner_alternatives"]) <= 2,
        ),
        ({"confidence": {"entity_bias": -1000.0}}, lambda doc: len(doc.ents) == 0),
        ({"gazetteer": {"spans_key": "other"}}, lambda doc: "other" in doc.spans and "matches" not in doc.spans),
        (
            {"gazetteer": {"mode": "ents"}},
            lambda doc: ("Paris", "LOC", "geo:paris") in [(e.text, e.label_, e.kb_id_) for e in doc.ents],
        ),
        ({"rules": {"person_labels": []}}, lambda doc: True),
    ],
)
def test_settings_given_at_load_win(saved, override, check):
    nlp = spacy.load(saved, config={"components": {"bioner": override}})
    ner = nlp.get_pipe("bioner")
    for block, fields in override.items():
        for key, value in fields.items():
            assert getattr(getattr(ner.settings, block), key) == value
    assert check(nlp(TEXT))


def test_the_saved_pipeline_tags_as_before_and_n_process_keeps_the_settings(saved):
    nlp = spacy.load(saved, config={"components": {"bioner": {"confidence": {"probabilities": True}}}})
    texts = [text for text, _ in TRAIN_DATA] * 3
    one = [[(e.text, e.label_) for e in doc.ents] + [len(doc.spans["bioner"])] for doc in nlp.pipe(texts)]
    two = [
        [(e.text, e.label_) for e in doc.ents] + [len(doc.spans["bioner"])]
        for doc in nlp.pipe(texts, n_process=2, batch_size=2)
    ]
    assert one == two


@pytest.mark.parametrize(
    "override, key",
    [
        ({"scheme": "BIO"}, "scheme"),
        ({"n_buckets": 1024}, "n_buckets"),
        ({"features": ["word", "window"]}, "features"),
        ({"trainer": {"@misc": "bioner.crf.v1"}}, "trainer"),
        ({"gazetteer": {"case_sensitive": True}}, "case_sensitive"),
    ],
)
def test_a_trained_setting_that_differs_is_refused(saved, override, key):
    with pytest.raises(ValueError, match=f"sets {key} = .* cannot change after training"):
        spacy.load(saved, config={"components": {"bioner": override}})


def test_a_component_made_without_a_config_takes_the_trained_settings(saved):
    from spacy_bioner.ner.component import BioNER

    nlp = spacy.load(saved)
    alone = BioNER(nlp.vocab).from_disk(saved / "bioner")
    assert alone.settings.trained_cfg() == nlp.get_pipe("bioner").settings.trained_cfg()
    assert alone.labels == nlp.get_pipe("bioner").labels


def test_training_settings_may_change_for_further_training(saved):
    nlp = spacy.load(saved, config={"components": {"bioner": {"trainer": {"margin": 0.0, "word_dropout": 0.0}}}})
    assert nlp.get_pipe("bioner").settings.trainer.margin == 0.0
    from conftest import make_examples

    losses = nlp.update(make_examples(nlp))
    assert "bioner" in losses


@pytest.mark.parametrize("trainer", ["bioner.perceptron.v1", "bioner.crf.v1"])
def test_the_trained_start_reads_as_after_an_outside_tag_unless_learned(trainer, tmp_path):
    # Every training sentence but one opens with an entity: the learned start weights favour one.
    tied = train_nlp({"trainer": {"@misc": trainer}})
    learned = train_nlp({"trainer": {"@misc": trainer, "start_transitions": "learned"}})
    for nlp in (tied, learned):
        assert [(e.text, e.label_) for e in nlp(TEXT).ents] == [("Alice Smith", "PER"), ("Paris", "LOC")]
    tied_start = tied.get_pipe("bioner").model.transitions()
    learned_start = learned.get_pipe("bioner").model.transitions()
    assert numpy.array_equal(tied_start[-1], tied_start[OUTSIDE])
    assert not numpy.array_equal(learned_start[-1], learned_start[OUTSIDE])
    tied.to_disk(tmp_path)
    assert numpy.array_equal(spacy.load(tmp_path).get_pipe("bioner").model.transitions(), tied_start)


def test_an_unknown_start_transitions_value_is_refused():
    with pytest.raises(Exception, match="start_transitions"):
        train_nlp({"trainer": {"@misc": "bioner.perceptron.v1", "start_transitions": "first"}})
