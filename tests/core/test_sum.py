"""The core's Sum: numpy integer axes, a clear error for other axes, float16 accumulation in
float32."""

from __future__ import annotations

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest

V = gh.Variable


# -- reduction axes: numpy integers, clear errors -----------------------------------------------


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize(
    "axis", [np.int64(1), np.int32(-1), (np.int64(0),), [0, np.intp(1)], np.array([1])], ids=repr
)
def test_sum_takes_numpy_integer_axes(axis: object, keepdims: bool, create_graph: bool) -> None:
    ax = tuple(int(a) for a in np.atleast_1d(axis))  # type: ignore[call-overload]
    xd = np.random.default_rng(2).standard_normal((2, 3))
    x = V(xd)
    ref = np.sum(xd, axis=ax, keepdims=keepdims)
    w = np.random.default_rng(3).standard_normal(ref.shape)
    y = F.sum(x, axis=axis, keepdims=keepdims)
    np.testing.assert_allclose(y.d, ref)
    (g,) = gh.grad([y], [x], grad_outputs=[w], create_graph=create_graph)
    # d(sum(w * sum(x, axis)))/dx is w broadcast back over the summed axes
    expected = np.broadcast_to(w if keepdims else np.expand_dims(w, ax), xd.shape)
    np.testing.assert_allclose(g.d, expected)


@pytest.mark.parametrize("axis", [1.5, (0, 1.5), np.float64(1.0), "1"], ids=repr)
def test_sum_refuses_a_non_integer_axis_naming_it(axis: object) -> None:
    with pytest.raises(TypeError, match=r"sum\(\).*argument 'axis' must be an int"):
        F.sum(V(np.ones((2, 3))), axis=axis)


# -- float16 sums accumulate in float32 ---------------------------------------------------------


def test_float16_sum_accumulates_in_float32() -> None:
    a = np.full((10000, 2), 0.1, np.float16)  # along axis 0, numpy adds float16 to float16
    y = F.sum(V(a), axis=0)
    assert y.dtype == np.float16
    np.testing.assert_allclose(y.d.astype(np.float64), a.astype(np.float64).sum(axis=0), rtol=1e-3)
    b = np.tile(np.array([[6e4], [6e4], [-6e4], [-6e4]], np.float16), (1, 3))
    np.testing.assert_array_equal(F.sum(V(b), axis=0).d, np.zeros(3, np.float16))  # not inf - inf
    c = np.full((3000, 2), 1.0, np.float16)
    np.testing.assert_array_equal(F.sum(V(c), axis=0, keepdims=True).d, [[3000.0, 3000.0]])
    assert F.sum(V(c)).d == 6000.0 and F.sum(V(c)).dtype == np.float16
