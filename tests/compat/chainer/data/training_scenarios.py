"""Training scenarios run by chainer 7.8.1 and by gradhub's chainer layer on the same code.

``python training_scenarios.py chainer_training.npz`` in an environment with chainer (not
gradhub) writes the reference values (7.8.1 wrote the committed file);
``tests/compat/chainer/test_training.py`` runs :func:`run_all` with the gradhub layer and
compares. Each scenario seeds numpy's global generator, so both frameworks draw the same
initial weights (LeCunNormal) and data.
"""

from __future__ import annotations

import sys
import types
from typing import Any

import numpy as np


def _mlp(ch: types.SimpleNamespace) -> Any:
    chainer, L, F = ch.chainer, ch.L, ch.F

    class MLP(chainer.Chain):
        def __init__(self) -> None:
            super().__init__()
            with self.init_scope():
                self.l1 = L.Linear(None, 8)
                self.l2 = L.Linear(8, 3)

        def forward(self, x: Any) -> Any:
            return self.l2(F.relu(self.l1(x)))

    return MLP()


def _data(n: int = 16, d: int = 5, c: int = 3) -> tuple[np.ndarray, np.ndarray]:
    x = np.random.randn(n, d).astype(np.float32)
    t = np.random.randint(0, c, size=n).astype(np.int32)
    return x, t


def _params(prefix: str, link: Any, out: dict[str, np.ndarray]) -> None:
    for name, p in link.namedparams():
        out[prefix + name] = np.array(p.array)


def _optimizer_run(ch: types.SimpleNamespace, key: str, make: Any, hooks: Any, manual: bool):
    np.random.seed(0)
    model = _mlp(ch)
    x, t = _data()
    opt = make()
    opt.setup(model)
    for h in hooks():
        opt.add_hook(h)
    out: dict[str, np.ndarray] = {}
    losses = []
    for _ in range(5):
        if manual:  # the explicit loop: cleargrads, backward, update()
            loss = ch.F.softmax_cross_entropy(model(x), t)
            model.cleargrads()
            loss.backward()
            opt.update()
        else:  # update(lossfun, *args)
            box: list[Any] = []

            def lossfun(a: Any, b: Any, box: list[Any] = box) -> Any:
                loss = ch.F.softmax_cross_entropy(model(a), b)
                box.append(loss)
                return loss

            opt.update(lossfun, x, t)
            loss = box[0]
        losses.append(float(loss.array))
    out[key + "/losses"] = np.array(losses, dtype=np.float64)
    out[key + "/t"] = np.array(opt.t)
    _params(key, model, out)
    return out


def scenarios(ch: types.SimpleNamespace) -> dict[str, Any]:
    """name -> a function returning the arrays to compare."""
    O, H = ch.optimizers, ch.optimizer_hooks
    return {
        "sgd": lambda: _optimizer_run(ch, "sgd", lambda: O.SGD(lr=0.1), list, False),
        "sgd_manual": lambda: _optimizer_run(ch, "sgd_manual", lambda: O.SGD(), list, True),
        "momentum": lambda: _optimizer_run(
            ch, "momentum", lambda: O.MomentumSGD(lr=0.05, momentum=0.8), list, False
        ),
        "adam": lambda: _optimizer_run(ch, "adam", lambda: O.Adam(), list, True),
        "adam_opts": lambda: _optimizer_run(
            ch,
            "adam_opts",
            lambda: O.Adam(alpha=0.01, amsgrad=True, weight_decay_rate=0.01, eta=0.5),
            list,
            False,
        ),
        "hooks": lambda: _optimizer_run(
            ch,
            "hooks",
            lambda: O.MomentumSGD(lr=0.1),
            lambda: [H.WeightDecay(1e-2), H.GradientClipping(0.5)],
            False,
        ),
        "adabound": lambda: _optimizer_run(
            ch, "adabound", lambda: O.AMSBound(alpha=0.01, final_lr=0.05), list, False
        ),
        "adamw": lambda: _optimizer_run(
            ch, "adamw", lambda: O.AdamW(alpha=0.02, weight_decay_rate=0.1), list, True
        ),
        "lasso_hard": lambda: _optimizer_run(
            ch,
            "lasso_hard",
            lambda: O.SGD(lr=0.2),
            lambda: [H.Lasso(1e-2), H.GradientHardClipping(-0.05, 0.05)],
            False,
        ),
        "convbn": lambda: _convbn(ch),
    }


def _convbn(ch: types.SimpleNamespace) -> dict[str, np.ndarray]:
    chainer, L, F, O = ch.chainer, ch.L, ch.F, ch.optimizers

    class Net(chainer.Chain):
        def __init__(self) -> None:
            super().__init__()
            with self.init_scope():
                self.conv = L.Convolution2D(None, 4, 3, pad=1, nobias=True)
                self.bn = L.BatchNormalization(4)
                self.fc = L.Linear(None, 3)

        def forward(self, x: Any) -> Any:
            h = F.relu(self.bn(self.conv(x)))
            return self.fc(F.max_pooling_2d(h, 2))

    np.random.seed(1)
    model = L.Classifier(Net())
    x = np.random.randn(8, 2, 6, 6).astype(np.float32)
    t = np.random.randint(0, 3, size=8).astype(np.int32)
    opt = O.Adam(alpha=0.01).setup(model)
    losses, accs = [], []
    for _ in range(4):
        opt.update(model, x, t)
        losses.append(float(model.loss.array))
        accs.append(float(model.accuracy.array))
    out: dict[str, np.ndarray] = {
        "convbn/losses": np.array(losses),
        "convbn/accs": np.array(accs),
        "convbn/avg_mean": np.array(model.predictor.bn.avg_mean),
        "convbn/avg_var": np.array(model.predictor.bn.avg_var),
    }
    with chainer.using_config("train", False):
        out["convbn/test_y"] = np.array(model.predictor(x).array)
    _params("convbn", model, out)
    return out


def run_all(ch: types.SimpleNamespace) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    for fn in scenarios(ch).values():
        out.update(fn())
    return out


if __name__ == "__main__":
    import chainer
    import chainer.functions as F
    import chainer.links as L
    from chainer import optimizer_hooks, optimizers

    ns = types.SimpleNamespace(
        chainer=chainer, F=F, L=L, optimizers=optimizers, optimizer_hooks=optimizer_hooks
    )
    res = run_all(ns)
    np.savez(sys.argv[1], **res)
    for k in sorted(res):
        if k.endswith("losses"):
            print(k, res[k])
