"""chainer 7.8.1's ``L.ChildSumTreeLSTM``, ``L.NaryTreeLSTM``, ``L.StatelessMGU``,
``L.StatefulMGU``, ``L.StatefulPeepholeLSTM``, ``L.StatefulZoneoutLSTM``, ``L.Inception``,
``L.InceptionBN`` and ``optimizers.MSVAG`` in gradhub's chainer layer.

The expected numbers (parameter names, shapes and initial values after ``numpy.random.seed``,
outputs, states, gradients of the inputs and parameters, the parameters after five optimizer
steps) come from ``data/links_more3_reference.npz``, written by chainer 7.8.1 (numpy 1.26) with
``data/make_links_more3_reference.py``, whose scenarios this file runs through gradhub_compat.
The first and second derivatives are also checked against float64 finite differences.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import gradhub as gh
import gradhub_compat.chainer.functions as F
import gradhub_compat.chainer.links as L
import numpy as np
import pytest
from compat.chainer.helpers import _reference_script
from gradhub_compat import chainer
from gradhub_compat.chainer import optimizers, serializers

_DATA = Path(__file__).parent / "data"
_ref = _reference_script("make_links_more3_reference")
# chainer 7.8.1's results (written by make_links_more3_reference.py)
_CHAINER = dict(np.load(_DATA / "links_more3_reference.npz", allow_pickle=False))
_NS = SimpleNamespace(chainer=chainer, L=L, F=F, optimizers=optimizers, serializers=serializers)


def _rand(shape: Any, seed: int) -> np.ndarray:
    return np.random.RandomState(seed).uniform(-1, 1, shape).astype(np.float64)


@pytest.mark.parametrize("name", sorted(_ref.SCENARIOS))
def test_scenario_matches_chainer(name: str) -> None:
    got = {f"{name}/{k}": np.asarray(v) for k, v in _ref.SCENARIOS[name](_NS).items()}
    expected = {k: v for k, v in _CHAINER.items() if k.split("/", 1)[0] == name}
    assert sorted(got) == sorted(expected)
    for key, want in expected.items():
        have = got[key]
        if want.dtype.kind == "U":
            np.testing.assert_array_equal(have, want, err_msg=key)
            continue
        assert have.shape == want.shape, key
        assert have.dtype == want.dtype, key
        np.testing.assert_allclose(have, want, rtol=1e-4, atol=2e-6, err_msg=key)


# -- derivatives against finite differences (float64, first and second order) -------------------
def _float64(link: Any) -> Any:
    for p in link.params():
        p.array = p.array.astype(np.float64)
    return link


def _check(fn: Any, *shapes: Any) -> None:
    inputs = [_rand(s, 50 + k) for k, s in enumerate(shapes)]
    assert gh.testing.gradcheck(fn, inputs, order=2)


def test_child_sum_tree_lstm_derivatives() -> None:
    np.random.seed(0)
    link = _float64(L.ChildSumTreeLSTM(3, 2))

    def fn(c1: Any, c2: Any, h1: Any, h2: Any, x: Any) -> Any:
        c, h = link(c1, c2, h1, h2, x)
        c_leaf, h_leaf = link(x)
        return [c, h, c_leaf, h_leaf]

    _check(fn, (2, 2), (2, 2), (2, 2), (2, 2), (2, 3))


def test_nary_tree_lstm_derivatives() -> None:
    np.random.seed(1)
    link = _float64(L.NaryTreeLSTM(3, 2, n_ary=2))
    _check(lambda c1, c2, h1, h2, x: list(link(c1, c2, h1, h2, x)), (2, 2), (2, 2), (2, 2),
           (2, 2), (2, 3))  # fmt: skip


def test_stateless_mgu_derivatives() -> None:
    np.random.seed(2)
    link = _float64(L.StatelessMGU(3, 2))
    _check(lambda h, x: link(h, x), (2, 2), (2, 3))


def test_peephole_lstm_derivatives() -> None:
    np.random.seed(4)
    link = _float64(L.StatefulPeepholeLSTM(3, 2))

    def fn(x0: Any, x1: Any) -> Any:
        link.reset_state()
        link(x0)
        return [link(x1), link.c]

    _check(fn, (2, 3), (2, 3))


def test_zoneout_lstm_derivatives() -> None:
    np.random.seed(5)
    link = _float64(L.StatefulZoneoutLSTM(3, 2, c_ratio=0.4, h_ratio=0.4))

    def fn(x0: Any, x1: Any) -> Any:
        np.random.seed(7)  # the same masks at every evaluation
        link.reset_state()
        link(x0)
        return [link(x1), link.c]

    _check(fn, (3, 3), (3, 3))


def test_inception_derivatives() -> None:
    np.random.seed(7)
    link = _float64(L.Inception(2, 1, 1, 1, 1, 1, 1))
    _check(lambda x: link(x), (1, 2, 3, 3))


def test_inception_bn_derivatives() -> None:
    np.random.seed(9)
    link = _float64(L.InceptionBN(2, 1, 1, 1, 1, 1, "avg", proj_pool=1))
    _check(lambda x: link(x), (3, 2, 3, 3))


# -- arguments, state and errors ------------------------------------------------------------------
def test_tree_lstm_bad_arguments() -> None:
    unit = L.ChildSumTreeLSTM(3, 2)
    x = np.ones((1, 3), np.float32)
    with pytest.raises(ValueError, match=r"ChildSumTreeLSTM.*odd number"):
        unit(None, x)
    with pytest.raises(ValueError, match="All inputs"):
        unit(None, None, None)
    nary = L.NaryTreeLSTM(3, 2, n_ary=2)
    with pytest.raises(ValueError, match="NaryTreeLSTM: expected 5 arguments"):
        nary(None, None, x)
    with pytest.raises(ValueError, match="All inputs"):
        nary(None, None, None, None, None)
    with pytest.raises(ValueError, match="n_ary"):
        L.NaryTreeLSTM(3, 2, n_ary=0)


def test_child_sum_tree_lstm_is_independent_of_the_children_order() -> None:
    unit = L.ChildSumTreeLSTM(3, 2)
    c1, c2, h1, h2 = (_rand((2, 2), k).astype(np.float32) for k in range(4))
    x = _rand((2, 3), 9).astype(np.float32)
    a = unit(c1, c2, h1, h2, x)
    b = unit(c2, c1, h2, h1, x)
    for u, v in zip(a, b):
        np.testing.assert_allclose(u.array, v.array, rtol=1e-6)


def test_stateful_links_state() -> None:
    x = np.ones((2, 3), np.float32)
    mgu = L.StatefulMGU(3, 4)
    assert mgu.h is None
    y = mgu(x)
    assert y.array.dtype == np.float32
    assert mgu.h is y
    with pytest.raises(TypeError, match=r"StatefulMGU\.set_state"):
        mgu.set_state(np.zeros((2, 4), np.float32))
    peep = L.StatefulPeepholeLSTM(3, 4)
    assert not hasattr(peep, "set_state")  # as chainer 7.8.1
    peep(x)
    assert peep.c.shape == (2, 4) and peep.h.shape == (2, 4)
    peep.reset_state()
    assert peep.c is None and peep.h is None
    zo = L.StatefulZoneoutLSTM(3, 4)
    assert (zo.c_ratio, zo.h_ratio) == (0.5, 0.5)
    with pytest.raises(TypeError, match=r"StatefulZoneoutLSTM\.set_state"):
        zo.set_state(None, None)


def test_zoneout_lstm_keyword_arguments() -> None:
    with pytest.raises(ValueError, match="train argument is not supported anymore"):
        L.StatefulZoneoutLSTM(3, 2, train=True)
    with pytest.raises(TypeError, match="unexpected keyword"):
        L.StatefulZoneoutLSTM(3, 2, ratio=0.1)


def test_inception_bn_bad_arguments() -> None:
    with pytest.raises(NotImplementedError, match="pooltype"):
        L.InceptionBN(3, 0, 2, 2, 2, 2, "min")
    with pytest.raises(ValueError, match="proj_pool"):
        L.InceptionBN(3, 2, 2, 2, 2, 2, "max")
    with pytest.raises(ValueError, match="stride"):
        L.InceptionBN(3, 2, 2, 2, 2, 2, "max", proj_pool=1, stride=2)


def test_msvag_hyperparameters_and_first_step() -> None:
    opt = optimizers.MSVAG()
    assert (opt.lr, opt.beta, opt.eta, opt.weight_decay_rate) == (0.1, 0.9, 1.0, 0)
    opt.lr = 0.5
    assert opt.hyperparam.lr == 0.5
    link = chainer.Link()
    with link.init_scope():
        link.w = chainer.Parameter(np.array([1.0, 2.0], np.float32))
    opt.setup(link)
    link.w.grad = np.array([2.0, 0.0], np.float32)
    opt.update()  # the first step: factor 1 (0 for a zero gradient), p -= lr g
    np.testing.assert_allclose(link.w.array, [0.0, 2.0])
    rule = link.w.update_rule
    assert isinstance(rule, optimizers.MSVAGRule)
    assert rule.beta_power == pytest.approx(0.81)
    assert rule.state is not None and sorted(rule.state) == ["m", "v"]
