"""chainer 7.8.1's ``chainer/functions/evaluation`` functions beyond the core of
:mod:`gradhub_compat.chainer.functions` (which re-exports them): ``binary_accuracy``,
``classification_summary``, ``precision``, ``recall``, ``f1_score`` and ``r2_score``. They are
computed in Python and are not differentiable: each result is a constant Variable."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._common import device_array
from .. import Variable
from ._common import _PAGE, _constant, _data, _invalid, _xp_of

__all__ = [
    "binary_accuracy",
    "classification_summary",
    "f1_score",
    "precision",
    "r2_score",
    "recall",
]


def binary_accuracy(y: Any, t: Any) -> Variable:
    """The fraction of the labels ``t`` (integers of y's shape; -1 is ignored) that the sign of
    ``y`` predicts (``y >= 0`` for 1), in y's dtype. Not differentiable.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.binary_accuracy(np.array([-1.0, 2.0, 0.5], np.float32), np.array([0, 1, 0]))
        variable(0.6666667)
    """
    ya, ta = _data(y, "binary_accuracy"), _data(t, "binary_accuracy")
    if ya.dtype.kind != "f":
        raise _invalid("BinaryAccuracy", "x.dtype.kind == f", f"{ya.dtype.kind} != f")
    if ta.dtype.kind != "i":
        raise _invalid("BinaryAccuracy", "t.dtype.kind == i", f"{ta.dtype.kind} != i")
    if ta.shape != ya.shape:
        raise _invalid("BinaryAccuracy", "t.shape == x.shape", f"{ta.shape} != {ya.shape}")
    c = ya.ravel() >= 0
    tt = ta.ravel()
    count = max(1, int((tt != -1).sum()))
    return _constant(_xp_of(ya).asarray(int((c == tt).sum()) / count, dtype=ya.dtype))


def _summary(
    fname: str, y: Any, t: Any, label_num: int | None, beta: float, ignore_label: int
) -> tuple[Variable, Variable, Variable, Variable]:
    ya, ta = _data(y, fname), _data(t, fname)
    label = "ClassificationSummary"
    if ya.dtype.kind != "f":
        raise _invalid(label, "x.dtype.kind == f", f"{ya.dtype.kind} != f")
    if ta.dtype.kind != "i":
        raise _invalid(label, "t.dtype.kind == i", f"{ta.dtype.kind} != i")
    if (
        ya.ndim < ta.ndim
        or ya.shape[0] != ta.shape[0]
        or ya.shape[2 : ta.ndim + 1] != ta.shape[1:]
        or any(s != 1 for s in ya.shape[ta.ndim + 1 :])
    ):
        raise _invalid(
            label,
            "x.ndim >= t.ndim, x.shape[0] == t.shape[0], x.shape[2:t.ndim + 1] == t.shape[1:]",
            f"x.shape {ya.shape}, t.shape {ta.shape}",
        )
    ya, ta = device_array(ya), device_array(ta).astype(np.int32)  # (xp arrays, as chainer)
    n = int(ta.max()) + 1 if label_num is None else int(label_num)
    if label_num is not None and (ta[ta != ignore_label] >= n).any():
        raise ValueError(f"chainer F.{fname}: a label of t is not below label_num={label_num}")
    mask = (ta == ignore_label).ravel()
    pred = np.where(mask, n, ya.argmax(axis=1).ravel())
    true = np.where(mask, n, ta.ravel())
    support = np.bincount(true, minlength=n + 1)[:n]
    relevant = np.bincount(pred, minlength=n + 1)[:n]
    tp = np.bincount(np.where(pred == true, true, n), minlength=n + 1)[:n]
    with np.errstate(divide="ignore", invalid="ignore"):
        prec = tp / relevant
        rec = tp / support
        b2 = beta * beta
        fbeta = ((1 + b2) * prec * rec / (b2 * prec + rec)).astype(prec.dtype, copy=False)
    return _constant(prec), _constant(rec), _constant(fbeta), _constant(support)


def classification_summary(
    y: Any, t: Any, label_num: int | None = None, beta: float = 1.0, ignore_label: int = -1
) -> tuple[Variable, Variable, Variable, Variable]:
    """Per-class ``(precision, recall, fbeta, support)`` of the predictions ``y.argmax(axis=1)``
    against the labels ``t`` (labels equal to ``ignore_label`` left out), for the classes
    ``0 .. label_num - 1`` (default: up to the largest label): float64 ``tp / predicted``,
    ``tp / support`` and ``(1 + beta**2) p r / (beta**2 p + r)`` (nan where a count is 0, as
    chainer) and the int64 counts of each class. Not differentiable.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> y = np.array([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7]], np.float32)
        >>> p, r, f, s = F.classification_summary(y, np.array([1, 1, 0], np.int32))
        >>> p.array, r.array, s.array
        (array([0. , 0.5]), array([0. , 0.5]), array([1, 2]))
    """
    return _summary("classification_summary", y, t, label_num, beta, ignore_label)


def precision(
    y: Any, t: Any, label_num: int | None = None, ignore_label: int = -1
) -> tuple[Variable, Variable]:
    """``(precision, support)`` of :func:`classification_summary`."""
    r = _summary("precision", y, t, label_num, 1.0, ignore_label)
    return r[0], r[3]


def recall(
    y: Any, t: Any, label_num: int | None = None, ignore_label: int = -1
) -> tuple[Variable, Variable]:
    """``(recall, support)`` of :func:`classification_summary`."""
    r = _summary("recall", y, t, label_num, 1.0, ignore_label)
    return r[1], r[3]


def f1_score(
    y: Any, t: Any, label_num: int | None = None, ignore_label: int = -1
) -> tuple[Variable, Variable]:
    """``(f1, support)`` of :func:`classification_summary` (``beta=1``)."""
    r = _summary("f1_score", y, t, label_num, 1.0, ignore_label)
    return r[2], r[3]


def r2_score(
    pred: Any, true: Any, sample_weight: Any = None, multioutput: str = "uniform_average"
) -> Variable:
    """The coefficient of determination ``1 - SS_res / SS_tot`` along axis 0 (0 where
    ``SS_tot`` is 0), of pred's dtype: its mean (``multioutput="uniform_average"``) or one per
    output (``"raw_values"``). ``sample_weight`` is not supported (``NotImplementedError``, as
    chainer). Not differentiable.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.r2_score(np.array([1.0, 2.0, 3.5], np.float32), np.array([1.0, 2.0, 3.0], np.float32))
        variable(0.875)
    """
    if sample_weight is not None:
        raise NotImplementedError(
            f"chainer F.r2_score: sample_weight is not supported; see {_PAGE}"
        )
    if multioutput not in ("uniform_average", "raw_values"):
        raise ValueError("invalid multioutput argument")
    p, t = _data(pred, "r2_score"), _data(true, "r2_score")
    if p.dtype.kind != "f" or t.dtype.kind != "f":
        raise _invalid(
            "R2_score", "pred.dtype.kind == f, true.dtype.kind == f", f"{p.dtype}, {t.dtype}"
        )
    if p.shape != t.shape:
        raise _invalid("R2_score", "pred.shape == true.shape", f"{p.shape} != {t.shape}")
    p, t = device_array(p), device_array(t)  # (xp arrays, as chainer)
    ss_res = device_array(np.sum((p - t) ** 2, axis=0))
    ss_tot = device_array(np.sum((t - np.mean(t, axis=0)) ** 2, axis=0))
    zero = ss_tot == 0
    ss_tot[zero] = 1
    ret = np.where(zero, 0.0, 1 - ss_res / ss_tot).astype(p.dtype, copy=False)
    if multioutput == "uniform_average":
        return _constant(device_array(ret.mean()))
    return _constant(ret)
