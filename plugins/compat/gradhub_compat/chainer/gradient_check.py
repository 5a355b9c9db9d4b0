"""chainer's ``chainer.gradient_check``: numeric checks of backward passes, for the tests of
chainer programs and user functions (``check_backward``, ``check_double_backward``,
``numerical_grad``), with chainer 7.8.1's arguments, tolerances and method.

:func:`check_backward` compares the derivative of ``sum(y * y_grad)`` along one random unit
direction :math:`r` through the inputs (and ``params``): the backward pass gives
:math:`\\sum_i \\langle g_i, r_i \\rangle`; central differences of
:math:`\\delta \\mapsto f(x + \\delta r)` give the numeric value (2 points, or 5 with
``detect_nondifferentiable``, which also raises :class:`NondifferentiableError` where a
quadratic does not fit the samples). :func:`check_double_backward` applies it to the function
that returns the first-order gradients (``enable_double_backprop=True``).

Example (a user function checked to the second order)::

    >>> import numpy as np
    >>> from gradhub_compat import chainer
    >>> from gradhub_compat.chainer import gradient_check
    >>> class Cube(chainer.FunctionNode):
    ...     def forward(self, inputs):
    ...         self.retain_inputs((0,))
    ...         return inputs[0] ** 3,
    ...     def backward(self, indexes, grad_outputs):
    ...         x, = self.get_retained_inputs()
    ...         return 3 * x * x * grad_outputs[0],
    >>> def cube(x):
    ...     return Cube().apply((x,))[0]
    >>> x, gy, ggx = (np.random.uniform(-1, 1, 3) for _ in range(3))
    >>> gradient_check.check_backward(cube, x, gy)
    >>> gradient_check.check_double_backward(cube, x, gy, ggx)
"""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from gradhub.variable import Variable as _NativeVariable

from . import Variable, backward, using_config

__all__ = [
    "NondifferentiableError",
    "check_backward",
    "check_double_backward",
    "numerical_grad",
]


class NondifferentiableError(Exception):
    """The function is not differentiable at the point (``detect_nondifferentiable``)."""


def _as_tuple(xs: Any) -> tuple[Any, ...]:
    if isinstance(xs, tuple):
        return xs
    if isinstance(xs, list):
        return tuple(xs)
    return (xs,)


def _xp(arrays: Sequence[Any]) -> Any:
    for a in arrays:
        if a is not None and not np.isscalar(a) and not isinstance(a, np.ndarray):
            return _NativeVariable.leaf(a).device.xp
    return np


def _to_numpy(a: Any) -> np.ndarray:
    if isinstance(a, np.ndarray) or np.isscalar(a):
        return np.asarray(a)
    return _NativeVariable.leaf(a).device.to_numpy(a)  # type: ignore[no-any-return]


def _assert_allclose(x: Any, y: Any, atol: float, rtol: float) -> None:
    np.testing.assert_allclose(_to_numpy(x), _to_numpy(y), atol=atol, rtol=rtol, verbose=True)


def numerical_grad(
    f: Callable[[], Any],
    inputs: Sequence[Any],
    grad_outputs: Sequence[Any],
    eps: float = 1e-3,
    detect_nondifferentiable: bool = False,
    diff_atol: float = 0,
    diff_rtol: float = 1e-2,
    center_outputs: Sequence[Any] | None = None,
) -> list[Any]:
    """The gradient of ``sum_j sum(f()[j] * grad_outputs[j])`` with respect to each array of
    ``inputs`` by central differences (``f`` reads the arrays, which are changed in place and
    restored): :math:`(y(x + \\epsilon) - y(x - \\epsilon)) / 2\\epsilon` per element, or the
    4-point formula :math:`(-y_{+1} + 8 y_{+1/2} - 8 y_{-1/2} + y_{-1}) / 6\\epsilon` with
    ``detect_nondifferentiable``, which raises :class:`NondifferentiableError` where an output
    changes finiteness or a quadratic fits the 5 samples worse than ``diff_atol + diff_rtol *
    (max - min)``. Results have the inputs' dtypes.

    Example::

        >>> import numpy as np
        >>> from gradhub_compat.chainer.gradient_check import numerical_grad
        >>> x = np.array([1.0, 2.0])
        >>> numerical_grad(lambda: (x ** 2,), (x,), (np.ones(2),))[0].round(6)
        array([2., 4.])
    """
    if eps <= 0:
        raise ValueError(f"chainer numerical_grad: eps must be positive, got {eps}")
    inputs = tuple(inputs)
    gys = tuple(
        None if g is None else np.float64(g) if np.isscalar(g) else g.astype(np.float64)  # type: ignore[arg-type]
        for g in grad_outputs
    )
    xp = _xp([*inputs, *gys])
    grads = [xp.zeros(x.shape, np.float64) for x in inputs]
    ys0: tuple[Any, ...] | None = None
    if detect_nondifferentiable:
        ys0 = tuple(center_outputs) if center_outputs is not None else _copies(f())

    def run(x: Any, ind: tuple[int, ...], delta: float, orig: Any) -> tuple[Any, ...]:
        x[ind] = orig + delta
        try:
            ys = _copies(f())
        finally:
            x[ind] = orig
        if len(ys) != len(gys):
            raise ValueError(
                f"chainer numerical_grad: f returned {len(ys)} outputs for {len(gys)} grad_outputs"
            )
        return ys

    with using_config("type_check", False):
        for i_in, (x, gx) in enumerate(zip(inputs, grads)):
            orig_x = x.copy()
            for ind in np.ndindex(x.shape):
                orig = orig_x[ind]
                if detect_nondifferentiable:
                    assert ys0 is not None
                    yss = [
                        run(x, ind, -eps, orig),
                        run(x, ind, -eps * 0.5, orig),
                        ys0,
                        run(x, ind, eps * 0.5, orig),
                        run(x, ind, eps, orig),
                    ]
                    _check_differentiable(yss, i_in, x, ind, eps, diff_atol, diff_rtol, xp)
                else:
                    yss = [run(x, ind, -eps, orig), run(x, ind, eps, orig)]
                for j, gy in enumerate(gys):
                    if gy is None or yss[0][j] is None:
                        continue
                    if len(yss) == 2:
                        diff = (yss[1][j].astype(np.float64) - yss[0][j]) / (2 * eps)
                    else:
                        y = [yss[k][j].astype(np.float64) for k in (0, 1, 3, 4)]
                        diff = (-y[3] + 8 * y[2] - 8 * y[1] + y[0]) / (6 * eps)
                    gx[ind] += (diff * gy).sum()
    return [g.astype(x.dtype, copy=False) for g, x in zip(grads, inputs)]


def _copies(ys: Any) -> tuple[Any, ...]:
    return tuple(None if y is None else y.copy() for y in _as_tuple(ys))


def _check_differentiable(
    yss: list[tuple[Any, ...]],
    i_in: int,
    x: Any,
    ind: tuple[int, ...],
    eps: float,
    diff_atol: float,
    diff_rtol: float,
    xp: Any,
) -> None:
    """Raise :class:`NondifferentiableError` when the 5 samples show a kink or a jump."""
    n_out = len(yss[0])
    if all(y is None or y.size == 0 for y in yss[0]):
        return

    def error(i_out: int, extra: str) -> NondifferentiableError:
        s = io.StringIO()
        s.write("Tried to compute the numeric gradient on a non-differentiable point.\n\n")
        s.write(f"i_in: {i_in}\ni_out: {i_out}\nx: {x}\nindex on x: {ind}\neps: {eps}\n")
        s.write(extra)
        for label, k in (("x-eps  ", 0), ("x-eps/2", 1), ("x      ", 2), ("x+eps/2", 3)):
            s.write(f"y[{label}]: {yss[k][i_out]}\n")
        s.write(f"y[x+eps  ]: {yss[4][i_out]}\n")
        return NondifferentiableError(s.getvalue())

    nonfinite = False
    for i_out in range(n_out):
        if yss[0][i_out] is None:
            continue
        finite = [xp.isfinite(ys[i_out]) for ys in yss]
        if any(bool((finite[0] != f).any()) for f in finite[1:]):
            raise error(i_out, "")
        nonfinite |= not all(bool(f.all()) for f in finite)
    if nonfinite:  # consistently non-finite around the point: not treated as a kink
        return
    t = np.arange(5.0)
    for i_out in range(n_out):
        if yss[0][i_out] is None:
            continue
        ys = np.stack([_to_numpy(s[i_out]).astype(np.float64).ravel() for s in yss])
        coef = np.polynomial.polynomial.polyfit(t, ys, 2)
        fit = np.polynomial.polynomial.polyval(t, coef).T
        res = np.sqrt(((fit - ys) ** 2).sum(axis=0) / 5)
        spread = ys.max(axis=0) - ys.min(axis=0)
        bad = (diff_atol + diff_rtol * spread < res) & (spread != 0)
        if bad.any():
            raise error(
                i_out,
                f"diff_rtol: {diff_rtol}\ndiff_atol: {diff_atol}\n"
                f"fitting errors: {res.reshape(yss[0][i_out].shape)}\n",
            )


def _unit_direction(size: int, xp: Any) -> Any:
    """A random unit vector whose elements are not much smaller than ``1 / sqrt(size)``: the
    weighted quadratic mean of ``|r| / |r|_2`` and ``1 / sqrt(size)``, with r's signs."""
    r = xp.random.normal(size=(size,))
    if size == 0:
        return r
    sq = xp.square(r)
    return xp.copysign(xp.sqrt((0.99 / sq.sum()) * sq + 0.01 / size), r)


def _clear(vs: Sequence[Any]) -> None:
    for v in vs:
        if v is not None:
            v.grad_var = None


def _backward(ys: Sequence[Any], gys: Sequence[Any], double: bool = False) -> None:
    pairs = [(y, gy) for y, gy in zip(ys, gys) if y is not None and gy is not None]
    if pairs:
        backward([y for y, _ in pairs], [gy for _, gy in pairs], enable_double_backprop=double)


def check_backward(
    func: Callable[..., Any],
    x_data: Any,
    y_grad: Any,
    params: Any = (),
    eps: float = 1e-3,
    atol: float = 1e-5,
    rtol: float = 1e-4,
    no_grads: Sequence[bool] | None = None,
    dtype: Any = None,
    detect_nondifferentiable: bool = False,
) -> None:
    """Check the backward pass of ``func`` (Variables in, a Variable or a tuple out) at
    ``x_data`` (an array or a tuple of arrays) against central differences along one random
    direction; raise AssertionError when they differ beyond ``atol + rtol * |backward|``.

    ``y_grad``: the output gradients (None for a function returning one 0-d Variable: 1);
    ``params``: Variables (a link's parameters) also differentiated and perturbed in place;
    ``no_grads``: which inputs not to check (default: the non-floating ones); ``dtype``: the
    float dtype the numeric differences are computed in. A gradient computed for an input in
    ``no_grads`` raises RuntimeError, as chainer.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> from gradhub_compat.chainer import gradient_check
        >>> gradient_check.check_backward(F.sin, np.array([0.5, 1.0]), np.ones(2))
    """
    if dtype is not None and np.dtype(dtype).kind != "f":
        raise ValueError("chainer check_backward: `dtype` is allowed only float type")
    xs = _as_tuple(x_data)
    params = _as_tuple(params)
    if no_grads is None:
        no_gxs = [None if x is None else x.dtype.kind != "f" for x in xs]
    else:
        if len(no_grads) != len(xs):
            raise ValueError(
                "Length of no_grads param and xs should be same.\n"
                f"Actual: {len(no_grads)} != {len(xs)}"
            )
        no_gxs = list(no_grads)
    xp = _xp(xs)
    x_vars = [None if x is None else Variable(x, requires_grad=x.dtype.kind == "f") for x in xs]
    ys = _as_tuple(func(*x_vars))
    _clear(x_vars)
    _clear(params)
    ys0 = tuple(None if y is None else y.array for y in ys)
    if y_grad is None:
        if not (len(ys) == 1 and ys[0].shape == ()):
            raise ValueError(
                "y_grad argument cannot be omitted if the target function is not a loss "
                "function, which has a single output with shape ().\nActual output shapes: "
                + ", ".join(str(y.shape) for y in ys)
            )
        gys: tuple[Any, ...] = tuple(xp.ones_like(y.array) for y in ys)
    else:
        gys = _as_tuple(y_grad)
        if len(gys) != len(ys):
            raise ValueError(
                f"chainer check_backward: {len(ys)} outputs but {len(gys)} output gradients"
            )
        for k, (y, gy) in enumerate(zip(ys, gys)):
            if y is not None and gy is not None and tuple(gy.shape) != tuple(y.shape):
                raise ValueError(
                    f"chainer check_backward: y_grad[{k}] has shape {tuple(gy.shape)}, output "
                    f"{k} has shape {tuple(y.shape)}"
                )
    gys = tuple(None if y is None else gy for gy, y in zip(gys, ys0))

    shapes = [None if x is None else x.shape for x, no in zip(xs, no_gxs) if not no]
    shapes += [p.shape for p in params]
    total = sum(int(np.prod(s)) for s in shapes if s is not None)
    packed = _unit_direction(total, xp)
    directions: list[Any] = []
    offset = 0
    for s in shapes:
        if s is None:
            directions.append(None)
            continue
        n = int(np.prod(s))
        directions.append(packed[offset : offset + n].reshape(s))
        offset += n

    # the backward pass
    _backward(ys, [None if gy is None else Variable(gy.copy(), requires_grad=False) for gy in gys])
    for no, v in zip(no_gxs, x_vars):
        if no and v is not None and v.grad is not None:
            raise RuntimeError("gradient of int variable must be None")
    grads = [None if v is None else v.grad for v, no in zip(x_vars, no_gxs) if not no]
    grads += [p.grad for p in params]
    backward_value = 0.0
    for gx, d in zip(grads, directions):
        if gx is not None:
            backward_value += float((gx.astype(np.float64) * d).sum())

    # the numeric derivative along the direction
    fixed = [None if x is None else Variable(x, requires_grad=False) for x in xs]
    moving = [x for x, no in zip(xs, no_gxs) if not no] + [p.array for p in params]
    if dtype is not None:
        for v, no in zip(fixed, no_gxs):
            if no and v is not None and v.array.dtype.kind == "f":
                v.array = v.array.astype(dtype, copy=False)
        moving = [None if a is None else a.astype(dtype, copy=False) for a in moving]
    delta = xp.array(0.0, np.float64)

    def shifted(a: Any, d: Any) -> Any:
        if a is None:
            return None
        out = (a.astype(np.float64) + delta * d).astype(a.dtype)
        return xp.asarray(out)

    def g() -> tuple[Any, ...]:
        args: list[Any] = []
        j = 0
        for v, no in zip(fixed, no_gxs):
            if no:
                args.append(v)
            else:
                a = shifted(moving[j], directions[j])
                args.append(None if a is None else Variable(a))
                j += 1
        for i, p in enumerate(params):
            p.array = shifted(moving[j + i], directions[j + i])
        _clear(args)
        _clear(params)
        try:
            out = _as_tuple(func(*args))
        finally:
            for i, p in enumerate(params):
                p.array = moving[j + i]
        return tuple(None if y is None else y.array for y in out)

    (numeric,) = numerical_grad(
        g,
        (delta,),
        gys,
        eps=eps,
        detect_nondifferentiable=detect_nondifferentiable,
        center_outputs=ys0,
        diff_atol=0,
        diff_rtol=rtol,
    )
    try:
        _assert_allclose(numeric, backward_value, atol, rtol)
    except AssertionError as e:
        f = io.StringIO()
        f.write(f"check_backward failed (eps={eps} atol={atol} rtol={rtol})\n")
        for i, x in enumerate(xs):
            f.write(f"inputs[{i}]:\n{x}\n")
        for i, gy in enumerate(gys):
            f.write(f"grad_outputs[{i}]:\n{gy}\n")
        for i, d in enumerate(directions):
            f.write(f"directions[{i}]:\n{d}\n")
        f.write(f"gradients (numeric):  {numeric}\n")
        f.write(f"gradients (backward): {backward_value}\n\n")
        f.write("x: numeric gradient, y: backward gradient")
        f.write(str(e))
        raise AssertionError(f.getvalue()) from None


def check_double_backward(
    func: Callable[..., Any],
    x_data: Any,
    y_grad: Any,
    x_grad_grad: Any,
    params: Any = (),
    params_grad_grad: Any = (),
    eps: float = 1e-3,
    atol: float = 1e-4,
    rtol: float = 1e-3,
    no_grads: Sequence[bool] | None = None,
    dtype: Any = None,
    detect_nondifferentiable: bool = False,
) -> None:
    """Check the second-order backward pass of ``func``: :func:`check_backward` of the
    function ``(x, gy) -> d(sum(func(x) * gy))/dx`` (computed with
    ``enable_double_backprop=True``), with ``x_grad_grad`` (and ``params_grad_grad``) as its
    output gradients. The first-order gradients are assumed right (check them with
    :func:`check_backward`). ``no_grads`` applies to the inputs and the output gradients.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> from gradhub_compat.chainer import gradient_check
        >>> x = np.array([0.5, 1.0])
        >>> gradient_check.check_double_backward(F.tanh, x, np.ones(2), np.ones(2))
    """
    from . import functions as F

    xs = _as_tuple(x_data)
    params = _as_tuple(params)
    gys = _as_tuple(y_grad)
    ggxs = _as_tuple(x_grad_grad)
    ggparams = _as_tuple(params_grad_grad)
    n_x = len(xs)
    first_no = [x.dtype.kind != "f" for x in xs]

    def first_order_grad(*inputs: Any) -> tuple[Any, ...]:
        xv = inputs[:n_x]
        ys = _as_tuple(func(*xv))
        gv = [
            None if gy is None or y is None else F.cast(gy, y.dtype)
            for y, gy in zip(ys, inputs[n_x:])
        ]
        _backward(ys, gv, double=True)
        errors = []
        gxs = []
        for i, (no, x) in enumerate(zip(first_no, xv)):
            if no:
                if x.grad is not None:
                    errors.append(f"[{i}]: Gradient was calculated while expected to not.")
            else:
                gxs.append(x.grad_var)
        if errors:
            raise RuntimeError(
                "There are errors retrieving first-order gradients:\n" + "\n".join(errors)
            )
        return tuple(gxs + [p.grad_var for p in params])

    try:
        check_backward(
            first_order_grad,
            xs + gys,
            ggxs + ggparams,
            params=params,
            eps=eps,
            atol=atol,
            rtol=rtol,
            no_grads=no_grads,
            dtype=dtype,
            detect_nondifferentiable=detect_nondifferentiable,
        )
    except AssertionError as e:
        f = io.StringIO()
        f.write(f"check_double_backward failed (eps={eps} atol={atol} rtol={rtol})\n")
        for i, x in enumerate(xs):
            f.write(f"input[{i}]:\n{x}\n")
        for i, gy in enumerate(gys):
            f.write(f"grad_output[{i}]:\n{gy}\n")
        for i, ggx in enumerate(ggxs):
            f.write(f"grad_grad_input[{i}]:\n{ggx}\n")
        f.write(f"\n{e}")
        raise AssertionError(f.getvalue()) from e
