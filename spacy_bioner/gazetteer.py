"""Term lists matched in one pass: an Aho-Corasick automaton over normalized token text.

A term is tokenized like the text it will be found in, each token normalized
(NFKC, then casefold unless case-sensitive), and the tokens joined by single
spaces with a space at each end. A doc becomes the same kind of string over its
non-whitespace tokens, so every match starts and ends on token boundaries, and a
multi-token term matches whatever whitespace separates its tokens in the text.
"""
import io
import json
import unicodedata
import warnings
from array import array
from pathlib import Path
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Tuple, Union

import ahocorasick
import numpy
import srsly
from spacy.attrs import IS_SPACE, ORTH

from .serialize import ModelFileError

Match = Tuple[int, int, int, int]  # token start, token end, label index, kb id index

TERM_SUFFIXES = {".jsonl": "jsonl", ".tsv": "tsv", ".txt": "text"}
FILTERS = ("leftmost_longest", "longest")
GAZETTEER_MODES = ("features", "fallback", "ents")


def _fast_tokens(term: str, special_cases) -> Optional[List[str]]:
    # Words of only letters or only digits are never split by spaCy's rules,
    # except the tokenizer's special cases: those, and anything else, go to it.
    words = term.split()
    if all((w.isalpha() or w.isdigit()) and w not in special_cases for w in words):
        return words
    return None


class Gazetteer:
    """Labelled terms with optional KB ids, compiled for matching.

    tokenizer (Callable[[str], Doc]): Splits terms as the pipeline splits text.
    case_sensitive (bool): Match case exactly (Unicode NFKC applies either way).
    """

    def __init__(self, tokenizer: Callable, case_sensitive: bool = False):
        self.tokenizer = tokenizer
        self.case_sensitive = case_sensitive
        self.labels: List[str] = []
        self.kb_ids: List[str] = [""]
        self._label_index: Dict[str, int] = {}
        self._kb_index: Dict[str, int] = {"": 0}
        self._keys: List[str] = []  # normalized key of each key id, without the outer spaces
        self._entries: Dict[int, List[Tuple[int, int]]] = {}  # key id -> (label, kb id) pairs
        self._automaton = ahocorasick.Automaton(ahocorasick.STORE_INTS)
        self._compiled = False
        self._key_tokens = array("i")  # tokens per key
        self._norm_cache: Dict[int, str] = {}  # token ORTH -> normalized text
        self.skipped = 0

    def __len__(self) -> int:
        return len(self._keys)

    @property
    def special_cases(self):
        return getattr(self.tokenizer, "rules", None) or {}

    def normalize(self, text: str) -> str:
        """The matching form of one token's text."""
        norm = unicodedata.normalize("NFKC", text)
        if not self.case_sensitive:
            norm = norm.casefold()
        return "".join(norm.split())

    def _term_key(self, term: str) -> str:
        tokens = _fast_tokens(term, self.special_cases)
        if tokens is None:
            tokens = [t.text for t in self.tokenizer(term) if not t.is_space]
        return " ".join(filter(None, (self.normalize(t) for t in tokens)))

    def add(self, term: str, label: str, kb_id: str = "") -> bool:
        """Add one term. RETURNS (bool): False if it normalizes to nothing (skipped)."""
        if not isinstance(term, str):
            raise TypeError(
                f"Gazetteer terms are strings; got {type(term).__name__} {term!r}. "
                "Token patterns (lists of dicts) are not supported: use spaCy's EntityRuler for those."
            )
        if not isinstance(label, str) or not label:
            raise ValueError(f"Term {term!r} has no label (got {label!r}).")
        key = self._term_key(term)
        if not key:
            self.skipped += 1
            return False
        key_id = self._automaton.get(f" {key} ", -1)
        if key_id < 0:
            key_id = len(self._keys)
            self._keys.append(key)
            self._key_tokens.append(key.count(" ") + 1)
            self._automaton.add_word(f" {key} ", key_id)
            self._compiled = False
        label_id = self._label_index.setdefault(label, len(self.labels))
        if label_id == len(self.labels):
            self.labels.append(label)
        kb = self._kb_index.setdefault(str(kb_id or ""), len(self.kb_ids))
        if kb == len(self.kb_ids):
            self.kb_ids.append(str(kb_id))
        entries = self._entries.setdefault(key_id, [])
        if (label_id, kb) not in entries:
            entries.append((label_id, kb))
        return True

    def add_patterns(self, patterns: Iterable[dict]) -> None:
        """Add EntityRuler-style phrase patterns: {"label": ..., "pattern": "...", "id": ...}."""
        for i, pattern in enumerate(patterns):
            if not isinstance(pattern, dict) or "pattern" not in pattern or "label" not in pattern:
                raise ValueError(f"Pattern {i} must be a dict with 'label' and 'pattern', got {pattern!r}.")
            self.add(pattern["pattern"], pattern["label"], pattern.get("id", ""))

    def load(self, path: Union[str, Path], label: Optional[str] = None) -> int:
        """Add the terms of a file, or of every term file in a directory (streamed).

        path: `.jsonl` (EntityRuler phrase patterns), `.tsv` (term, label[, id]),
            `.txt` (one term per line, needs `label`), or a directory of those.
        RETURNS (int): The number of terms added.
        """
        path = Path(path)
        if path.is_dir():
            files = sorted(p for p in path.rglob("*") if p.suffix in TERM_SUFFIXES and p.is_file())
            if not files:
                raise ValueError(f"No term files (*.jsonl, *.tsv, *.txt) in directory {path}.")
            return sum(self.load(p, label) for p in files)
        if not path.exists():
            raise FileNotFoundError(f"Gazetteer file not found: {path}")
        kind = TERM_SUFFIXES.get(path.suffix)
        if kind is None:
            raise ValueError(f"Unknown gazetteer file type {path.name!r}: use .jsonl, .tsv or .txt.")
        if kind == "text" and not label:
            raise ValueError(f"Plain-text term list {path} needs a label (config: gazetteer_label).")
        skipped_before = self.skipped
        added = 0
        for term, term_label, kb_id in _read_terms(path, kind, label):
            added += self.add(term, term_label, kb_id)
        if self.skipped > skipped_before:
            warnings.warn(f"{path}: skipped {self.skipped - skipped_before} empty terms.")
        return added

    def _compile(self) -> None:
        if not self._compiled:
            self._automaton.make_automaton()
            self._compiled = True

    def _doc_text(self, doc) -> Tuple[str, numpy.ndarray, numpy.ndarray]:
        """The matching string of a doc, its tokens' lengths in it, and their indices in the doc."""
        cache = self._norm_cache
        if len(cache) > 1_000_000:
            cache.clear()
        arrays = doc.to_array([ORTH, IS_SPACE])
        index = numpy.nonzero(arrays[:, 1] == 0)[0]
        strings = doc.vocab.strings
        norms = []
        for orth in arrays[index, 0].tolist():
            norm = cache.get(orth)
            if norm is None:
                # A token that normalizes to nothing must still hold its place.
                norm = cache[orth] = self.normalize(strings[orth]) or "\u2400"
            norms.append(norm)
        lengths = numpy.fromiter(map(len, norms), dtype=numpy.int64, count=len(norms))
        return " " + " ".join(norms) + " ", lengths, index

    def match(self, doc) -> List[Match]:
        """Every match in a doc, overlapping and nested ones included, in text order."""
        if not self._keys or len(doc) == 0:
            return []
        self._compile()
        text, lengths, index = self._doc_text(doc)
        found = list(self._automaton.iter(text))
        if not found:
            return []
        # Character position of each token's first character in `text`.
        starts = numpy.cumsum(lengths + 1) - lengths
        ends = numpy.fromiter((end for end, _ in found), dtype=numpy.int64, count=len(found))
        key_ids = numpy.fromiter((key for _, key in found), dtype=numpy.int64, count=len(found))
        n_tokens = numpy.frombuffer(self._key_tokens, dtype=numpy.int32)[key_ids]
        last = numpy.searchsorted(starts, ends - 1, side="right") - 1  # ends point at the trailing space
        first = last - n_tokens + 1
        matches = []
        for start, stop, key_id in zip(index[first].tolist(), (index[last] + 1).tolist(), key_ids.tolist()):
            for label, kb in self._entries[key_id]:
                matches.append((start, stop, label, kb))
        matches.sort()
        return matches

    # Serialization: JSON metadata, one text blob of keys, numpy arrays; no pickle.

    def to_bytes(self) -> bytes:
        key_ids, labels, kbs = [], [], []
        for key_id in range(len(self._keys)):
            for label, kb in self._entries[key_id]:
                key_ids.append(key_id)
                labels.append(label)
                kbs.append(kb)
        buffer = io.BytesIO()
        numpy.savez(
            buffer,
            entry_key=numpy.asarray(key_ids, dtype=numpy.int32),
            entry_label=numpy.asarray(labels, dtype=numpy.int32),
            entry_kb=numpy.asarray(kbs, dtype=numpy.int32),
        )
        meta = {"case_sensitive": self.case_sensitive, "labels": self.labels}
        return srsly.msgpack_dumps({
            "meta": json.dumps(meta),
            "keys": "\n".join(self._keys).encode("utf8"),
            "kb_ids": "\n".join(self.kb_ids).encode("utf8"),
            "entries": buffer.getvalue(),
        })

    def from_bytes(self, data: bytes, where: str = "bytes") -> "Gazetteer":
        try:
            message = srsly.msgpack_loads(data)
            meta = json.loads(message["meta"])
            keys = message["keys"].decode("utf8").split("\n") if message["keys"] else []
            kb_ids = message["kb_ids"].decode("utf8").split("\n")
            with numpy.load(io.BytesIO(message["entries"]), allow_pickle=False) as archive:
                entry_key, entry_label, entry_kb = (archive[k] for k in ("entry_key", "entry_label", "entry_kb"))
        except Exception as err:
            raise ModelFileError(f"Corrupted gazetteer in {where}: {err}") from None
        n_labels = len(meta.get("labels", []))
        if not (
            len(entry_key) == len(entry_label) == len(entry_kb)
            and (len(entry_key) == 0 or (
                entry_key.min() >= 0 and entry_key.max() < len(keys)
                and entry_label.min() >= 0 and entry_label.max() < n_labels
                and entry_kb.min() >= 0 and entry_kb.max() < len(kb_ids)
            ))
        ):
            raise ModelFileError(f"Corrupted gazetteer in {where}: entries point outside the term table.")
        self.__init__(self.tokenizer, case_sensitive=bool(meta["case_sensitive"]))
        self.labels = list(meta["labels"])
        self._label_index = {label: i for i, label in enumerate(self.labels)}
        self.kb_ids = kb_ids
        self._kb_index = {kb: i for i, kb in enumerate(kb_ids)}
        self._keys = keys
        for key_id, key in enumerate(keys):
            self._automaton.add_word(f" {key} ", key_id)
            self._key_tokens.append(key.count(" ") + 1)
        for key_id, label, kb in zip(entry_key.tolist(), entry_label.tolist(), entry_kb.tolist()):
            self._entries.setdefault(key_id, []).append((label, kb))
        return self


def filter_matches(matches: List[Match], how: str = "leftmost_longest") -> List[Match]:
    """Non-overlapping matches: leftmost first then longest, or longest first (spaCy's filter_spans)."""
    if how not in FILTERS:
        raise ValueError(f"Unknown match filter {how!r}: use one of {FILTERS}.")
    if how == "leftmost_longest":
        ordered = sorted(matches, key=lambda m: (m[0], -(m[1] - m[0])))
    else:
        ordered = sorted(matches, key=lambda m: (-(m[1] - m[0]), m[0]))
    taken, kept = set(), []
    for match in ordered:
        if not taken.intersection(range(match[0], match[1])):
            kept.append(match)
            taken.update(range(match[0], match[1]))
    return sorted(kept)


def match_codes(matches: List[Match], n_tokens: int, n_labels: int) -> numpy.ndarray:
    """Each token's place in a match of each label: int (n_tokens, n_labels).

    0 none, 1 begin, 2 inside, 3 last, 4 unit (one-token match). Where matches
    of one label overlap, the longest one speaks.
    """
    codes = numpy.zeros((n_tokens, n_labels), dtype=numpy.intp)
    for start, end, label, _ in sorted(matches, key=lambda m: m[1] - m[0]):
        if end - start == 1:
            codes[start, label] = 4
        else:
            codes[start, label] = 1
            codes[start + 1 : end - 1, label] = 2
            codes[end - 1, label] = 3
    return codes


def _read_terms(path: Path, kind: str, label: Optional[str]) -> Iterator[Tuple[str, str, str]]:
    with open(path, encoding="utf8", newline="") as lines:
        line_no = 0
        try:
            for line_no, line in enumerate(lines, 1):
                line = line.rstrip("\r\n")
                if not line.strip():
                    continue
                yield _parse_line(line, kind, label, path, line_no)
        except UnicodeDecodeError as err:
            raise ValueError(f"{path}, line {line_no + 1}: not UTF-8 ({err.reason}).") from None


def _parse_line(line: str, kind: str, label: Optional[str], path: Path, line_no: int) -> Tuple[str, str, str]:
    where = f"{path}, line {line_no}"
    if kind == "text":
        return line.strip(), label, ""
    if kind == "tsv":
        fields = line.split("\t")
        if len(fields) in (2, 3) and fields[1]:
            return fields[0], fields[1], fields[2] if len(fields) == 3 else ""
        if len(fields) == 1 and label:
            return fields[0], label, ""
        raise ValueError(f"{where}: expected term<TAB>label[<TAB>id], got {len(fields)} fields: {line[:80]!r}")
    try:
        record = json.loads(line)
    except json.JSONDecodeError as err:
        raise ValueError(f"{where}: not valid JSON ({err.msg}).") from None
    if not isinstance(record, dict) or "pattern" not in record or ("label" not in record and not label):
        raise ValueError(f"{where}: expected {{\"label\": ..., \"pattern\": \"...\"}}, got {line[:80]!r}")
    if not isinstance(record["pattern"], str):
        raise ValueError(
            f"{where}: token patterns are not supported (pattern is {type(record['pattern']).__name__}); "
            "use phrase patterns (strings)."
        )
    return record["pattern"], record.get("label", label), str(record.get("id", "") or "")
