"""Batching rules of gradhub-nn-ops (for :func:`gradhub.func.vmap`; the elementwise functions
get gradhub's generic elementwise rule when they are registered).

Each rule receives the inputs with the batched ones holding the whole batch, batch axis first
(``dims[i] == 0``; ``None``: not batched at this vmap level) and returns the batch's result,
batch axis first, computed with registered functions so that it stays differentiable:

* reductions, softmaxes and losses along axes: the axes move by one (``None`` meaning "every
  axis" becomes every axis but the batch axis);
* shape functions: the permutation, axis or repetitions gain the batch axis;
* ``Affine``/``Convolution``/``Deconvolution`` with unbatched weights: ``base_axis + 1`` (the
  batch axis joins the leading sample axes, one call); ``Affine`` with a batched weight (the
  weights of per-sample gradients): one batched matrix product; ``Convolution`` with a batched
  weight: one grouped convolution with ``group * B`` groups (each element's channels form its
  own groups), for ``base_axis == 1``;
* ``Deconvolution`` with a batched weight: one grouped deconvolution with ``group * B`` groups;
  ``ConvolutionFilterGrad`` (met by ``jacfwd``/``hessian``'s batched tangents): one grouped
  filter gradient with ``group * B`` groups; the backward helpers of pooling
  (``MaxPoolingBackward``, ``AveragePoolingBackward``...): the batch axis is one more leading
  axis;
* pooling, padding, embeddings with an unbatched table, one-hot: the batch axis is one more
  leading axis, so the function runs unchanged; ``Embed`` with a batched table (and
  ``EmbedBackward``, per-sample gradients of a table): one lookup (scatter) in the elements'
  tables stacked along their first axis, each element's ids offset by its row count (the ids
  checked against one table's rows first, as the kernel checks them);
* ``BatchNormalization`` in inference (``batch_stat=False``) with shared parameters: the batch
  axis merged into the first sample axis; with batched parameters in inference, and in training
  (``batch_stat=True``, each element's own statistics): the batch axis is one more parameter
  axis, the running statistics updated as the loop updates them;
* ``StandardizeAffine``: its axes move by one, a batched ``gamma``/``beta`` gains size-1 axes
  after the batch axis (one call);
* the array functions: ``CumSum``, ``Sort`` and ``TopNError`` along their axis moved by one,
  ``TopKData`` with ``base_axis + 1``, ``MatrixDiag``/``MatrixDiagPart``/``Trilu`` with the
  batch axis one more leading axis (``EyeLike`` loops); ``GatherNd``/``ScatterNd``: one more
  index row, each element's batch position (shared data: the batch of indices behind their
  index axis);
* the batch linear algebra (``BatchInv``, ``BatchDet``, ``BatchLogdet``, ``BatchCholesky``) and
  the Fourier transforms (``FFT``, ``IFFT``): the batch axis one more leading axis;
* ``DropoutMask``: as vmap's ``randomness`` says
  (:func:`gradhub_nn_ops.stochastic.dropout_mask_batching_rule`).

Cases not covered (``BatchNormalization`` with batched running statistics in training, a batched
``Convolution``/``Deconvolution`` weight with ``base_axis != 1``...) fall back to the loop with a
one-time warning.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from gradhub.batching import loop, moveaxis, shift_axes, size_of, to_batched
from gradhub.ops import call

from .stochastic import dropout_mask_batching_rule

Rule = Callable[..., Any]


def _all_batched(args: tuple[Any, ...], dims: tuple[Any, ...]) -> list[Any]:
    """Every input batched (the unbatched ones repeated along a new first axis)."""
    n = size_of(args, dims)
    return [a if d is not None or a is None else to_batched(a, n) for a, d in zip(args, dims)]


def _along(name: str, key: str, none: str) -> Rule:
    """The rule of a one-input function along the axes of its attribute ``key``."""

    def rule(args: tuple[Any, ...], dims: tuple[Any, ...], **attrs: Any) -> Any:
        x = args[0]
        attrs = dict(attrs)
        attrs[key] = shift_axes(attrs.get(key), x.ndim - 1, none)
        return call(name, *args, **attrs), 0

    rule.__name__ = rule.__qualname__ = f"batch_{name}"
    return rule


def _standardize_affine(args: tuple[Any, ...], dims: tuple[Any, ...], axis: Any, eps: float) -> Any:
    # the axes move by one; a batched gamma/beta gets size-1 axes after its batch axis so that it
    # lines up with x's trailing axes
    x = args[0] if dims[0] is not None else to_batched(args[0], size_of(args, dims))
    nd = x.ndim - 1
    params = []
    for p, d in zip(args[1:], dims[1:]):
        if d is not None and p.ndim - 1 < nd:
            p = call("Reshape", p, shape=(p.shape[0],) + (1,) * (nd - p.ndim + 1) + p.shape[1:])
        params.append(p)
    return call("StandardizeAffine", x, *params, axis=shift_axes(axis, nd, "all"), eps=eps), 0


def _nd_indices_batched(idx: Any, batched: bool, size: int, like: Any) -> Any:
    """GatherNd/ScatterNd indices ``(M, *Y)`` of each element (``(B, M, *Y)`` when
    ``batched``) as indices ``(1 + M, B, *Y)`` into arrays with the batch axis first: the batch
    position, then the element's own indices, in int64 (float64 for float indices): a narrow
    index dtype could not hold the batch positions."""
    from gradhub import Variable

    wide = np.dtype(np.float64 if np.dtype(idx.dtype).kind == "f" else np.int64)
    if idx.dtype != wide:  # (float indices stay floats: the kernel checks they are whole)
        idx = call("Cast", idx, dtype=wide.name)
    if batched:
        idx = moveaxis(idx, 0, 1)
        shape = tuple(idx.shape[1:])
    else:
        shape = (size, *idx.shape[1:])
        one = call("Reshape", idx, shape=(idx.shape[0], 1, *idx.shape[1:]))
        idx = call("BroadcastTo", one, shape=(idx.shape[0], *shape))
    xp = like.device.xp
    with like.device.activate():
        grid = xp.arange(size, dtype=wide).reshape((1, size) + (1,) * (len(shape) - 1))
        row = Variable(xp.broadcast_to(grid, (1, *shape)), need_grad=False)
    return call("Concatenate", row, idx, axis=0)


def _gather_nd(args: tuple[Any, ...], dims: tuple[Any, ...]) -> Any:
    # data batched: one more index row, the batch position; data shared: the batch of indices
    # moved behind their index axis
    data, idx = args
    if dims[0] is None:
        return call("GatherNd", data, moveaxis(idx, 0, 1)), 0
    size = data.shape[0]
    return call("GatherNd", data, _nd_indices_batched(idx, dims[1] is not None, size, data)), 0


def _scatter_nd(args: tuple[Any, ...], dims: tuple[Any, ...], shape: Any, add: bool) -> Any:
    # scattered into an array with the batch axis first, one more index row (the batch position)
    data, idx = args
    size = size_of(args, dims)
    if dims[0] is None:
        data = to_batched(data, size)
    idx_b = _nd_indices_batched(idx, dims[1] is not None, size, data)
    return call("ScatterNd", data, idx_b, shape=(size, *tuple(shape)), add=add), 0


def _minmax(name: str) -> Rule:
    inner = _along(name, "axis", "all")

    def rule(args: tuple[Any, ...], dims: tuple[Any, ...], **attrs: Any) -> Any:
        axis = attrs.get("axis")
        if attrs.get("only_index") and (axis is None or isinstance(axis, (tuple, list))):
            return loop(name, args, dims, attrs, "cannot batch only_index over several axes")
        return inner(args, dims, **attrs)

    rule.__name__ = rule.__qualname__ = f"batch_{name}"
    return rule


def _sce(args: tuple[Any, ...], dims: tuple[Any, ...], axis: Any) -> Any:
    x, t = _all_batched(args, dims)
    return call("SoftmaxCrossEntropy", x, t, axis=shift_axes(axis, x.ndim - 1, "keep")), 0


def _passthrough(name: str) -> Rule:
    """The rule of a function whose leading axes are free (pooling, padding...): the batch axis
    is one more of them."""

    def rule(args: tuple[Any, ...], dims: tuple[Any, ...], **attrs: Any) -> Any:
        if any(d is None for d in dims[1:]):
            return loop(name, args, dims, attrs, "cannot batch with an unbatched second input")
        return call(name, *args, **attrs), 0

    rule.__name__ = rule.__qualname__ = f"batch_{name}"
    return rule


def _joined(name: str, none: str) -> Rule:
    def rule(args: tuple[Any, ...], dims: tuple[Any, ...], axis: Any) -> Any:
        xs = _all_batched(args, dims)
        return call(name, *xs, axis=shift_axes(axis, xs[0].ndim - 1, none)), 0

    rule.__name__ = rule.__qualname__ = f"batch_{name}"
    return rule


def _concat_rule(args: tuple[Any, ...], dims: tuple[Any, ...], axis: Any) -> Any:
    xs = _all_batched(args, dims)
    nd = xs[0].ndim - 1
    ax = nd - 1 if axis is None else axis  # None: the last axis
    return call("Concatenate", *xs, axis=shift_axes(ax, nd)), 0


def _split(args: tuple[Any, ...], dims: tuple[Any, ...], axis: Any) -> Any:
    (x,) = args
    outs = call("Split", x, axis=shift_axes(axis, x.ndim - 1))
    return tuple(outs), (0,) * len(outs)


def _flip(args: tuple[Any, ...], dims: tuple[Any, ...], axes: Any) -> Any:
    (x,) = args
    nd = x.ndim - 1
    ax = (nd - 1,) if axes is None else axes  # None: the last axis
    if axes is None and nd == 0:
        return call("Flip", x, axes=()), 0
    return call("Flip", x, axes=shift_axes(ax, nd)), 0


def _tile(args: tuple[Any, ...], dims: tuple[Any, ...], reps: Any) -> Any:
    (x,) = args
    r = (int(reps),) if isinstance(reps, int) else tuple(int(v) for v in reps)
    nd = x.ndim - 1
    if len(r) > nd:  # one element gains leading axes of size 1, as numpy's tile
        x = call("Reshape", x, shape=(x.shape[0], *(1,) * (len(r) - nd), *x.shape[1:]))
        nd = len(r)
    return call("Tile", x, reps=(1, *(1,) * (nd - len(r)), *r)), 0


def _affine(args: tuple[Any, ...], dims: tuple[Any, ...], base_axis: int) -> Any:
    x, w = args[0], args[1]
    b = args[2] if len(args) > 2 else None
    dx, dw = dims[0], dims[1]
    db = dims[2] if len(args) > 2 else None
    if dw is None and db is None:
        return call("Affine", *args, base_axis=base_axis % (x.ndim - 1) + 1), 0
    n = size_of(args, dims)
    if dx is None:
        x = to_batched(x, n)
    ba = base_axis % (x.ndim - 1)  # of one element
    lead = tuple(x.shape[1 : ba + 1])
    if dw is None:
        y = call("Affine", x, w, base_axis=ba + 1)
        out = tuple(w.shape[1:])
    else:
        k = 1
        for s in w.shape[1:2]:
            k *= s
        out = tuple(w.shape[2:])
        m = 1
        for s in out:
            m *= s
        x3 = call("Reshape", x, shape=(n, -1, k))
        w3 = call("Reshape", w, shape=(n, k, m))
        y = call("Reshape", call("BatchMatmul", x3, w3), shape=(n, *lead, *out))
    if b is not None:
        if db is None:
            y = y + call("Reshape", b, shape=out)
        else:
            y = y + call("Reshape", b, shape=(n, *(1,) * len(lead), *out))
    return y, 0


def _conv_unbatched_w(name: str) -> Rule:
    """Convolution/Deconvolution with batched inputs only (weights shared): the batch axis is
    one more leading axis of x (``base_axis + 1``)."""

    def rule(args: tuple[Any, ...], dims: tuple[Any, ...], **attrs: Any) -> Any:
        if dims[0] is not None and all(d is None for d in dims[1:]):
            attrs = dict(attrs)
            attrs["base_axis"] = int(attrs["base_axis"]) % (args[0].ndim - 1) + 1
            return call(name, *args, **attrs), 0
        if name == "Convolution" and dims[1] is not None:
            return _grouped_conv(args, dims, **attrs)
        if name == "Deconvolution" and dims[1] is not None:
            return _grouped_deconv(args, dims, **attrs)
        if dims[1] is None and len(args) > 2 and dims[2] is not None:  # only the bias batched
            return _conv_batched_bias(name, args, dims, **attrs)
        return loop(name, args, dims, attrs, "cannot batch a batched weight or bias")

    rule.__name__ = rule.__qualname__ = f"batch_{name}"
    return rule


def _conv_batched_bias(
    name: str, args: tuple[Any, ...], dims: tuple[Any, ...], **attrs: Any
) -> Any:
    """A shared weight and a batched bias: the convolution of the batch without bias
    (``base_axis + 1``), plus each element's bias on its output maps."""
    n = size_of(args, dims)
    x = args[0] if dims[0] is not None else to_batched(args[0], n)
    ba = int(attrs["base_axis"]) % (x.ndim - 1)
    conv_attrs = dict(attrs)
    conv_attrs["base_axis"] = ba + 1
    y = call(name, x, args[1], **conv_attrs)
    o = args[2].shape[1]
    nsp = y.ndim - ba - 2
    return y + call("Reshape", args[2], shape=(n, *(1,) * ba, o, *(1,) * nsp)), 0


def _grouped_conv(args: tuple[Any, ...], dims: tuple[Any, ...], **attrs: Any) -> Any:
    """A convolution with a batched weight (B, O, C // g, *k): one convolution of x (N, B*C,
    *spatial) with the weight (B*O, C // g, *k) in ``g * B`` groups; element ``b``'s channels
    are the groups ``b*g .. b*g + g - 1``."""
    xs = _all_batched(args, dims)
    x, w = xs[0], xs[1]
    bias = xs[2] if len(xs) > 2 else None
    nd = x.ndim - 1
    base_axis = int(attrs["base_axis"]) % nd
    if base_axis != 1:
        return loop("Convolution", args, dims, attrs, "cannot batch a weight with base_axis != 1")
    n_b, n, c = x.shape[0], x.shape[1], x.shape[2]
    sp = tuple(x.shape[3:])
    o = w.shape[1]
    g = int(attrs["group"])
    xt = call("Transpose", x, axes=(1, 0, *range(2, x.ndim)))  # (N, B, C, *sp)
    xt = call("Reshape", xt, shape=(n, n_b * c, *sp))
    wt = call("Reshape", w, shape=(n_b * o, *w.shape[2:]))
    conv_attrs = dict(attrs)
    conv_attrs["group"] = g * n_b
    ins = [xt, wt]
    if bias is not None:
        ins.append(call("Reshape", bias, shape=(n_b * o,)))
    y = call("Convolution", *ins, **conv_attrs)  # (N, B*O, *sp')
    y = call("Reshape", y, shape=(n, n_b, o, *y.shape[2:]))
    return call("Transpose", y, axes=(1, 0, *range(2, y.ndim))), 0


def _batch_normalization(args: tuple[Any, ...], dims: tuple[Any, ...], **attrs: Any) -> Any:
    """Inference (``batch_stat=False``) with shared parameters: the batch axis merged into the
    sample's first axis (not a parameter axis), one call; with batched parameters (or a
    parameter axis 0): the vmap axis as one more parameter axis, the parameters ``(B, *param
    shape)``, one call. Training (``batch_stat=True``): see :func:`_bn_batch_stat`. Batched
    running statistics in training loop."""
    from .normalization import _norm_axes

    x = args[0]
    nd = x.ndim - (dims[0] is not None)  # one element's
    axes = attrs.get("axes", (1,))
    if attrs.get("batch_stat", True):
        if all(d is None for d in dims[3:]):
            return _bn_batch_stat(args, dims, **attrs)
        return loop(
            "BatchNormalization",
            args,
            dims,
            attrs,
            "cannot batch batch statistics with batched running statistics",
        )
    ax = _norm_axes("batch_normalization", "axes", axes, max(nd, 1))
    if dims[0] is not None and all(d is None for d in dims[1:]) and nd >= 1 and 0 not in ax:
        n, first = x.shape[0], x.shape[1]
        merged = call("Reshape", x, shape=(n * first, *x.shape[2:]))
        y = call("BatchNormalization", merged, *args[1:], **attrs)
        return call("Reshape", y, shape=x.shape), 0
    xs = _all_batched(args, dims)
    inf_attrs = dict(attrs)
    inf_attrs["axes"] = (0, *(a + 1 for a in ax))
    return call("BatchNormalization", *xs, **inf_attrs), 0


def _bn_batch_stat(
    args: tuple[Any, ...],
    dims: tuple[Any, ...],
    axes: Any = (1,),
    decay_rate: float = 0.9,
    eps: float = 1e-5,
    batch_stat: bool = True,
) -> Any:
    """Training mode for a batch: each element normalizes with its own batch statistics, so the
    vmap axis becomes one more parameter axis (``axes`` ``(0, *(a + 1))``), beta and gamma of
    shape ``(B, *param shape)`` (repeated where unbatched): one call. The running statistics
    (unbatched) end as the loop leaves them, each element's update applied in turn:

    .. math:: m \\leftarrow d^B m + (1 - d) \\sum_{i<B} d^{B-1-i} \\mu_i

    (``d`` the decay rate; the same for the variance with the unbiased batch variances): the
    call updates per-element copies ``d m + (1 - d) \\mu_i``, from which the loop's result is
    formed. (Re-executing the recorded graph updates those copies, not the running
    statistics.)"""
    from gradhub import Variable

    from .normalization import _norm_axes

    n = size_of(args, dims)
    xs = _all_batched(args[:3], dims[:3])
    x = xs[0]
    nd = x.ndim - 1
    ax = _norm_axes("batch_normalization", "axes", axes, nd)
    # the running statistics' arrays, updated in place (a Variable's own array, or an array)
    running = [r.d if isinstance(r, Variable) else r for r in (args[3], args[4])]
    for name, arr in zip(("mean", "variance"), running):
        if not getattr(getattr(arr, "flags", None), "writeable", True):
            raise ValueError(
                f"batch_normalization(): the running {name} array is read-only; pass a writable "
                "array (the running statistics are updated in place when batch_stat=True)"
            )
    xp = x.device.xp
    copies = [xp.broadcast_to(r, (n, *r.shape)).copy() for r in running]
    y = call(
        "BatchNormalization",
        x,
        xs[1],
        xs[2],
        *(Variable(c, need_grad=False) for c in copies),
        axes=(0, *(a + 1 for a in ax)),
        decay_rate=decay_rate,
        eps=eps,
        batch_stat=True,
    )
    d = float(decay_rate)
    for arr, c in zip(running, copies):
        before = arr.copy()
        acc = (d**n) * before
        for i in range(n):  # c[i] = d before + (1 - d) mu_i
            acc = acc + (d ** (n - 1 - i)) * (c[i] - d * before)
        arr[...] = acc
    return y, 0


def _ids_in_range(ids: Any, n: int, fn: str) -> bool:
    """Check a batch of ids (a Variable whose data is available) to lie in ``[0, n)`` as the
    function's kernel does (after the per-element offsets an id out of range would pick a row
    of another element's table); False where the data is not available (nested vmap)."""
    from gradhub.batching import BatchedVariable

    if isinstance(ids, BatchedVariable):
        return False
    arr = ids.device.to_numpy(ids.d) if hasattr(ids, "device") else ids
    if arr.dtype.kind not in "iuf":
        return False  # the kernel's own checks (and messages) on the loop
    if arr.size and (int(arr.min()) < 0 or int(arr.max()) >= n):
        raise ValueError(
            f"{fn}: ids in x0 must be in [0, {n}), got values in [{int(arr.min())}, "
            f"{int(arr.max())}]"
        )
    return True


def _offset_ids(ids: Any, n: int, rows: int) -> Any:
    """``ids`` (batch axis first) plus ``b * rows`` for element ``b``: indices into the
    elements' tables stacked along their first axis."""
    from gradhub import Variable

    xp = ids.device.xp
    offs = (xp.arange(n, dtype=ids.dtype) * rows).reshape((n, *(1,) * (ids.ndim - 1)))
    return ids + Variable(offs, need_grad=False)


def _embed(args: tuple[Any, ...], dims: tuple[Any, ...]) -> Any:
    """Shared table: the batch axis is one more leading axis of the ids, one call. Batched
    table ``(B, V, ...)``: one lookup in the tables stacked ``(B V, ...)`` with each element's
    ids offset by ``b V``."""
    x, w = args
    if dims[1] is None:
        return call("Embed", x, w), 0
    n = size_of(args, dims)
    if dims[0] is None:
        x = to_batched(x, n)
    v = w.shape[1]
    if not _ids_in_range(x, v, "embed"):
        return loop("Embed", args, dims, {}, "cannot batch these ids with a batched table")
    wf = call("Reshape", w, shape=(n * v, *w.shape[2:]))
    return call("Embed", _offset_ids(x, n, v), wf), 0


def _embed_backward(args: tuple[Any, ...], dims: tuple[Any, ...], shape: Any) -> Any:
    """The gradient of a batch of tables (per-sample gradients of an embedding): the
    elements' gradients scattered into the stacked tables ``(B V, ...)`` with offset ids."""
    x, g = args
    shape = tuple(int(s) for s in shape)
    n = size_of(args, dims)
    if dims[0] is None:
        x = to_batched(x, n)
    if dims[1] is None:
        g = to_batched(g, n)
    v = shape[0] if shape else 0
    if not shape or not _ids_in_range(x, v, "embed_backward"):
        return loop(
            "EmbedBackward", args, dims, {"shape": shape}, "cannot batch these ids or shape"
        )
    out = call("EmbedBackward", _offset_ids(x, n, v), g, shape=(n * v, *shape[1:]))
    return call("Reshape", out, shape=(n, *shape)), 0


def _grouped_deconv(args: tuple[Any, ...], dims: tuple[Any, ...], **attrs: Any) -> Any:
    """A deconvolution with a batched weight (B, C, O // g, *k): one deconvolution of x (N, B*C,
    *spatial) with the weight (B*C, O // g, *k) in ``g * B`` groups (element ``b``'s input
    channels and output channels form the groups ``b*g .. b*g + g - 1``), for
    ``base_axis == 1``."""
    xs = _all_batched(args, dims)
    x, w = xs[0], xs[1]
    bias = xs[2] if len(xs) > 2 else None
    base_axis = int(attrs["base_axis"]) % (x.ndim - 1)
    if base_axis != 1:
        return loop("Deconvolution", args, dims, attrs, "cannot batch a weight with base_axis != 1")
    n_b, n, c = x.shape[0], x.shape[1], x.shape[2]
    sp = tuple(x.shape[3:])
    g = int(attrs["group"])
    xt = call("Transpose", x, axes=(1, 0, *range(2, x.ndim)))  # (N, B, C, *sp)
    xt = call("Reshape", xt, shape=(n, n_b * c, *sp))
    wt = call("Reshape", w, shape=(n_b * w.shape[1], *w.shape[2:]))
    dc_attrs = dict(attrs)
    dc_attrs["group"] = g * n_b
    ins = [xt, wt]
    if bias is not None:
        ins.append(call("Reshape", bias, shape=(n_b * bias.shape[1],)))
    y = call("Deconvolution", *ins, **dc_attrs)  # (N, B*O, *sp')
    o = y.shape[1] // n_b
    y = call("Reshape", y, shape=(n, n_b, o, *y.shape[2:]))
    return call("Transpose", y, axes=(1, 0, *range(2, y.ndim))), 0


def _leading(name: str) -> Rule:
    """The rule of a backward helper of pooling (``MaxPoolingBackward``, ``MaxPoolingGather``,
    ``MaskedUnpooling``...) whose leading axes are free: every input batched (an unbatched one
    repeated), the batch axis one more leading axis. ``jacfwd``/``hessian`` reach these with a
    batch of tangents and unbatched primals."""

    def rule(args: tuple[Any, ...], dims: tuple[Any, ...], **attrs: Any) -> Any:
        return call(name, *_all_batched(args, dims), **attrs), 0

    rule.__name__ = rule.__qualname__ = f"batch_{name}"
    return rule


def _average_pooling_backward(args: tuple[Any, ...], dims: tuple[Any, ...], **attrs: Any) -> Any:
    (g,) = args
    attrs = dict(attrs)
    attrs["x_shape"] = (g.shape[0], *tuple(attrs["x_shape"]))
    return call("AveragePoolingBackward", g, **attrs), 0


def _filter_grad(args: tuple[Any, ...], dims: tuple[Any, ...], **attrs: Any) -> Any:
    """``ConvolutionFilterGrad`` (the weight gradient of a convolution, ``(O, C // g, *k)``) for
    a batch: one filter gradient of x (N, B*C, *spatial) and dy (N, B*O, *spatial') in
    ``g * B`` groups, whose result ``(B*O, C // g, *k)`` holds each element's, for
    ``base_axis == 1``."""
    x, dy = _all_batched(args, dims)
    if int(attrs["base_axis"]) % (x.ndim - 1) != 1:
        return loop("ConvolutionFilterGrad", args, dims, attrs, "cannot batch with base_axis != 1")
    n_b, n = x.shape[0], x.shape[1]
    xt = call("Transpose", x, axes=(1, 0, *range(2, x.ndim)))
    xt = call("Reshape", xt, shape=(n, n_b * x.shape[2], *x.shape[3:]))
    dt = call("Transpose", dy, axes=(1, 0, *range(2, dy.ndim)))
    dt = call("Reshape", dt, shape=(n, n_b * dy.shape[2], *dy.shape[3:]))
    fg_attrs = dict(attrs)
    fg_attrs["group"] = int(attrs["group"]) * n_b
    w = call("ConvolutionFilterGrad", xt, dt, **fg_attrs)  # (B*O, C // g, *k)
    return call("Reshape", w, shape=(n_b, dy.shape[2], *w.shape[1:])), 0


def _einsum(args: tuple[Any, ...], dims: tuple[Any, ...], equation: str) -> Any:
    from .linalg import _parse_einsum

    shapes = [a.shape[1:] if d is not None else a.shape for a, d in zip(args, dims)]
    terms, out, _ = _parse_einsum(equation, shapes)
    used = set("".join(terms)) | set(out)
    letter = next(
        c for c in "zyxwvutsrqponmlkjihgfedcbaZYXWVUTSRQPONMLKJIHGFEDCBA" if c not in used
    )
    terms = [letter + t if d is not None else t for t, d in zip(terms, dims)]
    return call("Einsum", *args, equation=",".join(terms) + "->" + letter + out), 0


def _cumsum(args: tuple[Any, ...], dims: tuple[Any, ...], **attrs: Any) -> Any:
    """CumSum along its axis (None means 0), moved by one."""
    attrs = dict(attrs)
    axis = attrs.get("axis")
    attrs["axis"] = shift_axes(0 if axis is None else axis, args[0].ndim - 1)
    return call("CumSum", *args, **attrs), 0


def _sort(args: tuple[Any, ...], dims: tuple[Any, ...], **attrs: Any) -> Any:
    attrs = dict(attrs)
    attrs["axis"] = shift_axes(attrs.get("axis", -1), args[0].ndim - 1)
    return call("Sort", *args, **attrs), 0


def _top_k_data(args: tuple[Any, ...], dims: tuple[Any, ...], **attrs: Any) -> Any:
    """TopKData: the batch axis is one more sample axis (``base_axis + 1``)."""
    nd = args[0].ndim - 1
    attrs = dict(attrs)
    ba = int(attrs.get("base_axis", 1))
    if not -nd <= ba < nd:  # the kernel's own message, on the loop
        return loop("TopKData", args, dims, attrs, "cannot batch this base_axis")
    attrs["base_axis"] = ba % nd + 1
    return call("TopKData", *args, **attrs), 0


def _top_n_error(args: tuple[Any, ...], dims: tuple[Any, ...], axis: Any, n: Any) -> Any:
    x, t = _all_batched(args, dims)
    return call("TopNError", x, t, axis=shift_axes(axis, x.ndim - 1, "keep"), n=n), 0


def register_batching_rules(register: Any) -> None:
    """Set the batching rules of the library's functions that are not elementwise."""
    r = register.batching_rule
    for name in ("Max", "Min"):
        r(name, _minmax(name))
    for name in ("Prod", "LogSumExp", "Mean", "Norm", "DistributedMean"):
        r(name, _along(name, "axis", "all"))
    for name in ("Softmax", "LogSoftmax"):
        r(name, _along(name, "axis", "keep"))
    r("Standardize", _along("Standardize", "axis", "all"))
    r("StandardizeAffine", _standardize_affine)
    r("GatherNd", _gather_nd)
    r("ScatterNd", _scatter_nd)
    r("SoftmaxCrossEntropy", _sce)
    r("Concatenate", _concat_rule)
    r("Stack", _joined("Stack", "all"))
    r("Split", _split)
    r("Flip", _flip)
    r("Tile", _tile)
    r("Pad", _passthrough("Pad"))
    r("Affine", _affine)
    r("Einsum", _einsum)
    r("Convolution", _conv_unbatched_w("Convolution"))
    r("Deconvolution", _conv_unbatched_w("Deconvolution"))
    r("DropoutMask", dropout_mask_batching_rule)
    for name in ("MaxPooling", "AveragePooling", "OneHot"):
        r(name, _passthrough(name))
    for name in (
        "MaxPoolingBackward",
        "MaxPoolingGather",
        "MaxPoolingMask",
        "MaskedUnpooling",
        "MaskedPooling",
    ):
        r(name, _leading(name))
    r("AveragePoolingBackward", _average_pooling_backward)
    r("ConvolutionFilterGrad", _filter_grad)
    r("Embed", _embed)
    r("EmbedBackward", _embed_backward)
    r("BatchNormalization", _batch_normalization)
    r("CumSum", _cumsum)
    r("Sort", _sort)
    r("TopKData", _top_k_data)
    r("TopNError", _top_n_error)
    for name in (
        "MatrixDiag",
        "MatrixDiagPart",
        "Trilu",
        "BatchInv",
        "BatchDet",
        "BatchLogdet",
        "BatchCholesky",
        "FFT",
        "IFFT",
    ):
        r(name, _leading(name))
