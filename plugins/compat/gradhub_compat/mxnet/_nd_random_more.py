"""mxnet 1.9.1's further random functions of ``mx.nd``: draws of the exponential, gamma,
Poisson, negative binomial and generalized negative binomial distributions and of random
integers (``random_*``, number parameters), per-element draws for NDArray parameters
(``sample_*``), and the densities ``random_pdf_*`` of drawn values, recorded by
``mx.autograd``.

The draws come from gradhub's shared generator (:func:`gradhub.random.generator`, reseeded by
``mx.random.seed``): seeded programs repeat their draws, but the numbers differ from mxnet's own
generator. The densities are compositions of registered gradhub functions (``log``, ``lgamma``,
``exp``...), so their gradients with respect to the sample and the parameters come from the
native engine and can be differentiated again; as mxnet, the discrete densities (Poisson,
negative binomial) pass a zero gradient to the sample and ``random_pdf_uniform`` does not test
whether the sample lies in ``[low, high)``.

Example::

    >>> import gradhub_compat.mxnet as mx
    >>> x = mx.nd.array([[0.0, 1.0]])
    >>> mx.nd.random_pdf_normal(x, mx.nd.array([0.0]), mx.nd.array([1.0])).asnumpy().round(4)
    array([[0.3989, 0.242 ]], dtype=float32)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import gradhub
import numpy as np
from gradhub.variable import Variable as NativeVariable

from .._common import call_native as _call
from .base import MXNetError
from .ndarray import NDArray, _ctx, _shape, refuse_traced

__all__ = [
    "random_exponential",
    "random_gamma",
    "random_generalized_negative_binomial",
    "random_negative_binomial",
    "random_pdf_dirichlet",
    "random_pdf_exponential",
    "random_pdf_gamma",
    "random_pdf_generalized_negative_binomial",
    "random_pdf_negative_binomial",
    "random_pdf_normal",
    "random_pdf_poisson",
    "random_pdf_uniform",
    "random_poisson",
    "random_randint",
    "sample_exponential",
    "sample_gamma",
    "sample_generalized_negative_binomial",
    "sample_negative_binomial",
    "sample_normal",
    "sample_poisson",
    "sample_uniform",
]

_FLOATS = ("float16", "float32", "float64")
_Sampler = Callable[[np.random.Generator, Sequence[Any], tuple[int, ...]], np.ndarray]

# -- samplers (numpy arrays of parameters broadcast to the output shape) ---------------------------


def _exponential(g: np.random.Generator, p: Sequence[Any], size: tuple[int, ...]) -> np.ndarray:
    return g.exponential(1.0 / np.asarray(p[0], dtype=np.float64), size)


def _gamma(g: np.random.Generator, p: Sequence[Any], size: tuple[int, ...]) -> np.ndarray:
    return g.gamma(p[0], p[1], size)


def _poisson(g: np.random.Generator, p: Sequence[Any], size: tuple[int, ...]) -> np.ndarray:
    return g.poisson(p[0], size).astype(np.float64)


def _negative_binomial(
    g: np.random.Generator, p: Sequence[Any], size: tuple[int, ...]
) -> np.ndarray:
    # failures before the k-th success, success probability p
    return g.negative_binomial(p[0], p[1], size).astype(np.float64)


def _generalized_negative_binomial(
    g: np.random.Generator, p: Sequence[Any], size: tuple[int, ...]
) -> np.ndarray:
    mu = np.broadcast_to(np.asarray(p[0], dtype=np.float64), size)
    alpha = np.broadcast_to(np.asarray(p[1], dtype=np.float64), size)
    lam = mu.copy()
    mixed = alpha > 0
    # a Poisson draw whose rate is Gamma(1 / alpha, scale alpha * mu) (Poisson(mu) at alpha 0)
    lam[mixed] = g.gamma(1.0 / alpha[mixed], alpha[mixed] * mu[mixed])
    return g.poisson(lam).astype(np.float64)


def _uniform(g: np.random.Generator, p: Sequence[Any], size: tuple[int, ...]) -> np.ndarray:
    return p[0] + (p[1] - p[0]) * g.random(size)


def _normal(g: np.random.Generator, p: Sequence[Any], size: tuple[int, ...]) -> np.ndarray:
    return p[0] + p[1] * g.standard_normal(size)


#: distribution: (parameter names, defaults, sampler, check of the parameters (numpy arrays))
_DISTS: dict[str, tuple[tuple[str, ...], tuple[float, ...], _Sampler, Callable[..., str]]] = {
    "uniform": (
        ("low", "high"),
        (0.0, 1.0),
        _uniform,
        lambda lo, hi: "" if (hi >= lo).all() else "low must be less or equal to high",
    ),
    "normal": (
        ("mu", "sigma"),
        (0.0, 1.0),
        _normal,
        lambda mu, s: "" if (s >= 0).all() else "sigma parameter has to be non-negative",
    ),
    "exponential": (
        ("lam",),
        (1.0,),
        _exponential,
        lambda lam: "" if (lam > 0).all() else "lambda parameter has to be positive",
    ),
    "gamma": (
        ("alpha", "beta"),
        (1.0, 1.0),
        _gamma,
        lambda a, b: (
            ""
            if (a > 0).all() and (b > 0).all()
            else "alpha and beta parameters in gamma distribution have to be positive"
        ),
    ),
    "poisson": (
        ("lam",),
        (1.0,),
        _poisson,
        lambda lam: "" if (lam >= 0).all() else "lambda parameter has to be non-negative",
    ),
    "negative_binomial": (
        ("k", "p"),
        (1.0, 1.0),
        _negative_binomial,
        lambda k, p: (
            ""
            if (k > 0).all() and ((p > 0) & (p <= 1)).all()
            else "k has to be positive and p in (0, 1]"
        ),
    ),
    "generalized_negative_binomial": (
        ("mu", "alpha"),
        (1.0, 1.0),
        _generalized_negative_binomial,
        lambda mu, a: (
            "" if (mu >= 0).all() and (a >= 0).all() else "mu and alpha have to be non-negative"
        ),
    ),
}


def _dtype(op: str, dtype: Any, default: str) -> np.dtype:
    name = default if dtype is None or dtype == "None" else np.dtype(dtype).name
    if name not in _FLOATS:
        raise MXNetError(
            f"Invalid Input: '{name}', valid values are: {{'None', 'float16', 'float32', "
            f"'float64'}}, in operator {op}"
        )
    return np.dtype(name)


def _emit(op: str, values: np.ndarray, ctx: Any, out: Any) -> NDArray:
    if out is not None:
        if not isinstance(out, NDArray) or out.shape != values.shape:
            raise MXNetError(
                f"{op}: out must be an NDArray of shape {values.shape}, got "
                f"{getattr(out, 'shape', type(out).__name__)}"
            )
        out._arr[...] = out._ctx.device().asarray(values.astype(out._arr.dtype))
        return out
    c = _ctx(ctx)
    return NDArray(c.device().asarray(np.ascontiguousarray(values)), c)


def _random(dist: str) -> Callable[..., NDArray]:
    names, defaults, sampler, check = _DISTS[dist]
    op = f"random_{dist}"

    def draw(*args: Any, **kwargs: Any) -> NDArray:
        shape = kwargs.pop("shape", None)
        ctx, dtype, out = (
            kwargs.pop("ctx", None),
            kwargs.pop("dtype", None),
            kwargs.pop("out", None),
        )
        kwargs.pop("name", None)
        if len(args) > len(names):
            raise TypeError(f"mx.nd.{op}: too many positional arguments")
        values = dict(zip(names, defaults, strict=True))
        values.update(zip(names, args, strict=False))
        for k, v in kwargs.items():
            if k not in values:
                raise MXNetError(f"Cannot find argument '{k}', in operator _{op}")
            values[k] = v
        for k, v in values.items():
            if isinstance(v, bool) or not isinstance(v, (int, float, np.number)):
                raise TypeError(f"mx.nd.{op}: {k} must be a number, got {type(v).__name__}")
        refuse_traced(f"nd.{op}()", "every later call would get this call's draws (a constant)")
        dt = _dtype(f"_{op}", dtype, "float32")
        params = [np.asarray(float(values[k])) for k in names]
        why = check(*params)
        if why:
            raise MXNetError(f"mx.nd.{op}: {why}, got {values}")
        size = () if shape is None else _shape(shape)
        res = sampler(gradhub.random.generator(), params, size or (1,))
        return _emit(op, res.astype(dt), ctx, out)

    draw.__name__ = draw.__qualname__ = op
    pars = ", ".join(f"{n}={d}" for n, d in zip(names, defaults, strict=True))
    draw.__doc__ = (
        f"Draws of the {dist.replace('_', ' ')} distribution ({pars}): shape ``shape`` ((1,) "
        "when not given), dtype ``dtype`` (float32 by default; float16/32/64), from gradhub's "
        "generator. Invalid parameters raise MXNetError."
    )
    return draw


random_exponential = _random("exponential")
random_gamma = _random("gamma")
random_poisson = _random("poisson")
random_negative_binomial = _random("negative_binomial")
random_generalized_negative_binomial = _random("generalized_negative_binomial")


def random_randint(
    low: int,
    high: int,
    shape: Any = None,
    ctx: Any = None,
    dtype: Any = "int32",
    out: Any = None,
    name: Any = None,
    **kwargs: Any,
) -> NDArray:
    """Random integers in ``[low, high)`` (int32 by default, or int64), shape ``shape``.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> v = mx.nd.random_randint(0, 3, shape=(100,)).asnumpy()
        >>> bool(((v >= 0) & (v < 3)).all()), v.dtype
        (True, dtype('int32'))
    """
    if kwargs:
        raise MXNetError(
            f"Cannot find argument '{next(iter(kwargs))}', in operator _random_randint"
        )
    refuse_traced("nd.random_randint()", "every later call would get this call's draws")
    dt = np.dtype(dtype)
    if dt.name not in ("int32", "int64"):
        raise MXNetError(
            f"Invalid Input: '{dt.name}', valid values are: {{'None', 'int32', 'int64'}}, in "
            "operator _random_randint"
        )
    lo, hi = int(low), int(high)
    if hi < lo:
        raise MXNetError(f"mx.nd.random_randint: low must be less or equal to high, got {lo}, {hi}")
    size = (() if shape is None else _shape(shape)) or (1,)
    g = gradhub.random.generator()
    res = np.full(size, lo, dtype=dt) if hi == lo else g.integers(lo, hi, size, dtype=dt)
    return _emit("random_randint", res, ctx, out)


def _given(
    op: str, names: Sequence[str], args: Sequence[Any], kwargs: dict[str, Any]
) -> dict[str, Any]:
    """The inputs ``names`` of operator ``op`` from its positional ``args`` and keyword
    ``kwargs``, each exactly once: an unknown keyword or a missing or extra input raises
    MXNetError naming ``_op``."""
    given = dict(zip(names, args, strict=False))
    for k, v in kwargs.items():
        if k not in names:
            raise MXNetError(f"Cannot find argument '{k}', in operator _{op}")
        given[k] = v
    if len(args) > len(names) or len(given) != len(names):
        raise MXNetError(f"Operator _{op} expects {len(names)} inputs ({', '.join(names)})")
    return given


def _sample(dist: str) -> Callable[..., NDArray]:
    names, _defaults, sampler, check = _DISTS[dist]
    op = f"sample_{dist}"

    def draw(*args: Any, **kwargs: Any) -> NDArray:
        shape = kwargs.pop("shape", None)
        dtype, out = kwargs.pop("dtype", None), kwargs.pop("out", None)
        kwargs.pop("name", None)
        arrays = _given(op, names, args, kwargs)
        first = arrays[names[0]]
        for k in names:
            v = arrays[k]
            if not isinstance(v, NDArray):
                raise TypeError(f"mx.nd.{op}: {k} must be an NDArray, got {type(v).__name__}")
            if v.shape != first.shape:
                raise MXNetError(
                    f"Operator _{op} inferring shapes failed: {names[0]} has shape "
                    f"{list(first.shape)}, {k} {list(v.shape)}"
                )
        refuse_traced(f"nd.{op}()", "every later call would get this call's draws (a constant)")
        dt = _dtype(f"_{op}", dtype, "float32")
        extra = () if shape is None else _shape(shape)
        pad = (Ellipsis,) + (None,) * len(extra)
        params = [np.asarray(arrays[k].asnumpy(), dtype=np.float64) for k in names]
        why = check(*params)
        if why:
            raise MXNetError(f"mx.nd.{op}: {why}")
        size = (*first.shape, *extra)
        res = sampler(gradhub.random.generator(), [p[pad] for p in params], size)
        return _emit(op, np.asarray(res).astype(dt), first.context, out)

    draw.__name__ = draw.__qualname__ = op
    draw.__doc__ = (
        f"Draws of the {dist.replace('_', ' ')} distribution, one set per element of the "
        f"NDArray parameters ``{', '.join(names)}`` (one shape): the result has shape "
        "``param.shape + shape`` and dtype ``dtype`` (float32 by default)."
    )
    return draw


sample_uniform = _sample("uniform")
sample_normal = _sample("normal")
sample_exponential = _sample("exponential")
sample_gamma = _sample("gamma")
sample_poisson = _sample("poisson")
sample_negative_binomial = _sample("negative_binomial")
sample_generalized_negative_binomial = _sample("generalized_negative_binomial")


# -- densities -------------------------------------------------------------------------------------

_V = NativeVariable


def _log(x: _V) -> _V:
    return _call("log", x)


def _lgamma(x: _V) -> _V:
    return _call("lgamma", x)


def _const_like(x: _V) -> _V:
    """``x``'s values as a constant (no gradient flows back)."""
    return NativeVariable.leaf(x._data, False)


def _lp_uniform(x: _V, lo: _V, hi: _V) -> _V:
    return -_log(hi - lo) + x * 0.0


def _lp_normal(x: _V, mu: _V, sigma: _V) -> _V:
    z = (x - mu) / sigma
    return -(z * z) * 0.5 - _log(sigma) - 0.5 * math.log(2.0 * math.pi)


def _lp_gamma(x: _V, alpha: _V, beta: _V) -> _V:
    # beta is the rate (mxnet's random_pdf_gamma)
    return alpha * _log(beta) + (alpha - 1.0) * _log(x) - beta * x - _lgamma(alpha)


def _lp_exponential(x: _V, lam: _V) -> _V:
    return _log(lam) - lam * x


def _lp_poisson(x: _V, lam: _V) -> _V:
    n = _const_like(x)
    return n * _log(lam) - lam - _lgamma(n + 1.0) + x * 0.0


def _lp_negative_binomial(x: _V, k: _V, p: _V) -> _V:
    n = _const_like(x)
    return (
        _lgamma(n + k) - _lgamma(n + 1.0) - _lgamma(k) + k * _log(p) + n * _log(1.0 - p) + x * 0.0
    )


def _lp_generalized_negative_binomial(x: _V, mu: _V, alpha: _V) -> _V:
    # in float64: lgamma(n + 1/alpha) - lgamma(1/alpha) cancels for a small alpha (in float32,
    # alpha = 1e-6 lost half the value)
    dt = x.dtype
    x, mu, alpha = (_call("cast", v, dtype="float64") for v in (x, mu, alpha))
    n = _const_like(x)
    k = 1.0 / alpha
    am = alpha * mu
    lp = (
        _lgamma(n + k)
        - _lgamma(n + 1.0)
        - _lgamma(k)
        - k * _log(1.0 + am)
        + n * (_log(am) - _log(1.0 + am))
        + x * 0.0
    )
    return lp if dt == np.float64 else _call("cast", lp, dtype=np.dtype(dt).name)


_PDFS: dict[str, tuple[tuple[str, ...], Callable[..., _V]]] = {
    "uniform": (("low", "high"), _lp_uniform),
    "normal": (("mu", "sigma"), _lp_normal),
    "gamma": (("alpha", "beta"), _lp_gamma),
    "exponential": (("lam",), _lp_exponential),
    "poisson": (("lam",), _lp_poisson),
    "negative_binomial": (("k", "p"), _lp_negative_binomial),
    "generalized_negative_binomial": (("mu", "alpha"), _lp_generalized_negative_binomial),
}


def _pdf(dist: str) -> Callable[..., NDArray]:
    names, logpdf = _PDFS[dist]
    op = f"random_pdf_{dist}"

    def density(*args: Any, **kwargs: Any) -> NDArray:
        from ._nd_tensor import _run

        is_log = bool(kwargs.pop("is_log", False))
        out = kwargs.pop("out", None)
        kwargs.pop("name", None)
        arrays = _pdf_inputs(op, ("sample", *names), args, kwargs)
        sample, params = arrays[0], arrays[1:]
        pshape = params[0].shape
        if sample.shape[: len(pshape)] != pshape:
            raise MXNetError(
                f"{op}: Shape inconsistent, the sample of shape {list(sample.shape)} must start "
                f"with the parameters' shape {list(pshape)}"
            )
        pad = pshape + (1,) * (sample.ndim - len(pshape))

        def f(x: _V, *ps: _V) -> _V:
            wide = [
                _call("broadcast_to", _call("reshape", p, shape=pad), shape=x.shape) for p in ps
            ]
            lp = logpdf(x, *wide)
            return lp if is_log else _call("exp", lp)

        return _written(op, _run(arrays, f), out)

    density.__name__ = density.__qualname__ = op
    density.__doc__ = (
        f"The density of the {dist.replace('_', ' ')} distribution "
        f"(parameters ``{', '.join(names)}``, NDArrays of one shape ``P``) at ``sample`` (shape "
        "``P + S``: the parameters of element ``i`` apply to ``sample[i, ...]``); ``is_log`` "
        "gives its logarithm. Recorded by ``mx.autograd`` (gradients with respect to the sample "
        "and the parameters)."
    )
    return density


def _pdf_inputs(
    op: str, names: Sequence[str], args: Sequence[Any], kwargs: dict[str, Any]
) -> list[NDArray]:
    given = _given(op, names, args, kwargs)
    arrays = [given[k] for k in names]
    for k, v in zip(names, arrays, strict=True):
        if not isinstance(v, NDArray):
            raise TypeError(f"mx.nd.{op}: {k} must be an NDArray, got {type(v).__name__}")
        if v._arr.dtype.kind != "f":
            raise MXNetError(f"{op}: {k} must have a floating dtype, got {v._arr.dtype.name}")
        if v._arr.dtype != arrays[0]._arr.dtype:
            raise MXNetError(
                f"{op}: {k} has dtype {v._arr.dtype.name}, the sample {arrays[0]._arr.dtype.name}"
            )
    for k, v in zip(names[2:], arrays[2:], strict=True):
        if v.shape != arrays[1].shape:
            raise MXNetError(
                f"{op}: Shape inconsistent, {names[1]} has shape {list(arrays[1].shape)}, "
                f"{k} {list(v.shape)}"
            )
    return arrays


def _written(op: str, result: NDArray, out: Any) -> NDArray:
    from .ndarray import write_out

    return write_out(op, result, out)


random_pdf_uniform = _pdf("uniform")
random_pdf_normal = _pdf("normal")
random_pdf_gamma = _pdf("gamma")
random_pdf_exponential = _pdf("exponential")
random_pdf_poisson = _pdf("poisson")
random_pdf_negative_binomial = _pdf("negative_binomial")
random_pdf_generalized_negative_binomial = _pdf("generalized_negative_binomial")


def random_pdf_dirichlet(
    sample: NDArray, alpha: NDArray, is_log: bool = False, out: Any = None, **kwargs: Any
) -> NDArray:
    """The density of the Dirichlet distribution with concentrations ``alpha`` (shape
    ``P + (K,)``) at ``sample`` (shape ``P + S + (K,)``, points of the simplex); the result has
    shape ``P + S``::

        log p = sum_k (alpha_k - 1) log x_k + lgamma(sum_k alpha_k) - sum_k lgamma(alpha_k)

    Recorded by ``mx.autograd``.
    """
    from ._nd_tensor import _run

    kwargs.pop("name", None)
    arrays = _pdf_inputs("random_pdf_dirichlet", ("sample", "alpha"), (sample, alpha), kwargs)
    ashape = alpha.shape
    if (
        sample.ndim < len(ashape)
        or sample.shape[: len(ashape) - 1] != ashape[:-1]
        or sample.shape[-1] != ashape[-1]
    ):
        raise MXNetError(
            f"random_pdf_dirichlet: Shape inconsistent, the sample of shape "
            f"{list(sample.shape)} must be alpha's leading shape, more axes, then {ashape[-1]}"
        )
    pad = ashape[:-1] + (1,) * (sample.ndim - len(ashape)) + ashape[-1:]

    def f(x: _V, a: _V) -> _V:
        aw = _call("broadcast_to", _call("reshape", a, shape=pad), shape=x.shape)
        k = x.ndim - 1
        lp = (
            _call("sum", (aw - 1.0) * _log(x), axis=k)
            + _lgamma(_call("sum", aw, axis=k))
            - _call("sum", _lgamma(aw), axis=k)
        )
        return lp if is_log else _call("exp", lp)

    return _written("random_pdf_dirichlet", _run(arrays, f), out)
