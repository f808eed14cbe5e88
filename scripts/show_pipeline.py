"""Run a text through a pipeline and print its entities with their values (the project's assemble step).

Usage: python scripts/show_pipeline.py PIPELINE_DIR [TEXT]
"""

import sys

import spacy
from wasabi import msg

TEXT = "Anna Adler of Norvex Bank in Oslo wrote to anna.adler@example.com on 2024-05-07 from +47 22 12 34 56 ."


def main() -> None:
    if len(sys.argv) not in (2, 3):
        msg.fail(__doc__.strip(), exits=1)
    nlp = spacy.load(sys.argv[1])
    doc = nlp(sys.argv[2] if len(sys.argv) == 3 else TEXT)
    msg.info(f"{' -> '.join(nlp.pipe_names)}: {doc.text}")
    rows = [(ent.text, ent.label_, ent._.value or ent._.value_reason or "") for ent in doc.ents]
    msg.table(rows, header=("entity", "label", "value"), divider=True)


if __name__ == "__main__":
    main()
