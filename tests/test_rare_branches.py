"""Features no other default test reaches, each checked against real numbers.

Count labels (``noise="poisson"``) with R²'s variance weighting and with the
explained variance; the error of shared offsets with variance weighting; the
explained variance's forward moments against an independent computation of its
quadratic forms; the paired differences' Monte Carlo fallbacks, one-class
precision, the R² existence check's outputs of weight 0 and the streamed draws
with shared offsets; the command line's interrupt and broken pipe. Monte Carlo
tolerances are 5 SE computed from the simulation itself.
"""

import numpy as np
import pytest
import sklearn.metrics as skm

from sklearn_noisy.cli import _main as cli_main
from sklearn_noisy.metrics import (
    expected_explained_variance_score,
    expected_paired_difference,
    expected_r2_score,
    make_noisy_scorer,
)

EV = expected_explained_variance_score
R2 = expected_r2_score


def _within(value, reference, tolerance):
    assert abs(value - reference) <= tolerance, (value, reference, tolerance)


def _matches_simulation(score, values, check_std=True):
    """Mean within 5 SE (plus 2 % of the SD / 5, the delta method's own bias
    allowance) of the simulated values; SD within 5 %."""
    spread = values.std()
    _within(
        score.expected,
        values.mean(),
        5 * spread / np.sqrt(values.size) + 0.02 * spread / 5,
    )
    if check_std:
        assert score.std == pytest.approx(spread, rel=0.05)


def _count_case(seed, n=150):
    rng = np.random.default_rng(seed)
    lam = rng.uniform(0.5, 15.0, n)
    y_pred = lam + rng.choice([-1.0, 1.0], n) * rng.uniform(0.5, 3.0, n)
    weight = rng.uniform(0.5, 2.0, n)
    return rng, lam, y_pred, weight


def _weighted_ratio(labels, y_pred, weight, centred):
    """``1 - X/Y`` per draw (rows of ``labels``): R² or explained variance."""
    W = weight.sum()
    d = labels - y_pred
    if centred:
        d = d - (d @ weight / W)[:, None]
    c = labels - (labels @ weight / W)[:, None]
    return 1.0 - (d * d) @ weight / ((c * c) @ weight)


# --------------------------------------------------------------------------- #
# 1. R² of counts, multioutput="variance_weighted" (r2.py, _delta_forward)
# --------------------------------------------------------------------------- #
def test_count_r2_variance_weighted_one_output_matches_monte_carlo():
    # One output with multioutput="variance_weighted" and sample weights: the
    # delta method's one-output branch. Nominal: scikit-learn's; expected within
    # 5 SE (plus 2 % of the SD / 5, the delta method's order) of the simulated
    # mean of the weighted R² of Poisson counts, the SD within 5 %.
    rng, lam, y_pred, weight = _count_case(11)
    score = R2(
        lam,
        y_pred,
        noise="poisson",
        estimand="forward",
        sample_weight=weight,
        multioutput="variance_weighted",
    )
    reference = skm.r2_score(
        lam, y_pred, sample_weight=weight, multioutput="variance_weighted"
    )
    assert score.nominal == pytest.approx(reference, rel=1e-12)
    assert score.method == "delta"
    counts = rng.poisson(lam, (4000, lam.size)).astype(float)
    values = _weighted_ratio(counts, y_pred, weight, centred=False)
    assert values[0] == pytest.approx(
        skm.r2_score(counts[0], y_pred, sample_weight=weight), rel=1e-12
    )
    _matches_simulation(score, values)


def test_count_r2_variance_weighted_output_of_zero_rates_has_weight_zero():
    rng = np.random.default_rng(0)
    n = 60
    lam = rng.uniform(1, 12, n)
    pred = lam + rng.normal(0, 2, n)
    y2 = np.column_stack([lam, np.zeros(n)])
    p2 = np.column_stack([pred, rng.normal(0, 1, n)])
    score = R2(
        y2, p2, noise="poisson", estimand="forward", multioutput="variance_weighted"
    )
    counts = rng.poisson(lam, (4000, n)).astype(float)
    # The second output's counts are 0 in every draw: weight 0, as scikit-learn.
    values = _weighted_ratio(counts, pred, np.ones(n), centred=False)
    assert values[0] == pytest.approx(
        skm.r2_score(
            np.column_stack([counts[0], np.zeros(n)]),
            p2,
            multioutput="variance_weighted",
        ),
        rel=1e-12,
    )
    _matches_simulation(score, values, check_std=False)


# --------------------------------------------------------------------------- #
# 2. Explained variance of counts (r2.py, _count_parts with centred=True)
# --------------------------------------------------------------------------- #
def test_count_explained_variance_matches_scikit_learn_and_monte_carlo():
    # Nominal: scikit-learn's explained_variance_score (weighted). Forward:
    # expected within 5 SE (+ 2 % of the SD / 5) of the simulated mean over
    # Poisson draws of the counts, SD within 5 %. A biased prediction (offset
    # 2) makes the centring of the residuals matter: R² differs by > 0.05.
    rng, lam, y_pred, weight = _count_case(12)
    y_pred = y_pred + 2.0
    score = EV(lam, y_pred, noise="poisson", estimand="forward", sample_weight=weight)
    reference = skm.explained_variance_score(lam, y_pred, sample_weight=weight)
    assert score.nominal == pytest.approx(reference, rel=1e-12)
    r2 = R2(lam, y_pred, noise="poisson", estimand="forward", sample_weight=weight)
    assert score.expected - r2.expected > 0.05
    counts = rng.poisson(lam, (4000, lam.size)).astype(float)
    values = _weighted_ratio(counts, y_pred, weight, centred=True)
    assert values[0] == pytest.approx(
        skm.explained_variance_score(counts[0], y_pred, sample_weight=weight),
        rel=1e-12,
    )
    _matches_simulation(score, values)


# --------------------------------------------------------------------------- #
# 3. Shared offsets with multioutput="variance_weighted" (r2.py _offsets_forward)
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("function", [R2, EV])
def test_shared_offsets_refuse_variance_weighted_outputs(function):
    rng = np.random.default_rng(3)
    y = rng.normal(size=(12, 2))
    p = y + rng.normal(scale=0.3, size=y.shape)
    offsets = dict(sigma=0.2, groups=np.repeat([0, 1, 2], 4), sigma_shared=0.1)
    with pytest.raises(ValueError, match="multioutput='variance_weighted' is not "):
        function(y, p, multioutput="variance_weighted", estimand="forward", **offsets)
    # One output: variance weighting is the uniform average, as scikit-learn's.
    one = function(
        y[:, 0], p[:, 0], multioutput="variance_weighted", estimand="forward", **offsets
    )
    uniform = function(y[:, 0], p[:, 0], estimand="forward", **offsets)
    assert (one.expected, one.variance) == (uniform.expected, uniform.variance)
    sklearn_metric = skm.r2_score if function is R2 else skm.explained_variance_score
    assert one.nominal == pytest.approx(sklearn_metric(y[:, 0], p[:, 0]), rel=1e-12)


# --------------------------------------------------------------------------- #
# 4. Explained variance's forward moments (r2.py ratio_moments, r2_tilt.py)
# --------------------------------------------------------------------------- #
def _quadratic_parts(y, y_pred, sigma, weight, centred):
    """``(μ_X, μ_Y, V_X, V_Y, C_XY)`` of ``X = (d+e)ᵀA(d+e)``, ``Y = (y+e)ᵀQ(y+e)``,
    ``e ~ N(0, diag σ²)``, from the Gaussian quadratic-form identities
    ``E = mᵀAm + tr AS``, ``Cov = 2 tr ASBS + 4 mᵀASBn`` (dense matrices)."""
    D = np.diag(weight)
    P = np.eye(y.size) - np.outer(np.ones(y.size), weight) / weight.sum()
    Q = P.T @ D @ P
    A = Q if centred else D
    S = np.diag(sigma * sigma)
    d = y - y_pred
    return np.array(
        [
            d @ A @ d + np.trace(A @ S),
            y @ Q @ y + np.trace(Q @ S),
            2 * np.trace(A @ S @ A @ S) + 4 * d @ A @ S @ A @ d,
            2 * np.trace(Q @ S @ Q @ S) + 4 * y @ Q @ S @ Q @ y,
            2 * np.trace(A @ S @ Q @ S) + 4 * d @ A @ S @ Q @ y,
        ]
    )


def _delta(parts):
    """Second-order delta mean and first-order variance of ``1 - X/Y``."""
    mu_x, mu_y, v_x, v_y, c = parts
    r = mu_x / mu_y
    mean = r - c / mu_y**2 + mu_x * v_y / mu_y**3
    return 1.0 - mean, (v_x - 2 * r * c + r * r * v_y) / mu_y**2


def _ev_case(seed, n=30):
    rng = np.random.default_rng(seed)
    y = rng.normal(size=(n, 2)) * [1.0, 3.0]
    y_pred = 0.7 * y + rng.normal(scale=0.4, size=y.shape) + [0.3, -1.0]
    sigma = rng.uniform(0.2, 0.6, y.shape) * [1.0, 3.0]
    weight = rng.uniform(0.5, 2.0, n)
    return rng, y, y_pred, sigma, weight


def test_explained_variance_quadratic_forms_by_monte_carlo():
    # The quadratic-form moments of the centred sums, checked by 200,000 seeded
    # draws (each of the five within 5 SE of the draws' own estimate), and the
    # exact (quadrature) forward E and Var of the weighted explained variance
    # against the same draws' mean and variance (5 SE each).
    rng, y, y_pred, sigma, weight = _ev_case(21)
    y, y_pred, sigma = y[:, 0], y_pred[:, 0], sigma[:, 0]
    parts = _quadratic_parts(y, y_pred, sigma, weight, centred=True)
    n_draws, W = 200_000, weight.sum()
    e = rng.standard_normal((n_draws, y.size)) * sigma
    labels = y + e
    r = labels - y_pred
    r -= (r @ weight / W)[:, None]
    c = labels - (labels @ weight / W)[:, None]
    X, Y = (r * r) @ weight, (c * c) @ weight
    for value, draws in ((parts[0], X), (parts[1], Y)):
        _within(value, draws.mean(), 5 * draws.std() / np.sqrt(n_draws))
    for value, product in (
        (parts[2], (X - X.mean()) ** 2),
        (parts[3], (Y - Y.mean()) ** 2),
        (parts[4], (X - X.mean()) * (Y - Y.mean())),
    ):
        _within(value, product.mean(), 5 * product.std() / np.sqrt(n_draws))
    values = 1.0 - X / Y
    assert values[0] == pytest.approx(
        skm.explained_variance_score(labels[0], y_pred, sample_weight=weight),
        rel=1e-12,
    )
    score = EV(y, y_pred, sigma=sigma, sample_weight=weight, estimand="forward")
    _within(score.expected, values.mean(), 5 * values.std() / np.sqrt(n_draws))
    squares = (values - values.mean()) ** 2
    _within(score.variance, squares.mean(), 5 * squares.std() / np.sqrt(n_draws))


def test_explained_variance_delta_moments_are_the_quadratic_forms():
    # method="delta": 1 - E and Var of X/Y by the delta method on the exact
    # moments of the two quadratic forms (the dense-matrix identities above),
    # to 1e-10: one output, two outputs (uniform: independent outputs, Var / 4;
    # variance_weighted: ΣX_k / ΣY_k, the moments summed). A 1e-4 relative
    # error in the SSE/SST covariance moves the variance by far more.
    _, y, y_pred, sigma, weight = _ev_case(22)
    per_output = [
        _quadratic_parts(y[:, k], y_pred[:, k], sigma[:, k], weight, centred=True)
        for k in range(2)
    ]
    options = dict(sample_weight=weight, estimand="forward", method="delta")
    one = EV(y[:, 0], y_pred[:, 0], sigma=sigma[:, 0], **options)
    assert (one.expected, one.variance) == pytest.approx(
        _delta(per_output[0]), rel=1e-10
    )
    moments = np.array([_delta(parts) for parts in per_output])
    uniform = EV(y, y_pred, sigma=sigma, **options)
    assert uniform.expected == pytest.approx(moments[:, 0].mean(), rel=1e-10)
    assert uniform.variance == pytest.approx(moments[:, 1].sum() / 4, rel=1e-10)
    weighted = EV(y, y_pred, sigma=sigma, multioutput="variance_weighted", **options)
    expected = _delta(per_output[0] + per_output[1])
    assert (weighted.expected, weighted.variance) == pytest.approx(expected, rel=1e-10)
    assert weighted.nominal == pytest.approx(
        skm.explained_variance_score(
            y, y_pred, sample_weight=weight, multioutput="variance_weighted"
        ),
        rel=1e-12,
    )


def test_explained_variance_delta_moments_against_r2_on_centred_residuals():
    # Residuals of mean exactly 0, unit weights, one σ: EV = R² at zero noise.
    # Under noise X_R² = Σ(d+e)² = X_EV + M ē² (Σ(d + e − ē) = 0), with
    # M ē² = σ²χ²₁ independent of e − ē, on which X_EV and Y depend alone. So
    # E X_R² = E X_EV + σ², Var X_R² = Var X_EV + 2σ⁴, Cov(X, Y) and the moments
    # of Y the same. R²'s delta moments are checked on the quadratic forms, then
    # EV's on R²'s parts so shifted (1e-10).
    rng = np.random.default_rng(23)
    n, s = 25, 0.4
    y = rng.normal(size=n)
    d = rng.normal(scale=0.5, size=n)
    y_pred = y - (d - d.mean())
    ones, sigma = np.ones(n), np.full(n, s)
    assert EV(y, y_pred, sigma=0.0).nominal == pytest.approx(
        skm.r2_score(y, y_pred), rel=1e-12
    )
    options = dict(sigma=s, estimand="forward", method="delta")
    r2_parts = _quadratic_parts(y, y_pred, sigma, ones, centred=False)
    r2 = R2(y, y_pred, **options)
    assert (r2.expected, r2.variance) == pytest.approx(_delta(r2_parts), rel=1e-10)
    ev_parts = r2_parts - [s**2, 0.0, 2 * s**4, 0.0, 0.0]
    assert ev_parts == pytest.approx(
        _quadratic_parts(y, y_pred, sigma, ones, centred=True), rel=1e-12
    )
    ev = EV(y, y_pred, **options)
    assert (ev.expected, ev.variance) == pytest.approx(_delta(ev_parts), rel=1e-10)
    assert ev.expected > r2.expected


def test_explained_variance_of_the_weighted_mean_prediction_is_zero():
    # ŷ = the weighted mean of y: the centred residuals are the centred labels,
    # X = Y in every draw, so EV = 0 with variance 0 (exact and delta).
    rng = np.random.default_rng(24)
    y = rng.normal(size=20)
    weight = rng.uniform(0.5, 2.0, 20)
    sigma = rng.uniform(0.2, 0.8, 20)
    y_pred = np.full(20, y @ weight / weight.sum())
    for method in ("exact", "delta"):
        score = EV(y, y_pred, sigma=sigma, sample_weight=weight, method=method)
        assert abs(score.expected) < 1e-12 and score.variance < 1e-20, (method, score)


# --------------------------------------------------------------------------- #
# 5. Paired differences (_paired.py, _engines/paired.py, _engines/monte_carlo.py)
# --------------------------------------------------------------------------- #
def _agree(score, draws, k=5.0):
    """The library's Monte Carlo and independent ``draws`` agree in mean and
    variance within ``k`` combined SE (each from its own draws)."""
    se_mean = np.hypot(score.standard_error, draws.std() / np.sqrt(draws.size))
    _within(score.expected, draws.mean(), k * se_mean)
    squares = (draws - draws.mean()) ** 2
    se_var = np.hypot(
        score.variance_standard_error, squares.std() / np.sqrt(draws.size)
    )
    _within(score.variance, squares.mean(), k * se_var)


def test_paired_monte_carlo_fallback_of_a_loss_with_options():
    # MAE with output weights: its exact kernel takes no options, so the joint
    # Monte Carlo scores each draw with the scorer. Against 20,000 independent
    # draws of the weighted MAE difference (vectorised), 5 combined SE.
    rng = np.random.default_rng(51)
    n = 30
    y = rng.normal(size=(n, 2))
    a = y + rng.normal(scale=0.3, size=y.shape)
    b = y + rng.normal(scale=0.5, size=y.shape)
    sigma, mix = 0.4, np.array([0.25, 0.75])
    scorer = make_noisy_scorer("mean_absolute_error", multioutput=mix.tolist())
    score = expected_paired_difference(
        y, a, b, metric=scorer, sigma=sigma, n_draws=1000, random_state=1
    )
    assert score.method == "monte_carlo" and score.n_draws == 1000
    nominal = skm.mean_absolute_error(y, a, multioutput=mix) - skm.mean_absolute_error(
        y, b, multioutput=mix
    )
    assert score.nominal == pytest.approx(nominal, rel=1e-12)
    labels = y + sigma * rng.standard_normal((20_000, *y.shape))
    draws = (np.abs(labels - a) - np.abs(labels - b)).mean(axis=1) @ mix
    _agree(score, draws)


def test_scorer_takes_output_weights_as_an_array():
    mix = np.array([0.25, 0.75])
    y = np.array([[1.0, 2.0], [2.0, 1.0], [3.0, 5.0]])
    p = y + np.array([[0.5, -1.0], [0.0, 0.5], [1.0, 1.0]])
    scorer = make_noisy_scorer("mean_absolute_error", multioutput=mix)
    score = scorer.score_predictions(y, p, sigma=0.0)
    assert score.nominal == pytest.approx(
        skm.mean_absolute_error(y, p, multioutput=mix), rel=1e-12
    )


def test_paired_monte_carlo_fallback_of_macro_f1_finds_the_classes():
    # Macro F1 of three classes (an option: no exact kernel): the scorer-by-
    # scorer Monte Carlo, with the classes taken from the three label vectors.
    # Against 20,000 independent draws of uniform flips (q = 0.2).
    rng = np.random.default_rng(52)
    n, q = 40, 0.2
    y = rng.integers(0, 3, n)
    a = np.where(rng.random(n) < 0.8, y, rng.integers(0, 3, n))
    b = np.where(rng.random(n) < 0.6, y, rng.integers(0, 3, n))
    scorer = make_noisy_scorer("f1", average="macro")
    score = expected_paired_difference(
        y, a, b, metric=scorer, q=q, n_draws=300, random_state=2
    )
    nominal = skm.f1_score(y, a, average="macro") - skm.f1_score(y, b, average="macro")
    assert score.method == "monte_carlo"
    assert score.nominal == pytest.approx(nominal, rel=1e-12)
    flip = rng.random((20_000, n)) < q
    labels = np.where(flip, (y + rng.integers(1, 3, (20_000, n))) % 3, y)

    def macro_f1(pred):
        scores = []
        for k in range(3):
            tp = ((labels == k) & (pred == k)).sum(axis=1)
            fp_fn = (labels == k).sum(axis=1) + (pred == k).sum()
            scores.append(np.where(fp_fn > 0, 2 * tp / np.maximum(fp_fn, 1), 0.0))
        return np.mean(scores, axis=0)

    draws = macro_f1(a) - macro_f1(b)
    assert draws[0] == pytest.approx(
        skm.f1_score(labels[0], a, average="macro")
        - skm.f1_score(labels[0], b, average="macro"),
        rel=1e-12,
    )
    _agree(score, draws)


def test_paired_precision_of_one_class_is_exactly_zero():
    # Every label and both predictions are the positive class: both precisions
    # are 1 in every draw (a flip needs a second class), so the difference is
    # exactly 0 with variance 0, as scikit-learn's at zero noise.
    y = np.ones(9, dtype=int)
    weight = np.linspace(0.5, 2.0, 9)
    score = expected_paired_difference(
        y, y, y, metric="precision", q=0.2, sample_weight=weight
    )
    nominal = skm.precision_score(y, y, sample_weight=weight) - skm.precision_score(
        y, y, sample_weight=weight
    )
    assert (score.expected, score.variance, score.nominal) == (0.0, 0.0, nominal)


def _existence_case():
    rng = np.random.default_rng(53)
    n = 20
    y = np.column_stack([rng.normal(size=n), np.full(n, 2.0)])
    a = y + rng.normal(scale=0.3, size=y.shape)
    b = y + rng.normal(scale=0.5, size=y.shape)
    sigma = np.zeros((n, 2))
    sigma[:, 0], sigma[:2, 1] = 0.3, 0.5  # output 1: two noisy labels (rank 2)
    return rng, y, a, b, sigma


def test_paired_r2_existence_leaves_out_outputs_of_weight_zero():
    # Output 1 has two noisy labels and equal exact ones: its R² difference
    # has no mean. With output weights (0.5, 0.5) that is warned of and the
    # variance is infinite; with (1, 0) output 1 is left out and the Monte
    # Carlo is finite: output 0's R² difference, checked against 20,000
    # independent draws (5 combined SE).
    rng, y, a, b, sigma = _existence_case()
    both = make_noisy_scorer("r2", multioutput=[0.5, 0.5])
    with pytest.warns(UserWarning, match=r"does not exist \(output 1\)"):
        infinite = expected_paired_difference(
            y, a, b, metric=both, sigma=sigma, n_draws=50
        )
    assert infinite.variance == np.inf
    first = make_noisy_scorer("r2", multioutput=[1.0, 0.0])
    score = expected_paired_difference(
        y, a, b, metric=first, sigma=sigma, n_draws=600, random_state=3
    )
    assert np.isfinite(score.variance) and score.method == "monte_carlo"
    nominal = skm.r2_score(y[:, 0], a[:, 0]) - skm.r2_score(y[:, 0], b[:, 0])
    assert score.nominal == pytest.approx(nominal, rel=1e-12)
    labels = y[:, 0] + 0.3 * rng.standard_normal((20_000, y.shape[0]))
    sst = ((labels - labels.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)
    sse_a = ((labels - a[:, 0]) ** 2).sum(axis=1)
    sse_b = ((labels - b[:, 0]) ** 2).sum(axis=1)
    _agree(score, (sse_b - sse_a) / sst)


def test_paired_r2_streamed_draws_with_shared_offsets():
    # R² (no exact kernel) with batch offsets: the streamed joint Monte Carlo
    # draws one offset per batch and draw. Against 20,000 independent draws
    # of σ e + τ z_g (5 combined SE); with a metric option it is refused.
    rng = np.random.default_rng(54)
    n = 24
    y = rng.normal(size=n)
    a = y + rng.normal(scale=0.3, size=n)
    b = 0.8 * y + rng.normal(scale=0.3, size=n)
    groups = np.repeat(np.arange(4), 6)
    sigma, tau = 0.2, 0.5
    offsets = dict(sigma=sigma, groups=groups, sigma_shared=tau)
    score = expected_paired_difference(
        y, a, b, metric="r2", n_draws=4000, random_state=4, **offsets
    )
    assert score.method == "monte_carlo" and score.estimand == "forward"
    nominal = skm.r2_score(y, a) - skm.r2_score(y, b)
    assert score.nominal == pytest.approx(nominal, rel=1e-12)
    shifts = tau * rng.standard_normal((20_000, 4))[:, groups]
    labels = y + sigma * rng.standard_normal((20_000, n)) + shifts
    sst = ((labels - labels.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)
    sse_a = ((labels - a) ** 2).sum(axis=1)
    sse_b = ((labels - b) ** 2).sum(axis=1)
    _agree(score, (sse_b - sse_a) / sst)
    # The offsets move the difference: without them it is not the same.
    plain = expected_paired_difference(y, a, b, metric="r2", sigma=sigma)
    assert abs(plain.variance - score.variance) > 5 * score.variance_standard_error
    with pytest.raises(ValueError, match="under shared offsets is offered without"):
        expected_paired_difference(
            y, a, b, metric=make_noisy_scorer("r2", force_finite=False), **offsets
        )


# --------------------------------------------------------------------------- #
# 6. The command line's interrupt and broken pipe (cli/_main.py main, _main)
# --------------------------------------------------------------------------- #
def _raising(exception):
    def run(args, printer):
        print("partial output")
        raise exception

    return run


def test_cli_interrupt_exits_130_with_one_line(monkeypatch, capsys):
    # KeyboardInterrupt during the work: exit code 130 (documented in main's
    # docstring) and exactly one line on stderr, no traceback.
    add_parser = cli_main._COMMANDS["plan"][0]
    monkeypatch.setitem(
        cli_main._COMMANDS, "plan", (add_parser, _raising(KeyboardInterrupt()))
    )
    assert cli_main.main(["plan", "--budget", "3"]) == 130
    captured = capsys.readouterr()
    assert captured.err == "sklearn-noisy: interrupted\n"
    assert captured.out == "partial output\n"


def test_cli_broken_pipe_exits_141_quietly(monkeypatch, capsys):
    # BrokenPipeError on stdout (the reader went away): exit code 141, nothing
    # on stderr. Under capsys stdout has no file descriptor to redirect to
    # devnull: that is suppressed too.
    add_parser = cli_main._COMMANDS["evaluate"][0]
    monkeypatch.setitem(
        cli_main._COMMANDS, "evaluate", (add_parser, _raising(BrokenPipeError()))
    )
    assert cli_main.main(["evaluate"]) == 141
    assert capsys.readouterr().err == ""
