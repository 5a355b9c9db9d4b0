"""The mxnet layer's broadcast operators (``broadcast_add`` ... on symbols): values as mxnet
1.9.1 gives them, gradients against float64 finite differences, shapes, names and errors.
"""

from __future__ import annotations

import gradhub_compat.mxnet as mx
import numpy as np
import pytest

_X = np.arange(6.0).reshape(2, 3) + 1


_Y21 = np.array([[2.0], [3.0]])


_HEAD = np.arange(6.0).reshape(2, 3) + 1


# mxnet 1.9.1 (float32): forward, grad x, grad y for x = _X, y = _Y21, head gradient _HEAD
_ORACLE_21 = {
    "broadcast_add": ([3, 4, 5, 7, 8, 9], [1, 2, 3, 4, 5, 6], [6, 15]),
    "broadcast_sub": ([-1, 0, 1, 1, 2, 3], [1, 2, 3, 4, 5, 6], [-6, -15]),
    "broadcast_mul": ([2, 4, 6, 12, 15, 18], [2, 4, 6, 12, 15, 18], [14, 77]),
    "broadcast_div": (
        [0.5, 1, 1.5, 4 / 3, 5 / 3, 2],
        [0.5, 1, 1.5, 4 / 3, 5 / 3, 2],
        [-3.5, -8.55555534362793],
    ),
    "broadcast_maximum": ([2, 2, 3, 4, 5, 6], [0, 2, 3, 4, 5, 6], [1, 0]),
    "broadcast_minimum": ([1, 2, 2, 3, 3, 3], [1, 2, 0, 0, 0, 0], [3, 15]),
    "broadcast_power": (
        [1, 4, 9, 64, 125, 216],
        [2, 8, 18, 192, 375, 648],
        [35.20771026611328, 3682.910400390625],
    ),
}


_NUMPY = {
    "broadcast_add": np.add,
    "broadcast_sub": np.subtract,
    "broadcast_mul": np.multiply,
    "broadcast_div": np.divide,
    "broadcast_power": np.power,
    "broadcast_maximum": np.maximum,
    "broadcast_minimum": np.minimum,
}


@pytest.mark.parametrize("op", sorted(_ORACLE_21))
def test_broadcast_operators_match_mxnet(op: str) -> None:
    x, y = mx.sym.Variable("x"), mx.sym.Variable("y")
    gx, gy = mx.nd.zeros(_X.shape), mx.nd.zeros(_Y21.shape)
    ex = getattr(mx.sym, op)(x, y).bind(
        mx.cpu(), {"x": mx.nd.array(_X), "y": mx.nd.array(_Y21)}, {"x": gx, "y": gy}
    )
    out = ex.forward(is_train=True)[0]
    ex.backward(mx.nd.array(_HEAD))
    val, ex_gx, ex_gy = _ORACLE_21[op]
    np.testing.assert_allclose(out.asnumpy().ravel(), val, rtol=1e-5)
    np.testing.assert_allclose(gx.asnumpy().ravel(), ex_gx, rtol=1e-5)
    np.testing.assert_allclose(gy.asnumpy().ravel(), ex_gy, rtol=1e-5)


@pytest.mark.parametrize("yshape", [(1, 3), (2, 1), (3,), (1,), (2, 3)])
@pytest.mark.parametrize("op", sorted(_NUMPY))
def test_broadcast_gradients_against_finite_differences(op: str, yshape: tuple[int, ...]) -> None:
    rng = np.random.default_rng(0)
    xv = rng.uniform(0.5, 2.0, (2, 3))
    yv = rng.uniform(0.5, 2.0, yshape)  # no ties: max/min are differentiable here
    head = rng.standard_normal((2, 3))
    x, y = mx.sym.Variable("x"), mx.sym.Variable("y")
    gx, gy = mx.nd.zeros(xv.shape, dtype="float64"), mx.nd.zeros(yshape, dtype="float64")
    ex = getattr(mx.sym, op)(x, y).bind(
        mx.cpu(),
        {"x": mx.nd.array(xv, dtype="float64"), "y": mx.nd.array(yv, dtype="float64")},
        {"x": gx, "y": gy},
    )
    out = ex.forward(is_train=True)[0]
    np.testing.assert_allclose(out.asnumpy(), _NUMPY[op](xv, yv), rtol=1e-12)
    ex.backward(mx.nd.array(head, dtype="float64"))

    def f(a: np.ndarray, b: np.ndarray) -> float:
        return float((_NUMPY[op](a, b) * head).sum())

    for arr, other_first, got in ((xv, True, gx), (yv, False, gy)):
        num = np.zeros_like(arr)
        for k in np.ndindex(arr.shape):
            p, m = arr.copy(), arr.copy()
            p[k] += 1e-6
            m[k] -= 1e-6
            fp = f(p, yv) if other_first else f(xv, p)
            fm = f(m, yv) if other_first else f(xv, m)
            num[k] = (fp - fm) / 2e-6
        np.testing.assert_allclose(got.asnumpy(), num, rtol=1e-6, atol=1e-8)


def test_broadcast_operator_shapes_names_and_errors() -> None:
    x, y = mx.sym.Variable("x"), mx.sym.Variable("y")
    s = mx.sym.broadcast_add(x, y, name="bb")
    assert s.list_arguments() == ["x", "y"] and s.list_outputs() == ["bb_output"]
    # mxnet 1.9.1 values
    assert s.infer_shape(x=(2, 3), y=(1, 3)) == ([(2, 3), (1, 3)], [(2, 3)], [])
    assert s.infer_shape(x=(2, 3), y=(3,)) == ([(2, 3), (3,)], [(2, 3)], [])
    assert s.infer_shape(x=(2, 3)) == (None, None, None)
    with pytest.raises(
        mx.base.MXNetError, match=r"broadcast_add 'bb': the shapes \(2, 3\) and \(2,\)"
    ):
        s.infer_shape(x=(2, 3), y=(2,))
    assert mx.sym.broadcast_mul(x, y).name.startswith("broadcast_mul")
    # mxnet 1.9.1: the alias names its node after itself, the operator is broadcast_add
    plus = mx.sym.broadcast_plus(x, y)
    assert plus.name.startswith("broadcast_plus") and plus.op == "broadcast_add"
    with pytest.raises(TypeError, match="broadcast_add: rhs must be a Symbol"):
        mx.sym.broadcast_add(x, 2)
    ex = mx.sym.broadcast_maximum(x, y).simple_bind(mx.cpu(), x=(2, 3), y=(1, 3))
    assert ex.forward()[0].shape == (2, 3)
