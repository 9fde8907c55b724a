"""Print pip constraints pinning every dependency to its floor in pyproject.toml.

``name>=X`` in ``[project] dependencies`` and in the ``test`` extra becomes
``name==X``, so CI's minimum-versions environment installs exactly the versions
that ``pyproject.toml`` declares as enough, and the two cannot drift apart.
Runs on any Python >= 3.10 (no ``tomllib``): the lists are read line by line.
"""

import re
import sys
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"
LISTS = ("dependencies", "test")
REQUIREMENT = re.compile(r'^\s*"([A-Za-z0-9_.-]+)(?:\[[^\]]*\])?>=([^",;\s]+)"')


def floors(text: str) -> list[str]:
    pins, current = [], None
    for line in text.splitlines():
        start = re.match(r"^(\w[\w-]*)\s*=\s*\[", line)
        if start:
            current = start.group(1)
            continue
        if line.strip() == "]":
            current = None
        elif current in LISTS:
            match = REQUIREMENT.match(line)
            if match:
                pins.append(f"{match.group(1)}=={match.group(2)}")
    return pins


if __name__ == "__main__":
    pins = floors(PYPROJECT.read_text(encoding="utf-8"))
    if len(pins) < 4:  # the four runtime dependencies at least
        sys.exit(f"found only {pins} in {PYPROJECT}")
    print("\n".join(pins))
