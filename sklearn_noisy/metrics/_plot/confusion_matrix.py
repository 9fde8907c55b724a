"""The expected confusion matrix as a colour map: NoisyConfusionMatrixDisplay."""

from __future__ import annotations

import math
from itertools import product
from typing import Any

import numpy as np

from ...utils._plotting import import_pyplot
from .._classification import NoisyConfusionMatrix, expected_confusion_matrix

__all__ = ["NoisyConfusionMatrixDisplay"]

#: What the rows of the matrix are, per estimand.
_ROW_LABELS = {
    "forward": "Observed label (flipped around y_true)",
    "remeasurement": "Observed label",
    "truth": "True class (de-noised)",
}


def _sd_decimals(sd: float) -> int:
    """Decimals that show ``sd`` to two significant figures (at most 4)."""
    if not math.isfinite(sd) or sd <= 0.0:
        return 0
    return int(min(4, max(0, 1 - math.floor(math.log10(sd)))))


def _cell_text(value: float, sd: float, values_format: str | None) -> str:
    """``"12.3\\n± 1.4"``: the value rounded to the precision its SD supports."""
    if values_format is not None:
        return f"{value:{values_format}}\n± {sd:{values_format}}"
    if sd == 0.0:
        as_int = f"{value:.0f}"
        return as_int if float(as_int) == value else f"{value:.3g}"
    decimals = _sd_decimals(sd)
    return f"{value:.{decimals}f}\n± {sd:.{decimals}f}"


class NoisyConfusionMatrixDisplay:
    """Expected confusion matrix with the label-noise SD of every cell.

    Built like :class:`sklearn.metrics.ConfusionMatrixDisplay`: prefer
    :meth:`from_predictions` or :meth:`from_estimator`. Every cell shows its
    expected count (or rate) and its SD, rounded to the precision of the SD.

    Parameters
    ----------
    confusion_matrix : NoisyConfusionMatrix
        The result of :func:`~sklearn_noisy.metrics.expected_confusion_matrix`.
    display_labels : array-like of shape (n_classes,), default=None
        Tick labels; the matrix's ``labels`` by default.

    Attributes
    ----------
    im_ : matplotlib AxesImage
        The colour map.
    text_ : ndarray of shape (n_classes, n_classes) of matplotlib Text, or None
        The cell annotations; None with ``include_values=False``.
    ax_, figure_ : matplotlib Axes and Figure
        Where the matrix is drawn.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from sklearn_noisy.metrics import NoisyConfusionMatrixDisplay
    >>> display = NoisyConfusionMatrixDisplay.from_predictions(
    ...     [0, 1, 1, 0, 1, 0], [0, 1, 0, 0, 1, 1], q=0.1, estimand="forward")
    >>> display.text_[0, 0].get_text()
    '1.90\\n± 0.52'
    """

    def __init__(
        self, confusion_matrix: NoisyConfusionMatrix, *, display_labels: Any = None
    ) -> None:
        if not isinstance(confusion_matrix, NoisyConfusionMatrix):
            raise TypeError(
                "confusion_matrix must be a NoisyConfusionMatrix (the result of "
                f"expected_confusion_matrix); got {type(confusion_matrix).__name__}."
            )
        self.confusion_matrix = confusion_matrix
        self.display_labels = display_labels

    def plot(
        self,
        *,
        include_values: bool = True,
        cmap: Any = "viridis",
        xticks_rotation: Any = "horizontal",
        values_format: str | None = None,
        ax: Any = None,
        colorbar: bool = True,
        im_kw: dict | None = None,
        text_kw: dict | None = None,
    ) -> NoisyConfusionMatrixDisplay:
        """Draw the matrix.

        Parameters
        ----------
        include_values, cmap, xticks_rotation, ax, colorbar, im_kw, text_kw
            As in :meth:`sklearn.metrics.ConfusionMatrixDisplay.plot`; the
            values are annotated with their SD.
        values_format : str, default=None
            Format of the value and the SD; by default two significant figures
            of the SD.

        Returns
        -------
        display : NoisyConfusionMatrixDisplay
        """
        plt = import_pyplot("NoisyConfusionMatrixDisplay")
        if ax is None:
            _, ax = plt.subplots(layout="constrained")
        matrix = self.confusion_matrix
        values = np.asarray(matrix.expected, dtype=np.float64)
        sds = np.asarray(matrix.std, dtype=np.float64)
        n_classes = values.shape[0]
        self.im_ = ax.imshow(
            values, **{"interpolation": "nearest", "cmap": cmap, **(im_kw or {})}
        )
        self.text_ = None
        if include_values:
            self.text_ = np.empty(values.shape, dtype=object)
            low, high = self.im_.cmap(0.0), self.im_.cmap(1.0)
            threshold = (np.nanmax(values) + np.nanmin(values)) / 2.0
            text_kw = {"ha": "center", "va": "center", **(text_kw or {})}
            for i, j in product(range(n_classes), range(n_classes)):
                colour = high if values[i, j] < threshold else low
                text = _cell_text(values[i, j], sds[i, j], values_format)
                self.text_[i, j] = ax.text(j, i, text, **{"color": colour, **text_kw})
        labels = matrix.labels if self.display_labels is None else self.display_labels
        if colorbar:
            ax.figure.colorbar(self.im_, ax=ax)
        ax.set(
            xticks=np.arange(n_classes),
            yticks=np.arange(n_classes),
            xticklabels=labels,
            yticklabels=labels,
            xlabel="Predicted label",
            ylabel=_ROW_LABELS[matrix.estimand],
            title=f"Confusion matrix, {matrix.estimand}: value ± label-noise SD",
        )
        ax.title.set_fontsize("medium")
        ax.set_ylim((n_classes - 0.5, -0.5))
        plt.setp(ax.get_xticklabels(), rotation=xticks_rotation)
        self.ax_, self.figure_ = ax, ax.figure
        return self

    @classmethod
    def from_predictions(
        cls,
        y_true: Any,
        y_pred: Any,
        *,
        q: Any = None,
        transition_matrix: Any = None,
        labels: Any = None,
        sample_weight: Any = None,
        normalize: str | None = None,
        estimand: str = "auto",
        display_labels: Any = None,
        **plot_kw: Any,
    ) -> NoisyConfusionMatrixDisplay:
        """Compute the expected confusion matrix of predictions and plot it.

        Parameters
        ----------
        y_true, y_pred : array-like of shape (n_samples,)
            Labels and predictions.
        q, transition_matrix, labels, sample_weight, normalize, estimand
            As in :func:`~sklearn_noisy.metrics.expected_confusion_matrix`.
        display_labels : array-like, default=None
            Tick labels.
        **plot_kw
            Keywords of :meth:`plot`.

        Returns
        -------
        display : NoisyConfusionMatrixDisplay
        """
        matrix = expected_confusion_matrix(
            y_true,
            y_pred,
            q=q,
            transition_matrix=transition_matrix,
            labels=labels,
            sample_weight=sample_weight,
            normalize=normalize,
            estimand=estimand,
        )
        return cls(matrix, display_labels=display_labels).plot(**plot_kw)

    @classmethod
    def from_estimator(
        cls, estimator: Any, X: Any, y: Any, *, labels: Any = None, **kwargs: Any
    ) -> NoisyConfusionMatrixDisplay:
        """Predict with a fitted classifier and plot its expected confusion matrix.

        Parameters
        ----------
        estimator : fitted classifier
            Its ``predict`` gives the predictions.
        X, y : array-like
            Input data and labels.
        labels : array-like, default=None
            The classes; ``estimator.classes_`` by default.
        **kwargs
            Keywords of :meth:`from_predictions` and :meth:`plot`.

        Returns
        -------
        display : NoisyConfusionMatrixDisplay
        """
        if not hasattr(estimator, "predict"):
            raise TypeError(
                "estimator must be a fitted classifier; got "
                f"{type(estimator).__name__}."
            )
        if labels is None:
            labels = getattr(estimator, "classes_", None)
        y_pred = estimator.predict(X)
        return cls.from_predictions(y, y_pred, labels=labels, **kwargs)
