"""chainer 7.8.1's ``chainer/links/activation`` links ``SimplifiedDropconnect`` and ``Swish``
(re-exported by :mod:`gradhub_compat.chainer.links`).

Example::

    >>> import numpy as np
    >>> import gradhub_compat.chainer.links as L
    >>> L.Swish(None)(np.zeros((1, 2), np.float32))
    variable([[0., 0.]])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import Variable
from .. import functions as F
from .. import initializers as _init
from ..link import Link, Parameter
from ._common import _init_conv_params

__all__ = ["SimplifiedDropconnect", "Swish"]


class SimplifiedDropconnect(Link):
    """``SimplifiedDropconnect(in_size, out_size, ratio=0.5, nobias=False, initialW=None,
    initial_bias=None)``: a linear layer with DropConnect on its weights,
    ``F.simplified_dropconnect(x, W, b, ratio, train, mask, use_batchwise_mask)``; ``W``
    (out_size, in_size) drawn from ``HeNormal(1 / sqrt(2))`` unless ``initialW``, ``b``
    (out_size,) zeros. ``in_size=None`` takes ``x.size // len(x)`` at the first call.

    ``forward(x, train=True, mask=None, use_batchwise_mask=True)``: as chainer, ``train``
    is the argument (not ``chainer.config.train``; ``False`` drops nothing) and the mask
    (N, out, in), or (out, in) with ``use_batchwise_mask=False``, is drawn from numpy's
    global generator unless given; the first ``mask`` given becomes a persistent value of
    the link (``mask``, saved by ``save_npz``), as chainer's ``add_persistent``.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.links as L
        >>> link = L.SimplifiedDropconnect(2, 1, initialW=1.0)
        >>> link(np.ones((1, 2), np.float32), train=False)
        variable([[2.]])
    """

    W: Parameter
    b: Parameter | None

    def __init__(
        self,
        in_size: int | None,
        out_size: int,
        ratio: float = 0.5,
        nobias: bool = False,
        initialW: Any = None,
        initial_bias: Any = None,
    ) -> None:
        super().__init__()
        self.out_size = out_size
        self.ratio = ratio
        if initialW is None:
            initialW = _init.HeNormal(1.0 / np.sqrt(2))
        _init_conv_params(self, initialW, in_size, nobias, initial_bias, out_size)

    def _initialize_params(self, in_size: int) -> None:
        self.W.initialize((self.out_size, in_size))

    def forward(
        self, x: Any, train: bool = True, mask: Any = None, use_batchwise_mask: bool = True
    ) -> Variable:
        """``F.simplified_dropconnect(x, W, b, ratio, train, mask, use_batchwise_mask)``."""
        if self.W.array is None:
            self._initialize_params(x.size // len(x))
        if mask is not None and "mask" not in self.__dict__:
            self.add_persistent("mask", mask)
        return F.simplified_dropconnect(
            x, self.W, self.b, self.ratio, train, mask, use_batchwise_mask
        )


class Swish(Link):
    """``Swish(beta_shape, beta_init=1.0)``: ``F.swish(x, beta) = x * sigmoid(beta * x)`` with
    the parameter ``beta`` of ``beta_shape`` (filled from ``beta_init``) broadcast over
    ``x.shape[1:1 + beta.ndim]``; ``beta_shape=None`` takes ``x.shape[1:]`` at the first call
    (``beta_init`` then a constant).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.links as L
        >>> L.Swish((2,), beta_init=0.0)(np.array([[2.0, -2.0]], np.float32))
        variable([[ 1., -1.]])
    """

    def __init__(self, beta_shape: Any, beta_init: Any = 1.0) -> None:
        super().__init__()
        with self.init_scope():
            if beta_shape is not None:
                self.beta = Parameter(beta_init, beta_shape)
            else:
                self.beta = Parameter(_init.Constant(beta_init))

    def forward(self, x: Any) -> Variable:
        """``F.swish(x, beta)``."""
        if self.beta.array is None:
            self.beta.initialize(x.shape[1:])
        return F.swish(x, self.beta)
