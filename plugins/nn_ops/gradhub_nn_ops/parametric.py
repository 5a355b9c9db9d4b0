"""gradhub-nn-ops: parametric functions (``gradhub.parametric_functions``) and initializers.

Each parametric function creates its parameters with nnabla's names and layouts under
``parameter_scope(name)`` (when ``name`` is given) and then its own sub-scope (``affine``,
``conv``, ``deconv``, ``bn``, ``layer_normalization``, ``embed``); with ``name=None`` they are
created in the current scope, so a second call without a name reuses them, as in nnabla. Default
initializers are nnabla's: weights uniform in the Glorot limits of
:func:`calc_uniform_lim_glorot`, biases zero, batch-normalization beta/gamma/mean/var 0/1/0/1.

An initializer argument (``w_init``, ``b_init``, ``param_init[key]``, ``initializer``) may be an
initializer (a callable taking the shape), an array of the parameter's shape or a number. The
built-in initializers give the default dtype (float32 unless changed with
``gradhub.set_default_dtype``/``gradhub.default_dtype``), and so do callables, lists and Python
numbers (their result is cast); an explicit floating-point numpy array, Variable or numpy scalar
keeps its dtype, so ``w_init=np.float64_array`` makes a float64 parameter, as
:func:`gradhub.get_parameter_or_create`.
An array of another shape raises a ValueError naming the function and the argument.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
from gradhub import (
    Variable,
    as_variable,
    get_default_dtype,
    get_parameter_or_create,
    parameter_scope,
)
from gradhub.ops import call

from .math import is_int

# -- initializers ------------------------------------------------------------------------------

_PRNG: list[Any] = []


def _default_rng() -> Any:
    """The generator initializers use when given no ``rng`` (nnabla's seed 313; made on use)."""
    if not _PRNG:
        _PRNG.append(np.random.RandomState(313))
    return _PRNG[0]


def seed(value: int) -> None:
    """Reseed the generator that initializers use by default.

    Example::

        >>> from gradhub_nn_ops.parametric import seed
        >>> seed(0)
    """
    _PRNG[:] = [np.random.RandomState(value)]


def default_rng() -> np.random.RandomState:
    """The generator that initializers use when given no ``rng`` (``RandomState(313)``, as
    nnabla's ``nnabla.random.prng``, until :func:`seed` or :func:`set_default_rng`).

    Example::

        >>> from gradhub_nn_ops.parametric import default_rng, seed
        >>> seed(5)
        >>> float(default_rng().rand()) == float(__import__("numpy").random.RandomState(5).rand())
        True
    """
    return _default_rng()  # type: ignore[no-any-return]


def set_default_rng(rng: np.random.RandomState) -> None:
    """Make ``rng`` the generator that initializers use when given no ``rng`` (nnabla's
    ``nnabla.random.prng = rng``).

    Example::

        >>> import numpy as np
        >>> from gradhub_nn_ops.parametric import default_rng, set_default_rng
        >>> r = np.random.RandomState(1)
        >>> set_default_rng(r)
        >>> default_rng() is r
        True
    """
    if not isinstance(rng, np.random.RandomState):
        raise TypeError(
            f"gradhub_nn_ops.parametric.set_default_rng: rng must be a numpy.random.RandomState, "
            f"got {type(rng).__name__}"
        )
    _PRNG[:] = [rng]


def calc_uniform_lim_glorot(
    inmaps: int, outmaps: int, kernel: Sequence[int] = (1, 1)
) -> tuple[float, float]:
    """nnabla's Glorot (Xavier) uniform limits: ``d = sqrt(6 / (K * inmaps + K * outmaps))``.

    ``K = prod(kernel)``; returns ``(-d, d)``.

    Example::

        >>> from gradhub_nn_ops.parametric import calc_uniform_lim_glorot
        >>> calc_uniform_lim_glorot(4, 2)
        (-1.0, 1.0)
    """
    k = math.prod(kernel)
    d = math.sqrt(6.0 / (k * inmaps + k * outmaps))
    return -d, d


class UniformInitializer:
    """Values drawn uniformly from ``[lim[0], lim[1])`` in the default dtype (float32).

    Example::

        >>> from gradhub_nn_ops.parametric import UniformInitializer
        >>> w = UniformInitializer((-0.5, 0.5))((3, 2))
        >>> w.shape, w.dtype, bool(abs(w).max() <= 0.5)
        ((3, 2), dtype('float32'), True)
    """

    def __init__(self, lim: Sequence[float] = (-1.0, 1.0), rng: Any = None) -> None:
        lo, hi = (float(v) for v in lim)
        if not lo <= hi:
            raise ValueError(
                f"UniformInitializer: lim must be (low, high) with low <= high, got {tuple(lim)}"
            )
        self.lim = (lo, hi)
        self.rng = rng

    def __call__(self, shape: Sequence[int]) -> np.ndarray:
        rng = self.rng if self.rng is not None else _default_rng()
        return np.asarray(
            rng.uniform(self.lim[0], self.lim[1], size=tuple(shape)), dtype=get_default_dtype()
        )

    def __repr__(self) -> str:
        return f"UniformInitializer(lim={self.lim})"


class ConstantInitializer:
    """A constant ``value`` everywhere, in the default dtype (float32).

    Example::

        >>> from gradhub_nn_ops.parametric import ConstantInitializer
        >>> ConstantInitializer(1.0)((2,))
        array([1., 1.], dtype=float32)
    """

    def __init__(self, value: float = 0.0) -> None:
        self.value = float(value)

    def __call__(self, shape: Sequence[int]) -> np.ndarray:
        return np.full(tuple(shape), self.value, dtype=get_default_dtype())

    def __repr__(self) -> str:
        return f"ConstantInitializer(value={self.value})"


class NormalInitializer:
    """Values drawn from a normal distribution ``N(0, sigma^2)`` in the default dtype (float32).

    Example::

        >>> from gradhub_nn_ops.parametric import NormalInitializer
        >>> NormalInitializer(0.1)((2, 2)).dtype
        dtype('float32')
    """

    def __init__(self, sigma: float = 1.0, rng: Any = None) -> None:
        self.sigma = float(sigma)
        self.rng = rng

    def __call__(self, shape: Sequence[int]) -> np.ndarray:
        rng = self.rng if self.rng is not None else _default_rng()
        return np.asarray(rng.normal(0.0, self.sigma, size=tuple(shape)), dtype=get_default_dtype())

    def __repr__(self) -> str:
        return f"NormalInitializer(sigma={self.sigma})"


def _initializer(fn: str, arg: str, name: str, init: Any) -> Callable[[tuple[int, ...]], Any]:
    """``init`` (the argument ``arg`` of ``PF.<fn>`` for parameter ``name``) as ``shape -> array``.

    The array is put on the context's device. Its dtype: a floating-point numpy array, Variable
    or numpy scalar keeps its dtype (a float64 array makes a float64 parameter, as
    :func:`gradhub.get_parameter_or_create` and ``gradhub.Variable``); what an initializer
    callable returns, lists, Python numbers and integer arrays become the default dtype
    (float32 unless changed: :func:`gradhub.set_default_dtype`; nnabla's parameters' dtype).
    """
    from gradhub.device import context_device

    keep = False  # keep the dtype of an explicit floating-point array or numpy scalar
    if callable(init) and not isinstance(init, (np.ndarray, Variable)):
        make = init
    elif isinstance(init, (np.ndarray, Variable, list, tuple)):
        arr = np.asarray(init.numpy() if isinstance(init, Variable) else init)
        keep = isinstance(init, (np.ndarray, Variable)) and arr.dtype.kind == "f"

        def make(shape: tuple[int, ...]) -> Any:
            if arr.shape != shape:
                raise ValueError(
                    f"PF.{fn}: the initializer of {name} is an array of shape "
                    f"{arr.shape}, but the parameter has shape {shape} "
                    f"(argument {arg})"
                )
            return arr.copy()
    elif isinstance(init, np.floating):
        scalar = init
        keep = True

        def make(shape: tuple[int, ...]) -> Any:
            return np.full(shape, scalar, dtype=scalar.dtype)
    elif isinstance(init, (int, float, np.number)) and not isinstance(init, bool):
        make = ConstantInitializer(float(init))
    else:
        raise TypeError(
            f"PF.{fn}: the initializer of {name} must be an initializer (callable "
            f"taking a shape), an array or a number (argument {arg}), got "
            f"{type(init).__name__}"
        )

    def on_device(shape: tuple[int, ...]) -> Any:
        a = make(shape)
        if not hasattr(a, "dtype"):
            a = np.asarray(a)
        dt = get_default_dtype()
        if not keep and a.dtype != dt:
            a = a.astype(dt)
        return context_device().asarray(a)

    return on_device


def _param(
    fn: str,
    name: str,
    shape: Sequence[int],
    init: Any,
    fix_parameters: bool,
    arg: str,
    trainable: bool = True,
) -> Variable:
    """The parameter ``name`` in the current scope; ``arg`` names ``init``'s argument.

    As nnabla (``get_parameter_or_create(..., as_need_grad=not fix_parameters)``): a
    ``trainable`` parameter is created (or fetched) needing a gradient, and ``fix_parameters``
    only makes this call use an unlinked view of it without gradient; a later trainable use of
    the same layer gets gradients and :func:`gradhub.get_parameters` lists it. Parameters that
    are never trained (batch normalization's running statistics) pass ``trainable=False``.
    """
    p = get_parameter_or_create(
        name, tuple(int(s) for s in shape), _initializer(fn, arg, name, init), trainable
    )
    if fix_parameters and p.need_grad:
        view = p.detach()  # shares the data, needs no gradient (also as nnabla Variable)
        view.name = p.name
        return view
    return p


def _beta_gamma(
    fn: str,
    shape: Sequence[int],
    init: dict[str, Any],
    no_bias: bool,
    no_scale: bool,
    fix_parameters: bool,
) -> tuple[Any, Any]:
    """A normalization's ``beta`` (zeros) and ``gamma`` (ones) of ``shape`` in the current
    scope, beta first (nnabla's order); None where ``no_bias`` / ``no_scale`` omit them."""
    beta = gamma = None
    if not no_bias:
        beta = _param(
            fn,
            "beta",
            shape,
            init.get("beta", ConstantInitializer(0.0)),
            fix_parameters,
            "param_init['beta']",
        )
    if not no_scale:
        gamma = _param(
            fn,
            "gamma",
            shape,
            init.get("gamma", ConstantInitializer(1.0)),
            fix_parameters,
            "param_init['gamma']",
        )
    return beta, gamma


def _apply(fn: str, arg: str, f: Any, v: Any) -> Any:
    """``f(v)`` for nnabla's ``apply_w``/``apply_b`` (None: ``v`` itself); a TypeError naming
    ``PF.<fn>`` and ``arg`` unless ``f`` is callable."""
    if f is None:
        return v
    if not callable(f):
        raise TypeError(
            f"PF.{fn}: {arg} must be a callable taking the parameter (or None), got "
            f"{type(f).__name__}"
        )
    return f(v)


def _apply_wb(fn: str, w: Any, b: Any, apply_w: Any, apply_b: Any) -> tuple[Any, Any]:
    """``(apply_w(w), apply_b(b))`` as nnabla applies them (b None: no bias, left None)."""
    return (
        _apply(fn, "apply_w", apply_w, w),
        None if b is None else _apply(fn, "apply_b", apply_b, b),
    )


@contextmanager
def _scopes(name: str | None, sub: str) -> Iterator[None]:
    if name is None:
        with parameter_scope(sub):
            yield
    else:
        with parameter_scope(name), parameter_scope(sub):
            yield


def _positive(fn: str, arg: str, value: Any) -> int:
    """``value`` as an int >= 1; a TypeError/ValueError naming ``PF.<fn>`` and ``arg``."""
    if not is_int(value):
        raise TypeError(f"PF.{fn}: {arg} must be a positive int, got {value!r}")
    if value < 1:
        raise ValueError(f"PF.{fn}: {arg} must be a positive int, got {value!r}")
    return int(value)


def _positives(fn: str, arg: str, value: Any) -> list[int]:
    """An int or a non-empty sequence of ints, each >= 1, as a list (``n_outmaps``)."""
    if is_int(value):
        return [_positive(fn, arg, value)]
    try:
        vals = list(value)
    except TypeError:
        raise TypeError(
            f"PF.{fn}: {arg} must be a positive int or a tuple of them, got {value!r}"
        ) from None
    if not vals or not all(is_int(v) and v >= 1 for v in vals):
        raise ValueError(
            f"PF.{fn}: {arg} must be a positive int or a non-empty tuple of them, got {value!r}"
        )
    return [int(v) for v in vals]


def _kernel(fn: str, kernel: Any, x: Any, base_axis: int) -> tuple[int, ...]:
    if is_int(kernel):
        nd = len(x.shape) - base_axis - 1
        return (_positive(fn, "kernel", kernel),) * max(nd, 1)
    try:
        k = tuple(kernel)
    except TypeError:
        raise TypeError(
            f"PF.{fn}: kernel must be an int or a sequence of ints, got {kernel!r}"
        ) from None
    if not k or not all(is_int(v) and v >= 1 for v in k):
        raise ValueError(f"PF.{fn}: kernel must hold ints >= 1, got {kernel!r}")
    return tuple(int(v) for v in k)


def _base_axis(fn: str, base_axis: Any) -> int:
    if not is_int(base_axis):
        raise TypeError(f"PF.{fn}: base_axis must be an int, got {base_axis!r}")
    return int(base_axis)


def _channels(fn: str, x: Any, base_axis: int) -> int:
    base_axis = _base_axis(fn, base_axis)
    if not 0 <= base_axis < len(x.shape):
        raise ValueError(
            f"{fn}: base_axis={base_axis} is out of range for an input of shape {tuple(x.shape)}"
        )
    return int(x.shape[base_axis])


# -- parametric functions ----------------------------------------------------------------------


def affine(
    inp: Any,
    n_outmaps: int | Sequence[int],
    base_axis: int = 1,
    w_init: Any = None,
    b_init: Any = None,
    fix_parameters: bool = False,
    rng: Any = None,
    with_bias: bool = True,
    apply_w: Any = None,
    apply_b: Any = None,
    name: str | None = None,
) -> Variable:
    """Fully connected layer with parameters ``affine/W`` and ``affine/b`` (nnabla ``PF.affine``).

    ``y = x W + b`` with ``W`` of shape ``(prod(inp.shape[base_axis:]), *n_outmaps)`` (Glorot
    uniform) and ``b`` of shape ``n_outmaps`` (zeros), created under ``name/affine``.
    ``fix_parameters`` uses them without gradient in this call (they stay trainable, as nnabla);
    ``apply_w``/``apply_b`` (callables) transform them before use (nnabla; e.g. a weight
    normalization).

    Example::

        >>> import numpy as np, gradhub as gh, gradhub.parametric_functions as PF
        >>> gh.clear_parameters()
        >>> y = PF.affine(gh.Variable(np.ones((4, 3, 2))), 5, name="fc1")
        >>> y.shape
        (4, 5)
        >>> [(k, v.shape) for k, v in gh.get_parameters().items()]
        [('fc1/affine/W', (6, 5)), ('fc1/affine/b', (5,))]
    """
    outs = _positives("affine", "n_outmaps", n_outmaps)
    if not 0 <= _base_axis("affine", base_axis) <= len(inp.shape):
        raise ValueError(
            f"affine: base_axis={base_axis} is out of range for an input of shape "
            f"{tuple(inp.shape)}"
        )
    inmaps = math.prod(inp.shape[base_axis:])
    if w_init is None:
        w_init = UniformInitializer(calc_uniform_lim_glorot(inmaps, math.prod(outs)), rng=rng)
    if b_init is None:
        b_init = ConstantInitializer(0.0)
    with _scopes(name, "affine"):
        w = _param("affine", "W", [inmaps, *outs], w_init, fix_parameters, "w_init")
        b = _param("affine", "b", outs, b_init, fix_parameters, "b_init") if with_bias else None
    w, b = _apply_wb("affine", w, b, apply_w, apply_b)
    return call("Affine", inp, w, b, base_axis=base_axis)  # type: ignore[no-any-return]


def _conv_params(
    fn: str,
    scope: str,
    inp: Any,
    outmaps: int,
    kernel: Any,
    group: int,
    w_init: Any,
    b_init: Any,
    base_axis: int,
    fix_parameters: bool,
    rng: Any,
    with_bias: bool,
    name: str | None,
    *,
    transposed: bool,
    channel_last: bool = False,
) -> tuple[Variable, Variable | None]:
    """The parameters ``W`` and ``b`` of PF.convolution, or of PF.deconvolution (``transposed``).

    ``W`` has shape ``(outmaps, inmaps // group, *kernel)``, or ``(inmaps, outmaps // group,
    *kernel)`` when transposed (the fans of its Glorot default swap with it); ``b`` has shape
    ``(outmaps,)`` and is None without ``with_bias``. With ``channel_last`` (nnabla's layout)
    the input's channels are its last axis and ``W`` has the kernel before the channel axis it
    is sliced by: ``(outmaps, *kernel, inmaps // group)``, or ``(inmaps, *kernel, outmaps //
    group)`` when transposed.
    """
    if not isinstance(channel_last, (bool, np.bool_)):
        raise TypeError(
            f"PF.{fn}: channel_last must be a bool, got {channel_last!r} (nnabla's "
            "order: ..., group, channel_last, ...)"
        )
    inmaps = _channels(fn, inp, base_axis)  # also checks base_axis
    if channel_last:
        inmaps = int(inp.shape[-1])
    outmaps = _positive(fn, "outmaps", outmaps)
    k = _kernel(fn, kernel, inp, base_axis)
    group = _positive(fn, "group", group)
    if inmaps % group or outmaps % group:
        raise ValueError(
            f"{fn}: group={group} must divide inmaps ({inmaps}) and outmaps ({outmaps})"
        )
    fan_in, fan_out = (outmaps, inmaps) if transposed else (inmaps, outmaps)
    if w_init is None:
        w_init = UniformInitializer(calc_uniform_lim_glorot(fan_in, fan_out, k), rng=rng)
    if b_init is None:
        b_init = ConstantInitializer(0.0)
    with _scopes(name, scope):
        wshape = (fan_out, *k, fan_in // group) if channel_last else (fan_out, fan_in // group, *k)
        w = _param(fn, "W", wshape, w_init, fix_parameters, "w_init")
        b = _param(fn, "b", (outmaps,), b_init, fix_parameters, "b_init") if with_bias else None
    return w, b


def convolution(
    inp: Any,
    outmaps: int,
    kernel: Any,
    pad: Any = None,
    stride: Any = None,
    dilation: Any = None,
    group: int = 1,
    channel_last: bool = False,
    w_init: Any = None,
    b_init: Any = None,
    base_axis: int = 1,
    fix_parameters: bool = False,
    rng: Any = None,
    with_bias: bool = True,
    apply_w: Any = None,
    apply_b: Any = None,
    name: str | None = None,
) -> Variable:
    """N-d convolution with parameters ``conv/W`` and ``conv/b`` (nnabla ``PF.convolution``).

    ``W`` has shape ``(outmaps, inmaps // group, *kernel)`` (Glorot uniform over
    ``inmaps * prod(kernel)`` and ``outmaps * prod(kernel)``), ``b`` shape ``(outmaps,)``
    (zeros); ``inmaps = inp.shape[base_axis]``. Calls ``F.convolution``. The arguments are
    nnabla's, in its order: ``channel_last`` (input ``(N, *spatial, C)``, ``W`` of shape
    ``(outmaps, *kernel, inmaps // group)``), ``fix_parameters`` (used without gradient in this
    call; they stay trainable), ``apply_w``/``apply_b`` (callables applied to the parameters).

    Example::

        >>> import numpy as np, gradhub as gh, gradhub.parametric_functions as PF
        >>> gh.clear_parameters()
        >>> y = PF.convolution(gh.Variable(np.ones((2, 3, 8, 8))), 4, (3, 3), pad=(1, 1),
        ...                    name="c1")
        >>> y.shape, gh.get_parameters()["c1/conv/W"].shape
        ((2, 4, 8, 8), (4, 3, 3, 3))
    """
    w, b = _conv_params(
        "convolution",
        "conv",
        inp,
        outmaps,
        kernel,
        group,
        w_init,
        b_init,
        base_axis,
        fix_parameters,
        rng,
        with_bias,
        name,
        transposed=False,
        channel_last=channel_last,
    )
    w, b = _apply_wb("convolution", w, b, apply_w, apply_b)
    if channel_last:
        import gradhub.functions as F

        return F.convolution(
            inp,
            w,
            b,
            base_axis,
            pad,
            stride,
            dilation,
            group,  # type: ignore[no-any-return]
            channel_last=True,
        )
    return call(
        "Convolution",
        inp,
        w,
        b,
        base_axis=base_axis,
        pad=pad,
        stride=stride,  # type: ignore[no-any-return]
        dilation=dilation,
        group=group,
    )


def deconvolution(
    inp: Any,
    outmaps: int,
    kernel: Any,
    pad: Any = None,
    stride: Any = None,
    dilation: Any = None,
    group: int = 1,
    channel_last: bool = False,
    output_padding: Any = None,
    w_init: Any = None,
    b_init: Any = None,
    base_axis: int = 1,
    fix_parameters: bool = False,
    rng: Any = None,
    with_bias: bool = True,
    apply_w: Any = None,
    apply_b: Any = None,
    name: str | None = None,
) -> Variable:
    """N-d deconvolution with ``deconv/W`` and ``deconv/b`` (nnabla ``PF.deconvolution``).

    ``W`` has shape ``(inmaps, outmaps // group, *kernel)`` (Glorot uniform), ``b`` shape
    ``(outmaps,)`` (zeros); ``inmaps = inp.shape[base_axis]``. Calls ``F.deconvolution``, the
    adjoint of convolution. The arguments are nnabla's, in its order (``channel_last``: ``W``
    of shape ``(inmaps, *kernel, outmaps // group)``; ``apply_w``/``apply_b`` as in
    :func:`convolution`).

    Example::

        >>> import numpy as np, gradhub as gh, gradhub.parametric_functions as PF
        >>> gh.clear_parameters()
        >>> y = PF.deconvolution(gh.Variable(np.ones((2, 3, 4, 4))), 5, (2, 2), stride=(2, 2))
        >>> y.shape, gh.get_parameters()["deconv/W"].shape
        ((2, 5, 8, 8), (3, 5, 2, 2))
    """
    w, b = _conv_params(
        "deconvolution",
        "deconv",
        inp,
        outmaps,
        kernel,
        group,
        w_init,
        b_init,
        base_axis,
        fix_parameters,
        rng,
        with_bias,
        name,
        transposed=True,
        channel_last=channel_last,
    )
    w, b = _apply_wb("deconvolution", w, b, apply_w, apply_b)
    if channel_last:
        import gradhub.functions as F

        return F.deconvolution(
            inp,
            w,
            b,
            base_axis,
            pad,
            stride,
            dilation,
            group,  # type: ignore[no-any-return]
            True,
            output_padding,
        )
    return call(
        "Deconvolution",
        inp,
        w,
        b,
        base_axis=base_axis,
        pad=pad,
        stride=stride,  # type: ignore[no-any-return]
        dilation=dilation,
        group=group,
        output_padding=output_padding,
    )


def _param_init(
    label: str, param_init: dict[str, Any] | None, keys: Sequence[str]
) -> dict[str, Any]:
    """``param_init`` as a dict, checked to name only ``keys`` (the error starts with
    ``label``)."""
    init = dict(param_init or {})
    bad = set(init) - set(keys)
    if bad:
        raise ValueError(f"{label}: param_init keys must be {', '.join(keys)}; got {sorted(bad)}")
    return init


def _stat_shape(fn: str, x: Any, axes: Sequence[int], keep: bool) -> tuple[int, ...]:
    nd = len(x.shape)
    norm = []
    for a in axes:
        if not is_int(a):
            raise TypeError(f"PF.{fn}: axes must be ints, got {a!r}")
        if not -nd <= int(a) < nd:
            raise ValueError(
                f"{fn}: axis {a} is out of range for an input of shape {tuple(x.shape)}"
            )
        norm.append(int(a) % nd)
    return tuple(
        (n if i in norm else 1) if keep else (1 if i in norm else n) for i, n in enumerate(x.shape)
    )


def batch_normalization(
    inp: Any,
    axes: Sequence[int] = (1,),
    decay_rate: float = 0.9,
    eps: float = 1e-5,
    batch_stat: bool = True,
    output_stat: bool = False,
    fix_parameters: bool = False,
    param_init: dict[str, Any] | None = None,
    no_scale: bool = False,
    no_bias: bool = False,
    name: str | None = None,
) -> Any:
    """Batch normalization with ``bn/beta``, ``bn/gamma``, ``bn/mean``, ``bn/var``.

    As nnabla's ``PF.batch_normalization``: the four parameters have shape ``inp.shape`` on
    ``axes`` and 1 elsewhere (``(1, C, 1, 1)`` for NCHW); beta (zeros) and gamma (ones) need a
    gradient, the running mean (zeros) and variance (ones) do not. ``param_init`` may override
    them by key (``"beta"``, ``"gamma"``, ``"mean"``, ``"var"``). With ``batch_stat`` the batch
    statistics are used (and the running ones updated with ``decay_rate`` by
    ``F.batch_normalization``):

    ``y = gamma * (x - mean) / sqrt(var + eps) + beta``.

    The arguments are nnabla's, in its order: ``output_stat`` returns ``(y, batch mean, batch
    variance)``; ``fix_parameters`` uses beta and gamma without gradient in this call (they stay
    trainable); ``no_scale``/``no_bias`` create no gamma/beta (the term is left out).

    Example::

        >>> import numpy as np, gradhub as gh, gradhub.parametric_functions as PF
        >>> gh.clear_parameters()
        >>> y = PF.batch_normalization(gh.Variable(np.ones((2, 3, 4, 4))), name="bn1")
        >>> [(k, v.shape) for k, v in gh.get_parameters(grad_only=False).items()]
        ... # doctest: +NORMALIZE_WHITESPACE
        [('bn1/bn/beta', (1, 3, 1, 1)), ('bn1/bn/gamma', (1, 3, 1, 1)),
         ('bn1/bn/mean', (1, 3, 1, 1)), ('bn1/bn/var', (1, 3, 1, 1))]
    """
    fn = "batch_normalization"
    axes, (beta, gamma, mean, var) = _bn_parameters(
        fn, inp, axes, param_init, no_scale, no_bias, fix_parameters, name
    )
    if beta is None or gamma is None or output_stat:
        import gradhub.functions as F

        return F.batch_normalization(
            inp, beta, gamma, mean, var, tuple(axes), decay_rate, eps, batch_stat, output_stat
        )
    return call(
        "BatchNormalization",
        inp,
        beta,
        gamma,
        mean,
        var,
        axes=tuple(axes),  # type: ignore[no-any-return]
        decay_rate=decay_rate,
        eps=eps,
        batch_stat=batch_stat,
    )


def _bn_parameters(
    fn: str,
    inp: Any,
    axes: Any,
    param_init: dict[str, Any] | None,
    no_scale: bool,
    no_bias: bool,
    fix_parameters: bool,
    name: str | None,
) -> tuple[list[int], tuple[Any, Any, Any, Any]]:
    """The axes (a list of ints) and the parameters ``bn/beta``, ``bn/gamma``, ``bn/mean``,
    ``bn/var`` of a batch normalization layer (beta/gamma None where omitted)."""
    raw: list[Any] = [axes] if is_int(axes) else list(axes)
    shape = _stat_shape(fn, inp, raw, keep=True)
    init = _param_init(fn, param_init, ("beta", "gamma", "mean", "var"))
    with _scopes(name, "bn"):
        beta, gamma = _beta_gamma(fn, shape, init, no_bias, no_scale, fix_parameters)
        mean = _param(
            fn,
            "mean",
            shape,
            init.get("mean", ConstantInitializer(0.0)),
            False,
            "param_init['mean']",
            trainable=False,
        )
        var = _param(
            fn,
            "var",
            shape,
            init.get("var", ConstantInitializer(1.0)),
            False,
            "param_init['var']",
            trainable=False,
        )
    return [int(a) for a in raw], (beta, gamma, mean, var)


def sync_batch_normalization(
    inp: Any,
    comm: Any,
    group: str = "world",
    axes: Sequence[int] = (1,),
    decay_rate: float = 0.9,
    eps: float = 1e-5,
    batch_stat: bool = True,
    output_stat: bool = False,
    fix_parameters: bool = False,
    param_init: dict[str, Any] | None = None,
    no_scale: bool = False,
    no_bias: bool = False,
    name: str | None = None,
) -> Any:
    """Batch normalization over the batches of every process of ``comm`` together, with the
    parameters of :func:`batch_normalization` (``bn/beta``, ``bn/gamma``, ``bn/mean``,
    ``bn/var``), as nnabla's ``PF.sync_batch_normalization``; calls
    ``F.sync_batch_normalization``:

    ``y = gamma * (x - mean) / sqrt(var + eps) + beta``, mean and var over all processes.

    ``comm`` is a communicator (:func:`gradhub.distributed.communicator`); ``group`` must be
    ``"world"`` (every process of ``comm``; nnabla's other groups are not provided).
    ``output_stat`` also returns the common batch mean and (biased) variance. The other
    arguments are :func:`batch_normalization`'s.

    Example (one process: batch normalization)::

        >>> import numpy as np, gradhub as gh, gradhub.parametric_functions as PF
        >>> from gradhub_nn_ops.distributed import ONE_PROCESS
        >>> gh.clear_parameters()
        >>> x = gh.Variable(np.array([[1.0, 2.0], [3.0, 6.0]]))
        >>> PF.sync_batch_normalization(x, ONE_PROCESS, eps=1e-8).d.round(4)
        array([[-1., -1.],
               [ 1.,  1.]])
    """
    fn = "sync_batch_normalization"
    if group != "world":
        raise NotImplementedError(
            f"PF.{fn}: group={group!r} is not provided; only 'world' (every process of comm)"
        )
    axes, (beta, gamma, mean, var) = _bn_parameters(
        fn, inp, axes, param_init, no_scale, no_bias, fix_parameters, name
    )
    x = as_variable(inp)
    if beta is None or gamma is None:
        xp = x.device.xp
        with x.device.activate():
            beta = xp.zeros(mean.shape, mean.dtype) if beta is None else beta
            gamma = xp.ones(mean.shape, mean.dtype) if gamma is None else gamma
    y = call(
        "SyncBatchNormalization",
        x,
        beta,
        gamma,
        mean,
        var,
        comm=comm,
        axes=tuple(axes),
        decay_rate=decay_rate,
        eps=eps,
        batch_stat=batch_stat,
    )
    if not output_stat:
        return y
    if not batch_stat:
        raise ValueError(
            f"PF.{fn}: output_stat=True needs batch_stat=True (the batch statistics are its "
            "outputs; nnabla refuses it too)"
        )
    red = tuple(i for i in range(x.ndim) if i not in {a % x.ndim for a in axes})
    mu = call("DistributedMean", x, comm=comm, axis=red, keepdims=True)
    xc = x - mu
    return y, mu, call("DistributedMean", xc * xc, comm=comm, axis=red, keepdims=True)


def layer_normalization(
    inp: Any,
    batch_axis: int | Sequence[int] = 0,
    eps: float = 1e-5,
    output_stat: bool = False,
    fix_parameters: bool = False,
    param_init: dict[str, Any] | None = None,
    no_scale: bool = False,
    no_bias: bool = False,
    name: str | None = None,
) -> Any:
    """Layer normalization with ``layer_normalization/beta`` and ``layer_normalization/gamma``.

    Normalizes each sample over every axis but ``batch_axis``:
    ``y = gamma * (x - mean) / sqrt(var + eps) + beta``. The scope name is nnabla's
    (``layer_normalization``); gamma (ones) and beta (zeros) have the input's shape with the
    batch axes set to 1, so one parameter per feature is shared by all samples. Calls
    ``F.layer_normalization``. The arguments are nnabla's, in its order: ``output_stat``
    returns ``(y, mean, variance)`` (per sample); ``fix_parameters`` uses beta and gamma without
    gradient in this call (they stay trainable); ``no_scale``/``no_bias`` create no gamma/beta.
    beta is created first, as nnabla (the order of :func:`gradhub.get_parameters`).

    Example::

        >>> import numpy as np, gradhub as gh, gradhub.parametric_functions as PF
        >>> gh.clear_parameters()
        >>> y = PF.layer_normalization(gh.Variable(np.ones((2, 3, 4))), name="ln1")
        >>> [(k, v.shape) for k, v in gh.get_parameters().items()]
        [('ln1/layer_normalization/beta', (1, 3, 4)), ('ln1/layer_normalization/gamma', (1, 3, 4))]
    """
    fn = "layer_normalization"
    baxes: list[Any]
    if is_int(batch_axis):
        baxes = [batch_axis]
    else:
        try:
            baxes = list(batch_axis)  # type: ignore[arg-type]
        except TypeError:
            raise TypeError(
                f"PF.{fn}: batch_axis must be an int or a sequence of ints, got {batch_axis!r}"
            ) from None
    shape = _stat_shape(fn, inp, baxes, keep=False)
    init = _param_init(fn, param_init, ("beta", "gamma"))
    with _scopes(name, "layer_normalization"):
        beta, gamma = _beta_gamma(fn, shape, init, no_bias, no_scale, fix_parameters)
    ba = baxes[0] if len(baxes) == 1 else tuple(baxes)
    return call(
        "LayerNormalization",
        inp,
        beta,
        gamma,
        batch_axis=ba,
        eps=eps,  # type: ignore[no-any-return]
        output_stat=output_stat,
    )  # type: ignore[no-any-return]


def _channel_params(
    fn: str,
    inp: Any,
    channel_axis: int,
    no_scale: bool,
    no_bias: bool,
    fix_parameters: bool,
    param_init: dict[str, Any] | None,
    name: str | None,
) -> tuple[Any, Any]:
    """gamma (ones) and beta (zeros) of shape (1, ..., C, ..., 1) under the scope ``fn``: one
    value per channel, as nnabla's group and instance normalization (None where omitted)."""
    nd = len(inp.shape)
    if not is_int(channel_axis) or not -nd <= int(channel_axis) < nd:
        raise ValueError(
            f"PF.{fn}: channel_axis must be an int in [{-nd}, {nd}), got "
            f"{channel_axis!r} for an input of shape {tuple(inp.shape)}"
        )
    ca = int(channel_axis) % nd
    shape = tuple(int(n) if i == ca else 1 for i, n in enumerate(inp.shape))
    init = _param_init(f"PF.{fn}", param_init, ("beta", "gamma"))
    with _scopes(name, fn):
        return _beta_gamma(fn, shape, init, no_bias, no_scale, fix_parameters)


def group_normalization(
    inp: Any,
    num_groups: int,
    channel_axis: int = 1,
    batch_axis: int | Sequence[int] = 0,
    eps: float = 1e-5,
    output_stat: bool = False,
    fix_parameters: bool = False,
    param_init: dict[str, Any] | None = None,
    no_scale: bool = False,
    no_bias: bool = False,
    name: str | None = None,
) -> Any:
    """Group normalization with ``group_normalization/gamma`` and ``group_normalization/beta``.

    ``y = gamma * (x - mean) / sqrt(var + eps) + beta`` with the statistics of each sample's
    each group of ``C / num_groups`` channels (see ``F.group_normalization``). gamma (ones) and
    beta (zeros) hold one value per channel: shape (1, C, 1, 1) for (N, C, H, W), as nnabla;
    ``no_scale``/``no_bias`` leave them out.

    Example::

        >>> import numpy as np, gradhub as gh, gradhub.parametric_functions as PF
        >>> gh.clear_parameters()
        >>> y = PF.group_normalization(gh.Variable(np.ones((2, 6, 3, 3))), num_groups=3)
        >>> [(k, v.shape) for k, v in gh.get_parameters().items()]
        [('group_normalization/beta', (1, 6, 1, 1)), ('group_normalization/gamma', (1, 6, 1, 1))]
    """
    import gradhub.functions as F

    beta, gamma = _channel_params(
        "group_normalization",
        inp,
        channel_axis,
        no_scale,
        no_bias,
        fix_parameters,
        param_init,
        name,
    )
    return F.group_normalization(
        inp,
        beta,
        gamma,
        num_groups,
        channel_axis=channel_axis,
        batch_axis=batch_axis,
        eps=eps,
        no_scale=no_scale,
        no_bias=no_bias,
        output_stat=output_stat,
    )


def instance_normalization(
    inp: Any,
    channel_axis: int = 1,
    batch_axis: int | Sequence[int] = 0,
    eps: float = 1e-5,
    output_stat: bool = False,
    fix_parameters: bool = False,
    param_init: dict[str, Any] | None = None,
    no_scale: bool = False,
    no_bias: bool = False,
    name: str | None = None,
) -> Any:
    """Instance normalization with ``instance_normalization/gamma`` and ``.../beta``.

    ``y = gamma * (x - mean) / sqrt(var + eps) + beta`` with the statistics of each sample's
    each channel (see ``F.instance_normalization``); gamma (ones) and beta (zeros) have shape
    (1, C, 1, 1) for (N, C, H, W), as nnabla; ``no_scale``/``no_bias`` leave them out.

    Example::

        >>> import numpy as np, gradhub as gh, gradhub.parametric_functions as PF
        >>> gh.clear_parameters()
        >>> y = PF.instance_normalization(gh.Variable(np.ones((2, 4, 3))), no_bias=True)
        >>> [(k, v.shape) for k, v in gh.get_parameters().items()]
        [('instance_normalization/gamma', (1, 4, 1))]
    """
    import gradhub.functions as F

    beta, gamma = _channel_params(
        "instance_normalization",
        inp,
        channel_axis,
        no_scale,
        no_bias,
        fix_parameters,
        param_init,
        name,
    )
    return F.instance_normalization(
        inp,
        beta,
        gamma,
        channel_axis=channel_axis,
        batch_axis=batch_axis,
        eps=eps,
        no_scale=no_scale,
        no_bias=no_bias,
        output_stat=output_stat,
    )


def embed(
    inp: Any,
    n_inputs: int,
    n_features: int,
    initializer: Any = None,
    fix_parameters: bool = False,
    apply_w: Any = None,
    name: str | None = None,
) -> Variable:
    """Embedding lookup with the parameter ``embed/W`` of shape ``(n_inputs, n_features)``.

    As nnabla's ``PF.embed``: ``W`` is uniform in ``[-sqrt(3), sqrt(3))`` and
    ``y[i...] = W[inp[i...]]`` (``F.embed``).

    Example::

        >>> import numpy as np, gradhub as gh, gradhub.parametric_functions as PF
        >>> gh.clear_parameters()
        >>> ids = gh.Variable(np.array([[1, 2], [0, 1]]), need_grad=False)
        >>> PF.embed(ids, 10, 4, name="emb").shape
        (2, 2, 4)
    """
    n_inputs = _positive("embed", "n_inputs", n_inputs)
    n_features = _positive("embed", "n_features", n_features)
    if initializer is None:
        initializer = UniformInitializer((-math.sqrt(3.0), math.sqrt(3.0)))
    with _scopes(name, "embed"):
        w = _param("embed", "W", (n_inputs, n_features), initializer, fix_parameters, "initializer")
    return call("Embed", inp, _apply("embed", "apply_w", apply_w, w))  # type: ignore[no-any-return]


def depthwise_convolution(
    inp: Any,
    kernel: Any,
    pad: Any = None,
    stride: Any = None,
    dilation: Any = None,
    multiplier: int = 1,
    w_init: Any = None,
    b_init: Any = None,
    base_axis: int = 1,
    fix_parameters: bool = False,
    rng: Any = None,
    with_bias: bool = True,
    name: str | None = None,
) -> Variable:
    """Depthwise convolution with its parameters (nnabla ``PF.depthwise_convolution``):
    ``F.depthwise_convolution(inp, W, b, base_axis, pad, stride, dilation, multiplier)``, output
    channel ``o`` filtering input channel ``o // multiplier``.

    ``W`` (``depthwise_conv/W``) has shape ``(inmaps * multiplier, *kernel)``, Glorot uniform
    over the fans ``(inmaps * multiplier, inmaps)`` by default, as nnabla; ``b``
    (``depthwise_conv/b``, zeros) has shape ``(inmaps * multiplier,)``.

    Example::

        >>> import numpy as np, gradhub as gh, gradhub.parametric_functions as PF
        >>> gh.clear_parameters()
        >>> y = PF.depthwise_convolution(gh.Variable(np.ones((2, 3, 8, 8))), (3, 3), name="d1")
        >>> y.shape, gh.get_parameters()["d1/depthwise_conv/W"].shape
        ((2, 3, 6, 6), (3, 3, 3))
        >>> gh.clear_parameters()
    """
    fn = "depthwise_convolution"
    inmaps = _channels(fn, inp, base_axis)
    k = _kernel(fn, kernel, inp, base_axis)
    multiplier = _positive(fn, "multiplier", multiplier)
    outmaps = inmaps * multiplier
    if w_init is None:
        w_init = UniformInitializer(calc_uniform_lim_glorot(outmaps, inmaps, k), rng=rng)
    if b_init is None:
        b_init = ConstantInitializer(0.0)
    with _scopes(name, "depthwise_conv"):
        w = _param(fn, "W", (outmaps, *k), w_init, fix_parameters, "w_init")
        b = _param(fn, "b", (outmaps,), b_init, fix_parameters, "b_init") if with_bias else None
    import gradhub.functions as F

    return F.depthwise_convolution(  # type: ignore[no-any-return]
        inp, w, b, base_axis, pad, stride, dilation, multiplier
    )


def register_functions(register: Any) -> None:
    """Register the parametric functions."""
    for fn in (
        affine,
        convolution,
        depthwise_convolution,
        deconvolution,
        batch_normalization,
        sync_batch_normalization,
        layer_normalization,
        group_normalization,
        instance_normalization,
        embed,
    ):
        register.parametric(fn.__name__, fn)
