"""The array functions of gradhub-nn-ops (:mod:`gradhub_nn_ops.arrays`) against nnabla 1.39.

Every expected value below is nnabla 1.39's output for the same input (float32, CPU context),
recorded with real nnabla; gradients are ``x.g`` after ``y.backward(g)`` with
``g = arange(1, y.size + 1).reshape(y.shape)`` unless said otherwise.
"""

from __future__ import annotations

from typing import Any

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest


def _v(a: Any, need_grad: bool = True) -> gh.Variable:
    a = np.asarray(a)
    if a.dtype.kind != "f":
        return gh.Variable(a, need_grad=False)
    return gh.Variable(a.astype(np.float32), need_grad=need_grad)


def _backward(y: gh.Variable) -> None:
    y.backward(np.arange(1, y.size + 1, dtype=np.float32).reshape(y.shape))


def _check(y: gh.Variable, want: Any, xs: list[gh.Variable], grads: list[Any]) -> None:
    np.testing.assert_allclose(y.d, np.asarray(want, dtype=np.float32), rtol=1e-6, atol=1e-6)
    _backward(y)
    for x, g in zip(xs, grads):
        np.testing.assert_allclose(x.g, np.asarray(g, dtype=np.float32), rtol=1e-6, atol=1e-6)


X23 = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]


# nnabla 1.39: F.cumsum(x, axis=1, exclusive, reverse) on X23
@pytest.mark.parametrize(
    ("exclusive", "reverse", "want", "grad"),
    [
        (False, False, [[1, 3, 6], [4, 9, 15]], [[6, 5, 3], [15, 11, 6]]),
        (False, True, [[6, 5, 3], [15, 11, 6]], [[1, 3, 6], [4, 9, 15]]),
        (True, False, [[0, 1, 3], [0, 4, 9]], [[5, 3, 0], [11, 6, 0]]),
        (True, True, [[5, 3, 0], [11, 6, 0]], [[0, 1, 3], [0, 4, 9]]),
    ],
)
def test_cumsum_matches_nnabla(exclusive: bool, reverse: bool, want: Any, grad: Any) -> None:
    x = _v(X23)
    _check(F.cumsum(x, axis=1, exclusive=exclusive, reverse=reverse), want, [x], [grad])


def test_cumsum_default_axis_is_0() -> None:
    x = _v(X23)  # nnabla 1.39: F.cumsum(x)
    _check(F.cumsum(x), [[1, 2, 3], [5, 7, 9]], [x], [[[5, 7, 9], [4, 5, 6]]])


XZ = [[2.0, 0.0, 3.0, 0.5], [1.5, 2.0, 0.0, 0.0]]


# nnabla 1.39: F.cumprod(x, axis=1, ...) on XZ (zeros included; its gradient is exact there)
@pytest.mark.parametrize(
    ("exclusive", "reverse", "want", "grad"),
    [
        (False, False, [[2, 0, 0, 0], [1.5, 3, 0, 0]], [[1, 34, 0, 0], [17, 9, 21, 0]]),
        (False, True, [[0, 0, 1.5, 0.5], [0, 0, 0, 0]], [[0, 6, 1.5, 13], [0, 0, 0, 8]]),
        (True, False, [[1, 2, 0, 0], [1, 1.5, 3, 0]], [[2, 30, 0, 0], [20, 10.5, 24, 0]]),
        (True, True, [[0, 1.5, 0.5, 1], [0, 0, 0, 1]], [[0, 1.5, 1, 9], [0, 0, 0, 7]]),
    ],
)
def test_cumprod_matches_nnabla(exclusive: bool, reverse: bool, want: Any, grad: Any) -> None:
    x = _v(XZ)
    _check(F.cumprod(x, axis=1, exclusive=exclusive, reverse=reverse), want, [x], [grad])


def test_cumprod_default_axis_matches_nnabla() -> None:
    x = _v(XZ)
    _check(F.cumprod(x), [[2, 0, 3, 0.5], [3, 0, 0, 0]], [x], [[[8.5, 14, 3, 4], [10, 0, 21, 4]]])


XG = np.arange(24.0).reshape(2, 3, 4)


def test_gather_matches_nnabla() -> None:
    x = _v(XG)  # nnabla 1.39: F.gather(x, [[2, 0], [1, 1]], axis=1)
    y = F.gather(x, _v([[2, 0], [1, 1]]), axis=1)
    want = [
        [[[8, 9, 10, 11], [0, 1, 2, 3]], [[4, 5, 6, 7], [4, 5, 6, 7]]],
        [[[20, 21, 22, 23], [12, 13, 14, 15]], [[16, 17, 18, 19], [16, 17, 18, 19]]],
    ]
    grad = [
        [[5, 6, 7, 8], [22, 24, 26, 28], [1, 2, 3, 4]],
        [[21, 22, 23, 24], [54, 56, 58, 60], [17, 18, 19, 20]],
    ]
    _check(y, want, [x], [grad])


def test_gather_batch_dims_matches_nnabla() -> None:
    x = _v(XG)  # nnabla 1.39: F.gather(x, [[3, 0], [1, 1]], axis=2, batch_dims=1)
    y = F.gather(x, _v([[3, 0], [1, 1]]), axis=2, batch_dims=1)
    want = [[[3, 0], [7, 4], [11, 8]], [[13, 13], [17, 17], [21, 21]]]
    grad = [
        [[2, 0, 0, 1], [4, 0, 0, 3], [6, 0, 0, 5]],
        [[0, 15, 0, 0], [0, 19, 0, 0], [0, 23, 0, 0]],
    ]
    _check(y, want, [x], [grad])
    x = _v(XG)  # nnabla 1.39: F.gather(x, [[2, 0, 2], [1, 1, 0]], axis=1, batch_dims=1)
    y = F.gather(x, _v([[2, 0, 2], [1, 1, 0]]), axis=1, batch_dims=1)
    want = [
        [[8, 9, 10, 11], [0, 1, 2, 3], [8, 9, 10, 11]],
        [[16, 17, 18, 19], [16, 17, 18, 19], [12, 13, 14, 15]],
    ]
    grad = [
        [[5, 6, 7, 8], [0, 0, 0, 0], [10, 12, 14, 16]],
        [[21, 22, 23, 24], [30, 32, 34, 36], [0, 0, 0, 0]],
    ]
    _check(y, want, [x], [grad])


D25 = np.arange(1.0, 11.0).reshape(2, 5)


def test_gather_nd_matches_nnabla() -> None:
    d = _v(D25)  # nnabla 1.39: F.gather_nd(d, [[1, 1, 0], [0, 1, 0]])
    _check(
        F.gather_nd(d, _v([[1, 1, 0], [0, 1, 0]])),
        [6, 7, 1],
        [d],
        [[[3, 0, 0, 0, 0], [1, 2, 0, 0, 0]]],
    )
    d = _v(D25)  # nnabla 1.39: F.gather_nd(d, [[1, 1, 0]])
    want = [[6, 7, 8, 9, 10], [6, 7, 8, 9, 10], [1, 2, 3, 4, 5]]
    _check(F.gather_nd(d, _v([[1, 1, 0]])), want, [d], [[[11, 12, 13, 14, 15], [7, 9, 11, 13, 15]]])
    d = _v(D25)  # nnabla 1.39: negative indices count from the end
    _check(F.gather_nd(d, _v([[-1], [-2]])), [9], [d], [[[0] * 5, [0, 0, 0, 1, 0]]])


def test_scatter_nd_matches_nnabla() -> None:
    data = _v([9.0, 10.0, 11.0, 12.0])  # nnabla 1.39: F.scatter_nd(data, [[4, 3, 1, 7]], (8,))
    y = F.scatter_nd(data, np.array([[4, 3, 1, 7]]), shape=(8,))
    _check(y, [0, 11, 0, 10, 9, 0, 0, 12], [data], [[5, 4, 2, 8]])
    data = _v([9.0, 10.0, 11.0, 12.0])  # duplicates, add=True
    y = F.scatter_nd(data, np.array([[4, 3, 4, 7]]), shape=(8,), add=True)
    _check(y, [0, 0, 0, 10, 20, 0, 0, 12], [data], [[5, 4, 5, 8]])
    data = _v([9.0, 10.0, 11.0, 12.0])  # duplicates without add: the last wins; nnabla's grad
    y = F.scatter_nd(data, np.array([[4, 3, 4, 7]]), shape=(8,))
    _check(y, [0, 0, 0, 10, 11, 0, 0, 12], [data], [[5, 4, 5, 8]])
    data = _v([[1.0, 2.0], [3.0, 4.0]])  # rows, a negative index
    y = F.scatter_nd(data, np.array([[-1, 0]]), shape=(3, 2))
    _check(y, [[3, 4], [0, 0], [1, 2]], [data], [[[5, 6], [1, 2]]])


def test_scatter_nd_out() -> None:
    # nnabla 1.39's values; the gradient of out is exact here (nnabla gives zeros, see the
    # migration guide)
    data, out = _v([9.0, 10.0]), _v(np.arange(1.0, 7.0))
    y = F.scatter_nd(data, np.array([[4, 1]]), out=out)
    _check(y, [1, 10, 3, 4, 9, 6], [data, out], [[5, 2], [1, 0, 3, 4, 0, 6]])
    data, out = _v([9.0, 10.0]), _v(np.arange(1.0, 7.0))
    y = F.scatter_nd(data, np.array([[4, 4]]), out=out, add=True)
    _check(y, [1, 2, 3, 4, 24, 6], [data, out], [[5, 5], [1, 2, 3, 4, 5, 6]])


@pytest.mark.parametrize(
    ("axis", "idx", "want", "g1"),
    [
        (0, [[1, 0, 1]], [[0.5, 2.5, 0.5], [1.5, 0.5, 3.5]], [[4, 2, 6], [0, 0, 0]]),
        (1, [[0, 0], [2, 1]], [[3.5, 0.5, 0.5], [0.5, 5.5, 4.5]], [[1, 1, 0], [6, 5, 0]]),
        (None, [[1, 1, 1], [0, 1, 0]], [[4.5, 0.5, 6.5], [1.5, 7.5, 3.5]], [[4, 5, 6], [1, 5, 3]]),
        (-1, [[0, 0], [2, 1]], [[3.5, 0.5, 0.5], [0.5, 5.5, 4.5]], [[1, 1, 0], [6, 5, 0]]),
    ],
)
def test_scatter_add_matches_nnabla(axis: Any, idx: Any, want: Any, g1: Any) -> None:
    x0, x1 = _v(np.full((2, 3), 0.5)), _v(X23)
    y = F.scatter_add(x0, _v(idx), x1, axis=axis)
    _check(y, want, [x0, x1], [[[1, 2, 3], [4, 5, 6]], g1])


XS = [[3.0, 1.0, 2.0], [0.5, 9.0, -1.0]]


def test_sort_matches_nnabla() -> None:
    x = _v(XS)  # nnabla 1.39: F.sort(x, with_index=True)
    y, i = F.sort(x, with_index=True)
    assert i.d.tolist() == [[1, 2, 0], [2, 0, 1]]
    # nnabla 1.39's values; its gradient, [[2, 3, 1], [6, 4, 5]], applies the inverse
    # permutation (dx[j] = dy[i[j]]); the exact one, gradhub's, is dx[i[j]] = dy[j]
    _check(y, [[1, 2, 3], [-1, 0.5, 9]], [x], [[[3, 1, 2], [5, 6, 4]]])
    x = _v(XS)  # nnabla 1.39: F.sort(x, axis=0, reverse=True)
    _check(
        F.sort(x, axis=0, reverse=True), [[3, 9, 2], [0.5, 1, -1]], [x], [[[1, 5, 3], [4, 2, 6]]]
    )
    assert F.sort(_v(XS), only_index=True).d.tolist() == [[1, 2, 0], [2, 0, 1]]
    # ties keep their order, as nnabla 1.39's
    t = _v([2.0, 1.0, 2.0, 1.0])
    assert F.sort(t, only_index=True).d.tolist() == [1, 3, 0, 2]
    assert F.sort(t, reverse=True, only_index=True).d.tolist() == [0, 2, 1, 3]


XT = [[1.0, -5.0, 3.0, 2.0], [4.0, 0.5, -6.0, 1.0]]


@pytest.mark.parametrize(
    ("kw", "want", "index", "grad"),
    [
        ({"k": 2}, [[3, 2], [4, 1]], [[2, 3], [0, 3]], [[0, 0, 1, 2], [3, 0, 0, 4]]),
        ({"k": 2, "abs": True}, [[-5, 3], [-6, 4]], [[1, 2], [2, 0]], [[0, 1, 2, 0], [4, 0, 3, 0]]),
        (
            {"k": 2, "largest": False},
            [[-5, 1], [-6, 0.5]],
            [[1, 0], [2, 1]],
            [[2, 1, 0, 0], [0, 4, 3, 0]],
        ),
        (
            {"k": 3, "largest": False, "abs": True},
            [[1, 2, 3], [0.5, 1, 4]],
            [[0, 3, 2], [1, 3, 0]],
            [[1, 0, 3, 2], [6, 4, 0, 5]],
        ),
    ],
)
def test_top_k_data_matches_nnabla(kw: dict[str, Any], want: Any, index: Any, grad: Any) -> None:
    x = _v(XT)
    y, i = F.top_k_data(x, with_index=True, **kw)
    assert i.d.tolist() == index
    _check(y, want, [x], [grad])


def test_top_k_data_base_axis_and_not_reduced() -> None:
    x3 = np.arange(12.0).reshape(2, 2, 3)[:, :, ::-1].copy()
    x = _v(x3)  # nnabla 1.39: F.top_k_data(x, 2, base_axis=2, with_index=True)
    y, i = F.top_k_data(x, 2, base_axis=2, with_index=True)
    assert i.d.tolist() == [[[0, 1], [0, 1]], [[0, 1], [0, 1]]]
    want = [[[2, 1], [5, 4]], [[8, 7], [11, 10]]]
    _check(y, want, [x], [[[[1, 2, 0], [3, 4, 0]], [[5, 6, 0], [7, 8, 0]]]])
    x = _v(x3)  # nnabla 1.39: F.top_k_data(x, 3, base_axis=0, with_index=True)
    y, i = F.top_k_data(x, 3, base_axis=0, with_index=True)
    assert i.d.tolist() == [9, 10, 11]
    _check(y, [11, 10, 9], [x], [[[[0, 0, 0], [0, 0, 0]], [[0, 0, 0], [1, 2, 3]]]])
    # reduce=False: nnabla 1.39's values; its gradient passes all of dy (gradhub's is exact)
    x = _v(XT)
    y = F.top_k_data(x, 2, reduce=False)
    _check(y, [[0, 0, 3, 2], [4, 0, 0, 1]], [x], [[[0, 0, 3, 4], [5, 0, 0, 8]]])
    with pytest.raises(ValueError, match="reduce must be True"):
        F.top_k_data(_v(XT), 2, reduce=False, with_index=True)


def test_arange_and_linspace_match_nnabla() -> None:
    # nnabla 1.39's outputs (float32)
    cases = [
        ((0, 5), [0, 1, 2, 3, 4]),
        ((0.5, 3, 0.7), [0.5, 1.2, 1.9, 2.6]),
        ((5, 0, -1.5), [5, 3.5, 2, 0.5]),
        ((0, 0), []),
        ((0, 1, 0.3), [0, 0.3, 0.6, 0.9]),
        ((2, 1), []),
    ]
    for args, want in cases:
        y = F.arange(*args)
        assert y.d.dtype == np.float32 and not y.need_grad
        np.testing.assert_array_equal(y.d, np.array(want, dtype=np.float32))
    for args, want in [
        ((0, 1, 5), [0, 0.25, 0.5, 0.75, 1]),
        ((1, -1, 3), [1, 0, -1]),
        ((2, 3, 1), [2]),
    ]:
        np.testing.assert_array_equal(F.linspace(*args).d, np.array(want, dtype=np.float32))
    assert F.linspace(0, 1, 0).shape == (0,)


def test_eye_like_matches_nnabla() -> None:
    x = _v(np.ones((3, 2)))  # nnabla 1.39: F.eye_like(x, k=-2); no gradient
    y = F.eye_like(x, k=-2)
    np.testing.assert_array_equal(y.d, [[0, 0], [0, 0], [1, 0]])
    assert not y.need_grad
    np.testing.assert_array_equal(F.eye_like(_v(np.ones((2, 3)))).d, [[1, 0, 0], [0, 1, 0]])
    with pytest.raises(ValueError, match="2-d"):
        F.eye_like(_v(np.ones((2, 2, 2))))


def test_matrix_diag_and_part_match_nnabla() -> None:
    x = _v([[1.0, 2.0], [3.0, 4.0]])  # nnabla 1.39: F.matrix_diag(x)
    _check(F.matrix_diag(x), [[[1, 0], [0, 2]], [[3, 0], [0, 4]]], [x], [[[1, 4], [5, 8]]])
    x = _v(np.arange(8.0).reshape(2, 2, 2))  # nnabla 1.39: F.matrix_diag_part(x)
    _check(F.matrix_diag_part(x), [[0, 3], [4, 7]], [x], [[[[1, 0], [0, 2]], [[3, 0], [0, 4]]]])


M34 = np.arange(1.0, 13.0).reshape(3, 4)


@pytest.mark.parametrize(
    ("k", "upper", "want"),
    [
        (0, True, [[1, 2, 3, 4], [0, 6, 7, 8], [0, 0, 11, 12]]),
        (0, False, [[1, 0, 0, 0], [5, 6, 0, 0], [9, 10, 11, 0]]),
        (1, True, [[0, 2, 3, 4], [0, 0, 7, 8], [0, 0, 0, 12]]),
        (1, False, [[1, 2, 0, 0], [5, 6, 7, 0], [9, 10, 11, 12]]),
        (-1, True, [[1, 2, 3, 4], [5, 6, 7, 8], [0, 10, 11, 12]]),
        (-1, False, [[0, 0, 0, 0], [5, 0, 0, 0], [9, 10, 0, 0]]),
    ],
)
def test_trilu_matches_nnabla(k: int, upper: bool, want: Any) -> None:
    x = _v(M34)  # with dy = M34 the gradient equals the output, as nnabla 1.39's
    _check(F.trilu(x, k=k, upper=upper), want, [x], [want])


A23 = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
B32 = [[1.0, 0.0], [2.0, 1.0], [0.0, 3.0]]


@pytest.mark.parametrize(
    ("a", "b", "want", "ga", "gb"),
    [
        (A23, B32, [[5, 11], [14, 23]], [[1, 4, 6], [3, 10, 12]], [[13, 18], [17, 24], [21, 30]]),
        ([1.0, 2.0], [3.0, 4.0], 11, [3, 4], [1, 2]),
        (A23, [1.0, 2.0, 3.0], [14, 32], [[1, 2, 3], [2, 4, 6]], [9, 12, 15]),
        ([1.0, 2.0], A23, [9, 12, 15], [14, 32], [[1, 2, 3], [2, 4, 6]]),
        (
            np.arange(12.0).reshape(2, 2, 3),
            B32,
            [[[2, 7], [11, 19]], [[20, 31], [29, 43]]],
            [[[1, 4, 6], [3, 10, 12]], [[5, 16, 18], [7, 22, 24]]],
            [[102, 120], [118, 140], [134, 160]],
        ),
        (
            A23,
            np.arange(12.0).reshape(2, 3, 2),
            [[[16, 22], [52, 58]], [[34, 49], [124, 139]]],
            [[48, 68, 88], [104, 156, 208]],
            [[[21, 26], [27, 34], [33, 42]], [[31, 36], [41, 48], [51, 60]]],
        ),
    ],
)
def test_dot_matches_nnabla(a: Any, b: Any, want: Any, ga: Any, gb: Any) -> None:
    va, vb = _v(a), _v(b)
    _check(F.dot(va, vb), want, [va, vb], [ga, gb])


P23 = [[0.2, 0.5, 0.3], [0.6, 0.3, 0.1]]


def test_categorical_cross_entropy_matches_nnabla() -> None:
    x = _v(P23)  # nnabla 1.39: F.categorical_cross_entropy(x, [[1], [0]])
    y = F.categorical_cross_entropy(x, _v([[1], [0]]))
    _check(y, [[0.6931471824645996], [0.5108255743980408]], [x], [[[0, -2, 0], [-10 / 3, 0, 0]]])
    x = _v(P23)  # a negative label: loss 0, no gradient
    y = F.categorical_cross_entropy(x, _v([[-1], [2]]))
    _check(y, [[0], [2.3025851249694824]], [x], [[[0, 0, 0], [0, 0, -20]]])
    x = _v(P23)  # axis 0
    y = F.categorical_cross_entropy(x, _v([[1, 0, 0]]), axis=0)
    want = [[0.5108255743980408, 0.6931471824645996, 1.2039728164672852]]
    _check(y, want, [x], [[[0, -4, -10], [-5 / 3, 0, 0]]])


def test_top_n_error_and_binary_error_match_nnabla() -> None:
    s = _v([[0.1, 0.5, 0.4], [0.3, 0.3, 0.4], [0.2, 0.2, 0.6]])
    # nnabla 1.39's outputs
    assert F.top_n_error(s, _v([[1], [2], [0]])).d.tolist() == [[0], [0], [1]]
    assert F.top_n_error(s, _v([[1], [0], [0]]), n=2).d.tolist() == [[0], [1], [1]]
    assert F.top_n_error(s, _v([[1], [0], [1]])).d.tolist() == [[0], [1], [1]]
    assert F.top_n_error(s, _v([[0, 1, 2]]), axis=0).d.tolist() == [[1, 1, 0]]
    ties = _v([[0.3, 0.3, 0.3, 0.1]])
    assert F.top_n_error(ties, _v([[2]]), n=2).d.tolist() == [[1]]
    x = _v([0.2, 0.5, 0.7, 0.49, -1.0])
    e = F.binary_error(x, _v([0.0, 0.0, 1.0, 0.5, 0.0]))
    assert e.d.tolist() == [0, 1, 0, 1, 0] and e.d.dtype == np.float32
    assert not e.need_grad


def test_dot_takes_one_numpy_argument_as_a_constant() -> None:
    # regression: dot(Variable, ndarray) raised TypeError, and so did grad/hessian/vmap of a
    # function calling dot with an argument they do not transform
    from gradhub.func import grad, vmap

    a = np.array([[1.0, 2.0], [3.0, 4.0]])
    b = gh.Variable(np.array([1.0, -1.0]))
    np.testing.assert_array_equal(F.dot(a, b).d, a @ b.d)
    np.testing.assert_array_equal(F.dot(b, a).d, b.d @ a)
    np.testing.assert_array_equal(grad(lambda w: F.sum(F.dot(a, w)))(b).d, a.sum(axis=0))
    rows = vmap(lambda r: F.dot(r, b), in_axes=0)(gh.Variable(a))
    np.testing.assert_array_equal(rows.d, a @ b.d)
    np.testing.assert_array_equal(F.dot(np.ones(2), np.ones(2)), 2.0)  # neither: numpy's
