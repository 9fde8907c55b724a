"""Building noise-aware scorers: for a metric, or by scorer name.

:func:`make_noisy_scorer` builds a :class:`~sklearn_noisy.metrics.NoisyScorer` for
any metric of the registry with any noise source; :func:`get_noisy_scorer` gives
the named scorers (after scikit-learn's scorer names), which take their noise from
routed metadata.
"""

from __future__ import annotations

from typing import Any

from ._noisy_scorer import NoisyScorer
from ._registry import get_metric_names
from ._scorer_options import named_scorers
from ._scorer_routing import MissingNoiseError

__all__ = [
    "MissingNoiseError",
    "NoisyScorer",
    "get_noisy_scorer",
    "get_noisy_scorer_names",
    "make_noisy_scorer",
]


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
        Method of the estimator to score. ``None`` takes ``"predict_proba"`` for
        Brier score and log-loss and ``"predict"`` for the other metrics.

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
    scorers = named_scorers()
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
    return sorted(named_scorers())
