"""Paired difference of a metric between two models on the same noisy labels
(user guide: :ref:`formula_paired`)."""

from __future__ import annotations

import dataclasses
import functools
import inspect
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .._noisy_score import NoisyScore
from ..utils._arrays import (
    CHUNK_SIZE,
    check_finite,
    check_sample_weight,
    chunk_of,
    chunks,
)
from ..utils._noise import (
    PoissonNoise,
    check_noise_model,
    check_regression_noise,
    check_shared_offsets,
    check_sigma_dof,
)
from ..utils._sklearn_compat import _num_samples
from ..utils._validation import check_generator, check_positive_int, resolve_estimand
from ..utils._warnings import quiet, warn
from ._engines.counts.confusion_draws import draw_confusions
from ._engines.monte_carlo import _from_draws, monte_carlo_score
from ._engines.paired import _encode_chunk, flip_pair, pair_classes, regression_pair
from ._engines.regression.counts import count_paired_truth
from ._engines.regression.pivots import student_pivot
from ._engines.test_set_sampling import sampling_terms, with_test_set_sampling
from ._registry import MetricInfo, get_metric_info, get_metric_names
from ._response import metric_score, prepare_response

__all__ = ["expected_paired_difference"]

#: Random numbers drawn at a time (one batch of draws over one chunk).
_BATCH_FLOATS = 2**19


def _resolve_metric(metric: Any) -> tuple[str, dict[str, Any]]:
    """``(name, metric options)`` of a metric name or a scorer."""
    if hasattr(metric, "score_predictions"):  # its estimand is not the difference's
        return metric.metric, dict(getattr(metric, "metric_kwargs", None) or {})
    if isinstance(metric, str):
        return metric, {}
    raise TypeError(
        "metric must be a metric name such as 'mean_squared_error' or a "
        f"NoisyScorer; got {metric!r}."
    )


def _forward_score(
    info: MetricInfo,
    options: dict,
    y: Any,
    pred: Any,
    classes: Any = None,
    **noise: Any,
) -> NoisyScore:
    """The metric's forward score of ``pred`` with ``options`` and the ``noise``
    and weights given (None: not given), as the metric's scorer computes it."""
    kwargs = {**options, **{key: v for key, v in noise.items() if v is not None}}
    pred = prepare_response(info, y, pred, classes, kwargs)
    return metric_score(info, y, pred, kwargs, "forward", False)


def _monte_carlo_difference(
    info: MetricInfo,
    options: dict,
    y_true: Any,
    y_pred_a: Any,
    y_pred_b: Any,
    **noise: Any,
) -> NoisyScore:
    """Joint Monte Carlo: each label draw scored for A and for B at zero noise;
    ``noise``: the keywords of :func:`monte_carlo_score`, ``labels`` and the
    probability columns' ``classes``."""
    labels, classes = noise.pop("labels"), noise.pop("classes")
    zero = {info.noise_parameter: 0.0}

    def difference(y: Any, _placeholder: Any, **weight: Any) -> float:
        scores = [
            _forward_score(info, options, y, pred, classes=classes, **zero, **weight)
            for pred in (y_pred_a, y_pred_b)
        ]
        return scores[0].nominal - scores[1].nominal

    if info.noise_parameter == "q" and labels is None:
        labels = classes
        a, b = np.asarray(y_pred_a), np.asarray(y_pred_b)
        if labels is None and a.ndim == 1 and b.ndim == 1:
            labels = pair_classes(y_true, a, b)[3]
    # y_pred reaches the callable untouched: an empty placeholder per sample.
    placeholder = np.zeros((len(y_true), 0))
    score = monte_carlo_score(difference, y_true, placeholder, labels=labels, **noise)
    return dataclasses.replace(score, metric=f"{info.name}_difference")


def _regression_draws(
    job: tuple, shared: Any = None, counts: bool = False
) -> tuple[float, np.ndarray]:
    """``(nominal, draws)`` of a loss of A minus that of B from per-draw sums
    ``SSE_A``, ``SSE_B``, ``Σ w(y−c)``, ``Σ w(y−c)²`` (``c`` the weighted mean);
    ``job``: ``(info, (y_true, y_pred_a, y_pred_b), noise, n_draws, rng)``;
    ``shared``: with batch offsets; ``counts``: Poisson counts."""
    info, data, noise, n_draws, rng = job
    sigma, sample_weight = 1.0 if counts else noise["sigma"], noise["sample_weight"]
    y, a, b, s, weight, _ = regression_pair(*data, sigma, sample_weight)
    if counts:
        PoissonNoise.from_labels(y, counts=False)  # rates: finite, >= 0
        s = float(np.max(y, initial=0.0))  # no noise where every rate is 0
    n, k = y.shape
    w_all = np.ones(n) if weight is None else weight
    w_total = float(n) if weight is None else float(weight.sum())
    centre = np.zeros(k)
    for rows in chunks(n):
        centre += w_all[rows] @ y[rows]
    centre /= w_total

    def sums(size: int, rng: Any) -> np.ndarray:
        """The sums of ``size`` draws (``rng=None``: the labels as given)."""
        out = np.zeros((4, size, k))
        offsets = None
        if shared is not None and rng is not None:
            offsets = rng.standard_normal((size, shared.n_groups, k))
            offsets *= np.sqrt(shared.tau2)[:, None]
        for rows in chunks(n):
            w, shape = w_all[rows], (size, *y[rows].shape)
            if rng is None:
                labels = np.zeros(shape)
            elif counts:
                labels = rng.poisson(y[rows], size=shape) - y[rows]
            else:
                labels = rng.standard_normal(shape)
                labels *= chunk_of(s, rows)
                if offsets is not None:
                    labels += offsets[:, shared.codes[rows]]
            labels += y[rows] - centre
            for i, values in enumerate((a[rows] - centre, b[rows] - centre)):
                error = labels - values
                error *= error
                out[i] += np.einsum("dik,i->dk", error, w)
            out[2] += np.einsum("dik,i->dk", labels, w)
            labels *= labels
            out[3] += np.einsum("dik,i->dk", labels, w)
        return out

    def difference(sums: np.ndarray) -> np.ndarray:
        sst = sums[3] - sums[2] * sums[2] / w_total
        per_output = info.definition.streamed_difference(sums[0], sums[1], sst, w_total)
        return per_output.mean(axis=1)

    nominal = float(difference(sums(1, None))[0])
    if (s if isinstance(s, float) else float(np.max(s))) == 0.0 and shared is None:
        return nominal, np.empty(0)
    draws = np.empty(n_draws)  # a batch of draws over one chunk at a time
    size = max(1, min(n_draws, _BATCH_FLOATS // (min(n, CHUNK_SIZE) * k)))
    for start in range(0, n_draws, size):
        stop = min(start + size, n_draws)
        draws[start:stop] = difference(sums(stop - start, rng))
    return nominal, draws


def _binary_draws(job: tuple, pos_label: Any = 1) -> tuple[float, np.ndarray] | None:
    """``(nominal, draws)`` of a binary count metric of A minus that of B from
    drawn confusion matrices (``job`` as :func:`_regression_draws`); None unless
    binary with ``pos_label``."""
    info, data, noise, n_draws, rng = job
    pair = flip_pair(*data, noise, pos_label, binary=True)
    if pair is None:
        return None
    y, a, b, classes, weight, flips, pos = pair
    n = y.shape[0]
    w_total = float(n) if weight is None else float(weight.sum())

    def indices(rows: slice) -> tuple[np.ndarray, np.ndarray]:
        true, a_index, b_index = _encode_chunk(y, a, b, rows, classes)
        return true, 2 * (a_index == pos) + (b_index == pos)

    given, random = np.zeros((2, 4)), False
    for rows in chunks(n):
        true, column = indices(rows)
        np.add.at(given, (true, column), 1.0 if weight is None else weight[rows])
        pi = flips.probability(true, np.full_like(true, pos), rows)
        random = random or bool(np.any((pi > 0.0) & (pi < 1.0)))
    predicted = given.sum(axis=0)  # the same in every draw
    n_pred = (predicted[2:].sum(), predicted[1::2].sum())

    def difference(confusion: np.ndarray) -> np.ndarray:
        observed = confusion[..., pos, :].sum(-1)
        # exact ends: no observed negative (positive) means S = W (S = 0)
        no_negative = confusion[..., 1 - pos, :].sum(-1) == 0
        observed = np.where(
            no_negative, w_total, np.where(observed == 0, 0.0, observed)
        )
        values = []
        for n_pos, hits in zip(n_pred, ([2, 3], [1, 3]), strict=True):
            alpha, beta = info.definition.affine(observed, n_pos, w_total)
            values.append(alpha + beta * confusion[..., pos, hits].sum(-1))
        return values[0] - values[1]

    nominal = float(difference(given))
    if not random:
        return nominal, np.empty(0)
    draws = draw_confusions(
        indices, n, flips, weight=weight, n_draws=n_draws, rng=rng, n_columns=4
    )
    return nominal, difference(draws)


def _joint_monte_carlo(
    info: MetricInfo, data: tuple, given: dict, n_draws: Any, seed: Any, counts: bool
) -> NoisyScore:
    """The joint Monte Carlo of ``data = (y_true, y_pred_a, y_pred_b)``: streamed
    where the definition allows, else scorer by scorer; without random labels
    the nominal difference, exactly."""
    n_draws = check_positive_int(n_draws, name="n_draws", minimum=2)
    rng = check_generator(seed)
    options, shared = given["options"], given["shared"]
    job = (info, data, given, n_draws, rng)
    definition, result = info.definition, None
    if getattr(definition, "streamed_difference", None) is not None and not options:
        result = _regression_draws(job, shared=shared, counts=counts)
    if result is None and shared is not None:
        raise ValueError(
            f"The paired {info.name} difference under shared offsets is offered "
            "without metric options only."
        )
    if getattr(definition, "exact_binary", False) and set(options) <= {"pos_label"}:
        if not definition.fixed_denominator:
            result = _binary_draws(job, **options)
    if result is None:
        skip = ("options", "shared", "sigma_dof")
        noise = {k: v for k, v in given.items() if k not in skip}
        return _monte_carlo_difference(
            info, options, *data, n_draws=n_draws, random_state=seed, **noise
        )
    nominal, draws = result
    n, metric = _num_samples(data[0]), f"{info.name}_difference"
    if draws.size == 0:
        return NoisyScore(metric, nominal, 0.0, nominal, n, "exact")
    return _from_draws(metric, nominal, n, draws)


def _without_moments(
    info: MetricInfo, data: tuple, given: dict, monte_carlo: Callable
) -> NoisyScore | None:
    """The difference where its mean or variance does not exist (the definition's
    ``paired_existence``), with a warning, else None (:ref:`paired_existence`)."""
    options, sigma = given["options"], given["sigma"]
    sample_weight = given["sample_weight"]
    weights = {"sample_weight": sample_weight}
    y, a, b, s, weight, multioutput = regression_pair(
        *data, sigma, sample_weight, options.get("multioutput")
    )
    existence = info.definition.paired_existence(
        y, a, b, s, weight, None if isinstance(multioutput, str) else multioutput
    )
    if existence.variance_exists:
        return None
    warn(existence.message, UserWarning)
    with quiet():  # the single models' own warnings
        scores = [
            _forward_score(info, options, data[0], p, sigma=sigma, **weights)
            for p in data[1:]
        ]
    nominal = scores[0].nominal - scores[1].nominal
    metric, n = f"{info.name}_difference", y.shape[0]
    expected = existence.expected
    if existence.mean_exists:
        expected = scores[0].expected - scores[1].expected
    if not existence.mean_exists or math.isfinite(expected):
        return NoisyScore(metric, expected, math.inf, nominal, n, "exact")
    return dataclasses.replace(
        monte_carlo(),
        variance=math.inf,
        standard_error=math.inf,
        variance_standard_error=math.nan,
    )


def _paired_terms(arguments: dict[str, Any], score: NoisyScore) -> tuple | None:
    """The per-sample terms of A less those of B, from the metric's own sampling
    rule; None (the bootstrap) where it has none."""
    name, options = _resolve_metric(arguments["metric"])
    function = get_metric_info(name).function
    accepted = inspect.signature(function).parameters
    kwargs = {**options, "estimand": score.estimand}
    keys = ("sigma", "q", "transition_matrix", "labels", "sample_weight", "noise")
    for key in (*keys, "groups", "sigma_shared"):
        if arguments.get(key) is not None and key in accepted:
            kwargs[key] = arguments[key]
    if arguments.get("classes") is not None and "labels" in accepted:
        kwargs["labels"] = arguments["classes"]
    y_true, parts = arguments["y_true"], []
    with quiet():  # the single models' own warnings
        for pred in (arguments["y_pred_a"], arguments["y_pred_b"]):
            single = function(y_true, pred, **kwargs, test_set_sampling=False)
            parts.append(sampling_terms(function, single, y_true, pred, **kwargs))
            if parts[-1] is None:
                return None
    (h_a, weight, method), (h_b, _, _) = parts
    return h_a - h_b, weight, 1.0, method, _own_label_variance(arguments, score)


def _own_label_variance(arguments: dict[str, Any], score: NoisyScore) -> Any:
    """With batch offsets, the variance of independent errors of the same total SD
    (None otherwise, user guide: :ref:`shared_offsets`)."""
    groups, sigma_shared = arguments.get("groups"), arguments.get("sigma_shared")
    y_true = arguments["y_true"]
    shared = check_shared_offsets(groups, sigma_shared, _num_samples(y_true))
    if score.estimand == "forward" or shared is None:
        return None
    sigma = np.asarray(arguments["sigma"], dtype=float)
    tau2 = shared.per_sample()
    total = np.sqrt(np.square(sigma) + (tau2[:, None] if sigma.ndim == 2 else tau2))
    with quiet():
        independent = expected_paired_difference(
            y_true,
            arguments["y_pred_a"],
            arguments["y_pred_b"],
            metric=arguments["metric"],
            sigma=total,
            sample_weight=arguments.get("sample_weight"),
            estimand=score.estimand,
        )
    return independent.variance


@with_test_set_sampling(_paired_terms, label_arguments=("y_true",), data_arguments=3)
def expected_paired_difference(
    y_true: Any,
    y_pred_a: Any,
    y_pred_b: Any,
    *,
    metric: Any,
    sigma: Any = None,
    q: Any = None,
    transition_matrix: Any = None,
    labels: Any = None,
    classes: Any = None,
    sample_weight: Any = None,
    n_draws: int = 1000,
    random_state: Any = 0,
    estimand: str = "auto",
    groups: Any = None,
    sigma_shared: Any = None,
    sigma_dof: Any = None,
    sigma_shared_dof: Any = None,
    noise: str = "gaussian",
) -> NoisyScore:
    """Expected difference ``metric(A) − metric(B)`` of two models on the same labels.

    Exact or by a joint Monte Carlo on the same label draws (the noise is
    shared); read more in the :ref:`User Guide <formula_paired>`.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,) or (n_samples, n_outputs)
        Best-known labels.

    y_pred_a, y_pred_b : array-like
        The two models' responses: predictions, or class probabilities for
        Brier score and log-loss.

    metric : str or NoisyScorer
        A metric name (``"mean_squared_error"``, ``"accuracy"``, ...) or a
        :class:`~sklearn_noisy.metrics.NoisyScorer`, whose metric options are
        used (not its estimand).

    sigma : float or array-like of shape (n_samples,), default=None
        Standard error of each regression label (not with
        ``noise="poisson"``).

    q : float or array-like of shape (n_samples,), default=None
        Flip probability of each class label (uniform over the other classes).

    transition_matrix : array-like of shape (n_classes, n_classes), default=None
        Row-stochastic label transition matrix in the order of ``labels``.

    labels : array-like, default=None
        The classes (default: the sorted union of the three label arrays).

    classes : array-like, default=None
        The classes of the probability columns, for Brier score and log-loss
        (default: ``labels``, or the classes of ``y_true``).

    sample_weight : array-like of shape (n_samples,), default=None
        Sample weights, as in scikit-learn's metrics.

    n_draws : int, default=1000
        Label draws of the Monte Carlo path.

    random_state : int, Generator or None, default=0
        Seed of the Monte Carlo path.

    estimand : {"auto", "truth", "forward"}, default="auto"
        ``"truth"``: against the true values, where the metric has a paired
        truth kernel (no metric options); ``"forward"``: ``y_true`` exact;
        ``"auto"``: truth where offered (:ref:`estimands`).

    groups, sigma_shared : default=None
        Regression: the batch of each label and the SD of a batch's shared
        offset (:ref:`shared_offsets`).

    sigma_dof, sigma_shared_dof : default=None
        Degrees of freedom of an estimated ``sigma`` (a scalar or one per
        sample) and ``sigma_shared`` (one number), as the regression metrics
        take them; None: known. They change no moment; the truth interval
        takes Student's quantiles (:ref:`paired_sigma_dof`).

    noise : {"gaussian", "poisson"}, default="gaussian"
        ``"poisson"``: ``y_true`` are counts, for the MSE, RMSE and R²
        (:ref:`poisson_noise`).

    Returns
    -------
    score : NoisyScore
        ``metric`` is ``"<metric>_difference"``; ``nominal`` is the difference
        on the labels as given.

    See Also
    --------
    sklearn_noisy.model_selection.compare_estimators : Paired comparison of
        cross-validated estimators.

    Examples
    --------
    >>> from sklearn_noisy.metrics import expected_paired_difference
    >>> d = expected_paired_difference([1.0, 2.0, 3.0, 4.0], [1.1, 2.1, 2.8, 4.2],
    ...     [1.0, 2.3, 3.1, 3.6], metric="mean_squared_error", sigma=0.5)
    >>> round(d.expected, 6), round(d.variance, 6)
    (-0.04, 0.03125)
    """
    if estimand not in ("auto", "forward", "truth"):
        raise ValueError(
            "estimand must be 'auto', 'forward' or 'truth' for a paired "
            f"difference; got {estimand!r}."
        )
    name, options = _resolve_metric(metric)
    info = get_metric_info(name)
    counts = _check_counts(info, options, noise, sigma, sigma_dof)
    if estimand == "auto":
        offered = info.paired_estimands({**options, "noise": counts and "poisson"})
        estimand = resolve_estimand(estimand, offered)
    # the noise must be of the metric's kind
    flips = q is not None or transition_matrix is not None
    if info.noise == "sigma" and flips and not counts:
        raise TypeError(f"{info.name!r} is a regression metric: pass sigma, not q.")
    for key, value in (("sigma", sigma), ("sigma_dof", sigma_dof)):
        if info.noise != "sigma" and value is not None:
            raise TypeError(
                f"{info.name!r} is a classification metric: pass q, not {key}."
            )
    if info.noise != "sigma":
        check_noise_model(q, transition_matrix)
    n = _num_samples(y_true)
    for value, pred in ((y_pred_a, "y_pred_a"), (y_pred_b, "y_pred_b")):
        array = np.asarray(value)
        if array.dtype.kind == "f":
            check_finite(array, name=pred)
        if _num_samples(array) != n:
            raise ValueError(
                f"y_true and {pred} must have the same number of samples; got "
                f"{n} and {_num_samples(array)}."
            )
    check_sample_weight(sample_weight, n)
    if info.noise != "sigma" and (groups is not None or sigma_shared is not None):
        raise TypeError(
            f"{info.name!r} is a classification metric: groups and "
            "sigma_shared describe shared offsets of regression labels."
        )
    shared = check_shared_offsets(groups, sigma_shared, n, sigma_shared_dof)
    if counts and shared is not None:
        raise TypeError(
            "noise='poisson' does not model shared batch offsets; pass groups "
            "and sigma_shared with Gaussian label errors (sigma=)."
        )
    given = dict(
        sigma=sigma,
        q=q,
        transition_matrix=transition_matrix,
        labels=labels,
        sample_weight=sample_weight,
        classes=classes,
        options=options,
        shared=shared,
        sigma_dof=check_sigma_dof(sigma_dof, n),
    )
    data = (y_true, y_pred_a, y_pred_b)
    kernel = info.paired_truth if estimand == "truth" else info.paired
    result, method = None, "exact"
    if counts:
        y, a, b, _, weight, _ = regression_pair(*data, 1.0, sample_weight)
        labels_noise = PoissonNoise.from_labels(y, counts=estimand == "truth")
        if kernel is not None:  # σ̂² = ỹ (truth) or σ² = λ (forward)
            variances = labels_noise.variance_parts(slice(None), truth=True)[0]
            given["sigma"] = np.sqrt(variances)
        elif estimand == "truth":  # by the delta method
            difference = info.definition.streamed_difference
            found = count_paired_truth(difference, y, a, b, labels_noise, weight)
            if found is None:
                warn(
                    f"The {name} difference against the true rates is not "
                    "estimable: the estimated truth sum of squares it divides by "
                    "or takes the root of is <= 0 (the counts vary no more than "
                    "their noise), so the estimate and its variance are NaN.",
                    UserWarning,
                )
                found = (math.nan, math.nan, math.nan)
            result, method = (*found, y.shape[0]), "delta"
    if kernel is not None:
        result = kernel(*data, given)
    if result is not None:  # truth: Student's pivot for an estimated σ or τ
        dof = result[4:6] if len(result) > 4 and estimand == "truth" else [math.inf]
        pivot = None
        if math.isfinite(dof[0]):
            pivot = student_pivot(*dof)
        return NoisyScore(
            f"{name}_difference", *result[:4], method, estimand, label_pivot=pivot
        )
    if estimand == "truth":
        offered = " and ".join(
            repr(m) for m in get_metric_names() if get_metric_info(m).paired_truth
        )
        detail = f" with options {sorted(options)}" if kernel is not None else ""
        raise ValueError(
            f"{name}{detail} has no paired truth difference: estimand='truth' is "
            f"offered for {offered} without metric options; use "
            "estimand='forward'."
        )
    monte_carlo = functools.partial(
        _joint_monte_carlo, info, data, given, n_draws, random_state, counts
    )
    paired_existence = getattr(info.definition, "paired_existence", None)
    if not counts and shared is None and paired_existence is not None:
        result = _without_moments(info, data, given, monte_carlo)
    return monte_carlo() if result is None else result


def _check_counts(
    info: MetricInfo, options: dict[str, Any], noise: Any, sigma: Any, sigma_dof: Any
) -> bool:
    """Whether the labels are counts (``noise`` or the scorer's option, popped)."""
    kind = check_regression_noise(noise)  # then the scorer's option, popped
    if "poisson" not in (kind, check_regression_noise(options.pop("noise", kind))):
        return False
    definition = info.definition
    takes = "noise" in getattr(definition, "options", ())
    if not takes or not (info.paired or definition.streamed_difference):
        raise ValueError(
            f"{info.name!r} has no paired difference of count labels "
            "(noise='poisson'): it is offered for the mean squared error, its "
            "root and R²."
        )
    if options:
        raise ValueError(
            "The paired difference of count labels takes no metric options; "
            f"got {sorted(options)}."
        )
    for key, value in (("sigma", sigma), ("sigma_dof", sigma_dof)):
        if value is not None:
            raise TypeError(
                f"Pass {key} or noise='poisson', not both: with count labels each "
                "label's variance is estimated from the count itself."
            )
    return True
