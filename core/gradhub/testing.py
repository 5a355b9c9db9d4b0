"""Numeric gradient checking: :func:`gradcheck`.

Derivatives are compared with central differences computed in float64,

.. math:: \\langle v, J d\\rangle \\approx
          \\frac{\\langle v, f(x + \\epsilon d) - f(x - \\epsilon d)\\rangle}{2\\epsilon},

along every coordinate direction ``d`` for small inputs (the full Jacobian) and along random
directions otherwise, with a random incoming gradient ``v``. Order ``n`` applies the check to the
vector-Jacobian product ``(x, v) -> J(x)^T v`` of order ``n - 1``, so the second derivative is
checked with respect to both the inputs and the incoming gradient.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .device import CPU, Device
from .engine import grad
from .errors import GradcheckError, GradhubError
from .variable import Variable


class NothingToCheckError(GradhubError, ValueError):
    """:func:`gradcheck` was asked for a check that would verify nothing: no input to
    differentiate, or ``fn`` returned no floating-point Variable."""


def _outputs(res: Any) -> list[Variable]:
    outs = list(res) if isinstance(res, (list, tuple)) else [res]
    return [o for o in outs if isinstance(o, Variable) and o.dtype.kind == "f"]


def _dev_of(a: Any, default: Device) -> Device:
    """The device holding the array ``a`` (``default`` for a type no device registered)."""
    from .registry import REGISTRY

    dev = REGISTRY.array_device(a)
    return default if dev is None else dev


def _host(dev: Device, a: Any) -> np.ndarray:
    """``a`` as a float64 numpy array, copied from the device holding it (``dev`` if unknown)."""
    return np.asarray(_dev_of(a, dev).to_numpy(a), dtype=np.float64)


def gradcheck(
    fn: Callable[..., Any],
    inputs: Sequence[Any],
    order: int = 1,
    *,
    grad_inputs: Sequence[int] | None = None,
    grad_outputs: Sequence[Any] | None = None,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-4,
    full_jacobian_max: int = 32,
    n_directions: int = 3,
    seed: int = 0,
    device: Device | None = None,
    name: str = "",
) -> bool:
    """Check the derivatives of ``fn`` up to ``order`` numerically; raise GradcheckError if wrong.

    ``fn`` takes Variables and returns a Variable or a sequence of them. Floating inputs are cast
    to float64, and so are Python numbers and (nested) lists of them, integers included;
    ``grad_inputs`` picks the inputs to differentiate (default: every floating one). A numpy
    integer array is an index-like input, not differentiated unless ``grad_inputs`` names it (it
    is then cast to float64). Besides the numeric comparison it checks that a zero incoming
    gradient gives zero gradients and that running backward twice gives the same result.

    A check that would verify nothing raises instead of returning True:
    :class:`NothingToCheckError` (a ``ValueError``) when no input is differentiated (say, only
    integer arrays) and when ``fn`` returns no floating-point Variable. Bad arguments raise
    ``ValueError``/``TypeError`` naming the argument: an ``order`` below 1 or not an int,
    ``grad_inputs`` that are not distinct indices of ``inputs``, ``grad_outputs`` of the wrong
    length.

    Example::

        >>> import gradhub as gh
        >>> gh.testing.gradcheck(lambda x: x * x * x, [[0.5, -1.0, 2.0]], order=3)
        True
    """
    if isinstance(order, bool) or not isinstance(order, (int, np.integer)):
        raise TypeError(
            f"gradcheck: order must be an int >= 1, got {type(order).__name__} {order!r}"
        )
    if order < 1:
        raise ValueError(
            f"gradcheck: order must be >= 1 (the highest derivative order to check), got {order}"
        )
    if isinstance(inputs, (str, bytes)) or not isinstance(inputs, Sequence):
        raise TypeError(
            f"gradcheck: inputs must be a sequence (one entry per argument of fn), "
            f"got {type(inputs).__name__}"
        )
    n = len(inputs)
    if grad_inputs is not None:
        diff = []
        for i in grad_inputs:
            if isinstance(i, bool) or not isinstance(i, (int, np.integer)):
                raise TypeError(
                    f"gradcheck: grad_inputs must hold input indices (ints), got "
                    f"{type(i).__name__} {i!r}"
                )
            if not 0 <= i < n:
                raise ValueError(
                    f"gradcheck: grad_inputs index {i} is out of range for {n} input(s)"
                )
            if int(i) in diff:
                raise ValueError(f"gradcheck: grad_inputs names input {i} twice")
            diff.append(int(i))
    dev = device or CPU
    arrays = []
    for k, a in enumerate(inputs):
        a = a.d if isinstance(a, Variable) else a
        literal = isinstance(a, (list, tuple, float, int)) and not isinstance(a, bool)
        h = np.asarray(a if literal else dev.to_numpy(a))
        if h.dtype.kind == "f" or (
            h.dtype.kind in "iu" and (literal or (grad_inputs is not None and k in diff))
        ):
            h = h.astype(np.float64)
        arrays.append(dev.asarray(h))
    if grad_inputs is None:
        diff = [i for i, a in enumerate(arrays) if a.dtype.kind == "f"]
    for i in diff:
        if arrays[i].dtype.kind != "f":
            raise TypeError(
                f"gradcheck: grad_inputs names input {i}, whose dtype "
                f"{arrays[i].dtype} cannot be differentiated"
            )
    if not diff:
        raise NothingToCheckError(
            "gradcheck: no input is differentiated, so nothing would be checked: inputs has no "
            "floating-point input (numpy integer arrays are index-like and left alone); pass "
            "floats or name the inputs with grad_inputs"
        )
    rng = np.random.default_rng(seed)
    label = name or getattr(fn, "__name__", "fn")
    _check(
        fn,
        arrays,
        diff,
        grad_outputs,
        order,
        dev,
        rng,
        eps,
        atol,
        rtol,
        full_jacobian_max,
        n_directions,
        label,
        1,
    )
    return True


def _vars(arrays: Sequence[Any], diff: Sequence[int]) -> list[Variable]:
    return [Variable._new(a, i in diff, None, 0) for i, a in enumerate(arrays)]


def _check(
    fn: Callable[..., Any],
    arrays: list[Any],
    diff: list[int],
    grad_outputs: Sequence[Any] | None,
    order: int,
    dev: Device,
    rng: np.random.Generator,
    eps: float,
    atol: float,
    rtol: float,
    full_max: int,
    n_dirs: int,
    label: str,
    level: int,
) -> None:
    xs = _vars(arrays, diff)
    res = fn(*xs)
    ys = _outputs(res)
    if not ys:
        got = type(res).__name__
        raise NothingToCheckError(
            f"gradcheck: fn ({label}, order {level}) returned no floating-point Variable (got "
            f"{got}), so nothing would be checked; fn must return a Variable or a sequence of "
            "them"
        )
    # the seeds go on each output's device (an output of ToDevice is not on the inputs' one)
    if grad_outputs is None:
        vs = [_dev_of(y._data, dev).asarray(rng.standard_normal(y.shape)) for y in ys]
    else:
        if len(grad_outputs) != len(ys):
            raise ValueError(
                f"gradcheck: grad_outputs has {len(grad_outputs)} entries but "
                f"{label} returned {len(ys)} floating-point output(s)"
            )
        vs = [
            _dev_of(y._data, dev).asarray(np.asarray(v, dtype=np.float64))
            for y, v in zip(ys, grad_outputs)
        ]
    targets = [xs[i] for i in diff]
    gs = grad(
        ys, targets, grad_outputs=[Variable._new(v, False, None, 0) for v in vs], create_graph=False
    )
    ana = [np.zeros(arrays[i].shape) if g is None else _host(dev, g.d) for i, g in zip(diff, gs)]

    # side check: running backward twice gives the same result, also when the backward pass is
    # recorded (create_graph=True runs the differentiable rules, False may run fast array rules)
    xs2 = _vars(arrays, diff)
    ys2 = _outputs(fn(*xs2))
    gs2 = grad(
        ys2,
        [xs2[i] for i in diff],
        grad_outputs=[Variable._new(v, False, None, 0) for v in vs],
        create_graph=True,
    )
    for k, (a, g2) in enumerate(zip(ana, gs2)):
        b = _host(dev, g2.d)  # type: ignore[union-attr]
        if not np.allclose(a, b, rtol=1e-9, atol=1e-12 * (1 + np.abs(a).max(initial=0))):
            raise GradcheckError(
                f"{label} (order {level}): running backward twice (with and "
                f"without create_graph) gave different gradients for input "
                f"{diff[k]}: max diff {np.abs(a - b).max()}",
                level,
            )
    # side check: a zero incoming gradient gives zero gradients
    zs = [Variable._new(_dev_of(v, dev).xp.zeros_like(v), False, None, 0) for v in vs]
    gz = grad(ys2, [xs2[i] for i in diff], grad_outputs=zs, create_graph=False)
    for k, g in enumerate(gz):
        h = _host(dev, g.d)  # type: ignore[union-attr]
        if np.any(h != 0):
            raise GradcheckError(
                f"{label} (order {level}): a zero incoming gradient gave a "
                f"non-zero gradient for input {diff[k]} "
                f"(max {np.abs(h).max()})",
                level,
            )

    def phi(shifted: list[Any]) -> float:
        # not under no_grad: at order > 1, fn itself computes a gradient
        outs = _outputs(fn(*_vars(shifted, diff)))
        return float(sum(np.sum(_host(dev, y.d) * _host(dev, v)) for y, v in zip(outs, vs)))

    sizes = [int(arrays[i].size) for i in diff]
    total = sum(sizes)
    if total <= full_max:
        directions = []
        for k in range(len(diff)):
            for j in range(sizes[k]):
                d = [np.zeros(arrays[m].shape) for m in diff]
                d[k].reshape(-1)[j] = 1.0
                directions.append(d)
    else:
        directions = [[rng.standard_normal(arrays[m].shape) for m in diff] for _ in range(n_dirs)]
    host = [_host(dev, a) for a in arrays]
    devs = [_dev_of(a, dev) for a in arrays]  # at order > 1 the seeds are inputs too
    for d in directions:
        plus = list(arrays)
        minus = list(arrays)
        for k, i in enumerate(diff):
            plus[i] = devs[i].asarray(host[i] + eps * d[k])
            minus[i] = devs[i].asarray(host[i] - eps * d[k])
        num = (phi(plus) - phi(minus)) / (2 * eps)
        an = float(sum(np.sum(a * dk) for a, dk in zip(ana, d)))
        if not abs(num - an) <= atol + rtol * max(abs(num), abs(an)):
            where = ""
            if total <= full_max:
                k = next(k for k, dk in enumerate(d) if np.any(dk))
                where = f" input {diff[k]} element {int(np.argmax(d[k].reshape(-1)))}:"
            raise GradcheckError(
                f"{label}: derivative of order {level} is wrong;{where} numeric {num!r} vs "
                f"analytic {an!r} (|diff| {abs(num - an):.3g})",
                level,
            )

    if order > 1:
        n_in = len(arrays)
        n_v = len(vs)

        def vjp(*args: Variable) -> list[Variable]:
            ins, v_in = list(args[:n_in]), list(args[n_in:])
            outs = _outputs(fn(*ins))
            return grad(
                outs,
                [ins[i] for i in diff],
                grad_outputs=v_in,  # type: ignore[return-value]
                create_graph=True,
            )

        new_arrays = list(arrays) + list(vs)
        new_diff = list(diff) + list(range(n_in, n_in + n_v))
        _check(
            vjp,
            new_arrays,
            new_diff,
            None,
            order - 1,
            dev,
            rng,
            eps,
            atol,
            rtol,
            full_max,
            n_dirs,
            label,
            level + 1,
        )
