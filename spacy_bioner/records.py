"""Input records for bulk annotation: lines of a file read as text or JSONL, checked, and
cut to what a worker can tag in bounded time.

A line ends at "\\n" alone ("\\r\\n" too): a "\\r" inside a line is part of its record.
Each line is one record, numbered from 1. A line that is not a record (not UTF-8,
not a JSON object with a string "text", NaN or Infinity, nested too deeply, a lone
surrogate) becomes a BadLine naming its line and why; so does a text over the limits
(`Limits`). Other fields of a JSONL record are passed through as they are, integers
of any size included.
"""

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple, Union

FORMATS = ("text", "jsonl")
LONG_TEXTS = ("skip", "split")
# spaCy's tokenizer splits a run of symbols (emoji, punctuation) one affix at a time, copying
# the rest each time: time quadratic in the run (bench/bench_hostile.py).
SYMBOL_RUN = re.compile(r"[^\w\s]+")
# A JSON escape of a UTF-16 surrogate: the only way a lone surrogate gets into a record.
SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


class BadLine(ValueError):
    """An input line that is not a record, or one left out: its message starts with the line."""


class Limits(NamedTuple):
    """What a record's text may be. max_chars: the longest text (spaCy's nlp.max_length too);
    long_texts: "skip" a longer text, or "split" it into windows of at most max_chars at
    whitespace (paragraph breaks first), tagged apart and their entities merged;
    max_symbol_run: the longest run of symbols (neither letters, digits nor whitespace)."""

    max_chars: int = 100_000
    long_texts: str = "skip"
    max_symbol_run: int = 200

    def checked(self, max_length: int) -> "Limits":
        """These limits, valid, with max_chars at most the pipeline's max_length."""
        if not (isinstance(self.max_chars, int) and self.max_chars >= 1):
            raise ValueError(f"max_chars must be a positive number of characters, got {self.max_chars!r}.")
        if self.long_texts not in LONG_TEXTS:
            raise ValueError(f"long_texts must be one of {LONG_TEXTS}, got {self.long_texts!r}.")
        if not (isinstance(self.max_symbol_run, int) and self.max_symbol_run >= 1):
            raise ValueError(f"max_symbol_run must be a positive number of characters, got {self.max_symbol_run!r}.")
        return self._replace(max_chars=min(self.max_chars, max_length))


Record = dict[str, Any]
Windows = list[tuple[int, int]]  # character offsets of the pieces of a text tagged apart


def read_records(
    path: Path, fmt: str, limits: Limits, after_line: int = 0
) -> Iterator[tuple[int, Union[tuple[Record, Windows], BadLine]]]:
    """(line number, (record, its text's windows) or BadLine) of each line after `after_line` (fmt: one of FORMATS)."""
    with open(path, "rb") as lines:
        for line_no, raw in enumerate(lines, 1):
            if line_no > after_line:
                record = parse_line(raw, line_no, fmt)
                yield line_no, record if isinstance(record, BadLine) else windowed(record, line_no, limits)


def parse_line(raw: bytes, line_no: int, fmt: str) -> Union[Record, BadLine]:
    """The record of one line (with its end), or why it is none."""
    try:
        line = raw.decode("utf8").rstrip("\r\n")
    except UnicodeDecodeError as err:
        return BadLine(f"line {line_no}: not UTF-8 ({err.reason} at byte {err.start + 1})")
    if fmt == "text":
        return {"text": line}
    try:
        record = _DECODER.decode(line)
    except RecursionError:
        return BadLine(f"line {line_no}: JSON nested too deeply")
    except ValueError as err:
        return BadLine(f"line {line_no}: not valid JSON ({getattr(err, 'msg', err)})")
    if not isinstance(record, dict) or not isinstance(record.get("text"), str):
        return BadLine(f'line {line_no}: expected an object with a string "text" field')
    if b"\\u" in raw and SURROGATE_ESCAPE.search(raw):
        try:
            json.dumps(record, ensure_ascii=False).encode("utf8")
        except UnicodeEncodeError:
            return BadLine(f"line {line_no}: a lone surrogate (a \\ud800-\\udfff escape alone), which is not text")
    return record


def _not_a_number(constant: str):
    raise ValueError(f"{constant} is not a JSON number")


_DECODER = json.JSONDecoder(parse_constant=_not_a_number)  # made once: json.loads with options makes one a call


def windowed(record: Record, line_no: int, limits: Limits) -> Union[tuple[Record, Windows], BadLine]:
    """A record with the windows of its text, or why its text is left out."""
    windows = text_windows(record["text"], line_no, limits)
    return windows if isinstance(windows, BadLine) else (record, windows)


def text_windows(text: str, line_no: int, limits: Limits) -> Union[Windows, BadLine]:
    """The pieces of `text` to tag, or why it is left out."""
    longest_run = max(map(len, SYMBOL_RUN.findall(text)), default=0) if len(text) > limits.max_symbol_run else 0
    if longest_run > limits.max_symbol_run:
        return BadLine(
            f"line {line_no}: a run of {longest_run:,} symbols without a space (the limit is {limits.max_symbol_run:,})"
        )
    if len(text) <= limits.max_chars:
        return [(0, len(text))]
    if limits.long_texts == "skip":
        return BadLine(f"line {line_no}: {len(text):,} characters (the limit is {limits.max_chars:,})")
    return split_windows(text, limits.max_chars)


def split_windows(text: str, max_chars: int) -> Windows:
    """Windows of at most max_chars that cover `text`, each ending at its last paragraph break,
    else line break, else space (a word longer than a window is cut)."""
    windows, start = [], 0
    while len(text) - start > max_chars:
        end = start + max_chars
        for separator in ("\n\n", "\n", " "):
            cut = text.rfind(separator, start + 1, end)
            if cut > start:
                end = cut + len(separator)
                break
        windows.append((start, end))
        start = end
    windows.append((start, len(text)))
    return windows


def output_line(record: Record, entities: list[dict[str, Any]]) -> str:
    """A record with its entities, as one line of JSON, non-ASCII characters escaped.
    The standard library's writer, not ujson's: ujson writes an integer beyond 64 bits as nothing."""
    return json.dumps({**record, "entities": entities}, separators=(",", ":")) + "\n"
