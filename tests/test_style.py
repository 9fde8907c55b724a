"""The code base stays ``ruff`` clean (lint and format), as CI checks."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _ruff() -> list[str]:
    pytest.importorskip("ruff", reason="ruff is part of the 'test' extra")
    return [sys.executable, "-m", "ruff"]


@pytest.mark.parametrize("command", [["check"], ["format", "--check"]])
def test_ruff_clean(command):
    result = subprocess.run(
        [
            *_ruff(),
            *command,
            "--no-cache",
            "sklearn_noisy",
            "tests",
            "benchmarks",
            "docs",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
