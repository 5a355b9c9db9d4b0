"""gradhub-nn-ops: functions that draw random numbers.

Dropout (a composite of the non-differentiable DropoutMask and a product, so backward reuses the
forward's mask) and nnabla's random sources ``Rand``, ``Randn`` and ``Randint`` (constants, no
gradient). ``seed=-1`` draws from the library's global generator (reseeded by ``gradhub.seed``
through :func:`seed_dropout`), ``seed >= 0`` from a generator of that seed.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
from gradhub import Sample, Variable, batching
from gradhub.ops import call, replace_api

from .arrays import _new_constant
from .math import int_arg

Shape = tuple[int, ...]

# -- Dropout -----------------------------------------------------------------------------------

_GLOBAL_RNG: list[np.random.Generator] = []


def _global_rng() -> np.random.Generator:
    """The generator of ``seed=-1`` dropout (created on first use)."""
    if not _GLOBAL_RNG:
        _GLOBAL_RNG.append(np.random.default_rng())
    return _GLOBAL_RNG[0]


def seed_dropout(seed: int) -> None:
    """Reseed the global generator used by dropout with ``seed=-1``.

    Example::

        >>> from gradhub_nn_ops.stochastic import seed_dropout
        >>> seed_dropout(0)
    """
    _GLOBAL_RNG[:] = [np.random.default_rng(seed)]


def _check_p(fn: str, p: float) -> float:
    if not isinstance(p, (int, float, np.integer, np.floating)) or isinstance(p, bool):
        raise TypeError(f"{fn}: p must be a number in [0, 1), got {p!r}")
    p = float(p)
    if not 0.0 <= p < 1.0:
        raise ValueError(f"{fn}: p must be in [0, 1), got {p}")
    return p


def _keep(shape: Sequence[int], p: float, seed: int) -> np.ndarray:
    rng = _global_rng() if seed == -1 else np.random.default_rng(seed)
    return rng.random(tuple(shape)) >= p


def _dropout_mask(xp: Any, x: Any, p: float = 0.5, seed: int = -1) -> Any:
    p = _check_p("dropout_mask", p)
    if not isinstance(seed, (int, np.integer)) or (seed < 0 and seed != -1):
        raise ValueError(f"dropout_mask: seed must be -1 (global generator) or >= 0, got {seed}")
    if seed == -1 and batching.LEVELS:  # inside vmap: see vmap's randomness
        batching.random_call("dropout_mask()")
        batching.unlifted_random_call("dropout_mask()")
    if x.dtype.kind != "f":
        raise TypeError(f"dropout_mask: x must be floating point, got dtype {x.dtype}")
    keep = _keep(x.shape, p, int(seed))
    mask = keep.astype(x.dtype) * x.dtype.type(1.0 / (1.0 - p))
    return mask if xp is np else xp.asarray(mask)


def _dropout_mask_samples(rng: np.random.Generator) -> Iterator[Sample]:
    yield Sample((rng.standard_normal((4, 5)),), {"p": 0.5, "seed": 3})
    yield Sample((rng.standard_normal((3,)),), {"p": 0.0, "seed": 1}, name="p=0")
    yield Sample((rng.standard_normal(()),), {"p": 0.2, "seed": 7}, name="0-d")


def _dropout_mask_ref(x: np.ndarray, p: float = 0.5, seed: int = -1) -> np.ndarray:
    u = np.random.default_rng(seed).random(x.shape)
    return np.where(u < p, 0.0, 1.0 / (1.0 - p))


def dropout(x: Any, p: float = 0.5, seed: int = -1) -> Variable:
    """Dropout: zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)``.

    ``y = x * m / (1 - p)`` with ``m_i ~ Bernoulli(1 - p)``. ``seed=-1`` draws ``m`` from a global
    generator (a new mask each call; reseed with ``gradhub_nn_ops.stochastic.seed_dropout``);
    ``seed >= 0`` gives the same mask each call. The mask comes from the non-differentiable function
    DropoutMask, so backward (and any higher derivative) reuses the forward's mask; re-executing
    the graph with ``y.forward()`` draws a new one when ``seed=-1``.

    Example::

        >>> import numpy as np, gradhub as gh, gradhub.functions as F
        >>> x = gh.Variable(np.ones(6))
        >>> y = F.dropout(x, p=0.5, seed=0)
        >>> sorted(set(y.d.tolist())) in ([0.0, 2.0], [0.0], [2.0])
        True
    """
    p = _check_p("dropout", p)
    mask = call("DropoutMask", _lifted_for_draw(x, seed, "dropout()"), p=p, seed=seed)
    return call("Mul2", x, mask)  # type: ignore[no-any-return]


def _lifted_for_draw(x: Any, seed: Any, fname: str) -> Any:
    """Inside vmap, the input that shapes a random mask, lifted to the levels whose
    ``randomness`` is ``"different"`` (one mask per batch element there); the error of
    ``randomness="error"``. Outside vmap, or with a fixed seed, ``x`` itself."""
    if seed != -1 or not batching.LEVELS:
        return x
    batching.random_call(fname)
    return batching.lift_random(x if isinstance(x, Variable) else Variable(x, need_grad=False))


def _dropout_mask_api(fdef: Any) -> Any:
    """Install the public callable of DropoutMask: the registered one, with ``x`` lifted inside
    vmap as :func:`_lifted_for_draw` says."""
    inner = fdef.api

    def api(x: Any, p: float = 0.5, seed: int = -1) -> Any:
        return inner(_lifted_for_draw(x, seed, "dropout_mask()"), p=p, seed=seed)

    return replace_api(fdef, api)


def dropout_mask_batching_rule(
    args: tuple[Any, ...], dims: tuple[Any, ...], p: float = 0.5, seed: int = -1
) -> Any:
    """The batching rule of DropoutMask: with a fixed seed, or ``randomness="same"``, one mask
    of one element's shape, shared by the batch (not batched); with ``"different"``, the mask of
    the whole batch (independent draws); ``"error"`` raises (see
    :func:`gradhub.batching.random_call`)."""
    x = args[0]
    if seed == -1:
        batching.random_call("dropout_mask()")
    if seed != -1 or batching.randomness() == "same":
        return call("DropoutMask", call("GetItem", x, key=0), p=p, seed=seed), None
    return call("DropoutMask", x, p=p, seed=seed), 0


def _dropout_samples(rng: np.random.Generator) -> Iterator[Sample]:
    yield Sample((rng.standard_normal((4, 5)),), {"p": 0.5, "seed": 3})
    yield Sample((rng.standard_normal((2, 3)),), {"p": 0.25, "seed": 11}, name="p=0.25")
    yield Sample((rng.standard_normal((3,)),), {"p": 0.0, "seed": 1}, name="p=0 keeps all")
    yield Sample((rng.standard_normal((0, 2)),), {"p": 0.5, "seed": 2}, name="size-0")


def _dropout_ref(x: np.ndarray, p: float = 0.5, seed: int = -1) -> np.ndarray:
    return x * _dropout_mask_ref(x, p, seed)


# -- Rand / Randn / Randint --------------------------------------------------------------------


def _generator(fn: str, seed: Any) -> np.random.Generator:
    s = int_arg(fn, "seed", seed)
    if s < -1:
        raise ValueError(f"{fn}: seed must be -1 (the global generator) or >= 0, got {s}")
    return _global_rng() if s == -1 else np.random.default_rng(s)


def _shape(fn: str, shape: Any) -> Shape:
    vals = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    out = tuple(int_arg(fn, "shape", v) for v in vals)
    if any(v < 0 for v in out):
        raise ValueError(f"{fn}: shape must hold sizes >= 0, got {shape!r}")
    return out


def rand(low: float = 0, high: float = 1, shape: Any = (), seed: int = -1) -> Variable:
    r"""Uniform samples :math:`x \sim U(low, high)` of ``shape`` (nnabla ``F.rand``): a float32
    Variable that needs no gradient, on the current context's device.

    ``seed=-1`` draws from the global generator of dropout (reseeded by ``gradhub.seed``),
    ``seed >= 0`` gives the same values on every call (numpy's generator: not nnabla's values).

    Example::

        >>> import gradhub.functions as F
        >>> x = F.rand(-1, 1, shape=(2, 3), seed=0)
        >>> x.shape, x.d.dtype, bool((abs(x.d) <= 1).all())
        ((2, 3), dtype('float32'), True)
    """
    rng = _generator("rand", seed)
    return _new_constant(
        rng.uniform(float(low), float(high), _shape("rand", shape)).astype(np.float32)
    )


def randn(mu: float = 0, sigma: float = 1, shape: Any = (), seed: int = -1) -> Variable:
    r"""Normal samples :math:`x \sim N(\mu, \sigma)` of ``shape`` (nnabla ``F.randn``): a
    float32 Variable that needs no gradient. ``seed`` as in :func:`rand`.

    Example::

        >>> import gradhub.functions as F
        >>> F.randn(shape=(3,), seed=0).shape
        (3,)
    """
    rng = _generator("randn", seed)
    vals = rng.normal(float(mu), float(sigma), _shape("randn", shape))
    return _new_constant(np.asarray(vals).astype(np.float32))


def randint(low: int = 0, high: int = 1, shape: Any = (), seed: int = -1) -> Variable:
    r"""Integers drawn uniformly from :math:`[low, high)` of ``shape`` (nnabla ``F.randint``):
    an int32 Variable that needs no gradient. ``seed`` as in :func:`rand`.

    Example::

        >>> import gradhub.functions as F
        >>> x = F.randint(0, 5, shape=(4,), seed=0)
        >>> x.d.dtype, bool(((0 <= x.d) & (x.d < 5)).all())
        (dtype('int32'), True)
    """
    lo, hi = int_arg("randint", "low", low), int_arg("randint", "high", high)
    if hi <= lo:
        raise ValueError(f"randint: high must be larger than low, got low={lo}, high={hi}")
    rng = _generator("randint", seed)
    return _new_constant(rng.integers(lo, hi, _shape("randint", shape), dtype=np.int32))


def _positive(fn: str, name: str, v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) or not v > 0:
        raise ValueError(f"{fn}: {name} must be a number > 0, got {v!r}")
    return float(v)


def rand_beta(alpha: float = 0.5, beta: float = 0.5, shape: Any = (), seed: int = -1) -> Variable:
    r"""Beta samples :math:`x \sim B(\alpha, \beta)` of ``shape`` (nnabla ``F.rand_beta``): a
    float32 Variable that needs no gradient. ``seed`` as in :func:`rand` (numpy's generator: not
    nnabla's values).

    Example::

        >>> import gradhub.functions as F
        >>> x = F.rand_beta(2.0, 3.0, shape=(4,), seed=0)
        >>> x.d.dtype, bool(((0 < x.d) & (x.d < 1)).all())
        (dtype('float32'), True)
    """
    a, b = _positive("rand_beta", "alpha", alpha), _positive("rand_beta", "beta", beta)
    rng = _generator("rand_beta", seed)
    return _new_constant(np.asarray(rng.beta(a, b, _shape("rand_beta", shape)), np.float32))


def rand_binomial(n: int = 1, p: float = 0.5, shape: Any = (), seed: int = -1) -> Variable:
    r"""Binomial samples :math:`x \sim B(n, p)` of ``shape`` (nnabla ``F.rand_binomial``): the
    numbers of successes as a float32 Variable (nnabla's dtype) that needs no gradient. ``seed`` as
    in :func:`rand`.

    Example::

        >>> import gradhub.functions as F
        >>> x = F.rand_binomial(5, 0.3, shape=(4,), seed=0)
        >>> x.d.dtype, bool(((0 <= x.d) & (x.d <= 5)).all())
        (dtype('float32'), True)
    """
    trials = int_arg("rand_binomial", "n", n)
    if trials < 0:
        raise ValueError(f"rand_binomial: n must be >= 0, got {trials}")
    prob = float(p)
    if not 0.0 <= prob <= 1.0:
        raise ValueError(f"rand_binomial: p must lie in [0, 1], got {p!r}")
    rng = _generator("rand_binomial", seed)
    vals = rng.binomial(trials, prob, _shape("rand_binomial", shape))
    return _new_constant(np.asarray(vals, np.float32))


def rand_gamma(k: float = 0.5, theta: float = 1, shape: Any = (), seed: int = -1) -> Variable:
    r"""Gamma samples :math:`x \sim \Gamma(k, \theta)` (shape ``k``, scale ``theta``) of ``shape``
    (nnabla ``F.rand_gamma``): a float32 Variable that needs no gradient. ``seed`` as in
    :func:`rand`.

    Example::

        >>> import gradhub.functions as F
        >>> x = F.rand_gamma(2.0, 1.5, shape=(4,), seed=0)
        >>> x.d.dtype, bool((x.d > 0).all())
        (dtype('float32'), True)
    """
    a = _positive("rand_gamma", "k", k)
    scale = _positive("rand_gamma", "theta", theta)
    rng = _generator("rand_gamma", seed)
    return _new_constant(np.asarray(rng.gamma(a, scale, _shape("rand_gamma", shape)), np.float32))


def _dist_samples(names: tuple[str, str], values: tuple[float, float]) -> Any:
    def samples(rng: np.random.Generator) -> Iterator[Sample]:
        kw = dict(zip(names, values))
        yield Sample((), {**kw, "shape": (2, 3), "seed": 3}, name="2x3")
        yield Sample((), {"shape": (), "seed": 0}, name="0-d")
        yield Sample((), {"shape": (0, 2), "seed": 1}, name="size-0")

    return samples


def _dist_ref(kind: str, names: tuple[str, str], defaults: tuple[float, float]) -> Any:
    def ref(**kw: Any) -> np.ndarray:
        g = np.random.default_rng(kw.get("seed", -1))
        a, b = (kw.get(n, d) for n, d in zip(names, defaults))
        shape = tuple(kw.get("shape", ()))
        return np.asarray(getattr(g, kind)(a, b, shape), np.float32)

    return ref


def _rand_samples(kind: str) -> Any:
    def samples(rng: np.random.Generator) -> Iterator[Sample]:
        a, b = (0, 5) if kind == "randint" else (-1.0, 2.0)
        yield Sample(
            (),
            {
                "low" if kind != "randn" else "mu": a,
                "high" if kind != "randn" else "sigma": b,
                "shape": (2, 3),
                "seed": 3,
            },
            name="2x3",
        )
        yield Sample((), {"shape": (), "seed": 0}, name="0-d")
        yield Sample((), {"shape": (0, 2), "seed": 1}, name="size-0")

    return samples


def _rand_ref(kind: str) -> Any:
    def ref(**kw: Any) -> np.ndarray:
        g = np.random.default_rng(kw.get("seed", -1))
        shape = tuple(kw.get("shape", ()))
        if kind == "rand":
            return g.uniform(kw.get("low", 0), kw.get("high", 1), shape).astype(np.float32)
        if kind == "randn":
            v = g.normal(kw.get("mu", 0), kw.get("sigma", 1), shape)
            return np.asarray(v).astype(np.float32)
        return g.integers(kw.get("low", 0), kw.get("high", 1), shape, dtype=np.int32)

    return ref


# -- registration ------------------------------------------------------------------------------


def register_functions(register: Any) -> None:
    """Register the random functions."""
    f = register.function
    mask = f(
        "DropoutMask",
        _dropout_mask,
        attrs={"p": 0.5, "seed": -1},
        differentiable=False,
        random=True,
        samples=_dropout_mask_samples,
        reference=_dropout_mask_ref,
        doc="""The scaled keep-mask of dropout, shaped and typed like ``x``: ``m_i / (1 - p)``.

``m_i ~ Bernoulli(1 - p)``; ``seed=-1`` draws from the global generator, ``seed >= 0`` gives the
same mask on every call. Non-differentiable (its output needs no gradient).

Example::

    >>> import numpy as np, gradhub as gh, gradhub.functions as F
    >>> m = F.dropout_mask(gh.Variable(np.ones(4)), p=0.5, seed=0)
    >>> bool(np.all((m.d == 0) | (m.d == 2)))
    True
""",
    )
    _dropout_mask_api(mask)
    register.composite("Dropout", dropout, samples=_dropout_samples, reference=_dropout_ref)
    c = register.composite
    c(
        "Rand",
        rand,
        samples=_rand_samples("rand"),
        reference=_rand_ref("rand"),
        differentiable=False,
    )
    c(
        "Randn",
        randn,
        samples=_rand_samples("randn"),
        reference=_rand_ref("randn"),
        differentiable=False,
    )
    c(
        "Randint",
        randint,
        samples=_rand_samples("randint"),
        reference=_rand_ref("randint"),
        differentiable=False,
    )
    for name, fn, kind, names, defaults, values in (
        ("RandBeta", rand_beta, "beta", ("alpha", "beta"), (0.5, 0.5), (2.0, 3.0)),
        ("RandBinomial", rand_binomial, "binomial", ("n", "p"), (1, 0.5), (5, 0.3)),
        ("RandGamma", rand_gamma, "gamma", ("k", "theta"), (0.5, 1.0), (2.0, 1.5)),
    ):
        c(
            name,
            fn,
            samples=_dist_samples(names, values),
            reference=_dist_ref(kind, names, defaults),
            differentiable=False,
        )
