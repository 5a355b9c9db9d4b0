"""gradhub.compile and the parameter table: a step that looked parameters up (by name, under the
current parameter scope) is traced again when the table or the scope differs at a later call,
so that it computes with the parameters the eager step would find; in-place value changes are
replayed without tracing again."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import gradhub as gh
import numpy as np
import pytest
from gradhub import plan
from gradhub.parameters import parameter_table, set_parameter, table_state

F = gh.functions


@pytest.fixture(autouse=True)
def _clean_table() -> Iterator[None]:
    before = plan.set_enabled(True)
    gh.clear_parameters()
    yield
    gh.clear_parameters()
    plan.set_enabled(before)


def _full(value: float) -> Callable[[tuple[int, ...]], np.ndarray]:
    return lambda shape: np.full(shape, value)


def _layer_step(x: Any) -> Any:
    """A parametric layer: its weights looked up by name, created at the first call."""
    w = gh.get_parameter_or_create("fc/W", (3,), _full(1.0))
    b = gh.get_parameter_or_create("fc/b", (1,), _full(0.0))
    loss = ((x * w).sum() + b.sum()) ** 2
    gw, gb = gh.grad([loss], [w, b], create_graph=False)
    return loss, gw, gb


def _agree(fast: Any, x: np.ndarray, what: str) -> None:
    """The compiled step's results are the eager step's, bit for bit (the eager step run on the
    same table and scope, after the compiled one)."""
    got = fast(x)
    want = _layer_step(gh.Variable(x, need_grad=False))
    for g, e in zip(got, want):
        np.testing.assert_array_equal(g.d, e.d, err_msg=what)


def _reload(w: float, b: float) -> None:
    """The resume flow of docs/state.md: forget the parameters, create them again (loaded)."""
    gh.clear_parameters()
    gh.get_parameter_or_create("fc/W", (3,), _full(w))
    gh.get_parameter_or_create("fc/b", (1,), _full(b))


def test_a_compiled_step_follows_parameters_cleared_and_created_again() -> None:
    # regression: the replay used the Variables the trace found (the old weights) after
    # clear_parameters() and the parameters' creation again (loading a checkpoint)
    fast = gh.compile(_layer_step)
    x = np.array([1.0, 2.0, 3.0])
    _agree(fast, x, "first call")
    _agree(fast, x, "replay")
    _reload(10.0, 0.5)
    _agree(fast, x, "after the table was cleared and created again")
    _agree(fast, x, "replay of the new trace")
    w = gh.get_parameters()["fc/W"]
    assert float(fast(x)[0].d) == float(((x * w.d).sum() + 0.5) ** 2)


def test_a_compiled_step_follows_the_parameter_scope_of_each_call() -> None:
    # regression: called under parameter_scope("other"), the replay used the parameters of the
    # scope it was traced in
    fast = gh.compile(_layer_step)
    x = np.array([1.0, -2.0, 0.5])
    _agree(fast, x, "top level")
    with gh.parameter_scope("other"):
        gh.get_parameter_or_create("fc/W", (3,), _full(3.0))
        gh.get_parameter_or_create("fc/b", (1,), _full(-1.0))
        _agree(fast, x, "under parameter_scope('other')")
        _agree(fast, x, "replay under parameter_scope('other')")
    _agree(fast, x, "top level again")
    _agree(fast, x, "replay at top level again")


def test_a_step_called_under_scopes_that_alternate_replays_a_trace_of_each() -> None:
    # regression: each change of scope traced the step again (one trace kept per signature),
    # so a step alternating between two scopes ran eagerly at every call
    calls = []

    def step(x: Any) -> Any:
        calls.append(1)
        return _layer_step(x)

    fast = gh.compile(step)
    x = np.array([0.5, 1.0, -1.5])
    with gh.parameter_scope("other"):
        gh.get_parameter_or_create("fc/W", (3,), _full(-2.0))
        gh.get_parameter_or_create("fc/b", (1,), _full(0.25))
    for i in range(4):
        _agree(fast, x, f"top level, round {i}")
        with gh.parameter_scope("other"):
            _agree(fast, x, f"under parameter_scope('other'), round {i}")
    assert len(calls) == 2  # one trace per scope, replayed afterwards
    _reload(4.0, 1.0)  # the table changed: neither trace holds
    _agree(fast, x, "after a reload")
    assert len(calls) == 3


@pytest.mark.parametrize(
    "change",
    ["set_parameter", "table item", "table pop", "table update", "table setdefault"],
)
def test_a_compiled_step_follows_parameters_replaced_in_the_table(change: str) -> None:
    # regression: set_parameter (and a front-end's write into the live table) was not seen by
    # the replay, which kept the Variable the trace found
    fast = gh.compile(_layer_step)
    x = np.array([0.5, 1.5, -1.0])
    _agree(fast, x, "first call")
    _agree(fast, x, "replay")
    new = gh.Variable(np.array([2.0, -3.0, 4.0]), need_grad=True)
    table = parameter_table()
    if change == "set_parameter":
        set_parameter("fc/W", new)
    elif change == "table item":
        table["fc/W"] = new
    elif change == "table pop":
        table.pop("fc/W").d = new.d  # (the next call creates it again: ones)
    elif change == "table update":
        table.update({"fc/W": new})
    else:
        del table["fc/W"]
        table.setdefault("fc/W", new)
    _agree(fast, x, f"after {change}")
    _agree(fast, x, f"replay after {change}")


def test_in_place_value_changes_of_parameters_replay_without_tracing_again() -> None:
    fast = gh.compile(_layer_step)
    x = np.array([1.0, 2.0, -1.0])
    _agree(fast, x, "first call")
    traced = list(fast.traces.values())
    w = gh.get_parameters()["fc/W"]
    for k in range(3):
        w.d = w.d - 0.25 * (k + 1)  # an update outside the step, as an optimizer makes it
        _agree(fast, x, f"after update {k}")
    assert list(fast.traces.values()) == traced  # replayed, not traced again


def test_a_step_that_reads_no_parameter_is_not_traced_again_when_the_table_changes() -> None:
    w = gh.Variable(np.array([1.0, 2.0]), need_grad=True)

    def step(x: Any) -> Any:
        return gh.grad([(x * w).sum() ** 2], [w], create_graph=False)[0]

    fast = gh.compile(step)
    x = np.array([3.0, -1.0])
    fast(x)
    traced = list(fast.traces.values())
    gh.get_parameter_or_create("unrelated", (1,), _full(0.0))
    with gh.parameter_scope("other"):
        got = fast(x)
    np.testing.assert_array_equal(got.d, step(gh.Variable(x, need_grad=False)).d)
    assert list(fast.traces.values()) == traced


def test_every_change_of_the_parameter_table_changes_its_state() -> None:
    table = parameter_table()
    v = gh.Variable(np.zeros(2))
    changes: list[Callable[[], Any]] = [
        lambda: table.__setitem__("a", v),
        lambda: table.setdefault("b", v),
        lambda: table.update(c=v),
        lambda: table.__ior__({"d": v}),
        lambda: table.move_to_end("a"),
        lambda: table.pop("a"),
        lambda: table.popitem(),
        lambda: table.__delitem__("b"),
        lambda: set_parameter("e", v),
        gh.clear_parameters,
        table.clear,
    ]
    for change in changes:
        before = table_state()
        change()
        assert table_state() != before, change
    before = table_state()
    with gh.parameter_scope("s"):
        assert table_state() != before
    assert table_state() == before
    assert gh.get_parameters() == {}  # (reads change nothing)
    assert table_state() == before
