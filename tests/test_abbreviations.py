import numpy
import pytest
import spacy
from conftest import save_as_version_0_1, short_form_nlp, train_nlp
from hypothesis import given, settings
from hypothesis import strategies as st
from spacy.attrs import ORTH, SENT_START
from spacy.tokens import Doc

from spacy_bioner.core.features import Lexicon
from spacy_bioner.core.perceptron import DROPPED
from spacy_bioner.core.schemes import TagScheme
from spacy_bioner.core.templates import N_ATTRIBUTES, word_attributes
from spacy_bioner.ner.abbreviations import (
    BREAK,
    SKIPPED,
    Initials,
    Words,
    definitions,
    label_short_forms,
    mentions,
    undefined_acronyms,
)
from spacy_bioner.ner.batch import lay_out
from spacy_bioner.ner.document import abbreviation_features, abbreviation_history
from spacy_bioner.ner.long_forms import long_form

WORDS = (
    "Patients with atrial fibrillation ( AF ) and streptozotocin ( STZ ) diabetes . AF was common ; the ( WHO ) said"
).split()


@pytest.mark.parametrize(
    "short,words,expected",
    [
        ("AF", ["with", "atrial", "fibrillation"], 2),
        ("PD", ["in", "Parkinson", "'", "s", "disease"], 4),
        ("NTG", ["of", "nitroglycerin"], 1),  # letters inside one word
        ("OAB", ["with", "overactive", "bladder"], 2),
        ("WHO", ["the"], 0),
        ("XY", ["plain", "words"], 0),
    ],
)
def test_long_form(short, words, expected):
    assert long_form(short, words) == expected


def reference_long_form(short, words):
    """Schwartz & Hearst's search as written: each candidate of 1, 2, ... words in turn."""
    short = short.lower()
    limit = min(len(short) + 5, 2 * len(short))
    for n_words in range(1, min(limit, len(words)) + 1):
        candidate = " ".join(words[-n_words:]).lower()
        if not candidate[:1].isalnum():
            continue
        position = len(candidate)
        for i, char in enumerate(reversed(short)):
            if not char.isalnum():
                continue
            position = candidate.rfind(char, 0, position)
            while i == len(short) - 1 and position > 0 and candidate[position - 1].isalnum():
                position = candidate.rfind(char, 0, position)
            if position < 0:
                break
        else:
            if position == 0:
                return n_words
    return 0


@settings(max_examples=500)
@given(
    st.text(alphabet="abAB1-( ", min_size=1, max_size=6),
    st.lists(st.text(alphabet="abAB1-' ", min_size=1, max_size=5), max_size=12),
)
def test_long_form_is_the_candidate_search(short, words):
    assert long_form(short, words) == reference_long_form(short, words)


def doc_words(doc):
    """All of a doc's tokens as the finders' Words."""
    starts = doc.to_array(SENT_START) == 1 if doc.has_annotation("SENT_START") else numpy.zeros(len(doc), dtype=bool)
    return Words(doc.vocab.strings, doc.to_array(ORTH), numpy.cumsum(starts).astype(numpy.int32))


def short_forms(doc, found):
    return {
        " ".join(doc.vocab.strings[orth] for orth in key): doc[start:end].text for key, (start, end) in found.items()
    }


def test_definitions_and_their_mentions():
    doc = Doc(spacy.blank("en").vocab, words=WORDS)
    found = definitions(doc_words(doc))
    assert short_forms(doc, found) == {"AF": "atrial fibrillation", "STZ": "streptozotocin"}
    heads, starts = mentions(doc_words(doc), found)
    assert {WORDS[i]: int(heads[i]) for i in numpy.flatnonzero(heads >= 0)} == {"AF": 3, "STZ": 8}
    assert (heads[[i for i, w in enumerate(WORDS) if w == "AF"]] == 3).all()  # the definition and the later use
    assert (heads[[i for i, w in enumerate(WORDS) if w not in ("AF", "STZ")]] == -1).all()
    assert (starts == (heads >= 0)).all()  # one-token mentions
    no_parenthesis = Doc(doc.vocab, words=["no", "parenthesis"])
    assert [a.tolist() for a in mentions(doc_words(no_parenthesis), definitions(doc_words(no_parenthesis)))] == [
        [-1, -1],
        [False, False],
    ]


@settings(max_examples=200)
@given(
    st.lists(
        st.sampled_from(["(", ")", ";", ",", "-", "AF", "A", "T", "atrial", "fibrillation", "Smith", "35"]), max_size=12
    )
)
def test_the_screen_finds_the_definitions_the_stage_finds(words):
    """The layout's screen reads each doc's definitions (long_forms.definition_at), as definitions() does."""
    doc = Doc(spacy.blank("en").vocab, words=words or ["x"])
    lexicon = Lexicon(word_attributes, N_ATTRIBUTES)
    rows, no_spaces = lexicon.batch_rows([doc]), numpy.zeros(len(doc), dtype=bool)
    flagged, defined = Initials().docs_with_mentions(
        lexicon, [doc], rows, no_spaces, numpy.zeros(len(doc), dtype=numpy.int32), False
    )
    expected = definitions(doc_words(doc))
    assert defined == ({0: expected} if expected else {}) and flagged == ([0] if expected else [])


def test_parentheses_that_hold_more_than_a_short_form_define_nothing():
    words = "atrial fibrillation ( AF ) and Smith ( Leeds 35 ) ( AO - GLD ) ; and the ( QZ ) x".split()
    doc = Doc(spacy.blank("en").vocab, words=words)
    found = definitions(doc_words(doc))
    assert list(found.values()) == [(0, 2)]  # ( Leeds 35 ) holds more; AO-GLD and QZ spell no long form before them


UNDEFINED = (
    "IDDM does damage mostly : insulin - dependent diabetes mellitus ( IDDM2 ) and AF in Japanese . "
    "The IDDM locus , the ( CKD ) and ABC , not alpha beta , gamma . "
    "SOCCER - JAPAN GET WIN , give each token"
).split()


def doc_initials(doc):
    lexicon = Lexicon(word_attributes, N_ATTRIBUTES)
    return Initials()(lexicon, lexicon.batch_rows([doc]))


def test_initials():
    doc = Doc(spacy.blank("en").vocab, words="The IDDM - locus , NATO 's 2 Élan IDDM".split())
    codes, acronyms = doc_initials(doc)
    assert codes.tolist() == [ord("t"), ord("i"), SKIPPED, ord("l"), BREAK, ord("n"), BREAK, ord("2"), BREAK, ord("i")]
    assert [t.text for t, a in zip(doc, acronyms) if a] == ["IDDM", "NATO", "IDDM"]


@pytest.mark.parametrize(
    "words,acronyms,found",
    [
        ("a plain sentence , with no short form".split(), True, False),
        ("the EU and the UN".split(), True, False),  # too short for an undefined acronym
        ("Smith ( Leeds 35 ) won".split(), True, False),  # a parenthesis that holds more than a short form
        ("Smith ( Britain ) won".split(), True, False),  # a short form of no long form before it
        ("JAPAN GET LUCKY WIN".split(), True, False),  # a headline's capitals, not acronyms
        ("atrial fibrillation ( AF )".split(), False, True),
        ("IDDM is common".split(), True, False),  # nothing in the doc spells it
        ("insulin - dependent diabetes mellitus , or IDDM".split(), True, True),
        ("insulin - dependent diabetes mellitus , or IDDM".split(), False, False),
    ],
)
def test_docs_with_mentions_says_whether_a_short_form_may_be_defined_or_used(words, acronyms, found):
    doc = Doc(spacy.blank("en").vocab, words=words)
    lexicon = Lexicon(word_attributes, N_ATTRIBUTES)
    is_space = numpy.zeros(len(doc), dtype=bool)
    sentence = numpy.zeros(len(doc), dtype=numpy.int32)
    rows = lexicon.batch_rows([doc])
    assert bool(Initials().docs_with_mentions(lexicon, [doc], rows, is_space, sentence, acronyms)[0]) is found


def test_initials_follow_the_lexicon_as_it_grows_and_restarts():
    vocab = spacy.blank("en").vocab
    lexicon, initials = Lexicon(word_attributes, N_ATTRIBUTES, max_size=4), Initials()
    # The third batch restarts the lexicon: row 0 is then "oslo", no longer "the".
    for words, acronyms in (
        (["the", "IDDM"], [False, True]),
        (["IDDM", "NATO"], [False, False]),
        (["oslo", "NATO", "Oslo"], [False, True, False]),
    ):
        codes, found = initials(lexicon, lexicon.batch_rows([Doc(vocab, words=words)]))
        assert codes.tolist() == [ord(w[0].lower()) for w in words] and found.tolist() == acronyms
    assert lexicon.generation == 1


def test_initials_fed_word_by_word_match_those_worked_out_at_once():
    """Rows added over many calls (past the arrays' first room) give what one call over all of them gives."""
    vocab = spacy.blank("en").vocab
    words = [f"W{i}" if i % 3 else f"ABC{i}" for i in range(2500)] + ["(", "x", ")"]
    lexicon, fed = Lexicon(word_attributes, N_ATTRIBUTES), Initials()
    for start in range(0, len(words), 7):
        doc = Doc(vocab, words=words[start : start + 7])
        one_sentence = numpy.zeros(len(doc), dtype=numpy.int32)
        fed.docs_with_mentions(lexicon, [doc], lexicon.batch_rows([doc]), one_sentence.astype(bool), one_sentence, True)
    rows = lexicon.batch_rows([Doc(vocab, words=words)])
    at_once = Initials()
    assert [a.tolist() for a in fed(lexicon, rows)] == [a.tolist() for a in at_once(lexicon, rows)]
    for last_words, found in ((["W1", "W2", "(", "WW", ")"], True), (["W2497", "W2498", "ABC2499"], False)):
        doc = Doc(vocab, words=last_words)  # "W1 W2 ( WW )" defines WW
        one_sentence = numpy.zeros(len(doc), dtype=numpy.int32)
        rows = lexicon.batch_rows([doc])
        assert (
            bool(fed.docs_with_mentions(lexicon, [doc], rows, one_sentence.astype(bool), one_sentence, False)[0])
            is found
        )


def undefined(words, defined=()):
    doc = Doc(spacy.blank("en").vocab, words=words)
    codes, acronyms = doc_initials(doc)
    return doc, undefined_acronyms(doc_words(doc), {(doc.vocab.strings[w],): (0, 1) for w in defined}, codes, acronyms)


def test_undefined_acronyms_spell_the_initials_of_a_run_of_words():
    doc, found = undefined(UNDEFINED, defined=["CKD"])
    # Not itself the start of its own run; hyphens skipped; a defined one, two letters,
    # a run broken by a comma and a headline's words (GET: "give each token") are left out.
    assert short_forms(doc, found) == {"IDDM": "insulin - dependent diabetes mellitus"}
    heads, starts = mentions(doc_words(doc), found)
    assert [UNDEFINED[i] for i in numpy.flatnonzero(starts)] == ["IDDM", "IDDM"]
    assert set(heads[starts].tolist()) == {UNDEFINED.index("mellitus")}
    assert undefined(["IDDM"])[1] == {}
    assert undefined("IDDM does damage mostly .".split())[1] == {}  # the only run holds the acronym itself


VOCAB = spacy.blank("en").vocab


def reference_mentions(orths, found):
    """mentions() as first written: every short form in turn, longest first."""
    heads, starts = numpy.full(len(orths), -1, dtype=numpy.int64), numpy.zeros(len(orths), dtype=numpy.bool_)
    for key, (_, end) in sorted(found.items(), key=lambda item: -len(item[0])):
        for start in range(len(orths) - len(key) + 1):
            if tuple(orths[start : start + len(key)].tolist()) == key and (heads[start : start + len(key)] < 0).all():
                starts[start] = True
                heads[start : start + len(key)] = end - 1
    return heads, starts


@settings(max_examples=300)
@given(
    st.lists(st.sampled_from("a b c d -".split()), min_size=1, max_size=30),
    st.lists(st.lists(st.sampled_from("a b c d -".split()), min_size=1, max_size=3), max_size=4),
)
def test_mentions_place_every_short_form_as_written(words, keys):
    doc = Doc(VOCAB, words=words)
    orths = doc.to_array("ORTH")
    found = {tuple(doc.vocab.strings[w] for w in key): (0, i + 1) for i, key in enumerate(keys)}
    assert [a.tolist() for a in mentions(doc_words(doc), found)] == [
        a.tolist() for a in reference_mentions(orths, found)
    ]


HYPHENATED = (
    "Schwartz - Jampel syndrome ( SJS ; chondrodystrophic myotonia ) and hyperparathyroidism - jaw tumor "
    "( HPT - JT ) . HPT - JT and SJS differ from HPT ; the ( A - B - C - D ) is not one"
).split()


def test_short_forms_of_hyphenated_tokens_and_in_lists():
    doc = Doc(spacy.blank("en").vocab, words=HYPHENATED)
    found = definitions(doc_words(doc))
    # "( A - B - C - D )" has more pieces than a short form takes; "HPT" alone is not defined.
    assert short_forms(doc, found) == {
        "SJS": "Schwartz - Jampel syndrome",
        "HPT - JT": "hyperparathyroidism - jaw tumor",
    }
    heads, starts = mentions(doc_words(doc), found)
    hpt_jt = [i for i in range(len(HYPHENATED) - 2) if HYPHENATED[i : i + 3] == ["HPT", "-", "JT"]]
    assert len(hpt_jt) == 2 and all(starts[i] and not starts[i + 1] and (heads[i : i + 3] == 14).all() for i in hpt_jt)
    assert heads[HYPHENATED.index("HPT", hpt_jt[1] + 1)] == -1
    assert [HYPHENATED[i] for i in numpy.flatnonzero(starts)] == ["SJS", "HPT", "HPT", "SJS"]


def test_mentions_read_the_long_form_head():
    nlp = spacy.blank("en")
    lexicon = Lexicon(word_attributes, N_ATTRIBUTES)
    words = ["fibrillation", "AF", "x", "AF", "arrhythmia", "AA"]
    rows = lexicon.rows(numpy.array([nlp.vocab.strings.add(w) for w in words], dtype=numpy.uint64), nlp.vocab.strings)
    heads = numpy.array([-1, 0, -1, 0, -1, 4])
    out = abbreviation_features(rows, lexicon.table, heads, 2**20)
    assert (out[[0, 2, 4]] == DROPPED).all()
    assert (out[1] == out[3]).all() and (out[1] != out[5]).all() and (out[1] != DROPPED).all()
    history = abbreviation_history(heads, numpy.array([2, 0, 0, 0, 1, 0]), 2**20)
    assert history[1, 0] == history[3, 0] != history[5, 0] and history[0, 0] == DROPPED


def test_abbreviations_family_trains_and_round_trips(tmp_path):
    data = [
        ("Patients with atrial fibrillation ( AF ) improved .", [(14, 33, "DIS"), (36, 38, "DIS")]),
        ("Both AF and diabetes were seen .", [(5, 7, "DIS"), (12, 20, "DIS")]),
        ("Nothing to see .", []),
    ]
    nlp = train_nlp({"features": ["word", "window", "shape", "history", "abbreviations"]}, data=data)
    for text, gold in data:
        assert [(e.start_char, e.end_char, e.label_) for e in nlp(text).ents] == gold
    nlp.to_disk(tmp_path)
    loaded = spacy.load(tmp_path)
    assert [[e.text for e in d.ents] for d in loaded.pipe(t for t, _ in data)] == [
        [e.text for e in nlp(t).ents] for t, _ in data
    ]


def _tags(scheme, spans, n):
    return scheme.from_spans([(start, end, scheme.labels.index(label)) for start, end, label in spans], n).astype(
        numpy.int32
    )


@pytest.mark.parametrize("name", ["BILOU", "BIO"])
def test_label_short_forms_follows_the_long_form(name):
    doc = Doc(spacy.blank("en").vocab, words=WORDS)
    heads, starts = mentions(doc_words(doc), definitions(doc_words(doc)))
    scheme = TagScheme(name, ["DIS", "CHEM"])
    allowed = numpy.ones((len(WORDS), scheme.n_tags), dtype=numpy.uint8)
    # atrial fibrillation is a disease; streptozotocin was left untagged, so STZ stays so.
    tags = _tags(scheme, [(2, 4, "DIS")], len(WORDS))
    labelled = label_short_forms(tags, heads, starts, scheme, allowed)
    af = [i for i, w in enumerate(WORDS) if w == "AF"]
    assert sorted(scheme.to_spans(labelled)) == sorted([(2, 4, 0)] + [(i, i + 1, 0) for i in af])
    assert (tags == _tags(scheme, [(2, 4, "DIS")], len(WORDS))).all()  # the input is left as it was
    # An entity that runs past the long form's head does not end on it: nothing to follow.
    past = _tags(scheme, [(2, 5, "DIS")], len(WORDS))
    assert (label_short_forms(past, heads, starts, scheme, allowed) == past).all()
    # A mention already in an entity keeps it; one that may not take the tag stays untagged.
    tagged = _tags(scheme, [(2, 4, "DIS"), (af[1], af[1] + 1, "CHEM")], len(WORDS))
    assert scheme.to_spans(label_short_forms(tagged, heads, starts, scheme, allowed))[-1] == (af[1], af[1] + 1, 1)
    allowed[af[1]] = 0
    allowed[af[1], 0] = 1
    assert sorted(scheme.to_spans(label_short_forms(tags, heads, starts, scheme, allowed))) == [
        (2, 4, 0),
        (af[0], af[0] + 1, 0),
    ]


def test_mentions_do_not_overlap():
    # "TH" is defined too and ends every "AT - TH"; "AB - AB" occurs twice, overlapping, in "AB - AB - AB".
    words = (
        "ataxia - thymoma ( AT - TH ) and thymic hypoplasia ( TH ) ; alpha beta - alpha beta ( AB - AB ) . "
        "AT - TH , TH , AB - AB - AB"
    ).split()
    doc = Doc(spacy.blank("en").vocab, words=words)
    found = definitions(doc_words(doc))
    assert short_forms(doc, found) == {
        "AT - TH": "ataxia - thymoma",
        "TH": "thymic hypoplasia",
        "AB - AB": "alpha beta - alpha beta",
    }
    head = {" ".join(doc.vocab.strings[orth] for orth in key): end - 1 for key, (_, end) in found.items()}
    heads, starts = mentions(doc_words(doc), found)
    first = numpy.flatnonzero(starts).tolist()
    assert [words[i] for i in first] == ["AT", "TH", "AB", "AT", "TH", "AB"]
    last_at, last_ab = first[3], first[5]
    assert (heads[last_at : last_at + 3] == head["AT - TH"]).all() and not starts[last_at + 2]  # its "TH" is its own
    assert heads[first[4]] == head["TH"]
    assert (heads[last_ab : last_ab + 3] == head["AB - AB"]).all() and (heads[last_ab + 3 :] == -1).all()


@pytest.mark.parametrize("name", ["BILOU", "BIO"])
def test_label_short_forms_of_several_tokens(name):
    doc = Doc(spacy.blank("en").vocab, words=HYPHENATED)
    heads, starts = mentions(doc_words(doc), definitions(doc_words(doc)))
    scheme = TagScheme(name, ["DIS"])
    allowed = numpy.ones((len(HYPHENATED), scheme.n_tags), dtype=numpy.uint8)
    hpt_jt = [i for i in range(len(HYPHENATED) - 2) if HYPHENATED[i : i + 3] == ["HPT", "-", "JT"]]
    # The long form is tagged and so is the first "HPT" of the second mention: only the wholly untagged mention follows.
    tags = _tags(scheme, [(0, 4, "DIS"), (11, 15, "DIS"), (hpt_jt[1], hpt_jt[1] + 1, "DIS")], len(HYPHENATED))
    spans = scheme.to_spans(label_short_forms(tags, heads, starts, scheme, allowed))
    sjs = [i for i, w in enumerate(HYPHENATED) if w == "SJS"]
    assert sorted(spans) == sorted(
        [(0, 4, 0), (11, 15, 0), (hpt_jt[1], hpt_jt[1] + 1, 0), (hpt_jt[0], hpt_jt[0] + 3, 0)]
        + [(i, i + 1, 0) for i in sjs]
    )
    # A token of the mention that may not take its tag keeps the whole mention out.
    allowed[hpt_jt[0] + 1] = 0
    allowed[hpt_jt[0] + 1, 0] = 1
    assert (hpt_jt[0], hpt_jt[0] + 3, 0) not in scheme.to_spans(label_short_forms(tags, heads, starts, scheme, allowed))


@pytest.mark.parametrize("short_form_labels", [True, False])
def test_bioner_labels_short_forms_of_its_entities(tmp_path, short_form_labels):
    nlp = short_form_nlp(short_form_labels)
    text = "Patients with atrial fibrillation ( AF ) improved . AF was rare ."
    expected = ["atrial fibrillation", "AF", "AF"] if short_form_labels else ["atrial fibrillation"]
    assert [e.text for e in nlp(text).ents] == expected
    nlp.to_disk(tmp_path)
    assert [e.text for e in spacy.load(tmp_path)(text).ents] == expected


@pytest.mark.parametrize("acronym_labels", [True, False])
def test_bioner_labels_undefined_acronyms_of_its_entities(tmp_path, acronym_labels):
    # Without the abbreviations family and short_form_labels: acronym_labels stands alone.
    nlp = short_form_nlp(
        short_form_labels=False,
        acronym_labels=acronym_labels,
        term="chronic kidney disease",
        features=["word", "window"],
    )
    text = "Patients with chronic kidney disease improved . CKD was rare , unlike ( AB ) and CKDX ."
    expected = ["chronic kidney disease", "CKD"] if acronym_labels else ["chronic kidney disease"]
    assert [e.text for e in nlp(text).ents] == expected
    nlp.to_disk(tmp_path)
    assert [e.text for e in spacy.load(tmp_path)(text).ents] == expected


def test_models_saved_before_short_form_labels_keep_their_output(tmp_path):
    from spacy_bioner.ner.component import BioNER
    from spacy_bioner.upgrade import upgrade

    nlp = train_nlp({"features": ["word", "abbreviations"]})
    save_as_version_0_1(nlp, tmp_path, drop=("short_form_labels", "acronym_labels"))
    assert upgrade(tmp_path) == ["bioner"]
    alone = BioNER(nlp.vocab).from_disk(tmp_path / "bioner")
    for ner in (spacy.load(tmp_path).get_pipe("bioner"), alone):
        assert ner.settings.rules.short_form_labels is False and ner.settings.rules.acronym_labels is False


def test_line_breaks_change_no_definition_or_acronym():
    """Raw text's line breaks (whitespace tokens) inside a long form, before a
    parenthesis or between an acronym's words neither end nor join anything:
    bioner finds the short forms and acronyms it finds without them."""
    ner = short_form_nlp().get_pipe("bioner")
    words = (
        "Patients with atrial fibrillation ( AF ) and insulin - dependent diabetes mellitus ; "
        "AF and IDDM recurred , IDDM too ."
    ).split()
    spaced = ["\n"]
    positions = []
    for i, word in enumerate(words):
        positions.append(len(spaced))
        spaced.append(word)
        if word in ("atrial", "fibrillation", "dependent", "diabetes", "AF"):
            spaced.append("\n\n" if i % 2 else "\n")
    positions = numpy.array(positions)
    plain_layout = lay_out(ner, [Doc(ner.vocab, words=words)])
    spaced_layout = lay_out(ner, [Doc(ner.vocab, words=spaced, spaces=[False] * len(spaced))])
    for heads, _starts in (
        (plain_layout.abbreviation_heads, plain_layout.abbreviation_starts),
        (plain_layout.short_form_heads, plain_layout.short_form_starts),
    ):
        assert (heads >= 0).sum() >= 2
    for plain_heads, spaced_heads in (
        (plain_layout.abbreviation_heads, spaced_layout.abbreviation_heads),
        (plain_layout.short_form_heads, spaced_layout.short_form_heads),
    ):
        assert spaced_heads[positions].tolist() == numpy.where(plain_heads >= 0, positions[plain_heads], -1).tolist()
        assert (numpy.delete(spaced_heads, positions) == -1).all()
    assert spaced_layout.abbreviation_starts[positions].tolist() == plain_layout.abbreviation_starts.tolist()
    assert spaced_layout.short_form_starts[positions].tolist() == plain_layout.short_form_starts.tolist()
