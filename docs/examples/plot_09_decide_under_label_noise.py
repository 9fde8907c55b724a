"""
=================================================================
Deciding under label noise: which model, and what to measure next
=================================================================

Three decisions on the embedded wheat-protein data (300 samples, each label
the mean of 2 to 4 reference analyses), each taken with the label noise
counted: which of two calibrations is truly better
(:func:`~sklearn_noisy.model_selection.compare_estimators`), which polynomial
degree to refit in a grid search
(:func:`~sklearn_noisy.model_selection.refit_within_noise`), and where to spend
150 more reference analyses so that the interval of the result shrinks most
(:func:`~sklearn_noisy.model_selection.plan_remeasurement`). The last step is
then carried out, in simulation, to check that the interval shrinks as
predicted. Every number in the text below is printed by the code above it.
"""

# %%
# The data and two calibrations
# -----------------------------
# The labels are means of repeated analyses; ``target_sigma`` is each mean's
# standard error estimated from its own 2 to 4 readings (so ``sigma_dof`` is
# the number of readings minus one). The two candidates are polynomial ridge
# regressions of degree 2 and 3 (the command line's default model is the
# cubic one).
import matplotlib.pyplot as plt
import numpy as np
import sklearn
from sklearn.linear_model import RidgeCV
from sklearn.model_selection import GridSearchCV, KFold, cross_val_predict
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import PolynomialFeatures, StandardScaler

from sklearn_noisy.datasets import load_wheat_protein
from sklearn_noisy.metrics import expected_mean_squared_error, make_noisy_scorer
from sklearn_noisy.model_selection import (
    compare_estimators,
    plan_remeasurement,
    refit_within_noise,
)

wheat = load_wheat_protein()
X, y, sigma = wheat.data, wheat.target, wheat.target_sigma
n_readings = wheat.n_repeats
sigma_dof = n_readings - 1.0
folds = KFold(5, shuffle=True, random_state=0)


def polynomial_ridge(degree):
    alphas = np.logspace(-6, 1, 8)
    return make_pipeline(
        StandardScaler(), PolynomialFeatures(degree), RidgeCV(alphas=alphas)
    )


comparison = compare_estimators(
    {"cubic": polynomial_ridge(3), "quadratic": polynomial_ridge(2)},
    X,
    y,
    scoring=["mean_squared_error"],
    cv=folds,
    sigma=sigma,
    sigma_dof=sigma_dof,
)
print(comparison)

# %%
# Decision 1: is the quadratic calibration truly better?
# ------------------------------------------------------
# ``probability_better[(a, b)][metric]`` is the probability that *a*'s MSE
# against the true protein content is below *b*'s, from the paired difference
# and its label-noise and test-set-sampling variance (:ref:`probability_better`).
# It is the number a decision needs: not "could the difference be zero?" but
# "how likely is it that this one is better?".
p_quadratic = comparison.probability_better[("quadratic", "cubic")][
    "mean_squared_error"
]
difference = comparison.differences[("quadratic", "cubic")]["mean_squared_error"]
print(
    f"MSE(quadratic) - MSE(cubic) against the truth: {difference.expected:.5f} "
    f"(label-noise SD {difference.std:.5f})"
)
print(f"P(quadratic truly better) = {p_quadratic:.3f}")

# %%
# Decision 2: which degree to refit
# ---------------------------------
# A grid search over the degree picks the best mean score, even when the
# candidates differ by less than the label noise of their scores.
# ``refit_within_noise`` refits the simplest candidate whose truth MSE is within
# one standard error of the best (:ref:`refit_within_noise`). The scorer
# returns the truth estimate and its label-noise variance per fold
# (``output="all"``); σ and its degrees of freedom reach it through
# scikit-learn's metadata routing.
scorer = make_noisy_scorer("mean_squared_error", output="all")
refit = refit_within_noise(complexity="polynomialfeatures__degree", simpler="lower")
search = GridSearchCV(
    polynomial_ridge(1),
    {"polynomialfeatures__degree": [1, 2, 3, 4]},
    scoring=scorer,
    refit=refit,
    cv=folds,
)
with sklearn.config_context(enable_metadata_routing=True):
    search.fit(X, y, sigma=sigma, sigma_dof=sigma_dof)
steps = refit.select(search.cv_results_)
for degree, score in zip(
    search.cv_results_["param_polynomialfeatures__degree"],
    search.cv_results_["mean_test_expected"],
    strict=True,
):
    print(f"degree {degree}: truth MSE {-score:.5f}")
best_degree = search.cv_results_["params"][steps["best_index"]]
print(
    f"best mean score: {best_degree}; one standard error: {steps['se']:.5f}; "
    f"refitted: {search.best_params_}"
)
degree = search.best_params_["polynomialfeatures__degree"]

# %%
# Decision 3: what to measure next
# --------------------------------
# With the chosen degree, the truth MSE of the out-of-fold predictions has an
# interval dominated by the label noise. The laboratory can run 150 more
# analyses. Where should they go? ``plan_remeasurement`` adds them one at a time
# where they reduce the variance of the truth MSE most, and compares the plan
# with spreading them evenly (:ref:`planning_remeasurements`).
#
# **Which σ.** The plan assumes σ known. Each sample's own σ rests on 2 to 4
# readings (1 to 3 degrees of freedom), so the samples whose σ is largest are
# mostly those whose few readings happened to disagree, and a plan on them
# chases that chance. Given ``sigma_dof``, the plan uses the pooled SD of one
# analysis over all samples, σᵢ = s / √nᵢ (as ``sklearn-noisy plan`` does); the
# plan on each sample's own σ is kept for the check that follows.
y_pred = cross_val_predict(polynomial_ridge(degree), X, y, cv=folds)


def pooled_sd(readings):
    """The pooled SD of one reading: within-sample sum of squares over its dof."""
    centred = readings - np.nanmean(readings, axis=1, keepdims=True)
    return np.sqrt(np.nansum(centred**2) / np.sum(np.isfinite(readings).sum(1) - 1))


s_pooled = pooled_sd(wheat.repeats)
budget = 150
plan = plan_remeasurement(
    y, y_pred, sigma=sigma, sigma_dof=sigma_dof, n_readings=n_readings, budget=budget
)
plan_own = plan_remeasurement(
    y, y_pred, sigma=sigma, n_readings=n_readings, budget=budget
)
print(f"pooled SD of one analysis: {s_pooled:.4f} % protein")
print(plan)
print(
    "readings added per sample, by the sample's current readings:",
    {int(n): int(plan.readings[n_readings == n].sum()) for n in np.unique(n_readings)},
)

# %%
# Re-measuring, in simulation
# ---------------------------
# **This step is a simulation.** The wheat data are themselves simulated and
# ship their truth (``target_true``) and the noise model of the reference
# analysis (in the dataset's description): one analysis of a sample with true
# protein content *P* reads *P* + (0.10 + 0.016 *P*)·N(0, 1), rounded to
# 0.01 %. The new analyses below are drawn from that model around
# ``target_true``, as the file's own readings were; on real data they would
# come from the laboratory. The model's predictions are kept as they are: the
# plan sharpens the evaluation of these predictions, not the model.
rng = np.random.default_rng(0)
truth = wheat.target_true
s_true = 0.10 + 0.016 * truth  # the SD of one analysis


def analyses(counts):
    """New analyses, ``counts[i]`` of sample i, NaN-padded (rounded to 0.01 %)."""
    width = max(int(counts.max()), 1)
    drawn = truth[:, None] + s_true[:, None] * rng.normal(size=(truth.size, width))
    drawn = np.round(drawn, 2)
    drawn[np.arange(width)[None, :] >= counts[:, None]] = np.nan
    return drawn


def truth_mse(readings, s=s_pooled):
    """The truth MSE of ``y_pred`` on labels that are the means of ``readings``,
    σᵢ = s/√nᵢ (``s=None``: the pooled SD of these readings)."""
    counts = np.isfinite(readings).sum(axis=1)
    s = pooled_sd(readings) if s is None else s
    return expected_mean_squared_error(
        np.nanmean(readings, axis=1), y_pred, sigma=s / np.sqrt(counts)
    )


before = truth_mse(wheat.repeats)
after = truth_mse(np.hstack([wheat.repeats, analyses(plan.readings)]))
true_mse = np.mean((y_pred - truth) ** 2)
for name, score in (("before", before), ("after the plan", after)):
    low, high = score.confidence_interval(0.95)
    print(
        f"truth MSE {name}: {score.expected:.4f} ± {score.std:.4f} (label noise), "
        f"95 % interval [{low:.4f}, {high:.4f}]"
    )
print(f"predicted SD: {plan.std_before:.4f} before, {plan.std_after:.4f} after")
print(f"the MSE against target_true, which the simulation knows: {true_mse:.4f}")

# %%
# One re-measurement shows one draw. The SD the plan predicts is the spread of
# the truth MSE over repeated measurement of the same samples, so the check
# draws every analysis afresh, the first ones too, 400 times for each
# allocation: none (the readings as now), the even spread of the same 150
# analyses, the plan on each sample's own σ, and the plan on the pooled σ. The
# achieved SD is the standard deviation of the 400 truth MSEs, with its
# standard error. σ is held at the pooled value of the file's readings, as the
# plan takes it known.
allocations = {
    "now": (np.zeros_like(n_readings), plan.std_before),
    "even": (plan.readings_even, plan.std_even),
    "plan, own σ": (plan_own.readings, plan_own.std_after),
    "plan, pooled σ": (plan.readings, plan.std_after),
}
n_replicates = 400


def achieved_sd(counts, s=s_pooled):
    """SD of the truth MSE over fresh analyses, and its standard error."""
    values = [truth_mse(analyses(counts), s).expected for _ in range(n_replicates)]
    sd = np.std(values, ddof=1)
    return sd, sd / np.sqrt(2 * (n_replicates - 1))


achieved = {}
for name, (added, predicted) in allocations.items():
    achieved[name] = achieved_sd(n_readings + added)
    sd, se = achieved[name]
    print(
        f"{name:15s} predicted SD {predicted:.5f}, achieved {sd:.5f} ± {se:.5f} "
        f"(achieved / predicted {sd / predicted:.2f})"
    )

# %%
# What the plan leaves out: σ is estimated too. With σ pooled anew from each
# simulated set of readings, the truth MSE spreads more than the plan
# predicts, by the uncertainty of σ's own estimate, which the plan does not
# count (:ref:`planning_remeasurements`):
sd, se = achieved_sd(n_readings + plan.readings, s=None)
print(
    f"plan, pooled σ, σ estimated each time: achieved {sd:.5f} ± {se:.5f} "
    f"(achieved / predicted {sd / plan.std_after:.2f})"
)

# %%
# The plan on the pooled σ delivers about what it predicts, a little more than
# the even spread: the SD of one analysis varies little between these samples,
# so the plan mostly tops up the samples with the fewest readings, which the
# even spread partly does too. The plan on each sample's own σ promises far
# more than it delivers: its analyses went to samples whose σ was large by
# chance.
fig, ax = plt.subplots(figsize=(6.4, 3.6))
positions = np.arange(len(allocations))
ax.plot(
    positions,
    [predicted for _, predicted in allocations.values()],
    "o",
    label="predicted by plan_remeasurement",
)
ax.errorbar(
    positions + 0.1,
    [sd for sd, _ in achieved.values()],
    yerr=[2 * se for _, se in achieved.values()],
    fmt="s",
    capsize=3,
    label=f"achieved over {n_replicates} simulated re-measurements (± 2 SE)",
)
ax.set_xticks(positions, list(allocations))
ax.set_ylabel("SD of the truth MSE [(% protein)²]")
ax.set_ylim(0, None)
ax.set_title(f"{budget} more analyses: predicted and achieved SD")
ax.legend(fontsize="small", loc="lower left")
fig.tight_layout()
plt.show()

# %%
# The decision, in the numbers printed above: the comparison gives the
# probability that the quadratic calibration is truly better; the grid search
# refits the simplest degree within one standard error of the best; and the
# plan says where 150 analyses sharpen the truth MSE most. On the command line,
# ``sklearn-noisy plan --budget 150`` prints the same kind of plan for the
# default (cubic) model as a CSV file for the laboratory
# (:ref:`command_line_plan`).
