import pickle

import numpy
import pytest
import spacy
from conftest import TRAIN_DATA, make_examples
from hypothesis import given, settings
from hypothesis import strategies as st
from spacy.tokens import Doc, Span

from spacy_bioner.core.serialize import ModelFileError
from spacy_bioner.gazetteer.matcher import Gazetteer, filter_matches
from spacy_bioner.gazetteer.spans import Interned, non_overlapping, span_group, write_ents
from spacy_bioner.gazetteer.token_codes import TokenEncoder, match_codes
from spacy_bioner.ner.batch import lay_out
from spacy_bioner.ner.featurizer import features as features_of
from spacy_bioner.ner.featurizer import match_ids


@pytest.fixture
def nlp():
    return spacy.blank("en")


def found(gazetteer, doc):
    matches = gazetteer.match(doc).tolist()
    return [(doc[s:e].text, gazetteer.labels[lab], gazetteer.kb_ids[k]) for s, e, lab, k in matches]


def test_matches_align_with_tokens(nlp):
    gaz = Gazetteer(nlp.tokenizer)
    gaz.add("apple", "FOOD")
    assert found(gaz, nlp("pineapple apples apple")) == [("apple", "FOOD", "")]


def test_case_and_unicode_insensitive_by_default(nlp):
    gaz = Gazetteer(nlp.tokenizer)
    gaz.add("Straße", "LOC")
    gaz.add("ﬁnance", "ORG")  # NFKC folds the ligature
    gaz.add("Málaga à Tōkyō", "LOC")  # UTF-8 bytes such as 0xA0 (in "à") are not whitespace
    doc = nlp("STRASSE and finance : MÁLAGA À TŌKYŌ")
    assert [m[0] for m in found(gaz, doc)] == ["STRASSE", "finance", "MÁLAGA À TŌKYŌ"]
    exact = Gazetteer(nlp.tokenizer, case_sensitive=True)
    exact.add("Paris", "LOC")
    assert found(exact, nlp("paris Paris")) == [("Paris", "LOC", "")]


def test_multi_token_terms_match_across_any_whitespace(nlp):
    gaz = Gazetteer(nlp.tokenizer)
    gaz.add("New York", "LOC")
    gaz.add("Saint-Denis", "LOC")  # split by the tokenizer like the text is
    doc = nlp("From new \n\n York to Saint-Denis.")
    assert [m[0] for m in found(gaz, doc)] == ["new \n\n York", "Saint-Denis"]


def test_nested_and_overlapping_matches_and_kb_ids(nlp):
    gaz = Gazetteer(nlp.tokenizer)
    gaz.add_patterns(
        [
            {"label": "LOC", "pattern": "New York City", "id": "Q60"},
            {"label": "LOC", "pattern": "New York", "id": "Q1384"},
            {"label": "LOC", "pattern": "York", "id": "Q42462"},
            {"label": "ORG", "pattern": "York", "id": "york-inc"},
            {"label": "LOC", "pattern": "City Hall"},
        ]
    )
    doc = nlp("New York City Hall")
    matches = found(gaz, doc)
    assert ("New York City", "LOC", "Q60") in matches
    assert ("New York", "LOC", "Q1384") in matches
    assert ("York", "LOC", "Q42462") in matches and ("York", "ORG", "york-inc") in matches
    assert ("City Hall", "LOC", "") in matches
    kept = filter_matches(gaz.match(doc), "leftmost_longest")
    assert [doc[s:e].text for s, e, _, _ in kept] == ["New York City"]


def test_relabelled_matches_map_labels_drop_others_and_kb_ids(nlp):
    gaz = Gazetteer(nlp.tokenizer)
    gaz.add_patterns(
        [
            {"label": "LOC", "pattern": "New York", "id": "Q1384"},
            {"label": "ORG", "pattern": "York", "id": "york-inc"},
            {"label": "GPE", "pattern": "York"},
        ]
    )
    docs = [nlp("New York"), nlp("York and York")]
    plain = gaz.match_laid_out(docs)
    assert [gaz.labels[label] for label in plain[:, 2]] == ["LOC", "ORG", "GPE", "ORG", "GPE", "ORG", "GPE"]
    # LOC -> 1, ORG -> 0, GPE left out
    relabel = numpy.array(
        [1 if label == "LOC" else 0 if label == "ORG" else -1 for label in gaz.labels], dtype=numpy.int64
    )
    relabelled = gaz.match_laid_out(docs, relabel=relabel)
    assert relabelled.tolist() == [[0, 2, 1, 0], [1, 2, 0, 0], [2, 3, 0, 0], [4, 5, 0, 0]]


def test_span_groups_equal_spans_made_one_by_one(nlp):
    gaz = Gazetteer(nlp.tokenizer)
    gaz.add_patterns(
        [
            {"label": "LOC", "pattern": "New York", "id": "Q1384"},
            {"label": "ORG", "pattern": "York", "id": "york-inc"},
            {"label": "LOC", "pattern": "Paris"},
        ]
    )
    doc = nlp("In New York,  Paris and York")
    rows = gaz.match(doc)
    group = gaz.span_group(doc, "places", rows)
    assert group.name == "places" and len(group) == len(rows) == 4
    made = [gaz.span(doc, row) for row in rows]
    assert [(s.start, s.end, s.start_char, s.end_char, s.label_, s.kb_id_) for s in group] == [
        (s.start, s.end, s.start_char, s.end_char, s.label_, s.kb_id_) for s in made
    ]
    assert len(gaz.span_group(doc, "none", rows[:0])) == 0
    with pytest.raises(ValueError, match="does not lie in a doc"):
        gaz.span_group(doc, "bad", numpy.array([[0, len(doc) + 1, 0, 0]]))
    with pytest.raises(IndexError, match="No string 7"):
        gaz.span_group(doc, "bad", numpy.array([[0, 1, 7, 0]]))  # a label the gazetteer does not have


@given(st.lists(st.tuples(st.integers(0, 8), st.integers(1, 4), st.integers(0, 2)), max_size=12))
def test_filter_matches_agrees_with_a_greedy_loop(starts_lengths_labels):
    """In the order Gazetteer.match gives (by start, then length) and in any other order."""
    as_drawn = [(start, start + length, label, 0) for start, length, label in starts_lengths_labels]
    for matches, how, rank in (
        (sorted(as_drawn), "leftmost_longest", lambda m: (m[0], -(m[1] - m[0]))),
        (as_drawn, "leftmost_longest", lambda m: (m[0], -(m[1] - m[0]))),
        (as_drawn, "longest", lambda m: (-(m[1] - m[0]), m[0])),
    ):
        taken, kept = set(), []
        for match in sorted(matches, key=rank):
            if not taken.intersection(range(match[0], match[1])):
                kept.append(match)
                taken.update(range(match[0], match[1]))
        assert filter_matches(numpy.array(matches, dtype=numpy.int64).reshape(-1, 4), how) == sorted(kept)


LABELS, KB_IDS = ["LOC", "PRODUCT", "NOT_A_SYMBOL"], ["", "Q60", "acme:1"]  # symbols, "" and hashed strings


@given(
    st.lists(st.tuples(st.integers(0, 9), st.integers(1, 3), st.integers(0, 2), st.integers(0, 2)), max_size=10),
    st.lists(st.tuples(st.integers(0, 9), st.integers(1, 3)), max_size=3),
    st.booleans(),
)
def test_written_ents_equal_set_ents_with_spans(rows, entities, keep_entities):
    """write_ents against spaCy's set_ents(default="unmodified") with the Spans the component used to make."""
    nlp = spacy.blank("en")
    words = [f"w{i}" for i in range(10)]
    matches = numpy.array(
        sorted((s, min(s + n, 10), label, kb) for s, n, label, kb in rows), dtype=numpy.int64
    ).reshape(-1, 4)
    kept = non_overlapping(matches, False)
    docs = []
    for _ in range(2):
        doc = Doc(nlp.vocab, words=words)
        spans, taken = [], set()
        for start, length in entities:  # some entities (and a blocked token) before the matches
            end = min(start + length, 10)
            if not taken.intersection(range(start, end)):
                spans.append(doc.char_span(doc[start].idx, doc[end - 1].idx + len(doc[end - 1]), label="ORG"))
                taken.update(range(start, end))
        doc.set_ents(spans, blocked=[doc[9:10]] if 9 not in taken else [], default="outside")
        docs.append(doc)
    write_ents(docs[0], kept, Interned(LABELS), Interned(KB_IDS), keep_entities)
    keep = list(docs[1].ents) if keep_entities else []
    taken = {i for ent in keep for i in range(ent.start, ent.end)}
    free = [
        Span(docs[1], s, e, label=LABELS[label], kb_id=KB_IDS[kb])
        for s, e, label, kb in kept.tolist()
        if not taken.intersection(range(s, e))
    ]
    docs[1].set_ents(sorted(keep + free, key=lambda span: span.start), default="unmodified")
    assert [(t.ent_iob_, t.ent_type_, t.ent_kb_id_) for t in docs[0]] == [
        (t.ent_iob_, t.ent_type_, t.ent_kb_id_) for t in docs[1]
    ]


def test_interned_strings_come_back_after_a_memory_zone_and_in_another_vocab():
    labels, kb_ids = Interned(["ZONED_LABEL"]), Interned(["zoned:kb"])
    row = numpy.array([[0, 1, 0, 0]])
    nlp = spacy.blank("en")
    with nlp.memory_zone():
        doc = nlp("a b")
        assert [(s.label_, s.kb_id_) for s in span_group(doc, "x", row, labels, kb_ids)] == [
            ("ZONED_LABEL", "zoned:kb")
        ]
    assert "zoned:kb" not in nlp.vocab.strings  # a transient string, dropped with the zone
    for vocab_nlp in (nlp, spacy.blank("en")):
        doc = vocab_nlp("a b")
        assert [(s.label_, s.kb_id_) for s in span_group(doc, "x", row, labels, kb_ids)] == [
            ("ZONED_LABEL", "zoned:kb")
        ]
        assert "zoned:kb" in vocab_nlp.vocab.strings


def test_match_codes():
    codes = match_codes([(0, 3, 0, 0), (1, 2, 0, 0), (4, 5, 1, 0)], 5, 2)
    assert codes[:, 0].tolist() == [1, 2, 3, 0, 0]  # the longer match speaks
    assert codes[:, 1].tolist() == [0, 0, 0, 0, 4]


def test_term_files(nlp, tmp_path):
    (tmp_path / "a.tsv").write_text("Paris\tLOC\tgeo:1\nAcme Corp\tORG\n", encoding="utf8")
    (tmp_path / "b.jsonl").write_text('{"label": "PER", "pattern": "Ada Lovelace", "id": "Q7259"}\n', encoding="utf8")
    (tmp_path / "c.txt").write_text("aspirin\n\n   \nibuprofen\n", encoding="utf8")
    gaz = Gazetteer(nlp.tokenizer)
    assert gaz.load(tmp_path, label="DRUG") == 5
    doc = nlp("Ada Lovelace took aspirin in Paris at Acme Corp")
    assert found(gaz, doc) == [
        ("Ada Lovelace", "PER", "Q7259"),
        ("aspirin", "DRUG", ""),
        ("Paris", "LOC", "geo:1"),
        ("Acme Corp", "ORG", ""),
    ]


@pytest.mark.parametrize(
    "name,content,message",
    [
        ("bad.tsv", "ok\tLOC\ntoo\tmany\tfields\there\n", "bad.tsv, line 2"),
        ("bad.jsonl", '{"label": "X", "pattern": "a"}\n{not json\n', "bad.jsonl, line 2: not valid JSON"),
        ("tok.jsonl", '{"label": "X", "pattern": [{"LOWER": "a"}]}\n', "token patterns are not supported"),
    ],
)
def test_malformed_files_name_file_and_line(nlp, tmp_path, name, content, message):
    (tmp_path / name).write_text(content, encoding="utf8")
    with pytest.raises(ValueError, match=message):
        Gazetteer(nlp.tokenizer).load(tmp_path / name)


def test_bad_bytes_deep_in_a_term_file_are_named_at_their_line(nlp, tmp_path):
    lines = [f"Place {i}\tLOC".encode() for i in range(1, 6001)]
    lines[4999] = "Z\xfcrich\tLOC".encode("latin-1")  # line 5,000
    lines[10] = b"New\rYork\tLOC"  # a lone \r: part of its line, not a line of its own
    (tmp_path / "places.tsv").write_bytes(b"\n".join(lines) + b"\n")
    with pytest.raises(ValueError, match="places.tsv, line 5000: not UTF-8"):
        Gazetteer(nlp.tokenizer).load(tmp_path / "places.tsv")
    lines[4999] = b"Zurich\tLOC"
    (tmp_path / "places.tsv").write_bytes(b"\n".join(lines) + b"\n")
    assert Gazetteer(nlp.tokenizer).load(tmp_path / "places.tsv") == 6000


def test_bad_encoding_and_missing_label(nlp, tmp_path):
    (tmp_path / "latin.tsv").write_bytes("Z\xfcrich\tLOC\n".encode("latin-1"))
    with pytest.raises(ValueError, match="latin.tsv, line 1: not UTF-8"):
        Gazetteer(nlp.tokenizer).load(tmp_path / "latin.tsv")
    (tmp_path / "plain.txt").write_text("aspirin\n", encoding="utf8")
    with pytest.raises(ValueError, match="needs a label"):
        Gazetteer(nlp.tokenizer).load(tmp_path / "plain.txt")


def test_empty_terms_are_skipped_with_a_count(nlp, tmp_path):
    (tmp_path / "terms.tsv").write_text("\tLOC\n \u3000 \tLOC\nParis\tLOC\n", encoding="utf8")
    gaz = Gazetteer(nlp.tokenizer)
    with pytest.warns(UserWarning, match="skipped 2 empty terms"):
        assert gaz.load(tmp_path / "terms.tsv") == 1


def test_token_patterns_are_refused(nlp):
    with pytest.raises(TypeError, match="Token patterns"):
        Gazetteer(nlp.tokenizer).add_patterns([{"label": "X", "pattern": [{"LOWER": "x"}]}])


def test_bytes_round_trip_and_corruption(nlp):
    gaz = Gazetteer(nlp.tokenizer)
    gaz.add_patterns([{"label": "LOC", "pattern": "New York", "id": "Q60"}, {"label": "ORG", "pattern": "York"}])
    data = gaz.to_bytes()
    copy = Gazetteer(nlp.tokenizer).from_bytes(data)
    doc = nlp("new york")
    assert numpy.array_equal(copy.match(doc), gaz.match(doc)) and copy.to_bytes() == data
    with pytest.raises(ModelFileError, match="Corrupted gazetteer"):
        Gazetteer(nlp.tokenizer).from_bytes(data[: len(data) // 2])


def test_standalone_component_is_an_entity_ruler(nlp, tmp_path):
    ruler = nlp.add_pipe("bioner_gazetteer")
    ruler.add_patterns([{"label": "LOC", "pattern": "New York", "id": "Q60"}, {"label": "LOC", "pattern": "York"}])
    doc = nlp("I love New York")
    assert [(e.text, e.label_, e.kb_id_) for e in doc.ents] == [("New York", "LOC", "Q60")]
    assert [s.text for s in doc.spans["bioner_gazetteer"]] == ["New York", "York"]
    nlp.to_disk(tmp_path)
    loaded = spacy.load(tmp_path)
    assert [(e.text, e.kb_id_) for e in loaded("I love New York").ents] == [("New York", "Q60")]


def test_pipelines_with_the_component_pickle_after_use():
    """Process pools pickle pipelines: the component pickles after matching has filled its caches
    (which hold StringStore memory pools), with or without terms, and tags as before."""
    nlp = spacy.blank("en")
    ruler = nlp.add_pipe("bioner_gazetteer", config={"case_sensitive": True})
    ruler.add_patterns([{"label": "LOC", "pattern": "New York", "id": "Q60"}, {"label": "LOC", "pattern": "york"}])
    text = "New York , new york and york"
    expected = [("New York", "LOC", "Q60"), ("york", "LOC", ""), ("york", "LOC", "")]
    assert [(e.text, e.label_, e.kb_id_) for e in nlp(text).ents] == expected
    copy = pickle.loads(pickle.dumps(nlp))
    assert [(e.text, e.label_, e.kb_id_) for e in copy(text).ents] == expected
    empty = spacy.blank("en")
    empty.add_pipe("bioner_gazetteer")
    assert pickle.loads(pickle.dumps(empty))("New York").ents == ()


def _trained(mode, patterns, epochs=15):
    nlp = spacy.blank("en")
    ner = nlp.add_pipe("bioner", config={"gazetteer": {"mode": mode}})
    ner.add_patterns(patterns)
    examples = make_examples(nlp)
    nlp.initialize(lambda: examples)
    for _ in range(epochs):
        nlp.update(examples)
    return nlp


PATTERNS = [
    {"label": "LOC", "pattern": "Paris", "id": "geo:paris"},
    {"label": "LOC", "pattern": "Berlin", "id": "geo:berlin"},
    {"label": "LOC", "pattern": "Tbilisi", "id": "geo:tbilisi"},
    {"label": "DRUG", "pattern": "aspirin", "id": "db:aspirin"},
]


def test_features_mode_links_kb_ids_and_survives_save_load(tmp_path):
    nlp = _trained("features", PATTERNS)
    doc = nlp("Alice Smith lives in Paris .")
    assert [(e.text, e.label_, e.kb_id_) for e in doc.ents] == [
        ("Alice Smith", "PER", ""),
        ("Paris", "LOC", "geo:paris"),
    ]
    assert [s.text for s in doc.spans["bioner_gazetteer"]] == ["Paris"]
    nlp.to_disk(tmp_path)
    loaded = spacy.load(tmp_path)
    texts = [t for t, _ in TRAIN_DATA] + ["Bob moved to Tbilisi with aspirin"]
    for text in texts:
        assert [(e.text, e.label_, e.kb_id_) for e in loaded(text).ents] == [
            (e.text, e.label_, e.kb_id_) for e in nlp(text).ents
        ]
    assert loaded.get_pipe("bioner").to_bytes() == nlp.get_pipe("bioner").to_bytes()


def test_batches_link_only_exact_matches_to_their_first_kb_id():
    patterns = PATTERNS + [
        {"label": "LOC", "pattern": "Paris", "id": "geo:paris-texas"},  # a second id: the first one wins
        {"label": "PER", "pattern": "Alice", "id": "person:alice"},  # inside a longer entity: not linked
    ]
    nlp = _trained("features", patterns)
    texts = ["Alice Smith lives in Paris", "Paris", "Bob works at Acme Corp in Berlin"]
    one_by_one = [[(e.text, e.label_, e.kb_id_) for e in nlp(text).ents] for text in texts]
    batched = [[(e.text, e.label_, e.kb_id_) for e in doc.ents] for doc in nlp.pipe(texts, batch_size=3)]
    assert batched == one_by_one
    linked = {(text, kb) for ents in batched for text, _, kb in ents if kb}
    assert linked == {("Paris", "geo:paris"), ("Berlin", "geo:berlin")}
    assert ("Alice Smith", "PER", "") in batched[0] and batched[1] == [
        ("Paris", "LOC", "geo:paris")
    ]  # a doc-final entity


def test_spans_key_null_keeps_no_matches_and_changes_no_entity():
    nlp = _trained("features", PATTERNS)
    ner = nlp.get_pipe("bioner")
    text = "Alice Smith lives in Paris with aspirin ."
    kept = nlp(text)
    ner.settings = ner.settings.replace(gazetteer={"spans_key": None})
    bare = nlp(text)
    assert "bioner_gazetteer" in kept.spans and "bioner_gazetteer" not in bare.spans
    assert [(e.text, e.label_, e.kb_id_) for e in bare.ents] == [(e.text, e.label_, e.kb_id_) for e in kept.ents]
    for bad in ("", 3):
        with pytest.raises(ValueError, match="spans_key"):
            spacy.blank("en").add_pipe("bioner", config={"gazetteer": {"spans_key": bad}})


def test_fallback_mode_adds_unlabelled_matches():
    nlp = _trained("fallback", PATTERNS)
    doc = nlp("Nothing happened to aspirin today .")
    assert ("aspirin", "DRUG", "db:aspirin") in [(e.text, e.label_, e.kb_id_) for e in doc.ents]


def test_ents_mode_fixes_matches_and_tags_the_rest():
    nlp = _trained("ents", PATTERNS + [{"label": "ORG", "pattern": "Alice Smith"}])
    doc = nlp("Alice Smith lives in Berlin .")
    assert [(e.text, e.label_) for e in doc.ents] == [("Alice Smith", "ORG"), ("Berlin", "LOC")]


def test_gazetteer_runs_on_training_docs_with_dropout():
    # With every match hidden in training, the gazetteer feature never gets weight.
    nlp = spacy.blank("en")
    ner = nlp.add_pipe("bioner", config={"gazetteer": {"match_dropout": 0.999}})
    ner.add_patterns(PATTERNS)
    examples = make_examples(nlp)
    nlp.initialize(lambda: examples)
    for _ in range(5):
        nlp.update(examples)
    doc = Doc(nlp.vocab, words=["Paris"])
    matches = ner.gazetteer.match(doc)
    features = features_of(ner, lay_out(ner, [doc]), [matches])
    gazetteer_ids = match_ids("gazetteer", ner.gazetteer.labels, ner.settings.n_buckets)
    gazetteer_ids = gazetteer_ids[gazetteer_ids != 0xFFFFFFFF]
    assert len(matches) == 1 and numpy.isin(gazetteer_ids, features[0]).any()  # the match is a feature at inference
    emission, _ = ner.model.averages()
    assert not emission[gazetteer_ids].any()


def test_bad_gazetteer_settings():
    nlp = spacy.blank("en")
    with pytest.raises(ValueError, match="mode"):
        nlp.add_pipe("bioner", config={"gazetteer": {"mode": "magic"}})
    with pytest.raises(ValueError, match="colour"):
        nlp.add_pipe("bioner", name="b2", config={"gazetteer": {"colour": "red"}})


def test_compile_cli_writes_a_loadable_gazetteer(tmp_path, nlp):
    from typer.testing import CliRunner

    from spacy_bioner.cli import app

    terms = tmp_path / "places.txt"
    terms.write_text("New York\nParis\n\n", encoding="utf8")
    output = tmp_path / "places.gaz"
    result = CliRunner().invoke(app, ["gazetteer", "compile", str(terms), str(output), "--label", "LOC"])
    assert result.exit_code == 0, result.output
    assert "2 terms" in result.output
    gaz = Gazetteer(nlp.tokenizer)
    gaz.load(output)
    assert found(gaz, nlp("From new york to Paris")) == [("new york", "LOC", ""), ("Paris", "LOC", "")]
    unlabelled = CliRunner().invoke(app, ["gazetteer", "compile", str(terms), str(tmp_path / "x.gaz")])
    assert unlabelled.exit_code == 1 and "needs a label" in " ".join(unlabelled.output.split())
    assert not (tmp_path / "x.gaz").exists()


def test_word_codes_are_distinct_and_in_disjoint_ranges():
    from spacy_bioner.gazetteer.token_codes import CODE_LENGTH, MAX_WORDS, word_code

    ids = [0, 1, 63, 64, 4095, 4096, 262_143, 262_144, MAX_WORDS - 1]
    codes = [word_code(i) for i in ids]
    assert len(set(codes)) == len(ids) and all(len(c) == CODE_LENGTH for c in codes)
    for position in range(CODE_LENGTH):  # each position's characters never occur at another position
        here = {c[position] for c in codes}
        assert not here & {c[p] for c in codes for p in range(CODE_LENGTH) if p != position}
    with pytest.raises(ValueError, match="too many distinct words"):
        word_code(MAX_WORDS)


def test_phrase_words_match_alone_and_after_unknown_runs(nlp):
    gaz = Gazetteer(nlp.tokenizer)
    gaz.add("New York", "LOC")
    gaz.add("York", "LOC")
    gaz.add("new", "ADJ")
    doc = nlp("brand new the York xx yy New York new")
    assert found(gaz, doc) == [
        ("new", "ADJ", ""),
        ("York", "LOC", ""),
        ("New", "ADJ", ""),
        ("New York", "LOC", ""),
        ("York", "LOC", ""),
        ("new", "ADJ", ""),
    ]
    # Docs of a batch never match across their border.
    first, second = nlp("I like New"), nlp("York a lot")
    assert [len(m) for m in gaz.match_batch([first, nlp(""), second])] == [1, 0, 1]


WORDS = ["a", "b", "c", "d", "\n"]
BLANK = spacy.blank("en")


@settings(max_examples=300)
@given(
    st.lists(st.lists(st.sampled_from(WORDS[:3]), min_size=1, max_size=4), min_size=1, max_size=8),
    st.lists(st.lists(st.sampled_from(WORDS), max_size=16), min_size=1, max_size=3),
)
def test_matches_equal_every_span_whose_words_are_a_term(terms, texts):
    """The word automaton against the definition: a match is every run of non-whitespace tokens,
    in one doc, whose words are a term; terms that are suffixes and prefixes of each other included."""
    nlp = BLANK
    gaz = Gazetteer(nlp.tokenizer)
    for term in terms:
        gaz.add(" ".join(term), "X")
    docs = [Doc(nlp.vocab, words=words) for words in texts]
    wanted = []
    for doc in docs:
        words = [token.i for token in doc if not token.is_space]
        term_set = {tuple(term) for term in terms}
        spans = {
            (words[i], words[j] + 1)
            for i in range(len(words))
            for j in range(i, len(words))
            if tuple(doc[k].text for k in words[i : j + 1]) in term_set
        }
        wanted.append(sorted(spans, key=lambda span: (span[0], span[1] - span[0])))
    assert [[(s, e) for s, e, _, _ in rows.tolist()] for rows in gaz.match_batch(docs)] == wanted


def test_terms_added_after_matching_are_found(nlp):
    """A word read before its term was added is looked up again (the encoder caches words)."""
    gaz = Gazetteer(nlp.tokenizer)
    gaz.add("New York", "LOC")
    doc = nlp("New York")
    assert len(gaz.match(doc)) == 1
    gaz.add("York", "LOC")
    gaz.add("York City", "LOC")
    assert found(gaz, nlp("New York City")) == [("New York", "LOC", ""), ("York", "LOC", ""), ("York City", "LOC", "")]


def test_match_batch_without_terms_shares_one_read_only_empty_array(nlp):
    """With no term lists, every doc gets the same empty rows, which nothing may write to."""
    found = Gazetteer(nlp.tokenizer).match_batch([nlp("New York"), nlp("Oslo")])
    assert [m.shape for m in found] == [(0, 4), (0, 4)] and found[0] is found[1]
    with pytest.raises(ValueError):
        found[0][:, :2] += 1


def test_old_format_gazetteer_is_refused(nlp):
    import json

    import srsly

    gaz = Gazetteer(nlp.tokenizer)
    gaz.add("Paris", "LOC")
    message = srsly.msgpack_loads(srsly.msgpack_loads(gaz.to_bytes())["body"])  # unsealed, as format 1 was
    message["meta"] = json.dumps({**json.loads(message["meta"]), "format": 1})
    with pytest.raises(ModelFileError, match="recompile"):
        Gazetteer(nlp.tokenizer).from_bytes(srsly.msgpack_dumps(message))


@given(st.lists(st.tuples(st.integers(0, 9), st.integers(1, 4), st.integers(0, 2)), max_size=12))
def test_match_codes_agree_with_a_loop(spans):
    matches = [(start, min(start + length, 10), label, 0) for start, length, label in spans]
    expected = numpy.zeros((10, 3), dtype=numpy.intp)
    for start, end, label, _ in sorted(matches, key=lambda m: m[1] - m[0]):
        if end - start == 1:
            expected[start, label] = 4
        else:
            expected[start, label], expected[end - 1, label] = 1, 3
            expected[start + 1 : end - 1, label] = 2
    assert numpy.array_equal(match_codes(matches, 10, 3), expected)


def test_loading_with_a_helper_process_gives_the_same_gazetteer(nlp, monkeypatch):
    from spacy_bioner.gazetteer import terms as gazetteer_module

    terms = [
        (f"Saint-{name} de {i % 7}", "LOC", f"Q{i}") for i, name in enumerate(["Denis", "Étienne", "O'Brien"] * 20)
    ]
    terms += [(f"town{i}", "LOC", "") for i in range(40)] + [("  ", "LOC", "")]
    gazetteers = {}
    for forked in (True, False):
        monkeypatch.setattr(gazetteer_module, "can_fork_helper", lambda forked=forked: forked)
        gazetteers[forked] = Gazetteer(nlp.tokenizer)
        assert gazetteers[forked]._add_all(terms, chunk_size=7) == len(terms) - 1
    with_helper, in_process = gazetteers[True], gazetteers[False]
    assert with_helper.to_bytes() == in_process.to_bytes()
    assert with_helper.skipped == in_process.skipped == 1
    assert found(with_helper, nlp("From Saint-Denis de 0 to town3")) == [
        ("Saint-Denis de 0", "LOC", kb_id)
        for kb_id in ("Q0", "Q21", "Q42")  # one name, three places
    ] + [("town3", "LOC", "")]


def test_no_helper_process_is_forked_beside_other_threads():
    import threading

    from spacy_bioner.gazetteer.terms import can_fork_helper as _can_fork_helper

    release = threading.Event()
    waiting = threading.Thread(target=release.wait)
    waiting.start()
    try:
        assert not _can_fork_helper()  # a lock held by that thread would stay held in the child
    finally:
        release.set()
        waiting.join()


@settings(max_examples=200)
@given(
    st.lists(
        st.tuples(
            st.lists(st.sampled_from(WORDS[:4]), min_size=1, max_size=3), st.sampled_from("XY"), st.sampled_from("pq")
        ),
        max_size=8,
    ),
    st.lists(st.sampled_from(WORDS), max_size=14),
    st.lists(st.tuples(st.integers(0, 13), st.integers(1, 3)), max_size=2),
    st.sampled_from(["leftmost_longest", "longest"]),
    st.booleans(),
)
def test_component_call_equals_its_steps_one_at_a_time(terms, words, entities, how, overwrite):
    """The component's one compiled pass against the steps it fuses: match, span_group,
    non_overlapping and write_ents, on docs that may already have entities."""
    nlp = BLANK
    component = nlp.create_pipe("bioner_gazetteer", config={"filter": how, "overwrite_ents": overwrite})
    for term, label, kb_id in terms:
        component.gazetteer.add(" ".join(term), label, kb_id)
    docs = [Doc(nlp.vocab, words=words) for _ in range(2)]
    for doc in docs:
        doc.set_ents(spacy.util.filter_spans([Span(doc, s, e, "OLD") for s, e in entities if e <= len(doc) and s < e]))
    gaz, (called, stepwise) = component.gazetteer, docs
    component(called)
    rows = gaz.match(stepwise)
    stepwise.spans["bioner_gazetteer"] = gaz.span_group(stepwise, "bioner_gazetteer", rows)
    gaz.write_ents(stepwise, non_overlapping(rows, how == "longest"), keep_entities=not overwrite)

    def annotations(doc):
        spans = [(s.start, s.end, s.label_, s.kb_id_) for s in doc.spans["bioner_gazetteer"]]
        return spans, [(t.ent_iob_, t.ent_type_, t.ent_kb_id_) for t in doc]

    assert annotations(called) == annotations(stepwise)


def test_word_cache_grows_and_starts_over_with_the_same_matches(nlp):
    """Thousands of distinct words: the encoder's cache grows several times over, and the
    matches read from it equal those of a first reading and of a cache that starts over."""
    gaz = Gazetteer(nlp.tokenizer)
    gaz.add_patterns(
        {"label": label, "pattern": pattern}
        for i in range(0, 3000, 3)
        for label, pattern in [("X", f"w{i}"), ("Y", f"w{i} w{i + 1}")]
    )
    doc = Doc(nlp.vocab, words=[f"w{i}" for i in range(3000)])
    wanted = [(i, i + 1, 0, 0) for i in range(0, 3000, 3)] + [(i, i + 2, 1, 0) for i in range(0, 3000, 3)]
    wanted.sort(key=lambda row: (row[0], row[1] - row[0]))
    assert gaz.match(doc).tolist() == [list(row) for row in wanted]
    assert gaz.match(doc).tolist() == [list(row) for row in wanted]  # every word from the cache
    small = Gazetteer(nlp.tokenizer)
    small._encoder = TokenEncoder(small._word_id, max_size=100)
    small.tables = gaz.tables
    assert small.match(doc).tolist() == [list(row) for row in wanted]


def test_terms_added_one_at_a_time_share_one_loading_tokenizer(nlp):
    """Making the tokenizer that splits terms takes a tenth of a second: adds reuse it."""
    gaz = Gazetteer(nlp.tokenizer)
    gaz.add("w1-a", "X")
    loading = gaz.splitter._loading
    gaz.add("w2-b", "X")
    assert loading is not None and gaz.splitter._loading is loading
    assert found(gaz, nlp("w1-a and w2-b")) == [("w1-a", "X", ""), ("w2-b", "X", "")]
