"""The chainer layer's training surface on a device other than the CPU: a numpy-backed device
with two indices that raises, as CuPy, when an array is used while another index is current
(tests/two_index_device.py). A model moved with ``to_device('two:1')`` trains to the same
values as on the CPU, every array staying on index 1; ``to_cpu`` and ``save_npz`` bring it
back."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from typing import Any

import gradhub_compat.chainer.functions as F
import gradhub_compat.chainer.links as L
import numpy as np
import pytest
from gradhub import plugins
from gradhub_compat import chainer
from gradhub_compat.chainer import optimizer_hooks, optimizers, serializers
from two_index_device import TwoIndexArray
from two_index_device import TwoIndexPlugin as _Plugin


@pytest.fixture
def two() -> Iterator[None]:
    plugins.reset()
    plugins.load_plugins(extra=[("two-index", _Plugin)])
    yield
    plugins.reset()


class Net(chainer.Chain):
    def __init__(self) -> None:
        super().__init__()
        with self.init_scope():
            self.l1 = L.Linear(None, 6)
            self.bn = L.BatchNormalization(6)
            self.l2 = L.Linear(6, 3)

    def forward(self, x: Any) -> Any:
        return self.l2(F.relu(self.bn(self.l1(x))))


def _nll(y: Any, t: Any) -> Any:
    """The mean negative log-likelihood as a sum against constant weights (the test device
    returns numpy scalars from 0-d operations, which the scalar rules of F.softmax_cross_entropy
    refuse as results for a device array; CuPy keeps 0-d arrays on the device)."""
    xp = y.xp
    with y.device.activate():
        w = xp.zeros(y.shape, dtype=y.dtype)
        w[xp.arange(len(t)), t] = -1.0 / len(t)
    return F.sum(F.log_softmax(y) * w)


def _train(device: str | None) -> tuple[Any, list[float]]:
    np.random.seed(0)
    model = L.Classifier(Net(), lossfun=_nll)
    x = np.random.randn(8, 4).astype(np.float32)
    t = np.random.randint(0, 3, size=8).astype(np.int32)
    if device is not None:
        model.to_device(device)
        dev = model.device
        x = dev.asarray(x)
        t = dev.asarray(t)
    opt = optimizers.Adam(alpha=0.05).setup(model)
    opt.add_hook(optimizer_hooks.WeightDecay(1e-3))
    opt.add_hook(optimizer_hooks.GradientClipping(1.0))
    losses = []
    for _ in range(3):
        opt.update(model, x, t)
        losses.append(float(model.loss.array))
    return model, losses


def _on_one(a: Any) -> bool:
    return isinstance(a, TwoIndexArray) and a.dev_index == 1


def test_training_on_another_device_index_matches_the_cpu(two: None) -> None:
    ref, ref_losses = _train(None)
    model, losses = _train("two:1")
    np.testing.assert_allclose(losses, ref_losses, rtol=1e-6)
    assert model.predictor.l1.W.shape == (6, 4)  # initialized at the first call, on two:1
    for (name, p), (_, q) in zip(model.namedparams(), ref.namedparams()):
        assert _on_one(p.array) and _on_one(p.grad), name
        np.testing.assert_allclose(np.asarray(p.array), q.array, rtol=1e-5, atol=1e-7)
        for k, v in p.update_rule.state.items():
            assert _on_one(v), (name, k)
    assert _on_one(model.predictor.bn.avg_mean) and _on_one(model.predictor.bn.avg_var)
    path = os.path.join(tempfile.mkdtemp(), "m.npz")
    serializers.save_npz(path, model)  # device arrays go through host copies
    fresh = L.Classifier(Net())
    fresh.to_device("two:1")
    serializers.load_npz(path, fresh)
    assert _on_one(fresh.predictor.l1.W.array) and _on_one(fresh.predictor.bn.avg_var)
    np.testing.assert_array_equal(
        np.asarray(fresh.predictor.bn.avg_var), np.asarray(model.predictor.bn.avg_var)
    )
    model.to_cpu()
    assert type(model.predictor.l1.W.array) is np.ndarray
    assert type(model.predictor.bn.avg_mean) is np.ndarray
    assert type(model.predictor.l1.W.update_rule.state["m"]) is np.ndarray


def test_variable_to_device_moves_data_and_gradient(two: None) -> None:
    v = chainer.Variable(np.ones(2, np.float32), grad=np.full(2, 2.0, np.float32))
    v.to_device("two:1")
    assert _on_one(v.array) and _on_one(v.grad)
    v.to_cpu()
    assert type(v.array) is np.ndarray and type(v.grad) is np.ndarray
