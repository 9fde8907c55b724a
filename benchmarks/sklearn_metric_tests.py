"""scikit-learn's own metric tests, run with our metrics at zero noise.

Run with ``python benchmarks/sklearn_metric_tests.py`` (about 2 minutes). It
runs the installed scikit-learn's ``sklearn/metrics/tests/test_common.py``,
``test_classification.py`` and ``test_regression.py`` with the names of the
metrics this package covers replaced, in :mod:`sklearn.metrics`, by wrappers
that call ours at zero noise (``q=0`` or ``sigma=0``) and return the result's
``nominal``. A wrapper passes through every argument scikit-learn passes and
adds nothing but the noise and ``estimand="forward"`` (the same value at zero
noise), so a failure is a real divergence from
scikit-learn on the same input: an exception of another type, input accepted
that scikit-learn rejects, a warning missing, a value that differs, or a
parameter we do not offer.

It prints the failures grouped by cause (``-v`` lists the tests of each
cause). ``--baseline`` also runs the same tests on scikit-learn itself and
leaves out the tests that fail there too. ``-k EXPR`` selects tests as
pytest's ``-k``. It has no PASS/FAIL: it measures, it does not check a goal.

Our modules are imported before the test modules and bind scikit-learn's own
functions (the ROC AUC's nominal, for example), so only the tests' calls reach
the wrappers.
"""

from __future__ import annotations

import argparse
import collections
import inspect
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import pytest
import sklearn
import sklearn.metrics

import sklearn_noisy.metrics as ours

TESTS = ("test_common.py", "test_classification.py", "test_regression.py")

#: scikit-learn's name -> (our function, its noise parameter).
METRICS = {
    "accuracy_score": (ours.expected_accuracy_score, "q"),
    "balanced_accuracy_score": (ours.expected_balanced_accuracy_score, "q"),
    "brier_score_loss": (ours.expected_brier_score_loss, "q"),
    "confusion_matrix": (ours.expected_confusion_matrix, "q"),
    "f1_score": (ours.expected_f1_score, "q"),
    "log_loss": (ours.expected_log_loss, "q"),
    "matthews_corrcoef": (ours.expected_matthews_corrcoef, "q"),
    "precision_score": (ours.expected_precision_score, "q"),
    "recall_score": (ours.expected_recall_score, "q"),
    "roc_auc_score": (ours.expected_roc_auc_score, "q"),
    "mean_absolute_error": (ours.expected_mean_absolute_error, "sigma"),
    "mean_absolute_percentage_error": (
        ours.expected_mean_absolute_percentage_error,
        "sigma",
    ),
    "mean_squared_error": (ours.expected_mean_squared_error, "sigma"),
    "r2_score": (ours.expected_r2_score, "sigma"),
    "root_mean_squared_error": (ours.expected_root_mean_squared_error, "sigma"),
}


def _nominal(result):
    """The value scikit-learn would return: the result's ``nominal``."""
    if isinstance(result, list):  # average=None, multioutput="raw_values"
        return np.asarray([_nominal(item) for item in result])
    return result.nominal


def zero_noise(name, function, noise):
    """``function`` at zero noise, with every other argument passed through.

    It asks for the forward estimand: at zero noise every estimand is the
    nominal value, and the default (``"auto"``, the truth estimate) refuses
    the inputs its estimate does not cover (multiclass ROC AUC, for example).
    """

    def wrapper(*args, **kwargs):
        kwargs.setdefault("estimand", "forward")
        return _nominal(function(*args, **kwargs, **{noise: 0.0}))

    signature = inspect.signature(function)
    wrapper.__signature__ = signature.replace(
        parameters=[p for p in signature.parameters.values() if p.name != noise]
    )
    wrapper.__name__ = wrapper.__qualname__ = name
    wrapper.__module__ = sklearn.metrics.__name__
    return wrapper


def patch_sklearn_metrics():
    for name, (function, noise) in METRICS.items():
        setattr(sklearn.metrics, name, zero_noise(name, function, noise))


# --------------------------------------------------------------------------- #
# Causes
# --------------------------------------------------------------------------- #
#: (regular expression on "ExceptionType: message", cause), the first match wins.
CAUSES = [
    (r"DID NOT RAISE", "accepted input that scikit-learn rejects"),
    (r"DID NOT WARN|No warnings of type", "warning missing or of another type"),
    (r"did not match any of the \d+ warnings", "warning-message wording"),
    (r"Regex pattern did not match", "error-message wording"),
    (r"^IndexError: pop from empty list", "warning missing"),
    (r"unexpected keyword argument '(\w+)'", "parameter not offered: {0}"),
    (r"Warning: ", "unexpected warning raised as an error"),
    (r"^TypeError: .*mix label types", "TypeError for mixed label types"),
    (r"must be a 1-D array of class labels", "2-D / multilabel targets rejected"),
    (r"Arrays are not|Not equal|assert .* ==|Mismatch", "different value"),
]


def cause_of(nodeid, text):
    if "test_log_loss_y_pred_deprecation" in nodeid:  # a name we never had
        return "parameter not offered: log_loss's deprecated y_pred"
    for pattern, cause in CAUSES:
        match = re.search(pattern, text, flags=re.S)
        if match:
            return cause.format(*match.groups())
    head = text.splitlines()[0] if text else "?"
    return "other: " + re.sub(r"\d+", "N", head)[:100]


class Collector:
    """Records every failed test as ``nodeid -> "ExceptionType: message"``."""

    def __init__(self):
        self.failures = {}
        self.counts = collections.Counter()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        report = outcome.get_result()
        if report.when == "call" or report.failed:
            self.counts[report.outcome] += report.when == "call" or report.failed
        if report.failed:
            if call.excinfo is not None:
                exc = call.excinfo.value
                text = f"{type(exc).__name__}: {exc}"
            else:
                text = str(report.longrepr)
            self.failures[item.nodeid] = text


def run_tests(patched, select, output):
    """Run the tests in this process (patched or not); write the failures."""
    if patched:
        patch_sklearn_metrics()
    site = os.path.dirname(os.path.dirname(sklearn.__file__))
    folder = os.path.join(os.path.dirname(sklearn.metrics.__file__), "tests")
    collector = Collector()
    with tempfile.TemporaryDirectory() as tmp:
        ini = os.path.join(tmp, "pytest.ini")
        with open(ini, "w") as file:
            file.write("[pytest]\n")
        args = [
            *(os.path.join(folder, name) for name in TESTS),
            "-c",
            ini,
            "--rootdir",
            site,
            "--confcutdir",
            site,
            "-p",
            "no:cacheprovider",
            "-q",
            "--no-header",
            "--tb=no",
            "-o",
            "console_output_style=count",
        ]
        if select:
            args += ["-k", select]
        pytest.main(args, plugins=[collector])
    with open(output, "w") as file:
        json.dump({"failures": collector.failures, "counts": collector.counts}, file)


def _child(patched, select):
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as file:
        output = file.name
    command = [sys.executable, __file__, "--child", output]
    command += ["--patched"] if patched else []
    command += ["-k", select] if select else []
    subprocess.run(command, check=False, stdout=subprocess.DEVNULL)
    with open(output) as file:
        result = json.load(file)
    os.unlink(output)
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", action="store_true")
    parser.add_argument("-k", dest="select", default=None)
    parser.add_argument("--baseline", action="store_true")
    parser.add_argument("--save", default=None, help="write the failures as JSON")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--patched", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        run_tests(options.patched, options.select, options.child)
        return
    patched = _child(True, options.select)
    failures = patched["failures"]
    print(f"scikit-learn {sklearn.__version__}; tests run: {patched['counts']}")
    if options.baseline:
        baseline = _child(False, options.select)["failures"]
        print(f"failing on scikit-learn itself (left out): {len(baseline)}")
        failures = {k: v for k, v in failures.items() if k not in baseline}
    if options.save:
        with open(options.save, "w") as file:
            json.dump(failures, file, indent=1)
    groups = collections.defaultdict(list)
    for nodeid, text in failures.items():
        groups[cause_of(nodeid, text)].append((nodeid, text))
    print(f"{len(failures)} failures with our metrics at zero noise\n")
    for cause, items in sorted(groups.items(), key=lambda g: (-len(g[1]), g[0])):
        print(f"{len(items):4d}  {cause}")
        if options.verbose:
            for nodeid, text in sorted(items):
                first = text.splitlines()[0][:160] if text else ""
                print(f"        {nodeid.split('/')[-1]}\n            {first}")


if __name__ == "__main__":
    main()
