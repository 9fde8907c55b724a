"""The README: its snippets run and print what it shows.

A ``text`` block right after a snippet is that snippet's output (a line ``...``
stands for lines left out). When the report format changes, run the snippet
and paste what it prints into the README: the expected output lives there only.
"""

import re
from pathlib import Path

import pytest
from _first_contact import markdown_blocks, mismatch, outputs, run_command, run_python

README = Path(__file__).resolve().parents[1] / "README.md"
TEXT = README.read_text(encoding="utf-8")
BLOCKS = markdown_blocks(TEXT)
SHOWN = outputs(BLOCKS)


def test_readme_has_the_two_setup_commands():
    assert "sklearn-noisy evaluate" in TEXT
    ci = (README.parent / ".ci" / "run").read_text(encoding="utf-8")
    # the newest-versions environment of .ci/run: the README's one line
    (test_command,) = re.findall(r"^\s*(python3 -m venv \.venv .*)$", ci, re.M)
    bash = [body for language, body in BLOCKS if language == "bash"]
    assert any(test_command in body for body in bash), (
        "the README's test command must be what .ci/run runs"
    )


def test_readme_does_not_claim_a_release():
    """Installing from the package index is only promised "once released"."""
    bash = "\n".join(body for language, body in BLOCKS if language == "bash")
    assert "pip install sklearn-noisy" not in bash
    assert "pip install ." in bash
    assert "released" in TEXT
    assert "<repository-url>" not in TEXT


def test_every_python_snippet_shows_its_output():
    python = [body for language, body in BLOCKS if language == "python"]
    assert python
    assert len([1 for language, _, _ in SHOWN if language == "python"]) == len(python)


def test_the_main_job_output_is_shown():
    assert any(
        language == "bash" and "sklearn-noisy evaluate" in body
        for language, body, _ in SHOWN
    )


@pytest.mark.parametrize(
    ("language", "snippet", "shown"),
    SHOWN,
    ids=[f"{language}-{number}" for number, (language, _, _) in enumerate(SHOWN)],
)
def test_readme_snippet_prints_what_is_shown(language, snippet, shown):
    printed = run_python(snippet) if language == "python" else run_command(snippet)
    problem = mismatch(shown, printed)
    assert problem is None, (
        f"README.md: the output shown after this {language} snippet is not what "
        f"it prints: {problem}\n--- it prints ---\n{printed}"
    )


def test_the_paper_is_linked():
    assert re.search(r"\]\(https://arxiv\.org/abs/2209\.15588\)", TEXT)
