"""mxnet Gluon's recurrent layers (``mx.gluon.rnn``), as mxnet 1.9.1: the cells
(:class:`RNNCell`, :class:`LSTMCell`, :class:`GRUCell`, :class:`SequentialRNNCell`,
:class:`HybridSequentialRNNCell`, :class:`BidirectionalCell`, :class:`DropoutCell`,
:class:`ResidualCell`, :class:`ZoneoutCell`) and the fused layers (:class:`RNN`,
:class:`LSTM`, :class:`GRU`) (docs/migration-mxnet.md, section Gluon data and recurrent
layers).

Example::

    >>> import gradhub_compat.mxnet as mx
    >>> from gradhub_compat.mxnet.gluon import rnn
    >>> layer = rnn.GRU(3, layout="NTC")
    >>> layer.initialize()
    >>> layer(mx.nd.ones((2, 5, 4))).shape
    (2, 5, 3)
"""

from __future__ import annotations

from . import rnn_cell, rnn_layer
from .rnn_cell import (
    BidirectionalCell,
    DropoutCell,
    GRUCell,
    HybridRecurrentCell,
    HybridSequentialRNNCell,
    LSTMCell,
    ModifierCell,
    RecurrentCell,
    ResidualCell,
    RNNCell,
    SequentialRNNCell,
    ZoneoutCell,
)
from .rnn_layer import GRU, LSTM, RNN

__all__ = [
    "GRU",
    "LSTM",
    "RNN",
    "BidirectionalCell",
    "DropoutCell",
    "GRUCell",
    "HybridRecurrentCell",
    "HybridSequentialRNNCell",
    "LSTMCell",
    "ModifierCell",
    "RNNCell",
    "RecurrentCell",
    "ResidualCell",
    "SequentialRNNCell",
    "ZoneoutCell",
    "rnn_cell",
    "rnn_layer",
]
