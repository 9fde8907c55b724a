"""The result object returned by every expected metric: :class:`NoisyScore`."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from html import escape
from typing import Any, Protocol

from scipy.special import ndtri, stdtrit

from .utils._validation import ESTIMANDS

__all__ = [
    "INTERVAL_METHODS",
    "METHODS",
    "METRIC_INTERVALS",
    "METRIC_RANGES",
    "SAMPLING_METHODS",
    "SOURCES",
    "ConfidenceInterval",
    "NoisyScore",
    "clip_to_range",
]

#: The ways an expected metric can be computed, as reported in ``NoisyScore.method``.
METHODS = ("exact", "delta", "monte_carlo", "conditional", "delta_bounded")

#: The ways a confidence interval can be built (``ConfidenceInterval.method``):
#: quantiles of the exact distribution of the metric over the label noise, the
#: normal approximation clipped to the metric's range, and for the accuracy's
#: test-set sampling Student's t (the variance estimated from the test set)
#: and the accuracy's binomial (Wald) and Wilson score intervals.
INTERVAL_METHODS = ("exact", "normal", "t", "binomial", "wilson")

#: The sources of uncertainty an interval can cover (``confidence_interval``).
SOURCES = ("label_noise", "sampling", "both")

#: How ``NoisyScore.sampling_variance`` was estimated: the variance of a mean
#: of per-sample terms (law of total variance), the delta method, or a
#: bootstrap over the test samples (user guide: :ref:`error_budget`).
SAMPLING_METHODS = ("per_sample_terms", "delta", "bootstrap")

#: The values each metric can take: every interval is clipped to them. Filled
#: from the registry's records (``MetricInfo.value_range``) when
#: :mod:`sklearn_noisy.metrics` is imported, which importing this package does.
METRIC_RANGES: dict[str, tuple[float, float]] = {}

#: The proportion intervals (``"binomial"``, ``"wilson"``) each metric offers
#: over the test-set sampling, filled the same way
#: (``MetricInfo.interval_methods``): the accuracy's.
METRIC_INTERVALS: dict[str, tuple[str, ...]] = {}


#: Stands for NaN in the fields compared by ``NoisyScore.__eq__``: equal to itself.
_NAN = object()


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


def _check_level(confidence_level: Any) -> None:
    if not isinstance(confidence_level, (int, float)) or not (
        0.0 < confidence_level < 1.0
    ):
        raise ValueError(
            "confidence_level must be a number in the open interval (0, 1); "
            f"got {confidence_level!r}."
        )


def _normal_interval(
    metric: str,
    centre: float,
    variance: float,
    confidence_level: float,
    dof: float = math.inf,
) -> tuple[float, float]:
    """``centre ± z·sqrt(variance)`` clipped to the range of ``metric``.

    ``z`` the normal quantile, or Student's for finite ``dof``.
    """
    p = 0.5 + confidence_level / 2.0
    z = float(ndtri(p)) if math.isinf(dof) else float(stdtrit(dof, p))
    if math.isinf(variance):
        low, high = -math.inf, math.inf
    else:
        half_width = z * math.sqrt(variance)
        low, high = centre - half_width, centre + half_width
    return clip_to_range(metric, low, high)


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
    method : {"exact", "normal", "t", "binomial", "wilson"}
        ``"exact"``: equal-tailed quantiles of the exact distribution of the
        metric over the label noise (user guide: :ref:`exact_intervals`).
        ``"normal"``: ``expected ± z·SD`` clipped to the metric's range.
        ``"t"``: the same with Student's quantile for ``sampling_dof``
        degrees of freedom (the test-set sampling variance is an estimate).
        ``"binomial"`` and ``"wilson"``: the accuracy's binomial (Wald) and
        Wilson score intervals over the test-set sampling (user guide:
        :ref:`error_budget`).
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
    labels only: the predictions are held fixed. Read more in the
    :ref:`User Guide <reading_results>`.

    Parameters
    ----------
    metric : str
        Name of the metric, e.g. ``"mean_squared_error"``.

    expected : float
        Expected value of the metric (or the estimate of ``estimand``).

    variance : float
        Variance of the metric over the label noise; ``inf`` where it does not
        exist.

    nominal : float
        The classical metric computed on the labels as given.

    n_samples : int
        Number of samples the metric was computed on.

    method : {"exact", "delta", "monte_carlo", "conditional", "delta_bounded"}, \
    default="exact"
        How ``expected`` and ``variance`` were computed: ``"conditional"``, the
        exact moments given an event the function states (the percentage
        errors: every noisy label away from 0); ``"delta_bounded"``, the delta
        method held at the bounds the moments it starts from put on it.

    estimand : {"forward", "truth", "remeasurement"}, default="forward"
        The question ``expected`` answers (:ref:`estimands`).

    distribution : object, default=None
        The exact distribution of the metric over the label noise, where known:
        anything with ``interval(confidence_level) -> (low, high, content)``.
        Left out of the repr, :meth:`to_dict`, comparisons and the hash.

    sampling_variance : float, default=nan
        Variance of ``expected`` over the test-set sampling
        (:ref:`error_budget`); NaN where it was not asked for.

    sampling_method : {"per_sample_terms", "delta", "bootstrap"} or None, \
    default=None
        How ``sampling_variance`` was estimated; None where it was not computed.

    sampling_dof : float, default=inf
        Degrees of freedom of the estimate of the test-set sampling variance,
        used by the intervals that include the sampling.

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
    sampling_variance: float = math.nan
    sampling_method: str | None = None
    sampling_dof: float = math.inf

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}; got {self.method!r}.")
        if self.sampling_method not in (None, *SAMPLING_METHODS):
            raise ValueError(
                f"sampling_method must be None or one of {SAMPLING_METHODS}; got "
                f"{self.sampling_method!r}."
            )
        sampling = self.sampling_variance
        object.__setattr__(
            self, "sampling_variance", math.nan if sampling is None else float(sampling)
        )
        dof = math.inf if self.sampling_dof is None else float(self.sampling_dof)
        if not dof > 0.0:
            raise ValueError(
                f"sampling_dof must be positive; got {self.sampling_dof!r}."
            )
        object.__setattr__(self, "sampling_dof", dof)
        if self.estimand not in ESTIMANDS:
            raise ValueError(
                f"estimand must be one of {ESTIMANDS}; got {self.estimand!r}."
            )
        # Store plain Python numbers: reprs, pickles and JSON stay simple.
        object.__setattr__(self, "expected", float(self.expected))
        object.__setattr__(self, "variance", float(self.variance))
        object.__setattr__(self, "nominal", float(self.nominal))
        object.__setattr__(self, "n_samples", int(self.n_samples))

    def __setstate__(self, state: dict[str, Any]) -> None:
        state.setdefault("sampling_variance", math.nan)
        state.setdefault("sampling_method", None)
        state.setdefault("sampling_dof", math.inf)
        self.__dict__.update(state)

    def _compared(self) -> tuple[Any, ...]:
        """The compared fields, each NaN replaced by one marker."""
        values = (getattr(self, f.name) for f in fields(self) if f.compare)
        return tuple(
            _NAN if isinstance(v, float) and math.isnan(v) else v for v in values
        )

    def __eq__(self, other: object) -> bool:
        # Field by field, a NaN in the same field on both sides counting as
        # equal: Python 3.13's dataclass __eq__ compares fields with ``==``,
        # where NaN != NaN, so the generated one would make two identical
        # results (and a result and its unpickled copy) unequal.
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._compared() == other._compared()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._compared())

    @property
    def std(self) -> float:
        """Standard deviation of the metric over the label noise."""
        return math.sqrt(self.variance)

    @property
    def sampling_std(self) -> float:
        """Standard deviation over the test-set sampling (NaN if not computed)."""
        return math.sqrt(self.sampling_variance)

    @property
    def total_variance(self) -> float:
        """``variance + sampling_variance``: both sources (NaN if not computed)."""
        return self.variance + self.sampling_variance

    @property
    def total_std(self) -> float:
        """Standard deviation of both sources together (NaN if not computed)."""
        return math.sqrt(self.total_variance)

    @property
    def interval_method(self) -> str:
        """How :meth:`confidence_interval` builds its default interval.

        ``"exact"`` where the exact distribution of the metric is known (see
        :ref:`exact_intervals`), else ``"normal"``.
        """
        return "normal" if self.distribution is None else "exact"

    def confidence_interval(
        self,
        confidence_level: float = 0.95,
        *,
        method: str = "auto",
        source: str = "label_noise",
    ) -> ConfidenceInterval:
        """Two-sided interval for the metric, from one source of uncertainty or both.

        ``source="label_noise"`` (default) describes where the metric computed on
        one noisy draw of the labels of these samples falls; ``"sampling"`` uses the
        test-set sampling variance alone and ``"both"`` adds the two. Every interval
        lies inside the metric's range. Read more in the
        :ref:`User Guide <error_budget_intervals>`.

        Parameters
        ----------
        confidence_level : float, default=0.95
            Probability mass of the interval, in the open interval (0, 1).

        method : {"auto", "exact", "normal", "t", "binomial", "wilson"}, \
        default="auto"
            ``"exact"`` (label noise only): equal-tailed quantiles of the exact
            distribution (:ref:`exact_intervals`; ``ValueError`` where it is not
            known). ``"normal"``: ``expected ± z·SD``. ``"t"`` (with the sampling):
            Student's quantile for :attr:`sampling_dof` degrees of freedom.
            ``"binomial"`` and ``"wilson"`` (accuracy, with the sampling): the Wald
            and Wilson score intervals. ``"auto"``: ``"exact"`` for the label noise
            where available, else ``"normal"``; ``"t"`` with the sampling.

        source : {"label_noise", "sampling", "both"}, default="label_noise"
            The uncertainty covered: :attr:`variance`, :attr:`sampling_variance` or
            their sum :attr:`total_variance`. The last two need a result computed
            with ``test_set_sampling``.

        Returns
        -------
        ConfidenceInterval
            The pair ``(low, high)``; its ``method`` says which construction was
            used and ``content`` the exact probability of the interval.
        """
        _check_level(confidence_level)
        if source not in SOURCES:
            raise ValueError(f"source must be one of {SOURCES}; got {source!r}.")
        if method not in ("auto", *INTERVAL_METHODS):
            raise ValueError(
                f"method must be one of {('auto', *INTERVAL_METHODS)}; got {method!r}."
            )
        if method == "auto":
            method = self.interval_method if source == "label_noise" else "t"
        variance = self._source_variance(source)
        if method == "t" and source == "label_noise":
            raise ValueError(
                "method='t' is for the intervals with the test-set sampling, whose "
                "variance is estimated; source='label_noise' takes 'exact' or "
                "'normal'."
            )
        if method == "exact":
            if source != "label_noise":
                raise ValueError(
                    "method='exact' is the exact distribution over the label noise; "
                    f"source={source!r} needs method 't', 'normal', 'binomial' or "
                    "'wilson'."
                )
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
        if method in ("binomial", "wilson"):
            return self._proportion_interval(confidence_level, method, source)
        dof = self.sampling_dof if method == "t" else math.inf
        return ConfidenceInterval(
            *_normal_interval(
                self.metric, self.expected, variance, confidence_level, dof
            ),
            method,
        )

    def prediction_interval(self, confidence_level: float = 0.95) -> ConfidenceInterval:
        """Interval for the metric of a new test set of the same size.

        Where the metric will fall when the whole evaluation is repeated on
        ``n_samples`` new samples from the same population, with new label noise:
        Student's t with :attr:`sampling_dof` degrees of freedom, clipped to the
        metric's range. Read more in the :ref:`User Guide <error_budget_intervals>`.

        Parameters
        ----------
        confidence_level : float, default=0.95
            Probability mass of the interval, in the open interval (0, 1).

        Returns
        -------
        ConfidenceInterval
            The pair ``(low, high)``, ``method="t"``.
        """
        _check_level(confidence_level)
        self._source_variance("both")  # needs the sampling variance
        label = 2.0 if self.estimand == "remeasurement" else 1.0
        variance = label * self.variance + 2.0 * self.sampling_variance
        return ConfidenceInterval(
            *_normal_interval(
                self.metric,
                self.expected,
                variance,
                confidence_level,
                self.sampling_dof,
            ),
            "t",
        )

    def _source_variance(self, source: str) -> float:
        if source == "label_noise":
            return self.variance
        if math.isnan(self.sampling_variance):
            raise ValueError(
                f"source={source!r} needs the test-set sampling variance: compute "
                "the score with test_set_sampling=True (user guide: 'The error "
                "budget')."
            )
        return self.sampling_variance if source == "sampling" else self.total_variance

    def _proportion_interval(
        self, confidence_level: float, method: str, source: str
    ) -> ConfidenceInterval:
        """The binomial (Wald) or Wilson interval of the accuracy (see above)."""
        offered = [m for m, methods in METRIC_INTERVALS.items() if method in methods]
        if self.metric not in offered or source == "label_noise":
            raise ValueError(
                f"method={method!r} is the {' or '.join(offered)}'s interval over "
                "the test-set sampling: it needs metric "
                f"{' or '.join(map(repr, offered))} and source 'sampling' or "
                f"'both'; got metric {self.metric!r} and source {source!r}."
            )
        p = min(max(self.expected, 0.0), 1.0)
        variance = self._source_variance(source)
        z = float(ndtri(0.5 + confidence_level / 2.0))
        if p * (1.0 - p) == 0.0:
            # p(1 - p)/V is undefined at p = 0 or 1: the test-set size, so that
            # Wilson's interval keeps its width there ([n/(n + z²), 1] at p = 1)
            n = float(self.n_samples)
        elif variance == 0.0:
            n = math.inf
        else:
            n = p * (1.0 - p) / variance
        if method == "binomial":
            half = z * math.sqrt(p * (1.0 - p) / n)
            low, high = p - half, p + half
        else:
            z2n = z * z / n
            centre = (p + z2n / 2.0) / (1.0 + z2n)
            half = z * math.sqrt(p * (1.0 - p) / n + z2n / (4.0 * n)) / (1.0 + z2n)
            low, high = centre - half, centre + half
        return ConfidenceInterval(*clip_to_range(self.metric, low, high), method)

    def __float__(self) -> float:
        return self.expected

    def __repr__(self) -> str:
        return (
            f"NoisyScore(metric={self.metric!r}, expected={self.expected:.6g}, "
            f"std={self.std:.4g}, nominal={self.nominal:.6g}, "
            f"n_samples={self.n_samples}, method={self.method!r}"
            + ("" if self.estimand == "forward" else f", estimand={self.estimand!r}")
            + (
                ""
                if self.sampling_method is None
                else f", sampling_std={self.sampling_std:.4g}"
            )
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
        if self.sampling_method is not None:
            low, high = self.confidence_interval(0.95, source="both")
            rows[5:5] = [
                ("SD (test-set sampling)", f"{self.sampling_std:.4g}"),
                ("95 % interval, both sources", f"[{low:.6g}, {high:.6g}]"),
            ]
            rows.append(("sampling method", self.sampling_method))
        cells = "".join(
            f"<tr><th style='text-align:left'>{escape(name)}</th>"
            f"<td style='text-align:right'>{escape(value)}</td></tr>"
            for name, value in rows
        )
        return f"<table class='sklearn-noisy-score'>{cells}</table>"

    def to_dict(self) -> dict[str, float | int | str]:
        """The fields, ``std`` and ``sampling_std`` as a JSON-serialisable dict."""
        return {
            "metric": self.metric,
            "expected": self.expected,
            "variance": self.variance,
            "std": self.std,
            "nominal": self.nominal,
            "n_samples": self.n_samples,
            "method": self.method,
            "estimand": self.estimand,
            # None (JSON null) where the test-set sampling was not computed
            "sampling_variance": None
            if self.sampling_method is None
            else self.sampling_variance,
            "sampling_std": None if self.sampling_method is None else self.sampling_std,
            "sampling_method": self.sampling_method,
            "sampling_dof": None if self.sampling_method is None else self.sampling_dof,
        }
