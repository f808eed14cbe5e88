"""Pipelines saved by spacy-bioner 0.1: recognise them, and rewrite their config into this version's blocks.

0.1 kept every bioner setting as a flat key of `[components.NAME]`; confection
rejects those keys now, so spacy.load stops before any bioner code runs.
The component's own files need no rewrite: `BioNER.from_disk` reads 0.1's cfg.
"""
from pathlib import Path
from typing import List

from spacy.util import load_config

from .ner.settings import from_version_0_1

CONFIG_FILE = "config.cfg"


def _flat_bioner_sections(config) -> List[str]:
    return [name for name, section in config.get("components", {}).items()
            if section.get("factory") == "bioner" and isinstance(section.get("trainer", "perceptron"), str)]


def saved_by_0_1(path: Path) -> bool:
    """Whether `path` is a pipeline directory whose bioner components have 0.1's flat settings."""
    config_path = Path(path) / CONFIG_FILE
    if not config_path.is_file():
        return False
    try:
        return bool(_flat_bioner_sections(load_config(config_path, interpolate=False)))
    except Exception:  # not a config this module can read: not recognisably 0.1's
        return False


def upgrade(path: Path) -> List[str]:
    """Rewrite the 0.1 bioner sections of `path`/config.cfg as config blocks; RETURNS the components upgraded."""
    config_path = Path(path) / CONFIG_FILE
    config = load_config(config_path, interpolate=False)
    names = _flat_bioner_sections(config)
    for name in names:
        section = dict(config["components"][name])
        kept = {key: section.pop(key) for key in ("factory", "scorer") if key in section}
        config["components"][name] = {**kept, **from_version_0_1(section)}
    if names:
        config.to_disk(config_path)
    return names
