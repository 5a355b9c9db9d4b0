"""mxnet 1.9.1's further random functions of ``mx.nd``: ``random_exponential``/``gamma``/
``poisson``/``negative_binomial``/``generalized_negative_binomial``/``randint``, the per-element
``sample_*`` draws and the densities ``random_pdf_*``.

The draws cannot repeat mxnet's own stream: they are checked for shapes, dtypes, seeding and
their moments. The densities and their gradients are compared with values written by mxnet
1.9.1 (``data/make_random_more_reference.py`` -> ``data/random_more_reference.npz``), and the
float64 gradients (first and second order) with central finite differences.
"""

from __future__ import annotations

import pathlib
from typing import Any

import gradhub_compat.mxnet as mx
import numpy as np
import pytest
from compat.mxnet.helpers import _reference_script
from numeric_helpers import central_differences

DATA = pathlib.Path(__file__).parent / "data"
REF = np.load(DATA / "random_more_reference.npz")


MAKER: Any = _reference_script("make_random_more_reference")


def _grad(a: mx.nd.NDArray) -> np.ndarray:
    assert a.grad is not None
    return a.grad.asnumpy()


def _tolerance(case: str, dt: str, index: int) -> float:
    """Relative tolerances: float32 rounding, float64 to the last bits, except where mxnet
    1.9.1 approximates (its digamma, in the gradients for gamma's alpha and Dirichlet's alpha,
    agrees to about 2e-6; its normal density's 1/sqrt(2 pi) constant to about 2e-8)."""
    if dt == "float32":
        return 1e-5
    if index == 1 and case in ("gamma", "dirichlet"):
        return 5e-6
    if case == "normal":
        return 5e-8
    return 1e-12


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("is_log", [False, True])
@pytest.mark.parametrize("case", MAKER.CASES, ids=[c[0] for c in MAKER.CASES])
def test_pdf_and_gradients_match_mxnet(case: Any, is_log: bool, dt: str) -> None:
    name, dist, sample, params = case
    arrays = [mx.nd.array(sample, dtype=dt)] + [mx.nd.array(p, dtype=dt) for p in params]
    for a in arrays:
        a.attach_grad()
    with mx.autograd.record():
        y = getattr(mx.nd, "random_pdf_" + dist)(*arrays, is_log=is_log)
    y.backward(mx.nd.array(MAKER.head(y.shape), dtype=dt))
    key = f"{name}/{int(is_log)}/{dt}"
    for i, value in enumerate([y.asnumpy()] + [_grad(a) for a in arrays]):
        expected = REF[f"{key}/out" if i == 0 else f"{key}/grad{i - 1}"]  # mxnet 1.9.1
        assert value.dtype == expected.dtype and value.shape == expected.shape
        rtol = _tolerance(name, dt, i - 1 if i else 0)
        np.testing.assert_allclose(value, expected, rtol=rtol, atol=rtol * 1e-3, err_msg=key)


def _scalar_pdf(dist: str, arrays: list[np.ndarray], is_log: bool) -> float:
    nd = [mx.nd.array(a, dtype="float64") for a in arrays]
    y = getattr(mx.nd, "random_pdf_" + dist)(*nd, is_log=is_log)
    return float((y.asnumpy() * MAKER.head(y.shape)).sum())


@pytest.mark.parametrize("case", MAKER.CASES, ids=[c[0] for c in MAKER.CASES])
def test_gradients_against_finite_differences(case: Any) -> None:
    _name, dist, sample, params = case
    base = [np.asarray(sample, dtype=np.float64)] + [np.asarray(p, np.float64) for p in params]
    discrete = dist in ("poisson", "negative_binomial", "generalized_negative_binomial")
    arrays = [mx.nd.array(a, dtype="float64") for a in base]
    for a in arrays:
        a.attach_grad()
    with mx.autograd.record():
        y = getattr(mx.nd, "random_pdf_" + dist)(*arrays)
    y.backward(mx.nd.array(MAKER.head(y.shape), dtype="float64"))
    for i in range(len(base)):
        if i == 0 and discrete:  # (no gradient to a count, as mxnet)
            assert not _grad(arrays[0]).any()
            continue

        def f(v: np.ndarray, i: int = i) -> float:
            return _scalar_pdf(dist, [v if j == i else b for j, b in enumerate(base)], False)

        fd = central_differences(f, base[i])
        np.testing.assert_allclose(_grad(arrays[i]), fd, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("dist", ["normal", "gamma", "negative_binomial"])
def test_second_derivatives_against_finite_differences(dist: str) -> None:
    """The densities are compositions of registered functions: their gradients differentiate
    again (mxnet has no second derivative here)."""
    case = next(c for c in MAKER.CASES if c[1] == dist)
    base = [np.asarray(case[2], np.float64)] + [np.asarray(p, np.float64) for p in case[3]]
    k = 1  # the derivative with respect to the first parameter, differentiated again

    def first(v: np.ndarray) -> np.ndarray:
        arrays = [mx.nd.array(v if j == k else b, dtype="float64") for j, b in enumerate(base)]
        arrays[k].attach_grad()
        with mx.autograd.record():
            y = getattr(mx.nd, "random_pdf_" + dist)(*arrays)
        y.backward()
        return _grad(arrays[k])

    p = mx.nd.array(base[k], dtype="float64")
    p.attach_grad()
    others = [mx.nd.array(b, dtype="float64") for b in base]
    with mx.autograd.record():
        args = [p if j == k else o for j, o in enumerate(others)]
        y = getattr(mx.nd, "random_pdf_" + dist)(*args)
        (g,) = mx.autograd.grad(y, [p], create_graph=True)
        s = (g * mx.nd.array(np.linspace(1, 2, g.size).reshape(g.shape), dtype="float64")).sum()
    s.backward()
    w = np.linspace(1, 2, base[k].size).reshape(base[k].shape)
    fd = central_differences(lambda v: float((first(v) * w).sum()), base[k], eps=1e-5)
    np.testing.assert_allclose(_grad(p), fd, rtol=1e-5, atol=1e-7)


def test_pdf_shapes_and_errors() -> None:
    x = mx.nd.array([[0.2, 0.5]])
    assert mx.nd.random_pdf_normal(x, mx.nd.array([0.0]), mx.nd.array([1.0])).shape == (1, 2)
    with pytest.raises(mx.base.MXNetError, match="random_pdf_normal: Shape inconsistent"):
        mx.nd.random_pdf_normal(mx.nd.array([0.2, 0.5]), mx.nd.zeros(3), mx.nd.ones(3))
    with pytest.raises(mx.base.MXNetError, match="random_pdf_gamma: Shape inconsistent"):
        mx.nd.random_pdf_gamma(x, mx.nd.ones(1), mx.nd.ones(2))
    with pytest.raises(TypeError, match=r"mx\.nd\.random_pdf_poisson: lam must be an NDArray"):
        mx.nd.random_pdf_poisson(x, 1.0)
    with pytest.raises(mx.base.MXNetError, match="random_pdf_dirichlet: Shape inconsistent"):
        mx.nd.random_pdf_dirichlet(mx.nd.ones((2, 3)), mx.nd.ones((2, 4)))
    out = mx.nd.zeros((1, 2))
    assert mx.nd.random_pdf_exponential(x, mx.nd.array([2.0]), out=out) is out
    np.testing.assert_allclose(out.asnumpy(), 2 * np.exp(-2 * np.array([[0.2, 0.5]])), rtol=1e-6)


MOMENTS = [
    # (function, parameters, mean, variance)
    ("random_exponential", {"lam": 2.0}, 0.5, 0.25),
    ("random_gamma", {"alpha": 3.0, "beta": 2.0}, 6.0, 12.0),  # beta: the scale, as mxnet
    ("random_poisson", {"lam": 4.0}, 4.0, 4.0),
    ("random_negative_binomial", {"k": 3, "p": 0.4}, 4.5, 11.25),  # k (1 - p) / p (/ p)
    ("random_generalized_negative_binomial", {"mu": 2.0, "alpha": 0.5}, 2.0, 4.0),
]


@pytest.mark.parametrize("fn, params, mean, var", MOMENTS, ids=[m[0] for m in MOMENTS])
def test_draws_have_the_moments(fn: str, params: dict, mean: float, var: float) -> None:
    mx.random.seed(7)
    v = getattr(mx.nd, fn)(shape=(40000,), **params)
    assert v.shape == (40000,) and v.dtype is np.float32
    a = v.asnumpy().astype(np.float64)
    assert abs(a.mean() - mean) < 0.05 * max(1.0, mean)
    assert abs(a.var() - var) < 0.06 * var
    mx.random.seed(7)
    np.testing.assert_array_equal(getattr(mx.nd, fn)(shape=(40000,), **params).asnumpy(), a)


def test_randint_and_defaults() -> None:
    mx.random.seed(3)
    r = mx.nd.random_randint(-2, 3, shape=(2000,))
    a = r.asnumpy()
    assert r.dtype is np.int32 and set(np.unique(a)) == {-2, -1, 0, 1, 2}
    assert mx.nd.random_randint(0, 5, shape=3, dtype="int64").dtype is np.int64
    assert mx.nd.random_exponential().shape == (1,)
    assert mx.nd.random_gamma(shape=(2, 2), dtype="float64").dtype is np.float64
    with pytest.raises(mx.base.MXNetError, match="low must be less or equal to high"):
        mx.nd.random_randint(5, 1, shape=2)
    with pytest.raises(mx.base.MXNetError, match="gamma distribution have to be positive"):
        mx.nd.random_gamma(alpha=-1, shape=2)
    with pytest.raises(mx.base.MXNetError, match="Invalid Input: 'int32'"):
        mx.nd.random_exponential(lam=2, shape=2, dtype="int32")
    with pytest.raises(mx.base.MXNetError, match="Cannot find argument 'rate'"):
        mx.nd.random_poisson(rate=2)


def test_sample_per_element_parameters() -> None:
    mx.random.seed(11)
    lo, hi = mx.nd.array([0.0, 10.0]), mx.nd.array([1.0, 12.0])
    u = mx.nd.sample_uniform(lo, hi, shape=(5000,)).asnumpy()
    assert u.shape == (2, 5000)
    assert ((u[0] >= 0) & (u[0] < 1)).all() and ((u[1] >= 10) & (u[1] < 12)).all()
    n = mx.nd.sample_normal(mx.nd.array([0.0, 5.0]), mx.nd.array([1.0, 0.1]), shape=5000)
    assert abs(n.asnumpy()[1].mean() - 5) < 0.01 and abs(n.asnumpy()[1].std() - 0.1) < 0.01
    lam = mx.nd.array([[1.0, 8.0]])
    p = mx.nd.sample_poisson(lam, shape=(4000,)).asnumpy()
    assert p.shape == (1, 2, 4000) and abs(p[0, 1].mean() - 8) < 0.2
    e = mx.nd.sample_exponential(mx.nd.array([4.0]), shape=4000).asnumpy()
    assert abs(e.mean() - 0.25) < 0.02
    g = mx.nd.sample_gamma(mx.nd.array([2.0]), mx.nd.array([3.0]), shape=4000, dtype="float64")
    assert g.dtype is np.float64 and abs(g.asnumpy().mean() - 6) < 0.3
    nb = mx.nd.sample_negative_binomial(mx.nd.array([3.0]), mx.nd.array([0.4]), shape=4000)
    assert abs(nb.asnumpy().mean() - 4.5) < 0.3
    gnb = mx.nd.sample_generalized_negative_binomial(
        mx.nd.array([2.0, 3.0]), mx.nd.array([0.5, 0.0]), shape=4000
    ).asnumpy()
    assert abs(gnb[0].mean() - 2) < 0.15 and abs(gnb[1].var() - 3) < 0.3  # alpha 0: Poisson
    assert mx.nd.sample_poisson(mx.nd.array([1.0, 2.0])).shape == (2,)
    with pytest.raises(mx.base.MXNetError, match="_sample_normal inferring shapes failed"):
        mx.nd.sample_normal(mx.nd.array([0.0]), mx.nd.array([1.0, 2.0]))
    with pytest.raises(TypeError, match=r"mx\.nd\.sample_exponential: lam must be an NDArray"):
        mx.nd.sample_exponential(2.0)
