"""Noise-resilience curve: NR and expected metrics as label noise grows."""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sklearn.base import clone, is_classifier
from sklearn.model_selection import KFold, check_cv, cross_val_predict
from sklearn.utils import check_random_state

from .._noisy_score import NoisyScore
from ..metrics._noise_resilience import noise_resilience_score
from ..utils._validation import as_float_array, check_finite

__all__ = [
    "NoiseResilienceCurveResult",
    "NoiseResilienceDisplay",
    "noise_resilience_curve",
]

#: Regression metrics the curve can report: canonical name -> function name in
#: :mod:`sklearn_noisy.metrics` (looked up when used).
_METRIC_FUNCTIONS = {
    "mean_squared_error": "expected_mean_squared_error",
    "mean_absolute_error": "expected_mean_absolute_error",
    "root_mean_squared_error": "expected_root_mean_squared_error",
    "r2": "expected_r2_score",
}


def _resolve_metric(metric: Any) -> tuple[str, Callable[..., NoisyScore]]:
    if callable(metric):
        return getattr(metric, "__name__", "metric"), metric
    if not isinstance(metric, str) or metric not in _METRIC_FUNCTIONS:
        raise ValueError(
            f"metrics must hold regression metric names among "
            f"{sorted(_METRIC_FUNCTIONS)} or callables (y_true, y_pred, *, sigma) "
            f"-> NoisyScore; got {metric!r}."
        )
    from .. import metrics as metrics_module

    function = getattr(metrics_module, _METRIC_FUNCTIONS[metric], None)
    if function is None:
        raise ValueError(
            f"The metric {metric!r} is not available in sklearn_noisy.metrics of "
            "this installation."
        )
    return metric, function


@dataclass(frozen=True, repr=False, eq=False)
class NoiseResilienceCurveResult:
    """Result of :func:`noise_resilience_curve`.

    Attributes
    ----------
    noise_levels : ndarray of shape (n_levels,)
        Standard deviations of the Gaussian noise added to the labels.
    scores : ndarray of shape (n_levels, n_repeats)
        The noise-resilience score NR of every level and repeat.
    metrics : dict of str to dict of str to ndarray
        Per metric name, arrays of shape ``(n_levels, n_repeats)``:
        ``"expected"`` and ``"std"`` (the expected metric and its standard
        deviation over the label noise, computed from the noisy labels with
        ``sigma`` = the noise level, as a scientist would), ``"nominal"`` (the
        metric on the noisy labels as drawn) and ``"truth"`` (the metric against
        the noise-free ``y_ref``).
    estimator_name : str
        Class name of the estimator.
    """

    noise_levels: np.ndarray
    scores: np.ndarray
    metrics: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)
    estimator_name: str = ""

    @property
    def score_mean(self) -> np.ndarray:
        """Mean NR over the repeats, per noise level."""
        return self.scores.mean(axis=1)

    @property
    def score_std(self) -> np.ndarray:
        """Standard deviation of NR over the repeats (ddof=1; 0 with one repeat)."""
        if self.scores.shape[1] < 2:
            return np.zeros(self.scores.shape[0])
        return self.scores.std(axis=1, ddof=1)

    def to_frame(self) -> Any:
        """Long table, one row per (noise level, repeat) (needs pandas)."""
        import pandas as pd

        n_levels, n_repeats = self.scores.shape
        data = {
            "noise_level": np.repeat(self.noise_levels, n_repeats),
            "repeat": np.tile(np.arange(n_repeats), n_levels),
            "noise_resilience": self.scores.ravel(),
        }
        for name, values in self.metrics.items():
            for key, array in values.items():
                data[f"{name}_{key}"] = array.ravel()
        return pd.DataFrame(data)

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable dict of all arrays (as lists)."""
        return {
            "estimator": self.estimator_name,
            "noise_levels": self.noise_levels.tolist(),
            "noise_resilience": self.scores.tolist(),
            "metrics": {
                name: {key: array.tolist() for key, array in values.items()}
                for name, values in self.metrics.items()
            },
        }

    def __repr__(self) -> str:
        return (
            f"NoiseResilienceCurveResult(estimator={self.estimator_name!r}, "
            f"noise_levels={self.noise_levels.tolist()}, "
            f"score_mean={np.round(self.score_mean, 4).tolist()})"
        )


def noise_resilience_curve(
    estimator: Any,
    X: Any,
    y_ref: Any,
    noise_levels: Sequence[float],
    *,
    cv: Any = 5,
    n_repeats: int = 3,
    random_state: Any = None,
    feature: Any = 0,
    metrics: Sequence[Any] = ("mean_squared_error", "mean_absolute_error"),
    n_regions: int | None = None,
    window: int | None = None,
    n_jobs: int | None = None,
) -> NoiseResilienceCurveResult:
    """Noise resilience and expected metrics as the training-label noise grows.

    For each noise level ``σ`` and each of ``n_repeats`` draws, the labels are
    ``y = y_ref + σ·N(0, 1)``; the estimator's out-of-fold predictions ``ŷ``
    (``cross_val_predict`` trained on ``y``) are scored with
    :func:`~sklearn_noisy.metrics.noise_resilience_score` along the input
    column ``feature``, and with the expected metrics computed from ``y`` with
    ``sigma=σ`` (what a scientist holding these labels would report), next to
    the same metric against the noise-free ``y_ref``.

    Parameters
    ----------
    estimator : regressor
        A scikit-learn regressor; it is cloned for every fit.
    X : array-like of shape (n_samples, n_features)
        Inputs.
    y_ref : array-like of shape (n_samples,)
        Ground-truth (noise-free) targets.
    noise_levels : sequence of float
        Standard deviations of the added noise, each ``> 0`` (NR compares the
        prediction with the noise, so a level of 0 has nothing to compare with).
    cv : int or cross-validation splitter, default=5
        An int gives ``KFold(cv, shuffle=True)`` seeded from ``random_state``.
    n_repeats : int, default=3
        Noise draws per level.
    random_state : int, RandomState instance or None, default=None
        Seeds the label noise and the folds.
    feature : int or str, default=0
        Column of ``X`` along which NR is evaluated (a name for DataFrames).
    metrics : sequence of str or callable, default=("mean_squared_error", \
"mean_absolute_error")
        Expected regression metrics to report: canonical names, or callables
        ``(y_true, y_pred, *, sigma) -> NoisyScore``.
    n_regions, window : int, default=None
        Regions of :func:`~sklearn_noisy.metrics.noise_resilience_score`.
    n_jobs : int, default=None
        Passed to ``cross_val_predict``.

    Returns
    -------
    result : NoiseResilienceCurveResult

    Examples
    --------
    >>> from sklearn.linear_model import LinearRegression
    >>> from sklearn_noisy.datasets import load_oxygen_sensor
    >>> from sklearn_noisy.model_selection import noise_resilience_curve
    >>> sensor = load_oxygen_sensor()
    >>> curve = noise_resilience_curve(
    ...     LinearRegression(), sensor.data, sensor.target_true, [0.1, 1.0],
    ...     n_repeats=2, random_state=0, feature=1)
    >>> curve.scores.shape
    (2, 2)
    >>> sorted(curve.metrics)
    ['mean_absolute_error', 'mean_squared_error']
    """
    if is_classifier(estimator):
        raise TypeError("noise_resilience_curve needs a regressor; got a classifier.")
    y_ref = as_float_array(y_ref, name="y_ref")
    if y_ref.ndim != 1:
        raise ValueError(f"y_ref must be 1-D; got shape {y_ref.shape}.")
    check_finite(y_ref, name="y_ref")
    levels = as_float_array(noise_levels, name="noise_levels")
    if levels.ndim != 1 or levels.size == 0:
        raise ValueError("noise_levels must be a non-empty 1-D sequence of floats.")
    check_finite(levels, name="noise_levels")
    if levels.min() <= 0:
        raise ValueError(
            "noise_levels must all be > 0: the noise-resilience score compares the "
            f"prediction with the noise; got {levels.min()!r}."
        )
    if not isinstance(n_repeats, numbers.Integral) or n_repeats < 1:
        raise ValueError(f"n_repeats must be a positive integer; got {n_repeats!r}.")
    resolved = [_resolve_metric(metric) for metric in metrics]
    if hasattr(X, "iloc") and not isinstance(feature, numbers.Integral):
        x = X[feature]
    elif hasattr(X, "iloc"):
        x = X.iloc[:, feature]
    else:
        x = np.asarray(X)[:, feature]
    x = as_float_array(x, name=f"X[:, {feature!r}]")
    n_samples = y_ref.shape[0]
    if x.shape[0] != n_samples:
        raise ValueError(
            f"X and y_ref must have the same number of samples; got {x.shape[0]} and "
            f"{n_samples}."
        )

    rng = check_random_state(random_state)
    if isinstance(cv, numbers.Integral):
        splitter = KFold(int(cv), shuffle=True, random_state=rng.randint(2**31 - 1))
    else:
        splitter = check_cv(cv)
    n_levels = levels.size
    scores = np.empty((n_levels, n_repeats))
    table = {
        name: {key: np.empty((n_levels, n_repeats)) for key in _METRIC_KEYS}
        for name, _ in resolved
    }
    for i, level in enumerate(levels):
        for r in range(n_repeats):
            y = y_ref + level * rng.standard_normal(n_samples)
            y_pred = cross_val_predict(
                clone(estimator), X, y, cv=splitter, n_jobs=n_jobs
            )
            scores[i, r] = noise_resilience_score(
                x, y, y_pred, y_ref, n_regions=n_regions, window=window
            ).score
            for name, function in resolved:
                noisy = function(y, y_pred, sigma=float(level))
                table[name]["expected"][i, r] = noisy.expected
                table[name]["std"][i, r] = noisy.std
                table[name]["nominal"][i, r] = noisy.nominal
                table[name]["truth"][i, r] = function(y_ref, y_pred, sigma=0.0).nominal
    return NoiseResilienceCurveResult(
        noise_levels=levels.copy(),
        scores=scores,
        metrics=table,
        estimator_name=type(estimator).__name__,
    )


_METRIC_KEYS = ("expected", "std", "nominal", "truth")


def _import_pyplot() -> Any:
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError(
            "NoiseResilienceDisplay requires matplotlib: pip install matplotlib."
        ) from exc
    return plt


class NoiseResilienceDisplay:
    """Plot of the noise-resilience score (and a metric) against the noise level.

    Create it with :meth:`from_estimator` or :meth:`from_results`; it draws NR
    (mean ± one standard deviation over the repeats) with reference lines at 1
    (perfect recovery of the truth) and 0 (as good as the noisy data), and, on a
    second axis, the expected metric with its label-noise standard deviation.
    matplotlib is imported only when plotting.

    Parameters
    ----------
    result : NoiseResilienceCurveResult
        The curve to plot.
    metric : str or None, default=None
        Metric drawn on the second axis; default the first one of the result,
        ``None`` and no metrics: NR only.
    name : str or None, default=None
        Legend label; default the estimator's class name.

    Attributes
    ----------
    ax_ : matplotlib Axes
    metric_ax_ : matplotlib Axes or None
    figure_ : matplotlib Figure

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from sklearn.linear_model import LinearRegression
    >>> from sklearn_noisy.datasets import load_oxygen_sensor
    >>> from sklearn_noisy.model_selection import NoiseResilienceDisplay
    >>> sensor = load_oxygen_sensor()
    >>> display = NoiseResilienceDisplay.from_estimator(
    ...     LinearRegression(), sensor.data, sensor.target_true, [0.2, 1.0],
    ...     n_repeats=1, random_state=0, feature=1)
    >>> display.ax_.get_ylabel()
    'noise resilience NR'
    """

    def __init__(
        self,
        result: NoiseResilienceCurveResult,
        *,
        metric: str | None = None,
        name: str | None = None,
    ) -> None:
        self.result = result
        self.metric = metric
        self.name = name

    def plot(
        self, ax: Any = None, *, name: str | None = None
    ) -> NoiseResilienceDisplay:
        """Draw on ``ax`` (a new figure when None); return self."""
        plt = _import_pyplot()
        if ax is None:
            _, ax = plt.subplots()
        result = self.result
        label = name or self.name or result.estimator_name or "estimator"
        levels = result.noise_levels
        mean, std = result.score_mean, result.score_std
        (line,) = ax.plot(levels, mean, marker="o", label=f"{label}: NR")
        ax.fill_between(
            levels, mean - std, mean + std, alpha=0.2, color=line.get_color()
        )
        ax.axhline(1.0, color="0.4", linestyle=":", linewidth=1)
        ax.axhline(0.0, color="0.4", linestyle="--", linewidth=1)
        ax.set_xlabel("label noise level σ")
        ax.set_ylabel("noise resilience NR")
        self.metric_ax_ = None
        metric = self.metric
        if metric is None and result.metrics:
            metric = next(iter(result.metrics))
        if metric is not None:
            if metric not in result.metrics:
                raise ValueError(
                    f"metric {metric!r} is not in the result; available: "
                    f"{sorted(result.metrics)}."
                )
            values = result.metrics[metric]
            expected = values["expected"].mean(axis=1)
            noise_std = values["std"].mean(axis=1)
            twin = ax.twinx()
            twin.errorbar(
                levels,
                expected,
                yerr=noise_std,
                color="C1",
                linestyle="--",
                marker="s",
                capsize=3,
                label=f"expected {metric} ± std",
            )
            twin.plot(
                levels,
                values["truth"].mean(axis=1),
                color="C2",
                linestyle=":",
                marker="^",
                label=f"{metric} vs truth",
            )
            twin.set_ylabel(metric)
            handles = ax.get_legend_handles_labels()
            twin_handles = twin.get_legend_handles_labels()
            twin.legend(handles[0] + twin_handles[0], handles[1] + twin_handles[1])
            self.metric_ax_ = twin
        else:
            ax.legend()
        self.ax_ = ax
        self.figure_ = ax.figure
        return self

    @classmethod
    def from_results(
        cls,
        result: NoiseResilienceCurveResult,
        *,
        metric: str | None = None,
        name: str | None = None,
        ax: Any = None,
    ) -> NoiseResilienceDisplay:
        """Plot a :class:`NoiseResilienceCurveResult`."""
        if not isinstance(result, NoiseResilienceCurveResult):
            raise TypeError(
                "result must be a NoiseResilienceCurveResult from "
                f"noise_resilience_curve; got {type(result).__name__}."
            )
        return cls(result, metric=metric, name=name).plot(ax=ax)

    @classmethod
    def from_estimator(
        cls,
        estimator: Any,
        X: Any,
        y_ref: Any,
        noise_levels: Sequence[float],
        *,
        metric: str | None = None,
        name: str | None = None,
        ax: Any = None,
        **kwargs: Any,
    ) -> NoiseResilienceDisplay:
        """Run :func:`noise_resilience_curve` (``kwargs`` passed on) and plot it."""
        result = noise_resilience_curve(estimator, X, y_ref, noise_levels, **kwargs)
        return cls.from_results(result, metric=metric, name=name, ax=ax)
