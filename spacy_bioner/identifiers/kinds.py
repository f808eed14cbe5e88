"""The identifiers with a fixed grammar: a candidate pattern and a validator for each kind.

A kind's pattern finds candidates; its validator decides. Patterns are joined into one regex, so
the text is scanned once for all kinds. Each validator returns the identifier's canonical form,
or None when the candidate fails (a bad check digit, an impossible date, a number no region uses).
"""

import ipaddress
import re
from datetime import date, datetime
from typing import Callable, NamedTuple, Optional

import phonenumbers
from email_validator import EmailNotValidError, validate_email
from spacy.util import registry
from stdnum import iban, luhn
from stdnum.exceptions import ValidationError

Validate = Callable[[str], Optional[str]]


class Identifier(NamedTuple):
    """One kind of identifier: a regex for its candidates and the function that validates them.

    pattern: a regular expression (no named groups) that matches a candidate.
    validate: the candidate's text -> its canonical form, or None if it is not a valid identifier.
    """

    pattern: str
    validate: Validate


@registry.misc("bioner.identifier.v1")
def make_identifier(pattern: str, validate: Optional[Validate] = None) -> Identifier:
    """A kind of your own for bioner_identifiers' `custom` setting: a pattern without capturing groups
    ((?:...) groups only), and a registered validator (None: every match is valid, as itself)."""
    try:
        groups = re.compile(pattern).groups
    except re.error as error:
        raise ValueError(
            f"bioner.identifier.v1: the pattern {pattern!r} is not a regular expression: {error}"
        ) from None
    if groups:
        raise ValueError(f"bioner.identifier.v1: the pattern {pattern!r} has capturing groups; use (?:...) groups.")
    return Identifier(pattern, validate or _as_is)


def _as_is(text: str) -> Optional[str]:
    return text


# Card issuers by prefix ranges and lengths (ISO/IEC 7812 ranges the major networks publish).
CARD_ISSUERS: list[tuple[str, list[tuple[int, int]], tuple[int, ...]]] = [
    ("visa", [(4, 4)], (13, 16, 19)),
    ("mastercard", [(51, 55), (2221, 2720)], (16,)),
    ("amex", [(34, 34), (37, 37)], (15,)),
    ("discover", [(6011, 6011), (644, 649), (65, 65)], (16, 19)),
    ("jcb", [(3528, 3589)], (16, 17, 18, 19)),
    ("diners", [(300, 305), (36, 36), (38, 39)], (14, 16, 19)),
    ("unionpay", [(62, 62)], (16, 17, 18, 19)),
    ("maestro", [(5018, 5018), (5020, 5020), (5038, 5038), (6304, 6304), (6759, 6759), (6761, 6763)], (12, 13, 16, 19)),
]


def card_issuer(digits: str) -> Optional[str]:
    """The network whose prefix range and length fit these digits, or None."""
    for name, ranges, lengths in CARD_ISSUERS:
        if len(digits) in lengths:
            for low, high in ranges:
                width = len(str(low))
                if low <= int(digits[:width]) <= high:
                    return name
    return None


def validate_card(text: str) -> Optional[str]:
    digits = re.sub(r"[ -]", "", text)
    if card_issuer(digits) is None or not luhn.is_valid(digits):
        return None
    return digits


def validate_iban(text: str) -> Optional[str]:
    try:
        return iban.validate(text)  # the compact form: no spaces, upper case
    except ValidationError:
        return None


def validate_email_address(text: str) -> Optional[str]:
    try:
        result = validate_email(text, check_deliverability=False)
    except EmailNotValidError:
        return None
    return result.normalized


def validate_url(text: str) -> Optional[str]:
    match = re.match(r"(?i)(?:(https?|ftp)://)?([^/?#:\s]+)(.*)", text)
    host = match.group(2).lower() if match else ""
    if match is None or not (match.group(1) or host.startswith("www.")):
        return None
    labels = host.split(".")
    if len(labels) < (2 if match.group(1) else 3) or not re.fullmatch(r"[a-z]{2,63}|xn--[a-z0-9-]+", labels[-1]):
        return None
    if any(not label or len(label) > 63 or label.startswith("-") or label.endswith("-") for label in labels):
        return None
    scheme = (match.group(1) or "http").lower()
    return f"{scheme}://{host}{match.group(3)}"


def validate_ip(text: str) -> Optional[str]:
    try:
        return ipaddress.ip_address(text).compressed
    except ValueError:
        return None


def validate_iso_datetime(text: str) -> Optional[str]:
    match = re.fullmatch(
        r"(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,6}))?)?(Z|[+-]\d{2}(?::?\d{2})?)?)?",
        text,
    )
    if match is None:
        return None
    year, month, day, hour, minute, second, fraction, zone = match.groups()
    try:
        day_value = date(int(year), int(month), int(day))
        if hour is None:
            return day_value.isoformat()
        moment = datetime(int(year), int(month), int(day), int(hour), int(minute), int(second or 0))
    except ValueError:  # month 13, February 30, hour 25
        return None
    if zone and zone != "Z" and not (int(zone[1:3]) <= 14 and int(zone[-2:] if len(zone) > 3 else 0) < 60):
        return None
    fraction_part = f".{fraction}" if fraction else ""
    seconds = moment.strftime("%H:%M:%S") if second is not None else moment.strftime("%H:%M")
    return f"{day_value.isoformat()}T{seconds}{fraction_part}{zone or ''}"


def phone_validator(region: Optional[str]) -> Validate:
    """Valid numbers of the phonenumbers library, in E.164; region: for numbers without a country code.
    The digits must be grouped as the number's country groups them ("415.555.2671", not "352.34.49.255")."""

    def validate_phone(text: str) -> Optional[str]:
        try:  # parsing is cheap and refuses most candidates; the grouping check reads the valid ones only
            if not phonenumbers.is_valid_number(phonenumbers.parse(text, region)):
                return None
            matches = phonenumbers.PhoneNumberMatcher(text, region, leniency=phonenumbers.Leniency.STRICT_GROUPING)
            whole = next((m for m in matches if m.start == 0 and m.end == len(text)), None)
        except phonenumbers.NumberParseException:
            return None
        return None if whole is None else phonenumbers.format_number(whole.number, phonenumbers.PhoneNumberFormat.E164)

    return validate_phone


# No letter, digit or joining mark right before or after: "v1.2.3.4" and "ID12345678901234" are no candidates.
_BEFORE = r"(?<![\w@.+/-])"
_AFTER = r"(?![\w@/]|[.-]\w)"
# "version 1.2.3.4" is a version number, whatever it looks like
_NOT_A_VERSION = r"(?<![Vv]ersion )(?<![Vv]er\. )(?<![Vv]er )(?<![Rr]elease )(?<![Bb]uild )"


def builtin_kinds(phone_region: Optional[str]) -> dict[str, Identifier]:
    """The shipped kinds, in the order they are tried where candidates overlap."""
    return {
        "url": Identifier(r"(?i:(?:https?|ftp)://|www\.)[^\s<>\"'()\[\]{}]+[^\s<>\"'()\[\]{}.,;:!?]", validate_url),
        # bounded parts (RFC 5321's limits): no scan runs the length of a long run of word characters
        "email": Identifier(r"(?<![\w.%+'-])[\w.%+'-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){1,8}", validate_email_address),
        "iban": Identifier(
            _BEFORE + r"[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?" + _AFTER, validate_iban
        ),
        "datetime": Identifier(
            _BEFORE
            + r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d{1,6})?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?)?"
            + _AFTER,
            validate_iso_datetime,
        ),
        "card": Identifier(_BEFORE + r"\d(?:[ -]?\d){11,18}" + _AFTER, validate_card),
        "ip": Identifier(
            _BEFORE
            + _NOT_A_VERSION
            + r"(?:\d{1,3}(?:\.\d{1,3}){3}|(?=[0-9A-Fa-f:]*:[0-9A-Fa-f]*:)[0-9A-Fa-f:]{2,39})"
            + _AFTER,
            validate_ip,
        ),
        "phone": Identifier(_BEFORE + r"(?:\+|00)?\(?\d[\d ().-]{5,18}\d" + _AFTER, phone_validator(phone_region)),
    }
