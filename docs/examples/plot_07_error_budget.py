"""
======================================================
The error budget: label noise and the finite test set
======================================================

A metric computed on a test set is uncertain for two reasons. The labels are
measurements: measured again, they would differ (the **label noise**, what
every ``expected_*`` result reports). And the test set is a finite sample of
the patients, or specimens, the model will meet: another sample of the same
size would give another value (the **test-set sampling**). This example puts
the two side by side on the embedded diagnosis data, where each recorded
label is wrong with a known probability :math:`q_i`, and then on the oxygen
sensor, where the labels are means of repeated readings.
"""

# %%
# Cross-validation reports both
# -----------------------------
# :class:`~sklearn_noisy.model_selection.NoisyCrossValidator` estimates the
# test-set sampling of every pooled estimate (``test_set_sampling=True``, the
# default). Its report opens with the summary, the number to report per metric
# with the interval that covers both sources; the accuracy block ends with the
# **error budget** line, the parts of that interval.
import matplotlib.pyplot as plt
import numpy as np
from sklearn.linear_model import LogisticRegression

from sklearn_noisy.datasets import load_noisy_diagnosis
from sklearn_noisy.model_selection import NoisyCrossValidator

diagnosis = load_noisy_diagnosis()
X, y, q = diagnosis.data, diagnosis.target, diagnosis.flip_probability
cv = NoisyCrossValidator(LogisticRegression()).fit(X, y, q=q)
report = str(cv).splitlines()
summary = next(i for i, line in enumerate(report) if line.startswith("Summary"))
start = report.index("accuracy (higher is better)")
print("\n".join([*report[summary : summary + 5], "", *report[start : start + 10]]))

# %%
# The same numbers as objects
# ---------------------------
# Each pooled estimate is a :class:`~sklearn_noisy.NoisyScore`: ``std`` is the
# label noise, ``sampling_std`` the test-set sampling (here from the per-sample
# terms of the accuracy, ``sampling_method="per_sample_terms"``), and
# ``confidence_interval(source=...)`` gives the interval of either source or
# of both.
truth = cv.pooled_estimates_["accuracy"]["truth"]
print(truth)
for source in ("label_noise", "sampling", "both"):
    low, high = truth.confidence_interval(0.95, source=source)
    print(f"95 % interval, {source:<11}: [{low:.3f}, {high:.3f}]")

# %%
# The lecture's interval for an accuracy
# --------------------------------------
# Textbooks give the test-set interval of an accuracy (or error rate) ``e``
# measured on ``n`` samples as ``e ± z sqrt(e (1 - e) / n)``, and Wilson's
# score interval as a better one at small ``n``. Both are available for the
# accuracy, with ``n`` the effective number of samples of the source's
# variance. The lecture's variance ``e (1 - e) / n`` is that of the accuracy
# on the labels as recorded over new test sets, whose labels are noisy too:
# both sources together. So on the remeasurement estimate (the accuracy on the
# recorded labels, from the out-of-fold predictions), ``source="both"`` with
# ``method="binomial"`` is the lecture's interval, up to a factor
# ``n / (n - 1)`` in the variance.
from sklearn_noisy.metrics import expected_accuracy_score

remeasurement = expected_accuracy_score(
    y,
    cv.oof_predictions_,
    q=q,
    estimand="remeasurement",
    test_set_sampling=True,
)
e, n = remeasurement.expected, remeasurement.n_samples
half = 1.96 * np.sqrt(e * (1 - e) / n)
print(f"lecture:  [{e - half:.4f}, {e + half:.4f}]")
for method in ("binomial", "wilson"):
    low, high = remeasurement.confidence_interval(0.95, source="both", method=method)
    print(f"{method + ':':<9} [{low:.4f}, {high:.4f}]")

# %%
# The budget of every metric
# --------------------------
# The metrics that are not means of per-sample terms (balanced accuracy, F1,
# log-loss) get their sampling variance from a seeded bootstrap over the
# out-of-fold predictions (``sampling_method="bootstrap"``). For each metric,
# the SD of each source and of both together (the two add in variance, not in
# SD):
names = ["accuracy", "balanced_accuracy", "f1", "log_loss"]
scores = [cv.pooled_estimates_[m][cv.estimands_[m]["lead"]] for m in names]
sds = np.array([[s.std, s.sampling_std, s.total_std] for s in scores])

fig, ax = plt.subplots(figsize=(6.4, 3.8), layout="constrained")
positions = np.arange(len(names))
for k, (label, colour) in enumerate(
    [("label noise", "C0"), ("test-set sampling", "C1"), ("both", "0.4")]
):
    ax.barh(positions + (k - 1) * 0.27, sds[:, k], 0.27, label=label, color=colour)
ax.set_yticks(positions, ["Accuracy", "Balanced accuracy", "F1", "Log-loss"])
ax.invert_yaxis()
ax.set_xlabel("SD of the pooled truth estimate")
ax.set_title("Error budget, logistic regression on the diagnosis data")
fig.legend(loc="outside lower center", ncols=3)
plt.show()

# %%
# When the test set dominates
# ---------------------------
# On the oxygen sensor, a plain ridge regression misses the curvature of the
# calibration: its errors against the truth vary much more from sample to
# sample than the labels' noise, and the test-set sampling dominates the
# budget of the truth MSE (``sampling_method="per_sample_terms"``; the RMSE
# follows by the delta method).
from sklearn.linear_model import Ridge

from sklearn_noisy.datasets import load_oxygen_sensor

oxygen = load_oxygen_sensor()
cv = NoisyCrossValidator(Ridge(), scoring=["mean_squared_error"]).fit(
    oxygen.data,
    oxygen.target,
    sigma=oxygen.target_sigma,
    sigma_dof=oxygen.n_repeats - 1.0,
)
mse = cv.pooled_estimates_["mean_squared_error"]["truth"]
print(
    f"truth MSE {mse.expected:.3f} ± {mse.std:.3f} (label noise) "
    f"± {mse.sampling_std:.3f} (test set)"
)
low, high = mse.confidence_interval(0.95, source="both")
print(f"95 % interval with both sources: [{low:.3f}, {high:.3f}]")

# %%
# A new test set
# --------------
# The intervals above are for the model's performance on the population the
# test set was drawn from. The metric that the *next* test set of the same
# size shows spreads more, because it has its own sampling:
# ``prediction_interval`` adds it (user guide: :ref:`error_budget`).
low, high = mse.prediction_interval(0.95)
print(f"95 % prediction interval for a new test set of 300: [{low:.3f}, {high:.3f}]")
