"""Monte Carlo samplers of labels under the noise models of :mod:`._noise`.

Built by :meth:`GaussianNoise.sampler <._noise.GaussianNoise.sampler>` and
:meth:`FlipNoise.sampler <._noise.FlipNoise.sampler>`. Each draws a batch of
label vectors from one ``Generator`` call per batch, so draw ``j`` sees the
same random numbers whatever the batch size.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["FlipSampler", "GaussianSampler", "TransitionSampler"]


class GaussianSampler:
    """Draws ``y ~ N(y_true, sigma²)``: one normal per label entry."""

    def __init__(self, y_true: np.ndarray, sigma: Any) -> None:
        self.y_true = y_true
        self.sigma = sigma
        self.floats_per_draw = y_true.size

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        block = rng.standard_normal((n, *self.y_true.shape))
        block *= self.sigma
        block += self.y_true
        return block


class FlipSampler:
    """Uniform flips: with probability ``q_i`` to one of the other K − 1 classes.

    Each draw uses one uniform per sample (two when K > 2: the second picks the
    new class), all from one ``Generator.random`` call per batch, so draw ``j``
    sees the same random numbers whatever the batch size.
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
        # A class after which a row has no mass ends the CDF at exactly 1, so the
        # classes of probability 0 are never drawn despite round-off in cumsum.
        tail = np.cumsum(matrix[:, ::-1], axis=1)[:, ::-1]
        cdf[:, :-1][tail[:, 1:] == 0] = 1.0
        # Per-sample thresholds, one column per class boundary: (n, K - 1).
        self.thresholds = np.ascontiguousarray(cdf[index, :-1].T)
        self.floats_per_draw = 2 * index.size

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        u = 1.0 - rng.random((n, self.thresholds.shape[1]))  # in (0, 1]
        new = np.zeros(u.shape, dtype=np.intp)
        for threshold in self.thresholds:
            new += u > threshold
        return self.classes[new]
