"""The generative baseline: a hidden Markov model over the same hashed features.

Training only counts: how often each feature occurs on a token of each tag,
and how often each tag follows each other (the start row last). Tagging
scores a tag by log P(tag | previous tag) plus, as in naive Bayes, the sum of
log P(feature | tag) over the token's features, add-one (Laplace) smoothed,
and decodes with the same constrained Viterbi. Features that need a first
decoding pass (`history`) cannot be counted from the gold tags alone.
"""

from typing import Optional

import numpy

from ..core.perceptron import DROPPED, AveragedPerceptron


class CountedHMM:
    """Feature and transition counts, and the log-probabilities they give.

    n_buckets (int): Rows of the hashed feature table.
    n_tags (int): Tags.
    smoothing (float): Added to every count (add-one smoothing by default).
    """

    dense = True  # as AveragedPerceptron says of its weights: a matrix, pairwise transitions
    factored = False

    def __init__(self, n_buckets: int, n_tags: int, smoothing: float = 1.0):
        self.feature_counts = numpy.zeros((n_buckets, n_tags), dtype=numpy.float32)
        self.transition_counts = numpy.zeros((n_tags + 1, n_tags), dtype=numpy.float32)
        self.smoothing = smoothing
        self._scorer: Optional[AveragedPerceptron] = None
        self._frozen = False  # loaded log-probabilities without their counts

    @property
    def n_buckets(self) -> int:
        return self.feature_counts.shape[0]

    @property
    def n_tags(self) -> int:
        return self.feature_counts.shape[1]

    def count(self, features: numpy.ndarray, gold: numpy.ndarray) -> None:
        """Add one sequence's features and transitions under its gold tags."""
        if self._frozen:
            raise ValueError(
                "This hmm was loaded from its log-probabilities, not its counts: train a new one from scratch."
            )
        present = features != DROPPED
        numpy.add.at(self.feature_counts, (features[present], numpy.repeat(gold, present.sum(axis=1))), 1.0)
        previous = numpy.concatenate([[self.n_tags], gold[:-1]])
        numpy.add.at(self.transition_counts, (previous, gold), 1.0)
        self._scorer = None

    def averages(self) -> tuple[numpy.ndarray, numpy.ndarray]:
        """(emission, transition) log-probabilities, float32; cached until the next count."""
        return self._fitted().averages()

    def _fitted(self) -> AveragedPerceptron:
        """The log-probabilities of the counts so far, as a scorer; made once per count."""
        if self._scorer is None:
            a = self.smoothing
            emission = numpy.log(self.feature_counts + a) - numpy.log(
                self.feature_counts.sum(axis=0) + a * self.n_buckets
            )
            transition = numpy.log(self.transition_counts + a) - numpy.log(
                self.transition_counts.sum(axis=1, keepdims=True) + a * self.n_tags
            )
            return self._load(emission, transition)
        return self._scorer

    def _load(self, emission: numpy.ndarray, transition: numpy.ndarray) -> AveragedPerceptron:
        self._scorer = AveragedPerceptron(0, emission.shape[1])
        self._scorer.load_averages(emission.astype(numpy.float32), transition.astype(numpy.float32))
        return self._scorer

    def load_averages(self, emission: numpy.ndarray, transition: numpy.ndarray) -> None:
        """Take saved log-probabilities (tagging only: the counts are not saved)."""
        self.feature_counts = numpy.zeros(emission.shape, dtype=numpy.float32)
        self.transition_counts = numpy.zeros(transition.shape, dtype=numpy.float32)
        self._load(emission, transition)
        self._frozen = True

    def load_arrays(self, arrays) -> None:
        self.load_averages(arrays["emission"], arrays["transition"])

    def to_arrays(self):
        emission, transition = self.averages()  # every row holds log-probabilities: kept dense
        return {"emission": emission, "transition": transition}

    def scoring_rows(self):
        return self._fitted().scoring_rows()

    def weights_of(self, features: numpy.ndarray, tag: int) -> numpy.ndarray:
        return self._fitted().weights_of(features, tag)

    def decoding_weights(self, averaged: bool = True):
        return self.transitions(), None

    def scores(self, features: numpy.ndarray, averaged: bool = True) -> numpy.ndarray:
        return self._fitted().scores(features)

    def transitions(self, averaged: bool = True) -> numpy.ndarray:
        return self.averages()[1]

    def resize(self, n_tags: int, continuing=None) -> None:
        """Zero counts for new tags; the start row stays last."""
        extra = n_tags - self.n_tags
        if extra < 0:
            raise ValueError(f"Cannot shrink from {self.n_tags} to {n_tags} tags")
        old = self.transition_counts
        self.feature_counts = numpy.pad(self.feature_counts, ((0, 0), (0, extra)))
        self.transition_counts = numpy.zeros((n_tags + 1, n_tags), dtype=numpy.float32)
        self.transition_counts[: old.shape[0] - 1, : old.shape[1]] = old[:-1]
        self.transition_counts[-1, : old.shape[1]] = old[-1]
        self._scorer = None
