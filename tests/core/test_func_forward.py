"""gradhub.func's forward-mode transforms and their compositions (CONTRACT section 3): ``jvp``,
``jacfwd``, ``hvp``, ``vhp`` and ``hessian`` against closed forms and float64 central
differences; composition to third order (``jacfwd(jacrev(f))``, ``jvp`` of ``grad``, the
derivative of a Hessian); tuple conventions; float32; the link to the caller's Variables; the
bad inputs with their messages. Core functions only."""

from __future__ import annotations

from typing import Any

import gradhub as gh
import gradhub.func as ghf
import numpy as np
import pytest
from func_helpers import X, Y, f_scalar, f_scalar_np, f_vec, f_vec_np, num_jac

RNG = np.random.default_rng(1)


def num_hessian(fn: Any, x: np.ndarray) -> np.ndarray:
    """Central differences of the closed-form gradient ``fn``."""
    return num_jac(fn, [x], 0)


def test_jvp_is_the_jacobian_times_the_tangent() -> None:
    tx, ty = RNG.standard_normal(4), RNG.standard_normal(3)
    out, t = ghf.jvp(f_vec, (X, Y), (tx, ty))
    np.testing.assert_allclose(out.d, f_vec_np(X, Y))
    expected = num_jac(f_vec_np, [X, Y], 0) @ tx + num_jac(f_vec_np, [X, Y], 1) @ ty
    np.testing.assert_allclose(t.d, expected, rtol=1e-6, atol=1e-7)


def test_jvp_tuple_outputs_aux_and_identity() -> None:
    x = np.array([1.0, 2.0])
    v = np.array([0.5, -1.0])
    (a, b), (ta, tb), aux = ghf.jvp(lambda x: ((x * x, x.sum()), 7), (x,), (v,), has_aux=True)
    assert aux == 7
    np.testing.assert_allclose(a.d, x * x)
    assert float(b.d) == 3.0
    np.testing.assert_allclose(ta.d, 2 * x * v)
    np.testing.assert_allclose(tb.d, v.sum())
    _, t = ghf.jvp(lambda x: x, (x,), (v,))
    np.testing.assert_allclose(t.d, v)
    _, t = ghf.jvp(lambda x: x.sum() * 0.0 + 3.0, (x,), (v,))  # constant in x
    np.testing.assert_allclose(t.d, 0.0)


def test_jacfwd_equals_jacrev_and_central_differences() -> None:
    jf = ghf.jacfwd(f_vec, argnums=(0, 1))(X, Y)
    jr = ghf.jacrev(f_vec, argnums=(0, 1))(X, Y)
    for a, b, i in zip(jf, jr, (0, 1)):
        assert a.shape == b.shape
        np.testing.assert_allclose(a.d, b.d, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(a.d, num_jac(f_vec_np, [X, Y], i), rtol=1e-6, atol=1e-7)
    w = RNG.standard_normal((2, 3))
    v = RNG.standard_normal(3)
    np.testing.assert_allclose(
        ghf.jacfwd(lambda w: w @ v)(w).d, ghf.jacrev(lambda w: w @ v)(w).d, atol=1e-14
    )


def _grad_np(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return num_jac(f_scalar_np, [x, y], 0)


def test_hessian_closed_form_and_central_differences() -> None:
    x = np.array([1.0, -2.0, 0.5])
    # f = sum(x^3) + x0 x1 x2: H = diag(6x) + off-diagonals x_k
    h = ghf.hessian(lambda x: (x**3.0).sum() + x[0] * x[1] * x[2])(x)
    expected = np.diag(6 * x) + np.array(
        [[0, x[2], x[1]], [x[2], 0, x[0]], [x[1], x[0], 0]], dtype=float
    )
    np.testing.assert_allclose(h.d, expected)
    g = ghf.grad(f_scalar)
    hx = ghf.hessian(f_scalar)(X, Y)
    fd = num_jac(lambda x: g(x, Y).d, [X], 0)
    np.testing.assert_allclose(hx.d, fd, rtol=1e-6, atol=1e-6)
    hh = ghf.hessian(f_scalar, argnums=(0, 1))(X, Y)
    assert [[b.shape for b in row] for row in hh] == [[(4, 4), (4, 3)], [(3, 4), (3, 3)]]
    np.testing.assert_allclose(hh[0][0].d, hx.d, atol=1e-12)
    np.testing.assert_allclose(hh[0][1].d, hh[1][0].d.T, atol=1e-10)


def test_hvp_and_vhp_equal_the_hessian_times_v() -> None:
    v = (RNG.standard_normal(4), RNG.standard_normal(3))
    hh = ghf.hessian(f_scalar, argnums=(0, 1))(X, Y)
    full = np.block([[hh[0][0].d, hh[0][1].d], [hh[1][0].d, hh[1][1].d]])
    expected = full @ np.concatenate(v)
    for transform in (ghf.hvp, ghf.vhp):
        y, prod = transform(f_scalar, (X, Y), v)
        assert isinstance(prod, tuple) and len(prod) == 2
        np.testing.assert_allclose(float(y.d), f_scalar_np(X, Y))
        np.testing.assert_allclose(np.concatenate([p.d for p in prod]), expected, rtol=1e-10)


def test_jvp_of_grad_and_third_order_compositions() -> None:
    def f(x: Any) -> Any:
        return (x**4.0).sum() + (x[0] * x[1]) ** 2.0

    x = np.array([1.5, -0.5])
    v = np.array([1.0, 2.0])
    _, t = ghf.jvp(ghf.grad(f), (x,), (v,))
    h = ghf.hessian(f)(x)
    np.testing.assert_allclose(t.d, h.d @ v, rtol=1e-12)
    # third derivatives: jacfwd(jacrev(jacrev(f))) against central differences of the Hessian
    t3 = ghf.jacfwd(ghf.jacfwd(ghf.jacrev(f)))(x)
    assert t3.shape == (2, 2, 2)
    fd = num_jac(lambda z: ghf.hessian(f)(z).d, [x], 0)
    np.testing.assert_allclose(t3.d, fd, rtol=1e-6, atol=1e-6)
    # closed form: d^3/dx0^3 = 24 x0, d^3/dx0^2 dx1 = 4 x1 ... for (x0 x1)^2 = x0^2 x1^2
    np.testing.assert_allclose(t3.d[0, 0, 0], 24 * x[0])
    np.testing.assert_allclose(t3.d[0, 0, 1], 4 * x[1])
    np.testing.assert_allclose(t3.d[0, 1, 1], 4 * x[0])
    # jvp of jvp: the second directional derivative v^T H v
    _, tt = ghf.jvp(lambda z: ghf.jvp(f, (z,), (v,))[1], (x,), (v,))
    np.testing.assert_allclose(float(tt.d), v @ h.d @ v, rtol=1e-12)


def test_float32_stays_float32() -> None:
    x = np.array([1.0, 2.0], dtype=np.float32)
    _, t = ghf.jvp(lambda x: x**3.0, (x,), (np.ones(2),))  # a float64 tangent is cast
    assert t.dtype == np.float32
    assert ghf.jacfwd(lambda x: x * x)(x).dtype == np.float32
    assert ghf.hessian(lambda x: (x**3.0).sum())(x).dtype == np.float32
    y, (hv,) = ghf.hvp(lambda x: (x**3.0).sum(), (x,), (np.ones(2),))
    assert y.dtype == hv.dtype == np.float32


def test_hvp_results_reach_the_callers_x_and_v() -> None:
    x = gh.Variable(np.array([1.0, 2.0]))
    v = gh.Variable(np.array([3.0, -1.0]))
    _, (hv,) = ghf.hvp(lambda z: (z**3.0).sum(), (x,), (v,))  # 6 x v
    np.testing.assert_allclose(hv.d, 6 * x.d * v.d)
    gx, gv = gh.grad([hv.sum()], [x, v])
    np.testing.assert_allclose(gx.d, 6 * v.d)
    np.testing.assert_allclose(gv.d, 6 * x.d)


def test_tangent_of_the_wrong_shape_or_count_raises_naming_it() -> None:
    with pytest.raises(
        ValueError,
        match=r"jvp: tangents\[1\] has shape \(2,\) but primals\[1\] has shape \(3,\) "
        r"\(shapes must match exactly: no broadcasting\)",
    ):
        ghf.jvp(f_vec, (X, Y), (np.ones(4), np.ones(2)))
    with pytest.raises(ValueError, match=r"jvp: tangents has 1 entries but primals has 2"):
        ghf.jvp(f_vec, (X, Y), (np.ones(4),))
    with pytest.raises(TypeError, match=r"jvp: primals must be a tuple"):
        ghf.jvp(lambda x: x, X, (X,))
    with pytest.raises(ValueError, match=r"hvp: v\[0\] has shape \(\) but primals\[0\] has shape"):
        ghf.hvp(lambda x: x.sum(), (X,), (1.0,))
    with pytest.raises(ValueError, match=r"vhp: f must return a scalar"):
        ghf.vhp(lambda x: x, (X,), (X,))
    with pytest.raises(ValueError, match=r"jacfwd: argnums=1 is out of range"):
        ghf.jacfwd(lambda x: x, argnums=1)(X)
    with pytest.raises(ValueError, match=r"jac(fwd|rev): argnums=3 is out of range"):
        ghf.hessian(f_scalar, argnums=3)(X, Y)


def test_outputs_independent_of_the_inputs_give_zero_derivatives() -> None:
    c = gh.Variable(np.ones(2), need_grad=False)
    x = np.ones(3)
    np.testing.assert_array_equal(ghf.jvp(lambda x: c * 2.0, (x,), (x,))[1].d, np.zeros(2))
    for jac in (ghf.jacrev, ghf.jacfwd):
        np.testing.assert_array_equal(jac(lambda x: c * 2.0)(x).d, np.zeros((2, 3)))
        np.testing.assert_array_equal(jac(lambda x: x)(np.ones(2)).d, np.eye(2))
    np.testing.assert_array_equal(ghf.hessian(lambda x: (x * 2.0).sum())(x).d, np.zeros((3, 3)))
    _, (hv,) = ghf.hvp(lambda x: (x * 2.0).sum(), (x,), (x,))
    np.testing.assert_array_equal(hv.d, np.zeros(3))
