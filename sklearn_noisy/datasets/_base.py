"""Loaders of the small embedded datasets (simulated; see ``_make_data``)."""

from __future__ import annotations

from importlib import resources
from typing import Any

import numpy as np
from sklearn.utils import Bunch

from ..preprocessing import summarize_repeats
from ..utils._warnings import quiet
from ._make_data import (
    DIAGNOSIS_FILE,
    DIAGNOSIS_SEED,
    OXYGEN_MAX_REPEATS,
    OXYGEN_SEED,
    WHEAT_MAX_REPEATS,
    WHEAT_SEED,
)

_DATA_MODULE = "sklearn_noisy.datasets"


def _descr(name: str, seed: int) -> str:
    path = resources.files(_DATA_MODULE).joinpath("descr", name)
    return path.read_text(encoding="utf-8").format(seed=seed)


def _read_csv(name: str) -> tuple[list[str], np.ndarray]:
    """Header and float64 values of an embedded CSV (empty cells: NaN)."""
    path = resources.files(_DATA_MODULE).joinpath("data", name)
    with path.open("r", encoding="ascii") as handle:
        header = handle.readline().rstrip("\n").split(",")
        return header, np.genfromtxt(handle, delimiter=",")


def _bunch(
    loader: str,
    as_frame: bool,
    return_X_y: bool,
    frames: dict[str, tuple[np.ndarray, list[str]]],
    series: dict[str, tuple[np.ndarray, str]],
    **fields: Any,
) -> Any:
    """A loader's Bunch or ``(data, target)``; with ``as_frame``, pandas objects
    (``frames``: key to an array and its columns; ``series``: to one and its name)."""
    arrays = {key: array for key, (array, _) in {**frames, **series}.items()}
    frame = None
    if as_frame:
        try:
            import pandas as pd
        except ImportError as exc:
            raise ImportError(
                f"{loader}(as_frame=True) requires pandas: pip install pandas, or "
                "call it with as_frame=False for numpy arrays."
            ) from exc
        arrays = {k: pd.DataFrame(v, columns=c) for k, (v, c) in frames.items()}
        arrays.update({k: pd.Series(v, name=n) for k, (v, n) in series.items()})
        frame = pd.concat([arrays["data"], arrays["target"]], axis=1)
    if return_X_y:
        return arrays["data"], arrays["target"]
    return Bunch(**arrays, frame=frame, **fields, data_module=_DATA_MODULE)


#: The datasets of repeated readings: their seed, most readings and target name.
_REPEATS = {
    "wheat_protein": (WHEAT_SEED, WHEAT_MAX_REPEATS, "protein_percent"),
    "oxygen_sensor": (OXYGEN_SEED, OXYGEN_MAX_REPEATS, "o2_percent"),
}


def _repeats_bunch(name: str, as_frame: bool, return_X_y: bool) -> Any:
    """``load_<name>()``: ``<name>.csv`` holds the features, the noise-free
    target, then the readings whose mean is the label."""
    seed, max_repeats, target = _REPEATS[name]
    filename = f"{name}.csv"
    header, values = _read_csv(filename)
    n_features = values.shape[1] - 1 - max_repeats
    repeats = values[:, n_features + 1 :]
    with quiet():  # few repeats by design, documented
        summary = summarize_repeats(repeats)
    return _bunch(
        f"load_{name}",
        as_frame,
        return_X_y,
        {
            "data": (values[:, :n_features], header[:n_features]),
            "repeats": (repeats, header[n_features + 1 :]),
        },
        {
            "target": (summary.y_mean, target),
            "target_sigma": (summary.sigma, f"{target}_sigma"),
            "n_repeats": (summary.n_repeats, "n_repeats"),
            "target_true": (values[:, n_features], header[n_features]),
        },
        feature_names=header[:n_features],
        target_names=[target],
        DESCR=_descr(f"{name}.rst", seed),
        filename=filename,
    )


def load_wheat_protein(*, as_frame: bool = False, return_X_y: bool = False) -> Any:
    """Load the near-infrared wheat protein regression dataset (simulated).

    300 samples, 4 near-infrared absorbances; the target is the protein content
    in %, the mean of 2 to 4 reference analyses (see ``DESCR``).

    Parameters
    ----------
    as_frame : bool, default=False
        Return pandas DataFrames and Series, and ``frame`` (needs pandas).
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of a Bunch.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``data``; ``target``, the mean of the repeats; ``target_sigma``, its
        standard error; ``repeats`` (padded with NaN); ``n_repeats``;
        ``target_true``; ``feature_names``; ``target_names``; ``frame``;
        ``DESCR``.
    (data, target) : tuple if ``return_X_y`` is True.

    Examples
    --------
    >>> from sklearn_noisy.datasets import load_wheat_protein
    >>> wheat = load_wheat_protein()
    >>> wheat.data.shape, wheat.repeats.shape
    ((300, 4), (300, 4))
    """
    return _repeats_bunch("wheat_protein", as_frame, return_X_y)


def load_oxygen_sensor(*, as_frame: bool = False, return_X_y: bool = False) -> Any:
    """Load the luminescence oxygen sensor regression dataset (simulated).

    300 samples, 3 features (phase angle, intensity, temperature); the target is
    the oxygen concentration in % O2, the mean of 3 to 8 readings (``DESCR``).

    Parameters
    ----------
    as_frame : bool, default=False
        Return pandas DataFrames and Series, and ``frame`` (needs pandas).
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of a Bunch.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        As :func:`load_wheat_protein`'s.
    (data, target) : tuple if ``return_X_y`` is True.

    Examples
    --------
    >>> from sklearn_noisy.datasets import load_oxygen_sensor
    >>> sensor = load_oxygen_sensor()
    >>> sensor.data.shape, sensor.repeats.shape
    ((300, 3), (300, 8))
    """
    return _repeats_bunch("oxygen_sensor", as_frame, return_X_y)


def load_noisy_diagnosis(*, as_frame: bool = False, return_X_y: bool = False) -> Any:
    """Load the binary diagnosis dataset with per-sample flip probabilities.

    400 samples, 4 biomarkers; the target is the recorded diagnosis (0/1),
    each flipped with a known probability ``flip_probability`` (``DESCR``).

    Parameters
    ----------
    as_frame : bool, default=False
        Return pandas DataFrames and Series, and ``frame`` (needs pandas).
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of a Bunch.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``data``; ``target``, the recorded labels; ``flip_probability``, the
        ``q`` of the expected metrics; ``target_true``; ``feature_names``;
        ``target_names``; ``frame``; ``DESCR``.
    (data, target) : tuple if ``return_X_y`` is True.

    Examples
    --------
    >>> from sklearn_noisy.datasets import load_noisy_diagnosis
    >>> diagnosis = load_noisy_diagnosis()
    >>> diagnosis.data.shape, diagnosis.target.dtype
    ((400, 4), dtype('int64'))
    """
    header, values = _read_csv(DIAGNOSIS_FILE)
    return _bunch(
        "load_noisy_diagnosis",
        as_frame,
        return_X_y,
        {"data": (values[:, :4], header[:4])},
        {
            "target": (values[:, 4].astype(np.int64), "label"),
            "flip_probability": (values[:, 6], "flip_probability"),
            "target_true": (values[:, 5].astype(np.int64), "label_true"),
        },
        feature_names=header[:4],
        target_names=["negative", "positive"],
        DESCR=_descr("noisy_diagnosis.rst", DIAGNOSIS_SEED),
        filename=DIAGNOSIS_FILE,
    )
