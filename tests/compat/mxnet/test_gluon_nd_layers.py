"""The mxnet layer's imperative functions for Gluon's layers (``mx.nd.Activation``,
``LeakyReLU``, ``Flatten``, ``Embedding``, ``Convolution``, ``Pooling``, ``BatchNorm``) under
``mx.autograd``: values and gradients printed by mxnet 1.9.1 for the same inputs (where mxnet
1.9.1's gradient is wrong, ``selu``, against the exact derivative), moving statistics, and the
errors.
"""

from __future__ import annotations

import gradhub_compat.mxnet as mx
import numpy as np
import pytest

# mxnet 1.9.1 (the inputs are built in the tests below)
LEAKY_LEAKY = np.array([-0.3, -0.05, 0.0, 0.7, 25.0])

LEAKYG_LEAKY = np.array([0.1, 0.1, 0.1, 1.0, 1.0])

LEAKY_ELU = np.array([-0.4751065, -0.1967347, 0.0, 0.7, 25.0])

LEAKYG_ELU = np.array([0.0248935, 0.3032653, 0.5, 1.0, 1.0])

LEAKY_SELU = np.array([-1.6705688, -0.6917582, 0.0, 0.7354907, 26.2675247])

LEAKYG_SELU = np.array([0.002831, 1.0312682, 1.7580993, 1.050701, 1.050701])

LEAKY_GELU = np.array([-4.049900e-03, -1.542688e-01, 0.000000e00, 5.306255e-01, 2.500000e01])

LEAKYG_GELU = np.array([-0.0119456, 0.1325049, 0.5, 0.9766141, 1.0])

SOFTRELU = np.array([0.0485873, 0.474077, 0.6931472, 1.103186, 25.0])

SOFTRELUG = np.array([0.0474259, 0.3775406, 0.5, 0.6681878, 1.0])

PRELU = np.array([[[-0.25, 2.0], [0.5, -8.0]]])

PRELU_GX = np.array([[[0.25, 1.0], [1.0, 2.0]]])

PRELU_GG = np.array([-1.0, -4.0])

EMBED = np.array(
    [
        [[0.0, 1.0, 2.0], [9.0, 10.0, 11.0]],
        [[9.0, 10.0, 11.0], [0.0, 1.0, 2.0]],
        [[3.0, 4.0, 5.0], [9.0, 10.0, 11.0]],
    ]
)

EMBED_GW = np.array([[2.0, 2.0, 2.0], [1.0, 1.0, 1.0], [0.0, 0.0, 0.0], [3.0, 3.0, 3.0]])

POOL_MAX_PAD = np.array(
    [
        [[[6.0, 6.0, 4.0], [6.0, 6.0, 6.0], [6.0, 4.0, 5.0]]],
        [[[5.0, 6.0, 6.0], [6.0, 6.0, 6.0], [6.0, 6.0, 6.0]]],
    ]
)

POOL_MAX_PAD_G = np.array(
    [
        [
            [
                [0.0, 0.0, 0.0, 0.0, 1.0],
                [0.0, 4.0, 0.0, 0.0, 0.0],
                [0.0, 0.0, 0.0, 1.0, 0.0],
                [0.0, 0.0, 0.0, 1.0, 1.0],
                [1.0, 0.0, 0.0, 0.0, 0.0],
            ]
        ],
        [
            [
                [0.0, 1.0, 1.0, 0.0, 0.0],
                [0.0, 0.0, 0.0, 0.0, 2.0],
                [0.0, 0.0, 0.0, 0.0, 0.0],
                [0.0, 4.0, 0.0, 0.0, 0.0],
                [0.0, 0.0, 0.0, 1.0, 0.0],
            ]
        ],
    ]
)

POOL_MAX_S1 = np.array(
    [
        [[[6.0, 6.0, 3.0, 4.0], [6.0, 6.0, 6.0, 6.0], [4.0, 5.0, 6.0, 6.0], [6.0, 3.0, 4.0, 5.0]]],
        [[[5.0, 6.0, 6.0, 6.0], [3.0, 4.0, 5.0, 6.0], [6.0, 6.0, 3.0, 4.0], [6.0, 6.0, 6.0, 6.0]]],
    ]
)

POOL_SUM = np.array([[[[12.0, 6.0], [10.0, 18.0]]], [[[14.0, 15.0], [12.0, 6.0]]]])

POOL_AVG_NOPAD = np.array(
    [
        [[[3.0, 2.1666667, 2.5], [3.5, 3.4444444, 3.0], [2.25, 2.0, 3.5]]],
        [[[3.5, 3.8333333, 3.0], [2.8333333, 2.7777777, 3.5], [4.5, 3.6666667, 2.25]]],
    ]
)

POOL_AVG_NOPAD_G = np.array(
    [
        [
            [
                [0.25, 0.4166667, 0.1666667, 0.4166667, 0.25],
                [0.4166667, 0.6944445, 0.2777778, 0.6944445, 0.4166667],
                [0.1666667, 0.2777778, 0.1111111, 0.2777778, 0.1666667],
                [0.4166667, 0.6944445, 0.2777778, 0.6944445, 0.4166667],
                [0.25, 0.4166667, 0.1666667, 0.4166667, 0.25],
            ]
        ],
        [
            [
                [0.25, 0.4166667, 0.1666667, 0.4166667, 0.25],
                [0.4166667, 0.6944445, 0.2777778, 0.6944445, 0.4166667],
                [0.1666667, 0.2777778, 0.1111111, 0.2777778, 0.1666667],
                [0.4166667, 0.6944445, 0.2777778, 0.6944445, 0.4166667],
                [0.25, 0.4166667, 0.1666667, 0.4166667, 0.25],
            ]
        ],
    ]
)

POOL_AVG_PAD = np.array(
    [
        [
            [
                [1.3333334, 1.4444444, 1.1111112],
                [2.3333333, 3.4444444, 2.0],
                [1.0, 1.3333334, 1.5555556],
            ]
        ],
        [
            [
                [1.5555556, 2.5555556, 1.3333334],
                [1.8888888, 2.7777777, 2.3333333],
                [2.0, 2.4444444, 1.0],
            ]
        ],
    ]
)

POOL_GLOBAL_MAX = np.array([[[[6.0]]], [[[6.0]]]])

CONV = np.array(
    [
        [
            [[0.1, -0.25], [2.05, -1.5500001], [-1.5, 2.5999999]],
            [[0.5, -1.25], [-0.65, -0.85], [-0.75, 0.3]],
            [[0.05, 0.75], [-0.35, 1.2], [0.25, -0.1]],
            [[-0.15, 0.4500001], [-0.5000001, 0.25], [-1.05, 0.45]],
            [[0.95, -0.55], [0.75, 0.0], [0.95, 0.35]],
            [[-0.55, -0.85], [-1.15, -0.0999999], [-0.75, -0.15]],
        ]
    ]
)

CONV_GW = np.array(
    [
        [[[-12.5999994], [12.0249996], [-8.6999998]], [[13.625], [-10.7749996], [2.125]]],
        [[[-0.425], [-0.8500001], [1.0000002]], [[2.175], [-1.2499999], [-5.7249999]]],
        [[[3.675], [-0.9], [3.1499999]], [[-1.7499999], [4.3500004], [1.625]]],
        [[[-1.8749998], [-2.0750005], [-0.1999999]], [[-1.3750002], [-2.6499996], [-1.9500003]]],
        [[[0.9500001], [-0.1000003], [0.8750001]], [[0.6999999], [4.8250003], [2.875]]],
        [[[0.4499996], [2.1500003], [-0.1250003]], [[-2.3], [-3.9250002], [-1.6249998]]],
    ]
)

CONV_GB = np.array([2.8999996, -5.4000001, 3.6000004, -1.0999997, 4.9000006, -7.1000004])

CONV_GX = np.array(
    [
        [
            [
                [-5.3800001, 0.0, 1.9000003, 0.0],
                [3.1400001, 0.0, -3.3, 0.0],
                [-2.6999998, 0.0, 7.1599998, 0.0],
            ],
            [
                [2.9599996, 0.0, -4.1399999, 0.0],
                [-3.3400002, 0.0, 7.7999997, 0.0],
                [-2.3199999, 0.0, 6.52, 0.0],
            ],
            [
                [2.72, 0.0, -2.6800003, 0.0],
                [1.7800002, 0.0, 0.1000003, 0.0],
                [2.8399997, 0.0, 0.1399999, 0.0],
            ],
            [
                [2.98, 0.0, -2.3600001, 0.0],
                [2.3800001, 0.0, 0.1600001, 0.0],
                [3.54, 0.0, -0.1800001, 0.0],
            ],
        ]
    ]
)

BN_TRAIN = np.array(
    [
        [[-3.4279816, 1.6954727], [0.7808635, -2.2932091]],
        [[2.7201636, 0.6707819], [-0.7561728, -3.8302455]],
        [[1.6954727, -0.353909], [-2.2932091, 5.3919725]],
    ]
)

BN_GX = np.array(
    [
        [[12.6789818, -20.351408], [-62.3455429, 59.13517]],
        [[9.3005323, -5.5579238], [-13.1519432, 23.2794762]],
        [[28.2939835, -24.3641605], [-39.5577049, 32.6405869]],
    ]
)

BN_GB = np.array([52.6172752, -0.5740967])

BN_MM = np.array([0.1633333, 0.0766667])

BN_MV = np.array([1.3902777, 0.5902777])

BN_EVAL = np.array(
    [
        [[-2.3203456, 1.9186509], [-0.7991108, -4.7005558]],
        [[2.7664502, 1.0708516], [-2.7498333, -6.6512785]],
        [[1.9186509, 0.2230522], [-4.7005558, 5.0530562]],
    ]
)

BN_AXIS2 = np.array(
    [
        [[-2.3203456, 3.102334], [0.2230522, -4.7005558]],
        [[2.7664502, 1.1516116], [-0.624747, -6.6512785]],
        [[1.9186509, -0.7991108], [-1.4725463, 5.0530562]],
    ]
)


_A = np.array([-3.0, -0.5, 0.0, 0.7, 25.0])


def _act(fn: object, **kw: object) -> tuple[np.ndarray, np.ndarray]:
    a = mx.nd.array(_A)
    a.attach_grad()
    with mx.autograd.record():
        y = fn(a, **kw)  # type: ignore[operator]
    y.backward()
    return y.asnumpy(), a.grad.asnumpy()


def test_activation_and_leaky_relu_as_mxnet() -> None:
    for kind, kw, out, grad in [
        ("leaky", {"slope": 0.1}, LEAKY_LEAKY, LEAKYG_LEAKY),
        ("elu", {"slope": 0.5}, LEAKY_ELU, LEAKYG_ELU),
        ("gelu", {}, LEAKY_GELU, LEAKYG_GELU),
    ]:
        y, g = _act(mx.nd.LeakyReLU, act_type=kind, **kw)
        np.testing.assert_allclose(y, out, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(g, grad, rtol=1e-5, atol=1e-6)
    y, g = _act(mx.nd.Activation, act_type="softrelu")
    np.testing.assert_allclose(y, SOFTRELU, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(g, SOFTRELUG, rtol=1e-5, atol=1e-6)
    for act, ref in [
        ("relu", np.maximum(_A, 0)),
        ("sigmoid", 1 / (1 + np.exp(-_A))),
        ("tanh", np.tanh(_A)),
        ("softsign", _A / (1 + np.abs(_A))),
    ]:
        np.testing.assert_allclose(_act(mx.nd.Activation, act_type=act)[0], ref, rtol=1e-6)


def test_selu_values_as_mxnet_and_exact_gradient() -> None:
    y, g = _act(mx.nd.LeakyReLU, act_type="selu")
    np.testing.assert_allclose(y, LEAKY_SELU, rtol=1e-5, atol=1e-6)
    lam, alpha = 1.0507009873554805, 1.6732632423543772
    exact = np.where(_A > 0, lam, lam * alpha * np.exp(_A))
    np.testing.assert_allclose(g, exact, rtol=1e-5)
    # mxnet 1.9.1's gradient differs for negative inputs (0.0028 instead of 0.0875 at -3)
    np.testing.assert_allclose(g[3:], LEAKYG_SELU[3:], rtol=1e-6)
    assert abs(g[0] - LEAKYG_SELU[0]) > 0.08


def test_prelu_as_mxnet() -> None:
    x = mx.nd.array([[[-1.0, 2.0], [0.5, -4.0]]])
    gamma = mx.nd.array([0.25, 2.0])
    x.attach_grad()
    gamma.attach_grad()
    with mx.autograd.record():
        y = mx.nd.LeakyReLU(x, gamma=gamma, act_type="prelu")
    y.backward()
    np.testing.assert_allclose(y.asnumpy(), PRELU, rtol=1e-6)
    np.testing.assert_allclose(x.grad.asnumpy(), PRELU_GX, rtol=1e-6)
    np.testing.assert_allclose(gamma.grad.asnumpy(), PRELU_GG, rtol=1e-6)
    with pytest.raises(mx.MXNetError, match="needs gamma"):
        mx.nd.LeakyReLU(x, act_type="prelu")
    with pytest.raises(NotImplementedError, match="rrelu"):
        mx.nd.LeakyReLU(x, act_type="rrelu")


def test_flatten_and_embedding_as_mxnet() -> None:
    assert mx.nd.flatten(mx.nd.ones((2, 3, 4))).shape == (2, 12)  # mxnet 1.9.1
    assert mx.nd.Flatten(mx.nd.ones((5,))).shape == (5, 1)
    x = mx.nd.ones((2, 3))
    f = mx.nd.flatten(x)
    f[:] = 5
    np.testing.assert_array_equal(x.asnumpy(), np.ones((2, 3)))  # a new array, as mxnet
    w = mx.nd.array(np.arange(12).reshape(4, 3))
    w.attach_grad()
    idx = mx.nd.array([[0, 3], [5, -1], [1.7, 3]])  # clipped and truncated, as mxnet
    with mx.autograd.record():
        e = mx.nd.Embedding(idx, w, input_dim=4, output_dim=3)
    e.backward()
    np.testing.assert_array_equal(e.asnumpy(), EMBED)
    np.testing.assert_array_equal(w.grad.asnumpy(), EMBED_GW)
    with pytest.raises(mx.MXNetError, match="Shape inconsistent"):
        mx.nd.Embedding(idx, w, input_dim=5, output_dim=3)
    with pytest.raises(NotImplementedError, match="sparse_grad"):
        mx.nd.Embedding(idx, w, input_dim=4, output_dim=3, sparse_grad=True)


def test_pooling_as_mxnet() -> None:
    xp = mx.nd.array(np.arange(2 * 1 * 5 * 5).reshape(2, 1, 5, 5) % 7)
    xp.attach_grad()
    with mx.autograd.record():
        pm = mx.nd.Pooling(xp, kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="max")
    pm.backward()
    np.testing.assert_array_equal(pm.asnumpy(), POOL_MAX_PAD)
    np.testing.assert_array_equal(xp.grad.asnumpy(), POOL_MAX_PAD_G)
    # the operator's default stride is 1
    np.testing.assert_array_equal(mx.nd.Pooling(xp, kernel=(2, 2)).asnumpy(), POOL_MAX_S1)
    np.testing.assert_array_equal(
        mx.nd.Pooling(xp, kernel=(2, 2), stride=(2, 2), pool_type="sum").asnumpy(), POOL_SUM
    )
    with mx.autograd.record():
        pa = mx.nd.Pooling(
            xp, kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg", count_include_pad=False
        )
    pa.backward()
    np.testing.assert_allclose(pa.asnumpy(), POOL_AVG_NOPAD, rtol=1e-6)
    np.testing.assert_allclose(xp.grad.asnumpy(), POOL_AVG_NOPAD_G, rtol=1e-6)
    np.testing.assert_allclose(
        mx.nd.Pooling(xp, kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg").asnumpy(),
        POOL_AVG_PAD,
        rtol=1e-6,
    )
    np.testing.assert_array_equal(
        mx.nd.Pooling(xp, kernel=(1, 1), global_pool=True, pool_type="max").asnumpy(),
        POOL_GLOBAL_MAX,
    )
    with pytest.raises(NotImplementedError, match="pool_type='lp'"):
        mx.nd.Pooling(xp, kernel=(2, 2), pool_type="lp")
    with pytest.raises(mx.MXNetError, match="Invalid Input: 'foo'"):
        mx.nd.Pooling(xp, kernel=(2, 2), pool_type="foo")
    with pytest.raises(NotImplementedError, match="pooling_convention='full'"):
        mx.nd.Pooling(xp, kernel=(2, 2), stride=(2, 2), pooling_convention="full")
    with pytest.raises(NotImplementedError, match="layout='NHWC'"):
        mx.nd.Pooling(xp, kernel=(2, 2), layout="NHWC")


def test_convolution_as_mxnet() -> None:
    x = mx.nd.array(((np.arange(48).reshape(1, 4, 3, 4) * 5) % 13 - 6) / 4.0)
    w = mx.nd.array(((np.arange(36).reshape(6, 2, 3, 1) * 7) % 11 - 5) / 5.0)
    b = mx.nd.array([0.1, -0.2, 0.3, 0.0, 0.5, -0.5])
    for t in (x, w, b):
        t.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Convolution(
            x, w, b, kernel=(3, 1), num_filter=6, num_group=2, stride=(1, 2), pad=(1, 0)
        )
        (y * y).sum().backward()
    np.testing.assert_allclose(y.asnumpy(), CONV, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(w.grad.asnumpy(), CONV_GW, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(b.grad.asnumpy(), CONV_GB, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(x.grad.asnumpy(), CONV_GX, rtol=1e-5, atol=1e-5)
    # mxnet 1.9.1: "Shape inconsistent, Provided = [6,2,3,1], inferred shape=(6,4,3,1)"
    with pytest.raises(mx.MXNetError, match=r"Provided = \[6,2,3,1\], inferred shape=\(6,4,3,1\)"):
        mx.nd.Convolution(x, w, b, kernel=(3, 1), num_filter=6)
    with pytest.raises(NotImplementedError, match="layout='NHWC'"):
        mx.nd.Convolution(x, w, b, kernel=(3, 1), num_filter=6, layout="NHWC")


def _bn_inputs() -> tuple[mx.NDArray, ...]:
    x = mx.nd.array(((np.arange(12).reshape(3, 2, 2) * 5) % 7 - 3) / 2.0)
    return (
        x,
        mx.nd.array([2.0, 3.0]),
        mx.nd.array([0.5, -0.5]),
        mx.nd.array([0.1, 0.2]),
        mx.nd.array([1.5, 0.5]),
    )


def test_batch_norm_as_mxnet() -> None:
    x, g, b, mm, mv = _bn_inputs()
    x.attach_grad()
    b.attach_grad()
    weights = mx.nd.array(np.arange(12).reshape(3, 2, 2))
    with mx.autograd.record():
        y = mx.nd.BatchNorm(x, g, b, mm, mv, fix_gamma=False, momentum=0.8, eps=1e-3)
        (y * y * weights).sum().backward()
    np.testing.assert_allclose(y.asnumpy(), BN_TRAIN, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(x.grad.asnumpy(), BN_GX, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(b.grad.asnumpy(), BN_GB, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(mm.asnumpy(), BN_MM, rtol=1e-6)
    np.testing.assert_allclose(mv.asnumpy(), BN_MV, rtol=1e-6)
    np.testing.assert_allclose(
        mx.nd.BatchNorm(x, g, b, mm, mv, fix_gamma=False, eps=1e-3).asnumpy(), BN_EVAL, rtol=1e-6
    )
    np.testing.assert_allclose(
        mx.nd.BatchNorm(x, g, b, mm, mv, axis=2, fix_gamma=False).asnumpy(), BN_AXIS2, rtol=1e-6
    )


def test_batch_norm_fixed_gamma_and_statistics_timing() -> None:
    x, g, b, mm, mv = _bn_inputs()
    g.attach_grad()
    # not training: the moving statistics, gamma left alone (mxnet 1.9.1)
    y = mx.nd.BatchNorm(x, g, b, mm, mv)
    np.testing.assert_array_equal(g.asnumpy(), [2, 3])
    xv = x.asnumpy()
    ref = (xv - mm.asnumpy()[None, :, None]) / np.sqrt(mv.asnumpy()[None, :, None] + 1e-3)
    np.testing.assert_allclose(y.asnumpy(), ref + b.asnumpy()[None, :, None], rtol=1e-6)
    # training with fix_gamma (the default): gamma is set to 1, its gradient is 0 (mxnet 1.9.1)
    with mx.autograd.record():
        y = mx.nd.BatchNorm(x, g, b, mm, mv)
    y.backward()
    np.testing.assert_array_equal(g.asnumpy(), [1, 1])
    np.testing.assert_array_equal(g.grad.asnumpy(), [0, 0])
    np.testing.assert_allclose(
        mm.asnumpy(), 0.9 * np.array([0.1, 0.2]) + 0.1 * xv.mean((0, 2)), rtol=1e-6
    )
    # training mode outside record() leaves the moving statistics alone (mxnet 1.9.1)
    before = mm.asnumpy()
    with mx.autograd.train_mode():
        mx.nd.BatchNorm(x, g, b, mm, mv)
    np.testing.assert_array_equal(mm.asnumpy(), before)
    with pytest.raises(mx.MXNetError, match="Shape inconsistent"):
        mx.nd.BatchNorm(x, g, b, mm, mx.nd.ones((3,)))
    with pytest.raises(NotImplementedError, match="output_mean_var"):
        mx.nd.BatchNorm(x, g, b, mm, mv, output_mean_var=True)


def test_argument_errors() -> None:
    with pytest.raises(TypeError, match=r"mx.nd.Activation: data must be an NDArray"):
        mx.nd.Activation(np.ones(2), act_type="relu")
    # mxnet 1.9.1's message
    with pytest.raises(
        mx.MXNetError,
        match=r"Invalid Input: 'foo', valid values are: {'relu', "
        "'sigmoid', 'softrelu', 'softsign', 'tanh'}",
    ):
        mx.nd.Activation(mx.nd.ones((2,)), act_type="foo")
    with pytest.raises(NotImplementedError, match="out= is not supported"):
        mx.nd.Activation(mx.nd.ones((2,)), act_type="relu", out=mx.nd.ones((2,)))
    with pytest.raises(mx.MXNetError, match="mixed dtypes"):
        mx.nd.LeakyReLU(
            mx.nd.ones((1, 2)), gamma=mx.nd.ones((2,), dtype="float64"), act_type="prelu"
        )
