"""Units of measure by pint's names: "km" and "kilometres" -> "kilometer", "sq ft" -> "foot ** 2"."""

import re
from functools import lru_cache
from typing import Any, Optional

# Written forms pint does not parse, as pint writes them.
_SPELLED = {
    "°c": "degC", "degrees celsius": "degC", "degrees c": "degC", "celsius": "degC",
    "°f": "degF", "degrees fahrenheit": "degF", "degrees f": "degF", "fahrenheit": "degF",
    "sq ft": "foot ** 2", "square feet": "foot ** 2", "square foot": "foot ** 2", "sq m": "meter ** 2",
    "square meters": "meter ** 2", "square metres": "meter ** 2", "square miles": "mile ** 2",
    "square kilometers": "kilometer ** 2", "square kilometres": "kilometer ** 2", "sq km": "kilometer ** 2",
    "cubic meters": "meter ** 3", "cubic metres": "meter ** 3", "cc": "centimeter ** 3",
    "kph": "kilometer / hour", "km/h": "kilometer / hour", "mph": "mile / hour", "lbs": "pound", "lb": "pound",
    "metres": "meter", "metre": "meter", "kilometres": "kilometer", "kilometre": "kilometer",
    "centimetres": "centimeter", "millimetres": "millimeter", "litres": "liter", "litre": "liter",
    "tonnes": "metric_ton", "tonne": "metric_ton",
}  # fmt: skip


@lru_cache(maxsize=1)
def _registry() -> Any:
    # imported on first use: pint takes a third of a second to import, and imports dask where it is installed
    import pint

    return pint.UnitRegistry()


def read_unit(text: str) -> Optional[str]:
    """The unit named by the text (what follows the number), or None if pint knows no such unit."""
    phrase = re.sub(r"\s+", " ", text.strip(" .,").lower())
    if not phrase or len(phrase) > 40:
        return None
    phrase = _SPELLED.get(phrase, phrase)
    from pint.errors import DefinitionSyntaxError, UndefinedUnitError

    try:
        unit = _registry().parse_units(phrase.replace(" ", "_") if "**" not in phrase and "/" not in phrase else phrase)
    except (UndefinedUnitError, DefinitionSyntaxError, ValueError, AttributeError, TypeError):
        return None
    return None if unit.dimensionless else str(unit)
