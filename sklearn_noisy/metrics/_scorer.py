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
import importlib
import inspect
import numbers
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import sklearn
from sklearn.utils.metadata_routing import UNCHANGED, MetadataRequest

from .._noisy_score import NoisyScore
from ..utils._validation import (
    as_float_array,
    check_flip_probability,
    check_sigma,
    check_transition_matrix,
)

__all__ = [
    "NoisyScorer",
    "get_noisy_scorer",
    "get_noisy_scorer_names",
    "make_noisy_scorer",
]


class _MetricSpec(NamedTuple):
    """How a canonical metric name maps to its function and scoring conventions."""

    module: str  # absolute module path of the function
    function: str  # name of the ``expected_*`` function
    noise: str  # "sigma" (regression) or "q" (classification)
    greater_is_better: bool
    response_method: str  # "predict" or "predict_proba"


_PACKAGE = "sklearn_noisy.metrics"
_REGRESSION = f"{_PACKAGE}._regression"
_CLASSIFICATION = f"{_PACKAGE}._classification"
_PRECISION_RECALL = f"{_PACKAGE}._precision_recall"
_PROBABILISTIC = f"{_PACKAGE}._probabilistic"

#: Canonical metric name -> its function and conventions. The functions are
#: imported on first use, so this module imports even where a metric module is
#: missing.
_METRICS: dict[str, _MetricSpec] = {
    "mean_squared_error": _MetricSpec(
        _REGRESSION, "expected_mean_squared_error", "sigma", False, "predict"
    ),
    "mean_absolute_error": _MetricSpec(
        _REGRESSION, "expected_mean_absolute_error", "sigma", False, "predict"
    ),
    "root_mean_squared_error": _MetricSpec(
        _REGRESSION, "expected_root_mean_squared_error", "sigma", False, "predict"
    ),
    "r2": _MetricSpec(_REGRESSION, "expected_r2_score", "sigma", True, "predict"),
    "accuracy": _MetricSpec(
        _CLASSIFICATION, "expected_accuracy_score", "q", True, "predict"
    ),
    "balanced_accuracy": _MetricSpec(
        _PRECISION_RECALL, "expected_balanced_accuracy_score", "q", True, "predict"
    ),
    "precision": _MetricSpec(
        _PRECISION_RECALL, "expected_precision_score", "q", True, "predict"
    ),
    "recall": _MetricSpec(
        _PRECISION_RECALL, "expected_recall_score", "q", True, "predict"
    ),
    "f1": _MetricSpec(_PRECISION_RECALL, "expected_f1_score", "q", True, "predict"),
    "matthews_corrcoef": _MetricSpec(
        _PRECISION_RECALL, "expected_matthews_corrcoef", "q", True, "predict"
    ),
    "brier_score_loss": _MetricSpec(
        _PROBABILISTIC, "expected_brier_score_loss", "q", False, "predict_proba"
    ),
    "log_loss": _MetricSpec(
        _PROBABILISTIC, "expected_log_loss", "q", False, "predict_proba"
    ),
}

#: Named scorers, mirroring scikit-learn's scorer names -> canonical metric.
_NAMED_SCORERS: dict[str, str] = {
    "neg_expected_mean_squared_error": "mean_squared_error",
    "neg_expected_mean_absolute_error": "mean_absolute_error",
    "neg_expected_root_mean_squared_error": "root_mean_squared_error",
    "expected_r2": "r2",
    "expected_accuracy": "accuracy",
    "expected_balanced_accuracy": "balanced_accuracy",
    "expected_precision": "precision",
    "expected_recall": "recall",
    "expected_f1": "f1",
    "expected_matthews_corrcoef": "matthews_corrcoef",
    "neg_expected_brier_score": "brier_score_loss",
    "neg_expected_log_loss": "log_loss",
}

_OUTPUTS = ("expected", "all")
_ESTIMANDS = ("measurement", "truth")
#: Keyword arguments of the metric that the scorer itself fills in.
_RESERVED = frozenset(
    {
        "y_true",
        "y_pred",
        "y_proba",
        "sigma",
        "q",
        "transition_matrix",
        "sample_weight",
        "estimand",
    }
)


def _resolve_metric_function(metric: str) -> Callable[..., Any]:
    """Import and return the ``expected_*`` function of a canonical metric name."""
    spec = _METRICS[metric]
    try:
        module = importlib.import_module(spec.module)
        return getattr(module, spec.function)
    except (ImportError, AttributeError) as exc:
        raise ImportError(
            f"The {metric!r} scorer needs {spec.module}.{spec.function}, which "
            f"could not be imported: {exc}"
        ) from exc


def _canonical_metric_name(metric: Any) -> str:
    """Map a metric name or one of our ``expected_*`` functions to its name."""
    if isinstance(metric, str):
        if metric in _METRICS:
            return metric
        hint = ""
        if metric in _NAMED_SCORERS:
            hint = (
                f" {metric!r} is a scorer name: use get_noisy_scorer({metric!r}) or "
                f"make_noisy_scorer({_NAMED_SCORERS[metric]!r})."
            )
        raise ValueError(
            f"metric must be one of {sorted(_METRICS)} or one of sklearn_noisy's "
            f"expected_* functions; got {metric!r}.{hint}"
        )
    if callable(metric):
        module = getattr(metric, "__module__", None)
        name = getattr(metric, "__name__", None)
        for canonical, spec in _METRICS.items():
            if module == spec.module and name == spec.function:
                return canonical
    raise TypeError(
        "metric must be a metric name (one of "
        f"{sorted(_METRICS)}) or one of sklearn_noisy's expected_* functions; got "
        f"{metric!r}. For another metric use sklearn.metrics.make_scorer, or "
        "sklearn_noisy.metrics.monte_carlo_score to get its moments by simulation."
    )


def _check_source(value: Any, *, key: str) -> Any:
    """Validate a noise source: None, a constant, a column name or a callable."""
    if value is None or isinstance(value, str) or callable(value):
        return value
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        if key == "sigma":
            return check_sigma(float(value), (1,), name="sigma")
        return check_flip_probability(float(value), 1, name="q")
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return _check_source(value.item(), key=key)
    raise TypeError(
        f"{key} must be a constant (a real number), the name of a column of X (a "
        f"str), a callable (X, y) -> array with one value per sample, or None to "
        f"take {key} from routed metadata; got {type(value).__name__}. A per-sample "
        f"array cannot be fixed in the scorer because each cross-validation fold "
        f"scores different samples: pass it as metadata instead, e.g. "
        f"cross_val_score(..., params={{'{key}': {key}}})."
    )


def _source_repr(value: Any) -> str:
    if callable(value) and not isinstance(value, str):
        return getattr(value, "__qualname__", None) or repr(value)
    return repr(value)


def _value_repr(value: Any) -> str:
    """Repr of an option that evaluates back to an equivalent value."""
    if isinstance(value, np.ndarray):
        return repr(value.tolist())
    if isinstance(value, np.generic):
        return repr(value.item())
    return repr(value)


def _routing_enabled() -> bool:
    return bool(sklearn.get_config().get("enable_metadata_routing", False))


class NoisyScorer:
    """A scikit-learn scorer that reports an expected metric under label noise.

    Create it with :func:`make_noisy_scorer` or :func:`get_noisy_scorer`. Called as
    ``scorer(estimator, X, y, **metadata)`` it returns, with scikit-learn's sign
    convention (losses negated, so that greater is better), either the expected
    value of the metric over the label noise (``output="expected"``, a float) or
    a dict with the keys ``"expected"``, ``"variance"`` and ``"nominal"``
    (``output="all"``). The variance is never negated.

    Parameters
    ----------
    metric : str or callable
        A metric name (see :func:`make_noisy_scorer`) or one of the
        ``expected_*`` functions of :mod:`sklearn_noisy.metrics`.
    greater_is_better : bool, default=None
        ``False`` negates the expected and nominal values, as scikit-learn does for
        losses. ``None`` takes the metric's own convention.
    response_method : {"predict", "predict_proba"}, default=None
        Method of the estimator that gives the metric's input. ``None`` takes
        ``"predict_proba"`` for Brier score and log-loss, ``"predict"`` otherwise.
    sigma, q : float, str, callable or None, default=None
        Source of the label noise: ``sigma`` for a regression metric, ``q`` for a
        classification metric. See :func:`make_noisy_scorer`.
    transition_matrix : array-like of shape (n_classes, n_classes), default=None
        A constant row-stochastic label transition matrix, instead of ``q``.
    estimand : {"measurement", "truth"}, default="measurement"
        Passed to the metric.
    output : {"expected", "all"}, default="expected"
        What a call returns.
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
    sigma, q, transition_matrix, estimand, output, metric_kwargs
        The configuration, as passed.

    See Also
    --------
    make_noisy_scorer : Build a scorer, with the description of every option.
    get_noisy_scorer : A scorer by name, e.g. ``"neg_expected_mean_squared_error"``.

    Notes
    -----
    **Metadata routing.** A noise source left at ``None`` is requested as sample
    metadata from the ``score`` method: with
    ``sklearn.set_config(enable_metadata_routing=True)``, scikit-learn routes the
    ``sigma`` (or ``q``) passed as ``cross_val_score(..., params={"sigma":
    sigma})`` or ``GridSearchCV(...).fit(X, y, sigma=sigma)`` to the scorer,
    sliced to each test fold. When routing is disabled scikit-learn gives such
    metadata to the estimator's ``fit`` instead, which typically fails with
    ``fit() got an unexpected keyword argument 'sigma'`` (or, for a pipeline,
    ``Pipeline.fit does not accept the sigma parameter``): enable routing, or
    configure the scorer with a constant, a column of ``X`` or a callable source.
    ``sample_weight`` is not requested by default, as in scikit-learn; use
    :meth:`set_score_request`.

    A direct call ``scorer(estimator, X, y, sigma=sigma)`` always accepts the
    metadata, whatever the routing configuration.

    Examples
    --------
    >>> import numpy as np
    >>> import sklearn
    >>> from sklearn.linear_model import LinearRegression
    >>> from sklearn_noisy import make_noisy_scorer
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> y = np.array([0.1, 0.9, 2.2, 2.8])
    >>> model = LinearRegression().fit(X, y)
    >>> scorer = make_noisy_scorer("mean_squared_error", output="all")
    >>> scorer(model, X, y, sigma=0.2)
    {'expected': -0.0605, 'variance': 0.00162, 'nominal': -0.0205}
    >>> scorer.noisy_score(model, X, y, sigma=[0.1, 0.2, 0.2, 0.3])
    NoisyScore(metric='mean_squared_error', expected=0.0655, std=0.04894, \
nominal=0.0205, n_samples=4, method='exact')
    >>> scorer.score_predictions(y, model.predict(X), sigma=0.2).expected
    0.0605
    >>> scorer.get_metadata_routing()
    {'score': {'sigma': True, 'sample_weight': None}}
    >>> with sklearn.config_context(enable_metadata_routing=True):
    ...     scorer = scorer.set_score_request(sigma="label_error")
    >>> scorer.get_metadata_routing()
    {'score': {'sigma': 'label_error', 'sample_weight': None}}
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
        estimand: str = "measurement",
        output: str = "expected",
        metric_kwargs: dict[str, Any] | None = None,
    ) -> None:
        name = _canonical_metric_name(metric)
        spec = _METRICS[name]
        if greater_is_better is None:
            greater_is_better = spec.greater_is_better
        if not isinstance(greater_is_better, (bool, np.bool_)):
            raise TypeError(
                f"greater_is_better must be True, False or None; got "
                f"{greater_is_better!r}."
            )
        if response_method is None:
            response_method = spec.response_method
        if response_method != spec.response_method:
            takes = (
                "probabilities"
                if spec.response_method == "predict_proba"
                else "predictions"
            )
            raise ValueError(
                f"response_method for the {name!r} metric must be "
                f"{spec.response_method!r} (the metric takes {takes}); got "
                f"{response_method!r}."
            )
        other = "q" if spec.noise == "sigma" else "sigma"
        if (sigma if other == "sigma" else q) is not None:
            kind = "a regression" if spec.noise == "sigma" else "a classification"
            raise TypeError(
                f"{name!r} is {kind} metric: its label noise is {spec.noise}, not "
                f"{other}."
            )
        if spec.noise == "sigma" and transition_matrix is not None:
            raise TypeError(
                f"{name!r} is a regression metric: transition_matrix applies to "
                "classification metrics only."
            )
        source = _check_source(sigma if spec.noise == "sigma" else q, key=spec.noise)
        if transition_matrix is not None:
            if source is not None:
                raise TypeError(
                    "Pass either q or transition_matrix, not both: they are two "
                    "descriptions of the label noise."
                )
            matrix = as_float_array(transition_matrix, name="transition_matrix")
            n_classes = matrix.shape[0] if matrix.ndim == 2 else 0
            # A copy: the scorer must not change when the caller's array does.
            matrix = check_transition_matrix(matrix, n_classes).copy()
            matrix.setflags(write=False)
            transition_matrix = matrix
        if not isinstance(estimand, str) or estimand not in _ESTIMANDS:
            raise ValueError(f"estimand must be one of {_ESTIMANDS}; got {estimand!r}.")
        if not isinstance(output, str) or output not in _OUTPUTS:
            raise ValueError(
                f"output must be one of {_OUTPUTS}: 'expected' returns a float, "
                f"'all' a dict of expected, variance and nominal; got {output!r}."
            )
        # A private copy: the scorer must not change when the caller's arrays do.
        metric_kwargs = copy.deepcopy(dict(metric_kwargs or {}))
        reserved = _RESERVED.intersection(metric_kwargs)
        if reserved:
            raise TypeError(
                f"{sorted(reserved)} cannot be passed as metric keyword arguments: "
                "the scorer fills them in (the noise from its source or from "
                "metadata, sample_weight from metadata, estimand from its own "
                "parameter)."
            )
        if metric_kwargs.get("multioutput") == "raw_values":
            raise ValueError(
                "multioutput='raw_values' gives one score per output, but a scorer "
                "must return a single value; use 'uniform_average' or output weights."
            )
        if "average" in metric_kwargs and metric_kwargs["average"] is None:
            raise ValueError(
                "average=None gives one score per class, but a scorer must return "
                "a single value; use 'binary', 'macro', 'micro' or 'weighted'."
            )

        self.metric = name
        self.greater_is_better = bool(greater_is_better)
        self.response_method = response_method
        self.requires_noise = spec.noise
        self.sigma = source if spec.noise == "sigma" else None
        self.q = source if spec.noise == "q" else None
        self.transition_matrix = transition_matrix
        self.estimand = estimand
        self.output = output
        self.metric_kwargs = metric_kwargs
        # Default requests of the ``score`` method, as {param: alias}.
        self._score_request: dict[str, Any] = {}
        if source is None and transition_matrix is None:
            self._score_request[spec.noise] = True
        self._check_against_signature()

    # ------------------------------------------------------------------ helpers
    def _metric_function(self) -> Callable[..., Any]:
        return _resolve_metric_function(self.metric)

    def _metric_parameters(self) -> dict[str, inspect.Parameter] | None:
        """Parameters of the metric function, or None if it cannot be imported."""
        try:
            function = self._metric_function()
        except ImportError:
            return None
        return dict(inspect.signature(function).parameters)

    def _check_against_signature(self) -> None:
        """Check the options against the metric's signature, when importable."""
        parameters = self._metric_parameters()
        if parameters is None:  # checked again when the scorer is called
            return
        if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
            return
        function = _METRICS[self.metric].function
        unknown = sorted(set(self.metric_kwargs) - set(parameters))
        if unknown:
            raise TypeError(
                f"{function} got unexpected keyword argument(s) {unknown}; it "
                f"accepts {sorted(set(parameters) - _RESERVED)}."
            )
        if self.transition_matrix is not None and "transition_matrix" not in parameters:
            raise TypeError(
                f"{function} does not accept a transition_matrix; use q (a flip "
                "probability, constant or per sample)."
            )
        if self.estimand != "measurement" and "estimand" not in parameters:
            raise ValueError(
                f"{function} has no estimand option: only estimand='measurement' "
                "is available for this metric."
            )

    def _accept_sample_weight(self) -> bool:
        # Used by scikit-learn's searches when routing is disabled, to decide
        # whether to forward ``sample_weight`` to the scorer.
        parameters = self._metric_parameters()
        return parameters is not None and "sample_weight" in parameters

    def _routing_repr(self) -> str:
        # Used by scikit-learn's routing machinery in its messages.
        return repr(self)

    def __repr__(self) -> str:
        spec = _METRICS[self.metric]
        parts = [repr(self.metric)]
        if self.greater_is_better != spec.greater_is_better or not (
            self.greater_is_better
        ):
            parts.append(f"greater_is_better={self.greater_is_better}")
        if self.sigma is not None:
            parts.append(f"sigma={_source_repr(self.sigma)}")
        if self.q is not None:
            parts.append(f"q={_source_repr(self.q)}")
        if self.transition_matrix is not None:
            parts.append(f"transition_matrix={self.transition_matrix.tolist()!r}")
        if self.estimand != "measurement":
            parts.append(f"estimand={self.estimand!r}")
        if self.output != "expected":
            parts.append(f"output={self.output!r}")
        parts.extend(
            f"{key}={_value_repr(value)}" for key, value in self.metric_kwargs.items()
        )
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
        request = MetadataRequest(owner=self)
        requests = dict(self._score_request)
        if "sample_weight" not in requests and self._accept_sample_weight():
            # As scikit-learn's scorers: an error if passed without a request.
            requests["sample_weight"] = None
        for param, alias in requests.items():
            request.score.add_request(param=param, alias=alias)
        return request

    def set_score_request(
        self,
        *,
        sigma: Any = UNCHANGED,
        q: Any = UNCHANGED,
        sample_weight: Any = UNCHANGED,
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

        Returns
        -------
        self : NoisyScorer
            The scorer, updated.
        """
        if not _routing_enabled():
            raise RuntimeError(
                "set_score_request is only available when metadata routing is "
                "enabled: call sklearn.set_config(enable_metadata_routing=True) "
                "(or use `with sklearn.config_context(enable_metadata_routing="
                "True):`)."
            )
        changes = {"sigma": sigma, "q": q, "sample_weight": sample_weight}
        changes = {k: v for k, v in changes.items() if v is not UNCHANGED}
        for key in ("sigma", "q"):
            if key not in changes:
                continue
            if key != self.requires_noise:
                raise TypeError(
                    f"The {self.metric!r} scorer takes {self.requires_noise}, not "
                    f"{key}."
                )
            if self.transition_matrix is not None:
                raise ValueError(
                    "This scorer uses a constant transition_matrix, so it takes no "
                    "q from metadata; build it without transition_matrix to route q."
                )
            source = self.sigma if key == "sigma" else self.q
            if source is not None:
                raise ValueError(
                    f"This scorer reads {key} from its own source ({key}="
                    f"{_source_repr(source)}), so it cannot also take {key} from "
                    f"metadata; build it with {key}=None to route {key}."
                )
        if "sample_weight" in changes and not self._accept_sample_weight():
            self._metric_function()  # raises ImportError if the metric is missing
            raise TypeError(
                f"{_METRICS[self.metric].function} does not accept sample_weight."
            )
        requests = dict(self._score_request)
        probe = MetadataRequest(owner=self)  # validates the aliases
        for param, alias in changes.items():
            probe.score.add_request(param=param, alias=alias)
        requests.update(probe.score.requests)
        self._score_request = requests
        return self

    # ------------------------------------------------------------- scoring
    def _missing_noise_message(self, key: str) -> str:
        alias = self._score_request.get(key)
        name = alias if isinstance(alias, str) and alias.isidentifier() else key
        message = (
            f"{self!r} takes {key} from metadata, but it was called without {key}. "
        )
        if alias is False or alias is None:
            message += (
                f"Its request for {key} is set to {alias}, so scikit-learn never "
                f"passes {key} to it: call set_score_request({key}=True). "
            )
        elif not _routing_enabled():
            message += (
                "Metadata routing is disabled, so scikit-learn passes no metadata to "
                "scorers: enable it with sklearn.set_config("
                "enable_metadata_routing=True) (or inside `with "
                "sklearn.config_context(enable_metadata_routing=True):`), then "
            )
        else:
            message += "With metadata routing enabled, "
        if alias is not False and alias is not None:
            message += (
                f"pass {name} with the data, e.g. cross_val_score(..., "
                f"params={{'{name}': {name}}}), cross_validate(..., params="
                f"{{'{name}': {name}}}) or GridSearchCV(...).fit(X, y, "
                f"{name}={name}); a direct call takes scorer(estimator, X, y, "
                f"{key}={key}). "
            )
        alternatives = (
            f"{key}=0.1 (a constant), {key}='<column of X>' or {key}=callable"
        )
        if key == "q":
            alternatives += " or transition_matrix=T"
        message += (
            "Alternatively give the scorer its own source: make_noisy_scorer("
            f"{self.metric!r}, {alternatives})."
        )
        return message

    def _resolve_source(
        self, key: str, source: Any, given: Any, X: Any, y: Any, *, missing: str
    ) -> Any:
        """The noise values from the configured source, or the given metadata."""
        if source is None:
            if given is None:
                raise ValueError(missing)
            return given
        if given is not None:
            raise TypeError(
                f"This scorer reads {key} from its own source ({key}="
                f"{_source_repr(source)}); do not also pass {key}."
            )
        if isinstance(source, str):
            if X is None:
                raise TypeError(
                    f"{key}={source!r} names a column of X, so X is required."
                )
            columns = getattr(X, "columns", None)
            if columns is None:
                raise TypeError(
                    f"{key}={source!r} names a column of X, but X is a "
                    f"{type(X).__name__} without column names: pass X as a pandas "
                    f"DataFrame, or use a constant, a callable or routed {key}."
                )
            if source not in list(columns):
                raise ValueError(
                    f"{key}={source!r} names a column that X does not have; the "
                    f"columns of X are {[str(c) for c in columns]}."
                )
            column = X[source]
            return column.to_numpy() if hasattr(column, "to_numpy") else column
        if callable(source):
            return source(X, y)
        return source

    def _prepare_response(
        self, y_true: Any, y_pred: Any, classes: Any, kwargs: dict[str, Any]
    ) -> Any:
        """Turn a ``predict_proba`` response into the metric's input."""
        if self.response_method != "predict_proba":
            return y_pred
        proba = y_pred
        if hasattr(proba, "to_numpy") and not isinstance(proba, np.ndarray):
            proba = proba.to_numpy()
        proba = np.asarray(proba)
        if classes is None and kwargs.get("labels") is not None:
            classes = kwargs["labels"]
        if self.metric == "log_loss":
            if classes is not None and "labels" not in kwargs:
                kwargs["labels"] = np.asarray(classes)
            return proba
        # Brier score: the binary metric takes the positive-class column.
        if proba.ndim == 2 and proba.shape[1] == 2:
            if classes is None:
                classes = np.unique(np.asarray(y_true))
                if classes.size != 2:
                    raise ValueError(
                        "y_pred has two probability columns but y_true does not show "
                        "both classes: pass classes (the estimator's classes_)."
                    )
            classes = np.asarray(classes)
            if classes.size != 2:
                raise ValueError(
                    f"y_pred has 2 probability columns but classes has {classes.size} "
                    "entries."
                )
            pos_label = kwargs.get("pos_label")
            if pos_label is None:
                pos_label = classes[-1]
            matches = [i for i, c in enumerate(classes.tolist()) if c == pos_label]
            if not matches:
                raise ValueError(
                    f"pos_label={pos_label!r} is not one of the classes "
                    f"{classes.tolist()}."
                )
            position = matches[0]
            kwargs.pop("labels", None)
            kwargs["pos_label"] = (
                pos_label.item() if isinstance(pos_label, np.generic) else pos_label
            )
            return proba[:, position]
        if proba.ndim == 2 and classes is not None and "labels" not in kwargs:
            kwargs["labels"] = np.asarray(classes)
        return proba

    def _compute(
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
    ) -> NoisyScore:
        key = self.requires_noise
        kwargs: dict[str, Any] = dict(self.metric_kwargs)
        if self.transition_matrix is not None:
            if given_noise is not None or transition_matrix is not None:
                raise TypeError(
                    "This scorer uses its constant transition_matrix; do not also "
                    "pass q or transition_matrix."
                )
            kwargs["transition_matrix"] = self.transition_matrix
        elif transition_matrix is not None:
            if given_noise is not None:
                raise TypeError("Pass either q or transition_matrix, not both.")
            if self.q is not None:
                raise TypeError(
                    f"This scorer reads q from its own source (q={_source_repr(self.q)}"
                    "); do not also pass transition_matrix."
                )
            kwargs["transition_matrix"] = transition_matrix
        else:
            source = self.sigma if key == "sigma" else self.q
            kwargs[key] = self._resolve_source(
                key, source, given_noise, X, y_true, missing=missing
            )
        function = self._metric_function()
        self._check_against_signature()  # skipped at construction if not importable
        parameters = inspect.signature(function).parameters
        if sample_weight is not None:
            if "sample_weight" not in parameters:
                raise TypeError(
                    f"{_METRICS[self.metric].function} does not accept sample_weight."
                )
            kwargs["sample_weight"] = sample_weight
        if self.estimand != "measurement":
            kwargs["estimand"] = self.estimand
        y_pred = self._prepare_response(y_true, y_pred, classes, kwargs)
        score = function(y_true, y_pred, **kwargs)
        if not isinstance(score, NoisyScore):
            raise TypeError(
                f"{_METRICS[self.metric].function} returned {type(score).__name__}, "
                "not a single NoisyScore; a scorer needs one value (check "
                "multioutput / average)."
            )
        return score

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
            Class labels in the order of the probability columns (an estimator's
            ``classes_``). By default the metric's ``labels`` option, or the
            classes found in ``y_true``.

        Returns
        -------
        score : NoisyScore
            The metric in its own units and sign (e.g. MSE positive).
        """
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
        missing = (
            f"{self!r} takes {key} from metadata: pass {key}= to score_predictions, "
            f"or build the scorer with its own {key} source (a constant, a column "
            "name of X or a callable)."
        )
        return self._compute(
            y_true,
            y_pred,
            X=X,
            given_noise=sigma if key == "sigma" else q,
            transition_matrix=transition_matrix,
            sample_weight=sample_weight,
            classes=classes,
            missing=missing,
        )

    def _response(self, estimator: Any, X: Any) -> Any:
        method = getattr(estimator, self.response_method, None)
        if method is None:
            raise TypeError(
                f"The {self.metric!r} scorer calls {self.response_method}, which "
                f"{type(estimator).__name__} does not have."
            )
        return method(X)

    def noisy_score(
        self, estimator: Any, X: Any, y: Any, **metadata: Any
    ) -> NoisyScore:
        """The metric of ``estimator`` on ``X, y`` as a :class:`NoisyScore`.

        Parameters
        ----------
        estimator : object
            A fitted estimator.
        X : array-like or DataFrame
            Test samples, passed as they are to the estimator's response method.
        y : array-like
            Best-known labels of the test samples.
        **metadata : dict
            ``sigma`` or ``q`` when the scorer takes its noise from metadata, and
            ``sample_weight``.

        Returns
        -------
        score : NoisyScore
            The metric in its own units and sign (e.g. MSE positive).
        """
        allowed = {self.requires_noise, "sample_weight"}
        unknown = sorted(set(metadata) - allowed)
        if unknown:
            raise TypeError(
                f"{self!r} got unexpected metadata {unknown}; it accepts "
                f"{sorted(allowed)}."
            )
        y_pred = self._response(estimator, X)
        return self._compute(
            y,
            y_pred,
            X=X,
            given_noise=metadata.get(self.requires_noise),
            transition_matrix=None,
            sample_weight=metadata.get("sample_weight"),
            classes=getattr(estimator, "classes_", None),
            missing=self._missing_noise_message(self.requires_noise),
        )

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
            by scikit-learn, or passed directly), and ``sample_weight``.

        Returns
        -------
        score : float or dict
            The expected value of the metric, negated for a loss; with
            ``output="all"``, a dict with ``"expected"``, ``"variance"`` and
            ``"nominal"`` (the variance is never negated).
        """
        score = self.noisy_score(estimator, X, y, **metadata)
        sign = 1.0 if self.greater_is_better else -1.0
        if self.output == "expected":
            return sign * score.expected
        return {
            "expected": sign * score.expected,
            "variance": score.variance,
            "nominal": sign * score.nominal,
        }


def make_noisy_scorer(
    metric: Any,
    *,
    greater_is_better: bool | None = None,
    response_method: str | None = None,
    sigma: Any = None,
    q: Any = None,
    transition_matrix: Any = None,
    estimand: str = "measurement",
    output: str = "expected",
    **metric_kwargs: Any,
) -> NoisyScorer:
    """Make a scorer that reports an expected metric under label noise.

    The scorer is used as ``scoring=`` in scikit-learn's cross-validation and
    searches. Its noise comes from the sample metadata that scikit-learn routes
    to it (the default), from a constant, from a column of ``X`` or from a
    callable.

    Parameters
    ----------
    metric : str or callable
        One of ``"mean_squared_error"``, ``"mean_absolute_error"``,
        ``"root_mean_squared_error"``, ``"r2"`` (regression: noise ``sigma``),
        ``"accuracy"``, ``"balanced_accuracy"``, ``"precision"``, ``"recall"``,
        ``"f1"``, ``"matthews_corrcoef"``, ``"brier_score_loss"``, ``"log_loss"``
        (classification: noise ``q`` or ``transition_matrix``), or one of the
        matching ``expected_*`` functions of :mod:`sklearn_noisy.metrics`.
    greater_is_better : bool, default=None
        Whether the metric is a score (``True``) or a loss (``False``), which
        the scorer negates as scikit-learn does. ``None`` takes the metric's own:
        ``False`` for the errors, Brier score and log-loss.
    response_method : {"predict", "predict_proba"}, default=None
        Method of the estimator to score. ``None`` takes ``"predict_proba"`` for
        Brier score and log-loss (the positive-class column for a binary
        problem, the full matrix with ``labels=estimator.classes_`` otherwise) and
        ``"predict"`` for the other metrics; no other value is accepted.
    sigma : float, str, callable or None, default=None
        Regression metrics: the standard error of each label.

        - a float: the same for every sample;
        - a str: the name of a column of ``X``, read from each test fold's
          DataFrame. The estimator receives the same ``X``, so drop the column in
          the pipeline, e.g. ``make_pipeline(ColumnTransformer([("drop", "drop",
          ["sigma"])], remainder="passthrough"), Ridge())``;
        - a callable ``(X, y) -> array`` of one value per sample;
        - ``None``: routed metadata (``sigma`` is requested by the ``score``
          method), see the Notes.
    q : float, str, callable or None, default=None
        Classification metrics: the flip probability of each label, with the
        same kinds of source as ``sigma``.
    transition_matrix : array-like of shape (n_classes, n_classes), default=None
        Classification metrics that accept it (accuracy, Brier score, log-loss): a
        constant row-stochastic label transition matrix, instead of ``q``.
    estimand : {"measurement", "truth"}, default="measurement"
        Passed to the metric when it is ``"truth"``.
    output : {"expected", "all"}, default="expected"
        ``"expected"``: a call returns the expected value (a float, usable in
        :func:`~sklearn.model_selection.cross_val_score` and as a search's
        score). ``"all"``: a dict with ``"expected"``, ``"variance"`` and
        ``"nominal"``, so that :func:`~sklearn.model_selection.cross_validate`
        returns ``test_expected``, ``test_variance`` and ``test_nominal`` and a
        search can ``refit="expected"``. Such a scorer must be the whole
        ``scoring``: inside a dict or list of scorers scikit-learn needs floats,
        so use ``output="expected"`` there.
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

    Notes
    -----
    With ``sklearn.set_config(enable_metadata_routing=True)`` (or inside
    ``sklearn.config_context``), a scorer whose noise source is ``None`` receives
    the ``sigma`` (or ``q``) passed as ``cross_val_score(..., params={"sigma":
    sigma})`` or ``GridSearchCV(...).fit(X, y, sigma=sigma)``, sliced to each
    test fold. Without routing, scikit-learn hands such metadata to the
    estimator's ``fit``, which rejects it: enable routing, or use a constant,
    column or callable source.

    Examples
    --------
    >>> import numpy as np
    >>> import sklearn
    >>> from sklearn.linear_model import LinearRegression
    >>> from sklearn.model_selection import cross_val_score, cross_validate
    >>> from sklearn_noisy import make_noisy_scorer
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(40, 2))
    >>> y = X @ [1.0, -2.0] + rng.normal(scale=0.3, size=40)
    >>> sigma = np.full(40, 0.3)
    >>> scorer = make_noisy_scorer("mean_squared_error")
    >>> scorer
    make_noisy_scorer('mean_squared_error', greater_is_better=False)
    >>> with sklearn.config_context(enable_metadata_routing=True):
    ...     scores = cross_val_score(LinearRegression(), X, y, cv=4,
    ...                              scoring=scorer, params={"sigma": sigma})
    >>> scores.round(3)
    array([-0.228, -0.139, -0.291, -0.159])

    A constant source needs no routing; ``output="all"`` gives the variance too:

    >>> scorer = make_noisy_scorer("mean_squared_error", sigma=0.3, output="all")
    >>> result = cross_validate(LinearRegression(), X, y, cv=4, scoring=scorer)
    >>> result["test_expected"].round(3)
    array([-0.228, -0.139, -0.291, -0.159])
    >>> np.sqrt(result["test_variance"]).round(3)
    array([0.081, 0.058, 0.094, 0.064])

    ``sigma`` read from a column of ``X``, dropped before the model sees it:

    >>> import pandas as pd
    >>> from sklearn.compose import ColumnTransformer
    >>> from sklearn.pipeline import make_pipeline
    >>> frame = pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "sigma": sigma})
    >>> model = make_pipeline(
    ...     ColumnTransformer([("drop", "drop", ["sigma"])], remainder="passthrough"),
    ...     LinearRegression())
    >>> scorer = make_noisy_scorer("mean_squared_error", sigma="sigma")
    >>> cross_val_score(model, frame, y, cv=4, scoring=scorer).round(3)
    array([-0.228, -0.139, -0.291, -0.159])
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
        metric_kwargs=metric_kwargs,
    )


def get_noisy_scorer(scoring: Any) -> NoisyScorer:
    """Get a noise-aware scorer by name.

    The names mirror scikit-learn's (losses are ``neg_``):
    ``"neg_expected_mean_squared_error"``, ``"neg_expected_mean_absolute_error"``,
    ``"neg_expected_root_mean_squared_error"``, ``"expected_r2"``,
    ``"expected_accuracy"``, ``"expected_balanced_accuracy"``,
    ``"expected_precision"``, ``"expected_recall"``, ``"expected_f1"``,
    ``"expected_matthews_corrcoef"``, ``"neg_expected_brier_score"`` and
    ``"neg_expected_log_loss"``. A named scorer takes its noise from routed
    metadata (``sigma`` or ``q``); use :func:`make_noisy_scorer` for another
    source.

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
    if scoring not in _NAMED_SCORERS:
        hint = ""
        if scoring in _METRICS:
            hint = f" For the metric {scoring!r} use make_noisy_scorer({scoring!r})."
        raise ValueError(
            f"{scoring!r} is not a noise-aware scorer name; the names are "
            f"{get_noisy_scorer_names()}.{hint}"
        )
    return make_noisy_scorer(_NAMED_SCORERS[scoring])


def get_noisy_scorer_names() -> list[str]:
    """Get the names of the noise-aware scorers, sorted.

    Returns
    -------
    names : list of str
        The names accepted by :func:`get_noisy_scorer`.

    Examples
    --------
    >>> from sklearn_noisy import get_noisy_scorer_names
    >>> get_noisy_scorer_names()[:3]
    ['expected_accuracy', 'expected_balanced_accuracy', 'expected_f1']
    """
    return sorted(_NAMED_SCORERS)
