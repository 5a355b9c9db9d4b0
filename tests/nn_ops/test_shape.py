"""Shape functions of gradhub-nn-ops: slice, concatenate, split, stack, pad, flip, transpose,
squeeze, expand_dims, tile and broadcast_to, with nnabla's argument conventions, integer sizes
and the errors naming mismatched inputs."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest


def _v(a: object, need_grad: bool = True) -> gh.Variable:
    return gh.Variable(np.asarray(a, dtype=np.float64), need_grad=need_grad)


# -- indexing ----------------------------------------------------------------------------------


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
    np.testing.assert_array_equal(F.pad(x, (1, 2), constant_value=-1.0).d, [-1, 1, 2, 3, -1, -1])
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


V = gh.Variable


def const(a: Any) -> gh.Variable:
    return gh.Variable(np.asarray(a), need_grad=False)


def raises(fn: Callable[[], Any], exc: type[BaseException], pattern: str) -> None:
    with pytest.raises(exc, match=pattern):
        fn()


# -- shape and misc functions ---------------------------------------------------------------


def test_shape_functions_reject_fractional_sizes() -> None:
    x = V(np.ones((2, 3)))
    raises(lambda: F.pad(x, (1.5, 1)), TypeError, r"pad: pad_width must be a sequence of ints")
    raises(lambda: F.pad(x, 1), TypeError, r"pad: pad_width must be a sequence of ints")
    raises(lambda: F.tile(x, (1.5, 2)), TypeError, r"tile: reps must be an int")
    raises(lambda: F.tile(x, "ab"), TypeError, r"tile: reps must be an int")
    raises(lambda: F.broadcast(x, (2.5, 3)), TypeError, r"broadcast: shape must be an int")
    raises(lambda: F.slice(x, start=(0.5, 0)), TypeError, r"slice: start must hold ints")
    raises(
        lambda: F.one_hot(const([[0], [2]]), (2.5,)),
        TypeError,
        r"one_hot: shape must be a sequence of ints",
    )
    raises(
        lambda: F.embed_backward(const([0]), V(np.ones((1, 2))), shape=(2.5, 2)),
        TypeError,
        r"embed_backward: shape must be a sequence of ints",
    )
    raises(lambda: F.dropout(x, p=None), TypeError, r"dropout: p must be a number")


def test_shape_functions_name_mismatched_inputs() -> None:
    x = V(np.ones((2, 3)))
    raises(
        lambda: F.concatenate(x, V(np.ones((3, 3))), axis=1),
        ValueError,
        re.escape(
            "concatenate: the inputs xs must have the same number of dims and the same "
            "size on every axis but axis=1, got shapes [(2, 3), (3, 3)]"
        ),
    )
    raises(
        lambda: F.stack(x, V(np.ones((3, 3)))),
        ValueError,
        re.escape("stack: the inputs xs must all have the same shape, got shapes [(2, 3), (3, 3)]"),
    )
    raises(
        lambda: F.broadcast(x, (4, 3)),
        ValueError,
        re.escape("broadcast: x of shape (2, 3) cannot be broadcast to shape (4, 3)"),
    )


def test_shape_functions_still_accept_ints() -> None:
    x = V(np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(F.pad(x, np.array([1, 1])).d, np.pad(x.d, ((0, 0), (1, 1))))
    np.testing.assert_array_equal(F.tile(x, (np.int64(2), 1)).d, np.tile(x.d, (2, 1)))
    np.testing.assert_array_equal(F.broadcast(V(np.ones((1, 3))), (5, 2, 3)).d, np.ones((5, 2, 3)))
    np.testing.assert_array_equal(F.slice(x, start=(np.int64(1), None)).d, x.d[1:])
    np.testing.assert_array_equal(
        F.one_hot(const([[0], [2]]), (np.int64(3),)).d, np.eye(3, dtype=np.float32)[[0, 2]]
    )


# -- broadcast_to ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "yshape,axis,first",
    [  # nnabla 1.39's outputs (first 12 values)
        ((4,), None, [1, 2, 3, 4] * 3),
        ((3, 4), None, list(range(1, 13))),
        ((3,), 1, [1] * 4 + [2] * 4 + [3] * 4),
        ((2,), 0, [1] * 12),
        ((2, 3), 0, [1] * 4 + [2] * 4 + [3] * 4),
        ((), None, [1] * 12),
        ((4,), 2, [1, 2, 3, 4] * 3),
        ((4,), -1, [1, 2, 3, 4] * 3),
    ],
)
def test_broadcast_to_nnabla_form(yshape: tuple[int, ...], axis: Any, first: list[int]) -> None:
    x = gh.Variable(np.zeros((2, 3, 4)))
    y = gh.Variable(np.arange(1.0, 1.0 + np.prod(yshape)).reshape(yshape))
    out = F.broadcast_to(x, y, axis) if axis is not None else F.broadcast_to(x, y)
    assert out.shape == (2, 3, 4)
    assert out.d.reshape(-1)[:12].tolist() == first
    # the gradient goes to y: each element counted as many times as it is repeated
    gy, gx = gh.grad([F.sum(out)], [y, x])
    np.testing.assert_allclose(gy.d, np.full(yshape, 24.0 / max(np.prod(yshape), 1)))
    np.testing.assert_allclose(gx.d, 0.0)  # x only gives the shape (as nnabla)


def test_broadcast_to_gradient_matches_finite_differences() -> None:
    x = np.zeros((2, 3, 4))
    gh.testing.gradcheck(
        lambda y: F.broadcast_to(x, y, 1), [np.random.default_rng(1).standard_normal((3,))], order=2
    )


def test_broadcast_to_shape_form_and_errors() -> None:
    v = gh.Variable([1.0, 2.0])
    assert F.broadcast_to(v, (3, 2)).shape == (3, 2)
    assert F.broadcast_to(v, [3, 2]).shape == (3, 2)
    assert F.broadcast_to(v, shape=(3, 2)).shape == (3, 2)
    x = gh.Variable(np.zeros((2, 3, 4)))
    with pytest.raises(ValueError, match=r"broadcast_to.*'y' of shape \(3,\)"):
        F.broadcast_to(x, gh.Variable(np.ones(3)))
    with pytest.raises(ValueError, match=r"broadcast_to.*'axis'"):
        F.broadcast_to(x, gh.Variable(np.ones(3)), 5)
    with pytest.raises(TypeError, match=r"broadcast_to.*'axis'"):
        F.broadcast_to(v, (3, 2), 0)
