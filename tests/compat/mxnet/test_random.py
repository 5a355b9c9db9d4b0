"""The mxnet layer's random numbers: ``mx.random.seed`` (through ``gradhub.seed``) and
``mx.nd.random.uniform``/``normal`` with mxnet 1.9.1's shapes and dtypes.
"""

from __future__ import annotations

import gradhub
import gradhub_compat.mxnet as mx
import numpy as np
import pytest


def test_seed_repeats_draws_and_is_gradhub_seed() -> None:
    mx.random.seed(42)
    a = mx.nd.random.uniform(0, 1, shape=(3,)).asnumpy()
    b = mx.nd.random.normal(0, 1, shape=(2,)).asnumpy()
    gradhub.seed(42)
    np.testing.assert_array_equal(mx.nd.random.uniform(0, 1, shape=(3,)).asnumpy(), a)
    mx.random.seed(42, ctx=mx.cpu())
    np.testing.assert_array_equal(mx.random.uniform(0, 1, shape=(3,)).asnumpy(), a)
    np.testing.assert_array_equal(mx.random.normal(0, 1, shape=(2,)).asnumpy(), b)
    mx.random.seed(43)
    assert not np.array_equal(mx.nd.random.uniform(0, 1, shape=(3,)).asnumpy(), a)
    with pytest.raises(ValueError, match="seed_state must be int"):
        mx.random.seed(1.5)


def test_shapes_dtypes_and_parameters_as_mxnet() -> None:
    mx.random.seed(0)
    # mxnet 1.9.1: (2, 2) float32; no shape gives (1,); dtype is kept
    u = mx.nd.random.uniform(shape=(2, 2))
    assert u.shape == (2, 2) and u.dtype is np.float32
    assert mx.nd.random.uniform(-1, 1).shape == (1,)
    assert mx.nd.random.normal(loc=2, scale=0.5, shape=3, dtype="float64").dtype is np.float64
    # NDArray parameters: low.shape + shape, one set of draws per element (mxnet 1.9.1 drew
    # [[0.22, 0.98], [10.009, 10.63]] here)
    p = mx.nd.random.uniform(mx.nd.array([0, 10]), mx.nd.array([1, 11]), shape=2).asnumpy()
    assert p.shape == (2, 2)
    assert ((p[0] >= 0) & (p[0] < 1)).all() and ((p[1] >= 10) & (p[1] < 11)).all()
    out = mx.nd.zeros((4,))
    assert mx.nd.random.normal(shape=4, out=out) is out and (out.asnumpy() != 0).all()


def test_distribution_moments() -> None:
    mx.random.seed(1)
    u = mx.nd.random.uniform(-2, 4, shape=(20000,)).asnumpy()
    assert u.min() >= -2 and u.max() < 4
    assert abs(u.mean() - 1) < 0.05 and abs(u.var() - 3) < 0.1  # (b - a)^2 / 12 = 3
    n = mx.nd.random.normal(3, 0.5, shape=(20000,), dtype="float64").asnumpy()
    assert abs(n.mean() - 3) < 0.02 and abs(n.std() - 0.5) < 0.02


def test_bad_arguments() -> None:
    with pytest.raises(TypeError, match=r"mx\.nd\.random\.uniform: dtype must be float16"):
        mx.nd.random.uniform(shape=2, dtype="int32")
    with pytest.raises(ValueError, match=r"mx\.nd\.random\.normal: scale must be >= 0"):
        mx.nd.random.normal(0, -1, shape=2)
    with pytest.raises(ValueError, match="both parameters must be NDArrays of one shape"):
        mx.nd.random.uniform(mx.nd.zeros(2), 1)
    with pytest.raises(TypeError, match="the 1st parameter must be a number"):
        mx.nd.random.uniform("a", 1)
    with pytest.raises(ValueError, match=r"out must be an NDArray of shape \(3,\)"):
        mx.nd.random.uniform(shape=3, out=mx.nd.zeros(2))
