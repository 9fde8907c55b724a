"""Lazy import of matplotlib for the displays (an optional dependency)."""

from __future__ import annotations

from typing import Any


def import_pyplot(caller: str) -> Any:
    """``matplotlib.pyplot``, or an ImportError naming ``caller`` and the fix."""
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError(
            f"{caller} needs matplotlib, an optional dependency of "
            "sklearn-noisy. Install it with `pip install sklearn-noisy[plot]` "
            "(or `pip install matplotlib`)."
        ) from exc
    return plt
