"""mxnet 1.9.1's fused optimizer update operators of ``mx.nd``: ``sgd_update``,
``sgd_mom_update``, ``nag_mom_update``, ``adam_update``, ``rmsprop_update``,
``rmspropalex_update``, ``ftrl_update``, ``ftml_update``, ``signsgd_update``, ``signum_update``,
``lamb_update_phase1``/``phase2``, their mixed-precision ``mp_*`` forms (a float32 master copy
``weight32`` of float16 weights), the aggregated ``multi_*``/``preloaded_multi_*`` SGD forms and
the helpers ``all_finite``, ``multi_all_finite``, ``multi_sum_sq``, ``multi_lars`` and
``reset_arrays``.

As in mxnet, an update operator returns the new weight (a new array, or ``out`` when given:
optimizers pass ``out=weight``) and updates its state arrays (``mom``, ``mean``, ``var``, ``n``,
``weight32``...) in place. The arithmetic follows mxnet's kernels step by step in the weight's
dtype (the parameters are converted to it first; the ``mp_*`` forms compute in float32), so
float32 results equal mxnet's bit for bit. A clipping bound below 0 (the default -1) turns
clipping off. ``lazy_update`` concerns sparse gradients only and is accepted and ignored.
The operators are not recorded by ``mx.autograd`` (mxnet gives them no gradient).

Example::

    >>> import gradhub_compat.mxnet as mx
    >>> w, g, mom = mx.nd.array([1.0, 2.0]), mx.nd.array([0.5, -0.5]), mx.nd.zeros(2)
    >>> _ = mx.nd.sgd_mom_update(w, g, mom, lr=0.1, momentum=0.9, out=w)
    >>> w.asnumpy(), mom.asnumpy()
    (array([0.95, 2.05], dtype=float32), array([-0.05,  0.05], dtype=float32))
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .base import MXNetError
from .ndarray import NDArray, refuse_traced

__all__ = [
    "adam_update",
    "all_finite",
    "ftml_update",
    "ftrl_update",
    "lamb_update_phase1",
    "lamb_update_phase2",
    "mp_lamb_update_phase1",
    "mp_lamb_update_phase2",
    "mp_nag_mom_update",
    "mp_sgd_mom_update",
    "mp_sgd_update",
    "multi_all_finite",
    "multi_lars",
    "multi_mp_sgd_mom_update",
    "multi_mp_sgd_update",
    "multi_sgd_mom_update",
    "multi_sgd_update",
    "multi_sum_sq",
    "nag_mom_update",
    "preloaded_multi_mp_sgd_mom_update",
    "preloaded_multi_mp_sgd_update",
    "preloaded_multi_sgd_mom_update",
    "preloaded_multi_sgd_update",
    "reset_arrays",
    "rmsprop_update",
    "rmspropalex_update",
    "sgd_mom_update",
    "sgd_update",
    "signsgd_update",
    "signum_update",
]

_REQUIRED = object()
_Arrays = dict[str, np.ndarray]
_Params = dict[str, Any]

# -- argument handling ---------------------------------------------------------------------------


def _params(op: str, spec: dict[str, Any], given: dict[str, Any]) -> dict[str, Any]:
    """``given`` checked against the operator's parameters ``spec`` (name: default, or
    ``_REQUIRED``) as mxnet's parameter parser: an unknown name or a missing required one
    raises MXNetError naming the operator."""
    given = {k: v for k, v in given.items() if k != "name"}
    for k in given:
        if k not in spec:
            raise MXNetError(
                f"Cannot find argument '{k}', Possible Arguments: {', '.join(spec)} "
                f"(in operator {op})"
            )
    out: dict[str, Any] = {}
    for k, default in spec.items():
        v = given.get(k, default)
        if v is _REQUIRED or (v is None and default is _REQUIRED):
            raise MXNetError(f"Required parameter {k} is not presented, in operator {op}")
        out[k] = v
    return out


def _check(op: str, named: Sequence[tuple[str, Any]], dtypes: Sequence[Any]) -> None:
    """The arrays ``named`` are NDArrays of one shape with the dtypes ``dtypes`` (None: the
    first array's dtype), else MXNetError naming ``op`` and the argument."""
    first = named[0][1]
    for i, ((arg, v), dt) in enumerate(zip(named, dtypes, strict=True)):
        if not isinstance(v, NDArray):
            raise TypeError(f"mx.nd.{op}: {arg} must be an NDArray, got {type(v).__name__}")
        if v.shape != first.shape:
            raise MXNetError(
                f"{op}: Incompatible attr at {i}-th input ({arg}): expected {list(first.shape)}, "
                f"got {list(v.shape)}"
            )
        want = np.dtype(dt) if dt is not None else first._arr.dtype
        if v._arr.dtype != want:
            raise MXNetError(
                f"{op}: Incompatible attr at {i}-th input ({arg}): expected {want.name}, got "
                f"{v._arr.dtype.name}"
            )
    if first._arr.dtype.kind != "f":
        raise MXNetError(f"{op}: weight must have a floating dtype, got {first._arr.dtype.name}")


def _host(x: NDArray) -> np.ndarray:
    return np.array(x._ctx.device().to_numpy(x._arr))


def _store(x: NDArray, value: np.ndarray) -> None:
    x._arr[...] = x._ctx.device().asarray(np.asarray(value, dtype=x._arr.dtype))


def _result(op: str, like: NDArray, value: np.ndarray, out: Any) -> NDArray:
    """The new weight ``value``: a new NDArray, or written into ``out`` (returned)."""
    value = np.asarray(value, dtype=like._arr.dtype)
    if out is None:
        return NDArray(like._ctx.device().asarray(value), like._ctx)
    if not isinstance(out, NDArray):
        raise TypeError(f"mx.nd.{op}: out must be an NDArray, got {type(out).__name__}")
    if out.shape != value.shape:
        raise MXNetError(f"{op}: out has shape {out.shape}, the result {value.shape}")
    out._check_assign(f"mx.nd.{op}(out=...)")
    _store(out, value)
    return out


def _clip(x: Any, bound: Any) -> Any:
    """mshadow's ``clip::Map``: ``x`` limited to ``[-bound, bound]`` (NaN stays NaN)."""
    return np.where(x > bound, bound, np.where(x < -bound, -bound, x)).astype(np.asarray(x).dtype)


def _sign(x: Any) -> Any:
    return ((x > 0).astype(x.dtype) - (x < 0).astype(x.dtype)).astype(x.dtype)


# -- the kernels: numpy, in the dtype of the arrays, in mxnet's order of operations ----------------


def _rescaled(g: np.ndarray, p: _Params, clip_name: str = "clip_gradient") -> np.ndarray:
    r = p["rescale_grad"] * g
    return _clip(r, p[clip_name]) if p[clip_name] >= 0 else r


def _k_sgd(a: _Arrays, p: _Params, inplace: bool) -> np.ndarray:
    w, g = a["weight"], a["grad"]
    one = w.dtype.type(1)
    if p["clip_gradient"] >= 0:
        return (one - p["lr"] * p["wd"]) * w - p["lr"] * _rescaled(g, p)
    return (one - p["lr"] * p["wd"]) * w - (p["lr"] * p["rescale_grad"]) * g


def _k_sgd_mom(a: _Arrays, p: _Params, inplace: bool) -> np.ndarray:
    w, g, mom = a["weight"], a["grad"], a["mom"]
    if p["clip_gradient"] >= 0:
        step = p["lr"] * _rescaled(g, p)
    else:
        step = p["lr"] * p["rescale_grad"] * g
    mom[...] = p["momentum"] * mom - p["lr"] * p["wd"] * w - step
    return w + mom


def _k_nag(a: _Arrays, p: _Params, inplace: bool) -> np.ndarray:
    w, g, mom = a["weight"], a["grad"], a["mom"]
    one = w.dtype.type(1)
    r = _rescaled(g, p)
    mom[...] = p["momentum"] * mom
    new = w - mom + (p["momentum"] + one) * (mom - p["lr"] * (r + p["wd"] * w))
    # the kernel writes the weight first: in place, the state reads the new weight
    seen = new if inplace else w
    mom[...] = mom - p["lr"] * (r + p["wd"] * seen)
    return new


def _k_adam(a: _Arrays, p: _Params, inplace: bool) -> np.ndarray:
    w, g, mean, var = a["weight"], a["grad"], a["mean"], a["var"]
    one = w.dtype.type(1)
    r = g * p["rescale_grad"] + w * p["wd"]
    if p["clip_gradient"] >= 0:
        r = _clip(r, p["clip_gradient"])
    mean[...] = p["beta1"] * mean + (one - p["beta1"]) * r
    var[...] = p["beta2"] * var + (one - p["beta2"]) * r * r
    return w - p["lr"] * mean / (np.sqrt(var) + p["epsilon"])


def _rms_grad(w: np.ndarray, g: np.ndarray, p: _Params) -> np.ndarray:
    r = p["rescale_grad"] * g + p["wd"] * w
    return _clip(r, p["clip_gradient"]) if p["clip_gradient"] >= 0 else r


def _k_rmsprop(a: _Arrays, p: _Params, inplace: bool) -> np.ndarray:
    w, n = a["weight"], a["n"]
    one = w.dtype.type(1)
    r = _rms_grad(w, a["grad"], p)
    n[...] = (one - p["gamma1"]) * (r * r) + p["gamma1"] * n
    new = w - p["lr"] * (r / np.sqrt(n + p["epsilon"]))
    return _clip(new, p["clip_weights"]) if p["clip_weights"] >= 0 else new


def _k_rmspropalex(a: _Arrays, p: _Params, inplace: bool) -> np.ndarray:
    w, n, sg, delta = a["weight"], a["n"], a["g"], a["delta"]
    one = w.dtype.type(1)
    r = _rms_grad(w, a["grad"], p)
    n[...] = (one - p["gamma1"]) * r * r + p["gamma1"] * n
    sg[...] = (one - p["gamma1"]) * r + p["gamma1"] * sg
    delta[...] = p["gamma2"] * delta - p["lr"] * r / np.sqrt(n - sg * sg + p["epsilon"])
    new = w + delta
    return _clip(new, p["clip_weights"]) if p["clip_weights"] >= 0 else new


def _k_ftrl(a: _Arrays, p: _Params, inplace: bool) -> np.ndarray:
    w, z, n = a["weight"], a["z"], a["n"]
    r = _rescaled(a["grad"], p)
    z[...] = z + (r - (np.sqrt(n + r * r) - np.sqrt(n)) * w / p["lr"])
    n[...] = n + r * r
    lam = p["lamda1"]
    keep = (np.abs(z) > lam).astype(w.dtype)
    return (_sign(z) * lam - z) / ((p["beta"] + np.sqrt(n)) / p["lr"] + p["wd"]) * keep


def _k_ftml(a: _Arrays, p: _Params, inplace: bool) -> np.ndarray:
    w, d, v, z = a["weight"], a["d"], a["v"], a["z"]
    one = w.dtype.type(1)
    r = p["rescale_grad"] * a["grad"] + p["wd"] * w
    if p["clip_grad"] >= 0:
        r = _clip(r, p["clip_grad"])
    b1, b2, t = p["beta1"], p["beta2"], p["t"]
    v[...] = b2 * v + (one - b2) * (r * r)
    d_t = (one - b1**t) / p["lr"] * (np.sqrt(v / (one - b2**t)) + p["epsilon"])
    z[...] = b1 * z + (one - b1) * r - (d_t - b1 * d) * w
    d[...] = d_t
    return -z / d_t


def _k_signsgd(a: _Arrays, p: _Params, inplace: bool) -> np.ndarray:
    w, g = a["weight"], a["grad"]
    one = w.dtype.type(1)
    return (one - p["lr"] * p["wd"]) * w - p["lr"] * _sign(g)


def _k_signum(a: _Arrays, p: _Params, inplace: bool) -> np.ndarray:
    w, g, mom = a["weight"], a["grad"], a["mom"]
    one = w.dtype.type(1)
    c = one - p["momentum"]
    if p["clip_gradient"] >= 0:
        mom[...] = p["momentum"] * mom - c * p["wd"] * w - c * _rescaled(g, p)
    else:
        mom[...] = p["momentum"] * mom - c * p["wd"] * w - c * p["rescale_grad"] * g
    return (one - p["lr"] * p["wd_lh"]) * w + p["lr"] * _sign(mom)


def _k_lamb1(a: _Arrays, p: _Params, inplace: bool) -> np.ndarray:
    w, mean, var = a["weight"], a["mean"], a["var"]
    one = w.dtype.type(1)
    r = _rescaled(a["grad"], p)
    mean[...] = p["beta1"] * mean + (one - p["beta1"]) * r
    var[...] = p["beta2"] * var + (one - p["beta2"]) * r * r
    if p["bias_correction"]:
        m_hat = mean / (one - p["beta1"] ** p["t"])
        v_hat = var / (one - p["beta2"] ** p["t"])
        return m_hat / (np.sqrt(v_hat) + p["epsilon"]) + p["wd"] * w
    return mean / (np.sqrt(var) + p["epsilon"]) + p["wd"] * w


def _k_lamb2(a: _Arrays, p: _Params, inplace: bool) -> np.ndarray:
    w, g = a["weight"], a["g"]
    dt = w.dtype.type
    r1, r2 = dt(a["r1"].reshape(-1)[0]), dt(a["r2"].reshape(-1)[0])
    if p["lower_bound"] >= 0:
        r1 = max(r1, p["lower_bound"])
    if p["upper_bound"] >= 0:
        r1 = min(r1, p["upper_bound"])
    lr = p["lr"] if r1 == 0 or r2 == 0 else p["lr"] * r1 / r2
    return w - lr * g


# -- the operators ---------------------------------------------------------------------------------

_COMMON = {"wd": 0.0, "rescale_grad": 1.0, "clip_gradient": -1.0}
_FLOAT_PARAMS = ("bias_correction",)


def _scalars(dt: np.dtype, params: dict[str, Any]) -> _Params:
    """The parameters as scalars of ``dt`` (mxnet casts a kernel's parameters to DType);
    ``t`` and flags are kept as numbers."""
    out: _Params = {}
    for k, v in params.items():
        if k == "bias_correction":
            out[k] = bool(v)
        elif k in ("lazy_update",):
            continue
        else:
            out[k] = dt.type(np.float32(v)) if k != "epsilon_double" else dt.type(v)
    return out


def _make(
    op: str,
    inputs: Sequence[str],
    spec: dict[str, Any],
    kernel: Callable[[_Arrays, _Params, bool], np.ndarray],
    mp: bool = False,
    store32: bool = True,
    out32: bool = False,
) -> Callable[..., NDArray]:
    """An update operator: ``inputs`` (weight first), the parameters ``spec``; ``mp``: the
    arrays after the gradient are float32 and the kernel runs on ``weight32``, which receives
    the result when ``store32``; ``out32``: the result is float32 (else the weight's dtype)."""

    def update(*args: Any, out: Any = None, **kwargs: Any) -> NDArray:
        refuse_traced(f"nd.{op}()", "later calls would not update the weight and the states")
        if len(args) > len(inputs):
            raise MXNetError(
                f"Operator {op} expects {len(inputs)} inputs, but got {len(args)} instead."
            )
        arrays = dict(zip(inputs, args, strict=False))
        for k in list(kwargs):
            if k in inputs:
                arrays[k] = kwargs.pop(k)
        missing = [k for k in inputs if arrays.get(k) is None]
        if missing:
            raise MXNetError(
                f"Operator {op} expects {len(inputs)} inputs, but got "
                f"{len(inputs) - len(missing)} instead (missing {', '.join(missing)})."
            )
        p = _params(op, spec, kwargs)
        named = [(k, arrays[k]) for k in inputs]
        if op.startswith("lamb_update_phase2") or op.startswith("mp_lamb_update_phase2"):
            shaped = [n for n in named if n[0] not in ("r1", "r2")]
            for k in ("r1", "r2"):
                v = arrays[k]
                if not isinstance(v, NDArray) or v.size != 1:
                    raise MXNetError(f"{op}: {k} must be an NDArray of one element")
        else:
            shaped = named
        dts: list[Any] = [
            None if k in ("weight", "grad") or not mp else np.float32 for k, _ in shaped
        ]
        _check(op, shaped, dts)
        weight = arrays["weight"]
        host = {k: _host(v) for k, v in arrays.items()}
        dt = np.dtype(np.float32) if mp else weight._arr.dtype
        work = dict(host)
        if mp:
            work["weight"] = host["weight32"]
            if "grad" in work:
                work["grad"] = host["grad"].astype(np.float32)
        before = {k: v.copy() for k, v in work.items()}
        inplace = out is not None and out is weight
        new = np.asarray(kernel(work, _scalars(dt, p), inplace))
        for k, v in arrays.items():
            if k in ("weight", "grad") or (k in ("g", "r1", "r2") and "lamb" in op):
                continue
            if k == "weight32" and mp:
                if store32:
                    _store(v, new)
                continue
            if not np.array_equal(work[k], before[k], equal_nan=True):
                _store(v, work[k])
        if out32:  # (mp_lamb_update_phase1: g in float32)
            return _result(op, arrays["weight32"], new, out)
        return _result(op, weight, new, out)

    update.__name__ = update.__qualname__ = op
    return update


def _doc(fn: Callable[..., NDArray], text: str) -> Callable[..., NDArray]:
    fn.__doc__ = text
    return fn


sgd_update = _doc(
    _make(
        "sgd_update",
        ["weight", "grad"],
        {"lr": _REQUIRED, **_COMMON, "lazy_update": True},
        _k_sgd,
    ),
    """SGD step::

        weight = (1 - lr * wd) * weight - lr * clip(rescale_grad * grad, clip_gradient)

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.sgd_update(mx.nd.array([1.0]), mx.nd.array([2.0]), lr=0.25).asnumpy()
        array([0.5], dtype=float32)
    """,
)
sgd_mom_update = _doc(
    _make(
        "sgd_mom_update",
        ["weight", "grad", "mom"],
        {"lr": _REQUIRED, "momentum": 0.0, **_COMMON, "lazy_update": True},
        _k_sgd_mom,
    ),
    """SGD with momentum (``mom`` updated in place)::

        mom = momentum * mom - lr * wd * weight - lr * clip(rescale_grad * grad, clip_gradient)
        weight = weight + mom
    """,
)
nag_mom_update = _doc(
    _make(
        "nag_mom_update",
        ["weight", "grad", "mom"],
        {"lr": _REQUIRED, "momentum": 0.0, **_COMMON},
        _k_nag,
    ),
    """Nesterov momentum (``mom`` updated in place), ``g = clip(rescale_grad * grad)``::

        mom = momentum * mom
        new = weight - mom + (momentum + 1) * (mom - lr * (g + wd * weight))
        mom = mom - lr * (g + wd * weight)    # weight: the new one when out is weight
    """,
)
adam_update = _doc(
    _make(
        "adam_update",
        ["weight", "grad", "mean", "var"],
        {
            "lr": _REQUIRED,
            "beta1": 0.9,
            "beta2": 0.999,
            "epsilon": 1e-8,
            **_COMMON,
            "lazy_update": True,
        },
        _k_adam,
    ),
    """Adam without bias correction (``mean``, ``var`` updated in place)::

        g = clip(rescale_grad * grad + wd * weight, clip_gradient)
        mean = beta1 * mean + (1 - beta1) * g
        var = beta2 * var + (1 - beta2) * g * g
        weight = weight - lr * mean / (sqrt(var) + epsilon)
    """,
)
rmsprop_update = _doc(
    _make(
        "rmsprop_update",
        ["weight", "grad", "n"],
        {"lr": _REQUIRED, "gamma1": 0.95, "epsilon": 1e-8, **_COMMON, "clip_weights": -1.0},
        _k_rmsprop,
    ),
    """RMSProp (Tieleman and Hinton; ``n`` updated in place)::

        g = clip(rescale_grad * grad + wd * weight, clip_gradient)
        n = (1 - gamma1) * g * g + gamma1 * n
        weight = clip(weight - lr * g / sqrt(n + epsilon), clip_weights)
    """,
)
rmspropalex_update = _doc(
    _make(
        "rmspropalex_update",
        ["weight", "grad", "n", "g", "delta"],
        {
            "lr": _REQUIRED,
            "gamma1": 0.95,
            "gamma2": 0.9,
            "epsilon": 1e-8,
            **_COMMON,
            "clip_weights": -1.0,
        },
        _k_rmspropalex,
    ),
    """RMSProp as Graves (2013) (``n``, ``g``, ``delta`` updated in place)::

        r = clip(rescale_grad * grad + wd * weight, clip_gradient)
        n = (1 - gamma1) * r * r + gamma1 * n
        g = (1 - gamma1) * r + gamma1 * g
        delta = gamma2 * delta - lr * r / sqrt(n - g * g + epsilon)
        weight = clip(weight + delta, clip_weights)
    """,
)
ftrl_update = _doc(
    _make(
        "ftrl_update",
        ["weight", "grad", "z", "n"],
        {"lr": _REQUIRED, "lamda1": 0.01, "beta": 1.0, **_COMMON},
        _k_ftrl,
    ),
    """FTRL-proximal (``z``, ``n`` updated in place), ``r = clip(rescale_grad * grad)``::

        z += r - (sqrt(n + r * r) - sqrt(n)) * weight / lr
        n += r * r
        weight = (sign(z) * lamda1 - z) / ((beta + sqrt(n)) / lr + wd) * (|z| > lamda1)
    """,
)
ftml_update = _doc(
    _make(
        "ftml_update",
        ["weight", "grad", "d", "v", "z"],
        {
            "lr": _REQUIRED,
            "beta1": 0.6,
            "beta2": 0.999,
            "epsilon": 1e-8,
            "t": _REQUIRED,
            "wd": 0.0,
            "rescale_grad": 1.0,
            "clip_grad": -1.0,
        },
        _k_ftml,
    ),
    """FTML (``d``, ``v``, ``z`` updated in place), ``g = clip(rescale_grad * grad + wd * w)``::

        v = beta2 * v + (1 - beta2) * g * g
        d_t = (1 - beta1 ** t) / lr * (sqrt(v / (1 - beta2 ** t)) + epsilon)
        z = beta1 * z + (1 - beta1) * g - (d_t - beta1 * d) * weight
        d = d_t; weight = -z / d_t
    """,
)
signsgd_update = _doc(
    _make(
        "signsgd_update",
        ["weight", "grad"],
        {"lr": _REQUIRED, **_COMMON},
        _k_signsgd,
    ),
    """signSGD (mxnet's kernel ignores ``rescale_grad`` and ``clip_gradient``)::

        weight = (1 - lr * wd) * weight - lr * sign(grad)
    """,
)
signum_update = _doc(
    _make(
        "signum_update",
        ["weight", "grad", "mom"],
        {"lr": _REQUIRED, "momentum": 0.0, **_COMMON, "wd_lh": 0.0},
        _k_signum,
    ),
    """Signum (``mom`` updated in place), ``g = clip(rescale_grad * grad, clip_gradient)``::

        mom = momentum * mom - (1 - momentum) * wd * weight - (1 - momentum) * g
        weight = (1 - lr * wd_lh) * weight + lr * sign(mom)
    """,
)
_LAMB1 = {
    "beta1": 0.9,
    "beta2": 0.999,
    "epsilon": 1e-6,
    "t": _REQUIRED,
    "bias_correction": True,
    "wd": _REQUIRED,
    "rescale_grad": 1.0,
    "clip_gradient": -1.0,
}
_LAMB1_DOC = """LAMB phase 1: the update direction ``g`` (returned; ``mean``, ``var`` updated
    in place), ``r = clip(rescale_grad * grad, clip_gradient)``::

        mean = beta1 * mean + (1 - beta1) * r
        var = beta2 * var + (1 - beta2) * r * r
        g = mean_hat / (sqrt(var_hat) + epsilon) + wd * weight
    with ``mean_hat = mean / (1 - beta1 ** t)``, ``var_hat = var / (1 - beta2 ** t)`` under
    ``bias_correction`` (else ``mean``, ``var``).
    """
_LAMB2_DOC = """LAMB phase 2: ``r1`` (the weight's norm), clamped to ``[lower_bound,
    upper_bound]`` (a bound below 0 is off), and ``r2`` (``g``'s norm), one-element arrays::

        weight = weight - lr * (r1 / r2 if r1 > 0 and r2 > 0 else 1) * g
    """
lamb_update_phase1 = _doc(
    _make("lamb_update_phase1", ["weight", "grad", "mean", "var"], _LAMB1, _k_lamb1),
    _LAMB1_DOC,
)
lamb_update_phase2 = _doc(
    _make(
        "lamb_update_phase2",
        ["weight", "g", "r1", "r2"],
        {"lr": _REQUIRED, "lower_bound": -1.0, "upper_bound": -1.0},
        _k_lamb2,
    ),
    _LAMB2_DOC,
)
mp_sgd_update = _doc(
    _make(
        "mp_sgd_update",
        ["weight", "grad", "weight32"],
        {"lr": _REQUIRED, **_COMMON, "lazy_update": True},
        _k_sgd,
        mp=True,
    ),
    """:func:`sgd_update` computed in float32 on the master copy ``weight32`` (updated in
    place); the result is the new ``weight32`` in the weight's dtype.""",
)
mp_sgd_mom_update = _doc(
    _make(
        "mp_sgd_mom_update",
        ["weight", "grad", "mom", "weight32"],
        {"lr": _REQUIRED, "momentum": 0.0, **_COMMON, "lazy_update": True},
        _k_sgd_mom,
        mp=True,
    ),
    """:func:`sgd_mom_update` computed in float32 on ``weight32`` (``mom`` and ``weight32``
    float32, updated in place).""",
)


def _k_mp_nag(a: _Arrays, p: _Params, inplace: bool) -> np.ndarray:
    return _k_nag(a, p, True)


mp_nag_mom_update = _doc(
    _make(
        "mp_nag_mom_update",
        ["weight", "grad", "mom", "weight32"],
        {"lr": _REQUIRED, "momentum": 0.0, **_COMMON},
        _k_mp_nag,
        mp=True,
    ),
    """:func:`nag_mom_update` computed in float32 on ``weight32`` (the state update reads the
    new ``weight32``, as mxnet's kernel).""",
)
mp_lamb_update_phase1 = _doc(
    _make(
        "mp_lamb_update_phase1",
        ["weight", "grad", "mean", "var", "weight32"],
        _LAMB1,
        _k_lamb1,
        mp=True,
        store32=False,
        out32=True,
    ),
    ":func:`lamb_update_phase1` computed in float32 on ``weight32``; ``g`` is float32.",
)
mp_lamb_update_phase2 = _doc(
    _make(
        "mp_lamb_update_phase2",
        ["weight", "g", "r1", "r2", "weight32"],
        {"lr": _REQUIRED, "lower_bound": -1.0, "upper_bound": -1.0},
        _k_lamb2,
        mp=True,
        store32=False,
    ),
    """:func:`lamb_update_phase2` computed in float32 from ``weight32``, the result in the
    weight's dtype; as mxnet 1.9.1's kernel, ``weight32`` itself is left unchanged.""",
)


# -- aggregated SGD ------------------------------------------------------------------------------


def _k_multi(w: np.ndarray, g: np.ndarray, mom: np.ndarray | None, p: _Params) -> np.ndarray:
    """mxnet's ``MultiSGDKernel`` for one weight (``mom`` None: no momentum state)."""
    m = mom if mom is not None else np.zeros_like(w)
    if p["clip_gradient"] >= 0:
        step = p["lr"] * _rescaled(g, p)
    else:
        step = p["lr"] * p["rescale_grad"] * g
    m = p["momentum"] * m - p["lr"] * p["wd"] * w - step
    if mom is not None:
        mom[...] = m
    return w + m


def _make_multi(op: str, momentum: bool, mp: bool, preloaded: bool) -> Callable[..., Any]:
    per = 2 + int(momentum) + int(mp)
    names = ["weight", "grad"] + (["mom"] if momentum else []) + (["weight32"] if mp else [])
    spec: dict[str, Any] = {} if preloaded else {"lrs": _REQUIRED, "wds": _REQUIRED}
    if momentum:
        spec["momentum"] = 0.0
    spec.update({"rescale_grad": 1.0, "clip_gradient": -1.0, "num_weights": 1})

    def update(*data: Any, out: Any = None, **kwargs: Any) -> Any:
        refuse_traced(f"nd.{op}()", "later calls would not update the weights and the states")
        p = _params(op, spec, kwargs)
        n = int(p["num_weights"])
        want = n * per + (2 if preloaded else 0)
        if len(data) != want:
            raise MXNetError(
                f"Operator {op} expects {want} inputs (num_weights={n}), but got {len(data)} "
                "instead."
            )
        if preloaded:
            lr_arr, wd_arr = data[-2], data[-1]
            for arg, v in (("lrs", lr_arr), ("wds", wd_arr)):
                if not isinstance(v, NDArray) or v.size != n:
                    raise MXNetError(f"{op}: {arg} must be an NDArray of num_weights={n} values")
            lrs, wds = list(_host(lr_arr).reshape(-1)), list(_host(wd_arr).reshape(-1))
        else:
            lrs, wds = list(p["lrs"]), list(p["wds"])
            if len(lrs) != n or len(wds) != n:
                raise MXNetError(f"{op}: lrs and wds must have num_weights={n} values")
        if out is not None:
            outs = [out] if isinstance(out, NDArray) else list(out)
            if len(outs) != n:
                raise MXNetError(f"{op}: out must hold num_weights={n} arrays")
        results = []
        for i in range(n):
            arrays = dict(zip(names, data[i * per : (i + 1) * per], strict=True))
            named = list(arrays.items())
            dts = [None if k in ("weight", "grad") or not mp else np.float32 for k in names]
            _check(op, named, dts)
            weight = arrays["weight"]
            dt = np.dtype(np.float32) if mp else weight._arr.dtype
            ps = _scalars(
                dt,
                {
                    "lr": lrs[i],
                    "wd": wds[i],
                    "momentum": p.get("momentum", 0.0),
                    "rescale_grad": p["rescale_grad"],
                    "clip_gradient": p["clip_gradient"],
                },
            )
            w = _host(arrays["weight32"]) if mp else _host(weight)
            g = _host(arrays["grad"]).astype(dt)
            mom = _host(arrays["mom"]) if momentum else None
            new = np.asarray(_k_multi(w, g, mom, ps), dtype=dt)
            if mom is not None:
                _store(arrays["mom"], mom)
            if mp:
                _store(arrays["weight32"], new)
            results.append(_result(op, weight, new, None if out is None else outs[i]))
        return results[0] if n == 1 else results

    update.__name__ = update.__qualname__ = op
    lr_text = "the NDArrays ``lrs``, ``wds`` after the arrays" if preloaded else "``lrs``, ``wds``"
    update.__doc__ = (
        f"``num_weights`` SGD steps in one call: the inputs are, per weight, "
        f"``{', '.join(names)}``, then {lr_text} (one learning rate and weight decay per "
        "weight)::\n\n"
        "        mom = momentum * mom - lr * wd * w - lr * clip(rescale_grad * grad)\n"
        "        w = w + mom\n\n"
        f"    {'(mom is 0 without momentum) ' if not momentum else ''}"
        f"{'computed in float32 on weight32 ' if mp else ''}"
        "Returns the new weights (written into the list ``out`` when given)."
    )
    return update


multi_sgd_update = _make_multi("multi_sgd_update", False, False, False)
multi_sgd_mom_update = _make_multi("multi_sgd_mom_update", True, False, False)
multi_mp_sgd_update = _make_multi("multi_mp_sgd_update", False, True, False)
multi_mp_sgd_mom_update = _make_multi("multi_mp_sgd_mom_update", True, True, False)
preloaded_multi_sgd_update = _make_multi("preloaded_multi_sgd_update", False, False, True)
preloaded_multi_sgd_mom_update = _make_multi("preloaded_multi_sgd_mom_update", True, False, True)
preloaded_multi_mp_sgd_update = _make_multi("preloaded_multi_mp_sgd_update", False, True, True)
preloaded_multi_mp_sgd_mom_update = _make_multi(
    "preloaded_multi_mp_sgd_mom_update", True, True, True
)


# -- helpers of the optimizers -------------------------------------------------------------------


def _arrays(op: str, data: Sequence[Any], count: int) -> list[NDArray]:
    if len(data) != count:
        raise MXNetError(
            f"Operator {op} expects {count} inputs (num_arrays), but got {len(data)} instead."
        )
    for i, v in enumerate(data):
        if not isinstance(v, NDArray):
            raise TypeError(f"mx.nd.{op}: input {i} must be an NDArray, got {type(v).__name__}")
    return list(data)


def _flag(op: str, values: np.ndarray, out: Any, init_output: bool) -> NDArray:
    """1.0 (float32, shape (1,)) when every array is finite, else 0.0; with ``out`` and
    ``init_output=False`` a 0 already in ``out`` stays."""
    ok = bool(values.all())
    if out is not None and not init_output:
        if not isinstance(out, NDArray):
            raise TypeError(f"mx.nd.{op}: out must be an NDArray, got {type(out).__name__}")
        if not ok:
            _store(out, np.zeros(out.shape, np.float32))
        return out
    res = np.array([1.0 if ok else 0.0], dtype=np.float32)
    if out is None:
        return NDArray(np.asarray(res), None)
    _store(out, res)
    return out


def all_finite(
    data: NDArray, init_output: bool = True, out: Any = None, name: Any = None, **kwargs: Any
) -> NDArray:
    """1.0 (float32, shape (1,)) when every element of ``data`` is finite (no inf, no NaN),
    else 0.0 (mxnet's check of a mixed-precision gradient).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.all_finite(mx.nd.array([1.0, float("inf")])).asnumpy()
        array([0.], dtype=float32)
    """
    _params("all_finite", {}, kwargs)
    (x,) = _arrays("all_finite", [data], 1)
    r = _flag("all_finite", np.isfinite(_host(x)).reshape(-1), out, bool(init_output))
    r._ctx = x._ctx
    return r


def multi_all_finite(*data: Any, out: Any = None, **kwargs: Any) -> NDArray:
    """:func:`all_finite` over the ``num_arrays`` arrays ``data``: 1.0 when all are finite."""
    p = _params("multi_all_finite", {"num_arrays": 1, "init_output": True}, kwargs)
    xs = _arrays("multi_all_finite", data, int(p["num_arrays"]))
    flags = np.array([bool(np.isfinite(_host(x)).all()) for x in xs] or [True])
    r = _flag("multi_all_finite", flags, out, bool(p["init_output"]))
    if xs:
        r._ctx = xs[0]._ctx
    return r


def multi_sum_sq(*data: Any, out: Any = None, **kwargs: Any) -> NDArray:
    """The sum of squares of each of the ``num_arrays`` arrays ``data`` (float32, shape
    ``(num_arrays,)``), ``sum_i x_i ** 2`` accumulated in float32.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.nd.multi_sum_sq(mx.nd.array([3.0, 4.0]), mx.nd.ones(2), num_arrays=2).asnumpy()
        array([25.,  2.], dtype=float32)
    """
    p = _params("multi_sum_sq", {"num_arrays": _REQUIRED}, kwargs)
    xs = _arrays("multi_sum_sq", data, int(p["num_arrays"]))
    sums = []
    for x in xs:
        v = _host(x).reshape(-1)
        # (mxnet's CPU kernel squares in the data's dtype, then adds the squares one after
        # another in float32)
        sq = (v * v).astype(np.float32)
        sums.append(np.cumsum(sq, dtype=np.float32)[-1] if v.size else np.float32(0))
    res = np.array(sums, dtype=np.float32)
    if out is None:
        return NDArray(xs[0]._ctx.device().asarray(res), xs[0]._ctx)
    return _result("multi_sum_sq", NDArray(res), res, out)


def multi_lars(
    lrs: NDArray,
    weights_sum_sq: NDArray,
    grads_sum_sq: NDArray,
    wds: NDArray,
    eta: Any = None,
    eps: Any = None,
    rescale_grad: float = 1.0,
    out: Any = None,
    name: Any = None,
    **kwargs: Any,
) -> NDArray:
    """LARS learning rates from the sums of squares of each weight (``w2``) and gradient
    (``g2``), elementwise over the arrays::

        lr = lrs * eta * sqrt(w2) / (sqrt(g2) * rescale_grad + wds * sqrt(w2) + eps)

    where ``w2 > 0`` and ``g2 > 0``, else ``lrs``.
    """
    _params("multi_lars", {}, kwargs)
    p = _params(
        "multi_lars",
        {"eta": _REQUIRED, "eps": _REQUIRED, "rescale_grad": 1.0},
        {
            "eta": _REQUIRED if eta is None else eta,
            "eps": _REQUIRED if eps is None else eps,
            "rescale_grad": rescale_grad,
        },
    )
    named = [
        ("lrs", lrs),
        ("weights_sum_sq", weights_sum_sq),
        ("grads_sum_sq", grads_sum_sq),
        ("wds", wds),
    ]
    _check("multi_lars", named, [np.float32] * 4)
    lr, w2, g2, wd = (_host(v) for _, v in named)
    f = np.float32
    e, ep, rg = f(p["eta"]), f(p["eps"]), f(p["rescale_grad"])
    sw, sg = np.sqrt(w2), np.sqrt(g2)
    with np.errstate(all="ignore"):
        lars = lr * e * sw / (sg * rg + wd * sw + ep)
    res = np.where((w2 > 0) & (g2 > 0), lars, lr).astype(np.float32)
    return _result("multi_lars", lrs, res, out)


def reset_arrays(*data: Any, **kwargs: Any) -> list[NDArray]:
    """Set the ``num_arrays`` arrays ``data`` to zero in place (returns an empty list, as
    mxnet).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> a = mx.nd.ones(2)
        >>> mx.nd.reset_arrays(a, num_arrays=1), a.asnumpy()
        ([], array([0., 0.], dtype=float32))
    """
    p = _params("reset_arrays", {"num_arrays": _REQUIRED}, kwargs)
    for x in _arrays("reset_arrays", data, int(p["num_arrays"])):
        x._check_assign("mx.nd.reset_arrays")
        x._arr[...] = 0
    return []
