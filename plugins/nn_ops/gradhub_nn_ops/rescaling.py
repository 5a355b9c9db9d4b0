"""gradhub-nn-ops: rescaling by a norm or by statistics (nnabla 1.39 names and conventions).

``ClipByNorm``, ``NormNormalization`` and ``WeightStandardization``: composites of registered
functions, so each is differentiable to any order through its parts.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
from gradhub import Sample, Variable, as_variable
from gradhub.ops import call

from .math import axes_arg, int_arg

# -- ClipByNorm, NormNormalization, WeightStandardization ---------------------------------------


def _widened(x: Variable) -> tuple[Variable, bool]:
    """``x`` cast to float32 when it is float16 (and whether it was): the squares and sums of
    the norm-based functions overflow float16 above 256, as the reductions accumulate float16
    in float32 (docs/numerics.md)."""
    if x.dtype == np.float16:
        return call("Cast", x, dtype="float32"), True
    return x, False


def _narrowed(y: Any, half: bool) -> Any:
    return call("Cast", y, dtype="float16") if half else y


def clip_by_norm(x: Any, clip_norm: Any, axis: Any = None) -> Variable:
    r"""Rescale ``x`` to the L2 norm ``clip_norm`` where its norm over ``axis`` (all axes when
    None) is larger (nnabla ``F.clip_by_norm``):
    :math:`y = N x / \max(\|x\|_2, N)`. ``clip_norm`` is a positive number or a Variable.

    Example::

        >>> import numpy as np, gradhub as gh, gradhub.functions as F
        >>> F.clip_by_norm(gh.Variable(np.array([3.0, 4.0])), 1.0).d
        array([0.6, 0.8])
    """
    x, half = _widened(as_variable(x))
    axes = axes_arg("clip_by_norm", axis, len(x.shape))
    norm = call("PowScalar", call("Sum", x * x, axis=axes, keepdims=True), val=0.5)
    if isinstance(clip_norm, Variable):
        c_var, _ = _widened(clip_norm)
        return _narrowed(x * c_var / call("Maximum2", norm, c_var), half)  # type: ignore[no-any-return]
    if float(clip_norm) <= 0:
        raise ValueError(f"clip_by_norm: clip_norm must be positive, got {clip_norm}")
    c = float(clip_norm)
    y = call("MulScalar", x, val=c) / call("MaximumScalar", norm, val=c)
    return _narrowed(y, half)  # type: ignore[no-any-return]


def _clip_by_norm_ref(x: np.ndarray, clip_norm: Any, axis: Any = None) -> np.ndarray:
    ax = tuple(range(x.ndim)) if axis is None else axis
    n = np.sqrt(np.sum(x**2, axis=ax, keepdims=True))
    return x * clip_norm / np.maximum(n, clip_norm)


def _clip_by_norm_samples(rng: np.random.Generator) -> Iterator[Sample]:
    x = np.array([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]])
    yield Sample((x,), {"clip_norm": 2.0}, name="clipped")
    yield Sample((x,), {"clip_norm": 10.0}, name="not clipped")
    yield Sample((x,), {"clip_norm": 3.0, "axis": 1}, name="axis 1: one row clipped")
    yield Sample((x.T,), {"clip_norm": 1.0, "axis": (0,)}, name="non-contiguous")


def norm_normalization(x: Any, p: Any = None, axes: Any = None, eps: float = 1e-12) -> Variable:
    r"""Divide ``x`` by its p-norm over ``axes`` (all axes when None; ``p=None`` means 2)
    (nnabla ``F.norm_normalization``):
    :math:`y = x / (\sum |x|^p + \epsilon)^{1/p}`, ``eps`` added before the root as
    nnabla's documentation says (nnabla 1.39's CPU kernel leaves it out; with the default
    ``1e-12`` the values agree to float precision).

    Example::

        >>> import numpy as np, gradhub as gh, gradhub.functions as F
        >>> F.norm_normalization(gh.Variable(np.array([3.0, 4.0]))).d
        array([0.6, 0.8])
    """
    x, half = _widened(as_variable(x))
    pp = 2.0 if p is None else float(p)
    if pp <= 0:
        raise ValueError(f"norm_normalization: p must be positive, got {p}")
    ax = axes_arg("norm_normalization", axes, len(x.shape))
    a = x * x if pp == 2.0 else call("PowScalar", call("Abs", x), val=pp)
    s = call("AddScalar", call("Sum", a, axis=ax, keepdims=True), val=float(eps))
    return _narrowed(x * call("PowScalar", s, val=-1.0 / pp), half)  # type: ignore[no-any-return]


def _norm_normalization_ref(
    x: np.ndarray, p: Any = None, axes: Any = None, eps: float = 1e-12
) -> np.ndarray:
    pp = 2.0 if p is None else float(p)
    ax = tuple(range(x.ndim)) if axes is None else tuple(axes)
    return x / (np.sum(np.abs(x) ** pp, axis=ax, keepdims=True) + eps) ** (1.0 / pp)


def _norm_normalization_samples(rng: np.random.Generator) -> Iterator[Sample]:
    x = np.array([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]])
    yield Sample((x,), {}, name="p=2, all axes")
    yield Sample((x,), {"p": 1, "axes": (1,), "eps": 0.5}, name="p=1, axis 1")
    yield Sample((x,), {"p": 3, "axes": (0,)}, name="p=3, axis 0")
    yield Sample((x.T,), {"p": 2.5, "axes": (1,)}, name="non-contiguous")


def weight_standardization(
    w: Any, channel_axis: int = 0, eps: float = 1e-05, output_stat: bool = False
) -> Any:
    r"""Standardize a weight over every axis but ``channel_axis`` (nnabla
    ``F.weight_standardization``): :math:`\mu_i = \operatorname{mean}_j W_{ij}`,
    :math:`\sigma^2_i = \operatorname{mean}_j (W_{ij} - \mu_i)^2`,
    :math:`y_{ij} = (W_{ij} - \mu_i) / \sqrt{\sigma^2_i + \epsilon}`.

    ``output_stat=True`` returns ``(y, mean, variance)``, the statistics with kept dims (as
    nnabla's, whose third output is the variance).

    Example::

        >>> import numpy as np, gradhub as gh, gradhub.functions as F
        >>> w = gh.Variable(np.array([[1.0, 3.0], [0.0, 4.0]]))
        >>> F.weight_standardization(w, eps=0.0).d
        array([[-1.,  1.],
               [-1.,  1.]])
    """
    w, half = _widened(as_variable(w))
    nd = len(w.shape)
    ca = int_arg("weight_standardization", "channel_axis", channel_axis)
    if not -nd <= ca < nd:
        raise ValueError(
            f"weight_standardization: channel_axis={ca} is out of range for a weight with {nd} dims"
        )
    ca %= nd
    axes = tuple(a for a in range(nd) if a != ca)
    mean = call("Mean", w, axis=axes, keepdims=True)
    d = w - mean
    var = call("Mean", d * d, axis=axes, keepdims=True)
    y = d * call("PowScalar", call("AddScalar", var, val=float(eps)), val=-0.5)
    if not output_stat:
        return _narrowed(y, half)
    return tuple(_narrowed(v, half) for v in (y, mean, var))


def _weight_standardization_ref(
    w: np.ndarray, channel_axis: int = 0, eps: float = 1e-05, output_stat: bool = False
) -> Any:
    axes = tuple(a for a in range(w.ndim) if a != channel_axis % w.ndim)
    m = w.mean(axis=axes, keepdims=True)
    v = ((w - m) ** 2).mean(axis=axes, keepdims=True)
    y = (w - m) / np.sqrt(v + eps)
    return (y, m, v) if output_stat else y


def _weight_standardization_samples(rng: np.random.Generator) -> Iterator[Sample]:
    x = np.array([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]])
    yield Sample((x,), {}, name="axis 0")
    yield Sample((x,), {"channel_axis": 1, "eps": 0.1}, name="axis 1")
    yield Sample((rng.standard_normal((3, 2, 2)),), {"output_stat": True}, name="output_stat")
    yield Sample((rng.standard_normal((2, 3)).T,), {"channel_axis": -1}, name="non-contiguous")


# -- registration ------------------------------------------------------------------------------


def register_functions(register: Any) -> None:
    """Register the rescaling functions."""
    c = register.composite
    c("ClipByNorm", clip_by_norm, samples=_clip_by_norm_samples, reference=_clip_by_norm_ref)
    c(
        "NormNormalization",
        norm_normalization,
        samples=_norm_normalization_samples,
        reference=_norm_normalization_ref,
    )
    c(
        "WeightStandardization",
        weight_standardization,
        samples=_weight_standardization_samples,
        reference=_weight_standardization_ref,
    )
