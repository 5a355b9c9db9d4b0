"""The mxnet layer's initializers (``mx.init``): the name dispatch of ``Initializer.__call__``
(``*_weight``, ``*_bias``, ``*_gamma``, ``*_beta``, ``*_min``, ``*_max``, an ``__init__``
attribute), exact values of Zero/One/Constant, bounds and moments of the random initializers
against mxnet's formulas, ``dumps``/``create`` and the errors, as mxnet 1.9.1 prints them.
"""

from __future__ import annotations

import gradhub_compat.mxnet as mx
import numpy as np
import pytest


def _fill(init: object, name: str, shape: tuple[int, ...], attrs: dict | None = None) -> np.ndarray:
    a = mx.nd.full(shape, 5.0)
    init(mx.init.InitDesc(name, attrs), a)  # type: ignore[operator]
    return a.asnumpy()


def test_name_dispatch_as_mxnet() -> None:
    init = mx.init.Uniform(0.1)
    w = _fill(init, "x_weight", (2, 3))
    assert np.all(np.abs(w) <= 0.1) and np.unique(w).size == 6
    # mxnet 1.9.1: bias and beta 0, gamma 1, min 0, max 1
    np.testing.assert_array_equal(_fill(init, "x_bias", (2, 3)), np.zeros((2, 3)))
    np.testing.assert_array_equal(_fill(init, "x_gamma", (3,)), np.ones(3))
    np.testing.assert_array_equal(_fill(init, "x_beta", (3,)), np.zeros(3))
    np.testing.assert_array_equal(_fill(init, "x_min", (3,)), np.zeros(3))
    np.testing.assert_array_equal(_fill(init, "x_max", (3,)), np.ones(3))
    # an __init__ attribute wins over the name: its _init_weight
    np.testing.assert_array_equal(_fill(init, "x_bias", (3,), {"__init__": "ones"}), np.ones(3))
    with pytest.raises(ValueError, match="Unknown initialization pattern for x_moving_mean"):
        _fill(init, "x_moving_mean", (3,))


def test_exact_values_of_zero_one_constant() -> None:
    np.testing.assert_array_equal(_fill(mx.init.Zero(), "w_weight", (2, 2)), np.zeros((2, 2)))
    np.testing.assert_array_equal(_fill(mx.init.One(), "w_weight", (2, 2)), np.ones((2, 2)))
    np.testing.assert_array_equal(
        _fill(mx.init.Constant(0.3), "w_weight", (2,)), np.full(2, 0.3, np.float32)
    )
    # an array value is broadcast (mxnet 1.9.1: [[1, 1, 1], [2, 2, 2]])
    np.testing.assert_array_equal(
        _fill(mx.init.Constant([[1.0], [2.0]]), "c_weight", (2, 3)), [[1, 1, 1], [2, 2, 2]]
    )
    assert isinstance(mx.init.create("zeros"), mx.init.Zero)
    assert isinstance(mx.init.create("ones"), mx.init.One)


def test_random_bounds_and_moments() -> None:
    mx.random.seed(3)
    u = _fill(mx.init.Uniform(0.07), "w_weight", (200, 100))
    assert u.dtype == np.float32 and np.abs(u).max() <= 0.07
    assert abs(u.mean()) < 2e-3 and abs(u.var() - 0.07**2 / 3) < 1e-4  # U(-a, a): a^2 / 3
    n = _fill(mx.init.Normal(0.5), "w_weight", (200, 100))
    assert abs(n.mean()) < 0.02 and abs(n.std() - 0.5) < 0.01
    # Xavier: scale = sqrt(magnitude / factor), fan_in = shape[1] * hw, fan_out = shape[0] * hw
    x = _fill(mx.init.Xavier(), "w_weight", (64, 32, 3, 3))
    scale = np.sqrt(3.0 / ((32 * 9 + 64 * 9) / 2))
    assert np.abs(x).max() <= scale and np.abs(x).max() > 0.99 * scale
    assert abs(x.var() - scale**2 / 3) < 0.02 * scale**2
    xi = _fill(
        mx.init.Xavier(rnd_type="gaussian", factor_type="in", magnitude=2), "w_weight", (400, 50)
    )
    assert abs(xi.std() - np.sqrt(2.0 / 50)) < 0.01 * np.sqrt(2.0 / 50) * 3
    xo = _fill(mx.init.Xavier(factor_type="out", magnitude=6), "w_weight", (30, 500))
    assert np.abs(xo).max() <= np.sqrt(6.0 / 30)
    # MSRAPrelu: gaussian Xavier with magnitude 2 / (1 + slope^2)
    m = _fill(mx.init.MSRAPrelu(slope=0.0), "w_weight", (300, 200))
    assert abs(m.std() - np.sqrt(2.0 / 250)) < 0.02 * np.sqrt(2.0 / 250)


def test_seeded_draws_repeat() -> None:
    mx.random.seed(7)
    a = _fill(mx.init.Xavier(), "w_weight", (4, 5))
    mx.random.seed(7)
    np.testing.assert_array_equal(a, _fill(mx.init.Xavier(), "w_weight", (4, 5)))


def test_orthogonal_bilinear_lstmbias() -> None:
    q = _fill(mx.init.Orthogonal(scale=2.0), "o_weight", (3, 4))
    np.testing.assert_allclose(q @ q.T, 4 * np.eye(3), atol=1e-5)  # mxnet 1.9.1: 4 I
    q = _fill(mx.init.Orthogonal(rand_type="normal"), "o_weight", (5, 2))
    np.testing.assert_allclose(q.T @ q, 1.414**2 * np.eye(2), atol=1e-5)
    # mxnet 1.9.1
    np.testing.assert_allclose(
        _fill(mx.init.Bilinear(), "up_weight", (1, 1, 2, 4)),
        [[[[0.0625, 0.1875, 0.1875, 0.0625], [0.1875, 0.5625, 0.5625, 0.1875]]]],
    )
    lstm = mx.nd.zeros((8,))
    mx.init.LSTMBias(2.0)._init_weight("l", lstm)
    np.testing.assert_array_equal(lstm.asnumpy(), [0, 0, 2, 2, 0, 0, 0, 0])


def test_dumps_create_and_equality_as_mxnet() -> None:
    # mxnet 1.9.1
    assert mx.init.Zero().dumps() == '["zero", {}]'
    assert mx.init.Constant(0.3).dumps() == '["constant", {"value": 0.3}]'
    assert mx.init.Uniform().dumps() == '["uniform", {"scale": 0.07}]'
    assert mx.init.Normal(0.5).dumps() == '["normal", {"sigma": 0.5}]'
    assert mx.init.Xavier().dumps() == (
        '["xavier", {"rnd_type": "uniform", "factor_type": "avg", "magnitude": 3}]'
    )
    assert mx.init.MSRAPrelu().dumps() == '["msraprelu", {"factor_type": "avg", "slope": 0.25}]'
    assert mx.init.Orthogonal().dumps() == (
        '["orthogonal", {"scale": 1.414, "rand_type": "uniform"}]'
    )
    x = mx.init.create('["xavier", {"magnitude": 2}]')
    assert isinstance(x, mx.init.Xavier) and x.magnitude == 2.0
    assert mx.init.create(x) is x
    assert mx.init.Uniform(0.1) == mx.init.Uniform(0.1) and mx.init.Uniform(0.1) != mx.init.Uniform(
        0.2
    )
    assert mx.initializer is mx.init


def test_register_custom_initializer() -> None:
    @mx.init.register
    @mx.init.alias("halfinit")
    class HalfInit(mx.init.Initializer):
        def _init_weight(self, _: object, arr: mx.NDArray) -> None:
            arr[:] = 0.5

    np.testing.assert_array_equal(_fill(mx.init.create("halfinit"), "w_weight", (2,)), [0.5, 0.5])
    np.testing.assert_array_equal(_fill(mx.init.create("HalfInit"), "w_weight", (2,)), [0.5, 0.5])
    p = mx.gluon.Parameter("p_weight", shape=(2,), init="halfinit")
    p.initialize()
    np.testing.assert_array_equal(p.data().asnumpy(), [0.5, 0.5])


def test_mixed() -> None:
    init = mx.init.Mixed([".*bias", ".*"], [mx.init.Zero(), mx.init.One()])
    a = mx.nd.full((2,), 5.0)
    init("fc_bias", a)
    np.testing.assert_array_equal(a.asnumpy(), [0, 0])
    init("fc_weight", a)
    np.testing.assert_array_equal(a.asnumpy(), [1, 1])
    with pytest.raises(ValueError, match="did not match any pattern"):
        mx.init.Mixed(["bias"], [mx.init.Zero()])("fc_weight", a)


def test_errors_as_mxnet() -> None:
    a = mx.nd.zeros((3, 4))
    # mxnet 1.9.1's messages
    with pytest.raises(AssertionError, match="foo is not registered"):
        mx.init.create("foo")
    with pytest.raises(ValueError, match="Incorrect factor type"):
        mx.init.Xavier(factor_type="foo")(mx.init.InitDesc("w_weight"), a)
    with pytest.raises(ValueError, match="Unknown random type"):
        mx.init.Xavier(rnd_type="foo")(mx.init.InitDesc("w_weight"), a)
    with pytest.raises(ValueError, match="Xavier initializer cannot be applied to vector v_weight"):
        mx.init.Xavier()(mx.init.InitDesc("v_weight"), mx.nd.zeros((3,)))
    with pytest.raises(NotImplementedError, match="Must override it"):
        mx.init.Initializer()(mx.init.InitDesc("w_weight"), a)
    with pytest.raises(TypeError, match="arr must be an NDArray"):
        mx.init.One()(mx.init.InitDesc("w_weight"), np.zeros(3))
    with pytest.warns(DeprecationWarning, match="init\\(str, NDArray\\) has been deprecated"):
        mx.init.One()("w_weight", a)
    np.testing.assert_array_equal(a.asnumpy(), np.ones((3, 4)))
