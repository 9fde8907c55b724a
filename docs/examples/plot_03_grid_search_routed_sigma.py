"""
===========================================================
Hyper-parameter search with per-sample σ (metadata routing)
===========================================================

:func:`~sklearn_noisy.metrics.make_noisy_scorer` builds a scorer that
scikit-learn's ``GridSearchCV`` accepts as ``scoring=``. The per-sample label
errors :math:`\\sigma_i` are passed to ``fit`` as metadata; scikit-learn's
metadata routing slices them to every test fold and hands them to the scorer.
"""

# %%
# The oxygen-sensor data: the sensor readout, the mean of the analyser's
# repeated readings, and its standard error.
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

# %%
# A scorer that returns all three numbers
# ---------------------------------------
# With ``output="all"`` the scorer returns the expected value, the variance
# and the nominal value, so the search records all three per fold, and
# ``refit="expected"`` selects the model with the best *expected* MSE. As in
# scikit-learn, losses are negated so that greater is better. Without a
# ``sigma=`` argument the scorer requests ``sigma`` from routed metadata.
scorer = make_noisy_scorer("mean_squared_error", output="all")
print(scorer)

# %%
# Route σ through the search
# --------------------------
# Metadata routing is enabled for this block only. ``fit(X, y, sigma=sigma)``
# passes ``sigma`` to the scorer, sliced to each test fold.
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
    search.fit(X, y, sigma=sigma)

print("best parameters:", search.best_params_)
print(f"best expected MSE: {-search.best_score_:.4f}")

# %%
# The results hold ``mean_test_expected``, ``mean_test_variance`` and
# ``mean_test_nominal``. The expected MSE is the nominal MSE plus the mean
# label variance of the fold, so the two curves are parallel up to the
# fold-to-fold differences of σ; the label-noise band shows how far apart two
# settings must be before re-measuring the labels could not reverse their
# order.
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
    ax.plot(alphas, expected, "o-", color=color, label=f"degree {degree}: expected")
    ax.plot(alphas, nominal, "x--", color=color, label=f"degree {degree}: nominal")
ax.set_xscale("log")
ax.set_yscale("log")
ax.set_xlabel("ridge alpha")
ax.set_ylabel("MSE [(% O2)²]")
ax.set_title("Grid search: expected MSE ± 2 SD (label noise)")
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
constant = make_noisy_scorer("mean_squared_error", sigma=rms_sigma)
print(cross_val_score(search.best_estimator_, X, y, scoring=constant, cv=5))
