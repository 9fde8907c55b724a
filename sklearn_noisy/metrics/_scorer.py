"""Noise-aware scorers: the scorer class, its checks and factories, the scorer names.

As scikit-learn's ``sklearn/metrics/_scorer.py``: a :class:`NoisyScorer` is a
callable ``scorer(estimator, X, y, **metadata)`` that takes its label noise from a
constant, a column of ``X``, a callable ``(X, y)`` or routed metadata.
"""

from __future__ import annotations

import copy
import inspect
from functools import partial
from typing import Any

import numpy as np
import sklearn
from sklearn.exceptions import UndefinedMetricWarning
from sklearn.utils.metadata_routing import UNCHANGED, MetadataRequest
from sklearn.utils.multiclass import type_of_target

from .._noisy_score import NoisyScore
from ..utils._noise import (
    _source_repr,
    check_noise_source,
    check_regression_noise,
    check_transition_matrix,
    resolve_noise_source,
)
from ..utils._sklearn_compat import _BaseScorer, _cached_call, _num_samples
from ..utils._validation import TEST_SET_SAMPLING, check_test_set_sampling
from ..utils._warnings import warn
from ._engines.test_set_sampling import add_test_set_sampling
from ._registry import MetricInfo, get_metric_info, get_metric_names

__all__ = [
    "MissingNoiseError",
    "NoisyScorer",
    "get_noisy_scorer",
    "get_noisy_scorer_names",
    "make_noisy_scorer",
]

_OUTPUTS = ("expected", "all")
#: Keyword arguments of the metric that the scorer itself fills in.
_RESERVED = frozenset(
    "y_true y_pred y_proba sigma sigma_dof groups sigma_shared sigma_shared_dof q "
    "transition_matrix sample_weight estimand".split()
)
#: Key of the full ``predict_proba`` matrix in scikit-learn's scoring cache, which
#: keeps a binary problem's positive-class column only under ``"predict_proba"``.
_FULL_PROBA_KEY = ("sklearn_noisy", "predict_proba")
#: The keywords of each kind of label noise, and the metrics they apply to.
_NOISE_KEYWORDS = {
    "sigma": (
        "regression",
        ("sigma", "sigma_dof", "sigma_shared", "sigma_shared_dof", "groups"),
    ),
    "q": ("classification", ("q", "transition_matrix")),
}


class MissingNoiseError(ValueError):
    """A scorer that takes its noise from metadata was called without it.

    A :class:`ValueError`: in scikit-learn's cross-validation and searches,
    ``error_score`` decides (:ref:`metadata_routing`).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import Ridge
    >>> from sklearn_noisy.metrics import MissingNoiseError, make_noisy_scorer
    >>> X, y = np.arange(8.0).reshape(4, 2), np.arange(4.0)
    >>> scorer = make_noisy_scorer("mean_squared_error")
    >>> try:
    ...     scorer(Ridge().fit(X, y), X, y)
    ... except MissingNoiseError as exc:
    ...     print(str(exc)[:60])
    make_noisy_scorer('mean_squared_error', greater_is_better=Fa
    """


def _scorer_table() -> dict[str, str]:
    """Scorer name -> canonical metric name."""
    return {get_metric_info(name).scorer_name: name for name in get_metric_names()}


def _takes(info: MetricInfo, parameter: str) -> bool:
    return parameter in inspect.signature(info.function).parameters


def _routing_enabled() -> bool:
    return bool(sklearn.get_config().get("enable_metadata_routing", False))


def _check_kind(info: MetricInfo, *keys: str) -> None:
    """Raise a TypeError for a keyword ``key`` of the other kind of label noise."""
    takes = info.noise_parameter
    kind, keywords = _NOISE_KEYWORDS[takes]
    for key in keys:
        if key not in keywords:
            other = _NOISE_KEYWORDS["q" if takes == "sigma" else "sigma"][0]
            raise TypeError(
                f"{info.name!r} is a {kind} metric: it takes {takes}, not {key} "
                f"({key} applies to {other} metrics only)."
            )


def _check_offsets(info: MetricInfo, key: str) -> None:
    """Raise a TypeError for ``key`` (groups, sigma_shared or its dof) of a metric
    without shared batch offsets."""
    if not _takes(info, "sigma_shared"):
        raise TypeError(
            f"The {info.name!r} metric does not model shared batch offsets, so it "
            f"takes no {key}."
        )


def _check_noise_options(
    info: MetricInfo, sigma: Any, q: Any, transition_matrix: Any, sigma_dof: Any
) -> tuple[Any, np.ndarray | None]:
    """The validated noise source and a read-only copy of the transition matrix."""
    given = {"sigma": sigma, "q": q, "transition_matrix": transition_matrix}
    given["sigma_dof"] = sigma_dof
    _check_kind(info, *(key for key, value in given.items() if value is not None))
    key = info.noise_parameter
    source = check_noise_source(given[key], key=key)
    if transition_matrix is None:
        return source, None
    if source is not None:
        raise TypeError(
            "Pass either q or transition_matrix, not both: they are two "
            "descriptions of the label noise."
        )
    matrix = check_transition_matrix(transition_matrix).copy()
    matrix.setflags(write=False)
    return None, matrix


def _check_metric_kwargs(metric_kwargs: dict[str, Any] | None) -> dict[str, Any]:
    """A private copy of the metric's further keyword arguments, checked."""
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
    return metric_kwargs


def _check_counts(metric_kwargs: dict[str, Any], source: Any, sigma_dof: Any) -> bool:
    """Whether ``noise="poisson"`` is among the metric's options, which then
    takes no ``sigma`` or ``sigma_dof`` source."""
    if "noise" not in metric_kwargs:
        return False
    counts = check_regression_noise(metric_kwargs["noise"]) == "poisson"
    if counts and (source is not None or sigma_dof is not None):
        raise TypeError(
            "Pass sigma (and sigma_dof) or noise='poisson', not both: with count "
            "labels each label's variance is estimated from the count itself."
        )
    return counts


def _check_signature(
    info: MetricInfo, metric_kwargs: dict, transition_matrix: Any
) -> None:
    """Check the options of a scorer against its metric's signature."""
    parameters = inspect.signature(info.function).parameters
    function = info.function.__name__
    unknown = sorted(set(metric_kwargs) - set(parameters))
    if unknown:
        raise TypeError(
            f"{function} got unexpected keyword argument(s) {unknown}; it "
            f"accepts {sorted(set(parameters) - _RESERVED)}."
        )
    if transition_matrix is not None and "transition_matrix" not in parameters:
        raise TypeError(
            f"{function} does not accept a transition_matrix; use q (a flip "
            "probability, constant or per sample)."
        )


def _cached_response(method_caller: Any, estimator: Any, method: str, X: Any) -> Any:
    """``estimator.<method>(X)``, once per fold of scikit-learn's multimetric
    scoring (the full ``predict_proba`` matrix under a key of its own)."""
    if method_caller is None:
        return getattr(estimator, method)(X)
    if method == "predict":
        return method_caller(estimator, "predict", X, pos_label=None)
    cache = None
    if (
        isinstance(method_caller, partial)
        and method_caller.func is _cached_call
        and method_caller.args
        and isinstance(method_caller.args[0], dict)
    ):
        cache = method_caller.args[0]
    if cache is None:
        return getattr(estimator, method)(X)
    if _FULL_PROBA_KEY not in cache:
        classes = getattr(estimator, "classes_", None)
        as_is = classes is not None and type_of_target(classes) != "binary"
        if as_is and method in cache:
            cache[_FULL_PROBA_KEY] = cache[method]
        else:
            cache[_FULL_PROBA_KEY] = getattr(estimator, method)(X)
            if as_is:
                cache[method] = cache[_FULL_PROBA_KEY]
    return cache[_FULL_PROBA_KEY]


def _to_numpy(array: Any) -> np.ndarray:
    if hasattr(array, "to_numpy") and not isinstance(array, np.ndarray):
        array = array.to_numpy()
    return np.asarray(array)


def _scoring_labels(classes: Any, y_true: Any, y_pred: Any) -> np.ndarray:
    """The model's ``classes``, with any other label of the fold appended."""
    classes = np.asarray(classes)
    known = classes.tolist()
    extra: list = []
    for array in (y_true, y_pred):
        for value in np.unique(_to_numpy(array).ravel()).tolist():
            if value not in known and value not in extra:
                extra.append(value)
    if not extra:
        return classes
    try:
        return np.asarray(sorted(known + extra))
    except TypeError:  # labels of types that do not sort together
        return np.asarray(known + extra, dtype=object)


def _positive_column(
    y_true: Any, proba: np.ndarray, classes: Any, kwargs: dict[str, Any]
) -> np.ndarray:
    """The ``pos_label`` column of two probability columns; sets ``pos_label``."""
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
            f"y_pred has 2 probability columns but classes has {classes.size} entries."
        )
    pos_label = kwargs.get("pos_label")
    if pos_label is None:
        pos_label = classes[-1]
    matches = [i for i, c in enumerate(classes.tolist()) if c == pos_label]
    if not matches:
        raise ValueError(
            f"pos_label={pos_label!r} is not one of the classes {classes.tolist()}."
        )
    kwargs.pop("labels", None)
    kwargs["pos_label"] = (
        pos_label.item() if isinstance(pos_label, np.generic) else pos_label
    )
    return proba[:, matches[0]]


def _prepare_probabilities(
    binary_proba: str, y_true: Any, y_proba: Any, classes: Any, kwargs: dict[str, Any]
) -> Any:
    """A ``predict_proba`` response as the metric takes it (record's
    ``binary_proba``); completes ``kwargs`` with ``labels`` (or ``pos_label``)."""
    proba = _to_numpy(y_proba)
    if classes is None and kwargs.get("labels") is not None:
        classes = kwargs["labels"]
    binary = proba.ndim == 2 and proba.shape[1] == 2
    if binary and binary_proba == "pos_label":
        return _positive_column(y_true, proba, classes, kwargs)
    labelled = {
        "matrix": True,
        "pos_label": proba.ndim == 2,
        "greater_class": binary,
    }[binary_proba]
    if labelled and classes is not None and "labels" not in kwargs:
        kwargs["labels"] = np.asarray(classes)
    return proba[:, 1] if binary and binary_proba == "greater_class" else proba


def _value_repr(value: Any) -> str:
    """Repr of an option that evaluates back to an equivalent value."""
    if isinstance(value, np.ndarray):
        return repr(value.tolist())
    if isinstance(value, np.generic):
        return repr(value.item())
    return repr(value)


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
            proba = info.response_method == "predict_proba"
            raise ValueError(
                f"response_method for the {info.name!r} metric must be "
                f"{info.response_method!r} (the metric takes "
                f"{'probabilities' if proba else 'predictions'}); got "
                f"{response_method!r}."
            )
        source, transition_matrix = _check_noise_options(
            info, sigma, q, transition_matrix, sigma_dof
        )
        estimand = info.check_estimand(estimand)  # "auto" resolved once
        key = info.noise_parameter
        sigma_dof = check_noise_source(sigma_dof, key="sigma_dof")
        offsets = {"sigma_shared": sigma_shared, "sigma_shared_dof": sigma_shared_dof}
        for name, value in offsets.items():
            if value is not None:
                _check_offsets(info, name)
            offsets[name] = check_noise_source(value, key=name)
        if not isinstance(output, str) or output not in _OUTPUTS:
            raise ValueError(
                f"output must be one of {_OUTPUTS}: 'expected' returns a float, "
                f"'all' a dict of expected, variance and nominal; got {output!r}."
            )
        test_set_sampling = check_test_set_sampling(test_set_sampling)
        metric_kwargs = _check_metric_kwargs(metric_kwargs)
        counts = _check_counts(metric_kwargs, source, sigma_dof)

        self.metric = info.name
        self.greater_is_better = bool(greater_is_better)
        self.response_method = info.response_method
        self.requires_noise = key
        self.sigma = source if key == "sigma" else None
        self.q = source if key == "q" else None
        self.transition_matrix = transition_matrix
        self.estimand = estimand
        self.output = output
        self.sigma_dof = sigma_dof
        self.sigma_shared = offsets["sigma_shared"]
        self.sigma_shared_dof = offsets["sigma_shared_dof"]
        self.test_set_sampling = test_set_sampling
        self.metric_kwargs = metric_kwargs
        # The requests of the ``score`` method, as {param: alias}.
        self._score_request: dict[str, Any] = {}
        if source is None and transition_matrix is None and not counts:
            self._score_request[key] = True
        if key == "sigma" and sigma_dof is None and not counts:
            self._score_request["sigma_dof"] = True
        if self.sigma_shared is not None:  # its batches are the routed groups
            self._score_request["groups"] = True
        _check_signature(info, metric_kwargs, transition_matrix)

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
        return _takes(self._info, "sample_weight")

    def _routing_repr(self) -> str:
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
        parts.append(f"estimand={self.estimand!r}")
        if self.output != "expected":
            parts.append(f"output={self.output!r}")
        if self.sigma_dof is not None:
            parts.append(f"sigma_dof={_source_repr(self.sigma_dof)}")
        for key in ("sigma_shared", "sigma_shared_dof"):
            if getattr(self, key) is not None:
                parts.append(f"{key}={_source_repr(getattr(self, key))}")
        if self.test_set_sampling != TEST_SET_SAMPLING:
            parts.append(f"test_set_sampling={self.test_set_sampling!r}")
        parts.extend(f"{k}={_value_repr(v)}" for k, v in self.metric_kwargs.items())
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
        requests = dict(self._score_request)
        if "sample_weight" not in requests and self._accept_sample_weight():
            requests["sample_weight"] = None  # an error if passed, as scikit-learn's
        for param, alias in requests.items():
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
        if not _routing_enabled():
            raise RuntimeError(
                "set_score_request is only available when metadata routing is "
                "enabled: call sklearn.set_config(enable_metadata_routing=True) "
                "(or use `with sklearn.config_context(enable_metadata_routing="
                "True):`)."
            )
        given = {"sigma": sigma, "q": q, "sample_weight": sample_weight}
        given.update(sigma_dof=sigma_dof, groups=groups, sigma_shared=sigma_shared)
        given["sigma_shared_dof"] = sigma_shared_dof
        changes = {k: v for k, v in given.items() if v is not UNCHANGED}
        for key in changes:
            if key != "sample_weight":  # every metric takes sample_weight
                self._check_request(key)
        probe = MetadataRequest(owner=self)  # validates the aliases
        for param, alias in changes.items():
            probe.score.add_request(param=param, alias=alias)
        self._score_request = {**self._score_request, **probe.score.requests}
        return self

    def _check_request(self, key: str) -> None:
        """Raise when the scorer cannot take ``key`` from metadata."""
        if key in ("groups", "sigma_shared", "sigma_shared_dof"):
            _check_offsets(self._info, key)
        else:
            _check_kind(self._info, key)
        if key in ("sigma", "q") and self.transition_matrix is not None:
            raise ValueError(
                "This scorer uses a constant transition_matrix, so it takes no "
                "q from metadata; build it without transition_matrix to route q."
            )
        if getattr(self, key, None) is not None:
            raise ValueError(
                f"This scorer reads {key} from its own source ({key}="
                f"{_source_repr(getattr(self, key))}), so it cannot also take {key} "
                f"from metadata; build it with {key}=None to route {key}."
            )

    def _missing_metadata_message(self) -> str:
        """Why the scorer got no routed noise, and what to do."""
        key = self.requires_noise
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
        return message + (
            "Alternatively give the scorer its own source: make_noisy_scorer("
            f"{self.metric!r}, {alternatives})."
        )

    # ------------------------------------------------------------- scoring
    def _noise_kwargs(
        self, sigma: Any, q: Any, transition_matrix: Any, X: Any, y: Any
    ) -> dict[str, Any]:
        """The noise arguments of the metric, from the scorer's source or the call."""
        key = self.requires_noise
        if self._counts:
            if sigma is not None:
                raise TypeError(
                    f"{self!r} estimates each count's variance from the count: "
                    "do not pass sigma."
                )
            return {}
        noise = {"sigma": sigma, "q": q, "transition_matrix": transition_matrix}
        _check_kind(self._info, *(k for k, v in noise.items() if v is not None))
        given = sigma if key == "sigma" else q
        if self.transition_matrix is not None:
            if given is not None or transition_matrix is not None:
                raise TypeError(
                    "This scorer uses its constant transition_matrix; do not also "
                    "pass q or transition_matrix."
                )
            return {"transition_matrix": self.transition_matrix}
        if transition_matrix is not None:
            if given is not None:
                raise TypeError("Pass either q or transition_matrix, not both.")
            if self.q is not None:
                raise TypeError(
                    f"This scorer reads q from its own source (q={_source_repr(self.q)}"
                    "); do not also pass transition_matrix."
                )
            return {"transition_matrix": transition_matrix}
        missing = (
            f"{self!r} takes {key} from metadata: pass {key}= to score_predictions, "
            f"or build the scorer with its own {key} source (a constant, a column "
            "name of X or a callable)."
        )
        source = getattr(self, key)
        return {key: resolve_noise_source(key, source, given, X, y, missing=missing)}

    def _metric_call(
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
    ) -> tuple[Any, dict[str, Any]]:
        """The metric's input and keyword arguments, every estimand's alike.

        ``groups`` alone (a group splitter's) does not reach the metric: the
        batch offsets need ``sigma_shared`` too.
        """
        info = self._info
        kwargs: dict[str, Any] = dict(self.metric_kwargs)
        kwargs.update(self._noise_kwargs(sigma, q, transition_matrix, X, y_true))
        if sigma_dof is not None:
            _check_kind(info, "sigma_dof")
        options = {"sigma_dof": sigma_dof, "sigma_shared": sigma_shared}
        options["sigma_shared_dof"] = sigma_shared_dof
        for key, given in options.items() if self.requires_noise == "sigma" else ():
            if getattr(self, key) is None and given is None:
                continue
            value = resolve_noise_source(
                key, getattr(self, key), given, X, y_true, missing=""
            )
            if key == "sigma_shared":  # its batches: the routed groups
                kwargs.update(sigma_shared=value, groups=groups)
            elif _takes(info, key):
                kwargs[key] = value
        if sample_weight is not None:
            kwargs["sample_weight"] = sample_weight
        if self.response_method == "predict_proba":
            y_pred = _prepare_probabilities(
                info.binary_proba, y_true, y_pred, classes, kwargs
            )
        elif classes is not None and "labels" not in kwargs and _takes(info, "labels"):
            kwargs["labels"] = _scoring_labels(classes, y_true, y_pred)
        return y_pred, kwargs

    def _evaluate(
        self, y_true: Any, y_pred: Any, kwargs: dict[str, Any], estimand: str
    ) -> NoisyScore:
        """The metric of ``estimand`` on the input of :meth:`_metric_call`."""
        info = self._info
        n_samples = _num_samples(y_true)
        if n_samples < info.min_samples:
            # NaN with a warning, as scikit-learn's r2_score of one sample.
            warn(
                f"{info.display_name} is not defined on fewer than {info.min_samples} "
                f"samples; got {n_samples}: the score is NaN, as scikit-learn's.",
                UndefinedMetricWarning,
            )
            nan = float("nan")
            return NoisyScore(info.name, nan, nan, nan, n_samples, estimand=estimand)
        score = info.function(y_true, y_pred, **kwargs, estimand=estimand)
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
        test_set_sampling: Any = False,
        known: dict[str, NoisyScore] | None = None,
        **options: Any,
    ) -> dict[str, NoisyScore | Exception]:
        """``{estimand: score or the exception it raised}``, the input prepared once.

        With ``test_set_sampling``, the ``known`` scores (pooled from folds) only
        get their sampling.
        """
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
                    call = {**kwargs, "test_set_sampling": test_set_sampling}
                    scores[estimand] = self._evaluate(y_true, y_pred, call, estimand)
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
        kwargs = self._with_sampling(kwargs, self.test_set_sampling)
        return self._evaluate(y_true, y_pred, kwargs, self.estimand)

    def _with_sampling(self, kwargs: dict[str, Any], option: Any) -> dict[str, Any]:
        """``kwargs`` with the metric's ``test_set_sampling=option``."""
        if _takes(self._info, "test_set_sampling"):
            return {**kwargs, "test_set_sampling": option}
        return kwargs

    def _estimator_score(
        self,
        method_caller: Any,
        estimator: Any,
        X: Any,
        y: Any,
        metadata: dict,
        test_set_sampling: Any,
    ) -> NoisyScore:
        """The metric of a fitted estimator; ``method_caller`` may cache responses."""
        key = self.requires_noise
        allowed = {key, "sample_weight"}
        if key == "sigma":  # groups: the batches of the shared offsets only
            allowed |= {"sigma_dof", "sigma_shared", "sigma_shared_dof"}
            if self.sigma_shared is not None or "sigma_shared" in metadata:
                allowed.add("groups")
        unknown = sorted(set(metadata) - allowed)
        if unknown:
            raise TypeError(
                f"{self!r} got unexpected metadata {unknown}; it accepts "
                f"{sorted(allowed)}."
            )
        routed = getattr(self, key) is None and self.transition_matrix is None
        if routed and not self._counts and metadata.get(key) is None:
            raise MissingNoiseError(self._missing_metadata_message())
        if getattr(estimator, self.response_method, None) is None:
            raise TypeError(
                f"The {self.metric!r} scorer calls {self.response_method}, which "
                f"{type(estimator).__name__} does not have."
            )
        y_pred = _cached_response(method_caller, estimator, self.response_method, X)
        y_pred, kwargs = self._metric_call(
            y,
            y_pred,
            X=X,
            classes=getattr(estimator, "classes_", None),
            **metadata,
        )
        kwargs = self._with_sampling(kwargs, test_set_sampling)
        return self._evaluate(y, y_pred, kwargs, self.estimand)

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
        return self._estimator_score(
            None, estimator, X, y, metadata, self.test_set_sampling
        )

    def _score(
        self, method_caller: Any, estimator: Any, X: Any, y_true: Any, **kwargs: Any
    ) -> float | dict[str, float]:
        # scikit-learn's multimetric scoring shares the ``method_caller``'s cache;
        # a float for scikit-learn: the sampling part would go unread
        score = self._estimator_score(
            method_caller, estimator, X, y_true, kwargs, False
        )
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
        return self._score(None, estimator, X, y, **metadata)


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
    sigma_shared : float, dict, str, callable or None, default=None
        Regression: the SD of an offset shared by the labels of one batch (a
        constant, ``{batch: SD}``, a column of ``X`` or a callable); the batches
        are the routed ``groups`` (:ref:`shared_offsets`).
    sigma_shared_dof : float, str, callable or None, default=None
        Regression: the degrees of freedom of an estimated ``sigma_shared``
        (``summarize_batches(...).sigma_shared_dof``), as for ``sigma_shared``;
        None: known (or routed with ``set_score_request(sigma_shared_dof=True)``).
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
