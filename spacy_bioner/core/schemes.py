"""Tag schemes: tag sets, which tag may follow which, and tags <-> spans.

Tag ids are laid out label-major: 0 is "O", then each label owns a block of
consecutive ids (B, I for BIO; B, I, L, U for BILOU). Adding a label appends a
block, so a trained weight matrix grows by columns without reindexing.
"""

from collections.abc import Iterable, Sequence
from typing import Literal, Optional, get_args

import numpy

from .decode import allowed_mask

Span = tuple[int, int, int]  # [start, end) in tokens, label index

SchemeName = Literal["BIO", "BILOU"]
OUTSIDE = 0  # the tag id of "O" in every scheme
SCHEMES = get_args(SchemeName)


def words_within(span: Span, is_space: numpy.ndarray) -> Optional[Span]:
    """The span from its first word to its last, or None if it has no word:
    nothing starts or ends on whitespace, so raw text's line breaks at an
    entity's edges ("Bob Smith\\n\\n") are left out of it.

    >>> words_within((1, 4, 0), numpy.array([False, True, False, True]))
    (2, 3, 0)
    """
    start, end, label = span
    words = numpy.flatnonzero(~is_space[start:end])
    if not len(words):
        return None
    return start + int(words[0]), start + int(words[-1]) + 1, label


class TagScheme:
    """The tags of one scheme over a list of labels.

    name (str): "BIO" (IOB2) or "BILOU".
    labels (Sequence[str]): The entity labels, in tag-id order.
    """

    def __init__(self, name: str, labels: Sequence[str]):
        if name not in SCHEMES:
            raise ValueError(f"Unknown tag scheme {name!r}: use one of {SCHEMES}.")
        self.name = name
        self.labels = list(labels)
        self.moves = "BI" if name == "BIO" else "BILU"
        self.tags = ["O"] + [f"{m}-{label}" for label in self.labels for m in self.moves]
        self.tag_ids = {tag: i for i, tag in enumerate(self.tags)}
        # Per-tag masks, made once: decoding asks for them for every doc.
        tag_moves = [tag[0] for tag in self.tags]
        self._closing = numpy.array([self.name == "BIO" or m in "OLU" for m in tag_moves])
        self._opening = numpy.array([m in "BU" for m in tag_moves])
        self._continuing = numpy.array([m in "IL" for m in tag_moves])
        self._continuing_bytes = self._continuing.view(numpy.uint8)
        self._bounds = numpy.array([m in ("B" if name == "BIO" else "BUL") for m in tag_moves])
        self._tags_of: dict[tuple[int, ...], numpy.ndarray] = {}  # tags_of's masks, by tuple of labels
        self._entity_types = numpy.array(
            [0] + [1 + label for label in range(len(self.labels)) for _ in self.moves], dtype=numpy.int64
        )

    @property
    def n_tags(self) -> int:
        return len(self.tags)

    def move(self, tag: int) -> str:
        """The move letter of a tag id ("O", "B", "I", "L" or "U")."""
        return "O" if tag == 0 else self.moves[(tag - 1) % len(self.moves)]

    def label_of(self, tag: int) -> int:
        """The label index of a non-O tag id."""
        return (tag - 1) // len(self.moves)

    def tag_id(self, move: str, label: int) -> int:
        return 1 + label * len(self.moves) + self.moves.index(move)

    def entity_types(self) -> numpy.ndarray:
        """int64 (n_tags,): 0 for O, else 1 + the tag's label index."""
        return self._entity_types

    def tags_of(self, labels: tuple[int, ...]) -> numpy.ndarray:
        """bool (n_tags,): the tags of these labels (indices into `labels`); made once per set of labels."""
        if labels not in self._tags_of:
            tags = numpy.zeros(self.n_tags, dtype=bool)
            for label in labels:  # each label's tags are a block
                tags[self.tag_id(self.moves[0], label) : self.tag_id(self.moves[-1], label) + 1] = True
            tags.flags.writeable = False
            self._tags_of[labels] = tags
        return self._tags_of[labels]

    def one_word_tags(self) -> numpy.ndarray:
        """int32 (n_labels,): the tag of a one-word entity of each label (U-x, or B-x in BIO)."""
        move = "B" if self.name == "BIO" else "U"
        return numpy.array([self.tag_id(move, label) for label in range(len(self.labels))], dtype=numpy.int32)

    def transitions(self) -> numpy.ndarray:
        """Allowed transitions: bool (n_tags + 1, n_tags); the last row is the start.

        A tag that opens nothing (O, B, U) may follow a closing tag or the start;
        I and L only the B or I of their own label (as `_may_follow` says, made whole)."""
        n = self.n_tags
        allowed = numpy.zeros((n + 1, n), dtype=numpy.bool_)
        allowed[numpy.ix_(numpy.append(self._closing, True), ~self._continuing)] = True
        inside = numpy.flatnonzero(self._continuing)
        first_of_label = 1 + (inside - 1) // len(self.moves) * len(self.moves)
        for move in "BI":
            allowed[first_of_label + self.moves.index(move), inside] = True
        return allowed

    def _may_follow(self, prev: Optional[int], tag: int) -> bool:
        move = self.move(tag)
        if move in "IL":
            return prev is not None and self.move(prev) in "BI" and self.label_of(prev) == self.label_of(tag)
        # O, B and U open nothing, so whatever came before must be closed.
        return prev is None or self.name == "BIO" or self.move(prev) in "OLU"

    def closing(self) -> numpy.ndarray:
        """bool (n_tags,): tags after which a sequence (or a sentence) may end."""
        return self._closing

    def opening(self) -> numpy.ndarray:
        """bool (n_tags,): tags that start an entity."""
        return self._opening

    def continuing(self) -> numpy.ndarray:
        """bool (n_tags,): tags that need a predecessor of the same entity."""
        return self._continuing

    def continuing_bytes(self) -> numpy.ndarray:
        """`continuing` as uint8, as the compiled screens and rules take it (one view, not one per call)."""
        return self._continuing_bytes

    def is_valid(self, tags: Sequence[int], sent_starts: Optional[Sequence[bool]] = None) -> bool:
        """Whether a tag sequence is well formed (and keeps entities inside sentences)."""
        prev = None
        closing = self.closing()
        for i, tag in enumerate(tags):
            if sent_starts is not None and i > 0 and sent_starts[i]:
                if not closing[prev]:
                    return False
                prev = None
            if not self._may_follow(prev, tag):
                return False
            prev = tag
        return prev is None or bool(closing[prev])

    def to_spans(self, tags: Iterable[int]) -> list[Span]:
        """Spans of a valid tag sequence.

        >>> TagScheme("BIO", ["PER"]).to_spans([1, 2, 0, 1])
        [(0, 2, 0), (3, 4, 0)]
        """
        tags = numpy.asarray(list(tags) if not isinstance(tags, numpy.ndarray) else tags, dtype=numpy.int64)
        tagged = numpy.flatnonzero(tags)  # only entity tokens need a look: most are O
        moves = [self.moves[m] for m in ((tags[tagged] - 1) % len(self.moves)).tolist()]
        spans: list[Span] = []
        start: Optional[int] = None
        label = last = -2
        for i, move, tag_label in zip(tagged.tolist(), moves, ((tags[tagged] - 1) // len(self.moves)).tolist()):
            if start is not None and i != last + 1:  # an O in between closed it
                spans.append((start, last + 1, label))
                start = None
            continues = move in "IL" and start is not None and tag_label == label
            if start is not None and not continues:
                spans.append((start, i, label))
                start = None
            if start is None:  # an orphan I/L is read as a start
                start, label = i, tag_label
            if move in "LU":
                spans.append((start, i + 1, label))
                start = None
            last = i
        if start is not None:
            spans.append((start, last + 1, label))
        return spans

    def from_spans(self, spans: Iterable[Span], length: int) -> numpy.ndarray:
        """The tag sequence of non-overlapping spans.

        >>> TagScheme("BILOU", ["PER"]).from_spans([(0, 2, 0), (3, 4, 0)], 4).tolist()
        [1, 3, 0, 4]
        """
        tags = numpy.zeros(length, dtype=numpy.int32)
        for start, end, label in spans:
            if self.name == "BILOU" and end - start == 1:
                tags[start] = self.tag_id("U", label)
                continue
            tags[start] = self.tag_id("B", label)
            tags[start + 1 : end] = self.tag_id("I", label)
            if self.name == "BILOU":
                tags[end - 1] = self.tag_id("L", label)
        return tags

    def from_biluo(self, biluo: Sequence[Optional[str]]) -> numpy.ndarray:
        """Tag ids of spaCy's BILUO strings; -1 where the gold is missing.

        A tag whose label is unknown raises: labels are fixed at initialize.
        """
        ids = numpy.full(len(biluo), -1, dtype=numpy.int32)
        for i, tag in enumerate(biluo):
            if tag is None or tag == "-":
                continue
            if tag == "O":
                ids[i] = 0
                continue
            move, label = tag.split("-", 1)
            if self.name == "BIO":
                move = {"U": "B", "L": "I"}[move] if move in "UL" else move
            try:
                ids[i] = self.tag_ids[f"{move}-{label}"]
            except KeyError:
                raise ValueError(
                    f"Gold entity label {label!r} is not among the component's labels "
                    f"{self.labels}: add it with add_label or pass it to initialize."
                ) from None
        return ids

    def allowed(
        self,
        sent_starts: numpy.ndarray,
        is_space: numpy.ndarray,
        forced: numpy.ndarray,
        closed_before: Optional[numpy.ndarray] = None,
    ) -> numpy.ndarray:
        """Which tag each token may take: uint8 (n_tokens, n_tags).

        sent_starts (ndarray): bool, True where a sentence starts.
        is_space (ndarray): bool, True for whitespace tokens.
        forced (ndarray): int32 tag per token, -1 where the token is free.
        closed_before (Optional[ndarray]): bool, True where the entity before
            must not continue (after a preset entity); only BIO needs it.
        """
        return allowed_mask(
            sent_starts,
            is_space,
            numpy.ascontiguousarray(forced, dtype=numpy.int32),
            closed_before,
            self.continuing(),
            self.closing(),
            self._bounds,
        )
