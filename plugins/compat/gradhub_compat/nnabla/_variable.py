"""nnabla's ``Variable`` and ``NdArray`` on top of :class:`gradhub.Variable`.

nnabla semantics kept here (they differ from the native defaults):

* ``Variable(shape, need_grad=False)`` allocates float32 zeros; ``need_grad`` defaults to False.
* ``Variable.from_numpy_array`` copies; floating data becomes float32 (nnabla's ``"float"`` type
  configuration, the type every nnabla function computes in); integer data (labels) keeps its type.
* ``.g`` is always an array: zeros until a gradient is accumulated. ``.d = value`` and
  ``.g = value`` copy ``value`` into the Variable, broadcasting scalars (``x.g = 0``).
* ``backward(grad=1, clear_buffer=False)`` uses ``grad`` as the incoming gradient without storing
  it in ``.g`` (``grad=None`` uses the current ``.g``), accumulates into the leaves' ``.g`` and,
  unless ``clear_buffer``, leaves each intermediate Variable's gradient of this pass in its ``.g``.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
from gradhub import variable as _variable_module
from gradhub.batching import refuse_data
from gradhub.device import context_device
from gradhub.engine import backward as _native_backward
from gradhub.engine import collect_graph, is_freed
from gradhub.errors import BackwardRuleError
from gradhub.graph import links_changed
from gradhub.modes import no_grad
from gradhub.variable import Variable as NativeVariable
from gradhub.variable import observe_detach, observe_hand_out, observe_wrap, observe_write

from .._common import BINARY_OPERATORS, adopt, call_native, host_array, install_operators
from ._auto_forward import quiet_unless_auto_forward
from ._hooks import FunctionView, backward_hooks, forward_with_hooks, graph_variable
from ._hooks import visit as _visit
from ._layer_functions import SET_ITEM, set_item

_FLOAT = np.float32
#: ids of the Variables whose ``persistent`` flag is set (entries removed when they die); the
#: layer's Variable has no slot of its own (a native Variable is adopted by switching its class)
_persistent: dict[int, bool] = {}


def _scalar(value: Any) -> bool:
    return isinstance(value, (bool, int, float, np.number))


#: the gradient Variables (leaves) in nnabla's "zeroing" state, by id (entries go when they
#: die): set by ``x.g = 0`` (a scalar zero; ``x.grad.data = 0``), ``x.grad.zero()`` and a
#: solver's ``zero_grad()``; any write of the gradient and any read-write access (``x.g``,
#: ``x.grad.data``, ``cast``, ``get_data("rw")``) ends it, as nnabla's arrays. A solver skips a
#: parameter whose gradient is in it (see :func:`grad_is_zeroing`).
_zeroing: weakref.WeakValueDictionary[int, NativeVariable] = weakref.WeakValueDictionary()


def _grad_owner(v: NativeVariable) -> NativeVariable:
    """The Variable holding ``v``'s gradient Variable (the source of an unlinked Variable)."""
    while isinstance(v, _Unlinked):
        v = v._src
    return v


def set_zeroing_grad(v: NativeVariable) -> None:
    """Set the gradient of ``v`` to zeros in nnabla's "zeroing" state (as nnabla's
    ``x.grad.zero()``); the caller tells gradhub.compile's trace (``observe_write(v, "g", 0)``)."""
    owner = _grad_owner(v)
    dtype = owner._grad_dtype() if isinstance(owner, Variable) else owner._data.dtype
    dev = owner.device
    with dev.activate():
        owner._grad = NativeVariable.leaf(dev.xp.zeros(owner._data.shape, dtype=dtype), False)
    stored = owner._grad
    if stored is not None:
        _zeroing[id(stored)] = stored


def grad_is_zeroing(v: NativeVariable) -> bool:
    """Whether the gradient of ``v`` is in nnabla's "zeroing" state: set to zero by ``x.g = 0``,
    ``x.grad.zero()`` or a solver's ``zero_grad()`` and neither written nor read (read-write)
    since; a solver's ``update()`` and gradient tools skip such a parameter."""
    g = _grad_owner(v)._grad
    return g is not None and _zeroing.get(id(g)) is g


def _end_zeroing(v: NativeVariable) -> None:
    """End the "zeroing" state of the gradient of ``v`` (a read-write access to it)."""
    g = _grad_owner(v)._grad
    if g is not None:
        _zeroing.pop(id(g), None)


def _shape_tuple(shape: Any, where: str) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    if isinstance(shape, str):
        raise TypeError(f"{where}: shape must be an iterable of ints, got {shape!r}")
    try:
        return tuple(int(s) for s in shape)
    except (TypeError, ValueError):
        raise TypeError(f"{where}: shape must be an iterable of ints, got {shape!r}") from None


def _raw(value: Any) -> Any:
    """The array behind a Variable or an NdArray; other values unchanged."""
    if isinstance(value, NativeVariable):
        refuse_data(value, "nnabla (from_numpy_array, x.d = v, backward(grad=v), NdArray data)")
        return value._data
    if isinstance(value, NdArray):
        return value.data
    return value


def _traced_copy(data: Any, need_grad: bool | None) -> NativeVariable | None:
    """Inside a step that gradhub.compile traces: a copy of ``data``, a Variable or the data
    NdArray of one, as float32 where floating (nnabla's dtype), recorded without a gradient
    (see :func:`gradhub.variable.observe_detach`); raises for a copy that needs a gradient.
    None elsewhere (not tracing, other data)."""
    if isinstance(data, NdArray) and data._which == "d":
        data = data._var
    if not isinstance(data, NativeVariable):
        return None
    cut = observe_detach(data, bool(need_grad))
    if cut is not None and cut._data.dtype.kind == "f" and cut._data.dtype != _FLOAT:
        with no_grad():  # (recorded while tracing, needing no gradient)
            cut = call_native("Cast", cut, dtype="float32")
    return cut


def _nd_operand(value: Any, where: str) -> Any:
    """The array (or scalar) behind an operand of NdArray arithmetic."""
    if isinstance(value, NdArray):
        return value.data
    if _scalar(value):
        return value
    raise TypeError(
        f"nnabla NdArray {where}: the other operand must be an NdArray or a scalar, got "
        f"{type(value).__name__} (as nnabla)"
    )


class NdArray:
    """nnabla's ``NdArray``: an array buffer, either standalone or a Variable's data/gradient.

    ``NdArray(shape)`` holds float32 zeros of ``shape``; ``NdArray.from_numpy_array(a)`` a copy
    of ``a`` in its own dtype (float64 stays float64, as nnabla). ``x.data`` and ``x.grad`` of a
    Variable are NdArrays over its buffers (``x.d``/``x.g`` are their ``.data``). ``.data`` reads
    and writes the array; ``zero()``, ``fill(value)``, ``copy_from(other)`` and ``cast(dtype)``
    change it in place. Arithmetic (``+ - * / **``, unary ``-``, with NdArrays or scalars)
    computes at once, in float32 as nnabla's functions do, and gives a new NdArray; ``+=`` and
    the other in-place operators write into this one. The functions of
    :mod:`gradhub_compat.nnabla.functions` take NdArrays too (then they compute at once and
    return NdArrays, recording nothing).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> a = nn.NdArray.from_numpy_array(np.array([1.0, 2.0]))
        >>> a.dtype, (a * 2 + 1).data
        (dtype('float64'), array([3., 5.], dtype=float32))
        >>> x = nn.Variable((2,), need_grad=True)
        >>> x.grad.fill(3.0)
        >>> x.g
        array([3., 3.], dtype=float32)
    """

    __slots__ = ("_arr", "_cleared", "_var", "_which")

    def __init__(self, shape: Iterable[int] | int = ()) -> None:
        dev = context_device()
        with dev.activate():
            self._arr = dev.xp.zeros(_shape_tuple(shape, "nnabla NdArray"), dtype=_FLOAT)
        self._var: Any = None
        self._which = ""
        self._cleared = False

    @classmethod
    def _view(cls, var: Variable, which: str) -> NdArray:
        """The data (``which="d"``) or gradient (``"g"``) buffer of ``var``."""
        nd = object.__new__(cls)
        nd._arr = None
        nd._var = var
        nd._which = which
        nd._cleared = False
        return nd

    @classmethod
    def _of(cls, arr: Any) -> NdArray:
        """A standalone NdArray holding ``arr`` itself."""
        nd = object.__new__(cls)
        nd._arr = arr
        nd._var = None
        nd._which = ""
        nd._cleared = False
        return nd

    @classmethod
    def from_numpy_array(cls, nparr: Any) -> NdArray:
        """A standalone NdArray holding a copy of ``nparr``, in its dtype (as nnabla)."""
        arr = np.array(host_array(_raw(nparr)), copy=True)
        if arr.dtype.kind not in "biuf":
            raise TypeError(
                f"nnabla NdArray.from_numpy_array: numeric data expected, got dtype {arr.dtype}"
            )
        return cls._of(context_device().asarray(arr))

    @property
    def data(self) -> Any:
        """The array (assignable: a standalone NdArray takes the value's array and dtype; a
        Variable's buffer takes the value copied in, broadcasting scalars)."""
        self._cleared = False
        if self._var is None:
            return self._arr
        return getattr(self._var, self._which)

    @data.setter
    def data(self, value: Any) -> None:
        self._cleared = False
        if self._var is None:
            value = _raw(value)
            arr = self._device().asarray(value) if not _scalar(value) else None
            if arr is None:
                self._arr[...] = value
            else:
                self._arr = arr
            return
        setattr(self._var, self._which, value)

    def _device(self) -> Any:
        if self._var is not None:
            return self._var.device
        return NativeVariable.leaf(self._arr, False).device

    def _peek(self) -> Any:
        """The array, for reading only: no access recorded (a gradient stays "zeroing",
        ``clear_called`` stays set)."""
        if self._var is None:
            return self._arr
        if self._which == "g" and self._var._grad is not None:
            return self._var._grad._data
        return getattr(self._var, self._which)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self._peek().shape)

    @property
    def size(self) -> int:
        return int(self._peek().size)

    @property
    def ndim(self) -> int:
        return int(self._peek().ndim)

    @property
    def dtype(self) -> Any:
        return self._peek().dtype

    def size_from_axis(self, axis: int = -1) -> int:
        """The product of the dimensions from ``axis`` on (the whole size for -1)."""
        return int(math.prod(self.shape[max(axis, 0) :]))

    def zero(self) -> None:
        """Set every element to 0. A Variable's gradient is then in nnabla's "zeroing" state
        (as after ``x.g = 0``): a solver's ``update()`` skips the parameter until something
        writes or takes (``x.g``) the gradient; ``fill(0)`` is a write."""
        var = self._var
        if var is not None and self._which == "g":
            self._cleared = False
            observe_write(var, "g", 0)  # (replayed inside a compiled step)
            set_zeroing_grad(var)
            return
        self.fill(0)

    def clear(self) -> None:
        """Release the array's memory, as nnabla's ``clear``: its contents are undefined until it
        is written again (gradhub keeps the buffer; ``clear_called`` tells it was called)."""
        self._cleared = True

    @property
    def zeroing(self) -> bool:
        """Whether a Variable's gradient is in nnabla's "zeroing" state: set by ``zero()``,
        ``x.g = 0`` or a solver's ``zero_grad()`` and neither written nor taken (``x.g``) since
        (``fill(0)`` is a write). Not tracked for a Variable's data or a standalone NdArray,
        whose ``zero()`` writes zeros: ``NotImplementedError`` there.

        Example::

            >>> import gradhub_compat.nnabla as nn
            >>> x = nn.Variable((2,), need_grad=True)
            >>> x.grad.zero()
            >>> x.grad.zeroing
            True
            >>> x.grad.fill(0)
            >>> x.grad.zeroing
            False
        """
        if self._var is not None and self._which == "g":
            return grad_is_zeroing(self._var)
        raise NotImplementedError(
            "nnabla NdArray.zeroing: tracked for a Variable's gradient only (its data and "
            "standalone NdArrays are written with zeros by zero()); see docs/migration-nnabla.md"
        )

    @property
    def clear_called(self) -> bool:
        """Whether :meth:`clear` was called since the array was last accessed or written
        (``.data``, ``fill``, ``zero``, ``copy_from``, ``cast``), as nnabla's."""
        return self._cleared

    def fill(self, value: float) -> None:
        """Set every element to ``value`` (a write, also of 0: see :meth:`zero`)."""
        self._cleared = False
        var = self._var
        if var is None:
            self._arr[...] = value
            return
        if self._which == "g":
            observe_write(var, "g", value)
            var._write_grad(value)
            return
        setattr(var, self._which, value)

    def copy_from(self, arr: Any, use_current_context: bool = True) -> None:
        """Copy the values of ``arr`` (an NdArray or an array of the same size) into this one.
        A standalone NdArray takes ``arr``'s dtype (nnabla 1.39 does, whatever
        ``use_current_context``, which is accepted and ignored: gradhub has one device per
        array); a Variable's buffer keeps the Variable's dtype."""
        self._cleared = False
        src = _raw(arr)
        if tuple(getattr(src, "shape", ())) != self.shape:
            if int(np.prod(getattr(src, "shape", ()))) != self.size:
                raise ValueError(
                    f"nnabla NdArray.copy_from: cannot copy an array of shape "
                    f"{tuple(getattr(src, 'shape', ()))} into an NdArray of shape {self.shape}"
                )
            src = src.reshape(self.shape)
        if self._var is None:
            src_dtype = getattr(src, "dtype", None)
            if src_dtype is not None and src_dtype != self._arr.dtype:
                self._arr = self._arr.astype(src_dtype)
            self._arr[...] = src
            return
        setattr(self._var, self._which, src)

    def cast(self, dtype: Any, ctx: Any = None) -> Any:
        """The array converted to ``dtype`` (kept in this NdArray), as nnabla's ``cast``."""
        self._cleared = False
        arr = self.data
        if arr.dtype != np.dtype(dtype):
            arr = arr.astype(dtype)
            if self._var is None:
                self._arr = arr
            elif self._which == "d":
                self._var._data = arr
            else:
                self._var._grad = NativeVariable.leaf(arr, False)
        return arr

    def get_data(self, mode: str = "rw", dtype: Any = None) -> Any:
        """The array (``dtype`` given: cast to it first, as :meth:`cast`). As nnabla's, a
        read-only access (``mode="r"``) leaves a gradient's "zeroing" state as it is."""
        var = self._var
        keep = mode == "r" and var is not None and self._which == "g" and grad_is_zeroing(var)
        out = self.data if dtype is None else self.cast(dtype)
        if keep:
            stored = _grad_owner(var)._grad
            if stored is not None:
                _zeroing[id(stored)] = stored
        return out

    # -- arithmetic: computed at once in float32 (nnabla's functions), a new NdArray ------------
    def _binary(self, other: Any, op: Any, where: str, reverse: bool = False) -> NdArray:
        a = self.data
        b = _nd_operand(other, where)
        xp = self._device().xp
        a = a.astype(_FLOAT) if a.dtype != _FLOAT else a
        if not _scalar(b) and b.dtype != _FLOAT:
            b = b.astype(_FLOAT)
        out = op(b, a) if reverse else op(a, b)
        return NdArray._of(xp.asarray(out, dtype=_FLOAT))

    def _inplace(self, other: Any, op: Any, where: str) -> NdArray:
        res = op(self.data, _nd_operand(other, where))
        self.copy_from(res)
        return self

    def __add__(self, o: Any) -> NdArray:
        return self._binary(o, np.add, "+")

    def __radd__(self, o: Any) -> NdArray:
        return self._binary(o, np.add, "+", True)

    def __sub__(self, o: Any) -> NdArray:
        return self._binary(o, np.subtract, "-")

    def __rsub__(self, o: Any) -> NdArray:
        return self._binary(o, np.subtract, "-", True)

    def __mul__(self, o: Any) -> NdArray:
        return self._binary(o, np.multiply, "*")

    def __rmul__(self, o: Any) -> NdArray:
        return self._binary(o, np.multiply, "*", True)

    def __truediv__(self, o: Any) -> NdArray:
        return self._binary(o, np.true_divide, "/")

    def __rtruediv__(self, o: Any) -> NdArray:
        return self._binary(o, np.true_divide, "/", True)

    def __pow__(self, o: Any) -> NdArray:
        return self._binary(o, np.power, "**")

    def __rpow__(self, o: Any) -> NdArray:
        return self._binary(o, np.power, "**", True)

    def __neg__(self) -> NdArray:
        return self._binary(-1, np.multiply, "-")

    def __pos__(self) -> NdArray:
        return self._binary(1, np.multiply, "+")

    def __iadd__(self, o: Any) -> NdArray:
        return self._inplace(o, np.add, "+=")

    def __isub__(self, o: Any) -> NdArray:
        return self._inplace(o, np.subtract, "-=")

    def __imul__(self, o: Any) -> NdArray:
        return self._inplace(o, np.multiply, "*=")

    def __itruediv__(self, o: Any) -> NdArray:
        return self._inplace(o, np.true_divide, "/=")

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        arr = np.asarray(self._device().to_numpy(self.data))
        return arr if dtype is None else arr.astype(dtype)

    def _key(self) -> Any:
        return (id(self._var), self._which) if self._var is not None else id(self._arr)

    # nnabla: two NdArrays are equal when they are the same buffer (``x.data == x.data``)
    def __eq__(self, other: object) -> bool:
        return isinstance(other, NdArray) and self._key() == other._key()

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"<NdArray({self.shape}) at {hex(id(self))}>"


@install_operators
class Variable(NativeVariable):
    """nnabla's Variable: a :class:`gradhub.Variable` with nnabla's defaults and semantics.

    ``Variable(shape=(), need_grad=False)`` holds float32 zeros of ``shape``; assign ``.d`` and
    call ``forward()`` on a result to re-execute the graph (nnabla's static style). Results of
    functions of :mod:`gradhub_compat.nnabla.functions` are Variables of this class.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> x = nn.Variable.from_numpy_array(np.array([1.0, 2.0])).apply(need_grad=True)
        >>> x.g                      # always an array: zeros before any backward
        array([0., 0.], dtype=float32)
        >>> y = x * x
        >>> y.backward()             # grad=1
        >>> y.backward()             # gradients accumulate into the leaves
        >>> x.g
        array([4., 8.], dtype=float32)
    """

    __slots__ = ()

    def __init__(self, shape: Iterable[int] | int = (), need_grad: bool | None = None) -> None:
        shape = _shape_tuple(shape, "nnabla Variable")
        dev = context_device()
        with dev.activate():
            arr = dev.xp.zeros(shape, dtype=_FLOAT)
        super().__init__(arr, need_grad=bool(need_grad))

    @classmethod
    def from_numpy_array(
        cls, data: Any, grad: Any = None, need_grad: bool | None = None
    ) -> Variable:
        """A Variable holding a copy of ``data`` (and of ``grad``, if given).

        Floating data is stored as float32 (nnabla computes in float32); integer data such as
        labels keeps its type, and so does an integer ``grad``. With ``need_grad=True`` integer
        data keeps its type in ``.d`` and, as nnabla, functions compute on it in float32 and its
        ``.g`` is a float32 gradient. ``need_grad`` defaults to False. Inside a step that
        gradhub.compile traces, a copy of a Variable's data (the step's array arguments arrive
        as Variables) is a function of it computed again at each call (a leaf would hold this
        call's values at every one).
        """
        if grad is None:
            cut = _traced_copy(data, need_grad)
            if cut is not None:
                return adopt(cut, cls)  # type: ignore[no-any-return]
        raw = _raw(data)
        observe_wrap(raw)  # (refused inside a compiled step for x.d of a Variable x)
        arr = np.array(host_array(raw), copy=True)
        if arr.dtype.kind == "f" and arr.dtype != _FLOAT:
            arr = arr.astype(_FLOAT)
        floating = arr.dtype.kind in "fc"
        dev = context_device()
        v: Variable
        if need_grad and arr.dtype.kind in "iub" and cls is Variable:
            # nnabla computes on integer data in float32 and gives it a float32 gradient
            v = _IntegerData.of(dev.asarray(arr))
        else:
            v = cls.__new__(cls)
            NativeVariable.__init__(v, dev.asarray(arr), need_grad=bool(need_grad) and floating)
        if grad is not None:
            g = np.array(host_array(_raw(grad)), copy=True)  # (as the data: onto dev below)
            if g.shape != arr.shape:
                raise ValueError(
                    f"nnabla Variable.from_numpy_array: grad has shape {g.shape} but data has "
                    f"shape {arr.shape}"
                )
            if g.dtype.kind == "f" and g.dtype != _FLOAT:
                g = g.astype(_FLOAT)
            v._grad = NativeVariable.leaf(dev.asarray(g), False)  # nnabla keeps an int grad
        return v

    # -- data and gradient -----------------------------------------------------------------------
    def _fit(self, value: Any, dtype: Any, what: str) -> Any:
        """``value`` as a fresh array of this Variable's shape and ``dtype`` on its device."""
        dev = self.device
        with dev.activate():  # CuPy allocates on the current device
            return self._fit_here(dev, value, dtype, what)

    def _fit_here(self, dev: Any, value: Any, dtype: Any, what: str) -> Any:
        xp = dev.xp
        value = _raw(value)
        if _scalar(value):
            return xp.full(self._data.shape, value, dtype=dtype)
        arr = dev.asarray(value)
        if tuple(arr.shape) != self.shape:
            try:
                arr = xp.broadcast_to(arr, self.shape)
            except ValueError:
                raise ValueError(
                    f"nnabla Variable.{what}: cannot assign an array of shape {tuple(arr.shape)} "
                    f"to a Variable of shape {self.shape}"
                ) from None
        return xp.array(arr, dtype=dtype, copy=True)

    @property
    def d(self) -> Any:
        """The data array (a reference; assigning copies the value in, broadcasting scalars)."""
        observe_hand_out(self._data)  # (read-only while gradhub.compile traces a step)
        return self._data

    @d.setter
    def d(self, value: Any) -> None:
        observe_write(self, "d", value)  # (refused while gradhub.compile traces a step)
        self._data = self._fit(value, self._data.dtype, "d")

    def _grad_dtype(self) -> Any:
        return self._data.dtype if self._data.dtype.kind in "fc" else np.dtype(_FLOAT)

    @property
    def g(self) -> Any:
        """The gradient array: zeros until a gradient is accumulated (assignable like ``d``).
        As nnabla's, taking it ends the gradient's "zeroing" state (it may be written)."""
        gv = self._grad
        if gv is None:
            dev = self.device
            with dev.activate():
                zeros = dev.xp.zeros(self._data.shape, dtype=self._grad_dtype())
            gv = self._grad = NativeVariable.leaf(zeros, False)
        else:
            _end_zeroing(self)
        observe_hand_out(gv._data)
        return gv._data

    @g.setter
    def g(self, value: Any) -> None:
        observe_write(self, "g", value)  # (x.g = 0 inside a compiled step is replayed)
        if _scalar(value) and value == 0:
            set_zeroing_grad(self)  # nnabla: a scalar zero is x.grad.zero() (solvers skip it)
            return
        self._write_grad(value)

    def _write_grad(self, value: Any) -> None:
        """Copy ``value`` into the gradient (a write: no "zeroing" state, even for zeros)."""
        arr = self._fit(value, self._grad_dtype(), "g")
        self._grad = NativeVariable.leaf(arr, False)

    @property
    def data(self) -> NdArray:  # type: ignore[override]
        """The data buffer as an :class:`NdArray` (``x.data.zero()``; assignable)."""
        return NdArray._view(self, "d")

    @data.setter
    def data(self, value: Any) -> None:
        if isinstance(value, NdArray) and value._var is None and value.shape == self.shape:
            self._data = value._arr  # nnabla: the Variable now uses the NdArray's buffer
            return
        self.d = value

    @property
    def grad(self) -> NdArray:  # type: ignore[override]
        """The gradient buffer as an :class:`NdArray` (``x.grad.zero()``; assignable)."""
        return NdArray._view(self, "g")

    @grad.setter
    def grad(self, value: Any) -> None:
        self.g = value

    # -- nnabla helpers --------------------------------------------------------------------------
    def apply(self, **kwargs: Any) -> Variable:
        """Set attributes (``need_grad=True``, ``d=...``) and return self."""
        for k, v in kwargs.items():
            setattr(self, k, v)
        return self

    @property
    def parent(self) -> Any:
        """The function that produced this Variable (None for a leaf), with nnabla's ``name``,
        ``info.type_name``, ``info.args``, ``inputs`` and ``outputs``."""
        node = self._creator
        return None if node is None else FunctionView(node)

    def rewire_on(self, var: Any) -> None:
        """nnabla's ``rewire_on`` (put the graph consuming this Variable on top of ``var``'s) is
        not supported: a gradhub graph records its leaves in the functions that consume them and
        keeps no list of those consumers. Raises ``NotImplementedError``; build the second graph
        on ``var`` directly instead (see docs/migration-nnabla.md)."""
        raise NotImplementedError(
            "nnabla Variable.rewire_on is not supported by gradhub_compat.nnabla (a graph keeps "
            "no list of a Variable's consumers); build the graph on the other Variable directly "
            "(see docs/migration-nnabla.md, 'Differences and limits')"
        )

    @property
    def function_references(self) -> Any:
        """nnabla's ``function_references`` (the functions consuming this Variable) is not
        supported: a gradhub graph keeps no list of a Variable's consumers. Raises
        ``NotImplementedError`` (see docs/migration-nnabla.md)."""
        raise NotImplementedError(
            "nnabla Variable.function_references is not supported by gradhub_compat.nnabla (a "
            "graph keeps no list of a Variable's consumers; see docs/migration-nnabla.md, "
            "'Differences and limits')"
        )

    def clear_all_graph_links(self) -> None:
        """nnabla's ``clear_all_graph_links`` (cut the graph so that the Variables of it become
        leaves, for truncated BPTT) is not supported: the functions consuming those Variables
        would still reach through them. Raises ``NotImplementedError``; start the next segment
        from ``h.get_unlinked_variable()`` instead (see docs/migration-nnabla.md)."""
        raise NotImplementedError(
            "nnabla Variable.clear_all_graph_links is not supported by gradhub_compat.nnabla; "
            "start the next truncated-BPTT segment from h.get_unlinked_variable() (see "
            "docs/migration-nnabla.md, 'Differences and limits')"
        )

    def visit(self, f: Callable[[Any], Any]) -> None:
        """Call ``f`` with each function of the graph producing this Variable, producers first,
        as nnabla's ``visit``; ``f`` receives the view ``parent`` gives (``f.name``,
        ``f.info.type_name``, ``f.inputs``, ``f.outputs``). Names given to ``f.outputs[k]``
        are kept with the graph.

        Example::

            >>> import gradhub_compat.nnabla as nn
            >>> import gradhub_compat.nnabla.functions as F
            >>> y = F.relu(nn.Variable((2,)) * 2)
            >>> y.visit(lambda f: print(f.name))
            MulScalar
            ReLU
        """
        _visit(self, f)

    def reset_shape(self, shape: Any, force: bool = False) -> None:
        """Give the Variable ``shape``: new float32 zeros when it differs (``force`` is
        nnabla's permission to discard the data; the data is discarded either way here)."""
        shape = _shape_tuple(shape, "nnabla Variable.reset_shape")
        if shape == self.shape:
            return
        dev = self.device
        with dev.activate():
            self._data = dev.xp.zeros(shape, dtype=_FLOAT)
        self._grad = None

    def __setitem__(self, key: Any, value: Any) -> None:
        """``x[key] = value`` as nnabla: ``x`` becomes the output of a recorded function that
        writes ``value`` (a Variable, an NdArray, an array or a scalar) into a copy of the old
        ``x`` at ``key``, so gradients flow to ``value`` (at ``key``) and to the old ``x``
        (elsewhere); ``forward()`` recomputes it. A leaf ``x`` becomes a non-leaf whose old data
        is a constant (as nnabla, whose leaf becomes the output of ``ScatterNd``)."""
        set_item_in_place(self, key, value)

    @property
    def persistent(self) -> bool:
        """nnabla's flag that keeps an intermediate's data and gradient through the clear
        options: False by default. ``backward(clear_buffer=True)`` leaves this pass's gradient
        in ``.g`` of a persistent intermediate (gradhub never clears the data of a Variable
        still referenced)."""
        return _persistent.get(id(self), False)

    @persistent.setter
    def persistent(self, value: bool) -> None:
        key = id(self)
        if not value:
            _persistent.pop(key, None)
        elif key not in _persistent:
            _persistent[key] = True
            weakref.finalize(self, _persistent.pop, key, None)

    def size_from_axis(self, axis: int = -1) -> int:
        """The product of the dimensions from ``axis`` on (the whole size for -1)."""
        return int(math.prod(self.shape[max(axis, 0) :]))

    def reshape(self, shape: Any, unlink: bool = False) -> Variable:  # type: ignore[override]
        """This Variable with another shape; ``unlink=True`` cuts it from the graph.

        The unlinked result shares the data and gradient buffers, as nnabla's (see
        :meth:`get_unlinked_variable`), seen through the new shape.
        """
        if unlink:
            cut = observe_detach(self, self.need_grad)  # (inside gradhub.compile: recorded)
            if cut is not None:
                return adopt(NativeVariable.reshape(cut, shape), Variable)  # type: ignore[no-any-return]
            return _Unlinked.of(self, self.need_grad, tuple(shape))
        return adopt(NativeVariable.reshape(self, shape), Variable)

    def get_unlinked_variable(self, need_grad: bool | None = None) -> Variable:
        """A leaf cut from the graph that shares this Variable's data and gradient, as nnabla's.

        ``need_grad`` is kept unless given. The two stay one buffer: after ``forward()``
        recomputes this Variable (or its ``.d`` is assigned), the unlinked Variable reads the new
        data; a backward pass through the unlinked Variable accumulates into the shared ``.g``
        (nnabla's GAN idiom ``fake.get_unlinked_variable(need_grad=True)`` relies on both).
        """
        need = self.need_grad if need_grad is None else bool(need_grad)
        cut = observe_detach(self, need)  # (inside gradhub.compile: a recorded function)
        if cut is not None:
            return adopt(cut, Variable)  # type: ignore[no-any-return]
        return _Unlinked.of(self, need, None)

    unlinked = get_unlinked_variable

    def detach(self) -> Variable:
        """A new leaf sharing the data, cut from the graph, needing no gradient."""
        return self.get_unlinked_variable(need_grad=False)

    # -- graph -----------------------------------------------------------------------------------
    def forward(  # type: ignore[override]
        self,
        clear_buffer: bool = False,
        clear_no_need_grad: bool = False,
        function_pre_hook: Any = None,
        function_post_hook: Any = None,
    ) -> None:
        """Re-execute the graph that produced this Variable from its leaves' current data.

        ``clear_buffer``/``clear_no_need_grad`` are accepted and have no effect (the graph keeps
        only the arrays its backward rules need). ``function_pre_hook(f)`` and
        ``function_post_hook(f)`` are called around each function, producers first, with ``f``
        showing ``f.name``, ``f.info.type_name``, ``f.inputs`` and ``f.outputs`` (as nnabla).
        """
        _need_grad_again(self)
        redraw_random_leaves([self])
        if function_pre_hook is not None or function_post_hook is not None:
            forward_with_hooks(self, function_pre_hook, function_post_hook)
            return
        NativeVariable.forward(self)

    def backward(  # type: ignore[override]
        self,
        grad: Any = 1,
        clear_buffer: bool = False,
        communicator_callbacks: Any = None,
        function_pre_hook: Any = None,
        function_post_hook: Any = None,
    ) -> None:
        """Backpropagate from this Variable; gradients accumulate into the leaves' ``.g``.

        ``grad`` is the incoming gradient: a scalar (default 1), an array, an NdArray or a
        Variable, or None to use this Variable's current ``.g``; it is not stored in ``.g``. Unless
        ``clear_buffer``, each intermediate Variable still referenced keeps the gradient of this
        pass in ``.g`` (overwritten, not accumulated, as in nnabla); with ``clear_buffer`` the
        arrays the graph saved for backward are freed as they are used (``forward()`` recomputes
        them), as nnabla frees its buffers. ``communicator_callbacks`` (such as
        ``comm.all_reduce_callback(grads, pack_size)`` of
        :mod:`gradhub_compat.nnabla.communicators`) are told each parameter's gradient as soon as it
        is final, so that its all-reduce overlaps the rest of backward. ``function_pre_hook(f)``
        and ``function_post_hook(f)`` are called around the backward of each function, consumers
        first (as nnabla; see :meth:`forward`).
        """
        if self._creator is None:
            raise RuntimeError(
                "nnabla Variable.backward: the variable has no parent (a leaf: no function "
                "produced it, so there is nothing to backpropagate), as nnabla raises"
            )
        if grad is None:
            seed: Any = self.g.copy()
        else:
            seed = _raw(grad)
        if not _scalar(seed) and tuple(np.shape(seed)) != self.shape:
            raise ValueError(
                f"nnabla Variable.backward: grad has shape {tuple(np.shape(seed))} but the "
                f"Variable has shape {self.shape}"
            )
        kept = self._grad
        # with clear_buffer, only persistent intermediates keep their gradient: the pass stores
        # every intermediate's and the others get theirs back (only graphs with one pay for it)
        restore = _not_persistent(self) if clear_buffer and _persistent else None
        root_off = not self._need_grad and self._creator.rule is not None
        if root_off:  # nnabla backpropagates from a root set need_grad=False all the same
            self._need_grad = True  # (the slot: its node stays marked)
        try:
            if self._need_grad:  # (nnabla: nothing to do, no error, when nothing needs one)
                with backward_hooks(self, function_pre_hook, function_post_hook):
                    _native_backward(
                        self,
                        seed,
                        retain_grad=not clear_buffer or bool(restore),
                        retain_graph=not clear_buffer,
                        communicator_callbacks=communicator_callbacks,
                    )
        except BackwardRuleError:
            freed = freed_buffers_error([self], "nnabla Variable.backward")
            if freed is None:
                raise
            raise freed from None
        finally:
            self._grad = kept
            if root_off:
                self._need_grad = False
            if restore:
                for v, g in restore[1]:
                    v._grad = g
            if _set_item_targets:
                _old_value_gradients()

    def __repr__(self) -> str:
        return f"<Variable({self.shape}, need_grad={self.need_grad}) at {hex(id(self))}>"

    # nnabla: a Variable and its get_unlinked_variable() are one variable (== and hash)
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, NativeVariable):
            return NotImplemented
        return _buffer_owner(self) is _buffer_owner(other)

    def __ne__(self, other: object) -> bool:
        if not isinstance(other, NativeVariable):
            return NotImplemented
        return _buffer_owner(self) is not _buffer_owner(other)

    def __hash__(self) -> int:
        return object.__hash__(_buffer_owner(self))


def _buffer_owner(v: NativeVariable) -> NativeVariable:
    """The Variable whose buffers ``v`` uses: the source of an unlinked Variable of the same
    shape, else ``v`` itself (nnabla compares and hashes Variables by that)."""
    return v._src if isinstance(v, _Unlinked) and v._vshape is None else v


def _not_persistent(y: NativeVariable) -> tuple[bool, list[tuple[Any, Any]]] | None:
    """For ``backward(clear_buffer=True)`` from ``y``: None when no intermediate of its graph is
    persistent, else (True, the other intermediates with their current ``._grad``)."""
    found = False
    others: list[tuple[Any, Any]] = []
    for node in collect_graph([y], only_need_grad=True):
        for ref in node.outputs:
            v = ref()
            if v is None or v is y:
                continue
            if _persistent.get(id(v), False):
                found = True
            else:
                others.append((v, v._grad))
    return (True, others) if found else None


def _quiet_operator(name: str) -> Callable[..., Any]:
    op = getattr(Variable, name)

    def quiet(self: Any, *args: Any) -> Any:
        with quiet_unless_auto_forward():
            return op(self, *args)

    quiet.__name__ = quiet.__qualname__ = name
    quiet.__doc__ = op.__doc__
    return quiet


# the arithmetic operators compute at build time without numpy's floating-point warnings while
# auto_forward is off (see _auto_forward), as the functions of F and PF
for _name in (*BINARY_OPERATORS, "__neg__", "__pos__", "__abs__"):
    setattr(Variable, _name, _quiet_operator(_name))


class _Unlinked(Variable):
    """A leaf sharing the data and gradient of another Variable (its source), possibly seen
    through another shape: nnabla's ``get_unlinked_variable`` and ``reshape(unlink=True)``.

    ``_data`` and ``_grad`` (the slots every gradhub function, the engine and re-execution read
    and write) are properties that forward to the source's, so the source's new arrays (a
    ``forward()`` re-execution, ``.d = ...``) are what this Variable holds, and gradients
    accumulated here land in the source's ``.g``. Only these Variables pay for the indirection.
    A reshaped view is cached per source array, so that its identity is stable while the source
    keeps its array (the engine recognises a replaced leaf by identity).
    """

    __slots__ = ("_cache", "_src", "_vshape")

    _src: NativeVariable
    _vshape: tuple[int, ...] | None
    _cache: tuple[Any, Any] | None

    @classmethod
    def of(cls, src: NativeVariable, need_grad: bool, shape: tuple[int, ...] | None) -> _Unlinked:
        """A new unlinked Variable over ``src`` (seen with ``shape``; None keeps its shape)."""
        if isinstance(src, _Unlinked) and src._vshape is None:
            src = src._src  # one level of indirection, whatever the chain
        v = object.__new__(cls)
        v._src = src
        v._cache = None
        v._vshape = None
        if shape is not None:
            arr = src._data
            try:
                view = arr.reshape(shape)
            except ValueError:
                raise ValueError(
                    f"nnabla Variable.reshape: cannot reshape a Variable of shape "
                    f"{tuple(arr.shape)} to {shape}"
                ) from None
            v._vshape = tuple(view.shape)
            v._cache = (arr, view)
        v._creator = None
        v._idx = 0
        v.name = None
        v._need_grad = need_grad
        return v

    @property  # type: ignore[override]
    def _data(self) -> Any:
        arr = self._src._data
        shape = self._vshape
        if shape is None:
            return arr
        cache = self._cache
        if cache is not None and cache[0] is arr:
            return cache[1]
        view = arr.reshape(shape)
        self._cache = (arr, view)
        return view

    @_data.setter
    def _data(self, value: Any) -> None:
        src = self._src
        if self._vshape is None:
            src._data = value
            return
        base = value.reshape(src._data.shape)
        src._data = base
        self._cache = (base, value)

    @property  # type: ignore[override]
    def _grad(self) -> NativeVariable | None:
        g = self._src._grad
        shape = self._vshape
        if g is None or shape is None:
            return g
        return _reshaped(g, shape)

    @_grad.setter
    def _grad(self, value: NativeVariable | None) -> None:
        src = self._src
        if value is not None and self._vshape is not None:
            value = _reshaped(value, tuple(src._data.shape))
        src._grad = value


def _reshaped(g: NativeVariable, shape: tuple[int, ...]) -> NativeVariable:
    """A gradient Variable seen with ``shape`` (a view of its array; in the graph if recorded)."""
    if tuple(g._data.shape) == shape:
        return g
    if g._creator is not None:
        return call_native("Reshape", g, shape=shape)  # type: ignore[no-any-return]
    return NativeVariable.leaf(g._data.reshape(shape), False)


def freed_buffers_error(outputs: list[Any], where: str) -> BackwardRuleError | None:
    """The error to raise, in nnabla's terms, when a backward pass met a function whose buffers
    an earlier ``backward(clear_buffer=True)`` freed (None when the graph has no such function).

    The native error suggests ``retain_graph=True``, which nnabla's ``backward`` does not have;
    in nnabla the remedy is ``forward()`` again, or ``clear_buffer=False`` on the first backward.
    Only the error path pays for the graph walk.
    """
    variables = [y for y in outputs if isinstance(y, NativeVariable)]
    freed = [n for n in collect_graph(variables) if is_freed(n)]
    if not freed:
        return None
    return BackwardRuleError(
        f"{where}: cannot backpropagate through {freed[-1].fdef.snake} again: its buffers were "
        "freed by an earlier backward(clear_buffer=True); call forward() on the output first "
        "to recompute them (or keep them with clear_buffer=False on the earlier backward)"
    )


#: Variables assigned into with ``x[key] = value`` (see :func:`_old_value_gradients`)
_set_item_targets: weakref.WeakSet[NativeVariable] = weakref.WeakSet()


def _old_value_gradients() -> None:
    """After ``backward``: the ``.g`` of a Variable assigned into shows the gradient of its old
    value (zero at the assigned key), as nnabla's, whose assignment writes in place."""
    for x in list(_set_item_targets):
        node = x._creator
        gv = x._grad
        if node is None or node.fdef is not SET_ITEM or gv is None:
            continue
        g = gv._data.copy()
        g[node.attrs["key"]] = 0
        x._grad = NativeVariable.leaf(g, False)


def set_item_in_place(x: Variable, key: Any, value: Any) -> None:
    """Make ``x`` the result of ``SetItem(old x, value, key)`` (see ``Variable.__setitem__``)."""
    if isinstance(key, NativeVariable) or (
        isinstance(key, tuple) and any(isinstance(k, NativeVariable) for k in key)
    ):
        raise NotImplementedError(
            "nnabla Variable.__setitem__: a Variable as the index is not supported by gradhub "
            "(see docs/migration-nnabla.md); index with ints, slices or arrays"
        )
    if isinstance(value, NdArray):
        value = value.data
    if not isinstance(value, NativeVariable):
        dev = x.device
        with dev.activate():
            arr = dev.xp.asarray(value, dtype=x._data.dtype)
        value = NativeVariable.leaf(arr, False)
    if x._creator is None:
        old: NativeVariable = NativeVariable.leaf(x._data, False)  # the old data, a constant
    else:
        old = graph_variable(x._data, x._need_grad, x._creator, x._idx)
        # the old value's node no longer produces ``x`` (forward() and retained gradients
        # would write its value into it): it produces the unreferenced ``old`` instead
        outs = list(x._creator.outputs)
        outs[x._idx] = weakref.ref(old)
        x._creator.outputs = tuple(outs)
    y = set_item(old, key, value)
    _set_item_targets.add(x)
    x._data = y._data
    x._creator = y._creator
    x._idx = 0
    x._grad = None
    x._need_grad = y._need_grad
    y._creator.outputs = (weakref.ref(x),)
    links_changed()  # (plans made for x's old creator are made again)


#: output Variable -> the need_grad generation at which its graph's flags were last worked out
_need_grad_seen: weakref.WeakKeyDictionary[NativeVariable, int] = weakref.WeakKeyDictionary()


# the Variables of F.rand, F.randn and F.randint, and the index Variables of F.random_flip,
# random_shift and random_crop (id -> [weak reference, draw, fresh]): as nnabla's random
# functions, they draw new values each time forward() executes a graph holding them
_random_leaves: dict[int, list[Any]] = {}


def register_random_leaf(v: NativeVariable, draw: Callable[[], Any], fresh: bool) -> None:
    """Have ``forward()`` (and ``nn.forward_all``) give the leaf ``v`` the values ``draw()``
    returns each time it executes a graph holding ``v`` (before the graph's functions run).
    ``fresh``: the first such ``forward()`` keeps the values ``v`` was made with (built with
    auto_forward off, nnabla draws them at that first execution)."""
    key = id(v)
    _random_leaves[key] = [weakref.ref(v, lambda _: _random_leaves.pop(key, None)), draw, fresh]


def redraw_random_leaves(outputs: Iterable[NativeVariable]) -> None:
    """Draw new values into the random leaves (see :func:`register_random_leaf`) of the graphs
    producing ``outputs``, as nnabla's ``forward()`` executes its random functions."""
    if not _random_leaves:
        return
    outputs = list(outputs)
    seen: set[int] = set()
    candidates = [v for v in outputs if v._creator is None]
    for node in collect_graph(outputs):
        candidates.extend(node.srcs)
    for v in candidates:
        entry = _random_leaves.get(id(v))
        if entry is None or id(v) in seen or entry[0]() is not v:
            continue
        seen.add(id(v))
        if entry[2]:
            entry[2] = False
        else:
            v.d = entry[1]()


def _need_grad_again(y: NativeVariable) -> None:
    """As nnabla's ``forward()`` (its graph visit works out each function's need_grad from the
    leaves' flags at every call): a function recorded needing no gradient, one of whose inputs
    needs one now (``x.need_grad = True`` set after the graph was built), gets its backward rule
    and its outputs need a gradient, so that the re-execution that follows keeps the arrays the
    rule reads. Only after a need_grad was set somewhere since the last look at this graph.
    Inside a step that gradhub.compile traces, functions called under ``no_grad()`` (and
    ``detach()``) are recorded needing no gradient: those deliberate stops (``node.stop``)
    keep no rule."""
    gen = _variable_module.need_grad_generation
    if _need_grad_seen.get(y) == gen:
        return
    changed = False
    for node in collect_graph([y]):  # (producers first)
        if (
            node.rule is not None
            or not node.fdef.differentiable
            or node.fdef.rule is None
            or getattr(node, "stop", False)
        ):
            continue
        if not any(
            (src._need_grad if idx < 0 else src.need_grad) for src, idx in zip(node.srcs, node.idxs)
        ):
            continue
        node.need_grad = True
        node.rule = node.fdef.rule
        for ref in node.outputs:
            v = ref()
            if v is not None and v._data.dtype.kind in "fc":
                v._need_grad = True
        changed = True
    if changed:
        links_changed()  # (plans recorded these functions without rules)
    _need_grad_seen[y] = _variable_module.need_grad_generation


class _IntegerData(Variable):
    """A leaf holding integer data that needs a gradient (``from_numpy_array(int array,
    need_grad=True)``), as nnabla: ``.d`` is the integer array, while functions, the engine and
    re-execution read ``_data``, its float32 values (nnabla's functions compute in float32), so
    the gradient is float32 and lands in ``.g``.

    The float32 copy is cached per integer array, so that its identity is stable while the data
    is (the engine recognises a replaced leaf by identity). ``.d`` is therefore read-only: an
    in-place write (``x.d[0] = 3``) raises instead of leaving the float32 copy stale; assign
    ``x.d = ...`` instead.
    """

    __slots__ = ("_float", "_g", "_int")

    _int: Any
    _float: Any
    _g: NativeVariable | None

    @classmethod
    def of(cls, arr: Any) -> _IntegerData:
        v = object.__new__(cls)
        v._int = arr
        v._float = None
        v._g = None
        v._creator = None
        v._idx = 0
        v.name = None
        v._need_grad = True
        return v

    @property  # type: ignore[override]
    def _data(self) -> Any:
        f = self._float
        if f is None:
            f = self._float = self._int.astype(_FLOAT)
        return f

    @_data.setter
    def _data(self, value: Any) -> None:
        self._int = value.astype(self._int.dtype) if value.dtype != self._int.dtype else value
        self._float = value if value.dtype == _FLOAT else None

    @property  # type: ignore[override]
    def _grad(self) -> NativeVariable | None:
        return self._g

    @_grad.setter
    def _grad(self, value: NativeVariable | None) -> None:
        # a gradient accumulated onto an integer one given to from_numpy_array: float32, as
        # nnabla (numpy would promote int64 + float32 to float64)
        if value is not None and value._data.dtype.kind == "f" and value._data.dtype != _FLOAT:
            value = NativeVariable.leaf(value._data.astype(_FLOAT), False)
        self._g = value

    @property
    def d(self) -> Any:
        """The integer data (read-only; assign ``.d = value`` to change it)."""
        view = self._int.view()
        view.flags.writeable = False
        return view

    @d.setter
    def d(self, value: Any) -> None:
        observe_write(self, "d", value)
        self._int = self._fit(value, self._int.dtype, "d")
        self._float = None

    @property
    def dtype(self) -> Any:
        return self._int.dtype
