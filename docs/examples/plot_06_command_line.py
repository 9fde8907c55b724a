"""
================
The command line
================

``sklearn-noisy evaluate`` runs a noise-aware cross-validation without writing
Python; see :ref:`command_line`. Here the command line is called in-process
through :func:`sklearn_noisy.cli.main`, which takes the arguments as a list and
returns the exit code, so that its output appears on this page. In a shell the
same runs are ``sklearn-noisy evaluate ...`` or ``python -m sklearn_noisy
evaluate ...``.
"""

# %%
# The default run
# ---------------
# With no options, the command evaluates a degree-3 polynomial ridge regression
# on the embedded wheat-protein data (the mean of 2 to 4 reference analyses as
# the label, their standard error as σ) and prints a summary, the number to
# report per metric with its interval and unit (% protein; ``--unit`` for your
# data), then the per-fold and pooled table: the nominal value, the truth
# estimate with its SD and interval, and the forward value with its SD, each
# labelled with its question. The labels are measurements, so the truth
# estimate leads (see :ref:`estimands`). ``--quiet`` leaves out the progress
# lines that go to standard error. Against the labels the RMSE fails the
# dataset's requirement (at most 0.20 % protein against the truth); against the
# truth it meets it.
# ``--dataset oxygen_sensor`` runs the second embedded example, a model better
# than its labels can resolve.
from sklearn_noisy.cli import main

code = main(["evaluate", "--quiet"])
print("exit code:", code)

# %%
# Your own CSV file, with repeated measurements
# ---------------------------------------------
# A CSV file with one column per feature and one column per repeated reading.
# ``--repeats`` averages the readings into the label and estimates σ and its
# degrees of freedom from their spread; ``--metrics`` picks the metrics,
# ``--json`` writes every number, and ``--plot`` saves the per-fold figure.
import csv
import json
import os
import tempfile
import warnings

import matplotlib.image as mpimg
import matplotlib.pyplot as plt
import numpy as np

from sklearn_noisy.datasets import load_oxygen_sensor

sensor = load_oxygen_sensor()
# Keep the samples with at least 5 readings and use their first five.
keep = sensor.n_repeats >= 5
folder = tempfile.mkdtemp()
path = os.path.join(folder, "calibration.csv")
with open(path, "w", newline="") as handle:
    writer = csv.writer(handle)
    writer.writerow(sensor.feature_names + [f"reading_{k}" for k in range(1, 6)])
    for features, readings in zip(
        sensor.data[keep], sensor.repeats[keep, :5], strict=True
    ):
        writer.writerow([f"{v:.6g}" for v in np.concatenate([features, readings])])
print(open(path).read().splitlines()[:3])

json_path = os.path.join(folder, "results.json")
png_path = os.path.join(folder, "folds.png")
readings = ",".join(f"reading_{k}" for k in range(1, 6))
arguments = ["evaluate", "--quiet", "--data", path, "--repeats", readings]
arguments += ["--estimator", "sklearn.linear_model.Ridge", "--param", "alpha=0.1"]
arguments += ["--metrics", "mean_squared_error,r2", "--cv", "4", "--seed", "0"]
arguments += ["--json", json_path, "--plot", png_path]
with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # σ from 5 readings: the expected warning
    code = main(arguments)
print("exit code:", code)

# %%
# The JSON file holds the per-fold and pooled results of every metric.
with open(json_path) as handle:
    results = json.load(handle)
print(sorted(results))
print(json.dumps(results["pooled"]["r2"], indent=2))

# %%
# The figure saved by ``--plot``:
image = mpimg.imread(png_path)
height, width = image.shape[:2]
fig, ax = plt.subplots(figsize=(7, 7 * height / width))
ax.imshow(image)
ax.set_axis_off()
plt.show()

# %%
# Errors
# ------
# A missing file, an unknown column, non-numeric data, an unknown estimator or a
# bad option give one line on standard error and exit code 2, never a
# traceback.
import contextlib
import io

for arguments in (
    ["evaluate", "--data", os.path.join(folder, "missing.csv")],
    ["evaluate", "--data", path, "--target", "no_such_column", "--sigma", "0.1"],
    ["evaluate", "--estimator", "sklearn.linear_model.NoSuchModel"],
    ["evaluate", "--cv", "one"],
):
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr):
        code = main(arguments)
    print(f"exit code {code}: {stderr.getvalue().strip()}")
