"""Copies inside ``mx.autograd.record()``: mxnet records ``nd.array(y)``, ``y.copyto(out)``,
``y.copyto(ctx)``, ``y.as_in_context(other ctx)`` and ``out[:] = y`` as operations of the graph
(an identity, a cast or a broadcast), so gradients flow through the copy; assigning an array of
the graph to a part of an array raises, as does writing into an array of the graph. The expected
values were printed by mxnet 1.9.1 (for ``y = copy(x * 2) * x`` at x = [1, 2, 3]:
dy/dx = 2 * 2x = [4, 8, 12]).
"""

from __future__ import annotations

from collections.abc import Callable

import gradhub_compat.mxnet as mx
import numpy as np
import pytest
from gradhub_compat.mxnet import nd


def _grad(f: Callable[[nd.NDArray], nd.NDArray]) -> tuple[np.ndarray, np.ndarray]:
    x = nd.array([1.0, 2.0, 3.0])
    x.attach_grad()
    with mx.autograd.record():
        y = f(x)
    y.backward()
    return y.asnumpy(), x.grad.asnumpy()


def _copyto(x: nd.NDArray, dtype: str = "float32") -> nd.NDArray:
    out = nd.zeros((3,), dtype=dtype)
    assert (x * 2).copyto(out) is out
    return out


def _assign(x: nd.NDArray, shape: tuple[int, ...] = (3,), key: object = slice(None)) -> nd.NDArray:
    out = nd.zeros(shape)
    out[key] = x * 2
    return out


@pytest.mark.parametrize(
    "f",
    [
        lambda x: nd.array(x * 2) * x,
        lambda x: nd.array(x * 2, dtype="float64") * x.astype("float64"),
        lambda x: nd.array(x * 2, ctx=mx.cpu(1)) * x.as_in_context(mx.cpu(1)),
        lambda x: _copyto(x) * x,
        lambda x: _copyto(x, "float64") * x.astype("float64"),
        lambda x: (x * 2).copyto(mx.cpu()) * x,
        lambda x: _assign(x) * x,
        lambda x: _assign(x, key=()) * x,
        lambda x: nd.array(_assign(x)) * x,
        lambda x: (x * 2).copy() * x,
    ],
    ids=[
        "nd.array",
        "nd.array-float64",
        "nd.array-other-ctx",
        "copyto-array",
        "copyto-float64-array",
        "copyto-context",
        "setitem-slice",
        "setitem-empty-tuple",
        "chained",
        "copy",
    ],
)
def test_recorded_copy_passes_the_gradient(f: Callable[[nd.NDArray], nd.NDArray]) -> None:
    y, g = _grad(f)
    np.testing.assert_array_equal(y, [2.0, 8.0, 18.0])
    np.testing.assert_array_equal(g, [4.0, 8.0, 12.0])  # mxnet 1.9.1; d(2x * x)/dx = 4x


def test_copy_of_a_leaf_and_onto_another_context() -> None:
    # mxnet 1.9.1: nd.array(x) * x -> [2, 4, 6]; sum of a copy on cpu(1) -> [2, 2, 2]
    np.testing.assert_array_equal(_grad(lambda x: nd.array(x) * x)[1], [2.0, 4.0, 6.0])
    np.testing.assert_array_equal(_grad(lambda x: _leaf_copyto(x) * x)[1], [2.0, 4.0, 6.0])
    for f in (
        lambda x: (x * 2).copyto(mx.cpu(1)).sum(),
        lambda x: (x * 2).as_in_context(mx.cpu(1)).sum(),
        lambda x: nd.array(x * 2, ctx=mx.cpu(1)).sum(),
    ):
        y, g = _grad(f)
        np.testing.assert_array_equal(y, [12.0])
        np.testing.assert_array_equal(g, [2.0, 2.0, 2.0])


def _leaf_copyto(x: nd.NDArray) -> nd.NDArray:
    out = nd.zeros((3,))
    x.copyto(out)
    return out


def test_whole_assignment_broadcasts_as_mxnet() -> None:
    # mxnet 1.9.1: out[:] = sum(2x) (shape (1,)) then out * x -> y = 2S x, dy/dx = 2S + 2 sum(x)
    y, g = _grad(lambda x: _sum_assign(x) * x)
    np.testing.assert_array_equal(y, [12.0, 24.0, 36.0])
    np.testing.assert_array_equal(g, [24.0, 24.0, 24.0])
    # (1, 3)[:] = (3,) and (3,)[:] = (1, 3): sum(2x * x) -> [4, 8, 12]
    for f in (
        lambda x: (_assign(x, (1, 3)) * x).sum(),
        lambda x: (_assign_reshaped(x) * x).sum(),
    ):
        y, g = _grad(f)
        np.testing.assert_array_equal(y, [28.0])
        np.testing.assert_array_equal(g, [4.0, 8.0, 12.0])


def _sum_assign(x: nd.NDArray) -> nd.NDArray:
    out = nd.zeros((3,))
    out[:] = (x * 2).sum()
    return out


def _assign_reshaped(x: nd.NDArray) -> nd.NDArray:
    out = nd.zeros((3,))
    out[:] = (x * 2).reshape((1, 3))
    return out


def test_constant_writes_stay_constant() -> None:
    # mxnet 1.9.1: out[:] = 5 or a numpy array inside record is a constant (grad = out)
    def scalar(x: nd.NDArray) -> nd.NDArray:
        out = nd.zeros((3,))
        out[:] = 5
        return out * x

    def partial(x: nd.NDArray) -> nd.NDArray:
        out = nd.zeros((5,))
        out[1:4] = 5
        out[0:2] = np.array([1.0, 2.0])
        return (out[1:4] * x).sum()

    np.testing.assert_array_equal(_grad(scalar)[1], [5.0, 5.0, 5.0])
    np.testing.assert_array_equal(_grad(partial)[1], [2.0, 5.0, 5.0])


@pytest.mark.parametrize(
    "f",
    [
        lambda x: _assign(x, (5,), slice(1, 4)).sum(),
        lambda x: _assign(x, (2, 3), 1).sum(),
        lambda x: _assign(x, (3,), slice(None, None, -1)).sum(),
        lambda x: _assign(x, (3,), [0, 1, 2]).sum(),
    ],
    ids=["slice", "row", "reversed", "advanced"],
)
def test_partial_assignment_of_a_graph_array_raises(f: Callable[[nd.NDArray], nd.NDArray]) -> None:
    # mxnet 1.9.1: "Inplace operations (+=, -=, x[:]=, etc) are not supported when recording"
    with pytest.raises(mx.base.MXNetError, match="Inplace operations"):
        _grad(f)


def test_writing_into_an_array_of_the_graph_raises() -> None:
    x = nd.array([1.0, 2.0, 3.0])
    x.attach_grad()
    out = nd.zeros((3,))
    with mx.autograd.record():
        out[:] = x * 2
        with pytest.raises(mx.base.MXNetError, match="already in a computational graph"):
            out[:] = x * 3
        with pytest.raises(mx.base.MXNetError, match="already in a computational graph"):
            x.copyto(out)
    target = nd.zeros((3,))
    target.attach_grad()
    with mx.autograd.record():
        with pytest.raises(mx.base.MXNetError, match="already in a computational graph"):
            nd.ones((3,)).copyto(target)


def test_recorded_copy_shares_the_array_of_its_output() -> None:
    # mxnet 1.9.1: out keeps its node; rewritten outside record to 5, z = out * x gives
    # dz/dx = out + x * d(out)/dx = 5 + 2 = 7
    x = nd.ones((3,))
    x.attach_grad()
    out = nd.zeros((3,))
    with mx.autograd.record():
        out[:] = x * 2
    out[:] = 5
    with mx.autograd.record():
        z = out * x
    z.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [7.0, 7.0, 7.0])


def test_copy_into_an_integer_dtype_raises() -> None:
    # mxnet passes the gradient through an integer copy; gradhub cannot record it
    with pytest.raises(NotImplementedError, match="integer dtype int32"):
        _grad(lambda x: _copyto(x, "int32").astype("float32") * x)
    with pytest.raises(NotImplementedError, match=r"mx\.nd\.array"):
        _grad(lambda x: nd.array(x * 2, dtype="int32").astype("float32") * x)
