"""The computation graph: one :class:`Node` per recorded function call, and :func:`apply`.

Links are one-way so that a dropped graph is freed by reference counting alone: an output
Variable holds its creator node; a node holds its inputs' positions (the upstream node and output
index, or the leaf Variable) and only the arrays its backward rule declared it needs; a node holds
its outputs weakly.
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .device import CPU, Device
from .errors import DeviceError, GradhubError
from .modes import state as _mode
from .registry import REGISTRY
from .variable import Variable, as_variable

if TYPE_CHECKING:
    from .registry import FunctionDef

_seq = itertools.count()


class Node:
    """One recorded function call.

    ``srcs[i]`` is the upstream node of input ``i`` (with ``idxs[i]`` its output index), or the
    leaf Variable itself (``idxs[i] == -1``). ``saved_in``/``saved_out`` hold the arrays the rule
    needs (``None`` elsewhere). ``seq`` orders nodes: producers have smaller ``seq`` than consumers.
    """

    __slots__ = (
        "__weakref__",
        "attrs",
        "device",
        "fdef",
        "idxs",
        "in_meta",
        "need_grad",
        "out_meta",
        "outputs",
        "rule",
        "saved_in",
        "saved_out",
        "seq",
        "srcs",
    )

    def __init__(
        self,
        fdef: FunctionDef,
        attrs: dict[str, Any],
        inputs: Sequence[Variable],
        arrays: Sequence[Any],
        outs: Sequence[Any],
        need_grad: bool,
        device: Device,
    ) -> None:
        self.fdef = fdef
        self.attrs = attrs
        self.device = device
        self.need_grad = need_grad
        self.seq = next(_seq)
        srcs = []
        idxs = []
        for v in inputs:
            c = v._creator
            if c is None:
                srcs.append(v)
                idxs.append(-1)
            else:
                srcs.append(c)
                idxs.append(v._idx)
        self.srcs = tuple(srcs)
        self.idxs = tuple(idxs)
        self.in_meta = tuple((a.shape, a.dtype) for a in arrays)
        self.out_meta = tuple((o.shape, o.dtype) for o in outs)
        rule = fdef.rule if need_grad else None
        self.rule = rule
        self.save(arrays, outs)
        self.outputs: tuple[weakref.ref[Variable], ...] = ()

    def save(self, arrays: Sequence[Any], outs: Sequence[Any]) -> None:
        """Keep the arrays the rule declared it needs; drop the rest."""
        rule = self.rule
        if rule is None:
            self.saved_in = self.saved_out = None
            return
        ni, no = rule.need_inputs, rule.need_outputs
        self.saved_in = (
            tuple(arrays)
            if ni is None
            else tuple(a if i in ni else None for i, a in enumerate(arrays))
            if ni
            else None
        )
        self.saved_out = (
            tuple(outs)
            if no is None
            else tuple(o if i in no else None for i, o in enumerate(outs))
            if no
            else None
        )

    def __repr__(self) -> str:
        return f"<Node {self.fdef.name} #{self.seq}>"


def _device_of(fdef: FunctionDef, vs: Sequence[Variable], arrays: Sequence[Any]) -> Device:
    t0 = type(arrays[0])
    if t0 is np.ndarray and all(type(a) is np.ndarray for a in arrays):
        return CPU
    devs = []
    for a in arrays:
        dt = REGISTRY.by_array_type.get(type(a))
        if dt is None:
            raise TypeError(f"{fdef.snake}(): unsupported array type {type(a).__name__}")
        devs.append(dt.device_of(a))
    names = {d.name for d in devs}
    if len(names) > 1:
        where = ", ".join(
            f"{n} ({fdef.inputs[min(i, len(fdef.inputs) - 1)].strip('*?')} #{i})"
            for i, n in enumerate(d.name for d in devs)
        )
        raise DeviceError(
            f"{fdef.snake}(): inputs are on different devices: {where}; move them to one device "
            "first (Variable.to(device))"
        )
    return devs[0]


def apply(fdef: FunctionDef, inputs: Sequence[Any], attrs: dict[str, Any]) -> Any:
    """Run a primitive function on Variables (or array-likes) and record it in the graph.

    Returns one Variable, or a tuple of Variables for functions with several outputs.
    """
    vs = [x if isinstance(x, Variable) else as_variable(x) for x in inputs]
    if not vs:
        raise TypeError(f"{fdef.snake}() needs at least one input")
    arrays = [v._data for v in vs]
    device = _device_of(fdef, vs, arrays)
    kernel = fdef.kernels.get(device.kind, fdef.forward)
    try:
        out = kernel(device.xp, *arrays, **attrs)
    except GradhubError:
        raise
    except (ValueError, TypeError, IndexError, np.exceptions.AxisError) as e:
        shapes = ", ".join(str(a.shape) for a in arrays)
        raise type(e)(
            f"{fdef.snake}() ({fdef.name}, from {fdef.provider}) failed on inputs of shapes "
            f"{shapes}: {e}"
        ) from e
    n_out = fdef.n_outputs
    if n_out == 1:
        outs: tuple[Any, ...] = (out,)
    else:
        outs = tuple(out)
    xp_ndarray = type(arrays[0])
    if any(type(o) is not xp_ndarray for o in outs):
        outs = tuple(o if type(o) is xp_ndarray else device.asarray(o) for o in outs)

    if not _mode.recording:
        res = tuple(Variable._new(o, False, None, 0) for o in outs)
    else:
        need = fdef.differentiable and any(v.need_grad for v in vs)
        node = Node(fdef, attrs, vs, arrays, outs, need, device)
        res = tuple(
            Variable._new(o, need and o.dtype.kind in "fc", node, i) for i, o in enumerate(outs)
        )
        node.outputs = tuple(weakref.ref(r) for r in res)
    return res[0] if n_out == 1 else res
