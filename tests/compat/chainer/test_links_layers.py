"""The small layers of the chainer layer: LayerNormalization, GroupNormalization, PReLU,
Scale, Bias, Maxout, Highway, Bilinear (and F.bilinear).

Each case seeds numpy's generator, builds the link (its initial weights drawn as chainer draws
them), runs it on fixed inputs and backpropagates ``sum(y * r)``; EXPECTED holds chainer
7.8.1's output and gradients for the same code (the case functions ran unchanged under chainer
7.8.1, 2026-11-27). The gradients are also checked against float64 central differences.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gradhub_compat.chainer.functions as F
import gradhub_compat.chainer.links as L
import numpy as np
import pytest
from gradhub_compat import chainer

CASES: dict[str, Callable[[], dict[str, Any]]] = {}


def _case(fn: Callable[[], dict[str, Any]]) -> Callable[[], dict[str, Any]]:
    CASES[fn.__name__] = fn
    return fn


def _rand(shape: Any, seed: int) -> np.ndarray:
    return np.random.RandomState(seed).uniform(-1, 1, shape).astype(np.float32)


def _run(link: Any, *arrays: np.ndarray) -> dict[str, Any]:
    """The output, and the gradients of ``sum(y * r)`` for the inputs and every parameter."""
    xs = [chainer.Variable(a) for a in arrays]
    y = link(*xs)
    link.cleargrads()
    F.sum(y * _rand(y.shape, 100)).backward()
    out = {"y": y.array}
    for i, x in enumerate(xs):
        out[f"gx{i}"] = x.grad
    for name, p in sorted(link.namedparams()):
        out["g" + name] = p.grad
    return out


@_case
def layer_normalization() -> dict[str, Any]:
    link = L.LayerNormalization(4, initial_gamma=2.0)
    link.gamma.array[...] *= [1.0, 2.0, 0.5, -1.0]
    link.beta.array[...] = [0.1, -0.2, 0.3, 0.0]
    return _run(link, _rand((3, 4), 1))


@_case
def layer_normalization_deferred_eps() -> dict[str, Any]:
    link = L.LayerNormalization(eps=0.5)
    return _run(link, _rand((2, 5), 2))


@_case
def group_normalization() -> dict[str, Any]:
    link = L.GroupNormalization(2, 4, initial_gamma=np.arange(1, 5, dtype=np.float32))
    return _run(link, _rand((2, 4, 3), 3))


@_case
def group_normalization_deferred() -> dict[str, Any]:
    link = L.GroupNormalization(3, eps=1e-2, initial_beta=0.5)
    return _run(link, _rand((2, 6, 2, 2), 4))


@_case
def prelu_shape() -> dict[str, Any]:
    link = L.PReLU((3,), init=0.1)
    return _run(link, _rand((2, 3, 2), 5))


@_case
def prelu_default() -> dict[str, Any]:
    return _run(L.PReLU(), _rand((4, 2), 6))


@_case
def scale_with_bias() -> dict[str, Any]:
    link = L.Scale(axis=1, W_shape=(3,), bias_term=True)
    link.W.array[...] = [0.5, -1.0, 2.0]
    link.bias.b.array[...] = [0.1, 0.2, 0.3]
    return _run(link, _rand((2, 3, 4), 7))


@_case
def scale_two_inputs_bias_shape() -> dict[str, Any]:
    link = L.Scale(axis=2, bias_term=True, bias_shape=(4,))
    return _run(link, _rand((2, 3, 4), 8), _rand((4,), 9))


@_case
def bias_param() -> dict[str, Any]:
    link = L.Bias(1, (3, 2))
    link.b.array[...] = np.arange(6, dtype=np.float32).reshape(3, 2)
    return _run(link, _rand((2, 3, 2, 2), 10))


@_case
def bias_two_inputs() -> dict[str, Any]:
    return _run(L.Bias(axis=0), _rand((3, 2), 11), _rand((3,), 12))


@_case
def maxout() -> dict[str, Any]:
    np.random.seed(13)
    return _run(L.Maxout(4, 3, 2), _rand((2, 4), 14))


@_case
def maxout_array_init() -> dict[str, Any]:
    link = L.Maxout(3, 2, 3, initialW=_rand((2, 3, 3), 15), initial_bias=_rand((2, 3), 16) * 0.1)
    return _run(link, _rand((4, 3), 17))


@_case
def maxout_callable_init_nobias() -> dict[str, Any]:
    def init(a: np.ndarray) -> None:  # sees (out_size, pool_size, in_size), as chainer
        a[...] = np.arange(a.size, dtype=a.dtype).reshape(a.shape) * 0.1 - a.shape[1] * 0.2

    return _run(L.Maxout(2, 2, 3, initialW=init, initial_bias=None), _rand((3, 2), 18))


@_case
def highway() -> dict[str, Any]:
    np.random.seed(19)
    return _run(L.Highway(3), _rand((2, 3), 20))


@_case
def highway_tanh_nobias() -> dict[str, Any]:
    np.random.seed(21)
    return _run(L.Highway(4, nobias=True, activate=F.tanh), _rand((3, 4), 22))


@_case
def bilinear() -> dict[str, Any]:
    np.random.seed(23)
    return _run(L.Bilinear(3, 2, 4), _rand((2, 3), 24), _rand((2, 2), 25))


@_case
def bilinear_nobias_flattened() -> dict[str, Any]:
    np.random.seed(26)
    return _run(L.Bilinear(4, 3, 2, nobias=True), _rand((2, 2, 2), 27), _rand((2, 3), 28))


@_case
def bilinear_tuple_bias() -> dict[str, Any]:
    np.random.seed(29)
    link = L.Bilinear(2, 2, 3, initial_bias=(_rand((2, 3), 30), None, 0.5))
    return _run(link, _rand((3, 2), 31), _rand((3, 2), 32))


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_chainer(name: str) -> None:
    got = CASES[name]()
    expected = EXPECTED[name]
    assert sorted(got) == sorted(expected)
    for key, (shape, values) in expected.items():
        a = np.asarray(got[key])
        assert a.shape == shape, key
        assert a.dtype == np.float32, key
        np.testing.assert_allclose(
            a.ravel(), values, rtol=2e-5, atol=2e-6, err_msg=f"{name}: {key}"
        )


def _to_float64(link: Any) -> None:
    for p in link.params():
        p.array = p.array.astype(np.float64)


def _check_fd(link: Any, *arrays: np.ndarray, eps: float = 1e-6) -> None:
    """The gradients of ``sum(y * r)`` (x and every parameter, float64) against central
    differences."""
    _to_float64(link)
    xs = [a.astype(np.float64) for a in arrays]
    vs = [chainer.Variable(a) for a in xs]
    y = link(*vs)
    r = np.random.RandomState(0).randn(*y.shape)
    link.cleargrads()
    F.sum(y * r).backward()

    def f() -> float:
        return float(np.sum(link(*xs).array * r))

    pairs = [(v.array, v.grad) for v in vs] + [(p.array, p.grad) for p in link.params()]
    for arr, grad in pairs:
        num = np.zeros_like(arr)
        for i in np.ndindex(arr.shape):
            old = arr[i]
            arr[i] = old + eps
            hi = f()
            arr[i] = old - eps
            lo = f()
            arr[i] = old
            num[i] = (hi - lo) / (2 * eps)
        np.testing.assert_allclose(grad, num, rtol=1e-6, atol=1e-8)


def _to_float64(link: Any) -> None:
    for p in link.params():
        p.array = p.array.astype(np.float64)


def _check_fd(link: Any, *arrays: np.ndarray, eps: float = 1e-6) -> None:
    """The gradients of ``sum(y * r)`` (the inputs and every parameter, float64) against
    central differences."""
    _to_float64(link)
    xs = [a.astype(np.float64) for a in arrays]
    vs = [chainer.Variable(a) for a in xs]
    y = link(*vs)
    r = np.random.RandomState(0).randn(*y.shape)
    link.cleargrads()
    F.sum(y * r).backward()

    def f() -> float:
        return float(np.sum(link(*xs).array * r))

    pairs = [(v.array, v.grad) for v in vs] + [(p.array, p.grad) for p in link.params()]
    for arr, grad in pairs:
        num = np.zeros_like(arr)
        for i in np.ndindex(arr.shape):
            old = arr[i]
            arr[i] = old + eps
            hi = f()
            arr[i] = old - eps
            lo = f()
            arr[i] = old
            num[i] = (hi - lo) / (2 * eps)
        np.testing.assert_allclose(grad, num, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize(
    ("make", "shapes"),
    [
        (lambda: L.LayerNormalization(3), [(2, 3)]),
        (lambda: L.GroupNormalization(2, 4), [(2, 4, 3)]),
        (lambda: L.PReLU((2,)), [(3, 2, 2)]),
        (lambda: L.Scale(W_shape=(2,), bias_term=True), [(2, 2, 3)]),
        (lambda: L.Scale(axis=1), [(2, 3), (3,)]),
        (lambda: L.Bias(shape=(2,)), [(3, 2)]),
        (lambda: L.Maxout(3, 2, 2), [(2, 3)]),
        (lambda: L.Highway(3), [(2, 3)]),
        (lambda: L.Bilinear(2, 3, 2), [(2, 2), (2, 3)]),
    ],
)
def test_gradients_against_finite_differences(make: Callable[[], Any], shapes: Any) -> None:
    np.random.seed(0)
    link = make()
    _check_fd(link, *(np.random.RandomState(i).randn(*s) for i, s in enumerate(shapes)))


def test_bilinear_function_against_numpy() -> None:
    rng = np.random.RandomState(0)
    e1, e2 = rng.randn(3, 2), rng.randn(3, 4)
    w, v1, v2, b = rng.randn(2, 4, 5), rng.randn(2, 5), rng.randn(4, 5), rng.randn(5)
    y = F.bilinear(e1, e2, w, v1, v2, b)
    expected = np.einsum("ij,ik,jkl->il", e1, e2, w) + e1 @ v1 + e2 @ v2 + b
    np.testing.assert_allclose(y.array, expected, rtol=1e-12)
    np.testing.assert_allclose(F.bilinear(e1, e2, w).array, expected - e1 @ v1 - e2 @ v2 - b)


def test_parameters_and_initial_values() -> None:
    np.random.seed(0)
    bl = L.Bilinear(2, 3, 4)
    assert [n for n, _ in bl.namedparams()] == ["/V1", "/V2", "/W", "/b"]
    state = np.random.RandomState(0)  # chainer's draws: W, then V1, then V2 (LeCunNormal)
    w = state.normal(0, np.sqrt(1 / 12), (2, 3, 4))  # fan_in = 3 * 4
    v1 = state.normal(0, np.sqrt(1 / 4), (2, 4))
    np.testing.assert_allclose(bl.W.array, w.astype(np.float32), rtol=1e-6)
    np.testing.assert_allclose(bl.V1.array, v1.astype(np.float32), rtol=1e-6)
    hw = L.Highway(2)
    np.testing.assert_array_equal(hw.transform.b.array, [-1.0, -1.0])
    np.testing.assert_array_equal(hw.plain.b.array, [0.0, 0.0])
    p = L.PReLU()
    assert p.W.shape == () and float(p.W.array) == 0.25
    g = L.GroupNormalization(2, 4)
    assert g.gamma.dtype == np.float32 and g.beta.array.tolist() == [0.0] * 4
    ln = L.LayerNormalization()
    assert ln.gamma.array is None
    ln(np.ones((2, 3), np.float32))
    assert ln.gamma.shape == (3,) and ln.eps == 1e-6
    s = L.Scale(W_shape=(2,), bias_term=True)
    assert [n for n, _ in s.namedparams()] == ["/W", "/bias/b"]
    m = L.Maxout(3, 2, 4)
    assert m.linear.W.shape == (8, 3) and m.linear.b.shape == (8,)


def test_bad_input_raises() -> None:
    with pytest.raises(ValueError, match="bias_shape should be given"):
        L.Scale(bias_term=True)
    with pytest.raises(ValueError, match=r"initialW\.ndim should be 3"):
        L.Maxout(2, 2, 2, initialW=np.ones((4, 2), np.float32))
    with pytest.raises(ValueError, match=r"initial_bias\.ndim should be 2"):
        L.Maxout(2, 2, 2, initial_bias=np.ones(4, np.float32))
    with pytest.raises(ValueError, match="initial_bias must be tuple or None"):
        L.Bilinear(2, 2, 2, initial_bias=0)
    with pytest.raises(ValueError, match="initialW must have shape"):
        L.Bilinear(2, 2, 2, initialW=np.ones((2, 2), np.float32))
    with pytest.raises(ValueError, match="must be None, if at least one of them is None"):
        F.bilinear(np.ones((1, 2)), np.ones((1, 2)), np.ones((2, 2, 1)), np.ones((2, 1)))
    with pytest.raises(TypeError, match="bilinear"):
        F.bilinear(np.ones((1, 3)), np.ones((1, 2)), np.ones((2, 2, 1)))
    with pytest.raises(TypeError, match="Bias"):
        L.Bias(shape=(2,))(np.ones((1, 2)), np.ones(2))
    with pytest.raises(TypeError, match="Scale"):
        L.Scale()(np.ones((1, 2)))
    with pytest.raises(ValueError, match="Input dimension must be at least 2"):
        L.GroupNormalization(1)(np.ones(3, np.float32))
    with pytest.raises(ValueError, match="divisible"):
        L.GroupNormalization(3, 4)(np.ones((2, 4), np.float32))
    with pytest.raises(TypeError, match="layer_normalization"):
        L.LayerNormalization()(np.ones((2, 3, 2), np.float32))  # chainer: InvalidType


# fmt: off
# --- EXPECTED (generated) ---
EXPECTED: dict[str, dict[str, tuple[tuple[int, ...], list[float]]]] = {  # chainer 7.8.1
    'layer_normalization': {
        'y': (
            (3, 4),
            [
                0.54270285, 5.3906565, -1.0955615, 0.44690827, -0.87473261, -4.4570093,
                0.23142485, -3.2403862, -1.8748517, 0.80518621, -0.49185371, -3.0559661
            ],
        ),
        'gx0': (
            (3, 4),
            [
                2.0599627, -0.61956215, -0.075152516, -1.3652482, -1.2639084, -5.2411184,
                9.9083824, -3.4033537, -4.5750732, 0.67599797, 4.5886488, -0.68957376
            ],
        ),
        'g/beta': (
            (4,),
            [
                -1.6303391, -1.0499363, 0.97317725, 0.75966203
            ],
        ),
        'g/gamma': (
            (4,),
            [
                1.2194328, 0.223703, -0.43247709, 0.013136983
            ],
        ),
    },
    'layer_normalization_deferred_eps': {
        'y': (
            (2, 5),
            [
                0.15765993, -0.87609857, 0.4442091, 0.15596457, 0.11826495, -0.036190961,
                -0.36551002, 0.72087061, -0.11657815, -0.20259151
            ],
        ),
        'gx0': (
            (2, 5),
            [
                0.30028903, -0.28305846, -0.022922263, 1.0601667, -1.0544751, -0.89840615,
                0.57735205, 0.86230582, -0.84975713, 0.30850548
            ],
        ),
        'g/beta': (
            (5,),
            [
                -0.67005187, -0.10176307, 0.50074071, -0.037034571, -0.8403756
            ],
        ),
        'g/gamma': (
            (5,),
            [
                0.041077994, 0.26351953, 0.40273541, 0.19224986, -0.14757533
            ],
        ),
    },
    'group_normalization': {
        'y': (
            (2, 4, 3),
            [
                -0.41996211, 0.3073608, -1.6212735, -1.2094359, 2.3231261, 2.3540599,
                -1.6185383, -0.19817024, -2.9077635, 5.1527209, -4.3777623, 5.5243392,
                0.79107165, -0.78355378, 0.90624404, 1.0869621, -3.7294888, 0.81500298,
                -2.0199399, 0.70634013, -1.5953357, 7.4267569, 1.5331129, -5.0812893
            ],
        ),
        'gx0': (
            (2, 4, 3),
            [
                0.42732736, 0.55957031, -2.3640864, 3.069242, -1.4005786, -0.29147387,
                0.74879557, 4.4611225, -9.4612083, 3.4363353, 5.6654115, -4.8504558,
                -0.67354763, -2.2331114, -0.43737984, 4.5360036, 1.2323849, -2.4243493,
                5.7102342, -7.2165928, -1.5524443, 0.85666108, 3.5843892, -1.3822491
            ],
        ),
        'g/beta': (
            (4,),
            [
                -2.4806111, -0.13337594, 0.31062222, 1.5388172
            ],
        ),
        'g/gamma': (
            (4,),
            [
                -0.32012802, -3.3679762, 0.017368019, 0.82755184
            ],
        ),
    },
    'group_normalization_deferred': {
        'y': (
            (2, 6, 2, 2),
            [
                1.4571865, 0.23868385, 1.4735992, 0.72511166, 0.67551458, -0.7224896, 1.4840198,
                -1.3316262, -0.4283244, 0.17216092, 1.3102887, -0.61096227, 1.5864396,
                1.9841253, -0.72273946, 0.70901132, -0.97822785, 0.045396596, -0.8828721,
                1.5908746, 0.17979422, 1.5700661, 1.1290679, 1.3459008, -0.47041512,
                -0.81099284, 1.0122564, -0.48842323, 1.4721913, 0.34543887, 0.75969684,
                2.1802478, 0.89256006, -1.1787711, -0.92815924, 1.0103097, 0.90612483,
                1.4732008, 0.29044694, 1.5342878, 0.1218861, 1.2467989, 1.9578165, -0.95798361,
                0.016220003, 0.64532018, 1.5577432, -0.5878011
            ],
        ),
        'gx0': (
            (2, 6, 2, 2),
            [
                0.2122442, -0.53473634, -0.13313821, 1.100407, -1.3370314, -0.97226512,
                0.58138138, 1.0831386, -0.73161566, 0.59917122, 1.421617, -0.45654947,
                -0.96402872, -1.2957591, -0.40008155, 1.8272464, 0.42071009, -1.1604906,
                0.44728664, -0.65242177, -0.43617427, 1.1498567, 0.75211674, -0.52088356,
                -0.17842266, 0.65904462, -1.4325266, 0.096722387, 1.1003295, -1.1000181,
                0.73767787, 0.11719285, -2.0937271, 0.16067705, -1.6748536, 1.790506, 2.2875407,
                -2.5634568, 2.0927954, 0.00051884615, 1.71427, 0.094082899, -0.81781191,
                -0.84244889, -0.82422769, 0.23918617, 0.48848185, -0.051532559
            ],
        ),
        'g/beta': (
            (6,),
            [
                -2.2051492, -0.72708952, -1.5473945, 0.00067317486, 0.097735167, 0.60003448
            ],
        ),
        'g/gamma': (
            (6,),
            [
                1.153564, 1.0186574, 3.7143767, -1.4311352, -0.34263706, 2.5130908
            ],
        ),
    },
    'prelu_shape': {
        'y': (
            (2, 3, 2),
            [
                -0.055601366, 0.74146461, -0.058656167, 0.8372218, -0.0023177622, 0.22348772,
                0.53181571, 0.036835976, -0.040639903, -0.062455755, -0.083851747, 0.47688058
            ],
        ),
        'gx0': (
            (2, 3, 2),
            [
                0.0086809881, -0.44326124, -0.015096481, 0.68955225, -0.099056229, -0.75686175,
                0.34149817, 0.6517055, -0.07265868, 0.015018666, 0.078264393, -0.58159578
            ],
        ),
        'g/W': (
            (3,),
            [
                -0.04826748, 0.29003412, -0.63330173
            ],
        ),
    },
    'prelu_default': {
        'y': (
            (4, 2),
            [
                0.78572029, -0.084010094, 0.64245826, -0.22915168, -0.19617166, 0.19010413,
                0.059634723, -0.040596284
            ],
        ),
        'gx0': (
            (4, 2),
            [
                0.086809881, -0.11081531, -0.15096481, 0.17238806, -0.24764057, -0.75686175,
                0.34149817, 0.16292638
            ],
        ),
        'g/W': (
            (),
            [
                0.18835914
            ],
        ),
    },
    'scale_with_bias': {
        'y': (
            (2, 3, 4),
            [
                -0.32369173, 0.37991878, 0.038409233, 0.32346517, -0.75597906, 0.12300826,
                0.19775908, 1.0558977, -0.62624407, 0.29953003, 1.01692, 1.5149562,
                -0.019058868, -0.33406365, -0.1118544, 0.50959355, 0.7732293, 0.29575208,
                -0.66241205, 1.1502016, 0.70219564, 2.100518, -0.77878851, 0.4939597
            ],
        ),
        'gx0': (
            (2, 3, 4),
            [
                0.043404941, -0.22163062, -0.075482406, 0.34477612, 0.99056226, 0.75686175,
                -0.34149817, -0.6517055, -1.4531736, 0.30037332, 1.5652878, -1.1631916,
                -0.31467178, -0.39162311, -0.28030249, 0.47862378, -0.6233663, 0.65611798,
                -0.63244951, 0.4518525, -0.27318326, 1.7601193, 1.2705975, -0.65555221
            ],
        ),
        'g/W': (
            (3,),
            [
                1.8565756, -0.88198096, 0.65405214
            ],
        ),
        'g/bias/b': (
            (3,),
            [
                -0.83381128, -0.60637504, 0.67563868
            ],
        ),
    },
    'scale_two_inputs_bias_shape': {
        'y': (
            (2, 3, 4),
            [
                -0.73136276, 0.0035132905, -0.0062419083, -0.045193773, 0.52345246,
                -0.0036637119, 0.0011755517, 0.14302419, -0.044408418, -0.00016202628,
                -0.00093590235, -0.06354671, -0.51096487, 0.0015924628, -0.0020234445,
                0.10825205, 0.41309726, 0.0035531411, 0.0028103536, 0.41186699, 0.85036576,
                0.0036207414, 0.0062917792, 0.2605218
            ],
        ),
        'gx0': (
            (2, 3, 4),
            [
                -0.085008726, -0.0016618681, 0.001276168, -0.50498736, 0.97000974,
                -0.0028376142, -0.0028868252, -0.4772706, 0.71151137, 0.00056307745,
                -0.0066160131, 0.42592639, 0.61628574, -0.0029365344, 0.0047390261, -0.70103157,
                -0.61043251, -0.0024599072, -0.0053463574, 0.33091009, 0.13375758, 0.0032995059,
                -0.0053704432, 0.24004386
            ],
        ),
        'gx1': (
            (4,),
            [
                0.088643886, 0.21316159, -0.88960493, 0.094037123
            ],
        ),
        'g/bias/b': (
            (4,),
            [
                -1.772908, -1.6092408, 1.6803205, 0.93728101
            ],
        ),
    },
    'bias_param': {
        'y': (
            (2, 3, 2, 2),
            [
                0.54264128, -0.95849609, 1.2672964, 1.4976077, 1.997014, 1.4495933, 2.3961258,
                3.5210614, 3.3382215, 3.1766796, 5.3707194, 5.9067869, -0.99210346, 0.024384527,
                1.625242, 1.2250521, 2.4435105, 1.5837522, 3.8355482, 3.4291515, 4.0850887,
                3.2843401, 4.7466817, 5.3482671
            ],
        ),
        'gx0': (
            (2, 3, 2, 2),
            [
                0.086809881, -0.44326124, -0.15096481, 0.68955225, -0.99056226, -0.75686175,
                0.34149817, 0.6517055, -0.72658682, 0.15018666, 0.78264391, -0.58159578,
                -0.62934357, -0.78324622, -0.56060499, 0.95724756, 0.6233663, -0.65611798,
                0.63244951, -0.4518525, -0.13659163, 0.88005966, 0.63529873, -0.3277761
            ],
        ),
        'g/b': (
            (3, 2),
            [
                -1.7690412, 0.93523002, -1.7801757, 1.1738007, 0.16706789, 0.50857079
            ],
        ),
    },
    'bias_two_inputs': {
        'y': (
            (3, 2),
            [
                -1.3311349, -1.6527238, 0.40653643, 0.92996722, -0.63296276, -0.50251573
            ],
        ),
        'gx0': (
            (3, 2),
            [
                0.086809881, -0.44326124, -0.15096481, 0.68955225, -0.99056226, -0.75686175
            ],
        ),
        'gx1': (
            (3,),
            [
                -0.35645136, 0.53858745, -1.747424
            ],
        ),
    },
    'maxout': {
        'y': (
            (2, 3),
            [
                0.24064277, 0.12373284, 1.1993337, 0.39778358, -0.26411885, 0.97261941
            ],
        ),
        'gx0': (
            (2, 4),
            [
                0.007926804, -0.012842664, -0.21583003, 0.049109228, -0.57255816, -0.43337578,
                -0.69734049, 0.0087273959
            ],
        ),
        'g/linear/W': (
            (6, 4),
            [
                -0.26239404, 0.63108337, 0.018089317, -0.25060478, 0.0024208399, 0.04742685,
                0.064313568, -0.085412771, 0, 0, 0, 0, 0.36457574, -1.148737, -0.35437831,
                0.79612863, 0.2880072, -0.69268554, -0.019855076, 0.27506715, -0.0042099082,
                -0.082476623, -0.11184309, 0.14853519
            ],
        ),
        'g/linear/b': (
            (6,),
            [
                0.68955225, 0.086809881, 0, -1.4338235, -0.75686175, -0.15096481
            ],
        ),
    },
    'maxout_array_init': {
        'y': (
            (4, 2),
            [
                0.62470388, 0.70096743, 0.0048829159, 0.67332244, 0.86107355, 0.52052462,
                0.45521906, 1.2109462
            ],
        ),
        'gx0': (
            (4, 3),
            [
                0.22290711, 0.26104942, 0.3344456, -0.30310977, 0.64376837, -0.33432409,
                -0.25290492, 1.1398492, 1.5690231, -0.45854107, 0.4108001, -0.57259285
            ],
        ),
        'g/linear/W': (
            (6, 3),
            [
                -0.27244601, -0.14977875, 0.91317374, 0.13046367, -0.08664941, -0.047201723,
                -0.132763, 0.30971044, -0.35404596, -0.78123784, 0.97669131, -0.35784236, 0, 0,
                0, -0.026134519, -0.14155772, 0.97120506
            ],
        ),
        'g/linear/b': (
            (6,),
            [
                -0.99056226, -0.15096481, 0.42830804, 1.3412578, 0, -1.200123
            ],
        ),
    },
    'maxout_callable_init_nobias': {
        'y': (
            (3, 2),
            [
                -0.061240379, 0.12575276, -0.087808631, -0.015278637, -0.19092052, 0.5319227
            ],
        ),
        'gx0': (
            (3, 2),
            [
                -0.19466646, -0.2303116, 0.30601385, 0.35987261, -0.10463221, -0.27937463
            ],
        ),
        'g/linear/W': (
            (6, 2),
            [
                0, 0, 0, 0, -0.78602064, -0.39854246, 0, 0, 0, 0, -0.14436266, -0.82224733
            ],
        ),
    },
    'highway': {
        'y': (
            (2, 3),
            [
                0.14994271, 0.64009452, 0.69284528, 0.46079221, -0.51457876, 0.36323273
            ],
        ),
        'gx0': (
            (2, 3),
            [
                0.041513346, -0.39433113, -0.1135985, 0.59405679, -0.30337548, -0.76641881
            ],
        ),
        'g/plain/W': (
            (3, 3),
            [
                0.14989987, -0.2202718, 0.091010213, -0.24645311, 0.36215287, -0.14963154,
                -0.04520053, 0.018047418, -0.058457077
            ],
        ),
        'g/plain/b': (
            (3,),
            [
                0.23730539, -0.39015812, -0.10463119
            ],
        ),
        'g/transform/W': (
            (3, 3),
            [
                -0.049159162, 0.070188016, -0.031160451, -0.1471118, 0.2745983, -0.051859602,
                0.010615145, -0.0056016762, 0.012854301
            ],
        ),
        'g/transform/b': (
            (3,),
            [
                -0.079224765, -0.19294511, 0.023640014
            ],
        ),
    },
    'highway_tanh_nobias': {
        'y': (
            (3, 4),
            [
                -0.52728224, -0.12430751, 0.086218879, -0.069748938, -0.52478456, -0.12388853,
                -0.15627861, -0.076470479, -0.54785705, -0.0030440986, -0.39940777, -0.24878542
            ],
        ),
        'gx0': (
            (3, 4),
            [
                0.18982649, -0.29552728, -0.070603222, -0.010142595, -0.26785251, -0.044925876,
                -0.11006413, 0.76108348, -0.206818, 0.16541547, 0.17650972, 0.38955039
            ],
        ),
        'g/plain/W': (
            (4, 4),
            [
                0.46629924, -0.066904336, 0.53338939, -0.18912515, 0.3486059, 0.17510614,
                0.16969059, -0.27847052, -0.32381567, 0.20603701, -0.50449502, 0.064139023,
                -0.24068737, -0.13643651, -0.043586764, 0.26292959
            ],
        ),
        'g/transform/W': (
            (4, 4),
            [
                0.038962416, 0.017159179, 0.029415885, -0.021182418, 0.055456955, -0.007504533,
                0.070806764, -0.014470273, -0.13180336, 0.1134431, -0.21381657, 0.03101166,
                0.15769485, 0.137263, -0.017848816, -0.19897474
            ],
        ),
    },
    'bilinear': {
        'y': (
            (2, 4),
            [
                -0.24520725, 0.9257372, -0.51220775, 0.375864, 0.7297048, 0.33849809,
                -0.66880083, -0.81327659
            ],
        ),
        'gx0': (
            (2, 3),
            [
                0.87109977, 0.19737332, -0.81537104, 0.85213506, 1.0293055, -1.0520034
            ],
        ),
        'gx1': (
            (2, 2),
            [
                -0.27727175, -0.23900935, 0.88921702, 0.15297772
            ],
        ),
        'g/V1': (
            (3, 4),
            [
                0.63444966, 0.015925052, -0.33008584, 0.26954457, 0.30990389, 0.033450346,
                -0.1551366, 0.094047301, -0.38836801, -0.80619651, 0.012885771, 1.0019805
            ],
        ),
        'g/V2': (
            (2, 4),
            [
                0.50240844, 0.00665332, -0.26280361, 0.22217612, 0.63653386, 0.40250319,
                -0.23936331, -0.29591829
            ],
        ),
        'g/W': (
            (3, 2, 4),
            [
                -0.18618146, -0.48931473, -0.018246293, 0.63101125, -0.33523306, -0.33329204,
                0.097247809, 0.33359641, -0.096114002, -0.2239593, -0.0026160367, 0.28378263,
                -0.16721505, -0.16122466, 0.049700294, 0.15904003, 0.27441531, -0.16744994,
                -0.1841788, 0.37202948, 0.31276274, 0.15514073, -0.12773733, -0.082937084
            ],
        ),
        'g/b': (
            (4,),
            [
                -0.90375239, -1.200123, 0.19053335, 1.3412578
            ],
        ),
    },
    'bilinear_nobias_flattened': {
        'y': (
            (2, 2),
            [
                0.35599494, -0.30081815, -0.41925991, 0.13777196
            ],
        ),
        'gx0': (
            (2, 2, 2),
            [
                0.19547231, -0.054505616, 0.48860693, -0.0033377558, 0.19651403, 0.21888848,
                -0.055606253, -0.065387741
            ],
        ),
        'gx1': (
            (2, 3),
            [
                -0.03488335, -0.036724094, -0.24627222, -0.88903773, -0.044074107, 0.045609564
            ],
        ),
        'g/W': (
            (4, 3, 2),
            [
                -0.013118538, 0.063101411, 0.018230654, -0.082420439, 0.010447166, -0.052927569,
                0.054666024, -0.26316535, -0.074756004, 0.33785599, -0.044149797, 0.2237201,
                0.043034472, -0.20664579, -0.061786465, 0.2795226, -0.033265013, 0.16844949,
                0.011313424, -0.067433968, 0.057136372, -0.265192, -0.045996699, 0.23590207
            ],
        ),
    },
    'bilinear_tuple_bias': {
        'y': (
            (3, 3),
            [
                -0.41444027, 1.8557082, 0.48269537, -1.4433382, 1.6707498, 0.61229295,
                0.44910121, -0.00073742867, 0.67559296
            ],
        ),
        'gx0': (
            (3, 2),
            [
                -0.045790628, -0.56034607, -0.86744684, -1.2091073, -0.65703785, 0.6573118
            ],
        ),
        'gx1': (
            (3, 2),
            [
                -0.38033107, -0.066800177, -2.2944758, -1.4434373, -0.26915616, -0.13061732
            ],
        ),
        'g/V1': (
            (2, 3),
            [
                0.1363226, -0.72623587, 0.079503901, 0.50299644, -1.8439173, -0.34767964
            ],
        ),
        'g/V2': (
            (2, 3),
            [
                0.29998308, -0.11890265, -0.53573108, 0.82226509, -0.37772268, -1.1108067
            ],
        ),
        'g/W': (
            (2, 2, 3),
            [
                -0.079906084, -0.10295475, 0.2019877, 0.22313134, -0.77687132, -0.12113857,
                0.013740502, -0.62185979, 0.069206104, 0.43482032, -1.0749037, -0.30273947
            ],
        ),
        'g/b': (
            (3,),
            [
                1.1178603, -0.78211796, -1.6344134
            ],
        ),
    },
}
# --- end EXPECTED ---
# fmt: on
