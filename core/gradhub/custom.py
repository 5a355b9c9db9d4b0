"""User-defined derivatives: :class:`custom_vjp` and :class:`custom_jvp`, JAX's
``jax.custom_vjp`` and ``jax.custom_jvp`` for gradhub, and :class:`Function`, PyTorch's
``torch.autograd.Function`` (a class with ``forward(ctx, ...)`` and ``backward(ctx, ...)``) on
the custom_vjp node.

A function decorated with :class:`custom_vjp` gets the vector-Jacobian product its author gives
instead of the one its body would give: a numerically stable gradient, a straight-through
estimator, a gradient clipped or reversed on its way back, a solver differentiated by its
optimality condition. As JAX::

    f = custom_vjp(fun, nondiff_argnums=())
    f.defvjp(fwd, bwd)

``fun(*args)`` is the function; ``fwd(*args)`` returns ``(output, residuals)``, the output
``fun`` would return and whatever ``bwd`` needs (a pytree of Variables, arrays or other
values); ``bwd(*nondiff_args, residuals, g)`` returns one cotangent per differentiable argument
(a tuple, None for a zero cotangent), ``g`` having the output's structure (a Variable, or a
tuple of them).

Calling ``f`` records one graph node whose forward runs ``fwd`` and whose backward rule runs
``bwd``; when nothing needs a gradient (no argument needs one, or under
:func:`gradhub.no_grad`) ``f`` just calls ``fun``. ``fwd`` runs once per call, recorded, and
``bwd`` gets the residuals it returned (a random draw in ``fwd`` is the one of the output),
at every order: when the backward is itself recorded (``create_graph=True``: ``hvp``,
``grad(grad(f))``, a gradient penalty), the residuals and the cotangents ``bwd`` computes from
them are functions of the inputs, so derivatives of any order are those of ``bwd`` written with
gradhub functions (as JAX differentiates ``bwd`` traced with its residuals). ``bwd`` must then
return Variables; an array it returns cannot be differentiated and raises (``gh.grad``
records by default: pass ``create_graph=False``, or use ``backward()``, for a first-order
``bwd`` on arrays). Keyword arguments are bound to ``fun``'s parameters. Forward mode (``jvp``,
``jacfwd``) transposes the rule (see :mod:`gradhub.func`), where JAX refuses forward mode for a
``custom_vjp`` function. ``forward()`` on a graph holding the node runs ``fwd`` again on the
new data (a recorded backward after it runs ``fwd`` once more on the node's inputs), and
:func:`gradhub.compile` replays it.

Inside :func:`gradhub.func.vmap`, a call with batched arguments records one node for the whole
batch whose ``fwd`` and ``bwd`` (``custom_jvp``: ``fun`` and ``jvp``) are mapped over it, as JAX
batches them: each runs once per batch on batched values, residuals that are not Variables are
passed as they are, and the cotangent of an unbatched argument is summed over the batch.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from . import batching, graph, modes, pytree
from .batching import BatchedVariable, wrap
from .errors import GradhubError
from .registry import FunctionDef, Provider, Rule, snake_case
from .variable import Variable, as_variable

__all__ = ["Function", "FunctionCtx", "custom_jvp", "custom_vjp"]


class _Call:
    """What one call of a custom_vjp function gives its node: the function, the positions and
    values of the non-differentiable arguments, the output's structure, and the outputs and
    residuals of the forward just run (the outputs consumed by the kernel's first run, the
    residuals kept for the first-order backward)."""

    __slots__ = ("connected", "f", "n_args", "nondiff", "outputs", "residuals", "tree")

    def __init__(self, f: Any, n_args: int, nondiff: dict[int, Any]) -> None:
        self.f = f  # a custom_vjp or custom_jvp function
        self.n_args = n_args
        self.nondiff = nondiff
        self.outputs: tuple[Any, ...] | None = None
        self.residuals: Any = None
        #: whether ``residuals`` come from ``fwd`` run with recording on the node's inputs (a
        #: recorded backward differentiates through them), not from a kernel's re-run
        self.connected = False
        self.tree: Any = None

    def args(self, diff: Sequence[Any]) -> list[Any]:
        """The call's arguments, ``diff`` at the differentiable positions."""
        it = iter(diff)
        return [self.nondiff[i] if i in self.nondiff else next(it) for i in range(self.n_args)]

    def run_fwd(self, diff: Sequence[Any]) -> tuple[list[Variable], Any]:
        """``fwd`` on the arguments: (the flat output Variables, the residuals)."""
        f = self.f
        f._in_fwd += 1  # (fwd calling f, as JAX's f_fwd often does, computes fun)
        try:
            res = f.fwd(*self.args(diff))  # type: ignore[misc]
        finally:
            f._in_fwd -= 1
        if not isinstance(res, tuple) or len(res) != 2:
            raise TypeError(
                f"custom_vjp function {f.__name__}: fwd must return a pair (output, residuals), "
                f"got {type(res).__name__}"
            )
        out, residuals = res
        return self.flat_outputs(out, "custom_vjp", "fwd's output"), residuals

    def flat_outputs(self, out: Any, kind: str, what: str) -> list[Variable]:
        """``out`` flattened, checked (Variables; the structure of the first run)."""
        flat, tree = pytree.flatten(out)
        name = self.f.__name__
        if not flat or not all(isinstance(v, Variable) for v in flat):
            raise TypeError(
                f"{kind} function {name}: {what} must be a Variable or a tuple of Variables, "
                f"got {type(out).__name__}"
            )
        if self.tree is None:
            self.tree = tree
        elif tree != self.tree:
            raise GradhubError(
                f"{kind} function {name}: {what} has another structure when run again"
            )
        return flat


def _several_outputs(**attrs: Any) -> int:
    return -1  # as many as fwd returns


def _kernel(xp: Any, *arrays: Any, call: _Call) -> tuple[Any, ...]:
    outs = call.outputs
    if outs is not None:  # the forward the call just ran on these arrays
        call.outputs = None
        return outs
    # run again (forward() on new data, a replayed plan): fwd on the arrays, nothing recorded
    with modes.no_grad():
        flat, call.residuals = call.run_fwd([Variable(a, need_grad=False) for a in arrays])
    call.connected = False
    return tuple(v._data for v in flat)


def _rule(
    grad_outputs: list[Any],
    inputs: list[Any],
    input_shapes: list[Any],
    outputs: list[Any],
    output_shapes: list[Any],
    call: _Call,
) -> list[Any]:
    f = call.f
    recorded = modes.is_recording()
    if recorded and not call.connected:
        # residuals of a kernel's re-run hold no graph: fwd again on the inputs, recorded, so
        # that the cotangents are functions of them (higher derivatives)
        _, residuals = call.run_fwd(inputs)
    else:
        residuals = call.residuals
    gs = []
    for g, shape, v in zip(grad_outputs, output_shapes, outputs):
        if g is None:
            like = inputs[0]
            xp = like.device.xp
            with like.device.activate():
                g = Variable(xp.zeros(tuple(shape), dtype=v.dtype if v is not None else like.dtype))
        gs.append(g)
    g_tree = pytree.unflatten(call.tree, gs)
    nondiff = [call.nondiff[i] for i in sorted(call.nondiff)]
    cts = f.bwd(*nondiff, residuals, g_tree)  # type: ignore[misc]
    if not isinstance(cts, (tuple, list)) or len(cts) != len(inputs):
        raise TypeError(
            f"custom_vjp function {f.__name__}: bwd must return a tuple of {len(inputs)} "
            f"cotangent(s), one per differentiable argument, got "
            f"{len(cts) if isinstance(cts, (tuple, list)) else type(cts).__name__}"
        )
    result: list[Any] = []
    for k, (ct, shape) in enumerate(zip(cts, input_shapes)):
        if ct is None:
            result.append(None)
            continue
        if not isinstance(ct, Variable):
            if recorded:
                raise GradhubError(
                    f"custom_vjp function {f.__name__}: bwd returned an array for differentiable "
                    f"argument {k}; a gradient that is differentiated again must be a Variable "
                    "computed with gradhub functions (from the residuals and g)"
                )
            ct = as_variable(ct)
        if tuple(ct.shape) != tuple(shape):
            raise ValueError(
                f"custom_vjp function {f.__name__}: bwd's cotangent for differentiable argument "
                f"{k} has shape {tuple(ct.shape)}, expected the argument's {tuple(shape)}"
            )
        result.append(ct)
    return result


class custom_vjp:
    """A function with a vector-Jacobian product of its author's (see the module).

    .. math:: \\bar{x} = \\mathrm{bwd}(r, \\bar{y}) \\quad\\text{with}\\quad
       (y, r) = \\mathrm{fwd}(x)

    ``nondiff_argnums`` are the positions of arguments that are not differentiated (Python
    values, settings); they come first in ``bwd``'s arguments, as JAX. Every other argument is a
    Variable or an array.

    Example (a gradient reversal layer, as in domain-adversarial training: the identity whose
    gradient is negated; its second derivative comes from ``bwd``'s own graph)::

        >>> import gradhub as gh
        >>> from gradhub.func import custom_vjp, grad
        >>> @custom_vjp
        ... def reverse_gradient(x):
        ...     return x * 1.0
        >>> def fwd(x):
        ...     return x * 1.0, None
        >>> def bwd(res, g):
        ...     return (-g,)
        >>> reverse_gradient.defvjp(fwd, bwd)
        >>> grad(lambda x: (reverse_gradient(x) * x).sum())(gh.Variable([2.0])).d
        array([0.], dtype=float32)
    """

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: Sequence[int] = ()) -> None:
        if not callable(fun):
            raise TypeError(
                f"custom_vjp: argument 'fun' must be callable, got {type(fun).__name__}"
            )
        functools.update_wrapper(self, fun)
        nums = (nondiff_argnums,) if isinstance(nondiff_argnums, int) else nondiff_argnums
        try:
            self.nondiff_argnums = tuple(sorted({int(i) for i in nums}))
        except (TypeError, ValueError):
            raise TypeError(
                f"custom_vjp: argument 'nondiff_argnums' must be an int or a sequence of ints, "
                f"got {nondiff_argnums!r}"
            ) from None
        if any(i < 0 for i in self.nondiff_argnums):
            raise ValueError(
                f"custom_vjp: argument 'nondiff_argnums' must hold positions >= 0, got "
                f"{nondiff_argnums!r}"
            )
        self.fun = fun
        self.fwd: Callable[..., Any] | None = None
        self.bwd: Callable[..., Any] | None = None
        #: how many runs of fwd are under way (in them, f computes fun)
        self._in_fwd = 0
        name = getattr(fun, "__name__", "custom_vjp")
        self.__name__: str = name
        provider = Provider("", "", f"{getattr(fun, '__module__', '')}.{name}")
        self._fdef = FunctionDef(
            name,
            _kernel,
            provider,
            inputs=("*inputs",),
            n_outputs=_several_outputs,
            rule=Rule(_rule, provider, None, ()),
            doc=getattr(fun, "__doc__", "") or "",
            snake=snake_case(name) if name.isidentifier() else "custom_vjp",
        )

    def bound(self, args: tuple[Any, ...], kwargs: dict[str, Any], kind: str) -> tuple[Any, ...]:
        """``args`` with ``kwargs`` bound to ``fun``'s parameters, defaults filled in, as
        positional arguments (JAX binds keyword arguments the same way)."""
        if not kwargs and len(args) > max(self.nondiff_argnums, default=-1):
            return args
        import inspect

        try:
            b = inspect.signature(self.fun).bind(*args, **kwargs)
        except (TypeError, ValueError) as e:
            raise TypeError(f"{kind} function {self.__name__}: {e}") from None
        b.apply_defaults()
        if b.kwargs:
            raise TypeError(
                f"{kind} function {self.__name__}: keyword-only arguments "
                f"{sorted(b.kwargs)} are not supported; make them positional"
            )
        return tuple(b.args)

    def split(self, args: Sequence[Any], kind: str) -> tuple[dict[int, Any], list[Variable]]:
        """The non-differentiable arguments by position, and the others as Variables."""
        for i in self.nondiff_argnums:
            if i >= len(args):
                raise TypeError(
                    f"{kind} function {self.__name__}: nondiff_argnums names argument {i}, "
                    f"but {len(args)} argument(s) were given"
                )
        nondiff = {i: args[i] for i in self.nondiff_argnums}
        diff = []
        for i, a in enumerate(args):
            if i in nondiff:
                continue
            if not isinstance(a, Variable):
                if not hasattr(a, "shape") and not isinstance(a, (int, float)):
                    raise TypeError(
                        f"{kind} function {self.__name__}: argument {i} must be a Variable "
                        f"or an array (or be named in nondiff_argnums), got {type(a).__name__}"
                    )
                a = as_variable(a)
            diff.append(a)
        return nondiff, diff

    def defvjp(self, fwd: Callable[..., Any], bwd: Callable[..., Any]) -> None:
        """Set the forward ``fwd(*args) -> (output, residuals)`` and the backward
        ``bwd(*nondiff_args, residuals, g) -> cotangents`` (see :class:`custom_vjp`)."""
        for name, fn in (("fwd", fwd), ("bwd", bwd)):
            if not callable(fn):
                raise TypeError(
                    f"custom_vjp function {self.__name__}.defvjp: {name} must be callable, got "
                    f"{type(fn).__name__}"
                )
        self.fwd, self.bwd = fwd, bwd

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.fwd is None:
            raise GradhubError(
                f"custom_vjp function {self.__name__}: no VJP defined; call "
                f"{self.__name__}.defvjp(fwd, bwd) first"
            )
        args = self.bound(args, kwargs, "custom_vjp")
        if self._in_fwd:  # f called by its own fwd
            return self.fun(*args)
        nondiff, diff = self.split(args, "custom_vjp")
        if not diff or not modes.is_recording() or not any(v.need_grad for v in diff):
            return self.fun(*args)
        _nondiff_not_batched(self, nondiff, "custom_vjp")
        if any(isinstance(v, BatchedVariable) for v in diff):
            out = _call_batched(self, len(args), nondiff, diff, _vjp_batched)
            if out is not None:
                return out
        call = _Call(self, len(args), nondiff)
        # fwd once, recorded: the residuals it returns are what bwd gets, at every order (as
        # PyTorch's saved tensors and JAX's residuals); the outputs become the node's
        flat, call.residuals = call.run_fwd(diff)
        call.connected = True
        call.outputs = tuple(v._data for v in flat)
        ys = graph.apply(self._fdef, diff, {"call": call})
        ys = list(ys) if isinstance(ys, (tuple, list)) else [ys]
        return pytree.unflatten(call.tree, ys)


class _JvpCall(_Call):
    """One call of a custom_jvp function (the primal outputs run by ``fun``)."""

    __slots__ = ()

    def run_fwd(self, diff: Sequence[Any]) -> tuple[list[Variable], Any]:
        out = self.f.fun(*self.args(diff))
        return self.flat_outputs(out, "custom_jvp", "its output"), None

    def tangents(self, primals: Sequence[Any], tangents: Sequence[Any]) -> list[Variable]:
        """The user's JVP on ``primals`` (the differentiable arguments) and ``tangents`` (None
        for a zero tangent): the flat output tangents."""
        f = self.f
        ts = []
        for p, t in zip(primals, tangents):
            if t is None:
                xp = p.device.xp
                with p.device.activate():
                    t = Variable(xp.zeros(p.shape, dtype=p.dtype), need_grad=False)
            ts.append(t)
        # JAX's call: the non-differentiable arguments first, then the differentiable
        # arguments' primals and tangents
        nondiff = [self.nondiff[i] for i in sorted(self.nondiff)]
        res = f.jvp(*nondiff, tuple(primals), tuple(ts))
        if not isinstance(res, tuple) or len(res) != 2:
            raise TypeError(
                f"custom_jvp function {f.__name__}: the JVP rule must return a pair "
                f"(primal_out, tangent_out), got {type(res).__name__}"
            )
        flat, _ = pytree.flatten(res[1])
        if len(flat) != len(pytree.flatten(res[0])[0]):
            raise TypeError(
                f"custom_jvp function {f.__name__}: the JVP rule's tangent_out must have the "
                "structure of primal_out"
            )
        return flat


def _jvp_native(ins: Any, outs: Any, ts: Any, call: _JvpCall) -> list[Variable]:
    return call.tangents(list(ins), list(ts))


def _jvp_transposed(
    grad_outputs: list[Any],
    inputs: list[Any],
    input_shapes: list[Any],
    outputs: list[Any],
    output_shapes: list[Any],
    call: _JvpCall,
) -> list[Any]:
    # the backward rule: the transpose of the (linear) tangent map t -> jvp(x, t), as JAX
    # derives reverse mode from a custom JVP; recorded when the backward is, so that the
    # cotangents depend on the primals (higher derivatives)
    from .engine import grad

    recorded = modes.is_recording()
    primals = inputs if recorded else [v.detach() for v in inputs]
    dummies = []
    for v in inputs:
        xp = v.device.xp
        with v.device.activate():
            dummies.append(Variable(xp.zeros(v.shape, dtype=v.dtype), need_grad=True))
    with modes.set_recording(True):
        touts = call.tangents(primals, dummies)
    gs = []
    for g, shape, t in zip(grad_outputs, output_shapes, touts):
        if g is None:
            xp = t.device.xp
            with t.device.activate():
                g = Variable(xp.zeros(tuple(shape), dtype=t.dtype), need_grad=False)
        gs.append(g)
    return grad(touts, dummies, gs, create_graph=recorded)


class custom_jvp:
    """A function with a Jacobian-vector product of its author's, JAX's ``jax.custom_jvp``.

    .. math:: (y, \\dot y) = \\mathrm{jvp}((x,), (\\dot x,))

    ``f = custom_jvp(fun, nondiff_argnums=())``, then ``f.defjvp(jvp)`` (also as a decorator),
    ``jvp(*nondiff_args, primals, tangents) -> (primal_out, tangent_out)`` (the tuples hold the
    differentiable arguments, as JAX), ``tangent_out`` linear in the
    tangents (zeros for arguments not differentiated). Calling ``f`` runs ``fun`` and records
    one node: forward mode (``jvp``, ``jacfwd``) applies ``jvp``; reverse mode transposes it,
    the vector-Jacobian product being the gradient of :math:`\\langle g, \\dot y\\rangle` with
    respect to the tangents (JAX's linearize-and-transpose), recorded when the backward is, so
    derivatives of any order follow ``jvp``. When nothing needs a gradient ``f`` just calls
    ``fun``. A non-linear ``tangent_out`` gives wrong gradients, as in JAX (which raises in
    some of those cases).

    Example (``log(1 + exp(x))`` with a derivative that stays finite for large ``x``)::

        >>> import numpy as np, gradhub as gh
        >>> from gradhub.func import custom_jvp, grad
        >>> import gradhub.functions as F
        >>> @custom_jvp
        ... def log1pexp(x):
        ...     return F.log(1.0 + F.exp(x))
        >>> @log1pexp.defjvp
        ... def log1pexp_jvp(primals, tangents):
        ...     (x,), (t,) = primals, tangents
        ...     return log1pexp(x), t * (1.0 - 1.0 / (1.0 + F.exp(x)))
        >>> grad(lambda v: log1pexp(v).sum())(gh.Variable(np.array([0.0, 100.0]))).d
        array([0.5, 1. ])
    """

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: Sequence[int] = ()) -> None:
        self._vjp = custom_vjp(fun, nondiff_argnums)  # (argument checks, the name)
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = self._vjp.nondiff_argnums
        self.__name__: str = self._vjp.__name__
        self.jvp: Callable[..., Any] | None = None
        fdef = self._vjp._fdef
        self._fdef = FunctionDef(
            fdef.name,
            _kernel,
            fdef.provider,
            inputs=("*inputs",),
            n_outputs=_several_outputs,
            rule=Rule(_jvp_transposed, fdef.provider, None, ()),
            doc=fdef.doc,
            snake=fdef.snake,
        )
        from .jvp_rules import JvpRule

        self._fdef.jvp_rule = JvpRule(_jvp_native, fdef.provider)

    def defjvp(self, jvp: Callable[..., Any]) -> Callable[..., Any]:
        """Set the JVP rule ``jvp(*nondiff_args, primals, tangents) -> (primal_out, tangent_out)``;
        returns
        ``jvp`` (so that it can decorate it, as JAX's)."""
        if not callable(jvp):
            raise TypeError(
                f"custom_jvp function {self.__name__}.defjvp: jvp must be callable, got "
                f"{type(jvp).__name__}"
            )
        self.jvp = jvp
        return jvp

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.jvp is None:
            raise GradhubError(
                f"custom_jvp function {self.__name__}: no JVP defined; call "
                f"{self.__name__}.defjvp(jvp) first"
            )
        args = self._vjp.bound(args, kwargs, "custom_jvp")
        nondiff, diff = self._vjp.split(args, "custom_jvp")
        if not diff or not modes.is_recording() or not any(v.need_grad for v in diff):
            return self.fun(*args)
        _nondiff_not_batched(self, nondiff, "custom_jvp")
        if any(isinstance(v, BatchedVariable) for v in diff):
            out = _call_batched(self, len(args), nondiff, diff, _jvp_batched)
            if out is not None:
                return out
        call = _JvpCall(self, len(args), nondiff)
        with modes.no_grad():
            flat, _ = call.run_fwd(diff)
        call.outputs = tuple(v._data for v in flat)
        ys = graph.apply(self._fdef, diff, {"call": call})
        ys = list(ys) if isinstance(ys, (tuple, list)) else [ys]
        return pytree.unflatten(call.tree, ys)


# -- under vmap: the function of the whole batch, with fwd/bwd (or jvp) mapped --------------------


class _NotMappable(Exception):
    """Raised by :func:`_vmapped` when a residual holds Variables inside an object that is not a
    pytree (its batch could not be mapped); the call then runs once per batch element."""


def _holds_variables(obj: Any) -> bool:
    """Whether ``obj`` (a leaf of a pytree that is not a Variable) keeps Variables in its
    attributes (a plain object or namespace holding them)."""
    attrs = getattr(obj, "__dict__", None)
    if not isinstance(attrs, dict):
        return False
    return any(isinstance(v, Variable) for v in pytree.flatten(list(attrs.values()))[0])


def _nondiff_not_batched(f: Any, nondiff: dict[int, Any], kind: str) -> None:
    """Refuse a non-differentiable argument batched by vmap (JAX refuses it too): ``fwd`` and
    ``bwd`` (``jvp``) get one value of it for the whole batch."""
    for i, a in nondiff.items():
        if isinstance(a, BatchedVariable):
            raise GradhubError(
                f"{kind} function {f.__name__}: argument {i} is in nondiff_argnums but is "
                "batched by vmap; a non-differentiable argument must be the same for the whole "
                "batch (pass it as a differentiable argument instead)"
            )


def _call_batched(
    f: Any,
    n_args: int,
    nondiff: dict[int, Any],
    diff: list[Variable],
    make: Callable[..., Any],
) -> Any:
    """``f`` called inside ``vmap`` with batched differentiable arguments: a function of the
    whole batch (arguments batched at the innermost level replaced by their batch, axis 0) with
    its rule mapped over the batch (``make``: :func:`_vjp_batched` or :func:`_jvp_batched`), as
    JAX batches ``custom_vjp``/``custom_jvp`` by mapping ``fwd``/``bwd`` and ``jvp``; its
    outputs are the batch's again. One node for the batch, where running ``f`` once per element
    would loop. Returns None where residuals cannot be mapped (see :class:`_NotMappable`): the
    caller then records the node of one call, which vmap runs once per element."""
    level = max(v._level for v in diff if isinstance(v, BatchedVariable))
    values: list[Any] = []
    dims: list[int | None] = []
    for v in diff:
        if isinstance(v, BatchedVariable) and v._level == level:
            values.append(v._value)
            dims.append(0)
        else:
            values.append(v)
            dims.append(None)

    def merge(d: Sequence[Any]) -> list[Any]:
        it = iter(d)
        return [nondiff[i] if i in nondiff else next(it) for i in range(n_args)]

    fb = make(f, merge, tuple(dims), batching.randomness(level) or "error")
    try:
        # the batch of level ``level`` is mapped at a level of its own, so that level is not
        # active meanwhile (a random draw would otherwise be batched along both)
        with batching.suspended(level):
            out = fb(*values)
    except _NotMappable:
        return None
    flat, tree = pytree.flatten(out)
    return pytree.unflatten(tree, [wrap(v, level) for v in flat])


def _vmapped(
    fn: Callable[..., Any],
    in_axes: tuple[int | None, ...],
    args: Sequence[Any],
    mode: str,
    name: str,
) -> Any:
    """``fn`` (returning a pytree of Variables and other values) mapped over ``args`` (batch
    axis 0 where ``in_axes`` says 0, the others passed as they are) at a new vmap level with
    randomness ``mode``: the Variables of the result with the batch axis first (broadcast along
    it where they do not depend on the batch), the other values as the one run gave them
    (:class:`_NotMappable` where one of them holds Variables in its attributes)."""
    size = next(a.shape[0] for a, ax in zip(args, in_axes) if ax == 0)
    level = batching.new_level(size, mode)
    try:
        out = fn(*(a if ax is None else wrap(a, level) for a, ax in zip(args, in_axes)))
        leaves, tree = pytree.flatten(out)
        mapped = []
        for v in leaves:
            mapped_here = isinstance(v, BatchedVariable) and v._level == level
            if mapped_here:
                v = v._value
            if isinstance(v, BatchedVariable) and all(v._level != lv for lv, _ in batching.LEVELS):
                raise GradhubError(
                    f"custom function {name}: inside vmap its fwd/bwd (or fun/jvp) use a value "
                    "batched by the vmap that maps it without taking it as an argument (a "
                    "closure); pass that value as an argument"
                )
            if not mapped_here and isinstance(v, Variable):
                v = batching.to_batched(v, size)  # (the same for every element)
            elif not mapped_here and _holds_variables(v):
                raise _NotMappable(type(v).__name__)
            mapped.append(v)
    finally:
        batching.close_level(level)
    return pytree.unflatten(tree, mapped)


def _vjp_batched(
    f: custom_vjp,
    merge: Callable[[Sequence[Any]], list[Any]],
    dims: tuple[int | None, ...],
    mode: str,
) -> custom_vjp:
    """The custom_vjp function of the whole batch: ``fwd`` and ``bwd`` mapped over it, the
    cotangents of unbatched arguments summed over the batch."""
    nondiff_values = [merge([None] * len(dims))[i] for i in f.nondiff_argnums]

    shapes: list[tuple[int, ...]] = []  # each differentiable argument's shape (one element)

    def fun_b(*values: Any) -> Any:
        return _vmapped(lambda *d: f.fun(*merge(d)), dims, values, mode, f.__name__)

    def fwd_b(*values: Any) -> tuple[Any, Any]:
        shapes[:] = [tuple(v.shape[1:] if d == 0 else v.shape) for v, d in zip(values, dims)]

        def fwd_one(*d: Any) -> Any:
            f._in_fwd += 1  # (fwd calling f computes fun, as in an unbatched call)
            try:
                res = f.fwd(*merge(d))  # type: ignore[misc]
            finally:
                f._in_fwd -= 1
            if not isinstance(res, tuple) or len(res) != 2:
                raise TypeError(
                    f"custom_vjp function {f.__name__}: fwd must return a pair (output, "
                    f"residuals), got {type(res).__name__}"
                )
            return res

        out, residuals = _vmapped(fwd_one, dims, values, mode, f.__name__)
        return out, residuals

    def bwd_b(residuals: Any, g: Any) -> tuple[Any, ...]:
        res_leaves, res_tree = pytree.flatten(residuals)
        g_leaves, g_tree = pytree.flatten(g)
        var_at = [k for k, v in enumerate(res_leaves) if isinstance(v, Variable)]

        def bwd_one(*d: Any) -> tuple[Any, ...]:
            leaves = list(res_leaves)
            for k, v in zip(var_at, d):
                leaves[k] = v
            gs = pytree.unflatten(g_tree, list(d[len(var_at) :]))
            cts = f.bwd(*nondiff_values, pytree.unflatten(res_tree, leaves), gs)  # type: ignore[misc]
            if not isinstance(cts, (tuple, list)) or len(cts) != len(dims):
                raise TypeError(
                    f"custom_vjp function {f.__name__}: bwd must return a tuple of {len(dims)} "
                    f"cotangent(s), one per differentiable argument, got "
                    f"{len(cts) if isinstance(cts, (tuple, list)) else type(cts).__name__}"
                )
            for k, (ct, shape) in enumerate(zip(cts, shapes)):
                if isinstance(ct, Variable) and tuple(ct.shape) != shape:
                    raise ValueError(
                        f"custom_vjp function {f.__name__}: bwd's cotangent for differentiable "
                        f"argument {k} has shape {tuple(ct.shape)}, expected the argument's "
                        f"{shape}"
                    )
            return tuple(cts)

        args = [res_leaves[k] for k in var_at] + list(g_leaves)
        cts = _vmapped(bwd_one, (0,) * len(args), args, mode, f.__name__)
        return tuple(
            ct.sum(axis=0) if d is None and isinstance(ct, Variable) else ct
            for ct, d in zip(cts, dims)
        )

    fun_b.__name__ = fun_b.__qualname__ = f.__name__
    fun_b.__module__ = getattr(f.fun, "__module__", fun_b.__module__)
    fb = custom_vjp(fun_b)
    fb.defvjp(fwd_b, bwd_b)
    return fb


def _jvp_batched(
    f: custom_jvp,
    merge: Callable[[Sequence[Any]], list[Any]],
    dims: tuple[int | None, ...],
    mode: str,
) -> custom_jvp:
    """The custom_jvp function of the whole batch: ``fun`` and ``jvp`` mapped over it."""
    nondiff_values = [merge([None] * len(dims))[i] for i in f.nondiff_argnums]

    def fun_b(*values: Any) -> Any:
        return _vmapped(lambda *d: f.fun(*merge(d)), dims, values, mode, f.__name__)

    def jvp_b(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Any, Any]:
        n = len(primals)

        def jvp_one(*d: Any) -> Any:
            return f.jvp(*nondiff_values, tuple(d[:n]), tuple(d[n:]))  # type: ignore[misc]

        return _vmapped(jvp_one, dims + dims, list(primals) + list(tangents), mode, f.__name__)  # type: ignore[no-any-return]

    fun_b.__name__ = fun_b.__qualname__ = f.__name__
    fun_b.__module__ = getattr(f.fun, "__module__", fun_b.__module__)
    fb = custom_jvp(fun_b)
    fb.defjvp(jvp_b)
    return fb


class FunctionCtx:
    """The ``ctx`` of a :class:`Function`'s ``forward``/``setup_context`` and ``backward``
    (PyTorch's ``FunctionCtx``): ``save_for_backward(*values)`` keeps Variables (or arrays,
    or None) that ``backward`` reads as ``saved_tensors``; ``needs_input_grad`` says, per
    argument of ``apply``, whether its gradient is wanted; other attributes set in ``forward``
    (``ctx.k = 2``) are there in ``backward``.

    Example::

        >>> from gradhub.custom import FunctionCtx
        >>> ctx = FunctionCtx((True, False))
        >>> ctx.save_for_backward(None)
        >>> ctx.saved_tensors, ctx.needs_input_grad
        ((None,), (True, False))
    """

    def __init__(self, needs_input_grad: tuple[bool, ...]) -> None:
        self.needs_input_grad = needs_input_grad
        self.saved_tensors: tuple[Any, ...] = ()
        self.materialize_grads = True

    def save_for_backward(self, *values: Any) -> None:
        """Keep ``values`` for ``backward`` (``ctx.saved_tensors``)."""
        self.saved_tensors = values

    def set_materialize_grads(self, value: bool) -> None:
        """Accepted for PyTorch programs: ``backward`` gets zeros for an output no gradient
        reached, also after ``set_materialize_grads(False)`` (where PyTorch passes None)."""
        self.materialize_grads = bool(value)

    def mark_non_differentiable(self, *outputs: Any) -> None:
        """Accepted for PyTorch programs; every output of a :class:`Function` is differentiable
        here (the gradient ``backward`` returns for it is used as given)."""


class Function:
    """A function with its own backward pass, as PyTorch's ``torch.autograd.Function``:
    a subclass defines ``forward(ctx, *args)`` (or ``forward(*args)`` and
    ``setup_context(ctx, inputs, output)``) and ``backward(ctx, *grad_outputs)``, returning one
    gradient (or None) per argument of ``forward``, and is called with ``Sub.apply(*args)``.

    .. math:: \\bar{x}_i = \\mathrm{backward}(ctx, \\bar{y})_i

    ``forward`` computes with gradhub functions on Variables (the arguments that are Variables or
    arrays; other arguments, such as Python numbers and settings, are passed as they are and get
    no gradient); nothing it does is recorded: the call records one node (a
    :class:`custom_vjp` node). As in PyTorch, ``backward`` written with gradhub functions is
    differentiable again: when the backward is recorded (``create_graph=True``), ``forward`` is
    run again on the node's input Variables so that ``ctx.saved_tensors`` depend on them, and
    second derivatives are those of ``backward``.

    Example (the identity whose gradient is scaled by ``k`` on its way back, as in
    domain-adversarial training)::

        >>> import gradhub as gh
        >>> class ScaleGradient(gh.Function):
        ...     @staticmethod
        ...     def forward(ctx, x, k):
        ...         ctx.k = k
        ...         return x * 1.0
        ...     @staticmethod
        ...     def backward(ctx, g):
        ...         return g * ctx.k, None
        >>> x = gh.Variable([1.0, 2.0])
        >>> gh.grad([ScaleGradient.apply(x, -0.5).sum()], [x])[0].d
        array([-0.5, -0.5], dtype=float32)
    """

    @staticmethod
    def forward(ctx: Any, *args: Any) -> Any:
        """The function (see the class)."""
        raise NotImplementedError("a gradhub.Function subclass must define forward")

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        """One gradient (or None) per argument of ``forward`` (see the class)."""
        raise NotImplementedError("a gradhub.Function subclass must define backward")

    @classmethod
    def apply(cls, *args: Any) -> Any:
        """Call the function on ``args`` and record one node (see the class)."""
        f = cls.__dict__.get("_custom_vjp")
        if f is None:
            f = _FunctionVjp(cls)
            cls._custom_vjp = f  # type: ignore[attr-defined]
        nondiff = tuple(
            i
            for i, a in enumerate(args)
            if not isinstance(a, Variable)
            and not hasattr(a, "__array_interface__")
            and not hasattr(a, "__cuda_array_interface__")
        )
        return f.with_nondiff(nondiff)(*args)


class _FunctionVjp:
    """The custom_vjp of a :class:`Function` subclass, one per set of non-array positions."""

    def __init__(self, cls: type) -> None:
        self.cls = cls
        self._by_nondiff: dict[tuple[int, ...], custom_vjp] = {}

    def with_nondiff(self, nondiff: tuple[int, ...]) -> custom_vjp:
        f = self._by_nondiff.get(nondiff)
        if f is None:
            f = self._by_nondiff[nondiff] = self._make(nondiff)
        return f

    def _make(self, nondiff: tuple[int, ...]) -> custom_vjp:
        cls = self.cls
        setup = cls.__dict__.get("setup_context") or next(
            (c.__dict__["setup_context"] for c in cls.__mro__ if "setup_context" in c.__dict__),
            None,
        )

        def run(*args: Any) -> tuple[Any, FunctionCtx]:
            needs = tuple(
                isinstance(a, Variable) and a.need_grad and i not in nondiff
                for i, a in enumerate(args)
            )
            ctx = FunctionCtx(needs)
            if setup is not None:
                out = cls.forward(*args)  # type: ignore[attr-defined]
                setup(ctx, args, out)
            else:
                out = cls.forward(ctx, *args)  # type: ignore[attr-defined]
            return out, ctx

        def fun(*args: Any) -> Any:
            return run(*args)[0]

        fun.__name__ = fun.__qualname__ = cls.__name__
        fun.__module__ = cls.__module__

        def fwd(*args: Any) -> tuple[Any, Any]:
            out, ctx = run(*args)
            if isinstance(out, list):
                out = tuple(out)
            # the residuals: ctx's attributes as a pytree (its Variables are mapped over a
            # batch under vmap, as the residuals of any custom_vjp function)
            return out, dict(vars(ctx))

        def bwd(*rest: Any) -> tuple[Any, ...]:
            attrs, g = rest[-2], rest[-1]
            ctx = FunctionCtx(attrs["needs_input_grad"])
            vars(ctx).update(attrs)
            try:
                return backward(ctx, g)
            finally:
                attrs.update(vars(ctx))  # (attributes backward sets are there at the next one)

        def backward(ctx: FunctionCtx, g: Any) -> tuple[Any, ...]:
            gs = g if isinstance(g, tuple) else (g,)
            grads = cls.backward(ctx, *gs)  # type: ignore[attr-defined]
            if not isinstance(grads, tuple):
                grads = (grads,)
            n = len(ctx.needs_input_grad)
            if len(grads) != n:
                raise TypeError(
                    f"{cls.__name__}.backward returned {len(grads)} gradient(s); expected {n}, "
                    "one per argument of forward (None where there is none)"
                )
            return tuple(gr for i, gr in enumerate(grads) if i not in nondiff)

        f = custom_vjp(fun, nondiff_argnums=nondiff)
        f.defvjp(fwd, bwd)
        return f
