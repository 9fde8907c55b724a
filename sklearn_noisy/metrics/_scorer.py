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
    estimand : {"forward", "truth", "remeasurement"}, default="forward"
        Passed to the metric when it is not ``"forward"``: ``"truth"`` estimates
        the metric against the true values, ``"remeasurement"`` the metric
        expected when the samples are measured again, ``"forward"`` is the
        paper's expected metric if ``y_true`` were exact. The metric must offer
        it (``get_metric_info(metric).estimands``).
    output : {"expected", "all"}, default="expected"
        ``"expected"``: a call returns the expected value (a float, usable in
        :func:`~sklearn.model_selection.cross_val_score` and as a search's
        score). ``"all"``: a dict with ``"expected"``, ``"variance"`` and
        ``"nominal"``, so that :func:`~sklearn.model_selection.cross_validate`
        returns ``test_expected``, ``test_variance`` and ``test_nominal`` and a
        search can ``refit="expected"``. Such a scorer must be the whole
        ``scoring``: inside a dict or list of scorers scikit-learn needs floats,
        so use ``output="expected"`` there.
    sigma_dof : float, str, callable or None, default=None
        Regression metrics: the degrees of freedom of each ``sigma`` when it was
        estimated from a few readings (``n_i - 1``; ``inf`` or no value: σ
        known), as returned by
        :func:`~sklearn_noisy.preprocessing.summarize_repeats`. The same kinds
        of source as ``sigma``; with ``None`` it is requested as routed
        metadata and, when none arrives, σ is taken as known.
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
    test fold; a regression scorer also requests ``sigma_dof`` (optional), so
    ``params={"sigma": sigma, "sigma_dof": sigma_dof}`` passes the output of
    :func:`~sklearn_noisy.preprocessing.summarize_repeats` through. Without
    routing, scikit-learn hands such metadata to the estimator's ``fit``, which
    rejects it: enable routing, or use a constant, column or callable source.
    A scorer called without the noise it requests raises
    :class:`MissingNoiseError` (a ``ValueError``): scikit-learn's default
    ``error_score=np.nan`` turns it into NaN scores and a "Scoring failed"
    warning carrying its message; ``error_score="raise"`` stops the search.

    A classification scorer computes its metric over the fitted model's
    ``classes_`` (passed as ``labels``), also on a test fold that holds only
    some of them. With several scorers in ``cross_validate`` or a search, the
    model predicts once per fold for all of them.

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
    >>> get_noisy_scorer_names()[:3]
    ['expected_accuracy', 'expected_balanced_accuracy', 'expected_f1']
    """
    return sorted(named_scorers())
