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
