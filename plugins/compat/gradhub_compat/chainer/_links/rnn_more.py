"""chainer 7.8.1's tree LSTMs and the other stateful recurrent links of ``chainer/links/rnn``
(re-exported by :mod:`gradhub_compat.chainer.links`): ``ChildSumTreeLSTM``, ``NaryTreeLSTM``
(``tree_lstm.py``), ``StatelessMGU``, ``StatefulMGU`` (``mgu.py``), ``StatefulPeepholeLSTM``
(``peephole.py``) and ``StatefulZoneoutLSTM`` (``zoneoutlstm.py``).

Each has chainer's constructor, child links (``Linear`` links made in chainer's order, so after
the same ``numpy.random.seed`` the initial weights are chainer's), state attributes and forward
computation, written with the functions of :mod:`gradhub_compat.chainer.functions` (so every
order of gradient is available).

Example::

    >>> import numpy as np
    >>> import gradhub_compat.chainer.links as L
    >>> mgu = L.StatefulMGU(3, 2)
    >>> [mgu(np.ones((4, 3), np.float32)).shape for _ in range(2)]
    [(4, 2), (4, 2)]
"""

from __future__ import annotations

from typing import Any

from .. import Variable
from .. import functions as F
from ..link import Chain, Link
from ._common import _reject_kwargs
from .rnn import _StatefulH

__all__ = [
    "ChildSumTreeLSTM",
    "MGUBase",
    "NaryTreeLSTM",
    "StatefulMGU",
    "StatefulPeepholeLSTM",
    "StatefulZoneoutLSTM",
    "StatelessMGU",
]


def _linear(in_size: Any, out_size: int, nobias: bool = False) -> Any:
    from ..links import Linear  # (links imports this module at its end)

    return Linear(in_size, out_size, nobias=nobias)


def _zero_input(link: Any, cs: tuple[Any, ...], hs: tuple[Any, ...]) -> Any:
    """The zeros (B, in_size) standing for a missing ``x``: B and the dtype of the first
    child cell or output given (ValueError when every argument is None, as chainer)."""
    given = [c for c in cs if c is not None] or [h for h in hs if h is not None]
    if not given:
        raise ValueError(f"chainer L.{type(link).__name__}: All inputs (cs, hs, x) are None.")
    base = given[0]
    return link.xp.zeros((base.shape[0], link.in_size), dtype=base.dtype)


def _pad_zero_nodes(link: Any, vs: tuple[Any, ...], shape: tuple[int, int], dtype: Any) -> Any:
    """``vs`` with each None replaced by zeros of ``shape`` (chainer's ``_pad_zero_nodes``)."""
    if any(v is None for v in vs):
        zero = link.xp.zeros(shape, dtype=dtype)
        return tuple(zero if v is None else v for v in vs)
    return vs


class ChildSumTreeLSTM(Chain):
    """``ChildSumTreeLSTM(in_size, out_size)``: the Child-Sum TreeLSTM unit (Tai et al., 2015),
    without state: ``c, h = link(c_1, ..., c_n, h_1, ..., h_n, x)`` for any number n of
    children (``link(x)`` for a leaf), independent of the children's order.

    Children: ``W_x = Linear(in_size, 4 out)`` (gates a, i, o and f, with bias),
    ``W_h_aio = Linear(out, 3 out, nobias=True)`` and ``W_h_f = Linear(out, out,
    nobias=True)``. With ``[a_x, i_x, o_x, f_x] = W_x x`` and ``s = sum_k h_k``::

        a, i, o = W_h_aio s + [a_x, i_x, o_x]
        f_k = W_h_f h_k + f_x
        c = tanh(a) sigmoid(i) + sum_k sigmoid(f_k) c_k,   h = sigmoid(o) tanh(c)

    (a leaf: ``c = sigmoid(i) tanh(a)``, ``h = sigmoid(o) tanh(c)``). A None child cell or
    output counts as zeros; ``x=None`` as zeros of (B, in_size).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.links as L
        >>> unit = L.ChildSumTreeLSTM(3, 2)
        >>> c1, h1 = unit(np.ones((1, 3), np.float32))          # a leaf
        >>> c, h = unit(c1, c1, h1, h1, np.ones((1, 3), np.float32))
        >>> c.shape, h.shape
        ((1, 2), (1, 2))
    """

    def __init__(self, in_size: int, out_size: int) -> None:
        super().__init__()
        with self.init_scope():
            self.W_x = _linear(in_size, 4 * out_size)
            self.W_h_aio = _linear(out_size, 3 * out_size, nobias=True)
            self.W_h_f = _linear(out_size, out_size, nobias=True)
        self.in_size = in_size
        self.state_size = out_size

    def forward(self, *cshsx: Any) -> tuple[Variable, Variable]:
        """``(c_new, h_new)`` from the children's cells, their outputs and the input."""
        if len(cshsx) % 2 != 1:
            raise ValueError(
                "chainer L.ChildSumTreeLSTM: the arguments must be the children's cells, "
                f"their outputs (as many) and x, an odd number; got {len(cshsx)}"
            )
        n = len(cshsx) // 2
        cs, hs, x = tuple(cshsx[:n]), tuple(cshsx[n:-1]), cshsx[-1]
        if x is None:
            x = _zero_input(self, cs, hs)
        aio_x, f_x = F.split_axis(self.W_x(x), [3 * self.state_size], axis=1)
        if not hs:
            a, i, o = F.split_axis(aio_x, 3, axis=1)
            c = F.sigmoid(i) * F.tanh(a)
            return c, F.sigmoid(o) * F.tanh(c)  # type: ignore[return-value]
        shape = (x.shape[0], self.state_size)
        hs = _pad_zero_nodes(self, hs, shape, x.dtype)
        cs = _pad_zero_nodes(self, cs, shape, x.dtype)
        aio_in = self.W_h_aio(sum(hs)) + aio_x
        f_h = F.concat(F.split_axis(self.W_h_f(F.concat(hs, axis=0)), n, axis=0), axis=1)
        f_in = f_h + F.concat([f_x] * n, axis=1)
        return F.tree_lstm(*cs, F.concat([aio_in, f_in], axis=1))  # type: ignore[return-value]


class NaryTreeLSTM(Chain):
    """``NaryTreeLSTM(in_size, out_size, n_ary=2)``: the N-ary TreeLSTM unit (Tai et al., 2015,
    in Bowman et al.'s variant), without state: ``c, h = link(c_1, ..., c_N, h_1, ..., h_N,
    x)`` with exactly ``N = n_ary`` children, in order.

    Children: ``W_x = Linear(in_size, (3 + N) out)`` (with bias) and ``W_h1`` ... ``W_hN``,
    each ``Linear(out, (3 + N) out, nobias=True)``. With ``z = W_x x + sum_k W_hk h_k`` (the
    blocks ``a, i, o, f_1 .. f_N``), ``c = tanh(a) sigmoid(i) + sum_k sigmoid(f_k) c_k`` and
    ``h = sigmoid(o) tanh(c)`` (``F.tree_lstm``). A None ``h_k`` adds nothing, a None ``c_k``
    counts as zeros and ``x=None`` as zeros of (B, in_size).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.links as L
        >>> unit = L.NaryTreeLSTM(3, 2, n_ary=2)
        >>> c, h = unit(None, None, None, None, np.ones((1, 3), np.float32))
        >>> sorted(name for name, _ in unit.namedparams())
        ['/W_h1/W', '/W_h2/W', '/W_x/W', '/W_x/b']
    """

    def __init__(self, in_size: int, out_size: int, n_ary: int = 2) -> None:
        if n_ary < 1:
            raise ValueError(f"chainer L.NaryTreeLSTM: n_ary must be at least 1, got {n_ary}")
        super().__init__()
        with self.init_scope():
            self.W_x = _linear(in_size, (3 + n_ary) * out_size)
            for i in range(1, n_ary + 1):
                setattr(self, f"W_h{i}", _linear(out_size, (3 + n_ary) * out_size, nobias=True))
        self.in_size = in_size
        self.state_size = out_size
        self.n_ary = n_ary

    def forward(self, *cshsx: Any) -> tuple[Variable, Variable]:
        """``(c_new, h_new)`` from the ``n_ary`` cells, the ``n_ary`` outputs and the input."""
        if len(cshsx) != self.n_ary * 2 + 1:
            raise ValueError(
                f"chainer L.NaryTreeLSTM: expected {self.n_ary * 2 + 1} arguments (n_ary cells, "
                f"n_ary outputs and x), got {len(cshsx)}"
            )
        cs, hs, x = tuple(cshsx[: self.n_ary]), tuple(cshsx[self.n_ary : -1]), cshsx[-1]
        if x is None:
            x = _zero_input(self, cs, hs)
        tree_lstm_in = self.W_x(x)
        for i, h in enumerate(hs, start=1):
            if h is not None:
                tree_lstm_in += getattr(self, f"W_h{i}")(h)
        cs = _pad_zero_nodes(self, cs, (x.shape[0], self.state_size), x.dtype)
        return F.tree_lstm(*cs, tree_lstm_in)  # type: ignore[return-value]


class MGUBase(Chain):
    """chainer's ``MGUBase(n_inputs, n_units)``: the children ``W_f`` and ``W_h``, each
    ``Linear(n_inputs + n_units, n_units)`` (with bias), and the minimal gated unit's step
    ``f = sigmoid(W_f [h, x])``, ``h_bar = tanh(W_h [f h, x])``, ``h_new = f h_bar + (1 - f)
    h`` (``[., .]``: concatenation along axis 1)."""

    def __init__(self, n_inputs: int, n_units: int) -> None:
        super().__init__()
        with self.init_scope():
            self.W_f = _linear(n_inputs + n_units, n_units)
            self.W_h = _linear(n_inputs + n_units, n_units)

    def _call_mgu(self, h: Any, x: Any) -> Variable:
        f = F.sigmoid(self.W_f(F.concat([h, x])))
        h_bar = F.tanh(self.W_h(F.concat([f * h, x])))
        return F.linear_interpolate(f, h_bar, h)


class StatelessMGU(MGUBase):
    """``StatelessMGU(n_inputs, n_units)``: the minimal gated unit (Zhou et al., 2016) without
    state, ``h_new = link(h, x)`` (see :class:`MGUBase` for the step).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.links as L
        >>> mgu = L.StatelessMGU(3, 2)
        >>> mgu(np.zeros((1, 2), np.float32), np.ones((1, 3), np.float32)).shape
        (1, 2)
    """

    def forward(self, h: Any, x: Any) -> Variable:
        """One step from the state ``h`` (B, n_units) with the input ``x`` (B, n_inputs)."""
        return self._call_mgu(h, x)


class StatefulMGU(_StatefulH, MGUBase):
    """``StatefulMGU(in_size, out_size)``: the minimal gated unit keeping its state ``h``; the
    first call after :meth:`reset_state` starts from zeros of ``chainer.get_dtype()``
    (float32). See :class:`MGUBase` for the step."""

    def __init__(self, in_size: int, out_size: int) -> None:
        super().__init__(in_size, out_size)
        self._state_size = out_size
        self.reset_state()

    def forward(self, x: Any) -> Variable:
        """Update the state with ``x`` (B, in_size) and return it."""
        if self.h is None:
            from ..backend import get_dtype

            h = Variable(self.xp.zeros((x.shape[0], self._state_size), dtype=get_dtype()))
        else:
            h = self.h
            if h.device != self.device:
                h.to_device(self.device)
        self.h = self._call_mgu(h, x)
        return self.h  # type: ignore[no-any-return]


class _StatefulLSTMState(Chain):
    """The state ``c``, ``h`` of chainer's stateful LSTM variants and its handling."""

    c: Any
    h: Any
    state_size: int

    def to_device(self, device: Any) -> Link:
        """Move the parameters and the state ``c``, ``h`` to ``device``; returns self."""
        super().to_device(device)
        self._state_to_device()
        return self

    def _state_to_device(self) -> None:
        for v in (self.c, self.h):
            if v is not None and v.device != self.device:
                v.to_device(self.device)

    def reset_state(self) -> None:
        """Forget the state: ``c`` and ``h`` become None."""
        self.c = self.h = None

    def _zeros(self, x: Any) -> Variable:
        return Variable(self.xp.zeros((x.shape[0], self.state_size), dtype=x.dtype))

    def _gates(self, lstm_in: Any) -> list[Any]:
        """``a, i, f, o`` of (B, n) each: the columns of ``lstm_in`` (B, 4 n) read as (B, n, 4),
        chainer's interleaved layout."""
        n = self.state_size
        gates = F.split_axis(F.reshape(lstm_in, (lstm_in.shape[0], n, 4)), 4, 2)
        return [F.reshape(g, (lstm_in.shape[0], n)) for g in gates]


class StatefulPeepholeLSTM(_StatefulLSTMState):
    """``StatefulPeepholeLSTM(in_size, out_size)``: the LSTM with peephole connections
    (Gers and Schmidhuber, 2000), keeping its state ``c``, ``h``.

    Children: ``upward = Linear(in_size, 4 out)``, ``lateral = Linear(out, 4 out,
    nobias=True)``, ``peep_i``, ``peep_f``, ``peep_o`` (each ``Linear(out, out,
    nobias=True)``). With ``a, i, f, o`` the interleaved gates of ``upward(x) + lateral(h)``
    (no lateral term at the first call; ``c`` starts at zeros)::

        c_new = tanh(a) sigmoid(i + peep_i(c)) + sigmoid(f + peep_f(c)) c
        h_new = sigmoid(o + peep_o(c_new)) tanh(c_new)

    As chainer's, it has :meth:`reset_state` but no ``set_state``.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.links as L
        >>> lstm = L.StatefulPeepholeLSTM(3, 2)
        >>> lstm(np.ones((4, 3), np.float32)).shape, lstm.c.shape
        ((4, 2), (4, 2))
    """

    def __init__(self, in_size: int, out_size: int) -> None:
        super().__init__()
        self.state_size = out_size
        self.reset_state()
        with self.init_scope():
            self.upward = _linear(in_size, 4 * out_size)
            self.lateral = _linear(out_size, 4 * out_size, nobias=True)
            self.peep_i = _linear(out_size, out_size, nobias=True)
            self.peep_f = _linear(out_size, out_size, nobias=True)
            self.peep_o = _linear(out_size, out_size, nobias=True)

    def forward(self, x: Any) -> Variable:
        """Update the state with ``x`` (B, in_size) and return the new ``h``."""
        self._state_to_device()
        lstm_in = self.upward(x)
        if self.h is not None:
            lstm_in += self.lateral(self.h)
        if self.c is None:
            self.c = self._zeros(x)
        a, i, f, o = self._gates(lstm_in)
        i = F.sigmoid(i + self.peep_i(self.c))
        f = F.sigmoid(f + self.peep_f(self.c))
        self.c = F.tanh(a) * i + f * self.c
        o = F.sigmoid(o + self.peep_o(self.c))
        self.h = o * F.tanh(self.c)
        return self.h  # type: ignore[no-any-return]


class StatefulZoneoutLSTM(_StatefulLSTMState):
    """``StatefulZoneoutLSTM(in_size, out_size, c_ratio=0.5, h_ratio=0.5)``: the LSTM with
    zoneout (Krueger et al., 2016) on its state ``c``, ``h``.

    Children: ``upward = Linear(in_size, 4 out)`` and ``lateral = Linear(out, 4 out,
    nobias=True)``. With ``a, i, f, o`` the interleaved gates of ``upward(x) + lateral(h)``
    (no lateral term at the first call; ``c`` and ``h`` start at zeros)::

        c_tmp = tanh(a) sigmoid(i) + sigmoid(f) c
        c_new = zoneout(c, c_tmp, c_ratio),  h_new = zoneout(h, sigmoid(o) tanh(c_tmp), h_ratio)

    ``F.zoneout`` keeps each element of the old state with probability ``ratio`` in training
    mode (masks drawn from numpy's global generator, ``c``'s first, as chainer) and is the
    identity on the new value with ``chainer.config.train`` False. The ``train`` argument of
    old chainer versions raises chainer's ValueError.

    Example::

        >>> import numpy as np
        >>> from gradhub_compat import chainer
        >>> import gradhub_compat.chainer.links as L
        >>> lstm = L.StatefulZoneoutLSTM(3, 2)
        >>> with chainer.using_config("train", False):
        ...     lstm(np.ones((4, 3), np.float32)).shape
        (4, 2)
    """

    def __init__(
        self,
        in_size: int,
        out_size: int,
        c_ratio: float = 0.5,
        h_ratio: float = 0.5,
        **kwargs: Any,
    ) -> None:
        if "train" in kwargs:
            raise ValueError("train argument is not supported anymore. Use chainer.using_config")
        _reject_kwargs("StatefulZoneoutLSTM", kwargs)
        super().__init__()
        self.state_size = out_size
        self.c_ratio = c_ratio
        self.h_ratio = h_ratio
        self.reset_state()
        with self.init_scope():
            self.upward = _linear(in_size, 4 * out_size)
            self.lateral = _linear(out_size, 4 * out_size, nobias=True)

    def set_state(self, c: Any, h: Any) -> None:
        """Set the state ``c`` and ``h`` (chainer Variables, moved to the link's device)."""
        if not isinstance(c, Variable) or not isinstance(h, Variable):
            raise TypeError(
                "chainer L.StatefulZoneoutLSTM.set_state: c and h must be chainer Variables"
            )
        c.to_device(self.device)
        h.to_device(self.device)
        self.c = c
        self.h = h

    def forward(self, x: Any) -> Variable:
        """Update the state with ``x`` (B, in_size) and return the new ``h``."""
        self._state_to_device()
        lstm_in = self.upward(x)
        if self.h is not None:
            lstm_in += self.lateral(self.h)
        else:
            self.h = self._zeros(x)
        if self.c is None:
            self.c = self._zeros(x)
        a, i, f, o = self._gates(lstm_in)
        c_tmp = F.tanh(a) * F.sigmoid(i) + F.sigmoid(f) * self.c
        self.c = F.zoneout(self.c, c_tmp, self.c_ratio)
        self.h = F.zoneout(self.h, F.sigmoid(o) * F.tanh(c_tmp), self.h_ratio)
        return self.h  # type: ignore[no-any-return]
