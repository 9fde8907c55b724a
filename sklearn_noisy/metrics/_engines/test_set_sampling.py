"""The test-set sampling part of the error budget: ``test_set_sampling=``.

A :class:`~sklearn_noisy.NoisyScore` carries ``sampling_variance``, the variance
of the estimate over the draw of the test samples (user guide:
:ref:`error_budget`): from the per-sample terms of a metric that is their
weighted mean (``"per_sample_terms"``), by the delta method (``"delta"``) or by
a seeded bootstrap over the test samples (``"bootstrap"``). The default,
``"auto"`` (``TEST_SET_SAMPLING`` of :mod:`sklearn_noisy.utils._validation`),
takes the first two where the call has them and no bootstrap; ``True`` adds the
bootstrap where they are missing.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import math
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from scipy.special import ndtri, stdtrit

from ..._noisy_score import (
    METRIC_INTERVALS,
    PIVOT_MAX_SAMPLES,
    PIVOT_PROBABILITIES,
    ConfidenceInterval,
    NoisyScore,
    _pivot_quantiles,
)
from ...utils._arrays import chunks
from ...utils._noise import GaussianNoise
from ...utils._validation import TEST_SET_SAMPLING, check_test_set_sampling
from ...utils._warnings import quiet, warn

__all__ = [
    "add_test_set_sampling",
    "sampling_terms",
    "with_term_moments",
    "with_test_set_sampling",
]

#: Bootstrap resamples of the estimate (relative SE of the variance ≈ 10 %).
N_RESAMPLES = 200
#: Resamples of the studentized mean of the per-sample terms.
N_PIVOT_RESAMPLES = 999

#: The arguments other than the first two that hold one value per sample.
_PER_SAMPLE = ("sigma", "q", "sigma_dof", "sample_weight", "groups", "sigma_shared")

_PARAMETER_DOC = """\
    test_set_sampling : "auto", bool or "bootstrap", default="auto"
        Also estimate the variance of the result over the sampling of the test
        set (``sampling_variance``, user guide: :ref:`error_budget`): from the
        per-sample terms where the metric is their mean (the law of total
        variance), else by the delta method (the ROC AUC: DeLong's).
        ``"auto"`` stops there: where the call has neither (a list of
        per-output or per-class results, a weighted or multiclass AUC, ...)
        the score carries no sampling part; ``True`` then takes a seeded
        bootstrap over the test samples; ``"bootstrap"`` always does;
        ``False`` computes none. With it ``confidence_interval(source=
        "sampling" or "both")`` and ``prediction_interval()`` are available.

"""

Terms = Callable[[dict[str, Any], NoisyScore], tuple[np.ndarray, Any, float] | None]
Hook = Callable[[dict[str, Any], NoisyScore], tuple[float, str, float] | None]


def mean_total_variance(
    h: np.ndarray, weight: np.ndarray | None
) -> tuple[float, float]:
    """:func:`total_variance` of the terms ``h`` (weights ``weight``)."""
    if h.shape[0] < 2:
        return math.nan, math.inf
    return total_variance(
        [
            term_moments(h[rows], None if weight is None else weight[rows])
            for rows in chunks(h.shape[0])
        ]
    )


def term_moments(
    h: np.ndarray, w: np.ndarray | None, work: np.ndarray | None = None
) -> np.ndarray:
    """A chunk's ``(n, W, Σw², c, Σw r², Σw r³, Σw r⁴, Σw² r, Σw² r²)`` of the
    terms ``h`` about their weighted mean ``c``, ``r = h − c`` (pairwise sums and
    einsum, no BLAS: its threads stall on a busy machine); ``work``: an array of
    ``h``'s shape to hold ``r²``, ``h`` is then overwritten by ``r``."""
    n = h.shape[0]
    w_sum = float(n) if w is None else float(np.sum(w))
    c = float(np.sum(h if w is None else w * h)) / w_sum
    r = np.subtract(h, c, out=None if work is None else h)
    if w is None:
        r2 = np.multiply(r, r, out=work)
        s2 = float(np.sum(r2))  # Σ r = 0 about c: left out
        s3 = float(np.einsum("i,i->", r, r2))
        s4 = float(np.einsum("i,i->", r2, r2))
        return np.array([n, n, n, c, s2, s3, s4, 0.0, s2])
    wr2 = w * r * r
    w2r = w * w * r
    sums = [np.sum(wr2), np.sum(wr2 * r), np.sum(wr2 * r * r), np.sum(w2r)]
    return np.array([n, w_sum, np.sum(w * w), c, *sums, np.sum(w2r * r)])


def total_variance(parts: list[np.ndarray]) -> tuple[float, float]:
    """``(V_total, dof)`` of a weighted mean of terms from its chunks'
    :func:`term_moments` shifted to the overall mean (Chan/Pébay); ``dof``:
    Satterthwaite's (:ref:`error_budget`)."""
    n, w_c, w2_c, c, s2, s3, s4, q1, q2 = np.array(parts).T
    n, w_sum, w2_sum = float(n.sum()), float(w_c.sum()), float(w2_c.sum())
    if n < 2:
        return math.nan, math.inf
    delta = c - (c[0] if len(parts) == 1 else float(w_c @ c) / w_sum)
    m2 = float(np.sum(s2 + w_c * delta**2)) / w_sum
    m4 = s4 + 4.0 * delta * s3 + 6.0 * delta**2 * s2 + w_c * delta**4
    m4 = float(np.sum(m4)) / w_sum
    shifted = float(np.sum(q2 + 2.0 * delta * q1 + w2_c * delta**2))
    total = shifted / w_sum**2 * n / (n - 1.0)
    kurtosis = m4 / (m2 * m2) if m2 * m2 > 0.0 else 1.0
    n_effective = w_sum * w_sum / w2_sum
    dof = 2.0 * n_effective / (kurtosis - 1.0) if kurtosis > 1.0 + 1e-12 else math.inf
    return total, dof


def studentized_quantiles(
    h: np.ndarray, weight: np.ndarray | None
) -> tuple[float, ...] | None:
    """Quantiles at :data:`PIVOT_PROBABILITIES` of ``(m* − m)/se*``, the
    studentized weighted mean of ``h`` over seeded resamples of the samples
    (the bootstrap-t; user guide: :ref:`error_budget_intervals`); None above
    :data:`PIVOT_MAX_SAMPLES` samples or below 10."""
    n = h.shape[0]
    if not 10 <= n <= PIVOT_MAX_SAMPLES or not np.all(np.isfinite(h)):
        return None
    w = None if weight is None else np.asarray(weight, dtype=np.float64)
    rng = np.random.default_rng(0)
    pivots = np.empty(N_PIVOT_RESAMPLES)
    centre = float(np.mean(h)) if w is None else float(w @ h) / float(w.sum())
    rows = max(1, 2_000_000 // n)
    for start in range(0, N_PIVOT_RESAMPLES, rows):
        size = min(rows, N_PIVOT_RESAMPLES - start)
        index = rng.integers(0, n, (size, n))
        hw = h[index]
        if w is None:  # unit weights: no gather of them (the default's cost)
            totals = np.full(size, float(n))
            means = hw.sum(axis=1) / totals
            spread = np.subtract(hw, means[:, None], out=hw)
        else:
            ww = w[index]
            totals = ww.sum(axis=1)
            means = np.einsum("ij,ij->i", ww, hw) / totals
            spread = ww * (hw - means[:, None])
        se = np.sqrt(np.einsum("ij,ij->i", spread, spread) * n / (n - 1.0)) / totals
        with np.errstate(divide="ignore", invalid="ignore"):
            pivots[start : start + size] = (means - centre) / se
    pivots = pivots[np.isfinite(pivots)]
    if pivots.size < N_PIVOT_RESAMPLES // 2:
        return None
    return tuple(float(v) for v in np.quantile(pivots, PIVOT_PROBABILITIES))


def _root_ends(estimate: float, sd: float, q: np.ndarray) -> np.ndarray:
    """``(√T − q·sd/(2√T))²``, 0 below 0: the ends at the pivot's ``q`` on the
    square-root scale of a positive estimate ``T`` of SD ``sd``."""
    root = math.sqrt(estimate)
    return np.square(np.maximum(root - sd / (2.0 * root) * np.asarray(q), 0.0))


class RootPivot(tuple):
    """The MSE's pivot (:func:`root_pivot`); ``student``: the quantiles ``q`` of
    :meth:`prediction` (the upper end's widened for the truth's new test set).
    The interval with both sources keeps it where the terms spread no more than
    the label noise (a sampling variance of 0: else the label-noise interval)."""

    method = "sqrt_bootstrap_t"
    zero_source = "both"
    student: tuple[float, ...] = ()

    def prediction(
        self, estimate: float, sd: float, level: float
    ) -> ConfidenceInterval | None:
        """The prediction interval on the square-root scale at the quantiles."""
        tail = (1.0 - level) / 2.0
        if not (PIVOT_PROBABILITIES[0] <= tail and estimate > 0.0 < sd < math.inf):
            return None
        q = np.interp([1.0 - tail, tail], PIVOT_PROBABILITIES, self.student)
        return ConfidenceInterval(*_root_ends(estimate, sd, q), self.method)


def student_factors(dof: float, upper_dof: float) -> list[np.ndarray]:
    """Student's ``t_ν(p)/z_p`` at :data:`PIVOT_PROBABILITIES` for ``ν`` each of
    ``dof`` and ``upper_dof``: the widening of a bootstrap-t's quantiles for the
    degrees of freedom of its variance estimate (:func:`root_pivot`)."""
    p = np.asarray(PIVOT_PROBABILITIES)
    return [stdtrit(v, p) / ndtri(p) for v in (dof, upper_dof)]


def root_pivot(
    quantiles: tuple[float, ...],
    dof: float,
    estimate: float,
    sd: float,
    upper_dof: float,
) -> tuple[float, ...]:
    """The MSE's bootstrap-t ``quantiles`` each times Student's ``t_dof(p)/z(p)``
    (``dof``: the terms' Satterthwaite degrees of freedom), taken on the
    square-root scale of the ``estimate`` (SD ``sd``): a :class:`RootPivot` of
    ``(T − (√T − q·sd/(2√T))²)/sd``; the plain quantiles for ``T <= 0``. Its
    ``student``, the prediction interval's, widens those of its upper end (below
    0.5) at ``upper_dof`` instead (:func:`with_term_moments`)."""
    if not (estimate > 0.0 and 0.0 < sd < math.inf):
        return quantiles
    p = np.asarray(PIVOT_PROBABILITIES)
    t = student_factors(dof, upper_dof)
    q = np.asarray(quantiles) * t[0]
    ends = _root_ends(estimate, sd, q)
    # an end at 0 an SD beyond it: clipped there whatever the SD's last digits
    pivot = RootPivot(
        (np.where(ends > 0.0, estimate - ends, estimate + sd) / sd).tolist()
    )
    pivot.student = tuple((q * np.where(p < 0.5, t[1] / t[0], 1.0)).tolist())
    return pivot


def new_set_dof(dof: float, label: float, sampling: float, total: float) -> float:
    """``dof·min((V_L + 2V_S)/(2V), 1)²``: the terms' degrees of freedom ``dof``
    for the end of a prediction interval that a new test set's tail widens (a
    label part ``V_L``, sampling ``V_S``, ``V`` the variance with both sources)."""
    return dof * min((label + 2.0 * sampling) / (2.0 * total), 1.0) ** 2


class RatioPivot(tuple):
    """R²'s pivot on the scale of ``log(1 − R²)`` (:func:`log_ratio_quantiles`);
    ``quantiles_new``: the forward prediction interval's (:func:`new_set_quantiles`).
    The interval with both sources keeps it where the terms spread no more than
    the label noise (a sampling variance of 0: else the label-noise interval)."""

    method = "log_bootstrap_t"
    zero_source = "both"
    quantiles_new: tuple[float, ...] = ()

    def new_set(self, level: float) -> tuple:
        """``(quantiles, "bootstrap_t")`` of the prediction interval at ``level``
        for ``NoisyScore._log_complement``, or ``()`` (not the forward R²)."""
        ends = _pivot_quantiles(self.quantiles_new, level)
        return () if ends is None else (ends, "bootstrap_t")

    @staticmethod
    def log(
        score: NoisyScore,
        pivot: tuple[float, float] | None,
        variance: float,
        level: float,
        dof: float,
    ) -> ConfidenceInterval | None:
        """The interval with both sources of ``score`` at ``pivot``, the pair of
        quantiles on R²'s scale, ``(e^{cx} − 1)/c``, taken onto the log scale of
        ``1 − R²`` from ``1.5t`` SDs below 1 (:meth:`NoisyScore._log_complement`,
        whose unified interval holds it nearer), each end at least at the
        estimate; None there or without ``pivot``."""
        if pivot is None:
            return None
        c = math.sqrt(variance) / (1.0 - score.expected)
        x = np.log1p(c * np.asarray(pivot)) / c
        q = (-max(float(x[1]), 0.0), -min(float(x[0]), 0.0))
        return score._log_complement(variance, level, 1.5, dof, q, "bootstrap_t")


def _log_ratio(
    d: np.ndarray, q: np.ndarray, w: np.ndarray | None, index: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``log(Ā/B̄)`` of each row of resampled ``index``, less the whole test set's,
    and its SE from the linearized terms ``a/Ā − b/B̄``: from ``q = b/B̄₀`` and
    ``d = a/Ā₀ − q`` (``Ā₀, B̄₀`` of the whole set), both times the weights ``w``;
    the spread expanded in ``d`` has no cancellation."""
    x, y = d.take(index), q.take(index)
    n = index.shape[1]
    total = np.full(index.shape[0], float(n)) if w is None else w.take(index).sum(1)
    mean_b = y.sum(axis=1) / total
    mean_a = x.sum(axis=1) / total + mean_b
    k = 1.0 / mean_a - 1.0 / mean_b
    xx, xy, yy = (np.einsum("ij,ij->i", *pair) for pair in ((x, x), (x, y), (y, y)))
    spread = xx / mean_a**2 + 2.0 * k * xy / mean_a + k * k * yy
    se = np.sqrt(np.maximum(spread, 0.0) * n / (n - 1.0)) / total
    return np.log(mean_a / mean_b), se


def log_ratio_quantiles(
    a: np.ndarray,
    b: np.ndarray,
    u: float,
    root: float,
    widen: tuple[float, float, float],
    new_set: tuple[float, float] | None,
    weight: np.ndarray | None,
) -> RatioPivot | None:
    """R²'s bootstrap-t on the scale of ``log(1 − R²) = log Ā − log B̄`` (terms
    ``a, b``; each resample studentized by its linearized terms): quantiles at
    :data:`PIVOT_PROBABILITIES` of ``x = −T``, ``log(u_population/u)`` in SEs,
    given on R²'s scale as ``(e^{cx} − 1)/c``, ``c``: the interval's SD ``root``
    over ``u = 1 − R²`` (user guide: :ref:`error_budget_intervals`), each
    times Student's ``t/z`` (:func:`student_factors`) at ``widen[0]`` degrees
    of freedom, those above 0.5 (R²'s lower limit) at ``widen[1]`` and times
    ``widen[2]``. None where the log is undefined or the test set is outside
    ``[10,`` :data:`PIVOT_MAX_SAMPLES` ``]``. ``new_set``: the forward estimand's
    label variance and :func:`new_set_dof`, for :func:`new_set_quantiles`."""
    n = a.shape[0]
    w = None if weight is None else np.asarray(weight, dtype=np.float64)
    means = [float(np.mean(v) if w is None else w @ v / w.sum()) for v in (a, b)]
    c = root / u if u > 0.0 and min(means) > 0.0 else 0.0
    if not (10 <= n <= PIVOT_MAX_SAMPLES and 0.0 < c < math.inf):
        return None
    q = b / means[1]
    d = a / means[0] - q
    if w is not None:
        d, q = w * d, w * q
    theta, _ = _log_ratio(d, q, w, np.arange(n)[None])
    rng = np.random.default_rng(0)
    draws = np.empty((2, N_PIVOT_RESAMPLES))
    rows = max(1, 50_000 // n)  # small blocks: 2.5 times faster at n = 100
    for start in range(0, N_PIVOT_RESAMPLES, rows):
        index = rng.integers(0, n, (min(rows, N_PIVOT_RESAMPLES - start), n))
        draws[:, start : start + index.shape[0]] = _log_ratio(d, q, w, index)
    x = (theta - draws[0]) / draws[1]
    x = x[np.isfinite(x)]
    if x.size < N_PIVOT_RESAMPLES // 2 or not np.isfinite(theta[0]):
        return None
    p = np.asarray(PIVOT_PROBABILITIES)
    t = student_factors(*widen[:2])
    x = np.quantile(x, p) * np.where(p > 0.5, t[1] * widen[2], t[0])
    pivot = RatioPivot(float(v) for v in np.expm1(c * x) / c)
    if new_set is not None:
        label = math.sqrt(new_set[0]) / u  # the new labels' SD of log(1 − R²)
        pivot.quantiles_new = new_set_quantiles(draws, label, new_set[1], rng)
    return pivot


def new_set_quantiles(
    draws: np.ndarray, label: float, dof: float, rng: np.random.Generator
) -> tuple[float, ...]:
    """The forward R²'s prediction pivot on the log scale: quantiles at
    :data:`PIVOT_PROBABILITIES` of ``−(θ*_{b−1} − θ*_b + label·Z)/√(label² + 2
    se*_b²)`` (``θ*, se*``: the resamples' ``log(1 − R²)`` and SE, ``draws``; one
    resample stands for the new test set, the next for this one, ``Z`` a normal
    for the new labels), those below 0.5 (a new set's R² low) times Student's
    ``t_dof(p)/z(p)`` (user guide: :ref:`error_budget_new_set`)."""
    theta, se = draws
    pivot = (np.roll(theta, 1) - theta + label * rng.standard_normal(theta.size)) / (
        np.sqrt(label * label + 2.0 * se * se)
    )
    pivot = -pivot[np.isfinite(pivot)]
    p = np.asarray(PIVOT_PROBABILITIES)  # at least Cauchy's tails
    widen = np.where(p < 0.5, stdtrit(max(dof, 1.0), p) / ndtri(p), 1.0)
    return tuple((np.quantile(pivot, p) * widen).tolist())


class DeferredPivot(Sequence):
    """:func:`studentized_quantiles` of ``(h, weight)``, drawn when first read
    (only the intervals with both sources read them), or R²'s
    :func:`log_ratio_quantiles` of ``ratio`` (``(a, b, u, SD)``) where they exist,
    or the MSE's :func:`root_pivot` of them and ``root`` (``(dof, T, SD,
    upper dof)``);
    pickled as the tuple."""

    __slots__ = ("_lock", "_terms", "_values")

    def __init__(
        self,
        h: np.ndarray,
        weight: np.ndarray | None,
        ratio: tuple | None = None,
        root: tuple | None = None,
    ) -> None:
        weight = None if weight is None else weight.copy()
        self._terms: tuple | None = (h, weight, ratio, root)
        self._values: tuple[float, ...] = ()
        self._lock = threading.Lock()

    def _quantiles(self) -> tuple[float, ...]:
        with self._lock:
            if self._terms is not None:
                h, weight, ratio, root = self._terms
                with np.errstate(all="ignore"):
                    found = ratio and log_ratio_quantiles(*ratio, weight)
                    found = found or studentized_quantiles(h, weight)
                    self._values = (root and found and root_pivot(found, *root)) or (
                        found or ()
                    )
                self._terms = None
        return self._values

    def __getattr__(self, name: str) -> Any:  # R²'s method
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._quantiles(), name)

    def __len__(self) -> int:
        return len(self._quantiles())

    def __getitem__(self, index: Any) -> Any:
        return self._quantiles()[index]

    def __reduce__(self) -> tuple:
        values = self._quantiles()
        return (type(values), (tuple(values),), getattr(values, "__dict__", None))

    def __repr__(self) -> str:
        return repr(self._quantiles())


def sampling_from_total(
    total: float, score: NoisyScore, label: float | None = None
) -> float:
    """``V_total`` less the label part ``label`` (default: the score's variance) of a
    truth or remeasurement estimate, >= 0 (:ref:`shared_offsets`)."""
    if score.estimand != "forward":
        total -= score.variance if label is None else label
    return max(total, 0.0) if not math.isnan(total) else math.nan


def _with_parameter_doc(doc: str | None) -> str | None:
    marker = "\n    Returns\n    -------"
    if doc is None or marker not in doc:  # None: python -OO
        return doc
    head, tail = doc.split(marker, 1)
    return head.rstrip() + "\n\n" + _PARAMETER_DOC.rstrip() + "\n" + marker + tail


def with_test_set_sampling(
    terms: Terms | None = None,
    *,
    method: str = "per_sample_terms",
    hook: Hook | None = None,
    label_arguments: tuple[str, ...] = (),
    data_arguments: int = 2,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: add the keyword ``test_set_sampling`` to an ``expected_*`` metric.

    Parameters
    ----------
    terms : callable, default=None
        ``terms(arguments, score) -> (h, weight, scale)``, the per-sample terms
        whose weighted mean is ``score.expected / scale`` (to first order), from
        the bound arguments of the call; or None (then the bootstrap).
    method : str, default="per_sample_terms"
        The ``sampling_method`` of the terms: ``"delta"`` where they are a
        first-order expansion of the metric.
    hook : callable, default=None
        ``hook(arguments, score) -> (sampling_variance, method, dof)`` or None
        (then the bootstrap), for another rule (the RMSE's delta method).
    label_arguments : tuple of str, default=()
        The arguments holding class labels: a bootstrap fixes ``labels`` to the
        classes they show (unless given, or the labels are floats).
    data_arguments : int, default=2
        The number of leading arguments with one value per sample (``y_true,
        y_pred``; 3 for a paired difference).
    """

    def decorate(function: Callable[..., Any]) -> Callable[..., Any]:
        signature = inspect.signature(function)
        # a function that takes the option computes the terms' moments itself
        passes = "test_set_sampling" in signature.parameters

        @functools.wraps(function)
        def wrapper(
            *args: Any, test_set_sampling: Any = TEST_SET_SAMPLING, **kwargs: Any
        ) -> Any:
            how = check_test_set_sampling(test_set_sampling)
            if passes:
                kwargs["test_set_sampling"] = how
            score = function(*args, **kwargs)
            if how is False or getattr(score, "sampling_method", None) is not None:
                return score
            arguments = _bound(signature, args, kwargs, score)
            if how != "bootstrap" and isinstance(score, NoisyScore):
                # at extreme scales the sampling part overflows to inf or
                # NaN: the metric's own call warned already
                with np.errstate(all="ignore"):
                    found = None if terms is None else terms(arguments, score)
                    if found is not None:
                        return _from_terms(found, score, method)
                    rule = None if hook is None else hook(arguments, score)
                if rule is not None:
                    return _with(score, *rule)
            if how == "auto":  # no closed form for this call: no bootstrap
                return score
            return _bootstrap(
                function, signature, arguments, score, label_arguments, data_arguments
            )

        parameter = inspect.Parameter(
            "test_set_sampling",
            inspect.Parameter.KEYWORD_ONLY,
            default=TEST_SET_SAMPLING,
        )
        others = [p for p in signature.parameters.values() if p.name != parameter.name]
        wrapper.__signature__ = signature.replace(  # type: ignore[attr-defined]
            parameters=[*others, parameter]
        )
        wrapper.__doc__ = _with_parameter_doc(function.__doc__)
        wrapper._sampling_terms = (terms, signature, method)  # type: ignore[attr-defined]
        return wrapper

    return decorate


def add_test_set_sampling(
    metric: Callable[..., Any],
    score: NoisyScore,
    /,
    *args: Any,
    test_set_sampling: Any = True,
    **kwargs: Any,
) -> NoisyScore:
    """``score = metric(*args, **kwargs)`` with its sampling variance, without
    computing the metric again where it is a mean of per-sample terms."""
    how = check_test_set_sampling(test_set_sampling)
    if how is False:
        return score
    terms, signature, method = getattr(metric, "_sampling_terms", (None,) * 3)
    found = None
    if how != "bootstrap" and terms is not None and isinstance(score, NoisyScore):
        with np.errstate(all="ignore"):
            found = terms(_bound(signature, args, kwargs, score), score)
    if found is None:
        new = metric(*args, test_set_sampling=how, **kwargs)
        fields = ("variance", "method", "dof", "pivot")
        return _with(score, *(getattr(new, f"sampling_{name}") for name in fields))
    with np.errstate(all="ignore"):
        return _from_terms(found, score, method)


def sampling_terms(
    metric: Callable[..., Any], score: NoisyScore, /, *args: Any, **kwargs: Any
) -> tuple[np.ndarray, Any, str] | None:
    """``(h, weight, method)`` of ``score = metric(*args, **kwargs)``: the
    per-sample terms of its sampling rule, scaled to the metric; None without."""
    terms, signature, method = getattr(metric, "_sampling_terms", (None,) * 3)
    if terms is None:
        return None
    found = terms(_bound(signature, args, kwargs, score), score)
    if found is None:
        return None
    h, weight, scale, method, *_ = _unpack(found, method)
    return h * scale, weight, method


def _unpack(found: tuple, method: str) -> tuple:
    """``(h, weight, scale, method, label, ratio, pivot)`` of a rule's ``(h,
    weight, scale[, method[, label[, ratio[, pivot]]]])``: its method overrides
    ``method`` where given; ``ratio``: R²'s terms ``(a, b)`` of ``1 − R² =
    Ā/B̄``; ``pivot``: the rule's own sampling pivot."""
    h, weight, scale, *override = found
    method = override[0] if override and override[0] is not None else method
    label, ratio, pivot = (*override[1:], None, None, None)[:3]
    return h, weight, scale, method, label, ratio, pivot


def _bound(
    signature: inspect.Signature, args: tuple, kwargs: dict[str, Any], score: Any
) -> dict[str, Any]:
    """The call's arguments, with the estimand ``"auto"`` resolved to the score's."""
    arguments = signature.bind(*args, **kwargs).arguments
    if "estimand" in signature.parameters:
        first = score[0] if isinstance(score, list) else score
        arguments["estimand"] = first.estimand
    return arguments


def _from_terms(found: tuple, score: NoisyScore, method: str) -> NoisyScore:
    """``score`` with the sampling variance of its per-sample terms ``found``
    (``(h, weight, scale)``, or with the method that overrides ``method``, and
    the label variance the terms' spread holds where it is not the score's)."""
    h, weight, scale, method, label, ratio, pivot = _unpack(found, method)
    moments = mean_total_variance(h, weight)
    return with_term_moments(
        score, moments, h, weight, method, scale, label, ratio, pivot
    )


def with_term_moments(
    score: NoisyScore,
    moments: tuple[float, float],
    h: np.ndarray | None,
    weight: np.ndarray | None,
    method: str = "per_sample_terms",
    scale: float = 1.0,
    label: float | None = None,
    ratio: tuple[np.ndarray, np.ndarray] | None = None,
    pivot: Any = None,
    root_scale: bool = False,
) -> NoisyScore:
    """``score`` with the sampling part of its terms' ``moments`` ``(V_total,
    dof)``, whose degrees of freedom are those of ``V_total`` less a known
    label part (Satterthwaite: ``dof (S/V_total)²``); ``h``, the terms
    themselves, for the pivot of a small test set; ``ratio``: R²'s ``(a, b)``
    for its pivots on the log scale (:func:`log_ratio_quantiles`);
    ``root_scale``: the MSE's pivot, :func:`root_pivot`; a label pivot with
    σ̂ (``sigma_dof``) makes its own sampling pivot of it."""
    total, dof = moments
    terms_dof = dof
    total = total * scale * scale
    variance = sampling_from_total(total, score, label)
    if variance < total:  # a difference of V_total and a known part
        dof = dof * (variance / total) ** 2 if variance > 0.0 else math.inf
    if pivot is None and h is not None and 10 <= h.shape[0] <= PIVOT_MAX_SAMPLES:
        root = math.sqrt(score.variance + variance)  # the interval's SD
        if "log_complement" not in METRIC_INTERVALS.get(score.metric, ()):
            ratio = None  # R² only (its label-noise interval is on that scale)
        upper = terms_dof  # the truth's: its new set's 2 V_S of V_L + 2 V_S
        if total > 0.0 and (score.estimand == "truth" or ratio):
            upper = new_set_dof(terms_dof, score.variance, variance, total)
        widen, new_set = (math.inf, math.inf, 1.0), None  # R²'s pivots
        if score.estimand == "forward" and root > 0.0:  # its prediction's
            new_set = (
                score.variance,
                new_set_dof(terms_dof, score.variance, variance, root * root),
            )
        elif root > 0.0:
            # its lower limit at a sampling part of at least half the SE of the
            # terms' V_total, V_total·√(2/ν)/2 (a heavy tail a test set lacks)
            floor = max(variance, total * math.sqrt(0.5 / terms_dof))
            widen = (terms_dof, upper, math.sqrt(score.variance + floor) / root)
        ratio = ratio and (*ratio, 1.0 - score.expected, root, widen, new_set)
        root_of = None
        if root_scale and total > 0.0:
            root_of = (terms_dof, score.expected, root, upper)
        pivot = DeferredPivot(h * np.sign(scale), weight, ratio, root_of)
    if pivot is not None and hasattr(score.label_pivot, "sampling_pivot"):  # σ̂'s
        pivot = score.label_pivot.sampling_pivot(pivot, score, variance, terms_dof)
    return _with(score, variance, method, dof, pivot)


def _with(
    score: NoisyScore,
    variance: float,
    method: str,
    dof: float = math.inf,
    pivot: tuple[float, ...] | None = None,
) -> NoisyScore:
    return dataclasses.replace(
        score,
        sampling_variance=variance,
        sampling_method=method,
        sampling_dof=dof,
        sampling_pivot=pivot,
    )


def _per_sample(value: Any, n: int) -> bool:
    return (
        value is not None
        and not isinstance(value, (str, bytes, int, float))
        and np.ndim(value) >= 1
        and np.shape(value)[0] == n
    )


def _bootstrap(
    function: Callable[..., Any],
    signature: inspect.Signature,
    arguments: dict[str, Any],
    score: Any,
    label_arguments: tuple[str, ...],
    data_arguments: int,
) -> Any:
    """The seeded bootstrap over the test samples, for one score or a list; the
    classes fixed to those of the whole test set."""
    names = list(signature.parameters)
    data = {name: np.asarray(arguments[name]) for name in names[:data_arguments]}
    n = data[names[0]].shape[0]
    for name in _PER_SAMPLE:
        value = arguments.get(name)
        if isinstance(value, GaussianNoise):  # validated: resampled as it is
            if not value.is_constant or value.shared is not None:
                data[name] = value
        elif _per_sample(value, n):
            data[name] = np.asarray(value)
    fixed = {
        k: v for k, v in arguments.items() if k not in data and k != "test_set_sampling"
    }
    given = [data[a].ravel() for a in label_arguments]
    if (
        given
        and "labels" in names
        and fixed.get("labels") is None
        and not any(values.dtype.kind in "fc" for values in given)
    ):
        fixed["labels"] = np.unique(np.concatenate(given))
    scores = score if isinstance(score, list) else [score]
    rng = np.random.default_rng(0)
    draws = np.full((N_RESAMPLES, len(scores)), np.nan)
    # The resamples' warnings repeat those of the call on the whole test set:
    # left out in this thread only (no change to the warning filters).
    with quiet(), np.errstate(all="ignore"):
        for b in range(N_RESAMPLES):
            index = rng.integers(0, n, n)
            resample = {
                k: v.take(index) if isinstance(v, GaussianNoise) else v[index]
                for k, v in data.items()
            }
            try:
                result = function(**resample, **fixed)
            except (ValueError, ZeroDivisionError, FloatingPointError):
                continue
            results = result if isinstance(result, list) else [result]
            draws[b] = [r.expected for r in results]
    finite = np.isfinite(draws).all(axis=1)
    if finite.sum() < N_RESAMPLES:
        warn(
            f"test_set_sampling: {N_RESAMPLES - int(finite.sum())} of {N_RESAMPLES} "
            "bootstrap resamples of the test set gave no finite estimate and were "
            "left out.",
            UserWarning,
        )
    out = []
    for j, s in enumerate(scores):
        if finite.sum() < 2:
            variance = math.nan
        else:
            variance = sampling_from_total(float(np.var(draws[finite, j], ddof=1)), s)
        out.append(_with(s, variance, "bootstrap"))
    return out if isinstance(score, list) else out[0]
