"""``lr_mult``/``wd_mult`` given as keywords of a symbol operator (``FullyConnected(...,
lr_mult=0)``): stored as ``__lr_mult__``/``__wd_mult__`` on the operator and on the variables
it creates, so that ``Module`` freezes or scales those parameters. Expected values are mxnet
1.9.1's outputs (the ``test_lr_wd_mult`` case of mxnet's own ``test_optimizer.py`` and a
smaller one)."""

from __future__ import annotations

import json

import gradhub_compat.mxnet as mx
import numpy as np


def _net() -> mx.sym.Symbol:
    data = mx.sym.Variable("data")
    fc1 = mx.sym.FullyConnected(data=data, name="fc1", num_hidden=3, lr_mult=0)
    return mx.sym.FullyConnected(data=fc1, name="fc2", num_hidden=2, wd_mult=0.5)


def test_operator_lr_mult_is_a_hidden_attribute_of_its_variables() -> None:
    nodes = {n["name"]: n.get("attrs") for n in json.loads(_net().tojson())["nodes"]}
    # mxnet 1.9.1
    assert nodes["fc1_weight"] == {"__lr_mult__": "0", "num_hidden": "3"}
    assert nodes["fc1_bias"] == {"__lr_mult__": "0", "num_hidden": "3"}
    assert nodes["fc1"] == {"__lr_mult__": "0", "num_hidden": "3"}
    assert nodes["fc2_weight"] == {"__wd_mult__": "0.5", "num_hidden": "2"}
    assert nodes["fc2"] == {"__wd_mult__": "0.5", "num_hidden": "2"}


def test_module_freezes_and_scales_by_operator_multipliers() -> None:
    mod = mx.mod.Module(symbol=_net(), label_names=None)
    mod.bind(data_shapes=[("data", (2, 4))])
    mod.init_params(initializer=mx.init.Constant(0.5))
    mod.init_optimizer(optimizer_params={"learning_rate": 0.5, "wd": 0.1})
    batch = mx.io.DataBatch(data=[mx.nd.array([[1.0, 2, 3, 4], [-1, 0, 1, 2]])], label=None)
    mod.forward(batch, is_train=True)
    mod.backward([mx.nd.ones((2, 2))])
    mod.update()
    args, _ = mod.get_params()
    # mxnet 1.9.1: fc1 frozen (lr_mult 0), fc2's weight decay halved
    np.testing.assert_array_equal(args["fc1_weight"].asnumpy(), np.full((3, 4), 0.5, np.float32))
    np.testing.assert_array_equal(args["fc1_bias"].asnumpy(), np.zeros(3, np.float32))
    np.testing.assert_array_equal(args["fc2_bias"].asnumpy(), [-0.5, -0.5])
    np.testing.assert_allclose(args["fc2_weight"].asnumpy(), np.full((2, 3), -1.0125), rtol=1e-6)


def test_mxnet_own_lr_wd_mult_dicts() -> None:
    data = mx.sym.Variable("data")
    bias = mx.sym.Variable("fc1_bias", lr_mult=1.0)
    fc1 = mx.sym.FullyConnected(data=data, bias=bias, name="fc1", num_hidden=10, lr_mult=0)
    fc2 = mx.sym.FullyConnected(data=fc1, name="fc2", num_hidden=10, wd_mult=0.5)
    mod = mx.mod.Module(symbol=fc2, label_names=None)
    mod.bind(data_shapes=[("data", (5, 10))])
    mod.init_params(initializer=mx.init.Uniform(1.0))
    mod.init_optimizer(optimizer_params={"learning_rate": 1.0})
    # mxnet 1.9.1
    assert mod._optimizer.lr_mult == {"fc1_bias": 1.0, "fc1_weight": 0.0}
    assert mod._optimizer.wd_mult == {"fc2_bias": 0.5, "fc2_weight": 0.5, "fc1_bias": 0.0}
