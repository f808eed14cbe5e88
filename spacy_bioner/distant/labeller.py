"""Distant labels: term lists matched in raw text become partial annotation to train bioner on.

text -> tokens -> list matches -> (ambiguous entries, type clashes, case, names run on, surnames, short forms) ->
entities, O and missing

A token a list matches is part of an entity, unless the match is ambiguous; a token no list matches
is outside (O). Ambiguous matches (and, as a setting, name-like tokens no list matched) are missing:
training neither rewards nor punishes any tag there (bioner trains on partial annotation).
"""

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import numpy
from spacy.language import Language
from spacy.tokens import Doc, Span

from ..core.word_case import shipped_word_case
from ..gazetteer.matcher import Gazetteer, filter_matches
from ..gazetteer.terms import TERM_SUFFIXES, read_terms
from ..ner.abbreviations import Words, definitions, mentions
from ..ner.surnames import PERSON_LABELS, is_name
from ..values.units import read_unit

# Frequency classes of the word case table that make a one-word entry ambiguous: for names (cased labels)
# "Will", "May"; for terms too ("lead", "control": large lists of synonyms have them), but not the next class,
# as domain terms are often ordinary words ("cancer", "cocaine").
COMMON_FOR_NAMES = ("common", "frequent")
COMMON_FOR_TERMS = ("common", "frequent")
# A one-word match of a list of people's names is ambiguous too where the word is usual in text but no common
# first name or surname (the word case table's name kinds): its frequency comes from another reading.
USUAL_FOR_NAMES = ("usual",)
RARE_NAMES = ("unknown", "rare_first", "rare_surname", "rare_first+rare_surname")
# A name list's one-word entry is ambiguous too where the word is usually written in lower case ("Sales",
# "President", "Union": an ordinary word, capitalized here by a title or a sentence start), or is a month or
# weekday (capitalized by convention, and a name only beside another: "April Jones").
ORDINARY_CASES = ("lower", "mostly_lower", "mixed")
NAME_CASES = ("mostly_title", "title", "upper")
CLASH = ""  # term_labels' label of a term two lists label differently
CALENDAR_WORDS = frozenset(
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec "
    "monday tuesday wednesday thursday friday saturday sunday mon tue tues wed thu thur thurs fri sat sun".split()
)


@dataclass
class DistantSettings:
    """How list matches become labels.

    cased_labels: labels whose entries are names: a match of one in lower case ("will", "china") is no
        entity. None: the labels most of whose entries are capitalized.
    ambiguous_words: a one-word match that is a number, a single character ("P" in "P < 0.05") or a
        common English word (for a name list, one not usually capitalized, or a word usually written in
        lower case, or a month or weekday; for a list of people's names, also a word usual in text but no
        common first name or surname) is ambiguous: its tokens are missing, neither entity nor O. So are
        two name lists' entities of different labels side by side ("David", a city, + "Williams", a
        surname).
    merge_adjacent: adjacent matches of one label are one entity (a first name and a surname).
    extend_names: an entity of a name list runs on over the capitalized words beside it that no list
        matched, unless they are ordinary or calendar words: "Marc" (a first name) + "Dollendorf".
    repeat_surnames: the last word of a person's full name is that person where the doc uses it alone
        ("Yasser Arafat" ... "Arafat said"), as bioner's `person_labels` rule reads it when tagging.
    person_labels: the labels that name people, for repeat_surnames and ambiguous_words.
    short_forms: a short form the doc defines ("atrial fibrillation ( AF )") whose long form ends an
        entity is an entity of its label wherever it occurs in the doc ("AF recurred"), as bioner's
        tagging rule reads it.
    unknown_names: unmatched tokens that look like names (capitalized away from a sentence start,
        upper case, letters with digits) are missing, not O. Off by default: it costs dev F1 on
        CoNLL-2003, BC5CDR and NCBI-disease (benchmarks page).
    clash: a span two lists give two labels takes the label of the list given first ("priority"), or
        is missing ("missing").
    """

    cased_labels: Optional[list[str]] = None
    ambiguous_words: bool = True
    merge_adjacent: bool = True
    extend_names: bool = True
    repeat_surnames: bool = True
    person_labels: tuple[str, ...] = PERSON_LABELS
    short_forms: bool = True
    unknown_names: bool = False
    clash: str = "priority"


class DistantLabeller:
    """Labels docs from term lists (.tsv, .jsonl, .txt with a label, or directories of them)."""

    def __init__(self, nlp: Language, term_paths: Iterable[Path], settings: Optional[DistantSettings] = None):
        self.settings = settings or DistantSettings()
        self.counts: Counter = Counter()  # what the labeller did, for its report
        self.gazetteer = Gazetteer(nlp.tokenizer)
        self.tokenizer = nlp.tokenizer
        self.term_paths = [Path(path) for path in term_paths]
        capitalized: Counter = Counter()
        entries: Counter = Counter()
        self.priority: dict[str, int] = {}  # label -> rank of the first list that has it
        self.term_labels: dict[str, str] = {}  # lower-cased term -> its label, CLASH if two lists differ
        for path in self.term_paths:
            self.gazetteer.load(path)
            for term, label in _terms_of(path):
                self.priority.setdefault(label, len(self.priority))
                entries[label] += 1
                capitalized[label] += term[:1].isupper()
                key = term.lower()
                self.term_labels[key] = label if self.term_labels.get(key, label) == label else CLASH
        if self.settings.cased_labels is None:
            self.settings.cased_labels = [label for label in entries if capitalized[label] > 0.8 * entries[label]]
        self.name_labels = frozenset(self.settings.cased_labels)  # the labels of name lists
        self.labels = sorted(entries)
        self.word_case = shipped_word_case()

    def __call__(self, doc: Doc) -> Doc:
        """The doc with distant labels: entities, O, and missing tokens (doc.ents, set_ents' missing)."""
        counts = self.counts
        entities, missing = [], numpy.zeros(len(doc), dtype=bool)
        matches = self.gazetteer.match(doc)
        kept = []
        for start, end, label in self._clash_free(doc, matches, missing):
            text = doc[start:end].text
            if label in self.name_labels and not text[:1].isupper():
                counts["lower_case_name"] += 1  # "will", "china": the list entry is a name, this is no name
            elif end - start == 1 and start > 0 and doc[start - 1].like_num and read_unit(text) is not None:
                counts["unit"] += 1  # "10 mg": a unit of measure after a number, whatever a list says
            elif self.settings.ambiguous_words and end - start == 1 and self._ambiguous(doc[start], label):
                counts["ambiguous"] += 1
                missing[start:end] = True
            else:
                kept.append((start, end, label))
        if self.settings.merge_adjacent:
            kept = _merged(kept)
        if self.settings.extend_names:
            kept = self._extended(doc, kept, missing)
        if self.settings.ambiguous_words:
            kept = self._without_mixed_names(kept, missing)
        if self.settings.repeat_surnames:
            kept = self._with_surnames(doc, kept, missing)
        if self.settings.short_forms:
            kept = self._with_short_forms(doc, kept, missing)
        for start, end, label in kept:
            entities.append(Span(doc, start, end, label=label))
            counts["entities"] += 1
        if self.settings.unknown_names:
            missing |= self._name_like(doc)
        counts["missing_tokens"] += set_labels(doc, entities, missing)
        return doc

    def pipe(self, docs: Iterable[Doc]) -> Iterable[Doc]:
        for doc in docs:
            yield self(doc)

    def trusted_terms(self) -> Iterator[tuple[str, str]]:
        """(term, label) of the list entries the labels trust, for the model's term-list features: all but
        the terms two lists give different labels, and the one-word entries that are ambiguous wherever
        they occur (with ambiguous_words). A model whose features fire on an entry the labels left
        missing learns nothing of it in training, and then tags it everywhere."""
        written = set()
        for path in self.term_paths:
            for term, label in _terms_of(path):
                if self.term_labels[term.lower()] == CLASH or (term, label) in written:
                    continue
                written.add((term, label))
                if self.settings.ambiguous_words and not any(c.isspace() for c in term):
                    tokens = self.tokenizer(term)
                    if len(tokens) == 1 and self._ambiguous(tokens[0], label):
                        continue
                yield term, label

    def _ambiguous(self, token, label: str) -> bool:
        """A common English word, or for a name list an ordinary or calendar word, or for a list of people's
        names a word of text more than of names: as an entity it is as likely wrong as right."""
        if len(token.text) == 1 or token.like_num:
            return True
        usual_case, frequency, name_kind = self.word_case.values_of(token.text)
        if label not in self.name_labels:
            return frequency in COMMON_FOR_TERMS
        if label in self.settings.person_labels and frequency in USUAL_FOR_NAMES and name_kind in RARE_NAMES:
            return True  # "Senate", "Arab", "Britain": frequent in text, rare as names
        # "China", "Canada": frequent, but as names (usually capitalized)
        return frequency in COMMON_FOR_NAMES and usual_case not in NAME_CASES or self._ordinary(token)

    def _extended(
        self, doc: Doc, spans: list[tuple[int, int, str]], missing: numpy.ndarray
    ) -> list[tuple[int, int, str]]:
        """The spans of name lists run on over the unmatched name-like words beside them (extend_names)."""
        taken = _covered(spans, missing)
        extended = []
        for start, end, label in spans:
            if label in self.name_labels:
                matched = (start, end)
                while end < len(doc) and not taken[end] and self._name_part(doc[end]):
                    taken[end] = True
                    end += 1
                while start > 0 and not taken[start - 1] and self._name_part(doc[start - 1]):
                    taken[start - 1] = True
                    start -= 1
                self.counts["extended"] += (start, end) != matched
            extended.append((start, end, label))
        return extended

    def _without_mixed_names(
        self, spans: list[tuple[int, int, str]], missing: numpy.ndarray
    ) -> list[tuple[int, int, str]]:
        """The spans without those of two name lists side by side with different labels ("David", a city,
        + "Williams", a surname): one name of an unknown type, whose tokens are missing."""
        names = self.name_labels
        mixed = set()
        for (start, end, label), (next_start, next_end, next_label) in zip(spans, spans[1:]):
            if end == next_start and label != next_label and label in names and next_label in names:
                mixed |= {start, next_start}
                missing[start:next_end] = True
                self.counts["mixed_names"] += 1
        return [span for span in spans if span[0] not in mixed]

    def _with_surnames(
        self, doc: Doc, spans: list[tuple[int, int, str]], missing: numpy.ndarray
    ) -> list[tuple[int, int, str]]:
        """The spans, and a one-word entity wherever the last word of a person's full name stands alone in
        the doc, between words that are neither labelled nor capitalized ("Arafat said", not "King Hussein")."""
        persons = set(self.settings.person_labels)
        surnames: dict[str, str] = {}
        for start, end, label in spans:
            if label in persons and end - start > 1 and is_name(doc[end - 1].text):
                surnames.setdefault(doc[end - 1].text, label)
        if not surnames:
            return spans
        taken = _covered(spans, missing)

        def free(i: int) -> bool:
            return not 0 <= i < len(doc) or not (taken[i] or doc[i].text[:1].isupper())

        alone = [(t.i, t.i + 1, surnames[t.text]) for t in doc if t.text in surnames and not taken[t.i]]
        alone = [span for span in alone if free(span[0] - 1) and free(span[1])]
        self.counts["surnames"] += len(alone)
        return sorted(spans + alone)

    def _with_short_forms(
        self, doc: Doc, spans: list[tuple[int, int, str]], missing: numpy.ndarray
    ) -> list[tuple[int, int, str]]:
        """The spans, and an entity at each free mention of a short form whose long form ends an entity of
        the spans ("atrial fibrillation ( AF ) ... AF recurred"): it takes that entity's label."""
        sentences = numpy.cumsum(doc.to_array("SENT_START") == 1)
        words = Words(doc.vocab.strings, doc.to_array("ORTH"), sentences)
        label_of_end = {end: label for _, end, label in spans}
        typed = {key: span for key, span in definitions(words).items() if span[1] in label_of_end}
        if not typed:
            return spans
        heads, starts = mentions(words, typed)
        taken = _covered(spans, missing)
        added = []
        for start in numpy.flatnonzero(starts).tolist():
            end = start + 1
            while end < len(doc) and heads[end] == heads[start] and not starts[end]:
                end += 1
            if not taken[start:end].any():
                added.append((start, end, label_of_end[int(heads[start]) + 1]))
        self.counts["short_forms"] += len(added)
        return sorted(spans + added)

    def _name_part(self, token) -> bool:
        """A capitalized word (not in capitals, not opening the doc or a sentence) that is no ordinary or
        calendar word: the part of a name that a list lacks."""
        text = token.text
        if not (text.isalpha() and text[:1].isupper() and not text.isupper()) or token.i == 0 or token.is_sent_start:
            return False
        return not self._ordinary(token)

    def _ordinary(self, token) -> bool:
        """A word usually written in lower case, or a month or weekday: capitalized, it is still no name."""
        return self.word_case.values_of(token.text)[0] in ORDINARY_CASES or token.lower_ in CALENDAR_WORDS

    def _clash_free(self, doc: Doc, matches: numpy.ndarray, missing: numpy.ndarray) -> list[tuple[int, int, str]]:
        """Non-overlapping (start, end, label) of the matches, leftmost longest, clashes of type resolved."""
        names = self.gazetteer.labels
        labels_of: dict[tuple[int, int], set] = {}
        for start, end, label, _ in matches.tolist():
            labels_of.setdefault((start, end), set()).add(names[label])
        kept = []
        for start, end, label, _ in filter_matches(matches):
            labels = labels_of[(start, end)]
            if len(labels) > 1:
                self.counts["type_clash"] += 1
                if self.settings.clash == "missing":
                    missing[start:end] = True
                    continue
                kept.append((start, end, min(labels, key=lambda name: self.priority.get(name, len(self.priority)))))
                continue
            kept.append((start, end, names[label]))
        return kept

    def _name_like(self, doc: Doc) -> numpy.ndarray:
        """Tokens that may belong to a name no list has."""
        looks = numpy.zeros(len(doc), dtype=bool)
        for token in doc:
            text = token.text
            if not any(c.isalpha() for c in text):
                continue
            mixed = any(c.isdigit() for c in text) or text.isupper() and len(text) > 1
            capital = text[:1].isupper() and not token.is_sent_start
            if not capital and token.is_sent_start and text[:1].isupper():
                capital = self.word_case.values_of(text)[0] not in ("lower", "mostly_lower")
            looks[token.i] = mixed or capital
        return looks


def set_labels(doc: Doc, entities: list[Span], missing: numpy.ndarray) -> int:
    """Write the entities to doc.ents, the missing tokens outside them as missing, the rest O.
    RETURNS (int): how many tokens are missing."""
    missing = missing.copy()
    for ent in entities:
        missing[ent.start : ent.end] = False
    spans = [doc[i : i + 1] for i in numpy.flatnonzero(missing).tolist()]
    doc.set_ents(sorted(entities, key=lambda span: span.start), missing=spans, default="outside")
    return len(spans)


def _covered(spans: list[tuple[int, int, str]], missing: numpy.ndarray) -> numpy.ndarray:
    """Per token, whether a span or the missing tokens cover it."""
    covered = missing.copy()
    for start, end, _ in spans:
        covered[start:end] = True
    return covered


def _merged(spans: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    merged: list[tuple[int, int, str]] = []
    for start, end, label in spans:
        if merged and merged[-1][1] == start and merged[-1][2] == label:
            merged[-1] = (merged[-1][0], end, label)
        else:
            merged.append((start, end, label))
    return merged


def _terms_of(path: Path) -> Iterable[tuple[str, str]]:
    """(term, label) of a term file, or of each in a directory, as the gazetteer reads them (plain-text
    lists, which take their label from the caller, add no case statistics)."""
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    for file in files:
        kind = TERM_SUFFIXES.get(file.suffix)
        if kind in ("tsv", "jsonl"):
            for term, label, _ in read_terms(file, kind, None):
                yield term, label
