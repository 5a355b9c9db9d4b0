"""Second order through ``relu``/``abs``: ``autograd.grad(y, [x], create_graph=True)`` then a
further ``backward``/``grad``. mxnet 1.9.1's ``_backward_relu``/``_backward_abs`` register a
gradient that is zero with respect to x, so the second derivative is zeros; where mxnet's backward
graph does not reach x or passes through a backward operator without a gradient, a further
backward raises. Expected values are mxnet 1.9.1's outputs.
"""

from __future__ import annotations

from collections.abc import Callable

import gradhub_compat.mxnet as mx
import numpy as np
import pytest

nd = mx.nd

_ZEROS: dict[str, tuple[Callable[[mx.nd.NDArray], mx.nd.NDArray], list[float]]] = {
    # name: (function, mxnet 1.9.1's first derivative at [1, -2, 3])
    "relu": (lambda x: nd.relu(x), [1.0, 0.0, 1.0]),
    "abs": (lambda x: nd.abs(x), [1.0, -1.0, 1.0]),
    "relu+1": (lambda x: nd.relu(x) + 1, [1.0, 0.0, 1.0]),
    "relu-1": (lambda x: nd.relu(x) - 1, [1.0, 0.0, 1.0]),
    "relu(relu)": (lambda x: nd.relu(nd.relu(x)), [1.0, 0.0, 1.0]),
    "abs(relu)": (lambda x: nd.abs(nd.relu(x)), [1.0, 0.0, 1.0]),
    "relu(x+1)": (lambda x: nd.relu(x + 1), [1.0, 0.0, 1.0]),
}


@pytest.mark.parametrize("name", list(_ZEROS))
@pytest.mark.parametrize("second", ["backward", "grad"])
def test_second_order_through_relu_and_abs_is_zeros(name: str, second: str) -> None:
    f, first = _ZEROS[name]
    x = nd.array([1.0, -2.0, 3.0])
    x.attach_grad()
    with mx.autograd.record():
        g = mx.autograd.grad(f(x), [x], create_graph=True)[0]
    np.testing.assert_array_equal(g.asnumpy(), first)
    if second == "backward":
        g.backward()
        result = x.grad.asnumpy()
    else:
        result = mx.autograd.grad(g, [x])[0].asnumpy()
    np.testing.assert_array_equal(result, [0.0, 0.0, 0.0])  # mxnet 1.9.1: zeros


@pytest.mark.parametrize(
    "f",
    [
        lambda x: x * 2,  # mxnet 1.9.1: "There are no inputs in computation graph that ..."
        lambda x: x + 1,
        lambda x: nd.sum(x),
        lambda x: nd.relu(x) * 3,  # mxnet 1.9.1: "_backward_mul_scalar is non-differentiable"
        lambda x: nd.sum(nd.relu(x)),  # mxnet 1.9.1: "_backward_sum is non-differentiable"
        lambda x: nd.relu(x * 2),
        lambda x: nd.relu(x) / 2,  # mxnet 1.9.1: "_backward_div_scalar is non-differentiable"
    ],
    ids=["x*2", "x+1", "sum", "relu*3", "sum(relu)", "relu(x*2)", "relu/2"],
)
def test_second_order_where_mxnet_raises(f: Callable[[mx.nd.NDArray], mx.nd.NDArray]) -> None:
    x = nd.array([1.0, -2.0, 3.0])
    x.attach_grad()
    with mx.autograd.record():
        g = mx.autograd.grad(f(x), [x], create_graph=True)[0]
    with pytest.raises(mx.base.MXNetError, match="no inputs in computation graph that require"):
        g.backward()


def test_second_order_of_smooth_functions_is_unchanged() -> None:
    x = nd.array([1.0, -2.0, 3.0])
    x.attach_grad()
    with mx.autograd.record():
        g = mx.autograd.grad(nd.sin(x), [x], create_graph=True)[0]
    g.backward()
    # mxnet 1.9.1: [-0.84147, 0.9093, -0.14112]
    np.testing.assert_allclose(x.grad.asnumpy(), -np.sin([1.0, -2.0, 3.0]), rtol=1e-6)
