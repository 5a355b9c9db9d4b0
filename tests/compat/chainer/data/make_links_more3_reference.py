"""Writes ``links_more3_reference.npz``: chainer 7.8.1's results for the scenarios below, which
``tests/compat/chainer/test_links_more3.py`` runs through gradhub_compat and compares.

Run it with chainer 7.8.1 (CPU, numpy 1.26) from this folder::

    python make_links_more3_reference.py

The test imports :data:`SCENARIOS` from this file (chainer is imported only when it runs as a
script). Each scenario is a function of a namespace holding ``chainer``, ``L`` (the links),
``F`` (the functions), ``optimizers`` and ``serializers`` (chainer's, or gradhub_compat's in
the test): it seeds numpy's global generator, builds the links (their initial weights are drawn
from it), runs fixed inputs, backpropagates a weighted sum of the outputs and returns a dict of
float32 arrays (the outputs, the states, the gradients of the inputs and of every parameter, the
parameters and states after optimizer steps) and of unicode arrays (the parameter names and
shapes, the keys of a saved optimizer). The file stores each entry as ``<scenario>/<key>``;
only plain arrays are written, so the test loads it without unpickling anything.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np


def _rand(shape: Any, seed: int) -> np.ndarray:
    return np.random.RandomState(seed).uniform(-1, 1, shape).astype(np.float32)


def _params(link: Any) -> dict[str, np.ndarray]:
    """The names and shapes, the initial values of every parameter."""
    out = {
        "param_names": np.array(
            [f"{n}:{tuple(p.shape)}" for n, p in sorted(link.namedparams())], dtype=np.str_
        )
    }
    for n, p in sorted(link.namedparams()):
        out["init" + n] = np.array(p.array)
    return out


def _backward(ns: Any, link: Any, outputs: list[Any], inputs: list[Any]) -> dict[str, Any]:
    """The outputs and the gradients of ``sum_k sum(y_k * r_k)``."""
    link.cleargrads()
    loss: Any = None
    for k, y in enumerate(outputs):
        term = ns.F.sum(y * _rand(y.shape, 100 + k))
        loss = term if loss is None else loss + term
    loss.backward()
    out: dict[str, Any] = {f"y{k}": np.array(y.array) for k, y in enumerate(outputs)}
    for k, x in enumerate(inputs):
        out[f"gx{k}"] = np.array(x.grad)
    for n, p in sorted(link.namedparams()):
        out["g" + n] = np.array(p.grad)
    return out


def _var(ns: Any, shape: Any, seed: int) -> Any:
    return ns.chainer.Variable(_rand(shape, seed))


def child_sum_tree_lstm(ns: Any) -> dict[str, Any]:
    np.random.seed(0)
    link = ns.L.ChildSumTreeLSTM(3, 4)
    out = _params(link)
    x1, x2, x3 = (_var(ns, (2, 3), s) for s in (1, 2, 3))
    c1, h1 = link(x1)
    c2, h2 = link(x2)
    c, h = link(c1, c2, h1, h2, x3)
    c_none, h_none = link(c1, None, h1, None, x3)  # a missing child: zeros
    c_nox, h_nox = link(c1, c2, c2, h2, None)  # no input: zeros
    out.update(_backward(ns, link, [c1, h1, c, h, c_none, h_none, c_nox, h_nox], [x1, x2, x3]))
    return out


def nary_tree_lstm(ns: Any) -> dict[str, Any]:
    np.random.seed(1)
    link = ns.L.NaryTreeLSTM(3, 2, n_ary=3)
    out = _params(link)
    x1, x2 = _var(ns, (2, 3), 4), _var(ns, (2, 3), 5)
    cs = [_var(ns, (2, 2), 6 + k) for k in range(3)]
    hs = [_var(ns, (2, 2), 9 + k) for k in range(3)]
    c, h = link(*cs, *hs, x1)
    c_some, h_some = link(cs[0], None, cs[2], None, hs[1], hs[2], x2)
    c_nox, h_nox = link(cs[0], cs[1], None, hs[0], None, None, None)
    out.update(_backward(ns, link, [c, h, c_some, h_some, c_nox, h_nox], [x1, x2, *cs, *hs]))
    return out


def stateless_mgu(ns: Any) -> dict[str, Any]:
    np.random.seed(2)
    link = ns.L.StatelessMGU(3, 4)
    out = _params(link)
    h, x = _var(ns, (2, 4), 12), _var(ns, (2, 3), 13)
    y = link(h, x)
    out.update(_backward(ns, link, [y, link(y, x)], [h, x]))
    return out


def stateful_mgu(ns: Any) -> dict[str, Any]:
    np.random.seed(3)
    link = ns.L.StatefulMGU(3, 4)
    out = _params(link)
    xs = [_var(ns, (2, 3), 14 + t) for t in range(3)]
    ys = [link(x) for x in xs]
    out.update(_backward(ns, link, ys, xs))
    link.reset_state()
    out["after_reset"] = np.array(link(xs[0]).array)
    link.set_state(ns.chainer.Variable(_rand((2, 4), 17)))
    out["after_set_state"] = np.array(link(xs[1]).array)
    return out


def peephole_lstm(ns: Any) -> dict[str, Any]:
    np.random.seed(4)
    link = ns.L.StatefulPeepholeLSTM(3, 4)
    out = _params(link)
    xs = [_var(ns, (2, 3), 20 + t) for t in range(3)]
    ys = [link(x) for x in xs]
    cs = [link.c]
    out.update(_backward(ns, link, ys + cs, xs))
    link.reset_state()
    out["after_reset"] = np.array(link(xs[2]).array)
    return out


def zoneout_lstm(ns: Any) -> dict[str, Any]:
    np.random.seed(5)
    link = ns.L.StatefulZoneoutLSTM(3, 4, c_ratio=0.3, h_ratio=0.6)
    out = _params(link)
    xs = [_var(ns, (3, 3), 23 + t) for t in range(3)]
    np.random.seed(6)  # the zoneout masks: c's then h's at each step
    ys = [link(x) for x in xs]
    cs = [link.c]
    out.update(_backward(ns, link, ys + cs, xs))
    c0, h0 = ns.chainer.Variable(_rand((3, 4), 26)), ns.chainer.Variable(_rand((3, 4), 27))
    link.set_state(c0, h0)
    with ns.chainer.using_config("train", False):  # zoneout: the new values
        out["test_h"] = np.array(link(xs[0]).array)
        out["test_c"] = np.array(link.c.array)
    return out


def inception(ns: Any) -> dict[str, Any]:
    np.random.seed(7)
    link = ns.L.Inception(3, 2, 2, 3, 1, 2, 2)
    out = _params(link)
    x = _var(ns, (2, 3, 5, 5), 30)
    out.update(_backward(ns, link, [link(x)], [x]))
    np.random.seed(8)  # deferred input channels, given initializers
    lazy = ns.L.Inception(
        None, 1, 2, 1, 2, 1, 1, conv_init=ns.chainer.initializers.Normal(0.5), bias_init=0.1
    )
    y = lazy(_rand((1, 2, 4, 4), 31))
    out["lazy_y"] = np.array(y.array)
    out["lazy_param_names"] = _params(lazy)["param_names"]
    return out


def inception_bn(ns: Any) -> dict[str, Any]:
    np.random.seed(9)
    link = ns.L.InceptionBN(3, 2, 2, 3, 1, 2, "max", proj_pool=2)
    out = _params(link)
    x = _var(ns, (3, 3, 5, 5), 32)
    out.update(_backward(ns, link, [link(x)], [x]))
    out["avg_mean"] = np.array(link.conv33bn.avg_mean)
    out["avg_var"] = np.array(link.conv33bn.avg_var)
    with ns.chainer.using_config("train", False):
        out["test_y"] = np.array(link(x).array)
    np.random.seed(10)  # no 1x1 path, average pooling, stride 2, no pool projection
    strided = ns.L.InceptionBN(3, 0, 2, 2, 2, 2, "avg", stride=2)
    out["strided_param_names"] = _params(strided)["param_names"]
    out["strided_y"] = np.array(strided(_rand((2, 3, 5, 5), 33)).array)
    return out


def msvag(ns: Any) -> dict[str, Any]:
    """Five M-SVAG steps on a linear least-squares loss (one input column is zero, so some
    gradients are exactly zero: the NaN factors become 0), with the defaults and with
    ``eta``/``weight_decay_rate``."""
    out: dict[str, Any] = {}
    x = _rand((4, 3), 40)
    x[:, 1] = 0
    t = _rand((4, 2), 41)
    for tag, kwargs in (
        ("default", {}),
        ("decay", {"lr": 0.05, "beta": 0.8, "eta": 0.5, "weight_decay_rate": 0.01}),
    ):
        np.random.seed(11)
        link = ns.L.Linear(3, 2)
        opt = ns.optimizers.MSVAG(**kwargs)
        opt.setup(link)
        for step in range(5):
            link.cleargrads()
            d = link(x) - t
            loss = ns.F.sum(d * d)
            loss.backward()
            opt.update()
            out[f"{tag}/W{step}"] = np.array(link.W.array)
            out[f"{tag}/b{step}"] = np.array(link.b.array)
        rule = link.W.update_rule
        out[f"{tag}/m"] = np.array(rule.state["m"])
        out[f"{tag}/v"] = np.array(rule.state["v"])
        out[f"{tag}/beta_power"] = np.array(rule.beta_power, np.float64)
        with tempfile.TemporaryDirectory() as d:  # the optimizer's keys in a saved file
            path = os.path.join(d, "opt.npz")
            ns.serializers.save_npz(path, opt)
            with np.load(path) as saved:
                out[f"{tag}/saved_keys"] = np.array(sorted(saved.files), dtype=np.str_)
                out[f"{tag}/saved_W_v"] = saved["W/v"]
    return out


SCENARIOS: dict[str, Callable[[Any], dict[str, Any]]] = {
    f.__name__: f
    for f in (
        child_sum_tree_lstm,
        nary_tree_lstm,
        stateless_mgu,
        stateful_mgu,
        peephole_lstm,
        zoneout_lstm,
        inception,
        inception_bn,
        msvag,
    )
}


def main() -> None:
    import chainer
    import chainer.functions as F
    import chainer.links as L
    from chainer import optimizers, serializers

    ns = SimpleNamespace(chainer=chainer, L=L, F=F, optimizers=optimizers, serializers=serializers)
    store: dict[str, np.ndarray] = {}
    for name, scenario in SCENARIOS.items():
        for key, value in scenario(ns).items():
            store[f"{name}/{key}"] = np.asarray(value)
    np.savez_compressed("links_more3_reference.npz", **store)  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
