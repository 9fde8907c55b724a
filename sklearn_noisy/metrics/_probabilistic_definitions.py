"""The Brier score and the log-loss, each defined once, as the engines read them.

No engine knows a probabilistic loss by name: the exact engine
(:mod:`~sklearn_noisy.metrics._probabilistic`), the binary encoding of its
inputs (:mod:`~sklearn_noisy.metrics._probabilistic_inputs`) and the paired
kernel (:mod:`~sklearn_noisy.metrics._paired_kernels`) read its
:class:`ProbabilisticLoss`, which the registry record points at
(``MetricInfo.definition``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

__all__ = ["BRIER_SCORE_LOSS", "LOG_LOSS", "ProbabilisticLoss"]

# A loss maps a chunk of probabilities (n, n_columns) to the loss matrix
# (n, K): L[i, j] is the loss of sample i if its label is the j-th class.
Loss = Callable[[np.ndarray], np.ndarray]


def _brier_loss(eps: float) -> Loss:  # no clipping: eps unused
    return _brier_table


def _brier_table(proba: np.ndarray) -> np.ndarray:
    if proba.ndim == 1:  # binary: (y − p)², y ∈ {0, 1}
        return np.stack((proba * proba, (1.0 - proba) ** 2), axis=1)
    # Σ_c (p_c − 1[c = j])² = Σ_{c≠j} p_c² + (1 − p_j)²; halved for 2 classes
    squares = proba * proba
    loss = squares.sum(axis=1, keepdims=True) - squares + (1.0 - proba) ** 2
    if proba.shape[1] == 2:
        loss *= 0.5
    return loss


def _log_loss(eps: float) -> Loss:
    def loss(proba: np.ndarray) -> np.ndarray:
        clipped = np.clip(proba, eps, 1.0 - eps)
        if proba.ndim == 1:  # −log(1 − p), −log p: logit p = log p − log1p(−p)
            return np.stack((-np.log1p(-clipped), -np.log(clipped)), axis=1)
        return -np.log(clipped)

    return loss


@dataclass(frozen=True)
class ProbabilisticLoss:
    """One loss of predicted probabilities, as the engines read it.

    Parameters
    ----------
    name : str
        The registry name (``NoisyScore.metric``).
    loss : callable
        ``loss(eps) -> table``: ``table(proba)`` maps a chunk of probabilities
        (1-D: of the positive class; 2-D: one column per class) to the loss
        matrix ``L[i, j]``, the loss of sample ``i`` if its label is the
        ``j``-th class; ``eps`` is the machine epsilon of the probabilities'
        dtype, where a loss clips them (the log-loss, as scikit-learn).
    pos_label : bool
        Whether the binary loss is that of the positive class's probability
        (the Brier score): a 1-D ``y_proba`` is that of ``pos_label``, with
        scikit-learn's rules, and the paired kernel takes the last of two
        columns; else a 1-D ``y_proba`` is that of the greater class (the
        log-loss).
    scale_by_half : bool
        Whether the metric takes scikit-learn's ``scale_by_half`` option
        (halve the loss; by default for two classes).
    """

    #: What the paired comparison asks of any registry definition: no
    #: streamed difference, no existence condition.
    streamed_difference: ClassVar[Any] = None
    paired_existence: ClassVar[Any] = None

    name: str
    loss: Callable[[float], Loss]
    pos_label: bool = False
    scale_by_half: bool = False


#: The Brier score: ``Σ_c (p_c − 1[c = y])²``, halved for two classes.
BRIER_SCORE_LOSS = ProbabilisticLoss(
    "brier_score_loss", _brier_loss, pos_label=True, scale_by_half=True
)
#: The log-loss: ``−log p_y``, the probabilities clipped at the dtype's eps.
LOG_LOSS = ProbabilisticLoss("log_loss", _log_loss)
