"""gradhub-nn-ops: special functions (log-gamma, digamma, polygamma, Hurwitz zeta, the inverse
and scaled error functions, the normal distribution function and its inverse and logarithm).

Every kernel is written against the array module ``xp`` only (no SciPy, no scalar ``math`` loop),
so it runs on numpy and on CuPy alike. Floating inputs of other precisions are computed in float64
and the result cast back (float32 in, float32 out); integer and bool inputs are converted first
(:func:`gradhub_nn_ops.math.float_input`). In float64 the kernels agree with
``scipy.special`` (and mpmath) to about 1e-15 relative, 1e-13 at worst, where the function is
well conditioned (see each docstring and ``tests/nn_ops/test_special.py``).

The methods:

* ``lgamma``, ``digamma``: the argument shifted to ``z >= 10`` by the recurrence, then the
  Stirling series; Taylor series about their zeros (lgamma: 1 and 2, over [0.5, 2.5), reached
  by the recurrence down from below 10; digamma: 1.4616...), so that the relative accuracy holds
  there too; the reflection formula below 0.5 (poles: ``inf`` for lgamma, ``-inf`` at 0 and
  ``nan`` at the negative integers for digamma, as SciPy);
* ``zeta(q, x)`` (Hurwitz, :math:`\\sum_k (q + k)^{-x}`): Euler-Maclaurin summation, the number
  of direct terms chosen from ``x``; ``polygamma(x, n)`` is ``(-1)^{n+1} n!`` times the
  Hurwitz zeta of exponent ``n + 1`` at ``x`` for ``n >= 1``, with the reflection formula
  (the derivatives of ``cot``) for negative ``x``;
* ``erfcx`` (:math:`e^{x^2}\\operatorname{erfc} x`): a Chebyshev expansion on ``[0, 2]``, the
  continued fraction above (no overflow), ``2 e^{x^2} - erfcx(-x)`` below 0; ``erfc``,
  ``ndtr`` and ``log_ndtr`` are built on it;
* ``erfinv``, ``erfcinv``, ``ndtri``: Giles' (2010) approximation or the asymptotic form as the
  initial guess, then Halley steps on ``erf`` (small arguments) or on ``erfc`` written with
  ``erfcx`` (tails, accurate down to the smallest normal number).

Each backward rule is written with registered functions (``lgamma' = digamma``,
``digamma' = polygamma(1)``, ``polygamma(n)' = polygamma(n + 1)``, ...), so every derivative
order is available.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from functools import cache
from typing import Any

import numpy as np
from gradhub import Sample
from gradhub.builtin.samples import unary_samples
from gradhub.ops import call
from gradhub.registry import SampleFn

from .math import VARIABLE_MATH, Elementwise, _erf, float_input, is_scalar

_PI = math.pi
_SQRT_PI = math.sqrt(math.pi)
_HALF_SQRT_PI = _SQRT_PI / 2.0
_TWO_OVER_SQRT_PI = 2.0 / _SQRT_PI
_SQRT2 = math.sqrt(2.0)
_INV_SQRT2 = 1.0 / math.sqrt(2.0)
_SQRT_2PI = math.sqrt(2.0 * math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)

#: Bernoulli numbers B_2, B_4, ..., B_24, as (numerator, denominator)
_BERNOULLI = (
    (1, 6),
    (-1, 30),
    (1, 42),
    (-1, 30),
    (5, 66),
    (-691, 2730),
    (7, 6),
    (-3617, 510),
    (43867, 798),
    (-174611, 330),
    (854513, 138),
    (-236364091, 2730),
)

#: Stirling series of lgamma: B_2k / (2k (2k - 1)), the coefficients of z^(1 - 2k)
_LGAMMA_SERIES = tuple(n / (d * 2 * k * (2 * k - 1)) for k, (n, d) in enumerate(_BERNOULLI[:9], 1))
#: asymptotic series of digamma: B_2k / (2k), the coefficients of z^(-2k)
_DIGAMMA_SERIES = tuple(n / (d * 2 * k) for k, (n, d) in enumerate(_BERNOULLI[:9], 1))
#: the recurrence shifts the argument up to this value before the series
_SHIFT_TO = 10.0
#: (zeta(k) - 1) / k for k = 2..30 (mpmath, 40 digits): lgamma(2 + e) = (1 - gamma) e +
#: sum_k (-1)^k (zeta(k) - 1) / k e^k (Abramowitz and Stegun 6.1.33), for |e| <= 1/2
_LGAMMA_NEAR_2 = (
    0.3224670334241132,
    0.0673523010531981,
    0.020580808427784546,
    0.007385551028673986,
    0.0028905103307415234,
    0.001192753911703261,
    0.0005096695247430425,
    0.00022315475845357939,
    9.945751278180853e-05,
    4.492623673813314e-05,
    2.050721277567069e-05,
    9.439488275268397e-06,
    4.374866789907488e-06,
    2.039215753801366e-06,
    9.55141213040742e-07,
    4.492469198764566e-07,
    2.1207184805554665e-07,
    1.0043224823968099e-07,
    4.7698101693639804e-08,
    2.2711094608943164e-08,
    1.0838659214896955e-08,
    5.183475041970047e-09,
    2.4836745438024785e-09,
    1.1921401405860912e-09,
    5.731367241678862e-10,
    2.7595228851242334e-10,
    1.330476437424449e-10,
    6.4229645638381e-11,
    3.1044247747322276e-11,
)
_EULER_GAMMA = 0.5772156649015329
#: the positive zero of digamma, as a sum of two doubles, and the Taylor coefficients there,
#: psi^(k)(x0) / k! = (-1)^(k+1) zeta(k + 1, x0) for k = 1..29 (mpmath, 50 digits)
_DIGAMMA_ZERO = (1.4616321449683622, 9.549995429965697e-17)
_DIGAMMA_NEAR_ZERO = (
    0.9676722454476212,
    -0.4427631689835921,
    0.258499760955651,
    -0.16394270544240652,
    0.10782405069126237,
    -0.07219956125645471,
    0.04880428816414311,
    -0.03316112647484736,
    0.022597648232218104,
    -0.01542476590494896,
    0.010538791616612175,
    -0.007204534386356869,
    0.004926781395729853,
    -0.003369801655439328,
    0.002305126326734928,
    -0.0015769367714301972,
    0.0010788252019162967,
    -0.0007380709389960052,
    0.000504953265834602,
    -0.0003454680251063077,
    0.00023635601564027053,
    -0.00016170622091974803,
    0.0001106337276874741,
    -7.569179582195066e-05,
    5.178575795222081e-05,
    -3.5430070947659604e-05,
    2.424006611860132e-05,
    -1.6584242271854135e-05,
    1.134638458466385e-05,
)
#: the interval around the zero where the Taylor series is used (|x - x0| <= 0.3)
_DIGAMMA_TAYLOR = (1.1616321449683622, 1.7616321449683622)

#: Chebyshev coefficients of erfcx on [0, 2] (in t = x - 1), computed with mpmath at 40 digits;
#: the first one left out is below 6e-19
_ERFCX_CHEB = (
    0.5213608704996062,
    -0.3447707454725235,
    0.09975977926820097,
    -0.026063665256478758,
    0.00626846349431901,
    -0.001406122385887065,
    0.00029698557246549,
    -5.948555390106724e-05,
    1.136296076113552e-05,
    -2.079407863414776e-06,
    3.6590821201669714e-07,
    -6.210726136362159e-08,
    1.0195316699270051e-08,
    -1.622322780246961e-09,
    2.5073406746662083e-10,
    -3.7703813593742715e-11,
    5.5248768982320525e-12,
    -7.89991297902184e-13,
    1.1036213151407695e-13,
    -1.50799316325038e-14,
    2.0174311859216233e-15,
    -2.6449521072902544e-16,
    3.4011233662469575e-17,
    -4.29287736642484e-18,
)
#: erfcx by the continued fraction from here up (50 terms: 4e-16 at 2)
_ERFCX_CF_FROM = 2.0
_ERFCX_CF_TERMS = 50

#: Giles (2010), "Approximating the erfinv function": w = -log((1 - x)(1 + x)); w < 5 ...
_GILES_CENTRAL = (
    2.81022636e-08,
    3.43273939e-07,
    -3.5233877e-06,
    -4.39150654e-06,
    0.00021858087,
    -0.00125372503,
    -0.00417768164,
    0.246640727,
    1.50140941,
)
#: ... and 5 <= w (in sqrt(w) - 3), used here up to w = 16 (the asymptotic form beyond)
_GILES_TAIL = (
    -0.000200214257,
    0.000100950558,
    0.00134934322,
    -0.00367342844,
    0.00573950773,
    -0.0076224613,
    0.00943887047,
    1.00167406,
    2.83297682,
)
_GILES_TAIL_MAX_W = 16.0


def _horner(xp: Any, coeffs: tuple[float, ...], t: Any) -> Any:
    """The polynomial with ``coeffs`` (highest degree first) at the array ``t``."""
    acc = xp.full_like(t, coeffs[0])
    for c in coeffs[1:]:
        acc = acc * t + c
    return acc


def _special_kernel(kernel: Callable[..., Any]) -> Callable[..., Any]:
    """The kernel ``kernel(xp, x, **attrs)`` (written for float64) of a special function: integer
    and bool ``x`` converted by :func:`float_input`, other floating dtypes computed in float64
    and cast back; numpy's warnings for the infinities and NaNs the kernels produce on purpose
    (poles, values outside the domain) are silenced."""

    def run(xp: Any, x: Any, /, **attrs: Any) -> Any:
        x = float_input(x)
        dtype = x.dtype
        with np.errstate(all="ignore"):
            if dtype == np.float64:
                return kernel(xp, x, **attrs)
            return kernel(xp, x.astype(np.float64), **attrs).astype(dtype)

    run.__name__ = run.__qualname__ = kernel.__name__
    run.__doc__ = kernel.__doc__
    return run


# -- lgamma, digamma -----------------------------------------------------------------------------


def _shifted(xp: Any, x: Any, add: Callable[[Any, Any], Any], start: Any) -> tuple[Any, Any]:
    """``x`` (>= 0.5) moved up to ``z >= 10`` by steps of 1: ``(z, acc)`` where ``acc`` folds
    ``add(acc, x + k)`` over the steps taken (at most 10)."""
    z = x
    acc = start
    for _ in range(int(_SHIFT_TO)):
        small = z < _SHIFT_TO
        acc = xp.where(small, add(acc, z), acc)
        z = xp.where(small, z + 1.0, z)
    return z, acc


def _lgamma_pos(xp: Any, x: Any) -> Any:
    """lgamma for ``x >= 0.5``: Stirling's series from 10 up; on [0.5, 2.5) the Taylor series
    about 1 and 2, which keeps the relative accuracy at the zeros (lgamma(1) = lgamma(2) = 0);
    on [2.5, 10) the series about 2 after the recurrence down."""
    z, prod = _shifted(xp, x, lambda a, v: a * v, xp.ones_like(x))
    r = 1.0 / z
    series = r * _horner(xp, _LGAMMA_SERIES[::-1], r * r)
    far = (z - 0.5) * xp.log(z) - z + _HALF_LOG_2PI + series - xp.log(prod)
    below = x < 1.5
    e = xp.clip(xp.where(below, x - 1.0, x - 2.0), -0.5, 0.5)
    signs = tuple(c if k % 2 == 0 else -c for k, c in enumerate(_LGAMMA_NEAR_2, 2))
    near2 = e * ((1.0 - _EULER_GAMMA) + e * _horner(xp, signs[::-1], e))
    near = xp.where(below, near2 - xp.log1p(e), near2)
    # [2.5, 10): down to [1.5, 2.5) by the recurrence (a sum of positive logarithms, where the
    # shift up would subtract two logarithms of about 13)
    mid = xp.where((x >= 2.5) & (x < _SHIFT_TO), x, 2.0)
    prod = xp.ones_like(x)
    for _ in range(int(_SHIFT_TO) - 2):
        big = mid >= 2.5
        mid = xp.where(big, mid - 1.0, mid)
        prod = xp.where(big, prod * mid, prod)
    e2 = mid - 2.0
    down = e2 * ((1.0 - _EULER_GAMMA) + e2 * _horner(xp, signs[::-1], e2)) + xp.log(prod)
    y = xp.where((x >= 2.5) & (x < _SHIFT_TO), down, far)
    return xp.where((x >= 0.5) & (x < 2.5), near, y)


def _sin_pi_frac(xp: Any, x: Any) -> tuple[Any, Any]:
    """``(sin(pi r), cos(pi r))`` with ``r = x - rint(x)``, exact reduction (the signs are those
    of ``sin(pi x)`` up to ``(-1)^rint(x)``, which cancels in cot and in ``|sin|``)."""
    r = x - xp.rint(x)
    # cos(pi r) as sin(pi (1/2 - |r|)): exactly 0 at the half-integers
    return xp.sin(_PI * r), xp.sin(_PI * (0.5 - xp.abs(r)))


def _lgamma(xp: Any, x: Any) -> Any:
    """log|Gamma(x)|; the reflection formula below 0.5, ``inf`` at the poles."""
    refl = x < 0.5
    t = xp.where(refl, 1.0 - x, x)
    lg = _lgamma_pos(xp, t)
    s, _ = _sin_pi_frac(xp, x)
    reflected = xp.log(_PI / xp.abs(s)) - lg
    y = xp.where(refl, reflected, lg)
    return xp.where(xp.isinf(x), xp.inf, y)


def _digamma_pos(xp: Any, x: Any) -> Any:
    """digamma for ``x >= 0.5``: recurrence to ``z >= 10``, then the asymptotic series."""
    z, acc = _shifted(xp, x, lambda a, v: a + 1.0 / v, xp.zeros_like(x))
    r2 = 1.0 / (z * z)
    series = r2 * _horner(xp, _DIGAMMA_SERIES[::-1], r2)
    far = xp.log(z) - 0.5 / z - series - acc
    # near the zero x0 = 1.46163...: the Taylor series, for the relative accuracy there
    lo, hi = _DIGAMMA_TAYLOR
    e = (xp.clip(x, lo, hi) - _DIGAMMA_ZERO[0]) - _DIGAMMA_ZERO[1]
    near = e * _horner(xp, _DIGAMMA_NEAR_ZERO[::-1], e)
    return xp.where((x >= lo) & (x <= hi), near, far)


def _digamma(xp: Any, x: Any) -> Any:
    """digamma(x) = d/dx lgamma(x); ``-inf`` at 0, ``nan`` at the negative integers."""
    refl = x < 0.5
    t = xp.where(refl, 1.0 - x, x)
    d = _digamma_pos(xp, t)
    s, c = _sin_pi_frac(xp, x)
    y = xp.where(refl, d - _PI * c / s, d)
    y = xp.where((x < 0) & (x == xp.rint(x)), xp.nan, y)
    return xp.where(x == -xp.inf, xp.nan, y)


# -- Hurwitz zeta, polygamma ---------------------------------------------------------------------


def _zeta_plan(s: float) -> tuple[int, tuple[float, ...]]:
    """For the exponent ``s``: the number of terms summed directly and the coefficients
    ``B_2j / (2j)! * s (s + 1) ... (s + 2j - 2)`` of the Euler-Maclaurin correction, highest
    first (the terms shrink at least 4 times each for this number of direct terms)."""
    # ceil(s) + 12 terms up to s = 52; 64 above: then either the terms past the 64th are below
    # the rounding of the sum, or q > 1.6 s and the correction converges as well
    n_direct = min(max(10, math.ceil(s) + 12), 64)
    coeffs = []
    poch = s
    for j, (num, den) in enumerate(_BERNOULLI, 1):
        coeffs.append(num / (den * math.factorial(2 * j)) * poch)
        poch *= (s + 2 * j - 1) * (s + 2 * j)
    return n_direct, tuple(coeffs[::-1])


def _hurwitz_pos(xp: Any, s: float, q: Any) -> Any:
    """Hurwitz zeta(s, q) for ``s > 1`` and ``q >= 0`` by Euler-Maclaurin summation."""
    n_direct, coeffs = _zeta_plan(s)
    total = xp.zeros_like(q)
    for k in range(n_direct):
        total = total + (q + float(k)) ** -s
    a = q + float(n_direct)
    inv = 1.0 / a
    a_s = a**-s
    tail = a * a_s / (s - 1.0) + 0.5 * a_s + a_s * inv * _horner(xp, coeffs, inv * inv)
    return xp.where(q == xp.inf, 0.0, total + tail)


@cache
def _cot_derivative_poly(n: int) -> tuple[float, ...]:
    """The coefficients (highest first) of ``P_n`` with ``d^n/dx^n cot(pi x) = pi^n P_n(cot(pi
    x))``: ``P_0(c) = c``, ``P_{k+1}(c) = -(1 + c^2) P_k'(c)``."""
    p = [0, 1]  # lowest degree first
    for _ in range(n):
        d = [i * p[i] for i in range(1, len(p))] or [0]
        out = [0] * (len(d) + 2)
        for i, v in enumerate(d):
            out[i] -= v
            out[i + 2] -= v
        p = out
    while len(p) > 1 and p[-1] == 0:
        p.pop()
    return tuple(float(v) for v in reversed(p))


#: the largest order whose reflection formula (for x < 0) is computed; NaN there above
_REFLECTION_MAX_ORDER = 100


def _polygamma_impl(xp: Any, x: Any, n: int) -> Any:
    """polygamma(n, x) on float64 ``x`` for an integer ``n >= 0``."""
    if n == 0:
        return _digamma(xp, x)
    refl = x < 0
    t = xp.where(refl, 1.0 - x, x)
    fac = float(math.factorial(n)) if n <= 170 else math.inf
    pos = (-1.0) ** (n + 1) * fac * _hurwitz_pos(xp, float(n + 1), t)
    if n > _REFLECTION_MAX_ORDER:
        # the polynomial of the reflection formula is not computed (its coefficients leave
        # float64's range): NaN for x < 0
        y = xp.where(refl, xp.nan, pos)
    else:
        s, c = _sin_pi_frac(xp, x)
        cot = c / s
        poly = _cot_derivative_poly(n)
        reflected = (-1.0) ** n * pos - _PI ** (n + 1) * _horner(xp, poly, cot)
        y = xp.where(refl, reflected, pos)
    return xp.where(x == -xp.inf, xp.nan, y)


def _check_order(fname: str, n: Any) -> int:
    if not (isinstance(n, (int, np.integer)) and not isinstance(n, (bool, np.bool_))):
        raise TypeError(f"{fname}(): argument 'n' must be an int, got {n!r}")
    if n < 0:
        raise ValueError(f"{fname}(): argument 'n' must be >= 0, got {n}")
    return int(n)


def _polygamma(xp: Any, x: Any, n: int = 1) -> Any:
    """The n-th derivative of digamma."""
    return _polygamma_impl(xp, x, _check_order("polygamma", n))


def _check_exponent(x: Any) -> float:
    if not is_scalar(x):
        raise TypeError(f"zeta(): argument 'x' (the exponent) must be a real number, got {x!r}")
    return float(x)


def _zeta(xp: Any, q: Any, x: float = 2.0) -> Any:
    """Hurwitz zeta(x, q) = sum_k (q + k)^(-x), elementwise in ``q``, for a number ``x``."""
    s = _check_exponent(x)
    if math.isnan(s) or s < 1.0:
        return xp.full(q.shape, xp.nan, dtype=q.dtype)
    if s == 1.0:
        return xp.where(xp.isnan(q), xp.nan, xp.inf).astype(q.dtype)
    if math.isinf(s):
        # (q + k)^-inf: 1 for q = 1 (k = 0), 0 above, inf below (0 < q < 1)
        y = xp.where(q > 1.0, 0.0, xp.where(q == 1.0, 1.0, xp.inf))
        return xp.where((q <= 0) | xp.isnan(q), xp.nan, y)
    neg = q < 0
    pos = _hurwitz_pos(xp, s, xp.where(neg, 1.0, q))
    if s == math.floor(s) and s <= _REFLECTION_MAX_ORDER + 1 and bool(neg.any()):
        # negative q: the terms are defined for an integer exponent; through polygamma
        n = int(s) - 1
        fac = float(math.factorial(n)) if n <= 170 else math.inf
        negative = (-1.0) ** (n + 1) * _polygamma_impl(xp, xp.where(neg, q, -0.5), n) / fac
    else:
        # (q + k)^-x is not real (or, past the reflection's largest order, not computed)
        negative = xp.nan
    y = xp.where(neg, negative, pos)
    return xp.where(neg & (q == xp.rint(q)), xp.inf, y)


# -- the error-function family --------------------------------------------------------------------


def _erfcx_pos(xp: Any, a: Any) -> Any:
    """erfcx(a) = exp(a^2) erfc(a) for ``a >= 0``."""
    t = xp.minimum(a, _ERFCX_CF_FROM) - 1.0
    b1 = xp.zeros_like(t)
    b2 = xp.zeros_like(t)
    two_t = 2.0 * t
    for c in _ERFCX_CHEB[:0:-1]:
        b1, b2 = two_t * b1 - b2 + c, b1
    cheb = t * b1 - b2 + _ERFCX_CHEB[0]
    c = xp.maximum(a, _ERFCX_CF_FROM)
    f = c
    for k in range(_ERFCX_CF_TERMS, 0, -1):
        f = c + (k / 2.0) / f
    cf = 1.0 / (_SQRT_PI * f)
    return xp.where(a < _ERFCX_CF_FROM, cheb, cf)


def _erfcx(xp: Any, x: Any) -> Any:
    """The scaled complementary error function exp(x^2) erfc(x)."""
    a = xp.abs(x)
    e = _erfcx_pos(xp, a)
    return xp.where(x < 0, 2.0 * xp.exp(a * a) - e, e)


def _exp_neg_sq(xp: Any, x: Any, scale: float) -> Any:
    """``exp(-scale x^2)`` without the rounding error of ``x^2`` (which would cost ``x^2`` ulps
    in the tails): ``x`` split into 26 high bits and the rest (Veltkamp), so that ``xh^2`` is
    exact; ``scale`` is 1 or 1/2 (exact)."""
    x = xp.minimum(xp.abs(x), 1e5)  # exp underflows long before; keeps the split finite
    c = 134217729.0 * x  # 2^27 + 1
    xh = c - (c - x)
    xl = x - xh
    return xp.exp(-scale * (xh * xh)) * xp.exp(-scale * (xl * (2.0 * xh + xl)))


def _erfc(xp: Any, x: Any) -> Any:
    """erfc(x) = 1 - erf(x), accurate (relative) in the upper tail."""
    a = xp.abs(x)
    e = _exp_neg_sq(xp, a, 1.0) * _erfcx_pos(xp, a)
    return xp.where(x < 0, 2.0 - e, e)


def _ndtr(xp: Any, x: Any) -> Any:
    """The standard normal distribution function, erfc(-x / sqrt(2)) / 2, with
    ``exp(-x^2 / 2)`` taken from ``x`` itself (not from the rounded ``x / sqrt 2``)."""
    lower = 0.5 * _exp_neg_sq(xp, x, 0.5) * _erfcx_pos(xp, xp.abs(x) * _INV_SQRT2)
    return xp.where(x <= 0, lower, 1.0 - lower)


def _log_ndtr(xp: Any, x: Any) -> Any:
    """log(ndtr(x)): ``log(erfcx(-x / sqrt 2) / 2) - x^2 / 2`` for ``x <= 0`` (no underflow),
    ``log1p(-ndtr(-x))`` above."""
    z = xp.maximum(x * -_INV_SQRT2, 0.0)
    lower = xp.log(0.5 * _erfcx_pos(xp, z)) - 0.5 * (x * x)
    upper = xp.log1p(-_ndtr(xp, -xp.maximum(x, 0.0)))
    return xp.where(x <= 0, lower, upper)


def _inv_erf_small(xp: Any, a: Any) -> Any:
    """y >= 0 with erf(y) = a, for ``0 <= a <= 0.5``: Giles' guess and two Halley steps."""
    w = -xp.log1p(-(a * a))
    y = a * _horner(xp, _GILES_CENTRAL, w - 2.5)
    for _ in range(2):
        h = (_erf(xp, y) - a) * _HALF_SQRT_PI * xp.exp(y * y)
        y = y - h / (1.0 + y * h)
    return y


def _inv_erfc_small(xp: Any, p: Any) -> Any:
    """y >= 0 with erfc(y) = p, for ``0 < p <= 0.5``: Giles' guess (asymptotic in the far tail)
    and three Halley steps on erfc(y) = exp(-y^2) erfcx(y), with the residual scaled by
    exp(y^2) (no underflow)."""
    log_p = xp.log(p)
    w = -(log_p + xp.log(2.0 - p))
    wc = xp.minimum(w, 5.0)
    central = (1.0 - p) * _horner(xp, _GILES_CENTRAL, wc - 2.5)
    wt = xp.minimum(xp.maximum(w, 5.0), _GILES_TAIL_MAX_W)
    tail = (1.0 - p) * _horner(xp, _GILES_TAIL, xp.sqrt(wt) - 3.0)
    # far tail: y = sqrt(-log(p sqrt(pi) y)), iterated from sqrt(-log p)
    far = xp.sqrt(xp.maximum(-log_p, 1.0))
    for _ in range(3):
        far = xp.sqrt(-(log_p + math.log(_SQRT_PI)) - xp.log(far))
    y = xp.where(w < 5.0, central, xp.where(w < _GILES_TAIL_MAX_W, tail, far))
    for _ in range(3):
        h = -_HALF_SQRT_PI * (_erfcx_pos(xp, y) - xp.exp(log_p + y * y))
        y = y - h / (1.0 + y * h)
    return y


def _erfinv(xp: Any, x: Any) -> Any:
    """The inverse of erf on [-1, 1] (``+-inf`` at +-1, ``nan`` outside)."""
    a = xp.abs(x)
    small = _inv_erf_small(xp, xp.minimum(a, 0.5))
    tail = _inv_erfc_small(xp, xp.minimum(xp.maximum(1.0 - a, 1e-300), 0.5))
    y = xp.where(a <= 0.5, small, tail)
    y = xp.where(a == 1.0, xp.inf, y)
    y = xp.where(a > 1.0, xp.nan, y)
    return xp.copysign(y, x)


def _erfcinv(xp: Any, p: Any) -> Any:
    """The inverse of erfc on [0, 2] (``inf`` at 0, ``-inf`` at 2, ``nan`` outside)."""
    upper = p > 1.0
    q = xp.where(upper, 2.0 - p, p)  # exact for p in [1, 2]
    small = _inv_erf_small(xp, xp.minimum(xp.maximum(1.0 - q, 0.0), 0.5))
    tail = _inv_erfc_small(xp, xp.minimum(xp.maximum(q, 5e-324), 0.5))
    y = xp.where(q >= 0.5, small, tail)
    y = xp.where(q == 0.0, xp.inf, y)
    y = xp.where(upper, -y, y)
    return xp.where((p < 0.0) | (p > 2.0), xp.nan, y)


def _ndtri(xp: Any, p: Any) -> Any:
    """The inverse of ndtr on [0, 1]: -sqrt(2) erfcinv(2 p)."""
    return (-_SQRT2) * _erfcinv(xp, 2.0 * p) + 0.0  # + 0.0: ndtri(0.5) = +0.0


#: the float64 kernels by function name (for the derivative formulas on arrays)
_KERNELS: dict[str, Callable[..., Any]] = {}


def _apply(F: Any, name: str, x: Any, /, **attrs: Any) -> Any:
    """``name(x, **attrs)``: the registered function on Variables (``F`` is
    :data:`~gradhub_nn_ops.math.VARIABLE_MATH`), its kernel on arrays (``F`` is ``xp``), so that
    a derivative formula is written once for both rules."""
    if F is VARIABLE_MATH:
        return call(name, x, **attrs)
    return _KERNELS[name](F, x, **attrs)


# -- derivative formulas (F: VARIABLE_MATH on Variables, or xp on arrays) -----------------------


def _d_lgamma(F: Any, g: Any, x: Any, y: Any) -> Any:
    return g * _apply(F, "Digamma", x)


def _d_digamma(F: Any, g: Any, x: Any, y: Any) -> Any:
    return g * _apply(F, "Polygamma", x, n=1)


def _d_polygamma(F: Any, g: Any, x: Any, y: Any, n: int = 1) -> Any:
    return g * _apply(F, "Polygamma", x, n=n + 1)


def _d_zeta(F: Any, g: Any, q: Any, y: Any, x: float = 2.0) -> Any:
    # d/dq zeta(x, q) = -x zeta(x + 1, q)
    return g * (_apply(F, "Zeta", q, x=float(x) + 1.0) * -float(x))


def _d_erfinv(F: Any, g: Any, x: Any, y: Any) -> Any:
    return g * (F.exp(y * y) * _HALF_SQRT_PI)


def _d_erfcinv(F: Any, g: Any, x: Any, y: Any) -> Any:
    return g * (F.exp(y * y) * -_HALF_SQRT_PI)


def _d_erfcx(F: Any, g: Any, x: Any, y: Any) -> Any:
    return g * (x * y * 2.0 - _TWO_OVER_SQRT_PI)


def _d_ndtr(F: Any, g: Any, x: Any, y: Any) -> Any:
    return g * (F.exp(x * x * -0.5) * _INV_SQRT_2PI)


def _d_ndtri(F: Any, g: Any, x: Any, y: Any) -> Any:
    return g * (F.exp(y * y * 0.5) * _SQRT_2PI)


def _d_log_ndtr(F: Any, g: Any, x: Any, y: Any) -> Any:
    return g * (_SQRT_2_OVER_PI / _apply(F, "Erfcx", x * -_INV_SQRT2))


# -- numpy references (float64, scalar Python: independent of the kernels) ----------------------


def _vectorized(fn: Callable[..., float]) -> Callable[..., np.ndarray]:
    def ref(x: np.ndarray, /, **attrs: Any) -> np.ndarray:
        v = np.vectorize(lambda t: fn(float(t), **attrs), otypes=[np.float64])
        return np.asarray(v(np.asarray(x, dtype=np.float64)))

    return ref


def _ref_digamma(x: float) -> float:
    if x <= 0 and x == math.floor(x):
        return math.nan
    if x < 0.5:
        return _ref_digamma(1.0 - x) - math.pi / math.tan(math.pi * x)
    acc = 0.0
    while x < 20.0:
        acc += 1.0 / x
        x += 1.0
    r2 = 1.0 / (x * x)
    series = r2 / 12 - r2**2 / 120 + r2**3 / 252 - r2**4 / 240 + r2**5 / 132
    return math.log(x) - 0.5 / x - series - acc


def _ref_zeta(s: float, q: float) -> float:
    if q < 0:  # an integer s only (the samples): sum the negative terms directly
        head = 0.0
        while q < 0:
            head += q**-s
            q += 1.0
        return head + _ref_zeta(s, q)
    n = 40
    head = math.fsum((q + k) ** -s for k in range(n))
    a = q + n
    return (
        head
        + a ** (1 - s) / (s - 1)
        + 0.5 * a**-s
        + s * a ** (-s - 1) / 12
        - s * (s + 1) * (s + 2) * a ** (-s - 3) / 720
    )


def _ref_polygamma(x: float, n: int = 1) -> float:
    if n == 0:
        return _ref_digamma(x)
    return (-1.0) ** (n + 1) * math.factorial(n) * _ref_zeta(n + 1.0, x)


def _bisect(fn: Callable[[float], float], target: float, lo: float, hi: float) -> float:
    """The root of the increasing ``fn(y) = target`` in [lo, hi] (or of the decreasing one)."""
    increasing = fn(hi) > fn(lo)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if (fn(mid) < target) == increasing:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def _ref_erfcx(x: float) -> float:
    if x < 25.0:
        return math.exp(x * x) * math.erfc(x)
    r = 1.0 / (x * x)
    return (1.0 - r / 2 + 3 * r * r / 4 - 15 * r**3 / 8) / (x * _SQRT_PI)


def _ref_ndtr(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def _ref_log_ndtr(x: float) -> float:
    if x > -30.0:
        return math.log(_ref_ndtr(x))
    r = 1.0 / (x * x)
    return -0.5 * x * x - math.log(-x) - _HALF_LOG_2PI + math.log(1 - r + 3 * r * r - 15 * r**3)


_REFERENCES: dict[str, Callable[..., Any]] = {
    "LGamma": _vectorized(math.lgamma),
    "Digamma": _vectorized(_ref_digamma),
    "Polygamma": _vectorized(_ref_polygamma),
    "Zeta": _vectorized(lambda q, x=2.0: _ref_zeta(float(x), q)),
    "ErfInv": _vectorized(lambda x: _bisect(math.erf, x, -7.0, 7.0)),
    "ErfcInv": _vectorized(lambda p: _bisect(math.erfc, p, -7.0, 7.0)),
    "Erfcx": _vectorized(_ref_erfcx),
    "Ndtr": _vectorized(_ref_ndtr),
    "Ndtri": _vectorized(lambda p: _bisect(_ref_ndtr, p, -10.0, 10.0)),
    "LogNdtr": _vectorized(_ref_log_ndtr),
}


# -- samples -------------------------------------------------------------------------------------


def _chain(*fns: SampleFn) -> SampleFn:
    def samples(rng: np.random.Generator) -> Iterator[Sample]:
        for fn in fns:
            yield from fn(rng)

    return samples


def _fixed(values: list[float], name: str, **attrs: Any) -> SampleFn:
    def samples(rng: np.random.Generator) -> Iterator[Sample]:
        yield Sample((np.array(values, dtype=np.float64),), dict(attrs), name=name)

    return samples


_SAMPLES: dict[str, SampleFn] = {
    "LGamma": _chain(
        unary_samples(0.3, 5.0), _fixed([-2.5, -1.3, -0.6, 0.2, 1.5, 12.5], "negative, large")
    ),
    "Digamma": _chain(
        unary_samples(0.3, 5.0), _fixed([-2.5, -1.3, -0.6, 0.2, 1.5, 12.5], "negative, large")
    ),
    "Polygamma": _chain(
        unary_samples(0.3, 4.0, attrs={"n": 1}),
        unary_samples(0.3, 4.0, attrs={"n": 0}),
        _fixed([0.4, 1.7, 3.2, 11.0], "n=2", n=2),
        _fixed([-2.4, -1.3, -0.6, 0.8], "negative n=1", n=1),
        _fixed([-1.6, -0.7, 0.9], "negative n=3", n=3),
    ),
    "Zeta": _chain(
        unary_samples(0.3, 4.0, attrs={"x": 2.0}),
        unary_samples(0.5, 4.0, attrs={"x": 3.5}),
        _fixed([0.4, 1.0, 2.5, 15.0], "x=1.5", x=1.5),
    ),
    "ErfInv": _chain(unary_samples(-0.9, 0.9), _fixed([-0.999, -0.6, 0.3, 0.99], "tails")),
    "ErfcInv": _chain(unary_samples(0.1, 1.9), _fixed([1e-3, 0.02, 1.5, 1.99], "tails")),
    "Erfcx": _chain(
        unary_samples(-2.0, 4.0), _fixed([-3.0, 1.5, 2.5, 8.0], "both sides of the split")
    ),
    "Ndtr": _chain(unary_samples(-4.0, 4.0), _fixed([-8.0, -3.0, 5.0], "tails")),
    "Ndtri": _chain(unary_samples(0.05, 0.95), _fixed([0.01, 0.5, 0.99], "tails")),
    "LogNdtr": _chain(unary_samples(-6.0, 4.0), _fixed([-40.0, -12.0, -0.5, 6.0], "tails")),
}


# -- the records --------------------------------------------------------------------------------


def special_function(
    *,
    name: str,
    snake: str,
    kernel: Callable[..., Any],
    derivative: Callable[..., Any],
    uses: str,
    doc: str,
    attrs: dict[str, Any] | None = None,
    input: str = "x",
) -> Elementwise:
    """One special function of one input: an :class:`~gradhub_nn_ops.math.Elementwise` record
    whose kernel computes in float64 (see ``_special_kernel``), with the attributes, samples and
    reference of its own and its forward-mode rule registered with it (the derivative formula
    with the tangent for ``g``). ``derivative(F, g, x, y, **attrs)`` is written once for the graph
    rule (``F`` = :data:`~gradhub_nn_ops.math.VARIABLE_MATH`) and the array-level rule (``F`` =
    ``xp``), which reaches the other kernels by name (``_apply``)."""
    _KERNELS[name] = special = _special_kernel(kernel)
    derivative.__name__ = derivative.__qualname__ = f"d_{snake}"
    return Elementwise(
        name=name,
        snake=snake,
        kernel=special,
        derivative=derivative,
        uses=uses,
        reference=_REFERENCES[name],
        samples=_SAMPLES[name],
        doc=doc,
        attrs=attrs,
        input=input,
        jvp=True,
        expression=False,
    )


SPECIAL: tuple[Elementwise, ...] = (
    special_function(
        name="LGamma",
        snake="lgamma",
        kernel=_lgamma,
        derivative=_d_lgamma,
        uses="x",
        doc=r"""lgamma(x): the logarithm of the absolute value of the gamma function,
    :math:`y = \ln|\Gamma(x)|`; :math:`dy/dx = \psi(x)` (``digamma``).

    Stirling's series after the recurrence :math:`\Gamma(x + 1) = x\Gamma(x)` moves the argument
    to 10 or more, the reflection formula :math:`\Gamma(x)\Gamma(1 - x) = \pi / \sin(\pi x)`
    below 0.5; ``inf`` at the poles 0, -1, -2... (as ``scipy.special.gammaln``). Agrees with
    SciPy to 1e-13 relative in float64 and mpmath to 7e-16 for ``x > 0``, the zeros at 1 and
    2 included (Taylor series there); 1e-14 absolute for ``x < 0`` near its zeros.

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.lgamma(gh.Variable([1.0, 5.0, 0.5])).d
        array([0.       , 3.1780539, 0.5723649], dtype=float32)
    """,
    ),
    special_function(
        name="Digamma",
        snake="digamma",
        kernel=_digamma,
        derivative=_d_digamma,
        uses="x",
        doc=r"""digamma(x): :math:`\psi(x) = \frac{d}{dx}\ln\Gamma(x)`;
    :math:`dy/dx = \psi^{(1)}(x)` (``polygamma`` with ``n=1``).

    The asymptotic series after the recurrence :math:`\psi(x + 1) = \psi(x) + 1/x`, the
    reflection formula :math:`\psi(1 - x) - \psi(x) = \pi\cot(\pi x)` below 0.5; ``-inf`` at 0
    and ``nan`` at the negative integers (as ``scipy.special.psi``). Agrees with SciPy to 1e-14
    relative in float64 (a Taylor series about its zero at 1.4616...).

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.digamma(gh.Variable([1.0, 2.0])).d
        array([-0.5772157 ,  0.42278433], dtype=float32)
    """,
    ),
    special_function(
        name="Polygamma",
        snake="polygamma",
        kernel=_polygamma,
        derivative=_d_polygamma,
        uses="x",
        attrs={"n": 1},
        doc=r"""polygamma(x, n=1): the n-th derivative of digamma, :math:`\psi^{(n)}(x)`, for an
    integer ``n >= 0`` (``n=0`` is digamma); :math:`dy/dx = \psi^{(n+1)}(x)`.

    :math:`\psi^{(n)}(x) = (-1)^{n+1} n!\,\zeta(n + 1, x)` (Hurwitz zeta) for ``n >= 1``, with
    the reflection formula (the n-th derivative of :math:`\pi\cot(\pi x)`) for negative ``x``
    (up to ``n = 100``; NaN for negative ``x`` above);
    ``+-inf`` at the poles 0, -1, -2... (as ``scipy.special.polygamma``). A negative or
    non-integer ``n`` raises. The argument order is gradhub's (the input first);
    ``torch.polygamma(n, x)`` and ``chainer.functions.polygamma(n, x)`` take ``n`` first.

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.polygamma(gh.Variable([1.0]), n=1).d  # pi^2 / 6
        array([1.644934], dtype=float32)
    """,
    ),
    special_function(
        name="Zeta",
        snake="zeta",
        kernel=_zeta,
        derivative=_d_zeta,
        uses="x",
        attrs={"x": 2.0},
        input="q",
        doc=r"""zeta(q, x=2.0): the Hurwitz zeta function :math:`\zeta(x, q) = \sum_{k\ge0}
    (q + k)^{-x}`, elementwise in the input ``q``, for a number ``x`` (the exponent);
    :math:`\partial y/\partial q = -x\,\zeta(x + 1, q)`.

    ``x`` is a constant, as in ``chainer.functions.zeta(x, q)`` (a float) and PyTorch (which has
    no derivative in it): pass it by keyword, ``F.zeta(q, x=3.0)``. Euler-Maclaurin summation
    for ``q >= 0``; for ``q < 0`` the sum is real only for an integer ``x`` (computed through
    polygamma), ``nan`` otherwise; ``inf`` at ``q = 0, -1, -2...`` and for ``x = 1``, ``nan`` for
    ``x < 1`` (as ``scipy.special.zeta``). ``x=2, q=1`` is :math:`\pi^2/6`.

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.zeta(gh.Variable([1.0, 2.0]), x=2.0).d
        array([1.644934  , 0.64493406], dtype=float32)
    """,
    ),
    special_function(
        name="ErfInv",
        snake="erfinv",
        kernel=_erfinv,
        derivative=_d_erfinv,
        uses="y",
        doc=r"""erfinv(x): the inverse error function on [-1, 1], :math:`\operatorname{erf}(y) = x`;
    :math:`dy/dx = \frac{\sqrt\pi}{2} e^{y^2}`.

    Giles' (2010) approximation as the initial guess, then Halley steps on ``erf`` for
    ``|x| <= 0.5`` and on ``erfc(y) = 1 - |x|`` above (so that the tails keep their relative
    accuracy); ``+-inf`` at +-1, ``nan`` outside [-1, 1]. Agrees with ``scipy.special.erfinv``
    to 1e-15 relative in float64.

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.erfinv(gh.Variable([0.0, 0.5, 1.0])).d
        array([0.        , 0.47693628,        inf], dtype=float32)
    """,
    ),
    special_function(
        name="ErfcInv",
        snake="erfcinv",
        kernel=_erfcinv,
        derivative=_d_erfcinv,
        uses="y",
        doc=r"""erfcinv(x): the inverse complementary error function on [0, 2],
    :math:`\operatorname{erfc}(y) = x`; :math:`dy/dx = -\frac{\sqrt\pi}{2} e^{y^2}`.

    Accurate in both tails (``x`` down to the smallest normal number: Halley steps on
    :math:`e^{-y^2}\operatorname{erfcx}(y)` with the residual scaled by :math:`e^{y^2}`);
    ``inf`` at 0, ``-inf`` at 2, ``nan`` outside [0, 2]. Agrees with
    ``scipy.special.erfcinv`` to 1e-15 relative in float64.

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.erfcinv(gh.Variable([1.0, 1e-10])).d
        array([0.      , 4.572825], dtype=float32)
    """,
    ),
    special_function(
        name="Erfcx",
        snake="erfcx",
        kernel=_erfcx,
        derivative=_d_erfcx,
        uses="xy",
        doc=r"""erfcx(x): the scaled complementary error function
    :math:`y = e^{x^2}\operatorname{erfc}(x)`; :math:`dy/dx = 2xy - \frac{2}{\sqrt\pi}`.

    A Chebyshev expansion on [0, 2] and the continued fraction above, so it does not overflow
    for large ``x`` (:math:`\approx 1/(x\sqrt\pi)`); :math:`2e^{x^2} - \operatorname{erfcx}(-x)`
    for negative ``x`` (``inf`` below about -26.6, as SciPy). Agrees with
    ``scipy.special.erfcx`` to 1e-15 relative in float64 for ``x >= 0``.

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.erfcx(gh.Variable([0.0, 100.0])).d
        array([1.        , 0.00564161], dtype=float32)
    """,
    ),
    special_function(
        name="Ndtr",
        snake="ndtr",
        kernel=_ndtr,
        derivative=_d_ndtr,
        uses="x",
        doc=r"""ndtr(x): the standard normal distribution function
    :math:`\Phi(x) = \frac12\operatorname{erfc}(-x/\sqrt2)`;
    :math:`dy/dx = e^{-x^2/2}/\sqrt{2\pi}`.

    Relative accuracy in the lower tail (``erfc`` through ``erfcx``; no ``1 - erf``).

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.ndtr(gh.Variable([0.0, 1.0])).d
        array([0.5      , 0.8413448], dtype=float32)
    """,
    ),
    special_function(
        name="Ndtri",
        snake="ndtri",
        kernel=_ndtri,
        derivative=_d_ndtri,
        uses="y",
        doc=r"""ndtri(x): the inverse of ``ndtr`` on [0, 1] (the standard normal quantile),
    :math:`y = -\sqrt2\operatorname{erfcinv}(2x)`; :math:`dy/dx = \sqrt{2\pi} e^{y^2/2}`.

    ``-inf`` at 0, ``inf`` at 1, ``nan`` outside [0, 1].

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.ndtri(gh.Variable([0.5, 0.975])).d
        array([0.       , 1.9599644], dtype=float32)
    """,
    ),
    special_function(
        name="LogNdtr",
        snake="log_ndtr",
        kernel=_log_ndtr,
        derivative=_d_log_ndtr,
        uses="x",
        doc=r"""log_ndtr(x): :math:`\ln\Phi(x)`, the log of the standard normal distribution
    function; :math:`dy/dx = \sqrt{2/\pi} / \operatorname{erfcx}(-x/\sqrt2)`.

    Computed as :math:`\ln(\operatorname{erfcx}(-x/\sqrt2)/2) - x^2/2` for ``x <= 0``, so it
    stays finite and accurate where :math:`\Phi(x)` underflows (``x = -40`` gives -804.608...),
    and as ``log1p(-ndtr(-x))`` above.

    Example::

        >>> import gradhub as gh
        >>> import gradhub.functions as F
        >>> F.log_ndtr(gh.Variable([0.0, -40.0])).d
        array([-6.9314718e-01, -8.0460846e+02], dtype=float32)
    """,
    ),
)


def register_functions(register: Any) -> None:
    """Register the special functions."""
    for op in SPECIAL:
        op.register(register)
