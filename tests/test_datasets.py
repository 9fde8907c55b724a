"""Tests for the embedded datasets and their generator."""

import math
import pickle
import sys
from pathlib import Path

import numpy as np
import pytest

from sklearn_noisy.datasets import (
    _make_data,
    load_noisy_diagnosis,
    load_oxygen_sensor,
    load_wheat_protein,
)

DATA_DIR = Path(_make_data.__file__).parent / "data"


def test_shipped_files_are_small_and_reproducible(tmp_path):
    shipped = sorted(DATA_DIR.iterdir())
    assert [p.name for p in shipped] == sorted(
        [_make_data.OXYGEN_FILE, _make_data.DIAGNOSIS_FILE, _make_data.WHEAT_FILE]
    )
    assert sum(p.stat().st_size for p in shipped) <= 1_000_000
    for path in _make_data.write_data(tmp_path):
        assert path.read_bytes() == (DATA_DIR / path.name).read_bytes(), path.name


def test_oxygen_sensor_bunch():
    sensor = load_oxygen_sensor()
    assert sensor.data.shape == (300, 3) and sensor.data.dtype == np.float64
    assert sensor.repeats.shape == (300, 8)
    assert sensor.feature_names == ["phase_deg", "intensity_counts", "temperature_c"]
    assert (
        sensor.frame is None and "Stern" in sensor.DESCR and "20230415" in sensor.DESCR
    )
    n = sensor.n_repeats
    assert n.min() == 3 and n.max() == 8
    np.testing.assert_array_equal(n, np.sum(~np.isnan(sensor.repeats), axis=1))
    # target = mean of the repeats, target_sigma = s / sqrt(n) (ddof=1): row 0 by hand.
    row = sensor.repeats[0, : n[0]]
    assert sensor.target[0] == pytest.approx(row.sum() / n[0], rel=1e-15)
    s = math.sqrt(((row - row.mean()) ** 2).sum() / (n[0] - 1))
    assert sensor.target_sigma[0] == pytest.approx(s / math.sqrt(n[0]), rel=1e-13)
    # The generating model: single-reading SD = 0.05 + 0.03 c. Pooled over all
    # samples, the squared standardised residuals average 1 (5 standard errors).
    spread = 0.05 + 0.03 * sensor.target_true
    z2 = ((sensor.repeats - sensor.target_true[:, None]) / spread[:, None]) ** 2
    z2 = z2[~np.isnan(z2)]
    assert abs(z2.mean() - 1.0) < 5 * math.sqrt(2.0 / z2.size)
    # Stern–Volmer: the intensity falls with oxygen.
    assert np.corrcoef(sensor.data[:, 1], sensor.target_true)[0, 1] < -0.8
    X, y = load_oxygen_sensor(return_X_y=True)
    np.testing.assert_array_equal(X, sensor.data)
    np.testing.assert_array_equal(y, sensor.target)
    assert pickle.loads(pickle.dumps(sensor)).target[5] == sensor.target[5]


def test_wheat_protein_bunch():
    wheat = load_wheat_protein()
    assert wheat.data.shape == (300, 4) and wheat.data.dtype == np.float64
    assert wheat.repeats.shape == (300, 4)
    assert wheat.feature_names == [
        "abs_1940nm", "abs_2100nm", "abs_2180nm", "abs_2310nm"
    ]  # fmt: skip
    assert wheat.target_names == ["protein_percent"] and wheat.frame is None
    assert "20230418" in wheat.DESCR and "at most 0.20 % protein" in wheat.DESCR
    n = wheat.n_repeats
    assert n.min() == 2 and n.max() == 4
    np.testing.assert_array_equal(n, np.sum(~np.isnan(wheat.repeats), axis=1))
    row = wheat.repeats[1, : n[1]]
    assert wheat.target[1] == pytest.approx(row.mean(), rel=1e-15)
    s = math.sqrt(((row - row.mean()) ** 2).sum() / (n[1] - 1))
    assert wheat.target_sigma[1] == pytest.approx(s / math.sqrt(n[1]), rel=1e-13)
    # The generating model: single-reading SD = 0.10 + 0.016 P (5 standard errors).
    spread = 0.10 + 0.016 * wheat.target_true
    z2 = ((wheat.repeats - wheat.target_true[:, None]) / spread[:, None]) ** 2
    z2 = z2[~np.isnan(z2)]
    assert abs(z2.mean() - 1.0) < 5 * math.sqrt(2.0 / z2.size)
    assert 9.0 <= wheat.target_true.min() and wheat.target_true.max() <= 16.0
    # Beer–Lambert under scatter: only the protein band follows protein, loosely.
    corr = [np.corrcoef(col, wheat.target_true)[0, 1] for col in wheat.data.T]
    assert corr[2] > 0.4 and max(np.abs(np.delete(corr, 2))) < 0.2
    X, y = load_wheat_protein(return_X_y=True)
    np.testing.assert_array_equal(X, wheat.data)
    np.testing.assert_array_equal(y, wheat.target)


def test_noisy_diagnosis_bunch():
    diagnosis = load_noisy_diagnosis()
    assert diagnosis.data.shape == (400, 4) and diagnosis.data.dtype == np.float64
    assert diagnosis.target.dtype == np.int64
    assert set(np.unique(diagnosis.target)) == {0, 1}
    q = diagnosis.flip_probability
    assert q.shape == (400,) and 0.02 <= q.min() and q.max() <= 0.32
    # Observed flips agree with sum(q) within 5 binomial standard errors.
    flips = int((diagnosis.target != diagnosis.target_true).sum())
    assert abs(flips - q.sum()) < 5 * math.sqrt((q * (1 - q)).sum())
    assert "20230416" in diagnosis.DESCR
    X, y = load_noisy_diagnosis(return_X_y=True)
    np.testing.assert_array_equal(X, diagnosis.data)
    np.testing.assert_array_equal(y, diagnosis.target)


def test_as_frame():
    pd = pytest.importorskip("pandas")
    sensor = load_oxygen_sensor(as_frame=True)
    assert isinstance(sensor.data, pd.DataFrame)
    assert list(sensor.data.columns) == sensor.feature_names
    assert isinstance(sensor.target, pd.Series) and sensor.target.name == "o2_percent"
    assert isinstance(sensor.repeats, pd.DataFrame)
    assert sensor.frame.shape == (300, 4)
    np.testing.assert_array_equal(
        sensor.target_sigma.to_numpy(), load_oxygen_sensor().target_sigma
    )
    wheat = load_wheat_protein(as_frame=True)
    assert wheat.frame.shape == (300, 5) and wheat.target.name == "protein_percent"
    assert list(wheat.repeats.columns) == [f"protein_rep_{j}" for j in range(1, 5)]
    diagnosis = load_noisy_diagnosis(as_frame=True)
    assert isinstance(diagnosis.flip_probability, pd.Series)
    assert diagnosis.frame.shape == (400, 5)
    X, y = load_noisy_diagnosis(as_frame=True, return_X_y=True)
    assert isinstance(X, pd.DataFrame) and isinstance(y, pd.Series)


def test_as_frame_without_pandas(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match="requires pandas"):
        load_oxygen_sensor(as_frame=True)
    with pytest.raises(ImportError, match="requires pandas"):
        load_noisy_diagnosis(as_frame=True)
    assert load_oxygen_sensor().data.shape == (300, 3)  # numpy still works
