"""nnabla's view of a recorded function (``y.parent``, the argument of function hooks) and the
function hooks of ``forward``/``backward``.

nnabla calls ``function_pre_hook(f)`` and ``function_post_hook(f)`` around each function that
``forward()`` executes (producers first) and around each function whose backward ``backward()``
runs (consumers first). ``f`` is a :class:`FunctionView`: ``f.name`` and ``f.info.type_name`` are
the function's name (``"MulScalar"``, ``"ReLU"``...), ``f.info.args`` its arguments,
``f.inputs``/``f.outputs`` its Variables.

Only calls that pass hooks pay for them: ``forward`` then re-executes the graph here, node by
node, with the same public pieces the native re-execution uses; ``backward`` wraps the rule of
each node of the graph in one that calls the hooks, for that pass only.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from contextlib import contextmanager
from typing import Any

import numpy as np
from gradhub.engine import collect_graph, is_freed, rerun_kernel
from gradhub.graph import links_changed
from gradhub.modes import set_recording
from gradhub.registry import Rule
from gradhub.variable import Variable as NativeVariable

Hook = Callable[[Any], Any]


class FunctionInfo:
    """``f.info`` of nnabla: ``type_name`` (the function's name) and ``args`` (its arguments)."""

    __slots__ = ("args", "type_name")

    def __init__(self, type_name: str, args: dict[str, Any]) -> None:
        self.type_name = type_name
        self.args = args

    def __repr__(self) -> str:
        return f"FunctionInfo(type_name={self.type_name!r}, args={self.args!r})"


#: attributes of the layer's functions that are not nnabla arguments (not in ``info.args``)
_INTERNAL_ATTRS = frozenset(("refs", "built_rows", "built_shape"))

#: the functions whose nnabla arguments include ``inplace`` that gradhub's do not record
INPLACE_FUNCTIONS = frozenset(
    ("Add2", "BcAdd2", "Sub2", "Mul2", "Div2", "Pow2", "AddScalar", "MulScalar", "PowScalar")
)

#: the graph nodes of those functions built with ``inplace=True`` (nnabla's ``info.args`` and
#: NNP files show the flag; the computation is the same either way)
INPLACE_NODES: weakref.WeakSet[Any] = weakref.WeakSet()


def mark_inplace(y: Any) -> None:
    """Record that the function that made ``y`` was called with nnabla's ``inplace=True``."""
    node = getattr(y, "_creator", None)
    if node is not None and node.fdef.name in INPLACE_FUNCTIONS:
        INPLACE_NODES.add(node)


#: graph nodes that nnabla records under another function's name than the gradhub function
#: computing them (``F.bc_add2``: an ``Add2`` node shown and written to NNP files as ``BcAdd2``)
NNABLA_NAMES: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()


def record_as(y: Any, type_name: str) -> None:
    """Show the function that made ``y`` as nnabla's ``type_name`` (``y.parent.name``,
    ``info.type_name``, NNP files); the computation is unchanged."""
    node = getattr(y, "_creator", None)
    if node is not None:
        NNABLA_NAMES[node] = type_name


def nnabla_name(node: Any) -> str:
    """The nnabla function name of the graph node ``node``."""
    return NNABLA_NAMES.get(node) or str(node.fdef.name)


def _as_nnabla_args(name: str, args: dict[str, Any], in_shapes: list[Any]) -> dict[str, Any]:
    """``args`` as nnabla's ``info.args`` show them: sequences of integers as lists; for
    ``Convolution``/``Deconvolution`` the defaults of ``pad`` (0), ``stride`` and ``dilation`` (1)
    and ``output_padding`` (0) filled in per spatial dimension (the weight's dimensions but two);
    for ``MaxPooling``/``AveragePooling`` ``stride`` (the kernel) and ``pad`` (0)."""
    out: dict[str, Any] = {}
    for k, v in args.items():
        if isinstance(v, tuple) and all(isinstance(e, (int, np.integer)) for e in v):
            v = [int(e) for e in v]
        out[k] = v
    if name in ("Convolution", "Deconvolution") and len(in_shapes) > 1:
        n = len(in_shapes[1]) - 2
        for key, default in (("pad", 0), ("stride", 1), ("dilation", 1), ("output_padding", 0)):
            if key in out and out[key] is None:
                out[key] = [default] * n
        out.setdefault("channel_last", False)
    elif name in ("MaxPooling", "AveragePooling") and isinstance(out.get("kernel"), list):
        kernel = out["kernel"]
        if out.get("stride", 0) is None:
            out["stride"] = list(kernel)
        if out.get("pad", 0) is None:
            out["pad"] = [0] * len(kernel)
    return out


class FunctionView:
    """A recorded function call as nnabla shows it (``y.parent``, the argument of a hook)."""

    __slots__ = ("_node", "_revived")

    def __init__(self, node: Any) -> None:
        self._node = node
        self._revived: list[tuple[Any, int, NativeVariable]] = []

    def _keep_names(self) -> None:
        """Remember the names given to Variables this view revived (nnabla keeps every Variable
        of a graph, so ``v.name = ...`` in a visitor or hook must outlive the call)."""
        for node, idx, v in self._revived:
            if v.name is not None:
                _names.setdefault(node, {})[idx] = v.name

    @property
    def name(self) -> str:
        """The function's name, as nnabla's ``Function.name`` (``"Affine"``, ``"ReLU"``...)."""
        return nnabla_name(self._node)

    @property
    def info(self) -> FunctionInfo:
        """``type_name`` and ``args`` (the function's arguments, without internal ones)."""
        args = {k: v for k, v in self._node.attrs.items() if k not in _INTERNAL_ATTRS}
        if self.name in INPLACE_FUNCTIONS:
            args["inplace"] = self._node in INPLACE_NODES
        return FunctionInfo(self.name, _as_nnabla_args(self.name, args, self._node.in_shapes))

    @property
    def args(self) -> dict[str, Any]:
        return self.info.args

    @property
    def inputs(self) -> list[Any]:
        """The input Variables (a recorded input whose Variable is gone comes back as None)."""
        from ._variable import Variable

        node = self._node
        res: list[Any] = []
        for i, (src, idx) in enumerate(zip(node.srcs, node.idxs)):
            v = src if idx < 0 else src.outputs[idx]()
            if v is None:  # an intermediate no longer referenced: a Variable for it again
                saved = node.saved_in[i] if node.saved_in is not None else None
                v = _revived(src, idx, saved)
                self._revived.append((src, idx, v))
            res.append(_adopted(v, Variable))
        return res

    @property
    def outputs(self) -> list[Any]:
        """The output Variables (one no longer referenced comes back as a Variable again)."""
        from ._variable import Variable

        node = self._node
        res: list[Any] = []
        for k, r in enumerate(node.outputs):
            v = r()
            if v is None:
                saved = node.saved_out[k] if node.saved_out is not None else None
                v = _revived(node, k, saved)
                self._revived.append((node, k, v))
            res.append(_adopted(v, Variable))
        return res

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FunctionView) and other._node is self._node

    def __hash__(self) -> int:
        return hash(id(self._node))

    def __repr__(self) -> str:
        return f"<Function {self.name}>"


#: node -> {output index: name} of revived outputs that were given a name (see _keep_names)
_names: weakref.WeakKeyDictionary[Any, dict[int, str]] = weakref.WeakKeyDictionary()


def _revived(node: Any, idx: int, saved: Any) -> NativeVariable:
    """A Variable for output ``idx`` of ``node`` that nothing references any more (nnabla keeps
    every Variable of a graph): the array the graph saved, else zeros of its shape and dtype
    until ``forward()`` recomputes it (it becomes the node's output again)."""
    if saved is None:
        with node.device.activate():
            saved = node.device.xp.zeros(node.out_shapes[idx], dtype=node.out_dtypes[idx])
    v = graph_variable(saved, node.need_grad and saved.dtype.kind in "fc", node, idx)
    v.name = _names.get(node, {}).get(idx)
    outs = list(node.outputs)
    outs[idx] = weakref.ref(v)
    node.outputs = tuple(outs)
    links_changed()  # (a plan's generated code writes only the outputs alive when it was made)
    return v


def graph_variable(data: Any, need_grad: bool, node: Any, idx: int) -> NativeVariable:
    """A Variable holding ``data`` as output ``idx`` of ``node``."""
    v = NativeVariable.leaf(data, need_grad)
    v._creator = node
    v._idx = idx
    return v


def _adopted(v: Any, cls: type) -> Any:
    if type(v) is NativeVariable:
        v.__class__ = cls
    return v


def _call(hook: Hook | None, node: Any) -> None:
    if hook is not None:
        view = FunctionView(node)
        hook(view)
        view._keep_names()


def visit(y: NativeVariable, f: Hook) -> None:
    """Call ``f`` with each function of the graph producing ``y``, producers first (nnabla's
    ``Variable.visit``)."""
    if y._creator is None:
        return
    for n in collect_graph([y]):
        _call(f, n)


def forward_with_hooks(y: Any, pre: Hook | None, post: Hook | None) -> None:
    """Re-execute the graph producing ``y`` (a Variable, or a list of Variables whose graphs are
    executed together, each function once) as ``Variable.forward``, calling the hooks around
    each function, producers first."""
    ys = [v for v in (y if isinstance(y, (list, tuple)) else [y]) if v._creator is not None]
    if not ys:
        return
    nodes = collect_graph(ys)
    values: dict[Any, tuple[Any, ...]] = {}
    with set_recording(False):
        for n in nodes:
            arrays = [
                src._data if idx < 0 else values[src][idx] for src, idx in zip(n.srcs, n.idxs)
            ]
            _call(pre, n)
            outs = rerun_kernel(n, arrays)
            n.in_shapes = [a.shape for a in arrays]
            n.in_dtypes = [a.dtype for a in arrays]
            n.out_shapes = [o.shape for o in outs]
            n.out_dtypes = [o.dtype for o in outs]
            if n.rule is not None:
                n.rule = n.fdef.rule  # a freeing backward pass may have dropped it
                n.save(arrays, outs)
            for ref, o in zip(n.outputs, outs):
                v = ref()
                if v is not None:
                    v._data = o
            values[n] = outs
            _call(post, n)


def _call_post(post: Hook | None, node: Any, res: Any, running: dict[Any, Any]) -> None:
    """Add this function's input gradients ``res`` to the pass's running sums, then call
    ``post`` while each input's ``.g`` shows its sum so far (a leaf's: its ``.g`` before the
    pass plus the sum), as nnabla's post-hook sees the gradients accumulated into the inputs."""
    grads = list(res) if isinstance(res, (list, tuple)) else [res]
    for i, (src, idx) in enumerate(zip(node.srcs, node.idxs)):
        if i >= len(grads) or grads[i] is None:
            continue
        g = grads[i]
        if isinstance(g, NativeVariable):
            g = g._data
        key = (id(src), idx)
        if key in running:
            running[key] = running[key] + g
        elif idx < 0 and src._grad is not None:
            running[key] = src._grad._data + g
        else:
            running[key] = g
    if post is None:
        return
    view = FunctionView(node)
    shown: list[tuple[NativeVariable, Any]] = []
    for v, src, idx in zip(view.inputs, node.srcs, node.idxs):
        g = running.get((id(src), idx))
        if g is not None and tuple(g.shape) == tuple(v.shape):
            shown.append((v, v._grad))
            v._grad = NativeVariable.leaf(g)
    try:
        post(view)
        view._keep_names()
    finally:
        for v, old in reversed(shown):
            v._grad = old


def _hooked_rule(
    node: Any, rule: Rule, pre: Hook | None, post: Hook | None, running: dict[Any, Any]
) -> Rule:
    fn = rule.fn

    def hooked(*args: Any, **kwargs: Any) -> Any:
        _call(pre, node)
        res = fn(*args, **kwargs)
        _call_post(post, node, res, running)
        return res

    fast = rule.fast
    hooked_fast: Any = None
    if fast is not None:

        def hooked_fast(*args: Any, **kwargs: Any) -> Any:
            _call(pre, node)
            res = fast(*args, **kwargs)
            _call_post(post, node, res, running)
            return res

        if rule.fast_wants_need_grads:
            base = hooked_fast

            def hooked_fast(*args: Any, need_grads: Any = None, **kwargs: Any) -> Any:
                return base(*args, need_grads=need_grads, **kwargs)

    return Rule(
        hooked,
        rule.provider,
        rule.need_inputs,
        rule.need_outputs,
        rule.first_order_only,
        hooked_fast,
    )


@contextmanager
def backward_hooks(y: NativeVariable, pre: Hook | None, post: Hook | None) -> Any:
    """In the block, the rule of each node of ``y``'s graph calls the hooks around it."""
    if pre is None and post is None:
        yield
        return
    swapped: list[tuple[Any, Rule, Rule]] = []
    running: dict[Any, Any] = {}  # (id of an input's source, index) -> gradient so far
    for n in collect_graph([y], only_need_grad=True):
        rule = n.rule
        if rule is None or is_freed(n):
            continue
        hooked = _hooked_rule(n, rule, pre, post, running)
        n.rule = hooked
        swapped.append((n, rule, hooked))
    try:
        yield
    finally:
        for n, rule, hooked in swapped:
            if n.rule is hooked:  # (a freeing pass replaced it: leave that)
                n.rule = rule
