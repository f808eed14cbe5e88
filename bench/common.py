"""What the benchmarks share: corpora and their conversion, training with `spacy train`,
examples three ways, throughput, and writing figures to bench/results/<name>.json.

The figures in docs/benchmarks.md are rendered from those files (scripts/render_docs.py).
"""

import datetime
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import spacy
from spacy.tokens import Doc, DocBin
from spacy.training import Corpus, Example

from spacy_bioner.evaluate import report
from spacy_bioner.parser.scoring import score_parse

ROOT = Path(__file__).resolve().parent.parent


def settled(inputs):
    """The inputs, with the garbage of making them collected off the clock, as timeit keeps the
    collector out of its timings: a full collection that making thousands of docs leaves pending
    would otherwise fall into whichever system's run comes next (a tenth of a bioner run)."""
    gc.collect()
    return inputs


def convert(source: Path, out_dir: Path, sentences_per_doc="1") -> Path:
    """The project's conversion (scripts/convert_corpus.py): documents kept whole
    where the file marks them (-DOCSTART-), else sentences_per_doc sentences a
    doc, or "abstracts" (see project.yml)."""
    target = out_dir / (source.name + ".spacy")
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "convert_corpus.py"), str(source), str(target), str(sentences_per_doc)],
        check=True,
        capture_output=True,
    )
    return target


def train(train_path: Path, dev_path: Path, out_dir: Path, extra=(), config: str = "bioner.cfg") -> float:
    start = time.perf_counter()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "spacy",
            "train",
            str(ROOT / "configs" / config),
            "--paths.train",
            str(train_path),
            "--paths.dev",
            str(dev_path),
            "--output",
            str(out_dir),
            *extra,
        ],
        check=True,
        capture_output=True,
    )
    return time.perf_counter() - start


def conll_model(data: Path, work: Path) -> tuple[Path, Path]:
    """configs/bioner.cfg trained on CoNLL-2003 train under work: (model-best, the converted dev set)."""
    dev_path = convert(data / "conll2003" / "eng.testa", work)
    train_path = convert(data / "conll2003" / "eng.train", work)
    train(train_path, dev_path, work / "model", ["--training.eval_frequency", "204"])
    return work / "model" / "model-best", dev_path


def spacy_evaluate_examples(nlp, path: Path):
    return list(Corpus(str(path))(nlp))


def gold_token_examples(nlp, path: Path):
    """Examples whose predicted docs carry the reference tokens and sentence starts."""
    examples = []
    for ref in DocBin().from_disk(path).get_docs(nlp.vocab):
        words = [t.text for t in ref]
        spaces = [bool(t.whitespace_) for t in ref]
        predicted = Doc(nlp.vocab, words=words, spaces=spaces, sent_starts=[t.is_sent_start for t in ref])
        examples.append(Example(predicted, ref))
    return examples


def raw_text_examples(nlp, path: Path):
    return [Example(nlp.make_doc(ref.text), ref) for ref in DocBin().from_disk(path).get_docs(nlp.vocab)]


def throughput(nlp, examples, repeats: int):
    ner = nlp.get_pipe("bioner")
    n_tokens = sum(len(eg.reference) for eg in examples)
    texts = [eg.reference.text for eg in examples]
    component, end_to_end = [], []
    for _ in range(repeats):
        docs = [eg.predicted.copy() for eg in examples]
        start = time.perf_counter()
        for _ in ner.pipe(docs, batch_size=1000):
            pass
        component.append(n_tokens / (time.perf_counter() - start))
        start = time.perf_counter()
        for _ in nlp.pipe(texts, batch_size=1000):
            pass
        end_to_end.append(n_tokens / (time.perf_counter() - start))
    return {
        "tokens": n_tokens,
        "component_tokens_per_s": statistics.median(component),
        "component_spread": [min(component), max(component)],
        "raw_text_tokens_per_s": statistics.median(end_to_end),
        "raw_text_spread": [min(end_to_end), max(end_to_end)],
    }


def f1(nlp, examples) -> float:
    return round(100 * nlp.evaluate(examples)["ents_f"], 2)


CORPORA = {
    "conll2003": ("conll2003/eng.train", "conll2003/eng.testa"),
    "bc5cdr": ("bc5cdr/train.tsv", "bc5cdr/devel.tsv"),
    "ncbi_disease": ("ncbi_disease/train.tsv", "ncbi_disease/devel.tsv"),
    "wnut17": ("wnut17/wnut17train.conll", "wnut17/emerging.dev.conll"),
}


LISTS = {
    "conll2003": [
        "geonames/cities15000_latin.tsv",
        "geonames/countries.tsv",
        "geonames/continents.tsv",
        "geonames/us_states.tsv",
        "countries_mledoze/countries.tsv",
        "countries_mledoze/demonyms_en.tsv",
        "countries_mledoze/capitals.tsv",
        "us_census_1990_names/first_names_female.tsv",
        "us_census_1990_names/first_names_male.tsv",
        "companies_us/sec_company_tickers.tsv",
        "companies_us/sp500_constituents.tsv",
        "openfootball_clubs/football_clubs.tsv",
        "world_universities/universities.tsv",
    ],
    "bc5cdr": [
        "drugbank_open_vocabulary/drugbank_vocabulary.tsv",
        "mesh_diseases/mesh_diseases.tsv",
        "disease_ontology/doid_current.tsv",
    ],
    "ncbi_disease": ["mesh_diseases/mesh_diseases.tsv", "disease_ontology/doid_current.tsv"],
    "wnut17": [
        "geonames/cities15000_latin.tsv",
        "geonames/countries.tsv",
        "countries_mledoze/countries.tsv",
        "us_census_1990_names/first_names_female.tsv",
        "us_census_1990_names/first_names_male.tsv",
        "companies_us/sec_company_tickers.tsv",
    ],
}


# How files without document marks are grouped into docs (scripts/convert_corpus.py):
# the biomedical TSVs into the abstracts they lost, tweets one a doc.
SENTENCES_PER_DOC = {"bc5cdr": "abstracts", "ncbi_disease": "abstracts", "wnut17": "1"}


def converted(data: Path, corpus: str, work: Path, sentences_per_doc=None):
    """The corpus's train and dev files converted to .spacy under work (exits if the data is missing)."""
    train_file, dev_file = (data / name for name in CORPORA[corpus])
    if not train_file.exists():
        sys.exit(f"No {corpus} data under {data}: pass --data.")
    grouping = sentences_per_doc or SENTENCES_PER_DOC.get(corpus, "1")
    return convert(train_file, work, grouping), convert(dev_file, work, grouping)


def entity_texts(nlp, path: Path) -> set:
    return {ent.text for doc in DocBin().from_disk(path).get_docs(nlp.vocab) for ent in doc.ents}


def rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def train_spacy_pipeline(train_path: Path, dev_path: Path, work: Path, steps: int, components: str = "ner") -> Path:
    """spaCy's own pipeline of these components (efficiency config: tok2vec first), trained for `steps` steps."""
    name = "spacy_" + components.replace(",", "_")
    config = work / f"{name}.cfg"
    subprocess.run(
        [sys.executable, "-m", "spacy", "init", "config", str(config), "-p", components, "-o", "efficiency", "-F"],
        check=True,
        capture_output=True,
    )
    subprocess.run(
        [
            sys.executable,
            "-m",
            "spacy",
            "train",
            str(config),
            "--paths.train",
            str(train_path),
            "--paths.dev",
            str(dev_path),
            "--output",
            str(work / name),
            "--training.max_steps",
            str(steps),
            "--training.eval_frequency",
            str(steps),
        ],
        check=True,
        capture_output=True,
    )
    return work / name / "model-last"


def stream(nlp, texts, n_docs: int) -> dict:
    """RSS before, midway and after tagging n_docs short docs from raw text."""

    def docs():
        for i in range(n_docs):
            yield texts[i % len(texts)]

    marks, start = {}, time.perf_counter()
    for i, _ in enumerate(nlp.pipe(docs(), batch_size=1000)):
        if i in (n_docs // 10, n_docs // 2, n_docs - 1):
            marks[f"rss_mb_after_{i + 1}_docs"] = rss_mb()
    return {"docs": n_docs, "seconds": time.perf_counter() - start, **marks}


def convert_treebank(conllu: Path, out_dir: Path) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [sys.executable, "-m", "spacy", "convert", str(conllu), str(out_dir), "-c", "conllu", "-n", "10"],
        check=True,
        capture_output=True,
    )
    return out_dir / (conllu.stem + ".spacy")


def dev_scores(parser, dev, tags) -> dict:
    docs = []
    for eg, doc_tags in zip(dev, tags):
        doc = eg.predicted.copy()
        for token, tag in zip(doc, doc_tags):
            token.tag_ = tag
        docs.append(doc)
    parsed = list(parser.pipe(docs, batch_size=1000))
    scores = score_parse([Example(doc, eg.reference) for doc, eg in zip(parsed, dev)])
    return {"uas": scores["dep_uas_all"], "las": scores["dep_las_all"], "label_acc": scores["dep_label_acc"]}


def score(nlp, dev_path: Path, seen: set) -> dict:
    """Exact-match P/R/F1 (percent) overall, per type and on entities unseen in training, by spacy_bioner.evaluate."""
    examples = spacy_evaluate_examples(nlp, dev_path)
    pairs = [(eg.reference, doc) for eg, doc in zip(examples, nlp.pipe(eg.predicted for eg in examples))]
    figures = report(pairs, seen).scores()
    percent = lambda s: {key: round(100 * s[key], 2) for key in "prf"}  # noqa: E731
    return {
        "overall": percent(figures["overall"]),
        "per_type": {label: percent(s) for label, s in figures["per_type"].items()},
        "unseen": {**percent(figures["unseen"]), "gold_entities": figures["unseen"]["gold"]},
    }


def machine() -> dict:
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor(),
    )
    return {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(), "spacy": spacy.__version__}


def _source_state() -> str:
    """The commit the benchmark runs, and whether the package or configs differ from it."""
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--", "spacy_bioner", "configs"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    return commit + ("+changes" if dirty else "")


SOURCE_STATE = _source_state()  # taken when the benchmark starts, not when it ends


def _from_root(script: str) -> str:
    """The script's path from the repository root, however it was started."""
    path = Path(script).resolve()
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else script


def paired_rates(systems: dict, inputs, repeats: int, units: int) -> dict:
    """Units per second of each system, medians of the repeats, the systems taking turns in each repeat.

    systems: name -> (prepare, run): prepare(inputs) makes what run takes, off the clock (fresh docs, say).
    """
    rates: dict = {name: [] for name in systems}
    for _ in range(repeats):
        for name, (prepare, run) in systems.items():
            prepared = prepare(inputs)
            start = time.perf_counter()
            run(prepared)
            rates[name].append(units / (time.perf_counter() - start))
    return {name: round(statistics.median(values)) for name, values in rates.items()}


def write_results(name: str, figures: dict) -> Path:
    """bench/results/<name>.json: the figures with the commit, date, machine and command that produced them."""
    record = {
        "commit": SOURCE_STATE,
        "date": datetime.date.today().isoformat(),
        "machine": machine(),
        "command": " ".join(["python", _from_root(sys.argv[0]), *sys.argv[1:]]),
        "figures": figures,
    }
    path = ROOT / "bench" / "results" / f"{name}.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(record, indent=1) + "\n", encoding="utf8")
    return path
