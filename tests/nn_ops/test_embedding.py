"""Embed and one_hot: gradients, whole-number float ids and out-of-range ids."""

from __future__ import annotations

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest
from gradhub.testing import gradcheck


def _v(a: object, need_grad: bool = True) -> gh.Variable:
    return gh.Variable(np.asarray(a, dtype=np.float64), need_grad=need_grad)


RNG = np.random.default_rng(7)


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
    gradcheck(
        lambda w: F.embed(gh.Variable(ids, need_grad=False), w) ** 3.0,
        [np.array([[0.5, -1.0], [1.5, 0.2], [-0.7, 0.9]])],
        order=3,
    )


def test_one_hot_is_not_differentiable_and_checks_range() -> None:
    y = F.one_hot(gh.Variable(np.array([[1, 0], [0, 2]]), need_grad=False), (2, 3))
    assert y.dtype == np.float32 and not y.need_grad
    np.testing.assert_array_equal(y.d[0], [[0, 0, 0], [1, 0, 0]])
    with pytest.raises(ValueError, match=r"one_hot: x\[..., 1\] must be in \[0, 3\)"):
        F.one_hot(gh.Variable(np.array([[0, 3]]), need_grad=False), (2, 3))


def test_embed_accepts_whole_number_float_ids() -> None:
    w = gh.Variable(RNG.standard_normal((5, 3)))
    ids = np.array([[0, 4], [2, 2]])
    for fdtype in (np.float32, np.float64):
        idf = gh.Variable(ids.astype(fdtype))  # need_grad=True, as a float nn.Variable
        y = F.embed(idf, w)
        np.testing.assert_array_equal(y.d, w.d[ids])
        for create_graph in (False, True):
            (gw,) = gh.grad([y], [w], create_graph=create_graph)
            expect = np.zeros((5, 3))
            np.add.at(expect, ids.reshape(-1), np.ones((4, 3)))
            np.testing.assert_array_equal(gw.d, expect)


def test_one_hot_accepts_whole_number_float_indices() -> None:
    xi = np.array([[1, 2], [0, 0]])
    y = F.one_hot(gh.Variable(xi.astype(np.float32), need_grad=False), (2, 3))
    np.testing.assert_array_equal(y.d, F.one_hot(gh.Variable(xi, need_grad=False), (2, 3)).d)
    assert y.d[0, 1, 2] == 1.0 and y.d[1, 0, 0] == 1.0 and y.d.sum() == 2.0


@pytest.mark.parametrize("bad", [1.5, -0.25, np.nan, np.inf, 1e20])
def test_non_integral_float_ids_raise_naming_function_and_argument(bad: float) -> None:
    w = gh.Variable(np.ones((4, 2)))
    with pytest.raises(ValueError, match=r"embed: x0 must hold integer ids"):
        F.embed(gh.Variable(np.array([0.0, bad])), w)
    with pytest.raises(ValueError, match=r"one_hot: x must hold integer ids"):
        F.one_hot(gh.Variable(np.array([[bad]]), need_grad=False), (4,))


def test_out_of_range_float_ids_raise() -> None:
    w = gh.Variable(np.ones((4, 2)))
    with pytest.raises(ValueError, match=r"embed: ids in x0 must be in \[0, 4\)"):
        F.embed(gh.Variable(np.array([4.0])), w)
    with pytest.raises(ValueError, match=r"embed: ids in x0 must be in \[0, 4\)"):
        F.embed(gh.Variable(np.array([-1.0])), w)
    with pytest.raises(ValueError, match=r"one_hot: x\[..., 0\] must be in \[0, 3\)"):
        F.one_hot(gh.Variable(np.array([[3.0]]), need_grad=False), (3,))
