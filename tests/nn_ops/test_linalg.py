"""Affine and einsum of gradhub-nn-ops: nnabla shapes and values, gradients, bias dtypes and
argument checks."""

from __future__ import annotations

import re
import weakref
from collections.abc import Callable
from typing import Any

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest
from gradhub.testing import gradcheck


def _v(a: object, need_grad: bool = True) -> gh.Variable:
    return gh.Variable(np.asarray(a, dtype=np.float64), need_grad=need_grad)


RNG = np.random.default_rng(7)


def _check_grad_dtypes_and_values(fn: object, arrays: list[np.ndarray]) -> None:
    """fn on the mixed-dtype arrays: result and gradients vs fn on float64 copies."""
    vs = [gh.Variable(a) for a in arrays]
    v64s = [gh.Variable(a.astype(np.float64)) for a in arrays]
    y = fn(*vs)  # type: ignore[operator]
    y64 = fn(*v64s)  # type: ignore[operator]
    assert y.dtype == np.float64
    np.testing.assert_allclose(y.d, y64.d, rtol=1e-5, atol=1e-5)
    gy = RNG.standard_normal(y.shape)
    ref = gh.grad([y64], v64s, [gy], create_graph=False)
    for create_graph in (False, True):
        gs = gh.grad([y], vs, [gy], create_graph=create_graph)
        for a, g, r in zip(arrays, gs, ref):
            assert g.dtype == a.dtype  # each input gets a gradient of its own dtype
            np.testing.assert_allclose(g.d, r.d, rtol=1e-4, atol=1e-4)


V = gh.Variable


def raises(fn: Callable[[], Any], exc: type[BaseException], pattern: str) -> None:
    with pytest.raises(exc, match=pattern):
        fn()


def test_affine_nnabla_shapes_and_values() -> None:
    rng = np.random.default_rng(1)
    x, w, b = (
        rng.standard_normal((2, 3, 4)),
        rng.standard_normal((4, 2, 5)),
        rng.standard_normal((2, 5)),
    )
    y = F.affine(_v(x), _v(w), _v(b), base_axis=2)
    assert y.shape == (2, 3, 2, 5)
    np.testing.assert_allclose(y.d, np.einsum("abk,kcd->abcd", x, w) + b)
    with pytest.raises(ValueError, match=r"affine: weight.shape\[0\] \(4\) must equal"):
        F.affine(_v(x), _v(w))


def test_affine_gradients_and_skipped_input_gradient() -> None:
    rng = np.random.default_rng(2)
    x, w, b = rng.standard_normal((3, 4)), rng.standard_normal((4, 2)), rng.standard_normal(2)
    vx, vw, vb = _v(x, need_grad=False), _v(w), _v(b)
    g = rng.standard_normal((3, 2))
    F.affine(vx, vw, vb).backward(g)
    assert vx.g is None
    np.testing.assert_allclose(vw.g, x.T @ g)
    np.testing.assert_allclose(vb.g, g.sum(0))


def test_affine_double_backward() -> None:
    # the gradient-norm penalty of an MLP differentiates Affine twice
    rng = np.random.default_rng(3)
    gradcheck(
        lambda x, w, b: F.affine(x, w, b) ** 2.0,
        [rng.standard_normal((2, 3)), rng.standard_normal((3, 2)), rng.standard_normal(2)],
        order=3,
    )


@pytest.mark.parametrize(
    "equation,shapes",
    [
        ("ii->i", [(3, 3)]),
        ("ii", [(3, 3)]),
        ("iij->j", [(2, 2, 3)]),
        ("iji,j->ij", [(2, 3, 2), (3,)]),
        ("...ii->...i", [(2, 2, 3, 3)]),
        ("i...i->...", [(3, 2, 3)]),
        ("ii,jj", [(2, 2), (3, 3)]),
        ("iii->i", [(2, 2, 2)]),
    ],
)
def test_einsum_takes_diagonals_as_numpy(equation: str, shapes: list) -> None:
    # regression: a subscript repeated within one operand raised; numpy, torch and nnabla take
    # the diagonal
    xs = [RNG.standard_normal(s) for s in shapes]
    y = F.einsum(*[_v(x) for x in xs], equation=equation)
    np.testing.assert_allclose(y.d, np.einsum(equation, *xs), rtol=1e-12)
    assert gradcheck(lambda *v: F.einsum(*v, equation=equation), xs, order=2)


def test_einsum_diagonal_needs_equal_sizes() -> None:
    with pytest.raises(ValueError, match=r"einsum: subscript 'i' is repeated in 'ii' over axes"):
        F.einsum(_v(np.zeros((2, 3))), equation="ii")


def test_affine_with_a_float64_bias_promotes() -> None:
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    w = RNG.standard_normal((4, 2)).astype(np.float32)
    b = RNG.standard_normal(2) + 1e-3 * np.pi  # not representable in float32
    y = F.affine(gh.Variable(x), gh.Variable(w), gh.Variable(b))
    assert y.dtype == np.float64
    # the float64 bias is added in float64 (a float32 add would round it)
    np.testing.assert_allclose(y.d, (x @ w).astype(np.float64) + b, rtol=0, atol=1e-12)
    _check_grad_dtypes_and_values(lambda *a: F.affine(*a), [x, w, b])
    _check_grad_dtypes_and_values(
        lambda *a: F.affine(*a, base_axis=2),
        [
            RNG.standard_normal((2, 2, 3)).astype(np.float32),
            RNG.standard_normal((3, 2, 2)).astype(np.float32),
            RNG.standard_normal((2, 2)),
        ],
    )


def test_affine_same_and_narrower_bias_dtypes_are_unchanged() -> None:
    x = gh.Variable(RNG.standard_normal((3, 4)).astype(np.float32))
    w = gh.Variable(RNG.standard_normal((4, 2)).astype(np.float32))
    assert F.affine(x, w, gh.Variable(np.zeros(2, np.float32))).dtype == np.float32
    x64 = gh.Variable(RNG.standard_normal((3, 4)))
    w64 = gh.Variable(RNG.standard_normal((4, 2)))
    assert F.affine(x64, w64, gh.Variable(np.zeros(2, np.float32))).dtype == np.float64


def test_einsum_and_affine_check_their_attributes() -> None:
    a, b = V(np.ones((2, 3))), V(np.ones((3, 2)))
    raises(lambda: F.einsum(a, b, equation=None), TypeError, r"einsum: equation must be a str")
    for eq in ("i1,jk", "ij,jk->ik->i", "ij,jk-ik", "..ij,jk"):
        raises(
            lambda eq=eq: F.einsum(a, b, equation=eq),
            ValueError,
            rf"einsum: equation {re.escape(repr(eq))} is not valid",
        )
    raises(lambda: F.affine(a, b, base_axis=1.5), TypeError, r"affine: base_axis must be an int")


@pytest.mark.parametrize("threads", [1, 2])
def test_affine_relu_chain_in_either_product_order(
    threads: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With several BLAS threads a wide Affine (more outputs than rows, at least
    ``_TRANSPOSED_MIN_ROWS`` rows) computes ``(W^T x^T)^T``: a Fortran-ordered result, which ReLU
    keeps; with one thread ``x W`` in C order. Values and first-order gradients of
    ``sum(g * relu(affine(x, W, b)))`` match the float64 formulas either way (dx = (g * mask)
    W^T, dW = x^T (g * mask), db = column sums)."""
    from gradhub.parallel import get_num_threads, set_num_threads
    from gradhub_nn_ops import linalg

    rng = np.random.default_rng(3)
    n, k, m = linalg._TRANSPOSED_MIN_ROWS, 48, 96
    x = rng.standard_normal((n, k)).astype(np.float32)
    w = rng.standard_normal((k, m)).astype(np.float32)
    b = rng.standard_normal(m).astype(np.float32)
    g = rng.standard_normal((n, m)).astype(np.float32)
    monkeypatch.setattr(linalg, "get_blas_threads", lambda: threads)
    before = get_num_threads()
    set_num_threads(threads)
    try:
        xv, wv, bv = gh.Variable(x), gh.Variable(w), gh.Variable(b)
        z = F.affine(xv, wv, bv)
        y = F.relu(z)
        assert z.d.flags.f_contiguous == (threads > 1) and y.d.flags.f_contiguous == (threads > 1)
        assert z.d.flags.c_contiguous == (threads == 1) and y.d.flags.c_contiguous == (threads == 1)
        gx, gw, gb = gh.grad([y], [xv, wv, bv], [g], create_graph=False)
    finally:
        set_num_threads(before)
    z64 = x.astype(np.float64) @ w.astype(np.float64) + b
    np.testing.assert_allclose(z.d, z64, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(y.d, np.maximum(z64, 0), rtol=1e-5, atol=1e-5)
    gz = g.astype(np.float64) * (z64 > 0)
    np.testing.assert_allclose(gx.d, gz @ w.astype(np.float64).T, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(gw.d, x.astype(np.float64).T @ gz, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(gb.d, gz.sum(axis=0), rtol=1e-4, atol=1e-4)


def test_affine_takes_the_c_order_product_while_the_pool_holds_openblas_at_one_thread() -> None:
    """Once gradhub's pool has started, OpenBLAS runs on one thread, and a wide Affine computes
    ``x W`` (C order) although ``get_num_threads()`` is 2 (``(W^T x^T)^T`` is 0-14% slower on
    one thread); without the pool, OpenBLAS's own count decides."""
    from gradhub.parallel import get_blas_threads, get_num_threads, parallel_for, set_num_threads
    from gradhub_nn_ops import linalg

    if get_blas_threads() is None:
        pytest.skip("numpy's BLAS is not an OpenBLAS that gradhub can ask")
    rng = np.random.default_rng(8)
    n = linalg._TRANSPOSED_MIN_ROWS
    x = gh.Variable(rng.standard_normal((n, 16)).astype(np.float32))
    w = gh.Variable(rng.standard_normal((16, 2 * n)).astype(np.float32))
    before = get_num_threads()
    set_num_threads(2)
    try:
        parallel_for(2, lambda i: None)  # starts the pool: OpenBLAS on one thread
        assert get_blas_threads() == 1
        assert F.affine(x, w).d.flags.c_contiguous
        set_num_threads(2)  # closes the pool: OpenBLAS's count back
        y = F.affine(x, w).d
        assert y.flags.f_contiguous == (get_blas_threads() > 1)  # type: ignore[operator]
    finally:
        set_num_threads(before)


def test_affine_keeps_the_c_order_product_below_its_conditions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Fewer rows than ``_TRANSPOSED_MIN_ROWS`` or more than ``_TRANSPOSED_MAX_ROWS``, no more
    outputs than rows, or a flattened input keep ``x W`` (a C-ordered result), whatever the
    number of threads."""
    from gradhub.parallel import get_num_threads, set_num_threads
    from gradhub_nn_ops import linalg

    rng = np.random.default_rng(4)
    rows = linalg._TRANSPOSED_MIN_ROWS
    monkeypatch.setattr(linalg, "get_blas_threads", lambda: 2)
    before = get_num_threads()
    set_num_threads(2)
    try:
        for xs, ws in (
            ((rows - 1, 8), (8, 4 * rows)),  # few rows
            ((linalg._TRANSPOSED_MAX_ROWS + 1, 8), (8, 4 * rows)),  # many rows
            ((rows, 8), (8, rows)),  # no more outputs than rows
            ((rows, 2, 4), (8, 4 * rows)),  # flattened input
        ):
            x = rng.standard_normal(xs).astype(np.float32)
            w = rng.standard_normal(ws).astype(np.float32)
            y = F.affine(gh.Variable(x), gh.Variable(w)).d
            assert y.flags.c_contiguous, xs
            np.testing.assert_allclose(y, x.reshape(xs[0], -1) @ w, rtol=1e-5, atol=1e-5)
    finally:
        set_num_threads(before)


def test_affine_weight_gradients_held_by_the_caller_are_not_reused() -> None:
    """Affine's weight gradient is written into a kept array (``gradhub.memory``): a gradient
    the caller still holds keeps its values through later steps (eager and compiled), one the
    caller dropped is written again."""
    from gradhub import memory

    memory.release()  # (arrays kept by earlier tests in this thread count against MAX_BYTES)
    rng = np.random.default_rng(6)
    w = gh.Variable(rng.standard_normal((128, 160)).astype(np.float32))  # 80 KiB: kept
    b = gh.Variable(np.zeros(160, np.float32))

    def step(x: Any) -> Any:
        loss = F.mean(F.relu(F.affine(x, w, b)) ** 2)
        return gh.grad([loss], [w, b], create_graph=False)[0]

    for run in (step, gh.compile(step)):
        xs = [rng.standard_normal((8, 128)).astype(np.float32) for _ in range(3)]
        first = run(gh.Variable(xs[0]) if run is step else xs[0])
        kept = first.d.copy()
        second = run(gh.Variable(xs[1]) if run is step else xs[1])
        assert not np.array_equal(second.d, kept)
        np.testing.assert_array_equal(first.d, kept)  # still the first step's values
        assert second.d.base is not None and second.d.base is not first.d.base
        base = weakref.ref(second.d.base)
        del second
        third = run(gh.Variable(xs[2]) if run is step else xs[2])
        assert third.d.base is base() or not memory.reuse_enabled()
        np.testing.assert_array_equal(first.d, kept)


def test_affine_checks_its_shapes_at_every_call_after_good_ones(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Affine remembers the dimensions of the shapes it has checked; a bad call after good ones of
    # other shapes is refused all the same, a bool base_axis too (True == 1 as a key), and the
    # table stays bounded
    from gradhub_nn_ops import linalg

    monkeypatch.setattr(linalg, "_DIMS", {})
    monkeypatch.setattr(linalg, "_DIMS_MAX", 3)
    x, w = _v(np.ones((2, 3))), _v(np.ones((3, 4)))
    for _ in range(2):
        assert F.affine(x, w).shape == (2, 4)
    assert linalg._DIMS == {((2, 3), (3, 4), 1): (2, 3, 4)}
    raises(
        lambda: F.affine(x, _v(np.ones((4, 4)))),
        ValueError,
        r"affine: weight.shape\[0\] \(4\) must equal prod\(x.shape\[base_axis:\]\) \(3\)",
    )
    raises(lambda: F.affine(x, w, base_axis=True), TypeError, r"affine: base_axis must be an int")
    raises(lambda: F.affine(x, w, base_axis=3), ValueError, r"affine: base_axis=3 is out of range")
    for n in range(1, 6):
        xn = _v(np.full((n, 3), 2.0))
        np.testing.assert_array_equal(F.affine(xn, w).d, np.full((n, 4), 6.0))
        assert len(linalg._DIMS) <= 3
