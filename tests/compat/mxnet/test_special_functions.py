"""``mx.nd.gamma``, ``mx.nd.gammaln`` and ``mx.nd.erfinv`` against mxnet 1.9.1.

Expected values were printed by mxnet 1.9.1 on the same inputs (values and ``x.grad`` after
``y.backward()`` under ``mx.autograd.record()``, in float32 and float64; integer and float16
inputs). mxnet's gradients of gamma and gammaln use an approximate digamma (up to 2.3e-6
relative off, 1e-7 absolute, in float64 as well), so those are compared at that tolerance
and, in float64, with the exact digamma as well. Second derivatives, which mxnet does not have
for these operators (``_backward_gammaln is non-differentiable``), are checked against the
exact polygamma.
"""

from __future__ import annotations

from typing import Any

import gradhub_compat.mxnet as mx
import numpy as np
import pytest

nd = mx.nd
ag = mx.autograd

X = [0.3, 1.7, 4.2, -1.5, -0.5]
XI = [-0.9, 0.1, 0.5, 0.99, 0.0]

#: (function, input, dtype) -> (values, gradients); mxnet 1.9.1
MXNET: dict[tuple[str, str], tuple[list[float], list[float]]] = {
    ("gamma", "float32"): (
        [
            2.9915690422058105,
            0.9086387753486633,
            7.756687641143799,
            2.363271713256836,
            -3.544908046722412,
        ],
        [
            -10.478041648864746,
            0.18949492275714874,
            10.171646118164062,
            1.6617505550384521,
            -0.1293533891439438,
        ],
    ),
    ("gamma", "float64"): (
        [
            2.991568987687591,
            0.9086387328532904,
            7.756689535793179,
            2.363271801207355,
            -3.5449077018110318,
        ],
        [
            -10.478042462570194,
            0.18949471883212898,
            10.171648462176934,
            1.661750459778802,
            -0.12935388846084703,
        ],
    ),
    ("gammaln", "float32"): (
        [
            1.0957980155944824,
            -0.09580768644809723,
            2.048555374145508,
            0.8600470423698425,
            1.2655121088027954,
        ],
        [
            -3.502523899078369,
            0.20854812860488892,
            1.3113389015197754,
            0.7031567692756653,
            0.03648991510272026,
        ],
    ),
    ("gammaln", "float64"): (
        [
            1.0957979948180756,
            -0.09580769740706588,
            2.04855563696059,
            0.8600470153764809,
            1.2655121234846454,
        ],
        [
            -3.502524095447808,
            0.20854792117113607,
            1.311338866308874,
            0.7031567248971711,
            0.03649005823050411,
        ],
    ),
    ("erfinv", "float32"): (
        [-1.1630871295928955, 0.08885598927736282, 0.4769362807273865, 1.8213865756988525, 0.0],
        [
            3.428042411804199,
            0.8932517170906067,
            1.1125849485397339,
            24.450897216796875,
            0.8862269520759583,
        ],
    ),
    ("erfinv", "float64"): (
        [-1.1630871536766743, 0.08885599049425778, 0.4769362762044699, 1.8213863677184496, 0.0],
        [
            3.428042914433897,
            0.8932517521394202,
            1.112584852395182,
            24.450877208276783,
            0.8862269520759583,
        ],
    ),
}

#: the exact digamma at X (chainer 7.8.1's F.digamma, i.e. SciPy's psi)
DIGAMMA_X = [
    -3.502524222200133,
    0.20854787487349394,
    1.3113388912865998,
    0.7031566406452434,
    0.03648997397857652,
]


def _value_and_grad(fn: str, x: list[float], dtype: str) -> tuple[np.ndarray, np.ndarray]:
    a = nd.array(x, dtype=dtype)
    a.attach_grad()
    with ag.record():
        y = getattr(nd, fn)(a)
    y.backward()
    assert y.dtype == np.dtype(dtype) and a.grad.dtype == np.dtype(dtype)
    return y.asnumpy(), a.grad.asnumpy()


@pytest.mark.parametrize(("fn", "dtype"), list(MXNET))
def test_values_and_gradients_as_mxnet(fn: str, dtype: str) -> None:
    want, want_g = MXNET[(fn, dtype)]
    y, g = _value_and_grad(fn, XI if fn == "erfinv" else X, dtype)
    rtol = 2e-7 if dtype == "float32" else 1e-14
    np.testing.assert_allclose(y, want, rtol=rtol, atol=1e-30)
    # mxnet's digamma (in the gradients of gamma and gammaln) and erfinv gradient are
    # approximations, up to 2.3e-6 relative off (1e-7 absolute) in float64 too
    np.testing.assert_allclose(g, want_g, rtol=3e-6)


def test_float64_gradients_are_exact() -> None:
    _, g = _value_and_grad("gammaln", X, "float64")
    np.testing.assert_allclose(g, DIGAMMA_X, rtol=1e-14)
    y, g = _value_and_grad("gamma", X, "float64")
    np.testing.assert_allclose(g, y * np.array(DIGAMMA_X), rtol=1e-14)
    y, g = _value_and_grad("erfinv", XI, "float64")
    np.testing.assert_allclose(g, np.sqrt(np.pi) / 2 * np.exp(y * y), rtol=1e-15)


def test_second_derivative_of_gammaln_is_trigamma() -> None:
    # mxnet 1.9.1 raises here (_backward_gammaln is non-differentiable); gradhub differentiates
    # its rule again: psi'(0.3), psi'(1.7), psi'(4.2) (chainer 7.8.1's F.polygamma(1, x))
    x = nd.array([0.3, 1.7, 4.2], dtype="float64")
    x.attach_grad()
    with ag.record():
        y = nd.gammaln(x)
        (g,) = ag.grad(y, [x], create_graph=True)
    g.backward()
    np.testing.assert_allclose(
        x.grad.asnumpy(), [12.245364546107734, 0.7932328301639984, 0.2686649407314008], rtol=1e-14
    )


def test_float16_is_computed_in_higher_precision() -> None:
    # mxnet 1.9.1: float16 results of float16 inputs
    want: dict[str, Any] = {
        "gamma": [2.99, 0.9087, 7.75, 2.363, -3.545],
        "gammaln": [1.096, -0.09576, 2.047, 0.86, 1.266],
        "erfinv": [-1.163, 0.0888, 0.477, 1.827, 0.0],
    }
    for fn, values in want.items():
        y = getattr(nd, fn)(nd.array(XI if fn == "erfinv" else X, dtype="float16"))
        assert y.dtype == np.float16
        np.testing.assert_array_equal(y.asnumpy(), np.array(values, dtype=np.float16))


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8"])
def test_integer_arrays_as_mxnet(dtype: str) -> None:
    # mxnet 1.9.1: computed in double precision and truncated into the dtype; inf and NaN give
    # the minimum of int32/int64 (wrapped for uint8), erfinv outside [-1, 1] gives 0
    lo = np.iinfo(np.int64 if dtype == "int64" else np.int32).min
    x = nd.array([-2, -1, 0, 1, 2, 5], dtype=dtype)
    want = {
        "gamma": [lo, lo, lo, 1, 1, 24],
        "gammaln": [lo, lo, lo, 0, 0, 3],
        "erfinv": [0, lo, 0, lo, 0, 0],
    }
    if dtype == "uint8":  # -2 and -1 wrap to 254 and 255
        want = {
            "gamma": [0, 0, 0, 1, 1, 24],
            "gammaln": [126, 132, 0, 0, 0, 3],
            "erfinv": [0, 0, 0, 0, 0, 0],
        }
    for fn, values in want.items():
        y = getattr(nd, fn)(x)
        assert y.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(y.asnumpy(), np.array(values).astype(dtype))


def test_poles_and_domain_edges_as_mxnet() -> None:
    # mxnet 1.9.1: gamma [inf, nan, nan, inf, inf]; gammaln [inf, inf, inf, 6.8077553e+31];
    # erfinv [inf, -inf, nan]
    g = nd.gamma(nd.array([0, -1, -2, 171, 172])).asnumpy()
    assert g[0] == np.inf and np.isnan(g[1:3]).all() and (g[3:] == np.inf).all()
    lg = nd.gammaln(nd.array([0, -1, -2, 1e30])).asnumpy()
    assert (lg[:3] == np.inf).all()
    np.testing.assert_allclose(lg[3], 6.8077553e31, rtol=1e-7)
    e = nd.erfinv(nd.array([1, -1, 1.5])).asnumpy()
    assert e[0] == np.inf and e[1] == -np.inf and np.isnan(e[2])
