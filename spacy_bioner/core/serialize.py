"""Safe model files: a JSON config and numpy arrays, read without pickle, and checked
against the SHA-256 digests they were written with.

A component's directory holds its files and `manifest.json`, written last, which lists
each file with its digest: a file changed, cut short or swapped after saving is refused
by name (`read_files`). Bytes (`pack`) carry the digest of their content the same way.
Every failure names the file (or "bytes") and what is wrong with it.
"""

import hashlib
import io
import json
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Optional

import numpy
import srsly
from pydantic import BaseModel, ConfigDict, ValidationError


class ModelFileError(ValueError):
    """A model file is missing, unreadable or inconsistent."""


MANIFEST = "manifest.json"
MANIFEST_FORMAT = "spacy-bioner files v1"
_DIGEST = re.compile(r"[0-9a-f]{64}")


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def write_files(path: Path, files: dict[str, bytes]) -> None:
    """A component's directory: these files, then the manifest of their digests. The old
    manifest goes first, so a save cut short leaves a directory that does not load."""
    path.mkdir(parents=True, exist_ok=True)
    (path / MANIFEST).unlink(missing_ok=True)
    for name, data in files.items():
        (path / name).write_bytes(data)
    write_manifest(path, files)


def write_manifest(path: Path, files: dict[str, bytes]) -> None:
    manifest = {"format": MANIFEST_FORMAT, "sha256": {name: sha256(data) for name, data in sorted(files.items())}}
    partial = path / f"{MANIFEST}.partial"
    partial.write_text(json.dumps(manifest, indent=2), encoding="utf8")
    os.replace(partial, path / MANIFEST)


def read_files(path: Path) -> dict[str, bytes]:
    """Each file `path`'s manifest lists, as bytes, once its digest is checked."""
    listed = path / MANIFEST
    if not listed.is_file():
        raise ModelFileError(
            f"No {MANIFEST} in {path}: the component was not saved completely, or was saved by a spacy-bioner "
            "before 0.3, which listed no checksums. If you trust its files, `bioner upgrade PIPELINE` records them "
            "once."
        )
    try:
        manifest = json.loads(listed.read_text(encoding="utf8"))
        digests = manifest["sha256"]
        valid = (
            manifest["format"] == MANIFEST_FORMAT
            and isinstance(digests, dict)
            and all(
                isinstance(name, str)
                and name
                and name == Path(name).name
                and name != MANIFEST
                and isinstance(digest, str)
                and _DIGEST.fullmatch(digest)
                for name, digest in digests.items()
            )
        )
    except (ValueError, UnicodeDecodeError, KeyError, TypeError) as err:
        raise ModelFileError(f"Corrupted model file {listed}: not a manifest ({err}).") from None
    if not valid:
        raise ModelFileError(
            f"Corrupted model file {listed}: not a {MANIFEST_FORMAT} manifest of file names and SHA-256 digests."
        )
    files = {}
    for name, digest in digests.items():
        file = path / name
        if not file.is_file():
            raise ModelFileError(f"Missing model file {file}: {listed} lists it.")
        data = file.read_bytes()
        if sha256(data) != digest:
            raise ModelFileError(
                f"Damaged model file {file}: its SHA-256 is not the one {listed} lists. Restore it or save the model "
                "again."
            )
        files[name] = data
    return files


def listed_file(files: dict[str, bytes], path: Path, name: str) -> bytes:
    """One of `read_files`' files, which the component's config says it saved."""
    if name not in files:
        raise ModelFileError(f"Missing model file {path / name}: {path / MANIFEST} does not list it.")
    return files[name]


def cfg_bytes(cfg: dict) -> bytes:
    # The standard library's JSON writes floats exactly (srsly's rounds 0.3 to 0.30000000000000004).
    return json.dumps(cfg, indent=2, sort_keys=True).encode("utf8")


def cfg_from_bytes(data: bytes, where: str) -> dict:
    try:
        return json.loads(data.decode("utf8"))
    except (ValueError, UnicodeDecodeError) as err:
        raise ModelFileError(f"Corrupted model file {where}: not valid JSON ({err}).") from None


def validated(schema: type[BaseModel], cfg, where: str) -> None:
    """`cfg` holds exactly the fields of a pydantic `schema`, each of its type and in its range,
    or a ModelFileError names the file and the first bad field."""
    if not isinstance(cfg, dict):
        raise ModelFileError(f"Bad config in {where}: expected a JSON object, got {type(cfg).__name__}.")
    try:
        schema.model_validate(cfg)
    except ValidationError as err:
        first = err.errors()[0]
        if not first["loc"]:  # a rule across fields: the input is the whole config
            raise ModelFileError(f"Bad config in {where}: {first['msg']}.") from None
        field = ".".join(str(part) for part in first["loc"])
        raise ModelFileError(f"Bad config in {where}: {field!r}: {first['msg']}, got {first.get('input')!r}.") from None


class SavedFields(BaseModel):
    """The base of a schema of what a component's cfg file holds."""

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)


def arrays_to_bytes(arrays: dict[str, numpy.ndarray]) -> bytes:
    # Compressed: the perceptron leaves most rows of the hashed table at zero
    # (a CoNLL model: 34 MB raw, 1.9 MB deflated), and the values are kept exactly.
    buffer = io.BytesIO()
    named: dict[str, Any] = arrays  # numpy's stub reads a key as its allow_pickle flag
    numpy.savez_compressed(buffer, **named)
    return buffer.getvalue()


def arrays_from_bytes(data: bytes, where: str) -> dict[str, numpy.ndarray]:
    try:
        with numpy.load(io.BytesIO(data), allow_pickle=False) as archive:
            return {key: archive[key] for key in archive.files}
    except Exception as err:  # zipfile, numpy and pickle-refusal errors all mean a bad file
        # numpy's own message for pickled data suggests loading it unsafely: never pass that on.
        detail = "it holds pickled objects, which no model file has" if "pickle" in str(err) else str(err)
        raise ModelFileError(f"Corrupted weights in {where}: {detail}") from None


def check_array(
    arrays: dict[str, numpy.ndarray], key: str, shape: tuple[int, ...], where: str, dtype=numpy.float32
) -> None:
    if key not in arrays:
        raise ModelFileError(f"Corrupted weights in {where}: no array {key!r}.")
    array = arrays[key]
    if array.dtype != dtype or array.shape != shape:
        raise ModelFileError(
            f"Corrupted weights in {where}: {key!r} is {array.dtype}{array.shape}, expected "
            f"{numpy.dtype(dtype)}{shape}."
        )
    if not numpy.isfinite(array).all():
        raise ModelFileError(f"Corrupted weights in {where}: {key!r} holds NaN or infinite values.")


def check_emission(arrays: dict[str, numpy.ndarray], shape: tuple[int, int], where: str) -> None:
    """Emission weights of a dense (n_buckets, n_tags) matrix: the matrix itself ("emission"), or its
    rows (weight_rows.WeightRows: "emission_index", a row per bucket, and "emission_table")."""
    if "emission_index" not in arrays:
        check_array(arrays, "emission", shape, where)
        return
    n_buckets, n_tags = shape
    check_array(arrays, "emission_index", (n_buckets,), where, numpy.int32)
    n_rows = arrays["emission_table"].shape[0] if "emission_table" in arrays and arrays["emission_table"].ndim else 0
    check_array(arrays, "emission_table", (n_rows, n_tags), where)
    index, table = arrays["emission_index"], arrays["emission_table"]
    if len(table) == 0 or (len(index) and (index.min() < 0 or index.max() >= len(table))):
        raise ModelFileError(
            f"Corrupted weights in {where}: 'emission_index' points outside the {len(table)} rows of 'emission_table'."
        )


def seal(body: bytes) -> bytes:
    """`body` with its SHA-256, as one msgpack message (`opened` checks it)."""
    return srsly.msgpack_dumps({"sha256": sha256(body), "body": body})


def opened(sealed: dict) -> bytes:
    """The body of a loaded `seal` message, once its digest is checked (ValueError if it differs)."""
    if sha256(sealed["body"]) != sealed["sha256"]:
        raise ValueError("its SHA-256 is not the one it was saved with")
    return sealed["body"]


def pack(cfg: dict, arrays: dict[str, numpy.ndarray], **parts: bytes) -> bytes:
    """A component as bytes: its config, its weights, and any other named parts (a gazetteer), sealed."""
    return seal(
        srsly.msgpack_dumps({"cfg": json.dumps(cfg, sort_keys=True), "weights": arrays_to_bytes(arrays), **parts})
    )


def unpack(
    data: bytes, where: str, parts: Sequence[str] = (), optional: Sequence[str] = ()
) -> tuple[dict, dict[str, numpy.ndarray], list[Optional[bytes]]]:
    """The config, weights and named parts of `pack`'s bytes: the `parts`, then
    the `optional` ones (None where absent; which a config needs is its reader's call)."""
    try:
        message = srsly.msgpack_loads(opened(srsly.msgpack_loads(data)))
        cfg = json.loads(message["cfg"])
        weights = message["weights"]
        values = [message[name] for name in parts] + [message.get(name) for name in optional]
    except Exception as err:
        raise ModelFileError(f"Corrupted component data in {where}: {err}") from None
    if not all(isinstance(value, bytes) for value in [weights, *values] if value is not None):
        raise ModelFileError(
            f"Corrupted component data in {where}: {' or '.join(['weights', *parts, *optional])} are not bytes."
        )
    return cfg, arrays_from_bytes(weights, where), values


def write_model(path: Path, cfg: dict, arrays: dict[str, numpy.ndarray], **parts: bytes) -> None:
    """A component's directory: `cfg` (JSON), `weights.npz`, any other named parts, and the manifest."""
    write_files(path, {"cfg": cfg_bytes(cfg), "weights.npz": arrays_to_bytes(arrays), **parts})


def read_model(path: Path) -> tuple[dict, dict[str, numpy.ndarray], dict[str, bytes]]:
    """The config, weights and every file of `write_model`'s directory, checked against its manifest."""
    files = read_files(path)
    cfg = cfg_from_bytes(listed_file(files, path, "cfg"), str(path / "cfg"))
    return cfg, arrays_from_bytes(listed_file(files, path, "weights.npz"), str(path / "weights.npz")), files


def check_meta_labels(path: Path, name: str, labels: Sequence[str]) -> None:
    """The labels a component loaded with are those its pipeline's meta.json lists for it: a component
    directory copied in from another pipeline is refused, not run under the other's labels."""
    meta_path = path.parent / "meta.json"
    try:
        listed = json.loads(meta_path.read_text(encoding="utf8"))["labels"][name]
    except (OSError, ValueError, KeyError, TypeError):  # no pipeline meta around the component, or none for it
        return
    if list(listed) != list(labels):
        raise ModelFileError(
            f"{path} does not belong to the pipeline around it: {meta_path} lists labels {list(listed)} for {name!r}, "
            f"but the component was saved with {list(labels)}."
        )
