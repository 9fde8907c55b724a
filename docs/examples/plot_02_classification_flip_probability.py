"""
=================================================
Classification with a per-sample flip probability
=================================================

A diagnostic assay labels patients positive or negative, and it reports its own
confidence: each recorded label is wrong with a known probability :math:`q_i`
(2 % for clear cases, up to 32 % for borderline ones). How good is a classifier
trained on these labels, and how much of what we measure is the assay's noise?

The dataset is simulated, so the true classes are also known
(``target_true``); we use them only to check the library's answers.
"""

# %%
# Data and a model
# ----------------
import matplotlib.pyplot as plt
import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split

from sklearn_noisy.datasets import load_noisy_diagnosis

diagnosis = load_noisy_diagnosis()
X, y, q = diagnosis.data, diagnosis.target, diagnosis.flip_probability
X_train, X_test, y_train, y_test, q_train, q_test, c_train, c_test = train_test_split(
    X, y, q, diagnosis.target_true, test_size=0.5, stratify=y, random_state=0
)
model = LogisticRegression().fit(X_train, y_train)
y_pred = model.predict(X_test)
print(f"flip probabilities from {q.min():.3f} to {q.max():.3f}, mean {q.mean():.3f}")
print(f"accuracy on the recorded labels: {np.mean(y_pred == y_test):.4f}")
# The true classes are unknown in practice; here they check the results.
print(f"accuracy on the true classes:    {np.mean(y_pred == c_test):.4f}")

# %%
# What would the assay show? (``estimand="forward"``)
# ---------------------------------------------------
# Here, and only because the data are simulated, we hold exact reference
# classes: the true ones. That is when the forward estimand (the paper's
# formulas, asked for by name) is right: take the true classes as ``y_true`` and ask
# what accuracy we would *observe* against labels recorded by the assay. Sample
# *i* is observed as correct with
# probability :math:`1 - q_i` if the prediction is right and :math:`q_i` if it is
# wrong, so :math:`\mathrm{E} = \frac1M\sum_i P_i` and
# :math:`\mathrm{Var} = \frac1{M^2}\sum_i q_i(1 - q_i)`, exactly.
from sklearn_noisy.metrics import expected_accuracy_score, monte_carlo_score

observed = expected_accuracy_score(c_test, y_pred, q=q_test, estimand="forward")
print(observed)

# %%
# :func:`~sklearn_noisy.metrics.monte_carlo_score` redraws the labels under the
# same noise model and recomputes any metric ``metric(y_true, y_pred)``: it
# agrees with the exact formula within its Monte Carlo error. The metric is
# called once per draw, so a lean numpy function is much faster here than
# scikit-learn's validated ``accuracy_score`` (which gives the same values).


def accuracy(y_true, y_pred):
    return np.mean(y_true == y_pred)


mc = monte_carlo_score(accuracy, c_test, y_pred, q=q_test, n_draws=4000, random_state=0)
print(mc)
z_mean = (mc.expected - observed.expected) / mc.standard_error
z_var = (mc.variance - observed.variance) / mc.variance_standard_error
print(f"z-scores of the Monte Carlo mean and variance: {z_mean:+.2f}, {z_var:+.2f}")

# %%
# The histogram of the observed accuracies of the 4000 simulated assays
# (``mc.draws``), against the normal curve with the exact mean and variance.
draws = mc.draws

fig, ax = plt.subplots(figsize=(6, 3.5))
ax.hist(
    draws,
    bins=np.arange(draws.min(), draws.max() + 2 / c_test.size, 1 / c_test.size)
    - 0.5 / c_test.size,
    density=True,
    color="0.8",
    label="simulated assays",
)
grid = np.linspace(draws.min(), draws.max(), 200)
ax.plot(
    grid,
    np.exp(-0.5 * (grid - observed.expected) ** 2 / observed.variance)
    / np.sqrt(2 * np.pi * observed.variance),
    label="exact E and Var",
)
ax.axvline(np.mean(y_pred == c_test), color="k", ls="--", label="true accuracy")
ax.set_xlabel("observed accuracy")
ax.legend(loc="upper left", fontsize="small")
fig.tight_layout()

# %%
# The accuracy on the true classes lies *above* what we expect to observe: label
# flips can only make a good classifier look worse (the expected accuracy moves
# by :math:`q(1 - 2a)` for a constant *q*).
#
# What is the accuracy on the truth? (``estimand="truth"``)
# ---------------------------------------------------------
# In practice we hold only the recorded labels, which are measurements: passing
# them to the forward formula would apply the flips a second time (see
# :ref:`estimands`). Instead, each observed "correct" is corrected as
# :math:`(o_i - q_i)/(1 - 2q_i)`, which is unbiased for the accuracy against the
# true classes; its variance is known exactly. This is the number to report.
truth = expected_accuracy_score(y_test, y_pred, q=q_test, estimand="truth")
print(truth)
low, high = truth.confidence_interval(0.95)
print(f"de-noised accuracy {truth.expected:.3f}, 95 % interval [{low:.3f}, {high:.3f}]")
print(f"true accuracy      {np.mean(y_pred == c_test):.3f}")

# %%
# Cross-validation with per-sample q
# ----------------------------------
# :class:`~sklearn_noisy.model_selection.NoisyCrossValidator` takes ``q`` as a
# per-sample array and slices it to every test fold. The recorded labels are
# measurements, so the table leads with the truth estimate of every metric: the
# de-noised accuracy and precision (unbiased, ``method="exact"``) and the
# de-noised recall, F1 and balanced accuracy (consistent, ``method="delta"``),
# each with its SD and interval, next to the nominal value and the forward
# value.
from sklearn_noisy.model_selection import NoisyCrossValidator, NoisyCVDisplay

cv = NoisyCrossValidator(
    LogisticRegression(),
    scoring=["accuracy", "balanced_accuracy", "precision", "recall", "f1"],
    cv=5,
).fit(X, y, q=q)
print(cv)

NoisyCVDisplay.from_cv_results(cv, metric="f1", data_name="noisy diagnosis")
plt.show()

# %%
# The confusion matrix under the flips
# ------------------------------------
# :class:`~sklearn_noisy.metrics.NoisyConfusionMatrixDisplay` draws the
# expected confusion matrix as a colour map, every cell with its SD over the
# label noise, as :class:`~sklearn.metrics.ConfusionMatrixDisplay` draws
# scikit-learn's. With ``estimand="truth"`` the rows are the de-noised true
# classes of the test samples: each recorded label is replaced by its unbiased
# one-hot estimate (user guide: :ref:`formula_truth`).
from sklearn_noisy.metrics import NoisyConfusionMatrixDisplay

display = NoisyConfusionMatrixDisplay.from_predictions(
    y_test, y_pred, q=q_test, estimand="truth"
)
display.ax_.set_title("Test set, de-noised true classes")
plt.show()
