"""mxnet's symbolic API: ``mx.sym.Variable``, layers, arithmetic, ``bind``.

A :class:`Symbol` records a node of a DAG (an operator, its inputs and attributes); nothing is
computed until the symbol is bound to arrays (:meth:`Symbol.bind`, :meth:`Symbol.simple_bind`)
and the executor runs ``forward``. Layers create their own parameter arguments, named after the
layer, as mxnet does (``FullyConnected(name="fc")`` adds ``fc_weight`` and ``fc_bias``;
``SoftmaxOutput(name="softmax")`` adds ``softmax_label``); unnamed layers are numbered
(``fullyconnected0``).

Example::

    >>> import gradhub_compat.mxnet as mx
    >>> net = mx.sym.Variable("data")
    >>> net = mx.sym.FullyConnected(net, name="fc", num_hidden=6)
    >>> net = mx.sym.SoftmaxOutput(net, name="softmax")
    >>> net.list_arguments()
    ['data', 'fc_weight', 'fc_bias', 'softmax_label']
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import threading
import types
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from . import _sym_norm, _sym_ops_more
from .base import MXNetError, NotImplementedForSymbol, _MXNetTypeError, _MXNetValueError

__all__ = [
    "Activation",
    "BatchNorm",
    "BlockGrad",
    "CTCLoss",
    "Concat",
    "Convolution",
    "Deconvolution",
    "Dropout",
    "Embedding",
    "Flatten",
    "FullyConnected",
    "Group",
    "LeakyReLU",
    "LinearRegressionOutput",
    "LogisticRegressionOutput",
    "MAERegressionOutput",
    "MakeLoss",
    "Pooling",
    "Reshape",
    "SliceChannel",
    "SoftmaxOutput",
    "Symbol",
    "Variable",
    "abs",
    "broadcast_add",
    "broadcast_div",
    "broadcast_maximum",
    "broadcast_minimum",
    "broadcast_minus",
    "broadcast_mul",
    "broadcast_plus",
    "broadcast_power",
    "broadcast_sub",
    "clip",
    "concat",
    "contrib",
    "cos",
    "ctc_loss",
    "dot",
    "elemwise_add",
    "elemwise_div",
    "elemwise_mul",
    "elemwise_sub",
    "exp",
    "expand_dims",
    "flatten",
    "load",
    "load_json",
    "log",
    "log_softmax",
    "make_loss",
    "maximum",
    "mean",
    "minimum",
    "pick",
    "relu",
    "reshape",
    "reshape_like",
    "sigmoid",
    "sin",
    "softmax",
    "split",
    "sqrt",
    "square",
    "sum",
    "swapaxes",
    "tanh",
    "transpose",
    "var",
    "where",
]

ACT_TYPES = ("relu", "sigmoid", "tanh", "softrelu", "softsign")
NORMALIZATIONS = ("null", "batch", "valid")
#: Operators whose gradient ignores the head gradient (mxnet's loss layers).
LOSS_OPS = (
    "SoftmaxOutput",
    "MakeLoss",
    "make_loss",
    "LinearRegressionOutput",
    "LogisticRegressionOutput",
    "MAERegressionOutput",
)
#: Operators with auxiliary states: the input positions that are auxiliary (mxnet's
#: ``FMutateInputs``: arrays the operator updates in place, not arguments).
AUX_INPUTS: dict[str, tuple[int, ...]] = {"BatchNorm": (3, 4)}
#: Operators whose inputs at these positions take any dtype (mxnet's type inference: indices,
#: shapes, conditions and lengths); the other inputs and the output share one dtype.
ANY_DTYPE_INPUTS: dict[str, tuple[int, ...]] = {
    "pick": (1,),
    "reshape_like": (1,),
    "where": (0,),
    "CTCLoss": (1, 2, 3),
}
#: mxnet's broadcasting binary operators (numpy broadcasting; gradients summed back).
BROADCAST_OPS = (
    "broadcast_add",
    "broadcast_sub",
    "broadcast_mul",
    "broadcast_div",
    "broadcast_power",
    "broadcast_maximum",
    "broadcast_minimum",
)


#: the comparison operators (``_Greater``, ``_GreaterScalar``...) -> mxnet's operator names
COMPARE_NAMES = {
    "Greater": "_greater",
    "GreaterEqual": "_greater_equal",
    "Lesser": "_lesser",
    "LesserEqual": "_lesser_equal",
}


class _Names(threading.local):
    def __init__(self) -> None:
        self.counters: dict[str, Iterator[int]] = {}
        #: the prefixes of the name scopes entered (:func:`prefix_scope`), with their counters
        self.scopes: list[tuple[str, dict[str, int]]] = []


_names = _Names()


def _auto_name(hint: str) -> str:
    if _names.scopes:  # inside a Gluon block's name scope (mxnet's Prefix name manager)
        prefix, counter = _names.scopes[-1]
        n = counter.get(hint, 0)
        counter[hint] = n + 1
        return f"{prefix}{hint}{n}"
    c = _names.counters.setdefault(hint, itertools.count())
    return f"{hint}{next(c)}"


@contextlib.contextmanager
def prefix_scope(prefix: str, counter: dict[str, int]) -> Iterator[None]:
    """Name the symbols created without a name (``a - b``, ``x > 0``...) ``prefix`` + their
    operator's hint + a count kept in ``counter``, as mxnet's ``Prefix`` name manager inside a
    Gluon block's ``hybrid_forward`` (``l2loss0__minus0``)."""
    _names.scopes.append((prefix, counter))
    try:
        yield
    finally:
        _names.scopes.pop()


def _is_scalar(x: Any) -> bool:
    return isinstance(x, (bool, int, float, np.number))


class Symbol:
    """A node of a symbolic graph: an operator (``op``), its input symbols and attributes."""

    __slots__ = ("_attrs", "_inputs", "_json", "_name", "_op")

    def __init__(
        self,
        op: str,
        name: str,
        inputs: Sequence[Symbol] = (),
        attrs: dict[str, Any] | None = None,
        json: dict[str, str] | None = None,
    ) -> None:
        self._op = op
        self._name = name
        self._inputs = tuple(inputs)
        self._attrs = dict(attrs or {})
        # the attributes as mxnet's JSON writes them (the given keyword arguments, as strings)
        self._json: dict[str, str] = dict(json or {})

    @property
    def name(self) -> str:
        """The symbol's name."""
        return self._name

    @property
    def op(self) -> str:
        """The operator (``"null"`` for a variable)."""
        return self._op

    @property
    def is_loss(self) -> bool:
        """Whether this is a loss layer (its gradient ignores the head gradient)."""
        return self._op in LOSS_OPS

    # -- graph traversal -------------------------------------------------------------------------
    def _topo(self) -> list[Symbol]:
        """Every node this symbol depends on, inputs before their consumers (left to right)."""
        order: list[Symbol] = []
        seen: set[int] = set()
        stack: list[tuple[Symbol, bool]] = [(self, False)]
        while stack:
            node, expanded = stack.pop()
            if expanded:
                order.append(node)
                continue
            if id(node) in seen:
                continue
            seen.add(id(node))
            stack.append((node, True))
            for child in reversed(node._inputs):
                if id(child) not in seen:
                    stack.append((child, False))
        return order

    def _heads(self) -> list[Symbol]:
        if self._op == "Group":
            out: list[Symbol] = []
            for s in self._inputs:
                out.extend(s._heads())
            return out
        return [self]

    def _aux_set(self) -> set[str]:
        """The names of the variables that feed an auxiliary input (``BatchNorm``'s
        ``moving_mean``/``moving_var``)."""
        out: set[str] = set()
        for node in self._topo():
            for pos in AUX_INPUTS.get(node._op, ()):
                if pos < len(node._inputs) and node._inputs[pos]._op == "null":
                    out.add(node._inputs[pos]._name)
        return out

    def list_arguments(self) -> list[str]:
        """The names of the arguments (variables that are not auxiliary states), in the order
        bind expects them."""
        aux = self._aux_set()
        names: list[str] = []
        for node in self._topo():
            if node._op == "null" and node._name not in names and node._name not in aux:
                names.append(node._name)
        return names

    def list_inputs(self) -> list[str]:
        """Every variable: the arguments and the auxiliary states, in graph order (as mxnet)."""
        names: list[str] = []
        for node in self._topo():
            if node._op == "null" and node._name not in names:
                names.append(node._name)
        return names

    def list_outputs(self) -> list[str]:
        """The names of the outputs (``NAME_output``; ``NAME_output0``... for the outputs of
        ``SliceChannel``/``split``)."""
        return [_output_name(h) for h in self._heads()]

    def list_auxiliary_states(self) -> list[str]:
        """The names of the auxiliary states (``BatchNorm``'s ``NAME_moving_mean`` and
        ``NAME_moving_var``): arrays the operators update in place in training, bound with
        ``aux_states``, not arguments and without gradients, in graph order (as mxnet).

        Example::

            >>> import gradhub_compat.mxnet as mx
            >>> bn = mx.sym.BatchNorm(mx.sym.Variable("x"), name="bn")
            >>> bn.list_arguments(), bn.list_auxiliary_states()
            (['x', 'bn_gamma', 'bn_beta'], ['bn_moving_mean', 'bn_moving_var'])
        """
        aux = self._aux_set()
        names: list[str] = []
        for node in self._topo():
            if node._op == "null" and node._name in aux and node._name not in names:
                names.append(node._name)
        return names

    def __len__(self) -> int:
        """The number of outputs."""
        return len(self._heads())

    def __getitem__(self, index: int | str) -> Symbol:
        """One output, by position or by name (``"fc_output"``, a variable's own name).

        Example::

            >>> import gradhub_compat.mxnet as mx
            >>> fc = mx.sym.FullyConnected(mx.sym.Variable("x"), num_hidden=3, name="fc")
            >>> fc.get_internals()["fc_output"], fc.get_internals()[1]
            (<Symbol fc>, <Symbol fc_weight>)
        """
        heads = self._heads()
        if isinstance(index, str):
            names = self.list_outputs()
            if index not in names:
                raise ValueError(
                    f'Symbol[{index!r}]: Cannot find output that matches name "{index}" '
                    f"(outputs: {names})"
                )
            if names.count(index) > 1:
                raise ValueError(
                    f"Symbol[{index!r}]: there are multiple outputs with name {index!r}"
                )
            return heads[names.index(index)]
        if not isinstance(index, (int, np.integer)) or isinstance(index, bool):
            raise TypeError(
                f"Symbol[...]: the index must be an int or an output name, got "
                f"{type(index).__name__}"
            )
        if index < 0:  # mxnet 1.9.1 refuses negative indices
            raise MXNetError(
                f"Symbol[{index}]: Symbol only accept nonnegative index ({len(heads)} outputs)"
            )
        if index >= len(heads):
            raise IndexError(f"Symbol[{index}]: index out of range ({len(heads)} outputs)")
        return heads[int(index)]

    def get_internals(self) -> Symbol:
        """A group of every node the symbol depends on (variables and operator outputs), inputs
        before their consumers, as mxnet's ``get_internals``; pick one with ``[name]``.

        Example::

            >>> import gradhub_compat.mxnet as mx
            >>> fc = mx.sym.FullyConnected(mx.sym.Variable("x"), num_hidden=3, name="fc")
            >>> mx.sym.Activation(fc, act_type="relu", name="relu").get_internals().list_outputs()
            ['x', 'fc_weight', 'fc_bias', 'fc_output', 'relu_output']
        """
        nodes: list[Symbol] = []
        present: dict[Any, dict[int, Symbol]] = {}
        for n in self._topo():
            if is_multi_output(n):
                present.setdefault(output_key(n), {})[n._attrs["index"]] = n
        done: set[Any] = set()
        for n in self._topo():
            if n._op == "Group":
                continue
            if not is_multi_output(n):
                nodes.append(n)
                continue
            key = output_key(n)
            if key in done:
                continue
            done.add(key)  # every output of the operator, used or not (as mxnet)
            outs = present[key]
            for i in range(num_visible_outputs(n)):
                nodes.append(outs[i] if i in outs else _sibling(n, i))
        return Symbol("Group", _auto_name("group"), nodes)

    def get_children(self) -> Symbol | None:
        """A group of the inputs of the symbol's output nodes, or None for a variable (as mxnet).

        Example::

            >>> import gradhub_compat.mxnet as mx
            >>> fc = mx.sym.FullyConnected(mx.sym.Variable("x"), num_hidden=3, name="fc")
            >>> fc.get_children().list_outputs(), fc.get_children()[0].get_children()
            (['x', 'fc_weight', 'fc_bias'], None)
        """
        children = [c for h in self._heads() for c in h._inputs]
        if not children:
            return None
        return Symbol("Group", _auto_name("group"), children)

    def infer_type(
        self, *args: Any, **kwargs: Any
    ) -> tuple[list[type] | None, list[type] | None, list[type] | None]:
        """Infer argument and output dtypes from the given ones (positional in argument order, or
        by name; numpy dtypes or their names). Returns ``(arg_types, out_types, aux_types)`` as
        numpy scalar types, or three Nones when the given dtypes do not determine them all. Every
        supported operator has one dtype for its inputs and output; a contradiction raises
        :class:`~.base.MXNetError` naming the operator (as mxnet).

        Example::

            >>> import gradhub_compat.mxnet as mx
            >>> a, b = mx.sym.Variable("a"), mx.sym.Variable("b")
            >>> mx.sym.dot(a, b, name="d").infer_type(a="float64")
            ([<class 'numpy.float64'>, <class 'numpy.float64'>], [<class 'numpy.float64'>], [])
        """
        names = self.list_arguments()
        if len(args) > len(names):
            raise MXNetError(
                f"infer_type: {len(args)} positional dtypes for {len(names)} arguments {names}"
            )
        known: dict[str, np.dtype] = {}
        for name, dt in zip(names, args):
            if dt is not None:
                known[name] = np.dtype(dt)
        for name, dt in kwargs.items():
            if name not in names:
                raise MXNetError(
                    f"infer_type: InferTypeKeyword argument name {name} not found. Candidate "
                    f"arguments: {names}"
                )
            if dt is not None:
                known[name] = np.dtype(dt)
        codes = {str(c): n for n, c in _DTYPE_CODES.items()}
        for node in self._topo():  # a variable's dtype= is a hint the given dtypes override
            hint = node._json.get("__dtype__") if node._op == "null" else None
            if hint in codes and node._name not in known:
                known[node._name] = np.dtype(codes[hint])
        try:
            node_types = _node_types(self, known, "infer_type")
        except TypeError as e:
            raise MXNetError(str(e)) from None
        by_name = {n._name: node_types[id(n)] for n in self._topo() if id(n) in node_types}
        aux = self.list_auxiliary_states()
        if any(n not in by_name for n in (*names, *aux)):
            return None, None, None
        outs = [node_types.get(id(h)) for h in self._heads()]
        if any(o is None for o in outs):
            return None, None, None
        return (
            [by_name[n].type for n in names],
            [o.type for o in outs if o is not None],
            [by_name[n].type for n in aux],
        )

    # -- shapes ----------------------------------------------------------------------------------
    def _given_shapes(self, args: Any, kwargs: Any, what: str) -> dict[str, tuple[int, ...]]:
        names = self.list_arguments()
        aux = self.list_auxiliary_states()
        if args and kwargs:
            raise ValueError(
                f"{what}: Can only specify known argument shapes either by positional or kwargs "
                "way."
            )
        if len(args) > len(names):
            raise MXNetError(f"{what}: {len(args)} positional shapes for {len(names)} arguments")
        known: dict[str, tuple[int, ...]] = {}
        pairs = list(zip(names, args)) + list(kwargs.items())
        for name, shape in pairs:
            if name not in names and name not in aux:
                raise MXNetError(
                    f"{what}: InferShapeKeyword argument name {name} not found ({name!r} is not "
                    f"an argument of the symbol; candidate arguments: {names})"
                )
            if shape is None:
                continue
            dims = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
            if any(int(d) < 0 for d in dims):
                raise MXNetError(f"{what}: the shape {dims} of {name!r} has negative dimensions")
            known[name] = tuple(int(d) for d in dims)
        return known

    def _infer(
        self, args: Any, kwargs: Any, what: str
    ) -> tuple[
        list[tuple[int, ...] | None], list[tuple[int, ...] | None], list[tuple[int, ...] | None]
    ]:
        from .shapes import infer

        by_name, outs = infer(self, self._given_shapes(args, kwargs, what))
        aux = [by_name.get(n) for n in self.list_auxiliary_states()]
        return [by_name.get(n) for n in self.list_arguments()], outs, aux

    def infer_shape(
        self, *args: Any, **kwargs: Any
    ) -> tuple[list[tuple[int, ...]] | None, list[tuple[int, ...]] | None, list[Any] | None]:
        """Infer argument and output shapes from the given ones (positional in argument order,
        or by name; 0 is an unknown dimension, as in mxnet 1.x). Returns
        ``(arg_shapes, out_shapes, aux_shapes)``, or three Nones when the given shapes do not
        determine every dimension (:meth:`infer_shape_partial` then tells what is known).

        Example::

            >>> import gradhub_compat.mxnet as mx
            >>> fc = mx.sym.FullyConnected(mx.sym.Variable("x"), num_hidden=3, name="fc")
            >>> fc.infer_shape(x=(2, 5))
            ([(2, 5), (3, 5), (3,)], [(2, 3)], [])
            >>> fc.infer_shape(x=(0, 5))
            (None, None, None)
        """
        from .shapes import is_known

        arg_shapes, outs, aux = self._infer(args, kwargs, "infer_shape")
        if not all(is_known(s) for s in [*arg_shapes, *outs, *aux]):
            return None, None, None
        return arg_shapes, outs, aux  # type: ignore[return-value]

    def infer_shape_partial(
        self, *args: Any, **kwargs: Any
    ) -> tuple[list[tuple[int, ...]], list[tuple[int, ...]], list[Any]]:
        """As :meth:`infer_shape`, but returns what is known: an unknown shape as ``()`` and
        unknown dimensions as 0 (as mxnet).

        Example::

            >>> import gradhub_compat.mxnet as mx
            >>> fc = mx.sym.FullyConnected(mx.sym.Variable("x"), num_hidden=3, name="fc")
            >>> fc.infer_shape_partial(x=(0, 5))
            ([(0, 5), (3, 5), (3,)], [(0, 3)], [])
            >>> fc.infer_shape_partial(fc_weight=(3, 5))
            ([(), (3, 5), ()], [()], [])
        """
        arg_shapes, outs, aux = self._infer(args, kwargs, "infer_shape_partial")
        return [s or () for s in arg_shapes], [s or () for s in outs], [s or () for s in aux]

    # -- binding ---------------------------------------------------------------------------------
    def bind(
        self,
        ctx: Any,
        args: Any,
        args_grad: Any = None,
        grad_req: Any = "write",
        aux_states: Any = None,
        group2ctx: Any = None,
        shared_exec: Any = None,
    ) -> Any:
        """Bind arrays to the arguments and return an :class:`~.executor.Executor`.

        ``args``: a list in :meth:`list_arguments` order, or a dict name -> NDArray (the arrays
        are used, not copied: writing into ``executor.arg_dict[name]`` changes the next forward).
        ``args_grad``: list or dict of NDArrays receiving the gradients (arguments without one get
        none). ``grad_req``: ``"write"`` (overwrite), ``"add"`` (accumulate) or ``"null"``, as a
        string for all arguments, a list, or a dict (missing names: ``"null"``).
        ``aux_states``: the arrays of :meth:`list_auxiliary_states` (a list in that order or a
        dict; used, not copied: ``BatchNorm`` updates its moving statistics in them), required
        when the symbol has auxiliary states.
        """
        from .executor import Executor

        return Executor(self, ctx, args, args_grad, grad_req, aux_states)

    def simple_bind(self, ctx: Any, grad_req: Any = "write", **kwargs: Any) -> Any:
        """Allocate zero arrays (and gradient arrays) from the given input shapes, then bind.

        ``type_dict`` (name -> dtype) gives some argument dtypes; the others (weights, biases,
        labels) and the gradient arrays take the dtype mxnet's type inference gives them: every
        supported operator has one dtype for its inputs and output. Without ``type_dict`` every
        argument is float32.
        """
        from . import ndarray as nd

        type_dict = kwargs.pop("type_dict", None) or {}
        shared_exec = kwargs.pop("shared_exec", None)
        shared_names = list(kwargs.pop("shared_arg_names", None) or [])
        shared_buffer = kwargs.pop("shared_buffer", None)
        if shared_buffer is not None and not isinstance(shared_buffer, dict):
            raise ValueError("simple_bind: shared_buffer in simple_bind must be dict or None")
        for k in ("stype_dict", "group2ctx"):
            kwargs.pop(k, None)
        arg_shapes, _, aux_shapes = self.infer_shape(**kwargs)
        if arg_shapes is None or aux_shapes is None:
            raise _MXNetValueError(
                f"simple_bind: the shapes {kwargs} do not determine every argument shape of "
                f"{self.list_arguments()}"
            )
        names = self.list_arguments()
        if type_dict:
            given = {n: np.dtype(t) for n, t in type_dict.items() if n in names}
            dtypes = _infer_types(self, given, "simple_bind")
            undecided = [n for n in names if n not in dtypes]
            if undecided:
                raise ValueError(
                    f"simple_bind: type inference cannot decide the dtype of {undecided} from "
                    f"type_dict={type_dict!r}; give them in type_dict (as mxnet)"
                )
        else:
            dtypes = {n: np.dtype(np.float32) for n in names}
        aux_names = self.list_auxiliary_states()
        aux_types = _infer_types(self, {n: dtypes[n] for n in names if n in dtypes}, "simple_bind")
        # as mxnet, the auxiliary states are allocated as zeros (initializers fill them)
        auxs = {
            n: nd.zeros(s, ctx, dtype=aux_types.get(n, np.dtype(np.float32)))
            for n, s in zip(aux_names, aux_shapes)
        }
        args = {n: nd.zeros(s, ctx, dtype=dtypes[n]) for n, s in zip(names, arg_shapes)}
        reqs = _grad_reqs(grad_req, names)
        grads = {
            n: nd.zeros(s, ctx, dtype=dtypes[n])
            for n, s in zip(names, arg_shapes)
            if reqs[n] != "null"
        }
        if shared_exec is not None and shared_buffer is not None:
            # as mxnet's GraphExecutor::InitArguments: the arguments named in shared_arg_names
            # (the weights of bucketing) are shared_exec's own arrays, gradients too; mxnet
            # 1.9.1 shares them only when a shared_buffer (a dict, possibly empty) is given
            for n in shared_names:
                if n not in args:
                    continue
                shared = shared_exec.arg_dict.get(n)
                if shared is None or shared.shape != args[n].shape:
                    raise MXNetError(
                        f"simple_bind: shared argument {n!r} has shape "
                        f"{None if shared is None else shared.shape} in shared_exec, "
                        f"{args[n].shape} here (mxnet: shape of shared arg mismatch)"
                    )
                args[n] = shared
                if n in grads and shared_exec.grad_dict.get(n) is not None:
                    grads[n] = shared_exec.grad_dict[n]
            for n in aux_names:  # (mxnet shares the auxiliary states of shared_exec too)
                shared = shared_exec.aux_dict.get(n)
                if shared is not None and shared.shape == auxs[n].shape:
                    auxs[n] = shared
        return self.bind(ctx, args, grads, grad_req, aux_states=auxs)

    # -- arithmetic ------------------------------------------------------------------------------
    def _arith(self, other: Any, op: str, reverse: bool = False) -> Symbol:
        if isinstance(other, Symbol):
            a, b = (other, self) if reverse else (self, other)
            return Symbol(f"_{op}", _auto_name(f"_{op.lower()}"), (a, b))
        if _is_scalar(other):
            name = f"_R{op}Scalar" if reverse else f"_{op}Scalar"
            hint = "_rpower_scalar" if name == "_RPowerScalar" else name.lower()  # mxnet's names
            return Symbol(
                name, _auto_name(hint), (self,), {"scalar": float(other)}, {"scalar": str(other)}
            )
        return NotImplemented

    def __add__(self, o: Any) -> Symbol:
        return self._arith(o, "Plus")

    def __radd__(self, o: Any) -> Symbol:
        return self._arith(o, "Plus")

    def __sub__(self, o: Any) -> Symbol:
        return self._arith(o, "Minus")

    def __rsub__(self, o: Any) -> Symbol:
        return self._arith(o, "Minus", reverse=True)

    def __mul__(self, o: Any) -> Symbol:
        return self._arith(o, "Mul")

    def __rmul__(self, o: Any) -> Symbol:
        return self._arith(o, "Mul")

    def __truediv__(self, o: Any) -> Symbol:
        return self._arith(o, "Div")

    def __rtruediv__(self, o: Any) -> Symbol:
        return self._arith(o, "Div", reverse=True)

    def __pow__(self, o: Any) -> Symbol:
        return self._arith(o, "Power")

    def __rpow__(self, o: Any) -> Symbol:
        return self._arith(o, "Power", reverse=True)

    def __neg__(self) -> Symbol:
        return self._arith(-1.0, "Mul")

    # in-place arithmetic is an NDArray operation (as mxnet: ``s += 1`` raises)
    def __iadd__(self, o: Any) -> Symbol:
        raise NotImplementedForSymbol("__iadd__", "+=")

    def __isub__(self, o: Any) -> Symbol:
        raise NotImplementedForSymbol("__isub__", "-=")

    def __imul__(self, o: Any) -> Symbol:
        raise NotImplementedForSymbol("__imul__", "*=")

    def __itruediv__(self, o: Any) -> Symbol:
        raise NotImplementedForSymbol("__itruediv__", "/=")

    # comparisons (1/0 in the input's dtype, no gradient; ``==``/``!=`` stay Python's identity
    # tests, so that symbols can be looked up in lists and dicts)
    def _compare(self, other: Any, op: str) -> Symbol:
        if isinstance(other, Symbol):
            return Symbol(f"_{op}", _auto_name(COMPARE_NAMES[op]), (self, other))
        if _is_scalar(other):
            return Symbol(
                f"_{op}Scalar",
                _auto_name(f"{COMPARE_NAMES[op]}_scalar"),
                (self,),
                {"scalar": float(other)},
                {"scalar": str(other)},
            )
        return NotImplemented

    def __gt__(self, o: Any) -> Symbol:
        """``self > o`` (mxnet's ``_greater``/``_greater_scalar``): 1 where true, else 0."""
        return self._compare(o, "Greater")

    def __ge__(self, o: Any) -> Symbol:
        return self._compare(o, "GreaterEqual")

    def __lt__(self, o: Any) -> Symbol:
        return self._compare(o, "Lesser")

    def __le__(self, o: Any) -> Symbol:
        return self._compare(o, "LesserEqual")

    # the operator methods of mxnet's Symbol used by Gluon's code
    def sum(self, *args: Any, **kwargs: Any) -> Symbol:
        """``mx.sym.sum(self, ...)``."""
        return sum(self, *args, **kwargs)  # type: ignore[no-any-return]

    def mean(self, *args: Any, **kwargs: Any) -> Symbol:
        """``mx.sym.mean(self, ...)``.

        Example::

            >>> import gradhub_compat.mxnet as mx
            >>> mx.sym.Variable("x").mean(axis=0, exclude=True).infer_shape(x=(2, 3, 4))[1]
            [(2,)]
        """
        return mean(self, *args, **kwargs)  # type: ignore[no-any-return]

    def reshape(self, *shape: Any, **kwargs: Any) -> Symbol:
        """``mx.sym.reshape(self, shape=...)`` (the shape as one tuple or as several ints)."""
        if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
            shape = tuple(shape[0])
        if shape:
            kwargs["shape"] = shape
        return reshape(self, **kwargs)  # type: ignore[no-any-return]

    def reshape_like(self, other: Symbol, **kwargs: Any) -> Symbol:
        """``mx.sym.reshape_like(self, other)``."""
        return reshape_like(self, other, **kwargs)  # type: ignore[no-any-return]

    def swapaxes(self, dim1: int = 0, dim2: int = 0, **kwargs: Any) -> Symbol:
        """``mx.sym.swapaxes(self, dim1, dim2)``."""
        return swapaxes(self, dim1=dim1, dim2=dim2, **kwargs)  # type: ignore[no-any-return]

    # -- composition and serialization ---------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Symbol:
        """Compose: a copy of this symbol with the arguments named in ``kwargs`` replaced by the
        given symbols (``net(fc_data=other)``), as mxnet's ``Symbol.__call__``; ``name=`` renames
        the copy's output node. As in mxnet, a layer built without data names its free input
        ``NAME_data`` (``FullyConnected(num_hidden=10, name="fc")`` has the arguments
        ``['fc_data', 'fc_weight', 'fc_bias']``), and positional inputs are refused
        (:class:`~.base.MXNetError`: general composition only takes keywords).

        Example::

            >>> import gradhub_compat.mxnet as mx
            >>> net = mx.sym.FullyConnected(num_hidden=10, name="fc")
            >>> net.list_arguments()
            ['fc_data', 'fc_weight', 'fc_bias']
            >>> net(fc_data=mx.sym.Variable("x")).list_arguments()
            ['x', 'fc_weight', 'fc_bias']
        """
        name = kwargs.pop("name", None)
        kwargs.pop("attr", None)
        if args and kwargs:
            raise TypeError(
                "Symbol.__call__: compose only accept input Symbols either as positional or "
                "keyword arguments, not both"
            )
        for v in (*args, *kwargs.values()):
            if not isinstance(v, Symbol):
                raise TypeError(
                    f"Symbol.__call__: Compose expect `Symbol` as arguments, got {type(v).__name__}"
                )
        if args:
            if self._op == "null":  # mxnet returns a copy of a variable unchanged
                return self._composed({}, name)
            raise MXNetError(
                f"Symbol.__call__: General composition only support kwargs for now ({len(args)} "
                f"positional inputs given; name the arguments to replace, one of "
                f"{self.list_arguments()})"
            )
        names = self.list_arguments() if self._op != "null" else []
        for k, v in kwargs.items():
            if k not in names:
                raise MXNetError(
                    f"Symbol.__call__: Symbol.ComposeKeyword argument name {k} not found. "
                    f"Candidate arguments: {names}"
                )
            if len(v._heads()) != 1:
                raise MXNetError(
                    f"Symbol.__call__: the symbol given for {k!r} has {len(v._heads())} outputs; "
                    "an argument takes a symbol of one output"
                )
        return self._composed({k: v._heads()[0] for k, v in kwargs.items()}, name)

    def _composed(self, replace: dict[str, Symbol], name: str | None) -> Symbol:
        """A copy of the graph with the variables named in ``replace`` replaced (the given
        symbols themselves are shared, not copied, as mxnet's compose)."""
        new: dict[int, Symbol] = {}
        for node in self._topo():
            if node._op == "null" and node._name in replace:
                new[id(node)] = replace[node._name]
                continue
            new[id(node)] = Symbol(
                node._op,
                node._name,
                [new[id(i)] for i in node._inputs],
                node._attrs,
                node._json,
            )
        out = new[id(self)]
        if name is not None and out._op != "Group":
            out._name = str(name)
        return out

    def __copy__(self) -> Symbol:
        """A copy of the graph (as mxnet's ``copy.copy``/``copy.deepcopy`` of a symbol)."""
        return self._composed({}, None)

    def __deepcopy__(self, memo: Any) -> Symbol:
        return self._composed({}, None)

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        """Pickled as its JSON text (as mxnet); unpickling calls :func:`load_json`."""
        return (load_json, (self.tojson(),))

    def tojson(self) -> str:
        """The graph as mxnet's JSON (``nodes``, ``arg_nodes``, ``node_row_ptr``, ``heads``,
        ``attrs``), in mxnet 1.9.1's layout; :func:`load_json` reads it back.

        Example::

            >>> import json
            >>> import gradhub_compat.mxnet as mx
            >>> fc = mx.sym.FullyConnected(mx.sym.Variable("x"), num_hidden=3, name="fc")
            >>> [n["op"] for n in json.loads(fc.tojson())["nodes"]]
            ['null', 'null', 'null', 'FullyConnected']
        """
        from .serialization import to_json

        return to_json(self)

    def save(self, fname: str, remove_amp_cast: bool = True) -> None:
        """Write :meth:`tojson` to the file ``fname``."""
        if not isinstance(fname, str):
            raise TypeError("Symbol.save: fname required to be a string")
        with open(fname, "w", encoding="utf-8") as f:
            f.write(self.tojson())

    def __bool__(self) -> bool:
        raise NotImplementedForSymbol("__bool__", "bool")

    def __repr__(self) -> str:
        if self._op == "Group":
            return f"<Symbol group [{', '.join(h._name for h in self._heads())}]>"
        return f"<Symbol {self._name}>"


def _grad_reqs(grad_req: Any, names: Sequence[str]) -> dict[str, str]:
    valid = ("write", "add", "null", "inplace")
    if isinstance(grad_req, str):
        reqs = {n: grad_req for n in names}
    elif isinstance(grad_req, (list, tuple)):
        if len(grad_req) != len(names):
            raise ValueError(
                f"bind: grad_req has {len(grad_req)} entries but the symbol has {len(names)} "
                f"arguments {list(names)}"
            )
        reqs = dict(zip(names, grad_req))
    elif isinstance(grad_req, dict):
        unknown = set(grad_req) - set(names)
        if unknown:
            raise ValueError(f"bind: grad_req names unknown arguments {sorted(unknown)}")
        reqs = {n: grad_req.get(n, "null") for n in names}
    else:
        raise TypeError(
            f"bind: grad_req must be a str, list or dict, got {type(grad_req).__name__}"
        )
    for n, r in reqs.items():
        if r not in valid:
            raise ValueError(f"bind: grad_req for {n!r} must be one of {valid}, got {r!r}")
        if r == "inplace":
            reqs[n] = "write"
    return reqs


def _infer_types(sym: Symbol, known: dict[str, np.dtype], what: str) -> dict[str, np.dtype]:
    """The argument dtypes that ``known`` (name -> dtype) determines, as mxnet's type inference:
    every supported operator has one dtype for all its inputs and its output. Raises a TypeError
    naming the operator and both dtypes when they disagree."""
    dtypes = _node_types(sym, known, what)
    return {n._name: dtypes[id(n)] for n in sym._topo() if n._op == "null" and id(n) in dtypes}


def _node_types(sym: Symbol, known: dict[str, np.dtype], what: str) -> dict[int, np.dtype]:
    """The dtype of every node (by id) that ``known`` determines (see :func:`_infer_types`)."""
    dtypes: dict[int, np.dtype] = {}
    topo = sym._topo()
    for node in topo:
        if node._op == "null" and node._name in known:
            dtypes[id(node)] = np.dtype(known[node._name])
    changed = True
    while changed:
        changed = False
        for node in topo:
            if node._op in ("null", "Group"):
                continue
            members = (node, *node._inputs)
            if node._op in ANY_DTYPE_INPUTS:  # (index, shape or condition inputs: any dtype)
                skip = ANY_DTYPE_INPUTS[node._op]
                members = (node, *(m for i, m in enumerate(node._inputs) if i not in skip))
            fixed = _sym_ops_more.output_dtype(node)  # (Cast, argsort, one_hot, arange...)
            if fixed is not None:
                if id(node) not in dtypes:
                    dtypes[id(node)] = fixed
                    changed = True
                members = tuple(m for m in members if m is not node)
            if node._op == "Embedding":
                # mxnet's EmbeddingOpType: the indices take any dtype; the weight and the output
                # have the layer's dtype (float32)
                members = (node, node._inputs[1])
                for m in members:
                    if id(m) not in dtypes:
                        dtypes[id(m)] = np.dtype(np.float32)
                        changed = True
            if node._op == "BatchNorm":
                # mxnet's BatchNormType: gamma, beta and the statistics have data's dtype, float32
                # for float16 data
                members = (node, node._inputs[0])
                data_dt = dtypes.get(id(node._inputs[0]), dtypes.get(id(node)))
                if data_dt is not None:
                    pdt = np.dtype(np.float32) if data_dt == np.float16 else data_dt
                    for m in node._inputs[1:]:
                        if id(m) not in dtypes:
                            dtypes[id(m)] = pdt
                            changed = True
                        elif dtypes[id(m)] != pdt:
                            raise _MXNetTypeError(
                                f"{what}: BatchNorm {node._name!r}: {m._name!r} is "
                                f"{dtypes[id(m)].name}, data {data_dt.name} needs {pdt.name} "
                                f"(mxnet: Error in operator {node._name}: Incompatible attr)"
                            )
            seen = [(m, dtypes[id(m)]) for m in members if id(m) in dtypes]
            if not seen:
                continue
            first, dt = seen[0]
            for m, other in seen[1:]:
                if other != dt:
                    raise _MXNetTypeError(
                        f"{what}: operator {node._op} {node._name!r} needs one dtype for its "
                        f"inputs and output, but {first._name!r} is {dt.name} and {m._name!r} is "
                        f"{other.name} (as mxnet: convert one with astype or give type_dict; "
                        f"mxnet: Error in operator {node._name}: Incompatible attr in node "
                        f"{node._name}: expected {dt.name}, got {other.name})"
                    )
            for m in members:
                if id(m) not in dtypes:
                    dtypes[id(m)] = dt
                    changed = True
    return dtypes


# -- constructors ---------------------------------------------------------------------------


def Variable(
    name: str,
    attr: Any = None,
    shape: Sequence[int] | None = None,
    lr_mult: Any = None,
    wd_mult: Any = None,
    dtype: Any = None,
    init: Any = None,
    stype: Any = None,
    **kwargs: Any,
) -> Symbol:
    """A named argument of the graph (its array is given at bind time); ``shape`` is a hint
    used by :meth:`Symbol.infer_shape`.
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"mx.sym.Variable: name must be a non-empty string, got {name!r}")
    json: dict[str, str] = {}
    if attr:
        json.update({str(k): str(v) for k, v in dict(attr).items()})
    if shape is not None:
        json["__shape__"] = str(tuple(shape))
    if lr_mult is not None:
        json["__lr_mult__"] = str(lr_mult)
    if wd_mult is not None:
        json["__wd_mult__"] = str(wd_mult)
    if dtype is not None:
        dt = np.dtype(dtype).name
        if dt not in _DTYPE_CODES:
            raise TypeError(f"mx.sym.Variable: dtype {dt} is not one of mxnet's dtypes")
        json["__dtype__"] = str(_DTYPE_CODES[dt])
    if init is not None:
        json["__init__"] = init if isinstance(init, str) else str(init.dumps())
    for k, v in kwargs.items():
        if k.startswith("__") and k.endswith("__"):
            json[k] = str(v)
        else:
            raise ValueError(
                f"mx.sym.Variable: attribute {k!r} must start and end with double underscores "
                "(as mxnet)"
            )
    return Symbol("null", name, (), {"shape": None if shape is None else tuple(shape)}, json)


var = Variable


#: mxnet's dtype codes (``__dtype__`` in JSON).
_DTYPE_CODES = {
    "float32": 0,
    "float64": 1,
    "float16": 2,
    "uint8": 3,
    "int32": 4,
    "int8": 5,
    "int64": 6,
}
#: ``attr={...}`` keys mxnet stores as ``__key__``
_SCOPED_ATTRS = ("ctx_group", "lr_mult", "wd_mult", "force_mirroring", "mirror_stage")


def _layer(hint: str, inputs: tuple[str, ...], free: tuple[str, ...]) -> Callable[..., Any]:
    """Decorate a layer constructor as mxnet's generated operator functions: positional
    arguments are the input symbols ``inputs`` (in order); a ``free`` input not given becomes
    the variable ``NAME_<input>`` (a layer built without data, to be composed later); the given
    keyword arguments become the node's JSON attributes (as strings), which the variables the
    layer creates share (as mxnet's); ``lr_mult``, ``wd_mult``, ``ctx_group``... are
    stored as ``__lr_mult__``... (mxnet's hidden keys), so that a ``Module`` scales the learning
    rate and weight decay of those variables."""

    def deco(fn: Callable[..., Symbol]) -> Callable[..., Symbol]:
        @functools.wraps(fn)
        def layer(*args: Any, **kwargs: Any) -> Symbol:
            if len(args) > len(inputs):
                raise TypeError(
                    f"mx.sym.{fn.__name__}: at most {len(inputs)} positional inputs {inputs}, got "
                    f"{len(args)} (give the other arguments by keyword)"
                )
            for k, v in zip(inputs, args):
                if k in kwargs:
                    raise TypeError(f"mx.sym.{fn.__name__}: input {k!r} given twice")
                kwargs[k] = v
            name = kwargs.pop("name", None) or _auto_name(hint)
            attr = kwargs.pop("attr", None)
            json = {
                k: str(v)
                for k, v in kwargs.items()
                if k not in inputs and v is not None and not isinstance(v, Symbol)
            }
            for k, v in dict(attr or {}).items():
                json[f"__{k}__" if k in _SCOPED_ATTRS else str(k)] = str(v)
            for k in _SCOPED_ATTRS:  # lr_mult=0 as a keyword: mxnet stores it as __lr_mult__
                if k in json:
                    json[f"__{k}__"] = json.pop(k)
            given = {id(v) for v in kwargs.values() if isinstance(v, Symbol)}
            for k in free:
                if kwargs.get(k) is None:
                    kwargs[k] = Variable(f"{name}_{k}")
            sym = fn(name=name, **kwargs)
            # (a SliceChannel's outputs are the nodes of a group)
            for node in sym._heads() if sym._op == "Group" else [sym]:
                node._json = dict(json)
                for i in node._inputs:
                    if id(i) not in given and i._op == "null":
                        i._json = {**json, **i._json}
            return sym

        return layer

    return deco


#: the names of the outputs of ``BatchNorm(output_mean_var=True)``
_BN_OUTPUTS = ("output", "mean", "var")


def _output_name(node: Symbol) -> str:
    if node._op == "null":
        return node._name
    if node._op == "SliceChannel":
        return f"{node._name}_output{node._attrs['index']}"
    if "key" in node._attrs:
        names = _BN_OUTPUTS if node._op == "BatchNorm" else _sym_norm.STAT_OUTPUTS
        return f"{node._name}_{names[node._attrs['index']]}"
    if node._op == "make_loss":  # (mxnet's FListOutputNames of make_loss)
        return f"{node._name}_loss"
    if node._op == "CTCLoss" or _sym_ops_more.hidden_outputs(node):  # (sort, topk too)
        return f"{node._name}_output0"
    return f"{node._name}_output"


def is_multi_output(node: Symbol) -> bool:
    """Whether ``node`` is one output of an operator of several visible outputs
    (``SliceChannel``, ``BatchNorm(output_mean_var=True)``): one node per output, sharing the
    operator's token (``key``) and inputs; attribute ``index`` tells which output it is."""
    return "key" in node._attrs


def output_key(node: Symbol) -> tuple[int, int]:
    """What the output nodes of one operator of several outputs share: its token and first
    input."""
    return (id(node._attrs["key"]), id(node._inputs[0]))


def num_visible_outputs(node: Symbol) -> int:
    if node._op == "SliceChannel":
        return int(node._attrs["num_outputs"])
    return len(_BN_OUTPUTS) if is_multi_output(node) else 1


def _sibling(node: Symbol, index: int) -> Symbol:
    """Output ``index`` of the operator that ``node`` is an output of."""
    out = Symbol(node._op, node._name, node._inputs, {**node._attrs, "index": index})
    out._json = dict(node._json)
    return out


def _data_arg(op: str, data: Any) -> Symbol:
    if not isinstance(data, Symbol):
        raise TypeError(f"mx.sym.{op}: data must be a Symbol, got {type(data).__name__}")
    return data


@_layer("fullyconnected", ("data", "weight", "bias"), ("data",))
def FullyConnected(
    data: Symbol | None = None,
    weight: Symbol | None = None,
    bias: Symbol | None = None,
    num_hidden: int | None = None,
    no_bias: bool = False,
    flatten: bool = True,
    name: str | None = None,
    **kwargs: Any,
) -> Symbol:
    """A dense layer ``y = x W^T + b`` with ``W`` of shape (num_hidden, in) and ``b`` of shape
    (num_hidden,); ``flatten=True`` flattens x to (batch, -1) first. Creates the arguments
    ``NAME_weight`` and ``NAME_bias`` unless given.
    """
    data = _data_arg("FullyConnected", data)
    if num_hidden is None:
        raise _MXNetValueError(
            "mx.sym.FullyConnected: Required parameter num_hidden of int is not presented, in "
            f'operator FullyConnected(name="{name}")'
        )
    if int(num_hidden) <= 0:
        raise _MXNetValueError(
            f"mx.sym.FullyConnected: num_hidden must be a positive int, got {num_hidden!r}"
        )
    name = name or _auto_name("fullyconnected")
    weight = weight if weight is not None else Variable(f"{name}_weight")
    inputs = [data, weight]
    if not no_bias:
        inputs.append(bias if bias is not None else Variable(f"{name}_bias"))
    return Symbol(
        "FullyConnected", name, inputs, {"num_hidden": int(num_hidden), "flatten": bool(flatten)}
    )


@_layer("activation", ("data",), ("data",))
def Activation(
    data: Symbol | None = None, act_type: str | None = None, name: str | None = None, **kwargs: Any
) -> Symbol:
    """An elementwise activation: ``act_type`` is relu, sigmoid, tanh, softrelu
    (log(1 + exp(x))) or softsign (x / (1 + |x|)).
    """
    data = _data_arg("Activation", data)
    if act_type not in ACT_TYPES:
        raise _MXNetValueError(
            f"mx.sym.Activation: act_type must be one of {ACT_TYPES}, got {act_type!r} (mxnet: "
            f"Invalid Input: '{act_type}', in operator Activation(name=\"{name}\"))"
        )
    return Symbol("Activation", name or _auto_name("activation"), [data], {"act_type": act_type})


def _check_norm(op: str, normalization: str) -> None:
    if normalization not in NORMALIZATIONS:
        raise _MXNetValueError(
            f"mx.sym.{op}: normalization must be one of {NORMALIZATIONS}, got {normalization!r}"
        )


@_layer("softmaxoutput", ("data", "label"), ("data",))
def SoftmaxOutput(
    data: Symbol | None = None,
    label: Symbol | None = None,
    grad_scale: float = 1.0,
    ignore_label: float = -1.0,
    multi_output: bool = False,
    use_ignore: bool = False,
    preserve_shape: bool = False,
    normalization: str = "null",
    out_grad: bool = False,
    smooth_alpha: float = 0.0,
    name: str | None = None,
    **kwargs: Any,
) -> Symbol:
    """Softmax with a cross-entropy gradient: the output is ``softmax(data)``; backward gives
    ``data`` the gradient ``grad_scale * (softmax(data) - onehot(label)) / norm`` and ignores the
    head gradient (a loss layer).

    The softmax runs over axis 1 after flattening data to (batch, -1), over axis 1 of the
    unflattened data with ``multi_output`` (labels (batch, d1, ...)), or over the last axis with
    ``preserve_shape``. Without ``multi_output`` the label has data's shape without the last
    axis; by default row ``i`` of the flattened data reads entry ``i`` of the flattened label
    (as mxnet's kernel: for data of more than 2 axes the other entries are not class indices).
    ``norm`` follows mxnet's kernel: ``"null"`` 1 (``multi_output``: d = d1 * ...), ``"batch"``
    the number of label entries (``multi_output``: batch * d), ``"valid"`` the number of label
    entries not equal to ``ignore_label``. With ``use_ignore`` those labels get no gradient. A
    label of data's own shape holds probabilities: the gradient is
    ``grad_scale * (softmax(data) - label)``. Creates the argument ``NAME_label`` unless given.
    """
    data = _data_arg("SoftmaxOutput", data)
    _check_norm("SoftmaxOutput", normalization)
    if out_grad:
        raise NotImplementedError("mx.sym.SoftmaxOutput: out_grad=True is not supported")
    if smooth_alpha:
        raise NotImplementedError("mx.sym.SoftmaxOutput: smooth_alpha is not supported")
    name = name or _auto_name("softmaxoutput")
    label = label if label is not None else Variable(f"{name}_label")
    attrs = {
        "grad_scale": float(grad_scale),
        "ignore_label": float(ignore_label),
        "multi_output": bool(multi_output),
        "use_ignore": bool(use_ignore),
        "preserve_shape": bool(preserve_shape),
        "normalization": normalization,
    }
    return Symbol("SoftmaxOutput", name, [data, label], attrs)


@_layer("makeloss", ("data",), ("data",))
def MakeLoss(
    data: Symbol | None = None,
    grad_scale: float = 1.0,
    valid_thresh: float = 0.0,
    normalization: str = "null",
    name: str | None = None,
    **kwargs: Any,
) -> Symbol:
    """Make ``data`` a loss: the output is ``data``; backward gives it the gradient
    ``grad_scale / norm`` everywhere, ignoring the head gradient. ``norm`` is 1 (``"null"``), the
    batch size (``"batch"``) or the number of elements greater than ``valid_thresh``
    (``"valid"``).
    """
    data = _data_arg("MakeLoss", data)
    _check_norm("MakeLoss", normalization)
    attrs = {
        "grad_scale": float(grad_scale),
        "valid_thresh": float(valid_thresh),
        "normalization": normalization,
    }
    return Symbol("MakeLoss", name or _auto_name("makeloss"), [data], attrs)


@_layer("blockgrad", ("data",), ("data",))
def BlockGrad(data: Symbol | None = None, name: str | None = None, **kwargs: Any) -> Symbol:
    """``data`` unchanged, stopping the gradient (nothing flows back through it)."""
    data = _data_arg("BlockGrad", data)
    return Symbol("BlockGrad", name or _auto_name("blockgrad"), [data])


def _unary_op(op: str, formula: str) -> Callable[..., Symbol]:
    def function(data: Symbol | None = None, name: str | None = None, **kwargs: Any) -> Symbol:
        return Symbol(op, name or _auto_name(op), [_data_arg(op, data)])

    function.__name__ = function.__qualname__ = op
    function.__doc__ = (
        f"mxnet's ``{op}``: ``{formula}`` elementwise; the output has the shape and dtype of "
        f"``data``.\n\nExample::\n\n    >>> import gradhub_compat.mxnet as mx\n"
        f"    >>> mx.sym.{op}(mx.sym.Variable('x')).infer_shape(x=(2, 3))[1]\n    [(2, 3)]\n"
    )
    return _layer(op, ("data",), ("data",))(function)


abs = _unary_op("abs", "|x|")
cos = _unary_op("cos", "cos(x)")
exp = _unary_op("exp", "e^x")
log = _unary_op("log", "ln(x)")
relu = _unary_op("relu", "max(x, 0)")
sigmoid = _unary_op("sigmoid", "1 / (1 + e^-x)")
sin = _unary_op("sin", "sin(x)")
sqrt = _unary_op("sqrt", "x^(1/2)")
square = _unary_op("square", "x^2")
tanh = _unary_op("tanh", "tanh(x)")


def _reduce_op(op: str, formula: str) -> Callable[..., Symbol]:
    def function(
        data: Symbol | None = None,
        axis: Any = None,
        keepdims: bool = False,
        exclude: bool = False,
        name: str | None = None,
        **kwargs: Any,
    ) -> Symbol:
        data = _data_arg(op, data)
        if axis is not None:
            axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
            if not all(isinstance(a, (int, np.integer)) for a in axes):
                raise TypeError(
                    f"mx.sym.{op}: axis must be an int or a tuple of ints, got {axis!r}"
                )
            axis = tuple(int(a) for a in axes)
        attrs = {"axis": axis, "keepdims": bool(keepdims), "exclude": bool(exclude)}
        return Symbol(op, name or _auto_name(op), [data], attrs)

    function.__name__ = function.__qualname__ = op
    function.__doc__ = (
        f"mxnet's ``{op}``: {formula} over ``axis`` (every axis by default or with ``axis=()``, "
        "mxnet's default; a full reduction "
        "has shape (1,)), keeping the reduced axes as 1 with ``keepdims``; with ``exclude`` "
        "over every axis but those of ``axis``.\n\nExample::\n\n"
        "    >>> import gradhub_compat.mxnet as mx\n"
        f"    >>> mx.sym.{op}(mx.sym.Variable('x'), axis=1).infer_shape(x=(2, 3))[1]\n"
        "    [(2,)]\n"
    )
    return _layer(op, ("data",), ("data",))(function)


sum = _reduce_op("sum", "the sum")
mean = _reduce_op("mean", "the mean")


def reduce_axes(attrs: dict[str, Any], ndim: int) -> tuple[int, ...]:
    """The axes (non-negative, sorted) that ``sum``/``mean`` with ``attrs`` reduce on data of
    ``ndim`` axes, as mxnet's ``ReduceAxesShape``: every axis for ``axis`` None or ``()``
    (with or without ``exclude``), else those of ``axis``, or all the others with
    ``exclude``."""
    axis = attrs["axis"]
    if axis is None or axis == ():
        return tuple(range(ndim))
    given = {a % ndim for a in axis}
    if attrs.get("exclude"):
        return tuple(i for i in range(ndim) if i not in given)
    return tuple(sorted(given))


def Group(symbols: Sequence[Symbol]) -> Symbol:
    """A symbol whose outputs are the outputs of ``symbols`` (bound together)."""
    symbols = list(symbols)
    if not symbols or not all(isinstance(s, Symbol) for s in symbols):
        raise TypeError("mx.sym.Group: expected a non-empty list of Symbols")
    return Symbol("Group", _auto_name("group"), symbols)


def _broadcast(op: str, lhs: Any, rhs: Any, name: str | None) -> Symbol:
    for arg, v in (("lhs", lhs), ("rhs", rhs)):
        if not isinstance(v, Symbol):
            raise TypeError(f"mx.sym.{op}: {arg} must be a Symbol, got {type(v).__name__}")
    return Symbol(op, name or _auto_name(op), [lhs, rhs])


def _broadcast_op(op: str, doc: str, alias: str | None = None) -> Callable[..., Symbol]:
    """mx.sym.<op>(lhs, rhs, name=None): a binary operator with numpy broadcasting."""

    def symbol(
        lhs: Symbol | None = None, rhs: Symbol | None = None, name: str | None = None, **kwargs: Any
    ) -> Symbol:
        return _broadcast(op, lhs, rhs, name)

    symbol.__name__ = symbol.__qualname__ = alias or op
    symbol.__doc__ = doc
    return _layer(alias or op, ("lhs", "rhs"), ("lhs", "rhs"))(symbol)


_SUMMED = "; each operand's gradient is summed back to its shape."
broadcast_add = _broadcast_op("broadcast_add", "``lhs + rhs`` with numpy broadcasting" + _SUMMED)
broadcast_sub = _broadcast_op("broadcast_sub", "``lhs - rhs`` with numpy broadcasting" + _SUMMED)
broadcast_mul = _broadcast_op("broadcast_mul", "``lhs * rhs`` with numpy broadcasting" + _SUMMED)
broadcast_div = _broadcast_op("broadcast_div", "``lhs / rhs`` with numpy broadcasting" + _SUMMED)
broadcast_power = _broadcast_op(
    "broadcast_power", "``lhs ** rhs`` with numpy broadcasting" + _SUMMED
)
broadcast_maximum = _broadcast_op(
    "broadcast_maximum",
    "The elementwise maximum with numpy broadcasting; at ties the gradient goes to ``lhs`` "
    "(as mxnet).",
)
broadcast_minimum = _broadcast_op(
    "broadcast_minimum",
    "The elementwise minimum with numpy broadcasting; at ties the gradient goes to ``lhs`` "
    "(as mxnet).",
)


def _elemwise_op(fn: str, op: str, formula: str) -> Callable[..., Symbol]:
    """mx.sym.elemwise_<op>(lhs, rhs, name=None): the operator of ``a + b`` (``_Plus``...)."""

    def symbol(
        lhs: Symbol | None = None, rhs: Symbol | None = None, name: str | None = None, **kwargs: Any
    ) -> Symbol:
        for arg, v in (("lhs", lhs), ("rhs", rhs)):
            if not isinstance(v, Symbol):
                raise TypeError(f"mx.sym.{fn}: {arg} must be a Symbol, got {type(v).__name__}")
        return Symbol(op, name or _auto_name(fn), [lhs, rhs])  # type: ignore[list-item]

    symbol.__name__ = symbol.__qualname__ = fn
    symbol.__doc__ = (
        f"``{formula}``, the operator of the symbol arithmetic (node named ``{fn}0``...)."
    )
    return _layer(fn, ("lhs", "rhs"), ("lhs", "rhs"))(symbol)


elemwise_add = _elemwise_op("elemwise_add", "_Plus", "lhs + rhs")
elemwise_sub = _elemwise_op("elemwise_sub", "_Minus", "lhs - rhs")
elemwise_mul = _elemwise_op("elemwise_mul", "_Mul", "lhs * rhs")
elemwise_div = _elemwise_op("elemwise_div", "_Div", "lhs / rhs")

#: mxnet's aliases: the same operators, their nodes named after the alias (``broadcast_plus0``)
broadcast_plus = _broadcast_op(
    "broadcast_add", "``broadcast_add`` (mxnet's alias)" + _SUMMED, "broadcast_plus"
)
broadcast_minus = _broadcast_op(
    "broadcast_sub", "``broadcast_sub`` (mxnet's alias)" + _SUMMED, "broadcast_minus"
)


def _select(op: str, left: Any, right: Any, name: str | None) -> Any:
    """mxnet's ``maximum``/``minimum``: ``_Maximum`` of two symbols, ``_MaximumScalar`` of a
    symbol and a number (either side), the Python result for two numbers."""
    fn = "mx.sym." + op.lower()
    if isinstance(left, Symbol) and isinstance(right, Symbol):
        return Symbol(f"_{op}", name or _auto_name(f"_{op.lower()}"), [left, right])
    if isinstance(left, Symbol) and _is_scalar(right):
        left, right = left, right
    elif _is_scalar(left) and isinstance(right, Symbol):
        left, right = right, left
    elif _is_scalar(left) and _is_scalar(right):
        # (not max()/min(): mx.sym.max and mx.sym.min are operators of this module)
        # (mxnet's own expressions: NaN and ties go to the right-hand side)
        if op == "Maximum":
            return left if left > right else right
        return left if left < right else right
    else:
        raise TypeError(
            f"{fn}: types ({type(left).__name__}, {type(right).__name__}) not supported "
            "(Symbols or numbers)"
        )
    sname = f"_{op}Scalar"
    return Symbol(
        sname,
        name or _auto_name(sname.lower()),
        [left],
        {"scalar": float(right)},
        {"scalar": str(right)},
    )


def maximum(left: Any, right: Any, name: str | None = None) -> Any:
    """The elementwise maximum of two symbols (same shapes), or of a symbol and a number; at ties
    the gradient goes to the symbol (the left one of two), as mxnet. Two numbers give
    ``max(left, right)``.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> x = mx.sym.Variable("x")
        >>> mx.sym.maximum(x, 0, name="m").list_outputs(), mx.sym.maximum(2, 3)
        (['m_output'], 3)
    """
    return _select("Maximum", left, right, name)


def minimum(left: Any, right: Any, name: str | None = None) -> Any:
    """The elementwise minimum of two symbols (same shapes), or of a symbol and a number; at ties
    the gradient goes to the symbol (the left one of two), as mxnet. Two numbers give
    ``min(left, right)``."""
    return _select("Minimum", left, right, name)


@_layer("dot", ("lhs", "rhs"), ("lhs", "rhs"))
def dot(
    lhs: Symbol | None = None,
    rhs: Symbol | None = None,
    transpose_a: bool = False,
    transpose_b: bool = False,
    forward_stype: Any = None,
    name: str | None = None,
    **kwargs: Any,
) -> Symbol:
    """mxnet's ``dot``: ``lhs`` contracted over its last axis with the first axis of ``rhs``,
    ``out[i..., j...] = sum_k lhs[i..., k] * rhs[k, j...]``; ``transpose_a``/``transpose_b``
    reverse the axes of an operand first (``x.T``). Two 1-D operands give shape (1,).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> a, b = mx.sym.Variable("a"), mx.sym.Variable("b")
        >>> mx.sym.dot(a, b, transpose_a=True).infer_shape(a=(3, 2), b=(3, 4))[1]
        [(2, 4)]
    """
    for arg, v in (("lhs", lhs), ("rhs", rhs)):
        if not isinstance(v, Symbol):
            raise TypeError(f"mx.sym.dot: {arg} must be a Symbol, got {type(v).__name__}")
    if forward_stype not in (None, "default"):
        raise NotImplementedError(
            f"mx.sym.dot: forward_stype={forward_stype!r} (sparse storage) is not supported "
            "(docs/migration-mxnet.md)"
        )
    attrs = {"transpose_a": bool(transpose_a), "transpose_b": bool(transpose_b)}
    return Symbol("dot", name or _auto_name("dot"), [lhs, rhs], attrs)  # type: ignore[list-item]


@_layer("softmax", ("data",), ("data",))
def softmax(
    data: Symbol | None = None,
    length: Symbol | None = None,
    axis: int = -1,
    temperature: float | None = None,
    dtype: Any = None,
    use_length: bool = False,
    name: str | None = None,
    **kwargs: Any,
) -> Symbol:
    """mxnet's ``softmax``: ``exp(x / t) / sum(exp(x / t), axis)`` along ``axis`` (default the
    last) with temperature ``t`` (default 1); its gradient is the softmax's true one (not a
    loss layer: the head gradient is used).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.sym.softmax(mx.sym.Variable("x")).infer_shape(x=(2, 3))[1]
        [(2, 3)]
    """
    data = _data_arg("softmax", data)
    if dtype is not None or use_length or length is not None:
        raise NotImplementedError(
            "mx.sym.softmax: dtype, length and use_length are not supported "
            "(docs/migration-mxnet.md)"
        )
    t = 1.0 if temperature is None else float(temperature)
    if t == 0.0:
        raise ValueError("mx.sym.softmax: temperature must be nonzero")
    return Symbol("softmax", name or _auto_name("softmax"), [data], {"axis": int(axis), "t": t})


# -- convolutional networks (docs/migration-mxnet.md) ------------------------------------------

_DOCS = "docs/migration-mxnet.md"
_LAYOUTS = (None, "NCW", "NCHW", "NCDHW")


def _ints(fn: str, arg: str, v: Any) -> tuple[int, ...]:
    """A tuple of ints from an int or a sequence of ints (mxnet's ``Shape`` parameters)."""
    if v is None:
        return ()
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return (int(v),)
    try:
        return tuple(int(a) for a in v)
    except (TypeError, ValueError):
        raise _MXNetValueError(
            f"mx.sym.{fn}: {arg} must be an int or a tuple of ints, got {v!r}"
        ) from None


def _layout(fn: str, layout: Any) -> None:
    if layout not in _LAYOUTS:
        raise NotImplementedError(
            f"mx.sym.{fn}: layout={layout!r} is not supported (channels first only: NCW, NCHW, "
            f"NCDHW; {_DOCS})"
        )


def _conv_kernel(fn: str, kernel: Any, num_filter: Any, layout: Any, name: Any) -> tuple[int, ...]:
    """The checked ``kernel`` of ``mx.sym.<fn>`` (``Convolution``, ``Deconvolution``): both
    ``kernel`` and ``num_filter`` given, a channels-first ``layout``, 1 to 3 positive sizes."""
    if kernel is None or num_filter is None:
        raise _MXNetValueError(
            f"mx.sym.{fn}: Required parameter kernel and num_filter are not presented, in "
            f'operator {fn}(name="{name}")'
        )
    _layout(fn, layout)
    k = _ints(fn, "kernel", kernel)
    if not 1 <= len(k) <= 3 or any(d <= 0 for d in k):
        raise _MXNetValueError(f"mx.sym.{fn}: kernel={kernel!r} must have 1 to 3 positive sizes")
    return k


def _conv_filters(fn: str, num_filter: Any, num_group: Any) -> int:
    """``int(num_filter)``, checked to be a positive multiple of ``num_group`` (``mx.sym.<fn>``)."""
    if int(num_filter) <= 0 or int(num_group) <= 0 or int(num_filter) % int(num_group):
        raise _MXNetValueError(
            f"mx.sym.{fn}: num_filter={num_filter} must be a positive multiple of "
            f"num_group={num_group}"
        )
    return int(num_filter)


def _conv_inputs(
    prefix: str, name: str | None, data: Symbol, weight: Any, bias: Any, no_bias: bool
) -> tuple[str, list[Symbol]]:
    """The node name (``name`` or an automatic ``<prefix>N``) and the inputs of a convolution
    symbol: ``data``, ``weight`` (a new ``<name>_weight`` Variable when None) and, unless
    ``no_bias``, ``bias`` (a new ``<name>_bias`` Variable when None)."""
    name = name or _auto_name(prefix)
    inputs = [data, weight if weight is not None else Variable(f"{name}_weight")]
    if not no_bias:
        inputs.append(bias if bias is not None else Variable(f"{name}_bias"))
    return name, inputs


@_layer("convolution", ("data", "weight", "bias"), ("data",))
def Convolution(
    data: Symbol | None = None,
    weight: Symbol | None = None,
    bias: Symbol | None = None,
    kernel: Any = None,
    stride: Any = (),
    dilate: Any = (),
    pad: Any = (),
    num_filter: int | None = None,
    num_group: int = 1,
    workspace: int = 1024,
    no_bias: bool = False,
    cudnn_tune: Any = None,
    cudnn_off: bool = False,
    layout: str | None = None,
    name: str | None = None,
    **kwargs: Any,
) -> Symbol:
    """mxnet's ``Convolution`` (layouts NCW, NCHW, NCDHW; the formula of ``mx.nd.Convolution``):
    ``y[n, o, p] = b[o] + sum_{c, k} W[o, c, k] x[n, g(o) C/num_group + c, p * stride + k *
    dilate - pad]``. Creates ``NAME_weight`` of shape ``(num_filter, C / num_group, *kernel)``
    and, unless ``no_bias``, ``NAME_bias`` of shape ``(num_filter,)``; each spatial output size
    is ``(L + 2 pad - dilate (k - 1) - 1) // stride + 1``.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> c = mx.sym.Convolution(mx.sym.Variable("data"), kernel=(5, 5), num_filter=20,
        ...                        name="conv1")
        >>> c.list_arguments(), c.infer_shape(data=(2, 1, 28, 28))[1]
        (['data', 'conv1_weight', 'conv1_bias'], [(2, 20, 24, 24)])
    """
    data = _data_arg("Convolution", data)
    k = _conv_kernel("Convolution", kernel, num_filter, layout, name)
    nsp = len(k)
    st = _ints("Convolution", "stride", stride) or (1,) * nsp
    dl = _ints("Convolution", "dilate", dilate) or (1,) * nsp
    pd = _ints("Convolution", "pad", pad) or (0,) * nsp
    for arg, t in (("stride", st), ("dilate", dl), ("pad", pd)):
        if len(t) != nsp:
            raise _MXNetValueError(
                f"mx.sym.Convolution: {arg}={t} must have {nsp} values (one per kernel axis)"
            )
    nf = _conv_filters("Convolution", num_filter, num_group)
    name, inputs = _conv_inputs("convolution", name, data, weight, bias, no_bias)
    attrs = {
        "kernel": k,
        "stride": st,
        "dilate": dl,
        "pad": pd,
        "num_filter": nf,
        "num_group": int(num_group),
        "no_bias": bool(no_bias),
    }
    return Symbol("Convolution", name, inputs, attrs)


@_layer("deconvolution", ("data", "weight", "bias"), ("data",))
def Deconvolution(
    data: Symbol | None = None,
    weight: Symbol | None = None,
    bias: Symbol | None = None,
    kernel: Any = None,
    stride: Any = (),
    dilate: Any = (),
    pad: Any = (),
    adj: Any = (),
    target_shape: Any = (),
    num_filter: int | None = None,
    num_group: int = 1,
    workspace: int = 512,
    no_bias: bool = True,
    cudnn_tune: Any = None,
    cudnn_off: bool = False,
    layout: str | None = None,
    name: str | None = None,
    **kwargs: Any,
) -> Symbol:
    """mxnet's ``Deconvolution`` (the transposed convolution; layouts NCW, NCHW, NCDHW; the rules
    of ``mx.nd.Deconvolution``): ``y[n, g(c) F/num_group + f, i * stride + k * dilate - pad] +=
    W[c, f, k] x[n, c, i]``. Creates ``NAME_weight`` of shape ``(C, num_filter / num_group,
    *kernel)`` and, with ``no_bias=False`` (mxnet's default is True), ``NAME_bias`` of shape
    ``(num_filter,)``; each spatial output size is ``(L - 1) stride - 2 pad + dilate (k - 1) + 1
    + adj``, or ``target_shape`` when given (the padding and ``adj`` then derived from it, as
    mxnet).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> d = mx.sym.Deconvolution(mx.sym.Variable("x"), kernel=(4, 4), stride=(2, 2),
        ...                          pad=(1, 1), num_filter=3, name="up")
        >>> d.list_arguments(), d.infer_shape(x=(2, 8, 5, 5))[1]
        (['x', 'up_weight'], [(2, 3, 10, 10)])
    """
    data = _data_arg("Deconvolution", data)
    k = _conv_kernel("Deconvolution", kernel, num_filter, layout, name)
    nsp = len(k)
    given = {
        "stride": _ints("Deconvolution", "stride", stride),
        "dilate": _ints("Deconvolution", "dilate", dilate),
        "pad": _ints("Deconvolution", "pad", pad),
        "adj": _ints("Deconvolution", "adj", adj),
        "target_shape": _ints("Deconvolution", "target_shape", target_shape),
    }
    for arg, t in given.items():
        if t and len(t) != nsp:
            raise _MXNetValueError(
                f"mx.sym.Deconvolution: {arg}={t} must have {nsp} values (one per kernel axis)"
            )
    nf = _conv_filters("Deconvolution", num_filter, num_group)
    if no_bias and bias is not None:
        raise _MXNetValueError(
            "mx.sym.Deconvolution: a bias is given with no_bias=True (mxnet's default); pass "
            "no_bias=False"
        )
    name, inputs = _conv_inputs("deconvolution", name, data, weight, bias, no_bias)
    attrs = {
        "kernel": k,
        **given,
        "num_filter": nf,
        "num_group": int(num_group),
        "no_bias": bool(no_bias),
    }
    return Symbol("Deconvolution", name, inputs, attrs)


POOL_TYPES = ("max", "avg", "sum")
POOLING_CONVENTIONS = ("valid", "full")


@_layer("pooling", ("data",), ("data",))
def Pooling(
    data: Symbol | None = None,
    kernel: Any = (),
    pool_type: str = "max",
    global_pool: bool = False,
    cudnn_off: bool = False,
    pooling_convention: str = "valid",
    stride: Any = (),
    pad: Any = (),
    p_value: Any = None,
    count_include_pad: Any = None,
    layout: str | None = None,
    name: str | None = None,
    **kwargs: Any,
) -> Symbol:
    """mxnet's ``Pooling`` (channels first; the formula of ``mx.nd.Pooling``): ``max``, ``avg``
    (the window mean, counting the padding unless ``count_include_pad=False``) or ``sum`` over
    windows of the spatial axes; ``stride`` defaults to 1, ``pad`` to 0; ``global_pool`` pools
    each whole spatial extent. Output size ``(L + 2 pad - k) // stride + 1`` with
    ``pooling_convention="valid"``, rounded up with ``"full"`` (a window that would be partial
    raises NotImplementedError at forward, as ``mx.nd.Pooling``). ``lp`` pooling and
    channel-last layouts raise NotImplementedError.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> p = mx.sym.Pooling(mx.sym.Variable("x"), kernel=(2, 2), stride=(2, 2), pool_type="max")
        >>> p.infer_shape(x=(2, 3, 8, 8))[1]
        [(2, 3, 4, 4)]
    """
    data = _data_arg("Pooling", data)
    _layout("Pooling", layout)
    if pool_type not in POOL_TYPES:
        if pool_type == "lp":
            raise NotImplementedError(f"mx.sym.Pooling: pool_type='lp' is not supported ({_DOCS})")
        raise _MXNetValueError(
            f"mx.sym.Pooling: Invalid Input: '{pool_type}', valid values are: "
            "{'avg', 'lp', 'max', 'sum'}"
        )
    if pooling_convention not in POOLING_CONVENTIONS:
        if pooling_convention == "same":
            raise NotImplementedError(
                f"mx.sym.Pooling: pooling_convention='same' is not supported ({_DOCS})"
            )
        raise _MXNetValueError(
            f"mx.sym.Pooling: Invalid Input: '{pooling_convention}', valid values are: "
            "{'full', 'same', 'valid'}"
        )
    k = _ints("Pooling", "kernel", kernel)
    if not global_pool and not k:
        raise _MXNetValueError("mx.sym.Pooling: kernel must be given unless global_pool=True")
    attrs = {
        "kernel": k,
        "pool_type": pool_type,
        "global_pool": bool(global_pool),
        "pooling_convention": pooling_convention,
        "stride": _ints("Pooling", "stride", stride),
        "pad": _ints("Pooling", "pad", pad),
        "count_include_pad": None if count_include_pad is None else bool(count_include_pad),
    }
    return Symbol("Pooling", name or _auto_name("pooling"), [data], attrs)


def _flatten_layer(hint: str) -> Callable[..., Symbol]:
    @_layer(hint, ("data",), ("data",))
    def Flatten(data: Symbol | None = None, name: str | None = None, **kwargs: Any) -> Symbol:
        """mxnet's ``Flatten``: shape ``(d0, d1 * d2 * ...)`` (the formula of
        ``mx.nd.Flatten``).

        Example::

            >>> import gradhub_compat.mxnet as mx
            >>> mx.sym.Flatten(mx.sym.Variable("x")).infer_shape(x=(2, 3, 4))[1]
            [(2, 12)]
        """
        data = _data_arg("Flatten", data)
        return Symbol("Flatten", name or _auto_name("flatten"), [data])

    return Flatten


Flatten = _flatten_layer("flatten")
flatten = Flatten


@_layer("dropout", ("data",), ("data",))
def Dropout(
    data: Symbol | None = None,
    p: float = 0.5,
    mode: str = "training",
    axes: Any = (),
    cudnn_off: bool = False,
    name: str | None = None,
    **kwargs: Any,
) -> Symbol:
    """mxnet's ``Dropout``: at ``forward(is_train=True)`` (or always with ``mode="always"``)
    each element is kept with probability ``1 - p`` and scaled by ``1 / (1 - p)``, the others
    are 0 (``axes`` share one draw along those axes); otherwise the data pass unchanged. The
    gradient is the same mask times the head gradient. The mask is drawn from
    ``gradhub.random.generator()`` (``mx.random.seed``), as ``mx.nd.Dropout``: not mxnet's
    random numbers.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.sym.Dropout(mx.sym.Variable("x"), p=0.3).infer_shape(x=(2, 3))[1]
        [(2, 3)]
    """
    data = _data_arg("Dropout", data)
    if mode not in ("training", "always"):
        raise _MXNetValueError(
            f"mx.sym.Dropout: Invalid Input: '{mode}', valid values are: {{'always', 'training'}}"
        )
    if not 0.0 <= float(p) <= 1.0:
        raise _MXNetValueError(f"mx.sym.Dropout: p={p} must be in [0, 1]")
    attrs = {"p": float(p), "mode": mode, "axes": _ints("Dropout", "axes", axes)}
    return Symbol("Dropout", name or _auto_name("dropout"), [data], attrs)


@_layer("batchnorm", ("data", "gamma", "beta", "moving_mean", "moving_var"), ("data",))
def BatchNorm(
    data: Symbol | None = None,
    gamma: Symbol | None = None,
    beta: Symbol | None = None,
    moving_mean: Symbol | None = None,
    moving_var: Symbol | None = None,
    eps: float = 1e-3,
    momentum: float = 0.9,
    fix_gamma: bool = True,
    use_global_stats: bool = False,
    output_mean_var: bool = False,
    axis: int = 1,
    cudnn_off: bool = False,
    min_calib_range: Any = None,
    max_calib_range: Any = None,
    name: str | None = None,
    **kwargs: Any,
) -> Symbol:
    """mxnet's ``BatchNorm`` over every axis but ``axis`` (the formula of ``mx.nd.BatchNorm``):
    ``y = (x - mean) / sqrt(var + eps) * gamma + beta``. Creates the arguments ``NAME_gamma``,
    ``NAME_beta`` and the auxiliary states ``NAME_moving_mean`` (initializer ``zero``) and
    ``NAME_moving_var`` (``one``), each of shape ``(C,)``.

    ``fix_gamma`` (the default, as mxnet) takes gamma as 1 with a zero gradient, and every
    ``forward`` writes 1 into the bound gamma array (as mxnet 1.9.1). At
    ``forward(is_train=True)`` without ``use_global_stats``, ``mean`` and ``var`` are the batch's
    (biased variance); the following ``backward`` updates the auxiliary states in place, as
    mxnet 1.9.1 does, ``moving = momentum * moving + (1 - momentum) * batch`` with the batch's
    biased variance. Otherwise the moving statistics are used. ``output_mean_var=True`` adds the
    outputs ``NAME_mean`` and ``NAME_var``, as mxnet 1.9.1: the batch's mean and ``1 / sqrt(var +
    eps)`` in training, the moving mean and ``1 / sqrt(moving_var + eps)`` otherwise, without
    gradients.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> bn = mx.sym.BatchNorm(mx.sym.Variable("x"), name="bn1")
        >>> bn.infer_shape(x=(2, 3, 4, 4))
        ([(2, 3, 4, 4), (3,), (3,)], [(2, 3, 4, 4)], [(3,), (3,)])
    """
    data = _data_arg("BatchNorm", data)
    if min_calib_range is not None or max_calib_range is not None:
        raise NotImplementedError(
            f"mx.sym.BatchNorm: min_calib_range/max_calib_range (quantization) are not "
            f"supported ({_DOCS})"
        )
    if not float(eps) > 0.0:
        raise _MXNetValueError(f"mx.sym.BatchNorm: eps={eps} must be positive")
    name = name or _auto_name("batchnorm")
    inputs = [
        data,
        gamma if gamma is not None else Variable(f"{name}_gamma"),
        beta if beta is not None else Variable(f"{name}_beta"),
        moving_mean
        if moving_mean is not None
        else Variable(f"{name}_moving_mean", init='["zero", {}]'),
        moving_var
        if moving_var is not None
        else Variable(f"{name}_moving_var", init='["one", {}]'),
    ]
    attrs = {
        "eps": float(eps),
        "momentum": float(momentum),
        "fix_gamma": bool(fix_gamma),
        "use_global_stats": bool(use_global_stats),
        "axis": int(axis),
    }
    if not output_mean_var:
        return Symbol("BatchNorm", name, inputs, attrs)
    token = object()
    outs = [
        Symbol("BatchNorm", name, inputs, {**attrs, "index": i, "key": token}) for i in range(3)
    ]
    return Symbol("Group", name, outs)


# LayerNorm, InstanceNorm, GroupNorm, pad: their rules are in _sym_norm.py
_NORM_INPUTS = ("data", "gamma", "beta")
LayerNorm = _layer("layernorm", _NORM_INPUTS, ("data",))(_sym_norm.LayerNorm)
InstanceNorm = _layer("instancenorm", _NORM_INPUTS, ("data",))(_sym_norm.InstanceNorm)
GroupNorm = _layer("groupnorm", _NORM_INPUTS, ("data",))(_sym_norm.GroupNorm)
pad = Pad = _layer("pad", ("data",), ("data",))(_sym_norm.pad)


# -- tensor layers and regression outputs (docs/migration-mxnet.md) ----------------------------


def _reshape_layer(hint: str) -> Callable[..., Symbol]:
    @_layer(hint, ("data",), ("data",))
    def Reshape(
        data: Symbol | None = None,
        shape: Any = None,
        reverse: bool = False,
        target_shape: Any = None,
        keep_highest: bool = False,
        name: str | None = None,
        **kwargs: Any,
    ) -> Symbol:
        """mxnet's ``Reshape``: ``data`` in the shape that mxnet's codes give (0 copies an input
        dimension, -1 is inferred, -2 copies the rest, -3 merges two, -4 splits one; with
        ``reverse`` the codes apply from the right), the rules of ``NDArray.reshape``.

        Example::

            >>> import gradhub_compat.mxnet as mx
            >>> mx.sym.Reshape(mx.sym.Variable("x"), shape=(0, -1)).infer_shape(x=(4, 3, 2))[1]
            [(4, 6)]
        """
        data = _data_arg("Reshape", data)
        if target_shape is not None or keep_highest:
            raise NotImplementedError(
                f"mx.sym.Reshape: target_shape and keep_highest (deprecated) are not supported; "
                f"use shape ({_DOCS})"
            )
        if shape is None:
            raise _MXNetValueError("mx.sym.Reshape: Required parameter shape is not presented")
        attrs = {"shape": _ints("Reshape", "shape", shape), "reverse": bool(reverse)}
        return Symbol("Reshape", name or _auto_name("reshape"), [data], attrs)

    return Reshape


Reshape = _reshape_layer("reshape")
reshape = Reshape


def Concat(*data: Symbol, **kwargs: Any) -> Symbol:
    """mxnet's ``Concat`` (``concat``): the inputs joined along ``dim`` (default 1; negative
    counts from the end); every other dimension must agree. The JSON attributes are mxnet's
    (``num_args`` always, ``dim`` when given); the gradient of each input is its slice of the
    head gradient.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> a, b = mx.sym.Variable("a"), mx.sym.Variable("b")
        >>> mx.sym.concat(a, b, dim=1).infer_shape(a=(2, 3), b=(2, 4))[1]
        [(2, 7)]
    """
    name = kwargs.pop("name", None)
    attr = kwargs.pop("attr", None)
    dim = kwargs.pop("dim", None)
    num_args = kwargs.pop("num_args", None)
    if kwargs:
        raise TypeError(f"mx.sym.Concat: unexpected arguments {sorted(kwargs)}")
    syms = list(data)
    if not syms:
        raise _MXNetValueError("mx.sym.Concat: at least one input symbol is needed")
    for i, s in enumerate(syms):
        if not isinstance(s, Symbol):
            raise TypeError(f"mx.sym.Concat: data[{i}] must be a Symbol, got {type(s).__name__}")
    if num_args is not None and int(num_args) != len(syms):
        raise _MXNetValueError(
            f"mx.sym.Concat: num_args={num_args} but {len(syms)} input symbols are given"
        )
    json = {"num_args": str(len(syms))}
    if dim is not None:
        json["dim"] = str(dim)
    for k, v in dict(attr or {}).items():
        json[f"__{k}__" if k in _SCOPED_ATTRS else str(k)] = str(v)
    sym = Symbol(
        "Concat", name or _auto_name("concat"), syms, {"dim": 1 if dim is None else int(dim)}
    )
    sym._json = json
    return sym


concat = Concat


@_layer("embedding", ("data", "weight"), ("data",))
def Embedding(
    data: Symbol | None = None,
    weight: Symbol | None = None,
    input_dim: int | None = None,
    output_dim: int | None = None,
    dtype: Any = "float32",
    sparse_grad: bool = False,
    name: str | None = None,
    **kwargs: Any,
) -> Symbol:
    """mxnet's ``Embedding`` (the rules of ``mx.nd.Embedding``): ``out[i...] =
    weight[data[i...]]``, shape ``data.shape + (output_dim,)``; the indices are truncated to
    integers and clipped to ``[0, input_dim - 1]``. Creates ``NAME_weight`` of shape
    ``(input_dim, output_dim)``; ``data`` gets no gradient.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> e = mx.sym.Embedding(mx.sym.Variable("x"), input_dim=5, output_dim=3, name="e")
        >>> e.infer_shape(x=(2, 4))
        ([(2, 4), (5, 3)], [(2, 4, 3)], [])
    """
    data = _data_arg("Embedding", data)
    if input_dim is None or output_dim is None:
        raise _MXNetValueError(
            "mx.sym.Embedding: Required parameter input_dim and output_dim of int are not presented"
        )
    if sparse_grad:
        raise NotImplementedError(
            f"mx.sym.Embedding: sparse_grad=True (row_sparse gradients) is not supported ({_DOCS})"
        )
    if np.dtype(dtype) != np.float32:
        raise NotImplementedError(f"mx.sym.Embedding: dtype={dtype!r} is not supported ({_DOCS})")
    name = name or _auto_name("embedding")
    w = weight if weight is not None else Variable(f"{name}_weight")
    attrs = {"input_dim": int(input_dim), "output_dim": int(output_dim)}
    return Symbol("Embedding", name, [data, w], attrs)


LEAKY_TYPES = ("leaky", "prelu", "elu", "selu", "gelu")


@_layer("leakyrelu", ("data", "gamma"), ("data",))
def LeakyReLU(
    data: Symbol | None = None,
    gamma: Symbol | None = None,
    act_type: str = "leaky",
    slope: float = 0.25,
    lower_bound: float = 0.125,
    upper_bound: float = 0.334,
    name: str | None = None,
    **kwargs: Any,
) -> Symbol:
    """mxnet's ``LeakyReLU`` (the formulas of ``mx.nd.LeakyReLU``): ``leaky`` x if x > 0 else
    slope * x; ``prelu`` the same with the learned ``gamma`` (one per channel of axis 1; creates
    ``NAME_gamma``, initializer ``Constant(0.25)`` as mxnet); ``elu`` slope * (e^x - 1) for
    x <= 0; ``selu``; ``gelu`` (the erf form). ``rrelu`` raises NotImplementedError.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.sym.LeakyReLU(mx.sym.Variable("x"), act_type="prelu", name="p").list_arguments()
        ['x', 'p_gamma']
    """
    data = _data_arg("LeakyReLU", data)
    if act_type not in LEAKY_TYPES:
        if act_type == "rrelu":
            raise NotImplementedError(
                f"mx.sym.LeakyReLU: act_type='rrelu' (random slopes) is not supported ({_DOCS})"
            )
        raise _MXNetValueError(
            f"mx.sym.LeakyReLU: Invalid Input: '{act_type}', valid values are: "
            "{'elu', 'gelu', 'leaky', 'prelu', 'rrelu', 'selu'}"
        )
    name = name or _auto_name("leakyrelu")
    inputs = [data]
    if act_type == "prelu":
        inputs.append(
            gamma
            if gamma is not None
            else Variable(f"{name}_gamma", init='["Constant", {"value": 0.25}]')
        )
    return Symbol("LeakyReLU", name, inputs, {"act_type": act_type, "slope": float(slope)})


@_layer("transpose", ("data",), ("data",))
def transpose(
    data: Symbol | None = None, axes: Any = (), name: str | None = None, **kwargs: Any
) -> Symbol:
    """mxnet's ``transpose``: the axes permuted by ``axes`` (one non-negative axis per
    dimension; the default ``()`` reverses them).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.sym.transpose(mx.sym.Variable("x"), axes=(1, 0, 2)).infer_shape(x=(2, 3, 4))[1]
        [(3, 2, 4)]
    """
    data = _data_arg("transpose", data)
    attrs = {"axes": _ints("transpose", "axes", axes)}
    return Symbol("transpose", name or _auto_name("transpose"), [data], attrs)


@_layer("expand_dims", ("data",), ("data",))
def expand_dims(
    data: Symbol | None = None, axis: int | None = None, name: str | None = None, **kwargs: Any
) -> Symbol:
    """mxnet's ``expand_dims``: a new axis of length 1 at ``axis`` (in ``[-ndim - 1, ndim]``).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.sym.expand_dims(mx.sym.Variable("x"), axis=1).infer_shape(x=(2, 3))[1]
        [(2, 1, 3)]
    """
    data = _data_arg("expand_dims", data)
    if axis is None:
        raise _MXNetValueError("mx.sym.expand_dims: Required parameter axis is not presented")
    return Symbol("expand_dims", name or _auto_name("expand_dims"), [data], {"axis": int(axis)})


@_layer("clip", ("data",), ("data",))
def clip(
    data: Symbol | None = None,
    a_min: float | None = None,
    a_max: float | None = None,
    name: str | None = None,
    **kwargs: Any,
) -> Symbol:
    """mxnet's ``clip``: ``a_max`` where ``x > a_max``, ``a_min`` where ``x < a_min``, else
    ``x``; the gradient passes where ``a_min <= x <= a_max`` (the bounds included) and is 0
    elsewhere, as mxnet. ``a_min > a_max`` raises NotImplementedError.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.sym.clip(mx.sym.Variable("x"), a_min=0, a_max=1).infer_shape(x=(2,))[1]
        [(2,)]
    """
    data = _data_arg("clip", data)
    if a_min is None or a_max is None:
        raise _MXNetValueError("mx.sym.clip: Required parameters a_min and a_max are not presented")
    if float(a_min) > float(a_max):
        raise NotImplementedError(
            f"mx.sym.clip: a_min={a_min} > a_max={a_max} is not supported ({_DOCS})"
        )
    attrs = {"a_min": float(a_min), "a_max": float(a_max)}
    return Symbol("clip", name or _auto_name("clip"), [data], attrs)


@_layer("log_softmax", ("data",), ("data",))
def _log_softmax(
    data: Symbol | None = None,
    length: Symbol | None = None,
    axis: int = -1,
    temperature: float | None = None,
    dtype: Any = None,
    use_length: bool = False,
    name: str | None = None,
    **kwargs: Any,
) -> Symbol:
    """mxnet's ``log_softmax``: ``x / t - log(sum(exp(x / t), axis))`` (the gradhub function
    of ``mx.nd.log_softmax``), along ``axis`` (default the last) with temperature ``t``.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.sym.log_softmax(mx.sym.Variable("x")).infer_shape(x=(2, 3))[1]
        [(2, 3)]
    """
    data = _data_arg("log_softmax", data)
    if dtype is not None or use_length or length is not None:
        raise NotImplementedError(
            f"mx.sym.log_softmax: dtype, length and use_length are not supported ({_DOCS})"
        )
    t = 1.0 if temperature is None else float(temperature)
    if t == 0.0:
        raise _MXNetValueError("mx.sym.log_softmax: temperature must be nonzero")
    return Symbol(
        "log_softmax", name or _auto_name("log_softmax"), [data], {"axis": int(axis), "t": t}
    )


def _positional(
    fn: Callable[..., Symbol], fname: str, inputs: int, names: tuple[str, ...], doc: str
) -> Callable[..., Symbol]:
    """``fn`` taking its first ``inputs`` symbols and then the parameters ``names`` by position
    too, as mxnet's generated operator functions (``F.log_softmax(pred, -1)``,
    ``F.swapaxes(x, 0, 1)``)."""

    def function(*args: Any, **kwargs: Any) -> Symbol:
        extra = args[inputs:]
        if len(extra) > len(names):
            raise TypeError(
                f"mx.sym.{fname}: at most {inputs + len(names)} positional arguments, got "
                f"{len(args)}"
            )
        for k, v in zip(names, extra):
            if k in kwargs:
                raise TypeError(f"mx.sym.{fname}: {k!r} given twice")
            kwargs[k] = v
        return fn(*args[:inputs], **kwargs)

    function.__name__ = function.__qualname__ = fname
    function.__doc__ = doc
    function.__wrapped__ = fn  # type: ignore[attr-defined]  # (its signature: name=...)
    return function


log_softmax = _positional(
    _log_softmax,
    "log_softmax",
    1,
    ("axis", "temperature", "dtype", "use_length"),
    """mxnet's ``log_softmax``: ``x / t - log(sum(exp(x / t), axis))`` (the gradhub function
    of ``mx.nd.log_softmax``), along ``axis`` (default the last) with temperature ``t``. As
    mxnet's generated function, the arguments after ``data`` may be given by position
    (``F.log_softmax(pred, -1)`` in Gluon's losses).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.sym.log_softmax(mx.sym.Variable("x"), 0).infer_shape(x=(2, 3))[1]
        [(2, 3)]
    """,
)


def _regression(op: str, formula: str, grad: str) -> Callable[..., Symbol]:
    def function(
        data: Symbol | None = None,
        label: Symbol | None = None,
        grad_scale: float = 1.0,
        name: str | None = None,
        **kwargs: Any,
    ) -> Symbol:
        data = _data_arg(op, data)
        name = name or _auto_name(op.lower())
        lab = label if label is not None else Variable(f"{name}_label")
        return Symbol(op, name, [data, lab], {"grad_scale": float(grad_scale)})

    function.__name__ = function.__qualname__ = op
    function.__doc__ = (
        f"mxnet's ``{op}`` (a loss layer): the output is ``{formula}``; backward gives data the "
        f"gradient ``grad_scale / m * ({grad})`` with ``m`` the label's size per example "
        "(``label.size / label.shape[0]``), ignoring the head gradient. Creates the argument "
        "``NAME_label`` (data's shape; ``(batch,)`` for data of shape ``(batch, 1)``) unless "
        f"given.\n\nExample::\n\n    >>> import gradhub_compat.mxnet as mx\n"
        f"    >>> mx.sym.{op}(mx.sym.Variable('x'), name='r').infer_shape(x=(4, 1))\n"
        "    ([(4, 1), (4,)], [(4, 1)], [])\n"
    )
    return _layer(op.lower(), ("data", "label"), ("data",))(function)


def _slice_layer(hint: str) -> Callable[..., Symbol]:
    @_layer(hint, ("data",), ("data",))
    def SliceChannel(
        data: Symbol | None = None,
        num_outputs: int | None = None,
        axis: int = 1,
        squeeze_axis: bool = False,
        name: str | None = None,
        **kwargs: Any,
    ) -> Symbol:
        """mxnet's ``SliceChannel`` (``split``): ``num_outputs`` equal parts of ``data`` along
        ``axis`` (the rules of ``mx.nd.split``), the outputs ``NAME_output0``...; a symbol of
        several outputs (pick one with ``[i]``), or of one output when ``num_outputs`` is 1.
        ``squeeze_axis`` drops the axis (the parts must have size 1 along it). Each input
        element gets the gradient of the output holding it (0 for outputs not used).

        Example::

            >>> import gradhub_compat.mxnet as mx
            >>> parts = mx.sym.split(mx.sym.Variable("x"), num_outputs=3, name="sp")
            >>> parts.list_outputs(), parts[2].infer_shape(x=(2, 6))[1]
            (['sp_output0', 'sp_output1', 'sp_output2'], [(2, 2)])
        """
        data = _data_arg("SliceChannel", data)
        if num_outputs is None or int(num_outputs) < 1:
            raise _MXNetValueError(
                f"mx.sym.SliceChannel: num_outputs must be a positive int, got {num_outputs!r}"
            )
        name = name or _auto_name(hint)
        token = object()
        outs = [
            Symbol(
                "SliceChannel",
                name,
                [data],
                {
                    "num_outputs": int(num_outputs),
                    "axis": int(axis),
                    "squeeze_axis": bool(squeeze_axis),
                    "index": i,
                    "key": token,
                },
            )
            for i in range(int(num_outputs))
        ]
        return outs[0] if len(outs) == 1 else Symbol("Group", name, outs)

    SliceChannel.__name__ = SliceChannel.__qualname__ = "SliceChannel"
    return SliceChannel


SliceChannel = _slice_layer("slicechannel")
split = _slice_layer("split")

LinearRegressionOutput = _regression("LinearRegressionOutput", "data", "out - label")
LogisticRegressionOutput = _regression(
    "LogisticRegressionOutput", "1 / (1 + e^-data)", "out - label"
)
MAERegressionOutput = _regression("MAERegressionOutput", "data", "sign(out - label)")


# -- the operators of Gluon's losses on symbols (docs/migration-mxnet.md) ------------------------


@_layer("reshape_like", ("lhs", "rhs"), ("lhs", "rhs"))
def reshape_like(
    lhs: Symbol | None = None, rhs: Symbol | None = None, name: str | None = None, **kwargs: Any
) -> Symbol:
    """mxnet's ``reshape_like``: ``lhs`` in the shape of ``rhs`` (the same number of elements);
    the gradient goes to ``lhs`` only (``rhs`` gets zeros), and ``rhs`` may have any dtype.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> a, b = mx.sym.Variable("a"), mx.sym.Variable("b")
        >>> mx.sym.reshape_like(a, b).infer_shape(a=(6,), b=(2, 3))[1]
        [(2, 3)]
    """
    if kwargs.keys() & {"lhs_begin", "lhs_end", "rhs_begin", "rhs_end"}:
        raise NotImplementedError(
            f"mx.sym.reshape_like: lhs_begin/lhs_end/rhs_begin/rhs_end are not supported ({_DOCS})"
        )
    for arg, v in (("lhs", lhs), ("rhs", rhs)):
        if not isinstance(v, Symbol):
            raise TypeError(f"mx.sym.reshape_like: {arg} must be a Symbol, got {type(v).__name__}")
    return Symbol("reshape_like", name or _auto_name("reshape_like"), [lhs, rhs])  # type: ignore[list-item]


@_layer("pick", ("data", "index"), ("data", "index"))
def _pick(
    data: Symbol | None = None,
    index: Symbol | None = None,
    axis: int = -1,
    keepdims: bool = False,
    mode: str = "clip",
    name: str | None = None,
    **kwargs: Any,
) -> Symbol:
    """mxnet's ``pick`` (the rule of ``mx.nd.pick``): ``out[i] = data[i, index[i]]`` along
    ``axis``; ``index`` (any dtype, data's shape without ``axis``) is truncated to integers and
    clipped into range (``mode="clip"``) or wrapped (``"wrap"``). The gradient goes to the
    picked elements of ``data``; ``index`` gets none.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> d, i = mx.sym.Variable("d"), mx.sym.Variable("i")
        >>> mx.sym.pick(d, i, axis=1, keepdims=True).infer_shape(d=(4, 3))
        ([(4, 3), (4,)], [(4, 1)], [])
    """
    data = _data_arg("pick", data)
    if not isinstance(index, Symbol):
        raise TypeError(f"mx.sym.pick: index must be a Symbol, got {type(index).__name__}")
    if mode not in ("clip", "wrap"):
        raise _MXNetValueError(
            f"mx.sym.pick: Invalid Input: '{mode}', valid values are: {{'clip', 'wrap'}}"
        )
    attrs = {"axis": None if axis is None else int(axis), "keepdims": bool(keepdims), "mode": mode}
    return Symbol("pick", name or _auto_name("pick"), [data, index], attrs)


@_layer("where", ("condition", "x", "y"), ("condition", "x", "y"))
def where(
    condition: Symbol | None = None,
    x: Symbol | None = None,
    y: Symbol | None = None,
    name: str | None = None,
    **kwargs: Any,
) -> Symbol:
    """mxnet's ``where`` (the rule of ``mx.nd.where``): ``x`` where ``condition`` is non-zero,
    else ``y`` (``condition`` of x's shape, or 1-D selecting rows of the first axis). The
    gradient goes to ``x`` at the selected elements and to ``y`` at the others; ``condition``
    (any dtype) gets none.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> x = mx.sym.Variable("x")
        >>> mx.sym.where(x > 0, x, -x).infer_shape(x=(2, 3))[1]
        [(2, 3)]
    """
    for arg, v in (("condition", condition), ("x", x), ("y", y)):
        if not isinstance(v, Symbol):
            raise TypeError(f"mx.sym.where: {arg} must be a Symbol, got {type(v).__name__}")
    return Symbol("where", name or _auto_name("where"), [condition, x, y])  # type: ignore[list-item]


@_layer("make_loss", ("data",), ("data",))
def make_loss(data: Symbol | None = None, name: str | None = None, **kwargs: Any) -> Symbol:
    """mxnet's ``make_loss`` (a loss layer, output ``NAME_loss``): the output is ``data``;
    backward gives it the gradient 1 everywhere, ignoring the head gradient (``MakeLoss`` with
    its defaults).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.sym.make_loss(mx.sym.Variable("x"), name="l").list_outputs()
        ['l_loss']
    """
    data = _data_arg("make_loss", data)
    return Symbol("make_loss", name or _auto_name("make_loss"), [data])


@_layer("swapaxes", ("data",), ("data",))
def _swapaxes(
    data: Symbol | None = None,
    dim1: int = 0,
    dim2: int = 0,
    name: str | None = None,
    **kwargs: Any,
) -> Symbol:
    """mxnet's ``swapaxes`` (operator ``SwapAxis``): ``data`` with the axes ``dim1`` and
    ``dim2`` exchanged.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.sym.swapaxes(mx.sym.Variable("x"), 0, 1).infer_shape(x=(2, 3, 4))[1]
        [(3, 2, 4)]
    """
    data = _data_arg("swapaxes", data)
    attrs = {"dim1": int(dim1), "dim2": int(dim2)}
    return Symbol("SwapAxis", name or _auto_name("swapaxes"), [data], attrs)


@_layer("ctcloss", ("data", "label", "data_lengths", "label_lengths"), ("data", "label"))
def CTCLoss(
    data: Symbol | None = None,
    label: Symbol | None = None,
    data_lengths: Symbol | None = None,
    label_lengths: Symbol | None = None,
    use_data_lengths: bool = False,
    use_label_lengths: bool = False,
    blank_label: str = "first",
    name: str | None = None,
    **kwargs: Any,
) -> Symbol:
    """mxnet's ``CTCLoss`` (``ctc_loss``, ``contrib.CTCLoss``; the rules of ``mx.nd.CTCLoss``):
    ``-log p(label | data)`` per sequence, shape ``(N,)``, for activations ``data`` ``(T, N,
    C)`` and labels ``(N, L)`` (any dtype). The inputs ``data_lengths``/``label_lengths`` are
    taken with ``use_data_lengths``/``use_label_lengths`` (the variables ``NAME_data_lengths``/
    ``NAME_label_lengths`` when not given, as mxnet). Not a loss layer: the gradient is the head
    gradient times the loss's gradient; the labels and lengths get none.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> c = mx.sym.CTCLoss(mx.sym.Variable("x"), mx.sym.Variable("y"), name="ctc")
        >>> c.list_outputs(), c.infer_shape(x=(20, 2, 4), y=(2, 3))[1]
        (['ctc_output0'], [(2,)])
    """
    data = _data_arg("CTCLoss", data)
    if blank_label not in ("first", "last"):
        raise _MXNetValueError(
            f"mx.sym.CTCLoss: Invalid Input: '{blank_label}', valid values are: {{'first', 'last'}}"
        )
    name = name or _auto_name("ctcloss")
    inputs = [data, label]
    for arg, use, sym in (
        ("data_lengths", use_data_lengths, data_lengths),
        ("label_lengths", use_label_lengths, label_lengths),
    ):
        if use:
            inputs.append(sym if sym is not None else Variable(f"{name}_{arg}"))
        elif sym is not None:
            raise _MXNetValueError(
                f"mx.sym.CTCLoss: {arg} is given but use_{arg}=False (mxnet reads it only with "
                f"use_{arg}=True)"
            )
    attrs = {
        "use_data_lengths": bool(use_data_lengths),
        "use_label_lengths": bool(use_label_lengths),
        "blank_label": blank_label,
    }
    return Symbol("CTCLoss", name, inputs, attrs)  # type: ignore[arg-type]


ctc_loss = CTCLoss
#: ``mx.sym.contrib``'s names of the operators here (mxnet 1.x kept the CTC loss there too)
contrib = types.SimpleNamespace(CTCLoss=CTCLoss, ctc_loss=CTCLoss)

pick = _positional(_pick, "pick", 2, ("axis", "keepdims", "mode"), _pick.__doc__ or "")
swapaxes = _positional(_swapaxes, "swapaxes", 1, ("dim1", "dim2"), _swapaxes.__doc__ or "")
SwapAxis = swapaxes


def load_json(json_str: str) -> Symbol:
    """The symbol of mxnet's JSON text (:meth:`Symbol.tojson`, or a ``-symbol.json`` file
    written by mxnet). Only parses: nothing in the text is executed or unpickled; an operator
    the layer does not have raises NotImplementedError naming it.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> fc = mx.sym.FullyConnected(mx.sym.Variable("x"), num_hidden=3, name="fc")
        >>> mx.sym.load_json(fc.tojson()).infer_shape(x=(2, 5))
        ([(2, 5), (3, 5), (3,)], [(2, 3)], [])
    """
    from .serialization import from_json

    return from_json(json_str)


def load(fname: str) -> Symbol:
    """The symbol saved in the JSON file ``fname`` (:meth:`Symbol.save`); see
    :func:`load_json`."""
    if not isinstance(fname, str):
        raise TypeError("mx.sym.load: fname required to be string")
    with open(fname, encoding="utf-8") as f:
        return load_json(f.read())


# the elementwise, array and sampling operators of _sym_ops_more.py (arccos, take, arange...)
_sym_ops_more.install(globals())
