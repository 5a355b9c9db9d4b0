"""chainer 7.8.1's GoogLeNet blocks of ``chainer/links/connection`` (re-exported by
:mod:`gradhub_compat.chainer.links`): ``Inception`` (``inception.py``) and ``InceptionBN``
(``inceptionbn.py``), with chainer's arguments, children (made in chainer's order, so after
the same ``numpy.random.seed`` the initial weights are chainer's) and forward computation.

Example::

    >>> import numpy as np
    >>> import gradhub_compat.chainer.links as L
    >>> block = L.Inception(3, 2, 2, 3, 1, 2, 2)
    >>> block(np.ones((1, 3, 5, 5), np.float32)).shape    # 2 + 3 + 2 + 2 channels
    (1, 9, 5, 5)
"""

from __future__ import annotations

from typing import Any

from .. import Variable
from .. import functions as F
from ..link import Chain

__all__ = ["Inception", "InceptionBN"]


class Inception(Chain):
    """``Inception(in_channels, out1, proj3, out3, proj5, out5, proj_pool, conv_init=None,
    bias_init=None)``: GoogLeNet's Inception module (Szegedy et al., 2014).

    Children (``Convolution2D``, with ``initialW=conv_init`` and ``initial_bias=bias_init``):
    ``conv1`` (1x1 to out1), ``proj3`` (1x1 to proj3), ``conv3`` (3x3, pad 1, to out3),
    ``proj5`` (1x1 to proj5), ``conv5`` (5x5, pad 2, to out5) and ``projp`` (1x1 to
    proj_pool); ``in_channels=None`` defers the input channels to the first call. The output
    keeps the spatial size::

        y = relu(concat(conv1(x), conv3(relu(proj3(x))), conv5(relu(proj5(x))),
                        projp(max_pooling_2d(x, 3, stride=1, pad=1)), axis=1))

    with ``out1 + out3 + out5 + proj_pool`` channels.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.links as L
        >>> block = L.Inception(None, 1, 1, 1, 1, 1, 1)
        >>> block(np.ones((2, 3, 4, 4), np.float32)).shape
        (2, 4, 4, 4)
    """

    def __init__(
        self,
        in_channels: int | None,
        out1: int,
        proj3: int,
        out3: int,
        proj5: int,
        out5: int,
        proj_pool: int,
        conv_init: Any = None,
        bias_init: Any = None,
    ) -> None:
        from ..links import Convolution2D  # (links imports this module at its end)

        super().__init__()
        kw = {"initialW": conv_init, "initial_bias": bias_init}
        with self.init_scope():
            self.conv1 = Convolution2D(in_channels, out1, 1, **kw)
            self.proj3 = Convolution2D(in_channels, proj3, 1, **kw)
            self.conv3 = Convolution2D(proj3, out3, 3, pad=1, **kw)
            self.proj5 = Convolution2D(in_channels, proj5, 1, **kw)
            self.conv5 = Convolution2D(proj5, out5, 5, pad=2, **kw)
            self.projp = Convolution2D(in_channels, proj_pool, 1, **kw)

    def forward(self, x: Any) -> Variable:
        """The concatenated outputs of the four paths (N, out1 + out3 + out5 + proj_pool, H,
        W) for ``x`` of (N, C, H, W)."""
        out1 = self.conv1(x)
        out3 = self.conv3(F.relu(self.proj3(x)))
        out5 = self.conv5(F.relu(self.proj5(x)))
        pool = self.projp(F.max_pooling_2d(x, 3, stride=1, pad=1))
        return F.relu(F.concat((out1, out3, out5, pool), axis=1))


class InceptionBN(Chain):
    """``InceptionBN(in_channels, out1, proj3, out3, proj33, out33, pooltype, proj_pool=None,
    stride=1, conv_init=None, dtype=None)``: the Inception module with batch normalization
    (Ioffe and Szegedy, 2015).

    Children: the convolutions (no bias, ``initialW=conv_init``) ``proj3`` (1x1), ``conv3``
    (3x3, pad 1, ``stride``), ``proj33`` (1x1), ``conv33a`` (3x3, pad 1), ``conv33b`` (3x3,
    pad 1, ``stride``), with ``out1 > 0`` ``conv1`` (1x1) and with ``proj_pool`` ``poolp``
    (1x1), each followed by its ``BatchNormalization`` (``proj3n``, ``conv3n``, ``proj33n``,
    ``conv33an``, ``conv33bn``, ``conv1n``, ``poolpn``; ``dtype`` or ``chainer.get_dtype()``)
    and ``relu``. The pooling path is ``max_pooling_2d(x, 3, stride, pad=1, cover_all=False)``
    (``pooltype='max'``) or ``average_pooling_2d(x, 3, stride, pad=1)`` (``'avg'``), then
    ``relu(poolpn(poolp(.)))`` when ``proj_pool`` is given. The output concatenates, along the
    channels, the paths 1x1 (when ``out1 > 0``), 3x3, double 3x3 and pooling.

    ``pooltype`` other than ``'max'``/``'avg'`` raises NotImplementedError (as chainer);
    ``out1 > 0`` needs ``stride == 1`` and a ``proj_pool`` (ValueError; chainer asserts).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.links as L
        >>> block = L.InceptionBN(3, 2, 2, 2, 2, 2, "avg", proj_pool=2)
        >>> block(np.ones((2, 3, 4, 4), np.float32)).shape
        (2, 8, 4, 4)
    """

    def __init__(
        self,
        in_channels: int | None,
        out1: int,
        proj3: int,
        out3: int,
        proj33: int,
        out33: int,
        pooltype: str,
        proj_pool: int | None = None,
        stride: int = 1,
        conv_init: Any = None,
        dtype: Any = None,
    ) -> None:
        from ..backend import get_dtype
        from ..links import BatchNormalization, Convolution2D

        super().__init__()
        self.out1 = out1
        self.proj_pool = proj_pool
        self.stride = stride
        self.pooltype = pooltype
        if pooltype != "max" and pooltype != "avg":
            raise NotImplementedError(
                f"chainer L.InceptionBN: pooltype must be 'max' or 'avg', got {pooltype!r}"
            )
        if out1 > 0 and (stride != 1 or proj_pool is None):
            raise ValueError(
                "chainer L.InceptionBN: out1 > 0 needs stride == 1 and a proj_pool "
                f"(got stride={stride}, proj_pool={proj_pool})"
            )
        dtype = get_dtype(dtype)

        def conv(cin: Any, cout: int, ksize: int, **kw: Any) -> Any:
            return Convolution2D(cin, cout, ksize, nobias=True, initialW=conv_init, **kw)

        with self.init_scope():
            self.proj3 = conv(in_channels, proj3, 1)
            self.conv3 = conv(proj3, out3, 3, pad=1, stride=stride)
            self.proj33 = conv(in_channels, proj33, 1)
            self.conv33a = conv(proj33, out33, 3, pad=1)
            self.conv33b = conv(out33, out33, 3, pad=1, stride=stride)
            self.proj3n = BatchNormalization(proj3, dtype=dtype)
            self.conv3n = BatchNormalization(out3, dtype=dtype)
            self.proj33n = BatchNormalization(proj33, dtype=dtype)
            self.conv33an = BatchNormalization(out33, dtype=dtype)
            self.conv33bn = BatchNormalization(out33, dtype=dtype)
            if out1 > 0:
                self.conv1 = conv(in_channels, out1, 1, stride=stride)
                self.conv1n = BatchNormalization(out1, dtype=dtype)
            if proj_pool is not None:
                self.poolp = conv(in_channels, proj_pool, 1)
                self.poolpn = BatchNormalization(proj_pool, dtype=dtype)

    def forward(self, x: Any) -> Variable:
        """The concatenated outputs of the paths for ``x`` of (N, C, H, W)."""
        outs = []
        if self.out1 > 0:
            outs.append(F.relu(self.conv1n(self.conv1(x))))
        h3 = F.relu(self.proj3n(self.proj3(x)))
        outs.append(F.relu(self.conv3n(self.conv3(h3))))
        h33 = F.relu(self.proj33n(self.proj33(x)))
        h33 = F.relu(self.conv33an(self.conv33a(h33)))
        outs.append(F.relu(self.conv33bn(self.conv33b(h33))))
        if self.pooltype == "max":
            p = F.max_pooling_2d(x, 3, stride=self.stride, pad=1, cover_all=False)
        else:
            p = F.average_pooling_2d(x, 3, stride=self.stride, pad=1)
        if self.proj_pool is not None:
            p = F.relu(self.poolpn(self.poolp(p)))
        outs.append(p)
        return F.concat(outs, axis=1)
