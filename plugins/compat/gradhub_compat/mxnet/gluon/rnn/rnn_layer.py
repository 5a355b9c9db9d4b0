"""mxnet Gluon's fused recurrent layers (``gluon.rnn.RNN``, ``LSTM``, ``GRU``), as mxnet 1.9.1:
parameters ``l0_i2h_weight`` ``(gates * hidden, input_size)``, ``l0_h2h_weight``
``(gates * hidden, hidden)``, ``l0_i2h_bias``, ``l0_h2h_bias`` per layer (``l1_...``) and, when
bidirectional, ``r0_...`` for the reverse direction (an LSTM with ``projection_size`` also has
``l0_h2r_weight``); states ``(num_layers * directions, batch, hidden)``. The computation is
:func:`mx.nd.RNN <gradhub_compat.mxnet._nd_rnn.RNN>`'s (recorded ``mx.nd`` functions: gradients
and second derivatives come from ``mx.autograd``).

Example::

    >>> import gradhub_compat.mxnet as mx
    >>> from gradhub_compat.mxnet.gluon import rnn
    >>> layer = rnn.LSTM(4, num_layers=2, bidirectional=True, input_size=3, prefix="lstm0_")
    >>> layer.initialize()
    >>> out, (h, c) = layer(mx.nd.ones((5, 2, 3)), layer.begin_state(batch_size=2))
    >>> out.shape, h.shape, c.shape
    ((5, 2, 8), (4, 2, 4), (4, 2, 4))
    >>> sorted(layer.collect_params().keys())[:4]
    ['lstm0_l0_h2h_bias', 'lstm0_l0_h2h_weight', 'lstm0_l0_i2h_bias', 'lstm0_l0_i2h_weight']
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ... import ndarray as nd
from ..._nd_rnn import rnn_layers
from ...ndarray import NDArray
from ..block import HybridBlock
from ..parameter import Parameter

__all__ = ["GRU", "LSTM", "RNN"]

_DOCS = "docs/migration-mxnet.md"


class _RNNLayer(HybridBlock):
    """The fused layers' implementation (see the module documentation)."""

    # Set by ``_register_param`` (with ``setattr``) for every layer; declared for the type check.
    l0_i2h_weight: Parameter

    def __init__(
        self,
        hidden_size: int,
        num_layers: int,
        layout: str,
        dropout: float,
        bidirectional: bool,
        input_size: int,
        i2h_weight_initializer: Any,
        h2h_weight_initializer: Any,
        i2h_bias_initializer: Any,
        h2h_bias_initializer: Any,
        mode: str,
        projection_size: int | None,
        h2r_weight_initializer: Any,
        lstm_state_clip_min: float | None,
        lstm_state_clip_max: float | None,
        lstm_state_clip_nan: bool,
        dtype: Any,
        use_sequence_length: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        who = type(self).__name__
        if layout not in ("TNC", "NTC"):
            raise AssertionError(f"Invalid layout {layout}; must be one of ['TNC' or 'NTC']")
        if lstm_state_clip_min is not None or lstm_state_clip_max is not None:
            raise NotImplementedError(
                f"gluon.rnn.{who}: state_clip_min/state_clip_max are not supported ({_DOCS}, "
                "section Gluon data and recurrent layers)"
            )
        if use_sequence_length:
            raise NotImplementedError(
                f"gluon.rnn.{who}: use_sequence_length is not supported ({_DOCS}, section Gluon "
                "data and recurrent layers)"
            )
        self._hidden_size = hidden_size
        self._projection_size = projection_size if projection_size else None
        self._num_layers = num_layers
        self._mode = mode
        self._layout = layout
        self._dropout = dropout
        self._dir = 2 if bidirectional else 1
        self._input_size = input_size
        self._dtype = dtype
        self._use_sequence_length = False
        self.skip_states: bool | None = None
        self._gates = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}[mode]
        ng, ni, nh = self._gates, input_size, hidden_size
        npj = self._projection_size
        for i in range(num_layers):
            for j in ["l", "r"][: self._dir]:
                self._register_param(f"{j}{i}_i2h_weight", (ng * nh, ni), i2h_weight_initializer)
                self._register_param(
                    f"{j}{i}_h2h_weight", (ng * nh, npj or nh), h2h_weight_initializer
                )
                self._register_param(f"{j}{i}_i2h_bias", (ng * nh,), i2h_bias_initializer)
                self._register_param(f"{j}{i}_h2h_bias", (ng * nh,), h2h_bias_initializer)
                if npj:
                    self._register_param(f"{j}{i}_h2r_weight", (npj, nh), h2r_weight_initializer)
            ni = (npj or nh) * self._dir

    def _register_param(self, name: str, shape: tuple[int, ...], init: Any) -> Parameter:
        p = self.params.get(
            name, shape=shape, init=init, allow_deferred_init=True, dtype=self._dtype
        )
        setattr(self, name, p)
        return p

    def __repr__(self) -> str:
        shape = self.l0_i2h_weight.shape
        if shape is None:
            raise AssertionError(
                f"{self.__class__.__name__}: l0_i2h_weight has no shape (it is registered with one)"
            )
        s = f"{self.__class__.__name__}({shape[1] if shape[1] else None} -> "
        s += f"{shape[0] // self._gates}, {self._layout}"
        if self._num_layers != 1:
            s += f", num_layers={self._num_layers}"
        if self._dropout != 0:
            s += f", dropout={self._dropout}"
        if self._dir == 2:
            s += ", bidirectional"
        return s + ")"

    def _collect_params_with_prefix(self, prefix: str = "") -> dict[str, Parameter]:
        """mxnet's ``save_parameters`` keys of the fused layers: ``_unfused.0.i2h_weight``
        (``_unfused.0.l_cell.i2h_weight`` when bidirectional), as mxnet 1.9.1."""
        if prefix:
            prefix += "."
        pattern = re.compile(r"(l|r)(\d)_(i2h|h2h|h2r)_(weight|bias)\Z")
        bidirectional = any(pattern.match(k).group(1) == "r" for k in self._reg_params)  # type: ignore[union-attr]

        def convert_key(m: re.Match[str]) -> str:
            d, layer, g, t = (m.group(i) for i in range(1, 5))
            if bidirectional:
                return f"_unfused.{layer}.{d}_cell.{g}_{t}"
            return f"_unfused.{layer}.{g}_{t}"

        ret = {
            prefix + convert_key(pattern.match(key)): val  # type: ignore[arg-type]
            for key, val in self._reg_params.items()
        }
        for name, child in self._children.items():
            ret.update(child._collect_params_with_prefix(prefix + name))
        return ret

    def state_info(self, batch_size: int = 0) -> list[dict[str, Any]]:
        """The shapes of the states: ``(num_layers * directions, batch_size, hidden_size)``
        (an LSTM's ``h`` with ``projection_size``: ``(..., projection_size)``)."""
        n = self._num_layers * self._dir
        sizes = [self._projection_size or self._hidden_size]
        if self._mode == "lstm":
            sizes.append(self._hidden_size)
        return [
            {"shape": (n, batch_size, size), "__layout__": "LNC", "dtype": self._dtype}
            for size in sizes
        ]

    def cast(self, dtype: Any) -> None:
        """Convert the parameters (and the default states) to ``dtype``."""
        super().cast(dtype)
        self._dtype = dtype

    def infer_shape(self, inputs: Any, *args: Any) -> None:
        """``input_size`` from the inputs' last axis (layer 0's ``i2h_weight``)."""
        for j in ["l", "r"][: self._dir]:
            p = getattr(self, f"{j}0_i2h_weight")
            p.shape = (self._gates * self._hidden_size, int(inputs.shape[-1]))

    def begin_state(
        self, batch_size: int = 0, func: Callable[..., Any] = nd.zeros, **kwargs: Any
    ) -> list[Any]:
        """The initial states (zeros by default): ``func(name=..., shape=..., dtype=...,
        **kwargs)`` for each state of :meth:`state_info` (``kwargs`` such as ``ctx``)."""
        states = []
        for i, info in enumerate(self.state_info(batch_size)):
            info.update(kwargs)
            states.append(func(name=f"{self.prefix}h0_{i}", **info))
        return states

    def __call__(self, inputs: Any, states: Any = None, sequence_length: Any = None) -> Any:  # type: ignore[override]
        """``layer(inputs)`` returns the outputs; ``layer(inputs, states)`` returns
        ``(outputs, new_states)`` (as mxnet)."""
        if sequence_length is not None:
            raise NotImplementedError(
                f"gluon.rnn.{type(self).__name__}: sequence_length is not supported ({_DOCS})"
            )
        if not isinstance(inputs, NDArray):
            raise NotImplementedError(
                f"gluon.rnn.{type(self).__name__}: inputs must be an NDArray (Symbols are not "
                f"supported, {_DOCS})"
            )
        self.skip_states = states is None
        if states is None:
            batch_size = inputs.shape[self._layout.find("N")]
            states = self.begin_state(batch_size, ctx=inputs.context, dtype=inputs.dtype)
        if isinstance(states, NDArray):
            states = [states]
        return super().__call__(inputs, states)

    def hybrid_forward(self, F: Any, inputs: Any, states: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        if inputs.ndim != 3:
            raise ValueError(
                f"gluon.rnn.{type(self).__name__}: inputs must have 3 axes ({self._layout}), "
                f"got shape {inputs.shape}"
            )
        batch_size = inputs.shape[self._layout.find("N")]
        infos = self.state_info(batch_size)
        if len(states) != len(infos):
            raise ValueError(
                f"gluon.rnn.{type(self).__name__}: expected {len(infos)} states, got {len(states)}"
            )
        for state, info in zip(states, infos):
            if state.shape != info["shape"]:
                raise ValueError(
                    f"Invalid recurrent state shape. Expecting {info['shape']}, got {state.shape}."
                )
        if self._layout == "NTC":
            inputs = F.swapaxes(inputs, dim1=0, dim2=1)
        names = ["i2h_weight", "h2h_weight", "i2h_bias", "h2h_bias"]
        if self._projection_size:
            names.append("h2r_weight")
        weights = [
            tuple(kwargs[f"{d}{layer}_{g}"] for g in names)
            for layer in range(self._num_layers)
            for d in ["l", "r"][: self._dir]
        ]
        outputs, hy, cy = rnn_layers(
            inputs,
            weights,  # type: ignore[arg-type]
            states[0],
            states[1] if self._mode == "lstm" else None,
            self._mode,
            self._hidden_size,
            self._num_layers,
            self._dir == 2,
            float(self._dropout),
        )
        if self._layout == "NTC":
            outputs = F.swapaxes(outputs, dim1=0, dim2=1)
        new_states = [hy] if cy is None else [hy, cy]
        return outputs if self.skip_states else (outputs, new_states)


class RNN(_RNNLayer):
    """A multi-layer Elman network: ``h_t = act(W_i x_t + b_i + W_h h_{t-1} + b_h)`` with
    ``activation`` ``"relu"`` (the default, as mxnet) or ``"tanh"``; one state. Prefix
    ``rnn0_``. ``layout`` "TNC" (default) or "NTC"; ``dropout`` between layers in training."""

    def __init__(
        self,
        hidden_size: int,
        num_layers: int = 1,
        activation: str = "relu",
        layout: str = "TNC",
        dropout: float = 0,
        bidirectional: bool = False,
        i2h_weight_initializer: Any = None,
        h2h_weight_initializer: Any = None,
        i2h_bias_initializer: Any = "zeros",
        h2h_bias_initializer: Any = "zeros",
        input_size: int = 0,
        dtype: Any = "float32",
        **kwargs: Any,
    ) -> None:
        if activation not in ("relu", "tanh"):
            raise ValueError(
                f"gluon.rnn.RNN: activation must be 'relu' or 'tanh', got {activation!r}"
            )
        super().__init__(
            hidden_size, num_layers, layout, dropout, bidirectional, input_size,
            i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
            h2h_bias_initializer, "rnn_" + activation, None, None, None, None, False, dtype,
            **kwargs,
        )  # fmt: skip


class LSTM(_RNNLayer):
    """A multi-layer LSTM (gate order ``i, f, c, o``, the formula of
    :class:`~.rnn_cell.LSTMCell`); states ``[h, c]``. Prefix ``lstm0_``. With
    ``projection_size`` each layer and direction has ``h2r_weight`` ``(projection_size,
    hidden_size)`` and its output and state ``h`` are ``h2r_weight (o * tanh(c))`` (mxnet
    1.9.1 computes this on CPU for inference only; here it is also differentiable).
    ``state_clip_min``/``state_clip_max`` raise ``NotImplementedError`` (mxnet 1.9.1's CPU
    operator ignores them)."""

    def __init__(
        self,
        hidden_size: int,
        num_layers: int = 1,
        layout: str = "TNC",
        dropout: float = 0,
        bidirectional: bool = False,
        input_size: int = 0,
        i2h_weight_initializer: Any = None,
        h2h_weight_initializer: Any = None,
        i2h_bias_initializer: Any = "zeros",
        h2h_bias_initializer: Any = "zeros",
        projection_size: int | None = None,
        h2r_weight_initializer: Any = None,
        state_clip_min: float | None = None,
        state_clip_max: float | None = None,
        state_clip_nan: bool = False,
        dtype: Any = "float32",
        **kwargs: Any,
    ) -> None:
        super().__init__(
            hidden_size, num_layers, layout, dropout, bidirectional, input_size,
            i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
            h2h_bias_initializer, "lstm", projection_size, h2r_weight_initializer,
            state_clip_min, state_clip_max, state_clip_nan, dtype, **kwargs,
        )  # fmt: skip


class GRU(_RNNLayer):
    """A multi-layer GRU (gate order ``r, z, n``, the formula of :class:`~.rnn_cell.GRUCell`);
    one state. Prefix ``gru0_``."""

    def __init__(
        self,
        hidden_size: int,
        num_layers: int = 1,
        layout: str = "TNC",
        dropout: float = 0,
        bidirectional: bool = False,
        input_size: int = 0,
        i2h_weight_initializer: Any = None,
        h2h_weight_initializer: Any = None,
        i2h_bias_initializer: Any = "zeros",
        h2h_bias_initializer: Any = "zeros",
        dtype: Any = "float32",
        **kwargs: Any,
    ) -> None:
        super().__init__(
            hidden_size, num_layers, layout, dropout, bidirectional, input_size,
            i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
            h2h_bias_initializer, "gru", None, None, None, None, False, dtype, **kwargs,
        )  # fmt: skip
