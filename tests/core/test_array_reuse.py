"""gradhub.memory.output_array: large CPU outputs are reused only when nothing refers to them."""

from __future__ import annotations

import os
import warnings
from typing import Any

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest
from child_helpers import run_python
from gradhub import memory

#: an empty pool before and after each test (the ``pool`` fixture of conftest.py)
pytestmark = pytest.mark.usefixtures("pool")


def test_arrays_are_handed_out_again_only_when_nothing_refers_to_them() -> None:
    shape = (3, 1 << 14)  # 192 KiB of float32, above MIN_BYTES
    a = memory.output_array(np, shape, np.float32)
    b = memory.output_array(np, shape, np.float32)
    assert a is not b
    view = a[1:]  # a view keeps its base alive and visible
    a_id = id(a)
    del a
    c = memory.output_array(np, shape, np.float32)
    assert c is not view.base and c is not b
    del view
    d = memory.output_array(np, shape, np.float32)  # now nothing refers to the first array
    assert id(d) == a_id
    assert memory.output_array(np, shape, np.float64).dtype == np.float64  # dtype is in the key


def test_small_arrays_are_never_kept() -> None:
    a = memory.output_array(np, (4, 4), np.float32)
    del a
    assert memory.kept_bytes() == 0
    b = memory.output_array(np, (4, 4), np.float32)
    assert b.shape == (4, 4) and b.dtype == np.float32 and memory.kept_bytes() == 0


def test_reuse_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory, "PER_KEY", 2)
    shape = (5, 1 << 14, 1)
    held = [memory.output_array(np, shape, np.float32) for _ in range(5)]
    assert len({id(h) for h in held}) == 5
    assert memory.kept_bytes() == 2 * held[0].nbytes
    total = memory.kept_bytes()
    monkeypatch.setattr(memory, "MAX_BYTES", total)  # full: new arrays are plain ones
    kept = [memory.output_array(np, (7, 1 << 14, 1), np.float32) for _ in range(2)]
    assert kept[0] is not kept[1]
    assert memory.kept_bytes() == total


def test_release_and_switching_off() -> None:
    shape = (2, 1 << 15)
    a = memory.output_array(np, shape, np.float32)
    assert memory.kept_bytes() == a.nbytes
    del a
    memory.release()
    assert memory.kept_bytes() == 0
    memory.set_reuse(False)
    try:
        assert not memory.reuse_enabled()
        b = memory.output_array(np, shape, np.float32)
        assert b.shape == shape and memory.kept_bytes() == 0
    finally:
        memory.set_reuse(True)
    assert memory.reuse_enabled()


def test_environment_switch_turns_reuse_off() -> None:
    code = (
        "import numpy as np; from gradhub import memory; "
        "a = memory.output_array(np, (1 << 16,), np.float32); "
        "print(memory.reuse_enabled(), memory.kept_bytes())"
    )
    env = {**os.environ, "GRADHUB_REUSE_ARRAYS": "0"}
    assert run_python(code, env).split() == ["False", "0"]
    code += (
        "; memory.set_reuse(True); b = memory.output_array(np, (1 << 16,), np.float32); "
        "print(memory.reuse_enabled(), memory.kept_bytes())"
    )
    assert run_python(code, env).split() == ["False", "0", "True", str(1 << 18)]  # the call wins


def test_other_array_modules_get_plain_empty_arrays() -> None:
    class FakeXp:
        calls: list[Any] = []

        @staticmethod
        def empty(shape: Any, dtype: Any) -> np.ndarray:
            FakeXp.calls.append(shape)
            return np.empty(shape, dtype)

    memory.output_array(FakeXp, (1 << 16,), np.float32)
    assert FakeXp.calls == [(1 << 16,)] and memory.kept_bytes() == 0


def _penalty_step(x: np.ndarray, params: list[np.ndarray]) -> list[np.ndarray]:
    """W4's gradient penalty on a small float32 CNN: every reusing kernel takes part (the
    convolution family, ReLU, 2x2 max pooling, products, gradient sums)."""
    ps = [gh.Variable(p) for p in params]
    xv = gh.Variable(x, need_grad=False)
    h = F.max_pooling(F.relu(F.convolution(xv, ps[0], ps[1], pad=(1, 1))), (2, 2))
    h = F.max_pooling(F.relu(F.convolution(h, ps[2], ps[3], pad=(1, 1))), (2, 2))
    loss = F.sum(h * h)
    gs = gh.grad([loss], ps, create_graph=True)
    total = loss
    for g in gs:
        total = total + F.sum(g * g)
    return [total.d, *(g.d for g in gh.grad([total], ps))]


@pytest.mark.nn_ops
def test_reuse_never_changes_results_or_held_arrays(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(17)
    params = [
        rng.standard_normal(s).astype(np.float32) * 0.3
        for s in ((4, 2, 3, 3), (4,), (3, 4, 3, 3), (3,))
    ]
    x1, x2 = (rng.standard_normal((3, 2, 8, 8)).astype(np.float32) for _ in range(2))
    memory.set_reuse(False)  # reference: plain new arrays
    try:
        ref1, ref2 = _penalty_step(x1, params), _penalty_step(x2, params)
    finally:
        memory.set_reuse(True)
    monkeypatch.setattr(memory, "MIN_BYTES", 0)  # reuse every output, however small
    first = _penalty_step(x1, params)
    kept = [a.copy() for a in first]
    second = _penalty_step(x2, params)
    assert memory.kept_bytes() > 0
    for a, b in zip(first + second, ref1 + ref2):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(first, kept):  # results still held are never handed out again
        np.testing.assert_array_equal(a, b)
    y = F.relu(gh.Variable(x1)).d
    y_kept = y.copy()
    F.relu(gh.Variable(x2))
    F.max_pooling(gh.Variable(x2), (2, 2))
    (x2 * 3.0 * gh.Variable(x2)).d  # noqa: B018 - products reuse too
    np.testing.assert_array_equal(y, y_kept)


def test_idle_arrays_beyond_the_spare_count_are_given_back(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory, "IDLE_PER_KEY", 1)
    shape = (4, 1 << 14)
    held = [memory.output_array(np, shape, np.float32) for _ in range(4)]
    size = held[0].nbytes
    assert memory.kept_bytes() == 4 * size
    del held  # four idle arrays
    a = memory.output_array(np, shape, np.float32)  # hands out one, keeps one, frees two
    assert memory.kept_bytes() == 2 * size
    b = memory.output_array(np, shape, np.float32)  # the kept spare
    assert b is not a and memory.kept_bytes() == 2 * size


def test_sole_owner_tells_private_views_from_shared_ones() -> None:
    assert memory.sole_owner(np.ones((3, 4)))
    t = (np.ones((3, 4)) @ np.ones((4, 2))).T  # a product's transpose (assigned first: pytest's
    assert memory.sole_owner(t)  # assertion rewriting would hold the product itself)
    b = np.ones((3, 4))
    v = b.T
    assert not memory.sole_owner(v)  # b still refers to the memory
    del b
    assert memory.sole_owner(v)
    w = v.T
    assert not memory.sole_owner(v) and not memory.sole_owner(w)  # two views of one array
    assert not memory.sole_owner(w[:1])  # a view of a view


@pytest.mark.nn_ops
def test_backward_gives_each_leaf_its_own_gradient_array() -> None:
    # the affine rule returns dW as a transposed view of a fresh product; backward keeps it
    # without a copy, and every .g stays independent of the others and of the graph
    rng = np.random.default_rng(3)
    x = gh.Variable(rng.standard_normal((4, 3)))
    w = gh.Variable(rng.standard_normal((3, 2)))
    w2 = gh.Variable(rng.standard_normal((3, 2)))
    y = F.affine(x, w) + F.affine(x, w2)
    y.backward()
    expected = x.d.T @ np.ones((4, 2))
    np.testing.assert_allclose(w.g, expected)
    np.testing.assert_allclose(w2.g, expected)
    w.g[...] = 0.0
    np.testing.assert_allclose(w2.g, expected)  # not shared
    np.testing.assert_allclose(x.g, np.ones((4, 2)) @ (w.d + w2.d).T)


def test_binary_writes_same_shaped_arrays_into_reused_outputs() -> None:
    a = np.full((4, 1 << 14), 2.0, np.float32)
    b = np.full((4, 1 << 14), 3.0, np.float32)
    r = memory.binary(np.multiply, a, b)
    np.testing.assert_array_equal(r, np.full(a.shape, 6.0, np.float32))
    assert memory.kept_bytes() == r.nbytes  # came from output_array
    r_id = id(r)
    del r
    assert id(memory.binary(np.add, a, b)) == r_id  # handed out again
    before = memory.kept_bytes()
    mixed = memory.binary(np.multiply, a, b[:1])  # broadcasting: a plain ufunc call
    np.testing.assert_array_equal(mixed, np.full(a.shape, 6.0, np.float32))
    assert memory.binary(np.add, a, b.astype(np.float64)).dtype == np.float64
    assert memory.kept_bytes() == before


V = gh.Variable


_BIG = (128, 256)  # 128 KiB of float32: above memory.MIN_BYTES


def _big_input() -> gh.Variable:
    return V(np.random.default_rng(0).standard_normal(_BIG).astype(np.float32))


def _set_in_place(a: np.ndarray, attr: str, value: Any) -> None:
    """``a.shape = value`` or ``a.dtype = value``: still possible, but deprecated since NumPy 2.5
    (a DeprecationWarning, an error under this suite's warning filter)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        setattr(a, attr, value)


@pytest.mark.nn_ops
@pytest.mark.usefixtures("pool")
def test_pool_skips_an_output_reshaped_in_place() -> None:
    x = _big_input()
    a = F.relu(x).d
    _set_in_place(a, "shape", (1, *_BIG))  # a batch axis added in place, then dropped
    del a
    y = F.relu(x)
    assert y.shape == _BIG
    np.testing.assert_array_equal(F.sum(y, axis=0).d, np.maximum(x.d, 0).sum(axis=0))


@pytest.mark.usefixtures("pool")
def test_pool_skips_a_product_reshaped_in_place() -> None:
    x = _big_input()
    p = (x * x).d
    _set_in_place(p, "shape", (1, *_BIG))
    del p
    y = x * x
    assert y.shape == _BIG
    np.testing.assert_array_equal(y.d, x.d * x.d)


@pytest.mark.nn_ops
@pytest.mark.usefixtures("pool")
def test_pool_skips_an_output_whose_dtype_was_changed_in_place() -> None:
    x = V(np.random.default_rng(1).standard_normal(_BIG))  # float64
    a = F.relu(x).d
    _set_in_place(a, "dtype", np.complex64)  # the same bytes reinterpreted
    del a
    y = F.relu(x)
    assert y.dtype == np.float64 and y.shape == _BIG
    np.testing.assert_array_equal(y.d, np.maximum(x.d, 0))


@pytest.mark.nn_ops
@pytest.mark.usefixtures("pool")
def test_pool_skips_an_output_made_read_only() -> None:
    x = _big_input()
    a = F.relu(x).d
    a.flags.writeable = False
    del a
    y = F.relu(x)
    assert y.d.flags.writeable
    np.testing.assert_array_equal(y.d, np.maximum(x.d, 0))


@pytest.mark.usefixtures("pool")
def test_pool_drops_the_changed_array_from_its_list() -> None:
    a = memory.output_array(np, _BIG, np.float32)
    kept = memory.kept_bytes()
    _set_in_place(a, "shape", (-1,))
    del a
    b = memory.output_array(np, _BIG, np.float32)
    assert b.shape == _BIG
    assert memory.kept_bytes() == kept  # the changed one went, the new one came


def test_shapes_and_dtypes_in_any_spelling_share_one_key() -> None:
    a = memory.output_array(np, (4, 1 << 14), np.float32)
    a_id = id(a)
    del a
    b = memory.output_array(np, [4, 1 << 14], "float32")  # a list and a name: the same key
    assert id(b) == a_id and b.shape == (4, 1 << 14) and b.dtype == np.float32
    del b
    c = memory.output_array(np, np.array([4, 1 << 14]), np.dtype(np.float32))
    assert id(c) == a_id and type(c.shape[0]) is int


def test_the_first_unused_array_is_handed_out_and_the_others_stay_kept() -> None:
    # fewer kept arrays than the spare count: the first one nothing refers to, none given back
    shape = (2, 1 << 15)
    held = [memory.output_array(np, shape, np.float32) for _ in range(4)]
    ids = [id(h) for h in held]
    kept = memory.kept_bytes()
    del held[2], held[1]
    got = memory.output_array(np, shape, np.float32)
    assert id(got) == ids[1] and memory.kept_bytes() == kept
    again = memory.output_array(np, shape, np.float32)
    assert id(again) == ids[2] and memory.kept_bytes() == kept
