"""More of chainer's links (re-exported by :mod:`gradhub_compat.chainer.links`): the other
convolutions, the normalizations and activations with parameters, and the recurrent links.

Each follows chainer 7.8.1's ``chainer/links/`` code: the constructor's arguments and
defaults, the parameter names and shapes, the initializers and the order in which they draw
from numpy's global generator (so after the same ``numpy.random.seed`` the initial values are
chainer's), and the forward computation, which calls the functions of
:mod:`gradhub_compat.chainer.functions`.

Example::

    >>> import numpy as np
    >>> import gradhub_compat.chainer.links as L
    >>> deconv = L.Deconvolution2D(1, 1, 2, stride=2, initialW=1.0)
    >>> deconv(np.ones((1, 1, 1, 1), np.float32))
    variable([[[[1., 1.],
                [1., 1.]]]])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from . import Variable, as_array, as_variable
from . import functions as F
from . import initializers as _init
from .link import Chain, ChainList, Link, Parameter

__all__ = [
    "GRU",
    "Bias",
    "Bilinear",
    "BinaryHierarchicalSoftmax",
    "Convolution1D",
    "Convolution3D",
    "ConvolutionND",
    "Deconvolution1D",
    "Deconvolution2D",
    "Deconvolution3D",
    "DeconvolutionND",
    "DepthwiseConvolution2D",
    "DilatedConvolution2D",
    "GroupNormalization",
    "Highway",
    "LayerNormalization",
    "Maxout",
    "NStepBiGRU",
    "NStepBiLSTM",
    "NStepBiRNNReLU",
    "NStepBiRNNTanh",
    "NStepGRU",
    "NStepLSTM",
    "NStepRNNReLU",
    "NStepRNNTanh",
    "NegativeSampling",
    "PReLU",
    "Scale",
    "StatefulGRU",
    "StatelessGRU",
]


def _pair(x: Any) -> Any:
    return x if hasattr(x, "__getitem__") else (x, x)


def _conv2d_args(
    name: str, in_channels: Any, out_channels: Any, ksize: Any, kwargs: dict[str, Any]
) -> tuple[Any, Any, Any, Any, Any]:
    """``(in_channels, out_channels, ksize, dilate, groups)`` of L.Convolution2D /
    L.Deconvolution2D: the keyword-only ``dilate`` and ``groups`` taken from ``kwargs`` (any
    other keyword a TypeError), and ``(out_channels, ksize)`` read as the deferred
    ``(out_channels, ksize)`` form when ``ksize`` is None."""
    dilate = kwargs.pop("dilate", 1)
    groups = kwargs.pop("groups", 1)
    if kwargs:
        raise TypeError(
            f"chainer L.{name} got unexpected keyword argument(s) "
            + ", ".join(repr(k) for k in kwargs)
        )
    return (*_defer_in_channels(in_channels, out_channels, ksize), dilate, groups)


def _defer_in_channels(in_channels: Any, out_channels: Any, ksize: Any) -> tuple[Any, Any, Any]:
    """``(in_channels, out_channels, ksize)``, read as ``(out_channels, ksize)`` with the
    input channels deferred to the first call when ``ksize`` is None."""
    if ksize is None:
        return None, in_channels, out_channels
    return in_channels, out_channels, ksize


def _init_conv_params(
    link: Any, initialW: Any, in_channels: Any, nobias: bool, initial_bias: Any, size: Any
) -> None:
    """The link's ``W`` (``initialW``, shaped now unless ``in_channels`` is None) and ``b``
    (``size``,) (zeros by default, None with ``nobias``) as its parameters."""
    with link.init_scope():
        link.W = Parameter(_init._get_initializer(initialW))
        if in_channels is not None:
            link._initialize_params(in_channels)
        link.b = _bias_param(nobias, initial_bias, size)


def _input_of(link: Any, x: Any) -> Variable:
    """``x`` as a Variable, after shaping the link's deferred ``W`` from ``x.shape[1]``."""
    x = as_variable(x)
    if link.W.array is None:
        link._initialize_params(x.shape[1])
    return x


def _as_tuple(x: Any, n: int) -> tuple[int, ...]:
    """chainer's ``conv_nd.as_tuple``."""
    if hasattr(x, "__getitem__"):
        t = tuple(x)
        if len(t) != n:
            raise ValueError(f"the length of {x!r} must be {n}")
        return t
    return (x,) * n


def _bias_param(nobias: bool, initial_bias: Any, size: Any) -> Parameter | None:
    if nobias:
        return None
    return Parameter(_init._get_initializer(0 if initial_bias is None else initial_bias), size)


def _check_groups(in_channels: int, out_channels: int, groups: int) -> None:
    if out_channels % groups != 0:
        raise ValueError("the number of output channels must be divisible by the number of groups")
    if in_channels % groups != 0:
        raise ValueError("the number of input channels must be divisible by the number of groups")


# -- convolutions ----------------------------------------------------------------------------


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
                F._deconv_outsize(
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
        with self.init_scope():
            self.W = Parameter(_init._get_initializer(initialW))
            if nobias:
                self.b = None
            else:
                if initial_bias is None:
                    initial_bias = _init.Constant(0)
                self.b = Parameter(_init._get_initializer(initial_bias))
        if in_channels is not None:
            self._initialize_params(in_channels)

    def _initialize_params(self, in_channels: int) -> None:
        kh, kw = _pair(self.ksize)
        self.W.initialize((self.channel_multiplier, in_channels, kh, kw))
        if self.b is not None:
            self.b.initialize(self.channel_multiplier * in_channels)

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


# -- normalizations, activations and small layers ------------------------------------------


class LayerNormalization(Link):
    """``LayerNormalization(size=None, eps=1e-6, initial_gamma=None, initial_beta=None)``:
    ``F.layer_normalization(x, gamma, beta, eps)`` of x (N, size), ``gamma`` (ones) and
    ``beta`` (zeros) of shape (size,); ``size=None`` takes ``prod(x.shape[1:])`` at the first
    call (x must still be 2-d, as chainer's function).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.links as L
        >>> L.LayerNormalization(eps=0.0)(np.array([[1.0, 3.0]], np.float32))
        variable([[-1.,  1.]])
    """

    def __init__(
        self,
        size: int | None = None,
        eps: float = 1e-6,
        initial_gamma: Any = None,
        initial_beta: Any = None,
    ) -> None:
        super().__init__()
        with self.init_scope():
            self.gamma = Parameter(1 if initial_gamma is None else initial_gamma)
            self.beta = Parameter(0 if initial_beta is None else initial_beta)
        self.eps = eps
        if size is not None:
            self._initialize_params(size)

    def _initialize_params(self, size: int) -> None:
        self.gamma.initialize(size)
        self.beta.initialize(size)

    def forward(self, x: Any) -> Variable:
        """``F.layer_normalization(x, gamma, beta, eps)``."""
        if self.gamma.array is None:
            self._initialize_params(int(np.prod(x.shape[1:])))
        return F.layer_normalization(x, self.gamma, self.beta, self.eps)


class GroupNormalization(Link):
    """``GroupNormalization(groups, size=None, eps=1e-5, initial_gamma=None,
    initial_beta=None)``: ``F.group_normalization(x, groups, gamma, beta, eps)`` of x (N, C,
    ...), ``gamma`` (ones) and ``beta`` (zeros) float32 of shape (C,); ``size=None`` takes
    ``C = x.shape[1]`` at the first call."""

    def __init__(
        self,
        groups: int,
        size: int | None = None,
        eps: float = 1e-5,
        initial_gamma: Any = None,
        initial_beta: Any = None,
    ) -> None:
        super().__init__()
        self.groups = groups
        self.eps = eps
        gi = _init._get_initializer(1 if initial_gamma is None else initial_gamma)
        gi.dtype = np.float32
        bi = _init._get_initializer(0 if initial_beta is None else initial_beta)
        bi.dtype = np.float32
        with self.init_scope():
            self.gamma = Parameter(gi)
            self.beta = Parameter(bi)
        if size is not None:
            self._initialize_params(size)

    def _initialize_params(self, size: int) -> None:
        self.gamma.initialize(size)
        self.beta.initialize(size)

    def forward(self, x: Any) -> Variable:
        """``F.group_normalization(x, groups, gamma, beta, eps)``."""
        if self.gamma.array is None:
            if x.ndim < 2:
                raise ValueError(
                    "Input dimension must be at least 2, including batch size dimension "
                    "(first dimension)."
                )
            self._initialize_params(x.shape[1])
        return F.group_normalization(x, self.groups, self.gamma, self.beta, self.eps)


class PReLU(Link):
    """``PReLU(shape=(), init=0.25)``: ``F.prelu(x, W)``, ``x`` where positive and ``W x``
    elsewhere, with the slope ``W`` of ``shape`` (filled with ``init``) broadcast over
    ``x.shape[1:1 + W.ndim]``."""

    def __init__(self, shape: Any = (), init: Any = 0.25) -> None:
        super().__init__()
        with self.init_scope():
            self.W = Parameter(init, shape)

    def forward(self, x: Any) -> Variable:
        """``F.prelu(x, W)``."""
        return F.prelu(x, self.W)


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


class Maxout(Chain):
    """``Maxout(in_size, out_size, pool_size, initialW=None, initial_bias=0)``: a child
    ``linear = Linear(in_size, out_size * pool_size)`` then ``F.maxout(y, pool_size)``. An
    array ``initialW`` has shape (out_size, pool_size, in_size) and ``initial_bias``
    (out_size, pool_size) (reshaped for the Linear, as chainer); ``initial_bias=None`` means
    no bias; a plain callable initializer sees the weight as (out_size, pool_size, in_size)."""

    def __init__(
        self,
        in_size: int,
        out_size: int,
        pool_size: int,
        initialW: Any = None,
        initial_bias: Any = 0,
    ) -> None:
        super().__init__()
        linear_out_size = out_size * pool_size
        if initialW is None or np.isscalar(initialW) or isinstance(initialW, _init.Initializer):
            pass
        elif hasattr(initialW, "ndim"):
            if initialW.ndim != 3:
                raise ValueError("initialW.ndim should be 3")
            initialW = initialW.reshape(linear_out_size, in_size)
        elif callable(initialW):
            w_orig = initialW

            def initialW(array: Any) -> None:
                w_orig(array.reshape(out_size, pool_size, in_size))

        if (
            initial_bias is None
            or np.isscalar(initial_bias)
            or isinstance(initial_bias, _init.Initializer)
        ):
            pass
        elif hasattr(initial_bias, "ndim"):
            if initial_bias.ndim != 2:
                raise ValueError("initial_bias.ndim should be 2")
            initial_bias = initial_bias.reshape(linear_out_size)
        elif callable(initial_bias):
            b_orig = initial_bias

            def initial_bias(array: Any) -> None:
                b_orig(array.reshape(out_size, pool_size))

        from .links import Linear

        with self.init_scope():
            self.linear = Linear(
                in_size,
                linear_out_size,
                nobias=initial_bias is None,
                initialW=initialW,
                initial_bias=initial_bias,
            )
        self.out_size = out_size
        self.pool_size = pool_size

    def forward(self, x: Any) -> Variable:
        """``F.maxout(linear(x), pool_size)``."""
        return F.maxout(self.linear(x), self.pool_size)


def _parse_tree(tree: Any) -> tuple[dict[Any, list[int]], dict[Any, list[float]], int]:
    """chainer's ``TreeParser``: the internal nodes numbered in pre-order; for each leaf, the
    path of nodes from the root and the codes (1 going left, -1 going right)."""
    paths: dict[Any, list[int]] = {}
    codes: dict[Any, list[float]] = {}
    path: list[int] = []
    code: list[float] = []
    next_id = 0
    stack: list[tuple[str, Any]] = [("node", tree)]
    while stack:  # (iterative: deep Huffman trees exceed Python's recursion limit)
        kind, node = stack.pop()
        if kind == "pop":
            path.pop()
            code.pop()
        elif kind == "right":
            code[-1] = -1.0
            stack.append(("node", node))
        elif isinstance(node, tuple):
            if len(node) != 2:
                raise ValueError("All internal nodes must have two child nodes")
            left, right = node
            path.append(next_id)
            next_id += 1
            code.append(1.0)
            stack += [("pop", None), ("right", right), ("node", left)]
        else:
            paths[node] = list(path)
            codes[node] = list(code)
    return paths, codes, next_id


class BinaryHierarchicalSoftmax(Link):
    """``BinaryHierarchicalSoftmax(in_size, tree, dtype=None)``: the hierarchical softmax loss
    over a binary tree of tuples (``((1, 2), 3)``; :meth:`create_huffman_tree` makes one from
    word counts), as chainer 7.8.1's ``links/loss/hierarchical_softmax.py``: ``W`` of shape
    (internal nodes, in_size) drawn from ``Uniform(1)``; ``loss = hsm(x, t)`` is
    ``sum_i sum_{(e, b) in path(t_i)} log(1 + exp(-b W[e] . x_i))`` (x (B, in_size) floating,
    t (B,) int32; chainer's ``InvalidType`` otherwise), a composition of gradhub functions
    (every order of gradient; chainer's is first order only).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.links as L
        >>> tree = L.BinaryHierarchicalSoftmax.create_huffman_tree({0: 8, 1: 5, 2: 6, 3: 4})
        >>> tree
        ((3, 1), (2, 0))
        >>> hsm = L.BinaryHierarchicalSoftmax(2, tree)
        >>> hsm.W.array[...] = 0
        >>> hsm(np.ones((1, 2), np.float32), np.array([0], np.int32))  # 2 log 2
        variable(1.3862944)
    """

    def __init__(self, in_size: int, tree: Any, dtype: Any = None) -> None:
        super().__init__()
        from .backend import get_dtype

        dt = get_dtype(dtype)
        paths, codes, size = _parse_tree(tree)
        n_vocab = max(paths.keys()) + 1
        self.paths = np.array([n for i in range(n_vocab) if i in paths for n in paths[i]], np.int32)
        self.codes = np.array([c for i in range(n_vocab) if i in codes for c in codes[i]], dt)
        begins = np.zeros(n_vocab + 1, np.int32)
        for i in range(n_vocab):
            begins[i + 1] = begins[i] + (len(paths[i]) if i in paths else 0)
        self.begins = begins
        self.parser_size = size
        with self.init_scope():
            self.W = Parameter(_init.Uniform(1), (size, in_size))

    @staticmethod
    def create_huffman_tree(word_counts: Any) -> Any:
        """chainer's Huffman tree of a dictionary word -> count: the two least frequent
        entries (ties broken by their order in the dictionary) are joined until one is left;
        ``{0: 8, 1: 5, 2: 6, 3: 4}`` gives ``((3, 1), (2, 0))``."""
        import heapq

        if not word_counts:
            raise ValueError("Empty vocabulary")
        q: list[tuple[Any, int, Any]] = []
        for uid, (w, c) in enumerate(word_counts.items()):
            heapq.heappush(q, (c, uid, w))
        while len(q) >= 2:
            count1, id1, word1 = heapq.heappop(q)
            count2, id2, word2 = heapq.heappop(q)
            heapq.heappush(q, (count1 + count2, min(id1, id2), (word1, word2)))
        return q[0][2]

    def forward(self, x: Any, t: Any) -> Variable:
        """The summed loss of the rows of x for the labels t."""
        from ._functions_more import _invalid

        ta = np.asarray(t.array if isinstance(t, Variable) else t)
        xs = tuple(x.shape) if hasattr(x, "shape") else np.shape(x)
        xdt = np.dtype(x.dtype if hasattr(x, "dtype") else np.asarray(x).dtype)
        ws = self.W.shape
        if (
            xdt.kind != "f"
            or len(xs) != 2
            or ta.dtype != np.int32
            or ta.ndim != 1
            or xs[0] != ta.shape[0]
            or self.W.dtype != xdt
            or ws[1] != xs[1]
        ):
            raise _invalid(
                "BinaryHierarchicalSoftmaxFunction",
                "x.dtype.kind == f, x.ndim == 2, t.dtype == int32, t.ndim == 1, "
                "x.shape[0] == t.shape[0], W.dtype == x.dtype, W.shape[1] == x.shape[1]",
                f"x {xs} {xdt}, t {ta.shape} {ta.dtype}, W {ws} {self.W.dtype}",
            )
        rows = np.concatenate(
            [np.full(self.begins[k + 1] - self.begins[k], i, np.int32) for i, k in enumerate(ta)]
            + [np.zeros(0, np.int32)]
        )
        sel = np.concatenate(
            [np.arange(self.begins[k], self.begins[k + 1]) for k in ta] + [np.zeros(0, np.intp)]
        )
        w = F.embed_id(self.paths[sel], self.W)  # (M, in_size)
        xr = F.embed_id(rows, x)  # the row of x of each path node
        wxy = F.sum(w * xr, axis=1) * self.codes[sel]
        return F.sum(F.softplus(-wxy))


class NegativeSampling(Link):
    """``NegativeSampling(in_size, counts, sample_size, power=0.75, dtype=None)``: the
    negative sampling loss with its weight ``W`` of shape (len(counts), in_size), zeros at
    first, as chainer; the negatives are drawn by ``sampler``, chainer's
    :class:`~gradhub_compat.chainer.utils.WalkerAlias` over ``counts ** power`` (numpy's
    global generator, so a seeded run draws chainer's samples). ``forward(x, t,
    reduce="sum", *, return_samples=False)`` is ``F.negative_sampling(x, t, W,
    sampler.sample, sample_size, reduce)``.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.links as L
        >>> ns = L.NegativeSampling(2, [1, 2, 3], 2)
        >>> ns(np.zeros((1, 2), np.float32), np.array([0], np.int32))
        variable(2.0794415)
    """

    def __init__(
        self,
        in_size: int,
        counts: Any,
        sample_size: int,
        power: float = 0.75,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        from .backend import get_dtype
        from .utils import WalkerAlias

        dt = get_dtype(dtype)
        vocab_size = len(counts)
        self.sample_size = sample_size
        p = np.array(counts, dt)
        np.power(p, dt.type(power), p)
        self.sampler = WalkerAlias(p)
        with self.init_scope():
            self.W = Parameter(0, (vocab_size, in_size))

    def forward(self, x: Any, t: Any, reduce: str = "sum", **kwargs: Any) -> Any:
        """The loss (``return_samples=True``: and the samples (B, sample_size + 1), column 0
        the labels)."""
        return_samples = kwargs.pop("return_samples", False)
        if kwargs:
            names = ", ".join(repr(k) for k in kwargs)
            raise TypeError(f"forward() got unexpected keyword argument(s) {names}")
        return F.negative_sampling(
            x,
            t,
            self.W,
            self.sampler.sample,
            self.sample_size,
            reduce=reduce,
            return_samples=return_samples,
        )


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
        from .links import Linear

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


# -- recurrent links --------------------------------------------------------------------------


class _GRUBase(Chain):
    """chainer's ``GRUBase``: the children ``W_r``, ``U_r``, ``W_z``, ``U_z``, ``W``, ``U``
    (made in that order, each drawing its weight), ``W_*`` of shape (out, in) with ``init``,
    ``U_*`` (out, out) with ``inner_init``, all with ``bias_init``."""

    def __init__(
        self,
        in_size: int,
        out_size: int,
        init: Any = None,
        inner_init: Any = None,
        bias_init: Any = None,
    ) -> None:
        super().__init__()
        from .links import Linear

        with self.init_scope():
            self.W_r = Linear(in_size, out_size, initialW=init, initial_bias=bias_init)
            self.U_r = Linear(out_size, out_size, initialW=inner_init, initial_bias=bias_init)
            self.W_z = Linear(in_size, out_size, initialW=init, initial_bias=bias_init)
            self.U_z = Linear(out_size, out_size, initialW=inner_init, initial_bias=bias_init)
            self.W = Linear(in_size, out_size, initialW=init, initial_bias=bias_init)
            self.U = Linear(out_size, out_size, initialW=inner_init, initial_bias=bias_init)


class StatelessGRU(_GRUBase):
    """``StatelessGRU(in_size, out_size, init=None, inner_init=None, bias_init=None)``:
    ``h_new = link(h, x)`` with ``r = sigmoid(W_r x + U_r h)``, ``z = sigmoid(W_z x + U_z
    h)``, ``h_bar = tanh(W x + U (r h))``, ``h_new = z h_bar + (1 - z) h`` (chainer's
    ``linear_interpolate(z, h_bar, h)``).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.links as L
        >>> gru = L.StatelessGRU(3, 2, init=0.0, inner_init=0.0)
        >>> gru(np.ones((1, 2), np.float32), np.ones((1, 3), np.float32))  # z = 1/2, h_bar = 0
        variable([[0.5, 0.5]])
    """

    def forward(self, h: Any, x: Any) -> Variable:
        """One step from the state ``h`` (B, out) with the input ``x`` (B, in)."""
        r = F.sigmoid(self.W_r(x) + self.U_r(h))
        z = F.sigmoid(self.W_z(x) + self.U_z(h))
        h_bar = F.tanh(self.W(x) + self.U(r * h))
        return z * h_bar + (1 - z) * h  # type: ignore[no-any-return]


class StatefulGRU(_GRUBase):
    """``StatefulGRU(in_size, out_size, init=None, inner_init=None, bias_init=0)``: a GRU
    keeping its state ``h``: the first call after :meth:`reset_state` computes ``z h_bar`` with
    ``z = sigmoid(W_z x)``, ``h_bar = tanh(W x)``; later calls are :class:`StatelessGRU`'s step
    from the kept ``h``."""

    h: Any

    def __init__(
        self,
        in_size: int,
        out_size: int,
        init: Any = None,
        inner_init: Any = None,
        bias_init: Any = 0,
    ) -> None:
        super().__init__(in_size, out_size, init, inner_init, bias_init)
        self.state_size = out_size
        self.reset_state()

    def to_device(self, device: Any) -> Link:
        """Move the parameters and the state ``h`` to ``device``; returns self."""
        super().to_device(device)
        if self.h is not None:
            self.h.to_device(self.device)
        return self

    def set_state(self, h: Any) -> None:
        """Set the state ``h`` (a chainer Variable, moved to the link's device)."""
        if not isinstance(h, Variable):
            raise TypeError(f"chainer L.{type(self).__name__}.set_state: h must be a Variable")
        h.to_device(self.device)
        self.h = h

    def reset_state(self) -> None:
        """Forget the state: ``h`` becomes None."""
        self.h = None

    def forward(self, x: Any) -> Variable:
        """Update the state with ``x`` (B, in) and return it."""
        if self.h is not None and self.h.device != self.device:
            self.h.to_device(self.device)
        z = self.W_z(x)
        h_bar = self.W(x)
        if self.h is not None:
            r = F.sigmoid(self.W_r(x) + self.U_r(self.h))
            z += self.U_z(self.h)
            h_bar += self.U(r * self.h)
        z = F.sigmoid(z)
        h_bar = F.tanh(h_bar)
        if self.h is not None:
            h_new = z * h_bar + (1 - z) * self.h
        else:
            h_new = z * h_bar
        self.h = h_new
        return self.h  # type: ignore[no-any-return]


class GRU(StatefulGRU):
    """``GRU(in_size, out_size, init=None, inner_init=None, bias_init=0)``: chainer's
    :class:`StatefulGRU` under its short name; called with one argument (two raise chainer's
    ``ValueError`` pointing to :class:`StatelessGRU`).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.links as L
        >>> gru = L.GRU(3, 2)
        >>> [gru(np.ones((4, 3), np.float32)).shape for _ in range(2)]
        [(4, 2), (4, 2)]
        >>> gru.h.shape
        (4, 2)
    """

    def forward(self, *args: Any) -> Variable:
        """``StatefulGRU.forward(x)``."""
        n_args = len(args)
        msg = f"Invalid argument. The length of GRU.forward must be 1. But {n_args} is given. "
        if n_args == 0 or n_args >= 3:
            raise ValueError(msg)
        if n_args == 2:
            raise ValueError(
                msg + "In Chainer v2, chainer.links.GRU is changed from stateless to stateful. "
                "One possibility is you assume GRU to be stateless. Use "
                "chainer.links.StatelessGRU instead."
            )
        return super().forward(args[0])


def _permutate_list(lst: list[Any], indices: Any, inv: bool) -> list[Any]:
    ret: list[Any] = [None] * len(lst)
    for i, ind in enumerate(indices):
        if inv:
            ret[ind] = lst[i]
        else:
            ret[i] = lst[ind]
    return ret


def _transpose_sequence(xs: list[Any]) -> list[Variable]:
    """chainer's ``F.transpose_sequence`` of sequences sorted by decreasing length: element t
    stacks the t-th rows of the sequences longer than t."""
    lengths = [x.shape[0] for x in xs]
    out = []
    for t in range(lengths[0] if lengths else 0):
        rows = [F.get_item(x, slice(t, t + 1)) for x, n in zip(xs, lengths, strict=True) if n > t]
        out.append(rows[0] if len(rows) == 1 else F.concat(rows, axis=0))
    return out


class _NStepRNNBase(ChainList):
    """chainer's ``NStepRNNBase``: one child Link per layer and direction holding ``w0``..,
    ``b0``.. (``n_weights`` of each; the first half of the weights reads the input, (out,
    in) in the first layer and (out, out * directions) above, the second half the state, (out,
    out)), drawn in the order w0, b0, w1, b1, ... (``initialW``, LeCunNormal by default;
    ``initial_bias``, 0)."""

    n_weights = 2
    use_bi_direction = False
    _fname = "n_step_rnn"

    def __init__(
        self,
        n_layers: int,
        in_size: int,
        out_size: int,
        dropout: float,
        *,
        initialW: Any = None,
        initial_bias: Any = None,
        **kwargs: Any,
    ) -> None:
        name = type(self).__name__
        for key, msg in (
            ("use_cudnn", "use_cudnn argument is not supported anymore. Use chainer.using_config"),
            ("use_bi_direction", "use_bi_direction is not supported anymore"),
            ("activation", "activation is not supported anymore"),
        ):
            if key in kwargs:
                raise ValueError(msg)
        if kwargs:
            raise TypeError(f"chainer L.{name} got unexpected keyword argument(s) {sorted(kwargs)}")
        direction = 2 if self.use_bi_direction else 1
        w_init = _init._get_initializer(initialW)
        b_init = _init._get_initializer(0 if initial_bias is None else initial_bias)
        weights = []
        for i in range(n_layers):
            for _ in range(direction):
                weight = Link()
                with weight.init_scope():
                    for j in range(self.n_weights):
                        if i == 0 and j < self.n_weights // 2:
                            w_in = in_size
                        elif i > 0 and j < self.n_weights // 2:
                            w_in = out_size * direction
                        else:
                            w_in = out_size
                        setattr(weight, f"w{j}", Parameter(w_init, (out_size, w_in)))
                        setattr(weight, f"b{j}", Parameter(b_init, out_size))
                weights.append(weight)
        super().__init__(*weights)
        self._set_ws_bs()
        self.n_layers = n_layers
        self.dropout = dropout
        self.out_size = out_size
        self.direction = direction

    def _set_ws_bs(self) -> None:
        self.ws = [[getattr(layer, f"w{i}") for i in range(self.n_weights)] for layer in self]
        self.bs = [[getattr(layer, f"b{i}") for i in range(self.n_weights)] for layer in self]

    def copy(self, mode: str = "share") -> _NStepRNNBase:
        """``ChainList.copy``, with ``ws`` and ``bs`` pointing to the copy's parameters."""
        ret: _NStepRNNBase = super().copy(mode)  # type: ignore[assignment]  # (a copy of self)
        ret._set_ws_bs()
        return ret

    def init_hx(self, xs: Any) -> Variable:
        """Zeros of shape (n_layers * directions, len(xs), out_size) in xs's dtype."""
        shape = (self.n_layers * self.direction, len(xs), self.out_size)
        return Variable(self.xp.zeros(shape, dtype=xs[0].dtype))

    def rnn(self, *args: Any) -> Any:
        raise NotImplementedError

    @property
    def n_cells(self) -> int:
        """The number of state arrays (2 for the LSTMs: h and c)."""
        return 1

    def forward(self, hx: Any, xs: Any, **kwargs: Any) -> tuple[Variable, list[Variable]]:
        """``hy, ys = link(hx, xs)``: xs a list of sequences (T_i, in_size) in any order,
        ``hx`` (n_layers * directions, len(xs), out_size) or None (zeros); ys the top layer's
        outputs (T_i, out_size * directions), hy the last states."""
        (hy,), ys = self._call([hx], xs, **kwargs)
        return hy, ys

    def _call(self, hs: list[Any], xs: Any, **kwargs: Any) -> tuple[list[Variable], list[Any]]:
        name = type(self).__name__
        if "train" in kwargs:
            raise ValueError("train argument is not supported anymore. Use chainer.using_config")
        if kwargs:
            raise TypeError(f"chainer L.{name} got unexpected keyword argument(s) {sorted(kwargs)}")
        if not isinstance(xs, (list, tuple)):
            raise TypeError(f"chainer L.{name}: xs must be a list or tuple of sequences")
        if not xs:
            raise ValueError(f"chainer L.{name}: xs holds no sequence")
        indices = np.argsort([-len(x) for x in xs], kind="stable").astype(np.int32)
        # chainer: numpy.argsort's default (quicksort); for ties the order of equal lengths
        # changes nothing in the results, which are permuted back
        xs = _permutate_list(list(xs), indices, inv=False)
        hxs = []
        for hx in hs:
            if hx is None:
                hx = self.init_hx(xs)
            else:
                hx = F.get_item(hx, (slice(None), indices))
            hxs.append(hx)
        trans_x = _transpose_sequence([as_variable(x) for x in xs])
        result = self.rnn(self.n_layers, self.dropout, *hxs, self.ws, self.bs, trans_x)
        inverse = np.argsort(indices)
        hys = [F.get_item(h, (slice(None), inverse)) for h in result[:-1]]
        ys = _transpose_sequence(list(result[-1]))
        return hys, _permutate_list(ys, indices, inv=True)


class NStepRNNTanh(_NStepRNNBase):
    """``NStepRNNTanh(n_layers, in_size, out_size, dropout, *, initialW=None,
    initial_bias=None)``: a stacked tanh RNN over a list of variable-length sequences
    (``F.n_step_rnn``; weights ``ws[layer] = [w0, w1]``, ``bs[layer] = [b0, b1]``)."""

    def rnn(self, *args: Any) -> Any:
        # (args are the 6 positional arguments before activation; mypy cannot count them)
        return F.n_step_rnn(*args, activation="tanh")  # type: ignore[misc]


class NStepRNNReLU(_NStepRNNBase):
    """:class:`NStepRNNTanh` with the ReLU activation."""

    def rnn(self, *args: Any) -> Any:
        # (args are the 6 positional arguments before activation; mypy cannot count them)
        return F.n_step_rnn(*args, activation="relu")  # type: ignore[misc]


class NStepBiRNNTanh(_NStepRNNBase):
    """The bidirectional :class:`NStepRNNTanh` (``F.n_step_birnn``; outputs of 2 out_size
    features)."""

    use_bi_direction = True

    def rnn(self, *args: Any) -> Any:
        # (args are the 6 positional arguments before activation; mypy cannot count them)
        return F.n_step_birnn(*args, activation="tanh")  # type: ignore[misc]


class NStepBiRNNReLU(_NStepRNNBase):
    """The bidirectional :class:`NStepRNNReLU`."""

    use_bi_direction = True

    def rnn(self, *args: Any) -> Any:
        # (args are the 6 positional arguments before activation; mypy cannot count them)
        return F.n_step_birnn(*args, activation="relu")  # type: ignore[misc]


class NStepGRU(_NStepRNNBase):
    """``NStepGRU(n_layers, in_size, out_size, dropout, *, initialW=None,
    initial_bias=None)``: a stacked GRU over a list of variable-length sequences
    (``F.n_step_gru``; six weights and biases per layer)."""

    n_weights = 6

    def rnn(self, *args: Any) -> Any:
        return F.n_step_gru(*args)


class NStepBiGRU(_NStepRNNBase):
    """The bidirectional :class:`NStepGRU` (``F.n_step_bigru``)."""

    n_weights = 6
    use_bi_direction = True

    def rnn(self, *args: Any) -> Any:
        return F.n_step_bigru(*args)


class _NStepLSTMBase(_NStepRNNBase):
    n_weights = 8

    @property
    def n_cells(self) -> int:
        """2: the states h and c."""
        return 2

    def forward(  # type: ignore[override]
        self, hx: Any, cx: Any, xs: Any, **kwargs: Any
    ) -> tuple[Variable, Variable, list[Variable]]:
        """``hy, cy, ys = link(hx, cx, xs)`` (``hx``, ``cx`` None for zeros)."""
        (hy, cy), ys = self._call([hx, cx], xs, **kwargs)
        return hy, cy, ys


class NStepLSTM(_NStepLSTMBase):
    """``NStepLSTM(n_layers, in_size, out_size, dropout, *, initialW=None,
    initial_bias=None)``: a stacked LSTM over a list of variable-length sequences
    (``F.n_step_lstm``; eight weights and biases per layer, chainer's layout).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.links as L
        >>> lstm = L.NStepLSTM(1, 3, 4, 0.0)
        >>> xs = [np.ones((2, 3), np.float32), np.ones((5, 3), np.float32)]
        >>> hy, cy, ys = lstm(None, None, xs)
        >>> hy.shape, [y.shape for y in ys]
        ((1, 2, 4), [(2, 4), (5, 4)])
    """

    def rnn(self, *args: Any) -> Any:
        return F.n_step_lstm(*args)


class NStepBiLSTM(_NStepLSTMBase):
    """The bidirectional :class:`NStepLSTM` (``F.n_step_bilstm``)."""

    use_bi_direction = True

    def rnn(self, *args: Any) -> Any:
        return F.n_step_bilstm(*args)
