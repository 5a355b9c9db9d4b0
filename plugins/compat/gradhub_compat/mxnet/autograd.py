"""mxnet's imperative autograd (``mx.autograd``) over NDArrays, recorded as native gradhub graphs.

Inside ``with mx.autograd.record():`` every operation on an NDArray that belongs to a graph (a
variable marked with :meth:`~.ndarray.NDArray.attach_grad` or :func:`mark_variables`, or a result
recorded from one) runs the registered gradhub function on native Variables, so the result
carries its node of the native graph. :func:`backward` and :func:`grad` run the native engine
(:func:`gradhub.grad`) from the heads to the marked variables; ``backward`` writes
(``grad_req="write"``) or adds (``"add"``) the gradients into the variables' gradient arrays,
``grad`` returns them (differentiable with ``create_graph=True``).

.. math:: \\bar{x} = \\sum_j \\left(\\frac{\\partial y_j}{\\partial x}\\right)^T \\bar{y}_j

where ``y_j`` are the heads and ``\\bar{y}_j`` their head gradients (ones when not given).

Example::

    >>> import gradhub_compat.mxnet as mx
    >>> x = mx.nd.array([1.0, 2.0, 3.0])
    >>> x.attach_grad()
    >>> with mx.autograd.record():
    ...     y = x * x * 2 + 1
    >>> y.backward()
    >>> x.grad.asnumpy()
    array([ 4.,  8., 12.], dtype=float32)
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from gradhub.engine import grad as _native_grad
from gradhub.errors import BackwardRuleError
from gradhub.graph import apply
from gradhub.modes import set_recording as _native_recording
from gradhub.registry import FunctionDef, Provider, Rule
from gradhub.variable import Variable as NativeVariable

from .._common import call_native as _call
from . import _autograd_mode as _ag
from .base import MXNetError
from .ndarray import NDArray, _mark, refuse_traced

__all__ = [
    "Function",
    "backward",
    "get_symbol",
    "grad",
    "is_recording",
    "is_training",
    "mark_variables",
    "pause",
    "predict_mode",
    "record",
    "set_recording",
    "set_training",
    "train_mode",
]

_NOT_IN_GRAPH = (
    "Cannot differentiate node because it is not in a computational graph. You need to set "
    "is_recording to true or use autograd.record() to save computational graphs for backward. If "
    "you want to differentiate the same graph twice, you need to pass retain_graph=True to "
    "backward."
)


def is_recording() -> bool:
    """Whether NDArray operations are recorded (inside :func:`record`)."""
    return _ag.state.recording


def is_training() -> bool:
    """Whether the training mode is on (:func:`record`, :func:`train_mode`)."""
    return _ag.state.training


def set_recording(is_recording: bool) -> bool:
    """Switch recording on or off; returns the previous state."""
    prev = _ag.state.recording
    _ag.state.recording = bool(is_recording)
    return prev


def set_training(train_mode: bool) -> bool:
    """Switch the training mode on or off; returns the previous state."""
    prev = _ag.state.training
    _ag.state.training = bool(train_mode)
    return prev


@contextmanager
def _scope(recording: bool | None, training: bool | None) -> Iterator[None]:
    prev = (_ag.state.recording, _ag.state.training)
    if recording is not None:
        _ag.state.recording = recording
    if training is not None:
        _ag.state.training = training
    try:
        yield
    finally:
        _ag.state.recording, _ag.state.training = prev


def record(train_mode: bool = True) -> Any:
    """A ``with`` block in which NDArray operations are recorded for :func:`backward`
    (training mode on unless ``train_mode=False``)."""
    return _scope(True, bool(train_mode))


def pause(train_mode: bool = False) -> Any:
    """A ``with`` block inside :func:`record` in which nothing is recorded."""
    return _scope(False, bool(train_mode))


def train_mode() -> Any:
    """A ``with`` block with the training mode on (recording unchanged)."""
    return _scope(None, True)


def predict_mode() -> Any:
    """A ``with`` block with the training mode off (recording unchanged)."""
    return _scope(None, False)


def _arrays(x: Any, what: str) -> list[NDArray]:
    items = [x] if isinstance(x, NDArray) else x
    if not isinstance(items, (list, tuple)) or not all(isinstance(a, NDArray) for a in items):
        raise TypeError(f"mx.autograd.{what}: expected an NDArray or a list of NDArrays")
    return list(items)


def mark_variables(variables: Any, gradients: Any, grad_reqs: Any = "write") -> None:
    """Mark NDArrays as variables with the given gradient arrays and ``grad_reqs`` (one string,
    or one per variable: ``"write"``, ``"add"`` or ``"null"``), as ``attach_grad`` does.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> a, ga = mx.nd.array([1.0, 2.0]), mx.nd.zeros((2,))
        >>> mx.autograd.mark_variables([a], [ga])
        >>> with mx.autograd.record():
        ...     c = a * 3
        >>> c.backward()
        >>> ga.asnumpy()
        array([3., 3.], dtype=float32)
    """
    vs = _arrays(variables, "mark_variables: variables")
    gs = _arrays(gradients, "mark_variables: gradients")
    if len(vs) != len(gs):
        raise MXNetError(f"mx.autograd.mark_variables: {len(vs)} variables but {len(gs)} gradients")
    reqs = [grad_reqs] * len(vs) if isinstance(grad_reqs, str) else list(grad_reqs)
    if len(reqs) != len(vs):
        raise MXNetError(
            f"mx.autograd.mark_variables: {len(vs)} variables but {len(reqs)} grad_reqs"
        )
    for v, g, r in zip(vs, gs, reqs):
        if g.shape != v.shape:
            raise MXNetError(
                f"mx.autograd.mark_variables: the gradient array of shape {g.shape} does not "
                f"match its variable of shape {v.shape}"
            )
        _mark(v, g, _ag.check_grad_req(r, "mx.autograd.mark_variables"))


def _leaves(heads: Sequence[NativeVariable]) -> list[NativeVariable]:
    """The marked leaves (needing a gradient) the heads depend on, in a fixed order."""
    found: list[NativeVariable] = []
    seen: set[int] = set()
    stack: list[Any] = list(heads)
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, NativeVariable):
            node = item.creator
            if node is None:
                if item.need_grad and item in _ag.MARKED:
                    found.append(item)
                continue
            item = node
            if id(item) in seen:
                continue
            seen.add(id(item))
        stack.extend(item.srcs)
    return found


def _on_backward(heads: Sequence[NativeVariable]) -> list[Any]:
    """The recorded nodes the heads depend on that have a function to run at backward
    (``_ag.ON_BACKWARD``: BatchNorm's moving statistics updates), the latest first."""
    if not _ag.ON_BACKWARD:
        return []
    found: list[Any] = []
    seen: set[int] = set()
    stack: list[Any] = [h.creator for h in heads if h.creator is not None]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if node in _ag.ON_BACKWARD:
            found.append(node)
        for src in node.srcs:
            creator = src.creator if isinstance(src, NativeVariable) else src
            if creator is not None:
                stack.append(creator)
    return sorted(found, key=lambda n: n.seq, reverse=True)


def _run(
    heads: Any,
    head_grads: Any,
    variables: list[NativeVariable] | None,
    retain_graph: bool,
    create_graph: bool,
    what: str,
) -> tuple[list[NDArray], list[NativeVariable], list[Any]]:
    hs = _arrays(heads, f"{what}: heads")
    if head_grads is None or isinstance(head_grads, NDArray):
        hgs = [head_grads] * len(hs) if head_grads is None else [head_grads]
    else:
        hgs = list(head_grads)
    if len(hgs) != len(hs):
        raise MXNetError(
            f"mx.autograd.{what}: heads and head_grads must be lists of the same length "
            f"({len(hs)} and {len(hgs)})"
        )
    outs: list[NativeVariable] = []
    seeds: list[Any] = []
    for i, (h, g) in enumerate(zip(hs, hgs)):
        if h._var is None:
            raise MXNetError(f"mx.autograd.{what}: head {i}: {_NOT_IN_GRAPH}")
        if not h._var.need_grad:
            raise MXNetError(
                f"mx.autograd.{what}: head {i}: There are no inputs in computation graph that "
                "require gradients."
            )
        if g is not None:
            if not isinstance(g, NDArray):
                raise TypeError(
                    f"mx.autograd.{what}: head_grads[{i}] must be an NDArray or None, got "
                    f"{type(g).__name__}"
                )
            if g.shape != h.shape:
                raise MXNetError(
                    f"mx.autograd.{what}: head_grads[{i}] has shape {g.shape} but the head has "
                    f"shape {h.shape}"
                )
            seed: Any = g._var if create_graph and g._var is not None else g._arr
            seeds.append(seed if isinstance(seed, NativeVariable) else seed.astype(h._arr.dtype))
        else:
            seeds.append(None)
        outs.append(h._var)
    xs = _leaves(outs) if variables is None else variables
    hooks = _on_backward(outs)
    if not xs:
        raise MXNetError(
            f"mx.autograd.{what}: There are no inputs in computation graph that require gradients."
        )
    try:
        grads = _native_grad(
            outs,
            xs,
            seeds,
            create_graph=create_graph,
            # a gradient's graph may share forward nodes (``_ag.HIGHER``): those stay
            retain_graph=retain_graph or any(o in _ag.HIGHER for o in outs),
            unreachable="zero",
        )
    except BackwardRuleError as e:
        if "freed" not in str(e) and "retain_graph" not in str(e):
            raise
        raise MXNetError(f"mx.autograd.{what}: {_NOT_IN_GRAPH} ({e})") from None
    for node in hooks:  # latest first, as mxnet's backward runs them (again while retained)
        (_ag.ON_BACKWARD[node] if retain_graph else _ag.ON_BACKWARD.pop(node))()
    if not retain_graph:
        for h in hs:  # as mxnet: the graph of the heads is gone
            h._var = None
    return hs, xs, grads


def backward(
    heads: Any, head_grads: Any = None, retain_graph: bool = False, train_mode: bool = True
) -> None:
    """Compute the gradients of ``heads`` with respect to every marked variable they depend on
    and write (``grad_req="write"``) or add (``"add"``) them into the variables' gradient
    arrays. ``head_grads`` (one per head, None: ones) seed the heads. Without
    ``retain_graph`` the graph is freed: a second backward through it raises
    :class:`~.base.MXNetError`, as mxnet.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> x = mx.nd.array([1.0, 2.0])
        >>> x.attach_grad()
        >>> with mx.autograd.record():
        ...     y, z = x * 2, x * x
        >>> mx.autograd.backward([y, z], [None, mx.nd.array([1.0, 10.0])])
        >>> x.grad.asnumpy()
        array([ 4., 42.], dtype=float32)
    """
    refuse_traced(
        "autograd.backward() (or NDArray.backward())",
        "later calls would not write their gradients into the .grad arrays (attach_grad)",
    )
    _, xs, grads = _run(heads, head_grads, None, bool(retain_graph), False, "backward")
    for x, g in zip(xs, grads):
        buf, req = _ag.MARKED[x]
        if req == "null":
            continue
        _ag.FRESH.add(x)
        arr = buf._ctx.device().xp.zeros_like(buf._arr) if g is None else g._data
        if req == "add":
            buf._arr += arr
        else:
            buf._arr[...] = arr


def fresh_grad(array: NDArray) -> bool:
    """Whether ``backward`` wrote the gradient array of the marked NDArray ``array`` since it
    was marked or since :func:`set_fresh_grad` cleared the flag (mxnet's
    ``NDArray._fresh_grad``, which ``gluon.Trainer`` reads to find stale gradients).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> w = mx.nd.ones((2,))
        >>> w.attach_grad()
        >>> mx.autograd.fresh_grad(w)
        False
        >>> with mx.autograd.record():
        ...     y = (w * 3).sum()
        >>> y.backward()
        >>> mx.autograd.fresh_grad(w)
        True
    """
    return array._var is not None and array._var in _ag.FRESH


def set_fresh_grad(array: NDArray, fresh: bool) -> None:
    """Set or clear :func:`fresh_grad`'s flag of the marked NDArray ``array``."""
    if array._var is None:
        return
    if fresh:
        _ag.FRESH.add(array._var)
    else:
        _ag.FRESH.discard(array._var)


def grad(
    heads: Any,
    variables: Any,
    head_grads: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    train_mode: bool = True,
) -> list[NDArray]:
    """The gradients of ``heads`` with respect to ``variables`` (marked NDArrays), returned as a
    list of new NDArrays; the variables' gradient arrays are left alone. With
    ``create_graph=True`` the results are recorded and can be differentiated again (higher
    order); ``retain_graph`` defaults to ``create_graph``.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> x = mx.nd.array([1.0, 2.0])
        >>> x.attach_grad()
        >>> with mx.autograd.record():
        ...     y = mx.nd.sin(x)
        ...     dx = mx.autograd.grad(y, [x], create_graph=True)[0]
        >>> dx.backward()
        >>> x.grad.asnumpy().round(4)  # d/dx cos(x) = -sin(x)
        array([-0.8415, -0.9093], dtype=float32)
    """
    refuse_traced(
        "autograd.grad()",
        "the NDArrays it returns would hold this call's gradients at every later call",
    )
    vs = _arrays(variables, "grad: variables")
    xs: list[NativeVariable] = []
    for i, v in enumerate(vs):
        if v._var is None or v._var.creator is not None or v._var not in _ag.MARKED:
            raise MXNetError(
                f"mx.autograd.grad: Cannot differentiate with respect to the {i + 1}-th variable "
                "because it does not require gradient (call attach_grad or mark_variables first)"
            )
        xs.append(v._var)
    keep = create_graph if retain_graph is None else bool(retain_graph)
    hs, _, grads = _run(heads, head_grads, xs, keep, bool(create_graph), "grad")
    out: list[NDArray] = []
    for v, x, g in zip(vs, xs, grads):
        if g is None:
            out.append(NDArray(v._ctx.device().xp.zeros_like(v._arr), v._ctx))
            continue
        if create_graph and not g.need_grad and _reads_input_only(hs, x):
            g = _zero_link(g, x)
        if create_graph:
            _ag.HIGHER.add(g)
        out.append(NDArray(g._data, v._ctx, g if create_graph else None))
    return out


# Forward operators whose mxnet 1.9.1 backward operator registers a gradient (FGradient) that is
# zero with respect to the forward input it reads: ``_backward_relu``, ``_backward_abs``,
# ``_backward_clip``, ``_backward_Dropout``, ``_backward_radians`` (f'' = 0; clip, Dropout and
# radians are recognised through ``_ag.MX_OPS``), and ``_plus_scalar``/``_minus_scalar`` whose
# backward ``_copy`` is differentiable.
_ZERO_SECOND_ORDER = frozenset({"ReLU", "Abs", "clip", "Dropout", "radians"})
_PASS_SECOND_ORDER = frozenset({"AddScalar"})


def _reads_input_only(heads: Sequence[NDArray], x: NativeVariable) -> bool:
    """Whether mxnet's backward graph of ``heads`` with respect to ``x`` reads ``x`` only through
    ``_backward_relu``/``_backward_abs``, with differentiable backward operators everywhere on
    the way: then mxnet's second-order gradient is zeros (``relu(x)``, ``abs(x) + 1``,
    ``relu(relu(x))``). Any other operator between the heads and ``x`` (``x * 2``: mxnet raises
    that no input requires gradients; ``relu(x) * 3``: ``_backward_mul_scalar`` is
    non-differentiable) leaves the gradient unconnected, so a further backward raises."""
    reaching: dict[int, bool] = {}  # node id -> a path from it reaches x
    names: set[str] = set()

    def reaches(item: Any) -> bool:  # a Variable, or a node (a node's sources are either)
        if item is x:
            return True
        node = item.creator if isinstance(item, NativeVariable) else item
        if node is None:
            return False
        key = id(node)
        if key not in reaching:
            reaching[key] = False  # (a DAG: no cycles; memoized)
            hit = False
            for src in node.srcs:
                if reaches(src):
                    hit = True
            reaching[key] = hit
            if hit:
                names.add(_ag.MX_OPS.get(node) or str(node.fdef.name))
        return reaching[key]

    found = False
    for h in heads:
        if h._var is not None and reaches(h._var):
            found = True
    return (
        found
        and bool(names & _ZERO_SECOND_ORDER)
        and names <= _ZERO_SECOND_ORDER | _PASS_SECOND_ORDER
    )


def _zero_link(g: NativeVariable, x: NativeVariable) -> NativeVariable:
    """``g`` itself, recorded as a function of ``x`` whose gradient with respect to ``x`` is
    exactly zero (``where(True, g, x)``)."""
    with x.device.activate():
        cond = NativeVariable.leaf(x.device.xp.ones(x.shape, dtype=bool), False)
    with _native_recording(True):
        return _call("Where", cond, g, x)  # type: ignore[no-any-return]


_PROVIDER = Provider("gradhub-compat", "", "gradhub_compat.mxnet.autograd")


class Function:
    """mxnet's user-defined differentiable function: subclass it with ``forward(*inputs)`` and
    ``backward(*output_grads)`` written on NDArrays, then call an instance on NDArrays (once per
    instance, as mxnet). ``forward`` runs without recording; while ``mx.autograd`` records, the
    call is one node of the graph whose gradient is ``backward`` (given one gradient per output,
    it returns one NDArray per input); ``save_for_backward(*arrays)`` keeps arrays in
    ``saved_tensors``. Its gradient is first order: ``autograd.grad(..., create_graph=True)``
    through it raises.

    Example (mxnet's documentation)::

        >>> import gradhub_compat.mxnet as mx
        >>> class Sigmoid(mx.autograd.Function):
        ...     def forward(self, x):
        ...         y = 1 / (1 + mx.nd.exp(-x))
        ...         self.save_for_backward(y)
        ...         return y
        ...     def backward(self, dy):
        ...         y, = self.saved_tensors
        ...         return dy * y * (1 - y)
        >>> x = mx.nd.array([0.0, 2.0])
        >>> x.attach_grad()
        >>> with mx.autograd.record():
        ...     y = Sigmoid()(x)
        >>> y.backward()
        >>> x.grad.asnumpy().round(4)
        array([0.25 , 0.105], dtype=float32)
    """

    def __init__(self) -> None:
        self._used = False
        self.saved_tensors: tuple[Any, ...] = ()

    def save_for_backward(self, *args: Any) -> None:
        """Keep ``args`` for ``backward`` in ``self.saved_tensors``."""
        self.saved_tensors = args

    def forward(self, *inputs: Any) -> Any:
        """The outputs (an NDArray or a tuple of them) of the inputs; implement it."""
        raise NotImplementedError(
            f"{type(self).__name__}.forward: implement it (mx.autograd.Function)"
        )

    def backward(self, *output_grads: Any) -> Any:
        """One gradient NDArray per input of ``forward`` from one per output; implement it."""
        raise NotImplementedError(
            f"{type(self).__name__}.backward: implement it (mx.autograd.Function)"
        )

    def __call__(self, *inputs: Any) -> Any:
        if self._used:
            raise AssertionError(
                "Each Function instance can only be called once. Please create another instance."
            )
        self._used = True
        for k, v in enumerate(inputs):
            if not isinstance(v, NDArray):
                raise TypeError(
                    f"mx.autograd.Function {type(self).__name__}: input {k} must be an NDArray, "
                    f"got {type(v).__name__}"
                )
        prev = set_recording(False)
        try:
            outputs = self.forward(*inputs)
        finally:
            set_recording(prev)
        if not prev or not any(a._var is not None for a in inputs):
            return outputs
        outs = (outputs,) if isinstance(outputs, NDArray) else tuple(outputs)
        for k, o in enumerate(outs):
            if not isinstance(o, NDArray):
                raise TypeError(
                    f"mx.autograd.Function {type(self).__name__}.forward must return NDArrays, "
                    f"output {k} is {type(o).__name__}"
                )
        n_in = len(inputs)
        ctx = inputs[0].context

        def run_forward(xp: Any, *arrays: Any) -> Any:
            res = tuple(xp.asarray(o._arr) for o in outs)
            return res[0] if len(res) == 1 else res

        def run_backward(
            gy: Sequence[Any], ins: Any, in_shapes: Any, outs_: Any, out_shapes: Any
        ) -> list[Any]:
            grads = [
                NDArray(g._data, ctx) if g is not None else NDArray(o._arr * 0, ctx)
                for g, o in zip(gy, outs)
            ]
            was = set_recording(False)
            try:
                rets = self.backward(*grads)
            finally:
                set_recording(was)
            rets = (rets,) if isinstance(rets, NDArray) else tuple(rets)
            if len(rets) != n_in:
                raise MXNetError(
                    f"{type(self).__name__}.backward must return exactly the same number of "
                    f"NDArrays as the number of NDArrays arguments to forward. Expecting {n_in} "
                    f"got {len(rets)}"
                )
            res: list[Any] = []
            for r, a in zip(rets, inputs):
                if not isinstance(r, NDArray):
                    raise TypeError(
                        "autograd.Function.backward must return NDArrays, not " + type(r).__name__
                    )
                res.append(NativeVariable.leaf(r._arr.astype(a._arr.dtype, copy=False), False))
            return res

        fdef = FunctionDef(
            type(self).__name__,
            run_forward,
            _PROVIDER,
            inputs=("*x",),
            n_outputs=len(outs),
            rule=Rule(run_backward, _PROVIDER, first_order_only=True),
            doc=f"user-defined mx.autograd.Function {type(self).__name__}",
        )
        with _native_recording(True):
            r = apply(fdef, [a._as_var() for a in inputs], {})
        rs = (r,) if isinstance(r, NativeVariable) else tuple(r)
        for o, v in zip(outs, rs):
            o._var = v
        return outputs


def get_symbol(x: Any) -> Any:
    """mxnet's ``get_symbol`` (the recorded graph as a Symbol) is not supported: raises
    NotImplementedError."""
    raise NotImplementedError(
        "mx.autograd.get_symbol is not supported by gradhub_compat.mxnet "
        "(docs/migration-mxnet.md): the recorded graph is a native gradhub graph, not a Symbol"
    )
