"""Scorers that report expected metrics inside scikit-learn's ``scoring=``.

A :class:`NoisyScorer` is a callable ``scorer(estimator, X, y, **metadata)``, as
scikit-learn's scorers are, so it drops into
:func:`~sklearn.model_selection.cross_val_score`,
:func:`~sklearn.model_selection.cross_validate`,
:class:`~sklearn.model_selection.GridSearchCV` and friends. It takes the label noise
(``sigma`` for regression, ``q`` or a ``transition_matrix`` for classification) from
a constant, a column of ``X``, a callable ``(X, y)`` or, by default, from the sample
metadata that scikit-learn routes to it (see :ref:`metadata_routing` in the
scikit-learn User Guide).
"""

from __future__ import annotations

import copy
from typing import Any

from sklearn.utils.metadata_routing import UNCHANGED, MetadataRequest

from .._noisy_score import NoisyScore
from ..utils._noise import _source_repr, resolve_noise_source
from ..utils._sklearn_compat import _BaseScorer, _num_samples
from ._registry import MetricInfo, get_metric_info
from ._scorer_options import (
    accepts_sample_weight,
    check_estimand_option,
    check_greater_is_better,
    check_metric_kwargs,
    check_noise_options,
    check_output,
    check_response_method,
    check_sigma_dof_option,
    check_signature_options,
    require_sample_weight,
    scorer_metric_info,
    scorer_repr,
    takes_labels,
    takes_sigma_dof,
    undefined_score,
)
from ._scorer_response import cached_response, prepare_probabilities, scoring_labels
from ._scorer_routing import (
    check_score_metadata,
    missing_noise_message,
    score_routing,
    updated_score_request,
)
from ._test_set_sampling import add_test_set_sampling

__all__ = ["NoisyScorer"]


class NoisyScorer(_BaseScorer):
    """A scikit-learn scorer that reports an expected metric under label noise.

    Create it with :func:`make_noisy_scorer` or :func:`get_noisy_scorer`. Called as
    ``scorer(estimator, X, y, **metadata)`` it returns, with scikit-learn's sign
    convention (losses negated), either the expected value of the metric over the
    label noise (``output="expected"``) or a dict with the keys ``"expected"``,
    ``"variance"`` and ``"nominal"`` (``output="all"``; the variance is never
    negated). Read more in the :ref:`User Guide <metadata_routing>`.

    Parameters
    ----------
    metric : str or callable
        A metric name (see :func:`make_noisy_scorer`) or one of the
        ``expected_*`` functions of :mod:`sklearn_noisy.metrics`.

    greater_is_better : bool, default=None
        ``False`` negates the expected and nominal values, as scikit-learn does
        for losses. ``None`` takes the metric's own convention.

    response_method : {"predict", "predict_proba"}, default=None
        Method of the estimator that gives the metric's input. ``None`` takes
        ``"predict_proba"`` for Brier score and log-loss, ``"predict"`` otherwise.

    sigma, q : float, str, callable or None, default=None
        Source of the label noise: ``sigma`` for a regression metric, ``q`` for
        a classification metric. See :func:`make_noisy_scorer`.

    transition_matrix : array-like of shape (n_classes, n_classes), default=None
        A constant row-stochastic label transition matrix, instead of ``q``.

    estimand : {"forward", "truth", "remeasurement"}, default="forward"
        Passed to the metric; it must be one of the metric's estimands.

    output : {"expected", "all"}, default="expected"
        What a call returns.

    sigma_dof : float, str, callable or None, default=None
        Source of the degrees of freedom of ``sigma`` (regression metrics);
        ``None`` takes it from routed metadata when given, else σ is known.

    metric_kwargs : dict, default=None
        Further keyword arguments of the metric, e.g. ``pos_label``.

    Attributes
    ----------
    metric : str
        Canonical metric name, e.g. ``"mean_squared_error"``.

    greater_is_better : bool
        Whether the returned values are the metric (``True``) or its negation.

    response_method : str
        Method of the estimator that is scored.

    requires_noise : {"sigma", "q"}
        The kind of label noise of the metric.

    sigma, q, transition_matrix, estimand, output, sigma_dof, metric_kwargs
        The configuration, as passed.

    See Also
    --------
    make_noisy_scorer : Build a scorer, with the description of every option.
    get_noisy_scorer : A scorer by name, e.g. ``"neg_expected_mean_squared_error"``.

    Notes
    -----
    A noise source left at ``None`` is requested as metadata by ``score``: with
    ``sklearn.set_config(enable_metadata_routing=True)`` scikit-learn routes it
    to the scorer, sliced to each test fold. Without routing scikit-learn gives
    it to the estimator's ``fit``, which fails with
    ``fit() got an unexpected keyword argument 'sigma'``: enable routing, or
    give the scorer a constant, column or callable source. A direct call
    ``scorer(estimator, X, y, sigma=sigma)`` always accepts the metadata.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LinearRegression
    >>> from sklearn_noisy import make_noisy_scorer
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> y = np.array([0.1, 0.9, 2.2, 2.8])
    >>> model = LinearRegression().fit(X, y)
    >>> scorer = make_noisy_scorer("mean_squared_error", output="all")
    >>> scorer(model, X, y, sigma=0.2)
    {'expected': -0.0605, 'variance': 0.00162, 'nominal': -0.0205}
    """

    def __init__(
        self,
        metric: Any,
        *,
        greater_is_better: bool | None = None,
        response_method: str | None = None,
        sigma: Any = None,
        q: Any = None,
        transition_matrix: Any = None,
        estimand: str = "forward",
        output: str = "expected",
        sigma_dof: Any = None,
        metric_kwargs: dict[str, Any] | None = None,
    ) -> None:
        info = scorer_metric_info(metric)
        greater_is_better = check_greater_is_better(greater_is_better, info)
        response_method = check_response_method(response_method, info)
        source, transition_matrix = check_noise_options(
            info, sigma=sigma, q=q, transition_matrix=transition_matrix
        )
        estimand = check_estimand_option(estimand)
        sigma_dof = check_sigma_dof_option(info, sigma_dof)
        output = check_output(output)
        metric_kwargs = check_metric_kwargs(metric_kwargs)

        key = info.noise_parameter
        self.metric = info.name
        self.greater_is_better = greater_is_better
        self.response_method = response_method
        self.requires_noise = key
        self.sigma = source if key == "sigma" else None
        self.q = source if key == "q" else None
        self.transition_matrix = transition_matrix
        self.estimand = estimand
        self.output = output
        self.sigma_dof = sigma_dof
        self.metric_kwargs = metric_kwargs
        # Default requests of the ``score`` method, as {param: alias}.
        self._score_request: dict[str, Any] = {}
        if source is None and transition_matrix is None:
            self._score_request[key] = True
        if key == "sigma" and sigma_dof is None:
            self._score_request["sigma_dof"] = True
        check_signature_options(info, metric_kwargs, transition_matrix, estimand)

    # ------------------------------------------------------------------ helpers
    @property
    def _info(self) -> MetricInfo:
        """The registry record of the metric."""
        return get_metric_info(self.metric)

    @property
    def _response_method(self) -> str:
        # Read by scikit-learn's multimetric scoring to decide on its cache.
        return self.response_method

    @property
    def estimands(self) -> tuple[str, ...]:
        """The estimands the metric offers (its registry record's ``estimands``)."""
        return tuple(self._info.estimands)

    def with_estimand(self, estimand: str) -> NoisyScorer:
        """A copy of this scorer that reports ``estimand``.

        Parameters
        ----------
        estimand : {"forward", "truth", "remeasurement"}
            One of :attr:`estimands`.

        Returns
        -------
        scorer : NoisyScorer
            The same metric, noise sources, options and metadata requests.

        Raises
        ------
        ValueError
            When the metric does not offer ``estimand``.
        """
        estimand = check_estimand_option(estimand)
        if estimand not in self.estimands:
            raise ValueError(
                f"The {self.metric!r} metric offers the estimands {self.estimands}; "
                f"got {estimand!r}."
            )
        scorer = copy.copy(self)
        scorer.estimand = estimand
        scorer._score_request = dict(self._score_request)
        return scorer

    def _accept_sample_weight(self) -> bool:
        # Used by scikit-learn's searches when routing is disabled, to decide
        # whether to forward ``sample_weight`` to the scorer.
        return accepts_sample_weight(self._info)

    def _routing_repr(self) -> str:
        # Used by scikit-learn's routing machinery in its messages.
        return repr(self)

    def __repr__(self) -> str:
        return scorer_repr(self)

    # ------------------------------------------------------- metadata routing
    def get_metadata_routing(self) -> MetadataRequest:
        """Get the metadata routing of this scorer.

        The ``score`` method requests the noise metadata (``sigma`` for a
        regression metric, ``q`` for a classification metric) when the scorer
        takes it from routed metadata, i.e. when its source was left at ``None``.
        ``sample_weight``, for metrics that accept it, is left unset as in
        scikit-learn (passing it is an error until :meth:`set_score_request`). See
        scikit-learn's :ref:`metadata_routing` User Guide.

        Returns
        -------
        routing : MetadataRequest
            A :class:`~sklearn.utils.metadata_routing.MetadataRequest` whose
            ``score`` entry holds the requests.
        """
        return score_routing(self, self._score_request, self._accept_sample_weight())

    def set_score_request(
        self,
        *,
        sigma: Any = UNCHANGED,
        q: Any = UNCHANGED,
        sample_weight: Any = UNCHANGED,
        sigma_dof: Any = UNCHANGED,
    ) -> NoisyScorer:
        """Configure which metadata is routed to the scorer.

        As for scikit-learn's estimators, each option is ``True`` (requested),
        ``False`` (not requested), ``None`` (an error if passed) or a str (the
        metadata is passed under this alias, e.g. ``sigma="label_error"``).
        Only available when metadata routing is enabled.

        Parameters
        ----------
        sigma : bool, None or str, default=UNCHANGED
            Request for the label standard errors (regression metrics whose
            ``sigma`` source is routed metadata).
        q : bool, None or str, default=UNCHANGED
            Request for the flip probabilities (classification metrics whose
            ``q`` source is routed metadata).
        sample_weight : bool, None or str, default=UNCHANGED
            Request for sample weights, for metrics that accept them.
        sigma_dof : bool, None or str, default=UNCHANGED
            Request for the degrees of freedom of ``sigma`` (regression metrics
            whose ``sigma_dof`` source is routed metadata).

        Returns
        -------
        self : NoisyScorer
            The scorer, updated.
        """
        changes = {
            "sigma": sigma,
            "q": q,
            "sample_weight": sample_weight,
            "sigma_dof": sigma_dof,
        }
        self._score_request = updated_score_request(self, changes)
        return self

    # ------------------------------------------------------------- scoring
    def _noise_kwargs(
        self, given_noise: Any, transition_matrix: Any, X: Any, y: Any, missing: str
    ) -> dict[str, Any]:
        """The noise arguments of the metric, from the scorer's source or the call."""
        if self.transition_matrix is not None:
            if given_noise is not None or transition_matrix is not None:
                raise TypeError(
                    "This scorer uses its constant transition_matrix; do not also "
                    "pass q or transition_matrix."
                )
            return {"transition_matrix": self.transition_matrix}
        if transition_matrix is not None:
            if given_noise is not None:
                raise TypeError("Pass either q or transition_matrix, not both.")
            if self.q is not None:
                raise TypeError(
                    f"This scorer reads q from its own source (q={_source_repr(self.q)}"
                    "); do not also pass transition_matrix."
                )
            return {"transition_matrix": transition_matrix}
        key = self.requires_noise
        source = self.sigma if key == "sigma" else self.q
        return {
            key: resolve_noise_source(key, source, given_noise, X, y, missing=missing)
        }

    def _sigma_dof_kwargs(self, given: Any, X: Any, y: Any) -> dict[str, Any]:
        """``sigma_dof`` for the metric, from the scorer's source or the call.

        Empty when none is configured nor given (σ known), and for a metric
        whose function takes no ``sigma_dof``.
        """
        if self.requires_noise != "sigma":
            if given is not None:
                raise TypeError(
                    f"The {self.metric!r} scorer takes q or transition_matrix; "
                    "sigma_dof applies to regression metrics only."
                )
            return {}
        if self.sigma_dof is None and given is None:
            return {}
        value = resolve_noise_source(
            "sigma_dof", self.sigma_dof, given, X, y, missing=""
        )
        return {"sigma_dof": value} if takes_sigma_dof(self._info) else {}

    def _metric_call(
        self,
        y_true: Any,
        y_pred: Any,
        *,
        X: Any,
        given_noise: Any,
        transition_matrix: Any,
        sample_weight: Any,
        classes: Any,
        missing: str,
        sigma_dof: Any = None,
    ) -> tuple[Any, dict[str, Any]]:
        """The metric's input and keyword arguments, every estimand's alike."""
        info = self._info
        kwargs: dict[str, Any] = dict(self.metric_kwargs)
        kwargs.update(
            self._noise_kwargs(given_noise, transition_matrix, X, y_true, missing)
        )
        kwargs.update(self._sigma_dof_kwargs(sigma_dof, X, y_true))
        if sample_weight is not None:
            require_sample_weight(info)
            kwargs["sample_weight"] = sample_weight
        if self.response_method == "predict_proba":
            y_pred = prepare_probabilities(self.metric, y_true, y_pred, classes, kwargs)
        elif classes is not None and "labels" not in kwargs and takes_labels(info):
            kwargs["labels"] = scoring_labels(classes, y_true, y_pred)
        return y_pred, kwargs

    def _evaluate(
        self, y_true: Any, y_pred: Any, kwargs: dict[str, Any], estimand: str
    ) -> NoisyScore:
        """The metric of ``estimand`` on prepared input (see :meth:`_metric_call`)."""
        info = self._info
        n_samples = _num_samples(y_true)
        if n_samples < info.min_samples:
            return undefined_score(info, estimand, n_samples)
        if estimand != "forward":
            kwargs = {**kwargs, "estimand": estimand}
        score = info.function(y_true, y_pred, **kwargs)
        if not isinstance(score, NoisyScore):
            raise TypeError(
                f"{info.function.__name__} returned {type(score).__name__}, "
                "not a single NoisyScore; a scorer needs one value (check "
                "multioutput / average)."
            )
        return score

    def _compute(self, y_true: Any, y_pred: Any, **options: Any) -> NoisyScore:
        y_pred, kwargs = self._metric_call(y_true, y_pred, **options)
        return self._evaluate(y_true, y_pred, kwargs, self.estimand)

    def _score_estimands(
        self,
        y_true: Any,
        y_pred: Any,
        estimands: tuple[str, ...],
        *,
        X: Any = None,
        sigma: Any = None,
        q: Any = None,
        transition_matrix: Any = None,
        classes: Any = None,
        sigma_dof: Any = None,
        test_set_sampling: bool = False,
        known: dict[str, NoisyScore] | None = None,
    ) -> dict[str, NoisyScore | Exception]:
        """:meth:`score_predictions` of several estimands, the input prepared once.

        Maps each estimand to its score or the exception it raised; ``known``
        scores (e.g. pooled from folds) get only their test-set sampling.
        """
        self._check_call_noise(sigma, q, transition_matrix)
        key = self.requires_noise
        y_pred, kwargs = self._metric_call(
            y_true,
            y_pred,
            X=X,
            given_noise=sigma if key == "sigma" else q,
            transition_matrix=transition_matrix,
            sample_weight=None,
            classes=classes,
            missing=self._missing_message(),
            sigma_dof=sigma_dof,
        )
        known = known if test_set_sampling else None
        scores: dict[str, NoisyScore | Exception] = {}
        for estimand in estimands:
            try:
                if known is not None and estimand in known:
                    options = {**kwargs, "estimand": estimand}
                    if estimand == "forward":
                        del options["estimand"]
                    scores[estimand] = add_test_set_sampling(
                        self._info.function, known[estimand], y_true, y_pred, **options
                    )
                    continue
                options = (
                    {**kwargs, "test_set_sampling": True}
                    if test_set_sampling
                    else kwargs
                )
                scores[estimand] = self._evaluate(y_true, y_pred, options, estimand)
            except Exception as exc:  # the caller reports it per estimand
                scores[estimand] = exc
        return scores

    def _check_call_noise(self, sigma: Any, q: Any, transition_matrix: Any) -> None:
        """Reject noise keywords of the other kind (``q`` for a regression metric)."""
        key = self.requires_noise
        if key == "sigma":
            wrong = [
                name
                for name, value in (("q", q), ("transition_matrix", transition_matrix))
                if value is not None
            ]
        else:
            wrong = ["sigma"] if sigma is not None else []
        if wrong:
            takes = "sigma" if key == "sigma" else "q or transition_matrix"
            raise TypeError(
                f"The {self.metric!r} scorer takes {takes}, not {' or '.join(wrong)}."
            )

    def _missing_message(self) -> str:
        key = self.requires_noise
        return (
            f"{self!r} takes {key} from metadata: pass {key}= to score_predictions, "
            f"or build the scorer with its own {key} source (a constant, a column "
            "name of X or a callable)."
        )

    def score_predictions(
        self,
        y_true: Any,
        y_pred: Any,
        *,
        X: Any = None,
        sigma: Any = None,
        q: Any = None,
        transition_matrix: Any = None,
        sample_weight: Any = None,
        classes: Any = None,
        sigma_dof: Any = None,
    ) -> NoisyScore:
        """Score given predictions, resolving the noise as the scorer does.

        Parameters
        ----------
        y_true : array-like of shape (n_samples,) or (n_samples, n_outputs)
            Best-known labels.
        y_pred : array-like
            The response of :attr:`response_method`: predictions, or class
            probabilities of shape ``(n_samples, n_classes)`` (or the
            positive-class column) for Brier score and log-loss.
        X : array-like or DataFrame, default=None
            The samples, needed when the noise is a column of ``X`` or a callable.
        sigma, q : float or array-like, default=None
            The noise, when the scorer takes it from metadata.
        transition_matrix : array-like of shape (n_classes, n_classes), default=None
            A label transition matrix, instead of ``q``.
        sample_weight : array-like of shape (n_samples,), default=None
            Sample weights, for metrics that accept them.
        classes : array-like, default=None
            The classes of the problem (an estimator's ``classes_``): the order
            of the probability columns for Brier score and log-loss, and for a
            metric on predictions the ``labels`` it is computed over (unless
            the scorer sets ``labels``), with any other label of ``y_true`` or
            ``y_pred`` appended. By default the metric's ``labels`` option, or
            the classes found in ``y_true`` and ``y_pred``.
        sigma_dof : float or array-like of shape (n_samples,), default=None
            Degrees of freedom of ``sigma`` (regression), when the scorer takes
            it from metadata; None: σ known (or the scorer's own source).

        Returns
        -------
        score : NoisyScore
            The metric in its own units and sign (e.g. MSE positive).
        """
        self._check_call_noise(sigma, q, transition_matrix)
        key = self.requires_noise
        missing = self._missing_message()
        return self._compute(
            y_true,
            y_pred,
            X=X,
            given_noise=sigma if key == "sigma" else q,
            transition_matrix=transition_matrix,
            sample_weight=sample_weight,
            classes=classes,
            missing=missing,
            sigma_dof=sigma_dof,
        )

    def _estimator_score(
        self, method_caller: Any, estimator: Any, X: Any, y: Any, metadata: dict
    ) -> NoisyScore:
        """The metric of a fitted estimator; ``method_caller`` may cache responses."""
        check_score_metadata(self, metadata)
        if getattr(estimator, self.response_method, None) is None:
            raise TypeError(
                f"The {self.metric!r} scorer calls {self.response_method}, which "
                f"{type(estimator).__name__} does not have."
            )
        y_pred = cached_response(method_caller, estimator, self.response_method, X)
        return self._compute(
            y,
            y_pred,
            X=X,
            given_noise=metadata.get(self.requires_noise),
            transition_matrix=None,
            sample_weight=metadata.get("sample_weight"),
            classes=getattr(estimator, "classes_", None),
            missing=missing_noise_message(self, self.requires_noise),
            sigma_dof=metadata.get("sigma_dof"),
        )

    def noisy_score(
        self, estimator: Any, X: Any, y: Any, **metadata: Any
    ) -> NoisyScore:
        """The metric of ``estimator`` on ``X, y`` as a :class:`NoisyScore`.

        Parameters
        ----------
        estimator : object
            A fitted estimator. A classifier's ``classes_`` are the classes the
            metric is computed over, also on a test set that holds only some
            of them.
        X : array-like or DataFrame
            Test samples, passed as they are to the estimator's response method.
        y : array-like
            Best-known labels of the test samples.
        **metadata : dict
            ``sigma`` or ``q`` when the scorer takes its noise from metadata,
            ``sigma_dof`` (regression, optional) and ``sample_weight``.

        Returns
        -------
        score : NoisyScore
            The metric in its own units and sign (e.g. MSE positive).

        Raises
        ------
        MissingNoiseError
            When the scorer takes its noise from metadata and none was given.
        """
        return self._estimator_score(None, estimator, X, y, metadata)

    def _signed(self, score: NoisyScore) -> float | dict[str, float]:
        """A score with scikit-learn's sign convention, as :attr:`output` says."""
        sign = 1.0 if self.greater_is_better else -1.0
        if self.output == "expected":
            return sign * score.expected
        return {
            "expected": sign * score.expected,
            "variance": score.variance,
            "nominal": sign * score.nominal,
        }

    def _score(
        self, method_caller: Any, estimator: Any, X: Any, y_true: Any, **kwargs: Any
    ) -> float | dict[str, float]:
        # Called by scikit-learn's multimetric scoring (``cross_validate`` or a
        # search with several scorers) with a ``method_caller`` whose cache all
        # its scorers share: one prediction per fold, not one per scorer.
        score = self._estimator_score(method_caller, estimator, X, y_true, kwargs)
        return self._signed(score)

    def __call__(
        self, estimator: Any, X: Any, y: Any, **metadata: Any
    ) -> float | dict[str, float]:
        """Score ``estimator`` on ``X, y`` with scikit-learn's sign convention.

        Parameters
        ----------
        estimator : object
            A fitted estimator.
        X : array-like or DataFrame
            Test samples.
        y : array-like
            Best-known labels of the test samples.
        **metadata : dict
            ``sigma`` or ``q`` when the scorer takes its noise from metadata (routed
            by scikit-learn, or passed directly), ``sigma_dof`` (regression,
            optional) and ``sample_weight``.

        Returns
        -------
        score : float or dict
            The expected value of the metric, negated for a loss; with
            ``output="all"``, a dict with ``"expected"``, ``"variance"`` and
            ``"nominal"`` (the variance is never negated).
        """
        return self._signed(self.noisy_score(estimator, X, y, **metadata))
