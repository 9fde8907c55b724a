"""Cross-validation under label noise: :class:`NoisyCrossValidator`."""

from __future__ import annotations

import json
import numbers
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone, is_classifier
from sklearn.model_selection import check_cv
from sklearn.utils import indexable
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from ..metrics import label_reliability
from ..utils._noise import GaussianNoise
from ..utils._sklearn_compat import _num_samples
from ..utils._validation import (
    ESTIMAND_CHOICES,
    TEST_SET_SAMPLING,
    check_level,
    check_test_set_sampling,
)
from ._report import (
    _fold_summary,
    _format_table,
    _results_dict,
    _summary_table,
    results_html,
)
from ._scoring import check_noisy_scoring, check_scorers_noise
from ._validation import (
    _check_noise,
    _delegated_tags,
    _fold_tables,
    _noise_name,
    _out_of_fold,
    _scoring_target,
    _store_input_attributes,
    check_batches_in_folds,
    plan_estimands,
    pool_scores,
    run_folds,
)

__all__ = ["NoisyCrossValidator"]


def _model_or_measurements(
    y: Any, noise: Any, oof: Any, confidence_level: float
) -> dict[str, Any] | None:
    """The labels' reliability, and the nominal R² and correlation of the
    out-of-fold predictions: regression with ``sigma``, one output."""
    predictions = oof.responses.get("predict")
    if (
        not isinstance(noise, GaussianNoise)
        or predictions is None
        or np.ndim(y) != 1
        or np.ndim(predictions) != 1
    ):
        return None
    labels = np.asarray(y, dtype=np.float64)
    if oof.indices.shape[0] != labels.shape[0]:  # not a partition: the tested
        labels, noise = labels[oof.indices], noise.take(oof.indices)
    predictions = np.asarray(predictions, dtype=np.float64)
    try:
        reliability = label_reliability(
            labels,
            sigma=noise.sigma,
            sigma_dof=noise.sigma_dof,
            confidence_level=confidence_level,
        )
    except ValueError:  # fewer than 3 samples, or labels without spread
        return None
    centred, residual = labels - labels.mean(), labels - predictions
    with np.errstate(divide="ignore", invalid="ignore"):
        correlation = float(np.corrcoef(predictions, labels)[0, 1])
    return {
        "labels": reliability,
        "r2": 1.0 - float(residual @ residual) / float(centred @ centred),
        "correlation": correlation,
    }


def _estimator_has(attribute: str):
    def check(self: NoisyCrossValidator) -> bool:
        return hasattr(getattr(self, "estimator_", self.estimator), attribute)

    return check


class NoisyCrossValidator(MetaEstimatorMixin, BaseEstimator):
    """Cross-validate an estimator and report metrics under known label noise.

    Per fold and metric: the nominal value, the truth estimate and the forward
    value with their label-noise variances; the out-of-fold predictions pooled
    into one :class:`~sklearn_noisy.NoisyScore` per metric. Read more in the
    :ref:`User Guide <cross_validation>`.

    Parameters
    ----------
    estimator : estimator object
        The estimator to cross-validate; it is cloned for every fold.

    scoring : "default", str, NoisyScorer, list or dict, default="default"
        Metric names, named scorers, NoisyScorers, a list of these or a dict
        ``{name: scorer}``. ``"default"``: MSE, RMSE, MAE and R² for
        regressors; accuracy, balanced accuracy, F1 (binary) and log-loss
        (with ``predict_proba``) for classifiers.

    cv : int, cross-validation generator or iterable, default=5
        As in :func:`sklearn.model_selection.check_cv`. Pooling needs test sets
        that do not overlap.

    n_jobs : int, default=None
        Number of folds fitted in parallel by :class:`joblib.Parallel`.

    verbose : int, default=0
        With ``verbose > 0`` a line per finished fold; ``verbose - 1`` goes to
        :class:`joblib.Parallel`.

    confidence_level : float, default=0.95
        Level of the label-noise intervals in the reports and plots.

    return_estimator : bool, default=False
        Keep the estimator fitted on each fold in ``estimators_``.

    refit : bool, default=False
        Refit ``estimator`` on all the data (``estimator_``) for
        :meth:`predict` and :meth:`predict_proba`.

    error_score : "raise" or float, default=np.nan
        Score of a fold whose fit fails (with a ``FitFailedWarning``);
        ``"raise"`` re-raises the error.

    estimand : {"auto", "truth", "remeasurement", "forward"}, default="auto"
        The estimate that leads the reports, ``fold_scores_`` and ``pooled_``
        (:ref:`estimands`); ``"auto"``: truth where offered, else
        remeasurement, else forward.

    test_set_sampling : "auto", bool or "bootstrap", default="auto"
        The test-set sampling variance of every pooled estimate, as the
        metrics' option (:ref:`estimand_policy`).

    unit : str, default=None
        Unit of the target (regression), e.g. ``"mg/L"``, shown in the reports
        and plots.

    Attributes
    ----------
    cv_results_ : dict of ndarray
        Per fold: times, ``n_test`` and every metric's estimates and variances
        (:ref:`cross_validation`).

    estimands_ : dict of dict
        Per metric: ``shown`` (the estimands reported), ``lead`` and ``notes``.

    fold_estimates_ : dict of dict of list of NoisyScore
        ``fold_estimates_[m][e]``: the fold scores of every shown estimand.

    pooled_estimates_ : dict of dict of NoisyScore
        ``pooled_estimates_[m][e]``: every shown estimand pooled over the folds.

    fold_scores_ : dict of list of NoisyScore
        The fold scores of the lead (``None`` where a fold failed).

    pooled_ : dict of NoisyScore
        The lead pooled over all out-of-fold predictions (empty when the test
        sets overlap).

    fold_summary_ : dict of dict
        Per metric the fold means and the between-fold spread
        (:ref:`between_fold_spread`).

    oof_predictions_ : ndarray or None
        Output of ``predict`` for every tested sample, in ``oof_indices_`` order.

    oof_responses_ : dict of ndarray
        Out-of-fold output of every response method the scorers used.

    oof_indices_ : ndarray or None
        Sorted indices of the tested samples; None when the test sets overlap.

    model_or_measurements_ : dict or None
        One regression target with ``sigma``: the labels' reliability and the
        out-of-fold predictions' nominal ``r2`` and ``correlation``
        (:ref:`model_or_measurements`).

    labels_ : ndarray or None
        The sorted class labels of ``y`` for a classifier.

    test_indices_ : list of ndarray
        The test indices of every fold.

    scorers_ : dict
        The NoisyScorers used, by result key.

    n_splits_ : int
        Number of folds.

    n_samples_ : int
        Number of samples of ``X``.

    noise_ : {"sigma", "q", "transition_matrix"} or None
        The noise keyword given to :meth:`fit`.

    estimators_ : list of estimator
        The fold estimators (``return_estimator=True``).

    estimator_ : estimator
        The estimator refitted on all data (``refit=True``).

    See Also
    --------
    sklearn.model_selection.cross_validate : The noise-free equivalent.

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
    >>> pooled = cv.pooled_["mean_squared_error"]
    >>> pooled.estimand, round(pooled.expected - pooled.nominal, 6)  # truth: - σ²
    ('truth', -0.25)
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
        estimand: str = "auto",
        test_set_sampling: Any = TEST_SET_SAMPLING,
        unit: str | None = None,
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
        self.estimand = estimand
        self.test_set_sampling = test_set_sampling
        self.unit = unit

    def __sklearn_tags__(self) -> Any:
        return _delegated_tags(super().__sklearn_tags__(), self.estimator)

    def _check_params(self) -> Any:
        if not hasattr(self.estimator, "fit"):
            raise TypeError(
                f"estimator must have a fit method; got {self.estimator!r}."
            )
        check_level(self.confidence_level)
        if not (
            isinstance(self.error_score, numbers.Number) or self.error_score == "raise"
        ):
            raise ValueError(
                "error_score must be the string 'raise' or a number; got "
                f"{self.error_score!r}."
            )
        if not isinstance(self.estimand, str) or self.estimand not in ESTIMAND_CHOICES:
            raise ValueError(
                f"estimand must be one of {ESTIMAND_CHOICES}; got {self.estimand!r}."
            )
        sampling = check_test_set_sampling(self.test_set_sampling)
        if self.unit is not None and not isinstance(self.unit, str):
            raise TypeError(f"unit must be a string or None; got {self.unit!r}.")
        if not isinstance(self.verbose, numbers.Integral) or self.verbose < 0:
            raise ValueError(
                f"verbose must be a non-negative integer; got {self.verbose!r}."
            )
        return sampling

    def fit(
        self,
        X: Any,
        y: Any,
        *,
        sigma: Any = None,
        q: Any = None,
        transition_matrix: Any = None,
        groups: Any = None,
        sigma_dof: Any = None,
        sigma_shared: Any = None,
        sigma_shared_dof: Any = None,
        **fit_params: Any,
    ) -> NoisyCrossValidator:
        """Cross-validate ``estimator`` and score every fold under the label noise.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Input data.

        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            Best-known labels: measured values (regression) or classes.

        sigma : float or array-like of shape (n_samples,), default=None
            Standard error of each regression label (0 means exact).

        q : float or array-like of shape (n_samples,), default=None
            Flip probability of each class label.

        transition_matrix : array-like of shape (n_classes, n_classes), default=None
            Row-stochastic label transition matrix, in sorted label order.

        groups : array-like of shape (n_samples,), default=None
            Group labels for group splitters such as ``GroupKFold``.

        sigma_dof : float or array-like of shape (n_samples,), default=None
            Degrees of freedom of an estimated ``sigma`` (:ref:`sigma_dof`).

        sigma_shared : float, dict, array-like of shape (n_samples,) or \
BatchOffsetSummary, default=None
            SD of an offset shared by the labels of a batch, the batches being
            ``groups`` (:ref:`shared_offsets`); a ``summarize_batches`` summary
            reaches every fold and the pooled score whole (fiducial truth MSE
            and RMSE intervals).

        sigma_shared_dof : float, default=None
            Degrees of freedom of an estimated ``sigma_shared²`` (not with a
            summary, which holds its own).

        **fit_params : dict
            Passed to the estimator's ``fit``, sliced to each training set.

        Returns
        -------
        self : NoisyCrossValidator
            The fitted object.
        """
        sampling = self._check_params()
        classifier = is_classifier(self.estimator)
        if _num_samples(y) != _num_samples(X):
            raise ValueError(
                "X and y must have the same number of samples; got "
                f"{_num_samples(X)} and {_num_samples(y)}."
            )
        X, y, groups = indexable(X, y, groups)
        splitter = check_cv(self.cv, y, classifier=classifier)
        splits = [
            (np.asarray(train), np.asarray(test))
            for train, test in splitter.split(X, y, groups)
        ]
        y_score = _scoring_target(y, classifier)
        offsets = (groups, sigma_shared, sigma_shared_dof)
        noise = _check_noise(sigma, q, transition_matrix, y_score, sigma_dof, offsets)
        check_batches_in_folds(noise, splits)
        scorers = check_noisy_scoring(self.scoring, self.estimator, y_score)
        check_scorers_noise(scorers, _noise_name(noise))
        classes = np.unique(np.asarray(y_score)) if classifier else None
        plans = {key: plan_estimands(s, self.estimand) for key, s in scorers.items()}
        # the lead is the scorers' own: fold_scores_ and pooled_ hold it
        scorers = {key: s.with_estimand(plans[key].lead) for key, s in scorers.items()}
        setup = dict(scorers=scorers, plans=plans, noise=noise, classes=classes)
        setup.update(fit_params=fit_params, error_score=self.error_score)
        setup["return_estimator"] = self.return_estimator
        results = run_folds(self, X, (y, y_score), splits, setup)

        _store_input_attributes(self, X)
        self.scorers_ = scorers
        self.n_splits_ = len(splits)
        self.n_samples_ = _num_samples(X)
        self.labels_ = classes
        self.test_indices_ = [test for _, test in splits]
        self.noise_ = _noise_name(noise)
        tables = _fold_tables(results, scorers, plans, self.error_score)
        self.cv_results_, self.fold_scores_, self.estimands_, self.fold_estimates_ = (
            tables
        )
        self.fold_summary_ = {
            key: _fold_summary(self.cv_results_, key, self.fold_scores_[key])
            for key in scorers
        }
        oof = _out_of_fold(results)
        self.oof_indices_ = oof.indices
        self.oof_responses_ = oof.responses
        self.oof_predictions_ = oof.responses.get("predict")
        self.model_or_measurements_ = _model_or_measurements(
            y_score, noise, oof, self.confidence_level
        )
        self.pooled_, self.pooled_estimates_ = pool_scores(
            results, oof, X, y_score, setup, sampling
        )
        if self.return_estimator:
            self.estimators_ = [r["estimator"] for r in results]
        if self.refit:
            self.estimator_ = clone(self.estimator).fit(X, y, **fit_params)
        return self

    def summary(self) -> Any:
        """Per-fold and pooled results as a table, one row per fold and metric.

        Returns
        -------
        table : pandas.DataFrame or list of dict
            The columns of the :ref:`User Guide <cv_reports>`; a list of dicts
            without pandas.
        """
        check_is_fitted(self, "cv_results_")
        return _summary_table(self)

    def to_dict(self) -> dict[str, Any]:
        """All results as a JSON-serialisable dict (:ref:`User Guide <cv_reports>`).

        Returns
        -------
        results : dict
            NaN and infinite numbers written as ``None``.
        """
        check_is_fitted(self, "cv_results_")
        return _results_dict(self)

    def to_json(self, **kwargs: Any) -> str:
        """:meth:`to_dict` as a JSON string; ``kwargs`` go to :func:`json.dumps`."""
        return json.dumps(self.to_dict(), **kwargs)

    def __str__(self) -> str:
        if not hasattr(self, "cv_results_"):
            return repr(self)
        return _format_table(self)

    def _repr_html_inner(self) -> str:
        html = super()._repr_html_inner()
        if hasattr(self, "cv_results_"):
            html += results_html(self)
        return html

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, str]:
        bundle = super()._repr_mimebundle_(**kwargs)
        if "text/html" in bundle and hasattr(self, "cv_results_"):
            bundle["text/html"] += results_html(self)
        return bundle

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
