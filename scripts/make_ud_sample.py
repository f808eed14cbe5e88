"""Write the small synthetic treebank the project's parser workflow runs on by default.

Sentences are drawn from templates whose trees are fixed, over invented
words, in CoNLL-U (ten columns: id, form, lemma, UPOS, XPOS, feats, head,
deprel, deps, misc), so the default workflow exercises the same conversion as
UD English EWT. One template is non-projective ("A hearing is scheduled on
the issue today": "on the issue" hangs from "hearing" across the verb), so
pseudo-projective parsing has something to lift.

Usage: python scripts/make_ud_sample.py OUTPUT_DIR
"""

import random
import sys
from pathlib import Path

WORDS = {
    "DET": ["the", "a", "this", "every"],
    "ADJ": ["green", "quiet", "rapid", "ancient", "bright", "small"],
    "NOUN": ["hearing", "river", "council", "report", "garden", "engine", "letter", "meeting"],
    "NOUNS": ["rivers", "councils", "reports", "gardens", "engines", "letters"],
    "PROPN": ["Norvex", "Lumora", "Kazan", "Oslo", "Tara", "Jonas"],
    "VERBD": ["approved", "visited", "repaired", "described", "closed"],
    "VERBN": ["scheduled", "delayed", "planned", "cancelled"],
    "ADV": ["today", "tomorrow", "soon", "again"],
    "ADP": ["on", "near", "about", "under"],
    "PRON": ["she", "they", "we"],
}
# Each token: (slot or literal, UPOS, XPOS, head (1-based, 0 for the root), deprel).
TEMPLATES = [
    [
        ("DET", "DET", "DT", 3, "det"),
        ("ADJ", "ADJ", "JJ", 3, "amod"),
        ("NOUN", "NOUN", "NN", 4, "nsubj"),
        ("VERBD", "VERB", "VBD", 0, "root"),
        ("DET", "DET", "DT", 6, "det"),
        ("NOUN", "NOUN", "NN", 4, "obj"),
        (".", "PUNCT", ".", 4, "punct"),
    ],
    [
        ("PRON", "PRON", "PRP", 2, "nsubj"),
        ("VERBD", "VERB", "VBD", 0, "root"),
        ("ADP", "ADP", "IN", 5, "case"),
        ("DET", "DET", "DT", 5, "det"),
        ("NOUNS", "NOUN", "NNS", 2, "obl"),
        ("ADV", "ADV", "RB", 2, "advmod"),
        (".", "PUNCT", ".", 2, "punct"),
    ],
    [
        ("PROPN", "PROPN", "NNP", 2, "nsubj"),
        ("VERBD", "VERB", "VBD", 0, "root"),
        ("DET", "DET", "DT", 4, "det"),
        ("NOUN", "NOUN", "NN", 2, "obj"),
        ("ADP", "ADP", "IN", 7, "case"),
        ("DET", "DET", "DT", 7, "det"),
        ("NOUN", "NOUN", "NN", 4, "nmod"),
        (".", "PUNCT", ".", 2, "punct"),
    ],
    [
        ("DET", "DET", "DT", 2, "det"),
        ("NOUN", "NOUN", "NN", 4, "nsubj:pass"),
        ("is", "AUX", "VBZ", 4, "aux:pass"),
        ("VERBN", "VERB", "VBN", 0, "root"),
        ("ADP", "ADP", "IN", 7, "case"),
        ("DET", "DET", "DT", 7, "det"),
        ("NOUN", "NOUN", "NN", 2, "nmod"),
        ("ADV", "ADV", "RB", 4, "advmod"),
        (".", "PUNCT", ".", 4, "punct"),
    ],
]


def sentence(rng: random.Random, number: int) -> str:
    template = rng.choice(TEMPLATES)
    forms = [rng.choice(WORDS[slot]) if slot in WORDS else slot for slot, *_ in template]
    forms[0] = forms[0][0].upper() + forms[0][1:]
    lines = [f"# sent_id = sample-{number}", f"# text = {' '.join(forms[:-1])}{forms[-1]}"]
    for i, (form, (_, upos, xpos, head, deprel)) in enumerate(zip(forms, template), 1):
        space = "SpaceAfter=No" if i == len(forms) - 1 else "_"
        lines.append(f"{i}\t{form}\t{form.lower()}\t{upos}\t{xpos}\t_\t{head}\t{deprel}\t{head}:{deprel}\t{space}")
    return "\n".join(lines) + "\n"


def main(out_dir: Path) -> None:
    rng = random.Random(0)
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, size in (("sample_ud_train.conllu", 240), ("sample_ud_dev.conllu", 60)):
        (out_dir / name).write_text("\n".join(sentence(rng, k) for k in range(size)) + "\n", encoding="utf8")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(Path(sys.argv[1]))
