"""The `bioner_gazetteer` component: dictionary-only matching, an EntityRuler replacement for phrase lists."""

from collections.abc import Iterable
from pathlib import Path
from typing import Any, Callable, Optional, Union

from pydantic import Field
from spacy.language import Language
from spacy.pipeline import Pipe
from spacy.scorer import get_ner_prf
from spacy.tokens import Doc
from spacy.training import Example, validate_examples

from ..core.serialize import (
    SavedFields,
    cfg_bytes,
    cfg_from_bytes,
    check_meta_labels,
    listed_file,
    read_files,
    validated,
    write_files,
)
from .matcher import Gazetteer, MatchFilter


@Language.factory(
    "bioner_gazetteer",
    assigns=["doc.ents", "doc.spans"],
    default_config={
        "write_ents": True,
        "overwrite_ents": False,
        "case_sensitive": False,
        "filter": "leftmost_longest",
        "spans_key": "bioner_gazetteer",
        "scorer": {"@scorers": "spacy.ner_scorer.v1"},
    },
    default_score_weights={"ents_f": 1.0, "ents_p": 0.0, "ents_r": 0.0, "ents_per_type": None},
)
def make_gazetteer(
    nlp: Language,
    name: str,
    write_ents: bool,
    overwrite_ents: bool,
    case_sensitive: bool,
    filter: str,
    spans_key: str,
    scorer: Optional[Callable],
) -> "GazetteerComponent":
    """Create a bioner_gazetteer component.

    write_ents (bool): Also write non-overlapping matches to `doc.ents`.
    overwrite_ents (bool): Let matches replace existing entities (else existing ones win).
    case_sensitive (bool): Match case exactly (NFKC normalization applies either way).
    filter (str): How overlapping matches are resolved for doc.ents:
        "leftmost_longest" or "longest".
    spans_key (str): Key in `doc.spans` for every match, nested and overlapping ones included.
    """
    return GazetteerComponent(
        nlp,
        name,
        write_ents=write_ents,
        overwrite_ents=overwrite_ents,
        case_sensitive=case_sensitive,
        filter=filter,
        spans_key=spans_key,
        scorer=scorer,
    )


class GazetteerComponent(Pipe):
    """Find every term of large term lists in one pass; write them to doc.spans (and doc.ents)."""

    def __init__(
        self,
        nlp: Language,
        name: str = "bioner_gazetteer",
        *,
        write_ents: bool = True,
        overwrite_ents: bool = False,
        case_sensitive: bool = False,
        filter: str = "leftmost_longest",
        spans_key: str = "bioner_gazetteer",
        scorer: Optional[Callable] = get_ner_prf,
    ):
        self.name = name
        self.scorer = scorer
        self.cfg = checked_cfg(
            {
                "write_ents": write_ents,
                "overwrite_ents": overwrite_ents,
                "case_sensitive": case_sensitive,
                "filter": filter,
                "spans_key": spans_key,
            },
            f"the {name} settings",
        )
        self.gazetteer = Gazetteer(nlp.tokenizer, case_sensitive=case_sensitive)

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(self.gazetteer.labels)

    def __len__(self) -> int:
        return len(self.gazetteer)

    def add_patterns(self, patterns: Iterable[dict]) -> None:
        """Add EntityRuler-style phrase patterns: {"label": ..., "pattern": "...", "id": ...}."""
        self.gazetteer.add_patterns(patterns)

    def initialize(
        self,
        get_examples: Optional[Callable[[], Iterable[Example]]] = None,
        *,
        nlp: Optional[Language] = None,
        gazetteer: Optional[Union[str, Path]] = None,
        gazetteer_label: Optional[str] = None,
        patterns: Optional[list[dict]] = None,
    ) -> None:
        """Load term lists: a file or directory (`gazetteer`) and/or inline patterns."""
        if gazetteer:
            self.gazetteer.load(gazetteer, label=gazetteer_label)
        if patterns:
            self.add_patterns(patterns)

    def __call__(self, doc: Doc) -> Doc:
        cfg = self.cfg
        self.gazetteer.annotate(
            doc,
            cfg["spans_key"],
            write_ents=cfg["write_ents"],
            longest_first=cfg["filter"] == "longest",
            keep_entities=not cfg["overwrite_ents"],
        )
        return doc

    def score(self, examples: Iterable[Example], **kwargs: Any) -> dict[str, Any]:
        validate_examples(examples, "GazetteerComponent.score")
        return self.scorer(examples, **kwargs) if self.scorer is not None else {}

    def to_bytes(self, *, exclude: Iterable[str] = tuple()) -> bytes:
        return self.gazetteer.to_bytes()

    def from_bytes(self, bytes_data: bytes, *, exclude: Iterable[str] = tuple()) -> "GazetteerComponent":
        self.gazetteer.from_bytes(bytes_data, where="bytes")
        return self

    def to_disk(self, path: Union[str, Path], *, exclude: Iterable[str] = tuple()) -> None:
        write_files(Path(path), {"cfg": cfg_bytes(self.cfg), "gazetteer": self.gazetteer.to_bytes()})

    def from_disk(self, path: Union[str, Path], *, exclude: Iterable[str] = tuple()) -> "GazetteerComponent":
        path = Path(path)
        files = read_files(path)
        cfg = cfg_from_bytes(listed_file(files, path, "cfg"), str(path / "cfg"))
        self.cfg = checked_cfg(cfg, str(path / "cfg"))
        self.gazetteer.from_bytes(listed_file(files, path, "gazetteer"), where=str(path / "gazetteer"))
        check_meta_labels(path, self.name, self.labels)
        return self


class SavedGazetteer(SavedFields):
    """The bioner_gazetteer component's settings, as its cfg file holds them."""

    write_ents: bool
    overwrite_ents: bool
    case_sensitive: bool
    filter: MatchFilter
    spans_key: str = Field(min_length=1)


def checked_cfg(cfg: Any, where: str) -> dict[str, Any]:
    """The component's settings, each of its type and in range, or an error naming `where` and the setting."""
    validated(SavedGazetteer, cfg, where)
    return cfg
