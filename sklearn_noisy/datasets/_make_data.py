"""Generate the embedded datasets of :mod:`sklearn_noisy.datasets`.

All are simulated from the generating models given in their ``DESCR``
(``descr/*.rst``). Running this module rewrites the shipped CSV files byte for
byte (the test suite checks it)::

    python -m sklearn_noisy.datasets._make_data
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

DATA_DIR = Path(__file__).resolve().parent / "data"
OXYGEN_FILE = "oxygen_sensor.csv"
DIAGNOSIS_FILE = "noisy_diagnosis.csv"
WHEAT_FILE = "wheat_protein.csv"
OXYGEN_SEED = 20230415
DIAGNOSIS_SEED = 20230416
WHEAT_SEED = 20230418
OXYGEN_MAX_REPEATS = 8
WHEAT_MAX_REPEATS = 4
#: Absorptivity of water, protein and starch (log(1/R) per %) at 1940, 2100,
#: 2180 and 2310 nm.
WHEAT_ABSORPTIVITY = np.array(
    [
        [0.025, 0.003, 0.004],
        [0.008, 0.004, 0.006],
        [0.006, 0.014, 0.004],
        [0.004, 0.006, 0.005],
    ]
)
WHEAT_WAVELENGTHS = (1940, 2100, 2180, 2310)


def _fmt(value: float, decimals: int) -> str:
    if np.isnan(value):
        return ""
    text = f"{value:.{decimals}f}"
    return "0." + "0" * decimals if text == "-0." + "0" * decimals else text


def _to_csv(header: list[str], columns: list[tuple[np.ndarray, int]]) -> str:
    lines = [",".join(header)]
    for i in range(columns[0][0].shape[0]):
        lines.append(",".join(_fmt(float(col[i]), dec) for col, dec in columns))
    return "\n".join(lines) + "\n"


def _readings(rng, true, spread, fewest, most):
    """Readings ``true + spread·N(0, 1)``, ``fewest`` to ``most`` of them kept."""
    n = true.shape[0]
    n_repeats = rng.integers(fewest, most, n, endpoint=True)
    repeats = true[:, None] + spread[:, None] * rng.normal(size=(n, most))
    repeats[np.arange(most)[None, :] >= n_repeats[:, None]] = np.nan
    return repeats


def make_oxygen_sensor_csv(seed: int = OXYGEN_SEED) -> str:
    """Return the text of ``oxygen_sensor.csv`` (see the module docstring)."""
    rng = np.random.default_rng(seed)
    n = 300
    o2 = rng.uniform(0.0, 21.0, n)
    temperature = rng.uniform(5.0, 45.0, n)
    k_sv = 0.060 * (1.0 + 0.010 * (temperature - 25.0))
    tau0 = 55e-6 * (1.0 - 0.004 * (temperature - 25.0))
    quench = 1.0 + k_sv * o2
    tau = tau0 / quench
    phase = np.degrees(np.arctan(2.0 * np.pi * 4000.0 * tau)) + rng.normal(0, 0.05, n)
    i0 = 12000.0 * (1.0 - 0.006 * (temperature - 25.0))
    intensity = i0 / quench * (1.0 + rng.normal(0.0, 0.01, n))
    temperature_measured = temperature + rng.normal(0.0, 0.1, n)
    repeats = _readings(rng, o2, 0.05 + 0.03 * o2, 3, OXYGEN_MAX_REPEATS)
    header = ["phase_deg", "intensity_counts", "temperature_c", "o2_true"]
    header += [f"o2_rep_{j + 1}" for j in range(OXYGEN_MAX_REPEATS)]
    columns = [(phase, 3), (intensity, 1), (temperature_measured, 2), (o2, 4)]
    columns += [(repeats[:, j], 3) for j in range(OXYGEN_MAX_REPEATS)]
    return _to_csv(header, columns)


def make_wheat_protein_csv(seed: int = WHEAT_SEED) -> str:
    """Return the text of ``wheat_protein.csv`` (see the module docstring)."""
    rng = np.random.default_rng(seed)
    n = 300
    protein = rng.uniform(9.0, 16.0, n)
    moisture = rng.uniform(9.0, 15.0, n)
    starch = 100.0 - protein - moisture - rng.uniform(14.0, 16.0, n)
    scatter = rng.uniform(0.9, 1.1, n)
    baseline = rng.normal(0.0, 0.01, n)
    pure = 0.10 + np.column_stack([moisture, protein, starch]) @ WHEAT_ABSORPTIVITY.T
    absorbance = baseline[:, None] + scatter[:, None] * pure
    absorbance += rng.normal(0.0, 0.0007, absorbance.shape)
    repeats = _readings(rng, protein, 0.10 + 0.016 * protein, 2, WHEAT_MAX_REPEATS)
    header = [f"abs_{nm}nm" for nm in WHEAT_WAVELENGTHS] + ["protein_true"]
    header += [f"protein_rep_{j + 1}" for j in range(WHEAT_MAX_REPEATS)]
    columns = [(absorbance[:, j], 5) for j in range(len(WHEAT_WAVELENGTHS))]
    columns += [(protein, 4)]
    columns += [(repeats[:, j], 2) for j in range(WHEAT_MAX_REPEATS)]
    return _to_csv(header, columns)


def make_noisy_diagnosis_csv(seed: int = DIAGNOSIS_SEED) -> str:
    """Return the text of ``noisy_diagnosis.csv`` (see the module docstring)."""
    rng = np.random.default_rng(seed)
    n = 400
    markers = np.round(rng.normal(size=(n, 4)), 4)
    eta = -0.4 + 1.6 * markers[:, 0] - 1.1 * markers[:, 1] + 0.7 * markers[:, 2]
    label_true = (rng.random(n) < 1.0 / (1.0 + np.exp(-eta))).astype(np.int64)
    q = np.round(0.02 + 0.30 * np.exp(-np.abs(eta)), 3)
    flipped = rng.random(n) < q
    label = np.where(flipped, 1 - label_true, label_true)
    header = [f"marker_{j + 1}" for j in range(4)]
    header += ["label", "label_true", "flip_probability"]
    columns = [(markers[:, j], 4) for j in range(4)]
    columns += [(label, 0), (label_true, 0), (q, 3)]
    return _to_csv(header, columns)


def write_data(directory: str | Path = DATA_DIR) -> list[Path]:
    """Write the CSV files into ``directory``; return their paths."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, make in (
        (OXYGEN_FILE, make_oxygen_sensor_csv),
        (DIAGNOSIS_FILE, make_noisy_diagnosis_csv),
        (WHEAT_FILE, make_wheat_protein_csv),
    ):
        path = directory / name
        path.write_bytes(make().encode("ascii"))
        paths.append(path)
    return paths


if __name__ == "__main__":  # pragma: no cover
    for written in write_data():
        print(f"wrote {written} ({written.stat().st_size} bytes)")
