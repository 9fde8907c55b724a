"""The ROC curve and its band when binary labels flip: NoisyRocCurveDisplay."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from sklearn.metrics import auc, roc_curve
from sklearn.utils.multiclass import type_of_target

from ..._noisy_score import NoisyScore
from ...utils._plotting import import_pyplot
from ...utils._sklearn_compat import (
    _check_pos_label_consistency,
    _get_response_values_binary,
)
from ...utils._validation import check_generator, check_level, check_positive_int
from .._roc_auc import _check_inputs, expected_roc_auc_score, noisy_roc_curve
from .confusion_matrix import _sd_decimals

__all__ = ["NoisyRocCurveDisplay"]


def _binary_classes(y_true: Any, pos_label: Any) -> tuple[Any, list]:
    """scikit-learn's positive label and the classes ``[negative, positive]``."""
    kind = type_of_target(y_true, input_name="y_true")
    if kind != "binary":
        raise ValueError(
            f"y_true must hold binary labels (the target y is not binary); got a "
            f"{kind!r} target."
        )
    pos_label = _check_pos_label_consistency(pos_label, y_true)
    classes = np.unique(np.asarray(y_true)).tolist()
    if len(classes) != 2:
        raise ValueError(
            f"y_true must hold both classes; got only {classes}: the ROC curve of "
            "the labels as given is undefined with one class."
        )
    if pos_label not in classes:
        raise ValueError(f"pos_label={pos_label!r} is not a class of y_true {classes}.")
    negative = classes[0] if classes[1] == pos_label else classes[1]
    return pos_label, [negative, pos_label]


def _auc_text(value: float, sd: float | None = None) -> str:
    """The AUC rounded to two significant figures of its SD (2 decimals at SD 0)."""
    decimals = 2 if sd is None else max(2, _sd_decimals(sd))
    text = f"{value:.{decimals}f}"
    return text if sd is None else f"{text} ± {sd:.{decimals}f}"


class NoisyRocCurveDisplay:
    """ROC curve of the labels as given, and its mean and band when they flip.

    Built like :class:`sklearn.metrics.RocCurveDisplay`: prefer
    :meth:`from_predictions` or :meth:`from_estimator`. The scores are held
    fixed; the mean curve averages seeded redraws of the labels vertically.
    Read more in the :ref:`User Guide <roc_curve_display>`.

    Parameters
    ----------
    fpr, tpr, roc_auc : ndarray, ndarray, float
        The nominal ROC curve (:func:`sklearn.metrics.roc_curve`) and its area.
    score : NoisyScore
        The AUC under the flips (:func:`~sklearn_noisy.metrics.expected_roc_auc_score`).
    fpr_grid, tpr_expected, tpr_std, tpr_low, tpr_high : ndarray of shape (n_grid,)
        A grid of false positive rates, the mean true positive rate under the
        flips at each, its SD and the pointwise band.
    method : {"monte_carlo", "exact"}
        How the mean curve and the band were computed.
    n_draws : int
        Number of redraws of the labels.
    confidence_level : float, default=0.95
        Level of the pointwise band.
    name : str, default=None
        Name of the classifier in the legend.
    pos_label : int, float, bool or str, default=None
        The positive class, shown in the axis labels.

    Attributes
    ----------
    line_, expected_line_, band_, chance_level_ : matplotlib artists
        The nominal curve, the mean curve, the band and the chance level line
        (None unless drawn).
    ax_, figure_ : matplotlib Axes and Figure
        Where they are drawn.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from sklearn_noisy.metrics import NoisyRocCurveDisplay
    >>> y = [0, 0, 1, 1, 0, 1, 0, 1, 1, 0]
    >>> score = [0.1, 0.4, 0.35, 0.8, 0.2, 0.7, 0.3, 0.6, 0.9, 0.5]
    >>> display = NoisyRocCurveDisplay.from_predictions(y, score, q=0.1)
    >>> display.roc_auc, display.method, display.n_draws
    (0.92, 'monte_carlo', 1000)
    """

    def __init__(
        self,
        *,
        fpr: Any,
        tpr: Any,
        roc_auc: float,
        score: NoisyScore,
        fpr_grid: Any,
        tpr_expected: Any,
        tpr_std: Any,
        tpr_low: Any,
        tpr_high: Any,
        method: str,
        n_draws: int,
        confidence_level: float = 0.95,
        name: str | None = None,
        pos_label: Any = None,
    ) -> None:
        if not isinstance(score, NoisyScore):
            raise TypeError(
                "score must be a NoisyScore (the result of expected_roc_auc_score); "
                f"got {type(score).__name__}."
            )
        arrays = {"fpr": fpr, "tpr": tpr, "fpr_grid": fpr_grid}
        arrays.update(tpr_expected=tpr_expected, tpr_std=tpr_std)
        arrays.update(tpr_low=tpr_low, tpr_high=tpr_high)
        for key, value in arrays.items():
            setattr(self, key, np.asarray(value, dtype=np.float64))
        self.roc_auc = float(roc_auc)
        self.score = score
        self.method = method
        self.n_draws = int(n_draws)
        self.confidence_level = check_level(confidence_level)
        self.name = name
        self.pos_label = pos_label

    @property
    def tpr_standard_error(self) -> np.ndarray:
        """Monte Carlo standard error of ``tpr_expected`` (0 when exact)."""
        if self.method == "exact":
            return np.zeros_like(self.tpr_expected)
        return self.tpr_std / math.sqrt(self.n_draws)

    def plot(
        self,
        ax: Any = None,
        *,
        name: str | None = None,
        curve_kwargs: dict | None = None,
        plot_chance_level: bool = False,
        chance_level_kw: dict | None = None,
        legend: bool = True,
    ) -> NoisyRocCurveDisplay:
        """Draw the nominal curve, the mean curve under the flips and the band.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure (legend below it) by default.
        name : str, default=None
            Name of the classifier in the legend; ``self.name`` by default.
        curve_kwargs, chance_level_kw : dict, default=None
            Keywords of ``plot`` for the nominal curve and the chance level.
        plot_chance_level : bool, default=False
            Draw the chance level (the diagonal).
        legend : bool, default=True
            Draw the legend.

        Returns
        -------
        display : NoisyRocCurveDisplay
        """
        for key, value in (
            ("curve_kwargs", curve_kwargs),
            ("chance_level_kw", chance_level_kw),
        ):
            if value is not None and not isinstance(value, dict):
                raise TypeError(f"{key} must be a dict or None; got {value!r}.")
        plt = import_pyplot("NoisyRocCurveDisplay")
        created = ax is None
        if created:
            _, ax = plt.subplots(layout="constrained")
        self.ax_, self.figure_ = ax, ax.figure
        name = self.name if name is None else name
        level = f"{self.confidence_level * 100:.4g} %"
        nominal = f"AUC = {_auc_text(self.roc_auc)}"
        label = f"labels as given ({nominal})"
        if name is not None:
            label = f"{name} (labels as given, {nominal})"
        # zorder: the nominal curve above the mean curve
        options = {"linewidth": 1.0, "zorder": 2.5, "label": label}
        (self.line_,) = ax.plot(
            self.fpr, self.tpr, **{**options, **(curve_kwargs or {})}
        )
        colour = self.line_.get_color()  # the next of the axes' cycle by default
        expected = _auc_text(self.score.expected, self.score.std)
        (self.expected_line_,) = ax.plot(
            self.fpr_grid,
            self.tpr_expected,
            color=colour,
            linestyle="--",
            linewidth=1.5,
            label=f"under flips: AUC = {expected} (label noise)",
        )
        self.band_ = ax.fill_between(
            self.fpr_grid,
            self.tpr_low,
            self.tpr_high,
            color=colour,
            alpha=0.2,
            linewidth=0.0,
            label=f"{level} pointwise band under flips",
        )
        self.chance_level_ = None
        if plot_chance_level:
            chance = {"color": "k", "linestyle": "--", "linewidth": 1.0}
            chance["label"] = "Chance level (AUC = 0.5)"
            (self.chance_level_,) = ax.plot(
                (0, 1), (0, 1), **{**chance, **(chance_level_kw or {})}
            )
        positive = (
            "" if self.pos_label is None else f" (Positive label: {self.pos_label})"
        )
        ax.set(
            xlabel=f"False Positive Rate{positive}",
            ylabel=f"True Positive Rate{positive}",
            xlim=(-0.01, 1.01),
            ylim=(-0.01, 1.01),
            aspect="equal",
        )
        if legend:
            handles, labels = ax.get_legend_handles_labels()
            # outside the axes, the constrained layout does not reliably make
            # room beside given axes of fixed aspect
            where = self.figure_ if created else ax
            loc = "outside lower center" if created else "lower right"
            where.legend(handles, labels, loc=loc, fontsize="small")
        return self

    @classmethod
    def from_predictions(
        cls,
        y_true: Any,
        y_score: Any,
        *,
        q: Any = None,
        transition_matrix: Any = None,
        pos_label: Any = None,
        confidence_level: float = 0.95,
        n_draws: int = 1000,
        n_grid: int = 201,
        random_state: Any = 0,
        name: str | None = None,
        ax: Any = None,
        **plot_kw: Any,
    ) -> NoisyRocCurveDisplay:
        """Compute the curves of fixed scores under label flips and plot them.

        Parameters
        ----------
        y_true : array-like of shape (n_samples,)
            The labels as given (two classes), around which they flip.
        y_score : array-like of shape (n_samples,)
            Scores of the positive class, held fixed.
        q, transition_matrix : optional
            The label flips (exactly one), as in
            :func:`~sklearn_noisy.metrics.expected_roc_auc_score`; the matrix
            lists the negative class first.
        pos_label : int, float, bool or str, default=None
            The positive class, as in :func:`sklearn.metrics.roc_curve`.
        confidence_level : float, default=0.95
            Level of the pointwise band, in (0, 1).
        n_draws : int, default=1000
            Redraws of the labels for the mean curve and the band.
        n_grid : int, default=201
            Number of false positive rates ``j / (n_grid - 1)`` of the grid.
        random_state : None, int, Generator, SeedSequence or RandomState, default=0
            Seed of the redraws.
        name : str, default=None
            Name of the classifier in the legend; ``"Classifier"`` by default.
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure by default.
        **plot_kw
            Keywords of :meth:`plot`.

        Returns
        -------
        display : NoisyRocCurveDisplay
        """
        import_pyplot("NoisyRocCurveDisplay")
        level = check_level(confidence_level)
        n_draws = check_positive_int(n_draws, name="n_draws", minimum=2)
        n_grid = check_positive_int(n_grid, name="n_grid", minimum=2)
        rng = check_generator(random_state)
        pos_label, classes = _binary_classes(y_true, pos_label)
        score = expected_roc_auc_score(  # of the curve's redrawn labels
            y_true,
            y_score,
            q=q,
            transition_matrix=transition_matrix,
            labels=classes,
            estimand="forward",
            test_set_sampling=False,
        )
        positive, scores, _ = _check_inputs(y_true, y_score, classes)
        fpr, tpr, _ = roc_curve(positive, scores)
        curve = noisy_roc_curve(
            positive, scores, q, transition_matrix, n_draws, n_grid, level, rng
        )
        display = cls(
            fpr=fpr,
            tpr=tpr,
            roc_auc=auc(fpr, tpr),
            score=score,
            n_draws=n_draws,
            confidence_level=level,
            name="Classifier" if name is None else name,
            pos_label=pos_label,
            **curve._asdict(),
        )
        return display.plot(ax=ax, **plot_kw)

    @classmethod
    def from_estimator(
        cls,
        estimator: Any,
        X: Any,
        y: Any,
        *,
        q: Any = None,
        transition_matrix: Any = None,
        response_method: str = "auto",
        pos_label: Any = None,
        name: str | None = None,
        **kwargs: Any,
    ) -> NoisyRocCurveDisplay:
        """Score with a fitted binary classifier and plot its curves under flips.

        Parameters
        ----------
        estimator : fitted classifier
            A binary classifier (or a pipeline ending in one).
        X : array-like of shape (n_samples, n_features)
            Input data.
        y : array-like of shape (n_samples,)
            The labels as given, around which they flip.
        q, transition_matrix : optional
            The label flips (exactly one), as in :meth:`from_predictions`.
        response_method, pos_label
            As in :meth:`sklearn.metrics.RocCurveDisplay.from_estimator`.
        name : str, default=None
            Name in the legend; the estimator's class name by default.
        **kwargs
            Keywords of :meth:`from_predictions` and :meth:`plot`.

        Returns
        -------
        display : NoisyRocCurveDisplay
        """
        import_pyplot("NoisyRocCurveDisplay")
        y_score, pos_label = _get_response_values_binary(
            estimator, X, response_method=response_method, pos_label=pos_label
        )
        return cls.from_predictions(
            y,
            y_score,
            q=q,
            transition_matrix=transition_matrix,
            pos_label=pos_label,
            name=type(estimator).__name__ if name is None else name,
            **kwargs,
        )
