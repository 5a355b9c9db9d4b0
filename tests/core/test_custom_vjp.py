"""gradhub.func.custom_vjp: a function with its author's vector-Jacobian product (JAX's
``jax.custom_vjp``): first and higher derivatives from ``bwd``, non-differentiable arguments,
several outputs, re-executed and compiled graphs, forward mode, and the errors."""

from __future__ import annotations

from typing import Any

import gradhub as gh
import numpy as np
import pytest
from gradhub.func import custom_vjp, grad, hessian, jvp, vjp


def _cube_times(counts: dict[str, int] | None = None) -> custom_vjp:
    """x^3 y whose bwd is deliberately not the true derivative: 3 x^2 y^2 for x. (Core
    functions only: these tests run without plugins.)"""

    def fun(x: Any, y: Any) -> Any:
        if counts is not None:
            counts["fun"] += 1
        return x * x * x * y

    f = custom_vjp(fun)

    def fwd(x: Any, y: Any) -> Any:
        if counts is not None:
            counts["fwd"] += 1
        return x * x * x * y, (x, y)

    def bwd(res: Any, g: Any) -> Any:
        x, y = res
        gy = x * x * x * g
        return (3.0 * x * x * y * y * g, gy.sum() if gy.ndim else gy)

    f.defvjp(fwd, bwd)
    return f


def _scalars() -> tuple[gh.Variable, gh.Variable]:
    return gh.Variable(np.array(3.0)), gh.Variable(np.array(4.0))


def test_derivatives_are_bwd_s_and_match_jax() -> None:
    f = _cube_times()
    x, y = _scalars()
    # jax 0.10.2, the same custom_vjp (x64): 432.0, 27.0, 288.0, 216.0
    assert grad(f)(x, y).d == 432.0
    assert grad(f, 1)(x, y).d == 27.0
    assert grad(grad(f))(x, y).d == 288.0
    assert grad(grad(f), 1)(x, y).d == 216.0


def test_hessian_through_bwd_against_the_formula() -> None:
    # g(x) = x f(x, y) with f's custom derivative 3 x^2 y^2: g'' = 12 x^2 y^2 = 1728 (jax refuses
    # forward mode through a custom_vjp function; gradhub transposes the rule)
    f = _cube_times()
    x, y = _scalars()
    assert hessian(lambda v: v * f(v, y))(x).d == 1728.0
    t = jvp(lambda v: f(v, y), (x,), (gh.Variable(np.array(1.0)),))[1]
    assert t.d == 432.0


def test_first_order_uses_the_forward_s_residuals_and_fun_runs_without_gradients() -> None:
    counts = {"fun": 0, "fwd": 0}
    f = _cube_times(counts)
    x, y = _scalars()
    out = f(x, y)
    assert counts == {"fun": 0, "fwd": 1}
    (gx,) = gh.grad([out], [x], create_graph=False)
    assert counts == {"fun": 0, "fwd": 1}  # the first-order backward recomputes nothing
    assert gx.d == 432.0
    with gh.no_grad():
        f(x, y)
    f(np.array(1.0), gh.Variable(np.array(2.0), need_grad=False))  # nothing needs a gradient
    assert counts == {"fun": 2, "fwd": 1}
    gh.grad([f(x, y)], [x])  # a recorded backward too: fwd ran once, at the call
    assert counts == {"fun": 2, "fwd": 2}


def test_nondiff_argnums_come_first_in_bwd() -> None:
    seen = []

    def bwd(c: float, res: Any, g: Any) -> Any:
        seen.append(c)
        return (g * c,)

    f = custom_vjp(lambda c, x: x * 1.0, nondiff_argnums=(0,))
    f.defvjp(lambda c, x: (x * 1.0, None), bwd)
    # jax 0.10.2: grad(lambda x: scale_grad(3.0, x) ** 2)(2.0) == 12.0
    assert grad(lambda x: f(3.0, x) ** 2)(gh.Variable(np.array(2.0))).d == pytest.approx(12.0)
    assert seen == [3.0]


def test_several_outputs_and_a_zero_cotangent() -> None:
    f = custom_vjp(lambda x: (x * 2.0, x * 3.0))
    f.defvjp(
        lambda x: ((x * 2.0, x * 3.0), None),
        lambda res, g: (g[0] * 20.0 + g[1] * 30.0,),
    )
    x = gh.Variable(np.array([1.0, 2.0]))
    _, b = f(x)
    (gx,) = gh.grad([b.sum()], [x])  # no gradient reaches a: g[0] is zeros
    np.testing.assert_array_equal(gx.d, [30.0, 30.0])
    none = custom_vjp(lambda x, y: x * y)
    none.defvjp(lambda x, y: (x * y, y), lambda y, g: (g * y, None))
    x, y = gh.Variable(np.array(2.0)), gh.Variable(np.array(5.0))
    gx, gy = gh.grad([none(x, y)], [x, y])
    assert gx.d == 5.0 and gy.d == 0.0


def test_a_static_graph_runs_fwd_again_and_a_compiled_step_replays_it() -> None:
    f = _cube_times()
    y = gh.Variable(np.array(4.0))
    a = gh.Variable(np.array([1.0, 2.0]))
    z = f(a, y).sum()
    a.d = np.array([0.5, 0.25])
    z.forward()
    assert z.d == pytest.approx((np.array([0.5, 0.25]) ** 3 * 4.0).sum())
    z.backward()
    np.testing.assert_allclose(a.g, 3.0 * np.array([0.5, 0.25]) ** 2 * 16.0)

    w = gh.Variable(np.array([0.1, 0.2, 0.3]))
    step = gh.compile(lambda: gh.grad([f(w, y).sum()], [w])[0])
    for k in range(3):
        w.d = np.array([0.1, 0.2, 0.3]) * (k + 1)
        got = step()
        np.testing.assert_allclose(np.asarray(getattr(got, "d", got)), 3.0 * w.d**2 * 16.0)


def test_vjp_transform_and_arrays_as_arguments() -> None:
    f = _cube_times()
    out, fn = vjp(lambda x: f(x, np.array(4.0)), gh.Variable(np.array([3.0])))
    assert out.d[0] == 108.0
    (gx,) = fn(gh.Variable(np.array([2.0])))
    assert gx.d[0] == 2.0 * 432.0


def test_errors_name_the_function_and_the_argument() -> None:
    f = custom_vjp(lambda x: x * 1.0)
    x = gh.Variable(np.array([1.0, 2.0]))
    with pytest.raises(gh.GradhubError, match=r"<lambda>: no VJP defined; call .*defvjp"):
        f(x)
    f.defvjp(lambda x: (x * 1.0, None), lambda res, g: (g, g))
    with pytest.raises(gh.BackwardRuleError, match="bwd must return a tuple of 1 cotangent"):
        gh.grad([f(x).sum()], [x])
    f.defvjp(lambda x: (x * 1.0, None), lambda res, g: (g.sum(),))
    with pytest.raises(gh.BackwardRuleError, match=r"argument 0 has shape \(\), expected .*\(2,\)"):
        gh.grad([f(x).sum()], [x])
    f.defvjp(lambda x: (x * 1.0, None), lambda res, g: (np.ones(2),))
    (gx,) = gh.grad([f(x).sum()], [x], create_graph=False)  # an array is fine at first order
    np.testing.assert_array_equal(gx.d, [1.0, 1.0])
    with pytest.raises(gh.BackwardRuleError, match="bwd returned an array for differentiable"):
        gh.grad([f(x).sum()], [x], create_graph=True)
    f.defvjp(lambda x: x * 1.0, lambda res, g: (g,))
    with pytest.raises(TypeError, match="fwd must return a pair"):
        f(x)
    g = custom_vjp(lambda s, x: x)
    g.defvjp(lambda s, x: (x, None), lambda res, g: (None, g))
    with pytest.raises(TypeError, match="argument 0 must be a Variable or an array"):
        g("mode", x)
    with pytest.raises(TypeError, match="'fun' must be callable"):
        custom_vjp(3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="defvjp: bwd must be callable"):
        f.defvjp(lambda x: (x, None), None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="nondiff_argnums names argument 2"):
        h = custom_vjp(lambda x: x, nondiff_argnums=2)
        h.defvjp(lambda x: (x, None), lambda *a: (None,))
        h(x)


def test_bwd_gets_the_residuals_of_the_call_at_every_order() -> None:
    # a random draw in fwd (a dropout-like mask): the gradient uses the mask of the value,
    # through gh.grad (which records), grad(), and a second derivative
    rng = np.random.default_rng(0)
    calls = []

    def fwd(x: Any) -> Any:
        calls.append(1)
        m = gh.Variable((rng.random(x.shape) > 0.5) * 2.0, need_grad=False)
        return x * m, m

    drop = custom_vjp(lambda x: x * 1.0)
    drop.defvjp(fwd, lambda m, g: (g * m,))
    x = gh.Variable(np.arange(1.0, 9.0))
    y = drop(x)
    (g,) = gh.grad([(y * x).sum()], [x])  # (recorded: create_graph=True by default)
    np.testing.assert_array_equal(g.d, 2.0 * y.d)
    (h,) = gh.grad([g.sum()], [x])
    np.testing.assert_array_equal(h.d, 2.0 * (y.d / x.d))
    assert len(calls) == 1  # fwd ran once, at the call


def test_keyword_arguments_are_bound_to_fun() -> None:
    # jax 0.10.2: grad of f(x, scale=3.0) with bwd (g * scale,) is 3.0
    def fun(x: Any, scale: float = 2.0) -> Any:
        return x * scale

    f = custom_vjp(fun, nondiff_argnums=(1,))
    f.defvjp(lambda x, s: (x * s, None), lambda s, r, g: (g * s,))
    x = gh.Variable(np.array(1.0))
    assert grad(lambda v: f(v, scale=3.0))(x).d == 3.0
    assert grad(lambda v: f(v))(x).d == 2.0
    with pytest.raises(TypeError, match=r"custom_vjp function fun: .*unexpected keyword"):
        f(x, size=3.0)
