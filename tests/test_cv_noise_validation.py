"""The cross-validator validates the label noise once, at its public boundary.

``NoisyCrossValidator.fit`` turns ``sigma`` into a validated ``GaussianNoise``
and passes it inward: the fold scores, their estimands, the pooled scores and
their test-set sampling (also the bootstrap's resamples) do not validate
``sigma`` again, and one scorer call per fold computes every shown estimand.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import Ridge
from sklearn.model_selection import KFold

import sklearn_noisy.utils._noise._gaussian as noise_module
import sklearn_noisy.utils._validation as validation_module
from sklearn_noisy.metrics import NoisyScorer
from sklearn_noisy.model_selection import NoisyCrossValidator


def _counting(monkeypatch, module, name: str, counts: dict) -> None:
    original = getattr(module, name)

    def counted(*args, **kwargs):
        counts[name] = counts.get(name, 0) + 1
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)


@pytest.mark.filterwarnings("ignore::UserWarning")  # a clipped RMSE truth
@pytest.mark.parametrize(
    "metric, sigma_dof",
    [
        ("mean_squared_error", None),  # the benchmark's case
        ("mean_squared_error", 4.0),
        ("r2", None),  # pooled sampling by the bootstrap: 200 resamples
        ("root_mean_squared_error", None),  # by the delta method from the MSE
    ],
)
def test_cv_validates_sigma_once(monkeypatch, metric, sigma_dof):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    sigma = rng.uniform(0.1, 1.0, size=200)
    y = X @ [1.0, -2.0, 0.5] + rng.normal(scale=sigma)
    dof = None if sigma_dof is None else np.full(200, sigma_dof)
    counts: dict[str, int] = {}
    _counting(monkeypatch, noise_module, "check_sigma", counts)
    _counting(monkeypatch, validation_module, "check_sigma", counts)
    calls: list[tuple[str, ...]] = []
    original = NoisyScorer._score_estimands

    def scored(self, y_true, y_pred, estimands, **kwargs):
        calls.append(tuple(estimands))
        return original(self, y_true, y_pred, estimands, **kwargs)

    monkeypatch.setattr(NoisyScorer, "_score_estimands", scored)
    cv = NoisyCrossValidator(Ridge(), scoring=[metric], cv=KFold(5))
    cv.fit(X, y, sigma=sigma, sigma_dof=dof)
    # Once at the boundary; at most once per fold, as issue 21 asks.
    assert counts["check_sigma"] == 1 <= cv.n_splits_
    # One scorer call per fold for all the shown estimands (truth, forward);
    # one for the pooled estimands with their test-set sampling, and for the
    # MSE, whose forward score is pooled from the folds, one for its sampling.
    shown = cv.estimands_[metric]["shown"]
    assert calls[:5] == [("truth", "forward")] * 5  # the lead first
    assert len(calls) == (7 if metric == "mean_squared_error" else 6)
    assert sorted(e for c in calls[5:] for e in c) == sorted(shown)
    pooled = cv.pooled_estimates_[metric]
    assert set(pooled) == set(shown)
    assert all(np.isfinite(s.sampling_variance) for s in pooled.values())
