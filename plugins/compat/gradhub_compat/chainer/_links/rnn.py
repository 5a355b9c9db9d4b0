"""chainer 7.8.1's ``chainer/links/rnn`` links not in :mod:`gradhub_compat.chainer.links` (re-
exported there): the GRUs (``StatelessGRU``, ``StatefulGRU``, ``GRU``) and the n-step RNNs
(``NStepRNNTanh``, ``NStepRNNReLU``, ``NStepBiRNNTanh``, ``NStepBiRNNReLU``, ``NStepGRU``,
``NStepBiGRU``, ``NStepLSTM``, ``NStepBiLSTM``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import Variable, as_variable
from .. import functions as F
from .. import initializers as _init
from ..link import Chain, ChainList, Link, Parameter
from ._common import _permutate_list

__all__ = [
    "GRU",
    "NStepBiGRU",
    "NStepBiLSTM",
    "NStepBiRNNReLU",
    "NStepBiRNNTanh",
    "NStepGRU",
    "NStepLSTM",
    "NStepRNNReLU",
    "NStepRNNTanh",
    "StatefulGRU",
    "StatelessGRU",
]


class _StatefulH(Link):
    """The state ``h`` of chainer's stateful one-state recurrent links (``StatefulGRU``,
    ``StatefulMGU``) and its handling."""

    h: Any

    def to_device(self, device: Any) -> Link:
        """Move the parameters and the state ``h`` to ``device``; returns self."""
        super().to_device(device)
        if self.h is not None:
            self.h.to_device(self.device)
        return self

    def set_state(self, h: Any) -> None:
        """Set the state ``h`` (a chainer Variable, moved to the link's device)."""
        if not isinstance(h, Variable):
            raise TypeError(
                f"chainer L.{type(self).__name__}.set_state: h must be a chainer Variable"
            )
        h.to_device(self.device)
        self.h = h

    def reset_state(self) -> None:
        """Forget the state: ``h`` becomes None."""
        self.h = None


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
        from ..links import Linear

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


class StatefulGRU(_StatefulH, _GRUBase):
    """``StatefulGRU(in_size, out_size, init=None, inner_init=None, bias_init=0)``: a GRU
    keeping its state ``h``: the first call after :meth:`reset_state` computes ``z h_bar`` with
    ``z = sigmoid(W_z x)``, ``h_bar = tanh(W x)``; later calls are :class:`StatelessGRU`'s step
    from the kept ``h``."""

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
