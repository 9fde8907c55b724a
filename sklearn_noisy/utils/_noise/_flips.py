"""Label flips: a flip probability ``q`` or a transition matrix ``T``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._arrays import (
    as_float_array,
    check_finite,
    check_per_sample,
    chunk_of,
    chunks,
    take_samples,
)
from .._warnings import warn

#: A flip model whose inverse would be scaled by more than 1e12 is treated as
#: singular (no unbiased de-noising exists).
_SINGULAR_TOL = 1e-12


def check_flip_probability(q: Any, n_samples: int, *, name: str = "q") -> Any:
    """Validate a flip probability in [0, 1]: a Python float or a 1-D array."""
    shapes = "a scalar or a 1-D array with one flip probability per sample"
    array = check_per_sample(q, n_samples, name=name, shapes=shapes)
    if array.ndim == 0:
        value = float(array)
        if not 0.0 <= value <= 1.0:  # also rejects NaN
            raise ValueError(f"{name} must be a probability in [0, 1]; got {value!r}.")
        return value
    check_finite(array, name=name)
    if array.min() < 0.0 or array.max() > 1.0:
        bad = int(np.argmax((array < 0.0) | (array > 1.0)))
        raise ValueError(
            f"{name} must hold probabilities in [0, 1]; got "
            f"{float(array[bad])!r} at index {bad}."
        )
    return array


def check_transition_matrix(
    transition_matrix: Any, n_classes: int | None = None
) -> np.ndarray:
    """Validate a row-stochastic transition matrix ``T[true, observed]`` (any
    square size for ``n_classes=None``)."""
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


def flip_rows(k: np.ndarray, n_classes: int, keep: Any, flip: Any) -> np.ndarray:
    """Rows with ``keep`` at column ``k_i`` and ``flip`` elsewhere."""
    rows = np.empty((k.shape[0], n_classes))
    rows[:] = flip if isinstance(flip, float) else flip[:, None]
    rows[np.arange(k.shape[0]), k] = keep
    return rows


@dataclass(frozen=True, eq=False)
class FlipNoise:
    """Label flips: a flip probability ``q`` (to each other class ``q/(K-1)``)
    or a transition matrix ``T``; exactly one of ``q`` and ``matrix`` is set."""

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
        """Validate exactly one of ``q`` and ``transition_matrix`` (``K`` from
        the matrix, or 2 with ``q``, for ``n_classes=None``)."""
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
        """The model itself for ``K ≥ 2``; for one class the identity, if nothing
        flips (a ``ValueError`` if ``q > 0``)."""
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
        """``(q_i(1 - q_i), r_i(1 - r_i))`` on a chunk: the variances of "kept its
        label" and "observed as one given other class"."""
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
        """``min_c Var(v_i | c_i = c)`` of the de-noised ``v_i = Σ_k T⁻¹[c̃_i, k]
        values[i, k]`` on a chunk: a label-free lower bound (:ref:`estimands`)."""
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


class FlipSampler:
    """Uniform flips: with probability ``q_i`` to one of the other K − 1 classes
    (one uniform per sample; a second picks the class when K > 2)."""

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
