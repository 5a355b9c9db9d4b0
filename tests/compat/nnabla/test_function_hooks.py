"""Function hooks of the nnabla layer's ``forward`` and ``backward`` and ``Variable.parent``
(the order, names and arguments nnabla 1.39 gives, recorded 2026-11-25)."""

from __future__ import annotations

from typing import Any

import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.functions as F
import numpy as np
import pytest


def _graph() -> tuple[nn.Variable, nn.Variable, nn.Variable]:
    x = nn.Variable.from_numpy_array(np.array([1.0, -2.0, 3.0]), need_grad=True)
    h = F.relu(x * 2.0)
    return x, h, F.sum(h)


def test_forward_hooks_run_around_each_function_producers_first() -> None:
    x, h, z = _graph()
    log: list[Any] = []
    seen: list[float] = []
    z.forward(
        function_pre_hook=lambda f: log.append(("pre", f.name, f.info.type_name)),
        function_post_hook=lambda f: (log.append(("post", f.name)), seen.append(z.d.item())),
    )
    # nnabla 1.39's order and names
    assert log == [
        ("pre", "MulScalar", "MulScalar"),
        ("post", "MulScalar"),
        ("pre", "ReLU", "ReLU"),
        ("post", "ReLU"),
        ("pre", "Sum", "Sum"),
        ("post", "Sum"),
    ]
    assert z.d == 8.0
    x.d = [1.0, 1.0, 1.0]
    z.forward(function_post_hook=lambda f: seen.append((f.name, f.outputs[0])))
    assert z.d == 6.0
    # the post hook sees each output computed (the referenced ones; others show None)
    assert seen[-2][1] is h and seen[-1][1] is z


def test_backward_hooks_run_consumers_first_and_gradients_are_unchanged() -> None:
    x, _h, z = _graph()
    log: list[Any] = []
    z.backward(
        function_pre_hook=lambda f: log.append(("bpre", f.name)),
        function_post_hook=lambda f: log.append(("bpost", f.name)),
    )
    assert log == [
        ("bpre", "Sum"),
        ("bpost", "Sum"),
        ("bpre", "ReLU"),
        ("bpost", "ReLU"),
        ("bpre", "MulScalar"),
        ("bpost", "MulScalar"),
    ]
    np.testing.assert_array_equal(x.g, [2.0, 0.0, 2.0])
    z.backward()  # the hooks were for that pass only
    np.testing.assert_array_equal(x.g, [4.0, 0.0, 4.0])
    assert len(log) == 6


def test_hook_function_objects_and_parent() -> None:
    x, h, z = _graph()
    infos: list[Any] = []
    z.forward(function_pre_hook=infos.append)
    f = infos[0]
    assert f.name == "MulScalar" and f.info.args["val"] == 2.0
    assert f.inputs[0] is x and len(f.outputs) == 1
    assert h.parent.name == "ReLU" and h.parent.inputs[0].parent.name == "MulScalar"
    assert h.parent.outputs[0] is h and x.parent is None


def test_a_hook_that_raises_stops_the_pass() -> None:
    x, _h, z = _graph()

    def boom(f: Any) -> None:
        raise RuntimeError(f"stop at {f.name}")

    with pytest.raises(RuntimeError, match="stop at Sum"):
        z.backward(function_pre_hook=boom)
    z.backward()  # the graph's rules are restored
    np.testing.assert_array_equal(x.g, [2.0, 0.0, 2.0])


def test_backward_post_hook_sees_the_gradient_accumulated_into_the_inputs():
    # nnabla 1.39 (and its test_graph.py::test_function_hook): after the backward of a function,
    # its inputs' .g hold the gradient accumulated so far (a leaf's includes its .g before the
    # pass); here [('MulScalar', h.g 0.5), ('AddScalar', x.g 1 + 0.5)], then x.g = 1.5
    x = nn.Variable.from_numpy_array(np.zeros((2,), np.float32)).apply(need_grad=True)
    x.g = 1.0
    h = x + 2
    y = h * 0.5
    y.forward()
    log = []
    y.backward(function_post_hook=lambda f: log.append((f.info.type_name, f.inputs[0].g.tolist())))
    assert log == [("MulScalar", [0.5, 0.5]), ("AddScalar", [1.5, 1.5])]
    assert x.g.tolist() == [1.5, 1.5]
    assert h.g.tolist() == [0.5, 0.5]


def test_backward_post_hook_sums_the_gradients_of_several_consumers():
    # nnabla 1.39: y = h * 0.5 + h * 2 gives, after both MulScalar backwards, h.g = 2.5 and
    # then x.g = 1 + 2.5 (the order of the two MulScalar differs: see the migration page)
    x = nn.Variable.from_numpy_array(np.zeros((2,), np.float32)).apply(need_grad=True)
    x.g = 1.0
    h = x + 2
    y = h * 0.5 + h * 2
    log = []
    y.backward(function_post_hook=lambda f: log.append((f.info.type_name, f.inputs[0].g.tolist())))
    assert log[0] == ("Add2", [1.0, 1.0])
    # the first consumer's backward shows its own share: 0.5 (nnabla runs h * 0.5 first) or 2
    assert log[1] in [("MulScalar", [0.5, 0.5]), ("MulScalar", [2.0, 2.0])]
    assert log[2] == ("MulScalar", [2.5, 2.5])
    assert log[3] == ("AddScalar", [3.5, 3.5])
    assert x.g.tolist() == [3.5, 3.5]
