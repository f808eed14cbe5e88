"""Numbers as people write them: "1,234.5", "twenty-five", "1.2 million", "3rd", "third", "5bn".

Number words are read by text2num; digits, separators and scale words here. Each reader returns
None for what it cannot read, never a guess.
"""

import math
import re
from typing import Optional, Union

from text_to_num import alpha2digit

SCALES = {
    "hundred": 1e2,
    "thousand": 1e3,
    "k": 1e3,
    "million": 1e6,
    "mln": 1e6,
    "m": 1e6,
    "mn": 1e6,
    "billion": 1e9,
    "bn": 1e9,
    "b": 1e9,
    "trillion": 1e12,
    "tn": 1e12,
}
ORDINAL_SUFFIXES = ("st", "nd", "rd", "th")
MAX_DIGITS = 30  # longer runs of digits are no quantity anyone writes as a value
_NUMBER = re.compile(r"[-+−]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|[-+−]?\.\d+")
_SCALE = re.compile(r"\s*-?\s*(" + "|".join(sorted(SCALES, key=len, reverse=True)) + r")s?\b", re.IGNORECASE)
# what text2num makes of a scale word after digits: "1.2 million" -> "1.2 1000000"
_SCALE_DIGITS = re.compile(r"\s+(1000|1000000|1000000000|1000000000000)\b")


def words_to_digits(text: str) -> str:
    """The text with its number words written as digits ("twenty-five" -> "25", "third" -> "3rd")."""
    spaced = re.sub(r"(?<=[a-z])-(?=[a-z])", " ", text.lower())  # "twenty-five": text2num reads "twenty five"
    return alpha2digit(spaced, "en", threshold=0)


def leading_number(text: str) -> Optional[tuple[float, int]]:
    """The number at the start of the text (digits or words, times a scale word) and where it ends in the
    digit form of the text; None if the text does not start with a number."""
    digits = words_to_digits(text.strip())
    match = _NUMBER.match(digits)
    if match is None or sum(c.isdigit() for c in match.group(0)) > MAX_DIGITS:
        return None
    value = float(match.group(0).replace(",", "").replace("−", "-"))
    end = match.end()
    scale = _SCALE.match(digits, end)
    if scale is not None:
        value *= SCALES[scale.group(1).lower()]
        end = scale.end()
    elif (scale := _SCALE_DIGITS.match(digits, end)) is not None:
        value *= int(scale.group(1))
        end = scale.end()
    return (value, end) if math.isfinite(value) else None


def read_number(text: str) -> Optional[float]:
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


def as_number(value: float) -> Union[float, int]:
    """Whole values as int, so that 25 reads 25, not 25.0."""
    return int(value) if value.is_integer() and abs(value) < 2**63 else value
