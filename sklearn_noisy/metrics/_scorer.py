"""Noise-aware scorers: the scorer class, its factories, the scorer names.

As scikit-learn's ``sklearn/metrics/_scorer.py``: a :class:`NoisyScorer` is a
callable ``scorer(estimator, X, y, **metadata)`` that takes its label noise from a
constant, a column of ``X``, a callable ``(X, y)`` or routed metadata.
"""

from __future__ import annotations

import copy
from functools import partial
from typing import Any

import numpy as np
from sklearn.utils.metadata_routing import UNCHANGED, MetadataRequest

from .._noisy_score import NoisyScore
from ..utils._noise import (
    _source_repr,
    check_noise_source,
    check_regression_noise,
    check_transition_matrix,
    resolve_noise_source,
)
from ..utils._sklearn_compat import _BaseScorer, _cached_call
from ..utils._validation import TEST_SET_SAMPLING, check_test_set_sampling
from ._engines.test_set_sampling import add_test_set_sampling
from ._registry import MetricInfo, get_metric_info, get_metric_names
from ._response import cached_response, metric_score, plain_value, prepare_response
from ._scorer_checks import (
    SOURCES,
    check_metric_kwargs,
    check_noise_key,
    check_summary_source,
    missing_noise_error,
    routing_enabled,
    takes,
)

__all__ = [
    "NoisyScorer",
    "get_noisy_scorer",
    "get_noisy_scorer_names",
    "make_noisy_scorer",
]

_OUTPUTS = ("expected", "all")


class NoisyScorer(_BaseScorer):
    """A scikit-learn scorer that reports an expected metric under label noise.

    Create it with :func:`make_noisy_scorer` or :func:`get_noisy_scorer`. A
    noise source left at ``None`` is requested as metadata by ``score``: with
    ``sklearn.set_config(enable_metadata_routing=True)`` scikit-learn routes it;
    without, it gives it to the estimator's ``fit``, which fails with
    ``fit() got an unexpected keyword argument 'sigma'``. Read more in the
    :ref:`User Guide <metadata_routing>`.

    Parameters
    ----------
    metric, greater_is_better, response_method, sigma, q, transition_matrix
        As for :func:`make_noisy_scorer`.
    estimand, output, sigma_dof, sigma_shared, sigma_shared_dof, test_set_sampling
        As for :func:`make_noisy_scorer`.
    metric_kwargs : dict, default=None
        Further keyword arguments of the metric, e.g. ``pos_label``.

    Attributes
    ----------
    metric : str
        Canonical metric name, e.g. ``"mean_squared_error"``.
    requires_noise : {"sigma", "q"}
        The kind of label noise of the metric.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LinearRegression
    >>> from sklearn_noisy import make_noisy_scorer
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> y = np.array([0.1, 0.9, 2.2, 2.8])
    >>> model = LinearRegression().fit(X, y)
    >>> scorer = make_noisy_scorer("mean_squared_error", output="all")
    >>> scorer(model, X, y, sigma=0.1)  # the truth estimate: nominal MSE - σ²
    {'expected': -0.0105, 'variance': 0.000155, 'nominal': -0.0205}
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
        estimand: str = "auto",
        output: str = "expected",
        sigma_dof: Any = None,
        test_set_sampling: Any = TEST_SET_SAMPLING,
        metric_kwargs: dict[str, Any] | None = None,
        sigma_shared: Any = None,
        sigma_shared_dof: Any = None,
    ) -> None:
        info = get_metric_info(metric)
        if greater_is_better is None:
            greater_is_better = info.greater_is_better
        if not isinstance(greater_is_better, (bool, np.bool_)):
            raise TypeError(
                "greater_is_better must be True, False or None; got "
                f"{greater_is_better!r}."
            )
        if response_method is not None and response_method != info.response_method:
            raise ValueError(
                f"response_method for the {info.name!r} metric must be "
                f"{info.response_method!r}; got {response_method!r}."
            )
        sources = {"sigma": sigma, "q": q, "sigma_dof": sigma_dof}
        sources.update(sigma_shared=sigma_shared, sigma_shared_dof=sigma_shared_dof)
        for key, value in {**sources, "transition_matrix": transition_matrix}.items():
            if value is not None:
                check_noise_key(info, key)
        for key, value in sources.items():
            setattr(self, key, check_noise_source(value, key=key))
        check_summary_source(self.sigma_shared, self.sigma_shared_dof)
        if transition_matrix is not None:
            if self.q is not None:
                raise TypeError(
                    "Pass either q or transition_matrix, not both: they are two "
                    "descriptions of the label noise."
                )
            transition_matrix = check_transition_matrix(transition_matrix).copy()
            transition_matrix.setflags(write=False)
        if not isinstance(output, str) or output not in _OUTPUTS:
            raise ValueError(
                f"output must be one of {_OUTPUTS}: 'expected' returns a float, "
                f"'all' a dict of expected, variance and nominal; got {output!r}."
            )
        self.metric = info.name
        self.greater_is_better = bool(greater_is_better)
        self.response_method = info.response_method
        self.requires_noise = key = info.noise_parameter
        self.transition_matrix = transition_matrix
        self.estimand = info.check_estimand(estimand)  # "auto" resolved once
        self.output = output
        self.test_set_sampling = check_test_set_sampling(test_set_sampling)
        self.metric_kwargs = check_metric_kwargs(info, metric_kwargs)
        counts = "noise" in self.metric_kwargs and (
            check_regression_noise(self.metric_kwargs["noise"]) == "poisson"
        )
        if counts and (self.sigma is not None or self.sigma_dof is not None):
            raise TypeError(
                "Pass sigma (and sigma_dof) or noise='poisson', not both: with count "
                "labels each label's variance is estimated from the count itself."
            )
        # The requests of the ``score`` method, as {param: alias}.
        self._score_request: dict[str, Any] = {}
        if getattr(self, key) is None and transition_matrix is None and not counts:
            self._score_request[key] = True
        if key == "sigma" and self.sigma_dof is None and not counts:
            self._score_request["sigma_dof"] = True
        if self.sigma_shared is not None:  # its batches are the routed groups
            self._score_request["groups"] = True

    @property
    def _info(self) -> MetricInfo:
        return get_metric_info(self.metric)

    @property
    def _counts(self) -> bool:
        """Whether the labels are counts (``noise="poisson"``): no sigma taken."""
        return self.metric_kwargs.get("noise") == "poisson"

    @property
    def _response_method(self) -> str:
        # Read by scikit-learn's multimetric scoring to decide on its cache.
        return self.response_method

    @property
    def estimands(self) -> tuple[str, ...]:
        """The estimands the metric offers (its registry record's ``estimands``)."""
        return tuple(self._info.estimands)

    def with_estimand(self, estimand: str) -> NoisyScorer:
        """A copy of this scorer that reports ``estimand``, one of :attr:`estimands`.

        Parameters
        ----------
        estimand : {"forward", "truth", "remeasurement"}
            The estimand.

        Returns
        -------
        scorer : NoisyScorer
            The same metric, noise sources, options and metadata requests.
        """
        estimand = self._info.check_estimand(estimand)
        scorer = copy.copy(self)
        scorer.estimand = estimand
        scorer._score_request = dict(self._score_request)
        return scorer

    def _accept_sample_weight(self) -> bool:
        # Read by scikit-learn's searches when routing is disabled.
        return True

    def _routing_repr(self) -> str:
        return repr(self)

    def __repr__(self) -> str:
        # The make_noisy_scorer call that rebuilds the scorer.
        parts = [repr(self.metric)]
        if not (self.greater_is_better and self._info.greater_is_better):
            parts.append(f"greater_is_better={self.greater_is_better}")
        shown = {"sigma": self.sigma, "q": self.q}
        shown.update(transition_matrix=self.transition_matrix, estimand=self.estimand)
        shown["output"] = None if self.output == "expected" else self.output
        shown.update({key: getattr(self, key) for key in SOURCES[2:]})
        if self.test_set_sampling != TEST_SET_SAMPLING:
            shown["test_set_sampling"] = self.test_set_sampling
        shown.update(self.metric_kwargs)
        parts.extend(
            f"{key}={_source_repr(plain_value(value))}"
            for key, value in shown.items()
            if value is not None or key in self.metric_kwargs
        )
        return f"make_noisy_scorer({', '.join(parts)})"

    # ------------------------------------------------------- metadata routing
    def get_metadata_routing(self) -> MetadataRequest:
        """Get the metadata routing of this scorer.

        Returns
        -------
        routing : MetadataRequest
            The requests of the ``score`` method.
        """
        request = MetadataRequest(owner=self)
        # sample_weight (every metric takes it): an error if passed, as scikit-learn's
        for param, alias in {"sample_weight": None, **self._score_request}.items():
            request.score.add_request(param=param, alias=alias)
        return request

    def set_score_request(
        self,
        *,
        sigma: Any = UNCHANGED,
        q: Any = UNCHANGED,
        sample_weight: Any = UNCHANGED,
        sigma_dof: Any = UNCHANGED,
        groups: Any = UNCHANGED,
        sigma_shared: Any = UNCHANGED,
        sigma_shared_dof: Any = UNCHANGED,
    ) -> NoisyScorer:
        """Configure which metadata is routed to the scorer.

        Only available when metadata routing is enabled.

        Parameters
        ----------
        sigma, q, sample_weight, sigma_dof : bool, None or str, default=UNCHANGED
            The requests (``True``, ``False``, ``None`` or an alias) for the
            label noise, the sample weights and the degrees of freedom of σ.
        groups, sigma_shared, sigma_shared_dof : bool, None or str, \
default=UNCHANGED
            Regression: the batch of each label, the SD of a batch's shared
            offset and its degrees of freedom (:ref:`shared_offsets`).

        Returns
        -------
        self : NoisyScorer
            The scorer, updated.
        """
        if not routing_enabled():
            raise RuntimeError(
                "set_score_request is only available when metadata routing is "
                "enabled: call sklearn.set_config(enable_metadata_routing=True)."
            )
        given = {"sigma": sigma, "q": q, "sample_weight": sample_weight}
        given.update(sigma_dof=sigma_dof, groups=groups, sigma_shared=sigma_shared)
        given["sigma_shared_dof"] = sigma_shared_dof
        probe = MetadataRequest(owner=self)  # validates the aliases
        for key, alias in given.items():
            if alias is UNCHANGED:
                continue
            if key != "sample_weight":  # every metric takes sample_weight
                check_noise_key(self._info, key)
            if key == "q" and self.transition_matrix is not None:
                raise ValueError(
                    "This scorer uses a constant transition_matrix, so it takes no "
                    "q from metadata; build it without transition_matrix to route q."
                )
            if getattr(self, key, None) is not None:
                raise ValueError(
                    f"This scorer reads {key} from its own source ({key}="
                    f"{_source_repr(getattr(self, key))}), so it cannot also take "
                    f"{key} from metadata; build it with {key}=None to route {key}."
                )
            probe.score.add_request(param=key, alias=alias)
        self._score_request = {**self._score_request, **probe.score.requests}
        return self

    # ------------------------------------------------------------- scoring
    def _noise_kwargs(
        self, *, X: Any, y: Any, transition_matrix: Any = None, **given: Any
    ) -> dict[str, Any]:
        """The metric's label noise (``sigma``, ``q`` or ``transition_matrix``)
        from the scorer's source or the call's ``given``, which is checked."""
        for name, value in {**given, "transition_matrix": transition_matrix}.items():
            if value is not None and name != "groups":
                check_noise_key(self._info, name)
        key = self.requires_noise
        if self._counts:
            if given.get("sigma") is not None:
                raise TypeError(
                    f"{self!r} estimates each count's variance from the count: "
                    "do not pass sigma."
                )
            return {}
        matrices = (self.transition_matrix, transition_matrix)
        if any(matrix is not None for matrix in matrices):
            if sum(v is not None for v in (*matrices, self.q, given.get("q"))) > 1:
                raise TypeError(
                    "Pass either q or transition_matrix, not both, from the scorer "
                    "or the call: they are two descriptions of the label noise."
                )
            return {"transition_matrix": next(m for m in matrices if m is not None)}
        return {key: self._noise_values(key, given.get(key), X, y)}

    def _noise_values(self, key: str, given: Any, X: Any, y: Any) -> Any:
        """Noise ``key`` from the scorer's source or ``given`` (None: neither)."""
        if getattr(self, key) is None and given is None:
            if key == self.requires_noise:
                raise missing_noise_error(self)
            return None
        return resolve_noise_source(key, getattr(self, key), given, X, y, missing="")

    def _metric_call(
        self,
        y_true: Any,
        y_pred: Any,
        *,
        X: Any = None,
        sample_weight: Any = None,
        classes: Any = None,
        **noise: Any,
    ) -> tuple[Any, dict[str, Any]]:
        """The metric's input and keyword arguments, every estimand's alike;
        ``groups`` alone (a group splitter's) does not reach the metric."""
        info = self._info
        kwargs = {**self.metric_kwargs, **self._noise_kwargs(X=X, y=y_true, **noise)}
        for key in SOURCES[2:] if self.requires_noise == "sigma" else ():
            value = self._noise_values(key, noise.get(key), X, y_true)
            if key == "sigma_shared" and value is not None:  # the routed batches
                kwargs.update(sigma_shared=value, groups=noise.get("groups"))
            elif value is not None and takes(info, key):
                kwargs[key] = value
        if sample_weight is not None:
            kwargs["sample_weight"] = sample_weight
        return prepare_response(info, y_true, y_pred, classes, kwargs), kwargs

    def _evaluate(
        self, y_true: Any, y_pred: Any, kwargs: dict, estimand: str, sampling: Any
    ) -> NoisyScore:
        """The metric of ``estimand`` on the input of :meth:`_metric_call`."""
        return metric_score(self._info, y_true, y_pred, kwargs, estimand, sampling)

    def _score_estimands(
        self,
        y_true: Any,
        y_pred: Any,
        estimands: tuple[str, ...],
        *,
        test_set_sampling: Any = False,
        known: dict[str, NoisyScore] | None = None,
        **options: Any,
    ) -> dict[str, NoisyScore | Exception]:
        """``{estimand: score or the exception it raised}``, the input prepared once;
        with ``test_set_sampling``, the ``known`` scores only get their sampling."""
        y_pred, kwargs = self._metric_call(y_true, y_pred, **options)
        known = known if test_set_sampling and known else {}
        scores: dict[str, NoisyScore | Exception] = {}
        for estimand in estimands:
            try:
                if estimand in known:
                    scores[estimand] = add_test_set_sampling(
                        self._info.function,
                        known[estimand],
                        y_true,
                        y_pred,
                        **kwargs,
                        estimand=estimand,
                        test_set_sampling=test_set_sampling,
                    )
                else:
                    scores[estimand] = self._evaluate(
                        y_true, y_pred, kwargs, estimand, test_set_sampling
                    )
            except Exception as exc:  # the caller reports it per estimand
                scores[estimand] = exc
        return scores

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
        groups: Any = None,
        sigma_shared: Any = None,
        sigma_shared_dof: Any = None,
    ) -> NoisyScore:
        """Score given predictions, resolving the noise as the scorer does.

        Parameters
        ----------
        y_true : array-like of shape (n_samples,) or (n_samples, n_outputs)
            Best-known labels.
        y_pred : array-like
            The response of :attr:`response_method` (predictions or probabilities).
        X : array-like or DataFrame, default=None
            The samples, needed when the noise is a column of ``X`` or a callable.
        sigma, q, transition_matrix, sigma_dof : array-like, default=None
            The noise, when the scorer takes it from metadata.
        groups, sigma_shared, sigma_shared_dof : array-like, default=None
            The batch of each label, the SD of a batch's shared offset and its
            degrees of freedom (regression, :ref:`shared_offsets`).
        sample_weight : array-like of shape (n_samples,), default=None
            Sample weights, for metrics that accept them.
        classes : array-like, default=None
            The classes of the problem (an estimator's ``classes_``).

        Returns
        -------
        score : NoisyScore
            The metric in its own units and sign (e.g. MSE positive).
        """
        metadata = dict(sigma=sigma, q=q, transition_matrix=transition_matrix)
        metadata.update(sample_weight=sample_weight, classes=classes)
        metadata.update(sigma_dof=sigma_dof, groups=groups, sigma_shared=sigma_shared)
        metadata["sigma_shared_dof"] = sigma_shared_dof
        y_pred, kwargs = self._metric_call(y_true, y_pred, X=X, **metadata)
        return self._evaluate(
            y_true, y_pred, kwargs, self.estimand, self.test_set_sampling
        )

    def _estimator_score(
        self, method_caller: Any, estimator: Any, X: Any, y: Any, metadata: dict
    ) -> NoisyScore:
        """The metric of a fitted estimator; ``method_caller`` (scikit-learn's, which
        may cache responses) takes a float: no test-set sampling then."""
        allowed = {self.requires_noise, "sample_weight"}
        if self.requires_noise == "sigma":  # groups: the shared offsets' batches
            allowed.update(SOURCES[2:])
            if self.sigma_shared is not None or "sigma_shared" in metadata:
                allowed.add("groups")
        if set(metadata) - allowed:
            raise TypeError(
                f"{self!r} got unexpected metadata {sorted(set(metadata) - allowed)}; "
                f"it accepts {sorted(allowed)}."
            )
        if getattr(estimator, self.response_method, None) is None:
            raise TypeError(
                f"The {self.metric!r} scorer calls {self.response_method}, which "
                f"{type(estimator).__name__} does not have."
            )
        y_pred = cached_response(method_caller, estimator, self.response_method, X)
        classes = getattr(estimator, "classes_", None)
        y_pred, kwargs = self._metric_call(y, y_pred, X=X, classes=classes, **metadata)
        sampling = self.test_set_sampling if method_caller is None else False
        return self._evaluate(y, y_pred, kwargs, self.estimand, sampling)

    def noisy_score(
        self, estimator: Any, X: Any, y: Any, **metadata: Any
    ) -> NoisyScore:
        """The metric of ``estimator`` on ``X, y`` as a :class:`NoisyScore`.

        Parameters
        ----------
        estimator : object
            A fitted estimator.
        X : array-like or DataFrame
            Test samples.
        y : array-like
            Best-known labels of the test samples.
        **metadata : dict
            ``sigma`` or ``q`` when the scorer takes its noise from metadata,
            ``sigma_dof``, ``groups``, ``sigma_shared``, ``sigma_shared_dof``,
            ``sample_weight``.

        Returns
        -------
        score : NoisyScore
            The metric in its own units and sign (e.g. MSE positive).
        """
        return self._estimator_score(None, estimator, X, y, metadata)

    def _score(
        self, method_caller: Any, estimator: Any, X: Any, y_true: Any, **kwargs: Any
    ) -> float | dict[str, float]:
        score = self._estimator_score(method_caller, estimator, X, y_true, kwargs)
        sign = 1.0 if self.greater_is_better else -1.0
        if self.output == "expected":
            return sign * score.expected
        return {
            "expected": sign * score.expected,
            "variance": score.variance,
            "nominal": sign * score.nominal,
        }

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
            As for :meth:`noisy_score`.

        Returns
        -------
        score : float or dict
            The expected metric, negated for a loss; with ``output="all"`` a dict
            of ``"expected"``, ``"variance"`` (never negated) and ``"nominal"``.
        """
        return self._score(partial(_cached_call, None), estimator, X, y, **metadata)


def make_noisy_scorer(
    metric: Any,
    *,
    greater_is_better: bool | None = None,
    response_method: str | None = None,
    sigma: Any = None,
    q: Any = None,
    transition_matrix: Any = None,
    estimand: str = "auto",
    output: str = "expected",
    sigma_dof: Any = None,
    sigma_shared: Any = None,
    sigma_shared_dof: Any = None,
    test_set_sampling: Any = TEST_SET_SAMPLING,
    **metric_kwargs: Any,
) -> NoisyScorer:
    """Make a scorer that reports an expected metric under label noise.

    Read more in the :ref:`User Guide <scikit_learn>`.

    Parameters
    ----------
    metric : str or callable
        A metric name such as ``"mean_squared_error"`` (noise ``sigma``) or
        ``"accuracy"`` (noise ``q`` or ``transition_matrix``), or the matching
        ``expected_*`` function.
    greater_is_better : bool, default=None
        Whether the metric is a score (``True``) or a loss, which the scorer
        negates. ``None`` takes the metric's own.
    response_method : {"predict", "predict_proba"}, default=None
        Method of the estimator to score; ``None`` takes the metric's own.
    sigma : float, str, callable or None, default=None
        Regression: the standard error of each label, as a constant, a column name
        of ``X``, a callable ``(X, y) -> array`` or ``None`` (routed metadata).
    q : float, str, callable or None, default=None
        Classification: the flip probability of each label, as for ``sigma``.
    transition_matrix : array-like of shape (n_classes, n_classes), default=None
        Classification: a constant row-stochastic transition matrix, instead of ``q``.
    estimand : {"auto", "truth", "remeasurement", "forward"}, default="auto"
        The estimate the scorer returns (:ref:`estimands`); ``"auto"``: the
        truth where the metric offers it, else the remeasurement, else forward.
    output : {"expected", "all"}, default="expected"
        A float, or a dict of ``"expected"``, ``"variance"`` and ``"nominal"``
        (such a scorer must be the whole ``scoring``).
    sigma_dof : float, str, callable or None, default=None
        Regression: the degrees of freedom of each estimated ``sigma``, as for
        ``sigma``.
    sigma_shared : float, dict, str, callable, BatchOffsetSummary or None, \
default=None
        Regression: the SD of an offset shared by the labels of one batch (a
        constant, ``{batch: SD}``, a column of ``X``, a callable, or a
        :class:`~sklearn_noisy.preprocessing.BatchOffsetSummary`, given whole
        to every fold's metric); the batches are the routed ``groups``
        (:ref:`shared_offsets`).
    sigma_shared_dof : float, str, callable or None, default=None
        Regression: the degrees of freedom of an estimated ``sigma_shared``, as
        for ``sigma_shared``; None: known, held by a summary, or routed with
        ``set_score_request(sigma_shared_dof=True)``.
    test_set_sampling : "auto", bool or "bootstrap", default="auto"
        The test-set sampling part of the :class:`~sklearn_noisy.NoisyScore`
        of ``score_predictions`` and ``noisy_score`` (:ref:`estimand_policy`).
    **metric_kwargs : dict
        Further keyword arguments of the metric, e.g. ``pos_label``;
        ``noise="poisson"`` (count labels, :ref:`poisson_noise`) takes no ``sigma``.

    Returns
    -------
    scorer : NoisyScorer
        The scorer. Its repr shows how to rebuild it.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LinearRegression
    >>> from sklearn.model_selection import cross_validate
    >>> from sklearn_noisy import make_noisy_scorer
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(40, 2))
    >>> y = X @ [1.0, -2.0] + rng.normal(scale=0.3, size=40)
    >>> scorer = make_noisy_scorer("mean_squared_error", sigma=0.1, output="all")
    >>> result = cross_validate(LinearRegression(), X, y, cv=4, scoring=scorer)
    >>> result["test_expected"].round(3)
    array([-0.128, -0.039, -0.191, -0.059])
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
        test_set_sampling=test_set_sampling,
        metric_kwargs=metric_kwargs,
        sigma_shared=sigma_shared,
        sigma_shared_dof=sigma_shared_dof,
    )


def _scorer_table() -> dict[str, str]:
    """Scorer name -> canonical metric name."""
    return {get_metric_info(name).scorer_name: name for name in get_metric_names()}


def get_noisy_scorer(scoring: Any) -> NoisyScorer:
    """Get a noise-aware scorer by name; it takes its noise from routed metadata.

    Parameters
    ----------
    scoring : str or NoisyScorer
        A name of :func:`get_noisy_scorer_names`; a scorer is returned as it is.

    Returns
    -------
    scorer : NoisyScorer
        A new scorer object on every call.

    Examples
    --------
    >>> from sklearn_noisy import get_noisy_scorer
    >>> get_noisy_scorer("neg_expected_mean_squared_error")
    make_noisy_scorer('mean_squared_error', greater_is_better=False, estimand='truth')
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
    >>> "expected_r2" in get_noisy_scorer_names()
    True
    """
    return sorted(_scorer_table())
