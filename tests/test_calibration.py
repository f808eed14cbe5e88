import numpy
import pytest
import spacy
from conftest import TRAIN_DATA, make_examples, train_nlp
from spacy.tokens import DocBin
from typer.testing import CliRunner

from spacy_bioner.cli import app
from spacy_bioner.ner.calibration import expected_calibration_error, fit_temperature, outcomes, reliability


def test_expected_calibration_error():
    probabilities = numpy.array([0.95, 0.95, 0.15, 0.15])
    assert expected_calibration_error(probabilities, numpy.array([True, True, False, False])) == pytest.approx(0.1)
    assert expected_calibration_error(probabilities, numpy.array([True, False, True, False])) == pytest.approx(0.4)
    assert reliability(probabilities, numpy.array([True, True, False, False])) == [(0.15, 0.0, 2), (0.95, 1.0, 2)]


def test_fitted_temperature_lowers_the_log_loss_and_calibrate_saves_it(tmp_path):
    nlp = train_nlp(epochs=3)
    examples = make_examples(nlp)
    pairs = [(eg.reference, nlp.make_doc(eg.reference.text)) for eg in examples]
    ner = nlp.get_pipe("bioner")
    temperature = fit_temperature(ner, pairs)
    (at_one, at_fit), correct = outcomes(ner, pairs, [1.0, temperature])
    assert len(correct) > 0

    def nll(p):
        return -numpy.mean(
            numpy.where(correct, numpy.log(numpy.clip(p, 1e-12, 1)), numpy.log(numpy.clip(1 - p, 1e-12, 1)))
        )  # noqa: E731

    assert nll(at_fit) <= nll(at_one) + 1e-9
    nlp.to_disk(tmp_path / "model")
    DocBin(docs=[eg.reference for eg in examples]).to_disk(tmp_path / "dev.spacy")
    result = CliRunner().invoke(app, ["calibrate", str(tmp_path / "model"), str(tmp_path / "dev.spacy")])
    assert result.exit_code == 0, result.output
    loaded = spacy.load(tmp_path / "model")
    assert loaded.get_pipe("bioner").settings.confidence.temperature == pytest.approx(temperature)
    assert "bioner" in loaded(TRAIN_DATA[0][0]).spans
