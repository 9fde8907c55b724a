"""End-to-end verification of the regression estimands (user guide: estimands).

The whole experiment is simulated with a known truth, as the verification
protocol asks: true values ``μ = Xβ + structure`` (M = 300), 3 to 8 readings
per sample, :func:`~sklearn_noisy.preprocessing.summarize_repeats` for the
labels, σ̂ and ``sigma_dof``, a Ridge model fitted out of fold
(``cross_val_predict``), then the public ``expected_*`` functions. For MSE,
RMSE, R² (truth and remeasurement) and MAE (remeasurement), with σ known and
with σ estimated, over the replicates: the bias of the estimate for its own
target in units of the actual spread, the mean reported SD over the actual
spread, and the coverage of the 95 % interval.

The truth target is the metric against ``μ`` with the replicate's
predictions; the remeasurement target is the metric's mean over fresh labels
measured the same way (Monte Carlo, the predictions fixed). The default run
checks a small seeded version; ``--run-slow`` runs the full one (2000
replicates) with the protocol's bounds and prints its table (``pytest -s``).
"""

import warnings

import numpy as np
import pytest
from sklearn.linear_model import Ridge
from sklearn.model_selection import cross_val_predict

from sklearn_noisy.metrics import (
    expected_mean_absolute_error,
    expected_mean_squared_error,
    expected_r2_score,
    expected_root_mean_squared_error,
)
from sklearn_noisy.preprocessing import summarize_repeats

M = 300
MAX_READINGS = 8
N_FRESH = 400

CASES = (
    ("MSE", "truth", expected_mean_squared_error),
    ("RMSE", "truth", expected_root_mean_squared_error),
    ("R2", "truth", expected_r2_score),
    ("MSE", "remeasurement", expected_mean_squared_error),
    ("RMSE", "remeasurement", expected_root_mean_squared_error),
    ("R2", "remeasurement", expected_r2_score),
    ("MAE", "remeasurement", expected_mean_absolute_error),
)


def _metrics(labels, y_pred):
    """MSE, RMSE, R², MAE of each row of ``labels`` (shape (n, M)) against y_pred."""
    d = labels - y_pred
    mse = np.mean(d * d, axis=-1)
    centred = labels - labels.mean(axis=-1, keepdims=True)
    r2 = 1.0 - np.sum(d * d, axis=-1) / np.sum(centred * centred, axis=-1)
    return {
        "MSE": mse,
        "RMSE": np.sqrt(mse),
        "R2": r2,
        "MAE": np.mean(np.abs(d), axis=-1),
    }


def _design(rng, model_error):
    """Features, true values, single-reading SDs and numbers of readings."""
    X = rng.uniform(-1.0, 1.0, (M, 3))
    mu = X @ [2.0, -1.0, 0.5] + model_error * np.sin(3.0 * X[:, 0] + 1.0)
    single_sd = rng.uniform(0.3, 1.5, M)
    n_readings = rng.integers(3, MAX_READINGS + 1, M)
    return X, mu, single_sd, n_readings


def _summaries(rng, mu, single_sd, n_readings, n_replicates):
    """Per replicate, :func:`summarize_repeats` of fresh readings of ``mu``."""
    missing = np.arange(MAX_READINGS)[None, :] >= n_readings[:, None]
    for _ in range(n_replicates):
        readings = mu[:, None] + single_sd[:, None] * rng.standard_normal(
            (M, MAX_READINGS)
        )
        readings[missing] = np.nan
        with warnings.catch_warnings():  # 3 or 4 readings: the expected warning
            warnings.simplefilter("ignore", UserWarning)
            summary = summarize_repeats(readings)
        yield summary


def simulate(seed, n_replicates, model_error=0.5):
    """Per case and σ setting: arrays of (estimate, reported SD, target)."""
    rng = np.random.default_rng(seed)
    X, mu, single_sd, n_readings = _design(rng, model_error)
    sigma_true = single_sd / np.sqrt(n_readings)
    records = {}
    for summary in _summaries(rng, mu, single_sd, n_readings, n_replicates):
        y = summary.y_mean
        y_pred = cross_val_predict(Ridge(alpha=1.0), X, y, cv=5)
        truth = {k: float(v) for k, v in _metrics(mu, y_pred).items()}
        fresh = mu + sigma_true * rng.standard_normal((N_FRESH, M))
        again = {k: float(v.mean()) for k, v in _metrics(fresh, y_pred).items()}
        for setting, sigma, dof in (
            ("known", sigma_true, None),
            ("estimated", summary.sigma, summary.sigma_dof),
        ):
            for metric, estimand, function in CASES:
                score = function(
                    y, y_pred, sigma=sigma, sigma_dof=dof, estimand=estimand
                )
                target = (truth if estimand == "truth" else again)[metric]
                records.setdefault((metric, estimand, setting), []).append(
                    (score.expected, score.std, target)
                )
    return {key: np.array(rows) for key, rows in records.items()}


def table(records):
    """Rows ``(metric, estimand, sigma, bias/SD, SD ratio, coverage)``."""
    rows = []
    for (metric, estimand, setting), values in records.items():
        estimate, reported, target = values.T
        error = estimate - target
        spread = error.std()
        rows.append(
            (
                metric,
                estimand,
                setting,
                error.mean() / spread,
                reported.mean() / spread,
                np.mean(np.abs(error) <= 1.959964 * reported),
            )
        )
    return rows


def print_table(rows, n_replicates):
    print(f"\nM = {M}, 3-8 readings, Ridge out of fold, {n_replicates} replicates")
    print(f"{'metric':6} {'estimand':14} {'sigma':9} bias/SD  SD ratio  coverage")
    for metric, estimand, setting, bias, ratio, coverage in rows:
        print(
            f"{metric:6} {estimand:14} {setting:9} {bias:+7.3f} {ratio:9.3f} "
            f"{coverage:9.3f}"
        )


def test_end_to_end_small():
    rows = table(simulate(0, 300))
    print_table(rows, 300)
    assert len(rows) == 2 * len(CASES)
    for metric, estimand, setting, bias, ratio, coverage in rows:
        where = (metric, estimand, setting)
        assert abs(bias) < 0.25, where
        assert 0.8 <= ratio <= 1.2, where
        assert 0.89 <= coverage <= 0.99, where


@pytest.mark.slow
def test_end_to_end_full():
    n_replicates = 2000
    rows = table(simulate(1, n_replicates))
    print_table(rows, n_replicates)
    for metric, estimand, setting, bias, ratio, coverage in rows:
        where = (metric, estimand, setting)
        assert abs(bias) < 0.1, where
        assert 0.85 <= ratio <= 1.15, where
        # The RMSE truth's column is ±1.96 reported SDs, not its interval (the
        # root of the MSE's): with its estimator's variance (SD ratio 1.006)
        # it covers 0.975 with σ known (0.962 with the delta method's SD).
        high = 0.98 if where == ("RMSE", "truth", "known") else 0.97
        assert 0.93 <= coverage <= high, where


@pytest.mark.slow
def test_end_to_end_small_model_error():
    # A model far better than the labels' noise (θ_T about 0.2 mean σ², the
    # truth MSE estimate <= 0 in about a fifth of the replicates): the MSE,
    # R² and MAE estimands keep the protocol's bounds (coverage up to 97.5 %);
    # the RMSE truth's SD (its estimator's variance near T̂ = 0) reports
    # 0.91-0.94 of the actual spread (0.84-0.87 with the delta method's).
    n_replicates = 2000
    rows = table(simulate(1, n_replicates, model_error=0.15))
    print_table(rows, n_replicates)
    for metric, estimand, setting, bias, ratio, coverage in rows:
        where = (metric, estimand, setting)
        assert abs(bias) < 0.1, where
        assert 0.93 <= coverage <= 0.975, where
        assert 0.85 <= ratio <= 1.15, where


# --------------------------------------------------------------------------- #
# Coverage at the bound: a model that predicts the true values
# --------------------------------------------------------------------------- #
BOUND_CASES = (
    ("MSE", expected_mean_squared_error),
    ("RMSE", expected_root_mean_squared_error),
    ("R2", expected_r2_score),
)


def simulate_bound(seed, n_replicates, shift):
    """95 % truth-interval coverage per (metric, σ setting), predictions μ + shift·σ.

    ``shift = 0``: the true MSE and RMSE are 0, the true R² is 1 (the bound).
    Each replicate also checks that the RMSE's interval is the square root of
    the MSE's, for the label noise and with the test-set sampling, and holds
    its own estimate.
    """
    rng = np.random.default_rng(seed)
    _, mu, single_sd, n_readings = _design(rng, 0.0)
    sigma_true = single_sd / np.sqrt(n_readings)
    y_pred = mu + shift * sigma_true * rng.choice([-1.0, 1.0], M)
    truth = {k: float(v) for k, v in _metrics(mu, y_pred).items()}
    covered = {}
    for summary in _summaries(rng, mu, single_sd, n_readings, n_replicates):
        with warnings.catch_warnings():  # T̂ <= 0: the RMSE's expected warning
            warnings.simplefilter("ignore", UserWarning)
            for setting, sigma, dof in (
                ("known", sigma_true, None),
                ("estimated", summary.sigma, summary.sigma_dof),
            ):
                options = {"sigma": sigma, "sigma_dof": dof, "estimand": "truth"}
                scores = {
                    metric: function(
                        summary.y_mean,
                        y_pred,
                        **options,
                        test_set_sampling=metric != "R2",  # R²'s: a bootstrap
                    )
                    for metric, function in BOUND_CASES
                }
                for metric, score in scores.items():
                    low, high = score.confidence_interval(0.95)
                    covered.setdefault((metric, setting), []).append(
                        low <= truth[metric] <= high
                    )
                mse, rmse = scores["MSE"], scores["RMSE"]
                for source in ("label_noise", "both"):
                    root = rmse.confidence_interval(0.95, source=source)
                    square = mse.confidence_interval(0.95, source=source)
                    np.testing.assert_allclose(root, np.sqrt(square), atol=1e-9)
                    assert root.low <= rmse.expected <= root.high
    return {key: float(np.mean(values)) for key, values in covered.items()}


def print_bound_table(coverages, n_replicates):
    print(f"\n95 % truth-interval coverage, M = {M}, {n_replicates} replicates")
    print(f"{'shift':>5} {'metric':6} {'sigma':9} coverage")
    for shift, table in coverages.items():
        for (metric, setting), coverage in table.items():
            print(f"{shift:5} {metric:6} {setting:9} {coverage:8.4f}")


def test_coverage_at_the_bound_small():
    n_replicates = 200
    coverages = {shift: simulate_bound(2, n_replicates, shift) for shift in (0, 0.5)}
    print_bound_table(coverages, n_replicates)
    se = np.sqrt(0.95 * 0.05 / n_replicates)
    for table in coverages.values():
        assert len(table) == 6
        for key, coverage in table.items():
            assert 0.95 - 3 * se <= coverage <= 0.95 + 3 * se + 0.03, key


@pytest.mark.slow
def test_coverage_at_the_bound_full():
    # The docs' verification page shows this table (pytest -s). At the bound
    # the interval misses on one side only (the MSE below, R² above): that
    # tail's miss is held at its nominal 2.5 % within 5 SEs. Two SDs above it
    # (shift 0.5) the
    # MSE's SD, estimated from the same d̃² as the estimate, is small when the
    # estimate is: with σ known 93.7-94.2 % (4000 replicates, two seeds; 94.6 %
    # with the true SD), as far from the bound (the table above, 94.3 %).
    n_replicates = 2000
    coverages = {
        shift: simulate_bound(3, n_replicates, shift) for shift in (0, 0.5, 1.0)
    }
    print_bound_table(coverages, n_replicates)
    tail = 5.0 * np.sqrt(0.025 * 0.975 / n_replicates)
    for shift, table in coverages.items():
        for key, coverage in table.items():
            if shift == 0:
                assert abs(1.0 - coverage - 0.025) <= tail, key
            else:
                assert 0.93 <= coverage <= 0.975, key


# --------------------------------------------------------------------------- #
# The public functions on small hand-made cases
# --------------------------------------------------------------------------- #
Y = np.array([1.0, 3.0, 5.0, 4.0])
P = np.array([0.0, 3.0, 6.0, 4.5])
S = np.array([0.5, 1.0, 0.5, 0.2])
DOF = np.array([2.0, 4.0, np.inf, 3.0])


@pytest.mark.parametrize("estimand", ["truth", "remeasurement"])
def test_mse_closed_form_with_sigma_dof(estimand):
    score = expected_mean_squared_error(Y, P, sigma=S, sigma_dof=DOF, estimand=estimand)
    d2, s2 = (Y - P) ** 2, S**2
    k, floor_k = (3.0, 1.0) if estimand == "truth" else (2.0, 2.0)
    raw = np.sum(4 * s2 * d2 - 2 * s2**2 * (1 - k / (DOF + 2))) / 16
    floor = np.sum(2 * s2**2 * (1 - floor_k / (DOF + 2))) / 16
    expected = np.mean(d2 - s2) if estimand == "truth" else np.mean(d2)
    assert score.expected == pytest.approx(expected, rel=1e-14)
    assert score.variance == pytest.approx(max(raw, floor), rel=1e-13)
    assert score.nominal == pytest.approx(np.mean(d2), rel=1e-14)
    assert (score.method, score.estimand) == ("exact", estimand)
    # σ known (None) is inf degrees of freedom; forward adds σ̂'s own variance
    known = expected_mean_squared_error(Y, P, sigma=S, estimand=estimand)
    infinite = expected_mean_squared_error(
        Y, P, sigma=S, sigma_dof=np.inf, estimand=estimand
    )
    assert known.variance == pytest.approx(infinite.variance, rel=1e-14)
    forward = expected_mean_squared_error(
        Y, P, sigma=S, sigma_dof=DOF, estimand="forward"
    )
    assert forward.expected == pytest.approx(np.mean(d2 + s2), rel=1e-14)
    own = np.sum(4 * s2 * d2 + 2 * s2**2 * (1.0 - 1.0 / (DOF + 2)))  # 1 at ν = ∞
    assert forward.variance == pytest.approx(own / 16, rel=1e-13)


def test_mae_remeasurement_variance_with_sigma_dof():
    # σ̂²k(|d̃|/σ̂) is concave in σ̂²: with σ̂² ~ χ²_ν/ν (σ = 1) it averages
    # below the known-σ value k(|d̃|). The second-order correction leaves at
    # most a quarter of that bias at ν = 10 (an O(1/ν²) remainder), 200,000
    # draws of σ̂ per |d̃| (Monte Carlo SE about 0.1 % of the value).
    rng = np.random.default_rng(11)
    n, nu = 200_000, 10.0
    sigma_hat = np.sqrt(rng.chisquare(nu, n) / nu)
    for gap in (1.0, 2.0):  # above the floor (1 − 2/π) σ̂²
        y, pred = np.full(n, gap), np.zeros(n)
        known, plain, corrected = (
            n
            * expected_mean_absolute_error(
                y, pred, estimand="remeasurement", test_set_sampling=False, **noise
            ).variance
            for noise in (
                {"sigma": 1.0},
                {"sigma": sigma_hat},  # σ̂ taken as known
                {"sigma": sigma_hat, "sigma_dof": nu},
            )
        )
        assert plain < known, gap
        assert abs(corrected - known) <= 0.25 * (known - plain), gap


def test_mae_remeasurement_pivot_cumulants():
    # The MAE pivot's ingredients per sample: the third cumulant of |t + Z|
    # against its closed form (E|X|³ − 3m E X² + 2m³ of X ~ N(t, 1)), to 1e-9,
    # and its covariance with the variance estimate k(|t + Z|) against 400,000
    # draws, within 5 SEs.
    from scipy.special import ndtr

    from sklearn_noisy.metrics._engines.regression.estimands import (
        _folded_variance_estimate,
    )
    from sklearn_noisy.metrics._engines.regression.pivots import folded_cumulants

    t = np.array([0.0, 0.3, 1.0, 2.5, 6.0])
    third, covariance = folded_cumulants(t, _folded_variance_estimate)
    phi, sign = np.exp(-0.5 * t * t) / np.sqrt(2 * np.pi), 1.0 - 2.0 * ndtr(-t)
    mean = 2.0 * phi + t * sign
    cube = (t**3 + 3.0 * t) * sign + 2.0 * (t * t + 2.0) * phi
    np.testing.assert_allclose(
        third, cube - 3.0 * mean * (1.0 + t * t) + 2.0 * mean**3, atol=1e-9
    )
    z = np.random.default_rng(3).standard_normal((400_000, 1))
    folded = np.abs(t + z)
    product = (folded - folded.mean(0)) * _folded_variance_estimate(folded)
    se = product.std(0) / np.sqrt(z.shape[0])
    assert np.all(np.abs(covariance - product.mean(0)) <= 5.0 * se), (
        covariance,
        product.mean(0),
        se,
    )


def test_variances_never_zero_width():
    # Predictions equal to the labels: every unbiased variance estimate is
    # negative, and each is floored at its lower bound instead of 0.
    for function in (
        expected_mean_squared_error,
        expected_root_mean_squared_error,
        expected_mean_absolute_error,
    ):
        for estimand in function.estimands[1:]:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                score = function(Y, Y, sigma=S, sigma_dof=3.0, estimand=estimand)
            assert score.variance > 0, (function.__name__, estimand)
    score = expected_r2_score(Y, Y + 0.01, sigma=0.05, estimand="truth")
    assert score.variance > 0


def test_degenerate_truth_warns():
    with pytest.warns(UserWarning, match="clipped at 0"):
        score = expected_root_mean_squared_error(
            Y, Y + 0.1, sigma=1.0, estimand="truth"
        )
    assert score.expected == 0.0 and np.isfinite(score.variance)
    with pytest.warns(UserWarning, match="not estimable"):
        score = expected_r2_score(Y, Y + 1.0, sigma=5.0, estimand="truth")
    assert np.isnan(score.expected) and np.isnan(score.variance)


def test_multioutput_and_errors():
    y2, p2 = np.c_[Y, 2 * Y], np.c_[P, 2 * P]
    raw = expected_r2_score(
        y2, p2, sigma=S, sigma_dof=DOF, estimand="truth", multioutput="raw_values"
    )
    alone = [
        expected_r2_score(y2[:, j], p2[:, j], sigma=S, sigma_dof=DOF, estimand="truth")
        for j in range(2)
    ]
    for a, b in zip(raw, alone, strict=True):
        assert a.expected == pytest.approx(b.expected, rel=1e-13)
        assert a.variance == pytest.approx(b.variance, rel=1e-13)
    average = expected_r2_score(y2, p2, sigma=S, sigma_dof=DOF, estimand="truth")
    assert average.expected == pytest.approx(np.mean([s.expected for s in raw]))
    assert average.estimand == "truth" and average.method == "delta"
    with pytest.raises(ValueError, match="sigma_dof must be positive"):
        expected_mean_squared_error(Y, P, sigma=S, sigma_dof=0.0, estimand="truth")
    with pytest.raises(ValueError, match="sigma_dof"):
        expected_r2_score(Y, P, sigma=S, sigma_dof=[1.0, 2.0], estimand="truth")
    with pytest.raises(ValueError, match="kink"):
        expected_mean_absolute_error(Y, P, sigma=S, estimand="truth")
    with pytest.raises(ValueError, match="must be finite"):
        expected_mean_squared_error([1.0, np.nan], [1.0, 2.0], sigma=0.1,
                                    estimand="truth")  # fmt: skip
