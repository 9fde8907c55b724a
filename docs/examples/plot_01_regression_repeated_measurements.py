"""
=======================================================
Regression with repeated measurements: an oxygen sensor
=======================================================

A luminescence oxygen sensor is calibrated against a reference analyser. Every
calibration sample was read 3 to 8 times by the analyser, and the analyser's
error grows with the oxygen concentration. This example goes from the raw
repeats to a noise-aware cross-validation: average the repeats, estimate each
label's standard error and its degrees of freedom, then ask how well the model
predicts the *true* concentrations. The data are simulated, so the true
concentrations are known too, and every answer can be checked.
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
# sample's repeats (the label), its standard error :math:`s_i/\sqrt{n_i}`, and
# the degrees of freedom of that standard error, :math:`n_i - 1`. With 3 to 8
# readings the standard errors are themselves uncertain (by 40 % or more for 3
# or 4 readings); ``sigma_dof`` lets the library carry that uncertainty into
# every variance it reports. The function warns about the samples with few
# repeats; the warning is expected here and silenced.
import warnings

with warnings.catch_warnings():
    warnings.simplefilter("ignore", UserWarning)
    summary = summarize_repeats(repeats)
y, sigma, sigma_dof = summary.y_mean, summary.sigma, summary.sigma_dof
print(f"{y.size} samples, sigma from {sigma.min():.3f} to {sigma.max():.3f} % O2")
print(f"degrees of freedom of sigma: {sigma_dof.min():.0f} to {sigma_dof.max():.0f}")

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
# and ``sigma_dof`` to each test fold itself. For a regressor the default
# metrics are MSE, RMSE, MAE and R². The report starts with a summary, the
# number to report per metric with its interval and unit (``unit=``); then the
# table shows, per fold and pooled, the nominal value, the estimate against the
# true values with its SD and interval, and the paper's forward value with its
# SD, each labelled with the question it answers. The labels are measurements,
# so the truth estimate leads. Where an interval starts at 0 the report gives
# an upper limit, ``< x``, and no point.
from sklearn.linear_model import Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import PolynomialFeatures, StandardScaler

from sklearn_noisy.model_selection import NoisyCrossValidator

model = make_pipeline(StandardScaler(), PolynomialFeatures(degree=3), Ridge(alpha=1e-3))
cv = NoisyCrossValidator(model, cv=5, unit="% O2")
cv.fit(X, y, sigma=sigma, sigma_dof=sigma_dof)
print(cv)

# %%
# Three questions, three numbers
# ------------------------------
# The pooled MSE over the 300 out-of-fold predictions, once per estimand (see
# :ref:`estimands`):
#
# * ``"truth"``: how well does the model predict the true concentrations? The
#   de-noised MSE, :math:`\frac1M\sum_i(\tilde d_i^2 - \hat\sigma_i^2)`, unbiased.
# * ``"remeasurement"``: what MSE will a re-measurement of these samples, made
#   the same way, show? The nominal MSE, which already contains the label noise
#   once.
# * ``"forward"``: the paper's E[MSE], which treats the means as exact and
#   measures them again. It counts the label noise twice, and is meant for exact
#   reference values.
from sklearn_noisy import expected_mean_squared_error

oof = cv.oof_predictions_
scores = {
    estimand: expected_mean_squared_error(
        y, oof, sigma=sigma, sigma_dof=sigma_dof, estimand=estimand
    )
    for estimand in ("truth", "remeasurement")
}
scores["forward"] = expected_mean_squared_error(y, oof, sigma=sigma, estimand="forward")
for estimand, score in scores.items():
    low, high = score.confidence_interval(0.95)
    print(
        f"{estimand:>13}: {score.expected:.4f} +- {score.std:.4f}  "
        f"95 % interval [{low:.4f}, {high:.4f}]"
    )
print(f"mean sigma^2 = {np.mean(sigma**2):.4f}")

# %%
# The three centres are one mean :math:`\hat\sigma_i^2` apart: the truth
# estimate contains no label noise, the nominal MSE contains it once, the
# forward value twice. Here the model is so good that its error against the
# truth is smaller than the labels can resolve: the truth interval starts at
# zero, and the honest report is its upper end, the limit the summary states,
# "the MSE against the true concentrations is below about 0.011 (% O2)² (95 %)".
#
# Without ``sigma_dof`` the standard errors would be taken as exact, although
# they rest on 3 to 8 readings. Here the model's error against the truth is far
# below the labels' noise, so both SDs rest on the lower bound of the truth
# variance, :math:`\frac{2}{M^2}\sum_i\sigma_i^4` (plus σ's own uncertainty),
# and the two are close. With larger errors, ignoring ``sigma_dof`` makes the
# truth interval too narrow: in a simulation with 3 to 8 readings its reported
# SD was 0.63 of the actual one, and the interval covered the true MSE in 74.5 %
# of replicates instead of 95 % (see :ref:`estimands`).
no_dof = expected_mean_squared_error(y, oof, sigma=sigma, estimand="truth")
print(f"truth SD with sigma_dof: {scores['truth'].std:.4f}, without: {no_dof.std:.4f}")

# %%
# Checking the answers
# --------------------
# The simulation knows the true concentrations (``target_true``) and how the
# analyser reads (one reading scatters with SD :math:`0.05 + 0.03\,[\mathrm{O_2}]`
# % O2). So we can compute the MSE against the truth, and measure every sample
# again, the same number of times, a thousand times over.
mu = sensor.target_true
true_mse = np.mean((mu - oof) ** 2)
rng = np.random.default_rng(0)
single_sd = 0.05 + 0.03 * mu
fresh_labels = mu + single_sd / np.sqrt(summary.n_repeats) * rng.standard_normal(
    (1000, mu.size)
)
fresh_mse = np.mean((fresh_labels - oof) ** 2, axis=1)
print(f"MSE against the truth:            {true_mse:.4f}")
print(f"MSE on a re-measurement, average: {fresh_mse.mean():.4f}")

fig, ax = plt.subplots(figsize=(6.5, 3.2))
for row, score in enumerate(scores.values()):
    low, high = score.confidence_interval(0.95)
    ax.errorbar(
        score.expected,
        row,
        xerr=[[score.expected - low], [high - score.expected]],
        fmt="o",
        capsize=4,
        color=f"C{row}",
    )
ax.axvline(true_mse, color="C0", ls="--", label="MSE against the truth")
ax.axvline(fresh_mse.mean(), color="C1", ls=":", label="average re-measurement")
ax.set_yticks(range(3), [f"{estimand}\n(95 % interval)" for estimand in scores])
ax.set_ylim(-0.6, 2.6)
ax.invert_yaxis()
ax.set_xlabel("pooled MSE [(% O2)²]")
ax.legend(fontsize="small", loc="upper right")
fig.tight_layout()

# %%
# The truth interval contains the MSE against the true concentrations; the
# nominal MSE is within one SD of what a re-measurement shows on average. The
# forward value lies far above both: it answers a question about exact labels
# that this experiment does not have. Report the truth estimate with its
# interval.
#
# The between-fold spread is reported separately from the label noise; it is
# not a standard error of cross-validation (see :ref:`reading_results`).
print(cv.fold_summary_["mean_squared_error"])

# %%
# Per fold, the RMSE as the cross-validator reports it: a fold whose interval
# starts at 0 is drawn as a limit, a bar from 0 with no point.
from sklearn_noisy.model_selection import NoisyCVDisplay

display = NoisyCVDisplay.from_cv_results(
    cv, metric="root_mean_squared_error", data_name="oxygen sensor"
)
plt.show()

# %%
# Against one new reading
# -----------------------
# The labels are means of several readings. To predict how the model will
# compare with *one new reading* of the analyser, the noise of a single reading
# replaces that of the mean: the target is the MSE against the truth plus the
# mean single-reading variance. Both terms have unbiased estimates: the truth
# estimate above, and the mean squared single-reading spread
# ``summarize_repeats(repeats, sigma="std")``.
with warnings.catch_warnings():
    warnings.simplefilter("ignore", UserWarning)
    sigma_single = summarize_repeats(repeats, sigma="std").sigma
one_reading = scores["truth"].expected + np.mean(sigma_single**2)
known = np.mean((mu - oof) ** 2 + single_sd**2)
print(f"expected MSE against one new reading: {one_reading:.4f}")
print(f"from the known truth and analyser:    {known:.4f}")
