"""The metric registry: one :class:`MetricInfo` record per metric.

Every layer above (scorers, cross-validation, paired comparison, command line,
API reference) reads the records; adding a metric is its function and one record
(see "Adding a metric" on the contributor page).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sklearn import metrics as sk

from .._noisy_score import METRIC_INTERVALS, METRIC_RANGES
from ..utils._noise import NOISE_KINDS
from ..utils._validation import check_estimand
from ._classification import expected_accuracy_score
from ._definitions.counts import COUNT_METRICS, CountMetric
from ._definitions.probabilistic import BRIER_SCORE_LOSS, LOG_LOSS, ProbabilisticLoss
from ._definitions.regression import (
    EXPLAINED_VARIANCE,
    MEAN_ABSOLUTE_ERROR,
    MEAN_ABSOLUTE_PERCENTAGE_ERROR,
    MEAN_SQUARED_ERROR,
    MEAN_SQUARED_PERCENTAGE_ERROR,
    R2,
    ROOT_MEAN_SQUARED_ERROR,
    ROOT_MEAN_SQUARED_PERCENTAGE_ERROR,
    RegressionLoss,
)
from ._engines.paired import (
    paired_accuracy,
    paired_accuracy_truth,
    paired_precision,
    paired_probabilistic,
    paired_regression,
)
from ._percentage import (
    expected_mean_absolute_percentage_error,
    expected_mean_squared_percentage_error,
    expected_root_mean_squared_percentage_error,
    mean_squared_percentage_error,
    root_mean_squared_percentage_error,
)
from ._precision_recall import count_metric_function
from ._probabilistic import expected_brier_score_loss, expected_log_loss
from ._rates import (
    false_negative_rate,
    false_positive_rate,
    negative_predictive_value,
    specificity_score,
)
from ._regression import (
    expected_mean_absolute_error,
    expected_mean_squared_error,
    expected_root_mean_squared_error,
    fraction_of_variance,
)
from ._roc_auc import expected_roc_auc_score

__all__ = ["MetricInfo", "get_metric_info", "get_metric_names", "metric_functions"]

_CHOICES = {
    "noise": NOISE_KINDS,
    "response_method": ("predict", "predict_proba"),
    "binary_proba": ("matrix", "pos_label", "greater_class"),
}
#: Target types for which a metric can be among the cross-validator's defaults.
_TARGET_TYPES = ("continuous", "binary", "multiclass")


@dataclass(frozen=True)
class MetricInfo:
    """Everything the library needs to know about one metric.

    The contributor page describes each field ("The metric registry"); the
    record points at the metric's ``definition``, which the engines read.
    """

    name: str
    function: Callable[..., Any]
    sklearn_function: Callable[..., Any]
    scorer_name: str
    display_name: str
    greater_is_better: bool
    response_method: str
    noise: str
    additive: bool
    default_targets: tuple[str, ...] = ()
    paired: Callable[..., Any] | None = None
    paired_truth: Callable[..., Any] | None = None
    min_samples: int = 1
    definition: RegressionLoss | ProbabilisticLoss | CountMetric | None = None
    value_range: tuple[float, float] = (0.0, 1.0)
    binary_proba: str = "matrix"
    interval_methods: tuple[str, ...] = ()
    planned: bool = False

    def __post_init__(self) -> None:
        for field, choices in _CHOICES.items():
            if getattr(self, field) not in choices:
                raise ValueError(
                    f"{field} must be one of {choices}; got {getattr(self, field)!r}."
                )
        if not set(self.default_targets) <= set(_TARGET_TYPES):
            raise ValueError(
                f"default_targets must be among {_TARGET_TYPES}; got "
                f"{self.default_targets!r}."
            )

    @property
    def estimands(self) -> tuple[str, ...]:
        """The values the function's ``estimand=`` accepts."""
        return self.function.estimands

    def check_estimand(self, estimand: Any) -> str:
        """``estimand`` if the metric offers it, else the metric's own ValueError."""
        return check_estimand(
            estimand,
            metric=self.name,
            supported=self.estimands,
            reason=getattr(self.definition, "truth_reason", None),
        )

    def paired_estimands(self, options: Any = None) -> tuple[str, ...]:
        """The estimands of the paired difference (truth: without ``options``;
        with count labels, ``noise="poisson"``, also by the delta method)."""
        options = dict(options or {})
        counts = options.pop("noise", None) == "poisson"
        delta = counts and getattr(self.definition, "streamed_difference", None)
        truth = (self.paired_truth is not None or bool(delta)) and not options
        return ("forward", "truth") if truth else ("forward",)

    @property
    def noise_parameter(self) -> str:
        """The keyword that carries the noise: ``"sigma"`` or ``"q"``."""
        return "sigma" if self.noise == "sigma" else "q"


def _classification(
    name: str,
    function: Callable,
    sklearn_function: Callable,
    display_name: str,
    **options: Any,
) -> MetricInfo:
    """A record, with the defaults of a classification metric on predictions
    (a count metric's definition and range from :data:`COUNT_METRICS`)."""
    definition = options.pop("definition", COUNT_METRICS.get(name))
    options = {
        "greater_is_better": True,
        "response_method": "predict",
        "noise": "flips",
        "additive": False,
        "value_range": getattr(definition, "range", (0.0, 1.0)),
        **options,
    }
    sign = "" if options["greater_is_better"] else "neg_"  # scikit-learn's names
    options.setdefault("scorer_name", f"{sign}expected_{name}")
    return MetricInfo(
        name,
        function,
        sklearn_function,
        display_name=display_name,
        definition=definition,
        **options,
    )


def _regression(
    definition: RegressionLoss,
    function: Callable,
    sklearn: Callable,
    display_name: str,
    **options: Any,
) -> MetricInfo:
    """The record of a regression loss, from its definition."""
    for estimand, key in (("forward", "paired"), ("truth", "paired_truth")):
        if estimand in definition.paired:
            difference = definition.paired[estimand]
            options[key] = functools.partial(paired_regression, difference)
    options = {"greater_is_better": False, "default_targets": ("continuous",)} | options
    return _classification(
        definition.name,
        function,
        sklearn,
        display_name,
        noise="sigma",
        additive=bool(definition.terms),  # a mean of per-sample terms
        definition=definition,
        **options,
    )


def _count(
    name: str, display_name: str, sklearn: Callable | None = None, **options: Any
) -> MetricInfo:
    """The record of a count metric whose definition builds its function
    (``sklearn``: its counterpart, where not the definition's)."""
    definition = COUNT_METRICS[name]
    function = count_metric_function(definition)
    sklearn = sklearn or definition.sklearn_function
    return _classification(name, function, sklearn, display_name, **options)


def _probabilistic(
    definition: ProbabilisticLoss,
    function: Callable,
    sklearn: Callable,
    display_name: str,
    **options: Any,
) -> MetricInfo:
    """The record of a loss on predicted probabilities, from its definition."""
    return _classification(
        definition.name,
        function,
        sklearn,
        display_name,
        greater_is_better=False,
        value_range=(0.0, math.inf),
        response_method="predict_proba",
        paired=functools.partial(paired_probabilistic, definition),
        definition=definition,
        **options,
    )


#: The metrics, in the order tables and defaults list them.
_RECORDS = (
    _regression(
        MEAN_SQUARED_ERROR,
        expected_mean_squared_error,
        sk.mean_squared_error,
        "MSE",
        planned=True,
    ),
    _regression(
        ROOT_MEAN_SQUARED_ERROR,
        expected_root_mean_squared_error,
        sk.root_mean_squared_error,
        "RMSE",
        planned=True,
    ),
    _regression(
        MEAN_ABSOLUTE_ERROR, expected_mean_absolute_error, sk.mean_absolute_error, "MAE"
    ),
    _regression(
        R2,
        fraction_of_variance(R2),
        sk.r2_score,
        "R²",
        greater_is_better=True,
        min_samples=2,
        interval_methods=("log_complement",),
    ),
    _regression(
        EXPLAINED_VARIANCE,
        fraction_of_variance(EXPLAINED_VARIANCE),
        sk.explained_variance_score,
        "Explained variance",
        greater_is_better=True,
        default_targets=(),
    ),
    # Percentage errors are no defaults: near-zero labels make them depend
    # on scikit-learn's floor of the denominator.
    _regression(
        MEAN_ABSOLUTE_PERCENTAGE_ERROR,
        expected_mean_absolute_percentage_error,
        sk.mean_absolute_percentage_error,
        "MAPE",
        default_targets=(),
    ),
    _regression(
        MEAN_SQUARED_PERCENTAGE_ERROR,
        expected_mean_squared_percentage_error,
        mean_squared_percentage_error,
        "MSPE",
        default_targets=(),
    ),
    _regression(
        ROOT_MEAN_SQUARED_PERCENTAGE_ERROR,
        expected_root_mean_squared_percentage_error,
        root_mean_squared_percentage_error,
        "RMSPE",
        default_targets=(),
    ),
    _classification(
        "accuracy",
        expected_accuracy_score,
        sk.accuracy_score,
        "Accuracy",
        default_targets=("binary", "multiclass"),
        paired=paired_accuracy,
        paired_truth=paired_accuracy_truth,
        interval_methods=("binomial", "wilson"),
        planned=True,
    ),
    _count(
        "balanced_accuracy",
        "Balanced accuracy",
        default_targets=("binary", "multiclass"),
    ),
    _count("f1", "F1", default_targets=("binary",)),
    _count("precision", "Precision", paired=paired_precision),
    _count("recall", "Recall"),
    _count("matthews_corrcoef", "MCC"),
    _count("cohen_kappa", "Cohen's kappa"),
    _probabilistic(
        BRIER_SCORE_LOSS,
        expected_brier_score_loss,
        sk.brier_score_loss,
        "Brier score",
        scorer_name="neg_expected_brier_score",
        binary_proba="pos_label",
    ),
    _probabilistic(
        LOG_LOSS,
        expected_log_loss,
        sk.log_loss,
        "Log-loss",
        default_targets=("binary", "multiclass"),
    ),
    _count("specificity", "Specificity", specificity_score),
    _count("negative_predictive_value", "NPV", negative_predictive_value),
    _count("false_positive_rate", "FPR", false_positive_rate, greater_is_better=False),
    _count("false_negative_rate", "FNR", false_negative_rate, greater_is_better=False),
    _classification(
        "roc_auc",
        expected_roc_auc_score,
        sk.roc_auc_score,
        "ROC AUC",
        response_method="predict_proba",
        binary_proba="greater_class",
        scorer_name="expected_roc_auc",
    ),
)
_REGISTRY: dict[str, MetricInfo] = {info.name: info for info in _RECORDS}

METRIC_RANGES.update({name: info.value_range for name, info in _REGISTRY.items()})
METRIC_INTERVALS.update({name: i.interval_methods for name, i in _REGISTRY.items()})

#: The examples of the functions built here from their definitions, which
#: doctest would not find in the module that defines their body.
__test__ = {
    info.function.__name__: info.function
    for info in _REGISTRY.values()
    if getattr(info.function, "__module__", None) == __package__
}


def get_metric_names(*, noise: str | None = None) -> list[str]:
    """Names of the metrics in the registry, in table order.

    Parameters
    ----------
    noise : {"sigma", "flips"}, default=None
        Only the metrics of this noise model; None for all.

    Returns
    -------
    names : list of str

    Examples
    --------
    >>> from sklearn_noisy.metrics import get_metric_names
    >>> get_metric_names(noise="sigma")[:4]
    ['mean_squared_error', 'root_mean_squared_error', 'mean_absolute_error', 'r2']
    """
    if noise is not None and noise not in NOISE_KINDS:
        raise ValueError(f"noise must be one of {NOISE_KINDS} or None; got {noise!r}.")
    return [
        name for name, info in _REGISTRY.items() if noise is None or info.noise == noise
    ]


def get_metric_info(metric: Any) -> MetricInfo:
    """The registry record of a metric, by name or ``expected_*`` function.

    Parameters
    ----------
    metric : str or callable
        A metric name (``"mean_squared_error"``) or an ``expected_*`` function.

    Returns
    -------
    info : MetricInfo

    Examples
    --------
    >>> from sklearn_noisy.metrics import get_metric_info
    >>> info = get_metric_info("r2")
    >>> info.function.__name__, info.greater_is_better, info.noise
    ('expected_r2_score', True, 'sigma')
    """
    names = sorted(_REGISTRY)
    if isinstance(metric, str):
        if metric in _REGISTRY:
            return _REGISTRY[metric]
        scorers = {info.scorer_name: name for name, info in _REGISTRY.items()}
        hint = ""
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
        for info in _REGISTRY.values():
            if metric is info.function:
                return info
    raise TypeError(
        f"metric must be a metric name (one of {names}) or one of sklearn_noisy's "
        f"expected_* functions; got {metric!r}. For another metric use "
        "sklearn.metrics.make_scorer, or sklearn_noisy.metrics.monte_carlo_score "
        "to get its moments by simulation."
    )


def metric_functions() -> dict[str, Callable[..., Any]]:
    """The ``expected_*`` function of every metric, by its name, in table order."""
    return {info.function.__name__: info.function for info in _REGISTRY.values()}
