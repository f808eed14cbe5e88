"""Gold tag ids of a training Example.

spaCy's `Example.get_aligned_ner` aligns the two tokenizations character by
character, in Python, token by token: in training it cost more than the
perceptron itself. Where the predicted doc has the reference's tokens (as in
corpora converted from CoNLL/IOB files), the alignment is the identity and
the tags are read from the reference's arrays instead, with the same result.
"""
import numpy
from spacy.attrs import ENT_IOB, IS_SPACE, ORTH
from spacy.training import Example

from .schemes import TagScheme

_OUTSIDE = 2  # ENT_IOB: 0 missing, 1 inside, 2 outside, 3 begin


def gold_tags(example: Example, scheme: TagScheme) -> numpy.ndarray:
    """Tag ids of the predicted doc's tokens; -1 where the gold is missing.

    RETURNS (int32[n]): One tag id per predicted token.
    """
    predicted, reference = example.predicted, example.reference
    if len(predicted) != len(reference) or not numpy.array_equal(
        predicted.to_array(ORTH), reference.to_array(ORTH)
    ):
        return scheme.from_biluo(example.get_aligned_ner())
    if not reference.has_annotation("ENT_IOB"):
        return numpy.full(len(predicted), -1, dtype=numpy.int32)
    label_ids = {label: i for i, label in enumerate(scheme.labels)}
    spans = []
    for ent in reference.ents:
        if ent.label_ not in label_ids:
            raise ValueError(
                f"Gold entity label {ent.label_!r} is not among the component's labels "
                f"{scheme.labels}: add it with add_label or pass it to initialize."
            )
        spans.append((ent.start, ent.end, label_ids[ent.label_]))
    tags = scheme.from_spans(spans, len(predicted))
    in_entity = numpy.zeros(len(predicted), dtype=bool)
    for start, end, _ in spans:
        in_entity[start:end] = True
    iob_space = reference.to_array([ENT_IOB, IS_SPACE])
    known = in_entity | (iob_space[:, 0] == _OUTSIDE) | (iob_space[:, 1] == 1)
    tags[~known] = -1
    return tags
