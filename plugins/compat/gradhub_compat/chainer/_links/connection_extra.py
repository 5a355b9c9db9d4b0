"""chainer 7.8.1's ``chainer/links/connection`` links ``LocalConvolution2D``,
``MLPConvolution2D`` and ``DeformableConvolution2D`` (re-exported by
:mod:`gradhub_compat.chainer.links`), with chainer's parameters, initializers (drawn in
chainer's order from numpy's global generator) and deferred shapes.

Example::

    >>> import numpy as np
    >>> import gradhub_compat.chainer.links as L
    >>> mlp = L.MLPConvolution2D(1, (2, 1), 1, conv_init=1.0)
    >>> mlp(np.ones((1, 1, 1, 1), np.float32))
    variable([[[[2.]]]])
"""

from __future__ import annotations

import itertools
from typing import Any

from .. import Variable
from .. import functions as F
from .. import initializers as _init
from ..link import Chain, ChainList, Link, Parameter
from ._common import _input_of, _pair, _reject_kwargs, _shape_W_b, _unshaped_W_b

__all__ = ["DeformableConvolution2D", "LocalConvolution2D", "MLPConvolution2D"]


class LocalConvolution2D(Link):
    """``LocalConvolution2D(in_channels, out_channels, in_size=None, ksize=None, stride=1,
    nobias=False, initialW=None, initial_bias=None)``: the locally connected layer
    ``F.local_convolution_2d(x, W, b, stride)``, unshared weights ``W`` of shape
    (out_channels, out_h, out_w, in_channels, kh, kw) (LeCunNormal; chainer's fan-in
    ``out_h * out_w * in_channels * kh * kw``) and ``b`` (out_channels, out_h, out_w)
    (zeros). As chainer 7.8.1, ``out_h = in_h - kh + 1`` whatever the stride (so a stride
    above 1 gives a ``W`` that the function refuses), the shapes are made at the first call
    unless both ``in_channels`` and ``in_size`` are given, and other keyword arguments are
    ignored.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.links as L
        >>> link = L.LocalConvolution2D(1, 1, 2, 2, initialW=1.0)
        >>> link.W.shape, link(np.ones((1, 1, 2, 2), np.float32))
        ((1, 1, 1, 1, 2, 2), variable([[[[4.]]]]))
    """

    W: Parameter
    b: Parameter | None

    def __init__(
        self,
        in_channels: int | None,
        out_channels: int,
        in_size: Any = None,
        ksize: Any = None,
        stride: Any = 1,
        nobias: bool = False,
        initialW: Any = None,
        initial_bias: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__()
        self.ksize = ksize
        self.stride = _pair(stride)
        self.nobias = nobias
        self.out_channels = out_channels
        _unshaped_W_b(self, initialW, nobias, initial_bias)
        if in_channels is not None and in_size is not None:
            self._initialize_params(in_channels, _pair(in_size))

    def _initialize_params(self, in_channels: int, in_size: Any) -> None:
        kh, kw = _pair(self.ksize)
        ih, iw = _pair(in_size)
        oh, ow = ih - kh + 1, iw - kw + 1  # chainer's _conv_output_length (no stride)
        _shape_W_b(
            self, (self.out_channels, oh, ow, in_channels, kh, kw), (self.out_channels, oh, ow)
        )

    def forward(self, x: Any) -> Variable:
        """``F.local_convolution_2d(x, W, b, stride)``."""
        if self.W.array is None:
            self._initialize_params(x.shape[1], x.shape[2:])
        return F.local_convolution_2d(x, self.W, self.b, self.stride)


_WSCALE_MSG = (
    "wscale is not supported anymore. Use conv_init and bias_init argument to change the scale "
    "of initial parameters."
)


class MLPConvolution2D(ChainList):
    """``MLPConvolution2D(in_channels, out_channels, ksize=None, stride=1, pad=0,
    activation=F.relu, *, conv_init=None, bias_init=None)``: the "network in network"
    layer, a chain list of ``Convolution2D(in_channels, out_channels[0], ksize, stride, pad)``
    then ``Convolution2D(out_channels[i - 1], out_channels[i], 1)`` for each further entry of
    the sequence ``out_channels`` (children ``/0``, ``/1``, ...; each with ``conv_init`` and
    ``bias_init``); ``activation`` follows every convolution but the last.
    ``MLPConvolution2D(out_channels, ksize)`` defers the input channels. A positional or
    keyword ``wscale`` (chainer v1) raises chainer's ``TypeError``.
    """

    def __init__(
        self,
        in_channels: Any,
        out_channels: Any,
        ksize: Any = None,
        stride: Any = 1,
        pad: Any = 0,
        activation: Any = None,
        *args: Any,
        **kwargs: Any,
    ) -> None:
        if args:
            raise TypeError(_WSCALE_MSG)
        if "wscale" in kwargs:
            raise ValueError(_WSCALE_MSG)
        conv_init = kwargs.pop("conv_init", None)
        bias_init = kwargs.pop("bias_init", None)
        _reject_kwargs("MLPConvolution2D", kwargs)
        if activation is None:
            activation = F.relu
        if ksize is None:
            out_channels, ksize, in_channels = in_channels, out_channels, None
        if not len(out_channels) > 0:
            raise ValueError("chainer L.MLPConvolution2D: out_channels must not be empty")
        from ..links import Convolution2D

        convs = [
            Convolution2D(
                in_channels,
                out_channels[0],
                ksize,
                stride,
                pad,
                initialW=conv_init,
                initial_bias=bias_init,
            )
        ]
        for n_in, n_out in itertools.pairwise(out_channels):
            convs.append(Convolution2D(n_in, n_out, 1, initialW=conv_init, initial_bias=bias_init))
        super().__init__(*convs)
        self.activation = activation

    def forward(self, x: Any) -> Variable:
        """The convolutions in order, ``activation`` after each but the last."""
        f = self.activation
        for link in self[:-1]:
            x = f(link(x))
        return self[-1](x)  # type: ignore[no-any-return]


class DeformableConvolution2DSampler(Link):
    """chainer's ``DeformableConvolution2DSampler`` (the ``deform_conv`` child of
    :class:`DeformableConvolution2D`): ``W`` (out_channels, in_channels, kh, kw), zeros
    unless ``initialW``, ``b`` (out_channels,) zeros; ``forward(x, offset)`` is
    ``F.deformable_convolution_2d_sampler(x, offset, W, b, stride, pad)``."""

    W: Parameter
    b: Parameter | None

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
    ) -> None:
        super().__init__()
        self.ksize = ksize
        self.stride = _pair(stride)
        self.pad = _pair(pad)
        self.out_channels = out_channels
        self.initialW = initialW
        if initialW is None:
            initialW = _init.Zero()
        _unshaped_W_b(self, initialW, nobias, initial_bias)
        if in_channels is not None:
            self._initialize_params(in_channels)

    def _initialize_params(self, in_channels: int) -> None:
        kh, kw = _pair(self.ksize)
        _shape_W_b(self, (self.out_channels, in_channels, kh, kw), self.out_channels)

    def forward(self, x: Any, offset: Any) -> Variable:
        """``F.deformable_convolution_2d_sampler(x, offset, W, b, stride, pad)``."""
        x = _input_of(self, x)
        return F.deformable_convolution_2d_sampler(  # type: ignore[no-any-return]
            x, offset, self.W, self.b, self.stride, self.pad
        )


class DeformableConvolution2D(Chain):
    """``DeformableConvolution2D(in_channels, out_channels, ksize, stride=1, pad=0,
    offset_nobias=False, offset_initialW=None, offset_initial_bias=None, deform_nobias=False,
    deform_initialW=None, deform_initial_bias=None)``: the children ``offset_conv =
    Convolution2D(in_channels, 2 kh kw, ksize, stride, pad)`` (LeCunNormal weights, zero bias
    unless given) and ``deform_conv``, the sampler with ``W`` (out_channels, in_channels, kh,
    kw) (zeros unless ``deform_initialW``) and ``b`` (zeros); ``y = deform_conv(x,
    offset_conv(x))``, i.e. ``F.deformable_convolution_2d_sampler(x, offset_conv(x), W, b,
    stride, pad)``. ``in_channels=None`` defers both children's input channels.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.links as L
        >>> link = L.DeformableConvolution2D(1, 2, 3, pad=1)
        >>> link(np.ones((1, 1, 4, 4), np.float32)).shape
        (1, 2, 4, 4)
    """

    def __init__(
        self,
        in_channels: int | None,
        out_channels: int,
        ksize: Any,
        stride: Any = 1,
        pad: Any = 0,
        offset_nobias: bool = False,
        offset_initialW: Any = None,
        offset_initial_bias: Any = None,
        deform_nobias: bool = False,
        deform_initialW: Any = None,
        deform_initial_bias: Any = None,
    ) -> None:
        super().__init__()
        from ..links import Convolution2D

        kh, kw = _pair(ksize)
        with self.init_scope():
            self.offset_conv = Convolution2D(
                in_channels,
                2 * kh * kw,
                ksize,
                stride,
                pad,
                offset_nobias,
                offset_initialW,
                offset_initial_bias,
            )
            self.deform_conv = DeformableConvolution2DSampler(
                in_channels,
                out_channels,
                ksize,
                stride,
                pad,
                deform_nobias,
                deform_initialW,
                deform_initial_bias,
            )

    def forward(self, x: Any) -> Variable:
        """``deform_conv(x, offset_conv(x))``."""
        offset = self.offset_conv(x)
        return self.deform_conv(x, offset)  # type: ignore[no-any-return]
