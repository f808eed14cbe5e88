import json
import subprocess
import sys

import numpy
import pytest
import spacy
from conftest import TRAIN_DATA, make_examples, reseal, train_nlp
from spacy.tokens import Doc, Span
from spacy.training import Example

from spacy_bioner import BioNER
from spacy_bioner.core.serialize import ModelFileError
from spacy_bioner.core.templates import DEFAULT_FAMILIES, LOWERCASE_DOCS_FAMILY
from spacy_bioner.ner.batch import lay_out
from spacy_bioner.ner.decoder import best_tags_over
from spacy_bioner.ner.featurizer import features as features_of
from spacy_bioner.ner.trellis import _edges_mask, allowed_tags, presets_forced, trellis_of

CRF = {"@misc": "bioner.crf.v1"}
HMM = {"@misc": "bioner.hmm.v1"}

TEXTS = [text for text, _ in TRAIN_DATA]


def ents(doc):
    return [(e.start_char, e.end_char, e.label_) for e in doc.ents]


@pytest.mark.parametrize("scheme", ["BIO", "BILOU"])
def test_overfitting_IO(scheme, tmp_path):
    nlp = train_nlp({"scheme": scheme})
    for text, gold in TRAIN_DATA:
        assert ents(nlp(text)) == gold
    nlp.to_disk(tmp_path)
    loaded = spacy.load(tmp_path)
    assert loaded.get_pipe("bioner").settings.scheme == scheme
    for text, _ in TRAIN_DATA:
        assert ents(loaded(text)) == ents(nlp(text))
    piped = list(loaded.pipe(TEXTS, batch_size=2))
    assert [ents(d) for d in piped] == [ents(loaded(t)) for t in TEXTS]


def test_factory_via_entry_point_in_new_interpreter():
    code = (
        "import sys, spacy\n"
        "assert 'spacy_bioner' not in sys.modules\n"
        "nlp = spacy.blank('en'); nlp.add_pipe('bioner'); print(nlp.pipe_names)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "['bioner']" in out.stdout


def test_n_process(trained_nlp):
    texts = TEXTS * 5
    single = [ents(d) for d in trained_nlp.pipe(texts)]
    multi = [ents(d) for d in trained_nlp.pipe(texts, n_process=2, batch_size=4)]
    assert multi == single


def test_bytes_round_trip(trained_nlp):
    ner = trained_nlp.get_pipe("bioner")
    data = ner.to_bytes()
    fresh = BioNER(trained_nlp.vocab).from_bytes(data)
    assert fresh.labels == ner.labels
    assert fresh.to_bytes() == data


def test_disk_round_trip(trained_nlp, tmp_path):
    ner = trained_nlp.get_pipe("bioner")
    ner.to_disk(tmp_path / "a")
    fresh = BioNER(trained_nlp.vocab).from_disk(tmp_path / "a")
    fresh.to_disk(tmp_path / "b")
    for name in ("cfg", "weights.npz"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_training_is_deterministic():
    first = train_nlp(epochs=5).get_pipe("bioner").to_bytes()
    second = train_nlp(epochs=5).get_pipe("bioner").to_bytes()
    assert first == second


@pytest.mark.parametrize("trainer", ["perceptron", "crf"])
def test_each_sentence_of_a_doc_is_a_training_step(trainer):
    # A two-sentence doc whose predicted side has no sentence starts (as spaCy's
    # corpus reader makes them) trains as its two sentences one after the other.
    config = {"features": ["word"], "trainer": {"@misc": f"bioner.{trainer}.v1", "word_dropout": 0.0}}
    sentences = [
        ("Bob lives in Paris .", [(0, 3, "PER"), (13, 18, "LOC")]),
        ("Acme hired Bob .", [(0, 4, "ORG"), (11, 14, "PER")]),
    ]
    separate, joined = spacy.blank("en"), spacy.blank("en")
    for nlp in (separate, joined):
        nlp.add_pipe("bioner", config=config)
    one_each = make_examples(separate, sentences)
    words = [token.text for eg in one_each for token in eg.reference]
    reference = Doc(
        joined.vocab,
        words=words,
        sent_starts=[i in (0, 5) for i in range(len(words))],
        ents=["B-PER", "O", "O", "B-LOC", "O", "B-ORG", "O", "B-PER", "O"],
    )
    together = Example(Doc(joined.vocab, words=words), reference)
    assert not together.predicted.has_annotation("SENT_START")
    separate.initialize(lambda: one_each)
    joined.initialize(lambda: [together])
    for _ in range(3):
        for example in one_each:
            separate.update([example])
        joined.update([together])
    for a, b in zip(separate.get_pipe("bioner").model.averages(), joined.get_pipe("bioner").model.averages()):
        numpy.testing.assert_allclose(a, b, rtol=1e-5)


def test_predictions_use_averaged_weights(trained_nlp):
    model = trained_nlp.get_pipe("bioner").model
    emission, _ = model.averages()
    assert not numpy.array_equal(emission, model.emission)


def test_update_resumes_after_from_disk(trained_nlp, tmp_path):
    trained_nlp.to_disk(tmp_path)
    nlp = spacy.load(tmp_path)
    before = nlp.get_pipe("bioner").to_bytes()
    text = "Dave visited Rome"
    example = Example.from_dict(nlp.make_doc(text), {"entities": [(0, 4, "PER"), (13, 17, "LOC")]})
    for _ in range(10):
        losses = nlp.update([example])
    assert "bioner" in losses
    assert ents(nlp(text)) == [(0, 4, "PER"), (13, 17, "LOC")]
    assert nlp.get_pipe("bioner").to_bytes() != before
    # What it knew before is not forgotten.
    assert ents(nlp(TRAIN_DATA[1][0])) == TRAIN_DATA[1][1]


def test_preset_entities_are_kept(trained_nlp):
    nlp = spacy.blank("en", vocab=trained_nlp.vocab)
    ruler = nlp.add_pipe("entity_ruler")
    ruler.add_patterns([{"label": "FOOD", "pattern": "Paris"}, {"label": "PER", "pattern": "Acme", "id": "x1"}])
    nlp.add_pipe("bioner", source=trained_nlp)
    doc = nlp("Alice Smith lives in Paris .")
    assert ("Paris", "FOOD") in [(e.text, e.label_) for e in doc.ents]
    assert ("Alice Smith", "PER") in [(e.text, e.label_) for e in doc.ents]
    doc = nlp("Bob works at Acme Corp in Berlin")
    acme = [e for e in doc.ents if e.start_char == 13]
    assert [(e.text, e.label_, e.ent_id_) for e in acme] == [("Acme", "PER", "x1")]


def test_no_entity_across_sentence_start(trained_nlp):
    words = ["Alice", "Smith", "lives", "in", "Paris", "."]
    doc = Doc(trained_nlp.vocab, words=words, sent_starts=[True, True, False, False, False, False])
    doc = trained_nlp.get_pipe("bioner")(doc)
    assert all(not (e.start < 1 < e.end) for e in doc.ents)


@pytest.mark.parametrize("paris_tag,changes", [(None, False), ("O", True)], ids=["missing", "outside"])
def test_missing_gold_is_not_trained_as_outside(paris_tag, changes):
    nlp = train_nlp()
    assert ("Paris", "LOC") in [(e.text, e.label_) for e in nlp("Alice Smith lives in Paris .").ents]
    model = nlp.get_pipe("bioner").model
    before = model.emission.copy()
    words = "Alice Smith lives in Paris .".split()
    reference = Doc(nlp.vocab, words=words, ents=["B-PER", "I-PER", "O", "O", paris_tag, "O"])
    losses = nlp.update([Example(Doc(nlp.vocab, words=words), reference)])
    # Missing gold is completed by the model's own best guess: no loss, no update.
    assert (losses["bioner"] > 0) == changes
    assert (not numpy.array_equal(before, model.emission)) == changes


@pytest.mark.parametrize(
    "words",
    [[], ["hello"], [" ", "\n", "Paris", "  "], ["Alice"] * 120_000],
    ids=["empty", "one-token", "whitespace", "120k-tokens"],
)
def test_odd_docs_are_tagged(trained_nlp, words):
    doc = Doc(trained_nlp.vocab, words=words)
    doc = trained_nlp.get_pipe("bioner")(doc)
    for ent in doc.ents:
        assert not ent[0].is_space


def test_initialize_adds_undeclared_labels():
    nlp = spacy.blank("en")
    ner = nlp.add_pipe("bioner")
    nlp.initialize(
        lambda: make_examples(nlp),
    )
    assert set(ner.labels) == {"PER", "LOC", "ORG"}
    nlp = spacy.blank("en")
    ner = nlp.add_pipe("bioner")
    ner.initialize(lambda: make_examples(nlp), nlp=nlp, labels=["DRUG"])
    assert ner.labels[0] == "DRUG" and set(ner.labels) == {"DRUG", "PER", "LOC", "ORG"}


def test_add_label_after_training_keeps_weights(trained_nlp):
    nlp = spacy.blank("en")
    nlp.add_pipe("bioner", source=trained_nlp)
    ner = nlp.get_pipe("bioner")
    assert ner.add_label("DRUG") == 1 and ner.add_label("DRUG") == 0
    for text, gold in TRAIN_DATA:
        assert ents(nlp(text)) == gold


def test_bad_config_values():
    nlp = spacy.blank("en")
    with pytest.raises(ValueError, match="n_buckets"):
        nlp.add_pipe("bioner", config={"n_buckets": 0})
    with pytest.raises(ValueError, match="scheme"):
        nlp.add_pipe("bioner", name="b2", config={"scheme": "IOE"})
    with pytest.raises(ValueError, match="feature families"):
        nlp.add_pipe("bioner", name="b3", config={"features": ["nonsense"]})
    with pytest.raises(ValueError, match="margin"):
        nlp.add_pipe("bioner", name="b4", config={"trainer": {"margin": -1.0}})
    with pytest.raises(ValueError, match="word_dropout"):
        nlp.add_pipe("bioner", name="b5", config={"trainer": {"word_dropout": 1.0}})


def test_missing_model_file_is_named(trained_nlp, tmp_path):
    trained_nlp.to_disk(tmp_path)
    (tmp_path / "bioner" / "weights.npz").unlink()
    with pytest.raises(ModelFileError, match="weights.npz"):
        spacy.load(tmp_path)


@pytest.mark.parametrize("name", ["cfg", "weights.npz"])
def test_corrupted_model_file_is_named(trained_nlp, tmp_path, name):
    trained_nlp.to_disk(tmp_path)
    path = tmp_path / "bioner" / name
    data = bytearray(path.read_bytes())
    path.write_bytes(bytes(data[: len(data) // 2]))
    with pytest.raises(ModelFileError, match=name):
        spacy.load(tmp_path)


def test_pickled_weights_are_refused(trained_nlp, tmp_path):
    trained_nlp.to_disk(tmp_path)
    arrays = {"emission": numpy.array([object()], dtype=object), "transition": numpy.zeros(1)}
    numpy.savez(tmp_path / "bioner" / "weights.npz", **arrays)
    with pytest.raises(ModelFileError, match="weights.npz"):
        spacy.load(tmp_path)


def test_wrong_shape_is_refused(trained_nlp, tmp_path):
    trained_nlp.to_disk(tmp_path)
    path = tmp_path / "bioner" / "weights.npz"
    with numpy.load(path) as archive:
        arrays = dict(archive)
    arrays["transition"] = arrays["transition"][:-1]
    numpy.savez(path, **arrays)
    with pytest.raises(ModelFileError, match="Damaged model file .*weights.npz"):
        spacy.load(tmp_path)
    reseal(path.parent)
    with pytest.raises(ModelFileError, match="transition"):
        spacy.load(tmp_path)


def test_score_reports_ents_f(trained_nlp):
    scores = trained_nlp.evaluate(make_examples(trained_nlp))
    assert scores["ents_f"] == 1.0
    assert set(scores["ents_per_type"]) == {"PER", "LOC", "ORG"}


@pytest.mark.parametrize("tokens_per_pass", [1, 7, 2**15])
def test_docs_tagged_together_are_tagged_as_alone(trained_nlp, monkeypatch, tokens_per_pass):
    from spacy_bioner.ner import batch

    monkeypatch.setattr(batch, "TOKENS_PER_PASS", tokens_per_pass)
    ner = trained_nlp.get_pipe("bioner")
    texts = TEXTS + ["", "  \n ", "Paris", "Alice Smith lives in Paris . Bob works at Acme Corp"]
    docs = [trained_nlp.make_doc(text) for text in texts]
    docs[-1][5].is_sent_start = True  # a sentence start inside a doc
    preset = trained_nlp.make_doc("Carol Jones met Alice Smith")
    preset.set_ents([preset.char_span(0, 11, label="ORG")])
    docs.append(preset)
    together = [ents(doc) for doc in ner.pipe([doc.copy() for doc in docs], batch_size=len(docs))]
    alone = [ents(ner(doc.copy())) for doc in docs]
    assert together == alone
    assert together[-1][0] == (0, 11, "ORG")
    assert any(together)


def test_model_with_other_feature_templates_is_refused(trained_nlp, tmp_path):
    trained_nlp.to_disk(tmp_path)
    cfg_path = tmp_path / "bioner" / "cfg"
    cfg = json.loads(cfg_path.read_text())
    del cfg["templates_version"]  # as written before templates were versioned
    cfg_path.write_text(json.dumps(cfg))
    reseal(cfg_path.parent)
    with pytest.raises(ModelFileError, match="feature templates version 1.*retrain"):
        spacy.load(tmp_path)


def test_displacy_shows_bioner_entities_in_their_colors():
    code = (
        "import spacy\nfrom spacy import displacy\n"
        "from spacy.tokens import Doc\n"
        "nlp = spacy.blank('en')\n"
        "doc = Doc(nlp.vocab, words=['Alice', 'met', 'aspirin'], ents=['B-PER', 'O', 'B-Chemical'])\n"
        "print(displacy.render(doc, style='ent'))"
    )
    html = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "background: #aa9cfc" in html and "background: #7aecec" in html


def test_confidences_go_to_a_span_group(tmp_path):
    nlp = train_nlp({"confidence": {"probabilities": True}})
    doc = nlp(TRAIN_DATA[1][0])
    group = doc.spans["bioner"]
    assert [(s.start, s.end, s.label_) for s in group] == [(e.start, e.end, e.label_) for e in doc.ents]
    scores = group.attrs["scores"]
    assert len(scores) == len(group) and all(0.5 < p <= 1.0 for p in scores)  # trained on this very sentence
    assert [ent._.bioner_confidence for ent in doc.ents] == scores
    assert doc[0:2]._.bioner_confidence is None  # not an entity the component scored
    nlp.to_disk(tmp_path)
    assert spacy.load(tmp_path)(TRAIN_DATA[1][0]).spans["bioner"].attrs["scores"] == pytest.approx(scores)


def test_entity_bias_trades_precision_for_recall(trained_nlp):
    ner = trained_nlp.get_pipe("bioner")
    text = "Nothing happened today in the city ."
    counts = {}
    # biases far beyond any score the tiny model gives a token (its margin is 100 per token)
    for bias in (-1000.0, 0.0, 1000.0):
        counts[bias] = len(ner.with_settings(confidence={"entity_bias": bias})(trained_nlp.make_doc(text)).ents)
    assert counts[-1000.0] == 0 and counts[1000.0] > counts[0.0]


def test_alternatives_are_likely_spans_other_than_the_entities():
    nlp = train_nlp({"confidence": {"alternatives": 3, "alternatives_threshold": 1e-6, "temperature": 50.0}})
    doc = nlp("Carol Jones flew to Berlin")
    group = doc.spans["bioner_alternatives"]
    entities = {(e.start, e.end, e.label_) for e in doc.ents}
    assert 0 < len(group) <= 3 and not entities & {(s.start, s.end, s.label_) for s in group}
    scores = group.attrs["scores"]
    assert scores == sorted(scores, reverse=True) and all(1e-6 <= p <= 1 for p in scores)


def test_crf_trainer_learns_and_round_trips(tmp_path):
    nlp = train_nlp({"trainer": CRF | {"learning_rate": 0.5}}, epochs=30)
    for text, gold in TRAIN_DATA:
        assert ents(nlp(text)) == gold
    losses = nlp.update(make_examples(nlp))
    # -log P(gold), summed over the examples (0 up to float rounding): the gold is likely now
    assert -1e-4 < losses["bioner"] < 1.0
    nlp.to_disk(tmp_path)
    loaded = spacy.load(tmp_path)
    assert loaded.get_pipe("bioner").settings.trainer.name == "crf"
    assert [ents(loaded(t)) for t in TEXTS] == [ents(nlp(t)) for t in TEXTS]


def test_hmm_trainer_counts_and_refuses_history(tmp_path):
    features = ["word", "window", "shape", "affixes", "flags", "conjunctions", "document"]
    nlp = train_nlp({"trainer": HMM, "features": features}, epochs=1)
    for text, gold in TRAIN_DATA:
        assert ents(nlp(text)) == gold
    nlp.to_disk(tmp_path)
    loaded = spacy.load(tmp_path)
    assert [ents(loaded(t)) for t in TEXTS] == [ents(nlp(t)) for t in TEXTS]
    with pytest.raises(ValueError, match="loaded from its log-probabilities"):
        loaded.update(make_examples(loaded))
    with pytest.raises(ValueError, match="'history' needs a first decoding pass"):
        spacy.blank("en").add_pipe("bioner", config={"trainer": HMM})


def test_crf_l2_keeps_weights_smaller():
    norms = {}
    for l2 in (0.0, 0.1):
        nlp = train_nlp({"trainer": CRF | {"learning_rate": 0.5, "l2": l2}}, epochs=10)
        emission, _ = nlp.get_pipe("bioner").model.averages()
        norms[l2] = float(numpy.abs(emission).sum())
    assert norms[0.1] < norms[0.0]


def wrapped_prose(nlp):
    """The pipeline's bioner with single line breaks transparent, as in hard-wrapped prose: these short test
    docs would read as lists under the default "short_lines"."""
    return nlp.get_pipe("bioner").with_settings(rules={"line_breaks": "blank_or_indented"})


def test_whitespace_tokens_change_no_word_window_or_entity(trained_nlp):
    """A word's context features and scores read past whitespace tokens (wrapped prose's line breaks),
    so they are those it has without them, and decoding runs over the words, so a
    line break inside an entity leaves it whole (line_breaks "blank_or_indented", as in wrapped prose)."""
    ner = wrapped_prose(trained_nlp)
    words = "Bob works at Acme Corp in Berlin".split()
    spaced_words = ["\n", "Bob", "works", "\n", "at", "Acme", "\n", "Corp", "  ", "in", "Berlin", "\n"]
    positions = [1, 2, 4, 5, 7, 9, 10]
    plain = Doc(trained_nlp.vocab, words=words)
    spaced = Doc(trained_nlp.vocab, words=spaced_words, spaces=[False] * len(spaced_words))
    plain_features = features_of(ner, lay_out(ner, [plain]), [ner.gazetteer.match(plain)])
    spaced_features = features_of(ner, lay_out(ner, [spaced]), [ner.gazetteer.match(spaced)])
    assert (spaced_features[positions] == plain_features).all()
    # the scores decoding reads, single-word window templates' included (scored per word when tagging)
    assert numpy.allclose(ner.decode([spaced]).scores, ner.decode([plain]).scores)  # a row per word
    expected = [(positions[e.start], positions[e.end - 1] + 1, e.label_) for e in ner(plain).ents]
    assert (5, 8, "ORG") in expected
    assert [(e.start, e.end, e.label_) for e in ner(spaced).ents] == expected


def test_a_line_end_stops_the_windows_of_the_words_around_it(trained_nlp):
    """A blank line (or a break before an indent) ends entities and the feature windows: the
    words before it read the same features whatever comes after it, and the same on the other side."""
    ner = wrapped_prose(trained_nlp)

    def features(words):
        doc = Doc(trained_nlp.vocab, words=words, spaces=[False] * len(words))
        return features_of(ner, lay_out(ner, [doc]), [ner.gazetteer.match(doc)])

    one, other = (
        features(["City", ":", "Berlin", "\n\n", "Name", ":"]),
        features(["City", ":", "Berlin", "\n\n", "Acme", "Corp"]),
    )
    assert (one[:3] == other[:3]).all()
    one, other = features(["Bob", "works", "\n  ", "at", "Acme"]), features(["Alice", "\n  ", "at", "Acme"])
    assert (one[3:] == other[2:]).all()
    # a single line break (wrapped prose) is read past: what follows it is in the window
    assert not (
        features(["City", ":", "Berlin", "\n", "Name", ":"])[2]
        == features(["City", ":", "Berlin", "\n", "Acme", "Corp"])[2]
    ).all()


def test_decoding_runs_over_the_words(trained_nlp):
    """A whitespace token's own scores are not read: it continues the entity around it,
    and a sentence that starts on whitespace still starts at the next word."""
    ner = wrapped_prose(trained_nlp)
    scheme, org = ner.scheme, ner.labels.index("ORG")
    b_org, i_org, l_org = (scheme.tag_id(move, org) for move in "BIL")
    words = ["Acme", "\n", "Corp", "\n\n", "works"]
    for sent_starts, expected in (
        ([True, False, False, False, False], [b_org, i_org, l_org, 0]),
        ([True, True, False, False, False], None),
    ):
        doc = Doc(trained_nlp.vocab, words=words, spaces=[False] * 5, sent_starts=sent_starts)
        layout = lay_out(ner, [doc])
        scores = numpy.zeros((len(doc), scheme.n_tags), dtype=numpy.float32)
        scores[0, b_org] = scores[2, l_org] = 10.0
        scores[[1, 3], 0] = 100.0  # the whitespace tokens would rather be O
        tags = best_tags_over(ner, trellis_of(ner, layout, [[]]), scores).tolist()
        if expected:
            assert tags[:4] == expected
        else:  # "Corp" starts a sentence: no entity continues into it
            assert not scheme.continuing()[tags[2]] and tags[1] == 0
            assert scheme.is_valid(tags, sent_starts)


def _with_line_breaks(data):
    """TRAIN_DATA with some spaces made line breaks (whitespace tokens), entity offsets moved along."""
    separators = ["\n", " ", " \n ", "\n\n", " "]
    spaced = []
    for text, entities in data:
        moved, out = [], ""
        for i, char in enumerate(text):
            moved.append(len(out))
            out += separators[i % len(separators)] if char == " " else char
        moved.append(len(out))
        spaced.append(
            ("\n" + out + "\n", [(moved[start] + 1, moved[end] + 1, label) for start, end, label in entities])
        )
    return spaced


FULL_FEATURES = [
    "word",
    "window",
    "shape",
    "affixes",
    "flags",
    "conjunctions",
    "far_window",
    "clusters",
    "document",
    "history",
    "abbreviations",
    "memory",
]


# lowercase_docs reads a line break on purpose: a capital that opens a line is no evidence that a doc is cased.
WITHOUT_LOWERCASE_DOCS = [family for family in DEFAULT_FAMILIES if family != LOWERCASE_DOCS_FAMILY]


@pytest.mark.parametrize("config", [{}, {"features": FULL_FEATURES}, {"scheme": "BIO", "trainer": CRF}])
def test_training_over_whitespace_tokens_learns_what_it_does_without(config):
    """Whitespace tokens in the training docs (raw text's line breaks, even inside an
    entity) are left out of training as they are of decoding: the same weights, where
    line breaks are transparent (line_breaks "none"; blank lines end entities otherwise)."""
    config = {"features": WITHOUT_LOWERCASE_DOCS, **config, "rules": {"line_breaks": "none"}}
    spaced_data = _with_line_breaks(TRAIN_DATA)
    nlp = spacy.blank("en")
    assert any(token.is_space for text, _ in spaced_data for token in nlp.make_doc(text))
    assert any(token.is_space for eg in make_examples(nlp, spaced_data) for ent in eg.reference.ents for token in ent)
    plain = train_nlp(config, epochs=5).get_pipe("bioner")
    spaced = train_nlp(config, data=spaced_data, epochs=5).get_pipe("bioner")
    for plain_weights, spaced_weights in zip(plain.model.averages(), spaced.model.averages()):
        assert (plain_weights == spaced_weights).all()


@pytest.mark.parametrize(
    "words,entity,words_entity",
    [
        (["We", "met", "Bob", "Smith", "\n\n", "in", "Paris"], (2, 5), (2, 4)),
        (["We", "met", "\n\n", "Bob", "Smith", "in", "Paris"], (2, 5), (3, 5)),
        (["We", "met", "\n", "Bob", "\n\n", "Smith", "\n", "in", "Paris"], (2, 7), (3, 6)),
    ],
)
def test_whitespace_at_a_preset_entity_edge(trained_nlp, words, entity, words_entity):
    """A preset entity with whitespace at an edge is kept as it is, and the words
    around it are tagged as they are around the same entity without that whitespace."""

    def entities(span):
        doc = Doc(trained_nlp.vocab, words=words, spaces=[True] * len(words))
        doc.ents = [Span(doc, *span, label="PER")]
        return [(e.start, e.end, e.label_) for e in trained_nlp(doc).ents]

    with_edges, without = entities(entity), entities(words_entity)
    assert (*entity, "PER") in with_edges
    assert [e for e in with_edges if e[:2] != entity] == [e for e in without if e[:2] != words_entity]


def test_gold_entity_with_whitespace_at_its_edges_trains_as_its_words():
    data = [
        ("We met Bob Smith\n\nin Paris .", [(7, 16, "PER"), (21, 26, "LOC")]),
        ("Alice Smith lives in Paris .", [(0, 11, "PER"), (21, 26, "LOC")]),
    ]
    with_edges = [("We met Bob Smith\n\nin Paris .", [(7, 18, "PER"), (21, 26, "LOC")])] + data[1:]
    plain = train_nlp(data=data, epochs=5).get_pipe("bioner")
    edged = train_nlp(data=with_edges, epochs=5).get_pipe("bioner")
    for plain_weights, edged_weights in zip(plain.model.averages(), edged.model.averages()):
        assert (plain_weights == edged_weights).all()


def test_whitespace_tokens_change_no_confidence_or_alternative():
    """Entity probabilities and alternatives are computed over the words, as the tags
    are decoded: a whitespace token's own scores count for nothing (line breaks transparent, line_breaks "none")."""
    nlp = train_nlp(
        {
            "confidence": {
                "probabilities": True,
                "alternatives": 5,
                "alternatives_threshold": 0.01,
                "temperature": 30.0,
            },
            "rules": {"line_breaks": "none"},
        }
    )
    words = "Bob works at Acme Corp in Berlin with Carol Jones".split()
    spaced_words = [
        "\n",
        "Bob",
        "works",
        "\n",
        "at",
        "Acme",
        "\n",
        "Corp",
        "  ",
        "in",
        "Berlin",
        "\n\n",
        "with",
        "Carol",
        "\n",
        "Jones",
    ]
    positions = [1, 2, 4, 5, 7, 9, 10, 12, 13, 15]
    word_of = {position: i for i, position in enumerate(positions)}

    def scored(doc, key, on_words=False):
        group = doc.spans[key]
        return [
            ((word_of[s.start], word_of[s.end - 1] + 1) if on_words else (s.start, s.end), s.label_, round(p, 6))
            for s, p in zip(group, group.attrs["scores"])
        ]

    plain = nlp(Doc(nlp.vocab, words=words))
    spaced = nlp(Doc(nlp.vocab, words=spaced_words, spaces=[False] * len(spaced_words)))
    for key in ("bioner", "bioner_alternatives"):
        assert scored(plain, key)
        assert scored(spaced, key, on_words=True) == scored(plain, key)


def test_short_batches_share_their_edge_masks_which_no_one_can_change():
    nlp = train_nlp()
    ner = nlp.get_pipe("bioner")
    docs = [nlp.make_doc("Ada met Charles in London ."), nlp.make_doc("Ada met Charles in Paris .")]
    layouts = [lay_out(ner, [doc]) for doc in docs]
    masks = [allowed_tags(ner, layout, [[]]) for layout in layouts]
    assert masks[0] is masks[1]  # one pattern of sentence starts and whitespace, one mask
    forced, ends = presets_forced(ner, layouts[0], [[]])
    assert numpy.array_equal(
        masks[0], ner.scheme.allowed(layouts[0].sent_starts, layouts[0].is_space, forced, closed_before=ends)
    )
    with pytest.raises(ValueError):
        masks[0][0, 0] = 0
    preset = [[Span(docs[0], 4, 5, label="LOC")]]
    assert allowed_tags(ner, layouts[0], preset) is not masks[0]  # presets: a mask of the doc's own
    assert _edges_mask.cache_info().currsize >= 1
