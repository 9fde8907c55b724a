"""The result object returned by every expected metric: :class:`NoisyScore`."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from html import escape
from typing import Any, Protocol

from scipy.special import ndtri

from .utils._validation import ESTIMANDS

__all__ = [
    "INTERVAL_METHODS",
    "METHODS",
    "METRIC_RANGES",
    "ConfidenceInterval",
    "NoisyScore",
    "clip_to_range",
]

#: The ways an expected metric can be computed, as reported in ``NoisyScore.method``.
METHODS = ("exact", "delta", "monte_carlo")

#: The ways a confidence interval can be built (``ConfidenceInterval.method``):
#: quantiles of the exact distribution of the metric over the label noise, or
#: the normal approximation clipped to the metric's range.
INTERVAL_METHODS = ("exact", "normal")

#: The values each metric can take: every interval is clipped to them.
METRIC_RANGES: dict[str, tuple[float, float]] = {
    "accuracy": (0.0, 1.0),
    "precision": (0.0, 1.0),
    "recall": (0.0, 1.0),
    "f1": (0.0, 1.0),
    "balanced_accuracy": (0.0, 1.0),
    "matthews_corrcoef": (-1.0, 1.0),
    "mean_squared_error": (0.0, math.inf),
    "root_mean_squared_error": (0.0, math.inf),
    "mean_absolute_error": (0.0, math.inf),
    "brier_score_loss": (0.0, math.inf),
    "log_loss": (0.0, math.inf),
    "r2": (-math.inf, 1.0),
    "roc_auc": (0.0, 1.0),
    "specificity": (0.0, 1.0),
    "negative_predictive_value": (0.0, 1.0),
    "false_positive_rate": (0.0, 1.0),
    "false_negative_rate": (0.0, 1.0),
    "mean_absolute_percentage_error": (0.0, math.inf),
    "mean_squared_percentage_error": (0.0, math.inf),
    "root_mean_squared_percentage_error": (0.0, math.inf),
}


def clip_to_range(metric: str, low: float, high: float) -> tuple[float, float]:
    """``(low, high)`` clipped to the range of ``metric`` (:data:`METRIC_RANGES`).

    Unknown metrics are not clipped. An interval wholly outside the range
    (a truth estimate of the MSE below 0 by more than its half-width, say)
    never collapses to a point: it becomes the interval of half its width at
    the nearer end of the range, ``[0, half-width]`` for the MSE. That says
    "consistent with the bound, up to the noise scale" without claiming a
    certainty the data do not give.
    """
    low_bound, high_bound = METRIC_RANGES.get(metric, (-math.inf, math.inf))
    half = 0.5 * (high - low) if high >= low else 0.0
    if high < low_bound and math.isfinite(half):
        return low_bound, min(low_bound + half, high_bound)
    if low > high_bound and math.isfinite(half):
        return max(high_bound - half, low_bound), high_bound
    return (
        min(max(low, low_bound), high_bound),
        max(min(high, high_bound), low_bound),
    )


class Distribution(Protocol):
    """What :class:`NoisyScore` needs of the exact distribution of its metric."""

    def interval(self, confidence_level: float) -> tuple[float, float, float]:
        """``(low, high, content)``: the equal-tailed exact interval."""


class ConfidenceInterval(tuple):
    """Lower and upper bound of a confidence interval, as in :mod:`scipy.stats`.

    A pair ``(low, high)``: it unpacks, indexes and compares as a 2-tuple. Two
    read-only attributes say how it was built.

    Attributes
    ----------
    low, high : float
        The bounds, inside the range of the metric.
    method : {"exact", "normal"}
        ``"exact"``: equal-tailed quantiles of the exact distribution of the
        metric over the label noise (user guide: :ref:`exact_intervals`).
        ``"normal"``: ``expected ± z·std`` clipped to the metric's range.
    content : float
        The probability of ``[low, high]`` under the exact distribution of the
        metric: at least the confidence level, more where the distribution is
        discrete. NaN for the normal approximation, whose content is unknown.
    """

    def __new__(
        cls,
        low: float,
        high: float,
        method: str = "normal",
        content: float = math.nan,
    ) -> ConfidenceInterval:
        if method not in INTERVAL_METHODS:
            raise ValueError(
                f"method must be one of {INTERVAL_METHODS}; got {method!r}."
            )
        self = super().__new__(cls, (float(low), float(high)))
        object.__setattr__(self, "method", method)
        object.__setattr__(self, "content", float(content))
        return self

    def __getnewargs__(self) -> tuple[float, float, str, float]:
        return (self[0], self[1], self.method, self.content)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("ConfidenceInterval is read-only.")

    @property
    def low(self) -> float:
        """Lower bound."""
        return self[0]

    @property
    def high(self) -> float:
        """Upper bound."""
        return self[1]

    def __repr__(self) -> str:
        return (
            f"ConfidenceInterval(low={self[0]!r}, high={self[1]!r}, "
            f"method={self.method!r})"
        )


@dataclass(frozen=True, repr=False)
class NoisyScore:
    """Expected value and variance of a metric over the label noise.

    Returned by every ``expected_*`` metric of :mod:`sklearn_noisy.metrics`. The
    expectation and the variance are taken over the measurement error of the
    labels only: the predictions are held fixed.

    Parameters
    ----------
    metric : str
        Name of the metric, e.g. ``"mean_squared_error"``.
    expected : float
        Expected value of the metric when the labels are redrawn from their noise
        model around the best-known values ``y_true``.
    variance : float
        Variance of the metric over the label noise. ``inf`` where the variance
        does not exist (see :func:`~sklearn_noisy.metrics.expected_r2_score`).
    nominal : float
        The classical metric computed on the labels as given, ignoring the noise.
    n_samples : int
        Number of samples the metric was computed on.
    method : {"exact", "delta", "monte_carlo"}, default="exact"
        How ``expected`` and ``variance`` were computed: a closed form or exact
        algorithm, a delta-method (Taylor) approximation, or Monte Carlo.
    estimand : {"forward", "truth", "remeasurement"}, default="forward"
        The question ``expected`` answers (see :ref:`estimands`): the paper's
        forward moments with ``y_true`` taken as exact, an estimate of the
        metric against the unknown true values, or an estimate of the metric
        expected when the samples are measured again.
    distribution : object, default=None
        The exact distribution of the metric over the label noise, where the
        metric could build it (forward estimand): anything with a method
        ``interval(confidence_level) -> (low, high, content)``. It is small
        (per-sample probabilities or weights, or a short probability table)
        and left out of the repr, of :meth:`to_dict`, of comparisons and of
        the hash.

    See Also
    --------
    sklearn_noisy.metrics.expected_mean_squared_error : An example producer.

    Examples
    --------
    >>> from sklearn_noisy import NoisyScore
    >>> score = NoisyScore("accuracy", expected=0.815, variance=0.0003,
    ...                    nominal=0.85, n_samples=500)
    >>> score
    NoisyScore(metric='accuracy', expected=0.815, std=0.01732, nominal=0.85, n_samples=500, method='exact')
    >>> float(score)
    0.815
    >>> score.interval_method
    'normal'
    >>> score.confidence_interval(0.95)
    ConfidenceInterval(low=0.78105..., high=0.84894..., method='normal')
    """  # noqa: E501

    metric: str
    expected: float
    variance: float
    nominal: float
    n_samples: int
    method: str = "exact"
    estimand: str = "forward"
    distribution: Distribution | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}; got {self.method!r}.")
        if self.estimand not in ESTIMANDS:
            raise ValueError(
                f"estimand must be one of {ESTIMANDS}; got {self.estimand!r}."
            )
        # Store plain Python numbers: reprs, pickles and JSON stay simple.
        object.__setattr__(self, "expected", float(self.expected))
        object.__setattr__(self, "variance", float(self.variance))
        object.__setattr__(self, "nominal", float(self.nominal))
        object.__setattr__(self, "n_samples", int(self.n_samples))

    @property
    def std(self) -> float:
        """Standard deviation of the metric over the label noise."""
        return math.sqrt(self.variance)

    @property
    def interval_method(self) -> str:
        """How :meth:`confidence_interval` builds its default interval.

        ``"exact"`` where the exact distribution of the metric is known (see
        :ref:`exact_intervals`), else ``"normal"``.
        """
        return "normal" if self.distribution is None else "exact"

    def confidence_interval(
        self, confidence_level: float = 0.95, *, method: str = "auto"
    ) -> ConfidenceInterval:
        """Two-sided interval for the metric observed under the label noise.

        It describes where the metric computed on one noisy draw of the labels
        falls; it is not an interval for the metric on the true labels (see
        the truth estimand for that), and it ignores test-set sampling and
        cross-validation split variability. Every interval lies inside the
        metric's range (:data:`METRIC_RANGES`: [0, 1] for accuracy, MCC in
        [-1, 1], losses >= 0, R² <= 1).

        Parameters
        ----------
        confidence_level : float, default=0.95
            Probability mass of the interval, in the open interval (0, 1).
        method : {"auto", "exact", "normal"}, default="auto"
            ``"exact"``: the equal-tailed quantiles of the exact distribution
            of the metric (user guide: :ref:`exact_intervals`), ``low`` the
            largest value with ``P(metric < low) <= α/2`` and ``high`` the
            smallest with ``P(metric > high) <= α/2``, ``α = 1 -
            confidence_level``; raises a ``ValueError`` where the distribution
            is not known (see :attr:`interval_method`). ``"normal"``:
            ``expected ± z·std``, ``z = Φ⁻¹((1 + confidence_level)/2)``,
            clipped to the metric's range; ``(-inf, inf)`` clipped where the
            variance is infinite. ``"auto"``: ``"exact"`` where available,
            else ``"normal"``.

        Returns
        -------
        ConfidenceInterval
            The pair ``(low, high)``; its ``method`` says which construction
            was used and ``content`` the exact probability of the interval.
        """
        if not isinstance(confidence_level, (int, float)) or not (
            0.0 < confidence_level < 1.0
        ):
            raise ValueError(
                "confidence_level must be a number in the open interval (0, 1); "
                f"got {confidence_level!r}."
            )
        if method not in ("auto", *INTERVAL_METHODS):
            raise ValueError(
                f'method must be one of ("auto", "exact", "normal"); got {method!r}.'
            )
        if method == "auto":
            method = self.interval_method
        if method == "exact":
            if self.distribution is None:
                raise ValueError(
                    f"method='exact': the exact distribution of {self.metric} is "
                    "not available for this result (see the user guide, "
                    "'Exact intervals'); use method='normal' or 'auto'."
                )
            low, high, content = self.distribution.interval(float(confidence_level))
            return ConfidenceInterval(
                *clip_to_range(self.metric, low, high), "exact", content
            )
        if math.isinf(self.variance):
            low, high = -math.inf, math.inf
        else:
            half_width = float(ndtri(0.5 + confidence_level / 2.0)) * self.std
            low, high = self.expected - half_width, self.expected + half_width
        # Clipped to the range; an estimate outside it gives a point at the edge.
        return ConfidenceInterval(*clip_to_range(self.metric, low, high), "normal")

    def __float__(self) -> float:
        return self.expected

    def __repr__(self) -> str:
        return (
            f"NoisyScore(metric={self.metric!r}, expected={self.expected:.6g}, "
            f"std={self.std:.4g}, nominal={self.nominal:.6g}, "
            f"n_samples={self.n_samples}, method={self.method!r}"
            + ("" if self.estimand == "forward" else f", estimand={self.estimand!r}")
            + ")"
        )

    def _repr_html_(self) -> str:
        """A small table for notebooks: the estimate, its SD and interval."""
        low, high = self.confidence_interval(0.95)
        rows = [
            ("metric", self.metric),
            ("estimand", self.estimand),
            ("expected", f"{self.expected:.6g}"),
            ("SD (label noise)", f"{self.std:.4g}"),
            (
                "95 % label-noise interval",
                f"[{low:.6g}, {high:.6g}] ({self.interval_method})",
            ),
            ("nominal", f"{self.nominal:.6g}"),
            ("n_samples", str(self.n_samples)),
            ("method", self.method),
        ]
        cells = "".join(
            f"<tr><th style='text-align:left'>{escape(name)}</th>"
            f"<td style='text-align:right'>{escape(value)}</td></tr>"
            for name, value in rows
        )
        return f"<table class='sklearn-noisy-score'>{cells}</table>"

    def to_dict(self) -> dict[str, float | int | str]:
        """Return the fields and ``std`` as a JSON-serialisable dict."""
        return {
            "metric": self.metric,
            "expected": self.expected,
            "variance": self.variance,
            "std": self.std,
            "nominal": self.nominal,
            "n_samples": self.n_samples,
            "method": self.method,
            "estimand": self.estimand,
        }
