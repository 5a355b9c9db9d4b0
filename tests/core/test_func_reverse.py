"""gradhub.func's reverse-mode transforms (CONTRACT section 3): ``vjp``, ``grad``,
``value_and_grad`` and ``jacrev`` against closed forms and float64 central differences, with
``argnums`` (int, tuple, negative), ``has_aux``, tuple outputs, float32 preservation, the link to
the caller's Variables, and the bad inputs with their messages. Core functions only."""

from __future__ import annotations

from typing import Any

import gradhub as gh
import gradhub.func as ghf
import numpy as np
import pytest
from func_helpers import RNG, X, Y, f_scalar, f_scalar_np, f_vec, f_vec_np, num_jac


def test_grad_matches_central_differences_for_each_argnum() -> None:
    gx = ghf.grad(f_scalar)(X, Y)
    gy = ghf.grad(f_scalar, argnums=1)(X, Y)
    np.testing.assert_allclose(gx.d, num_jac(f_scalar_np, [X, Y], 0), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(gy.d, num_jac(f_scalar_np, [X, Y], 1), rtol=1e-6, atol=1e-7)
    both = ghf.grad(f_scalar, argnums=(1, 0))(X, Y)
    assert isinstance(both, tuple) and len(both) == 2
    np.testing.assert_allclose(both[0].d, gy.d)
    np.testing.assert_allclose(both[1].d, gx.d)
    np.testing.assert_allclose(ghf.grad(f_scalar, argnums=-1)(X, Y).d, gy.d)


def test_grad_closed_form_and_keyword_arguments_pass_through() -> None:
    def f(x: Any, *, scale: float) -> Any:
        return (x**3.0).sum() * scale

    x = np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(ghf.grad(f)(x, scale=2.0).d, 6.0 * x**2)


def test_value_and_grad_and_has_aux() -> None:
    def f(x: Any) -> Any:
        y = (x * x).sum()
        return y, {"y2": y * 2.0}

    x = np.array([1.0, 2.0])
    (value, aux), g = ghf.value_and_grad(f, has_aux=True)(x)
    assert float(value.d) == 5.0 and float(aux["y2"].d) == 10.0
    np.testing.assert_allclose(g.d, 2 * x)
    g2, aux2 = ghf.grad(f, has_aux=True)(x)
    np.testing.assert_allclose(g2.d, 2 * x)
    assert float(aux2["y2"].d) == 10.0
    v, (ga, gb) = ghf.value_and_grad(lambda a, b: (a * b).sum(), argnums=(0, 1))(x, 3.0 * x)
    assert float(v.d) == 15.0
    np.testing.assert_allclose(ga.d, 3.0 * x)
    np.testing.assert_allclose(gb.d, x)


def test_grad_of_grad_of_grad_gives_third_derivatives() -> None:
    def f(x: Any) -> Any:
        return (x**4.0).sum()

    def d2(x: Any) -> Any:
        return ghf.grad(lambda z: ghf.grad(f)(z).sum())(x)

    d3 = ghf.grad(lambda z: d2(z).sum())
    x = np.array([0.5, -1.5, 2.0])
    np.testing.assert_allclose(d2(x).d, 12.0 * x**2)
    np.testing.assert_allclose(d3(x).d, 24.0 * x)


def test_vjp_matches_jacobian_transpose_and_can_be_called_twice() -> None:
    out, vjp_fn = ghf.vjp(f_vec, X, Y)
    np.testing.assert_allclose(out.d, f_vec_np(X, Y))
    jx = num_jac(f_vec_np, [X, Y], 0)
    jy = num_jac(f_vec_np, [X, Y], 1)
    for u in (np.array([1.0, 0.0, -2.0]), RNG.standard_normal(3)):
        gx, gy = vjp_fn(u)
        np.testing.assert_allclose(gx.d, u @ jx, rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(gy.d, u @ jy, rtol=1e-6, atol=1e-7)
    (g,) = ghf.vjp(lambda x: x * 2.0, X)[1](np.ones(4))
    assert isinstance(g, gh.Variable)


def test_vjp_with_tuple_outputs_and_aux() -> None:
    x = np.array([1.0, 2.0])
    (a, b), vjp_fn, aux = ghf.vjp(lambda x: ((x * x, x.sum()), "aux"), x, has_aux=True)
    assert aux == "aux"
    np.testing.assert_allclose(a.d, x * x)
    assert float(b.d) == 3.0
    (g,) = vjp_fn((np.array([1.0, 1.0]), np.array(3.0)))
    np.testing.assert_allclose(g.d, 2 * x + 3.0)
    with pytest.raises(ValueError, match=r"vjp_fn: f returned 2 outputs, so cotangents must be"):
        vjp_fn(np.ones(2))


def test_jacrev_against_central_differences_with_tuple_argnums_and_outputs() -> None:
    jx = ghf.jacrev(f_vec)(X, Y)
    assert jx.shape == (3, 4)
    np.testing.assert_allclose(jx.d, num_jac(f_vec_np, [X, Y], 0), rtol=1e-6, atol=1e-7)
    jxy = ghf.jacrev(f_vec, argnums=(0, 1))(X, Y)
    assert isinstance(jxy, tuple) and [j.shape for j in jxy] == [(3, 4), (3, 3)]
    np.testing.assert_allclose(jxy[1].d, num_jac(f_vec_np, [X, Y], 1), rtol=1e-6, atol=1e-7)
    two = ghf.jacrev(lambda x: (x * x, (x**3.0).sum()))(np.array([1.0, 2.0]))
    assert isinstance(two, tuple)
    np.testing.assert_allclose(two[0].d, np.diag([2.0, 4.0]))
    np.testing.assert_allclose(two[1].d, [3.0, 12.0])


def test_jacrev_of_matrix_input_has_out_shape_plus_in_shape() -> None:
    w = RNG.standard_normal((2, 3))
    v = RNG.standard_normal(3)
    j = ghf.jacrev(lambda w: w @ v)(w)
    assert j.shape == (2, 2, 3)
    expected = np.zeros((2, 2, 3))
    expected[0, 0] = v
    expected[1, 1] = v
    np.testing.assert_allclose(j.d, expected)


def test_float32_stays_float32() -> None:
    x = np.array([1.0, 2.0], dtype=np.float32)
    assert ghf.grad(lambda x: (x**3.0).sum())(x).dtype == np.float32
    assert ghf.jacrev(lambda x: x * x)(x).dtype == np.float32
    (g,) = ghf.vjp(lambda x: x * x, x)[1](np.ones(2))  # a float64 cotangent is cast
    assert g.dtype == np.float32
    v, g = ghf.value_and_grad(lambda x: (x * x).sum())(gh.Variable([1.0, 2.0]))
    assert v.dtype == g.dtype == np.float32


def test_results_stay_connected_to_the_callers_variables() -> None:
    x = gh.Variable(np.array([1.0, 2.0]))
    g = ghf.grad(lambda z: (z**3.0).sum())(x)  # 3 x^2
    (gg,) = gh.grad([g.sum()], [x])
    np.testing.assert_allclose(gg.d, 6.0 * x.d)
    # a closed-over Variable stays connected too
    w = gh.Variable(np.array([2.0, -1.0]))
    g = ghf.grad(lambda z: (z * z * w).sum())(x)  # 2 z w
    (gw,) = gh.grad([g.sum()], [w])
    np.testing.assert_allclose(gw.d, 2.0 * x.d)


def test_under_no_grad_the_callers_variables_are_constants() -> None:
    x = gh.Variable(np.array([1.0, 2.0]))
    with gh.no_grad():
        g = ghf.grad(lambda z: (z**3.0).sum())(x)
    np.testing.assert_allclose(g.d, 3.0 * x.d**2)
    (gg,) = gh.grad([g.sum()], [x], unreachable="none")
    assert gg is None


def test_an_unused_argument_gets_zeros() -> None:
    # arguments not in argnums are passed as given
    x = gh.Variable(np.ones(2), need_grad=False)
    g = ghf.grad(lambda x, y: (x * x).sum(), argnums=1)(x, np.ones(3))
    np.testing.assert_array_equal(g.d, np.zeros(3))


@pytest.mark.parametrize(
    ("transform", "argnums", "message"),
    [
        (ghf.grad, 2, r"grad: argnums=2 is out of range: f was called with 2 positional"),
        (ghf.grad, -3, r"grad: argnums=-3 is out of range"),
        (ghf.jacrev, (0, 5), r"jacrev: argnums=\(0, 5\) is out of range"),
        (ghf.value_and_grad, (0, 0), r"value_and_grad: argnums=\(0, 0\) names an argument twice"),
    ],
)
def test_argnums_out_of_range_raises_naming_it(transform: Any, argnums: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        transform(lambda x, y: (x * y).sum(), argnums=argnums)(np.ones(2), np.ones(2))


def test_bad_argnums_types_and_bad_outputs_raise() -> None:
    with pytest.raises(TypeError, match=r"grad: argnums must be an int or a non-empty tuple"):
        ghf.grad(lambda x: x.sum(), argnums=[0])(np.ones(2))
    with pytest.raises(ValueError, match=r"grad: f must return a scalar \(a 0-d Variable\), got"):
        ghf.grad(lambda x: x * 2.0)(np.ones(2))
    with pytest.raises(TypeError, match=r"grad: with has_aux=True, f must return a pair"):
        ghf.grad(lambda x: x.sum(), has_aux=True)(np.ones(2))
    with pytest.raises(TypeError, match=r"jacrev: f must return a Variable or a tuple of Var"):
        ghf.jacrev(lambda x: 3.0)(np.ones(2))
    with pytest.raises(TypeError, match=r"grad: argument 0 must hold floating-point data"):
        ghf.grad(lambda x: x.sum())(np.array([1, 2]))


def test_cotangent_of_the_wrong_shape_raises_without_broadcasting() -> None:
    _, vjp_fn = ghf.vjp(lambda x: x * x, np.ones(3))
    with pytest.raises(
        ValueError,
        match=r"vjp_fn: cotangents has shape \(1,\) but the output has shape \(3,\) "
        r"\(shapes must match exactly: no broadcasting\)",
    ):
        vjp_fn(np.ones(1))
