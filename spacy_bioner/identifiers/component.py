"""The `bioner_identifiers` component: identifiers with a fixed grammar, found and validated before the model.

text -> one regex scan for every kind's candidates -> each candidate validated -> spans on tokens -> Doc.ents

`bioner` after it keeps these entities as presets, so the model is never asked about them.
"""

import re
from typing import Any, Optional

from spacy.language import Language
from spacy.tokens import Doc, Span
from spacy.util import filter_spans

from ..core.stateless import Stateless
from .kinds import Identifier, builtin_kinds, make_identifier

DEFAULT_LABELS = {
    "email": "EMAIL",
    "url": "URL",
    "ip": "IP_ADDRESS",
    "phone": "PHONE_NUMBER",
    "iban": "IBAN_CODE",
    "card": "CREDIT_CARD",
    "datetime": "DATE_TIME",
}
DEFAULT_IDENTIFIERS_CONFIG: dict[str, Any] = {
    "labels": DEFAULT_LABELS,
    "phone_region": "US",
    "custom": {},
    "overwrite_ents": False,
}
if not Span.has_extension("identifier"):
    Span.set_extension("identifier", default=None)  # the canonical form its validator gave


@Language.factory(
    "bioner_identifiers",
    assigns=["doc.ents", "span._.identifier"],
    default_config=DEFAULT_IDENTIFIERS_CONFIG,
)
def make_identifiers(
    nlp: Language,
    name: str,
    labels: dict[str, str],
    phone_region: Optional[str],
    custom: dict[str, Any],  # Identifiers, checked by the class (confection cannot check a NamedTuple)
    overwrite_ents: bool,
) -> "Identifiers":
    """Create a bioner_identifiers component.

    labels (Dict[str, str]): The label of each shipped kind (email, url, ip, phone, iban, card, datetime);
        a kind given "" is not looked for.
    phone_region (Optional[str]): ISO 3166 region of phone numbers written without a country code
        (None: only numbers with "+" or "00" and a country code).
    custom (Dict[str, Identifier]): Your own kinds, label -> Identifier(pattern, validate), from registered
        functions (`@spacy.registry.misc`).
    overwrite_ents (bool): Whether identifiers replace entities already on the doc that they overlap, as
        the EntityRuler's setting of that name; otherwise those entities win.
    """
    return Identifiers(
        nlp, name, labels=labels, phone_region=phone_region, custom=custom, overwrite_ents=overwrite_ents
    )


class Identifiers(Stateless):
    """Finds every kind's candidates in one scan of the text and keeps those their validators accept."""

    def __init__(
        self,
        nlp: Language,
        name: str = "bioner_identifiers",
        *,
        labels: dict[str, str] = DEFAULT_LABELS,
        phone_region: Optional[str] = "US",
        custom: Optional[dict[str, Identifier]] = None,
        overwrite_ents: bool = False,
    ):
        self.name = name
        builtins = builtin_kinds(phone_region)
        unknown = sorted(set(labels) - set(builtins))
        if unknown:
            raise ValueError(f"{name}: unknown identifier kinds {unknown} in labels; the kinds are {sorted(builtins)}.")
        self.kinds: dict[str, Identifier] = {labels[kind]: builtins[kind] for kind in builtins if labels.get(kind)}
        for label, identifier in (custom or {}).items():
            if not isinstance(identifier, Identifier):
                raise ValueError(
                    f"{name}: custom[{label!r}] must be an Identifier(pattern, validate), got {identifier!r}."
                )
            self.kinds[label] = make_identifier(*identifier)  # checks the pattern
        self.overwrite_ents = overwrite_ents
        self._labels = list(self.kinds)
        # one alternation, a group per kind: the text is scanned once for all of them
        self._scan = re.compile("|".join(f"({identifier.pattern})" for identifier in self.kinds.values()))
        self._alone = [re.compile(identifier.pattern) for identifier in self.kinds.values()]

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(self._labels)

    def __call__(self, doc: Doc) -> Doc:
        found = self.find(doc)
        if not found:
            return doc
        if self.overwrite_ents:
            taken = {i for span in found for i in range(span.start, span.end)}
            kept = [ent for ent in doc.ents if not taken.intersection(range(ent.start, ent.end))]
        else:
            kept = list(doc.ents)
            taken = {i for ent in kept for i in range(ent.start, ent.end)}
            found = [span for span in found if not taken.intersection(range(span.start, span.end))]
        doc.ents = sorted(kept + found, key=lambda span: span.start)
        return doc

    def find(self, doc: Doc) -> list[Span]:
        """The valid identifiers of the doc as spans over whole tokens, overlaps resolved (longest first)."""
        spans = []
        for label, start, end, canonical in self.matches(doc.text):
            # whole tokens: where the tokenizer glued other characters to an identifier, they come along
            span = doc.char_span(start, end, label=label, alignment_mode="expand")
            if span is not None:
                span._.identifier = canonical
                spans.append(span)
        return filter_spans(spans)

    def matches(self, text: str) -> list[tuple[str, int, int, str]]:
        """(label, start char, end char, canonical form) of each valid identifier in the text."""
        found: list[tuple[str, int, int, str]] = []
        position = 0
        while True:
            match = self._scan.search(text, position)
            if match is None:
                return found
            hit = self._validated(text, match)
            if hit is None:
                position = match.end()  # a near miss is one string: no identifier is looked for within it
                continue
            found.append(hit)
            position = hit[2]

    def _validated(self, text: str, match: re.Match) -> Optional[tuple[str, int, int, str]]:
        """The first kind, from the one that matched on, whose candidate starting here its validator accepts."""
        first = match.lastindex - 1 if match.lastindex else 0
        for index in range(first, len(self._labels)):
            candidate = match if index == first else self._alone[index].match(text, match.start())
            if candidate is None:
                continue
            canonical = self.kinds[self._labels[index]].validate(candidate.group(0))
            if canonical is not None:
                return self._labels[index], candidate.start(), candidate.end(), canonical
        return None
