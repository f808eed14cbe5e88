import json

import pytest
import spacy
from conftest import TRAIN_DATA, train_nlp
from spacy.tokens import Doc, DocBin
from typer.testing import CliRunner

from spacy_bioner.cli import app
from spacy_bioner.evaluate import report

# Gold docs the tiny model gets partly wrong: unseen names, a firm it may take for a person, names in lowercase.
GOLD = [
    ("Alice Smith lives in Paris .", [("B-PER", 0), ("I-PER", 1), ("B-LOC", 4)]),
    ("Dora Quinn works at Acme Corp in Berlin", [("B-PER", 0), ("I-PER", 1), ("B-ORG", 4), ("I-ORG", 5), ("B-LOC", 7)]),
    ("Zed Corp hired Carol Jones in Oslo", [("B-ORG", 0), ("I-ORG", 1), ("B-PER", 3), ("I-PER", 4), ("B-LOC", 6)]),
    ("Nothing happened in Lima today .", [("B-LOC", 3)]),
    ("acme corp hired bob in lima", [("B-ORG", 0), ("I-ORG", 1), ("B-PER", 3), ("B-LOC", 5)]),
]


def gold_docs(vocab):
    docs = []
    for text, tags in GOLD:
        words = text.split()
        iob = ["O"] * len(words)
        for tag, i in tags:
            iob[i] = tag
        docs.append(Doc(vocab, words=words, ents=iob))
    return docs


def conlleval_chunks(tags):
    """Chunks of an IOB tag sequence as conlleval reads them (an I after O or another type starts one)."""
    chunks, start, kind = set(), None, None
    for i, tag in enumerate(tags + ["O"]):
        prefix, label = (tag.split("-", 1) + [None])[:2] if tag != "O" else ("O", None)
        if start is not None and (prefix in ("B", "O") or label != kind):
            chunks.add((start, i, kind))
            start = None
        if prefix == "B" or (prefix == "I" and start is None):
            start, kind = i, label
    return chunks


def conlleval_f1(pairs):
    correct = predicted = gold = 0
    for gold_doc, predicted_doc in pairs:
        g = conlleval_chunks([t.ent_iob_ + ("-" + t.ent_type_ if t.ent_type_ else "") for t in gold_doc])
        p = conlleval_chunks([t.ent_iob_ + ("-" + t.ent_type_ if t.ent_type_ else "") for t in predicted_doc])
        correct, predicted, gold = correct + len(g & p), predicted + len(p), gold + len(g)
    precision, recall = correct / predicted, correct / gold
    return 2 * precision * recall / (precision + recall)


@pytest.fixture(scope="module")
def model_and_data(tmp_path_factory):
    path = tmp_path_factory.mktemp("evaluate")
    nlp = train_nlp()
    nlp.to_disk(path / "model")
    DocBin(docs=gold_docs(nlp.vocab)).to_disk(path / "dev.spacy")
    train = [nlp.make_doc(text) for text, _ in TRAIN_DATA]
    for doc, (_, ents) in zip(train, TRAIN_DATA):
        doc.ents = [doc.char_span(start, end, label=label) for start, end, label in ents]
    DocBin(docs=train).to_disk(path / "train.spacy")
    return nlp, path


def test_scores_equal_spacy_evaluate_and_conlleval(model_and_data):
    nlp, path = model_and_data
    out = path / "scores.json"
    result = CliRunner().invoke(
        app,
        [
            "evaluate",
            str(path / "model"),
            str(path / "dev.spacy"),
            "--train",
            str(path / "train.spacy"),
            "--output",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    figures = json.loads(out.read_text())
    assert figures["overall"]["f"] == pytest.approx(figures["spacy"]["ents_f"])
    for label, scores in figures["spacy"]["ents_per_type"].items():
        assert figures["per_type"][label]["f"] == pytest.approx(scores["f"])
    golds = gold_docs(nlp.vocab)
    predicted = [nlp(doc.text) for doc in golds]
    assert figures["overall"]["f"] == pytest.approx(conlleval_f1(zip(golds, predicted)))
    assert 0 < figures["overall"]["f"] < 1  # the data has errors to report
    assert figures["seen"]["gold"] + figures["unseen"]["gold"] == figures["overall"]["gold"]
    assert "Errors:" in result.output
    assert "recall_knob" not in figures and "calibration" not in figures  # neither asked for


def test_recall_knob_curve_spans_nothing_to_everything(model_and_data):
    from spacy_bioner.cli import evaluate

    _, path = model_and_data
    figures = evaluate(str(path / "model"), path / "dev.spacy", biases=[-1000.0, 0.0, 1000.0])
    low, default, high = figures["recall_knob"]
    assert low["r"] == 0 and default["r"] > 0  # a bias far below zero leaves nothing to find
    assert default["f"] == pytest.approx(figures["overall"]["f"])  # bias 0 is the model as it is
    # Far above zero every token is in an entity (merged ones lose recall, so only precision is sure to fall).
    assert 0 < high["p"] < default["p"]


def test_candidate_recall_rises_as_the_threshold_falls(model_and_data):
    from spacy_bioner.cli import evaluate

    _, path = model_and_data
    # The tiny model is uncalibrated and sure of itself: its misses lie far below 0.1.
    figures = evaluate(str(path / "model"), path / "dev.spacy", thresholds=[1.0, 0.1, 1e-30])
    recalls = [point["r"] for point in figures["candidates"]]
    assert recalls[0] == pytest.approx(figures["overall"]["r"])  # nothing else is certain: the entities alone
    assert recalls[0] <= recalls[1] <= recalls[2] and recalls[0] < recalls[2]
    assert figures["candidates"][2]["per_gold"] > figures["candidates"][0]["per_gold"]


def test_error_kinds_and_confusions():
    vocab = spacy.blank("en").vocab
    gold = Doc(
        vocab,
        words="Ann met Bob Lee at Acme in Oslo".split(),
        ents=["B-PER", "O", "B-PER", "I-PER", "O", "B-ORG", "O", "B-LOC"],
    )
    predicted = Doc(
        vocab,
        words="Ann met Bob Lee at Acme in Oslo".split(),
        ents=["B-PER", "B-ORG", "B-PER", "O", "O", "B-LOC", "O", "O"],
    )
    figures = report([(gold, predicted)], seen={"Ann"}).scores()
    # Ann right; "Bob Lee" cut short; Acme typed LOC; Oslo missed; "met" spurious.
    assert figures["errors"] == {"boundary": 1, "type": 1, "missed": 1, "spurious": 1}
    assert (
        ["ORG", "LOC", 1] in figures["confusion"]
        and ["LOC", "O", 1] in figures["confusion"]
        and ["O", "ORG", 1] in figures["confusion"]
    )
    assert figures["seen"]["correct"] == 1 and figures["unseen"]["correct"] == 0
    assert (
        figures["overall"]["correct"] == 1 and figures["overall"]["gold"] == 4 and figures["overall"]["predicted"] == 4
    )


def test_debug_data_counts_labels_lengths_unseen_and_misaligned(tmp_path):
    vocab = spacy.blank("en").vocab
    train = [Doc(vocab, words="Ann met Bob Lee".split(), ents=["B-PER", "O", "B-PER", "I-PER"])]
    # "Parisians": the entity "Paris" is a token of its own here, not after spaCy's tokenizer.
    dev = [
        Doc(
            vocab,
            words=["Ann", "saw", "Cy", "and", "Paris", "ians"],
            spaces=[True, True, True, True, False, False],
            ents=["B-PER", "O", "B-PER", "O", "B-LOC", "O"],
        )
    ]
    DocBin(docs=train).to_disk(tmp_path / "train.spacy")
    DocBin(docs=dev).to_disk(tmp_path / "dev.spacy")
    out = tmp_path / "stats.json"
    result = CliRunner().invoke(
        app, ["debug-data", str(tmp_path / "train.spacy"), str(tmp_path / "dev.spacy"), "--output", str(out)]
    )
    assert result.exit_code == 0, result.output
    stats = json.loads(out.read_text())
    assert stats["train"]["labels"] == {"PER": 2} and stats["train"]["lengths"] == {"1": 1, "2": 1}
    assert stats["dev"]["labels"] == {"LOC": 1, "PER": 2}
    assert stats["dev_unseen_share"] == pytest.approx(2 / 3)  # Cy and Paris
    assert stats["dev"]["misaligned"] == {"LOC": 1} and "do not align" in result.output


def test_report_page_renders_in_a_headless_browser(model_and_data):
    import shutil
    import subprocess

    _, path = model_and_data
    nlp = spacy.load(path / "model")
    nlp.config["components"]["bioner"]["confidence"]["probabilities"] = True
    ner = nlp.get_pipe("bioner")
    ner.settings = ner.settings.replace(confidence={"probabilities": True})
    nlp.to_disk(path / "model_with_confidence")
    result = CliRunner().invoke(
        app,
        [
            "evaluate",
            str(path / "model_with_confidence"),
            str(path / "dev.spacy"),
            "--train",
            str(path / "train.spacy"),
            "--html",
            str(path / "report"),
            "--worst",
            "3",
            "--bias-curve",
            "-20,0,20",
            "--candidate-curve",
            "0.5,0.01",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "ECE" in result.output and "entity_bias" in result.output
    page = path / "report" / "index.html"
    html = page.read_text()
    sections = ("scores", "bars", "errors", "confusion", "knob", "candidates", "reliability", "worst")
    assert all(f"id='{section}'" in html for section in sections)
    n_pairs = html.count("class='pair'")
    assert 1 <= n_pairs <= 3 and "<mark" in html  # the model makes errors on this data, in at most 3 sentences shown
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("no chromium to render the page with")
    dom = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    # The browser parsed the page: every section is in its DOM, the entity marks of both columns too.
    assert all(f'id="{section}"' in dom for section in sections)
    assert dom.count('class="pair"') == n_pairs and "<mark" in dom
