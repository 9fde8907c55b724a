"""How sure a paired comparison is: the corrected resampled t-test of the
per-fold differences and the probability that one model is truly better."""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
from scipy import stats
from scipy.special import ndtr, stdtr

from .._noisy_score import NoisyScore

__all__ = [
    "PROBABILITY_METHODS",
    "CorrectedTTest",
    "corrected_t_test",
    "probability_better",
    "probability_text",
]


class CorrectedTTest(NamedTuple):
    """Nadeau–Bengio corrected resampled t-test of the per-fold differences.

    Read more in the :ref:`User Guide <paired_comparison>`.

    Parameters
    ----------
    statistic : float
        ``mean_difference / corrected_std_error``.
    pvalue : float
        Two-sided p-value from Student's t with ``df`` degrees of freedom.
    df : int
        Degrees of freedom, ``K − 1``.
    mean_difference : float
        Mean of the ``K`` per-fold differences.
    corrected_std_error : float
        ``sqrt((1/K + n_test/n_train) s²)``, ``s²`` their sample variance.

    Examples
    --------
    >>> from sklearn_noisy.model_selection import CorrectedTTest
    >>> CorrectedTTest(2.0, 0.116, 4, 0.02, 0.01).df
    4
    """

    statistic: float
    pvalue: float
    df: int
    mean_difference: float
    corrected_std_error: float


def corrected_t_test(differences: Any, n_train: float, n_test: float) -> CorrectedTTest:
    """Nadeau & Bengio (2003) corrected resampled t-test of per-fold
    ``differences`` (mean training and test sizes ``n_train``, ``n_test``).

    Equal differences give the statistic 0 (p = 1) if they are 0, else
    ``±inf`` (p = 0).
    """
    d = np.asarray(differences, dtype=np.float64)
    d = d[np.isfinite(d)]
    k = d.size
    if k < 2:
        return CorrectedTTest(math.nan, math.nan, max(k - 1, 0), math.nan, math.nan)
    mean = float(np.mean(d))
    # identical differences: exactly no spread (np.var would leave round-off)
    s2 = 0.0 if d.max() == d.min() else float(np.var(d, ddof=1))
    se = math.sqrt((1.0 / k + n_test / n_train) * s2)
    if se > 0.0:
        t = mean / se
        p = float(2.0 * stats.t.sf(abs(t), k - 1))
    elif mean == 0.0:
        t, p = 0.0, 1.0
    else:
        t, p = math.copysign(math.inf, mean), 0.0
    return CorrectedTTest(float(t), p, k - 1, mean, se)


PROBABILITY_METHODS = {
    "label_noise": "normal: Φ(d/SD), SD from the label noise only (no test-set "
    "sampling variance for this difference)",
    "sampling": "student_t: T(d/SD), SD from the label noise and the test-set sampling",
}


def probability_better(
    difference: NoisyScore, greater_is_better: bool
) -> tuple[float, str]:
    """``(probability, method)`` that ``a`` is truly better, for
    ``difference = a − b`` (:ref:`probability_better`).

    ``T(d/SD)`` with the label-noise and test-set sampling variances and the
    degrees of freedom of the ``"both"`` interval, else ``Φ(d/SD)`` with the
    label noise only; NaN where the difference or its variance is not finite.
    """
    gain = difference.expected if greater_is_better else -difference.expected
    sampling = difference.sampling_variance
    if math.isnan(sampling):
        variance, dof, kind = difference.variance, math.inf, "label_noise"
    else:
        variance, kind = difference.variance + sampling, "sampling"
        dof = difference._dof(sampling, variance)  # the "both" interval's
    method = PROBABILITY_METHODS[kind]
    if not (math.isfinite(gain) and math.isfinite(variance)):
        return math.nan, method
    if variance <= 0.0:
        return 0.5 + 0.5 * float(np.sign(gain)), method
    z = gain / math.sqrt(variance)
    return float(ndtr(z) if math.isinf(dof) else stdtr(dof, z)), method


def probability_text(probability: float) -> str:
    """``=0.97``; ``>0.999`` and ``<0.001`` at the ends (not a rounded 1 or 0)."""
    if probability > 0.999:
        return ">0.999"
    if probability < 0.001:
        return "<0.001"
    return f"={probability:.3g}"
