"""The README's example runs and prints what it says it prints."""

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


def test_readme_has_the_two_setup_commands():
    text = README.read_text(encoding="utf-8")
    assert "sklearn-noisy evaluate" in text
    ci = (README.parent / ".ci" / "run").read_text(encoding="utf-8")
    test_command = ci.strip().splitlines()[-1]
    assert test_command in text, "the README's test command must be what .ci/run runs"


@pytest.mark.parametrize("block", _python_blocks())
def test_readme_example_runs(block, capsys):
    exec(compile(block, str(README), "exec"), {"__name__": "__readme__"})
    out = capsys.readouterr().out
    assert "NoisyScore(metric='mean_squared_error'" in out
    assert "pooled" in out
