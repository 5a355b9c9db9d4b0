"""chainer's ``chainer.Sequential`` in gradhub's chainer layer: layer order, child links and
parameter paths (chainer 7.8.1's, including its insertion rule), forward with tuples,
editing and errors."""

from __future__ import annotations

from typing import Any

import gradhub_compat.chainer.functions as F
import gradhub_compat.chainer.links as L
import numpy as np
import pytest
from gradhub_compat import chainer


def _names(s: Any) -> list[str]:
    return [n for n, _ in s.namedparams()]


def test_paths_and_insertion_rule_are_chainers() -> None:
    np.random.seed(0)
    s = chainer.Sequential(L.Linear(3, 4), F.relu, L.Linear(4, 2))
    # chainer 7.8.1 printed every list below for the same steps
    assert _names(s) == ["/0/W", "/0/b", "/1/W", "/1/b"]
    s.insert(1, L.Linear(4, 4))
    assert _names(s) == ["/0/W", "/0/b", "/1/W", "/1/b", "/2/W", "/2/b"]
    assert [type(layer).__name__ for layer in s] == ["Linear", "Linear", "function", "Linear"]
    s.insert(3, L.Linear(4, 4, nobias=True))
    assert _names(s) == ["/0/W", "/0/b", "/1/W", "/2/W", "/2/b", "/3/W", "/3/b"]
    assert len(s) == 5
    del s[0]
    assert _names(s) == ["/0/W", "/1/W", "/1/b", "/2/W", "/2/b"] and len(s) == 4
    s.append(lambda x: (x, x))
    s.append(lambda a, b: a + b)
    y = s(np.ones((2, 4), np.float32))
    assert y.shape == (2, 2)
    np.testing.assert_allclose(float(y.array.sum()), -1.265381097793579, rtol=1e-6)  # chainer 7.8.1
    assert s.count_by_layer_type("Linear") == 3 and s.index(F.relu) == 1
    s2 = s + chainer.Sequential(F.relu)
    assert len(s2) == 7 and _names(s2) == ["/0/W", "/0/b", "/1/W", "/1/b", "/2/W"]
    s.remove_by_layer_type("Linear")
    assert len(s) == 3 and _names(s) == []


def test_forward_equals_the_layers_applied_in_turn() -> None:
    np.random.seed(1)
    l1, l2 = L.Linear(3, 4), L.Linear(4, 2)
    s = chainer.Sequential(l1, F.relu, l2)
    x = np.random.randn(5, 3).astype(np.float32)
    expected = np.maximum(x @ l1.W.array.T + l1.b.array, 0) @ l2.W.array.T + l2.b.array
    np.testing.assert_allclose(s(x).array, expected, rtol=1e-5, atol=1e-6)
    assert s[0] is l1 and s[-1] is l2 and F.relu in s and next(reversed(s)) is l2


def test_str_is_chainers() -> None:
    s = chainer.Sequential(L.Linear(3, 4), L.Linear(4, 2))
    assert str(s) == (  # chainer 7.8.1
        "Sequential(\n"
        "  (0): Linear(in_size=3, out_size=4, nobias=False),\n"
        "  (1): Linear(in_size=4, out_size=2, nobias=False),\n"
        ")"
    )
    assert str(chainer.Sequential()) == "Sequential()"


def test_editing_and_errors() -> None:
    s = chainer.Sequential(L.Linear(2, 2))
    with pytest.raises(ValueError, match="should be callable"):
        s.append(3)
    with pytest.raises(IndexError, match="Index out of range"):
        s.insert(5, F.relu)
    with pytest.raises(RuntimeError, match="does not have any layer"):
        chainer.Sequential()(np.ones(1, np.float32))
    with pytest.raises(ValueError, match="only objects of Sequential"):
        s + [F.relu]
    s[0] = F.relu
    assert _names(s) == [] and s[0] is F.relu
    with pytest.raises(ValueError, match="less than"):
        s[3] = F.relu
    lin = L.Linear(2, 2)
    s.extend(chainer.Sequential(lin, F.tanh))
    assert s.pop() is F.tanh and len(s) == 2 and _names(s) == ["/0/W", "/0/b"]
    s.remove(lin)
    assert len(s) == 1
    with pytest.raises(ValueError, match="no layer object"):
        s.remove(lin)
    s.clear()
    assert len(s) == 0 and _names(s) == []
    nested = chainer.Sequential(chainer.Sequential(F.relu, L.Linear(2, 2)), F.tanh).flatten()
    assert len(nested) == 3 and _names(nested) == ["/0/W", "/0/b"]


def test_copy_and_copyparams() -> None:
    np.random.seed(0)
    s = chainer.Sequential(L.Linear(2, 3), F.relu)
    c = s.copy("copy")
    assert c[1] is F.relu and c[0] is not s[0]
    np.testing.assert_array_equal(c[0].W.array, s[0].W.array)
    t = chainer.Sequential(L.Linear(2, 3), F.relu)
    t.copyparams(s)
    np.testing.assert_array_equal(t[0].W.array, s[0].W.array)
    with pytest.raises(ValueError, match="Objects other than Sequential"):
        t.copyparams(L.Linear(2, 3))


def test_trains_with_an_optimizer() -> None:
    np.random.seed(0)
    model = L.Classifier(chainer.Sequential(L.Linear(3, 8), F.relu, L.Linear(8, 2)))
    opt = chainer.optimizers.SGD(lr=0.5).setup(model)
    x = np.random.randn(16, 3).astype(np.float32)
    t = (x[:, 0] > 0).astype(np.int32)
    losses = []
    for _ in range(20):
        opt.update(model, x, t)
        losses.append(float(model.loss.array))
    assert losses[-1] < 0.5 * losses[0]
    assert _names(model) == [
        "/predictor/0/W",
        "/predictor/0/b",
        "/predictor/1/W",
        "/predictor/1/b",
    ]
