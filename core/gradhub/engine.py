"""The grad engine: the only module that walks the graph.

Every walk is iterative (an explicit stack, then nodes sorted by their creation number ``seq``;
producers are always created before their consumers), so graphs of any depth work without
recursion.

* :func:`backward` accumulates d(y)/d(leaf) into the leaves' ``.g``.
* :func:`grad` returns d(outputs)/d(inputs), running rules only on nodes on a path from the inputs
  to the outputs.
* :func:`reexecute` recomputes a graph from its leaves' current data (``y.forward()``).
* :func:`forward_tangents` (and :func:`forward_plan`) push tangents forward through a graph
  (forward mode), applying each function's JVP rule.

Both walks accept ``communicator_callbacks`` (:class:`BackwardCallback`): objects told each
leaf's gradient as soon as it is final, while the walk goes on (data-parallel training starts
the all-reduce of those gradients there), and once more when the walk ends, before the gradients
are delivered.
"""

from __future__ import annotations

import math
import operator
import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NoReturn, Protocol, runtime_checkable

import numpy as np

from . import batching as _batching
from . import variable as _variable
from .batching import BatchedVariable
from .errors import BackwardRuleError, DeviceError, GradhubError
from .graph import Node, _device_of, _kernel_error, _kernel_result, input_name
from .graph import _seq as _node_seq
from .memory import MIN_BYTES as _REUSE_MIN
from .memory import binary as _into_reused
from .memory import sole_owner as _sole_owner
from .modes import set_recording
from .modes import state as _mode
from .ops import call
from .registry import REGISTRY, FunctionDef, Provider, Rule
from .variable import _NUMERIC, Variable, _data_error, _to_array, bind_engine

_UNREACHABLE = ("zero", "none", "error")


@runtime_checkable
class BackwardCallback(Protocol):
    """What ``backward(communicator_callbacks=...)`` and ``grad(..., communicator_callbacks=...)``
    call (nnabla's ``communicator_callbacks``; gradhub-mpi's ``all_reduce_callback`` is one).

    ``on_grad_final(leaf, grad)`` is called once per leaf that needs a gradient and gets one, as
    soon as no function left in the walk adds to it: ``grad.d`` is the gradient this call
    computed for ``leaf`` (not yet added to ``leaf.g``, which still holds what earlier calls
    accumulated). The callback must not write into ``grad.d``; it may assign ``grad.d`` a new
    array (same shape) up to the end of ``on_finish_backward()``, which is called once when the
    walk is over and before the gradients are delivered (added to ``.g`` by ``backward``,
    returned by ``grad``): what ``grad.d`` then holds is delivered. The walk does not wait for
    the callbacks; the leaves are told in the order their gradients become final (for a network,
    from the last layer to the first). Without callbacks the walk does no extra work.
    """

    def on_grad_final(self, leaf: Variable, grad: Variable) -> None: ...

    def on_finish_backward(self) -> None: ...


def _callback_list(callbacks: Any, create_graph: bool, where: str) -> list[Any] | None:
    """``communicator_callbacks`` as a list (None when there are none), checked."""
    if callbacks is None:
        return None
    cbs = list(callbacks) if isinstance(callbacks, (list, tuple)) else [callbacks]
    for k, cb in enumerate(cbs):
        if not isinstance(cb, BackwardCallback):
            raise TypeError(
                f"{where}: communicator_callbacks[{k}] must have the methods on_grad_final(leaf, "
                f"grad) and on_finish_backward() (gradhub.engine.BackwardCallback), got "
                f"{type(cb).__name__}"
            )
    if create_graph and cbs:
        raise ValueError(
            f"{where}: communicator_callbacks need create_graph=False (what they do to the "
            "gradients is not recorded in the graph)"
        )
    return cbs or None


class _Notifier:
    """Tells the callbacks each leaf's gradient once the last node adding to it has run."""

    def __init__(self, callbacks: list[Any], grads: _Grads) -> None:
        self.callbacks = callbacks
        self.grads = grads
        #: id(leaf) -> (leaf, the Variable given to the callbacks)
        self.told: dict[int, tuple[Variable, Variable]] = {}

    def walk(self, nodes: list[Node]) -> Iterator[Node]:
        """``reversed(nodes)``; after each node has run (when the loop asks for the next one),
        the leaves whose last consumer it was are told."""
        last: dict[Node, list[Variable]] = {}
        seen: set[int] = set()
        for node in nodes:  # producers first: a leaf's first consumer here is the last to run
            for src, idx in zip(node.srcs, node.idxs):
                if idx < 0 and src._need_grad and id(src) not in seen:
                    seen.add(id(src))
                    last.setdefault(node, []).append(src)
        for node in reversed(nodes):
            yield node
            for leaf in last.get(node, ()):
                self.tell(leaf)

    def _each(self, call: Callable[[Any], None]) -> None:
        """``call`` on each callback. While gradhub.compile traces a step, the assignments to
        ``.d`` and ``.g`` that the callbacks make are not the step's own (the walk, callbacks
        included, runs again at every replay): the trace's observer is not told of them (see
        :func:`gradhub.variable.set_observer`)."""
        before = _variable.set_observer(None)
        try:
            for cb in self.callbacks:
                call(cb)
        finally:
            _variable.set_observer(before)

    def tell(self, leaf: Variable) -> None:
        if id(leaf) in self.told:
            return
        item = self.grads.leaves.get(id(leaf))
        if item is None:  # no gradient reached it
            return
        g = Variable._new(item[1], False, None, 0)
        self.told[id(leaf)] = (leaf, g)
        self._each(lambda cb: cb.on_grad_final(leaf, g))

    def finish(self) -> None:
        """Tell the leaves not told yet (outputs that are leaves themselves), end the callbacks
        and take what they left in the gradients."""
        for leaf, _ in list(self.grads.leaves.values()):
            if leaf._need_grad:
                self.tell(leaf)
        self._each(lambda cb: cb.on_finish_backward())
        for key, (leaf, g) in self.told.items():
            self.grads.leaves[key] = (leaf, g._data)


def _as_list(x: Any, what: str) -> list[Any]:
    if isinstance(x, Variable):
        return [x]
    if isinstance(x, (list, tuple)):
        return list(x)
    if hasattr(x, "__iter__") and not isinstance(x, (str, np.ndarray)):
        return list(x)
    raise TypeError(f"grad: {what} must be a Variable or a sequence of Variables, got {x!r}")


def _seed(
    y: Variable, g: Any, loss_scale: float | None, where: str, what: str = "the output"
) -> Variable:
    """The incoming gradient of an output: ones (times loss_scale) when ``g`` is None."""
    if g is None and type(y._data) is np.ndarray:  # the common case, on the CPU
        arr = _cpu_ones(y._data)
        if loss_scale is not None:
            arr *= loss_scale
        return Variable._new(arr, False, None, 0)
    dev = y.device
    if g is None:
        with dev.activate():
            arr = dev.xp.ones(y._data.shape, dtype=y._data.dtype)
            if loss_scale is not None:
                arr *= loss_scale
        return Variable._new(arr, False, None, 0)
    if isinstance(g, Variable):
        if g.shape != y.shape:
            raise ValueError(f"{where} has shape {g.shape} but {what} has shape {y.shape}")
        if g.device.name != dev.name:
            raise DeviceError(
                f"{where} is on {g.device.name} but {what} is on {dev.name}; move it first "
                "(Variable.to)"
            )
        if g.dtype == y.dtype:
            return g
        if g._creator is not None or g._need_grad:  # a graph Variable cannot be cast here
            raise ValueError(f"{where} has dtype {g.dtype} but {what} has dtype {y.dtype}")
        g = g._data  # a constant: cast below, like an array
    if isinstance(g, (int, float, np.integer, np.floating)):
        with dev.activate():
            arr = dev.xp.full(y._data.shape, g, dtype=y._data.dtype)
        return Variable._new(arr, False, None, 0)
    arr = _to_array(g, dev)
    if arr.dtype.kind not in _NUMERIC:  # strings are not read as numbers, None not as NaN
        raise _data_error(where, g, arr.dtype)
    if tuple(arr.shape) != y.shape:
        raise ValueError(f"{where} has shape {tuple(arr.shape)} but {what} has shape {y.shape}")
    if arr.dtype != y._data.dtype:
        arr = arr.astype(y._data.dtype)
    return Variable._new(arr, False, None, 0)


def _cpu_ones(like: np.ndarray) -> np.ndarray:
    """Ones shaped like a numpy array: ``np.array`` for 0-d (the usual loss), else empty + fill;
    both several times cheaper than ``np.ones`` at the sizes of a seed."""
    if not like.ndim:
        return np.array(1, dtype=like.dtype)
    arr = np.empty(like.shape, dtype=like.dtype)
    arr.fill(1)
    return arr


def _add(a: Variable, b: Variable) -> Variable:
    if not _mode.recording:
        return Variable._new(_add_arrays(a._data, b._data), False, None, 0)
    return call("Add2", a, b)


def _add_arrays(a: Any, b: Any) -> Any:
    """``a + b`` of two arrays of one device, made current for the sum when it is not device 0
    (CuPy computes on the current device)."""
    if type(a) is np.ndarray:
        r = a + b
        return r if type(r) is np.ndarray else np.asarray(r)  # numpy scalars from 0-d sums
    dev = REGISTRY.array_device(a)
    if dev is None:
        return a + b
    with dev.activate():
        r = a + b
    return r if type(r) is type(a) else dev.asarray(r)


def _copy_array(a: Any) -> Any:
    """A copy of ``a`` on its own device (CuPy copies onto the current one)."""
    dev = None if type(a) is np.ndarray else REGISTRY.array_device(a)
    if dev is None:
        return a.copy()
    with dev.activate():
        return a.copy()


class _Grads:
    """Gradients accumulated per graph position: (node, output index) or a leaf Variable.

    In first-order mode (``arrays=True``) the values are raw arrays, otherwise Variables whose
    additions are recorded in the graph.
    """

    def __init__(self, arrays: bool) -> None:
        self.arrays = arrays
        self.nodes: dict[Node, list[Any]] = {}
        self.leaves: dict[int, tuple[Variable, Any]] = {}

    def _plus(self, a: Any, b: Any) -> Any:
        if self.arrays:
            if type(a) is np.ndarray:
                if a.nbytes >= _REUSE_MIN:
                    return _into_reused(np.add, a, b)  # large sums: no page faults per step
                r = a + b
                return r if type(r) is np.ndarray else np.asarray(r)  # numpy scalars (0-d sums)
            return _add_arrays(a, b)  # another device: made current for the sum
        return _add(a, b)

    def add(self, src: Any, idx: int, g: Any) -> None:
        if idx < 0:
            key = id(src)
            prev = self.leaves.get(key)
            self.leaves[key] = (src, g if prev is None else self._plus(prev[1], g))
            return
        lst = self.nodes.get(src)
        if lst is None:
            lst = self.nodes[src] = [None] * len(src.out_shapes)
        prev_g = lst[idx]
        lst[idx] = g if prev_g is None else self._plus(prev_g, g)

    def at(self, v: Variable) -> Any:
        """The gradient at ``v``'s position as it is held (an array or a Variable), or None."""
        if v._creator is None:
            item = self.leaves.get(id(v))
            return None if item is None else item[1]
        lst = self.nodes.get(v._creator)
        return None if lst is None else lst[v._idx]

    def get(self, v: Variable) -> Variable | None:
        """The gradient at ``v``'s position as a Variable, or None."""
        g = self.at(v)
        if g is None or not self.arrays:
            return g
        return Variable._new(g, False, None, 0)

    def leaf_items(self) -> list[tuple[Variable, Variable]]:
        if not self.arrays:
            return list(self.leaves.values())
        return [(leaf, Variable._new(g, False, None, 0)) for leaf, g in self.leaves.values()]


def _position(v: Variable) -> tuple[Any, int]:
    return (v, -1) if v._creator is None else (v._creator, v._idx)


def _collect(
    roots: Sequence[Node], only_need_grad: bool, leaves: set[int] | None = None
) -> list[Node]:
    """Nodes reachable upstream from ``roots``, sorted producers first. ``leaves``, if given,
    receives the ids of the leaves needing a gradient that were reached."""
    seen = set(roots)
    stack = list(roots)
    while stack:
        n = stack.pop()
        for src in n.srcs:
            if type(src) is Node:
                if src not in seen and (src.need_grad or not only_need_grad):
                    seen.add(src)
                    stack.append(src)
            elif leaves is not None and src._need_grad:
                leaves.add(id(src))
    return sorted(seen, key=_seq_key)


_seq_key = operator.attrgetter("seq")


def _collect_since(roots: Sequence[Node], since: int) -> list[Node]:
    """The nodes needing a gradient reachable upstream from ``roots`` through nodes numbered
    ``since`` or later (``Node.seq``), sorted producers first: a walk that never goes below the
    graph recorded since ``since`` (see :func:`segment_vjp`)."""
    seen = {n for n in roots if n.seq >= since}
    stack = list(seen)
    while stack:
        n = stack.pop()
        for src in n.srcs:
            if type(src) is Node and src.seq >= since and src.need_grad and src not in seen:
                seen.add(src)
                stack.append(src)
    return sorted(seen, key=_seq_key)


def _on_paths(nodes: list[Node], targets: Sequence[Variable]) -> list[Node]:
    """The nodes (producers first) with a target upstream of them: the minimal backward paths."""
    leaf_ids = {id(v) for v in targets if v._creator is None}
    node_targets: dict[Node, set[int]] = {}
    for v in targets:
        if v._creator is not None:
            node_targets.setdefault(v._creator, set()).add(v._idx)
    relevant: set[Node] = set()
    for n in nodes:
        for src, idx in zip(n.srcs, n.idxs):
            if idx < 0:
                if id(src) in leaf_ids:
                    break
            elif src in relevant or idx in node_targets.get(src, ()):
                break
        else:
            continue
        relevant.add(n)
    return [n for n in nodes if n in relevant]


def _rule_vars(node: Node) -> tuple[list[Variable | None], list[Variable | None]]:
    """The Variables a rule receives as ``inputs`` and ``outputs``: leaves themselves, saved
    arrays at their graph positions (so a recorded rule connects to the forward graph), None
    where the rule declared it does not need them."""
    srcs, idxs, saved = node.srcs, node.idxs, node.saved_in
    ins: list[Variable | None] = []
    for i, src in enumerate(srcs):
        idx = idxs[i]
        if saved is None or saved[i] is None:  # not declared by the rule (leaf or not): None
            ins.append(None)
        elif idx < 0:  # a leaf: its data must be what the node saved (checked here, at no cost
            # to the other inputs, rather than by a _check_leaves pass over every node)
            if saved[i] is not src._data:
                raise _replaced_error(node, i)
            ins.append(src)
        else:
            ins.append(Variable._new(saved[i], src.need_grad, src, idx))
    so = node.saved_out
    if so is None:
        outs: list[Variable | None] = [None] * len(node.out_shapes)
    else:
        need = node.need_grad
        outs = [None if a is None else Variable._new(a, need, node, j) for j, a in enumerate(so)]
    return ins, outs


def _bad_result(node: Node, i: int, arr: Any) -> BackwardRuleError | None:
    """Why the gradient array ``arr`` for input ``i`` is malformed, or None."""
    shape, dtype = node.in_shapes[i], node.in_dtypes[i]
    who = f"the backward rule of {node.fdef.name} (from {node.rule.provider})"  # type: ignore[union-attr]
    if arr.shape != shape:
        return BackwardRuleError(
            f"{who} returned a gradient of shape {tuple(arr.shape)} for input {i}, "
            f"whose shape is {tuple(shape)}"
        )
    if arr.dtype != dtype:
        return BackwardRuleError(
            f"{who} returned a gradient of dtype {arr.dtype} for input {i}, whose dtype is {dtype}"
        )
    if type(arr) is not node.out_type:
        return BackwardRuleError(
            f"{who} returned a gradient of array type {type(arr).__name__} for input {i}, "
            f"which is on {node.device.name} ({node.out_type.__name__})"
        )
    return None


def _check_count(node: Node, res: Any) -> Any:
    n_in = len(node.srcs)
    if isinstance(res, (list, tuple)) and len(res) == n_in:
        return res
    if n_in == 1 and not isinstance(res, (list, tuple)):
        return [res]
    got = len(res) if isinstance(res, (list, tuple)) else type(res).__name__
    raise BackwardRuleError(
        f"the backward rule of {node.fdef.name} (from {node.rule.provider}) returned "  # type: ignore[union-attr]
        f"{got} gradients for {n_in} inputs"
    )


def _mixed_precision(node: Node, got: Any, want: Any) -> bool:
    """Whether a gradient of dtype ``got`` for a floating input of dtype ``want`` comes from a node
    whose inputs had different dtypes, so that numpy promoted them (float32 with float64, or with
    an int64 array: float64); only then is it cast back."""
    if got.kind != "f" or want.kind != "f":
        return False
    dtypes = node.in_dtypes
    return any(dt != want for dt in dtypes) and (got in dtypes or got in node.out_dtypes)


def _check_result(node: Node, res: Any) -> list[Variable | None]:
    """Validate a rule's Variables (count, shape, dtype, device); drop unneeded ones."""
    srcs = node.srcs
    if len(srcs) == 1 and type(res) is list and len(res) == 1:  # one well-formed gradient
        g = res[0]
        if type(g) is Variable and srcs[0].need_grad:
            arr = g._data
            if (
                type(arr) is node.out_type
                and arr.shape == node.in_shapes[0]
                and arr.dtype == node.in_dtypes[0]
            ):
                return res
    res = _check_count(node, res)
    out: list[Variable | None] = []
    atype = node.out_type
    for i, g in enumerate(res):
        if g is None or not node.srcs[i].need_grad:
            out.append(None)
            continue
        if not isinstance(g, Variable):
            g = Variable._new(_to_array(g, node.device), False, None, 0)
        arr = g._data
        shape, dtype = node.in_shapes[i], node.in_dtypes[i]
        if arr.shape != shape or arr.dtype != dtype or type(arr) is not atype:
            if dtype.kind not in "fc":  # an integer output of a differentiable node: no gradient
                out.append(None)
                continue
            if arr.dtype != dtype and _mixed_precision(node, arr.dtype, dtype):
                # float32 * float64: bring the gradient back to the input's dtype,
                # differentiably, as PyTorch does
                g = call("Cast", g, dtype=dtype.name)
                arr = g._data
            err = _bad_result(node, i, arr)
            if err is not None:
                raise err
        out.append(g)
    return out


def _zeros(device: Any, shape: Any, dtype: Any) -> Any:
    if device.index:
        with device.activate():
            return device.xp.zeros(shape, dtype)
    return device.xp.zeros(shape, dtype)


def _rule_raised(node: Node, rule: Rule, e: Exception) -> BackwardRuleError:
    """The error for a rule that raised: names the function, the rule's provider and the cause."""
    return BackwardRuleError(
        f"the backward rule of {node.fdef.name} (from {rule.provider}) raised "
        f"{type(e).__name__}: {e}"
    )


def _rule_of(node: Node) -> Rule:
    """The node's rule, or a clear error when it has none or a retain_graph=False pass freed it."""
    rule = node.rule
    if rule is None:
        fdef = node.fdef
        raise BackwardRuleError(
            f"function {fdef.name} (from {fdef.provider}) has no backward rule; "
            "it cannot be differentiated"
        )
    if rule is _FREED:
        raise _freed_error(node)
    return rule


def _call_rule_arrays(node: Node, gys: list[Any]) -> list[Any]:
    """First-order backward of one node on raw arrays: the fast rule if there is one, else the
    differentiable rule on graph-less Variables. Returns validated arrays (or None) per input."""
    rule = node.rule
    if rule is None or rule is _FREED:
        rule = _rule_of(node)  # raises
    if rule.devices is not None:  # a rule kernel for the node's device (gradhub.registry; such
        rule = rule.devices.get(node.device.kind, rule)  # a rule has no fast1: nodes come here)
    srcs = node.srcs
    n_in = len(srcs)
    fast = rule.fast
    if n_in > 1 or node.idxs[0] < 0:
        _check_leaves(node)
    try:
        if fast is not None:
            saved_in = node.saved_in
            if saved_in is None:
                saved_in = (None,) * n_in
            saved_out = node.saved_out
            if saved_out is None:
                saved_out = (None,) * len(node.out_shapes)
            if rule.fast_wants_need_grads:
                res = fast(
                    node.device.xp,
                    gys,
                    saved_in,
                    node.in_shapes,
                    saved_out,
                    node.out_shapes,
                    need_grads=tuple([src.need_grad for src in srcs]),
                    **node.attrs,
                )
            elif node.attrs:
                res = fast(
                    node.device.xp,
                    gys,
                    saved_in,
                    node.in_shapes,
                    saved_out,
                    node.out_shapes,
                    **node.attrs,
                )
            else:
                res = fast(
                    node.device.xp, gys, saved_in, node.in_shapes, saved_out, node.out_shapes
                )
        else:
            ins, outs = _rule_vars(node)
            gv = [Variable._new(g, False, None, 0) for g in gys]
            res = rule.fn(gv, ins, node.in_shapes, outs, node.out_shapes, **node.attrs)
            res = _check_count(node, res)
            res = [g._data if isinstance(g, Variable) else g for g in res]
    except BackwardRuleError:
        raise
    except Exception as e:
        raise _rule_raised(node, rule, e) from e
    if (type(res) is not list and type(res) is not tuple) or len(res) != n_in:
        res = _check_count(node, res)
    if n_in == 1:  # the common case: one well-formed gradient
        arr = res[0]
        if (
            type(arr) is node.out_type
            and srcs[0].need_grad
            and arr.shape == node.in_shapes[0]
            and arr.dtype == node.in_dtypes[0]
        ):
            return [arr]
    return _checked_arrays(node, rule, res)


def _checked_arrays(node: Node, rule: Rule, res: Sequence[Any]) -> list[Any]:
    """A fast rule's gradient arrays, one per input, validated (shape, dtype, array type) and
    mended where that is unambiguous (0-d results, mixed precision); None where none is needed."""
    fdef = node.fdef
    srcs = node.srcs
    n_in = len(srcs)
    atype = node.out_type
    in_shapes, in_dtypes = node.in_shapes, node.in_dtypes
    out = [None] * n_in
    for i in range(n_in):
        arr = res[i]
        if arr is None or not srcs[i].need_grad:
            continue
        shape, dtype = in_shapes[i], in_dtypes[i]
        if type(arr) is not atype or arr.shape != shape or arr.dtype != dtype:
            if dtype.kind not in "fc":  # an integer output of a differentiable node: no gradient
                continue
            if isinstance(arr, np.generic):  # numpy turns 0-d results into scalars
                arr = np.asarray(arr)
            adt = getattr(arr, "dtype", dtype)
            if adt != dtype and _mixed_precision(node, adt, dtype):
                arr = arr.astype(dtype)  # back to the input's dtype
            elif not hasattr(arr, "shape"):
                try:
                    arr = node.device.asarray(arr, dtype=dtype)
                except (TypeError, ValueError) as e:
                    raise BackwardRuleError(
                        f"the backward rule of {fdef.name} (from {rule.provider}) returned a "
                        f"{type(arr).__name__} for input {i}, not a gradient: {e}"
                    ) from e
            err = _bad_result(node, i, arr)
            if err is not None:
                raise err
        out[i] = arr
    return out


def _call_rule(node: Node, gys: list[Variable], create_graph: bool) -> list[Variable | None]:
    """Backward of one node on Variables, recorded in the graph when ``create_graph``."""
    rule = node.rule
    if rule is None or rule is _FREED:
        rule = _rule_of(node)  # raises
    try:
        ins, outs = _rule_vars(node)
        if create_graph and rule.first_order_only:
            with set_recording(False):
                res = rule.fn(gys, ins, node.in_shapes, outs, node.out_shapes, **node.attrs)
            grads = _check_result(node, res)
            return _guard_first_order(node, grads, [*gys, *ins, *outs])
        res = rule.fn(gys, ins, node.in_shapes, outs, node.out_shapes, **node.attrs)
    except BackwardRuleError:
        raise
    except Exception as e:
        raise _rule_raised(node, rule, e) from e
    return _check_result(node, res)


def _guard_first_order(
    node: Node, grads: list[Variable | None], used: list[Variable | None]
) -> list[Variable | None]:
    """Make first-order-only results raise when a graph through them is differentiated again."""
    parents = [v for v in used if v is not None and v._need_grad]
    if not parents:
        return grads
    name = node.fdef.name
    provider = node.rule.provider  # type: ignore[union-attr]

    def refuse(*_: Any, **__: Any) -> Any:
        raise BackwardRuleError(
            f"the backward rule of {name} (from {provider}) is first-order-only: a graph through "
            f"the gradient of {name} cannot be differentiated again"
        )

    def no_reexec(xp: Any, *arrays: Any, **attrs: Any) -> Any:
        raise BackwardRuleError(
            f"the gradient of {name} comes from a first-order-only rule; its graph cannot be "
            "re-executed with forward()"
        )

    guard = FunctionDef(
        f"{name}FirstOrderGrad",
        no_reexec,
        provider,
        inputs=("*xs",),
        n_outputs=len(grads),
        rule=Rule(refuse, provider, (), ()),
    )
    arrays = [v._data for v in parents]
    outs = [g._data for g in grads if g is not None]
    gnode = Node(guard, {}, parents, arrays, outs, True, node.device)
    res: list[Variable | None] = []
    k = 0
    refs = []
    for g in grads:
        if g is None:
            res.append(None)
            continue
        v = Variable._new(g._data, True, gnode, k)
        refs.append(weakref.ref(v))
        res.append(v)
        k += 1
    gnode.out_shapes = [o.shape for o in outs]
    gnode.out_dtypes = [o.dtype for o in outs]
    gnode.outputs = tuple(refs)
    return res


def _refuse_freed(*_: Any, **__: Any) -> Any:
    raise AssertionError("unreachable: the engine checks for _FREED first")  # pragma: no cover


#: the rule of a node whose saved arrays a ``retain_graph=False`` pass freed
_FREED = Rule(_refuse_freed, Provider("gradhub"), (), ())


def _freed_error(node: Node) -> BackwardRuleError:
    return BackwardRuleError(
        f"cannot differentiate through {node.fdef.name} again: its saved arrays were freed by a "
        "backward/grad with retain_graph=False; call forward() on the output to recompute them, "
        "or pass retain_graph=True"
    )


def _replaced_error(node: Node, i: int) -> BackwardRuleError:
    fdef = node.fdef
    name = input_name(fdef, i)
    return BackwardRuleError(
        f"cannot differentiate {fdef.name}: the data of its input {name!r} (#{i}, a leaf "
        "Variable) was replaced (Variable.d) after the function was recorded; call forward() on "
        "the output to recompute the graph with the new data, or build the graph again"
    )


def _replaced_leaf(node: Node) -> int:
    """The index of a leaf input whose data was replaced since the node saved it, or -1."""
    saved = node.saved_in
    if saved is None:
        return -1
    idxs = node.idxs
    for i, src in enumerate(node.srcs):
        if idxs[i] < 0:
            a = saved[i]
            if a is not None and a is not src._data:
                return i
    return -1


def _check_leaves(node: Node) -> None:
    """Raise when a leaf input's data was replaced since the node saved it: its rule would mix
    the new leaf with the old intermediate arrays (PyTorch raises likewise)."""
    i = _replaced_leaf(node)
    if i >= 0:
        raise _replaced_error(node, i)


def _has_none(values: list[Any]) -> bool:
    for v in values:
        if v is None:
            return True
    return False


def _zero_filled(node: Node, gys: list[Any]) -> list[Any]:
    """``gys`` with zeros (on the node's device) for the outputs that received no gradient."""
    dev, shapes, dtypes = node.device, node.out_shapes, node.out_dtypes
    return [g if g is not None else _zeros(dev, shapes[j], dtypes[j]) for j, g in enumerate(gys)]


def _fast1_failed(node: Node, rule: Rule, e: Exception) -> NoReturn:
    """Raise the error for a one-input formula (``rule.fast1``) that raised ``e``: a leaf input
    whose data was replaced since is the clearer cause."""
    if isinstance(e, BackwardRuleError):
        raise e
    if node.idxs[0] < 0:
        _check_leaves(node)
    raise _rule_raised(node, rule, e) from e


def _run(
    outputs: list[Variable],
    seeds: list[Variable | None],
    targets: list[Variable] | None,
    create_graph: bool,
    retain_grad: bool,
    retain_graph: bool = True,
    callbacks: list[Any] | None = None,
    since: int | None = None,
) -> _Grads:
    arrays = not create_graph
    if _plans and arrays and callbacks is None and outputs and since is None:  # a static plan
        plan = _plans.get(id(outputs[0]))
        if plan is not None:
            planned = plan.first_order(outputs, seeds, targets, retain_grad, retain_graph)
            if planned is not None:
                return planned
    grads = _Grads(arrays)
    roots = []
    for y, s in zip(outputs, seeds):
        if s is None:
            continue
        src, idx = _position(y)
        grads.add(src, idx, s._data if arrays else s)
        if retain_grad and y._creator is not None:  # a leaf's .g is set by backward itself
            y._grad = _own(grads.get(y), {id(s._data)})  # type: ignore[arg-type]
        if y._creator is not None and y._need_grad:
            roots.append(y._creator)
    leaves: set[int] = set()
    if since is None:
        nodes = _collect(roots, only_need_grad=True, leaves=leaves)
    else:  # the walk stays in the graph recorded since ``since``
        nodes = _collect_since(roots, since)
    keep: set[Node] = set()
    if targets is not None:
        target_leaves = {id(v) for v in targets if v._creator is None}
        # when every target is a leaf and every leaf needing a gradient is a target, every
        # collected node lies on a path to a target: no pruning pass
        prune = since is not None or len(target_leaves) < len(targets)
        if prune or not leaves <= target_leaves:
            nodes = _on_paths(nodes, targets)
        keep = {v._creator for v in targets if v._creator is not None}
    notifier = None if callbacks is None else _Notifier(callbacks, grads)
    _walk(grads, nodes, keep, retain_grad, retain_graph, notifier)
    if notifier is not None:
        notifier.finish()
    return grads


def _walk(
    grads: _Grads,
    nodes: list[Node],
    keep: set[Node],
    retain_grad: bool,
    retain_graph: bool,
    notifier: _Notifier | None = None,
) -> None:
    """The engine's walk: each node of ``nodes`` (sorted producers first), last first, takes the
    gradients summed at its outputs in ``grads`` (kept there for the nodes of ``keep``, the
    targets), runs its rule and sums the results into its inputs' positions. Arrays with
    ``grads.arrays`` (first order), else Variables recorded in the graph. Serves
    :func:`_run` and the table-driven backward schedules of :mod:`gradhub.plan`."""
    arrays = grads.arrays
    create_graph = not arrays
    pending = grads.nodes
    plus = grads._plus
    # one test per walk: with callbacks, the loop asks a generator that tells them each final
    # leaf gradient between nodes; without, it runs over the nodes as they are
    order = reversed(nodes) if notifier is None else notifier.walk(nodes)
    with set_recording(create_graph):
        for node in order:
            gys = pending.get(node) if node in keep else pending.pop(node, None)
            if gys is None:
                continue
            if retain_grad:
                for j, ref in enumerate(node.outputs):
                    v = ref()
                    if v is not None and gys[j] is not None:
                        # a copy: the array flows on (to an input's .g, or summed into in place)
                        g = gys[j]
                        v._grad = (
                            Variable._new(_copy_array(g), False, None, 0)
                            if arrays
                            else _own(g, {id(g._data)})
                        )
            if (gys[0] is None) if len(gys) == 1 else _has_none(gys):
                gys = _zero_filled(node, gys)
                if not arrays:
                    gys = [
                        g if isinstance(g, Variable) else Variable._new(g, False, None, 0)
                        for g in gys
                    ]
            if arrays:
                rule = node.rule
                srcs = node.srcs
                if (
                    rule is not None
                    and rule.fast1 is not None
                    and len(srcs) == 1
                    and len(gys) == 1
                    and not node.device.index
                    and srcs[0].need_grad
                ):
                    # one input (needing a gradient), one output, an array-level formula:
                    # called directly, its one gradient accumulated without lists or loops
                    si, so = node.saved_in, node.saved_out
                    try:
                        arr = rule.fast1(
                            node.device.xp,
                            gys[0],
                            None if si is None else si[0],
                            None if so is None else so[0],
                            **node.attrs,
                        )
                    except Exception as e:
                        _fast1_failed(node, rule, e)  # (a replaced leaf: the clearer error)
                    del gys
                    if (
                        type(arr) is not node.out_type
                        or arr.shape != node.in_shapes[0]
                        or arr.dtype != node.in_dtypes[0]
                    ):
                        arr = _checked_arrays(node, rule, (arr,))[0]
                    if not retain_graph:
                        node.saved_in = node.saved_out = None
                        node.rule = _FREED
                    if arr is None:
                        continue
                    src = srcs[0]
                    idx = node.idxs[0]
                    if idx < 0:
                        # a leaf whose data was replaced since: the rule mixed old and new data
                        if si is not None and si[0] is not None and si[0] is not src._data:
                            raise _replaced_error(node, 0)
                        grads.add(src, idx, arr)
                        continue
                    lst = pending.get(src)
                    if lst is None:
                        lst = pending[src] = [None] * len(src.out_shapes)
                    prev = lst[idx]
                    lst[idx] = arr if prev is None else plus(prev, arr)
                    continue
                if node.device.index:
                    with node.device.activate():
                        res = _call_rule_arrays(node, gys)
                else:
                    res = _call_rule_arrays(node, gys)
            else:
                res = _call_rule(node, gys, True)
            del gys
            if not retain_graph:
                node.saved_in = node.saved_out = None
                node.rule = _FREED
            srcs, idxs = node.srcs, node.idxs
            for i, g in enumerate(res):
                if g is None:
                    continue
                idx = idxs[i]
                if idx < 0:
                    grads.add(srcs[i], idx, g)
                    continue
                src = srcs[i]  # inlined grads.add for the common case
                lst = pending.get(src)
                if lst is None:
                    lst = pending[src] = [None] * len(src.out_shapes)
                prev = lst[idx]
                lst[idx] = g if prev is None else plus(prev, g)


def backward(
    y: Variable,
    grad: Any = None,
    *,
    retain_grad: bool = False,
    create_graph: bool = False,
    loss_scale: float | None = None,
    retain_graph: bool = True,
    communicator_callbacks: Any = None,
) -> None:
    """Accumulate d(y)/d(leaf) into ``.g`` of every leaf that needs a gradient.

    The incoming gradient ``grad`` defaults to ones of y's shape; ``loss_scale`` multiplies that
    default. With ``create_graph=True`` the accumulated gradients are differentiable. With
    ``retain_graph=False`` each node's saved arrays are freed as soon as its rule has run (lower
    peak memory, like PyTorch's default or nnabla's ``clear_buffer=True``); differentiating
    through those nodes again then raises until ``forward()`` recomputes them.
    ``communicator_callbacks`` (one :class:`BackwardCallback` or a list) are told each leaf's
    gradient as soon as it is final and may replace it before it is added to ``.g``
    (data-parallel training all-reduces it there); they need ``create_graph=False``.
    """
    if not isinstance(y, Variable):
        raise TypeError(f"backward: expected a Variable, got {type(y).__name__}")
    if not y._need_grad:
        raise _no_grad_error(y)
    if loss_scale is not None:
        _check_loss_scale(loss_scale, "backward")
    cbs = _callback_list(communicator_callbacks, create_graph, "backward")
    seed = _seed(y, grad, loss_scale, "backward: grad")
    if seed._batched:
        raise TypeError(
            "backward: grad is a batched Variable (inside gradhub.func.vmap): .g would sum the "
            "batch's elements; use gradhub.func.vjp (or grad) inside vmap for one result per "
            "element"
        )
    grads = _run([y], [seed], None, create_graph, retain_grad, retain_graph, cbs)
    given: set[int] = {id(seed._data)}
    changed: list[tuple[Variable, Variable | None]] = []  # (leaf, its .g before), for a refusal
    with set_recording(create_graph):
        for leaf, g in grads.leaf_items():
            if not leaf._need_grad:
                continue
            prev = leaf._grad
            if prev is not None and prev._data.shape != g._data.shape:
                # leave every .g as it was, so that the call can be repeated after cleargrad()
                for done, before in changed:
                    done._grad = before
                raise _stale_grad_error(leaf, prev, g)
            changed.append((leaf, prev))
            leaf._grad = _own(g, given) if prev is None else _add(prev, g)
    observer = _variable._observer
    if observer is not None:  # gradhub.plan.compile is tracing a step (see set_observer)
        observer.backward(
            y,
            grad,
            {
                "retain_grad": retain_grad,
                "create_graph": create_graph,
                "loss_scale": loss_scale,
                "retain_graph": retain_graph,
                "communicator_callbacks": communicator_callbacks,
            },
        )


def _no_grad_error(y: Variable) -> RuntimeError:
    """The refusal of ``backward()`` on a Variable that needs no gradient (as PyTorch's "does not
    require grad"): it would accumulate nothing."""
    node = y._creator
    if node is None:
        why = (
            "it is a leaf created with need_grad=False, or the result of a computation under "
            "gh.no_grad()"
        )
    elif node.rule is None:
        why = (
            f"it was computed by {node.fdef.snake}() from inputs none of which needs a gradient"
            + ("" if node.fdef.differentiable else " (or the function is not differentiable)")
        )
    else:
        why = "its need_grad was set to False"
    return RuntimeError(
        f"backward: the Variable (shape {y.shape}, dtype {y.dtype}) needs no gradient "
        f"(need_grad=False), so no gradient would be accumulated: {why}; create the leaves "
        "to differentiate with need_grad=True"
    )


def _check_loss_scale(loss_scale: Any, where: str) -> None:
    """``loss_scale`` must be a finite positive real number (it multiplies the seeds)."""
    if isinstance(loss_scale, (bool, np.bool_)) or not isinstance(
        loss_scale, (int, float, np.integer, np.floating)
    ):
        raise TypeError(
            f"{where}: loss_scale must be a number (or None), got {type(loss_scale).__name__} "
            f"{loss_scale!r}"
        )
    if not (math.isfinite(loss_scale) and loss_scale > 0):
        raise ValueError(
            f"{where}: loss_scale must be a finite positive number, got {loss_scale!r}"
        )


def _stale_grad_error(leaf: Variable, prev: Variable, g: Variable) -> ValueError:
    who = f"Variable {leaf.name!r}" if leaf.name else f"a leaf Variable of shape {leaf.shape}"
    return ValueError(
        f"backward: cannot accumulate the gradient of {who}: its .g has shape "
        f"{tuple(prev._data.shape)} but the new gradient has shape {tuple(g._data.shape)} (its "
        ".d changed shape since); that .g is stale: call cleargrad() first"
    )


def _own(g: Variable, given: set[int]) -> Variable:
    """``g`` with an array of its own, for a ``.g``: a rule may pass the same array, or a
    read-only broadcast view, on to several inputs, and the caller's ``grad`` array is theirs; so
    that in-place updates of one ``.g`` touch nothing else, such arrays are copied (in the graph,
    when ``g`` is recorded: ``g * 1``). ``given``: ids of the arrays handed out already."""
    arr = g._data
    if id(arr) in given or not _sole_owner(arr) or not getattr(arr.flags, "writeable", True):
        if g._creator is not None:
            g = call("MulScalar", g, val=1.0)
        else:
            g = Variable._new(_copy_array(arr), False, None, 0)
        arr = g._data
    given.add(id(arr))
    return g


def _batched_error(where: str, k: int, fname: str = "grad") -> TypeError:
    return TypeError(
        f"{fname}: {where}[{k}] is a batched Variable (inside gradhub.func.vmap): the engine "
        "would mix the batch's elements (summing the gradients of unbatched inputs); use the "
        "transforms of gradhub.func (grad, vjp, jvp...) inside vmap for one result per element"
    )


def grad(
    outputs: Any,
    inputs: Any,
    grad_outputs: Any = None,
    *,
    grad_inputs: Any = None,
    create_graph: bool = True,
    set_grad: bool = False,
    retain_grad: bool = False,
    loss_scale: float | None = None,
    unreachable: str = "zero",
    retain_graph: bool = True,
    communicator_callbacks: Any = None,
) -> list[Variable | None]:
    """Return, for each input, the sum over outputs of d(output)/d(input).

    .. math:: g_i = \\sum_j \\left(\\frac{\\partial y_j}{\\partial x_i}\\right)^T v_j

    where ``v_j`` is ``grad_outputs[j]`` (default: ones, times ``loss_scale``). Rules run only for
    functions on a path from ``inputs`` to ``outputs``. ``.g`` is untouched unless ``set_grad``.
    ``grad_inputs`` are added to the results. ``unreachable``: ``"zero"`` (zeros shaped like the
    input), ``"none"`` or ``"error"``. With ``create_graph=True`` the results are differentiable.
    ``retain_graph=False`` frees the saved arrays of the nodes it went through (see
    :func:`backward`). ``communicator_callbacks`` are told the gradients of the leaf inputs as
    soon as they are final and may replace them before they are returned (see :func:`backward`;
    they need ``create_graph=False``).

    Example::

        >>> import gradhub as gh
        >>> x = gh.Variable([1.0, 2.0])
        >>> y = x * x * x
        >>> (g,) = gh.grad([y], [x])
        >>> g.d
        array([ 3., 12.], dtype=float32)
        >>> (gg,) = gh.grad([g], [x])
        >>> gg.d
        array([ 6., 12.], dtype=float32)
    """
    outs = _as_list(outputs, "outputs")
    ins = _as_list(inputs, "inputs")
    for k, v in enumerate(outs):
        if not isinstance(v, Variable):
            raise TypeError(f"grad: outputs[{k}] must be a Variable, got {type(v).__name__}")
        if type(v) is not Variable and isinstance(v, BatchedVariable):
            raise _batched_error("outputs", k)
    for k, v in enumerate(ins):
        if not isinstance(v, Variable):
            raise TypeError(f"grad: inputs[{k}] must be a Variable, got {type(v).__name__}")
        if type(v) is not Variable and isinstance(v, BatchedVariable):
            raise _batched_error("inputs", k)
    if unreachable not in _UNREACHABLE:
        raise ValueError(f"grad: unreachable must be one of {_UNREACHABLE}, got {unreachable!r}")
    cbs = _callback_list(communicator_callbacks, create_graph, "grad")
    if grad_outputs is None:
        gos: list[Any] = [None] * len(outs)
    elif isinstance(grad_outputs, (list, tuple)):
        gos = list(grad_outputs)
        if len(gos) != len(outs):
            raise ValueError(
                f"grad: grad_outputs has {len(gos)} entries but there are {len(outs)} outputs"
            )
    elif len(outs) == 1:
        gos = [grad_outputs]
    else:
        raise ValueError(
            f"grad: grad_outputs must be a list with one entry per output ({len(outs)} outputs)"
        )
    if loss_scale is not None:
        _check_loss_scale(loss_scale, "grad")
    seeds: list[Variable | None] = [
        _seed(y, g, loss_scale, f"grad: grad_outputs[{k}]")
        for k, (y, g) in enumerate(zip(outs, gos))
    ]
    if grad_inputs is not None:
        gis = list(grad_inputs) if isinstance(grad_inputs, (list, tuple)) else [grad_inputs]
        if len(gis) != len(ins):
            raise ValueError(
                f"grad: grad_inputs has {len(gis)} entries but there are {len(ins)} inputs"
            )
    else:
        gis = [None] * len(ins)
    # batched seeds (inside gradhub.func.vmap, on a graph recorded outside it) go through the
    # rules written with registered functions, which dispatch to their batching rules (the
    # first-order array rules would read one element); the results are detached below
    walk_graph = create_graph or (
        bool(_batching.LEVELS) and any(s is not None and s._batched for s in seeds)
    )
    grads = _run(outs, seeds, ins, walk_graph, retain_grad, retain_graph, cbs)
    results: list[Variable | None] = []
    # the arrays given by the caller (or made for them) that a .g must not share
    given: set[int] = {id(s._data) for s in seeds if s is not None}
    reached: list[bool] = []  # per input: whether it has a gradient (before ``unreachable``)
    with set_recording(create_graph):
        for k, (x, gi) in enumerate(zip(ins, gis)):
            # an input needing no gradient has none, also when it is an output itself
            g = grads.get(x) if x._need_grad else None
            if gi is not None:
                gi = _seed(x, gi, None, f"grad: grad_inputs[{k}]", "the input")
                given.add(id(gi._data))
                g = gi if g is None else _add(g, gi)
            reached.append(g is not None)
            if g is None:
                if unreachable == "error":
                    why = (
                        "is not reachable from the outputs"
                        if x._need_grad
                        else "needs no gradient (need_grad=False)"
                    )
                    raise ValueError(f"grad: inputs[{k}] {why}")
                if unreachable == "zero":
                    g = Variable._new(_zeros(x.device, x.shape, x.dtype), False, None, 0)
            elif not create_graph and g._creator is not None:
                # (a batched gradient, inside gradhub.func.vmap: detached as a batch)
                g = g.detach() if g._batched else Variable._new(g._data, False, None, 0)
            results.append(g)
    if set_grad and not retain_grad:
        with set_recording(create_graph):
            for x, g in zip(ins, results):
                x._grad = None if g is None else _own(g, given)
    elif retain_grad:  # an input that is an intermediate Variable keeps its gradient too
        for x, g, hit in zip(ins, results, reached):
            if hit and x._creator is not None:
                x._grad = _own(g, given)  # type: ignore[arg-type]
    observer = _variable._observer
    if observer is not None:  # gradhub.plan.compile is tracing a step (see set_observer)
        observer.grad(
            outs,
            ins,
            grad_outputs,
            {
                "grad_inputs": grad_inputs,
                "create_graph": create_graph,
                "set_grad": set_grad,
                "retain_grad": retain_grad,
                "loss_scale": loss_scale,
                "unreachable": unreachable,
                "retain_graph": retain_graph,
                "communicator_callbacks": communicator_callbacks,
            },
            results,
        )
    return results


def segment_vjp(
    outputs: Sequence[Variable],
    inputs: Sequence[Variable],
    grad_outputs: Sequence[Variable],
    *,
    since: int,
    create_graph: bool,
) -> list[Variable | None]:
    """The vector-Jacobian product of the graph recorded since the node number ``since``
    (``Node.seq``): for each input, the sum of ``grad_outputs`` times the partial derivatives of
    ``outputs`` along paths made of those nodes only. Gradients do not flow into the graph
    recorded before: an input that also lies upstream of another input gets its direct part
    only (a segment's partial derivatives, as a backward rule must return them), and nothing
    below the segment is walked. None for an input no such path reaches. For a rule that
    records a segment again and differentiates it (:func:`gradhub.checkpoint`); with
    ``create_graph`` the results are recorded (differentiable again).

    .. math:: g_i = \\sum_j \\left(\\partial y_j / \\partial x_i\\right)^T v_j

    Example::

        >>> import gradhub as gh
        >>> from gradhub import engine, graph
        >>> w = gh.Variable([2.0])
        >>> h = w * w                        # recorded before the segment
        >>> mark = next(graph._seq)
        >>> y = h * w                        # the segment: y = h w
        >>> [g.d for g in engine.segment_vjp([y], [h, w], [gh.Variable([1.0])], since=mark,
        ...                                   create_graph=False)]
        [array([2.], dtype=float32), array([4.], dtype=float32)]
    """
    seeds: list[Variable | None] = [
        _seed(y, g, None, f"segment_vjp: grad_outputs[{k}]")
        for k, (y, g) in enumerate(zip(outputs, grad_outputs))
    ]
    walk_graph = create_graph or (
        bool(_batching.LEVELS) and any(s is not None and s._batched for s in seeds)
    )
    ins = list(inputs)
    grads = _run(list(outputs), seeds, ins, walk_graph, False, True, None, since=since)
    results: list[Variable | None] = []
    with set_recording(create_graph):
        for x in ins:
            g = grads.get(x) if x._need_grad else None
            if g is not None and not create_graph and g._creator is not None:
                g = g.detach() if g._batched else Variable._new(g._data, False, None, 0)
            results.append(g)
    return results


def collect_graph(
    outputs: Sequence[Variable], *, only_need_grad: bool = False, since: int | None = None
) -> list[Node]:
    """The recorded function calls (nodes) of the graph producing ``outputs``, producers first.

    ``only_need_grad=True`` keeps to the nodes that need a gradient (those a backward pass
    visits). ``since`` (with ``only_need_grad``): only the nodes numbered ``since`` or later
    (``Node.seq``), the walk going no further down (a segment recorded since a mark, as
    :func:`segment_vjp` walks it). A service for front-ends that inspect a graph
    (gradhub-compat) and for :mod:`gradhub.remat`; the engine walks graphs the same way.
    """
    roots = [y._creator for y in outputs if y._creator is not None]
    if not roots:
        return []
    if since is None:
        return _collect(roots, only_need_grad)
    if not only_need_grad:
        raise ValueError("collect_graph: since= needs only_need_grad=True")
    return _collect_since(roots, since)


def nodes_on_paths(nodes: Sequence[Node], targets: Sequence[Variable]) -> list[Node]:
    """Of ``nodes`` (producers first, as :func:`collect_graph` gives them), those with one of
    ``targets`` (leaves or recorded results) upstream: the nodes on the paths from ``targets``
    to the outputs, where :func:`grad` computes backward."""
    return _on_paths(list(nodes), targets)


def is_freed(node: Node) -> bool:
    """Whether a backward pass with ``retain_graph=False`` freed the arrays that ``node`` saved
    for its rule: differentiating through it again needs ``forward()`` on the output first."""
    return node.rule is _FREED


def leaves_replaced(outputs: Sequence[Variable]) -> bool:
    """Whether the data of a leaf was replaced (``Variable.d``) after a function of the outputs'
    graph recorded it, so that differentiating that graph needs ``forward()`` first."""
    roots = [y._creator for y in outputs if y._creator is not None]
    return any(_replaced_leaf(node) >= 0 for node in _collect(roots, only_need_grad=False))


def clear_intermediate_grads(y: Variable) -> None:
    """Set ``.g`` of every Variable that the graph of ``y`` produced (not ``y``) to None."""
    if y._creator is None:
        return
    for node in _collect([y._creator], only_need_grad=False):
        for ref in node.outputs:
            v = ref()
            if v is not None and v is not y:
                v._grad = None


def rerun_kernel(node: Node, arrays: list[Any]) -> tuple[Any, ...]:
    """Run ``node``'s forward kernel again on ``arrays`` (on their device); its output arrays.
    Records nothing itself: callers run it with recording off."""
    fdef = node.fdef
    device = _device_of(fdef, (), arrays)
    kernel = fdef.kernels.get(device.kind, fdef.forward)
    try:
        if device.index:
            with device.activate():
                out = kernel(device.xp, *arrays, **node.attrs)
        else:
            out = kernel(device.xp, *arrays, **node.attrs)
    except GradhubError:
        raise
    except Exception as e:  # as graph.apply: name the function and the kernel's provider
        raise _kernel_error(fdef, arrays, e, device.kind) from e
    if fdef.n_outputs == 1:
        if type(out) is not type(arrays[0]) or out.dtype.kind not in "biufc":
            out = _kernel_result(fdef, device, out)
        return (out,)
    return tuple(_kernel_result(fdef, device, out))


def reexecute(y: Variable) -> None:
    """Recompute the graph producing ``y`` from its leaves' current data (nnabla's forward).

    The first call records a plan of the graph (:mod:`gradhub.plan`, unless plans are off) that
    later calls, and first-order ``backward``/``grad`` on ``y``, run; see docs/plans.md."""
    if y._creator is None:
        return
    if _planner is not None and _planner(y):
        return
    reexecute_eager(y)


def reexecute_eager(y: Variable) -> None:
    """:func:`reexecute` without a plan: every node's kernel looked up and run again, the nodes'
    shapes and saved arrays updated."""
    if y._creator is None:
        return
    nodes = _collect([y._creator], only_need_grad=False)
    consumers: dict[Node, int] = {}
    for n in nodes:
        for src, idx in zip(n.srcs, n.idxs):
            if idx >= 0:
                consumers[src] = consumers.get(src, 0) + 1
    values: dict[Node, tuple[Any, ...]] = {}

    with set_recording(False):
        for n in nodes:
            arrays = [
                src._data if idx < 0 else values[src][idx] for src, idx in zip(n.srcs, n.idxs)
            ]
            fdef = n.fdef
            outs = rerun_kernel(n, arrays)
            n.in_shapes = [a.shape for a in arrays]
            n.in_dtypes = [a.dtype for a in arrays]
            n.out_shapes = [o.shape for o in outs]
            n.out_dtypes = [o.dtype for o in outs]
            if n.rule is not None:
                n.rule = fdef.rule  # a retain_graph=False pass may have dropped it
                n.save(arrays, outs)
            for ref, o in zip(n.outputs, outs):
                v = ref()
                if v is not None:
                    v._data = o
            values[n] = outs
            for src, idx in zip(n.srcs, n.idxs):
                if idx >= 0:
                    consumers[src] -= 1
                    if consumers[src] == 0 and src is not y._creator:
                        del values[src]


# -- forward mode ---------------------------------------------------------------------------------


def _key(src: Any, idx: int) -> Any:
    """The dict key of a graph position: ``(node, idx)``, or the id of a leaf."""
    return id(src) if idx < 0 else (src, idx)


class ForwardPlan:
    """Forward-mode derivatives of ``outputs`` with respect to ``inputs`` (from
    :func:`forward_plan`): calling it with one tangent per input returns one tangent per output,

    .. math:: \\dot y_k = \\sum_i \\frac{\\partial y_k}{\\partial x_i} \\dot x_i

    The graph is walked forward once per call, over the nodes on a path from the inputs to the
    outputs (in creation order ``seq``), each node applying its JVP rule to its inputs' tangents;
    a node whose function has no JVP rule transposes its backward rule (two local reverse passes:
    ``g(u) = J^T u`` for a zero cotangent ``u``, then ``J t = (dg/du)^T t``), with the same
    result. The tangents are recorded in the graph (they are differentiable again, with respect
    to the primals and to the given tangents).

    The primal values the rules read are the graph's own Variables where they are still alive,
    else the arrays the nodes saved for backward, else recomputed by running the forward kernels
    again (as ``Variable.forward()`` does); they are found once, when the plan is made.
    """

    def __init__(self, outputs: Sequence[Variable], inputs: Sequence[Variable]) -> None:
        self.outputs = list(outputs)
        self.inputs = list(inputs)
        roots = [y._creator for y in self.outputs if y._creator is not None]
        nodes = _collect(roots, only_need_grad=False) if roots else []
        # (a node recorded under no_grad() or by detach() while gradhub.compile traces a step
        # is a deliberate stop: no tangent passes it, as none passes eagerly, where it is not
        # recorded at all)
        passing = [n for n in nodes if not getattr(n, "stop", False)]
        self.path = _on_paths(passing, self.inputs) if self.inputs else []
        self._vars: dict[Any, Variable] = {}
        self._find_primals(nodes)

    def _find_primals(self, nodes: list[Node]) -> None:
        """The Variables of every input and output position of the nodes on the path."""
        needed: set[Any] = set()
        for n in self.path:
            for src, idx in zip(n.srcs, n.idxs):
                if idx >= 0:
                    needed.add((src, idx))
            for j in range(len(n.out_shapes)):
                needed.add((n, j))
        found: dict[Any, Any] = {}  # position -> array
        alive = self._vars
        for n in nodes:
            for j, ref in enumerate(n.outputs):
                v = ref()
                if v is not None:
                    alive[(n, j)] = v
            si = n.saved_in
            if si is not None:
                for src, idx, a in zip(n.srcs, n.idxs, si):
                    if a is not None and idx >= 0:
                        found[(src, idx)] = a
            so = n.saved_out
            if so is not None:
                for j, a in enumerate(so):
                    if a is not None:
                        found[(n, j)] = a
        missing = {k for k in needed if k not in alive and k not in found}
        if missing:  # recompute the producers (and what they need), as reexecute does
            redo = {k[0] for k in missing}
            for n in reversed(nodes):
                if n in redo:
                    for src, idx in zip(n.srcs, n.idxs):
                        if idx >= 0 and (src, idx) not in alive and (src, idx) not in found:
                            redo.add(src)
            with set_recording(False):
                for n in nodes:
                    if n not in redo:
                        continue
                    # leaves as copies: a kernel that updates an input in place (batch
                    # normalization's running statistics) must not update it a second time
                    arrays = [
                        src._data.copy()
                        if idx < 0
                        else (alive[(src, idx)]._data if (src, idx) in alive else found[(src, idx)])
                        for src, idx in zip(n.srcs, n.idxs)
                    ]
                    for j, o in enumerate(rerun_kernel(n, arrays)):
                        found.setdefault((n, j), o)
        for k in needed:
            if k not in alive:
                n, j = k
                a = found[k]
                alive[k] = Variable._new(a, n.need_grad and a.dtype.kind in "fc", n, j)

    def primal(self, src: Any, idx: int) -> Variable:
        """The Variable at a graph position (a leaf is itself)."""
        return src if idx < 0 else self._vars[(src, idx)]  # type: ignore[no-any-return]

    def __call__(self, tangents: Sequence[Variable | None]) -> list[Variable]:
        if len(tangents) != len(self.inputs):
            raise ValueError(
                f"forward_tangents: {len(tangents)} tangents for {len(self.inputs)} inputs; give "
                "one per input (None for none)"
            )
        tan: dict[Any, Variable] = {}
        with set_recording(True):
            for k, (x, t) in enumerate(zip(self.inputs, tangents)):
                if t is None:
                    continue
                t = _seed(x, t, None, f"forward_tangents: tangents[{k}]", "the input")
                key = _key(*_position(x))
                tan[key] = t if key not in tan else _add(tan[key], t)
            for n in self.path:
                tin = [tan.get(_key(src, idx)) for src, idx in zip(n.srcs, n.idxs)]
                if not n.fdef.differentiable or all(t is None for t in tin):
                    continue
                for j, t in enumerate(self._node(n, tin)):
                    if t is not None:
                        tan[(n, j)] = t
            out = []
            for y in self.outputs:
                t = tan.get(_key(*_position(y)))
                if t is None:
                    t = Variable._new(_zeros(y.device, y.shape, y.dtype), False, None, 0)
                out.append(t)
        return out

    def _node(self, n: Node, tin: list[Variable | None]) -> list[Variable | None]:
        """The output tangents of one node: its JVP rule, else its backward rule transposed."""
        fdef = n.fdef
        ins = tuple(self.primal(src, idx) for src, idx in zip(n.srcs, n.idxs))
        outs = tuple(self._vars[(n, j)] for j in range(len(n.out_shapes)))
        rule = fdef.jvp_rule
        if rule is None:
            return _transposed(n, ins, outs, tin)
        try:
            res = rule.fn(ins, outs, tuple(tin), **n.attrs)
        except GradhubError:
            raise
        except Exception as e:
            raise BackwardRuleError(
                f"the JVP rule of {fdef.name} (from {rule.provider}) raised {type(e).__name__}: {e}"
            ) from e
        return _check_tangents(n, rule, res)


def _check_tangents(n: Node, rule: Any, res: Any) -> list[Variable | None]:
    """A JVP rule's result, checked: one Variable (or None) per output, of the output's shape
    and dtype (a float32/float64 mix is cast back to the output's dtype, as backward does)."""
    who = f"the JVP rule of {n.fdef.name} (from {rule.provider})"
    n_out = len(n.out_shapes)
    if not isinstance(res, (list, tuple)) or len(res) != n_out:
        got = f"{len(res)} values" if isinstance(res, (list, tuple)) else type(res).__name__
        raise BackwardRuleError(
            f"{who} returned {got}; it must return a sequence of {n_out} tangent(s), one per "
            "output (None for a zero tangent)"
        )
    out: list[Variable | None] = []
    for j, t in enumerate(res):
        if t is None or n.out_dtypes[j].kind not in "fc":
            out.append(None)
            continue
        if not isinstance(t, Variable):
            raise BackwardRuleError(
                f"{who} returned {type(t).__name__} for output {j}; a Variable is expected"
            )
        shape, dtype = n.out_shapes[j], n.out_dtypes[j]
        if t.shape != shape:
            raise BackwardRuleError(
                f"{who} returned a tangent of shape {t.shape} for output {j}, which has shape "
                f"{shape}"
            )
        if t.dtype != dtype:
            if not _mixed_precision(n, t.dtype, dtype):
                raise BackwardRuleError(
                    f"{who} returned a tangent of dtype {t.dtype} for output {j}, which has "
                    f"dtype {dtype}"
                )
            t = call("Cast", t, dtype=dtype.name)
        out.append(t)
    return out


def _transposed(
    n: Node, ins: Sequence[Variable], outs: Sequence[Variable], tin: list[Variable | None]
) -> list[Variable | None]:
    """The JVP of one node from its backward rule: ``g(u) = J^T u`` for zero cotangents ``u``,
    then the reverse pass of ``sum_i <g_i, t_i>`` back to ``u`` over the nodes that the rule
    recorded (and only those: they were created after the mark)."""
    if n.rule is None and n.fdef.rule is not None:
        fdef = n.fdef
        raise BackwardRuleError(
            f"forward mode: {fdef.name} (from {fdef.provider}) has no JVP rule, and this call of "
            "it recorded no backward rule to transpose (none of its inputs needed a gradient "
            "when it ran); give forward_tangents inputs that need a gradient"
        )
    us: list[Variable] = []
    for shape, dtype in zip(n.out_shapes, n.out_dtypes):
        z = _zeros(n.device, shape, dtype)
        us.append(Variable._new(z, dtype.kind in "fc", None, 0))
    mark = next(_node_seq)  # every node the rule records has a larger seq
    gs = _call_rule(n, us, True)
    grads = _Grads(False)
    roots: list[Node] = []
    # sum_i <g_i, t_i> per input slot (an input at two slots, x * x, counts at both)
    for g, t in zip(gs, tin):
        if g is None or t is None:
            continue
        src, idx = _position(g)
        grads.add(src, idx, t)
        if idx >= 0:
            roots.append(src)
    nodes = _collect_after(roots, mark)
    pending = grads.nodes
    for node in reversed(nodes):
        gys = pending.pop(node, None)
        if gys is None:
            continue
        gys = [
            g if g is not None else Variable._new(_zeros(node.device, s, d), False, None, 0)
            for g, s, d in zip(gys, node.out_shapes, node.out_dtypes)
        ]
        for i, g in enumerate(_call_rule(node, gys, True)):
            if g is not None:
                grads.add(node.srcs[i], node.idxs[i], g)
    out: list[Variable | None] = []
    for u in us:
        out.append(grads.get(u) if u._need_grad else None)
    return out


def _collect_after(roots: Sequence[Node], mark: int) -> list[Node]:
    """The nodes upstream of ``roots`` created after the mark (``seq > mark``), producers
    first: the part of a graph that one rule call recorded."""
    seen = {r for r in roots if r.seq > mark}
    stack = list(seen)
    while stack:
        n = stack.pop()
        for src in n.srcs:
            if type(src) is Node and src.seq > mark and src.need_grad and src not in seen:
                seen.add(src)
                stack.append(src)
    return sorted(seen, key=_seq_key)


def forward_plan(outputs: Sequence[Variable], inputs: Sequence[Variable]) -> ForwardPlan:
    """A :class:`ForwardPlan`: forward-mode derivatives of ``outputs`` with respect to ``inputs``
    (leaves or recorded results of the graph of ``outputs``), to push any number of tangents
    through (``jacfwd`` pushes one basis vector per input element).

    Example::

        >>> import gradhub as gh
        >>> x = gh.Variable([1.0, 2.0], need_grad=True)
        >>> y = x * x * x
        >>> push = gh.engine.forward_plan([y], [x])
        >>> push([gh.Variable([1.0, 0.0])])[0].d
        array([3., 0.], dtype=float32)
    """
    for k, v in enumerate(outputs):
        if not isinstance(v, Variable):
            raise TypeError(
                f"forward_tangents: outputs[{k}] must be a Variable, got {type(v).__name__}"
            )
        if isinstance(v, BatchedVariable):
            raise _batched_error("outputs", k, "forward_tangents")
    for k, v in enumerate(inputs):
        if not isinstance(v, Variable):
            raise TypeError(
                f"forward_tangents: inputs[{k}] must be a Variable, got {type(v).__name__}"
            )
        if isinstance(v, BatchedVariable):
            raise _batched_error("inputs", k, "forward_tangents")
    return ForwardPlan(outputs, inputs)


def forward_tangents(
    outputs: Sequence[Variable],
    inputs: Sequence[Variable],
    tangents: Sequence[Any],
) -> list[Variable]:
    """The Jacobian-vector products of ``outputs`` with respect to ``inputs`` along
    ``tangents`` (forward mode), one Variable per output:

    .. math:: \\dot y_k = \\sum_i \\frac{\\partial y_k}{\\partial x_i} \\dot x_i

    ``inputs`` are leaves or recorded results of the graph of ``outputs``; ``tangents`` has one
    entry per input (a Variable or array of the input's shape, cast to its dtype; None for a zero
    tangent). The graph is walked forward, in creation order, applying each node's JVP rule
    (``FunctionDef.jvp_rule``); a node without one transposes its backward rule locally, with
    the same result. The results are recorded (differentiable again). An output that does not
    depend on the inputs gets zeros. See :class:`ForwardPlan`.

    Example::

        >>> import gradhub as gh
        >>> x = gh.Variable([1.0, 2.0], need_grad=True)
        >>> y = (x * x).sum()
        >>> (t,) = gh.engine.forward_tangents([y], [x], [gh.Variable([1.0, 1.0])])
        >>> float(t.d)  # 2 x . v
        6.0
    """
    outs, ins, ts = list(outputs), list(inputs), list(tangents)
    return forward_plan(outs, ins)(ts)


#: id(output Variable) -> its plan (gradhub.plan binds the table; empty: every walk is eager)
_plans: dict[int, Any] = {}
#: ``gradhub.plan``'s forward runner: runs ``y``'s plan and returns True, or returns False
_planner: Any = None


def bind_plans(table: dict[int, Any], planner: Any) -> None:
    """Make ``table`` the plans that first-order walks look up by their first output, and
    ``planner(y) -> bool`` what :func:`reexecute` tries first (gradhub.plan calls it; see
    "Layers" in docs/design.md)."""
    global _plans, _planner
    _plans = table
    _planner = planner


# Variable.backward and Variable.forward run this module's passes; variable sits below it (see
# "Layers" in docs/design.md)
bind_engine(backward, reexecute)
