"""Term lists matched in one pass: an Aho-Corasick automaton over word codes.

Every distinct normalized word of the terms (terms.py) gets an id, and a term
becomes the string of its words' codes (token_codes). A doc becomes the same
kind of string over its non-whitespace tokens, a token in no term becoming a
separator, so every match starts and ends on token boundaries and a multi-token
term matches whatever whitespace separates its tokens in the text.
"""

import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Callable, Literal, Optional, Union, get_args

import numpy
from spacy.tokens import Span, SpanGroup

from .doc_pass import annotate_doc
from .spans import Interned, non_overlapping, span_group, write_ents
from .tables import TermTables
from .terms import TERM_SUFFIXES, TermSplitter, checked_chunks, chunk_splitter, collector_paused, read_terms
from .token_codes import TokenEncoder, add_terms

Match = tuple[int, int, int, int]  # token start, token end, label index, kb id index

MatchFilter = Literal["leftmost_longest", "longest"]
FILTERS = get_args(MatchFilter)
COMPILED_SUFFIX = ".gaz"


class Gazetteer:
    """Labelled terms with optional KB ids, compiled for matching.

    tokenizer (Callable[[str], Doc]): Splits terms as the pipeline splits text.
    case_sensitive (bool): Match case exactly (Unicode NFKC applies either way).
    """

    def __init__(self, tokenizer: Callable, case_sensitive: bool = False):
        self.tokenizer = tokenizer
        self._set_tables(TermTables(), case_sensitive)

    def _set_tables(self, tables: TermTables, case_sensitive: bool) -> None:
        self.tables = tables
        self._labels, self._kb_ids = Interned(tables.labels), Interned(tables.kb_ids)
        self.case_sensitive = case_sensitive
        self.splitter = TermSplitter(self.tokenizer, case_sensitive)
        self._encoder = TokenEncoder(self._word_id)
        self.skipped = 0

    @property
    def labels(self) -> list[str]:
        return self.tables.labels

    @property
    def kb_ids(self) -> list[str]:
        return self.tables.kb_ids

    def __len__(self) -> int:
        return len(self.tables)

    def normalize(self, text: str) -> str:
        """The matching form of a token: NFKC, casefolded unless case-sensitive, whitespace removed."""
        return self.splitter.normalize(text)

    def _word_id(self, text: str) -> int:
        """The word id of a doc token's text, -1 if no term has that word."""
        return self.tables.word_ids.get(self.splitter.normalize(text), -1)

    def add(self, term: str, label: str, kb_id: str = "") -> bool:
        """Add one term. RETURNS (bool): False if it normalizes to nothing (skipped)."""
        return self._add_all([(term, label, kb_id)]) == 1

    def _add_chunk(self, chunk: list[tuple[str, str, str]], term_words: list[list[str]]) -> int:
        """Add terms given their normalized tokens. RETURNS (int): how many were added."""
        added, skipped = add_terms(self.tables, chunk, term_words)
        self.skipped += skipped
        self._encoder.clear()  # a word's cached keys and automaton node change with the terms
        self.tables.entries = None
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

    def _add_all(self, terms: Iterable[tuple[str, str, str]], chunk_size: int = 10_000) -> int:
        """Add (term, label, kb id) triples a chunk at a time. RETURNS (int): how many were added.

        Splitting and normalizing terms takes about as long as adding them, so
        for long sources a helper process splits the next chunks while this
        one adds the current chunk.
        """
        added, chunks = 0, checked_chunks(terms, chunk_size)
        with collector_paused():
            first = next(chunks, [])
            added += self._add_chunk(first, self.splitter.words_of([term for term, _, _ in first]))
            if len(first) == chunk_size:
                with chunk_splitter(self.splitter) as split:
                    for chunk, term_words in split(chunks):
                        added += self._add_chunk(chunk, term_words)
        self.splitter.clear()
        return added

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
            return len(self.tables.added[0])
        kind = TERM_SUFFIXES.get(path.suffix)
        if kind is None:
            raise ValueError(f"Unknown gazetteer file type {path.name!r}: use .jsonl, .tsv, .txt or .gaz.")
        if kind == "text" and not label:
            raise ValueError(
                f"Plain-text term list {path} needs a label (config: gazetteer_label; bioner gazetteer compile: "
                "--label)."
            )
        skipped_before = self.skipped
        added = self._add_all(read_terms(path, kind, label))
        if self.skipped > skipped_before:
            warnings.warn(f"{path}: skipped {self.skipped - skipped_before} empty terms.", stacklevel=2)
        return added

    def span(self, doc, match: Match):
        """The Span of one match row, with its label and KB id."""
        start, end, label, kb = (int(value) for value in match)
        return Span(doc, start, end, label=self.labels[label], kb_id=self.kb_ids[kb])

    def span_group(self, doc, name: str, rows: numpy.ndarray) -> SpanGroup:
        """A SpanGroup of a doc's match rows, as `span` would make each (its labels and KB ids are
        interned in the doc's StringStore)."""
        return span_group(doc, name, rows, self._labels, self._kb_ids)

    def kb_hashes(self, strings, kb_ids: numpy.ndarray) -> numpy.ndarray:
        """uint64: the StringStore hash of each of these KB ids (indices), interned in `strings`."""
        return self._kb_ids.values_of(strings, kb_ids)

    def write_ents(self, doc, rows: numpy.ndarray, keep_entities: bool) -> None:
        """Write non-overlapping match rows to `doc.ents`, as `doc.set_ents` with their spans and
        default="unmodified" would; with keep_entities, rows overlapping an entity are left out."""
        write_ents(doc, rows, self._labels, self._kb_ids, keep_entities)

    def annotate(self, doc, spans_key: str, write_ents: bool, longest_first: bool, keep_entities: bool) -> None:
        """Every match to `doc.spans[spans_key]` and, with write_ents, the non-overlapping ones
        (leftmost longest, or longest first) to `doc.ents`: what `span_group`, `non_overlapping` and
        `write_ents` do with `match`'s rows, in one compiled call."""
        annotate_doc(
            doc,
            self._encoder,
            self.tables,
            self._labels,
            self._kb_ids,
            spans_key,
            write_ents,
            longest_first,
            keep_entities,
        )

    def match(self, doc) -> numpy.ndarray:
        """Every match in a doc, overlapping and nested ones included.

        RETURNS (ndarray): int64 rows (token start, token end, label, kb id), sorted.
        """
        return self.match_laid_out([doc])  # one doc laid out is the doc itself

    def match_batch(self, docs, relabel: Optional[numpy.ndarray] = None) -> list[numpy.ndarray]:
        """`match` for many docs with one pass of the automaton over all of them (relabel: as match_laid_out)."""
        docs = list(docs)
        if not len(self):  # no term lists: nothing to lay out, and every doc shares one empty, read-only array
            return [NO_MATCHES] * len(docs)
        rows = self.match_laid_out(docs, relabel)
        if len(docs) == 1:  # one doc laid out is the doc itself (as for a single call)
            return [rows]
        doc_starts = numpy.cumsum([0] + [len(doc) for doc in docs])
        bounds = numpy.searchsorted(rows[:, 0], doc_starts)
        rows[:, :2] -= numpy.repeat(doc_starts[:-1], numpy.diff(bounds))[:, None]  # each doc's own positions
        return [rows[bounds[i] : bounds[i + 1]] for i in range(len(docs))]

    def match_laid_out(self, docs: list, relabel: Optional[numpy.ndarray] = None) -> numpy.ndarray:
        """The matches of docs laid end to end, as `match`'s rows in positions of the whole batch.

        relabel: int64, a new index for each label (-1: leave its matches out), and no KB ids.
        """
        if not len(self) or not docs:
            return numpy.zeros((0, 4), dtype=numpy.int64)
        return self._encoder.match(docs, self.tables, relabel)

    def to_bytes(self) -> bytes:
        return self.tables.to_bytes(self.case_sensitive)

    def __reduce__(self) -> tuple:
        # Pickled as its saved bytes: its caches hold the memory pools of StringStores, which do not pickle.
        return (_unpickle_gazetteer, (self.tokenizer, self.to_bytes()))

    def from_bytes(self, data: bytes, where: str = "bytes") -> "Gazetteer":
        self._set_tables(*TermTables.from_bytes(data, where))
        return self


def _unpickle_gazetteer(tokenizer: Callable, data: bytes) -> Gazetteer:
    return Gazetteer(tokenizer).from_bytes(data)


NO_MATCHES = numpy.zeros((0, 4), dtype=numpy.int64)
NO_MATCHES.flags.writeable = False


def filter_matches(matches, how: str = "leftmost_longest") -> list[Match]:
    """Non-overlapping matches: leftmost first then longest, or longest first (spaCy's filter_spans), by start."""
    if how not in FILTERS:
        raise ValueError(f"Unknown match filter {how!r}: use one of {FILTERS}.")
    return [tuple(match) for match in non_overlapping(matches, how == "longest").tolist()]
