"""Older mxnet 1.x names that its example programs and tutorials use: ``mx.nd.random_uniform``
and ``mx.nd.random_normal`` (the custom-layer tutorial), and the deprecation warning of
``Block.save_params`` (the super-resolution example), as mxnet 1.9.1."""

from __future__ import annotations

import gradhub_compat.mxnet as mx
import numpy as np
import pytest
from gradhub_compat.mxnet.gluon import nn


def test_random_uniform_and_random_normal_are_the_random_functions() -> None:
    mx.random.seed(3)
    a = mx.nd.random_uniform(low=-10, high=10, shape=(50, 2))
    mx.random.seed(3)
    b = mx.nd.random.uniform(low=-10, high=10, shape=(50, 2))
    np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())
    assert a.shape == (50, 2) and a.dtype == np.float32
    assert -10 <= a.asnumpy().min() and a.asnumpy().max() < 10
    mx.random.seed(4)
    c = mx.nd.random_normal(loc=1.0, scale=0.5, shape=(3,))
    mx.random.seed(4)
    np.testing.assert_array_equal(c.asnumpy(), mx.nd.random.normal(1.0, 0.5, shape=(3,)).asnumpy())


def test_save_params_warns_with_mxnets_message(tmp_path: object) -> None:
    net = nn.Dense(2, in_units=3)
    net.initialize()
    # mxnet 1.9.1's text
    message = (
        "save_params is deprecated. Please use save_parameters. Note that if you want load from "
        "SymbolBlock later, please use export instead. For details, see "
        "https://mxnet.apache.org/tutorials/gluon/save_load_params.html"
    )
    with pytest.warns(UserWarning) as record:
        net.save_params(f"{tmp_path}/net.params")
    assert [str(w.message) for w in record] == [message]
