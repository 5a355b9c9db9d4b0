"""mxnet's shape inference for the symbols of the layer (``infer_shape``,
``infer_shape_partial``, ``bind``, ``simple_bind``, ``Executor.reshape``).

As in mxnet 1.x a shape is unknown (``None``, shown as ``()`` by ``infer_shape_partial``) or a
tuple whose 0 entries are unknown dimensions. Every operator's rule merges what it knows into
the shapes of its inputs and output, in both directions (an elementwise operator's output shape
gives its operands' shapes, ``FullyConnected``'s output gives the batch size of its data), and the
rules run until nothing changes. Two known dimensions that disagree raise
:class:`~.base.MXNetError` naming the operator, with mxnet's text.

Example::

    >>> import gradhub_compat.mxnet as mx
    >>> x, y = mx.sym.Variable("x"), mx.sym.Variable("y")
    >>> (x + y).infer_shape(x=(0, 3), y=(2, 0))
    ([(2, 3), (2, 3)], [(2, 3)], [])
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from . import _sym_norm, _sym_ops_more
from .base import MXNetError

if TYPE_CHECKING:
    from .symbol import Symbol

Shape = tuple[int, ...] | None

#: operators whose output has the shape of their (only) input, and back
#: mxnet's unary elementwise operators (``mx.sym.abs``...) and the gradhub functions computing
#: them (``square`` is ``x ** 2``)
UNARY_OPS = {
    "abs": "Abs",
    "cos": "Cos",
    "exp": "Exp",
    "log": "Log",
    "relu": "ReLU",
    "sigmoid": "Sigmoid",
    "sin": "Sin",
    "sqrt": "Sqrt",
    "square": "PowScalar",
    "tanh": "Tanh",
}
_SAME_SHAPE = (
    "Activation",
    "MakeLoss",
    "make_loss",
    "BlockGrad",
    "softmax",
    "Dropout",
    "clip",
    "log_softmax",
    *UNARY_OPS,
)


class _Conflict(Exception):
    pass


def unify(a: Shape, b: Shape) -> Shape:
    """The shape that agrees with both ``a`` and ``b`` (0 and None are unknown).

    Raises ``_Conflict`` when two known dimensions (or the number of axes) differ."""
    if a is None:
        return b
    if b is None:
        return a
    if len(a) != len(b):
        raise _Conflict
    out = []
    for x, y in zip(a, b):
        if x and y and x != y:
            raise _Conflict
        out.append(x or y)
    return tuple(out)


def is_known(s: Shape) -> bool:
    """Whether every dimension of ``s`` is known."""
    return s is not None and all(d > 0 for d in s)


def mx_shape(shape: Sequence[int]) -> str:
    """A shape as mxnet prints a provided one: ``[1,100]`` (unknown dimensions as -1)."""
    return "[" + ",".join(str(int(d) or -1) for d in shape) + "]"


def _tuple_text(shape: Sequence[int]) -> str:
    return "(" + ",".join(str(int(d)) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def _key(node: Symbol) -> Any:
    return ("arg", node._name) if node._op == "null" else id(node)


class _Inference:
    def __init__(self, sym: Symbol, given: dict[str, tuple[int, ...]]) -> None:
        self.topo = sym._topo()
        self.shapes: dict[Any, Shape] = {}
        for node in self.topo:
            if node._op == "null":
                hint = node._attrs.get("shape")
                s = given.get(node._name, hint)
                self.shapes.setdefault(_key(node), None if s is None else tuple(s))
        self.changed = False

    def get(self, node: Symbol) -> Shape:
        return self.shapes.get(_key(node))

    def assign(self, op: Symbol, target: Symbol, shape: Shape, why: str = "") -> None:
        old = self.get(target)
        try:
            new = unify(old, shape)
        except _Conflict:
            assert old is not None and shape is not None
            if target._op == "null":
                raise MXNetError(
                    f"infer_shape: Error in operator {op._name}: Shape inconsistent, Provided = "
                    f"{mx_shape(old)}, inferred shape={_tuple_text(shape)} (argument "
                    f"{target._name!r} of {op._op} {op._name!r}{why})"
                ) from None
            raise MXNetError(
                f"infer_shape: Error in operator {op._name}: Incompatible attr in node "
                f"{op._name}: the shape {mx_shape(old)} of {target._name!r} and the shape "
                f"{mx_shape(shape)} that {op._op} {op._name!r} infers for it differ"
            ) from None
        if new != old:
            self.shapes[_key(target)] = new
            self.changed = True

    def run(self) -> None:
        ops = [n for n in self.topo if n._op not in ("null", "Group")]
        for _ in range(2 * len(ops) + 2):
            self.changed = False
            for node in ops:
                _rule(self, node)
            if not self.changed:
                return


def infer(sym: Symbol, given: dict[str, tuple[int, ...]]) -> tuple[dict[str, Shape], list[Shape]]:
    """The argument shapes (by name) and the output shapes that ``given`` determines."""
    inf = _Inference(sym, given)
    inf.run()
    args = {k[1]: v for k, v in inf.shapes.items() if isinstance(k, tuple)}
    return args, [inf.get(h) for h in sym._heads()]


def _data_like_output(inf: _Inference, node: Symbol, x: Shape, out: Shape) -> Shape:
    """The shape shared by ``node``'s first input ``x`` and its output ``out`` (``x`` where
    they conflict), assigned to both and returned."""
    try:
        s = unify(x, out)
    except _Conflict:
        s = x
    inf.assign(node, node._inputs[0], s)
    inf.assign(node, node, s)
    return s


def _rule(inf: _Inference, node: Symbol) -> None:
    op = node._op
    a = node._attrs
    ins = [inf.get(s) for s in node._inputs]
    out = inf.get(node)
    if op == "FullyConnected":
        _fully_connected(inf, node, ins, out)
    elif op == "SoftmaxOutput":
        x = ins[0]
        if x is None:
            return
        if a["multi_output"]:
            label: tuple[int, ...] = (x[0], *x[2:])
        elif len(x) >= 2:  # mxnet's SoftmaxOutputShape: data's shape without the last axis,
            label = x[:-1]  # with or without preserve_shape
        else:
            label = (x[0],)
        lab = node._inputs[1]
        if inf.get(lab) != x:  # a label of data's own shape holds probabilities
            inf.assign(node, lab, label)
        inf.assign(node, node, x)
    elif op == "dot":
        _dot(inf, node, ins[0], ins[1])
    elif op in _LAYER_RULES:
        _LAYER_RULES[op](inf, node, ins, out)
    elif op in _SAME_SHAPE or op.endswith("Scalar"):
        _data_like_output(inf, node, ins[0], out)
    elif op.startswith("broadcast_"):
        _broadcast(inf, node, ins[0], ins[1])
    elif op in ("sum", "mean"):
        _reduce(inf, node, ins[0])
    else:  # elementwise binary operators
        _elementwise(inf, node, ins[0], ins[1], out)


def _fully_connected(inf: _Inference, node: Symbol, ins: list[Shape], out: Shape) -> None:
    """mxnet's FullyConnectedShape: data must have known axes (all but the batch axis when
    flattened); weight (num_hidden, in), bias (num_hidden,) or (num_hidden, 1); the output's
    batch size flows back into data."""
    a = node._attrs
    x = ins[0]
    if x is None:
        return
    nh = a["num_hidden"]
    if a["flatten"]:
        if not x or any(d == 0 for d in x[1:]):
            raise MXNetError(
                f"infer_shape: Error in operator {node._name}: Shape dim size must be known, "
                f"while received {mx_shape(x)} (FullyConnected {node._name!r} flattens every "
                "axis of data but the first)"
            )
        n_in = int(math.prod(x[1:]))
        res: tuple[int, ...] = (x[0], nh)
    else:
        n_in = x[-1]
        res = (*x[:-1], nh)
    inf.assign(node, node._inputs[1], (nh, n_in))
    if len(node._inputs) > 2:
        b = node._inputs[2]
        bs = inf.get(b)
        if bs is not None and unify_ok(bs, (nh, 1)) and not unify_ok(bs, (nh,)):
            pass  # mxnet accepts a bias of shape (num_hidden, 1)
        elif bs is not None and not unify_ok(bs, (nh,)):
            raise MXNetError(
                f"infer_shape: Error in operator {node._name}: Unexpected shape for bias "
                f"{mx_shape(bs)} (Shape inconsistent, Provided = {mx_shape(bs)}, inferred "
                f"shape={_tuple_text((nh,))}; argument {b._name!r} of FullyConnected "
                f"{node._name!r})"
            )
        else:
            inf.assign(node, b, (nh,))
    inf.assign(node, node, res)
    out = inf.get(node)
    if out is not None and out[0]:
        inf.assign(node, node._inputs[0], (out[0], *x[1:]))


def unify_ok(a: Shape, b: Shape) -> bool:
    """Whether ``a`` and ``b`` can be the same shape."""
    try:
        unify(a, b)
    except _Conflict:
        return False
    return True


def _dot(inf: _Inference, node: Symbol, a: Shape, b: Shape) -> None:
    """mxnet's dot: ``a`` (its first axis moved last with ``transpose_a``) contracted over its
    last axis with the first axis of ``b`` (its last axis moved first with ``transpose_b``);
    1-D with 1-D gives (1,). The contracted
    dimension must be known (mxnet: "Shape dim size cannot be a negative value -1")."""
    if a is None or b is None:
        return
    ta = (*a[1:], a[0]) if node._attrs["transpose_a"] and len(a) > 1 else a
    tb = (b[-1], *b[:-1]) if node._attrs["transpose_b"] and len(b) > 1 else b
    if ta and tb and (ta[-1] == 0 or tb[0] == 0):
        raise MXNetError(
            f"infer_shape: Error in operator {node._name}: dot {node._name!r} with shapes "
            f"{mx_shape(a)} and {mx_shape(b)}: the contracted dimension is unknown (mxnet: Shape "
            "dim size cannot be a negative value -1)"
        )
    if not ta or not tb or ta[-1] != tb[0]:
        raise MXNetError(
            f"infer_shape: Error in operator {node._name}: dot {node._name!r}: shapes "
            f"{mx_shape(a)} and {mx_shape(b)} (transpose_a={node._attrs['transpose_a']}, "
            f"transpose_b={node._attrs['transpose_b']}) do not match: the last axis of lhs "
            f"must equal the first axis of rhs (mxnet: dot shape error: {mx_shape(a)} X "
            f"{mx_shape(b)})"
        )
    inf.assign(node, node, (*ta[:-1], *tb[1:]) or (1,))


def _broadcast(inf: _Inference, node: Symbol, x: Shape, y: Shape) -> None:
    """numpy broadcasting of two shapes; an unknown dimension against a known one other than 1
    stays unknown (mxnet's BinaryBroadcastShapeCompact). Nothing flows back to the operands."""
    if x is None or y is None:
        return
    n = max(len(x), len(y))
    xs, ys = (1,) * (n - len(x)) + x, (1,) * (n - len(y)) + y
    res = []
    for p, q in zip(xs, ys):
        if p == q or q == 1:
            res.append(p)
        elif p == 1:
            res.append(q)
        elif p == 0 or q == 0:
            res.append(0)
        else:
            raise MXNetError(
                f"infer_shape: Error in operator {node._name}: {node._op} {node._name!r}: the "
                f"shapes {x} and {y} do not broadcast (operands could not be broadcast together "
                f"with shapes {mx_shape(x)} {mx_shape(y)})"
            )
    inf.assign(node, node, tuple(res))


def _elementwise(inf: _Inference, node: Symbol, x: Shape, y: Shape, out: Shape) -> None:
    """mxnet's ElemwiseShape: both operands and the output have one shape, merged from all
    three. Two fully known operand shapes that differ but broadcast give the broadcast shape
    (the layer broadcasts, docs/migration-mxnet.md)."""
    if is_known(x) and is_known(y) and x != y:
        assert x is not None and y is not None
        try:
            inf.assign(node, node, tuple(np.broadcast_shapes(x, y)))
            return
        except ValueError:
            raise MXNetError(
                f"infer_shape: Error in operator {node._name}: Incompatible attr in node "
                f"{node._name} at 1-th input: expected {mx_shape(x)}, got {mx_shape(y)}"
            ) from None
    try:
        s = unify(x, y)
    except _Conflict:
        assert x is not None and y is not None
        raise MXNetError(
            f"infer_shape: Error in operator {node._name}: Incompatible attr in node "
            f"{node._name} at 1-th input: expected {mx_shape(x)}, got {mx_shape(y)}"
        ) from None
    try:
        s = unify(s, out)
    except _Conflict:
        return  # the output came from broadcasting known operands
    for target in (*node._inputs, node):
        inf.assign(node, target, s)


def _reduce(inf: _Inference, node: Symbol, x: Shape) -> None:
    """mxnet's ReduceAxesShape: the reduced axes are dropped (kept as 1 with ``keepdims``); no
    axis (None) or ``axis=()`` (mxnet's default) reduces every axis; a full reduction without
    ``keepdims`` has shape (1,); an axis out of range raises."""
    if x is None:
        return
    from .symbol import reduce_axes

    axis, keep = node._attrs["axis"], node._attrs["keepdims"]
    axes = tuple(range(len(x))) if axis is None or axis == () else axis  # (): every axis
    bad = [a for a in axes if not -len(x) <= a < len(x)]
    if bad:
        raise MXNetError(
            f"infer_shape: Error in operator {node._name}: axis {bad[0]} exceeds the input "
            f"dimension of {len(x)} (data shape {_tuple_text(x)})"
        )
    red = set(reduce_axes(node._attrs, len(x)))  # (exclude=True: the other axes)
    if keep:
        out: tuple[int, ...] = tuple(1 if i in red else d for i, d in enumerate(x))
    else:
        out = tuple(d for i, d in enumerate(x) if i not in red) or (1,)
    inf.assign(node, node, out)


def _spatial(node: Symbol, x: tuple[int, ...], what: str) -> int:
    nsp = len(x) - 2
    if nsp < 1:
        raise MXNetError(
            f"infer_shape: Error in operator {node._name}: {what} {node._name!r} needs data with "
            f"a batch, a channel and spatial axes, got {mx_shape(x)}"
        )
    return nsp


def _convolution(inf: _Inference, node: Symbol, ins: list[Shape], out: Shape) -> None:
    """mxnet's ConvolutionShape: weight ``(num_filter, C / num_group, *kernel)``, bias
    ``(num_filter,)``, output ``(N, num_filter, *spatial)`` with each spatial size
    ``(L + 2 pad - dilate (k - 1) - 1) // stride + 1`` (unknown where L is)."""
    a = node._attrs
    x = ins[0]
    if x is None:
        return
    k, st, dl, pd = a["kernel"], a["stride"], a["dilate"], a["pad"]
    if len(x) != len(k) + 2:
        raise MXNetError(
            f"infer_shape: Error in operator {node._name}: Convolution {node._name!r} with a "
            f"{len(k)}-D kernel {_tuple_text(k)} needs {len(k) + 2}-D data, got {mx_shape(x)}"
        )
    nf, g = a["num_filter"], a["num_group"]
    c = x[1]
    if c and c % g:
        raise MXNetError(
            f"infer_shape: Error in operator {node._name}: input channels {c} must be a "
            f"multiple of num_group={g}"
        )
    if c:
        inf.assign(node, node._inputs[1], (nf, c // g, *k))
    if len(node._inputs) > 2:
        inf.assign(node, node._inputs[2], (nf,))
    sp = []
    for L, kk, s, d, p in zip(x[2:], k, st, dl, pd):
        if not L:
            sp.append(0)
            continue
        span = d * (kk - 1) + 1
        if L + 2 * p < span:
            raise MXNetError(
                f"infer_shape: Error in operator {node._name}: kernel size {_tuple_text(k)} "
                f"(dilate {_tuple_text(dl)}) exceeds the padded input {mx_shape(x)} (pad "
                f"{_tuple_text(pd)})"
            )
        sp.append((L + 2 * p - span) // s + 1)
    inf.assign(node, node, (x[0], nf, *sp))


def _pooling(inf: _Inference, node: Symbol, ins: list[Shape], out: Shape) -> None:
    """mxnet's PoolingShape: ``(N, C, *spatial)``, each spatial size ``(L + 2 pad - k) //
    stride + 1`` (``"valid"``) or rounded up (``"full"``); 1 with ``global_pool``."""
    a = node._attrs
    x = ins[0]
    if x is None:
        return
    nsp = _spatial(node, x, "Pooling")
    if a["global_pool"]:
        inf.assign(node, node, (*x[:2], *(1 if L else 0 for L in x[2:])))
        return
    k = a["kernel"]
    st, pd = a["stride"] or (1,) * nsp, a["pad"] or (0,) * nsp
    if not len(k) == len(st) == len(pd) == nsp:
        raise MXNetError(
            f"infer_shape: Error in operator {node._name}: Pooling {node._name!r}: kernel "
            f"{_tuple_text(k)}, stride {_tuple_text(st)} and pad {_tuple_text(pd)} need one "
            f"value per spatial axis of data {mx_shape(x)}"
        )
    sp = []
    for L, kk, s, p in zip(x[2:], k, st, pd):
        if not L:
            sp.append(0)
            continue
        if L + 2 * p < kk:
            raise MXNetError(
                f"infer_shape: Error in operator {node._name}: kernel size {_tuple_text(k)} "
                f"exceeds the padded input {mx_shape(x)} (pad {_tuple_text(pd)})"
            )
        if a["pooling_convention"] == "full":
            sp.append(-(-(L + 2 * p - kk) // s) + 1)
        else:
            sp.append((L + 2 * p - kk) // s + 1)
    inf.assign(node, node, (*x[:2], *sp))


def _flatten(inf: _Inference, node: Symbol, ins: list[Shape], out: Shape) -> None:
    """mxnet's FlattenShape: ``(d0, d1 * d2 * ...)``, known only when every axis is."""
    x = ins[0]
    if x is None or not x:
        return
    if all(x):
        inf.assign(node, node, (x[0], int(math.prod(x[1:]))))


def _batch_norm(inf: _Inference, node: Symbol, ins: list[Shape], out: Shape) -> None:
    """mxnet's BatchNormShape: the output has data's shape (both ways); gamma, beta and the
    moving statistics ``(C,)`` with ``C = data.shape[axis]``; the outputs ``mean`` and ``var``
    of ``output_mean_var`` are ``(C,)`` too."""
    mean_var = node._attrs.get("index", 0) > 0
    if mean_var:
        s = ins[0]
    else:
        s = _data_like_output(inf, node, ins[0], out)
    if s is None:
        return
    ax = node._attrs["axis"]
    if not -len(s) <= ax < len(s):
        raise MXNetError(
            f"infer_shape: Error in operator {node._name}: axis {ax} is out of range for data "
            f"{mx_shape(s)}"
        )
    c = s[ax % len(s)]
    if c:
        for target in node._inputs[1:]:
            inf.assign(node, target, (c,))
        if mean_var:
            inf.assign(node, node, (c,))


def _reshape(inf: _Inference, node: Symbol, ins: list[Shape], out: Shape) -> None:
    """mxnet's ReshapeShape with mxnet's codes (the rules of ``NDArray.reshape``), from a known
    data shape."""
    from .ndarray import _mx_reshape

    x = ins[0]
    if not is_known(x):
        return
    assert x is not None
    try:
        target = _mx_reshape(x, node._attrs["shape"], node._attrs["reverse"])
    except ValueError as e:
        raise MXNetError(f"infer_shape: Error in operator {node._name}: {e}") from None
    inf.assign(node, node, target)


def _concat(inf: _Inference, node: Symbol, ins: list[Shape], out: Shape) -> None:
    """mxnet's ConcatShape: the dimensions other than ``dim`` agree among the inputs and the
    output; the output's ``dim`` is the sum of the inputs' (unknown while one is), and an
    input's unknown ``dim`` follows from the output and the other inputs."""
    known = [s for s in (*ins, out) if s is not None]
    if not known:
        return
    n = len(known[0])
    d = node._attrs["dim"]
    if not -n <= d < n:
        raise MXNetError(
            f"infer_shape: Error in operator {node._name}: dim {d} is out of range for inputs "
            f"of {n} axes"
        )
    d %= n
    other: tuple[int, ...] = (0,) * n
    for s in known:
        try:
            other = unify(other, (*s[:d], 0, *s[d + 1 :]))  # type: ignore[assignment]
        except _Conflict:
            raise MXNetError(
                f"infer_shape: Error in operator {node._name}: Incompatible input shape: the "
                f"shapes {[mx_shape(s) for s in known]} differ outside dim {d}"
            ) from None
    sizes = [None if s is None else s[d] for s in ins]
    total = out[d] if out is not None else 0
    missing = [i for i, z in enumerate(sizes) if not z]
    if len(missing) == 1 and total:
        sizes[missing[0]] = total - sum(z or 0 for z in sizes)
    for target, z in zip(node._inputs, sizes):
        inf.assign(node, target, (*other[:d], z or 0, *other[d + 1 :]))
    if all(sizes):
        total = sum(z or 0 for z in sizes)
    inf.assign(node, node, (*other[:d], total, *other[d + 1 :]))


def _embedding(inf: _Inference, node: Symbol, ins: list[Shape], out: Shape) -> None:
    """mxnet's EmbeddingOpShape: weight ``(input_dim, output_dim)``, output ``data.shape +
    (output_dim,)``."""
    a = node._attrs
    inf.assign(node, node._inputs[1], (a["input_dim"], a["output_dim"]))
    if ins[0] is not None:
        inf.assign(node, node, (*ins[0], a["output_dim"]))


def _leaky_relu(inf: _Inference, node: Symbol, ins: list[Shape], out: Shape) -> None:
    """The output has data's shape (both ways); prelu's gamma ``(data.shape[1],)``."""
    s = _data_like_output(inf, node, ins[0], out)
    if len(node._inputs) > 1 and s is not None and len(s) >= 2 and s[1]:
        inf.assign(node, node._inputs[1], (s[1],))


def _transpose(inf: _Inference, node: Symbol, ins: list[Shape], out: Shape) -> None:
    x = ins[0]
    if x is None:
        return
    axes = node._attrs["axes"] or tuple(range(len(x) - 1, -1, -1))
    if sorted(axes) != list(range(len(x))):
        raise MXNetError(
            f"infer_shape: Error in operator {node._name}: axes {_tuple_text(axes)} must be a "
            f"permutation of the {len(x)} axes of data {mx_shape(x)}"
        )
    inf.assign(node, node, tuple(x[a] for a in axes))


def _expand_dims(inf: _Inference, node: Symbol, ins: list[Shape], out: Shape) -> None:
    x = ins[0]
    if x is None:
        return
    ax = node._attrs["axis"]
    if not -len(x) - 1 <= ax <= len(x):
        raise MXNetError(
            f"infer_shape: Error in operator {node._name}: axis must be in the range "
            f"[{-len(x) - 1}, {len(x)}] ({ax} provided)"
        )
    ax %= len(x) + 1
    inf.assign(node, node, (*x[:ax], 1, *x[ax:]))


def _regression(inf: _Inference, node: Symbol, ins: list[Shape], out: Shape) -> None:
    """mxnet's RegressionOpShape: the label has data's shape, or ``(batch,)`` for data of
    shape ``(batch, 1)``; the output has data's shape."""
    s = _data_like_output(inf, node, ins[0], out)
    if s is None:
        return
    lab = ins[1]
    if lab is None:
        inf.assign(node, node._inputs[1], (s[0],) if len(s) == 2 and s[1] == 1 else s)
    elif is_known(lab) and is_known(s) and (lab[0] != s[0] or math.prod(lab) != math.prod(s)):
        raise MXNetError(
            f"infer_shape: Error in operator {node._name}: Shape inconsistent, Provided = "
            f"{mx_shape(lab)}, inferred shape={_tuple_text(s)} (the label of {node._op} "
            f"{node._name!r})"
        )


def _slice_channel(inf: _Inference, node: Symbol, ins: list[Shape], out: Shape) -> None:
    """mxnet's SliceChannelShape: each output has data's shape with ``axis`` divided by
    ``num_outputs`` (which must divide it; dropped with ``squeeze_axis``); an output's shape
    gives data's."""
    a = node._attrs
    n, sq = a["num_outputs"], a["squeeze_axis"]
    x = ins[0]
    if x is None and out is not None:
        ax = a["axis"] % (len(out) + int(sq))
        part = (*out[:ax], 1, *out[ax:]) if sq else out
        inf.assign(node, node._inputs[0], (*part[:ax], part[ax] * n, *part[ax + 1 :]))
        return
    if x is None:
        return
    if not -len(x) <= a["axis"] < len(x):
        raise MXNetError(
            f"infer_shape: Error in operator {node._name}: axis {a['axis']} is out of range for "
            f"data {mx_shape(x)}"
        )
    ax = a["axis"] % len(x)
    size = x[ax]
    if size and size % n:
        raise MXNetError(
            f"infer_shape: Error in operator {node._name}: Check failed: dshape[real_axis] % "
            f"param_.num_outputs == 0U ({size} along axis {ax} into {n} outputs)"
        )
    if sq and size and size != n:
        raise MXNetError(
            f"infer_shape: Error in operator {node._name}: squeeze_axis=True needs parts of size "
            f"1 along axis {ax}, got {size // n}"
        )
    if sq:
        inf.assign(node, node, (*x[:ax], *x[ax + 1 :]))
    else:
        inf.assign(node, node, (*x[:ax], size // n, *x[ax + 1 :]))


def _reshape_like(inf: _Inference, node: Symbol, ins: list[Shape], out: Shape) -> None:
    """mxnet's ReshapeLikeShape: the output has ``rhs``'s shape, ``lhs`` as many elements."""
    x, y = ins
    if y is None:
        return
    if x is not None and is_known(x) and is_known(y) and math.prod(x) != math.prod(y):
        raise MXNetError(
            f"infer_shape: Error in operator {node._name}: reshape_like: lhs {mx_shape(x)} and "
            f"rhs {mx_shape(y)} have different sizes"
        )
    inf.assign(node, node, y)


def _pick(inf: _Inference, node: Symbol, ins: list[Shape], out: Shape) -> None:
    """mxnet's PickOpShape: the index and the output have data's shape without ``axis`` (kept
    as 1 with ``keepdims``)."""
    x = ins[0]
    if x is None:
        return
    ax = node._attrs["axis"]
    if not -len(x) <= ax < len(x):
        raise MXNetError(
            f"infer_shape: Error in operator {node._name}: axis {ax} is out of range for data "
            f"{mx_shape(x)}"
        )
    ax %= len(x)
    rest = (*x[:ax], *x[ax + 1 :])
    inf.assign(node, node._inputs[1], rest or (1,))
    inf.assign(node, node, (*x[:ax], 1, *x[ax + 1 :]) if node._attrs["keepdims"] else rest or (1,))


def _where(inf: _Inference, node: Symbol, ins: list[Shape], out: Shape) -> None:
    """mxnet's WhereOpShape: ``x``, ``y`` and the output share one shape; the condition has it
    too unless it is 1-D (rows of the first axis)."""
    c, x, y = ins
    try:
        s = unify(unify(x, y), out)
    except _Conflict:
        raise MXNetError(
            f"infer_shape: Error in operator {node._name}: where: x {mx_shape(x or ())}, y "
            f"{mx_shape(y or ())} and the output must have one shape"
        ) from None
    for target in (node._inputs[1], node._inputs[2], node):
        inf.assign(node, target, s)
    if s is not None and c is not None and len(c) != 1:
        inf.assign(node, node._inputs[0], s)


def _swapaxes(inf: _Inference, node: Symbol, ins: list[Shape], out: Shape) -> None:
    x = ins[0]
    if x is None:
        return
    d1, d2 = node._attrs["dim1"], node._attrs["dim2"]
    if not (-len(x) <= d1 < len(x) and -len(x) <= d2 < len(x)):
        raise MXNetError(
            f"infer_shape: Error in operator {node._name}: dim1={d1}, dim2={d2} out of range for "
            f"data {mx_shape(x)}"
        )
    s = list(x)
    s[d1 % len(x)], s[d2 % len(x)] = x[d2 % len(x)], x[d1 % len(x)]
    inf.assign(node, node, tuple(s))


def _deconvolution(inf: _Inference, node: Symbol, ins: list[Shape], out: Shape) -> None:
    """mxnet's DeconvolutionShape (the rules of ``mx.nd.Deconvolution``): the weight ``(C,
    num_filter / num_group, *kernel)``, the bias ``(num_filter,)``, the output ``(N,
    num_filter, (L - 1) stride - 2 pad + dilate (k - 1) + 1 + adj...)``."""
    from ._nd_layers import deconv_attrs, deconv_out_shape

    a = node._attrs
    x = ins[0]
    if x is None:
        return
    k, nf = a["kernel"], a["num_filter"]
    if len(x) != len(k) + 2:
        raise MXNetError(
            f"infer_shape: Error in operator {node._name}: data {mx_shape(x)} does not fit the "
            f"{len(k)}-D kernel {_tuple_text(k)}"
        )
    if x[1]:
        inf.assign(node, node._inputs[1], (x[1], nf // a["num_group"], *k))
    if len(node._inputs) > 2:
        inf.assign(node, node._inputs[2], (nf,))
    if not all(x):
        return
    try:
        attrs = deconv_attrs(
            f"infer_shape: Error in operator {node._name}: Deconvolution",
            x,
            k,
            a["stride"],
            a["dilate"],
            a["pad"],
            a["adj"],
            a["target_shape"],
            nf,
            a["num_group"],
        )
    except MXNetError:
        raise
    inf.assign(node, node, deconv_out_shape(x, k, nf, attrs))


def _ctc_loss(inf: _Inference, node: Symbol, ins: list[Shape], out: Shape) -> None:
    """mxnet's CTCLossOpShape: data ``(T, N, C)``, a 2-D label ``(N, L)``, lengths ``(N,)``;
    the output ``(N,)``."""
    x, lab = ins[0], ins[1]
    if x is None:
        return
    if len(x) != 3:
        raise MXNetError(
            f"infer_shape: Error in operator {node._name}: The number of dimensions of data "
            f"array must be 3 (sequence_length, batch, alphabet_size), got {mx_shape(x)}"
        )
    if lab is not None and len(lab) != 2:
        raise MXNetError(
            f"infer_shape: Error in operator {node._name}: The number of dimensions of labels "
            f"array must be 2, got {mx_shape(lab)}"
        )
    if lab is not None:
        inf.assign(node, node._inputs[1], (x[1], lab[1]))
    for length in node._inputs[2:]:
        inf.assign(node, length, (x[1],))
    inf.assign(node, node, (x[1],))


_LAYER_RULES = {
    "Deconvolution": _deconvolution,
    "CTCLoss": _ctc_loss,
    "reshape_like": _reshape_like,
    "pick": _pick,
    "where": _where,
    "SwapAxis": _swapaxes,
    "SliceChannel": _slice_channel,
    "Convolution": _convolution,
    "Pooling": _pooling,
    "Flatten": _flatten,
    "BatchNorm": _batch_norm,
    "Reshape": _reshape,
    "Concat": _concat,
    "Embedding": _embedding,
    "LeakyReLU": _leaky_relu,
    "transpose": _transpose,
    "expand_dims": _expand_dims,
    "LinearRegressionOutput": _regression,
    "LogisticRegressionOutput": _regression,
    "MAERegressionOutput": _regression,
    **_sym_norm.SHAPE_RULES,
    **_sym_ops_more.SHAPE_RULES,
}
