"""Training noise: word dropout and match dropout, drawn from the component's one seeded generator.

Both draw from `ner.rng` in the order training meets them, so the same seed and
data give the same weights.
"""

import numpy

from ..core.perceptron import DROPPED


def match_dropout(ner, matches: numpy.ndarray) -> numpy.ndarray:
    """The matches (term lists' or the memory's) an update sees: each hidden with the gazetteer's `match_dropout`."""
    rate = ner.settings.gazetteer.match_dropout
    if rate <= 0 or len(matches) == 0:
        return matches
    return matches[ner.rng.random(len(matches)) >= rate]


def word_dropout(ner, features: numpy.ndarray) -> numpy.ndarray:
    """Hide the word-identity features of a share of the tokens (the trainer's `word_dropout`), in place."""
    rate, identity = ner.settings.trainer.word_dropout, ner.featurizer.identity
    if rate > 0 and len(identity):
        hidden = numpy.nonzero(ner.rng.random(len(features)) < rate)[0]
        features[numpy.ix_(hidden, identity)] = DROPPED
    return features
