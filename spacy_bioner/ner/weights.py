"""The component's weights for its labels: which kind of model, grown as labels are added.

Dense emission rows (n_buckets x tags) are the fastest while they fit; with many
labels they do not (2**19 rows by the 4,001 BILOU tags of 1,000 labels is 8 GB,
and training keeps totals twice that size), so the weights move to SparsePerceptron,
whose scores are the same. Transitions are pairwise or factored (settings.transitions).
"""

from ..core.perceptron import AveragedPerceptron
from ..core.schemes import OUTSIDE, TagScheme
from ..core.sparse_perceptron import SparsePerceptron
from .hmm import CountedHMM
from .settings import Settings

# Dense emission weights up to this many cells: 256 MB of weights, 512 MB of training totals.
DENSE_CELLS = 2**26


def new_weights(settings: Settings, scheme: TagScheme):
    """Untrained weights for these labels; "auto" transitions are decided here."""
    n_buckets, n_tags = settings.n_buckets, scheme.n_tags
    if settings.trainer.name == "hmm":
        return CountedHMM(n_buckets, n_tags)
    _check_fits(settings, n_tags)
    model = (
        AveragedPerceptron(n_buckets, n_tags)
        if n_buckets * n_tags <= DENSE_CELLS
        else SparsePerceptron(n_buckets, n_tags)
    )
    if settings.transitions_for(len(scheme.labels)) == "factored":
        model.factor(scheme.continuing())
    _set_start(model, settings)
    return model


def grown_weights(model, settings: Settings, scheme: TagScheme):
    """Trained weights with columns for labels added since, kept sparse once a dense matrix would be too big."""
    if model.n_tags == scheme.n_tags:
        return model
    _check_fits(settings, scheme.n_tags)
    if model.dense and isinstance(model, AveragedPerceptron) and model.n_buckets * scheme.n_tags > DENSE_CELLS:
        model = SparsePerceptron.from_dense(model)
    model.resize(scheme.n_tags, continuing=scheme.continuing() if model.factored else None)
    return model


def loaded_weights(arrays, settings: Settings, n_buckets: int):
    """Weights as a model's files hold them (AveragedPerceptron.to_arrays)."""
    n_tags = arrays["transition"].shape[1]
    if settings.trainer.name == "hmm":
        model = CountedHMM(0, n_tags)
    else:
        model = SparsePerceptron(n_buckets, n_tags) if "emission_rows" in arrays else AveragedPerceptron(0, n_tags)
    model.load_arrays(arrays)
    _set_start(model, settings)
    return model


def _set_start(model, settings: Settings) -> None:
    """What the averages of training steps read a sentence's start as (settings.trainer.start_transitions;
    the HMM trainer has no such setting: its start counts are probabilities of their own)."""
    if getattr(settings.trainer, "start_transitions", "learned") == "outside":
        model.start_follows = OUTSIDE


def _check_fits(settings: Settings, n_tags: int) -> None:
    if settings.trainer.name != "perceptron" and settings.n_buckets * n_tags > DENSE_CELLS:
        gigabytes = settings.n_buckets * n_tags * 12 / 1e9
        raise ValueError(
            f"The {settings.trainer.name} trainer keeps dense weights: {settings.n_buckets} buckets x {n_tags} tags "
            f"would take {gigabytes:.1f} GB. Lower n_buckets, or use the perceptron, whose weights stay sparse."
        )


def saved_transitions(model) -> str:
    return "factored" if model.factored else "pairwise"
