"""The tagger and parser on raw text: sentences, tags, arcs and noun chunks, against gold sentences.

Converts UD English EWT train and dev with `spacy convert -c conllu -n 10` (ten sentences a doc) and
trains, with `spacy train`, configs/parser.cfg (tagger and parser, on gold tokens and sentences) and
configs/senter.cfg (bioner_senter, on whole raw docs), then joins them with `spacy assemble`
(configs/parser_pipeline.cfg): the project's parser workflow. Beside them, in the same run, spaCy's
own tagger + parser (whose parser splits sentences) and senter, trained by `init config -o efficiency`
for --peer-steps steps. Each pipeline is scored on dev two ways:
- gold sentences: gold tokens, one sentence at a time (`Corpus(gold_preproc=True)`);
- raw text: each doc's text through spaCy's tokenizer, no sentences (`Corpus(gold_preproc=False)`);
- raw text with paragraph breaks: the dev treebank's documents with their paragraphs (`# newpar`) kept as
  blank lines, sentences of a paragraph joined by a space, ten paragraphs a doc: sentence P/R/F only.
Scores are spaCy's (LAS and UAS without punctuation, tag and pos accuracy, sentence P/R/F), and
noun chunk P/R/F against the chunks the same iterator reads off the gold trees, matched by
character offsets. Speed: words per second over the raw dev docs, the pipelines taking turns,
medians of --repeats. Figures are printed as JSON too, and written to bench/results/raw_parsing.json.

Usage: python bench/bench_raw_parsing.py [--data ../shared/data] [--repeats 3] [--peer-steps 4000]
"""

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import spacy
import srsly
from bench_casing import prf
from common import ROOT, convert_treebank, paired_rates, train, train_spacy_pipeline, write_results
from spacy.tokens import Doc, DocBin
from spacy.training import Corpus, Example

from spacy_bioner.parser.noun_chunks import ud_noun_chunks

SCORES = ("dep_las", "dep_uas", "tag_acc", "pos_acc", "sents_p", "sents_r", "sents_f")


def spacy_scores(nlp, dev: Path, gold_preproc: bool) -> dict:
    scores = nlp.evaluate(list(Corpus(str(dev), gold_preproc=gold_preproc)(nlp)))
    return {key: round(100 * scores[key], 2) for key in SCORES if scores.get(key) is not None}


def sentence_splitters(nlp) -> list[str]:
    """The pipeline's components that set sentences: left out where the gold sentences are given."""
    return [name for name in nlp.pipe_names if name in ("bioner_senter", "senter", "sentencizer")]


def raw_tokens_gold_sentences(nlp, refs) -> dict:
    """LAS and UAS of the parse of spaCy's tokens of the raw text with the gold sentence starts set (the
    sentence splitters left out): what tokenization alone costs against the gold-sentence scores."""
    examples = []
    for ref in refs:
        doc = nlp.make_doc(ref.text)
        starts = {sent.start_char for sent in ref.sents}
        for token in doc:
            token.is_sent_start = token.i == 0 or token.idx in starts
        examples.append(Example(doc, ref))
    with nlp.select_pipes(disable=sentence_splitters(nlp)):
        scores = nlp.evaluate(examples)
    return {key: round(100 * scores[key], 2) for key in ("dep_las", "dep_uas")}


def paragraph_docs(conllu: Path, out: Path, paragraphs_per_doc: int = 10) -> Path:
    """The treebank's text as it was written: a blank line between paragraphs, a space between the
    sentences of one; the docs carry the gold sentence starts only."""
    nlp = spacy.blank("en")
    docs = []
    for document in _documents(conllu):
        for first in range(0, len(document), paragraphs_per_doc):
            words: list = []
            spaces: list = []
            starts: list = []
            for paragraph in document[first : first + paragraphs_per_doc]:
                if words:
                    spaces[-1] = False
                    words.append("\n\n")
                    spaces.append(False)
                    starts.append(False)
                for sentence in paragraph:
                    for i, (word, space_after) in enumerate(sentence):
                        words.append(word)
                        spaces.append(space_after)
                        starts.append(i == 0)
                    spaces[-1] = True
            spaces[-1] = False
            docs.append(Doc(nlp.vocab, words=words, spaces=spaces, sent_starts=starts))
    DocBin(docs=docs).to_disk(out)
    return out


def _documents(conllu: Path) -> list:
    """Documents as lists of paragraphs, of sentences, of (word, space after) pairs."""
    documents: list = []
    for line in conllu.read_text(encoding="utf8").splitlines():
        if line.startswith("# newdoc") or not documents:
            documents.append([[]])
        if line.startswith("# newpar") and documents[-1][-1]:
            documents[-1].append([])
        if not line.startswith("#") and line.strip():
            columns = line.split("\t")
            if columns[0].isdigit():  # words, not multiword ranges or empty nodes
                if columns[0] == "1":
                    documents[-1][-1].append([])
                documents[-1][-1][-1].append((columns[1], "SpaceAfter=No" not in columns[9]))
    return [[paragraph for paragraph in document if paragraph] for document in documents if any(document)]


def noun_chunks(nlp, refs, gold_sentences: bool = False) -> dict:
    """Chunks of the parse of raw text (or of the gold words and sentences, the sentence splitters left
    out) against the chunks of the gold trees, by character offsets."""
    if gold_sentences:
        docs = nlp.pipe(
            (Doc(nlp.vocab, words=[t.text for t in ref], spaces=[bool(t.whitespace_) for t in ref],
                 sent_starts=[t.is_sent_start for t in ref]) for ref in refs),
            disable=sentence_splitters(nlp),
        )  # fmt: skip
    else:
        docs = nlp.pipe(ref.text for ref in refs)
    gold, found = set(), set()
    for i, (ref, doc) in enumerate(zip(refs, docs)):
        gold |= {(i, ref[start].idx, ref[end - 1].idx + len(ref[end - 1])) for start, end, _ in ud_noun_chunks(ref)}
        found |= {(i, chunk.start_char, chunk.end_char) for chunk in doc.noun_chunks}
    return prf(gold, found)


def words_per_second(models: dict, refs, repeats: int) -> dict:
    """Each pipeline over the dev docs' raw text (docs made off the clock)."""

    def system(nlp):
        return (
            lambda texts: [nlp.make_doc(text) for text in texts],
            lambda docs: list(nlp.pipe(docs, batch_size=1000)),
        )

    texts = [ref.text for ref in refs]
    return paired_rates({name: system(nlp) for name, nlp in models.items()}, texts, repeats, sum(map(len, refs)))


def assemble(parser: Path, senter: Path, out: Path) -> Path:
    """The project's assemble-parser step: the tagger and parser with the senter, one pipeline."""
    config = ROOT / "configs" / "parser_pipeline.cfg"
    overrides = ["--paths.parser", str(parser), "--paths.senter", str(senter)]
    subprocess.run([sys.executable, "-m", "spacy", "assemble", str(config), str(out), *overrides], check=True)
    return out


def scores(nlp, dev_path: Path, paragraphs_path: Path) -> dict:
    refs = list(DocBin().from_disk(dev_path).get_docs(nlp.vocab))
    parses = nlp.has_pipe("parser") or nlp.has_pipe("bioner_parser")
    return {
        "gold_sentences": spacy_scores(nlp, dev_path, gold_preproc=True),
        "raw_text": spacy_scores(nlp, dev_path, gold_preproc=False),
        "raw_text_paragraphs": spacy_scores(nlp, paragraphs_path, gold_preproc=False),
        "raw_tokens_gold_sentences": raw_tokens_gold_sentences(nlp, refs) if parses else {},
        "noun_chunks": noun_chunks(nlp, refs) if parses else {},
        "noun_chunks_gold_sentences": noun_chunks(nlp, refs, gold_sentences=True) if parses else {},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--peer-steps", type=int, default=4000, help="training steps of spaCy's pipelines")
    parser.add_argument("--work", type=Path, help="an earlier run's directory: its trained pipelines are scored again")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="bench_raw_parsing_"))
    treebank = args.data / "ud_english_ewt"
    train_path = convert_treebank(treebank / "en_ewt-ud-train.conllu", work)
    dev_path = convert_treebank(treebank / "en_ewt-ud-dev.conllu", work)
    paragraphs_path = paragraph_docs(treebank / "en_ewt-ud-dev.conllu", work / "dev_paragraphs.spacy")
    figures: dict = {"dev": "en_ewt-ud-dev, spacy convert -n 10", "models": {}}
    earlier = work / "train_seconds.json"
    seconds = srsly.read_json(earlier) if earlier.exists() else {}
    for name in ("parser", "senter"):
        if name not in seconds:
            seconds[name] = train(
                train_path, dev_path, work / name, ["--training.eval_frequency", "500"], f"{name}.cfg"
            )
    srsly.write_json(work / "train_seconds.json", seconds)
    pipelines = {
        "tagger_parser": work / "parser" / "model-best",
        "tagger_senter_parser": assemble(
            work / "parser" / "model-best", work / "senter" / "model-best", work / "joined"
        ),
        **{
            f"spacy_{components.replace(',', '_')}": work / f"spacy_{components.replace(',', '_')}" / "model-last"
            if args.work
            else train_spacy_pipeline(train_path, dev_path, work, args.peer_steps, components)
            for components in ("tagger,parser", "senter")
        },
    }
    figures["train_seconds"] = {name: round(value) for name, value in seconds.items()}
    models = {name: spacy.load(path) for name, path in pipelines.items()}
    for name, nlp in models.items():
        figures["models"][name] = {"pipeline": nlp.pipe_names, **scores(nlp, dev_path, paragraphs_path)}
        print(name, json.dumps(figures["models"][name]), flush=True)
    refs = list(DocBin().from_disk(dev_path).get_docs(models["tagger_parser"].vocab))
    speed_peers = ("tagger_parser", "tagger_senter_parser", "spacy_tagger_parser")
    figures["words_per_s"] = words_per_second({name: models[name] for name in speed_peers}, refs, args.repeats)
    print(json.dumps(figures, indent=1))
    write_results("raw_parsing", figures)


if __name__ == "__main__":
    main()
