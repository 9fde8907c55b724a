"""``refit_within_noise``: a ``refit=`` rule for scikit-learn's searches that
refits the simplest candidate within the label noise of the best."""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["refit_within_noise"]


def _check_options(
    complexity: Any, simpler: Any, n_std: Any, se: Any, score: Any, variance: Any
) -> None:
    """Every argument of :func:`refit_within_noise`, checked before any search."""
    if not (isinstance(complexity, str) and complexity) and not callable(complexity):
        raise TypeError(
            "complexity must be a parameter name (e.g. 'ridge__alpha') or a "
            "callable mapping a candidate's params dict to a number; got "
            f"{complexity!r}."
        )
    for name, value, choices in (
        ("simpler", simpler, ("lower", "higher")),
        ("se", se, ("label_noise", "folds")),
    ):
        if value not in choices:
            raise ValueError(f"{name} must be one of {choices}; got {value!r}.")
    if not isinstance(n_std, numbers.Real) or isinstance(n_std, bool):
        raise TypeError(f"n_std must be a real number >= 0; got {n_std!r}.")
    if not (math.isfinite(n_std) and n_std >= 0):
        raise ValueError(f"n_std must be finite and >= 0; got {n_std!r}.")
    for name, value in (("score", score), ("variance", variance)):
        if not isinstance(value, str) or not value:
            raise TypeError(
                f"{name} must be a non-empty str, a key of the scorer's output; "
                f"got {value!r}."
            )


@dataclass(eq=False)
class _RefitWithinNoise:
    """The rule of :func:`refit_within_noise` (a class, so that it pickles)."""

    complexity: str | Callable[[dict], Any]
    simpler: str
    n_std: float
    se: str
    score: str
    variance: str

    def __repr__(self) -> str:
        complexity = getattr(self.complexity, "__qualname__", None)
        complexity = complexity if callable(self.complexity) else repr(self.complexity)
        return (
            f"refit_within_noise(complexity={complexity}, simpler={self.simpler!r}, "
            f"n_std={self.n_std!r}, se={self.se!r}, score={self.score!r}, "
            f"variance={self.variance!r})"
        )

    def _columns(self, cv_results: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
        """The mean score per candidate and the fold values the SE needs."""
        if not isinstance(cv_results, Mapping) or "params" not in cv_results:
            raise TypeError(
                "refit_within_noise's rule takes a search's cv_results_ (a dict "
                f"with 'params'); got {type(cv_results).__name__}."
            )
        needed = self.score if self.se == "folds" else self.variance
        prefix = "mean_test_"
        keys = sorted(k[len(prefix) :] for k in cv_results if k.startswith(prefix))
        missing = [
            key for key in dict.fromkeys([self.score, needed]) if key not in keys
        ]
        if missing:
            hint = (
                "Use scoring=make_noisy_scorer(..., output='all') as the whole "
                "scoring of the search (not inside a dict or list of scorers, where "
                "scikit-learn needs floats): its cv_results_ then hold "
                "mean_test_expected and split<k>_test_variance."
                if self.se == "label_noise"
                else "Name the score's key with score= ('score' for a single "
                "scikit-learn scorer)."
            )
            parameter = "score" if self.score in missing else "variance"
            raise ValueError(
                f"refit_within_noise({parameter}={getattr(self, parameter)!r}) "
                f"needs the cv_results_ columns mean_test_<key> and "
                f"split<k>_test_<key> for {missing}; the search has test keys "
                f"{keys}. {hint}"
            )
        means = np.asarray(cv_results[f"mean_test_{self.score}"], dtype=float)
        folds = []  # split0_test_<needed>, split1_test_<needed>, ...
        while (column := f"split{len(folds)}_test_{needed}") in cv_results:
            folds.append(np.asarray(cv_results[column], dtype=float))
        if not folds:
            raise ValueError(
                f"refit_within_noise needs the per-fold columns "
                f"split<k>_test_{needed} of cv_results_; there are none."
            )
        return means, np.column_stack(folds)

    def _complexities(self, params: list[dict]) -> np.ndarray:
        """One finite number per candidate, lower meaning simpler."""
        values = []
        for candidate in params:
            name = self.complexity
            if callable(name):
                value = name(candidate)
            else:
                if name not in candidate:
                    name = name.removeprefix("param_")
                if name not in candidate:
                    raise ValueError(
                        f"complexity={self.complexity!r} is not a parameter of "
                        f"the candidate {candidate}; name one of its parameters "
                        "or pass a callable mapping a params dict to a number."
                    )
                value = candidate[name]
            if (
                not isinstance(value, numbers.Real)
                or isinstance(value, bool)
                or not math.isfinite(value)
            ):
                raise ValueError(
                    f"complexity must give a finite number for every candidate; "
                    f"got {value!r} for {candidate}. Pass a callable mapping a "
                    "params dict to a number."
                )
            values.append(float(value))
        values = np.asarray(values)
        return values if self.simpler == "lower" else -values

    def select(self, cv_results: Mapping[str, Any]) -> dict[str, Any]:
        """The rule's steps on a search's ``cv_results``: ``index`` (the one to
        refit), ``best_index``, ``best_score``, ``se``, ``threshold``,
        ``n_splits`` and ``within`` (the indices that reach the threshold)."""
        means, folds = self._columns(cv_results)
        finite = np.isfinite(means)
        if not finite.any():
            raise ValueError(
                f"Every candidate's mean_test_{self.score} is NaN (every fit or "
                "score failed): refit_within_noise has nothing to choose from."
            )
        best = int(np.flatnonzero(finite)[np.argmax(means[finite])])
        n_splits = folds.shape[1]
        row = folds[best]
        if self.se == "label_noise":
            # disjoint test folds, independent label noise: sum_k V_k / K**2
            total = float(np.sum(row))
            se = math.sqrt(total) / n_splits if total >= 0 else math.nan
        elif n_splits > 1:
            se = float(np.std(row, ddof=1)) / math.sqrt(n_splits)
        else:
            se = math.nan
        if not (math.isfinite(se) and se >= 0):
            raise ValueError(
                f"The standard error of the best candidate ({best}) is {se!r} "
                f"(se={self.se!r}, fold values {row.tolist()}): it needs a finite "
                "value in every fold"
                + (" and 2 folds or more." if n_splits < 2 else ".")
            )
        threshold = float(means[best]) - self.n_std * se
        within = np.flatnonzero(finite & (means >= threshold))
        complexity = self._complexities(list(cv_results["params"]))[within]
        # the simplest; then the best score, then the first
        order = np.lexsort((within, -means[within], complexity))
        return {
            "index": int(within[order[0]]),
            "best_index": best,
            "best_score": float(means[best]),
            "se": se,
            "threshold": threshold,
            "n_splits": n_splits,
            "within": within,
        }

    def __call__(self, cv_results: Mapping[str, Any]) -> int:
        """The index of the candidate to refit (``best_index_``)."""
        return self.select(cv_results)["index"]


def refit_within_noise(
    *,
    complexity: str | Callable[[dict], Any],
    simpler: str = "lower",
    n_std: float = 1.0,
    se: str = "label_noise",
    score: str = "expected",
    variance: str = "variance",
) -> _RefitWithinNoise:
    """Refit rule for a search: the simplest candidate within the noise of the best.

    Pass the result as ``refit=`` of scikit-learn's ``GridSearchCV`` or
    ``RandomizedSearchCV``, with ``scoring=make_noisy_scorer(...,
    output="all")`` as the whole scoring. Among the candidates whose mean
    score is at least ``best - n_std * se``, with ``best`` the greatest mean
    score and ``se`` the standard error of that candidate's mean, the search
    refits the simplest (ties: the greater score). Read more in the
    :ref:`User Guide <refit_within_noise>`, which also says which standard
    error the band uses, and why. (scikit-learn's halving searches do not call
    a ``refit`` callable.)

    Parameters
    ----------
    complexity : str or callable
        The order of simplicity: a parameter name as in the grid (e.g.
        ``"ridge__alpha"``; ``"param_ridge__alpha"`` is accepted) whose values
        are numbers, or a callable mapping a candidate's ``params`` dict to a
        number (module-level, for the search to pickle).
    simpler : {"lower", "higher"}, default="lower"
        Whether a lower (e.g. a polynomial degree) or a higher (e.g. a ridge
        ``alpha``) value of ``complexity`` is the simpler model.
    n_std : float, default=1.0
        Width of the band below the best score, in standard errors. ``0``
        refits the best candidate (the simplest of any tie).
    se : {"label_noise", "folds"}, default="label_noise"
        The standard error of the best candidate's mean score over its K
        folds: ``"label_noise"``, from the label-noise variances the scorer
        records per fold; ``"folds"``, the spread of the K fold scores (it
        also serves a plain scikit-learn scorer, with ``score="score"``).
    score : str, default="expected"
        The key of the score in ``cv_results_`` (``mean_test_<score>``).
    variance : str, default="variance"
        The key of the per-fold label-noise variance
        (``split<k>_test_<variance>``), for ``se="label_noise"``.

    Returns
    -------
    refit : callable
        ``refit(cv_results) -> int``, picklable; ``refit.select(cv_results)``
        returns the rule's steps as a dict.

    See Also
    --------
    compare_estimators : The paired difference of two models' scores.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import Ridge
    >>> from sklearn.model_selection import GridSearchCV
    >>> from sklearn_noisy.metrics import make_noisy_scorer
    >>> from sklearn_noisy.model_selection import refit_within_noise
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(80, 5))
    >>> y = X @ [1.0, 0.5, 0.2, 0.1, 0.0] + rng.normal(scale=1.0, size=80)
    >>> scorer = make_noisy_scorer("mean_squared_error", sigma=1.0, output="all")
    >>> refit = refit_within_noise(complexity="alpha", simpler="higher")
    >>> grid = {"alpha": [0.1, 1.0, 10.0, 30.0, 100.0]}
    >>> search = GridSearchCV(Ridge(), grid, cv=5, scoring=scorer, refit=refit)
    >>> search = search.fit(X, y)
    >>> search.cv_results_["mean_test_expected"].round(3)  # minus the truth MSE
    array([-0.141, -0.14 , -0.156, -0.272, -0.629])
    >>> steps = refit.select(search.cv_results_)
    >>> steps["best_index"], round(steps["se"], 3), round(steps["threshold"], 3)
    (1, 0.196, -0.335)
    >>> search.best_params_
    {'alpha': 30.0}
    """
    _check_options(complexity, simpler, n_std, se, score, variance)
    return _RefitWithinNoise(complexity, simpler, float(n_std), se, score, variance)
