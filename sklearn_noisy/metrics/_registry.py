"""The metric registry: one record per metric, read by every layer above it.

Each :class:`MetricInfo` holds the ``expected_*`` function itself, its
scikit-learn counterpart and the conventions the scorers, the cross-validator,
the paired comparison, the noise-resilience curve and the command line need.
Adding a metric means adding its function (or, for a fraction of explained
variation, its definition) and one record here; the public modules and the API
reference read the records (see the contributor page of the documentation,
"Adding a metric").
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
from ._count_definitions import COUNT_METRICS, CountMetric
from ._paired_kernels import (
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
from ._precision_recall import (
    count_metric_function,
    expected_balanced_accuracy_score,
    expected_f1_score,
    expected_precision_score,
    expected_recall_score,
)
from ._probabilistic import expected_brier_score_loss, expected_log_loss
from ._probabilistic_definitions import BRIER_SCORE_LOSS, LOG_LOSS, ProbabilisticLoss
from ._rates import (
    expected_false_negative_rate,
    expected_false_positive_rate,
    expected_negative_predictive_value,
    expected_specificity_score,
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
from ._regression_definitions import (
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
from ._roc_auc import expected_roc_auc_score

__all__ = ["MetricInfo", "get_metric_info", "get_metric_names", "metric_functions"]

_RESPONSE_METHODS = ("predict", "predict_proba")
_BINARY_PROBA = ("matrix", "pos_label", "greater_class")
#: Target types (:func:`sklearn.utils.multiclass.type_of_target`) for which a
#: metric can be among the cross-validator's defaults.
_TARGET_TYPES = ("continuous", "binary", "multiclass")


@dataclass(frozen=True)
class MetricInfo:
    """Everything the library needs to know about one metric.

    Parameters
    ----------
    name : str
        Canonical name, as in scikit-learn's metric (``"mean_squared_error"``,
        ``"r2"``, ``"accuracy"``, ...).
    function : callable
        The ``expected_*`` function, returning a
        :class:`~sklearn_noisy.NoisyScore`.
    sklearn_function : callable
        The scikit-learn metric it equals at zero noise (``nominal``).
    scorer_name : str
        Its name for :func:`~sklearn_noisy.metrics.get_noisy_scorer`, after
        scikit-learn's scorer names (losses start with ``neg_``).
    display_name : str
        A human-readable name for tables and plots.
    greater_is_better : bool
        Whether a larger value is a better model (False for losses).
    response_method : {"predict", "predict_proba"}
        The estimator method whose output the metric takes.
    noise : {"sigma", "flips"}
        The label-noise model: Gaussian errors or label flips.
    additive : bool
        Whether the metric is a mean of per-sample terms whose moments depend on
        that sample alone, so that folds with disjoint test sets pool as
        weighted sums of the fold results (the pooling section of the user
        guide). The others are recomputed on the concatenated out-of-fold
        predictions.
    default_targets : tuple of str
        Target types for which the cross-validator reports it by default.
    paired : callable or None
        The exact kernel of the paired difference ``metric(A) - metric(B)`` on
        the same noisy labels, ``paired(y_true, y_pred_a, y_pred_b, *, sigma, q,
        transition_matrix, labels, classes, sample_weight, options)`` returning
        ``(expected, variance, nominal, n_samples)``, or None where the options call for
        Monte Carlo. None: the joint Monte Carlo of
        :func:`~sklearn_noisy.metrics.expected_paired_difference`.
    paired_truth : callable or None
        The kernel of the paired difference against the true labels
        (``estimand="truth"``), with the signature of ``paired``; None: the
        metric has none.
    min_samples : int
        The fewest samples the metric is defined on (2 for R², as in
        scikit-learn, which gives NaN below); a cross-validation fold with
        fewer reports NaN for it.
    definition : RegressionLoss, ProbabilisticLoss or None
        The loss's definition, which the engines read
        (:mod:`~sklearn_noisy.metrics._regression_definitions`,
        :mod:`~sklearn_noisy.metrics._probabilistic_definitions`).
    value_range : tuple of float
        The values the metric can take; every interval is clipped to them
        (the loss's ``range`` for a regression metric).
    binary_proba : {"matrix", "pos_label", "greater_class"}
        A metric on probabilities: what a scorer makes of a binary problem's
        two ``predict_proba`` columns. ``"matrix"``: both, with ``labels`` set
        to the classes for any problem (log-loss); ``"pos_label"``: the column
        of ``pos_label`` (Brier score; a multiclass matrix gets ``labels``);
        ``"greater_class"``: the column of the greater class, with ``labels``
        (ROC AUC; a multiclass matrix passes as it is).
    interval_methods : tuple of str
        The intervals of a proportion over the test-set sampling the result
        offers (``NoisyScore.confidence_interval(method=...)``): ``"binomial"``
        and ``"wilson"`` for the accuracy, a mean of 0/1 hits.
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
    definition: RegressionLoss | ProbabilisticLoss | None = None
    value_range: tuple[float, float] = (0.0, 1.0)
    binary_proba: str = "matrix"
    interval_methods: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.noise not in NOISE_KINDS:
            raise ValueError(f"noise must be one of {NOISE_KINDS}; got {self.noise!r}.")
        if self.response_method not in _RESPONSE_METHODS:
            raise ValueError(
                f"response_method must be one of {_RESPONSE_METHODS}; got "
                f"{self.response_method!r}."
            )
        if self.binary_proba not in _BINARY_PROBA:
            raise ValueError(
                f"binary_proba must be one of {_BINARY_PROBA}; got "
                f"{self.binary_proba!r}."
            )
        if not set(self.default_targets) <= set(_TARGET_TYPES):
            raise ValueError(
                f"default_targets must be among {_TARGET_TYPES}; got "
                f"{self.default_targets!r}."
            )

    @property
    def estimands(self) -> tuple[str, ...]:
        """The values the function's ``estimand=`` accepts (set where it is defined)."""
        return self.function.estimands

    def check_estimand(self, estimand: Any) -> str:
        """``estimand`` if the metric offers it, else the metric's own ValueError."""
        return check_estimand(
            estimand,
            metric=self.name,
            supported=self.estimands,
            reason=getattr(self.definition, "truth_reason", None),
        )

    @property
    def noise_parameter(self) -> str:
        """The keyword that carries the noise: ``"sigma"`` or ``"q"``."""
        return "sigma" if self.noise == "sigma" else "q"


def _regression(
    definition: RegressionLoss,
    function: Callable,
    sklearn_function: Callable,
    **options: Any,
) -> MetricInfo:
    options.setdefault("greater_is_better", False)
    sign = "" if options["greater_is_better"] else "neg_"  # scikit-learn's names
    options.setdefault("scorer_name", f"{sign}expected_{definition.name}")
    options.setdefault("default_targets", ("continuous",))
    for estimand, key in (("forward", "paired"), ("truth", "paired_truth")):
        if estimand in definition.paired:
            difference = definition.paired[estimand]
            options[key] = functools.partial(paired_regression, difference)
    return MetricInfo(
        name=definition.name,
        additive=bool(definition.terms),  # a mean of per-sample terms
        function=function,
        sklearn_function=sklearn_function,
        response_method="predict",
        noise="sigma",
        definition=definition,
        value_range=definition.range,
        **options,
    )


def _probabilistic(
    definition: ProbabilisticLoss,
    function: Callable,
    sklearn_function: Callable,
    **options: Any,
) -> MetricInfo:
    return _classification(
        definition.name,
        function,
        sklearn_function,
        greater_is_better=False,
        value_range=(0.0, math.inf),
        response_method="predict_proba",
        paired=functools.partial(paired_probabilistic, definition),
        definition=definition,
        **options,
    )


def _classification(
    name: str, function: Callable, sklearn_function: Callable, **options: Any
) -> MetricInfo:
    options.setdefault("greater_is_better", True)
    options.setdefault("response_method", "predict")
    options.setdefault("additive", False)
    options.setdefault(
        "scorer_name",
        ("" if options["greater_is_better"] else "neg_") + f"expected_{name}",
    )
    return MetricInfo(
        name=name,
        function=function,
        sklearn_function=sklearn_function,
        noise="flips",
        **options,
    )


def _count(definition: CountMetric, **options: Any) -> MetricInfo:
    """The record of a count metric whose public function its definition builds.

    The name, the scikit-learn function and the range are the definition's
    (:func:`~._precision_recall.count_metric_function`).
    """
    return _classification(
        definition.name,
        count_metric_function(definition),
        definition.sklearn_function,
        value_range=definition.range,
        **options,
    )


#: The metrics, in the order tables and defaults list them.
_REGISTRY: dict[str, MetricInfo] = {
    info.name: info
    for info in (
        _regression(
            MEAN_SQUARED_ERROR,
            expected_mean_squared_error,
            sk.mean_squared_error,
            display_name="MSE",
        ),
        _regression(
            ROOT_MEAN_SQUARED_ERROR,
            expected_root_mean_squared_error,
            sk.root_mean_squared_error,
            display_name="RMSE",
        ),
        _regression(
            MEAN_ABSOLUTE_ERROR,
            expected_mean_absolute_error,
            sk.mean_absolute_error,
            display_name="MAE",
        ),
        _regression(
            R2,
            fraction_of_variance(R2),
            sk.r2_score,
            display_name="R²",
            greater_is_better=True,
            min_samples=2,
        ),
        _regression(
            EXPLAINED_VARIANCE,
            fraction_of_variance(EXPLAINED_VARIANCE),
            sk.explained_variance_score,
            display_name="Explained variance",
            greater_is_better=True,
            default_targets=(),
        ),
        # Percentage errors: not defaults (near-zero labels make them
        # depend on scikit-learn's floor of the denominator).
        _regression(
            MEAN_ABSOLUTE_PERCENTAGE_ERROR,
            expected_mean_absolute_percentage_error,
            sk.mean_absolute_percentage_error,
            display_name="MAPE",
            default_targets=(),
        ),
        _regression(
            MEAN_SQUARED_PERCENTAGE_ERROR,
            expected_mean_squared_percentage_error,
            mean_squared_percentage_error,
            display_name="MSPE",
            default_targets=(),
        ),
        _regression(
            ROOT_MEAN_SQUARED_PERCENTAGE_ERROR,
            expected_root_mean_squared_percentage_error,
            root_mean_squared_percentage_error,
            display_name="RMSPE",
            default_targets=(),
        ),
        _classification(
            "accuracy",
            expected_accuracy_score,
            sk.accuracy_score,
            display_name="Accuracy",
            default_targets=("binary", "multiclass"),
            paired=paired_accuracy,
            paired_truth=paired_accuracy_truth,
            interval_methods=("binomial", "wilson"),
        ),
        _classification(
            "balanced_accuracy",
            expected_balanced_accuracy_score,
            sk.balanced_accuracy_score,
            display_name="Balanced accuracy",
            default_targets=("binary", "multiclass"),
        ),
        _classification(
            "f1",
            expected_f1_score,
            sk.f1_score,
            display_name="F1",
            default_targets=("binary",),
        ),
        _classification(
            "precision",
            expected_precision_score,
            sk.precision_score,
            display_name="Precision",
            paired=paired_precision,
        ),
        _classification(
            "recall",
            expected_recall_score,
            sk.recall_score,
            display_name="Recall",
        ),
        _count(COUNT_METRICS["matthews_corrcoef"], display_name="MCC"),
        _count(COUNT_METRICS["cohen_kappa"], display_name="Cohen's kappa"),
        _probabilistic(
            BRIER_SCORE_LOSS,
            expected_brier_score_loss,
            sk.brier_score_loss,
            display_name="Brier score",
            scorer_name="neg_expected_brier_score",
            binary_proba="pos_label",
        ),
        _probabilistic(
            LOG_LOSS,
            expected_log_loss,
            sk.log_loss,
            display_name="Log-loss",
            default_targets=("binary", "multiclass"),
        ),
        _classification(
            "specificity",
            expected_specificity_score,
            specificity_score,
            display_name="Specificity",
        ),
        _classification(
            "negative_predictive_value",
            expected_negative_predictive_value,
            negative_predictive_value,
            display_name="NPV",
        ),
        _classification(
            "false_positive_rate",
            expected_false_positive_rate,
            false_positive_rate,
            display_name="FPR",
            greater_is_better=False,
        ),
        _classification(
            "false_negative_rate",
            expected_false_negative_rate,
            false_negative_rate,
            display_name="FNR",
            greater_is_better=False,
        ),
        _classification(
            "roc_auc",
            expected_roc_auc_score,
            sk.roc_auc_score,
            display_name="ROC AUC",
            response_method="predict_proba",
            binary_proba="greater_class",
            scorer_name="expected_roc_auc",
        ),
    )
}

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
        Only the metrics of this noise model (regression or classification);
        None for all.

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
        A metric name (``"mean_squared_error"``) or one of the ``expected_*``
        functions.

    Returns
    -------
    info : MetricInfo

    Raises
    ------
    ValueError
        For a name the registry does not hold.
    TypeError
        For any other object.

    Examples
    --------
    >>> from sklearn_noisy.metrics import get_metric_info
    >>> info = get_metric_info("r2")
    >>> info.function.__name__, info.greater_is_better, info.noise
    ('expected_r2_score', True, 'sigma')
    """
    if isinstance(metric, str):
        if metric in _REGISTRY:
            return _REGISTRY[metric]
        raise ValueError(f"metric must be one of {sorted(_REGISTRY)}; got {metric!r}.")
    if callable(metric):
        for info in _REGISTRY.values():
            if metric is info.function:
                return info
    raise TypeError(
        f"metric must be a metric name (one of {sorted(_REGISTRY)}) or one of "
        f"sklearn_noisy's expected_* functions; got {metric!r}."
    )


def metric_functions() -> dict[str, Callable[..., Any]]:
    """The ``expected_*`` function of every metric, by its name, in table order.

    The public modules export them from here (``sklearn_noisy.metrics`` and
    ``sklearn_noisy``), and the API reference lists them
    (``docs/_ext/registry_api.py``): a new metric's record is its only export.
    """
    return {info.function.__name__: info.function for info in _REGISTRY.values()}
