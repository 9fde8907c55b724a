"""Noise-resilience curve: NR and expected metrics as label noise grows."""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from functools import partial
from typing import Any

import numpy as np
from sklearn.base import clone, is_classifier
from sklearn.model_selection import KFold, check_cv, cross_val_predict
from sklearn.utils import check_random_state

from .._noisy_score import NoisyScore
from ..metrics import get_metric_info, get_metric_names, noise_resilience_score
from ..utils._arrays import as_float_array, check_finite, read_only

__all__ = ["NoiseResilienceCurveResult", "noise_resilience_curve"]


def _resolve_metric(metric: Any) -> tuple[str, Callable[..., NoisyScore]]:
    """Name and function of a regression metric name or a callable."""
    if callable(metric):
        return getattr(metric, "__name__", "metric"), metric
    names = get_metric_names(noise="sigma")
    if not isinstance(metric, str) or metric not in names:
        raise ValueError(
            f"metrics must hold regression metric names among "
            f"{sorted(names)} or callables (y_true, y_pred, *, sigma) "
            f"-> NoisyScore; got {metric!r}."
        )
    return metric, partial(get_metric_info(metric).function, test_set_sampling=False)


@dataclass(frozen=True, repr=False, eq=False)
class NoiseResilienceCurveResult:
    """Result of :func:`noise_resilience_curve` (arrays read-only).

    Attributes
    ----------
    noise_levels : ndarray of shape (n_levels,)
        Standard deviations of the Gaussian noise added to the labels.
    scores, fraction_satisfied : ndarray of shape (n_levels, n_repeats)
        NR, and the fraction of the regions where its local condition holds.
    metrics : dict of str to dict of str to ndarray
        Per metric, ``"expected"``, ``"std"`` (``sigma`` = the level),
        ``"nominal"`` and ``"truth"`` (against ``y_ref``), each of shape
        ``(n_levels, n_repeats)``.
    estimator_name : str
        Class name of the estimator.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_noisy.model_selection import NoiseResilienceCurveResult
    >>> curve = NoiseResilienceCurveResult(
    ...     noise_levels=[0.5, 1.0], scores=[[0.2, 0.4], [0.8, 0.9]],
    ...     fraction_satisfied=[[1.0, 1.0], [1.0, 0.5]], estimator_name="Ridge")
    >>> curve.score_mean, curve.fraction_satisfied_mean
    (array([0.3 , 0.85]), array([1.  , 0.75]))
    """

    noise_levels: np.ndarray
    scores: np.ndarray
    fraction_satisfied: np.ndarray
    metrics: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)
    estimator_name: str = ""

    def __post_init__(self) -> None:
        for name in ("noise_levels", "scores", "fraction_satisfied"):
            object.__setattr__(self, name, read_only(getattr(self, name), float))
        metrics = {
            metric: {key: read_only(array, float) for key, array in values.items()}
            for metric, values in self.metrics.items()
        }
        object.__setattr__(self, "metrics", metrics)

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), tuple(getattr(self, f.name) for f in fields(self))

    @property
    def score_mean(self) -> np.ndarray:
        """Mean NR over the repeats, per noise level."""
        return self.scores.mean(axis=1)

    @property
    def score_std(self) -> np.ndarray:
        """SD of NR over the repeats (ddof=1; 0 with one repeat)."""
        if self.scores.shape[1] < 2:
            return np.zeros(self.scores.shape[0])
        return self.scores.std(axis=1, ddof=1)

    @property
    def fraction_satisfied_mean(self) -> np.ndarray:
        """Mean over the repeats of the fraction of regions meeting the condition."""
        return self.fraction_satisfied.mean(axis=1)

    def to_frame(self) -> Any:
        """Long table, one row per (noise level, repeat) (needs pandas)."""
        import pandas as pd

        n_levels, n_repeats = self.scores.shape
        data = {
            "noise_level": np.repeat(self.noise_levels, n_repeats),
            "repeat": np.tile(np.arange(n_repeats), n_levels),
            "noise_resilience": self.scores.ravel(),
            "fraction_satisfied": self.fraction_satisfied.ravel(),
        }
        for name, values in self.metrics.items():
            data |= {f"{name}_{key}": array.ravel() for key, array in values.items()}
        return pd.DataFrame(data)

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable dict of all arrays (as lists)."""
        return {
            "estimator": self.estimator_name,
            "noise_levels": self.noise_levels.tolist(),
            "noise_resilience": self.scores.tolist(),
            "fraction_satisfied": self.fraction_satisfied.tolist(),
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


def _column_position(feature: Any, columns: Any, n_features: int) -> int:
    """Position of one ``feature`` (an index, or a name when ``columns``)."""
    if isinstance(feature, numbers.Integral) and not isinstance(feature, bool):
        if not -n_features <= feature < n_features:
            raise ValueError(
                f"feature={feature!r} is out of range: X has {n_features} "
                f"column(s), so an index must be in [{-n_features}, {n_features})."
            )
        return int(feature) % n_features
    if columns is None:
        if isinstance(feature, str):
            raise ValueError(
                f"feature={feature!r} is a column name, but X is not a pandas "
                "DataFrame; give the column's integer index."
            )
        raise TypeError(
            f"feature must be an integer column index (or a column name for a "
            f"DataFrame); got {feature!r} of type {type(feature).__name__}."
        )
    try:
        found = feature in columns
    except TypeError:  # an unhashable feature
        found = False
    if not found:
        raise ValueError(
            f"feature={feature!r} is not a column of X; its columns are "
            f"{list(columns)}."
        )
    return int(columns.get_loc(feature))


def _feature_columns(X: Any, feature: Any, n_samples: int) -> np.ndarray:
    """The column(s) of ``X`` along which NR is evaluated, as floats."""
    frame = hasattr(X, "iloc") and hasattr(X, "columns")
    shape = X.shape if frame else np.shape(X)
    if len(shape) != 2:
        raise ValueError(
            f"X must be 2-D (n_samples, n_features); got an array of shape {shape}."
        )
    if shape[0] != n_samples:
        raise ValueError(
            f"X and y_ref must have the same number of samples; got {shape[0]} and "
            f"{n_samples}."
        )
    several = isinstance(feature, (list, tuple, np.ndarray))
    features = list(feature) if several else [feature]
    if not features:
        raise ValueError("feature must name at least one column of X.")
    columns = X.columns if frame else None
    positions = [_column_position(f, columns, shape[1]) for f in features]
    if frame:
        values = X.iloc[:, positions]
    elif hasattr(X, "toarray"):  # a scipy sparse matrix or array
        values = X[:, positions].toarray()
    else:
        values = np.asarray(X)[:, positions]
    x = as_float_array(values, name=f"X[:, {feature!r}]")
    check_finite(x, name=f"X[:, {feature!r}]")
    return x if several else x[:, 0]


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
    groups: Any = None,
    slope: str = "least_squares",
    n_jobs: int | None = None,
) -> NoiseResilienceCurveResult:
    """Noise resilience and expected metrics as the training-label noise grows.

    For each noise level ``σ`` and each of ``n_repeats`` draws, the labels are
    ``y = y_ref + σ·N(0, 1)``; the estimator's out-of-fold predictions are
    scored with :func:`~sklearn_noisy.metrics.noise_resilience_score` along
    ``feature`` and with the expected metrics (``sigma=σ``). Read more in the
    :ref:`User Guide <noise_resilience>`.

    Parameters
    ----------
    estimator : regressor
        A scikit-learn regressor; it is cloned for every fit.
    X : array-like of shape (n_samples, n_features)
        Inputs.
    y_ref : array-like of shape (n_samples,)
        Ground-truth (noise-free) targets.
    noise_levels : sequence of float
        Standard deviations of the added noise, each ``> 0``.
    cv : int or cross-validation splitter, default=5
        An int gives ``KFold(cv, shuffle=True)`` seeded from ``random_state``.
    n_repeats : int, default=3
        Noise draws per level.
    random_state : int, RandomState instance or None, default=None
        Seeds the label noise and the folds.
    feature : int, str or list of them, default=0
        Column(s) of ``X`` along which NR is evaluated (names for DataFrames).
        Several columns need ``groups``.
    metrics : sequence of str or callable, default=("mean_squared_error", \
"mean_absolute_error")
        Regression metric names, or callables
        ``(y_true, y_pred, *, sigma) -> NoisyScore``.
    n_regions, window, groups, slope
        As in :func:`~sklearn_noisy.metrics.noise_resilience_score`.
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
    >>> curve.scores.shape, curve.fraction_satisfied.shape
    ((2, 2), (2, 2))
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
    n_samples = y_ref.shape[0]
    x = _feature_columns(X, feature, n_samples)
    if x.ndim == 2 and groups is None:  # before any fit
        raise ValueError(
            f"feature={feature!r} names {x.shape[1]} columns: several input "
            "variables need groups (for example KMeans labels of X)."
        )
    options = dict(n_regions=n_regions, window=window, groups=groups, slope=slope)

    rng = check_random_state(random_state)
    if isinstance(cv, numbers.Integral):
        splitter = KFold(int(cv), shuffle=True, random_state=rng.randint(2**31 - 1))
    else:
        splitter = check_cv(cv)
    shape = (levels.size, n_repeats)
    scores, fractions = np.empty(shape), np.empty(shape)
    keys = ("expected", "std", "nominal", "truth")
    table = {name: {key: np.empty(shape) for key in keys} for name, _ in resolved}
    for i, level in enumerate(levels):
        for r in range(n_repeats):
            y = y_ref + level * rng.standard_normal(n_samples)
            y_pred = cross_val_predict(
                clone(estimator), X, y, cv=splitter, n_jobs=n_jobs
            )
            score = noise_resilience_score(x, y, y_pred, y_ref, **options)
            scores[i, r], fractions[i, r] = score.score, score.fraction_satisfied
            for name, function in resolved:
                noisy = function(y, y_pred, sigma=float(level), estimand="forward")
                for key in keys[:3]:
                    table[name][key][i, r] = getattr(noisy, key)
                table[name]["truth"][i, r] = function(y_ref, y_pred, sigma=0.0).nominal
    return NoiseResilienceCurveResult(
        noise_levels=levels,
        scores=scores,
        fraction_satisfied=fractions,
        metrics=table,
        estimator_name=type(estimator).__name__,
    )
