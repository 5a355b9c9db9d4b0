"""chainer 7.8.1's ``chainer/functions/activation`` functions beyond the core of
:mod:`gradhub_compat.chainer.functions` (which re-exports them): ``clipped_relu``, ``relu6``,
``hard_sigmoid``, ``swish``, ``prelu``, ``rrelu``, ``maxout`` and ``crelu``.

Compositions of the registered gradhub functions, so every order of gradient comes from the
native engine; ``rrelu`` draws its slopes from numpy's global generator, as chainer."""

from __future__ import annotations

from typing import Any

import numpy as np
from gradhub.variable import Variable as _NativeVariable

from ..._common import call_native as _call
from ..._common import device_array
from .. import Variable, config
from .. import functions as F
from ..functions import (
    _as_dtype,
    _check_float,
    _const,
    _dtype,
    _lstm_sigmoid,
    _match,
    _out,
    _shape,
)
from ._common import _fdtype, _invalid, _kind, _norm_axis

__all__ = ["clipped_relu", "crelu", "hard_sigmoid", "maxout", "prelu", "relu6", "rrelu", "swish"]


def crelu(x: Any, axis: int = 1) -> Variable:
    """Concatenated ReLU: ``concat((relu(x), relu(-x)), axis)`` (the output is twice as long
    along ``axis``); x floating point.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.crelu(np.array([[-1.0, 2.0]], np.float32))
        variable([[0., 2., 1., 0.]])
    """
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise TypeError("axis must be an integer value")
    nd = len(_shape(x))
    if _kind(x) != "f":
        raise _invalid("CReLU", "x.dtype.kind == f", f"{_dtype(x)} != f")
    if not (nd > axis and nd >= -axis):
        raise _invalid("CReLU", f"x.ndim > {axis}, x.ndim >= {-axis}", f"x.ndim {nd}")
    return F.concat([F.relu(x), F.relu(_call("Neg", x))], axis=int(axis))


def clipped_relu(x: Any, z: float = 20.0) -> Variable:
    """``min(max(0, x), z)``; the gradient is 1 where ``0 < x < z``, else 0 (chainer's).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.clipped_relu(np.array([-1.0, 1.0, 30.0], dtype=np.float32))
        variable([ 0.,  1., 20.])
    """
    _check_float("clipped_relu", x=x)
    xv = x if isinstance(x, _NativeVariable) else _const(device_array(x), None)
    inside = _call(
        "LogicalAnd",
        _call("GreaterScalar", xv, val=0.0),
        _call("LessScalar", xv, val=float(z)),
    )
    out = _call("MulScalar", _call("GreaterEqualScalar", xv, val=float(z)), val=float(z))
    return _out(_call("Where", inside, xv, _as_dtype(out, xv.dtype)))  # type: ignore[no-any-return]


def relu6(x: Any) -> Variable:
    """``min(max(0, x), 6)`` (:func:`clipped_relu` with ``z = 6``).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.relu6(np.array([-1.0, 3.0, 7.0], dtype=np.float32))
        variable([0., 3., 6.])
    """
    return clipped_relu(x, 6.0)


def hard_sigmoid(x: Any) -> Variable:
    """``clip(0.2 x + 0.5, 0, 1)``; the gradient is 0.2 where ``-2.5 < x < 2.5``.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.hard_sigmoid(np.array([-3.0, 0.0, 3.0], dtype=np.float32))
        variable([0. , 0.5, 1. ])
    """
    _check_float("hard_sigmoid", x=x)
    y = _call("AddScalar", _call("MulScalar", x, val=0.2), val=0.5)
    return _out(_clip01(y))  # type: ignore[no-any-return]


def _clip01(y: Any) -> Any:
    """``clip(y, 0, 1)`` with gradient 1 strictly inside (0, 1), 0 elsewhere."""
    inside = _call(
        "LogicalAnd", _call("GreaterScalar", y, val=0.0), _call("LessScalar", y, val=1.0)
    )
    high = _as_dtype(_call("GreaterEqualScalar", y, val=1.0), y.dtype)
    return _call("Where", inside, y, high)


def _extended(w: Any, x: Any, fname: str, what: str) -> Any:
    """``w`` of shape ``x.shape[1:1 + w.ndim]`` reshaped to broadcast against x (chainer's
    ``_get_extended_shape``)."""
    ws, xs = _shape(w), _shape(x)
    if len(xs) < len(ws) + 1 or tuple(xs[1 : 1 + len(ws)]) != ws:
        raise TypeError(
            f"chainer F.{fname}: {what} of shape {ws} must equal x.shape[1:1 + {what}.ndim] "
            f"(x of shape {xs})"
        )
    return _call("Reshape", w, shape=(1, *ws, *(1,) * (len(xs) - len(ws) - 1)))


def swish(x: Any, beta: Any) -> Variable:
    """``x * sigmoid(beta * x)`` with ``beta`` of shape ``x.shape[1:1 + beta.ndim]``
    (broadcast over the other axes); the sigmoid is chainer's ``tanh(z / 2) / 2 + 1 / 2``.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.swish(np.zeros((1, 2), np.float32), np.ones(2, np.float32))
        variable([[0., 0.]])
    """
    _check_float("swish", x=x, beta=beta)
    x, beta = _match("swish", x, beta)
    b = _extended(beta, x, "swish", "beta")
    return _out(_call("Mul2", x, _lstm_sigmoid(_call("Mul2", b, x))))  # type: ignore[no-any-return]


def prelu(x: Any, W: Any) -> Variable:
    """x where ``x >= 0``, ``W * x`` elsewhere, with the slopes ``W`` of shape
    ``x.shape[1:1 + W.ndim]`` (broadcast over the other axes).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.prelu(np.array([[-1.0, 2.0]], np.float32), np.array([0.5, 0.5], np.float32))
        variable([[-0.5,  2. ]])
    """
    _check_float("prelu", x=x, W=W)
    x, W = _match("prelu", x, W)
    w = _extended(W, x, "prelu", "W")
    xv = x if isinstance(x, _NativeVariable) else _const(device_array(x), w)
    cond = _call("GreaterEqualScalar", xv, val=0.0)
    return _out(_call("Where", cond, xv, _call("Mul2", xv, w)))  # type: ignore[no-any-return]


def rrelu(x: Any, l: float = 1.0 / 8, u: float = 1.0 / 3, **kwargs: Any) -> Any:
    """Randomized leaky ReLU: x where ``x >= 0``, ``r * x`` elsewhere. In test mode
    (``chainer.config.train`` False) ``r = (l + u) / 2``; in training ``r`` is drawn uniformly
    in [l, u) for each element (numpy's generator), unless given (``r=``, an array of x's
    shape). ``return_r=True`` returns ``(y, r)``.

    Example::

        >>> import numpy as np
        >>> from gradhub_compat import chainer
        >>> import gradhub_compat.chainer.functions as F
        >>> with chainer.using_config("train", False):
        ...     F.rrelu(np.array([-2.4, 1.0], np.float32), l=0.1, u=0.2)
        variable([-0.36,  1.  ])
    """
    unknown = set(kwargs) - {"r", "return_r"}
    if "train" in kwargs:
        raise ValueError(
            "chainer F.rrelu: train argument is not supported anymore. Use chainer.using_config"
        )
    if unknown:
        raise TypeError(f"chainer F.rrelu: got unexpected keyword argument(s) {sorted(unknown)}")
    r = kwargs.get("r")
    return_r = bool(kwargs.get("return_r", False))
    _check_float("rrelu", x=x)
    if not 0.0 <= l < u:
        raise ValueError(f"chainer F.rrelu: need 0 <= l < u, got l={l}, u={u}")
    dt = _fdtype(x)
    shape = _shape(x)
    if not config.train:
        r = np.full(shape, (l + u) / 2, dtype=dt)
    elif r is None:
        r = np.random.uniform(l, u, shape).astype(dt, copy=False)
    else:
        r = device_array(r)  # (an xp array from an earlier call)
        if r.shape != shape or r.dtype != dt:
            raise ValueError("chainer F.rrelu: r must have the shape and dtype of x")
    xv = x if isinstance(x, _NativeVariable) else _const(device_array(x), None)
    rv = _const(r, xv)
    y = _out(_call("Where", _call("GreaterEqualScalar", xv, val=0.0), xv, _call("Mul2", xv, rv)))
    return (y, r) if return_r else y


def maxout(x: Any, pool_size: int, axis: int = 1) -> Variable:
    """The maximum over groups of ``pool_size`` consecutive channels along ``axis``:
    ``x.reshape(..., C / pool_size, pool_size, ...).max(axis + 1)`` (every element equal to
    the maximum gets the whole gradient, chainer's ``F.max``).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.maxout(np.array([[1.0, 3.0, 2.0, 0.0]], np.float32), 2)
        variable([[3., 2.]])
    """
    _check_float("maxout", x=x)
    shape = _shape(x)
    if pool_size <= 0:
        raise ValueError(f"chainer F.maxout: pool_size must be a positive integer, got {pool_size}")
    ax = _norm_axis(axis, len(shape), "maxout")
    if shape[ax] % pool_size:
        raise ValueError(
            f"chainer F.maxout: axis dimension {shape[ax]} must be a multiple of pool_size "
            f"{pool_size}"
        )
    new = (*shape[:ax], shape[ax] // pool_size, pool_size, *shape[ax + 1 :])
    h = _call("Reshape", x, shape=new)
    return _out(_call("Max", h, axis=ax + 1, ties="all"))  # type: ignore[no-any-return]
