"""chainer 7.8.1's ``chainer/functions/array`` functions beyond the core of
:mod:`gradhub_compat.chainer.functions` (which re-exports them): ``select_item``, ``pad``, the
stacks, ``repeat``, the axis moves, ``broadcast``, ``copy``, ``diagonal``, the flips,
``space2depth``/``depth2space``, ``scatter_add``, ``resize_images``, the sequence helpers
(``pad_sequence``, ``transpose_sequence``, ``separate``, ``permutate``), ``im2col``, the spatial
transformer's grid and sampler, and ``as_strided``.

Each is a composition of the registered gradhub functions, so every order of gradient comes from
the native engine; the sampler reads the grid in Python."""

from __future__ import annotations

import math
from builtins import max as builtins_max
from builtins import min as builtins_min
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from gradhub.modes import is_tracing
from gradhub.variable import Variable as _NativeVariable

from ..._common import call_native as _call
from ..._common import device_array, host_array
from .. import Variable, as_variable
from .. import functions as F
from ..functions import _arr, _check_float, _const, _dtype, _match, _out, _shape
from ._common import _conv_outsize, _data, _fdtype, _invalid, _kind, _norm_axis, _tuple_n

__all__ = [
    "as_strided",
    "broadcast",
    "copy",
    "depth2space",
    "diagonal",
    "dstack",
    "fliplr",
    "flipud",
    "hstack",
    "im2col",
    "moveaxis",
    "pad",
    "pad_sequence",
    "permutate",
    "repeat",
    "resize_images",
    "rollaxis",
    "scatter_add",
    "select_item",
    "separate",
    "space2depth",
    "spatial_transformer_grid",
    "spatial_transformer_sampler",
    "swapaxes",
    "transpose_sequence",
    "vstack",
]


def pad_sequence(xs: Sequence[Any], length: int | None = None, padding: Any = 0) -> Variable:
    """The arrays ``xs`` (shapes ``(l_i, ...)`` with the same trailing axes and dtype) stacked
    into shape ``(len(xs), length, ...)``, each padded after its end with ``padding`` (cast to
    their dtype); ``length`` defaults to the longest ``l_i``. The gradient of each input is the
    output's gradient at its own positions.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.pad_sequence([np.arange(3, dtype=np.float32), np.ones(1, np.float32)], padding=-1)
        variable([[ 0.,  1.,  2.],
                  [ 1., -1., -1.]])
    """
    xs = list(xs)
    label = "PadSequence"
    if not xs:
        raise _invalid(label, "in_types.size > 0", "0 <= 0")
    shapes = [_shape(x) for x in xs]
    dtypes = [_dtype(x) if _dtype(x) is not None else np.asarray(x).dtype for x in xs]
    for i, (s, dt) in enumerate(zip(shapes, dtypes)):
        if len(s) == 0:
            raise _invalid(label, f"x{i}.ndim > 0", f"{len(s)} <= 0")
        if s[1:] != shapes[0][1:]:
            raise _invalid(label, f"x{i}.shape[1:] == x0.shape[1:]", f"{s[1:]} != {shapes[0][1:]}")
        if dt != dtypes[0]:
            raise _invalid(label, f"x{i}.dtype == x0.dtype", f"{dt} != {dtypes[0]}")
    if length is not None:
        for i, s in enumerate(shapes):
            if s[0] > length:
                raise _invalid(label, f"x{i}.shape[0] <= {length}", f"{s[0]} > {length}")
    n = max(s[0] for s in shapes) if length is None else int(length)
    dt = np.dtype(dtypes[0])
    rows = []
    for x, s in zip(xs, shapes):
        x = x if isinstance(x, _NativeVariable) else Variable(device_array(x), requires_grad=False)
        if s[0] < n:
            fill = np.full((n - s[0], *s[1:]), padding).astype(dt)
            pad = F._const(fill, x)
            x = F.concat([x, pad], axis=0) if s[0] else _out(pad)
        rows.append(x)
    return F.stack(rows, axis=0)


def transpose_sequence(xs: Sequence[Any]) -> tuple[Variable, ...]:
    """The list of sequences ``xs`` (lengths not increasing, same trailing shape) transposed:
    output ``t`` stacks the ``t``-th element of every sequence longer than ``t``, so
    ``[(0, 1, 2, 3), (4, 5), (6,)]`` gives ``((0, 4, 6), (1, 5), (2,), (3,))``; an empty list
    gives ``()``. The gradient is transposed back.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> xs = [np.array([1.0, 1.0, 1.0]), np.array([2.0, 2.0]), np.array([3.0])]
        >>> F.transpose_sequence(xs)
        (variable([1., 2., 3.]), variable([1., 2.]), variable([1.]))
    """
    xs = list(xs)
    if not xs:
        return ()
    shapes = [_shape(x) for x in xs]
    for i in range(len(xs) - 1):
        p, q = shapes[i], shapes[i + 1]
        if len(p) == 0 or len(q) == 0:
            raise _invalid("TransposeSequence", f"xs[{i}].ndim > 0", "0-d input")
        if p[0] < q[0]:
            raise _invalid(
                "TransposeSequence", f"xs[{i}].shape[0] >= xs[{i + 1}].shape[0]", f"{p[0]} < {q[0]}"
            )
        if p[1:] != q[1:]:
            raise _invalid(
                "TransposeSequence", f"xs[{i}].shape[1:] == xs[{i + 1}].shape[1:]", f"{p} {q}"
            )
    if len(shapes[0]) == 0:
        raise _invalid("TransposeSequence", "xs[0].ndim > 0", "0-d input")
    outs = []
    for t in range(shapes[0][0]):
        items = [F.get_item(x, t) for x, s in zip(xs, shapes) if s[0] > t]
        outs.append(F.stack(items, axis=0))
    return tuple(outs)


def separate(x: Any, axis: int = 0) -> tuple[Variable, ...]:
    """The slices of ``x`` along ``axis``, each without that axis (a tuple of
    ``x.shape[axis]`` Variables; the inverse of :func:`stack`).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.separate(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32), axis=1)
        (variable([1., 3.]), variable([2., 4.]))
    """
    shape = _shape(x)
    nd = len(shape)
    if (axis >= 0 and axis >= nd) or (axis < 0 and -axis > nd):
        raise _invalid(
            "Separate",
            f"axis {'<' if axis >= 0 else '>= -'} x.ndim",
            f"axis {axis}, x.ndim {nd}",
        )
    ax = axis % nd
    return tuple(
        F.get_item(x, (slice(None),) * ax + (i,))  # type: ignore[arg-type]
        for i in range(shape[ax])
    )


def permutate(x: Any, indices: Any, axis: int = 0, inv: bool = False) -> Variable:
    """x permuted along ``axis``: ``y[..., i, ...] = x[..., indices[i], ...]`` (with
    ``inv=True``, ``y[..., indices[i], ...] = x[..., i, ...]``). ``indices`` is a 1-d integer
    array (or Variable, whose array is used) holding a permutation of ``range(x.shape[axis])``.
    The gradient is permuted back.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.permutate(np.array([1.0, 2.0, 3.0]), np.array([2, 0, 1], np.int32))
        variable([3., 1., 2.])
    """
    ind_dtype = _dtype(indices) if _dtype(indices) is not None else np.asarray(indices).dtype
    if np.dtype(ind_dtype).kind != "i" or len(_shape(indices)) != 1:
        raise ValueError("indices should be a one-dimensional int array")
    ind = host_array(_data(indices, "permutate")).astype(np.int64)  # (checked in Python)
    shape = _shape(x)
    nd = len(shape)
    if (axis >= 0 and axis >= nd) or (axis < 0 and -axis > nd):
        raise _invalid("Permutate", "axis < x.ndim", f"axis {axis}, x.ndim {nd}")
    ax = axis % nd
    if len(ind) != shape[ax] or sorted(ind.tolist()) != list(range(shape[ax])):
        raise ValueError(
            f"chainer F.permutate: indices {ind.tolist()} are not a permutation of "
            f"range({shape[ax]}) (the length of axis {axis})"
        )
    if inv:
        r = np.empty_like(ind)
        r[ind] = np.arange(len(ind))
        ind = r
    return F.get_item(x, (slice(None),) * ax + (ind,))  # type: ignore[arg-type]


def im2col(
    x: Any, ksize: Any, stride: Any = 1, pad: Any = 0, cover_all: bool = False, dilate: Any = 1
) -> Variable:
    """The patches of x (N, C, H, W) as channels: ``y[n, c * kh * kw + i * kw + j, oy, ox] =
    x_padded[n, c, oy * sy + i * dy, ox * sx + j * dx]`` (zero padding ``pad``; with
    ``cover_all`` the extra windows covering the whole input read zeros past its end), of
    shape (N, C kh kw, out_h, out_w) with chainer's ``get_conv_outsize``. A composition of
    padding and strided slices (the gradient adds the patches back, every order).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.arange(9, dtype=np.float32).reshape(1, 1, 3, 3)
        >>> F.im2col(x, 2).shape
        (1, 4, 2, 2)
    """
    label = "Im2Col"
    shape = _shape(x)
    if _kind(x) != "f":
        raise _invalid(label, "x.dtype.kind == f", f"{_dtype(x)} != f")
    if len(shape) != 4:
        raise _invalid(label, "x.ndim == 4", f"{len(shape)} != 4")
    kh, kw = _tuple_n(ksize, 2)
    sy, sx = _tuple_n(stride, 2)
    ph, pw = _tuple_n(pad, 2)
    dy, dx = _tuple_n(dilate, 2)
    n, c, h, w = shape
    out_h = _conv_outsize(h, kh, sy, ph, cover_all, dy)
    out_w = _conv_outsize(w, kw, sx, pw, cover_all, dx)
    if out_h <= 0 or out_w <= 0:
        raise ValueError(f"chainer F.im2col: the output size ({out_h}, {out_w}) is not positive")
    end_h = builtins_max(dy * (kh - 1) + sy * (out_h - 1) + 1 - (h + 2 * ph), 0)
    end_w = builtins_max(dx * (kw - 1) + sx * (out_w - 1) + 1 - (w + 2 * pw), 0)
    xp = x
    if ph or pw or end_h or end_w:
        xp = _call(
            "Pad",
            x,
            pad_width=(ph, ph + end_h, pw, pw + end_w),
            mode="constant",
            constant_value=0.0,
        )
    cols = []
    for i in range(kh):
        for j in range(kw):
            key = (
                slice(None),
                slice(None),
                slice(i * dy, i * dy + sy * (out_h - 1) + 1, sy),
                slice(j * dx, j * dx + sx * (out_w - 1) + 1, sx),
            )
            cols.append(_call("GetItem", xp, key=key))
    col = _call("Stack", *cols, axis=2)  # (n, c, kh * kw, out_h, out_w)
    return _out(_call("Reshape", col, shape=(n, c * kh * kw, out_h, out_w)))  # type: ignore[no-any-return]


def _no_cudnn_kwargs(kwargs: dict[str, Any]) -> None:
    if "use_cudnn" in kwargs:
        raise ValueError(
            'The argument "use_cudnn" is not supported anymore. Use '
            "chainer.using_config('use_cudnn', value) context where value can be `always`, "
            "`never`, or `auto`."
        )
    if kwargs:
        raise TypeError(f"got unexpected keyword argument(s): {', '.join(sorted(kwargs))}")


def spatial_transformer_grid(theta: Any, output_shape: Any, **kwargs: Any) -> Variable:
    """The sampling grid of a spatial transformer: ``theta`` (B, 2, 3) affine maps applied to
    the points ``(x, y, 1)`` of an ``output_shape`` (H, W) grid over [-1, 1]^2 (``x`` along W),
    shape (B, 2, H, W) (row 0 the x coordinates). Linear in theta (every order of gradient).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> theta = np.array([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]], np.float32)
        >>> F.spatial_transformer_grid(theta, (2, 2)).array[0, 0]
        array([[-1.,  1.],
               [-1.,  1.]], dtype=float32)
    """
    _no_cudnn_kwargs(kwargs)
    s = _shape(theta)
    if _kind(theta) != "f" or len(s) != 3 or s[1:] != (2, 3):
        raise _invalid(
            "SpatialTransformerGrid",
            "theta.dtype.kind == f, theta.ndim == 3, theta.shape[1:] == (2, 3)",
            f"{_dtype(theta)}, {s}",
        )
    h, w = (int(v) for v in output_shape)
    dt = np.dtype(_dtype(theta))
    ys, xs = np.meshgrid(
        np.linspace(-1, 1, h, dtype=dt), np.linspace(-1, 1, w, dtype=dt), indexing="ij"
    )
    coords = np.concatenate([xs[None], ys[None], np.ones((1, h, w), dtype=dt)], axis=0)
    grid = F.tensordot(theta, F._const(coords.reshape(3, h * w), theta), axes=1)
    return F.reshape(grid, (s[0], 2, h, w))


def spatial_transformer_sampler(x: Any, grid: Any, **kwargs: Any) -> Variable:
    """Bilinear sampling of x (B, C, H, W) at ``grid`` (B, 2, out_H, out_W) (x and y
    coordinates in [-1, 1]; points outside read zeros, the image being padded by one pixel),
    shape (B, C, out_H, out_W), as chainer's CPU code. A composition of gradhub functions
    (gathers weighted by the bilinear weights, which depend on the grid), so the gradients
    with respect to x and grid are chainer's (the grid's is 0 where a coordinate is clipped)
    and can be differentiated again (chainer's cannot). The pixel indices are read from the
    grid's data in Python.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.arange(4, dtype=np.float32).reshape(1, 1, 2, 2)
        >>> grid = np.zeros((1, 2, 1, 1), np.float32)
        >>> F.spatial_transformer_sampler(x, grid)
        variable([[[[1.5]]]])
    """
    _no_cudnn_kwargs(kwargs)
    xs, gs = _shape(x), _shape(grid)
    if (
        _kind(x) != "f"
        or _dtype(grid) != _dtype(x)
        or len(xs) != 4
        or len(gs) != 4
        or gs[1] != 2
        or xs[0] != gs[0]
    ):
        raise _invalid(
            "SpatialTransformerSampler",
            "x.dtype.kind == f, grid.dtype == x.dtype, x.ndim == 4, grid.ndim == 4, "
            "grid.shape[1] == 2, x.shape[0] == grid.shape[0]",
            f"x {xs} {_dtype(x)}, grid {gs} {_dtype(grid)}",
        )
    b, c, h, w = xs
    out_h, out_w = gs[2:]
    dt = np.dtype(_dtype(x))
    g = F.reshape(grid, (b, 2, out_h * out_w))
    u: Any = (g[:, 0] + 1) * (w - 1) / 2 + 1
    v: Any = (g[:, 1] + 1) * (h - 1) / 2 + 1
    ua, va = device_array(u.array), device_array(v.array)
    u_in = (ua > 0) & (ua < w + 1)
    v_in = (va > 0) & (va < h + 1)
    uc = F.where(u_in, u, F._const(ua.clip(0, w + 1).astype(dt), x))
    vc = F.where(v_in, v, F._const(va.clip(0, h + 1).astype(dt), x))
    uca, vca = ua.clip(0, w + 1), va.clip(0, h + 1)
    u0 = np.floor(uca).astype(np.int64).clip(0, w)
    v0 = np.floor(vca).astype(np.int64).clip(0, h)
    u1, v1 = u0 + 1, v0 + 1
    wu0 = uc - F._const(u0.astype(dt), x)
    wu1 = F._const(u1.astype(dt), x) - uc
    wv0 = vc - F._const(v0.astype(dt), x)
    wv1 = F._const(v1.astype(dt), x) - vc
    x_pad = F.transpose(F.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)), "constant"), (0, 2, 3, 1))
    bi = np.arange(b)[:, None]

    def corner(vv: np.ndarray, uu: np.ndarray) -> Any:
        return F.get_item(x_pad, (bi, vv, uu))  # (B, HW, C)

    def weighted(wa: Any, wb: Any, vv: np.ndarray, uu: np.ndarray) -> Any:
        wt = F.expand_dims(wa * wb, 2)
        return F.broadcast_to(wt, (b, out_h * out_w, c)) * corner(vv, uu)

    y = weighted(wu1, wv1, v0, u0) + weighted(wu0, wv1, v0, u1)
    y = y + weighted(wu1, wv0, v1, u0) + weighted(wu0, wv0, v1, u1)
    return F.transpose(F.reshape(y, (b, out_h, out_w, c)), (0, 3, 1, 2))


def as_strided(
    x: Any, shape: Sequence[int], strides: Sequence[int], storage_offset: Any = None
) -> Variable:
    """A strided view of x's elements: ``y[i_1, ..., i_n] = flat[storage_offset + sum_k i_k
    strides[k]]`` (strides and offset counted in elements, as chainer), ``flat`` the C-order
    elements of x (chainer reads the buffer of x's base array: the same for an x that owns
    its data); an index outside x raises chainer's ``ValueError``. A gather, so the gradient
    adds up over overlapping positions, as chainer's, and can be differentiated again.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.as_strided(np.arange(4, dtype=np.float32), (3, 2), (1, 1))
        variable([[0., 1.],
                  [1., 2.],
                  [2., 3.]])
    """
    shape = tuple(int(s) for s in shape)
    strides = tuple(int(s) for s in strides)
    offset = 0 if storage_offset is None else int(storage_offset)
    size = int(np.prod(_shape(x)))
    idx = np.full(shape, offset, dtype=np.int64)
    for k, (n, s) in enumerate(zip(shape, strides)):
        idx = idx + (np.arange(n) * s).reshape((1,) * k + (n,) + (1,) * (len(shape) - k - 1))
    if idx.size and idx.min() < 0:
        raise ValueError("Out of buffer: too small index was specified")
    if idx.size and idx.max() >= size:
        raise ValueError("Out of buffer: too large index was specified")
    return F.get_item(F.reshape(x, (size,)), idx)


def select_item(x: Any, t: Any) -> Variable:
    """``y[i] = x[i, t[i]]`` for x of shape (N, C) and integer t of shape (N,) (differentiable
    with respect to x).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32)
        >>> F.select_item(x, np.array([1, 0], dtype=np.int32))
        variable([2., 3.])
    """
    xs, ts = _shape(x), _shape(t)
    tdt = _fdtype(t)
    if len(xs) != 2 or len(ts) != 1 or xs[0] != ts[0] or tdt.kind != "i":
        raise TypeError(
            f"chainer F.select_item: x must be 2-d (N, C) and t 1-d signed integer (N,), got "
            f"shapes {xs} and {ts}, t of dtype {tdt}"
        )
    if isinstance(t, _NativeVariable):
        tv = t
        if not is_tracing():
            labels = t._data
        else:
            labels = None
    else:
        labels = device_array(t)  # (an xp array stays on its device)
        tv = _const(labels, x)
    if labels is not None and labels.size and not ((labels >= 0) & (labels < xs[1])).all():
        raise IndexError("chainer F.select_item: out of bounds index (t must be in [0, C))")
    y = _call("Gather", x, _call("Reshape", tv, shape=(xs[0], 1)), axis=1, batch_dims=1)
    return _out(_call("Reshape", y, shape=(xs[0],)))  # type: ignore[no-any-return]


def _pad_pairs(pad_width: Any, nd: int) -> list[tuple[int, int]]:
    """numpy's ``pad_width`` (an int, a pair, or one pair per axis) as one pair per axis."""
    a = np.asarray(pad_width, dtype=np.int64)
    return [(int(p[0]), int(p[1])) for p in np.broadcast_to(a, (nd, 2))]


def pad(x: Any, pad_width: Any, mode: str, **keywords: Any) -> Variable:
    """x padded as ``numpy.pad(x, pad_width, mode, **keywords)`` (chainer's ``F.pad``); x must be
    floating point.

    As chainer, the gradient of x is the gradient of the output at x's own positions, in every
    mode: the copies that ``"edge"``, ``"reflect"`` and the other modes make pass no gradient
    back (chainer's ``Pad.backward`` is ``gy[input_slices]``). Modes ``"constant"`` (with a
    scalar ``constant_values``), ``"edge"`` and ``"reflect"`` are gradhub functions; the others
    read x's data in Python (numpy's ``pad``).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.pad(np.array([1.0, 2.0], dtype=np.float32), 1, "constant", constant_values=9)
        variable([9., 1., 2., 9.])
        >>> F.pad(np.array([1.0, 2.0, 3.0], dtype=np.float32), (2, 1), "reflect")
        variable([3., 2., 1., 2., 3., 2.])
    """
    _check_float("pad", x=x)
    shape = _shape(x)
    pairs = _pad_pairs(pad_width, len(shape))
    if any(a < 0 or b < 0 for a, b in pairs):
        raise ValueError("chainer F.pad: index can't contain negative values")
    flat = tuple(v for p in pairs for v in p)
    cv = keywords.get("constant_values", 0)
    zero = _call("Pad", x, pad_width=flat, mode="constant", constant_value=0.0)
    if mode == "constant" and not keywords.keys() - {"constant_values"} and np.ndim(cv) == 0:
        if cv == 0:
            return _out(zero)  # type: ignore[no-any-return]
        filled = _call("Pad", x, pad_width=flat, mode="constant", constant_value=float(cv))
    elif mode in ("edge", "reflect") and not keywords:
        native = "repeat" if mode == "edge" else "reflect"
        filled = _call("Pad", x, pad_width=flat, mode=native)
    else:
        data = _arr(x, f"pad (mode={mode!r})")
        padded = np.pad(data, pairs, mode=mode, **keywords)  # type: ignore[call-overload]
        filled = _const(padded, zero)
        return _out(zero + (filled - _call("StopGradient", zero)))  # type: ignore[no-any-return]
    extra = _call("StopGradient", _call("Sub2", filled, zero))
    return _out(_call("Add2", zero, extra))  # type: ignore[no-any-return]


def _stack_along(
    fname: str,
    xs: Sequence[Any],
    lift: Callable[[tuple[int, ...]], tuple[int, ...]],
    axis: Callable[[int], int],
) -> Variable:
    """numpy's ``hstack``/``vstack``/``dstack``: each array reshaped by ``lift``, joined along
    ``axis(ndim)``; one dtype for all (chainer's check)."""
    if len(xs) == 0:
        raise ValueError(f"chainer F.{fname}: need at least one array to concatenate")
    ops = _match(fname, *xs)
    nd = len(_shape(ops[0]))
    parts = [_call("Reshape", x, shape=lift(_shape(x))) for x in ops]
    if len(parts) == 1:
        return _out(parts[0])  # type: ignore[no-any-return]
    return _out(_call("Concatenate", *parts, axis=axis(nd)))  # type: ignore[no-any-return]


def hstack(xs: Sequence[Any]) -> Variable:
    """numpy's ``hstack``: the arrays joined along axis 1 (axis 0 for 1-d arrays; 0-d arrays
    are 1-d ones of length 1).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.hstack([np.ones((2, 1), np.float32), np.zeros((2, 2), np.float32)]).shape
        (2, 3)
    """
    return _stack_along("hstack", xs, lambda s: s if s else (1,), lambda nd: 1 if nd >= 2 else 0)


def vstack(xs: Sequence[Any]) -> Variable:
    """numpy's ``vstack``: the arrays (as 2-d: (N,) is (1, N)) joined along axis 0.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.vstack([np.ones(3, np.float32), np.zeros(3, np.float32)]).shape
        (2, 3)
    """
    return _stack_along(
        "vstack",
        xs,
        lambda s: s if len(s) >= 2 else (1, *s) if s else (1, 1),
        lambda nd: 0,
    )


def dstack(xs: Sequence[Any]) -> Variable:
    """numpy's ``dstack``: the arrays as 3-d (``(N,)`` is (1, N, 1), ``(M, N)`` is (M, N, 1))
    joined along axis 2.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.dstack([np.ones((2, 3), np.float32), np.zeros((2, 3), np.float32)]).shape
        (2, 3, 2)
    """
    return _stack_along("dstack", xs, _atleast_3d, lambda nd: 2)


def _atleast_3d(s: tuple[int, ...]) -> tuple[int, ...]:
    if len(s) == 0:
        return (1, 1, 1)
    if len(s) == 1:
        return (1, s[0], 1)
    if len(s) == 2:
        return (*s, 1)
    return s


def repeat(x: Any, repeats: Any, axis: int | None = None) -> Variable:
    """numpy's ``repeat``: each element repeated ``repeats`` times (an int, or a tuple with one
    count per element of the axis) along ``axis`` (of the flattened x when None).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.repeat(np.array([1.0, 2.0], dtype=np.float32), 2)
        variable([1., 1., 2., 2.])
    """
    if isinstance(repeats, (int, np.integer)) and not isinstance(repeats, bool):
        reps: tuple[int, ...] = (int(repeats),)
    elif isinstance(repeats, tuple) and all(
        isinstance(r, (int, np.integer)) and not isinstance(r, bool) for r in repeats
    ):
        reps = tuple(int(r) for r in repeats)
    else:
        raise TypeError("chainer F.repeat: repeats must be int or tuple of ints")
    if not all(r >= 0 for r in reps):
        raise ValueError("chainer F.repeat: all elements in repeats must be zero or larger")
    if axis is not None and (not isinstance(axis, (int, np.integer)) or isinstance(axis, bool)):
        raise TypeError("chainer F.repeat: axis must be int or None")
    h = x
    if axis is None:
        h = _call("Reshape", x, shape=(int(math.prod(_shape(x))),))
        axis = 0
    ax = _norm_axis(int(axis), len(_shape(h)), "repeat")
    n = _shape(h)[ax]
    idx = np.repeat(np.arange(n), reps[0] if len(reps) == 1 else reps)
    return _out(_call("Gather", h, _const(idx, h), axis=ax))  # type: ignore[no-any-return]


def _perm_of(fn: Callable[[Any], Any], nd: int) -> tuple[int, ...]:
    """The permutation numpy's ``fn`` (a moveaxis, rollaxis or swapaxes) makes of ``nd`` axes
    (numpy's errors for bad axes)."""
    probe = np.lib.stride_tricks.as_strided(
        np.zeros(1, np.int8), shape=tuple(range(2, nd + 2)), strides=(0,) * nd
    )
    return tuple(int(s) - 2 for s in fn(probe).shape)


def swapaxes(x: Any, axis1: int, axis2: int) -> Variable:
    """x with the axes ``axis1`` and ``axis2`` interchanged.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.swapaxes(np.zeros((2, 3, 4), np.float32), 0, 2).shape
        (4, 3, 2)
    """
    perm = _perm_of(lambda a: np.swapaxes(a, axis1, axis2), len(_shape(x)))
    return _out(_call("Transpose", x, axes=perm))  # type: ignore[no-any-return]


def moveaxis(x: Any, source: Any, destination: Any) -> Variable:
    """numpy's ``moveaxis``: the axes ``source`` (an int or a tuple) moved to ``destination``.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.moveaxis(np.zeros((2, 3, 4), np.float32), 0, -1).shape
        (3, 4, 2)
    """
    _check_float("moveaxis", x=x)
    for what, v in (("source", source), ("destination", destination)):
        if not isinstance(v, (int, tuple)):
            raise TypeError(f"chainer F.moveaxis: int or tuple of int are required ({what})")
    nd = len(_shape(x))
    for v in (source, destination):
        for a in (v,) if isinstance(v, int) else v:
            if not -nd <= a < nd:
                raise TypeError(f"chainer F.moveaxis: axis {a} is out of bounds for {nd} axes")
    perm = _perm_of(lambda a: np.moveaxis(a, source, destination), nd)
    return _out(_call("Transpose", x, axes=perm))  # type: ignore[no-any-return]


def rollaxis(x: Any, axis: int, start: int = 0) -> Variable:
    """numpy's ``rollaxis``: axis ``axis`` moved to lie before position ``start``.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.rollaxis(np.zeros((2, 3, 4), np.float32), 2).shape
        (4, 2, 3)
    """
    if not isinstance(axis, (int, np.integer)):
        raise TypeError("chainer F.rollaxis: axis must be int")
    if not isinstance(start, (int, np.integer)):
        raise TypeError("chainer F.rollaxis: start must be int")
    nd = len(_shape(x))
    if not (-nd <= axis < nd and -nd - 1 <= start <= nd):
        raise TypeError(
            f"chainer F.rollaxis: axis {axis} or start {start} is out of bounds for {nd} axes"
        )
    perm = _perm_of(lambda a: np.rollaxis(a, axis, start), nd)
    return _out(_call("Transpose", x, axes=perm))  # type: ignore[no-any-return]


def broadcast(*args: Any) -> Variable | tuple[Variable, ...]:
    """The arrays broadcast to their common shape (numpy's rules): a tuple of Variables for
    several inputs; for one input, the input itself as a Variable (as chainer).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> a, b = F.broadcast(np.ones((2, 1), np.float32), np.ones(3, np.float32))
        >>> a.shape, b.shape
        ((2, 3), (2, 3))
    """
    if not args:
        raise ValueError("chainer F.broadcast: at least one input is required")
    if len(args) == 1:  # chainer: the input itself, as a Variable
        return as_variable(args[0])
    shape = tuple(np.broadcast_shapes(*(_shape(a) for a in args)))
    outs = tuple(
        _out(
            _call("Reshape", a, shape=shape)
            if _shape(a) == shape
            else _call("BroadcastTo", a, shape=shape)
        )
        for a in args
    )
    return outs[0] if len(outs) == 1 else outs


def copy(x: Any, dst: Any) -> Variable:
    """A copy of x on the device ``dst`` (-1 or ``"@numpy"``: the CPU), differentiable (the
    gradient goes back to x's device).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.copy(np.array([1.0], dtype=np.float32), -1)
        variable([1.])
    """
    from .._device import get_device

    dev = get_device(dst, "chainer F.copy")
    return _out(_call("ToDevice", x, device=dev.name))  # type: ignore[no-any-return]


def diagonal(x: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Variable:
    """numpy's ``diagonal``: ``y[..., i] = x[..., i, i + offset]`` over the axes ``axis1`` and
    ``axis2`` (removed; the diagonal is the last axis of y).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.diagonal(np.arange(9, dtype=np.float32).reshape(3, 3))
        variable([0., 4., 8.])
    """
    shape = _shape(x)
    nd = len(shape)
    if not (builtins_max(axis1, axis2) < nd and -nd <= builtins_min(axis1, axis2)):
        raise TypeError(f"chainer F.diagonal: axes {axis1}, {axis2} out of range for {nd} axes")
    a1, a2 = axis1 % nd, axis2 % nd
    if a1 == a2:
        raise ValueError("chainer F.diagonal: axis1 and axis2 cannot be the same")
    rest = [i for i in range(nd) if i not in (a1, a2)]
    h = _call("Transpose", x, axes=(*rest, a1, a2))
    n1, n2 = shape[a1], shape[a2]
    i0 = builtins_max(-offset, 0)
    j0 = builtins_max(offset, 0)
    k = builtins_max(builtins_min(n1 - i0, n2 - j0), 0)
    rows, cols = np.arange(i0, i0 + k), np.arange(j0, j0 + k)
    return _out(_call("GetItem", h, key=(Ellipsis, rows, cols)))  # type: ignore[no-any-return]


def fliplr(a: Any) -> Variable:
    """a reversed along axis 1 (a needs at least 2 axes).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.fliplr(np.array([[1.0, 2.0]], dtype=np.float32))
        variable([[2., 1.]])
    """
    _check_float("fliplr", a=a)
    if len(_shape(a)) < 2:
        raise TypeError("chainer F.fliplr: a.ndim >= 2 is required")
    return _out(_call("Flip", a, axes=(1,)))  # type: ignore[no-any-return]


def flipud(a: Any) -> Variable:
    """a reversed along axis 0 (a needs at least 1 axis).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.flipud(np.array([1.0, 2.0], dtype=np.float32))
        variable([2., 1.])
    """
    _check_float("flipud", a=a)
    if len(_shape(a)) < 1:
        raise TypeError("chainer F.flipud: a.ndim >= 1 is required")
    return _out(_call("Flip", a, axes=(0,)))  # type: ignore[no-any-return]


def space2depth(X: Any, r: int) -> Variable:
    """(N, C, H, W) to (N, r * r * C, H / r, W / r): each r x r block of pixels into channels,
    ``y[n, (i * r + j) * C + c, h, w] = X[n, c, h * r + i, w * r + j]``.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.space2depth(np.zeros((1, 1, 4, 6), np.float32), 2).shape
        (1, 4, 2, 3)
    """
    s = _shape(X)
    _check_float("space2depth", X=X)
    if len(s) != 4:
        raise TypeError(f"chainer F.space2depth: X must be 4-d (N, C, H, W), got shape {s}")
    if s[2] % r or s[3] % r:
        raise ValueError(
            f"chainer F.space2depth: X must be 4-d with H and W divisible by r={r}, got {s}"
        )
    n, c, a, b = s
    h = _call("Reshape", X, shape=(n, c, a // r, r, b // r, r))
    h = _call("Transpose", h, axes=(0, 3, 5, 1, 2, 4))
    return _out(_call("Reshape", h, shape=(n, r * r * c, a // r, b // r)))  # type: ignore[no-any-return]


def depth2space(X: Any, r: int) -> Variable:
    """(N, r * r * C, H, W) to (N, C, H * r, W * r), the inverse of :func:`space2depth`:
    ``y[n, c, h * r + i, w * r + j] = X[n, (i * r + j) * C + c, h, w]``.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.depth2space(np.zeros((1, 4, 2, 3), np.float32), 2).shape
        (1, 1, 4, 6)
    """
    s = _shape(X)
    _check_float("depth2space", X=X)
    if len(s) != 4:
        raise TypeError(f"chainer F.depth2space: X must be 4-d (N, C, H, W), got shape {s}")
    if s[1] % (r * r):
        raise ValueError(
            f"chainer F.depth2space: X must be 4-d with channels divisible by r * r={r * r}, "
            f"got {s}"
        )
    n, c, a, b = s
    c //= r * r
    h = _call("Reshape", X, shape=(n, r, r, c, a, b))
    h = _call("Transpose", h, axes=(0, 3, 4, 1, 5, 2))
    return _out(_call("Reshape", h, shape=(n, c, a * r, b * r)))  # type: ignore[no-any-return]


def scatter_add(a: Any, slices: Any, b: Any) -> Variable:
    """A copy of ``a`` with ``b`` added at ``a[slices]`` (numpy's ``add.at``: repeated indices
    accumulate); the gradient of ``a`` is the output's, that of ``b`` the output's at
    ``slices``.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> a = np.zeros(3, dtype=np.float32)
        >>> F.scatter_add(a, np.array([0, 0, 2]), np.ones(3, dtype=np.float32))
        variable([2., 0., 1.])
    """
    a, b = _match("scatter_add", a, b)
    shape = _shape(a)
    size = int(math.prod(shape))
    pos = np.arange(size).reshape(shape)[slices]
    bb = b
    if _shape(b) != pos.shape:
        bb = _call("BroadcastTo", b, shape=pos.shape)
    flat_b = _call("Reshape", bb, shape=(pos.size,))
    dt = _fdtype(a)
    zeros = _const(np.zeros(size, dtype=dt), a if isinstance(a, _NativeVariable) else b)
    added = _call("ScatterAdd", zeros, _const(pos.reshape(-1), zeros), flat_b, axis=0)
    return _out(_call("Add2", a, _call("Reshape", added, shape=shape)))  # type: ignore[no-any-return]


def _interp_axis(x: Any, axis: int, out: int, size: int, mode: str, align_corners: bool) -> Any:
    """x interpolated along ``axis`` (of length ``size``) to ``out`` positions with chainer's
    ``compute_indices_and_weights``."""
    if mode == "bilinear":
        if align_corners:
            v = np.linspace(0, size - 1, num=out, dtype=np.float64)
        else:
            v = np.maximum((np.arange(out, dtype=np.float64) + 0.5) * (size / out) - 0.5, 0)
        vw, v = np.modf(v)
    else:
        v = np.minimum(np.floor(np.arange(out, dtype=np.float64) * (size / out)), size - 1)
        vw = np.zeros_like(v)
    v0 = v.astype(np.intp)
    v1 = np.minimum(v0 + 1, size - 1)
    dt = x.dtype
    shape = [1] * len(x.shape)
    shape[axis] = out
    w1 = _const(vw.astype(dt).reshape(shape), x)
    w0 = _const((1 - vw.astype(dt)).reshape(shape), x)
    full = list(x.shape)
    full[axis] = out
    a = _call("Gather", x, _const(v0, x), axis=axis)
    b = _call("Gather", x, _const(v1, x), axis=axis)
    return _call(
        "Add2",
        _call("Mul2", a, _call("BroadcastTo", w0, shape=tuple(full))),
        _call("Mul2", b, _call("BroadcastTo", w1, shape=tuple(full))),
    )


def resize_images(
    x: Any, output_shape: Sequence[int], *, mode: str = "bilinear", align_corners: bool = True
) -> Variable:
    """x (N, C, H, W), float32, resized to ``output_shape`` (out_H, out_W) by bilinear
    interpolation (``align_corners=True``: the corners' pixels coincide, source position
    ``v = i (H - 1) / (out_H - 1)``; else ``v = max((i + 1/2) H / out_H - 1/2, 0)``) or by the
    nearest pixel (``mode="nearest"``: ``v = min(floor(i H / out_H), H - 1)``); differentiable
    in x at every order (a linear map).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.resize_images(np.array([[[[0.0, 1.0]]]], np.float32), (1, 3))
        variable([[[[0. , 0.5, 1. ]]]])
    """
    if mode not in ("bilinear", "nearest"):
        raise ValueError(
            f"chainer F.resize_images: mode must be 'bilinear' or 'nearest', got {mode!r}"
        )
    xs = _shape(x)
    dt = _fdtype(x)
    if dt != np.float32 or len(xs) != 4:
        raise TypeError(
            f"chainer F.resize_images: x must be float32 and 4-d, got dtype {dt}, shape {xs}"
        )
    h = x if isinstance(x, _NativeVariable) else _const(device_array(x), None)
    h = _interp_axis(h, 2, int(output_shape[0]), xs[2], mode, align_corners)
    h = _interp_axis(h, 3, int(output_shape[1]), xs[3], mode, align_corners)
    return _out(h)  # type: ignore[no-any-return]
