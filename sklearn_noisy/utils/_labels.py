"""Class labels: validation, and encoding as positions in the list of classes."""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._arrays import as_array, check_finite, check_same_length, chunks

#: Object arrays of strings at most this long are stored as fixed-width unicode.
_MAX_UNICODE_LENGTH = 64


class LabelTypeError(TypeError, ValueError):
    """Labels of incompatible types: a ``TypeError`` and a ``ValueError``."""


def _object_labels(array: np.ndarray, *, name: str) -> np.ndarray:
    """An object label array as unicode or 64-bit integers where it holds only
    those; rejects sequences and mixed types as scikit-learn does."""
    values = array.tolist()
    if all(isinstance(v, str) for v in values):
        longest = max((len(v) for v in values), default=0)
        return array.astype(str) if longest <= _MAX_UNICODE_LENGTH else array
    if all(isinstance(v, (int, np.integer)) for v in values):
        for dtype in (np.int64, np.uint64):
            try:
                return np.asarray(values, dtype=dtype)
            except OverflowError:
                pass
        raise ValueError(
            f"{name} holds integers outside the 64-bit range (the largest has "
            f"{len(str(max(abs(int(v)) for v in values)))} digits); class labels "
            "must be integers that fit in 64 bits, or strings."
        )
    if any(isinstance(v, (list, tuple, set, np.ndarray)) for v in values):
        raise ValueError(
            f"{name} holds sequences: the legacy multi-label representation "
            "(a sequence of sequences) is not supported, as in scikit-learn; "
            "use a binary indicator array (MultiLabelBinarizer)."
        )
    if not all(isinstance(v, numbers.Number) for v in values):
        raise LabelTypeError(
            f"{name} mixes label types or holds values that are neither strings "
            "nor numbers (None, ...); use one type, e.g. all int or all str."
        )
    return array


def as_label_array(value: Any, *, name: str) -> np.ndarray:
    """``value`` as a 1-D array of class labels (a one-column 2-D is accepted)."""
    array = as_array(value)
    if array.ndim == 2 and array.shape[1] == 1:
        array = array[:, 0]
    if array.ndim != 1:
        raise ValueError(
            f"{name} must be a 1-D array of class labels; got shape {array.shape}."
        )
    if array.dtype.kind == "O":
        array = _object_labels(array, name=name)
    if array.dtype.kind == "f":
        check_finite(array, name=name)
    return array


def _kind_family(array: np.ndarray) -> str:
    """``"number"``, ``"str"`` (unicode, bytes, object) or the dtype kind."""
    kind = array.dtype.kind
    return "number" if kind in "biuf" else "str" if kind in "OUS" else kind


def _family(array: np.ndarray) -> str:
    """:func:`_kind_family`, object arrays by their first value (long strings)."""
    if array.dtype.kind == "O" and array.size:
        return "str" if isinstance(array.flat[0], str) else "number"
    return _kind_family(array)


def _check_not_continuous(array: np.ndarray, *, name: str) -> None:
    """Raise ``ValueError`` for float labels that are not all integers."""
    check_finite(array, name=name)
    flat = array.reshape(-1)
    for rows in chunks(flat.shape[0]):
        values = flat[rows]
        fractional = values != np.trunc(values)
        if np.any(fractional):
            raise ValueError(
                f"{name} holds continuous values (e.g. "
                f"{float(values[fractional][0])!r}): class labels must be "
                "integers or strings; continuous is not supported, as in "
                "scikit-learn."
            )


def check_targets(y_true: Any, y_pred: Any) -> tuple[Any, Any]:
    """``y_true`` and ``y_pred`` as arrays (sparse as given), rejecting what
    scikit-learn's ``_check_targets`` rejects."""
    arrays = []
    for name, y in (("y_true", y_true), ("y_pred", y_pred)):
        if hasattr(y, "tocsr"):  # a sparse multilabel indicator matrix
            return y_true, y_pred
        try:
            array = as_array(y)
        except ValueError as exc:  # ragged sequences of sequences
            raise ValueError(
                f"{name} must be an array of class labels; sequences of "
                "sequences (the legacy multi-label representation) are not "
                "supported, as in scikit-learn."
            ) from exc
        if array.dtype.kind == "S":
            raise LabelTypeError(
                f"{name} holds bytes: labels as bytes are not supported, as in "
                "scikit-learn; decode them to str (e.g. y.astype(str))."
            )
        if array.dtype.kind == "O" and array.ndim == 1:
            array = _object_labels(array, name=name)
        if array.dtype.kind == "f" and array.ndim in (1, 2):
            _check_not_continuous(array, name=name)
        arrays.append(array)
    true_family, pred_family = (_family(a) for a in arrays)
    if true_family != pred_family and {true_family, pred_family} <= {"str", "number"}:
        raise LabelTypeError(
            "Mix of label input types (string and number): y_true and y_pred "
            f"mix label types ({arrays[0].dtype} and {arrays[1].dtype}); use "
            "one type, e.g. all int or all str."
        )
    return arrays[0], arrays[1]


def check_labels(labels: Any) -> np.ndarray:
    """``labels`` as a non-empty 1-D array of distinct class labels."""
    classes = np.asarray(labels)
    if classes.ndim != 1 or classes.size == 0:
        raise ValueError("labels must be a non-empty 1-D list of class labels.")
    if classes.dtype.kind == "O":
        classes = _object_labels(classes, name="labels")
    if np.unique(classes).size != classes.size:
        raise ValueError("labels must not contain duplicates.")
    return classes


def check_label_pair(y_true: Any, y_pred: Any) -> tuple[np.ndarray, np.ndarray]:
    """``y_true`` and ``y_pred`` as 1-D label arrays of one non-zero length."""
    y_true = as_label_array(y_true, name="y_true")
    y_pred = as_label_array(y_pred, name="y_pred")
    if y_true.shape[0] == 0:
        raise ValueError("y_true is empty: at least one sample is required.")
    check_same_length(y_true, y_pred)
    return y_true, y_pred


def check_classification_labels(
    y_true: Any, y_pred: Any, *, labels: Any = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(true_index, pred_index, classes)``: each sample's position in ``classes``.

    ``classes`` are ``labels``, or the sorted labels of ``y_true`` and ``y_pred``.
    """
    y_true, y_pred = check_label_pair(y_true, y_pred)
    if labels is None:
        kinds = {y_true.dtype.kind, y_pred.dtype.kind}
        try:
            if len(kinds) > 1 and not (kinds <= set("biuf") or kinds <= set("OU")):
                raise TypeError
            true_classes, true_index = np.unique(y_true, return_inverse=True)
            pred_classes, pred_index = np.unique(y_pred, return_inverse=True)
            classes = np.union1d(true_classes, pred_classes)
        except TypeError as exc:
            raise LabelTypeError(
                f"y_true and y_pred mix label types ({y_true.dtype} and "
                f"{y_pred.dtype}); use one type, e.g. all int or all str."
            ) from exc
        if classes.dtype.kind == "f" and np.any(classes != np.round(classes)):
            raise ValueError(
                "y_true and y_pred must be class labels; got continuous values. "
                "Use the regression metrics with sigma for continuous labels."
            )
        true_index = np.searchsorted(classes, true_classes)[true_index]
        pred_index = np.searchsorted(classes, pred_classes)[pred_index]
        return true_index, pred_index, classes
    classes = check_labels(labels)
    order = np.argsort(classes, kind="stable")
    sorted_classes = classes[order]
    indices = []
    for name, y in (("y_true", y_true), ("y_pred", y_pred)):
        if _kind_family(y) != _kind_family(classes):
            raise LabelTypeError(
                f"{name} and labels mix label types ({y.dtype} and "
                f"{classes.dtype}); use one type, e.g. all int or all str."
            )
        position = np.searchsorted(sorted_classes, y)
        position = np.minimum(position, sorted_classes.size - 1)
        outside = sorted_classes[position] != y
        if outside.any():
            raise ValueError(
                f"{name} contains labels that are not in `labels`: "
                f"{np.unique(y[outside])[:5].tolist()}."
            )
        indices.append(order[position])
    return indices[0], indices[1], classes


@dataclass(frozen=True)
class EncodedLabels:
    """Each sample's position in ``classes``: ``y_true`` and ``y_pred`` themselves,
    or ``lookup[y - offset]`` for small integer labels."""

    y_true: np.ndarray
    y_pred: np.ndarray
    classes: np.ndarray
    offset: int = 0
    lookup: np.ndarray | None = None

    @property
    def n_classes(self) -> int:
        return int(self.classes.shape[0])

    @property
    def n_samples(self) -> int:
        return int(self.y_true.shape[0])

    @property
    def shape(self) -> tuple[int]:
        return (self.n_samples,)

    def __getitem__(self, rows: slice) -> np.ndarray:
        """Positions in ``classes`` of ``y_true`` on a chunk."""
        return self.indices(rows)[0]

    def correct(self, rows: slice) -> np.ndarray:
        """``y_true == y_pred`` on a chunk of samples."""
        return self.y_true[rows] == self.y_pred[rows]

    def indices(self, rows: slice) -> tuple[np.ndarray, np.ndarray]:
        """Positions in ``classes`` of ``y_true`` and ``y_pred`` on a chunk."""
        if self.lookup is None:
            return self.y_true[rows], self.y_pred[rows]
        return (
            self.lookup[self.y_true[rows].astype(np.intp) - self.offset],
            self.lookup[self.y_pred[rows].astype(np.intp) - self.offset],
        )


def _as_small_int(array: np.ndarray) -> np.ndarray | None:
    """A view of a bool or integer label array usable for integer arithmetic."""
    if array.dtype.kind == "b":
        return array.view(np.uint8)
    if array.dtype.kind in "iu" and array.dtype != np.uint64:
        return array
    return None


def _small_int_labels(y_true: np.ndarray, y_pred: np.ndarray) -> EncodedLabels | None:
    """Encode integer labels without sorting (bincounts), or None."""
    true_int, pred_int = _as_small_int(y_true), _as_small_int(y_pred)
    if true_int is None or pred_int is None:
        return None
    low = min(int(true_int.min()), int(pred_int.min()))
    high = max(int(true_int.max()), int(pred_int.max()))
    span = high - low + 1
    n_samples = y_true.shape[0]
    if span <= 2:
        present = np.ones(span, dtype=bool)
    elif span <= 4 * n_samples + 1024:
        counts = np.zeros(span, dtype=np.intp)
        for rows in chunks(n_samples):
            for array in (true_int, pred_int):
                counts += np.bincount(array[rows].astype(np.intp) - low, minlength=span)
        present = counts > 0
    else:
        return None
    values = np.flatnonzero(present) + low
    dtype = np.result_type(y_true.dtype, y_pred.dtype)
    classes = values.astype(dtype)
    lookup = np.cumsum(present, dtype=np.intp) - 1
    return EncodedLabels(
        y_true=true_int, y_pred=pred_int, classes=classes, offset=low, lookup=lookup
    )


def encode_labels(y_true: Any, y_pred: Any, labels: Any) -> EncodedLabels:
    """Validate the labels and encode them (see :func:`check_classification_labels`)."""
    if labels is None:
        true_array = as_label_array(y_true, name="y_true")
        pred_array = as_label_array(y_pred, name="y_pred")
        if 0 < true_array.shape[0] == pred_array.shape[0]:
            fast = _small_int_labels(true_array, pred_array)
            if fast is not None:
                return fast
        y_true, y_pred = true_array, pred_array
    true_index, pred_index, classes = check_classification_labels(
        y_true, y_pred, labels=labels
    )
    return EncodedLabels(true_index, pred_index, np.asarray(classes))


def encode_labels_subset(
    y_true: Any, y_pred: Any, labels: Any
) -> tuple[EncodedLabels, int]:
    """Encode over ``labels`` then every other class present; and ``len(labels)``."""
    classes = check_labels(labels)
    true_array = as_label_array(y_true, name="y_true")
    pred_array = as_label_array(y_pred, name="y_pred")
    _, _, present = check_classification_labels(true_array, pred_array)
    if _kind_family(present) != _kind_family(classes):
        raise LabelTypeError(
            f"labels and the labels of y_true and y_pred mix label types "
            f"({classes.dtype} and {present.dtype}); use one type."
        )
    extra = present[~np.isin(present, classes)]
    if extra.size:
        classes = np.concatenate([classes, extra])
    return encode_labels(true_array, pred_array, classes), classes.size - extra.size


def class_totals(
    y_true: Any,
    y_pred: Any,
    labels: Any = None,
    weight: Any = None,
    *,
    count_pred: bool = True,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """``(classes, true_totals, pred_totals)``: each class's (weighted) count
    (``pred_totals`` None for ``count_pred=False``)."""
    if labels is None:
        encoded, shown = encode_labels(y_true, y_pred, None), None
    else:
        encoded, shown = encode_labels_subset(y_true, y_pred, labels)
    k = encoded.n_classes
    totals = np.zeros((2, k))
    for rows in chunks(encoded.n_samples):
        w = None if weight is None else np.asarray(weight, dtype=float)[rows]
        indices = encoded.indices(rows)
        for total, index in zip(totals, indices[: 1 + count_pred], strict=False):
            total += np.bincount(index, weights=w, minlength=k)
    pred_totals = totals[1, :shown] if count_pred else None
    return encoded.classes[:shown], totals[0, :shown], pred_totals
