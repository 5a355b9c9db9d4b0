"""chainer 7.8.1's ``chainer/functions/math`` functions beyond the core of
:mod:`gradhub_compat.chainer.functions` (which re-exports them): ``argmax``/``argmin``,
``cumsum``/``cumprod``, ``tensordot``, ``einsum``, ``sum_to``, the roundings (``floor``,
``ceil``, ``fix``), ``sign``, ``fmod``, ``rsqrt``, ``arctanh``, ``arctan2``, ``erfc``,
``batch_l2_norm_squared``, ``bias``, ``scale``, the special functions (``lgamma``, ``digamma``,
``polygamma``, ``zeta``, ``erfinv``, ``erfcinv``, ``erfcx``, ``ndtr``, ``ndtri``, ``log_ndtr``:
chainer 7.8.1's need SciPy, these are gradhub's registered functions), the linear algebra
(``inv``, ``batch_inv``, ``det``, ``batch_det``, ``cholesky``), ``fft``/``ifft``,
``linear_interpolate`` and ``sparse_matmul`` (NotImplementedError: it needs chainer's
``CooMatrix``).

The linear algebra and ``fft``/``ifft`` are :class:`~gradhub_compat.chainer.FunctionNode`
subclasses whose ``backward`` is chainer's, written with chainer functions, so it can be
differentiated again; the others are compositions of the registered gradhub functions."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np
from gradhub.variable import Variable as _NativeVariable

from ..._common import call_native as _call
from ..._common import device_array, host_array
from .. import Variable, as_variable
from .. import functions as F
from ..function_node import FunctionNode
from ..functions import (
    _arr,
    _as_dtype,
    _check_float,
    _const,
    _constant_of,
    _dtype,
    _match,
    _out,
    _shape,
    broadcast_to,
    reshape,
)
from ._common import _PAGE, _fdtype, _invalid, _kind, _norm_axis, _xp_of

__all__ = [
    "arctan2",
    "arctanh",
    "argmax",
    "argmin",
    "batch_det",
    "batch_inv",
    "batch_l2_norm_squared",
    "bias",
    "cholesky",
    "cumprod",
    "cumsum",
    "det",
    "digamma",
    "einsum",
    "erfc",
    "erfcinv",
    "erfcx",
    "erfinv",
    "fft",
    "fix",
    "fmod",
    "ifft",
    "inv",
    "lgamma",
    "linear_interpolate",
    "log_ndtr",
    "ndtr",
    "ndtri",
    "polygamma",
    "rsqrt",
    "scale",
    "sign",
    "sparse_matmul",
    "sum_to",
    "tensordot",
    "zeta",
]


def _fp16_mixed(fn: Callable[[Any], Any], a: Any) -> Any:
    """``fn(a)``, computed in float32 for a float16 ``a`` and cast back (chainer's
    ``_fp16_mixed_precision_helper``)."""
    if a.dtype == np.float16:
        return device_array(fn(a.astype(np.float32))).astype(np.float16)  # (xp's result)
    return device_array(fn(a))


def _square_check(label: str, a: Any, ndim: int) -> None:
    shape = _shape(a)
    if _kind(a) != "f":
        raise _invalid(label, "a.dtype.kind == f", f"{_dtype(a)} != f")
    if len(shape) != ndim:
        raise _invalid(label, f"a.ndim == {ndim}", f"{len(shape)} != {ndim}")
    if shape[-1] != shape[-2]:
        raise _invalid(label, "a.shape[-1] == a.shape[-2]", f"{shape[-1]} != {shape[-2]}")


class _Inv(FunctionNode):
    """chainer's ``Inv``/``BatchInv``: ``numpy.linalg.inv``; the gradient
    ``-inv(a)^T gy inv(a)^T`` (chainer functions, so differentiable again)."""

    def __init__(self, batched: bool) -> None:
        self.batched = batched

    @property
    def label(self) -> str:
        return "BatchInv" if self.batched else "Inv"

    def forward(self, inputs: tuple[Any, ...]) -> tuple[Any, ...]:
        self.retain_outputs((0,))
        xp = _xp_of(inputs[0])
        try:
            return (_fp16_mixed(xp.linalg.inv, inputs[0]),)
        except np.linalg.LinAlgError:
            raise ValueError("Input has singular matrices.") from None

    def backward(self, indexes: tuple[int, ...], grad_outputs: tuple[Any, ...]) -> tuple[Any, ...]:
        invx = cast(Variable, self.get_retained_outputs()[0])
        (gy,) = grad_outputs
        if self.batched:
            ret = F.matmul(-invx, gy, transa=True)
            return (F.matmul(ret, invx, transb=True),)
        invxt = F.transpose(invx)
        return (F.matmul(F.matmul(-invxt, gy), invxt),)


def inv(a: Any) -> Variable:
    """The inverse of the square matrix ``a`` (floating point, 2-d); a singular matrix raises
    ``ValueError("Input has singular matrices.")``, as chainer. float16 is computed in float32.
    The gradient ``-inv(a)^T gy inv(a)^T`` is chainer's, differentiable again.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.inv(np.array([[2.0, 0.0], [0.0, 4.0]], np.float32))
        variable([[0.5 , 0.  ],
                  [0.  , 0.25]])
    """
    _square_check("Inv", a, 2)
    return _Inv(False).apply((a,))[0]


def batch_inv(a: Any) -> Variable:
    """The inverses of the square matrices ``a[i]`` (a of shape (N, n, n)); as :func:`inv`."""
    _square_check("BatchInv", a, 3)
    return _Inv(True).apply((a,))[0]


class _BatchDet(FunctionNode):
    """chainer's ``BatchDet``: ``numpy.linalg.det``; the gradient
    ``gy * det(a) * batch_inv(a^T)`` (chainer functions, so differentiable again)."""

    @property
    def label(self) -> str:
        return "det"

    def forward(self, inputs: tuple[Any, ...]) -> tuple[Any, ...]:
        self.retain_inputs((0,))
        self.retain_outputs((0,))
        xp = _xp_of(inputs[0])
        return (_fp16_mixed(xp.linalg.det, inputs[0]),)

    def backward(self, indexes: tuple[int, ...], grad_outputs: tuple[Any, ...]) -> tuple[Any, ...]:
        (x,) = self.get_retained_inputs()
        (detx,) = self.get_retained_outputs()
        (gy,) = grad_outputs
        inv_x = batch_inv(F.transpose(x, (0, 2, 1)))
        gy = F.broadcast_to(F.reshape(gy, (-1, 1, 1)), inv_x.shape)
        detx = F.broadcast_to(F.reshape(detx, (-1, 1, 1)), inv_x.shape)
        return (gy * detx * inv_x,)


def batch_det(a: Any) -> Variable:
    """The determinants of the square matrices ``a[i]`` (a floating point of shape (N, n, n)),
    shape (N,). float16 is computed in float32. The gradient ``gy det(a) inv(a)^T`` is
    chainer's, differentiable again (through :func:`batch_inv`, so a singular matrix raises
    ``ValueError`` there).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.batch_det(np.array([[[2.0, 1.0], [1.0, 3.0]]], np.float32))
        variable([5.])
    """
    _square_check("det", a, 3)
    return _BatchDet().apply((a,))[0]


def det(a: Any) -> Variable:
    """The determinant of the square matrix ``a`` (2-d), a 0-d Variable: :func:`batch_det` of
    ``a`` reshaped to (1, n, n).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.det(np.array([[2.0, 1.0], [1.0, 3.0]], np.float32))
        variable(5.)
    """
    shape = _shape(a)
    if len(shape) < 2:
        raise IndexError(f"chainer F.det: a must be a 2-d matrix, got shape {shape}")
    batched = F.reshape(a, (1, shape[0], shape[1]))
    _square_check("det", batched, 3)
    return F.reshape(_BatchDet().apply((batched,))[0], ())


class _Cholesky(FunctionNode):
    """chainer's ``Cholesky``: ``numpy.linalg.cholesky``; chainer's gradient (differentiable
    again)."""

    @property
    def label(self) -> str:
        return "cholesky"

    def forward(self, inputs: tuple[Any, ...]) -> tuple[Any, ...]:
        self.retain_outputs((0,))
        xp = _xp_of(inputs[0])
        return (xp.linalg.cholesky(inputs[0]),)

    def backward(self, indexes: tuple[int, ...], grad_outputs: tuple[Any, ...]) -> tuple[Any, ...]:
        (gy,) = grad_outputs
        y = cast(Variable, self.get_retained_outputs()[0])
        n = y.shape[0]
        dtype = y.dtype
        xp = _xp_of(y.array)
        y_inv = inv(y)
        mask = xp.tri(n, dtype=dtype) - 0.5 * xp.eye(n, dtype=dtype)
        phi = mask * F.matmul(y, gy, transa=True)
        s = F.matmul(F.matmul(y_inv, phi, transa=True), y_inv)
        return (0.5 * (s + s.T),)


def cholesky(a: Any) -> Variable:
    """The lower-triangular Cholesky factor ``L`` of the symmetric positive-definite matrix
    ``a`` (``a = L L^T``; 2-d, floating point; ``numpy.linalg.LinAlgError`` when ``a`` is not
    positive definite, as chainer). Only the lower triangle of ``a`` is read (numpy's); the
    gradient is chainer's symmetrized one, ``(S + S^T) / 2`` with
    ``S = L^-T Phi(L^T gy) L^-1`` (``Phi`` halves the diagonal and drops the upper triangle),
    differentiable again.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.cholesky(np.array([[4.0, 2.0], [2.0, 5.0]], np.float32))
        variable([[2., 0.],
                  [1., 2.]])
    """
    shape = _shape(a)
    if _kind(a) != "f":
        raise _invalid("cholesky", "a.dtype.kind == f", f"{_dtype(a)} != f")
    if len(shape) != 2:
        raise _invalid("cholesky", "a.ndim == 2", f"{len(shape)} != 2")
    return _Cholesky().apply((a,))[0]


def linear_interpolate(p: Any, x: Any, y: Any) -> Variable:
    """Elementwise ``p * x + (1 - p) * y`` (p, x and y of one floating dtype and one shape).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.linear_interpolate(np.array([0.25], np.float32), np.array([4.0], np.float32),
        ...                      np.array([0.0], np.float32))
        variable([1.])
    """
    label = "LinearInterpolate"
    if _kind(p) != "f":
        raise _invalid(label, "p.dtype.kind == f", f"{_dtype(p)} != f")
    for what, v in (("x", x), ("y", y)):
        if _dtype(v) != _dtype(p):
            raise _invalid(label, f"{what}.dtype == p.dtype", f"{_dtype(v)} != {_dtype(p)}")
        if _shape(v) != _shape(p):
            raise _invalid(label, f"p.shape == {what}.shape", f"{_shape(p)} != {_shape(v)}")
    px = _call("Mul2", p, x)
    qy = _call("Mul2", _call("RSubScalar", p, val=1.0), y)
    return _out(_call("Add2", px, qy))  # type: ignore[no-any-return]


class _FFT(FunctionNode):
    """chainer's ``FFT``: ``numpy.fft.fft``/``ifft`` of ``real + 1j * imag`` along the last
    axis, split back into real and imaginary parts of the inputs' dtype; the backward is the
    same transform of ``(gi, gr)`` with the outputs swapped (differentiable again)."""

    def __init__(self, method: str) -> None:
        self._method = method

    @property
    def label(self) -> str:
        return "FFT"

    def forward(self, inputs: tuple[Any, ...]) -> tuple[Any, ...]:
        real, imag = inputs
        xp = _xp_of(real)
        y = getattr(xp.fft, self._method)(real + imag * 1j)
        return (
            xp.ascontiguousarray(y.real.astype(real.dtype)),
            xp.ascontiguousarray(y.imag.astype(imag.dtype)),
        )

    def backward(self, indexes: tuple[int, ...], grad_outputs: tuple[Any, ...]) -> tuple[Any, ...]:
        gr, gi = grad_outputs
        if gr is None:
            gr = Variable(np.zeros_like(gi.array), requires_grad=False)
        if gi is None:
            gi = Variable(np.zeros_like(gr.array), requires_grad=False)
        gxi, gxr = _FFT(self._method).apply((gi, gr))
        return gxr, gxi


def _fft(method: str, x: Any) -> tuple[Variable, Variable]:
    real, imag = x
    label = "FFT"
    rs, is_ = _shape(real), _shape(imag)
    if _kind(real) != "f" or len(rs) == 0 or rs != is_ or _dtype(real) != _dtype(imag):
        raise _invalid(
            label,
            "real.dtype.kind == f, real.ndim > 0, real.shape == imag.shape, "
            "real.dtype == imag.dtype",
            f"real {rs} {_dtype(real)}, imag {is_} {_dtype(imag)}",
        )
    yr, yi = _FFT(method).apply((real, imag))
    return yr, yi


def fft(x: tuple[Any, Any]) -> tuple[Variable, Variable]:
    """The discrete Fourier transform along the last axis of the complex array given as
    ``x = (real, imag)`` (one floating dtype and shape): ``(real, imag)`` of
    ``numpy.fft.fft(real + 1j * imag)`` in that dtype. Differentiable, every order.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.fft((np.array([1.0, 0.0], np.float32), np.zeros(2, np.float32)))
        (variable([1., 1.]), variable([0., 0.]))
    """
    return _fft("fft", x)


def ifft(x: tuple[Any, Any]) -> tuple[Variable, Variable]:
    """The inverse of :func:`fft` (``numpy.fft.ifft``), as chainer."""
    return _fft("ifft", x)


def sparse_matmul(a: Any, b: Any, transa: bool = False, transb: bool = False) -> Variable:
    """Not supported: chainer's ``sparse_matmul`` takes a ``chainer.utils.CooMatrix``, which
    the layer does not provide (NotImplementedError)."""
    raise NotImplementedError(
        "chainer F.sparse_matmul is not supported by gradhub (chainer.utils.CooMatrix is not "
        f"part of the layer); multiply the dense matrices with F.matmul; see {_PAGE}"
    )


def _arg_extremum(op: str, fname: str, x: Any, axis: Any) -> Variable:
    _check_float(fname, x=x)
    if axis is not None:
        _norm_axis(int(axis), len(_shape(x)), fname)
    idx = _call(op, x, axis=axis, only_index=True)
    return _constant_of(_call("Cast", idx, dtype="int32"))


def argmax(x: Any, axis: int | None = None) -> Variable:
    """The index of the maximum over ``axis`` (of the flattened x when None): an int32 Variable
    without a gradient, as chainer; x must be floating point.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.argmax(np.array([[1.0, 3.0], [4.0, 2.0]], dtype=np.float32), axis=1)
        variable([1, 0])
    """
    return _arg_extremum("Max", "argmax", x, axis)


def argmin(x: Any, axis: int | None = None) -> Variable:
    """The index of the minimum over ``axis`` (of the flattened x when None): an int32 Variable
    without a gradient, as chainer; x must be floating point.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.argmin(np.array([[1.0, 3.0], [4.0, 2.0]], dtype=np.float32), axis=1)
        variable([0, 1])
    """
    return _arg_extremum("Min", "argmin", x, axis)


def _scan(native: str, fname: str, x: Any, axis: Any) -> Variable:
    if not (axis is None or isinstance(axis, (int, np.integer))):
        raise TypeError(f"chainer F.{fname}: axis must be int or None")
    _check_float(fname, x=x)
    h = x
    if axis is None:
        h = _call("Reshape", x, shape=(int(math.prod(_shape(x))),))
        axis = 0
    ax = _norm_axis(int(axis), len(_shape(h)), fname)
    return _out(_call(native, h, axis=ax))  # type: ignore[no-any-return]


def cumsum(x: Any, axis: int | None = None) -> Variable:
    """The cumulative sum :math:`y_i = \\sum_{j \\le i} x_j` along ``axis`` (of the flattened x
    when None).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.cumsum(np.array([1.0, 2.0, 3.0], dtype=np.float32))
        variable([1., 3., 6.])
    """
    return _scan("CumSum", "cumsum", x, axis)


def cumprod(x: Any, axis: int | None = None) -> Variable:
    """The cumulative product :math:`y_i = \\prod_{j \\le i} x_j` along ``axis`` (of the
    flattened x when None).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.cumprod(np.array([1.0, 2.0, 3.0], dtype=np.float32))
        variable([1., 2., 6.])
    """
    return _scan("CumProd", "cumprod", x, axis)


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def tensordot(a: Any, b: Any, axes: Any = 2) -> Variable:
    """numpy's ``tensordot``: the sum of products over the last ``axes`` axes of ``a`` and the
    first of ``b`` (an int), or over the given pairs of axes (two sequences).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.tensordot(np.ones((2, 3), np.float32), np.ones((3, 4), np.float32), axes=1).shape
        (2, 4)
    """
    _check_float("tensordot", a=a, b=b)
    sa, sb = _shape(a), _shape(b)
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        if n < 0 or n > len(sa) or n > len(sb):
            raise ValueError(f"chainer F.tensordot: axes={n} is out of range")
        ax_a, ax_b = list(range(len(sa) - n, len(sa))), list(range(n))
    else:
        if len(axes) != 2:
            raise ValueError("chainer F.tensordot: axes must be an int or a pair of sequences")
        pa, pb = axes
        pa = [pa] if isinstance(pa, (int, np.integer)) else list(pa)
        pb = [pb] if isinstance(pb, (int, np.integer)) else list(pb)
        if len(pa) != len(pb):
            raise ValueError("chainer F.tensordot: axes of a and b must have the same length")
        ax_a = [int(i) % len(sa) for i in pa]
        ax_b = [int(i) % len(sb) for i in pb]
    for i, j in zip(ax_a, ax_b, strict=True):
        if sa[i] != sb[j]:
            raise ValueError(
                f"chainer F.tensordot: shape-mismatch for sum ({sa} and {sb}, axes {axes})"
            )
    la = list(_LETTERS[: len(sa)])
    lb = list(_LETTERS[len(sa) : len(sa) + len(sb)])
    for i, j in zip(ax_a, ax_b, strict=True):
        lb[j] = la[i]
    out = [c for i, c in enumerate(la) if i not in ax_a] + [
        c for j, c in enumerate(lb) if j not in ax_b
    ]
    eq = f"{''.join(la)},{''.join(lb)}->{''.join(out)}"
    return _out(_call("Einsum", a, b, equation=eq))  # type: ignore[no-any-return]


def einsum(*operands: Any) -> Variable:
    """numpy's ``einsum(subscripts, *operands)`` (chainer's signature: the subscripts first),
    e.g. ``F.einsum("ij,jk->ik", a, b)``; ``...`` allowed.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.einsum("ij->j", np.ones((2, 3), np.float32))
        variable([2., 2., 2.])
    """
    if not operands or not isinstance(operands[0], str):
        raise TypeError("chainer F.einsum: the first argument must be the subscripts (a str)")
    subscripts, xs = operands[0], operands[1:]
    _check_float("einsum", **{f"operand {i}": x for i, x in enumerate(xs)})
    return _out(_call("Einsum", *_match("einsum", *xs), equation=subscripts.replace(" ", "")))  # type: ignore[no-any-return]


def sum_to(x: Any, shape: Sequence[int]) -> Variable:
    """x summed to ``shape`` (the reverse of broadcasting x from ``shape``): x itself (as a
    Variable) when it already has that shape, as chainer.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.sum_to(np.ones((2, 3), np.float32), (2, 1))
        variable([[3.],
                  [3.]])
    """
    shape = tuple(int(s) for s in shape)
    xs = _shape(x)
    if xs == shape:
        return as_variable(x)
    lead = len(xs) - len(shape)
    if lead < 0:
        raise ValueError(f"chainer F.sum_to: cannot sum shape {xs} to the larger {shape}")
    axes = tuple(range(lead)) + tuple(
        lead + i for i, s in enumerate(shape) if s == 1 and xs[lead + i] != 1
    )
    for i, s in enumerate(shape):
        if s != 1 and s != xs[lead + i]:
            raise ValueError(f"chainer F.sum_to: shape {xs} cannot be summed to {shape}")
    y = _call("Sum", x, axis=axes, keepdims=True) if axes else x
    return _out(_call("Reshape", y, shape=shape))  # type: ignore[no-any-return]


def fix(x: Any) -> Variable:
    """Elementwise rounding toward zero, ``sign(x) * floor(|x|)``: a constant as chainer's (no
    creator, needs no gradient), of x's dtype (integers are returned unchanged).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.fix(np.array([-1.5, 1.5], dtype=np.float32))
        variable([-1.,  1.])
    """
    xv = x if isinstance(x, _NativeVariable) else _const(device_array(x), None)
    return _constant_of(
        _call(
            "Where", _call("GreaterEqualScalar", xv, val=0.0), _call("Floor", xv), _call("Ceil", xv)
        )
    )


def sign(x: Any) -> Variable:
    """Elementwise sign (-1, 0 or 1, of x's dtype): a constant as chainer's (no creator,
    needs no gradient).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.sign(np.array([-2.0, 0.0, 3.0], dtype=np.float32))
        variable([-1.,  0.,  1.])
    """
    return _constant_of(_as_dtype(_call("Sign", x, alpha=0.0), _fdtype(x)))


def fmod(x: Any, divisor: Any) -> Variable:
    """Elementwise remainder of ``x / divisor`` with the sign of x (C's ``fmod``, exactly; the
    same as ``x - fix(x / divisor) * divisor``); the gradients are chainer's, ``gy`` and
    ``-fix(x / divisor) * gy``.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.fmod(np.array([-5.0, 5.0], np.float32), np.array([3.0, 3.0], np.float32))
        variable([-2.,  2.])
    """
    _check_float("fmod", x=x, divisor=divisor)
    x, divisor = _match("fmod", x, divisor)
    q = fix(_call("Div2", x, divisor))
    composed = _call("Sub2", x, _call("Mul2", q, divisor))
    exact = _call("Mod2", x, divisor, fmod=True)  # C's fmod, the values chainer computes
    return _out(_call("Add2", composed, _call("StopGradient", _call("Sub2", exact, composed))))  # type: ignore[no-any-return]


def rsqrt(x: Any) -> Variable:
    """Elementwise ``1 / sqrt(x)``; x must be floating point.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.rsqrt(np.array([4.0], dtype=np.float32))
        variable([0.5])
    """
    _check_float("rsqrt", x=x)
    return _out(_call("RDivScalar", _call("Sqrt", x), val=1.0))  # type: ignore[no-any-return]


def arctanh(x: Any) -> Variable:
    """Elementwise ``arctanh(x)`` (``1 / (1 - x^2)`` the derivative); x floating point.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.arctanh(np.array([0.0], dtype=np.float32))
        variable([0.])
    """
    _check_float("arctanh", x=x)
    return _out(_call("ATanh", x))  # type: ignore[no-any-return]


def arctan2(x1: Any, x2: Any) -> Variable:
    """Elementwise ``arctan2(x1, x2)``, the angle of the point (x2, x1); both floating point.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.arctan2(np.array([1.0], np.float32), np.array([0.0], np.float32)).array.round(4)
        array([1.5708], dtype=float32)
    """
    _check_float("arctan2", x1=x1, x2=x2)
    return _out(_call("ATan2", *_match("arctan2", x1, x2)))  # type: ignore[no-any-return]


def erfc(x: Any) -> Variable:
    """Elementwise ``1 - erf(x)``; x floating point.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.erfc(np.array([0.0], dtype=np.float32))
        variable([1.])
    """
    _check_float("erfc", x=x)
    return _out(_call("RSubScalar", _call("Erf", x), val=1.0))  # type: ignore[no-any-return]


def batch_l2_norm_squared(x: Any) -> Variable:
    """``y[n] = sum(x[n] ** 2)``: the squared L2 norm of each sample (x has 1 axis or more).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.batch_l2_norm_squared(np.array([[1.0, 2.0], [3.0, 0.0]], np.float32))
        variable([5., 9.])
    """
    _check_float("batch_l2_norm_squared", x=x)
    s = _shape(x)
    if len(s) < 1:
        raise TypeError("chainer F.batch_l2_norm_squared: x.ndim >= 1 is required")
    h = _call("Reshape", x, shape=(s[0], int(math.prod(s[1:]))))
    return _out(_call("Sum", _call("Mul2", h, h), axis=1))  # type: ignore[no-any-return]


def _caffe_broadcast(fname: str, x: Any, y: Any, axis: int) -> Any:
    xs, ys = _shape(x), _shape(y)
    ax = axis % len(xs) if xs else axis
    if tuple(xs[ax : ax + len(ys)]) != ys:
        raise TypeError(
            f"chainer F.{fname}: y of shape {ys} must equal x.shape[axis:axis + y.ndim] "
            f"(x of shape {xs}, axis={axis})"
        )
    y1 = reshape(y, (*(1,) * ax, *ys, *(1,) * (len(xs) - ax - len(ys))))
    return broadcast_to(y1, xs)


def bias(x: Any, y: Any, axis: int = 1) -> Variable:
    """``x + y`` with y of shape ``x.shape[axis:axis + y.ndim]`` broadcast (Caffe's bias).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.bias(np.zeros((1, 2, 2), np.float32), np.array([1.0, 2.0], np.float32))
        variable([[[1., 1.],
                   [2., 2.]]])
    """
    y2 = _caffe_broadcast("bias", x, y, axis)
    return x + y2 if isinstance(x, _NativeVariable) else y2.__radd__(x)  # type: ignore[no-any-return]


def scale(x: Any, y: Any, axis: int = 1) -> Variable:
    """``x * y`` with y of shape ``x.shape[axis:axis + y.ndim]`` broadcast (Caffe's scale).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.scale(np.ones((1, 2, 2), np.float32), np.array([1.0, 2.0], np.float32))
        variable([[[1., 1.],
                   [2., 2.]]])
    """
    y2 = _caffe_broadcast("scale", x, y, axis)
    return x * y2 if isinstance(x, _NativeVariable) else y2.__rmul__(x)  # type: ignore[no-any-return]


def _invalid_unless(fname: str, what: str, x: Any, kind: str) -> Any:
    """The dtype of ``x``; chainer's ``InvalidType`` (its ``check_type_forward``) unless its
    kind is ``kind`` (``"f"``: floating point, ``"i"``: signed integer)."""
    dt = _dtype(x)
    dt = np.dtype(dt if dt is not None else np.asarray(x).dtype)
    if dt.kind != kind:
        from ..utils.type_check import InvalidType

        expect = f"{what}.dtype.kind == {kind}"
        raise InvalidType(
            expect,
            f"{dt.kind} != {kind}",
            f"\nInvalid operation is performed in: {fname} (Forward)\n\nExpect: {expect}\n"
            f"Actual: {dt.kind} != {kind}",
        )
    return dt


def _special_unary(name: str, native: str, formula: str, example: str, out: str) -> Any:
    def fn(x: Any) -> Variable:
        _invalid_unless(name, "x", x, "f")
        return _out(_call(native, x))  # type: ignore[no-any-return]

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (
        f"Elementwise {formula} (chainer's ``F.{name}``; gradhub's ``{native}``, computed "
        "without SciPy, so on every device; see docs/migration-chainer.md).\n\n"
        "x must be floating point (else chainer's ``InvalidType``); the result has x's dtype "
        "and is differentiable to any order.\n\n"
        f"Example::\n\n    >>> import numpy as np\n"
        f"    >>> import gradhub_compat.chainer.functions as F\n"
        f"    >>> F.{name}(np.array({example}))\n    {out}\n"
    )
    return fn


lgamma = _special_unary(
    "lgamma", "LGamma", "log|Gamma(x)|", "[1.0, 5.0]", "variable([0.        , 3.17805383])"
)


digamma = _special_unary(
    "digamma", "Digamma", "digamma(x) = d lgamma(x) / dx", "[1.0]", "variable([-0.57721566])"
)


erfinv = _special_unary(
    "erfinv",
    "ErfInv",
    "inverse of erf on [-1, 1]",
    "[0.0, 0.5]",
    "variable([0.        , 0.47693628])",
)


erfcinv = _special_unary(
    "erfcinv",
    "ErfcInv",
    "inverse of erfc on [0, 2]",
    "[1.0, 0.5]",
    "variable([0.        , 0.47693628])",
)


erfcx = _special_unary(
    "erfcx", "Erfcx", "exp(x^2) erfc(x)", "[0.0, 100.0]", "variable([1.        , 0.00564161])"
)


ndtr = _special_unary(
    "ndtr", "Ndtr", "standard normal distribution function", "[0.0]", "variable([0.5])"
)


ndtri = _special_unary("ndtri", "Ndtri", "inverse of ndtr on [0, 1]", "[0.5]", "variable([0.])")


log_ndtr = _special_unary(
    "log_ndtr",
    "LogNdtr",
    "log(ndtr(x)), finite where ndtr underflows",
    "[-40.0]",
    "variable([-804.60844201])",
)


def _per_value(fname: str, values: Any, x: Any, compute: Callable[[Any, Any], Any]) -> Variable:
    """``compute(x, v)`` where the array ``values`` (broadcast with ``x``) holds ``v``: one call
    of the registered function per distinct value, joined with ``Where`` (each call sees 1.0
    where the value is another, so no pole there reaches the gradient)."""
    values = np.asarray(values.get() if hasattr(values, "get") else values)
    shape = np.broadcast_shapes(values.shape, _shape(x))
    xv = x if _shape(x) == shape else _call("BroadcastTo", x, shape=shape)
    distinct = np.unique(values)
    if distinct.size == 1:
        return compute(xv, distinct[0])
    vb = np.broadcast_to(values, shape)
    dt = _dtype(xv)
    y = None
    for v in distinct:
        mask = _const(vb == v, xv)
        safe = _call("Where", mask, xv, _const(np.ones(shape, dtype=dt), xv))
        part = _call("Where", mask, compute(safe, v), _const(np.zeros(shape, dtype=dt), xv))
        y = part if y is None else y + part
    if y is None:  # size 0
        return compute(xv, 0)
    return y


def polygamma(n: Any, x: Any) -> Variable:
    """Elementwise polygamma(n, x), the n-th derivative of digamma (chainer's ``F.polygamma``;
    gradhub's ``Polygamma``).

    ``n`` is an array (or Variable) of signed integers, as chainer: a Python int raises
    ``TypeError`` (chainer: "incompatible array types are mixed"), another dtype chainer's
    ``InvalidType``, as does a non-floating x; n and x broadcast. Only x is differentiated
    (:math:`\\psi^{(n+1)}(x)`); a negative n gives NaN (chainer: SciPy's NaN).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.polygamma(np.array([1]), np.array([1.0]))  # pi^2 / 6
        variable([1.64493407])
    """
    if not hasattr(n, "dtype") or isinstance(n, np.generic):
        raise TypeError(
            "chainer F.polygamma: n must be an integer array or Variable, got "
            f"{type(n).__name__} (chainer: incompatible array types are mixed in the forward "
            "input (polygamma))"
        )
    _invalid_unless("polygamma", "n", n, "i")
    _invalid_unless("polygamma", "x", x, "f")

    def order(xv: Any, k: Any) -> Any:
        k = int(k)
        if k < 0:  # SciPy's NaN
            return _call("MulScalar", xv, val=float("nan"))
        return _call("Polygamma", xv, n=k)

    nd = _arr(n, "polygamma (its orders n)")
    return _out(_per_value("polygamma", nd, x, order))  # type: ignore[no-any-return]


def zeta(x: Any, q: Any) -> Variable:
    """The Hurwitz zeta function :math:`\\zeta(x, q) = \\sum_k (q + k)^{-x}`, elementwise in q
    (chainer's ``F.zeta(x, q)``; gradhub's ``Zeta``).

    ``x`` is a number (or an array of them, broadcast with q), not differentiated, as chainer;
    q must be floating point (else chainer's ``InvalidType``), and the result has q's dtype;
    :math:`\\partial/\\partial q = -x\\,\\zeta(x + 1, q)`. As SciPy: NaN for ``x < 1``, inf
    for ``x = 1``.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.zeta(2.0, np.array([1.0]))  # pi^2 / 6
        variable([1.64493407])
    """
    _invalid_unless("zeta", "q", q, "f")
    if isinstance(x, _NativeVariable):
        raise TypeError(
            "chainer F.zeta: x (the exponent) is not differentiated: pass a number or an array, "
            "not a Variable"
        )
    xs = host_array(x)  # (the exponents are read in Python)
    if xs.dtype.kind not in "iuf":
        raise TypeError(f"chainer F.zeta: x must be a real number or array, got {x!r}")

    def at(qv: Any, s: Any) -> Any:
        return _call("Zeta", qv, x=float(s))

    if xs.ndim == 0:
        return _out(at(q, xs))  # type: ignore[no-any-return]
    return _out(_per_value("zeta", xs, q, at))  # type: ignore[no-any-return]
