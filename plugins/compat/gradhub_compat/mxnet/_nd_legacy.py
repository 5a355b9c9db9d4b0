"""mxnet 1.9.1's legacy layer and loss operators of ``mx.nd``: the capitalized aliases
(``Reshape``, ``Concat``, ``Cast``, ``SliceChannel``, ``SwapAxis``, ``crop``), ``BlockGrad``
(``stop_gradient``), ``identity``, ``Crop``, ``UpSampling``, ``LRN``, ``SoftmaxActivation``, the
loss layers ``SoftmaxOutput`` (``Softmax``), ``LinearRegressionOutput``,
``LogisticRegressionOutput``, ``MAERegressionOutput``, ``SVMOutput``, ``MakeLoss`` and
``make_loss``, ``IdentityAttachKLSparseReg``, the spatial transformer family
(``GridGenerator``, ``BilinearSampler``, ``SpatialTransformer``), ``ROIPooling``,
``Correlation`` and the ``_v1`` operators (``Convolution_v1``, ``Pooling_v1``,
``BatchNorm_v1``).

Every function is recorded by ``mx.autograd`` as a composition of registered gradhub functions,
so its gradients (and higher derivatives through ``mx.autograd.grad(..., create_graph=True)``)
come from the native engine. The loss layers output their value (``softmax(data)``, ``data``,
``sigmoid(data)``) and, as mxnet, ignore the head gradient: their backward gives the gradient of
mxnet's loss (``SoftmaxOutput``: ``grad_scale / norm * (softmax(data) - onehot(label))``). That
gradient is itself written with registered functions of ``data``, so it can be differentiated
again (mxnet 1.9.1 has no second derivative of these operators).

Example::

    >>> import gradhub_compat.mxnet as mx
    >>> x = mx.nd.array([[1.0, 2.0, 3.0]])
    >>> x.attach_grad()
    >>> with mx.autograd.record():
    ...     y = mx.nd.SoftmaxOutput(x, mx.nd.array([2.0]))
    >>> y.backward()
    >>> x.grad.asnumpy().round(4)
    array([[ 0.09  ,  0.2447, -0.3348]], dtype=float32)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from gradhub.custom import custom_vjp
from gradhub.variable import Variable as NativeVariable

from .._common import call_native as _call
from . import _nd_layers, _nd_tensor
from ._nd_losses import _nd as _check_nd
from ._nd_tensor import _host, _no_out
from .base import MXNetError
from .ndarray import NDArray, _const, _fresh, _record, split

__all__ = [
    "LRN",
    "BatchNorm_v1",
    "BilinearSampler",
    "BlockGrad",
    "Cast",
    "Concat",
    "Convolution_v1",
    "Correlation",
    "Crop",
    "GridGenerator",
    "LinearRegressionOutput",
    "LogisticRegressionOutput",
    "MAERegressionOutput",
    "MakeLoss",
    "Pooling_v1",
    "ROIPooling",
    "Reshape",
    "SVMOutput",
    "SliceChannel",
    "Softmax",
    "SoftmaxActivation",
    "SoftmaxOutput",
    "SpatialTransformer",
    "SwapAxis",
    "UpSampling",
    "crop",
    "identity",
    "make_loss",
    "stop_gradient",
]

_DOCS = "docs/migration-mxnet.md"

# -- the aliases (the same operators as the lowercase names in mxnet 1.9.1) -----------------------

#: mxnet's ``Reshape``: ``reshape`` (codes 0, -1, -2, -3, -4 and ``reverse``)


def Reshape(
    data: NDArray,
    shape: Any = None,
    reverse: bool = False,
    target_shape: Any = None,
    keep_highest: bool = False,
    out: Any = None,
    **kwargs: Any,
) -> NDArray:
    """mxnet's ``Reshape``: :func:`reshape` (``shape`` with mxnet's codes 0, -1, -2, -3, -4),
    also with the deprecated ``target_shape`` of mxnet 1.9.1 when ``shape`` is not given: its
    one 0 is the size inferred from the others (``keep_highest``: the first size is data's).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.Reshape(mx.nd.zeros((2, 12)), target_shape=(4, 0)).shape
        (4, 6)
    """
    if shape is None and target_shape is not None:
        dims = [int(v) for v in target_shape]
        if keep_highest and dims:
            dims[0] = int(data.shape[0])
        shape = tuple(-1 if v == 0 else v for v in dims)
    return _nd_tensor.reshape(data, shape, reverse=reverse, out=out, **kwargs)


#: mxnet's ``Concat``: ``concat``
Concat = _nd_tensor.concat
#: mxnet's ``Cast``: ``cast``
Cast = _nd_tensor.cast
#: mxnet's ``SliceChannel``: ``split``
SliceChannel = split
#: mxnet's ``SwapAxis``: ``swapaxes``
SwapAxis = _nd_tensor.swapaxes
#: mxnet's ``crop``: ``slice`` (not the ``Crop`` operator)
crop = _nd_tensor.slice


# -- helpers ------------------------------------------------------------------------------------


def _recorded(arrays: list[NDArray], f: Callable[..., NativeVariable]) -> NDArray:
    """``f`` on the native Variables of ``arrays``, recorded for ``mx.autograd`` as
    :func:`~.ndarray._record` decides: a new NDArray (never a view of an input) in the first
    array's context."""
    r, rec = _record(arrays, f)
    return _fresh(NDArray(r._data, arrays[0]._ctx, r if rec else None), arrays[0])


def _pair(fn: str, arg: str, v: Any) -> tuple[int, int]:
    t = (int(v),) * 2 if isinstance(v, (int, np.integer)) else tuple(int(a) for a in v)
    if len(t) != 2:
        raise MXNetError(f"mx.nd.{fn}: {arg}={v!r} must have 2 values (height, width)")
    return t[0], t[1]


def _copy(x: NativeVariable) -> NativeVariable:
    """``x`` through a recorded function (the gradient passes); an integer array keeps its
    dtype (a view, copied by :func:`_recorded`)."""
    if x.dtype.kind != "f":
        return _call("Reshape", x, shape=tuple(x.shape))  # type: ignore[no-any-return]
    return _call("MulScalar", x, val=1.0)  # type: ignore[no-any-return]


def _loss_layer(
    data: NDArray,
    value: Callable[[NativeVariable], NativeVariable],
    grad: Callable[[NativeVariable], NativeVariable],
) -> NDArray:
    """``value(data)``, whose backward gives ``data`` the gradient ``grad(data)`` whatever the
    head gradient (mxnet's loss layers). ``grad`` is written with registered functions of its
    argument, so the gradient is differentiable again."""

    def fun(x: NativeVariable) -> NativeVariable:
        return value(x)

    def fwd(x: NativeVariable) -> tuple[NativeVariable, NativeVariable]:
        return value(x), x

    def bwd(x: NativeVariable, g: Any) -> tuple[NativeVariable]:
        return (grad(x),)

    layer = custom_vjp(fun)
    layer.defvjp(fwd, bwd)
    return _recorded([data], layer)


# -- BlockGrad, identity --------------------------------------------------------------------------


def BlockGrad(data: NDArray, out: Any = None, name: Any = None, **kwargs: Any) -> NDArray:
    """mxnet's ``BlockGrad`` (``stop_gradient``): a copy of ``data`` through which no gradient
    flows (``d out / d data = 0``).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> x = mx.nd.array([1.0, 2.0])
        >>> x.attach_grad()
        >>> with mx.autograd.record():
        ...     y = x * x + mx.nd.BlockGrad(x * x)
        >>> y.backward()
        >>> x.grad.asnumpy()
        array([2., 4.], dtype=float32)
    """
    _check_nd("BlockGrad", data=data)
    _no_out("BlockGrad", out)
    return NDArray(data._arr.copy(), data._ctx)


stop_gradient = BlockGrad


def identity(data: NDArray, out: Any = None, name: Any = None, **kwargs: Any) -> NDArray:
    """mxnet's ``identity`` (``_copy``): a copy of ``data``, the gradient passed through.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.identity(mx.nd.array([1.0, 2.0])).asnumpy()
        array([1., 2.], dtype=float32)
    """
    _check_nd("identity", data=data)
    _no_out("identity", out)
    if data._arr.dtype.kind != "f":
        return NDArray(data._arr.copy(), data._ctx)
    return _recorded([data], _copy)


# -- Crop -----------------------------------------------------------------------------------------


def Crop(
    *data: NDArray,
    num_args: int | None = None,
    offset: Any = (0, 0),
    h_w: Any = (0, 0),
    center_crop: bool = False,
    out: Any = None,
    name: Any = None,
    **kwargs: Any,
) -> NDArray:
    """mxnet's ``Crop``: the window ``data[:, :, oy:oy + h, ox:ox + w]`` of a 4-D array (NCHW),
    ``(h, w)`` from ``h_w`` or, with two inputs (``num_args=2``), the height and width of the
    second; ``(oy, ox)`` is ``offset`` or, with ``center_crop``, ``((H - h) // 2, (W - w) //
    2)``. The second input gets no gradient.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> x = mx.nd.ones((1, 1, 4, 4))
        >>> mx.nd.Crop(x, num_args=1, h_w=(2, 3), center_crop=True).shape
        (1, 1, 2, 3)
    """
    _no_out("Crop", out)
    n = len(data) if num_args is None else int(num_args)
    if n not in (1, 2) or len(data) != n:
        raise MXNetError(
            f"mx.nd.Crop: num_args={num_args!r} must be 1 or 2 and equal the number of inputs "
            f"({len(data)})"
        )
    for i, d in enumerate(data):
        _check_nd("Crop", **{f"data[{i}]": d})
    x = data[0]
    if x.ndim != 4:
        raise MXNetError(f"mx.nd.Crop: data must be 4-D (NCHW), got shape {x.shape}")
    H, W = x.shape[2], x.shape[3]
    if n == 2:
        if data[1].ndim != 4:
            raise MXNetError(f"mx.nd.Crop: the second input must be 4-D, got {data[1].shape}")
        h, w = data[1].shape[2], data[1].shape[3]
    else:
        h, w = _pair("Crop", "h_w", h_w)
    if center_crop:
        oy, ox = (H - h) // 2, (W - w) // 2
    else:
        oy, ox = _pair("Crop", "offset", offset)
    if h < 1 or w < 1 or oy < 0 or ox < 0 or oy + h > H or ox + w > W:
        raise MXNetError(
            f"mx.nd.Crop: the crop of size {(h, w)} at offset {(oy, ox)} does not fit data of "
            f"shape {x.shape}"
        )
    start, stop = (0, 0, oy, ox), (x.shape[0], x.shape[1], oy + h, ox + w)
    return _recorded(
        [x], lambda v: _copy(_call("Slice", v, start=start, stop=stop, step=(1, 1, 1, 1)))
    )


# -- UpSampling -----------------------------------------------------------------------------------


def UpSampling(
    *data: NDArray,
    scale: int,
    num_filter: int = 0,
    sample_type: str = "nearest",
    multi_input_mode: str = "concat",
    num_args: int | None = None,
    workspace: int = 512,
    out: Any = None,
    name: Any = None,
    **kwargs: Any,
) -> NDArray:
    """mxnet's ``UpSampling`` of 4-D arrays (NCHW).

    ``"nearest"``: each input repeated to the size ``(H0 scale, W0 scale)`` of the first input
    scaled (input ``i`` by the integer factor ``H0 scale / Hi``),
    ``y[n, c, i, j] = x[n, c, i // s, j // s]``; several inputs are joined along the channels
    (``multi_input_mode="concat"``) or added (``"sum"``). ``"bilinear"``: ``data`` and
    ``weight`` (``(num_filter, 1, k, k)``, ``k = 2 scale - scale % 2``) give
    ``Deconvolution(data, weight, kernel=k, stride=scale, pad=ceil((scale - 1) / 2),
    num_group=num_filter, no_bias=True)``, as mxnet.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.UpSampling(mx.nd.ones((1, 2, 2, 3)), scale=2, sample_type="nearest").shape
        (1, 2, 4, 6)
    """
    _no_out("UpSampling", out)
    for i, d in enumerate(data):
        _check_nd("UpSampling", **{f"data[{i}]": d})
    s = int(scale)
    if s < 1:
        raise MXNetError(f"mx.nd.UpSampling: scale must be at least 1, got {scale!r}")
    if not data:
        raise MXNetError("mx.nd.UpSampling: at least one input is needed")
    if sample_type == "bilinear":
        if len(data) != 2:
            raise MXNetError(
                "mx.nd.UpSampling: sample_type='bilinear' needs two inputs, data and weight"
            )
        k = 2 * s - s % 2
        p = math.ceil((s - 1) / 2.0)
        nf = int(num_filter) if num_filter else data[0].shape[1]
        return _nd_layers.Deconvolution(
            data[0],
            data[1],
            kernel=(k, k),
            stride=(s, s),
            pad=(p, p),
            num_filter=nf,
            num_group=nf,
            no_bias=True,
        )
    if sample_type != "nearest":
        raise MXNetError(
            f"mx.nd.UpSampling: Invalid Input: '{sample_type}', valid values are: "
            "{'bilinear', 'nearest'}"
        )
    if num_args is not None and int(num_args) != len(data):
        raise MXNetError(f"mx.nd.UpSampling: num_args={num_args} but {len(data)} inputs were given")
    if multi_input_mode not in ("concat", "sum"):
        raise MXNetError(
            f"mx.nd.UpSampling: Invalid Input: '{multi_input_mode}', valid values are: "
            "{'concat', 'sum'}"
        )
    oh, ow = data[0].shape[2] * s, data[0].shape[3] * s if data[0].ndim == 4 else 0
    factors = []
    for i, d in enumerate(data):
        if d.ndim != 4:
            raise MXNetError(f"mx.nd.UpSampling: input {i} must be 4-D (NCHW), got {d.shape}")
        if oh % d.shape[2] or ow % d.shape[3] or oh // d.shape[2] != ow // d.shape[3]:
            raise MXNetError(
                f"mx.nd.UpSampling: input {i} of shape {d.shape} cannot be scaled to the output "
                f"size {(oh, ow)} by one integer factor"
            )
        factors.append(oh // d.shape[2])
    if multi_input_mode == "sum" and len({d.shape[1] for d in data}) != 1:
        raise MXNetError("mx.nd.UpSampling: multi_input_mode='sum' needs equal channel counts")

    def up(*xs: NativeVariable) -> NativeVariable:
        ys = [
            _call("Unpooling", x, kernel=(f, f)) if f > 1 else _copy(x) for x, f in zip(xs, factors)
        ]
        if len(ys) == 1:
            return ys[0]
        if multi_input_mode == "sum":
            total = ys[0]
            for y in ys[1:]:
                total = total + y
            return total
        return _call("Concatenate", *ys, axis=1)  # type: ignore[no-any-return]

    return _recorded(list(data), up)


# -- LRN, SoftmaxActivation -----------------------------------------------------------------------


def LRN(
    data: NDArray,
    alpha: float = 1e-4,
    beta: float = 0.75,
    knorm: float = 2.0,
    nsize: int | None = None,
    out: Any = None,
    name: Any = None,
    **kwargs: Any,
) -> NDArray:
    """mxnet's ``LRN`` (local response normalization across channels, axis 1):
    ``y = x / (knorm + alpha / nsize * sum_{c' in window(c)} x[c']^2)^beta``, the window the
    channels ``c - h .. c + h`` (``h = (nsize - 1) // 2``: an even ``nsize`` sums ``nsize - 1``
    channels, as mxnet's kernel), the channels past the ends counting as zeros.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> x = mx.nd.ones((1, 3, 1, 1))
        >>> mx.nd.LRN(x, nsize=3, alpha=3.0, beta=1.0, knorm=1.0).asnumpy().ravel()
        array([0.33333334, 0.25      , 0.33333334], dtype=float32)
    """
    _check_nd("LRN", data=data)
    _no_out("LRN", out)
    if nsize is None:
        raise MXNetError("mx.nd.LRN: Required parameter nsize of int is not presented")
    ns = int(nsize)
    if ns < 1:
        raise MXNetError(f"mx.nd.LRN: nsize must be positive, got {nsize!r}")
    if data.ndim < 3:
        raise MXNetError(f"mx.nd.LRN: data must have at least 3 axes (N, C, ...), got {data.shape}")
    half = (ns - 1) // 2  # (an even nsize sums nsize - 1 channels, as mxnet's kernel)
    c = data.shape[1]
    nd = data.ndim
    salpha, b, k = float(alpha) / ns, float(beta), float(knorm)

    def lrn(x: NativeVariable) -> NativeVariable:
        sq = x * x
        pw = tuple((half, half) if i == 1 else (0, 0) for i in range(nd))
        padded = _call("Pad", sq, pad_width=tuple(v for p in pw for v in p))
        total = None
        for i in range(2 * half + 1):
            start = tuple(i if d == 1 else 0 for d in range(nd))
            stop = tuple(i + c if d == 1 else s for d, s in enumerate(padded.shape))
            part = _call("Slice", padded, start=start, stop=stop, step=(1,) * nd)
            total = part if total is None else total + part
        norm = _call("AddScalar", _call("MulScalar", total, val=salpha), val=k)
        return x * _call("PowScalar", norm, val=-b)  # type: ignore[no-any-return]

    return _recorded([data], lrn)


def SoftmaxActivation(
    data: NDArray, mode: str = "instance", out: Any = None, name: Any = None, **kwargs: Any
) -> NDArray:
    """mxnet's ``SoftmaxActivation``: ``"instance"`` the softmax over the last axis (mxnet's
    kernel views data as 2-D, every axis but the last flattened into rows), ``"channel"`` the
    softmax over axis 1 at each position (data of at least 3 axes).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.SoftmaxActivation(mx.nd.zeros((1, 2, 2))).asnumpy()
        array([[[0.5, 0.5],
                [0.5, 0.5]]], dtype=float32)
    """
    _check_nd("SoftmaxActivation", data=data)
    _no_out("SoftmaxActivation", out)
    if mode not in ("instance", "channel"):
        raise MXNetError(
            f"mx.nd.SoftmaxActivation: Invalid Input: '{mode}', valid values are: "
            "{'channel', 'instance'}"
        )
    if data.ndim < 1:
        raise MXNetError("mx.nd.SoftmaxActivation: data must have a batch axis")
    shape = data.shape
    if mode == "channel":
        if data.ndim < 3:
            raise MXNetError(
                "mx.nd.SoftmaxActivation: Input need to have a least 3 dimensions when "
                f"mode=channel, got shape {shape}"
            )
        return _recorded([data], lambda x: _call("Softmax", x, axis=1))
    flat = (int(math.prod(shape[:-1])), shape[-1])

    def inst(x: NativeVariable) -> NativeVariable:
        y = _call("Softmax", _call("Reshape", x, shape=flat), axis=1)
        return _call("Reshape", y, shape=shape)  # type: ignore[no-any-return]

    return _recorded([data], inst)


# -- SoftmaxOutput --------------------------------------------------------------------------------


def SoftmaxOutput(
    data: NDArray,
    label: NDArray,
    grad_scale: float = 1.0,
    ignore_label: float = -1.0,
    multi_output: bool = False,
    use_ignore: bool = False,
    preserve_shape: bool = False,
    normalization: str = "null",
    out_grad: bool = False,
    smooth_alpha: float = 0.0,
    out: Any = None,
    name: Any = None,
    **kwargs: Any,
) -> NDArray:
    """mxnet's ``SoftmaxOutput`` (``Softmax``): the output is ``p = softmax(data)``; the
    backward ignores the head gradient and gives ``data`` the gradient of the cross entropy,
    ``grad_scale / norm * (p - t)``, ``t`` the one-hot of the label (``smooth_alpha``:
    ``1 - alpha`` at the label, ``alpha / (K - 1)`` elsewhere), zero on the rows whose label is
    ``ignore_label`` when ``use_ignore``.

    Layouts, as mxnet's kernel: by default data is viewed as ``(N, rest)`` (the softmax over
    all values of a sample) and row ``i`` reads the flattened label's entry ``i``; with
    ``preserve_shape`` the softmax runs over the last axis, one label per position (label shape
    ``data.shape[:-1]``); with ``multi_output`` over axis 1, label shape
    ``(N, *data.shape[2:])``. ``norm``: ``"null"`` 1 (``multi_output``: the positions per
    sample), ``"batch"`` the number of labels (``multi_output``: all positions), ``"valid"``
    the number of labels not equal to ``ignore_label`` (at least 1). A label of data's own
    shape holds probabilities: the gradient is ``grad_scale * (p - label)``.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.SoftmaxOutput(mx.nd.zeros((1, 2)), mx.nd.array([0.0])).asnumpy()
        array([[0.5, 0.5]], dtype=float32)
    """
    fn = "SoftmaxOutput"
    _check_nd(fn, data=data, label=label)
    _no_out(fn, out)
    if normalization not in ("null", "batch", "valid"):
        raise MXNetError(
            f"mx.nd.{fn}: Invalid Input: '{normalization}', valid values are: "
            "{'batch', 'null', 'valid'}"
        )
    if out_grad:
        raise NotImplementedError(f"mx.nd.{fn}: out_grad=True is not supported ({_DOCS})")
    if data.ndim < 1:
        raise MXNetError(f"mx.nd.{fn}: data must have a batch axis, got a 0-d array")
    shape = data.shape
    n = shape[0]
    if multi_output:
        if data.ndim < 2:
            raise MXNetError(f"mx.nd.{fn}: multi_output needs data of at least 2 axes")
        axis, lshape = 1, (n, *shape[2:])
        rows, xshape = lshape, shape
    elif preserve_shape:
        axis, lshape = data.ndim - 1, shape[:-1]
        rows, xshape = lshape, shape
    else:
        axis = 1
        lshape = shape[:-1] if data.ndim >= 2 else (n,)
        rows, xshape = (n,), (n, int(math.prod(shape[1:])))
    scale = float(grad_scale)
    lab = _host(label)
    if lab.shape == shape and lab.shape != lshape:  # probabilities as labels
        target = lab.reshape(xshape).astype(data._arr.dtype)
        mask = None
    else:
        if lab.size != int(math.prod(lshape)):
            raise MXNetError(
                f"mx.nd.{fn}: Shape inconsistent, the label has shape {lab.shape} but data of "
                f"shape {shape} needs labels of shape {lshape}"
            )
        k = xshape[axis]
        flat = np.trunc(lab.reshape(-1)).astype(np.int64)  # static_cast<int>, as mxnet
        ignored_all = flat == int(ignore_label)
        size = int(math.prod(rows))
        ints = flat[:size].reshape(rows)
        keep = ~ignored_all[:size].reshape(rows) if use_ignore else np.ones(rows, dtype=bool)
        bad = keep & ((ints < 0) | (ints >= k))
        if bad.any():
            raise MXNetError(
                f"mx.nd.{fn}: labels must be class indices in [0, {k}), got "
                f"{ints[bad].tolist()[:5]}"
            )
        onehot = np.moveaxis(np.eye(k, dtype=np.float64)[np.where(keep, ints, 0)], -1, axis)
        a = float(smooth_alpha)
        if a != 0.0 and not multi_output:  # (mxnet 1.9.1 smooths the single-output form only)
            onehot = onehot * (1.0 - a) + (1.0 - onehot) * (a / max(k - 1, 1))
        target = onehot.astype(data._arr.dtype)
        mask = np.expand_dims(keep, axis).astype(data._arr.dtype)
        if normalization == "valid":
            norm = float(max(int(flat.size - ignored_all.sum()), 1))
        elif multi_output:
            d = int(math.prod(shape[2:]))
            norm = float(d) if normalization == "null" else float(max(n * d, 1))
        elif normalization == "batch":
            norm = float(max(int(math.prod(lshape)), 1))
        else:
            norm = 1.0
        scale /= norm

    def probs(x: NativeVariable) -> NativeVariable:
        xs = _call("Reshape", x, shape=xshape) if xshape != shape else x
        return _call("Softmax", xs, axis=axis)  # type: ignore[no-any-return]

    def value(x: NativeVariable) -> NativeVariable:
        p = probs(x)
        return _call("Reshape", p, shape=shape) if xshape != shape else p

    def grad(x: NativeVariable) -> NativeVariable:
        g = probs(x) - _const(target, x)
        if mask is not None:
            g = g * _const(np.broadcast_to(mask, xshape).copy(), x)
        g = _call("MulScalar", g, val=scale)
        return _call("Reshape", g, shape=shape) if xshape != shape else g

    return _loss_layer(data, value, grad)


Softmax = SoftmaxOutput


# -- the regression outputs, SVMOutput ------------------------------------------------------------


def _regression(
    fn: str,
    formula: str,
    value: Callable[[NativeVariable], NativeVariable],
    dloss: Callable[[NativeVariable, NativeVariable], NativeVariable],
) -> Callable[..., NDArray]:
    def layer(
        data: NDArray,
        label: NDArray,
        grad_scale: float = 1.0,
        out: Any = None,
        name: Any = None,
        **kwargs: Any,
    ) -> NDArray:
        _check_nd(fn, data=data, label=label)
        _no_out(fn, out)
        shape = data.shape
        lab = _host(label)
        if data.ndim < 1 or lab.size != data.size or lab.shape[:1] != shape[:1]:
            raise MXNetError(
                f"mx.nd.{fn}: Shape inconsistent, data has shape {shape} and label {lab.shape} "
                "(the label must have data's shape)"
            )
        num_output = lab.size // max(lab.shape[0], 1) if lab.ndim else 1
        scale = float(grad_scale) / max(num_output, 1)
        target = lab.reshape(shape).astype(data._arr.dtype)

        def grad(x: NativeVariable) -> NativeVariable:
            return _call("MulScalar", dloss(value(x), _const(target, x)), val=scale)  # type: ignore[no-any-return]

        return _loss_layer(data, value, grad)

    layer.__name__ = layer.__qualname__ = fn
    layer.__doc__ = (
        f"mxnet's ``{fn}``: the output is ``{formula}``; the backward ignores the head "
        f"gradient and gives ``data`` the gradient ``grad_scale / m * {dloss.__doc__}`` "
        "(``m`` the label's size over its first axis), as mxnet 1.9.1.\n\n"
        "Example::\n\n"
        "    >>> import gradhub_compat.mxnet as mx\n"
        f"    >>> mx.nd.{fn}(mx.nd.zeros((2, 1)), mx.nd.ones((2, 1))).shape\n"
        "    (2, 1)\n"
    )
    return layer


def _linear_dloss(out: NativeVariable, label: NativeVariable) -> NativeVariable:
    """(out - label)"""
    return out - label


def _mae_dloss(out: NativeVariable, label: NativeVariable) -> NativeVariable:
    """sign(out - label)"""
    return _call("Sign", out - label)  # type: ignore[no-any-return]


LinearRegressionOutput = _regression("LinearRegressionOutput", "data", _copy, _linear_dloss)
LogisticRegressionOutput = _regression(
    "LogisticRegressionOutput",
    "1 / (1 + e^-data)",
    lambda x: _call("Sigmoid", x),
    _linear_dloss,
)
MAERegressionOutput = _regression("MAERegressionOutput", "data", _copy, _mae_dloss)


def SVMOutput(
    data: NDArray,
    label: NDArray,
    margin: float = 1.0,
    regularization_coefficient: float = 1.0,
    use_linear: bool = False,
    out: Any = None,
    name: Any = None,
    **kwargs: Any,
) -> NDArray:
    """mxnet's ``SVMOutput``: the output is ``data`` (scores ``(N, K)``, more axes flattened);
    the backward ignores the head gradient and gives the hinge loss's gradient, with ``y`` the
    label's class, ``m`` the margin and ``r`` the regularization coefficient: L2-SVM (default)
    ``-2 r max(m - x_y, 0)`` at ``y`` and ``2 r max(m + x_j, 0)`` elsewhere; L1-SVM
    (``use_linear``) ``-r [m > x_y]`` and ``r [m > -x_j]``.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.SVMOutput(mx.nd.zeros((1, 2)), mx.nd.array([1.0])).shape
        (1, 2)
    """
    fn = "SVMOutput"
    _check_nd(fn, data=data, label=label)
    _no_out(fn, out)
    if data.ndim < 2:
        raise MXNetError(f"mx.nd.{fn}: data must have shape (N, K), got {data.shape}")
    shape = data.shape
    xshape = (shape[0], int(math.prod(shape[1:])))
    k = xshape[1]
    lab = _host(label).reshape(-1)
    if lab.size != shape[0]:
        raise MXNetError(
            f"mx.nd.{fn}: Shape inconsistent, the label has shape {label.shape}, expected "
            f"({shape[0]},)"
        )
    ints = np.trunc(lab).astype(np.int64)
    if ((ints < 0) | (ints >= k)).any():
        raise MXNetError(f"mx.nd.{fn}: labels must be class indices in [0, {k})")
    onehot = np.eye(k, dtype=data._arr.dtype)[ints]
    m, r = float(margin), float(regularization_coefficient)

    def grad(x: NativeVariable) -> NativeVariable:
        xs = _call("Reshape", x, shape=xshape) if xshape != shape else x
        o = _const(onehot, xs)
        other = _const(1.0 - onehot, xs)
        if use_linear:
            # step functions of x: no gradient (zero almost everywhere)
            at = _call("LessScalar", xs, val=m)  # [m > x]
            off = _call("GreaterScalar", xs, val=-m)  # [m > -x]
            g = other * _call("cast", off, dtype=xs.dtype.name) - o * _call(
                "cast", at, dtype=xs.dtype.name
            )
            g = _call("MulScalar", g, val=r)
        else:
            pos = _call("ReLU", _call("AddScalar", xs, val=m))
            neg = _call("ReLU", _call("RSubScalar", xs, val=m))
            g = _call("MulScalar", other * pos - o * neg, val=2.0 * r)
        return _call("Reshape", g, shape=shape) if xshape != shape else g  # type: ignore[no-any-return]

    return _loss_layer(data, _copy, grad)


# -- MakeLoss, make_loss --------------------------------------------------------------------------


def MakeLoss(
    data: NDArray,
    grad_scale: float = 1.0,
    valid_thresh: float = 0.0,
    normalization: str = "null",
    out: Any = None,
    name: Any = None,
    **kwargs: Any,
) -> NDArray:
    """mxnet's ``MakeLoss``: the output is ``data``; the backward ignores the head gradient
    and gives ``data`` the gradient ``grad_scale / norm`` everywhere (the loss ``grad_scale /
    norm * sum(data)``): ``norm`` is 1 (``"null"``), the product of all axes but the last
    (``"batch"``, as mxnet's kernel) or the number of values above ``valid_thresh``
    (``"valid"``, at least 1).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> x = mx.nd.array([[1.0, 2.0]])
        >>> x.attach_grad()
        >>> with mx.autograd.record():
        ...     y = mx.nd.MakeLoss(x * x, grad_scale=3.0)
        >>> y.backward()
        >>> x.grad.asnumpy()
        array([[ 6., 12.]], dtype=float32)
    """
    fn = "MakeLoss"
    _check_nd(fn, data=data)
    _no_out(fn, out)
    if normalization not in ("null", "batch", "valid"):
        raise MXNetError(
            f"mx.nd.{fn}: Invalid Input: '{normalization}', valid values are: "
            "{'batch', 'null', 'valid'}"
        )
    if normalization == "valid":
        norm = float(max(int((_host(data) > float(valid_thresh)).sum()), 1))
    elif normalization == "batch":
        norm = float(max(int(math.prod(data.shape[:-1])), 1))
    else:
        norm = 1.0
    return _constant_grad_loss(data, float(grad_scale) / norm)


def make_loss(data: NDArray, out: Any = None, name: Any = None, **kwargs: Any) -> NDArray:
    """mxnet's ``make_loss``: the output is ``data``; the backward ignores the head gradient
    and gives ``data`` the gradient 1 everywhere (the loss ``sum(data)``).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.make_loss(mx.nd.array([1.0, 2.0])).asnumpy()
        array([1., 2.], dtype=float32)
    """
    _check_nd("make_loss", data=data)
    _no_out("make_loss", out)
    return _constant_grad_loss(data, 1.0)


def _constant_grad_loss(data: NDArray, g: float) -> NDArray:
    if data._arr.dtype.kind != "f":
        return NDArray(data._arr.copy(), data._ctx)

    def grad(x: NativeVariable) -> NativeVariable:
        return _const(np.full(x.shape, g, dtype=x.dtype), x)

    return _loss_layer(data, _copy, grad)


def IdentityAttachKLSparseReg(
    data: NDArray,
    sparseness_target: float = 0.1,
    penalty: float = 0.001,
    momentum: float = 0.9,
    moving_avg: NDArray | None = None,
    out: Any = None,
    name: Any = None,
    **kwargs: Any,
) -> NDArray:
    """mxnet's ``IdentityAttachKLSparseReg`` (a sparseness penalty on sigmoid activations
    ``(N, K)``): the output is ``data``; the backward adds to the head gradient
    ``penalty * (-rho / a + (1 - rho) / (1 - a))``, ``rho`` the ``sparseness_target`` and
    ``a = momentum * moving_avg + (1 - momentum) * mean(data, axis=0)`` per column (the gradient
    of the KL divergence of the mean activation from ``rho``). ``moving_avg`` (``(K,)``, zeros
    when left out, as mxnet initializes it) is set to ``a`` in place at each backward, as
    mxnet's kernel. mxnet 1.9.1's ``mx.nd.IdentityAttachKLSparseReg`` cannot be called (it takes
    one array but its operator needs two); the values are those of its ``mx.sym`` executor.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> x = mx.nd.array([[0.5, 0.5]])
        >>> x.attach_grad()
        >>> with mx.autograd.record():
        ...     y = mx.nd.IdentityAttachKLSparseReg(x, momentum=0.0)
        >>> y.backward()
        >>> x.grad.asnumpy()
        array([[1.0016, 1.0016]], dtype=float32)
    """
    fn = "IdentityAttachKLSparseReg"
    _check_nd(fn, data=data)
    _no_out(fn, out)
    if data.ndim != 2:
        raise MXNetError(f"mx.nd.{fn}: data must have shape (N, K), got {data.shape}")
    k = data.shape[1]
    if moving_avg is not None:
        _check_nd(fn, moving_avg=moving_avg)
        if moving_avg.shape != (k,):
            raise MXNetError(
                f"mx.nd.{fn}: moving_avg has shape {moving_avg.shape}, expected {(k,)}"
            )
    rho, pen, mom = float(sparseness_target), float(penalty), float(momentum)
    state = moving_avg
    dt = data._arr.dtype
    start = _host(state) if state is not None else np.zeros((k,), dtype=dt)

    def fun(x: NativeVariable) -> NativeVariable:
        return _copy(x)

    def fwd(x: NativeVariable) -> tuple[NativeVariable, NativeVariable]:
        return _copy(x), x

    def bwd(x: NativeVariable, g: NativeVariable) -> tuple[NativeVariable]:
        mean = _call("Mean", x, axis=0, keepdims=True)
        avg = _call("MulScalar", mean, val=1.0 - mom) + _const(
            (mom * start).reshape(1, k).astype(dt), x
        )
        if state is not None:
            state._arr[...] = state._ctx.device().xp.asarray(avg._data.reshape(k))
        term = _call("MulScalar", _call("PowScalar", avg, val=-1.0), val=-rho) + _call(
            "MulScalar",
            _call("PowScalar", _call("RSubScalar", avg, val=1.0), val=-1.0),
            val=1.0 - rho,
        )
        return (g + _call("MulScalar", term, val=pen),)

    layer = custom_vjp(fun)
    layer.defvjp(fwd, bwd)
    return _recorded([data], layer)


# -- GridGenerator, BilinearSampler, SpatialTransformer -------------------------------------------


def GridGenerator(
    data: NDArray,
    transform_type: str = "affine",
    target_shape: Any = (0, 0),
    out: Any = None,
    name: Any = None,
    **kwargs: Any,
) -> NDArray:
    """mxnet's ``GridGenerator``: a sampling grid ``(N, 2, H, W)`` of normalized coordinates
    ``(x, y)`` in [-1, 1] (-1 and 1 the centres of the corner pixels). ``"affine"``: ``data``
    ``(N, 6)`` holds the affine maps ``theta`` (2 x 3, row-major) and the grid at the output
    position ``(i, j)`` of ``target_shape`` ``(H, W)`` is ``theta (x_j, y_i, 1)^T``.
    ``"warp"``: ``data`` ``(N, 2, H, W)`` holds a flow in pixels and the grid is
    ``((j + flow_x) / ((W - 1) / 2) - 1, (i + flow_y) / ((H - 1) / 2) - 1)``.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> theta = mx.nd.array([[1.0, 0.0, 0.0, 0.0, 1.0, 0.0]])
        >>> mx.nd.GridGenerator(theta, transform_type="affine", target_shape=(2, 3)).shape
        (1, 2, 2, 3)
    """
    fn = "GridGenerator"
    _check_nd(fn, data=data)
    _no_out(fn, out)
    if transform_type == "affine":
        h, w = _pair(fn, "target_shape", target_shape)
        if data.ndim != 2 or data.shape[1] != 6 or h < 1 or w < 1:
            raise MXNetError(
                f"mx.nd.{fn}: transform_type='affine' needs data of shape (N, 6) and a positive "
                f"target_shape, got {data.shape} and {target_shape!r}"
            )
        nb = data.shape[0]

        def affine(t: NativeVariable) -> NativeVariable:
            theta = _call("Reshape", t, shape=(nb, 2, 3))
            g = _call("AffineGrid", theta, size=(h, w), align_corners=True)
            return _call("Transpose", g, axes=(0, 3, 1, 2))  # type: ignore[no-any-return]

        return _recorded([data], affine)
    if transform_type == "warp":
        if data.ndim != 4 or data.shape[1] != 2:
            raise MXNetError(
                f"mx.nd.{fn}: transform_type='warp' needs data of shape (N, 2, H, W), got "
                f"{data.shape}"
            )
        h, w = data.shape[2], data.shape[3]
        jj, ii = np.meshgrid(np.arange(w), np.arange(h))
        base = np.stack([jj, ii])[None].astype(data._arr.dtype)
        sc = np.array([2.0 / max(w - 1, 1), 2.0 / max(h - 1, 1)], dtype=data._arr.dtype)
        sc = sc.reshape(1, 2, 1, 1)

        def warp(f: NativeVariable) -> NativeVariable:
            g = (f + _const(base, f)) * _const(sc, f)
            return _call("AddScalar", g, val=-1.0)  # type: ignore[no-any-return]

        return _recorded([data], warp)
    raise MXNetError(
        f"mx.nd.{fn}: Invalid Input: '{transform_type}', valid values are: {{'affine', 'warp'}}"
    )


def _sample(x: NativeVariable, grid: NativeVariable) -> NativeVariable:
    g = _call("Transpose", grid, axes=(0, 2, 3, 1))
    return _call(  # type: ignore[no-any-return]
        "WarpByGrid", x, g, mode="linear", padding_mode="zero", align_corners=True
    )


def BilinearSampler(
    data: NDArray,
    grid: NDArray,
    cudnn_off: Any = None,
    out: Any = None,
    name: Any = None,
    **kwargs: Any,
) -> NDArray:
    """mxnet's ``BilinearSampler``: ``data`` ``(N, C, H, W)`` sampled bilinearly at ``grid``
    ``(N, 2, Ho, Wo)`` (normalized ``(x, y)``, -1 and 1 the centres of the corner pixels:
    pixel ``((x + 1) (W - 1) / 2, (y + 1) (H - 1) / 2)``), the pixels outside the image read as
    zeros; the gradients of both ``data`` and ``grid``.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> x = mx.nd.arange(4).reshape((1, 1, 2, 2))
        >>> mx.nd.BilinearSampler(x, mx.nd.zeros((1, 2, 1, 1))).asnumpy()
        array([[[[1.5]]]], dtype=float32)
    """
    fn = "BilinearSampler"
    _check_nd(fn, data=data, grid=grid)
    _no_out(fn, out)
    if data.ndim != 4 or grid.ndim != 4 or grid.shape[1] != 2 or grid.shape[0] != data.shape[0]:
        raise MXNetError(
            f"mx.nd.{fn}: data of shape {data.shape} must be (N, C, H, W) and grid of shape "
            f"{grid.shape} (N, 2, Ho, Wo)"
        )
    if grid._arr.dtype != data._arr.dtype:
        raise MXNetError(f"mx.nd.{fn}: data and grid must have the same dtype")
    return _recorded([data, grid], _sample)


def SpatialTransformer(
    data: NDArray,
    loc: NDArray,
    target_shape: Any = (0, 0),
    transform_type: str = "affine",
    sampler_type: str = "bilinear",
    cudnn_off: Any = None,
    out: Any = None,
    name: Any = None,
    **kwargs: Any,
) -> NDArray:
    """mxnet's ``SpatialTransformer``: ``BilinearSampler(data, GridGenerator(loc, "affine",
    target_shape))``, ``loc`` ``(N, 6)`` the affine maps; the gradients of ``data`` and
    ``loc``.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> loc = mx.nd.array([[1.0, 0.0, 0.0, 0.0, 1.0, 0.0]])
        >>> mx.nd.SpatialTransformer(mx.nd.ones((1, 1, 4, 4)), loc, target_shape=(2, 2)).shape
        (1, 1, 2, 2)
    """
    fn = "SpatialTransformer"
    _check_nd(fn, data=data, loc=loc)
    _no_out(fn, out)
    if transform_type != "affine":
        raise MXNetError(
            f"mx.nd.{fn}: Invalid Input: '{transform_type}', valid values are: {{'affine'}}"
        )
    if sampler_type != "bilinear":
        raise MXNetError(
            f"mx.nd.{fn}: Invalid Input: '{sampler_type}', valid values are: {{'bilinear'}}"
        )
    h, w = _pair(fn, "target_shape", target_shape)
    if data.ndim != 4 or loc.ndim != 2 or loc.shape != (data.shape[0], 6) or h < 1 or w < 1:
        raise MXNetError(
            f"mx.nd.{fn}: data of shape {data.shape} must be (N, C, H, W), loc of shape "
            f"{loc.shape} (N, 6) and target_shape positive, got {target_shape!r}"
        )
    nb = data.shape[0]

    def st(x: NativeVariable, t: NativeVariable) -> NativeVariable:
        theta = _call("Reshape", t, shape=(nb, 2, 3))
        g = _call("AffineGrid", theta, size=(h, w), align_corners=True)
        return _call(  # type: ignore[no-any-return]
            "WarpByGrid", x, g, mode="linear", padding_mode="zero", align_corners=True
        )

    return _recorded([data, loc], st)


# -- ROIPooling -----------------------------------------------------------------------------------


def ROIPooling(
    data: NDArray,
    rois: NDArray,
    pooled_size: Any,
    spatial_scale: float,
    out: Any = None,
    name: Any = None,
    **kwargs: Any,
) -> NDArray:
    """mxnet's ``ROIPooling``: for each region ``(batch_index, x1, y1, x2, y2)`` of ``rois``
    (``(R, 5)``, in input coordinates scaled by ``spatial_scale`` and rounded) the maximum of
    ``data`` over each of the ``pooled_size`` ``(ph, pw)`` bins (bin ``i`` of a region of
    height ``h``: rows ``floor(i h / ph) .. ceil((i + 1) h / ph)``, clipped to the image; an
    empty bin gives 0). Output ``(R, C, ph, pw)``; the gradient goes to each bin's maximum
    (the first one at ties); ``rois`` get none.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> x = mx.nd.arange(16).reshape((1, 1, 4, 4))
        >>> rois = mx.nd.array([[0, 0, 0, 3, 3]])
        >>> mx.nd.ROIPooling(x, rois, pooled_size=(2, 2), spatial_scale=1.0).asnumpy()
        array([[[[ 5.,  7.],
                 [13., 15.]]]], dtype=float32)
    """
    fn = "ROIPooling"
    _check_nd(fn, data=data, rois=rois)
    _no_out(fn, out)
    ph, pw = _pair(fn, "pooled_size", pooled_size)
    if data.ndim != 4 or rois.ndim != 2 or rois.shape[1] != 5:
        raise MXNetError(
            f"mx.nd.{fn}: data of shape {data.shape} must be (N, C, H, W) and rois of shape "
            f"{rois.shape} (R, 5)"
        )
    if ph < 1 or pw < 1:
        raise MXNetError(f"mx.nd.{fn}: pooled_size must be positive, got {pooled_size!r}")
    x = _host(data)
    boxes = _host(rois).astype(np.float64)
    nb, c, H, W = x.shape
    R = boxes.shape[0]
    idx = np.zeros((R, c, ph, pw), dtype=np.int64)
    valid = np.zeros((R, c, ph, pw), dtype=bool)
    s = float(spatial_scale)
    rnd = np.vectorize(lambda v: math.floor(abs(v) + 0.5) * (1 if v >= 0 else -1))
    for r in range(R):
        b = int(boxes[r, 0])
        if not 0 <= b < nb:
            raise MXNetError(f"mx.nd.{fn}: roi {r} has batch index {b}, data has {nb} samples")
        x1, y1, x2, y2 = (int(v) for v in rnd(boxes[r, 1:] * s))
        rh, rw = max(y2 - y1 + 1, 1), max(x2 - x1 + 1, 1)
        bh, bw = rh / ph, rw / pw
        for i in range(ph):
            hs = min(max(math.floor(i * bh) + y1, 0), H)
            he = min(max(math.ceil((i + 1) * bh) + y1, 0), H)
            for j in range(pw):
                ws = min(max(math.floor(j * bw) + x1, 0), W)
                we = min(max(math.ceil((j + 1) * bw) + x1, 0), W)
                if he <= hs or we <= ws:
                    continue
                win = x[b, :, hs:he, ws:we].reshape(c, -1)
                arg = win.argmax(axis=1)
                yy, xx = hs + arg // (we - ws), ws + arg % (we - ws)
                idx[r, :, i, j] = ((b * c + np.arange(c)) * H + yy) * W + xx
                valid[r, :, i, j] = True
    out_shape = (R, c, ph, pw)
    mask = valid.astype(x.dtype)

    def pool(v: NativeVariable) -> NativeVariable:
        flat = _call("Reshape", v, shape=(int(v.size),))
        ind = _const(idx.reshape(1, -1), v)
        y = _call("GatherNd", flat, ind)
        return _call("Reshape", y, shape=out_shape) * _const(mask, v)  # type: ignore[no-any-return]

    return _recorded([data], pool)


# -- Correlation ----------------------------------------------------------------------------------


def Correlation(
    data1: NDArray,
    data2: NDArray,
    kernel_size: int = 1,
    max_displacement: int = 1,
    stride1: int = 1,
    stride2: int = 1,
    pad_size: int = 0,
    is_multiply: bool = True,
    out: Any = None,
    name: Any = None,
    **kwargs: Any,
) -> NDArray:
    """mxnet's ``Correlation`` (FlowNet's correlation layer) of two arrays ``(N, C, H, W)``,
    both zero-padded by ``pad_size``: for each displacement ``(dy, dx)`` in
    ``-D .. D`` (``D = max_displacement // stride2 * stride2``, step ``stride2``; output channel
    ``(dy / stride2 + D') (2 D' + 1) + dx / stride2 + D'``) and each output position ``(i, j)``
    (centre ``(y, x) = (i stride1 + max_displacement + r, j stride1 + max_displacement + r)``,
    ``r = (kernel_size - 1) / 2``)::

        out = sum_{c, |u|, |v| <= r} f(a[c, y + u, x + v], b[c, y + dy + u, x + dx + v])
              / (kernel_size^2 C)

    ``f`` the product (``is_multiply``) or the absolute difference. Gradients of both inputs.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> a = mx.nd.ones((1, 1, 3, 3))
        >>> mx.nd.Correlation(a, a, max_displacement=1, pad_size=1).shape
        (1, 9, 3, 3)
    """
    fn = "Correlation"
    _check_nd(fn, data1=data1, data2=data2)
    _no_out(fn, out)
    if data1.ndim != 4 or data1.shape != data2.shape:
        raise MXNetError(
            f"mx.nd.{fn}: data1 and data2 must be (N, C, H, W) of one shape, got {data1.shape} "
            f"and {data2.shape}"
        )
    k, md, s1, s2, p = (int(v) for v in (kernel_size, max_displacement, stride1, stride2, pad_size))
    if k < 1 or k % 2 == 0:
        raise MXNetError(f"mx.nd.{fn}: kernel_size must be odd and positive, got {kernel_size}")
    if s1 < 1 or s2 < 1 or md < 0 or p < 0:
        raise MXNetError(
            f"mx.nd.{fn}: strides must be positive, max_displacement and pad_size >= 0"
        )
    nb, c, H, W = data1.shape
    kr = (k - 1) // 2
    border = md + kr
    ph, pw = H + 2 * p, W + 2 * p
    oh = math.ceil((ph - 2 * border) / s1)
    ow = math.ceil((pw - 2 * border) / s1)
    if oh < 1 or ow < 1:
        raise MXNetError(
            f"mx.nd.{fn}: the padded input {(ph, pw)} is too small for max_displacement {md} and "
            f"kernel_size {k}"
        )
    gr = md // s2
    scale = 1.0 / (k * k * c)

    def corr(a: NativeVariable, b: NativeVariable) -> NativeVariable:
        pads = (0, 0, 0, 0, p, p, p, p)
        a = _call("Pad", a, pad_width=pads)
        b = _call("Pad", b, pad_width=pads)
        # the centres (i s1 + md + kr) run over y0 .. y0 + (oh - 1) s1; the window adds -kr..kr
        maps = []
        for ty in range(-gr, gr + 1):
            for tx in range(-gr, gr + 1):
                dy, dx = ty * s2, tx * s2
                acc = None
                for u in range(-kr, kr + 1):
                    for v in range(-kr, kr + 1):
                        y0, x0 = md + kr + u, md + kr + v
                        sa = _call(
                            "Slice",
                            a,
                            start=(0, 0, y0, x0),
                            stop=(nb, c, y0 + (oh - 1) * s1 + 1, x0 + (ow - 1) * s1 + 1),
                            step=(1, 1, s1, s1),
                        )
                        sb = _call(
                            "Slice",
                            b,
                            start=(0, 0, y0 + dy, x0 + dx),
                            stop=(
                                nb,
                                c,
                                y0 + dy + (oh - 1) * s1 + 1,
                                x0 + dx + (ow - 1) * s1 + 1,
                            ),
                            step=(1, 1, s1, s1),
                        )
                        term = sa * sb if is_multiply else _call("Abs", sa - sb)
                        acc = term if acc is None else acc + term
                assert acc is not None
                maps.append(_call("Sum", acc, axis=1, keepdims=True))
        y = maps[0] if len(maps) == 1 else _call("Concatenate", *maps, axis=1)
        return _call("MulScalar", y, val=scale)  # type: ignore[no-any-return]

    if data1._arr.dtype != data2._arr.dtype:
        raise MXNetError(f"mx.nd.{fn}: data1 and data2 must have the same dtype")
    return _recorded([data1, data2], corr)


# -- the _v1 operators ----------------------------------------------------------------------------


def Convolution_v1(
    data: NDArray,
    weight: NDArray,
    bias: NDArray | None = None,
    kernel: Any = None,
    stride: Any = (),
    dilate: Any = (),
    pad: Any = (),
    num_filter: int | None = None,
    num_group: int = 1,
    workspace: int = 1024,
    no_bias: bool = False,
    cudnn_tune: Any = None,
    cudnn_off: bool = False,
    layout: str | None = None,
    out: Any = None,
    name: Any = None,
    **kwargs: Any,
) -> NDArray:
    """mxnet's deprecated ``Convolution_v1``: the same computation as ``Convolution``
    (``y = sum W x + b`` over each window, ``weight`` ``(num_filter, C / num_group, *kernel)``).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> x, w = mx.nd.ones((1, 1, 3, 3)), mx.nd.ones((1, 1, 2, 2))
        >>> mx.nd.Convolution_v1(x, w, kernel=(2, 2), num_filter=1, no_bias=True).shape
        (1, 1, 2, 2)
    """
    return _nd_layers.Convolution(
        data,
        weight,
        None if no_bias else bias,
        kernel=kernel,
        stride=stride,
        dilate=dilate,
        pad=pad,
        num_filter=num_filter,
        num_group=num_group,
        no_bias=no_bias,
        layout=layout,
        out=out,
    )


def Pooling_v1(
    data: NDArray,
    kernel: Any = (),
    pool_type: str = "max",
    global_pool: bool = False,
    pooling_convention: str = "valid",
    stride: Any = (),
    pad: Any = (),
    out: Any = None,
    name: Any = None,
    **kwargs: Any,
) -> NDArray:
    """mxnet's deprecated ``Pooling_v1``: ``max``, ``avg`` or ``sum`` over each window of the
    spatial axes of ``data`` zero-padded by ``pad``. Unlike ``Pooling``, the zero padding takes
    part in ``max`` (as mxnet 1.9.1's kernel) and ``avg`` always divides by the kernel's size.
    ``pooling_convention="full"`` rounds the output size up: the windows past the end read
    nothing there for ``max`` and zeros for ``avg``/``sum`` (still divided by the kernel's
    size).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> x = -mx.nd.ones((1, 1, 3, 3))
        >>> mx.nd.Pooling_v1(x, kernel=(2, 2), stride=(2, 2), pad=(1, 1)).asnumpy()
        array([[[[ 0.,  0.],
                 [ 0., -1.]]]], dtype=float32)
    """
    fn = "Pooling_v1"
    _check_nd(fn, data=data)
    _no_out(fn, out)
    if pool_type not in ("max", "avg", "sum"):
        raise MXNetError(
            f"mx.nd.{fn}: Invalid Input: '{pool_type}', valid values are: {{'avg', 'max', 'sum'}}"
        )
    if pooling_convention not in ("valid", "full"):
        raise MXNetError(
            f"mx.nd.{fn}: Invalid Input: '{pooling_convention}', valid values are: "
            "{'full', 'valid'}"
        )
    if data.ndim < 3:
        raise MXNetError(f"mx.nd.{fn}: data must have spatial axes (N, C, ...), got {data.shape}")
    if global_pool:
        return _nd_layers.Pooling(data, pool_type=pool_type, global_pool=True)
    nsp = data.ndim - 2
    ks = _nd_layers._tuple(kernel, nsp, fn, "kernel", 1)
    st = _nd_layers._tuple(stride, nsp, fn, "stride", 1)
    pd = _nd_layers._tuple(pad, nsp, fn, "pad", 0)
    extra = []
    for L, kk, ss, pp in zip(data.shape[2:], ks, st, pd):
        if L + 2 * pp < kk:
            raise MXNetError(
                f"mx.nd.{fn}: kernel {ks} is larger than the padded input {data.shape[2:]}"
            )
        if pooling_convention == "full":
            n_out = math.ceil((L + 2 * pp - kk) / ss) + 1
            extra.append((n_out - 1) * ss + kk - (L + 2 * pp))
        else:
            extra.append(0)
    lead = (0, 0, 0, 0)
    zero_w = lead + tuple(v for pp in pd for v in (pp, pp))
    end_w = lead + tuple(v for e in extra for v in (0, e))
    low = float(np.finfo(data._arr.dtype).min) if data._arr.dtype.kind == "f" else 0.0
    end_value = low if pool_type == "max" else 0.0

    def padded(x: NativeVariable) -> NativeVariable:
        if any(pd):
            x = _call("Pad", x, pad_width=zero_w, mode="constant", constant_value=0.0)
        if any(extra):
            x = _call("Pad", x, pad_width=end_w, mode="constant", constant_value=end_value)
        return x

    if any(pd) or any(extra):
        r, rec = _record([data], padded)
        data = NDArray(r._data, data._ctx, r if rec else None)
    return _nd_layers.Pooling(
        data, kernel=ks, pool_type=pool_type, pooling_convention="valid", stride=st, pad=(0,) * nsp
    )


def BatchNorm_v1(
    data: NDArray,
    gamma: NDArray,
    beta: NDArray,
    moving_mean: NDArray | None = None,
    moving_var: NDArray | None = None,
    eps: float = 1e-3,
    momentum: float = 0.9,
    fix_gamma: bool = True,
    use_global_stats: bool = False,
    output_mean_var: bool = False,
    out: Any = None,
    name: Any = None,
    **kwargs: Any,
) -> Any:
    """mxnet's deprecated ``BatchNorm_v1``: ``BatchNorm`` over axis 1, ``y = (x - mean) /
    sqrt(var + eps) * gamma + beta``. mxnet 1.9.1's ``mx.nd.BatchNorm_v1`` cannot be called
    (it takes three arrays but its operator needs five); here the moving statistics may be
    given by keyword (zeros and ones when left out, updated in place in training inside
    ``mx.autograd.record()``).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> x = mx.nd.array([[1.0], [3.0]])
        >>> g, b = mx.nd.ones((1,)), mx.nd.zeros((1,))
        >>> mx.nd.BatchNorm_v1(x, g, b, use_global_stats=True).asnumpy().round(3)
        array([[1.   ],
               [2.999]], dtype=float32)
    """
    fn = "BatchNorm_v1"
    _check_nd(fn, data=data, gamma=gamma, beta=beta)
    if data.ndim < 2:
        raise MXNetError(f"mx.nd.{fn}: data must have a channel axis (axis 1), got {data.shape}")
    c = data.shape[1]
    dt = data._arr.dtype
    xp = data._ctx.device().xp
    if moving_mean is None:
        moving_mean = NDArray(xp.zeros((c,), dtype=dt), data._ctx)
    if moving_var is None:
        moving_var = NDArray(xp.ones((c,), dtype=dt), data._ctx)
    return _nd_layers.BatchNorm(
        data,
        gamma,
        beta,
        moving_mean,
        moving_var,
        eps=eps,
        momentum=momentum,
        fix_gamma=fix_gamma,
        use_global_stats=use_global_stats,
        output_mean_var=output_mean_var,
        axis=1,
        out=out,
    )
