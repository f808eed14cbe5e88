"""Term lists matched in one pass: an Aho-Corasick automaton over word codes.

A term is tokenized like the text it will be found in and each token
normalized (NFKC, then casefold unless case-sensitive). Every distinct
normalized word gets an id, and a term becomes the string of its words' codes
(see token_codes). A doc becomes the same kind of string over its
non-whitespace tokens, a token in no term becoming a separator, so every match
starts and ends on token boundaries and a multi-token term matches whatever
whitespace separates its tokens in the text.
"""
import gc
import io
import json
import multiprocessing
import os
import sys
import threading
from collections import deque
from contextlib import contextmanager
import unicodedata
import warnings
from array import array
from itertools import islice
from operator import itemgetter
from pathlib import Path
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Tuple, Union

import ahocorasick
import numpy
import srsly
from spacy.tokenizer import Tokenizer
from spacy.tokens import Span
from spacy.vocab import Vocab

from ..core.serialize import ModelFileError
from .token_codes import CODE_LENGTH, MAX_WORDS, TokenEncoder, add_terms, collect

Match = Tuple[int, int, int, int]  # token start, token end, label index, kb id index

TERM_SUFFIXES = {".jsonl": "jsonl", ".tsv": "tsv", ".txt": "text"}
FILTERS = ("leftmost_longest", "longest")
COMPILED_SUFFIX = ".gaz"
FORMAT_VERSION = 2  # of to_bytes; 1 held byte-string keys


class Gazetteer:
    """Labelled terms with optional KB ids, compiled for matching.

    tokenizer (Callable[[str], Doc]): Splits terms as the pipeline splits text.
    case_sensitive (bool): Match case exactly (Unicode NFKC applies either way).
    """

    def __init__(self, tokenizer: Callable, case_sensitive: bool = False):
        self.tokenizer = tokenizer
        self.case_sensitive = case_sensitive
        self._special_cases = getattr(tokenizer, "rules", None) or {}
        self._reset()

    def _reset(self) -> None:
        self.labels: List[str] = []
        self.kb_ids: List[str] = [""]
        self._label_index: Dict[str, int] = {}
        self._kb_index: Dict[str, int] = {"": 0}
        self._words: List[str] = []  # normalized word by word id
        self._word_ids: Dict[str, int] = {}
        self._unit_keys = array("i")  # per word id: the key id of the one-token term, or -1
        self._in_phrases = array("b")  # per word id: 1 if in a multi-token term
        self._encoder = TokenEncoder(self._word_id)
        self._automaton = ahocorasick.Automaton(ahocorasick.STORE_INTS)  # multi-token key codes -> key id
        self._key_tokens = array("i")  # tokens per key id
        # Entries as they were added: (key id, label, kb id), compact until compiled.
        self._added = (array("i"), array("i"), array("i"))
        self._entries = None  # compiled: offsets per key id, then labels and kb ids
        self._split_cache: Dict[str, List[str]] = {}  # word -> its normalized tokens, while loading
        self._loading_tokenizer = None
        self.skipped = 0

    def __len__(self) -> int:
        return len(self._key_tokens)

    def normalize(self, text: str) -> str:
        """The matching form of a token: NFKC, casefolded unless case-sensitive, whitespace removed."""
        norm = unicodedata.normalize("NFKC", text)
        if not self.case_sensitive:
            norm = norm.casefold()
        return "".join(norm.split())

    def _word_id(self, text: str) -> int:
        """The word id of a doc token's text, -1 if no term has that word."""
        return self._word_ids.get(self.normalize(text), -1)

    def _is_whole(self, word: str) -> bool:
        """Whether the tokenizer surely leaves a word whole: only digits, or only
        letters and combining marks, and no special case. spaCy's prefix, suffix
        and infix rules all need punctuation, a symbol, or a digit beside a letter."""
        if word in self._special_cases:
            return False
        return word.isalpha() or word.isdigit() or all(unicodedata.category(c)[0] in "LM" for c in word)

    def _terms_words(self, terms: List[str]) -> List[List[str]]:
        """Each term's normalized tokens, for a chunk of terms at once.

        Terms of letters only take one normalization call together; the words
        of the others are looked up in (or added to) the split cache.
        """
        split = [term.split() for term in terms]
        special_cases = self._special_cases.keys()
        plain = [(words[0] if len(words) == 1 else "".join(words)).isalpha() and special_cases.isdisjoint(words)
                 if words else True for words in split]
        norm = unicodedata.normalize("NFKC", "\n".join(" ".join(w) for w, p in zip(split, plain) if p))
        normalized = iter((norm if self.case_sensitive else norm.casefold()).split("\n"))
        cache = self._split_cache
        self._split_words(word for words, p in zip(split, plain) if not p for word in words if word not in cache)
        result = []
        for words, p in zip(split, plain):
            if p:
                norm_words = next(normalized).split()
                if len(norm_words) == len(words):  # else NFKC made or took a space
                    result.append(norm_words)
                    continue
                self._split_words(words)
            result.append([norm for word in words for norm in cache[word]])
        return result

    def _split_words(self, words: Iterable[str]) -> None:
        """Cache the normalized tokens of new words; those that may split go to
        the tokenizer all in one string.

        spaCy's tokenizer splits text on whitespace before it applies its rules,
        so the tokens of a space-joined string are those of each word alone.
        """
        cache, is_whole, normalize = self._split_cache, self._is_whole, self.normalize
        to_split = []
        for word in dict.fromkeys(words):
            if word in cache:
                continue
            if is_whole(word):
                norm = normalize(word)
                cache[word] = [norm] if norm else []
            else:
                to_split.append(word)
        if not to_split:
            return
        tokenizer = self._term_tokenizer()
        splits, current = [], []
        for token in tokenizer(" ".join(to_split)):
            current.append(token.text)
            if token.whitespace_:
                splits.append(current)
                current = []
        splits.append(current)
        if len(splits) != len(to_split):  # a tokenizer that does not split on spaces first
            splits = [[t.text for t in tokenizer(word)] for word in to_split]
        cache.update((word, [norm for norm in map(normalize, tokens) if norm]) for word, tokens in zip(to_split, splits))

    def _term_tokenizer(self) -> Callable:
        """The tokenizer's rules on a vocab of its own: while terms load, lexemes
        need no attributes and should not fill the pipeline's vocab."""
        if self._loading_tokenizer is None:
            tok = self.tokenizer
            if isinstance(tok, Tokenizer):
                tok = Tokenizer(
                    Vocab(), rules=tok.rules, prefix_search=tok.prefix_search, suffix_search=tok.suffix_search,
                    infix_finditer=tok.infix_finditer, token_match=tok.token_match, url_match=tok.url_match,
                    faster_heuristics=tok.faster_heuristics,
                )
            self._loading_tokenizer = tok
        return self._loading_tokenizer

    def add(self, term: str, label: str, kb_id: str = "") -> bool:
        """Add one term. RETURNS (bool): False if it normalizes to nothing (skipped)."""
        return self._add_all([(term, label, kb_id)]) == 1

    def _add_chunk(self, chunk: List[Tuple[str, str, str]], term_words: List[List[str]]) -> int:
        """Add terms given their normalized tokens. RETURNS (int): how many were added."""
        added, skipped, new_words = add_terms(self, chunk, term_words)
        self.skipped += skipped
        if new_words:
            self._encoder.clear()  # tokens cached as in no term may be in one now
        self._entries = None
        return added

    def add_patterns(self, patterns: Iterable[dict]) -> int:
        """Add EntityRuler-style phrase patterns: {"label": ..., "pattern": "...", "id": ...}.

        RETURNS (int): The number of patterns added.
        """
        def terms():
            for i, pattern in enumerate(patterns):
                if not isinstance(pattern, dict) or "pattern" not in pattern or "label" not in pattern:
                    raise ValueError(f"Pattern {i} must be a dict with 'label' and 'pattern', got {pattern!r}.")
                yield pattern["pattern"], pattern["label"], pattern.get("id", "")

        return self._add_all(terms())

    def _add_all(self, terms: Iterable[Tuple[str, str, str]], chunk_size: int = 10_000) -> int:
        """Add (term, label, kb id) triples a chunk at a time. RETURNS (int): how many were added.

        Splitting and normalizing terms takes about as long as adding them, so
        for long sources a helper process splits the next chunks while this
        one adds the current chunk.
        """
        added, chunks = 0, _checked_chunks(terms, chunk_size)
        with _collector_paused():
            first = next(chunks, [])
            added += self._add_chunk(first, self._terms_words([term for term, _, _ in first]))
            if len(first) == chunk_size:
                with self._chunk_splitter() as split:
                    for chunk, term_words in split(chunks):
                        added += self._add_chunk(chunk, term_words)
        self._split_cache.clear()
        self._loading_tokenizer = None
        return added

    @contextmanager
    def _chunk_splitter(self):
        """A function from chunks to (chunk, each term's normalized words), run
        by a forked helper process where forking is safe, else by this one."""
        if not _can_fork_helper():
            yield lambda chunks: ((chunk, self._terms_words([term for term, _, _ in chunk])) for chunk in chunks)
            return
        helper = multiprocessing.get_context("fork").Pool(1, _start_splitter, (self._term_tokenizer(), self.case_sensitive))
        with helper as pool:

            def split(chunks):
                pending = deque()
                for chunk in chunks:
                    pending.append((chunk, pool.apply_async(_split_terms, ([term for term, _, _ in chunk],))))
                    if len(pending) > _CHUNKS_AHEAD:
                        chunk, result = pending.popleft()
                        yield chunk, result.get()
                while pending:
                    chunk, result = pending.popleft()
                    yield chunk, result.get()

            yield split

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
            raise ValueError(f"Plain-text term list {path} needs a label (config: gazetteer_label; bioner gazetteer compile: --label).")
        skipped_before = self.skipped
        added = self._add_all(_read_terms(path, kind, label))
        if self.skipped > skipped_before:
            warnings.warn(f"{path}: skipped {self.skipped - skipped_before} empty terms.")
        return added

    def _compile(self):
        """Make the automaton and sort the entries by key (duplicates dropped)."""
        if self._entries is None:
            if self._automaton.kind == ahocorasick.TRIE:
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

    def span(self, doc, match: Match):
        """The Span of one match row, with its label and KB id."""
        start, end, label, kb = (int(value) for value in match)
        return Span(doc, start, end, label=self.labels[label], kb_id=self.kb_ids[kb])

    def spans(self, doc, rows: numpy.ndarray) -> List[Span]:
        """The Spans of a doc's match rows, as `span` makes them; each label and KB id is interned once."""
        labels = [doc.vocab.strings.add(label) for label in self.labels]
        kb_hashes: Dict[int, int] = {}
        found = []
        for start, end, label, kb in rows.tolist():
            if kb not in kb_hashes:
                kb_hashes[kb] = doc.vocab.strings.add(self.kb_ids[kb])
            found.append(Span(doc, start, end, label=labels[label], kb_id=kb_hashes[kb]))
        return found

    def match(self, doc) -> numpy.ndarray:
        """Every match in a doc, overlapping and nested ones included.

        RETURNS (ndarray): int64 rows (token start, token end, label, kb id), sorted.
        """
        return self.match_batch([doc])[0]

    def match_batch(self, docs) -> List[numpy.ndarray]:
        """`match` for many docs with one pass of the automaton over all of them."""
        docs = list(docs)
        if not len(self) or not docs:
            return [numpy.zeros((0, 4), dtype=numpy.int64) for _ in docs]
        offsets, entry_labels, entry_kbs = self._compile()
        text, char_tokens, unit_positions, unit_keys = self._encoder.encode(
            docs, numpy.frombuffer(self._unit_keys, dtype=numpy.int32), numpy.frombuffer(self._in_phrases, dtype=numpy.int8)
        )
        # Token positions run through the batch, docs end to end.
        first, last, key_ids = unit_positions, unit_positions, unit_keys
        if self._automaton.kind == ahocorasick.AHOCORASICK:
            ends, phrase_keys = collect(self._automaton.iter(text))
            phrase_first = char_tokens[ends - CODE_LENGTH * self._key_token_counts()[phrase_keys] + 1]
            first = numpy.concatenate([first, phrase_first])
            last = numpy.concatenate([last, char_tokens[ends]])
            key_ids = numpy.concatenate([key_ids, phrase_keys])
        # One row per (match, entry): an ambiguous term matches once per label and id.
        counts = offsets[key_ids + 1] - offsets[key_ids]
        entry = numpy.repeat(offsets[key_ids] - numpy.cumsum(counts) + counts, counts) + numpy.arange(counts.sum())
        first, last = numpy.repeat(first, counts), numpy.repeat(last, counts)
        # Sorted by start, then end; entries of one key are already sorted by label and id.
        order = numpy.argsort(first * (1 << 24) + (last - first), kind="stable")
        first, last, entry = first[order], last[order], entry[order]
        doc_starts = numpy.cumsum([0] + [len(doc) for doc in docs])
        bounds = numpy.searchsorted(first, doc_starts)
        rows = numpy.stack([first, last + 1, entry_labels[entry], entry_kbs[entry]], axis=1)
        return [rows[bounds[i] : bounds[i + 1]] - (doc_starts[i], doc_starts[i], 0, 0) for i in range(len(docs))]

    def _key_token_counts(self) -> numpy.ndarray:
        return numpy.frombuffer(self._key_tokens, dtype=numpy.int32)

    # Serialization: JSON metadata, text blobs of words and keys, numpy arrays; no pickle.

    def to_bytes(self) -> bytes:
        offsets, labels, kbs = self._compile()
        # Keys are stored in the order they were first added, so that loading
        # rebuilds the trie as it was built: nodes of the terms listed first
        # (in big lists, the common ones) are allocated close together.
        items = sorted(self._automaton.items(), key=itemgetter(1))
        key_ids = numpy.fromiter((key_id for _, key_id in items), dtype=numpy.int32, count=len(items))
        buffer = io.BytesIO()
        numpy.savez(
            buffer, offsets=offsets, labels=labels, kbs=kbs, phrase_key_ids=key_ids,
            unit_keys=numpy.frombuffer(self._unit_keys, dtype=numpy.int32),
            in_phrases=numpy.frombuffer(self._in_phrases, dtype=numpy.int8),
        )
        meta = {"format": FORMAT_VERSION, "case_sensitive": self.case_sensitive, "labels": self.labels}
        return srsly.msgpack_dumps({
            "meta": json.dumps(meta),
            "words": "\n".join(self._words).encode("utf8"),
            "phrase_keys": "\n".join(key for key, _ in items).encode("utf-16-le"),
            "kb_ids": "\n".join(self.kb_ids).encode("utf8"),
            "entries": buffer.getvalue(),
        })

    def from_bytes(self, data: bytes, where: str = "bytes") -> "Gazetteer":
        with _collector_paused():
            return self._from_bytes(data, where)

    def _from_bytes(self, data: bytes, where: str) -> "Gazetteer":
        names = ("offsets", "labels", "kbs", "phrase_key_ids", "unit_keys", "in_phrases")
        try:
            message = srsly.msgpack_loads(data)
            meta = json.loads(message["meta"])
            if meta.get("format") != FORMAT_VERSION:
                raise ValueError(f"format {meta.get('format', 1)}, this version reads {FORMAT_VERSION}: recompile the term lists")
            words = message["words"].decode("utf8").split("\n") if message["words"] else []
            keys = message["phrase_keys"].decode("utf-16-le").split("\n") if message["phrase_keys"] else []
            kb_ids = message["kb_ids"].decode("utf8").split("\n")
            with numpy.load(io.BytesIO(message["entries"]), allow_pickle=False) as archive:
                offsets, labels, kbs, key_ids, unit_keys, in_phrases = (archive[name] for name in names)
            labels_list, case_sensitive = list(meta["labels"]), bool(meta["case_sensitive"])
        except Exception as err:
            raise ModelFileError(f"Corrupted gazetteer in {where}: {err}") from None
        key_lengths = numpy.fromiter(map(len, keys), dtype=numpy.int64, count=len(keys))
        units = unit_keys[unit_keys >= 0]
        all_keys = numpy.concatenate([units, key_ids]).astype(numpy.int64)
        consistent = (
            len(words) <= MAX_WORDS and len(unit_keys) == len(in_phrases) == len(words) and len(keys) == len(key_ids)
            and numpy.array_equal(numpy.sort(all_keys), numpy.arange(len(all_keys)))
            and (key_lengths >= 2 * CODE_LENGTH).all() and (key_lengths % CODE_LENGTH == 0).all()
            and len(offsets) == len(all_keys) + 1 and offsets[0] == 0 and (numpy.diff(offsets) >= 0).all()
            and offsets[-1] == len(labels) == len(kbs)
            and (len(labels) == 0 or (0 <= labels.min() and labels.max() < len(labels_list)
                                      and 0 <= kbs.min() and kbs.max() < len(kb_ids)))
        )
        if not consistent:
            raise ModelFileError(f"Corrupted gazetteer in {where}: entries point outside the term table.")
        self.case_sensitive = case_sensitive
        self._reset()
        self.labels = labels_list
        self._label_index = {label: i for i, label in enumerate(self.labels)}
        self.kb_ids = kb_ids
        self._kb_index = dict(zip(kb_ids, range(len(kb_ids))))
        self._words = words
        self._word_ids = dict(zip(words, range(len(words))))
        self._unit_keys = array("i", unit_keys.astype(numpy.int32).tobytes())
        self._in_phrases = array("b", (in_phrases != 0).astype(numpy.int8).tobytes())
        add_word = self._automaton.add_word
        for key, key_id in zip(keys, key_ids.tolist()):
            add_word(key, key_id)
        key_tokens = numpy.ones(len(all_keys), dtype=numpy.int32)
        key_tokens[key_ids] = key_lengths // CODE_LENGTH
        self._key_tokens = array("i", key_tokens.tobytes())
        key_ids = numpy.repeat(numpy.arange(len(all_keys), dtype=numpy.int32), numpy.diff(offsets))
        self._added = tuple(array("i", column.astype(numpy.int32).tobytes()) for column in (key_ids, labels, kbs))
        return self


_CHUNKS_AHEAD = 2  # chunks the splitter process may work ahead: bounds memory on long sources
_splitter: Optional[Gazetteer] = None  # in the helper process: a gazetteer that only splits terms


def _can_fork_helper() -> bool:
    """Fork only where it is cheap and safe: Linux, two cores or more, no other
    threads (a lock held by one would stay held in the child), not a daemon
    process (which may not have children)."""
    return (
        sys.platform == "linux" and (os.cpu_count() or 1) > 1 and threading.active_count() == 1
        and not multiprocessing.current_process().daemon
    )


def _start_splitter(tokenizer: Callable, case_sensitive: bool) -> None:
    global _splitter
    _splitter = Gazetteer(tokenizer, case_sensitive=case_sensitive)


def _split_terms(terms: List[str]) -> List[List[str]]:
    with _collector_paused():
        return _splitter._terms_words(terms)


def _checked_chunks(terms: Iterable[Tuple[str, str, str]], size: int) -> Iterator[List[Tuple[str, str, str]]]:
    terms = iter(terms)
    chunk = list(islice(terms, size))
    while chunk:
        if not all(type(term) is str and type(label) is str and label for term, label, _ in chunk):
            for term, label, _ in chunk:
                _check_term(term, label)
        yield chunk
        chunk = list(islice(terms, size))


@contextmanager
def _collector_paused():
    """Pause the cyclic garbage collector while millions of small acyclic
    containers are made: its collections would only rescan them (a third of
    the build time of a 1.2M-term list)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def _check_term(term, label) -> None:
    if not isinstance(term, str):
        raise TypeError(
            f"Gazetteer terms are strings; got {type(term).__name__} {term!r}. "
            "Token patterns (lists of dicts) are not supported: use spaCy's EntityRuler for those."
        )
    if not isinstance(label, str) or not label:
        raise ValueError(f"Term {term!r} has no label (got {label!r}).")


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
    matches = numpy.asarray(matches, dtype=numpy.int64).reshape(-1, 4)
    if not len(matches):
        return codes
    lengths = matches[:, 1] - matches[:, 0]
    # Shortest first, so where a token gets several codes of one label the last (longest) is kept.
    matches, lengths = matches[numpy.argsort(lengths, kind="stable")], numpy.sort(lengths, kind="stable")
    offset = numpy.arange(lengths.sum()) - numpy.repeat(numpy.cumsum(lengths) - lengths, lengths)
    length = numpy.repeat(lengths, lengths)
    values = numpy.where(offset == 0, 1, numpy.where(offset == length - 1, 3, 2))
    values[length == 1] = 4
    cells = (numpy.repeat(matches[:, 0], lengths) + offset) * n_labels + numpy.repeat(matches[:, 2], lengths)
    cells, last_from_end = numpy.unique(cells[::-1], return_index=True)
    codes.flat[cells] = values[len(values) - 1 - last_from_end]
    return codes


def _read_terms(path: Path, kind: str, label: Optional[str]) -> Iterator[Tuple[str, str, str]]:
    with open(path, encoding="utf8", newline="") as lines:
        line_no = 0
        try:
            for line_no, line in enumerate(lines, 1):
                line = line.rstrip("\r\n")
                if kind == "tsv":  # the common case, without a call
                    fields = line.split("\t")
                    if len(fields) == 3 and fields[0] and fields[1]:
                        yield fields
                        continue
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
