"""gradhub.func.custom_jvp: a function with its author's Jacobian-vector product (JAX's
``jax.custom_jvp``): forward mode applies it, reverse mode transposes it, to any order; values
against jax 0.10.2 on the same function (float64)."""

from __future__ import annotations

from typing import Any

import gradhub as gh
import numpy as np
import pytest
from gradhub.func import custom_jvp, grad, hessian, jvp


def _f() -> custom_jvp:
    """x^3 y whose JVP is deliberately not the true one: 3 x^2 x' y^2 + x^3 y'. (Core functions
    only: these tests run without plugins.)"""

    @custom_jvp
    def f(x: Any, y: Any) -> Any:
        return x * x * x * y

    @f.defjvp
    def f_jvp(primals: Any, tangents: Any) -> Any:
        (x, y), (xd, yd) = primals, tangents
        return f(x, y), 3.0 * x * x * xd * y * y + x * x * x * yd

    return f


def test_both_modes_follow_the_custom_jvp_as_jax() -> None:
    f = _f()
    x, y = gh.Variable(np.array(3.0)), gh.Variable(np.array(4.0))
    # jax 0.10.2 (x64): grad x 432, grad y 27, grad grad x 288, grad_y grad_x 216, jvp 432,
    # hessian of x f(x, 4) 1728, vector grad [48, 192]
    assert grad(f)(x, y).d == 432.0
    assert grad(f, 1)(x, y).d == 27.0
    assert grad(grad(f))(x, y).d == 288.0
    assert grad(grad(f), 1)(x, y).d == 216.0
    assert jvp(lambda v: f(v, y), (x,), (gh.Variable(np.array(1.0)),))[1].d == 432.0
    assert hessian(lambda v: v * f(v, y))(x).d == 1728.0
    g = grad(lambda v: f(v, y).sum())(gh.Variable(np.array([1.0, 2.0])))
    np.testing.assert_array_equal(g.d, [48.0, 192.0])


def test_backward_static_graph_and_compiled_step() -> None:
    f = _f()
    y = gh.Variable(np.array(4.0), need_grad=False)
    a = gh.Variable(np.array([1.0, 2.0]))
    z = f(a, y).sum()
    a.d = np.array([0.5, 0.25])
    z.forward()
    assert z.d == pytest.approx((np.array([0.5, 0.25]) ** 3 * 4.0).sum())
    z.backward()
    np.testing.assert_allclose(a.g, 3.0 * np.array([0.5, 0.25]) ** 2 * 16.0)
    w = gh.Variable(np.array([0.1, 0.2]))
    step = gh.compile(lambda: gh.grad([f(w, y).sum()], [w], create_graph=False)[0])
    for k in range(3):
        w.d = np.array([0.1, 0.2]) * (k + 1)
        got = step()
        np.testing.assert_allclose(np.asarray(getattr(got, "d", got)), 3.0 * w.d**2 * 16.0)


def test_fun_runs_alone_without_gradients_and_errors_are_named() -> None:
    calls = []

    @custom_jvp
    def h(x: Any) -> Any:
        calls.append(1)
        return x * 2.0

    x = gh.Variable(np.array([1.0]))
    with pytest.raises(gh.GradhubError, match=r"h: no JVP defined; call h\.defjvp"):
        h(x)
    h.defjvp(lambda p, t: (h(p[0]), t[0] * 2.0))
    with gh.no_grad():
        h(x)
    assert calls == [1]
    h.defjvp(lambda p, t: t[0] * 2.0)
    with pytest.raises(gh.BackwardRuleError, match="must return a pair"):
        gh.grad([h(x).sum()], [x])
    with pytest.raises(TypeError, match="defjvp: jvp must be callable"):
        h.defjvp(3)  # type: ignore[arg-type]


def test_nondiff_arguments_come_first_in_the_jvp_rule_as_jax() -> None:
    # jax 0.10.2: f = custom_jvp(lambda n, x: x ** n, nondiff_argnums=(0,)) with
    # jvp(n, (x,), (t,)) = (x ** n, n x ** (n - 1) t): grad at (3, 2.0) is 12.0
    f = custom_jvp(lambda n, x: x**n, nondiff_argnums=(0,))
    seen = []

    @f.defjvp
    def f_jvp(n: int, primals: Any, tangents: Any) -> Any:
        seen.append((n, len(primals), len(tangents)))
        (x,), (t,) = primals, tangents
        return f(n, x), t * float(n) * x ** float(n - 1)

    assert grad(lambda v: f(3, v))(gh.Variable(np.array(2.0))).d == 12.0
    assert seen and all(s == (3, 1, 1) for s in seen)
