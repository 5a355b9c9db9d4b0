"""The chainer compatibility layer: ``from gradhub_compat import chainer``.

Replace the import lines of a chainer program and it runs on gradhub with chainer's semantics::

    from gradhub_compat import chainer                    # import chainer
    from gradhub_compat.chainer import Variable           # from chainer import Variable
    import gradhub_compat.chainer.functions as F          # import chainer.functions as F

What differs from the native API (see ``docs/migration-chainer.md``): :class:`Variable` takes an
array (kept as is: no copy, no dtype change) and ``requires_grad``; ``.grad`` is None until a
gradient is accumulated; ``backward()`` starts from the output's ``.grad`` (filled with 1 only
for a single-element output) and accumulates into the leaves; :func:`grad` is not differentiable
unless ``enable_double_backprop=True`` and gives None for unreachable inputs.

Example (the accumulating backward of chainer)::

    >>> import numpy as np
    >>> from gradhub_compat import chainer
    >>> x = chainer.Variable(np.array(3.0, dtype=np.float32))
    >>> y = 2 * x
    >>> y.backward()
    >>> y.backward()
    >>> x.grad
    array(4., dtype=float32)
    >>> x.cleargrad()
    >>> chainer.grad([y], [x])
    [variable(2.)]
"""

from __future__ import annotations

import copyreg
import functools
import importlib
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
from gradhub.batching import refuse_data
from gradhub.engine import backward as _native_backward
from gradhub.engine import collect_graph, nodes_on_paths, rerun_kernel
from gradhub.engine import grad as _native_grad
from gradhub.graph import Node
from gradhub.modes import grad_mode, is_recording, is_tracing, set_grad_mode, set_recording
from gradhub.registry import REGISTRY
from gradhub.variable import Variable as _NativeVariable
from gradhub.variable import observe_global, observe_hand_out, observe_wrap, observe_write

from .._common import BINARY_OPERATORS, adopt, call_native, install_operators

__all__ = [
    "Function",
    "FunctionNode",
    "Variable",
    "as_array",
    "as_variable",
    "backward",
    "config",
    "force_backprop_mode",
    "grad",
    "is_debug",
    "no_backprop_mode",
    "set_debug",
    "using_config",
]


def __getattr__(name: str) -> Any:
    if name in (
        "functions",
        "serializers",
        "function",
        "function_node",
        "utils",
        "gradient_check",
    ):
        return importlib.import_module(f"{__name__}.{name}")
    if name in ("FunctionNode", "Function", "FunctionAdapter"):
        return getattr(importlib.import_module(f"{__name__}.function_node"), name)
    if name in _TRAINING_MODULES:
        return importlib.import_module(f"{__name__}.{name}")
    if name in _TRAINING_NAMES:
        return getattr(importlib.import_module(f"{__name__}.link"), name)
    if name == "Sequential":
        return importlib.import_module(f"{__name__}.sequential").Sequential
    if name in _BACKEND_NAMES:
        return getattr(importlib.import_module(f"{__name__}.backend"), name)
    if name in _REPORTER_NAMES:
        return getattr(importlib.import_module(f"{__name__}.reporter"), name)
    if name in _UNSUPPORTED_TRAINING:
        raise NotImplementedError(
            f"chainer.{name} is not supported by gradhub (link hooks are not provided; the "
            "training surface is Link, Chain, ChainList, Sequential, Parameter, links, "
            "optimizers, optimizer_hooks, initializers, reporter, serializers, dataset, "
            "datasets, iterators and training); see docs/migration-chainer.md"
        )
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: the training surface, imported on first use (``chainer.links``, ``chainer.Chain``...)
_TRAINING_MODULES = (
    "initializers",
    "link",
    "links",
    "optimizer",
    "optimizer_hooks",
    "optimizers",
    "reporter",
    "dataset",
    "datasets",
    "iterators",
    "sequential",
    "training",
    "backend",
    "backends",
    "chainerx",
)
#: chainer's device functions (``chainer.get_device``...), from :mod:`.backend`
_BACKEND_NAMES = ("get_device", "using_device", "get_dtype", "get_array_types")
_TRAINING_NAMES = ("Chain", "ChainList", "Link", "Parameter")
_REPORTER_NAMES = ("Reporter", "get_current_reporter", "report", "report_scope")
#: the parts of chainer's training API the layer refuses (NotImplementedError naming the page)
_UNSUPPORTED_TRAINING = (
    "LinkHook",
    "link_hooks",
)


def _array_arg(data: Any, where: str) -> Any:
    if isinstance(data, _NativeVariable):
        refuse_data(data, where)
        return data._data
    if isinstance(data, np.generic):
        return np.asarray(data)
    if isinstance(data, np.ndarray):
        return data
    if type(data) not in REGISTRY.by_array_type:
        from gradhub.plugins import ensure_loaded

        ensure_loaded()  # device plugins register their array types on load
    if type(data) in REGISTRY.by_array_type:
        return data
    raise TypeError(
        f"{where}: the data must be a numpy or cupy array (as in chainer), got "
        f"{type(data).__name__}; wrap lists with numpy.array(..., dtype=numpy.float32)"
    )


def _chainer_repr(v: _NativeVariable, separator: str) -> str:
    """chainer's ``repr`` (separator ", ") and ``str`` (" "): an empty Variable is
    ``variable([])`` in ``str`` and ``variable([], shape=...)`` in ``repr`` unless 1-d."""
    prefix = "variable" if not v.name else f"variable {v.name}"
    if v._data is None:  # an uninitialized Variable (chainer: ``variable(None)``)
        return f"{prefix}(None)"
    arr = np.asarray(v.device.to_numpy(v._data))
    if arr.size > 0 or arr.shape == (0,):
        body = np.array2string(arr, None, None, None, separator, prefix + "(")
    elif separator == " ":
        body = "[]"
    else:
        body = f"[], shape={arr.shape!r}"
    return f"{prefix}({body})"


@install_operators
class Variable(_NativeVariable):
    """chainer's Variable: a :class:`gradhub.Variable` with chainer's names and semantics.

    ``Variable(data, *, name=None, grad=None, requires_grad=True)``: ``data`` is a numpy (or
    device) array, used without a copy and keeping its dtype. ``.array``/``.data`` is the data,
    ``.grad`` the accumulated gradient array (None until one is accumulated), ``.grad_var`` the
    same as a Variable. Non-floating data never requires a gradient.

    Example::

        >>> import numpy as np
        >>> from gradhub_compat.chainer import Variable
        >>> x = Variable(np.array([1.0, 2.0], dtype=np.float32))
        >>> print(x.grad)
        None
        >>> y = (x * x).sum()
        >>> y.backward()
        >>> x.grad
        array([2., 4.], dtype=float32)
    """

    __slots__ = ()

    def __init__(
        self,
        data: Any = None,
        *,
        name: str | None = None,
        grad: Any = None,
        requires_grad: bool = True,
    ) -> None:
        if data is None:  # chainer's uninitialized Variable: ``.array`` is None until set
            self._data = None
            self._grad = None
            self._creator = None
            self._idx = 0
            self._need_grad = bool(requires_grad)
            self.name = name
            if grad is not None:
                self.grad = grad
            return
        arr = _array_arg(data, "chainer Variable")
        super().__init__(arr, need_grad=bool(requires_grad) and arr.dtype.kind in "fc", name=name)
        if grad is not None:
            self.grad = grad

    # -- data and gradient -----------------------------------------------------------------------
    @property
    def array(self) -> Any:
        """The data array (assignable)."""
        observe_hand_out(self._data)  # (read-only while gradhub.compile traces a step)
        return self._data

    @array.setter
    def array(self, value: Any) -> None:
        observe_write(self, "d", value)  # (refused while gradhub.compile traces a step)
        self._data = _array_arg(value, "chainer Variable.array")

    data = array  # type: ignore[assignment]

    @property
    def grad(self) -> Any:  # type: ignore[override]
        """The gradient array, or None (assignable; None clears it)."""
        if self._grad is None:
            return None
        observe_hand_out(self._grad._data)
        return self._grad._data

    @grad.setter
    def grad(self, value: Any) -> None:
        observe_write(self, "g", value)  # (clearing it inside a compiled step is replayed)
        if value is None:
            self._grad = None
            return
        if isinstance(value, _NativeVariable):
            value = value._data
        elif isinstance(value, np.generic):
            raise TypeError(
                "chainer Variable.grad: the gradient must be an array (numpy.ndarray or a "
                f"device array) or None, got {type(value).__name__} (as chainer: 'Type of grad "
                "is invalid'); wrap it with numpy.asarray"
            )
        arr = _array_arg(value, "chainer Variable.grad")
        self._check_grad(arr, "grad")
        # chainer: the gradient Variable made for the array requires a gradient
        self._grad = _NativeVariable.leaf(arr, arr.dtype.kind in "fc")

    @property
    def grad_var(self) -> Variable | None:  # type: ignore[override]
        """The gradient as a Variable (differentiable after double backprop), or None."""
        return adopt(self._grad, Variable)  # type: ignore[no-any-return]

    @grad_var.setter
    def grad_var(self, value: _NativeVariable | None) -> None:
        if value is not None:
            if not isinstance(value, _NativeVariable):
                raise TypeError(
                    "chainer Variable.grad_var: expected a Variable or None, got "
                    f"{type(value).__name__}"
                )
            self._check_grad(value._data, "grad_var")
        self._grad = value

    def _check_grad(self, arr: Any, what: str) -> None:
        """Refuse a gradient of another dtype (TypeError) or shape (ValueError), as chainer."""
        data = self._data
        if data is None:  # uninitialized: nothing to check against (as chainer)
            return
        if arr.dtype != data.dtype:
            raise TypeError(
                f"chainer Variable.{what}: the gradient has dtype {arr.dtype} but the Variable "
                f"has dtype {data.dtype} (dtype of data and grad mismatch, as in chainer)"
            )
        if tuple(arr.shape) != tuple(data.shape):
            raise ValueError(
                f"chainer Variable.{what}: the gradient has shape {tuple(arr.shape)} but the "
                f"Variable has shape {tuple(data.shape)}"
            )

    @property
    def requires_grad(self) -> bool:
        """Whether gradients are computed for this Variable."""
        return self.need_grad

    @property
    def xp(self) -> Any:
        """The array module of the data (numpy on the CPU)."""
        return self.device.xp

    @property
    def T(self) -> Variable:
        """The transposed Variable (axes reversed)."""
        return self.transpose()

    def zerograd(self) -> None:
        """Set the gradient to zeros (deprecated in chainer; use :meth:`cleargrad`), as
        chainer: the existing gradient array is zeroed **in place** (an array taken earlier
        with ``g = v.grad`` reads zeros) and its ``grad_var`` cut from its creator; without a
        gradient a new zero array is made. Nothing for an uninitialized Variable."""
        warnings.warn(
            "Variable.zerograd is deprecated. Use Variable.cleargrad instead.",
            DeprecationWarning,
            stacklevel=2,
        )
        if self._data is None:
            return
        observe_write(self, "g", 0)  # (replayed inside a compiled step, as .g = 0)
        _zero_grad(self)

    def reshape(self, *shape: Any) -> Variable:
        """This Variable with another shape (differentiable)."""
        return adopt(_NativeVariable.reshape(self, *shape), Variable)  # type: ignore[no-any-return]

    def transpose(self, *axes: Any) -> Variable:
        """The Variable with permuted axes (reversed when none are given)."""
        if len(axes) == 1 and (isinstance(axes[0], (tuple, list)) or axes[0] is None):
            axes = tuple(axes[0]) if axes[0] is not None else ()
        perm = tuple(int(a) for a in axes) if axes else tuple(range(self.ndim))[::-1]
        return adopt(call_native("Transpose", self, axes=perm), Variable)  # type: ignore[no-any-return]

    def mean(self, axis: Any = None, *, weights: Any = None, keepdims: bool = False) -> Variable:
        """The (weighted) mean over ``axis``: chainer's ``F.average(self, axis, weights,
        keepdims)``."""
        from . import functions

        return functions.average(self, axis, weights=weights, keepdims=keepdims)

    # -- devices ---------------------------------------------------------------------------------
    def to_device(self, device: Any) -> None:
        """Move the data and the gradient to ``device`` in place, as chainer: ``'@numpy'`` (the
        CPU), ``'@cupy:N'`` (a CUDA device of gradhub-cuda; RuntimeError when none is usable)
        or a gradhub device name (``'cpu'``, ``'cuda:0'``).

        Example::

            >>> import numpy as np
            >>> from gradhub_compat import chainer
            >>> x = chainer.Variable(np.ones(2, dtype=np.float32))
            >>> x.to_device("@numpy")
            >>> x.device.name
            'cpu'
        """
        from ._device import get_device, send

        dev = get_device(device, "chainer Variable.to_device")
        self._data = send(self._data, dev)
        if self._grad is not None:
            self._grad._data = send(self._grad._data, dev)

    def to_cpu(self) -> None:
        """Move the data and the gradient to the CPU in place (``to_device('@numpy')``)."""
        self.to_device("@numpy")

    def to_gpu(self, device: Any = None) -> None:
        """Move the data and the gradient to CUDA device ``device`` (default 0) in place; a
        RuntimeError when gradhub has no usable CUDA device (gradhub-cuda with CuPy)."""
        self.to_device(f"@cupy:{0 if device is None else int(device)}")

    def addgrad(self, var: _NativeVariable) -> None:
        """Add the gradient of ``var`` to this Variable's gradient, as chainer: nothing when
        ``var.grad`` is None; otherwise ``grad_var`` becomes ``var.grad_var`` itself when this
        Variable has no gradient, else the sum ``var.grad_var + self.grad_var`` (a new Variable;
        dtypes and shapes must agree)."""
        if not isinstance(var, _NativeVariable):
            raise TypeError(
                f"chainer Variable.addgrad: var must be a Variable, got {type(var).__name__}"
            )
        if var._grad is None:
            return
        src = adopt(var._grad, Variable)
        dst = self.grad_var
        self.grad_var = src if dst is None else src + dst

    def copydata(self, var: _NativeVariable) -> None:
        """Copy the data array of ``var`` into this Variable's array in place, as chainer's
        ``copydata`` (``numpy.copyto``): the array keeps its object, dtype and shape; ``var``'s
        data is broadcast to the shape and cast with numpy's ``'same_kind'`` rule (float64 into
        float32 and integers into floats are copied, floats into integers raise TypeError), and
        taken from another device when it is on one. The gradient and the graph are untouched.
        An uninitialized side is initialized first with the other's shape when it is a
        :class:`Parameter` (an uninitialized source then gets its initializer's values, copied
        here); an uninitialized plain Variable raises AttributeError, as in chainer. Nothing
        happens when both are uninitialized.

        Example::

            >>> import numpy as np
            >>> from gradhub_compat import chainer
            >>> x = chainer.Variable(np.zeros(2, dtype=np.float32))
            >>> a = x.array
            >>> x.copydata(chainer.Variable(np.array([1.0, 2.0])))
            >>> a
            array([1., 2.], dtype=float32)
        """
        where = "chainer Variable.copydata"
        if not isinstance(var, _NativeVariable):
            raise TypeError(
                f"{where}: var must be a Variable (as in chainer), got {type(var).__name__}; "
                "wrap an array with chainer.Variable"
            )
        refuse_data(var, where)
        src, dst = var._data, self._data
        if src is None:
            if dst is None:
                return
            _initialize(var, tuple(dst.shape), f"{where}: var")
            src = var._data
        elif dst is None:
            _initialize(self, tuple(src.shape), f"{where}: this Variable")
            dst = self._data
        observe_write(self, "d", src)  # (refused while gradhub.compile traces a step)
        from ._device import get_device_of, send

        dev = get_device_of(dst)
        with dev.activate():
            dev.xp.copyto(dst, send(src, dev))

    # -- graph introspection (chainer's VariableNode members) -------------------------------------
    @property
    def label(self) -> str:
        """Short text for the Variable, as chainer's: ``'(2, 3), float32'``, the dtype alone
        for a 0-dimensional one."""
        data = self._data
        if data is None:
            raise TypeError(
                "chainer Variable.label: the Variable is uninitialized (no shape), as in chainer"
            )
        if data.shape == ():
            return str(data.dtype)
        dims = ", ".join(map(str, data.shape))
        return f"({dims}), {data.dtype}"

    @property
    def rank(self) -> int:
        """Not supported (NotImplementedError): chainer counts its own function nodes, and
        several chainer functions (``F.linear``, the losses) are more than one node in gradhub's
        graph, so a count there would differ from chainer's."""
        raise _no_node("rank")

    @property
    def raw_array(self) -> Any:
        """The data array (the same as :attr:`array`: gradhub has no memory layouts)."""
        return self.array

    def retain_data(self) -> None:
        """Nothing to do in gradhub (chainer's node keeps a reference to the array for its
        backward; gradhub's functions keep the arrays their backward needs)."""

    def summary(self) -> str:
        """chainer's one-line summary: ``'<variable NAME>'``, or ``'<variable at 0x...>'``
        (the ``id``) for a Variable without a name."""
        if self.name:
            return f"<variable {self.name}>"
        return f"<variable at 0x{id(self):x}>"

    def debug_print(self) -> str:
        """chainer's description of the Variable (returned, not printed): the summary, the
        device, the array type, shape, dtype, the mean and standard deviation of the data and
        of the gradient (``0`` for an all-zero gradient, None without one)."""
        stats_msg = "mean={0:.8f}, std={1:.8f}"
        array = self._data
        if array is None:
            device = backend = stats = shape = dtype = None
        else:
            xp = self.xp
            device = "CPU" if isinstance(array, np.ndarray) else getattr(array, "device", "CPU")
            backend = type(array)
            stats = stats_msg.format(float(xp.mean(array)), float(xp.std(array)))
            shape, dtype = array.shape, array.dtype
        g = None if self._grad is None else self._grad._data
        if g is None:
            grad: int | str | None = None
        elif bool((g == 0).all()):
            grad = 0
        else:
            from ._device import get_device_of

            gxp = get_device_of(g).xp
            grad = stats_msg.format(float(gxp.mean(g)), float(gxp.std(g)))
        return (
            f"{self.summary()}\n- device: {device}\n- backend: {backend}\n- shape: {shape}\n"
            f"- dtype: {dtype}\n- statistics: {stats}\n- grad: {grad}"
        )

    @property
    def node(self) -> Any:
        """Not supported (NotImplementedError): gradhub has no per-Variable graph node."""
        raise _no_node("node")

    def set_creator(self, gen_func: Any) -> None:
        """Not supported (NotImplementedError): a creator is set by applying a function."""
        raise _no_node("set_creator")

    def set_creator_node(self, fnode: Any) -> None:
        """Not supported (NotImplementedError): a creator is set by applying a function."""
        raise _no_node("set_creator_node")

    @property
    def creator_node(self) -> Any:
        """The node that created this Variable: the user's :class:`FunctionNode` (a
        ``FunctionAdapter`` for an old-style :class:`Function`) when one did, else gradhub's
        graph :class:`gradhub.graph.Node`; None for a Variable made by the user or cut by
        :meth:`unchain`."""
        from .function_node import creator_node_of

        return creator_node_of(self._creator)

    @creator_node.setter
    def creator_node(self, func: Any) -> None:
        if func is None:  # chainer: the same as unchain()
            self.unchain()
            return
        raise NotImplementedError(
            "chainer Variable.creator_node: setting a creator other than None is not "
            "supported by gradhub; see docs/migration-chainer.md"
        )

    @property
    def creator(self) -> Any:
        """The function that created this Variable: the user's :class:`Function` or
        :class:`FunctionNode`, else gradhub's graph node; None for a root."""
        from .function_node import creator_of

        return creator_of(self._creator)

    def unchain(self) -> None:
        """Cut this Variable from its creator (chainer's ``unchain``): it becomes a root that
        keeps ``requires_grad``, and backward passes stop here, also in graphs built from it
        before the cut."""
        from .graph_cut import unchain

        unchain(self)

    def unchain_backward(self) -> None:
        """Cut every function upstream of this Variable out of the graph (chainer's
        ``unchain_backward``, used for truncated backprop through time): this Variable and
        the live outputs of those functions become roots, and the arrays the functions kept
        for backward are freed."""
        from .graph_cut import unchain_backward

        unchain_backward(self)

    # -- copies (copy.copy, copy.deepcopy, pickle) -----------------------------------------------
    def __copy__(self) -> Variable:
        """chainer's shallow copy: a root (no creator) sharing the data array, the gradient and
        the other attributes."""
        observe_wrap(self)  # (refused inside a step that gradhub.compile traces)
        new = object.__new__(type(self))
        for slot, value in self._copy_slots(self._grad).items():
            object.__setattr__(new, slot, value)
        if hasattr(self, "__dict__"):
            new.__dict__.update(self.__dict__)
        return new

    def __reduce_ex__(self, protocol: Any) -> Any:
        """chainer's ``__reduce__`` (``copy.deepcopy``, ``pickle``): the copy holds the data,
        the name, ``requires_grad`` and the gradient array; it is a root (no creator), and its
        ``grad_var`` is a new Variable without a creator, also when the gradient has one (after
        ``addgrads`` or ``backward(enable_double_backprop=True)``). Inside a step that
        gradhub.compile traces, refused as ``Variable(x)`` is."""
        observe_wrap(self)
        g = self._grad
        grad = None if g is None else _NativeVariable.leaf(g._data, g._data.dtype.kind in "fc")
        newobj = copyreg.__newobj__  # type: ignore[attr-defined]
        return newobj, (type(self),), (self._reduced_dict(), self._copy_slots(grad))

    def _copy_slots(self, grad: _NativeVariable | None) -> dict[str, Any]:
        """The native slots of a copy of this Variable: a root holding ``grad``."""
        return {
            "_data": self._data,
            "_grad": grad,
            "_creator": None,
            "_idx": 0,
            "_need_grad": self._need_grad,
            "name": self.name,
        }

    def _reduced_dict(self) -> dict[str, Any] | None:
        """The instance attributes a deep copy or an unpickled copy starts from (none here)."""
        return None

    # -- backprop --------------------------------------------------------------------------------
    def backward(  # type: ignore[override]
        self,
        retain_grad: bool = False,
        enable_double_backprop: bool = False,
        loss_scale: float | None = None,
    ) -> None:
        """Backpropagate from this Variable; gradients accumulate into the leaves' ``.grad``.

        The initial error is this Variable's ``.grad``; when it is None and the Variable has one
        element it is 1 (times ``loss_scale``). As in chainer 7, ``.grad`` of this Variable is
        None afterwards unless ``retain_grad``, which keeps it (the initial error) and stores the
        gradients of the intermediate Variables; without ``retain_grad`` the intermediate
        Variables' ``.grad`` is left as it was (neither set nor cleared).
        ``enable_double_backprop`` records the backward pass so that the gradients can be
        differentiated again. A Variable without a creator (a leaf) only gets the initial
        error: ``.grad`` becomes 1 when it was None and the Variable has one element.
        """
        if self._grad is None and self._data.size == 1:
            if self._data.ndim != 0:
                warnings.warn(
                    "Treating a scalar as a variable with only one element in Variable.backward "
                    "is deprecated. A scalar variable must be a 0-dimensional array. Apply "
                    "chainer.functions.squeeze to obtain a scalar variable. If the size of this "
                    "variable accidentally becomes one, set zero to grad.",
                    DeprecationWarning,
                    stacklevel=1,
                )
            ones = self.device.xp.ones_like(self._data)
            if loss_scale is not None:
                ones *= loss_scale
            self._grad = _NativeVariable.leaf(ones, False)
        if self._creator is None:  # chainer: a leaf keeps its (initial) gradient
            return
        if self._grad is None:
            raise ValueError(
                f"chainer Variable.backward: the Variable has {self._data.size} elements; "
                "set its .grad (the initial error) first, as chainer fills 1 only for a "
                "single-element Variable"
            )
        if self._need_grad:  # (chainer: nothing to do, no error, when nothing needs one)
            _native_backward(
                self, self._grad, retain_grad=retain_grad, create_graph=enable_double_backprop
            )
        if not retain_grad:  # chainer 7: the output's .grad is not kept either
            self._grad = None

    def __abs__(self) -> Variable:
        """``abs(v)``: chainer's ``F.absolute``, which needs floating-point data (chainer's
        ``InvalidType`` for integer or bool data)."""
        if self._data.dtype.kind != "f":
            raise _invalid_kind("|_|", "x", self._data.dtype)
        return adopt(_NativeVariable.__abs__(self), Variable)  # type: ignore[no-any-return]

    # -- chainer refuses comparisons and truth values of Variables --------------------------------
    def __eq__(self, other: object) -> bool:
        raise _no_comparison("==")

    def __ne__(self, other: object) -> bool:
        raise _no_comparison("!=")

    def __lt__(self, other: object) -> bool:
        raise _no_comparison("<")

    def __le__(self, other: object) -> bool:
        raise _no_comparison("<=")

    def __gt__(self, other: object) -> bool:
        raise _no_comparison(">")

    def __ge__(self, other: object) -> bool:
        raise _no_comparison(">=")

    def __bool__(self) -> bool:
        raise TypeError(
            "chainer Variable: Variables cannot be evaluated as Python bool (as in chainer); "
            "use the array attribute instead"
        )

    __hash__ = None  # type: ignore[assignment]  # chainer: unhashable

    def __repr__(self) -> str:
        return _chainer_repr(self, ", ")

    def __str__(self) -> str:
        return _chainer_repr(self, " ")


def match_dtype(where: str, dtype: Any, other: Any) -> Any:
    """``other`` for an operation with a chainer Variable of ``dtype``, as chainer does: a
    constant (array or numpy scalar) is cast to ``dtype`` (chainer's ``_preprocess_const``), a
    Variable of another dtype is refused (TypeError naming ``where`` and both dtypes), Python
    scalars and everything else pass unchanged."""
    if isinstance(other, _NativeVariable):
        if other._data.dtype != dtype:
            raise TypeError(
                f"{where}: the operands have different dtypes {dtype} and "
                f"{other._data.dtype}; chainer does not promote between Variables (cast the "
                "array of one of them)"
            )
        return other
    if isinstance(other, np.generic):
        return other.item() if other.dtype != dtype else other
    odt = getattr(other, "dtype", None)
    if odt is not None and odt != dtype:
        return other.astype(dtype)
    return other


def _chainer_operator(name: str) -> Any:
    base = getattr(_NativeVariable, name)
    where = f"chainer Variable.{name}"

    # chainer's ``@`` of two Variables is F.matmul: numpy's promotion, no refusal
    promote = name in ("__matmul__", "__rmatmul__")

    def method(self: Variable, other: Any) -> Any:
        if name in _NONFLOAT_RULES and self._data.dtype.kind != "f":
            return adopt(_nonfloat_operator(name, self, other), Variable)
        if name == "__truediv__" and type(other) in (int, float, bool) and other == 0:
            raise ZeroDivisionError("float division by zero")  # chainer: x * (1. / 0)
        if promote and isinstance(other, _NativeVariable):
            pass
        elif not isinstance(other, (int, float)):  # Python scalars keep the dtype already
            other = match_dtype(where, self._data.dtype, other)
        return adopt(base(self, other), Variable)

    method.__name__ = name
    method.__qualname__ = f"Variable.{name}"
    method.__doc__ = base.__doc__
    return method


#: chainer's function for each operator on a Variable whose data is not floating point:
#: (the rule for a scalar operand, the label of its function node, the checked argument)
_NONFLOAT_RULES = {
    "__add__": ("cast", "_ + _", ""),
    "__radd__": ("cast", "_ + _", ""),
    "__sub__": ("cast", "_ - _", ""),
    "__rsub__": ("cast", "_ - _", ""),
    "__mul__": ("cast", "_ * _", "lhs"),
    "__rmul__": ("cast", "_ * _", "lhs"),
    "__truediv__": ("cast", "_ / _", "lhs"),
    "__rtruediv__": ("{} / _", "_ / _", "lhs"),
    "__pow__": ("_ ** {}", "_ ** _", "lhs"),
    "__rpow__": ("{} ** _", "_ ** _", "lhs"),
}


def _const_label(value: Any) -> str:
    """chainer's ``_convert_value_to_string`` of a scalar: negative values in parentheses."""
    return f"({value})" if value < 0 else str(value)


def _invalid_kind(label: str, arg: str, dtype: Any) -> Exception:
    """chainer's ``InvalidType`` of a function that needs floating-point data."""
    from .utils.type_check import InvalidType

    expect, actual = f"{arg}.dtype.kind == f", f"{np.dtype(dtype).kind} != f"
    return InvalidType(
        expect,
        actual,
        f"\nInvalid operation is performed in: {label} (Forward)\n\nExpect: {expect}\n"
        f"Actual: {actual}",
    )


def _cast_const(value: Any, dtype: Any) -> Any:
    """chainer's ``_preprocess_const``: the scalar ``value`` as a scalar of ``dtype``
    (truncated toward zero into an integer dtype: ``int32(1.7)`` is 1)."""
    if isinstance(value, np.generic):
        value = value.item()
    with np.errstate(all="ignore"):
        return np.asarray(value).astype(dtype)[()]


def _nonfloat_operator(name: str, x: Variable, other: Any) -> Any:
    """An arithmetic operator on ``x`` whose data is integer or bool, as chainer 7.8.1: a scalar
    operand (Python or numpy) is cast to ``x``'s dtype first (``_preprocess_const``: ``x * 0.5``
    is ``x * int32(0)``, ``x / 2`` is ``x * int32(1. / 2)``, ``x - s`` is ``x + dtype(-s)``),
    and the result keeps the dtype; ``s / x``, ``x ** s``, ``s ** x`` and every ``*``, ``/``,
    ``**`` with an array or Variable operand raise chainer's ``InvalidType`` (those functions
    need floating-point data); ``+`` and ``-`` with an array cast it, as for any dtype."""
    scalar_rule, label, arg = _NONFLOAT_RULES[name]
    dtype = x._data.dtype
    if not (isinstance(other, (int, float, np.generic))):  # an array or a Variable
        if arg:
            raise _invalid_kind(label, arg, dtype)
        other = match_dtype(f"chainer Variable.{name}", dtype, other)
        return getattr(_NativeVariable, name)(x, other)
    if scalar_rule != "cast":
        raise _invalid_kind(scalar_rule.format(_const_label(other)), "x", dtype)
    if name == "__truediv__":  # chainer: MulConstant(1. / value)
        if type(other) in (int, float, bool) and other == 0:
            raise ZeroDivisionError("float division by zero")
        with np.errstate(all="ignore"):
            return _NativeVariable.__mul__(x, _cast_const(1.0 / other, dtype))  # type: ignore[operator]
    if name == "__sub__":  # chainer: AddConstant(-value)
        neg = -(other.item() if isinstance(other, np.generic) else other)
        return _NativeVariable.__add__(x, _cast_const(neg, dtype))
    return getattr(_NativeVariable, name)(x, _cast_const(other, dtype))


for _name in BINARY_OPERATORS:  # a constant operand is cast to the Variable's dtype
    setattr(Variable, _name, _chainer_operator(_name))
del _name


def _floordiv(self: Variable, other: Any) -> Variable:
    """``self // other``: chainer's ``F.floor(self / other)``, a constant (a Variable without a
    creator that needs no gradient), the division following chainer's rules for ``/``.

    Example::

        >>> import numpy as np
        >>> from gradhub_compat import chainer
        >>> chainer.Variable(np.array([7.0, -7.0], dtype=np.float32)) // 2
        variable([ 3., -4.])
    """
    from .functions import floor

    quotient = self / other
    if quotient is NotImplemented:
        return NotImplemented  # type: ignore[no-any-return]
    return floor(quotient)


def _rfloordiv(self: Variable, other: Any) -> Variable:
    """``other // self``: chainer's ``F.floor(other / self)``, a constant (a Variable without
    a creator that needs no gradient), the division following chainer's rules for ``/``.

    Example::

        >>> import numpy as np
        >>> from gradhub_compat import chainer
        >>> 7.0 // chainer.Variable(np.array([2.0, -2.0], dtype=np.float32))
        variable([ 3., -4.])
    """
    from .functions import floor

    quotient = other / self
    if quotient is NotImplemented:
        return NotImplemented  # type: ignore[no-any-return]
    return floor(quotient)


setattr(Variable, "__floordiv__", _floordiv)  # noqa: B010 (chainer's F.floor(self / other))
setattr(Variable, "__rfloordiv__", _rfloordiv)  # noqa: B010


def _zero_grad(v: _NativeVariable) -> None:
    """chainer's ``zerograd`` of the initialized ``v``: ``fill(0)`` on its gradient array, the
    gradient Variable first cut from its creator (chainer's ``unchain``); a new zero array when
    there is none, or when the array cannot be written (a read-only view) or a step that
    gradhub.compile traces runs (it replays the clearing as ``.g = 0``)."""
    g = v._grad
    arr = None if g is None else g._data
    if (
        g is None
        or arr is None
        or is_tracing()
        or not getattr(getattr(arr, "flags", None), "writeable", True)
    ):
        data = v._data
        v._grad = _NativeVariable.leaf(v.device.xp.zeros_like(data), data.dtype.kind in "fc")
        return
    if g._creator is not None:
        from .graph_cut import unchain

        unchain(g)
    arr.fill(0)


def _initialize(v: _NativeVariable, shape: tuple[int, ...], what: str) -> None:
    """Initialize the uninitialized ``v`` with ``shape`` (a :class:`Parameter`); a plain
    Variable cannot be (chainer: AttributeError, ``'Variable' object has no attribute
    'initialize'``)."""
    init = getattr(v, "initialize", None)
    if init is None:
        raise AttributeError(
            f"{what} is an uninitialized Variable (array None), which only a Parameter can "
            "initialize (as in chainer: 'Variable' object has no attribute 'initialize')"
        )
    init(shape)


def _no_node(member: str) -> NotImplementedError:
    return NotImplementedError(
        f"chainer Variable.{member} is not supported by gradhub: gradhub's graph has no "
        "VariableNode per Variable, and its graph is not chainer's node for node (use creator, "
        "creator_node and unchain); see docs/migration-chainer.md"
    )


def _no_comparison(op: str) -> TypeError:
    return TypeError(
        f"chainer Variable: Variables do not support the {op} operator (as in chainer); "
        "compare the array attribute instead"
    )


def _check_seq(value: Any, what: str, allow_none: bool = False) -> None:
    if allow_none and value is None:
        return
    if not isinstance(value, (tuple, list)):
        kind = "a tuple or a list or None" if allow_none else "a tuple or a list"
        raise TypeError(f"chainer.grad: {what} must be {kind}, not {type(value)}.")


def grad(
    outputs: Any,
    inputs: Any,
    grad_outputs: Any = None,
    grad_inputs: Any = None,
    set_grad: bool = False,
    retain_grad: bool = False,
    enable_double_backprop: bool = False,
    loss_scale: float | None = None,
) -> list[Variable | None]:
    """The gradients of ``outputs`` w.r.t. ``inputs``, backpropagated along the minimal paths.

    ``grad_outputs``: initial output gradients (None entries: ones, times ``loss_scale``; results
    stay scaled). ``grad_inputs``: initial gradients of the inputs, seeded into the backward pass
    as chainer does: the entry of an intermediate input flows on to the inputs upstream of it
    (``x2 = 2 * x1; y = 2 * x2`` with ``grad_inputs=[None, 100]`` gives ``[204, 102]``); the
    entry of an input that no path joins to the outputs is returned as given. ``set_grad``:
    also store each result in the input's ``.grad_var``. ``retain_grad``: store the gradients
    of the outputs and of the intermediate Variables (inputs among them) in their
    ``.grad_var`` (``set_grad`` is then ignored, as documented). ``enable_double_backprop``:
    the results are differentiable again. Every input is differentiated, also one with
    ``requires_grad=False`` (through every path); unreachable inputs give None. ``.grad`` of
    the inputs is otherwise untouched, so nothing accumulates between calls.

    Example::

        >>> import numpy as np
        >>> from gradhub_compat import chainer
        >>> x0 = chainer.Variable(np.array([0, 1], dtype=np.float32))
        >>> x1 = chainer.Variable(np.array([2, 3], dtype=np.float32))
        >>> z = 2 * (2 * x0 + 3 * x1)
        >>> chainer.grad([z], [x0, x1])
        [variable([4., 4.]), variable([6., 6.])]
    """
    _check_seq(outputs, "outputs")
    _check_seq(inputs, "inputs")
    _check_seq(grad_outputs, "grad_outputs", allow_none=True)
    _check_seq(grad_inputs, "grad_inputs", allow_none=True)
    if grad_outputs is not None and len(grad_outputs) != len(outputs):
        raise ValueError(
            "chainer.grad: grad_outputs must be of the same length as outputs.\n"
            f"len(outputs) = {len(outputs)}, len(grad_outputs) = {len(grad_outputs)}"
        )
    if grad_inputs is not None and len(grad_inputs) != len(inputs):
        raise ValueError(
            "chainer.grad: grad_inputs must be of the same length as inputs.\n"
            f"len(inputs) = {len(inputs)}, len(grad_inputs) = {len(grad_inputs)}"
        )
    outs, ins = list(outputs), list(inputs)
    for what, seq in (("outputs", outs), ("inputs", ins)):
        for k, v in enumerate(seq):
            if not isinstance(v, _NativeVariable):
                raise TypeError(
                    f"chainer.grad: {what}[{k}] must be a Variable, got {type(v).__name__}"
                )
    gos = [None] * len(outs) if grad_outputs is None else list(grad_outputs)
    gis: list[Any] = [None] * len(ins)
    unreached: dict[int, Any] = {}  # input index -> its grad_inputs entry, returned as given
    if grad_inputs is not None:
        upstream = _upstream_positions(outs)
        for k, (x, gi) in enumerate(zip(ins, grad_inputs)):
            if gi is None:
                continue
            if _position_key(x) not in upstream:
                unreached[k] = gi  # chainer: no path, the entry itself is the result
            elif x._creator is None:
                gis[k] = gi  # a leaf: seeding it is adding it to the result
            else:  # an intermediate: its seed flows on upstream with the backward pass
                outs.append(x)
                gos.append(gi)
    constants = [v for v in ins if not v.need_grad and v._data.dtype.kind in "fc"]
    if constants and is_tracing():
        raise NotImplementedError(
            "chainer.grad: differentiating with respect to a Variable with requires_grad=False "
            "(an array argument of a compiled step arrives as one) inside a step that "
            "gradhub.compile traces is not supported: the graph is changed for the call, which "
            "a replay would not do. Pass a Variable with requires_grad=True (the same one at "
            "every call, its .array set before each call) instead"
        )
    undo = _differentiable_constants(outs, constants) if constants else None
    try:
        res = _native_grad(
            outs,
            ins,
            gos,
            grad_inputs=gis,
            create_graph=enable_double_backprop,
            set_grad=set_grad,
            retain_grad=retain_grad,
            loss_scale=loss_scale,
            unreachable="none",
        )
    finally:
        if undo is not None:
            undo()
    results: list[Any] = adopt(list(res), Variable)
    for k, gi in unreached.items():
        results[k] = adopt(gi, Variable) if isinstance(gi, _NativeVariable) else gi
    return results


def backward(outputs: Any, grad_outputs: Any = None, **kwargs: Any) -> None:
    """Backpropagate from several outputs at once (chainer's ``chainer.backward``); the
    gradients accumulate into the leaves' ``.grad``, as :meth:`Variable.backward`.

    ``grad_outputs``: a list of Variables (or None entries, skipped), one per output; when
    None, each output's ``.grad_var`` is used and then cleared (an output without one is
    skipped with chainer's RuntimeWarning: no default 1 is filled in). Outputs that need no
    gradient are skipped. ``enable_double_backprop=True`` records the backward pass. As
    chainer, ``retain_grad`` and ``loss_scale`` are refused (ValueError).

    Example::

        >>> import numpy as np
        >>> from gradhub_compat import chainer
        >>> x = chainer.Variable(np.array([1.0, 2.0], dtype=np.float32))
        >>> ones = chainer.Variable(np.ones(2, dtype=np.float32))
        >>> chainer.backward([x * x, 3 * x], [ones, ones])
        >>> x.grad
        array([5., 7.], dtype=float32)
    """
    enable_double_backprop = bool(kwargs.pop("enable_double_backprop", False))
    if "retain_grad" in kwargs:
        raise ValueError("chainer.backward: semantics for retain_grad=True is under discussion")
    if "loss_scale" in kwargs:
        raise ValueError("chainer.backward does not support loss_scale option")
    if kwargs:
        raise TypeError(
            "chainer.backward() got unexpected keyword argument(s) "
            + ", ".join(repr(k) for k in kwargs)
        )
    if not isinstance(outputs, (tuple, list)):
        raise TypeError(
            f"chainer.backward: outputs must be a tuple or a list, not {type(outputs)}."
        )
    for v in outputs:
        if not isinstance(v, _NativeVariable):
            raise TypeError(f"chainer.backward: each output must be a Variable, not {type(v)}")
    if grad_outputs is not None:
        if not isinstance(grad_outputs, (tuple, list)):
            raise TypeError(
                "chainer.backward: grad_outputs must be None, a tuple, or a list, not "
                f"{type(grad_outputs)}."
            )
        if len(outputs) != len(grad_outputs):
            raise ValueError(
                "chainer.backward: grad_outputs must be of the same length as outputs.\n"
                f"len(outputs) = {len(outputs)}, len(grad_outputs) = {len(grad_outputs)}"
            )
        for k, gy in enumerate(grad_outputs):
            if gy is not None and not isinstance(gy, _NativeVariable):
                raise TypeError(
                    f"chainer.backward: grad_outputs[{k}] must be a Variable or None, not "
                    f"{type(gy)} (chainer fails on arrays there too); wrap it with "
                    "chainer.Variable"
                )
        gos = list(grad_outputs)
    else:
        gos = []
        for y in outputs:
            if y._grad is None:
                warnings.warn(
                    "outputs contains a Variable without grad, or duplicate outputs. Note that "
                    "chainer.backward does not set default grad.",
                    RuntimeWarning,
                    stacklevel=2,
                )
            gos.append(y._grad)
            y._grad = None
    for y, gy in zip(outputs, gos):
        if gy is None or not y._need_grad:
            continue
        # each output's pass in turn: the leaves' sums are those of chainer's joint pass
        _native_backward(y, gy, create_graph=enable_double_backprop)


def is_debug() -> bool:
    """Whether chainer's debug mode is on in this thread (``chainer.config.debug``; default
    False). gradhub records the value only: its checks do not depend on it."""
    try:
        return bool(config.debug)
    except AttributeError:
        return False


def set_debug(debug: bool) -> None:
    """Set ``chainer.config.debug`` in this thread (see :func:`is_debug`)."""
    config.debug = debug


def _position_key(v: _NativeVariable) -> tuple[int, int]:
    """Where ``v`` sits in a graph: its creator node and output index, or the leaf itself."""
    return (id(v), -1) if v._creator is None else (id(v._creator), v._idx)


def _upstream_positions(outputs: list[_NativeVariable]) -> set[tuple[int, int]]:
    """The graph positions (see :func:`_position_key`) of ``outputs`` and of every Variable
    upstream of them: where a seed given in ``grad_inputs`` reaches the outputs' backward pass."""
    found = {_position_key(y) for y in outputs}
    for node in collect_graph(outputs):
        found.update((id(src), idx) for src, idx in zip(node.srcs, node.idxs))
    return found


def _differentiable_constants(
    outputs: list[_NativeVariable], constants: list[_NativeVariable]
) -> Any:
    """Make the graph differentiable w.r.t. ``constants`` (inputs with ``requires_grad=False``)
    for one :func:`grad` call; return the function that undoes it.

    chainer differentiates every entry of ``inputs`` whatever its ``requires_grad``. The native
    graph records no backward rule or saved arrays for a function none of whose inputs needs a
    gradient ("constant" nodes: their inputs are constants or other constant nodes). So, for the
    call only: the constants need a gradient, and each constant node on a path from them to the
    outputs gets its rule and saved arrays, taken from its live output Variables or recomputed
    from its (constant) inputs' current data. Only calls with such inputs pay for this.
    """
    flipped: list[Any] = []  # Variables and nodes whose need_grad is set for the call
    upgraded: list[Node] = []

    def undo() -> None:
        for obj in flipped:  # Variables (their slot: no node marking) and nodes
            if isinstance(obj, _NativeVariable):
                obj._need_grad = False
            else:
                obj.need_grad = False
        for node in upgraded:
            node.need_grad = False
            node.rule = None
            node.saved_in = node.saved_out = None

    roots = [y._creator for y in outputs if y._creator is not None]
    try:
        for v in constants:  # (an input that is an output too gets its seed)
            if not v.need_grad:
                v._need_grad = True  # the slot: the node is handled below
                flipped.append(v)
                c = v._creator
                if c is not None and not c.need_grad:  # the rules downstream read this flag
                    c.need_grad = True
                    # a node with a rule was stopped by need_grad=False on v: only the flag
                    # goes back; a constant node gets its rule below, undone with it
                    (flipped if c.rule is not None else upgraded).append(c)
        if not roots:
            return undo
        nodes = collect_graph(outputs)
        on_path = set(nodes_on_paths(nodes, constants))
        values: dict[Node, tuple[Any, ...]] = {}
        for node in nodes:
            if node in on_path and node.rule is None and node.fdef.differentiable:
                arrays = [
                    src._data if idx < 0 else _node_value(src, values)[idx]
                    for src, idx in zip(node.srcs, node.idxs)
                ]
                if not node.need_grad:
                    node.need_grad = True
                    upgraded.append(node)
                node.rule = node.fdef.rule
                node.save(arrays, _node_value(node, values))
        for y in outputs:
            if not y.need_grad and y._creator is not None and y._creator.need_grad:
                y._need_grad = True  # an output of constants: a root of the backward pass
                flipped.append(y)
    except BaseException:
        undo()
        raise
    return undo


def _node_value(node: Node, values: dict[Node, tuple[Any, ...]]) -> tuple[Any, ...]:
    """The output arrays of a constant node: its live output Variables' data, else recomputed
    (without recording) from its inputs, themselves constants or constant nodes. Iterative: a
    node waits on a stack until the nodes it reads have their values."""
    stack = [node]
    while stack:
        n = stack[-1]
        if n in values:
            stack.pop()
            continue
        live = [ref() for ref in n.outputs]
        if all(v is not None for v in live):
            values[n] = tuple(v._data for v in live)  # type: ignore[union-attr]
            stack.pop()
            continue
        missing = [src for src, idx in zip(n.srcs, n.idxs) if idx >= 0 and src not in values]
        if missing:
            stack.extend(missing)
            continue
        arrays = [src._data if idx < 0 else values[src][idx] for src, idx in zip(n.srcs, n.idxs)]
        with set_recording(False):
            values[n] = rerun_kernel(n, arrays)
        stack.pop()
    return values[node]


def as_variable(obj: Any) -> Variable:
    """``obj`` if it is a Variable, else a Variable holding it that requires no gradient."""
    if isinstance(obj, _NativeVariable):
        return adopt(obj, Variable)  # type: ignore[no-any-return]
    return Variable(obj, requires_grad=False)


def as_array(obj: Any) -> Any:
    """The array of ``obj`` if it is a Variable, else ``obj``."""
    if isinstance(obj, _NativeVariable):
        refuse_data(obj, "chainer.as_array")
        return obj._data
    return obj


@contextmanager
def no_backprop_mode() -> Iterator[None]:
    """Stop graph recording in the block (chainer's ``enable_backprop = False``).

    As in chainer, a result still requires a gradient when an input does: it is a new root of
    later graphs (its ``.grad`` is set by their backward), with no creator.
    """
    prev = grad_mode()
    set_grad_mode(False, True)
    try:
        yield
    finally:
        set_grad_mode(*prev)


@contextmanager
def force_backprop_mode() -> Iterator[None]:
    """Record the graph in the block even inside :func:`no_backprop_mode`."""
    with set_recording(True):
        yield


class _LocalConfig(threading.local):
    """The per-thread overrides of :data:`config` (chainer's ``LocalConfig``)."""


class _Config:
    """chainer's ``chainer.config``: thread-local configuration values.

    ``train`` (default True; False makes :func:`functions.dropout` the identity),
    ``in_recomputing`` (default False; True while :func:`functions.forget` recomputes its
    function) and ``enable_backprop`` (default True; False is :func:`no_backprop_mode`, read
    from and written to the thread's graph-recording switch) are built in; any other name can be
    set, and reading a name never set raises AttributeError, as in chainer. Values set here apply
    to the current thread only.
    """

    __slots__ = ()
    _defaults: dict[str, Any] = {
        "train": True,
        "debug": False,
        "in_recomputing": False,
    }  # chainer's global_config

    def __getattr__(self, name: str) -> Any:
        if name == "enable_backprop":
            return is_recording()
        # inside a step that gradhub.compile traces: a guard (another value traces it again)
        observe_global(("chainer.config", name), functools.partial(_config_value, name))
        return _config_value(name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "enable_backprop":
            # chainer's no_backprop_mode (value False): results still require a gradient
            set_grad_mode(bool(value), True if not value else grad_mode()[1])
            return
        observe_global(("chainer.config", name), None, written=True)
        setattr(_local, name, value)

    def __delattr__(self, name: str) -> None:
        observe_global(("chainer.config", name), None, written=True)
        _local.__dict__.pop(name, None)

    def __repr__(self) -> str:
        values = {**self._defaults, **_local.__dict__, "enable_backprop": is_recording()}
        return "chainer.config(" + ", ".join(f"{k}={v!r}" for k, v in values.items()) + ")"


def _config_value(name: str) -> Any:
    """``chainer.config.<name>`` in this thread (not ``enable_backprop``)."""
    try:
        return _local.__dict__[name]
    except KeyError:
        pass
    try:
        return _Config._defaults[name]
    except KeyError:
        raise AttributeError(f"chainer.config has no attribute {name!r}") from None


_local = _LocalConfig()
#: chainer's ``chainer.config`` (thread-local): ``chainer.config.train = False``.
config = _Config()
#: chainer's flag silencing the warnings of experimental features (chainer 7.8.1 sets it False);
#: gradhub warns of none, so it changes nothing, kept for the programs that set it.
disable_experimental_feature_warning = False


@contextmanager
def using_config(name: str, value: Any) -> Iterator[None]:
    """Set ``chainer.config.<name>`` to ``value`` in this thread for the block.

    Example::

        >>> import numpy as np
        >>> from gradhub_compat import chainer
        >>> import gradhub_compat.chainer.functions as F
        >>> x = chainer.Variable(np.ones(3, dtype=np.float32))
        >>> with chainer.using_config("train", False):
        ...     F.dropout(x)                    # evaluation: the identity
        variable([1., 1., 1.])
    """
    if name == "enable_backprop":
        prev_mode = grad_mode()
        setattr(config, name, value)
        try:
            yield
        finally:
            set_grad_mode(*prev_mode)
        return
    missing = object()
    prev = _local.__dict__.get(name, missing)
    setattr(config, name, value)
    try:
        yield
    finally:
        if prev is missing:
            _local.__dict__.pop(name, None)
        else:
            _local.__dict__[name] = prev
