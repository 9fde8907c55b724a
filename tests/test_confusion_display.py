"""NoisyConfusionMatrixDisplay: values, SD annotations, labels, layout, errors."""

from __future__ import annotations

import pickle
import sys

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from sklearn_noisy.metrics import (
    NoisyConfusionMatrixDisplay,
    expected_confusion_matrix,
)

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def _inside(figure):
    figure.canvas.draw()
    tight = figure.get_tightbbox(figure.canvas.get_renderer())
    tight = tight.transformed(figure.dpi_scale_trans)
    box = figure.bbox
    return (
        tight.x0 >= box.x0 - 0.5
        and tight.y0 >= box.y0 - 0.5
        and tight.x1 <= box.x1 + 0.5
        and tight.y1 <= box.y1 + 0.5
    )


def test_values_and_annotations_are_the_expected_matrix():
    y = [0, 1, 2, 1, 0, 2, 2, 1, 0, 0]
    y_pred = [0, 1, 1, 1, 0, 2, 0, 1, 0, 2]
    display = NoisyConfusionMatrixDisplay.from_predictions(y, y_pred, q=0.2)
    matrix = expected_confusion_matrix(y, y_pred, q=0.2)  # both the default
    np.testing.assert_array_equal(display.im_.get_array(), matrix.expected)
    for i in range(3):
        for j in range(3):
            value, sd = matrix.expected[i, j], matrix.std[i, j]
            decimals = max(0, 1 - int(np.floor(np.log10(sd))))
            assert display.text_[i, j].get_text() == (
                f"{value:.{decimals}f}\n± {sd:.{decimals}f}"
            )
    assert display.ax_.get_xlabel() == "Predicted label"
    assert display.ax_.get_ylabel() == "True class (de-noised)"
    assert [t.get_text() for t in display.ax_.get_yticklabels()] == ["0", "1", "2"]
    assert _inside(display.figure_)
    plt.close(display.figure_)


def test_zero_noise_shows_integer_counts_and_the_truth_rows():
    display = NoisyConfusionMatrixDisplay.from_predictions(
        ["a", "b", "b"], ["a", "b", "a"], q=0.0, estimand="truth"
    )
    assert display.text_[1, 0].get_text() == "1"
    assert display.ax_.get_ylabel() == "True class (de-noised)"
    assert "truth" in display.ax_.get_title()
    plt.close(display.figure_)
    display = NoisyConfusionMatrixDisplay.from_predictions(
        [0, 1, 1],
        [0, 1, 0],
        q=0.1,
        values_format=".3f",
        include_values=True,
        estimand="forward",
    )
    assert display.text_[0, 0].get_text() == "1.000\n± 0.424"
    plt.close(display.figure_)
    display = NoisyConfusionMatrixDisplay.from_predictions(
        [0, 1, 1], [0, 1, 0], q=0.1, include_values=False, colorbar=False
    )
    assert display.text_ is None
    plt.close(display.figure_)


def test_from_estimator_keeps_the_classes_a_fold_lacks():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(90, 2))
    y = np.digitize(X[:, 0], [-0.5, 0.5])
    model = LogisticRegression().fit(X, y)
    test = y < 2  # the test data lack class 2
    figure, ax = plt.subplots()
    display = NoisyConfusionMatrixDisplay.from_estimator(
        model, X[test], y[test], q=0.1, ax=ax, display_labels=["low", "mid", "high"]
    )
    assert display.confusion_matrix.expected.shape == (3, 3)
    assert display.ax_ is ax and display.figure_ is figure
    assert [t.get_text() for t in ax.get_xticklabels()] == ["low", "mid", "high"]
    plt.close(figure)


def test_errors_and_pickling(monkeypatch):
    with pytest.raises(TypeError, match="NoisyConfusionMatrix"):
        NoisyConfusionMatrixDisplay(np.eye(2))
    with pytest.raises(TypeError, match="fitted classifier"):
        NoisyConfusionMatrixDisplay.from_estimator(object(), [[0]], [0], q=0.1)
    matrix = expected_confusion_matrix([0, 1, 1], [0, 1, 0], q=0.1)
    display = NoisyConfusionMatrixDisplay(matrix, display_labels=["no", "yes"])
    copy = pickle.loads(pickle.dumps(display))
    np.testing.assert_array_equal(copy.confusion_matrix.expected, matrix.expected)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match=r"sklearn-noisy\[plot\]"):
        display.plot()


@pytest.mark.parametrize("normalize", ["true", "pred", "all"])
def test_normalised_matrices_as_scikit_learns_display(normalize):
    from sklearn.metrics import ConfusionMatrixDisplay

    y = [0, 1, 2, 1, 0, 2, 2, 1, 0, 0]
    y_pred = [0, 1, 1, 1, 0, 2, 0, 1, 0, 2]
    display = NoisyConfusionMatrixDisplay.from_predictions(
        y, y_pred, q=0.2, normalize=normalize
    )
    matrix = expected_confusion_matrix(y, y_pred, q=0.2, normalize=normalize)
    np.testing.assert_array_equal(display.im_.get_array(), matrix.expected)
    plt.close(display.figure_)
    # without noise: scikit-learn's normalised matrix
    ours = NoisyConfusionMatrixDisplay.from_predictions(
        y, y_pred, q=0.0, normalize=normalize
    )
    theirs = ConfusionMatrixDisplay.from_predictions(y, y_pred, normalize=normalize)
    np.testing.assert_allclose(
        ours.im_.get_array(), theirs.confusion_matrix, rtol=0, atol=1e-15
    )
    plt.close("all")
