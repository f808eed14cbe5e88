"""Self-training: the trained model's confident entities added to the distant labels, for the next round.

distant labels + the model's entities -> confident ones (probability >= threshold) where no list
entity is -> entities; the model's unconfident ones -> missing; the rest as the lists labelled it.
"""

from collections import Counter
from collections.abc import Iterable, Iterator

import numpy
from spacy.attrs import ENT_IOB
from spacy.language import Language
from spacy.tokens import Doc, Span

from ..ner.component import BioNER
from .labeller import set_labels

_MISSING = 0  # ENT_IOB: 0 missing


def relabel(nlp: Language, docs: Iterable[Doc], threshold: float, counts: Counter, veto: bool = True) -> Iterator[Doc]:
    """Each distantly labelled doc with the model's entities of probability >= threshold added where
    the lists found none; its entities below the threshold make their tokens missing. With veto, a list
    entity the model finds no entity in becomes missing: a list entry the text does not bear out."""
    component = nlp.get_pipe("bioner") if nlp.has_pipe("bioner") else None
    if not isinstance(component, BioNER):
        raise ValueError(f"Self-training needs a pipeline with a bioner component; this one has {nlp.pipe_names}.")
    ner = component.with_settings(confidence={"probabilities": True})
    docs = list(docs)
    texts = (Doc(nlp.vocab, words=[t.text for t in doc], spaces=[bool(t.whitespace_) for t in doc]) for doc in docs)
    for labelled, predicted in zip(docs, ner.pipe(texts)):
        listed = labelled.to_array(ENT_IOB)
        taken = numpy.zeros(len(labelled), dtype=bool)
        for ent in labelled.ents:
            taken[ent.start : ent.end] = True
        missing = listed == _MISSING
        entities = list(labelled.ents)
        if veto:
            found = numpy.zeros(len(labelled), dtype=bool)
            for ent in predicted.ents:
                found[ent.start : ent.end] = True
            vetoed = [ent for ent in entities if not found[ent.start : ent.end].any()]
            for ent in vetoed:
                missing[ent.start : ent.end] = True
                taken[ent.start : ent.end] = False
            entities = [ent for ent in entities if found[ent.start : ent.end].any()]
            counts["vetoed"] += len(vetoed)
        for ent in predicted.ents:
            if taken[ent.start : ent.end].any():
                continue
            if (ent._.bioner_confidence or 0.0) >= threshold:
                entities.append(Span(labelled, ent.start, ent.end, label=ent.label_))
                taken[ent.start : ent.end] = True
                counts["added"] += 1
            else:
                missing[ent.start : ent.end] = True
                counts["unsure"] += 1
        set_labels(labelled, entities, missing)
        yield labelled
