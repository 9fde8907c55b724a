"""The labels' reliability and the noise ceiling (:ref:`model_or_measurements`)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from typing import Any

import numpy as np
from scipy import stats

from ..utils._arrays import check_finite, check_sample_weight
from ..utils._noise import check_sigma, check_sigma_dof
from ..utils._validation import check_level, check_regression_target

__all__ = ["LabelReliability", "label_reliability"]


@dataclass(frozen=True)
class LabelReliability:
    """The share of the labels' variance that is signal, and the noise ceiling.

    Returned by :func:`label_reliability` (from σ) and
    :func:`~sklearn_noisy.preprocessing.repeat_reliability` (from the repeats).
    Read more in the :ref:`User Guide <model_or_measurements>`.

    Attributes
    ----------
    estimate : float
        The raw, unbiased estimate of the reliability ρ (can fall below 0).
    ci_low, ci_high : float
        The interval of ρ at ``confidence_level``, within ``[0, 1]``.
    method : str
        How ρ and its interval were computed.
    n_samples : float
        The number of samples (Kish's effective number when weighted).
    label_variance, noise_variance : float
        The labels' variance (``ddof=1``) and the mean of σ².
    confidence_level : float
        The level of the interval.

    Examples
    --------
    >>> from sklearn_noisy.metrics import LabelReliability
    >>> result = LabelReliability(0.9, 0.85, 0.94, "given", 101.0, 1.0, 0.1)
    >>> round(result.correlation_ceiling, 4), round(result.disattenuate(0.9), 4)
    (0.9487, 0.9487)
    """

    estimate: float
    ci_low: float
    ci_high: float
    method: str
    n_samples: float
    label_variance: float
    noise_variance: float
    confidence_level: float = 0.95

    def __post_init__(self) -> None:
        for field in fields(self):
            if field.name != "method":
                object.__setattr__(self, field.name, float(getattr(self, field.name)))

    @property
    def limit(self) -> str:
        """``"<"`` when the interval reaches 0: only an upper limit, ``ci_high``."""
        return "<" if self.ci_low <= 0.0 else ""

    @property
    def reliability(self) -> float:
        """ρ, or NaN for a limit (the data do not resolve it from 0)."""
        return math.nan if self.limit else min(max(self.estimate, 0.0), 1.0)

    def r2_ceiling_of(self, reliability: float) -> float:
        """The noise ceiling of R² at ``reliability``: ``1 − n/(n−1)·(1 − ρ)``."""
        n = self.n_samples
        return 1.0 - (1.0 - reliability) * n / (n - 1.0)

    @property
    def r2_ceiling(self) -> float:
        """The nominal R² a perfect model reaches on these labels (NaN: a limit)."""
        return self.r2_ceiling_of(self.reliability)

    @property
    def correlation_ceiling(self) -> float:
        """The Pearson correlation of a perfect model with the labels, ``√ρ``."""
        return math.sqrt(self.reliability)

    def disattenuate(self, correlation: float) -> float:
        """The noise-corrected correlation ``r / √ρ`` of predictions with the truth
        (NaN for a limit)."""
        return float(correlation) / math.sqrt(self.reliability)

    def to_dict(self) -> dict[str, Any]:
        """The fields, ``limit``, ``reliability`` and the ceilings as a dict."""
        return {
            **asdict(self),
            "limit": self.limit,
            "reliability": self.reliability,
            "r2_ceiling": self.r2_ceiling,
            "correlation_ceiling": self.correlation_ceiling,
        }


def unbiased(n_samples: float) -> float:
    """The factor ``(n − 3)/(n − 1)`` that makes ``1 − factor · noise / v`` unbiased."""
    return (n_samples - 3.0) / (n_samples - 1.0)


def label_reliability(
    y: Any,
    *,
    sigma: Any,
    sample_weight: Any = None,
    sigma_dof: Any = None,
    confidence_level: float = 0.95,
) -> LabelReliability:
    """The labels' reliability: the share of their variance that is signal.

    ``ρ = 1 − (n−3)/(n−1) · mean(σ²) / var(y)``, with a delta-method interval
    on ``log(1 − ρ)``; the result also gives the noise ceilings of R² and of
    the correlation. Read more in the :ref:`User Guide <model_or_measurements>`.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        The measured labels.
    sigma : float or array-like of shape (n_samples,)
        Standard error of each label.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative sample weights.
    sigma_dof : float or array-like of shape (n_samples,), default=None
        Degrees of freedom of each σ estimated from a few readings; None: σ
        known exactly.
    confidence_level : float, default=0.95
        Level of the interval.

    Returns
    -------
    result : LabelReliability
        The reliability, its interval and the noise ceilings.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_noisy.metrics import label_reliability
    >>> rng = np.random.default_rng(0)
    >>> truth = rng.normal(size=1000)
    >>> y = truth + rng.normal(scale=0.5, size=1000)  # true ρ = 1 / 1.25 = 0.8
    >>> result = label_reliability(y, sigma=0.5)
    >>> round(result.reliability, 3), round(result.ci_low, 3), round(result.ci_high, 3)
    (0.804, 0.785, 0.821)
    """
    check_level(confidence_level)
    y = check_regression_target(y, name="y")
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D; got an array of shape {y.shape}.")
    check_finite(y, name="y")
    n = y.shape[0]
    sigma = np.broadcast_to(check_sigma(sigma, (n,)), (n,))
    dof = check_sigma_dof(sigma_dof, n)
    weight = check_sample_weight(sample_weight, n)
    p = np.full(n, 1.0 / n) if weight is None else weight / weight.sum()
    n_eff = float(n) if weight is None else 1.0 / float(p @ p)
    if not n_eff > 3.0:
        raise ValueError(
            "label_reliability needs at least 4 samples (of positive weight) for a "
            f"variance and its uncertainty; got an effective number of {n_eff:.3g}."
        )
    centred = y - float(p @ y)
    squares = centred * centred
    moment2 = float(p @ squares)
    if not moment2 > 0.0:
        raise ValueError("y has no spread: its reliability is undefined.")
    variance = moment2 * n_eff / (n_eff - 1.0)
    noise = sigma * sigma
    mean_noise = float(p @ noise)
    moment4 = float(p @ (squares * squares)) / moment2**2
    log_var = max(moment4 - (n_eff - 3.0) / (n_eff - 1.0), 0.0) / n_eff
    if dof is not None and mean_noise > 0.0:  # Var(s²) = 2σ⁴/ν, unbiased 2s⁴/(ν+2)
        log_var += float((p * p) @ (2.0 * noise**2 / (dof + 2.0))) / mean_noise**2
    ratio = mean_noise / variance
    spread = math.exp(stats.norm.ppf(0.5 + confidence_level / 2.0) * log_var**0.5)
    return LabelReliability(
        1.0 - ratio * unbiased(n_eff),
        max(1.0 - ratio * spread, 0.0),
        1.0 - ratio / spread,
        "sigma: delta method on log(1 − reliability)",
        n_eff,
        variance,
        mean_noise,
        float(confidence_level),
    )
