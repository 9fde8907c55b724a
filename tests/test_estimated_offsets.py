"""The truth MSE and RMSE intervals when the offsets' SD ``τ`` is estimated by
``summarize_batches`` and passed as ``sigma_shared=summary`` (the fiducial
interval): the end-to-end simulation of each tail's miss (a small seeded twin
here, the full table with ``--run-slow``), the generalized pivotal quantity
against its closed form, and the reported numbers equal to the
``sigma_shared_dof`` path's.
"""

import warnings

import numpy as np
import pytest
from scipy import stats

from sklearn_noisy.metrics import (
    expected_mean_squared_error,
    expected_r2_score,
    expected_root_mean_squared_error,
)
from sklearn_noisy.preprocessing import summarize_batches
from sklearn_noisy.utils._noise import GaussianNoise

TAU = SIGMA = 0.5


def _experiment(rng, n_batches, batch_size):
    """True values, predictions, test labels in batches with offsets as large
    as the per-label errors, and ``τ`` estimated from 6 reference batches of 3."""
    groups = np.repeat(np.arange(n_batches), batch_size)
    mu = rng.normal(size=groups.size) * 1.5
    pred = mu + rng.normal(size=groups.size) * 0.6
    y = mu + rng.normal(size=n_batches)[groups] * TAU
    y = y + rng.normal(size=groups.size) * SIGMA
    reference = 10.0 + np.repeat(rng.normal(size=6) * TAU, 3)
    reference = reference + rng.normal(size=18) * SIGMA
    summary = summarize_batches(reference, np.repeat(np.arange(6), 3))
    targets = {
        "mse": np.mean(np.square(mu - pred)),
        "r2": 1.0 - np.sum(np.square(mu - pred)) / np.sum(np.square(mu - mu.mean())),
    }
    return targets, summary, y, pred, groups


FUNCTIONS = {"mse": expected_mean_squared_error, "r2": expected_r2_score}


def _misses(n_replicates, setting, seed, metric="mse"):
    """Per path (``"dof"``: ``sigma_shared_dof``, ``"fiducial"``: the summary)
    the share of replicates whose truth ``metric`` lies below / above the
    two-sided 95 % interval, below the one-sided 95 % lower limit, above the
    upper."""
    rng = np.random.default_rng(seed)
    rows = {"dof": [], "fiducial": []}
    for _ in range(n_replicates):
        targets, summary, y, pred, groups = _experiment(rng, *setting)
        target = targets[metric]
        offsets = {
            "dof": {
                "sigma_shared": summary.sigma_shared,
                "sigma_shared_dof": summary.sigma_shared_dof or None,
            },
            "fiducial": {"sigma_shared": summary},
        }
        for path, options in offsets.items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                score = FUNCTIONS[metric](
                    y, pred, sigma=SIGMA, groups=groups, estimand="truth", **options
                )
            low, high = score.confidence_interval(0.95)
            lower = score.confidence_interval(0.95, alternative="greater").low
            upper = score.confidence_interval(0.95, alternative="less").high
            rows[path].append(
                (target < low, target > high, target < lower, target > upper)
            )
    return {path: np.mean(values, axis=0) for path, values in rows.items()}


def test_fiducial_interval_twin():
    """Ten batches of five, 150 seeded replicates: the fiducial interval's
    lower tail misses far less than the ``sigma_shared_dof`` one's, each tail
    within 5 SE of 2.5 % (the full table: ``--run-slow``)."""
    misses = _misses(150, (10, 5), seed=1)
    se = np.sqrt(0.025 * 0.975 / 150)
    assert misses["dof"][0] > misses["fiducial"][0] + 0.05
    assert np.all(np.abs(misses["fiducial"][:2] - 0.025) < 5 * se)
    assert misses["fiducial"][2] < 0.05 + 5 * np.sqrt(0.05 * 0.95 / 150)


def test_fiducial_r2_interval_twin():
    """The truth R², ten batches of five, 100 seeded replicates: the
    ``sigma_shared_dof`` interval misses above (its end at a too-small
    ``τ̂²``), the fiducial one each tail within 2.5 % + 3 SE (the full table:
    ``--run-slow``)."""
    misses = _misses(100, (10, 5), seed=1, metric="r2")
    se = np.sqrt(0.025 * 0.975 / 100)
    assert misses["dof"][1] > misses["fiducial"][1] + 0.05
    assert np.all(misses["fiducial"][:2] <= 0.025 + 3 * se)


def test_fiducial_mse_interval_with_many_reference_batches_is_the_known_one():
    """With 300 reference batches the fiducial τ² is close to τ̂²: the truth
    MSE's interval (4 batches of 50, far from 0) is then the known offsets'
    Pearson III inversion at τ̂² (upper ends within 0.01 SD at 80, 95 and 99 %;
    the symmetric label-noise part drawn before ended 0.27-2.2 SD below)."""
    rng = np.random.default_rng(11)
    groups = np.repeat(np.arange(4), 50)
    mu = rng.normal(size=200) * 1.5
    pred = mu + rng.normal(size=200)
    y = mu + rng.normal(size=4)[groups] * TAU + rng.normal(size=200) * SIGMA
    reference = 10.0 + np.repeat(rng.normal(size=300) * TAU, 3)
    reference = reference + rng.normal(size=900) * SIGMA
    summary = summarize_batches(reference, np.repeat(np.arange(300), 3))
    common = {"sigma": SIGMA, "groups": groups, "estimand": "truth"}
    fiducial = expected_mean_squared_error(y, pred, **common, sigma_shared=summary)
    known = expected_mean_squared_error(
        y, pred, **common, sigma_shared=np.sqrt(summary.tau2)
    )
    for level in (0.8, 0.95, 0.99):
        high = fiducial.confidence_interval(level).high
        assert abs(high - known.confidence_interval(level).high) < 0.01 * known.std


@pytest.mark.slow
@pytest.mark.parametrize("metric", ["mse", "r2"])
def test_fiducial_interval_tails(capsys, metric):
    """2,000 replicates per setting: each tail of the two-sided 95 % interval
    misses at most 3.5 % and each one-sided 95 % limit at most 5 % + 3 SE
    (user guide: shared_offsets)."""
    n = 2000
    settings = [(10, 5), (6, 20), (4, 50), (20, 10)]
    table = {
        setting: _misses(n, setting, seed=7, metric=metric) for setting in settings
    }
    with capsys.disabled():
        print(
            f"\n{metric} (batches, size): below, above the 95 % interval | "
            "above the lower, "
            f"below the upper one-sided limit (SE {np.sqrt(0.025 * 0.975 / n):.4f}, "
            f"{np.sqrt(0.05 * 0.95 / n):.4f})"
        )
        for setting, misses in table.items():
            for path, values in misses.items():
                print(setting, f"{path:8s}", " ".join(f"{v:.4f}" for v in values))
    for misses in table.values():
        assert np.all(misses["fiducial"][:2] <= 0.035)
        assert np.all(misses["fiducial"][2:] <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / n))


def test_generalized_pivotal_quantity_and_reported_numbers():
    """The draws of τ² are 0 with the probability ``F_{ν_W, ν_B}(MS_W/MS_B)``
    (5 SE); with ``sigma_shared=summary`` the estimate and SD are the
    ``sigma_shared_dof`` path's, the interval is the fiducial one (the RMSE's
    its square root) and a fold keeps the analysis."""
    rng = np.random.default_rng(3)
    _, summary, y, pred, groups = _experiment(rng, 6, 20)
    assert summary.tau2 > 0 and summary.batch_dof == 5
    assert summary.batch_size == pytest.approx(3.0, rel=1e-12)
    noise = GaussianNoise.from_params(
        SIGMA, y.shape, groups=groups, sigma_shared=summary
    )
    ms_b, dof_b, ms_w, dof_w, _ = noise.shared.fiducial
    assert ms_b == pytest.approx(ms_w + 3.0 * summary.tau2, rel=1e-12)
    draws = noise.shared.fiducial_tau2(np.random.default_rng(0), 40000)
    p_zero = stats.f.cdf(ms_w / ms_b, dof_w, dof_b)
    assert abs(np.mean(draws == 0.0) - p_zero) < 5 * np.sqrt(
        p_zero * (1 - p_zero) / 4e4
    )
    assert noise.take(np.arange(30)).shared.fiducial == noise.shared.fiducial

    options = {"sigma": SIGMA, "groups": groups, "estimand": "truth"}
    fiducial = expected_mean_squared_error(y, pred, sigma_shared=summary, **options)
    dof = expected_mean_squared_error(
        y,
        pred,
        sigma_shared=summary.sigma_shared,
        sigma_shared_dof=summary.sigma_shared_dof,
        **options,
    )
    assert fiducial == dof
    interval = fiducial.confidence_interval(0.95)
    assert (
        interval.method == "fiducial" and dof.confidence_interval().method != "fiducial"
    )
    assert interval != dof.confidence_interval()
    root = expected_root_mean_squared_error(y, pred, sigma_shared=summary, **options)
    np.testing.assert_allclose(  # an end at 0: the root of a 1e-17 roundoff
        root.confidence_interval(0.95), np.sqrt(interval), atol=1e-8
    )
    known = {"sigma_shared": summary.sigma_shared}
    r2 = [
        expected_r2_score(y, pred, **path, **options)
        for path in ({"sigma_shared": summary}, known)
    ]
    dof = expected_r2_score(
        y, pred, **known, sigma_shared_dof=summary.sigma_shared_dof, **options
    )
    assert r2[0] == dof and r2[0].confidence_interval().method == "fiducial"
    assert r2[1].confidence_interval().method != "fiducial"  # τ known: as before
    # the fiducial R² at a τ² drawn near 0 reaches lower than τ known's
    assert r2[0].confidence_interval().low < r2[1].confidence_interval().low
    with pytest.raises(TypeError, match="holds its degrees of freedom"):
        expected_mean_squared_error(
            y, pred, sigma_shared=summary, sigma_shared_dof=3.0, **options
        )


def test_a_summary_without_its_analysis_is_refused():
    from sklearn_noisy.metrics import expected_mean_squared_error
    from sklearn_noisy.preprocessing import BatchOffsetSummary

    summary = BatchOffsetSummary(0.3, 4.0, 0.09, 0.2, 10.0, 5, 2, 20)
    with pytest.raises(ValueError, match="batch_dof and batch_size"):
        expected_mean_squared_error(
            [1.0, 2.0, 3.0], [1.1, 2.2, 2.9], sigma=0.1, groups=[0, 0, 1],
            sigma_shared=summary, estimand="truth",
        )  # fmt: skip


def test_fiducial_r2_without_a_lower_bound():
    """Four batches of three, labels varying less than their noise: the drawn
    τ² often leaves the truth SST <= 0, R² unbounded below, and the interval's
    lower end says so (−∞, not a large finite number); its upper end stays
    in the range."""
    rng = np.random.default_rng(0)
    mu = rng.normal(0.0, 0.3, 12)
    y = mu + np.repeat(rng.normal(0.0, 0.5, 4), 3) + rng.normal(0.0, 0.5, 12)
    y_pred = mu + rng.normal(0.0, 0.2, 12)
    reference = 10.0 + np.repeat(rng.normal(0.0, 0.5, 6), 3)
    summary = summarize_batches(
        reference + rng.normal(0.0, 0.5, 18), np.repeat(np.arange(6), 3)
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        result = expected_r2_score(
            y, y_pred, sigma=0.5, groups=np.repeat(np.arange(4), 3),
            sigma_shared=summary, estimand="truth",
        )  # fmt: skip
    interval = result.confidence_interval()
    (low, high), method = interval, interval.method
    assert method == "fiducial"
    assert low == -np.inf
    assert 0.9 < high <= 1.0
