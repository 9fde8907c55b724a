"""The docstrings of the count metrics' public functions (their
``{parameters}`` and ``{returns}`` filled by the functions' factory); a new
metric may write its own with :func:`function_doc` in its definition."""

from __future__ import annotations


def function_doc(
    name: str, summary: str, body: str, example: str, sklearn_name: str = "",
    options: str = "",
) -> str:  # fmt: skip
    """The docstring of the public function ``name``: ``{parameters}`` and
    ``{returns}`` are filled by the function's factory."""
    see_also = f"""
    See Also
    --------
    sklearn.metrics.{sklearn_name} : The metric on exact labels.
""" if sklearn_name else ""  # fmt: skip
    return f"""{summary}

    {body}

    Parameters
    ----------
    {{parameters}}{options}

    Returns
    -------
    {{returns}}
{see_also}
    Examples
    --------
    >>> from sklearn_noisy.metrics import {name}
    {example}
    """


_EXAMPLE = "y_true, y_pred = [0, 1, 1, 0, 1, 1], [0, 1, 0, 1, 1, 1]"
_BINARY = "Read more in the :ref:`User Guide <formula_binary_counts>`."
_RATES = "Read more in the :ref:`User Guide <rates>`."
PRECISION_DOC = function_doc(
    "expected_precision_score",
    "Expected precision, and its variance, under label flips.",
    f"""Its denominator, the predicted positives, is fixed: exact.
    {_BINARY}""",
    f""">>> {_EXAMPLE}
    >>> expected_precision_score(y_true, y_pred, q=0.1, estimand="forward")
    NoisyScore(metric='precision', expected=0.7, std=0.15, nominal=0.75, \
    n_samples=6, method='exact', estimand='forward', sampling_std=0.1897)""",
    "precision_score",
)
RECALL_DOC = function_doc(
    "expected_recall_score",
    "Expected recall, and its variance, under label flips.",
    f"""Exact sums over the joint law of TP and FN, or the delta method.
    {_BINARY}""",
    f""">>> {_EXAMPLE}
    >>> expected_recall_score(y_true, y_pred, q=0.1, estimand="forward")
    NoisyScore(metric='recall', expected=0.739034, std=0.1082, nominal=0.75, \
    n_samples=6, method='exact', estimand='forward', sampling_std=0.2259)""",
    "recall_score",
)
F1_DOC = function_doc(
    "expected_f1_score",
    "Expected F1 score, and its variance, under label flips.",
    f"""Exact sums over the joint law of TP and FN, or the delta method.
    {_BINARY}""",
    f""">>> {_EXAMPLE}
    >>> expected_f1_score(y_true, y_pred, q=0.1, estimand="forward").expected
    0.7118...""",
    "f1_score",
)
BALANCED_ACCURACY_DOC = function_doc(
    "expected_balanced_accuracy_score",
    "Expected balanced accuracy, and its variance, under label flips.",
    f"""Exact for binary labels; for multiclass labels the expectation is exact
    and the variance Monte Carlo.
    {_BINARY}""",
    """>>> y_true, y_pred = [0, 1, 0, 0, 1, 0], [0, 1, 0, 0, 0, 1]
    >>> expected_balanced_accuracy_score(y_true, y_pred, q=0.1,
    ...     estimand="forward").expected
    0.6030...""",
    "balanced_accuracy_score",
    """
    adjusted : bool, default=False
        Rescale so that chance scores 0 and perfect 1, as in scikit-learn.""",
)
MATTHEWS_DOC = function_doc(
    "expected_matthews_corrcoef",
    "Expected Matthews correlation coefficient, and its variance, under label flips.",
    f"""Binary labels are exact, multiclass labels Monte Carlo; where it is
    undefined it is 0, as in scikit-learn.
    {_BINARY}""",
    """>>> expected_matthews_corrcoef([1, 1, 1, 0], [1, 0, 1, 1], q=0.2,
    ...     estimand="forward").expected
    -0.1914...""",
    "matthews_corrcoef",
)
SPECIFICITY_DOC = function_doc(
    "expected_specificity_score",
    "Expected specificity (true negative rate), and its variance, under flips.",
    f"""``TN / (TN + FP)``, the recall of the negative class; with another
    ``average``, each class against the rest.
    {_RATES}""",
    """>>> expected_specificity_score([0, 0, 1, 1, 0], [0, 1, 1, 1, 0], q=0.1,
    ...     estimand="forward").expected
    0.6299...""",
)
NPV_DOC = function_doc(
    "expected_negative_predictive_value",
    "Expected negative predictive value, and its variance, under flips.",
    f"""``TN / (TN + FN)``, the precision of the negative class; with another
    ``average``, each class against the rest.
    {_RATES}""",
    """>>> y_true, y_pred = [0, 1, 2, 2, 1, 0], [0, 2, 2, 1, 1, 0]
    >>> expected_negative_predictive_value(y_true, y_pred, q=0.1, average="macro",
    ...     estimand="forward")
    NoisyScore(metric='negative_predictive_value', expected=0.808333, \
std=0.05621, nominal=0.833333, n_samples=6, method='exact', estimand='forward', \
sampling_std=0.1026)""",
)
FPR_DOC = function_doc(
    "expected_false_positive_rate",
    "Expected false positive rate ``FP/(FP + TN)`` (1 − specificity) under flips.",
    f"""The variance is the specificity's; an undefined rate is
    ``1 − zero_division``.
    {_RATES}""",
    """>>> expected_false_positive_rate([0, 0, 1, 1, 0], [0, 1, 1, 1, 0], q=0.1,
    ...     estimand="forward").expected
    0.3700...""",
)
FNR_DOC = function_doc(
    "expected_false_negative_rate",
    "Expected false negative rate ``FN / (FN + TP)`` = 1 − recall, under flips.",
    f"""The variance is the recall's; with another ``average``, ``1 − recall_k``
    averaged as recall.
    {_RATES}""",
    """>>> expected_false_negative_rate([0, 0, 1, 1, 0], [0, 1, 1, 0, 0], q=0.1,
    ...     estimand="forward").expected
    0.5211...""",
)


def _nominal_doc(name: str, summary: str, example: str) -> str:
    """The docstring of a rate of the labels as given."""
    return f"""{summary}

    With another ``average`` than ``"binary"``: each class against the rest
    (``None``: one value per class).

    Examples
    --------
    >>> from sklearn_noisy.metrics import {name}
    {example}
    """


SPECIFICITY_NOMINAL = _nominal_doc(
    "specificity_score",
    "Specificity ``TN / (TN + FP)``: the recall of the negative class.",
    """>>> specificity_score([0, 0, 1, 1], [0, 1, 1, 1])
    0.5
    >>> specificity_score([0, 1, 2, 2], [0, 2, 2, 1], average="macro")
    0.7222...""",
)
NPV_NOMINAL = _nominal_doc(
    "negative_predictive_value",
    "Negative predictive value ``TN / (TN + FN)``: the negative class's precision.",
    """>>> negative_predictive_value([0, 0, 1, 1], [0, 1, 1, 1])
    1.0""",
)
FPR_NOMINAL = _nominal_doc(
    "false_positive_rate",
    "False positive rate ``FP / (FP + TN)``: 1 − the specificity.",
    """>>> false_positive_rate([0, 0, 1, 1], [0, 1, 1, 1])
    0.5""",
)
FNR_NOMINAL = _nominal_doc(
    "false_negative_rate",
    "False negative rate ``FN / (FN + TP)``: 1 − scikit-learn's recall.",
    """>>> false_negative_rate([0, 0, 1, 1], [0, 0, 0, 1])
    0.5""",
)
