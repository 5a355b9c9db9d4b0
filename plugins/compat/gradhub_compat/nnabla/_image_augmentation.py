"""nnabla's ``F.image_augmentation`` and ``F.random_erase``, computed as nnabla 1.39's CPU kernels.

``F.image_augmentation`` follows nnabla 1.39's CPU kernel
(``src/nbla/function/generic/image_augmentation.cpp``): per image, a scale, aspect ratio,
rotation, crop position, flips, brightness, contrast, radial distortion and noise level drawn
from a Mersenne Twister (``std::mt19937``: numpy's ``RandomState`` gives the same 32-bit
outputs for the same seed), then each output pixel sampled bilinearly from the input (positions
clamped to the image), ``(v + brightness - contrast_center) * contrast + contrast_center``, plus
normal noise (libstdc++'s polar method). With a ``seed >= 0`` the values are nnabla's within
float32 rounding; ``seed=-1`` seeds the function's generator from the random functions' global
one. Like nnabla's, the function has no gradient (the input gets none).

``F.random_erase`` follows ``src/nbla/function/generic/random_erase.cpp``: the patches drawn from
the same generator with libstdc++'s ``uniform_real_distribution<float>`` and
``uniform_int_distribution<int>``, in nnabla's order (all patches first, then the replacement
values pixel by pixel), so that with a ``seed >= 0`` the output is nnabla's."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from gradhub.graph import apply
from gradhub.registry import FunctionDef, Provider, Rule

from .._common import host_array
from .function import PythonFunction

_F32 = np.float32


class _MT19937:
    """The 32-bit outputs of ``std::mt19937`` (a numpy ``RandomState``'s raw stream), its
    ``generate_canonical<double, 53>`` and libstdc++'s ``normal_distribution<double>``."""

    def __init__(self, rs: np.random.RandomState) -> None:
        self.rs = rs
        self.saved: float | None = None

    def __call__(self) -> int:
        return int(self.rs.randint(0, 2**32, dtype=np.uint32))

    def unit(self) -> np.float32:
        """``(rgen() % 1001) * 0.001f``."""
        return _F32((self() % 1001) * _F32(0.001))

    def canonical(self) -> float:
        v = (self() + self() * 4294967296.0) / 18446744073709551616.0
        return v if v < 1.0 else math.nextafter(1.0, 0.0)

    def normal(self) -> float:
        if self.saved is not None:
            v, self.saved = self.saved, None
            return v
        while True:
            x = 2.0 * self.canonical() - 1.0
            y = 2.0 * self.canonical() - 1.0
            r2 = x * x + y * y
            if r2 <= 1.0 and r2 != 0.0:
                break
        mult = math.sqrt(-2.0 * math.log(r2) / r2)
        self.saved = x * mult
        return y * mult


def augment(x: np.ndarray, out_hw: tuple[int, int], a: dict[str, Any], rs: Any) -> np.ndarray:
    """The augmented images of ``x`` (``(..., C, H, W)``), ``out_hw`` their size; ``a`` holds
    nnabla's arguments, ``rs`` the generator (a ``RandomState``)."""
    mt = _MT19937(rs)
    h_in, w_in = x.shape[-2:]
    num_ch = x.shape[-3] if x.ndim >= 3 else 1
    imgs = np.asarray(x, np.float32).reshape(-1, num_ch, h_in, w_in)
    h_out, w_out = out_hw
    pad = a["pad"]
    w_in_pad, h_in_pad = w_in + pad[1] * 2, h_in + pad[0] * 2
    w_half, h_half = _F32(w_out * 0.5), _F32(h_out * 0.5)
    i_w_half, i_h_half = _F32(1.0) / w_half, _F32(1.0) / h_half
    bright, contrast, center = a["brightness"], a["contrast"], _F32(a["contrast_center"])
    out = np.empty((imgs.shape[0], num_ch, h_out, w_out), np.float32)
    iy, ix = np.meshgrid(
        np.arange(h_out, dtype=np.float32), np.arange(w_out, dtype=np.float32), indexing="ij"
    )
    for k in range(imgs.shape[0]):
        lo, hi = a["min_scale"], a["max_scale"]
        scale = _F32(lo * np.exp(mt.unit() * np.log(_F32(hi / lo))))
        lar = np.log(_F32(a["aspect_ratio"]))
        scale_x = _F32(np.exp(-lar * 0.5 + mt.unit() * lar))
        scale_y = _F32(1.0 / scale_x)
        i_sx, i_sy = _F32(1.0) / (scale * scale_x), _F32(1.0) / (scale * scale_y)
        angle = _F32(-a["angle"] + mt.unit() * a["angle"] * 2)
        w_scaled, h_scaled = _F32(w_in_pad * scale * scale_x), _F32(h_in_pad * scale * scale_y)
        cx, cy = _F32((w_out - 1) * 0.5), _F32((h_out - 1) * 0.5)
        cx_scaled = _F32(mt.unit() * (w_scaled - w_out) + cx)
        cy_scaled = _F32(mt.unit() * (h_scaled - h_out) + cy)
        flip_lr = bool(a["flip_lr"]) & bool(mt() % 2)
        flip_ud = bool(a["flip_ud"]) & bool(mt() % 2)
        g_bright = _F32(mt.unit() * bright * 2.0 - bright)
        g_contrast = _F32(np.exp(mt.unit() * np.log(_F32(contrast)) * 2.0) / contrast)
        ch_b = np.empty(num_ch, np.float32)
        ch_c = np.empty(num_ch, np.float32)
        for ic in range(num_ch):
            b = _F32(mt.unit() * bright * 2.0 - bright) if a["brightness_each"] else g_bright
            ch_b[ic] = b - center
            ch_c[ic] = (
                _F32(np.exp(mt.unit() * np.log(_F32(contrast)) * 2.0) / contrast)
                if a["contrast_each"]
                else g_contrast
            )
        dist = _F32(np.exp(mt.unit() * 2.0 * a["distortion"] - a["distortion"]) - 1.0)
        noise = _F32(mt.unit() * a["noise"])
        ct, st = _F32(np.cos(angle)), _F32(np.sin(angle))
        x_ax = (-ct if flip_lr else ct) * i_sx
        y_ax = (st if flip_lr else -st) * i_sy
        x_ay = (-st if flip_ud else st) * i_sx
        y_ay = (-ct if flip_ud else ct) * i_sy
        x0 = _F32(cx_scaled * i_sx) - (x_ax * cx + y_ax * cy) - pad[1]
        y0 = _F32(cy_scaled * i_sy) - (x_ay * cx + y_ay * cy) - pad[0]
        if dist != 0:
            dx = (ix - w_half) * i_w_half
            dy = (iy - h_half) * i_h_half
            r2 = dx * dx + dy * dy
            ds = _F32(1.0) / (_F32(1.0) + dist)
            dx = (dx + dx * dist * r2) * w_half * ds + w_half
            dy = (dy + dy * dist * r2) * h_half * ds + h_half
            xin, yin = x0 + dx * x_ax + dy * y_ax, y0 + dx * x_ay + dy * y_ay
        else:
            xin, yin = x0 + ix * x_ax + iy * y_ax, y0 + ix * x_ay + iy * y_ay
        xin = np.clip(np.asarray(xin, np.float32), 0, w_in - 1)
        yin = np.clip(np.asarray(yin, np.float32), 0, h_in - 1)
        x_i, y_i = xin.astype(np.int64), yin.astype(np.int64)
        fx, fy = xin - x_i, yin - y_i
        x_1 = np.where(x_i < w_in - 1, x_i + 1, x_i)
        y_1 = np.where(y_i < h_in - 1, y_i + 1, y_i)
        im = imgs[k]
        res = (
            im[:, y_i, x_i] * ((1 - fx) * (1 - fy))
            + im[:, y_i, x_1] * (fx * (1 - fy))
            + im[:, y_1, x_i] * ((1 - fx) * fy)
            + im[:, y_1, x_1] * (fx * fy)
        )
        res = (res + ch_b[:, None, None]) * ch_c[:, None, None] + center
        if noise > 0:
            n = [mt.normal() for _ in range(h_out * w_out * num_ch)]
            res = res + np.asarray(n).reshape(h_out, w_out, num_ch).transpose(2, 0, 1) * noise
        out[k] = res
    return out.reshape(tuple(x.shape[:-2]) + (h_out, w_out))


class ImageAugmentation(PythonFunction):
    """The recorded node of ``F.image_augmentation``: each execution draws the next values of
    its generator, except the one at the build while auto_forward is off (nnabla executes
    nothing then: the first ``forward()`` gives the first draw)."""

    def __init__(self, out_shape: tuple[int, ...], args: dict[str, Any], seed: int, fresh: bool):
        super().__init__()
        self._out_shape = out_shape
        self._args = args
        self._rs = np.random.RandomState(seed)
        self._fresh = fresh

    @property
    def name(self) -> str:
        return "ImageAugmentation"

    def min_outputs(self) -> int:
        return 1

    def setup_impl(self, inputs: list[Any], outputs: list[Any]) -> None:
        outputs[0].reset_shape(self._out_shape, True)

    def forward_impl(self, inputs: list[Any], outputs: list[Any]) -> None:
        rs = self._rs
        if self._fresh:  # (the build: a copy, so that the first forward() draws the same)
            self._fresh = False
            rs = np.random.RandomState()
            rs.set_state(self._rs.get_state())
        x = host_array(inputs[0].d)
        h, w = self._out_shape[-2:]
        outputs[0].d = augment(x, (h, w), self._args, rs)

    def backward_impl(
        self, inputs: list[Any], outputs: list[Any], propagate_down: list[bool], accum: list[bool]
    ) -> None:
        if propagate_down[0] and not accum[0]:  # nnabla's has no gradient
            inputs[0].grad.zero()

    def grad_depends_output_data(self, i: int, o: int) -> bool:
        return False

    def grad_depends_input_data(self, i: int, j: int) -> bool:
        return False


class _ErasingDraws(_MT19937):
    """libstdc++'s distributions over ``std::mt19937`` that nnabla's RandomErase uses."""

    def real(self, a: float, b: float) -> np.float32:
        """``uniform_real_distribution<float>(a, b)``: ``generate_canonical<float, 24>`` (one
        32-bit draw, ``float(r) / 2^32``, below 1) scaled in float32."""
        u = _F32(_F32(self()) / _F32(4294967296.0))
        if u >= 1:
            u = np.nextafter(_F32(1), _F32(0))
        return _F32(u * (_F32(b) - _F32(a)) + _F32(a))

    def reals(self, a: float, b: float, k: int) -> np.ndarray:
        """``k`` draws of :meth:`real` at once (the same 32-bit outputs, in order)."""
        u = self.rs.randint(0, 2**32, size=k, dtype=np.uint32).astype(np.float32)
        u = u / _F32(4294967296.0)
        u = np.where(u >= 1, np.nextafter(_F32(1), _F32(0)), u)
        return (u * (_F32(b) - _F32(a)) + _F32(a)).astype(np.float32)

    def integer(self, a: int, b: int) -> int:
        """``uniform_int_distribution<int>(a, b)`` (b - a < 2^32 - 1): the draws below the
        largest multiple of the range, divided down."""
        span = b - a + 1
        scaling = 0xFFFFFFFF // span
        past = span * scaling
        while True:
            r = self()
            if r < past:
                return a + r // scaling


def erase(
    x: np.ndarray, a: dict[str, Any], rs: np.random.RandomState
) -> tuple[np.ndarray, np.ndarray]:
    """(the erased images, the mask of erased pixels) of ``x`` (``(..., C, H, W)``, the axes
    before ``a["base_axis"]`` the samples) with nnabla's arguments ``a`` and generator ``rs``."""
    mt = _ErasingDraws(rs)
    shape = x.shape
    ba = a["base_axis"]
    b_count = int(np.prod(shape[:ba], dtype=np.int64))
    ch, h, w = (int(n) for n in shape[ba:])
    share, n = a["share"], a["n"]
    (al, ah), (rl, rh), (vl, vh) = a["area_ratios"], a["aspect_ratios"], a["replacements"]
    coords = []
    for _ in range(n * b_count * (1 if share else ch)):
        se = _F32(mt.real(al, ah) * _F32(h * w))
        re = mt.real(rl, rh)
        he = min(int(np.sqrt(_F32(se * re))), h)
        we = min(int(np.sqrt(_F32(se / re))), w)
        eprob = mt.real(0.0, 1.0)
        ys = mt.integer(0, h - he)
        xs = mt.integer(0, w - we)
        coords.append((eprob, ys, xs, ys + he, xs + we))  # (the ends are inclusive)
    y = np.array(x, np.float32).reshape(b_count, ch, h, w)
    mask = np.zeros(y.shape, bool)
    prob = _F32(a["prob"])
    k = 0
    for _n in range(n):
        for b in range(b_count):
            for c in range(ch):
                eprob, ys, xs, ye, xe = coords[k if share else k + c]
                if eprob <= prob:
                    rows, cols = slice(ys, ye + 1), slice(xs, xe + 1)
                    hh = len(range(h)[rows])
                    ww = len(range(w)[cols])
                    y[b, c, rows, cols] = mt.reals(vl, vh, hh * ww).reshape(hh, ww)
                    mask[b, c, rows, cols] = True
            k += 1 if share else ch
    return y.reshape(shape), mask.reshape(shape)


class EraseState:
    """The generator of one ``F.random_erase`` node and the mask of the pixels its last execution
    erased (which its gradient reads)."""

    __slots__ = ("fresh", "mask", "rs")

    def __init__(self, seed: int, fresh: bool) -> None:
        self.rs = np.random.RandomState(seed)
        self.fresh = fresh  # the build (auto_forward off): nnabla draws at the first forward()
        self.mask: np.ndarray | None = None

    def __repr__(self) -> str:
        return "<random_erase state>"


def _to_host(xp: Any, a: Any) -> np.ndarray:
    return np.asarray(a) if xp is np else np.asarray(a.get())


def _random_erase_kernel(xp: Any, x: Any, refs: Any = None, **args: Any) -> Any:
    st = refs
    rs = st.rs
    if st.fresh:  # (the build: a copy, so that the first forward() draws the same)
        st.fresh = False
        rs = np.random.RandomState()
        rs.set_state(st.rs.get_state())
    y, st.mask = erase(_to_host(xp, x), args, rs)
    return y if xp is np else xp.asarray(y)


def _erase_grad_kernel(xp: Any, g: Any, refs: Any = None) -> Any:
    mask = refs.mask
    if mask is None:
        return g.copy()
    return xp.where(mask if xp is np else xp.asarray(mask), g.dtype.type(0), g)


def _erase_grad_bw(
    gy: Any, ins: Any, in_shapes: Any, outs: Any, out_shapes: Any, refs: Any = None
) -> list[Any]:
    return [apply(ERASE_GRAD, (gy[0],), {"refs": refs})]  # (a mask: its own transpose)


def _random_erase_bw(
    gy: Any, ins: Any, in_shapes: Any, outs: Any, out_shapes: Any, **attrs: Any
) -> list[Any]:
    if not attrs["ste_fine_grained"]:
        return [gy[0]]  # the straight-through estimator
    return [apply(ERASE_GRAD, (gy[0],), {"refs": attrs["refs"]})]


_PROVIDER = Provider("gradhub-compat", "", "gradhub_compat.nnabla.functions")

ERASE_GRAD = FunctionDef(
    "RandomEraseGrad",
    _erase_grad_kernel,
    _PROVIDER,
    inputs=("g",),
    attrs={"refs": None},
    rule=Rule(_erase_grad_bw, _PROVIDER, (), ()),
    doc="the gradient of nnabla's RandomErase: g, zero on the pixels the last execution erased",
)

RANDOM_ERASE_ARGS = {
    "prob": 0.5,
    "area_ratios": [0.02, 0.4],
    "aspect_ratios": [0.3, 3.3333],
    "replacements": [0.0, 255.0],
    "n": 1,
    "share": True,
    "inplace": False,
    "base_axis": 1,
    "seed": -1,
    "channel_last": False,
    "ste_fine_grained": True,
    "refs": None,
}

RANDOM_ERASE = FunctionDef(
    "RandomErase",
    _random_erase_kernel,
    _PROVIDER,
    inputs=("x",),
    attrs=RANDOM_ERASE_ARGS,
    rule=Rule(_random_erase_bw, _PROVIDER, (), ()),
    doc="nnabla's RandomErase (its CPU kernel's draws): patches of x replaced by random values",
)
RANDOM_ERASE.random = True  # a new draw at each execution: never replayed from a recording
