"""mxnet's fused recurrent operator ``mx.nd.RNN`` (modes ``rnn_relu``, ``rnn_tanh``, ``lstm``,
``gru``) and the sequence helpers ``mx.nd.SequenceLast`` and ``mx.nd.SequenceReverse``, as
mxnet 1.9.1, composed of recorded ``mx.nd`` functions (``FullyConnected``,
``split``, the activations, ``stack``, ``concat``), so its gradients and second derivatives come
from ``mx.autograd``.

For each layer and direction, with ``x_t`` the layer's input at step ``t`` and ``h`` the
previous state (mxnet's gate order and formulas):

* ``rnn_tanh`` / ``rnn_relu``: ``h_t = act(W_i x_t + b_i + W_h h + b_h)``;
* ``lstm``: ``[i, f, g, o] = W_i x_t + b_i + W_h h + b_h`` (four blocks of ``state_size``),
  ``c_t = sigmoid(f) * c + sigmoid(i) * tanh(g)``, ``h_t = sigmoid(o) * tanh(c_t)``;
* ``gru``: ``[r_i, z_i, n_i] = W_i x_t + b_i``, ``[r_h, z_h, n_h] = W_h h + b_h``,
  ``r = sigmoid(r_i + r_h)``, ``z = sigmoid(z_i + z_h)``, ``n = tanh(n_i + r * n_h)``,
  ``h_t = (1 - z) * n + z * h``.

The reverse direction of a bidirectional layer runs from the last step to the first; the next
layer's input is the two directions' outputs joined on the feature axis (with dropout ``p``
between layers in training, ``mx.nd.Dropout``).

Example::

    >>> import numpy as np
    >>> import gradhub_compat.mxnet as mx
    >>> x = mx.nd.ones((2, 1, 1))  # (T, N, C)
    >>> params = mx.nd.array([0.5, 1.0, 0.0, 0.0])  # W_i, W_h, b_i, b_h
    >>> out, hy = mx.nd.RNN(x, params, mx.nd.zeros((1, 1, 1)), state_size=1, num_layers=1,
    ...                     mode="rnn_tanh", state_outputs=True)
    >>> out.asnumpy().ravel().round(4), hy.shape
    (array([0.4621, 0.7452], dtype=float32), (1, 1, 1))
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import ndarray as nd
from .base import MXNetError
from .ndarray import NDArray

__all__ = ["RNN", "SequenceLast", "SequenceReverse"]

_DOCS = "docs/migration-mxnet.md"
_GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}


def _parts(x: NDArray, n: int, axis: int, squeeze: bool = False) -> list[NDArray]:
    out = nd.split(x, num_outputs=n, axis=axis, squeeze_axis=squeeze)
    return [out] if n == 1 else list(out)


def _step(
    mode: str,
    xi: NDArray,
    h: NDArray,
    c: NDArray | None,
    wh: NDArray,
    bh: NDArray,
    hidden: int,
    wr: NDArray | None = None,
) -> tuple[NDArray, NDArray | None]:
    """One step: ``xi`` is ``W_i x_t + b_i``; returns the new ``h`` (and ``c`` for LSTM; with
    ``wr``, the LSTM's projection, ``h = W_r (o * tanh(c))``)."""
    hh = nd.FullyConnected(h, wh, bh, num_hidden=_GATES[mode] * hidden)
    if mode == "rnn_tanh":
        return nd.tanh(xi + hh), None
    if mode == "rnn_relu":
        return nd.relu(xi + hh), None
    if mode == "lstm":
        i, f, g, o = _parts(xi + hh, 4, axis=1)
        c_new = nd.sigmoid(f) * c + nd.sigmoid(i) * nd.tanh(g)
        h_new = nd.sigmoid(o) * nd.tanh(c_new)
        if wr is not None:
            h_new = nd.FullyConnected(h_new, wr, no_bias=True, num_hidden=wr.shape[0])
        return h_new, c_new
    ir, iz, inn = _parts(xi, 3, axis=1)
    hr, hz, hn = _parts(hh, 3, axis=1)
    r = nd.sigmoid(ir + hr)
    z = nd.sigmoid(iz + hz)
    n = nd.tanh(inn + r * hn)
    return (1.0 - z) * n + z * h, None


def rnn_layers(
    data: NDArray,
    weights: list[tuple[NDArray, ...]],
    h0: NDArray,
    c0: NDArray | None,
    mode: str,
    hidden: int,
    num_layers: int,
    bidirectional: bool,
    p: float = 0.0,
) -> tuple[NDArray, NDArray, NDArray | None]:
    """The fused recurrent network on ``data`` ``(T, N, C)``: ``weights`` holds
    ``(W_i, W_h, b_i, b_h)`` per layer and direction (``l0, r0, l1, ...``; LSTM with projection:
    ``(W_i, W_h, b_i, b_h, W_r)``), ``h0`` (and ``c0`` for LSTM) the initial states
    ``(num_layers * directions, N, hidden or projection)``. Returns the last layer's outputs
    ``(T, N, directions * (hidden or projection))`` and the final states, stacked as ``h0``."""
    dirs = 2 if bidirectional else 1
    steps = data.shape[0]
    ng = _GATES[mode]
    hs = _parts(h0, num_layers * dirs, axis=0, squeeze=True)
    cs = _parts(c0, num_layers * dirs, axis=0, squeeze=True) if c0 is not None else None
    h_out: list[NDArray] = []
    c_out: list[NDArray] = []
    x = data
    for layer in range(num_layers):
        if layer > 0 and p > 0:
            x = nd.Dropout(x, p=p)
        outs = []
        for d in range(dirs):
            k = layer * dirs + d
            wi, wh, bi, bh = weights[k][:4]
            wr = weights[k][4] if len(weights[k]) > 4 else None
            xi = nd.FullyConnected(x, wi, bi, num_hidden=ng * hidden, flatten=False)
            xs = _parts(xi, steps, axis=0, squeeze=True)
            h, c = hs[k], cs[k] if cs is not None else None
            seq: list[NDArray] = []
            for t in range(steps) if d == 0 else range(steps - 1, -1, -1):
                h, c = _step(mode, xs[t], h, c, wh, bh, hidden, wr)
                seq.append(h)
            if d == 1:
                seq.reverse()
            outs.append(nd.stack(*seq, axis=0))
            h_out.append(h)
            if c is not None:
                c_out.append(c)
        x = outs[0] if dirs == 1 else nd.concat(*outs, dim=2)
    hy = nd.stack(*h_out, axis=0)
    cy = nd.stack(*c_out, axis=0) if c_out else None
    return x, hy, cy


def RNN(
    data: NDArray,
    parameters: NDArray,
    state: NDArray,
    state_cell: NDArray | None = None,
    sequence_length: NDArray | None = None,
    state_size: int | None = None,
    num_layers: int | None = None,
    bidirectional: bool = False,
    mode: str | None = None,
    p: float = 0.0,
    state_outputs: bool = False,
    projection_size: int | None = None,
    lstm_state_clip_min: float | None = None,
    lstm_state_clip_max: float | None = None,
    lstm_state_clip_nan: bool = False,
    use_sequence_length: bool = False,
    out: Any = None,
    name: Any = None,
    **kwargs: Any,
) -> Any:
    """mxnet's fused ``mx.nd.RNN``: ``data`` ``(T, N, C)``, ``parameters`` the flat vector of
    every weight then every bias, in mxnet's order (for each layer, for each direction:
    ``i2h``, ``h2h`` (and, for an LSTM with ``projection_size``, ``h2r``) weight, row-major;
    then the ``i2h`` and ``h2h`` biases in the same order), ``state`` ``(num_layers *
    directions, N, state_size or projection_size)`` and, for LSTM, ``state_cell``
    ``(num_layers * directions, N, state_size)``. Returns the outputs ``(T, N, directions *
    (state_size or projection_size))``, with ``state_outputs=True`` the list ``[out, hy]``
    (``[out, hy, cy]`` for LSTM). The formulas are in the module documentation; with
    ``projection_size`` the LSTM's output and state ``h`` are ``W_r (o * tanh(c))``. The LSTM
    state clipping and ``use_sequence_length`` raise ``NotImplementedError`` (mxnet 1.9.1's CPU
    operator ignores both); wrong sizes raise ``MXNetError``."""
    if mode not in _GATES:
        raise MXNetError(
            f"mx.nd.RNN: mode must be one of rnn_relu, rnn_tanh, lstm, gru, got {mode!r}"
        )
    if state_size is None or num_layers is None:
        raise MXNetError("mx.nd.RNN: state_size and num_layers are required")
    if lstm_state_clip_min is not None or lstm_state_clip_max is not None:
        raise NotImplementedError(
            f"mx.nd.RNN: LSTM state clipping is not supported ({_DOCS}, section Gluon data and "
            "recurrent layers)"
        )
    if projection_size and mode != "lstm":
        raise MXNetError("mx.nd.RNN: projection_size is only supported for mode lstm")
    if use_sequence_length or sequence_length is not None:
        raise NotImplementedError(f"mx.nd.RNN: use_sequence_length is not supported ({_DOCS})")
    if out is not None:
        raise NotImplementedError(f"mx.nd.RNN: out= is not supported ({_DOCS})")
    for what, arr in (("data", data), ("parameters", parameters), ("state", state)):
        if not isinstance(arr, NDArray):
            raise TypeError(f"mx.nd.RNN: {what} must be an NDArray, got {type(arr).__name__}")
    if data.ndim != 3:
        raise MXNetError(f"mx.nd.RNN: data must be (T, N, C), got shape {data.shape}")
    if (mode == "lstm") != (state_cell is not None):
        raise MXNetError("mx.nd.RNN: state_cell is required for lstm and only for lstm")
    dirs = 2 if bidirectional else 1
    hidden, ng, n_batch = int(state_size), _GATES[mode], data.shape[1]
    proj = int(projection_size) if projection_size else None
    out_size = proj or hidden
    for what, st, size in (("state", state, out_size), ("state_cell", state_cell, hidden)):
        want = (num_layers * dirs, n_batch, size)
        if st is not None and st.shape != want:
            raise MXNetError(
                f"mx.nd.RNN: {what} has shape {st.shape}, expected {want} (num_layers * "
                "directions, batch, size)"
            )
    per = 3 if proj else 2
    shapes: list[tuple[int, ...]] = []
    ni = data.shape[2]
    for _ in range(num_layers):
        for _ in range(dirs):
            shapes += [(ng * hidden, ni), (ng * hidden, out_size)]
            if proj:
                shapes.append((proj, hidden))
        ni = out_size * dirs
    shapes += [(ng * hidden,)] * (2 * num_layers * dirs)
    total = sum(int(np.prod(shape)) for shape in shapes)
    if parameters.shape != (total,):
        raise MXNetError(
            f"mx.nd.RNN: parameters has shape {parameters.shape}, expected ({total},) for "
            f"input size {data.shape[2]}, state_size {hidden}, {num_layers} layers, {dirs} "
            "directions"
        )
    flat, pos = [], 0
    for shape in shapes:
        size = int(np.prod(shape))
        flat.append(nd.slice_axis(parameters, axis=0, begin=pos, end=pos + size).reshape(shape))
        pos += size
    nw = per * num_layers * dirs
    weights = [
        (flat[per * k], flat[per * k + 1], flat[nw + 2 * k], flat[nw + 2 * k + 1])
        + ((flat[per * k + 2],) if proj else ())
        for k in range(num_layers * dirs)
    ]
    y, hy, cy = rnn_layers(
        data, weights, state, state_cell, mode, hidden, num_layers, bidirectional, float(p)
    )
    if not state_outputs:
        return y
    return [y, hy] if cy is None else [y, hy, cy]


def _lengths(who: str, sequence_length: Any, n_batch: int, steps: int) -> Any:
    if not isinstance(sequence_length, NDArray):
        raise TypeError(
            f"mx.nd.{who}: sequence_length must be an NDArray, got {type(sequence_length).__name__}"
        )
    lengths = sequence_length.asnumpy().astype(np.int64).reshape(-1)
    if lengths.shape != (n_batch,):
        raise MXNetError(
            f"mx.nd.{who}: sequence_length has shape {sequence_length.shape}, expected "
            f"({n_batch},) (one length per sequence)"
        )
    if (lengths < 1).any() or (lengths > steps).any():
        raise MXNetError(
            f"mx.nd.{who}: sequence_length must lie in [1, {steps}], got {lengths.tolist()}"
        )
    return lengths


def SequenceLast(
    data: NDArray,
    sequence_length: NDArray | None = None,
    use_sequence_length: bool = False,
    axis: int = 0,
    out: Any = None,
    name: Any = None,
    **kwargs: Any,
) -> NDArray:
    """mxnet's ``SequenceLast``: the last step of each sequence of ``data``, whose time axis is
    ``axis`` (0 or 1; the batch is the other of the first two axes); with
    ``use_sequence_length`` the step ``sequence_length[b] - 1`` of sequence ``b`` (lengths in
    ``[1, T]``, else ``MXNetError``). Recorded for ``data`` (``take``).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.mxnet as mx
        >>> x = mx.nd.array(np.arange(6).reshape(3, 2))  # (T, N)
        >>> mx.nd.SequenceLast(x, mx.nd.array([2, 3]), use_sequence_length=True).asnumpy()
        array([2., 5.], dtype=float32)
    """
    if not isinstance(data, NDArray):
        raise TypeError(f"mx.nd.SequenceLast: data must be an NDArray, got {type(data).__name__}")
    if axis not in (0, 1) or data.ndim < 2:
        raise MXNetError(
            f"mx.nd.SequenceLast: axis must be 0 or 1 of data with at least 2 axes, got axis "
            f"{axis} of shape {data.shape}"
        )
    if out is not None:
        raise NotImplementedError(f"mx.nd.SequenceLast: out= is not supported ({_DOCS})")
    steps, n_batch = (data.shape[0], data.shape[1]) if axis == 0 else data.shape[1::-1]
    if use_sequence_length:
        last = _lengths("SequenceLast", sequence_length, n_batch, steps) - 1
    else:
        last = np.full(n_batch, steps - 1)
    batch = np.arange(n_batch)
    flat = last * n_batch + batch if axis == 0 else batch * steps + last
    rows = data.reshape((steps * n_batch, -1))
    picked = nd.take(rows, nd.array(flat, ctx=data.context, dtype="int64"), axis=0)
    return picked.reshape((n_batch, *data.shape[2:]))


def SequenceReverse(
    data: NDArray,
    sequence_length: NDArray | None = None,
    use_sequence_length: bool = False,
    axis: int = 0,
    out: Any = None,
    name: Any = None,
    **kwargs: Any,
) -> NDArray:
    """mxnet's ``SequenceReverse``: ``data`` ``(T, N, ...)`` reversed along the time axis 0;
    with ``use_sequence_length`` only the first ``sequence_length[b]`` steps of sequence ``b``
    are reversed, the later ones stay where they are (as mxnet). Recorded for ``data``
    (``take``).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.mxnet as mx
        >>> x = mx.nd.array(np.arange(6).reshape(3, 2))  # (T, N)
        >>> mx.nd.SequenceReverse(x, mx.nd.array([2, 3]), use_sequence_length=True).asnumpy()
        array([[2., 5.],
               [0., 3.],
               [4., 1.]], dtype=float32)
    """
    if not isinstance(data, NDArray):
        raise TypeError(
            f"mx.nd.SequenceReverse: data must be an NDArray, got {type(data).__name__}"
        )
    if axis != 0 or data.ndim < 2:
        raise MXNetError(
            "mx.nd.SequenceReverse: only axis 0 of data with at least 2 axes is supported (as "
            f"mxnet), got axis {axis} of shape {data.shape}"
        )
    if out is not None:
        raise NotImplementedError(f"mx.nd.SequenceReverse: out= is not supported ({_DOCS})")
    steps, n_batch = data.shape[0], data.shape[1]
    if use_sequence_length:
        lengths = _lengths("SequenceReverse", sequence_length, n_batch, steps)
    else:
        lengths = np.full(n_batch, steps)
    t = np.arange(steps)[:, None]
    src = np.where(t < lengths[None, :], lengths[None, :] - 1 - t, t)
    flat = (src * n_batch + np.arange(n_batch)[None, :]).reshape(-1)
    rows = data.reshape((steps * n_batch, -1))
    picked = nd.take(rows, nd.array(flat, ctx=data.context, dtype="int64"), axis=0)
    return picked.reshape(data.shape)
