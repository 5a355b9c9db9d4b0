"""nnabla's functions: ``import gradhub_compat.nnabla.functions as F``.

Every function registered in gradhub (``gradhub.functions``: nnabla names and arguments, e.g.
``F.convolution``, ``F.max_pooling``, ``F.softmax_cross_entropy``) is offered here, with its
Variable results adopted as :class:`gradhub_compat.nnabla.Variable` (so ``.g`` is an array and
``backward`` has nnabla's signature). Looking a name up loads the plugins, as in
``gradhub.functions``.

Example::

    >>> import numpy as np
    >>> import gradhub_compat.nnabla as nn
    >>> import gradhub_compat.nnabla.functions as F
    >>> x = nn.Variable.from_numpy_array(np.array([1.0, 2.0, 3.0]))
    >>> F.sum(x * 2.0).d
    array(12., dtype=float32)
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
from gradhub import functions as _native
from gradhub.device import context_device
from gradhub.modes import no_grad
from gradhub.variable import Variable as _NativeVariable

from .._common import adopt, wrapped_attribute
from . import _layer_functions as _layer
from ._auto_forward import kept_unless_auto_forward, running_array
from ._variable import NdArray, Variable

_wrappers: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {}


def constant(val: float = 0, shape: Iterable[int] = ()) -> Variable:
    """A Variable of ``shape`` filled with ``val`` that needs no gradient (nnabla's F.constant).

    Example::

        >>> import gradhub_compat.nnabla.functions as F
        >>> F.constant(2.5, (2,)).d
        array([2.5, 2.5], dtype=float32)
    """
    dev = context_device()
    with dev.activate():
        arr = dev.xp.full(tuple(int(s) for s in shape), val, dtype=np.float32)
    v = Variable.__new__(Variable)
    _NativeVariable.__init__(v, arr, need_grad=False)
    return v


def identity(x: Any) -> Any:
    r"""nnabla's Identity: :math:`y = x` (a copy), the gradient passed through unchanged.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.array([1.0, 2.0]), need_grad=True)
        >>> y = F.identity(x)
        >>> y.backward(); y.d, x.g
        (array([1., 2.], dtype=float32), array([1., 1.], dtype=float32))
    """
    if type(x) is NdArray:
        return NdArray._of(x.data.copy())
    return adopt(_layer.identity(_as_variable(x, "identity")), Variable)


def sink(*x: Any, one_input_grad: bool = True) -> Variable:
    r"""nnabla's Sink: one scalar output that gathers several outputs, so that one
    ``forward()``/``backward()`` call computes all of them.

    Its value is 0 (nnabla leaves it uninitialized). Its backward ignores the incoming gradient:
    with ``one_input_grad`` (the default) each input's gradient is 1,
    :math:`\partial L / \partial x_i = 1`; otherwise it is what the input holds in ``.g`` when
    the backward pass reaches it (set beforehand, e.g. ``y.g = dy``), as nnabla's.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.array([1.0, 2.0]), need_grad=True)
        >>> s = F.sink(x * 2.0, F.sum(x * x))
        >>> s.forward(); s.backward()
        >>> x.g                                   # 2 * 1 + 2 x * 1
        array([4., 6.], dtype=float32)
    """
    if not x:
        raise TypeError("nnabla F.sink: give at least one Variable")
    xs = [_as_variable(v, f"sink (input {i})") for i, v in enumerate(x)]
    return adopt(_layer.sink(xs, one_input_grad), Variable)  # type: ignore[no-any-return]


def softmax_cross_entropy(x: Any, target: Any, axis: Any = None) -> Any:
    r"""nnabla's softmax cross entropy, :math:`y_i = -\log \mathrm{softmax}(x)_{i, t_i}`, where
    a negative label :math:`t_i < 0` gives a loss of 0 and no gradient (nnabla 1.39 skips it).

    The labels are read at each execution, so a new ``target.d`` with or without negative
    labels is honoured by ``forward()``. Labels at or above the number of classes raise
    ``ValueError`` (nnabla reads outside the row then). One recorded node, named
    ``SoftmaxCrossEntropy`` as nnabla's.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.zeros((2, 4)), need_grad=True)
        >>> t = nn.Variable.from_numpy_array(np.array([[1], [-1]]))
        >>> F.softmax_cross_entropy(x, t).d.ravel()
        array([1.3862944, 0.       ], dtype=float32)
    """
    if type(x) is NdArray or type(target) is NdArray:
        return _ndarray_call(_layer.softmax_cross_entropy, (x, target), {"axis": axis})
    x = _as_variable(x, "softmax_cross_entropy (x)")
    target = _as_variable(target, "softmax_cross_entropy (target)")
    return adopt(_layer.softmax_cross_entropy(x, target, axis), Variable)


def _base_axis(fname: str, x: Any, base_axis: Any) -> Any:
    """nnabla's negative ``base_axis``: counted from the end (-1 is the last axis)."""
    if isinstance(base_axis, (int, np.integer)) and not isinstance(base_axis, bool):
        if base_axis < 0:
            nd = len(x.shape)
            if base_axis < -nd:
                raise ValueError(
                    f"nnabla F.{fname}: base_axis={base_axis} is out of range for x of shape "
                    f"{tuple(x.shape)} (from -{nd} to {nd - 1})"
                )
            return int(base_axis) + nd
    return base_axis


def affine(x: Any, weight: Any, bias: Any = None, base_axis: int = 1) -> Any:
    r"""nnabla's affine, :math:`y = x W + b` over the axes of ``x`` from ``base_axis`` on; a
    negative ``base_axis`` counts from the end (-1: the last axis), as nnabla.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.ones((2, 3, 4)))
        >>> w = nn.Variable.from_numpy_array(np.ones((4, 5)))
        >>> F.affine(x, w, base_axis=-1).shape
        (2, 3, 5)
    """
    fn = _on_ndarrays(_native.affine)
    out = fn(x, weight, bias, _base_axis("affine", x, base_axis))
    return adopt(out, Variable)


def max(
    x: Any,
    axis: Any = None,
    keepdims: bool = False,
    with_index: bool = False,
    only_index: bool = False,
) -> Any:
    r"""nnabla's max over ``axis``; at ties the gradient goes to the first maximum only (the one
    ``with_index`` returns), as nnabla's backward.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.array([[1.0, 3.0, 3.0]]), need_grad=True)
        >>> y = F.max(x, axis=1)
        >>> y.backward()
        >>> x.g
        array([[0., 1., 0.]], dtype=float32)
    """
    fn = _on_ndarrays(_native.max)
    return fn(x, axis, keepdims, with_index, only_index, ties="first")


def min(
    x: Any,
    axis: Any = None,
    keepdims: bool = False,
    with_index: bool = False,
    only_index: bool = False,
) -> Any:
    r"""nnabla's min over ``axis``; at ties the gradient goes to the first minimum only (the one
    ``with_index`` returns), as nnabla's backward.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> F.min(nn.Variable.from_numpy_array(np.array([[4.0, 1.0, 1.0]])), axis=1).d
        array([1.], dtype=float32)
    """
    fn = _on_ndarrays(_native.min)
    return fn(x, axis, keepdims, with_index, only_index, ties="first")


def maximum2(x0: Any, x1: Any) -> Any:
    r"""nnabla's elementwise :math:`\max(x_0, x_1)`; at a tie the gradient goes to ``x1``, as
    nnabla's backward.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> a = nn.Variable.from_numpy_array(np.array([1.0, 2.0]), need_grad=True)
        >>> b = nn.Variable.from_numpy_array(np.array([1.0, 0.0]), need_grad=True)
        >>> F.maximum2(a, b).backward()
        >>> a.g, b.g
        (array([0., 1.], dtype=float32), array([1., 0.], dtype=float32))
    """
    return _on_ndarrays(_native.maximum2)(x0, x1, ties="second")


def minimum2(x0: Any, x1: Any) -> Any:
    r"""nnabla's elementwise :math:`\min(x_0, x_1)`; at a tie the gradient goes to ``x1``, as
    nnabla's backward.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> a = nn.Variable.from_numpy_array(np.array([1.0, 2.0]))
        >>> F.minimum2(a, nn.Variable.from_numpy_array(np.array([1.0, 0.0]))).d
        array([1., 0.], dtype=float32)
    """
    return _on_ndarrays(_native.minimum2)(x0, x1, ties="second")


def sign(x: Any, alpha: float = 1.0) -> Any:
    r"""nnabla's sign: :math:`1` for :math:`x > 0`, :math:`-1` for :math:`x < 0`, ``alpha`` at 0;
    its gradient is the incoming gradient unchanged (nnabla's straight-through estimator,
    :math:`\partial y / \partial x = 1`), its second derivative 0.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.array([-1.5, 0.0, 2.0]), need_grad=True)
        >>> y = F.sign(x)
        >>> y.backward()
        >>> y.d, x.g
        (array([-1.,  1.,  1.], dtype=float32), array([1., 1., 1.], dtype=float32))
    """
    return _on_ndarrays(_ste)(functools.partial(_native.sign, alpha=alpha), x)


def _ste(fn: Callable[..., Any], x: Any) -> Any:
    """``fn(x)`` (a non-differentiable function: sign, a rounding) whose gradient is the
    incoming one (nnabla's straight-through estimator): ``fn(x) + (c - stop_gradient(c))`` with
    ``c`` the gradient path, exactly 0 in the forward pass, also when ``forward()`` re-executes
    the graph on new data (``c`` is ``x`` clipped to the finite range, so an infinite ``x``
    gives ``fn(x)``, not NaN)."""
    x = _native_variable(x)
    if x.dtype.kind != "f":
        return fn(x)
    big = float(np.finfo(x.dtype).max)
    c = _native.clip_by_value(x, -big, big)
    return fn(x) + (c - _native.stop_gradient(c))


def round(x: Any) -> Any:
    r"""nnabla's round: the nearest integer, halves away from zero (``round(-2.5) = -3``); its
    gradient is the incoming gradient unchanged (nnabla's straight-through estimator,
    :math:`\partial y / \partial x = 1`), its second derivative 0. gradhub's ``F.round`` has no
    gradient.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.array([-2.5, 0.5, 1.2]), need_grad=True)
        >>> y = F.round(x)
        >>> y.backward()
        >>> y.d, x.g
        (array([-3.,  1.,  1.], dtype=float32), array([1., 1., 1.], dtype=float32))
    """
    return _on_ndarrays(_ste)(_native.round, x)


def ceil(x: Any) -> Any:
    r"""nnabla's ceil, :math:`y = \lceil x \rceil`, with the straight-through gradient
    :math:`\partial y / \partial x = 1` (second derivative 0), as nnabla.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.array([-1.5, 1.2]), need_grad=True)
        >>> y = F.ceil(x)
        >>> y.backward()
        >>> y.d, x.g
        (array([-1.,  2.], dtype=float32), array([1., 1.], dtype=float32))
    """
    return _on_ndarrays(_ste)(_native.ceil, x)


def floor(x: Any) -> Any:
    r"""nnabla's floor, :math:`y = \lfloor x \rfloor`, with the straight-through gradient
    :math:`\partial y / \partial x = 1` (second derivative 0), as nnabla.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.array([-1.5, 1.2]), need_grad=True)
        >>> y = F.floor(x)
        >>> y.backward()
        >>> y.d, x.g
        (array([-2.,  1.], dtype=float32), array([1., 1.], dtype=float32))
    """
    return _on_ndarrays(_ste)(_native.floor, x)


def _binary(x: Any, low: float, slope: float) -> Any:
    """``1`` for ``x > 0``, else ``low``, plus ``slope * (c - stop_gradient(c))`` with ``c`` =
    ``hard_tanh(x)``: the gradient is ``slope`` for ``|x| < 1`` and 0 elsewhere (at ``|x| = 1``
    included), as nnabla's BinaryTanh / BinarySigmoid."""
    x = _native_variable(x)
    if x.dtype.kind != "f":
        x = _native.cast(x, "float32")
    y = _native.greater_scalar(x, 0.0)
    if low != 0.0:
        y = y * (1.0 - low) + low
    c = _native.hard_tanh(x)
    d = c - _native.stop_gradient(c)
    return y + (d * slope if slope != 1.0 else d)


def binary_tanh(x: Any) -> Any:
    r"""nnabla's binary tanh: :math:`y = 1` for :math:`x > 0`, else :math:`-1`; its gradient
    is nnabla's straight-through approximation, 1 for :math:`|x| < 1` and 0 for
    :math:`|x| \ge 1` (the gradient of ``hard_tanh``), the second derivative 0.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.array([-2.0, 0.0, 0.5, 1.0]), need_grad=True)
        >>> y = F.binary_tanh(x)
        >>> y.backward()
        >>> y.d, x.g
        (array([-1., -1.,  1.,  1.], dtype=float32), array([0., 1., 1., 0.], dtype=float32))
    """
    return _on_ndarrays(_binary)(x, -1.0, 1.0)


def binary_sigmoid(x: Any) -> Any:
    r"""nnabla's binary sigmoid: :math:`y = 1` for :math:`x > 0`, else :math:`0`; its gradient
    is nnabla's straight-through approximation, :math:`1/2` for :math:`|x| < 1` and 0 for
    :math:`|x| \ge 1`, the second derivative 0.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.array([-2.0, 0.0, 0.5, 1.0]), need_grad=True)
        >>> y = F.binary_sigmoid(x)
        >>> y.backward()
        >>> y.d, x.g
        (array([0., 0., 1., 1.], dtype=float32), array([0. , 0.5, 0.5, 0. ], dtype=float32))
    """
    return _on_ndarrays(_binary)(x, 0.0, 0.5)


def _hard_sigmoid(x: Any) -> Any:
    v = _float_variable(x)
    if v is None:
        return _native.hard_sigmoid(x)
    ends = _native.equal_scalar(v, 2.5) + _native.equal_scalar(v, -2.5)
    return _native.where(ends, v * 0.2 + 0.5, _native.hard_sigmoid(v))


def hard_sigmoid(x: Any) -> Any:
    r"""nnabla's hard sigmoid, :math:`y = \min(\max(0.2 x + 0.5, 0), 1)`; the gradient is 0.2
    where :math:`-2.5 \le x \le 2.5`, both ends included (nnabla's backward), and 0 outside.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.array([-3.0, -2.5, 0.0, 2.5]), need_grad=True)
        >>> y = F.hard_sigmoid(x)
        >>> y.backward()
        >>> y.d, x.g
        (array([0. , 0. , 0.5, 1. ], dtype=float32), array([0. , 0.2, 0.2, 0.2], dtype=float32))
    """
    return _on_ndarrays(_hard_sigmoid)(x)


def _crelu(x: Any, axis: int = 1) -> Any:
    v = _float_variable(x)
    if v is None:
        return _native.crelu(x, axis)
    y = _native.crelu(v, axis)  # checks axis
    # the negative half relu(-x), whose gradient nnabla also passes at x = 0: 0 - x there (+0.0)
    neg = _native.where(
        _native.equal_scalar(v, 0.0), _native.r_sub_scalar(v, 0.0), _native.relu(-v)
    )
    return _native.concatenate(_native.relu(v), neg, axis=axis % y.ndim)


def crelu(x: Any, axis: int = 1) -> Any:
    r"""nnabla's concatenated ReLU, ``relu(x)`` and ``relu(-x)`` joined along ``axis``; at
    :math:`x = 0` the gradient is -1 (nnabla's backward passes the negative half's there),
    elsewhere 1 for :math:`x > 0` and -1 for :math:`x < 0`.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.array([[-1.0, 0.0, 2.0]]), need_grad=True)
        >>> y = F.crelu(x)
        >>> y.backward()
        >>> y.d, x.g
        (array([[0., 0., 2., 1., 0., 0.]], dtype=float32), array([[-1., -1.,  1.]], dtype=float32))
    """
    return _on_ndarrays(_crelu)(x, axis)


def gelu(x: Any) -> Any:
    r"""nnabla's GELU, the tanh approximation
    :math:`y = \frac{x}{2}(1 + \tanh(\sqrt{2/\pi}\,(x + 0.044715 x^3)))` (gradhub's
    ``F.gelu(x, approximate="tanh")``).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> F.gelu(nn.Variable.from_numpy_array(np.array([0.0, 1.0]))).d
        array([0.      , 0.841192], dtype=float32)
    """
    return _on_ndarrays(_native.gelu)(x, approximate="tanh")


def _float_variable(x: Any) -> Any:
    """``x`` as a native Variable, or None when it is not floating (no gradient to adjust)."""
    x = _native_variable(x)
    return x if x.dtype.kind == "f" else None


def _abs(x: Any) -> Any:
    v = _float_variable(x)
    if v is None:
        return _native.abs(x)
    return _native.where(_native.equal_scalar(v, 0.0), v, _native.abs(v))


def abs(x: Any) -> Any:
    r"""nnabla's abs, :math:`y = |x|`; its gradient is :math:`\mathrm{sign}(x)` with
    :math:`+1` at :math:`x = 0` (nnabla's backward: :math:`x \ge 0`), the second derivative 0.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.array([-2.0, 0.0, 3.0]), need_grad=True)
        >>> y = F.abs(x)
        >>> y.backward()
        >>> y.d, x.g
        (array([2., 0., 3.], dtype=float32), array([-1.,  1.,  1.], dtype=float32))
    """
    return _on_ndarrays(_abs)(x)


def _hard_tanh(x: Any) -> Any:
    v = _float_variable(x)
    if v is None:
        return _native.hard_tanh(x)
    ends = _native.equal_scalar(v, 1.0) + _native.equal_scalar(v, -1.0)
    return _native.where(ends, v, _native.hard_tanh(v))


def hard_tanh(x: Any) -> Any:
    r"""nnabla's hard tanh, :math:`y = \min(\max(x, -1), 1)`; the gradient passes where
    :math:`-1 \le x \le 1`, both ends included (nnabla's backward), and is 0 outside.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.array([-2.0, -1.0, 0.5, 1.0]), need_grad=True)
        >>> y = F.hard_tanh(x)
        >>> y.backward()
        >>> y.d, x.g
        (array([-1. , -1. ,  0.5,  1. ], dtype=float32), array([0., 1., 1., 1.], dtype=float32))
    """
    return _on_ndarrays(_hard_tanh)(x)


def _scalar_extremum(fn: Callable[..., Any], x: Any, val: float) -> Any:
    v = _float_variable(x)
    if v is None:
        return fn(x, val)
    return _native.where(_native.equal_scalar(v, val), float(val), fn(v, val))


def maximum_scalar(x: Any, val: float = 1.0) -> Any:
    r"""nnabla's :math:`y = \max(x, \mathrm{val})`; the gradient passes where
    :math:`x > \mathrm{val}` only: at a tie (:math:`x = \mathrm{val}`) it is 0, as
    nnabla's backward.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.array([-1.0, 0.0, 2.0]), need_grad=True)
        >>> y = F.maximum_scalar(x, 0.0)
        >>> y.backward()
        >>> y.d, x.g
        (array([0., 0., 2.], dtype=float32), array([0., 0., 1.], dtype=float32))
    """
    return _on_ndarrays(_scalar_extremum)(_native.maximum_scalar, x, val)


def minimum_scalar(x: Any, val: float = 1.0) -> Any:
    r"""nnabla's :math:`y = \min(x, \mathrm{val})`; the gradient passes where
    :math:`x < \mathrm{val}` only: at a tie (:math:`x = \mathrm{val}`) it is 0, as
    nnabla's backward.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.array([-1.0, 0.0, 2.0]), need_grad=True)
        >>> y = F.minimum_scalar(x, 0.0)
        >>> y.backward()
        >>> y.d, x.g
        (array([-1.,  0.,  0.], dtype=float32), array([1., 0., 0.], dtype=float32))
    """
    return _on_ndarrays(_scalar_extremum)(_native.minimum_scalar, x, val)


def clip_by_value(x: Any, min: Any, max: Any) -> Any:
    r"""nnabla's clip_by_value, :math:`y = \min(\max(x, \mathrm{min}), \mathrm{max})`, composed as
    nnabla's: ``maximum_scalar``/``minimum_scalar`` for number bounds (at a bound the gradient of
    ``x`` is 0), ``maximum2``/``minimum2`` for Variable bounds (at a bound the gradient goes to the
    bound).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.array([-2.0, -1.0, 0.5, 1.0]), need_grad=True)
        >>> y = F.clip_by_value(x, -1.0, 1.0)
        >>> y.backward()
        >>> y.d, x.g
        (array([-1. , -1. ,  0.5,  1. ], dtype=float32), array([0., 0., 1., 0.], dtype=float32))
    """
    if np.isscalar(min):
        y = maximum_scalar(x, float(min))  # type: ignore[arg-type]
    elif isinstance(min, (_NativeVariable, NdArray)):
        y = maximum2(x, min)
    else:
        raise TypeError("nnabla F.clip_by_value: min must be Variable, NdArray, or scalar.")
    if np.isscalar(max):
        return minimum_scalar(y, float(max))  # type: ignore[arg-type]
    if isinstance(max, (_NativeVariable, NdArray)):
        return minimum2(y, max)
    raise TypeError("nnabla F.clip_by_value: max must be Variable, NdArray, or scalar.")


def _native_variable(x: Any) -> Any:
    return x if isinstance(x, _NativeVariable) else _NativeVariable(x, need_grad=False)


def _as_variable(x: Any, where: str) -> Any:
    if isinstance(x, _NativeVariable):
        return x
    if type(x) is NdArray:
        return _as_leaf(x)
    raise TypeError(f"nnabla F.{where}: expected a Variable, got {type(x).__name__}")


def _batch_normalization(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``F.batch_normalization`` that, while auto_forward is off (nnabla's default), leaves the
    running ``mean``/``variance`` as they were before the build: only ``forward()`` updates them
    (see :mod:`gradhub_compat.nnabla._auto_forward`)."""
    sig = inspect.signature(fn)

    @functools.wraps(fn)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError:
            return adopt(fn(*args, **kwargs), Variable)  # the native call names the problem
        a = bound.arguments
        stats = [running_array(a.get("mean")), running_array(a.get("variance"))]
        with kept_unless_auto_forward(stats if a.get("batch_stat", True) else []):
            return adopt(fn(*args, **kwargs), Variable)

    return wrapped


def _on_ndarrays(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` (with its Variable results adopted) that also takes NdArrays, as nnabla's
    functions: given one, it computes at once (recording nothing) and returns NdArrays. One
    frame: the check is a type test per argument."""

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        for a in args:
            if type(a) is NdArray:
                return _ndarray_call(fn, args, kwargs)
        if kwargs:
            for v in kwargs.values():
                if type(v) is NdArray:
                    return _ndarray_call(fn, args, kwargs)
        out = fn(*args, **kwargs)
        if type(out) is _NativeVariable:
            out.__class__ = Variable
            return out
        return adopt(out, Variable)

    wrapped.__name__ = wrapped.__qualname__ = getattr(fn, "__name__", "function")
    wrapped.__doc__ = fn.__doc__
    wrapped.__wrapped__ = fn  # type: ignore[attr-defined]
    sig = getattr(fn, "__signature__", None)
    if sig is not None:
        wrapped.__signature__ = sig  # type: ignore[attr-defined]
    return wrapped


def _as_leaf(value: Any) -> Any:
    if type(value) is not NdArray:
        return value
    arr = value.data
    if arr.dtype.kind == "f" and arr.dtype != np.float32:  # nnabla computes in float32
        arr = arr.astype(np.float32)
    return _NativeVariable.leaf(arr, False)


def _ndarray_call(fn: Callable[..., Any], args: Any, kwargs: Any) -> Any:
    with no_grad():
        out = fn(*[_as_leaf(a) for a in args], **{k: _as_leaf(v) for k, v in kwargs.items()})
    if isinstance(out, _NativeVariable):
        return NdArray._of(out._data)
    if isinstance(out, (tuple, list)):
        return type(out)(NdArray._of(o._data) if isinstance(o, _NativeVariable) else o for o in out)
    return out


def _wrap(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    if name == "batch_normalization":
        return _on_ndarrays(_batch_normalization(fn))
    wrapped = _on_ndarrays(fn)
    wrapped.__name__ = wrapped.__qualname__ = name
    return wrapped


def __getattr__(name: str) -> Any:
    return wrapped_attribute(__name__, _native, name, _wrappers, lambda fn: _wrap(fn, name))


def __dir__() -> list[str]:
    return sorted(
        {*_native.__dir__(), "constant", "identity", "sink", "binary_tanh", "binary_sigmoid"}
    )
