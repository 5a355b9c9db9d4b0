"""mxnet Gluon's blocks: :class:`Block`, :class:`HybridBlock`, :class:`SymbolBlock`, as mxnet 1.9.1.

A Block names itself and its parameters as mxnet does: a block made outside any other gets the
prefix ``<class name in lower case><n>_`` (``dense0_``, the counter shared with the symbols'
automatic names), a block made inside ``parent.name_scope()`` gets ``parent.prefix +
<class><k>_`` with ``k`` counted per parent (``model0_dense0_``); its parameters are named
``prefix + name`` (``dense0_weight``). Blocks and Parameters assigned as attributes are
registered (children in assignment order), and :meth:`Block.collect_params` gathers the
parameters of the block and its children in that order.

A :class:`HybridBlock`'s ``forward(x, *args)`` calls ``hybrid_forward(F, x, *args, **params)``
with ``F`` the ``mx.nd`` module and the block's parameters as keyword NDArrays (``weight=...``),
or, for Symbols, ``F`` = ``mx.sym`` and the parameters' symbols. ``hybridize()`` is accepted and
recorded (``_active``) but the block keeps running imperatively: the numbers are the same, and
no graph is cached or exported.

Example::

    >>> import gradhub_compat.mxnet as mx
    >>> from gradhub_compat.mxnet.gluon import nn
    >>> class Model(mx.gluon.HybridBlock):
    ...     def __init__(self, **kwargs):
    ...         super().__init__(**kwargs)
    ...         with self.name_scope():
    ...             self.fc = nn.Dense(3, in_units=2)
    ...     def hybrid_forward(self, F, x):
    ...         return F.relu(self.fc(x))
    >>> net = Model(prefix="model_")
    >>> list(net.collect_params().keys())
    ['model_dense0_weight', 'model_dense0_bias']
    >>> net.initialize(mx.init.One())
    >>> net(mx.nd.ones((1, 2))).asnumpy()
    array([[2., 2., 2.]], dtype=float32)
"""

from __future__ import annotations

import threading
import warnings
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from .. import ndarray as nd
from ..context import Context
from ..ndarray import NDArray
from .parameter import DeferredInitializationError, Parameter, ParameterDict

__all__ = ["Block", "HybridBlock", "SymbolBlock"]


def _auto_prefix(hint: str) -> str:
    from ..symbol import _auto_name

    return _auto_name(hint) + "_"


class _BlockScope:
    """The naming scope of a Block (``with block.name_scope():``)."""

    class _Current(threading.local):
        value: _BlockScope | None = None

    _current = _Current()

    def __init__(self, block: Block) -> None:
        self._block = block
        self._counter: dict[str, int] = {}
        self._old_scope: _BlockScope | None = None

    @staticmethod
    def create(prefix: str | None, params: ParameterDict | None, hint: str) -> Any:
        current = _BlockScope._current.value
        if current is None:
            if prefix is None:
                prefix = _auto_prefix(hint)
            params = (
                ParameterDict(prefix) if params is None else ParameterDict(params.prefix, params)
            )
            return prefix, params
        if prefix is None:
            count = current._counter.get(hint, 0)
            prefix = f"{hint}{count}_"
            current._counter[hint] = count + 1
        if params is None:
            parent = current._block.params
            params = ParameterDict(parent.prefix + prefix, parent._shared)
        else:
            params = ParameterDict(params.prefix, params)
        return current._block.prefix + prefix, params

    def __enter__(self) -> _BlockScope:
        if self._block._empty_prefix:
            return self
        self._old_scope = _BlockScope._current.value
        _BlockScope._current.value = self
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._block._empty_prefix:
            return
        _BlockScope._current.value = self._old_scope


class _HookHandle:
    """Removes a forward hook (``handle.detach()``)."""

    def __init__(self, hooks: OrderedDict[int, Any], hook: Any) -> None:
        self._hooks = hooks
        self._id = id(hook)
        hooks[self._id] = hook

    def detach(self) -> None:
        self._hooks.pop(self._id, None)

    def __enter__(self) -> _HookHandle:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.detach()


def _indent(s: str, n: int) -> str:
    lines = s.split("\n")
    return "\n".join([lines[0]] + [" " * n + line for line in lines[1:]])


class Block:
    """The base class of Gluon's layers and models, as mxnet's ``gluon.Block``: subclasses
    create their children and parameters in ``__init__`` (``with self.name_scope():``) and
    define ``forward``; calling the block runs ``forward`` (with the forward hooks).

    ``prefix`` names the block (``None``: automatic, see the module documentation; ``""``: no
    prefix); ``params`` shares the Parameters of another block's ``params`` dict.
    """

    # set with object.__setattr__ in __init__ (before __setattr__ can register anything)
    _empty_prefix: bool
    _children: OrderedDict[str, Block]
    _reg_params: dict[str, Parameter]

    def __init__(self, prefix: str | None = None, params: ParameterDict | None = None) -> None:
        object.__setattr__(self, "_empty_prefix", prefix == "")
        object.__setattr__(self, "_children", OrderedDict())
        object.__setattr__(self, "_reg_params", {})
        self._prefix, self._params = _BlockScope.create(prefix, params, self._alias())
        self._name = self._prefix[:-1] if self._prefix.endswith("_") else self._prefix
        self._scope = _BlockScope(self)
        self._forward_hooks: OrderedDict[int, Any] = OrderedDict()
        self._forward_pre_hooks: OrderedDict[int, Any] = OrderedDict()

    def __repr__(self) -> str:
        modstr = "\n".join(
            f"  ({key}): {_indent(repr(block), 2)}"
            for key, block in self.__dict__.items()
            if isinstance(block, Block)
        )
        return f"{self.__class__.__name__}(\n{modstr}\n)"

    def __setattr__(self, name: str, value: Any) -> None:
        """Register Blocks (children) and Parameters assigned as attributes."""
        if "_children" not in self.__dict__ and isinstance(value, (Block, Parameter)):
            raise RuntimeError(
                f"{type(self).__name__}.{name}: assign Blocks and Parameters after "
                "super().__init__() has run"
            )
        if hasattr(self, name):
            existing = getattr(self, name)
            if isinstance(existing, (Parameter, Block)) and not isinstance(value, type(existing)):
                raise TypeError(
                    f"Changing attribute type for {name} from {type(existing)} to "
                    f"{type(value)}is not allowed."
                )
        if isinstance(value, Block):
            self.register_child(value, name)
        elif isinstance(value, Parameter):
            if name in self._reg_params:
                raise AssertionError(
                    f"Overriding Parameter attribute {name} is not allowed. If you want to share "
                    "parameters between blocks, please set 'params' at Block construction "
                    "instead."
                )
            self._reg_params[name] = value
        object.__setattr__(self, name, value)

    def _alias(self) -> str:
        return self.__class__.__name__.lower()

    @property
    def prefix(self) -> str:
        """The prefix of the block's and its parameters' names (``dense0_``)."""
        return self._prefix

    @property
    def name(self) -> str:
        """The prefix without its trailing ``_`` (``dense0``)."""
        return self._name

    def name_scope(self) -> _BlockScope:
        """The scope in which children get names under this block's prefix."""
        return self._scope

    @property
    def params(self) -> ParameterDict:
        """This block's own ParameterDict (not its children's: see :meth:`collect_params`)."""
        return self._params

    def collect_params(self, select: str | None = None) -> ParameterDict:
        """A ParameterDict of this block's and its children's Parameters (depth first, in order
        of registration); ``select`` keeps the names a regular expression matches
        (``re.match``, e.g. ``".*weight"``)."""
        self._check_container_with_block()
        ret = ParameterDict(self._params.prefix)
        ret.update(self.params._select(select or None))
        for child in self._children.values():
            ret.update(child.collect_params(select=select))
        return ret

    def _check_container_with_block(self) -> None:
        """Warn, as mxnet, about Blocks held in a list, tuple or dict attribute: they are not
        registered, so their parameters are not collected."""
        children = {id(c) for c in self._children.values()}

        def unregistered(data: Any) -> bool:
            if isinstance(data, (list, tuple)):
                return any(unregistered(e) for e in data)
            if isinstance(data, dict):
                return any(unregistered(v) for v in data.values())
            return isinstance(data, Block) and id(data) not in children

        for k, v in self.__dict__.items():
            if isinstance(v, (list, tuple, dict)) and not (k.startswith("__") or k == "_children"):
                if unregistered(v):
                    warnings.warn(
                        f'"{self.__class__.__name__}.{k}" is an unregistered container with '
                        "Blocks. Note that Blocks inside the list, tuple or dict will not be "
                        "registered automatically. Make sure to register them using "
                        "register_child() or switching to nn.Sequential/nn.HybridSequential "
                        "instead. ",
                        stacklevel=3,
                    )

    def _collect_params_with_prefix(self, prefix: str = "") -> dict[str, Parameter]:
        if prefix:
            prefix += "."
        ret = {prefix + key: val for key, val in self._reg_params.items()}
        for name, child in self._children.items():
            ret.update(child._collect_params_with_prefix(prefix + name))
        return ret

    def register_child(self, block: Block, name: str | None = None) -> None:
        """Register ``block`` as a child (named ``name``, else its position)."""
        if name is None:
            name = str(len(self._children))
        self._children[name] = block

    def register_forward_pre_hook(self, hook: Callable[..., Any]) -> _HookHandle:
        """Call ``hook(block, args)`` before each forward."""
        return _HookHandle(self._forward_pre_hooks, hook)

    def register_forward_hook(self, hook: Callable[..., Any]) -> _HookHandle:
        """Call ``hook(block, args, out)`` after each forward."""
        return _HookHandle(self._forward_hooks, hook)

    def apply(self, fn: Callable[[Block], Any]) -> Block:
        """Call ``fn`` on every child (recursively), then on this block; returns this block."""
        for child in self._children.values():
            child.apply(fn)
        fn(self)
        return self

    def initialize(
        self, init: Any = None, ctx: Any = None, verbose: bool = False, force_reinit: bool = False
    ) -> None:
        """Initialize every parameter of the block and its children
        (``collect_params().initialize(init, ctx)``; ``init`` defaults to
        ``mx.init.Uniform()``, the parameters' own initializers win)."""
        self.collect_params().initialize(init, ctx, verbose, force_reinit)

    def hybridize(self, active: bool = True, **kwargs: Any) -> None:
        """Pass ``hybridize`` to the children (a Block itself is never hybridized)."""
        for child in self._children.values():
            child.hybridize(active, **kwargs)

    def cast(self, dtype: Any) -> None:
        """Convert every parameter to ``dtype``."""
        for child in self._children.values():
            child.cast(dtype)
        for param in self.params.values():
            param.cast(dtype)

    def __call__(self, *args: Any) -> Any:
        for hook in list(self._forward_pre_hooks.values()):
            hook(self, args)
        out = self.forward(*args)
        for hook in list(self._forward_hooks.values()):
            hook(self, args, out)
        return out

    def forward(self, *args: Any) -> Any:
        """The computation: override it."""
        raise NotImplementedError

    def save_parameters(self, filename: str, deduplicate: bool = False) -> None:
        """Save the parameters with ``mx.nd.save`` under their attribute paths (``fc.weight``,
        ``0.bias``: mxnet's ``save_parameters`` keys, not the parameter names)."""
        from .. import ndarray_io

        params = self._collect_params_with_prefix()
        if deduplicate:
            reverse = {v: k for k, v in params.items()}
            params = {v: k for k, v in reverse.items()}
        ndarray_io.save(filename, {k: v.data().copyto(v.list_ctx()[0]) for k, v in params.items()})

    def load_parameters(
        self,
        filename: str,
        ctx: Any = None,
        allow_missing: bool = False,
        ignore_extra: bool = False,
        cast_dtype: bool = False,
        dtype_source: str = "current",
    ) -> None:
        """Load parameters saved by :meth:`save_parameters` (keys are attribute paths; a file of
        parameter names, as ``collect_params().save`` writes, is read with this block's
        prefix stripped). A parameter missing from the file raises ``AssertionError`` unless
        ``allow_missing``, an extra one ``ValueError`` unless ``ignore_extra`` (as mxnet).
        Loading reads arrays only (``mx.nd.load``): nothing is unpickled or executed."""
        from .. import ndarray_io

        loaded = ndarray_io.load(filename)
        if not isinstance(loaded, dict):
            raise ValueError(
                f"Block.load_parameters: {filename!r} holds a list of arrays, not named parameters"
            )
        params = self._collect_params_with_prefix()
        if not loaded and not params:
            return
        if not any("." in k for k in loaded):
            # parameter names (collect_params().save, the deprecated save_params)
            self.collect_params().load_dict(
                loaded,
                ctx,
                allow_missing,
                ignore_extra,
                self.prefix,
                filename,
                cast_dtype,
                dtype_source,
            )
            return
        if not allow_missing:
            inv: dict[int, list[str]] = {}
            for k, v in params.items():
                inv.setdefault(id(v), []).append(k)
            for name, param in params.items():
                if not any(p in loaded for p in inv[id(param)]):
                    raise AssertionError(
                        f"Parameter '{name}' is missing in file '{filename}', which contains "
                        f"parameters: {_brief(list(loaded))}. Set allow_missing=True to ignore "
                        "missing parameters."
                    )
        for name, value in loaded.items():
            if not ignore_extra and name not in params:
                raise ValueError(
                    f"Parameter '{name}' loaded from file '{filename}' is not present in "
                    f"ParameterDict, which contains parameters {_brief(list(params))}. Set "
                    "ignore_extra=True to ignore. "
                )
            if name in params:
                _load_init(params[name], value, ctx, cast_dtype, dtype_source)

    def save_params(self, filename: str) -> None:
        """Deprecated in mxnet: ``collect_params().save(filename, strip_prefix=self.prefix)``."""
        warnings.warn(
            "save_params is deprecated. Please use save_parameters. Note that if you want load "
            "from SymbolBlock later, please use export instead. For details, see "
            "https://mxnet.apache.org/tutorials/gluon/save_load_params.html",
            stacklevel=2,
        )
        self.collect_params().save(filename, strip_prefix=self.prefix)

    def load_params(
        self,
        filename: str,
        ctx: Any = None,
        allow_missing: bool = False,
        ignore_extra: bool = False,
    ) -> None:
        """Deprecated in mxnet: :meth:`load_parameters`."""
        warnings.warn("load_params is deprecated. Please use load_parameters.", stacklevel=2)
        self.load_parameters(filename, ctx, allow_missing, ignore_extra)

    def save(self, prefix: str) -> None:
        """Not supported: mxnet's ``Block.save`` writes the cached graphs of hybridized blocks,
        which are not built here; use :meth:`save_parameters`."""
        raise NotImplementedError(
            "Block.save: the cached graphs it writes are not built by gradhub_compat.mxnet; use "
            "save_parameters (docs/migration-mxnet.md)"
        )

    def load(self, prefix: str) -> None:
        """Not supported (see :meth:`save`); use :meth:`load_parameters`."""
        raise NotImplementedError(
            "Block.load: the cached graphs it reads are not supported by gradhub_compat.mxnet; use "
            "load_parameters (docs/migration-mxnet.md)"
        )

    def register_op_hook(self, callback: Any, monitor_all: bool = False) -> None:
        """Not supported: operator hooks need a compiled graph."""
        raise NotImplementedError(
            "Block.register_op_hook is not supported by gradhub_compat.mxnet "
            "(docs/migration-mxnet.md)"
        )

    def summary(self, *inputs: Any) -> None:
        """Print each layer's output shape and parameter count for one forward pass on
        ``inputs`` (as mxnet's ``summary``)."""
        from .nn.basic_layers import HybridSequential, Sequential

        rows: list[tuple[str, str, int, int, int]] = [("Input", _shape_str(inputs), 0, 0, 0)]
        seen: set[int] = set()
        hooks: list[_HookHandle] = []

        def hook(block: Block, _: Any, outputs: Any) -> None:
            n = trainable = shared = 0
            for p in block.params.values():
                size = p.data().size
                n += size
                trainable += 0 if p.grad_req == "null" else size
                if id(p) in seen:
                    shared += size
                seen.add(id(p))
            key = f"{block.__class__.__name__}-{len(rows)}"
            rows.append((key, _shape_str(outputs), n, trainable, shared))

        def register(block: Block) -> None:
            if not isinstance(block, (Sequential, HybridSequential)):
                hooks.append(block.register_forward_hook(hook))

        try:
            self.apply(register)
            self(*inputs)
            fmt = "{:>20}  {:>42} {:>15}"
            print("-" * 80)
            print(fmt.format("Layer (type)", "Output Shape", "Param #"))
            print("=" * 80)
            for key, shape, n, _, _ in rows:
                print(fmt.format(key, shape, n))
            total = sum(r[2] for r in rows)
            trainable = sum(r[3] for r in rows)
            shared = sum(r[4] for r in rows)
            print("=" * 80)
            print("Parameters in forward computation graph, duplicate included")
            print("   Total params: " + str(total))
            print("   Trainable params: " + str(trainable))
            print("   Non-trainable params: " + str(total - trainable))
            print("Shared params in forward computation graph: " + str(shared))
            print("Unique parameters in model: " + str(total - shared))
            print("-" * 80)
        finally:
            for h in hooks:
                h.detach()


def _shape_str(args: Any) -> str:
    def shapes(a: Any) -> Any:
        if isinstance(a, (list, tuple)):
            return [shapes(x) for x in a]
        return a.shape if isinstance(a, NDArray) else a

    s = shapes(args)
    if isinstance(s, list) and len(s) == 1 and not isinstance(args, list):
        s = s[0]
    return str(s)[1:-1] if isinstance(s, list) else str(s)


def _brief(names: list[str], limit: int = 7) -> str:
    """At most ``limit`` names, quoted (mxnet's ``_brief_print_list``)."""
    if len(names) > limit:
        return _brief(names[: limit // 2], limit) + ", ..., " + _brief(names[-limit // 2 :], limit)
    return ", ".join(f"'{n}'" for n in names)


def _load_init(
    param: Parameter, data: NDArray, ctx: Any, cast_dtype: bool, dtype_source: str
) -> None:
    """Initialize ``param`` from the loaded ``data`` (as mxnet's ``Parameter._load_init``)."""
    import numpy as np

    from .parameter import _ctx_list

    if param.shape is not None:
        unknown_ok = all(j in (0, -1, i) for i, j in zip(data.shape, param.shape))
        if len(param.shape) != len(data.shape) or not unknown_ok:
            raise AssertionError(
                f"Failed loading Parameter '{param.name}' from saved params: shape incompatible "
                f"expected {param.shape} vs saved {data.shape}"
            )
        param.shape = tuple(i if i not in (0, -1) else j for i, j in zip(param.shape, data.shape))
    if param.dtype is not None:
        if cast_dtype:
            if dtype_source == "current":
                data = data.astype(param.dtype, copy=False)
            elif dtype_source == "saved":
                param._dtype = data.dtype
        elif np.dtype(param.dtype) != np.dtype(data.dtype):
            raise AssertionError(
                f"Failed loading Parameter '{param.name}' from saved params: dtype incompatible "
                f"expected {param.dtype} vs saved {data.dtype}. Set cast_dtype=True to cast the "
                "dtype of saved params."
            )
    if isinstance(ctx, Context):
        ctx = [ctx]
    if param._data is None:
        if param._deferred_init:
            ctx = ctx or param._deferred_init[1]
        param._deferred_init = ()
        param._init_impl(data, _ctx_list(ctx, "Block.load_parameters"))
    else:
        if ctx is not None and set(ctx) != set(param.list_ctx()):
            raise AssertionError(
                f"Failed to load Parameter '{param.name}' on {ctx} because it was previous "
                f"initialized on {param.list_ctx()}."
            )
        param.set_data(data)
    param._deferred_init = ()


class _Prefixed:
    """The module ``mx.sym`` whose operators are named in the block's name scope, as mxnet's
    ``Prefix`` name manager: a given ``name=`` gets ``prefix`` before it
    (``F.FullyConnected(..., name="fwd")`` in block ``dense0_`` is ``dense0_fwd``), an
    operator called without a name gets ``prefix`` + its lower-case name + a count of this
    scope (``F.Flatten(x)`` in block ``flatten0_`` is ``flatten0_flatten0``)."""

    _UNNAMED = frozenset({"var", "Variable", "Group", "load", "load_json"})

    def __init__(self, module: Any, prefix: str) -> None:
        self._module = module
        self._prefix = prefix
        self._counter: dict[str, int] = {}

    def scope(self) -> Any:
        """The name scope naming the symbols made without a function of ``F`` (``a - b``) with
        the same prefix and counters (mxnet's ``Prefix`` name manager)."""
        import contextlib

        from ..symbol import prefix_scope

        if not self._prefix:
            return contextlib.nullcontext()
        return prefix_scope(self._prefix, self._counter)

    def __getattr__(self, name: str) -> Any:
        import inspect

        fn = getattr(self._module, name)
        if not callable(fn) or isinstance(fn, type):
            return fn
        prefix = self._prefix
        try:
            named = name not in self._UNNAMED and "name" in inspect.signature(fn).parameters
        except (TypeError, ValueError):  # pragma: no cover - builtins without a signature
            named = False
        counter = self._counter
        hint = name.lower()

        def call(*args: Any, **kwargs: Any) -> Any:
            if kwargs.get("name") is not None:
                kwargs["name"] = prefix + kwargs["name"]
            elif named and prefix:
                kwargs["name"] = f"{prefix}{hint}{counter.get(hint, 0)}"
                counter[hint] = counter.get(hint, 0) + 1
            return fn(*args, **kwargs)

        return call


class HybridBlock(Block):
    """A Block whose computation is ``hybrid_forward(self, F, x, *args, **params)``, as mxnet
    1.x: ``F`` is the ``mx.nd`` module for NDArray inputs (``mx.sym`` for Symbols) and
    ``params`` the block's registered Parameters by attribute name, as NDArrays on ``x``'s
    context (as Symbols). Parameters whose initialization waits for their shape are
    initialized at the first call: the layer's :meth:`infer_shape` fixes their shapes from the
    inputs first. Children must be HybridBlocks. :meth:`hybridize` is accepted; the block keeps
    running imperatively (same numbers; nothing is cached or exported).
    """

    def __init__(self, prefix: str | None = None, params: ParameterDict | None = None) -> None:
        super().__init__(prefix=prefix, params=params)
        self._active = False
        self._flags: list[tuple[str, Any]] = []

    def register_child(self, block: Block, name: str | None = None) -> None:
        """Register a child, which must be a HybridBlock (else ``ValueError``, as mxnet)."""
        if not isinstance(block, HybridBlock):
            raise ValueError(
                f"Children of HybridBlock must also be HybridBlock, but {block} has type "
                f"{type(block)}. If you are using Sequential, please try HybridSequential "
                "instead."
            )
        super().register_child(block, name)

    def hybridize(self, active: bool = True, **kwargs: Any) -> None:
        """Record ``active`` (and the flags, such as ``static_alloc``) and pass them to the
        children. The computation stays imperative: outputs and gradients are the same as
        without ``hybridize``; nothing is compiled or cached (:meth:`export` writes the
        block's symbol graph and parameters)."""
        self._active = active
        self._flags = list(kwargs.items())
        super().hybridize(active, **kwargs)

    def infer_shape(self, *args: Any) -> None:
        """Fix the unknown dimensions of this block's parameters from the inputs ``args``, as
        mxnet: ``hybrid_forward`` runs on symbols (``data`` or ``data0``, ``data1``... and the
        parameters' ``var()``) and ``infer_shape_partial`` gives the parameters' shapes. That
        works for the operators of ``mx.sym``; the layers of ``gluon.nn`` define their own, and
        a block using other operators must define ``infer_shape(self, *args)`` setting
        ``param.shape`` (else ``NotImplementedError``)."""
        from .. import symbol

        arrays = [a for a in args if isinstance(a, NDArray)]
        if len(arrays) != len(args):
            raise NotImplementedError(
                f"{type(self).__name__}.infer_shape: only NDArray inputs are supported "
                "(docs/migration-mxnet.md)"
            )
        names = ["data"] if len(args) == 1 else [f"data{i}" for i in range(len(args))]
        params = {p.name: p for p in self._reg_params.values()}
        try:
            syms = [symbol.var(n) for n in names]
            sparams = {k: v.var() for k, v in self._reg_params.items()}
            with self.name_scope():
                F = _Prefixed(symbol, self.prefix)
                with F.scope():
                    out = self.hybrid_forward(F, *syms, **sparams)
            if isinstance(out, (list, tuple)):
                out = symbol.Group(list(out))
            arg_shapes, _, _ = out.infer_shape_partial(
                **{n: a.shape for n, a in zip(names, arrays)}
            )
        except (AttributeError, NotImplementedError, TypeError) as e:
            raise NotImplementedError(
                f"{type(self).__name__}.infer_shape: the shapes of this block's deferred "
                f"parameters ({', '.join(params)}) cannot be inferred through mx.sym ({e}); give "
                "their shapes (in_units, in_channels...) or define infer_shape(self, *args) "
                "setting param.shape (docs/migration-mxnet.md)"
            ) from e
        unknown = []
        for name, shape in zip(out.list_arguments(), arg_shapes):
            if name in params and shape:
                params[name].shape = tuple(shape)
            if name in params and not all(int(d) > 0 for d in shape or (0,)):
                unknown.append(f"{name}: {tuple(shape) if shape else params[name].shape}")
        if unknown:
            raise ValueError(
                "Cannot decide shape for the following arguments (0s in shape means unknown "
                "dimensions). Consider providing them as input:\n\t" + "\n\t".join(unknown)
            )

    def _deferred_infer_shape(self, *args: Any) -> None:
        try:
            self.infer_shape(*args)
        except Exception as e:
            raise ValueError(
                f"Deferred initialization failed because shape cannot be inferred. {e}"
            ) from e

    def forward(self, x: Any, *args: Any) -> Any:
        """``hybrid_forward(F, x, *args, **params)`` (see the class documentation)."""
        from .. import symbol

        inputs = [x, *args]
        has_sym = any(isinstance(a, symbol.Symbol) for a in inputs)
        has_nd = any(isinstance(a, NDArray) for a in inputs)
        if has_sym and has_nd:
            raise ValueError(
                "In HybridBlock, we do not support mixed NDArrays and Symbols types for the "
                "input. Please check the type of the args.\n"
            )
        if not has_sym and not has_nd:
            raise ValueError(
                "In HybridBlock, there must be one NDArray or one Symbol in the input. Please "
                "check the type of the args.\n"
            )
        if has_sym:
            sparams = {k: v.var() for k, v in self._reg_params.items()}
            with self.name_scope():
                F = _Prefixed(symbol, self.prefix)
                with F.scope():
                    return self.hybrid_forward(F, x, *args, **sparams)
        ctx = next(a.context for a in inputs if isinstance(a, NDArray))
        self._last_nargs = len(inputs)  # (export: the number of inputs)
        try:
            params = {k: v.data(ctx) for k, v in self._reg_params.items()}
        except DeferredInitializationError:
            self._deferred_infer_shape(x, *args)
            for v in self.params.values():
                v._finish_deferred_init()
            params = {k: v.data(ctx) for k, v in self._reg_params.items()}
        return self.hybrid_forward(nd, x, *args, **params)

    def hybrid_forward(self, F: Any, x: Any, *args: Any, **kwargs: Any) -> Any:
        """The computation with ``F`` (``mx.nd`` or ``mx.sym``): override it."""
        raise NotImplementedError

    def export(self, path: str, epoch: int = 0, remove_amp_cast: bool = True) -> None:
        """Write the block's graph to ``path-symbol.json`` (``mx.sym``'s JSON, mxnet 1.9.1's
        layout) and its parameters to ``path-%04d.params`` (``arg:NAME``/``aux:NAME``, mxnet's
        file), as mxnet: the graph is ``hybrid_forward`` run on ``mx.sym.var("data")`` (one
        input; ``data0``, ``data1``... for several, as many as the last call had). The block
        must be hybridized and have run forward once (else mxnet's ``RuntimeError``); its
        layers must exist in ``mx.sym``.

        Example::

            >>> import os, tempfile
            >>> import gradhub_compat.mxnet as mx
            >>> net = mx.gluon.nn.Dense(2, in_units=3, prefix="fc_")
            >>> net.initialize()
            >>> net.hybridize()
            >>> _ = net(mx.nd.ones((1, 3)))
            >>> path = os.path.join(tempfile.mkdtemp(), "fc")
            >>> net.export(path, epoch=1)
            >>> sorted(mx.nd.load(path + "-0001.params"))
            ['arg:fc_bias', 'arg:fc_weight']
        """
        from .. import symbol

        nargs = getattr(self, "_last_nargs", 0)
        if not self._active or not nargs:
            raise RuntimeError(
                "Please first call block.hybridize() and then run forward with this block at "
                "least once before calling export."
            )
        names = ["data"] if nargs == 1 else [f"data{i}" for i in range(nargs)]
        out = self(*[symbol.var(n) for n in names])
        if isinstance(out, (list, tuple)):
            out = symbol.Group(list(out))
        out.save(f"{path}-symbol.json")
        arg_names = set(out.list_arguments())
        aux_names = set(out.list_auxiliary_states())
        arg_dict = {}
        for name, param in self.collect_params().items():
            if name in arg_names:
                arg_dict[f"arg:{name}"] = param.data()
            elif name in aux_names:
                arg_dict[f"aux:{name}"] = param.data()
            else:
                warnings.warn(f'Parameter "{name}" is not found in the graph. ', stacklevel=2)
        nd.save(f"{path}-{int(epoch):04d}.params", arg_dict)


class SymbolBlock(HybridBlock):
    """A Block computing a Symbol graph (``outputs``) of the input variables ``inputs``, as
    mxnet 1.9.1: the other arguments of the graph become Parameters named as they are
    (``grad_req="null"`` for auxiliary states), of deferred shape, and :meth:`imports` builds
    one from the files of :meth:`HybridBlock.export` (or ``Module.save_checkpoint``). Called
    with Symbols it returns the graph composed with them; called with NDArrays it evaluates the
    graph with ``Symbol.bind`` on the current parameter values (inference: inside
    ``autograd.record()`` with parameters needing gradients it raises NotImplementedError, the
    graph is not recorded).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> data = mx.sym.var("data", dtype="float32")
        >>> net = mx.gluon.SymbolBlock(mx.sym.FullyConnected(data, num_hidden=2, name="fc"), data)
        >>> list(net.collect_params())
        ['fc_weight', 'fc_bias']
        >>> net.initialize(mx.init.One())
        >>> net(mx.nd.ones((1, 3))).asnumpy()  # weights and bias of ones
        array([[4., 4.]], dtype=float32)
    """

    def __init__(self, outputs: Any, inputs: Any, params: Any = None) -> None:
        from .. import symbol

        super().__init__(prefix="", params=ParameterDict("", params))
        if isinstance(inputs, symbol.Symbol):
            inputs = [inputs]
        if isinstance(outputs, (list, tuple)):
            outputs = outputs[0] if len(outputs) == 1 else symbol.Group(list(outputs))
        inputs = list(inputs)
        for i in inputs:
            if not isinstance(i, symbol.Symbol) or len(i.get_internals().list_outputs()) != 1:
                raise AssertionError(
                    f"Input symbols must be variable, but {i} is an output of operators"
                )
        self._input_names = [i.name for i in inputs]
        unknown = [f"{i.name}: None" for i in inputs if i.infer_type()[0] is None]
        if unknown:  # mxnet infers the input types first and warns
            warnings.warn(
                "Cannot decide type for the following arguments. Consider providing them as "
                "input:\n\t" + "\n\t".join(unknown),
                stacklevel=2,
            )
        self._graph = outputs
        for arg in outputs.list_arguments():
            if arg not in self._input_names:
                self.params.get(arg, allow_deferred_init=True)
        for aux in outputs.list_auxiliary_states():
            if aux not in self._input_names:
                self.params.get(aux, grad_req="null", allow_deferred_init=True)

    @staticmethod
    def imports(
        symbol_file: str,
        input_names: Any,
        param_file: str | None = None,
        ctx: Any = None,
        allow_missing: bool = False,
        ignore_extra: bool = False,
    ) -> SymbolBlock:
        """A SymbolBlock of the graph in ``symbol_file`` (``mx.sym.load``) with the inputs
        ``input_names`` (a name or a list), its parameters loaded from ``param_file``
        (``arg:``/``aux:`` keys, their dtypes kept), as mxnet 1.9.1. Loading only parses the
        files: nothing is unpickled or executed."""
        from .. import symbol

        sym = symbol.load(symbol_file)
        if isinstance(input_names, str):
            input_names = [input_names]
        if param_file is None:
            inputs = [symbol.var(i, dtype="float32") for i in input_names]
        else:
            inputs = [symbol.var(i) for i in input_names]
        ret = SymbolBlock(sym, inputs)
        if param_file is not None:
            ret.collect_params().load(
                param_file, ctx, allow_missing, ignore_extra, cast_dtype=True, dtype_source="saved"
            )
        return ret

    def forward(self, x: Any, *args: Any) -> Any:
        """The graph composed with Symbol inputs, or evaluated on NDArray inputs."""
        from .. import autograd, symbol

        inputs = [x, *args]
        if len(inputs) != len(self._input_names):
            raise AssertionError(
                f"SymbolBlock: {len(self._input_names)} inputs expected "
                f"({', '.join(self._input_names)}), got {len(inputs)}"
            )
        if all(isinstance(a, symbol.Symbol) for a in inputs):
            return self._graph(**dict(zip(self._input_names, inputs)))
        if not all(isinstance(a, NDArray) for a in inputs):
            raise AssertionError(
                "HybridBlock requires the first argument to forward be either Symbol or "
                f"NDArray, but got {type(x)}"
            )
        params = self.collect_params()
        if autograd.is_recording() and any(p.grad_req != "null" for p in params.values()):
            raise NotImplementedError(
                "SymbolBlock: training (a forward pass recorded by autograd.record()) is not "
                "supported by gradhub_compat.mxnet; SymbolBlock evaluates its graph for "
                "inference (docs/migration-mxnet.md)"
            )
        ctx = x.context
        shapes = {n: a.shape for n, a in zip(self._input_names, inputs)}
        if any(p._data is None for p in params.values()):
            arg_shapes, _, aux_shapes = self._graph.infer_shape(**shapes)
            known = dict(zip(self._graph.list_arguments(), arg_shapes or []))
            known.update(zip(self._graph.list_auxiliary_states(), aux_shapes or []))
            for name, p in params.items():
                if p._data is None and name in known:
                    p.shape = tuple(known[name])
                    p._finish_deferred_init()
        values = {name: p.data(ctx) for name, p in params.items()}
        arg_names = self._graph.list_arguments()
        aux_names = self._graph.list_auxiliary_states()
        feed = dict(zip(self._input_names, inputs))
        feed.update({n: values[n] for n in arg_names if n in values})
        ex = self._graph.bind(
            ctx,
            {n: feed[n] for n in arg_names},
            grad_req="null",
            aux_states={n: values[n] for n in aux_names},
        )
        outs = ex.forward(is_train=autograd.is_training())
        outs = [o.copy() for o in outs]
        return outs[0] if len(outs) == 1 else outs

    def hybrid_forward(self, F: Any, x: Any, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    def __repr__(self) -> str:
        n_out = len(self._graph.list_outputs())
        return f"{type(self).__name__}(\n{self._graph} : {len(self._input_names)} -> {n_out}\n)"
