import numpy
import pytest
import spacy
from conftest import TRAIN_DATA, make_examples
from spacy.tokens import Doc
from spacy.training import Example

from spacy_bioner.core.features import FeatureExtractor, Lexicon, batch_layout, words_of
from spacy_bioner.core.perceptron import AveragedPerceptron
from spacy_bioner.core.templates import DEFAULT_FAMILIES, N_ATTRIBUTES, compile_templates, word_attributes
from spacy_bioner.core.word_scores import WordScores, reads_one_word, single_word_templates
from spacy_bioner.ner.batch import lay_out
from spacy_bioner.ner.featurizer import features as features_of


def reference_and_cached(lexicon, docs, weights, word_scores, joint, full):
    _, sentence, _, _ = batch_layout(docs)
    rows = lexicon.batch_rows(docs)
    model = AveragedPerceptron(weights.shape[0], weights.shape[1])
    model.load_averages(weights, numpy.zeros((weights.shape[1] + 1, weights.shape[1]), dtype=numpy.float32))
    emission = model.scoring_rows()
    reference = model.scores(full.extract(rows, lexicon.table, sentence))
    cached = word_scores.scores(rows, lexicon.table, sentence, emission, lexicon.generation)
    cached += model.scores(joint.extract(rows, lexicon.table, sentence))
    return reference, cached


@pytest.mark.parametrize("max_rows", [1_000_000, 5])  # 5: the lexicon restarts, and the cache with it
def test_cached_scores_equal_hashed_features(max_rows):
    nlp = spacy.blank("en")
    templates = compile_templates(DEFAULT_FAMILIES + ["names"])
    n_buckets = 97  # few buckets: many collisions, which the cache must add up like the features do
    single = single_word_templates(templates)
    assert any(len(parts) > 1 for _, parts in single)  # "usual_case[0]+case[0]": two attributes of one word
    word_scores = WordScores(single, n_buckets)
    joint = FeatureExtractor([t for t in templates if not reads_one_word(t[1])], n_buckets)
    full = FeatureExtractor(templates, n_buckets)
    lexicon = Lexicon(word_attributes, N_ATTRIBUTES, max_size=max_rows)
    weights = numpy.random.default_rng(0).normal(size=(n_buckets, 5)).astype(numpy.float32)
    for words, starts in [
        ("Alice met Bob in Paris".split(), None),
        ("Paris is big . Bob left".split(), [True, False, False, False, True, False]),
        (["Bob"], None),
        ([f"w{i}" for i in range(1500)], None),  # more words than the cache's first rows: it grows
    ]:
        docs = [Doc(nlp.vocab, words=words, sent_starts=starts), Doc(nlp.vocab, words=["Alice", "and", "Bob"])]
        reference, cached = reference_and_cached(lexicon, docs, weights, word_scores, joint, full)
        assert numpy.allclose(reference, cached, rtol=1e-5, atol=1e-4)
    # New weights (a new averages array) empty the cache.
    reference, cached = reference_and_cached(lexicon, docs, weights * 2, word_scores, joint, full)
    assert numpy.allclose(reference, cached, rtol=1e-5, atol=1e-4)


def test_prediction_with_the_cache_equals_the_training_path(trained_nlp):
    ner = trained_nlp.get_pipe("bioner")
    docs = [trained_nlp.make_doc(text) for text, _ in TRAIN_DATA] + [trained_nlp.make_doc("Carol Smith flew to Berlin")]
    layout = lay_out(ner, docs)
    matches = ner.gazetteer.match_batch(docs)
    emission = ner.model.scoring_rows()
    full = ner.model.scores(features_of(ner, layout, matches), averaged=True)  # history columns empty: the first pass
    cached = ner.featurizer.scores(layout, emission)
    cached += ner.model.scores(features_of(ner, layout, matches, predicting=True), averaged=True)
    assert numpy.allclose(full, cached, rtol=1e-5, atol=1e-4)
    trained_nlp.update(make_examples(trained_nlp))  # new weights: the cache must not serve the old ones
    emission = ner.model.scoring_rows()
    full = ner.model.scores(features_of(ner, layout, matches), averaged=True)  # history columns empty: the first pass
    cached = ner.featurizer.scores(layout, emission)
    cached += ner.model.scores(features_of(ner, layout, matches, predicting=True), averaged=True)
    assert numpy.allclose(full, cached, rtol=1e-5, atol=1e-4)


def test_tagger_predicts_from_the_cache_what_its_features_score():
    nlp = spacy.blank("en")
    tagger = nlp.add_pipe("bioner_tagger", config={"n_buckets": 2**10})  # few buckets: collisions
    data = [("Alice met Bob in Paris .", "NNP VBD NNP IN NNP ."), ("Bob runs fast", "NNP VBZ RB")]
    examples = [Example.from_dict(nlp.make_doc(text), {"tags": tags.split()}) for text, tags in data]
    nlp.initialize(lambda: examples)
    for _ in range(5):
        nlp.update(examples)
    docs = [nlp.make_doc("Paris met Alice \n and runs"), nlp.make_doc("fast Bob"), nlp.make_doc("")]
    features, _, offsets, _ = tagger._scores(docs)  # the training path's features of the words
    scores, cached_offsets, _ = tagger._predicted_scores(docs)
    assert numpy.allclose(tagger.model.scores(features, averaged=True), scores, rtol=1e-5, atol=1e-4)
    assert cached_offsets.tolist() == offsets.tolist()
    full = tagger._decode(tagger.model.scores(features, averaged=True), offsets, averaged=True)
    predicted = numpy.concatenate([ids[ids >= 0] for ids in tagger.predict(docs)])  # whitespace: -1
    assert predicted.tolist() == full.tolist()


@pytest.mark.parametrize(
    "is_space,starts",
    [
        ([False] * 5, [0, 2, 5]),
        ([False, True, False, True, True], [0, 2, 5]),
        ([True, True], [0, 1, 2]),
        ([], [0]),
    ],
)
def test_words_of_skips_whitespace_tokens(is_space, starts):
    words, word_starts = words_of(numpy.array(is_space, dtype=bool), starts)
    expected = [i for i, space in enumerate(is_space) if not space]
    assert words.tolist() == expected
    assert word_starts.tolist() == [sum(1 for i in expected if i < start) for start in starts]


def test_a_lexicon_starting_over_leaves_the_rows_a_call_may_hold():
    nlp = spacy.blank("en")
    lexicon = Lexicon(word_attributes, N_ATTRIBUTES, max_size=4)
    lexicon.batch_rows([Doc(nlp.vocab, words=["Alice", "met", "Bob"])])
    table, mentions = lexicon.table, lexicon.mention_ids
    held = table.copy(), mentions.copy()
    lexicon.batch_rows([Doc(nlp.vocab, words=["Carol", "saw", "Dan"])])  # past max_size: it starts over
    assert lexicon.generation == 1 and lexicon.table is not table
    assert numpy.array_equal(table, held[0]) and numpy.array_equal(mentions, held[1])
