"""Tests for summarize_repeats: three input forms, hand-computed numbers."""

import math
import pickle
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from sklearn_noisy.preprocessing import RepeatSummary, summarize_repeats

# Hand-computed: sample 0 = [1, 2, 3, 4, 5]: mean 3, SS = 10, s = sqrt(10/4).
# sample 1 = [10, 12, 14, 16, 18, 20]: mean 15, SS = 70, s = sqrt(70/5) = sqrt(14).
S0 = math.sqrt(2.5)
S1 = math.sqrt(14.0)
ROWS = [[1.0, 2.0, 3.0, 4.0, 5.0], [10.0, 12.0, 14.0, 16.0, 18.0, 20.0]]


def _padded():
    Y = np.full((2, 6), np.nan)
    Y[0, :5] = ROWS[0]
    Y[1] = ROWS[1]
    return Y


def _check(summary):
    assert isinstance(summary, RepeatSummary)
    np.testing.assert_allclose(summary.y_mean, [3.0, 15.0], rtol=1e-15)
    np.testing.assert_allclose(
        summary.sigma, [S0 / math.sqrt(5), S1 / math.sqrt(6)], rtol=1e-14
    )
    np.testing.assert_array_equal(summary.n_repeats, [5, 6])
    # Own spread: n - 1 degrees of freedom.
    np.testing.assert_array_equal(summary.sigma_dof, [4.0, 5.0])
    assert summary.sigma_dof.dtype == np.float64


def test_padded_array():
    Y = _padded()
    before = Y.copy()
    summary = summarize_repeats(Y)
    _check(summary)
    assert summary.ids is None
    np.testing.assert_array_equal(Y, before)  # not mutated
    y_mean, sigma = summary[:2]  # the first two items are (y_mean, sigma)
    assert y_mean is summary.y_mean and sigma is summary.sigma


def test_list_of_arrays():
    _check(summarize_repeats([np.array(ROWS[0]), ROWS[1]]))


def test_long_dataframe_first_appearance_order():
    pd = pytest.importorskip("pandas")
    # Interleaved rows, id "b" appears first; an extra column is ignored.
    rows = [("b", v) for v in ROWS[0]] + [("a", v) for v in ROWS[1]]
    order = [0, 5, 1, 6, 2, 7, 3, 8, 4, 9, 10]
    frame = pd.DataFrame(
        {
            "sample": [rows[i][0] for i in order],
            "o2": [rows[i][1] for i in order],
            "operator": ["x"] * 11,
        }
    )
    summary = summarize_repeats(frame, id_column="sample", value_column="o2")
    _check(summary)
    assert summary.ids.tolist() == ["b", "a"]
    # A two-column frame needs no value_column.
    _check(summarize_repeats(frame[["sample", "o2"]], id_column="sample"))
    with pytest.raises(ValueError, match="value_column is required"):
        summarize_repeats(frame, id_column="sample")
    with pytest.raises(ValueError, match="'nope' is not a column"):
        summarize_repeats(frame, id_column="nope", value_column="o2")


def test_std_and_ddof():
    summary = summarize_repeats(_padded(), sigma="std")
    np.testing.assert_allclose(summary.sigma, [S0, S1], rtol=1e-14)
    summary = summarize_repeats(_padded(), sigma="std", ddof=0)
    np.testing.assert_allclose(
        summary.sigma, [math.sqrt(10 / 5), math.sqrt(70 / 6)], rtol=1e-14
    )


def test_instrument_sigma_scalar_and_per_sample():
    Y = [ROWS[0], [7.0], [2.0, np.nan]]
    summary = summarize_repeats(Y, instrument_sigma=0.4)
    np.testing.assert_allclose(summary.y_mean, [3.0, 7.0, 2.0])
    np.testing.assert_allclose(summary.sigma, [S0 / math.sqrt(5), 0.4, 0.4])
    np.testing.assert_array_equal(summary.n_repeats, [5, 1, 1])
    summary = summarize_repeats(Y, instrument_sigma=[9.0, 0.2, 0.6], sigma="std")
    np.testing.assert_allclose(summary.sigma, [S0, 0.2, 0.6])
    # min_repeats=6: the 5-repeat sample also takes the instrument value / sqrt(5).
    summary = summarize_repeats(Y, instrument_sigma=0.5, min_repeats=6)
    np.testing.assert_allclose(summary.sigma, [0.5 / math.sqrt(5), 0.5, 0.5])
    # Every sample now takes the known instrument sigma.
    np.testing.assert_array_equal(summary.sigma_dof, [np.inf] * 3)


def test_sigma_dof_own_spread_or_instrument():
    Y = [ROWS[0], [7.0], ROWS[1][:3], [2.0, 4.0]]
    for kwargs in ({}, {"sigma": "std"}, {"ddof": 0}):
        with pytest.warns(UserWarning, match="fewer than 5 repeats"):
            summary = summarize_repeats(Y, instrument_sigma=0.4, **kwargs)
        np.testing.assert_array_equal(summary.sigma_dof, [4.0, np.inf, 2.0, 1.0])
    # The new field comes last: the first four keep their positions.
    y_mean, sigma, n_repeats, ids = summary[:4]
    assert summary._fields[:4] == ("y_mean", "sigma", "n_repeats", "ids")
    assert ids is None and n_repeats.tolist() == [5, 1, 3, 2]
    assert RepeatSummary(y_mean, sigma, n_repeats).sigma_dof is None


def test_missing_instrument_sigma_names_the_samples():
    with pytest.raises(ValueError, match=r"fewer than min_repeats=2.*\[1, 2\]"):
        summarize_repeats([ROWS[0], [7.0], [2.0, np.nan]])


def test_missing_instrument_sigma_names_long_ids():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"id": ["s1", "s1", "s2"], "y": [1.0, 2.0, 3.0]})
    with pytest.raises(ValueError, match=r"\['s2'\]"):
        summarize_repeats(frame, id_column="id")


def test_few_repeats_warning_quantifies():
    with pytest.warns(UserWarning, match=r"as few as 3.*50% for n = 3"):
        summary = summarize_repeats([[1.0, 2.0, 3.0], ROWS[1]])
    np.testing.assert_allclose(summary.sigma[0], 1.0 / math.sqrt(3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        summarize_repeats(_padded())  # 5 and 6 repeats: no warning
        summarize_repeats([[1.0], ROWS[0]], instrument_sigma=1.0)  # instrument


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"sigma": "var"}, "sigma must be"),
        ({"ddof": -1}, "ddof"),
        ({"min_repeats": 1}, "min_repeats must be an integer greater than ddof"),
        ({"instrument_sigma": [1.0, 2.0, 3.0]}, "instrument_sigma must be"),
        ({"instrument_sigma": -1.0}, "non-negative"),
    ],
)
def test_bad_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        summarize_repeats([[1.0], [2.0, 3.0, 4.0, 5.0, 6.0]], **kwargs)


def test_bad_data():
    with pytest.raises(ValueError, match=r"no measurement.*\[1\]"):
        summarize_repeats(np.array([[1.0, 2.0], [np.nan, np.nan]]))
    with pytest.raises(ValueError, match="infinite"):
        summarize_repeats(np.array([[1.0, np.inf]]))
    with pytest.raises(ValueError, match="2-D array"):
        summarize_repeats(np.ones(3))
    with pytest.raises(TypeError, match="real numbers"):
        summarize_repeats([["a", "b"]])
    with pytest.raises(ValueError, match="empty"):
        summarize_repeats(np.empty((0, 3)))
    with pytest.raises(TypeError, match="DataFrame"):
        summarize_repeats(_padded(), id_column="id")


def test_constant_repeats_and_pickle():
    summary = summarize_repeats([[2.0] * 5, [1e8 + 1, 1e8 + 2, 1e8 + 3, 1e8 + 4, 1e8]])
    assert summary.sigma[0] == 0.0
    # Two-pass variance: no cancellation at a large offset (SS = 10 exactly).
    np.testing.assert_allclose(summary.sigma[1], S0 / math.sqrt(5), rtol=1e-12)
    assert pickle.loads(pickle.dumps(summary))[1][1] == summary.sigma[1]


@settings(max_examples=40, deadline=None)
@given(
    data=arrays(
        np.float64,
        st.tuples(st.integers(1, 6), st.integers(8, 10)),
        elements=st.floats(-1e3, 1e3, allow_nan=False),
    ),
    n_missing=st.integers(0, 3),
)
def test_matches_numpy_nan_functions(data, n_missing):
    Y = data.copy()
    Y[:, Y.shape[1] - n_missing :] = np.nan  # >= 5 repeats stay: no warning
    summary = summarize_repeats(Y, sigma="std")
    np.testing.assert_allclose(
        summary.y_mean, np.nanmean(Y, axis=1), rtol=1e-12, atol=1e-9
    )
    np.testing.assert_allclose(
        summary.sigma, np.nanstd(Y, axis=1, ddof=1), rtol=1e-9, atol=1e-9
    )
    sem = summarize_repeats(Y).sigma
    np.testing.assert_allclose(
        sem, summary.sigma / np.sqrt(summary.n_repeats), rtol=1e-14
    )
    # Row order is kept and a list of rows gives the same numbers.
    rows = [row[~np.isnan(row)] for row in Y]
    np.testing.assert_array_equal(
        summarize_repeats(rows, sigma="std").sigma, summary.sigma
    )
