"""chainer 7.8.1's links beyond the core of :mod:`gradhub_compat.chainer.links` (which
re-exports them), one module for each of chainer's ``chainer/links/`` categories:
:mod:`.connection` (the other convolutions, ``Bias``, ``Scale``, ``Highway``, ``Bilinear``),
:mod:`.normalization` (``LayerNormalization``, ``GroupNormalization``), :mod:`.activation`
(``PReLU``, ``Maxout``), :mod:`.loss` (``BinaryHierarchicalSoftmax``, ``NegativeSampling``) and
:mod:`.rnn` (the GRUs and the n-step RNNs); :mod:`._common` holds the helpers they share with
:mod:`gradhub_compat.chainer.links`.

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

from . import activation, connection, loss, normalization, rnn
from .activation import *  # noqa: F403
from .connection import *  # noqa: F403
from .loss import *  # noqa: F403
from .normalization import *  # noqa: F403
from .rnn import *  # noqa: F403

__all__: list[str] = []
__all__.extend(activation.__all__)
__all__.extend(connection.__all__)
__all__.extend(loss.__all__)
__all__.extend(normalization.__all__)
__all__.extend(rnn.__all__)

# the tree LSTMs, MGUs, peephole and zoneout LSTMs, and the Inception blocks
from . import inception, rnn_more  # noqa: E402
from .inception import *  # noqa: E402, F403
from .rnn_more import *  # noqa: E402, F403

__all__.extend(inception.__all__)
__all__.extend(rnn_more.__all__)

# the local, MLP and deformable convolutions, SimplifiedDropconnect, Swish, BlackOut and CRF1d
# (normalization_extra, which subclasses links.BatchNormalization, is imported by links.py)
from . import activation_extra, connection_extra, loss_extra  # noqa: E402
from .activation_extra import *  # noqa: E402, F403
from .connection_extra import *  # noqa: E402, F403
from .loss_extra import *  # noqa: E402, F403

__all__.extend(activation_extra.__all__)
__all__.extend(connection_extra.__all__)
__all__.extend(loss_extra.__all__)

# links.py, loaded first when a module of this package is imported on its own (normalization_extra
# extends its BatchNormalization, and links.py imports normalization_extra at its end)
from .. import links as _links  # noqa: E402, F401
