import numpy
import pytest
import spacy
from conftest import TRAIN_DATA, train_nlp

from spacy_bioner.core.features import Lexicon
from spacy_bioner.core.perceptron import DROPPED
from spacy_bioner.core.templates import COLUMNS, N_ATTRIBUTES, word_attributes
from spacy_bioner.ner.document import DOCUMENT_FEATURES, document_features


def features_of(words, sentence_starts=None):
    nlp = spacy.blank("en")
    lexicon = Lexicon(word_attributes, N_ATTRIBUTES, mention_column=COLUMNS["lower"])
    orths = numpy.array([nlp.vocab.strings.add(w) for w in words], dtype=numpy.uint64)
    rows = lexicon.rows(orths, nlp.vocab.strings)
    starts = sentence_starts or [0] * len(words)
    sentence = numpy.cumsum(starts).astype(numpy.int32)
    return document_features(rows, lexicon.table, lexicon.mention_ids[rows], sentence, 2**20)


def test_first_mentions_have_no_first_mention_context():
    words = "Mr. Jordan said Jordan left , Jordan".split()
    out = features_of(words)
    assert out.shape == (len(words), len(DOCUMENT_FEATURES)) and out.dtype == numpy.uint32
    first_prev, first_next = out[:, 1], out[:, 2]
    assert first_prev[1] == DROPPED and first_next[1] == DROPPED  # the first "Jordan"
    # Later mentions see the words around the first one ("Mr." before, "said" after) ...
    assert first_prev[3] == first_prev[6] != DROPPED and first_next[3] == first_next[6] != DROPPED
    # ... and so does a later mention of a word first seen elsewhere: "said" never repeats.
    assert first_prev[2] == DROPPED


def test_case_elsewhere_changes_the_case_feature():
    # "Apple" capitalized away from a sentence start in one doc, lowercase elsewhere in the other.
    proper = features_of("We like Apple . Apple rose".split())
    common = features_of("We like apple . Apple rose".split())
    assert proper[4, 0] != common[4, 0]
    # Same own case and same evidence, same feature.
    assert proper[4, 0] == features_of("They met Apple and Apple".split())[4, 0]


def test_document_family_trains_and_round_trips(tmp_path):
    nlp = train_nlp({"features": ["word", "window", "shape", "document"]})
    for text, gold in TRAIN_DATA:
        assert [(e.start_char, e.end_char, e.label_) for e in nlp(text).ents] == gold
    nlp.to_disk(tmp_path)
    loaded = spacy.load(tmp_path)
    assert loaded.get_pipe("bioner").settings.features[-1] == "document"
    assert [e.text for e in loaded(TRAIN_DATA[1][0]).ents] == [e.text for e in nlp(TRAIN_DATA[1][0]).ents]


def test_history_gives_the_majority_type_of_other_mentions():
    from spacy_bioner.ner.document import HISTORY_FEATURES, history_features

    nlp = spacy.blank("en")
    lexicon = Lexicon(word_attributes, N_ATTRIBUTES, mention_column=COLUMNS["lower"])
    words = "Jordan met Jordan and Jordan in Amman".split()
    orths = numpy.array([nlp.vocab.strings.add(w) for w in words], dtype=numpy.uint64)
    rows = lexicon.rows(orths, nlp.vocab.strings)
    # First-pass types: 0 = O, 1 = PER, 2 = LOC.
    out = history_features(rows, lexicon.table, lexicon.mention_ids[rows], numpy.array([1, 0, 1, 0, 2, 0, 2]), 3, 2**20)
    assert out.shape == (len(words), len(HISTORY_FEATURES))
    # Token 4 (LOC) sees two PER mentions; token 0 sees one PER and one LOC: argmax keeps the first, PER.
    assert out[4, 0] == out[0, 0] == out[2, 0] != DROPPED
    assert (out[[1, 5, 6]] == DROPPED).all()  # "met", "in", "Amman" have no other mention
    changed = history_features(
        rows, lexicon.table, lexicon.mention_ids[rows], numpy.array([2, 0, 2, 0, 2, 0, 2]), 3, 2**20
    )
    assert changed[0, 0] != out[0, 0]


def test_history_family_trains_and_round_trips(tmp_path):
    nlp = train_nlp({"features": ["word", "window", "shape", "document", "history"]})
    for text, gold in TRAIN_DATA:
        assert [(e.start_char, e.end_char, e.label_) for e in nlp(text).ents] == gold
    nlp.to_disk(tmp_path)
    loaded = spacy.load(tmp_path)
    docs = [nlp(text) for text, _ in TRAIN_DATA]
    assert [[e.text for e in d.ents] for d in loaded.pipe(t for t, _ in TRAIN_DATA)] == [
        [e.text for e in d.ents] for d in docs
    ]


def test_docs_laid_end_to_end_get_their_own_features():
    from spacy_bioner.ner.document import history_features

    nlp = spacy.blank("en")
    lexicon = Lexicon(word_attributes, N_ATTRIBUTES, mention_column=COLUMNS["lower"])
    docs = ["Jordan met Jordan".split(), "Jordan left Amman".split(), [], "Amman".split()]
    words = [w for d in docs for w in d]
    rows = lexicon.rows(numpy.array([nlp.vocab.strings.add(w) for w in words], dtype=numpy.uint64), nlp.vocab.strings)
    offsets = numpy.cumsum([0] + [len(d) for d in docs]).astype(numpy.int64)
    sentence = numpy.repeat(numpy.arange(len(docs), dtype=numpy.int32), [len(d) for d in docs])
    types = numpy.array([1, 0, 1, 2, 0, 2, 2], dtype=numpy.int64)
    mentions = lexicon.mention_ids[rows]
    together = document_features(rows, lexicon.table, mentions, sentence, 2**20, offsets)
    history = history_features(rows, lexicon.table, mentions, types, 3, 2**20, offsets)
    for a, b in zip(offsets[:-1], offsets[1:]):
        assert (together[a:b] == document_features(rows[a:b], lexicon.table, mentions[a:b], sentence[a:b], 2**20)).all()
        assert (history[a:b] == history_features(rows[a:b], lexicon.table, mentions[a:b], types[a:b], 3, 2**20)).all()
    with pytest.raises(ValueError, match="offsets must rise"):
        document_features(rows, lexicon.table, mentions, sentence, 2**20, numpy.array([0, 3], dtype=numpy.int64))


def test_mention_ids_number_lowercase_forms():
    nlp = spacy.blank("en")
    lexicon = Lexicon(word_attributes, N_ATTRIBUTES, max_size=4, mention_column=COLUMNS["lower"])
    words = ["Jordan", "JORDAN", "Amman", "jordan"]
    rows = lexicon.rows(numpy.array([nlp.vocab.strings.add(w) for w in words], dtype=numpy.uint64), nlp.vocab.strings)
    ids = lexicon.mention_ids[rows]
    assert ids[0] == ids[1] == ids[3] != ids[2]
    # A restart of the full cache numbers the forms anew, from 0.
    rows = lexicon.rows(
        numpy.array([nlp.vocab.strings.add(w) for w in ["Amman", "amman"]], dtype=numpy.uint64), nlp.vocab.strings
    )
    assert lexicon.generation == 1 and lexicon.mention_ids[rows].tolist() == [0, 0]
    with pytest.raises(ValueError, match="mention_column"):
        Lexicon(word_attributes, N_ATTRIBUTES, mention_column=N_ATTRIBUTES)
    with pytest.raises(ValueError, match="mention ids"):
        document_features(
            rows, lexicon.table, numpy.zeros(1, dtype=numpy.int32), numpy.zeros(2, dtype=numpy.int32), 2**20
        )


def test_a_long_batch_groups_mentions_as_each_short_doc_does():
    from spacy_bioner.ner.document import SHORT_BATCH, history_features

    nlp = spacy.blank("en")
    lexicon = Lexicon(word_attributes, N_ATTRIBUTES, mention_column=COLUMNS["lower"])
    rng = numpy.random.default_rng(0)
    vocabulary = ["Jordan", "jordan", "Amman", "met", "left", "JORDAN", "the"]
    docs = [[vocabulary[k] for k in rng.integers(0, len(vocabulary), size=rng.integers(1, 12))] for _ in range(20)]
    words = [w for d in docs for w in d]
    assert len(words) > SHORT_BATCH  # the batch reads a table of mention ids, each doc alone compares tokens
    rows = lexicon.rows(numpy.array([nlp.vocab.strings.add(w) for w in words], dtype=numpy.uint64), nlp.vocab.strings)
    offsets = numpy.cumsum([0] + [len(d) for d in docs]).astype(numpy.int64)
    sentence = numpy.repeat(numpy.arange(len(docs), dtype=numpy.int32), [len(d) for d in docs])
    types = rng.integers(0, 3, size=len(words)).astype(numpy.int64)
    mentions = lexicon.mention_ids[rows]
    together = document_features(rows, lexicon.table, mentions, sentence, 2**20, offsets)
    history = history_features(rows, lexicon.table, mentions, types, 3, 2**20, offsets)
    assert (history != DROPPED).any()
    for a, b in zip(offsets[:-1], offsets[1:]):
        assert (together[a:b] == document_features(rows[a:b], lexicon.table, mentions[a:b], sentence[a:b], 2**20)).all()
        assert (history[a:b] == history_features(rows[a:b], lexicon.table, mentions[a:b], types[a:b], 3, 2**20)).all()
