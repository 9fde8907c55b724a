"""Folds on a dask.distributed cluster give the same numbers as in one process.

NoisyCrossValidator dispatches its folds with joblib exactly as scikit-learn's
cross_validate does, so ``joblib.parallel_config(backend="dask")`` sends them to
a dask cluster: the way to go past one machine.
"""

from __future__ import annotations

import joblib
import numpy as np
import pytest
from sklearn.linear_model import Ridge
from sklearn.model_selection import KFold

from sklearn_noisy import NoisyCrossValidator


def _regression_data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 4))
    sigma = rng.uniform(0.1, 1.0, size=200)
    y = X @ np.array([1.0, -1.0, 0.5, 2.0]) + rng.normal(scale=sigma)
    return X, y, sigma


def _assert_same_results(serial, parallel):
    assert serial.cv_results_.keys() == parallel.cv_results_.keys()
    for key, values in serial.cv_results_.items():
        if key.endswith("_time"):
            continue
        np.testing.assert_array_equal(values, parallel.cv_results_[key])
    assert serial.pooled_ == parallel.pooled_
    np.testing.assert_array_equal(serial.oof_predictions_, parallel.oof_predictions_)


def test_dask_local_cluster_matches_serial():
    distributed = pytest.importorskip("distributed")
    X, y, sigma = _regression_data()
    scoring = ["mean_squared_error", "mean_absolute_error", "r2"]
    serial = NoisyCrossValidator(Ridge(), scoring=scoring, cv=KFold(4)).fit(
        X, y, sigma=sigma
    )
    with (
        distributed.LocalCluster(
            n_workers=2,
            processes=True,
            threads_per_worker=1,
            dashboard_address=None,
            worker_dashboard_address=None,
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        with joblib.parallel_config(backend="dask"):
            on_cluster = NoisyCrossValidator(
                Ridge(), scoring=scoring, cv=KFold(4), n_jobs=-1
            ).fit(X, y, sigma=sigma)
        # the folds really ran on the workers
        assert len(client.scheduler_info()["workers"]) == 2
    _assert_same_results(serial, on_cluster)
