"""nnabla's incremental network quantization (``INQAffine``, ``INQConvolution``).

The weight of the layer is learned in steps (Zhou et al., *Incremental network quantization*):
an indicator of the weight's shape says which values are fixed (1) and which still learn (0).
Each execution of nnabla 1.39's function (its CPU kernel, transcribed here in float32):

1. the weights fixed at the previous execution are put back to the values they had then (a
   solver step changed them: their gradient is not masked), in place in the weight's array;
2. when the function's execution counter (0 at the first execution) is in ``inq_iterations``:
   at its last value every weight is fixed; at the others half of the learnable ones, the
   largest by absolute value (``"largest_abs"``) or each with probability 1/2 (``"random"``),
   the indicator written in place;
3. the fixed weights become powers of two, in place: with :math:`n_1` the exponent of the
   largest :math:`|w|` (rounded up from :math:`\\log_2 1.5` in its binary fraction) and
   :math:`n_2 = n_1 + 1 - 2^{b - 2}` (``b = num_bits``), a value below :math:`2^{n_2 - 1}`
   becomes 0, the others :math:`\\mathrm{sign}(w) 2^e`, :math:`e` the exponent of :math:`|w|`
   rounded up where its binary fraction is at least :math:`\\log_2 1.5` (nearest power in the
   linear domain), clipped to :math:`[n_2, n_1]`;
4. the layer (affine or convolution) runs on the weights; the counter goes up by one.

The weight node here is a recorded function ``INQWeight`` (one per call of the layer, holding the
counter, the count of the numbers its generator gave, and the previous weights and indicator in
hidden buffers); its gradient passes straight
through to the weight, as nnabla's (whose backward is the layer's). ``"random"`` with a seed
``>= 0`` draws as nnabla's: the function's ``std::mt19937`` seeded with it, whose sequence each
selection continues, and libstdc++'s ``bernoulli_distribution(0.5)`` (two 32-bit draws per
learnable value); with ``seed=-1`` the draws come from the front-end's global generator of the
random functions (``nn.seed``), not from nnabla's.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from gradhub.graph import apply
from gradhub.registry import FunctionDef, Rule
from gradhub.variable import Variable as NativeVariable

from .._common import host_array as _host
from . import _layer_functions as _layer

SELECTION_ALGORITHMS = ("largest_abs", "random")

# nnabla's thresholds: the exponent of the largest |w| compares its fraction with log2(1.5) as a
# double, each fixed weight with the float32 constant
_LOG2_15 = math.log2(1.5)
_D32 = np.float32(0.58496250072115619)


def mt19937_bernoulli(seed: int, n: int, skip: int = 0) -> np.ndarray:
    """``n`` draws of libstdc++'s ``std::bernoulli_distribution(0.5)`` on ``std::mt19937(seed)``
    after ``skip`` 32-bit numbers: each one ``generate_canonical<double, 53>`` (two 32-bit
    numbers ``a``, ``b``: ``(a + b 2^32) / 2^64``) below 1/2. ``numpy.random.RandomState(seed)``
    is the same generator."""
    rs = np.random.RandomState(int(seed) & 0xFFFFFFFF)
    if skip:
        rs.randint(0, 2**32, size=int(skip), dtype=np.uint32)
    u = rs.randint(0, 2**32, size=2 * n, dtype=np.uint32).astype(np.float64)
    canonical = (u[0::2] + u[1::2] * 2.0**32) / 2.0**64
    return canonical < 0.5


def _select(
    w: np.ndarray, ind: np.ndarray, last: bool, algorithm: str, seed: int, drawn: int
) -> tuple[np.ndarray, int]:
    """The indicator (raveled, int32) after nnabla's selection step, and the count of the
    32-bit numbers the seeded generator has given (``drawn`` before)."""
    if last:
        return np.ones_like(ind), drawn
    out = ind.copy()
    learnable = np.flatnonzero(out == 0)
    if algorithm == "largest_abs":
        order = np.argsort(-np.abs(w), kind="stable")
        k = learnable.size // 2
        free = order[out[order] == 0]
        if k == 0:  # (nnabla's loop then fixes the largest only when it is learnable)
            free = free[:1] if free.size and free[0] == order[0] else free[:0]
        else:
            free = free[:k]
        out[free] = 1
        return out, drawn
    if seed >= 0:
        draws = mt19937_bernoulli(seed, learnable.size, drawn)
        drawn += 2 * learnable.size
    else:
        from gradhub_nn_ops.stochastic import rand  # (the generator of seed=-1)

        draws = _host(rand(0.0, 1.0, (learnable.size,), -1).d) < 0.5
    out[learnable] = draws.astype(out.dtype)
    return out, drawn


def _pow2(w: np.ndarray, fixed: np.ndarray, num_bits: int) -> np.ndarray:
    """nnabla's power-of-two values of the fixed weights (float32), the others unchanged."""
    t = np.float32
    max_abs = t(np.max(np.abs(w))) if w.size else t(0)
    if max_abs == 0:
        max_abs = t(1)
    lg = np.log2(max_abs)
    fl = np.floor(lg)
    n1 = int(fl + t(float(lg - fl) >= _LOG2_15))
    n2 = n1 + 1 - int(2.0 ** (num_bits - 2))
    threshold = t(2.0 ** (n2 - 1))
    a = np.abs(w)
    with np.errstate(divide="ignore", invalid="ignore"):  # (|w| = 0: below the threshold)
        b = np.log2(a)
        fb = np.floor(b)
        e = (fb + (b - fb >= _D32).astype(np.float32)).astype(np.float64)
    e = np.clip(np.where(np.isfinite(e), e, n2), n2, n1).astype(np.int64)
    q = np.ldexp(np.where(w < 0, t(-1), t(1)), e).astype(np.float32)
    q = np.where(a < threshold, t(0), q)
    return np.where(fixed, q, w).astype(w.dtype)


def _inq_kernel(
    xp: Any,
    w: Any,
    ind: Any,
    counter: Any,
    old_w: Any,
    old_ind: Any,
    num_bits: int = 4,
    inq_iterations: tuple[int, ...] = (),
    selection_algorithm: str = "largest_abs",
    seed: int = -1,
) -> Any:
    for name, a in (("weight", w), ("indicator_fixedweights", ind)):
        if not getattr(getattr(a, "flags", None), "writeable", True):
            raise ValueError(
                f"nnabla INQ layer: {name} is read-only; the layer updates it in place"
            )
    shape = tuple(w.shape)
    hw = _host(w).astype(np.float32).ravel()
    hind = np.trunc(_host(ind).ravel()).astype(np.int32)  # (nnabla casts it to int)
    prev = _host(old_ind).ravel() == 1
    hw = np.where(prev, _host(old_w).ravel(), hw).astype(np.float32)
    c, drawn = (int(v) for v in _host(counter).ravel())
    if c in inq_iterations:
        last = c == inq_iterations[-1]
        hind, drawn = _select(hw, hind, last, selection_algorithm, seed, drawn)
    hw = _pow2(hw, hind == 1, num_bits)
    w[...] = xp.asarray(hw.reshape(shape)).astype(w.dtype)
    ind[...] = xp.asarray(hind.reshape(shape)).astype(ind.dtype)
    counter[...] = xp.asarray(np.array([c + 1, drawn], dtype=np.int64))
    old_w[...] = w
    old_ind[...] = xp.asarray(hind.reshape(shape))
    return w.copy()


INQ_WEIGHT = FunctionDef(
    "INQWeight",
    _inq_kernel,
    _layer._PROVIDER,
    inputs=("w", "indicator", "counter", "old_w", "old_indicator"),
    attrs={
        "num_bits": 4,
        "inq_iterations": (),
        "selection_algorithm": "largest_abs",
        "seed": -1,
    },
    rule=Rule(_layer._straight_bw, _layer._PROVIDER, (), (), fast=_layer._straight_fast),
    doc="nnabla's INQ weight: fixed weights as powers of two (weight, indicator updated); STE",
)


def check(
    where: str,
    weight: Any,
    indicator: Any,
    num_bits: Any,
    inq_iterations: Any,
    selection_algorithm: Any,
    seed: Any,
) -> dict[str, Any]:
    """nnabla's checks of the INQ layers (the message names ``where``, e.g. ``"nnabla
    F.inq_affine"``); the function's attributes."""
    if tuple(indicator.shape) != tuple(weight.shape):
        raise ValueError(
            f"{where}: indicator_fixedweights must have the weight's shape "
            f"{tuple(weight.shape)}, got {tuple(indicator.shape)}"
        )
    if selection_algorithm not in SELECTION_ALGORITHMS:
        raise ValueError(
            f"{where}: selection_algorithm must be 'largest_abs' or 'random', got "
            f"{selection_algorithm!r}"
        )
    for name, v in (("num_bits", num_bits), ("seed", seed)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"{where}: {name} must be an int, got {v!r}")
    seq = isinstance(inq_iterations, (list, tuple, range, np.ndarray))
    its = tuple(np.asarray(inq_iterations).ravel().tolist()) if seq else None
    if its is None or any(isinstance(i, bool) or not isinstance(i, int) for i in its):
        raise TypeError(
            f"{where}: inq_iterations must be a sequence of ints, got {inq_iterations!r}"
        )
    return {
        "num_bits": int(num_bits),
        "inq_iterations": tuple(int(i) for i in its),
        "selection_algorithm": str(selection_algorithm),
        "seed": int(seed),
    }


def inq_weight(w: NativeVariable, indicator: NativeVariable, attrs: dict[str, Any]) -> Any:
    """Apply ``INQWeight``; returns its output and its state (hidden buffers of its own: the
    execution counter with the count of the generator's numbers, the previous weights, the
    previous indicator)."""
    xp = w.device.xp
    shape = tuple(int(s) for s in w.shape)
    with w.device.activate():
        counter = NativeVariable.leaf(xp.zeros((2,), dtype=np.int64), False)
        old_w = NativeVariable.leaf(xp.zeros(shape, dtype=w.dtype), False)
        old_ind = NativeVariable.leaf(xp.zeros(shape, dtype=np.int32), False)
    return apply(INQ_WEIGHT, (w, indicator, counter, old_w, old_ind), attrs), (
        counter,
        old_w,
        old_ind,
    )
