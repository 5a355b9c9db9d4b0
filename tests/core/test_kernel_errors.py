"""Errors raised inside kernels (numpy's ufunc errors, integer overflow) name the function."""

from __future__ import annotations

import types
from collections.abc import Iterator
from typing import Any

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest
from gradhub import plugins

V = gh.Variable


class _NeedsTwo(Exception):
    """An exception class of a plugin that cannot be built from a message alone."""

    def __init__(self, a: str, b: str) -> None:
        super().__init__(f"{a} and {b}")


def _raising(exc: BaseException) -> Any:
    def kernel(xp: Any, x: Any) -> Any:
        raise exc

    return kernel


def _none_on_negative(xp: Any, x: Any) -> Any:
    if np.isnan(x).any():
        raise KeyError("nan")
    return None if (x < 0).any() else x.copy()


def _add_bad_kernels(register: Any) -> None:
    for name, exc in [
        ("KeyErr", KeyError("no such entry")),
        ("AttrErr", AttributeError("'list' object has no attribute 'shape'")),
        ("RuntimeErr", RuntimeError("backend failed")),
        ("CustomErr", _NeedsTwo("one", "two")),
        ("Interrupted", KeyboardInterrupt()),
    ]:
        register.function(name, _raising(exc))
    register.function("UfuncError", lambda xp, x: np.left_shift(x, 1.5))
    register.function("ReturnsNone", lambda xp, x: None, rule=lambda gy, *a: [gy[0]])
    register.function("ReturnsList", lambda xp, x: [1.0, 2.0])
    register.function("ReturnsObjects", lambda xp, x: x.astype(object))
    register.function("ReturnsStrings", lambda xp, x: x.astype(str))
    register.function("NoneOnNegative", _none_on_negative)
    register.function("ReturnsScalar", lambda xp, x: np.float64(x.sum()))
    register.function("ReturnsOne", lambda xp, x: x.copy(), n_outputs=2)
    register.function("ReturnsThree", lambda xp, x: (x, x, x), n_outputs=2)
    register.function("ReturnsNoneOf2", lambda xp, x: (x, None), n_outputs=2)


@pytest.fixture
def bad_kernels(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The core alone, plus a plugin module whose kernels raise or return wrong results."""
    monkeypatch.setenv("GRADHUB_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.delenv("GRADHUB_PLUGINS", raising=False)
    mod = types.ModuleType("kernel_errors_test_plugin")
    mod.gradhub_add_functions = gh.hookimpl(_add_bad_kernels)  # type: ignore[attr-defined]
    plugins.reset()
    plugins.load_plugins(extra=[("kernel_errors_test", mod)])
    yield
    plugins.reset()


def test_kernel_errors_of_private_numpy_types_still_name_the_function(
    bad_kernels: None,
) -> None:
    """numpy's ufunc errors cannot be rebuilt from a message; the wrapper raised a TypeError about
    a missing constructor argument instead of naming the function. (A string operand no longer
    reaches a kernel: it is refused as an input, naming it.)"""
    with pytest.raises(TypeError, match=r"ufunc_error\(\) \(UfuncError, from module kernel_err"):
        F.ufunc_error(V([1.0]))
    with pytest.raises(TypeError, match=r"add2\(\): input 'x1': expected numeric data"):
        gh.Variable([1.0]) + "a"


def test_integer_overflow_in_a_kernel_names_the_function() -> None:
    u = V(np.array([1, 2], np.uint8), need_grad=False)
    with pytest.raises(OverflowError, match=r"add_scalar\(\).*300"):
        u + 300


@pytest.mark.parametrize(
    ("fn", "cls", "msg"),
    [
        ("key_err", KeyError, "KeyError: 'no such entry'"),
        ("attr_err", AttributeError, "AttributeError: 'list' object has no attribute 'shape'"),
        ("runtime_err", RuntimeError, "RuntimeError: backend failed"),
        ("custom_err", Exception, "_NeedsTwo: one and two"),
    ],
)
def test_every_kernel_exception_names_the_function_and_provider(
    bad_kernels: None, fn: str, cls: type[Exception], msg: str
) -> None:
    """Only ValueError/TypeError/IndexError/OverflowError were wrapped: a plugin kernel raising
    KeyError, AttributeError or RuntimeError surfaced bare, naming neither."""
    with pytest.raises(cls) as info:
        getattr(F, fn)(V([1.0, 2.0]))
    text = str(info.value)
    assert f"{fn}() (" in text
    assert "from module kernel_errors_test_plugin" in text
    assert "failed on inputs of shapes (2,)" in text
    assert msg in text
    assert info.value.__cause__ is not None  # the original, chained


def test_keyboard_interrupt_in_a_kernel_is_untouched(bad_kernels: None) -> None:
    with pytest.raises(KeyboardInterrupt) as info:
        F.interrupted(V([1.0]))
    assert str(info.value) == ""


@pytest.mark.parametrize(
    ("fn", "msg"),
    [
        (
            "returns_none",
            r"returns_none\(\) \(ReturnsNone, from module kernel_errors_test_plugin\): "
            r"the cpu kernel returned NoneType, not an array of the device \(cpu\)",
        ),
        ("returns_list", r"returns_list\(\) .*: the cpu kernel returned list, not an array"),
        (
            "returns_objects",
            r"returns_objects\(\) .*: the cpu kernel returned data of dtype object",
        ),
        ("returns_strings", r"returns_strings\(\) .*: the cpu kernel returned data of dtype <U"),
        (
            "returns_one",
            r"returns_one\(\) .*: the cpu kernel returned ndarray; the function has 2 "
            r"outputs",
        ),
        (
            "returns_three",
            r"returns_three\(\) .*: the cpu kernel returned 3 outputs; the function "
            r"has 2",
        ),
        ("returns_none_of2", r"returns_none_of2\(\) .*: the cpu kernel returned output 1 NoneType"),
    ],
)
def test_kernel_results_are_checked(bad_kernels: None, fn: str, msg: str) -> None:
    """A kernel returning None gave ``Variable(None, dtype=object)`` and the gradient was lost."""
    x = V([1.0, 2.0])
    with pytest.raises(TypeError, match=msg):
        getattr(F, fn)(x)
    with gh.no_grad(), pytest.raises(TypeError, match=msg):
        getattr(F, fn)(x)


def test_a_numpy_scalar_result_goes_onto_the_device(bad_kernels: None) -> None:
    y = F.returns_scalar(V([1.0, 2.0]))
    assert type(y.d) is np.ndarray and y.d == 3.0


def test_forward_reexecution_checks_kernels_too(bad_kernels: None) -> None:
    """``y.forward()`` runs the kernels again: their errors and results get the same checks."""
    x = V([1.0, 2.0])
    y = F.none_on_negative(x)
    np.testing.assert_array_equal(y.d, [1.0, 2.0])
    x.d = np.array([-1.0, 1.0])
    with pytest.raises(
        TypeError, match=r"none_on_negative\(\) .*: the cpu kernel returned NoneType"
    ):
        y.forward()
    x.d = np.array([np.nan, 1.0])
    with pytest.raises(KeyError, match=r"none_on_negative\(\) .*KeyError: 'nan'"):
        y.forward()
