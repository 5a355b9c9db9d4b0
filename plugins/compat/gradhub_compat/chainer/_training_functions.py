"""The chainer functions of the training surface: ``F.accuracy``, ``F.batch_normalization``,
``F.fixed_batch_normalization`` (re-exported by :mod:`gradhub_compat.chainer.functions`).

The batch normalizations are compositions of registered gradhub functions (so every gradient,
of any order, comes from the native engine) in chainer 7.8.1's order of operations on the CPU:
``mean`` and ``var`` over the reduced axes, ``inv_std = 1 / sqrt(var + eps)``,
``y = (x - mean) * inv_std * gamma + beta``.
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np
from gradhub.batching import refuse_data
from gradhub.modes import is_tracing
from gradhub.variable import Variable as _NativeVariable
from gradhub.variable import observe_read

from .._common import adopt
from .._common import call_native as _call
from . import Variable, as_variable
from ._device import activate


def _data(x: Any, where: str) -> Any:
    """The array of a Variable or array, read in Python by the function ``where`` (refused
    inside a step that gradhub.compile traces: what Python computes from it would be computed
    at the first call only)."""
    if isinstance(x, _NativeVariable):
        refuse_data(x, f"chainer.functions.{where}")
        observe_read(x, f"chainer.functions.{where}, which reads it in Python")
        return x._data
    return x


def accuracy(y: Any, t: Any, ignore_label: int | None = None) -> Variable:
    """The fraction of samples whose arg-max score (over axis 1 of ``y``) equals the label
    ``t`` (integers of shape ``(N, ...)``), in y's dtype; with ``ignore_label``, labels equal
    to it are left out (0 when none is left). Not differentiable, as chainer.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> y = np.array([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7]], dtype=np.float32)
        >>> F.accuracy(y, np.array([1, 1, 1], dtype=np.int32))
        variable(0.6666667)
    """
    ya, ta = _data(y, "accuracy"), _data(t, "accuracy")
    if (
        getattr(ya, "dtype", np.dtype(object)).kind != "f"
        or getattr(ta, "dtype", np.dtype(object)).kind not in "iu"
    ):
        raise TypeError(
            "chainer F.accuracy: y must be floating point and t integer, got "
            f"{getattr(ya, 'dtype', type(ya))} and {getattr(ta, 'dtype', type(ta))}"
        )
    if ya.ndim < ta.ndim or ya.shape[0] != ta.shape[0] or ya.shape[2 : ta.ndim + 1] != ta.shape[1:]:
        raise ValueError(
            f"chainer F.accuracy: the shapes of y {tuple(ya.shape)} and t {tuple(ta.shape)} do "
            "not match (y: (N, C, ...), t: (N, ...))"
        )
    xp = as_variable(y).device.xp
    with activate(ya):
        pred = ya.argmax(axis=1).reshape(ta.shape)
        if ignore_label is not None:
            mask = ta == ignore_label
            ignore_cnt = int(mask.sum())
            pred = xp.where(mask, ignore_label, pred)
            count = int((pred == ta).sum()) - ignore_cnt
            total = ta.size - ignore_cnt
            acc = xp.asarray(0.0 if total == 0 else float(count) / total, dtype=ya.dtype)
        else:
            acc = xp.asarray((pred == ta).mean(dtype=ya.dtype))
    return Variable(acc, requires_grad=False)


def _axes(x: Any, gamma: Any, axis: Any) -> tuple[int, ...]:
    if axis is None:
        return (0, *range(gamma.ndim + 1, x.ndim))
    return (axis,) if isinstance(axis, int) else tuple(axis)


def _expanded_shape(x: Any, axes: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(1 if i in axes else d for i, d in enumerate(x.shape))


def _check(fname: str, x: Any, gamma: Any, beta: Any, axes: tuple[int, ...]) -> None:
    key = tuple(d for i, d in enumerate(x.shape) if i not in axes)
    for what, v in (("gamma", gamma), ("beta", beta)):
        if tuple(v.shape) != key:
            raise ValueError(
                f"chainer F.{fname}: {what} has shape {tuple(v.shape)}, expected {key} (the axes "
                f"of x {tuple(x.shape)} that are not reduced)"
            )
        if v.dtype != x.dtype:
            raise TypeError(
                f"chainer F.{fname}: {what} has dtype {v.dtype} but x has {x.dtype}; gradhub's "
                "batch normalization needs one dtype (chainer's mixed float16/float32 is not "
                "supported)"
            )


def _running_views(
    x: Any, g: Any, eps: float, running_mean: Any, running_var: Any, shape: tuple[int, ...]
) -> tuple[Any, Any] | None:
    """Leaves holding views of shape ``shape`` on the running statistics arrays (a write into
    them writes into the arrays), where nn_ops' BatchNormalization can update them as chainer
    does: both given, arrays of x's type and dtype, more than one value per channel, ``eps >
    0``. None otherwise (the statistics are then updated in Python)."""
    xa = x._data
    views = []
    for r in (running_mean, running_var):
        if type(r) is not type(xa) or r.dtype != xa.dtype or r.shape != g.shape:
            return None
        view = r.reshape(shape)
        xp = (
            np
            if isinstance(r, np.ndarray)
            else importlib.import_module(type(r).__module__.split(".")[0])
        )
        if not xp.may_share_memory(view, r):  # (a reshape that needed a copy)
            return None
        views.append(Variable(view, requires_grad=False))
    if x.size // max(g.size, 1) < 2 or not eps > 0:
        return None
    return views[0], views[1]


def _prepared(
    x: Any, gamma: Any, beta: Any, eps: float, running_mean: Any, running_var: Any, axis: Any
) -> tuple[Any, Any, Any, tuple[int, ...], tuple[int, ...], Any]:
    """``batch_normalization``'s arguments as Variables, checked, with the reduced axes, the
    parameters' expanded shape and the running statistics' views (see ``_running_views``)."""
    x = as_variable(x)
    g, b = as_variable(gamma), as_variable(beta)
    axes = _axes(x, g, axis)
    _check("batch_normalization", x, g, b, axes)
    shape = _expanded_shape(x, axes)
    return x, g, b, axes, shape, _running_views(x, g, eps, running_mean, running_var, shape)


def batch_normalization(
    x: Any,
    gamma: Any,
    beta: Any,
    eps: float = 2e-5,
    running_mean: Any = None,
    running_var: Any = None,
    decay: float = 0.9,
    axis: Any = None,
) -> Variable:
    """Batch normalization with the batch statistics:
    ``y = (x - mean) / sqrt(var + eps) * gamma + beta``, mean and (biased) var over ``axis``
    (default: axis 0 and the axes after gamma's). ``running_mean``/``running_var`` (arrays)
    are updated in place: ``r = decay * r + (1 - decay) * stat``, the variance unbiased by
    ``m / (m - 1)`` (m the number of reduced elements), as chainer.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.array([[1.0], [3.0]], dtype=np.float32)
        >>> g, b = np.ones(1, dtype=np.float32), np.zeros(1, dtype=np.float32)
        >>> F.batch_normalization(x, g, b, eps=0.0)
        variable([[-1.],
                  [ 1.]])
    """
    x, g, b, axes, shape, stats = _prepared(x, gamma, beta, eps, running_mean, running_var, axis)
    if stats is not None:
        # nn_ops' BatchNormalization: the same statistics and update, made by its kernel in
        # place, so that the update is part of the graph (a compiled step replays it)
        y = _call(
            "BatchNormalization",
            x,
            _call("Reshape", b, shape=shape),
            _call("Reshape", g, shape=shape),
            *stats,
            axes=tuple(i for i in range(x.ndim) if i not in axes),
            decay_rate=decay,
            eps=eps,
            batch_stat=True,
        )
        return adopt(y, Variable)  # type: ignore[no-any-return]
    mean = _call("Mean", x, axis=axes, keepdims=True)
    xc = x - mean
    var = _call("Mean", xc * xc, axis=axes, keepdims=True)
    inv_std = 1.0 / _call("Sqrt", var + eps)
    y = xc * inv_std
    y = y * _call("Reshape", g, shape=shape)
    y = y + _call("Reshape", b, shape=shape)
    if running_mean is not None or running_var is not None:
        if is_tracing():
            raise NotImplementedError(
                "chainer.functions.batch_normalization with running_mean/running_var (as "
                "L.BatchNormalization in training mode) updates the running statistics in "
                "Python, which a step that gradhub.compile traces would do at its first call "
                "only; run it outside gh.compile, or pass no running statistics"
            )
        refuse_data(
            x, "chainer.functions.batch_normalization (running statistics updated in Python)"
        )
        m = x.size // g.size
        adjust = m / max(m - 1.0, 1.0)  # unbiased estimation
        with activate(x._data):
            if running_mean is not None:
                running_mean *= decay
                running_mean += (1 - decay) * mean._data.reshape(g.shape)
            if running_var is not None:
                running_var *= decay
                running_var += (1 - decay) * adjust * var._data.reshape(g.shape)
    return adopt(y, Variable)  # type: ignore[no-any-return]


def batch_normalization_over(
    comm: Any,
    x: Any,
    gamma: Any,
    beta: Any,
    eps: float,
    running_mean: Any,
    running_var: Any,
    decay: float,
    axis: Any = None,
) -> Variable:
    """:func:`batch_normalization` with the statistics of the batches of every process of
    ``comm`` (a gradhub communicator) together: gradhub-nn-ops' ``SyncBatchNormalization``
    (chainermn's ``MultiNodeBatchNormalization``). The running statistics (arrays, or None:
    none kept) are updated in place by its kernel."""
    x, g, b, axes, shape, stats = _prepared(x, gamma, beta, eps, running_mean, running_var, axis)
    if stats is None:  # no running statistics to keep (F.forget's second pass): dummies
        xp = x.device.xp
        with activate(x._data):
            stats = (
                Variable(xp.zeros(shape, x.dtype), requires_grad=False),
                Variable(xp.ones(shape, x.dtype), requires_grad=False),
            )
    y = _call(
        "SyncBatchNormalization",
        x,
        _call("Reshape", b, shape=shape),
        _call("Reshape", g, shape=shape),
        *stats,
        comm=comm,
        axes=tuple(i for i in range(x.ndim) if i not in axes),
        decay_rate=decay,
        eps=eps,
        batch_stat=True,
    )
    return adopt(y, Variable)  # type: ignore[no-any-return]


def fixed_batch_normalization(
    x: Any, gamma: Any, beta: Any, mean: Any, var: Any, eps: float = 2e-5, axis: Any = None
) -> Variable:
    """Batch normalization with given statistics (inference):
    ``y = (x - mean) * sqrt(1 / (var + eps)) * gamma + beta``; differentiable in x, gamma and
    beta (``mean`` and ``var`` are constants here).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> one, zero = np.ones(1, dtype=np.float32), np.zeros(1, dtype=np.float32)
        >>> x = np.full((1, 1), 3.0, dtype=np.float32)
        >>> F.fixed_batch_normalization(x, one, zero, one, 4 * one, eps=0.0)
        variable([[1.]])
    """
    x = as_variable(x)
    g, b = as_variable(gamma), as_variable(beta)
    axes = _axes(x, g, axis)
    _check("fixed_batch_normalization", x, g, b, axes)
    shape = _expanded_shape(x, axes)
    xp = x.device.xp
    # mean and var as Variables (a running-statistics array is taken as it is, not copied), and
    # 1 / sqrt(var + eps) by recorded functions: a compiled step reads them at every call
    with activate(x._data):
        stats = [
            v if isinstance(v, _NativeVariable) else Variable(xp.asarray(v), requires_grad=False)
            for v in (mean, var)
        ]
    m = _call("Reshape", stats[0], shape=shape)
    s = _call("Sqrt", _call("RDivScalar", _call("Reshape", stats[1], shape=shape) + eps, val=1.0))
    y = (x - m) * s
    y = y * _call("Reshape", g, shape=shape)
    y = y + _call("Reshape", b, shape=shape)
    return adopt(y, Variable)  # type: ignore[no-any-return]
