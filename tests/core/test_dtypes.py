"""Gradient dtypes when float32 Variables meet integer data (numpy's promotion)."""

from __future__ import annotations

import gradhub as gh
import numpy as np
import pytest


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize(
    "make",
    [lambda x, m: x * m, lambda x, m: x + m, lambda x, m: x / (m + 2), lambda x, m: x**m],
    ids=["mul", "add", "div", "pow"],
)
def test_float32_with_integer_data_keeps_the_float32_gradient(make, create_graph) -> None:
    """float32 combined with int64 data: numpy promotes the output to float64, the gradient of
    the float32 input comes back as float32 (it used to raise BackwardRuleError)."""
    x0 = np.array([1.5, 2.0], np.float32)
    m = np.array([1, 2])
    x = gh.Variable(x0)
    y = make(x, gh.Variable(m, need_grad=False)).sum()
    (g,) = gh.grad([y], [x], create_graph=create_graph)
    assert g.dtype == np.float32
    eps = 1e-6
    x64 = x0.astype(np.float64)
    num = [
        (make(x64 + eps * e, m).sum() - make(x64 - eps * e, m).sum()) / (2 * eps) for e in np.eye(2)
    ]
    np.testing.assert_allclose(g.d, num, rtol=1e-5)


def test_float32_times_integer_array_with_backward() -> None:
    x = gh.Variable([1.0, 2.0])
    (x * np.array([1, 0])).sum().backward()
    assert x.g.dtype == np.float32
    np.testing.assert_array_equal(x.g, [1.0, 0.0])
