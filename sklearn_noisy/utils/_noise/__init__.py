"""The label-noise models, one per module, each validated once (``from_params``).

:class:`GaussianNoise` (σ, regression) with its :class:`SharedOffsets` (batch
offsets), :class:`FlipNoise` (``q`` or ``T``, classification),
:class:`PoissonNoise` (counts); the noise sources of a scorer.
"""

from typing import Any

from .._arrays import take_samples
from ._flips import (
    FlipNoise,
    FlipSampler,
    TransitionSampler,
    check_flip_probability,
    check_noise_model,
    check_transition_matrix,
    flip_rows,
)
from ._gaussian import GaussianNoise, GaussianSampler, check_sigma, check_sigma_dof
from ._poisson import PoissonNoise
from ._shared_offsets import SharedOffsets, check_shared_offsets
from ._sources import _source_repr, check_noise_source, resolve_noise_source

#: The two kinds of label noise: Gaussian errors (regression) and label flips
#: (classification). A metric's record in the registry names one of them.
NOISE_KINDS = ("sigma", "flips")

#: The values of the regression metrics' ``noise`` option: Gaussian errors of
#: a given ``sigma``, or counts whose variance is their mean.
REGRESSION_NOISE = ("gaussian", "poisson")


def check_regression_noise(noise: Any) -> str:
    """``noise`` as one of :data:`REGRESSION_NOISE`, or the ValueError naming it."""
    if not isinstance(noise, str) or noise not in REGRESSION_NOISE:
        raise ValueError(
            f"noise must be one of {REGRESSION_NOISE}: 'gaussian' (the standard "
            "error of each label given as sigma) or 'poisson' (count labels, "
            f"whose variance is the count itself); got {noise!r}."
        )
    return noise


__all__ = [
    "NOISE_KINDS",
    "REGRESSION_NOISE",
    "FlipNoise",
    "FlipSampler",
    "GaussianNoise",
    "GaussianSampler",
    "PoissonNoise",
    "SharedOffsets",
    "TransitionSampler",
    "_source_repr",
    "check_flip_probability",
    "check_noise_model",
    "check_noise_source",
    "check_regression_noise",
    "check_shared_offsets",
    "check_sigma",
    "check_sigma_dof",
    "check_transition_matrix",
    "flip_rows",
    "resolve_noise_source",
    "take_samples",
]
