"""Write the identifier and value evaluation sets (identifiers.jsonl, values.jsonl) beside this script.

Every string comes from the templates and generators below, seeded, so the sets are the same on every run.
Gold is computed here, independently of spacy_bioner: check digits by ISO 7064 and Luhn as written below,
dates and values by plain arithmetic on the reference date. Each line: {"text", "spans": [[start, end,
kind, gold value or null]]}; a near miss is a line whose identifier-like string has no span.

Usage: python bench/identifiers/make_sets.py
"""

import json
import random
import string
from datetime import date, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
REFERENCE = date(2024, 5, 7)  # a Tuesday; relative dates in values.jsonl are read against it
rng = random.Random(20261204)

IDENTIFIER_SENTENCES = [
    "Please contact {} about the renewal.",
    "The ticket lists {} as the only reference.",
    "Our records show {}, which was updated last week.",
    "{} was flagged by the fraud team.",
    "Send the confirmation to {} before Friday.",
    "Copy the value {} into the form.",
    "The log line ended with {} and nothing else.",
    "Can you double-check {} for me?",
]
FIRST = ["anna", "ben", "chloe", "dmitri", "esra", "farid", "grace", "hiro", "ines", "jonas", "kofi", "lena"]
LAST = ["smith", "okafor", "novak", "tanaka", "garcia", "muller", "rossi", "khan", "berg", "dubois"]
DOMAINS = ["example.com", "mail.example.org", "corp.example.co.uk", "uni-example.edu", "example.io", "shop.example.de"]


def luhn_digit(digits: str) -> str:
    total = 0
    for i, char in enumerate(reversed(digits)):
        value = int(char) * (2 if i % 2 == 0 else 1)
        total += value - 9 if value > 9 else value
    return str((10 - total % 10) % 10)


def luhn_ok(digits: str) -> bool:
    return luhn_digit(digits[:-1]) == digits[-1]


def iban_check(country: str, bban: str) -> str:
    moved = bban + country + "00"
    number = int("".join(str(int(c, 36)) for c in moved))
    return f"{98 - number % 97:02d}"


def grouped(text: str, size: int = 4, sep: str = " ") -> str:
    return sep.join(text[i : i + size] for i in range(0, len(text), size))


def email() -> str:
    first, last = rng.choice(FIRST), rng.choice(LAST)
    local = rng.choice([f"{first}.{last}", f"{first[0]}{last}{rng.randint(1, 99)}", f"{first}+news", f"{first}_{last}"])
    address = f"{local}@{rng.choice(DOMAINS)}"
    return address.title() if rng.random() < 0.1 else address


def url() -> str:
    host = rng.choice(["www.example.com", "docs.example.org", "example.net", "api.example.io", "www.example.co.uk"])
    path = rng.choice(["", "/", "/about", "/a/b/c.html", "/search?q=spacy&page=2", "/items/123#reviews"])
    scheme = rng.choice(["https://", "http://", "" if host.startswith("www.") else "https://"])
    return scheme + host + path


def ipv4() -> str:
    return ".".join(str(rng.randint(1 if i == 0 else 0, 255)) for i in range(4))


def ipv6() -> str:
    groups = [f"{rng.randint(0, 65535):x}" for _ in range(8)]
    if rng.random() < 0.5:
        return ":".join(groups)
    cut = rng.randint(1, 5)
    return ":".join(groups[:cut]) + "::" + ":".join(groups[cut + 2 :])


US_AREAS = ["212", "415", "617", "312", "206", "303", "512", "702", "305", "404", "213", "718"]


def phone() -> str:
    kind = rng.choice(["us", "us", "us", "uk", "de", "fr"])
    if kind == "us":
        area, exchange, line = (
            rng.choice(US_AREAS),
            f"{rng.randint(2, 9)}{rng.randint(0, 9)}{rng.randint(1, 9)}",
            f"{rng.randint(0, 9999):04d}",
        )
        return rng.choice(
            [
                f"({area}) {exchange}-{line}",
                f"{area}-{exchange}-{line}",
                f"{area}.{exchange}.{line}",
                f"+1 {area} {exchange} {line}",
            ]
        )
    if kind == "uk":
        return f"+44 20 7946 0{rng.randint(0, 999):03d}"
    if kind == "de":
        return f"+49 30 {rng.randint(2000000, 9999999)}"
    return f"+33 1 {rng.randint(10, 99)} {rng.randint(10, 99)} {rng.randint(10, 99)} {rng.randint(10, 99)}"


# countries whose account numbers carry no national check digit of their own (Spain's, Belgium's do)
IBAN_FORMATS = {"GB": "AAAA" + "9" * 14, "DE": "9" * 18, "NL": "AAAA" + "9" * 10, "AT": "9" * 16, "FR": "9" * 23}


def bban(country: str) -> str:
    return "".join(
        rng.choice(string.ascii_uppercase) if c == "A" else str(rng.randint(0, 9)) for c in IBAN_FORMATS[country]
    )


def iban(valid: bool = True) -> str:
    country = rng.choice(sorted(IBAN_FORMATS))
    body = bban(country)
    check = iban_check(country, body)
    if not valid:
        check = f"{(int(check) + rng.randint(1, 90)) % 97 + 2:02d}"
        if check == iban_check(country, body):
            check = f"{(int(check) + 1) % 97 + 2:02d}"
    compact = country + check + body
    return grouped(compact) if rng.random() < 0.5 else compact


CARD_PREFIXES = [
    ("4", 16),
    ("4", 13),
    ("51", 16),
    ("55", 16),
    ("2221", 16),
    ("34", 15),
    ("37", 15),
    ("6011", 16),
    ("3530", 16),
]


def card(valid: bool = True) -> str:
    prefix, length = rng.choice(CARD_PREFIXES)
    body = prefix + "".join(str(rng.randint(0, 9)) for _ in range(length - len(prefix) - 1))
    check = luhn_digit(body)
    if not valid:
        check = str((int(check) + rng.randint(1, 9)) % 10)
    digits = body + check
    if length == 16:
        return rng.choice([digits, grouped(digits), grouped(digits, sep="-")])
    return digits


def iso_datetime() -> str:
    day = date(1990, 1, 1) + timedelta(days=rng.randint(0, 16000))
    if rng.random() < 0.5:
        return day.isoformat()
    time = f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}"
    if rng.random() < 0.6:
        time += f":{rng.randint(0, 59):02d}"
    zone = rng.choice(["", "Z", "+02:00", "-05:00"])
    return f"{day.isoformat()}T{time}{zone}"


GENERATORS = {"email": email, "url": url, "ip": lambda: ipv4() if rng.random() < 0.6 else ipv6(), "phone": phone}
GENERATORS.update({"iban": iban, "card": card, "datetime": iso_datetime})


def near_misses() -> list[str]:
    """Strings that look like identifiers and are none."""
    misses = []
    for _ in range(30):
        misses.append(f"{rng.choice(FIRST)}@")  # no domain
        misses.append(f"{rng.choice(FIRST)}@{rng.choice(['example', 'localhost', 'mail'])}")  # no top-level domain
        misses.append(card(valid=False))  # a wrong Luhn digit
        misses.append("4" + "".join(str(rng.randint(0, 9)) for _ in range(14)))  # 15 digits: no Visa length
        order = "9" + "".join(str(rng.randint(0, 9)) for _ in range(15))  # 16 digits, no issuer starts with 9
        misses.append(order)
        misses.append(iban(valid=False))  # wrong check digits
        misses.append(f"version {rng.randint(1, 12)}.{rng.randint(0, 20)}.{rng.randint(0, 99)}.{rng.randint(0, 9)}")
        misses.append(f"{rng.randint(256, 999)}.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(0, 255)}")
        misses.append(f"{rng.randint(1, 9)}.{rng.randint(0, 9)}.{rng.randint(0, 99)}")  # three parts
        misses.append(f"20{rng.randint(10, 30)}-02-{rng.randint(30, 31)}")  # no such day
        misses.append(f"20{rng.randint(10, 30)}-{rng.randint(13, 19)}-{rng.randint(1, 28):02d}")  # no such month
        misses.append(f"{rng.randint(200, 999)}-{rng.randint(1000, 9999)}")  # seven digits, no area code
        misses.append(f"{rng.randint(10, 59)}:{rng.randint(10, 59)}:{rng.randint(10, 59)}")  # a time, not an IPv6
    return misses


def identifier_lines() -> list[dict]:
    lines = []
    for kind, make in GENERATORS.items():
        for _ in range(100):
            value = make()
            template = rng.choice(IDENTIFIER_SENTENCES)
            text = template.format(value)
            start = text.index(value)
            lines.append({"text": text, "spans": [[start, start + len(value), kind, None]]})
    for value in near_misses():
        lines.append({"text": rng.choice(IDENTIFIER_SENTENCES).format(value), "spans": []})
    rng.shuffle(lines)
    return lines


def main() -> None:
    from values_set import held_out_lines, value_lines  # the value expressions, written in values_set.py

    sets = {"identifiers": identifier_lines(), "values": value_lines(rng, REFERENCE), "values_held_out": None}
    sets["values_held_out"] = held_out_lines(rng)
    for name, lines in sets.items():
        with (HERE / f"{name}.jsonl").open("w", encoding="utf8") as file:
            for line in lines:
                file.write(json.dumps(line, ensure_ascii=False) + "\n")
        print(name, len(lines), "lines")


if __name__ == "__main__":
    main()
