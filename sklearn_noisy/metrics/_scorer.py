"""Noise-aware scorers: the scorer class, the factories and the table of names.

A :class:`NoisyScorer` is a callable ``scorer(estimator, X, y, **metadata)``, as
scikit-learn's scorers are, so it drops into
:func:`~sklearn.model_selection.cross_val_score`,
:func:`~sklearn.model_selection.cross_validate`,
:class:`~sklearn.model_selection.GridSearchCV` and friends. It takes the label noise
(``sigma`` for regression, ``q`` or a ``transition_matrix`` for classification) from
a constant, a column of ``X``, a callable ``(X, y)`` or, by default, from the sample
metadata that scikit-learn routes to it (see :ref:`metadata_routing` in the
scikit-learn User Guide). :func:`make_noisy_scorer` builds one for any metric of
the registry; :func:`get_noisy_scorer` gives the named scorers (after
scikit-learn's scorer names), which take their noise from routed metadata. As in
scikit-learn's ``sklearn/metrics/_scorer.py``; the checks of the options and the
metadata are in ``_scorer_checks``, the estimator's response in ``_scorer_response``.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
from sklearn.exceptions import UndefinedMetricWarning
from sklearn.utils.metadata_routing import UNCHANGED, MetadataRequest

from .._noisy_score import NoisyScore
from ..utils._noise import _source_repr, resolve_noise_source
from ..utils._sklearn_compat import _BaseScorer, _num_samples
from ..utils._warnings import warn
from ._registry import MetricInfo, get_metric_info, get_metric_names
from ._scorer_checks import (
    MissingNoiseError,
    check_estimand_option,
    check_greater_is_better,
    check_metric_kwargs,
    check_noise_options,
    check_output,
    check_response_method,
    check_sigma_dof_option,
    check_signature_options,
    missing_noise_message,
    require_sample_weight,
    score_routing,
    takes,
    updated_score_request,
)
from ._scorer_response import cached_response, prepare_probabilities, scoring_labels
from ._test_set_sampling import add_test_set_sampling

__all__ = [
    "MissingNoiseError",
    "NoisyScorer",
    "get_noisy_scorer",
    "get_noisy_scorer_names",
    "make_noisy_scorer",
]


def _scorer_table() -> dict[str, str]:
    """Scorer name (after scikit-learn's scorer names) -> canonical metric name."""
    return {get_metric_info(name).scorer_name: name for name in get_metric_names()}


def _metric_info(metric: Any) -> MetricInfo:
    """The registry record of a metric name or of one of our ``expected_*`` functions.

    Raises
    ------
    ValueError
        For a str that is not a metric name (with a hint for a scorer name).
    TypeError
        For any other object.
    """
    names = sorted(get_metric_names())
    if isinstance(metric, str):
        if metric in names:
            return get_metric_info(metric)
        hint = ""
        scorers = _scorer_table()
        if metric in scorers:
            hint = (
                f" {metric!r} is a scorer name: use get_noisy_scorer({metric!r}) or "
                f"make_noisy_scorer({scorers[metric]!r})."
            )
        raise ValueError(
            f"metric must be one of {names} or one of sklearn_noisy's "
            f"expected_* functions; got {metric!r}.{hint}"
        )
    if callable(metric):
        try:
            return get_metric_info(metric)
        except TypeError:
            pass
    raise TypeError(
        "metric must be a metric name (one of "
        f"{names}) or one of sklearn_noisy's expected_* functions; got "
        f"{metric!r}. For another metric use sklearn.metrics.make_scorer, or "
        "sklearn_noisy.metrics.monte_carlo_score to get its moments by simulation."
    )


def _value_repr(value: Any) -> str:
    """Repr of an option that evaluates back to an equivalent value."""
    if isinstance(value, np.ndarray):
        return repr(value.tolist())
    if isinstance(value, np.generic):
        return repr(value.item())
    return repr(value)


def _undefined_score(info: MetricInfo, estimand: str, n_samples: int) -> NoisyScore:
    """NaN, with a warning, for a metric on fewer samples than it is defined on.

    As scikit-learn's scorers: ``r2_score`` of one sample is NaN with an
    :class:`~sklearn.exceptions.UndefinedMetricWarning`, so that
    ``cross_validate(..., cv=LeaveOneOut())`` reports NaN folds.
    """
    warn(
        f"{info.display_name} is not defined on fewer than {info.min_samples} "
        f"samples; got {n_samples}: the score is NaN, as scikit-learn's.",
        UndefinedMetricWarning,
    )
    nan = float("nan")
    return NoisyScore(
        info.name,
        expected=nan,
        variance=nan,
        nominal=nan,
        n_samples=n_samples,
        estimand=estimand,
    )


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
    metric, greater_is_better, response_method, sigma, q
        As for :func:`make_noisy_scorer`, which describes each option.

    transition_matrix, estimand, output, sigma_dof
        As for :func:`make_noisy_scorer`.

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
        info = _metric_info(metric)
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
        info.check_estimand(estimand)  # refused now, not at every fold's call

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
        estimand = self._info.check_estimand(estimand)
        scorer = copy.copy(self)
        scorer.estimand = estimand
        scorer._score_request = dict(self._score_request)
        return scorer

    def _accept_sample_weight(self) -> bool:
        # Used by scikit-learn's searches when routing is disabled, to decide
        # whether to forward ``sample_weight`` to the scorer.
        return takes(self._info, "sample_weight")

    def _routing_repr(self) -> str:
        # Used by scikit-learn's routing machinery in its messages.
        return repr(self)

    def __repr__(self) -> str:
        # The make_noisy_scorer call that rebuilds the scorer.
        parts = [repr(self.metric)]
        if self.greater_is_better != self._info.greater_is_better or not (
            self.greater_is_better
        ):
            parts.append(f"greater_is_better={self.greater_is_better}")
        for key in ("sigma", "q"):
            if getattr(self, key) is not None:
                parts.append(f"{key}={_source_repr(getattr(self, key))}")
        if self.transition_matrix is not None:
            parts.append(f"transition_matrix={self.transition_matrix.tolist()!r}")
        if self.estimand != "forward":
            parts.append(f"estimand={self.estimand!r}")
        if self.output != "expected":
            parts.append(f"output={self.output!r}")
        if self.sigma_dof is not None:
            parts.append(f"sigma_dof={_source_repr(self.sigma_dof)}")
        parts.extend(f"{k}={_value_repr(v)}" for k, v in self.metric_kwargs.items())
        return f"make_noisy_scorer({', '.join(parts)})"

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
        sources = {
            "sigma": self.sigma,
            "q": self.q,
            "transition_matrix": self.transition_matrix,
            "sigma_dof": self.sigma_dof,
        }
        self._score_request = updated_score_request(
            self, self._score_request, changes, info=self._info, sources=sources
        )
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
        return {
            key: resolve_noise_source(
                key, self._source, given_noise, X, y, missing=missing
            )
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
        return {"sigma_dof": value} if takes(self._info, "sigma_dof") else {}

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
            y_pred = prepare_probabilities(
                info.binary_proba, y_true, y_pred, classes, kwargs
            )
        elif classes is not None and "labels" not in kwargs and takes(info, "labels"):
            kwargs["labels"] = scoring_labels(classes, y_true, y_pred)
        return y_pred, kwargs

    def _evaluate(
        self, y_true: Any, y_pred: Any, kwargs: dict[str, Any], estimand: str
    ) -> NoisyScore:
        """The metric of ``estimand`` on prepared input (see :meth:`_metric_call`)."""
        info = self._info
        n_samples = _num_samples(y_true)
        if n_samples < info.min_samples:
            return _undefined_score(info, estimand, n_samples)
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
        y_pred, kwargs = self._call_input(
            y_true,
            y_pred,
            X=X,
            noise=(sigma, q, transition_matrix),
            sample_weight=None,
            classes=classes,
            sigma_dof=sigma_dof,
        )
        known = known if test_set_sampling else None
        scores: dict[str, NoisyScore | Exception] = {}
        for estimand in estimands:
            try:
                if known is not None and estimand in known:
                    forward = estimand == "forward"
                    options = kwargs if forward else {**kwargs, "estimand": estimand}
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

    def _call_input(
        self, y_true: Any, y_pred: Any, *, noise: tuple, **options: Any
    ) -> tuple[Any, dict[str, Any]]:
        """:meth:`_metric_call` for the ``noise=(sigma, q, transition_matrix)``
        of a direct call, rejecting noise of the other kind (``q`` for a
        regression metric)."""
        sigma, q, transition_matrix = noise
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
            wanted = "sigma" if key == "sigma" else "q or transition_matrix"
            raise TypeError(
                f"The {self.metric!r} scorer takes {wanted}, not {' or '.join(wrong)}."
            )
        return self._metric_call(
            y_true,
            y_pred,
            given_noise=sigma if key == "sigma" else q,
            transition_matrix=transition_matrix,
            missing=self._missing_message(),
            **options,
        )

    @property
    def _source(self) -> Any:
        """The scorer's own source of its noise (``sigma`` or ``q``), or None."""
        return self.sigma if self.requires_noise == "sigma" else self.q

    def _missing_metadata_message(self) -> str:
        """Why :meth:`noisy_score` got no routed noise, and what to do."""
        key = self.requires_noise
        alias = self._score_request.get(key)
        return missing_noise_message(repr(self), self.metric, key, alias)

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
            positive-class column) for the metrics on probabilities.
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
            of the probability columns for the metrics on probabilities, and for a
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
        y_pred, kwargs = self._call_input(
            y_true,
            y_pred,
            X=X,
            noise=(sigma, q, transition_matrix),
            sample_weight=sample_weight,
            classes=classes,
            sigma_dof=sigma_dof,
        )
        return self._evaluate(y_true, y_pred, kwargs, self.estimand)

    def _estimator_score(
        self, method_caller: Any, estimator: Any, X: Any, y: Any, metadata: dict
    ) -> NoisyScore:
        """The metric of a fitted estimator; ``method_caller`` may cache responses."""
        key = self.requires_noise
        allowed = {key, "sample_weight"} | ({"sigma_dof"} if key == "sigma" else set())
        unknown = sorted(set(metadata) - allowed)
        if unknown:
            raise TypeError(
                f"{self!r} got unexpected metadata {unknown}; it accepts "
                f"{sorted(allowed)}."
            )
        routed = self._source is None and self.transition_matrix is None
        if routed and metadata.get(key) is None:
            raise MissingNoiseError(self._missing_metadata_message())
        if getattr(estimator, self.response_method, None) is None:
            raise TypeError(
                f"The {self.metric!r} scorer calls {self.response_method}, which "
                f"{type(estimator).__name__} does not have."
            )
        y_pred = cached_response(method_caller, estimator, self.response_method, X)
        y_pred, kwargs = self._metric_call(
            y,
            y_pred,
            X=X,
            given_noise=metadata.get(self.requires_noise),
            transition_matrix=None,
            sample_weight=metadata.get("sample_weight"),
            classes=getattr(estimator, "classes_", None),
            missing=self._missing_metadata_message(),
            sigma_dof=metadata.get("sigma_dof"),
        )
        return self._evaluate(y, y_pred, kwargs, self.estimand)

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


def make_noisy_scorer(
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
    **metric_kwargs: Any,
) -> NoisyScorer:
    """Make a scorer that reports an expected metric under label noise.

    The scorer is used as ``scoring=`` in scikit-learn's cross-validation and
    searches. Its noise comes from the sample metadata that scikit-learn routes
    to it (the default), from a constant, from a column of ``X`` or from a
    callable. Read more in the :ref:`User Guide <scikit_learn>`.

    Parameters
    ----------
    metric : str or callable
        A metric name such as ``"mean_squared_error"``, ``"r2"`` (regression:
        noise ``sigma``), ``"accuracy"`` or ``"f1"`` (classification: noise
        ``q`` or ``transition_matrix``), or the matching ``expected_*`` function
        of :mod:`sklearn_noisy.metrics`.

    greater_is_better : bool, default=None
        Whether the metric is a score (``True``) or a loss (``False``), which the
        scorer negates as scikit-learn does. ``None`` takes the metric's own.

    response_method : {"predict", "predict_proba"}, default=None
        Method of the estimator to score. ``None`` takes the metric's own (its
        record's ``response_method``: ``"predict_proba"`` for Brier score,
        log-loss and ROC AUC, ``"predict"`` for the other metrics).

    sigma : float, str, callable or None, default=None
        Regression metrics: the standard error of each label, as a constant, the
        name of a column of ``X``, a callable ``(X, y) -> array`` or ``None``
        (routed metadata, :ref:`metadata_routing`).

    q : float, str, callable or None, default=None
        Classification metrics: the flip probability of each label, with the
        same kinds of source as ``sigma``.

    transition_matrix : array-like of shape (n_classes, n_classes), default=None
        Classification metrics that accept it (accuracy, Brier score, log-loss):
        a constant row-stochastic label transition matrix, instead of ``q``.

    estimand : {"forward", "truth", "remeasurement"}, default="forward"
        The estimate the scorer returns (:ref:`estimands`); the metric must
        offer it (``get_metric_info(metric).estimands``).

    output : {"expected", "all"}, default="expected"
        ``"expected"``: a call returns the expected value (a float). ``"all"``: a
        dict with ``"expected"``, ``"variance"`` and ``"nominal"``; such a scorer
        must be the whole ``scoring``.

    sigma_dof : float, str, callable or None, default=None
        Regression metrics: the degrees of freedom of each ``sigma`` estimated
        from a few readings (``inf`` or no value: σ known), with the same kinds
        of source as ``sigma``.

    **metric_kwargs : dict
        Further keyword arguments of the metric, e.g. ``pos_label``, ``labels``,
        ``average``, ``method`` or ``multioutput``.

    Returns
    -------
    scorer : NoisyScorer
        The scorer. Its repr shows how to rebuild it.

    See Also
    --------
    get_noisy_scorer : Named scorers, e.g. ``"neg_expected_mean_squared_error"``.
    NoisyScorer : The scorer's methods and its metadata routing.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LinearRegression
    >>> from sklearn.model_selection import cross_validate
    >>> from sklearn_noisy import make_noisy_scorer
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(40, 2))
    >>> y = X @ [1.0, -2.0] + rng.normal(scale=0.3, size=40)
    >>> scorer = make_noisy_scorer("mean_squared_error", sigma=0.3, output="all")
    >>> result = cross_validate(LinearRegression(), X, y, cv=4, scoring=scorer)
    >>> result["test_expected"].round(3)
    array([-0.228, -0.139, -0.291, -0.159])
    >>> np.sqrt(result["test_variance"]).round(3)
    array([0.081, 0.058, 0.094, 0.064])
    """
    return NoisyScorer(
        metric,
        greater_is_better=greater_is_better,
        response_method=response_method,
        sigma=sigma,
        q=q,
        transition_matrix=transition_matrix,
        estimand=estimand,
        output=output,
        sigma_dof=sigma_dof,
        metric_kwargs=metric_kwargs,
    )


def get_noisy_scorer(scoring: Any) -> NoisyScorer:
    """Get a noise-aware scorer by name.

    One name per metric of the registry (its record's ``scorer_name``), after
    scikit-learn's (losses are ``neg_``): ``"neg_expected_mean_squared_error"``,
    ``"expected_r2"``, ``"expected_accuracy"``, ``"neg_expected_log_loss"``, ...
    (:func:`get_noisy_scorer_names` lists them). A named scorer takes its noise
    from routed metadata (``sigma`` or ``q``); use :func:`make_noisy_scorer` for
    another source.

    Parameters
    ----------
    scoring : str or NoisyScorer
        A scorer name (see :func:`get_noisy_scorer_names`). A
        :class:`NoisyScorer` is returned as it is.

    Returns
    -------
    scorer : NoisyScorer
        A new scorer object on every call.

    Examples
    --------
    >>> from sklearn_noisy import get_noisy_scorer
    >>> get_noisy_scorer("neg_expected_mean_squared_error")
    make_noisy_scorer('mean_squared_error', greater_is_better=False)
    >>> get_noisy_scorer("expected_accuracy").requires_noise
    'q'
    """
    if isinstance(scoring, NoisyScorer):
        return scoring
    if not isinstance(scoring, str):
        raise TypeError(
            f"scoring must be a scorer name (str); got {type(scoring).__name__}."
        )
    scorers = _scorer_table()
    if scoring not in scorers:
        hint = ""
        if scoring in get_metric_names():
            hint = f" For the metric {scoring!r} use make_noisy_scorer({scoring!r})."
        raise ValueError(
            f"{scoring!r} is not a noise-aware scorer name; the names are "
            f"{get_noisy_scorer_names()}.{hint}"
        )
    return make_noisy_scorer(scorers[scoring])


def get_noisy_scorer_names() -> list[str]:
    """Get the names of the noise-aware scorers, sorted.

    Returns
    -------
    names : list of str
        The names accepted by :func:`get_noisy_scorer`.

    Examples
    --------
    >>> from sklearn_noisy import get_noisy_scorer_names
    >>> names = get_noisy_scorer_names()
    >>> "expected_r2" in names, "neg_expected_mean_squared_error" in names
    (True, True)
    """
    return sorted(_scorer_table())
