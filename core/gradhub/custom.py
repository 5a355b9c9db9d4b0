"""User-defined derivatives: :class:`custom_vjp`, JAX's ``jax.custom_vjp`` for gradhub.

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
:func:`gradhub.no_grad`) ``f`` just calls ``fun``. The first-order backward uses the residuals
the forward kept. When the backward is itself recorded (``create_graph=True``: ``hvp``,
``grad(grad(f))``, a gradient penalty), the rule runs ``fwd`` again on the node's input
Variables, so that the residuals, and through them the cotangents ``bwd`` returns, are
functions of the inputs: derivatives of any order are those of ``bwd`` written with gradhub
functions (as JAX differentiates ``bwd`` traced with its residuals). ``bwd`` must then return
Variables; an array it returns cannot be differentiated and raises. Forward mode (``jvp``,
``jacfwd``) transposes the rule (see :mod:`gradhub.func`), where JAX refuses forward mode for a
``custom_vjp`` function. ``forward()`` on a graph holding the node runs ``fwd`` again on the
new data, and :func:`gradhub.compile` replays it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from . import graph, modes, pytree
from .errors import GradhubError
from .registry import FunctionDef, Provider, Rule, snake_case
from .variable import Variable, as_variable

__all__ = ["custom_vjp"]


class _Call:
    """What one call of a custom_vjp function gives its node: the function, the positions and
    values of the non-differentiable arguments, the output's structure, and the outputs and
    residuals of the forward just run (the outputs consumed by the kernel's first run, the
    residuals kept for the first-order backward)."""

    __slots__ = ("f", "n_args", "nondiff", "outputs", "residuals", "tree")

    def __init__(self, f: custom_vjp, n_args: int, nondiff: dict[int, Any]) -> None:
        self.f = f
        self.n_args = n_args
        self.nondiff = nondiff
        self.outputs: tuple[Any, ...] | None = None
        self.residuals: Any = None
        self.tree: Any = None

    def args(self, diff: Sequence[Any]) -> list[Any]:
        """The call's arguments, ``diff`` at the differentiable positions."""
        it = iter(diff)
        return [self.nondiff[i] if i in self.nondiff else next(it) for i in range(self.n_args)]

    def run_fwd(self, diff: Sequence[Any]) -> tuple[list[Variable], Any]:
        """``fwd`` on the arguments: (the flat output Variables, the residuals)."""
        f = self.f
        res = f.fwd(*self.args(diff))  # type: ignore[misc]
        if not isinstance(res, tuple) or len(res) != 2:
            raise TypeError(
                f"custom_vjp function {f.__name__}: fwd must return a pair (output, residuals), "
                f"got {type(res).__name__}"
            )
        out, residuals = res
        flat, tree = pytree.flatten(out)
        if not flat or not all(isinstance(v, Variable) for v in flat):
            raise TypeError(
                f"custom_vjp function {f.__name__}: fwd's output must be a Variable or a tuple "
                f"of Variables, got {type(out).__name__}"
            )
        if self.tree is None:
            self.tree = tree
        elif tree != self.tree:
            raise GradhubError(
                f"custom_vjp function {f.__name__}: fwd returned outputs of another structure "
                "when run again"
            )
        return flat, residuals


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
    if recorded or call.residuals is None:
        # the residuals as functions of the inputs (recorded when the backward is)
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

    def __call__(self, *args: Any) -> Any:
        if self.fwd is None:
            raise GradhubError(
                f"custom_vjp function {self.__name__}: no VJP defined; call "
                f"{self.__name__}.defvjp(fwd, bwd) first"
            )
        for i in self.nondiff_argnums:
            if i >= len(args):
                raise TypeError(
                    f"custom_vjp function {self.__name__}: nondiff_argnums names argument {i}, "
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
                        f"custom_vjp function {self.__name__}: argument {i} must be a Variable "
                        f"or an array (or be named in nondiff_argnums), got {type(a).__name__}"
                    )
                a = as_variable(a)
            diff.append(a)
        if not diff or not modes.is_recording() or not any(v.need_grad for v in diff):
            return self.fun(*args)
        call = _Call(self, len(args), nondiff)
        with modes.no_grad():
            flat, call.residuals = call.run_fwd(diff)
        call.outputs = tuple(v._data for v in flat)
        ys = graph.apply(self._fdef, diff, {"call": call})
        ys = list(ys) if isinstance(ys, (tuple, list)) else [ys]
        return pytree.unflatten(call.tree, ys)
