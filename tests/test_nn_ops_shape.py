"""Special cases of the shape, linear-algebra and misc functions of gradhub-nn-ops.

The op matrix checks every function against its numpy reference and gradcheck; these tests cover
what it cannot express: operator dispatch (``x[key]``, ``a @ b``), hand-derived gradients
(duplicate indices, embedding rows), error messages, dropout's mask handling and nnabla's
argument conventions.
"""

from __future__ import annotations

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest
from gradhub.testing import gradcheck


def _v(a: object, need_grad: bool = True) -> gh.Variable:
    return gh.Variable(np.asarray(a, dtype=np.float64), need_grad=need_grad)


# -- indexing ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "key",
    [
        1,
        -1,
        (slice(None), 2),
        (Ellipsis, None, slice(None, None, -1)),
        (slice(1, None), [0, 0, 3]),
        ([2, 0], [1, 3]),
        np.array([[0, 1], [1, 1]]),
        (np.array([True, False, True]), slice(0, 2)),
        (),
    ],
)
def test_getitem_matches_numpy(key: object) -> None:
    a = np.arange(12.0).reshape(3, 4)
    y = _v(a)[key]
    np.testing.assert_array_equal(y.d, a[key])
    assert y.creator is not None and y.creator.fdef.name == "GetItem"


def test_getitem_duplicate_indices_accumulate() -> None:
    x = _v(np.arange(5.0))
    y = x[[0, 3, 0, 0, 4]]
    y.backward(np.array([1.0, 2.0, 3.0, 4.0, 5.0]))
    np.testing.assert_array_equal(x.g, [8.0, 0.0, 0.0, 2.0, 5.0])


def test_getitem_with_integer_variable_key() -> None:
    x = _v(np.arange(6.0).reshape(2, 3))
    idx = gh.Variable(np.array([2, 2]), need_grad=False)
    y = x[:, idx]
    np.testing.assert_array_equal(y.d, [[2.0, 2.0], [5.0, 5.0]])
    y.backward()
    np.testing.assert_array_equal(x.g, [[0.0, 0.0, 2.0], [0.0, 0.0, 2.0]])


def test_getitem_is_closed_under_differentiation() -> None:
    # GetItem and GetItemBackward are each other's rules: third order through x[idx] ** 3
    idx = np.array([1, 1, 0, 2])
    gradcheck(lambda x: x[idx] ** 3.0, [np.array([0.5, -1.2, 2.0])], order=3)
    x = _v([0.5, -1.2, 2.0])
    (g,) = gh.grad([(x[idx] ** 3.0).sum()], [x])
    (gg,) = gh.grad([g.sum()], [x])
    # d2/dx2 sum_k x[idx_k]^3 = 6 x_i * count_i
    np.testing.assert_allclose(gg.d, 6 * np.array([0.5, -1.2, 2.0]) * np.array([1, 2, 1]))


def test_getitem_bad_keys_name_the_function() -> None:
    x = _v(np.zeros((2, 3)))
    with pytest.raises(TypeError, match=r"get_item.*key"):
        x[np.array([0.5])]
    with pytest.raises(IndexError, match="get_item"):
        x[5]


def test_slice_follows_nnabla() -> None:
    a = np.arange(24.0).reshape(2, 3, 4)
    x = _v(a)
    # fewer entries than dims: they apply to the last axes
    np.testing.assert_array_equal(F.slice(x, (1, 0), (3, 4), (1, 2)).d, a[:, 1:3, 0:4:2])
    np.testing.assert_array_equal(F.slice(x, (-1,), (None,), (-1,)).d, a[..., ::-1])
    with pytest.raises(ValueError, match="slice: start, stop and step must have the same"):
        F.slice(x, (0,), (1, 2), (1,))
    with pytest.raises(ValueError, match="slice: step must not contain 0"):
        F.slice(x, (0,), (1,), (0,))


# -- joining and splitting ---------------------------------------------------------------------


def test_concatenate_defaults_to_last_axis_as_nnabla() -> None:
    a, b = _v(np.zeros((2, 3))), _v(np.ones((2, 1)))
    assert F.concatenate(a, b).shape == (2, 4)
    assert F.concatenate([a, a], axis=0).shape == (4, 3)
    with pytest.raises(ValueError, match="concatenate"):
        F.concatenate(a, b, axis=0)


def test_split_returns_a_tuple_and_unused_outputs_get_zero_gradient() -> None:
    x = _v(np.arange(6.0).reshape(3, 2))
    parts = F.split(x, axis=0)
    assert isinstance(parts, tuple) and len(parts) == 3
    (parts[1] * 2.0).sum().backward()
    np.testing.assert_array_equal(x.g, [[0.0, 0.0], [2.0, 2.0], [0.0, 0.0]])
    (one,) = F.split(_v(np.ones((1, 2))), axis=0)
    assert one.shape == (2,)


def test_stack_and_split_are_inverse() -> None:
    a = np.arange(6.0).reshape(2, 3)
    x = _v(a)
    np.testing.assert_array_equal(F.stack(*F.split(x, axis=1), axis=1).d, a)


# -- pad, flip, tile, squeeze, expand_dims -----------------------------------------------------


def test_pad_modes_and_errors() -> None:
    x = _v([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(F.pad(x, (1, 2), constant_value=-1.0).d,
                                  [-1, 1, 2, 3, -1, -1])
    np.testing.assert_array_equal(F.pad(x, (2, 1), mode="repeat").d, [1, 1, 1, 2, 3, 3])
    np.testing.assert_array_equal(F.pad(x, (5, 0), mode="reflect").d, [2, 1, 2, 3, 2, 1, 2, 3])
    # reflect gradient: each input element collects the gradients of its copies
    y = F.pad(x, (2, 1), mode="reflect")  # [3, 2, 1, 2, 3, 2]
    y.backward(np.array([1.0, 10.0, 100.0, 1000.0, 10000.0, 100000.0]))
    np.testing.assert_array_equal(x.g, [100.0, 101010.0, 10001.0])
    with pytest.raises(ValueError, match="pad: pad_width must hold an even number"):
        F.pad(x, (1,))
    with pytest.raises(ValueError, match="pad: mode must be one of"):
        F.pad(x, (1, 1), mode="wrap")
    with pytest.raises(ValueError, match="pad: pad_width has 4 values"):
        F.pad(x, (1, 1, 1, 1))


def test_flip_default_axis_is_last() -> None:
    a = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(F.flip(_v(a)).d, a[:, ::-1])


def test_transpose_rejects_non_permutations() -> None:
    with pytest.raises(ValueError, match="transpose: axes"):
        F.transpose(_v(np.zeros((2, 3))), (0, 0))


def test_squeeze_and_expand_dims() -> None:
    x = _v(np.zeros((1, 3, 1)))
    assert F.squeeze(x).shape == (3,)
    assert F.expand_dims(x, 1).shape == (1, 1, 3, 1)
    with pytest.raises(ValueError, match="squeeze: axis 1 has size 3"):
        F.squeeze(x, axis=1)


def test_tile_gradient_sums_the_copies() -> None:
    x = _v([1.0, 2.0])
    F.tile(x, (3, 2)).sum().backward()
    np.testing.assert_array_equal(x.g, [6.0, 6.0])


# -- linear algebra ----------------------------------------------------------------------------


def test_matmul_operator_dispatches_to_batch_matmul() -> None:
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((4, 5))
    va, vb = _v(a), _v(b)
    y = va @ vb
    assert y.creator is not None and y.creator.fdef.name == "BatchMatmul"
    np.testing.assert_allclose(y.d, a @ b)
    g = rng.standard_normal((2, 3, 5))
    y.backward(g)
    np.testing.assert_allclose(va.g, g @ b.T)
    np.testing.assert_allclose(vb.g, np.einsum("bij,bik->jk", a, g))  # summed over the batch
    v = rng.standard_normal(4)
    np.testing.assert_allclose((_v(v) @ vb).d, v @ b)
    np.testing.assert_allclose((a @ _v(v)).d, a @ v)  # ndarray @ Variable


def test_batch_matmul_mismatch_names_the_function() -> None:
    with pytest.raises(ValueError, match="batch_matmul"):
        F.batch_matmul(_v(np.zeros((2, 3))), _v(np.zeros((2, 3))))


def test_affine_nnabla_shapes_and_values() -> None:
    rng = np.random.default_rng(1)
    x, w, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((4, 2, 5)), rng.standard_normal(
        (2, 5))
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
    gradcheck(lambda x, w, b: F.affine(x, w, b) ** 2.0,
              [rng.standard_normal((2, 3)), rng.standard_normal((3, 2)),
               rng.standard_normal(2)], order=3)


def test_einsum_rejects_diagonals() -> None:
    with pytest.raises(ValueError, match="einsum: repeated subscripts"):
        F.einsum(_v(np.zeros((2, 2))), equation="ii->i")


# -- dropout, embed, one_hot -------------------------------------------------------------------


def test_dropout_seeded_mask_and_backward_reuses_it() -> None:
    x = _v(np.ones((50,)))
    y1, y2 = F.dropout(x, p=0.3, seed=5), F.dropout(x, p=0.3, seed=5)
    np.testing.assert_array_equal(y1.d, y2.d)
    assert set(np.unique(y1.d)) <= {0.0, 1.0 / 0.7}
    assert 0 < np.count_nonzero(y1.d) < 50
    y1.backward()
    np.testing.assert_array_equal(x.g, y1.d)  # dy/dx is the scaled mask itself


def test_dropout_global_generator_and_reexecution() -> None:
    from gradhub_nn_ops.misc import seed_dropout

    seed_dropout(123)
    x = _v(np.ones((200,)))
    y = F.dropout(x, p=0.5)
    first = y.d.copy()
    y2 = F.dropout(x, p=0.5)
    assert not np.array_equal(first, y2.d)  # a new mask on every call
    y.forward()  # re-execution draws a new mask ...
    assert not np.array_equal(first, y.d)
    y.backward()
    np.testing.assert_array_equal(x.g, y.d)  # ... and backward uses that one
    seed_dropout(123)
    np.testing.assert_array_equal(F.dropout(x, p=0.5).d, first)


def test_dropout_rejects_bad_p() -> None:
    with pytest.raises(ValueError, match=r"dropout: p must be in \[0, 1\)"):
        F.dropout(_v([1.0]), p=1.0)


def test_embed_gradient_accumulates_rows() -> None:
    w = _v(np.arange(8.0).reshape(4, 2))
    ids = gh.Variable(np.array([[3, 1], [3, 3]]), need_grad=False)
    y = F.embed(ids, w)
    assert y.shape == (2, 2, 2)
    np.testing.assert_array_equal(y.d[0, 0], [6.0, 7.0])
    y.backward()
    np.testing.assert_array_equal(w.g, [[0, 0], [1, 1], [0, 0], [3, 3]])
    with pytest.raises(ValueError, match=r"embed: ids in x0 must be in \[0, 4\)"):
        F.embed(gh.Variable(np.array([4]), need_grad=False), w)


def test_embed_double_backward() -> None:
    ids = np.array([0, 2, 0])
    gradcheck(lambda w: F.embed(gh.Variable(ids, need_grad=False), w) ** 3.0,
              [np.array([[0.5, -1.0], [1.5, 0.2], [-0.7, 0.9]])], order=3)


def test_one_hot_is_not_differentiable_and_checks_range() -> None:
    y = F.one_hot(gh.Variable(np.array([[1, 0], [0, 2]]), need_grad=False), (2, 3))
    assert y.dtype == np.float32 and not y.need_grad
    np.testing.assert_array_equal(y.d[0], [[0, 0, 0], [1, 0, 0]])
    with pytest.raises(ValueError, match=r"one_hot: x\[..., 1\] must be in \[0, 3\)"):
        F.one_hot(gh.Variable(np.array([[0, 3]]), need_grad=False), (2, 3))
