"""Pipelines saved by an older spacy-bioner: recognise them, and bring them to this version's form.

0.1 kept every bioner setting as a flat key of `[components.NAME]`; confection
rejects those keys now, so spacy.load stops before any bioner code runs.
Before 0.3 a component's directory had no manifest of its files' digests,
which loading now requires (core/serialize.py): upgrading records them, once,
for the files as they are. The files themselves need no rewrite:
`BioNER.from_disk` reads 0.1's cfg.
"""

from pathlib import Path

from spacy.util import load_config

from .core.serialize import MANIFEST, write_manifest
from .ner.settings import from_version_0_1

CONFIG_FILE = "config.cfg"
FACTORIES = ("bioner", "bioner_tagger", "bioner_parser", "bioner_gazetteer")


def _flat_bioner_sections(config) -> list[str]:
    return [
        name
        for name, section in config.get("components", {}).items()
        if section.get("factory") == "bioner" and isinstance(section.get("trainer", "perceptron"), str)
    ]


def saved_by_0_1(path: Path) -> bool:
    """Whether `path` is a pipeline directory whose bioner components have 0.1's flat settings."""
    config_path = Path(path) / CONFIG_FILE
    if not config_path.is_file():
        return False
    try:
        return bool(_flat_bioner_sections(load_config(config_path, interpolate=False)))
    except Exception:  # not a config this module can read: not recognisably 0.1's
        return False


def upgrade(path: Path) -> list[str]:
    """Rewrite the 0.1 bioner sections of `path`/config.cfg as config blocks, and record the files of
    each spacy-bioner component that has no manifest; RETURNS the components upgraded."""
    config_path = Path(path) / CONFIG_FILE
    config = load_config(config_path, interpolate=False)
    names = _flat_bioner_sections(config)
    for name in names:
        section = dict(config["components"][name])
        kept = {key: section.pop(key) for key in ("factory", "scorer") if key in section}
        config["components"][name] = {**kept, **from_version_0_1(section)}
    if names:
        config.to_disk(config_path)
    unlisted = [
        name
        for name, section in config.get("components", {}).items()
        if section.get("factory") in FACTORIES
        and (Path(path) / name).is_dir()
        and not (Path(path) / name / MANIFEST).exists()
    ]
    for name in unlisted:
        directory = Path(path) / name
        write_manifest(
            directory, {file.name: file.read_bytes() for file in sorted(directory.iterdir()) if file.is_file()}
        )
    return sorted(set(names) | set(unlisted))
