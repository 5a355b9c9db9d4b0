"""mxnet's initializers: ``mx.init`` (``mx.initializer``), as mxnet 1.9.1.

An initializer fills an NDArray in place. Called with an :class:`InitDesc` (a name with
attributes), it dispatches on the name as mxnet: an ``__init__`` attribute (the initializer a
Parameter was given) fills the array with that initializer's ``_init_weight``; otherwise a name
ending in ``weight`` gets ``_init_weight``, ``bias`` zeros, ``gamma`` ones, ``beta`` zeros,
``min`` zeros, ``max`` ones, and any other name raises ``ValueError`` (mxnet's "Unknown
initialization pattern"). Random initializers draw from gradhub's generator
(:func:`gradhub.random.generator`, seeded by ``mx.random.seed``): the distributions and bounds are
mxnet's formulas, the numbers differ from mxnet's generator's.

Example::

    >>> import gradhub_compat.mxnet as mx
    >>> a = mx.nd.zeros((2, 3))
    >>> mx.init.Constant(0.5)(mx.init.InitDesc("fc_weight"), a)
    >>> a.asnumpy()
    array([[0.5, 0.5, 0.5],
           [0.5, 0.5, 0.5]], dtype=float32)
    >>> mx.init.Uniform(0.1)(mx.init.InitDesc("fc_bias"), a)  # a bias: zeros
    >>> float(a.asnumpy().sum())
    0.0
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from .ndarray import NDArray
from .random import normal as _normal
from .random import uniform as _uniform

__all__ = [
    "Bilinear",
    "Constant",
    "InitDesc",
    "Initializer",
    "LSTMBias",
    "MSRAPrelu",
    "Mixed",
    "Normal",
    "One",
    "Orthogonal",
    "Uniform",
    "Xavier",
    "Zero",
    "alias",
    "create",
    "register",
]

_REGISTRY: dict[str, type[Initializer]] = {}
_T = TypeVar("_T", bound="type[Initializer]")


class InitDesc(str):
    """The name of an array to initialize (a ``str``), with ``attrs`` (a dict: ``__init__`` names
    the Parameter's own initializer) and ``global_init`` (the initializer to fall back to), as
    mxnet's ``mx.init.InitDesc``."""

    attrs: dict[str, Any]
    global_init: Any

    def __new__(
        cls, name: str, attrs: dict[str, Any] | None = None, global_init: Any = None
    ) -> Any:
        ret = super().__new__(cls, name)
        ret.attrs = attrs or {}
        ret.global_init = global_init
        return ret


class Initializer:
    """The base class of mxnet's initializers: ``init(desc, arr)`` fills the NDArray ``arr``
    according to the name ``desc`` (see the module documentation for the dispatch); subclasses
    override ``_init_weight(name, arr)`` (and ``_init_bias`` ...).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> class Half(mx.init.Initializer):
        ...     def _init_weight(self, name, arr):
        ...         arr[:] = 0.5
        >>> w = mx.nd.zeros((2,))
        >>> Half()(mx.init.InitDesc("w_weight"), w)
        >>> w.asnumpy()
        array([0.5, 0.5], dtype=float32)
    """

    def __init__(self, **kwargs: Any) -> None:
        self._kwargs = kwargs
        self._verbose = False
        self._print_func: Callable[[NDArray], str] | None = None

    def set_verbosity(
        self, verbose: bool = False, print_func: Callable[[NDArray], str] | None = None
    ) -> Initializer:
        """Accepted as mxnet (verbose logging of the initialized arrays is not printed)."""
        self._verbose = verbose
        self._print_func = print_func
        return self

    def dumps(self) -> str:
        """The JSON text ``[class name in lower case, keyword arguments]`` (``create`` reads it):
        ``mx.init.Normal(0.5).dumps()`` is ``'["normal", {"sigma": 0.5}]'``."""
        return json.dumps([self.__class__.__name__.lower(), self._kwargs])

    def __call__(self, desc: Any, arr: NDArray) -> None:
        if not isinstance(arr, NDArray):
            raise TypeError(
                f"{type(self).__name__}.__call__: arr must be an NDArray, got {type(arr).__name__}"
            )
        if not isinstance(desc, InitDesc):
            if not isinstance(desc, str):
                raise TypeError(f"{type(self).__name__}.__call__: name must be string")
            warnings.warn(
                "Calling initializer with init(str, NDArray) has been deprecated. please use "
                "init(mx.init.InitDesc(...), NDArray) instead.",
                DeprecationWarning,
                stacklevel=2,
            )
            self._legacy_init(desc, arr)
            return
        if desc.global_init is None:
            desc.global_init = self
        init = desc.attrs.get("__init__", "")
        if init:
            create(init)._init_weight(desc, arr)
        elif desc.endswith("weight"):
            self._init_weight(desc, arr)
        elif desc.endswith("bias"):
            self._init_bias(desc, arr)
        elif desc.endswith("gamma"):
            self._init_gamma(desc, arr)
        elif desc.endswith("beta"):
            self._init_beta(desc, arr)
        elif desc.endswith("min"):
            self._init_zero(desc, arr)
        elif desc.endswith("max"):
            self._init_one(desc, arr)
        else:
            self._init_default(desc, arr)

    def _legacy_init(self, name: str, arr: NDArray) -> None:
        if name.endswith("bias"):
            self._init_bias(name, arr)
        elif name.endswith("gamma"):
            self._init_gamma(name, arr)
        elif name.endswith("beta"):
            self._init_beta(name, arr)
        elif name.endswith("weight"):
            self._init_weight(name, arr)
        elif name.endswith(("moving_mean", "moving_inv_var", "moving_avg", "min")):
            self._init_zero(name, arr)
        elif name.endswith(("moving_var", "max")):
            self._init_one(name, arr)
        else:
            self._init_default(name, arr)

    def _init_zero(self, _: Any, arr: NDArray) -> None:
        arr[:] = 0.0

    def _init_one(self, _: Any, arr: NDArray) -> None:
        arr[:] = 1.0

    def _init_bias(self, _: Any, arr: NDArray) -> None:
        arr[:] = 0.0

    def _init_gamma(self, _: Any, arr: NDArray) -> None:
        arr[:] = 1.0

    def _init_beta(self, _: Any, arr: NDArray) -> None:
        arr[:] = 0.0

    def _init_weight(self, name: Any, arr: NDArray) -> None:
        raise NotImplementedError("Must override it")

    def _init_default(self, name: Any, _: NDArray) -> None:
        raise ValueError(
            f"Unknown initialization pattern for {name}. Default initialization is now limited "
            'to "weight", "bias", "gamma" (1.0), and "beta" (0.0).Please use '
            "mx.sym.Variable(init=mx.init.*) to set initialization pattern"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Initializer):
            return NotImplemented
        return type(self) is type(other) and self._kwargs == other._kwargs

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return self.dumps()


def register(klass: _T) -> _T:
    """Register an Initializer subclass under its class name in lower case, so that
    :func:`create` (and ``init="name"`` of a Parameter) finds it (a decorator, as mxnet)."""
    if not (isinstance(klass, type) and issubclass(klass, Initializer)):
        raise TypeError(f"mx.init.register: expected an Initializer subclass, got {klass!r}")
    _REGISTRY[klass.__name__.lower()] = klass
    return klass


def alias(*aliases: str) -> Callable[[_T], _T]:
    """A decorator registering an Initializer subclass under the extra names ``aliases``."""

    def reg(klass: _T) -> _T:
        for name in aliases:
            _REGISTRY[name.lower()] = klass
        return klass

    return reg


def create(*args: Any, **kwargs: Any) -> Initializer:
    """An Initializer from a config, as mxnet's ``mx.init.create``: an Initializer instance is
    returned as it is; a string names a registered class (case-insensitive, ``"zeros"``,
    ``"xavier"``...) built with ``*args, **kwargs``, or is the JSON text of :meth:`dumps`.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.init.create('["normal", {"sigma": 0.5}]').sigma
        0.5
    """
    if args:
        name, args = args[0], args[1:]
    else:
        name = kwargs.pop("initializer", None)
    if isinstance(name, Initializer):
        if args or kwargs:
            raise ValueError(
                "mx.init.create: initializer is already an instance. Additional arguments are "
                "invalid"
            )
        return name
    if isinstance(name, dict):
        return create(**name)
    if not isinstance(name, str):
        raise TypeError(
            f"mx.init.create: initializer must be of string type or an Initializer, got "
            f"{type(name).__name__}"
        )
    if name.startswith("["):
        cls_name, kw = json.loads(name)
        return create(cls_name, **kw)
    if name.startswith("{"):
        return create(**json.loads(name))
    key = name.lower()
    if key not in _REGISTRY:
        raise AssertionError(
            f"mx.init.create: {key} is not registered. Please register with "
            "initializer.register first"
        )
    return _REGISTRY[key](*args, **kwargs)


def _check_float(arr: NDArray, who: str) -> None:
    if np.dtype(arr.dtype).kind != "f":
        raise TypeError(f"{who}: random initialization needs a float array, got {arr.dtype}")


@register
@alias("zeros")
class Zero(Initializer):
    """Fills with 0 (``"zeros"``)."""

    def __init__(self) -> None:
        super().__init__()

    def _init_weight(self, _: Any, arr: NDArray) -> None:
        arr[:] = 0


@register
@alias("ones")
class One(Initializer):
    """Fills with 1 (``"ones"``)."""

    def __init__(self) -> None:
        super().__init__()

    def _init_weight(self, _: Any, arr: NDArray) -> None:
        arr[:] = 1


@register
class Constant(Initializer):
    """Fills with ``value`` (a number, or an array broadcast to the parameter's shape)."""

    def __init__(self, value: Any) -> None:
        super().__init__(value=value)
        self.value = value

    def _init_weight(self, _: Any, arr: NDArray) -> None:
        v = self.value
        if isinstance(v, NDArray):
            v = v.asnumpy()
        if isinstance(v, (bool, int, float, np.number)):
            arr[:] = v
        else:
            arr[:] = np.broadcast_to(np.asarray(v, dtype=np.dtype(arr.dtype)), arr.shape)

    def dumps(self) -> str:
        val = self._kwargs["value"]
        if not np.isscalar(val):
            val = val.asnumpy().tolist() if isinstance(val, NDArray) else np.asarray(val).tolist()
        return json.dumps([self.__class__.__name__.lower(), {"value": val}])


@register
class Uniform(Initializer):
    """Draws weights from the uniform distribution on ``[-scale, scale)``.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> w = mx.nd.zeros((100,))
        >>> mx.init.Uniform(0.07)._init_weight("w", w)
        >>> bool(abs(w.asnumpy()).max() <= 0.07)
        True
    """

    def __init__(self, scale: float = 0.07) -> None:
        super().__init__(scale=scale)
        self.scale = scale

    def _init_weight(self, _: Any, arr: NDArray) -> None:
        _check_float(arr, "mx.init.Uniform")
        _uniform(-self.scale, self.scale, arr.shape, dtype=arr.dtype, out=arr)


@register
class Normal(Initializer):
    """Draws weights from the normal distribution of mean 0 and standard deviation ``sigma``."""

    def __init__(self, sigma: float = 0.01) -> None:
        super().__init__(sigma=sigma)
        self.sigma = sigma

    def _init_weight(self, _: Any, arr: NDArray) -> None:
        _check_float(arr, "mx.init.Normal")
        _normal(0, self.sigma, arr.shape, dtype=arr.dtype, out=arr)


@register
class Orthogonal(Initializer):
    """``scale`` times an orthonormal matrix (reshaped to the array's shape): the ``u`` or ``v``
    factor of the SVD of a (shape[0], prod(shape[1:])) draw from U(-1, 1) (``rand_type=
    "uniform"``) or N(0, 1) (``"normal"``), as mxnet (Saxe et al. 2013)."""

    def __init__(self, scale: float = 1.414, rand_type: str = "uniform") -> None:
        super().__init__(scale=scale, rand_type=rand_type)
        self.scale = scale
        self.rand_type = rand_type

    def _init_weight(self, _: Any, arr: NDArray) -> None:
        nout = arr.shape[0]
        nin = int(np.prod(arr.shape[1:]))
        if self.rand_type == "uniform":
            tmp = _uniform(-1.0, 1.0, shape=(nout, nin)).asnumpy()
        elif self.rand_type == "normal":
            tmp = _normal(0.0, 1.0, shape=(nout, nin)).asnumpy()
        else:
            raise ValueError(
                f"mx.init.Orthogonal: rand_type must be 'uniform' or 'normal', got "
                f"{self.rand_type!r}"
            )
        u, _s, v = np.linalg.svd(tmp, full_matrices=False)
        res = u if u.shape == tmp.shape else v
        arr[:] = (self.scale * res.reshape(arr.shape)).astype(np.dtype(arr.dtype))


@register
class Xavier(Initializer):
    """Glorot's initializer as mxnet: with ``fan_in = shape[1] * hw``, ``fan_out = shape[0] *
    hw`` (``hw`` the product of ``shape[2:]``), ``factor`` = their mean (``"avg"``), ``fan_in``
    (``"in"``) or ``fan_out`` (``"out"``) and ``scale = sqrt(magnitude / factor)``, weights are
    drawn from U(-scale, scale) (``rnd_type="uniform"``) or N(0, scale) (``"gaussian"``). A
    weight of fewer than 2 axes raises ``ValueError``.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> w = mx.nd.zeros((4, 6))
        >>> mx.init.Xavier()._init_weight("w", w)
        >>> bool(abs(w.asnumpy()).max() <= (3 / 5) ** 0.5)
        True
    """

    def __init__(
        self, rnd_type: str = "uniform", factor_type: str = "avg", magnitude: float = 3
    ) -> None:
        super().__init__(rnd_type=rnd_type, factor_type=factor_type, magnitude=magnitude)
        self.rnd_type = rnd_type
        self.factor_type = factor_type
        self.magnitude = float(magnitude)

    def _init_weight(self, name: Any, arr: NDArray) -> None:
        shape = arr.shape
        if len(shape) < 2:
            raise ValueError(
                f"Xavier initializer cannot be applied to vector {name}. It requires at least 2D."
            )
        hw_scale = float(np.prod(shape[2:])) if len(shape) > 2 else 1.0
        fan_in, fan_out = shape[1] * hw_scale, shape[0] * hw_scale
        if self.factor_type == "avg":
            factor = (fan_in + fan_out) / 2.0
        elif self.factor_type == "in":
            factor = fan_in
        elif self.factor_type == "out":
            factor = fan_out
        else:
            raise ValueError("Incorrect factor type")
        scale = float(np.sqrt(self.magnitude / factor))
        _check_float(arr, "mx.init.Xavier")
        if self.rnd_type == "uniform":
            _uniform(-scale, scale, arr.shape, dtype=arr.dtype, out=arr)
        elif self.rnd_type == "gaussian":
            _normal(0, scale, arr.shape, dtype=arr.dtype, out=arr)
        else:
            raise ValueError("Unknown random type")


@register
class MSRAPrelu(Xavier):
    """He et al.'s initializer: :class:`Xavier` with ``rnd_type="gaussian"`` and ``magnitude =
    2 / (1 + slope^2)``."""

    def __init__(self, factor_type: str = "avg", slope: float = 0.25) -> None:
        magnitude = 2.0 / (1 + slope**2)
        super().__init__("gaussian", factor_type, magnitude)
        self._kwargs = {"factor_type": factor_type, "slope": slope}


@register
class Bilinear(Initializer):
    """The bilinear upsampling kernel of mxnet (for 4-D deconvolution weights)."""

    def __init__(self) -> None:
        super().__init__()

    def _init_weight(self, _: Any, arr: NDArray) -> None:
        shape = arr.shape
        if len(shape) != 4:
            raise ValueError(f"mx.init.Bilinear: needs a 4-D weight, got shape {shape}")
        weight = np.zeros(int(np.prod(shape)), dtype="float32")
        f = np.ceil(shape[3] / 2.0)
        c = (2 * f - 1 - f % 2) / (2.0 * f)
        for i in range(int(np.prod(shape))):
            x = i % shape[3]
            y = (i // shape[3]) % shape[2]
            weight[i] = (1 - abs(x / f - c)) * (1 - abs(y / f - c))
        arr[:] = weight.reshape(shape)


@register
class LSTMBias(Initializer):
    """Zeros, with the forget gate's quarter (the second) set to ``forget_bias``."""

    def __init__(self, forget_bias: float = 1.0) -> None:
        super().__init__(forget_bias=forget_bias)
        self.forget_bias = forget_bias

    def _init_weight(self, name: Any, arr: NDArray) -> None:
        arr[:] = 0.0
        num_hidden = int(arr.shape[0] / 4)
        arr[num_hidden : 2 * num_hidden] = self.forget_bias


class Mixed:
    """Initializes each name with the initializer of the first regular expression (``re.match``)
    it matches; a name matching none raises ``ValueError``.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> init = mx.init.Mixed(["bias", ".*"], [mx.init.Zero(), mx.init.One()])
        >>> a = mx.nd.zeros((2,))
        >>> init("fc_weight", a)
        >>> a.asnumpy()
        array([1., 1.], dtype=float32)
    """

    def __init__(self, patterns: list[str], initializers: list[Any]) -> None:
        if len(patterns) != len(initializers):
            raise ValueError(
                f"mx.init.Mixed: {len(patterns)} patterns but {len(initializers)} initializers"
            )
        self.map = list(zip([re.compile(p) for p in patterns], initializers))

    def __call__(self, name: Any, arr: NDArray) -> None:
        for prog, init in self.map:
            if prog.match(name):
                if isinstance(init, Initializer) and not isinstance(name, InitDesc):
                    name = InitDesc(str(name))
                init(name, arr)
                return
        raise ValueError(
            f'Parameter name {name} did not match any pattern. Consider add a ".*" pattern at '
            "the and with default Initializer."
        )
