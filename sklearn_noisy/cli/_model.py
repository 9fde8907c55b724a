"""What every subcommand runs: the data loaded, the model built and cross-validated."""

from __future__ import annotations

import argparse
import ast
import contextlib
import importlib
import os
import sys
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ._data import CLIError, _load, _reasons
from ._options import SAMPLING_OPTIONS, check_options

PROG = "sklearn-noisy"

#: The default regression model is a degree-3 polynomial ridge up to this many
#: features (286 polynomial terms); gradient boosting above.
_POLYNOMIAL_FEATURES = 10

#: Up to this many data values, native thread pools run one thread: small fits
#: gain nothing from threads and wait long on a busy machine.
_SMALL_DATA = 2_000_000


def _import_estimator(path: str) -> Any:
    if not all(part.isidentifier() for part in path.split(".")):
        raise CLIError(
            f"--estimator: expected a dotted path such as "
            f"sklearn.linear_model.Ridge or a scikit-learn class name; got {path!r}"
        )
    if "." not in path:
        from sklearn.utils import all_estimators

        found = dict(all_estimators())
        if path not in found:
            raise CLIError(
                f"--estimator: unknown estimator {path!r}; give a dotted path such "
                "as sklearn.linear_model.Ridge"
            )
        return found[path]
    module_name, _, class_name = path.rpartition(".")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise CLIError(f"--estimator: cannot import {module_name!r}: {exc}") from None
    if not hasattr(module, class_name):
        raise CLIError(f"--estimator: module {module_name!r} has no {class_name!r}")
    return getattr(module, class_name)


def _parse_params(items: Sequence[str]) -> dict[str, Any]:
    params: dict[str, Any] = {}
    for item in items:
        name, sep, text = item.partition("=")
        if not sep or not name.strip():
            raise CLIError(f"--param: expected name=value, got {item!r}")
        params[name.strip()] = text.strip()
        with contextlib.suppress(ValueError, SyntaxError):
            params[name.strip()] = ast.literal_eval(text.strip())
    return params


def _default_estimator(task: str, X: Any, seed: int) -> tuple[Any, str]:
    """The default model for ``X`` and the line that names it and says why."""
    from sklearn.ensemble import (
        HistGradientBoostingClassifier,
        HistGradientBoostingRegressor,
    )

    if task == "classification":
        return HistGradientBoostingClassifier(random_state=seed), (
            "model: HistGradientBoostingClassifier, the default for classification "
            "(flexible, handles missing cells); --estimator for another"
        )
    why = f"on more than {_POLYNOMIAL_FEATURES} features (too many polynomial terms)"
    if np.isnan(X).any():
        why = "with missing cells (which it handles)"
    if X.shape[1] > _POLYNOMIAL_FEATURES or np.isnan(X).any():
        return HistGradientBoostingRegressor(random_state=seed), (
            f"model: HistGradientBoostingRegressor, the default for regression {why}; "
            "--estimator for another"
        )
    from sklearn.linear_model import RidgeCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import PolynomialFeatures, StandardScaler

    estimator = make_pipeline(
        StandardScaler(),
        PolynomialFeatures(degree=3),
        RidgeCV(alphas=(1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.1, 1.0, 10.0)),
    )
    return estimator, (
        "model: degree-3 polynomial ridge, the default for regression on at most "
        f"{_POLYNOMIAL_FEATURES} features without missing cells (smooth, stable on "
        "small data); --estimator for another"
    )


def _make_estimator(args: argparse.Namespace, task: str, X: Any) -> tuple[Any, str]:
    """The estimator to cross-validate, and the line that names it and says why."""
    from sklearn.base import is_classifier, is_regressor

    if args.estimator is None:
        estimator, chosen = _default_estimator(task, X, args.seed)
    else:
        chosen = f"model: {args.estimator}, from --estimator"
        cls = _import_estimator(args.estimator)
        if not isinstance(cls, type):
            raise CLIError(f"--estimator: {args.estimator!r} is not a class")
        try:
            estimator = cls()
        except TypeError as exc:
            raise CLIError(
                f"--estimator: cannot create {args.estimator}(): {exc}"
            ) from None
        if not hasattr(estimator, "fit") or not hasattr(estimator, "get_params"):
            raise CLIError(
                f"--estimator: {args.estimator!r} is not a scikit-learn estimator"
            )
    params = _parse_params(args.param)
    seeds = {
        name: args.seed
        for name, value in estimator.get_params().items()
        if (name == "random_state" or name.endswith("__random_state")) and value is None
    }
    try:
        estimator.set_params(**seeds, **params)
    except ValueError as exc:
        raise CLIError(f"--param: {exc}") from None
    if task == "classification":
        fits, means, kind = is_classifier, "--q means", "classifier"
    else:
        fits, means, kind = is_regressor, "--sigma/--repeats mean", "regressor"
    if not fits(estimator):
        raise CLIError(
            f"{means} {task}, but {type(estimator).__name__} is not a {kind}"
        )
    return estimator, chosen


@contextlib.contextmanager
def _stdout_to_stderr() -> Iterator[None]:
    """Send everything written to stdout (also by worker processes) to stderr."""
    sys.stdout.flush()
    try:
        saved = os.dup(1)
    except OSError:  # no real file descriptor (embedded interpreters)
        with contextlib.redirect_stdout(sys.stderr):
            yield
        return
    try:
        os.dup2(2, 1)
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


@contextlib.contextmanager
def opened(path: str | None, **options: Any) -> Iterator[Any]:
    """``path`` open for writing; None or ``-``: standard output (flushed)."""
    if path is None or path == "-":
        yield sys.stdout
        sys.stdout.flush()
        return
    with open(path, "w", encoding="utf-8", **options) as handle:
        yield handle


def _thread_limits(X: Any) -> Any:
    """One native thread (OpenMP, BLAS) for small data; unlimited otherwise."""
    if X.shape[0] * max(X.shape[1], 1) > _SMALL_DATA:
        return contextlib.nullcontext()
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1)


def note(kind: str, text: str) -> None:
    """A line ``sklearn-noisy: <kind>: <text>`` on stderr."""
    print(f"{PROG}: {kind}: {text}", file=sys.stderr, flush=True)


def prepare(args: argparse.Namespace) -> dict[str, Any]:
    """Check the options, load the data and print its warnings (no fitting)."""
    check_options(args)
    loaded = _load(args)
    for text in loaded.get("notes", ()):
        note("warning", text)
    return loaded


def cross_validate(
    args: argparse.Namespace, loaded: dict[str, Any], printer: Any, scoring: Any
) -> Any:
    """The fitted NoisyCrossValidator of the model of ``args`` on the data."""
    estimator, loaded["model"] = _make_estimator(args, loaded["task"], loaded["X"])

    from sklearn.model_selection import GroupKFold, KFold, StratifiedKFold

    from ..model_selection import NoisyCrossValidator

    n_samples = loaded["X"].shape[0]
    if args.cv > n_samples:
        raise CLIError(f"--cv {args.cv} exceeds the number of samples ({n_samples})")
    folds = StratifiedKFold if loaded["task"] == "classification" else KFold
    splitter = folds(args.cv, shuffle=True, random_state=args.seed)
    groups = loaded.get("groups")
    if groups is not None:  # batches kept whole (user guide: shared_offsets)
        n_groups = np.unique(groups).size
        if args.cv > n_groups:
            raise CLIError(
                f"--cv {args.cv} exceeds the number of batches in --groups "
                f"({n_groups}): the folds keep batches whole"
            )
        splitter = GroupKFold(args.cv, shuffle=True, random_state=args.seed)
    validator = NoisyCrossValidator(
        estimator,
        scoring=scoring,
        cv=splitter,
        n_jobs=args.n_jobs,
        verbose=0 if args.quiet else (2 if args.verbose else 1),
        error_score="raise",
        estimand=args.estimand,
        test_set_sampling=SAMPLING_OPTIONS[args.test_set_sampling],
        unit=args.unit or loaded.get("unit"),
    )
    if not args.quiet:
        print(
            f"{PROG}: {loaded['source']}: {n_samples} samples, "
            f"{loaded['X'].shape[1]} features; {args.cv}-fold CV of "
            f"{type(estimator).__name__}\n  features: {', '.join(loaded['features'])}",
            file=sys.stderr,
        )
        if loaded.get("left_out"):
            print(
                f"  left out: {_reasons(loaded['left_out'])}; --features to use them",
                file=sys.stderr,
            )
        sys.stderr.flush()
    names = ["q"] if loaded["task"] == "classification" else ["sigma", "sigma_dof"]
    names = [] if loaded.get("counts") else names
    if groups is not None:
        names += ["groups", "sigma_shared", "sigma_shared_dof"]
    noise = {name: loaded.get(name) for name in names}
    try:
        with _stdout_to_stderr(), _thread_limits(loaded["X"]):
            validator.fit(loaded["X"], loaded["y"], **noise)
    finally:
        printer.flush()
    return validator
