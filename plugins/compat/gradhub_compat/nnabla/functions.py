"""nnabla's functions: ``import gradhub_compat.nnabla.functions as F``.

Every function registered in gradhub (``gradhub.functions``: nnabla names and arguments, e.g.
``F.convolution``, ``F.max_pooling``, ``F.softmax_cross_entropy``) is offered here, with its
Variable results adopted as :class:`gradhub_compat.nnabla.Variable` (so ``.g`` is an array and
``backward`` has nnabla's signature). Looking a name up loads the plugins, as in
``gradhub.functions``.

Example::

    >>> import numpy as np
    >>> import gradhub_compat.nnabla as nn
    >>> import gradhub_compat.nnabla.functions as F
    >>> x = nn.Variable.from_numpy_array(np.array([1.0, 2.0, 3.0]))
    >>> F.sum(x * 2.0).d
    array(12., dtype=float32)
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
from gradhub import functions as _native
from gradhub.device import context_device
from gradhub.modes import no_grad
from gradhub.registry import FunctionDef, Rule
from gradhub.variable import Variable as _NativeVariable

from .._common import adopt, host_array, wrapped_attribute
from . import _layer_functions as _layer
from ._auto_forward import (
    get_auto_forward,
    kept_unless_auto_forward,
    quiet_unless_auto_forward,
    running_array,
)
from ._quantized_layers import fused_convolution as fused_convolution
from ._quantized_layers import inq_affine as inq_affine
from ._quantized_layers import inq_convolution as inq_convolution
from ._quantized_layers import min_max_quantize as min_max_quantize
from ._resize_correlation import adaptive_separable_convolution as adaptive_separable_convolution
from ._resize_correlation import onnx_resize as onnx_resize
from ._resize_correlation import patch_correlation as patch_correlation
from ._variable import NdArray, Variable, register_random_leaf

_wrappers: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {}


def constant(val: float = 0, shape: Iterable[int] = ()) -> Variable:
    """A Variable of ``shape`` filled with ``val`` that needs no gradient (nnabla's F.constant).

    Example::

        >>> import gradhub_compat.nnabla.functions as F
        >>> F.constant(2.5, (2,)).d
        array([2.5, 2.5], dtype=float32)
    """
    dev = context_device()
    with dev.activate():
        arr = dev.xp.full(tuple(int(s) for s in shape), val, dtype=np.float32)
    v = Variable.__new__(Variable)
    _NativeVariable.__init__(v, arr, need_grad=False)
    return v


def _random_leaf(
    name: str,
    a: Any,
    b: Any,
    shape: Any,
    seed: int,
    seeded: Callable[[np.random.Generator, tuple[int, ...]], Callable[[], Any]],
) -> Variable:
    """A random leaf of the native ``name``, drawn again at each ``forward()``: with a seed
    ``>= 0``, ``seeded(rng, shape)``'s draw function on ``numpy.random.default_rng(seed)``
    (nnabla seeds the function's generator once: each forward() continues its sequence);
    otherwise the native function with ``seed=-1``."""
    native = getattr(_native, name)
    v = adopt(native(a, b, shape, seed), Variable)
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) and seed >= 0:
        draw = seeded(np.random.default_rng(int(seed)), tuple(v.shape))
        draw()  # (the values of the call itself, which the native function drew alike)
    else:

        def draw() -> Any:
            return native(a, b, shape, -1).d

    register_random_leaf(v, draw, not get_auto_forward())
    return v


def _random(name: str, kind: str, a: Any, b: Any, shape: Any, seed: int) -> Variable:
    def seeded(rng: np.random.Generator, size: tuple[int, ...]) -> Callable[[], Any]:
        def draw() -> Any:
            if kind == "uniform":
                return rng.uniform(float(a), float(b), size).astype(np.float32)
            if kind == "normal":
                return np.asarray(rng.normal(float(a), float(b), size)).astype(np.float32)
            return rng.integers(int(a), int(b), size, dtype=np.int32)

        return draw

    return _random_leaf(name, a, b, shape, seed, seeded)


def rand(low: float = 0, high: float = 1, shape: Any = (), seed: int = -1) -> Variable:
    r"""nnabla's ``F.rand``: samples of :math:`U(low, high)` of ``shape``, a float32 Variable
    that needs no gradient, **drawn again at each** ``forward()`` of a graph holding it (also
    ``forward()`` on itself), as nnabla's ``Rand`` function. ``seed=-1`` draws from gradhub's
    global generator (``gradhub.seed``), ``seed >= 0`` from a generator of its own seeded once,
    whose sequence each ``forward()`` continues (as nnabla's); numpy's generators, so the numbers
    are not nnabla's. Built with auto_forward off, it already holds the draw of its first
    ``forward()`` (nnabla's holds nothing until then), which that ``forward()`` keeps.

    Example::

        >>> import gradhub_compat.nnabla.functions as F
        >>> eps = F.rand(shape=(3,), seed=0)
        >>> y = eps * 2
        >>> y.forward()
        >>> first = y.d.copy()
        >>> y.forward()
        >>> bool((y.d != first).all()), bool(((0 <= eps.d) & (eps.d < 1)).all())
        (True, True)
    """
    return _random("rand", "uniform", low, high, shape, seed)


def randn(mu: float = 0, sigma: float = 1, shape: Any = (), seed: int = -1) -> Variable:
    r"""nnabla's ``F.randn``: samples of :math:`N(\mu, \sigma)` of ``shape`` (float32, no
    gradient), drawn again at each ``forward()`` as :func:`rand` (the VAE's reparameterization
    noise is new at every step, as in nnabla).

    Example::

        >>> import gradhub_compat.nnabla.functions as F
        >>> F.randn(shape=(2, 3), seed=1).shape
        (2, 3)
    """
    return _random("randn", "normal", mu, sigma, shape, seed)


def randint(low: int = 0, high: int = 1, shape: Any = (), seed: int = -1) -> Variable:
    r"""nnabla's ``F.randint``: integers drawn uniformly from :math:`[low, high)` of ``shape``
    (int32, no gradient), drawn again at each ``forward()`` as :func:`rand`.

    Example::

        >>> import gradhub_compat.nnabla.functions as F
        >>> x = F.randint(0, 5, shape=(4,), seed=0)
        >>> bool(((0 <= x.d) & (x.d < 5)).all())
        True
    """
    return _random("randint", "integers", low, high, shape, seed)


def _random_dist(name: str, kind: str, a: Any, b: Any, shape: Any, seed: int) -> Variable:
    """A random leaf of the native ``name`` (``rand_beta``...), drawn again at each ``forward()``
    as :func:`rand`: numpy's ``Generator.<kind>(a, b, shape)`` as float32."""

    def seeded(rng: np.random.Generator, size: tuple[int, ...]) -> Callable[[], Any]:
        rng_draw = getattr(rng, kind)

        def draw() -> Any:
            return np.asarray(rng_draw(a, b, size), np.float32)

        return draw

    return _random_leaf(name, a, b, shape, seed, seeded)


def rand_beta(alpha: float = 0.5, beta: float = 0.5, shape: Any = (), seed: int = -1) -> Variable:
    r"""nnabla's ``F.rand_beta``: samples of :math:`B(\alpha, \beta)` of ``shape`` (float32, no
    gradient), drawn again at each ``forward()`` as :func:`rand` (numpy's generators: not
    nnabla's numbers).

    Example::

        >>> import gradhub_compat.nnabla.functions as F
        >>> x = F.rand_beta(2.0, 3.0, shape=(3,), seed=0)
        >>> bool(((0 < x.d) & (x.d < 1)).all())
        True
    """
    return _random_dist("rand_beta", "beta", alpha, beta, shape, seed)


def rand_binomial(n: int = 1, p: float = 0.5, shape: Any = (), seed: int = -1) -> Variable:
    r"""nnabla's ``F.rand_binomial``: numbers of successes of :math:`B(n, p)` of ``shape``
    (float32, as nnabla's; no gradient), drawn again at each ``forward()`` as :func:`rand`.

    Example::

        >>> import gradhub_compat.nnabla.functions as F
        >>> x = F.rand_binomial(4, 0.5, shape=(3,), seed=0)
        >>> bool(((0 <= x.d) & (x.d <= 4)).all()), x.d.dtype
        (True, dtype('float32'))
    """
    return _random_dist("rand_binomial", "binomial", n, p, shape, seed)


def rand_gamma(k: float = 0.5, theta: float = 1, shape: Any = (), seed: int = -1) -> Variable:
    r"""nnabla's ``F.rand_gamma``: samples of :math:`\Gamma(k, \theta)` (shape ``k``, scale
    ``theta``) of ``shape`` (float32, no gradient), drawn again at each ``forward()`` as
    :func:`rand`.

    Example::

        >>> import gradhub_compat.nnabla.functions as F
        >>> bool((F.rand_gamma(2.0, 1.5, shape=(3,), seed=0).d > 0).all())
        True
    """
    return _random_dist("rand_gamma", "gamma", k, theta, shape, seed)


def random_choice(x: Any, w: Any, shape: Any = (), replace: bool = True, seed: int = -1) -> Any:
    r"""nnabla's ``F.random_choice``: from each row of ``x`` (its last axis, ``K`` values)
    ``prod(shape)`` elements drawn with probabilities proportional to the row of ``w`` (same shape
    as ``x``, weights >= 0), with or without ``replace``; the output has shape
    ``x.shape[:-1] + shape``. The choices are drawn again at each ``forward()`` (as
    :func:`rand`; numpy's generators, so other choices than nnabla's), reading ``w``'s values of
    the moment. Gradients as nnabla's: both ``x`` and ``w`` get the incoming gradient summed at
    the chosen positions (recorded as ``Gather`` of ``x`` plus a ``Gather`` of ``w`` minus its
    ``stop_gradient``, exactly 0 in value). Without ``replace``, a row with fewer positive
    weights than draws raises ValueError (nnabla: RuntimeError at ``forward()``).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.array([[1.0, 2.0, 3.0]]))
        >>> w = nn.Variable.from_numpy_array(np.array([[0.0, 0.0, 1.0]]))
        >>> F.random_choice(x, w, shape=(2,), seed=0).d
        array([[3., 3.]], dtype=float32)
    """
    xv, wv = _as_variable(x, "random_choice"), _as_variable(w, "random_choice")
    if tuple(xv.shape) != tuple(wv.shape) or len(xv.shape) < 1:
        raise ValueError(
            f"nnabla F.random_choice: x of shape {tuple(xv.shape)} and w of shape "
            f"{tuple(wv.shape)} must have the same shape, at least 1-d"
        )
    size = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
    lead, k = tuple(int(n) for n in xv.shape[:-1]), int(xv.shape[-1])
    draws = math.prod(size)
    own = _augment_rng("random_choice", seed)

    def draw() -> np.ndarray:
        weights = host_array(wv.d).astype(np.float64).reshape(-1, k)
        if (weights < 0).any() or not np.isfinite(weights).all():
            raise ValueError("nnabla F.random_choice: the weights w must be finite and >= 0")
        rng = own
        if rng is None:  # the random functions' global generator (nn.random.seed)
            rng = np.random.default_rng(int(_integers(None, 0, 2**31 - 1, ())))
        rows = []
        for row in weights:
            total = row.sum()
            if total <= 0 or (not replace and np.count_nonzero(row) < draws):
                raise ValueError(
                    "nnabla F.random_choice: a row of w has "
                    + ("no positive weight" if total <= 0 else "fewer positive weights than draws")
                    + " (sampling without replacement needs one per draw)"
                )
            rows.append(rng.choice(k, size=draws, replace=bool(replace), p=row / total))
        return np.asarray(rows, dtype=np.int64).reshape(*lead, *size)

    idx = Variable.from_numpy_array(draw())
    register_random_leaf(idx, draw, not get_auto_forward())
    gather, stop = __getattr__("gather"), __getattr__("stop_gradient")
    nb = len(lead)
    picked_w = gather(wv, idx, axis=nb, batch_dims=nb)
    return gather(xv, idx, axis=nb, batch_dims=nb) + (picked_w - stop(picked_w))


def _augment_rng(fn: str, seed: Any) -> Any:
    """A generator of its own for ``seed >= 0``, None for the random functions' global one."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < -1:
        raise ValueError(f"nnabla F.{fn}: seed must be -1 or an int >= 0, got {seed!r}")
    return np.random.default_rng(int(seed)) if seed >= 0 else None


def _integers(rng: Any, low: int, high: int, size: tuple[int, ...]) -> np.ndarray:
    """Integers in ``[low, high)``: from ``rng``, or (None) from the global generator of the
    random functions (``F.randint(..., seed=-1)``'s, reseeded by ``nn.random.seed``)."""
    if rng is not None:
        return rng.integers(low, high, size)
    return host_array(_native.randint(low, high, size, -1).d).astype(np.int64)


def _augment_axes(fn: str, x: Any, base_axis: Any, sizes: Any, what: str) -> list[int]:
    """The axes (aligned to the last ones, after ``base_axis``) that ``sizes`` give values for."""
    nd = len(x.shape)
    if isinstance(base_axis, bool) or not isinstance(base_axis, (int, np.integer)):
        raise TypeError(f"nnabla F.{fn}: base_axis must be an int, got {base_axis!r}")
    if not 0 <= base_axis < nd:
        raise ValueError(f"nnabla F.{fn}: base_axis={base_axis} is out of range for {x.shape}")
    if len(sizes) > nd - base_axis:
        raise ValueError(
            f"nnabla F.{fn}: {what} {tuple(sizes)} has more entries than the axes after "
            f"base_axis={base_axis} of an input of shape {tuple(x.shape)}"
        )
    return list(range(nd - len(sizes), nd))


def _gathered(x: Any, base_axis: int, axis: int, draw: Callable[[], np.ndarray]) -> Any:
    """``x`` gathered along ``axis`` with per-sample indices (``x.shape[:base_axis] + (L,)``)
    that ``draw`` returns, drawn again at each ``forward()`` (a random leaf)."""
    idx = Variable.from_numpy_array(draw())
    register_random_leaf(idx, draw, not get_auto_forward())
    return _native.gather(x, idx, axis=axis, batch_dims=base_axis)


def random_flip(x: Any, axes: Any = None, base_axis: int = 1, seed: int = -1) -> Any:
    r"""nnabla's ``F.random_flip``: each sample (the axes before ``base_axis``) is reversed along
    each of ``axes`` (default: the last axis) with probability 1/2, the choices drawn again at
    each ``forward()`` (as nnabla's random functions; numpy's generator, so other choices than
    nnabla's for the same seed). The gradient is reversed back, as nnabla's.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.tile(np.arange(3.0), (4, 1)))
        >>> y = F.random_flip(x, seed=0)
        >>> sorted({tuple(r) for r in y.d.tolist()})
        [(0.0, 1.0, 2.0), (2.0, 1.0, 0.0)]
    """
    x = _as_variable(x, "random_flip")
    nd = len(x.shape)
    axes = [nd - 1] if axes is None else [int(a) + nd if int(a) < 0 else int(a) for a in axes]
    if any(not base_axis <= a < nd for a in axes):
        raise ValueError(f"nnabla F.random_flip: axes {axes} must lie in [base_axis, {nd})")
    _augment_axes("random_flip", x, base_axis, [], "axes")
    rng = _augment_rng("random_flip", seed)
    samples = tuple(x.shape[:base_axis])
    h = x
    for a in axes:
        n = x.shape[a]

        def draw(n: int = n) -> np.ndarray:
            flip = _integers(rng, 0, 2, samples + (1,)).astype(bool)
            return np.where(flip, np.arange(n)[::-1], np.arange(n)).astype(np.int64)

        h = _gathered(h, base_axis, a, draw)
    return adopt(h, Variable)


def random_shift(
    x: Any,
    shifts: Any = None,
    border_mode: str = "nearest",
    constant_value: float = 0,
    base_axis: int = 1,
    seed: int = -1,
) -> Any:
    r"""nnabla's ``F.random_shift``: each sample (the axes before ``base_axis``) is shifted along
    the last ``len(shifts)`` axes by an integer drawn uniformly from ``[-shifts[k], shifts[k]]``,
    ``y[..., j] = x[..., j + s]``; the places outside the input take the nearest element
    (``border_mode="nearest"``), the mirrored one (``"reflect"``: ``-1`` reads ``0``, ``L``
    reads ``L - 1``, as nnabla's) or ``constant_value`` (``"constant"``). The shifts are drawn
    again at each ``forward()`` (numpy's generator, so other shifts than nnabla's for the same
    seed); the gradient goes back to the elements read, summed where one was read several
    times, as nnabla's.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.tile(np.arange(4.0), (50, 1)))
        >>> y = F.random_shift(x, (1,), seed=0)
        >>> sorted({tuple(r) for r in y.d.tolist()})
        [(0.0, 0.0, 1.0, 2.0), (0.0, 1.0, 2.0, 3.0), (1.0, 2.0, 3.0, 3.0)]
    """
    x = _as_variable(x, "random_shift")
    if border_mode not in ("nearest", "reflect", "constant"):
        raise ValueError(
            "nnabla F.random_shift: border_mode must be 'nearest', 'reflect' or 'constant', "
            f"got {border_mode!r}"
        )
    shifts = [0] * (len(x.shape) - base_axis) if shifts is None else [int(s) for s in shifts]
    if any(s < 0 for s in shifts):
        raise ValueError(f"nnabla F.random_shift: shifts must be >= 0, got {shifts}")
    axes = _augment_axes("random_shift", x, base_axis, shifts, "shifts")
    rng = _augment_rng("random_shift", seed)
    samples = tuple(x.shape[:base_axis])
    h = x
    for a, m in zip(axes, shifts):
        if m == 0:
            continue
        n = x.shape[a]
        if border_mode == "constant":
            pad = [m, m] + [0, 0] * (len(x.shape) - 1 - a)
            h = _native.pad(h, tuple(pad), mode="constant", constant_value=constant_value)

        def draw(n: int = n, m: int = m) -> np.ndarray:
            s = _integers(rng, -m, m + 1, samples + (1,))
            i = np.arange(n) + s
            if border_mode == "nearest":
                i = np.clip(i, 0, n - 1)
            elif border_mode == "reflect":
                for _ in range(2 * (m // n + 1)):
                    i = np.where(i < 0, -i - 1, np.where(i >= n, 2 * n - 1 - i, i))
            else:
                i = i + m  # (into the padded input)
            return i.astype(np.int64)

        h = _gathered(h, base_axis, a, draw)
    return adopt(h, Variable)


def random_crop(x: Any, shape: Any = None, base_axis: int = 1, seed: int = -1) -> Any:
    r"""nnabla's ``F.random_crop``: from each sample (the axes before ``base_axis``) a block of
    ``shape`` (the last ``len(shape)`` axes) at an offset drawn uniformly, again at each
    ``forward()`` (numpy's generator, so other offsets than nnabla's for the same seed); the
    gradient goes back to the block, zero elsewhere, as nnabla's. ``shape`` None keeps the
    input.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.arange(2 * 1 * 4 * 4).reshape(2, 1, 4, 4))
        >>> F.random_crop(x, (2, 3), seed=0).shape
        (2, 1, 2, 3)
    """
    x = _as_variable(x, "random_crop")
    shape = list(x.shape[base_axis:]) if shape is None else [int(s) for s in shape]
    axes = _augment_axes("random_crop", x, base_axis, shape, "shape")
    for a, m in zip(axes, shape):
        if not 0 < m <= x.shape[a]:
            raise ValueError(
                f"nnabla F.random_crop: shape {tuple(shape)} does not fit in the input's shape "
                f"{tuple(x.shape)}"
            )
    rng = _augment_rng("random_crop", seed)
    samples = tuple(x.shape[:base_axis])
    h = x
    for a, m in zip(axes, shape):
        n = x.shape[a]
        if m == n:
            continue

        def draw(n: int = n, m: int = m) -> np.ndarray:
            off = _integers(rng, 0, n - m + 1, samples + (1,))
            return (np.arange(m) + off).astype(np.int64)

        h = _gathered(h, base_axis, a, draw)
    return adopt(h, Variable)


def image_augmentation(
    x: Any,
    shape: Any = None,
    pad: Any = (0, 0),
    min_scale: float = 1.0,
    max_scale: float = 1.0,
    angle: float = 0.0,
    aspect_ratio: float = 1.0,
    distortion: float = 0.0,
    flip_lr: bool = False,
    flip_ud: bool = False,
    brightness: float = 0.0,
    brightness_each: bool = False,
    contrast: float = 1.0,
    contrast_center: float = 0.0,
    contrast_each: bool = False,
    noise: float = 0.0,
    seed: int = -1,
) -> Any:
    r"""nnabla's ``F.image_augmentation``: each image of ``x`` (``(..., C, H, W)``) scaled by a
    factor drawn log-uniformly from ``[min_scale, max_scale]`` (and an aspect ratio from
    ``[1/aspect_ratio, aspect_ratio]``), rotated by an angle from ``[-angle, angle]``
    (radians), cropped at a uniform position into ``shape`` (the last axes of the output;
    ``pad`` widens the input for the crop), flipped (``flip_lr``, ``flip_ud``: each with
    probability 1/2), distorted radially, sampled bilinearly (positions clamped to the image),
    then ``(v + b - contrast_center) * c + contrast_center`` with a brightness ``b`` from
    ``[-brightness, brightness]`` and a contrast ``c`` from ``[1/contrast, contrast]`` (per
    channel with ``*_each``), plus normal noise of a standard deviation from ``[0, noise]``.

    As nnabla 1.39's CPU kernel (the same generator, ``std::mt19937``, and the same order of
    draws): with ``seed >= 0`` the values are nnabla's within float32 rounding, a new draw at
    each ``forward()``; ``seed=-1`` seeds the function's generator from the random functions'
    global one (``nn.random.seed``), so the draws differ from nnabla's. No gradient, as
    nnabla's. A recorded node: ``forward()`` recomputes it from ``x``'s current data.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.random.RandomState(0).rand(2, 1, 8, 8))
        >>> y = F.image_augmentation(x, (1, 6, 6), min_scale=0.9, max_scale=1.1, seed=3)
        >>> y.forward()
        >>> y.shape
        (2, 1, 6, 6)
    """
    from ._image_augmentation import ImageAugmentation

    x = _as_variable(x, "image_augmentation")
    shape = tuple(x.shape) if shape is None else tuple(int(s) for s in shape)
    if len(shape) < 2 or len(x.shape) < 2 or len(shape) > len(x.shape):
        raise ValueError(
            f"nnabla F.image_augmentation: shape {shape} must have 2 to {len(x.shape)} entries "
            "(height and width last) for an input of shape "
            f"{tuple(x.shape)}"
        )
    if tuple(shape[:-2]) != tuple(x.shape[len(x.shape) - len(shape) : -2]):
        raise ValueError(
            f"nnabla F.image_augmentation: shape {shape} may change only the height and width "
            f"of an input of shape {tuple(x.shape)}"
        )
    pad = tuple(int(p) for p in pad)
    if len(pad) != 2:
        raise ValueError(f"nnabla F.image_augmentation: pad must be 2-d (height, width), got {pad}")
    if min_scale <= 0 or max_scale <= 0 or aspect_ratio <= 0 or contrast <= 0:
        raise ValueError(
            "nnabla F.image_augmentation: min_scale, max_scale, aspect_ratio and contrast must "
            "be positive"
        )
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < -1:
        raise ValueError(f"nnabla F.image_augmentation: seed must be -1 or >= 0, got {seed!r}")
    if seed == -1:
        seed = int(_integers(None, 0, 2**31 - 1, ()))
    out_shape = tuple(x.shape[: len(x.shape) - len(shape)]) + shape
    args = {
        "pad": pad,
        "min_scale": float(min_scale),
        "max_scale": float(max_scale),
        "angle": float(angle),
        "aspect_ratio": float(aspect_ratio),
        "distortion": float(distortion),
        "flip_lr": bool(flip_lr),
        "flip_ud": bool(flip_ud),
        "brightness": float(brightness),
        "brightness_each": bool(brightness_each),
        "contrast": float(contrast),
        "contrast_center": float(contrast_center),
        "contrast_each": bool(contrast_each),
        "noise": float(noise),
    }
    fn = ImageAugmentation(out_shape, args, int(seed), not get_auto_forward())
    return adopt(fn(x), Variable)


def _pair(fn: str, name: str, v: Any) -> tuple[float, float]:
    try:
        vals = tuple(float(e) for e in v)
    except (TypeError, ValueError):
        raise TypeError(f"nnabla F.{fn}: {name} must be a pair of numbers, got {v!r}") from None
    if len(vals) != 2:
        raise ValueError(f"nnabla F.{fn}: the length of {name} must be 2, got {v!r}")
    return vals[0], vals[1]


def random_erase(
    x: Any,
    prob: float = 0.5,
    area_ratios: Any = (0.02, 0.4),
    aspect_ratios: Any = (0.3, 3.3333),
    replacements: Any = (0.0, 255.0),
    n: Any = None,
    share: bool = True,
    inplace: bool = False,
    base_axis: int = 1,
    seed: int = -1,
    channel_last: bool = False,
    ste_fine_grained: bool = True,
) -> Any:
    r"""nnabla's ``F.random_erase``: in each image of ``x`` (``(..., C, H, W)``: the axes before
    ``base_axis`` are the samples, then channels, height and width), ``n`` times (default 1),
    with probability ``prob``, a patch is replaced by values drawn uniformly from
    ``replacements``; the patch (one per sample, or per channel with ``share=False``) has an
    area :math:`S_e = U(\text{area\_ratios}) \cdot H W` and an aspect ratio
    :math:`r_e = U(\text{aspect\_ratios})`, so :math:`H_e = \lfloor\sqrt{S_e r_e}\rfloor`,
    :math:`W_e = \lfloor\sqrt{S_e / r_e}\rfloor` (at most H, W), and starts at a uniform
    :math:`y_e \in [0, H - H_e]`, :math:`x_e \in [0, W - W_e]`; as nnabla's kernel, the rows
    :math:`y_e` to :math:`y_e + H_e` and the columns :math:`x_e` to :math:`x_e + W_e` are
    erased (both ends included, clipped to the image).

    As nnabla 1.39's CPU kernel (the generator ``std::mt19937``, libstdc++'s distributions, the
    same order of draws): with ``seed >= 0`` the output is nnabla's, a new draw at each
    ``forward()``; ``seed=-1`` seeds the function's generator from the random functions' global
    one (``nn.random.seed``), so the draws differ from nnabla's. Gradient: with
    ``ste_fine_grained`` (default) the incoming gradient, zero on the pixels the last
    ``forward()`` erased; otherwise the incoming gradient everywhere (a straight-through
    estimator). ``inplace`` is ignored, as in nnabla; ``channel_last=True`` is refused
    (``NotImplementedError``; nnabla's CPU kernel refuses it too).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.zeros((2, 1, 8, 8)), need_grad=True)
        >>> y = F.random_erase(x, prob=1.0, replacements=(1.0, 2.0), seed=0)
        >>> y.forward()
        >>> erased = y.d > 0
        >>> bool(erased[0].any() and erased[1].any()), bool((y.d[erased] >= 1).all())
        (True, True)
        >>> y.backward(np.ones((2, 1, 8, 8)))
        >>> bool((x.g == ~erased).all())
        True
    """
    from gradhub.graph import apply

    from ._image_augmentation import RANDOM_ERASE, EraseState

    fn = "random_erase"
    x = _as_variable(x, fn)
    nd = len(x.shape)
    if isinstance(base_axis, bool) or not isinstance(base_axis, (int, np.integer)):
        raise TypeError(f"nnabla F.{fn}: base_axis must be an int, got {base_axis!r}")
    if not 0 <= base_axis < nd or nd - base_axis != 3:
        raise ValueError(
            f"nnabla F.{fn}: only images are supported: x must have 3 axes (C, H, W) from "
            f"base_axis, got base_axis={base_axis} for x of shape {tuple(x.shape)}"
        )
    if channel_last:
        raise NotImplementedError(
            f"nnabla F.{fn}: channel_last=True is not supported (nnabla's CPU kernel refuses "
            "it too; see docs/migration-nnabla.md)"
        )
    if isinstance(prob, bool) or not isinstance(prob, (int, float, np.integer, np.floating)):
        raise TypeError(f"nnabla F.{fn}: prob must be a number, got {prob!r}")
    if not 0.0 <= prob <= 1.0:
        raise ValueError(f"nnabla F.{fn}: prob must be in [0.0, 1.0], got {prob!r}")
    n = 1 if n is None else n
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n <= 0:
        raise ValueError(f"nnabla F.{fn}: n must be a positive int, got {n!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < -1:
        raise ValueError(f"nnabla F.{fn}: seed must be -1 or an int >= 0, got {seed!r}")
    lo, hi = _pair(fn, "aspect_ratios", aspect_ratios)
    if lo <= 0 or hi <= 0:
        raise ValueError(f"nnabla F.{fn}: aspect_ratios must be positive, got {aspect_ratios!r}")
    args = {
        "prob": float(prob),
        "area_ratios": list(_pair(fn, "area_ratios", area_ratios)),
        "aspect_ratios": [lo, hi],
        "replacements": list(_pair(fn, "replacements", replacements)),
        "n": int(n),
        "share": bool(share),
        "inplace": bool(inplace),
        "base_axis": int(base_axis),
        "seed": int(seed),
        "channel_last": False,
        "ste_fine_grained": bool(ste_fine_grained),
    }
    gen_seed = int(seed) if seed >= 0 else int(_integers(None, 0, 2**31 - 1, ()))
    args["refs"] = EraseState(gen_seed, not get_auto_forward())
    return adopt(apply(RANDOM_ERASE, (x,), args), Variable)


def identity(x: Any) -> Any:
    r"""nnabla's Identity: :math:`y = x` (a copy), the gradient passed through unchanged.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.array([1.0, 2.0]), need_grad=True)
        >>> y = F.identity(x)
        >>> y.backward(); y.d, x.g
        (array([1., 2.], dtype=float32), array([1., 1.], dtype=float32))
    """
    if type(x) is NdArray:
        return NdArray._of(x.data.copy())
    return adopt(_layer.identity(_as_variable(x, "identity")), Variable)


def sink(*x: Any, one_input_grad: bool = True) -> Variable:
    r"""nnabla's Sink: one scalar output that gathers several outputs, so that one
    ``forward()``/``backward()`` call computes all of them.

    Its value is 0 (nnabla leaves it uninitialized). Its backward ignores the incoming gradient:
    with ``one_input_grad`` (the default) each input's gradient is 1,
    :math:`\partial L / \partial x_i = 1`; otherwise it is what the input holds in ``.g`` when
    the backward pass reaches it (set beforehand, e.g. ``y.g = dy``), as nnabla's.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.array([1.0, 2.0]), need_grad=True)
        >>> s = F.sink(x * 2.0, F.sum(x * x))
        >>> s.forward(); s.backward()
        >>> x.g                                   # 2 * 1 + 2 x * 1
        array([4., 6.], dtype=float32)
    """
    if not x:
        raise TypeError("nnabla F.sink: give at least one Variable")
    xs = [_as_variable(v, f"sink (input {i})") for i, v in enumerate(x)]
    return adopt(_layer.sink(xs, one_input_grad), Variable)  # type: ignore[no-any-return]


# -- Unlink and Assign ----------------------------------------------------------------------------


def _unlink_kernel(xp: Any, x: Any) -> Any:
    return x.copy()


def _grads_rule(grads: Callable[..., list[Any]]) -> Rule:
    """A backward rule that keeps nothing from the forward pass and whose gradients are
    ``grads(grad_outputs, input_shapes, **attrs)`` both as the rule (on Variables) and as its
    fast version (on arrays)."""

    def rule(gy: Any, ins: Any, in_shapes: Any, outs: Any, out_shapes: Any, **a: Any) -> Any:
        return grads(gy, in_shapes, **a)

    def fast(
        xp: Any, gy: Any, ins: Any, in_shapes: Any, outs: Any, out_shapes: Any, **a: Any
    ) -> Any:
        return grads(gy, in_shapes, **a)

    rule.__name__ = rule.__qualname__ = grads.__name__
    fast.__name__ = fast.__qualname__ = f"{grads.__name__}_fast"
    return Rule(rule, _layer._PROVIDER, (), (), fast=fast)


def _no_grads(gy: Any, in_shapes: Any, **a: Any) -> list[Any]:
    return [None] * len(in_shapes)


_UNLINK = FunctionDef(
    "Unlink",
    _unlink_kernel,
    _layer._PROVIDER,
    inputs=("x",),
    rule=_grads_rule(_no_grads),
    doc="nnabla's Unlink: y = x (a copy); no gradient reaches x",
)


def _unlink_graph(x: Any) -> Any:
    from gradhub.graph import apply

    return apply(_UNLINK, (_native_variable(x),), {})


def unlink(x: Any) -> Any:
    r"""nnabla's ``F.unlink``: :math:`y = x` (a copy, recomputed by ``forward()``) through which no
    gradient flows back to ``x``; one ``Unlink`` function, whose output needs a gradient when
    ``x`` does (as nnabla's), so a graph built on it still backpropagates to its other inputs.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.array([1.0, 2.0]), need_grad=True)
        >>> y = F.sum(F.unlink(x) * x)
        >>> y.forward(); y.backward()
        >>> x.g                                   # d(c x)/dx with c = x held constant
        array([1., 2.], dtype=float32)
    """
    return _on_ndarrays(_unlink_graph)(x)


def _assign_kernel(xp: Any, dst: Any, src: Any) -> Any:
    dst[...] = src
    return dst.copy()


def _assign_grads(gy: Any, in_shapes: Any) -> list[Any]:
    return [gy[0], None]


_ASSIGN = FunctionDef(
    "Assign",
    _assign_kernel,
    _layer._PROVIDER,
    inputs=("dst", "src"),
    rule=_grads_rule(_assign_grads),
    doc="nnabla's Assign: dst's data becomes src's; y = dst; the gradient goes to dst only",
)


def _assign_graph(dst: Any, src: Any) -> Any:
    from gradhub.graph import apply

    d, s = _native_variable(dst), _native_variable(src)
    if tuple(d.shape) != tuple(s.shape):
        raise ValueError(
            f"nnabla F.assign: dst and src must have the same shape, got {tuple(d.shape)} and "
            f"{tuple(s.shape)}"
        )
    with kept_unless_auto_forward([d._data]):
        return apply(_ASSIGN, (d, s), {})


def assign(dst: Any, src: Any) -> Any:
    r"""nnabla's ``F.assign``: each execution (``forward()``; the build too while auto_forward is
    on) copies ``src``'s data into ``dst``'s, in place, and the output is ``dst`` after that
    (equal to ``src``). The gradient goes to ``dst`` only, :math:`g_{dst} = g_y`; ``src`` gets
    none, as nnabla's. One ``Assign`` function; a static graph assigns again at each
    ``forward()``, reading ``src``'s current data.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> dst = nn.Variable.from_numpy_array(np.array([1.0, 2.0]))
        >>> src = nn.Variable.from_numpy_array(np.array([5.0, 6.0]))
        >>> y = F.assign(dst, src)
        >>> dst.d                                 # building does not assign (auto_forward off)
        array([1., 2.], dtype=float32)
        >>> y.forward()
        >>> dst.d, y.d
        (array([5., 6.], dtype=float32), array([5., 6.], dtype=float32))
    """
    return _on_ndarrays(_assign_graph)(dst, src)


def softmax_cross_entropy(x: Any, target: Any, axis: Any = None) -> Any:
    r"""nnabla's softmax cross entropy, :math:`y_i = -\log \mathrm{softmax}(x)_{i, t_i}`, where
    a negative label :math:`t_i < 0` gives a loss of 0 and no gradient (nnabla 1.39 skips it).

    The labels are read at each execution, so a new ``target.d`` with or without negative
    labels is honoured by ``forward()``. Labels at or above the number of classes raise
    ``ValueError`` (nnabla reads outside the row then). One recorded node, named
    ``SoftmaxCrossEntropy`` as nnabla's.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.zeros((2, 4)), need_grad=True)
        >>> t = nn.Variable.from_numpy_array(np.array([[1], [-1]]))
        >>> F.softmax_cross_entropy(x, t).d.ravel()
        array([1.3862944, 0.       ], dtype=float32)
    """
    if type(x) is NdArray or type(target) is NdArray:
        return _ndarray_call(_layer.softmax_cross_entropy, (x, target), {"axis": axis})
    x = _as_variable(x, "softmax_cross_entropy (x)")
    target = _as_variable(target, "softmax_cross_entropy (target)")
    return adopt(_layer.softmax_cross_entropy(x, target, axis), Variable)


def _base_axis(fname: str, x: Any, base_axis: Any) -> Any:
    """nnabla's negative ``base_axis``: counted from the end (-1 is the last axis)."""
    if isinstance(base_axis, (int, np.integer)) and not isinstance(base_axis, bool):
        if base_axis < 0:
            nd = len(x.shape)
            if base_axis < -nd:
                raise ValueError(
                    f"nnabla F.{fname}: base_axis={base_axis} is out of range for x of shape "
                    f"{tuple(x.shape)} (from -{nd} to {nd - 1})"
                )
            return int(base_axis) + nd
    return base_axis


def affine(x: Any, weight: Any, bias: Any = None, base_axis: int = 1) -> Any:
    r"""nnabla's affine, :math:`y = x W + b` over the axes of ``x`` from ``base_axis`` on; a
    negative ``base_axis`` counts from the end (-1: the last axis), as nnabla.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.ones((2, 3, 4)))
        >>> w = nn.Variable.from_numpy_array(np.ones((4, 5)))
        >>> F.affine(x, w, base_axis=-1).shape
        (2, 3, 5)
    """
    fn = _on_ndarrays(_native.affine)
    out = fn(x, weight, bias, _base_axis("affine", x, base_axis))
    return adopt(out, Variable)


def max(
    x: Any,
    axis: Any = None,
    keepdims: bool = False,
    with_index: bool = False,
    only_index: bool = False,
) -> Any:
    r"""nnabla's max over ``axis``; at ties the gradient goes to the first maximum only (the one
    ``with_index`` returns), as nnabla's backward.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.array([[1.0, 3.0, 3.0]]), need_grad=True)
        >>> y = F.max(x, axis=1)
        >>> y.backward()
        >>> x.g
        array([[0., 1., 0.]], dtype=float32)
    """
    fn = _on_ndarrays(_native.max)
    return fn(x, axis, keepdims, with_index, only_index, ties="first")


def min(
    x: Any,
    axis: Any = None,
    keepdims: bool = False,
    with_index: bool = False,
    only_index: bool = False,
) -> Any:
    r"""nnabla's min over ``axis``; at ties the gradient goes to the first minimum only (the one
    ``with_index`` returns), as nnabla's backward.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> F.min(nn.Variable.from_numpy_array(np.array([[4.0, 1.0, 1.0]])), axis=1).d
        array([1.], dtype=float32)
    """
    fn = _on_ndarrays(_native.min)
    return fn(x, axis, keepdims, with_index, only_index, ties="first")


def maximum2(x0: Any, x1: Any) -> Any:
    r"""nnabla's elementwise :math:`\max(x_0, x_1)`; at a tie the gradient goes to ``x1``, as
    nnabla's backward.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> a = nn.Variable.from_numpy_array(np.array([1.0, 2.0]), need_grad=True)
        >>> b = nn.Variable.from_numpy_array(np.array([1.0, 0.0]), need_grad=True)
        >>> F.maximum2(a, b).backward()
        >>> a.g, b.g
        (array([0., 1.], dtype=float32), array([1., 0.], dtype=float32))
    """
    return _on_ndarrays(_native.maximum2)(x0, x1, ties="second")


def minimum2(x0: Any, x1: Any) -> Any:
    r"""nnabla's elementwise :math:`\min(x_0, x_1)`; at a tie the gradient goes to ``x1``, as
    nnabla's backward.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> a = nn.Variable.from_numpy_array(np.array([1.0, 2.0]))
        >>> F.minimum2(a, nn.Variable.from_numpy_array(np.array([1.0, 0.0]))).d
        array([1., 0.], dtype=float32)
    """
    return _on_ndarrays(_native.minimum2)(x0, x1, ties="second")


def sign(x: Any, alpha: float = 1.0) -> Any:
    r"""nnabla's sign: :math:`1` for :math:`x > 0`, :math:`-1` for :math:`x < 0`, ``alpha`` at 0;
    its gradient is the incoming gradient unchanged (nnabla's straight-through estimator,
    :math:`\partial y / \partial x = 1`), its second derivative 0.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.array([-1.5, 0.0, 2.0]), need_grad=True)
        >>> y = F.sign(x)
        >>> y.backward()
        >>> y.d, x.g
        (array([-1.,  1.,  1.], dtype=float32), array([1., 1., 1.], dtype=float32))
    """
    return _on_ndarrays(_ste)(functools.partial(_native.sign, alpha=alpha), x)


def _ste(fn: Callable[..., Any], x: Any) -> Any:
    """``fn(x)`` (a non-differentiable function: sign, a rounding) whose gradient is the
    incoming one (nnabla's straight-through estimator): ``fn(x) + (c - stop_gradient(c))`` with
    ``c`` the gradient path, exactly 0 in the forward pass, also when ``forward()`` re-executes
    the graph on new data (``c`` is ``x`` clipped to the finite range, so an infinite ``x``
    gives ``fn(x)``, not NaN)."""
    x = _native_variable(x)
    if x.dtype.kind != "f":
        return fn(x)
    big = float(np.finfo(x.dtype).max)
    c = _native.clip_by_value(x, -big, big)
    return fn(x) + (c - _native.stop_gradient(c))


def round(x: Any) -> Any:
    r"""nnabla's round: the nearest integer, halves away from zero (``round(-2.5) = -3``); its
    gradient is the incoming gradient unchanged (nnabla's straight-through estimator,
    :math:`\partial y / \partial x = 1`), its second derivative 0. gradhub's ``F.round`` has no
    gradient.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.array([-2.5, 0.5, 1.2]), need_grad=True)
        >>> y = F.round(x)
        >>> y.backward()
        >>> y.d, x.g
        (array([-3.,  1.,  1.], dtype=float32), array([1., 1., 1.], dtype=float32))
    """
    return _on_ndarrays(_ste)(_native.round, x)


def ceil(x: Any) -> Any:
    r"""nnabla's ceil, :math:`y = \lceil x \rceil`, with the straight-through gradient
    :math:`\partial y / \partial x = 1` (second derivative 0), as nnabla.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.array([-1.5, 1.2]), need_grad=True)
        >>> y = F.ceil(x)
        >>> y.backward()
        >>> y.d, x.g
        (array([-1.,  2.], dtype=float32), array([1., 1.], dtype=float32))
    """
    return _on_ndarrays(_ste)(_native.ceil, x)


def floor(x: Any) -> Any:
    r"""nnabla's floor, :math:`y = \lfloor x \rfloor`, with the straight-through gradient
    :math:`\partial y / \partial x = 1` (second derivative 0), as nnabla.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.array([-1.5, 1.2]), need_grad=True)
        >>> y = F.floor(x)
        >>> y.backward()
        >>> y.d, x.g
        (array([-2.,  1.], dtype=float32), array([1., 1.], dtype=float32))
    """
    return _on_ndarrays(_ste)(_native.floor, x)


def _binary(x: Any, low: float, slope: float) -> Any:
    """``1`` for ``x > 0``, else ``low``, plus ``slope * (c - stop_gradient(c))`` with ``c`` =
    ``hard_tanh(x)``: the gradient is ``slope`` for ``|x| < 1`` and 0 elsewhere (at ``|x| = 1``
    included), as nnabla's BinaryTanh / BinarySigmoid."""
    x = _native_variable(x)
    if x.dtype.kind != "f":
        x = _native.cast(x, "float32")
    y = _native.greater_scalar(x, 0.0)
    if low != 0.0:
        y = y * (1.0 - low) + low
    c = _native.hard_tanh(x)
    d = c - _native.stop_gradient(c)
    return y + (d * slope if slope != 1.0 else d)


def binary_tanh(x: Any) -> Any:
    r"""nnabla's binary tanh: :math:`y = 1` for :math:`x > 0`, else :math:`-1`; its gradient
    is nnabla's straight-through approximation, 1 for :math:`|x| < 1` and 0 for
    :math:`|x| \ge 1` (the gradient of ``hard_tanh``), the second derivative 0.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.array([-2.0, 0.0, 0.5, 1.0]), need_grad=True)
        >>> y = F.binary_tanh(x)
        >>> y.backward()
        >>> y.d, x.g
        (array([-1., -1.,  1.,  1.], dtype=float32), array([0., 1., 1., 0.], dtype=float32))
    """
    return _on_ndarrays(_binary)(x, -1.0, 1.0)


def binary_sigmoid(x: Any) -> Any:
    r"""nnabla's binary sigmoid: :math:`y = 1` for :math:`x > 0`, else :math:`0`; its gradient
    is nnabla's straight-through approximation, :math:`1/2` for :math:`|x| < 1` and 0 for
    :math:`|x| \ge 1`, the second derivative 0.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.array([-2.0, 0.0, 0.5, 1.0]), need_grad=True)
        >>> y = F.binary_sigmoid(x)
        >>> y.backward()
        >>> y.d, x.g
        (array([0., 0., 1., 1.], dtype=float32), array([0. , 0.5, 0.5, 0. ], dtype=float32))
    """
    return _on_ndarrays(_binary)(x, 0.0, 0.5)


def _hard_sigmoid(x: Any) -> Any:
    v = _float_variable(x)
    if v is None:
        return _native.hard_sigmoid(x)
    ends = _native.equal_scalar(v, 2.5) + _native.equal_scalar(v, -2.5)
    return _native.where(ends, v * 0.2 + 0.5, _native.hard_sigmoid(v))


def hard_sigmoid(x: Any) -> Any:
    r"""nnabla's hard sigmoid, :math:`y = \min(\max(0.2 x + 0.5, 0), 1)`; the gradient is 0.2
    where :math:`-2.5 \le x \le 2.5`, both ends included (nnabla's backward), and 0 outside.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.array([-3.0, -2.5, 0.0, 2.5]), need_grad=True)
        >>> y = F.hard_sigmoid(x)
        >>> y.backward()
        >>> y.d, x.g
        (array([0. , 0. , 0.5, 1. ], dtype=float32), array([0. , 0.2, 0.2, 0.2], dtype=float32))
    """
    return _on_ndarrays(_hard_sigmoid)(x)


def _crelu(x: Any, axis: int = 1) -> Any:
    v = _float_variable(x)
    if v is None:
        return _native.crelu(x, axis)
    y = _native.crelu(v, axis)  # checks axis
    # the negative half relu(-x), whose gradient nnabla also passes at x = 0: 0 - x there (+0.0)
    neg = _native.where(
        _native.equal_scalar(v, 0.0), _native.r_sub_scalar(v, 0.0), _native.relu(-v)
    )
    return _native.concatenate(_native.relu(v), neg, axis=axis % y.ndim)


def crelu(x: Any, axis: int = 1) -> Any:
    r"""nnabla's concatenated ReLU, ``relu(x)`` and ``relu(-x)`` joined along ``axis``; at
    :math:`x = 0` the gradient is -1 (nnabla's backward passes the negative half's there),
    elsewhere 1 for :math:`x > 0` and -1 for :math:`x < 0`.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.array([[-1.0, 0.0, 2.0]]), need_grad=True)
        >>> y = F.crelu(x)
        >>> y.backward()
        >>> y.d, x.g
        (array([[0., 0., 2., 1., 0., 0.]], dtype=float32), array([[-1., -1.,  1.]], dtype=float32))
    """
    return _on_ndarrays(_crelu)(x, axis)


def gelu(x: Any) -> Any:
    r"""nnabla's GELU, the tanh approximation
    :math:`y = \frac{x}{2}(1 + \tanh(\sqrt{2/\pi}\,(x + 0.044715 x^3)))` (gradhub's
    ``F.gelu(x, approximate="tanh")``).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> F.gelu(nn.Variable.from_numpy_array(np.array([0.0, 1.0]))).d
        array([0.      , 0.841192], dtype=float32)
    """
    return _on_ndarrays(_native.gelu)(x, approximate="tanh")


def _mish(x: Any) -> Any:
    v = _native_variable(x)
    if v.dtype.kind != "f":
        v = _native.cast(v, "float32")
    return v * _native.tanh(_native.softplus(v))


def mish(x: Any) -> Any:
    r"""nnabla's Mish, :math:`y = x \tanh(\log(1 + e^x))`, composed of gradhub's ``softplus``,
    ``tanh`` and a product, so it is differentiable to any order.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.array([-1.0, 0.0, 1.0]), need_grad=True)
        >>> y = F.mish(x)
        >>> y.backward()
        >>> np.round(y.d, 4)
        array([-0.3034,  0.    ,  0.8651], dtype=float32)
        >>> np.round(x.g, 4)
        array([0.0592, 0.6   , 1.049 ], dtype=float32)
    """
    return _on_ndarrays(_mish)(x)


def _float_variable(x: Any) -> Any:
    """``x`` as a native Variable, or None when it is not floating (no gradient to adjust)."""
    x = _native_variable(x)
    return x if x.dtype.kind == "f" else None


def _abs(x: Any) -> Any:
    v = _float_variable(x)
    if v is None:
        return _native.abs(x)
    return _native.where(_native.equal_scalar(v, 0.0), v, _native.abs(v))


def abs(x: Any) -> Any:
    r"""nnabla's abs, :math:`y = |x|`; its gradient is :math:`\mathrm{sign}(x)` with
    :math:`+1` at :math:`x = 0` (nnabla's backward: :math:`x \ge 0`), the second derivative 0.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.array([-2.0, 0.0, 3.0]), need_grad=True)
        >>> y = F.abs(x)
        >>> y.backward()
        >>> y.d, x.g
        (array([2., 0., 3.], dtype=float32), array([-1.,  1.,  1.], dtype=float32))
    """
    return _on_ndarrays(_abs)(x)


def _hard_tanh(x: Any) -> Any:
    v = _float_variable(x)
    if v is None:
        return _native.hard_tanh(x)
    ends = _native.equal_scalar(v, 1.0) + _native.equal_scalar(v, -1.0)
    return _native.where(ends, v, _native.hard_tanh(v))


def hard_tanh(x: Any) -> Any:
    r"""nnabla's hard tanh, :math:`y = \min(\max(x, -1), 1)`; the gradient passes where
    :math:`-1 \le x \le 1`, both ends included (nnabla's backward), and is 0 outside.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.array([-2.0, -1.0, 0.5, 1.0]), need_grad=True)
        >>> y = F.hard_tanh(x)
        >>> y.backward()
        >>> y.d, x.g
        (array([-1. , -1. ,  0.5,  1. ], dtype=float32), array([0., 1., 1., 1.], dtype=float32))
    """
    return _on_ndarrays(_hard_tanh)(x)


def _scalar_extremum(fn: Callable[..., Any], x: Any, val: float) -> Any:
    v = _float_variable(x)
    if v is None:
        return fn(x, val)
    return _native.where(_native.equal_scalar(v, val), float(val), fn(v, val))


def maximum_scalar(x: Any, val: float = 1.0) -> Any:
    r"""nnabla's :math:`y = \max(x, \mathrm{val})`; the gradient passes where
    :math:`x > \mathrm{val}` only: at a tie (:math:`x = \mathrm{val}`) it is 0, as
    nnabla's backward.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.array([-1.0, 0.0, 2.0]), need_grad=True)
        >>> y = F.maximum_scalar(x, 0.0)
        >>> y.backward()
        >>> y.d, x.g
        (array([0., 0., 2.], dtype=float32), array([0., 0., 1.], dtype=float32))
    """
    return _on_ndarrays(_scalar_extremum)(_native.maximum_scalar, x, val)


def minimum_scalar(x: Any, val: float = 1.0) -> Any:
    r"""nnabla's :math:`y = \min(x, \mathrm{val})`; the gradient passes where
    :math:`x < \mathrm{val}` only: at a tie (:math:`x = \mathrm{val}`) it is 0, as
    nnabla's backward.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.array([-1.0, 0.0, 2.0]), need_grad=True)
        >>> y = F.minimum_scalar(x, 0.0)
        >>> y.backward()
        >>> y.d, x.g
        (array([-1.,  0.,  0.], dtype=float32), array([1., 0., 0.], dtype=float32))
    """
    return _on_ndarrays(_scalar_extremum)(_native.minimum_scalar, x, val)


def clip_by_value(x: Any, min: Any, max: Any) -> Any:
    r"""nnabla's clip_by_value, :math:`y = \min(\max(x, \mathrm{min}), \mathrm{max})`, composed as
    nnabla's: ``maximum_scalar``/``minimum_scalar`` for number bounds (at a bound the gradient of
    ``x`` is 0), ``maximum2``/``minimum2`` for Variable bounds (at a bound the gradient goes to the
    bound).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.array([-2.0, -1.0, 0.5, 1.0]), need_grad=True)
        >>> y = F.clip_by_value(x, -1.0, 1.0)
        >>> y.backward()
        >>> y.d, x.g
        (array([-1. , -1. ,  0.5,  1. ], dtype=float32), array([0., 0., 1., 0.], dtype=float32))
    """
    if np.isscalar(min):
        y = maximum_scalar(x, float(min))  # type: ignore[arg-type]
    elif isinstance(min, (_NativeVariable, NdArray)):
        y = maximum2(x, min)
    else:
        raise TypeError("nnabla F.clip_by_value: min must be Variable, NdArray, or scalar.")
    if np.isscalar(max):
        return minimum_scalar(y, float(max))  # type: ignore[arg-type]
    if isinstance(max, (_NativeVariable, NdArray)):
        return minimum2(y, max)
    raise TypeError("nnabla F.clip_by_value: max must be Variable, NdArray, or scalar.")


def _native_variable(x: Any) -> Any:
    return x if isinstance(x, _NativeVariable) else _NativeVariable(x, need_grad=False)


def _as_variable(x: Any, where: str) -> Any:
    if isinstance(x, _NativeVariable):
        return x
    if type(x) is NdArray:
        return _as_leaf(x)
    raise TypeError(f"nnabla F.{where}: expected a Variable, got {type(x).__name__}")


def _batch_normalization(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``F.batch_normalization`` that, while auto_forward is off (nnabla's default), leaves the
    running ``mean``/``variance`` as they were before the build: only ``forward()`` updates them
    (see :mod:`gradhub_compat.nnabla._auto_forward`)."""
    sig = inspect.signature(fn)

    @functools.wraps(fn)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError:
            return adopt(fn(*args, **kwargs), Variable)  # the native call names the problem
        a = bound.arguments
        stats = [running_array(a.get("mean")), running_array(a.get("variance"))]
        with kept_unless_auto_forward(stats if a.get("batch_stat", True) else []):
            return adopt(fn(*args, **kwargs), Variable)

    return wrapped


def _on_ndarrays(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` (with its Variable results adopted) that also takes NdArrays, as nnabla's
    functions: given one, it computes at once (recording nothing) and returns NdArrays. One
    frame: the check is a type test per argument."""

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        for a in args:
            if type(a) is NdArray:
                return _ndarray_call(fn, args, kwargs)
        if kwargs:
            for v in kwargs.values():
                if type(v) is NdArray:
                    return _ndarray_call(fn, args, kwargs)
        with quiet_unless_auto_forward():
            out = fn(*args, **kwargs)
        if type(out) is _NativeVariable:
            out.__class__ = Variable
            return out
        return adopt(out, Variable)

    wrapped.__name__ = wrapped.__qualname__ = getattr(fn, "__name__", "function")
    wrapped.__doc__ = fn.__doc__
    wrapped.__wrapped__ = fn  # type: ignore[attr-defined]
    sig = getattr(fn, "__signature__", None)
    if sig is not None:
        wrapped.__signature__ = sig  # type: ignore[attr-defined]
    return wrapped


def _as_leaf(value: Any) -> Any:
    if type(value) is not NdArray:
        return value
    arr = value.data
    if arr.dtype.kind == "f" and arr.dtype != np.float32:  # nnabla computes in float32
        arr = arr.astype(np.float32)
    return _NativeVariable.leaf(arr, False)


def _ndarray_call(fn: Callable[..., Any], args: Any, kwargs: Any) -> Any:
    with no_grad():
        out = fn(*[_as_leaf(a) for a in args], **{k: _as_leaf(v) for k, v in kwargs.items()})
    if isinstance(out, _NativeVariable):
        return NdArray._of(out._data)
    if isinstance(out, (tuple, list)):
        return type(out)(NdArray._of(o._data) if isinstance(o, _NativeVariable) else o for o in out)
    return out


def tensor_normalization(
    x: Any,
    axes: Any,
    beta: Any = None,
    gamma: Any = None,
    eps: float = 1e-05,
    output_stat: bool = False,
) -> Any:
    r"""nnabla's ``F.tensor_normalization``: ``x`` normalized by its own mean and (biased)
    variance over the axes **not** in ``axes`` (an int or a list), :math:`y = \gamma (x - \mu)
    / \sqrt{\sigma^2 + \epsilon} + eta`; ``beta``/``gamma`` (None: omitted) and the statistics
    have the shape of ``x`` with 1 outside ``axes``. As nnabla's, this is
    ``F.batch_normalization(x, beta, gamma, None, None, axes, decay_rate=0, eps, batch_stat=True,
    output_stat)``: with ``output_stat`` it returns ``(y, mean, variance)``, differentiable.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.array([[1.0, 3.0], [2.0, 6.0]]))
        >>> y, mean, var = F.tensor_normalization(x, axes=[0], output_stat=True)
        >>> y.forward()
        >>> mean.d.ravel(), var.d.ravel()
        (array([2., 4.], dtype=float32), array([1., 4.], dtype=float32))
        >>> np.round(y.d, 4)
        array([[-1.,  1.],
               [-1.,  1.]], dtype=float32)
    """
    ax = list(axes) if isinstance(axes, Iterable) else [axes]  # (nnabla's _force_list)
    bn = __getattr__("batch_normalization")
    return bn(
        x,
        beta,
        gamma,
        None,
        None,
        axes=ax,
        decay_rate=0.0,
        eps=eps,
        batch_stat=True,
        output_stat=output_stat,
    )


def _fused_nonlinearity(where: str, nonlinearity: Any) -> None:
    if nonlinearity != "relu":
        # (nnabla 1.39 raises RuntimeError "not_implemented": NotImplementedError is one)
        raise NotImplementedError(
            f"nnabla {where}: nonlinearity={nonlinearity!r} is not supported; as nnabla's, only "
            "'relu' is (see docs/migration-nnabla.md)"
        )


def _fused_stats(x: Any, axes: Any, comm: Any = None) -> tuple[Any, Any]:
    """The batch mean and (biased) variance of ``x`` over the axes not in ``axes``, shaped like
    the parameters and differentiable (``output_stat``'s statistics); with ``comm``, over the
    batches of all its processes (``DistributedMean``)."""
    from gradhub.ops import call

    ax = {int(a) % len(x.shape) for a in axes}
    red = tuple(i for i in range(len(x.shape)) if i not in ax)

    def mean(v: Any) -> Any:
        if comm is None:
            return call("Mean", v, axis=red, keepdims=True)
        return call("DistributedMean", v, comm=comm, axis=red, keepdims=True)

    mu = mean(x)
    xc = x - mu
    return mu, mean(xc * xc)


def _bn_dummies(
    fname: str, xv: Any, axes: Any, beta: Any, gamma: Any, mean: Any, variance: Any
) -> tuple[Any, Any, Any, Any]:
    """nnabla's ``_create_bn_dummy_vars``: beta None is a constant 0, gamma None a constant 1,
    mean/variance None a dummy statistic (updated and never read)."""
    nd = len(xv.shape)
    try:
        ax_set = {int(a) % nd for a in axes}
    except (TypeError, ValueError, ZeroDivisionError):
        raise TypeError(
            f"nnabla F.{fname}: axes must be an int or a list of ints in "
            f"range for an input of shape {tuple(xv.shape)}, got {axes!r}"
        ) from None
    pshape = tuple(int(n) if i in ax_set else 1 for i, n in enumerate(xv.shape))
    return (
        constant(0.0, pshape) if beta is None else beta,
        constant(1.0, pshape) if gamma is None else gamma,
        constant(0.0, pshape) if mean is None else mean,
        constant(0.0, pshape) if variance is None else variance,
    )


def _fused_graph(
    x: Any,
    beta: Any,
    gamma: Any,
    mean: Any,
    variance: Any,
    z: Any,
    axes: list[int],
    decay_rate: float,
    eps: float,
    batch_stat: bool,
    nonlinearity: str,
    output_stat: bool,
) -> Any:
    """One ``FusedBatchNormalization`` function of gradhub's library (see ``_bn_function``)."""
    return _bn_function(
        "fused_batch_normalization",
        _native.fused_batch_normalization,
        (x, beta, gamma, mean, variance, z),
        axes,
        decay_rate,
        eps,
        batch_stat,
        output_stat,
        None,
        nonlinearity=nonlinearity,
    )


def _bn_function(
    fname: str,
    native: Callable[..., Any],
    inputs: tuple[Any, ...],
    axes: list[int],
    decay_rate: float,
    eps: float,
    batch_stat: bool,
    output_stat: bool,
    comm: Any,
    **attrs: Any,
) -> Any:
    """``native(x, beta, gamma, mean, variance, *rest, axes=..., ..., **attrs)`` (a function of
    gradhub's library) on ``inputs``, nnabla's None parameters filled in as nnabla's
    ``_create_bn_dummy_vars``, the running statistics kept as they were while auto_forward is
    off (only ``forward()`` updates them); with ``output_stat`` also the batch statistics (over
    the processes of ``comm`` when given)."""
    x, beta, gamma, mean, variance, *rest = inputs
    xv = x if isinstance(x, _NativeVariable) else _NativeVariable(x, need_grad=False)
    beta, gamma, mean, variance = _bn_dummies(fname, xv, axes, beta, gamma, mean, variance)
    stats = [running_array(mean), running_array(variance)] if batch_stat else []
    with kept_unless_auto_forward(stats):
        y = native(
            xv,
            beta,
            gamma,
            mean,
            variance,
            *rest,
            axes=tuple(int(a) for a in axes),
            decay_rate=decay_rate,
            eps=eps,
            batch_stat=bool(batch_stat),
            **attrs,
        )
    if not output_stat:
        return y
    return (y, *_fused_stats(xv, axes, comm))


_fused_call = _on_ndarrays(_fused_graph)


def fused_batch_normalization(
    x: Any,
    beta: Any,
    gamma: Any,
    mean: Any,
    variance: Any,
    z: Any = None,
    axes: Any = (1,),
    decay_rate: float = 0.9,
    eps: float = 1e-05,
    batch_stat: bool = True,
    nonlinearity: str = "relu",
    output_stat: bool = False,
) -> Any:
    r"""nnabla's ``F.fused_batch_normalization``: :math:`\max(\mathrm{BN}(x) + z, 0)` as one
    function, ``FusedBatchNormalization`` (``y.parent``, with the inputs ``x, beta, gamma, mean,
    variance`` and ``z`` when given, and nnabla's ``info.args``: ``axes``, ``decay_rate``,
    ``eps``, ``batch_stat``, ``nonlinearity``). ``BN`` is ``F.batch_normalization`` with the
    same arguments: with ``batch_stat`` the running ``mean``/``variance`` are updated by each
    ``forward()``. As nnabla's, ``beta``/``gamma`` None omit the bias/scale, ``mean``/``variance``
    None use a dummy statistic (not with ``batch_stat=False``: ``ValueError``), and only
    ``nonlinearity="relu"`` is supported (``NotImplementedError``, a ``RuntimeError``,
    otherwise). With ``output_stat``, ``(y, mean, variance)`` of the batch, the statistics
    computed by functions of their own (nnabla's function has three outputs).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.array([[1.0], [3.0]]))
        >>> beta, gamma = F.constant(0.0, (1, 1)), F.constant(1.0, (1, 1))
        >>> mean, var = F.constant(0.0, (1, 1)), F.constant(1.0, (1, 1))
        >>> y = F.fused_batch_normalization(x, beta, gamma, mean, var, eps=1e-8)
        >>> y.forward()
        >>> np.round(y.d, 4)
        array([[0.],
               [1.]], dtype=float32)
        >>> y.parent.name, len(y.parent.inputs)
        ('FusedBatchNormalization', 5)
    """
    _fused_nonlinearity("F.fused_batch_normalization", nonlinearity)
    ax = list(axes) if isinstance(axes, Iterable) else [axes]  # (nnabla's _force_list)
    if not batch_stat and (mean is None or variance is None):
        raise ValueError(
            "nnabla F.fused_batch_normalization: if batch_stat is False, mean and variance must "
            "not be None (inference normalizes with them)"
        )
    if batch_stat:
        for name, v in (("mean", mean), ("variance", variance)):
            if isinstance(v, _NativeVariable) and v.creator is not None:
                raise ValueError(
                    f"nnabla F.fused_batch_normalization: if batch_stat is True, {name} must not "
                    "have a parent function (it is the running statistic updated in place)"
                )
    return _fused_call(
        x,
        beta,
        gamma,
        mean,
        variance,
        z,
        ax,
        decay_rate,
        eps,
        batch_stat,
        nonlinearity,
        output_stat,
    )


def _sync_graph(
    x: Any,
    beta: Any,
    gamma: Any,
    mean: Any,
    variance: Any,
    comm: Any,
    axes: list[int],
    decay_rate: float,
    eps: float,
    batch_stat: bool,
    output_stat: bool,
) -> Any:
    """One ``SyncBatchNormalization`` function of gradhub's library (see ``_bn_function``)."""
    return _bn_function(
        "sync_batch_normalization",
        _native.sync_batch_normalization,
        (x, beta, gamma, mean, variance, comm),
        axes,
        decay_rate,
        eps,
        batch_stat,
        output_stat,
        comm,
    )


_sync_call = _on_ndarrays(_sync_graph)


def sync_batch_normalization(
    x: Any,
    beta: Any,
    gamma: Any,
    mean: Any,
    variance: Any,
    comm: Any,
    group: str = "world",
    axes: Any = (1,),
    decay_rate: float = 0.9,
    eps: float = 1e-05,
    batch_stat: bool = True,
    output_stat: bool = False,
    n_outputs: Any = None,
) -> Any:
    r"""nnabla's ``F.sync_batch_normalization``: batch normalization whose batch statistics are
    taken over the batches of every process of ``comm`` (a
    ``C.MultiProcessDataParalellCommunicator`` after ``init()``, or a gradhub communicator),
    as one function ``SyncBatchNormalization`` (``y.parent``). With ``batch_stat`` each
    ``forward()`` updates the running ``mean``/``variance`` with the common statistics (the
    variance unbiased by the total count). As nnabla's, ``beta``/``gamma`` None omit the
    bias/scale and ``mean``/``variance`` None use a dummy statistic (not with
    ``batch_stat=False``: ``ValueError``); ``output_stat`` also returns the common batch mean and
    variance. ``group`` must be ``"world"`` (``NotImplementedError`` otherwise).

    Differences from nnabla 1.39 (docs/migration-nnabla.md): the mean is that of all the
    values, also when the processes' batches differ in size (nnabla averages the processes'
    means), and ``beta``/``gamma`` get this process's part of their gradients, as the other
    parameters (nnabla's backward gives each process their sums over the processes).

    Example (one process)::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> from gradhub_nn_ops.distributed import ONE_PROCESS
        >>> x = nn.Variable.from_numpy_array(np.array([[1.0], [3.0]]))
        >>> y = F.sync_batch_normalization(x, None, None, None, None, ONE_PROCESS, eps=1e-8)
        >>> y.forward()
        >>> np.round(y.d, 4)
        array([[-1.],
               [ 1.]], dtype=float32)
        >>> y.parent.name
        'SyncBatchNormalization'
    """
    ax = list(axes) if isinstance(axes, Iterable) else [axes]  # (nnabla's _force_list)
    if not batch_stat and (mean is None or variance is None):
        raise ValueError(
            "nnabla F.sync_batch_normalization: if batch_stat is False, mean and variance must "
            "not be None (inference normalizes with them)"
        )
    if group != "world":
        raise NotImplementedError(
            f"nnabla F.sync_batch_normalization: group={group!r} is not provided; only 'world' "
            "(every process of comm)"
        )
    return _sync_call(
        x, beta, gamma, mean, variance, comm, ax, decay_rate, eps, batch_stat, output_stat
    )


# -- PReLU as one function ------------------------------------------------------------------------


def _prelu_axis(nd: int, base_axis: Any) -> int:
    if isinstance(base_axis, bool) or not isinstance(base_axis, (int, np.integer)):
        raise TypeError(f"nnabla F.prelu: base_axis must be an int, got {base_axis!r}")
    if not -nd <= base_axis < (nd or 1):
        raise ValueError(
            f"nnabla F.prelu: base_axis={base_axis} is out of range for x of ndim {nd}"
        )
    return int(base_axis) % nd if nd else 0


def _prelu_slope_shape(x_shape: Any, w_shape: Any, base_axis: Any) -> tuple[int, ...]:
    """The shape the slopes broadcast with against x: () when shared, else (C, 1, ..., 1)."""
    nd = len(x_shape)
    ax = _prelu_axis(nd, base_axis)
    w_shape = tuple(int(n) for n in w_shape)
    if math.prod(w_shape) == 1 and len(w_shape) <= 1:
        return ()
    if len(w_shape) == 1 and nd and w_shape[0] == x_shape[ax]:
        return (w_shape[0],) + (1,) * (nd - ax - 1)
    raise ValueError(
        f"nnabla F.prelu: the slopes x1 of shape {w_shape} must have shape (), (1,) or "
        f"({x_shape[ax] if nd else 1},) (x0.shape[base_axis]) for x0 of shape {tuple(x_shape)}"
    )


def _prelu_kernel(xp: Any, x: Any, w: Any, base_axis: int = 1) -> Any:
    wb = w.reshape(_prelu_slope_shape(x.shape, w.shape, base_axis))
    return xp.where(x > 0, x, wb * x)


def _prelu_bw(
    gy: Any, ins: Any, in_shapes: Any, outs: Any, out_shapes: Any, base_axis: int = 1
) -> list[Any]:
    from gradhub.ops import call
    from gradhub.registry import REGISTRY

    user = REGISTRY.functions.get("PReLU")
    if user is not None and user.rule is not None:  # backward_functions.register("PReLU", fn)
        res = user.rule.fn(gy, ins, in_shapes, outs, out_shapes, base_axis=base_axis)
        return list(res) if isinstance(res, (list, tuple)) else [res]
    g = gy[0]
    x, w = ins
    x_shape, w_shape = tuple(in_shapes[0]), tuple(in_shapes[1])
    bshape = _prelu_slope_shape(x_shape, w_shape, base_axis)
    wb = call("Reshape", w, shape=bshape)
    neg = call("LessScalar", x, val=0.0)  # (nnabla: x >= 0 ? g : w g, so g at 0)
    dx = g + g * neg * (wb - 1.0)
    ax = _prelu_axis(len(x_shape), base_axis)
    red = (
        tuple(range(len(x_shape)))
        if not bshape
        else tuple(i for i in range(len(x_shape)) if i != ax)
    )
    dw = call("Sum", g * call("MinimumScalar", x, val=0.0), axis=red, keepdims=False)
    return [dx, call("Reshape", dw, shape=w_shape)]


_PRELU = FunctionDef(
    "PReLU",
    _prelu_kernel,
    _layer._PROVIDER,
    inputs=("x0", "x1"),
    attrs={"base_axis": 1},
    rule=Rule(_prelu_bw, _layer._PROVIDER),  # (all kept: a registered rule may read them)
    doc="nnabla's PReLU: y = x0 where x0 > 0, else x1 * x0 (x1: one slope, or one per channel)",
)


def _prelu_graph(x0: Any, x1: Any, base_axis: int) -> Any:
    from gradhub.graph import apply

    xv = x0 if isinstance(x0, _NativeVariable) else _NativeVariable(x0, need_grad=False)
    wv = x1 if isinstance(x1, _NativeVariable) else _NativeVariable(x1, need_grad=False)
    _prelu_slope_shape(xv.shape, wv.shape, base_axis)  # (the error before the graph is built)
    return apply(_PRELU, (xv, wv), {"base_axis": int(base_axis)})


_prelu_call = _on_ndarrays(_prelu_graph)


def prelu(x0: Any, x1: Any, base_axis: int = 1) -> Any:
    r"""nnabla's ``F.prelu``: :math:`y = x_0` where :math:`x_0 > 0`, else :math:`x_1 x_0`, as one
    function, ``PReLU`` (``y.parent``, with the inputs ``x0, x1`` and ``info.args``
    ``{"base_axis": ...}``, as nnabla's). ``x1`` holds one slope (shape ``()`` or ``(1,)``) or
    one per channel (shape ``(x0.shape[base_axis],)``). Gradients: ``x0`` gets the incoming
    gradient where :math:`x_0 > 0` and :math:`x_1` times it elsewhere (at 0 too, as nnabla's),
    ``x1`` the sum of the incoming gradient times :math:`\min(x_0, 0)`; the rule is written with
    gradhub's functions, so it is differentiable again.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.array([[-2.0, 1.0], [4.0, -1.0]]))
        >>> w = nn.Variable.from_numpy_array(np.array([0.25, 0.5]))
        >>> y = F.prelu(x, w)
        >>> y.forward()
        >>> y.d
        array([[-0.5,  1. ],
               [ 4. , -0.5]], dtype=float32)
        >>> y.parent.name, y.parent.info.args
        ('PReLU', {'base_axis': 1})
    """
    return _prelu_call(x0, x1, base_axis)


def mean_subtraction(
    x: Any, mean: Any, t: Any, base_axis: int = 1, update_running_mean: bool = True
) -> Any:
    r"""nnabla's ``F.mean_subtraction``: :math:`y = x - \bar\mu`. With ``update_running_mean``,
    each execution (``forward()``; also the build while auto_forward is on) first increments the
    counter ``t`` (shape ``(1,)``) and moves the running mean ``mean`` (shape
    ``x.shape[base_axis:]``) to the cumulative average of the batch means,
    :math:`\bar\mu \leftarrow \bar\mu + (\mu_B - \bar\mu) / t`, in place; the backward is
    nnabla's approximation :math:`dx = dy\, (1 - 1/(t N))` (``N`` the elements before
    ``base_axis``, ``t`` as it is then). Without it, :math:`dx = dy`. ``mean`` and ``t`` get no
    gradient. ``t`` stays a float32 array (nnabla casts it to int).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.array([[1.0, 2.0], [3.0, 6.0]]))
        >>> mean, t = nn.Variable((2,)), nn.Variable((1,))
        >>> y = F.mean_subtraction(x, mean, t)
        >>> y.forward()
        >>> y.d
        array([[-1., -2.],
               [ 1.,  2.]], dtype=float32)
        >>> mean.d, t.d
        (array([2., 4.], dtype=float32), array([1.], dtype=float32))
    """
    nd = len(x.shape)
    if not isinstance(base_axis, int) or isinstance(base_axis, bool) or not 0 <= base_axis <= nd:
        raise ValueError(
            f"nnabla F.mean_subtraction: base_axis={base_axis!r} is out of range for an input "
            f"of shape {tuple(x.shape)} (from 0 to {nd})"
        )
    if tuple(mean.shape) != tuple(x.shape[base_axis:]):
        raise ValueError(
            f"nnabla F.mean_subtraction: mean must have shape {tuple(x.shape[base_axis:])} "
            f"(x.shape[base_axis:]), got {tuple(mean.shape)}"
        )
    if int(np.prod(t.shape)) != 1:
        raise ValueError(f"nnabla F.mean_subtraction: t must hold one value, got {tuple(t.shape)}")
    xv, mv, tv = (_as_variable(v, "mean_subtraction") for v in (x, mean, t))
    stats = [running_array(mean), running_array(t)] if update_running_mean else []
    with kept_unless_auto_forward(stats):
        out = _layer.mean_subtraction(xv, mv, tv, base_axis, update_running_mean)
    return adopt(out, Variable)


def spectral_norm(
    w: Any,
    u: Any,
    dim: int = 0,
    itr: int = 1,
    eps: float = 1e-12,
    test: bool = False,
    output_u: bool = False,
) -> Any:
    r"""nnabla's ``F.spectral_norm``: :math:`W_{sn} = W / \sigma(W)`, ``W`` seen as a matrix
    with its axis ``dim`` first (``(w.shape[dim], rest)``), :math:`\sigma = u^T W v` after
    ``itr`` power iterations from ``u`` (shape ``(w.shape[dim],)``):
    :math:`v = W^T u / \sqrt{\|W^T u\|^2 + \epsilon}`,
    :math:`u = W v / \sqrt{\|W v\|^2 + \epsilon}`. Unless ``test``, each execution
    (``forward()``; the build too under auto_forward) writes the new ``u`` into ``u`` in place.
    The gradient of ``W`` treats ``u`` and ``v`` as constants, as nnabla's; it is first-order
    only (differentiating it again raises). ``output_u=True`` raises ``NotImplementedError``.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> w = nn.Variable.from_numpy_array(np.array([[3.0, 0.0], [0.0, 1.0]]))
        >>> u = nn.Variable.from_numpy_array(np.array([1.0, 0.0]))
        >>> y = F.spectral_norm(w, u)
        >>> y.forward()
        >>> y.d
        array([[1.        , 0.        ],
               [0.        , 0.33333334]], dtype=float32)
    """
    where = "nnabla F.spectral_norm"
    nd = len(w.shape)
    if not isinstance(dim, int) or isinstance(dim, bool) or not 0 <= dim < nd:
        raise ValueError(
            f"{where}: dim={dim!r} is out of range for a weight of shape {tuple(w.shape)} "
            f"(from 0 to {nd - 1})"
        )
    if not isinstance(itr, int) or isinstance(itr, bool) or itr < 1:
        raise ValueError(f"{where}: itr must be an int > 0, got {itr!r}")
    if not float(eps) > 0:
        raise ValueError(f"{where}: eps must be > 0, got {eps!r}")
    if tuple(u.shape) != (w.shape[dim],):
        raise ValueError(
            f"{where}: u must have shape ({w.shape[dim]},) (w.shape[dim]), got {tuple(u.shape)}"
        )
    if output_u:
        raise NotImplementedError(
            f"{where}: output_u=True is not supported (see docs/migration-nnabla.md); u is "
            "updated in place unless test=True"
        )
    wv = _as_variable(w, "spectral_norm")
    uv = _as_variable(u, "spectral_norm")
    with kept_unless_auto_forward([] if test else [running_array(u)]):
        out = _layer.spectral_norm(wv, uv, dim, itr, float(eps), bool(test))
    return adopt(out, Variable)


# -- nnabla's N-step recurrent functions, composed of recorded functions --------------------------


def _shape_check(where: str, arg: str, v: Any, shape: tuple[int, ...]) -> None:
    if v is None or tuple(v.shape) != shape:
        got = None if v is None else tuple(v.shape)
        raise ValueError(f"nnabla F.{where}: {arg} must have shape {shape}, got {got}")


def _n_step(
    where: str,
    gates: int,
    step: Callable[..., Any],
    x: Any,
    h: Any,
    c: Any,
    weight_l0: Any,
    weight: Any,
    bias: Any,
    num_layers: int,
    dropout: Any,
    bidirectional: bool,
    training: bool,
) -> tuple[Any, Any, Any]:
    """The layers and directions of nnabla's N-step RNN/GRU/LSTM: layer ``l``'s input is the
    previous layer's output (the directions concatenated), the backward direction reads the
    sequence from its end; returns ``y`` ``(T, B, D * H)``, ``h_n`` and ``c_n`` ``(L, D, B,
    H)`` (``c_n`` None without ``c``)."""
    if len(x.shape) != 3:
        raise ValueError(f"nnabla F.{where}: x must have shape (T, B, I), got {tuple(x.shape)}")
    t_len, batch, isz = (int(s) for s in x.shape)
    n_dir = 2 if bidirectional else 1
    if not isinstance(num_layers, int) or isinstance(num_layers, bool) or num_layers < 1:
        raise ValueError(f"nnabla F.{where}: num_layers must be an int > 0, got {num_layers!r}")
    if h is None or len(h.shape) != 4:
        raise ValueError(f"nnabla F.{where}: h must have shape (L, D, B, H), got {h and h.shape}")
    hsz = int(h.shape[3])
    _shape_check(where, "h", h, (num_layers, n_dir, batch, hsz))
    if c is not None:
        _shape_check(where, "c", c, (num_layers, n_dir, batch, hsz))
    g = () if gates == 1 else (gates,)
    _shape_check(where, "weight_l0", weight_l0, (n_dir, *g, hsz, isz + hsz))
    if num_layers > 1:
        _shape_check(where, "weight", weight, (num_layers - 1, n_dir, *g, hsz, n_dir * hsz + hsz))
    if bias is not None:
        nb = () if gates == 1 else (4 if gates >= 3 else gates,)
        _shape_check(where, "bias", bias, (num_layers, n_dir, *nb, hsz))
    if dropout and num_layers > 1 and training:
        raise NotImplementedError(
            f"nnabla F.{where}: dropout={dropout!r} between layers is not supported (nnabla "
            "draws its masks from its own generator; see docs/migration-nnabla.md)"
        )
    inp = list(_split(x, 0)) if t_len > 1 else [__getattr__("reshape")(x, (batch, isz))]
    hs, cs = [], []
    for layer in range(num_layers):
        w_layer = weight_l0 if layer == 0 else weight[layer - 1]
        outs = []
        for d in range(n_dir):
            hv = h[layer, d]
            cv = None if c is None else c[layer, d]
            b = None if bias is None else bias[layer, d]
            order = range(t_len) if d == 0 else range(t_len - 1, -1, -1)
            ys: list[Any] = [None] * t_len
            for t in order:
                hv, cv = step(inp[t], hv, cv, w_layer[d], b)
                ys[t] = hv
            hs.append(hv)
            cs.append(cv)
            outs.append(ys)
        cat = __getattr__("concatenate")
        inp = [
            outs[0][t] if n_dir == 1 else cat(outs[0][t], outs[1][t], axis=1) for t in range(t_len)
        ]
    stack = __getattr__("stack")
    y = stack(*inp, axis=0)
    shape4 = (num_layers, n_dir, batch, hsz)
    reshape = __getattr__("reshape")
    h_n = reshape(stack(*hs, axis=0), shape4)
    c_n = None if c is None else reshape(stack(*cs, axis=0), shape4)
    return y, h_n, c_n


def _split(x: Any, axis: int) -> Any:
    return __getattr__("split")(x, axis=axis)


def _gate_affine(v: Any, w: Any, b: Any, n: int) -> Any:
    """``v @ w^T + b`` for ``w`` of shape ``(n, H, K)`` (``n`` gates): ``(B, n * H)``."""
    F = __getattr__
    k, hsz = int(w.shape[-1]), int(w.shape[-2])
    wt = F("transpose")(F("reshape")(w, (n * hsz, k)), (1, 0))
    bb = None if b is None else F("reshape")(b, (n * hsz,))
    return F("affine")(v, wt, bb)


def _lstm_step(x: Any, h: Any, c: Any, w: Any, b: Any) -> tuple[Any, Any]:
    F = __getattr__
    hsz = int(h.shape[1])
    z = _gate_affine(F("concatenate")(x, h, axis=1), w, b, 4)
    i_t, f_t, g_t, o_t = _split(F("reshape")(z, (int(z.shape[0]), 4, hsz)), 1)
    c = F("sigmoid")(f_t) * c + F("sigmoid")(i_t) * F("tanh")(g_t)
    return F("sigmoid")(o_t) * F("tanh")(c), c


def _gru_step(x: Any, h: Any, c: Any, w: Any, b: Any) -> tuple[Any, None]:
    F = __getattr__
    hsz, isz, batch = int(h.shape[1]), int(x.shape[1]), int(x.shape[0])
    wx, wh = w[:, :, :isz], w[:, :, isz:]
    bx = None if b is None else b[0:3]
    gx = F("reshape")(_gate_affine(x, wx, bx, 3), (batch, 3, hsz))
    gh = F("reshape")(_gate_affine(h, wh, None, 3), (batch, 3, hsz))
    xr, xz, xn = _split(gx, 1)
    hr, hz, hn = _split(gh, 1)
    if b is not None:
        hn = hn + b[3]
    r = F("sigmoid")(xr + hr)
    z = F("sigmoid")(xz + hz)
    n = F("tanh")(xn + r * hn)
    return (1.0 - z) * n + z * h, None


def lstm(
    x: Any,
    h: Any,
    c: Any,
    weight_l0: Any,
    weight: Any = None,
    bias: Any = None,
    num_layers: int = 1,
    dropout: Any = None,
    bidirectional: bool = False,
    training: bool = True,
) -> tuple[Any, Any, Any]:
    r"""nnabla's ``F.lstm`` (N-step LSTM): ``x`` ``(T, B, I)``, ``h`` and ``c`` ``(L, D, B, H)``,
    ``weight_l0`` ``(D, 4, H, I + H)``, ``weight`` ``(L - 1, D, 4, H, D H + H)``, ``bias``
    ``(L, D, 4, H)``, the gates in nnabla's order :math:`i, f, g, o`:
    :math:`c_t = \sigma(f) c + \sigma(i) \tanh(g)`, :math:`h_t = \sigma(o) \tanh(c_t)`, each
    gate :math:`W [x_t, h_{t-1}] + b`; returns ``(y, h_n, c_n)`` with ``y`` ``(T, B, D H)``.
    Composed of recorded functions (one affine per gate block and step); dropout between
    layers is not supported (``NotImplementedError``).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x, h, c = nn.Variable((5, 2, 3)), nn.Variable((1, 1, 2, 4)), nn.Variable((1, 1, 2, 4))
        >>> w0 = nn.Variable.from_numpy_array(np.full((1, 4, 4, 7), 0.1, np.float32))
        >>> y, h_n, c_n = F.lstm(x, h, c, w0)
        >>> y.shape, h_n.shape, c_n.shape
        ((5, 2, 4), (1, 1, 2, 4), (1, 1, 2, 4))
    """
    return _n_step(
        "lstm",
        4,
        _lstm_step,
        x,
        h,
        c,
        weight_l0,
        weight,
        bias,
        num_layers,
        dropout,
        bidirectional,
        training,
    )


def gru(
    x: Any,
    h: Any,
    weight_l0: Any,
    weight: Any = None,
    bias: Any = None,
    num_layers: int = 1,
    dropout: Any = None,
    bidirectional: bool = False,
    training: bool = True,
) -> tuple[Any, Any]:
    r"""nnabla's ``F.gru`` (N-step GRU): ``weight_l0`` ``(D, 3, H, I + H)``, ``weight``
    ``(L - 1, D, 3, H, D H + H)``, ``bias`` ``(L, D, 4, H)`` (:math:`b_r, b_z, b_n` and the
    hidden bias :math:`b_{hn}`): :math:`r = \sigma(W_r x + U_r h + b_r)`,
    :math:`z = \sigma(W_z x + U_z h + b_z)`,
    :math:`n = \tanh(W_n x + b_n + r (U_n h + b_{hn}))`, :math:`h_t = (1 - z) n + z h`;
    returns ``(y, h_n)``. Composed of recorded functions; dropout between layers is not
    supported (``NotImplementedError``).

    Example::

        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x, h = nn.Variable((5, 2, 3)), nn.Variable((1, 1, 2, 4))
        >>> y, h_n = F.gru(x, h, nn.Variable((1, 3, 4, 7)))
        >>> y.shape, h_n.shape
        ((5, 2, 4), (1, 1, 2, 4))
    """
    y, h_n, _ = _n_step(
        "gru",
        3,
        _gru_step,
        x,
        h,
        None,
        weight_l0,
        weight,
        bias,
        num_layers,
        dropout,
        bidirectional,
        training,
    )
    return y, h_n


def rnn(
    x: Any,
    h: Any,
    weight_l0: Any,
    weight: Any = None,
    bias: Any = None,
    num_layers: int = 1,
    nonlinearity: str = "tanh",
    dropout: Any = None,
    bidirectional: bool = False,
    training: bool = True,
) -> tuple[Any, Any]:
    r"""nnabla's ``F.rnn`` (N-step Elman RNN): :math:`h_t = f(W [x_t, h_{t-1}] + b)`, ``f``
    ``tanh`` or ``relu`` (``nonlinearity``), ``weight_l0`` ``(D, H, I + H)``, ``weight``
    ``(L - 1, D, H, D H + H)``, ``bias`` ``(L, D, H)``; returns ``(y, h_n)``. Composed of
    recorded functions; dropout between layers is not supported (``NotImplementedError``).

    Example::

        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x, h = nn.Variable((5, 2, 3)), nn.Variable((1, 1, 2, 4))
        >>> y, h_n = F.rnn(x, h, nn.Variable((1, 4, 7)))
        >>> y.shape, h_n.shape
        ((5, 2, 4), (1, 1, 2, 4))
    """
    if nonlinearity not in ("tanh", "relu"):
        raise ValueError(
            f"nnabla F.rnn: nonlinearity must be 'tanh' or 'relu', got {nonlinearity!r}"
        )
    act = __getattr__(nonlinearity)

    def step(xv: Any, hv: Any, cv: Any, w: Any, b: Any) -> tuple[Any, None]:
        F = __getattr__
        hsz = int(hv.shape[1])
        z = _gate_affine(F("concatenate")(xv, hv, axis=1), F("reshape")(w, (1, hsz, -1)), b, 1)
        return act(z), None

    y, h_n, _ = _n_step(
        "rnn",
        1,
        step,
        x,
        h,
        None,
        weight_l0,
        weight,
        bias,
        num_layers,
        dropout,
        bidirectional,
        training,
    )
    return y, h_n


def _check_ints(where: str, **values: Any) -> None:
    """Raise ``TypeError`` naming ``where`` (``"nnabla F.<function>"``) and the first of the
    keyword arguments ``values`` that is not an int (a bool is not)."""
    for name, val in values.items():
        if isinstance(val, bool) or not isinstance(val, (int, np.integer)):
            raise TypeError(f"{where}: {name} must be an int, got {val!r}")


def _real(where: str, name: str, value: Any, default: float | None = None) -> float:
    """``value`` as a float: a real number (an int, a bool, a float, a numpy scalar or 0-d
    array), or None when ``default`` is given, which it then stands for. Anything else raises
    ``TypeError`` (nnabla's "must be real number"), NaN ``ValueError``, naming ``where`` and
    ``name``."""
    if value is None and default is not None:
        return default
    if (
        isinstance(value, (str, bytes))
        or not hasattr(type(value), "__float__")
        or np.ndim(value) != 0
    ):
        raise TypeError(f"{where}: {name} must be a real number, got {value!r}")
    out = float(value)
    if math.isnan(out):
        raise ValueError(f"{where}: {name} must not be NaN")
    return out


def _quantize_linear_graph(
    x: Any, scale: Any, zero_point: Any, round_mode: Any, narrow_range: Any, dtype: Any
) -> Any:
    from . import _quantization

    return _quantization.quantize_linear(
        _native_variable(x),
        _native_variable(scale),
        _native_variable(zero_point),
        round_mode,
        narrow_range,
        dtype,
    )


def quantize_linear(
    x: Any,
    scale: Any,
    zero_point: Any,
    round_mode: str = "HALF_AWAY_FROM_ZERO",
    narrow_range: bool = False,
    dtype: Any = np.int8,
) -> Any:
    r"""nnabla's ``F.quantize_linear`` (ONNX's QuantizeLinear, simulated in float):
    :math:`y = \mathrm{saturate}(\mathrm{round}(x / s) + \mathrm{saturate}(\mathrm{round}(z)))`,
    float32 values in the range of ``dtype`` (``numpy.int8``: [-128, 127], ``numpy.uint8``:
    [0, 255]; with ``narrow_range`` the lowest value is left out: [-127, 127], [1, 255]).
    ``round_mode`` ``"HALF_AWAY_FROM_ZERO"`` (2.5 to 3, -2.5 to -3) or ``"HALF_TO_EVEN"`` (2.5 to
    2), the zero point rounded the same way. ``scale`` and ``zero_point`` (any dtype) have ``x``'s
    number of axes, each of size 1 or ``x``'s (per-tensor or per-channel: ``(1, C, 1, 1)``). One
    ``QuantizeLinear`` function, nnabla 1.39's kernel in float32; its gradient is nnabla's,
    :math:`dx = dy / s` (straight through the rounding and the saturation), and a ``scale`` or
    ``zero_point`` that needs a gradient makes the backward pass raise (a ``BackwardRuleError``,
    a ``RuntimeError``, from the rule's ``NotImplementedError``), as nnabla's. nnabla also
    writes the rounded, saturated zero point into ``zero_point``'s data (as float32); the layer
    leaves ``zero_point`` alone. Another ``round_mode`` or ``dtype`` raises ``ValueError``
    (nnabla 1.39 does not round, or saturates to an undefined range).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.array([-300.0, -2.5, 0.5, 2.5, 7.0]),
        ...                                  need_grad=True)
        >>> s = nn.Variable.from_numpy_array(np.array([1.0]))
        >>> z = nn.Variable.from_numpy_array(np.array([0], np.int8))
        >>> y = F.quantize_linear(x, s, z)
        >>> y.forward()
        >>> y.d
        array([-128.,   -3.,    1.,    3.,    7.], dtype=float32)
        >>> F.quantize_linear(x, s, z, "HALF_TO_EVEN").d
        array([-128.,   -2.,    0.,    2.,    7.], dtype=float32)
    """
    return _on_ndarrays(_quantize_linear_graph)(
        x, scale, zero_point, round_mode, narrow_range, dtype
    )


def _dequantize_linear_graph(x: Any, scale: Any, zero_point: Any) -> Any:
    from . import _quantization

    xv, sv, zv = (_native_variable(v) for v in (x, scale, zero_point))
    return _quantization.dequantize_linear(xv, sv, zv)


def dequantize_linear(x: Any, scale: Any, zero_point: Any) -> Any:
    r"""nnabla's ``F.dequantize_linear`` (ONNX's DequantizeLinear): :math:`y = (x - z)\, s`,
    float32, ``scale`` and ``zero_point`` shaped as for :func:`quantize_linear` (the zero point
    is not rounded here, as nnabla's). One ``DequantizeLinear`` function; the gradient is
    nnabla's, :math:`dx = dy\, s`, and a ``scale`` or ``zero_point`` that needs a gradient makes
    the backward pass raise (a ``BackwardRuleError``, a ``RuntimeError``, from the rule's
    ``NotImplementedError``), as nnabla's.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> q = nn.Variable.from_numpy_array(np.array([-128, 0, 5, 127], np.int8))
        >>> s = nn.Variable.from_numpy_array(np.array([0.5]))
        >>> z = nn.Variable.from_numpy_array(np.array([3], np.int8))
        >>> y = F.dequantize_linear(q, s, z)
        >>> y.forward()
        >>> y.d
        array([-65.5,  -1.5,   1. ,  62. ], dtype=float32)
    """
    return _on_ndarrays(_dequantize_linear_graph)(x, scale, zero_point)


def _pow2_quantize_graph(
    x: Any, sign: Any, with_zero: Any, n: Any, m: Any, ste_fine_grained: Any
) -> Any:
    from . import _quantization

    return _quantization.pow2_quantize(_native_variable(x), sign, with_zero, n, m, ste_fine_grained)


def pow2_quantize(
    x: Any,
    sign: bool = True,
    with_zero: bool = True,
    n: int = 8,
    m: int = 1,
    quantize: bool = True,
    ste_fine_grained: bool = True,
    outputs: Any = None,
) -> Any:
    r"""nnabla's ``F.pow2_quantize``: each value to the nearest power of two in the log domain,
    :math:`q = \mathrm{sign}(x)\, 2^{\mathrm{round}(\log_2 |x|)}` (halves away from zero, so the
    threshold between two powers is their geometric mean), clipped to :math:`2^m` above and to
    :math:`p_{min} = 2^{m - (2^{n'} - 1)}` below, :math:`n'` the bits ``n`` less one for
    ``sign`` and one for ``with_zero``; with ``with_zero``, :math:`|x|` below
    :math:`p_{min} / \sqrt 2` gives 0. Unsigned (``sign=False``), a negative ``x`` gives 0
    (``with_zero``) or :math:`p_{min}`. The gradient is nnabla's straight-through one: the
    incoming gradient, with ``ste_fine_grained`` set to 0 where :math:`2^{\mathrm{round}(\log_2
    |x|)} > 2^m` (and, unsigned, where :math:`x < 0`); second derivative 0. ``quantize=False``
    returns ``x`` itself. One ``Pow2Quantize`` function, nnabla 1.39's kernel in float32.
    ``outputs`` raises ``NotImplementedError``.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.array([-0.3, 0.001, 1.4, 1.5, 5.0]),
        ...                                  need_grad=True)
        >>> y = F.pow2_quantize(x, n=4, m=1)
        >>> y.backward()
        >>> y.d
        array([-0.25,  0.  ,  1.  ,  2.  ,  2.  ], dtype=float32)
        >>> x.g
        array([1., 1., 1., 1., 0.], dtype=float32)
    """
    if outputs is not None:
        raise NotImplementedError(
            "nnabla F.pow2_quantize: outputs= is not supported (docs: migration-nnabla.md)"
        )
    if not quantize:
        return x
    return _on_ndarrays(_pow2_quantize_graph)(x, sign, with_zero, n, m, ste_fine_grained)


def fixed_point_quantize(
    x: Any,
    sign: bool = True,
    n: int = 8,
    delta: float = 0.0625,
    quantize: bool = True,
    ste_fine_grained: bool = True,
    outputs: Any = None,
) -> Any:
    r"""nnabla's ``F.fixed_point_quantize``: :math:`q = \mathrm{sign}(x) \lfloor |x| / \delta +
    1/2 \rfloor \delta` clipped to :math:`(-(2^{n-1} - 1) \delta, (2^{n-1} - 1) \delta)` when
    ``sign``, to :math:`(0, (2^n - 1) \delta)` otherwise (simulated: float values). The
    gradient is straight-through: ``dy``, or with ``ste_fine_grained`` ``dy`` where
    :math:`min \le x \le max` and 0 elsewhere. ``quantize=False`` returns ``x`` itself, as
    nnabla's. ``outputs`` (nnabla's, one array or Variable) is not supported
    (``NotImplementedError``).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.array([-1.0, -0.3, 0.375, 0.9]))
        >>> y = F.fixed_point_quantize(x, n=3, delta=0.25)
        >>> y.forward()
        >>> y.d
        array([-0.75, -0.25,  0.5 ,  0.75], dtype=float32)
    """
    if outputs is not None:
        raise NotImplementedError(
            "nnabla F.fixed_point_quantize: outputs= is not supported (see "
            "docs/migration-nnabla.md)"
        )
    return _fixed_point_quantize(x, sign, n, delta, quantize, ste_fine_grained, None)


def _fixed_point_quantize(
    x: Any, sign: bool, n: Any, delta: Any, quantize: bool, ste_fine_grained: bool, out: Any
) -> Any:
    where = "nnabla F.fixed_point_quantize"
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1 or (sign and n < 2):
        raise ValueError(f"{where}: n must be an int >= {2 if sign else 1}, got {n!r}")
    if not float(delta) > 0:
        raise ValueError(f"{where}: delta must be > 0, got {delta!r}")
    if not quantize:
        return x
    attrs = {
        "sign": bool(sign),
        "n": int(n),
        "delta": float(delta),
        "ste_fine_grained": bool(ste_fine_grained),
    }
    xv = _as_variable(x, "fixed_point_quantize")
    if out is None:
        return adopt(_layer.fixed_point_quantize(xv, None, attrs), Variable)
    with kept_unless_auto_forward([running_array(out)]):
        return adopt(_layer.fixed_point_quantize(xv, out, attrs), Variable)


def prune(x: Any, rate: float = 0.9, outputs: Any = None) -> Any:
    """nnabla's ``F.prune``: ``x`` where ``|x| >= threshold``, 0 elsewhere, the threshold
    ``sort(|x|)[int((x.size - 1) * rate)]`` (the product in float32, as nnabla's); ``rate`` 1
    gives zeros, as nnabla's. The gradient goes straight through. ``outputs`` is not supported
    (``NotImplementedError``).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.array([0.5, -0.1, 0.3, -0.7, 0.2]))
        >>> y = F.prune(x, rate=0.5)
        >>> y.forward()
        >>> y.d
        array([ 0.5,  0. ,  0.3, -0.7,  0. ], dtype=float32)
    """
    if outputs is not None:
        raise NotImplementedError(
            "nnabla F.prune: outputs= is not supported (see docs/migration-nnabla.md)"
        )
    return _prune(x, rate, None)


def _prune(x: Any, rate: Any, out: Any) -> Any:
    if isinstance(rate, bool) or not isinstance(rate, (int, float, np.number)):
        raise TypeError(f"nnabla F.prune: rate must be a number, got {rate!r}")
    if not 0.0 <= float(rate) <= 1.0:
        raise ValueError(f"nnabla F.prune: rate must be in [0, 1], got {rate!r}")
    xv = _as_variable(x, "prune")
    if out is None:
        return adopt(_layer.prune(xv, None, float(rate)), Variable)
    with kept_unless_auto_forward([running_array(out)]):
        return adopt(_layer.prune(xv, out, float(rate)), Variable)


def _binary_weight(
    where: str, weight: Any, binary_weight: Any, alpha: Any, zero_to: float, conv: bool
) -> Any:
    """The (scaled) binary weight of nnabla's binary layers; its arrays written by each
    execution (by the build too only under auto_forward)."""
    if tuple(binary_weight.shape) != tuple(weight.shape):
        raise ValueError(
            f"nnabla F.{where}: binary_weight must have the weight's shape "
            f"{tuple(weight.shape)}, got {tuple(binary_weight.shape)}"
        )
    w = _as_variable(weight, where)
    wb = _as_variable(binary_weight, where)
    if alpha is None:
        with kept_unless_auto_forward([running_array(binary_weight)]):
            return _layer.binary_connect_weight(w, wb, zero_to)
    nd = len(weight.shape)
    in_axes = tuple(range(1, nd)) if conv else (0,)
    out_shape = (int(weight.shape[0]),) if conv else tuple(int(s) for s in weight.shape[1:])
    if tuple(alpha.shape) != out_shape:
        raise ValueError(
            f"nnabla F.{where}: alpha must have shape {out_shape} (one value per output map), "
            f"got {tuple(alpha.shape)}"
        )
    al = _as_variable(alpha, where)
    with kept_unless_auto_forward([running_array(binary_weight), running_array(alpha)]):
        return _layer.binary_weight_weight(w, wb, al, zero_to, in_axes)


def _binary_affine(
    where: str,
    x: Any,
    weight: Any,
    binary_weight: Any,
    alpha: Any,
    bias: Any,
    base_axis: int,
    zero_to: float,
) -> Any:
    """``F.affine`` with the (scaled, with ``alpha``) binary weight of :func:`_binary_weight`."""
    q = _binary_weight(where, weight, binary_weight, alpha, zero_to, False)
    return __getattr__("affine")(x, adopt(q, Variable), bias, base_axis)


def _binary_convolution(
    where: str,
    x: Any,
    weight: Any,
    binary_weight: Any,
    alpha: Any,
    bias: Any,
    base_axis: int,
    pad: Any,
    stride: Any,
    dilation: Any,
    group: int,
    zero_to: float,
) -> Any:
    """``F.convolution`` with the (scaled, with ``alpha``) binary weight of
    :func:`_binary_weight`."""
    q = _binary_weight(where, weight, binary_weight, alpha, zero_to, True)
    conv = __getattr__("convolution")
    return conv(x, adopt(q, Variable), bias, base_axis, pad, stride, dilation, group)


def binary_connect_affine(
    x: Any,
    weight: Any,
    binary_weight: Any,
    bias: Any = None,
    base_axis: int = 1,
    quantize_zero_to: float = 1.0,
) -> Any:
    r"""nnabla's ``F.binary_connect_affine``: ``F.affine`` with the weight :math:`\mathrm{sign}(W)`
    (``quantize_zero_to`` where :math:`W = 0`), written into ``binary_weight`` at each
    execution; the weight's gradient goes straight through to ``weight``.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.array([[1.0, 2.0]]))
        >>> w = nn.Variable.from_numpy_array(np.array([[0.3], [-0.2]]), need_grad=True)
        >>> wb = nn.Variable((2, 1))
        >>> y = F.binary_connect_affine(x, w, wb)
        >>> y.forward()
        >>> y.d, wb.d.ravel()
        (array([[-1.]], dtype=float32), array([ 1., -1.], dtype=float32))
    """
    return _binary_affine(
        "binary_connect_affine", x, weight, binary_weight, None, bias, base_axis, quantize_zero_to
    )


def binary_connect_convolution(
    x: Any,
    weight: Any,
    binary_weight: Any,
    bias: Any = None,
    base_axis: int = 1,
    pad: Any = None,
    stride: Any = None,
    dilation: Any = None,
    group: int = 1,
    quantize_zero_to: float = 1.0,
) -> Any:
    """nnabla's ``F.binary_connect_convolution``: ``F.convolution`` with the binary weight of
    :func:`binary_connect_affine`."""
    return _binary_convolution(
        "binary_connect_convolution",
        x,
        weight,
        binary_weight,
        None,
        bias,
        base_axis,
        pad,
        stride,
        dilation,
        group,
        quantize_zero_to,
    )


def binary_weight_affine(
    x: Any,
    weight: Any,
    binary_weight: Any,
    alpha: Any,
    bias: Any = None,
    base_axis: int = 1,
    quantize_zero_to: float = 1.0,
) -> Any:
    r"""nnabla's ``F.binary_weight_affine``: ``F.affine`` with the weight
    :math:`\alpha\, \mathrm{sign}(W)`, :math:`\alpha` the mean of :math:`|W|` over the input
    axis (one value per output, written into ``alpha``; ``sign(W)`` into ``binary_weight``); the
    weight's gradient goes straight through to ``weight`` (not scaled), as nnabla's."""
    return _binary_affine(
        "binary_weight_affine", x, weight, binary_weight, alpha, bias, base_axis, quantize_zero_to
    )


def binary_weight_convolution(
    x: Any,
    weight: Any,
    binary_weight: Any,
    alpha: Any,
    bias: Any = None,
    base_axis: int = 1,
    pad: Any = None,
    stride: Any = None,
    dilation: Any = None,
    group: int = 1,
    quantize_zero_to: float = 1.0,
) -> Any:
    """nnabla's ``F.binary_weight_convolution``: ``F.convolution`` with the scaled binary weight
    of :func:`binary_weight_affine`, :math:`\alpha` the mean of :math:`|W|` over each output
    map's filter."""
    return _binary_convolution(
        "binary_weight_convolution",
        x,
        weight,
        binary_weight,
        alpha,
        bias,
        base_axis,
        pad,
        stride,
        dilation,
        group,
        quantize_zero_to,
    )


def multi_head_attention(
    query: Any,
    key: Any,
    value: Any,
    num_heads: int,
    q_weight: Any,
    k_weight: Any,
    v_weight: Any,
    out_weight: Any,
    q_bias: Any = None,
    k_bias: Any = None,
    v_bias: Any = None,
    out_bias: Any = None,
    attn_bias_k: Any = None,
    attn_bias_v: Any = None,
    dropout: float = 0.0,
    additive_mask: Any = None,
    key_padding_mask: Any = None,
) -> tuple[Any, Any]:
    r"""nnabla's ``F.multi_head_attention``: ``query`` ``(L_T, B, D_q)``, ``key`` and ``value``
    ``(L_S, B, D_k)``, ``(L_S, B, D_v)`` projected by the weights ``(D, E)`` (and biases)
    along the last axis; the query scaled by :math:`1/\sqrt{E/H}`; with ``attn_bias_k`` and
    ``attn_bias_v`` (``(1, 1, E)``) one more key/value position appended (the masks padded with
    0 for it); per head, :math:`\mathrm{softmax}(q k^T + \mathrm{additive\_mask})` over the
    source positions, where ``key_padding_mask`` ``(B, L_S)`` is nonzero the score is
    :math:`-\infty`; then dropout (with ``dropout > 0``: gradhub's masks, not nnabla's draws),
    the weighted sum of the values, the heads concatenated and projected by ``out_weight``.
    Returns ``(y, weights)``: ``y`` ``(L_T, B, E_out)`` and the attention weights
    ``(B H, L_T, L_S)``, as nnabla's. Composed of recorded functions.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> q, k = nn.Variable((3, 2, 4)), nn.Variable((5, 2, 4))
        >>> w = nn.Variable.from_numpy_array(np.eye(4, dtype=np.float32))
        >>> y, att = F.multi_head_attention(q, k, k, 2, w, w, w, w)
        >>> y.forward()
        >>> y.shape, att.shape, bool(np.allclose(att.d.sum(axis=2), 1))
        ((3, 2, 4), (4, 3, 5), True)
    """
    F = __getattr__
    where = "nnabla F.multi_head_attention"
    tgt_len, batch, _ = (int(s) for s in query.shape)
    src_len = int(key.shape[0])
    e_q, e_k, e_v = int(q_weight.shape[1]), int(k_weight.shape[1]), int(v_weight.shape[1])
    if int(value.shape[0]) != src_len or int(key.shape[1]) != batch:
        raise ValueError(
            f"{where}: key {tuple(key.shape)} and value {tuple(value.shape)} must have the same "
            f"length and the query's batch size {batch}"
        )
    if e_q != e_k:
        raise ValueError(f"{where}: q_weight and k_weight must have the same embedding size")
    if not isinstance(num_heads, int) or num_heads < 1 or e_q % num_heads or e_v % num_heads:
        raise ValueError(
            f"{where}: the embedding sizes {e_q} and {e_v} must be divisible by num_heads="
            f"{num_heads!r}"
        )
    if key_padding_mask is not None and tuple(key_padding_mask.shape) != (batch, src_len):
        raise ValueError(
            f"{where}: key_padding_mask must have shape {(batch, src_len)}, got "
            f"{tuple(key_padding_mask.shape)}"
        )
    head, head_v = e_q // num_heads, e_v // num_heads
    q = F("affine")(query, q_weight, q_bias, base_axis=2) * (float(head) ** -0.5)
    k = F("affine")(key, k_weight, k_bias, base_axis=2)
    v = F("affine")(value, v_weight, v_bias, base_axis=2)
    if attn_bias_k is not None:
        src_len += 1
        bk = F("broadcast")(F("reshape")(attn_bias_k, (1, 1, e_k)), (1, batch, e_k))
        bv = F("broadcast")(F("reshape")(attn_bias_v, (1, 1, e_v)), (1, batch, e_v))
        k = F("concatenate")(k, bk, axis=0)
        v = F("concatenate")(v, bv, axis=0)
        if additive_mask is not None:
            additive_mask = F("pad")(additive_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = F("pad")(key_padding_mask, (0, 1))
    bh = batch * num_heads
    q = F("transpose")(F("reshape")(q, (tgt_len, bh, head)), (1, 0, 2))
    k = F("transpose")(F("reshape")(k, (src_len, bh, head)), (1, 0, 2))
    v = F("transpose")(F("reshape")(v, (src_len, bh, head_v)), (1, 0, 2))
    scores = F("batch_matmul")(q, k, transpose_b=True)  # (B H, L_T, L_S)
    if additive_mask is not None:
        scores = scores + F("reshape")(additive_mask, (1, tgt_len, src_len))
    if key_padding_mask is not None:
        shape4 = (batch, num_heads, tgt_len, src_len)
        cond = F("broadcast")(F("reshape")(key_padding_mask, (batch, 1, 1, src_len)), shape4)
        scores = F("where")(cond, constant(float("-inf"), shape4), F("reshape")(scores, shape4))
        scores = F("reshape")(scores, (bh, tgt_len, src_len))
    weights = F("softmax")(scores, axis=2)
    if dropout > 0:
        weights = F("dropout")(weights, p=dropout)
    out = F("batch_matmul")(weights, v)  # (B H, L_T, head_v)
    out = F("reshape")(F("transpose")(out, (1, 0, 2)), (tgt_len, batch, e_v))
    return F("affine")(out, out_weight, out_bias, base_axis=2), weights


def weight_normalization(w: Any, g: Any, dim: int = 0, eps: float = 1e-12) -> Any:
    r"""nnabla's ``F.weight_normalization``: :math:`w_{WN} = g\, w / \sqrt{\sum w^2 +
    \epsilon}`, the sum over every axis but ``dim`` and ``g`` of shape ``(w.shape[dim],)``
    applied along ``dim`` (computed from recorded gradhub functions; nnabla's C++ kernel
    rounds in another order, a difference in the last bits).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> w = nn.Variable.from_numpy_array(np.array([[3.0, 0.0], [4.0, 2.0]]))
        >>> g = nn.Variable.from_numpy_array(np.array([10.0, 1.0]))
        >>> y = F.weight_normalization(w, g, dim=1, eps=0.0)
        >>> y.forward()
        >>> y.d
        array([[6., 0.],
               [8., 1.]], dtype=float32)
    """
    nd = len(w.shape)
    if not isinstance(dim, int) or isinstance(dim, bool) or not 0 <= dim < nd:
        raise ValueError(
            f"nnabla F.weight_normalization: dim={dim!r} is out of range for a weight of shape "
            f"{tuple(w.shape)} (from 0 to {nd - 1})"
        )
    if tuple(g.shape) != (w.shape[dim],):
        raise ValueError(
            f"nnabla F.weight_normalization: g must have shape ({w.shape[dim]},) (w.shape[dim]), "
            f"got {tuple(g.shape)}"
        )
    F = __getattr__
    axes = tuple(i for i in range(nd) if i != dim)
    sq = F("sum")(w * w, axis=axes, keepdims=True)
    norm = F("pow_scalar")(F("add_scalar")(sq, float(eps)), 0.5)
    gs = F("reshape")(g, tuple(int(w.shape[i]) if i == dim else 1 for i in range(nd)))
    return w * gs / norm


# -- batch linear algebra ---------------------------------------------------------------------


def _batch_square(fn: str, x: Any) -> Any:
    """The wrapped registered function ``fn`` once ``x`` is checked as nnabla's setup checks it:
    a 3-d stack of square matrices ``(B, N, N)`` (gradhub's own function takes any leading axes)."""
    shape = tuple(getattr(x, "shape", ()))
    if len(shape) != 3 or shape[1] != shape[2]:
        raise ValueError(
            f"nnabla F.{fn}: x must be a 3-d batch of square matrices (B, N, N), got shape {shape}"
        )
    return __getattr__(fn)


def batch_inv(x: Any) -> Any:
    r"""nnabla's ``F.batch_inv``: the inverse of each matrix of ``x`` (shape ``(B, N, N)``), one
    ``BatchInv`` function. Gradient :math:`-Y^T g Y^T` with :math:`Y` the output, differentiable
    again. A singular matrix raises a ValueError (nnabla returns ``inf``).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.array([[[2.0, 0.0], [1.0, 1.0]]]))
        >>> y = F.batch_inv(x)
        >>> y.forward()
        >>> y.d
        array([[[ 0.5,  0. ],
                [-0.5,  1. ]]], dtype=float32)
    """
    return _batch_square("batch_inv", x)(x)


def batch_det(x: Any) -> Any:
    r"""nnabla's ``F.batch_det``: the determinant of each matrix of ``x`` (shape ``(B, N, N)``;
    the output has shape ``(B,)``), one ``BatchDet`` function. Gradient
    :math:`g \det(x)\, x^{-T}`, differentiable again (through ``BatchInv``: a singular matrix
    raises a ValueError in the backward pass, where nnabla returns ``inf``/``nan``).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.array([[[2.0, 1.0], [1.0, 3.0]]]))
        >>> y = F.batch_det(x)
        >>> y.forward()
        >>> y.d
        array([5.], dtype=float32)
    """
    return _batch_square("batch_det", x)(x)


def batch_logdet(x: Any) -> Any:
    r"""nnabla's ``F.batch_logdet``: :math:`\log|\det x|` of each matrix of ``x`` (shape
    ``(B, N, N)``; output ``(B,)``), one ``BatchLogdet`` function (from ``slogdet``, so a large
    determinant does not overflow). Gradient :math:`g\, x^{-T}`; differentiable again (nnabla's
    second derivative raises NotImplementedError).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.array([[[0.0, 2.0], [3.0, 0.0]]]))
        >>> y = F.batch_logdet(x)
        >>> y.forward()
        >>> y.d  # log 6: the absolute determinant
        array([1.7917595], dtype=float32)
    """
    return _batch_square("batch_logdet", x)(x)


def batch_cholesky(x: Any, upper: bool = False) -> Any:
    r"""nnabla's ``F.batch_cholesky``: the Cholesky factor of each symmetric positive definite
    matrix of ``x`` (shape ``(B, N, N)``), one ``BatchCholesky`` function with ``info.args``
    ``{"upper": ...}``: lower :math:`L` with :math:`x = L L^T`, or :math:`U = L^T` for
    ``upper=True``. ``x`` is read symmetrized, :math:`(x + x^T)/2`, where nnabla reads its lower
    triangle (the same for a symmetric ``x``); the gradient is nnabla's symmetric one (Murray
    2016), differentiable again (nnabla's second derivative raises). A matrix that is not
    positive definite raises a ValueError (nnabla returns meaningless numbers).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.array([[[4.0, 2.0], [2.0, 5.0]]]))
        >>> y = F.batch_cholesky(x, upper=True)
        >>> y.forward()
        >>> y.d
        array([[[2., 1.],
                [0., 2.]]], dtype=float32)
    """
    if not isinstance(upper, (bool, np.bool_)):
        raise TypeError(f"nnabla F.batch_cholesky: upper must be a bool, got {upper!r}")
    return _batch_square("batch_cholesky", x)(x, upper=bool(upper))


# -- searching, masks, metrics, shapes ---------------------------------------------------------


def searchsorted(sorted_sequence: Any, values: Any, right: Any = None) -> Any:
    r"""nnabla's ``F.searchsorted``: for each of ``values`` (``(..., M)``) the index at which it
    would be inserted into its row of ``sorted_sequence`` (``(..., N)``, the same leading axes,
    each row sorted) to keep it sorted: the number of elements ``< v``, or ``<= v`` with
    ``right=True``. One ``SearchSorted`` function; float32 indices, as nnabla's; no gradient.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> s = nn.Variable.from_numpy_array(np.array([[1.0, 3.0, 5.0, 7.0]]))
        >>> v = nn.Variable.from_numpy_array(np.array([[3.0, 6.0, 9.0]]))
        >>> y = F.searchsorted(s, v, right=True)
        >>> y.forward()
        >>> y.d
        array([[2., 3., 4.]], dtype=float32)
    """
    idx = __getattr__("searchsorted")(sorted_sequence, values, right=bool(right))
    return __getattr__("cast")(idx, "float32")


def nonzero(x: Any) -> Any:
    r"""nnabla's ``F.nonzero``: the indices of the nonzero elements of ``x``, shape
    ``(x.ndim, count)`` in row-major order, uint64 as nnabla's (one ``NonZero`` function); no
    gradient.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> y = F.nonzero(nn.Variable.from_numpy_array(np.array([[0.0, 1.0], [2.0, 0.0]])))
        >>> y.forward()
        >>> y.d
        array([[0, 1],
               [1, 0]], dtype=uint64)
    """
    return __getattr__("cast")(__getattr__("nonzero")(x), "uint64")


def confusion_matrix(x: Any, target: Any, axis: Any = None) -> Any:
    r"""nnabla's ``F.confusion_matrix``: ``(C, C)`` int32 counts, at ``[t, p]`` the samples of
    label ``t`` (``target``, ``x``'s shape with 1 at ``axis``) whose ``argmax`` along ``axis``
    (the classes, the last axis when None) is ``p``. One ``ConfusionMatrix`` function; no
    gradient.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.array([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7]]))
        >>> t = nn.Variable.from_numpy_array(np.array([[1], [0], [0]]))
        >>> y = F.confusion_matrix(x, t)
        >>> y.forward()
        >>> y.d
        array([[1, 1],
               [0, 1]], dtype=int32)
    """
    return __getattr__("cast")(__getattr__("confusion_matrix")(x, target, axis=axis), "int32")


def unique(
    x: Any,
    flatten: bool = True,
    axis: Any = None,
    sorted: bool = True,
    with_index: bool = False,
    with_inverse: bool = False,
    with_counts: bool = False,
) -> Any:
    r"""nnabla's ``F.unique``: the unique elements of ``x`` (``flatten=True``) or unique
    sub-arrays along ``axis``, in ascending order (``sorted=True``) or in order of first
    appearance; with ``with_index``, ``with_inverse``, ``with_counts`` also the (int32) indices of
    the first occurrences, the index of each element's value and the counts, returned in that
    order after the values (float32). As nnabla's, only with auto_forward on (the output's shape
    depends on the data): otherwise RuntimeError. Computed at once, with no gradient; unlike
    nnabla 1.39 (a ``TypeError``), ``axis=None`` is accepted with ``flatten=True``.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> with nn.auto_forward():
        ...     y, counts = F.unique(nn.Variable.from_numpy_array(np.array([3.0, 1.0, 3.0])),
        ...                          with_counts=True)
        >>> y.d, counts.d
        (array([1., 3.], dtype=float32), array([1, 2], dtype=int32))
    """
    if not get_auto_forward():
        raise RuntimeError(
            "nnabla F.unique: Unique can be used only if auto_forward is true "
            "(nn.set_auto_forward(True) or `with nn.auto_forward():`), as nnabla's"
        )
    v = _as_variable(x, "unique")
    a = v.d
    xp = v.device.xp
    nd = len(a.shape)
    if not flatten:
        if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
            raise TypeError(
                f"nnabla F.unique: axis must be an int with flatten=False, got {axis!r}"
            )
        if not -nd <= axis < nd:
            raise ValueError(f"nnabla F.unique: axis={axis} is out of range for x of ndim {nd}")
        ax: Any = int(axis) % nd
    else:
        ax = None
    vals, index, inverse, counts = xp.unique(
        a, return_index=True, return_inverse=True, return_counts=True, axis=ax
    )
    inverse = inverse.reshape(-1)
    if not sorted:
        order = xp.argsort(index, kind="stable")
        rank = xp.empty_like(order)
        rank[order] = xp.arange(order.size)
        vals = xp.take(vals, order, axis=0 if ax is None else ax)
        index, counts, inverse = index[order], counts[order], rank[inverse]
    outs = [vals.astype(np.float32)]
    for flag, arr in ((with_index, index), (with_inverse, inverse), (with_counts, counts)):
        if flag:
            outs.append(arr.astype(np.int32))
    res = [_constant_of(o) for o in outs]
    return res[0] if len(res) == 1 else tuple(res)


def _constant_of(arr: Any) -> Variable:
    v = Variable.__new__(Variable)
    _NativeVariable.__init__(v, arr, need_grad=False)
    return v


def shape(x: Any, start: Any = None, end: Any = None) -> Any:
    r"""nnabla's ``F.shape``: ``x.shape[start:end]`` as a float32 Variable (``end`` None or 0: to
    the end; negative values count from the end), which needs no gradient.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable((2, 3, 4))
        >>> F.shape(x).d, F.shape(x, 1, 2).d
        (array([2., 3., 4.], dtype=float32), array([3.], dtype=float32))
    """
    dims = tuple(int(n) for n in getattr(x, "shape", ()))
    for name, val in (("start", start), ("end", end)):
        if val is not None and (isinstance(val, bool) or not isinstance(val, (int, np.integer))):
            raise TypeError(f"nnabla F.shape: {name} must be an int or None, got {val!r}")
    lo = int(start or 0)
    hi = None if not end else int(end)
    dev = context_device()
    with dev.activate():
        arr = dev.xp.asarray(dims[lo:hi], dtype=np.float32)
    return _constant_of(arr)


def reduce_sum(x: Any) -> Any:
    r"""nnabla's ``F.reduce_sum``: the sum of every element of ``x``, a 0-d Variable (``F.sum``
    over every axis); the gradient is the incoming one broadcast to ``x``'s shape.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> y = F.reduce_sum(nn.Variable.from_numpy_array(np.array([[1.0, 2.0], [3.0, 4.0]])))
        >>> y.forward()
        >>> y.d
        array(10., dtype=float32)
    """
    return __getattr__("sum")(x)


def reduce_mean(x: Any) -> Any:
    r"""nnabla's ``F.reduce_mean``: the mean of every element of ``x``, a 0-d Variable (``F.mean``
    over every axis); the gradient is the incoming one over ``x.size``, broadcast.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> y = F.reduce_mean(nn.Variable.from_numpy_array(np.array([[1.0, 2.0], [3.0, 4.0]])))
        >>> y.forward()
        >>> y.d
        array(2.5, dtype=float32)
    """
    return __getattr__("mean")(x)


def reduce(x: Any, op: str = "sum") -> Any:
    r"""nnabla's deprecated ``F.reduce``: :func:`reduce_sum` (``op="sum"``) or :func:`reduce_mean`
    (``op="mean"``) of every element of ``x``, a 0-d Variable; warns with a
    ``DeprecationWarning``, as nnabla's. Another ``op`` raises ``ValueError``.

    Example::

        >>> import warnings
        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.array([[1.0, 2.0], [3.0, 4.0]]))
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore", DeprecationWarning)
        ...     F.reduce(x, "mean").d
        array(2.5, dtype=float32)
    """
    import warnings

    warnings.warn("Deprecated API. Use ``sum`` or ``mean`` instead.", DeprecationWarning, 2)
    if op == "sum":
        return reduce_sum(x)
    if op == "mean":
        return reduce_mean(x)
    raise ValueError(f"nnabla F.reduce: op must be 'sum' or 'mean', got {op!r}")


def bc_add2(x0: Any, x1: Any, inplace: bool = False) -> Any:
    r"""nnabla's ``F.bc_add2``: :math:`x_0 + x_1` with numpy's broadcasting (computed by
    ``F.add2``; the gradients summed over the broadcast axes). Recorded as nnabla's ``BcAdd2``
    (``y.parent.name``, ``info.args`` ``{'inplace': ...}``, NNP files, which load it back);
    ``inplace`` is recorded and changes nothing computed, as for ``F.add2``.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> a = nn.Variable.from_numpy_array(np.zeros((2, 2)))
        >>> b = nn.Variable.from_numpy_array(np.array([[1.0, 2.0]]))
        >>> y = F.bc_add2(a, b)
        >>> y.forward()
        >>> y.d
        array([[1., 2.],
               [1., 2.]], dtype=float32)
    """
    from ._hooks import mark_inplace, record_as

    y = __getattr__("add2")(x0, x1)
    record_as(y, "BcAdd2")
    if inplace:
        mark_inplace(y)
    return y


def meshgrid(*x: Any, ij_indexing: bool = False) -> tuple[Any, ...]:
    r"""nnabla's ``F.meshgrid``: the coordinate arrays of the 1-d inputs, each of shape
    ``(len(x1), len(x0), len(x2), ...)`` (Cartesian ``xy`` indexing, the default) or
    ``(len(x0), len(x1), ...)`` (``ij_indexing=True``), as ``numpy.meshgrid``; each output is a
    reshape and broadcast of its input, so the gradient of an input is the sum of its output's
    gradient over the other axes.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> a = nn.Variable.from_numpy_array(np.array([1.0, 2.0, 3.0]))
        >>> b = nn.Variable.from_numpy_array(np.array([4.0, 5.0]))
        >>> xs, ys = F.meshgrid(a, b)
        >>> xs.forward()
        >>> xs.d
        array([[1., 2., 3.],
               [1., 2., 3.]], dtype=float32)
    """
    if not x:
        raise ValueError("nnabla F.meshgrid: give at least one 1-d Variable")
    for k, v in enumerate(x):
        if len(getattr(v, "shape", ())) != 1:
            raise ValueError(
                f"nnabla F.meshgrid: input {k} must be 1-d, got shape {tuple(v.shape)}"
            )
    sizes = [int(v.shape[0]) for v in x]
    order = list(range(len(x)))
    if not ij_indexing and len(x) > 1:
        order[0], order[1] = 1, 0  # axis of each input: x0 varies along axis 1
    out_shape = tuple(sizes[order.index(a)] for a in range(len(x)))
    reshape, broadcast_to = __getattr__("reshape"), __getattr__("broadcast_to")
    outs = []
    for k, v in enumerate(x):
        shp = tuple(sizes[k] if a == order[k] else 1 for a in range(len(x)))
        outs.append(broadcast_to(reshape(v, shp), out_shape))
    return tuple(outs)


# -- packed sequences -----------------------------------------------------------------------------


def _pack_padded_graph(padded_sequence: Any, lengths: Any, batch_first: bool) -> Any:
    from . import _sequences

    x, lens = _native_variable(padded_sequence), _native_variable(lengths)
    if len(x.shape) < 2:
        raise ValueError(
            "nnabla F.pack_padded_sequence: padded_sequence must have at least 2 axes "
            f"((T, B, *), or (B, T, *) with batch_first), got {tuple(x.shape)}"
        )
    b = int(x.shape[0] if batch_first else x.shape[1])
    if tuple(lens.shape) != (b,):
        raise ValueError(
            f"nnabla F.pack_padded_sequence: lengths must have shape ({b},) (one per sequence), "
            f"got {tuple(lens.shape)}"
        )
    if batch_first:
        x = _native.transpose(x, (1, 0, *range(2, len(x.shape))))
    return _sequences.pack(x, lens, "lengths", check=True), _sequences.batch_sizes(lens)


def pack_padded_sequence(
    padded_sequence: Any, lengths: Any, batch_first: bool = False, outputs: Any = None
) -> tuple[Any, Any]:
    r"""nnabla's ``F.pack_padded_sequence``: packs the padded sequences ``padded_sequence``
    ``(T, B, *)`` (``(B, T, *)`` with ``batch_first``) of ``lengths`` (``(B,)``, sorted in
    decreasing order) into ``(packed_sequence, batch_sizes)``: ``packed_sequence`` ``(N, *)``,
    ``N = sum(lengths)``, holds for each time step ``t`` the rows of the ``batch_sizes[t]``
    sequences longer than ``t``; ``batch_sizes`` ``(max(lengths),)`` is int32 (nnabla's has
    ``T`` entries, 0 after the longest length). A length of 0 packs no row, as nnabla's.
    The rows are worked out from ``lengths``' data at each execution: ``forward()`` follows new
    lengths that pack the same ``N`` rows; new lengths that change ``N`` raise ``ValueError``
    at ``forward()`` (the graph keeps the shapes of its build: call the function again to
    build it for them; nnabla 1.39 keeps the built shape and computes wrong rows). The
    gradient of ``padded_sequence`` is the incoming gradient padded back (zeros at the
    padding). Lengths that are not sorted raise ``ValueError`` (nnabla 1.39 packs them as if
    they were), as negative ones do. ``outputs`` raises ``NotImplementedError``.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> padded = nn.Variable.from_numpy_array(np.array([[1.0, 4.0], [2.0, 5.0], [3.0, 0.0]]))
        >>> lengths = nn.Variable.from_numpy_array(np.array([3, 2]))
        >>> packed, batch_sizes = F.pack_padded_sequence(padded, lengths)
        >>> packed.d, batch_sizes.d
        (array([1., 4., 2., 5., 3.], dtype=float32), array([2, 2, 1], dtype=int32))
    """
    if outputs is not None:
        raise NotImplementedError(
            "nnabla F.pack_padded_sequence: outputs= is not supported (docs: migration-nnabla.md)"
        )
    return _on_ndarrays(_pack_padded_graph)(padded_sequence, lengths, bool(batch_first))  # type: ignore[no-any-return]


def _pad_packed_graph(
    packed_sequence: Any,
    batch_sizes: Any,
    batch_first: bool,
    padding_value: float,
    total_length: int,
    batch: int = -1,
) -> Any:
    from . import _sequences

    x, bs = _native_variable(packed_sequence), _native_variable(batch_sizes)
    if len(x.shape) < 1 or len(bs.shape) != 1:
        raise ValueError(
            "nnabla F.pad_packed_sequence: packed_sequence must have at least 1 axis and "
            f"batch_sizes 1, got {tuple(x.shape)} and {tuple(bs.shape)}"
        )
    y = _sequences.unpack(x, bs, "batch_sizes", total_length, batch, padding_value, check=True)
    if batch_first:
        y = _native.transpose(y, (1, 0, *range(2, len(y.shape))))
    return y, _sequences.lengths(bs, batch)


def pad_packed_sequence(
    packed_sequence: Any,
    batch_sizes: Any,
    batch_first: bool = False,
    padding_value: Any = None,
    total_length: Any = None,
    outputs: Any = None,
) -> tuple[Any, Any]:
    r"""nnabla's ``F.pad_packed_sequence``, the inverse of :func:`pack_padded_sequence`: from
    ``packed_sequence`` ``(N, *)`` and its ``batch_sizes`` ``(T,)``, ``(padded_sequence,
    lengths)``: ``padded_sequence`` ``(T', B, *)`` (``(B, T', *)`` with ``batch_first``),
    ``T' = max(T, total_length)``, ``B = batch_sizes[0]``, ``padding_value`` (None: 0) where the
    sequences have ended; ``lengths`` ``(B,)`` int32, as nnabla's. Worked out from
    ``batch_sizes``' data at each execution: ``forward()`` follows new batch sizes that give
    the same ``T'`` and ``B``, other ones raise ``ValueError`` at ``forward()`` (the graph
    keeps the shapes of its build: call the function again to build it for them). The gradient
    of ``packed_sequence`` is the incoming gradient's rows packed again. nnabla 1.39's kernel
    ignores ``padding_value`` and pads with 0; the layer pads with ``padding_value``.
    ``outputs`` raises ``NotImplementedError``.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> packed = nn.Variable.from_numpy_array(np.array([1.0, 4.0, 2.0, 5.0, 3.0]))
        >>> batch_sizes = nn.Variable.from_numpy_array(np.array([2, 2, 1], np.int32))
        >>> padded, lengths = F.pad_packed_sequence(packed, batch_sizes, batch_first=True)
        >>> padded.d, lengths.d
        (array([[1., 2., 3.],
               [4., 5., 0.]], dtype=float32), array([3, 2], dtype=int32))
    """
    if outputs is not None:
        raise NotImplementedError(
            "nnabla F.pad_packed_sequence: outputs= is not supported (docs: migration-nnabla.md)"
        )
    return _pad_packed_sequence(
        packed_sequence, batch_sizes, batch_first, padding_value, total_length, -1
    )


def _pad_packed_sequence(
    packed_sequence: Any,
    batch_sizes: Any,
    batch_first: bool,
    padding_value: Any,
    total_length: Any,
    batch: int,
) -> tuple[Any, Any]:
    """:func:`pad_packed_sequence` into ``batch`` sequences (-1: ``batch_sizes[0]``; more:
    the last ones, of length 0, all padding), for ``nnabla.utils.rnn.pad_packed_sequence``."""
    if total_length is not None and (
        isinstance(total_length, bool) or not isinstance(total_length, (int, np.integer))
    ):
        raise TypeError(
            f"nnabla F.pad_packed_sequence: total_length must be an int or None, got "
            f"{total_length!r}"
        )
    pad = 0.0 if padding_value is None else float(padding_value)
    length = -1 if total_length is None else int(total_length)
    return _on_ndarrays(_pad_packed_graph)(  # type: ignore[no-any-return]
        packed_sequence, batch_sizes, bool(batch_first), pad, length, int(batch)
    )


# -- detection ------------------------------------------------------------------------------------


def _nms_detection2d_graph(x: Any, thresh: Any, nms: Any, nms_per_class: Any) -> Any:
    from . import _detection

    xv = _native_variable(x)
    if len(xv.shape) != 3 or int(xv.shape[2]) <= 5:
        raise ValueError(
            "nnabla F.nms_detection2d: x must have shape (batch, boxes, 5 + classes) with at "
            f"least one class, got {tuple(xv.shape)}"
        )
    if xv.dtype.kind != "f":
        xv = _native.cast(xv, "float32")
    where = "nnabla F.nms_detection2d"
    return _detection.nms_detection2d(
        xv,
        _real(where, "thresh", thresh, 0.5),
        _real(where, "nms", nms, 0.45),
        True if nms_per_class is None else nms_per_class,
    )


def nms_detection2d(x: Any, thresh: Any = None, nms: Any = None, nms_per_class: Any = None) -> Any:
    r"""nnabla's ``F.nms_detection2d``: YOLO-style non-maximum suppression of the boxes
    ``x`` ``(B, N, 5 + C)``, each row ``(x, y, w, h, objectness, p_1 .. p_C)`` (centre, size).
    The output has ``x``'s shape: the box coordinates, the objectness (0 below ``thresh``) and
    the class scores ``objectness * p_k`` (0 below ``thresh``); then, with ``nms_per_class``
    (the default), for each class the boxes are taken by decreasing score and each suppresses
    (sets the class score to 0 of) the lower ones whose intersection over union with it is above
    ``nms``; without it, a box whose IoU with any box of higher objectness is above ``nms`` gets
    objectness and scores 0. ``thresh``, ``nms``, ``nms_per_class`` None are 0.5, 0.45, True;
    ``thresh`` and ``nms`` must be real numbers (``TypeError`` otherwise, ``ValueError`` for NaN,
    with which nnabla would compute).
    One ``NmsDetection2d`` function that ``forward()`` runs again on ``x``'s new data; no
    gradient (nnabla's backward does nothing). nnabla 1.39's CPU kernel, in float32, with the
    same sort (boxes of equal scores are taken in nnabla's order).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.array([[[0.5, 0.5, 1.0, 1.0, 0.9, 1.0],
        ...                                             [0.6, 0.5, 1.0, 1.0, 0.8, 1.0],
        ...                                             [3.0, 3.0, 1.0, 1.0, 0.3, 1.0]]]))
        >>> y = F.nms_detection2d(x)
        >>> y.forward()
        >>> y.d[0, :, 4:]                         # the second box overlaps the first
        array([[0.9, 0.9],
               [0.8, 0. ],
               [0. , 0. ]], dtype=float32)
    """
    return _on_ndarrays(_nms_detection2d_graph)(x, thresh, nms, nms_per_class)


def roi_align(
    input: Any,
    boxes: Any,
    output_size: Any,
    spatial_scale: Any = (1.0, 1.0),
    sampling_ratio: int | None = -1,
    channel_last: bool | None = False,
) -> Any:
    r"""nnabla's ``F.roi_align``: for each box ``(batch index, x1, y1, x2, y2)`` of ``boxes``
    ``(K, 5)``, the ``output_size`` cells of the box each averaged over a grid of bilinear
    samples of ``input`` (``(N, C, H, W)``, or ``(N, H, W, C)`` with ``channel_last``); output
    ``(K, C, out_h, out_w)``. Box edges are scaled by ``spatial_scale`` ``(y, x)`` and shifted
    by half a pixel, :math:`x_1' = x_1 s_x - 1/2`; ``sampling_ratio`` samples per cell and
    axis, or :math:`\lceil \text{cell size} \rceil` when it is ``<= 0``. gradhub-nn-ops'
    ``RoIAlign`` (:func:`gradhub.functions.roi_align`), shown as nnabla's ``RoiAlign``;
    differentiable in ``input`` to any order, the boxes get no gradient (as nnabla).
    ``channel_last=True`` is computed too (nnabla's CPU kernel refuses it); ``sampling_ratio``
    and ``channel_last`` None are -1 and False, as nnabla's.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.arange(16.0).reshape(1, 1, 4, 4))
        >>> boxes = nn.Variable.from_numpy_array(np.array([[0.0, 0.5, 0.5, 2.5, 2.5]]))
        >>> y = F.roi_align(x, boxes, (2, 2), sampling_ratio=1)
        >>> y.forward()
        >>> y.d
        array([[[[2.5, 3.5],
                 [6.5, 7.5]]]], dtype=float32)
    """
    from ._roi_align import roi_align_graph

    return _on_ndarrays(roi_align_graph)(
        input, boxes, output_size, spatial_scale, sampling_ratio, channel_last
    )


def _onnx_nms_graph(
    boxes: Any,
    scores: Any,
    center_point_box: Any,
    max_output_boxes_per_class: Any,
    iou_threshold: Any,
    score_threshold: Any,
) -> Any:
    from . import _detection

    bv, sv = _native_variable(boxes), _native_variable(scores)
    bs, ss = tuple(bv.shape), tuple(sv.shape)
    where = "nnabla F.onnx_non_max_suppression"
    if len(bs) != 3 or bs[2] != 4:
        raise ValueError(f"{where}: boxes must have shape (batch, boxes, 4), got {bs}")
    if len(ss) != 3 or ss[0] != bs[0] or ss[2] != bs[1]:
        raise ValueError(
            f"{where}: scores must have shape (batch, classes, boxes) = ({bs[0]}, C, {bs[1]}), "
            f"got {ss}"
        )
    _check_ints(
        where,
        center_point_box=center_point_box,
        max_output_boxes_per_class=max_output_boxes_per_class,
    )
    if center_point_box not in (0, 1):
        raise ValueError(f"{where}: center_point_box must be 0 or 1, got {center_point_box}")
    if max_output_boxes_per_class < 0:
        raise ValueError(
            f"{where}: max_output_boxes_per_class must be non-negative, got "
            f"{max_output_boxes_per_class}"
        )
    return _detection.onnx_non_max_suppression(
        bv,
        sv,
        center_point_box,
        max_output_boxes_per_class,
        _real(where, "iou_threshold", iou_threshold, 0.0),
        _real(where, "score_threshold", score_threshold, 0.0),
    )


def onnx_non_max_suppression(
    boxes: Any,
    scores: Any,
    center_point_box: int = 0,
    max_output_boxes_per_class: int = 0,
    iou_threshold: float = 0.0,
    score_threshold: float = 0.0,
) -> Any:
    r"""nnabla's ``F.onnx_non_max_suppression`` (ONNX's NonMaxSuppression): for each batch and
    class of ``scores`` ``(B, C, N)``, the boxes of ``boxes`` ``(B, N, 4)`` with a score at or
    above ``score_threshold`` are taken by decreasing score, each dropping the lower ones whose
    intersection over union with it is above ``iou_threshold``; the output lists the kept
    ``[batch, class, box]`` triples (uint64, shape ``(K, 3)``), at most
    ``max_output_boxes_per_class`` per class (0, the default, keeps none, as ONNX's). Boxes are
    ``[y1, x1, y2, x2]`` corners (``center_point_box=0``) or ``[x, y, w, h]`` (1). One
    ``ONNXNonMaxSuppression`` function with no gradient. The indices are nnabla 1.39's (its CPU
    kernel, float32, the same sort for equal scores); unlike nnabla's, which computes them once
    when the graph is built, ``forward()`` computes them again on the inputs' new data (``K``
    may change). ``iou_threshold`` or ``score_threshold`` None is 0.0, as nnabla's; they must
    be real numbers (``TypeError`` otherwise, ``ValueError`` for NaN, with which nnabla would
    compute).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> boxes = nn.Variable.from_numpy_array(
        ...     np.array([[[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, 2, 1, 3]]]))
        >>> scores = nn.Variable.from_numpy_array(np.array([[[0.9, 0.8, 0.7]]]))
        >>> y = F.onnx_non_max_suppression(boxes, scores, max_output_boxes_per_class=10,
        ...                                iou_threshold=0.5)
        >>> y.forward()
        >>> y.d
        array([[0, 0, 0],
               [0, 0, 2]], dtype=uint64)
    """
    return _on_ndarrays(_onnx_nms_graph)(
        boxes, scores, center_point_box, max_output_boxes_per_class, iou_threshold, score_threshold
    )


# -- BitShift, VATNoise, get_current_context ------------------------------------------------------


def _bit_shift_kernel(xp: Any, x: Any, shift: Any, direction: str = "LEFT") -> Any:
    bits = x.dtype.itemsize * 8
    s = shift.astype(x.dtype)
    inside = s < bits
    s = xp.where(inside, s, 0).astype(x.dtype)
    y = xp.left_shift(x, s) if direction == "LEFT" else xp.right_shift(x, s)
    return xp.where(inside, y, 0).astype(x.dtype)


_BIT_SHIFT = FunctionDef(
    "BitShift",
    _bit_shift_kernel,
    _layer._PROVIDER,
    inputs=("x", "shift"),
    attrs={"direction": "LEFT"},
    differentiable=False,
    doc="nnabla's BitShift: x << shift or x >> shift on unsigned integers (0 from the width on)",
)


def _bit_shift_graph(x: Any, shift: Any, direction: str) -> Any:
    from gradhub.graph import apply

    xv, sv = _native_variable(x), _native_variable(shift)
    if xv.dtype.kind != "u":
        raise TypeError(
            f"nnabla F.bit_shift: x must hold unsigned integers (uint8, uint16, uint32, uint64), "
            f"got {xv.dtype}"
        )
    if direction not in ("LEFT", "RIGHT"):
        raise ValueError(
            f"nnabla F.bit_shift: direction must be 'LEFT' or 'RIGHT', got {direction!r}"
        )
    xs, ss = tuple(xv.shape), tuple(sv.shape)
    if len(xs) != len(ss) or any(a != b and 1 not in (a, b) for a, b in zip(xs, ss)):
        raise ValueError(
            f"nnabla F.bit_shift: x {xs} and shift {ss} must have the same number of axes, "
            "each of the same size or 1"
        )
    return apply(_BIT_SHIFT, (xv, sv), {"direction": direction})


def bit_shift(x: Any, shift: Any, direction: str = "LEFT") -> Any:
    r"""nnabla's ``F.bit_shift``: :math:`x \ll s` (``direction="LEFT"``) or :math:`x \gg s`
    (``"RIGHT"``) elementwise on unsigned integers, ``shift`` read in ``x``'s dtype and broadcast
    against ``x`` (the same number of axes, each of the same size or 1); the result keeps ``x``'s
    dtype, the bits shifted out of it are lost, and a shift of the dtype's width or more gives 0,
    as nnabla's. One ``BitShift`` function with no gradient. ``x`` of another dtype raises
    ``TypeError`` (nnabla: a ``RuntimeError`` at ``forward()``).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.array([1, 7, 255], np.uint8))
        >>> s = nn.Variable.from_numpy_array(np.array([3, 9, 1], np.uint8))
        >>> y = F.bit_shift(x, s)
        >>> y.forward()
        >>> y.d
        array([  8,   0, 254], dtype=uint8)
    """
    return _on_ndarrays(_bit_shift_graph)(x, shift, direction)


def _vat_noise_kernel(
    xp: Any, x: Any, w: Any, base_axis: int = 1, eps: float = 1.0, refs: Any = ()
) -> Any:
    m = math.prod(x.shape[base_axis:])
    rows = x.reshape(-1, m)
    sq = xp.concatenate([xp.full((rows.shape[0], 1), 1e-8, dtype=x.dtype), rows * rows], axis=1)
    total = xp.cumsum(sq, axis=1)[:, -1:]  # added one after the other from 1e-8, as nnabla's
    scale = x.dtype.type(eps) / xp.sqrt(total)
    return (scale * rows).reshape(x.shape)


def _vat_noise_grads(
    gy: Any, in_shapes: Any, base_axis: int = 1, eps: float = 1.0, refs: Any = ()
) -> list[Any]:
    w = refs[0]() if refs else None
    if w is not None:
        g = gy[0]._data if isinstance(gy[0], _NativeVariable) else gy[0]
        w._data[...] = g * g.dtype.type(eps)
    return [None, None]


_VAT_NOISE = FunctionDef(
    "VATNoise",
    _vat_noise_kernel,
    _layer._PROVIDER,
    inputs=("x", "w"),
    attrs={"base_axis": 1, "eps": 1.0, "refs": ()},
    rule=_grads_rule(_vat_noise_grads),
    doc="nnabla's VATNoise: y = eps x / sqrt(sum(x^2) + 1e-8) per sample; backward w <- eps dy",
)


def _vat_noise_graph(x: Any, w: Any, base_axis: int, eps: float) -> Any:
    import weakref

    from gradhub.graph import apply

    xv, wv = _native_variable(x), _native_variable(w)
    nd = len(xv.shape)
    _check_ints("nnabla F.vat_noise", base_axis=base_axis)
    if not 0 < base_axis < nd:
        raise ValueError(
            f"nnabla F.vat_noise: base_axis must be from 1 to x.ndim - 1 ({nd - 1}), "
            f"got {base_axis}"
        )
    if tuple(xv.shape) != tuple(wv.shape):
        raise ValueError(
            f"nnabla F.vat_noise: w must have x's shape {tuple(xv.shape)}, got {tuple(wv.shape)}"
        )
    eps = _real("nnabla F.vat_noise", "eps", eps)
    attrs = {"base_axis": int(base_axis), "eps": eps, "refs": (weakref.ref(wv),)}
    return apply(_VAT_NOISE, (xv, wv), attrs)


def vat_noise(x: Any, w: Any, base_axis: int = 1, eps: float = 1.0) -> Any:
    r"""nnabla's ``F.vat_noise`` (virtual adversarial training's noise): per sample (the axes
    from ``base_axis`` on), :math:`y = \epsilon\, x / \sqrt{\sum_k x_k^2 + 10^{-8}}`, the squares
    added one after the other from :math:`10^{-8}` as nnabla's kernel. Its backward is nnabla's:
    it writes :math:`\epsilon\, g_y` into ``w``'s **data** (``w`` has ``x``'s shape; the
    gradient with respect to the noise, which the VAT step reads from ``w.d``) and gives neither
    ``x`` nor ``w`` a gradient. One ``VATNoise`` function; the backward runs when ``x`` or ``w``
    needs a gradient, as nnabla's. Unlike nnabla 1.39 (``NotImplementedError``), ``nn.grad``
    through it runs the same backward (``w``'s data written, zero gradients). ``eps`` must be
    a real number (``TypeError`` otherwise, ``ValueError`` for NaN).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.array([[3.0, 4.0]]), need_grad=True)
        >>> w = nn.Variable((1, 2), need_grad=True)
        >>> y = F.vat_noise(x, w, eps=2.0)
        >>> y.forward()
        >>> y.d
        array([[1.2, 1.6]], dtype=float32)
        >>> y.backward(np.array([[1.0, -1.0]]))
        >>> w.d, x.g
        (array([[ 2., -2.]], dtype=float32), array([[0., 0.]], dtype=float32))
    """
    return _on_ndarrays(_vat_noise_graph)(x, w, base_axis, eps)


def get_current_context() -> Any:
    """nnabla's ``F.get_current_context`` (the same function as ``nn.get_current_context``): the
    context in force, the innermost ``nn.context_scope``'s, else the default.

    Example::

        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> F.get_current_context() is nn.get_current_context()
        True
    """
    from . import get_current_context as current

    return current()


class BatchNormalizationInOutAdapter:
    """nnabla's ``F.BatchNormalizationInOutAdapter(ndim, axes)``: the helper nnabla's batch
    normalization uses for several axes. Called on ``x``, it moves the axes that are not in
    ``axes`` first and merges ``axes`` into one last axis (``transpose`` then ``reshape``);
    :meth:`inv` undoes it for an output of that shape. ``axes`` of one axis raise
    ``AssertionError``, and so does a later call on an input of another transposed shape (as
    nnabla's).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> a = F.BatchNormalizationInOutAdapter(4, [1, 2])
        >>> x = nn.Variable.from_numpy_array(np.zeros((2, 3, 4, 5)))
        >>> y = a(x)
        >>> y.shape, a.inv(y).shape
        ((2, 5, 12), (2, 3, 4, 5))
    """

    def __init__(self, ndim: int, axes: Any) -> None:
        assert len(axes) != 1
        self.ndim = ndim
        self.axes = axes
        self.outer_axes = sorted(set(range(ndim)).difference(axes))
        self.transpose_axes = self.outer_axes + sorted(axes)
        self.transposed_shape: Any = None
        self.inv_transpose_axes = np.argsort(self.transpose_axes).tolist()

    def __call__(self, x: Any) -> Any:
        """``x`` with the outer axes first and ``axes`` merged into the last one."""
        t = __getattr__("transpose")(x, self.transpose_axes)
        if self.transposed_shape is not None:
            assert self.transposed_shape == t.shape, "Wrong shape input given."
        self.transposed_shape = t.shape
        k = len(self.outer_axes)
        return __getattr__("reshape")(t, [*t.shape[:k], int(np.prod(t.shape[k:]))])

    def inv(self, y: Any) -> Any:
        """``y`` (of the merged shape) back in the input's layout."""
        transpose, reshape = __getattr__("transpose"), __getattr__("reshape")
        return transpose(reshape(y, self.transposed_shape), self.inv_transpose_axes)


#: the note nnabla's function_api appends to a docstring (nnabla 1.39's text)
_FUNCTION_API_NOTE = (
    "\n\n    Note:\n        All nnabla functions in :obj:`nnabla.functions` are decorated with the "
    ":obj:`nnabla.function_bases.function_api` decorator,\n        which queries the current "
    "context and passes it into the first argument of the\n        original function. The "
    "original function always takes a context as the first argument.\n\n    "
)


def function_api(func: Callable[..., Any]) -> Callable[..., Any]:
    """nnabla's ``F.function_api`` (``nnabla.function_bases.function_api``): a decorator for
    a function whose first argument is ``ctx``; the decorated function takes the other
    arguments (its signature without ``ctx``) and calls ``func`` with the current context
    (:func:`get_current_context`) first. Its docstring is ``func``'s followed by nnabla's note.
    ``func`` without a parameter ``ctx`` raises ``KeyError``, as nnabla's.

    .. math:: \\mathrm{function\\_api}(f)(x, \\ldots) = f(\\mathrm{ctx}, x, \\ldots)

    Example::

        >>> import gradhub_compat.nnabla.functions as F
        >>> @F.function_api
        ... def twice(ctx, x, k=2):
        ...     return x * k
        >>> twice(3), str(__import__("inspect").signature(twice))
        (6, '(x, k=2)')
    """
    sig = inspect.signature(func)
    names = list(sig.parameters)
    if "ctx" not in names:
        raise KeyError(f"'ctx' not found in {names}")

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return func(get_current_context(), *args, **kwargs)

    del wrapper.__wrapped__  # (the signature below, without ctx)
    wrapper.__signature__ = sig.replace(  # type: ignore[attr-defined]
        parameters=[q for n, q in sig.parameters.items() if n != "ctx"]
    )
    wrapper.__doc__ = (func.__doc__ or "No docstring.") + _FUNCTION_API_NOTE
    return wrapper


#: nnabla functions with an ``inplace`` argument gradhub's accept and ignore: name -> its position
_INPLACE_POSITION = {
    "add2": 2,
    "sub2": 2,
    "mul2": 2,
    "div2": 2,
    "pow2": 2,
    "add_scalar": 2,
    "mul_scalar": 2,
    "pow_scalar": 2,
}


def _inplace_marked(fn: Callable[..., Any], position: int) -> Callable[..., Any]:
    """``fn`` that records nnabla's ``inplace=True`` on the function it builds (shown by
    ``y.parent.info.args`` and written to NNP files, as nnabla does; the values are the same)."""
    from ._hooks import mark_inplace

    @functools.wraps(fn)
    def marked(*args: Any, **kwargs: Any) -> Any:
        y = fn(*args, **kwargs)
        if kwargs.get("inplace", args[position] if len(args) > position else False):
            mark_inplace(y)
        return y

    return marked


def _wrap(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    if name == "batch_normalization":
        return _on_ndarrays(_batch_normalization(fn))
    position = _INPLACE_POSITION.get(name)
    if position is not None:
        fn = _inplace_marked(fn, position)
    wrapped = _on_ndarrays(fn)
    wrapped.__name__ = wrapped.__qualname__ = name
    return wrapped


def __getattr__(name: str) -> Any:
    return wrapped_attribute(__name__, _native, name, _wrappers, lambda fn: _wrap(fn, name))


def __dir__() -> list[str]:
    return sorted(
        {
            *_native.__dir__(),
            "constant",
            "identity",
            "sink",
            "binary_tanh",
            "binary_sigmoid",
            "tensor_normalization",
            "weight_normalization",
            "fused_batch_normalization",
            "sync_batch_normalization",
            "mean_subtraction",
            "spectral_norm",
            "lstm",
            "gru",
            "rnn",
            "fixed_point_quantize",
            "binary_connect_affine",
            "binary_connect_convolution",
            "binary_weight_affine",
            "binary_weight_convolution",
            "prune",
            "multi_head_attention",
            "image_augmentation",
            "random_flip",
            "random_shift",
            "random_crop",
            "random_erase",
            "batch_inv",
            "batch_det",
            "batch_logdet",
            "batch_cholesky",
            "searchsorted",
            "nonzero",
            "confusion_matrix",
            "unique",
            "shape",
            "reduce_sum",
            "reduce_mean",
            "bc_add2",
            "meshgrid",
            "mish",
            "unlink",
            "assign",
            "bit_shift",
            "reduce",
            "vat_noise",
            "get_current_context",
            "function_api",
            "BatchNormalizationInOutAdapter",
            "nms_detection2d",
            "onnx_non_max_suppression",
            "quantize_linear",
            "dequantize_linear",
            "pow2_quantize",
            "pack_padded_sequence",
            "pad_packed_sequence",
            "rand_beta",
            "rand_binomial",
            "rand_gamma",
            "random_choice",
            "onnx_resize",
            "patch_correlation",
            "adaptive_separable_convolution",
            "min_max_quantize",
            "inq_affine",
            "inq_convolution",
            "fused_convolution",
        }
    )
