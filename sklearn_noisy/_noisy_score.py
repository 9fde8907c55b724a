"""The result object returned by every expected metric: :class:`NoisyScore`."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

from scipy.special import ndtri

from .utils._validation import ESTIMANDS

__all__ = ["METHODS", "ConfidenceInterval", "NoisyScore"]

#: The ways an expected metric can be computed, as reported in ``NoisyScore.method``.
METHODS = ("exact", "delta", "monte_carlo")


class ConfidenceInterval(NamedTuple):
    """Lower and upper bound of a confidence interval, as in :mod:`scipy.stats`."""

    low: float
    high: float


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
    >>> score.confidence_interval(0.95)
    ConfidenceInterval(low=0.78105..., high=0.84894...)
    """  # noqa: E501

    metric: str
    expected: float
    variance: float
    nominal: float
    n_samples: int
    method: str = "exact"
    estimand: str = "forward"

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

    def confidence_interval(self, confidence_level: float = 0.95) -> ConfidenceInterval:
        """Two-sided interval for the metric observed under the label noise.

        The interval is the normal approximation
        ``expected ± z * std`` with ``z = Φ⁻¹((1 + confidence_level) / 2)``. It
        describes where the metric computed on one noisy draw of the labels
        falls; it is not an interval for the metric on the true labels, and it
        ignores test-set sampling and cross-validation split variability. Where the
        variance is infinite the interval is ``(-inf, inf)``.

        Parameters
        ----------
        confidence_level : float, default=0.95
            Probability mass of the interval, in the open interval (0, 1).

        Returns
        -------
        ConfidenceInterval
            Named tuple ``(low, high)``.
        """
        if not isinstance(confidence_level, (int, float)) or not (
            0.0 < confidence_level < 1.0
        ):
            raise ValueError(
                "confidence_level must be a number in the open interval (0, 1); "
                f"got {confidence_level!r}."
            )
        if math.isinf(self.variance):
            return ConfidenceInterval(-math.inf, math.inf)
        half_width = float(ndtri(0.5 + confidence_level / 2.0)) * self.std
        return ConfidenceInterval(
            self.expected - half_width, self.expected + half_width
        )

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
