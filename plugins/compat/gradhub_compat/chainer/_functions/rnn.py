"""chainer 7.8.1's ``chainer/functions/rnn`` functions beyond the core of
:mod:`gradhub_compat.chainer.functions` (which re-exports them): the n-step RNNs
(``n_step_rnn``, ``n_step_birnn``, ``n_step_lstm``, ``n_step_bilstm``, ``n_step_gru``,
``n_step_bigru``) and ``tree_lstm``, compositions of the registered gradhub functions."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from .. import Variable
from .. import functions as F
from ..functions import (
    _dtype,
    _out,
    _shape,
    concat,
    dropout,
    get_item,
    linear,
    lstm,
    relu,
    reshape,
    sigmoid,
    split_axis,
    stack,
    tanh,
)
from ._common import _fdtype, _invalid, _kind

__all__ = [
    "n_step_bigru",
    "n_step_bilstm",
    "n_step_birnn",
    "n_step_gru",
    "n_step_lstm",
    "n_step_rnn",
    "tree_lstm",
]


def tree_lstm(*inputs: Any) -> tuple[Variable, Variable]:
    """The N-ary tree LSTM: ``inputs = (c_1, ..., c_n, x)``, the children's cells (B, H, ...)
    and x (B, (3 + n) H, ...) holding the gates in blocks ``a, i, o, f_1, ..., f_n``;
    ``c = tanh(a) sigmoid(i) + sum_k sigmoid(f_k) c_k``, ``h = sigmoid(o) tanh(c)``; returns
    ``(c, h)``. chainer's tanh form of the sigmoid; a composition of gradhub functions (every
    order of gradient; chainer's is first order only).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> c, h = F.tree_lstm(np.ones((1, 1), np.float32), np.zeros((1, 4), np.float32))
        >>> c
        variable([[0.5]])
    """
    if len(inputs) < 2:
        raise _invalid("TreeLSTM", "in_types.size() >= 2", f"{len(inputs)} < 2")
    cs, x = inputs[:-1], inputs[-1]
    n_ary = len(cs)
    xs = _shape(x)
    for k, c in enumerate(cs):
        s = _shape(c)
        if (
            _kind(c) != "f"
            or _dtype(x) != _dtype(c)
            or len(s) < 2
            or len(s) != len(xs)
            or xs[0] != s[0]
            or xs[1] != (3 + n_ary) * s[1]
            or xs[2:] != s[2:]
        ):
            raise _invalid(
                "TreeLSTM",
                f"c{k}.dtype.kind == f, x.dtype == c{k}.dtype, x.shape[0] == c{k}.shape[0], "
                f"x.shape[1] == (3 + n_ary) * c{k}.shape[1], x.shape[2:] == c{k}.shape[2:]",
                f"x {xs} {_dtype(x)}, c{k} {s} {_dtype(c)}",
            )
    r = F.reshape(x, (xs[0], 3 + n_ary, xs[1] // (3 + n_ary), *xs[2:]))
    gates = [r[:, k] for k in range(3 + n_ary)]
    a = F.tanh(gates[0])
    i = _out(F._lstm_sigmoid(gates[1]))
    o = _out(F._lstm_sigmoid(gates[2]))
    c_new = a * i
    for f, c in zip(gates[3:], cs):
        c_new = c_new + _out(F._lstm_sigmoid(f)) * c
    h = o * F.tanh(c_new)
    return c_new, h


def _n_step_check(
    fname: str,
    n_layers: int,
    directions: int,
    n_weights: int,
    hx: Any,
    cx: Any,
    ws: Any,
    bs: Any,
    xs: Any,
    kwargs: dict[str, Any],
) -> None:
    """chainer's argument checks of the n-step RNN functions, and the layouts they read."""
    where = f"chainer F.{fname}"
    for key, what in (("train", "train"), ("use_cudnn", "use_cudnn")):
        if key in kwargs:
            raise ValueError(f"{what} argument is not supported anymore. Use chainer.using_config")
    if kwargs:
        raise TypeError(f"{where} got unexpected keyword argument(s) {sorted(kwargs)}")
    if not isinstance(xs, (list, tuple)) or not xs:
        raise TypeError(f"{where}: xs must be a non-empty list of Variables (B_t, in_size)")
    n = n_layers * directions
    if len(ws) != n or len(bs) != n:
        raise ValueError(
            f"{where}: ws and bs need n_layers * directions = {n} lists, got {len(ws)} and "
            f"{len(bs)}"
        )
    for i in range(n):
        if len(ws[i]) != n_weights or len(bs[i]) != n_weights:
            raise ValueError(
                f"{where}: ws[{i}] and bs[{i}] must hold {n_weights} arrays each, got "
                f"{len(ws[i])} and {len(bs[i])}"
            )
    x_in = _shape(xs[0])[1]
    w_in = _shape(ws[0][0])[1]
    if x_in != w_in:
        raise ValueError(
            f"Inconsistent input size in input values and weight parameters: {x_in} != {w_in}"
        )
    batches = [_shape(x)[0] for x in xs]
    if any(b1 < b2 for b1, b2 in itertools.pairwise(batches)):
        raise ValueError(
            f"{where}: the batch sizes of xs must not increase (the sequences sorted by "
            f"decreasing length, as F.transpose_sequence gives them), got {batches}"
        )
    for name, h in (("hx", hx), ("cx", cx)):
        if h is None and name == "cx":
            continue
        hs = _shape(h)
        if len(hs) != 3 or hs[0] != n or hs[1] < batches[0]:
            raise TypeError(
                f"{where}: {name} must have shape (n_layers * directions = {n}, B >= "
                f"{batches[0]}, out_size), got {hs}"
            )
        if _fdtype(h) != _fdtype(xs[0]):
            raise TypeError(f"{where}: {name} must have xs's dtype {_fdtype(xs[0])}")


def _n_step_impl(
    cell: Callable[[Any, Any, Any, Any, Any], tuple[Any, Any]],
    n_layers: int,
    dropout_ratio: float,
    hx: Any,
    cx: Any,
    ws: Any,
    bs: Any,
    xs: Any,
    bidirectional: bool,
) -> tuple[Variable, Variable | None, tuple[Variable, ...]]:
    """chainer's ``n_step_rnn_impl``: each layer (and direction) runs ``cell`` over the time
    steps of xs, updating the first ``B_t`` rows of its state; the next layer reads the
    outputs (the two directions concatenated), after ``dropout(ratio)``."""
    direction = 2 if bidirectional else 1
    hx_l = [get_item(hx, i) for i in range(_shape(hx)[0])]
    cx_l = [get_item(cx, i) for i in range(_shape(cx)[0])] if cx is not None else None
    xs_next = list(xs)
    hy, cy = [], []
    for layer in range(n_layers):
        for di in range(direction):
            idx = direction * layer + di
            seq = xs_next if layer == 0 else [dropout(x, ratio=dropout_ratio) for x in xs_next]
            if di == 1:
                seq = seq[::-1]
            h = hx_l[idx]
            c = cx_l[idx] if cx_l is not None else None
            outs = []
            for x in seq:
                batch = _shape(x)[0]
                split = _shape(h)[0] > batch
                if split:
                    h, h_rest = split_axis(h, [batch], axis=0)
                    if c is not None:
                        c, c_rest = split_axis(c, [batch], axis=0)
                h, c = cell(x, h, c, ws[idx], bs[idx])
                outs.append(h)
                if split:
                    h = concat([h, h_rest], axis=0)
                    if c is not None:
                        c = concat([c, c_rest], axis=0)
            hy.append(h)
            cy.append(c)
            if di == 0:
                forward_outs = outs
            else:
                outs.reverse()
                xs_next = [
                    concat([f, bk], axis=1) for f, bk in zip(forward_outs, outs, strict=True)
                ]
        if direction == 1:
            xs_next = forward_outs
    return stack(hy), (stack(cy) if cx is not None else None), tuple(xs_next)


def _rnn_cell(activation: str) -> Callable[[Any, Any, Any, Any, Any], tuple[Any, Any]]:
    def cell(x: Any, h: Any, c: Any, w: Any, b: Any) -> tuple[Any, Any]:
        z = linear(x, w[0], b[0]) + linear(h, w[1], b[1])
        return (tanh(z) if activation == "tanh" else relu(z)), None

    return cell


def _stack_weight(ws: Any) -> Any:
    """chainer's ``_stack_weight``: the gate blocks interleaved row by row (F.lstm's layout)."""
    w = stack(ws, axis=1)
    s = _shape(w)
    return reshape(w, (s[0] * s[1], *s[2:]))


def _lstm_cell(x: Any, h: Any, c: Any, w: Any, b: Any) -> tuple[Any, Any]:
    xw = _stack_weight([w[2], w[0], w[1], w[3]])
    hw = _stack_weight([w[6], w[4], w[5], w[7]])
    xb = _stack_weight([b[2], b[0], b[1], b[3]])
    hb = _stack_weight([b[6], b[4], b[5], b[7]])
    c_new, h_new = lstm(c, linear(x, xw, xb) + linear(h, hw, hb))
    return h_new, c_new


def _gru_cell(x: Any, h: Any, c: Any, w: Any, b: Any) -> tuple[Any, Any]:
    gru_x = linear(x, concat([w[0], w[1], w[2]], axis=0), concat([b[0], b[1], b[2]], axis=0))
    gru_h = linear(h, concat([w[3], w[4], w[5]], axis=0), concat([b[3], b[4], b[5]], axis=0))
    r_x, z_x, w_x = split_axis(gru_x, 3, axis=1)
    r_h, z_h, u_h = split_axis(gru_h, 3, axis=1)
    r = sigmoid(r_x + r_h)
    z = sigmoid(z_x + z_h)
    h_bar = tanh(w_x + r * u_h)
    return (1 - z) * h_bar + z * h, None


def n_step_rnn(
    n_layers: int,
    dropout_ratio: float,
    hx: Any,
    ws: Any,
    bs: Any,
    xs: Any,
    activation: str = "tanh",
    **kwargs: Any,
) -> tuple[Variable, tuple[Variable, ...]]:
    """A stacked Elman RNN over the time steps ``xs`` (``xs[t]`` of shape (B_t, in), batch
    sizes not increasing: F.transpose_sequence's layout): for each layer,
    ``h_t = act(W0 x_t + b0 + W1 h_{t-1} + b1)`` with ``act`` tanh or relu, ``ws[layer] =
    [W0, W1]`` (W0 (out, in) for layer 0, (out, out) above, W1 (out, out)), ``bs[layer] = [b0,
    b1]``; only the first ``B_t`` rows of the state advance at step t. ``hx`` (n_layers, B,
    out) is the initial state; returns ``(hy, ys)``, hy the last states (n_layers, B, out),
    ys the top layer's outputs, one per step. ``dropout_ratio`` drops the inputs of the layers
    above the first (``chainer.config.train``).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> w = [[np.ones((1, 2), np.float32), np.zeros((1, 1), np.float32)]]
        >>> b = [[np.zeros(1, np.float32), np.zeros(1, np.float32)]]
        >>> hy, ys = F.n_step_rnn(1, 0.0, np.zeros((1, 1, 1), np.float32), w, b,
        ...                       [np.full((1, 2), 0.25, np.float32)], activation="relu")
        >>> ys[0]
        variable([[0.5]])
    """
    return _n_step_rnn_base(
        "n_step_rnn", n_layers, dropout_ratio, hx, ws, bs, xs, activation, False, kwargs
    )


def n_step_birnn(
    n_layers: int,
    dropout_ratio: float,
    hx: Any,
    ws: Any,
    bs: Any,
    xs: Any,
    activation: str = "tanh",
    **kwargs: Any,
) -> tuple[Variable, tuple[Variable, ...]]:
    """The bidirectional :func:`n_step_rnn`: ``ws[2 l]`` runs forward in time and ``ws[2 l +
    1]`` backward, each with its own state (hx (2 n_layers, B, out)); the outputs of the two
    directions are concatenated (2 out features) as the next layer's input (W0 of the layers
    above the first has shape (out, 2 out)) and as ys."""
    return _n_step_rnn_base(
        "n_step_birnn", n_layers, dropout_ratio, hx, ws, bs, xs, activation, True, kwargs
    )


def _n_step_rnn_base(
    fname: str,
    n_layers: int,
    dropout_ratio: float,
    hx: Any,
    ws: Any,
    bs: Any,
    xs: Any,
    activation: str,
    bi: bool,
    kwargs: dict[str, Any],
) -> tuple[Variable, tuple[Variable, ...]]:
    if activation not in ("tanh", "relu"):
        raise ValueError(f'Invalid activation: "{activation}". Please select from [tanh,relu]')
    _n_step_check(fname, n_layers, 2 if bi else 1, 2, hx, None, ws, bs, xs, kwargs)
    hy, _, ys = _n_step_impl(
        _rnn_cell(activation), n_layers, dropout_ratio, hx, None, ws, bs, xs, bi
    )
    return hy, ys


def n_step_lstm(
    n_layers: int, dropout_ratio: float, hx: Any, cx: Any, ws: Any, bs: Any, xs: Any, **kwargs: Any
) -> tuple[Variable, Variable, tuple[Variable, ...]]:
    """A stacked LSTM over the time steps ``xs`` (as :func:`n_step_rnn`), chainer's weight
    layout: ``ws[layer] = [W0, ..., W7]``, W0..W3 (out, in) on the input (out, out above the
    first layer) for the input gate i, forget gate f, cell input a and output gate o, W4..W7
    (out, out) on the state for the same gates, ``bs[layer]`` the 8 biases (out,):
    ``a = tanh(W2 x + b2 + W6 h + b6)``, ``i = sigmoid(W0 x + b0 + W4 h + b4)``,
    ``f = sigmoid(W1 x + b1 + W5 h + b5)``, ``o = sigmoid(W3 x + b3 + W7 h + b7)``,
    ``c' = a i + f c``, ``h' = o tanh(c')`` (:func:`lstm`). Returns ``(hy, cy, ys)``.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> ws = [[np.zeros((2, 3), np.float32)] * 4 + [np.zeros((2, 2), np.float32)] * 4]
        >>> bs = [[np.zeros(2, np.float32)] * 8]
        >>> h0 = np.zeros((1, 2, 2), np.float32)
        >>> hy, cy, ys = F.n_step_lstm(1, 0.0, h0, h0, ws, bs, [np.ones((2, 3), np.float32)])
        >>> hy.shape, len(ys)
        ((1, 2, 2), 1)
    """
    if cx is None:
        raise TypeError("chainer F.n_step_lstm: cx (the initial cell states) is required")
    _n_step_check("n_step_lstm", n_layers, 1, 8, hx, cx, ws, bs, xs, kwargs)
    hy, cy, ys = _n_step_impl(_lstm_cell, n_layers, dropout_ratio, hx, cx, ws, bs, xs, False)
    return hy, cy, ys  # type: ignore[return-value]


def n_step_bilstm(
    n_layers: int, dropout_ratio: float, hx: Any, cx: Any, ws: Any, bs: Any, xs: Any, **kwargs: Any
) -> tuple[Variable, Variable, tuple[Variable, ...]]:
    """The bidirectional :func:`n_step_lstm` (directions as :func:`n_step_birnn`)."""
    if cx is None:
        raise TypeError("chainer F.n_step_bilstm: cx (the initial cell states) is required")
    _n_step_check("n_step_bilstm", n_layers, 2, 8, hx, cx, ws, bs, xs, kwargs)
    hy, cy, ys = _n_step_impl(_lstm_cell, n_layers, dropout_ratio, hx, cx, ws, bs, xs, True)
    return hy, cy, ys  # type: ignore[return-value]


def n_step_gru(
    n_layers: int, dropout_ratio: float, hx: Any, ws: Any, bs: Any, xs: Any, **kwargs: Any
) -> tuple[Variable, tuple[Variable, ...]]:
    """A stacked GRU over the time steps ``xs`` (as :func:`n_step_rnn`), chainer's layout:
    ``ws[layer] = [W0, ..., W5]`` (W0..W2 on the input, W3..W5 (out, out) on the state),
    ``bs[layer]`` the 6 biases: ``r = sigmoid(W0 x + b0 + W3 h + b3)``, ``z = sigmoid(W1 x +
    b1 + W4 h + b4)``, ``h_bar = tanh(W2 x + b2 + r (W5 h + b5))``, ``h' = (1 - z) h_bar +
    z h``. Returns ``(hy, ys)``.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> ws = [[np.zeros((2, 3), np.float32)] * 3 + [np.zeros((2, 2), np.float32)] * 3]
        >>> bs = [[np.zeros(2, np.float32)] * 6]
        >>> hy, ys = F.n_step_gru(1, 0.0, np.ones((1, 1, 2), np.float32), ws, bs,
        ...                       [np.ones((1, 3), np.float32)])
        >>> ys[0]
        variable([[0.5, 0.5]])
    """
    _n_step_check("n_step_gru", n_layers, 1, 6, hx, None, ws, bs, xs, kwargs)
    hy, _, ys = _n_step_impl(_gru_cell, n_layers, dropout_ratio, hx, None, ws, bs, xs, False)
    return hy, ys


def n_step_bigru(
    n_layers: int, dropout_ratio: float, hx: Any, ws: Any, bs: Any, xs: Any, **kwargs: Any
) -> tuple[Variable, tuple[Variable, ...]]:
    """The bidirectional :func:`n_step_gru` (directions as :func:`n_step_birnn`)."""
    _n_step_check("n_step_bigru", n_layers, 2, 6, hx, None, ws, bs, xs, kwargs)
    hy, _, ys = _n_step_impl(_gru_cell, n_layers, dropout_ratio, hx, None, ws, bs, xs, True)
    return hy, ys
