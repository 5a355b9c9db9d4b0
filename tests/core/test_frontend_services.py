"""The core's services for front-ends (the API reference's "Services for front-ends", used by
gradhub-compat): walking a recorded graph (``engine.collect_graph``, ``nodes_on_paths``,
``is_freed``), the thread's two recording switches (``modes.grad_mode``, ``set_grad_mode``) and
device ids (``device.device_index``). Only the core's own functions are used (arithmetic, sums),
so these tests need no plugin.
"""

from __future__ import annotations

import threading

import gradhub as gh
import numpy as np
import pytest
from gradhub.device import device_index
from gradhub.engine import collect_graph, is_freed, nodes_on_paths
from gradhub.modes import grad_mode, is_recording, set_grad_mode


def _graph() -> tuple[gh.Variable, gh.Variable, gh.Variable, gh.Variable]:
    x = gh.Variable([1.0, 2.0])
    c = gh.Variable([3.0, 4.0], need_grad=False)
    h = x * x
    y = (h * (c + c)).sum()
    return x, c, h, y


def test_collect_graph_lists_the_recorded_calls_producers_first() -> None:
    x, _, h, y = _graph()
    nodes = collect_graph([y])
    assert [n.fdef.name for n in nodes] == ["Mul2", "Add2", "Mul2", "Sum"]
    assert [n.need_grad for n in nodes] == [True, False, True, True]
    assert nodes[0] is h.creator and nodes[-1] is y.creator
    assert [n.fdef.name for n in collect_graph([y], only_need_grad=True)] == ["Mul2", "Mul2", "Sum"]
    assert collect_graph([x]) == [] and collect_graph([]) == []
    assert collect_graph([h, y]) == nodes


def test_collect_graph_since_a_mark_stops_at_the_older_graph() -> None:
    from gradhub.graph import _seq

    x, _, h, _ = _graph()  # Mul2 (h), Add2, Mul2, Sum recorded before the mark
    mark = next(_seq)
    z = (h * x).sum()
    nodes = collect_graph([z], only_need_grad=True, since=mark)
    assert [n.fdef.name for n in nodes] == ["Mul2", "Sum"]
    assert all(n.seq >= mark for n in nodes) and h.creator not in nodes
    assert collect_graph([h], only_need_grad=True, since=mark) == []
    with pytest.raises(ValueError, match="only_need_grad"):
        collect_graph([z], since=mark)


def test_nodes_on_paths_keeps_the_nodes_downstream_of_the_targets() -> None:
    x, c, h, y = _graph()
    nodes = collect_graph([y])
    assert [n.fdef.name for n in nodes_on_paths(nodes, [c])] == ["Add2", "Mul2", "Sum"]
    assert [n.fdef.name for n in nodes_on_paths(nodes, [x])] == ["Mul2", "Mul2", "Sum"]
    assert nodes_on_paths(nodes, [h]) == nodes[2:]  # a recorded result as the target
    assert nodes_on_paths(nodes, [gh.Variable([0.0])]) == []


def test_is_freed_until_forward_recomputes_the_saved_arrays() -> None:
    *_, y = _graph()
    nodes = collect_graph([y])
    assert not any(is_freed(n) for n in nodes)
    y.backward(retain_graph=False)
    assert [is_freed(n) for n in nodes] == [True, False, True, True]  # the constant saved nothing
    y.forward()
    assert not any(is_freed(n) for n in nodes)


def test_grad_mode_and_set_grad_mode() -> None:
    assert grad_mode() == (True, False)
    x = gh.Variable([1.0])
    set_grad_mode(False, True)  # chainer's no_backprop_mode: results are roots needing a gradient
    try:
        assert grad_mode() == (False, True) and not is_recording()
        y = x * 2.0
        assert y.need_grad and y.creator is None
        seen: list[tuple[bool, bool]] = []
        t = threading.Thread(target=lambda: seen.append(grad_mode()))
        t.start()
        t.join()
        assert seen == [(True, False)]  # per thread
        set_grad_mode(False, False)  # no_grad: results need no gradient
        assert not (x * 2.0).need_grad
    finally:
        set_grad_mode(True, False)
    assert grad_mode() == (True, False) and (x * 2.0).creator is not None


@pytest.mark.parametrize(
    ("given", "expect"), [(0, 0), (3, 3), ("2", 2), (" 1 ", 1), (np.int64(4), 4)]
)
def test_device_index_accepts_ints_and_strings_of_digits(given: object, expect: int) -> None:
    assert device_index("f", given) == expect


@pytest.mark.parametrize(
    ("given", "error", "match"),
    [
        (-1, ValueError, r"^f: device_id must be a non-negative integer, got -1"),
        ("x1", ValueError, r"^f: device_id must be a non-negative integer, got 'x1'"),
        (1.0, TypeError, r"^f: device_id must be an int \(or a string of digits\), got float"),
        (True, TypeError, r"^f: device_id must be an int"),
    ],
)
def test_device_index_refuses_other_values_naming_the_caller(
    given: object, error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        device_index("f", given)
