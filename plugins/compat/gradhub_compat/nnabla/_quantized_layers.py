"""nnabla's ``F.min_max_quantize``, ``F.inq_affine``, ``F.inq_convolution`` and
``F.fused_convolution`` (offered by :mod:`gradhub_compat.nnabla.functions`).

``min_max_quantize`` is one recorded ``MinMaxQuantize`` function (nnabla 1.39's kernel in
float32, :mod:`._quantization`); the INQ layers are an ``INQWeight`` node (:mod:`._inq`) followed
by the front-end's ``F.affine``/``F.convolution``; ``fused_convolution`` composes ``F.pad``,
``F.convolution``, ``F.batch_normalization``, an addition and the activation, as nnabla's
``FusedConvolution`` does inside. The functions that update arrays in place (the ranges of
``min_max_quantize``; the weight, the indicator and the counter of the INQ layers; the running
statistics of the batch normalization) do so at each ``forward()``, and at the build only with
auto_forward on, as nnabla's.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from gradhub.modes import no_grad
from gradhub.variable import Variable as _NativeVariable

from .._common import adopt
from ._auto_forward import (
    get_auto_forward,
    kept_unless_auto_forward,
    quiet_unless_auto_forward,
    set_auto_forward,
)
from ._variable import NdArray, Variable


def _functions() -> Any:
    from . import functions as F

    return F


def _variable(x: Any, where: str, name: str) -> Any:
    """``x`` as a gradhub Variable (an NdArray as a leaf), else ``TypeError`` naming ``name``."""
    if isinstance(x, _NativeVariable):
        return x
    if type(x) is NdArray:
        return _functions()._as_leaf(x)
    raise TypeError(f"nnabla F.{where}: {name} must be a Variable, got {type(x).__name__}")


def _on_ndarrays(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` that, given an NdArray among its arguments, computes at once (recording nothing,
    updating the arrays it updates, as an execution does) and returns an NdArray, as nnabla's
    functions do on NdArrays."""

    @functools.wraps(fn)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if not any(type(a) is NdArray for a in (*args, *kwargs.values())):
            return fn(*args, **kwargs)
        auto = get_auto_forward()
        set_auto_forward(True)
        try:
            with no_grad():
                out = fn(*args, **kwargs)
        finally:
            set_auto_forward(auto)
        return NdArray._of(out._data)

    return wrapped


def _no_outputs(where: str, outputs: Any) -> None:
    if outputs is not None:
        raise NotImplementedError(
            f"nnabla F.{where}: outputs= is not supported (docs: migration-nnabla.md)"
        )


@_on_ndarrays
def min_max_quantize(
    x: Any,
    qr_min: Any,
    qr_max: Any,
    ql_min: Any,
    ql_max: Any,
    decay: float = 0.999,
    x_min_max: bool = False,
    ema: bool = False,
    ste_fine_grained: bool = True,
    eps: float = 0.01,
    quantize: bool = True,
    outputs: Any = None,
) -> Any:
    r"""nnabla's ``F.min_max_quantize``: ``x`` on the grid of ``ql_max - ql_min`` steps of the
    real range ``[qr_min, qr_max]`` (all four of one shape, each axis 1 or ``x``'s: per tensor
    or per channel). At each execution, in float32: with ``x_min_max`` the range becomes
    :math:`qr \leftarrow decay\, qr + (1 - decay)\, \min/\max(x)` with ``ema``, the batch's
    minimum and maximum without (over the axes of size 1), written into ``qr_min``/``qr_max``;
    ``qr_max`` becomes ``qr_min + eps`` where the range is narrower than ``eps`` (in place too);
    then :math:`s = (qr_{max} - qr_{min}) / (ql_{max} - ql_{min})`, the zero point
    :math:`ql_{min} - qr_{min} / s` clipped to the levels and rounded, the nudged range
    :math:`qr'` from it, and

    .. math::
        y = \mathrm{round}\left(\frac{\mathrm{clip}(x, qr'_{min}, qr'_{max}) - qr'_{min}}{s}
        \right) s + qr'_{min}.

    The gradient is nnabla's straight-through one: ``dy`` (with ``ste_fine_grained`` only where
    :math:`qr'_{min} \le x \le qr'_{max}`); without ``x_min_max`` and ``ema``, ``qr_min`` and
    ``qr_max`` get the sums of ``dy`` where ``x`` is below/above the nudged range. ``ql_min`` or
    ``ql_max`` needing a gradient makes the backward pass raise, as nnabla's. One
    ``MinMaxQuantize`` function; ``quantize=False`` returns ``x`` itself, as nnabla's;
    ``outputs`` raises ``NotImplementedError``.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.array([[-1.0, 0.1, 0.26, 2.0]]))
        >>> r = [nn.Variable.from_numpy_array(np.array([[v]])) for v in (0.0, 1.0, 0.0, 4.0)]
        >>> y = F.min_max_quantize(x, *r)
        >>> y.forward()
        >>> y.d
        array([[0.  , 0.  , 0.25, 1.  ]], dtype=float32)
    """
    _no_outputs("min_max_quantize", outputs)
    if not quantize:
        return x
    from . import _quantization

    where = "min_max_quantize"
    F = _functions()
    decay_f = F._real(f"nnabla F.{where}", "decay", decay)
    eps_f = F._real(f"nnabla F.{where}", "eps", eps)
    names = ("qr_min", "qr_max", "ql_min", "ql_max")
    xv = _variable(x, where, "x")
    lo, hi, qlo, qhi = (
        _variable(v, where, n) for n, v in zip(names, (qr_min, qr_max, ql_min, ql_max))
    )
    flags = (bool(x_min_max), bool(ema), bool(ste_fine_grained))
    with kept_unless_auto_forward([lo._data, hi._data]), quiet_unless_auto_forward():
        y = _quantization.min_max_quantize(xv, lo, hi, qlo, qhi, decay_f, *flags, eps_f)
    return adopt(y, Variable)


def _inq(
    where: str,
    x: Any,
    weight: Any,
    indicator: Any,
    num_bits: Any,
    inq_iterations: Any,
    selection_algorithm: Any,
    seed: Any,
) -> tuple[Any, Any]:
    """The INQ weight of ``where``'s layer (its arrays restored after a build without
    auto_forward) and ``x`` as a Variable."""
    from . import _inq

    attrs = _inq.check(
        f"nnabla F.{where}",
        weight,
        indicator,
        num_bits,
        inq_iterations,
        selection_algorithm,
        seed,
    )
    xv = _variable(x, where, "x")
    wv = _variable(weight, where, "weight")
    iv = _variable(indicator, where, "indicator_fixedweights")
    with kept_unless_auto_forward([wv._data, iv._data]):
        wq, state = _inq.inq_weight(wv, iv, attrs)
        if not get_auto_forward():
            for s in state:  # (the build is not an execution)
                s._data[...] = 0
    return xv, adopt(wq, Variable)


@_on_ndarrays
def inq_affine(
    x: Any,
    weight: Any,
    indicator_fixedweights: Any,
    bias: Any = None,
    base_axis: int = 1,
    num_bits: int = 4,
    inq_iterations: Sequence[int] = (),
    selection_algorithm: str = "largest_abs",
    seed: int = -1,
    outputs: Any = None,
) -> Any:
    r"""nnabla's ``F.inq_affine`` (incremental network quantization): ``F.affine`` with the
    weight learned in steps towards powers of two. ``indicator_fixedweights`` (the weight's
    shape) marks the fixed values (1) and the learnable ones (0). Each execution (nnabla's
    order): the values fixed at the previous execution are put back in ``weight`` (a solver
    step moved them); when the execution counter (0 first) is in ``inq_iterations``, half of the
    learnable values get fixed (``"largest_abs"``: the largest :math:`|w|`; ``"random"``: each
    with probability 1/2, drawn as nnabla's for ``seed >= 0``), or all of them at the last
    value; the fixed values become :math:`\pm 2^e` in ``weight`` itself (0 below
    :math:`2^{n_2 - 1}`, :math:`e \in [n_2, n_1]`, :math:`n_1` the exponent of the largest
    :math:`|w|`, :math:`n_2 = n_1 + 1 - 2^{num\_bits - 2}`); then ``F.affine`` runs on the
    result. The weight's gradient is the affine's, not masked, as nnabla's; the indicator gets
    none. ``outputs`` raises ``NotImplementedError``.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.ones((1, 2)))
        >>> w = nn.Variable.from_numpy_array(np.array([[0.3, -0.7], [0.1, 0.45]]))
        >>> ind = nn.Variable.from_numpy_array(np.zeros((2, 2)))
        >>> y = F.inq_affine(x, w, ind, inq_iterations=(0, 2))
        >>> y.forward()
        >>> w.d, ind.d
        (array([[ 0.3, -0.5],
               [ 0.1,  0.5]], dtype=float32), array([[0., 1.],
               [0., 1.]], dtype=float32))
    """
    _no_outputs("inq_affine", outputs)
    xv, wq = _inq(
        "inq_affine",
        x,
        weight,
        indicator_fixedweights,
        num_bits,
        inq_iterations,
        selection_algorithm,
        seed,
    )
    return _functions().affine(xv, wq, bias, base_axis)


@_on_ndarrays
def inq_convolution(
    x: Any,
    weight: Any,
    indicator_fixedweights: Any,
    bias: Any = None,
    base_axis: int = 1,
    pad: Any = None,
    stride: Any = None,
    dilation: Any = None,
    group: int = 1,
    num_bits: int = 4,
    inq_iterations: Sequence[int] = (),
    selection_algorithm: str = "largest_abs",
    seed: int = -1,
    outputs: Any = None,
) -> Any:
    """nnabla's ``F.inq_convolution``: ``F.convolution`` with the weight of
    :func:`inq_affine` (fixed in steps, as powers of two, in ``weight`` itself)."""
    _no_outputs("inq_convolution", outputs)
    xv, wq = _inq(
        "inq_convolution",
        x,
        weight,
        indicator_fixedweights,
        num_bits,
        inq_iterations,
        selection_algorithm,
        seed,
    )
    return _functions().convolution(xv, wq, bias, base_axis, pad, stride, dilation, group)


def _fused_pad(where: str, x: Any, base_axis: int, pad: Any, mode: str, value: float) -> Any:
    """The convolution's ``pad`` of ``F.fused_convolution``, or None where ``F.pad`` pads first
    (``pad`` of two values per spatial axis, another mode than ``"constant"`` or another
    value than 0)."""
    n = len(x.shape) - (int(base_axis) + 1)
    if pad is None:
        return (0,) * n
    p = tuple(int(v) for v in pad)
    if len(p) not in (n, 2 * n):
        raise ValueError(
            f"nnabla F.{where}: pad must have one value per spatial axis ({n}) or two "
            f"(before, after: {2 * n}), got {tuple(pad)!r}"
        )
    if mode not in ("constant", "reflect", "repeat"):
        raise ValueError(
            f"nnabla F.{where}: pad_mode must be 'constant', 'reflect' or 'repeat', got {mode!r}"
        )
    return p if len(p) == n and mode == "constant" and value == 0 else None


NONLINEARITIES = ("identity", "relu", "sigmoid", "tanh", "leaky_relu", "elu", "relu6")


def activation(where: str, h: Any, nonlinearity: str, args: Sequence[float]) -> Any:
    """nnabla's activation of the fused functions (``nonlinearity`` with ``args``)."""
    F = _functions()
    n = len(args)
    if nonlinearity in ("identity", ""):
        return h
    if nonlinearity in ("relu", "sigmoid", "tanh", "relu6"):
        return getattr(F, nonlinearity)(h)
    if nonlinearity in ("leaky_relu", "elu"):
        if n != 1:
            raise ValueError(
                f"nnabla F.{where}: nonlinearity {nonlinearity!r} takes one value in "
                f"nonlinearity_args (alpha), got {list(args)!r}"
            )
        return getattr(F, nonlinearity)(h, float(args[0]))
    raise NotImplementedError(
        f"nnabla F.{where}: nonlinearity {nonlinearity!r} is not one of {list(NONLINEARITIES)} "
        "(as nnabla's)"
    )


@_on_ndarrays
def fused_convolution(
    x: Any,
    weight: Any,
    bias: Any = None,
    beta: Any = None,
    gamma: Any = None,
    mean: Any = None,
    variance: Any = None,
    z: Any = None,
    base_axis: int = 1,
    pad: Any = None,
    stride: Any = None,
    dilation: Any = None,
    group: int = 1,
    channel_last: bool = False,
    decay_rate: float = 0.9,
    eps: float = 1e-5,
    batch_stat: bool = True,
    nonlinearity: str = "relu",
    nonlinearity_args: Sequence[float] = (),
    pad_mode: str = "constant",
    constant_value: float = 0,
    outputs: Any = None,
) -> Any:
    r"""nnabla's ``F.fused_convolution``: :math:`y = \mathrm{act}(\mathrm{BN}(\mathrm{conv}(
    \mathrm{pad}(x), W) + b) + z)`, made of ``F.pad`` (``pad`` of two values per spatial axis,
    ``(before, after, ...)``, or of one, both sides; with ``pad_mode`` ``"constant"`` (the value
    ``constant_value``), ``"reflect"`` or ``"repeat"``; a constant 0 is the convolution's own
    padding), ``F.convolution`` (``bias`` only without the batch normalization),
    ``F.batch_normalization`` (with ``beta``, ``gamma``, ``mean`` and ``variance``, all four or
    none; along the channel axis: ``base_axis``, the last with ``channel_last``; the running
    statistics updated at each ``forward()`` when ``batch_stat``), the residual ``z`` added and
    the activation ``nonlinearity``: ``"identity"``, ``"relu"``, ``"sigmoid"``, ``"tanh"``,
    ``"relu6"``, ``"leaky_relu"`` or ``"elu"`` (these two with ``nonlinearity_args=[alpha]``).
    Gradients are those of the parts; ``y.parent`` is the last part (the activation), where
    nnabla records one ``FusedConvolution``. ``outputs`` raises ``NotImplementedError``.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.arange(8.0).reshape(1, 2, 2, 2) - 4)
        >>> w = nn.Variable.from_numpy_array(np.ones((1, 2, 1, 1)))
        >>> y = F.fused_convolution(x, w, nonlinearity="relu")
        >>> y.forward()
        >>> y.d.ravel()
        array([0., 0., 0., 2.], dtype=float32)
    """
    where = "fused_convolution"
    _no_outputs(where, outputs)
    F = _functions()
    bn = (beta, gamma, mean, variance)
    given = [v is not None for v in bn]
    if any(given) and not all(given):
        missing = [n for n, g in zip(("beta", "gamma", "mean", "variance"), given) if not g]
        raise ValueError(
            f"nnabla F.{where}: the batch normalization needs beta, gamma, mean and variance "
            f"together; {', '.join(missing)} missing"
        )
    if all(given) and bias is not None:
        raise ValueError(
            f"nnabla F.{where}: bias and the batch normalization (beta, gamma, mean, variance) "
            "cannot be given together (as nnabla's)"
        )
    if nonlinearity not in (*NONLINEARITIES, ""):
        activation(where, None, nonlinearity, nonlinearity_args)
    args = [float(a) for a in nonlinearity_args]
    h = x
    conv_pad = _fused_pad(where, x, base_axis, pad, pad_mode, float(constant_value))
    if conv_pad is None:
        widths = [int(p) for p in pad]
        if len(widths) == len(x.shape) - (int(base_axis) + 1):
            widths = [p for p in widths for _ in range(2)]
        h = F.pad(x, widths, pad_mode, float(constant_value))
    h = F.convolution(h, weight, bias, base_axis, conv_pad, stride, dilation, group, channel_last)
    if all(given):
        axis = len(h.shape) - 1 if channel_last else int(base_axis)
        h = F.batch_normalization(
            h, beta, gamma, mean, variance, [axis], decay_rate, eps, batch_stat
        )
    if z is not None:
        h = F.add2(h, z)
    return activation(where, h, nonlinearity, args)
