"""Term files and term splitting: read (term, label, KB id) triples, and split each term
into the normalized words the matcher keys on, as the pipeline's tokenizer would.

A term is tokenized like the text it will be found in, and each token
normalized (NFKC, then casefold unless case-sensitive). For long sources a
forked helper process splits the next chunks while the matcher adds the current one.
"""

import gc
import json
import multiprocessing
import os
import sys
import threading
import unicodedata
from collections import deque
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from itertools import islice
from pathlib import Path
from typing import Callable, Optional

from spacy.tokenizer import Tokenizer
from spacy.vocab import Vocab

TERM_SUFFIXES = {".jsonl": "jsonl", ".tsv": "tsv", ".txt": "text"}
_CHUNKS_AHEAD = 2  # chunks the splitter process may work ahead: bounds memory on long sources


KEEP_LOADING_LEXEMES = 50_000  # the loading tokenizer is kept across sources while its vocab is smaller


class TermSplitter:
    """Splits terms into normalized words with the pipeline's tokenizer rules.

    tokenizer (Callable[[str], Doc]): Splits terms as the pipeline splits text.
    case_sensitive (bool): Keep case (Unicode NFKC applies either way).
    """

    def __init__(self, tokenizer: Callable, case_sensitive: bool = False):
        self.tokenizer = tokenizer
        self.case_sensitive = case_sensitive
        self.special_cases = getattr(tokenizer, "rules", None) or {}
        self.cache: dict[str, list[str]] = {}  # word -> its normalized tokens, while loading
        self._loading: Optional[Callable] = None

    def clear(self) -> None:
        """Forget the words seen while loading a source, and the loading tokenizer once its vocab
        is large: making one takes about a tenth of a second, too long to pay for each term added."""
        self.cache.clear()
        if self._loading is not None and len(getattr(self._loading, "vocab", ())) > KEEP_LOADING_LEXEMES:
            self._loading = None

    def normalize(self, text: str) -> str:
        """The matching form of a token: NFKC, casefolded unless case-sensitive, whitespace removed."""
        norm = unicodedata.normalize("NFKC", text)
        if not self.case_sensitive:
            norm = norm.casefold()
        return "".join(norm.split())

    def is_whole(self, word: str) -> bool:
        """Whether the tokenizer surely leaves a word whole: only digits, or only
        letters and combining marks, and no special case. spaCy's prefix, suffix
        and infix rules all need punctuation, a symbol, or a digit beside a letter."""
        if word in self.special_cases:
            return False
        return word.isalpha() or word.isdigit() or all(unicodedata.category(c)[0] in "LM" for c in word)

    def words_of(self, terms: list[str]) -> list[list[str]]:
        """Each term's normalized tokens, for a chunk of terms at once.

        Terms of letters only take one normalization call together; the words
        of the others are looked up in (or added to) the split cache.
        """
        split = [term.split() for term in terms]
        special_cases = self.special_cases.keys()
        plain = [
            (words[0] if len(words) == 1 else "".join(words)).isalpha() and special_cases.isdisjoint(words)
            if words
            else True
            for words in split
        ]
        norm = unicodedata.normalize("NFKC", "\n".join(" ".join(w) for w, p in zip(split, plain) if p))
        normalized = iter((norm if self.case_sensitive else norm.casefold()).split("\n"))
        cache = self.cache
        self.split_words(word for words, p in zip(split, plain) if not p for word in words if word not in cache)
        result = []
        for words, p in zip(split, plain):
            if p:
                norm_words = next(normalized).split()
                if len(norm_words) == len(words):  # else NFKC made or took a space
                    result.append(norm_words)
                    continue
                self.split_words(words)
            result.append([norm for word in words for norm in cache[word]])
        return result

    def split_words(self, words: Iterable[str]) -> None:
        """Cache the normalized tokens of new words; those that may split go to
        the tokenizer all in one string.

        spaCy's tokenizer splits text on whitespace before it applies its rules,
        so the tokens of a space-joined string are those of each word alone.
        """
        cache, is_whole, normalize = self.cache, self.is_whole, self.normalize
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
        tokenizer = self.loading_tokenizer()
        splits, current = [], []
        for token in tokenizer(" ".join(to_split)):
            current.append(token.text)
            if token.whitespace_:
                splits.append(current)
                current = []
        splits.append(current)
        if len(splits) != len(to_split):  # a tokenizer that does not split on spaces first
            splits = [[t.text for t in tokenizer(word)] for word in to_split]
        cache.update(
            (word, [norm for norm in map(normalize, tokens) if norm]) for word, tokens in zip(to_split, splits)
        )

    def loading_tokenizer(self) -> Callable:
        """The tokenizer's rules on a vocab of its own: while terms load, lexemes
        need no attributes and should not fill the pipeline's vocab."""
        if self._loading is None:
            tok = self.tokenizer
            if isinstance(tok, Tokenizer):
                tok = Tokenizer(
                    Vocab(),
                    rules=tok.rules,
                    prefix_search=tok.prefix_search,
                    suffix_search=tok.suffix_search,
                    infix_finditer=tok.infix_finditer,
                    token_match=tok.token_match,
                    url_match=tok.url_match,
                    faster_heuristics=tok.faster_heuristics,
                )
            self._loading = tok
        return self._loading


_splitter: Optional[TermSplitter] = None  # in the helper process


@contextmanager
def chunk_splitter(splitter: "TermSplitter"):
    """A function from chunks to (chunk, each term's normalized words), run
    by a forked helper process where forking is safe, else by this one."""
    if not can_fork_helper():
        yield lambda chunks: ((chunk, splitter.words_of([term for term, _, _ in chunk])) for chunk in chunks)
        return
    helper = multiprocessing.get_context("fork").Pool(
        1, _start_splitter, (splitter.loading_tokenizer(), splitter.case_sensitive)
    )
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


def can_fork_helper() -> bool:
    """Fork only where it is cheap and safe: Linux, two cores or more, no other
    threads (a lock held by one would stay held in the child), not a daemon
    process (which may not have children)."""
    return (
        sys.platform == "linux"
        and (os.cpu_count() or 1) > 1
        and threading.active_count() == 1
        and not multiprocessing.current_process().daemon
    )


def _start_splitter(tokenizer: Callable, case_sensitive: bool) -> None:
    global _splitter
    _splitter = TermSplitter(tokenizer, case_sensitive)


def _split_terms(terms: list[str]) -> list[list[str]]:
    assert _splitter is not None, "_start_splitter runs first in each helper process"
    with collector_paused():
        return _splitter.words_of(terms)


def checked_chunks(terms: Iterable[tuple[str, str, str]], size: int) -> Iterator[list[tuple[str, str, str]]]:
    terms = iter(terms)
    chunk = list(islice(terms, size))
    while chunk:
        if not all(type(term) is str and type(label) is str and label for term, label, _ in chunk):
            for term, label, _ in chunk:
                _check_term(term, label)
        yield chunk
        chunk = list(islice(terms, size))


@contextmanager
def collector_paused():
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


def read_terms(path: Path, kind: str, label: Optional[str]) -> Iterator[tuple[str, str, str]]:
    """(term, label, KB id) of each line. Lines end at "\n" (or "\r\n"), and each is decoded on its
    own, so that an error names the line it is on (text mode decodes ahead, in blocks)."""
    with open(path, "rb") as lines:
        for line_no, raw in enumerate(lines, 1):
            try:
                line = raw.decode("utf8").rstrip("\r\n")
            except UnicodeDecodeError as err:
                raise ValueError(f"{path}, line {line_no}: not UTF-8 ({err.reason} at byte {err.start + 1}).") from None
            if kind == "tsv":  # the common case, without a call
                fields = line.split("\t")
                if len(fields) == 3 and fields[0] and fields[1]:
                    yield fields[0], fields[1], fields[2]
                    continue
            if not line.strip():
                continue
            yield _parse_line(line, kind, label, path, line_no)


def _parse_line(line: str, kind: str, label: Optional[str], path: Path, line_no: int) -> tuple[str, str, str]:
    where = f"{path}, line {line_no}"
    if kind == "text":
        if not label:
            raise ValueError(f"{where}: a plain-text term list needs a label.")
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
        raise ValueError(f'{where}: expected {{"label": ..., "pattern": "..."}}, got {line[:80]!r}')
    if not isinstance(record["pattern"], str):
        raise ValueError(
            f"{where}: token patterns are not supported (pattern is {type(record['pattern']).__name__}); "
            "use phrase patterns (strings)."
        )
    return record["pattern"], str(record.get("label", label)), str(record.get("id", "") or "")
