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
from collections.abc import Callable
from typing import Any

import numpy as np

from ..._noisy_score import (
    METRIC_INTERVALS,
    PIVOT_MAX_SAMPLES,
    NoisyScore,
)
from ...utils._arrays import chunks
from ...utils._noise import GaussianNoise
from ...utils._validation import TEST_SET_SAMPLING, check_test_set_sampling
from ...utils._warnings import quiet, warn
from .sampling_pivots import DeferredPivot, new_set_dof

__all__ = [
    "add_test_set_sampling",
    "sampling_terms",
    "with_term_moments",
    "with_test_set_sampling",
]

#: Bootstrap resamples of the estimate (relative SE of the variance ≈ 10 %).
N_RESAMPLES = 200

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
    for its pivots on the log scale (:mod:`.sampling_pivots`); ``root_scale``:
    the MSE's pivot on the square-root scale; a label pivot with σ̂
    (``sigma_dof``) makes its own sampling pivot of it."""
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
