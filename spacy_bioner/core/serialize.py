"""Safe model files: a JSON config and numpy arrays, read without pickle.

Every failure names the file (or "bytes") and what is wrong with it.
"""
import io
import json
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import numpy
import srsly


class ModelFileError(ValueError):
    """A model file is missing, unreadable or inconsistent."""


def write_cfg(path: Path, cfg: dict) -> None:
    # The standard library's JSON writes floats exactly (srsly's rounds 0.3 to 0.30000000000000004).
    path.write_text(json.dumps(cfg, indent=2, sort_keys=True), encoding="utf8")


def read_cfg(path: Path) -> dict:
    if not path.exists():
        raise ModelFileError(f"Missing model file {path}: the component's directory is incomplete.")
    try:
        return json.loads(path.read_text(encoding="utf8"))
    except (ValueError, UnicodeDecodeError) as err:
        raise ModelFileError(f"Corrupted model file {path}: not valid JSON ({err}).") from None


def check_keys(cfg: dict, keys: Dict[str, type], where: str) -> None:
    """Each key is present with a value of its type."""
    if not isinstance(cfg, dict):
        raise ModelFileError(f"Bad config in {where}: expected a JSON object, got {type(cfg).__name__}.")
    for key, kind in keys.items():
        if not isinstance(cfg.get(key), kind):
            raise ModelFileError(f"Bad config in {where}: {key!r} should be a {kind.__name__}, got {cfg.get(key)!r}.")


def arrays_to_bytes(arrays: Dict[str, numpy.ndarray]) -> bytes:
    # Compressed: the perceptron leaves most rows of the hashed table at zero
    # (a CoNLL model: 34 MB raw, 1.9 MB deflated), and the values are kept exactly.
    buffer = io.BytesIO()
    numpy.savez_compressed(buffer, **arrays)
    return buffer.getvalue()


def arrays_from_bytes(data: bytes, where: str) -> Dict[str, numpy.ndarray]:
    try:
        with numpy.load(io.BytesIO(data), allow_pickle=False) as archive:
            return {key: archive[key] for key in archive.files}
    except Exception as err:  # zipfile, numpy and pickle-refusal errors all mean a bad file
        raise ModelFileError(f"Corrupted weights in {where}: {err}") from None


def write_arrays(path: Path, arrays: Dict[str, numpy.ndarray]) -> None:
    path.write_bytes(arrays_to_bytes(arrays))


def read_arrays(path: Path) -> Dict[str, numpy.ndarray]:
    if not path.exists():
        raise ModelFileError(f"Missing model file {path}: the component's directory is incomplete.")
    return arrays_from_bytes(path.read_bytes(), str(path))


def check_array(arrays: Dict[str, numpy.ndarray], key: str, shape: Tuple[int, ...], where: str, dtype=numpy.float32) -> None:
    if key not in arrays:
        raise ModelFileError(f"Corrupted weights in {where}: no array {key!r}.")
    array = arrays[key]
    if array.dtype != dtype or array.shape != shape:
        raise ModelFileError(
            f"Corrupted weights in {where}: {key!r} is {array.dtype}{array.shape}, expected {numpy.dtype(dtype)}{shape}."
        )
    if not numpy.isfinite(array).all():
        raise ModelFileError(f"Corrupted weights in {where}: {key!r} holds NaN or infinite values.")


def read_bytes(path: Path) -> bytes:
    if not path.exists():
        raise ModelFileError(f"Missing model file {path}: the component's directory is incomplete.")
    return path.read_bytes()


def pack(cfg: dict, arrays: Dict[str, numpy.ndarray], **parts: bytes) -> bytes:
    """A component as bytes: its config, its weights, and any other named parts (a gazetteer)."""
    return srsly.msgpack_dumps({"cfg": json.dumps(cfg, sort_keys=True), "weights": arrays_to_bytes(arrays), **parts})


def unpack(
    data: bytes, where: str, parts: Sequence[str] = (), optional: Sequence[str] = ()
) -> Tuple[dict, Dict[str, numpy.ndarray], List[Optional[bytes]]]:
    """The config, weights and named parts of `pack`'s bytes: the `parts`, then
    the `optional` ones (None where absent; which a config needs is its reader's call)."""
    try:
        message = srsly.msgpack_loads(data)
        cfg = json.loads(message["cfg"])
        weights = message["weights"]
        values = [message[name] for name in parts] + [message.get(name) for name in optional]
    except Exception as err:
        raise ModelFileError(f"Corrupted component data in {where}: {err}") from None
    if not all(isinstance(value, bytes) for value in [weights, *values] if value is not None):
        raise ModelFileError(f"Corrupted component data in {where}: {' or '.join(['weights', *parts, *optional])} are not bytes.")
    return cfg, arrays_from_bytes(weights, where), values


def write_model(path: Path, cfg: dict, arrays: Dict[str, numpy.ndarray]) -> None:
    """A component's directory: `cfg` (JSON) and `weights.npz`."""
    path.mkdir(parents=True, exist_ok=True)
    write_cfg(path / "cfg", cfg)
    write_arrays(path / "weights.npz", arrays)


def read_model(path: Path) -> Tuple[dict, Dict[str, numpy.ndarray]]:
    """The config and weights of `write_model`'s directory."""
    return read_cfg(path / "cfg"), read_arrays(path / "weights.npz")
