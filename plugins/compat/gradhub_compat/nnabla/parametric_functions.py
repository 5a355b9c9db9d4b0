"""nnabla's parametric functions: ``import gradhub_compat.nnabla.parametric_functions as PF``.

Every parametric function registered in gradhub (``gradhub.parametric_functions``:
``PF.convolution``, ``PF.affine``...; nnabla names, arguments and parameter names such as
``conv1/conv/W``) is offered here. Its result and the parameters it creates are
:class:`gradhub_compat.nnabla.Variable` objects (nnabla semantics: ``.g`` is an array).

Example::

    >>> import numpy as np
    >>> import gradhub_compat.nnabla as nn
    >>> import gradhub_compat.nnabla.parametric_functions as PF
    >>> h = PF.affine(nn.Variable((4, 3)), 5, name="fc")
    >>> h.shape, sorted(nn.get_parameters())
    ((4, 5), ['fc/affine/W', 'fc/affine/b'])
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np
from gradhub import parameters as _parameters
from gradhub import parametric_functions as _native
from gradhub.modes import is_recording

from .._common import adopt, host_array, wrapped_attribute
from ._auto_forward import get_auto_forward, kept_unless_auto_forward, quiet_unless_auto_forward
from ._variable import Variable, _Unlinked

_wrappers: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {}


def _batch_normalization(fn: Callable[..., Any], args: Any, kwargs: Any) -> Any:
    """``PF.batch_normalization`` that, while auto_forward is off (nnabla's default), leaves the
    running statistics ``bn/mean`` and ``bn/var`` as they were before the build (their initial
    values for new parameters): only ``forward()`` updates them."""
    if get_auto_forward():
        return fn(*args, **kwargs)
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs)
    except TypeError:
        return fn(*args, **kwargs)  # the native call names the problem
    if not bound.arguments.get("batch_stat", True):
        return fn(*args, **kwargs)
    name = bound.arguments.get("name")
    keys = [
        _parameters.full_name("bn/" + k if name is None else f"{name}/bn/{k}")
        for k in ("mean", "var")
    ]
    stats = [_parameters.parameter_table().get(k) for k in keys]
    if any(p is None for p in stats):
        # new parameters: created (with their initial values) by an inference-mode call, which
        # updates nothing
        bound.arguments["batch_stat"] = False
        if "output_stat" in bound.arguments:  # the inference mode has no batch statistics
            bound.arguments["output_stat"] = False
        fn(*bound.args, **bound.kwargs)
        stats = [_parameters.parameter_table().get(k) for k in keys]
    with kept_unless_auto_forward([p._data for p in stats if p is not None]):
        return fn(*args, **kwargs)


def _rebind(
    fn: Callable[..., Any], args: Any, kwargs: Any, edit: Callable[[dict[str, Any]], None]
) -> tuple[Any, Any]:
    """The arguments of ``fn`` bound to its signature, changed in place by ``edit``, as
    ``(args, kwargs)``; as they are when they do not bind."""
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs)
    except TypeError:
        return args, kwargs  # the native call names the problem
    edit(bound.arguments)
    return bound.args, bound.kwargs


def _affine_base_axis(fn: Callable[..., Any], args: Any, kwargs: Any) -> tuple[Any, Any]:
    """``PF.affine``'s arguments with a negative ``base_axis`` counted from the end of the
    input's shape (-1: the last axis), as nnabla."""

    def edit(a: dict[str, Any]) -> None:
        ba: Any = a.get("base_axis", 1)
        inp: Any = a.get("inp")
        if isinstance(ba, int) and not isinstance(ba, bool) and ba < 0 and hasattr(inp, "shape"):
            nd = len(inp.shape)
            if ba < -nd:
                raise ValueError(
                    f"nnabla PF.affine: base_axis={ba} is out of range for an input of shape "
                    f"{tuple(inp.shape)} (from -{nd} to {nd - 1})"
                )
            a["base_axis"] = ba + nd

    return _rebind(fn, args, kwargs, edit)


# the size arguments nnabla converts to C++ integers, so that a float such as ``maxh / 2``
# (nnabla's example programs) names a size
_SIZE_ARGS = ("n_outmaps", "outmaps", "kernel")


def _whole(pf: str, key: str, value: Any) -> Any:
    if isinstance(value, (float, np.floating)):
        if not float(value).is_integer():
            raise TypeError(
                f"nnabla PF.{pf}: {key} must be a whole number, got {value!r} (nnabla truncates "
                "it; see docs/migration-nnabla.md, 'Differences and limits')"
            )
        return int(value)
    return value


def _integral_sizes(fn: Callable[..., Any], pf: str, args: Any, kwargs: Any) -> tuple[Any, Any]:
    """The arguments of ``PF.<pf>`` with the sizes ``n_outmaps``, ``outmaps`` and ``kernel``
    given as whole floats (``128.0``, or tuples of them) made ints, as nnabla accepts them; a
    float with a fraction raises ``TypeError`` (nnabla truncates it)."""
    if not any(isinstance(v, (float, np.floating, tuple, list)) for v in (*args, *kwargs.values())):
        return args, kwargs

    def edit(a: dict[str, Any]) -> None:
        for key in _SIZE_ARGS:
            if key not in a:
                continue
            v = a[key]
            if isinstance(v, (tuple, list)):
                a[key] = type(v)(_whole(pf, key, e) for e in v)
            else:
                a[key] = _whole(pf, key, v)

    return _rebind(fn, args, kwargs, edit)


def _nnabla_use(p: Any, need_grad: bool) -> Any:
    """nnabla's use of a parameter in a parametric function (``get_parameter_or_create(name,
    shape, init, need_grad)``): the registered flag becomes ``need_grad`` (a trainable layer
    makes its parameters trainable again), and the function gets an unlinked Variable sharing
    the parameter's data and gradient, so that a ``need_grad`` set on the registered parameter
    afterwards does not change the graphs built before (False inside ``nn.no_grad()``)."""
    p = adopt(p, Variable)
    if p.need_grad != need_grad:
        p.need_grad = need_grad
    v = _Unlinked.of(p, need_grad and is_recording(), None)
    v.name = p.name
    return v


# the scope nnabla's parametric functions call apply_w/apply_b in (under ``name``)
_APPLY_SCOPES = {
    "affine": "affine",
    "convolution": "conv",
    "deconvolution": "deconv",
    "embed": "embed",
}


def _scoped_apply(fn: Callable[..., Any], pf: str, args: Any, kwargs: Any) -> tuple[Any, Any]:
    """The arguments of ``PF.<pf>`` with ``apply_w``/``apply_b`` called under the layer's
    scope (``name/affine``...), as nnabla's, so that the parameters they create (e.g.
    ``PF.weight_normalization``'s ``wn/g``) are named ``fc/affine/wn/g``."""
    sub = _APPLY_SCOPES.get(pf)
    if sub is None or not ({"apply_w", "apply_b"} & kwargs.keys() or len(args) > 1):
        return args, kwargs

    def edit(a: dict[str, Any]) -> None:
        for key in ("apply_w", "apply_b"):
            f = a.get(key)
            if callable(f):
                a[key] = _in_scope(f, a.get("name"), sub)

    return _rebind(fn, args, kwargs, edit)


def _in_scope(f: Callable[..., Any], name: Any, sub: str) -> Callable[..., Any]:
    from contextlib import nullcontext

    from gradhub import parameter_scope

    def scoped(v: Any) -> Any:
        with parameter_scope(name) if name is not None else nullcontext():
            with parameter_scope(sub):
                return f(v)

    return scoped


def _wrap(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        args, kwargs = _integral_sizes(fn, name, args, kwargs)
        if name == "affine":
            args, kwargs = _affine_base_axis(fn, args, kwargs)
        args, kwargs = _scoped_apply(fn, name, args, kwargs)
        with _parameters.parameter_use(_nnabla_use), quiet_unless_auto_forward():
            if name in ("batch_normalization", "sync_batch_normalization"):
                out = adopt(_batch_normalization(fn, args, kwargs), Variable)
            else:
                out = adopt(fn(*args, **kwargs), Variable)
        for p in _parameters.get_parameters(grad_only=False).values():
            adopt(p, Variable)
        return out

    wrapped.__name__ = wrapped.__qualname__ = name
    wrapped.__doc__ = fn.__doc__
    wrapped.__wrapped__ = fn  # type: ignore[attr-defined]
    return wrapped


def parametric_function_api(
    scope_name: str | None = None, param_desc: Any = None
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator for user-defined parametric functions, as nnabla's: the decorated function is
    called under ``parameter_scope(scope_name)`` (default: the function's name) and gets an
    extra last argument ``name=None``; with ``name`` given, that scope comes under
    ``parameter_scope(name)``. The function must take ``fix_parameters`` (as nnabla requires;
    otherwise ``AssertionError`` naming the function). ``param_desc`` (a list of
    ``(name, description, shape, need_grad)``) is added to the docstring.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.parametric_functions as PF
        >>> from gradhub_compat.nnabla.parameter import get_parameter_or_create
        >>> nn.clear_parameters()
        >>> @PF.parametric_function_api("scale")
        ... def scale(x, fix_parameters=False):
        ...     return x * get_parameter_or_create("a", (1,), np.ones(1, np.float32))
        >>> y = scale(nn.Variable((2,)), name="s1")
        >>> list(nn.get_parameters())
        ['s1/scale/a']
        >>> nn.clear_parameters()
    """

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        import functools
        from contextlib import nullcontext

        from . import parameter_scope

        fname = getattr(func, "__name__", "parametric function")
        scope = fname if scope_name is None else scope_name
        sig = inspect.signature(func)
        if "fix_parameters" not in sig.parameters:
            raise AssertionError(
                f"nnabla parametric_function_api: a parametric function must take "
                f"`fix_parameters` as an argument. `{fname}{sig}` doesn't have it."
            )
        params = list(sig.parameters.values())
        kinds = {p.kind for p in params}
        name_kind = (
            inspect.Parameter.KEYWORD_ONLY
            if kinds & {inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.KEYWORD_ONLY}
            else inspect.Parameter.POSITIONAL_OR_KEYWORD
        )
        extra = inspect.Parameter("name", name_kind, default=None)
        at = next(
            (i for i, p in enumerate(params) if p.kind == inspect.Parameter.VAR_KEYWORD),
            len(params),
        )
        new_sig = sig.replace(parameters=[*params[:at], extra, *params[at:]])

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            bound = new_sig.bind(*args, **kwargs)
            name = bound.arguments.pop("name", None)
            with parameter_scope(name) if name is not None else nullcontext():
                with parameter_scope(scope):
                    return func(*bound.args, **bound.kwargs)

        del wrapper.__wrapped__  # type: ignore[attr-defined]  # show the new signature
        wrapper.__signature__ = new_sig  # type: ignore[attr-defined]
        if param_desc:
            lines = [
                f"    * {d[0]} (``need_grad={d[3]}``) : {d[1]}. (shape: ``{d[2]}``)"
                for d in param_desc
            ]
            wrapper.__doc__ = (
                (func.__doc__ or "")
                + f"\n\nParameters registered in the scope ``{scope!r}``:\n\n"
                + "\n".join(lines)
            )
        wrapper.__parametric_function_api_base__ = func  # type: ignore[attr-defined]
        wrapper.__scope_name__ = scope  # type: ignore[attr-defined]
        return wrapper

    return decorate


# the names of ._pf_more (nnabla's quantized and low-rank layers, the initializers its module
# re-exports)
_PF_MORE = (
    "ConstantInitializer",
    "NormalInitializer",
    "UniformInitializer",
    "WeightNormalizationScaleInitializer",
    "cpd3_convolution",
    "min_max_quantized_affine",
    "min_max_quantized_convolution",
    "pow2_quantized_affine",
    "pow2_quantized_convolution",
    "svd_affine",
    "svd_convolution",
)


def __getattr__(name: str) -> Any:
    # (nnabla's module also offers these helpers, the same objects as in its parameter and
    # initializer modules)
    if name in ("get_parameter", "get_parameter_or_create"):
        from . import parameter

        return getattr(parameter, name)
    if name == "calc_uniform_lim_glorot":
        from .initializer import calc_uniform_lim_glorot

        return calc_uniform_lim_glorot
    if name in ("inq_affine", "inq_convolution", "min_max_quantize"):
        from . import _quantized_parametric  # (written with parametric_function_api above)

        return getattr(_quantized_parametric, name)
    if name in _PF_MORE:
        from . import _pf_more  # (quantized and low-rank layers, the re-exported initializers)

        return getattr(_pf_more, name)
    return wrapped_attribute(__name__, _native, name, _wrappers, lambda fn: _wrap(fn, name))


def __dir__() -> list[str]:
    return sorted(
        {
            *_native.__dir__(),
            "LSTMCell",
            "binary_connect_affine",
            "binary_connect_convolution",
            "binary_weight_affine",
            "binary_weight_convolution",
            "calc_uniform_lim_glorot",
            "depthwise_deconvolution",
            "fixed_point_quantized_affine",
            "fixed_point_quantized_convolution",
            "fused_batch_normalization",
            "get_parameter",
            "get_parameter_or_create",
            "gru",
            "inq_affine",
            "inq_convolution",
            "lstm",
            "lstm_cell",
            "mean_subtraction",
            "min_max_quantize",
            "multi_head_attention",
            "parametric_function_api",
            "prelu",
            "pruned_affine",
            "pruned_convolution",
            "rnn",
            "spectral_norm",
            "transformer",
            "transformer_decode",
            "transformer_encode",
            "weight_normalization",
            *_PF_MORE,
        }
    )


# -- parametric functions nnabla composes in Python (not in gradhub's library) ------------------


def _functions() -> Any:
    from . import functions as F

    return F


@parametric_function_api("prelu")
def prelu(
    inp: Any,
    base_axis: int = 1,
    shared: bool = True,
    fix_parameters: bool = False,
    slope_init: Any = None,
) -> Any:
    r"""nnabla's ``PF.prelu``: :math:`y = \max(0, x) + w \min(0, x)` with the learned negative
    slope ``prelu/slope``: one value (shape ``()``) when ``shared``, else one per channel (shape
    ``(inp.shape[base_axis],)``), initialized with 0.25 unless ``slope_init`` (an initializer
    or an array) is given; ``fix_parameters`` uses it without gradient in this call.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.parametric_functions as PF
        >>> nn.clear_parameters()
        >>> x = nn.Variable.from_numpy_array(np.array([[-2.0, 1.0], [4.0, -1.0]]))
        >>> y = PF.prelu(x, shared=False, name="act")
        >>> y.forward()
        >>> y.d
        array([[-0.5 ,  1.  ],
               [ 4.  , -0.25]], dtype=float32)
        >>> [(k, v.shape) for k, v in nn.get_parameters().items()]
        [('act/prelu/slope', (2,))]
        >>> nn.clear_parameters()
    """
    from .initializer import ConstantInitializer
    from .parameter import get_parameter_or_create

    if shared:
        shape: tuple[int, ...] = ()
    else:
        nd = len(inp.shape)
        if not isinstance(base_axis, int) or not 0 <= base_axis < nd:
            raise ValueError(
                f"nnabla PF.prelu: base_axis={base_axis!r} is out of range for an input of "
                f"shape {tuple(inp.shape)} (from 0 to {nd - 1})"
            )
        shape = (int(inp.shape[base_axis]),)
    if slope_init is None:
        slope_init = ConstantInitializer(0.25)
    w = get_parameter_or_create("slope", shape, slope_init, True, not fix_parameters)
    return _functions().prelu(inp, w, base_axis)


@parametric_function_api("bn")
def fused_batch_normalization(
    inp: Any,
    z: Any = None,
    axes: Any = (1,),
    decay_rate: float = 0.9,
    eps: float = 1e-5,
    batch_stat: bool = True,
    nonlinearity: str = "relu",
    output_stat: bool = False,
    fix_parameters: bool = False,
    param_init: Any = None,
    no_scale: bool = False,
    no_bias: bool = False,
) -> Any:
    r"""nnabla's ``PF.fused_batch_normalization``: :math:`\max(\mathrm{BN}(x) + z, 0)`, one
    ``F.fused_batch_normalization`` (the function ``FusedBatchNormalization``) with
    ``PF.batch_normalization``'s parameters ``bn/beta``, ``bn/gamma`` (trainable; left out with
    ``no_bias``/``no_scale``), ``bn/mean``, ``bn/var`` (the running statistics, updated by
    ``forward()`` when ``batch_stat``), initialized with 0, 1, 0, 1 unless ``param_init`` (a
    dict of initializers or arrays under those names) says otherwise; ``fix_parameters`` uses
    beta and gamma without gradient in this call. ``z`` None: no addition; with
    ``output_stat``, ``(y, mean, variance)`` of the batch. Only ``nonlinearity="relu"``, as
    nnabla's (``NotImplementedError``, a ``RuntimeError``, otherwise).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.parametric_functions as PF
        >>> nn.clear_parameters()
        >>> x = nn.Variable.from_numpy_array(np.array([[1.0, 2.0], [3.0, 6.0]]))
        >>> y = PF.fused_batch_normalization(x, name="res")
        >>> y.forward()
        >>> np.round(y.d, 3)
        array([[0., 0.],
               [1., 1.]], dtype=float32)
        >>> y.parent.name
        'FusedBatchNormalization'
        >>> sorted(nn.get_parameters(grad_only=False))
        ['res/bn/beta', 'res/bn/gamma', 'res/bn/mean', 'res/bn/var']
        >>> nn.clear_parameters()
    """
    from .initializer import ConstantInitializer
    from .parameter import get_parameter_or_create

    F = _functions()
    F._fused_nonlinearity("PF.fused_batch_normalization", nonlinearity)
    ax = list(axes) if isinstance(axes, (list, tuple)) else [axes]
    nd = len(inp.shape)
    for a in ax:
        if isinstance(a, bool) or not isinstance(a, (int, np.integer)) or not -nd <= a < nd:
            raise ValueError(
                f"nnabla PF.fused_batch_normalization: axes={axes!r} is out of range for an "
                f"input of shape {tuple(inp.shape)}"
            )
    shape = [1] * nd
    for a in ax:
        shape[int(a)] = int(inp.shape[int(a)])
    init = {} if param_init is None else dict(param_init)
    beta = gamma = None
    if not no_bias:
        beta_init = init.get("beta", ConstantInitializer(0))
        beta = get_parameter_or_create("beta", shape, beta_init, True, not fix_parameters)
    if not no_scale:
        gamma_init = init.get("gamma", ConstantInitializer(1))
        gamma = get_parameter_or_create("gamma", shape, gamma_init, True, not fix_parameters)
    mean = get_parameter_or_create("mean", shape, init.get("mean", ConstantInitializer(0)), False)
    var = get_parameter_or_create("var", shape, init.get("var", ConstantInitializer(1)), False)
    return F.fused_batch_normalization(
        inp, beta, gamma, mean, var, z, ax, decay_rate, eps, batch_stat, nonlinearity, output_stat
    )


@parametric_function_api("depthwise_deconv")
def depthwise_deconvolution(
    inp: Any,
    kernel: Any,
    pad: Any = None,
    stride: Any = None,
    dilation: Any = None,
    divisor: int = 1,
    w_init: Any = None,
    b_init: Any = None,
    base_axis: int = 1,
    fix_parameters: bool = False,
    rng: Any = None,
    with_bias: bool = True,
) -> Any:
    """nnabla's ``PF.depthwise_deconvolution``: ``F.depthwise_deconvolution`` with the
    parameters ``depthwise_deconv/W`` of shape ``(inmaps, *kernel)`` (Glorot uniform with
    nnabla's limits ``calc_uniform_lim_glorot(inmaps, inmaps, kernel)``, drawn from ``rng`` or
    the generator ``PF.affine``/``PF.convolution`` draw from, unless ``w_init``) and
    ``depthwise_deconv/b`` of shape ``(inmaps // divisor,)`` (zeros unless ``b_init``; none
    without ``with_bias``), ``inmaps = inp.shape[base_axis]``.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.parametric_functions as PF
        >>> nn.clear_parameters()
        >>> y = PF.depthwise_deconvolution(nn.Variable((2, 4, 5, 5)), (3, 3), divisor=2, name="up")
        >>> y.shape, [(k, v.shape) for k, v in nn.get_parameters().items()]
        ((2, 2, 7, 7), [('up/depthwise_deconv/W', (4, 3, 3)), ('up/depthwise_deconv/b', (2,))])
        >>> nn.clear_parameters()
    """
    from gradhub_nn_ops.parametric import (
        ConstantInitializer,
        UniformInitializer,
        calc_uniform_lim_glorot,
    )

    from .parameter import get_parameter_or_create

    nd = len(inp.shape)
    if not isinstance(base_axis, int) or isinstance(base_axis, bool) or not 0 <= base_axis < nd:
        raise ValueError(
            f"nnabla PF.depthwise_deconvolution: base_axis={base_axis!r} is out of range for an "
            f"input of shape {tuple(inp.shape)} (from 0 to {nd - 1})"
        )
    try:
        kern = tuple(int(k) for k in kernel)
    except TypeError:
        raise TypeError(
            f"nnabla PF.depthwise_deconvolution: kernel must be a tuple of ints, got {kernel!r}"
        ) from None
    inmaps = int(inp.shape[base_axis])
    if w_init is None:
        w_init = UniformInitializer(calc_uniform_lim_glorot(inmaps, inmaps, kern), rng=rng)
    w = get_parameter_or_create("W", (inmaps, *kern), w_init, True, not fix_parameters)
    b = None
    if with_bias:
        if b_init is None:
            b_init = ConstantInitializer(0.0)
        b = get_parameter_or_create("b", (inmaps // divisor,), b_init, True, not fix_parameters)
    return _functions().depthwise_deconvolution(
        inp, w, b, base_axis, pad, stride, dilation, divisor
    )


@parametric_function_api("mean_subtraction")
def mean_subtraction(
    inp: Any, base_axis: int = 1, update_running_mean: bool = True, fix_parameters: bool = False
) -> Any:
    """nnabla's ``PF.mean_subtraction``: ``F.mean_subtraction`` with the parameters
    ``mean_subtraction/mean`` (shape ``inp.shape[base_axis:]``, zeros) and
    ``mean_subtraction/t`` (shape ``(1,)``, 0), neither needing a gradient; each ``forward()``
    with ``update_running_mean`` updates them (see ``F.mean_subtraction``). ``fix_parameters``
    does nothing, as in nnabla.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.parametric_functions as PF
        >>> nn.clear_parameters()
        >>> x = nn.Variable.from_numpy_array(np.array([[1.0, 2.0], [3.0, 6.0]]))
        >>> y = PF.mean_subtraction(x, name="pre")
        >>> y.forward()
        >>> for k, v in nn.get_parameters(grad_only=False).items():
        ...     print(k, v.d)
        pre/mean_subtraction/mean [2. 4.]
        pre/mean_subtraction/t [1.]
        >>> nn.clear_parameters()
    """
    from .parameter import get_parameter_or_create

    if len(inp.shape) < base_axis:
        raise ValueError(
            f"nnabla PF.mean_subtraction: base_axis={base_axis!r} exceeds the dimensions of an "
            f"input of shape {tuple(inp.shape)}"
        )
    shape = tuple(int(s) for s in inp.shape[base_axis:])
    mean = get_parameter_or_create("mean", shape, np.zeros(shape, np.float32), False)
    t = get_parameter_or_create("t", (1,), np.zeros((1,), np.float32), False)
    return _functions().mean_subtraction(inp, mean, t, base_axis, update_running_mean)


@parametric_function_api("spectral-norm")
def spectral_norm(
    w: Any,
    dim: int = 0,
    itr: int = 1,
    eps: float = 1e-12,
    test: bool = False,
    u_init: Any = None,
    fix_parameters: bool = True,
) -> Any:
    """nnabla's ``PF.spectral_norm``: ``F.spectral_norm(w, u, dim, itr, eps, test)`` with the
    parameter ``spectral-norm/u`` of shape ``(w.shape[dim],)`` (no gradient; standard normal
    draws from the generator ``PF.affine``/``PF.convolution`` draw from unless ``u_init``),
    which each ``forward()`` updates unless ``test``. Usually passed as ``apply_w``
    (``PF.convolution(x, 64, (3, 3), apply_w=lambda w: PF.spectral_norm(w, dim=0))``);
    ``fix_parameters`` does nothing, as in nnabla.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.parametric_functions as PF
        >>> nn.clear_parameters()
        >>> w = nn.Variable.from_numpy_array(np.array([[3.0, 0.0], [0.0, 1.0]]), need_grad=True)
        >>> y = PF.spectral_norm(w, u_init=np.array([1.0, 0.0], np.float32), name="sn")
        >>> y.forward()
        >>> np.round(y.d, 4), sorted(nn.get_parameters(grad_only=False))
        (array([[1.    , 0.    ],
               [0.    , 0.3333]], dtype=float32), ['sn/spectral-norm/u'])
        >>> nn.clear_parameters()
    """
    from gradhub_nn_ops.parametric import NormalInitializer

    from .parameter import get_parameter_or_create

    nd = len(w.shape)
    if not isinstance(dim, int) or isinstance(dim, bool) or not 0 <= dim < nd:
        raise ValueError(
            f"nnabla PF.spectral_norm: dim={dim!r} is out of range for a weight of shape "
            f"{tuple(w.shape)} (from 0 to {nd - 1})"
        )
    if u_init is None:
        u_init = NormalInitializer()
    u = get_parameter_or_create("u", (int(w.shape[dim]),), u_init, False, False)
    return _functions().spectral_norm(w, u, dim=dim, itr=itr, eps=eps, test=test)


def _glorot_concat(
    rng: Any, isz: int, hsz: int, shape_ih: tuple[int, ...], shape_hh: tuple[int, ...]
) -> Any:
    """nnabla's initial recurrent weights: the input part uniform in the Glorot limits of
    ``(isz, hsz)``, then the hidden part in those of ``(hsz, hsz)`` (drawn in that order),
    concatenated on the last axis."""
    from gradhub_nn_ops.parametric import UniformInitializer, calc_uniform_lim_glorot

    w_ih = UniformInitializer(calc_uniform_lim_glorot(isz, hsz), rng=rng)(shape_ih)
    w_hh = UniformInitializer(calc_uniform_lim_glorot(hsz, hsz), rng=rng)(shape_hh)
    return np.concatenate((w_ih, w_hh), axis=len(shape_ih) - 1)


def _recurrent_params(
    where: str,
    gates: tuple[int, ...],
    bias_gates: tuple[int, ...],
    x: Any,
    h: Any,
    w0_init: Any,
    w_init: Any,
    b_init: Any,
    bidirectional: bool,
    rng: Any,
    with_bias: bool,
    fix_parameters: bool,
    draw_always: bool,
) -> tuple[Any, Any, Any, int]:
    """The parameters ``weight_l0``, ``weight`` (with more than one layer) and ``bias`` of
    nnabla's ``PF.lstm``/``PF.gru``/``PF.rnn`` in the current scope, and the number of layers
    (``h.shape[0]``, as nnabla's). ``draw_always``: ``PF.rnn`` draws the default initial
    weights at every call; ``PF.lstm``/``PF.gru`` only for parameters that do not exist."""
    from gradhub_nn_ops.parametric import ConstantInitializer

    from .parameter import get_parameter, get_parameter_or_create

    if type(w0_init) is int:
        raise ValueError(
            f"nnabla PF.{where}: w0_init is an int: arguments of the former LSTM function? "
            "(renamed PF.lstm_cell)"
        )
    if len(x.shape) != 3 or len(h.shape) != 4:
        raise ValueError(
            f"nnabla PF.{where}: x must have shape (T, B, I) and h (L, D, B, H), got "
            f"{tuple(x.shape)} and {tuple(h.shape)}"
        )
    isz, hsz, n_layers = int(x.shape[2]), int(h.shape[3]), int(h.shape[0])
    n_dir = 2 if bidirectional else 1

    def upper_init() -> Any:  # the initial weights of the layers above the first
        return _glorot_concat(
            rng,
            n_dir * hsz,
            hsz,
            (n_layers - 1, n_dir, *gates, hsz, n_dir * hsz),
            (n_layers - 1, n_dir, *gates, hsz, hsz),
        )

    w0 = None if draw_always else get_parameter("weight_l0")
    w = None if draw_always else get_parameter("weight")
    b = None if draw_always else get_parameter("bias")
    if w0 is None:
        if w0_init is None:
            w0_init = _glorot_concat(
                rng, isz, hsz, (n_dir, *gates, hsz, isz), (n_dir, *gates, hsz, hsz)
            )
        w0 = get_parameter_or_create(
            "weight_l0", (n_dir, *gates, hsz, isz + hsz), w0_init, True, not fix_parameters
        )
    else:
        w0 = w0.get_unlinked_variable(need_grad=not fix_parameters)
    if draw_always and w_init is None:
        w_init = upper_init()
    if n_layers > 1:
        if w is None:
            if w_init is None:
                w_init = upper_init()
            w = get_parameter_or_create(
                "weight",
                (n_layers - 1, n_dir, *gates, hsz, n_dir * hsz + hsz),
                w_init,
                True,
                not fix_parameters,
            )
        else:
            w = w.get_unlinked_variable(need_grad=not fix_parameters)
    else:
        w = None
    if with_bias:
        if b is None:
            b = get_parameter_or_create(
                "bias",
                (n_layers, n_dir, *bias_gates, hsz),
                ConstantInitializer(0.0) if b_init is None else b_init,
                True,
                not fix_parameters,
            )
        else:
            b = b.get_unlinked_variable(need_grad=not fix_parameters)
    else:
        b = None
    return w0, w, b, n_layers


@parametric_function_api("lstm")
def lstm(
    x: Any,
    h: Any,
    c: Any,
    w0_init: Any = None,
    w_init: Any = None,
    b_init: Any = None,
    num_layers: int = 1,
    dropout: float = 0.0,
    bidirectional: bool = False,
    training: bool = True,
    rng: Any = None,
    with_bias: bool = True,
    fix_parameters: bool = False,
) -> Any:
    """nnabla's ``PF.lstm``: ``F.lstm`` with the parameters ``lstm/weight_l0``
    ``(D, 4, H, I + H)``, ``lstm/weight`` ``(L - 1, D, 4, H, D H + H)`` (with more than one
    layer) and ``lstm/bias`` ``(L, D, 4, H)`` (zeros); the weights' input part is uniform in
    the Glorot limits of ``(I, H)`` (``(D H, H)`` above the first layer) and their hidden part
    in those of ``(H, H)``, drawn in nnabla's order from ``rng`` (or the generator of
    ``PF.affine``). As nnabla's, the number of layers is ``h.shape[0]`` (``num_layers`` is not
    read) and existing parameters are reused as they are. Returns ``(y, h_n, c_n)``.

    Example::

        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.parametric_functions as PF
        >>> nn.clear_parameters()
        >>> x, h, c = nn.Variable((5, 2, 3)), nn.Variable((2, 1, 2, 4)), nn.Variable((2, 1, 2, 4))
        >>> y, h_n, c_n = PF.lstm(x, h, c)
        >>> y.shape
        (5, 2, 4)
        >>> for k, v in nn.get_parameters().items():
        ...     print(k, v.shape)
        lstm/weight_l0 (1, 4, 4, 7)
        lstm/weight (1, 1, 4, 4, 8)
        lstm/bias (2, 1, 4, 4)
        >>> nn.clear_parameters()
    """
    w0, w, b, n_layers = _recurrent_params(
        "lstm",
        (4,),
        (4,),
        x,
        h,
        w0_init,
        w_init,
        b_init,
        bidirectional,
        rng,
        with_bias,
        fix_parameters,
        False,
    )
    return _functions().lstm(
        x,
        h,
        c,
        w0,
        w,
        b,
        num_layers=n_layers,
        dropout=dropout,
        bidirectional=bidirectional,
        training=training,
    )


@parametric_function_api("gru")
def gru(
    x: Any,
    h: Any,
    w0_init: Any = None,
    w_init: Any = None,
    b_init: Any = None,
    num_layers: int = 1,
    dropout: float = 0.0,
    bidirectional: bool = False,
    training: bool = True,
    rng: Any = None,
    with_bias: bool = True,
    fix_parameters: bool = False,
) -> Any:
    """nnabla's ``PF.gru``: ``F.gru`` with the parameters ``gru/weight_l0``
    ``(D, 3, H, I + H)``, ``gru/weight`` ``(L - 1, D, 3, H, D H + H)`` and ``gru/bias``
    ``(L, D, 4, H)``, initialized as :func:`lstm`'s; returns ``(y, h_n)``.

    Example::

        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.parametric_functions as PF
        >>> nn.clear_parameters()
        >>> y, h_n = PF.gru(nn.Variable((5, 2, 3)), nn.Variable((1, 2, 2, 4)), bidirectional=True)
        >>> y.shape, [(k, v.shape) for k, v in nn.get_parameters().items()]
        ((5, 2, 8), [('gru/weight_l0', (2, 3, 4, 7)), ('gru/bias', (1, 2, 4, 4))])
        >>> nn.clear_parameters()
    """
    w0, w, b, n_layers = _recurrent_params(
        "gru",
        (3,),
        (4,),
        x,
        h,
        w0_init,
        w_init,
        b_init,
        bidirectional,
        rng,
        with_bias,
        fix_parameters,
        False,
    )
    return _functions().gru(
        x,
        h,
        w0,
        w,
        b,
        num_layers=n_layers,
        dropout=dropout,
        bidirectional=bidirectional,
        training=training,
    )


@parametric_function_api("rnn")
def rnn(
    x: Any,
    h: Any,
    w0_init: Any = None,
    w_init: Any = None,
    b_init: Any = None,
    num_layers: int = 1,
    nonlinearity: str = "tanh",
    dropout: float = 0.0,
    bidirectional: bool = False,
    training: bool = True,
    rng: Any = None,
    with_bias: bool = True,
    fix_parameters: bool = False,
) -> Any:
    """nnabla's ``PF.rnn``: ``F.rnn`` with the parameters ``rnn/weight_l0`` ``(D, H, I + H)``,
    ``rnn/weight`` ``(L - 1, D, H, D H + H)`` and ``rnn/bias`` ``(L, D, H)``, initialized as
    :func:`lstm`'s, except that, as nnabla's, the default initial weights are drawn at every
    call (also when the parameters exist); returns ``(y, h_n)``.

    Example::

        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.parametric_functions as PF
        >>> nn.clear_parameters()
        >>> y, h_n = PF.rnn(nn.Variable((5, 2, 3)), nn.Variable((1, 1, 2, 4)), nonlinearity="relu")
        >>> y.shape, [(k, v.shape) for k, v in nn.get_parameters().items()]
        ((5, 2, 4), [('rnn/weight_l0', (1, 4, 7)), ('rnn/bias', (1, 1, 4))])
        >>> nn.clear_parameters()
    """
    w0, w, b, n_layers = _recurrent_params(
        "rnn",
        (),
        (),
        x,
        h,
        w0_init,
        w_init,
        b_init,
        bidirectional,
        rng,
        with_bias,
        fix_parameters,
        True,
    )
    return _functions().rnn(
        x,
        h,
        w0,
        w,
        b,
        num_layers=n_layers,
        nonlinearity=nonlinearity,
        dropout=dropout,
        bidirectional=bidirectional,
        training=training,
    )


def _quantized_wb(
    w_shape: tuple[int, ...],
    b_shape: tuple[int, ...],
    w_init: Any,
    b_init: Any,
    fix_parameters: bool,
    with_bias: bool,
    quant_w: Callable[[Any, Any], Any] | None,
    quant_b: Callable[[Any, Any], Any] | None,
) -> tuple[Any, Any]:
    """nnabla's quantized (or pruned) weight and bias: the float parameters ``W`` and ``b``,
    and, for each one ``quant_w``/``quant_b`` transforms, ``W_q``/``b_q`` (no gradient,
    created with the same initializers, so drawing again) that each execution of the
    transformation overwrites; in nnabla's order of creation ``W``, ``W_q``, ``b``, ``b_q``.
    Returns the weight and bias the layer uses."""
    from gradhub_nn_ops.parametric import ConstantInitializer

    from .parameter import get_parameter_or_create

    w = get_parameter_or_create("W", w_shape, w_init, True, not fix_parameters)
    real_w = w
    if quant_w is not None:
        w_q = get_parameter_or_create("W_q", w_shape, w_init, False)
        real_w = quant_w(w, w_q)
        real_w.persistent = True
    real_b = None
    if with_bias:
        if b_init is None:
            b_init = ConstantInitializer(0.0)
        b = get_parameter_or_create("b", b_shape, b_init, True, not fix_parameters)
        real_b = b
        if quant_b is not None:
            b_q = get_parameter_or_create("b_q", b_shape, b_init, False)
            real_b = quant_b(b, b_q)
            real_b.persistent = True
    return real_w, real_b


def _fixed_point(quantize: bool, sign: bool, n: int, delta: float, fine: bool) -> Any:
    if not quantize:
        return None
    F = _functions()
    return lambda v, out: F._fixed_point_quantize(v, sign, n, delta, True, fine, out)


def _pruning(prune: bool, rate: float) -> Any:
    if not prune:
        return None
    F = _functions()
    return lambda v, out: F._prune(v, rate, out)


def _quantized_affine(
    inp: Any,
    n_outmaps: Any,
    base_axis: int,
    w_init: Any,
    b_init: Any,
    fix_parameters: bool,
    rng: Any,
    with_bias: bool,
    quant_w: Callable[[], Any],
    quant_b: Callable[[], Any],
) -> Any:
    """``F.affine`` with the parameters of :func:`_quantized_wb` (``W`` Glorot uniform as
    ``PF.affine``'s); ``quant_w``/``quant_b`` make the transformations (after ``W``'s
    initializer, as nnabla's)."""
    from gradhub_nn_ops.parametric import UniformInitializer, calc_uniform_lim_glorot

    w_shape, b_shape, glorot = _affine_shapes(inp, n_outmaps, base_axis)
    if w_init is None:
        w_init = UniformInitializer(calc_uniform_lim_glorot(*glorot), rng=rng)
    w, b = _quantized_wb(
        w_shape,
        b_shape,
        w_init,
        b_init,
        fix_parameters,
        with_bias,
        quant_w(),
        quant_b(),
    )
    return _functions().affine(inp, w, b, base_axis)


def _quantized_convolution(
    pf: str,
    inp: Any,
    outmaps: int,
    kernel: Any,
    pad: Any,
    stride: Any,
    dilation: Any,
    group: int,
    channel_last: bool,
    w_init: Any,
    b_init: Any,
    base_axis: int,
    fix_parameters: bool,
    rng: Any,
    with_bias: bool,
    quant_w: Callable[[], Any],
    quant_b: Callable[[], Any],
    channel_last_ok: bool = False,
) -> Any:
    """``F.convolution`` with the parameters of :func:`_quantized_wb` (``W``
    ``(outmaps, inmaps // group, *kernel)``, ``(outmaps, *kernel, inmaps // group)``
    channel-last; Glorot uniform of ``(inmaps, outmaps, kernel)``). ``channel_last=True``
    raises ``NotImplementedError`` unless ``channel_last_ok`` (nnabla's fixed-point and pruned
    layers give ``W`` and ``W_q`` different layouts there); ``pf`` names the public function
    in the errors."""
    from gradhub_nn_ops.parametric import UniformInitializer, calc_uniform_lim_glorot

    if channel_last and not channel_last_ok:
        raise NotImplementedError(
            f"nnabla PF.{pf}: channel_last=True is not supported (see docs/migration-nnabla.md)"
        )
    kern = tuple(int(k) for k in kernel)
    if isinstance(group, bool) or not isinstance(group, (int, np.integer)) or group < 1:
        raise ValueError(f"nnabla PF.{pf}: group must be a positive int, got {group!r}")
    channels = int(inp.shape[-1] if channel_last else inp.shape[base_axis])
    filt = (*kern, channels // group) if channel_last else (channels // group, *kern)
    if w_init is None:
        w_init = UniformInitializer(calc_uniform_lim_glorot(channels, outmaps, kern), rng=rng)
    w, b = _quantized_wb(
        (int(outmaps), *filt),
        (int(outmaps),),
        w_init,
        b_init,
        fix_parameters,
        with_bias,
        quant_w(),
        quant_b(),
    )
    return _functions().convolution(
        inp, w, b, base_axis, pad, stride, dilation, group, channel_last
    )


@parametric_function_api("fp_quantized_affine")
def fixed_point_quantized_affine(
    inp: Any,
    n_outmaps: Any,
    base_axis: int = 1,
    w_init: Any = None,
    b_init: Any = None,
    fix_parameters: bool = False,
    rng: Any = None,
    with_bias: bool = True,
    quantize_w: bool = True,
    sign_w: bool = True,
    n_w: int = 8,
    delta_w: float = 2**-4,
    ste_fine_grained_w: bool = True,
    quantize_b: bool = True,
    sign_b: bool = True,
    n_b: int = 8,
    delta_b: float = 2**-4,
    ste_fine_grained_b: bool = True,
) -> Any:
    """nnabla's ``PF.fixed_point_quantized_affine``: ``F.affine`` with the weight and bias
    quantized by ``F.fixed_point_quantize`` (straight-through gradients into the float
    parameters ``fp_quantized_affine/W`` and ``/b``, Glorot uniform and zeros as ``PF.affine``'s);
    the quantized values are kept in ``fp_quantized_affine/W_q`` and ``/b_q`` (no gradient,
    written at each ``forward()``).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.parametric_functions as PF
        >>> nn.clear_parameters()
        >>> y = PF.fixed_point_quantized_affine(nn.Variable((2, 3)), 4, name="q")
        >>> y.forward()
        >>> sorted(nn.get_parameters())
        ['q/fp_quantized_affine/W', 'q/fp_quantized_affine/b']
        >>> for k, v in nn.get_parameters(grad_only=False).items():
        ...     print(k, v.shape, v.need_grad)
        q/fp_quantized_affine/W (3, 4) True
        q/fp_quantized_affine/W_q (3, 4) False
        q/fp_quantized_affine/b (4,) True
        q/fp_quantized_affine/b_q (4,) False
        >>> w = nn.get_parameters(grad_only=False)["q/fp_quantized_affine/W_q"].d
        >>> bool(np.all(w * 16 == np.round(w * 16)))  # multiples of delta_w = 1/16
        True
        >>> nn.clear_parameters()
    """
    return _quantized_affine(
        inp,
        n_outmaps,
        base_axis,
        w_init,
        b_init,
        fix_parameters,
        rng,
        with_bias,
        lambda: _fixed_point(quantize_w, sign_w, n_w, delta_w, ste_fine_grained_w),
        lambda: _fixed_point(quantize_b, sign_b, n_b, delta_b, ste_fine_grained_b),
    )


@parametric_function_api("fp_quantized_conv")
def fixed_point_quantized_convolution(
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
    quantize_w: bool = True,
    sign_w: bool = True,
    n_w: int = 8,
    delta_w: float = 2**-4,
    ste_fine_grained_w: bool = True,
    quantize_b: bool = True,
    sign_b: bool = True,
    n_b: int = 8,
    delta_b: float = 2**-4,
    ste_fine_grained_b: bool = True,
) -> Any:
    """nnabla's ``PF.fixed_point_quantized_convolution``: ``F.convolution`` with the weight
    ``fp_quantized_conv/W`` ``(outmaps, inmaps // group, *kernel)`` (Glorot uniform of
    ``(inmaps, outmaps, kernel)``) and the bias ``/b`` quantized as in
    :func:`fixed_point_quantized_affine` (``/W_q``, ``/b_q``). ``channel_last=True`` raises
    ``NotImplementedError``.

    Example::

        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.parametric_functions as PF
        >>> nn.clear_parameters()
        >>> y = PF.fixed_point_quantized_convolution(nn.Variable((2, 3, 5, 5)), 4, (3, 3))
        >>> y.shape, [(k, v.shape) for k, v in nn.get_parameters().items()]
        ((2, 4, 3, 3), [('fp_quantized_conv/W', (4, 3, 3, 3)), ('fp_quantized_conv/b', (4,))])
        >>> nn.clear_parameters()
    """
    return _quantized_convolution(
        "fixed_point_quantized_convolution",
        inp,
        outmaps,
        kernel,
        pad,
        stride,
        dilation,
        group,
        channel_last,
        w_init,
        b_init,
        base_axis,
        fix_parameters,
        rng,
        with_bias,
        lambda: _fixed_point(quantize_w, sign_w, n_w, delta_w, ste_fine_grained_w),
        lambda: _fixed_point(quantize_b, sign_b, n_b, delta_b, ste_fine_grained_b),
    )


def _binary_layer(
    w_shape: tuple[int, ...],
    out_shape: tuple[int, ...],
    glorot: tuple[Any, ...],
    w_init: Any,
    wb_init: Any,
    b_init: Any,
    fix_parameters: bool,
    rng: Any,
    with_bias: bool,
    scaled: bool,
    companion: str = "Wb",
) -> tuple[Any, Any, Any, Any]:
    """nnabla's parameters of the binary layers, created in its order: ``W`` (Glorot uniform),
    ``Wb`` (no gradient; drawn from the same Glorot limits unless ``wb_init``), ``alpha``
    (BinaryWeight only; no gradient, zeros) and ``b`` (zeros). ``companion`` renames ``Wb``
    (the INQ layers' indicator ``I``, created with the ``wb_init`` they give)."""
    from gradhub_nn_ops.parametric import (
        ConstantInitializer,
        UniformInitializer,
        calc_uniform_lim_glorot,
    )

    from .parameter import get_parameter_or_create

    if w_init is None:
        w_init = UniformInitializer(calc_uniform_lim_glorot(*glorot), rng=rng)
    if wb_init is None:
        wb_init = UniformInitializer(calc_uniform_lim_glorot(*glorot), rng=rng)
    if b_init is None:
        b_init = ConstantInitializer(0.0)
    w = get_parameter_or_create("W", w_shape, w_init, True, not fix_parameters)
    wb = get_parameter_or_create(companion, w_shape, wb_init, False)
    alpha = None
    if scaled:
        alpha = get_parameter_or_create("alpha", out_shape, ConstantInitializer(0.0), False)
    b = None
    if with_bias:
        b = get_parameter_or_create("b", out_shape, b_init, True, not fix_parameters)
    return w, wb, alpha, b


_Shapes = tuple[tuple[int, ...], tuple[int, ...], tuple[Any, ...]]


def _affine_shapes(inp: Any, n_outmaps: Any, base_axis: int) -> _Shapes:
    """The weight's shape ``(inmaps, *n_outmaps)``, the bias' and the arguments of its Glorot
    limit ``(inmaps, prod(n_outmaps))`` of nnabla's affine layers."""
    outs = [int(v) for v in n_outmaps] if hasattr(n_outmaps, "__iter__") else [int(n_outmaps)]
    inmaps = int(np.prod(inp.shape[base_axis:]))
    return (inmaps, *outs), tuple(outs), (inmaps, int(np.prod(outs)))


def _conv_shapes(inp: Any, outmaps: int, kernel: Any, base_axis: int) -> _Shapes:
    """The weight's shape ``(outmaps, inmaps, *kernel)`` (not divided by a group), the bias'
    and the arguments of its Glorot limit ``(inmaps, outmaps, kernel)``."""
    kern = tuple(int(k) for k in kernel)
    channels = int(inp.shape[base_axis])
    return (int(outmaps), channels, *kern), (int(outmaps),), (channels, int(outmaps), kern)


@parametric_function_api("bicon_affine")
def binary_connect_affine(
    inp: Any,
    n_outmaps: Any,
    base_axis: int = 1,
    quantize_zero_to: float = 1.0,
    w_init: Any = None,
    wb_init: Any = None,
    b_init: Any = None,
    fix_parameters: bool = False,
    rng: Any = None,
    with_bias: bool = True,
) -> Any:
    """nnabla's ``PF.binary_connect_affine``: ``F.binary_connect_affine`` with the parameters
    ``bicon_affine/W`` ``(inmaps, *n_outmaps)`` (Glorot uniform), ``bicon_affine/Wb`` (its
    binary values, no gradient; created with a second Glorot draw, as nnabla's) and
    ``bicon_affine/b`` (zeros).

    Example::

        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.parametric_functions as PF
        >>> nn.clear_parameters()
        >>> y = PF.binary_connect_affine(nn.Variable((2, 3)), 4)
        >>> y.forward()
        >>> sorted(abs(nn.get_parameters(grad_only=False)["bicon_affine/Wb"].d.ravel()).tolist())[0]
        1.0
        >>> nn.clear_parameters()
    """
    w_shape, out_shape, glorot = _affine_shapes(inp, n_outmaps, base_axis)
    w, wb, _, b = _binary_layer(
        w_shape,
        out_shape,
        glorot,
        w_init,
        wb_init,
        b_init,
        fix_parameters,
        rng,
        with_bias,
        False,
    )
    return _functions().binary_connect_affine(inp, w, wb, b, base_axis, quantize_zero_to)


@parametric_function_api("bicon_conv")
def binary_connect_convolution(
    inp: Any,
    outmaps: int,
    kernel: Any,
    pad: Any = None,
    stride: Any = None,
    dilation: Any = None,
    group: int = 1,
    quantize_zero_to: float = 1.0,
    w_init: Any = None,
    wb_init: Any = None,
    b_init: Any = None,
    base_axis: int = 1,
    fix_parameters: bool = False,
    rng: Any = None,
    with_bias: bool = True,
) -> Any:
    """nnabla's ``PF.binary_connect_convolution``: ``F.binary_connect_convolution`` with the
    parameters ``bicon_conv/W`` and ``bicon_conv/Wb`` ``(outmaps, inmaps, *kernel)`` (as
    nnabla's, the input channels are not divided by ``group``) and ``bicon_conv/b``."""
    w_shape, out_shape, glorot = _conv_shapes(inp, outmaps, kernel, base_axis)
    w, wb, _, b = _binary_layer(
        w_shape,
        out_shape,
        glorot,
        w_init,
        wb_init,
        b_init,
        fix_parameters,
        rng,
        with_bias,
        False,
    )
    return _functions().binary_connect_convolution(
        inp, w, wb, b, base_axis, pad, stride, dilation, group, quantize_zero_to
    )


@parametric_function_api("bwn_affine")
def binary_weight_affine(
    inp: Any,
    n_outmaps: Any,
    base_axis: int = 1,
    quantize_zero_to: float = 1.0,
    w_init: Any = None,
    wb_init: Any = None,
    b_init: Any = None,
    fix_parameters: bool = False,
    rng: Any = None,
    with_bias: bool = True,
) -> Any:
    """nnabla's ``PF.binary_weight_affine``: ``F.binary_weight_affine`` with the parameters
    ``bwn_affine/W``, ``bwn_affine/Wb`` (as :func:`binary_connect_affine`'s),
    ``bwn_affine/alpha`` (``n_outmaps``; no gradient, written by each execution) and
    ``bwn_affine/b``."""
    w_shape, out_shape, glorot = _affine_shapes(inp, n_outmaps, base_axis)
    w, wb, alpha, b = _binary_layer(
        w_shape,
        out_shape,
        glorot,
        w_init,
        wb_init,
        b_init,
        fix_parameters,
        rng,
        with_bias,
        True,
    )
    return _functions().binary_weight_affine(inp, w, wb, alpha, b, base_axis, quantize_zero_to)


@parametric_function_api("bwn_conv")
def binary_weight_convolution(
    inp: Any,
    outmaps: int,
    kernel: Any,
    pad: Any = None,
    stride: Any = None,
    dilation: Any = None,
    group: int = 1,
    quantize_zero_to: float = 1.0,
    w_init: Any = None,
    wb_init: Any = None,
    b_init: Any = None,
    base_axis: int = 1,
    fix_parameters: bool = False,
    rng: Any = None,
    with_bias: bool = True,
) -> Any:
    """nnabla's ``PF.binary_weight_convolution``: ``F.binary_weight_convolution`` with the
    parameters of :func:`binary_connect_convolution` (scope ``bwn_conv``) and
    ``bwn_conv/alpha`` ``(outmaps,)``."""
    w_shape, out_shape, glorot = _conv_shapes(inp, outmaps, kernel, base_axis)
    w, wb, alpha, b = _binary_layer(
        w_shape,
        out_shape,
        glorot,
        w_init,
        wb_init,
        b_init,
        fix_parameters,
        rng,
        with_bias,
        True,
    )
    return _functions().binary_weight_convolution(
        inp, w, wb, alpha, b, base_axis, pad, stride, dilation, group, quantize_zero_to
    )


@parametric_function_api("pruned_affine")
def pruned_affine(
    inp: Any,
    n_outmaps: Any,
    base_axis: int = 1,
    w_init: Any = None,
    b_init: Any = None,
    fix_parameters: bool = False,
    rng: Any = None,
    with_bias: bool = True,
    prune_w: bool = True,
    rate_w: float = 0.9,
    prune_b: bool = True,
    rate_b: float = 0.9,
) -> Any:
    """nnabla's ``PF.pruned_affine``: ``F.affine`` with the weight and bias pruned by
    ``F.prune`` (rates ``rate_w``, ``rate_b``; straight-through gradients into the float
    parameters ``pruned_affine/W`` and ``/b``, initialized as ``PF.affine``'s); the pruned
    values are kept in ``pruned_affine/W_q`` and ``/b_q`` (no gradient, written at each
    ``forward()``).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.parametric_functions as PF
        >>> nn.clear_parameters()
        >>> y = PF.pruned_affine(nn.Variable((2, 10)), 10, rate_w=0.5)
        >>> y.forward()
        >>> w_q = nn.get_parameters(grad_only=False)["pruned_affine/W_q"].d
        >>> int((w_q == 0).sum())  # half of the 100 weights
        49
        >>> nn.clear_parameters()
    """
    return _quantized_affine(
        inp,
        n_outmaps,
        base_axis,
        w_init,
        b_init,
        fix_parameters,
        rng,
        with_bias,
        lambda: _pruning(prune_w, rate_w),
        lambda: _pruning(prune_b, rate_b),
    )


@parametric_function_api("pruned_conv")
def pruned_convolution(
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
    prune_w: bool = True,
    rate_w: float = 0.9,
    prune_b: bool = True,
    rate_b: float = 0.9,
) -> Any:
    """nnabla's ``PF.pruned_convolution``: ``F.convolution`` with the weight
    ``pruned_conv/W`` ``(outmaps, inmaps // group, *kernel)`` (Glorot uniform of ``(inmaps,
    outmaps, kernel)``) and the bias ``/b`` pruned as in :func:`pruned_affine` (``/W_q``,
    ``/b_q``). ``channel_last=True`` raises ``NotImplementedError``."""
    return _quantized_convolution(
        "pruned_convolution",
        inp,
        outmaps,
        kernel,
        pad,
        stride,
        dilation,
        group,
        channel_last,
        w_init,
        b_init,
        base_axis,
        fix_parameters,
        rng,
        with_bias,
        lambda: _pruning(prune_w, rate_w),
        lambda: _pruning(prune_b, rate_b),
    )


@parametric_function_api("multi_head_attention")
def multi_head_attention(
    query: Any,
    key: Any,
    value: Any,
    num_heads: int = 12,
    dropout: float = 0.0,
    k_embed_dim: int | None = None,
    v_embed_dim: int | None = None,
    out_dim: int | None = None,
    rng: Any = None,
    with_bias: bool = True,
    add_attn_bias: bool = False,
    additive_mask: Any = None,
    key_padding_mask: Any = None,
    fix_parameters: bool = False,
    param_init: dict[str, Any] | None = None,
) -> tuple[Any, Any]:
    """nnabla's ``PF.multi_head_attention``: ``F.multi_head_attention`` with the parameters
    ``multi_head_attention/q_weight`` ``(D_q, E)``, ``k_weight`` ``(D_k, E)``, ``v_weight``
    ``(D_v, E_v)``, ``out_weight`` ``(E_v, E_out)`` (Glorot uniform, drawn in that order),
    ``q_bias``, ``k_bias``, ``v_bias``, ``out_bias`` (zeros; with ``with_bias``) and, with
    ``add_attn_bias``, ``attn_bias_k`` ``(1, 1, E)`` and ``attn_bias_v`` ``(1, 1, E_v)``
    (Glorot uniform of ``(E, 1)``); ``E`` is ``k_embed_dim`` or ``D_q``, ``E_v``
    ``v_embed_dim`` or ``D_v``, ``E_out`` ``out_dim`` or ``E_v``; ``param_init`` (a dict by
    parameter name) replaces initializers. Returns ``(y, weights)``.

    Example::

        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.parametric_functions as PF
        >>> nn.clear_parameters()
        >>> q, kv = nn.Variable((3, 2, 8)), nn.Variable((5, 2, 8))
        >>> y, w = PF.multi_head_attention(q, kv, kv, num_heads=2)
        >>> y.shape, w.shape, len(nn.get_parameters())
        ((3, 2, 8), (4, 3, 5), 8)
        >>> nn.clear_parameters()
    """
    from gradhub_nn_ops.parametric import (
        ConstantInitializer,
        UniformInitializer,
        calc_uniform_lim_glorot,
    )

    from .parameter import get_parameter_or_create

    d_q, d_k, d_v = int(query.shape[2]), int(key.shape[2]), int(value.shape[2])
    e_k = d_q if k_embed_dim is None else int(k_embed_dim)
    e_v = d_v if v_embed_dim is None else int(v_embed_dim)
    e_out = e_v if out_dim is None else int(out_dim)
    init = {} if param_init is None else dict(param_init)

    def glorot(a: int, b: int) -> Any:
        return UniformInitializer(calc_uniform_lim_glorot(a, b), rng=rng)

    def param(name: str, shape: tuple[int, ...], default: Any) -> Any:
        return get_parameter_or_create(
            name, shape, init.get(name, default), True, not fix_parameters
        )

    # (nnabla makes the default initializers of q, k, v first, then the out projection's)
    qw = param("q_weight", (d_q, e_k), glorot(d_q, e_k))
    kw = param("k_weight", (d_k, e_k), glorot(d_k, e_k))
    vw = param("v_weight", (d_v, e_v), glorot(d_v, e_v))
    ow = param("out_weight", (e_v, e_out), glorot(e_v, e_out))
    qb = kb = vb = ob = None
    if with_bias:
        qb = param("q_bias", (e_k,), ConstantInitializer(0.0))
        kb = param("k_bias", (e_k,), ConstantInitializer(0.0))
        vb = param("v_bias", (e_v,), ConstantInitializer(0.0))
        ob = param("out_bias", (e_out,), ConstantInitializer(0.0))
    abk = abv = None
    if add_attn_bias:
        abk = param("attn_bias_k", (1, 1, e_k), glorot(e_k, 1))
        abv = param("attn_bias_v", (1, 1, e_v), glorot(e_v, 1))
    return _functions().multi_head_attention(
        query,
        key,
        value,
        num_heads,
        qw,
        kw,
        vw,
        ow,
        qb,
        kb,
        vb,
        ob,
        abk,
        abv,
        dropout,
        additive_mask=additive_mask,
        key_padding_mask=key_padding_mask,
    )


def _residual_norm(x: Any, y: Any, dropout: float, name: str) -> Any:
    """``layer_normalization(x + dropout(y))`` over the last axis (nnabla's transformer
    sub-layer)."""
    if dropout > 0:
        y = _functions().dropout(y, dropout)
    return __getattr__("layer_normalization")(x + y, batch_axis=(0, 1), name=name)


def _feed_forward(
    x: Any, dim_feedforward: int, embed_dim: int, dropout: float, activation: Any, pre: str
) -> Any:
    affine = __getattr__("affine")
    h = activation(affine(x, dim_feedforward, base_axis=2, name=f"{pre}_affine1"))
    if dropout > 0:
        h = _functions().dropout(h, dropout)
    return affine(h, embed_dim, base_axis=2, name=f"{pre}_affine2")


@parametric_function_api("transformer_encode")
def transformer_encode(
    src: Any,
    embed_dim: int,
    num_heads: int,
    dim_feedforward: int = 2048,
    dropout: float = 0.1,
    activation: Any = None,
    src_additive_mask: Any = None,
    src_key_padding_mask: Any = None,
    rng: Any = None,
    add_attn_bias: bool = False,
    fix_parameters: bool = False,
) -> Any:
    """nnabla's ``PF.transformer_encode``: one post-norm encoder layer on ``src``
    ``(L_S, B, E)``: ``x = LN1(src + dropout(self_attention(src)))``, then
    ``LN2(x + dropout(affine2(dropout(activation(affine1(x))))))`` (``activation`` default
    ``F.relu``), with the parameters ``src_self_attn/multi_head_attention/...``,
    ``enc_affine1/affine/...`` ``(E, dim_feedforward)``, ``enc_affine2/affine/...``,
    ``enc_layer_norm1/layer_normalization/...`` and ``enc_layer_norm2/...``. As nnabla's, the
    initial weights are drawn from the generator of ``PF.affine`` (``rng`` is not used). With
    ``dropout > 0`` the masks are gradhub's, not nnabla's draws.

    Example::

        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.parametric_functions as PF
        >>> nn.clear_parameters()
        >>> y = PF.transformer_encode(nn.Variable((5, 2, 8)), 8, 2, dim_feedforward=16, dropout=0.0)
        >>> y.shape, len(nn.get_parameters())
        ((5, 2, 8), 16)
        >>> nn.clear_parameters()
    """
    F = _functions()
    act = F.relu if activation is None else activation
    attn = multi_head_attention(
        src,
        src,
        src,
        num_heads=num_heads,
        add_attn_bias=add_attn_bias,
        additive_mask=src_additive_mask,
        key_padding_mask=src_key_padding_mask,
        name="src_self_attn",
    )[0]
    x = _residual_norm(src, attn, dropout, "enc_layer_norm1")
    ff = _feed_forward(x, dim_feedforward, embed_dim, dropout, act, "enc")
    return _residual_norm(x, ff, dropout, "enc_layer_norm2")


@parametric_function_api("transformer_decode")
def transformer_decode(
    tgt: Any,
    memory: Any,
    embed_dim: int,
    num_heads: int,
    dim_feedforward: int = 2048,
    dropout: float = 0.1,
    activation: Any = None,
    tgt_additive_mask: Any = None,
    memory_additive_mask: Any = None,
    tgt_key_padding_mask: Any = None,
    memory_key_padding_mask: Any = None,
    rng: Any = None,
    add_attn_bias: bool = False,
    fix_parameters: bool = False,
) -> Any:
    """nnabla's ``PF.transformer_decode``: one post-norm decoder layer: the self-attention of
    ``tgt`` (``tgt_self_attn``, ``dec_layer_norm1``), the attention to ``memory``
    (``tgt_memory_attn``, ``dec_layer_norm2``) and the feed-forward block (``dec_affine1``,
    ``dec_affine2``, ``dec_layer_norm3``), each as in :func:`transformer_encode`."""
    F = _functions()
    act = F.relu if activation is None else activation
    attn = multi_head_attention(
        tgt,
        tgt,
        tgt,
        num_heads=num_heads,
        add_attn_bias=add_attn_bias,
        additive_mask=tgt_additive_mask,
        key_padding_mask=tgt_key_padding_mask,
        name="tgt_self_attn",
    )[0]
    x = _residual_norm(tgt, attn, dropout, "dec_layer_norm1")
    attn = multi_head_attention(
        x,
        memory,
        memory,
        num_heads=num_heads,
        add_attn_bias=add_attn_bias,
        additive_mask=memory_additive_mask,
        key_padding_mask=memory_key_padding_mask,
        name="tgt_memory_attn",
    )[0]
    x = _residual_norm(x, attn, dropout, "dec_layer_norm2")
    ff = _feed_forward(x, dim_feedforward, embed_dim, dropout, act, "dec")
    return _residual_norm(x, ff, dropout, "dec_layer_norm3")


@parametric_function_api("transformer")
def transformer(
    src: Any,
    tgt: Any,
    embed_dim: int = 512,
    num_heads: int = 8,
    num_encoder_layers: int = 6,
    num_decoder_layers: int = 6,
    dim_feedforward: int = 2048,
    dropout: float = 0.1,
    activation: Any = None,
    src_additive_mask: Any = None,
    tgt_additive_mask: Any = None,
    memory_additive_mask: Any = None,
    src_key_padding_mask: Any = None,
    tgt_key_padding_mask: Any = None,
    memory_key_padding_mask: Any = None,
    rng: Any = None,
    add_attn_bias: bool = False,
    fix_parameters: bool = False,
) -> Any:
    """nnabla's ``PF.transformer``: ``num_encoder_layers`` :func:`transformer_encode` layers
    on ``src`` (``encoder00``, ``encoder01``...) and ``num_decoder_layers``
    :func:`transformer_decode` layers on ``tgt`` and the encoder's output (``decoder00``...),
    all under the scope ``transformer``; ``src`` and ``tgt`` must have ``embed_dim`` features
    and the same batch size."""
    if int(src.shape[1]) != int(tgt.shape[1]):
        raise ValueError(
            f"nnabla PF.transformer: src {tuple(src.shape)} and tgt {tuple(tgt.shape)} must have "
            "the same batch size"
        )
    if int(src.shape[2]) != embed_dim or int(tgt.shape[2]) != embed_dim:
        raise ValueError(
            f"nnabla PF.transformer: src {tuple(src.shape)} and tgt {tuple(tgt.shape)} must have "
            f"embed_dim={embed_dim} features"
        )
    common = {
        "embed_dim": embed_dim,
        "num_heads": num_heads,
        "dim_feedforward": dim_feedforward,
        "dropout": dropout,
        "activation": activation,
        "rng": rng,
        "add_attn_bias": add_attn_bias,
        "fix_parameters": fix_parameters,
    }
    memory = src
    for i in range(num_encoder_layers):
        memory = transformer_encode(
            memory,
            src_additive_mask=src_additive_mask,
            src_key_padding_mask=src_key_padding_mask,
            name=f"encoder{i:02d}",
            **common,
        )
    out = tgt
    for i in range(num_decoder_layers):
        out = transformer_decode(
            out,
            memory,
            tgt_additive_mask=tgt_additive_mask,
            memory_additive_mask=memory_additive_mask,
            tgt_key_padding_mask=tgt_key_padding_mask,
            memory_key_padding_mask=memory_key_padding_mask,
            name=f"decoder{i:02d}",
            **common,
        )
    return out


@parametric_function_api("wn")
def weight_normalization(
    w: Any, dim: int = 0, eps: float = 1e-12, g_init: Any = None, fix_parameters: bool = False
) -> Any:
    r"""nnabla's ``PF.weight_normalization``: :math:`w_{WN} = g\, w / \sqrt{\sum w^2 +
    \epsilon}` (``F.weight_normalization``, the sum over every axis but ``dim``) with the learned
    scale ``wn/g`` of shape ``(w.shape[dim],)``, initialized as nnabla's
    ``WeightNormalizationScaleInitializer``: :math:`\sqrt{\sum w^2 + \epsilon}` of ``w``'s
    current data (so that :math:`w_{WN} = w` at first) unless ``g_init`` is given. Usually
    passed as ``apply_w`` (``PF.affine(x, 10, apply_w=lambda w: PF.weight_normalization(w,
    dim=1))``).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.parametric_functions as PF
        >>> nn.clear_parameters()
        >>> w = nn.Variable.from_numpy_array(np.array([[3.0, 0.0], [4.0, 2.0]]), need_grad=True)
        >>> y = PF.weight_normalization(w, dim=1, eps=0.0)
        >>> y.forward()
        >>> y.d, nn.get_parameters()["wn/g"].d
        (array([[3., 0.],
               [4., 2.]], dtype=float32), array([5., 2.], dtype=float32))
        >>> nn.clear_parameters()
    """
    from .parameter import get_parameter_or_create

    nd = len(w.shape)
    if not isinstance(dim, int) or isinstance(dim, bool) or not 0 <= dim < nd:
        raise ValueError(
            f"nnabla PF.weight_normalization: dim={dim!r} is out of range for a weight of shape "
            f"{tuple(w.shape)} (from 0 to {nd - 1})"
        )
    if g_init is None:
        axes = tuple(a for a in range(nd) if a != dim)
        data = host_array(w.d)
        g_init = np.sqrt(np.sum(data**2, axis=axes) + eps).astype(np.float32)
    g = get_parameter_or_create("g", (int(w.shape[dim]),), g_init, True, not fix_parameters)
    return _functions().weight_normalization(w, g, dim, eps)


@parametric_function_api("lstm")
def lstm_cell(
    x: Any,
    h: Any,
    c: Any,
    state_size: int,
    w_init: Any = None,
    b_init: Any = None,
    fix_parameters: bool = False,
) -> tuple[Any, Any]:
    r"""nnabla's ``PF.lstm_cell``: one LSTM step, returning ``(h_t, c_t)``.

    ``x`` of shape ``(batch, input_size)``, ``h`` and ``c`` of shape ``(batch, state_size)``;
    as nnabla's, ``[x, h]`` goes through ``PF.affine`` with the parameters ``lstm/affine/W``
    (``(input_size + state_size, 4, state_size)``, Glorot uniform unless ``w_init``) and
    ``lstm/affine/b`` (``(4, state_size)``, zeros unless ``b_init``), whose output is split into
    the gates :math:`i, o, f` and the candidate :math:`g` in that order:

    .. math::
        c_t = \sigma(f) c + \sigma(i) \tanh(g),\quad h_t = \sigma(o) \tanh(c_t)

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.parametric_functions as PF
        >>> nn.clear_parameters()
        >>> x, h, c = nn.Variable((2, 3)), nn.Variable((2, 4)), nn.Variable((2, 4))
        >>> h1, c1 = PF.lstm_cell(x, h, c, 4, name="cell")
        >>> h1.shape, c1.shape
        ((2, 4), (2, 4))
        >>> [(k, v.shape) for k, v in nn.get_parameters().items()]
        [('cell/lstm/affine/W', (7, 4, 4)), ('cell/lstm/affine/b', (4, 4))]
        >>> nn.clear_parameters()
    """
    F = _functions()
    xh = F.concatenate(x, h, axis=1)
    iofc = __getattr__("affine")(
        xh, (4, state_size), w_init=w_init, b_init=b_init, fix_parameters=fix_parameters
    )
    i_t, o_t, f_t, gate = F.split(iofc, axis=1)
    c_t = F.sigmoid(f_t) * c + F.sigmoid(i_t) * F.tanh(gate)
    h_t = F.sigmoid(o_t) * F.tanh(c_t)
    return h_t, c_t


class LSTMCell:
    """nnabla's ``PF.LSTMCell``: an LSTM cell holding its states ``h`` and ``c`` (Variables of
    shape ``(batch_size, state_size)``, zeros unless given); each call runs :func:`lstm_cell`
    under ``name``, keeps the new ``h`` and ``c`` and returns ``h``.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.parametric_functions as PF
        >>> nn.clear_parameters()
        >>> cell = PF.LSTMCell(2, 4, name="rnn")
        >>> h = cell(nn.Variable((2, 3)))
        >>> h = cell(nn.Variable((2, 3)))  # the same parameters, the states carried on
        >>> h.shape, sorted(nn.get_parameters())
        ((2, 4), ['rnn/lstm/affine/W', 'rnn/lstm/affine/b'])
        >>> nn.clear_parameters()
    """

    def __init__(
        self,
        batch_size: int,
        state_size: int,
        h: Any = None,
        c: Any = None,
        name: str | None = None,
    ) -> None:
        self.batch_size = batch_size
        self.state_size = state_size
        self.name = name
        self.h = h if h is not None else Variable((batch_size, state_size))
        self.c = c if c is not None else Variable((batch_size, state_size))
        if h is None:
            self.h.data.zero()
        if c is None:
            self.c.data.zero()

    def reset_state(self) -> None:
        """Set the states ``h`` and ``c`` to zeros."""
        self.h.data.zero()
        self.c.data.zero()

    def __call__(
        self, x: Any, w_init: Any = None, b_init: Any = None, fix_parameters: bool = False
    ) -> Any:
        """One step on ``x``: ``h, c = lstm_cell(x, h, c, state_size, ...)``; returns ``h``."""
        self.h, self.c = lstm_cell(
            x,
            self.h,
            self.c,
            self.state_size,
            w_init,
            b_init,
            fix_parameters=fix_parameters,
            name=self.name,
        )
        return self.h
