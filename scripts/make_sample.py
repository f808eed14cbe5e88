"""Write the small synthetic corpus the project runs on by default.

Sentences are drawn from templates over invented names, firms and places, in
the original CoNLL-2003 layout (`-DOCSTART- -X- -X- O` document lines, IOB1
tags), so the default workflow exercises the same conversion as the real data.
Dev uses first names, surnames and firms that train never shows.

Also writes a term list (sample_terms.tsv: term, label, id) of the firms and
places of both splits, for the gazetteer step.

Usage: python scripts/make_sample.py OUTPUT_DIR
"""

import random
import sys
from pathlib import Path

FIRST = [
    "Anna",
    "Boris",
    "Chloe",
    "Dmitri",
    "Elena",
    "Farid",
    "Greta",
    "Hiro",
    "Ines",
    "Jonas",
    "Kira",
    "Liam",
    "Mara",
    "Nils",
    "Olga",
    "Pavel",
    "Rosa",
    "Sven",
    "Tara",
    "Umar",
]
LAST = [
    "Adler",
    "Brandt",
    "Costa",
    "Dahl",
    "Eriksen",
    "Fischer",
    "Gomez",
    "Hansen",
    "Ivanova",
    "Jansen",
    "Kowalski",
    "Lindqvist",
    "Moreau",
    "Novak",
    "Okafor",
    "Petrov",
    "Quinn",
    "Rossi",
]
FIRM = [
    "Norvex",
    "Altaris",
    "Quantel",
    "Brightwave",
    "Corvana",
    "Deltron",
    "Everline",
    "Fyra",
    "Helix",
    "Lumora",
    "Meridian",
    "Orbita",
]
FIRM_SUFFIX = ["Corp", "Group", "Bank", "Holdings", "Airlines", "Motors"]
PLACE = [
    "Oslo",
    "Lima",
    "Porto",
    "Dakar",
    "Hanoi",
    "Quito",
    "Tbilisi",
    "Riga",
    "Accra",
    "Lyon",
    "Bergen",
    "Cusco",
    "Kazan",
    "Malmo",
]
EVENT = ["Olympics", "World Cup", "Expo", "Biennale"]
ADJ = ["Norwegian", "Peruvian", "Portuguese", "Senegalese", "Latvian", "Georgian"]

TEMPLATES = [
    "{PER} , chief executive of {ORG} , said on {DAY} that profits rose .",
    "{ORG} shares fell 3.5 percent in {LOC} after {PER} resigned .",
    "{PER} met {PER} in {LOC} to discuss the {MISC} .",
    "The {MISC} delegation arrived in {LOC} on {DAY} .",
    "{LOC} police arrested two men , a spokesman for {ORG} said .",
    "{PER} scored twice as {ORG} beat {ORG} 2-1 in {LOC} .",
    "Analysts at {ORG} expect {LOC} to cut rates by 25 basis points .",
    "{PER} will fly from {LOC} to {LOC} for the {MISC} talks .",
    "Results of the {MISC} : 1. {PER} 2. {PER} 3. {PER}",
    "{LOC} 1996-08-{NUM}",
]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]


def entity(kind, rng, names):
    if kind == "PER":
        tokens = [rng.choice(names["first"]), rng.choice(names["last"])]
        return tokens[rng.random() < 0.2 :]
    if kind == "ORG":
        return [rng.choice(names["firm"])] + ([rng.choice(FIRM_SUFFIX)] if rng.random() < 0.6 else [])
    if kind == "LOC":
        return [rng.choice(PLACE)]
    return rng.choice([[rng.choice(ADJ)], rng.choice(EVENT).split()])


def sentence(rng, names):
    rows = []
    for word in rng.choice(TEMPLATES).split():
        if word in ("{PER}", "{ORG}", "{LOC}", "{MISC}"):
            kind = word[1:-1]
            # IOB1: B- only where an entity directly follows one of the same type.
            follows_same = bool(rows) and rows[-1][1] != "O" and rows[-1][1][2:] == kind
            for i, token in enumerate(entity(kind, rng, names)):
                rows.append((token, f"{'B' if i == 0 and follows_same else 'I'}-{kind}"))
        elif word == "{DAY}":
            rows.append((rng.choice(DAYS), "O"))
        elif word == "{NUM}":
            rows.append((str(rng.randint(10, 28)), "O"))
        else:
            rows.append((word, "O"))
    return rows


def write(path, rng, names, n_docs, sentences_per_doc):
    with open(path, "w", encoding="utf8") as out:
        for _ in range(n_docs):
            out.write("-DOCSTART- -X- -X- O\n\n")
            for _ in range(sentences_per_doc):
                out.writelines(f"{token} {tag}\n" for token, tag in sentence(rng, names))
                out.write("\n")


def main(output_dir: str) -> None:
    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(13)
    train = {"first": FIRST[:14], "last": LAST[:12], "firm": FIRM[:8]}
    dev = {"first": FIRST[14:], "last": LAST[12:], "firm": FIRM[8:]}
    write(out / "sample_train.iob", rng, train, n_docs=40, sentences_per_doc=12)
    write(out / "sample_dev.iob", rng, dev, n_docs=10, sentences_per_doc=12)
    with open(out / "sample_terms.tsv", "w", encoding="utf8") as terms:
        terms.writelines(f"{firm} {suffix}\tORG\tfirm:{firm.lower()}\n" for firm in FIRM for suffix in FIRM_SUFFIX)
        terms.writelines(f"{place}\tLOC\tplace:{place.lower()}\n" for place in PLACE)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
