"""The gazetteer's term tables: words, keys, labels, KB ids, the word automaton, and the entries
that tie them together; compiled for matching and saved without pickle.

token_codes.add_terms fills them; the Gazetteer (matcher.py) reads them.
"""

import io
import json
from array import array

import numpy
import srsly

from ..core.serialize import ModelFileError, opened, seal
from .automaton import WordAutomaton
from .terms import collector_paused
from .token_codes import CODE_LENGTH, MAX_WORDS

FORMAT_VERSION = 2  # of to_bytes' content, which is sealed with its SHA-256; 1 held byte-string keys


class TermTables:
    """Everything a gazetteer knows of its terms, as flat tables a Cython loop can append to."""

    def __init__(self):
        self.labels: list[str] = []
        self.kb_ids: list[str] = [""]
        self.label_index: dict[str, int] = {}
        self.kb_index: dict[str, int] = {"": 0}
        self.words: list[str] = []  # normalized word by word id
        self.word_ids: dict[str, int] = {}
        self.unit_keys = array("i")  # per word id: the key id of the one-token term, or -1
        self.in_phrases = array("b")  # per word id: 1 if in a multi-token term
        self.phrase_keys: dict[str, int] = {}  # multi-token key (its words' codes) -> key id, in the order added
        self.word_automaton = None  # compiled from phrase_keys
        self.key_tokens = array("i")  # tokens per key id
        # Entries as they were added: (key id, label, kb id), compact until compiled.
        self.added = (array("i"), array("i"), array("i"))
        self.entries = None  # compiled: offsets per key id, then labels and kb ids

    def __len__(self) -> int:
        return len(self.key_tokens)

    def compile(self):
        """Make the automaton and sort the entries by key (duplicates dropped)."""
        if self.entries is None:
            self.word_automaton = WordAutomaton(self.phrase_keys)
            keys, labels, kbs = (numpy.frombuffer(column, dtype=numpy.int32) for column in self.added)
            order = numpy.lexsort((kbs, labels, keys))
            keys, labels, kbs = keys[order], labels[order], kbs[order]
            first = numpy.ones(len(keys), dtype=bool)  # drop repeated (key, label, kb id) entries
            first[1:] = (keys[1:] != keys[:-1]) | (labels[1:] != labels[:-1]) | (kbs[1:] != kbs[:-1])
            keys, labels, kbs = keys[first], labels[first], kbs[first]
            offsets = numpy.searchsorted(keys, numpy.arange(len(self) + 1))
            self.entries = (offsets, labels, kbs)
        return self.entries

    # Serialization: JSON metadata, text blobs of words and keys, numpy arrays; no pickle.

    def to_bytes(self, case_sensitive: bool) -> bytes:
        offsets, labels, kbs = self.compile()
        # Keys are stored in the order they were first added, so that loading
        # rebuilds the trie as it was built: nodes of the terms listed first
        # (in big lists, the common ones) are allocated close together.
        items = list(self.phrase_keys.items())
        key_ids = numpy.fromiter((key_id for _, key_id in items), dtype=numpy.int32, count=len(items))
        buffer = io.BytesIO()
        numpy.savez(
            buffer,
            offsets=offsets,
            labels=labels,
            kbs=kbs,
            phrase_key_ids=key_ids,
            unit_keys=numpy.frombuffer(self.unit_keys, dtype=numpy.int32),
            in_phrases=numpy.frombuffer(self.in_phrases, dtype=numpy.int8),
        )
        meta = {"format": FORMAT_VERSION, "case_sensitive": case_sensitive, "labels": self.labels}
        return seal(
            srsly.msgpack_dumps(
                {
                    "meta": json.dumps(meta),
                    "words": "\n".join(self.words).encode("utf8"),
                    "phrase_keys": "\n".join(key for key, _ in items).encode("utf-16-le"),
                    "kb_ids": "\n".join(self.kb_ids).encode("utf8"),
                    "entries": buffer.getvalue(),
                }
            )
        )

    @classmethod
    def from_bytes(cls, data: bytes, where: str = "bytes") -> tuple["TermTables", bool]:
        """The tables of `to_bytes`' data, and whether they were built case-sensitive."""
        with collector_paused():
            return cls._from_bytes(data, where)

    @classmethod
    def _from_bytes(cls, data: bytes, where: str) -> tuple["TermTables", bool]:
        names = ("offsets", "labels", "kbs", "phrase_key_ids", "unit_keys", "in_phrases")
        try:
            message = srsly.msgpack_loads(data)
            if "body" in message:  # files compiled before digests were written have none to check
                message = srsly.msgpack_loads(opened(message))
            meta = json.loads(message["meta"])
            if meta.get("format") != FORMAT_VERSION:
                raise ValueError(
                    f"format {meta.get('format', 1)}, this version reads {FORMAT_VERSION}: recompile the term lists"
                )
            words = message["words"].decode("utf8").split("\n") if message["words"] else []
            keys = message["phrase_keys"].decode("utf-16-le").split("\n") if message["phrase_keys"] else []
            kb_ids = message["kb_ids"].decode("utf8").split("\n")
            with numpy.load(io.BytesIO(message["entries"]), allow_pickle=False) as archive:
                offsets, labels, kbs, key_ids, unit_keys, in_phrases = (archive[name] for name in names)
            labels_list, case_sensitive = meta["labels"], meta["case_sensitive"]
            if not (isinstance(labels_list, list) and all(isinstance(label, str) and label for label in labels_list)):
                raise ValueError(f"'labels' should be a list of non-empty strings, got {labels_list!r}")
            if not isinstance(case_sensitive, bool):
                raise ValueError(f"'case_sensitive' should be true or false, got {case_sensitive!r}")
        except Exception as err:
            raise ModelFileError(f"Corrupted gazetteer in {where}: {err}") from None
        key_lengths = numpy.fromiter(map(len, keys), dtype=numpy.int64, count=len(keys))
        units = unit_keys[unit_keys >= 0]
        all_keys = numpy.concatenate([units, key_ids]).astype(numpy.int64)
        consistent = (
            len(words) <= MAX_WORDS
            and len(unit_keys) == len(in_phrases) == len(words)
            and len(keys) == len(key_ids)
            and numpy.array_equal(numpy.sort(all_keys), numpy.arange(len(all_keys)))
            and (key_lengths >= 2 * CODE_LENGTH).all()
            and (key_lengths % CODE_LENGTH == 0).all()
            and len(offsets) == len(all_keys) + 1
            and offsets[0] == 0
            and (numpy.diff(offsets) >= 0).all()
            and offsets[-1] == len(labels) == len(kbs)
            and (
                len(labels) == 0
                or (
                    0 <= labels.min() and labels.max() < len(labels_list) and 0 <= kbs.min() and kbs.max() < len(kb_ids)
                )
            )
        )
        if not consistent:
            raise ModelFileError(f"Corrupted gazetteer in {where}: entries point outside the term table.")
        self = cls()
        self.labels = labels_list
        self.label_index = {label: i for i, label in enumerate(self.labels)}
        self.kb_ids = kb_ids
        self.kb_index = dict(zip(kb_ids, range(len(kb_ids))))
        self.words = words
        self.word_ids = dict(zip(words, range(len(words))))
        self.unit_keys = array("i", unit_keys.astype(numpy.int32).tobytes())
        self.in_phrases = array("b", (in_phrases != 0).astype(numpy.int8).tobytes())
        self.phrase_keys = dict(zip(keys, key_ids.tolist()))
        key_tokens = numpy.ones(len(all_keys), dtype=numpy.int32)
        key_tokens[key_ids] = key_lengths // CODE_LENGTH
        self.key_tokens = array("i", key_tokens.tobytes())
        key_ids = numpy.repeat(numpy.arange(len(all_keys), dtype=numpy.int32), numpy.diff(offsets))
        self.added = tuple(array("i", column.astype(numpy.int32).tobytes()) for column in (key_ids, labels, kbs))
        return self, case_sensitive
