"""mxnet's Gluon API (``mx.gluon``): :class:`Block`, :class:`HybridBlock`, :class:`Parameter`,
:class:`ParameterDict`, :class:`Constant` and the layers of :mod:`.nn`, as mxnet 1.9.1
(docs/migration-mxnet.md, section Gluon).

Example::

    >>> import gradhub_compat.mxnet as mx
    >>> from gradhub_compat.mxnet import gluon
    >>> net = gluon.nn.Dense(2, in_units=3, prefix="fc_")
    >>> net.initialize(mx.init.One())
    >>> net(mx.nd.ones((1, 3))).asnumpy()
    array([[3., 3.]], dtype=float32)
"""

from __future__ import annotations

from . import nn, parameter, utils
from .block import Block, HybridBlock, SymbolBlock
from .parameter import Constant, DeferredInitializationError, Parameter, ParameterDict

try:  # gluon.loss
    from . import loss  # noqa: F401
except ImportError:  # pragma: no cover - until the module exists
    pass
try:  # gluon.Trainer
    from .trainer import Trainer  # noqa: F401
except ImportError:  # pragma: no cover - until the module exists
    pass
from . import contrib, data, rnn

__all__ = [
    "Block",
    "Constant",
    "DeferredInitializationError",
    "HybridBlock",
    "Parameter",
    "ParameterDict",
    "SymbolBlock",
    "contrib",
    "data",
    "nn",
    "parameter",
    "rnn",
    "utils",
]
