"""Elementwise fusion in plans: chains of elementwise functions run as one device kernel.

A plan (:mod:`gradhub.plan`) built for a device that has a **fuser** (registered by a device
plugin with ``register.fuser(device, fuser)`` in ``gradhub_add_kernels``) looks in its forward
schedule for runs of elementwise nodes (``FunctionDef.elementwise``) that the fuser accepts
(brought next to each other first where other nodes separate them, see :func:`schedule`), of
one floating dtype (float32 or float64) and one shape, whose inputs have that shape or are 0-d
(a run of 0-d values, such as a loss's arithmetic, too). Each such run of two or more nodes
becomes a :class:`Chain`, which the fuser turns into one callable ``fn(xp, *inputs) ->
outputs``: one kernel launch in place of one per node.

A value computed inside a chain is still **produced** (an output of the fused call) where anything
else needs it: a node outside the chain (in any segment of the plan), the arrays a backward rule
keeps (``need_inputs``, ``need_outputs``), or an output Variable still referenced when the plan is
made. The other values stay inside the kernel (registers). So a chain in a training graph saves
launches (one kernel writes every kept value), and a chain in an inference graph, or of functions
whose rules keep nothing (``AddScalar``, ``MulScalar``, ``Neg``), saves their memory traffic too.

The fused call must give the unfused kernels' numbers bit for bit (the same operations in the
same order, in the dtype of the arrays, none contracted into another): a fuser that cannot
promise it for a function does not accept it. ``GRADHUB_FUSION=0`` in the environment (read at
import), or :func:`set_enabled`, turns fusion off for the plans made from then on.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from .registry import REGISTRY

_enabled = os.environ.get("GRADHUB_FUSION", "1") != "0"

#: the floating dtypes a chain may have
FUSED_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def set_enabled(on: bool) -> bool:
    """Turn elementwise fusion in plans on or off for the plans made from then on (a plan keeps
    what it was made with, until it is made again); returns the previous setting.

    Example::

        >>> import gradhub.fusion as fusion
        >>> previous = fusion.set_enabled(False)
        >>> fusion.set_enabled(previous)
        False
    """
    global _enabled
    before = _enabled
    _enabled = bool(on)
    return before


def enabled() -> bool:
    """Whether plans fuse elementwise chains (see :func:`set_enabled`)."""
    return _enabled


class FusedOp(NamedTuple):
    """One node of a :class:`Chain`: the function ``name`` with its attributes, applied to the
    chain's values ``args`` (value ``k`` is the chain's input ``k`` for ``k < len(inputs)``, else
    the result of op ``k - len(inputs)``)."""

    name: str
    attrs: tuple[tuple[str, Any], ...]
    args: tuple[int, ...]


class Chain(NamedTuple):
    """What a fuser fuses: ``inputs`` (``(shape, dtype)`` of each array the chain reads: the
    chain's ``shape`` or 0-d, its ``dtype``), the ``ops`` in schedule order, and the values
    ``outputs`` the fused call returns, in that order. Hashable: a fuser may cache by it.

    .. math:: \\text{outputs} = (v_{o_1}, \\dots), \\quad
              v_{n + k} = f_k(v_{a_{k,1}}, v_{a_{k,2}}, \\dots)
    """

    inputs: tuple[tuple[tuple[int, ...], Any], ...]
    ops: tuple[FusedOp, ...]
    outputs: tuple[int, ...]
    shape: tuple[int, ...]
    dtype: Any


class Fuser:
    """A device's elementwise fuser (the base class of what ``register.fuser`` takes).

    A fuser says which functions it can fuse (:meth:`accepts`) and turns a :class:`Chain` into one
    callable (:meth:`build`). Plans ask it when they are made, never while they run.

    Example (every op by its function's own kernel: the numbers of the unfused plan)::

        >>> import numpy as np
        >>> from gradhub.fusion import Chain, FusedOp, Fuser
        >>> from gradhub.registry import REGISTRY
        >>> class ByKernels(Fuser):
        ...     def accepts(self, name, attrs, dtype):
        ...         return True
        ...     def build(self, chain):
        ...         fns = [REGISTRY.get(op.name).forward for op in chain.ops]
        ...         def run(xp, *arrays):
        ...             vals = list(arrays)
        ...             for fn, op in zip(fns, chain.ops):
        ...                 vals.append(fn(xp, *[vals[a] for a in op.args], **dict(op.attrs)))
        ...             return [vals[o] for o in chain.outputs]
        ...         return run
        >>> f64 = np.dtype(np.float64)
        >>> chain = Chain((((2,), f64),), (FusedOp("Neg", (), (0,)),
        ...               FusedOp("MulScalar", (("val", 3.0),), (1,))), (2,), (2,), f64)
        >>> ByKernels().build(chain)(np, np.array([1.0, -2.0]))[0].tolist()
        [-3.0, 6.0]
    """

    def accepts(self, name: str, attrs: dict[str, Any], dtype: Any) -> bool:
        """Whether the function ``name`` with these attributes, on arrays of ``dtype``, can be
        part of a chain (with the unfused kernel's numbers)."""
        raise NotImplementedError

    def build(self, chain: Chain) -> Callable[..., Sequence[Any]] | None:
        """``fn(xp, *arrays) -> outputs`` computing ``chain`` (one array per
        ``chain.outputs``, of the chain's shape and dtype, of the device's array type), or None
        to leave the chain unfused."""
        raise NotImplementedError


class Group(NamedTuple):
    """A fused run of a plan's forward steps ``first`` to ``last`` (indices into its steps):
    ``fn(xp, *values[ins])`` returns the values ``outs`` (plan positions)."""

    first: int
    last: int
    fn: Callable[..., Sequence[Any]]
    xp: Any
    ins: tuple[int, ...]
    outs: tuple[int, ...]


#: how many other nodes a run may pass over to take in a later node (see :func:`schedule`)
MAX_SKIPPED = 16


def _fuser_of(
    node: Any,
    attrs: dict[str, Any],
    fusers: dict[str, Any],
    ins: Sequence[int] = (),
    type_of: dict[int, Any] | None = None,
) -> Any:
    """The fuser that can take ``node`` (called with ``attrs``) into a run, or None: an
    elementwise, not random function of one output of a fused dtype and a nonempty shape, on a
    device with a fuser that accepts it, whose inputs have that dtype and that shape or are 0-d
    (with ``type_of``: the plan's array types of the input positions ``ins``, each the node's
    output type)."""
    fdef = node.fdef
    if not fdef.elementwise or fdef.random or len(node.out_shapes) != 1:
        return None
    fuser = fusers.get(node.device.kind)
    if fuser is None:
        return None
    dtype, shape = node.out_dtypes[0], node.out_shapes[0]
    if dtype not in FUSED_DTYPES or 0 in shape:
        return None
    for s, d in zip(node.in_shapes, node.in_dtypes):
        if d != dtype or (s != shape and s != ()):
            return None
    if type_of is not None and any(type_of.get(j) is not node.out_type for j in ins):
        return None
    try:
        ok = fuser.accepts(fdef.name, attrs, dtype)
    except Exception:  # a fuser that cannot tell leaves the node unfused
        return None
    return fuser if ok else None


def _node_key(node: Any, fusers: dict[str, Any]) -> tuple[Any, ...] | None:
    """What a node must share with the others of a run (its fuser, device, shape and dtype), or
    None where it cannot be in one (the plan's steps are checked again, see :func:`find_groups`)."""
    fuser = _fuser_of(node, node.attrs, fusers)
    if fuser is None:
        return None
    return (fuser, node.device, tuple(node.out_shapes[0]), node.out_dtypes[0])


def schedule(nodes: list[Any], bounds: Sequence[tuple[int, int]]) -> list[Any]:
    """The forward schedule ``nodes`` (producers first) with the nodes of each run brought
    together, within each segment ``bounds``: a node that could join a run (the same fuser,
    device, shape and dtype) which other nodes separate from it is taken in, and the run moves to
    the place of its last node, where nothing separates them. A node in between stays where it
    is; it must not read a value of the run (the run ends before the first that does), and at most
    :data:`MAX_SKIPPED` are passed over. Moved nodes are elementwise and not random, and each
    still comes after what it reads, so the values are the same; only the order of launches
    changes (W4's sum of its penalty's norms, ``Add2`` nodes between the ``Norm`` nodes they
    read, becomes one run). The nodes themselves when there is nothing to move."""
    fusers = REGISTRY.fusers
    if not _enabled or not fusers or not any(n.device.kind in fusers for n in nodes):
        return nodes
    out = list(nodes)
    for lo, hi in bounds:
        out[lo:hi] = _schedule_segment(out[lo:hi], fusers)
    return out


def _schedule_segment(seg: list[Any], fusers: dict[str, Any]) -> list[Any]:
    keys = [_node_key(n, fusers) for n in seg]
    order: list[Any] = []
    i = 0
    while i < len(seg):
        key = keys[i]
        if key is None:
            order.append(seg[i])
            i += 1
            continue
        members = [i]
        made = {seg[i]}
        skipped = 0
        for j in range(i + 1, len(seg)):
            node = seg[j]
            if keys[j] == key:
                members.append(j)
                made.add(node)
                continue
            if any(src in made for src in node.srcs):
                break  # (it reads a value of the run: the run ends before it)
            skipped += 1
            if skipped > MAX_SKIPPED:
                break
        last = members[-1]
        if last - i + 1 == len(members):  # (nothing to move: the plain run, or one node)
            order.extend(seg[i : last + 1])
        else:
            inside = set(members)
            order.extend(seg[k] for k in range(i, last + 1) if k not in inside)
            order.extend(seg[k] for k in members)
        i = last + 1
    return order


def _candidate(step: tuple[Any, ...], fusers: dict[str, Any], type_of: dict[int, Any]) -> Any:
    """The fuser that takes plan step ``step`` into a chain, or None."""
    node, _, _, attrs, ins, _, single = step[:7]
    return _fuser_of(node, attrs, fusers, ins, type_of) if single else None


def _kept(step: tuple[Any, ...]) -> tuple[set[int], bool]:
    """The positions of the inputs a step's rule keeps, and whether it keeps its output."""
    save, rule, ins = step[7], step[8], step[4]
    if save in (0, 2) or rule is None:
        return set(), False
    if save == 1:
        return set(ins), False
    ni, no = rule.need_inputs, rule.need_outputs
    kept_in = set(ins) if ni is None else {j for i, j in enumerate(ins) if i in ni}
    return kept_in, no is None or bool(no)


def find_groups(
    steps: Sequence[tuple[Any, ...]],
    segments: Sequence[tuple[int, int]],
    type_of: dict[int, Any],
) -> list[Group]:
    """The fused groups of a plan's forward ``steps`` (the tuples of :class:`gradhub.plan.Plan`),
    each inside one of its ``segments``, ``type_of`` the array type of each value position where
    the plan knows it. Empty when fusion is off or no device of the steps has a fuser."""
    fusers = REGISTRY.fusers
    if not _enabled or not fusers or not any(s[0].device.kind in fusers for s in steps):
        return []
    readers: dict[int, list[int]] = {}
    for k, step in enumerate(steps):
        for j in step[4]:
            readers.setdefault(j, []).append(k)
    fuser_of = [_candidate(step, fusers, type_of) for step in steps]
    groups = []
    for lo, hi in segments:
        k = lo
        while k < hi:
            fuser = fuser_of[k]
            if fuser is None:
                k += 1
                continue
            node = steps[k][0]
            key = (node.device, node.out_shapes[0], node.out_dtypes[0])
            end = k + 1
            while end < hi:
                nd = steps[end][0]  # (a candidate has one output)
                if fuser_of[end] is not fuser or (
                    (nd.device, nd.out_shapes[0], nd.out_dtypes[0]) != key
                ):
                    break
                end += 1
            if end - k >= 2:
                g = _group(steps, k, end, fuser, readers)
                if g is not None:
                    groups.append(g)
            k = end
    return groups


def _group(
    steps: Sequence[tuple[Any, ...]],
    first: int,
    end: int,
    fuser: Fuser,
    readers: dict[int, list[int]],
) -> Group | None:
    """The group of steps ``first`` to ``end - 1``, built by ``fuser`` (None where it refuses)."""
    made: dict[int, int] = {}  # plan position -> the op making it
    ext: list[int] = []
    ext_meta: list[tuple[tuple[int, ...], Any]] = []
    ops: list[FusedOp] = []
    wanted: set[int] = set()
    members = range(first, end)
    for k in members:
        node, _, _, attrs, ins, b = steps[k][:6]
        for j, s, d in zip(ins, node.in_shapes, node.in_dtypes):
            if j not in made and j not in ext:
                ext.append(j)
                ext_meta.append((tuple(s), d))
        # an op's arguments: an earlier op's result (its index), or an input (-1 - its index)
        args = tuple(made[j] if j in made else -1 - ext.index(j) for j in ins)
        kept_in, kept_out = _kept(steps[k])
        wanted |= {j for j in kept_in if j in made}
        if kept_out or node.outputs[0]() is not None:
            wanted.add(b)
        if any(r not in members for r in readers.get(b, ())):
            wanted.add(b)
        made[b] = len(ops)
        ops.append(FusedOp(node.fdef.name, tuple(attrs.items()), args))
    n = len(ext)
    # value numbers: the inputs first, then the ops' results
    ops = [op._replace(args=tuple(-1 - a if a < 0 else n + a for a in op.args)) for op in ops]
    last_b = steps[end - 1][5]
    if not wanted:
        wanted.add(last_b)  # (an unreferenced result: still the chain's product)
    outs = tuple(sorted(wanted, key=lambda j: made[j]))
    node = steps[first][0]
    chain = Chain(
        tuple(ext_meta),
        tuple(ops),
        tuple(n + made[j] for j in outs),
        tuple(node.out_shapes[0]),
        node.out_dtypes[0],
    )
    try:
        fn = fuser.build(chain)
    except Exception:  # a fuser that fails to build leaves the chain unfused
        return None
    if fn is None:
        return None
    return Group(first, end - 1, fn, node.device.xp, tuple(ext), outs)
