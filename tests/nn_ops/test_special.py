"""The special functions of gradhub-nn-ops (:mod:`gradhub_nn_ops.special`): lgamma, digamma,
polygamma, zeta, erfinv, erfcinv, erfcx, ndtr, ndtri, log_ndtr.

Values against ``scipy.special`` in float64 over wide ranges (skipped without SciPy), identities
that need no SciPy (factorials, Euler's constant, pi^2/6, inverses against ``math.erf``),
derivatives against float64 central differences to order 3, the poles and the edges of the
domains, the errors for bad arguments, dtypes, and the audit of every function to order 3.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest
from gradhub.audit import check_function
from gradhub.registry import REGISTRY

NAMES = (
    "LGamma",
    "Digamma",
    "Polygamma",
    "Zeta",
    "ErfInv",
    "ErfcInv",
    "Erfcx",
    "Ndtr",
    "Ndtri",
    "LogNdtr",
)

EULER_GAMMA = 0.5772156649015329


def _f64(fn: Callable[..., Any], x: Any, /, **attrs: Any) -> np.ndarray:
    """``fn`` on float64 data, as a numpy array."""
    v = gh.Variable(np.asarray(x, dtype=np.float64), need_grad=False)
    return np.asarray(fn(v, **attrs).d)


def _rng() -> np.random.Generator:
    return np.random.default_rng(20261127)


def _assert_matches(got: np.ndarray, want: np.ndarray, rtol: float, atol: float = 0.0) -> None:
    """Equal where ``want`` is not finite (same inf, or both NaN), within rtol/atol elsewhere."""
    finite = np.isfinite(want)
    np.testing.assert_array_equal(got[~finite], want[~finite])
    np.testing.assert_allclose(got[finite], want[finite], rtol=rtol, atol=atol)


# -- against scipy.special (float64) ----------------------------------------------------------


def test_lgamma_matches_scipy_over_wide_ranges() -> None:
    sp = pytest.importorskip("scipy.special")
    rng = _rng()
    x = np.concatenate(
        [
            rng.uniform(0.0, 30.0, 2000),
            rng.uniform(0.5, 2.5, 1000),  # the zeros at 1 and 2
            10.0 ** rng.uniform(-300, 300, 300),
            [0.0, 1.0, 2.0, 3.0, 0.5, 1e-300, np.inf, np.nan, -1.0, -2.0, -50.0],
        ]
    )
    # scipy itself is off by up to 5e-14 near the zeros at 1 and 2 (this kernel: 7e-16, mpmath)
    _assert_matches(_f64(F.lgamma, x), sp.gammaln(x), rtol=1e-13, atol=1e-300)
    # negative: the reflection formula; near its zeros between the poles only absolute accuracy
    xn = -rng.uniform(0.0, 170.0, 2000)
    np.testing.assert_allclose(_f64(F.lgamma, xn), sp.gammaln(xn), rtol=1e-13, atol=1e-14)


def test_digamma_and_polygamma_match_scipy() -> None:
    sp = pytest.importorskip("scipy.special")
    rng = _rng()
    x = np.concatenate([rng.uniform(0.0, 50.0, 2000), 10.0 ** rng.uniform(-200, 200, 300)])
    x = np.concatenate([x, [1.4616321449683622, 1.46, 1.47]])  # the zero of digamma
    _assert_matches(_f64(F.digamma, x), sp.psi(x), rtol=1e-14)
    xs = np.concatenate([x, -rng.uniform(0.0, 50.0, 1000), [0.0, -1.0, -3.0, np.inf, np.nan]])
    np.testing.assert_allclose(_f64(F.digamma, xs), sp.psi(xs), rtol=1e-12, atol=1e-14)
    for n in (1, 2, 3, 5, 10):
        xp_ = np.concatenate([rng.uniform(0.0, 50.0, 1000), 10.0 ** rng.uniform(-30, 20, 200)])
        with np.errstate(over="ignore"):  # scipy's n! * zeta(n + 1, x) for tiny x
            want = sp.polygamma(n, xp_)
        _assert_matches(_f64(F.polygamma, xp_, n=n), want, rtol=1e-13)
        xneg = np.concatenate([-rng.uniform(0.0, 30.0, 500), [0.0, -1.0, -2.0]])
        np.testing.assert_allclose(
            _f64(F.polygamma, xneg, n=n), sp.polygamma(n, xneg), rtol=1e-12, atol=1e-12
        )


@pytest.mark.parametrize("s", [1.1, 1.5, 2.0, 3.0, 4.5, 10.0, 20.0, 40.0])
def test_zeta_matches_scipy(s: float) -> None:
    sp = pytest.importorskip("scipy.special")
    rng = _rng()
    q = np.concatenate([10.0 ** rng.uniform(-5, 8, 2000), [0.0, 1.0, np.inf, np.nan]])
    want = sp.zeta(s, q)
    keep = ~np.isfinite(want) | (np.abs(want) > 1e-300)  # subnormal results lose digits
    _assert_matches(_f64(F.zeta, q[keep], x=s), want[keep], rtol=1e-14)


def test_zeta_with_large_exponents() -> None:
    sp = pytest.importorskip("scipy.special")
    q = 10.0 ** _rng().uniform(-1, 5, 500)
    for s in (60.0, 80.0):
        want = sp.zeta(s, q)
        keep = want > 1e-300
        np.testing.assert_allclose(_f64(F.zeta, q[keep], x=s), want[keep], rtol=1e-14)
    # the first terms dominate: zeta(1000, 1) = 1, zeta(200, 2) = 2^-200 (1 + (2/3)^200 + ...)
    np.testing.assert_array_equal(_f64(F.zeta, [1.0], x=1000.0), [1.0])
    np.testing.assert_allclose(_f64(F.zeta, [2.0], x=200.0), [2.0**-200], rtol=1e-15)
    # polygamma(120, 2) (scipy 1.17); past order 100, negative x gives NaN (no reflection)
    np.testing.assert_allclose(
        _f64(F.polygamma, [2.0], n=120), [-2.516311323061979e162], rtol=1e-13
    )
    assert np.isnan(_f64(F.polygamma, [-1.5], n=120)).all()


def test_zeta_with_negative_q_and_outside_its_domain_as_scipy() -> None:
    sp = pytest.importorskip("scipy.special")
    q = -_rng().uniform(0.0, 10.0, 500)
    for s in (2.0, 3.0, 4.0):
        np.testing.assert_allclose(_f64(F.zeta, q, x=s), sp.zeta(s, q), rtol=1e-12)
    q = np.array([-2.0, -1.0, 0.0, -0.5, 0.5, 2.0])
    for s in (2.0, 2.5, 1.0, 0.5):
        _assert_matches(_f64(F.zeta, q, x=s), sp.zeta(s, q), rtol=1e-14)


def test_inverse_error_functions_match_scipy() -> None:
    sp = pytest.importorskip("scipy.special")
    rng = _rng()
    tail = 10.0 ** rng.uniform(-16, 0, 1000)
    x = np.concatenate([rng.uniform(-1, 1, 3000), 1 - tail, tail - 1])
    x = np.concatenate([x, [0.0, 1.0, -1.0, 1.5, -1.5, np.nan, 1e-300, 0.5, -0.5]])
    _assert_matches(_f64(F.erfinv, x), sp.erfinv(x), rtol=2e-15, atol=1e-300)
    p = np.concatenate([rng.uniform(0, 2, 3000), 10.0 ** rng.uniform(-300, 0, 1000), 2 - tail])
    p = np.concatenate([p, [0.0, 2.0, 1.0, -0.1, 2.1, 0.5, 1.5, np.nan]])
    _assert_matches(_f64(F.erfcinv, p), sp.erfcinv(p), rtol=2e-15, atol=1e-300)
    u = np.concatenate([rng.uniform(0, 1, 3000), 10.0 ** rng.uniform(-300, 0, 1000)])
    u = np.concatenate([u, [0.0, 1.0, 0.5, -0.5, 1.5, np.nan]])
    _assert_matches(_f64(F.ndtri, u), sp.ndtri(u), rtol=2e-15, atol=1e-300)


def test_erfcx_ndtr_log_ndtr_match_scipy() -> None:
    sp = pytest.importorskip("scipy.special")
    rng = _rng()
    x = np.concatenate(
        [rng.uniform(-5, 5, 3000), rng.uniform(0, 50, 1000), 10.0 ** rng.uniform(0, 300, 300)]
    )
    x = np.concatenate([x, [0.0, 2.0, np.inf, np.nan]])
    _assert_matches(_f64(F.erfcx, x), sp.erfcx(x), rtol=2e-15)
    xn = -rng.uniform(0, 26, 1000)
    np.testing.assert_allclose(_f64(F.erfcx, xn), sp.erfcx(xn), rtol=1e-15)
    assert _f64(F.erfcx, [-30.0, -np.inf])[0] == np.inf  # exp(900) overflows, as SciPy
    # ndtr: scipy itself is off by up to x^2 ulps in the far lower tail (the rounding of
    # x / sqrt 2 squared); here exp(-x^2 / 2) is taken from x itself
    x = np.concatenate([rng.uniform(-37, 38, 3000), rng.uniform(-5, 5, 1000)])
    x = np.concatenate([x, [0.0, np.inf, -np.inf, np.nan]])
    _assert_matches(_f64(F.ndtr, x), sp.ndtr(x), rtol=5e-13)
    small = np.abs(x) < 5
    np.testing.assert_allclose(_f64(F.ndtr, x[small]), sp.ndtr(x[small]), rtol=5e-15)
    x = np.concatenate(
        [rng.uniform(-1e3, 40, 3000), rng.uniform(-5, 5, 1000), -(10.0 ** rng.uniform(0, 150, 300))]
    )
    x = np.concatenate([x, [0.0, np.inf, -np.inf, np.nan]])
    _assert_matches(_f64(F.log_ndtr, x), sp.log_ndtr(x), rtol=5e-13, atol=1e-300)
    small = np.abs(x) < 5  # scipy's own error grows as x^2 ulps in both tails
    np.testing.assert_allclose(_f64(F.log_ndtr, x[small]), sp.log_ndtr(x[small]), rtol=5e-15)


# -- identities (no SciPy) ---------------------------------------------------------------------


def test_lgamma_of_integers_is_log_factorial_and_matches_math_lgamma() -> None:
    n = np.arange(1, 60, dtype=np.float64)
    want = [math.log(math.factorial(int(k) - 1)) for k in n]
    np.testing.assert_allclose(_f64(F.lgamma, n), want, rtol=1e-15, atol=0)
    x = np.concatenate([np.linspace(-9.95, 40.0, 997), [1e-8, 1e5, 1e200]])
    x = x[np.abs(x - np.rint(x)) > 1e-3]
    want = np.array([math.lgamma(v) for v in x])
    np.testing.assert_allclose(_f64(F.lgamma, x), want, rtol=1e-13, atol=1e-14)
    assert np.all(_f64(F.lgamma, [0.0, -1.0, -2.0, -100.0]) == np.inf)  # the poles
    # the zeros: relative accuracy (the Taylor series about 1 and 2)
    e = (1.0 + 1e-10) - 1.0  # the representable increment
    got = _f64(F.lgamma, [1.0 + e, 2.0 + 2 * e])
    # lgamma(1 + e) = -gamma e + zeta(2) e^2 / 2 - ...; lgamma(2 + e) = (1 - gamma) e + ...
    want = [
        -EULER_GAMMA * e + math.pi**2 / 12 * e * e,
        (1 - EULER_GAMMA) * 2 * e + 0.3224670334241132 * 4 * e * e,
    ]
    np.testing.assert_allclose(got, want, rtol=1e-15)


def test_digamma_special_values_and_recurrence() -> None:
    got = _f64(F.digamma, [1.0, 0.5, 2.0])
    want = [-EULER_GAMMA, -EULER_GAMMA - 2 * math.log(2.0), 1.0 - EULER_GAMMA]
    np.testing.assert_allclose(got, want, rtol=1e-15)
    x = np.linspace(-7.3, 30.0, 501)
    x = x[np.abs(x - np.rint(x)) > 1e-2]
    # psi(x + 1) = psi(x) + 1/x
    np.testing.assert_allclose(
        _f64(F.digamma, x + 1.0), _f64(F.digamma, x) + 1.0 / x, rtol=1e-13, atol=1e-13
    )
    assert _f64(F.digamma, [0.0])[0] == -np.inf
    assert np.isnan(_f64(F.digamma, [-1.0, -4.0, -np.inf])).all()


def test_polygamma_and_zeta_special_values() -> None:
    pi2_6 = math.pi**2 / 6
    np.testing.assert_allclose(_f64(F.polygamma, [1.0], n=1), [pi2_6], rtol=1e-15)
    np.testing.assert_allclose(_f64(F.zeta, [1.0], x=2.0), [pi2_6], rtol=1e-15)
    np.testing.assert_allclose(_f64(F.zeta, [1.0], x=4.0), [math.pi**4 / 90], rtol=1e-15)
    # Apery's constant, and psi''(1) = -2 zeta(3)
    np.testing.assert_allclose(_f64(F.zeta, [1.0], x=3.0), [1.2020569031595942], rtol=1e-15)
    np.testing.assert_allclose(_f64(F.polygamma, [1.0], n=2), [-2 * 1.2020569031595942], rtol=1e-15)
    # zeta(s, 1/2) = (2^s - 1) zeta(s);  psi'(1/2) = pi^2 / 2
    np.testing.assert_allclose(_f64(F.zeta, [0.5], x=2.0), [3 * pi2_6], rtol=1e-15)
    np.testing.assert_allclose(_f64(F.polygamma, [0.5], n=1), [math.pi**2 / 2], rtol=1e-15)
    # n = 0 is digamma; the recurrence psi^(n)(x + 1) = psi^(n)(x) + (-1)^n n! / x^(n+1)
    x = np.array([-2.7, -0.4, 0.3, 1.7, 6.2])
    np.testing.assert_array_equal(_f64(F.polygamma, x, n=0), _f64(F.digamma, x))
    for n in (1, 2, 4):
        lhs = _f64(F.polygamma, x + 1.0, n=n)
        rhs = _f64(F.polygamma, x, n=n) + (-1) ** n * math.factorial(n) / x ** (n + 1)
        np.testing.assert_allclose(lhs, rhs, rtol=1e-12)
    # zeta(s, q) = q^-s + zeta(s, q + 1), and a direct sum
    q = np.array([0.3, 1.0, 2.5, 40.0])
    for s in (1.5, 2.0, 7.5):
        np.testing.assert_allclose(
            _f64(F.zeta, q, x=s), q**-s + _f64(F.zeta, q + 1.0, x=s), rtol=1e-14
        )
    direct = math.fsum(k**-7.5 for k in range(1, 20000))
    np.testing.assert_allclose(_f64(F.zeta, [1.0], x=7.5), [direct], rtol=1e-15)
    assert np.isnan(_f64(F.zeta, [1.0], x=0.5)).all()  # x < 1: no sum
    assert (_f64(F.zeta, [1.0, 3.0], x=1.0) == np.inf).all()  # the harmonic series


def test_inverse_error_functions_invert_math_erf() -> None:
    y = np.concatenate([np.linspace(-5.8, 5.8, 1001), [1e-300, -1e-20]])
    x = np.array([math.erf(v) for v in y])
    keep = np.abs(x) < 0.5
    np.testing.assert_allclose(_f64(F.erfinv, x[keep]), y[keep], rtol=2e-15)
    # |x| near 1: through erfc (x itself carries only the rounding of erf(y))
    pos = y > 0.5
    p = np.array([math.erfc(v) for v in y[pos]])
    np.testing.assert_allclose(_f64(F.erfcinv, p), y[pos], rtol=2e-15)
    # the upper half by the symmetry erfcinv(2 - p) = -erfcinv(p) (2 - q exact for q in [1, 2])
    q = 2.0 - p
    np.testing.assert_array_equal(_f64(F.erfcinv, q), -_f64(F.erfcinv, 2.0 - q))
    # far tail: erfc(26) = 5.663192408856143e-296 (mpmath)
    np.testing.assert_allclose(_f64(F.erfcinv, [5.663192408856143e-296]), [26.0], rtol=1e-15)
    got = _f64(F.erfinv, [1.0, -1.0, 1.0001, -2.0, 0.0, -0.0])
    np.testing.assert_array_equal(got[:2], [np.inf, -np.inf])
    assert np.isnan(got[2:4]).all() and got[4] == 0.0 and np.signbit(got[5])
    got = _f64(F.erfcinv, [0.0, 2.0, -0.5, 2.5])
    np.testing.assert_array_equal(got[:2], [np.inf, -np.inf])
    assert np.isnan(got[2:]).all()


def test_ndtr_ndtri_log_ndtr_identities() -> None:
    x = np.linspace(-8.0, 8.0, 801)
    want = np.array([0.5 * math.erfc(-v / math.sqrt(2.0)) for v in x])
    np.testing.assert_allclose(_f64(F.ndtr, x), want, rtol=1e-14)
    # the round trip, where ndtr(x) keeps the digits of x (not in the upper tail, near 1)
    low = x < 3.0
    np.testing.assert_allclose(_f64(F.ndtri, _f64(F.ndtr, x[low])), x[low], rtol=1e-13, atol=1e-15)
    lower = x <= 0  # log(ndtr) keeps the digits; above, log1p(-ndtr(-x))
    np.testing.assert_allclose(_f64(F.log_ndtr, x[lower]), np.log(want[lower]), rtol=1e-14)
    upper = np.array([math.log1p(-0.5 * math.erfc(v / math.sqrt(2.0))) for v in x[~lower]])
    np.testing.assert_allclose(_f64(F.log_ndtr, x[~lower]), upper, rtol=1e-13)
    assert _f64(F.ndtri, [0.5])[0] == 0.0 and not np.signbit(_f64(F.ndtri, [0.5])[0])
    np.testing.assert_array_equal(_f64(F.ndtri, [0.0, 1.0]), [-np.inf, np.inf])
    assert np.isnan(_f64(F.ndtri, [-0.1, 1.1])).all()
    # where ndtr underflows, log_ndtr follows the asymptotic series
    x = np.array([-40.0, -200.0, -1e5])
    r = 1.0 / x**2
    series = (
        -0.5 * x**2
        - np.log(-x)
        - 0.5 * math.log(2 * math.pi)
        + np.log1p(-r + 3 * r**2 - 15 * r**3 + 105 * r**4)
    )
    np.testing.assert_allclose(_f64(F.log_ndtr, x), series, rtol=1e-14)
    np.testing.assert_array_equal(_f64(F.log_ndtr, [-np.inf, np.inf]), [-np.inf, 0.0])


def test_erfcx_is_exp_x2_erfc_and_does_not_overflow() -> None:
    x = np.linspace(-5.0, 20.0, 1001)
    want = np.array([math.exp(v * v) * math.erfc(v) for v in x])
    # the rounding of x * x costs exp(x * x) x^2 ulps: 2e-14 up to |x| = 5
    near = np.abs(x) <= 5.0
    np.testing.assert_allclose(_f64(F.erfcx, x[near]), want[near], rtol=2e-14)
    np.testing.assert_allclose(_f64(F.erfcx, x[~near]), want[~near], rtol=1e-13)
    big = np.array([1e3, 1e10, 1e200])
    np.testing.assert_allclose(_f64(F.erfcx, big), 1.0 / (big * math.sqrt(math.pi)), rtol=1e-6)
    assert _f64(F.erfcx, [np.inf])[0] == 0.0


# -- derivatives ---------------------------------------------------------------------------------

#: (function, attrs, points): away from poles and from the tails where differences lose digits
_DERIVATIVE_CASES: list[tuple[str, dict[str, Any], list[float]]] = [
    ("lgamma", {}, [-2.5, -0.6, 0.3, 1.0, 2.0, 4.7]),
    ("digamma", {}, [-1.3, 0.4, 1.46, 3.0]),
    ("polygamma", {"n": 1}, [-0.7, 0.5, 2.2]),
    ("polygamma", {"n": 3}, [-1.6, 0.8, 5.0]),
    ("zeta", {"x": 2.0}, [0.4, 1.0, 3.0]),
    ("zeta", {"x": 3.5}, [0.6, 2.0]),
    ("erfinv", {}, [-0.9, 0.0, 0.3, 0.95]),
    ("erfcinv", {}, [0.05, 1.0, 1.7]),
    ("erfcx", {}, [-1.5, 0.0, 1.5, 2.5, 6.0]),
    ("ndtr", {}, [-3.0, 0.0, 1.2]),
    ("ndtri", {}, [0.02, 0.5, 0.9]),
    ("log_ndtr", {}, [-10.0, -1.0, 0.0, 3.0]),
]


@pytest.mark.parametrize(
    ("name", "attrs", "points"),
    _DERIVATIVE_CASES,
    ids=[f"{n}{a or ''}" for n, a, _ in _DERIVATIVE_CASES],
)
def test_derivatives_to_order_3_against_central_differences(
    name: str, attrs: dict[str, Any], points: list[float]
) -> None:
    fn = getattr(F, name)

    def derivative(k: int, x0: np.ndarray) -> np.ndarray:
        x = gh.Variable(x0.copy())
        g = fn(x, **attrs)
        for _ in range(k):
            (g,) = gh.grad([g.sum()], [x], create_graph=True)
        return np.asarray(g.d)

    x0 = np.array(points, dtype=np.float64)
    for k in (1, 2, 3):
        h = 1e-5 * np.maximum(1.0, np.abs(x0))
        numeric = (derivative(k - 1, x0 + h) - derivative(k - 1, x0 - h)) / (2 * h)
        np.testing.assert_allclose(
            derivative(k, x0), numeric, rtol=1e-6, atol=1e-7, err_msg=f"{name} order {k}"
        )


@pytest.mark.parametrize("name", ["lgamma", "digamma", "erfinv", "erfcx", "ndtri", "log_ndtr"])
def test_gradcheck_order_3(name: str) -> None:
    x = {"erfinv": [-0.5, 0.2, 0.7], "ndtri": [0.1, 0.6, 0.8]}.get(name, [0.7, 1.3, 2.6])
    assert gh.testing.gradcheck(getattr(F, name), [np.array(x)], order=3)


def test_gradcheck_order_3_with_attributes() -> None:
    x = np.array([0.6, 1.4, 3.1])
    assert gh.testing.gradcheck(lambda v: F.polygamma(v, n=2), [x], order=3)
    assert gh.testing.gradcheck(lambda v: F.zeta(v, x=2.5), [x], order=3)


def test_first_derivatives_are_the_registered_functions() -> None:
    x = gh.Variable(np.array([0.3, 1.7, 4.0]))
    (g,) = gh.grad([F.lgamma(x).sum()], [x])
    np.testing.assert_array_equal(g.d, F.digamma(x).d)
    (g,) = gh.grad([F.digamma(x).sum()], [x])
    np.testing.assert_array_equal(g.d, F.polygamma(x, n=1).d)
    (g,) = gh.grad([F.polygamma(x, n=2).sum()], [x])
    np.testing.assert_array_equal(g.d, F.polygamma(x, n=3).d)
    (g,) = gh.grad([F.zeta(x, x=2.0).sum()], [x])
    np.testing.assert_allclose(g.d, -2.0 * F.zeta(x, x=3.0).d, rtol=1e-15)


# -- dtypes, errors, audit -----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["lgamma", "digamma", "erfinv", "erfcx", "ndtr", "log_ndtr"])
def test_float32_in_float32_out_close_to_float64(name: str) -> None:
    x = np.array([0.1, 0.45, 0.9], dtype=np.float32)
    y32 = getattr(F, name)(gh.Variable(x)).d
    y64 = getattr(F, name)(gh.Variable(x.astype(np.float64))).d
    assert y32.dtype == np.float32
    np.testing.assert_allclose(y32, y64.astype(np.float32), rtol=1e-7)


def test_integer_input_is_computed_in_floating_point() -> None:
    y = F.lgamma(gh.Variable(np.array([1, 5, 10], dtype=np.int64), need_grad=False))
    assert y.dtype == np.float64
    np.testing.assert_allclose(y.d, [0.0, math.log(24), math.log(362880)], rtol=1e-15)


def test_bad_attributes_raise_naming_the_function_and_the_argument() -> None:
    x = gh.Variable([1.0])
    with pytest.raises(ValueError, match=r"polygamma\(\): argument 'n' must be >= 0"):
        F.polygamma(x, n=-1)
    with pytest.raises(TypeError, match=r"polygamma\(\): argument 'n' must be an int"):
        F.polygamma(x, n=1.5)
    with pytest.raises(TypeError, match=r"polygamma\(\): argument 'n' must be an int"):
        F.polygamma(x, n=True)
    with pytest.raises(TypeError, match=r"zeta\(\): argument 'x' .*must be a real number"):
        F.zeta(x, x=gh.Variable([2.0]))


@pytest.mark.parametrize("name", NAMES)
def test_audit_to_order_3(name: str) -> None:
    result = check_function(REGISTRY.get(name), "cpu", order=3, record=False)
    assert result.ok, result.error
    assert result.verified == 3
