"""
===========================================================
Hyper-parameter search with per-sample σ (metadata routing)
===========================================================

:func:`~sklearn_noisy.metrics.make_noisy_scorer` builds a scorer that
scikit-learn's ``GridSearchCV`` accepts as ``scoring=``. The per-sample label
errors :math:`\\sigma_i` and their degrees of freedom are passed to ``fit`` as
metadata; scikit-learn's metadata routing slices them to every test fold and
hands them to the scorer.
"""

# %%
# The oxygen-sensor data: the sensor readout, the mean of the analyser's
# repeated readings, its standard error, and the degrees of freedom of that
# standard error (one less than the number of readings).
import matplotlib.pyplot as plt
import numpy as np
import sklearn
from sklearn.linear_model import Ridge
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import PolynomialFeatures, StandardScaler

from sklearn_noisy.datasets import load_oxygen_sensor
from sklearn_noisy.metrics import make_noisy_scorer

sensor = load_oxygen_sensor()
X, y, sigma = sensor.data, sensor.target, sensor.target_sigma
sigma_dof = sensor.n_repeats - 1.0

# %%
# A scorer that returns all three numbers
# ---------------------------------------
# The labels are measurements, so the scorer estimates the MSE against the true
# values (``estimand="truth"``, see :ref:`estimands`). With ``output="all"`` it
# returns the estimate, its variance and the nominal value, so the search
# records all three per fold, and ``refit="expected"`` selects the model with
# the best estimate. As in scikit-learn, losses are negated so that greater is
# better. Without a ``sigma=`` argument the scorer requests ``sigma`` and
# ``sigma_dof`` from routed metadata.
scorer = make_noisy_scorer("mean_squared_error", estimand="truth", output="all")
print(scorer)

# %%
# Route σ through the search
# --------------------------
# Metadata routing is enabled for this block only.
# ``fit(X, y, sigma=sigma, sigma_dof=sigma_dof)`` passes both to the scorer,
# sliced to each test fold.
model = make_pipeline(StandardScaler(), PolynomialFeatures(), Ridge())
grid = {"polynomialfeatures__degree": [1, 2, 3], "ridge__alpha": np.logspace(-7, 1, 9)}
search = GridSearchCV(
    model,
    grid,
    scoring=scorer,
    refit="expected",
    cv=KFold(5, shuffle=True, random_state=0),
)
with sklearn.config_context(enable_metadata_routing=True):
    search.fit(X, y, sigma=sigma, sigma_dof=sigma_dof)

print("best parameters:", search.best_params_)
print(f"best MSE against the truth (estimate): {-search.best_score_:.4f}")

# %%
# The results hold ``mean_test_expected``, ``mean_test_variance`` and
# ``mean_test_nominal``. The truth estimate is the nominal MSE minus the mean
# :math:`\hat\sigma_i^2` of the fold, so the two curves differ by the same
# amount at every setting, and the search picks the model the nominal MSE would
# pick. What changes is the number reported for it: for the best settings the
# nominal MSE is mostly label noise, and the MSE against the truth is many times
# smaller. The band is the label-noise uncertainty (±2 SD of the estimate, σ's
# own uncertainty included). Settings are scored on the same labels, so to
# decide between two of them use their paired difference
# (:func:`~sklearn_noisy.model_selection.compare_estimators`), not the bands.
results = search.cv_results_
alphas = grid["ridge__alpha"]
fig, ax = plt.subplots(figsize=(6.5, 4))
for degree, color in zip(
    grid["polynomialfeatures__degree"], ["C0", "C1", "C2"], strict=True
):
    rows = results["param_polynomialfeatures__degree"] == degree
    expected = -results["mean_test_expected"][rows]
    nominal = -results["mean_test_nominal"][rows]
    # The fold variances are label-noise variances of each fold's MSE; the mean
    # over K disjoint folds has variance mean(V_k) / K.
    std = np.sqrt(results["mean_test_variance"][rows] / search.n_splits_)
    ax.fill_between(
        alphas, expected - 2 * std, expected + 2 * std, color=color, alpha=0.2
    )
    ax.plot(alphas, expected, "o-", color=color, label=f"degree {degree}: truth")
    ax.plot(alphas, nominal, "x--", color=color, label=f"degree {degree}: nominal")
ax.set_xscale("log")
ax.set_yscale("symlog", linthresh=0.01)  # the truth band can reach below 0
ax.set_xlabel("ridge alpha")
ax.set_ylabel("MSE [(% O2)²]")
ax.set_title("Grid search: MSE against the truth ± 2 SD (label noise)")
ax.legend(fontsize="x-small", ncol=2)
fig.tight_layout()
plt.show()

# %%
# Without routing
# ---------------
# Metadata routing is not needed when σ comes from a constant, a column of a
# DataFrame or a callable ``(X, y) -> sigma``. A scorer built with a constant
# works in ``cross_val_score`` as it is:
from sklearn.model_selection import cross_val_score

rms_sigma = float(np.sqrt(np.mean(sigma**2)))
constant = make_noisy_scorer("mean_squared_error", sigma=rms_sigma, estimand="truth")
print(cross_val_score(search.best_estimator_, X, y, scoring=constant, cv=5))
