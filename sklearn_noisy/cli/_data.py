"""The data of a run: the columns of a CSV file named by the options (labels,
their noise, repeated readings, features), or an embedded dataset."""

from __future__ import annotations

import argparse
import csv
import os
import re
from typing import Any

import numpy as np

__all__ = ["CLIError"]


class CLIError(Exception):
    """A user error: reported as one line on stderr, exit code 2."""


#: The largest CSV field accepted (characters); the csv module's default,
#: 131,072, is too small for long text columns. A C long on every platform.
_FIELD_SIZE_LIMIT = 2**31 - 1


def _read_csv(path: str, option: str = "--data") -> dict[str, list[str]]:
    """The columns of the CSV file ``path`` (of ``option``), in header order."""
    if not os.path.isfile(path):
        raise CLIError(f"{option}: no such file: {path!r}")
    previous = csv.field_size_limit(_FIELD_SIZE_LIMIT)
    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:
            rows = list(csv.reader(handle))
    except UnicodeDecodeError as exc:
        raise CLIError(
            f"{option}: {path!r} is not UTF-8 text (byte {exc.object[exc.start]:#04x} "
            f"at offset {exc.start}); save it with the UTF-8 encoding"
        ) from None
    except csv.Error as exc:
        raise CLIError(f"{option}: {path!r} is not a valid CSV file: {exc}") from None
    finally:
        csv.field_size_limit(previous)
    if not rows:
        raise CLIError(f"{option}: {path!r} is empty")
    header = [name.strip() for name in rows[0]]
    if not any(header):
        raise CLIError(f"{option}: the first line of {path!r} must name the columns")
    if len(set(header)) != len(header):
        raise CLIError(f"{option}: {path!r} has duplicate column names")
    columns: dict[str, list[str]] = {name: [] for name in header}
    for line, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            raise CLIError(
                f"{option}: line {line} of {path!r} has {len(row)} fields, the "
                f"header has {len(header)}"
            )
        for name, cell in zip(header, row, strict=True):
            columns[name].append(cell.strip())
    if not columns[header[0]]:
        raise CLIError(f"{option}: {path!r} has no data rows")
    return columns


def _column(columns: dict[str, list[str]], name: str, option: str) -> list[str]:
    if name not in columns:
        raise CLIError(
            f"{option}: unknown column {name!r}; the columns are {list(columns)}"
        )
    return columns[name]


def _numeric(
    columns: dict[str, list[str]], name: str, option: str, *, missing: bool = False
) -> np.ndarray:
    """The column ``name`` as floats (``missing``: empty cells are NaN)."""
    values = []
    for row, cell in enumerate(_column(columns, name, option), start=1):
        if not cell and not missing:
            raise CLIError(f"{option}: column {name!r} has an empty cell (row {row})")
        try:
            values.append(float(cell or "nan"))
        except ValueError:
            raise CLIError(
                f"{option}: column {name!r} is not numeric (row {row}: {cell!r})"
            ) from None
    return np.array(values)


def _split(value: str) -> list[str]:
    return [item.strip() for item in value.split(",") if item.strip()]


def _noise_value(
    value: str, columns: dict[str, list[str]], option: str, used: list[str]
) -> Any:
    """A column's values (its name appended to ``used``) or a number."""
    if value in columns:
        used.append(value)
        return _numeric(columns, value, option)
    try:
        return float(value)
    except ValueError:
        raise CLIError(
            f"{option}: {value!r} is neither a number nor a column; the columns are "
            f"{list(columns)}"
        ) from None


def _labels(cells: list[str], name: str) -> np.ndarray:
    if any(not cell for cell in cells):
        raise CLIError(f"--target: column {name!r} has empty cells")
    try:
        numbers = np.array([float(cell) for cell in cells])
    except ValueError:
        return np.array(cells)
    if np.all(numbers == np.round(numbers)):
        return numbers.astype(np.int64)
    return numbers


def _flag(name: str) -> str:
    return f"--{name.replace('_', '-')}"


def _given(args: argparse.Namespace, names: str) -> list[str]:
    """The flags of the options among ``names`` (attribute names) given."""
    return [_flag(n) for n in names.split() if getattr(args, n, None) is not None]


#: The options that read columns of ``--data`` (``id`` and ``n_readings``:
#: ``plan`` only).
_NEEDS_DATA = (
    "target sigma q repeats features drop instrument_sigma min_repeats sigma_dof "
    "id n_readings groups sigma_shared sigma_shared_dof noise reference_readings"
)

#: The options that need another, in the order checked: (option, the option it
#: needs, why).
_NEEDS = (
    ("instrument_sigma", "repeats", ""),
    ("min_repeats", "repeats", ""),
    ("sigma_dof", "sigma", " (the degrees of freedom of sigma)"),
    ("sigma_shared_dof", "sigma_shared", " (its estimate)"),
    ("sigma_shared", "groups", " (the batch of each label)"),
    ("reference_readings", "groups", " (the batch of each label)"),
)


def _check_combinations(args: argparse.Namespace) -> None:
    """Fail on options given together that exclude or need one another."""
    repeats = args.repeats is not None
    poisson = getattr(args, "noise", None) == "poisson"
    excludes = (
        (args.dataset is not None, "--dataset names embedded data", "data"),
        (
            repeats,
            "--repeats gives the label, its sigma and sigma's degrees of freedom",
            "target sigma sigma_dof q",
        ),
        (
            poisson,
            "--noise poisson estimates each count's variance from the count",
            "sigma sigma_dof q groups sigma_shared",
        ),
        (repeats, "--repeats counts each label's readings", "n_readings"),
        (
            getattr(args, "reference_readings", None) is not None,
            "--reference-readings estimates sigma_shared and its uncertainty",
            "sigma_shared sigma_shared_dof",
        ),
    )
    for active, does, excluded in excludes:
        if active and _given(args, excluded):
            flags = [_flag(name) for name in excluded.split()]
            listed = " or ".join(filter(None, (", ".join(flags[:-1]), flags[-1])))
            raise CLIError(f"{does}: do not combine it with {listed}")
    if args.sigma is not None and args.q is not None:
        raise CLIError("give --sigma (regression) or --q (classification), not both")
    if repeats and poisson:
        raise CLIError(
            "--noise poisson takes count labels from --target, not --repeats"
        )
    if not repeats and args.target is None:
        raise CLIError("--data needs --target COL (or --repeats COL,COL,...)")
    for name, needed, why in _NEEDS:
        if _given(args, name) and not _given(args, needed):
            raise CLIError(f"{_flag(name)} needs {_flag(needed)}{why}")
    shared = _given(args, "sigma_shared reference_readings")
    if shared and args.q is not None:
        raise CLIError(f"{shared[0]} needs --sigma (regression labels)")


#: The embedded datasets of ``--dataset`` and their target's unit, the first
#: the default.
DATASETS = {"wheat_protein": "% protein", "oxygen_sensor": "% O2"}


def _load_embedded(args: argparse.Namespace) -> dict[str, Any]:
    """An embedded dataset, ``--dataset`` (no other data option may be given)."""
    given = _given(args, _NEEDS_DATA)
    if given:
        raise CLIError(f"{', '.join(given)} need(s) --data")
    from .. import datasets

    name = args.dataset or next(iter(DATASETS))
    bunch = getattr(datasets, f"load_{name}")()
    return {
        "X": bunch.data,
        "y": bunch.target,
        "sigma": bunch.target_sigma,
        # sigma is the standard error of n_repeats readings: n - 1 degrees of
        # freedom, as summarize_repeats(bunch.repeats).sigma_dof gives.
        "sigma_dof": bunch.n_repeats.astype(np.float64) - 1.0,
        "n_readings": bunch.n_repeats,
        "repeats": bunch.repeats,  # for the reliability from the repeats
        "task": "regression",
        "source": f"embedded {name.replace('_', ' ')} (load_{name})",
        "unit": DATASETS[name],
        "features": list(bunch.feature_names),
    }


def _load_repeats(
    args: argparse.Namespace, columns: dict[str, list[str]]
) -> dict[str, Any]:
    """Labels and sigma from columns of repeated measurements (``--repeats``)."""
    names = _split(args.repeats)
    if not names:
        raise CLIError("--repeats: give at least one column")
    repeats = np.column_stack(
        [_numeric(columns, n, "--repeats", missing=True) for n in names]
    )
    from ..preprocessing import summarize_repeats

    options = {} if args.min_repeats is None else {"min_repeats": args.min_repeats}
    try:
        summary = summarize_repeats(
            repeats,
            sigma=args.repeat_sigma,
            instrument_sigma=args.instrument_sigma,
            **options,
        )
    except ValueError as exc:
        raise CLIError(f"--repeats: {exc}") from None
    return {
        "y": summary.y_mean,
        "sigma": summary.sigma,
        "sigma_dof": summary.sigma_dof,
        "n_readings": summary.n_repeats,
        "repeats": repeats,  # for the reliability from the repeats
        "task": "regression",
        "used": names,
        "label": f"mean of {len(names)} repeat columns",
    }


def _load_target(
    args: argparse.Namespace, columns: dict[str, list[str]]
) -> dict[str, Any]:
    """Labels from ``--target`` (their noise: :func:`_load`)."""
    cells = _column(columns, args.target, "--target")
    counts = getattr(args, "noise", None) == "poisson"
    labels = {"task": "regression", "counts": counts, "cells": cells}
    labels.update(used=[args.target], label=args.target)
    if args.q is not None:
        labels.update(task="classification", y=_labels(cells, args.target))
    elif not counts and args.sigma is None:
        raise CLIError(
            "give the label noise: --sigma COL|NUMBER (regression) or "
            "--q COL|NUMBER (classification)"
        )
    else:
        labels["y"] = y = _numeric(columns, args.target, "--target")
    if counts:
        bad = int(np.argmax((y < 0) | (y != np.round(y))))
        if y[bad] < 0 or y[bad] != np.round(y[bad]):
            raise CLIError(
                f"--noise poisson: --target {args.target!r} must hold counts "
                f"(whole numbers >= 0); row {bad + 1} holds {cells[bad]!r}"
            )
    return labels


def _load(args: argparse.Namespace) -> dict[str, Any]:
    """The data to evaluate: X, y, the noise and a description."""
    if args.data is None:
        return _load_embedded(args)
    _check_combinations(args)
    columns = _read_csv(args.data)
    labels = (_load_target if args.repeats is None else _load_repeats)(args, columns)
    used = labels["used"]
    for name in ("q", "sigma", "sigma_dof", "id", "n_readings", "sigma_shared"):
        value = getattr(args, name, None)
        if name == "id" and value is not None:  # plan's
            labels["ids"] = _column(columns, value, "--id")
            used.append(value)
        elif value is not None:
            labels[name] = _noise_value(value, columns, _flag(name), used)
    if args.groups is not None:
        labels["groups"] = np.array(_column(columns, args.groups, "--groups"))
        used.append(args.groups)
        labels["sigma_shared_dof"] = _positive_dof(args.sigma_shared_dof)
        if getattr(args, "reference_readings", None) is not None:
            labels["sigma_shared"] = _reference_summary(args.reference_readings)
    parsed: dict[str, np.ndarray] = {}  # the numeric columns, read once
    features, left_out, notes = _features(args, columns, labels, parsed)
    for name in features:
        if name not in parsed:
            parsed[name] = _numeric(columns, name, "--features", missing=True)
    return {
        **labels,
        "X": np.column_stack([parsed[name] for name in features]),
        "source": f"{args.data} ({labels['label']})",
        "features": features,
        "left_out": left_out,
        "notes": notes,
    }


def _reference_summary(path: str) -> Any:
    """``--reference-readings``: :func:`summarize_batches` of the readings of
    reference samples (columns ``batch``, ``value``; ``sample``: which one)."""
    option = "--reference-readings"
    columns = _read_csv(path, option)
    if "batch" not in columns or "value" not in columns:
        raise CLIError(
            f"{option}: {path!r} needs the columns batch and value (and sample "
            f"with several reference samples); its columns are {list(columns)}"
        )
    from ..preprocessing import summarize_batches

    try:
        return summarize_batches(
            _numeric(columns, "value", option),
            columns["batch"],
            references=columns.get("sample"),
        )
    except ValueError as exc:
        raise CLIError(f"{option}: {exc}") from None


def _positive_dof(text: str | None) -> float | None:
    """``--sigma-shared-dof``: a positive number (inf: known), or None."""
    if text is None:
        return None
    try:
        dof = float(text)
    except ValueError:
        dof = float("nan")
    if not dof > 0:
        raise CLIError(
            f"--sigma-shared-dof must be a positive number (inf: known); got {text!r}"
        )
    return dof


#: Words that mark a column as a label, a true value or a label's noise.
_LABEL_WORDS = frozenset(
    {"label", "labels", "target", "truth", "true", "sigma", "sem", "stderr",
     "err", "error", "dof", "flip", "noise"}
)  # fmt: skip

#: Classes: a target of at most this many distinct integers looks like classes.
_FEW_CLASSES = 5

#: A column whose correlation with the target exceeds this is an affine copy.
_COPY_CORRELATION = 0.9999

#: The least-squares search for readings runs on at most this many columns.
_MAX_SEARCHED = 200


def _looks_like_label(name: str, *, classes: bool = False) -> bool:
    """Whether a column name marks a label, a true value or a label's noise."""
    words = {word for word in re.split(r"[^0-9a-z]+", name.lower()) if word}
    return bool(words & _LABEL_WORDS) or (classes and "q" in words)


def _tolerance(cells: list[str] | None, y: np.ndarray) -> np.ndarray:
    """Per row, how far a mean of readings may be from the target: a unit in
    the last written digit of its cell, plus float precision."""
    tolerance = 1e-9 * np.maximum(1.0, np.abs(y))
    for row, cell in enumerate(cells or ()):
        mantissa, _, exponent = cell.lower().partition("e")
        decimals = len(mantissa.partition(".")[2])
        tolerance[row] += 10.0 ** (int(exponent or 0) - decimals)
    return tolerance


def _is_mean_of(
    values: dict[str, np.ndarray], names: list[str], y: np.ndarray, tolerance: Any
) -> bool:
    """Whether the row means of the columns ``names`` (2 or more) are the target."""
    if len(names) < 2:
        return False
    block = np.column_stack([values[n] for n in names])
    counts = np.isfinite(block).sum(axis=1)
    sums = np.where(np.isfinite(block), block, 0.0).sum(axis=1)
    mean = np.divide(sums, counts, out=np.full(len(block), np.nan), where=counts > 0)
    rows = np.isfinite(mean)
    return bool(
        rows.sum() >= max(3, len(y) // 2)
        and np.all(np.abs(mean[rows] - y[rows]) <= tolerance[rows])
    )


def _readings(
    values: dict[str, np.ndarray], y: np.ndarray, tolerance: np.ndarray
) -> list[str]:
    """The columns whose row mean is the target: named alike (``r1``, ``r2``,
    ...), else found by least squares (equal weights 1/k; user guide)."""
    stems: dict[str, list[str]] = {}
    for name in values:
        match = re.fullmatch(r"(.*?)[_\-. ]?\d+", name.lower())
        if match:
            stems.setdefault(match.group(1), []).append(name)
    for names in stems.values():
        if _is_mean_of(values, names, y, tolerance):
            return names
    names = list(values)
    if not 2 <= len(names) <= _MAX_SEARCHED:
        return []
    block = np.column_stack([values[n] for n in names])
    complete = np.all(np.isfinite(block), axis=1)
    if complete.sum() <= len(names) + 1:
        return []
    weights = np.linalg.lstsq(block[complete], y[complete], rcond=None)[0]
    support = np.abs(weights) > 0.5 / len(names)  # each reading weighs 1/k
    k = int(support.sum())
    if k < 2 or not np.allclose(weights[support], 1.0 / k, atol=1e-3):
        return []
    chosen = [n for n, used in zip(names, support, strict=True) if used]
    return chosen if _is_mean_of(values, chosen, y, tolerance) else []


def _leaks(
    names: list[str],
    columns: dict[str, list[str]],
    labels: dict[str, Any],
    parsed: dict[str, np.ndarray],
) -> dict[str, str]:
    """The columns among ``names`` that reproduce the target, with the reason
    (the numeric columns read are kept in ``parsed``)."""
    y = labels["y"]
    if y.dtype.kind not in "iuf" or np.ptp(y) == 0:
        return {}
    y = y.astype(np.float64)
    values: dict[str, np.ndarray] = {}
    for name in names:
        try:
            values[name] = parsed[name] = _numeric(columns, name, "", missing=True)
        except CLIError:
            continue  # not numeric: reported when used as a feature
    found: dict[str, str] = {}
    for name, column in values.items():
        rows = np.isfinite(column)
        if rows.sum() < 3 or np.ptp(column[rows]) == 0:
            continue
        if np.array_equal(column[rows], y[rows]):
            found[name] = "equal to the target"
        elif abs(np.corrcoef(column[rows], y[rows])[0, 1]) > _COPY_CORRELATION:
            found[name] = "an affine copy of the target, |corr| > 0.9999"
    if labels["task"] == "regression":
        rest = {n: v for n, v in values.items() if n not in found}
        readings = _readings(rest, y, _tolerance(labels.get("cells"), y))
        found.update(dict.fromkeys(readings, "readings whose row mean is the target"))
    return found


def _features(
    args: argparse.Namespace,
    columns: dict[str, list[str]],
    labels: dict[str, Any],
    parsed: dict[str, np.ndarray],
) -> tuple[list[str], dict[str, str], list[str]]:
    """The feature columns, those left out (with the reason), and warnings
    (user guide: :ref:`cli_features`)."""
    used, y = labels["used"], labels["y"]
    classes = labels["task"] == "classification" or bool(
        y.dtype.kind in "iuf"
        and np.all(y == np.round(y))
        and np.unique(y).size <= _FEW_CLASSES
    )
    notes = []
    if classes and labels["task"] == "regression" and args.repeats is None:
        if not labels.get("counts", False):
            values = ", ".join(f"{v:g}" for v in np.unique(y))
            notes.append(
                f"--target {args.target!r} holds only the integers {values}: --sigma "
                "is for continuous measurements; for class labels give their flip "
                "probability with --q COL|NUMBER"
            )
    if args.features is not None:
        if args.drop is not None:
            raise CLIError("give --features or --drop, not both")
        features = _split(args.features)
        for name in features:
            _column(columns, name, "--features")
        if args.target is not None and args.target in features:
            raise CLIError(
                f"--features: {args.target!r} is the target (--target); a model "
                "given its own labels scores perfectly: leave it out"
            )
        leaks = _leaks([n for n in features if n not in used], columns, labels, parsed)
        leaks.update({n: "the repeats the label is the mean of" for n in features
                      if n in used})  # fmt: skip
        if leaks:
            notes.append(
                f"--features includes {_reasons(leaks)}: the scores will look "
                "better than the model is"
            )
        return features, {}, notes
    dropped = [] if args.drop is None else _split(args.drop)
    for name in dropped:
        _column(columns, name, "--drop")
    rest = [name for name in columns if name not in used and name not in dropped]
    left_out = {
        name: "the name marks a label, a true value or a label's noise"
        for name in rest
        if _looks_like_label(name, classes=classes)
    }
    rest = [name for name in rest if name not in left_out]
    left_out.update(_leaks(rest, columns, labels, parsed))
    features = [name for name in rest if name not in left_out]
    if not features:
        raise CLIError(
            "no feature columns left"
            + (f" (left out: {_reasons(left_out)})" if left_out else "")
            + ": pass --features"
        )
    return features, left_out, notes


def _reasons(columns: dict[str, str]) -> str:
    """``"a, b (reason); c (other reason)"``: columns grouped by reason."""
    groups: dict[str, list[str]] = {}
    for name, reason in columns.items():
        groups.setdefault(reason, []).append(name)
    return "; ".join(f"{', '.join(names)} ({why})" for why, names in groups.items())
