"""Variable: an array with a place in the computation graph."""

from __future__ import annotations

import math
import operator
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from .device import Context, Device, context_device, current_context
from .dtypes import DEFAULT as _DEFAULT_DTYPE
from .modes import PerThread
from .ops import call, prim
from .registry import REGISTRY, _ensure_loaded

if TYPE_CHECKING:
    from .graph import Node

#: the scalar operands of the operators' *Scalar functions (numpy complex scalars are not: they go
#: the way of arrays, whose slow path rejects complex data)
_SCALARS = (int, float, np.integer, np.floating)
_PY_DATA = (list, tuple, int, float, bool, np.generic)


#: data that is never a device plugin's array (no plugin loading needed to convert it)
_PLAIN = (list, tuple, float, int, bool, np.generic)


def _to_array(data: Any, device: Device | None = None) -> Any:
    if isinstance(data, Variable):
        return data._data
    dt = REGISTRY.by_array_type.get(type(data))
    if dt is None and not isinstance(data, _PLAIN):
        # an array of a type no device has registered yet: a device plugin's (a CuPy array
        # before the plugins were loaded) goes to its device, not through numpy to the CPU
        _ensure_loaded()
        dt = REGISTRY.by_array_type.get(type(data))
    if dt is not None and device is None:
        if dt.kind != "cpu" or current_context().backend == "cpu":
            return data
        # host arrays under another device's context go to that device
    dev = device or context_device()
    if isinstance(data, (list, tuple, float, int, bool)) or (
        isinstance(data, np.ndarray) is False and np.isscalar(data)
    ):
        arr = np.asarray(data)
        if arr.dtype == np.float64 and not isinstance(data, np.floating):
            fdt = _DEFAULT_DTYPE.float  # float32 unless gh.set_default_dtype/default_dtype
            if fdt != arr.dtype:
                arr = arr.astype(fdt)
        data = arr
    return dev.asarray(data)


def _complex_error(where: str, dtype: Any) -> TypeError:
    """The error for complex data given to gradhub at ``where`` (a function and argument)."""
    return TypeError(
        f"{where}: complex data (dtype {dtype}) is not supported; gradhub computes with real "
        "floating-point, integer and bool data (pass the real part, or the magnitude, explicitly)"
    )


#: the dtype kinds of the data gradhub computes with: bool, signed and unsigned integers, floats
_NUMERIC = "biuf"


def _data_error(where: str, value: Any, dtype: Any) -> TypeError:
    """The error for data that is not numeric (None, strings, objects, dates...) given at
    ``where``; complex data gets :func:`_complex_error`."""
    if np.dtype(dtype).kind == "c":
        return _complex_error(where, dtype)
    what = "None" if value is None else f"data of dtype {dtype}"
    return TypeError(
        f"{where}: expected numeric data (bool, integer or floating-point), got {what}; strings, "
        "objects and None are not converted"
    )


def _numeric(arr: Any, where: str, value: Any = 0) -> Any:
    """``arr`` itself when its data is numeric; else the error naming ``where`` (``value``: what
    was given, for the message)."""
    if arr.dtype.kind not in _NUMERIC:
        raise _data_error(where, value, arr.dtype)
    return arr


def _py_array(value: Any, dtype: Any, where: str) -> np.ndarray:
    """A Python or numpy scalar or nested list assigned at ``where`` as an array of ``dtype``
    (straight to that dtype: no rounding through float32); data that is not numeric (strings,
    None, complex values) is refused."""
    if isinstance(value, (int, float, np.integer, np.floating, np.bool_)):
        return np.asarray(value, dtype=dtype)
    # a list or another numpy scalar: refused unless numpy reads it as numbers by itself
    # (np.asarray(["1"], dtype=float) would parse the strings)
    _numeric(np.asarray(value), where, value)
    return np.asarray(value, dtype=dtype)


def _fitted(arr: Any, data: Any, xp: Any, value: Any = 0) -> Any:
    """``arr`` as new data for a Variable holding ``data``: its dtype; a scalar fills its shape
    (as nnabla's ``x.d = 0``); data that is not numeric is refused (``value``: what was
    assigned, for the message). Runs with the Variable's device current."""
    if arr.dtype != data.dtype:  # (data's dtype is numeric: Variables hold no other data)
        if arr.dtype.kind not in _NUMERIC:
            raise _data_error("Variable.d", value, arr.dtype)
        arr = arr.astype(data.dtype)
    if arr.ndim == 0 and data.ndim:
        arr = xp.full(data.shape, arr, dtype=data.dtype)
    return arr


def _grad_array(value: Any, data: Any, dev: Device) -> Any:
    """A gradient array for ``data`` from an assigned value: its device, dtype and shape
    (scalars fill, as nnabla's ``x.g = 0``). Runs with that device current."""
    arr = _to_array(value, dev)
    if arr.dtype != data.dtype:
        if arr.dtype.kind not in _NUMERIC:
            raise _data_error("Variable.g", value, arr.dtype)
        arr = arr.astype(data.dtype)
    if arr.shape != data.shape:
        try:
            arr = dev.xp.broadcast_to(arr, data.shape).copy()
        except ValueError:
            raise ValueError(
                f"Variable.g: a gradient of shape {tuple(arr.shape)} does not fit data of "
                f"shape {tuple(data.shape)}"
            ) from None
    return arr


class Variable:
    """An array (``.d``) with its accumulated gradient (``.g``) and its creator in the graph.

    ``data`` is an array of a device (numpy on the CPU), a scalar or a nested list; Python floats
    become float32, as in PyTorch and nnabla (the default dtype:
    :func:`gradhub.set_default_dtype`). Arrays are used without a copy, except numpy arrays
    created under another device's context, which go to that device. ``need_grad``: whether
    gradients flow to this Variable (only for floating-point data).

    Example::

        >>> import gradhub as gh
        >>> x = gh.Variable([1.0, 2.0, 3.0])
        >>> y = (x * x).sum()
        >>> y.backward()
        >>> x.g
        array([2., 4., 6.], dtype=float32)
    """

    __slots__ = ("__weakref__", "_creator", "_data", "_grad", "_idx", "_need_grad", "name")
    __array_priority__ = 1000.0  # numpy defers ``ndarray <op> Variable`` to Variable

    _creator: Node | None

    #: whether this is one element of a batch inside gradhub.func.vmap (BatchedVariable)
    _batched = False

    def __init__(self, data: Any, need_grad: bool = True, name: str | None = None) -> None:
        if _observer is not None:
            _observer.wrap(data)
        if isinstance(data, Variable) and data._batched:
            raise _batched_data("Variable(x)")
        arr = _to_array(data)
        kind = arr.dtype.kind
        if kind not in _NUMERIC:
            raise _data_error("Variable(data)", data, arr.dtype)
        if need_grad and kind != "f":
            raise TypeError(
                f"Variable: need_grad=True needs floating-point data, got dtype {arr.dtype}; "
                "pass need_grad=False for integer data such as labels"
            )
        self._data = arr
        self._grad: Variable | None = None
        self._creator = None
        self._idx = 0
        self._need_grad = bool(need_grad)
        self.name = name
        if _observer is not None:
            _observer.made(self)

    @classmethod
    def _new(cls, data: Any, need_grad: bool, creator: Node | None, idx: int) -> Variable:
        v = object.__new__(cls)
        v._data = data
        v._grad = None
        v._creator = creator
        v._idx = idx
        v._need_grad = need_grad
        v.name = None
        return v

    def _detached_copy(self, data: Any) -> Variable:
        """A new leaf holding ``data``, needing no gradient, of this Variable's class, or of
        the nearest base class of it that an object of plain Variable's layout can be (a
        front-end's Variable for its parameter class; what gradhub.compile hands out as a
        step's results)."""
        v = Variable._new(data, False, None, 0)
        for cls in type(self).__mro__:
            if cls is Variable:
                break
            try:
                v.__class__ = cls
                break
            except TypeError:  # a class with slots or a __dict__ of its own
                continue
        return v

    @classmethod
    def leaf(cls, data: Any, need_grad: bool = False) -> Variable:
        """A leaf holding the array ``data`` itself: no copy, no conversion, no check.

        For front-ends and plugins that already hold an array of a device's type with a valid
        dtype (the constructor validates and converts; this does not). ``need_grad`` must only be
        True for floating data.

        Example::

            >>> import numpy as np
            >>> import gradhub as gh
            >>> a = np.zeros(2)
            >>> gh.Variable.leaf(a).d is a
            True
        """
        return cls._new(data, need_grad, None, 0)

    # -- DLPack ----------------------------------------------------------------------------------
    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any:
        """The data as a DLPack capsule, without a copy: the data array's own ``__dlpack__``
        (numpy's, CuPy's), with the same arguments (``stream``, ``max_version``...). Lets
        ``torch.from_dlpack(x)``, ``np.from_dlpack(x)``, ``jax.dlpack.from_dlpack(x)`` and
        :func:`gradhub.from_dlpack` share ``x.d``'s memory.

        Example::

            >>> import numpy as np
            >>> import gradhub as gh
            >>> x = gh.Variable([1.0, 2.0])
            >>> a = np.from_dlpack(x)
            >>> a[0] = 5.0
            >>> x.d
            array([5., 2.], dtype=float32)
        """
        return self._data.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self) -> tuple[Any, int]:
        """The DLPack ``(device type, device index)`` of the data (``(1, 0)`` on the CPU)."""
        return self._data.__dlpack_device__()  # type: ignore[no-any-return]

    # -- need_grad -------------------------------------------------------------------------------
    def _set_need_grad(self, value: bool) -> None:
        """``need_grad``'s setter: on a leaf, the flag; on an intermediate Variable it also marks
        the function that produced it, so that no gradient flows through it (set before or after
        the Variable was used), as nnabla's; ``True`` restores that. Refused: True on integer
        data (as the constructor), True on an output recorded needing no gradient (nothing could
        reach it), False on one output of a function with several (it would stop them all)."""
        value = bool(value)
        if value and self._data.dtype.kind != "f":
            raise TypeError(
                f"Variable.need_grad: need_grad=True needs floating-point data, got dtype "
                f"{self._data.dtype}"
            )
        if _observer is not None and value != self._need_grad:
            _observer.write(self, "need_grad", value)
        node = self._creator
        if node is None or value == self._need_grad:
            pass
        elif node.rule is None:  # recorded needing no gradient: no rule to restore
            if value:
                raise ValueError(
                    f"Variable.need_grad: cannot set need_grad=True on an output of "
                    f"{node.fdef.snake}(), which was recorded needing no gradient (none of its "
                    "inputs needed one, or the function is not differentiable): no gradient can "
                    "reach it; use its .detach() with need_grad=True as a new leaf, or build it "
                    "from inputs that need a gradient"
                )
        elif len(node.out_shapes) == 1:
            node.need_grad = value
        elif not value:
            raise NotImplementedError(
                f"Variable.need_grad: need_grad=False on one output of {node.fdef.snake}() "
                f"(a function with {len(node.out_shapes)} outputs) is not supported: it would "
                "stop the gradients of every output; give its consumers this output's "
                ".detach() instead"
            )
        self._need_grad = value
        global need_grad_generation
        need_grad_generation += 1  # plans of static graphs (gradhub.plan) check it

    #: read in rules and in the engine: a C getter (no Python frame); the hot paths read the slot
    need_grad = property(
        operator.attrgetter("_need_grad"),
        _set_need_grad,
        doc="Whether gradients flow to this Variable (only for floating-point data). False on a "
        "Variable produced by a function stops gradients there, also when set after the "
        "Variable was used: backward and grad then treat it as a constant.",
    )

    # -- data ------------------------------------------------------------------------------------
    @property
    def d(self) -> Any:
        """The data array.

        Assigning an array replaces it (shape included; its dtype is converted to this
        Variable's); assigning a scalar fills the current shape, as nnabla's ``x.d = 0``.
        """
        if _observer is not None:
            _observer.hand_out(self._data)
        return self._data

    @d.setter
    def d(self, value: Any) -> None:
        if _observer is not None:
            _observer.write(self, "d", value)
        if isinstance(value, Variable):
            if value._batched:
                raise _batched_data("x.d = v")
            value = value._data
        elif isinstance(value, _PY_DATA):  # straight to this dtype: no rounding through float32
            value = _py_array(value, self._data.dtype, "Variable.d")
        data = self._data
        dt = REGISTRY.by_array_type.get(type(data))
        dev = dt.device_of(data) if dt is not None else None
        if type(value) is type(data) and (dt is None or dt.device_of(value) is dev):
            # x.d += v (or an optimizer's p.d -= ...) changed the array in place and assigns it
            # back: hold it as a new array object (a view), so that graphs recorded before the
            # change see a replaced leaf and refuse to be differentiated without forward()
            arr = value.view() if value is data else value
        else:  # data of another device (or array type) is copied to this Variable's device
            arr = _to_array(value, dev)
        if dev is None:
            self._data = _fitted(arr, data, np, value)
        else:
            with dev.activate():
                self._data = _fitted(arr, data, dev.xp, value)

    data = d

    @property
    def g(self) -> Any:
        """The accumulated gradient array, or None (assignable; ``None`` clears it)."""
        if self._grad is None:
            return None
        if _observer is not None:
            _observer.hand_out(self._grad._data)
        return self._grad._data

    @g.setter
    def g(self, value: Any) -> None:
        if _observer is not None:
            _observer.write(self, "g", value)
        if value is None:
            self._grad = None
            return
        if isinstance(value, Variable):
            self._grad = value
            return
        # an array of this Variable's device, dtype and shape (scalars fill, as nnabla's x.g = 0)
        data = self._data
        if isinstance(value, _PY_DATA):
            value = _py_array(value, data.dtype, "Variable.g")
        dt = REGISTRY.by_array_type.get(type(data))
        dev = dt.device_of(data) if dt is not None else context_device()
        with dev.activate():
            arr = _grad_array(value, data, dev)
        self._grad = Variable._new(arr, False, None, 0)

    grad = g

    @property
    def grad_var(self) -> Variable | None:
        """The accumulated gradient as a Variable (differentiable after ``create_graph=True``)."""
        return self._grad

    @grad_var.setter
    def grad_var(self, value: Variable | None) -> None:
        if _observer is not None:
            _observer.write(self, "g", value)
        self._grad = value

    def cleargrad(self) -> None:
        """Reset the accumulated gradient to None."""
        if _observer is not None:
            _observer.write(self, "g", None)
        self._grad = None

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self._data.shape)

    @property
    def ndim(self) -> int:
        return int(self._data.ndim)

    @property
    def size(self) -> int:
        return int(self._data.size)

    @property
    def dtype(self) -> Any:
        return self._data.dtype

    @property
    def device(self) -> Device:
        """The device holding the data."""

        dt = REGISTRY.by_array_type.get(type(self._data))
        if dt is None:
            raise TypeError(f"Variable: unsupported array type {type(self._data).__name__}")
        return dt.device_of(self._data)

    @property
    def creator(self) -> Node | None:
        """The graph node that produced this Variable (None for leaves)."""
        return self._creator

    @property
    def is_leaf(self) -> bool:
        return self._creator is None

    def __len__(self) -> int:
        return len(self._data)

    def __iter__(self) -> Iterator[Variable]:
        """The Variables ``self[0], self[1], ...`` along the first axis (differentiable, as
        PyTorch's); a 0-d Variable is not iterable (a TypeError, as numpy's)."""
        data = self._data
        if not data.ndim:
            raise TypeError(
                "iteration over a 0-d Variable (shape ()), as over a 0-d numpy array; use "
                ".item() or .d for its value"
            )
        return (self[i] for i in range(len(data)))

    def __bool__(self) -> bool:
        """The truth value of the single element, as numpy's and PyTorch's; ambiguous (a
        ValueError) for any other size."""
        data = self._data
        if data.size != 1:
            raise ValueError(
                f"the truth value of a Variable with {data.size} elements (shape "
                f"{tuple(data.shape)}) is ambiguous; use .d.any() or .d.all()"
            )
        if _observer is not None:
            _observer.read(self, "bool()")
        return bool(data)

    def __repr__(self) -> str:
        body = np.array2string(np.asarray(self.device.to_numpy(self._data)), separator=", ")
        extra = "" if self._need_grad else ", need_grad=False"
        return f"Variable({body}, dtype={self.dtype}{extra})"

    def numpy(self) -> np.ndarray:
        """The data as a numpy array (copied from the device if needed)."""
        if _observer is not None:
            _observer.hand_out(self._data)
        return self.device.to_numpy(self._data)

    def item(self) -> Any:
        """The single element of the data as a Python number."""
        if _observer is not None:
            _observer.read(self, ".item()")
        return self.numpy().item()

    def __reduce_ex__(self, protocol: Any) -> Any:
        """As for any object (``copy.copy``, ``copy.deepcopy`` and ``pickle`` go through it);
        inside a step that :func:`gradhub.compile` traces, refused as ``Variable(x)`` is: the
        copy would hold this call's array at every later call."""
        if _observer is not None:
            _observer.wrap(self)
        return super().__reduce_ex__(protocol)

    def detach(self) -> Variable:
        """A new leaf sharing the data, cut from the graph, needing no gradient (inside a step
        that :func:`gradhub.compile` traces: the result of a function recorded without a
        gradient, computed again at each call)."""
        if _observer is not None:
            cut = _observer.detach(self)
            if cut is not None:
                return cut  # type: ignore[no-any-return]
        return Variable._new(self._data, False, None, 0)

    get_unlinked_variable = detach

    # -- graph -----------------------------------------------------------------------------------
    def forward(self) -> None:
        """Re-execute the graph that produced this Variable from its leaves' current data."""
        _reexecute(self)

    def backward(
        self,
        grad: Any = None,
        *,
        retain_grad: bool = False,
        create_graph: bool = False,
        loss_scale: float | None = None,
        retain_graph: bool = True,
        communicator_callbacks: Any = None,
    ) -> None:
        """Accumulate d(self)/d(leaf) into ``.g`` of every leaf that needs a gradient.

        ``grad``: the incoming gradient (None: ones of this Variable's shape, times ``loss_scale``
        when given). ``retain_grad``: also store the gradients of the intermediate Variables still
        referenced. ``create_graph``: record the backward computation so that ``.g`` can be
        differentiated again. ``retain_graph=False``: free each node's saved arrays once used.
        ``communicator_callbacks``: objects told each leaf's gradient as soon as it is final
        (nnabla's spelling; see :class:`gradhub.engine.BackwardCallback`), such as gradhub-mpi's
        ``comm.all_reduce_callback(params)``.
        """
        _backward(
            self,
            grad,
            retain_grad=retain_grad,
            create_graph=create_graph,
            loss_scale=loss_scale,
            retain_graph=retain_graph,
            communicator_callbacks=communicator_callbacks,
        )

    def to(self, device: Any) -> Variable:
        """This Variable on another device (a differentiable transfer)."""

        if isinstance(device, Device):
            name = device.name
        else:
            name = device.device_name if isinstance(device, Context) else str(device)
        return call("ToDevice", self, device=name)

    # -- operators -------------------------------------------------------------------------------
    def __add__(self, other: Any) -> Variable:

        if isinstance(other, _SCALARS):
            return prim("AddScalar", (self,), {"val": other})
        return prim("Add2", (self, other), {})

    def __radd__(self, other: Any) -> Variable:

        if isinstance(other, _SCALARS):
            return prim("AddScalar", (self,), {"val": other})
        return prim("Add2", (other, self), {})

    def __sub__(self, other: Any) -> Variable:

        if isinstance(other, _SCALARS):
            if isinstance(other, np.integer):
                # negating a numpy integer wraps around in its own dtype (-np.uint8(3) == 253)
                return prim("Sub2", (self, other), {})
            return prim("AddScalar", (self,), {"val": -other})
        return prim("Sub2", (self, other), {})

    def __rsub__(self, other: Any) -> Variable:

        if isinstance(other, _SCALARS):
            return prim("AddScalar", (prim("Neg", (self,), {}),), {"val": other})
        return prim("Sub2", (other, self), {})

    def __mul__(self, other: Any) -> Variable:

        if isinstance(other, _SCALARS):
            return prim("MulScalar", (self,), {"val": other})
        return prim("Mul2", (self, other), {})

    def __rmul__(self, other: Any) -> Variable:

        if isinstance(other, _SCALARS):
            return prim("MulScalar", (self,), {"val": other})
        return prim("Mul2", (other, self), {})

    def __truediv__(self, other: Any) -> Variable:

        if isinstance(other, _SCALARS):
            # x / 0 is +-inf or NaN (x * +-inf), as in numpy and PyTorch, not ZeroDivisionError
            val = 1.0 / other if other != 0 else math.copysign(math.inf, other)
            return prim("MulScalar", (self,), {"val": val})
        return prim("Div2", (self, other), {})

    def __rtruediv__(self, other: Any) -> Variable:

        if isinstance(other, _SCALARS):
            return prim("RDivScalar", (self,), {"val": other})
        return prim("Div2", (other, self), {})

    def __pow__(self, other: Any) -> Variable:

        if isinstance(other, _SCALARS):
            return prim("PowScalar", (self,), {"val": other})
        return prim("Pow2", (self, other), {})

    def __rpow__(self, other: Any) -> Variable:

        if isinstance(other, _SCALARS):
            return prim("RPowScalar", (self,), {"val": other})
        return prim("Pow2", (other, self), {})

    def __neg__(self) -> Variable:

        return prim("Neg", (self,), {})

    def __pos__(self) -> Variable:
        return self

    def __abs__(self) -> Variable:
        """``abs(x)``: the function Abs."""
        return prim("Abs", (self,), {})

    def __matmul__(self, other: Any) -> Variable:

        return prim("BatchMatmul", (self, other), {})

    def __rmatmul__(self, other: Any) -> Variable:

        return prim("BatchMatmul", (other, self), {})

    def __getitem__(self, key: Any) -> Variable:

        return prim("GetItem", (self,), {"key": key})

    def reshape(self, *shape: Any) -> Variable:
        """This Variable with another shape (a differentiable view)."""

        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return call("Reshape", self, shape=tuple(int(s) for s in shape))

    @property
    def T(self) -> Variable:
        """This Variable with its axes reversed (the function Transpose), as numpy's, chainer's
        and JAX's ``.T``; for two axes, PyTorch's ``.T``."""

        return prim("Transpose", (self,), {"axes": None})

    def sum(self, axis: Any = None, keepdims: bool = False) -> Variable:
        """Sum over ``axis`` (all axes by default)."""

        return prim("Sum", (self,), {"axis": axis, "keepdims": keepdims})

    # Variables are hashed and compared by identity (they are graph nodes, not values).
    __hash__ = object.__hash__


def as_variable(x: Any) -> Variable:
    """``x`` if it is a Variable, else a constant leaf (need_grad False) holding it."""
    if isinstance(x, Variable):
        return x
    arr = _to_array(x)
    if arr.dtype.kind == "c":
        raise _complex_error("as_variable", arr.dtype)
    return Variable._new(arr, False, None, 0)


# -- the one intrinsic cycle (see "Layers" in docs/design.md) ----------------------------------
# Variable.backward and Variable.forward run the engine's passes, and the engine (through the
# graph) builds Variables: gradhub.engine imports this module and binds its two passes here when
# it is imported, the one way every lower module reaches a higher one.

#: bumped each time ``need_grad`` is set: a plan of a static graph whose backward walk was
#: decided before is checked against it (gradhub.plan)
need_grad_generation = 0

#: what is told of each assignment to a Variable's ``.d`` or ``.g``, each value read as a Python
#: object and each ``Variable(data)`` while gradhub.plan.compile traces a step in some thread:
#: the observers per thread (each thread tells its own; None while no thread has one; see
#: :func:`set_observer`)
_observer: Any = None
_observers = PerThread()
_observers_lock = threading.Lock()


def keep_in_trace(v: Any) -> Any:
    """Returns ``v``; while :func:`gradhub.compile` traces a step, the step's plan computes ``v``
    at each replay even when none of the step's results depends on it. For functions with an
    effect beyond their value, such as the collectives of data-parallel training (every process
    must run each one, in the same order, whatever the plan of one process would prune): the
    plan then replays the collectives the traced call ran.

    Example::

        >>> import gradhub as gh
        >>> from gradhub.variable import keep_in_trace
        >>> x = gh.Variable([1.0])
        >>> keep_in_trace(x) is x
        True
    """
    observer = _observer
    if observer is not None:
        keep = getattr(observer, "keep", None)
        if keep is not None:
            keep(v)
    return v


def set_observer(observer: Any) -> Any:
    """Make ``observer`` (or None) what this thread's Variables tell of what code does with
    them; it may raise to refuse any of it. Returns this thread's previous observer (other
    threads tell theirs, if any). gradhub.plan.compile traces steps with it: a compiled step
    replays its graph, not the Python code that assigns, writes in place, branches, detaches or
    wraps data. Its methods:

    * ``write(variable, what, value)``: an assignment ``x.d = value`` (``what`` ``"d"``),
      ``x.g = value`` (``"g"``; also ``x.grad_var = value`` and ``x.cleargrad()``, value None)
      or ``x.need_grad = value`` that changes it (``"need_grad"``), before it is made;
    * ``read(variable, how)``: a value read as a Python object (``how``: ``"bool()"`` for
      ``if x:``, ``".item()"``), before it is read;
    * ``wrap(data)``: ``Variable(data)``, before it is made; ``made(variable)``: after;
    * ``hand_out(array)``: an array handed out by ``x.d``, ``x.g`` or ``x.numpy()``, before it
      is returned;
    * ``kernel_failed(fdef, arrays, error)``: a kernel's failure on ``arrays``; an exception it
      returns is raised in place of the usual error;
    * ``detach(variable, need_grad)``: what ``x.detach()`` returns (None: the usual leaf);
    * ``backward(y, grad, options)`` and ``grad(outputs, inputs, grad_outputs, options,
      results)``: a ``backward``/``grad`` call of :mod:`gradhub.engine`, when it ends.
    * ``parameters_read()``: a lookup in (or change of) the parameter table of
      :mod:`gradhub.parameters` (``get_parameter_or_create``, ``get_parameters``,
      ``set_parameter``, ``parameter_table()``).

    Front-ends whose Variables hand out, assign or cut arrays by their own properties, or that
    compute from a Variable's values in Python, or read global settings, tell the observer
    through :func:`observe_hand_out`, :func:`observe_write`, :func:`observe_detach`,
    :func:`observe_read`, :func:`observe_wrap` and :func:`observe_global` (its method
    ``global_state(key, read, written)``)."""
    global _observer
    with _observers_lock:
        before = _observers.set(observer)
        _observer = _observers.holder()
    return before


def observe_write(v: Variable, what: str, value: Any) -> None:
    """Tell the observer (see :func:`set_observer`), if any, of an assignment ``value`` to
    ``what`` (``"d"`` or ``"g"``; None clears a gradient) of ``v`` about to be made by a
    front-end's own property (as ``x.d = value`` and ``x.g = value`` tell it); raises where the
    observer refuses it (inside a step that :func:`gradhub.compile` traces).

    Example::

        >>> import gradhub as gh
        >>> from gradhub.variable import observe_write
        >>> x = gh.Variable([1.0, 2.0])
        >>> observe_write(x, "g", None)  # nothing observes outside a traced step
    """
    if _observer is not None:
        _observer.write(v, what, value)


def observe_read(v: Variable, how: str) -> None:
    """Tell the observer (see :func:`set_observer`), if any, that a front-end's code is about
    to take the values of ``v`` into Python (``how`` names what does it, as in an error
    message); raises where the observer refuses it (inside a step that :func:`gradhub.compile`
    traces: what Python computes from the values is not computed again at later calls).

    Example::

        >>> import gradhub as gh
        >>> from gradhub.variable import observe_read
        >>> observe_read(gh.Variable([1, 2], need_grad=False), "labels")  # not inside a trace
    """
    if _observer is not None:
        _observer.read(v, how)


def observe_global(key: Any, read: Callable[[], Any] | None, written: bool = False) -> None:
    """Tell the observer (see :func:`set_observer`), if any, that a front-end's code reads
    (``written`` False) or sets (True) a global setting named by ``key`` (hashable), such as
    chainer's ``chainer.config.train``; ``read()`` returns its value now, without telling the
    observer again. Inside a step that :func:`gradhub.compile` traces, a setting read before
    the step set it is a guard of the trace: a later call made with another value traces the
    step again (its functions were chosen by the value).

    Example::

        >>> from gradhub.variable import observe_global
        >>> settings = {"train": True}
        >>> observe_global(("settings", "train"), lambda: settings["train"])  # (no trace)
    """
    if _observer is not None:
        _observer.global_state(key, read, written)


def observe_detach(v: Variable, need_grad: bool = False) -> Variable | None:
    """What a front-end's own way of cutting ``v`` from its graph (nnabla's
    ``get_unlinked_variable``) returns inside a step that :func:`gradhub.compile` traces in this
    thread: the result of a function recorded without a gradient, computed again at each call
    (as ``v.detach()`` there); raises for a cut Variable that needs a gradient (``need_grad``).
    None outside a traced step: the front-end makes its usual leaf.

    Example::

        >>> import gradhub as gh
        >>> from gradhub.variable import observe_detach
        >>> observe_detach(gh.Variable([1.0, 2.0])) is None  # not inside a traced step
        True
    """
    if _observer is None:
        return None
    return _observer.detach(v, need_grad)  # type: ignore[no-any-return]


def observe_hand_out(array: Any) -> None:
    """Tell the observer (see :func:`set_observer`), if any, of ``array`` (a Variable's data or
    gradient) about to be handed out by a front-end's own property, as ``x.d`` tells it: inside
    a step that :func:`gradhub.compile` traces, a numpy array is made read-only until the trace
    ends (a replay would not repeat a write into it).

    Example::

        >>> import numpy as np
        >>> from gradhub.variable import observe_hand_out
        >>> a = np.zeros(2)
        >>> observe_hand_out(a)  # nothing observes outside a traced step
        >>> a.flags.writeable
        True
    """
    if _observer is not None:
        _observer.hand_out(array)


def observe_wrap(data: Any) -> None:
    """Tell the observer (see :func:`set_observer`), if any, that a front-end's own constructor
    is about to make a leaf Variable holding (a copy of) ``data``, as ``Variable(data)`` tells
    it; raises inside a step that :func:`gradhub.compile` traces where ``data`` is a Variable,
    an argument's array or an array handed out by ``.d``/``.g`` (the leaf would hold this
    call's values at every later call).

    Example::

        >>> import numpy as np
        >>> from gradhub.variable import observe_wrap
        >>> observe_wrap(np.zeros(2))  # nothing observes outside a traced step
    """
    if _observer is not None:
        _observer.wrap(data)


def _batched_data(what: str) -> TypeError:
    """The refusal of ``what`` for a batched Variable ``x`` inside gradhub.func.vmap."""
    return TypeError(
        f"{what} of a batched Variable x inside vmap: its data differs across the batch; use "
        "x.detach() for a constant (batched) copy, or x itself"
    )


#: ``gradhub.engine.backward``, bound by gradhub.engine
_backward: Any = None
#: ``gradhub.engine.reexecute``, bound by gradhub.engine
_reexecute: Any = None


def bind_engine(backward: Any, reexecute: Any) -> None:
    """Make ``backward`` and ``reexecute`` what :meth:`Variable.backward` and
    :meth:`Variable.forward` run (gradhub.engine calls it)."""
    global _backward, _reexecute
    _backward = backward
    _reexecute = reexecute
