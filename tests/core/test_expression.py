"""gradhub.expression: an elementwise kernel or rule formula written as one numpy expression."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from gradhub.expression import traced


def _run(src: str, **arrays: Any) -> Any:
    return eval(src, {"xp": np}, arrays)


@pytest.mark.parametrize(
    "fn, names",
    [
        (lambda xp, x: xp.sin(x), ("x",)),
        (lambda xp, g, x, y: -(g * xp.sin(x)), ("g", "x", None)),
        (lambda xp, g, x, y: g * (1.0 - y * y), ("g", None, "y")),
        (lambda xp, g, x, y: g * (1.0 - x * x) ** -0.5, ("g", "x", None)),
        (lambda xp, g, x, y: g / (x + 1.0) - 2 * x / 3, ("g", "x", None)),
        (lambda xp, g, x, y: g * xp.greater(x, 0.0), ("g", "x", None)),
        (lambda xp, g, x, y: g * (x > -0.0) + xp.maximum(x, 0.5) * 1e-300, ("g", "x", None)),
    ],
)
def test_the_expression_computes_what_the_function_computes(fn: Any, names: Any) -> None:
    # the traced source, evaluated on arrays, gives the function's bits (same operations in the
    # same order, constants exact)
    rng = np.random.default_rng(0)
    arrays = {n: rng.uniform(0.1, 0.9, 7).astype(np.float32) for n in names if n is not None}
    src = traced(fn).plan_expression(*names)
    assert isinstance(src, str)
    args = [None if n is None else arrays[n] for n in names]
    want = fn(np, *args)
    got = _run(src, **arrays)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def _own_errors(xp: Any, x: Any) -> Any:
    try:
        return xp.sin(x.real)  # an attribute: refused, not taken for the function's own error
    except Exception:
        return xp.cos(x)


@pytest.mark.parametrize(
    "fn",
    [
        lambda xp, x: xp.where(x > 0, x, 0.0),  # not a ufunc
        lambda xp, x: xp.add(x, 1.0, dtype=np.float64),  # keyword arguments
        lambda xp, x: x * np.float32(2.0),  # a numpy scalar constant
        lambda xp, x: x * float("nan"),  # a non-finite constant
        lambda xp, x: x * True,  # a bool is no number here
        lambda xp, x: x.astype(np.float64),  # an attribute of the array
        lambda xp, x: x if x > 0 else -x,  # a truth value
        lambda xp, x: x * (x == 0),  # ==
        lambda xp, x: xp._private(x),
        lambda xp, x: 1.0,  # not an array expression
        _own_errors,
    ],
)
def test_what_an_expression_cannot_say_is_refused(fn: Any) -> None:
    assert traced(fn).plan_expression("x") is None


def test_a_name_given_as_none_is_none_in_the_call() -> None:
    # as a plan calls a rule whose output is not kept: y is None
    f = traced(lambda xp, g, x, y: g * (y if y is not None else xp.exp(x)))
    assert f.plan_expression("g", "x", None) == "(g * xp.exp(x))"
    assert f.plan_expression("g", "x", "y") == "(g * y)"
    assert traced(lambda xp, g, x, y: g * y).plan_expression("g", "x", None) is None


def test_traced_returns_the_function_itself() -> None:
    def kernel(xp: Any, x: Any) -> Any:
        return xp.tanh(x)

    assert traced(kernel) is kernel
    assert kernel.plan_expression("v3") == "xp.tanh(v3)"  # type: ignore[attr-defined]
