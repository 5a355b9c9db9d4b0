"""mxnet Gluon's recurrent cells (``gluon.rnn``), as mxnet 1.9.1: :class:`RNNCell`,
:class:`LSTMCell`, :class:`GRUCell`, the containers :class:`SequentialRNNCell`,
:class:`HybridSequentialRNNCell`, :class:`BidirectionalCell` and the modifiers
:class:`DropoutCell`, :class:`ResidualCell`, :class:`ZoneoutCell`.

A cell computes one step, ``output, new_states = cell(inputs, states)`` (``inputs`` of shape
``(batch, features)``), with the parameters ``i2h_weight`` ``(gates * hidden, input_size)``,
``h2h_weight`` ``(gates * hidden, hidden)``, ``i2h_bias``, ``h2h_bias`` (mxnet's names and gate
order: LSTM ``i, f, c, o``, GRU ``r, z, n``); ``unroll(length, inputs, begin_state=None,
layout="NTC", merge_outputs=None)`` runs it over a sequence. The steps are recorded ``mx.nd``
functions, so gradients and second derivatives come from ``mx.autograd``. The cells run on
NDArrays.

Example::

    >>> import gradhub_compat.mxnet as mx
    >>> from gradhub_compat.mxnet.gluon import rnn
    >>> cell = rnn.LSTMCell(3, input_size=2, prefix="lstm_")
    >>> cell.initialize(mx.init.One())
    >>> out, states = cell.unroll(4, mx.nd.ones((5, 4, 2)), merge_outputs=True)
    >>> out.shape, [s.shape for s in states]
    ((5, 4, 3), [(5, 3), (5, 3)])
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ... import ndarray as nd
from ...ndarray import NDArray
from ..block import Block, HybridBlock
from ..nn import LeakyReLU

__all__ = [
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
]

_DOCS = "docs/migration-mxnet.md"


def _as_list(obj: Any) -> list[Any]:
    return obj if isinstance(obj, list) else [obj]


def _cells_state_info(cells: Any, batch_size: int) -> list[dict[str, Any]]:
    return [info for c in cells for info in c.state_info(batch_size)]


def _cells_begin_state(cells: Any, **kwargs: Any) -> list[NDArray]:
    return [state for c in cells for state in c.begin_state(**kwargs)]


def _as_cell(block: Block, owner: Block) -> RecurrentCell:
    """``block``, a child of the recurrent cell ``owner``, as a :class:`RecurrentCell` (the
    children of a recurrent cell are cells, as mxnet assumes); anything else raises."""
    if not isinstance(block, RecurrentCell):
        raise TypeError(
            f"gluon.rnn: the child {block.name} of {owner.name} is a {type(block).__name__}, "
            "not a recurrent cell"
        )
    return block


def _get_begin_state(cell: Any, begin_state: Any, inputs: Any, batch_size: int) -> Any:
    if begin_state is None:
        ctx = inputs.context if isinstance(inputs, NDArray) else inputs[0].context
        with ctx:
            begin_state = cell.begin_state(func=nd.zeros, batch_size=batch_size)
    return begin_state


def _mask_sequence_variable_length(
    F: Any, data: Any, length: int, valid_length: Any, time_axis: int, merge: bool
) -> Any:
    """mxnet's masking of the steps at or after each sequence's ``valid_length`` (to 0)."""
    if not isinstance(data, NDArray):
        data = F.stack(*data, axis=time_axis)
    outputs = F.SequenceMask(
        data, sequence_length=valid_length, use_sequence_length=True, axis=time_axis
    )
    if not merge:
        outputs = _as_list(F.split(outputs, num_outputs=length, axis=time_axis, squeeze_axis=True))
    return outputs


def _reverse_sequences(sequences: list[Any], unroll_step: int, valid_length: Any = None) -> Any:
    """The steps in reverse order; with ``valid_length``, each sequence's first
    ``valid_length`` steps reversed (``SequenceReverse``), as mxnet."""
    if valid_length is None:
        return list(reversed(sequences))
    rev = nd.SequenceReverse(
        nd.stack(*sequences, axis=0), sequence_length=valid_length, use_sequence_length=True
    )
    return _as_list(nd.split(rev, axis=0, num_outputs=unroll_step, squeeze_axis=True))


def _format_sequence(
    length: int | None, inputs: Any, layout: str, merge: bool | None, in_layout: str | None = None
) -> tuple[Any, int, Any, int]:
    """mxnet's ``_format_sequence``: ``inputs`` (an NDArray with a time axis, or a list of
    NDArrays, one per step) as a list of steps (``merge=False``), one NDArray with the time
    axis of ``layout`` (``merge=True``) or unchanged (``None``)."""
    if inputs is None:
        raise AssertionError(
            "unroll(inputs=None) has been deprecated. Please create input variables outside unroll."
        )
    if layout not in ("NTC", "TNC"):
        raise AssertionError(f"gluon.rnn: layout must be 'NTC' or 'TNC', got {layout!r}")
    axis = layout.find("T")
    batch_axis = layout.find("N")
    in_axis = in_layout.find("T") if in_layout is not None else axis
    if isinstance(inputs, NDArray):
        batch_size = inputs.shape[batch_axis]
        if merge is False:
            if not (length is None or length == inputs.shape[in_axis]):
                raise AssertionError(
                    f"gluon.rnn unroll: length {length} differs from the inputs' time axis "
                    f"({inputs.shape[in_axis]}, layout {layout})"
                )
            inputs = _as_list(
                nd.split(inputs, axis=in_axis, num_outputs=inputs.shape[in_axis], squeeze_axis=True)
            )
    else:
        if not isinstance(inputs, (list, tuple)) or not all(isinstance(i, NDArray) for i in inputs):
            raise NotImplementedError(
                "gluon.rnn unroll: inputs must be an NDArray or a list of NDArrays (Symbols are "
                f"not supported, {_DOCS})"
            )
        if not (length is None or len(inputs) == length):
            raise AssertionError(
                f"gluon.rnn unroll: length {length} differs from the number of inputs "
                f"({len(inputs)})"
            )
        batch_size = inputs[0].shape[0]
        inputs = list(inputs)
        if merge is True:
            inputs = nd.stack(*inputs, axis=axis)
            in_axis = axis
    if isinstance(inputs, NDArray) and axis != in_axis:
        inputs = nd.swapaxes(inputs, dim1=axis, dim2=in_axis)
    return inputs, axis, nd, batch_size


class RecurrentCell(Block):
    """Base class of the recurrent cells: ``state_info``, ``begin_state``, ``reset``,
    ``unroll`` and one step ``cell(inputs, states) -> (output, new_states)``."""

    def __init__(self, prefix: str | None = None, params: Any = None) -> None:
        super().__init__(prefix=prefix, params=params)
        self._modified = False
        self.reset()

    def reset(self) -> None:
        """Reset the step counters before a new sequence (``unroll`` does it)."""
        self._init_counter = -1
        self._counter = -1
        for cell in self._children.values():
            _as_cell(cell, self).reset()

    def state_info(self, batch_size: int = 0) -> list[dict[str, Any]]:
        """The shapes (and layouts) of the states: overridden by the cells."""
        raise NotImplementedError

    def begin_state(
        self, batch_size: int = 0, func: Callable[..., Any] = nd.zeros, **kwargs: Any
    ) -> list[Any]:
        """The initial states: ``func(name=..., shape=..., **kwargs)`` for each state of
        :meth:`state_info` (zeros by default; ``kwargs`` such as ``ctx``, ``dtype``)."""
        if self._modified:
            raise AssertionError(
                "After applying modifier cells (e.g. ZoneoutCell) the base cell cannot be "
                "called directly. Call the modifier cell instead."
            )
        states = []
        for info in self.state_info(batch_size):
            self._init_counter += 1
            info = dict(info) if info is not None else {}
            info.update(kwargs)
            states.append(func(name=f"{self._prefix}begin_state_{self._init_counter}", **info))
        return states

    def unroll(
        self,
        length: int,
        inputs: Any,
        begin_state: Any = None,
        layout: str = "NTC",
        merge_outputs: bool | None = None,
        valid_length: Any = None,
    ) -> tuple[Any, list[Any]]:
        """Run the cell ``length`` steps over ``inputs`` (an NDArray of ``layout``, or a list of
        ``(batch, features)`` NDArrays) from ``begin_state`` (zeros by default). Returns the
        outputs (one NDArray of ``layout`` with ``merge_outputs=True``, a list with ``False``,
        as the inputs with ``None``) and the last states. With ``valid_length`` (one length
        per sequence, an NDArray) the states are each sequence's at its last valid step
        (``SequenceLast``) and the outputs after it are 0 (``SequenceMask``), as mxnet."""
        self.reset()
        inputs, axis, F, batch_size = _format_sequence(length, inputs, layout, False)
        states = _get_begin_state(self, begin_state, inputs, batch_size)
        outputs = []
        all_states = []
        for i in range(length):
            output, states = self(inputs[i], states)
            outputs.append(output)
            if valid_length is not None:
                all_states.append(states)
        if valid_length is not None:
            states = [
                F.SequenceLast(
                    F.stack(*ele_list, axis=0),
                    sequence_length=valid_length,
                    use_sequence_length=True,
                    axis=0,
                )
                for ele_list in zip(*all_states)
            ]
            outputs = _mask_sequence_variable_length(F, outputs, length, valid_length, axis, True)
        outputs, _, _, _ = _format_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def _get_activation(self, F: Any, inputs: Any, activation: Any, **kwargs: Any) -> Any:
        func = {"tanh": F.tanh, "relu": F.relu, "sigmoid": F.sigmoid, "softsign": F.softsign}.get(
            activation
        )
        if func:
            return func(inputs)
        if isinstance(activation, str):
            return F.Activation(inputs, act_type=activation)
        if isinstance(activation, LeakyReLU):
            return F.LeakyReLU(inputs, act_type="leaky", slope=activation._alpha)
        return activation(inputs, **kwargs)

    def forward(self, inputs: Any, states: Any) -> Any:
        """One step (counted)."""
        self._counter += 1
        return super().forward(inputs, states)


class HybridRecurrentCell(RecurrentCell, HybridBlock):
    """A recurrent cell whose step is ``hybrid_forward(F, inputs, states, **params)``."""

    def __init__(self, prefix: str | None = None, params: Any = None) -> None:
        super().__init__(prefix=prefix, params=params)

    def hybrid_forward(self, F: Any, x: Any, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


class _GatedCell(HybridRecurrentCell):
    _gates = 1

    def _make_params(
        self,
        hidden_size: int,
        input_size: int,
        i2h_weight_initializer: Any,
        h2h_weight_initializer: Any,
        i2h_bias_initializer: Any,
        h2h_bias_initializer: Any,
    ) -> None:
        g = self._gates * hidden_size
        self._hidden_size = hidden_size
        self._input_size = input_size
        self.i2h_weight = self.params.get(
            "i2h_weight", shape=(g, input_size), init=i2h_weight_initializer,
            allow_deferred_init=True,
        )  # fmt: skip
        self.h2h_weight = self.params.get(
            "h2h_weight", shape=(g, hidden_size), init=h2h_weight_initializer,
            allow_deferred_init=True,
        )  # fmt: skip
        self.i2h_bias = self.params.get(
            "i2h_bias", shape=(g,), init=i2h_bias_initializer, allow_deferred_init=True
        )
        self.h2h_bias = self.params.get(
            "h2h_bias", shape=(g,), init=h2h_bias_initializer, allow_deferred_init=True
        )

    def infer_shape(self, inputs: Any, *args: Any) -> None:
        """``input_size`` from ``inputs`` (the product of its axes after the first)."""
        n_in = int(math.prod(inputs.shape[1:]))
        self.i2h_weight.shape = (self._gates * self._hidden_size, n_in)

    def __repr__(self) -> str:
        shape = self.i2h_weight.shape
        if shape is None:
            raise AssertionError(
                f"{self.__class__.__name__}: i2h_weight has no shape (it is registered with one)"
            )
        mapping = f"{shape[1] if shape[1] else None} -> {shape[0]}"
        extra = f", {self._activation}" if isinstance(self, RNNCell) else ""
        return f"{self.__class__.__name__}({mapping}{extra})"

    def state_info(self, batch_size: int = 0) -> list[dict[str, Any]]:
        n = 2 if isinstance(self, LSTMCell) else 1
        return [{"shape": (batch_size, self._hidden_size), "__layout__": "NC"} for _ in range(n)]


class RNNCell(_GatedCell):
    """Elman step: ``h' = activation(W_i x + b_i + W_h h + b_h)`` (``activation`` "tanh",
    "relu", "sigmoid", "softsign", another ``Activation`` name, a ``LeakyReLU`` block or a
    callable); output and the one state are ``h'``. Prefix ``rnn0_``."""

    _gates = 1

    def __init__(
        self,
        hidden_size: int,
        activation: Any = "tanh",
        i2h_weight_initializer: Any = None,
        h2h_weight_initializer: Any = None,
        i2h_bias_initializer: Any = "zeros",
        h2h_bias_initializer: Any = "zeros",
        input_size: int = 0,
        prefix: str | None = None,
        params: Any = None,
    ) -> None:
        super().__init__(prefix=prefix, params=params)
        self._activation = activation
        self._make_params(
            hidden_size, input_size, i2h_weight_initializer, h2h_weight_initializer,
            i2h_bias_initializer, h2h_bias_initializer,
        )  # fmt: skip

    def _alias(self) -> str:
        return "rnn"

    def hybrid_forward(
        self, F: Any, inputs: Any, states: Any, i2h_weight: Any, h2h_weight: Any,
        i2h_bias: Any, h2h_bias: Any,
    ) -> Any:  # fmt: skip
        i2h = F.FullyConnected(inputs, i2h_weight, i2h_bias, num_hidden=self._hidden_size)
        h2h = F.FullyConnected(states[0], h2h_weight, h2h_bias, num_hidden=self._hidden_size)
        output = self._get_activation(F, F.elemwise_add(i2h, h2h), self._activation)
        return output, [output]


class LSTMCell(_GatedCell):
    """LSTM step, mxnet's gate order ``i, f, c, o`` in the ``4 * hidden`` rows:
    ``[i, f, g, o] = W_i x + b_i + W_h h + b_h``, ``c' = ra(f) * c + ra(i) * a(g)``,
    ``h' = ra(o) * a(c')`` (``a`` = ``activation``, tanh; ``ra`` = ``recurrent_activation``,
    sigmoid); output ``h'``, states ``[h', c']``. Prefix ``lstm0_``."""

    _gates = 4

    def __init__(
        self,
        hidden_size: int,
        i2h_weight_initializer: Any = None,
        h2h_weight_initializer: Any = None,
        i2h_bias_initializer: Any = "zeros",
        h2h_bias_initializer: Any = "zeros",
        input_size: int = 0,
        prefix: str | None = None,
        params: Any = None,
        activation: Any = "tanh",
        recurrent_activation: Any = "sigmoid",
    ) -> None:
        super().__init__(prefix=prefix, params=params)
        self._make_params(
            hidden_size, input_size, i2h_weight_initializer, h2h_weight_initializer,
            i2h_bias_initializer, h2h_bias_initializer,
        )  # fmt: skip
        self._activation = activation
        self._recurrent_activation = recurrent_activation

    def _alias(self) -> str:
        return "lstm"

    def hybrid_forward(
        self, F: Any, inputs: Any, states: Any, i2h_weight: Any, h2h_weight: Any,
        i2h_bias: Any, h2h_bias: Any,
    ) -> Any:  # fmt: skip
        n = self._hidden_size * 4
        i2h = F.FullyConnected(inputs, i2h_weight, i2h_bias, num_hidden=n)
        h2h = F.FullyConnected(states[0], h2h_weight, h2h_bias, num_hidden=n)
        gates = F.split(F.elemwise_add(i2h, h2h), num_outputs=4, axis=1)
        ra, a = self._recurrent_activation, self._activation
        in_gate = self._get_activation(F, gates[0], ra)
        forget_gate = self._get_activation(F, gates[1], ra)
        in_transform = self._get_activation(F, gates[2], a)
        out_gate = self._get_activation(F, gates[3], ra)
        next_c = F.elemwise_add(
            F.elemwise_mul(forget_gate, states[1]), F.elemwise_mul(in_gate, in_transform)
        )
        next_h = F.elemwise_mul(out_gate, F.Activation(next_c, act_type=a))
        return next_h, [next_h, next_c]


class GRUCell(_GatedCell):
    """GRU step, mxnet's gate order ``r, z, n`` in the ``3 * hidden`` rows:
    ``r = sigmoid(i_r + h_r)``, ``z = sigmoid(i_z + h_z)``, ``n = tanh(i_n + r * h_n)`` with
    ``[i_r, i_z, i_n] = W_i x + b_i`` and ``[h_r, h_z, h_n] = W_h h + b_h`` (the reset gate
    multiplies ``W_hn h + b_hn``, as mxnet), ``h' = (1 - z) * n + z * h``. Prefix ``gru0_``."""

    _gates = 3

    def __init__(
        self,
        hidden_size: int,
        i2h_weight_initializer: Any = None,
        h2h_weight_initializer: Any = None,
        i2h_bias_initializer: Any = "zeros",
        h2h_bias_initializer: Any = "zeros",
        input_size: int = 0,
        prefix: str | None = None,
        params: Any = None,
    ) -> None:
        super().__init__(prefix=prefix, params=params)
        self._make_params(
            hidden_size, input_size, i2h_weight_initializer, h2h_weight_initializer,
            i2h_bias_initializer, h2h_bias_initializer,
        )  # fmt: skip

    def _alias(self) -> str:
        return "gru"

    def hybrid_forward(
        self, F: Any, inputs: Any, states: Any, i2h_weight: Any, h2h_weight: Any,
        i2h_bias: Any, h2h_bias: Any,
    ) -> Any:  # fmt: skip
        n = self._hidden_size * 3
        prev_h = states[0]
        i2h = F.FullyConnected(inputs, i2h_weight, i2h_bias, num_hidden=n)
        h2h = F.FullyConnected(prev_h, h2h_weight, h2h_bias, num_hidden=n)
        i2h_r, i2h_z, i2h = F.split(i2h, num_outputs=3, axis=1)
        h2h_r, h2h_z, h2h = F.split(h2h, num_outputs=3, axis=1)
        reset_gate = F.Activation(F.elemwise_add(i2h_r, h2h_r), act_type="sigmoid")
        update_gate = F.Activation(F.elemwise_add(i2h_z, h2h_z), act_type="sigmoid")
        next_h_tmp = F.Activation(
            F.elemwise_add(i2h, F.elemwise_mul(reset_gate, h2h)), act_type="tanh"
        )
        ones = F.ones_like(update_gate)
        next_h = F.elemwise_add(
            F.elemwise_mul(F.elemwise_sub(ones, update_gate), next_h_tmp),
            F.elemwise_mul(update_gate, prev_h),
        )
        return next_h, [next_h]


def _check_not_modified(cell: Any) -> None:
    if cell._modified:
        raise AssertionError(
            "After applying modifier cells (e.g. ZoneoutCell) the base cell cannot be called "
            "directly. Call the modifier cell instead."
        )


class _SequentialMixin:
    """The stacking shared by :class:`SequentialRNNCell` and :class:`HybridSequentialRNNCell`."""

    _children: Any
    _counter: int

    def add(self, cell: Any) -> None:
        """Append a cell to the stack."""
        self.register_child(cell)  # type: ignore[attr-defined]

    def state_info(self, batch_size: int = 0) -> list[dict[str, Any]]:
        return _cells_state_info(self._children.values(), batch_size)

    def begin_state(
        self, batch_size: int = 0, func: Callable[..., Any] = nd.zeros, **kwargs: Any
    ) -> list[Any]:
        """The children's initial states, in order."""
        _check_not_modified(self)
        return _cells_begin_state(
            self._children.values(), batch_size=batch_size, func=func, **kwargs
        )

    def __call__(self, inputs: Any, states: Any) -> Any:
        self._counter += 1
        next_states: list[Any] = []
        p = 0
        for cell in self._children.values():
            if isinstance(cell, BidirectionalCell):
                raise AssertionError(
                    "gluon.rnn: a BidirectionalCell in a sequential cell cannot be stepped; use "
                    "unroll"
                )
            n = len(cell.state_info())
            state = states[p : p + n]
            p += n
            inputs, state = cell(inputs, state)
            next_states.extend(state)
        return inputs, next_states

    def unroll(
        self,
        length: int,
        inputs: Any,
        begin_state: Any = None,
        layout: str = "NTC",
        merge_outputs: bool | None = None,
        valid_length: Any = None,
    ) -> tuple[Any, list[Any]]:
        """Unroll each cell in turn over the whole sequence (see :meth:`RecurrentCell.unroll`)."""
        self.reset()  # type: ignore[attr-defined]
        inputs, _, _, batch_size = _format_sequence(length, inputs, layout, None)
        num_cells = len(self._children)
        begin_state = _get_begin_state(self, begin_state, inputs, batch_size)
        p = 0
        next_states = []
        for i, cell in enumerate(self._children.values()):
            n = len(cell.state_info())
            states = begin_state[p : p + n]
            p += n
            inputs, states = cell.unroll(
                length, inputs=inputs, begin_state=states, layout=layout,
                merge_outputs=None if i < num_cells - 1 else merge_outputs,
                valid_length=valid_length,
            )  # fmt: skip
            next_states.extend(states)
        return inputs, next_states

    def __getitem__(self, i: int) -> Any:
        return self._children[str(i)]

    def __len__(self) -> int:
        return len(self._children)

    def __repr__(self) -> str:
        from ..block import _indent

        mods = "\n".join(f"({i}): {_indent(repr(m), 2)}" for i, m in self._children.items())
        return f"{self.__class__.__name__}(\n{mods}\n)"


class SequentialRNNCell(_SequentialMixin, RecurrentCell):
    """A stack of cells: each step feeds the output of one cell to the next; the states are
    the children's, concatenated in order.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> from gradhub_compat.mxnet.gluon import rnn
        >>> stack = rnn.SequentialRNNCell()
        >>> stack.add(rnn.LSTMCell(4, input_size=2))
        >>> stack.add(rnn.GRUCell(3, input_size=4))
        >>> stack.initialize()
        >>> [s.shape for s in stack.begin_state(batch_size=5)]
        [(5, 4), (5, 4), (5, 3)]
    """

    def __init__(self, prefix: str | None = None, params: Any = None) -> None:
        super().__init__(prefix=prefix, params=params)


class HybridSequentialRNNCell(_SequentialMixin, HybridRecurrentCell):
    """:class:`SequentialRNNCell` whose children are HybridBlocks."""

    def __init__(self, prefix: str | None = None, params: Any = None) -> None:
        super().__init__(prefix=prefix, params=params)

    def hybrid_forward(self, F: Any, inputs: Any, states: Any) -> Any:  # type: ignore[override]
        return self.__call__(inputs, states)


class DropoutCell(HybridRecurrentCell):
    """``mx.nd.Dropout(inputs, p=rate, axes=axes)`` on each step's input (in training), no
    state; ``unroll`` of a merged sequence drops out the whole tensor at once, as mxnet."""

    def __init__(
        self, rate: float, axes: Any = (), prefix: str | None = None, params: Any = None
    ) -> None:
        super().__init__(prefix, params)
        if isinstance(rate, bool) or not isinstance(rate, (int, float)):
            raise AssertionError("gluon.rnn.DropoutCell: rate must be a number")
        self._rate = rate
        self._axes = axes

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(rate={self._rate}, axes={self._axes})"

    def state_info(self, batch_size: int = 0) -> list[dict[str, Any]]:
        return []

    def _alias(self) -> str:
        return "dropout"

    def hybrid_forward(self, F: Any, inputs: Any, states: Any) -> Any:  # type: ignore[override]
        if self._rate > 0:
            inputs = F.Dropout(inputs, p=self._rate, axes=self._axes)
        return inputs, states

    def unroll(
        self,
        length: int,
        inputs: Any,
        begin_state: Any = None,
        layout: str = "NTC",
        merge_outputs: bool | None = None,
        valid_length: Any = None,
    ) -> tuple[Any, list[Any]]:
        self.reset()
        inputs, _, F, _ = _format_sequence(length, inputs, layout, merge_outputs)
        if isinstance(inputs, NDArray):
            return self.hybrid_forward(F, inputs, begin_state if begin_state else [])
        return super().unroll(
            length, inputs, begin_state=begin_state, layout=layout, merge_outputs=merge_outputs
        )


class ModifierCell(HybridRecurrentCell):
    """Base class of the cells that wrap another (``base_cell``): the wrapper has the base
    cell's parameters and states, prefix ``base_cell.prefix + alias``; the base cell cannot
    be used directly afterwards (``AssertionError``), nor wrapped twice."""

    def __init__(self, base_cell: Any) -> None:
        if base_cell._modified:
            raise AssertionError(
                f"Cell {base_cell.name} is already modified. One cell cannot be modified twice"
            )
        base_cell._modified = True
        super().__init__(prefix=base_cell.prefix + self._alias(), params=None)
        self.base_cell = base_cell

    @property
    def params(self) -> Any:
        """The base cell's parameters."""
        return self.base_cell.params

    def state_info(self, batch_size: int = 0) -> list[dict[str, Any]]:
        return self.base_cell.state_info(batch_size)

    def begin_state(  # type: ignore[override]  # (mxnet 1.9.1's: func first, batch_size by name)
        self, func: Callable[..., Any] = nd.zeros, **kwargs: Any
    ) -> list[Any]:
        """The base cell's initial states (mxnet 1.9.1's signature: ``func`` first, the batch
        size by keyword)."""
        _check_not_modified(self)
        self.base_cell._modified = False
        begin = self.base_cell.begin_state(func=func, **kwargs)
        self.base_cell._modified = True
        return begin

    def hybrid_forward(self, F: Any, inputs: Any, states: Any) -> Any:  # type: ignore[override]
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self.base_cell})"


class ZoneoutCell(ModifierCell):
    """Zoneout (in training): each output and state element keeps its previous value with
    probability ``zoneout_outputs`` / ``zoneout_states`` (masks from ``mx.nd.Dropout`` of
    ones, as mxnet; the previous output starts at zeros); outside training the base cell's
    values."""

    def __init__(
        self, base_cell: Any, zoneout_outputs: float = 0.0, zoneout_states: float = 0.0
    ) -> None:
        if isinstance(base_cell, BidirectionalCell):
            raise AssertionError(
                "BidirectionalCell doesn't support zoneout since it doesn't support step. "
                "Please add ZoneoutCell to the cells underneath instead."
            )
        super().__init__(base_cell)
        self.zoneout_outputs = zoneout_outputs
        self.zoneout_states = zoneout_states
        self._prev_output: Any = None

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__}(p_out={self.zoneout_outputs}, "
            f"p_state={self.zoneout_states}, {self.base_cell})"
        )

    def _alias(self) -> str:
        return "zoneout"

    def reset(self) -> None:
        super().reset()
        self._prev_output = None

    def hybrid_forward(self, F: Any, inputs: Any, states: Any) -> Any:  # type: ignore[override]
        cell, p_outputs, p_states = self.base_cell, self.zoneout_outputs, self.zoneout_states
        next_output, next_states = cell(inputs, states)

        def mask(p: float, like: Any) -> Any:
            return F.Dropout(F.ones_like(like), p=p)

        prev_output = self._prev_output
        if prev_output is None:
            prev_output = F.zeros_like(next_output)
        output = (
            F.where(mask(p_outputs, next_output), next_output, prev_output)
            if p_outputs != 0.0
            else next_output
        )
        new_states = (
            [F.where(mask(p_states, n), n, o) for n, o in zip(next_states, states)]
            if p_states != 0.0
            else next_states
        )
        self._prev_output = output
        return output, new_states


class ResidualCell(ModifierCell):
    """``output = base_cell(inputs, states)[0] + inputs`` (the states are the base cell's)."""

    def hybrid_forward(self, F: Any, inputs: Any, states: Any) -> Any:  # type: ignore[override]
        output, states = self.base_cell(inputs, states)
        return F.elemwise_add(output, inputs), states

    def unroll(
        self,
        length: int,
        inputs: Any,
        begin_state: Any = None,
        layout: str = "NTC",
        merge_outputs: bool | None = None,
        valid_length: Any = None,
    ) -> tuple[Any, list[Any]]:
        self.reset()
        self.base_cell._modified = False
        outputs, states = self.base_cell.unroll(
            length, inputs=inputs, begin_state=begin_state, layout=layout,
            merge_outputs=merge_outputs, valid_length=valid_length,
        )  # fmt: skip
        self.base_cell._modified = True
        merge = isinstance(outputs, NDArray) if merge_outputs is None else merge_outputs
        inputs, axis, F, _ = _format_sequence(length, inputs, layout, merge)
        if valid_length is not None:
            inputs = _mask_sequence_variable_length(F, inputs, length, valid_length, axis, merge)
        if merge:
            return F.elemwise_add(outputs, inputs), states
        return [F.elemwise_add(i, j) for i, j in zip(outputs, inputs)], states


class BidirectionalCell(HybridRecurrentCell):
    """Two cells over a sequence, ``l_cell`` forward and ``r_cell`` from the last step to the
    first; the outputs are joined on the feature axis (``[l, r]``), the states are
    ``l_states + r_states``. Only ``unroll`` (a step raises ``NotImplementedError``)."""

    def __init__(self, l_cell: Any, r_cell: Any, output_prefix: str = "bi_") -> None:
        super().__init__(prefix="", params=None)
        self.register_child(l_cell, "l_cell")
        self.register_child(r_cell, "r_cell")
        self._output_prefix = output_prefix

    def __call__(self, inputs: Any, states: Any) -> Any:
        raise NotImplementedError("Bidirectional cannot be stepped. Please use unroll")

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__}(forward={self._children['l_cell']}, "
            f"backward={self._children['r_cell']})"
        )

    def state_info(self, batch_size: int = 0) -> list[dict[str, Any]]:
        return _cells_state_info(self._children.values(), batch_size)

    def begin_state(
        self, batch_size: int = 0, func: Callable[..., Any] = nd.zeros, **kwargs: Any
    ) -> list[Any]:
        """The two cells' initial states."""
        _check_not_modified(self)
        return _cells_begin_state(
            self._children.values(), batch_size=batch_size, func=func, **kwargs
        )

    def unroll(
        self,
        length: int,
        inputs: Any,
        begin_state: Any = None,
        layout: str = "NTC",
        merge_outputs: bool | None = None,
        valid_length: Any = None,
    ) -> tuple[Any, list[Any]]:
        self.reset()
        inputs, axis, F, batch_size = _format_sequence(length, inputs, layout, False)
        reversed_inputs = _reverse_sequences(inputs, length, valid_length)
        states = _get_begin_state(self, begin_state, inputs, batch_size)
        l_block, r_block = self._children.values()
        l_cell, r_cell = _as_cell(l_block, self), _as_cell(r_block, self)
        n_l = len(l_cell.state_info(batch_size))
        l_outputs, l_states = l_cell.unroll(
            length, inputs=inputs, begin_state=states[:n_l], layout=layout,
            merge_outputs=merge_outputs, valid_length=valid_length,
        )  # fmt: skip
        r_outputs, r_states = r_cell.unroll(
            length, inputs=reversed_inputs, begin_state=states[n_l:], layout=layout,
            merge_outputs=False, valid_length=valid_length,
        )  # fmt: skip
        reversed_r_outputs = _reverse_sequences(r_outputs, length, valid_length)
        if merge_outputs is None:
            merge_outputs = isinstance(l_outputs, NDArray)
            l_outputs, _, _, _ = _format_sequence(None, l_outputs, layout, merge_outputs)
            reversed_r_outputs, _, _, _ = _format_sequence(
                None, reversed_r_outputs, layout, merge_outputs
            )
        if merge_outputs:
            if not isinstance(reversed_r_outputs, NDArray):
                reversed_r_outputs = F.stack(*reversed_r_outputs, axis=axis)
            outputs = F.concat(l_outputs, reversed_r_outputs, dim=2)
        else:
            outputs = [F.concat(lo, ro, dim=1) for lo, ro in zip(l_outputs, reversed_r_outputs)]
        if valid_length is not None:
            outputs = _mask_sequence_variable_length(
                F, outputs, length, valid_length, axis, merge_outputs
            )
        return outputs, l_states + r_states
