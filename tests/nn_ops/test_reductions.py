"""Reductions of gradhub-nn-ops: float16 accumulation (mean, logsumexp, prod), ties of
max/min (and ``with_index``), empty inputs, and prod's gradient at zeros, whose graph does not
depend on the data, so re-running it with ``forward()`` on new data stays correct at every
order."""

from __future__ import annotations

import itertools
import math

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest
from gradhub.func import jvp
from gradhub.testing import gradcheck
from numeric_helpers import both_modes

V = gh.Variable


# -- float16 accumulates in float32 ---------------------------------------------------------


def test_mean_float16_accumulates_in_float32() -> None:
    assert float(F.mean(V(np.full(70000, 1.0, np.float16))).d) == 1.0
    y = F.mean(V(np.full((3, 70000), 2.0, np.float16)), axis=1)
    assert y.dtype == np.float16
    np.testing.assert_array_equal(y.d, [2.0, 2.0, 2.0])


def test_logsumexp_float16() -> None:
    y = F.logsumexp(V(np.zeros((1, 70000), np.float16)), axis=1)
    assert y.dtype == np.float16
    np.testing.assert_allclose(y.d.astype(np.float64), [math.log(70000)], rtol=1e-3)
    x = V(np.zeros((1, 70000), np.float16))
    (g,) = gh.grad([F.logsumexp(x, axis=1)], [x])
    np.testing.assert_allclose(g.d.astype(np.float64), 1 / 70000, rtol=1e-2)


def test_prod_float16_intermediate_overflow() -> None:
    y = F.prod(V(np.array([300.0, 300.0, 1.0 / 300.0], np.float16)))
    assert y.dtype == np.float16
    np.testing.assert_allclose(float(y.d), 300.0, rtol=2e-3)


# -- ties, empty inputs and prod's gradient at zeros -------------------------------------------


def var(a: object, need_grad: bool = True) -> gh.Variable:
    return gh.Variable(np.asarray(a, dtype=np.float64), need_grad=need_grad)


RNG = np.random.default_rng(7)


def _exclusive(x: np.ndarray, axis: int) -> np.ndarray:
    """Independent reference: product of the other elements along ``axis`` (explicit loop)."""
    xm = np.moveaxis(x, axis, -1)
    out = np.empty_like(xm)
    k = xm.shape[-1]
    for idx in np.ndindex(*xm.shape[:-1]):
        for i in range(k):
            out[idx + (i,)] = math.prod(float(xm[idx + (j,)]) for j in range(k) if j != i)
    return np.moveaxis(out, -1, axis)


def _hessian_of_prod(x: np.ndarray) -> np.ndarray:
    """d^2/dx_i dx_j of prod(x) for a 1-d x: prod of the others except i and j (0 on i == j)."""
    k = x.size
    h = np.zeros((k, k))
    for i, j in itertools.product(range(k), range(k)):
        if i != j:
            h[i, j] = math.prod(float(x[m]) for m in range(k) if m not in (i, j))
    return h


def test_max_min_split_ties_evenly() -> None:
    x = var([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    (g,) = both_modes(lambda v: F.max(v, axis=1), x)
    np.testing.assert_allclose(g, [[0.0, 0.5, 0.5], [1 / 3, 1 / 3, 1 / 3]])
    (g,) = both_modes(F.max, x)  # all axes: the two 3s tie
    np.testing.assert_allclose(g, [[0.0, 0.5, 0.5], [0.0, 0.0, 0.0]])
    (g,) = both_modes(lambda v: F.min(v, axis=0, keepdims=True), x)
    np.testing.assert_allclose(g, [[1.0, 0.0, 0.0], [0.0, 1.0, 1.0]])
    # the rule is differentiable again: d/dx of (max * x.sum()) at ties
    (gg,) = gh.grad([F.max(x, axis=1) * F.mean(x, axis=1)], [x], create_graph=True)
    (h,) = gh.grad([gg], [x])
    assert np.all(np.isfinite(h.d))


def test_max_min_ties_all_and_first() -> None:
    x = var([[1.0, 3.0, 3.0, 2.0], [0.0, 0.0, 0.0, 0.0]])
    (g,) = both_modes(lambda v: F.max(v, axis=1, ties="all"), x)  # chainer: 1 to every tie
    np.testing.assert_array_equal(g, [[0.0, 1.0, 1.0, 0.0], [1.0, 1.0, 1.0, 1.0]])
    (g,) = both_modes(lambda v: F.max(v, axis=1, ties="first"), x)  # nnabla: the first one
    np.testing.assert_array_equal(g, [[0.0, 1.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]])
    # several axes: "first" is the element only_index names (C order over the sorted axes)
    z = var([[[1.0, 3.0], [3.0, 0.0]], [[3.0, 3.0], [0.0, 1.0]]])
    for axis in ((2, 0), (0, 2)):
        (g,) = both_modes(lambda v, a=axis: F.min(v, axis=a, ties="first"), z)
        want = np.zeros((2, 2, 2))
        idx = F.min(z, axis=axis, only_index=True).d
        for j in range(2):  # the kept axis 1; flat position i * 2 + k
            want[idx[j] // 2, j, idx[j] % 2] = 1.0
        np.testing.assert_array_equal(g, want)
        np.testing.assert_array_equal(want[:, 1, :], [[0.0, 1.0], [0.0, 0.0]])
    # each rule is differentiable again, and forward mode uses the same shares
    for ties in ("all", "first"):
        (gg,) = gh.grad([F.max(x, axis=1, ties=ties) * F.mean(x, axis=1)], [x], create_graph=True)
        (h,) = gh.grad([gg], [x])
        assert np.all(np.isfinite(h.d))
        t = np.arange(8.0).reshape(2, 4)
        _, jv = jvp(lambda v, ti=ties: F.max(v, axis=1, ties=ti), (x,), (var(t),))
        want = [3.0, 0.0 + 4.0 + 5.0 + 6.0 + 7.0] if ties == "all" else [1.0, 4.0]
        np.testing.assert_array_equal(jv.d, want)
    with pytest.raises(ValueError, match=r"max.*ties must be one of"):
        F.max(x, ties="last")


def test_max_with_index_as_nnabla() -> None:
    x = var(np.arange(24.0).reshape(2, 3, 4) % 7)
    y, idx = F.max(x, axis=(1, 2), with_index=True)
    np.testing.assert_array_equal(y.d, [6.0, 6.0])
    # index within the flattened reduced axes (C order), the first one at ties
    flat = x.d.reshape(2, 12)
    np.testing.assert_array_equal(idx.d, np.argmax(flat, axis=1))
    assert idx.d.dtype.kind == "i" and not idx.need_grad
    only = F.min(x, axis=0, keepdims=True, only_index=True)
    assert only.shape == (1, 3, 4)
    np.testing.assert_array_equal(only.d[0], np.argmin(x.d, axis=0))
    y.backward()  # values still differentiable next to an index output
    assert x.g is not None and x.g.sum() == pytest.approx(2.0)


def test_prod_gradient_with_zeros() -> None:
    for vals, want in (
        ([0.0, 2.0, 3.0], [6.0, 0.0, 0.0]),
        ([0.0, 2.0, 0.0], [0.0, 0.0, 0.0]),
        ([1.0, 2.0, 3.0], [6.0, 3.0, 2.0]),
    ):
        (g,) = both_modes(F.prod, var(vals))
        np.testing.assert_allclose(g, want)
    # second derivative at a zero: d2/dx0 dx1 prod(x0, x1, x2) = x2
    x = var([0.0, 2.0, 3.0])
    (g,) = gh.grad([F.prod(x)], [x], create_graph=True)
    (h0,) = gh.grad([g * var([1.0, 0.0, 0.0], need_grad=False)], [x])  # d g[0] / dx
    np.testing.assert_allclose(h0.d, [0.0, 3.0, 2.0])


def test_mean_of_nothing_is_nan_and_prod_of_nothing_is_one() -> None:
    e = var(np.zeros((0, 2)))
    assert np.isnan(F.mean(e).d)
    np.testing.assert_array_equal(F.mean(e, axis=0).d, [np.nan, np.nan])
    np.testing.assert_array_equal(F.prod(e, axis=0).d, [1.0, 1.0])
    np.testing.assert_array_equal(F.logsumexp(e, axis=0).d, [-np.inf, -np.inf])


def test_prod_gradient_graph_reruns_correctly_on_new_data_with_zeros() -> None:
    """The reported case: built on data without zeros, re-run with zeros (was NaN)."""
    x = gh.Variable(np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))
    (gx,) = gh.grad([F.prod(x, axis=1)], [x], create_graph=True)
    np.testing.assert_allclose(gx.d, [[6.0, 3.0, 2.0], [30.0, 24.0, 20.0]])
    x.d = np.array([[0.0, 2.0, 3.0], [4.0, 0.0, 6.0]])
    gx.forward()
    np.testing.assert_array_equal(gx.d, [[6.0, 0.0, 0.0], [0.0, 24.0, 0.0]])
    # and back to data built with zeros, re-run without them
    x.d = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    gx.forward()
    np.testing.assert_allclose(gx.d, [[6.0, 3.0, 2.0], [30.0, 24.0, 20.0]])


@pytest.mark.parametrize("axis", [0, 1, 2, (0, 2), None])
def test_prod_rerun_matches_the_exclusive_product(axis: object) -> None:
    x = gh.Variable(RNG.uniform(0.5, 1.5, (3, 5, 2)))
    (gx,) = gh.grad([F.prod(x, axis=axis)], [x], create_graph=True)
    new = RNG.uniform(0.5, 1.5, (3, 5, 2)) * RNG.choice([-1.0, 1.0], (3, 5, 2))
    new[0, 1, 0] = new[2, 4, 1] = new[2, 0, 1] = new[1, 3, 0] = 0.0
    x.d = new
    gx.forward()
    axes = (0, 1, 2) if axis is None else (axis if isinstance(axis, tuple) else (axis,))
    # the reference: move the reduced axes last, flatten them, exclusive product, move back
    kept = [i for i in range(3) if i not in axes]
    moved = np.transpose(new, kept + list(axes))
    flat = moved.reshape(*moved.shape[: len(kept)], -1)
    ref = _exclusive(flat, -1).reshape(moved.shape)
    ref = np.transpose(ref, np.argsort(kept + list(axes)))
    np.testing.assert_allclose(gx.d, ref, rtol=1e-12, atol=1e-15)
    # the fresh first-order (array) rule agrees
    (g1,) = gh.grad([F.prod(x, axis=axis)], [x], create_graph=False)
    np.testing.assert_allclose(g1.d, ref, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5, 7, 8, 9, 16, 17])
def test_prod_second_order_graph_reruns_with_zeros(k: int) -> None:
    """The Hessian graph (built on nonzero data) re-run with one and two zeros in the group."""
    x = gh.Variable(RNG.uniform(0.5, 1.5, (k,)))
    (gx,) = gh.grad([F.prod(x)], [x], create_graph=True)
    u = RNG.standard_normal(k)
    (hu,) = gh.grad([F.sum(gx * gh.Variable(u, need_grad=False))], [x], create_graph=True)
    for zeros in ([0], [0, k - 1], []):
        new = RNG.uniform(0.5, 1.5, (k,)) * RNG.choice([-1.0, 1.0], (k,))
        new[[z for z in zeros if z < k]] = 0.0
        x.d = new
        gx.forward()
        hu.forward()
        np.testing.assert_allclose(gx.d, _exclusive(new, 0), rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(hu.d, _hessian_of_prod(new) @ u, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("shape, axis", [((6,), None), ((2, 5), 1), ((4, 3, 2), (0, 2))])
def test_prod_gradients_at_zeros_match_finite_differences_to_order_3(
    shape: tuple[int, ...], axis: object
) -> None:
    x = RNG.uniform(0.5, 1.5, shape) * RNG.choice([-1.0, 1.0], shape)
    flat = x.reshape(-1)
    flat[0] = flat[-1] = 0.0  # two zeros (in one group for the 1-d case)
    gradcheck(lambda u: F.prod(u, axis=axis), [x], order=3)


def test_prod_graph_rule_on_a_long_axis() -> None:
    """k = 4096: the exclusive product is a log-depth scan (a k x k matrix would hold 16M)."""
    k = 4096
    x = np.ones(k)
    x[5] = 0.0
    x[7] = 2.0
    xv = gh.Variable(x)
    (gx,) = gh.grad([F.prod(xv)], [xv], create_graph=True)
    expect = np.zeros(k)
    expect[5] = 2.0
    np.testing.assert_array_equal(gx.d, expect)
    xv.d = np.where(np.arange(k) == 1000, 0.0, 1.0)
    gx.forward()
    expect = np.zeros(k)
    expect[1000] = 1.0
    np.testing.assert_array_equal(gx.d, expect)
