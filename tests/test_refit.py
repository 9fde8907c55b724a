"""``refit_within_noise``: the simplest candidate within the noise of the best.

A hand-made ``cv_results_`` with known numbers checks the rule; a seeded
simulation (polynomial degrees whose true MSEs differ by less than the label
noise, the true MSE computed against noise-free values on a large held-out
set) checks what it buys and what it costs.
"""

from __future__ import annotations

import functools
import math
import pickle

import numpy as np
import pytest
from scipy.stats import loguniform
from sklearn.linear_model import LinearRegression, Ridge
from sklearn.model_selection import GridSearchCV, KFold, RandomizedSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import PolynomialFeatures

from sklearn_noisy.metrics import make_noisy_scorer
from sklearn_noisy.model_selection import refit_within_noise


def _minus_alpha(params):
    """Complexity of a ridge: a greater alpha is simpler (module-level: pickles)."""
    return -params["alpha"]


def _cv_results():
    """4 candidates, 4 folds; the best (index 1) has SE 0.1 from label noise."""
    means = np.array([0.80, 0.85, 0.76, 0.60])
    expected = np.array(
        [
            [0.80, 0.80, 0.80, 0.80],
            [0.75, 0.95, 0.75, 0.95],  # sample SD sqrt(0.04 / 3), mean 0.85
            [0.76, 0.76, 0.76, 0.76],
            [0.60, 0.60, 0.60, 0.60],
        ]
    )
    variance = np.full((4, 4), 0.04)  # sqrt(4 * 0.04) / 4 = 0.1
    results = {
        "params": [{"alpha": a} for a in (0.1, 1.0, 10.0, 100.0)],
        "param_alpha": np.ma.masked_array([0.1, 1.0, 10.0, 100.0]),
        "mean_test_expected": means,
        "mean_test_variance": variance.mean(axis=1),
    }
    for k in range(4):
        results[f"split{k}_test_expected"] = expected[:, k]
        results[f"split{k}_test_variance"] = variance[:, k]
    return results


# --------------------------------------------------------------- known numbers
def test_hand_made_cv_results():
    rule = refit_within_noise(complexity="alpha", simpler="higher")
    steps = rule.select(_cv_results())
    assert steps["best_index"] == 1
    assert steps["n_splits"] == 4
    assert steps["se"] == pytest.approx(0.1, rel=1e-12)
    assert steps["threshold"] == pytest.approx(0.75, rel=1e-12)
    assert steps["within"].tolist() == [0, 1, 2]
    assert steps["index"] == 2  # alpha=10, the simplest of the three
    assert rule(_cv_results()) == 2


@pytest.mark.parametrize(
    ("options", "index"),
    [
        ({"n_std": 0.0}, 1),  # the best itself
        ({"n_std": 2.6}, 3),  # threshold 0.59: every candidate
        ({"simpler": "lower"}, 0),  # alpha=0.1 counted the simplest
        ({"complexity": _minus_alpha}, 2),  # the same order as simpler="higher"
        ({"complexity": "param_alpha"}, 2),  # the cv_results_ column name
        # The spread of the best's fold scores: SE sqrt(0.04 / 3) / 2 = 0.0577,
        # threshold 0.792, so alpha=10 (0.76) is out.
        ({"se": "folds"}, 1),
    ],
)
def test_hand_made_options(options, index):
    kwargs = {"complexity": "alpha", "simpler": "higher", **options}
    if callable(kwargs["complexity"]):
        kwargs["simpler"] = "lower"
    assert refit_within_noise(**kwargs)(_cv_results()) == index


def test_folds_se_is_the_sample_sd_over_root_k():
    steps = refit_within_noise(complexity="alpha", se="folds").select(_cv_results())
    assert steps["se"] == pytest.approx(math.sqrt(0.04 / 3) / 2, rel=1e-12)


def test_equally_simple_candidates_take_the_better_score():
    results = _cv_results()
    results["params"] = [{"alpha": 1.0, "fit_intercept": b} for b in (0, 1, 1, 0)]
    results["mean_test_expected"] = np.array([0.80, 0.85, 0.82, 0.84])
    rule = refit_within_noise(complexity="alpha")
    assert rule(results) == 1  # all as simple; 0.85 is the best
    results["mean_test_expected"] = np.array([0.80, 0.85, 0.85, 0.84])
    assert rule(results) == 1  # a tie of scores too: the first


def test_nan_candidates_are_left_out():
    results = _cv_results()
    results["mean_test_expected"] = np.array([0.80, 0.85, 0.76, np.nan])
    rule = refit_within_noise(complexity="alpha", simpler="higher", n_std=5.0)
    assert rule(results) == 2
    results["mean_test_expected"] = np.full(4, np.nan)
    with pytest.raises(ValueError, match="NaN"):
        rule(results)
    results = _cv_results()
    results["split2_test_variance"] = np.array([0.04, np.nan, 0.04, 0.04])
    with pytest.raises(ValueError, match="standard error of the best candidate"):
        rule(results)


# ------------------------------------------------------------------ validation
@pytest.mark.parametrize(
    ("options", "error", "match"),
    [
        ({"complexity": 3}, TypeError, "complexity must be"),
        ({"complexity": ""}, TypeError, "complexity must be"),
        ({"simpler": "down"}, ValueError, "simpler must be one of"),
        ({"n_std": -1.0}, ValueError, "n_std must be finite and >= 0"),
        ({"n_std": math.nan}, ValueError, "n_std must be finite and >= 0"),
        ({"n_std": "1"}, TypeError, "n_std must be a real number"),
        ({"n_std": True}, TypeError, "n_std must be a real number"),
        ({"se": "bootstrap"}, ValueError, "se must be one of"),
        ({"score": ""}, TypeError, "score must be a non-empty str"),
        ({"variance": None}, TypeError, "variance must be a non-empty str"),
    ],
)
def test_invalid_arguments_fail_up_front(options, error, match):
    with pytest.raises(error, match=match):
        refit_within_noise(**{"complexity": "alpha", **options})


def test_complexity_must_name_a_number_of_every_candidate():
    results = _cv_results()
    with pytest.raises(ValueError, match="complexity='gamma' is not a parameter"):
        refit_within_noise(complexity="gamma")(results)
    results["params"][2] = {"alpha": "ten"}
    with pytest.raises(ValueError, match="finite number for every candidate"):
        refit_within_noise(complexity="alpha")(results)


def test_missing_variance_columns_say_to_use_output_all():
    X, y = _data(np.random.RandomState(0), 40, 0.0)
    search = GridSearchCV(
        Ridge(),
        {"alpha": [0.1, 1.0]},
        cv=3,
        scoring="neg_mean_squared_error",
        refit=refit_within_noise(complexity="alpha"),
    )
    with pytest.raises(ValueError, match=r"make_noisy_scorer\(\.\.\., output='all'\)"):
        search.fit(X, y)
    results = _cv_results()
    del results["split0_test_variance"], results["mean_test_variance"]
    with pytest.raises(ValueError, match="variance='variance'"):
        refit_within_noise(complexity="alpha")(results)
    with pytest.raises(TypeError, match="cv_results_"):
        refit_within_noise(complexity="alpha")([0.1, 0.2])


def test_folds_se_serves_a_plain_scikit_learn_scorer():
    X, y = _data(np.random.RandomState(0), 60, 0.0)
    rule = refit_within_noise(
        complexity="alpha", simpler="higher", se="folds", score="score"
    )
    search = GridSearchCV(
        Ridge(), {"alpha": [0.1, 1.0, 1e4]}, cv=4, scoring="r2", refit=rule
    ).fit(X, y)
    assert search.best_index_ == rule.select(search.cv_results_)["index"]
    assert search.best_index_ in (0, 1)  # alpha=1e4 scores far below the noise


# ---------------------------------------------------- scikit-learn's searches
def test_randomized_search_and_pickling():
    X, y = _data(np.random.RandomState(1), 80, 0.0)
    scorer = make_noisy_scorer("mean_squared_error", sigma=1.0, output="all")
    rule = refit_within_noise(complexity=_minus_alpha)
    search = RandomizedSearchCV(
        Ridge(),
        {"alpha": loguniform(1e-2, 1e3)},
        n_iter=6,
        cv=4,
        scoring=scorer,
        refit=rule,
        random_state=0,
    ).fit(X, y)
    steps = rule.select(search.cv_results_)
    assert search.best_index_ == steps["index"]
    alphas = np.array([p["alpha"] for p in search.cv_results_["params"]])
    assert alphas[steps["index"]] == alphas[steps["within"]].max()
    restored = pickle.loads(pickle.dumps(search))
    assert restored.best_index_ == search.best_index_
    assert restored.refit(search.cv_results_) == search.best_index_
    assert "refit_within_noise(complexity=_minus_alpha" in repr(rule)


# ------------------------------------------------------------------ simulation
DEGREES = [1, 2, 3, 4, 5]
N_TRAIN, SIGMA, N_STD = 120, 1.0, 1.0
X_HELD_OUT = np.random.RandomState(12345).uniform(-2.0, 2.0, size=(20_000, 1))
#: Size of the quadratic term: 0 (degree 1 is right), 0.1 and 0.27 (the true
#: MSEs of degrees 1 and 2 differ by about 0.1 and 0.65 SE: within the noise),
#: 0.35 and 0.45 (about 1.1 and 1.9 SE: just beyond it), 1 (about 10 SE).
SETTINGS_FULL = (0.0, 0.1, 0.27, 0.35, 0.45, 1.0)
SETTINGS_SMALL = (0.1, 1.0)


def _truth(X, a):
    """Noise-free values: a line and a quadratic term of size ``a``."""
    return X[:, 0] + a * X[:, 0] ** 2


def _data(rng, n, a):
    X = rng.uniform(-2.0, 2.0, size=(n, 1))
    return X, _truth(X, a) + rng.normal(scale=SIGMA, size=n)


def _true_mse(model, a):
    return float(np.mean((model.predict(X_HELD_OUT) - _truth(X_HELD_OUT, a)) ** 2))


@functools.cache
def simulate_refit(a, n_replicates, *, first_seed=0):
    """Per replicate: the rule's and the argmax's choice, the truth, the SE.

    Each replicate draws ``N_TRAIN`` samples, searches the polynomial degrees
    with 5 folds and the truth-MSE scorer (``sigma=SIGMA`` known), refits with
    ``refit_within_noise(n_std=N_STD)``, and measures every degree fitted on
    the same samples against the noise-free values on ``X_HELD_OUT``.
    ``regret`` is the refitted model's true MSE less the truly best degree's,
    ``gap`` that of degree 1 (the simplest) less the truly best's.
    """
    scorer = make_noisy_scorer("mean_squared_error", sigma=SIGMA, output="all")
    rule = refit_within_noise(complexity="polynomialfeatures__degree", n_std=N_STD)
    rows = []
    for seed in range(first_seed, first_seed + n_replicates):
        X, y = _data(np.random.RandomState(seed), N_TRAIN, a)
        search = GridSearchCV(
            make_pipeline(PolynomialFeatures(), LinearRegression()),
            {"polynomialfeatures__degree": DEGREES},
            cv=KFold(5, shuffle=True, random_state=seed),
            scoring=scorer,
            refit=rule,
        ).fit(X, y)
        steps = rule.select(search.cv_results_)
        true = np.array(
            [
                _true_mse(
                    make_pipeline(PolynomialFeatures(d), LinearRegression()).fit(X, y),
                    a,
                )
                for d in DEGREES
            ]
        )
        rows.append(
            {
                "rule": search.best_index_,
                "argmax": steps["best_index"],
                "truly_best": int(true.argmin()),
                "regret": _true_mse(search.best_estimator_, a) - true.min(),
                "regret_argmax": true[steps["best_index"]] - true.min(),
                "gap": true[0] - true.min(),
                "se": steps["se"],
            }
        )
    return {key: np.array([row[key] for row in rows]) for key in rows[0]}


def _mean_se(values):
    """The mean of ``values`` and its standard error."""
    return float(np.mean(values)), float(
        np.std(values, ddof=1) / math.sqrt(values.size)
    )


def summarise_refit(sim):
    """The table's numbers for one setting (fractions and means with their SE)."""
    rule_simplest = (sim["rule"] == 0).astype(float)
    argmax_right = (sim["argmax"] == sim["truly_best"]).astype(float)
    over = sim["regret"] > N_STD * sim["se"]
    return {
        "n": sim["se"].size,
        "se": float(sim["se"].mean()),
        "gap": _mean_se(sim["gap"] / sim["se"]),
        "within": float(np.mean(sim["gap"] <= N_STD * sim["se"])),
        "rule_simplest": _mean_se(rule_simplest),
        "rule_right": float(np.mean(sim["rule"] == sim["truly_best"])),
        "argmax_simplest": float(np.mean(sim["argmax"] == 0)),
        "argmax_right": _mean_se(argmax_right),
        # paired: the same replicates
        "difference": _mean_se(rule_simplest - argmax_right),
        "regret": _mean_se(sim["regret"]),
        "regret_argmax": _mean_se(sim["regret_argmax"]),
        "max_regret_in_se": float(np.max(sim["regret"] / sim["se"])),
        "over": float(np.mean(over)),
    }


def format_refit_table(settings, n_replicates):
    """The user guide's table: one line per size ``a`` of the quadratic term."""
    lines = [
        f"{'a':>5}{'SE':>7}{'gap/SE':>8}{'within':>8}{'rule→1':>8}{'argmax→1':>9}"
        f"{'rule ok':>8}{'argmax ok':>10}{'mean regret rule':>19}"
        f"{'argmax':>17}{'max/SE':>8}{'>1 SE':>7}"
    ]
    for a in settings:
        row = summarise_refit(simulate_refit(a, n_replicates))
        lines.append(
            f"{a:>5.2f}{row['se']:>7.3f}{row['gap'][0]:>8.2f}{row['within']:>8.2f}"
            f"{row['rule_simplest'][0]:>8.3f}{row['argmax_simplest']:>9.3f}"
            f"{row['rule_right']:>8.3f}{row['argmax_right'][0]:>10.3f}"
            f"{row['regret'][0]:>11.4f} ± {row['regret'][1]:.4f}"
            f"{row['regret_argmax'][0]:>9.4f} ± {row['regret_argmax'][1]:.4f}"
            f"{row['max_regret_in_se']:>8.2f}{row['over']:>7.3f}"
        )
    return "\n".join(lines)


def _check_refit(settings, n_replicates, z):
    """The criteria of the rule, with tolerances of ``z`` simulation SEs.

    Where the simplest candidate is truly within the noise of the best
    (``gap <= n_std * se``): the rule never loses more than ``n_std * se`` of
    true MSE, and in the settings within the noise it refits the simplest
    model at least as often as the argmax picks the truly best one (and in
    nearly every replicate where the gap is a tenth of an SE or less). In
    every setting, its mean loss is below ``n_std`` mean SEs, it is never
    more complex than the argmax, and it keeps the quadratic term when that
    is far beyond the noise.
    """
    for a in settings:
        sim = simulate_refit(a, n_replicates)
        row = summarise_refit(sim)
        table = format_refit_table([a], n_replicates)
        assert sim["se"].min() > 0.12, table  # the stated noise: 0.12 to 0.18
        assert np.all(sim["rule"] <= sim["argmax"]), table  # never more complex
        within = sim["gap"] <= N_STD * sim["se"]
        assert np.all(sim["regret"][within] <= N_STD * sim["se"][within]), table
        mean, se = row["regret"]
        assert mean + z * se < N_STD * row["se"], table
        if row["gap"][0] < N_STD:  # within the noise on average
            difference, se = row["difference"]
            assert difference >= -z * se, table
        if row["gap"][0] < 0.2:
            assert row["rule_simplest"][0] >= 0.95, table
        if row["gap"][0] > 5.0:  # degree 2, every time
            assert np.all(sim["rule"] == 1), table


def test_simulation_small():
    """Two settings, 24 seeded replicates each (about 2 s): the full criteria.

    ``a=0.1``: degree 1 within the noise (the rule refits it every time, the
    argmax picks the truly best degree in a third of the replicates); ``a=1``:
    far beyond it (degree 2 every time).
    """
    _check_refit(SETTINGS_SMALL, 24, z=3.0)
    sim = simulate_refit(0.1, 24)
    assert np.all(sim["rule"] == 0)
    assert np.mean(sim["argmax"] == sim["truly_best"]) < 0.5


@pytest.mark.slow
def test_simulation_full():
    """Six settings, 200 replicates each (about 1 to 3 min): the user guide's
    table (``pytest --run-slow tests/test_refit.py -k full -s`` prints it)."""
    print("\n" + format_refit_table(SETTINGS_FULL, 200))
    _check_refit(SETTINGS_FULL, 200, z=5.0)


def test_no_fold_columns():
    results = _cv_results()
    for k in range(4):
        del results[f"split{k}_test_variance"]
    with pytest.raises(ValueError, match="per-fold columns split<k>_test_variance"):
        refit_within_noise(complexity="alpha")(results)
