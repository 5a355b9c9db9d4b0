"""mxnet's imperative layer functions used by Gluon: ``mx.nd.Activation``, ``LeakyReLU``,
``Flatten`` (``flatten``), ``Embedding``, ``Convolution``, ``Pooling``, ``BatchNorm``,
``LayerNorm``, ``InstanceNorm``, ``GroupNorm`` and ``pad`` (``Pad``), as
mxnet 1.9.1, each recorded by ``mx.autograd`` (registered gradhub functions on the arrays'
native Variables, as the other ``mx.nd`` functions).

Example::

    >>> import gradhub_compat.mxnet as mx
    >>> mx.nd.Activation(mx.nd.array([-1.0, 2.0]), act_type="relu").asnumpy()
    array([0., 2.], dtype=float32)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from gradhub.variable import Variable as NativeVariable

from .._common import call_native as _call
from . import _autograd_mode as _ag
from .base import MXNetError, _MXNetTypeError
from .ndarray import NDArray, _fresh, _record

__all__ = [
    "Activation",
    "BatchNorm",
    "Convolution",
    "Deconvolution",
    "Embedding",
    "Flatten",
    "GroupNorm",
    "InstanceNorm",
    "LayerNorm",
    "LeakyReLU",
    "Pad",
    "Pooling",
    "flatten",
    "pad",
]

_DOCS = "docs/migration-mxnet.md"

#: mxnet's act_type -> the registered gradhub function
_ACTIVATIONS = {
    "relu": "ReLU",
    "sigmoid": "Sigmoid",
    "tanh": "Tanh",
    "softrelu": "Softplus",
    "softsign": "Softsign",
}


def _check_nd(fn: str, **arrays: Any) -> None:
    for arg, v in arrays.items():
        if v is not None and not isinstance(v, NDArray):
            raise TypeError(f"mx.nd.{fn}: {arg} must be an NDArray, got {type(v).__name__}")


def _check_out(fn: str, out: Any) -> None:
    if out is not None:
        raise NotImplementedError(f"mx.nd.{fn}: out= is not supported ({_DOCS})")


def _same_dtype(fn: str, data: NDArray, **arrays: Any) -> None:
    for arg, v in arrays.items():
        if v is not None and v._arr.dtype != data._arr.dtype:
            raise _MXNetTypeError(
                f"mx.nd.{fn}: {arg} has dtype {v._arr.dtype.name}, data {data._arr.dtype.name} "
                "(mxnet refuses mixed dtypes)"
            )


def _result(r: NativeVariable, rec: bool, like: NDArray) -> NDArray:
    return NDArray(r._data, like._ctx, r if rec else None)


def _tuple(v: Any, n: int, fn: str, arg: str, default: int) -> tuple[int, ...]:
    if v is None or (isinstance(v, (tuple, list)) and len(v) == 0):
        return (default,) * n
    t = (int(v),) * n if isinstance(v, (int, np.integer)) else tuple(int(a) for a in v)
    if len(t) != n:
        raise MXNetError(f"mx.nd.{fn}: {arg}={v!r} must have {n} values (one per spatial axis)")
    return t


def Activation(
    data: NDArray, act_type: str, out: Any = None, name: Any = None, **kwargs: Any
) -> NDArray:
    """mxnet's ``Activation``: ``relu`` max(x, 0), ``sigmoid`` 1 / (1 + e^-x), ``tanh``,
    ``softrelu`` log(1 + e^x), ``softsign`` x / (1 + |x|), elementwise.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.Activation(mx.nd.array([0.0]), act_type="sigmoid").asnumpy()
        array([0.5], dtype=float32)
    """
    _check_nd("Activation", data=data)
    _check_out("Activation", out)
    if act_type not in _ACTIVATIONS:
        raise MXNetError(
            f"mx.nd.Activation: Invalid Input: '{act_type}', valid values are: "
            "{'relu', 'sigmoid', 'softrelu', 'softsign', 'tanh'}"
        )
    fn = _ACTIVATIONS[act_type]
    r, rec = _record([data], lambda x: _call(fn, x))
    return _result(r, rec, data)


def LeakyReLU(
    data: NDArray,
    gamma: NDArray | None = None,
    act_type: str = "leaky",
    slope: float = 0.25,
    lower_bound: float = 0.125,
    upper_bound: float = 0.334,
    out: Any = None,
    name: Any = None,
    **kwargs: Any,
) -> NDArray:
    """mxnet's ``LeakyReLU``: ``leaky`` x if x > 0 else slope * x; ``prelu`` the same with the
    learned ``gamma`` (one value per channel, axis 1, or a single one); ``elu`` slope * (e^x - 1)
    for x <= 0; ``selu`` (lambda 1.0507009873554805, alpha 1.6732632423543772); ``gelu``
    x * Phi(x) (the erf form). ``rrelu`` (random slopes) raises NotImplementedError.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.LeakyReLU(mx.nd.array([-2.0, 3.0]), slope=0.1).asnumpy()
        array([-0.2,  3. ], dtype=float32)
    """
    _check_nd("LeakyReLU", data=data, gamma=gamma)
    _check_out("LeakyReLU", out)
    s = float(slope)
    if act_type == "leaky":
        r, rec = _record([data], lambda x: _call("LeakyReLU", x, alpha=s))
    elif act_type == "elu":
        r, rec = _record([data], lambda x: _call("ELU", x, alpha=s))
    elif act_type == "selu":
        r, rec = _record([data], lambda x: _call("SELU", x))
    elif act_type == "gelu":
        r, rec = _record([data], lambda x: _call("GELU", x))
    elif act_type == "prelu":
        if gamma is None:
            raise MXNetError("mx.nd.LeakyReLU: act_type='prelu' needs gamma")
        _same_dtype("LeakyReLU", data, gamma=gamma)
        if gamma.size != 1 and (data.ndim < 2 or gamma.size != data.shape[1]):
            raise MXNetError(
                f"mx.nd.LeakyReLU: gamma of shape {gamma.shape} does not fit data of shape "
                f"{data.shape} (one value, or one per channel of axis 1)"
            )
        bshape = (
            (1,) * data.ndim if gamma.size == 1 else (1, data.shape[1]) + (1,) * (data.ndim - 2)
        )

        def prelu(x: NativeVariable, g: NativeVariable) -> Any:
            gb = _call("Reshape", g, shape=bshape)
            pos = _call("MaximumScalar", x, val=0.0)
            neg = _call("MinimumScalar", x, val=0.0)
            return pos + gb * neg

        r, rec = _record([data, gamma], prelu)
    elif act_type == "rrelu":
        raise NotImplementedError(f"mx.nd.LeakyReLU: act_type='rrelu' is not supported ({_DOCS})")
    else:
        raise MXNetError(
            f"mx.nd.LeakyReLU: Invalid Input: '{act_type}', valid values are: "
            "{'elu', 'gelu', 'leaky', 'prelu', 'rrelu', 'selu'}"
        )
    return _result(r, rec, data)


def Flatten(data: NDArray, out: Any = None, name: Any = None, **kwargs: Any) -> NDArray:
    """mxnet's ``Flatten``: shape (d0, d1 * d2 * ...) (a 1-D array becomes (d0, 1)).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.flatten(mx.nd.ones((2, 3, 4))).shape
        (2, 12)
    """
    _check_nd("Flatten", data=data)
    _check_out("Flatten", out)
    if data.ndim == 0:
        raise MXNetError("mx.nd.Flatten: data must have at least one axis")
    shape = (data.shape[0], int(math.prod(data.shape[1:])))
    r, rec = _record([data], lambda x: _call("Reshape", x, shape=shape))
    return _fresh(_result(r, rec, data), data)


flatten = Flatten


def Embedding(
    data: NDArray,
    weight: NDArray,
    input_dim: int | None = None,
    output_dim: int | None = None,
    dtype: Any = "float32",
    sparse_grad: bool = False,
    out: Any = None,
    name: Any = None,
    **kwargs: Any,
) -> NDArray:
    """mxnet's ``Embedding``: ``out[i...] = weight[data[i...]]`` (shape ``data.shape +
    (output_dim,)``); the indices (floats in mxnet) are truncated to integers and clipped to
    ``[0, input_dim - 1]`` as mxnet's kernel does; ``weight`` gets the gradient (rows of repeated
    indices accumulate), ``data`` none.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> w = mx.nd.array([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]])
        >>> mx.nd.Embedding(mx.nd.array([2, 0]), w, input_dim=3, output_dim=2).asnumpy()
        array([[4., 5.],
               [0., 1.]], dtype=float32)
    """
    _check_nd("Embedding", data=data, weight=weight)
    _check_out("Embedding", out)
    if sparse_grad:
        raise NotImplementedError(
            f"mx.nd.Embedding: sparse_grad=True (row_sparse gradients) is not supported ({_DOCS})"
        )
    if input_dim is None or output_dim is None:
        raise MXNetError(
            "mx.nd.Embedding: Required parameter input_dim and output_dim of int are not presented"
        )
    if weight.shape != (int(input_dim), int(output_dim)):
        raise MXNetError(
            f"mx.nd.Embedding: Shape inconsistent, Provided = [{','.join(map(str, weight.shape))}]"
            f", inferred shape=({int(input_dim)},{int(output_dim)}) (weight)"
        )
    idx = np.asarray(data.asnumpy())
    idx = np.clip(np.trunc(idx).astype(np.int64), 0, int(input_dim) - 1)
    ids = NativeVariable.leaf(data._ctx.device().asarray(idx), False)
    r, rec = _record([weight], lambda w: _call("Embed", ids, w))
    return _result(r, rec, weight)


def _conv_call(
    op: str, data: NDArray, weight: NDArray, used_bias: NDArray | None, attrs: dict[str, Any]
) -> NDArray:
    """The native ``op`` on ``data``, ``weight`` (and ``used_bias``), recorded for autograd."""
    arrays = [data, weight] if used_bias is None else [data, weight, used_bias]
    _same_dtype(op, data, weight=weight, bias=used_bias)
    r, rec = _record(arrays, lambda *v: _call(op, *v, **attrs))
    return _result(r, rec, data)


def Convolution(
    data: NDArray,
    weight: NDArray,
    bias: NDArray | None = None,
    kernel: Any = None,
    stride: Any = (),
    dilate: Any = (),
    pad: Any = (),
    num_filter: int | None = None,
    num_group: int = 1,
    no_bias: bool = False,
    layout: str | None = None,
    cudnn_tune: Any = None,
    cudnn_off: bool = False,
    workspace: int = 1024,
    out: Any = None,
    name: Any = None,
    **kwargs: Any,
) -> NDArray:
    """mxnet's ``Convolution`` (layouts NCW, NCHW, NCDHW): ``y[n, o, p] = b[o] + sum_{c, k}
    W[o, c, k] x[n, g(o) C/num_group + c, p * stride + k * dilate - pad]``, ``weight`` of shape
    ``(num_filter, C / num_group, *kernel)``; output size ``(L + 2 pad - dilate (k - 1) - 1) //
    stride + 1``. Other layouts raise NotImplementedError.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> x, w = mx.nd.ones((1, 1, 4, 4)), mx.nd.ones((2, 1, 3, 3))
        >>> mx.nd.Convolution(x, w, kernel=(3, 3), num_filter=2, no_bias=True).shape
        (1, 2, 2, 2)
    """
    _check_nd("Convolution", data=data, weight=weight, bias=bias)
    _check_out("Convolution", out)
    if kernel is None or num_filter is None:
        raise MXNetError(
            "mx.nd.Convolution: Required parameter kernel and num_filter are not presented"
        )
    k = (int(kernel),) if isinstance(kernel, (int, np.integer)) else tuple(int(a) for a in kernel)
    nsp = len(k)
    if layout not in (None, "NCW", "NCHW", "NCDHW") or data.ndim != nsp + 2:
        if layout not in (None, "NCW", "NCHW", "NCDHW"):
            raise NotImplementedError(
                f"mx.nd.Convolution: layout={layout!r} is not supported (channels first only; "
                f"{_DOCS})"
            )
        raise MXNetError(
            f"mx.nd.Convolution: data of shape {data.shape} does not fit a {nsp}-D kernel {k}"
        )
    st = _tuple(stride, nsp, "Convolution", "stride", 1)
    dl = _tuple(dilate, nsp, "Convolution", "dilate", 1)
    pd = _tuple(pad, nsp, "Convolution", "pad", 0)
    g = int(num_group)
    c = data.shape[1]
    if c % g or int(num_filter) % g:
        raise MXNetError(
            f"mx.nd.Convolution: num_group={g} must divide the input channels {c} and num_filter "
            f"{num_filter}"
        )
    wshape = (int(num_filter), c // g, *k)
    if weight.shape != wshape:
        raise MXNetError(
            "mx.nd.Convolution: Shape inconsistent, Provided = "
            f"[{','.join(map(str, weight.shape))}], "
            f"inferred shape=({','.join(map(str, wshape))}) "
            f"(weight, for data of shape {data.shape})"
        )
    used_bias = None if no_bias else bias
    if used_bias is not None and used_bias.shape != (int(num_filter),):
        raise MXNetError(
            f"mx.nd.Convolution: Shape inconsistent, Provided = "
            f"[{','.join(map(str, used_bias.shape))}], inferred shape=({int(num_filter)},) (bias)"
        )
    for i, (L, kk) in enumerate(zip(data.shape[2:], k)):
        if L + 2 * pd[i] < dl[i] * (kk - 1) + 1:
            raise MXNetError(
                f"mx.nd.Convolution: kernel size {k} (dilate {dl}) exceeds the padded input of "
                f"shape {data.shape} (pad {pd})"
            )
    attrs = {"pad": pd, "stride": st, "dilation": dl, "group": g}
    return _conv_call("Convolution", data, weight, used_bias, attrs)


def Deconvolution(
    data: NDArray,
    weight: NDArray,
    bias: NDArray | None = None,
    kernel: Any = None,
    stride: Any = (),
    dilate: Any = (),
    pad: Any = (),
    adj: Any = (),
    target_shape: Any = (),
    num_filter: int | None = None,
    num_group: int = 1,
    no_bias: bool = True,
    layout: str | None = None,
    workspace: int = 512,
    cudnn_tune: Any = None,
    cudnn_off: bool = False,
    out: Any = None,
    name: Any = None,
    **kwargs: Any,
) -> NDArray:
    """mxnet's ``Deconvolution`` (the transposed convolution, the gradient of ``Convolution``
    with respect to its data; layouts NCW, NCHW, NCDHW): ``y[n, g(c) F/num_group + f, i *
    stride + k * dilate - pad] += W[c, f, k] x[n, c, i]``, ``weight`` of shape ``(C,
    num_filter / num_group, *kernel)``; output size ``(L - 1) stride - 2 pad + dilate (k - 1)
    + 1 + adj``. As mxnet, ``no_bias`` defaults to True (a ``bias`` given with it raises
    MXNetError), and a ``target_shape`` sets the output
    size, the padding and ``adj`` being derived from it (``pad = (t + 1) // 2``, ``adj = t %
    2`` for ``t`` the size without padding minus the target). Other layouts raise
    NotImplementedError.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> x, w = mx.nd.ones((1, 2, 3, 3)), mx.nd.ones((2, 4, 4, 4))
        >>> mx.nd.Deconvolution(x, w, kernel=(4, 4), stride=(2, 2), pad=(1, 1), num_filter=4).shape
        (1, 4, 6, 6)
    """
    _check_nd("Deconvolution", data=data, weight=weight, bias=bias)
    _check_out("Deconvolution", out)
    if kernel is None or num_filter is None:
        raise MXNetError(
            "mx.nd.Deconvolution: Required parameter kernel and num_filter are not presented"
        )
    k = (int(kernel),) if isinstance(kernel, (int, np.integer)) else tuple(int(a) for a in kernel)
    nsp = len(k)
    if layout not in (None, "NCW", "NCHW", "NCDHW"):
        raise NotImplementedError(
            f"mx.nd.Deconvolution: layout={layout!r} is not supported (channels first only; "
            f"{_DOCS})"
        )
    if data.ndim != nsp + 2:
        raise MXNetError(
            f"mx.nd.Deconvolution: data of shape {data.shape} does not fit a {nsp}-D kernel {k}"
        )
    attrs = deconv_attrs(
        "mx.nd.Deconvolution",
        data.shape,
        k,
        stride,
        dilate,
        pad,
        adj,
        target_shape,
        int(num_filter),
        int(num_group),
    )
    c = data.shape[1]
    g = int(num_group)
    wshape = (c, int(num_filter) // g, *k)
    if weight.shape != wshape:
        raise MXNetError(
            "mx.nd.Deconvolution: Shape inconsistent, Provided = "
            f"[{','.join(map(str, weight.shape))}], "
            f"inferred shape=({','.join(map(str, wshape))}) "
            f"(weight, for data of shape {data.shape})"
        )
    if no_bias and bias is not None:
        raise MXNetError(
            "mx.nd.Deconvolution: Operator Deconvolution expects 2 inputs, but got 3 instead "
            "(a bias is given with no_bias=True, the default)"
        )
    used_bias = None if no_bias else bias
    if used_bias is not None and used_bias.shape != (int(num_filter),):
        raise MXNetError(
            f"mx.nd.Deconvolution: Shape inconsistent, Provided = "
            f"[{','.join(map(str, used_bias.shape))}], inferred shape=({int(num_filter)},) (bias)"
        )
    return _conv_call("Deconvolution", data, weight, used_bias, attrs)


def deconv_attrs(
    fn: str,
    dshape: tuple[int, ...],
    k: tuple[int, ...],
    stride: Any,
    dilate: Any,
    pad: Any,
    adj: Any,
    target_shape: Any,
    num_filter: int,
    num_group: int,
) -> dict[str, Any]:
    """The attributes of gradhub's ``Deconvolution`` (``pad``, ``stride``, ``dilation``,
    ``group``, ``output_padding``) for mxnet's ``Deconvolution`` of data of shape ``dshape``
    with the kernel ``k``: a ``target_shape`` (non-zero) sets the padding and ``adj``, as
    mxnet's ``InferPad``; raises :class:`~.base.MXNetError` (naming ``fn``) where mxnet's shape
    inference refuses (groups not dividing the channels, ``adj`` not smaller than the stride or
    the dilation, an empty output)."""
    nsp = len(k)
    name = fn.rsplit(".", 1)[-1]
    st = _tuple(stride, nsp, name, "stride", 1)
    dl = _tuple(dilate, nsp, name, "dilate", 1)
    pd = _tuple(pad, nsp, name, "pad", 0)
    aj = _tuple(adj, nsp, name, "adj", 0)
    if target_shape is not None and len(tuple(target_shape)) and any(int(t) for t in target_shape):
        ts = _tuple(target_shape, nsp, name, "target_shape", 0)
        pads, adjs = [], []
        for i, (L, kk, t) in enumerate(zip(dshape[2:], k, ts)):
            full = st[i] * (L - 1) + dl[i] * (kk - 1) + 1
            if full < t:
                raise MXNetError(f"{fn}: too big target shape {ts}")
            pads.append((full - t + 1) // 2)
            adjs.append((full - t) % 2)
        pd, aj = tuple(pads), tuple(adjs)
    c = dshape[1]
    if num_group <= 0 or c % num_group or num_filter % num_group:
        raise MXNetError(
            f"{fn}: num_group={num_group} must divide the input channels {c} and num_filter "
            f"{num_filter}"
        )
    for i, (L, kk) in enumerate(zip(dshape[2:], k)):
        size = (L - 1) * st[i] - 2 * pd[i] + dl[i] * (kk - 1) + 1 + aj[i]
        if size <= 0 or aj[i] >= max(st[i], dl[i]):
            raise MXNetError(
                f"{fn}: kernel {k}, stride {st}, dilate {dl}, pad {pd} and adj {aj} give no "
                f"valid output for data of shape {dshape} (adj must be smaller than the stride)"
            )
    return {"pad": pd, "stride": st, "dilation": dl, "group": num_group, "output_padding": aj}


def deconv_out_shape(
    dshape: tuple[int, ...], k: tuple[int, ...], num_filter: int, attrs: dict[str, Any]
) -> tuple[int, ...]:
    """The output shape of :func:`deconv_attrs`'s deconvolution: ``(N, num_filter, (L - 1)
    stride - 2 pad + dilate (k - 1) + 1 + adj...)``."""
    sizes = tuple(
        (L - 1) * s - 2 * p + d * (kk - 1) + 1 + a
        for L, kk, s, p, d, a in zip(
            dshape[2:],
            k,
            attrs["stride"],
            attrs["pad"],
            attrs["dilation"],
            attrs["output_padding"],
        )
    )
    return (dshape[0], num_filter, *sizes)


def Pooling(
    data: NDArray,
    kernel: Any = (),
    pool_type: str = "max",
    global_pool: bool = False,
    cudnn_off: bool = False,
    pooling_convention: str = "valid",
    stride: Any = (),
    pad: Any = (),
    p_value: Any = None,
    count_include_pad: Any = None,
    layout: str | None = None,
    out: Any = None,
    name: Any = None,
    **kwargs: Any,
) -> NDArray:
    """mxnet's ``Pooling`` (channels first): ``max``, ``avg`` (the window mean, counting the
    padding unless ``count_include_pad=False``) or ``sum`` over windows of the spatial axes;
    ``stride`` defaults to 1 and ``pad`` to 0 (as mxnet's operator; Gluon's pooling layers pass
    the pool size as the stride); ``global_pool`` pools each whole spatial extent (output size
    1). Output size ``(L + 2 pad - k) // stride + 1`` (``pooling_convention="valid"``); ``"full"``
    (rounding up) is supported where it gives the same size, else NotImplementedError, as are
    ``lp`` pooling and channel-last layouts.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> x = mx.nd.array([[[[1.0, 2.0], [3.0, 4.0]]]])
        >>> mx.nd.Pooling(x, kernel=(2, 2), pool_type="avg").asnumpy()
        array([[[[2.5]]]], dtype=float32)
    """
    _check_nd("Pooling", data=data)
    _check_out("Pooling", out)
    if layout not in (None, "NCW", "NCHW", "NCDHW"):
        raise NotImplementedError(
            f"mx.nd.Pooling: layout={layout!r} is not supported (channels first only; {_DOCS})"
        )
    if pool_type not in ("max", "avg", "sum"):
        if pool_type == "lp":
            raise NotImplementedError(f"mx.nd.Pooling: pool_type='lp' is not supported ({_DOCS})")
        raise MXNetError(
            f"mx.nd.Pooling: Invalid Input: '{pool_type}', valid values are: "
            "{'avg', 'lp', 'max', 'sum'}"
        )
    if data.ndim < 3:
        raise MXNetError(f"mx.nd.Pooling: data of shape {data.shape} has no spatial axis")
    nsp = data.ndim - 2
    spatial = data.shape[2:]
    if global_pool:
        k: tuple[int, ...] = tuple(spatial)
        st: tuple[int, ...] = (1,) * nsp
        pd: tuple[int, ...] = (0,) * nsp
    else:
        if kernel is None or (isinstance(kernel, (tuple, list)) and len(kernel) == 0):
            raise MXNetError("mx.nd.Pooling: kernel must be given unless global_pool=True")
        k = _tuple(kernel, nsp, "Pooling", "kernel", 1)
        st = _tuple(stride, nsp, "Pooling", "stride", 1)
        pd = _tuple(pad, nsp, "Pooling", "pad", 0)
    if pooling_convention not in ("valid", "full", "same"):
        raise MXNetError(
            f"mx.nd.Pooling: Invalid Input: '{pooling_convention}', valid values are: "
            "{'full', 'same', 'valid'}"
        )
    for L, kk, s, p in zip(spatial, k, st, pd):
        if L + 2 * p < kk:
            raise MXNetError(
                f"mx.nd.Pooling: kernel size {k} exceeds the padded input of shape {data.shape} "
                f"(pad {pd})"
            )
        if pooling_convention != "valid" and not global_pool and (L + 2 * p - kk) % s:
            raise NotImplementedError(
                f"mx.nd.Pooling: pooling_convention={pooling_convention!r} with partial windows "
                f"(input {spatial}, kernel {k}, stride {st}, pad {pd}) is not supported ({_DOCS})"
            )
    attrs: dict[str, Any] = {"kernel": k, "stride": st, "pad": pd, "ignore_border": True}
    if pool_type == "max":
        r, rec = _record([data], lambda x: _call("MaxPooling", x, **attrs))
    else:
        include = True if count_include_pad is None else bool(count_include_pad)
        if pool_type == "sum":
            include = True
        size = float(math.prod(k))

        def avg(x: NativeVariable) -> Any:
            y = _call("AveragePooling", x, including_pad=include, **attrs)
            return _call("MulScalar", y, val=size) if pool_type == "sum" else y

        r, rec = _record([data], avg)
    return _result(r, rec, data)


def BatchNorm(
    data: NDArray,
    gamma: NDArray,
    beta: NDArray,
    moving_mean: NDArray,
    moving_var: NDArray,
    eps: float = 1e-3,
    momentum: float = 0.9,
    fix_gamma: bool = True,
    use_global_stats: bool = False,
    output_mean_var: bool = False,
    axis: int = 1,
    cudnn_off: bool = False,
    min_calib_range: Any = None,
    max_calib_range: Any = None,
    out: Any = None,
    name: Any = None,
    **kwargs: Any,
) -> NDArray:
    """mxnet's ``BatchNorm`` over every axis but ``axis``:
    ``y = (x - mean) / sqrt(var + eps) * gamma + beta`` (``gamma`` taken as 1, with no gradient,
    when ``fix_gamma``). In training (``mx.autograd.is_training()``) without
    ``use_global_stats``, ``mean`` and ``var`` are the batch's (biased variance), a fixed
    ``gamma`` is set to 1 in place, and inside ``mx.autograd.record()`` the moving statistics are
    updated in place: ``moving = momentum * moving + (1 - momentum) * batch`` (mxnet 1.9.1 does
    this during ``backward``; after ``record`` and ``backward`` the values are the same);
    otherwise ``moving_mean`` and ``moving_var`` are used. ``output_mean_var`` raises
    NotImplementedError.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> x = mx.nd.array([[1.0], [3.0]])
        >>> g, b, m, v = mx.nd.ones((1,)), mx.nd.zeros((1,)), mx.nd.zeros((1,)), mx.nd.ones((1,))
        >>> mx.nd.BatchNorm(x, g, b, m, v, eps=0.0).asnumpy()  # not training: moving stats
        array([[1.],
               [3.]], dtype=float32)
    """
    _check_nd(
        "BatchNorm",
        data=data,
        gamma=gamma,
        beta=beta,
        moving_mean=moving_mean,
        moving_var=moving_var,
    )
    _check_out("BatchNorm", out)
    if output_mean_var:
        raise NotImplementedError(
            f"mx.nd.BatchNorm: output_mean_var=True is not supported ({_DOCS})"
        )
    if not -data.ndim <= int(axis) < data.ndim:
        raise MXNetError(
            f"mx.nd.BatchNorm: axis {axis} is out of range for data of shape {data.shape}"
        )
    ax = int(axis) % data.ndim
    c = data.shape[ax]
    for arg, v in (
        ("gamma", gamma),
        ("beta", beta),
        ("moving_mean", moving_mean),
        ("moving_var", moving_var),
    ):
        if v.shape != (c,):
            raise MXNetError(
                f"mx.nd.BatchNorm: Shape inconsistent, Provided = [{','.join(map(str, v.shape))}], "
                f"inferred shape=({c},) ({arg}, for data of shape {data.shape}, axis {ax})"
            )
    _same_dtype("BatchNorm", data, gamma=gamma, beta=beta)
    bshape = tuple(c if i == ax else 1 for i in range(data.ndim))
    red = tuple(i for i in range(data.ndim) if i != ax)
    batch = _ag.state.training and not use_global_stats
    e = float(eps)
    stats: dict[str, Any] = {}

    def bn(x: NativeVariable, g: NativeVariable, b: NativeVariable, mm: Any, mv: Any) -> Any:
        if batch:
            mean = _call("Mean", x, axis=red, keepdims=True)
            d = x - mean
            var = _call("Mean", d * d, axis=red, keepdims=True)
            stats["mean"], stats["var"] = mean, var
        else:
            d = x - _call("Reshape", mm, shape=bshape)
            var = _call("Reshape", mv, shape=bshape)
        inv = _call("PowScalar", _call("AddScalar", var, val=e), val=-0.5)
        y = d * inv
        if fix_gamma:  # gamma is 1: it takes part with a zero gradient (as mxnet)
            y = y + _call("MulScalar", _call("Reshape", g, shape=bshape), val=0.0)
        else:
            y = y * _call("Reshape", g, shape=bshape)
        return y + _call("Reshape", b, shape=bshape)

    mm_c = NativeVariable.leaf(moving_mean._arr, False)
    mv_c = NativeVariable.leaf(moving_var._arr, False)
    r, rec = _record([data, gamma, beta], lambda x, g, b: bn(x, g, b, mm_c, mv_c))
    if batch and fix_gamma:
        gamma._arr[...] = 1  # mxnet writes 1 into a fixed gamma in training
    if batch and rec and r.creator is not None:
        # as mxnet, the moving statistics are updated when a backward pass goes through the
        # operator (autograd runs the updates of the nodes it reaches, latest first)
        m = float(momentum)
        xp = data._ctx.device().xp
        bm = xp.asarray(stats["mean"]._data).reshape(c).astype(moving_mean._arr.dtype)
        bv = xp.asarray(stats["var"]._data).reshape(c).astype(moving_var._arr.dtype)

        def update() -> None:
            moving_mean._arr[...] = moving_mean._arr * m + bm * (1 - m)
            moving_var._arr[...] = moving_var._arr * m + bv * (1 - m)

        _ag.ON_BACKWARD[r.creator] = update
    return _result(r, rec, data)


def _standardize(x: NativeVariable, red: tuple[int, ...], e: float) -> Any:
    """``(x - mean) / sqrt(var + e)`` over the axes ``red`` (biased variance): gradhub's compiled
    ``Standardize`` for ``e > 0``; otherwise (mxnet does not check ``eps``) the same formula
    written with registered functions (``inf``/``nan`` where ``var + e <= 0``, as mxnet)."""
    if e > 0:
        return _call("Standardize", x, axis=red, eps=e)
    with np.errstate(divide="ignore", invalid="ignore"):  # (as mxnet: inf and nan, silently)
        d = x - _call("Mean", x, axis=red, keepdims=True)
        var = _call("Mean", d * d, axis=red, keepdims=True)
        return d * _call("PowScalar", _call("AddScalar", var, val=e), val=-0.5)


def _scaled(
    x: NativeVariable,
    red: tuple[int, ...],
    e: float,
    g: NativeVariable,
    b: NativeVariable,
    pshape: tuple[int, ...],
) -> Any:
    """:func:`_standardize` times gamma plus beta (reshaped to ``pshape``): gradhub's
    ``StandardizeAffine`` for ``e > 0`` (one function; compiled kernels where the parameters
    hold one value per position of the normalized trailing axes)."""
    g, b = _call("Reshape", g, shape=pshape), _call("Reshape", b, shape=pshape)
    if e > 0:
        return _call("StandardizeAffine", x, g, b, axis=red, eps=e)
    return _standardize(x, red, e) * g + b


def _norm_params(fn: str, data: NDArray, shape: tuple[int, ...], **params: NDArray) -> None:
    """Check that each of ``params`` (gamma, beta) has ``shape`` and data's dtype."""
    for arg, v in params.items():
        if v.shape != shape:
            raise MXNetError(
                f"mx.nd.{fn}: Shape inconsistent, Provided = [{','.join(map(str, v.shape))}], "
                f"inferred shape=({','.join(map(str, shape))},) ({arg}, for data of shape "
                f"{data.shape})"
            )
    _same_dtype(fn, data, **params)


def _norm_stats(
    data: NDArray,
    shape: tuple[int, ...],
    red: tuple[int, ...],
    out_shape: tuple[int, ...],
    e: float,
) -> list[NDArray]:
    """mxnet's ``output_mean_var`` outputs: the mean and ``sqrt(var + eps)`` (biased variance)
    of ``data`` viewed as ``shape``, over the axes ``red``, of shape ``out_shape``; as mxnet,
    they pass a zero gradient back to ``data`` (the values go through ``BlockGrad``, plus zero
    times the mean, so that a loss made of them alone still reaches ``data``)."""
    from .executor import _block

    def stat(x: NativeVariable, which: int) -> Any:
        v = _call("Reshape", x, shape=shape)
        mean = _call("Reshape", _call("Mean", v, axis=red, keepdims=True), shape=out_shape)
        value = mean
        if which == 1:
            d = v - _call("Mean", v, axis=red, keepdims=True)
            var = _call("Mean", d * d, axis=red, keepdims=True)
            std = _call("PowScalar", _call("AddScalar", var, val=e), val=0.5)
            value = _call("Reshape", std, shape=out_shape)
        return _block(value) + _call("MulScalar", mean, val=0.0)

    res = []
    for which in (0, 1):
        r, rec = _record([data], lambda x, w=which: stat(x, w))  # type: ignore[misc]
        res.append(_result(r, rec, data))
    return res


def LayerNorm(
    data: NDArray,
    gamma: NDArray,
    beta: NDArray,
    axis: int = -1,
    eps: float = 1e-5,
    output_mean_var: bool = False,
    out: Any = None,
    name: Any = None,
    **kwargs: Any,
) -> Any:
    """mxnet's ``LayerNorm`` over the axis ``axis``:
    ``y = (x - mean) / sqrt(var + eps) * gamma + beta``, ``mean`` and ``var`` (biased) taken
    along ``axis`` for each position of the other axes, ``gamma`` and ``beta`` of shape
    ``(data.shape[axis],)``. ``output_mean_var=True`` returns ``[y, mean, std]``, ``std =
    sqrt(var + eps)``, both of data's shape with 1 on ``axis`` (no gradient flows back through
    them, as mxnet). Differentiable to any order (mxnet 1.9.1 stops at the first).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> x = mx.nd.array([[1.0, 3.0], [2.0, 6.0]])
        >>> mx.nd.LayerNorm(x, mx.nd.ones((2,)), mx.nd.zeros((2,)), eps=0.0).asnumpy()
        array([[-1.,  1.],
               [-1.,  1.]], dtype=float32)
    """
    _check_nd("LayerNorm", data=data, gamma=gamma, beta=beta)
    _check_out("LayerNorm", out)
    if data.ndim == 0 or not -data.ndim <= int(axis) < data.ndim:
        raise MXNetError(
            f"mx.nd.LayerNorm: axis {axis} is out of range for data of shape {data.shape}"
        )
    ax = int(axis) % data.ndim
    c = data.shape[ax]
    _norm_params("LayerNorm", data, (c,), gamma=gamma, beta=beta)
    bshape = tuple(c if i == ax else 1 for i in range(data.ndim))
    e = float(eps)

    def ln(x: NativeVariable, g: NativeVariable, b: NativeVariable) -> Any:
        return _scaled(x, (ax,), e, g, b, bshape)

    r, rec = _record([data, gamma, beta], ln)
    y = _result(r, rec, data)
    if not output_mean_var:
        return y
    sshape = tuple(1 if i == ax else n for i, n in enumerate(data.shape))
    return [y, *_norm_stats(data, data.shape, (ax,), sshape, e)]


def InstanceNorm(
    data: NDArray,
    gamma: NDArray,
    beta: NDArray,
    eps: float = 1e-3,
    out: Any = None,
    name: Any = None,
    **kwargs: Any,
) -> NDArray:
    """mxnet's ``InstanceNorm`` (data of shape ``(N, C, ...)``, at least 3 axes): each sample's
    each channel normalized over the remaining axes,
    ``y[n, c] = (x[n, c] - mean[n, c]) / sqrt(var[n, c] + eps) * gamma[c] + beta[c]`` (biased
    variance), ``gamma`` and ``beta`` of shape ``(C,)``. Differentiable to any order (mxnet 1.9.1
    stops at the first).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> x = mx.nd.array([[[1.0, 3.0], [2.0, 6.0]]])
        >>> mx.nd.InstanceNorm(x, mx.nd.ones((2,)), mx.nd.zeros((2,)), eps=0.0).asnumpy()
        array([[[-1.,  1.],
                [-1.,  1.]]], dtype=float32)
    """
    _check_nd("InstanceNorm", data=data, gamma=gamma, beta=beta)
    _check_out("InstanceNorm", out)
    if data.ndim < 3:
        raise MXNetError(
            f"mx.nd.InstanceNorm: InstanceNorm only supports input tensors of rank >= 3 (data of "
            f"shape {data.shape})"
        )
    c = data.shape[1]
    _norm_params("InstanceNorm", data, (c,), gamma=gamma, beta=beta)
    bshape = (1, c) + (1,) * (data.ndim - 2)
    red = tuple(range(2, data.ndim))
    e = float(eps)

    def inorm(x: NativeVariable, g: NativeVariable, b: NativeVariable) -> Any:
        return _scaled(x, red, e, g, b, bshape)

    r, rec = _record([data, gamma, beta], inorm)
    return _result(r, rec, data)


def GroupNorm(
    data: NDArray,
    gamma: NDArray,
    beta: NDArray,
    num_groups: int = 1,
    eps: float = 1e-5,
    output_mean_var: bool = False,
    out: Any = None,
    name: Any = None,
    **kwargs: Any,
) -> Any:
    """mxnet 1.9.1's ``GroupNorm`` (data of shape ``(N, C, ...)``, at least 3 axes): the
    channels split into ``num_groups`` groups of ``C / num_groups`` consecutive channels, each
    sample's each group normalized over its channels and the remaining axes,
    ``y = (x - mean[n, g]) / sqrt(var[n, g] + eps) * gamma[g] + beta[g]`` (biased variance).
    As mxnet 1.9.1, ``gamma`` and ``beta`` have one value **per group**, shape
    ``(num_groups,)``. ``output_mean_var=True`` returns ``[y, mean, std]``, ``std = sqrt(var +
    eps)``, of shape ``(N, num_groups)`` (no gradient flows back through them, as mxnet).
    Differentiable to any order (mxnet 1.9.1 stops at the first).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> x = mx.nd.array([[[1.0], [3.0], [2.0], [6.0]]])
        >>> g, b = mx.nd.array([1.0, 2.0]), mx.nd.zeros((2,))
        >>> mx.nd.GroupNorm(x, g, b, num_groups=2, eps=0.0).asnumpy().ravel()
        array([-1.,  1., -2.,  2.], dtype=float32)
    """
    _check_nd("GroupNorm", data=data, gamma=gamma, beta=beta)
    _check_out("GroupNorm", out)
    if data.ndim < 3:
        raise MXNetError(
            f"mx.nd.GroupNorm: data must have at least 3 axes (N, C, ...), got shape {data.shape}"
        )
    g = int(num_groups)
    c = data.shape[1]
    if g < 1 or c % g:
        raise MXNetError(
            f"mx.nd.GroupNorm: num_groups={num_groups} must be >= 1 and divide the {c} channels "
            f"of data of shape {data.shape}"
        )
    _norm_params("GroupNorm", data, (g,), gamma=gamma, beta=beta)
    gshape = (data.shape[0], g, c // g, *data.shape[2:])
    bshape = (1, g) + (1,) * (len(gshape) - 2)
    red = tuple(range(2, len(gshape)))
    e = float(eps)

    def gnorm(x: NativeVariable, gm: NativeVariable, b: NativeVariable) -> Any:
        y = _scaled(_call("Reshape", x, shape=gshape), red, e, gm, b, bshape)
        return _call("Reshape", y, shape=data.shape)

    r, rec = _record([data, gamma, beta], gnorm)
    y = _result(r, rec, data)
    if not output_mean_var:
        return y
    return [y, *_norm_stats(data, gshape, red, (data.shape[0], g), e)]


#: mxnet's pad mode -> gradhub's ``Pad`` mode
_PAD_MODES = {"constant": "constant", "edge": "repeat", "reflect": "reflect"}


def pad(
    data: NDArray,
    mode: str = "constant",
    pad_width: Any = (),
    constant_value: float = 0.0,
    out: Any = None,
    name: Any = None,
    **kwargs: Any,
) -> NDArray:
    """mxnet's ``pad`` (``Pad``) of a 4-D or 5-D array: ``pad_width`` gives ``(before, after)``
    for each axis, ``(0, 0, 0, 0, ...)`` on the first two (as mxnet, only the spatial axes are
    padded). ``mode``: ``"constant"`` (``constant_value``), ``"edge"`` (the edge value repeated)
    or ``"reflect"`` (mirrored without repeating the edge; each width must be smaller than its
    axis, as mxnet). The gradient of each copied element goes back to its source.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> x = mx.nd.array([[[[1.0, 2.0, 3.0]]]])
        >>> mx.nd.pad(x, mode="reflect", pad_width=(0, 0, 0, 0, 0, 0, 2, 1)).asnumpy()
        array([[[[3., 2., 1., 2., 3., 2.]]]], dtype=float32)
    """
    _check_nd("pad", data=data)
    _check_out("pad", out)
    if mode not in _PAD_MODES:
        raise MXNetError(
            f"mx.nd.pad: Invalid Input: '{mode}', valid values are: "
            "{'constant', 'edge', 'reflect'}"
        )
    if data.ndim not in (4, 5):
        raise MXNetError(
            f"mx.nd.pad: Current implementation only supports 4-D or 5-D input (data of shape "
            f"{data.shape})"
        )
    width = tuple(int(w) for w in pad_width)
    if len(width) != 2 * data.ndim:
        raise MXNetError(
            f"mx.nd.pad: Input shape vs padding spec mismatch (pad_width={pad_width!r} for data "
            f"of shape {data.shape}: two values per axis)"
        )
    if any(width[:4]):
        raise MXNetError(
            "mx.nd.pad: Current implementation expects padding on the first two axes to be zero "
            f"(pad_width={pad_width!r})"
        )
    if min(width) < 0:
        raise MXNetError(f"mx.nd.pad: pad_width={pad_width!r} must not be negative")
    if mode == "reflect" and any(
        w >= n for i, n in enumerate(data.shape) for w in width[2 * i : 2 * i + 2]
    ):
        raise MXNetError(
            "mx.nd.pad: Current implementation of reflection padding only supports padding sizes "
            f"smaller than the input size (pad_width={pad_width!r}, data of shape {data.shape})"
        )
    attrs = {
        "pad_width": width[4:],
        "mode": _PAD_MODES[mode],
        "constant_value": float(constant_value),
    }
    r, rec = _record([data], lambda x: _call("Pad", x, **attrs))
    return _result(r, rec, data)


Pad = pad
