"""Loaders of the small embedded datasets (simulated; see ``_make_data``)."""

from __future__ import annotations

import csv
from importlib import resources
from typing import Any

import numpy as np
from sklearn.utils import Bunch

from ..preprocessing import summarize_repeats
from ..utils._warnings import quiet
from ._make_data import (
    DIAGNOSIS_FILE,
    DIAGNOSIS_SEED,
    OXYGEN_FILE,
    OXYGEN_MAX_REPEATS,
    OXYGEN_SEED,
)

__all__ = ["load_noisy_diagnosis", "load_oxygen_sensor"]

_DATA_MODULE = "sklearn_noisy.datasets"

OXYGEN_DESCR = f"""\
.. _oxygen_sensor_dataset:

Luminescence oxygen sensor (simulated)
--------------------------------------

**Data Set Characteristics:**

:Number of Instances: 300
:Number of Attributes: 3 numeric features
:Target: oxygen concentration in % O2 (volume fraction at 1013 hPa), the
    mean of 3 to 8 repeated reference-analyser readings per sample
:Label error: heteroscedastic, standard deviation of one reading
    0.05 + 0.03·[O2] % O2; ``target_sigma`` is the standard error of the mean
    estimated from the repeats (``summarize_repeats``, ddof=1)

A phase-fluorometric oxygen sensor: oxygen quenches the luminescence of the dye
so that the lifetime and the intensity follow the Stern–Volmer law
``τ0/τ = I0/I = 1 + K_sv(T)·[O2]``. The task is to predict the oxygen
concentration from the sensor readout.

Features: ``phase_deg`` (phase angle at 4 kHz modulation, degrees),
``intensity_counts`` (luminescence intensity, counts), ``temperature_c``
(measured temperature, °C).

Generating model (numpy ``default_rng({OXYGEN_SEED})``, in this order):
true ``[O2] ~ U(0, 21)``; ``T ~ U(5, 45)`` °C;
``K_sv = 0.060·(1 + 0.010·(T − 25))`` per % O2;
``τ0 = 55 µs·(1 − 0.004·(T − 25))``; ``τ = τ0/(1 + K_sv·[O2])``;
``phase = degrees(arctan(2π·4000·τ)) + N(0, 0.05²)``;
``intensity = 12000·(1 − 0.006·(T − 25))/(1 + K_sv·[O2])·(1 + N(0, 0.01²))``;
measured ``T + N(0, 0.1²)``; ``n ~ Integers[3, 8]`` repeats;
readings ``[O2] + (0.05 + 0.03·[O2])·N(0, 1)``, the first ``n`` kept.
``sklearn_noisy/datasets/_make_data.py`` regenerates the file byte for byte.

No real data could be shipped: this is a simulation, with the noise-free
concentration available as ``target_true`` for studies of noise resilience.
"""

DIAGNOSIS_DESCR = f"""\
.. _noisy_diagnosis_dataset:

Diagnosis with an imperfect assay (simulated)
---------------------------------------------

**Data Set Characteristics:**

:Number of Instances: 400
:Number of Attributes: 4 numeric features (standardised biomarkers)
:Target: recorded binary diagnosis (0 = negative, 1 = positive)
:Label error: each recorded label is flipped with a known per-sample
    probability ``flip_probability`` (0.02 to 0.32), larger for borderline
    cases, as when an assay reports its own confidence

Generating model (numpy ``default_rng({DIAGNOSIS_SEED})``, in this order):
biomarkers ``x ~ N(0, I_4)`` rounded to 4 decimals;
``η = −0.4 + 1.6·x1 − 1.1·x2 + 0.7·x3`` (``x4`` is uninformative);
true class ``c ~ Bernoulli(1/(1 + exp(−η)))``;
``q = 0.02 + 0.30·exp(−|η|)`` rounded to 3 decimals;
recorded label ``c`` with probability ``1 − q``, else ``1 − c``.
``sklearn_noisy/datasets/_make_data.py`` regenerates the file byte for byte.

No real data could be shipped: this is a simulation, with the true class
available as ``target_true``.
"""


def _read_csv(name: str) -> tuple[list[str], np.ndarray]:
    """Read an embedded CSV: header and float64 values, empty cells as NaN."""
    with (
        resources.files(_DATA_MODULE)
        .joinpath("data", name)
        .open("r", encoding="ascii", newline="") as handle
    ):
        reader = csv.reader(handle)
        header = next(reader)
        rows = [[float(cell) if cell else np.nan for cell in row] for row in reader]
    return header, np.array(rows, dtype=np.float64)


def _pandas(loader: str) -> Any:
    try:
        import pandas as pd
    except ImportError as exc:
        raise ImportError(
            f"{loader}(as_frame=True) requires pandas: pip install pandas, or call "
            "it with as_frame=False for numpy arrays."
        ) from exc
    return pd


def load_oxygen_sensor(*, as_frame: bool = False, return_X_y: bool = False) -> Any:
    """Load the luminescence oxygen sensor regression dataset (simulated).

    300 samples, 3 features (phase angle, intensity, temperature); the target is
    the oxygen concentration in % O2, the mean of 3 to 8 repeated readings of a
    reference analyser whose error grows with the concentration. The generating
    model and its seed are given in ``DESCR`` and in
    ``sklearn_noisy/datasets/_make_data.py``.

    Parameters
    ----------
    as_frame : bool, default=False
        Return pandas objects: ``data`` and ``repeats`` as DataFrames, the
        targets as Series, plus ``frame`` (features and target). Needs pandas.
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of a Bunch.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``data`` (300, 3); ``target`` (300,), the mean of the repeats;
        ``target_sigma`` (300,), its standard error ``s/√n``; ``repeats``
        (300, 8), the raw readings padded with NaN; ``n_repeats``;
        ``target_true``, the noise-free concentration of the generating model;
        ``feature_names``; ``target_names``; ``frame`` (None unless
        ``as_frame``); ``DESCR``.
    (data, target) : tuple if ``return_X_y`` is True.

    Examples
    --------
    >>> from sklearn_noisy.datasets import load_oxygen_sensor
    >>> sensor = load_oxygen_sensor()
    >>> sensor.data.shape, sensor.repeats.shape
    ((300, 3), (300, 8))
    >>> sensor.feature_names
    ['phase_deg', 'intensity_counts', 'temperature_c']
    >>> float(sensor.target_sigma.min()) > 0
    True
    """
    header, values = _read_csv(OXYGEN_FILE)
    feature_names = header[:3]
    data = values[:, :3]
    target_true = values[:, 3]
    repeats = values[:, 4 : 4 + OXYGEN_MAX_REPEATS]
    with quiet():  # 3 to 8 repeats by design, documented
        summary = summarize_repeats(repeats)
    target, target_sigma, n_repeats = summary.y_mean, summary.sigma, summary.n_repeats
    frame = None
    if as_frame:
        pd = _pandas("load_oxygen_sensor")
        data = pd.DataFrame(data, columns=feature_names)
        repeats = pd.DataFrame(repeats, columns=header[4:])
        target = pd.Series(target, name="o2_percent")
        target_sigma = pd.Series(target_sigma, name="o2_percent_sigma")
        target_true = pd.Series(target_true, name="o2_true")
        n_repeats = pd.Series(n_repeats, name="n_repeats")
        frame = pd.concat([data, target], axis=1)
    if return_X_y:
        return data, target
    return Bunch(
        data=data,
        target=target,
        target_sigma=target_sigma,
        repeats=repeats,
        n_repeats=n_repeats,
        target_true=target_true,
        frame=frame,
        feature_names=feature_names,
        target_names=["o2_percent"],
        DESCR=OXYGEN_DESCR,
        data_module=_DATA_MODULE,
        filename=OXYGEN_FILE,
    )


def load_noisy_diagnosis(*, as_frame: bool = False, return_X_y: bool = False) -> Any:
    """Load the binary diagnosis dataset with per-sample flip probabilities.

    400 samples, 4 standardised biomarkers; the target is the recorded
    diagnosis (0/1), each label flipped with a known probability
    ``flip_probability`` (0.02 to 0.32, higher for borderline cases). Simulated:
    the generating model and its seed are given in ``DESCR`` and in
    ``sklearn_noisy/datasets/_make_data.py``.

    Parameters
    ----------
    as_frame : bool, default=False
        Return pandas objects (``data`` DataFrame, Series targets, ``frame``).
        Needs pandas.
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of a Bunch.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``data`` (400, 4); ``target`` (400,) int64 recorded labels;
        ``flip_probability`` (400,), the ``q`` to pass to the expected
        classification metrics; ``target_true``, the class of the generating
        model; ``feature_names``; ``target_names``; ``frame``; ``DESCR``.
    (data, target) : tuple if ``return_X_y`` is True.

    Examples
    --------
    >>> from sklearn_noisy.datasets import load_noisy_diagnosis
    >>> diagnosis = load_noisy_diagnosis()
    >>> diagnosis.data.shape, diagnosis.target.dtype
    ((400, 4), dtype('int64'))
    >>> diagnosis.target_names
    ['negative', 'positive']
    """
    header, values = _read_csv(DIAGNOSIS_FILE)
    feature_names = header[:4]
    data = values[:, :4]
    target = values[:, 4].astype(np.int64)
    target_true = values[:, 5].astype(np.int64)
    flip_probability = values[:, 6]
    frame = None
    if as_frame:
        pd = _pandas("load_noisy_diagnosis")
        data = pd.DataFrame(data, columns=feature_names)
        target = pd.Series(target, name="label")
        target_true = pd.Series(target_true, name="label_true")
        flip_probability = pd.Series(flip_probability, name="flip_probability")
        frame = pd.concat([data, target], axis=1)
    if return_X_y:
        return data, target
    return Bunch(
        data=data,
        target=target,
        flip_probability=flip_probability,
        target_true=target_true,
        frame=frame,
        feature_names=feature_names,
        target_names=["negative", "positive"],
        DESCR=DIAGNOSIS_DESCR,
        data_module=_DATA_MODULE,
        filename=DIAGNOSIS_FILE,
    )
