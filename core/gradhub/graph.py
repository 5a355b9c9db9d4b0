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

from . import variable as _variable
from .batching import BatchedVariable, apply_batched
from .device import CPU, Device
from .errors import DeviceError, GradhubError
from .modes import state as _mode
from .ops import bind_apply
from .registry import REGISTRY, bind_graph
from .variable import _NUMERIC, Variable, _data_error, _to_array

if TYPE_CHECKING:
    from .registry import FunctionDef

_seq = itertools.count()


class Node:
    """One recorded function call.

    ``srcs[i]`` is the upstream node of input ``i`` (with ``idxs[i]`` its output index), or the
    leaf Variable itself (``idxs[i] == -1``). ``saved_in``/``saved_out`` hold the arrays the rule
    needs (``None`` elsewhere). ``seq`` orders nodes: producers have smaller ``seq`` than consumers.
    ``stop`` is set (True) only on a node recorded under ``no_grad()`` inside a step that
    gradhub.compile traces (there such calls are recorded, needing no gradient): a deliberate
    stop, which a front-end working need_grad out again must leave without a rule (read it with
    ``getattr(node, "stop", False)``; the slot is unset elsewhere).
    """

    __slots__ = (
        "__weakref__",
        "attrs",
        "device",
        "fdef",
        "idxs",
        "in_dtypes",
        "in_shapes",
        "need_grad",
        "out_dtypes",
        "out_shapes",
        "out_type",
        "outputs",
        "rule",
        "saved_in",
        "saved_out",
        "seq",
        "srcs",
        "stop",
    )

    srcs: list[Any]  # Node (a recorded input) or Variable (a leaf)
    stop: bool  # (set only on deliberate stops: see above)
    idxs: list[int]
    saved_in: tuple[Any, ...] | None
    saved_out: tuple[Any, ...] | None
    outputs: Sequence[weakref.ref[Variable]]

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
        rule = self.rule = fdef.rule if need_grad else None
        n_in = len(inputs)
        if n_in == 1:  # the common case, without a loop
            v = inputs[0]
            c = v._creator
            if c is None:
                self.srcs = [v]
                self.idxs = [-1]
            else:
                self.srcs = [c]
                self.idxs = [v._idx]
            a = v._data
            in_shapes = self.in_shapes = [a.shape]
            in_dtypes = self.in_dtypes = [a.dtype]
            if len(outs) == 1:  # f(x) -> y: share the (never mutated) lists where they agree
                o = outs[0]
                s = o.shape
                self.out_shapes = in_shapes if s == in_shapes[0] else [s]
                d = o.dtype
                self.out_dtypes = in_dtypes if d == in_dtypes[0] else [d]
            else:
                self._set_outputs(outs)
        elif n_in == 2:  # binary functions, unrolled
            v, w = inputs
            c, d = v._creator, w._creator
            self.srcs = [v if c is None else c, w if d is None else d]
            self.idxs = [-1 if c is None else v._idx, -1 if d is None else w._idx]
            a, b = v._data, w._data
            self.in_shapes = [a.shape, b.shape]
            self.in_dtypes = [a.dtype, b.dtype]
            self._set_outputs(outs)
        else:
            srcs: list[Any] = []
            idxs: list[int] = []
            in_shapes = []
            in_dtypes = []
            for v in inputs:
                c = v._creator
                if c is None:
                    srcs.append(v)
                    idxs.append(-1)
                else:
                    srcs.append(c)
                    idxs.append(v._idx)
                a = v._data
                in_shapes.append(a.shape)
                in_dtypes.append(a.dtype)
            self.srcs = srcs
            self.idxs = idxs
            self.in_shapes = in_shapes
            self.in_dtypes = in_dtypes
            self._set_outputs(outs)
        self.out_type = type(arrays[0])  # the array type of the inputs' gradients
        if rule is None:
            self.saved_in = self.saved_out = None
            return
        keeps = rule.keeps
        if keeps == n_in and (keeps == 1 or keeps == 2):  # f(x) keeping x, f(a, b) keeping both
            self.saved_in = tuple(arrays)
            self.saved_out = None
        elif keeps == 0:
            self.saved_in = self.saved_out = None
        else:
            self.save(arrays, outs)

    def _set_outputs(self, outs: Sequence[Any]) -> None:
        if len(outs) == 1:
            o = outs[0]
            self.out_shapes = [o.shape]
            self.out_dtypes = [o.dtype]
        else:
            self.out_shapes = [o.shape for o in outs]
            self.out_dtypes = [o.dtype for o in outs]

    def save(self, arrays: Sequence[Any], outs: Sequence[Any]) -> None:
        """Keep the arrays the rule declared it needs; drop the rest."""
        rule = self.rule
        if rule is None:
            self.saved_in = self.saved_out = None
            return
        ni, no = rule.need_inputs, rule.need_outputs
        if ni is None:
            self.saved_in = tuple(arrays)
        elif ni:
            self.saved_in = tuple([a if i in ni else None for i, a in enumerate(arrays)])
        else:
            self.saved_in = None
        if no is None:
            self.saved_out = tuple(outs)
        elif no:
            self.saved_out = tuple([o if i in no else None for i, o in enumerate(outs)])
        else:
            self.saved_out = None

    def __repr__(self) -> str:
        return f"<Node {self.fdef.name} #{self.seq}>"


def input_name(fdef: FunctionDef, i: int) -> str:
    """The name of input ``i`` of a function, for messages (a variadic last input names the rest;
    ``"x"`` for a function that declares none)."""
    names = fdef.inputs
    if not names:
        return "x"
    return names[min(i, len(names) - 1)].strip("*?")


_WRAPPED = (ValueError, TypeError, IndexError, OverflowError)


def _kernel_error(
    fdef: FunctionDef, arrays: Sequence[Any], e: Exception, kind: str = ""
) -> Exception:
    """``e`` again, of its type where that can be built from a message (numpy's ufunc errors, or
    a plugin's exception class, may need more arguments: a base class then), naming the function,
    the provider of the kernel that ran (on device kind ``kind``) and the input shapes."""
    shapes = ", ".join(str(tuple(getattr(a, "shape", ()))) for a in arrays)
    provider = fdef.kernel_providers.get(kind) or fdef.provider
    # (the message of the usual kernel errors is kept as is; others are named by their type)
    what = str(e) if isinstance(e, _WRAPPED) else f"{type(e).__name__}: {e}"
    msg = (
        f"{fdef.snake}() ({fdef.name}, from {provider}) failed on inputs of shapes {shapes}: {what}"
    )
    for cls in type(e).__mro__:
        if cls in (ValueError, TypeError, IndexError):
            break
        try:
            return cls(msg)
        except Exception:  # a constructor that needs more than a message
            continue
    return cls(msg)


def _kernel_result(fdef: FunctionDef, device: Device, out: Any) -> Any:
    """A kernel's result that is not an array of the inputs' array type: its output arrays
    (a tuple for a function with several), checked. Arrays of a device stay there (ToDevice);
    numpy and Python scalars go onto ``device``; anything else (None, a list, an array of
    strings or objects), or the wrong count of outputs, raises naming the function and the
    provider of the kernel."""
    n = fdef.n_outputs
    if n == 1:
        o = out if type(out) in REGISTRY.by_array_type else _scalar_result(fdef, device, out, -1)
        if o.dtype.kind not in _KINDS:
            raise TypeError(f"{_kernel_name(fdef, device)} returned data of dtype {o.dtype}")
        return o
    if type(n) is not int:  # a count that depends on the call: not checked
        n = -1
    if not isinstance(out, (tuple, list)):
        raise TypeError(
            f"{_kernel_name(fdef, device)} returned {type(out).__name__}; the function has "
            f"{n if n >= 0 else 'several'} outputs: a tuple of arrays is expected"
        )
    if n >= 0 and len(out) != n:
        raise TypeError(
            f"{_kernel_name(fdef, device)} returned {len(out)} outputs; the function has {n}"
        )
    res = []
    for k, o in enumerate(out):
        if type(o) not in REGISTRY.by_array_type:
            o = _scalar_result(fdef, device, o, k)
        if o.dtype.kind not in _KINDS:
            raise TypeError(f"{_kernel_name(fdef, device)} returned output {k} of dtype {o.dtype}")
        res.append(o)
    return tuple(res)


def _scalar_result(fdef: FunctionDef, device: Device, o: Any, k: int) -> Any:
    """A numpy or Python scalar result (output ``k``; -1: the only one) on ``device``; anything
    else raises."""
    if not isinstance(o, (np.generic, int, float, bool)):
        which = "" if k < 0 else f" output {k}"
        raise TypeError(
            f"{_kernel_name(fdef, device)} returned{which} {type(o).__name__}, not an array of "
            f"the device ({device.name})"
        )
    return device.asarray(o)


def _kernel_name(fdef: FunctionDef, device: Device) -> str:
    """The function and the provider of its kernel on ``device``, for messages."""
    provider = fdef.kernel_providers.get(device.kind) or fdef.provider
    return f"{fdef.snake}() ({fdef.name}, from {provider}): the {device.kind} kernel"


#: the dtype kinds of a kernel's outputs (as of a Variable's data; complex as before: their
#: functions refuse them)
_KINDS = "biufc"


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
            f"{n} ({input_name(fdef, i)} #{i})" for i, n in enumerate(d.name for d in devs)
        )
        raise DeviceError(
            f"{fdef.snake}(): inputs are on different devices: {where}; move them to one device "
            "first (Variable.to(device))"
        )
    return devs[0]


def _inputs(
    fdef: FunctionDef, inputs: Sequence[Any]
) -> tuple[list[Variable], list[Any], bool, bool] | None:
    """Inputs as Variables, their arrays, whether any needs a gradient, whether all are numpy;
    None when one is batched (a :class:`~gradhub.batching.BatchedVariable`, inside vmap)."""
    vs: list[Variable] = []
    arrays: list[Any] = []
    need = False
    cpu = True
    for x in inputs:
        if not isinstance(x, Variable):
            if x is None:
                name = input_name(fdef, len(vs))
                raise TypeError(f"{fdef.snake}(): input {name!r} must not be None")
            a = _to_array(x)  # as_variable, naming the function and input for data not numeric
            if a.dtype.kind not in _NUMERIC:
                raise _data_error(
                    f"{fdef.snake}(): input {input_name(fdef, len(vs))!r}", x, a.dtype
                )
            x = Variable._new(a, False, None, 0)
        elif type(x) is not Variable and isinstance(x, BatchedVariable):
            return None  # (inside vmap: apply dispatches to the batching rule)
        vs.append(x)
        a = x._data
        arrays.append(a)
        if x._need_grad:
            need = True
        if type(a) is not _ndarray:
            cpu = False
    if not vs:
        raise TypeError(f"{fdef.snake}() needs at least one input")
    return vs, arrays, need, cpu


def apply(fdef: FunctionDef, inputs: Sequence[Any], attrs: dict[str, Any]) -> Any:
    """Run a primitive function on Variables (or array-likes) and record it in the graph.

    Returns one Variable, or a tuple of Variables for functions with several outputs. This is the
    hot path: plain loops, no pluggy, no per-call dict building.
    """
    n = len(inputs)
    # the common cases, without a loop: Variables (a front-end's subclass too), not batched ones
    if n == 1 and (
        (t := type(x := inputs[0])) is Variable or (t is not _Batched and isinstance(x, Variable))
    ):
        vs: Sequence[Variable] = (x,)
        a = x._data
        arrays: Sequence[Any] = (a,)
        need = x._need_grad
        cpu = type(a) is _ndarray
    elif (
        n == 2
        and (
            (t := type(inputs[0])) is Variable
            or (t is not _Batched and isinstance(inputs[0], Variable))
        )
        and (
            (t := type(inputs[1])) is Variable
            or (t is not _Batched and isinstance(inputs[1], Variable))
        )
    ):
        x, y = vs = inputs
        a, b = arrays = (x._data, y._data)
        need = x._need_grad or y._need_grad
        cpu = type(a) is _ndarray and type(b) is _ndarray
    else:
        r = _inputs(fdef, inputs)
        if r is None:  # a batched input (inside gradhub.func.vmap): the batching rule
            return apply_batched(fdef, inputs, attrs)
        vs, arrays, need, cpu = r
    device = CPU if cpu else _device_of(fdef, vs, arrays)
    kernels = fdef.kernels
    kernel = kernels.get(device.kind, fdef.forward) if kernels else fdef.forward
    try:
        if cpu or not device.index:
            out = kernel(device.xp, *arrays, **attrs)
        else:
            with device.activate():
                out = kernel(device.xp, *arrays, **attrs)
    except GradhubError:
        raise
    except Exception as e:  # (uint8 data + 300; a plugin's KeyError...; not KeyboardInterrupt)
        observer = _variable._observer
        if observer is not None:  # a traced step: an input it made read-only (see set_observer)
            refused = observer.kernel_failed(fdef, arrays, e)
            if refused is not None:
                raise refused from e
        raise _kernel_error(fdef, arrays, e, device.kind) from e
    single = fdef.n_outputs == 1
    # a result that is not an array of the inputs' type (a numpy scalar, another device's array,
    # None...) is checked and converted there; the common case costs one type test
    if single:
        if type(out) is not type(arrays[0]):
            out = _kernel_result(fdef, device, out)
        outs: Sequence[Any] = (out,)
    else:
        outs = _kernel_result(fdef, device, out)

    if _mode.recording:
        need = need and fdef.differentiable
    else:
        root = need and fdef.differentiable and _mode.keep_need_grad  # chainer's roots
        if single and out.dtype.kind not in _KINDS:  # an array holding strings or objects
            _kernel_result(fdef, device, out)  # raises
        if _mode.traced_no_grad:  # a compiled step's no_grad(): recorded, needing no gradient
            if root:
                raise NotImplementedError(
                    f"gradhub.compile: {fdef.snake}() runs with recording off but its results "
                    "needing a gradient (chainer's no_backprop_mode) inside a traced step; a "
                    "replay could not compute them again: run it outside the compiled step"
                )
            node = Node(fdef, attrs, vs, arrays, outs, False, device)
            node.stop = True
            return _outputs(node, outs, False)
        if single:
            return Variable._new(out, root and out.dtype.kind in "fc", None, 0)
        return tuple(Variable._new(o, root and o.dtype.kind in "fc", None, 0) for o in outs)
    node = Node(fdef, attrs, vs, arrays, outs, need, device)
    if not single:
        return _outputs(node, outs, need)
    v = _new_variable(Variable)  # Variable._new, inlined
    v._data = out
    v._grad = None
    v._creator = node
    v._idx = 0
    if out.dtype.kind == "f":  # (as cheap as the check it replaces)
        v._need_grad = need
    elif (kind := out.dtype.kind) in _KINDS:
        v._need_grad = need and kind == "c"
    else:  # an array of the inputs' type holding strings or objects
        _kernel_result(fdef, device, out)  # raises
    v.name = None
    node.outputs = (weakref.ref(v),)
    return v


def _outputs(node: Node, outs: Sequence[Any], need: bool) -> Any:
    """The Variables of a recorded node's output arrays ``outs`` (a tuple for functions with
    several outputs); floating and complex ones need a gradient where ``need``."""
    res = tuple(
        Variable._new(o, need and o.dtype.kind in "fc", node, i) for i, o in enumerate(outs)
    )
    node.outputs = tuple(weakref.ref(r) for r in res)
    return res if node.fdef.n_outputs != 1 else res[0]


#: how many times a front-end changed recorded links of a graph (see :func:`links_changed`);
#: plans (gradhub.plan) are made for the links of their time
links_generation = 0


def links_changed() -> None:
    """Tell the plans of static graphs (gradhub.plan) that recorded links changed: a node's
    output now refers to another Variable (nnabla's ``m[k] = v`` on a function's result, a
    Variable made again for an output nothing referred to), or a Variable now has another
    creator. Every plan made before is made again at its next run (one integer test per run).

    Example::

        >>> from gradhub import graph
        >>> before = graph.links_generation
        >>> graph.links_changed()
        >>> graph.links_generation == before + 1
        True
    """
    global links_generation
    links_generation += 1


_ndarray = np.ndarray
_new_variable = object.__new__

_Batched = BatchedVariable

# ops and the registry sit below this module and apply functions through it (see "Layers" in
# docs/design.md)
bind_apply(apply)
bind_graph(apply, Variable)
