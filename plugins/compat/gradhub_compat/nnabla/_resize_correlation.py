"""nnabla's ``F.onnx_resize``, ``F.patch_correlation`` and ``F.adaptive_separable_convolution``
(offered by :mod:`gradhub_compat.nnabla.functions`): the arguments checked as nnabla 1.39
checks them, each computed by one recorded function of nnabla's name and arguments
(:mod:`._resize`, :mod:`._correlation`) whose gradients are again such functions (exact to
every order).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from gradhub import functions as _native
from gradhub.variable import Variable as NativeVariable

from . import _correlation, _resize


def _layer(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` through the layer's call convention (NdArrays in, NdArrays out; Variables
    adopted as the layer's)."""
    from .functions import _on_ndarrays

    return _on_ndarrays(fn)(*args)


def _native_variable(x: Any) -> NativeVariable:
    return x if isinstance(x, NativeVariable) else NativeVariable(x, need_grad=False)


def _floats(where: str, name: str, v: Any) -> list[float]:
    """``v`` (a sequence of real numbers, or None for none) as a list of floats."""
    if v is None:
        return []
    if isinstance(v, (str, bytes)) or not hasattr(v, "__len__"):
        raise TypeError(f"{where}: {name} must be a sequence of numbers, got {v!r}")
    try:
        return [float(e) for e in np.asarray(v, dtype=np.float64).ravel()]
    except (TypeError, ValueError):
        raise TypeError(f"{where}: {name} must be a sequence of numbers, got {v!r}") from None


def _ints(where: str, name: str, v: Any) -> list[int]:
    """``v`` (a sequence of ints or of integral floats, or None for none) as a list of ints."""
    if v is None:
        return []
    if isinstance(v, (str, bytes)) or not hasattr(v, "__len__"):
        raise TypeError(f"{where}: {name} must be a sequence of ints, got {v!r}")
    out = []
    for e in v:
        if isinstance(e, bool) or not isinstance(e, (int, np.integer, float, np.floating)):
            raise TypeError(f"{where}: {name} must be a sequence of ints, got {v!r}")
        if isinstance(e, (float, np.floating)) and not float(e).is_integer():
            raise TypeError(f"{where}: {name} must be a sequence of ints, got {v!r}")
        out.append(int(e))
    return out


def _text(where: str, name: str, v: Any) -> str:
    if not isinstance(v, str):
        raise TypeError(f"{where}: {name} must be a str, got {v!r}")
    return v


# -- onnx_resize ----------------------------------------------------------------------------------


def _onnx_resize_graph(
    x: Any,
    roi: Any,
    scales: Any,
    sizes: Any,
    mode: Any,
    coordinate_transformation_mode: Any,
    cubic_coeff_a: Any,
    exclude_outside: Any,
    extrapolation_value: Any,
    nearest_mode: Any,
) -> Any:
    from .functions import _real

    where = _resize.WHERE
    xv = _native_variable(x)
    if exclude_outside is None:
        exclude_outside = 0
    if not isinstance(exclude_outside, (int, np.integer)):
        raise TypeError(f"{where}: exclude_outside must be an int, got {exclude_outside!r}")
    return _resize.onnx_resize(
        xv,
        _floats(where, "roi", roi),
        _floats(where, "scales", scales),
        _ints(where, "sizes", sizes),
        _text(where, "mode", mode),
        _text(where, "coordinate_transformation_mode", coordinate_transformation_mode),
        _real(where, "cubic_coeff_a", cubic_coeff_a, -0.75),
        int(exclude_outside),
        _real(where, "extrapolation_value", extrapolation_value, 0.0),
        _text(where, "nearest_mode", nearest_mode),
    )


def onnx_resize(
    x: Any,
    roi: Sequence[float] = (),
    scales: Sequence[float] = (),
    sizes: Sequence[int] = (),
    mode: str = "nearest",
    coordinate_transformation_mode: str = "half_pixel",
    cubic_coeff_a: float | None = -0.75,
    exclude_outside: int | None = 0,
    extrapolation_value: float | None = 0.0,
    nearest_mode: str = "round_prefer_floor",
) -> Any:
    r"""nnabla's ``F.onnx_resize`` (ONNX's Resize): ``x`` resampled to ``sizes`` (one per axis),
    or to :math:`\lfloor n_a s_a \rfloor` for the ``scales`` :math:`s_a` (exactly one of the
    two is given). Each output index :math:`o` of a resized axis reads the input at the
    position :math:`f(o)` of ``coordinate_transformation_mode`` (with the float32 scale
    :math:`s` = the given one, or output size / input size; an axis of scale 1 is copied):

    * ``"half_pixel"``: :math:`(o + 1/2)/s - 1/2`; ``"pytorch_half_pixel"``: the same, 0 when
      the output size is 1; ``"asymmetric"``: :math:`o/s`; ``"tf_half_pixel_for_nn"``:
      :math:`(o + 1/2)/s`; ``"align_corners"``: :math:`o (n_{in} - 1)/(n_{out} - 1)`;
    * ``"tf_crop_and_resize"``: :math:`r_0 (n_{in} - 1) + o (r_1 - r_0)(n_{in} - 1)/(n_{out} -
      1)` with the axis' ``roi`` start and end :math:`r_0, r_1` (``roi`` holds the starts of
      every axis, then the ends); outputs that read outside the input are
      ``extrapolation_value``.

    ``mode`` ``"nearest"`` takes the input at the rounded position (``nearest_mode``
    ``"round_prefer_floor"``, ``"round_prefer_ceil"``, ``"floor"`` or ``"ceil"``, then clamped
    into the axis), ``"linear"`` interpolates its two neighbours, ``"cubic"`` its four with the
    cubic convolution of parameter ``cubic_coeff_a`` (``exclude_outside`` 1: the weights of
    the neighbours outside the input set to 0 and the others rescaled to sum to 1); the
    neighbours outside the input are clamped to its edge. Only the axes from the first whose
    scale is not 1 to the last are resized, 1 to 3 of them (more, or none, raise
    ``NotImplementedError``, as nnabla's); other refusals of nnabla 1.39 raise ``ValueError``
    (an unknown mode, both or neither of sizes and scales, their length, ``roi``'s length with
    ``"tf_crop_and_resize"``) or ``NotImplementedError`` (a crop of an axis that is not
    resized). One ``ONNXResize`` function (``info.args`` and NNP files as nnabla's) computing
    nnabla 1.39's positions, weights and sums in float32, so the values are nnabla's bit for
    bit; unlike nnabla's (whose backward raises), it has a gradient with respect to ``x``, the
    function ``ONNXResizeBackward`` (the transpose of the resize), and higher ones.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.array([[[[1.0, 2.0], [3.0, 4.0]]]]))
        >>> y = F.onnx_resize(x, scales=(1.0, 1.0, 1.0, 2.0), mode="linear")
        >>> y.forward()
        >>> y.d
        array([[[[1.  , 1.25, 1.75, 2.  ],
                 [3.  , 3.25, 3.75, 4.  ]]]], dtype=float32)
    """
    return _layer(
        _onnx_resize_graph,
        x,
        roi,
        scales,
        sizes,
        mode,
        coordinate_transformation_mode,
        cubic_coeff_a,
        exclude_outside,
        extrapolation_value,
        nearest_mode,
    )


# -- patch_correlation ----------------------------------------------------------------------------

_PC = "nnabla F.patch_correlation"


def _is_int(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def _pair(name: str, v: Any) -> tuple[int, int]:
    """``patch``, ``shift``, ``patch_step`` or ``shift_step``: an int (both) or two ints."""
    out = [int(v)] * 2 if _is_int(v) else _ints(_PC, name, v)
    if len(out) != 2:
        raise ValueError(f"{_PC}: {name} must be an int or two ints, got {v!r}")
    return out[0], out[1]


def _padding(v: Any) -> tuple[int, int, int, int]:
    """``padding``: an int (all sides), ``(y, x)`` or ``(top, bottom, left, right)``."""
    out = [int(v)] * 4 if _is_int(v) else _ints(_PC, "padding", v)
    if len(out) == 2:
        out = [out[0], out[0], out[1], out[1]]
    if len(out) != 4:
        raise ValueError(
            f"{_PC}: padding must be an int, two ints (height, width) or four ints "
            f"(top, bottom, left, right), got {v!r}"
        )
    return out[0], out[1], out[2], out[3]


def _patch_correlation_graph(
    x1: Any,
    x2: Any,
    patch: Any,
    shift: Any,
    patch_step: Any,
    shift_step: Any,
    padding: Any,
    channel_last: Any,
) -> Any:
    a, b = _native_variable(x1), _native_variable(x2)
    if len(a.shape) != 4 or len(b.shape) != 4:
        layout = "(N, H, W, C)" if channel_last else "(N, C, H, W)"
        raise ValueError(
            f"{_PC}: x1 and x2 must have 4 axes {layout}, got {tuple(a.shape)} and {tuple(b.shape)}"
        )
    if tuple(a.shape) != tuple(b.shape):
        raise ValueError(
            f"{_PC}: x1 and x2 must have the same shape, got {tuple(a.shape)} and {tuple(b.shape)}"
        )
    p, s = _pair("patch", patch), _pair("shift", shift)
    ps, ss = _pair("patch_step", patch_step), _pair("shift_step", shift_step)
    pad = _padding(padding)
    for name, vals, low in (
        ("patch", p, 1),
        ("shift", s, 0),
        ("patch_step", ps, 1),
        ("shift_step", ss, 1),
        ("padding", pad, 0),
    ):
        if min(vals) < low:
            what = "greater than zero" if low else "non-negative"
            raise ValueError(f"{_PC}: {name} must be {what}, got {vals}")
    hw = (int(a.shape[1]), int(a.shape[2])) if channel_last else (int(a.shape[2]), int(a.shape[3]))
    _, _, oh, ow = _correlation.correlation_shape(hw, p, s, ps, ss, pad)
    if oh < 1 or ow < 1:
        raise ValueError(
            f"{_PC}: the patch {p} is larger than the padded input "
            f"({hw[0] + pad[0] + pad[1]}, {hw[1] + pad[2] + pad[3]})"
        )
    if a.dtype.kind != "f":
        a = _native.cast(a, "float32")
    if b.dtype.kind != "f":
        b = _native.cast(b, "float32")
    if not channel_last:  # to NHWC, as nnabla's (a reshape for one channel)
        if int(a.shape[1]) == 1:
            nhwc = (int(a.shape[0]), hw[0], hw[1], 1)
            a, b = _native.reshape(a, nhwc), _native.reshape(b, nhwc)
        else:
            a, b = _native.transpose(a, (0, 2, 3, 1)), _native.transpose(b, (0, 2, 3, 1))
    y = _correlation.patch_correlation(a, b, p, s, ps, ss, pad)
    return y if channel_last else _native.transpose(y, (0, 3, 4, 1, 2))


def patch_correlation(
    x1: Any,
    x2: Any,
    patch: Any = (1, 1),
    shift: Any = (0, 0),
    patch_step: Any = (1, 1),
    shift_step: Any = (1, 1),
    padding: Any = (0, 0, 0, 0),
    channel_last: bool = False,
) -> Any:
    r"""nnabla's ``F.patch_correlation`` (FlowNet's correlation layer): for ``x1`` and ``x2``
    ``(N, C, H, W)``, the correlation of each patch of ``x1`` with the patches of ``x2``
    displaced by each shift,

    .. math::

        y_{n, u, v, i, j} = \sum_{k_y < p_y} \sum_{k_x < p_x} \sum_c
            x1_{n, c, Y + k_y, X + k_x}\, x2_{n, c, Y + k_y + d_u, X + k_x + e_v}

    with :math:`Y = i\, \mathrm{patch\_step}_y - \mathrm{pad}_{top}`, :math:`X = j\,
    \mathrm{patch\_step}_x - \mathrm{pad}_{left}`, :math:`d_u = u\, \mathrm{shift\_step}_y -
    \mathrm{shift}_y` and :math:`e_v = v\, \mathrm{shift\_step}_x - \mathrm{shift}_x`; values
    outside the input count as zeros. The output is ``(N, och, ocw, oh, ow)``: ``och =
    2 shift_y // shift_step_y + 1`` shifts, ``oh = (H + pad_top + pad_bottom - patch_y) //
    patch_step_y + 1`` patches (``ocw``, ``ow`` alike). ``patch``, ``shift``, ``patch_step``
    and ``shift_step`` are an int or ``(y, x)``; ``padding`` an int, ``(y, x)`` or ``(top,
    bottom, left, right)``. With ``channel_last`` the inputs are ``(N, H, W, C)`` and the output
    ``(N, oh, ow, och, ocw)``. Shapes or values nnabla 1.39 refuses raise ``ValueError`` (also
    a patch larger than the padded input, for which nnabla returns an empty output or one of
    negative size); arguments of the wrong type ``TypeError``. As nnabla's, one
    ``PatchCorrelation`` function on NHWC inputs (``info.args`` and NNP files as nnabla's)
    between transposes (a reshape for one channel) unless ``channel_last``; its gradients with
    respect to both inputs are the functions ``PatchCorrelationDataGrad1``/``2``, whose own
    gradients are these three again (any order).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.ones((1, 2, 3, 3)))
        >>> y = F.patch_correlation(x, x, patch=3, padding=(0, 0, 2, 0))
        >>> y.forward()
        >>> y.d
        array([[[[[ 6., 12., 18.]]]]], dtype=float32)
    """
    return _layer(
        _patch_correlation_graph,
        x1,
        x2,
        patch,
        shift,
        patch_step,
        shift_step,
        padding,
        channel_last,
    )


# -- adaptive_separable_convolution ---------------------------------------------------------------

_ASC = "nnabla F.adaptive_separable_convolution"


def _adaptive_graph(x: Any, vertical_kernel: Any, horizontal_kernel: Any) -> Any:
    xv, kv, kh = (_native_variable(v) for v in (x, vertical_kernel, horizontal_kernel))
    for name, v in (("x", xv), ("vertical_kernel", kv), ("horizontal_kernel", kh)):
        if len(v.shape) != 4:
            raise ValueError(f"{_ASC}: {name} must have 4 axes, got shape {tuple(v.shape)}")
    b, _, h, w = (int(s) for s in xv.shape)
    if int(kv.shape[0]) != b or int(kh.shape[0]) != b:
        raise ValueError(
            f"{_ASC}: the batch sizes of x, vertical_kernel and horizontal_kernel must be the "
            f"same, got {b}, {int(kv.shape[0])}, {int(kh.shape[0])}"
        )
    oh, ow = h - int(kv.shape[1]) + 1, w - int(kh.shape[1]) + 1
    if oh < 1 or ow < 1:
        raise ValueError(
            f"{_ASC}: the kernel sizes ({int(kv.shape[1])}, {int(kh.shape[1])}) must not exceed "
            f"the input's height and width ({h}, {w})"
        )
    if not oh <= int(kv.shape[2]) <= h:
        raise ValueError(
            f"{_ASC}: the height of vertical_kernel must be in [{oh}, {h}], got {int(kv.shape[2])}"
        )
    if not ow <= int(kh.shape[3]) <= w:
        raise ValueError(
            f"{_ASC}: the width of horizontal_kernel must be in [{ow}, {w}], got {int(kh.shape[3])}"
        )
    if int(kv.shape[3]) < ow or int(kh.shape[2]) < oh:
        raise ValueError(
            f"{_ASC}: vertical_kernel must be at least {ow} wide and horizontal_kernel at "
            f"least {oh} high (the output's size), got {tuple(kv.shape)} and {tuple(kh.shape)}"
        )
    vs = [v if v.dtype.kind == "f" else _native.cast(v, "float32") for v in (xv, kv, kh)]
    return _correlation.adaptive_separable_convolution(vs[0], vs[1], vs[2])


def adaptive_separable_convolution(x: Any, vertical_kernel: Any, horizontal_kernel: Any) -> Any:
    r"""nnabla's ``F.adaptive_separable_convolution`` (Niklaus et al., video frame
    interpolation): each output pixel filters ``x`` ``(B, C, H, W)`` with its own separable
    kernel, the outer product of a vertical and a horizontal one,

    .. math::

        y_{b,c,h,w} = \sum_{j < K_v} \sum_{i < K_h} kv_{b,j,h,w}\, kh_{b,i,h,w}\,
            x_{b,c,h+j,w+i},

    with ``vertical_kernel`` :math:`kv` ``(B, K_v, H', W')`` and ``horizontal_kernel``
    :math:`kh` ``(B, K_h, H', W')`` shared by the channels; the output is ``(B, C, oH, oW)``,
    :math:`oH = H - K_v + 1`, :math:`oW = W - K_h + 1`. As nnabla checks, ``H'`` of
    ``vertical_kernel`` must be in ``[oH, H]`` and ``W'`` of ``horizontal_kernel`` in ``[oW,
    W]`` (``ValueError`` otherwise); the other two must be at least ``oW`` and ``oH`` (nnabla
    does not check them and reads narrower kernels out of place; refused here). Only the
    kernels' first ``oH`` rows and ``oW`` columns are used (their other entries get a zero
    gradient; nnabla leaves them unwritten). One ``AdaptiveSeparableConvolution`` function
    (NNP files as nnabla's), its sums in nnabla's order; its gradients with respect to the
    three inputs are functions of the same family (``...DataGrad``, ``...VerticalGrad``,
    ``...HorizontalGrad``), differentiable to any order.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.arange(9.0).reshape(1, 1, 3, 3))
        >>> kv = nn.Variable.from_numpy_array(np.full((1, 2, 2, 2), 0.5))
        >>> kh = nn.Variable.from_numpy_array(np.full((1, 2, 2, 2), 0.5))
        >>> y = F.adaptive_separable_convolution(x, kv, kh)
        >>> y.forward()
        >>> y.d
        array([[[[2., 3.],
                 [5., 6.]]]], dtype=float32)
    """
    return _layer(_adaptive_graph, x, vertical_kernel, horizontal_kernel)
