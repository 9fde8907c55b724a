"""The display of a cross-validation: :class:`NoisyCVDisplay`."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .._noisy_score import NoisyScore
from ..utils._plotting import import_pyplot
from ._cross_validator import NoisyCrossValidator
from ._report import _level, _std, interval, metric_label, shown, unit_text

__all__ = ["NoisyCVDisplay"]


def axes_for(ax: Any, caller: str, *, legend: bool = True) -> Any:
    """``ax``, or the axes of a new figure; a constrained layout makes room for
    a legend outside the axes (on given axes only for a ``legend``).
    """
    if ax is None:
        return import_pyplot(caller).subplots(layout="constrained")[1]
    if legend and ax.figure.get_layout_engine() is None:
        ax.figure.set_layout_engine("constrained")
    return ax


class NoisyCVDisplay:
    """Per-fold estimates of a metric with their label-noise intervals, and pooled.

    Error bars per fold beside the nominal values, the pooled score as a line
    with its interval as a band; an interval at the metric's bound is a limit,
    as in the report. Read more in the :ref:`User Guide <cross_validation>`.

    Parameters
    ----------
    metric : str
        Name of the metric shown.
    fold_expected, fold_std, fold_nominal : ndarray of shape (n_folds,)
        Per-fold estimate, label-noise standard deviation and nominal value.
    pooled : NoisyScore or None
        The pooled score, or None.
    confidence_level : float, default=0.95
        Level of the intervals.
    greater_is_better : bool or None, default=None
        Shown in the axis label.
    estimand : {"forward", "truth", "remeasurement"}, default="forward"
        What ``fold_expected`` and ``pooled`` estimate.
    fold_forward : ndarray of shape (n_folds,) or None, default=None
        The forward values, drawn when ``estimand`` is not ``"forward"``.
    name, data_name : str, default=None
        Names of the model and the data, shown in the title.
    unit : str, default=None
        Unit of the target, shown on the axis of a metric in that unit.
    fold_scores : list of NoisyScore, default=None
        The fold results, whose own intervals are drawn; None: built from
        ``fold_expected`` and ``fold_std``.

    Attributes
    ----------
    ax_, figure_ : matplotlib Axes and Figure
        The plot.
    errorbar_ : matplotlib ErrorbarContainer
        The per-fold estimates and intervals (NaN where a fold is a limit).
    limits_ : matplotlib LineCollection or None
        The bars of the folds whose interval reaches the metric's bound.
    nominal_, forward_ : matplotlib Line2D
        The per-fold nominal and (when drawn, else None) forward markers.
    pooled_line_, pooled_band_, pooled_both_band_ : matplotlib artists or None
        The pooled estimate (None at a limit), its label-noise interval and
        its interval with the test-set sampling (hatched), if known.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from sklearn.linear_model import LinearRegression
    >>> from sklearn_noisy.model_selection import NoisyCVDisplay
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 2))
    >>> y = X @ [1.0, -1.0] + rng.normal(scale=0.3, size=60)
    >>> display = NoisyCVDisplay.from_estimator(
    ...     LinearRegression(), X, y, sigma=0.3, metric="mean_squared_error")
    >>> display.metric, len(display.fold_expected)
    ('mean_squared_error', 5)
    """

    def __init__(
        self,
        *,
        metric: str,
        fold_expected: Any,
        fold_std: Any,
        fold_nominal: Any,
        pooled: NoisyScore | None,
        confidence_level: float = 0.95,
        greater_is_better: bool | None = None,
        estimand: str = "forward",
        fold_forward: Any = None,
        name: str | None = None,
        data_name: str | None = None,
        unit: str | None = None,
        fold_scores: Any = None,
    ) -> None:
        self.metric = metric
        self.fold_scores = fold_scores
        self.unit = unit
        self.name = name
        self.data_name = data_name
        self.estimand = estimand
        self.fold_forward = (
            None if fold_forward is None else np.asarray(fold_forward, dtype=np.float64)
        )
        self.fold_expected = np.asarray(fold_expected, dtype=np.float64)
        self.fold_std = np.asarray(fold_std, dtype=np.float64)
        self.fold_nominal = np.asarray(fold_nominal, dtype=np.float64)
        self.pooled = pooled
        self.confidence_level = confidence_level
        self.greater_is_better = greater_is_better

    @classmethod
    def from_cv_results(
        cls,
        cv: NoisyCrossValidator,
        metric: str | None = None,
        *,
        ax: Any = None,
        estimand: str | None = None,
        name: str | None = None,
        data_name: str | None = None,
        legend: bool = True,
    ) -> NoisyCVDisplay:
        """Plot one metric of a fitted :class:`NoisyCrossValidator`.

        Parameters
        ----------
        cv : NoisyCrossValidator
            A fitted cross-validator.
        metric : str, default=None
            The result key of the metric; by default the first one.
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure by default.
        estimand : {"forward", "truth", "remeasurement"}, default=None
            One of ``cv.estimands_[metric]["shown"]``; by default the lead.
        name, data_name : str, default=None
            Names of the model (the estimator's class by default) and the data.
        legend : bool, default=True
            Draw the legend.

        Returns
        -------
        display : NoisyCVDisplay
        """
        if not isinstance(cv, NoisyCrossValidator):
            raise TypeError(
                f"cv must be a fitted NoisyCrossValidator; got {type(cv).__name__}."
            )
        check_is_fitted(cv, "cv_results_")
        keys = list(cv.scorers_)
        metric = keys[0] if metric is None else metric
        if metric not in keys:
            raise ValueError(f"metric must be one of {keys}; got {metric!r}.")
        info = cv.estimands_[metric]
        estimand = info["lead"] if estimand is None else estimand
        if estimand not in info["shown"]:
            raise ValueError(
                f"estimand must be one of {info['shown']} for {metric!r}; got "
                f"{estimand!r}."
            )
        variance = cv.cv_results_[f"{metric}_{estimand}_variance"]
        display = cls(
            metric=metric,
            fold_expected=cv.cv_results_[f"{metric}_{estimand}"],
            fold_std=[_std(float(v)) for v in variance],
            fold_nominal=cv.cv_results_[f"{metric}_nominal"],
            pooled=cv.pooled_estimates_.get(metric, {}).get(estimand),
            confidence_level=cv.confidence_level,
            greater_is_better=cv.scorers_[metric].greater_is_better,
            estimand=estimand,
            fold_forward=cv.cv_results_.get(f"{metric}_forward")
            if estimand != "forward"
            else None,
            name=type(cv.estimator).__name__ if name is None else name,
            data_name=data_name,
            unit=cv.unit,
            fold_scores=cv.fold_estimates_.get(metric, {}).get(estimand),
        )
        return display.plot(ax=ax, legend=legend)

    @classmethod
    def from_estimator(
        cls,
        estimator: Any,
        X: Any,
        y: Any,
        *,
        sigma: Any = None,
        q: Any = None,
        transition_matrix: Any = None,
        groups: Any = None,
        cv: Any = 5,
        metric: str | None = None,
        scoring: Any = None,
        n_jobs: int | None = None,
        confidence_level: float = 0.95,
        ax: Any = None,
        sigma_dof: Any = None,
        estimand: str = "auto",
        name: str | None = None,
        data_name: str | None = None,
    ) -> NoisyCVDisplay:
        """Cross-validate ``estimator`` and plot one metric.

        Parameters
        ----------
        estimator : estimator object
            The estimator to cross-validate.
        X, y : array-like
            Data and best-known labels.
        sigma, q, transition_matrix, groups, sigma_dof : default=None
            As in :meth:`NoisyCrossValidator.fit`.
        cv, n_jobs, confidence_level, estimand : optional
            As in :class:`NoisyCrossValidator`.
        metric : str, default=None
            The metric to plot; by default the first default metric.
        scoring : default=None
            By default ``metric`` alone (``"default"`` when ``metric`` is None).
        ax, name, data_name : default=None
            As in :meth:`from_cv_results`.

        Returns
        -------
        display : NoisyCVDisplay
        """
        if scoring is None:
            scoring = "default" if metric is None else [metric]
        level = confidence_level
        options = dict(scoring=scoring, cv=cv, n_jobs=n_jobs, confidence_level=level)
        runner = NoisyCrossValidator(estimator, estimand=estimand, **options)
        noise = dict(sigma=sigma, q=q, transition_matrix=transition_matrix)
        runner.fit(X, y, **noise, groups=groups, sigma_dof=sigma_dof)
        return cls.from_cv_results(
            runner, metric, ax=ax, name=name, data_name=data_name
        )

    def plot(self, ax: Any = None, *, legend: bool = True) -> NoisyCVDisplay:
        """Draw the display, the legend outside the axes.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure by default.
        legend : bool, default=True
            Draw the legend (False when displays share one, see
            :meth:`legend_entries`).

        Returns
        -------
        display : NoisyCVDisplay
        """
        created = ax is None
        ax = axes_for(ax, "NoisyCVDisplay", legend=legend)
        self.ax_, self.figure_ = ax, ax.figure
        self._draw_folds(ax)
        self._draw_pooled(ax)
        label = metric_label(self.metric)
        folds = np.arange(1, self.fold_expected.size + 1)
        ax.set_xticks(folds)
        ax.set_xlabel("fold")
        unit = unit_text(self.unit, self.metric)
        ylabel = f"{label} in {unit}" if unit else label
        if self.greater_is_better is not None:
            better = "higher" if self.greater_is_better else "lower"
            ylabel += f"\n({better} is better)"
        ax.set_ylabel(ylabel)
        model = "" if self.name is None else f" of {self.name}"
        data = "" if self.data_name is None else f" on {self.data_name}"
        ax.set_title(f"{label}{model}{data}, per fold and pooled", fontsize="medium")
        if not legend:
            return self
        handles, labels = self.legend_entries()
        if created:
            self.figure_.legend(
                handles, labels, loc="outside lower center", ncols=2, fontsize="small"
            )
            return self
        outside = dict(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
        ax.legend(handles, labels, **outside, fontsize="small")
        return self

    def legend_entries(self) -> tuple[list[Any], list[str]]:
        """Handles and labels of the legend, the per-fold estimate first."""
        handles, labels = self.ax_.get_legend_handles_labels()
        order = sorted(
            range(len(handles)), key=lambda i: handles[i] is not self.errorbar_
        )
        return [handles[i] for i in order], [labels[i] for i in order]

    def _draw_folds(self, ax: Any) -> None:
        level = _level(self.confidence_level)
        folds = np.arange(1, self.fold_expected.size + 1)
        # the report's intervals and points: a limit where the interval reaches
        # the metric's bound, drawn from the bound with no point
        std = self.fold_std
        scores = self.fold_scores or [None] * std.size
        rows = [
            self._shown(e, s * s, score)
            for e, s, score in zip(self.fold_expected, std, scores, strict=True)
        ]
        point, low, high, limit = map(np.array, zip(*rows, strict=True))
        yerr = np.vstack([point - low, high - point])
        label = f"{self.estimand} ± {level} label-noise interval"
        self.errorbar_ = ax.errorbar(
            folds, point, yerr=yerr, fmt="o", capsize=4, label=label
        )
        self.limits_ = None
        at, upper, lower = limit != "", limit == "<", limit == ">"
        if at.any():
            colour = self.errorbar_.lines[0].get_color()
            label = f"{level} limit (from the metric's bound)"
            self.limits_ = ax.vlines(
                folds[at], low[at], high[at], color=colour, label=label
            )
            ends = np.where(upper, high, low)[at]
            ax.plot(folds[at], ends, "_", markersize=8, color=colour)
            ax.plot(folds[upper], low[upper], "v", color=colour)  # arrowheads at
            ax.plot(folds[lower], high[lower], "^", color=colour)  # the bound
        self.forward_ = None
        if self.fold_forward is not None and self.estimand != "forward":
            label = "forward (if y_true were exact)"
            (self.forward_,) = ax.plot(
                folds, self.fold_forward, "s", markersize=4, color="grey", label=label
            )
        nominal = "nominal (labels as given)"
        (self.nominal_,) = ax.plot(
            folds, self.fold_nominal, "x", color="black", label=nominal
        )

    def _shown(
        self, estimate: float, variance: float, score: NoisyScore | None = None
    ) -> tuple[float, float, float, str]:
        """The report's point, interval and limit mark of an estimate."""
        level = self.confidence_level
        low, high = interval(
            self.metric, self.estimand, estimate, variance, level, score
        )
        point, limit = shown(self.metric, estimate, low, high)
        return point, low, high, limit

    def _draw_pooled(self, ax: Any) -> None:
        self.pooled_line_ = self.pooled_band_ = self.pooled_both_band_ = None
        if self.pooled is None:
            return
        level = _level(self.confidence_level)
        point, low, high, limit = self._shown(
            self.pooled.expected, self.pooled.variance, self.pooled
        )
        label = f"pooled {level} interval"
        self.pooled_band_ = ax.axhspan(
            low, high, color="tab:orange", alpha=0.2, label=label
        )
        if not math.isnan(self.pooled.sampling_variance):
            both = self.pooled.confidence_interval(self.confidence_level, source="both")
            hatched = dict(facecolor="none", edgecolor="tab:orange", hatch="///")
            label = "pooled, with test-set sampling"
            self.pooled_both_band_ = ax.axhspan(
                *both, **hatched, linewidth=0.0, alpha=0.5, label=label
            )
        if not limit:
            self.pooled_line_ = ax.axhline(
                point, color="tab:orange", label=f"pooled {self.estimand}"
            )
