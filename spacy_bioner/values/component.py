"""The `bioner_values` component: a normalized value for each value-bearing entity, after any NER.

Doc.ents -> each entity's label -> its normalizer -> span._.value (a dict), or span._.value_reason

The values are kept in doc.user_data, as spaCy keeps span extensions, so they survive Doc.to_bytes and
DocBin(store_user_data=True).
"""

from datetime import date
from typing import Any, Optional

from spacy.language import Language
from spacy.tokens import Doc, Span

from ..core.stateless import Stateless
from .normalizers import normalizers

DEFAULT_VALUE_LABELS = {
    "DATE": "date",
    "TIME": "date",
    "DATE_TIME": "date",
    "MONEY": "money",
    "PERCENT": "percent",
    "QUANTITY": "quantity",
    "CARDINAL": "cardinal",
    "ORDINAL": "ordinal",
    "PHONE_NUMBER": "phone",
    "IBAN_CODE": "iban",
    "EMAIL": "email",
    "URL": "url",
    "IP_ADDRESS": "ip",
    "CREDIT_CARD": "card",
}
DEFAULT_VALUES_CONFIG: dict[str, Any] = {"labels": DEFAULT_VALUE_LABELS, "reference_date": None, "phone_region": "US"}
MAX_VALUE_CHARS = 200  # a longer entity is no value expression; some parsers take quadratic time on one
REFERENCE_DATE_KEY = "reference_date"  # doc.user_data[key]: an ISO date that relative dates are read against
for _name in ("value", "value_reason"):
    if not Span.has_extension(_name):
        Span.set_extension(_name, default=None)


@Language.factory(
    "bioner_values",
    assigns=["span._.value", "span._.value_reason"],
    requires=["doc.ents"],
    default_config=DEFAULT_VALUES_CONFIG,
)
def make_values(
    nlp: Language, name: str, labels: dict[str, str], reference_date: Optional[str], phone_region: Optional[str]
) -> "Values":
    """Create a bioner_values component.

    labels (Dict[str, str]): Entity label -> the normalizer that reads it: date, money, percent, quantity,
        cardinal, ordinal, phone, iban, email, url, ip or card. Entities of other labels get no value.
    reference_date (Optional[str]): ISO date that relative dates ("next Tuesday") are read against;
        None: the day the doc is processed. doc.user_data["reference_date"] overrides it for a doc.
    phone_region (Optional[str]): ISO 3166 region of phone numbers written without a country code.
    """
    return Values(name, labels=labels, reference_date=reference_date, phone_region=phone_region)


class Values(Stateless):
    """Gives each entity whose label has a normalizer its value, or the reason it has none."""

    def __init__(
        self,
        name: str = "bioner_values",
        *,
        labels: dict[str, str] = DEFAULT_VALUE_LABELS,
        reference_date: Optional[str] = None,
        phone_region: Optional[str] = "US",
    ):
        self.name = name
        available = normalizers(phone_region)
        unknown = sorted({kind for kind in labels.values() if kind not in available})
        if unknown:
            raise ValueError(f"{name}: unknown normalizers {unknown} in labels; they are {sorted(available)}.")
        self.normalizers = {label: available[kind] for label, kind in labels.items()}
        self.reference_date = _iso_date(reference_date, f"{name}: reference_date") if reference_date else None

    def __call__(self, doc: Doc) -> Doc:
        reference = self._reference(doc)
        for ent in doc.ents:
            normalize = self.normalizers.get(ent.label_)
            if normalize is None:
                continue
            if len(ent.text) > MAX_VALUE_CHARS:
                ent._.value, ent._.value_reason = None, f"longer than {MAX_VALUE_CHARS} characters"
                continue
            try:
                value, reason = normalize(ent.text, reference)
            except (ValueError, OverflowError, ArithmeticError, RecursionError) as error:  # a library's edge case
                value, reason = None, f"unreadable ({type(error).__name__})"
            ent._.value, ent._.value_reason = value, reason
        return doc

    def _reference(self, doc: Doc) -> date:
        given = doc.user_data.get(REFERENCE_DATE_KEY)
        if given is not None:
            return _iso_date(given, f'{self.name}: doc.user_data["{REFERENCE_DATE_KEY}"]')
        return self.reference_date or date.today()


def _iso_date(value: Any, where: str) -> date:
    if isinstance(value, date):
        return value
    try:
        return date.fromisoformat(str(value))
    except ValueError:
        raise ValueError(f"{where} must be an ISO date (YYYY-MM-DD), got {value!r}.") from None
