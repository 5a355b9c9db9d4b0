"""nnabla's ``PatchCorrelation`` and ``AdaptiveSeparableConvolution`` as recorded functions
of the layer (a :class:`gradhub.registry.FunctionDef` applied with :func:`gradhub.graph.apply`,
not added to gradhub's registry), with nnabla's names and arguments.

Both are linear in each input, so their gradients are again such functions: with ``B`` the
inner product of the output with an output gradient, each input's gradient is the derivative of
``B`` with respect to that input, a function of the other arguments. The layer records one
function per derivative; their rules call only these functions, so the gradients are exact to
every order. The kernels (array code, any device) work on views of the inputs and keep no
copies; the values are those of nnabla 1.39's CPU kernels (``patch_correlation.cpp``,
``adaptive_separable_convolution.cpp``) up to the order of the float32 sums.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gradhub.graph import apply
from gradhub.registry import FunctionDef, Rule
from gradhub.variable import Variable as NativeVariable

from . import _layer_functions as _layer


def correlation_shape(
    in_hw: tuple[int, int],
    patch: tuple[int, int],
    shift: tuple[int, int],
    patch_step: tuple[int, int],
    shift_step: tuple[int, int],
    padding: tuple[int, int, int, int],
) -> tuple[int, int, int, int]:
    """``(och, ocw, oh, ow)``: the numbers of vertical and horizontal shifts and of patch
    rows and columns, as nnabla's ``PatchCorrelation::setup_impl``."""
    h, w = in_hw
    och = (2 * shift[0] + shift_step[0]) // shift_step[0]
    ocw = (2 * shift[1] + shift_step[1]) // shift_step[1]
    oh = (h + padding[0] + padding[1] - patch[0] + patch_step[0]) // patch_step[0]
    ow = (w + padding[2] + padding[3] - patch[1] + patch_step[1]) // patch_step[1]
    return och, ocw, oh, ow


# -- PatchCorrelation: one function, and the two partial derivatives of its bilinear form -------
#
# With B(x1, x2, g) = <PatchCorrelation(x1, x2), g>, each of the three functions below is the
# derivative of B with respect to one argument (``y``: the correlation itself; ``x1``, ``x2``:
# its gradients), a function of the other two; the derivative of each with respect to either of
# its inputs is again one of the three, so their rules use only them (exact to every order).


def _windows(k: tuple[int, int], n: tuple[int, int], step: tuple[int, int]) -> tuple[slice, slice]:
    """The rows and columns ``k + step * i`` (``i < n``) of a padded NHWC array."""
    return (
        slice(k[0], k[0] + step[0] * (n[0] - 1) + 1, step[0]),
        slice(k[1], k[1] + step[1] * (n[1] - 1) + 1, step[1]),
    )


def _corr_partial(
    xp: Any,
    p: Any,
    q: Any,
    slot: str = "y",
    patch: tuple[int, int] = (1, 1),
    shift: tuple[int, int] = (0, 0),
    patch_step: tuple[int, int] = (1, 1),
    shift_step: tuple[int, int] = (1, 1),
    padding: tuple[int, int, int, int] = (0, 0, 0, 0),
) -> Any:
    """The derivative of :math:`B(x1, x2, g)` with respect to ``slot``, on NHWC arrays: ``p,
    q`` are ``x1, x2`` (slot ``y``: the correlation ``(N, oh, ow, och, ocw)``), ``x2, g``
    (slot ``x1``) or ``x1, g`` (slot ``x2``). Values outside the inputs count as zeros."""
    dtype = xp.result_type(p.dtype, q.dtype)
    n, h, w, c = (int(s) for s in p.shape)
    top, bottom, left, right = padding
    (sh, sw), (qh, qw) = shift, shift_step
    och, ocw, oh, ow = correlation_shape((h, w), patch, shift, patch_step, shift_step, padding)
    # x1 zero-padded by ``padding``, x2 by ``padding`` plus the largest shifts
    a_pad = xp.zeros((n, h + top + bottom, w + left + right, c), dtype)
    b_pad = xp.zeros((n, h + top + bottom + 2 * sh, w + left + right + 2 * sw, c), dtype)
    a_in = (slice(None), slice(top, top + h), slice(left, left + w))
    b_in = (slice(None), slice(top + sh, top + sh + h), slice(left + sw, left + sw + w))
    if slot != "x1":
        a_pad[a_in] = p
    if slot == "y":
        b_pad[b_in] = q
    elif slot == "x1":
        b_pad[b_in] = p
    shifts = [
        (u, v, dy, dx)
        for u, dy in enumerate(range(-sh, sh + 1, qh))
        for v, dx in enumerate(range(-sw, sw + 1, qw))
    ]
    y = xp.zeros((n, oh, ow, och, ocw), dtype) if slot == "y" else None
    for ky in range(patch[0]):
        for kx in range(patch[1]):
            wa = (slice(None), *_windows((ky, kx), (oh, ow), patch_step))
            for u, v, dy, dx in shifts:
                wb = (slice(None), *_windows((sh + dy + ky, sw + dx + kx), (oh, ow), patch_step))
                if slot == "y":
                    y[:, :, :, u, v] += (a_pad[wa] * b_pad[wb]).sum(axis=3)  # type: ignore[index]
                elif slot == "x1":
                    a_pad[wa] += q[:, :, :, u, v, None] * b_pad[wb]
                else:
                    b_pad[wb] += q[:, :, :, u, v, None] * a_pad[wa]
    if slot == "y":
        return y
    if slot == "x1":
        return a_pad[a_in].copy()
    return b_pad[b_in].copy()


_CORR_ATTRS: dict[str, Any] = {
    "patch": (1, 1),
    "shift": (0, 0),
    "patch_step": (1, 1),
    "shift_step": (1, 1),
    "padding": (0, 0, 0, 0),
}


def _corr_rule(slot: str) -> Rule:
    """The rule of the function of ``slot``: its inputs' gradients are the functions of the
    other slots, ``slot`` filled with the incoming gradient."""

    def grads(
        h: Any, p: Any, q: Any, call: Callable[..., Any], need: tuple[bool, ...] = (True, True)
    ) -> list[Any]:
        if slot == "y":  # B(p, q, h)
            first, second = ("x1", q, h), ("x2", p, h)
        elif slot == "x1":  # B(h, p, q)
            first, second = ("x2", h, q), ("y", h, p)
        else:  # B(p, h, q)
            first, second = ("x1", h, q), ("y", p, h)
        return [call(*first) if need[0] else None, call(*second) if need[1] else None]

    def rule(gy: Any, ins: Any, in_shapes: Any, outs: Any, out_shapes: Any, **a: Any) -> Any:
        return grads(gy[0], ins[0], ins[1], lambda s, u, v: apply(CORRELATION[s], (u, v), a))

    def fast(
        xp: Any,
        gy: Any,
        ins: Any,
        in_shapes: Any,
        outs: Any,
        out_shapes: Any,
        need_grads: tuple[bool, ...] = (True, True),
        **a: Any,
    ) -> Any:
        return grads(
            gy[0],
            ins[0],
            ins[1],
            lambda s, u, v: _corr_partial(xp, u, v, s, **a),
            tuple(need_grads),
        )

    rule.__name__ = rule.__qualname__ = f"_patch_correlation_{slot}_bw"
    fast.__name__ = fast.__qualname__ = f"_patch_correlation_{slot}_fast"
    return Rule(rule, _layer._PROVIDER, fast=fast)


def _corr_kernel(slot: str) -> Callable[..., Any]:
    def kernel(xp: Any, p: Any, q: Any, **a: Any) -> Any:
        return _corr_partial(xp, p, q, slot, **a)

    kernel.__name__ = kernel.__qualname__ = f"_patch_correlation_{slot}_kernel"
    return kernel


#: nnabla's ``PatchCorrelation`` (NHWC inputs ``x1``, ``x2``; output ``(N, oh, ow, och,
#: ocw)``) by slot ``"y"``, and its gradients with respect to ``x1`` and ``x2`` (slots ``"x1"``,
#: ``"x2"``)
CORRELATION: dict[str, FunctionDef] = {
    "y": FunctionDef(
        "PatchCorrelation",
        _corr_kernel("y"),
        _layer._PROVIDER,
        inputs=("x1", "x2"),
        attrs=dict(_CORR_ATTRS),
        rule=_corr_rule("y"),
        doc="nnabla's PatchCorrelation (NHWC): the products of patches of x1 with shifted "
        "patches of x2, summed over the patch and the channels",
    ),
    "x1": FunctionDef(
        "PatchCorrelationDataGrad1",
        _corr_kernel("x1"),
        _layer._PROVIDER,
        inputs=("x2", "gy"),
        attrs=dict(_CORR_ATTRS),
        rule=_corr_rule("x1"),
        doc="the gradient of PatchCorrelation with respect to x1, given x2 and dy",
    ),
    "x2": FunctionDef(
        "PatchCorrelationDataGrad2",
        _corr_kernel("x2"),
        _layer._PROVIDER,
        inputs=("x1", "gy"),
        attrs=dict(_CORR_ATTRS),
        rule=_corr_rule("x2"),
        doc="the gradient of PatchCorrelation with respect to x2, given x1 and dy",
    ),
}


def patch_correlation(
    x1: NativeVariable,
    x2: NativeVariable,
    patch: tuple[int, int],
    shift: tuple[int, int],
    patch_step: tuple[int, int],
    shift_step: tuple[int, int],
    padding: tuple[int, int, int, int],
) -> NativeVariable:
    r"""nnabla's ``PatchCorrelation`` of the NHWC inputs (checked by the caller):
    :math:`y_{n, i, j, u, v} = \sum_{k_y, k_x, c} x1_{n, p_y i + k_y - t, p_x j + k_x - l, c}\,
    x2_{n, p_y i + k_y - t + d_u, p_x j + k_x - l + e_v, c}` for the shifts :math:`d_u = u\,
    \mathrm{shift\_step}_y - \mathrm{shift}_y` (:math:`e_v` alike), the values outside
    either input counting as zeros; shape ``(N, oh, ow, och, ocw)``."""
    attrs = {
        "patch": tuple(patch),
        "shift": tuple(shift),
        "patch_step": tuple(patch_step),
        "shift_step": tuple(shift_step),
        "padding": tuple(padding),
    }
    return apply(CORRELATION["y"], (x1, x2), attrs)  # type: ignore[no-any-return]


# -- AdaptiveSeparableConvolution: one function, and the partial derivatives of its form --------
#
# With B(x, kv, kh, g) = <AdaptiveSeparableConvolution(x, kv, kh), g> (linear in each argument),
# each function below is the derivative of B with respect to one argument, a function of the
# other three (in the order x, kv, kh, g); the derivative of each with respect to one of its
# inputs is again one of them, so their rules use only them (exact to every order).

_ASC_SLOTS = ("x", "kv", "kh", "y")


def _asc_partial(xp: Any, args: dict[str, Any], slot: str, shape: tuple[int, ...] = ()) -> Any:
    """The derivative of :math:`B` with respect to ``slot`` (``y``: the convolution itself)
    given the other arguments ``args``; ``shape``: the result's shape (``x``, ``kv``, ``kh``:
    their shapes; only the first ``oH`` rows and ``oW`` columns of the kernels are used)."""
    arrays = [v for v in args.values()]
    dtype = xp.result_type(*[v.dtype for v in arrays])
    kv, kh = args.get("kv"), args.get("kh")
    if slot == "y":
        x = args["x"]
        nb, nc, h, w = (int(v) for v in x.shape)
        nv, nh = int(kv.shape[1]), int(kh.shape[1])  # type: ignore[union-attr]
        oh, ow = h - nv + 1, w - nh + 1
    else:
        g = args["y"]
        nb, nc, oh, ow = (int(v) for v in g.shape)
        nv = int(kv.shape[1]) if kv is not None else int(shape[1])
        nh = int(kh.shape[1]) if kh is not None else int(shape[1])
    kvs = kv[:, :, :oh, :ow] if kv is not None else None
    khs = kh[:, :, :oh, :ow] if kh is not None else None
    out = xp.zeros(shape if slot != "y" else (nb, nc, oh, ow), dtype)
    if slot == "y":
        for j in range(nv):
            for i in range(nh):
                k = (kvs[:, j] * khs[:, i])[:, None]  # type: ignore[index]
                out += k * args["x"][:, :, j : j + oh, i : i + ow]
    elif slot == "x":
        for j in range(nv):
            for i in range(nh):
                k = (kvs[:, j] * khs[:, i])[:, None]  # type: ignore[index]
                out[:, :, j : j + oh, i : i + ow] += args["y"] * k
    elif slot == "kv":
        x, g = args["x"], args["y"]
        for j in range(nv):
            acc = xp.zeros((nb, nc, oh, ow), dtype)
            for i in range(nh):
                acc += khs[:, i][:, None] * x[:, :, j : j + oh, i : i + ow]  # type: ignore[index]
            out[:, j, :oh, :ow] = (g * acc).sum(axis=1)
    else:  # kh
        x, g = args["x"], args["y"]
        for i in range(nh):
            acc = xp.zeros((nb, nc, oh, ow), dtype)
            for j in range(nv):
                acc += kvs[:, j][:, None] * x[:, :, j : j + oh, i : i + ow]  # type: ignore[index]
            out[:, i, :oh, :ow] = (g * acc).sum(axis=1)
    return out


def _asc_inputs(slot: str) -> tuple[str, ...]:
    return tuple(s for s in _ASC_SLOTS if s != slot)


def _asc_rule(slot: str) -> Rule:
    """The rule of the function of ``slot``: the gradient of each input ``t`` is the function
    of ``t`` with ``slot`` filled with the incoming gradient."""
    names = _asc_inputs(slot)

    def grads(
        h: Any,
        ins: Any,
        in_shapes: Any,
        part: Callable[..., Any],
        need: tuple[bool, ...] = (True, True, True),
    ) -> list[Any]:
        args = dict(zip(names, ins))
        args[slot] = h
        return [
            part(t, [args[s] for s in _asc_inputs(t)], tuple(int(v) for v in in_shapes[k]))
            if need[k]
            else None
            for k, t in enumerate(names)
        ]

    def rule(gy: Any, ins: Any, in_shapes: Any, outs: Any, out_shapes: Any, **a: Any) -> Any:
        return grads(
            gy[0],
            ins,
            in_shapes,
            lambda t, vs, shape: apply(ASC[t], vs, {} if t == "y" else {"shape": shape}),
        )

    def fast(
        xp: Any,
        gy: Any,
        ins: Any,
        in_shapes: Any,
        outs: Any,
        out_shapes: Any,
        need_grads: tuple[bool, ...] = (True, True, True),
        **a: Any,
    ) -> Any:
        return grads(
            gy[0],
            ins,
            in_shapes,
            lambda t, vs, shape: _asc_partial(xp, dict(zip(_asc_inputs(t), vs)), t, shape),
            tuple(need_grads),
        )

    rule.__name__ = rule.__qualname__ = f"_adaptive_separable_convolution_{slot}_bw"
    fast.__name__ = fast.__qualname__ = f"_adaptive_separable_convolution_{slot}_fast"
    return Rule(rule, _layer._PROVIDER, fast=fast)


def _asc_kernel(slot: str) -> Callable[..., Any]:
    names = _asc_inputs(slot)

    def kernel(xp: Any, p: Any, q: Any, r: Any, shape: tuple[int, ...] = ()) -> Any:
        return _asc_partial(xp, dict(zip(names, (p, q, r))), slot, tuple(shape))

    kernel.__name__ = kernel.__qualname__ = f"_adaptive_separable_convolution_{slot}_kernel"
    return kernel


def _asc_def(slot: str, name: str, doc: str) -> FunctionDef:
    return FunctionDef(
        name,
        _asc_kernel(slot),
        _layer._PROVIDER,
        inputs=tuple("dy" if s == "y" else s for s in _asc_inputs(slot)),
        attrs={} if slot == "y" else {"shape": ()},
        rule=_asc_rule(slot),
        doc=doc,
    )


#: nnabla's ``AdaptiveSeparableConvolution`` (slot ``"y"``) and its gradients with respect to
#: ``x``, ``kv`` (vertical kernel) and ``kh`` (horizontal kernel)
ASC: dict[str, FunctionDef] = {
    "y": _asc_def(
        "y",
        "AdaptiveSeparableConvolution",
        "nnabla's AdaptiveSeparableConvolution: each output pixel filtered by the outer product "
        "of its vertical and horizontal kernels",
    ),
    "x": _asc_def(
        "x",
        "AdaptiveSeparableConvolutionDataGrad",
        "the gradient of AdaptiveSeparableConvolution with respect to x",
    ),
    "kv": _asc_def(
        "kv",
        "AdaptiveSeparableConvolutionVerticalGrad",
        "the gradient of AdaptiveSeparableConvolution with respect to the vertical kernel",
    ),
    "kh": _asc_def(
        "kh",
        "AdaptiveSeparableConvolutionHorizontalGrad",
        "the gradient of AdaptiveSeparableConvolution with respect to the horizontal kernel",
    ),
}


def adaptive_separable_convolution(
    x: NativeVariable, kv: NativeVariable, kh: NativeVariable
) -> NativeVariable:
    r"""The adaptive separable convolution of ``x`` ``(B, C, H, W)`` by the per-pixel kernels
    ``kv`` ``(B, K_v, >= oH, >= oW)`` and ``kh`` ``(B, K_h, >= oH, >= oW)`` (checked by the
    caller): :math:`y_{b,c,h,w} = \sum_{j,i} (kv_{b,j,h,w}\, kh_{b,i,h,w})\, x_{b,c,h+j,w+i}`,
    shape ``(B, C, oH, oW)`` with :math:`oH = H - K_v + 1`, :math:`oW = W - K_h + 1`: one
    ``AdaptiveSeparableConvolution`` function (the sums in nnabla's order)."""
    return apply(ASC["y"], (x, kv, kh), {})  # type: ignore[no-any-return]
