"""Rewrite every -DOCSTART- line as the exact delimiter `spacy convert -c ner` groups on.

The original CoNLL-2003 files say `-DOCSTART- -X- -X- O`; spaCy only recognises
`-DOCSTART- -X- O O`, and otherwise makes each sentence its own doc with
`-DOCSTART-` as a token. Lines holding only whitespace (WNUT-17 has TAB-only
lines) become empty sentence breaks.

Usage: python scripts/normalize_conll.py INPUT OUTPUT
"""

import sys
from pathlib import Path

DELIMITER = "-DOCSTART- -X- O O"


def normalize(lines):
    for line in lines:
        if line.startswith("-DOCSTART-"):
            yield DELIMITER + "\n"
        elif not line.strip():
            yield "\n"
        else:
            yield line


def main(source: str, target: str) -> None:
    Path(target).parent.mkdir(parents=True, exist_ok=True)
    with open(source, encoding="utf8") as lines, open(target, "w", encoding="utf8") as out:
        out.writelines(normalize(lines))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
