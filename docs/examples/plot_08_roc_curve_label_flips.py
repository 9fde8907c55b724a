"""
========================================
The ROC curve when the labels are noisy
========================================

The assay of :ref:`the diagnosis example
<sphx_glr_auto_examples_plot_02_classification_flip_probability.py>` records
each label wrongly with a known probability :math:`q_i`. A classifier's ROC
curve computed on such labels is one random draw: how far from the curve on
exact labels can it fall? :class:`~sklearn_noisy.metrics.NoisyRocCurveDisplay`
draws the curve of the labels it is given, the mean curve when they flip, and
the band where the flipped-label curve lies at each false positive rate.

The data are simulated, so the true classes are known: they play the exact
reference labels, and the recorded labels are one draw of the flips around
them.
"""

# %%
# A model and its scores
# ----------------------
import matplotlib.pyplot as plt
import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_curve
from sklearn.model_selection import train_test_split

from sklearn_noisy.datasets import load_noisy_diagnosis
from sklearn_noisy.metrics import NoisyRocCurveDisplay

diagnosis = load_noisy_diagnosis()
X, y, q = diagnosis.data, diagnosis.target, diagnosis.flip_probability
X_train, X_test, y_train, y_test, q_train, q_test, c_train, c_test = train_test_split(
    X, y, q, diagnosis.target_true, test_size=0.5, stratify=y, random_state=0
)
model = LogisticRegression().fit(X_train, y_train)
score = model.predict_proba(X_test)[:, 1]

# %%
# The curve on exact labels, and under the assay's flips
# ------------------------------------------------------
# ``from_estimator`` takes the reference labels (here the true classes) and the
# per-sample flip probabilities. The thin solid line is scikit-learn's ROC curve of
# those labels; the dashed line and the band come from 1,000 redraws of the labels
# (seeded: the figure is reproducible), and the AUC in the legend is the exact
# expectation and SD of :func:`~sklearn_noisy.metrics.expected_roc_auc_score`.
# The orange line is the ROC curve of the labels the assay actually recorded:
# one draw of those flips. The axes are ours, so the display leaves the
# legend to us (``legend=False``): one figure legend below them names every
# line.
figure, ax = plt.subplots(figsize=(6.4, 5.6), layout="constrained")
fpr, tpr, _ = roc_curve(y_test, score)
ax.plot(fpr, tpr, color="tab:orange", label="recorded labels (one draw)")
display = NoisyRocCurveDisplay.from_estimator(
    model, X_test, c_test, q=q_test, ax=ax, legend=False
)
figure.legend(*ax.get_legend_handles_labels(), loc="outside lower center")
print(display.score)
print(f"AUC of the exact labels:    {display.roc_auc:.4f}")
print(f"AUC of the recorded labels: {np.trapezoid(tpr, fpr):.4f}")

# %%
# Flips push the curve towards the diagonal: a flipped positive scored high
# becomes a false positive, a flipped negative scored low a missed positive.
# The curve of the recorded labels runs through the band: at each false
# positive rate, the curve of one draw of the labels falls outside it with
# probability at most 5 %, so on average on at most 5 % of the grid.
recorded = np.interp(display.fpr_grid, fpr, tpr)
inside = (recorded >= display.tpr_low) & (recorded <= display.tpr_high)
print(f"recorded curve inside the band at {inside.mean():.0%} of the grid points")
print(f"method of the curve: {display.method}, {display.n_draws} draws; largest "
      f"Monte Carlo standard error {display.tpr_standard_error.max():.4f}")  # fmt: skip
