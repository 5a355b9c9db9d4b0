"""The core's built-in functions with no plugin loaded: every one passes the audit to order 3,
every Variable operator and method is differentiable to order 3 (``gh.testing.gradcheck``), and
the functions the operators dispatch to, with every function their rules call, are the core's.

Runs with the core alone (``nox -s tests_core``) as in the full installation: the plugins are
not loaded here (``GRADHUB_DISABLE_PLUGIN_AUTOLOAD=1``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import gradhub as gh
import numpy as np
import pytest
from gradhub import plugins
from gradhub.audit import check_function
from gradhub.broadcasting import broadcast_axes, sum_to, sum_to_array
from gradhub.registry import REGISTRY
from gradhub.testing import gradcheck

#: what the Variable operators dispatch to and what the rules of those call (moved from
#: gradhub-nn-ops to the core: gradients of any order of the operators need no plugin)
MOVED = (
    "Pow2",
    "Abs",
    "Log",
    "Sign",
    "EqualScalar",
    "BatchMatmul",
    "GetItem",
    "GetItemBackward",
    "Transpose",
)


@pytest.fixture(autouse=True)
def _core_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for var in ("GRADHUB_PLUGINS", "GRADHUB_BLOCK_PLUGINS", "GRADHUB_STRICT_PLUGINS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("GRADHUB_DISABLE_PLUGIN_AUTOLOAD", "1")
    plugins.reset()
    plugins.load_plugins()
    yield
    plugins.reset()


#: every function of the built-in plugin
CORE = sorted(
    (
        "Add2 Sub2 Mul2 Div2 Neg AddScalar MulScalar PowScalar RDivScalar RPowScalar Sum "
        "BroadcastTo Reshape Cast ToDevice"
    ).split()
    + list(MOVED)
)


def test_only_the_core_is_loaded_and_it_has_the_moved_functions() -> None:
    loaded = [r for r in plugins.plugin_report() if r.status == "loaded"]
    assert [r.distribution for r in loaded] == ["gradhub"]
    for name in MOVED:
        assert REGISTRY.get(name).provider.distribution == "gradhub", name
    assert sorted(REGISTRY.functions) == CORE


@pytest.mark.parametrize("name", CORE)
def test_core_function_passes_the_audit_to_order_3(name: str) -> None:
    r = check_function(REGISTRY.get(name), device="cpu", order=3, record=False)
    assert r.ok, f"{name}: {r.error}"
    if REGISTRY.get(name).differentiable:
        assert r.verified == 3, name


def _v(
    rng: np.random.Generator, shape: tuple[int, ...], lo: float = 0.5, hi: float = 2.0
) -> np.ndarray:
    return rng.uniform(lo, hi, shape)


#: name -> (fn of Variables, input arrays); values kept away from kinks and poles
OPERATORS: dict[str, tuple[Callable[..., Any], Callable[[np.random.Generator], list[Any]]]] = {
    "x + y": (lambda x, y: x + y, lambda r: [_v(r, (2, 3)), _v(r, (3,))]),
    "x + 2": (lambda x: x + 2.0, lambda r: [_v(r, (2, 3))]),
    "2 + x": (lambda x: 2.0 + x, lambda r: [_v(r, (2, 3))]),
    "x - y": (lambda x, y: x - y, lambda r: [_v(r, (2, 3)), _v(r, (2, 1))]),
    "x - 2": (lambda x: x - 2.0, lambda r: [_v(r, (3,))]),
    "x - np.int64(2)": (lambda x: x - np.int64(2), lambda r: [_v(r, (3,))]),
    "2 - x": (lambda x: 2.0 - x, lambda r: [_v(r, (3,))]),
    "x * y": (lambda x, y: x * y, lambda r: [_v(r, (2, 3)), _v(r, ())]),
    "x * 3": (lambda x: x * 3.0, lambda r: [_v(r, (2, 3))]),
    "3 * x": (lambda x: 3.0 * x, lambda r: [_v(r, (2, 3))]),
    "x / y": (lambda x, y: x / y, lambda r: [_v(r, (2, 3)), _v(r, (3,))]),
    "x / 4": (lambda x: x / 4.0, lambda r: [_v(r, (2, 3))]),
    "2 / x": (lambda x: 2.0 / x, lambda r: [_v(r, (2, 3))]),
    "x ** y": (lambda x, y: x**y, lambda r: [_v(r, (2, 3)), _v(r, (3,), -1.0, 2.0)]),
    "x ** 3": (lambda x: x**3.0, lambda r: [_v(r, (2, 3))]),
    "x ** 0.5": (lambda x: x**0.5, lambda r: [_v(r, (2, 3))]),
    "2 ** x": (lambda x: 2.0**x, lambda r: [_v(r, (2, 3), -1.0, 1.0)]),
    "-x": (lambda x: -x, lambda r: [_v(r, (2, 3))]),
    "+x": (lambda x: (+x) * x, lambda r: [_v(r, (2, 3))]),
    "abs(x)": (lambda x: abs(x) * x, lambda r: [_v(r, (2, 3)) * np.array([1.0, -1.0, 1.0])]),
    "x @ y": (lambda x, y: x @ y, lambda r: [_v(r, (2, 3)), _v(r, (3, 4))]),
    "batched x @ y": (lambda x, y: x @ y, lambda r: [_v(r, (2, 2, 3)), _v(r, (3,))]),
    "A @ x (rmatmul)": (lambda x: np.ones((2, 3)) @ (x * x), lambda r: [_v(r, (3, 2))]),
    "x[1:, ::2] * x[0, 0]": (lambda x: x[1:, ::2] * x[0, 0], lambda r: [_v(r, (3, 4))]),
    "x[[0, 2, 0]] ** 2": (lambda x: x[np.array([0, 2, 0])] ** 2.0, lambda r: [_v(r, (3, 2))]),
    "x[mask] * x[mask]": (
        lambda x: x[np.array([True, False, True])] ** 3.0,
        lambda r: [_v(r, (3, 2))],
    ),
    "x.reshape(6) * x.sum()": (lambda x: x.reshape(6) * x.sum(), lambda r: [_v(r, (2, 3))]),
    "x.sum(axis=0, keepdims=True) ** 2": (
        lambda x: x.sum(axis=0, keepdims=True) ** 2.0,
        lambda r: [_v(r, (2, 3))],
    ),
    "x.to('cpu') * x": (lambda x: x.to("cpu") * x, lambda r: [_v(r, (3,))]),
    "x.T @ x ** 2": (lambda x: x.T @ x**2.0, lambda r: [_v(r, (3, 2))]),
    "x.T * x.T (3-d)": (lambda x: x.T * x.T, lambda r: [_v(r, (2, 3, 2))]),
}


@pytest.mark.parametrize("op", list(OPERATORS))
def test_variable_operator_is_differentiable_to_order_3(op: str) -> None:
    fn, make = OPERATORS[op]
    inputs = make(np.random.default_rng(0))
    assert gradcheck(fn, inputs, order=3, name=op)


def test_the_operators_record_the_core_functions() -> None:
    x = gh.Variable(np.array([[1.0, -2.0], [3.0, 4.0]]))
    for y, name in (
        (x**x, "Pow2"),
        (abs(x), "Abs"),
        (x @ x, "BatchMatmul"),
        (x[0], "GetItem"),
        (x.T, "Transpose"),
    ):
        assert y.creator is not None and y.creator.fdef.name == name
        assert y.creator.fdef.provider.distribution == "gradhub"


def test_higher_derivatives_of_the_operators_match_closed_forms() -> None:
    x = gh.Variable(np.array([0.5, 1.5, 2.0]))
    y = gh.Variable(np.array([2.0, -1.0, 0.5]))
    (g3,) = gh.grad(
        [
            gh.grad(
                [gh.grad([(x**y).sum()], [x], create_graph=True)[0].sum()], [x], create_graph=True
            )[0].sum()
        ],
        [x],
    )
    a, b = x.d, y.d
    np.testing.assert_allclose(g3.d, b * (b - 1) * (b - 2) * a ** (b - 3), rtol=1e-12)
    # abs: the second derivative is 0 away from 0
    z = gh.Variable(np.array([-1.5, 2.0]))
    (g1,) = gh.grad([abs(z).sum()], [z], create_graph=True)
    np.testing.assert_array_equal(g1.d, [-1.0, 1.0])
    (g2,) = gh.grad([g1.sum()], [z])
    np.testing.assert_array_equal(g2.d, [0.0, 0.0])


def test_indexing_accumulates_duplicate_indices_to_any_order() -> None:
    x = gh.Variable(np.arange(4.0))
    y = (x[np.array([0, 0, 3])] ** 2.0).sum()
    (g,) = gh.grad([y], [x], create_graph=True)
    np.testing.assert_array_equal(g.d, [4 * 0.0, 0.0, 0.0, 6.0])
    (h,) = gh.grad([g.sum()], [x])
    np.testing.assert_array_equal(h.d, [4.0, 0.0, 0.0, 2.0])


def test_optimizers_train_with_the_core_alone() -> None:
    from gradhub.optim import SGD, Adam

    for make in (lambda p: SGD(p, lr=0.05, momentum=0.9), lambda p: Adam(p, lr=0.05)):
        w = gh.Variable(np.array([[1.0, -1.0], [0.5, 2.0]]))
        target = np.array([[0.0, 1.0], [1.0, 0.0]])
        opt = make([w])
        losses = []
        for _ in range(100):
            opt.zero_grad()
            loss = ((w @ w - target) ** 2.0).sum() + abs(w[0, 0])
            loss.backward()
            opt.update()
            losses.append(float(loss.d))
        assert losses[-1] < 0.5 * losses[0], losses[::10]


def test_broadcasting_helpers() -> None:
    assert broadcast_axes((2, 3, 4), (3, 1)) == (0, 2)
    assert broadcast_axes((2, 3), (2, 3)) == ()
    g = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(sum_to_array(g, (3, 1)), g.sum(axis=(0, 2)).reshape(3, 1))
    assert sum_to_array(g, (2, 3, 4)) is g
    v = gh.Variable(g)
    s = sum_to(v, (4,))
    np.testing.assert_array_equal(s.d, g.sum(axis=(0, 1)))
    assert sum_to(v, (2, 3, 4)) is v
    (gv,) = gh.grad([(sum_to(v * v, (1, 4)) ** 2.0).sum()], [v])
    col = (g * g).sum(axis=(0, 1))
    np.testing.assert_allclose(gv.d, 4 * g * col, rtol=1e-12)


def test_gradhub_audit_passes_with_the_core_alone(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from gradhub.cli import main

    assert main(["audit", "--order", "2", "--device", "cpu", "--json", "--no-progress"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["failed"] == 0 and report["functions"] == len(CORE)
    assert sorted({r["function"] for r in report["results"]}) == CORE


def test_variable_T_reverses_the_axes_as_numpy() -> None:
    a = np.arange(24.0).reshape(2, 3, 4)
    for arr in (a, a[0], a[0, 0], np.float64(2.0)):
        x = gh.Variable(np.asarray(arr))
        np.testing.assert_array_equal(x.T.d, np.asarray(arr).T)
    x = gh.Variable(a)
    (x.T * gh.Variable(np.arange(24.0).reshape(4, 3, 2))).sum().backward()
    np.testing.assert_array_equal(x.g, np.arange(24.0).reshape(4, 3, 2).T)


def test_moveaxis_is_one_transpose_with_the_core_alone() -> None:
    from gradhub.batching import moveaxis

    x = gh.Variable(np.arange(24.0).reshape(2, 3, 4))
    y = moveaxis(x, 2, 0)
    assert y.creator is not None and y.creator.fdef.name == "Transpose"
    np.testing.assert_array_equal(y.d, np.moveaxis(x.d, 2, 0))
