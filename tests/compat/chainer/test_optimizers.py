"""chainer.optimizers and chainer.optimizer_hooks in gradhub's chainer layer: setup/update
semantics, hyperparameters, hooks, Adam's bias correction, serialization; expected values
recorded with chainer 7.8.1 (2026-11-25) or computed by hand from chainer's formulas."""

from __future__ import annotations

import math
import os
import tempfile

import gradhub_compat.chainer.functions as F
import gradhub_compat.chainer.links as L
import numpy as np
import pytest
from gradhub_compat import chainer
from gradhub_compat.chainer import optimizer_hooks, optimizers, serializers
from gradhub_compat.chainer.serializers import DictionarySerializer


def _lin() -> L.Linear:
    return L.Linear(
        2,
        2,
        initialW=np.array([[1, 2], [3, 4]], np.float32),
        initial_bias=np.array([0.5, -0.5], np.float32),
    )


def test_defaults_are_chainers() -> None:
    assert optimizers.SGD().lr == 0.01
    m = optimizers.MomentumSGD()
    assert (m.lr, m.momentum) == (0.01, 0.9)
    a = optimizers.Adam()
    assert (a.alpha, a.beta1, a.beta2, a.eps, a.eta, a.weight_decay_rate) == (
        0.001,
        0.9,
        0.999,
        1e-8,
        1.0,
        0,
    )
    assert not a.amsgrad and not a.adabound
    assert optimizers.AMSGrad().amsgrad and optimizers.AdaBound().adabound


def test_adam_alpha_t_bias_correction() -> None:
    opt = optimizers.Adam()
    opt.setup(L.Linear(1, 1))
    with pytest.raises(RuntimeError, match="Can't determine the learning rate of Adam"):
        opt.alpha_t  # noqa: B018
    opt.t = 3
    assert opt.alpha_t == 0.0002020105974389679  # chainer 7.8.1
    assert opt.alpha_t == 0.001 * math.sqrt(1 - 0.999**3) / (1 - 0.9**3)


def test_hyperparameters_are_shared_through_the_proxy() -> None:
    lin = _lin()
    opt = optimizers.SGD(lr=0.1).setup(lin)
    assert lin.W.update_rule.hyperparam.lr == 0.1
    opt.lr = 0.5  # the rules read the optimizer's value
    assert lin.W.update_rule.hyperparam.lr == 0.5
    lin.b.update_rule.hyperparam.lr = 0.0  # a per-parameter override
    lin.cleargrads()
    lin.W.grad = np.ones((2, 2), np.float32)
    lin.b.grad = np.ones(2, np.float32)
    opt.update()
    np.testing.assert_array_equal(lin.W.array, [[0.5, 1.5], [2.5, 3.5]])
    np.testing.assert_array_equal(lin.b.array, [0.5, -0.5])
    assert "lr=0.0" in repr(lin.b.update_rule.hyperparam)


def test_update_with_cleared_gradients_counts_zeros() -> None:
    lin = L.Linear(1, 1)
    opt = optimizers.SGD().setup(lin)
    lin.cleargrads()
    w = lin.W.array.copy()
    opt.update()
    np.testing.assert_array_equal(lin.W.grad, [[0.0]])  # chainer 7.8.1
    np.testing.assert_array_equal(lin.W.array, w)
    assert opt.t == 1 and lin.W.update_rule.t == 1


def test_update_lossfun_clears_then_backpropagates() -> None:
    lin = _lin()
    opt = optimizers.SGD(lr=1.0).setup(lin)
    x = np.array([[1.0, 2.0]], np.float32)
    lin.W.grad = np.full((2, 2), 100.0, np.float32)  # cleared by update(lossfun)
    opt.update(lambda a: F.sum(lin(a)), x)
    np.testing.assert_array_equal(lin.W.array, [[0.0, 0.0], [2.0, 2.0]])
    np.testing.assert_array_equal(lin.b.array, [-0.5, -1.5])


def test_disable_update_freezes() -> None:
    lin = _lin()
    opt = optimizers.SGD(lr=1.0).setup(lin)
    lin.disable_update()
    assert not lin.update_enabled
    opt.update(lambda: F.sum(lin(np.ones((1, 2), np.float32))))
    np.testing.assert_array_equal(lin.W.array, [[1, 2], [3, 4]])
    lin.enable_update()
    assert lin.update_enabled


def test_momentum_sgd_by_hand() -> None:
    lin = L.Linear(1, 1, initialW=np.array([[1.0]], np.float32), nobias=True)
    opt = optimizers.MomentumSGD(lr=0.1, momentum=0.5).setup(lin)
    w, v = np.float32(1.0), np.float32(0.0)
    for g in (1.0, 2.0, -1.0):
        lin.W.grad = np.array([[g]], np.float32)
        opt.update()
        v = np.float32(0.5) * v - np.float32(0.1) * np.float32(g)
        w = w + v
        assert lin.W.array[0, 0] == w
    np.testing.assert_array_equal(lin.W.update_rule.state["v"], [[v]])


def test_gradient_clipping_matches_chainer() -> None:
    lin = _lin()
    opt = optimizers.SGD(lr=1.0).setup(lin)
    opt.add_hook(optimizer_hooks.GradientClipping(1.0))
    lin.W.grad = np.array([[3, 0], [0, 4]], np.float32)
    lin.b.grad = np.zeros(2, np.float32)
    opt.update()
    np.testing.assert_allclose(  # chainer 7.8.1
        lin.W.array, np.array([[0.39999998, 2.0], [3.0, 3.2]], np.float32), rtol=0
    )
    np.testing.assert_array_equal(lin.b.array, [0.5, -0.5])


def test_weight_decay_lasso_and_hard_clipping() -> None:
    lin = _lin()
    opt = optimizers.SGD(lr=1.0).setup(lin)
    opt.add_hook(optimizer_hooks.WeightDecay(0.1))
    opt.add_hook(optimizer_hooks.Lasso(0.01))
    opt.add_hook(optimizer_hooks.GradientHardClipping(-0.25, 0.25))
    lin.cleargrads()
    opt.update()
    # g = clip(0.1 p + 0.01 sign(p), -0.25, 0.25)
    p = np.array([[1, 2], [3, 4]], np.float32)
    g = np.clip(np.float32(0.1) * p + np.float32(0.01) * np.sign(p), -0.25, 0.25)
    np.testing.assert_allclose(lin.W.array, p - g, rtol=1e-7)
    with pytest.raises(KeyError, match='hook "WeightDecay" already exists'):
        opt.add_hook(optimizer_hooks.WeightDecay(0.1))
    opt.remove_hook("WeightDecay")
    with pytest.raises(ValueError, match="timing must be one of"):
        opt.add_hook(optimizer_hooks.WeightDecay(0.1), timing="later")


def test_post_hook_and_function_hooks() -> None:
    lin = _lin()
    opt = optimizers.SGD(lr=1.0).setup(lin)
    seen: list[tuple[str, float]] = []

    def post(o: optimizers.SGD) -> None:
        seen.append(("post", float(lin.W.array[0, 0])))

    opt.add_hook(post, timing="post")
    lin.W.update_rule.add_hook(lambda rule, p: seen.append(("rule", rule.t)), name="r")
    lin.cleargrads()
    lin.W.grad = np.ones((2, 2), np.float32)
    opt.update()
    assert seen == [("rule", 1), ("post", 0.0)]


def test_setup_and_hook_errors() -> None:
    with pytest.raises(TypeError, match="optimization target must be a link"):
        optimizers.SGD().setup(object())  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="Optimizer is not set up"):
        optimizers.SGD().add_hook(optimizer_hooks.WeightDecay(0.1))
    p = chainer.Parameter(np.ones(1, np.float32))
    lk = chainer.Link()
    with lk.init_scope():
        lk.p = p
    o = optimizers.Adam(eps=1e-50).setup(lk)
    p.grad = np.ones(1, np.float32)
    with pytest.raises(ValueError, match="eps of Adam optimizer is too small for float32"):
        o.update()


def test_optimizer_serialization_keys_and_round_trip() -> None:
    m = L.Linear(2, 1)
    o = optimizers.MomentumSGD().setup(m)
    m.cleargrads()
    F.sum(m(np.ones((1, 2), np.float32))).backward()
    o.update()
    s = DictionarySerializer()
    s.save(o)
    assert sorted(s.target) == ["W/t", "W/v", "b/t", "b/v", "epoch", "t"]  # chainer 7.8.1
    path = os.path.join(tempfile.mkdtemp(), "opt.npz")
    serializers.save_npz(path, o)
    m2 = L.Linear(2, 1)
    o2 = optimizers.MomentumSGD().setup(m2)
    serializers.load_npz(path, o2)
    assert o2.t == 1
    np.testing.assert_array_equal(m2.W.update_rule.state["v"], m.W.update_rule.state["v"])


def test_unsupported_optimizer_features_name_the_page() -> None:
    opt = optimizers.SGD().setup(L.Linear(1, 1))
    with pytest.raises(NotImplementedError, match=r"loss_scaling.*docs/migration-chainer.md"):
        opt.loss_scaling()
    with pytest.raises(NotImplementedError, match=r"use_fp32_update.*migration-chainer"):
        opt.use_fp32_update()
    with pytest.raises(NotImplementedError, match=r"optimizers.Yogi.*migration-chainer"):
        optimizers.Yogi  # noqa: B018


#: (optimizer, arguments, the parameter after 4 updates): chainer 7.8.1's values for the
#: parameter [1, -2, 0.5] (float32) and the gradients [0.3, -0.1 t, 2 - t], t = 0..3
MORE_OPTIMIZERS = [
    ("RMSprop", {}, [0.7207103371620178, -1.7301174402236938, 0.3964037299156189]),
    (
        "RMSprop",
        {"lr": 0.02, "alpha": 0.9, "eps": 1e-06, "eps_inside_sqrt": True},
        [0.8183538913726807, -1.8278381824493408, 0.436358779668808],
    ),
    ("AdaGrad", {"lr": 0.05}, [0.8607771396636963, -1.865189552307129, 0.44805172085762024]),
    (
        "AdaDelta",
        {"rho": 0.8, "eps": 0.0001},
        [0.9048182368278503, -1.9154930114746094, 0.4787627160549164],
    ),
    (
        "NesterovAG",
        {"lr": 0.05, "momentum": 0.5},
        [0.8870313167572021, -1.9453125, 0.29374998807907104],
    ),
    (
        "RMSpropGraves",
        {"lr": 0.001, "momentum": 0.5},
        [0.9787998199462891, -1.9826850891113281, 0.4896208345890045],
    ),
    ("SMORMS3", {"lr": 0.01}, [0.9523444175720215, -1.9505759477615356, 0.4825810492038727]),
    (
        "CorrectedMomentumSGD",
        {"lr": 0.1, "momentum": 0.5},
        [0.8162500262260437, -1.9225000143051147, 0.05000000819563866],
    ),
]


@pytest.mark.parametrize("name,kwargs,want", MORE_OPTIMIZERS)
def test_more_optimizers_match_chainer_bit_for_bit(name: str, kwargs: dict, want: list) -> None:
    p = chainer.Parameter(np.array([1.0, -2.0, 0.5], np.float32))
    link = chainer.Link()
    with link.init_scope():
        link.p = p
    opt = getattr(optimizers, name)(**kwargs).setup(link)
    for t in range(4):
        p.grad = np.array([0.3, -0.1 * t, 2.0 - t], np.float32)
        opt.update()
    np.testing.assert_array_equal(p.array, np.array(want, np.float32))
    assert opt.t == 4 and p.update_rule.t == 4
    for k, v in kwargs.items():  # the hyper-parameters, through the proxies
        assert getattr(opt, k) == v


def test_more_optimizers_take_chainers_arguments() -> None:
    opt = optimizers.RMSprop(0.5, 0.8)
    assert (opt.lr, opt.alpha, opt.eps, opt.eps_inside_sqrt) == (0.5, 0.8, 1e-8, False)
    assert optimizers.RMSpropGraves().lr == 1e-4 and optimizers.SMORMS3().eps == 1e-16
    with pytest.raises(TypeError, match="chainer AdaGrad: unexpected argument 'alpha'"):
        optimizers.AdaGrad(alpha=0.1)
    with pytest.raises(ValueError, match="eps of RMSprop optimizer is too small for float16"):
        p = chainer.Parameter(np.ones(2, np.float16))
        link = chainer.Link()
        with link.init_scope():
            link.p = p
        opt = optimizers.RMSprop(eps=1e-10).setup(link)
        p.grad = np.ones(2, np.float16)
        opt.update()
