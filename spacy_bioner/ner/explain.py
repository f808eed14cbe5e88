"""Why the tagger tagged what it did.

For each entity: at each of its tokens, the features that pushed hardest
toward the tag it got (their averaged weights for that tag) and the
transition from the previous tag; a tag that `short_form_labels`,
`acronym_labels` or `person_labels` gave, not the tagger, says which. For each term-list match that did not
become an entity: how much better the chosen tags scored than the best
sequence that takes the match.
"""

import numpy
from spacy.tokens import Doc

from ..core.decode import viterbi
from ..core.features import batch_layout, lowercase_docs
from ..core.perceptron import DROPPED
from ..core.templates import (
    ABBREVIATION_FAMILY,
    CASE_ATTRIBUTES,
    COLUMNS,
    DOCUMENT_FAMILY,
    HISTORY_FAMILY,
    LOWERCASE_DOCS_FAMILY,
    MEMORY_FAMILY,
    SENTENCES_FAMILY,
    attribute_values,
    template_parts,
    word_case_of,
)
from .component import BioNER
from .document import ABBREVIATION_FEATURES, ABBREVIATION_HISTORY_FEATURES, DOCUMENT_FEATURES, HISTORY_FEATURES
from .featurizer import features as features_of
from .featurizer import history, word_clusters
from .trellis import trellis_of


def feature_names(ner: BioNER, doc: Doc) -> list[list[str]]:
    """A readable name for each feature column of each token, in `featurizer.features` order."""
    families = ner.settings.features
    sentence = batch_layout([doc], sentence_ends=SENTENCES_FAMILY in families)[1]  # where windows stop
    clusters = word_clusters(families, ner.clusters, ner.vocab)
    word_case = word_case_of(families)
    attributes = [attribute_values(token.text, clusters, word_case) for token in doc]
    if LOWERCASE_DOCS_FAMILY in families and lowercase_docs([doc])[0]:  # the case attributes' own values
        for values in attributes:
            for name in CASE_ATTRIBUTES:
                values[COLUMNS[name]] = f"lowercase:{values[COLUMNS[name]]}"
    # A word's window reads past whitespace tokens, as its features do (batch.over_words).
    words = [token.i for token in doc if not token.is_space]
    word_index = {i: w for w, i in enumerate(words)}
    names = []
    for i, _token in enumerate(doc):
        row = []
        for name, parts in template_parts(ner.settings.features):
            values = []
            for attribute, offset in parts:
                if i in word_index:
                    w = word_index[i] + offset
                    at = words[w] if 0 <= w < len(words) else -1
                else:
                    at = i + offset
                inside = 0 <= at < len(doc) and sentence[at] == sentence[i]
                values.append(attributes[at][COLUMNS[attribute]] if inside else "<edge>")
            row.append(f"{name}={'|'.join(values)}" if parts else name)
        if DOCUMENT_FAMILY in ner.settings.features:
            row.extend(DOCUMENT_FEATURES)
        if ner.settings.gazetteer.mode != "ents":
            row.extend(f"gazetteer[{label}]" for label in ner.gazetteer.labels)
        if MEMORY_FAMILY in ner.settings.features:
            row.extend(f"memory[{label}]" for label in ner.labels)
        if ABBREVIATION_FAMILY in ner.settings.features:
            row.extend(ABBREVIATION_FEATURES)
        if HISTORY_FAMILY in ner.settings.features:
            row.extend(
                HISTORY_FEATURES + ABBREVIATION_HISTORY_FEATURES * (ABBREVIATION_FAMILY in ner.settings.features)
            )
        names.append(row)
    return names


def explain(ner: BioNER, doc: Doc, top: int = 5) -> dict[str, list]:
    """The entities of an untagged doc with the features behind them, and the matches not taken.

    RETURNS (Dict[str, list]): "entities": per entity its text, label and
        tokens (tag, top features with weights, transition); "matches_not_taken":
        per such match its text, label, KB id and the score it lost by.
    """
    decoded = ner.decode([doc])
    layout, tags = decoded.layout, decoded.tags
    features = features_of(ner, layout, decoded.matches, packed=False)
    n_history = ner.featurizer.n_history
    if n_history:
        features[:, -n_history:] = history(ner, layout, decoded.first_pass)
    transition = ner.model.transitions(averaged=True)
    names = feature_names(ner, doc)
    if len(names) and len(names[0]) != features.shape[1]:
        raise AssertionError(f"{len(names[0])} feature names for {features.shape[1]} columns")
    entities = []
    # Tags are decoded over the words: a whitespace token's own scores and transitions count for nothing.
    words = [i for i in range(len(doc)) if not doc[i].is_space]
    previous_word = dict(zip(words[1:], words))
    for start, end, label in ner.scheme.to_spans(tags):
        tokens = []
        for i in range(start, end):
            if doc[i].is_space:
                continue
            tag = int(tags[i])
            kept = [(j, f) for j, f in enumerate(features[i].tolist()) if f != DROPPED]
            found = ner.model.weights_of([f for _, f in kept], tag)
            weights = [(names[i][j], float(weight)) for (j, _), weight in zip(kept, found)]
            bias = ner.settings.confidence.entity_bias
            if bias and tag:
                weights.append(("entity_bias", bias))
            weights = sorted((w for w in weights if w[1]), key=lambda w: -w[1])[:top]
            previous = int(tags[previous_word[i]]) if i in previous_word else len(ner.scheme.tags)
            token = {
                "text": doc[i].text,
                "tag": ner.scheme.tags[tag],
                "features": weights,
                "transition": [
                    ner.scheme.tags[previous] if i in previous_word else "<start>",
                    float(transition[previous, tag]),
                ],
            }
            if i in decoded.retagged:  # not the tagger's choice: a rule after decoding gave this tag
                token["rule"] = decoded.retagged[i]
            tokens.append(token)
        entities.append(
            {"text": doc[start:end].text, "label": ner.labels[label], "start": start, "end": end, "tokens": tokens}
        )
    return {"entities": entities, "matches_not_taken": _matches_not_taken(ner, doc, decoded)}


def _path_score(scores: numpy.ndarray, transitions: numpy.ndarray, tags: numpy.ndarray) -> float:
    previous, total = len(transitions) - 1, 0.0
    for i, tag in enumerate(tags.tolist()):
        total += float(transitions[previous, tag]) + float(scores[i, tag])
        previous = tag
    return total


def _matches_not_taken(ner: BioNER, doc: Doc, decoded) -> list[dict]:
    taken = {(ent_start, ent_end, ner.labels[label]) for ent_start, ent_end, label in ner.scheme.to_spans(decoded.tags)}
    transitions = ner.model.transitions(averaged=True)
    best = _path_score(decoded.scores, transitions, decoded.trellis.rows(decoded.best_path))
    found = []
    for match in numpy.unique(decoded.matches[0][:, :3], axis=0).tolist() if len(decoded.matches[0]) else []:
        start, end, label = match
        span = ner.gazetteer.span(doc, (start, end, label, 0))
        if (start, end, span.label_) in taken:
            continue
        entry = {"text": span.text, "label": span.label_}
        if span.label_ not in ner.labels:
            entry["reason"] = f"label {span.label_!r} is not among the tagger's labels {list(ner.labels)}"
        else:
            trellis = trellis_of(ner, decoded.layout, [decoded.presets[0] + [span]])
            try:
                forced = viterbi(decoded.scores, transitions, trellis.allowed, ner.legal)
            except ValueError:
                entry["reason"] = "no tag sequence can take it (it crosses a sentence start or a preset entity)"
            else:
                entry["score_lost"] = best - _path_score(decoded.scores, transitions, forced)
                entry["reason"] = f"the best tags that take it score {entry['score_lost']:.2f} lower"
        found.append(entry)
    return found
