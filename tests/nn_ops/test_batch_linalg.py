"""The batch linear algebra of gradhub-nn-ops (BatchInv, BatchDet, BatchLogdet, BatchCholesky):
values against numpy on stacks with any leading axes, gradients to order 2 in float64, vmap,
integer inputs and argument checks."""

from __future__ import annotations

import gradhub as gh
import gradhub.func as ghf
import gradhub.functions as F
import numpy as np
import pytest
from gradhub.testing import gradcheck

RNG = np.random.default_rng(3)


def _mats(shape: tuple[int, ...]) -> np.ndarray:
    return RNG.standard_normal(shape) * 0.3 + 1.5 * np.eye(shape[-1])


def _spd(shape: tuple[int, ...]) -> np.ndarray:
    a = RNG.standard_normal(shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3), (2, 2, 3, 3), (0, 2, 2)])
def test_values_against_numpy(shape: tuple[int, ...]) -> None:
    a = _mats(shape)
    np.testing.assert_allclose(F.batch_inv(gh.Variable(a)).d, np.linalg.inv(a), rtol=1e-12)
    np.testing.assert_allclose(F.batch_det(gh.Variable(a)).d, np.linalg.det(a), rtol=1e-12)
    np.testing.assert_allclose(
        F.batch_logdet(gh.Variable(a)).d, np.log(np.abs(np.linalg.det(a))), rtol=1e-12
    )
    s = _spd(shape)
    low = F.batch_cholesky(gh.Variable(s)).d
    np.testing.assert_allclose(low, np.linalg.cholesky(s), rtol=1e-12)
    up = F.batch_cholesky(gh.Variable(s), upper=True).d
    np.testing.assert_allclose(up, np.swapaxes(np.linalg.cholesky(s), -1, -2), rtol=1e-12)
    np.testing.assert_allclose(np.swapaxes(up, -1, -2) @ up, s, rtol=1e-12, atol=1e-12)


def test_float32_kept() -> None:
    a = _mats((2, 3, 3)).astype(np.float32)
    for fn in (F.batch_inv, F.batch_det, F.batch_logdet):
        assert fn(gh.Variable(a)).dtype == np.float32
    assert F.batch_cholesky(gh.Variable(_spd((2, 3, 3)).astype(np.float32))).dtype == np.float32


def test_logdet_of_a_huge_determinant_does_not_overflow() -> None:
    a = np.eye(200)[None] * 1e3  # det 1e600
    np.testing.assert_allclose(F.batch_logdet(gh.Variable(a)).d, [600 * np.log(10.0)])


@pytest.mark.parametrize("name", ["batch_inv", "batch_det", "batch_logdet"])
def test_gradcheck_order_2(name: str) -> None:
    a = _mats((2, 3, 3))
    a[1] = a[1][[1, 0, 2]]  # a negative determinant too
    assert gradcheck(getattr(F, name), [a], order=2)


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_gradcheck_order_2_along_symmetric_inputs(upper: bool) -> None:
    # the function reads (x + x^T) / 2: the gradient is symmetric, and exact in every direction
    s = _spd((2, 3, 3))
    assert gradcheck(lambda v: F.batch_cholesky(v, upper=upper), [s], order=2)


def test_cholesky_gradient_is_murray_formula_by_finite_differences() -> None:
    s = _spd((3, 3))
    w = RNG.standard_normal((3, 3))
    x = gh.Variable(s)
    (g,) = gh.grad([F.sum(F.batch_cholesky(x) * gh.Variable(w, need_grad=False))], [x])
    fd = np.zeros((3, 3))
    for i in range(3):
        for j in range(3):
            d = np.zeros((3, 3))
            d[i, j] = d[j, i] = 1e-6
            f = lambda m: np.sum(w * np.linalg.cholesky(m))  # noqa: E731
            fd[i, j] = (f(s + d) - f(s - d)) / 2e-6
    # a symmetric perturbation of (i, j) and (j, i) moves both entries: the symmetric gradient
    np.testing.assert_allclose(np.where(np.eye(3) > 0, g.d, 2 * g.d), fd, rtol=1e-6, atol=1e-8)


def test_vmap_matches_the_stacked_call() -> None:
    a = _mats((4, 2, 3, 3))
    s = _spd((4, 2, 3, 3))
    for fn, x in (
        (F.batch_inv, a),
        (F.batch_det, a),
        (F.batch_logdet, a),
        (lambda v: F.batch_cholesky(v, upper=True), s),
    ):
        got = ghf.vmap(fn)(gh.Variable(x))
        np.testing.assert_allclose(got.d, fn(gh.Variable(x)).d, rtol=1e-12)
    per_sample = ghf.vmap(ghf.grad(lambda v: F.sum(F.batch_logdet(v))))(gh.Variable(a))
    np.testing.assert_allclose(
        per_sample.d, np.swapaxes(np.linalg.inv(a), -1, -2), rtol=1e-10, atol=1e-12
    )


def test_integer_inputs_computed_in_floating_point() -> None:
    m = np.array([[[2, 1], [1, 3]]], np.int64)
    assert F.batch_det(gh.Variable(m, need_grad=False)).d.dtype.kind == "f"
    np.testing.assert_allclose(F.batch_inv(gh.Variable(m, need_grad=False)).d, np.linalg.inv(m))


@pytest.mark.parametrize("name", ["batch_inv", "batch_det", "batch_logdet", "batch_cholesky"])
@pytest.mark.parametrize("shape", [(3,), (2, 3, 4)])
def test_not_square_raises(name: str, shape: tuple[int, ...]) -> None:
    with pytest.raises(ValueError, match=rf"{name}: x must be a stack of square matrices"):
        getattr(F, name)(gh.Variable(np.ones(shape)))


def test_singular_and_not_positive_definite_raise() -> None:
    with pytest.raises(ValueError, match="batch_inv: x holds a singular matrix"):
        F.batch_inv(gh.Variable(np.ones((2, 2))))
    with pytest.raises(ValueError, match="batch_cholesky: x is not positive definite"):
        F.batch_cholesky(gh.Variable(-np.eye(2)))
