"""``communicator_callbacks`` of ``backward`` and ``grad``: each leaf's gradient is told once, as
soon as the last function adding to it has run (during the walk, before the functions upstream
run), with the value this call computed; what the callback leaves in it is delivered; bad
callbacks and ``create_graph=True`` are refused naming the argument."""

from __future__ import annotations

from typing import Any

import gradhub as gh
import numpy as np
import pytest
from gradhub.engine import BackwardCallback


class Recorder:
    """Records each told leaf with a copy of its gradient and whether ``watch.g`` was set."""

    def __init__(self, watch: gh.Variable | None = None, scale: float = 1.0) -> None:
        self.watch = watch
        self.scale = scale
        self.told: list[tuple[gh.Variable, np.ndarray, bool]] = []
        self.given: list[gh.Variable] = []
        self.finished = 0

    def on_grad_final(self, leaf: gh.Variable, grad: gh.Variable) -> None:
        seen = self.watch is not None and self.watch.g is not None
        self.told.append((leaf, grad.d.copy(), seen))
        self.given.append(grad)

    def on_finish_backward(self) -> None:
        self.finished += 1
        for g in self.given:
            g.d = g.d * self.scale  # a new array: delivered instead of the computed one


def _chain() -> tuple[gh.Variable, ...]:
    rng = np.random.default_rng(0)
    a, x, b = (gh.Variable(rng.standard_normal(3)) for _ in range(3))
    t = a * x
    y = (t * b).sum()
    return a, x, b, t, y


def test_a_leaf_is_told_as_soon_as_its_gradient_is_final() -> None:
    a, x, b, t, y = _chain()
    rec = Recorder(watch=t)
    y.backward(retain_grad=True, communicator_callbacks=rec)
    told = {id(leaf): (k, g, seen) for k, (leaf, g, seen) in enumerate(rec.told)}
    assert len(rec.told) == 3 and rec.finished == 1
    # b's last consumer (t * b) runs before the function producing t: b is told before t's
    # gradient is stored, a and x after
    assert told[id(b)][0] == 0 and told[id(b)][2] is False
    assert told[id(a)][2] is True and told[id(x)][2] is True
    np.testing.assert_allclose(told[id(b)][1], t.d)
    np.testing.assert_allclose(told[id(a)][1], x.d * b.d)
    np.testing.assert_allclose(a.g, x.d * b.d)


def test_the_callback_replaces_what_is_delivered_and_prev_g_is_kept() -> None:
    a, x, b, t, y = _chain()
    a.g = np.ones(3, dtype=a.dtype)
    y.backward(communicator_callbacks=[Recorder(scale=2.0)])
    np.testing.assert_allclose(a.g, 1.0 + 2.0 * x.d * b.d, rtol=1e-6)
    np.testing.assert_allclose(b.g, 2.0 * t.d, rtol=1e-6)


def test_grad_tells_and_returns_the_replaced_gradients() -> None:
    a, x, b, t, y = _chain()
    rec = Recorder(scale=3.0)
    ga, gb = gh.grad([y], [a, b], create_graph=False, communicator_callbacks=rec)
    np.testing.assert_allclose(ga.d, 3.0 * x.d * b.d, rtol=1e-6)
    np.testing.assert_allclose(gb.d, 3.0 * t.d, rtol=1e-6)
    assert a.g is None  # grad leaves .g alone
    assert {id(v) for v, _, _ in rec.told} == {id(a), id(x), id(b)}


def test_an_output_that_is_a_leaf_is_told_too() -> None:
    x = gh.Variable([1.0, 2.0])
    rec = Recorder()
    x.backward(communicator_callbacks=rec)
    assert len(rec.told) == 1 and rec.told[0][0] is x
    np.testing.assert_allclose(x.g, [1.0, 1.0])


def test_a_leaf_used_twice_is_told_once_with_the_sum() -> None:
    x = gh.Variable([1.0, 2.0], need_grad=True)
    w = gh.Variable([3.0, 4.0], need_grad=False)
    y = (x * x + x * w).sum()
    rec = Recorder()
    y.backward(communicator_callbacks=rec)
    assert len(rec.told) == 1
    np.testing.assert_allclose(rec.told[0][1], 2 * x.d + w.d)


def test_the_recorder_is_a_backward_callback() -> None:
    assert isinstance(Recorder(), BackwardCallback)


@pytest.mark.parametrize("bad", [object(), [Recorder(), 3]])
def test_a_bad_callback_is_refused(bad: Any) -> None:
    _, _, _, _, y = _chain()
    with pytest.raises(TypeError, match=r"backward: communicator_callbacks\[\d\] must have"):
        y.backward(communicator_callbacks=bad)


def test_callbacks_need_create_graph_false() -> None:
    a, _, _, _, y = _chain()
    with pytest.raises(ValueError, match="grad: communicator_callbacks need create_graph=False"):
        gh.grad([y], [a], communicator_callbacks=Recorder())
    with pytest.raises(ValueError, match="backward: communicator_callbacks need create_graph"):
        y.backward(create_graph=True, communicator_callbacks=Recorder())
