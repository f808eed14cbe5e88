"""Bad input and faults: random text, damaged model files, threads, determinism across processes."""

import pickle
import subprocess
import sys
import threading

import numpy
import pytest
import spacy
from conftest import reseal, train_nlp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from spacy.tokens import Doc
from test_parser_component import _trained as train_parser

from spacy_bioner.core.serialize import ModelFileError
from spacy_bioner.gazetteer.token_codes import TokenEncoder
from spacy_bioner.ner.component import BioNER
from spacy_bioner.ner.decoder import plain_decode
from spacy_bioner.parser.component import BioParser
from spacy_bioner.tagger.component import BioTagger

CASES = {"ner": 0, "parser": 0}


@pytest.fixture(scope="module")
def ner_nlp():
    nlp = train_nlp()
    nlp.get_pipe("bioner").add_patterns(
        [{"label": "ORG", "pattern": "Acme Corp", "id": "acme"}, {"label": "LOC", "pattern": "Paris"}]
    )
    return nlp


@pytest.fixture(scope="module")
def parser_nlp():
    return train_parser()


# Words from every Unicode category, control characters and whitespace runs included.
WORD = st.text(st.characters(blacklist_categories=("Cs",)), min_size=0, max_size=12)
TEXT = st.lists(
    st.one_of(WORD, st.sampled_from(["Acme Corp", "Paris", "  ", "\n\n", "\t", "\x00", "\u200b", "Bob", "."])),
    max_size=40,
).map(" ".join)


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXT)
def test_ner_and_gazetteer_never_crash_on_random_text(ner_nlp, text):
    CASES["ner"] += 1
    doc = ner_nlp(text)
    labels = set(ner_nlp.get_pipe("bioner").labels)
    previous_end = 0
    for ent in doc.ents:
        assert previous_end <= ent.start < ent.end <= len(doc) and ent.label_ in labels
        assert not ent[0].is_space and not ent[-1].is_space
        previous_end = ent.end
    for span in doc.spans["bioner_gazetteer"]:
        assert 0 <= span.start < span.end <= len(doc)
    iob = [token.ent_iob_ for token in doc]
    assert all(tag != "I" or (i > 0 and iob[i - 1] in "BI") for i, tag in enumerate(iob))


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXT)
def test_tagger_and_parser_never_crash_on_random_text(parser_nlp, text):
    CASES["parser"] += 1
    doc = parser_nlp(text)
    tags = set(parser_nlp.get_pipe("bioner_tagger").labels)
    assert all(token.tag_ == "_SP" if token.is_space else token.tag_ in tags for token in doc)
    for token in doc:  # a tree: every token reaches a root
        seen = set()
        while token.head.i != token.i:
            assert token.i not in seen
            seen.add(token.i)
            token = token.head
    assert sum(len(sent) for sent in doc.sents) == len(doc)


def test_random_text_cases_ran():
    # Run after the two property tests (pytest keeps file order): each saw its examples.
    print(f"random-text cases run: {CASES}")  # shown with pytest -s
    assert CASES["ner"] >= 100 and CASES["parser"] >= 100, CASES


@pytest.mark.parametrize("n_tokens", [0, 1, 200_000])
def test_empty_one_token_and_long_docs(ner_nlp, parser_nlp, n_tokens):
    words = (["Bob", "works", "at", "Acme", "Corp", "in", "Paris", "."] * (n_tokens // 8 + 1))[:n_tokens]
    doc = ner_nlp(Doc(ner_nlp.vocab, words=words))
    assert len(doc) == n_tokens
    if n_tokens > 1:
        assert {ent.label_ for ent in doc.ents} >= {"ORG", "LOC"}
    parsed = parser_nlp(Doc(parser_nlp.vocab, words=words))
    assert len(list(parsed.sents)) >= (1 if n_tokens else 0)


def _damage(path, how):
    data = path.read_bytes()
    if how == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif how == "bit-flipped":
        flipped = bytearray(data)
        for k in range(len(flipped) // 3, len(flipped) // 3 + 64):
            flipped[k] ^= 0xFF
        path.write_bytes(bytes(flipped))
    elif how == "foreign":
        path.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4)
    elif how == "pickle":
        import pickle

        path.write_bytes(pickle.dumps({"emission": numpy.zeros(3)}))


@pytest.mark.parametrize("how", ["truncated", "bit-flipped", "foreign", "pickle"])
@pytest.mark.parametrize(
    "component,filename",
    [
        ("bioner_parser", "weights.npz"),
        ("bioner_tagger", "weights.npz"),
        ("bioner", "weights.npz"),
        ("bioner", "gazetteer"),
    ],
)
def test_damaged_files_are_named(ner_nlp, parser_nlp, tmp_path, component, filename, how):
    nlp = ner_nlp if component == "bioner" else parser_nlp
    path = tmp_path / component
    nlp.get_pipe(component).to_disk(path)
    _damage(path / filename, how)
    fresh = {
        "bioner": lambda: BioNER(nlp.vocab),
        "bioner_parser": lambda: BioParser(nlp.vocab),
        "bioner_tagger": lambda: BioTagger(nlp.vocab),
    }[component]()
    with pytest.raises(ModelFileError, match=filename):
        fresh.from_disk(path)


@pytest.mark.parametrize("component", ["bioner_parser", "bioner_tagger"])
def test_damaged_configs_and_wrong_shapes_are_named(parser_nlp, tmp_path, component):
    cls = BioParser if component == "bioner_parser" else BioTagger
    path = tmp_path / component
    pipe = parser_nlp.get_pipe(component)
    pipe.to_disk(path)
    (path / "cfg").write_bytes(b"\xff\xfe{")
    with pytest.raises(ModelFileError, match="cfg"):
        cls(parser_nlp.vocab).from_disk(path)
    pipe.to_disk(path)
    cfg = (path / "cfg").read_text()
    version_key = "features_version" if component == "bioner_parser" else "templates_version"
    (path / "cfg").write_text(cfg.replace(f'"{version_key}": ', f'"{version_key}": 9'))
    reseal(path)
    with pytest.raises(ModelFileError, match="retrain"):
        cls(parser_nlp.vocab).from_disk(path)
    pipe.to_disk(path)
    arrays = dict(numpy.load(path / "weights.npz"))
    key = "moves" if component == "bioner_parser" else "emission_index"  # the tagger saves its rows
    arrays[key] = arrays[key][:-1]
    numpy.savez(path / "weights.npz", **arrays)
    reseal(path)
    with pytest.raises(ModelFileError, match=f"'{key}' is (float32|int32)"):
        cls(parser_nlp.vocab).from_disk(path)


def test_two_threads_tag_and_parse_like_one(ner_nlp, parser_nlp):
    # Words never seen before, so the threads fill the word caches as they go.
    texts = [f"Bob{i} works at Acme Corp in Paris{i % 7} and Alice Smith{i} lives in Berlin ." for i in range(2000)]
    expected = [
        ([(e.start, e.end, e.label_) for e in doc.ents], [(t.head.i, t.dep_) for t in parse])
        for doc, parse in zip(ner_nlp.pipe(texts), parser_nlp.pipe(texts))
    ]
    ner_nlp, parser_nlp = pickle.loads(pickle.dumps(ner_nlp)), pickle.loads(pickle.dumps(parser_nlp))  # cold caches
    results = in_two_threads(
        lambda: [
            ([(e.start, e.end, e.label_) for e in doc.ents], [(t.head.i, t.dep_) for t in parse])
            for doc, parse in zip(ner_nlp.pipe(texts, batch_size=7), parser_nlp.pipe(texts, batch_size=5))
        ]
    )
    assert results == [expected, expected]


def test_two_threads_calling_the_tagger_a_doc_at_a_time_tag_like_one():
    # One nlp(text) per text: without term lists, each a plain doc decoded in one compiled call (BioNER.__call__).
    ner_nlp = train_nlp()
    assert plain_decode(ner_nlp.get_pipe("bioner")) is not None
    texts = [f"Carol{i} met Dan Jones{i} of Acme Corp in Rome{i % 5} ." for i in range(1000)]
    expected = [[(e.start, e.end, e.label_) for e in ner_nlp(text).ents] for text in texts]
    ner_nlp = pickle.loads(pickle.dumps(ner_nlp))  # cold caches
    results = in_two_threads(lambda: [[(e.start, e.end, e.label_) for e in ner_nlp(text).ents] for text in texts])
    assert results == [expected, expected]


def in_two_threads(work) -> list:
    """What `work()` returns in each of two threads run at once."""
    results = [None, None]

    def run(slot):
        results[slot] = work()

    threads = [threading.Thread(target=run, args=(slot,)) for slot in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def test_two_threads_share_a_gazetteer_component_like_one():
    """bioner_gazetteer has no lock: its word cache grows as words arrive, each word placed in one
    step under the GIL, and the cache may grow, start over or be read by the other thread meanwhile."""
    nlp = spacy.blank("en")
    component = nlp.add_pipe("bioner_gazetteer")
    component.add_patterns(
        [{"label": "GPE", "pattern": f"Paris{i}", "id": f"Q{i}"} for i in range(300)]
        + [{"label": "ORG", "pattern": f"Acme{i} Corp", "id": f"A{i}"} for i in range(300)]
    )
    texts = [f"Bob{i} of Acme{i % 400} Corp flew to Paris{i % 350} and Acme{i} ." for i in range(3000)]

    def annotations(docs):
        return [
            ([(e.start, e.end, e.label_, e.kb_id_) for e in doc.ents], len(doc.spans["bioner_gazetteer"]))
            for doc in docs
        ]

    expected = annotations(nlp.pipe(texts))
    component.gazetteer._encoder = TokenEncoder(component.gazetteer._word_id, max_size=500)  # cold; starts over
    assert in_two_threads(lambda: annotations(nlp.pipe(texts, batch_size=3))) == [expected, expected]


TRAIN_AND_HASH = """
import hashlib, sys
sys.path[:0] = sys.argv[1:]
from conftest import train_nlp
from test_parser_component import _trained
ner, parser = train_nlp(), _trained()
print(hashlib.sha1(ner.get_pipe("bioner").to_bytes() + parser.get_pipe("bioner_tagger").to_bytes() +
parser.get_pipe("bioner_parser").to_bytes()).hexdigest())
"""


def test_training_is_deterministic_across_processes():
    tests_dir = str(__import__("pathlib").Path(__file__).parent)
    digests = {
        subprocess.run(
            [sys.executable, "-c", TRAIN_AND_HASH, tests_dir], capture_output=True, text=True, check=True
        ).stdout
        for _ in range(2)
    }
    assert len(digests) == 1
