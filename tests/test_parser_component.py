import json
import pickle

import pytest
import spacy
from conftest import reseal
from spacy.tokens import Doc
from spacy.training import Example

from spacy_bioner.core.serialize import ModelFileError
from spacy_bioner.parser.component import BioParser
from spacy_bioner.tagger.component import BioTagger

# (words, heads, deps, tags); the second tree is non-projective: "on the issue"
# hangs from "hearing" across the verb.
SENTENCES = [
    (
        "She ate the pizza with a fork .",
        [1, 1, 3, 1, 1, 6, 4, 1],
        ["nsubj", "ROOT", "det", "obj", "prep", "det", "pobj", "punct"],
        ["PRP", "VBD", "DT", "NN", "IN", "DT", "NN", "."],
    ),
    (
        "A hearing is scheduled on the issue today .",
        [1, 3, 3, 3, 6, 6, 1, 3, 3],
        ["det", "nsubj", "aux", "ROOT", "case", "det", "nmod", "tmod", "punct"],
        ["DT", "NN", "VBZ", "VBN", "IN", "DT", "NN", "NN", "."],
    ),
    (
        "The cat sat on the mat .",
        [1, 2, 2, 5, 5, 2, 2],
        ["det", "nsubj", "ROOT", "case", "det", "obl", "punct"],
        ["DT", "NN", "VBD", "IN", "DT", "NN", "."],
    ),
    ("Dogs bark loudly .", [1, 1, 1, 1], ["nsubj", "ROOT", "advmod", "punct"], ["NNS", "VBP", "RB", "."]),
]
NON_PROJECTIVE = 1


def _examples(nlp):
    return [
        Example.from_dict(Doc(nlp.vocab, words=text.split()), {"heads": heads, "deps": deps, "tags": tags})
        for text, heads, deps, tags in SENTENCES
    ]


def _trained(system="arc-eager", pseudo_projective=True, epochs=40, beam_width=1):
    nlp = spacy.blank("en")
    nlp.add_pipe("bioner_tagger")
    nlp.add_pipe(
        "bioner_parser",
        config={
            "transition_system": system,
            "pseudo_projective": pseudo_projective,
            "n_buckets": 2**16,
            "label_buckets": 2**14,
            "beam_width": beam_width,
        },
    )
    examples = _examples(nlp)
    nlp.initialize(lambda: examples)
    for _ in range(epochs):
        nlp.update(examples)
    return nlp


def _parse(doc):
    return [(token.head.i, token.dep_) for token in doc]


@pytest.mark.parametrize(
    "system,pseudo_projective,beam_width",
    [
        ("arc-eager", False, 1),
        ("arc-eager", True, 1),
        ("arc-standard", False, 1),
        ("arc-standard", True, 1),
        ("covington-projective", False, 1),
        ("covington-projective", True, 1),
        ("covington", False, 1),
        ("arc-eager", False, 4),
        ("arc-eager", True, 4),
        ("arc-standard", False, 4),
        ("covington-projective", False, 4),
        ("covington", False, 4),
    ],
)
def test_parser_learns_the_training_trees(system, pseudo_projective, beam_width):
    nlp = _trained(system, pseudo_projective, beam_width=beam_width)
    builds_non_projective = pseudo_projective or system == "covington"
    for k, (text, heads, deps, tags) in enumerate(SENTENCES):
        doc = nlp(Doc(nlp.vocab, words=text.split()))
        assert [t.tag_ for t in doc] == tags
        if k == NON_PROJECTIVE and not builds_non_projective:
            assert [t.head.i for t in doc] != heads  # beyond a strictly projective parser
            continue
        assert _parse(doc) == list(zip(heads, deps)), (system, text)


def test_output_is_a_tree_and_sentences_follow_the_roots():
    nlp = _trained()
    doc = nlp(Doc(nlp.vocab, words="Dogs bark loudly . The cat sat on the mat .".split()))
    roots = [t.i for t in doc if t.head.i == t.i]
    assert roots  # every token reaches a root
    for token in doc:
        seen = set()
        while token.head.i != token.i:
            assert token.i not in seen
            seen.add(token.i)
            token = token.head
    assert [sent.root.i for sent in doc.sents] == sorted(roots)


def test_sentence_boundaries_are_respected():
    nlp = _trained()
    words = "Dogs bark loudly . The cat sat on the mat .".split()
    doc = Doc(nlp.vocab, words=words, sent_starts=[True] + [False] * 3 + [True] + [False] * 6)
    doc = nlp(doc)
    assert [(s.start, s.end) for s in doc.sents] == [(0, 4), (4, 11)]
    assert _parse(doc)[4:] == [(h + 4, d) for h, d in zip(SENTENCES[2][1], SENTENCES[2][2])]


@pytest.mark.parametrize("beam_width", [1, 3])
def test_save_load_pipe_and_processes(tmp_path, beam_width):
    nlp = _trained(beam_width=beam_width)
    texts = [text for text, *_ in SENTENCES]
    expected = [_parse(nlp(text)) for text in texts]
    assert [_parse(doc) for doc in nlp.pipe(texts, batch_size=2)] == expected
    assert [_parse(doc) for doc in nlp.pipe(texts, n_process=2, batch_size=1)] == expected
    nlp.to_disk(tmp_path / "model")
    loaded = spacy.load(tmp_path / "model")
    assert [_parse(loaded(text)) for text in texts] == expected
    parser = nlp.get_pipe("bioner_parser")
    data = parser.to_bytes()
    fresh = BioParser(nlp.vocab).from_bytes(data)
    assert fresh.to_bytes() == data
    assert pickle.loads(pickle.dumps(nlp)).get_pipe("bioner_parser").to_bytes() == data
    assert loaded.get_pipe("bioner_parser").cfg["beam_width"] == beam_width


def test_parsers_saved_before_beam_width_load_as_greedy(tmp_path):
    parser = _trained().get_pipe("bioner_parser")
    parser.to_disk(tmp_path / "parser")
    cfg = json.loads((tmp_path / "parser" / "cfg").read_text())
    del cfg["beam_width"]
    (tmp_path / "parser" / "cfg").write_text(json.dumps(cfg))
    reseal(tmp_path / "parser")
    loaded = BioParser(parser.vocab).from_disk(tmp_path / "parser")
    assert loaded.cfg["beam_width"] == 1
    doc = Doc(parser.vocab, words=SENTENCES[0][0].split(), tags=SENTENCES[0][3])
    assert _parse(loaded(doc.copy())) == _parse(parser(doc.copy()))


def test_bad_settings_and_files_are_named(tmp_path):
    nlp = spacy.blank("en")
    with pytest.raises(ValueError, match="Unknown transition_system"):
        nlp.add_pipe("bioner_parser", config={"transition_system": "arc-hybrid"})
    with pytest.raises(ValueError, match="pseudo_projective is for the projective systems"):
        nlp.add_pipe("bioner_parser", name="p2", config={"transition_system": "covington", "pseudo_projective": True})
    with pytest.raises(ValueError, match="beam_width must be a positive integer"):
        nlp.add_pipe("bioner_parser", name="beam0", config={"beam_width": 0})
    for width in (2.5, True):
        with pytest.raises(ValueError, match="beam_width must be a positive integer"):
            BioParser(nlp.vocab, beam_width=width)
    parser = nlp.add_pipe("bioner_parser", name="p3")
    with pytest.raises(ValueError, match="has no labels"):
        parser.predict([nlp("text")])
    trained = _trained().get_pipe("bioner_parser")
    trained.to_disk(tmp_path / "parser")
    (tmp_path / "parser" / "weights.npz").write_bytes(b"not an archive")
    with pytest.raises(ModelFileError, match="weights.npz"):
        BioParser(nlp.vocab).from_disk(tmp_path / "parser")
    (tmp_path / "parser" / "cfg").write_text('{"transition_system": "arc-eager"}')
    reseal(tmp_path / "parser")
    with pytest.raises(ModelFileError, match="cfg|parser"):
        BioParser(nlp.vocab).from_disk(tmp_path / "parser")


def test_scores_include_label_accuracy_and_punctuation():
    nlp = _trained()
    scores = nlp.evaluate(_examples(nlp))
    assert scores["dep_las_all"] == pytest.approx(1.0)
    assert scores["dep_label_acc"] == pytest.approx(1.0)
    assert scores["dep_uas"] == pytest.approx(1.0) and scores["tag_acc"] == pytest.approx(1.0)


def test_tagger_can_write_universal_pos():
    nlp = spacy.blank("en")
    nlp.add_pipe("bioner_tagger", config={"attr": "pos", "n_buckets": 2**14})
    upos = [["PRON", "VERB", "DET", "NOUN", "ADP", "DET", "NOUN", "PUNCT"]]
    examples = [Example.from_dict(Doc(nlp.vocab, words=SENTENCES[0][0].split()), {"pos": upos[0]})]
    nlp.initialize(lambda: examples)
    for _ in range(10):
        nlp.update(examples)
    assert [t.pos_ for t in nlp(SENTENCES[0][0])] == upos[0]
    assert nlp.evaluate(examples)["pos_acc"] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="not a universal part of speech"):
        nlp.get_pipe("bioner_tagger").add_label("NN")


def test_list_based_systems_refuse_units_longer_than_max_length():
    nlp = _trained("covington", False, epochs=5)
    nlp.get_pipe("bioner_parser").cfg["max_length"] = 20
    words = "Dogs bark loudly .".split() * 6
    with pytest.raises(ValueError, match="24 tokens is longer than max_length = 20.*sentencizer"):
        nlp(Doc(nlp.vocab, words=words))
    with_sentences = Doc(nlp.vocab, words=words, sent_starts=[i % 4 == 0 for i in range(len(words))])
    assert len(list(nlp(with_sentences).sents)) >= 6
    eager = _trained("arc-eager", False, epochs=5)
    eager.get_pipe("bioner_parser").cfg["max_length"] = 20
    assert len(eager(Doc(eager.vocab, words=words))) == 24  # linear time: no limit


def test_displacy_draws_the_parse():
    from spacy import displacy

    nlp = _trained(epochs=20)
    svg = displacy.render(nlp(SENTENCES[0][0]), style="dep", jupyter=False, options={"collapse_punct": False})
    assert svg.count("displacy-arc") == len(SENTENCES[0][0].split()) - 1 and ">nsubj<" in svg


def test_untagged_docs_are_warned_about_once():
    nlp = _trained(epochs=5)
    parser = nlp.get_pipe("bioner_parser")
    with pytest.warns(UserWarning, match="without part-of-speech tags"):
        parser(Doc(nlp.vocab, words=["Dogs", "bark"]))
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        parser(Doc(nlp.vocab, words=["Dogs", "bark"]))
        nlp("Dogs bark .")  # tagged by the pipeline's tagger


def test_tagger_with_clusters_tags_an_unseen_word_like_its_cluster():
    # In the shipped GloVe table "paracetamol" shares a cluster with "ibuprofen", "jumps" with "swims".
    def tags(features):
        nlp = spacy.blank("en")
        nlp.add_pipe("bioner_tagger", config={"features": features, "n_buckets": 2**14})
        examples = [
            Example.from_dict(Doc(nlp.vocab, words=[word]), {"tags": [tag]})
            for word, tag in (("ibuprofen", "NN"), ("swims", "VBZ"))
        ]
        nlp.initialize(lambda: examples)
        for _ in range(5):
            nlp.update(examples)
        return [nlp(word)[0].tag_ for word in ("paracetamol", "jumps")]

    assert tags(["word", "clusters"]) == ["NN", "VBZ"]
    without = tags(["word"])
    assert without[0] == without[1]  # two unseen words with nothing to tell them apart


def _train_tagger_until_right(nlp, examples, max_epochs=200) -> int:
    """Epochs of updates until one makes no mistake (under the tagger's margin); -1 if it never does."""
    tagger = nlp.get_pipe("bioner_tagger")
    for epoch in range(max_epochs):
        if tagger.update(examples)["bioner_tagger"] == 0:
            return epoch
    return -1


def test_tagger_margin_trains_until_the_gold_tags_win_by_it():
    def trained(margin):
        nlp = spacy.blank("en")
        nlp.add_pipe("bioner_tagger", config={"n_buckets": 2**14, "margin": margin})
        examples = _examples(nlp)
        nlp.initialize(lambda: examples)
        return nlp, examples, _train_tagger_until_right(nlp, examples)

    plain, examples, epochs = trained(0)
    assert epochs >= 0
    tagger = plain.get_pipe("bioner_tagger")
    tagger.cfg["margin"] = 30.0  # right, but not by 30 a token
    assert tagger.update(examples)["bioner_tagger"] > 0
    with_margin, examples, epochs = trained(30)
    assert epochs >= 0
    for text, _, _, tags in SENTENCES:
        assert [t.tag_ for t in with_margin(text)] == tags


@pytest.mark.parametrize("margin", [-1, float("nan"), True, "30"])
def test_tagger_margin_must_be_a_number_at_least_0(margin):
    with pytest.raises(ValueError, match="margin must be a number >= 0"):
        BioTagger(spacy.blank("en").vocab, margin=margin)


def test_tagger_margin_from_a_config_is_checked_too():
    with pytest.raises(ValueError, match="margin must be a number >= 0, got -1"):
        spacy.blank("en").add_pipe("bioner_tagger", config={"margin": -1})


def test_taggers_saved_before_the_margin_setting_load(tmp_path):
    nlp = _trained(epochs=5)
    nlp.to_disk(tmp_path)
    cfg_path = tmp_path / "bioner_tagger" / "cfg"
    cfg = json.loads(cfg_path.read_text(encoding="utf8"))
    assert cfg["margin"] == 30.0
    del cfg["margin"]
    cfg_path.write_text(json.dumps(cfg), encoding="utf8")
    reseal(cfg_path.parent)
    loaded = spacy.load(tmp_path)
    assert loaded.get_pipe("bioner_tagger").cfg["margin"] == 0.0
    text = SENTENCES[0][0]
    assert [t.tag_ for t in loaded(text)] == [t.tag_ for t in nlp(text)]


def _with_whitespace(words, every=3):
    """The words with a newline token after every `every`-th one, one leading and
    one trailing: (words, position of each original word)."""
    out, positions = ["\n"], []
    for k, word in enumerate(words):
        positions.append(len(out))
        out.append(word)
        if k % every == every - 1:
            out.append("\n")
    return out + ["\n\n"], positions


@pytest.mark.parametrize("pseudo_projective,beam_width", [(False, 1), (True, 1), (True, 4)])
def test_whitespace_tokens_change_no_word_arc(pseudo_projective, beam_width):
    """Raw text's newlines are not parsed: the words get the arcs they get without them."""
    nlp = _trained("arc-eager", pseudo_projective, beam_width=beam_width)
    parser = nlp.get_pipe("bioner_parser")
    for text, _, _, tags in SENTENCES:
        plain = parser(Doc(nlp.vocab, words=text.split(), tags=tags))
        words, positions = _with_whitespace(text.split())
        spaced_tags = ["_SP"] * len(words)
        for position, tag in zip(positions, tags):
            spaced_tags[position] = tag
        spaced = parser(Doc(nlp.vocab, words=words, tags=spaced_tags))
        assert [(positions[h], d) for h, d in _parse(plain)] == [_parse(spaced)[p] for p in positions]
        whitespace = [k for k in range(len(words)) if k not in positions]
        # Each whitespace token hangs from the word before it; the leading one from the first word.
        assert [spaced[k].head.i for k in whitespace] == [positions[0]] + [
            max(p for p in positions if p < k) for k in whitespace[1:]
        ]
        assert {spaced[k].dep_ for k in whitespace} == {"dep"}
        assert len(list(spaced.sents)) == len(list(plain.sents))


def test_whitespace_only_units_get_a_root():
    nlp = _trained()
    parser = nlp.get_pipe("bioner_parser")
    doc = parser(Doc(nlp.vocab, words=["\n\n", "  ", "\n"], spaces=[False] * 3, tags=["_SP"] * 3))
    assert _parse(doc) == [(0, "ROOT"), (0, "dep"), (0, "dep")]
    # A sentence of whitespace alone between two of words keeps its boundaries.
    words = "Dogs bark loudly .".split() + ["\n\n"] + "Dogs bark loudly .".split()
    doc = Doc(
        nlp.vocab,
        words=words,
        tags=SENTENCES[3][3] + ["_SP"] + SENTENCES[3][3],
        sent_starts=[True, False, False, False, True, True, False, False, False],
    )
    doc = parser(doc)
    assert [(s.start, s.end) for s in doc.sents] == [(0, 4), (4, 5), (5, 9)]
    assert doc[4].head.i == 4 and doc[4].dep_ == "ROOT"
    assert doc[5].head.i == 6 and doc[0].head.i == 1


def test_training_ignores_whitespace_tokens():
    """Gold trees with whitespace tokens in them train the same weights as without them."""

    def trained(spaced):
        nlp = spacy.blank("en")
        parser = nlp.add_pipe("bioner_parser", config={"n_buckets": 2**16, "label_buckets": 2**14})
        examples = []
        for text, heads, deps, tags in SENTENCES:
            words = text.split()
            if spaced:
                words, positions = _with_whitespace(words)
                spaced_heads = [
                    positions[0] if k == 0 else k - 1 for k in range(len(words))
                ]  # whitespace: the word before
                spaced_deps, spaced_tags = ["dep"] * len(words), ["_SP"] * len(words)
                for k, p in enumerate(positions):
                    spaced_heads[p], spaced_deps[p], spaced_tags[p] = positions[heads[k]], deps[k], tags[k]
                heads, deps, tags = spaced_heads, spaced_deps, spaced_tags
            examples.append(Example.from_dict(Doc(nlp.vocab, words=words, tags=tags), {"heads": heads, "deps": deps}))
        nlp.initialize(lambda: examples)
        for _ in range(5):
            nlp.update(examples)
        return parser

    plain, spaced = trained(False), trained(True)
    assert plain.labels == spaced.labels
    assert (plain.move_model.averages()[0] == spaced.move_model.averages()[0]).all()
    assert (plain.label_model.averages()[0] == spaced.label_model.averages()[0]).all()


@pytest.mark.parametrize("attr,whitespace_tag", [("tag", "_SP"), ("pos", "SPACE")])
def test_tagger_leaves_whitespace_out(attr, whitespace_tag):
    """Whitespace tokens get spaCy's whitespace tag, change no word's tag, and train nothing."""
    universal = {
        "PRP": "PRON",
        "VBD": "VERB",
        "DT": "DET",
        "NN": "NOUN",
        "IN": "ADP",
        ".": "PUNCT",
        "VBZ": "AUX",
        "VBN": "VERB",
        "NNS": "NOUN",
        "VBP": "VERB",
        "RB": "ADV",
    }

    def trained(spaced):
        nlp = spacy.blank("en")
        tagger = nlp.add_pipe("bioner_tagger", config={"attr": attr, "n_buckets": 2**16})
        examples = []
        for text, _, _, tags in SENTENCES:
            words, values = text.split(), [universal[tag] if attr == "pos" else tag for tag in tags]
            if spaced:
                words, positions = _with_whitespace(words)
                spaced_values = [whitespace_tag] * len(words)
                for position, value in zip(positions, values):
                    spaced_values[position] = value
                values = spaced_values
            examples.append(Example.from_dict(Doc(nlp.vocab, words=words), {attr.upper(): values}))
        nlp.initialize(lambda: examples)
        for _ in range(5):
            nlp.update(examples)
        return nlp, tagger

    (plain_nlp, plain), (spaced_nlp, spaced) = trained(False), trained(True)
    assert (plain.model.averages()[0] == spaced.model.averages()[0]).all()
    words, positions = _with_whitespace("A cat sat on the issue today .".split())
    plain_doc = plain_nlp(Doc(plain_nlp.vocab, words=[words[p] for p in positions]))
    spaced_doc = spaced_nlp(Doc(spaced_nlp.vocab, words=words))
    assert [getattr(t, f"{attr}_") for t in plain_doc] == [getattr(spaced_doc[p], f"{attr}_") for p in positions]
    assert {getattr(t, f"{attr}_") for t in spaced_doc if t.is_space} == {whitespace_tag}


def test_tags_set_in_a_memory_zone_are_read_after_it():
    """The tagger's table of tag values, made in a memory zone, keeps its strings after the zone."""
    trained = _trained(epochs=10)
    nlp = spacy.blank("en")  # a vocab that has none of the tag strings yet
    nlp.add_pipe("bioner_tagger").from_bytes(trained.get_pipe("bioner_tagger").to_bytes())
    text = SENTENCES[0][0]
    with nlp.memory_zone():
        inside = [t.tag_ for t in nlp(text)]
    assert [t.tag_ for t in nlp(text)] == inside == [t.tag_ for t in trained(text)]
