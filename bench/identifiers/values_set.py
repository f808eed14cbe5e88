"""The value expressions of values.jsonl, with their gold values computed here by plain arithmetic.

Each generator returns (expression, label, gold value or None); None is an expression with no exact
value ("a few days"), where any value given is wrong.
"""

from datetime import date, timedelta

from dateutil.relativedelta import relativedelta

SENTENCES = {
    "DATE": [
        "The audit is due {}.",
        "We spoke {} about the move.",
        "Sales peaked {}, the report says.",
        "It ended {}.",
    ],
    "TIME": ["The call starts at {} sharp.", "Doors open at {}.", "She left around {}, they think."],
    "MONEY": ["The deal is worth {}.", "They raised {} last round.", "Fees came to {} in total.", "It sold for {}."],
    "PERCENT": ["Turnout rose by {}.", "The fund returned {} this year.", "About {} of users agreed."],
    "QUANTITY": ["The route is {} long.", "Each crate weighs {}.", "The tank holds {}.", "They drove at {}."],
    "CARDINAL": ["The village has {} houses.", "We counted {} birds.", "There were {} complaints."],
    "ORDINAL": ["She finished {} in the race.", "This is the {} time it broke.", "He came {} overall."],
}
ONES = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
ORDINAL_WORDS = [
    "first",
    "second",
    "third",
    "fourth",
    "fifth",
    "sixth",
    "seventh",
    "eighth",
    "ninth",
    "tenth",
    "eleventh",
    "twelfth",
]
MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


def words(n: int) -> str:
    """0 <= n < 100 in words, hyphenated as English writes it."""
    if n < 20:
        return ONES[n]
    return TENS[n // 10] + ("" if n % 10 == 0 else "-" + ONES[n % 10])


def suffix(n: int) -> str:
    return "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


def number_text(rng, value: float) -> str:
    return f"{value:,.2f}".rstrip("0").rstrip(".") if rng.random() < 0.5 else f"{value:g}"


def money(rng, reference):
    amount = rng.choice([rng.randint(1, 999), rng.randint(1000, 99999), round(rng.uniform(1, 99), 2)])
    scale_word, scale = rng.choice(
        [("", 1), ("", 1), (" million", 10**6), (" billion", 10**9), ("bn", 10**9), ("m", 10**6)]
    )
    if scale > 1:
        amount = round(rng.uniform(1, 50), 1)
    written = (
        f"{amount:,}" if isinstance(amount, int) else f"{amount:.2f}" if scale == 1 else f"{amount:g}"
    ) + scale_word
    code = rng.choice(["USD", "EUR", "GBP", "JPY", "CHF"])
    symbol = {"USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥"}.get(code)
    name = {"USD": "dollars", "EUR": "euros", "GBP": "pounds", "JPY": "yen", "CHF": "Swiss francs"}[code]
    style = rng.choice(["symbol", "code", "name"] if symbol else ["code", "name"])
    text = {"symbol": f"{symbol}{written}", "code": f"{code} {written}", "name": f"{written} {name}"}[style]
    total = round(amount * scale, 2)
    return (
        text,
        "MONEY",
        {"type": "money", "amount": int(total) if float(total).is_integer() else total, "currency": code},
    )


def percent(rng, reference):
    if rng.random() < 0.3:
        n = rng.randint(2, 99)
        return f"{words(n)} percent", "PERCENT", {"type": "percent", "percent": n}
    value = rng.choice([rng.randint(1, 100), round(rng.uniform(0.1, 99.9), 1)])
    text = rng.choice([f"{value}%", f"{value} percent", f"{value} per cent"])
    return text, "PERCENT", {"type": "percent", "percent": value}


UNITS = [
    ("km", "kilometer"),
    ("kilometers", "kilometer"),
    ("miles", "mile"),
    ("kg", "kilogram"),
    ("kilograms", "kilogram"),
    ("liters", "liter"),
    ("meters", "meter"),
    ("feet", "foot"),
    ("tons", "ton"),
    ("gallons", "gallon"),
    ("mph", "mile / hour"),
    ("grams", "gram"),
    ("inches", "inch"),
    ("acres", "acre"),
]


def quantity(rng, reference):
    unit, name = rng.choice(UNITS)
    if rng.random() < 0.25:
        n = rng.randint(2, 99)
        return f"{words(n)} {unit}", "QUANTITY", {"type": "quantity", "number": n, "unit": name}
    value = rng.choice([rng.randint(1, 5000), round(rng.uniform(0.5, 500), 1)])
    text = f"{value:,} {unit}" if isinstance(value, int) else f"{value} {unit}"
    return text, "QUANTITY", {"type": "quantity", "number": value, "unit": name}


def cardinal(rng, reference):
    style = rng.choice(["digits", "words", "scaled", "hundreds"])
    if style == "digits":
        n = rng.randint(10, 9_999_999)
        return f"{n:,}", "CARDINAL", {"type": "number", "number": n}
    if style == "words":
        n = rng.randint(2, 99)
        return words(n), "CARDINAL", {"type": "number", "number": n}
    if style == "scaled":
        value = round(rng.uniform(1, 20), 1)
        word, scale = rng.choice([("million", 10**6), ("billion", 10**9), ("thousand", 10**3)])
        total = round(value * scale)
        return f"{value:g} {word}", "CARDINAL", {"type": "number", "number": total}
    n = rng.randint(1, 9)
    return f"{ONES[n]} hundred", "CARDINAL", {"type": "number", "number": n * 100}


def ordinal(rng, reference):
    if rng.random() < 0.5:
        n = rng.randint(1, 12)
        return ORDINAL_WORDS[n - 1], "ORDINAL", {"type": "ordinal", "number": n}
    n = rng.randint(1, 150)
    return f"{n}{suffix(n)}", "ORDINAL", {"type": "ordinal", "number": n}


def a_date(rng, reference: date):
    style = rng.choice(
        ["absolute", "absolute", "month", "year", "relative", "weekday", "interval", "decade", "quarter"]
    )
    if style == "absolute":
        day = date(1995, 1, 1) + timedelta(days=rng.randint(0, 12000))
        text = rng.choice(
            [f"{MONTHS[day.month - 1]} {day.day}, {day.year}", f"{day.day} {MONTHS[day.month - 1]} {day.year}"]
        )
        return f"on |{text}", "DATE", {"type": "date", "iso": day.isoformat()}
    if style == "month":
        year, month = rng.randint(1990, 2030), rng.randint(1, 12)
        return f"in |{MONTHS[month - 1]} {year}", "DATE", {"type": "date", "iso": f"{year}-{month:02d}"}
    if style == "year":
        year = rng.randint(1950, 2035)
        return f"in |{year}", "DATE", {"type": "date", "iso": str(year)}
    if style == "relative":
        text, days = rng.choice(
            [
                ("yesterday", -1),
                ("tomorrow", 1),
                ("today", 0),
                ("two days ago", -2),
                ("three days ago", -3),
                ("in five days", 5),
            ]
        )
        return text, "DATE", {"type": "date", "iso": (reference + timedelta(days=days)).isoformat()}
    if style == "weekday":
        weekday = rng.randrange(7)
        ahead = (weekday - reference.weekday()) % 7 or 7
        behind = (reference.weekday() - weekday) % 7 or 7
        if rng.random() < 0.5:
            return (
                f"next {WEEKDAYS[weekday]}",
                "DATE",
                {"type": "date", "iso": (reference + timedelta(ahead)).isoformat()},
            )
        return f"last {WEEKDAYS[weekday]}", "DATE", {"type": "date", "iso": (reference - timedelta(behind)).isoformat()}
    if style == "interval":
        n, unit = rng.choice([(2, "weeks"), (3, "days"), (10, "days"), (2, "years"), (6, "months")])
        text = f"over |the last {words(n)} {unit}" if rng.random() < 0.5 else f"in |the past {n} {unit}"
        start = reference - relativedelta(**{unit: n})  # calendar steps: six months before May 7 is November 7
        return text, "DATE", {"type": "interval", "start": start.isoformat(), "end": reference.isoformat()}
    if style == "decade":
        decade = rng.choice(range(1920, 2020, 10))
        return (
            f"in |the {decade}s",
            "DATE",
            {"type": "interval", "start": f"{decade}-01-01", "end": f"{decade + 9}-12-31"},
        )
    year, quarter = rng.randint(2000, 2030), rng.randint(1, 4)
    last_day = {3: 31, 6: 30, 9: 30, 12: 31}[3 * quarter]
    start, end = f"{year}-{3 * quarter - 2:02d}-01", f"{year}-{3 * quarter:02d}-{last_day}"
    return f"in |Q{quarter} {year}", "DATE", {"type": "interval", "start": start, "end": end}


def a_time(rng, reference):
    hour, minute = rng.randint(1, 12), rng.choice([0, 15, 30, 45])
    half = rng.choice(["am", "pm", "a.m.", "p.m."])
    hour24 = hour % 12 + (12 if half.startswith("p") else 0)
    text = f"{hour}:{minute:02d} {half}" if minute or rng.random() < 0.5 else f"{hour} {half}"
    return text, "TIME", {"type": "time", "iso": f"{reference.isoformat()}T{hour24:02d}:{minute:02d}"}


VAGUE = [
    ("a few days ago", "DATE"),
    ("several years", "DATE"),
    ("some time soon", "DATE"),
    ("recently", "DATE"),
    ("a few million dollars", "MONEY"),
    ("several hundred", "CARDINAL"),
    ("dozens", "CARDINAL"),
    ("a handful", "CARDINAL"),
    ("many miles", "QUANTITY"),
    ("a small fraction", "PERCENT"),
]
# Forms written by hand, harder than the generated ones: European separators, fractions, spelled scales,
# dates in other orders. Gold None: no exact value.
HANDWRITTEN = [
    ("Jan. 5, 2021", "DATE", {"type": "date", "iso": "2021-01-05"}),
    ("5th of May 2019", "DATE", {"type": "date", "iso": "2019-05-05"}),
    ("the first quarter of 2021", "DATE", {"type": "interval", "start": "2021-01-01", "end": "2021-03-31"}),
    ("this Friday", "DATE", {"type": "date", "iso": "2024-05-10"}),
    ("the day before yesterday", "DATE", {"type": "date", "iso": "2024-05-05"}),
    ("two weeks from now", "DATE", {"type": "date", "iso": "2024-05-21"}),
    ("December 2023", "DATE", {"type": "date", "iso": "2023-12"}),
    ("2021/03/04", "DATE", {"type": "date", "iso": "2021-03-04"}),
    ("03/04/2021", "DATE", {"type": "date", "iso": "2021-03-04"}),
    ("Sept. 30", "DATE", {"type": "date", "iso": "2024-09-30"}),
    ("mid-2019", "DATE", None),
    ("early March", "DATE", None),
    ("the summer of 2018", "DATE", None),
    ("noon", "TIME", {"type": "time", "iso": "2024-05-07T12:00"}),
    ("15:45", "TIME", {"type": "time", "iso": "2024-05-07T15:45"}),
    ("9:30", "TIME", {"type": "time", "iso": "2024-05-07T09:30"}),
    ("half past three", "TIME", None),
    ("$5", "MONEY", {"type": "money", "amount": 5, "currency": "USD"}),
    ("$1.5M", "MONEY", {"type": "money", "amount": 1500000, "currency": "USD"}),
    ("US$20", "MONEY", {"type": "money", "amount": 20, "currency": "USD"}),
    ("€3,50", "MONEY", {"type": "money", "amount": 3.5, "currency": "EUR"}),
    ("1.000.000 EUR", "MONEY", {"type": "money", "amount": 1000000, "currency": "EUR"}),
    ("5 dollars and 50 cents", "MONEY", {"type": "money", "amount": 5.5, "currency": "USD"}),
    ("£2.3bn", "MONEY", {"type": "money", "amount": 2300000000, "currency": "GBP"}),
    ("$0.99", "MONEY", {"type": "money", "amount": 0.99, "currency": "USD"}),
    ("Rs 500", "MONEY", {"type": "money", "amount": 500, "currency": "INR"}),
    ("a million dollars", "MONEY", {"type": "money", "amount": 1000000, "currency": "USD"}),
    ("half a million euros", "MONEY", {"type": "money", "amount": 500000, "currency": "EUR"}),
    ("C$ 75", "MONEY", {"type": "money", "amount": 75, "currency": "CAD"}),
    ("$3-4 million", "MONEY", None),
    ("-5%", "PERCENT", {"type": "percent", "percent": -5}),
    ("50 per cent", "PERCENT", {"type": "percent", "percent": 50}),
    ("0.5%", "PERCENT", {"type": "percent", "percent": 0.5}),
    ("one hundred percent", "PERCENT", {"type": "percent", "percent": 100}),
    ("2 1/2 miles", "QUANTITY", {"type": "quantity", "number": 2.5, "unit": "mile"}),
    ("100 sq ft", "QUANTITY", {"type": "quantity", "number": 100, "unit": "foot ** 2"}),
    ("30°C", "QUANTITY", {"type": "quantity", "number": 30, "unit": "degree_Celsius"}),
    ("1.5 litres", "QUANTITY", {"type": "quantity", "number": 1.5, "unit": "liter"}),
    ("10km", "QUANTITY", {"type": "quantity", "number": 10, "unit": "kilometer"}),
    ("6 ft", "QUANTITY", {"type": "quantity", "number": 6, "unit": "foot"}),
    ("200 lbs", "QUANTITY", {"type": "quantity", "number": 200, "unit": "pound"}),
    ("half a mile", "QUANTITY", {"type": "quantity", "number": 0.5, "unit": "mile"}),
    ("a dozen", "CARDINAL", {"type": "number", "number": 12}),
    ("1 million", "CARDINAL", {"type": "number", "number": 1000000}),
    ("1.5k", "CARDINAL", {"type": "number", "number": 1500}),
    ("10,000,000", "CARDINAL", {"type": "number", "number": 10000000}),
    ("twenty thousand", "CARDINAL", {"type": "number", "number": 20000}),
    ("nine hundred and ninety-nine", "CARDINAL", {"type": "number", "number": 999}),
    ("4", "CARDINAL", {"type": "number", "number": 4}),
    ("zero", "CARDINAL", {"type": "number", "number": 0}),
    ("1st", "ORDINAL", {"type": "ordinal", "number": 1}),
    ("twenty-second", "ORDINAL", {"type": "ordinal", "number": 22}),
    ("hundredth", "ORDINAL", {"type": "ordinal", "number": 100}),
    ("last", "ORDINAL", None),
]
# Written after the normalizers were last changed and never used to change them: the check of how the
# figures above carry over to forms not seen while building.
HELD_OUT = [
    ("March 15th", "DATE", {"type": "date", "iso": "2024-03-15"}),
    ("15 Jan 2020", "DATE", {"type": "date", "iso": "2020-01-15"}),
    ("last Wednesday", "DATE", {"type": "date", "iso": "2024-05-01"}),
    ("next month", "DATE", {"type": "date", "iso": "2024-06"}),
    ("a week ago", "DATE", {"type": "date", "iso": "2024-04-30"}),
    ("2010", "DATE", {"type": "date", "iso": "2010"}),
    ("the 80s", "DATE", {"type": "interval", "start": "1980-01-01", "end": "1989-12-31"}),
    ("Feb 29, 2020", "DATE", {"type": "date", "iso": "2020-02-29"}),
    ("the past three months", "DATE", {"type": "interval", "start": "2024-02-07", "end": "2024-05-07"}),
    ("Christmas Eve", "DATE", None),
    ("11 pm", "TIME", {"type": "time", "iso": "2024-05-07T23:00"}),
    ("7:05 a.m.", "TIME", {"type": "time", "iso": "2024-05-07T07:05"}),
    ("midnight", "TIME", {"type": "time", "iso": "2024-05-07T00:00"}),
    ("€12", "MONEY", {"type": "money", "amount": 12, "currency": "EUR"}),
    ("$2,500", "MONEY", {"type": "money", "amount": 2500, "currency": "USD"}),
    ("GBP 1.25m", "MONEY", {"type": "money", "amount": 1250000, "currency": "GBP"}),
    ("40 bucks", "MONEY", {"type": "money", "amount": 40, "currency": "USD"}),
    ("¥300", "MONEY", {"type": "money", "amount": 300, "currency": "JPY"}),
    ("three million dollars", "MONEY", {"type": "money", "amount": 3000000, "currency": "USD"}),
    ("$7.5 billion", "MONEY", {"type": "money", "amount": 7500000000, "currency": "USD"}),
    ("1,200 euros", "MONEY", {"type": "money", "amount": 1200, "currency": "EUR"}),
    ("between $5 and $10", "MONEY", None),
    ("25 %", "PERCENT", {"type": "percent", "percent": 25}),
    ("ninety percent", "PERCENT", {"type": "percent", "percent": 90}),
    ("3.75 per cent", "PERCENT", {"type": "percent", "percent": 3.75}),
    ("5 kilometres", "QUANTITY", {"type": "quantity", "number": 5, "unit": "kilometer"}),
    ("12 ounces", "QUANTITY", {"type": "quantity", "number": 12, "unit": "ounce"}),
    ("3 hours", "QUANTITY", {"type": "quantity", "number": 3, "unit": "hour"}),
    ("400 metres", "QUANTITY", {"type": "quantity", "number": 400, "unit": "meter"}),
    ("seventy kilograms", "QUANTITY", {"type": "quantity", "number": 70, "unit": "kilogram"}),
    ("2.5 cm", "QUANTITY", {"type": "quantity", "number": 2.5, "unit": "centimeter"}),
    ("thirty-one", "CARDINAL", {"type": "number", "number": 31}),
    ("5,000", "CARDINAL", {"type": "number", "number": 5000}),
    ("two hundred", "CARDINAL", {"type": "number", "number": 200}),
    ("3.2 million", "CARDINAL", {"type": "number", "number": 3200000}),
    ("a hundred", "CARDINAL", {"type": "number", "number": 100}),
    ("one", "CARDINAL", {"type": "number", "number": 1}),
    ("fifth", "ORDINAL", {"type": "ordinal", "number": 5}),
    ("42nd", "ORDINAL", {"type": "ordinal", "number": 42}),
    ("thirtieth", "ORDINAL", {"type": "ordinal", "number": 30}),
]
MAKERS = [(money, 90), (percent, 50), (quantity, 60), (cardinal, 70), (ordinal, 50), (a_date, 150), (a_time, 30)]


def value_lines(rng, reference: date) -> list[dict]:
    expressions = [make(rng, reference) for make, count in MAKERS for _ in range(count)]
    expressions += [(text, label, None) for text, label in VAGUE] + HANDWRITTEN
    return _lines(rng, expressions)


def held_out_lines(rng) -> list[dict]:
    return _lines(rng, HELD_OUT)


def _lines(rng, expressions: list) -> list[dict]:
    lines = []
    for written, label, gold in expressions:
        # "on |March 3, 2021": the sentence has the preposition, the entity starts after the bar
        preposition, _, text = written.rpartition("|")
        sentence = rng.choice(SENTENCES[label]).format(preposition + text)
        start = sentence.index(preposition + text) + len(preposition)
        lines.append({"text": sentence, "spans": [[start, start + len(text), label, gold]]})
    rng.shuffle(lines)
    return lines
