"""
=============================================
Comparing two models on the same noisy labels
=============================================

Is model A better than model B once the label error is counted? Both models are
scored on the *same* noisy labels, so their scores move together when a label
is measured too high or too low.
:func:`~sklearn_noisy.model_selection.compare_estimators` fits the models on the
same folds and computes the exact variance of the difference, which accounts
for that shared noise (see :ref:`paired_comparison`).
"""

# %%
# Two regressors for the oxygen sensor
# ------------------------------------
import matplotlib.pyplot as plt
import numpy as np
from sklearn.linear_model import Ridge
from sklearn.model_selection import KFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import PolynomialFeatures, StandardScaler

from sklearn_noisy.datasets import load_oxygen_sensor
from sklearn_noisy.model_selection import compare_estimators

sensor = load_oxygen_sensor()
X, y, sigma = sensor.data, sensor.target, sensor.target_sigma


def polynomial_ridge(degree):
    return make_pipeline(
        StandardScaler(), PolynomialFeatures(degree), Ridge(alpha=1e-3)
    )


estimators = {"cubic": polynomial_ridge(3), "quadratic": polynomial_ridge(2)}
comparison = compare_estimators(
    estimators,
    X,
    y,
    scoring=["mean_squared_error", "mean_absolute_error"],
    cv=KFold(5, shuffle=True, random_state=0),
    sigma=sigma,
)
print(comparison)

# %%
# The paired difference
# ---------------------
# ``differences[("cubic", "quadratic")]["mean_squared_error"]`` is the
# distribution of :math:`\mathrm{MSE}_{\text{cubic}} - \mathrm{MSE}_{\text{quadratic}}`
# over the label noise, pooled over the folds. For MSE the difference is linear
# in the labels, and its variance is exactly
# :math:`\frac{4}{M^2}\sum_i \sigma_i^2 (a_i - b_i)^2`: only the samples where
# the two predictions differ contribute.
#
# For MSE the difference needs no de-noising, although the labels are
# measurements: the label variance :math:`\sigma_i^2` adds equally to both
# models and cancels. Its expectation is the nominal difference, which is
# unbiased both for the difference against the true values and for the
# difference a re-measurement will show; the three estimands agree here (see
# :ref:`paired_comparison`).
difference = comparison.differences[("cubic", "quadratic")]["mean_squared_error"]
print(difference)
low, high = difference.confidence_interval(0.95)
print(
    f"MSE(cubic) - MSE(quadratic) = {difference.expected:.4f}, "
    f"95 % label-noise interval [{low:.4f}, {high:.4f}]"
)

# %%
# Pairing matters. Treating the two scores as independent would add their
# variances; the paired variance removes the noise they share. With similar
# models it is far smaller.
pooled = comparison.pooled
independent = (
    pooled["cubic"]["mean_squared_error"].variance
    + pooled["quadratic"]["mean_squared_error"].variance
)
print(f"independent (wrong): Var = {independent:.3e}")
print(f"paired (exact):      Var = {difference.variance:.3e}")
print(f"ratio: {difference.variance / independent:.4f}")

# %%
# The same number from the out-of-fold predictions, with
# :func:`~sklearn_noisy.metrics.expected_paired_difference`:
from sklearn.model_selection import cross_val_predict

from sklearn_noisy.metrics import expected_paired_difference

folds = KFold(5, shuffle=True, random_state=0)
a, b = (cross_val_predict(est, X, y, cv=folds) for est in estimators.values())
print(expected_paired_difference(y, a, b, metric="mean_squared_error", sigma=sigma))
paired_variance = 4 * np.sum(sigma**2 * (a - b) ** 2) / y.size**2
print(f"4 sum(sigma^2 (a - b)^2) / M^2 = {paired_variance:.6e}")

# %%
# Label noise versus the split
# ----------------------------
# The label-noise interval says whether re-measuring the labels could reverse
# the ranking on these test sets. Whether the ranking would hold for another
# training set is a different question, addressed by the per-fold differences
# and the Nadeau–Bengio corrected resampled *t*-test.
per_fold = comparison.fold_differences[("cubic", "quadratic")]["mean_squared_error"]
test = comparison.t_tests[("cubic", "quadratic")]["mean_squared_error"]
print(test)

fig, ax = plt.subplots(figsize=(6.5, 3.8))
ax.axhline(0, color="k", lw=0.8)
ax.errorbar(
    np.arange(1, len(per_fold) + 1),
    [d.expected for d in per_fold],
    yerr=[1.96 * d.std for d in per_fold],
    fmt="o",
    capsize=3,
    label="per fold: expected ± 1.96 SD (label noise)",
)
ax.axhspan(low, high, color="C1", alpha=0.3, label="pooled: 95 % label-noise interval")
ax.axhline(difference.expected, color="C1")
ax.set_xticks(range(1, len(per_fold) + 1))
ax.set_xlabel("fold")
ax.set_ylabel("MSE(cubic) − MSE(quadratic)")
ax.legend(fontsize="small")
fig.tight_layout()
plt.show()

# %%
# Re-measuring the labels could not reverse the ranking on these test sets: the
# 95 % label-noise interval of the pooled difference is far from 0. The
# corrected *t*-test asks a different question, whether the ranking would hold
# for other training sets, and with five folds its answer is much less
# certain (the p-value above). Report both, and say which is which (see
# :ref:`reading_results`).
#
# ``summary()`` ranks the estimators by the first metric, with the paired
# difference to the best one:
comparison.summary()
