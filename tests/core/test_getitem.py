"""Indexing a Variable (``x[key]``, the GetItem function): numpy semantics, gradients and key
errors."""

from __future__ import annotations

import gradhub as gh
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


def test_empty_list_index_selects_nothing() -> None:
    x0 = np.arange(24.0).reshape(3, 4, 2)
    x = gh.Variable(x0)
    y = x[[]]
    assert y.shape == x0[[]].shape == (0, 4, 2)
    (g,) = gh.grad([y], [x], grad_outputs=[np.zeros((0, 4, 2))])
    np.testing.assert_array_equal(g.d, np.zeros_like(x0))
    assert x[1, []].shape == x0[1, []].shape


@pytest.mark.parametrize(
    ("shape", "key", "axis", "size", "n"),
    [
        ((3,), np.array([True, False]), 0, 3, 2),
        ((3, 4), (slice(None), np.array([True, False, True])), 1, 4, 3),
        ((3, 4), (Ellipsis, np.array([True] * 5)), 1, 4, 5),
        ((3, 4), np.ones((3, 3), dtype=bool), 1, 4, 3),
        ((2, 3, 4), (0, None, np.array([True, False])), 1, 3, 2),
        ((3,), [True, False], 0, 3, 2),
    ],
)
def test_boolean_mask_of_another_length_raises_as_numpy(
    shape: tuple[int, ...], key: object, axis: int, size: int, n: int
) -> None:
    """``x[np.array([True, False])]`` on a length-3 ``x`` returned ``[0.]``; numpy raises."""
    x = _v(np.arange(float(np.prod(shape))).reshape(shape))
    with pytest.raises(IndexError, match="boolean index did not match"):
        x.d[key]  # type: ignore[index]
    with pytest.raises(
        IndexError,
        match=rf"get_item\(\) \(GetItem, .*\): get_item: key: boolean index did not match the "
        rf"indexed array along axis {axis}: the axis has size {size} but the boolean index has "
        rf"size {n}",
    ):
        x[key]


def test_boolean_masks_of_the_right_length_still_index() -> None:
    x = _v(np.arange(12.0).reshape(3, 4))
    for key in [np.array([True, False, True]), (Ellipsis, np.array([1, 0, 0, 1], bool)), x.d > 4]:
        np.testing.assert_array_equal(x[key].d, x.d[key])
