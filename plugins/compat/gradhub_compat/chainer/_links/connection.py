"""chainer 7.8.1's ``chainer/links/connection`` links not in :mod:`gradhub_compat.chainer.links`
(re-exported there): the other convolutions (``Deconvolution2D``, ``DilatedConvolution2D``,
``DepthwiseConvolution2D``, ``ConvolutionND``, ``Convolution1D``, ``Convolution3D``,
``DeconvolutionND``, ``Deconvolution1D``, ``Deconvolution3D``), ``Bias``, ``Scale``, ``Highway``
and ``Bilinear``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import Variable, as_array
from .. import functions as F
from .. import initializers as _init
from .._functions._common import _deconv_outsize
from ..link import Chain, Link, Parameter
from ._common import (
    _check_groups,
    _conv2d_args,
    _defer_in_channels,
    _init_conv_params,
    _input_of,
    _pair,
    _shape_W_b,
    _unshaped_W_b,
)

__all__ = [
    "Bias",
    "Bilinear",
    "Convolution1D",
    "Convolution3D",
    "ConvolutionND",
    "Deconvolution1D",
    "Deconvolution2D",
    "Deconvolution3D",
    "DeconvolutionND",
    "DepthwiseConvolution2D",
    "DilatedConvolution2D",
    "Highway",
    "Scale",
]


def _as_tuple(x: Any, n: int) -> tuple[int, ...]:
    """chainer's ``conv_nd.as_tuple``."""
    if hasattr(x, "__getitem__"):
        t = tuple(x)
        if len(t) != n:
            raise ValueError(f"the length of {x!r} must be {n}")
        return t
    return (x,) * n


class Deconvolution2D(Link):
    """``Deconvolution2D(in_channels, out_channels, ksize=None, stride=1, pad=0, nobias=False,
    outsize=None, initialW=None, initial_bias=None, *, dilate=1, groups=1)``: the transposed
    convolution ``F.deconvolution_2d(x, W, b, stride, pad, outsize, dilate=..., groups=...)``
    with ``W`` of shape (in_channels, out_channels // groups, kh, kw) (LeCunNormal, its fan-in
    ``out_channels // groups * kh * kw``) and ``b`` (out_channels,) (zeros).
    ``Deconvolution2D(out_channels, ksize)`` (or ``in_channels=None``) defers W's shape to the
    first call; an ``outsize`` entry None is the default size of that axis."""

    W: Parameter
    b: Parameter | None

    def __init__(
        self,
        in_channels: int | None,
        out_channels: int,
        ksize: Any = None,
        stride: Any = 1,
        pad: Any = 0,
        nobias: bool = False,
        outsize: Any = None,
        initialW: Any = None,
        initial_bias: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__()
        if "deterministic" in kwargs:
            raise ValueError(
                "deterministic argument is not supported anymore. Use "
                "chainer.using_config('cudnn_deterministic', value) context where value is "
                "either `True` or `False`."
            )
        in_channels, out_channels, ksize, dilate, groups = _conv2d_args(
            "Deconvolution2D", in_channels, out_channels, ksize, kwargs
        )
        self.ksize = ksize
        self.stride = _pair(stride)
        self.pad = _pair(pad)
        self.dilate = _pair(dilate)
        self.outsize = (None, None) if outsize is None else outsize
        self.out_channels = out_channels
        self.groups = int(groups)
        if isinstance(initial_bias, np.ndarray) and initial_bias.shape != (out_channels,):
            raise ValueError(
                f"chainer L.Deconvolution2D: initial_bias must have shape ({out_channels},), "
                f"got {initial_bias.shape}"
            )
        _init_conv_params(self, initialW, in_channels, nobias, initial_bias, out_channels)

    def _initialize_params(self, in_channels: int) -> None:
        kh, kw = _pair(self.ksize)
        _check_groups(in_channels, self.out_channels, self.groups)
        self.W.initialize((in_channels, int(self.out_channels / self.groups), kh, kw))

    def forward(self, x: Any) -> Variable:
        """``F.deconvolution_2d(x, W, b, stride, pad, outsize, dilate=..., groups=...)``."""
        x = _input_of(self, x)
        outsize = None
        if any(o is not None for o in self.outsize):
            ws = self.W.shape
            outsize = tuple(
                _deconv_outsize(
                    x.shape[2 + i], ws[2 + i], self.stride[i], self.pad[i], d=self.dilate[i]
                )
                if o is None
                else int(o)
                for i, o in enumerate(self.outsize)
            )
        return F.deconvolution_2d(
            x,
            self.W,
            self.b,
            self.stride,
            self.pad,
            outsize,
            dilate=self.dilate,
            groups=self.groups,
        )


class DilatedConvolution2D(Link):
    """``DilatedConvolution2D(in_channels, out_channels, ksize=None, stride=1, pad=0,
    dilate=1, nobias=False, initialW=None, initial_bias=None)``:
    ``F.dilated_convolution_2d(x, W, b, stride, pad, dilate)`` with ``W`` (out_channels,
    in_channels, kh, kw) (LeCunNormal) and ``b`` (zeros); ``DilatedConvolution2D(out_channels,
    ksize)`` defers the input channels to the first call."""

    W: Parameter
    b: Parameter | None

    def __init__(
        self,
        in_channels: int | None,
        out_channels: int,
        ksize: Any = None,
        stride: Any = 1,
        pad: Any = 0,
        dilate: Any = 1,
        nobias: bool = False,
        initialW: Any = None,
        initial_bias: Any = None,
    ) -> None:
        super().__init__()
        in_channels, out_channels, ksize = _defer_in_channels(in_channels, out_channels, ksize)
        self.ksize = ksize
        self.stride = _pair(stride)
        self.pad = _pair(pad)
        self.dilate = _pair(dilate)
        self.out_channels = out_channels
        _init_conv_params(self, initialW, in_channels, nobias, initial_bias, out_channels)

    def _initialize_params(self, in_channels: int) -> None:
        kh, kw = _pair(self.ksize)
        self.W.initialize((self.out_channels, in_channels, kh, kw))

    def forward(self, x: Any) -> Variable:
        """``F.dilated_convolution_2d(x, W, b, stride, pad, dilate)``."""
        x = _input_of(self, x)
        return F.dilated_convolution_2d(x, self.W, self.b, self.stride, self.pad, self.dilate)


class DepthwiseConvolution2D(Link):
    """``DepthwiseConvolution2D(in_channels, channel_multiplier, ksize, stride=1, pad=0,
    nobias=False, initialW=None, initial_bias=None)``: ``F.depthwise_convolution_2d(x, W, b,
    stride, pad)`` with ``W`` (channel_multiplier, in_channels, kh, kw), by default
    ``HeNormal(1 / sqrt(2))`` (chainer's), and ``b`` (channel_multiplier * in_channels,)
    (zeros); ``in_channels=None`` defers both shapes to the first call."""

    W: Parameter
    b: Parameter | None

    def __init__(
        self,
        in_channels: int | None,
        channel_multiplier: int,
        ksize: Any,
        stride: Any = 1,
        pad: Any = 0,
        nobias: bool = False,
        initialW: Any = None,
        initial_bias: Any = None,
    ) -> None:
        super().__init__()
        self.ksize = ksize
        self.stride = _pair(stride)
        self.pad = _pair(pad)
        self.channel_multiplier = channel_multiplier
        self.nobias = nobias
        if initialW is None:
            initialW = _init.HeNormal(1.0 / np.sqrt(2))
        _unshaped_W_b(self, initialW, nobias, initial_bias)
        if in_channels is not None:
            self._initialize_params(in_channels)

    def _initialize_params(self, in_channels: int) -> None:
        kh, kw = _pair(self.ksize)
        W_shape = (self.channel_multiplier, in_channels, kh, kw)
        _shape_W_b(self, W_shape, self.channel_multiplier * in_channels)

    def forward(self, x: Any) -> Variable:
        """``F.depthwise_convolution_2d(x, W, b, stride, pad)``."""
        x = _input_of(self, x)
        return F.depthwise_convolution_2d(x, self.W, self.b, self.stride, self.pad)


class ConvolutionND(Link):
    """``ConvolutionND(ndim, in_channels, out_channels, ksize=None, stride=1, pad=0,
    nobias=False, initialW=None, initial_bias=None, cover_all=False, dilate=1, groups=1)``:
    ``F.convolution_nd`` with ``W`` (out_channels, in_channels // groups, k_1, ..., k_ndim)
    (LeCunNormal) and ``b`` (zeros); ``ConvolutionND(ndim, out_channels, ksize)`` defers the
    input channels to the first call. :class:`Convolution1D` and :class:`Convolution3D` fix
    ``ndim``.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.links as L
        >>> conv = L.Convolution3D(2, 4, 3, pad=1)
        >>> conv(np.ones((1, 2, 5, 5, 5), np.float32)).shape, conv.W.shape
        ((1, 4, 5, 5, 5), (4, 2, 3, 3, 3))
    """

    W: Parameter
    b: Parameter | None

    def __init__(
        self,
        ndim: int,
        in_channels: int | None,
        out_channels: int,
        ksize: Any = None,
        stride: Any = 1,
        pad: Any = 0,
        nobias: bool = False,
        initialW: Any = None,
        initial_bias: Any = None,
        cover_all: bool = False,
        dilate: Any = 1,
        groups: int = 1,
    ) -> None:
        super().__init__()
        in_channels, out_channels, ksize = _defer_in_channels(in_channels, out_channels, ksize)
        self.out_channels = out_channels
        self.ksize = _as_tuple(ksize, ndim)
        self.stride = stride
        self.pad = pad
        self.cover_all = cover_all
        self.dilate = _as_tuple(dilate, ndim)
        self.groups = int(groups)
        _init_conv_params(self, initialW, in_channels, nobias, initial_bias, out_channels)

    def _initialize_params(self, in_channels: int) -> None:
        _check_groups(in_channels, self.out_channels, self.groups)
        self.W.initialize((self.out_channels, int(in_channels / self.groups), *self.ksize))

    @classmethod
    def from_params(
        cls,
        W: Any,
        b: Any = None,
        stride: Any = 1,
        pad: Any = 0,
        nobias: bool = False,
        *,
        cover_all: bool = False,
        dilate: Any = 1,
        groups: int = 1,
    ) -> ConvolutionND:
        """A ConvolutionND whose W (out, in // groups, *ksize) and b are copies of the given
        arrays or Variables (``ndim`` is ``W.ndim - 2``)."""
        out_channels, in_per_group, *ksize = W.shape
        if b is not None and out_channels != b.size:
            raise ValueError("`out_channels` does not match the size of `b`")
        return ConvolutionND(
            len(ksize),
            in_per_group * groups,
            out_channels,
            tuple(ksize),
            stride,
            pad,
            nobias,
            initialW=as_array(W),
            initial_bias=as_array(b),
            cover_all=cover_all,
            dilate=dilate,
            groups=groups,
        )

    def forward(self, x: Any) -> Variable:
        """``F.convolution_nd(x, W, b, stride, pad, cover_all=..., dilate=..., groups=...)``."""
        x = _input_of(self, x)
        return F.convolution_nd(
            x,
            self.W,
            self.b,
            self.stride,
            self.pad,
            cover_all=self.cover_all,
            dilate=self.dilate,
            groups=self.groups,
        )


class Convolution1D(ConvolutionND):
    """``Convolution1D(in_channels, out_channels, ksize, stride=1, pad=0, nobias=False,
    initialW=None, initial_bias=None, cover_all=False, dilate=1, groups=1)``:
    :class:`ConvolutionND` with ``ndim=1``."""

    def __init__(
        self,
        in_channels: int | None,
        out_channels: int,
        ksize: Any,
        stride: Any = 1,
        pad: Any = 0,
        nobias: bool = False,
        initialW: Any = None,
        initial_bias: Any = None,
        cover_all: bool = False,
        dilate: Any = 1,
        groups: int = 1,
    ) -> None:
        super().__init__(
            1,
            in_channels,
            out_channels,
            ksize,
            stride,
            pad,
            nobias,
            initialW,
            initial_bias,
            cover_all,
            dilate,
            groups,
        )


class Convolution3D(ConvolutionND):
    """``Convolution3D(in_channels, out_channels, ksize, stride=1, pad=0, nobias=False,
    initialW=None, initial_bias=None, cover_all=False, dilate=1, groups=1)``:
    :class:`ConvolutionND` with ``ndim=3``."""

    def __init__(
        self,
        in_channels: int | None,
        out_channels: int,
        ksize: Any,
        stride: Any = 1,
        pad: Any = 0,
        nobias: bool = False,
        initialW: Any = None,
        initial_bias: Any = None,
        cover_all: bool = False,
        dilate: Any = 1,
        groups: int = 1,
    ) -> None:
        super().__init__(
            3,
            in_channels,
            out_channels,
            ksize,
            stride,
            pad,
            nobias,
            initialW,
            initial_bias,
            cover_all,
            dilate,
            groups,
        )


class DeconvolutionND(Link):
    """``DeconvolutionND(ndim, in_channels, out_channels, ksize=None, stride=1, pad=0,
    nobias=False, outsize=None, initialW=None, initial_bias=None, dilate=1, groups=1)``:
    ``F.deconvolution_nd`` with ``W`` (in_channels, out_channels // groups, k_1, ..., k_ndim)
    (LeCunNormal) and ``b`` (out_channels,) (zeros); ``DeconvolutionND(ndim, out_channels,
    ksize)`` defers the input channels to the first call. :class:`Deconvolution1D` and
    :class:`Deconvolution3D` fix ``ndim``."""

    W: Parameter
    b: Parameter | None

    def __init__(
        self,
        ndim: int,
        in_channels: int | None,
        out_channels: int,
        ksize: Any = None,
        stride: Any = 1,
        pad: Any = 0,
        nobias: bool = False,
        outsize: Any = None,
        initialW: Any = None,
        initial_bias: Any = None,
        dilate: Any = 1,
        groups: int = 1,
    ) -> None:
        super().__init__()
        in_channels, out_channels, ksize = _defer_in_channels(in_channels, out_channels, ksize)
        self.out_channels = out_channels
        self.ksize = _as_tuple(ksize, ndim)
        self.stride = stride
        self.pad = pad
        self.outsize = outsize
        self.dilate = _as_tuple(dilate, ndim)
        self.groups = int(groups)
        _init_conv_params(self, initialW, in_channels, nobias, initial_bias, out_channels)

    def _initialize_params(self, in_channels: int) -> None:
        _check_groups(in_channels, self.out_channels, self.groups)
        self.W.initialize((in_channels, int(self.out_channels / self.groups), *self.ksize))

    def forward(self, x: Any) -> Variable:
        """``F.deconvolution_nd(x, W, b, stride, pad, outsize, dilate, groups)``."""
        x = _input_of(self, x)
        return F.deconvolution_nd(
            x,
            self.W,
            b=self.b,
            stride=self.stride,
            pad=self.pad,
            outsize=self.outsize,
            dilate=self.dilate,
            groups=self.groups,
        )


class Deconvolution1D(DeconvolutionND):
    """``Deconvolution1D(in_channels, out_channels, ksize, stride=1, pad=0, nobias=False,
    outsize=None, initialW=None, initial_bias=None, dilate=1, groups=1)``:
    :class:`DeconvolutionND` with ``ndim=1``."""

    def __init__(
        self,
        in_channels: int | None,
        out_channels: int,
        ksize: Any,
        stride: Any = 1,
        pad: Any = 0,
        nobias: bool = False,
        outsize: Any = None,
        initialW: Any = None,
        initial_bias: Any = None,
        dilate: Any = 1,
        groups: int = 1,
    ) -> None:
        super().__init__(
            1,
            in_channels,
            out_channels,
            ksize,
            stride,
            pad,
            nobias,
            outsize,
            initialW,
            initial_bias,
            dilate,
            groups,
        )


class Deconvolution3D(DeconvolutionND):
    """``Deconvolution3D(in_channels, out_channels, ksize, stride=1, pad=0, nobias=False,
    outsize=None, initialW=None, initial_bias=None, dilate=1, groups=1)``:
    :class:`DeconvolutionND` with ``ndim=3``."""

    def __init__(
        self,
        in_channels: int | None,
        out_channels: int,
        ksize: Any,
        stride: Any = 1,
        pad: Any = 0,
        nobias: bool = False,
        outsize: Any = None,
        initialW: Any = None,
        initial_bias: Any = None,
        dilate: Any = 1,
        groups: int = 1,
    ) -> None:
        super().__init__(
            3,
            in_channels,
            out_channels,
            ksize,
            stride,
            pad,
            nobias,
            outsize,
            initialW,
            initial_bias,
            dilate,
            groups,
        )


class Bias(Link):
    """``Bias(axis=1, shape=None)``: ``F.bias(x, b, axis)`` with the parameter ``b`` (zeros of
    ``shape``); without a shape, ``link(x, y)`` adds the second argument instead."""

    def __init__(self, axis: int = 1, shape: Any = None) -> None:
        super().__init__()
        if shape is not None:
            with self.init_scope():
                self.b = Parameter(0, shape)
        self.axis = axis

    def forward(self, *xs: Any) -> Variable:
        """``F.bias(x, b, axis)`` (``F.bias(x, y, axis)`` for a link without ``b``)."""
        if hasattr(self, "b"):
            if len(xs) != 1:
                raise TypeError(f"chainer L.Bias with a parameter takes 1 input, got {len(xs)}")
            return F.bias(xs[0], self.b, self.axis)
        if len(xs) != 2:
            raise TypeError(f"chainer L.Bias without a parameter takes 2 inputs, got {len(xs)}")
        return F.bias(xs[0], xs[1], self.axis)


class Scale(Chain):
    """``Scale(axis=1, W_shape=None, bias_term=False, bias_shape=None)``: ``F.scale(x, W,
    axis)`` with the parameter ``W`` (ones of ``W_shape``), or ``F.scale(x, y, axis)`` of a
    second input without ``W_shape``; ``bias_term`` adds a child :class:`Bias` (``bias``, of
    ``W_shape`` or, without it, ``bias_shape``, which is then required)."""

    def __init__(
        self, axis: int = 1, W_shape: Any = None, bias_term: bool = False, bias_shape: Any = None
    ) -> None:
        super().__init__()
        self.axis = axis
        with self.init_scope():
            if W_shape is not None:
                self.W = Parameter(1, W_shape)
                if bias_term:
                    self.bias = Bias(axis, W_shape)
            elif bias_term:
                if bias_shape is None:
                    raise ValueError(
                        "bias_shape should be given if W is not learnt parameter and "
                        "bias_term is True."
                    )
                self.bias = Bias(axis, bias_shape)

    def forward(self, *xs: Any) -> Variable:
        """``F.scale(x, W, axis)`` (or of the second input), then the bias when there is one."""
        if hasattr(self, "W"):
            if len(xs) != 1:
                raise TypeError(f"chainer L.Scale with a parameter takes 1 input, got {len(xs)}")
            z = F.scale(xs[0], self.W, self.axis)
        else:
            if len(xs) != 2:
                raise TypeError(
                    f"chainer L.Scale without a parameter takes 2 inputs, got {len(xs)}"
                )
            z = F.scale(xs[0], xs[1], self.axis)
        if hasattr(self, "bias"):
            return self.bias(z)  # type: ignore[no-any-return]
        return z


class Highway(Chain):
    """``Highway(in_out_size, nobias=False, activate=F.relu, init_Wh=None, init_Wt=None,
    init_bh=None, init_bt=-1)``: ``y = activate(plain(x)) * t + x * (1 - t)`` with the gate
    ``t = sigmoid(transform(x))``; ``plain`` and ``transform`` are ``Linear(in_out_size,
    in_out_size)`` children (``transform``'s bias starts at ``init_bt = -1``)."""

    def __init__(
        self,
        in_out_size: int,
        nobias: bool = False,
        activate: Callable[[Any], Any] = F.relu,
        init_Wh: Any = None,
        init_Wt: Any = None,
        init_bh: Any = None,
        init_bt: Any = -1,
    ) -> None:
        super().__init__()
        from ..links import Linear

        self.activate = activate
        with self.init_scope():
            self.plain = Linear(
                in_out_size, in_out_size, nobias=nobias, initialW=init_Wh, initial_bias=init_bh
            )
            self.transform = Linear(
                in_out_size, in_out_size, nobias=nobias, initialW=init_Wt, initial_bias=init_bt
            )

    def forward(self, x: Any) -> Variable:
        """``activate(plain(x)) * t + x * (1 - t)``, ``t = sigmoid(transform(x))``."""
        out_plain = self.activate(self.plain(x))
        out_transform = F.sigmoid(self.transform(x))
        return out_plain * out_transform + x * (1 - out_transform)  # type: ignore[no-any-return]


class Bilinear(Link):
    """``Bilinear(left_size, right_size, out_size, nobias=False, initialW=None,
    initial_bias=None)``: ``F.bilinear(e1, e2, W, V1, V2, b)`` with ``W`` (left_size,
    right_size, out_size), ``V1`` (left_size, out_size), ``V2`` (right_size, out_size) (all
    LeCunNormal, drawn in that order) and ``b`` (out_size,) (zeros); ``initial_bias`` is None
    or the tuple ``(initialV1, initialV2, initialb)``; ``nobias`` leaves out V1, V2 and b.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.links as L
        >>> bl = L.Bilinear(2, 3, 4, initialW=1.0, initial_bias=(0.0, 0.0, 0.5))
        >>> bl(np.ones((1, 2), np.float32), np.ones((1, 3), np.float32))
        variable([[6.5, 6.5, 6.5, 6.5]])
    """

    def __init__(
        self,
        left_size: int,
        right_size: int,
        out_size: int,
        nobias: bool = False,
        initialW: Any = None,
        initial_bias: Any = None,
    ) -> None:
        super().__init__()
        self.in_sizes = (left_size, right_size)
        self.nobias = nobias
        shape = (left_size, right_size, out_size)

        def check(a: Any, s: tuple[int, ...], what: str) -> None:
            if isinstance(a, np.ndarray) and a.shape != s:
                raise ValueError(f"chainer L.Bilinear: {what} must have shape {s}, got {a.shape}")

        check(initialW, shape, "initialW")
        with self.init_scope():
            self.W = Parameter(_init._get_initializer(initialW), shape)
            if not nobias:
                v1_shape, v2_shape = (left_size, out_size), (right_size, out_size)
                if isinstance(initial_bias, tuple):
                    iv1, iv2, ib = initial_bias
                    check(iv1, v1_shape, "initialV1")
                    check(iv2, v2_shape, "initialV2")
                    check(ib, (out_size,), "initialb")
                    iv1, iv2, ib = (_init._get_initializer(a) for a in (iv1, iv2, ib))
                elif initial_bias is None:
                    iv1, iv2, ib = _init._get_initializer(None), _init._get_initializer(None), 0
                else:
                    raise ValueError("initial_bias must be tuple or None")
                self.V1 = Parameter(iv1, v1_shape)
                self.V2 = Parameter(iv2, v2_shape)
                self.b = Parameter(ib, (out_size,))

    def forward(self, e1: Any, e2: Any) -> Variable:
        """``F.bilinear(e1, e2, W)`` (with ``V1, V2, b`` unless ``nobias``)."""
        if self.nobias:
            return F.bilinear(e1, e2, self.W)
        return F.bilinear(e1, e2, self.W, self.V1, self.V2, self.b)

    def zero_grads(self) -> None:
        """``zerograds()`` (chainer's deprecated alias)."""
        self.zerograds()
