"""chainer 7.8.1's ``chainer/links/activation`` links not in :mod:`gradhub_compat.chainer.links`
(re-exported there): ``PReLU`` and ``Maxout``."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import Variable
from .. import functions as F
from .. import initializers as _init
from ..link import Chain, Link, Parameter

__all__ = ["Maxout", "PReLU"]


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

        from ..links import Linear

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
