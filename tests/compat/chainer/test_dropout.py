"""``F.dropout`` draws chainer's mask from numpy's global generator (so a seeded run drops what
chainer 7.8.1 drops: the PTB example's losses depend on it), with chainer's ``mask`` and
``return_mask`` arguments and errors. Values recorded from chainer 7.8.1."""

from __future__ import annotations

import gradhub as gh
import gradhub_compat.chainer.functions as F
import numpy as np
import pytest
from gradhub_compat import chainer
from gradhub_compat.chainer.utils.type_check import InvalidType


def test_dropout_mask_is_chainers_numpy_draw() -> None:
    np.random.seed(0)
    y = F.dropout(np.ones((2, 3), np.float32), 0.5)
    # chainer 7.8.1
    np.testing.assert_array_equal(y.array, [[2.0, 2.0, 2.0], [2.0, 0.0, 2.0]])
    assert y.dtype == np.float32


def test_dropout_return_mask_and_generator_state() -> None:
    np.random.seed(3)
    y, mask = F.dropout(np.ones((2, 4), np.float64), 0.25, return_mask=True)
    s = 4.0 / 3.0
    expect = np.array([[s, s, s, s], [s, s, 0.0, 0.0]])  # chainer 7.8.1
    np.testing.assert_allclose(mask, expect, rtol=1e-15)
    np.testing.assert_allclose(y.array, expect, rtol=1e-15)
    # chainer 7.8.1 drew exactly x.size numbers: the next one is
    assert np.random.rand() == 0.05146720330082988


def test_dropout_gradient_is_the_mask() -> None:
    x = chainer.Variable(np.arange(6, dtype=np.float32).reshape(2, 3))
    np.random.seed(2)
    y = F.dropout(x)
    y.grad = np.ones((2, 3), np.float32)
    y.backward()
    # chainer 7.8.1
    np.testing.assert_array_equal(y.array, [[0.0, 0.0, 4.0], [0.0, 0.0, 0.0]])
    np.testing.assert_array_equal(x.grad, [[0.0, 0.0, 2.0], [0.0, 0.0, 0.0]])


def test_dropout_given_mask_and_test_mode() -> None:
    m = np.array([[0, 2, 2], [2, 0, 2]], np.float32)
    y = F.dropout(np.ones((2, 3), np.float32), mask=m)
    np.testing.assert_array_equal(y.array, m)
    with chainer.using_config("train", False):
        out, mask = F.dropout(np.ones(2, np.float32), return_mask=True)
    assert mask is None
    np.testing.assert_array_equal(out.array, [1.0, 1.0])


def test_dropout_errors_are_chainers() -> None:
    # chainer 7.8.1's errors
    with pytest.raises(InvalidType, match="Dropout"):
        F.dropout(np.ones(3, np.int32))
    with pytest.raises(ValueError, match="train argument is not supported anymore"):
        F.dropout(np.ones(3, np.float32), train=True)
    with pytest.raises(TypeError, match="unexpected keyword argument"):
        F.dropout(np.ones(3, np.float32), foo=True)


def test_dropout_in_a_compiled_step_draws_at_every_call() -> None:
    step = gh.compile(lambda x: F.dropout(x, 0.5))
    x = np.ones((8, 8), np.float32)
    a, b = step(x).array, step(x).array
    assert set(np.unique(a)) <= {0.0, 2.0} and not np.array_equal(a, b)
    with pytest.raises(NotImplementedError, match="migration-chainer"):
        gh.compile(lambda x: F.dropout(x, 0.5, return_mask=True))(x)
