"""The label-noise models: Gaussian errors for regression, flips for classification.

:class:`GaussianNoise` (``ỹ_i ~ N(y_i, σ_i²)``) and :class:`FlipNoise` (a flip
probability ``q`` or a row-stochastic transition matrix ``T``) validate their
parameters once (``from_params``), give the per-sample quantities the kernels
need chunk by chunk, take a fold's samples and draw labels for Monte Carlo.
:func:`resolve_noise_source` finds the noise of a scorer or the command line.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._arrays import (
    _check_length,
    as_float_array,
    check_finite,
    chunk_of,
    chunks,
)
from ._warnings import warn

#: The two kinds of label noise: Gaussian errors (regression) and label flips
#: (classification). A metric's record in the registry names one of them.
NOISE_KINDS = ("sigma", "flips")

#: A flip model whose inverse would be scaled by more than 1e12 is treated as
#: singular (no unbiased de-noising exists).
_SINGULAR_TOL = 1e-12


def check_sigma(
    sigma: Any,
    shape: tuple[int, ...],
    *,
    name: str = "sigma",
    ensure_finite: bool = True,
) -> Any:
    """Validate the label standard errors: a Python float or a float64 array.

    An array has shape ``(n_samples,)`` (a column when ``shape`` is 2-D) or
    ``shape``. ``ensure_finite=False`` skips the NaN/inf scan of an array.
    """
    if sigma is None:
        raise TypeError(
            f"{name} is required: pass the standard error of each label (a scalar "
            "or one value per sample; 0 means the label is exact)."
        )
    array = as_float_array(sigma, name=name)
    n_samples = shape[0]
    if array.ndim == 0:
        value = float(array)
        if not np.isfinite(value):
            raise ValueError(f"{name} must be finite; got {value!r}.")
        if value < 0:
            raise ValueError(f"{name} must be non-negative; got {value!r}.")
        return value
    if array.ndim > 2 or (array.ndim == 2 and array.shape != shape):
        raise ValueError(
            f"{name} must be a scalar, an array of shape ({n_samples},) or "
            f"{shape}; got shape {array.shape}."
        )
    _check_length(array, n_samples, name=name)
    if ensure_finite:
        check_finite(array, name=name)
    if array.min() < 0:
        raise ValueError(
            f"{name} must be non-negative (0 means an exact label); the smallest "
            f"value is {float(array.min())!r} at index {int(np.argmin(array))}."
        )
    if len(shape) == 2 and array.ndim == 1:
        array = array[:, None]
    return array


def check_flip_probability(q: Any, n_samples: int, *, name: str = "q") -> Any:
    """Validate a flip probability in [0, 1]: a Python float or a 1-D array."""
    array = as_float_array(q, name=name)
    if array.ndim == 0:
        value = float(array)
        if not 0.0 <= value <= 1.0:  # also rejects NaN
            raise ValueError(f"{name} must be a probability in [0, 1]; got {value!r}.")
        return value
    if array.ndim != 1:
        raise ValueError(
            f"{name} must be a scalar or a 1-D array with one flip probability per "
            f"sample; got shape {array.shape}."
        )
    _check_length(array, n_samples, name=name)
    check_finite(array, name=name)
    low, high = array.min(), array.max()
    if low < 0.0 or high > 1.0:
        bad = int(np.argmax((array < 0.0) | (array > 1.0)))
        raise ValueError(
            f"{name} must hold probabilities in [0, 1]; got "
            f"{float(array[bad])!r} at index {bad}."
        )
    return array


def check_transition_matrix(
    transition_matrix: Any, n_classes: int | None = None
) -> np.ndarray:
    """Validate a row-stochastic transition matrix (any square size for None).

    ``T[j, k]`` is the probability that a sample of the ``j``-th class is
    observed with the ``k``-th label.
    """
    given_dtype = getattr(transition_matrix, "dtype", None)
    matrix = as_float_array(transition_matrix, name="transition_matrix")
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
        raise ValueError(
            f"transition_matrix must be a square 2-D array; got shape {matrix.shape}."
        )
    if n_classes is not None and matrix.shape[0] != n_classes:
        raise ValueError(
            f"transition_matrix must be {n_classes} x {n_classes}, one row and "
            f"column per label in `labels` order; got shape {matrix.shape}."
        )
    check_finite(matrix, name="transition_matrix")
    if matrix.min() < 0 or matrix.max() > 1:
        raise ValueError("transition_matrix entries must be probabilities in [0, 1].")
    row_sums = matrix.sum(axis=1)
    # Row sums are exact to the precision of the given dtype (float32: K eps).
    tolerance = 1e-9
    if given_dtype is not None and np.dtype(given_dtype).kind == "f":
        tolerance = max(tolerance, 4.0 * matrix.shape[0] * np.finfo(given_dtype).eps)
    if not np.allclose(row_sums, 1.0, rtol=0, atol=tolerance):
        bad = int(np.argmax(np.abs(row_sums - 1.0)))
        raise ValueError(
            "transition_matrix must be row-stochastic (each row sums to 1); row "
            f"{bad} sums to {float(row_sums[bad])!r}."
        )
    return matrix


def check_noise_model(q: Any, transition_matrix: Any) -> None:
    """Require exactly one of ``q`` and ``transition_matrix``."""
    if q is None and transition_matrix is None:
        raise TypeError(
            "Pass the label noise: q (a flip probability, scalar or per sample) or "
            "transition_matrix (a row-stochastic K x K matrix)."
        )
    if q is not None and transition_matrix is not None:
        raise TypeError("Pass either q or transition_matrix, not both.")


def take_samples(values: Any, indices: Any) -> Any:
    """Rows ``indices`` of a per-sample array; scalars and None pass through."""
    if isinstance(values, np.ndarray) and values.ndim > 0:
        return values[indices]
    return values


def check_sigma_dof(sigma_dof: Any, n_samples: int) -> Any:
    """Validate the degrees of freedom of σ: None (σ known), a float or an array."""
    if sigma_dof is None:
        return None
    array = as_float_array(sigma_dof, name="sigma_dof")
    if array.ndim > 1:
        raise ValueError(
            f"sigma_dof must be a scalar or an array of shape ({n_samples},); got "
            f"shape {array.shape}."
        )
    if array.ndim == 1:
        _check_length(array, n_samples, name="sigma_dof")
    bad = np.ravel(array)[~(np.ravel(array) > 0)]
    if bad.size:
        raise ValueError(
            f"sigma_dof must be positive (inf: sigma known); got {float(bad[0])!r}."
        )
    return float(array) if array.ndim == 0 else array


@dataclass(frozen=True, eq=False)
class SharedOffsets:
    """Batch offsets ``b_g ~ N(0, τ_g²)`` shared by every label of batch ``g``.

    ``codes[i]`` is sample ``i``'s batch (``0 .. n_groups - 1``), ``labels`` the
    batches' names and ``tau2`` their ``τ_g²``. Offsets of different batches,
    and of different outputs, are independent. ``dof``: the degrees of freedom
    of ``τ²`` when it was estimated (None: known), ``common``: whether one
    estimate serves every batch (a scalar ``sigma_shared``). Built by
    :func:`check_shared_offsets`.
    """

    codes: np.ndarray
    labels: np.ndarray
    tau2: np.ndarray
    dof: float | None = None
    common: bool = False

    def tau2_covariance(self, a: np.ndarray, c: np.ndarray) -> np.ndarray:
        """Unbiased ``Cov(Σ_g a_g τ̂_g², Σ_g c_g τ̂_g²)``, coefficients ``(G, k)``.

        ``Var τ̂² = 2τ⁴/ν``, ``τ⁴`` estimated by ``τ̂⁴ ν/(ν + 2)``; one common
        estimate (``common``) or independent ones per batch. 0 when known.
        """
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
        )

    def draw(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        """Offsets ``b_{g(i)}`` for ``shape = (n_draws, n_samples[, n_outputs])``."""
        block = rng.standard_normal((shape[0], self.n_groups, *shape[2:]))
        scale = np.sqrt(self.tau2).reshape(-1, *[1] * (len(shape) - 2))
        return (block * scale)[:, self.codes]


def check_shared_offsets(
    groups: Any, sigma_shared: Any, n_samples: int, sigma_shared_dof: Any = None
) -> SharedOffsets | None:
    """Validate the batches and their offsets' SD; None without any offset.

    ``groups``: one batch label per sample. ``sigma_shared``: one SD ``τ >= 0``
    for every batch, a mapping ``{batch: τ_g}`` covering every batch present,
    or one value per sample, equal within each batch. ``sigma_shared_dof``:
    the degrees of freedom of ``τ²`` (a number > 0; None: known). None is
    returned when both are None or every ``τ_g`` is 0 (independent errors, as
    without them).
    """
    dof = None
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
    if hasattr(groups, "to_numpy") and not isinstance(groups, np.ndarray):
        groups = groups.to_numpy()
    groups = np.asarray(groups)
    if groups.ndim != 1:
        raise ValueError(
            f"groups must be 1-D, one batch label per sample; got shape {groups.shape}."
        )
    _check_length(groups, n_samples, name="groups")
    if groups.dtype.kind == "f" and not np.all(np.isfinite(groups)):
        raise ValueError("groups must not contain NaN or infinite labels.")
    labels, codes = np.unique(groups, return_inverse=True)
    codes = codes.reshape(-1).astype(np.intp)
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
        values = as_float_array(sigma_shared, name="sigma_shared")
        if values.ndim == 0:
            tau = np.full(labels.shape[0], float(values))
        elif values.ndim == 1:
            _check_length(values, n_samples, name="sigma_shared")
            tau = np.zeros(labels.shape[0])
            tau[codes] = values
            if not np.array_equal(tau[codes], values, equal_nan=True):
                bad = int(np.argmax(tau[codes] != values))
                raise ValueError(
                    "sigma_shared given per sample must be one value per batch: "
                    f"batch {labels[codes[bad]]!r} has several (sample {bad})."
                )
        else:
            raise ValueError(
                "sigma_shared must be a scalar, a mapping {batch: SD} or one "
                f"value per sample; got shape {values.shape}."
            )
    if not np.all(np.isfinite(tau)) or np.any(tau < 0):
        bad = int(np.argmax(~(np.isfinite(tau) & (tau >= 0))))
        raise ValueError(
            "sigma_shared must be finite and non-negative; got "
            f"{float(tau[bad])!r} for batch {labels[bad]!r}."
        )
    if not np.any(tau > 0):
        return None
    common = not isinstance(sigma_shared, dict) and np.unique(tau).size == 1
    return SharedOffsets(codes, labels, tau * tau, dof, common)


@dataclass(frozen=True, eq=False)
class GaussianNoise:
    """Gaussian label errors ``ỹ = y + e``, ``e ~ N(0, σ²)``, independent samples.

    ``sigma`` as :func:`check_sigma` returns it; ``sigma_dof`` as
    :func:`check_sigma_dof` does (None: σ known exactly). ``shared``: batch
    offsets added to the errors (:class:`SharedOffsets`), None without them.
    """

    sigma: Any
    sigma_dof: Any = None
    shared: SharedOffsets | None = None

    @classmethod
    def from_params(
        cls,
        sigma: Any,
        shape: tuple[int, ...],
        *,
        sigma_dof: Any = None,
        groups: Any = None,
        sigma_shared: Any = None,
        sigma_shared_dof: Any = None,
    ) -> GaussianNoise:
        """Validate ``sigma`` for labels of ``shape``, ``sigma_dof`` and the
        batch offsets (``groups`` and ``sigma_shared``, both or neither, and
        ``sigma_shared_dof``)."""
        return cls(
            check_sigma(sigma, shape),
            check_sigma_dof(sigma_dof, shape[0]),
            check_shared_offsets(groups, sigma_shared, shape[0], sigma_shared_dof),
        )

    @property
    def is_constant(self) -> bool:
        """Whether every label has the same standard error (a scalar σ)."""
        return isinstance(self.sigma, float)

    def take(self, indices: Any) -> GaussianNoise:
        """The noise of the samples ``indices`` (a cross-validation fold)."""
        return GaussianNoise(
            take_samples(self.sigma, indices),
            take_samples(self.sigma_dof, indices),
            None if self.shared is None else self.shared.take(indices),
        )

    def sampler(self, y_true: np.ndarray) -> GaussianSampler:
        """A Monte Carlo sampler of labels drawn around ``y_true``."""
        return GaussianSampler(y_true, self.sigma, self.shared)


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


@dataclass(frozen=True, eq=False)
class PoissonNoise:
    """Count labels ``ỹ_i ~ Poisson(λ_i)``: each label's variance is its mean.

    ``counts`` (float64, ``(n_samples, n_outputs)``): the observed counts
    (truth, remeasurement), or the exact rates ``λ_i`` that fresh counts are
    drawn around (forward). The count is an unbiased estimate of its own
    variance, ``ỹ(ỹ − 1)`` of the variance squared (user guide:
    :ref:`poisson_noise`).
    """

    counts: np.ndarray

    @classmethod
    def from_labels(
        cls, y: np.ndarray, *, counts: bool = True, name: str = "y_true"
    ) -> PoissonNoise:
        """Validate labels ``y`` (2-D float64): finite, ``>= 0``, and whole
        numbers where they are ``counts`` (not exact rates)."""
        check_finite(y, name=name)
        if y.size and y.min() < 0.0:
            raise ValueError(
                f"{name} must be non-negative with noise='poisson' (counts or "
                f"rates); the smallest value is {float(y.min())!r}."
            )
        if counts:
            fractional = y != np.round(y)
            if np.any(fractional):
                bad = np.ravel(y)[np.argmax(np.ravel(fractional))]
                raise ValueError(
                    f"{name} must hold whole-number counts with noise='poisson' "
                    f"(the count estimates its own variance); got {float(bad)!r}. "
                    "Exact rates are labels of estimand='forward' only."
                )
        return cls(y)

    def variance_parts(
        self, rows: slice, *, truth: bool
    ) -> tuple[np.ndarray, np.ndarray, float]:
        """``(σ̂², s4, shift)`` of a chunk of counts: ``σ̂² = ỹ``, ``s4 = ỹ(ỹ − 1)``
        (unbiased for ``λ²``) and the residual shift of the variance estimates.

        A per-sample term ``k(ỹ − a)² − 2b ỹ`` (minus ``k ỹ`` for ``truth``,
        the de-noised square) has label variance ``4λv² + 2k²λ²`` (``truth``)
        or ``λ(2v + k)² + 2k²λ²``, with ``v = kλ − ka − b``; both are estimated
        without bias by ``4ỹ (ṽ − shift·k)² − 2k² s4``, ``ṽ = kỹ − ka − b``.
        """
        y = self.counts[rows]
        return y, y * (y - 1.0), 1.0 if truth else 0.5


def flip_rows(k: np.ndarray, n_classes: int, keep: Any, flip: Any) -> np.ndarray:
    """Rows with ``keep`` at column ``k_i`` and ``flip`` elsewhere."""
    rows = np.empty((k.shape[0], n_classes))
    rows[:] = flip if isinstance(flip, float) else flip[:, None]
    rows[np.arange(k.shape[0]), k] = keep
    return rows


@dataclass(frozen=True, eq=False)
class FlipNoise:
    """Label flips: a flip probability ``q`` or a transition matrix ``T``.

    Exactly one of ``q`` and ``matrix`` is set. With ``q`` a sample keeps its
    class with probability ``1 - q_i`` and is observed as each of the other
    ``n_classes - 1`` classes with probability ``r_i = q_i/(K-1)``; with ``T``
    as class ``j`` with probability ``T[k, j]``.
    """

    q: Any
    matrix: np.ndarray | None
    n_classes: int

    @classmethod
    def from_params(
        cls,
        q: Any,
        transition_matrix: Any,
        *,
        n_samples: int,
        n_classes: int | None,
    ) -> FlipNoise:
        """Validate exactly one of ``q`` and ``transition_matrix``.

        ``n_classes=None`` takes ``K`` from the matrix (2 with ``q``).
        """
        check_noise_model(q, transition_matrix)
        if transition_matrix is not None:
            matrix = check_transition_matrix(transition_matrix, n_classes)
            return cls(None, matrix, int(matrix.shape[0]))
        q = check_flip_probability(q, n_samples)
        if (q if isinstance(q, float) else q.max(initial=0.0)) > 0.5:
            warn(
                "q is above 0.5: those labels are more often wrong than right, "
                "which usually means a swapped definition (q is the probability "
                "that a label is wrong, not that it is right)."
            )
        return cls(q, None, 2 if n_classes is None else int(n_classes))

    @property
    def is_constant(self) -> bool:
        """Whether every sample shares one model (a scalar ``q`` or a matrix)."""
        return self.matrix is not None or isinstance(self.q, float)

    def require_two_classes(self, classes: Any) -> None:
        """Flips with ``q`` move a label to another class: ``K ≥ 2`` is needed."""
        if self.q is not None and self.n_classes < 2:
            raise ValueError(
                "Only one class is present in y_true and y_pred "
                f"({np.asarray(classes).tolist()}): with a flip probability q a "
                "label flips to another class, which is unknown here. Pass all "
                "the classes through `labels` (in a scorer: the fitted model's "
                "classes_)."
            )

    def for_classes(self, classes: Any) -> FlipNoise:
        """The model itself for ``K ≥ 2``; for one class the identity, if nothing flips.

        A flip probability ``q > 0`` with one known class has no class to flip
        to: a ``ValueError`` says to pass every class through ``labels``.
        """
        if self.n_classes >= 2:
            return self
        if self.matrix is None and np.any(np.asarray(self.q) > 0):
            self.require_two_classes(classes)
        return FlipNoise(None, np.ones((1, 1)), 1)

    def shared_matrix(self) -> np.ndarray | None:
        """The transition matrix shared by every sample, or None for per-sample q."""
        if self.matrix is not None:
            return self.matrix
        if not isinstance(self.q, float):
            return None
        keep, flip = self.keep_flip()
        return flip_rows(np.arange(self.n_classes), self.n_classes, keep, flip)

    def take(self, indices: Any) -> FlipNoise:
        """The noise of the samples ``indices`` (a cross-validation fold)."""
        return FlipNoise(take_samples(self.q, indices), self.matrix, self.n_classes)

    def permute(self, order: np.ndarray) -> FlipNoise:
        """The model with its classes reordered: new class ``i`` is old ``order[i]``."""
        if self.matrix is None:
            return self
        return FlipNoise(None, self.matrix[np.ix_(order, order)], self.n_classes)

    def keep_flip(self, rows: slice = slice(None)) -> tuple[Any, Any]:
        """``(1 - q_i, q_i/(K-1))`` on a chunk of samples (flip models only)."""
        q = chunk_of(self.q, rows)
        return 1.0 - q, q / (self.n_classes - 1)

    def keep_flip_variance(self, rows: slice = slice(None)) -> tuple[Any, Any]:
        """``(q_i(1 - q_i), r_i(1 - r_i))`` on a chunk (the same array for K = 2).

        The variances of the indicators "kept its label" and "observed as one
        given other class" (flip models only).
        """
        q = chunk_of(self.q, rows)
        keep_variance = q * (1.0 - q)
        if self.n_classes == 2:
            return keep_variance, keep_variance
        r = q / (self.n_classes - 1)
        return keep_variance, r * (1.0 - r)

    def probability(
        self, true_index: np.ndarray, observed_index: np.ndarray, rows: slice
    ) -> np.ndarray:
        """``P(observed label = observed_index_i | class true_index_i)`` on a chunk."""
        if self.matrix is not None:
            return self.matrix[true_index, observed_index]
        keep, flip = self.keep_flip(rows)
        return np.where(true_index == observed_index, keep, flip)

    def observation_rows(self, true_index: np.ndarray, rows: slice) -> np.ndarray:
        """Rows ``P(observed label = j)``, shape ``(n, K)``, of a chunk of samples."""
        if self.matrix is not None:
            return self.matrix[true_index]
        keep, flip = self.keep_flip(rows)
        return flip_rows(true_index, self.n_classes, keep, flip)

    def check_invertible(self) -> None:
        """Raise ``ValueError`` when the observed labels carry no information."""
        if self.matrix is not None:
            self.inverse_matrix()
            return
        n_classes = self.n_classes
        singular_q = (n_classes - 1) / n_classes
        q_array = np.asarray(self.q)
        for rows in chunks(q_array.size) if q_array.ndim else [Ellipsis]:
            scale = 1.0 - q_array[rows] * (n_classes / (n_classes - 1))
            singular = np.abs(scale) <= _SINGULAR_TOL
            if not np.any(singular):
                continue
            first = rows.start + int(np.argmax(singular)) if q_array.ndim else 0
            where = "" if q_array.ndim == 0 else f" (first at index {first})"
            raise ValueError(
                f"estimand='truth' has no unbiased estimator when q = {singular_q:g}"
                f"{where}: with K = {n_classes} classes a label flipped with this "
                "probability is uniformly distributed whatever the true class, so "
                "it carries no information about it (the flip matrix is singular). "
                "Use estimand='forward', or labels with q != "
                f"{singular_q:g}."
            )

    def inverse_matrix(self) -> np.ndarray:
        """``T⁻¹``, or a ValueError when ``T`` is (numerically) singular."""
        matrix = self.matrix
        if matrix is None:
            raise TypeError("inverse_matrix needs a transition matrix.")
        singular_values = np.linalg.svd(matrix, compute_uv=False)
        if not singular_values[-1] > _SINGULAR_TOL * singular_values[0]:
            raise ValueError(
                "estimand='truth' needs an invertible transition_matrix: this one is "
                "singular (smallest singular value "
                f"{singular_values[-1]:.3g}), so the observed labels do not "
                "determine the distribution of the true labels and no unbiased "
                "estimator exists. Use estimand='forward'."
            )
        return np.linalg.inv(matrix)

    def flip_scale(self, rows: slice = slice(None)) -> tuple[Any, Any]:
        """``(r_i, 1 - q_i - r_i)`` on a chunk: ``T⁻¹ = (I - r J)/(1 - q - r)``."""
        q = chunk_of(self.q, rows)
        r = q / (self.n_classes - 1)
        return r, 1.0 - q - r

    def inverse_rows(
        self, observed_index: np.ndarray, rows: slice, inverse: np.ndarray | None
    ) -> np.ndarray:
        """Rows ``T⁻¹[ỹ_i, :]`` of a chunk; ``inverse`` is :meth:`inverse_matrix`."""
        if self.matrix is not None:
            return inverse[observed_index]
        r, scale = self.flip_scale(rows)
        return flip_rows(observed_index, self.n_classes, (1.0 - r) / scale, -r / scale)

    def variance_floor(
        self, values: np.ndarray, rows: slice, inverse: np.ndarray | None = None
    ) -> np.ndarray:
        """``min_c Var(v_i | c_i = c)``: a label-free lower bound per sample.

        ``values`` (``(n, K)``) holds ``g_i(k)`` for a chunk; ``v_i`` is the
        de-noised ``Σ_k T_i⁻¹[c̃_i, k] g_i(k)`` (``inverse`` is ``T⁻¹``), whose
        mean given ``c_i = c`` is ``g_i(c)``.
        """
        values = np.asarray(values, dtype=float)
        if self.matrix is not None:
            u = values @ inverse.T
            second = (u * u) @ self.matrix.T  # [i, c] = Σ_l T[c, l] u_il²
        else:
            q = chunk_of(self.q, rows)
            q = q if isinstance(q, float) else q[:, None]
            r = q / (self.n_classes - 1)
            keep = 1.0 - q - r  # T = keep·I + r·J
            u = (values - r * values.sum(axis=1, keepdims=True)) / keep
            second = r * (u * u).sum(axis=1, keepdims=True) + keep * u * u
        return np.maximum(np.min(second - values * values, axis=1), 0.0)

    def sampler(self, index: np.ndarray, classes: np.ndarray) -> Any:
        """A Monte Carlo sampler of labels around the classes ``classes[index]``."""
        if self.matrix is not None:
            return TransitionSampler(index, classes, self.matrix)
        if classes.size < 2 and np.any(np.asarray(self.q) > 0):
            raise ValueError(
                "q > 0 needs at least two classes to flip between, but only "
                f"{classes.tolist()} occurs; pass labels=[...] with every class."
            )
        if classes.size < 2:  # nothing can flip
            return TransitionSampler(index, classes, np.ones((1, 1)))
        return FlipSampler(index, classes, self.q)


def _source_repr(value: Any) -> str:
    if callable(value) and not isinstance(value, str):
        return getattr(value, "__qualname__", None) or repr(value)
    return repr(value)


def check_noise_source(value: Any, *, key: str) -> Any:
    """Validate a noise source (``key``): None, a constant, a column or a callable."""
    if value is None or isinstance(value, str) or callable(value):
        return value
    if key == "sigma_shared" and isinstance(value, dict):  # {batch: SD}
        return dict(value)
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        if key in ("sigma", "sigma_shared"):
            return check_sigma(float(value), (1,), name=key)
        if key == "sigma_dof":
            return check_sigma_dof(float(value), 1)
        return check_flip_probability(float(value), 1, name="q")
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return check_noise_source(value.item(), key=key)
    raise TypeError(
        f"{key} must be a constant (a real number), the name of a column of X (a "
        f"str), a callable (X, y) -> array with one value per sample, or None to "
        f"take {key} from routed metadata; got {type(value).__name__}. A per-sample "
        f"array cannot be fixed in the scorer because each cross-validation fold "
        f"scores different samples: pass it as metadata instead, e.g. "
        f"cross_val_score(..., params={{'{key}': {key}}})."
    )


def resolve_noise_source(
    key: str, source: Any, given: Any, X: Any, y: Any, *, missing: str
) -> Any:
    """The noise values from a validated ``source``, or the ``given`` metadata.

    ``source=None`` takes ``given``, raising ``ValueError(missing)`` without it.
    """
    if source is None:
        if given is None:
            raise ValueError(missing)
        return given
    if given is not None:
        raise TypeError(
            f"This scorer reads {key} from its own source ({key}="
            f"{_source_repr(source)}); do not also pass {key}."
        )
    if isinstance(source, str):
        if X is None:
            raise TypeError(f"{key}={source!r} names a column of X, so X is required.")
        columns = getattr(X, "columns", None)
        if columns is None:
            raise TypeError(
                f"{key}={source!r} names a column of X, but X is a "
                f"{type(X).__name__} without column names: pass X as a pandas "
                f"DataFrame, or use a constant, a callable or routed {key}."
            )
        if source not in list(columns):
            raise ValueError(
                f"{key}={source!r} names a column that X does not have; the "
                f"columns of X are {[str(c) for c in columns]}."
            )
        column = X[source]
        return column.to_numpy() if hasattr(column, "to_numpy") else column
    if callable(source):
        return source(X, y)
    return source


# Monte Carlo samplers: each draws a batch of label vectors from one Generator
# call, so draw ``j`` sees the same random numbers whatever the batch size.
class GaussianSampler:
    """Draws ``y ~ N(y_true, sigma²)``: one normal per label entry."""

    def __init__(
        self, y_true: np.ndarray, sigma: Any, shared: SharedOffsets | None = None
    ) -> None:
        self.y_true = y_true
        self.sigma = sigma
        self.shared = shared
        self.floats_per_draw = y_true.size

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        block = rng.standard_normal((n, *self.y_true.shape))
        block *= self.sigma
        block += self.y_true
        if self.shared is not None:  # then the batches' offsets
            block += self.shared.draw(rng, block.shape)
        return block


class FlipSampler:
    """Uniform flips: with probability ``q_i`` to one of the other K − 1 classes.

    One uniform per sample (two when K > 2: the second picks the new class).
    """

    def __init__(self, index: np.ndarray, classes: np.ndarray, q: Any) -> None:
        self.index = index
        self.classes = classes
        self.q = q
        self.n_classes = classes.size
        self.per_sample = 1 if self.n_classes == 2 else 2
        self.floats_per_draw = index.size * self.per_sample

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        k = self.n_classes
        if self.per_sample == 1:
            u = rng.random((n, self.index.size))
            flip = u < self.q
            new = self.index ^ flip  # K = 2: the other class is 1 - index
        else:
            u = rng.random((n, self.index.size, 2))
            flip = u[:, :, 0] < self.q
            offset = np.minimum((u[:, :, 1] * (k - 1)).astype(np.intp), k - 2) + 1
            offset *= flip
            new = self.index + offset
            new %= k
        return self.classes[new]


class TransitionSampler:
    """Draws ``y_i ~ Categorical(T[k_i, :])`` by inverting the row's CDF."""

    def __init__(self, index: np.ndarray, classes: np.ndarray, matrix: np.ndarray):
        self.classes = classes
        cdf = np.cumsum(matrix, axis=1)
        # The classes of probability 0 at a row's end are never drawn despite
        # round-off in cumsum: the CDF reaches exactly 1 before them.
        tail = np.cumsum(matrix[:, ::-1], axis=1)[:, ::-1]
        cdf[:, :-1][tail[:, 1:] == 0] = 1.0
        self.thresholds = np.ascontiguousarray(cdf[index, :-1].T)
        self.floats_per_draw = 2 * index.size

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        u = 1.0 - rng.random((n, self.thresholds.shape[1]))  # in (0, 1]
        new = np.zeros(u.shape, dtype=np.intp)
        for threshold in self.thresholds:
            new += u > threshold
        return self.classes[new]
