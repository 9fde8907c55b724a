"""Every private scikit-learn name that sklearn-noisy uses, imported once here.

As imbalanced-learn's ``utils/_sklearn_compat.py``: a change in scikit-learn
is met in one place. The floor, 1.6.1 (estimator tags; 1.6.0's
``cross_validate`` fails under metadata routing without ``params``), is
checked first, so that an older scikit-learn gets a message that says so.
"""

from __future__ import annotations

import re

import sklearn

#: The oldest scikit-learn release that sklearn-noisy runs on.
SKLEARN_MIN_VERSION = (1, 6, 1)


def _release(version: str) -> tuple[int, ...]:
    """``"1.6.1"`` → ``(1, 6, 1)``; pre-releases count as their release."""
    match = re.match(r"(\d+)\.(\d+)(?:\.(\d+))?", version)
    if match is None:  # an unparseable development version: assume recent
        return (99,)
    return tuple(int(part or 0) for part in match.groups())


if _release(sklearn.__version__) < SKLEARN_MIN_VERSION:
    raise ImportError(
        "sklearn-noisy requires scikit-learn >= "
        f"{'.'.join(map(str, SKLEARN_MIN_VERSION))}; scikit-learn "
        f"{sklearn.__version__} is installed. Upgrade it with "
        "`pip install -U scikit-learn`."
    )

from sklearn.metrics._scorer import _BaseScorer, _cached_call  # noqa: E402
from sklearn.utils import _safe_indexing, get_tags  # noqa: E402
from sklearn.utils._param_validation import InvalidParameterError  # noqa: E402
from sklearn.utils._response import _get_response_values_binary  # noqa: E402
from sklearn.utils.validation import (  # noqa: E402
    _check_method_params,
    _check_pos_label_consistency,
    _get_feature_names,
    _num_features,
    _num_samples,
)

__all__ = [
    "SKLEARN_MIN_VERSION",
    "InvalidParameterError",
    "_BaseScorer",
    "_cached_call",
    "_check_method_params",
    "_check_pos_label_consistency",
    "_get_feature_names",
    "_get_response_values_binary",
    "_num_features",
    "_num_samples",
    "_safe_indexing",
    "get_tags",
]
