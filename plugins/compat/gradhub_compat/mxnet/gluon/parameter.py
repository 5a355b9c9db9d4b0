"""mxnet Gluon's parameters: :class:`Parameter`, :class:`Constant`, :class:`ParameterDict`, as
mxnet 1.9.1.

A Parameter holds one data NDArray per context it was initialized on, marked for
``mx.autograd`` with a gradient NDArray per ``grad_req`` (``"write"``, ``"add"``; none for
``"null"``), so that ``loss.backward()`` inside ``mx.autograd.record()`` fills ``grad()``. A shape
with unknown dimensions (0, as mxnet 1.x) defers the initialization, when allowed, until the
first forward pass fixes the shape.

Example::

    >>> import gradhub_compat.mxnet as mx
    >>> w = mx.gluon.Parameter("w", shape=(2, 3), init=mx.init.One())
    >>> w.initialize()
    >>> with mx.autograd.record():
    ...     y = (w.data() * 2).sum()
    >>> y.backward()
    >>> w.grad().asnumpy()
    array([[2., 2., 2.],
           [2., 2., 2.]], dtype=float32)
"""

from __future__ import annotations

import re
import warnings
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

import numpy as np

from .. import autograd
from .. import initializer as _initializer
from .. import ndarray as nd
from ..base import MXNetError
from ..context import Context, cpu, current_context
from ..ndarray import NDArray

__all__ = ["Constant", "DeferredInitializationError", "Parameter", "ParameterDict"]


class DeferredInitializationError(MXNetError):
    """Raised when the data of a Parameter whose initialization was deferred (its shape has
    unknown dimensions) is read before the first forward pass fixed the shape (as mxnet)."""


def _shape_is_known(shape: tuple[int, ...] | None) -> bool:
    return shape is not None and all(int(d) > 0 for d in shape)


def _ctx_list(ctx: Any, where: str) -> list[Context]:
    if ctx is None:
        return [current_context()]
    if isinstance(ctx, Context):
        return [ctx]
    ctxs = list(ctx)
    for c in ctxs:
        if not isinstance(c, Context):
            raise TypeError(
                f"{where}: ctx must be a Context or a list of Contexts, got {type(c).__name__}"
            )
    return ctxs


class Parameter:
    """A Gluon parameter, as mxnet's ``gluon.Parameter``.

    ``shape`` may hold 0 for unknown dimensions (set when the first forward pass runs; with
    ``allow_deferred_init`` the initialization waits until then); ``init`` is this parameter's
    own initializer (an :class:`mx.init.Initializer` or a registered name such as ``"zeros"``),
    which takes precedence over the ``default_init`` given to :meth:`initialize`; ``lr_mult``
    and ``wd_mult`` scale the learning rate and weight decay a Trainer applies;
    ``differentiable=False`` forces ``grad_req="null"``.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> p = mx.gluon.Parameter("fc_weight", shape=(2, 2))
        >>> p.initialize(init=mx.init.Zero())
        >>> p.data().asnumpy()
        array([[0., 0.],
               [0., 0.]], dtype=float32)
    """

    def __init__(
        self,
        name: str,
        grad_req: str = "write",
        shape: Any = None,
        dtype: Any = np.float32,
        lr_mult: float = 1.0,
        wd_mult: float = 1.0,
        init: Any = None,
        allow_deferred_init: bool = False,
        differentiable: bool = True,
        stype: str = "default",
        grad_stype: str = "default",
    ) -> None:
        if stype != "default" or grad_stype != "default":
            raise NotImplementedError(
                f"gluon.Parameter: stype={stype!r}, grad_stype={grad_stype!r} (sparse storage) "
                "is not supported (docs/migration-mxnet.md)"
            )
        self._var: Any = None
        self._data: list[NDArray] | None = None
        self._grad: list[NDArray] | None = None
        self._ctx_list: list[Context] | None = None
        self._trainer: Any = None
        self._deferred_init: tuple[Any, ...] = ()
        self._differentiable = differentiable
        self._allow_deferred_init = allow_deferred_init
        self._grad_req: str | None = None
        if isinstance(shape, (int, np.integer)):
            shape = (int(shape),)
        self._shape: tuple[int, ...] | None = None if shape is None else tuple(shape)
        self.name = name
        self._dtype = dtype
        self.lr_mult = lr_mult
        self.wd_mult = wd_mult
        self.grad_req = grad_req
        self.init = init
        self._stype = stype
        self._grad_stype = grad_stype

    def __repr__(self) -> str:
        return f"Parameter {self.name} (shape={self.shape}, dtype={self.dtype})"

    # -- attributes --------------------------------------------------------------------------
    @property
    def grad_req(self) -> str:
        """``"write"``, ``"add"`` or ``"null"``; setting it (re)allocates or drops the gradient
        buffers of an initialized parameter (``"null"``: the data is detached)."""
        return self._grad_req  # type: ignore[return-value]

    @grad_req.setter
    def grad_req(self, req: str) -> None:
        if req not in ("write", "add", "null"):
            raise AssertionError(
                f"Parameter.grad_req: grad_req must be one of 'write', 'add', or 'null', but got "
                f"'{req}'"
            )
        if not self._differentiable:
            req = "null"
        if self._grad_req == req:
            return
        self._grad_req = req
        if req == "null" and self._grad is not None:
            self._grad = None
            self._data = [d.detach() for d in self._data or []]
        elif self._data is not None:
            self._init_grad()

    @property
    def dtype(self) -> Any:
        """The dtype; setting it casts the data and gradient (:meth:`cast`)."""
        return self._dtype

    @dtype.setter
    def dtype(self, dtype: Any) -> None:
        self.cast(dtype)

    @property
    def shape(self) -> tuple[int, ...] | None:
        """The shape (0: a dimension not known yet), None when not given."""
        return self._shape

    @shape.setter
    def shape(self, new_shape: Any) -> None:
        new_shape = tuple(int(d) for d in new_shape)
        if self._shape is None:
            self._shape = new_shape
            return
        if len(self._shape) != len(new_shape) or not all(
            j in (-1, 0, i) for i, j in zip(new_shape, self._shape)
        ):
            raise AssertionError(
                f"Parameter '{self.name}': Expected shape {new_shape} is incompatible with given "
                f"shape {self._shape}."
            )
        self._shape = new_shape

    @property
    def stype(self) -> str:
        """The storage type: ``"default"`` (sparse storage is not supported)."""
        return self._stype

    # -- data --------------------------------------------------------------------------------
    def _check_and_get(self, arr_list: list[NDArray] | None, ctx: Any) -> Any:
        if arr_list is not None:
            if ctx is list:
                return arr_list
            if ctx is None:
                if len(arr_list) == 1:
                    return arr_list[0]
                ctx = current_context()
            for c, a in zip(self._ctx_list or [], arr_list):
                if c == ctx:
                    return a
            raise RuntimeError(
                f"Parameter '{self.name}' was not initialized on context {ctx}. It was only "
                f"initialized on {self._ctx_list}."
            )
        if self._deferred_init:
            raise DeferredInitializationError(
                f"Parameter '{self.name}' has not been initialized yet because initialization "
                "was deferred. Actual initialization happens during the first forward pass. "
                "Please pass one batch of data through the network before accessing Parameters. "
                "You can also avoid deferred initialization by specifying in_units, "
                "num_features, etc., for network layers."
            )
        raise RuntimeError(
            f"Parameter '{self.name}' has not been initialized. Note that you should initialize "
            "parameters and create Trainer with Block.collect_params() instead of Block.params "
            "because the later does not include Parameters of nested child Blocks"
        )

    def _finish_deferred_init(self) -> None:
        """Initialize now that the shape is known (the first forward pass calls this)."""
        if not self._deferred_init:
            return
        init, ctx, default_init, data = self._deferred_init
        self._deferred_init = ()
        if not _shape_is_known(self._shape):
            raise AssertionError(
                f"Cannot initialize Parameter '{self.name}' because it has invalid shape: "
                f"{self._shape}. Please specify in_units, in_channels, etc for `Block`s."
            )
        with autograd.pause():
            if data is None:
                data = nd.zeros(self._shape, ctx=cpu(), dtype=self._dtype)
                _initializer.create(default_init)(
                    _initializer.InitDesc(self.name, {"__init__": init}), data
                )
            self._init_impl(data, ctx)

    def _init_impl(self, data: NDArray, ctx_list: list[Context]) -> None:
        self._ctx_list = list(ctx_list)
        self._data = [data.copyto(c) for c in self._ctx_list]
        self._init_grad()

    def _init_grad(self) -> None:
        if self.grad_req == "null" or self._data is None:
            self._grad = None
            return
        self._grad = [nd.zeros(d.shape, ctx=d.context, dtype=d.dtype) for d in self._data]
        autograd.mark_variables(self._data, self._grad, self.grad_req)

    def initialize(
        self,
        init: Any = None,
        ctx: Any = None,
        default_init: Any = None,
        force_reinit: bool = False,
    ) -> None:
        """Allocate the data (and gradient) on ``ctx`` (a Context or a list; the current context
        by default) and fill it with ``init``, else this parameter's ``init``, else
        ``default_init`` (``mx.init.Uniform()`` when None), which dispatches on the name as
        mxnet (``*_weight``: its ``_init_weight``, ``*_bias``: zeros...). An initialized
        parameter warns and is left alone unless ``force_reinit``. With unknown dimensions the
        initialization is deferred to the first forward pass (``allow_deferred_init``), else
        raises ``ValueError``."""
        if default_init is None:
            default_init = _initializer.Uniform()
        if self._data is not None and not force_reinit:
            warnings.warn(
                f"Parameter '{self.name}' is already initialized, ignoring. Set "
                "force_reinit=True to re-initialize.",
                stacklevel=2,
            )
            return
        self._data = self._grad = None
        ctxs = _ctx_list(ctx, "Parameter.initialize")
        if init is None:
            init = default_init if self.init is None else self.init
        if not _shape_is_known(self._shape):
            if self._allow_deferred_init:
                self._deferred_init = (init, ctxs, default_init, None)
                return
            raise ValueError(
                f"Cannot initialize Parameter '{self.name}' because it has invalid shape: "
                f"{self._shape}."
            )
        self._deferred_init = (init, ctxs, default_init, None)
        self._finish_deferred_init()

    def reset_ctx(self, ctx: Any) -> None:
        """Move the data to the context(s) ``ctx`` (the gradients are reset to zeros)."""
        ctxs = _ctx_list(ctx, "Parameter.reset_ctx")
        if self._data:
            data = self._data[0].copyto(cpu())
            with autograd.pause():
                self._init_impl(data, ctxs)
        elif self._deferred_init:
            init, _, default_init, data = self._deferred_init
            self._deferred_init = (init, ctxs, default_init, data)
        else:
            raise ValueError(
                f"Cannot reset context for Parameter '{self.name}' because it has not been "
                "initialized."
            )

    def set_data(self, data: Any) -> None:
        """Write ``data`` (an NDArray or array-like of this parameter's shape) into the data on
        every context; before a deferred initialization it becomes the initial value. A
        trainer updating on a kvstore drops its kvstore (as mxnet: made again at its next
        step)."""
        if not isinstance(data, NDArray):
            data = nd.array(data, dtype=self._dtype)
        self.shape = data.shape
        if self._data is None:
            if not self._deferred_init:
                raise AssertionError(f"Parameter '{self.name}' has not been initialized")
            self._deferred_init = (*self._deferred_init[:3], data)
            return
        # with updates on a kvstore, its copy of the weight must follow: mxnet 1.9.1 drops the
        # trainer's kvstore (made again, with fresh optimizer states, at the next step)
        trainer = self._trainer
        if trainer is not None and trainer._kv_initialized and trainer._update_on_kvstore:
            if self not in trainer._params_to_init:
                trainer._reset_kvstore()
        for arr in self._data:
            arr[:] = data

    def data(self, ctx: Context | None = None) -> NDArray:
        """The data NDArray on ``ctx`` (the only one when initialized on one context)."""
        return self._check_and_get(self._data, ctx)  # type: ignore[no-any-return]

    def list_data(self) -> list[NDArray]:
        """The data NDArrays on every context, in the order of initialization."""
        return self._check_and_get(self._data, list)  # type: ignore[no-any-return]

    def grad(self, ctx: Context | None = None) -> NDArray:
        """The gradient NDArray on ``ctx``; ``grad_req="null"`` raises ``RuntimeError``."""
        if self._data is not None and self._grad is None:
            raise RuntimeError(
                f"Cannot get gradient array for Parameter '{self.name}' because grad_req='null'"
            )
        return self._check_and_get(self._grad, ctx)  # type: ignore[no-any-return]

    def list_grad(self) -> list[NDArray]:
        """The gradient NDArrays on every context."""
        if self._data is not None and self._grad is None:
            raise RuntimeError(
                f"Cannot get gradient array for Parameter '{self.name}' because grad_req='null'"
            )
        return self._check_and_get(self._grad, list)  # type: ignore[no-any-return]

    def list_ctx(self) -> list[Context]:
        """The contexts the parameter is (or, deferred, will be) initialized on."""
        if self._data is None:
            if self._deferred_init:
                return list(self._deferred_init[1])
            raise RuntimeError(f"Parameter '{self.name}' has not been initialized")
        return list(self._ctx_list or [])

    def zero_grad(self) -> None:
        """Set the gradient buffers to 0 (nothing when uninitialized or ``grad_req="null"``)."""
        if self._grad is None:
            return
        for g in self._grad:
            g[:] = 0

    def var(self) -> Any:
        """A symbol ``mx.sym.var(name, shape, dtype, lr_mult, wd_mult, init)`` for this
        parameter."""
        if self._var is None:
            from .. import symbol

            init = self.init
            if init is not None and not isinstance(init, str):
                init = init.dumps()
            self._var = symbol.var(
                self.name,
                shape=self._shape,
                dtype=self._dtype,
                lr_mult=self.lr_mult,
                wd_mult=self.wd_mult,
                init=init,
            )
        return self._var

    def cast(self, dtype: Any) -> None:
        """Convert the data and gradient to ``dtype`` (the gradient buffers are converted too and
        the data marked again)."""
        self._dtype = dtype
        if self._data is None:
            return
        with autograd.pause():
            self._data = [d.astype(dtype) for d in self._data]
            if self._grad is None:
                return
            self._grad = [g.astype(dtype) for g in self._grad]
            autograd.mark_variables(self._data, self._grad, self.grad_req)


class Constant(Parameter):
    """A parameter holding a fixed value (``grad_req`` is always ``"null"``; ``set_data`` still
    changes it), initialized with ``value`` whatever initializer is given.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> c = mx.gluon.Constant("c", [[1, 2], [3, 4]])
        >>> c.initialize()
        >>> c.data().asnumpy()
        array([[1., 2.],
               [3., 4.]], dtype=float32)
    """

    def __init__(self, name: str, value: Any) -> None:
        if not isinstance(value, NDArray):
            value = nd.array(value)
        self.value = value
        const = value

        class Init(_initializer.Initializer):
            def _init_weight(self, _: Any, arr: NDArray) -> None:
                arr[:] = const

        super().__init__(name, grad_req="null", shape=value.shape, dtype=value.dtype, init=Init())

    def __repr__(self) -> str:
        return f"Constant {self.name} (shape={self.shape}, dtype={self.dtype})"

    @property
    def grad_req(self) -> str:
        """Always ``"null"``: setting another value warns and is ignored (as mxnet)."""
        return "null"

    @grad_req.setter
    def grad_req(self, req: str) -> None:
        if req != "null":
            warnings.warn(
                f'Constant parameter "{self.name}" does not support grad_req other than "null", '
                f'and new value "{req}" is ignored.',
                stacklevel=2,
            )


class ParameterDict:
    """An ordered mapping name -> :class:`Parameter` (as mxnet's ``gluon.ParameterDict``):
    iterating gives the names; :meth:`get` creates parameters named ``prefix + name`` (or
    returns those of ``shared``).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> pd = mx.gluon.ParameterDict("net_")
        >>> w = pd.get("weight", shape=(2, 3))
        >>> list(pd.keys()), w.name
        (['net_weight'], 'net_weight')
    """

    def __init__(self, prefix: str = "", shared: ParameterDict | None = None) -> None:
        self._prefix = prefix
        self._params: OrderedDict[str, Parameter] = OrderedDict()
        self._shared = shared

    def __repr__(self) -> str:
        name = self._prefix + " " if self._prefix else ""
        content = "\n".join(f"  {v}" for v in self.values())
        return f"{name}(\n{content}\n)"

    def __getitem__(self, key: str) -> Parameter:
        return self._params[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._params)

    def __len__(self) -> int:
        return len(self._params)

    def __contains__(self, key: object) -> bool:
        return key in self._params

    def items(self) -> Any:
        """``(name, Parameter)`` pairs in order of creation."""
        return self._params.items()

    def keys(self) -> Any:
        """The names in order of creation."""
        return self._params.keys()

    def values(self) -> Any:
        """The Parameters in order of creation."""
        return self._params.values()

    @property
    def prefix(self) -> str:
        """The prefix :meth:`get` puts before the names it creates."""
        return self._prefix

    def _get_impl(self, name: str) -> Parameter | None:
        if name in self._params:
            return self._params[name]
        if self._shared is not None and name in self._shared._params:
            self._params[name] = self._shared._params[name]
            return self._shared._params[name]
        return None

    def get(self, name: str, **kwargs: Any) -> Parameter:
        """The Parameter ``prefix + name``: this dict's, else the shared dict's, else a new one
        made with ``kwargs``. For an existing one, ``kwargs`` must agree with its attributes (a
        shape may fill its unknown dimensions), else ``AssertionError`` as mxnet."""
        name = self.prefix + name
        param = self._get_impl(name)
        if param is None:
            param = Parameter(name, **kwargs)
            self._params[name] = param
            return param
        for k, v in kwargs.items():
            existing = getattr(param, k, None)
            if existing is None:
                setattr(param, k, v)
                continue
            if k == "shape" and v is not None:
                v = (v,) if isinstance(v, int) else tuple(v)
                if len(v) == len(existing):
                    merged = []
                    matched = True
                    for d1, d2 in zip(v, existing):
                        if d1 != d2 and d1 > 0 and d2 > 0:
                            matched = False
                            break
                        merged.append(d2 if d1 in (0, -1) else d1)
                    if matched:
                        param._shape = tuple(merged)
                        continue
            elif k == "dtype" and np.dtype(v) == np.dtype(existing):
                continue
            if not (v is None or v == existing):
                raise AssertionError(
                    f"Cannot retrieve Parameter '{name}' because desired attribute does not "
                    f"match with stored for attribute '{k}': desired '{v}' vs stored "
                    f"'{existing}'."
                )
        return param

    def get_constant(self, name: str, value: Any = None) -> Constant:
        """The :class:`Constant` ``prefix + name``, created with ``value`` when missing."""
        name = self.prefix + name
        param = self._get_impl(name)
        if param is None:
            if value is None:
                raise KeyError(
                    f"No constant named '{name}'. Please specify value if you want to create a "
                    "new constant."
                )
            param = Constant(name, value)
            self._params[name] = param
        elif value is not None:
            if not isinstance(param, Constant):
                raise AssertionError(f"Parameter '{name}' already exists but it is not a constant.")
            v = value.asnumpy() if isinstance(value, NDArray) else np.asarray(value)
            if param.shape != v.shape or not (param.value.asnumpy() == v).all():
                raise AssertionError(
                    f"Constant '{name}' already exists but it's value doesn't match new value"
                )
        return param  # type: ignore[return-value]

    def update(self, other: ParameterDict) -> None:
        """Add every Parameter of ``other`` (a name held by a different Parameter raises)."""
        for k, v in other.items():
            if k in self._params and self._params[k] is not v:
                raise AssertionError(
                    "Cannot update self with other because they have different Parameters with "
                    f"the same name '{k}'"
                )
        for k, v in other.items():
            self._params[k] = v

    def initialize(
        self,
        init: Any = None,
        ctx: Any = None,
        verbose: bool = False,
        force_reinit: bool = False,
    ) -> None:
        """Initialize every Parameter (:meth:`Parameter.initialize`) with ``init`` as the default
        initializer (``mx.init.Uniform()`` when None); a Parameter's own ``init`` wins."""
        if init is None:
            init = _initializer.Uniform()
        if verbose and hasattr(init, "set_verbosity"):
            init.set_verbosity(verbose=verbose)
        for v in self.values():
            v.initialize(None, ctx, init, force_reinit=force_reinit)

    def zero_grad(self) -> None:
        """Set every gradient buffer to 0."""
        for p in self.values():
            p.zero_grad()

    def reset_ctx(self, ctx: Any) -> None:
        """Move every Parameter to ``ctx``."""
        for p in self.values():
            p.reset_ctx(ctx)

    def list_ctx(self) -> list[Context]:
        """The contexts any Parameter is initialized on."""
        s: list[Context] = []
        for p in self.values():
            for c in p.list_ctx():
                if c not in s:
                    s.append(c)
        return s

    def setattr(self, name: str, value: Any) -> None:
        """Set the attribute ``name`` of every Parameter (``setattr("grad_req", "null")``)."""
        for p in self.values():
            setattr(p, name, value)

    def _select(self, select: str | None) -> ParameterDict:
        """A dict of the Parameters whose names match the regular expression ``select``."""
        out = ParameterDict(self._prefix)
        pattern = re.compile(select) if select is not None else None
        for k, v in self.items():
            if pattern is None or pattern.match(k):
                out._params[k] = v
        return out

    def save(self, filename: str, strip_prefix: str = "") -> None:
        """Save the data (from the first context) with ``mx.nd.save``, names without
        ``strip_prefix``."""
        arg_dict = {}
        for param in self.values():
            weight = param.data()
            if not param.name.startswith(strip_prefix):
                raise ValueError(
                    f"Prefix '{strip_prefix}' is to be striped before saving, but Parameter's "
                    f"name '{param.name}' does not start with '{strip_prefix}'."
                )
            arg_dict[param.name[len(strip_prefix) :]] = weight
        from .. import ndarray_io

        ndarray_io.save(filename, arg_dict)

    def load(
        self,
        filename: str,
        ctx: Any = None,
        allow_missing: bool = False,
        ignore_extra: bool = False,
        restore_prefix: str = "",
        cast_dtype: bool = False,
        dtype_source: str = "current",
    ) -> None:
        """Load the arrays of ``filename`` (``mx.nd.load``: only parsed, nothing unpickled)
        into the Parameters named ``restore_prefix + key`` (:meth:`load_dict`)."""
        from .. import ndarray_io

        if restore_prefix:
            for name in self.keys():
                if not name.startswith(restore_prefix):
                    raise AssertionError(
                        f"restore_prefix is '{restore_prefix}' but Parameters name '{name}' does "
                        f"not start with '{restore_prefix}'."
                    )
        self.load_dict(
            ndarray_io.load(filename),
            ctx,
            allow_missing,
            ignore_extra,
            restore_prefix,
            filename,
            cast_dtype,
            dtype_source,
        )

    def load_dict(
        self,
        param_dict: Any,
        ctx: Any = None,
        allow_missing: bool = False,
        ignore_extra: bool = False,
        restore_prefix: str = "",
        filename: str | None = None,
        cast_dtype: bool = False,
        dtype_source: str = "current",
    ) -> None:
        """Initialize the Parameters from ``param_dict`` (name -> NDArray; ``arg:``/``aux:``
        prefixes dropped, ``restore_prefix`` added); a Parameter missing from it raises
        ``AssertionError`` unless ``allow_missing``, an extra name unless ``ignore_extra``."""
        from .block import _brief, _load_init

        if not isinstance(param_dict, dict):
            raise ValueError("ParameterDict.load_dict: expected a dict of named arrays")
        loaded = [
            (k[4:] if k.startswith(("arg:", "aux:")) else k, v) for k, v in param_dict.items()
        ]
        arg_dict = {restore_prefix + k: v for k, v in loaded}
        where = f"file: {filename}" if filename else "param_dict"
        if not allow_missing:
            for name in self.keys():
                if name not in arg_dict:
                    raise AssertionError(
                        f"Parameter '{name[len(restore_prefix) :]}' is missing in {where}, which "
                        f"contains parameters: {_brief(list(arg_dict))}. Please make sure source "
                        "and target networks have the same prefix."
                    )
        for name, value in arg_dict.items():
            if name not in self._params:
                if not ignore_extra:
                    raise AssertionError(
                        f"Parameter '{name[len(restore_prefix) :]}' loaded from {where} is not "
                        f"present in ParameterDict, choices are: {_brief(list(self.keys()))}. Set "
                        "ignore_extra to True to ignore. "
                    )
                continue
            _load_init(self[name], value, ctx, cast_dtype, dtype_source)
