"""Parity with scikit-learn at zero noise over its argument grid and input types.

accuracy_score, confusion_matrix, brier_score_loss and log_loss: every argument
scikit-learn has, with labels and probabilities as lists, NumPy arrays of every
dtype, pandas Series of every dtype (``category`` and pandas' ``str``
included), read-only and non-contiguous arrays and one-column 2-D arrays. At
q = 0 the numbers are scikit-learn's, bit for bit; where scikit-learn raises,
we raise the same kind of exception.

Each parity test is parametrised over the metric's options and loops over the
input forms (cheap calls sharing the set-up): every (input form, option) pair
of the full grid is still checked, and a failure lists every failing form by
name.
"""

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
import sklearn.metrics as sk

from sklearn_noisy.metrics import (
    expected_accuracy_score,
    expected_brier_score_loss,
    expected_confusion_matrix,
    expected_log_loss,
)

INT_LABELS = np.array([0, 1, 2, 2, 1, 0, 2, 1, 1, 0, 2, 2])
INT_PRED = np.array([0, 2, 2, 1, 1, 0, 2, 0, 1, 0, 1, 2])
NAMES = np.array(["ant", "bee", "cat"])
WEIGHTS = np.array([1.0, 0.5, 2.0, 1.5, 1.0, 0.25, 3.0, 1.0, 0.75, 2.0, 1.0, 0.5])


def _readonly(array):
    array = np.array(array)
    array.flags.writeable = False
    return array


def _strided(array):
    doubled = np.repeat(np.asarray(array), 2)
    return doubled[::2]  # a non-contiguous view with the same values


def _containers(values):
    """The same labels as every container and dtype a user may pass."""
    values = np.asarray(values)
    out = {
        "list": values.tolist(),
        "ndarray": values,
        "readonly": _readonly(values),
        "strided": _strided(values),
        "column": values[:, None],
        "series": pd.Series(values),
        "category": pd.Series(values).astype("category"),
        "object": values.astype(object),
    }
    if values.dtype.kind in "iu":
        for dtype in ("int8", "int32", "uint8", "uint64", "float32", "float64"):
            out[dtype] = values.astype(dtype)
        out["Int64"] = pd.Series(values).astype("Int64")
    else:
        out["str"] = pd.Series(values).astype("str")
        out["string"] = pd.Series(values).astype("string")
    return out


def _as_sklearn_accepts(value):
    """Object arrays of integers as int64 for scikit-learn, which rejects them.

    A deliberate extension: we accept integer labels held in object arrays
    (a model fitted on an object Series predicts them) and must give
    scikit-learn's number for the same integers.
    """
    array = value.to_numpy() if isinstance(value, pd.Series) else value
    if isinstance(array, np.ndarray) and array.dtype == object:
        if all(isinstance(v, (int, np.integer)) for v in array.ravel()):
            return array.astype(np.int64)
    return value


def _outcome(function, *args, **kwargs):
    """``("value", result)`` or ``("error", exception)``, warnings silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return "value", function(*args, **kwargs)
        except Exception as exc:  # compared below
            return "error", exc


def _assert_same_error(ours, theirs):
    kinds = tuple(k for k in (ValueError, TypeError) if isinstance(theirs, k))
    assert kinds, f"scikit-learn raised {theirs!r}"
    assert isinstance(ours, kinds), (ours, theirs)


def _check_each(cases, check):
    """Run ``check(*case)`` for every case; fail listing every failing case.

    Each case starts with its name, which the failure message shows.
    """
    failures = []
    for case in cases:
        try:
            check(*case)
        except AssertionError as exc:
            failures.append(f"{case[0]}: {exc}")
    assert not failures, f"{len(failures)} of {len(cases)} cases failed:\n" + (
        "\n".join(failures)
    )


def _label_pairs():
    """(name, y_true, y_pred) over every container pair of interest."""
    for labels in (INT_LABELS, NAMES[INT_LABELS]):
        pred = INT_PRED if labels.dtype.kind in "iu" else NAMES[INT_PRED]
        true_forms = _containers(labels)
        pred_forms = _containers(pred)
        kind = "int" if labels.dtype.kind in "iu" else "str"
        for true_name, true in true_forms.items():
            yield f"{kind}: {true_name}-ndarray", true, pred_forms["ndarray"]
        for pred_name, pred_value in pred_forms.items():
            yield f"{kind}: list-{pred_name}", true_forms["list"], pred_value
        # mixed containers of string labels (a model fitted on a Series)
        if labels.dtype.kind == "U":
            for a, b in itertools.permutations(("str", "category", "object"), 2):
                yield f"{kind}: {a}-{b}", true_forms[a], pred_forms[b]


LABEL_PAIRS = list(_label_pairs())
WEIGHT_FORMS = {
    "none": None,
    "list": WEIGHTS.tolist(),
    "float32": WEIGHTS.astype(np.float32),
    "int": np.arange(1, 13),
    "series": pd.Series(WEIGHTS),
    "readonly": _readonly(WEIGHTS),
}


@pytest.mark.parametrize("normalize", [True, False])
@pytest.mark.parametrize("weight", list(WEIGHT_FORMS))
def test_accuracy_parity(normalize, weight):
    sample_weight = WEIGHT_FORMS[weight]
    _check_each(
        LABEL_PAIRS,
        lambda *pair: _accuracy_parity(*pair, normalize, sample_weight),
    )


def _accuracy_parity(name, y_true, y_pred, normalize, sample_weight):
    kind, theirs = _outcome(
        sk.accuracy_score, _as_sklearn_accepts(y_true), _as_sklearn_accepts(y_pred),
        normalize=normalize,
        sample_weight=sample_weight,
    )  # fmt: skip
    status, ours = _outcome(
        expected_accuracy_score, y_true, y_pred, q=0.0, normalize=normalize,
        sample_weight=sample_weight,
    )  # fmt: skip
    if kind == "error":
        assert status == "error", (name, theirs, ours)
        _assert_same_error(ours, theirs)
        return
    assert status == "value", (name, ours)
    assert ours.nominal == theirs, name
    assert ours.expected == theirs, name
    assert ours.variance == 0.0


CM_LABELS = [None, "all", "subset", "reordered", "superset"]
CM_NORMALIZE = [None, "true", "pred", "all"]
CM_WEIGHTS = ["none", "list", "int"]


def _covering_pairs(labels, normalize, weight):
    """The label pairs checked by default with these confusion-matrix options.

    Pair ``i`` goes with labels option ``j`` and the (normalize, weight) of
    ``c = (i + j) % 12`` (``normalize = CM_NORMALIZE[c % 4]``, ``weight =
    CM_WEIGHTS[c % 3]``): every (pair, labels option) once, and every pair
    meets every normalize and every weight (five consecutive ``c``), every
    (labels, normalize, weight) has pairs of both label kinds. 280 calls
    instead of 3,360; the full grid runs with ``--run-slow``.
    """
    j = CM_LABELS.index(labels)
    c = next(
        c for c in range(12)
        if c % 4 == CM_NORMALIZE.index(normalize) and c % 3 == CM_WEIGHTS.index(weight)
    )  # fmt: skip
    return [pair for i, pair in enumerate(LABEL_PAIRS) if (i + j) % 12 == c]


def test_confusion_matrix_covering_design():
    grid = list(itertools.product(CM_LABELS, CM_NORMALIZE, CM_WEIGHTS))
    rows = [
        (pair[0], options)
        for options in grid
        for pair in _covering_pairs(*options)
    ]  # fmt: skip
    names = [pair[0] for pair in LABEL_PAIRS]
    assert len(rows) == len(LABEL_PAIRS) * len(CM_LABELS)
    for position, values in enumerate((CM_LABELS, CM_NORMALIZE, CM_WEIGHTS)):
        met = {(name, options[position]) for name, options in rows}
        assert met == set(itertools.product(names, values)), position
    for options in grid:
        kinds = {name.split(":")[0] for name, met in rows if met == options}
        assert kinds == {"int", "str"}, options


@pytest.mark.parametrize("labels", CM_LABELS, ids=str)
@pytest.mark.parametrize("normalize", CM_NORMALIZE)
@pytest.mark.parametrize("weight", CM_WEIGHTS)
def test_confusion_matrix_parity(labels, normalize, weight):
    _check_each(
        _covering_pairs(labels, normalize, weight),
        lambda *pair: _confusion_matrix_parity(*pair, labels, normalize, weight),
    )


@pytest.mark.slow
@pytest.mark.parametrize("labels", CM_LABELS, ids=str)
@pytest.mark.parametrize("normalize", CM_NORMALIZE)
@pytest.mark.parametrize("weight", CM_WEIGHTS)
def test_confusion_matrix_parity_every_pair(labels, normalize, weight):
    _check_each(
        LABEL_PAIRS,
        lambda *pair: _confusion_matrix_parity(*pair, labels, normalize, weight),
    )


def _confusion_matrix_parity(name, y_true, y_pred, labels, normalize, weight):
    classes = np.unique(np.asarray(y_true).ravel().astype(str))
    strings = classes[0] == "ant"
    universe = NAMES if strings else np.array([0, 1, 2])
    label_options = {
        None: None,
        "all": universe,
        "subset": universe[[2, 0]],
        "reordered": universe[[1, 2, 0]],
        "superset": np.r_[universe, ["dog"] if strings else [7]],
    }
    options = {
        "labels": label_options[labels],
        "normalize": normalize,
        "sample_weight": WEIGHT_FORMS[weight],
    }
    kind, theirs = _outcome(
        sk.confusion_matrix,
        _as_sklearn_accepts(y_true),
        _as_sklearn_accepts(y_pred),
        **options,
    )
    status, ours = _outcome(expected_confusion_matrix, y_true, y_pred, q=0, **options)
    if kind == "error":
        assert status == "error", (name, theirs, ours)
        _assert_same_error(ours, theirs)
        return
    assert status == "value", (name, ours)
    np.testing.assert_array_equal(ours.nominal, theirs)
    np.testing.assert_array_equal(ours.expected, theirs)
    assert ours.expected.dtype == theirs.dtype
    assert ours.nominal.dtype == theirs.dtype
    np.testing.assert_array_equal(ours.variance, 0.0)


def _proba_forms(proba):
    forms = {
        "list": proba.tolist(),
        "ndarray": proba,
        "float32": proba.astype(np.float32),
        "readonly": _readonly(proba),
        "fortran": np.asfortranarray(proba),
        "dataframe": pd.DataFrame(proba),
    }
    if proba.ndim == 1:
        forms["column"] = proba[:, None]
        forms["strided"] = _strided(proba)
        forms["series"] = pd.Series(proba)
    return forms


def _tolerance(y_proba):
    """scikit-learn computes in float32 for float32 probabilities, we in float64."""
    return 1e-6 if getattr(y_proba, "dtype", None) == np.float32 else 1e-15


RNG = np.random.default_rng(0)
PROBA_3 = RNG.dirichlet(np.ones(3), INT_LABELS.size)
PROBA_1 = RNG.uniform(0.01, 0.99, INT_LABELS.size)
BINARY = (INT_LABELS > 0).astype(int)


def _probabilistic_cases():
    """(name, y_true, y_proba, options) for Brier and log-loss."""
    for true_name, y_true in _containers(BINARY).items():
        yield f"binary-{true_name}", y_true, PROBA_1, {}
    for true_name, y_true in _containers(np.where(BINARY, "yes", "no")).items():
        yield f"strings-{true_name}", y_true, PROBA_1, {"pos_label": "yes"}
    yield "plus-minus", np.where(BINARY, 1, -1), PROBA_1, {}
    for proba_name, proba in _proba_forms(PROBA_1).items():
        yield f"proba-{proba_name}", BINARY, proba, {}
    for true_name, y_true in _containers(INT_LABELS).items():
        yield f"multi-{true_name}", y_true, PROBA_3, {}
    for true_name, y_true in _containers(NAMES[INT_LABELS]).items():
        yield f"multi-names-{true_name}", y_true, PROBA_3, {}
    for proba_name, proba in _proba_forms(PROBA_3).items():
        yield f"multi-proba-{proba_name}", INT_LABELS, proba, {}
    two = INT_LABELS[INT_LABELS < 2]
    yield "missing-class", two, PROBA_3[: two.size], {"labels": [0, 1, 2]}
    yield "missing-class-no-labels", two, PROBA_3[: two.size], {}
    yield "unsorted-labels", INT_LABELS, PROBA_3, {"labels": [2, 0, 1]}


PROBABILISTIC_CASES = list(_probabilistic_cases())


@pytest.mark.parametrize("weight", ["none", "list", "float32"])
@pytest.mark.parametrize("scale_by_half", ["auto", True, False])
def test_brier_parity(weight, scale_by_half):
    _check_each(
        PROBABILISTIC_CASES,
        lambda *case: _brier_parity(*case, weight, scale_by_half),
    )


def _brier_parity(name, y_true, y_proba, options, weight, scale_by_half):
    options = {
        **options,
        "sample_weight": WEIGHT_FORMS[weight][: len(y_true)]
        if weight != "none"
        else None,
        "scale_by_half": scale_by_half,
    }
    kind, theirs = _outcome(
        sk.brier_score_loss, _as_sklearn_accepts(y_true), y_proba, **options
    )
    status, ours = _outcome(expected_brier_score_loss, y_true, y_proba, q=0, **options)
    if kind == "error":
        assert status == "error", (name, theirs, ours)
        _assert_same_error(ours, theirs)
        return
    assert status == "value", (name, ours)
    tolerance = _tolerance(y_proba)
    assert ours.nominal == pytest.approx(theirs, rel=tolerance, abs=0), name
    assert ours.expected == pytest.approx(theirs, rel=tolerance, abs=0), name
    assert ours.variance == 0.0


@pytest.mark.parametrize("weight", ["none", "list", "float32"])
@pytest.mark.parametrize("normalize", [True, False])
def test_log_loss_parity(weight, normalize):
    _check_each(
        PROBABILISTIC_CASES,
        lambda *case: _log_loss_parity(*case, weight, normalize),
    )


def _log_loss_parity(name, y_true, y_proba, options, weight, normalize):
    options = {k: v for k, v in options.items() if k != "pos_label"}
    options["sample_weight"] = (
        None if weight == "none" else WEIGHT_FORMS[weight][: len(y_true)]
    )
    options["normalize"] = normalize
    kind, theirs = _outcome(
        sk.log_loss, _as_sklearn_accepts(y_true), y_proba, **options
    )
    status, ours = _outcome(expected_log_loss, y_true, y_proba, q=0, **options)
    if kind == "error":
        assert status == "error", (name, theirs, ours)
        _assert_same_error(ours, theirs)
        return
    assert status == "value", (name, ours)
    tolerance = _tolerance(y_proba)
    assert ours.nominal == pytest.approx(theirs, rel=tolerance, abs=0), name
    assert ours.expected == pytest.approx(theirs, rel=tolerance, abs=0), name
    assert ours.variance == 0.0


BAD_LABELS = {
    "string-vs-number": (["a", "b", "a"], [0, 1, 0]),
    "continuous": ([0.5, 1.0, 0.0], [0.0, 1.0, 0.0]),
    "nan": ([0.0, np.nan, 1.0], [0.0, 1.0, 1.0]),
    "lengths": ([0, 1, 1], [0, 1]),
    "two-columns": (np.zeros((3, 2)), [0, 1, 0]),
    "empty": ([], []),
    "huge-int": ([2**70, 1, 1], [1, 1, 1]),
    "mixed-object": (np.array(["a", 1, "a"], dtype=object), ["a", "a", "a"]),
}


@pytest.mark.parametrize("case", list(BAD_LABELS))
@pytest.mark.parametrize(
    "ours, theirs",
    [
        (expected_accuracy_score, sk.accuracy_score),
        (expected_confusion_matrix, sk.confusion_matrix),
    ],
    ids=["accuracy", "confusion_matrix"],
)
def test_bad_labels_raise_as_sklearn(case, ours, theirs):
    y_true, y_pred = BAD_LABELS[case]
    kind, their_error = _outcome(theirs, y_true, y_pred)
    status, our_error = _outcome(ours, y_true, y_pred, q=0.1)
    assert kind == status == "error", (their_error, our_error)
    _assert_same_error(our_error, their_error)


BAD_OPTIONS = [
    (expected_accuracy_score, sk.accuracy_score, {"normalize": "yes"}),
    (expected_accuracy_score, sk.accuracy_score, {"sample_weight": [1, 2]}),
    (expected_accuracy_score, sk.accuracy_score, {"sample_weight": [1, np.nan, 1]}),
    (expected_confusion_matrix, sk.confusion_matrix, {"normalize": "rows"}),
    (expected_confusion_matrix, sk.confusion_matrix, {"labels": []}),
    (expected_confusion_matrix, sk.confusion_matrix, {"labels": [5, 6]}),
    (expected_confusion_matrix, sk.confusion_matrix, {"sample_weight": [1, 2]}),
]


@pytest.mark.parametrize("ours, theirs, options", BAD_OPTIONS)
def test_bad_options_raise_as_sklearn(ours, theirs, options):
    y_true, y_pred = [0, 1, 1], [0, 1, 0]
    kind, their_error = _outcome(theirs, y_true, y_pred, **options)
    status, our_error = _outcome(ours, y_true, y_pred, q=0.1, **options)
    assert kind == status == "error", (their_error, our_error)
    _assert_same_error(our_error, their_error)


BAD_PROBA = [
    ([0, 1, 1], [0.2, 1.2, 0.5], {}),
    ([0, 1, 1], [0.2, np.nan, 0.5], {}),
    ([0, 1, 1], [0.2, 0.5], {}),
    ([0, 1, 2], [[0.2, 0.8], [0.5, 0.5], [0.1, 0.9]], {}),
    ([0, 1, 1], [[0.2, 0.8], [0.5, 0.5], [0.1, 0.9]], {"labels": [0]}),
    ([0, 1, 1], [0.2, 0.5, 0.5], {"sample_weight": [1, 2]}),
    (["a", "b", "b"], [0.2, 0.5, 0.5], {}),
]


@pytest.mark.parametrize("y_true, y_proba, options", BAD_PROBA)
@pytest.mark.parametrize(
    "ours, theirs",
    [
        (expected_brier_score_loss, sk.brier_score_loss),
        (expected_log_loss, sk.log_loss),
    ],
    ids=["brier", "log_loss"],
)
def test_bad_probabilities_raise_as_sklearn(y_true, y_proba, options, ours, theirs):
    kind, their_error = _outcome(theirs, y_true, y_proba, **options)
    status, our_error = _outcome(ours, y_true, y_proba, q=0.1, **options)
    if kind == "value":  # scikit-learn accepts it: so do we, with its number
        assert status == "value", our_error
        return
    assert status == "error", our_error
    _assert_same_error(our_error, their_error)
