"""The label-noise variance of a nominal classification metric, without bias.

The ``"remeasurement"`` estimand (user guide: :ref:`estimands`) asks what the
metric will be when the samples are labelled again, the same way. The labels
``c̃`` we hold and a fresh set ``c̃'`` have the same law, so the nominal metric
is exactly unbiased for ``θ_R = E[metric(c̃', ŷ)]``. Its spread over
re-measurement depends on the unknown true classes ``c_i``; this module
estimates it without bias from one set of labels.

The principle: any per-sample function ``h(c_i)`` of the true class has the
unbiased estimate ``ĥ_i = Σ_k T⁻¹[c̃_i, k] h(k)``, since ``T⁻¹[c̃, :]`` is
unbiased for the one-hot vector of ``c`` (``T`` the sample's flip matrix; user
guide: :ref:`formula_truth`). Applied to

* a metric that is a weighted mean of per-sample terms (accuracy, Brier,
  log-loss): ``h(k)`` is the variance of the term when the true class is
  ``k``, which gives an unbiased estimate of the exact variance;
* the observed confusion matrix ``N[l, j] = Σ_{i: ŷ_i = j} w_i 1[c̃_i = l]``:
  the covariance of one sample's row ``e_{c̃_i}``, ``diag(p_i) − p_i p_iᵀ`` with
  ``p_i = T[c_i, :]``, is estimated without bias by
  ``diag(e_{c̃_i}) − Σ_k T⁻¹[c̃_i, k] T[k, :]ᵀ T[k, :]``. The variance of a
  metric of ``N`` follows by the delta method, as for the truth estimand.

A flip model that is singular (``q = (K−1)/K`` or a singular ``T``) has no
``T⁻¹``: no unbiased estimate exists and a ``ValueError`` says so.
"""

from __future__ import annotations

import numpy as np

from ..utils._arrays import chunks, read_only
from ..utils._noise import FlipNoise
from ._truth_counts import DenoisedConfusion

__all__ = [
    "check_remeasurable",
    "class_function_estimate",
    "observation_matrices",
    "observed_confusion",
]


def check_remeasurable(noise: FlipNoise) -> np.ndarray | None:
    """Raise a ``ValueError`` for a singular flip model; return ``T⁻¹`` or None.

    None for flips with ``q`` (whose inverse rows are computed per sample).
    """
    try:
        if noise.matrix is not None:
            return noise.inverse_matrix()
        noise.check_invertible()
    except ValueError as exc:
        raise ValueError(
            "estimand='remeasurement' estimates the spread of the metric over "
            "fresh labels from one set of labels, which needs an invertible flip "
            f"model, as estimand='truth' does: {exc}"
        ) from exc
    return None


def observation_matrices(noise: FlipNoise, rows: slice, size: int) -> np.ndarray:
    """The flip matrices ``T_i`` of a chunk, shape ``(size, K, K)``.

    ``T_i[k, j] = P(c̃_i = j | c_i = k)``.
    """
    n_classes = noise.n_classes
    if noise.matrix is not None:
        return np.broadcast_to(noise.matrix, (size, n_classes, n_classes))
    return np.stack(
        [
            noise.observation_rows(np.full(size, k, dtype=np.intp), rows)
            for k in range(n_classes)
        ],
        axis=1,
    )


def class_function_estimate(
    noise: FlipNoise,
    observed: np.ndarray,
    rows: slice,
    inverse: np.ndarray | None,
    values: np.ndarray,
) -> np.ndarray:
    """``ĥ_i = Σ_k T⁻¹[c̃_i, k] values[i, k]``: unbiased for ``values[i, c_i]``.

    ``observed`` holds the chunk's observed class positions, ``values`` the
    ``(n, K)`` per-sample function of the true class.
    """
    inverse_rows = noise.inverse_rows(observed, rows, inverse)
    return np.einsum("ik,ik->i", inverse_rows, values)


def observed_confusion(
    observed: np.ndarray,
    pred: np.ndarray,
    noise: FlipNoise,
    weight: np.ndarray | None = None,
) -> DenoisedConfusion:
    """The observed confusion matrix and the unbiased estimate of its covariance.

    ``counts[l, j] = Σ_{i: ŷ_i = j} w_i 1[c̃_i = l]`` (rows: observed label,
    columns: prediction) and ``covariance[j] = Σ_{i: ŷ_i = j} w_i² Ĉov_i`` with
    ``Ĉov_i = diag(e_{c̃_i}) − Σ_k T⁻¹[c̃_i, k] T_i[k, :]ᵀ T_i[k, :]``. The
    columns are independent. Inputs as for
    :func:`~._truth_counts.denoised_confusion`.
    """
    inverse = check_remeasurable(noise)
    n_classes = noise.n_classes
    counts = np.zeros((n_classes, n_classes))
    covariance = np.zeros((n_classes, n_classes, n_classes))
    for rows in chunks(observed.shape[0]):
        label, column = observed[rows], pred[rows]
        size = label.shape[0]
        w = np.ones(size) if weight is None else weight[rows]
        matrices = observation_matrices(noise, rows, size)
        inverse_rows = noise.inverse_rows(label, rows, inverse)
        # Σ_k T⁻¹[c̃_i, k] T_i[k, :]ᵀ T_i[k, :], weighted by w_i²
        second = np.einsum(
            "ik,ika,ikb->iab", (w * w)[:, None] * inverse_rows, matrices, matrices
        )
        np.add.at(counts, (label, column), w)
        np.add.at(covariance, (column, label, label), w * w)
        for j in range(n_classes):
            covariance[j] -= second[column == j].sum(axis=0)
    return DenoisedConfusion(read_only(counts), read_only(covariance))
