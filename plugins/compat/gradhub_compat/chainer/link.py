"""chainer's ``Parameter``, ``Link``, ``Chain`` and ``ChainList`` (chainer 7.8.1 ``link.py``).

A :class:`Parameter` is a chainer :class:`~gradhub_compat.chainer.Variable` (so a gradhub
leaf: the native engine accumulates gradients into it) that may start *uninitialized*: its
``array`` is None until :meth:`Parameter.initialize` gives it a shape (``L.Linear(None, 10)``
does that at the first call). As in chainer, a parameter made with a shape starts with a NaN
gradient (call ``cleargrads()`` before the first backward) and an uninitialized one refuses
``.grad`` until ``cleargrad()`` or :meth:`~Parameter.initialize`.

A :class:`Link` registers the Parameters assigned to it inside ``with self.init_scope():``; a
:class:`Chain` also registers child links, a :class:`ChainList` holds them in a list. Traversal
orders (sorted names, then children), the paths of ``namedparams()`` (``/l1/W``) and the
serialization keys (``l1/W``) are chainer's.

Example::

    >>> import numpy as np
    >>> from gradhub_compat import chainer
    >>> import gradhub_compat.chainer.links as L
    >>> class MLP(chainer.Chain):
    ...     def __init__(self):
    ...         super().__init__()
    ...         with self.init_scope():
    ...             self.l1 = L.Linear(None, 3)
    ...             self.l2 = L.Linear(3, 2)
    ...     def forward(self, x):
    ...         return self.l2(self.l1(x))
    >>> model = MLP()
    >>> [name for name, _ in model.namedparams()]
    ['/l1/W', '/l1/b', '/l2/W', '/l2/b']
    >>> print(model.l1.W.array)                      # shape unknown until the first call
    None
    >>> model(np.ones((4, 5), dtype=np.float32)).shape
    (4, 2)
    >>> model.l1.W.shape
    (3, 5)
"""

from __future__ import annotations

import collections.abc
import contextlib
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
from gradhub.variable import Variable as _NativeVariable
from gradhub.variable import observe_hand_out, observe_write

from . import Variable, _zero_grad
from . import initializers as _init
from ._device import PAGE, get_device, send, serialize_value

__all__ = ["Chain", "ChainList", "Link", "Parameter"]


class Parameter(Variable):
    """chainer's ``Parameter(initializer=None, shape=None, name=None)``.

    ``initializer``: an array (used as the data when ``shape`` is None), a scalar (a constant),
    an initializer (``chainer.initializers``) or None (NaN). With ``shape`` the data is made at
    once (float32 unless the initializer has a dtype) and the gradient is NaN; without one the
    parameter is uninitialized until :meth:`initialize`. ``update_rule`` is set by an
    optimizer's ``setup``.
    """

    # (a __dict__ for these: a Parameter is not made in hot loops)
    initializer: Any
    update_rule: Any
    _grad_initializer: Any
    _grad_valid: bool
    _initial_device: Any

    def __init__(self, initializer: Any = None, shape: Any = None, name: str | None = None) -> None:
        if initializer is None:
            initializer = _init.NaN()
        elif np.isscalar(initializer):
            initializer = _init.Constant(initializer)
        self._grad_initializer = None
        self._grad_valid = True
        if shape is None:
            if hasattr(initializer, "shape") and hasattr(initializer, "dtype"):
                super().__init__(initializer, name=name)  # the array itself is the data
            else:
                super().__init__(None, name=name)
                self._grad_valid = False  # chainer: .grad raises until cleargrad()
                self._grad_initializer = _init.NaN(getattr(initializer, "dtype", None))
        else:
            if hasattr(initializer, "shape") and hasattr(initializer, "dtype"):
                initializer = _init.Constant(initializer)
            data = _init.generate_array(initializer, shape, np)
            super().__init__(data, name=name, grad=np.full_like(data, np.nan))
        self._initial_device = None  # None: the CPU
        self.update_rule = None
        self.initializer = initializer

    def _reduced_dict(self) -> dict[str, Any]:
        """The attributes of a deep copy (or an unpickled copy), as chainer's
        ``_recover_parameter`` rebuilds them: a new ``Parameter(initializer)``, so the gradient
        initializer is NaN unless the initializer is an array (then None); ``initialize()`` on
        the copy (``Link.copy('init')``) makes a NaN gradient."""
        d = dict(self.__dict__)
        init = self.initializer
        d["_grad_initializer"] = (
            None
            if hasattr(init, "shape") and hasattr(init, "dtype")
            else _init.NaN(getattr(init, "dtype", None))
        )
        return d

    @property
    def is_initialized(self) -> bool:
        """Whether the data array exists."""
        return self._data is not None

    @property
    def dtype(self) -> Any:
        """The data's dtype; for an uninitialized parameter, numpy's dtype of the initializer's
        ``dtype`` attribute (chainer's rule: float64 for an initializer whose dtype is None,
        although :meth:`initialize` makes float32), else a RuntimeError."""
        if self._data is not None:
            return self._data.dtype
        if hasattr(self.initializer, "dtype"):
            return np.dtype(self.initializer.dtype)
        raise RuntimeError(
            "Dtype of the parameter is not determined yet because it's uninitialized and dtype "
            "was not explicitly given."
        )

    @property
    def grad(self) -> Any:  # type: ignore[override]
        """The gradient array or None; an uninitialized parameter raises (chainer's
        RuntimeError) until ``cleargrad()`` is called or it is initialized."""
        if not self._grad_valid:
            raise RuntimeError(
                "Cannot retrieve Variable.grad. Either it must be set manually or "
                "Variable.cleargrad() must be called beforehand."
            )
        if self._grad is None:
            return None
        observe_hand_out(self._grad._data)  # (read-only while gradhub.compile traces a step)
        return self._grad._data

    @grad.setter
    def grad(self, value: Any) -> None:
        Variable.grad.fset(self, value)  # type: ignore[attr-defined]
        self._grad_valid = True

    def cleargrad(self) -> None:
        """Set the gradient to None (and, uninitialized, make it None after initialization)."""
        observe_write(self, "g", None)  # (replayed inside a compiled step)
        self._grad = None
        self._grad_valid = True
        if self._data is None:
            self._grad_initializer = None

    def zerograd(self) -> None:
        """Set the gradient to zeros (deprecated in chainer; use :meth:`cleargrad`): in place,
        as :meth:`Variable.zerograd`; uninitialized, the gradient made by :meth:`initialize`
        becomes zeros."""
        warnings.warn(
            "Variable.zerograd is deprecated. Use Variable.cleargrad instead.",
            DeprecationWarning,
            stacklevel=2,
        )
        self._grad_valid = True
        if self._data is None:
            self._grad_initializer = _init.Zero(getattr(self.initializer, "dtype", None))
        else:
            observe_write(self, "g", 0)  # (replayed inside a compiled step, as .g = 0)
            _zero_grad(self)  # in place, as chainer

    def initialize(self, shape: Any) -> None:
        """Make the data array of ``shape`` with :attr:`initializer` (and the gradient with the
        gradient initializer: NaN, zeros after ``zerograd()``, None after ``cleargrad()``)."""
        dev = self._initial_device
        data = _init.generate_array(self.initializer, shape, np, device=dev)
        self._data = data
        self._need_grad = data.dtype.kind in "fc"
        if self._grad_initializer is None:
            self._grad = None
        else:
            grad = _init.generate_array(self._grad_initializer, shape, np, device=dev)
            self._grad = _NativeVariable.leaf(grad, True)
        self._grad_valid = True

    def update(self) -> None:
        """Update the data with the gradient by the :attr:`update_rule` (set by
        ``optimizer.setup``); nothing without one."""
        if self.update_rule is not None:
            self.update_rule.update(self)

    def to_device(self, device: Any) -> None:
        """Move the data and the gradient (or, uninitialized, the future data) to ``device``."""
        dev = get_device(device, "chainer Parameter.to_device")
        self._initial_device = None if dev.kind == "cpu" else dev
        if self._data is not None:
            Variable.to_device(self, dev)
        rule = self.update_rule
        if rule is not None and rule.state:
            for k, v in rule.state.items():
                if hasattr(v, "shape"):
                    rule.state[k] = send(v, dev)


def _unsupported(feature: str) -> NotImplementedError:
    return NotImplementedError(f"chainer {feature} is not supported by gradhub; see {PAGE}")


def _is_shape(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, collections.abc.Sequence):
        try:
            return all(int(x) for x in value)
        except TypeError:
            return False
    try:
        int(value)
        return True
    except TypeError:
        return False


class Link:
    """chainer's ``Link``: a set of named Parameters and persistent values.

    ``Link(**params)`` adds parameters by shape (``Link(W=(2, 3))``; None: uninitialized,
    NaN-filled when made). Parameters assigned inside ``with self.init_scope():`` are
    registered under their attribute name; :meth:`add_param`, :meth:`add_persistent` and
    :meth:`register_persistent` do it explicitly. Calling a link calls its ``forward``.
    """

    _init_done = False

    def __init__(self, **params: Any) -> None:
        self._params: set[str] = set()
        self._persistent: set[str] = set()
        self._within_init_scope = False
        self.name: str | None = None
        self._init_done = True
        for name, value in params.items():
            shape, dtype = (value, np.float32) if _is_shape(value) else value
            self.add_param(name, shape, dtype=dtype)

    def _check_init_done(self) -> None:
        if not self._init_done:
            raise RuntimeError("Link.__init__() has not been called.")

    def __str__(self) -> str:
        specs = ", ".join(f"{k}={v}" for k, v in self.printable_specs)
        return f"{type(self).__name__}({specs})"

    @property
    def printable_specs(self) -> Iterator[tuple[str, Any]]:
        """The (name, value) pairs that ``str(link)`` shows."""
        yield from ()

    @property
    def within_init_scope(self) -> bool:
        """Whether attribute assignments register parameters (and child links) now."""
        return getattr(self, "_within_init_scope", False)

    @contextlib.contextmanager
    def init_scope(self) -> Iterator[None]:
        """A block in which Parameters (and, in a Chain, Links) assigned as attributes are
        registered."""
        self._check_init_done()
        old = self.within_init_scope
        self._within_init_scope = True
        try:
            yield
        finally:
            self._within_init_scope = old

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self._check_init_done()
        return self.forward(*args, **kwargs)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The computation of the link (defined by subclasses)."""
        raise NotImplementedError(f"{type(self).__name__}.forward is not defined")

    def __setattr__(self, name: str, value: Any) -> None:
        if self.within_init_scope and isinstance(value, Parameter):
            value.name = name
            self._params.add(name)
            self._persistent.discard(name)
        super().__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        self._params.discard(name)
        self._persistent.discard(name)
        super().__delattr__(name)

    def add_param(
        self, name: str, shape: Any = None, dtype: Any = np.float32, initializer: Any = None
    ) -> None:
        """Register a new Parameter ``name`` of ``shape`` (None: uninitialized)."""
        if name in self.__dict__:
            raise AttributeError(f"cannot register a new parameter {name}: attribute exists")
        if initializer is None:
            initializer = _init.NaN(dtype)
        param = Parameter(initializer, shape)
        with self.init_scope():
            setattr(self, name, param)

    def add_persistent(self, name: str, value: Any) -> None:
        """Register a new persistent value (saved by the serializers, moved by to_device)."""
        d = self.__dict__
        if name in d:
            raise AttributeError(f"cannot register a new persistent value {name}: attribute exists")
        self._persistent.add(name)
        self._params.discard(name)
        d[name] = value

    def register_persistent(self, name: str) -> None:
        """Register an existing attribute as a persistent value."""
        if not hasattr(self, name):
            raise AttributeError(
                f"cannot register non-existent attribute {name} as a persistent value"
            )
        self._persistent.add(name)
        self._params.discard(name)

    # -- traversal -------------------------------------------------------------------------------
    def params(self, include_uninit: bool = True) -> Iterator[Parameter]:
        """The parameters of this link and its descendants (sorted by name, then children)."""
        d = self.__dict__
        for name in sorted(self._params):
            if include_uninit or d[name].array is not None:
                yield d[name]

    def namedparams(self, include_uninit: bool = True) -> Iterator[tuple[str, Parameter]]:
        """``(path, parameter)`` pairs, paths such as ``/l1/W``."""
        d = self.__dict__
        for name in sorted(self._params):
            if include_uninit or d[name].is_initialized:
                yield "/" + name, d[name]

    def links(self, skipself: bool = False) -> Iterator[Link]:
        """This link (unless ``skipself``) and all its descendants."""
        if not skipself:
            yield self

    def namedlinks(self, skipself: bool = False) -> Iterator[tuple[str, Link]]:
        """``(path, link)`` pairs, ``/`` being this link."""
        if not skipself:
            yield "/", self

    def children(self) -> Iterator[Link]:
        """The direct child links."""
        yield from ()

    def count_params(self) -> int:
        """The number of parameter elements (uninitialized parameters warn and count 0)."""
        size = 0
        for name, param in self.namedparams():
            if param.array is None:
                warnings.warn(
                    f"Parameter '{name}' has not been initialized, so the resulting count will "
                    "not include the number of parameters in it.",
                    stacklevel=2,
                )
                continue
            size += param.size
        return size

    # -- gradients and values --------------------------------------------------------------------
    def copyparams(self, link: Link, copy_persistent: bool = True) -> None:
        """Copy the parameter values (and persistent values) of ``link``, of the same
        structure, into this link in place."""
        import copy

        src, dst = link.__dict__, self.__dict__
        for name in self._params:
            dst[name].copydata(src[name])
        if copy_persistent:
            for name in self._persistent:
                d, s = dst[name], src[name]
                if hasattr(d, "shape") and hasattr(s, "shape"):
                    d[...] = s
                else:
                    dst[name] = copy.deepcopy(s)

    def cleargrads(self) -> None:
        """Set every parameter's gradient to None."""
        for param in self.params():
            param.cleargrad()

    def zerograds(self) -> None:
        """Set every parameter's gradient to zeros (deprecated in chainer)."""
        warnings.warn(
            "Link.zerograds is deprecated. Use Link.cleargrads instead.",
            DeprecationWarning,
            stacklevel=2,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            for param in self.params():
                param.zerograd()

    def addgrads(self, link: Link) -> None:
        """Add the gradients of ``link``'s parameters to this link's."""
        src, dst = link.__dict__, self.__dict__
        for name in self._params:
            dst[name].addgrad(src[name])

    def enable_update(self) -> None:
        """Let the optimizer update the parameters."""
        for param in self.params():
            if param.update_rule is not None:
                param.update_rule.enabled = True

    def disable_update(self) -> None:
        """Freeze the parameters (their update rules skip them)."""
        for param in self.params():
            if param.update_rule is not None:
                param.update_rule.enabled = False

    @property
    def update_enabled(self) -> bool:
        """Whether any parameter's update rule is enabled."""
        return any(p.update_rule is not None and p.update_rule.enabled for p in self.params())

    def serialize(self, serializer: Any) -> None:
        """chainer's protocol: each parameter and persistent value by name (an uninitialized
        parameter is initialized from the loaded array's shape)."""
        d = self.__dict__
        for name in self._params:
            param = d[name]
            if param.array is not None:  # the Variable: read and written on its device
                serializer(name, param)
                continue
            data = serializer(name, None)
            if data is not None:
                param.initialize(tuple(data.shape))
                param._data[...] = send(data, param.device)
        for name in self._persistent:  # (a device array goes through a host copy)
            d[name] = serialize_value(serializer, name, d[name])

    # -- devices ---------------------------------------------------------------------------------
    def to_device(self, device: Any) -> Link:
        """Move every parameter and persistent array to ``device`` in place; returns self."""
        dev = get_device(device, f"chainer {type(self).__name__}.to_device")
        for link in self.links():
            d = link.__dict__
            for name in link._params:
                d[name].to_device(dev)
            for name in link._persistent:
                if hasattr(d[name], "shape") and hasattr(d[name], "dtype"):
                    d[name] = send(d[name], dev)
            # None for the CPU (as Parameter's): a device object holds its array module, which
            # copy.deepcopy and pickle cannot copy
            link._device = None if dev.kind == "cpu" else dev
        return self

    def to_cpu(self) -> Link:
        """``to_device('@numpy')``."""
        return self.to_device("@numpy")

    def to_gpu(self, device: Any = None) -> Link:
        """``to_device('@cupy:N')`` (N = ``device``, default 0): RuntimeError when gradhub has
        no usable CUDA device."""
        return self.to_device(f"@cupy:{0 if device is None else int(device)}")

    @property
    def device(self) -> Any:
        """The gradhub device of the link (the CPU until ``to_device``)."""
        dev = self.__dict__.get("_device")
        return dev if dev is not None else get_device("@numpy", "chainer Link.device")

    @property
    def xp(self) -> Any:
        """The array module of the link's device."""
        return self.device.xp

    def copy(self, mode: str = "share") -> Link:
        """A copy of the link: ``'share'`` (default) shares the parameter arrays (new
        Parameter objects, gradients None), ``'copy'`` copies everything (``copy.deepcopy``),
        ``'init'`` copies and re-initializes the initialized parameters with their
        initializers. The copy has no name."""
        import copy as _copy

        if mode == "share":
            ret = _copy.copy(self)
            ret._params = set(self._params)
            ret._persistent = set(self._persistent)
            ret.name = None
            d = ret.__dict__
            for name in ret._params:
                d[name] = _copy.copy(d[name])
                d[name].grad = None
            return ret
        if mode == "copy":
            return _copy.deepcopy(self)
        if mode == "init":
            ret = _copy.deepcopy(self)
            for param in ret.params(include_uninit=False):
                param.initialize(param.shape)
            return ret
        raise ValueError(
            f"The 'mode' argument should be either 'init','copy', or 'share'. But {mode} was given."
        )

    # -- refused ---------------------------------------------------------------------------------

    def repeat(self, n_repeat: int, mode: str = "init") -> Any:
        """Not supported (NotImplementedError)."""
        raise _unsupported("Link.repeat")

    def add_hook(self, hook: Any, name: str | None = None) -> Link:
        """Not supported (NotImplementedError): link hooks."""
        raise _unsupported("Link.add_hook (link hooks)")

    def to_intel64(self) -> Link:
        """Not supported (NotImplementedError)."""
        raise _unsupported("Link.to_intel64 (iDeep)")

    def to_chx(self) -> Link:
        """Not supported (NotImplementedError)."""
        raise _unsupported("Link.to_chx (ChainerX)")


class Chain(Link):
    """chainer's ``Chain``: a link with named child links (assigned in ``init_scope()`` or
    given as ``Chain(**links)``)."""

    def __init__(self, **links: Link) -> None:
        super().__init__()
        self._children: set[str] = set()
        for name, link in links.items():
            self.add_link(name, link)

    def __str__(self) -> str:
        reps = []
        for child in self.children():
            for line in f"({child.name}): {child},".splitlines():
                reps.append(f"  {line}\n")
        body = "".join(reps)
        return f"{type(self).__name__}({chr(10) + body if body else ''})"

    def __getitem__(self, name: str) -> Any:
        return getattr(self, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if self.within_init_scope and isinstance(value, Link):
            if hasattr(self, name):
                raise AttributeError(f"cannot register a new link {name}: attribute exists")
            value.name = name
            self._children.add(name)
        super().__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        self._children.discard(name)
        super().__delattr__(name)

    def add_link(self, name: str, link: Link) -> None:
        """Register ``link`` as the child ``name``."""
        if name in self.__dict__:
            raise AttributeError(f"cannot register a new link {name}: attribute exists")
        if not isinstance(link, Link):
            raise TypeError("cannot register a non-link object as a child")
        with self.init_scope():
            setattr(self, name, link)

    def copy(self, mode: str = "share") -> Chain:
        ret: Chain = super().copy(mode)  # type: ignore[assignment]
        ret._children = set(ret._children)
        d = ret.__dict__
        for name in ret._children:
            copied = d[name].copy(mode)
            copied.name = name
            d[name] = copied
        return ret

    def params(self, include_uninit: bool = True) -> Iterator[Parameter]:
        yield from super().params(include_uninit)
        d = self.__dict__
        for name in sorted(self._children):
            yield from d[name].params(include_uninit)

    def namedparams(self, include_uninit: bool = True) -> Iterator[tuple[str, Parameter]]:
        yield from super().namedparams(include_uninit)
        d = self.__dict__
        for name in sorted(self._children):
            for path, param in d[name].namedparams(include_uninit):
                yield "/" + name + path, param

    def links(self, skipself: bool = False) -> Iterator[Link]:
        if not skipself:
            yield self
        d = self.__dict__
        for name in sorted(self._children):
            yield from d[name].links()

    def namedlinks(self, skipself: bool = False) -> Iterator[tuple[str, Link]]:
        if not skipself:
            yield "/", self
        d = self.__dict__
        for name in sorted(self._children):
            prefix = "/" + name
            yield prefix, d[name]
            for path, link in d[name].namedlinks(True):
                yield prefix + path, link

    def children(self) -> Iterator[Link]:
        d = self.__dict__
        for name in sorted(self._children):
            yield d[name]

    def copyparams(self, link: Link, copy_persistent: bool = True) -> None:
        super().copyparams(link, copy_persistent)
        src, dst = link.__dict__, self.__dict__
        for name in self._children:
            dst[name].copyparams(src[name], copy_persistent)

    def addgrads(self, link: Link) -> None:
        super().addgrads(link)
        src, dst = link.__dict__, self.__dict__
        for name in self._children:
            dst[name].addgrads(src[name])

    def serialize(self, serializer: Any) -> None:
        super().serialize(serializer)
        d = self.__dict__
        for name in self._children:
            d[name].serialize(serializer[name])


class ChainList(Link, collections.abc.MutableSequence):  # type: ignore[misc]
    """chainer's ``ChainList``: a link with a list of child links (``ChainList(*links)``,
    ``append``, indexing); their paths are ``/0``, ``/1``, ..."""

    def __init__(self, *links: Link) -> None:
        super().__init__()
        self._children: list[Link] = []
        for link in links:
            self.add_link(link)

    def __str__(self) -> str:
        reps = []
        for index, child in enumerate(self._children):
            for line in f"({index}): {child},".splitlines():
                reps.append(f"  {line}\n")
        body = "".join(reps)
        return f"{type(self).__name__}({chr(10) + body if body else ''})"

    def __setattr__(self, name: str, value: Any) -> None:
        if self.within_init_scope and isinstance(value, Link):
            raise TypeError(
                'cannot register a new link within a "with chainlist.init_scope():" block.'
            )
        super().__setattr__(name, value)

    def __setitem__(self, index: Any, value: Any) -> None:
        if isinstance(index, int):
            value.name = str(index)
            self._children[index] = value
        elif isinstance(index, slice):
            self._children[index] = value
            for i, c in enumerate(self._children):
                c.name = str(i)
        else:
            raise TypeError(
                f"ChainList indices must be integers or slices, not {type(index).__name__}"
            )

    def __getitem__(self, index: Any) -> Any:
        return self._children[index]

    def __delitem__(self, index: Any) -> None:
        del self._children[index]
        for i, c in enumerate(self._children):
            c.name = str(i)

    def insert(self, index: int, link: Link) -> None:
        """Insert ``link`` at ``index`` (the children are renamed by position)."""
        if index == len(self._children):
            self._children.append(link)
            link.name = str(index)
        else:
            self._children.insert(index, link)
            for i, c in enumerate(self._children):
                c.name = str(i)

    def __iter__(self) -> Iterator[Link]:
        return iter(self._children)

    def __len__(self) -> int:
        return len(self._children)

    def add_link(self, link: Link) -> None:
        """Append ``link``."""
        self.append(link)

    def copy(self, mode: str = "share") -> ChainList:
        ret: ChainList = super().copy()  # type: ignore[assignment]  # (chainer: "share" here)
        ret._children = list(ret._children)
        for i, child in enumerate(ret._children):
            copied = child.copy(mode)
            copied.name = str(i)
            ret._children[i] = copied
        return ret

    def params(self, include_uninit: bool = True) -> Iterator[Parameter]:
        yield from super().params(include_uninit)
        for link in self._children:
            yield from link.params(include_uninit)

    def namedparams(self, include_uninit: bool = True) -> Iterator[tuple[str, Parameter]]:
        yield from super().namedparams(include_uninit)
        for idx, link in enumerate(self._children):
            for path, param in link.namedparams(include_uninit):
                yield f"/{idx}{path}", param

    def links(self, skipself: bool = False) -> Iterator[Link]:
        if not skipself:
            yield self
        for child in self._children:
            yield from child.links()

    def namedlinks(self, skipself: bool = False) -> Iterator[tuple[str, Link]]:
        if not skipself:
            yield "/", self
        for idx, child in enumerate(self._children):
            prefix = f"/{idx}"
            yield prefix, child
            for path, link in child.namedlinks(True):
                yield prefix + path, link

    def children(self) -> Iterator[Link]:
        yield from self._children

    def copyparams(self, link: Link, copy_persistent: bool = True) -> None:
        super().copyparams(link, copy_persistent)
        for idx, child in enumerate(self._children):
            child.copyparams(link[idx], copy_persistent)  # type: ignore[index]

    def addgrads(self, link: Link) -> None:
        super().addgrads(link)
        for idx, child in enumerate(self._children):
            child.addgrads(link[idx])  # type: ignore[index]

    def serialize(self, serializer: Any) -> None:
        super().serialize(serializer)
        for idx, child in enumerate(self._children):
            child.serialize(serializer[str(idx)])
