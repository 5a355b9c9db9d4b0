"""mx.nd.sample_multinomial (the actor-critic example's actions): shapes, dtypes, draws where
the probabilities decide them, log-probabilities and their gradients as mxnet 1.9.1, and the
distribution of the draws against the probabilities."""

from __future__ import annotations

import gradhub_compat.mxnet as mx
import numpy as np
import pytest


def test_deterministic_draws_and_gradients_match_mxnet() -> None:
    p = mx.nd.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    p.attach_grad()
    with mx.autograd.record():
        s, lp = mx.nd.sample_multinomial(p, get_prob=True)
        (lp * mx.nd.array([2.0, 3.0])).backward()
    # mxnet 1.9.1
    assert s.dtype == np.int32 and s.asnumpy().tolist() == [1, 2]
    np.testing.assert_array_equal(lp.asnumpy(), [0.0, 0.0])
    np.testing.assert_array_equal(p.grad.asnumpy(), [[0, 2, 0], [0, 0, 3]])
    q = mx.nd.array([0.0, 0.0, 1.0])
    q.attach_grad()
    with mx.autograd.record():
        s1, lp1 = mx.nd.sample_multinomial(q, get_prob=True)
    lp1.backward()
    assert s1.shape == (1,) and lp1.shape == (1,) and s1.asnumpy().tolist() == [2]
    np.testing.assert_array_equal(q.grad.asnumpy(), [0, 0, 1])
    s2 = mx.nd.sample_multinomial(p, shape=(2, 2))
    assert s2.asnumpy().tolist() == [[[1, 1], [1, 1]], [[2, 2], [2, 2]]]
    s3 = mx.nd.sample_multinomial(q, shape=3, dtype="float32")
    assert s3.dtype == np.float32 and s3.asnumpy().tolist() == [2.0, 2.0, 2.0]
    with mx.autograd.record():
        _, lp4 = mx.nd.sample_multinomial(p, shape=(2,), get_prob=True)
    lp4.backward()
    assert lp4.shape == (2, 2)
    np.testing.assert_array_equal(p.grad.asnumpy(), [[0, 2, 0], [0, 0, 2]])


def test_log_probability_gradient_is_head_over_probability() -> None:
    r = mx.nd.array([0.25, 0.5, 0.25])
    r.attach_grad()
    with mx.autograd.record():
        s, lp = mx.nd.sample_multinomial(r, get_prob=True)
    lp.backward()
    k = int(s.asscalar())
    np.testing.assert_allclose(lp.asnumpy(), [np.log(r.asnumpy()[k])], rtol=1e-6)
    expected = np.zeros(3, np.float32)
    expected[k] = 1 / r.asnumpy()[k]
    np.testing.assert_allclose(r.grad.asnumpy(), expected, rtol=1e-6)


def test_draws_follow_the_probabilities_and_the_seed() -> None:
    probs = np.array([0.1, 0.6, 0.3], np.float32)
    mx.random.seed(7)
    s = mx.nd.sample_multinomial(mx.nd.array(probs), shape=20000).asnumpy()
    freq = np.bincount(s, minlength=3) / s.size
    np.testing.assert_allclose(freq, probs, atol=0.015)
    mx.random.seed(7)
    again = mx.nd.sample_multinomial(mx.nd.array(probs), shape=20000).asnumpy()
    np.testing.assert_array_equal(s, again)


def test_errors() -> None:
    # mxnet 1.9.1: This operation only support floating point types, not int32
    with pytest.raises(mx.base.MXNetError, match="only support floating point types, not int32"):
        mx.nd.sample_multinomial(mx.nd.array([[1, 0]], dtype="int32"))
    with pytest.raises(TypeError, match="sample_multinomial: data"):
        mx.nd.sample_multinomial(np.ones(3))
    with pytest.raises(NotImplementedError, match=r"out=.*migration-mxnet"):
        mx.nd.sample_multinomial(mx.nd.ones((3,)), out=mx.nd.ones((1,)))
