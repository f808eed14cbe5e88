"""The evaluation report as one self-contained HTML page.

Sections: the scores (overall, per type, seen and unseen), per-type F1 as
bars, the kinds of errors, the confusion matrix between types, where
measured the recall knob's P/R curve and the confidences' reliability
diagram, and the sentences with the most errors rendered with displaCy, gold
next to predicted.
Plain HTML and CSS: it opens from disk, offline, in any browser.
"""

from html import escape
from pathlib import Path
from typing import Any

from spacy import displacy
from spacy.tokens import Doc

from .evaluate import OUTSIDE

STYLE = """
body { font-family: sans-serif; margin: 2em; max-width: 80em; }
table { border-collapse: collapse; margin: 1em 0; }
td, th { border: 1px solid #ccc; padding: 0.3em 0.6em; text-align: right; }
th:first-child, td:first-child { text-align: left; }
.bar { background: #7aa6e0; height: 1em; display: inline-block; }
.pair { display: grid; grid-template-columns: 1fr 1fr; gap: 1em; border-top: 1px solid #ddd; padding: 0.5em 0; }
.diagonal { background: #e6f2e6; }
"""


def _scores_table(figures: dict[str, Any]) -> str:
    rows = [("all", figures["overall"])] + list(figures["per_type"].items())
    rows += [(group, figures[group]) for group in ("seen", "unseen") if group in figures]
    body = "".join(
        f"<tr><td>{escape(name)}</td>"
        + "".join(f"<td>{100 * s[k]:.2f}</td>" for k in "prf")
        + f"<td>{s['gold']}</td></tr>"
        for name, s in rows
    )
    return f"<table id='scores'><tr><th></th><th>P</th><th>R</th><th>F1</th><th>gold</th></tr>{body}</table>"


def _bars(figures: dict[str, Any]) -> str:
    rows = "".join(
        f"<tr><td>{escape(label)}</td><td><span class='bar' style='width:{300 * s['f']:.0f}px'></span> "
        f"{100 * s['f']:.1f}</td></tr>"
        for label, s in figures["per_type"].items()
    )
    return f"<table id='bars'>{rows}</table>"


def _confusion(figures: dict[str, Any]) -> str:
    labels = sorted(
        {gold for gold, _, _ in figures["confusion"]} | {pred for _, pred, _ in figures["confusion"]} - {OUTSIDE}
    )
    labels = [label for label in labels if label != OUTSIDE] + [OUTSIDE]
    counts = {(gold, pred): n for gold, pred, n in figures["confusion"]}
    head = "".join(f"<th>{escape(label)}</th>" for label in labels)
    body = "".join(
        f"<tr><th>{escape(gold)}</th>"
        + "".join(
            f"<td class='{'diagonal' if gold == pred else ''}'>{counts.get((gold, pred), '')}</td>" for pred in labels
        )
        + "</tr>"
        for gold in labels
    )
    return f"<table id='confusion'><tr><th>gold \\ predicted</th>{head}</tr>{body}</table>"


def _recall_table(table_id: str, header: list[str], rows: list[list[str]], recalls: list[float]) -> str:
    """A curve as a table: its columns, then each point's recall as a bar."""
    head = "".join(f"<th>{name}</th>" for name in header + ["recall"])
    body = "".join(
        "<tr>"
        + "".join(f"<td>{cell}</td>" for cell in row)
        + f"<td><span class='bar' style='width:{300 * recall:.0f}px'></span></td></tr>"
        for row, recall in zip(rows, recalls)
    )
    return f"<table id='{table_id}'><tr>{head}</tr>{body}</table>"


def _knob(figures: dict[str, Any]) -> str:
    if "recall_knob" not in figures:
        return ""
    curve = figures["recall_knob"]
    rows = [
        [f"{k['entity_bias']:g}", f"{100 * k['p']:.2f}", f"{100 * k['r']:.2f}", f"{100 * k['f']:.2f}"] for k in curve
    ]
    return "<h2>Recall knob</h2>" + _recall_table(
        "knob", ["entity_bias", "P", "R", "F1"], rows, [k["r"] for k in curve]
    )


def _candidates(figures: dict[str, Any]) -> str:
    if "candidates" not in figures:
        return ""
    curve = figures["candidates"]
    rows = [
        [f"{k['threshold']:g}", f"{100 * k['p']:.2f}", f"{100 * k['r']:.2f}", f"{k['per_gold']:.2f}"] for k in curve
    ]
    return (
        "<h2>Candidates for review</h2><p>The entities plus every other span at least this probable.</p>"
        + _recall_table("candidates", ["threshold", "P", "R", "per gold entity"], rows, [k["r"] for k in curve])
    )


def _reliability(figures: dict[str, Any]) -> str:
    if "calibration" not in figures:
        return ""
    c = figures["calibration"]
    rows = "".join(
        f"<tr><td>{confidence:.2f}</td><td>{accuracy:.2f}</td><td>{n}</td>"
        f"<td><span class='bar' style='width:{300 * accuracy:.0f}px'></span> accuracy<br>"
        f"<span class='bar' style='width:{300 * confidence:.0f}px; background:#e0a67a'></span> confidence</td></tr>"
        for confidence, accuracy, n in c["reliability"]
    )
    return (
        f"<h2>Reliability (ECE {c['ece']:.3f}, temperature {c['temperature']:.3g})</h2><table id='reliability'>"
        f"<tr><th>mean confidence</th><th>accuracy</th><th>entities</th><th></th></tr>{rows}</table>"
    )


def _sentence(doc: Doc, start: int, end: int) -> str:
    span = doc.char_span(start, end, alignment_mode="expand")
    return displacy.render(span.as_doc() if span is not None else doc, style="ent", page=False, jupyter=False)


def write_report(
    path: Path,
    figures: dict[str, Any],
    pairs: list[tuple[Doc, Doc]],
    worst: list[tuple[int, int, int, int]],
    title: str,
) -> Path:
    """Write the page to `path` (a directory: index.html inside). RETURNS (Path): The page."""
    errors = ", ".join(f"{kind} {n:,}" for kind, n in sorted(figures["errors"].items())) or "none"
    sentences = "".join(
        f"<div class='pair'><div><b>gold</b> ({n} errors){_sentence(pairs[i][0], start, end)}</div>"
        f"<div><b>predicted</b>{_sentence(pairs[i][1], start, end)}</div></div>"
        for n, i, start, end in worst
    )
    page = (
        "<!DOCTYPE html><html><head><meta "
        f"charset='utf-8'><title>{escape(title)}</title><style>{STYLE}</style></head><body>"
        f"<h1>{escape(title)}</h1>"
        f"<h2>Scores</h2>{_scores_table(figures)}"
        f"<h2>F1 per type</h2>{_bars(figures)}"
        f"<h2>Errors</h2><p id='errors'>{escape(errors)}</p>"
        f"<h2>Confusions</h2>{_confusion(figures)}{_knob(figures)}{_candidates(figures)}{_reliability(figures)}"
        f"<h2>Sentences with the most errors</h2><div id='worst'>{sentences or '<p>none</p>'}</div>"
        "</body></html>"
    )
    path.mkdir(parents=True, exist_ok=True)
    page_path = path / "index.html"
    page_path.write_text(page, encoding="utf8")
    return page_path
