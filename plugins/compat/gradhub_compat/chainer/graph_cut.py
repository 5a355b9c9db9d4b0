"""Cutting a chainer graph: ``Variable.unchain``, ``Variable.unchain_backward`` and
``FunctionNode.unchain`` (chainer 7.8.1's semantics on gradhub's graph).

In chainer a Variable's node links to its creator; cutting the link makes the Variable a root:
every backward pass stops there and leaves the gradient that reached it in its ``.grad``, also
in graphs built from it before the cut. gradhub's graph nodes link to the node that produced
each input, not to the Variable, so a cut changes two things:

* the Variable becomes a leaf (graphs built afterwards start there), keeping ``requires_grad``;
* the node that produced it now takes that leaf as an extra input and gives the leaf's data as
  the cut output: the gradient reaching the output goes to the leaf, not upstream (graphs built
  before). A node cut at every output forgets its inputs and the arrays kept for its rule
  (what ``unchain_backward`` frees).

The node gets a copy of its function definition with the changed forward and rule, so
``forward()`` re-execution keeps the cut; re-executing an output whose Variable was gone when the
node was cut raises.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

import numpy as np
from gradhub.engine import collect_graph, is_freed
from gradhub.graph import Node, links_changed
from gradhub.modes import is_tracing
from gradhub.registry import REGISTRY, FunctionDef, Rule
from gradhub.variable import Variable as _NativeVariable

__all__ = ["cut_node", "unchain", "unchain_backward"]


class _Cut:
    """What a cut did to a node: its uncut definition, how many inputs that had, and for each
    cut output its leaf (None: the Variable was gone)."""

    __slots__ = ("leaves", "n_orig", "orig")

    def __init__(self, orig: FunctionDef, n_orig: int) -> None:
        self.orig = orig
        self.n_orig = n_orig
        self.leaves: dict[int, _NativeVariable | None] = {}


def _several(**attrs: Any) -> int:
    return -1


def _gone(name: str, j: int) -> RuntimeError:
    return RuntimeError(
        f"{name}: output {j} was cut from the graph (chainer unchain) after its Variable was "
        "gone, so forward() cannot recompute it"
    )


def _cut_def(node: Node, cut: _Cut) -> FunctionDef:
    """The definition of ``node`` after the cut ``cut`` (a copy of the original)."""
    orig, n_orig = cut.orig, cut.n_orig
    n_out = len(node.out_shapes)
    leaves = cut.leaves
    full = len(leaves) == n_out
    live = [j for j in sorted(leaves) if leaves[j] is not None]
    pos = {j: (0 if full else n_orig) + k for k, j in enumerate(live)}
    name = orig.name
    base = orig.rule

    def forward(xp: Any, *arrays: Any, **attrs: Any) -> tuple[Any, ...]:
        if full:
            outs: list[Any] = [None] * n_out
        else:
            dev = REGISTRY.array_device(arrays[0])
            kernel = orig.kernels.get(dev.kind, orig.forward) if dev is not None else orig.forward
            out = kernel(xp, *arrays[:n_orig], **attrs)
            outs = [out] if orig.n_outputs == 1 else list(out)
        for j in leaves:
            if j not in pos:
                raise _gone(name, j)
            outs[j] = arrays[pos[j]]
        return tuple(outs)

    def rule_fn(
        gys: list[Any], ins: list[Any], in_shapes: Any, outs: Any, out_shapes: Any, **attrs: Any
    ) -> list[Any]:
        passed = [gys[j] for j in live]
        if full:
            return passed + [None] * (len(in_shapes) - len(passed))
        if base is None:
            res: list[Any] = [None] * n_orig
        else:
            g2 = [
                _NativeVariable.leaf(g.device.xp.zeros_like(g._data), False)
                if j in leaves and g is not None
                else g
                for j, g in enumerate(gys)
            ]
            res = list(base.fn(g2, ins[:n_orig], in_shapes[:n_orig], outs, out_shapes, **attrs))
        return res + passed

    new = copy.copy(orig)
    new.forward = forward
    new.kernels = {}
    new.n_outputs = _several
    new.chainer_cut = cut  # type: ignore[attr-defined]
    if full:
        new.rule = Rule(rule_fn, orig.provider if base is None else base.provider, (), ())
    elif base is None:
        new.rule = None
    else:
        new.rule = Rule(
            rule_fn, base.provider, base.need_inputs, base.need_outputs, base.first_order_only
        )
    return new


def _cut(node: Node, outputs: Iterable[int]) -> None:
    """Cut the outputs ``outputs`` of ``node``: each live one becomes a leaf fed back in."""
    if is_tracing():
        raise NotImplementedError(
            f"chainer unchain: cutting {node.fdef.snake}() out of the graph inside a step that "
            "gradhub.compile traces is not supported (a compiled step replays its graph, and "
            "the cut Variables would hold this call's values at every later call); use "
            "x.detach() inside the step (chainer.Variable(x.array) is refused there too), or "
            "cut the graph outside the compiled step"
        )
    fdef = node.fdef
    cut: _Cut | None = getattr(fdef, "chainer_cut", None)
    if cut is None:
        cut = _Cut(fdef, len(node.srcs))
    new_leaves = []
    for j in outputs:
        if j in cut.leaves:
            continue
        v = node.outputs[j]() if j < len(node.outputs) else None
        if v is not None:
            v._creator = None
            v._idx = 0
            new_leaves.append(v)
        cut.leaves[j] = v
    new = _cut_def(node, cut)
    full = len(cut.leaves) == len(node.out_shapes)
    keep_rule = node.rule is not None and not is_freed(node)
    if full:
        fn = node.attrs.get("function_node")
        if fn is not None:  # a user function: chainer's FunctionNode.unchain forgets its links
            fn.inputs = None
            fn.outputs = None
        leaves: list[_NativeVariable] = [
            v for j in sorted(cut.leaves) if (v := cut.leaves[j]) is not None
        ]
        if not leaves:  # (a node has at least one input) a constant that asks for nothing
            leaves = [_NativeVariable.leaf(np.zeros(()), False)]
        node.srcs = list(leaves)
        node.idxs = [-1] * len(leaves)
        node.in_shapes = [v._data.shape for v in leaves]
        node.in_dtypes = [v._data.dtype for v in leaves]
        node.saved_in = node.saved_out = None
        node.need_grad = any(v._need_grad for v in leaves)
        node.rule = new.rule if node.need_grad else None
    else:
        node.srcs = [*node.srcs, *new_leaves]
        node.idxs = [*node.idxs, *([-1] * len(new_leaves))]
        node.in_shapes = [*node.in_shapes, *(v._data.shape for v in new_leaves)]
        node.in_dtypes = [*node.in_dtypes, *(v._data.dtype for v in new_leaves)]
        if node.saved_in is not None:
            node.saved_in = (*node.saved_in, *([None] * len(new_leaves)))
        if keep_rule:
            node.rule = new.rule
    node.fdef = new
    links_changed()  # (plans made for the uncut graph are made again)


def cut_node(node: Node) -> None:
    """Cut ``node`` out of the graph (chainer's ``FunctionNode.unchain``): each of its live
    outputs becomes a leaf and no gradient flows to its inputs any more."""
    _cut(node, range(len(node.out_shapes)))


def unchain(v: _NativeVariable) -> None:
    """Cut ``v`` from its creator (chainer's ``Variable.unchain``): ``v`` becomes a leaf
    (keeping its ``requires_grad``) and backward passes stop at it, also in graphs built from it
    earlier (the gradient reaching it there is left in its ``.grad`` by ``backward``). Nothing
    happens for a Variable without a creator."""
    node = v._creator
    if node is not None:
        _cut(node, (v._idx,))


def unchain_backward(v: _NativeVariable) -> None:
    """Cut every node upstream of ``v`` (chainer's ``Variable.unchain_backward``, as used for
    truncated backprop through time): ``v`` and the live outputs of those nodes become leaves
    and the nodes free their inputs and the arrays kept for their rules."""
    if v._creator is None:
        return
    nodes = collect_graph([v])
    for node in reversed(nodes):
        cut_node(node)
