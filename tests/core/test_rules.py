"""Backward rules receive only the inputs and outputs they declare; the rest arrive as None."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import gradhub as gh
import numpy as np
import pytest

V = gh.Variable


_SEEN: list[tuple[bool, ...]] = []


def _scale2(xp: object, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a * 2.0 + b * 3.0


def _scale2_bw(gy, inputs, in_shapes, outputs, out_shapes):  # type: ignore[no-untyped-def]
    _SEEN.append(tuple(v is None for v in inputs))
    return [gy[0] * 2.0, gy[0] * 3.0]


def _scale2_needs_b_bw(gy, inputs, in_shapes, outputs, out_shapes):  # type: ignore[no-untyped-def]
    _SEEN.append(tuple(v is None for v in inputs))
    assert inputs[1].d.shape == in_shapes[1]  # declared: the Variable (a leaf) or its saved array
    return [gy[0] * 2.0, gy[0] * 3.0]


def _add_test_functions(register: Any) -> None:
    f = register.function
    f("Scale2None", _scale2, inputs=("a", "b"), rule=_scale2_bw, need_inputs=(), need_outputs=())
    f(
        "Scale2B",
        _scale2,
        inputs=("a", "b"),
        rule=_scale2_needs_b_bw,
        need_inputs=(1,),
        need_outputs=(),
    )


@pytest.fixture
def test_functions(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    import types

    from gradhub import plugins

    mod = types.ModuleType("review2_test_plugin")
    mod.gradhub_add_functions = gh.hookimpl(_add_test_functions)  # type: ignore[attr-defined]
    monkeypatch.setenv("GRADHUB_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.delenv("GRADHUB_PLUGINS", raising=False)
    plugins.reset()
    plugins.load_plugins(extra=[("review2_test", mod)])
    _SEEN.clear()
    yield
    plugins.reset()


@pytest.mark.usefixtures("test_functions")
@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("leaves", [True, False])
def test_rule_inputs_not_declared_arrive_as_none(leaves: bool, create_graph: bool) -> None:
    from gradhub.ops import call

    a, b = V(np.array([1.0, 2.0])), V(np.array([3.0, 4.0]))
    ia, ib = (a, b) if leaves else (a * 1.0, b * 1.0)
    (ga, gb) = gh.grad([call("Scale2None", ia, ib)], [a, b], create_graph=create_graph)
    np.testing.assert_array_equal(ga.d, [2.0, 2.0])
    np.testing.assert_array_equal(gb.d, [3.0, 3.0])
    (ga, gb) = gh.grad([call("Scale2B", ia, ib)], [a, b], create_graph=create_graph)
    np.testing.assert_array_equal(gb.d, [3.0, 3.0])
    assert _SEEN == [(True, True), (True, False)]
