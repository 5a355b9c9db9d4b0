"""mxnet's Executor: a symbol bound to arrays, run by the native gradhub engine.

``forward`` evaluates the symbol's DAG with gradhub functions on native Variables holding the
current argument arrays (so data written into ``arg_dict`` is picked up); ``backward`` runs
:func:`gradhub.grad` over that graph and writes (``grad_req="write"``) or adds (``"add"``) the
gradients into the bound gradient arrays.

Loss layers keep mxnet's semantics without any special rule: ``SoftmaxOutput`` outputs
``softmax(data)`` with no graph behind it and adds the loss term
``grad_scale / norm * sum(softmax_cross_entropy(data, label))``, whose true gradient is mxnet's
``grad_scale / norm * (softmax(data) - onehot(label))``; ``MakeLoss`` outputs its data (detached)
and adds ``grad_scale / norm * sum(data)``. The head gradients of loss layers are therefore
ignored, as in mxnet, and every gradient the executor computes is an exact derivative.

The first ``forward`` builds the graph and records its plan (:func:`gradhub.plan.record`); later
calls run the plan as a static graph (:meth:`gradhub.plan.Plan.run_static`) and ``backward`` its
backward schedule, with no graph built again (see docs/plans.md); on a device that records its
work (``cuda``: CUDA graphs) both are recorded, the forward at its third run and the backward at
its third call after that, and replayed with one launch each (:mod:`gradhub.capture_static`).
Everything the graph computes is a recorded function (``BlockGrad`` and the outputs of loss
layers are a recorded stop-gradient), and what is derived from argument *values* in Python
(``SoftmaxOutput``'s class indices, ignore mask and ``"valid"`` normalizer) is a leaf recomputed
from the label array before each run. A graph that reads an intermediate value in
Python (``MakeLoss`` with ``normalization="valid"``) is built again at each ``forward``.

``forward(is_train=True)`` and ``forward(is_train=False)`` have a graph and a plan each
(``Dropout`` draws its mask, a leaf recomputed before each run, and ``BatchNorm`` uses the batch's
statistics only in training). The auxiliary states (``BatchNorm``'s moving statistics) are leaves
holding the bound ``aux_states`` arrays; the batch statistics are outputs of the training plan,
and ``backward`` updates the moving statistics in place from those of the last training forward,
as mxnet 1.9.1 does. The regression outputs are loss layers built as ``SoftmaxOutput``: a value
with no graph behind it and a loss term whose exact gradient is mxnet's.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from gradhub import plan as _plans
from gradhub.engine import grad as _native_grad
from gradhub.graph import apply
from gradhub.modes import set_recording
from gradhub.registry import FunctionDef, Provider
from gradhub.variable import Variable as NativeVariable

from .._common import call_native as _call
from . import _sym_norm, _sym_ops_more
from .base import MXNetError, _MXNetValueError
from .context import Context
from .ndarray import NDArray, _const, _divide, int_kernel, refuse_traced
from .shapes import UNARY_OPS
from .symbol import Symbol, _grad_reqs, _node_types, is_multi_output, output_key, reduce_axes

_ACTIVATIONS = {
    "relu": "ReLU",
    "sigmoid": "Sigmoid",
    "tanh": "Tanh",
    "softrelu": "Softplus",
    "softsign": "Softsign",
}
_SCALAR_OPS = {
    "_PlusScalar": lambda x, s: x + s,
    "_MinusScalar": lambda x, s: x - s,
    "_RMinusScalar": lambda x, s: s - x,
    "_MulScalar": lambda x, s: x * s,
    "_DivScalar": _divide,
    "_RDivScalar": lambda x, s: s / x,
    "_PowerScalar": lambda x, s: x**s,
    "_MaximumScalar": lambda x, s: _select("GreaterEqual", x, s),
    "_MinimumScalar": lambda x, s: _select("LessEqual", x, s),
    "_RPowerScalar": lambda x, s: s**x,
    "_HypotScalar": lambda x, s: _call("sqrt", x * x + float(s) ** 2),
}
_BINARY_OPS = {
    "_Plus": "Add2",
    "_Minus": "Sub2",
    "_Mul": "Mul2",
    "_Div": "Div2",
    "_Power": "Pow2",
    "broadcast_add": "Add2",
    "broadcast_sub": "Sub2",
    "broadcast_mul": "Mul2",
    "broadcast_div": "Div2",
    "broadcast_power": "Pow2",
}
#: mxnet's broadcast_maximum/minimum: at ties the gradient goes to the left operand.
_SELECT_OPS = {
    "broadcast_maximum": "GreaterEqual",
    "broadcast_minimum": "LessEqual",
    "_Maximum": "GreaterEqual",
    "_Minimum": "LessEqual",
}


_PROVIDER = Provider("gradhub-compat", "", "gradhub_compat.mxnet.executor")


def _block_grad_kernel(xp: Any, x: Any) -> Any:
    return x


#: mxnet's BlockGrad (stop_gradient) as a recorded function: ``y = x`` (the same array), no
#: gradient (its output needs none); recorded so that a plan recomputes what follows it
BLOCK_GRAD = FunctionDef(
    "BlockGrad",
    _block_grad_kernel,
    _PROVIDER,
    inputs=("x",),
    differentiable=False,
    doc="mxnet's BlockGrad: y = x, no gradient flows through",
)


def _block(x: NativeVariable) -> NativeVariable:
    return apply(BLOCK_GRAD, (x,), {})  # type: ignore[no-any-return]


class _Build:
    """What one graph build made besides the values: the loss terms, the leaves derived from
    argument values in Python (recomputed before each run of the plan: ``(leaves, fn)``, ``fn()``
    giving their new arrays), the batch statistics of ``BatchNorm`` nodes in training
    (``(node, mean, var)``: the moving statistics are updated from them at ``backward``) and
    whether the graph can be planned. ``is_train`` is the mode of the forward."""

    def __init__(self, is_train: bool = False) -> None:
        self.is_train = is_train
        self.losses: list[NativeVariable] = []
        self.feeds: list[tuple[list[NativeVariable], Callable[[], list[Any]]]] = []
        self.stats: list[tuple[Symbol, NativeVariable, NativeVariable]] = []
        #: the outputs of an operator of several output nodes, computed once (by output_key)
        self.shared: dict[Any, list[NativeVariable]] = {}
        self.static = True

    def feed(self, fn: Callable[[], list[Any]], like: NativeVariable) -> list[NativeVariable]:
        """Leaves holding ``fn()``'s arrays now, recomputed by ``fn`` before each planned run."""
        leaves = [_const(a, like) for a in fn()]
        self.feeds.append((leaves, fn))
        return leaves


def _as_list(arrays: Any, names: Sequence[str], what: str, required: bool) -> list[NDArray | None]:
    if isinstance(arrays, dict):
        unknown = [k for k in arrays if k not in names]
        if unknown and not required:
            raise ValueError(f"bind: {what} names unknown arguments {sorted(unknown)}")
        out = [arrays.get(n) for n in names]
    elif isinstance(arrays, (list, tuple)):
        if len(arrays) != len(names):
            raise ValueError(
                f"bind: {what} has {len(arrays)} arrays but the symbol has {len(names)} "
                f"arguments {list(names)}"
            )
        out = list(arrays)
    else:
        raise TypeError(
            f"bind: {what} must be a list or a dict of NDArrays, got {type(arrays).__name__}"
        )
    for n, a in zip(names, out):
        if a is None:
            if required:
                raise ValueError(f"bind: no array given for the argument {n!r} ({what})")
            continue
        if not isinstance(a, NDArray):
            raise TypeError(f"bind: {what}[{n!r}] must be an NDArray, got {type(a).__name__}")
    return out


def _aux_list(aux_states: Any, names: Sequence[str]) -> list[NDArray]:
    """The auxiliary-state arrays of ``bind`` in ``names`` order (mxnet's checks and texts)."""
    if aux_states is None:
        aux_states = []
    if isinstance(aux_states, (list, tuple)) and len(aux_states) != len(names):
        raise ValueError(
            f"bind: Length of aux_states ({len(aux_states)}) does not match the number of "
            f"auxiliary states {list(names)}"
        )
    if isinstance(aux_states, dict):
        for n in names:
            if n not in aux_states:
                raise ValueError(
                    f"bind: key `{n}` is missing in `aux_states` (auxiliary states: {list(names)})"
                )
    return _as_list(aux_states, names, "aux_states", False)  # type: ignore[return-value]


class Executor:
    """A bound symbol: ``forward``, ``backward``, ``outputs``, ``arg_dict``, ``grad_dict``.

    Example (the second example of mxnet's ``Executor.backward`` documentation)::

        >>> import gradhub_compat.mxnet as mx
        >>> a, b = mx.sym.Variable("a"), mx.sym.Variable("b")
        >>> c = 2 * a + b
        >>> ex = c.bind(ctx=mx.cpu(), args={"a": mx.nd.array([1, 2]), "b": mx.nd.array([2, 3])},
        ...             args_grad={"a": mx.nd.zeros((2,)), "b": mx.nd.zeros((2,))})
        >>> out = ex.forward(is_train=True)[0].copy()
        >>> ex.backward(out)
        >>> ex.grad_arrays[0].asnumpy(), ex.grad_arrays[1].asnumpy()
        (array([ 8., 14.], dtype=float32), array([4., 7.], dtype=float32))
    """

    def __init__(
        self,
        symbol: Symbol,
        ctx: Any,
        args: Any,
        args_grad: Any,
        grad_req: Any,
        aux_states: Any = None,
    ) -> None:
        if not isinstance(ctx, Context):
            raise TypeError(
                f"bind: ctx must be a Context such as mx.cpu(), got {type(ctx).__name__}"
            )
        self._symbol = symbol
        self._ctx = ctx
        self._device = ctx.device()
        names = symbol.list_arguments()
        self._names = names
        self.arg_arrays: list[NDArray] = _as_list(args, names, "args", True)  # type: ignore[assignment]
        grads: list[NDArray | None] = (
            [None] * len(names)
            if args_grad is None
            else _as_list(args_grad, names, "args_grad", False)
        )
        self.grad_arrays: list[NDArray | None] = grads
        reqs = _grad_reqs(grad_req, names)
        for n, a, g in zip(names, self.arg_arrays, grads):
            if g is None:
                reqs[n] = "null"
            elif g.shape != a.shape:
                raise ValueError(
                    f"bind: the gradient array of {n!r} has shape {g.shape} but the argument has "
                    f"shape {a.shape}"
                )
        aux_names = symbol.list_auxiliary_states()
        self._aux_names = aux_names
        if aux_states is None and aux_names:
            raise ValueError(
                f"bind: the symbol has the auxiliary states {aux_names}: give their arrays in "
                "aux_states (a list in list_auxiliary_states() order or a dict)"
            )
        auxs = _aux_list(aux_states, aux_names)
        dtypes = {n: a._arr.dtype for n, a in zip(names, self.arg_arrays)}
        node_types = _node_types(symbol, dtypes, "bind")
        # as mxnet's bind: shapes the operators contradict raise MXNetError naming the operator,
        # and the outputs are allocated (zeros; forward writes into them)
        _, out_shapes, _ = symbol.infer_shape(
            **{n: tuple(a.shape) for n, a in zip(names, self.arg_arrays)},
            **{n: tuple(a.shape) for n, a in zip(aux_names, auxs)},
        )
        self._reqs = reqs
        # the arrays the executor reads and writes: replacing an entry of arg_dict/grad_dict (not
        # writing into it) does not redirect the executor, as in mxnet
        self._args: list[NDArray] = list(self.arg_arrays)
        self._grads: dict[str, NDArray | None] = dict(zip(names, grads))
        self.arg_dict: dict[str, NDArray] = dict(zip(names, self.arg_arrays))
        self.grad_dict: dict[str, NDArray | None] = dict(zip(names, grads))
        self.aux_arrays: list[NDArray] = list(auxs)
        self.aux_dict: dict[str, NDArray] = dict(zip(aux_names, auxs))
        self._auxs: list[NDArray] = list(auxs)
        self._topo = symbol._topo()
        self._heads = symbol._heads()
        self._vars: dict[str, NativeVariable] = {}
        for n, a in zip(names, self.arg_arrays):
            need = reqs[n] != "null" and a._arr.dtype.kind in "fc"
            self._vars[n] = NativeVariable.leaf(self._device.asarray(a._arr), need)
        for n, a in zip(aux_names, auxs):  # auxiliary states: read, never differentiated
            self._vars[n] = NativeVariable.leaf(self._device.asarray(a._arr), False)
        self._graph: tuple[list[NativeVariable], list[NativeVariable]] | None = None
        #: per mode (is_train): the graph's heads and loss terms, its build and its plan with
        #: its key (None: built again at each forward)
        self._modes: dict[bool, tuple[Any, _Build, Any]] = {}
        self._build_now: _Build | None = None
        #: the batch statistics of the last forward(is_train=True), applied at backward
        self._pending: list[tuple[Symbol, Any, Any]] = []
        self.outputs: list[NDArray] = []
        if out_shapes is not None:
            xp = self._device.xp
            for head, shape in zip(self._heads, out_shapes):
                # the head's inferred dtype (else its first argument's)
                dt = node_types.get(id(head))
                if dt is None:
                    dt = next((dtypes[v.name] for v in head._topo() if v.name in dtypes), None)
                with self._device.activate():
                    zeros = xp.zeros(shape, dtype=np.float32 if dt is None else dt)
                    self.outputs.append(NDArray(zeros, ctx))

    @property
    def _plan(self) -> tuple[Any, _Build, Any] | None:
        """The plan of the last forward's mode: ``(plan, build, key)``, or None when that graph
        is not planned (built again at each forward)."""
        build = self._build_now
        entry = None if build is None else self._modes.get(build.is_train)
        if entry is None or entry[2] is None:
            return None
        return (entry[2][0], entry[1], entry[2][1])

    @property
    def output_dict(self) -> dict[str, NDArray]:
        """Output name -> NDArray (allocated at bind, filled by ``forward``)."""
        return dict(zip(self._symbol.list_outputs(), self.outputs))

    def copy_params_from(
        self, arg_params: dict[str, Any], aux_params: Any = None, allow_extra_params: bool = False
    ) -> None:
        """Copy the arrays of ``arg_params`` into the bound argument arrays and those of
        ``aux_params`` into the auxiliary states; a name that is neither raises ``ValueError``
        unless ``allow_extra_params`` (as mxnet)."""
        for name, value in arg_params.items():
            if name not in self._names:
                if allow_extra_params:
                    continue
                raise ValueError(f"copy_params_from: {name!r} is not an argument of the symbol")
            dst = self._args[self._names.index(name)]
            _same_shape("copy_params_from", name, dst, value)
            dst[:] = value
        for name, value in (aux_params or {}).items():
            if name not in self._aux_names:
                if allow_extra_params:
                    continue
                raise ValueError(
                    f"copy_params_from: {name!r} is not an auxiliary state of the symbol "
                    f"({self._aux_names})"
                )
            dst = self._auxs[self._aux_names.index(name)]
            _same_shape("copy_params_from", name, dst, value)
            dst[:] = value

    # -- reshape ---------------------------------------------------------------------------------
    def reshape(
        self, partial_shaping: bool = False, allow_up_sizing: bool = False, **kwargs: Any
    ) -> Executor:
        """A new executor for new input shapes that shares this one's arrays, as mxnet's.

        The shapes given in ``kwargs`` (name -> tuple) are inferred through the symbol. An
        argument whose shape does not change keeps its array; an argument given in ``kwargs``,
        or any argument with ``partial_shaping=True``, gets a view of the first elements of its
        array (and gradient array) when it shrinks, or new arrays when it grows, which needs
        ``allow_up_sizing=True``. Any other argument whose shape changes raises
        :class:`~.base.MXNetError`, as mxnet. ``grad_req`` is kept.

        Example::

            >>> import gradhub_compat.mxnet as mx
            >>> fc = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=4, name="fc")
            >>> ex = fc.simple_bind(mx.cpu(), data=(8, 3))
            >>> small = ex.reshape(data=(2, 3))
            >>> [a.shape for a in small.arg_arrays], small.outputs[0].shape
            ([(2, 3), (4, 3), (4,)], (2, 4))
            >>> small.arg_dict["fc_weight"][:] = 1  # shared with ex
            >>> float(ex.arg_dict["fc_weight"].asnumpy().sum())
            12.0
        """
        given: dict[str, tuple[int, ...]] = {}
        for name, shape in kwargs.items():
            if name not in self._names:
                raise MXNetError(
                    f"Executor.reshape: {name!r} is not an argument of the symbol (arguments: "
                    f"{self._names})"
                )
            if not isinstance(shape, (tuple, list)):
                raise TypeError(
                    f"Executor.reshape: the shape of {name!r} must be a tuple, got "
                    f"{type(shape).__name__}"
                )
            given[name] = tuple(int(d) for d in shape)
        arg_shapes, _, _ = self._symbol.infer_shape_partial(**given)
        new_args: dict[str, NDArray] = {}
        new_grads: dict[str, NDArray] = {}
        for name, arr, grad, shape in zip(self._names, self._args, self.grad_arrays, arg_shapes):
            new = tuple(shape)
            if new == arr.shape:
                new_args[name] = arr
                if grad is not None:
                    new_grads[name] = grad
                continue
            if not (partial_shaping or name in given):
                raise MXNetError(
                    f"Executor.reshape: Shape of unspecified arg: {name} changed ({arr.shape} -> "
                    f"{new or 'unknown'}). This can cause the new executor to not share "
                    "parameters with the old one. Please check for error in network. If this is "
                    "intended, set partial_shaping=True to suppress this warning."
                )
            if not new or any(d == 0 for d in new):
                raise MXNetError(
                    f"Executor.reshape: the shapes {given} do not determine the shape of "
                    f"{name!r} (inferred {new or 'nothing'})"
                )
            if math.prod(new) > arr.size:
                if not allow_up_sizing:
                    raise MXNetError(
                        f"Executor.reshape: Check failed: allow_up_sizing: New shape of arg: "
                        f"{name} is larger than original ({arr.shape} -> {new}). First making a "
                        "big executor and then down sizing it is more efficient than the "
                        "reverse. If you really want to up size, set allow_up_sizing=True to "
                        "enable allocation of new arrays."
                    )
                new_args[name] = _allocated(arr, new)
                if grad is not None:
                    new_grads[name] = _allocated(grad, new)
            else:
                new_args[name] = _view(arr, new)
                if grad is not None:
                    new_grads[name] = _view(grad, new)
        ex = Executor(
            self._symbol,
            self._ctx,
            new_args,
            new_grads,
            dict(self._reqs),
            dict(zip(self._aux_names, self._auxs)),
        )
        # as mxnet, an output that does not grow lives in this executor's output memory: the new
        # executor's forward writes into the first elements of this one's outputs
        for i, (old, out) in enumerate(zip(self.outputs, ex.outputs)):
            if out.size <= old.size and out._arr.dtype == old._arr.dtype:
                ex.outputs[i] = _view(old, out.shape)
        return ex

    # -- forward ---------------------------------------------------------------------------------
    def forward(self, is_train: bool = False, **kwargs: Any) -> list[NDArray]:
        """Evaluate the symbol on the current argument arrays and return the outputs.

        Keyword arguments copy new values into the named argument arrays first.
        ``is_train=True`` is the training mode: ``Dropout`` drops, ``BatchNorm`` normalizes
        with the batch's statistics (the next ``backward`` updates its moving statistics, as
        mxnet 1.9.1); each mode has its own graph and plan. As in mxnet the results are written
        into the same output NDArrays each time (while their shapes stay), so an output held
        from an earlier call shows the latest values.
        """
        refuse_traced(
            "Executor.forward()",
            "later calls would not write their results into the output NDArrays (an Executor "
            "is planned already: call it outside gradhub.compile)",
        )
        for name, value in kwargs.items():
            if name not in self._names:
                raise ValueError(
                    f"Executor.forward: {name!r} is not an argument of the symbol "
                    f"(arguments: {self._names})"
                )
            dst = self._args[self._names.index(name)]
            _same_shape("Executor.forward", name, dst, value)
            dst[:] = value
        for node in self._topo:  # as mxnet 1.9.1: a fixed gamma is set to 1 at every forward
            if node.op == "BatchNorm" and node._attrs["fix_gamma"]:
                g = node._inputs[1]
                if g.op == "null" and g.name in self._names:
                    self._args[self._names.index(g.name)]._arr[...] = 1
        for n, a in zip(self._names, self._args):
            self._vars[n]._data = self._device.asarray(a._arr)
        for n, a in zip(self._aux_names, self._auxs):
            self._vars[n]._data = self._device.asarray(a._arr)
        mode = bool(is_train)
        if not self._run_plan(mode):
            self._build(mode)
        build = self._build_now
        assert build is not None
        # the batch statistics now (copies: the plan overwrites its values at the next run)
        self._pending = [(node, m._data.copy(), v._data.copy()) for node, m, v in build.stats]
        return self._write_outputs()

    def _run_plan(self, mode: bool) -> bool:
        """Run the recorded plan of ``mode`` on the current argument data; False when there is
        none or it no longer holds (a leaf's shape or dtype, a rule or kernel changed; plans
        turned off)."""
        entry = self._modes.get(mode)
        if entry is None or entry[2] is None or not _plans.enabled():
            return False
        graph, build, (plan, key) = entry
        if plan is None or _plans.plan_of(key) is not plan:  # (plans turned off and on since)
            return False
        for leaves, fn in build.feeds:
            for v, a in zip(leaves, fn()):
                v._data = self._device.asarray(a)
        if plan is None or not plan.run_static():
            return False
        self._graph = graph
        self._build_now = build
        return True

    def _build(self, mode: bool = False) -> None:
        """Evaluate the symbol's DAG with recorded functions and record its plan."""
        values: dict[int, NativeVariable] = {}
        build = _Build(mode)
        with set_recording(True):
            for node in self._topo:
                if node.op == "null":
                    values[id(node)] = self._vars[node.name]
                elif node.op != "Group":
                    ins = [values[id(s)] for s in node._inputs]
                    values[id(node)] = _run_node(node, ins, build)
        heads = [values[id(h)] for h in self._heads]
        self._graph = (heads, build.losses)
        self._build_now = build
        planned = None
        # the batch statistics are outputs of the plan too (they are read after each run)
        ys = heads + build.losses + [v for _, m, var in build.stats for v in (m, var)]
        key = next((y for y in ys if y._creator is not None), None)
        if build.static and _plans.enabled() and key is not None:
            planned = (_plans.record(ys), key)
        self._modes[mode] = (self._graph, build, planned)

    def _write_outputs(self) -> list[NDArray]:
        assert self._graph is not None
        heads = self._graph[0]
        outs = self.outputs
        if len(outs) == len(heads) and all(
            o._arr.shape == h._data.shape and o._arr.dtype == h._data.dtype
            for o, h in zip(outs, heads)
        ):
            for o, h in zip(outs, heads):
                o._arr[...] = h._data
        else:  # first forward: own copies (a head may share an argument's data)
            outs[:] = [NDArray(h._data.copy(), self._ctx) for h in heads]
        return outs

    # -- backward --------------------------------------------------------------------------------
    def _out_grads(self, out_grads: Any) -> list[Any]:
        n = len(self._heads)
        if out_grads is None:
            return [None] * n
        if isinstance(out_grads, (NDArray, np.ndarray)):
            out_grads = [out_grads]
        if isinstance(out_grads, dict):
            names = self._symbol.list_outputs()
            unknown = set(out_grads) - set(names)
            if unknown:
                raise ValueError(
                    f"Executor.backward: out_grads names unknown outputs "
                    f"{sorted(unknown)} (outputs: {names})"
                )
            out_grads = [out_grads.get(k) for k in names]
        if not isinstance(out_grads, (list, tuple)) or len(out_grads) != n:
            got = len(out_grads) if isinstance(out_grads, (list, tuple)) else type(out_grads)
            raise ValueError(
                f"Executor.backward: expected {n} out_grads (one per output), got {got}"
            )
        return list(out_grads)

    def backward(self, out_grads: Any = None, is_train: bool = True) -> None:
        """Compute the gradients of the arguments and store them per ``grad_req``.

        ``out_grads`` (an NDArray, a list, or a dict by output name) are the head gradients of
        outputs that are not loss layers (None: ones); loss layers (``SoftmaxOutput``,
        ``MakeLoss``) ignore them. ``"write"`` overwrites the gradient arrays, ``"add"`` adds to
        them, ``"null"`` leaves them alone.
        """
        refuse_traced(
            "Executor.backward()",
            "later calls would not write their gradients into the gradient NDArrays (an "
            "Executor is planned already: call it outside gradhub.compile)",
        )
        if self._graph is None:
            raise RuntimeError("Executor.backward: call forward() before backward()")
        heads, losses = self._graph
        outs: list[NativeVariable] = []
        seeds: list[Any] = []
        for sym, h, og in zip(self._heads, heads, self._out_grads(out_grads)):
            if sym.is_loss:
                continue
            if og is not None:
                arr = og._arr if isinstance(og, NDArray) else np.asarray(og)
                if tuple(arr.shape) != h.shape:
                    raise _MXNetValueError(
                        f"Executor.backward: the head gradient of {sym.name!r} has shape "
                        f"{tuple(arr.shape)} but the output has shape {h.shape}"
                    )
                og = self._device.asarray(arr).astype(h.dtype, copy=False)
            outs.append(h)
            seeds.append(og)
        outs += losses
        seeds += [None] * len(losses)
        for node in self._topo:
            data = node._inputs[0] if node.op == "Embedding" else None
            if (
                data is not None
                and data.op == "null"
                and self._reqs.get(data.name, "null") != "null"
            ):
                raise MXNetError(
                    f"Executor.backward: Embedding {node.name!r}: Embedding layer doesn't support "
                    f"calculate data gradient (bind {data.name!r} with grad_req='null', as mxnet)"
                )
        self._update_moving_stats()
        targets = [n for n in self._names if self._reqs[n] != "null" and self._vars[n].need_grad]
        if not targets:
            return
        xs = [self._vars[n] for n in targets]
        if outs:
            grads = _native_grad(outs, xs, seeds, create_graph=False, unreachable="zero")
        else:
            grads = [None] * len(xs)
        for n, x, g in zip(targets, xs, grads):
            dst = self._grads[n]
            assert dst is not None  # targets have a gradient array (req "null" otherwise)
            arr = self._device.xp.zeros_like(x._data) if g is None else g._data
            if self._reqs[n] == "add":
                dst._arr += arr
            else:
                dst._arr[...] = arr

    def _update_moving_stats(self) -> None:
        """As mxnet 1.9.1's BatchNorm backward: after a ``forward(is_train=True)`` without
        ``use_global_stats``, ``moving = moving * momentum + batch * (1 - momentum)`` in place
        (the batch's biased variance), at each ``backward``."""
        for node, mean, var in self._pending:
            m = node._attrs["momentum"]
            for src, sym in ((mean, node._inputs[3]), (var, node._inputs[4])):
                if sym.op != "null" or sym.name not in self._aux_names:
                    continue
                dst = self._auxs[self._aux_names.index(sym.name)]
                batch = self._device.xp.asarray(src).reshape(dst.shape).astype(dst._arr.dtype)
                dst._arr[...] = dst._arr * m + batch * (1 - m)


def _view(arr: NDArray, shape: tuple[int, ...]) -> NDArray:
    """The first ``prod(shape)`` elements of ``arr`` as an array of ``shape``, sharing memory
    (mxnet's ``NDArray.Reshape`` of a smaller shape)."""
    flat = arr._arr.reshape(-1)
    return NDArray(flat[: math.prod(shape)].reshape(shape), arr.context)


def _allocated(like: NDArray, shape: tuple[int, ...]) -> NDArray:
    """A new zero array of ``shape`` with the dtype and context of ``like``."""
    dev = like.context.device()
    with dev.activate():
        return NDArray(dev.xp.zeros(shape, dtype=like._arr.dtype), like.context)


def _norm(normalization: str, batch: int, valid: int) -> float:
    if normalization == "batch":
        return float(max(batch, 1))
    if normalization == "valid":
        return float(max(valid, 1))
    return 1.0


def _softmax_output(
    node: Symbol, x: NativeVariable, label: NativeVariable, build: _Build
) -> NativeVariable:
    """The value softmax(x) (no gradient) and the loss term whose gradient is mxnet's.

    Normalization follows mxnet's kernel (``softmax_output-inl.h``): without ``multi_output``
    the label has data's shape without the last axis and is flattened to its ``m`` entries;
    ``"batch"`` divides by m. With ``preserve_shape`` each of the m rows reads its own label;
    by default data is viewed as (n, rest) and row ``i`` reads flattened label entry ``i``: only
    the first n of the m entries are class indices (for data of more than 2 axes the others
    count only in the normalizer). With ``multi_output`` (labels (n, d)) ``"null"`` divides by
    d and ``"batch"`` by n * d. ``"valid"`` divides by the number of label entries (all m) not
    equal to ``ignore_label``. A label of data's own shape is a probability target: the
    gradient is ``grad_scale * (softmax(x) - label)``, unnormalized.
    """
    a = node._attrs
    shape = x.shape
    if x.ndim < 1:
        raise ValueError(
            f"SoftmaxOutput {node.name!r}: data must have a batch axis, got a 0-d array"
        )
    n = shape[0]
    xs = x
    if a["multi_output"]:
        axis, lshape = 1, (n, *shape[2:])
        rows = lshape
    elif a["preserve_shape"]:
        axis, lshape = x.ndim - 1, shape[:-1]
        rows = lshape
    else:
        axis, lshape, rows = 1, shape[:-1] if x.ndim >= 2 else (n,), (n,)
        if x.ndim != 2:
            xs = _call("Reshape", x, shape=(n, int(math.prod(shape[1:]))))
    value = _call("Softmax", _block(xs), axis=axis)
    if value.shape != shape:
        value = _call("Reshape", value, shape=shape)
    if label.shape == shape and label.shape != lshape:
        # probabilities as labels: d/dx [logsumexp(x) - sum(label * x)] = softmax(x) - label
        target = _block(label)
        if target.shape != xs.shape:
            target = _call("Reshape", target, shape=xs.shape)
        per = _call("LogSumExp", xs, axis=axis) - _call("Sum", xs * target, axis=axis)
        build.losses.append(_call("Sum", per) * a["grad_scale"])
        return value  # type: ignore[no-any-return]
    if label._creator is not None:
        build.static = False  # class indices read from an intermediate value
    classes = xs.shape[axis]
    use_ignore = bool(a["use_ignore"])
    valid_norm = a["normalization"] == "valid"
    dtype = xs.dtype

    def labels_now() -> list[Any]:
        """The class indices (and the ignore mask, the ``"valid"`` scale) of the label now."""
        labels = np.asarray(label.numpy())
        if labels.size != int(math.prod(lshape)):
            raise ValueError(
                f"SoftmaxOutput {node.name!r}: the label has shape {labels.shape} but data of "
                f"shape {shape} needs labels of shape {lshape}"
            )
        flat = np.trunc(labels.reshape(-1)).astype(np.int64)  # static_cast<int>, as mxnet
        ignored_all = flat == int(a["ignore_label"])
        # the kernel's rows read the first entries of the flattened label (all but the default
        # mode on data of more than 2 axes read every entry)
        size = int(math.prod(rows))
        ints, ignored = flat[:size].reshape(rows), ignored_all[:size].reshape(rows)
        mask = ~ignored if use_ignore else np.ones(ints.shape, dtype=bool)
        bad = mask & ((ints < 0) | (ints >= classes))
        if bad.any():
            raise ValueError(
                f"SoftmaxOutput {node.name!r}: labels must be class indices in [0, {classes}), "
                f"got {ints[bad].tolist()[:5]}"
            )
        out = [np.expand_dims(np.where(mask, ints, 0), axis)]
        if use_ignore:  # (a mask of ones multiplies exactly: the same numbers)
            out.append(np.expand_dims(mask, axis).astype(dtype))
        if valid_norm:
            valid = int(flat.size - ignored_all.sum())
            out.append(np.asarray(a["grad_scale"] / float(max(valid, 1)), dtype=dtype))
        return out

    leaves = build.feed(labels_now, xs)
    per = _call("SoftmaxCrossEntropy", xs, leaves[0], axis=axis)
    if use_ignore:
        per = per * leaves[1]
    total = _call("Sum", per)
    if valid_norm:
        build.losses.append(total * leaves[-1])
        return value  # type: ignore[no-any-return]
    if a["multi_output"]:
        d = int(math.prod(shape[2:]))
        norm = float(d) if a["normalization"] == "null" else float(max(n * d, 1))
    else:
        norm = _norm(a["normalization"], int(math.prod(lshape)), 0)
    build.losses.append(total * (a["grad_scale"] / norm))
    return value  # type: ignore[no-any-return]


def _make_loss(node: Symbol, x: NativeVariable, build: _Build) -> NativeVariable:
    """The value ``x`` (detached) and the loss term ``grad_scale / norm * sum(x)``.

    ``"batch"`` divides as mxnet's kernel, which views data as 2-D (every axis but the last
    flattened into rows): by the product of all axes but the last (1 for 0-d and 1-D data).
    """
    a = node._attrs
    valid = 0
    if a["normalization"] == "valid":
        valid = int((x.numpy() > a["valid_thresh"]).sum())
        build.static = False  # the normalizer is read from the values: built at each forward
    norm = _norm(a["normalization"], int(math.prod(x.shape[:-1])), valid)
    build.losses.append(_call("Sum", x) * (a["grad_scale"] / norm))
    return _block(x)


def _fully_connected(node: Symbol, ins: list[NativeVariable]) -> NativeVariable:
    a = node._attrs
    x, w = ins[0], ins[1]
    b = ins[2] if len(ins) > 2 else None
    nh = a["num_hidden"]
    if a["flatten"]:
        if x.ndim != 2:
            x = _call("Reshape", x, shape=(x.shape[0], int(math.prod(x.shape[1:]))))
        base_axis = 1
    else:
        base_axis = x.ndim - 1
    want = (nh, x.shape[-1])
    wname = node._inputs[1].name
    if w.shape != want:
        raise ValueError(
            f"FullyConnected {node.name!r}: the weight {wname!r} has shape {w.shape}, but data of "
            f"shape {x.shape} and num_hidden={nh} need {want}"
        )
    if b is not None and b.shape == (nh, 1):  # mxnet accepts a (num_hidden, 1) bias
        b = _call("Reshape", b, shape=(nh,))
    if b is not None and b.shape != (nh,):
        raise ValueError(
            f"FullyConnected {node.name!r}: the bias {node._inputs[2].name!r} has shape "
            f"{b.shape}, expected {(nh,)}"
        )
    wt = _call("Transpose", w, axes=(1, 0))
    return _call("Affine", x, wt, b, base_axis=base_axis)  # type: ignore[no-any-return]


def _select(compare: str, x: NativeVariable, y: Any) -> NativeVariable:
    """``x`` where ``compare(x, y)`` holds, else ``y`` (a Variable or a number): ties go to
    ``x``, as mxnet's maximum/minimum gradients."""
    if not isinstance(y, NativeVariable):
        y = _const(np.full(x.shape, y, dtype=x.dtype), x)
    take_x = _call(compare, x, y)  # (recorded, needing no gradient: a plan recomputes it)
    return _call("Where", take_x, x, y)  # type: ignore[no-any-return]


def _same_shape(where: str, name: str, dst: Any, value: Any) -> None:
    """Raise as mxnet (``Shape not match!``) unless ``value`` has the shape of the argument
    array ``dst``: a copy into it never broadcasts (a smaller last batch would be filled with
    repeated rows)."""
    shape = tuple(value.shape) if hasattr(value, "shape") else tuple(np.shape(value))
    if shape != tuple(dst.shape):
        raise ValueError(
            f"{where}: Shape not match! Argument {name}, need: {tuple(dst.shape)}, received: "
            f"{shape} (as mxnet: a copy into a bound array does not broadcast; reshape the "
            "executor for a new shape)"
        )


def _dot(node: Symbol, a: NativeVariable, b: NativeVariable) -> NativeVariable:
    """mxnet's dot: a transposed lhs has its first axis moved last (mxnet transposes it viewed
    as the matrix (shape[0], rest)), a transposed rhs its last axis moved first; both
    flattened to matrices (M, K) @ (K, N) and the shape restored."""
    if node._attrs["transpose_a"] and a.ndim > 1:
        a = _call("Transpose", a, axes=(*range(1, a.ndim), 0))
    if node._attrs["transpose_b"] and b.ndim > 1:
        b = _call("Transpose", b, axes=(b.ndim - 1, *range(b.ndim - 1)))
    if a.ndim == 0 or b.ndim == 0 or a.shape[-1] != b.shape[0]:
        raise ValueError(
            f"dot {node.name!r}: the operands of shapes {a.shape} and {b.shape} (after transpose) "
            "do not match: the last axis of lhs must equal the first axis of rhs"
        )
    out_shape = (*a.shape[:-1], *b.shape[1:]) or (1,)
    k = a.shape[-1]
    am = _call("Reshape", a, shape=(int(math.prod(a.shape[:-1])), k))
    bm = _call("Reshape", b, shape=(k, int(math.prod(b.shape[1:]))))
    return _call("Reshape", am @ bm, shape=out_shape)  # type: ignore[no-any-return]


#: the integer kernels (:func:`~.ndarray.int_kernel`) of the scalar and binary operators
_INT_OPS = {
    "_PlusScalar": "add",
    "_MinusScalar": "sub",
    "_RMinusScalar": "rsub",
    "_MulScalar": "mul",
    "_DivScalar": "div",
    "_RDivScalar": "rdiv",
    "_PowerScalar": "pow",
    "_RPowerScalar": "rpow",
    "_MaximumScalar": "maximum",
    "_MinimumScalar": "minimum",
    "Add2": "add",
    "Sub2": "sub",
    "Mul2": "mul",
    "Div2": "div",
    "Pow2": "pow",
    "GreaterEqual": "maximum",
    "LessEqual": "minimum",
}


def _int_node(node: Symbol, ins: list[NativeVariable]) -> NativeVariable | None:
    """The node computed by mxnet's integer kernels when its inputs are integer arrays (the
    result keeps their dtype, as mxnet and ``infer_type``), as a constant (integers carry no
    gradient); None for the operators without an integer kernel here."""
    op, a = node.op, node._attrs
    attrs: dict[str, Any] = {}
    if op in ("sum", "mean"):
        kernel = op
        attrs = {"axis": reduce_axes(a, ins[0].ndim), "keepdims": a["keepdims"]}
    elif op in UNARY_OPS:
        kernel = op
    elif op in _SCALAR_OPS and op in _INT_OPS:
        kernel, attrs = _INT_OPS[op], {"scalar": a["scalar"]}
    elif op in _BINARY_OPS:
        kernel = _INT_OPS[_BINARY_OPS[op]]
    elif op in _SELECT_OPS:
        kernel = _INT_OPS[_SELECT_OPS[op]]
    else:
        return None
    res = int_kernel(kernel, [np.asarray(v.numpy()) for v in ins], **attrs)
    return _const(res.reshape(res.shape or (1,)), ins[0])


def _run_node(node: Symbol, ins: list[NativeVariable], build: _Build) -> Any:
    op = node.op
    if ins and all(v.dtype.kind in "iu" for v in ins):
        r = _int_node(node, ins)
        if r is not None:
            build.static = False  # (computed here, not by a plan)
            return r
    if op == "FullyConnected":
        return _fully_connected(node, ins)
    if op == "Activation":
        return _call(_ACTIVATIONS[node._attrs["act_type"]], ins[0])
    if op == "SoftmaxOutput":
        return _softmax_output(node, ins[0], ins[1], build)
    if op == "MakeLoss":
        return _make_loss(node, ins[0], build)
    if op == "make_loss":  # the loss term sum(x): its gradient is 1 everywhere
        build.losses.append(_call("Sum", ins[0]))
        return _block(ins[0])
    if op in ("sum", "mean"):
        a = node._attrs
        # axis=() (mxnet's default) reduces every axis; exclude=True the axes not given
        axis = reduce_axes(a, ins[0].ndim)
        r = _call("Sum" if op == "sum" else "Mean", ins[0], axis=axis, keepdims=a["keepdims"])
        return r if r.ndim else _call("Reshape", r, shape=(1,))
    if op in _COMPARE_OPS:
        return _compare(node, ins)
    if op in UNARY_OPS:
        if op == "square":
            return _call("PowScalar", ins[0], val=2.0)
        return _call(UNARY_OPS[op], ins[0])
    if op == "BlockGrad":
        return _block(ins[0])
    if op in _SCALAR_OPS:
        return _SCALAR_OPS[op](ins[0], node._attrs["scalar"])
    if op in _BINARY_OPS:
        return _call(_BINARY_OPS[op], ins[0], ins[1])
    if op in _SELECT_OPS:
        return _select(_SELECT_OPS[op], ins[0], ins[1])
    if op == "dot":
        return _dot(node, ins[0], ins[1])
    if op in _LAYERS:
        return _LAYERS[op](node, ins, build)
    if op == "softmax":
        t = node._attrs["t"]
        return _call(
            "Softmax", ins[0] if t == 1.0 else ins[0] * (1.0 / t), axis=node._attrs["axis"]
        )
    raise NotImplementedError(f"mxnet operator {op!r} ({node.name!r}) is not supported")


# -- convolutional layers: the gradhub functions and formulas of mx.nd's (_nd_layers.py) --------


def _convolution(node: Symbol, ins: list[NativeVariable], build: _Build) -> NativeVariable:
    """``mx.nd.Convolution``'s gradhub function ``Convolution`` (weight, bias checked as
    mxnet's shape inference does)."""
    a = node._attrs
    x, w = ins[0], ins[1]
    k = a["kernel"]
    if x.ndim != len(k) + 2:
        raise ValueError(
            f"Convolution {node.name!r}: data of shape {x.shape} does not fit the {len(k)}-D "
            f"kernel {k}"
        )
    want = (a["num_filter"], x.shape[1] // a["num_group"], *k)
    if w.shape != want:
        raise ValueError(
            f"Convolution {node.name!r}: the weight {node._inputs[1].name!r} has shape "
            f"{w.shape}, but data of shape {x.shape} needs {want}"
        )
    attrs = {
        "pad": a["pad"],
        "stride": a["stride"],
        "dilation": a["dilate"],
        "group": a["num_group"],
    }
    return _call("Convolution", *ins, **attrs)  # type: ignore[no-any-return]


def _deconvolution(node: Symbol, ins: list[NativeVariable], build: _Build) -> NativeVariable:
    """``mx.nd.Deconvolution``'s gradhub function ``Deconvolution`` (attributes from
    :func:`~._nd_layers.deconv_attrs`; weight and bias checked as mxnet's shape inference)."""
    from ._nd_layers import deconv_attrs

    a = node._attrs
    x, w = ins[0], ins[1]
    k, nf, g = a["kernel"], a["num_filter"], a["num_group"]
    if x.ndim != len(k) + 2:
        raise ValueError(
            f"Deconvolution {node.name!r}: data of shape {x.shape} does not fit the "
            f"{len(k)}-D kernel {k}"
        )
    attrs = deconv_attrs(
        f"Deconvolution {node.name!r}",
        tuple(x.shape),
        k,
        a["stride"],
        a["dilate"],
        a["pad"],
        a["adj"],
        a["target_shape"],
        nf,
        g,
    )
    want = (x.shape[1], nf // g, *k)
    if w.shape != want:
        raise ValueError(
            f"Deconvolution {node.name!r}: the weight {node._inputs[1].name!r} has shape "
            f"{w.shape}, but data of shape {x.shape} needs {want}"
        )
    b = ins[2] if len(ins) > 2 else None
    if b is not None and b.shape != (nf,):
        raise ValueError(
            f"Deconvolution {node.name!r}: the bias {node._inputs[2].name!r} has shape "
            f"{b.shape}, expected {(nf,)}"
        )
    return _call("Deconvolution", x, w, b, **attrs)  # type: ignore[no-any-return]


def _pooling(node: Symbol, ins: list[NativeVariable], build: _Build) -> NativeVariable:
    """``mx.nd.Pooling``'s gradhub functions (``MaxPooling``, ``AveragePooling`` times the
    window size for ``sum``)."""
    a = node._attrs
    x = ins[0]
    nsp = x.ndim - 2
    spatial = x.shape[2:]
    if a["global_pool"]:
        k: tuple[int, ...] = tuple(spatial)
        st: tuple[int, ...] = (1,) * nsp
        pd: tuple[int, ...] = (0,) * nsp
    else:
        k, st, pd = a["kernel"], a["stride"] or (1,) * nsp, a["pad"] or (0,) * nsp
        if a["pooling_convention"] == "full":
            for L, kk, s_, p in zip(spatial, k, st, pd):
                if (L + 2 * p - kk) % s_:
                    raise NotImplementedError(
                        f"Pooling {node.name!r}: pooling_convention='full' with partial windows "
                        f"(input {spatial}, kernel {k}, stride {st}, pad {pd}) is not supported "
                        "(docs/migration-mxnet.md)"
                    )
    attrs: dict[str, Any] = {"kernel": k, "stride": st, "pad": pd, "ignore_border": True}
    if a["pool_type"] == "max":
        return _call("MaxPooling", x, **attrs)  # type: ignore[no-any-return]
    include = True if a["count_include_pad"] is None else bool(a["count_include_pad"])
    if a["pool_type"] == "sum":
        include = True
    y = _call("AveragePooling", x, including_pad=include, **attrs)
    if a["pool_type"] == "sum":
        return _call("MulScalar", y, val=float(math.prod(k)))  # type: ignore[no-any-return]
    return y  # type: ignore[no-any-return]


def _flatten(node: Symbol, ins: list[NativeVariable], build: _Build) -> NativeVariable:
    x = ins[0]
    shape = (x.shape[0], int(math.prod(x.shape[1:])))
    return _call("Reshape", x, shape=shape)  # type: ignore[no-any-return]


def _dropout(node: Symbol, ins: list[NativeVariable], build: _Build) -> NativeVariable:
    """``mx.nd.Dropout``'s formula: ``x * mask``, the mask (keep with probability ``1 - p``,
    scaled by ``1 / (1 - p)``) drawn from ``gradhub.random.generator()`` before each run;
    ``x * 1`` when not training (as mxnet, the gradient passes)."""
    import gradhub.random

    a = node._attrs
    x = ins[0]
    p = a["p"]
    if not ((a["mode"] == "always" or build.is_train) and p > 0.0):
        return _call("MulScalar", x, val=1.0)  # type: ignore[no-any-return]
    axes = {d % x.ndim for d in a["axes"]}
    mshape = tuple(1 if i in axes else s for i, s in enumerate(x.shape))
    dtype = x.dtype
    shape = x.shape

    def mask_now() -> list[Any]:
        keep = gradhub.random.generator().random(mshape) >= p
        scale = 0.0 if p >= 1.0 else 1.0 / (1.0 - p)
        mask = np.broadcast_to((keep * scale).astype(dtype), shape)
        return [np.ascontiguousarray(mask)]

    (mask,) = build.feed(mask_now, x)
    return x * mask  # type: ignore[no-any-return]


def _batch_norm(node: Symbol, ins: list[NativeVariable], build: _Build) -> NativeVariable:
    """``mx.nd.BatchNorm``'s formula: ``(x - mean) * (var + eps)^-1/2 * gamma + beta``; in
    training (without ``use_global_stats``) the batch's mean and biased variance, recorded in
    ``build.stats`` for the update at ``backward``. With ``output_mean_var`` the three output
    nodes share one computation: the mean and ``(var + eps)^-1/2`` (mxnet 1.9.1's outputs,
    without gradients)."""
    a = node._attrs
    key = output_key(node) if is_multi_output(node) else None
    if key is not None and key in build.shared:
        return build.shared[key][a["index"]]
    x, g, b, mm, mv = ins
    ax = a["axis"] % x.ndim
    c = x.shape[ax]
    for i, v in enumerate(ins[1:], 1):
        if v.shape != (c,):
            raise ValueError(
                f"BatchNorm {node.name!r}: {node._inputs[i].name!r} has shape {v.shape}, data of "
                f"shape {x.shape} needs ({c},) (axis {ax})"
            )
    bshape = tuple(c if i == ax else 1 for i in range(x.ndim))
    red = tuple(i for i in range(x.ndim) if i != ax)
    half = np.dtype(x.dtype) == np.float16
    if half:  # as mxnet: float16 data is normalized in float32 (the parameters' dtype)
        x = _call("cast", x, dtype="float32")
    if build.is_train and not a["use_global_stats"]:
        mean = _call("Mean", x, axis=red, keepdims=True)
        d = x - mean
        var = _call("Mean", d * d, axis=red, keepdims=True)
        build.stats.append((node, mean, var))
    else:
        d = x - _call("Reshape", mm, shape=bshape)
        var = _call("Reshape", mv, shape=bshape)
    inv = _call("PowScalar", _call("AddScalar", var, val=a["eps"]), val=-0.5)
    y = d * inv
    if a["fix_gamma"]:  # gamma is 1: it takes part with a zero gradient (as mxnet)
        y = y + _call("MulScalar", _call("Reshape", g, shape=bshape), val=0.0)
    else:
        y = y * _call("Reshape", g, shape=bshape)
    y = y + _call("Reshape", b, shape=bshape)
    if half:
        y = _call("cast", y, dtype="float16")
    if key is None:
        return y  # type: ignore[no-any-return]
    mean_out = mean if build.is_train and not a["use_global_stats"] else mm
    outs = [
        y,
        _block(_call("Reshape", mean_out, shape=(c,))),
        _block(_call("Reshape", inv, shape=(c,))),
    ]
    build.shared[key] = outs
    return outs[a["index"]]


def _reshape(node: Symbol, ins: list[NativeVariable], build: _Build) -> NativeVariable:
    from .ndarray import _mx_reshape

    x = ins[0]
    target = _mx_reshape(tuple(x.shape), node._attrs["shape"], node._attrs["reverse"])
    return _call("Reshape", x, shape=target)  # type: ignore[no-any-return]


def _concat(node: Symbol, ins: list[NativeVariable], build: _Build) -> NativeVariable:
    """``mx.nd.concat``'s gradhub function ``concatenate`` (one input: a reshaped copy)."""
    ax = node._attrs["dim"] % ins[0].ndim
    if len(ins) == 1:
        return _call("Reshape", ins[0], shape=ins[0].shape)  # type: ignore[no-any-return]
    return _call("concatenate", *ins, axis=ax)  # type: ignore[no-any-return]


def _embedding(node: Symbol, ins: list[NativeVariable], build: _Build) -> NativeVariable:
    """``mx.nd.Embedding``'s rule: the indices truncated and clipped to ``[0, input_dim - 1]``
    (a leaf recomputed from the data before each planned run), then ``Embed``."""
    x, w = ins
    a = node._attrs
    want = (a["input_dim"], a["output_dim"])
    if w.shape != want:
        raise ValueError(
            f"Embedding {node.name!r}: the weight {node._inputs[1].name!r} has shape {w.shape}, "
            f"expected {want}"
        )
    if x._creator is not None:
        build.static = False  # indices read from an intermediate value

    def indices_now() -> list[Any]:
        idx = np.asarray(x.numpy())
        return [np.clip(np.trunc(idx).astype(np.int64), 0, a["input_dim"] - 1)]

    (ids,) = build.feed(indices_now, w)
    return _call("Embed", ids, w)  # type: ignore[no-any-return]


def _leaky_relu(node: Symbol, ins: list[NativeVariable], build: _Build) -> NativeVariable:
    """The gradhub functions of ``mx.nd.LeakyReLU`` (``LeakyReLU``, ``ELU``, ``SELU``,
    ``GELU``; prelu as ``max(x, 0) + gamma * min(x, 0)``)."""
    a = node._attrs
    x = ins[0]
    t, s = a["act_type"], a["slope"]
    if t == "leaky":
        return _call("LeakyReLU", x, alpha=s)  # type: ignore[no-any-return]
    if t == "elu":
        return _call("ELU", x, alpha=s)  # type: ignore[no-any-return]
    if t == "selu":
        return _call("SELU", x)  # type: ignore[no-any-return]
    if t == "gelu":
        return _call("GELU", x)  # type: ignore[no-any-return]
    g = ins[1]
    if x.ndim < 2 or g.shape not in ((1,), (x.shape[1],)):
        raise ValueError(
            f"LeakyReLU {node.name!r}: gamma of shape {g.shape} does not fit data of shape "
            f"{x.shape} (one value, or one per channel of axis 1)"
        )
    bshape = (1,) * x.ndim if g.size == 1 else (1, x.shape[1]) + (1,) * (x.ndim - 2)
    gb = _call("Reshape", g, shape=bshape)
    pos = _call("MaximumScalar", x, val=0.0)
    neg = _call("MinimumScalar", x, val=0.0)
    return pos + gb * neg  # type: ignore[no-any-return]


def _transpose(node: Symbol, ins: list[NativeVariable], build: _Build) -> NativeVariable:
    x = ins[0]
    axes = node._attrs["axes"] or tuple(range(x.ndim - 1, -1, -1))
    return _call("transpose", x, axes=axes)  # type: ignore[no-any-return]


def _expand_dims(node: Symbol, ins: list[NativeVariable], build: _Build) -> NativeVariable:
    x = ins[0]
    ax = node._attrs["axis"] % (x.ndim + 1)
    return _call("Reshape", x, shape=(*x.shape[:ax], 1, *x.shape[ax:]))  # type: ignore[no-any-return]


def _clip(node: Symbol, ins: list[NativeVariable], build: _Build) -> NativeVariable:
    """``max(x, a_min)`` then ``min(., a_max)`` by recorded selections: the gradient passes
    where ``a_min <= x <= a_max`` (ties pass, as mxnet's)."""
    x = ins[0]
    dt = np.dtype(x.dtype)
    lo, hi = dt.type(node._attrs["a_min"]), dt.type(node._attrs["a_max"])
    return _select("LessEqual", _select("GreaterEqual", x, lo), hi)


def _log_softmax(node: Symbol, ins: list[NativeVariable], build: _Build) -> NativeVariable:
    """``mx.nd.log_softmax``'s formula: ``LogSoftmax(x / t, axis)``."""
    x, t = ins[0], node._attrs["t"]
    if t != 1.0:
        x = _divide(x, t)
    return _call("LogSoftmax", x, axis=node._attrs["axis"] % x.ndim)  # type: ignore[no-any-return]


def _regression(node: Symbol, ins: list[NativeVariable], build: _Build) -> NativeVariable:
    """The value (``data``, or its sigmoid) with no graph behind it and the loss term whose
    exact gradient is mxnet's ``grad_scale / m * (out - label)`` (``sign(out - label)`` for
    MAE), ``m = label.size / label.shape[0]``: ``0.5 (x - label)^2``, ``softplus(x) - label x``,
    ``|x - label|``, summed and scaled."""
    x, label = ins
    if label.size != x.size or (label.ndim and label.shape[0] != x.shape[0]):
        raise ValueError(
            f"{node.op} {node.name!r}: the label has shape {label.shape}, data {x.shape}"
        )
    target = _block(label)
    if target.shape != x.shape:
        target = _call("Reshape", target, shape=x.shape)
    scale = node._attrs["grad_scale"] / (label.size / label.shape[0] if label.ndim else 1.0)
    if node.op == "LinearRegressionOutput":
        d = x - target
        build.losses.append(_call("Sum", d * d) * (0.5 * scale))
        return _block(x)
    if node.op == "MAERegressionOutput":
        build.losses.append(_call("Sum", _call("Abs", x - target)) * scale)
        return _block(x)
    build.losses.append(_call("Sum", _call("Softplus", x) - target * x) * scale)
    return _call("Sigmoid", _block(x))  # type: ignore[no-any-return]


def _slice_channel(node: Symbol, ins: list[NativeVariable], build: _Build) -> NativeVariable:
    """One output of ``SliceChannel``: ``mx.nd.split``'s ``Slice`` (and ``Reshape`` with
    ``squeeze_axis``)."""
    a = node._attrs
    x = ins[0]
    ax = a["axis"] % x.ndim
    step = x.shape[ax] // a["num_outputs"]
    i = a["index"]
    start = tuple(i * step if d == ax else 0 for d in range(x.ndim))
    stop = tuple((i + 1) * step if d == ax else s for d, s in enumerate(x.shape))
    y = _call("Slice", x, start=start, stop=stop, step=(1,) * x.ndim)
    if a["squeeze_axis"]:
        y = _call("Reshape", y, shape=tuple(s for d, s in enumerate(x.shape) if d != ax))
    return y  # type: ignore[no-any-return]


#: the comparison operators: the gradhub function comparing (``x0 > x1``...)
_COMPARE_OPS = {
    "_Greater": "Greater",
    "_GreaterEqual": "GreaterEqual",
    "_Lesser": "Less",
    "_LesserEqual": "LessEqual",
    "_GreaterScalar": "Greater",
    "_GreaterEqualScalar": "GreaterEqual",
    "_LesserScalar": "Less",
    "_LesserEqualScalar": "LessEqual",
}


def _compare(node: Symbol, ins: list[NativeVariable]) -> NativeVariable:
    """mxnet's comparisons: 1 where the comparison holds, else 0, in the input's dtype, without
    gradient (a recorded comparison, so that a plan recomputes it)."""
    x = ins[0]
    if len(ins) == 1:
        y = _const(np.full(x.shape, node._attrs["scalar"], dtype=x.dtype), x)
    else:
        y = ins[1]
        if y.dtype != x.dtype:
            y = _call("cast", y, dtype=np.dtype(x.dtype).name)
    hit = _call(_COMPARE_OPS[node.op], x, y)
    one = _const(np.ones(hit.shape, dtype=x.dtype), x)
    zero = _const(np.zeros(hit.shape, dtype=x.dtype), x)
    return _call("Where", hit, one, zero)  # type: ignore[no-any-return]


def _reshape_like(node: Symbol, ins: list[NativeVariable], build: _Build) -> NativeVariable:
    """``lhs`` reshaped to ``rhs``'s shape (``rhs`` gets no gradient)."""
    x, like = ins
    if x.size != like.size:
        raise ValueError(
            f"reshape_like {node.name!r}: lhs of shape {x.shape} and rhs of shape {like.shape} "
            "have different sizes"
        )
    return _call("Reshape", x, shape=like.shape)  # type: ignore[no-any-return]


def _pick(node: Symbol, ins: list[NativeVariable], build: _Build) -> NativeVariable:
    """``mx.nd.pick``'s rule: ``sum(x * onehot(index), axis)``, the one-hot mask (indices
    truncated, clipped or wrapped) a leaf recomputed from the index array before each planned
    run (the graph is built again at each forward when the index is computed by the graph)."""
    x, index = ins
    a = node._attrs
    ax = a["axis"] % x.ndim
    n = x.shape[ax]
    rest = x.shape[:ax] + x.shape[ax + 1 :]
    if index.size != int(math.prod(rest)):
        raise ValueError(
            f"pick {node.name!r}: the index has shape {index.shape}, data of shape {x.shape} "
            f"needs {rest or (1,)} (data's shape without axis {ax})"
        )
    if index._creator is not None:
        build.static = False  # (indices read from an intermediate value)
    dtype = x.dtype
    wrap = a["mode"] == "wrap"

    def mask_now() -> list[Any]:
        idx = np.asarray(index.numpy()).astype(np.float64)
        with np.errstate(invalid="ignore"):
            k = np.trunc(idx).astype(np.int64).reshape(rest)
        k = np.mod(k, n) if wrap else np.clip(k, 0, n - 1)
        return [np.ascontiguousarray(np.moveaxis(np.eye(n, dtype=dtype)[k], -1, ax))]

    (mask,) = build.feed(mask_now, x)
    y = _call("Sum", x * mask, axis=ax, keepdims=a["keepdims"])
    return _call("Reshape", y, shape=y.shape or (1,))  # type: ignore[no-any-return]


def _where(node: Symbol, ins: list[NativeVariable], build: _Build) -> NativeVariable:
    """``mx.nd.where``'s rule: ``Where(condition != 0, x, y)``, a 1-D condition selecting rows
    of the first axis (recorded: a plan recomputes the condition)."""
    c, x, y = ins
    if x.shape != y.shape:
        raise ValueError(f"where {node.name!r}: x of shape {x.shape} and y of {y.shape} differ")
    if c.shape != x.shape:
        if not (c.ndim == 1 and x.ndim >= 1 and c.shape[0] == x.shape[0]):
            raise ValueError(
                f"where {node.name!r}: the condition of shape {c.shape} must have x's shape "
                f"{x.shape} or be 1-D of length {x.shape[0] if x.ndim else 0}"
            )
        c = _call("Reshape", c, shape=(c.shape[0],) + (1,) * (x.ndim - 1))
        c = _call("BroadcastTo", c, shape=x.shape)
    hit = _call("NotEqual", c, _const(np.zeros(c.shape, dtype=c.dtype), c))
    return _call("Where", hit, x, y)  # type: ignore[no-any-return]


def _ctc_loss(node: Symbol, ins: list[NativeVariable], build: _Build) -> NativeVariable:
    """``mx.nd.CTCLoss``'s recursion (:func:`~._nd_losses.ctc_native`); its constant tables
    (classes of the extended labels, allowed skips, step masks) are leaves recomputed from the
    label and length arrays before each planned run (the graph is built again at each forward
    when they are computed by the graph)."""
    from ._nd_losses import ctc_native, ctc_tables

    a = node._attrs
    x, label = ins[0], ins[1]
    rest = list(ins[2:])
    dl = rest.pop(0) if a["use_data_lengths"] else None
    ll = rest.pop(0) if a["use_label_lengths"] else None
    if x.ndim != 3:
        raise ValueError(
            f"CTCLoss {node.name!r}: data must have shape (sequence_length, batch, "
            f"alphabet_size), got {x.shape}"
        )
    if any(v is not None and v._creator is not None for v in (label, dl, ll)):
        build.static = False  # (labels or lengths read from an intermediate value)
    shape, dtype = tuple(x.shape), x.dtype

    def tables_now() -> list[Any]:
        return ctc_tables(
            f"CTCLoss {node.name!r}",
            label.numpy(),
            shape,
            None if dl is None else dl.numpy(),
            None if ll is None else ll.numpy(),
            a["blank_label"] == "first",
            dtype,
        )

    return ctc_native(x, build.feed(tables_now, x))


def _swapaxes(node: Symbol, ins: list[NativeVariable], build: _Build) -> NativeVariable:
    x = ins[0]
    d1, d2 = node._attrs["dim1"] % x.ndim, node._attrs["dim2"] % x.ndim
    axes = list(range(x.ndim))
    axes[d1], axes[d2] = d2, d1
    return _call("transpose", x, axes=tuple(axes))  # type: ignore[no-any-return]


_LAYERS: dict[str, Callable[[Symbol, list[NativeVariable], _Build], NativeVariable]] = {
    "CTCLoss": _ctc_loss,
    "reshape_like": _reshape_like,
    "pick": _pick,
    "where": _where,
    "SwapAxis": _swapaxes,
    "SliceChannel": _slice_channel,
    "Convolution": _convolution,
    "Deconvolution": _deconvolution,
    "Pooling": _pooling,
    "Flatten": _flatten,
    "Dropout": _dropout,
    "BatchNorm": _batch_norm,
    "Reshape": _reshape,
    "Concat": _concat,
    "Embedding": _embedding,
    "LeakyReLU": _leaky_relu,
    "transpose": _transpose,
    "expand_dims": _expand_dims,
    "clip": _clip,
    "log_softmax": _log_softmax,
    "LinearRegressionOutput": _regression,
    "LogisticRegressionOutput": _regression,
    "MAERegressionOutput": _regression,
    **_sym_norm.EXECUTOR_KERNELS,
    **_sym_ops_more.EXECUTOR_KERNELS,
}
