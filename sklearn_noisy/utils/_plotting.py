"""Lazy import of matplotlib for the displays (an optional dependency)."""

from __future__ import annotations

from typing import Any

__all__ = ["import_pyplot"]


def import_pyplot(caller: str) -> Any:
    """``matplotlib.pyplot``, or an ImportError that says how to install it.

    ``caller`` names what needs it (e.g. ``"NoisyCVDisplay"``) in the message.
    """
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError(
            f"{caller} needs matplotlib, an optional dependency of "
            "sklearn-noisy. Install it with `pip install sklearn-noisy[plot]` "
            "(or `pip install matplotlib`)."
        ) from exc
    return plt
