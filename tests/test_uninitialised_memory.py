"""No result reads memory it did not write: ``np.empty`` filled with NaN.

A buffer from ``np.empty`` holds whatever the allocator hands back, so a read
before a write gives results (or floating-point warnings, errors in the test
suite) that depend on what ran before. Filling every such buffer with NaN
makes a read-before-write deterministic and visible.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from sklearn_noisy.metrics import (
    expected_mean_absolute_error,
    expected_r2_score,
    expected_root_mean_squared_error,
)

_EMPTY = np.empty


def _nan_empty(shape, dtype=float, *args, **kwargs):
    array = _EMPTY(shape, dtype, *args, **kwargs)
    if np.issubdtype(array.dtype, np.inexact):
        array.fill(np.nan)
    return array


@pytest.mark.parametrize(
    "metric, kwargs",
    [
        (expected_r2_score, {}),
        (expected_r2_score, {"estimand": "truth"}),
        (expected_r2_score, {"multioutput": "variance_weighted"}),
        (expected_root_mean_squared_error, {}),
        (expected_mean_absolute_error, {}),
    ],
)
def test_regression_metrics_never_read_uninitialised_memory(
    monkeypatch, metric, kwargs
):
    # the R² quadrature left part of a work array unset and summed it (unused
    # columns, but NaN or inf there raised "invalid value" warnings)
    rng = np.random.default_rng(3)
    X = rng.normal(size=(80, 2))
    y = np.column_stack([X @ [1.0, -0.5], X @ [0.3, 0.2]])
    y_pred = y + rng.normal(scale=0.3, size=y.shape)
    sigma = rng.uniform(0.1, 0.6, size=(80, 2))
    if "multioutput" not in kwargs:
        y, y_pred, sigma = y[:, 0], y_pred[:, 0], sigma[:, 0]
    reference = metric(y, y_pred, sigma=sigma, **{"estimand": "forward", **kwargs})
    monkeypatch.setattr(np, "empty", _nan_empty)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        result = metric(y, y_pred, sigma=sigma, **{"estimand": "forward", **kwargs})
    assert result == reference


def test_the_r2_integrand_writes_every_entry_it_returns(monkeypatch):
    # _direct's per-sample sums are added up over chunks: every entry must be
    # set, also the columns the caller does not read
    from sklearn_noisy.metrics._engines.regression.r2_tilt import R2Integrand

    monkeypatch.setattr(np, "empty", _nan_empty)
    integrand = R2Integrand.__new__(R2Integrand)
    integrand.tau_max = 1.0
    s = np.linspace(0.1, 1.0, 5)
    q = np.random.default_rng(0).normal(size=(5, 7))
    out = integrand._direct(np.array([0.5, 2.0]), s, q)
    assert np.isfinite(out).all()
