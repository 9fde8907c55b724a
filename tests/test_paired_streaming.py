"""The streamed joint Monte Carlo of the paired differences (issue 15, memory).

RMSE, R², recall, F1, balanced accuracy and MCC differences are drawn chunk by
chunk from sums over the samples; checked against the scorer-based joint Monte
Carlo (independent draws, about 5 combined standard errors), against
scikit-learn's metrics at zero noise, and across chunk boundaries.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.metrics import (
    balanced_accuracy_score,
    f1_score,
    matthews_corrcoef,
    r2_score,
    recall_score,
    root_mean_squared_error,
)

from sklearn_noisy.metrics import (
    expected_paired_difference,
    get_metric_info,
    make_noisy_scorer,
    monte_carlo_score,
)
from sklearn_noisy.utils._arrays import CHUNK_SIZE

SKLEARN = {
    "root_mean_squared_error": root_mean_squared_error,
    "r2": r2_score,
    "recall": recall_score,
    "f1": f1_score,
    "balanced_accuracy": balanced_accuracy_score,
    "matthews_corrcoef": matthews_corrcoef,
}


def _regression(n, seed):
    rng = np.random.default_rng(seed)
    y = rng.normal(size=n)
    a = y + rng.normal(scale=0.4, size=n)
    b = y + rng.normal(scale=0.6, size=n)
    sigma = rng.uniform(0.1, 0.8, n)
    sigma[:3] = 0.0
    weight = rng.uniform(0.2, 2.0, n)
    return y, a, b, {"sigma": sigma}, weight


def _binary(n, seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    a = np.where(rng.random(n) < 0.8, y, 1 - y)
    b = np.where(rng.random(n) < 0.7, y, 1 - y)
    q = rng.uniform(0.0, 0.3, n)
    weight = rng.uniform(0.2, 2.0, n)
    return y, a, b, {"q": q}, weight


@pytest.mark.parametrize(
    "metric, weighted",
    [(metric, True) for metric in SKLEARN]
    + [("root_mean_squared_error", False), ("r2", False)],
)
def test_streamed_against_sklearn_monte_carlo(metric, weighted):
    regression = metric in ("root_mean_squared_error", "r2")
    y, a, b, noise, weight = (_regression if regression else _binary)(40, 3)
    weight = weight if weighted else None
    streamed = expected_paired_difference(
        y, a, b, metric=metric, sample_weight=weight, n_draws=3000, random_state=1,
        **{"estimand": "forward", **noise},
    )  # fmt: skip
    # reference: scikit-learn's own metric on each draw, by monte_carlo_score
    sk = SKLEARN[metric]
    kwargs = {} if weight is None else {"sample_weight": weight}
    reference = monte_carlo_score(
        lambda labels, _: sk(labels, a, **kwargs) - sk(labels, b, **kwargs),
        y,
        a,
        labels=None if regression else [0, 1],
        n_draws=400,
        random_state=2,
        **noise,
    )
    assert streamed.method == "monte_carlo" and streamed.n_draws == 3000
    se = math.hypot(streamed.standard_error, reference.standard_error)
    assert abs(streamed.expected - reference.expected) < 5 * se
    se_var = math.hypot(
        streamed.variance_standard_error, reference.variance_standard_error
    )
    assert abs(streamed.variance - reference.variance) < 5 * se_var
    # the nominal is scikit-learn's difference on the labels as given
    expected_nominal = sk(y, a, **kwargs) - sk(y, b, **kwargs)
    assert streamed.nominal == pytest.approx(expected_nominal, rel=1e-12, abs=1e-15)
    # seeded: the same draws again
    again = expected_paired_difference(
        y, a, b, metric=metric, sample_weight=weight, n_draws=3000, random_state=1,
        **{"estimand": "forward", **noise},
    )  # fmt: skip
    assert again.expected == streamed.expected


@pytest.mark.parametrize("metric", list(SKLEARN))
def test_no_noise_is_the_exact_nominal(metric):
    regression = metric in ("root_mean_squared_error", "r2")
    y, a, b, _, _ = (_regression if regression else _binary)(30, 4)
    noise = {"sigma": 0.0} if regression else {"q": 0.0}
    d = expected_paired_difference(
        y, a, b, metric=metric, **{"estimand": "forward", **noise}
    )
    assert d.method == "exact" and d.variance == 0.0
    assert d.expected == d.nominal
    sk = SKLEARN[metric]
    assert d.nominal == pytest.approx(sk(y, a) - sk(y, b), rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("metric", list(SKLEARN))
def test_sums_across_chunks(metric):
    regression = metric in ("root_mean_squared_error", "r2")
    n = 2 * CHUNK_SIZE + 123
    y, a, b, noise, weight = (_regression if regression else _binary)(n, 5)
    weight = weight if regression else None  # weighted P/R/F1/MCC: other work
    d = expected_paired_difference(
        y,
        a,
        b,
        metric=metric,
        sample_weight=weight,
        n_draws=30,
        **{"estimand": "forward", **noise},
    )
    sk = SKLEARN[metric]
    reference = sk(y, a, sample_weight=weight) - sk(y, b, sample_weight=weight)
    assert d.nominal == pytest.approx(reference, rel=1e-11, abs=1e-14)
    # the draws' mean against the exact single-model expectations
    single = get_metric_info(metric).function
    kwargs = {} if weight is None else {"sample_weight": weight}
    exact = [
        single(y, p, **noise, **{"estimand": "forward", **kwargs}).expected
        for p in (a, b)
    ]
    assert abs(d.expected - (exact[0] - exact[1])) < 5 * d.standard_error


def test_pos_label_and_fallbacks():
    y, a, b, noise, _ = _binary(40, 6)
    d0 = expected_paired_difference(
        y,
        a,
        b,
        metric=make_noisy_scorer("f1", pos_label=0, estimand="forward"),
        q=0.0,
        estimand="forward",
    )
    assert d0.method == "exact"
    assert d0.nominal == pytest.approx(
        f1_score(y, a, pos_label=0) - f1_score(y, b, pos_label=0), abs=1e-15
    )
    # options the stream does not cover keep the scorer-based Monte Carlo
    delta = expected_paired_difference(
        y,
        a,
        b,
        metric=make_noisy_scorer("f1", method="delta", estimand="forward"),
        n_draws=20,
        **{"estimand": "forward", **noise},
    )
    assert delta.method == "monte_carlo"
    assert delta.nominal == pytest.approx(f1_score(y, a) - f1_score(y, b), abs=1e-15)
