"""``gh.testing.gradcheck`` itself: it passes right rules and catches wrong ones.

A deliberately wrong rule fails at order 1; a rule that is right at order 1 but whose own
derivative is wrong (computed on raw, detached arrays) passes order 1 and fails at order 2; a rule
declared first-order-only refuses order 2 with a clear error. Only the core functions are loaded;
the square functions with their variously broken rules come from a plugin module defined here.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Iterator
from typing import Any

import gradhub as gh
import numpy as np
import pytest
from gradhub import plugins
from gradhub.errors import BackwardRuleError, GradcheckError
from gradhub.ops import call
from gradhub.testing import gradcheck

_noise = np.random.default_rng(1)


def _square(xp: Any, x: Any) -> Any:
    return x * x


def _good(gy, x, xs, y, ys):  # type: ignore[no-untyped-def]
    return [gy[0] * x[0] * 2.0]


def _wrong(gy, x, xs, y, ys):  # type: ignore[no-untyped-def]
    return [gy[0] * x[0] * 3.0]


def _detached(gy, x, xs, y, ys):  # type: ignore[no-untyped-def]
    # right value, but 2x is a constant here: the rule's own derivative in x is lost
    return [gy[0] * gh.Variable(2.0 * x[0].d, need_grad=False)]


def _noisy(gy, x, xs, y, ys):  # type: ignore[no-untyped-def]
    eps = gh.Variable(_noise.normal(size=x[0].shape) * 1e-7, need_grad=False)
    return [gy[0] * x[0] * 2.0 + eps]


def _offset(gy, x, xs, y, ys):  # type: ignore[no-untyped-def]
    return [gy[0] * x[0] * 2.0 + 1e-3]


def _good_fast(xp, gy, x, xs, y, ys):  # type: ignore[no-untyped-def]
    return [gy[0] * x[0] * 2.0]


def _wrong_fast(xp, gy, x, xs, y, ys):  # type: ignore[no-untyped-def]
    return [gy[0] * x[0] * 2.5]


def _add_functions(register: Any) -> None:
    def sq(name: str, rule: Callable[..., Any], **kw: Any) -> None:
        register.function(
            name, _square, rule=rule, need_inputs=(0,), need_outputs=(), elementwise=True, **kw
        )

    sq("SqGood", _good)
    sq("SqWrong", _wrong)
    sq("SqDetached", _detached)
    sq("SqFirstOnly", _detached, first_order_only=True)
    sq("SqNoisy", _noisy)
    sq("SqOffset", _offset)
    sq("SqFastWrong", _good, fast_backward=_wrong_fast)
    sq("SqSlowWrong", _wrong, fast_backward=_good_fast)


@pytest.fixture(autouse=True)
def _core_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("GRADHUB_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.delenv("GRADHUB_PLUGINS", raising=False)
    mod = types.ModuleType("gradcheck_test_plugin")
    mod.gradhub_add_functions = gh.hookimpl(_add_functions)  # type: ignore[attr-defined]
    plugins.reset()
    plugins.load_plugins(extra=[("gradcheck_test", mod)])
    yield
    plugins.reset()


def fn(name: str) -> Callable[[gh.Variable], gh.Variable]:
    def f(x: gh.Variable) -> gh.Variable:
        return call(name, x)

    f.__name__ = name
    return f


X = [[0.5, -1.25, 2.0], [1.5, -0.75, 0.3]]


# -- right rules pass ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("f", "inputs", "order"),
    [
        (lambda x: x * x * x, [X], 3),
        (lambda a, b: a / b + a * b - b, [[1.0, 2.0, -3.0], [0.5, -2.0, 4.0]], 2),
        (lambda a, b: (a * b).sum(axis=0), [np.ones((2, 3)) * 0.3, [[1.0, 2.0, 3.0]]], 2),
        (lambda x: 2.0**x / (x * x + 1.0), [X], 3),
        (lambda x: (x**0.5).reshape(6).sum(), [np.abs(X) + 0.5], 2),
        (fn("SqGood"), [X], 3),
    ],
)
def test_right_rules_pass(f: Callable[..., Any], inputs: list[Any], order: int) -> None:
    assert gradcheck(f, inputs, order=order) is True


def test_large_inputs_use_random_directions() -> None:
    x = np.linspace(-2.0, 2.0, 50)
    assert gradcheck(fn("SqGood"), [x], order=2)
    with pytest.raises(GradcheckError, match="derivative of order 1 is wrong"):
        gradcheck(fn("SqWrong"), [x], order=1)


def test_integer_inputs_are_not_differentiated() -> None:
    labels = np.array([1, 2, 3])
    assert gradcheck(lambda x, k: x * k, [[0.5, 1.0, -2.0], labels], order=2)


def test_grad_inputs_and_grad_outputs() -> None:
    # only input 0 is differentiated; the wrong rule of input 1 is not looked at
    assert gradcheck(
        lambda a, b: a * call("SqWrong", b),
        [[1.0, 2.0], [3.0, 4.0]],
        grad_inputs=[0],
        grad_outputs=[[1.0, -1.0]],
    )
    with pytest.raises(GradcheckError):
        gradcheck(lambda a, b: a * call("SqWrong", b), [[1.0, 2.0], [3.0, 4.0]], grad_inputs=[1])


# -- wrong rules fail ------------------------------------------------------------------------------


def test_wrong_rule_fails_at_order_1() -> None:
    with pytest.raises(GradcheckError) as e:
        gradcheck(fn("SqWrong"), [X], order=1)
    assert e.value.order == 1
    assert "SqWrong: derivative of order 1 is wrong; input 0 element 0" in str(e.value)


def test_wrong_rule_inside_a_composition_fails() -> None:
    with pytest.raises(GradcheckError):
        gradcheck(lambda x: (call("SqWrong", x * 2.0) + x).sum(), [X], order=1)


def test_detached_rule_passes_order_1_and_fails_order_2() -> None:
    assert gradcheck(fn("SqDetached"), [X], order=1)
    with pytest.raises(GradcheckError) as e:
        gradcheck(fn("SqDetached"), [X], order=2)
    assert e.value.order == 2
    assert "derivative of order 2 is wrong" in str(e.value)


def test_first_order_only_rule_refuses_order_2() -> None:
    assert gradcheck(fn("SqFirstOnly"), [X], order=1)
    with pytest.raises(BackwardRuleError, match=r"SqFirstOnly.*first-order-only"):
        gradcheck(fn("SqFirstOnly"), [X], order=2)


def test_nondeterministic_rule_fails() -> None:
    with pytest.raises(GradcheckError, match="running backward twice"):
        gradcheck(fn("SqNoisy"), [X], order=1)


def test_rule_not_linear_in_the_incoming_gradient_fails() -> None:
    with pytest.raises(GradcheckError, match="a zero incoming gradient gave a non-zero gradient"):
        gradcheck(fn("SqOffset"), [X], order=1)


@pytest.mark.parametrize("name", ["SqFastWrong", "SqSlowWrong"])
def test_fast_and_differentiable_rules_must_agree(name: str) -> None:
    with pytest.raises(GradcheckError, match="running backward twice"):
        gradcheck(fn(name), [X], order=1)


def test_error_is_an_assertion_error() -> None:
    assert issubclass(GradcheckError, AssertionError)
    with pytest.raises(AssertionError):
        gradcheck(fn("SqWrong"), [[1.0]], name="custom-label")
    with pytest.raises(GradcheckError, match="custom-label"):
        gradcheck(fn("SqWrong"), [[1.0]], name="custom-label")
