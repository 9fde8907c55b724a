"""The result object returned by every expected metric: :class:`NoisyScore`."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from html import escape
from typing import Any

import numpy as np
from scipy.special import ndtri, stdtrit

from .utils._unified_interval import near_bound, unified_interval
from .utils._validation import ESTIMANDS, check_level

#: How an expected metric was computed (``NoisyScore.method``).
METHODS = ("exact", "delta", "monte_carlo", "conditional", "delta_bounded")

#: How a confidence interval was built (``ConfidenceInterval.method``).
INTERVAL_METHODS = (
    "exact",
    "normal",
    "t",
    "binomial",
    "wilson",
    "unified",
    "unified_sqrt",
    "bootstrap_t",
    "bootstrap_t_welch",
    "log_bootstrap_t",
    "cornish_fisher",
    "sqrt_bootstrap_t",
    "log_t",
    "log_complement",
    "log_cornish_fisher",
    "fiducial",
    "fiducial_unified",
    "fieller",
    "arcsine",
)

#: The ``method`` a caller may ask ``confidence_interval`` for.
_REQUESTABLE = ("auto", "exact", "normal", "t", "binomial", "wilson", "unified_sqrt")

#: The sides of an interval (``confidence_interval``'s ``alternative``).
ALTERNATIVES = ("two-sided", "less", "greater")

#: The sources of uncertainty an interval can cover (``confidence_interval``).
SOURCES = ("label_noise", "sampling", "both")

#: How ``NoisyScore.sampling_variance`` was estimated.
SAMPLING_METHODS = ("per_sample_terms", "delta", "bootstrap")

#: Each metric's values (``MetricInfo.value_range``): every interval is clipped to them.
METRIC_RANGES: dict[str, tuple[float, float]] = {}

#: The proportion intervals (``"binomial"``, ``"wilson"``) and skewed ones
#: (``"log_complement"``) each metric offers (``MetricInfo.interval_methods``).
METRIC_INTERVALS: dict[str, tuple[str, ...]] = {}


#: Stands for NaN in the fields compared by ``NoisyScore.__eq__``: equal to itself.
_NAN = object()


def clip_to_range(metric: str, low: float, high: float) -> tuple[float, float]:
    """``(low, high)`` clipped to the range of ``metric`` (:data:`METRIC_RANGES`).

    An interval wholly outside the range becomes the interval of half its width
    at the nearer end of the range, never a point.
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


def _check_choice(name: str, value: Any, choices: tuple[Any, ...]) -> None:
    if value not in choices:
        raise ValueError(f"{name} must be one of {choices}; got {value!r}.")


class ConfidenceInterval(tuple):
    """Lower and upper bound of a confidence interval, as in :mod:`scipy.stats`.

    A pair ``(low, high)`` that unpacks, indexes and compares as a 2-tuple.

    Attributes
    ----------
    low, high : float
        The bounds, inside the range of the metric.
    method : str
        One of ``INTERVAL_METHODS``: how it was built (:ref:`error_budget_intervals`).
    content : float
        The probability of ``[low, high]`` under the exact distribution of the
        metric; NaN for the approximations.
    """

    def __new__(
        cls,
        low: float,
        high: float,
        method: str = "normal",
        content: float = math.nan,
    ) -> ConfidenceInterval:
        _check_choice("method", method, INTERVAL_METHODS)
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


#: The probabilities of the studentized estimate's quantiles (both pivots).
PIVOT_PROBABILITIES = (0.005, 0.01, 0.025, 0.05, 0.1, 0.9, 0.95, 0.975, 0.99, 0.995)
#: The largest test set a skewed pivot is computed for (the bootstrap-t and
#: the Cornish-Fisher one): beyond it the skew of a mean, γ/√n, is small.
PIVOT_MAX_SAMPLES = 5000


def cornish_fisher_pivot(skew: float, covariance: float) -> tuple[float, ...] | None:
    """Cornish–Fisher quantiles of ``(T − θ)/ŝ`` at :data:`PIVOT_PROBABILITIES`
    from the skewness and ``Cov(T, ŝ²)/s³`` (:ref:`error_budget`); None if not
    finite."""
    if not (math.isfinite(skew) and math.isfinite(covariance)):
        return None
    z = ndtri(np.asarray(PIVOT_PROBABILITIES))
    limit = 0.45 / float(z[-1])
    quadratic = min(max((skew - 3.0 * covariance) / 6.0, -limit), limit)
    return tuple(float(v) for v in z - covariance / 2.0 + quadratic * (z * z - 1.0))


def _pivot_quantiles(
    quantiles: tuple[float, ...] | None, level: float
) -> tuple[float, float] | None:
    """The pivot's quantiles at ``(1 ∓ level)/2`` (interpolated), or None."""
    if not quantiles:  # None, or no resample drawn
        return None
    tail = (1.0 - level) / 2.0
    grid = np.asarray(PIVOT_PROBABILITIES)
    if not grid[0] <= tail <= grid[-1]:
        return None
    values = np.asarray(quantiles)
    return (
        float(np.interp(tail, grid, values)),
        float(np.interp(1.0 - tail, grid, values)),
    )


def _t_quantile(level: float, dof: float) -> float:
    """The upper two-sided ``level`` quantile of Student's t (normal: ``dof`` inf)."""
    p = 0.5 + level / 2.0
    return float(ndtri(p)) if math.isinf(dof) else float(stdtrit(dof, p))


def _log_scale(distance: float, half: float) -> np.ndarray:
    """``distance·exp(∓half/distance)``: a symmetric half-width ``half`` taken on
    the log scale of a positive distance (to 0, or to a metric's upper bound)."""
    return distance * np.exp([-half / distance, half / distance])


@dataclass(frozen=True, repr=False)
class NoisyScore:
    """Expected value and variance of a metric over the label noise.

    Returned by every ``expected_*`` metric; the predictions are held fixed.
    Read more in the :ref:`User Guide <reading_results>`.

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
        How ``expected`` and ``variance`` were computed.
    estimand : {"forward", "truth", "remeasurement"}, default="forward"
        The question ``expected`` answers (:ref:`estimands`).
    distribution : object, default=None
        The exact distribution of the metric where known, or the transform of
        a root metric's interval. Not compared, shown or hashed.
    sampling_variance : float, default=nan
        Variance of ``expected`` over the test-set sampling
        (:ref:`error_budget`); NaN where it was not computed.
    sampling_method : {"per_sample_terms", "delta", "bootstrap"} or None, \
default=None
        How ``sampling_variance`` was estimated.
    sampling_dof : float, default=inf
        Degrees of freedom of the estimate of ``sampling_variance``.
    sampling_pivot : sequence of float, default=None
        Quantiles of the studentized estimate over resamples (the
        bootstrap-t) for the interval with both sources. Not compared, shown
        or hashed.
    label_pivot : tuple of float, default=None
        The same quantiles over the label noise (Cornish–Fisher) for the
        label-noise interval of a truth or remeasurement estimate. Not
        compared, shown or hashed.

    Examples
    --------
    >>> from sklearn_noisy import NoisyScore
    >>> score = NoisyScore("accuracy", expected=0.815, variance=0.0003,
    ...                    nominal=0.85, n_samples=500)
    >>> score
    NoisyScore(metric='accuracy', expected=0.815, std=0.01732, nominal=0.85, n_samples=500, method='exact', estimand='forward')
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
    distribution: Any = field(default=None, compare=False)
    sampling_variance: float = math.nan
    sampling_method: str | None = None
    sampling_dof: float = math.inf
    sampling_pivot: tuple[float, ...] | None = field(default=None, compare=False)
    label_pivot: tuple[float, ...] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        _check_choice("method", self.method, METHODS)
        if self.sampling_method not in (None, *SAMPLING_METHODS):
            raise ValueError(
                f"sampling_method must be None or one of {SAMPLING_METHODS}; got "
                f"{self.sampling_method!r}."
            )
        sampling = self.sampling_variance
        sampling = math.nan if sampling is None else float(sampling)
        dof = math.inf if self.sampling_dof is None else float(self.sampling_dof)
        if not dof > 0.0:
            raise ValueError(
                f"sampling_dof must be positive; got {self.sampling_dof!r}."
            )
        _check_choice("estimand", self.estimand, ESTIMANDS)
        # Plain Python numbers: reprs, pickles and JSON stay simple.
        for name, value in (
            ("sampling_variance", sampling),
            ("sampling_dof", dof),
            ("expected", float(self.expected)),
            ("variance", float(self.variance)),
            ("nominal", float(self.nominal)),
            ("n_samples", int(self.n_samples)),
        ):
            object.__setattr__(self, name, value)

    def _compared(self) -> tuple[Any, ...]:
        """The compared fields, each NaN replaced by one marker."""
        values = (getattr(self, f.name) for f in fields(self) if f.compare)
        return tuple(
            _NAN if isinstance(v, float) and math.isnan(v) else v for v in values
        )

    def __eq__(self, other: object) -> bool:
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
    def _range(self) -> tuple[float, float]:
        return METRIC_RANGES.get(self.metric, (-math.inf, math.inf))

    @property
    def interval_method(self) -> str:
        """Where ``method="auto"`` starts: ``"exact"``, ``"unified_sqrt"`` (a root
        metric) or ``"normal"`` (an approximation; the interval's ``method``
        names it)."""
        if self.distribution is None:
            return "normal"
        return getattr(self.distribution, "method", "exact")

    def confidence_interval(
        self,
        confidence_level: float = 0.95,
        *,
        method: str = "auto",
        source: str = "label_noise",
        alternative: str = "two-sided",
    ) -> ConfidenceInterval:
        """Interval for the metric, from one source of uncertainty or both.

        Every interval lies inside the metric's range. Read more in the
        :ref:`User Guide <error_budget_intervals>`.

        Parameters
        ----------
        confidence_level : float, default=0.95
            Probability mass of the interval, in the open interval (0, 1).
        method : {"auto", "exact", "normal", "t", "binomial", "wilson", \
"unified_sqrt"}, default="auto"
            ``"auto"``: :attr:`interval_method` for the label noise, ``"t"``
            with the sampling; ``"binomial"`` and ``"wilson"`` are the
            accuracy's, with the sampling.
        source : {"label_noise", "sampling", "both"}, default="label_noise"
            The uncertainty covered: :attr:`variance`, :attr:`sampling_variance`
            or :attr:`total_variance`.
        alternative : {"two-sided", "less", "greater"}, default="two-sided"
            As in :mod:`scipy.stats`: ``"less"`` gives an upper limit,
            ``"greater"`` a lower limit, at ``confidence_level`` (> 0.5).

        Returns
        -------
        ConfidenceInterval
            The pair ``(low, high)`` with its ``method`` and ``content``.
        """
        check_level(confidence_level)
        _check_choice("source", source, SOURCES)
        _check_choice("method", method, _REQUESTABLE)
        _check_choice("alternative", alternative, ALTERNATIVES)
        if alternative != "two-sided":
            if not confidence_level > 0.5:
                raise ValueError(
                    f"alternative={alternative!r} needs confidence_level > 0.5; "
                    f"got {confidence_level!r}."
                )
            two = self.confidence_interval(
                2.0 * confidence_level - 1.0, method=method, source=source
            )
            lower, upper = self._range
            if alternative == "less":
                return ConfidenceInterval(lower, two.high, two.method)
            return ConfidenceInterval(two.low, upper, two.method)
        requested, variance = method, self._source_variance(source)
        if method == "auto" and source == "both" and self.sampling_variance == 0.0:
            source = getattr(self.sampling_pivot, "zero_source", "label_noise")
        if method == "auto":
            method = self.interval_method if source == "label_noise" else "t"
        if method == "t" and source == "label_noise":
            raise ValueError(
                "method='t' is for the intervals with the test-set sampling (an "
                "estimated variance); source='label_noise' takes 'exact', 'normal'."
            )
        if method == "unified_sqrt" and self.interval_method != method:
            raise ValueError(
                f"method='unified_sqrt' is a root metric's interval; that of this "
                f"{self.metric} result is {self.interval_method!r}."
            )
        if method == "exact":
            if source != "label_noise":
                raise ValueError(
                    "method='exact' is the exact distribution over the label noise; "
                    f"source={source!r} needs method 't', 'normal', 'binomial' or "
                    "'wilson'."
                )
            if self.interval_method != "exact":
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
        dof = self._dof(self.sampling_variance, variance) if method == "t" else math.inf
        pivot, pivot_method = None, getattr(self.sampling_pivot, "method", "")
        if source == "both" and requested == "auto":
            pivot = _pivot_quantiles(self.sampling_pivot, confidence_level)
            known = self._dof(self.sampling_variance, variance, math.inf)
            if pivot is not None and dof < known:  # Student's for the label part
                widen = _t_quantile(confidence_level, dof)
                widen /= _t_quantile(confidence_level, known)
                pivot = (pivot[0] * widen, pivot[1] * widen)
                pivot_method = "bootstrap_t_welch"
            log = self.estimand != "forward" and getattr(self.sampling_pivot, "log", 0)
            if log and (own := log(self, pivot, variance, confidence_level, dof)):
                return own  # R²'s, on the log scale from 1.5t SDs below 1
        elif source == "label_noise" and requested == "auto":
            pivot = _pivot_quantiles(self.label_pivot, confidence_level)
            pivot_method = getattr(self.label_pivot, "method", "cornish_fisher")
            variance *= getattr(self.label_pivot, "unbiased", 1.0)  # its own SD
            if (
                self.estimand != "forward"
                and pivot_method != "fiducial"
                and "log_complement" in METRIC_INTERVALS.get(self.metric, ())
            ):
                skewed = self._log_complement(
                    variance, confidence_level, 2.0, math.inf, pivot, pivot_method
                )
                if skewed is not None:
                    return skewed
                linear = getattr(self.label_pivot, "linear", None)
                pivot = _pivot_quantiles(linear, confidence_level)  # off the log
        return self._normal_interval(
            variance, confidence_level, dof, method, pivot, pivot_method
        )

    def _dof(self, sampling: float, total: float, label: float | None = None) -> float:
        """Welch–Satterthwaite's degrees of freedom of ``total``: ``sampling``
        with ``sampling_dof``, the label part ``total − sampling`` with
        ``label``, by default its pivot's ``both_dof`` (those of its part
        outside the sampling's terms; inf: known)."""
        if label is None:
            label = getattr(self.label_pivot, "both_dof", math.inf)
        if math.isfinite(label):
            spread = sampling**2 / self.sampling_dof + (total - sampling) ** 2 / label
            return total**2 / spread
        if sampling == 0.0:
            return math.inf
        return self.sampling_dof * (total / sampling) ** 2

    def prediction_interval(self, confidence_level: float = 0.95) -> ConfidenceInterval:
        """Interval for the metric of a new test set of the same size.

        Student's t (log scale: a positive metric far from 0; the MSE's bootstrap-t
        on the square-root scale; of ``1 − R²`` far from 1, forward: bootstrap-t; a
        count metric's skew; else arcsine-root): :ref:`error_budget_new_set`.

        Parameters
        ----------
        confidence_level : float, default=0.95
            Probability mass of the interval, in the open interval (0, 1).

        Returns
        -------
        ConfidenceInterval
            The pair ``(low, high)`` and its ``method``, from ``INTERVAL_METHODS``.
        """
        check_level(confidence_level)
        self._source_variance("both")  # needs the sampling variance
        label = getattr(self.label_pivot, "prediction_share", 1.0)  # forward σ̂'s
        label = 2.0 if self.estimand == "remeasurement" else label
        variance = label * self.variance + 2.0 * self.sampling_variance
        new = getattr(self.label_pivot, "prediction_dof", None)  # else both_dof
        dof = self._dof(2.0 * self.sampling_variance, variance, new)
        lower, upper = self._range
        counts = getattr(self.sampling_pivot, "prediction", None)  # its own: the MSE's
        if (lower, upper) == (0.0, math.inf) and math.isfinite(variance):
            t = _t_quantile(confidence_level, dof)
            estimate, sd = self.expected, math.sqrt(variance)
            root = self.interval_method == "unified_sqrt"
            if root:
                estimate, sd = self.distribution.estimate, sd * self.distribution.factor
            own = counts and counts(estimate, sd, confidence_level)
            if own or estimate > t * sd:
                own = own or ConfidenceInterval(*_log_scale(estimate, t * sd), "log_t")
                return ConfidenceInterval(*(np.sqrt(own) if root else own), own.method)
        near = 2.0 if self.estimand == "forward" else 1.5  # a new set's R² <= 1
        new = getattr(self.sampling_pivot, "new_set", lambda _: ())(confidence_level)
        skewed = self._log_complement(variance, confidence_level, near, dof, *new) or (
            counts and counts(self.expected, math.sqrt(variance), confidence_level)
        )
        if skewed is not None:
            return skewed
        width = upper - lower
        x = (self.expected - lower) / width  # NaN for an unbounded metric
        if 0.0 < x < 1.0 and math.isfinite(variance):
            # a proportion's variance-stabilizing scale, arcsin √x
            half = _t_quantile(confidence_level, dof) * math.sqrt(variance)
            half /= 2.0 * width * math.sqrt(x * (1.0 - x))
            angle = math.asin(math.sqrt(x)) + np.array([-half, half])
            low, high = lower + width * np.sin(np.clip(angle, 0.0, math.pi / 2)) ** 2
            return ConfidenceInterval(low, high, "arcsine")
        return self._normal_interval(variance, confidence_level, dof)

    def _log_complement(
        self, variance: float, level: float, near: float, dof: float, *pivot: Any
    ) -> ConfidenceInterval | None:
        """``upper − u·exp(∓t·SD/u)``, ``u = upper − expected`` (R²), or ``upper −
        u·exp(−q·SD/u)`` at ``pivot = (q, method)``, ``q`` of ``log u``; None off
        it, or within ``near·t`` SDs of the bound (the unified interval's region)."""
        if "log_complement" not in METRIC_INTERVALS.get(self.metric, ()):
            return None
        u = self._range[1] - self.expected
        half = _t_quantile(level, dof) * math.sqrt(variance)
        if not (math.isfinite(half) and u > near * half):
            return None
        if pivot and pivot[0] is not None:
            ends = u * np.exp(-math.sqrt(variance) / u * np.array(pivot[0][::-1]))
            high, low = self._range[1] - ends
            return ConfidenceInterval(low, high, f"log_{pivot[1]}")
        high, low = self._range[1] - _log_scale(u, half)
        return ConfidenceInterval(low, high, "log_complement")

    def _normal_interval(
        self,
        variance: float,
        level: float,
        dof: float,
        method: str = "t",
        pivot: tuple[float, float] | None = None,
        pivot_method: str = "bootstrap_t",
    ) -> ConfidenceInterval:
        """``expected ± z·sqrt(variance)`` (normal, or Student's for ``dof``), or
        from the ``pivot``'s quantiles; near a bound, Feldman and Cousins's
        unified interval for truth and remeasurement, clipped for forward."""
        z = _t_quantile(level, dof)
        sd = math.sqrt(variance) * z / _t_quantile(level, math.inf)
        root = math.sqrt(variance)
        if pivot is not None and math.isfinite(variance):
            method = pivot_method or "bootstrap_t"  # "": the terms' bootstrap-t
        # the pivot's own ends, not widened
        if method in ("fiducial", "fiducial_unified", "fieller", "sqrt_bootstrap_t"):
            root_metric = self.interval_method == "unified_sqrt"
            centre, scale = self.expected, root
            if root_metric:  # the MSE's ends, then their square roots
                centre, scale = self.distribution.estimate, self.distribution.factor
                scale *= root
            ends = np.clip(
                [centre - scale * pivot[1], centre - scale * pivot[0]], *self._range
            )
            ends[ends <= -1e299] = -np.inf  # the draws of an R² without a lower bound
            return ConfidenceInterval(*(np.sqrt(ends) if root_metric else ends), method)
        if math.isinf(variance):
            low, high = -math.inf, math.inf
        elif self.interval_method == "unified_sqrt":
            ends = None
            if pivot is not None and sd > 0.0:
                ends = (pivot[1] * root / sd, -pivot[0] * root / sd)
            low, high, _ = self.distribution.interval(level, sd, ends)
            return ConfidenceInterval(low, high, method)
        elif self.estimand != "forward":
            lower, upper = self._range
            ends = None if pivot is None else (root * pivot[1], -root * pivot[0])
            low, high = unified_interval(
                self.expected, sd, lower=lower, upper=upper, confidence=level, ends=ends
            )
            if near_bound(self.expected, sd, lower, upper, level):
                method = "unified"
            return ConfidenceInterval(low, high, method)
        elif pivot is not None:
            low = self.expected - root * pivot[1]
            high = self.expected - root * pivot[0]
        else:
            low, high = self.expected - z * root, self.expected + z * root
        return ConfidenceInterval(*clip_to_range(self.metric, low, high), method)

    def _source_variance(self, source: str) -> float:
        if source == "label_noise":
            return self.variance
        if math.isnan(self.sampling_variance):
            raise ValueError(
                f"source={source!r} needs the test-set sampling variance, which "
                "this score does not carry: it was computed with "
                "test_set_sampling=False, or with the default 'auto' for a call "
                "without a closed form of it. Compute it with "
                "test_set_sampling=True (the closed form, else a bootstrap) or "
                "'bootstrap' (user guide: 'The error budget')."
            )
        return self.sampling_variance if source == "sampling" else self.total_variance

    def _proportion_interval(
        self, confidence_level: float, method: str, source: str
    ) -> ConfidenceInterval:
        """The accuracy's binomial (Wald) or Wilson interval."""
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
            # p(1 - p)/V is undefined at p = 0 or 1: the test-set size.
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
        sampling = (
            ""
            if self.sampling_method is None
            else f", sampling_std={self.sampling_std:.4g}"
        )
        return (
            f"NoisyScore(metric={self.metric!r}, expected={self.expected:.6g}, "
            f"std={self.std:.4g}, nominal={self.nominal:.6g}, "
            f"n_samples={self.n_samples}, method={self.method!r}, "
            f"estimand={self.estimand!r}{sampling})"
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
        """The fields, ``std`` and ``sampling_std`` as a JSON-serialisable dict
        (the sampling entries None where not computed)."""
        sampled = self.sampling_method is not None
        return {
            "metric": self.metric,
            "expected": self.expected,
            "variance": self.variance,
            "std": self.std,
            "nominal": self.nominal,
            "n_samples": self.n_samples,
            "method": self.method,
            "estimand": self.estimand,
            "sampling_variance": self.sampling_variance if sampled else None,
            "sampling_std": self.sampling_std if sampled else None,
            "sampling_method": self.sampling_method,
            "sampling_dof": self.sampling_dof if sampled else None,
        }
