"""Test options shared by the suite.

``--run-slow`` runs the full statistical checks (end-to-end simulations with
thousands of replicates, whose tables the documentation's verification page
shows). Without it, tests marked ``slow`` are skipped and each of them has a
small, seeded version in the default run. Hypothesis runs derandomised, so a
test run is reproducible.
"""

from __future__ import annotations

import csv

import pytest
from hypothesis import settings

settings.register_profile("sklearn_noisy", derandomize=True, deadline=None)
settings.load_profile("sklearn_noisy")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--run-slow",
        action="store_true",
        default=False,
        help="also run the full statistical checks marked 'slow' (minutes)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "slow: a full statistical check, run with --run-slow"
    )


def pytest_collection_modifyitems(
    config: pytest.Config, items: list[pytest.Item]
) -> None:
    if config.getoption("--run-slow"):
        return
    skip = pytest.mark.skip(reason="a full statistical check: run with --run-slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def runs_csv(tmp_path):
    """Write ``x1, x2, run, y`` rows (features ``X`` of two columns, the batch
    of each sample, its label) to a CSV file; returns the file's path."""

    def write(X, runs, y):
        path = tmp_path / "runs.csv"
        with open(path, "w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["x1", "x2", "run", "y"])
            writer.writerows(zip(X[:, 0], X[:, 1], runs, y, strict=True))
        return path

    return write
