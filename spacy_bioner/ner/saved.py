"""What a bioner component's files hold, read back and checked: the config of what training
fixed, and weights of the shapes that config gives. A damaged or foreign file is named with
its problem (serialize.ModelFileError), never loaded as it is."""

from collections.abc import Sequence
from typing import Any

import numpy

from ..core import serialize
from ..core.schemes import TagScheme
from ..core.templates import TEMPLATES_VERSION
from .settings import TRAINED_KEYS, Settings, from_version_0_1

# 2: the component's files hold what training fixed (the settings that shape the weights, the labels);
# the other settings come from the pipeline's config. 0.1 saved every setting as a flat key, without this field.
# 3: transitions may be factored and emission weights sparse (weights.py); 2 is read as pairwise and dense.
FORMAT_VERSION = 3


def component_cfg(settings: Settings, labels: Sequence[str] = (), **learned: Any) -> dict[str, Any]:
    """A component's `cfg`: what spaCy's ner has there (labels, incorrect_spans_key), and what it learned
    beside. "labels_from_presets": labels first met on preset entities when tagging (as spaCy's ner, bioner
    adds them), which no training has taught: their entities are kept, never predicted."""
    return {
        "labels": list(labels),
        "incorrect_spans_key": settings.incorrect_spans_key,
        "labels_from_presets": [],
        **learned,
    }


def read_cfg(cfg, where: str) -> tuple[Settings, list[str], dict[str, int]]:
    """A saved component's settings, labels and what else it learned (the longest entity, labels met on presets),
    checked;
    a model saved by 0.1 is read in this version's form."""
    if not isinstance(cfg, dict):
        raise serialize.ModelFileError(f"Bad config in {where}: expected a JSON object, got {type(cfg).__name__}.")
    if cfg.get("templates_version") != TEMPLATES_VERSION:
        raise serialize.ModelFileError(
            f"Model in {where} was trained with feature templates version {cfg.get('templates_version', 1)}; "
            f"this spacy-bioner uses version {TEMPLATES_VERSION}: retrain it (or use the version that trained it)."
        )
    version = cfg.get("format_version", 1)
    if version not in (1, 2, FORMAT_VERSION):
        raise serialize.ModelFileError(
            f"Model in {where} has format version {version!r}, newer than this spacy-bioner reads: upgrade it."
        )
    labels = cfg.get("labels")
    if not isinstance(labels, list) or not all(isinstance(label, str) and label for label in labels):
        raise serialize.ModelFileError(
            f"Bad config in {where}: 'labels' must be a list of non-empty strings, got {labels!r}."
        )
    longest = cfg.get("longest_entity")
    if longest is not None and not (isinstance(longest, int) and not isinstance(longest, bool) and longest >= 1):
        raise serialize.ModelFileError(
            f"Bad config in {where}: 'longest_entity' must be a positive integer, got {longest!r}."
        )
    learned: dict[str, Any] = {} if longest is None else {"longest_entity": longest}
    from_presets = cfg.get("labels_from_presets", [])
    if not isinstance(from_presets, list) or not set(from_presets) <= set(labels):
        raise serialize.ModelFileError(
            f"Bad config in {where}: 'labels_from_presets' must be a list of some of the labels, got {from_presets!r}."
        )
    if from_presets:
        learned["labels_from_presets"] = list(from_presets)
    try:
        if version == 1:
            saved = from_version_0_1(cfg)
            return (
                Settings.from_cfg(
                    {
                        key: saved[key]
                        for key in (
                            "scheme",
                            "n_buckets",
                            "features",
                            "seed",
                            "trainer",
                            "confidence",
                            "rules",
                            "gazetteer",
                        )
                    }
                ),
                labels,
                learned,
            )
        return (
            Settings.from_trained_cfg(
                {"transitions": "pairwise", **{key: cfg[key] for key in TRAINED_KEYS if key in cfg}}
            ),
            labels,
            learned,
        )
    except (ValueError, KeyError, TypeError) as err:
        detail = f"no {err}" if isinstance(err, KeyError) else " ".join(str(err).split())
        raise serialize.ModelFileError(f"Bad config in {where}: {detail}") from None


def check_trained(name: str, settings: Settings, trained: Settings, where: str) -> None:
    """The config may change any setting but those that shaped the trained weights."""
    for key, wanted in settings.trained_cfg().items():
        was = trained.trained_cfg()[key]
        if wanted != was and not (key == "transitions" and wanted == "auto"):
            raise ValueError(
                f"{name}: the config sets {key} = {wanted!r}, but the model in {where} was trained with {was!r}, "
                f"and {key} cannot change after training: set it back, or train a new model."
            )


def check_weights(arrays, n_buckets: int, scheme: TagScheme, transitions: str, where: str) -> None:
    """The saved weights have the shapes that the saved settings and labels give."""
    n_tags = scheme.n_tags
    serialize.check_array(arrays, "transition", (n_tags + 1, n_tags), where)
    if "emission_rows" in arrays:
        serialize.check_array(arrays, "emission_rows", (n_buckets + 1,), where, numpy.int64)
        n_cells = int(arrays["emission_rows"][-1])
        serialize.check_array(arrays, "emission_tags", (n_cells,), where, numpy.int32)
        serialize.check_array(arrays, "emission_weights", (n_cells,), where)
        tags = arrays["emission_tags"]
        if (numpy.diff(arrays["emission_rows"]) < 0).any() or (len(tags) and (tags.min() < 0 or tags.max() >= n_tags)):
            raise serialize.ModelFileError(
                f"Corrupted weights in {where}: the sparse emission rows do not fit {n_tags} tags."
            )
    else:
        serialize.check_emission(arrays, (n_buckets, n_tags), where)
    if transitions == "factored":
        serialize.check_array(arrays, "exits", (n_tags + 1,), where)
        serialize.check_array(arrays, "entries", (n_tags,), where)
        serialize.check_array(arrays, "continuing", (n_tags,), where, numpy.uint8)
        if not numpy.array_equal(arrays["continuing"].astype(bool), scheme.continuing()):
            raise serialize.ModelFileError(
                f"Corrupted weights in {where}: 'continuing' does not match the {scheme.name} tags."
            )
    elif "continuing" in arrays:
        raise serialize.ModelFileError(
            f"Corrupted weights in {where}: factored transitions, but the config says pairwise."
        )
