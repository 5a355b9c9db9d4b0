"""chainer 7.8.1's ``chainer/links/normalization`` links not in :mod:`gradhub_compat.chainer.links`
(re-exported there): ``LayerNormalization`` and ``GroupNormalization``."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import Variable
from .. import functions as F
from .. import initializers as _init
from ..link import Link, Parameter

__all__ = ["GroupNormalization", "LayerNormalization"]


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
