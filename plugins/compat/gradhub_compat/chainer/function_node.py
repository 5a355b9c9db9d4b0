"""chainer's user-defined functions: :class:`FunctionNode` (new style) and :class:`Function`
(old style), as in chainer 7.8.1 (``chainer/function_node.py``, ``chainer/function.py``).

A subclass implements ``forward(inputs)`` on arrays (or ``forward_cpu``/``forward_gpu``) and
``backward``; ``apply(inputs)`` (``FunctionNode``) or calling the object (``Function``) runs it
on Variables and records one node in gradhub's graph. The node is a gradhub primitive made for
the subclass (a :class:`gradhub.registry.FunctionDef` named after the class, not entered in the
registry): its forward kernel calls the object's ``forward``, its backward rule the object's
``backward``, so gradients flow through it like through any registered function.

* ``FunctionNode.backward(target_input_indexes, grad_outputs)`` works on Variables. Written with
  chainer functions, it is recorded under ``enable_double_backprop=True`` and differentiable
  again (double backprop through the node works).
* ``Function.backward(inputs, grad_outputs)`` works on arrays: first order only. Differentiating
  a gradient that went through it raises (a ``RuntimeError``, as chainer's "cannot
  twice-differentiate an old style Function").

Example (a new-style exp whose backward uses the retained output)::

    >>> import numpy as np
    >>> from gradhub_compat import chainer
    >>> class Exp(chainer.FunctionNode):
    ...     def forward(self, inputs):
    ...         self.retain_outputs((0,))
    ...         return np.exp(inputs[0]),
    ...     def backward(self, target_input_indexes, grad_outputs):
    ...         y, = self.get_retained_outputs()
    ...         return grad_outputs[0] * y,
    >>> x = chainer.Variable(np.array([0.0, 1.0]))
    >>> y, = Exp().apply((x,))
    >>> gx, = chainer.grad([y], [x], enable_double_backprop=True)
    >>> ggx, = chainer.grad([gx], [x])
    >>> ggx.array.round(4)
    array([1.    , 2.7183])
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np
from gradhub.graph import Node
from gradhub.graph import apply as _graph_apply
from gradhub.modes import is_recording
from gradhub.registry import FunctionDef, Provider, Rule, snake_case
from gradhub.variable import Variable as _NativeVariable

from .._common import adopt
from . import Variable, config

__all__ = ["Function", "FunctionAdapter", "FunctionNode", "VariableNode"]

_PAGE = "docs/migration-chainer.md"


def _no_hooks(what: str) -> NotImplementedError:
    return NotImplementedError(
        f"chainer FunctionNode.{what}: function hooks are not supported by gradhub; see {_PAGE}"
    )


class VariableNode:
    """What chainer's ``FunctionNode.inputs`` holds for each input: its ``shape``, ``dtype``,
    ``name``, ``requires_grad``, ``creator_node`` and, for a retained input, ``data`` (None
    otherwise). ``get_variable()`` gives the input Variable while it is alive, else a new
    Variable of the retained data."""

    __slots__ = ("_ref", "creator_node", "data", "dtype", "name", "requires_grad", "shape")

    def __init__(self, v: _NativeVariable) -> None:
        self.shape = tuple(v.shape)
        self.dtype = v.dtype
        self.name = v.name
        self.requires_grad = v.need_grad
        self.creator_node = _chainer_creator(v._creator)
        self.data: Any = None
        self._ref = weakref.ref(v)

    @property
    def label(self) -> str:
        """A short text for the node (chainer's format)."""
        return f"{self.shape}, {self.dtype}" if self.shape else str(self.dtype)

    def get_variable(self) -> Variable:
        """The Variable of this node: the input itself while alive, else one of ``data``."""
        v = self._ref()
        if v is not None:
            return adopt(v, Variable)  # type: ignore[no-any-return]
        if self.data is None:
            raise RuntimeError(
                "chainer VariableNode.get_variable: the Variable is gone and its data was not "
                "retained (retain_inputs in forward)"
            )
        return Variable(self.data, requires_grad=self.requires_grad)

    def __repr__(self) -> str:
        return f"<variable node {self.label}>"


def _several_outputs(**attrs: Any) -> int:
    """``n_outputs`` of a user function: as many as its ``forward`` returns."""
    return -1


def _kernel(xp: Any, *arrays: Any, function_node: FunctionNode) -> tuple[Any, ...]:
    return function_node._forward_arrays(arrays)


def _rule(
    grad_outputs: list[Any],
    inputs: list[Any],
    input_shapes: list[Any],
    outputs: list[Any],
    output_shapes: list[Any],
    function_node: FunctionNode,
) -> list[Any]:
    return function_node._backward_variables(grad_outputs, inputs, outputs)


#: the gradhub primitive of each FunctionNode (or Function) subclass
_FDEFS: weakref.WeakKeyDictionary[type, FunctionDef] = weakref.WeakKeyDictionary()


def _fdef_for(cls: type, first_order_only: bool) -> FunctionDef:
    """The primitive running the user function class ``cls`` (made once per class)."""
    fdef = _FDEFS.get(cls)
    if fdef is None:
        provider = Provider("", "", f"{cls.__module__}.{cls.__qualname__}")
        fdef = FunctionDef(
            cls.__name__,
            _kernel,
            provider,
            inputs=("*inputs",),
            n_outputs=_several_outputs,
            rule=Rule(_rule, provider, None, None, first_order_only=first_order_only),
            doc=cls.__doc__ or "",
            snake=snake_case(cls.__name__),
        )
        _FDEFS[cls] = fdef
    return fdef


def _chainer_creator(node: Node | None) -> Any:
    """chainer's ``creator_node`` for a graph node: the FunctionNode that made it, if a user
    function did, else the gradhub :class:`~gradhub.graph.Node` (None for a leaf)."""
    if node is None:
        return None
    fn = node.attrs.get("function_node") if node.fdef.forward is _kernel else None
    return node if fn is None else fn


def creator_of(node: Node | None) -> Any:
    """chainer's ``creator`` for a graph node: the :class:`Function` for an old-style function,
    the :class:`FunctionNode` for a new-style one, else the gradhub node (None for a leaf)."""
    fn = _chainer_creator(node)
    if isinstance(fn, FunctionAdapter):
        return fn.function
    return fn


def creator_node_of(node: Node | None) -> Any:
    """chainer's ``creator_node``: see :func:`creator_of` (a FunctionAdapter for a Function)."""
    return _chainer_creator(node)


def _is_array(a: Any) -> bool:
    from gradhub.registry import REGISTRY

    if isinstance(a, np.ndarray):
        return True
    if type(a) not in REGISTRY.by_array_type:
        from gradhub.plugins import ensure_loaded

        ensure_loaded()
    return type(a) in REGISTRY.by_array_type


class _TypeInfo:
    """The type of one input array for ``check_type_forward`` (chainer's light mode)."""

    __slots__ = ("dtype", "ndim", "shape", "size")

    def __init__(self, a: Any) -> None:
        self.shape = tuple(a.shape)
        self.dtype = a.dtype
        self.ndim = a.ndim
        self.size = a.size


class TypeInfoTuple(tuple):  # type: ignore[type-arg]
    """The input types given to ``check_type_forward``; ``size()`` is their number."""

    def size(self) -> int:
        """The number of inputs."""
        return len(self)


class FunctionNode:
    """chainer's new-style differentiable function (see the module docstring).

    Subclasses implement ``forward(inputs)`` (a tuple of arrays in, a tuple out; or
    ``forward_cpu``/``forward_gpu``) and ``backward(target_input_indexes, grad_outputs)``
    (Variables in, one Variable or None per target input, or per input, out). ``forward`` calls
    :meth:`retain_inputs`/:meth:`retain_outputs` for what ``backward`` reads through
    :meth:`get_retained_inputs`/:meth:`get_retained_outputs`. ``check_type_forward(in_types)``
    is called first when overridden (``in_types`` holds ``shape``, ``dtype``, ``ndim``, ``size``
    per input; see :mod:`gradhub_compat.chainer.utils.type_check`).

    Example::

        >>> import numpy as np
        >>> from gradhub_compat import chainer
        >>> class Mul(chainer.FunctionNode):
        ...     def forward(self, inputs):
        ...         self.retain_inputs((0, 1))
        ...         a, b = inputs
        ...         return a * b,
        ...     def backward(self, indexes, grad_outputs):
        ...         a, b = self.get_retained_inputs()
        ...         gy, = grad_outputs
        ...         return gy * b, gy * a
        >>> a = chainer.Variable(np.array([2.0]))
        >>> b = chainer.Variable(np.array([3.0]))
        >>> y, = Mul().apply((a, b))
        >>> y.grad = np.ones(1)
        >>> y.backward()
        >>> a.grad, b.grad
        (array([3.]), array([2.]))
    """

    inputs: tuple[VariableNode, ...] | None = None
    outputs: tuple[weakref.ref[Any], ...] | None = None
    rank = 0
    stack = None
    lazy_grad_sum = False
    is_elementwise = False
    _input_indexes_to_retain: Sequence[int] | None = None
    _output_indexes_to_retain: Sequence[int] | None = None
    _retained_output_data: tuple[Any, ...] | None = None
    _output_count: int | None = None
    _node_ref: weakref.ref[Node] | None = None
    #: the inputs and outputs the engine gives the rule while ``backward`` runs
    _backward_state: tuple[list[Any], list[Any]] | None = None
    #: whether differentiating the gradients again is refused (old-style functions)
    _first_order_only = False

    @property
    def label(self) -> str:
        """Short text naming the function (its class name)."""
        return self.__class__.__name__

    @property
    def _impl_name(self) -> str:
        return self.__class__.__name__

    def _impl_class(self) -> type:
        return self.__class__

    @property
    def local_function_hooks(self) -> Any:
        """Function hooks are not supported by the layer (NotImplementedError)."""
        raise _no_hooks("local_function_hooks")

    def add_hook(self, hook: Any, name: str | None = None) -> None:
        """Function hooks are not supported by the layer (NotImplementedError)."""
        raise _no_hooks("add_hook")

    def delete_hook(self, name: str) -> None:
        """Function hooks are not supported by the layer (NotImplementedError)."""
        raise _no_hooks("delete_hook")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(
            f"A function class object ({self.__class__.__name__}) which is derived from "
            "chainer.FunctionNode has been called as if it were a callable. Use apply() method "
            "instead."
        )

    # -- forward ---------------------------------------------------------------------------------
    def apply(self, inputs: Sequence[Any]) -> tuple[Variable, ...]:
        """Run ``forward`` on the inputs (Variables or arrays) and record the node: a tuple of
        output Variables. An output requires a gradient when an input does (also under
        ``no_backprop_mode``, as chainer); the graph is recorded when ``enable_backprop``."""
        inputs = tuple(inputs)
        for k, x in enumerate(inputs):
            if not isinstance(x, _NativeVariable) and not _is_array(x):
                raise TypeError(
                    f"chainer {self.label}.apply: input {k} must be a Variable or an array "
                    f"(numpy.ndarray or a device array), got {type(x).__name__}"
                )
        if not inputs:
            raise TypeError(f"chainer {self.label}.apply: at least one input is required")
        if type(self).check_type_forward is not FunctionNode.check_type_forward and _type_check():
            arrays = [x._data if isinstance(x, _NativeVariable) else x for x in inputs]
            self.check_type_forward(TypeInfoTuple(_TypeInfo(a) for a in arrays))
        fdef = _fdef_for(self._impl_class(), self._first_order_only)
        outs = _graph_apply(fdef, inputs, {"function_node": self})
        res: tuple[Variable, ...] = adopt(tuple(outs), Variable)
        if not is_recording():
            return res
        nodes = [
            VariableNode(x if isinstance(x, _NativeVariable) else _NativeVariable.leaf(x, False))
            for x in inputs
        ]
        retain_in = self._input_indexes_to_retain
        retain_out = self._output_indexes_to_retain
        node = res[0]._creator if res else None
        if retain_in is not None:
            for i in retain_in:
                x = inputs[i]
                nodes[i].data = x._data if isinstance(x, _NativeVariable) else x
        self.inputs = tuple(nodes)
        self.outputs = tuple(weakref.ref(y) for y in res)
        self._retained_output_data = (
            tuple(res[i]._data for i in retain_out) if retain_out is not None else None
        )
        if node is not None:
            self._node_ref = weakref.ref(node)
            self.rank = node.seq
            _keep_retained(node, retain_in, retain_out)
        return res

    def _forward_arrays(self, arrays: tuple[Any, ...]) -> tuple[Any, ...]:
        """The kernel: ``forward`` on the input arrays, checked (a tuple of arrays)."""
        self._input_indexes_to_retain = None
        self._output_indexes_to_retain = None
        outputs = self.forward(arrays)
        if not isinstance(outputs, tuple):
            raise TypeError(
                f"forward output must be a tuple ({self.label})\nActual: {type(outputs)}"
            )
        for k, y in enumerate(outputs):
            if not _is_array(y):
                raise TypeError(
                    f"forward output must be a tuple of ndarrays.\nFunction: {self.label}\n"
                    f"Actual output types: {tuple(type(o) for o in outputs)} (output {k})"
                )
        self._output_count = len(outputs)
        return outputs

    def check_type_forward(self, in_types: TypeInfoTuple) -> None:
        """Check the input types before ``forward`` (default: nothing)."""

    def forward(self, inputs: tuple[Any, ...]) -> tuple[Any, ...]:
        """The output arrays from the input arrays: ``forward_cpu`` for numpy arrays,
        ``forward_gpu`` otherwise (chainer's dispatch on the first input)."""
        if isinstance(inputs[0], np.ndarray):
            return self.forward_cpu(inputs)
        return self.forward_gpu(inputs)

    def forward_cpu(self, inputs: tuple[Any, ...]) -> tuple[Any, ...]:
        """The output arrays from numpy input arrays (implement this or :meth:`forward`)."""
        raise NotImplementedError

    def forward_gpu(self, inputs: tuple[Any, ...]) -> tuple[Any, ...]:
        """The output arrays from device input arrays (implement this or :meth:`forward`)."""
        raise NotImplementedError

    def retain_inputs(self, indexes: Sequence[int]) -> None:
        """Keep the inputs ``indexes`` for ``backward`` (call from ``forward``)."""
        self._input_indexes_to_retain = tuple(indexes)

    def retain_outputs(self, indexes: Sequence[int]) -> None:
        """Keep the outputs ``indexes`` for ``backward`` (call from ``forward``)."""
        self._output_indexes_to_retain = tuple(indexes)

    @property
    def output_data(self) -> tuple[Any, ...]:
        """The retained output arrays, one entry per output (None for those not retained)."""
        if self._retained_output_data is None:
            raise RuntimeError("retained output data is gone")
        out: list[Any] = [None] * (self._output_count or 0)
        for i, a in zip(self._output_indexes_to_retain or (), self._retained_output_data):
            out[i] = a
        return tuple(out)

    # -- backward --------------------------------------------------------------------------------
    def backward(
        self, target_input_indexes: tuple[int, ...], grad_outputs: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        """The gradients of the inputs ``target_input_indexes`` (Variables; one per target or
        one per input) from those of the outputs. Default: None (not differentiable)."""
        return (None,) * len(target_input_indexes)

    def backward_accumulate(
        self,
        target_input_indexes: tuple[int, ...],
        grad_outputs: tuple[Any, ...],
        grad_inputs: tuple[Any, ...],
    ) -> tuple[Any, ...]:
        """``backward`` plus the given ``grad_inputs`` (one per target); chainer's fused form.
        The layer calls it (with ``grad_inputs`` all None) when a subclass overrides it."""
        gxs = self._backward_targets(target_input_indexes, grad_outputs)
        return tuple(
            gx if gi is None else gi if gx is None else gx + gi for gx, gi in zip(gxs, grad_inputs)
        )

    def _backward_targets(
        self, target_input_indexes: tuple[int, ...], grad_outputs: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        gxs = self.backward(target_input_indexes, grad_outputs)
        if not isinstance(gxs, (tuple, list)):
            raise TypeError(
                f"chainer {self.label}.backward must return a tuple of Variables (or None), got "
                f"{type(gxs).__name__}"
            )
        n_in = len(self.inputs or ())
        if len(gxs) == n_in:
            return tuple(gxs[i] for i in target_input_indexes)
        if len(gxs) != len(target_input_indexes):
            raise ValueError(
                f"chainer {self.label}.backward returned {len(gxs)} gradients; expected one per "
                f"target input ({len(target_input_indexes)}) or per input ({n_in})"
            )
        return tuple(gxs)

    def _backward_variables(
        self, grad_outputs: list[Any], inputs: list[Any], outputs: list[Any]
    ) -> list[Any]:
        """The rule: ``backward`` with chainer's arguments; one gradient (or None) per input."""
        node = self._node_ref() if self._node_ref is not None else None
        n_in = len(inputs)
        if node is not None and len(node.srcs) >= n_in:  # (a cut appends inputs after them)
            need = [src.need_grad for src in node.srcs[:n_in]]
        else:
            need = [x is None or x.need_grad for x in inputs]
        targets = tuple(i for i in range(n_in) if need[i])
        res: list[Any] = [None] * n_in
        if not targets:
            return res
        gys = tuple(adopt(list(grad_outputs), Variable))
        prev = self._backward_state
        self._backward_state = (inputs, outputs)
        try:
            if type(self).backward_accumulate is not FunctionNode.backward_accumulate:
                gxs = self.backward_accumulate(targets, gys, (None,) * len(targets))
                if len(gxs) != len(targets):
                    raise ValueError(
                        f"chainer {self.label}.backward_accumulate returned {len(gxs)} "
                        f"gradients for {len(targets)} target inputs"
                    )
            else:
                gxs = self._backward_targets(targets, gys)
        finally:
            self._backward_state = prev
        for i, g in zip(targets, gxs):
            res[i] = g
        return res

    def get_retained_inputs(self) -> tuple[Variable | None, ...]:
        """The input Variables kept by :meth:`retain_inputs` (in its order); in ``backward``
        they are connected to the graph, so results computed from them are differentiable."""
        indexes = self._input_indexes_to_retain
        if indexes is None or self.inputs is None:
            return ()
        state = self._backward_state
        if state is not None:
            return tuple(adopt(state[0][i], Variable) for i in indexes)
        return tuple(self.inputs[i].get_variable() for i in indexes)

    def get_retained_outputs(self) -> tuple[Variable | None, ...]:
        """The output Variables kept by :meth:`retain_outputs` (in its order)."""
        indexes = self._output_indexes_to_retain
        if indexes is None or self.outputs is None:
            return ()
        state = self._backward_state
        if state is not None:
            return tuple(adopt(state[1][i], Variable) for i in indexes)
        if self._retained_output_data is None:
            raise ValueError(f"retain_outputs is not called in forward ({self.label})")
        node = self._node_ref() if self._node_ref is not None else None
        res: list[Any] = []
        for i, data in zip(indexes, self._retained_output_data):
            y = self.outputs[i]()
            if y is None:  # gone: a new Variable at the same place in the graph
                need = node is not None and node.need_grad
                y = Variable._new(data, need, node, i)
            res.append(y)
        return tuple(res)

    def unchain(self) -> None:
        """Cut this node out of the graph: its outputs become roots (no creator), and no
        gradient flows through it any more (chainer's ``FunctionNode.unchain``)."""
        from .graph_cut import cut_node

        node = self._node_ref() if self._node_ref is not None else None
        if node is not None:
            cut_node(node)
        self.inputs = None
        self.outputs = None


def _keep_retained(
    node: Node, retain_in: Sequence[int] | None, retain_out: Sequence[int] | None
) -> None:
    """Keep only the retained arrays in the graph node (chainer keeps no others)."""
    if node.rule is None:
        return
    keep_in = set(retain_in or ())
    keep_out = set(retain_out or ())
    if node.saved_in is not None:
        node.saved_in = tuple(a if i in keep_in else None for i, a in enumerate(node.saved_in))
    if node.saved_out is not None:
        node.saved_out = tuple(a if i in keep_out else None for i, a in enumerate(node.saved_out))


def _type_check() -> bool:
    try:
        return bool(config.type_check)
    except AttributeError:
        return True


class FunctionAdapter(FunctionNode):
    """The FunctionNode that runs an old-style :class:`Function` (chainer's adapter): it keeps
    every input unless the Function says otherwise and calls the Function's array-level
    ``backward``."""

    _first_order_only = True
    _function: Function | None = None
    _weak_function: weakref.ref[Function] | None = None

    def __init__(self, function: Function) -> None:
        self._weak_function = weakref.ref(function)
        function._owned_node = self

    @property
    def function(self) -> Function | None:
        """The wrapped :class:`Function`."""
        if self._function is not None:
            return self._function
        return self._weak_function() if self._weak_function is not None else None

    @property
    def label(self) -> str:
        fn = self.function
        return fn.label if fn is not None else "FunctionAdapter"

    @property
    def _impl_name(self) -> str:
        return type(self.function).__name__

    def _impl_class(self) -> type:
        return type(self.function)

    def check_type_forward(self, in_types: TypeInfoTuple) -> None:
        self.function.check_type_forward(in_types)  # type: ignore[union-attr]

    def forward(self, inputs: tuple[Any, ...]) -> tuple[Any, ...]:
        self.retain_inputs(range(len(inputs)))  # old style: every input by default
        return self.function.forward(inputs)  # type: ignore[union-attr]

    def backward(
        self, target_input_indexes: tuple[int, ...], grad_outputs: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        n_in = len(self.inputs or ())
        in_data: list[Any] = [None] * n_in
        for i, x in zip(self._input_indexes_to_retain or (), self.get_retained_inputs()):
            in_data[i] = None if x is None else x._data
        gy_data = tuple(None if g is None else g._data for g in grad_outputs)
        gxs = self.function.backward(tuple(in_data), gy_data)  # type: ignore[union-attr]
        if not isinstance(gxs, (tuple, list)) or len(gxs) != n_in:
            raise ValueError(
                f"chainer {self.label}.backward must return a tuple with one gradient array (or "
                f"None) per input ({n_in}), got {gxs!r:.80}"
            )
        return tuple(
            None if gxs[i] is None else Variable(gxs[i], requires_grad=False)
            for i in target_input_indexes
        )


class Function:
    """chainer's old-style differentiable function: ``forward(inputs)`` and
    ``backward(inputs, grad_outputs)`` on arrays (or their ``_cpu``/``_gpu`` forms); calling the
    object on Variables or arrays records it (one Variable, or a tuple for several outputs).
    Every input is kept for ``backward`` unless ``forward`` calls :meth:`retain_inputs`.
    Gradients through it are first order only: differentiating them again raises a
    ``RuntimeError`` (:class:`gradhub.BackwardRuleError`), as chainer's "cannot twice-differentiate
    an old style Function".

    Example::

        >>> import numpy as np
        >>> from gradhub_compat import chainer
        >>> class Square(chainer.Function):
        ...     def forward(self, inputs):
        ...         return inputs[0] ** 2,
        ...     def backward(self, inputs, grad_outputs):
        ...         return 2 * inputs[0] * grad_outputs[0],
        >>> x = chainer.Variable(np.array([3.0]))
        >>> y = Square()(x)
        >>> chainer.grad([y], [x])
        [variable([6.])]
    """

    _node: weakref.ref[FunctionAdapter] | None = None
    _owned_node: FunctionAdapter | None = None

    def __call__(self, *inputs: Any) -> Any:
        node = self.node
        node._function = self  # the adapter (held by the graph) owns the Function now
        node._weak_function = None
        self._node = weakref.ref(node)
        self._owned_node = None
        ret = node.apply(inputs)
        return ret[0] if len(ret) == 1 else ret

    @property
    def node(self) -> FunctionAdapter:
        """The :class:`FunctionAdapter` running this Function (made when missing)."""
        nd = (self._node() if self._node is not None else None) or self._owned_node
        if nd is not None:
            return nd
        nd = FunctionAdapter(self)
        self._owned_node = nd
        return nd

    @property
    def inputs(self) -> Any:
        """The input nodes of the last call."""
        return self.node.inputs

    @property
    def outputs(self) -> Any:
        """Weak references to the outputs of the last call."""
        return self.node.outputs

    @property
    def label(self) -> str:
        """Short text naming the function (its class name)."""
        return self.__class__.__name__

    @property
    def output_data(self) -> tuple[Any, ...]:
        """The retained output arrays (None for those not retained)."""
        return self.node.output_data

    @property
    def rank(self) -> int:
        """The order of the node in the graph."""
        return self.node.rank

    @property
    def stack(self) -> Any:
        """None (chainer keeps a stack trace in debug mode only)."""
        return None

    @property
    def local_function_hooks(self) -> Any:
        """Function hooks are not supported (NotImplementedError)."""
        return self.node.local_function_hooks

    def add_hook(self, hook: Any, name: str | None = None) -> None:
        """Function hooks are not supported (NotImplementedError)."""
        self.node.add_hook(hook, name)

    def delete_hook(self, name: str) -> None:
        """Function hooks are not supported (NotImplementedError)."""
        self.node.delete_hook(name)

    def check_type_forward(self, in_types: TypeInfoTuple) -> None:
        """Check the input types before ``forward`` (default: nothing)."""

    def forward(self, inputs: tuple[Any, ...]) -> tuple[Any, ...]:
        """The output arrays: ``forward_gpu`` when an input is a device array, else
        ``forward_cpu`` (chainer's dispatch)."""
        if any(not isinstance(x, np.ndarray) for x in inputs):
            return self.forward_gpu(inputs)
        return self.forward_cpu(inputs)

    def forward_cpu(self, inputs: tuple[Any, ...]) -> tuple[Any, ...]:
        """The output arrays from numpy inputs (implement this or :meth:`forward`)."""
        raise NotImplementedError()

    def forward_gpu(self, inputs: tuple[Any, ...]) -> tuple[Any, ...]:
        """The output arrays from device inputs (implement this or :meth:`forward`)."""
        raise NotImplementedError()

    def backward(self, inputs: tuple[Any, ...], grad_outputs: tuple[Any, ...]) -> tuple[Any, ...]:
        """The input gradient arrays (None: no gradient): ``backward_gpu`` when an array is a
        device array, else ``backward_cpu``."""
        arrays = [a for a in (*inputs, *grad_outputs) if a is not None]
        if any(not isinstance(a, np.ndarray) for a in arrays):
            return self.backward_gpu(inputs, grad_outputs)
        return self.backward_cpu(inputs, grad_outputs)

    def backward_cpu(
        self, inputs: tuple[Any, ...], grad_outputs: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        """The input gradients on numpy arrays (default: None for each input)."""
        return tuple(None for _ in inputs)

    def backward_gpu(
        self, inputs: tuple[Any, ...], grad_outputs: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        """The input gradients on device arrays (default: None for each input)."""
        return tuple(None for _ in inputs)

    def retain_inputs(self, indexes: Sequence[int]) -> None:
        """Keep only the inputs ``indexes`` for ``backward`` (call from ``forward``; without a
        call every input is kept)."""
        self.node.retain_inputs(indexes)

    def retain_outputs(self, indexes: Sequence[int], retain_after_backward: bool = False) -> None:
        """Keep the outputs ``indexes`` (read them in ``backward`` from :attr:`output_data`)."""
        if retain_after_backward:
            import warnings

            warnings.warn(
                "retain_after_backward option has no effect", DeprecationWarning, stacklevel=2
            )
        self.node.retain_outputs(indexes)

    def unchain(self) -> None:
        """Cut the last call's node out of the graph (:meth:`FunctionNode.unchain`)."""
        self.node.unchain()
