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

import functools
import itertools
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from .base import MXNetError, NotImplementedForSymbol, _MXNetTypeError, _MXNetValueError

__all__ = [
    "Activation",
    "BlockGrad",
    "FullyConnected",
    "Group",
    "MakeLoss",
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
    "cos",
    "dot",
    "elemwise_add",
    "elemwise_div",
    "elemwise_mul",
    "elemwise_sub",
    "exp",
    "load",
    "load_json",
    "log",
    "maximum",
    "mean",
    "minimum",
    "relu",
    "sigmoid",
    "sin",
    "softmax",
    "sqrt",
    "square",
    "sum",
    "tanh",
    "var",
]

ACT_TYPES = ("relu", "sigmoid", "tanh", "softrelu", "softsign")
NORMALIZATIONS = ("null", "batch", "valid")
#: Operators whose gradient ignores the head gradient (mxnet's loss layers).
LOSS_OPS = ("SoftmaxOutput", "MakeLoss")
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


class _Names(threading.local):
    def __init__(self) -> None:
        self.counters: dict[str, Iterator[int]] = {}


_names = _Names()


def _auto_name(hint: str) -> str:
    c = _names.counters.setdefault(hint, itertools.count())
    return f"{hint}{next(c)}"


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

    def list_arguments(self) -> list[str]:
        """The names of the arguments (variables), in the order bind expects them."""
        names: list[str] = []
        for node in self._topo():
            if node._op == "null" and node._name not in names:
                names.append(node._name)
        return names

    list_inputs = list_arguments

    def list_outputs(self) -> list[str]:
        """The names of the outputs (``NAME_output``)."""
        return [h._name if h._op == "null" else f"{h._name}_output" for h in self._heads()]

    def list_auxiliary_states(self) -> list[str]:
        """Auxiliary states (none of the supported layers has any)."""
        return []

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
        return Symbol("Group", _auto_name("group"), [n for n in self._topo() if n._op != "Group"])

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
        if any(n not in by_name for n in names):
            return None, None, None
        outs = [node_types.get(id(h)) for h in self._heads()]
        if any(o is None for o in outs):
            return None, None, None
        return [by_name[n].type for n in names], [o.type for o in outs if o is not None], []

    # -- shapes ----------------------------------------------------------------------------------
    def _given_shapes(self, args: Any, kwargs: Any, what: str) -> dict[str, tuple[int, ...]]:
        names = self.list_arguments()
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
            if name not in names:
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
    ) -> tuple[list[tuple[int, ...] | None], list[tuple[int, ...] | None]]:
        from .shapes import infer

        by_name, outs = infer(self, self._given_shapes(args, kwargs, what))
        return [by_name.get(n) for n in self.list_arguments()], outs

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

        arg_shapes, outs = self._infer(args, kwargs, "infer_shape")
        if not all(is_known(s) for s in [*arg_shapes, *outs]):
            return None, None, None
        return arg_shapes, outs, []  # type: ignore[return-value]

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
        arg_shapes, outs = self._infer(args, kwargs, "infer_shape_partial")
        return [s or () for s in arg_shapes], [s or () for s in outs], []

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
        """
        from .executor import Executor

        if aux_states:
            raise ValueError("bind: the supported layers have no auxiliary states")
        return Executor(self, ctx, args, args_grad, grad_req)

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
        arg_shapes, _, _ = self.infer_shape(**kwargs)
        if arg_shapes is None:
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
        return self.bind(ctx, args, grads, grad_req)

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
    layer creates share (as mxnet's)."""

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
            given = {id(v) for v in kwargs.values() if isinstance(v, Symbol)}
            for k in free:
                if kwargs.get(k) is None:
                    kwargs[k] = Variable(f"{name}_{k}")
            sym = fn(name=name, **kwargs)
            sym._json = dict(json)
            for i in sym._inputs:
                if id(i) not in given and i._op == "null":
                    i._json = {**json, **i._json}
            return sym

        return layer

    return deco


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
        if exclude:
            raise NotImplementedError(
                f"mx.sym.{op}: exclude=True is not supported (docs/migration-mxnet.md)"
            )
        if axis is not None:
            axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
            if not all(isinstance(a, (int, np.integer)) for a in axes):
                raise TypeError(
                    f"mx.sym.{op}: axis must be an int or a tuple of ints, got {axis!r}"
                )
            axis = tuple(int(a) for a in axes)
        attrs = {"axis": axis, "keepdims": bool(keepdims)}
        return Symbol(op, name or _auto_name(op), [data], attrs)

    function.__name__ = function.__qualname__ = op
    function.__doc__ = (
        f"mxnet's ``{op}``: {formula} over ``axis`` (every axis by default or with ``axis=()``, "
        "mxnet's default; a full reduction "
        "has shape (1,)), keeping the reduced axes as 1 with ``keepdims``.\n\nExample::\n\n"
        "    >>> import gradhub_compat.mxnet as mx\n"
        f"    >>> mx.sym.{op}(mx.sym.Variable('x'), axis=1).infer_shape(x=(2, 3))[1]\n"
        "    [(2,)]\n"
    )
    return _layer(op, ("data",), ("data",))(function)


sum = _reduce_op("sum", "the sum")
mean = _reduce_op("mean", "the mean")


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
        return max(left, right) if op == "Maximum" else min(left, right)
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
