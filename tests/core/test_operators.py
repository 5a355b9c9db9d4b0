"""Variable operators: ``abs(x)`` is the function Abs, integer powers, numpy integer scalars,
division by a zero scalar and the gradient of ``0 ** x``."""

from __future__ import annotations

import warnings

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest

V = gh.Variable


# -- abs(Variable); integer powers --------------------------------------------------------------


@pytest.mark.parametrize("create_graph", [False, True])
def test_abs_of_a_variable_is_the_function_abs(create_graph: bool) -> None:
    xd = np.array([-1.5, 2.0, -0.25])
    x = V(xd)
    y = abs(x)
    assert y.creator is not None and y.creator.fdef.name == "Abs"
    np.testing.assert_array_equal(y.d, np.abs(xd))
    (g,) = gh.grad([y], [x], create_graph=create_graph)
    np.testing.assert_array_equal(g.d, np.sign(xd))  # known: d|x|/dx = sign(x) away from 0


def test_abs_without_the_function_library(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from gradhub import plugins

    monkeypatch.setenv("GRADHUB_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.delenv("GRADHUB_PLUGINS", raising=False)
    plugins.reset()
    try:
        plugins.load_plugins()
        # Abs (and Sign, which its rule calls) is the core's: no function library needed
        x = V(np.array([-1.0, 2.0]))
        y = abs(x)
        np.testing.assert_array_equal(y.d, [1.0, 2.0])
        (g,) = gh.grad([y], [x], create_graph=True)
        np.testing.assert_array_equal(g.d, [-1.0, 1.0])
    finally:
        plugins.reset()


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int64])
@pytest.mark.parametrize("val", [-1, np.int64(-2)], ids=repr)
def test_integer_base_to_a_negative_integer_power_is_a_clear_error(dtype: type, val: int) -> None:
    u = V(np.array([1, 2], dtype), need_grad=False)
    with pytest.raises(
        ValueError,
        match=r"pow_scalar\(\).*argument 'val'.*integer base.*"
        r"negative integer power",
    ):
        u**val
    with pytest.raises(ValueError, match=r"pow_scalar\(\).*negative integer power"):
        F.pow_scalar(u, val)
    np.testing.assert_array_equal((u**-1.0).d, [1.0, 0.5])  # a float power is fine


@pytest.mark.parametrize("scalar", [np.uint8(3), np.uint32(3), np.int8(-128), np.int64(5)])
def test_subtracting_a_numpy_integer_scalar_is_numpy_subtraction(scalar) -> None:
    """x - s with an unsigned or minimal numpy integer used to negate s in its own dtype (wrap)."""
    a = np.array([10.0, 20.0], np.float32)
    x = gh.Variable(a)
    y = x - scalar
    np.testing.assert_array_equal(y.d, a - scalar)
    assert y.dtype == (a - scalar).dtype
    (g,) = gh.grad([y.sum()], [x])
    np.testing.assert_array_equal(g.d, [1.0, 1.0])


def test_division_by_a_zero_scalar_is_infinite_not_zero_division_error() -> None:
    x = gh.Variable(np.array([-1.0, 2.0]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        np.testing.assert_array_equal((x / 0).d, [-np.inf, np.inf])
        np.testing.assert_array_equal((x / -0.0).d, [np.inf, -np.inf])
        (g,) = gh.grad([(x / 0).sum()], [x], create_graph=False)
    np.testing.assert_array_equal(g.d, [np.inf, np.inf])


@pytest.mark.parametrize("create_graph", [False, True])
def test_gradient_of_zero_to_the_x_is_zero_not_nan(create_graph) -> None:
    x = gh.Variable(np.array([0.5, 2.0]))
    (g,) = gh.grad([(0.0**x).sum()], [x], create_graph=create_graph)
    np.testing.assert_array_equal(g.d, [0.0, 0.0])
