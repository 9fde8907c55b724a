"""The package imports under ``python -OO``, where docstrings are ``None``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_import_with_docstrings_stripped():
    """``python -OO -c "import sklearn_noisy"`` succeeds."""
    path = os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p
    )
    completed = subprocess.run(
        [
            sys.executable,
            "-OO",
            "-c",
            "import sklearn_noisy, sklearn_noisy.cli, sklearn_noisy.datasets",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": path},
        cwd=ROOT,
    )
    assert completed.returncode == 0, completed.stderr[-4000:]
