"""HybridBlock.export and gluon.SymbolBlock (SymbolBlock.imports), the second half of mxnet's
"Saving and Loading Gluon Models" tutorial: the files, names, parameters and outputs of mxnet
1.9.1, and the names of unnamed operators in a block's name scope."""

from __future__ import annotations

import os
import warnings

import gradhub_compat.mxnet as mx
import numpy as np
import pytest
from gradhub_compat.mxnet.gluon import nn


def _net() -> nn.HybridSequential:
    net = nn.HybridSequential(prefix="net_")
    with net.name_scope():
        net.add(
            nn.Conv2D(3, 2, in_channels=2),
            nn.BatchNorm(in_channels=3),
            nn.Flatten(),
            nn.Dense(4, activation="tanh"),
        )
    net.initialize(mx.init.Xavier())
    return net


def test_export_and_imports_as_mxnet(tmp_path: object) -> None:
    net = _net()
    net.hybridize()
    x = mx.nd.array(np.random.RandomState(0).randn(2, 2, 4, 4))
    with mx.autograd.record():
        y = net(x)
    y.backward()
    path = os.path.join(str(tmp_path), "net")
    net.export(path, epoch=3)
    # mxnet 1.9.1: the files, the parameter keys and the graph
    assert sorted(os.listdir(str(tmp_path))) == ["net-0003.params", "net-symbol.json"]
    saved = mx.nd.load(path + "-0003.params")
    assert sorted(saved) == [
        "arg:net_batchnorm0_beta", "arg:net_batchnorm0_gamma", "arg:net_conv0_bias",
        "arg:net_conv0_weight", "arg:net_dense0_bias", "arg:net_dense0_weight",
        "aux:net_batchnorm0_running_mean", "aux:net_batchnorm0_running_var",
    ]  # fmt: skip
    np.testing.assert_array_equal(
        saved["aux:net_batchnorm0_running_mean"].asnumpy(),
        net[1].running_mean.data().asnumpy(),
    )
    sym = mx.sym.load(path + "-symbol.json")
    assert sym.list_outputs() == ["net_dense0_tanh_fwd_output"]
    assert sym.list_arguments() == [
        "data", "net_conv0_weight", "net_conv0_bias", "net_batchnorm0_gamma",
        "net_batchnorm0_beta", "net_dense0_weight", "net_dense0_bias",
    ]  # fmt: skip
    assert sym.list_auxiliary_states() == [
        "net_batchnorm0_running_mean",
        "net_batchnorm0_running_var",
    ]
    with pytest.warns(UserWarning) as record:
        blk = mx.gluon.SymbolBlock.imports(path + "-symbol.json", ["data"], path + "-0003.params")
    # mxnet 1.9.1 warns so (the input has no dtype)
    assert [str(w.message) for w in record] == [
        "Cannot decide type for the following arguments. Consider providing them as input:"
        "\n\tdata: None"
    ]
    params = blk.collect_params()
    assert list(params) == [
        "net_conv0_weight", "net_conv0_bias", "net_batchnorm0_gamma", "net_batchnorm0_beta",
        "net_dense0_weight", "net_dense0_bias", "net_batchnorm0_running_mean",
        "net_batchnorm0_running_var",
    ]  # fmt: skip
    assert [p.grad_req for p in params.values()] == ["write"] * 6 + ["null"] * 2
    np.testing.assert_array_equal(blk(x).asnumpy(), net(x).asnumpy())
    assert blk(mx.sym.var("data")).list_outputs() == ["net_dense0_tanh_fwd_output"]
    assert repr(blk) == "SymbolBlock(\n<Symbol net_dense0_tanh_fwd> : 1 -> 1\n)"
    # training through the graph is not supported (mxnet records it)
    with pytest.raises(NotImplementedError, match=r"SymbolBlock.*migration-mxnet"):
        with mx.autograd.record():
            blk(x)


def test_symbol_block_deferred_parameters_and_errors() -> None:
    d = mx.sym.var("d", dtype="float32")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a typed input: no warning
        blk = mx.gluon.SymbolBlock(mx.sym.FullyConnected(d, num_hidden=2, name="fc"), d)
    assert list(blk.collect_params()) == ["fc_weight", "fc_bias"]
    assert [p.shape for p in blk.collect_params().values()] == [None, None]  # mxnet 1.9.1
    blk.initialize(mx.init.One())
    np.testing.assert_array_equal(blk(mx.nd.ones((1, 3))).asnumpy(), [[4.0, 4.0]])
    assert [p.shape for p in blk.collect_params().values()] == [(2, 3), (2,)]
    with pytest.raises(AssertionError, match="Input symbols must be variable"):
        mx.gluon.SymbolBlock(mx.sym.FullyConnected(d, num_hidden=2, name="g"), mx.sym.relu(d))
    with pytest.raises(RuntimeError, match=r"Please first call block\.hybridize"):
        _net().export("x")


def test_unnamed_operators_are_named_in_the_block_scope() -> None:
    # mxnet 1.9.1: an operator without a name gets the block's prefix, its lower-case name and
    # a count of the block's scope
    net = nn.HybridSequential(prefix="net_")
    with net.name_scope():
        net.add(nn.Flatten(), nn.Flatten(), nn.Dense(2, in_units=4))
    assert net(mx.sym.var("data")).get_internals().list_outputs() == [
        "data", "net_flatten0_flatten0_output", "net_flatten1_flatten0_output",
        "net_dense0_weight", "net_dense0_bias", "net_dense0_fwd_output",
    ]  # fmt: skip

    class Two(mx.gluon.HybridBlock):
        def hybrid_forward(self, F, x):  # type: ignore[no-untyped-def]
            return F.relu(F.Flatten(x))

    out = Two(prefix="two_")(mx.sym.var("data"))
    assert out.get_internals().list_outputs() == [
        "data",
        "two_flatten0_output",
        "two_relu0_output",
    ]
