"""Batch offsets shared by every label of a batch (``groups``, ``sigma_shared``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._arrays import as_float_array, check_per_sample, encode_groups


@dataclass(frozen=True, eq=False)
class SharedOffsets:
    """Batch offsets ``b_g ~ N(0, τ_g²)`` shared by every label of batch ``g``.

    ``codes[i]``: sample ``i``'s batch, ``labels`` the batches' names, ``tau2``
    their ``τ_g²``, ``dof`` its degrees of freedom (None: known), ``common``:
    one estimate for every batch; ``fiducial``: the mean squares, their degrees
    of freedom and ``k`` of the estimate's one-way analysis (or None).
    """

    codes: np.ndarray
    labels: np.ndarray
    tau2: np.ndarray
    dof: float | None = None
    common: bool = False
    fiducial: tuple[float, int, float, int, float] | None = None

    def fiducial_tau2(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` draws of Weerahandi's generalized pivotal quantity for ``τ²``,
        ``(ν_B MS_B/χ²_{ν_B} − ν_W MS_W/χ²_{ν_W})/k`` truncated at 0."""
        ms_b, dof_b, ms_w, dof_w, k = self.fiducial  # type: ignore[misc]
        between = dof_b * ms_b / rng.chisquare(dof_b, n)
        return np.maximum(between - dof_w * ms_w / rng.chisquare(dof_w, n), 0.0) / k

    def tau2_covariance(self, a: np.ndarray, c: np.ndarray) -> np.ndarray:
        """Unbiased ``Cov(Σ_g a_g τ̂_g², Σ_g c_g τ̂_g²)``, coefficients ``(G, k)``
        (:ref:`shared_offsets`)."""
        if self.dof is None or not np.isfinite(self.dof):
            return np.zeros(np.shape(a)[1:])
        g = 2.0 * np.square(self.tau2) / (self.dof + 2.0)  # per batch
        if self.common:
            return g[0] * a.sum(axis=0) * c.sum(axis=0)
        return g @ (a * c)

    @property
    def n_groups(self) -> int:
        """The number of batches."""
        return int(self.labels.shape[0])

    def per_sample(self) -> np.ndarray:
        """``τ²`` of each sample's batch, shape ``(n_samples,)``."""
        return self.tau2[self.codes]

    def group_sum(self, values: np.ndarray) -> np.ndarray:
        """Per-batch sums of ``values`` (``(n,)`` or ``(n, k)``), shape ``(G, ...)``."""
        values = np.asarray(values, dtype=float)
        if values.ndim == 1:
            return np.bincount(self.codes, values, minlength=self.n_groups)
        return np.stack(
            [
                np.bincount(self.codes, values[:, j], minlength=self.n_groups)
                for j in range(values.shape[1])
            ],
            axis=1,
        )

    def take(self, indices: Any) -> SharedOffsets:
        """The offsets of the samples ``indices``, batches renumbered."""
        kept, codes = np.unique(self.codes[indices], return_inverse=True)
        return SharedOffsets(
            codes.reshape(-1),
            self.labels[kept],
            self.tau2[kept],
            self.dof,
            self.common,
            self.fiducial,
        )

    def draw(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        """Offsets ``b_{g(i)}`` for ``shape = (n_draws, n_samples[, n_outputs])``."""
        block = rng.standard_normal((shape[0], self.n_groups, *shape[2:]))
        scale = np.sqrt(self.tau2).reshape(-1, *[1] * (len(shape) - 2))
        return (block * scale)[:, self.codes]


def check_shared_offsets(
    groups: Any, sigma_shared: Any, n_samples: int, sigma_shared_dof: Any = None
) -> SharedOffsets | None:
    """Validate the batches and their offsets' SD (a scalar, ``{batch: τ_g}``,
    one value per sample or a ``BatchOffsetSummary``) and its degrees of
    freedom; None without any offset."""
    dof = fiducial = None
    if hasattr(sigma_shared, "batch_size"):  # a BatchOffsetSummary
        if sigma_shared_dof is not None:
            raise TypeError(
                "sigma_shared is a BatchOffsetSummary, which holds its degrees "
                "of freedom: do not also pass sigma_shared_dof."
            )
        if not (sigma_shared.batch_size > 0 and sigma_shared.batch_dof > 0):
            raise ValueError(
                "sigma_shared: a BatchOffsetSummary needs its batch_dof and "
                "batch_size, as summarize_batches returns it; got "
                f"{sigma_shared.batch_dof!r} and {sigma_shared.batch_size!r}."
            )
        summary, ms_w = sigma_shared, sigma_shared.sigma_within**2
        k, dof = summary.batch_size, summary.sigma_shared_dof or None
        fiducial = (
            ms_w + k * summary.tau2,
            summary.batch_dof,
            ms_w,
            summary.sigma_within_dof,
            k,
        )
        sigma_shared = summary.sigma_shared
    if sigma_shared_dof is not None:
        value = as_float_array(sigma_shared_dof, name="sigma_shared_dof")
        if value.ndim != 0:
            raise ValueError(
                "sigma_shared_dof must be one number (the degrees of freedom of "
                f"the estimate of sigma_shared); got shape {value.shape}."
            )
        dof = float(value)
        if not dof > 0:
            raise ValueError(
                f"sigma_shared_dof must be positive (inf: known); got {dof!r}."
            )
        if sigma_shared is None:
            raise TypeError("sigma_shared_dof needs sigma_shared and groups.")
    if groups is None and sigma_shared is None:
        return None
    if groups is None:
        raise TypeError(
            "sigma_shared (the SD of a batch's common offset) needs groups: pass "
            "the batch of each label as groups=."
        )
    if sigma_shared is None:
        raise TypeError(
            "groups (the batch of each label) describes shared offsets only with "
            "sigma_shared, the SD of a batch's common offset: pass both."
        )
    labels, codes = encode_groups(groups, n_samples)
    if isinstance(sigma_shared, dict):
        missing = [label for label in labels.tolist() if label not in sigma_shared]
        if missing:
            raise ValueError(
                f"sigma_shared has no value for the batch(es) {missing[:5]} of "
                f"groups; its keys are {list(sigma_shared)[:10]}."
            )
        tau = as_float_array(
            [sigma_shared[label] for label in labels.tolist()], name="sigma_shared"
        )
    else:
        shapes = "a scalar, a mapping {batch: SD} or one value per sample"
        values = check_per_sample(
            sigma_shared, n_samples, name="sigma_shared", shapes=shapes
        )
        if values.ndim == 0:
            tau = np.full(labels.shape[0], float(values))
        else:
            tau = np.zeros(labels.shape[0])
            tau[codes] = values
            if not np.array_equal(tau[codes], values, equal_nan=True):
                bad = int(np.argmax(tau[codes] != values))
                raise ValueError(
                    "sigma_shared given per sample must be one value per batch: "
                    f"batch {labels[codes[bad]]!r} has several (sample {bad})."
                )
    if not np.all(np.isfinite(tau)) or np.any(tau < 0):
        bad = int(np.argmax(~(np.isfinite(tau) & (tau >= 0))))
        raise ValueError(
            "sigma_shared must be finite and non-negative; got "
            f"{float(tau[bad])!r} for batch {labels[bad]!r}."
        )
    if not np.any(tau > 0) and fiducial is None:
        return None
    common = not isinstance(sigma_shared, dict) and np.unique(tau).size == 1
    return SharedOffsets(codes, labels, tau * tau, dof, common, fiducial)
