"""nnabla's F.searchsorted, nonzero, unique, bool_gather/bool_scatter/bool_fill,
confusion_matrix, epsilon_insensitive_loss, top_k_grad, shape, reduce_sum/reduce_mean, bc_add2
and meshgrid: values, dtypes and gradients against nnabla 1.39 on the same inputs."""

from __future__ import annotations

from typing import Any

import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.functions as F
import numpy as np
import pytest


def V(a: Any, need_grad: bool = False, dtype: Any = np.float32) -> Any:
    return nn.Variable.from_numpy_array(np.asarray(a, dtype), need_grad=need_grad)


def fw(y: Any) -> Any:
    y.forward()
    return y.d


def test_searchsorted() -> None:
    ss = V([[1, 3, 5, 7, 9], [2, 4, 6, 8, 10]])
    vals = V([[3, 6, 9], [0, 5, 11]])
    left, right = fw(F.searchsorted(ss, vals)), fw(F.searchsorted(ss, vals, right=True))
    # nnabla 1.39
    np.testing.assert_array_equal(left, [[1, 3, 4], [0, 2, 5]])
    np.testing.assert_array_equal(right, [[2, 3, 5], [0, 2, 5]])
    assert left.dtype == np.float32
    np.testing.assert_array_equal(fw(F.searchsorted(V([1, 3, 5]), V([2, 4, 6]))), [1, 2, 3])
    with pytest.raises(ValueError, match="searchsorted"):  # nnabla 1.39: setup error too
        F.searchsorted(V([1, 3, 5]), V([[2, 4]]))


def test_nonzero() -> None:
    y = fw(F.nonzero(V([[0, 1, 0], [2, 0, 3]])))
    assert y.dtype == np.uint64  # nnabla 1.39
    np.testing.assert_array_equal(y, [[0, 1, 1], [1, 0, 2]])


def test_unique_as_nnabla() -> None:
    x = V([[1, 3, 1], [2, 1, 3]])
    with nn.auto_forward():
        y = F.unique(x, axis=0)
        ys = F.unique(x, axis=0, with_index=True, with_inverse=True, with_counts=True)
        counts_only = F.unique(x, axis=0, with_counts=True)
        unsorted = F.unique(
            V([3, 1, 3, 2]),
            axis=0,
            sorted=False,
            with_index=True,
            with_inverse=True,
            with_counts=True,
        )
        rows = F.unique(
            V([[1, 2], [0, 5], [1, 2]]),
            flatten=False,
            axis=0,
            with_index=True,
            with_inverse=True,
            with_counts=True,
        )
        rows_unsorted = F.unique(
            x,
            flatten=False,
            axis=0,
            sorted=False,
            with_index=True,
            with_inverse=True,
            with_counts=True,
        )
        cols = F.unique(
            x, flatten=False, axis=1, with_index=True, with_inverse=True, with_counts=True
        )
    # nnabla 1.39
    np.testing.assert_array_equal(y.d, [1, 2, 3])
    assert y.d.dtype == np.float32
    want = [[1, 2, 3], [0, 3, 1], [0, 2, 0, 1, 0, 2], [3, 1, 2]]
    for v, w in zip(ys, want):
        np.testing.assert_array_equal(v.d, w)
    assert [v.d.dtype for v in ys[1:]] == [np.int32] * 3
    assert len(counts_only) == 2
    np.testing.assert_array_equal(counts_only[1].d, [3, 1, 2])
    for v, w in zip(unsorted, [[3, 1, 2], [0, 1, 3], [0, 1, 0, 2], [2, 1, 1]]):
        np.testing.assert_array_equal(v.d, w)
    for v, w in zip(rows, [[[0, 5], [1, 2]], [1, 0], [1, 0, 1], [1, 2]]):
        np.testing.assert_array_equal(v.d, w)
    for v, w in zip(rows_unsorted, [[[1, 3, 1], [2, 1, 3]], [0, 1], [0, 1], [1, 1]]):
        np.testing.assert_array_equal(v.d, w)
    for v, w in zip(cols, [[[1, 1, 3], [2, 3, 1]], [0, 2, 1], [0, 2, 1], [1, 1, 1]]):
        np.testing.assert_array_equal(v.d, w)


def test_unique_needs_auto_forward_as_nnabla() -> None:
    with pytest.raises(RuntimeError, match="only if auto_forward is true"):
        F.unique(V([1, 2]), axis=0)


def test_bool_gather_scatter_fill() -> None:
    d = V([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], True)
    m = V([1, 0, 1])
    y = F.bool_gather(d, m)
    np.testing.assert_array_equal(fw(y), [[1, 2], [5, 6]])  # nnabla 1.39
    d.grad.zero()
    y.backward(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32))
    np.testing.assert_array_equal(d.g, [[1, 2], [0, 0], [3, 4]])
    inp = V([[1.0, 2.0], [5.0, 6.0]], True)
    y = F.bool_scatter(inp, m)
    np.testing.assert_array_equal(fw(y), [[1, 2], [0, 0], [5, 6]])
    inp.grad.zero()
    y.backward(np.arange(6, dtype=np.float32).reshape(3, 2))
    np.testing.assert_array_equal(inp.g, [[0, 1], [4, 5]])
    out = V(np.full((3, 2), 9.0), True)
    y = F.bool_scatter(inp, m, out)
    np.testing.assert_array_equal(fw(y), [[1, 2], [9, 9], [5, 6]])
    assert y is not out
    inp.grad.zero()
    out.grad.zero()
    y.backward(np.arange(6, dtype=np.float32).reshape(3, 2))
    np.testing.assert_array_equal(inp.g, [[0, 1], [4, 5]])
    np.testing.assert_array_equal(out.g, [[0, 0], [2, 3], [0, 0]])
    data, mask = V([[1.0, 2.0], [3.0, 4.0]], True), V([[1, 0], [0, 1]], True)
    y = F.bool_fill(data, mask, 7.5)
    np.testing.assert_array_equal(fw(y), [[7.5, 2], [3, 7.5]])
    data.grad.zero()
    mask.grad.zero()
    y.backward(np.ones((2, 2), np.float32))
    np.testing.assert_array_equal(data.g, [[0, 1], [1, 0]])
    np.testing.assert_array_equal(mask.g, [[0, 0], [0, 0]])
    np.testing.assert_array_equal(fw(F.bool_fill(data, V([1, 0]), 7.5)), [[7.5, 2], [7.5, 4]])
    np.testing.assert_array_equal(fw(F.bool_fill(data, V([[1], [0]]), 7.5)), [[7.5, 7.5], [3, 4]])


def test_confusion_matrix() -> None:
    x = V([[0.1, 0.7, 0.2], [0.8, 0.1, 0.1], [0.3, 0.3, 0.4], [0.2, 0.5, 0.3]])
    t = V([[1], [0], [1], [2]], dtype=np.int32)
    for y in (fw(F.confusion_matrix(x, t)), fw(F.confusion_matrix(x, t, axis=1))):
        assert y.dtype == np.int32  # nnabla 1.39
        np.testing.assert_array_equal(y, [[1, 0, 0], [0, 1, 1], [0, 1, 0]])


def test_epsilon_insensitive_loss() -> None:
    x0 = V([[0.1, 2.0, -3.0], [1.0, -0.2, 0.5]], True)
    x1 = V([[0.3, 0.5, -1.0], [1.0, 0.6, 0.0]], True)
    y = F.epsilon_insensitive_loss(x0, x1, 0.5)
    np.testing.assert_allclose(fw(y), [[0, 1, 1.5], [0, 0.3, 0]], atol=1e-7)  # nnabla 1.39
    x0.grad.zero()
    x1.grad.zero()
    y.backward(np.array([[1, 2, 3], [4, 5, 6]], np.float32))
    np.testing.assert_array_equal(x0.g, [[0, 2, -3], [0, -5, 0]])
    np.testing.assert_array_equal(x1.g, [[0, -2, 3], [0, 5, 0]])


def test_top_k_grad() -> None:
    x = V([[1.0, -4.0, 3.0, 2.0], [-0.5, 0.2, 0.3, -0.1]], True)
    g = np.array([[1, 2, 3, 4], [5, 6, 7, 8]], np.float32)
    for kw in ({}, {"abs": True}):
        y = F.top_k_grad(x, 2, **kw)
        np.testing.assert_array_equal(fw(y), x.d)
        x.grad.zero()
        y.backward(g)
        np.testing.assert_array_equal(x.g, [[0, 0, 3, 4], [0, 0, 7, 8]])  # nnabla 1.39
        assert y.parent.name == "TopKGrad"


def test_shape() -> None:
    x = V(np.zeros((2, 3)))
    # nnabla 1.39: float32 (2, 3), (3,), (3,)
    for y, want in ((F.shape(x), [2, 3]), (F.shape(x, 1, 2), [3]), (F.shape(x, -1), [3])):
        assert fw(y).dtype == np.float32
        np.testing.assert_array_equal(y.d, want)


def test_reduce_sum_mean_and_bc_add2() -> None:
    x0 = V([[0.1, 2.0, -3.0], [1.0, -0.2, 0.5]], True)
    y = F.reduce_sum(x0)
    np.testing.assert_allclose(fw(y), 0.3999999165534973, rtol=1e-6)  # nnabla 1.39
    x0.grad.zero()
    y.backward(np.float32(2.0))
    np.testing.assert_array_equal(x0.g, np.full((2, 3), 2.0))
    y = F.reduce_mean(x0)
    np.testing.assert_allclose(fw(y), 0.06666665524244308, rtol=1e-6)
    x0.grad.zero()
    y.backward(np.float32(2.0))
    np.testing.assert_allclose(x0.g, np.full((2, 3), 1 / 3), rtol=1e-6)
    b = V([[10.0, 20.0, 30.0]], True)
    g = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    for y in (F.bc_add2(x0, b), F.bc_add2(b, x0)):
        np.testing.assert_allclose(fw(y), x0.d + b.d)
        x0.grad.zero()
        b.grad.zero()
        y.backward(g)
        np.testing.assert_array_equal(x0.g, g)
        np.testing.assert_array_equal(b.g, [[5, 7, 9]])  # nnabla 1.39


def test_bc_add2_is_recorded_and_saved_as_bcadd2(tmp_path: Any) -> None:
    from gradhub_compat.nnabla.utils.nnp_graph import NnpLoader
    from gradhub_compat.nnabla.utils.save import save

    x, z = nn.Variable((2, 3)), nn.Variable((1, 3))
    for inplace in (True, False):  # nnabla 1.39: BcAdd2 {'inplace': ...}
        f = F.bc_add2(x, z, inplace).parent
        assert (f.name, f.info.type_name, f.info.args) == ("BcAdd2", "BcAdd2", {"inplace": inplace})
    assert F.add2(x, z).parent.name == "Add2"
    y = F.bc_add2(x, z, inplace=True)
    path = str(tmp_path / "bc.nnp")
    net = {"name": "n", "batch_size": 2, "outputs": {"y": y}, "names": {"x": x, "z": z}}
    ex = {"name": "r", "network": "n", "data": ["x", "z"], "output": ["y"]}
    save(path, {"networks": [net], "executors": [ex]})
    loaded = NnpLoader(path).get_network("n", batch_size=2)
    out = loaded.outputs["y"]
    assert (out.parent.name, out.parent.info.args) == ("BcAdd2", {"inplace": True})
    loaded.inputs["x"].d = np.arange(6).reshape(2, 3)
    loaded.inputs["z"].d = np.array([[10, 20, 30]])
    # nnabla 1.39 writes the same BcAdd2 function and loads it back to these values
    np.testing.assert_array_equal(fw(out), [[10, 21, 32], [13, 24, 35]])


def test_meshgrid() -> None:
    a, c = V([1.0, 2.0, 3.0], True), V([4.0, 5.0], True)
    xs, ys = F.meshgrid(a, c)
    # nnabla 1.39
    np.testing.assert_array_equal(fw(xs), [[1, 2, 3], [1, 2, 3]])
    np.testing.assert_array_equal(fw(ys), [[4, 4, 4], [5, 5, 5]])
    xi, yi = F.meshgrid(a, c, ij_indexing=True)
    np.testing.assert_array_equal(fw(xi), [[1, 1], [2, 2], [3, 3]])
    np.testing.assert_array_equal(fw(yi), [[4, 5], [4, 5], [4, 5]])
    s = F.sum(xi * 2 + yi * 3)
    s.forward()
    a.grad.zero()
    c.grad.zero()
    s.backward()
    np.testing.assert_array_equal(a.g, [4, 4, 4])
    np.testing.assert_array_equal(c.g, [9, 9])
    three = F.meshgrid(a, c, V([7.0, 8.0, 9.0, 10.0]))
    for got, want in zip(three, np.meshgrid([1, 2, 3], [4, 5], [7, 8, 9, 10])):
        np.testing.assert_array_equal(fw(got), want)
    with pytest.raises(ValueError, match="meshgrid: input 0 must be 1-d"):
        F.meshgrid(V(np.ones((2, 2))))
