"""gradhub-nn-ops: evaluation metrics (nnabla's ``ConfusionMatrix``).

No gradient; the kernel is array operations only (argmax, comparisons and one product), so it runs
on every device.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
from gradhub import Sample


def _confusion_axis(x_ndim: int, axis: Any) -> int:
    if axis is None:
        return x_ndim - 1
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"confusion_matrix: axis must be an int or None, got {axis!r}")
    if not -x_ndim <= axis < x_ndim:
        raise ValueError(f"confusion_matrix: axis={axis} is out of range for x of ndim {x_ndim}")
    return int(axis) % x_ndim


def _confusion_matrix(xp: Any, x: Any, target: Any, axis: Any = None) -> Any:
    if x.ndim < 1:
        raise ValueError("confusion_matrix: x must have at least 1 dim (the classes' axis)")
    ax = _confusion_axis(x.ndim, axis)
    n = x.shape[ax]
    pred = xp.argmax(x, axis=ax)
    t = target
    if t.ndim == x.ndim and t.shape[ax] == 1 and t.size == pred.size:
        t = t.reshape(pred.shape)
    if tuple(t.shape) != tuple(pred.shape):
        raise ValueError(
            f"confusion_matrix: target of shape {tuple(target.shape)} must have x's shape "
            f"{tuple(x.shape)} with 1 (or nothing) at axis {ax}"
        )
    t = t.reshape(-1).astype(np.int64)
    if t.size and bool(((t < 0) | (t >= n)).any()):
        raise ValueError(f"confusion_matrix: target holds labels outside [0, {n})")
    classes = xp.arange(n)
    truth = (t[:, None] == classes).astype(np.int64)
    predicted = (pred.reshape(-1)[:, None] == classes).astype(np.int64)
    return truth.T @ predicted


def _samples(rng: np.random.Generator) -> Iterator[Sample]:
    x = rng.standard_normal((6, 3))
    yield Sample((x, rng.integers(0, 3, (6, 1))), name="labels (N, 1)")
    yield Sample((x, rng.integers(0, 3, (6,))), name="labels (N,)")
    yield Sample((rng.standard_normal((2, 4, 3)), rng.integers(0, 4, (2, 1, 3))), {"axis": 1})
    yield Sample((rng.standard_normal((5, 2)), rng.integers(0, 2, (5, 1)).astype(float)))


def _ref(x: np.ndarray, target: np.ndarray, axis: Any = None) -> np.ndarray:
    ax = x.ndim - 1 if axis is None else axis % x.ndim
    pred = np.argmax(x, axis=ax).reshape(-1)
    t = target.reshape(-1).astype(np.int64)
    out = np.zeros((x.shape[ax], x.shape[ax]), np.int64)
    for i, j in zip(t, pred):
        out[i, j] += 1
    return out


def register_functions(register: Any) -> None:
    """Register the metrics."""
    register.function(
        "ConfusionMatrix",
        _confusion_matrix,
        inputs=("x", "target"),
        attrs={"axis": None},
        differentiable=False,
        samples=_samples,
        reference=_ref,
        doc="""confusion_matrix(x, target, axis=None): the confusion matrix of the predictions
``argmax(x, axis)`` (``axis`` the classes' axis, the last when None) against the integer labels
``target`` (nnabla ``F.confusion_matrix``).

``target`` has ``x``'s shape with 1 (or nothing) at ``axis``; the output, ``(C, C)`` int64 for
``C = x.shape[axis]`` classes, counts at ``[t, p]`` the samples of label ``t`` predicted ``p``
(rows: labels, columns: predictions). Labels outside ``[0, C)`` raise a ValueError. No
gradient.

Example::

    >>> import numpy as np, gradhub as gh, gradhub.functions as F
    >>> x = gh.Variable(np.array([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7]]))
    >>> F.confusion_matrix(x, np.array([[1], [0], [0]])).d
    array([[1, 1],
           [0, 1]])
""",
    )
