"""Cross-validation reporting each metric's expectation and variance under label noise.

:class:`NoisyCrossValidator` runs one fit per split exactly as
:func:`sklearn.model_selection.cross_validate` does (same splitter, same
:class:`joblib.Parallel` dispatch, so ``joblib.parallel_config(backend="dask")``
sends the folds to a dask cluster), scores every fold with the noise-aware
scorers of :mod:`sklearn_noisy.metrics`, and pools the out-of-fold predictions
(FORMULAS.md §10).
"""

from __future__ import annotations

import json
import math
import numbers
import time
import warnings
from collections import Counter
from collections.abc import Iterable, Mapping
from traceback import format_exc
from typing import Any

import numpy as np
from joblib import Parallel, delayed
from scipy.special import ndtri
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone, is_classifier
from sklearn.exceptions import FitFailedWarning
from sklearn.model_selection import check_cv
from sklearn.utils import _safe_indexing
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import _check_method_params, _num_samples, check_is_fitted

from .._noisy_score import NoisyScore
from ..utils._validation import (
    as_float_array,
    check_flip_probability,
    check_sigma,
    check_transition_matrix,
)

__all__ = ["NoisyCrossValidator"]

#: Metrics reported by ``scoring="default"`` for regressors.
DEFAULT_REGRESSION_METRICS = (
    "mean_squared_error",
    "root_mean_squared_error",
    "mean_absolute_error",
    "r2",
)

#: Metrics whose value is a mean of per-sample terms: pooling the folds gives the
#: metric of the concatenated predictions with the variances simply added.
ADDITIVE_METRICS = frozenset(
    {
        "mean_squared_error",
        "mean_absolute_error",
        "accuracy",
        "brier_score_loss",
        "log_loss",
    }
)

#: Additive metrics pooled from the fold results rather than recomputed: the
#: regression losses, whose per-sample moments do not depend on the other
#: samples. (Classification metrics are recomputed on the concatenation, where
#: the set of labels is that of all folds.)
_POOL_FROM_FOLDS = frozenset({"mean_squared_error", "mean_absolute_error"})


def _pool_additive(scores: list[NoisyScore]) -> NoisyScore:
    """Pool per-sample-additive fold scores over disjoint test sets (§10).

    With ``w_k = M_k / M``: ``E = Σ w_k E_k``, ``Var = Σ w_k² V_k`` and the
    nominal ``Σ w_k m_k``, which are exactly the metric of the concatenated
    predictions and its variance, without a second pass over the data.
    """
    n = np.array([s.n_samples for s in scores], dtype=float)
    total = float(n.sum())
    w = n / total
    methods = {s.method for s in scores}
    return NoisyScore(
        scores[0].metric,
        expected=float(w @ [s.expected for s in scores]),
        variance=float((w * w) @ [s.variance for s in scores]),
        nominal=float(w @ [s.nominal for s in scores]),
        n_samples=int(total),
        method=methods.pop() if len(methods) == 1 else "delta",
    )


def default_metrics(estimator: Any, y: Any) -> list[str]:
    """The metrics that ``scoring="default"`` reports for ``estimator`` on ``y``.

    Regressors: MSE, RMSE, MAE and R². Classifiers: accuracy; for binary
    targets also balanced accuracy and F1 (of the positive class, the larger
    label), which are exact there; log-loss when the estimator has
    ``predict_proba``. (Multiclass balanced accuracy and F1 are only available
    by Monte Carlo, so they are left to an explicit ``scoring``.)
    """
    if not is_classifier(estimator):
        return list(DEFAULT_REGRESSION_METRICS)
    metrics = ["accuracy"]
    if type_of_target(y) == "binary":
        metrics += ["balanced_accuracy", "f1"]
    if hasattr(estimator, "predict_proba"):
        metrics.append("log_loss")
    return metrics


def default_scoring(metrics: list[str], y: Any) -> list[Any]:
    """Default metric names as scoring entries for the target ``y``.

    F1 is scored for the larger of the two labels, as the default ``pos_label=1``
    only fits 0/1 (or -1/1, True/False) labels; the other names pass through.
    """
    from ..metrics._scorer import make_noisy_scorer

    scoring: list[Any] = []
    for name in metrics:
        if name == "f1":
            classes = np.unique(np.asarray(y))
            if classes.size == 2 and not any(c == 1 for c in classes.tolist()):
                scoring.append(make_noisy_scorer("f1", pos_label=classes[-1]))
                continue
        scoring.append(name)
    return scoring


def _is_noisy_scorer(value: Any) -> bool:
    return hasattr(value, "score_predictions") and hasattr(value, "metric")


def check_noisy_scoring(scoring: Any, estimator: Any, y: Any) -> dict[str, Any]:
    """Turn ``scoring`` into an ordered dict ``{result key: NoisyScorer}``.

    Accepts ``"default"``, a metric name (``"mean_squared_error"``), a named
    scorer (``"neg_expected_mean_squared_error"``), a NoisyScorer, a list of
    these, or a dict ``{key: name or NoisyScorer}``. Results are keyed by the
    scorer's canonical metric name unless a dict gives the keys.
    """
    from ..metrics._scorer import (
        get_noisy_scorer,
        get_noisy_scorer_names,
        make_noisy_scorer,
    )

    def build(item: Any) -> Any:
        if _is_noisy_scorer(item):
            return item
        if isinstance(item, str):
            if item in get_noisy_scorer_names():
                return get_noisy_scorer(item)
            return make_noisy_scorer(item)
        raise TypeError(
            "scoring entries must be metric names (e.g. 'mean_squared_error') or "
            f"NoisyScorer objects from make_noisy_scorer; got {item!r}."
        )

    if isinstance(scoring, str) and scoring == "default":
        scoring = default_scoring(default_metrics(estimator, y), y)
    if isinstance(scoring, Mapping):
        if not scoring:
            raise ValueError("scoring must not be an empty dict.")
        scorers = {}
        for key, item in scoring.items():
            if not isinstance(key, str):
                raise TypeError(f"scoring dict keys must be strings; got {key!r}.")
            scorers[key] = build(item)
        return scorers
    if isinstance(scoring, str) or _is_noisy_scorer(scoring):
        scoring = [scoring]
    if not isinstance(scoring, (list, tuple)) or not scoring:
        raise TypeError(
            "scoring must be 'default', a metric name, a NoisyScorer, a non-empty "
            f"list of them or a dict {{name: scorer}}; got {scoring!r}."
        )
    scorers = {}
    for item in scoring:
        scorer = build(item)
        key = scorer.metric
        if key in scorers:
            raise ValueError(
                f"scoring lists the metric {key!r} twice; pass a dict "
                "{name: scorer} to give each scorer its own name."
            )
        scorers[key] = scorer
    return scorers


def _check_noise(
    sigma: Any, q: Any, transition_matrix: Any, y: Any, n_samples: int
) -> tuple[Any, Any, Any]:
    """Validate the label noise once, before any fold is fitted."""
    if sigma is not None and (q is not None or transition_matrix is not None):
        raise TypeError(
            "Pass sigma (regression: Gaussian label errors) or q / "
            "transition_matrix (classification: label flips), not both."
        )
    if q is not None and transition_matrix is not None:
        raise TypeError("Pass either q or transition_matrix, not both.")
    if sigma is not None:
        y_shape = np.shape(y)
        shape = (n_samples,) if len(y_shape) < 2 else (n_samples, y_shape[1])
        sigma = check_sigma(sigma, shape)
    if q is not None:
        q = check_flip_probability(q, n_samples)
    if transition_matrix is not None:
        matrix = as_float_array(transition_matrix, name="transition_matrix")
        n_classes = matrix.shape[0] if matrix.ndim == 2 else -1
        transition_matrix = check_transition_matrix(matrix, n_classes)
    return sigma, q, transition_matrix


def _take(values: Any, indices: np.ndarray) -> Any:
    """Rows ``indices`` of a per-sample noise array; scalars and None pass through."""
    if isinstance(values, np.ndarray) and values.ndim > 0:
        return values[indices]
    return values


def _noise_kwargs(scorer: Any, sigma: Any, q: Any, transition_matrix: Any) -> dict:
    """The noise keywords a scorer takes: ``sigma`` or ``q`` / ``transition_matrix``."""
    if getattr(scorer, "requires_noise", None) == "sigma":
        return {"sigma": sigma}
    if getattr(scorer, "requires_noise", None) == "q":
        return {"q": q, "transition_matrix": transition_matrix}
    return {"sigma": sigma, "q": q, "transition_matrix": transition_matrix}


def _classes_kwarg(method: str, classes: np.ndarray | None) -> dict:
    """``classes=`` for a probability response: its columns follow ``classes``."""
    if classes is not None and method == "predict_proba":
        return {"classes": classes}
    return {}


def _response_method_name(estimator: Any, response_method: Any) -> str:
    """The method of ``estimator`` that gives the response a scorer needs."""
    methods = [response_method] if isinstance(response_method, str) else response_method
    for method in methods:
        if hasattr(estimator, method):
            return method
    raise AttributeError(
        f"{type(estimator).__name__} has none of the response methods {methods} "
        "that the scorer needs."
    )


def _get_response(
    estimator: Any, method: str, X: Any, classes: np.ndarray | None
) -> np.ndarray:
    """Response of a fitted estimator, with class columns aligned to ``classes``."""
    response = np.asarray(getattr(estimator, method)(X))
    if (
        classes is not None
        and method == "predict_proba"
        and response.ndim == 2
        and hasattr(estimator, "classes_")
        and response.shape[1] != classes.shape[0]
    ):
        # A class absent from this training fold: give it probability 0, as
        # cross_val_predict does, so that folds can be concatenated.
        full = np.zeros((response.shape[0], classes.shape[0]), dtype=response.dtype)
        full[:, np.searchsorted(classes, estimator.classes_)] = response
        response = full
    return response


def _fit_and_score_fold(
    estimator: Any,
    X: Any,
    y: Any,
    train: np.ndarray,
    test: np.ndarray,
    *,
    scorers: dict[str, Any],
    sigma: Any,
    q: Any,
    transition_matrix: Any,
    classes: np.ndarray | None,
    fit_params: dict,
    error_score: Any,
    return_estimator: bool,
    verbose: int,
    split_progress: tuple[int, int],
) -> dict[str, Any]:
    """Fit on one training set, predict and score its test set (one joblib task)."""
    fit_params = _check_method_params(X, params=fit_params, indices=train)
    X_train, y_train = _safe_indexing(X, train), _safe_indexing(y, train)
    X_test, y_test = _safe_indexing(X, test), _safe_indexing(y, test)
    result: dict[str, Any] = {
        "fit_error": None,
        "score_errors": {},
        "n_test": int(test.shape[0]),
        "test": test,
        "responses": {},
        "scores": dict.fromkeys(scorers),
    }
    start = time.perf_counter()
    try:
        estimator.fit(X_train, y_train, **fit_params)
    except Exception:
        if error_score == "raise":
            raise
        result["fit_error"] = format_exc()
        fit_time = time.perf_counter() - start
        score_time = 0.0
    else:
        fit_time = time.perf_counter() - start
        sigma_test, q_test = _take(sigma, test), _take(q, test)
        for key, scorer in scorers.items():
            try:
                method = _response_method_name(estimator, scorer.response_method)
                if method not in result["responses"]:
                    result["responses"][method] = _get_response(
                        estimator, method, X_test, classes
                    )
                result["scores"][key] = scorer.score_predictions(
                    y_test,
                    result["responses"][method],
                    X=X_test,
                    **_noise_kwargs(scorer, sigma_test, q_test, transition_matrix),
                    **_classes_kwarg(method, classes),
                )
            except Exception:
                if error_score == "raise":
                    raise
                result["score_errors"][key] = format_exc()
        if "predict" not in result["responses"] and hasattr(estimator, "predict"):
            result["responses"]["predict"] = np.asarray(estimator.predict(X_test))
        score_time = time.perf_counter() - start - fit_time
    result["fit_time"] = fit_time
    result["score_time"] = score_time
    if return_estimator:
        result["estimator"] = estimator
    if verbose > 0:
        print(_end_message(result, split_progress), flush=True)
    return result


def _end_message(result: dict, split_progress: tuple[int, int]) -> str:
    """One progress line per finished fold, like scikit-learn's ``[CV] END``."""
    head = f"[CV {split_progress[0] + 1}/{split_progress[1]}] END"
    if result["fit_error"] is not None:
        body = " fit failed;"
    else:
        parts = []
        for key, score in result["scores"].items():
            if score is None:
                parts.append(f" {key}: failed")
            else:
                parts.append(f" {key}: {score.expected:.4g}±{_std(score.variance):.2g}")
        body = ";".join(parts) + ";"
    total = result["fit_time"] + result["score_time"]
    return f"{head}{body} n_test={result['n_test']}, total time={total:.3g}s"


def _std(variance: float) -> float:
    return math.sqrt(variance) if variance >= 0 else math.nan


def _z_value(confidence_level: float) -> float:
    return float(ndtri(0.5 + confidence_level / 2.0))


def _json_number(value: Any) -> Any:
    """A float for JSON: NaN and infinities become None (strict JSON has neither)."""
    value = float(value)
    return value if math.isfinite(value) else None


def _raise_or_warn_fit_failures(results: list[dict], error_score: Any) -> None:
    """As scikit-learn: a warning when some fits failed, an error when all did."""
    fit_errors = [r["fit_error"] for r in results if r["fit_error"] is not None]
    if not fit_errors:
        return
    delimiter = "-" * 80 + "\n"
    details = "\n".join(
        f"{delimiter}{n} fits failed with the following error:\n{error}"
        for error, n in Counter(fit_errors).items()
    )
    if len(fit_errors) == len(results):
        raise ValueError(
            f"\nAll the {len(results)} fits failed.\nIt is very likely that your "
            "model is misconfigured.\nYou can try to debug the error by setting "
            f"error_score='raise'.\n\nBelow are more details about the failures:\n"
            f"{details}"
        )
    warnings.warn(
        f"\n{len(fit_errors)} fits failed out of a total of {len(results)}.\nThe "
        f"scores on these train-test partitions will be set to {error_score}.\nIf "
        "these failures are not expected, you can try to debug them by setting "
        f"error_score='raise'.\n\nBelow are more details about the failures:\n"
        f"{details}",
        FitFailedWarning,
        stacklevel=3,
    )


def _raise_or_warn_score_failures(results: list[dict], keys: Iterable[str]) -> None:
    """Warn for a metric that failed on some folds; raise if it failed on all."""
    fitted = [r for r in results if r["fit_error"] is None]
    for key in keys:
        errors = [r["score_errors"][key] for r in fitted if key in r["score_errors"]]
        if not errors:
            continue
        if len(errors) == len(fitted):
            raise ValueError(
                f"Scoring {key!r} failed on every fold. The first error was:\n"
                f"{errors[0]}"
            )
        warnings.warn(
            f"Scoring {key!r} failed on {len(errors)} of {len(fitted)} folds; its "
            f"scores there are set to error_score. The first error was:\n{errors[0]}",
            UserWarning,
            stacklevel=3,
        )


def _estimator_has(attribute: str):
    def check(self: NoisyCrossValidator) -> bool:
        if hasattr(self, "estimator_"):
            return hasattr(self.estimator_, attribute)
        return hasattr(self.estimator, attribute)

    return check


class NoisyCrossValidator(MetaEstimatorMixin, BaseEstimator):
    """Cross-validate an estimator and report metrics under known label noise.

    For each fold and each metric the result holds the *expected* value of the
    metric over the measurement error of the test labels, its *variance* over
    that error and the *nominal* value (the classical metric on the labels as
    given). The out-of-fold predictions are then pooled into one
    :class:`~sklearn_noisy.NoisyScore` per metric. Regression labels carry
    Gaussian errors ``sigma``; classification labels flip with probability
    ``q`` or follow a ``transition_matrix``. ``fit`` takes the noise as
    per-sample arrays and slices them per fold itself.

    Three kinds of uncertainty are reported separately; do not mix them up:

    - **label noise** (``variance`` of each fold, and of the pooled score): how
      much the metric moves if the labels were measured again, for fixed
      predictions;
    - **between-fold variability** (``fold_summary_``): how much the fold
      metrics differ from one split to the next. Its excess over the label
      noise, ``max(s_b² − mean V_k, 0)``, is a moment estimate of the part due
      to the split and the refitted model. It is **not** a standard error of
      the cross-validation estimate: the folds share training data, so
      ``s_b / sqrt(K)`` understates that uncertainty, and no unbiased
      estimator of it exists (Bengio & Grandvalet, 2004);
    - **test-set sampling** (for accuracy, roughly
      ``e ± z sqrt(e (1 − e) / n)``), which none of the numbers here includes.

    Folds run through :class:`joblib.Parallel` exactly as in
    :func:`sklearn.model_selection.cross_validate`, and each job fits, predicts
    and scores its fold. Inside ``with joblib.parallel_config(backend="dask"):``
    the folds therefore run on a ``dask.distributed`` cluster: this is the way
    to go past one machine.

    Parameters
    ----------
    estimator : estimator object
        The estimator to cross-validate; it is cloned for every fold.

    scoring : "default", str, NoisyScorer, list or dict, default="default"
        Metric names as accepted by
        :func:`~sklearn_noisy.metrics.make_noisy_scorer`
        (``"mean_squared_error"``, ``"accuracy"``, ...), named scorers
        (``"neg_expected_mean_squared_error"``), NoisyScorers, a list of these,
        or a dict ``{name: metric name or NoisyScorer}``. ``"default"`` picks
        MSE, RMSE, MAE and R² for regressors; accuracy, balanced accuracy, F1
        (binary targets) and log-loss (with ``predict_proba``) for
        classifiers. Results are keyed by metric name and given in the metric's
        own units and sign: losses such as MSE are positive.

    cv : int, cross-validation generator or iterable, default=5
        As in scikit-learn: an int gives ``StratifiedKFold`` for classifiers and
        ``KFold`` otherwise (see :func:`sklearn.model_selection.check_cv`).
        Pooling needs test sets that do not overlap; with overlapping test
        sets (``ShuffleSplit``) only the per-fold results are reported.

    n_jobs : int, default=None
        Number of folds fitted in parallel by :class:`joblib.Parallel`.
        ``None`` means 1 unless in a :func:`joblib.parallel_config` context.

    verbose : int, default=0
        With ``verbose > 0`` a line is printed for every fold as it finishes
        (the line is printed by the worker, as in scikit-learn); it is also
        passed to :class:`joblib.Parallel`.

    confidence_level : float, default=0.95
        Level of the label-noise intervals in :meth:`summary`, ``str`` and the
        plots.

    return_estimator : bool, default=False
        Keep the estimator fitted on each fold in ``estimators_``.

    refit : bool, default=False
        Refit a clone of ``estimator`` on all the data after cross-validation
        (``estimator_``); :meth:`predict` and :meth:`predict_proba` then
        delegate to it.

    error_score : "raise" or float, default=np.nan
        Score given to a fold whose fit fails (expected and nominal values; the
        variance is NaN), with a :class:`~sklearn.exceptions.FitFailedWarning`.
        ``"raise"`` re-raises the error. If every fit fails a ``ValueError`` is
        raised, as in scikit-learn.

    Attributes
    ----------
    cv_results_ : dict of ndarray
        ``fit_time``, ``score_time``, ``n_test`` and, for every metric ``m``,
        ``m_expected``, ``m_variance`` and ``m_nominal``, one entry per fold.

    fold_scores_ : dict of list of NoisyScore
        The per-fold results as :class:`~sklearn_noisy.NoisyScore` objects
        (``None`` where a fold failed).

    pooled_ : dict of NoisyScore
        One score per metric over all out-of-fold predictions (FORMULAS.md
        §10). For the per-sample-additive metrics (MSE, MAE, accuracy, Brier
        score, log-loss) it is exactly the test-size-weighted mean of the fold
        metrics, and its variance is the sum of the per-sample variances over
        all test samples divided by ``M²``. For the others (RMSE, R², F1,
        recall, balanced accuracy, MCC, ...) it is the metric of the
        concatenated out-of-fold predictions, which is a different estimand
        from the mean of the fold metrics. Empty when the test sets overlap.

    fold_summary_ : dict of dict
        Per metric: ``mean_expected`` and ``mean_nominal`` (unweighted means
        over the folds), ``between_fold_sd`` (``s_b``, the sample standard
        deviation of the nominal fold metrics), ``mean_label_noise_variance``
        (mean of the fold variances ``V_k``, the part of ``s_b²`` that label
        noise alone explains), ``excess_variance`` (``max(s_b² − mean V_k,
        0)``) and ``excess_sd``. See the caveat above: none of these is a
        standard error of cross-validation.

    oof_predictions_ : ndarray
        Output of ``predict`` for every tested sample, in the order of
        ``oof_indices_`` (all samples in their original order when the test
        sets partition the data, as in
        :func:`~sklearn.model_selection.cross_val_predict`).

    oof_responses_ : dict of ndarray
        Out-of-fold output of every response method the scorers used (for
        example ``"predict_proba"``), aligned with ``oof_indices_``.

    oof_indices_ : ndarray
        Sorted indices of the samples that were in a test set.

    test_indices_ : list of ndarray
        The test indices of every fold.

    scorers_ : dict
        The NoisyScorers used, by result key.

    n_splits_ : int
        Number of folds.

    estimators_ : list of estimator
        The fold estimators; only with ``return_estimator=True``.

    estimator_ : estimator
        The estimator refitted on all data; only with ``refit=True``.

    See Also
    --------
    sklearn.model_selection.cross_validate : The noise-free equivalent.
    compare_estimators : Paired comparison of several estimators on the same folds.
    NoisyCVDisplay : Plot of the per-fold and pooled results.

    Notes
    -----
    Sample weights passed to ``fit`` are used to fit each fold; the metrics
    themselves are unweighted. The noise source of a NoisyScorer created with
    a constant, a column name or a callable takes precedence over no keyword:
    ``fit`` passes ``sigma`` / ``q`` only when given.

    To run the folds on a ``dask.distributed`` cluster (the ``distributed``
    extra), connect a client and select joblib's dask backend; the numbers are
    the same as with ``n_jobs=1``::

        import joblib
        from dask.distributed import Client

        client = Client("tcp://scheduler-address:8786")  # or Client(LocalCluster())
        with joblib.parallel_config(backend="dask"):
            cv = NoisyCrossValidator(model, n_jobs=-1).fit(X, y, sigma=sigma)

    Each fold job receives ``X`` and ``y`` (joblib's dask backend scatters
    large arrays to the workers automatically; ``parallel_config(backend=
    "dask", scatter=[X, y])`` broadcasts them up front) and returns only its
    predictions and scores.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LinearRegression
    >>> from sklearn_noisy.model_selection import NoisyCrossValidator
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(100, 3))
    >>> sigma = np.full(100, 0.5)
    >>> y = X @ [1.0, 2.0, -1.0] + rng.normal(scale=sigma)
    >>> cv = NoisyCrossValidator(LinearRegression(), scoring=["mean_squared_error"])
    >>> cv = cv.fit(X, y, sigma=sigma)
    >>> cv.cv_results_["mean_squared_error_expected"].shape
    (5,)
    >>> pooled = cv.pooled_["mean_squared_error"]
    >>> pooled.n_samples, round(pooled.expected - pooled.nominal, 6)
    (100, 0.25)
    """

    def __init__(
        self,
        estimator: Any,
        *,
        scoring: Any = "default",
        cv: Any = 5,
        n_jobs: int | None = None,
        verbose: int = 0,
        confidence_level: float = 0.95,
        return_estimator: bool = False,
        refit: bool = False,
        error_score: Any = np.nan,
    ) -> None:
        self.estimator = estimator
        self.scoring = scoring
        self.cv = cv
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.confidence_level = confidence_level
        self.return_estimator = return_estimator
        self.refit = refit
        self.error_score = error_score

    # ------------------------------------------------------------------ fit
    def _check_params(self) -> None:
        if not hasattr(self.estimator, "fit"):
            raise TypeError(
                f"estimator must have a fit method; got {self.estimator!r}."
            )
        level = self.confidence_level
        if (
            not isinstance(level, numbers.Real)
            or isinstance(level, bool)
            or not 0.0 < level < 1.0
        ):
            raise ValueError(
                "confidence_level must be a number in the open interval (0, 1); "
                f"got {level!r}."
            )
        if not (
            isinstance(self.error_score, numbers.Number) or self.error_score == "raise"
        ):
            raise ValueError(
                "error_score must be the string 'raise' or a number; got "
                f"{self.error_score!r}."
            )
        if not isinstance(self.verbose, numbers.Integral) or self.verbose < 0:
            raise ValueError(
                f"verbose must be a non-negative integer; got {self.verbose!r}."
            )

    def fit(
        self,
        X: Any,
        y: Any,
        *,
        sigma: Any = None,
        q: Any = None,
        transition_matrix: Any = None,
        groups: Any = None,
        **fit_params: Any,
    ) -> NoisyCrossValidator:
        """Cross-validate ``estimator`` and score every fold under the label noise.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Input data. A DataFrame is indexed per fold as is, so a scorer can
            read its noise from one of its columns.

        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            Best-known labels: measured values (regression) or classes.

        sigma : float or array-like of shape (n_samples,), default=None
            Standard error of each regression label (0 means exact).

        q : float or array-like of shape (n_samples,), default=None
            Flip probability of each class label.

        transition_matrix : array-like of shape (n_classes, n_classes), default=None
            Row-stochastic label transition matrix, rows and columns in sorted
            label order.

        groups : array-like of shape (n_samples,), default=None
            Group labels for group splitters such as ``GroupKFold``.

        **fit_params : dict
            Passed to the estimator's ``fit``; per-sample arrays (such as
            ``sample_weight``) are sliced to each training set.

        Returns
        -------
        self : NoisyCrossValidator
            The fitted object.
        """
        splits, classifier = self._prepare(X, y, groups)
        return self._fit_splits(
            X,
            y,
            splits,
            classifier=classifier,
            sigma=sigma,
            q=q,
            transition_matrix=transition_matrix,
            fit_params=fit_params,
        )

    def _prepare(self, X: Any, y: Any, groups: Any) -> tuple[list, bool]:
        self._check_params()
        classifier = is_classifier(self.estimator)
        cv = check_cv(self.cv, y, classifier=classifier)
        return list(cv.split(X, y, groups)), classifier

    def _fit_splits(
        self,
        X: Any,
        y: Any,
        splits: list,
        *,
        classifier: bool,
        sigma: Any,
        q: Any,
        transition_matrix: Any,
        fit_params: dict,
    ) -> NoisyCrossValidator:
        self._check_params()
        n_samples = _num_samples(X)
        if _num_samples(y) != n_samples:
            raise ValueError(
                f"X and y must have the same number of samples; got {n_samples} "
                f"and {_num_samples(y)}."
            )
        sigma, q, transition_matrix = _check_noise(
            sigma, q, transition_matrix, y, n_samples
        )
        scorers = check_noisy_scoring(self.scoring, self.estimator, y)
        for key, scorer in scorers.items():
            takes = getattr(scorer, "requires_noise", None)
            if takes == "sigma" and (q is not None or transition_matrix is not None):
                raise TypeError(
                    f"The {key!r} metric is a regression metric (noise sigma), but "
                    "q / transition_matrix was given: pass sigma."
                )
            if takes == "q" and sigma is not None:
                raise TypeError(
                    f"The {key!r} metric is a classification metric (noise q or "
                    "transition_matrix), but sigma was given: pass q or "
                    "transition_matrix."
                )
        classes = np.unique(np.asarray(y)) if classifier else None
        self._classes = classes

        splits = [(np.asarray(train), np.asarray(test)) for train, test in splits]
        parallel = Parallel(
            n_jobs=self.n_jobs, verbose=self.verbose, pre_dispatch="2*n_jobs"
        )
        results = parallel(
            delayed(_fit_and_score_fold)(
                clone(self.estimator),
                X,
                y,
                train,
                test,
                scorers=scorers,
                sigma=sigma,
                q=q,
                transition_matrix=transition_matrix,
                classes=classes,
                fit_params=fit_params,
                error_score=self.error_score,
                return_estimator=self.return_estimator,
                verbose=self.verbose,
                split_progress=(k, len(splits)),
            )
            for k, (train, test) in enumerate(splits)
        )
        _raise_or_warn_fit_failures(results, self.error_score)
        _raise_or_warn_score_failures(results, scorers)

        self.scorers_ = scorers
        self.n_splits_ = len(splits)
        self.n_samples_ = n_samples
        self.test_indices_ = [test for _, test in splits]
        self.noise_ = (
            "sigma"
            if sigma is not None
            else "q"
            if q is not None
            else "transition_matrix"
            if transition_matrix is not None
            else None
        )
        self._store_fold_results(results)
        self._pool(results, X, y, sigma, q, transition_matrix)
        if self.return_estimator:
            self.estimators_ = [r["estimator"] for r in results]
        if self.refit:
            self.estimator_ = clone(self.estimator).fit(X, y, **fit_params)
        return self

    def _store_fold_results(self, results: list[dict]) -> None:
        error = self.error_score if self.error_score != "raise" else np.nan
        cv_results: dict[str, np.ndarray] = {
            "fit_time": np.array([r["fit_time"] for r in results]),
            "score_time": np.array([r["score_time"] for r in results]),
            "n_test": np.array([r["n_test"] for r in results]),
        }
        fold_scores: dict[str, list] = {}
        for key in self.scorers_:
            scores = [r["scores"][key] for r in results]
            fold_scores[key] = scores
            cv_results[f"{key}_expected"] = np.array(
                [error if s is None else s.expected for s in scores], dtype=float
            )
            cv_results[f"{key}_variance"] = np.array(
                [np.nan if s is None else s.variance for s in scores], dtype=float
            )
            cv_results[f"{key}_nominal"] = np.array(
                [error if s is None else s.nominal for s in scores], dtype=float
            )
        self.cv_results_ = cv_results
        self.fold_scores_ = fold_scores
        self.fold_summary_ = {
            key: _fold_summary(cv_results, key) for key in self.scorers_
        }

    def _pool(
        self,
        results: list[dict],
        X: Any,
        y: Any,
        sigma: Any,
        q: Any,
        transition_matrix: Any,
    ) -> None:
        fitted = [r for r in results if r["fit_error"] is None]
        indices = np.concatenate([r["test"] for r in fitted])
        order = np.argsort(indices, kind="stable")
        indices = indices[order]
        overlap = indices.shape[0] > 1 and bool(np.any(indices[1:] == indices[:-1]))
        self.pooled_ = {}
        if overlap:
            warnings.warn(
                "The test sets of the cross-validation overlap (e.g. ShuffleSplit "
                "or repeated splits), so the out-of-fold predictions cannot be "
                "pooled: pooled_ is empty and oof_predictions_ is None. Use a "
                "splitter whose test sets are disjoint (KFold, StratifiedKFold, "
                "GroupKFold, ...) to get pooled scores.",
                UserWarning,
                stacklevel=3,
            )
            self.oof_indices_ = None
            self.oof_responses_ = {}
            self.oof_predictions_ = None
            return
        methods = set(fitted[0]["responses"]).intersection(
            *(r["responses"] for r in fitted[1:])
        )
        responses = {
            method: np.concatenate([r["responses"][method] for r in fitted])[order]
            for method in methods
        }
        self.oof_indices_ = indices
        self.oof_responses_ = responses
        self.oof_predictions_ = responses.get("predict")
        if indices.shape[0] == self.n_samples_:  # a partition: no copy of X or y
            X_oof, y_oof = X, y
        else:
            X_oof, y_oof = _safe_indexing(X, indices), _safe_indexing(y, indices)
        sigma_oof, q_oof = _take(sigma, indices), _take(q, indices)
        for key, scorer in self.scorers_.items():
            if any(r["scores"][key] is None for r in fitted):
                continue  # the metric failed on some fold: nothing to pool
            if scorer.metric in _POOL_FROM_FOLDS and not getattr(
                scorer, "metric_kwargs", None
            ):
                self.pooled_[key] = _pool_additive([r["scores"][key] for r in fitted])
                continue
            method = _pooled_method(scorer, responses)
            self.pooled_[key] = scorer.score_predictions(
                y_oof,
                responses[method],
                X=X_oof,
                **_noise_kwargs(scorer, sigma_oof, q_oof, transition_matrix),
                **_classes_kwarg(method, self._classes),
            )

    # ------------------------------------------------------------- results
    def _z(self) -> float:
        return _z_value(self.confidence_level)

    def summary(self) -> Any:
        """Per-fold and pooled results as a table, one row per fold and metric.

        Returns
        -------
        table : pandas.DataFrame or list of dict
            Columns ``metric``, ``fold`` (an int, or ``"pooled"``), ``n_test``,
            ``expected``, ``std`` (label noise), ``ci_low``, ``ci_high`` (the
            label-noise interval at ``confidence_level``), ``nominal`` and
            ``method``. A DataFrame when pandas is installed, else a list of
            dicts.
        """
        check_is_fitted(self, "cv_results_")
        z = self._z()
        rows = []
        for key in self.scorers_:
            for k, score in enumerate(self.fold_scores_[key]):
                expected = self.cv_results_[f"{key}_expected"][k]
                std = _std(self.cv_results_[f"{key}_variance"][k])
                rows.append(
                    {
                        "metric": key,
                        "fold": k,
                        "n_test": int(self.cv_results_["n_test"][k]),
                        "expected": float(expected),
                        "std": std,
                        "ci_low": float(expected - z * std),
                        "ci_high": float(expected + z * std),
                        "nominal": float(self.cv_results_[f"{key}_nominal"][k]),
                        "method": None if score is None else score.method,
                    }
                )
            pooled = self.pooled_.get(key)
            if pooled is not None:
                low, high = pooled.confidence_interval(self.confidence_level)
                rows.append(
                    {
                        "metric": key,
                        "fold": "pooled",
                        "n_test": pooled.n_samples,
                        "expected": pooled.expected,
                        "std": pooled.std,
                        "ci_low": low,
                        "ci_high": high,
                        "nominal": pooled.nominal,
                        "method": pooled.method,
                    }
                )
        try:
            import pandas as pd
        except ImportError:
            return rows
        return pd.DataFrame(rows)

    def to_dict(self) -> dict[str, Any]:
        """All results as a JSON-serialisable dict (``json.dumps`` works on it).

        NaN and infinite numbers (a failed fold, an infinite variance) are
        written as ``None``, so ``json.dumps(..., allow_nan=False)`` works.

        Returns
        -------
        results : dict
            Keys ``estimator`` (its repr), ``n_samples``, ``n_splits``,
            ``noise``, ``confidence_level``, ``metrics`` (name and direction),
            ``folds`` (per fold: ``n_test``, times and per metric ``expected``,
            ``variance``, ``std``, ``nominal``), ``pooled`` (per metric the
            :meth:`NoisyScore.to_dict` fields and the interval) and
            ``fold_summary``.
        """
        check_is_fitted(self, "cv_results_")
        folds = []
        for k in range(self.n_splits_):
            fold = {
                "fold": k,
                "n_test": int(self.cv_results_["n_test"][k]),
                "fit_time": float(self.cv_results_["fit_time"][k]),
                "score_time": float(self.cv_results_["score_time"][k]),
                "metrics": {},
            }
            for key in self.scorers_:
                variance = self.cv_results_[f"{key}_variance"][k]
                fold["metrics"][key] = {
                    "expected": _json_number(self.cv_results_[f"{key}_expected"][k]),
                    "variance": _json_number(variance),
                    "std": _json_number(_std(variance)),
                    "nominal": _json_number(self.cv_results_[f"{key}_nominal"][k]),
                }
            folds.append(fold)
        pooled = {}
        for key, score in self.pooled_.items():
            entry = {
                field: _json_number(value) if isinstance(value, float) else value
                for field, value in score.to_dict().items()
            }
            low, high = score.confidence_interval(self.confidence_level)
            entry["ci_low"], entry["ci_high"] = _json_number(low), _json_number(high)
            pooled[key] = entry
        summary = {
            key: {name: _json_number(value) for name, value in values.items()}
            for key, values in self.fold_summary_.items()
        }
        return {
            "estimator": repr(self.estimator),
            "n_samples": int(self.n_samples_),
            "n_splits": int(self.n_splits_),
            "noise": self.noise_,
            "confidence_level": float(self.confidence_level),
            "metrics": {
                key: {
                    "metric": scorer.metric,
                    "greater_is_better": bool(scorer.greater_is_better),
                }
                for key, scorer in self.scorers_.items()
            },
            "folds": folds,
            "pooled": pooled,
            "fold_summary": summary,
        }

    def to_json(self, **kwargs: Any) -> str:
        """:meth:`to_dict` as a JSON string; ``kwargs`` go to :func:`json.dumps`."""
        return json.dumps(self.to_dict(), **kwargs)

    def __str__(self) -> str:
        if not hasattr(self, "cv_results_"):
            return repr(self)
        return _format_table(self)

    # ------------------------------------------------------- delegation
    @available_if(_estimator_has("predict"))
    def predict(self, X: Any) -> np.ndarray:
        """Predict with the estimator refitted on all data (needs ``refit=True``)."""
        self._check_refitted("predict")
        return self.estimator_.predict(X)

    @available_if(_estimator_has("predict_proba"))
    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities from the refitted estimator (needs ``refit=True``)."""
        self._check_refitted("predict_proba")
        return self.estimator_.predict_proba(X)

    def _check_refitted(self, method: str) -> None:
        check_is_fitted(self, "cv_results_")
        if not self.refit:
            raise AttributeError(
                f"This NoisyCrossValidator was created with refit=False; {method} "
                "is available only after refitting on all data: set refit=True."
            )

    @property
    def classes_(self) -> np.ndarray:
        """Class labels of the refitted estimator (``refit=True``, classifiers)."""
        self._check_refitted("classes_")
        return self.estimator_.classes_


def _pooled_method(scorer: Any, responses: dict[str, np.ndarray]) -> str:
    methods = (
        [scorer.response_method]
        if isinstance(scorer.response_method, str)
        else list(scorer.response_method)
    )
    for method in methods:
        if method in responses:
            return method
    raise ValueError(
        f"No out-of-fold {methods} responses were recorded for {scorer.metric!r}."
    )


def _fold_summary(cv_results: dict[str, np.ndarray], key: str) -> dict[str, float]:
    """Fold mean, between-fold SD and its excess over label noise (FORMULAS.md §10)."""
    expected = cv_results[f"{key}_expected"]
    nominal = cv_results[f"{key}_nominal"]
    variance = cv_results[f"{key}_variance"]
    ok = np.isfinite(expected) & np.isfinite(nominal) & ~np.isnan(variance)
    n_ok = int(ok.sum())
    nan = math.nan
    if n_ok == 0:
        return {
            "mean_expected": nan,
            "mean_nominal": nan,
            "between_fold_sd": nan,
            "mean_label_noise_variance": nan,
            "excess_variance": nan,
            "excess_sd": nan,
        }
    mean_noise = float(np.mean(variance[ok]))
    if n_ok > 1:
        s_b2 = float(np.var(nominal[ok], ddof=1))
        excess = max(s_b2 - mean_noise, 0.0)
        s_b, excess_sd = math.sqrt(s_b2), math.sqrt(excess)
    else:
        s_b = excess = excess_sd = nan
    return {
        "mean_expected": float(np.mean(expected[ok])),
        "mean_nominal": float(np.mean(nominal[ok])),
        "between_fold_sd": s_b,
        "mean_label_noise_variance": mean_noise,
        "excess_variance": excess,
        "excess_sd": excess_sd,
    }


def _fmt(value: float, width: int = 11) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "nan".rjust(width)
    return f"{value:{width}.5g}"


def _format_table(cv: NoisyCrossValidator) -> str:
    """Readable text report: one block per metric, folds then the pooled row."""
    level = cv.confidence_level
    z = cv._z()
    lines = [
        f"NoisyCrossValidator({cv.estimator!r})",
        f"{cv.n_splits_} folds, {cv.n_samples_} samples, label noise: "
        f"{cv.noise_ or 'from the scorers'}",
    ]
    ci_head = f"{level:.0%} CI (label noise)"
    header = (
        f"{'fold':>7} {'n_test':>7} {'expected':>11} {'std':>11} {ci_head:>25} "
        f"{'nominal':>11}"
    )
    for key, scorer in cv.scorers_.items():
        direction = "higher" if scorer.greater_is_better else "lower"
        lines.append("")
        lines.append(f"{key} ({direction} is better)")
        lines.append(header)
        for k in range(cv.n_splits_):
            expected = float(cv.cv_results_[f"{key}_expected"][k])
            std = _std(float(cv.cv_results_[f"{key}_variance"][k]))
            ci = f"[{expected - z * std:.5g}, {expected + z * std:.5g}]"
            lines.append(
                f"{k:>7} {int(cv.cv_results_['n_test'][k]):>7} {_fmt(expected)} "
                f"{_fmt(std)} {ci:>25} "
                f"{_fmt(float(cv.cv_results_[f'{key}_nominal'][k]))}"
            )
        pooled = cv.pooled_.get(key)
        if pooled is not None:
            low, high = pooled.confidence_interval(level)
            ci = f"[{low:.5g}, {high:.5g}]"
            lines.append(
                f"{'pooled':>7} {pooled.n_samples:>7} {_fmt(pooled.expected)} "
                f"{_fmt(pooled.std)} {ci:>25} {_fmt(pooled.nominal)}"
            )
        summary = cv.fold_summary_[key]
        lines.append(
            f"  between-fold SD {summary['between_fold_sd']:.4g}; label noise "
            f"alone explains SD {_std(summary['mean_label_noise_variance']):.4g}; "
            f"excess SD {summary['excess_sd']:.4g} (not a standard error of CV)"
        )
    return "\n".join(lines)
