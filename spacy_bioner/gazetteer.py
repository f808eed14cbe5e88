"""Term lists matched in one pass: an Aho-Corasick automaton over normalized token text.

A term is tokenized like the text it will be found in, each token normalized
(NFKC, then casefold unless case-sensitive), and the tokens joined by single
spaces with a space at each end. A doc becomes the same kind of string over its
non-whitespace tokens, so every match starts and ends on token boundaries, and a
multi-token term matches whatever whitespace separates its tokens in the text.
Strings go to the automaton as their UTF-8 bytes (one latin-1 character per
byte): a small alphabet keeps trie nodes' fan-out low, which triples match speed.
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
from spacy.tokens import Span

from .serialize import ModelFileError

Match = Tuple[int, int, int, int]  # token start, token end, label index, kb id index

TERM_SUFFIXES = {".jsonl": "jsonl", ".tsv": "tsv", ".txt": "text"}
FILTERS = ("leftmost_longest", "longest")
GAZETTEER_MODES = ("features", "fallback", "ents")
COMPILED_SUFFIX = ".gaz"


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
        self._automaton = ahocorasick.Automaton(ahocorasick.STORE_INTS)  # " key " -> key id
        self._key_tokens = array("i")  # tokens per key id
        # Entries as they were added: (key id, label, kb id), compact until compiled.
        self._added = (array("i"), array("i"), array("i"))
        self._entries = None  # compiled: offsets per key id, then labels and kb ids
        self._norm_cache: Dict[int, str] = {}  # token ORTH -> normalized text
        self._split_cache: Dict[str, List[str]] = {}  # word -> the tokenizer's tokens, while loading
        self._special_cases = getattr(tokenizer, "rules", None) or {}
        self.skipped = 0

    def __len__(self) -> int:
        return len(self._key_tokens)

    def normalize(self, text: str) -> str:
        """The matching form of a token: NFKC, casefolded unless case-sensitive,
        whitespace removed, as UTF-8 bytes in a latin-1 string."""
        norm = unicodedata.normalize("NFKC", text)
        if not self.case_sensitive:
            norm = norm.casefold()
        return "".join(norm.split()).encode("utf8").decode("latin-1")

    def _term_key(self, term: str) -> str:
        words = term.split()
        special_cases = self._special_cases
        # Words of only letters or only digits are never split by spaCy's rules,
        # except its special cases; terms with other words go to the tokenizer.
        if all((w.isalpha() or w.isdigit()) and w not in special_cases for w in words):
            return self.normalize_words(words)
        tokens = []
        for word in words:
            split = self._split_cache.get(word)
            if split is None:
                split = self._split_cache[word] = [t.text for t in self.tokenizer(word)]
            tokens.extend(split)
        return " ".join(filter(None, map(self.normalize, tokens)))

    def normalize_words(self, words: List[str]) -> str:
        """The key of words that are tokens as they are: one normalization call for all."""
        norm = unicodedata.normalize("NFKC", " ".join(words))
        if not self.case_sensitive:
            norm = norm.casefold()
        return " ".join(norm.split()).encode("utf8").decode("latin-1")

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
        if not key or "\x00" in key:  # \x00 separates docs in the matching string
            self.skipped += 1
            return False
        spaced = " " + key + " "
        key_id = self._automaton.get(spaced, -1)
        if key_id < 0:
            key_id = len(self._key_tokens)
            self._automaton.add_word(spaced, key_id)
            self._key_tokens.append(key.count(" ") + 1)
        label_id = self._label_index.get(label)
        if label_id is None:
            label_id = self._label_index[label] = len(self.labels)
            self.labels.append(label)
        kb_id = str(kb_id or "")
        kb = self._kb_index.get(kb_id)
        if kb is None:
            kb = self._kb_index[kb_id] = len(self.kb_ids)
            self.kb_ids.append(kb_id)
        keys, labels, kbs = self._added
        keys.append(key_id)
        labels.append(label_id)
        kbs.append(kb)
        self._entries = None
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
            `.txt` (one term per line, needs `label`), a directory of those, or a
            `.gaz` file written by `bioner gazetteer compile`.
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
        if path.suffix == COMPILED_SUFFIX:
            if len(self):
                raise ValueError(f"A compiled gazetteer ({path}) must be the only term source.")
            self.from_bytes(path.read_bytes(), where=str(path))
            return len(self._added[0])
        kind = TERM_SUFFIXES.get(path.suffix)
        if kind is None:
            raise ValueError(f"Unknown gazetteer file type {path.name!r}: use .jsonl, .tsv, .txt or .gaz.")
        if kind == "text" and not label:
            raise ValueError(f"Plain-text term list {path} needs a label (config: gazetteer_label).")
        skipped_before = self.skipped
        added = 0
        for term, term_label, kb_id in _read_terms(path, kind, label):
            added += self.add(term, term_label, kb_id)
        self._split_cache.clear()
        if self.skipped > skipped_before:
            warnings.warn(f"{path}: skipped {self.skipped - skipped_before} empty terms.")
        return added

    def _compile(self):
        """Make the automaton and sort the entries by key (duplicates dropped)."""
        if self._entries is None:
            if self._automaton.kind != ahocorasick.AHOCORASICK:
                self._automaton.make_automaton()
            keys, labels, kbs = (numpy.frombuffer(column, dtype=numpy.int32) for column in self._added)
            order = numpy.lexsort((kbs, labels, keys))
            keys, labels, kbs = keys[order], labels[order], kbs[order]
            first = numpy.ones(len(keys), dtype=bool)  # drop repeated (key, label, kb id) entries
            first[1:] = (keys[1:] != keys[:-1]) | (labels[1:] != labels[:-1]) | (kbs[1:] != kbs[:-1])
            keys, labels, kbs = keys[first], labels[first], kbs[first]
            offsets = numpy.searchsorted(keys, numpy.arange(len(self) + 1))
            self._entries = (offsets, labels, kbs)
        return self._entries

    def _norms(self, doc) -> Tuple[List[str], numpy.ndarray]:
        """The normalized text of a doc's non-whitespace tokens, and their indices."""
        cache = self._norm_cache
        if len(cache) > 1_000_000:
            cache.clear()
        arrays = doc.to_array([ORTH, IS_SPACE])
        index = numpy.nonzero(arrays[:, 1] == 0)[0]
        orths = arrays[index, 0].tolist()
        norms = list(map(cache.get, orths))
        if None in norms:
            strings = doc.vocab.strings
            for i, orth in enumerate(orths):
                if norms[i] is None:
                    # A token that normalizes to nothing must still hold its place.
                    norms[i] = cache[orth] = self.normalize(strings[orth]).replace("\x00", "") or "\x01"
        return norms, index

    def span(self, doc, match: Match):
        """The Span of one match row, with its label and KB id."""
        start, end, label, kb = (int(value) for value in match)
        return Span(doc, start, end, label=self.labels[label], kb_id=self.kb_ids[kb])

    def match(self, doc) -> numpy.ndarray:
        """Every match in a doc, overlapping and nested ones included.

        RETURNS (ndarray): int64 rows (token start, token end, label, kb id), sorted.
        """
        return self.match_batch([doc])[0]

    def match_batch(self, docs) -> List[numpy.ndarray]:
        """`match` for many docs with one pass of the automaton over all of them."""
        docs = list(docs)
        if not len(self):
            return [numpy.zeros((0, 4), dtype=numpy.int64) for _ in docs]
        offsets, entry_labels, entry_kbs = self._compile()
        # One string for the batch; a "\x00" token between docs stops matches crossing them.
        words, token_index, doc_ids = [], [], []
        for i, doc in enumerate(docs):
            norms, index = self._norms(doc)
            words.extend(norms)
            words.append("\x00")
            token_index.append(numpy.append(index, -1))
            doc_ids.append(numpy.full(len(index) + 1, i))
        if not docs:
            return []
        lengths = numpy.fromiter(map(len, words), dtype=numpy.int64, count=len(words))
        token_index = numpy.concatenate(token_index)
        doc_ids = numpy.concatenate(doc_ids)
        text = " " + " ".join(words) + " "
        found = numpy.array(list(self._automaton.iter(text)), dtype=numpy.int64).reshape(-1, 2)
        # Each word's first character in `text`; a match ends on the space after its last word.
        starts = numpy.cumsum(lengths + 1) - lengths
        last = numpy.searchsorted(starts, found[:, 0] - 1, side="right") - 1
        first = last - numpy.frombuffer(self._key_tokens, dtype=numpy.int32)[found[:, 1]] + 1
        # One row per (match, entry): an ambiguous term matches once per label and id.
        counts = offsets[found[:, 1] + 1] - offsets[found[:, 1]]
        entry = numpy.repeat(offsets[found[:, 1]] - numpy.cumsum(counts) + counts, counts) + numpy.arange(counts.sum())
        rows = numpy.stack([
            numpy.repeat(doc_ids[first], counts),
            numpy.repeat(token_index[first], counts),
            numpy.repeat(token_index[last] + 1, counts),
            entry_labels[entry],
            entry_kbs[entry],
        ], axis=1)
        rows = rows[numpy.lexsort(rows.T[::-1])]
        bounds = numpy.searchsorted(rows[:, 0], numpy.arange(len(docs) + 1))
        return [rows[bounds[i] : bounds[i + 1], 1:] for i in range(len(docs))]

    # Serialization: JSON metadata, one text blob of keys, numpy arrays; no pickle.

    def to_bytes(self) -> bytes:
        offsets, labels, kbs = self._compile()
        # Keys are stored sorted: added in that order, trie nodes list their most
        # common children first, which makes matching after loading faster.
        items = sorted(self._automaton.items())
        keys = [key[1:-1] for key, _ in items]
        key_ids = numpy.fromiter((key_id for _, key_id in items), dtype=numpy.int32, count=len(items))
        buffer = io.BytesIO()
        numpy.savez(buffer, offsets=offsets, labels=labels, kbs=kbs, key_ids=key_ids)
        meta = {"case_sensitive": self.case_sensitive, "labels": self.labels}
        return srsly.msgpack_dumps({
            "meta": json.dumps(meta),
            "keys": "\n".join(keys).encode("latin-1"),  # the UTF-8 bytes of the keys
            "kb_ids": "\n".join(self.kb_ids).encode("utf8"),
            "entries": buffer.getvalue(),
        })

    def from_bytes(self, data: bytes, where: str = "bytes") -> "Gazetteer":
        try:
            message = srsly.msgpack_loads(data)
            meta = json.loads(message["meta"])
            keys = message["keys"].decode("latin-1").split("\n") if message["keys"] else []
            kb_ids = message["kb_ids"].decode("utf8").split("\n")
            with numpy.load(io.BytesIO(message["entries"]), allow_pickle=False) as archive:
                offsets, labels, kbs, key_ids = (archive[k] for k in ("offsets", "labels", "kbs", "key_ids"))
            labels_list, case_sensitive = list(meta["labels"]), bool(meta["case_sensitive"])
        except Exception as err:
            raise ModelFileError(f"Corrupted gazetteer in {where}: {err}") from None
        consistent = (
            len(offsets) == len(keys) + 1 == len(key_ids) + 1
            and numpy.array_equal(numpy.sort(key_ids), numpy.arange(len(keys))) and offsets[0] == 0 and (numpy.diff(offsets) >= 0).all()
            and offsets[-1] == len(labels) == len(kbs)
            and (len(labels) == 0 or (0 <= labels.min() and labels.max() < len(labels_list)
                                      and 0 <= kbs.min() and kbs.max() < len(kb_ids)))
        )
        if not consistent:
            raise ModelFileError(f"Corrupted gazetteer in {where}: entries point outside the term table.")
        self.__init__(self.tokenizer, case_sensitive=case_sensitive)
        self.labels = labels_list
        self._label_index = {label: i for i, label in enumerate(self.labels)}
        self.kb_ids = kb_ids
        self._kb_index = {kb: i for i, kb in enumerate(kb_ids)}
        add_word = self._automaton.add_word
        for key, key_id in zip(keys, key_ids.tolist()):
            add_word(" " + key + " ", key_id)
        key_tokens = numpy.zeros(len(keys), dtype=numpy.int32)
        key_tokens[key_ids] = numpy.fromiter((key.count(" ") + 1 for key in keys), dtype=numpy.int32, count=len(keys))
        self._key_tokens = array("i", key_tokens.tobytes())
        key_ids = numpy.repeat(numpy.arange(len(keys), dtype=numpy.int32), numpy.diff(offsets))
        self._added = tuple(array("i", column.astype(numpy.int32).tobytes()) for column in (key_ids, labels, kbs))
        return self


def filter_matches(matches, how: str = "leftmost_longest") -> List[Match]:
    """Non-overlapping matches: leftmost first then longest, or longest first (spaCy's filter_spans)."""
    if how not in FILTERS:
        raise ValueError(f"Unknown match filter {how!r}: use one of {FILTERS}.")
    matches = [tuple(match) for match in numpy.asarray(matches).tolist()]
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


def match_codes(matches, n_tokens: int, n_labels: int) -> numpy.ndarray:
    """Each token's place in a match of each label: int (n_tokens, n_labels).

    0 none, 1 begin, 2 inside, 3 last, 4 unit (one-token match). Where matches
    of one label overlap, the longest one speaks.
    """
    codes = numpy.zeros((n_tokens, n_labels), dtype=numpy.intp)
    for start, end, label, _ in sorted(numpy.asarray(matches).tolist(), key=lambda m: m[1] - m[0]):
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
