"""definitions.pyx, the long-form search in C, against long_forms.definition_at, its reference."""

from hypothesis import given, settings
from hypothesis import strategies as st
from spacy.strings import StringStore

from spacy_bioner.ner.definitions import definition_at_words
from spacy_bioner.ner.long_forms import definition_at

# ASCII of every class the search tells apart, and letters whose case Python's rules change
# (the C search hands words holding them to definition_at).
ASCII = "abfgAFGT05-'"
LETTERS = ASCII + "éÉİß"


@st.composite
def parentheses(draw):
    """Words, then "(" with a short form of one to three hyphen-joined pieces and a closer, then more
    words; often the words just before spell the short form's letters. Sentences change anywhere,
    or (often) only before the words that spell it."""
    ascii_only = draw(st.booleans())
    words = st.text(ASCII if ascii_only else LETTERS, min_size=1, max_size=7)
    pieces = draw(
        st.lists(st.text("AFGTabf05'" + ("" if ascii_only else "éİ"), min_size=1, max_size=3), min_size=1, max_size=3)
    )
    before = draw(st.lists(words, max_size=6))
    first_of_sentence = draw(st.integers(0, len(before)))  # where the "("'s sentence starts
    if draw(st.booleans()):  # a long form of the short form's letters, each first in its word or inside it
        letters = [c for piece in pieces for c in piece if c.isalnum()]
        starts, ends = (
            st.sampled_from(["", "", "x", "a-"]),
            st.sampled_from(["", "ab", "-b"] + ["é"] * (not ascii_only)),
        )
        before += [draw(starts) + c + draw(ends) for c in letters]
    short = [piece for k, piece in enumerate(pieces) for piece in ([piece] if k == 0 else ["-", piece])]
    closer = draw(st.sampled_from([")", ")", ";", ",", "]", "AF"]))
    tokens = [*before, "(", *short, closer, *draw(st.lists(words, max_size=2))]
    if draw(st.booleans()):
        sentence = [int(k >= first_of_sentence) for k in range(len(tokens))]
    else:
        breaks = draw(st.lists(st.sampled_from([0, 0, 0, 1]), min_size=len(tokens), max_size=len(tokens)))
        sentence = [sum(breaks[: k + 1]) for k in range(len(tokens))]
    return tokens, sentence, len(before)


@settings(max_examples=800, deadline=None)
@given(parentheses())
def test_the_c_search_finds_what_definition_at_finds(case):
    tokens, sentence, i = case
    strings = StringStore()
    orths = [strings.add(token) for token in tokens]
    assert definition_at_words(strings, orths, sentence, i) == definition_at(strings, orths, sentence, i)


def test_a_definition_is_found_in_ascii_and_in_other_letters():
    strings = StringStore()
    for text, i, expected in [
        ("patients with atrial fibrillation ( AF ) were", 4, (2, 4)),
        ("the 5 - fluorouracil ( 5 - FU ) dose", 4, (1, 4)),
        ("in naïve bayes ( NB ) ok", 3, (1, 3)),
        ("in Spain ( Spain ) ok", 2, (1, 2)),
    ]:
        tokens = text.split()
        orths = [strings.add(token) for token in tokens]
        found = definition_at_words(strings, orths, [0] * len(tokens), i)
        assert found is not None and found[1] == expected
    assert definition_at_words(strings, [strings.add(t) for t in "big ( QZ )".split()], [0] * 4, 1) is None
