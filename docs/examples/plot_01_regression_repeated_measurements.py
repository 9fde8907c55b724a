"""
=======================================================
Regression with repeated measurements: an oxygen sensor
=======================================================

A luminescence oxygen sensor is calibrated against a reference analyser. Every
calibration sample was read 3 to 8 times by the analyser, and the analyser's
error grows with the oxygen concentration. This example goes from the raw
repeats to a noise-aware cross-validation, following the workflow of
Michelucci & Venturini (2023, §5): average the repeats, estimate each label's
standard error, then evaluate.
"""

# %%
# The raw repeats
# ---------------
# :func:`~sklearn_noisy.datasets.load_oxygen_sensor` returns the sensor readout
# (phase angle, intensity, temperature) and, in ``repeats``, the analyser's
# readings padded with NaN.
import matplotlib.pyplot as plt
import numpy as np

from sklearn_noisy.datasets import load_oxygen_sensor
from sklearn_noisy.preprocessing import summarize_repeats

sensor = load_oxygen_sensor()
X, repeats = sensor.data, sensor.repeats
print(sensor.feature_names)
print(np.round(repeats[:3], 3))

# %%
# Summarise the repeats
# ---------------------
# :func:`~sklearn_noisy.preprocessing.summarize_repeats` returns the mean of each
# sample's repeats (the best-known label) and its standard error
# :math:`s_i/\sqrt{n_i}`. It warns because some samples have only 3 or 4
# repeats, from which a standard deviation is itself uncertain by 40 % or more;
# the warning is expected here and silenced.
import warnings

with warnings.catch_warnings():
    warnings.simplefilter("ignore", UserWarning)
    summary = summarize_repeats(repeats)
y, sigma = summary.y_mean, summary.sigma
print(f"{y.size} samples, sigma from {sigma.min():.3f} to {sigma.max():.3f} % O2")

fig, ax = plt.subplots(figsize=(6, 3.5))
points = ax.scatter(y, sigma, c=summary.n_repeats, cmap="viridis", s=14)
fig.colorbar(points, ax=ax, label="number of repeats")
ax.set_xlabel("mean of the repeats [% O2]")
ax.set_ylabel(r"standard error $\sigma_i$ [% O2]")
ax.set_title("Heteroscedastic label error")
fig.tight_layout()

# %%
# Cross-validate with the label errors
# ------------------------------------
# :class:`~sklearn_noisy.model_selection.NoisyCrossValidator` slices ``sigma``
# to each test fold itself. For a regressor the default metrics are MSE, RMSE,
# MAE and R², each reported with its expected value over the label noise, its
# variance and its nominal value (the classical metric on the mean labels).
from sklearn.linear_model import Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import PolynomialFeatures, StandardScaler

from sklearn_noisy.model_selection import NoisyCrossValidator

model = make_pipeline(StandardScaler(), PolynomialFeatures(degree=3), Ridge(alpha=1e-3))
cv = NoisyCrossValidator(model, cv=5).fit(X, y, sigma=sigma)
print(cv)

# %%
# The pooled results are :class:`~sklearn_noisy.NoisyScore` objects over all
# out-of-fold predictions. The expected MSE exceeds the nominal MSE by exactly
# the mean of :math:`\sigma_i^2`: the part of the error that no model can remove.
mse = cv.pooled_["mean_squared_error"]
print(mse)
print(f"E[MSE] - MSE = {mse.expected - mse.nominal:.6f}")
print(f"mean sigma^2 = {np.mean(sigma**2):.6f}")
print("95 % label-noise interval:", mse.confidence_interval(0.95))

# %%
# The between-fold spread is reported separately from the label noise; it is
# not a standard error of cross-validation (see :ref:`reading_results`).
print(cv.fold_summary_["mean_squared_error"])

# %%
# Per fold: the expected RMSE with its label-noise interval, the nominal value
# (a cross), and the pooled value with its band. The nominal values lie below
# the expected ones: against a new measurement of the labels, the label variance
# adds, on average, to the squared error of every sample.
from sklearn_noisy.model_selection import NoisyCVDisplay

display = NoisyCVDisplay.from_cv_results(cv, metric="root_mean_squared_error")
plt.show()

# %%
# Which sigma?
# ------------
# The standard error of the mean describes the labels we evaluated against. To
# ask how the model would compare with *one new reading* of the analyser, use
# the spread of a single measurement instead (``sigma="std"``): the expected
# error is larger, because a single reading is noisier than the mean.
from sklearn_noisy import expected_mean_squared_error

with warnings.catch_warnings():
    warnings.simplefilter("ignore", UserWarning)
    sigma_single = summarize_repeats(repeats, sigma="std").sigma
oof = cv.oof_predictions_
for name, s in [("mean of the repeats", sigma), ("one new reading", sigma_single)]:
    score = expected_mean_squared_error(y, oof, sigma=s)
    print(f"{name:>20}: E[MSE] = {score.expected:.4f} +- {score.std:.4f}")
