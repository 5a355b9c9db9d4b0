"""chainer's special functions (``F.lgamma``, ``F.digamma``, ``F.polygamma``, ``F.zeta``,
``F.erfinv``, ``F.erfcinv``, ``F.erfcx``, ``F.ndtr``, ``F.ndtri``, ``F.log_ndtr``) against
chainer 7.8.1.

Every expected number was printed by chainer 7.8.1 (with SciPy 1.13.1, which its CPU kernels
call) on the same inputs: the values, the first derivative and the second derivative for
upstream gradients of ones (``chainer.grad`` twice, ``enable_double_backprop=True``), and the
exceptions for bad input.
"""

from __future__ import annotations

from typing import Any

import gradhub_compat.chainer.functions as F
import numpy as np
import pytest
from gradhub_compat import chainer
from gradhub_compat.chainer.utils.type_check import InvalidType

X = [0.3, 1.7, 4.2, -1.5]

#: name -> (function of x, x, values, first derivatives, second derivatives), float64
# chainer 7.8.1
CASES: dict[str, tuple[Any, list[float], list[float], list[float], list[float]]] = {
    "lgamma": (
        F.lgamma,
        X,
        [1.0957979948180756, -0.09580769740706585, 2.04855563696059, 0.860047015376481],
        [-3.502524222200133, 0.20854787487349394, 1.3113388912865998, 0.7031566406452434],
        [12.245364546107734, 0.7932328301639984, 0.2686649407314008, 9.379246644989124],
    ),
    "digamma": (
        F.digamma,
        X,
        [-3.502524222200133, 0.20854787487349394, 1.3113388912865998, 0.7031566406452434],
        [12.245364546107734, 0.7932328301639984, 0.2686649407314008, 9.379246644989124],
        [-75.27253658872601, -0.6040890841034592, -0.0717648505531312, -0.23620405164172825],
    ),
    "polygamma n=1": (
        lambda v: F.polygamma(np.array([1, 1, 1, 1]), v),
        X,
        [12.245364546107734, 0.7932328301639984, 0.2686649407314008, 9.379246644989124],
        [-75.27253658872601, -0.6040890841034592, -0.0717648505531312, -0.23620405164172825],
        [743.1417646550497, 0.8895620066243167, 0.03812584146098512, 194.59427621918758],
    ),
    "polygamma n=[0,1,2,3]": (
        lambda v: F.polygamma(np.array([0, 1, 2, 3]), v),
        X,
        [-3.502524222200133, 0.7932328301639984, -0.0717648505531312, 194.59427621918758],
        [12.245364546107734, -0.6040890841034592, 0.03812584146098512, -0.3137559995066608],
        [-75.27253658872601, 0.8895620066243167, -0.03021967824031448, 15381.648528026308],
    ),
    "zeta x=2.5": (
        lambda q: F.zeta(2.5, q),
        [0.3, 1.7, 4.2],
        [21.069239202247726, 0.46362551789123674, 0.09263576030263977],
        [-170.25664013108067, -0.5203413764809603, -0.037012442035378845],
        [1975.2081466599554, 0.9438620852711508, 0.0245125753553481],
    ),
    "erfinv": (
        F.erfinv,
        [-0.9, 0.1, 0.5, 0.99],
        [-1.1630871536766743, 0.08885599049425769, 0.4769362762044699, 1.8213863677184496],
        [3.4280428114518418, 0.8932517253051874, 1.1125848189719496, 24.450876473746423],
        [-27.33598507382705, 0.1417961487884746, 1.1807463499933994, 2177.814778633624],
    ),
    "erfcinv": (
        F.erfcinv,
        [0.05, 0.7, 1.0, 1.8],
        [1.3859038243496782, 0.27246271472675443, 0.0, -0.9061938024368232],
        [-6.049327886384241, -0.9545203588405493, -0.8862269254527579, -2.0145683819335884],
        [101.4325487807479, 0.4964865260107431, 0.0, -7.355549295923895],
    ),
    "erfcx": (
        F.erfcx,
        [-1.5, 0.0, 1.5, 8.0],
        [18.653886256262734, 1.0, 0.3215854164543176, 0.06998516620088094],
        [-57.09003793588371, -1.1283791670955126, -0.16362291773255977, -0.008616507881417546],
        [208.5778863201766, 2.0, 0.15230207971095588, 0.002106206299081148],
    ),
    "ndtr": (
        F.ndtr,
        [-3.0, 0.0, 1.2],
        [0.0013498980316300933, 0.5, 0.8849303297782918],
        [0.0044318484119380075, 0.3989422804014327, 0.19418605498321295],
        [0.013295545235814023, 0.0, -0.23302326597985554],
    ),
    "ndtri": (
        F.ndtri,
        [0.02, 0.5, 0.9],
        [-2.053748910631823, 0.0, 1.2815515655446004],
        [20.653418018055977, 2.5066282746310002, 5.698059856117003],
        [-876.0546845480096, 0.0, 41.60927029199775],
    ),
    "log_ndtr": (
        F.log_ndtr,
        [-10.0, -1.0, 0.0, 3.0],
        [-53.23128515051248, -1.841021645009264, -0.6931471805599453, -0.001350809964748193],
        [10.098093233962512, 1.5251352761609813, 0.7978845608028654, 0.004437839042125667],
        [-0.9905546221743404, -0.8009023344296512, -0.6366197723675814, -0.013333211541740815],
    ),
}

#: float32: name -> (function, x, values, first, second derivatives)
# chainer 7.8.1
CASES_32: dict[str, tuple[Any, list[float], list[float], list[float], list[float]]] = {
    "lgamma": (
        F.lgamma,
        [0.3, 1.7, 4.2],
        [1.0957978963851929, -0.09580768644809723, 2.048555374145508],
        [-3.5025241374969482, 0.2085479199886322, 1.3113387823104858],
        [12.245363235473633, 0.793232798576355, 0.2686649560928345],
    ),
    "erfinv": (
        F.erfinv,
        [-0.9, 0.1, 0.5],
        [-1.1630871295928955, 0.08885598927736282, 0.4769362807273865],
        [3.428042411804199, 0.8932517170906067, 1.1125848293304443],
        [-27.33597755432129, 0.14179614186286926, 1.1807464361190796],
    ),
    "zeta x=2": (
        lambda q: F.zeta(2.0, q),
        [0.3, 1.7, 4.2],
        [12.245363235473633, 0.793232798576355, 0.2686649560928345],
        [-75.27252960205078, -0.6040890216827393, -0.07176485657691956],
        [743.1416625976562, 0.8895619511604309, 0.03812584653496742],
    ),
    "polygamma n=2": (
        lambda v: F.polygamma(np.array([2, 2, 2]), v),
        [0.3, 1.7, 4.2],
        [-75.27252960205078, -0.6040890216827393, -0.07176485657691956],
        [743.1416625976562, 0.8895618915557861, 0.03812584653496742],
        [-9883.466796875, -1.9106096029281616, -0.030219683423638344],
    ),
}


def _value_and_derivatives(fn: Any, x: np.ndarray) -> tuple[Any, np.ndarray, np.ndarray]:
    v = chainer.Variable(x)
    y = fn(v)
    ones = np.ones_like(x)
    (gx,) = chainer.grad([y], [v], grad_outputs=[ones], enable_double_backprop=True)
    (ggx,) = chainer.grad([gx], [v], grad_outputs=[ones])
    return y, np.asarray(gx.array), np.asarray(ggx.array)


@pytest.mark.parametrize("name", list(CASES))
def test_values_and_two_derivatives_float64(name: str) -> None:
    fn, x, want, want_g, want_gg = CASES[name]
    y, g, gg = _value_and_derivatives(fn, np.array(x))
    assert isinstance(y, chainer.Variable) and y.dtype == np.float64
    np.testing.assert_allclose(y.array, want, rtol=1e-13, atol=1e-15)
    # chainer's (SciPy's) polygamma(4, -1.5) = -0.3137559995066608 is 2e-13 off; mpmath and
    # gradhub give -0.31375599950673136
    np.testing.assert_allclose(g, want_g, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(gg, want_gg, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", list(CASES_32))
def test_values_and_two_derivatives_float32(name: str) -> None:
    fn, x, want, want_g, want_gg = CASES_32[name]
    y, g, gg = _value_and_derivatives(fn, np.array(x, dtype=np.float32))
    assert y.dtype == g.dtype == gg.dtype == np.float32
    np.testing.assert_allclose(y.array, want, rtol=1e-6)
    np.testing.assert_allclose(g, want_g, rtol=1e-6)
    np.testing.assert_allclose(gg, want_gg, rtol=1e-6)


def test_float16_keeps_its_dtype() -> None:
    # chainer 7.8.1: lgamma of float16 [0.3, 1.7] is float16 [1.096, -0.09576]
    y = F.lgamma(np.array([0.3, 1.7], dtype=np.float16))
    assert y.dtype == np.float16
    np.testing.assert_allclose(y.array.astype(np.float64), [1.096, -0.09576], rtol=1e-3)


@pytest.mark.parametrize(
    "name", ["lgamma", "digamma", "erfinv", "erfcinv", "erfcx", "ndtr", "ndtri", "log_ndtr"]
)
def test_integer_input_raises_invalid_type(name: str) -> None:
    # chainer 7.8.1: InvalidType (check_type_forward: x.dtype.kind == 'f')
    with pytest.raises(InvalidType, match=rf"{name} \(Forward\).*\n.*\nExpect: x.dtype.kind == f"):
        getattr(F, name)(np.array([1, 2], dtype=np.int32))


def test_polygamma_arguments_as_chainer() -> None:
    x = np.array([1.0])
    # chainer 7.8.1: a Python int n raises TypeError (incompatible array types are mixed)
    with pytest.raises(TypeError, match=r"F.polygamma: n must be an integer array"):
        F.polygamma(1, x)
    # chainer 7.8.1: float n, or integer x, raise InvalidType
    with pytest.raises(InvalidType, match=r"n\.dtype\.kind == i"):
        F.polygamma(np.array([1.0]), x)
    with pytest.raises(InvalidType, match=r"x\.dtype\.kind == f"):
        F.polygamma(np.array([1]), np.array([1], dtype=np.int32))
    # chainer 7.8.1: n = -1 gives nan; n and x broadcast
    assert np.isnan(F.polygamma(np.array([-1]), x).array).all()
    y = F.polygamma(np.array([1, 2]), np.array([[1.0], [2.0]]))
    assert y.shape == (2, 2)
    np.testing.assert_allclose(
        y.array,
        [[1.6449340668482266, -2.404113806319188], [0.6449340668482266, -0.4041138063191886]],
        rtol=1e-14,
    )


def test_polygamma_of_several_orders_keeps_poles_out_of_the_other_elements() -> None:
    # chainer 7.8.1: polygamma([0, 1], [-1, 2]) = [nan, 0.6449...], gradient [inf, -0.4041...]
    v = chainer.Variable(np.array([-1.0, 2.0]))
    y = F.polygamma(np.array([0, 1]), v)
    with np.errstate(invalid="ignore"):  # inf - inf in Where's rule, for the masked part
        (g,) = chainer.grad([y], [v], grad_outputs=[np.ones(2)])
    assert np.isnan(y.array[0])
    np.testing.assert_allclose(y.array[1], 0.6449340668482266, rtol=1e-15)
    # each order's call sees 1.0 where the order is another, so the pole at -1 stays in its
    # own element
    assert g.array[0] == np.inf
    np.testing.assert_allclose(g.array[1], -0.4041138063191886, rtol=1e-14)


def test_zeta_arguments_as_chainer() -> None:
    # chainer 7.8.1: an array x broadcasts with q: zeta([2, 3], [1, 1]) = [pi^2/6, 1.2020569...]
    np.testing.assert_allclose(
        F.zeta(np.array([2.0, 3.0]), np.array([1.0, 1.0])).array,
        [1.6449340668482266, 1.202056903159594],
        rtol=1e-15,
    )
    # chainer 7.8.1: x < 1 gives nan; an integer q raises InvalidType
    assert np.isnan(F.zeta(0.5, np.array([1.0])).array).all()
    with pytest.raises(InvalidType, match=r"q\.dtype\.kind == f"):
        F.zeta(2.0, np.array([1], dtype=np.int32))
    with pytest.raises(TypeError, match=r"x \(the exponent\) is not differentiated"):
        F.zeta(chainer.Variable(np.array([2.0])), np.array([1.0]))


def test_the_special_functions_are_provided() -> None:
    for name in ("lgamma", "digamma", "polygamma", "zeta", "erfinv", "erfcinv", "erfcx"):
        assert name in F.__all__ and callable(getattr(F, name))
    for name in ("ndtr", "ndtri", "log_ndtr"):
        assert name in F.__all__
    assert callable(F.add)  # (provided since 2026-11-28; see test_links_more2.py)
