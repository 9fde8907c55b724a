"""The SD of a batch's shared offset, from reference samples read in several batches."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..utils._arrays import as_float_array, check_finite, encode_groups

__all__ = ["BatchOffsetSummary", "summarize_batches"]


@dataclass(frozen=True)
class BatchOffsetSummary:
    """The batch-offset and within-batch SDs of repeated reference readings.

    Pass it as ``sigma_shared`` (with the batches as ``groups``): the truth
    MSE and RMSE intervals then follow the estimate's uncertainty.

    Attributes
    ----------
    sigma_shared : float
        The SD of a batch's offset, ``sqrt(max(tau2, 0))``.
    sigma_shared_dof : float
        Satterthwaite's degrees of freedom of ``tau2`` (0 when ``tau2 <= 0``).
    tau2 : float
        The unbiased moment estimate of the offsets' variance (may be < 0).
    sigma_within : float
        The SD of one reading within a batch.
    sigma_within_dof : int
        Its degrees of freedom, ``n_readings - n_references - n_batches + 1``.
    n_batches, n_references, n_readings : int
        The design's sizes.
    batch_dof : int
        The degrees of freedom of the batches' mean square.
    batch_size : float
        The effective readings per batch, ``k`` in ``E[MS_batches] = σ_w² +
        k τ²`` (the readings per batch when balanced).
    """

    sigma_shared: float
    sigma_shared_dof: float
    tau2: float
    sigma_within: float
    sigma_within_dof: int
    n_batches: int
    n_references: int
    n_readings: int
    batch_dof: int = 0
    batch_size: float = 0.0


def _residual(design: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``(I − P) y``, ``P`` the projector on ``design``'s columns (any rank)."""
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    return y - design @ coef


def summarize_batches(
    readings: Any, batches: Any, *, references: Any = None
) -> BatchOffsetSummary:
    """Estimate the SD of a shared batch offset from repeated reference readings.

    Henderson's method III with Satterthwaite's degrees of freedom. Read more
    in the :ref:`User Guide <shared_offsets>`.

    Parameters
    ----------
    readings : array-like of shape (n_readings,)
        The readings of the reference samples.
    batches : array-like of shape (n_readings,)
        The batch (calibration run, day, instrument) of each reading.
    references : array-like of shape (n_readings,), default=None
        Which reference sample each reading is of; None: one reference.

    Returns
    -------
    summary : BatchOffsetSummary
        ``sigma_shared`` and its degrees of freedom, the within-batch SD.

    Examples
    --------
    >>> from sklearn_noisy.preprocessing import summarize_batches
    >>> readings = [10.1, 10.3, 9.6, 9.8, 10.9, 10.7]
    >>> summary = summarize_batches(readings, ["a", "a", "b", "b", "c", "c"])
    >>> round(summary.sigma_shared, 3), round(summary.sigma_within, 3)
    (0.542, 0.141)
    """
    y = as_float_array(readings, name="readings")
    if y.ndim != 1:
        raise ValueError(f"readings must be 1-D; got shape {y.shape}.")
    check_finite(y, name="readings")
    n = y.shape[0]
    batch_labels, batch = encode_groups(batches, n, name="batches")
    n_batches = batch_labels.shape[0]
    if references is None:
        reference, n_references = np.zeros(n, dtype=np.intp), 1
    else:
        reference_labels, reference = encode_groups(references, n, name="references")
        n_references = reference_labels.shape[0]
    within_dof = n - n_references - n_batches + 1
    if n_batches < 2 or within_dof < 1:
        raise ValueError(
            "summarize_batches needs at least two batches and more readings than "
            f"references + batches - 1 ({n_references + n_batches - 1}); got "
            f"{n_batches} batch(es) and {n} readings."
        )
    fixed = np.eye(n_references)[reference]
    batch_matrix = np.eye(n_batches)[batch]
    full = np.hstack([fixed, batch_matrix])
    ss_fixed = float(np.sum(np.square(_residual(fixed, y))))
    ss_full = float(np.sum(np.square(_residual(full, y))))
    rank = np.linalg.matrix_rank(full) - np.linalg.matrix_rank(fixed)
    # E[SS(batches | references)] = rank σ² + τ² tr(Zᵀ (I − P_R) Z)
    trace = float(np.sum(_residual(fixed, batch_matrix) * batch_matrix))
    ms_within = ss_full / within_dof
    ms_batches = (ss_fixed - ss_full) / rank
    tau2 = (ms_batches - ms_within) * rank / trace
    variance = (
        2.0 * (rank / trace) ** 2 * (ms_batches**2 / rank + ms_within**2 / within_dof)
    )
    dof = 2.0 * tau2 * tau2 / variance if tau2 > 0.0 and variance > 0.0 else 0.0
    return BatchOffsetSummary(
        sigma_shared=math.sqrt(max(tau2, 0.0)),
        sigma_shared_dof=float(dof),
        tau2=float(tau2),
        sigma_within=math.sqrt(ms_within),
        sigma_within_dof=int(within_dof),
        n_batches=n_batches,
        n_references=n_references,
        n_readings=n,
        batch_dof=int(rank),
        batch_size=float(trace / rank),
    )
