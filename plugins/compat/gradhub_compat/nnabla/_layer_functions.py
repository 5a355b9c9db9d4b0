"""Functions that only the nnabla layer has: ``Identity``, ``Sink`` and ``SetItem``.

They are recorded graph nodes like any registered function (``forward()`` re-executes them,
``backward``/``nn.grad`` differentiate them) but are not added to gradhub's registry: their
semantics are nnabla's own (``Sink``'s backward ignores the incoming gradient). Each is a
:class:`gradhub.registry.FunctionDef` applied with :func:`gradhub.graph.apply`.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np
from gradhub.graph import apply
from gradhub.ops import call
from gradhub.registry import FunctionDef, Provider, Rule
from gradhub.variable import Variable as NativeVariable

_PROVIDER = Provider("gradhub-compat", "", "gradhub_compat.nnabla")


# -- Identity -------------------------------------------------------------------------------------


def _identity_kernel(xp: Any, x: Any) -> Any:
    return x.copy()


def _identity_bw(
    gy: Sequence[Any], ins: Any, in_shapes: Any, outs: Any, out_shapes: Any
) -> list[Any]:
    return [gy[0]]


def _identity_fast(
    xp: Any, gy: Sequence[Any], ins: Any, in_shapes: Any, outs: Any, out_shapes: Any
) -> list[Any]:
    return [gy[0]]


IDENTITY = FunctionDef(
    "Identity",
    _identity_kernel,
    _PROVIDER,
    inputs=("x",),
    rule=Rule(_identity_bw, _PROVIDER, (), (), fast=_identity_fast),
    doc="nnabla's Identity: y = x (a copy), gradient passed through",
)


# -- Sink -----------------------------------------------------------------------------------------


def _sink_kernel(xp: Any, *xs: Any, one_input_grad: bool = True, refs: Any = ()) -> Any:
    return xp.zeros((), dtype=np.float32)


def _sink_grads(xp: Any, shapes: Any, dtypes: Any, one_input_grad: bool, refs: Any) -> list[Any]:
    """nnabla's Sink backward: each input's gradient is 1 (``one_input_grad``, the incoming
    gradient is ignored) or the gradient the input holds in ``.g`` at that time."""
    res: list[Any] = []
    for i, (shape, dtype) in enumerate(zip(shapes, dtypes)):
        if np.dtype(dtype).kind not in "fc":
            res.append(None)
            continue
        v = refs[i]() if i < len(refs) else None
        if one_input_grad or v is None:
            res.append(xp.ones(shape, dtype=dtype))
        else:
            g = v.g  # the layer's .g: zeros when nothing was stored
            res.append(xp.array(g, dtype=dtype, copy=True))
    return res


def _sink_bw(
    gy: Sequence[Any],
    ins: Any,
    in_shapes: Any,
    outs: Any,
    out_shapes: Any,
    one_input_grad: bool = True,
    refs: Any = (),
) -> list[Any]:
    xp = gy[0].device.xp
    dtypes = [r().dtype if r() is not None else np.float32 for r in refs]
    arrays = _sink_grads(xp, in_shapes, dtypes, one_input_grad, refs)
    return [None if a is None else NativeVariable.leaf(a, False) for a in arrays]


def _sink_fast(
    xp: Any,
    gy: Sequence[Any],
    ins: Any,
    in_shapes: Any,
    outs: Any,
    out_shapes: Any,
    one_input_grad: bool = True,
    refs: Any = (),
) -> list[Any]:
    dtypes = [r().dtype if r() is not None else np.float32 for r in refs]
    return _sink_grads(xp, in_shapes, dtypes, one_input_grad, refs)


SINK = FunctionDef(
    "Sink",
    _sink_kernel,
    _PROVIDER,
    inputs=("*x",),
    attrs={"one_input_grad": True, "refs": ()},
    rule=Rule(_sink_bw, _PROVIDER, (), (), fast=_sink_fast),
    doc="nnabla's Sink: a scalar that depends on every input; backward fills their gradients",
)


def identity(x: Any) -> Any:
    """Apply nnabla's Identity to ``x``."""
    return apply(IDENTITY, (x,), {})


def sink(xs: Sequence[Any], one_input_grad: bool = True) -> Any:
    """Apply nnabla's Sink to ``xs``."""
    refs = tuple(weakref.ref(x) for x in xs)
    return apply(SINK, tuple(xs), {"one_input_grad": bool(one_input_grad), "refs": refs})


# -- SetItem --------------------------------------------------------------------------------------


def _set_item_kernel(xp: Any, x: Any, v: Any, key: Any = None) -> Any:
    out = x.copy()
    out[key] = v
    return out


def _set_item_bw(
    gy: Sequence[Any], ins: Any, in_shapes: Any, outs: Any, out_shapes: Any, key: Any = None
) -> list[Any]:
    g = gy[0]
    mask = g.device.xp.ones(tuple(in_shapes[0]), dtype=g.dtype)
    mask[key] = 0
    gx = g * NativeVariable.leaf(mask, False)
    gv = call("GetItem", g, key=key)
    if tuple(gv.shape) != tuple(in_shapes[1]):  # the value was broadcast into the slice
        gv = _sum_to(gv, tuple(in_shapes[1]))
    return [gx, gv]


def _sum_to(g: Any, shape: tuple[int, ...]) -> Any:
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and g.shape[lead + i] != 1
    )
    if axes:
        g = call("Sum", g, axis=axes, keepdims=True)
    return call("Reshape", g, shape=shape)


SET_ITEM = FunctionDef(
    "SetItem",
    _set_item_kernel,
    _PROVIDER,
    inputs=("x", "v"),
    attrs={"key": None},
    rule=Rule(_set_item_bw, _PROVIDER, (), ()),
    doc="x with x[key] replaced by v (a new array): the gradient of x is zero at key",
)


def set_item(x: Any, key: Any, value: Any) -> Any:
    """``x`` with ``x[key] = value``, recorded (both ``x`` and ``value`` get gradients)."""
    return apply(SET_ITEM, (x, value), {"key": key})


# -- SoftmaxCrossEntropy skipping negative labels ------------------------------------------------
#
# nnabla 1.39 gives a negative label a loss of 0 and no gradient. The layer's function wraps the
# registered SoftmaxCrossEntropy (its kernels and its rule): negative labels are replaced by 0
# for the computation and their rows masked (one node in the graph, as nnabla's). The masking is
# done whether or not the batch has a negative label (a comparison and two selections over the
# labels' rows): asking first would read a device array on the host, a synchronisation on a GPU
# that a CUDA-graph recording refuses. A row without a negative label keeps the native loss and
# gradient bit for bit (its label unchanged, its gradient multiplied by 1).


def _negative(xp: Any, t: Any) -> Any:
    return t < 0


def _masked_sce_kernel(xp: Any, x: Any, t: Any, axis: Any = None) -> Any:
    from gradhub.ops import kernel

    native = kernel("SoftmaxCrossEntropy", x)
    if t.dtype.kind == "u" or t.dtype == bool:  # never negative (bool: the native error)
        return native(xp, x, t, axis=axis)
    neg = _negative(xp, t)
    loss = native(xp, x, xp.where(neg, 0, t), axis=axis)
    return xp.where(neg.reshape(loss.shape), xp.zeros((), dtype=loss.dtype), loss)


def _masked_sce_bw(
    gy: Sequence[Any],
    ins: Sequence[Any],
    in_shapes: Any,
    outs: Any,
    out_shapes: Any,
    axis: Any = None,
) -> list[Any]:
    from gradhub.ops import fdef

    rule = fdef("SoftmaxCrossEntropy").rule
    x, t = ins
    xp = t.device.xp
    g = gy[0]
    if not (t._data.dtype.kind == "u" or t._data.dtype == bool):
        neg = _negative(xp, t._data)
        keep = NativeVariable.leaf((~neg).reshape(g.shape).astype(g._data.dtype), False)
        g = g * keep
        t = NativeVariable.leaf(xp.where(neg, 0, t._data), False)
    res = rule.fn([g], [x, t], in_shapes, outs, out_shapes, axis=axis)
    return [res[0], None]


def _masked_sce_fast(
    xp: Any,
    gy: Sequence[Any],
    ins: Sequence[Any],
    in_shapes: Any,
    outs: Any,
    out_shapes: Any,
    axis: Any = None,
) -> list[Any]:
    from gradhub.ops import fdef

    rule = fdef("SoftmaxCrossEntropy").rule
    x, t = ins
    g = gy[0]
    if not (t.dtype.kind == "u" or t.dtype == bool):
        neg = _negative(xp, t)
        g = g * (~neg).reshape(g.shape).astype(g.dtype)
        t = xp.where(neg, 0, t)
    if rule.fast is None:  # a rule registered in place of the library's: run it on constants
        gv = [NativeVariable.leaf(g, False)]
        iv = [NativeVariable.leaf(x, False), NativeVariable.leaf(t, False)]
        res = rule.fn(gv, iv, in_shapes, outs, out_shapes, axis=axis)
        return [None if res[0] is None else res[0]._data, None]
    res = rule.fast(xp, [g], [x, t], in_shapes, outs, out_shapes, axis=axis)
    return [res[0], None]


SOFTMAX_CROSS_ENTROPY = FunctionDef(
    "SoftmaxCrossEntropy",
    _masked_sce_kernel,
    _PROVIDER,
    inputs=("x", "target"),
    attrs={"axis": None},
    rule=Rule(_masked_sce_bw, _PROVIDER, (0, 1), (), fast=_masked_sce_fast),
    doc="softmax cross entropy where a negative label gives 0 and no gradient (nnabla)",
)


def softmax_cross_entropy(x: Any, target: Any, axis: Any = None) -> Any:
    """nnabla's softmax cross entropy (negative labels skipped), one recorded node."""
    return apply(SOFTMAX_CROSS_ENTROPY, (x, target), {"axis": axis})
