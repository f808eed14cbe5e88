"""Normalizers: an entity's text -> its value, a dict of strings and numbers (msgpack-safe, so it survives
DocBin and Doc.to_bytes), or the reason it has none.

Each normalizer is a function (text, reference date) -> Value. It gives no value rather than a guess:
an expression it cannot read whole gets `Value(None, reason)`.
"""

import calendar
import re
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any, Callable, NamedTuple, Optional

from dateparser.date import DateDataParser
from dateutil.relativedelta import relativedelta
from price_parser import Price

from ..identifiers.kinds import (
    phone_validator,
    validate_card,
    validate_email_address,
    validate_iban,
    validate_ip,
    validate_iso_datetime,
    validate_url,
)
from .numbers import as_number, count_numbers, leading_number, read_number, read_ordinal, words_to_digits
from .units import read_unit


class Value(NamedTuple):
    value: Optional[dict[str, Any]]
    reason: Optional[str] = None


Normalizer = Callable[[str, date], Value]

_STEPS = {"day": "days", "week": "weeks", "month": "months", "year": "years"}  # calendar steps (relativedelta)
_INTERVAL = re.compile(r"(?:the )?(?:last|past|previous|next|coming) (\d+) (day|week|month|year)s?")
# "the 1980s", "the late 90s", "the '60s": a decade without its century is the latest one begun by the reference
_DECADE = re.compile(r"(?:the )?(?:(early|mid|late)[- ])?(\d{3}|'?\d)0'?s")
_YEAR = re.compile(r"(?:in )?(\d{4})")
# "this weekend": the Saturday and Sunday of the reference date's week (Monday to Sunday); "last weekend": the
# one before. "next weekend" is left unread: said on a Tuesday, people mean either of two.
_WEEKEND = re.compile(r"(?i)(?:over )?(this|last) weekend")
# "about $40", "over 5 km": a bound or an estimate, not a value
_HEDGE = re.compile(
    r"(?i)\b(?:about|around|approximately|roughly|nearly|almost|over|under|more than|less than|up to|"
    r"at least|at most|some|circa|ca\.|several|few)\b"
)
_CENTS = re.compile(r"\s+and\s+(\d{1,2})\s+cents?\b", re.IGNORECASE)
_SCALE_WORD = re.compile(r"(?i)\d\s*-?\s*(?:hundred|thousand|k|million|mln|m|mn|billion|bn|b|trillion|tn)s?\b")
_OFFSET = re.compile(r"\b(?:ago|from now|later|hence)\b|^in \d")  # "two weeks from now": a day, not a week
_QUARTER = re.compile(r"(?:the )?(?:q([1-4])|(1st|2nd|3rd|4th|first|second|third|fourth) quarter)(?: of)? (\d{4})")
_QUARTERS = {"1st": 1, "2nd": 2, "3rd": 3, "4th": 4, "first": 1, "second": 2, "third": 3, "fourth": 4}
_TIME_OF_DAY = re.compile(r"(?i)[ap]\.?m\.?")
_HAS_TIME = re.compile(r"\d:\d|\b(?:a\.?m\.?|p\.?m\.?|noon|midnight|o'clock|morning|evening|afternoon|night)\b")
_PARSERS: dict[str, DateDataParser] = {}


def _date_parser(reference: date) -> DateDataParser:
    key = reference.isoformat()
    if key not in _PARSERS:
        if len(_PARSERS) > 64:
            _PARSERS.clear()
        base = datetime(reference.year, reference.month, reference.day)
        settings = {"RELATIVE_BASE": base, "RETURN_TIME_AS_PERIOD": True, "PREFER_DAY_OF_MONTH": "first"}
        _PARSERS[key] = DateDataParser(languages=["en"], settings=settings)
    return _PARSERS[key]


def normalize_date(text: str, reference: date) -> Value:
    """ISO 8601: a day "2024-05-14", a month "2020-05", a year "2019", a time "2024-05-07T15:30", or an
    interval {"start", "end"} ("the last two weeks", "the 1990s", "Q3 2021", "this weekend")."""
    phrase = words_to_digits(text.strip()).strip(" .,")
    if read_ordinal(phrase) is not None:
        return Value(None, "an ordinal alone names no date")  # "the 12th": of which month?
    iso = validate_iso_datetime(phrase)
    if iso is not None:
        return Value({"type": "date", "iso": iso})
    interval = _INTERVAL.fullmatch(phrase)
    if interval is not None:
        step = relativedelta(**{_STEPS[interval.group(2)]: int(interval.group(1))})
        if re.search(r"\b(?:next|coming)\b", phrase):
            return _interval(reference + timedelta(days=1), reference + step)
        return _interval(reference - step, reference)
    decade = _DECADE.fullmatch(phrase)
    if decade is not None:
        start = int(decade.group(2).lstrip("'")) * 10
        if len(decade.group(2).lstrip("'")) == 1:
            start += reference.year // 100 * 100 - (100 if start > reference.year % 100 else 0)
        part = {"early": (0, 3), "mid": (3, 6), "late": (6, 9), None: (0, 9)}[decade.group(1)]
        return _interval(date(start + part[0], 1, 1), date(start + part[1], 12, 31))
    quarter = _QUARTER.fullmatch(phrase)
    if quarter is not None:
        number = int(quarter.group(1)) if quarter.group(1) else _QUARTERS[quarter.group(2)]
        return _quarter(int(quarter.group(3)), number)
    weekend = _WEEKEND.fullmatch(phrase)
    if weekend is not None:
        weeks_back = 1 if weekend.group(1).lower() == "last" else 0
        saturday = reference + timedelta(days=5 - reference.weekday() - 7 * weeks_back)
        return _interval(saturday, saturday + timedelta(days=1))
    year = _YEAR.fullmatch(phrase)
    if year is not None:
        return Value({"type": "date", "iso": year.group(1)})
    try:
        found = _date_parser(reference).get_date_data(phrase)
    except (ValueError, OverflowError, OSError) as error:
        return Value(None, f"unreadable date ({error})")
    moment, period = found.date_obj, found.period
    if moment is None:
        return Value(None, "unreadable date")
    if period in ("time", "part_of_day") and not _HAS_TIME.search(phrase):
        return Value(None, "read as a time of day without one in the text")
    if _OFFSET.search(phrase) and period in ("day", "week", "month", "year"):
        return Value({"type": "date", "iso": moment.date().isoformat()})
    if period == "year":
        return Value({"type": "date", "iso": f"{moment.year:04d}"})
    if period == "month":
        return Value({"type": "date", "iso": f"{moment.year:04d}-{moment.month:02d}"})
    if period == "quarter":
        return _quarter(moment.year, (moment.month - 1) // 3 + 1)
    if period == "week":
        start = moment.date() - timedelta(days=moment.weekday())
        return _interval(start, start + timedelta(days=6))
    if period in ("time", "part_of_day"):
        return Value({"type": "time", "iso": moment.strftime("%Y-%m-%dT%H:%M")})
    return Value({"type": "date", "iso": moment.date().isoformat()})


def _quarter(year: int, number: int) -> Value:
    """Quarter 1-4 of a year as an interval."""
    last = 3 * number
    return _interval(date(year, last - 2, 1), date(year, last, calendar.monthrange(year, last)[1]))


def _interval(start: date, end: date) -> Value:
    return Value({"type": "interval", "start": start.isoformat(), "end": end.isoformat()})


# Symbols and names that price-parser leaves as written -> ISO 4217. "$" is the US dollar unless the text
# names another ("A$", "C$", "HK$").
CURRENCIES = {
    "$": "USD", "us$": "USD", "usd": "USD", "dollar": "USD", "dollars": "USD", "buck": "USD", "bucks": "USD",
    "a$": "AUD", "au$": "AUD", "aud": "AUD", "c$": "CAD", "ca$": "CAD", "cad": "CAD",
    "hk$": "HKD", "hkd": "HKD", "nz$": "NZD", "nzd": "NZD", "s$": "SGD", "sgd": "SGD",
    "€": "EUR", "eur": "EUR", "euro": "EUR", "euros": "EUR",
    "£": "GBP", "gbp": "GBP", "pound": "GBP", "pounds": "GBP", "sterling": "GBP", "quid": "GBP",
    "¥": "JPY", "jpy": "JPY", "yen": "JPY", "yuan": "CNY", "cny": "CNY", "rmb": "CNY", "renminbi": "CNY",
    "₹": "INR", "inr": "INR", "rupee": "INR", "rupees": "INR", "rs": "INR", "rs.": "INR",
    "chf": "CHF", "franc": "CHF", "francs": "CHF", "sek": "SEK", "nok": "NOK", "dkk": "DKK",
    "krona": "SEK", "kronor": "SEK", "krone": "NOK", "kroner": "NOK",
    "₩": "KRW", "krw": "KRW", "won": "KRW", "₽": "RUB", "rub": "RUB", "ruble": "RUB", "rubles": "RUB",
    "r$": "BRL", "brl": "BRL", "real": "BRL", "reais": "BRL", "mxn": "MXN", "peso": "MXN", "pesos": "MXN",
    "zar": "ZAR", "rand": "ZAR", "₺": "TRY", "try": "TRY", "lira": "TRY", "pln": "PLN", "zloty": "PLN",
}  # fmt: skip


def normalize_money(text: str, reference: date) -> Value:
    """{"amount", "currency"}: "$1.2 million" -> 1200000 USD, "EUR 300", "300 euros", "¥5bn", "€3,50"."""
    price = Price.fromstring(text)
    currency = CURRENCIES.get((price.currency or "").strip().lower())
    if currency is None:
        words = re.findall(r"[a-z]+\$|[a-z]+\.?|[$€£¥₹₩₽₺]", text.lower())
        currency = next((CURRENCIES[w] for w in words if w in CURRENCIES), None)
    if currency is None:
        return Value(None, "no currency")
    if _HEDGE.search(text):
        return Value(None, "approximate or bounded amount")
    cents = _CENTS.search(text)
    main = text[: cents.start()] if cents else text
    if count_numbers(main) > 1:
        return Value(None, "more than one number (a range?)")
    number_text = re.sub(r"(?i)[a-z]*\$|[€£¥₹₩₽₺]|\b(?:us|usd|eur|gbp|jpy|chf|cad|aud|inr|rs)\b\.?", " ", main).strip()
    found = leading_number(number_text)
    # price-parser reads separators by locale ("€3,50", "1.000.000"); scale and number words are read here
    if found is not None and (price.amount is None or _SCALE_WORD.search(number_text)):
        amount = found[0]
    elif price.amount is not None:
        amount = price.amount
    else:
        return Value(None, "no amount")
    if cents:
        amount += Decimal(cents.group(1)) / 100
    return Value({"type": "money", "amount": as_number(amount), "currency": currency})


def normalize_percent(text: str, reference: date) -> Value:
    """{"percent"}: "12.5%", "twelve percent", "12.5 per cent"."""
    phrase = re.sub(r"(?i)\s*(?:%|per ?cent|pct\.?|percentage points?)\s*$", "", text.strip())
    if phrase == text.strip():
        return Value(None, "no percent sign or word")
    number = read_number(phrase)
    if number is None:
        return Value(None, "unreadable number")
    return Value({"type": "percent", "percent": as_number(number)})


def normalize_quantity(text: str, reference: date) -> Value:
    """{"number", "unit"}: "5 km" -> 5 kilometer; the unit as pint names it."""
    if _HEDGE.search(text):
        return Value(None, "approximate or bounded quantity")
    found = leading_number(text.strip())
    if found is None:
        return Value(None, "no number")
    unit_text = words_to_digits(text.strip())[found[1] :]
    if _TIME_OF_DAY.fullmatch(unit_text.strip()):
        return Value(None, "a time of day, not a quantity")  # pint reads "5 am" as attometers
    unit = read_unit(unit_text)
    if unit is None:
        return Value(None, "unknown unit")
    return Value({"type": "quantity", "number": as_number(found[0]), "unit": unit})


def normalize_cardinal(text: str, reference: date) -> Value:
    number = read_number(text)
    return (
        Value(None, "unreadable number") if number is None else Value({"type": "number", "number": as_number(number)})
    )


def normalize_ordinal(text: str, reference: date) -> Value:
    position = read_ordinal(text)
    return Value(None, "unreadable ordinal") if position is None else Value({"type": "ordinal", "number": position})


def _canonical(kind: str, read: Callable[[str], Optional[str]]) -> Normalizer:
    def normalize(text: str, reference: date) -> Value:
        canonical = read(text.strip())
        return (
            Value(None, f"not a valid {kind}") if canonical is None else Value({"type": kind, "canonical": canonical})
        )

    return normalize


def normalizers(phone_region: Optional[str]) -> dict[str, Normalizer]:
    """Every normalizer by name; phone_region: the region of phone numbers without a country code."""
    return {
        "date": normalize_date,
        "money": normalize_money,
        "percent": normalize_percent,
        "quantity": normalize_quantity,
        "cardinal": normalize_cardinal,
        "ordinal": normalize_ordinal,
        "phone": _canonical("phone", phone_validator(phone_region)),
        "iban": _canonical("iban", validate_iban),
        "email": _canonical("email", validate_email_address),
        "url": _canonical("url", validate_url),
        "ip": _canonical("ip", validate_ip),
        "card": _canonical("card", validate_card),
    }
