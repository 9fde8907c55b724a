"""From repeated measurements to labels, their standard errors and reliability."""

from __future__ import annotations

import math
import numbers
from typing import Any, NamedTuple

import numpy as np
from scipy import stats

from ..metrics._reliability import LabelReliability, unbiased
from ..utils._arrays import as_float_array
from ..utils._validation import check_level
from ..utils._warnings import warn

#: Below this many repeats the sample standard deviation is itself uncertain by
#: more than about 35 %, and :func:`summarize_repeats` warns.
FEW_REPEATS = 5


class RepeatSummary(NamedTuple):
    """Per-sample summary of repeated measurements.

    Attributes
    ----------
    y_mean : ndarray of shape (n_samples,)
        Mean of each sample's repeats: ``y_true`` for the expected metrics.
    sigma : ndarray of shape (n_samples,)
        The label uncertainty to pass as ``sigma``.
    n_repeats : ndarray of shape (n_samples,)
        Number of (non-missing) repeats of each sample.
    ids : ndarray of shape (n_samples,) or None
        The sample ids in output order for a long DataFrame input, else None.
    sigma_dof : ndarray of shape (n_samples,) or None
        Degrees of freedom of each ``sigma``, to pass as ``sigma_dof``:
        ``n_i - 1``, or ``inf`` where ``instrument_sigma`` is used.
    """

    y_mean: np.ndarray
    sigma: np.ndarray
    n_repeats: np.ndarray
    ids: np.ndarray | None = None
    sigma_dof: np.ndarray | None = None


def _flatten_input(
    Y: Any, id_column: Any, value_column: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """``(values, codes, counts, means, ids)``: the readings, their samples, the
    samples' numbers of readings and means, and the ids of a long DataFrame."""
    ids = None
    if id_column is not None:
        if not hasattr(Y, "columns"):
            raise TypeError(
                "id_column is given, so Y must be a long pandas DataFrame with an id "
                f"column and a value column; got {type(Y).__name__}."
            )
        for name, column in (("id_column", id_column), ("value_column", value_column)):
            if column is not None and column not in Y.columns:
                raise ValueError(
                    f"{name}={column!r} is not a column of Y; the columns are "
                    f"{list(Y.columns)}."
                )
        if value_column is None:
            others = [c for c in Y.columns if c != id_column]
            if len(others) != 1:
                raise ValueError(
                    "value_column is required when the DataFrame has more than one "
                    f"column besides id_column={id_column!r}; got columns {others}."
                )
            value_column = others[0]
        import pandas as pd  # a DataFrame was passed, so pandas is installed

        codes, ids = pd.factorize(Y[id_column], sort=False, use_na_sentinel=True)
        if (codes < 0).any():
            raise ValueError(
                f"id_column={id_column!r} contains missing ids at rows "
                f"{np.flatnonzero(codes < 0)[:5].tolist()}."
            )
        values = as_float_array(Y[value_column], name=f"Y[{value_column!r}]")
        n_samples = len(ids)
        ids = np.asarray(ids)
    elif value_column is not None:
        raise TypeError("value_column needs id_column (the long DataFrame format).")
    elif isinstance(Y, (list, tuple)) and any(
        np.ndim(row) != 0 for row in Y
    ):  # a (possibly ragged) list of per-sample arrays
        rows = [as_float_array(row, name=f"Y[{i}]") for i, row in enumerate(Y)]
        for i, row in enumerate(rows):
            if row.ndim != 1:
                raise ValueError(
                    f"Y[{i}] must be a 1-D array of repeats; got shape {row.shape}."
                )
        n_samples = len(rows)
        codes = np.repeat(np.arange(n_samples), [row.size for row in rows])
        values = np.concatenate(rows)
    else:
        array = as_float_array(Y, name="Y")
        if array.ndim != 2:
            raise ValueError(
                "Y must be a 2-D array (n_samples, max_repeats) padded with NaN, a "
                "list of 1-D arrays, or a long DataFrame with id_column; got an "
                f"array of shape {array.shape}."
            )
        n_samples = array.shape[0]
        codes = np.repeat(np.arange(n_samples), array.shape[1])
        values = array.ravel()
    if n_samples == 0:
        raise ValueError("Y is empty: at least one sample is required.")
    infinite = np.isinf(values)
    if infinite.any():
        sample = codes[np.argmax(infinite)]
        raise ValueError(
            f"Y must not contain infinite values; sample {_label(sample, ids)} has "
            f"{values[np.argmax(infinite)]!r}. Use NaN for a missing repeat."
        )
    present = ~np.isnan(values)
    values, codes = values[present], codes[present]
    counts = np.bincount(codes, minlength=n_samples)
    empty = np.flatnonzero(counts == 0)
    if empty.size:
        raise ValueError(
            f"{empty.size} sample(s) have no measurement (all NaN): "
            f"{_listing(empty, ids)}."
        )
    means = np.bincount(codes, weights=values, minlength=n_samples) / counts
    return values, codes, counts, means, ids


def _label(index: int, ids: np.ndarray | None) -> str:
    if ids is None:
        return str(int(index))
    value = ids[index]
    return repr(value.item() if isinstance(value, np.generic) else value)


def _listing(indices: np.ndarray, ids: np.ndarray | None, limit: int = 10) -> str:
    shown = ", ".join(_label(i, ids) for i in indices[:limit])
    more = f" and {indices.size - limit} more" if indices.size > limit else ""
    return f"[{shown}{more}]"


def summarize_repeats(
    Y: Any,
    *,
    ddof: int = 1,
    instrument_sigma: Any = None,
    min_repeats: int = 2,
    id_column: Any = None,
    value_column: Any = None,
    sigma: str = "sem",
) -> RepeatSummary:
    """Mean and uncertainty of each sample's repeated measurements.

    Read more in the :ref:`User Guide <repeated_measurements>`.

    Parameters
    ----------
    Y : array-like, list of array-like or pandas DataFrame
        A 2-D array ``(n_samples, max_repeats)`` with missing repeats as NaN,
        a list of 1-D arrays, or a long DataFrame with one row per measurement
        (pass ``id_column``, and ``value_column`` when there are other columns).
    ddof : int, default=1
        Delta degrees of freedom of the standard deviation.
    instrument_sigma : float or array-like of shape (n_samples,), default=None
        Standard deviation of one measurement, for the samples with fewer than
        ``min_repeats`` repeats (``None``: such samples are an error).
    min_repeats : int, default=2
        Fewest repeats for a sample's own spread; must exceed ``ddof``.
    id_column, value_column : hashable, default=None
        Column names of the long DataFrame form.
    sigma : {"sem", "std"}, default="sem"
        ``"sem"``: standard error of the mean, ``s_i / √n_i``; ``"std"``:
        standard deviation of one measurement, ``s_i``.

    Returns
    -------
    summary : RepeatSummary
        Named tuple ``(y_mean, sigma, n_repeats, ids, sigma_dof)``.

    Examples
    --------
    >>> from sklearn_noisy.preprocessing import summarize_repeats
    >>> Y = [[9.8, 10.1, 10.4, 9.9, 10.3], [20.5, 19.5, 20.0, 20.2, 19.8]]
    >>> summary = summarize_repeats(Y)
    >>> summary.y_mean
    array([10.1, 20. ])
    >>> summary.sigma
    array([0.11401754, 0.17029386])
    """
    if sigma not in ("sem", "std"):
        raise ValueError(f'sigma must be "sem" or "std"; got {sigma!r}.')
    if not isinstance(ddof, numbers.Integral) or ddof < 0:
        raise ValueError(f"ddof must be a non-negative integer; got {ddof!r}.")
    if not isinstance(min_repeats, numbers.Integral) or min_repeats <= ddof:
        raise ValueError(
            f"min_repeats must be an integer greater than ddof={ddof} (the spread "
            f"needs n - ddof > 0); got {min_repeats!r}."
        )
    values, codes, counts, y_mean, ids = _flatten_input(Y, id_column, value_column)
    instrument = _check_instrument_sigma(instrument_sigma, counts.size)
    enough = counts >= min_repeats
    spread = _spread(values, codes, y_mean, counts, enough, ddof)

    few = ~enough
    if few.any():
        if instrument is None:
            bad = np.flatnonzero(few)
            raise ValueError(
                f"{bad.size} sample(s) have fewer than min_repeats={min_repeats} "
                f"repeats and no instrument_sigma was given: {_listing(bad, ids)}. "
                "Pass instrument_sigma (the standard deviation of one measurement) "
                "or lower min_repeats."
            )
        spread[few] = instrument[few]

    own = np.flatnonzero(enough & (counts < FEW_REPEATS))
    if own.size:
        n_min = int(counts[own].min())
        warn(
            f"The spread of {own.size} sample(s) rests on fewer than {FEW_REPEATS} "
            f"repeats (as few as {n_min}): a standard deviation from n repeats has a "
            f"relative standard error of about 1/sqrt(2(n-1)), "
            f"{1.0 / math.sqrt(2.0 * (n_min - 1)):.0%} for n = {n_min}. Consider "
            "instrument_sigma with a higher min_repeats, or a pooled estimate.",
            UserWarning,
        )

    result_sigma = spread / np.sqrt(counts) if sigma == "sem" else spread
    # The centred sum of squares has n - 1 degrees of freedom whatever ddof.
    sigma_dof = np.where(enough, counts - 1.0, np.inf)
    return RepeatSummary(y_mean, result_sigma, counts.astype(np.intp), ids, sigma_dof)


def repeat_reliability(
    Y: Any,
    *,
    method: str = "icc",
    confidence_level: float = 0.95,
    id_column: Any = None,
    value_column: Any = None,
) -> LabelReliability:
    """The reliability of the labels, each the mean of its sample's repeats.

    ``"icc"``: ICC(1,k) with the exact F interval; ``"split_half"``: the
    odd/even halves' correlation stepped up by Spearman–Brown, with a Fisher z
    interval. Read more in the :ref:`User Guide <model_or_measurements>`.

    Parameters
    ----------
    Y : array-like, list of array-like or pandas DataFrame
        The repeats, in any form :func:`summarize_repeats` takes.
    method : {"icc", "split_half"}, default="icc"
        The estimate.
    confidence_level : float, default=0.95
        Level of the interval.
    id_column, value_column : hashable, default=None
        Column names of the long DataFrame form.

    Returns
    -------
    result : LabelReliability
        The reliability of the sample means, its interval and noise ceilings.

    Examples
    --------
    >>> from sklearn_noisy.preprocessing import repeat_reliability
    >>> Y = [[9.8, 10.1, 10.4], [20.5, 19.5, 20.0], [15.1, 14.6, 15.0],
    ...      [12.2, 12.5, 11.9], [18.0, 17.6, 18.3]]
    >>> result = repeat_reliability(Y)
    >>> round(result.reliability, 4), round(result.ci_low, 4), round(result.ci_high, 4)
    (0.9987, 0.9887, 0.9997)
    """
    if method not in ("icc", "split_half"):
        raise ValueError(f'method must be "icc" or "split_half"; got {method!r}.')
    check_level(confidence_level)
    values, codes, counts, means, _ = _flatten_input(Y, id_column, value_column)
    n = counts.size
    alpha = (1.0 - confidence_level) / 2.0
    if method == "split_half":
        return _split_half(values, codes, counts, means, confidence_level)
    total = values.size
    if n < 4 or total == n:
        raise ValueError(
            "repeat_reliability needs at least 4 samples and one sample with two "
            f"or more readings; got {n} sample(s) and {total} reading(s)."
        )
    grand = float(values.mean())
    msb = float(counts @ (means - grand) ** 2) / (n - 1)
    msw = float(np.sum((values - means[codes]) ** 2)) / (total - n)
    n0 = (total - float(counts @ counts) / total) / (n - 1)
    h = float(np.mean(1.0 / counts))

    def rho(f: float) -> float:  # ρ at a variance ratio F = MSB / MSW
        x = (f - 1.0) / n0  # σ_b² / σ_w²
        return x / (x + h)

    if not msb > 0.0 and not msw > 0.0:
        raise ValueError("Y has no spread: its reliability is undefined.")
    f = msb / msw if msw > 0 else math.inf
    if math.isinf(f):
        estimate = low = high = 1.0
    else:
        estimate = rho(f / unbiased(n))  # E[1/MSB] = (n−1)/((n−3) E[MSB])
        low = rho(f / stats.f.ppf(1.0 - alpha, n - 1, total - n))
        high = rho(f * stats.f.ppf(1.0 - alpha, total - n, n - 1))
    noise = msw * h
    between = max((msb - msw) / n0, 0.0)
    return LabelReliability(
        estimate,
        max(low, 0.0),
        max(high, 0.0),
        "ICC(1,k): one-way random effects, exact F interval",
        float(n),
        between + noise,
        noise,
        float(confidence_level),
    )


def _split_half(
    values: np.ndarray,
    codes: np.ndarray,
    counts: np.ndarray,
    means: np.ndarray,
    confidence_level: float,
) -> LabelReliability:
    """Spearman–Brown of the odd/even half means, over samples with 2+ readings."""
    order = np.argsort(codes, kind="stable")
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    position = np.empty(codes.size, dtype=np.intp)
    position[order] = np.arange(codes.size) - starts[codes[order]]
    n, keep = counts.size, counts >= 2
    m = int(keep.sum())
    if m < 4:
        raise ValueError(
            "method='split_half' needs at least 4 samples with two or more "
            f"readings; got {m}."
        )
    half_means, inverse = [], []
    for odd in (0, 1):
        size = np.bincount(codes[position % 2 == odd], minlength=n)[keep]
        total = np.bincount(codes[position % 2 == odd], values[position % 2 == odd], n)
        half_means.append(total[keep] / size)
        inverse.append(float(np.mean(1.0 / size)))
    r = float(np.corrcoef(*half_means)[0, 1])
    h = float(np.mean(1.0 / counts[keep]))

    def rho(r: float) -> float:
        """ρ of the means from the halves' correlation (user guide)."""
        if r <= 0.0 or r >= 1.0:
            return 2.0 * r / (1.0 + r)
        a, b, r2 = *inverse, r * r
        lam = r2 * (a + b) + math.sqrt(
            r2 * r2 * (a + b) ** 2 + 4 * (1 - r2) * r2 * a * b
        )
        lam /= 2.0 * (1.0 - r2)
        return lam / (lam + h)

    z = stats.norm.ppf(0.5 + confidence_level / 2.0) / math.sqrt(m - 3)
    z_r = math.atanh(min(max(r, -1.0 + 1e-15), 1.0 - 1e-15))
    label = float(np.var(means[keep], ddof=1))
    # Olkin and Pratt's approximately unbiased correlation
    estimate = rho(min(r * (1.0 + (1.0 - r * r) / (2.0 * (m - 3))), 1.0))
    return LabelReliability(
        estimate,
        max(rho(math.tanh(z_r - z)), 0.0),
        max(rho(math.tanh(z_r + z)), 0.0),
        "split-half: odd/even readings, Spearman-Brown, Fisher z interval",
        float(m),
        label,
        (1.0 - estimate) * label,
        float(confidence_level),
    )


def _spread(
    values: np.ndarray,
    codes: np.ndarray,
    y_mean: np.ndarray,
    counts: np.ndarray,
    enough: np.ndarray,
    ddof: int,
) -> np.ndarray:
    """``s_i = sqrt(Σ_j (y_ij − ȳ_i)² / (n_i − ddof))`` of the samples with
    ``enough``, rescaled where the squares leave the float64 range."""
    n_samples = y_mean.size
    centred = values - y_mean[codes]
    spread = np.zeros(n_samples)
    with np.errstate(over="ignore", under="ignore"):
        sum_sq = np.bincount(codes, weights=centred * centred, minlength=n_samples)
    np.divide(sum_sq, counts - ddof, out=spread, where=enough)
    spread = np.sqrt(spread)
    scale = np.zeros(n_samples)
    np.maximum.at(scale, codes, np.abs(centred))
    redo = enough & (scale > 0.0) & ~((sum_sq > 1e-290) & (sum_sq < 1e300))
    if redo.any():
        rows = redo[codes]
        ratio = centred[rows] / scale[codes[rows]]
        scaled = np.bincount(codes[rows], weights=ratio * ratio, minlength=n_samples)
        spread[redo] = scale[redo] * np.sqrt(scaled[redo] / (counts[redo] - ddof))
    return spread


def _check_instrument_sigma(instrument_sigma: Any, n_samples: int) -> Any:
    if instrument_sigma is None:
        return None
    array = as_float_array(instrument_sigma, name="instrument_sigma")
    array = np.full(n_samples, float(array)) if array.ndim == 0 else array
    if array.shape != (n_samples,):
        raise ValueError(
            "instrument_sigma must be a scalar or have one value per sample, shape "
            f"({n_samples},); got shape {array.shape}."
        )
    if not np.all(np.isfinite(array)) or array.min() < 0:
        raise ValueError(
            "instrument_sigma must be finite and non-negative (the standard deviation "
            "of one measurement)."
        )
    return array
