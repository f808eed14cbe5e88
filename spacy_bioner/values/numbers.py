"""Numbers as people write them: "1,234.5", "twenty-five", "1.2 million", "2 1/2", "a dozen", "3rd", "5bn".

Number words are read by text2num; digits, separators, fractions and scale words here, in decimal
arithmetic (4.1 million is 4100000, not 4099999.9999999995). Each reader returns None for what it
cannot read, never a guess.
"""

import re
from decimal import Decimal, InvalidOperation
from typing import Optional, Union

from text_to_num import alpha2digit

SCALES = {
    "hundred": Decimal(10) ** 2,
    "thousand": Decimal(10) ** 3,
    "k": Decimal(10) ** 3,
    "million": Decimal(10) ** 6,
    "mln": Decimal(10) ** 6,
    "m": Decimal(10) ** 6,
    "mn": Decimal(10) ** 6,
    "billion": Decimal(10) ** 9,
    "bn": Decimal(10) ** 9,
    "b": Decimal(10) ** 9,
    "trillion": Decimal(10) ** 12,
    "tn": Decimal(10) ** 12,
}
MAX_DIGITS = 30  # longer runs of digits are no quantity anyone writes as a value
_NUMBER = re.compile(r"[-+−]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?: \d/\d{1,2})?|[-+−]?\.\d+")
_SCALE = re.compile(r"\s*-?\s*(" + "|".join(sorted(SCALES, key=len, reverse=True)) + r")s?\b", re.IGNORECASE)
# what text2num makes of a scale word after digits: "1.2 million" -> "1.2 1000000"
_SCALE_DIGITS = re.compile(r"\s+(1000|1000000|1000000000|1000000000000)\b")
# words that stand for a number before text2num reads the rest: "a dozen", "half a mile", "a million"
_STAND_INS = [
    (re.compile(r"\ban? dozen\b|\bdozen\b"), "12"),
    (re.compile(r"\bhalf an?\b"), "0.5"),
    (re.compile(r"\ban? (?=(?:hundred|thousand|million|billion|trillion)\b)"), "one "),
]


def words_to_digits(text: str) -> str:
    """The text with its number words written as digits ("twenty-five" -> "25", "third" -> "3rd")."""
    spaced = re.sub(r"(?<=[a-z])-(?=[a-z])", " ", text.lower())  # "twenty-five": text2num reads "twenty five"
    for pattern, digits in _STAND_INS:
        spaced = pattern.sub(digits, spaced)
    return alpha2digit(spaced, "en", threshold=0)


def _decimal(written: str) -> Decimal:
    whole, _, fraction = written.replace(",", "").replace("−", "-").partition(" ")
    value = Decimal(whole)
    if fraction:  # "2 1/2"
        numerator, denominator = fraction.split("/")
        value += (-1 if value < 0 else 1) * Decimal(numerator) / Decimal(denominator)
    return value


def leading_number(text: str) -> Optional[tuple[Decimal, int]]:
    """The number at the start of the text (digits or words, times a scale word) and where it ends in the
    digit form of the text; None if the text does not start with a number."""
    digits = words_to_digits(text.strip())
    match = _NUMBER.match(digits)
    if match is None or sum(c.isdigit() for c in match.group(0)) > MAX_DIGITS:
        return None
    try:
        value = _decimal(match.group(0))
    except (InvalidOperation, ZeroDivisionError):
        return None
    end = match.end()
    scale = _SCALE.match(digits, end)
    if scale is not None:
        value *= SCALES[scale.group(1).lower()]
        end = scale.end()
    elif (scale := _SCALE_DIGITS.match(digits, end)) is not None:
        value *= int(scale.group(1))
        end = scale.end()
    return value, end


def count_numbers(text: str) -> int:
    """How many numbers the text holds ("$3-4 million": 2; "1.000.000" and "3,50": 1), scale words not
    counted apart."""
    return len(re.findall(r"\d+(?:[.,]\d+)*", _SCALE_DIGITS.sub("", words_to_digits(text))))


def read_number(text: str) -> Optional[Decimal]:
    """The whole text as one number, or None ("about 25" and "25 or 30" are not one number)."""
    digits = words_to_digits(text.strip())
    found = leading_number(text)
    if found is None or digits[found[1] :].strip():
        return None
    return found[0]


def read_ordinal(text: str) -> Optional[int]:
    """ "3rd", "third", "twenty-first" -> the position; None otherwise."""
    digits = words_to_digits(text.strip())
    match = re.fullmatch(r"(\d{1,9})(?:st|nd|rd|th|ª|º)", digits)
    return int(match.group(1)) if match else None


def as_number(value: Decimal) -> Union[float, int]:
    """A JSON number: whole values as int (25, not 25.0), others as the nearest float."""
    return int(value) if value == value.to_integral_value() and abs(value) < 2**63 else float(value)
