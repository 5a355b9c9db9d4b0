"""The mxnet layer's Gluon blocks: mxnet's name scoping (``dense0_``, ``name_scope()``),
child and parameter registration, ``collect_params`` (keys, order, ``select``),
``HybridBlock.hybrid_forward`` (``F`` = ``mx.nd``, the parameters as keyword NDArrays; Symbols
with ``F`` = ``mx.sym``), hooks, ``apply``, ``cast``, ``summary``, ``hybridize``, Sequential
containers, ``save_parameters``/``load_parameters`` (bytes written by mxnet 1.9.1 read back)
and the errors mxnet 1.9.1 raises.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import gradhub_compat.mxnet as mx
import numpy as np
import pytest
from gradhub_compat.mxnet.gluon import nn


class _Model(mx.gluon.Block):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        with self.name_scope():
            self.fc1 = nn.Dense(3)
            self.fc2 = nn.Dense(3)
            self.inner = nn.HybridSequential()
            with self.inner.name_scope():
                self.inner.add(nn.Dense(2), nn.Activation("relu"), nn.Dense(2))

    def forward(self, x: mx.NDArray) -> mx.NDArray:
        return self.inner(self.fc2(self.fc1(x)))


def test_name_scoping_as_mxnet() -> None:
    m = _Model(prefix="model0_")
    assert m.prefix == "model0_" and m.name == "model0"
    # mxnet 1.9.1
    assert list(m.collect_params().keys()) == [
        "model0_dense0_weight",
        "model0_dense0_bias",
        "model0_dense1_weight",
        "model0_dense1_bias",
        "model0_hybridsequential0_dense0_weight",
        "model0_hybridsequential0_dense0_bias",
        "model0_hybridsequential0_dense1_weight",
        "model0_hybridsequential0_dense1_bias",
    ]
    assert list(m.params.keys()) == []
    assert [type(c).__name__ for c in m._children.values()] == [
        "Dense",
        "Dense",
        "HybridSequential",
    ]
    assert m.inner[1].prefix == "model0_hybridsequential0_relu0_"
    assert m.inner[0:2].prefix == "model0_hybridsequential0_" and len(m.inner[0:2]) == 2
    assert list(m.collect_params(".*hybridsequential.*weight").keys()) == [
        "model0_hybridsequential0_dense0_weight",
        "model0_hybridsequential0_dense1_weight",
    ]
    assert repr(m) == (
        "_Model(\n  (fc1): Dense(None -> 3, linear)\n  (fc2): Dense(None -> 3, linear)\n"
        "  (inner): HybridSequential(\n    (0): Dense(None -> 2, linear)\n"
        "    (1): Activation(relu)\n    (2): Dense(None -> 2, linear)\n  )\n)"
    )


def test_automatic_names_count_per_class() -> None:
    a, b = nn.Dense(1), nn.Dense(1)
    n = int(a.prefix[len("dense") : -1])
    assert b.prefix == f"dense{n + 1}_" and a.weight.name == f"dense{n}_weight"
    c = nn.Conv2D(2, 3)
    assert c.prefix.startswith("conv") and c.weight.name == c.prefix + "weight"
    assert nn.MaxPool2D().prefix.startswith("pool")
    assert nn.Dense(1, prefix="").prefix == ""
    shared = nn.Dense(3, in_units=2, prefix="s_")
    twin = nn.Dense(3, in_units=2, params=shared.params)
    assert twin.weight is shared.weight


def test_hybrid_forward_gets_F_and_params() -> None:
    seen: dict[str, Any] = {}

    class Scale(mx.gluon.HybridBlock):
        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            with self.name_scope():
                self.alpha = self.params.get("alpha", shape=(2,), init=mx.init.Constant(3.0))

        def hybrid_forward(self, F: Any, x: Any, alpha: Any) -> Any:
            seen["F"], seen["alpha"] = F, alpha
            return F.relu(x) * alpha

    blk = Scale(prefix="scale_")
    blk.initialize()
    x = mx.nd.array([[-1.0, 2.0]])
    with mx.autograd.record():
        y = blk(x)
    y.backward()
    assert seen["F"] is mx.nd and seen["alpha"] is blk.alpha.data()
    np.testing.assert_array_equal(y.asnumpy(), [[0, 6]])
    np.testing.assert_array_equal(blk.alpha.grad().asnumpy(), [0, 2])
    # Symbols: F = mx.sym and the parameters' symbols (named with the block's prefix)
    s = blk(mx.sym.var("data"))
    assert s.list_arguments() == ["data", "scale_alpha"]
    d = nn.Dense(2, in_units=3, prefix="d_")
    s = d(mx.sym.var("data"))
    # mxnet 1.9.1
    assert s.list_arguments() == ["data", "d_weight", "d_bias"]
    assert s.list_outputs() == ["d_fwd_output"]
    with pytest.raises(ValueError, match="mixed NDArrays and Symbols"):
        mx.gluon.HybridBlock.forward(blk, x, mx.sym.var("a"))
    with pytest.raises(ValueError, match="there must be one NDArray or one Symbol"):
        blk(3.0)


def test_registration_errors_as_mxnet() -> None:
    # mxnet 1.9.1's message
    with pytest.raises(
        ValueError, match="Children of HybridBlock must also be HybridBlock, but Sequential"
    ):
        nn.HybridSequential().add(nn.Sequential())
    blk = nn.Dense(2)
    with pytest.raises(TypeError, match="Changing attribute type for weight"):
        blk.weight = nn.Dense(1)  # type: ignore[assignment]
    with pytest.raises(AssertionError, match="Overriding Parameter attribute weight"):
        blk.weight = mx.gluon.Parameter("x", shape=(1,))
    with pytest.raises(NotImplementedError):
        mx.gluon.Block()(mx.nd.ones((1,)))
    # mxnet 1.9.1: export needs a hybridized block that ran forward once
    with pytest.raises(RuntimeError, match=r"Please first call block\.hybridize"):
        nn.Dense(1).export("x")

    class Deferred(mx.gluon.HybridBlock):
        def __init__(self) -> None:
            super().__init__(prefix="deferred_")
            self.w = self.params.get("w", shape=(0,), allow_deferred_init=True)

        def hybrid_forward(self, F: Any, x: Any, w: Any) -> Any:
            return F.broadcast_mul(x, w)

    d = Deferred()
    d.initialize()
    # mxnet 1.9.1: broadcast_mul infers nothing backwards
    with pytest.raises(
        ValueError,
        match="Deferred initialization failed because shape cannot be inferred. Cannot decide "
        r"shape for the following arguments \(0s in shape means unknown dimensions\)",
    ):
        d(mx.nd.ones((2,)))


def test_deferred_shapes_of_a_block_inferred_through_symbols() -> None:
    class Scale(mx.gluon.HybridBlock):
        def __init__(self, **kw: Any) -> None:
            super().__init__(**kw)
            with self.name_scope():
                self.w = self.params.get(
                    "w", shape=(0, 0), allow_deferred_init=True, init=mx.init.One()
                )
                self.fw = self.params.get(
                    "fw", shape=(4, 0), allow_deferred_init=True, init=mx.init.One()
                )

        def hybrid_forward(self, F: Any, x: Any, w: Any, fw: Any) -> Any:
            return F.FullyConnected(F.elemwise_mul(x, w), fw, no_bias=True, num_hidden=4)

    s = Scale(prefix="s_")
    s.initialize()
    # mxnet 1.9.1: [[3, 3, 3, 3], [3, 3, 3, 3]], w (2, 3), fw (4, 3)
    np.testing.assert_array_equal(s(mx.nd.ones((2, 3))).asnumpy(), np.full((2, 4), 3.0))
    assert s.w.shape == (2, 3) and s.fw.shape == (4, 3)


def test_register_child_hooks_apply_cast() -> None:
    seq = nn.HybridSequential(prefix="seq_")
    blk = nn.Dense(2, in_units=2, prefix="d_")
    seq.register_child(blk)
    seq.register_child(nn.Dense(1, in_units=2, prefix="e_"), "last")
    assert list(seq._children) == ["0", "last"] and len(seq) == 2
    calls: list[str] = []
    h1 = blk.register_forward_pre_hook(lambda b, args: calls.append("pre"))
    h2 = blk.register_forward_hook(lambda b, args, out: calls.append(f"post{out.shape}"))
    seq.initialize(mx.init.One())
    seq(mx.nd.ones((1, 2)))
    assert calls == ["pre", "post(1, 2)"]
    h1.detach()
    h2.detach()
    seq(mx.nd.ones((1, 2)))
    assert len(calls) == 2
    names: list[str] = []
    assert seq.apply(lambda b: names.append(b.name)) is seq
    assert names == ["d", "e", "seq"]
    seq.cast("float64")
    assert seq[0].weight.data().dtype == np.float64
    assert seq(mx.nd.ones((1, 2), dtype="float64")).dtype == np.float64


def test_hybridize_keeps_the_numbers() -> None:
    net = nn.HybridSequential(prefix="h_")
    with net.name_scope():
        net.add(nn.Dense(3, activation="relu", in_units=2), nn.Dense(1, in_units=3))
    net.initialize(mx.init.Xavier())
    x = mx.nd.array([[0.5, -1.0], [2.0, 0.25]])
    before = net(x).asnumpy()
    net.hybridize(static_alloc=True)
    assert net._active and net[0]._active
    np.testing.assert_array_equal(net(x).asnumpy(), before)
    seq = nn.Sequential()
    seq.add(nn.Dense(1))
    # mxnet 1.9.1's warning
    with pytest.warns(
        UserWarning,
        match="All children of this Sequential layer .* are "
        "HybridBlocks. Consider using HybridSequential",
    ):
        seq.hybridize()


def test_summary_as_mxnet(capsys: pytest.CaptureFixture[str]) -> None:
    class M(mx.gluon.Block):
        def __init__(self, **kw: Any) -> None:
            super().__init__(**kw)
            with self.name_scope():
                self.a = nn.Dense(2, in_units=2)
                self.b = nn.Sequential()
                self.b.add(nn.Dense(1, in_units=2))

        def forward(self, x: Any) -> Any:
            return self.b(self.a(x))

    m = M()
    m.initialize()
    m.summary(mx.nd.ones((1, 2)))
    # mxnet 1.9.1's table
    assert capsys.readouterr().out == (
        "-" * 80 + "\n"
        "        Layer (type)                                Output Shape         Param #\n"
        + "="
        * 80
        + "\n"
        "               Input                                      (1, 2)               0\n"
        "             Dense-1                                      (1, 2)               6\n"
        "             Dense-2                                      (1, 1)               3\n"
        "                 M-3                                      (1, 1)               0\n"
        + "="
        * 80
        + "\n"
        "Parameters in forward computation graph, duplicate included\n"
        "   Total params: 9\n"
        "   Trainable params: 9\n"
        "   Non-trainable params: 0\n"
        "Shared params in forward computation graph: 0\n"
        "Unique parameters in model: 9\n" + "-" * 80 + "\n"
    )
    assert list(m._collect_params_with_prefix()) == ["a.weight", "a.bias", "b.0.weight", "b.0.bias"]


#: ``save_parameters`` of mxnet 1.9.1 for a HybridSequential of Dense(2, in_units=2) and
#: Dense(1, in_units=2) whose parameters were set to arange(size) + i (i = 0..3)
_MXNET_PARAMS = bytes.fromhex(
    "120100000000000000000000000000000400000000000000c9fa93f900000000020000000200000000000000"
    "0200000000000000010000000000000000000000000000000000803f0000004000004040c9fa93f900000000"
    "0100000002000000000000000100000000000000000000000000803f00000040c9fa93f90000000002000000"
    "010000000000000002000000000000000100000000000000000000000000004000004040c9fa93f900000000"
    "0100000001000000000000000100000000000000000000000000404004000000000000000800000000000000"
    "302e7765696768740600000000000000302e626961730800000000000000312e776569676874060000000000"
    "0000312e62696173"
)


def _two_dense(prefix: str, known: bool = True, extra: bool = False) -> Any:
    net = nn.HybridSequential(prefix=prefix)
    with net.name_scope():
        net.add(nn.Dense(2, in_units=2 if known else 0), nn.Dense(1, in_units=2 if known else 0))
        if extra:
            net.add(nn.Dense(1))
    return net


def test_save_parameters_writes_mxnet_bytes(tmp_path: Path) -> None:
    net = _two_dense("net_")
    net.initialize()
    for i, p in enumerate(net.collect_params().values()):
        p.set_data(mx.nd.array(np.arange(np.prod(p.shape)).reshape(p.shape) + i))
    net.save_parameters(str(tmp_path / "net.params"))
    assert (tmp_path / "net.params").read_bytes() == _MXNET_PARAMS
    net.collect_params().save(str(tmp_path / "pd.params"), strip_prefix="net_")
    loaded = mx.nd.load(str(tmp_path / "pd.params"))
    assert sorted(loaded) == ["dense0_bias", "dense0_weight", "dense1_bias", "dense1_weight"]
    with pytest.raises(ValueError, match="Prefix 'zz_' is to be striped before saving"):
        net.collect_params().save(str(tmp_path / "x.params"), strip_prefix="zz_")


def test_load_parameters_of_mxnet(tmp_path: Path) -> None:
    f = tmp_path / "net.params"
    f.write_bytes(_MXNET_PARAMS)
    net = _two_dense("other_", known=False)  # attribute paths: the prefix does not matter
    net.load_parameters(str(f))
    expected = [[[0, 1], [2, 3]], [1, 2], [[2, 3]], [3]]
    for p, e in zip(net.collect_params().values(), expected):
        np.testing.assert_array_equal(p.data().asnumpy(), e)
        assert p.grad_req == "write" and p.grad().shape == p.shape
    np.testing.assert_array_equal(net(mx.nd.ones((1, 2))).asnumpy(), [[28.0]])
    # a file of parameter names (collect_params().save) is read with the block's prefix
    g = tmp_path / "pd.params"
    net.collect_params().save(str(g), strip_prefix="other_")
    net2 = _two_dense("again_")
    net2.initialize(mx.init.Zero())
    net2.load_parameters(str(g))
    np.testing.assert_array_equal(net2[0].weight.data().asnumpy(), [[0, 1], [2, 3]])
    # mxnet 1.9.1's errors
    with pytest.raises(
        AssertionError,
        match=r"Parameter '2.weight' is missing in file .*, which "
        "contains parameters: '0.weight', '0.bias', '1.weight', '1.bias'. Set "
        "allow_missing=True",
    ):
        _two_dense("n_", extra=True).load_parameters(str(f))
    net3 = _two_dense("n_", extra=True)
    net3.load_parameters(str(f), allow_missing=True)
    assert net3[2].weight.shape == (1, 0)
    one = nn.HybridSequential(prefix="one_")
    with one.name_scope():
        one.add(nn.Dense(2))
    with pytest.raises(
        ValueError,
        match=r"Parameter '1.weight' loaded from file .* is not present "
        "in ParameterDict.*Set ignore_extra=True",
    ):
        one.load_parameters(str(f))
    one.load_parameters(str(f), ignore_extra=True)
    np.testing.assert_array_equal(one[0].bias.data().asnumpy(), [1, 2])
    net4 = nn.HybridSequential(prefix="s_")
    with net4.name_scope():
        net4.add(nn.Dense(3), nn.Dense(1))
    with pytest.raises(AssertionError, match="shape incompatible expected"):
        net4.load_parameters(str(f))
    with pytest.raises(AssertionError, match="dtype incompatible"):
        d64 = _two_dense("d64_")
        d64.cast("float64")
        d64.load_parameters(str(f))


def test_sequential_and_lambda() -> None:
    seq = nn.Sequential(prefix="q_")
    with seq.name_scope():
        seq.add(nn.Dense(2, in_units=1), nn.Lambda("tanh"), nn.Lambda(lambda x: x * 2))
    seq.initialize(mx.init.One())
    np.testing.assert_allclose(
        seq(mx.nd.array([[0.5]])).asnumpy(), 2 * np.tanh([[0.5, 0.5]]), rtol=1e-6
    )
    assert repr(seq[1]) == "Lambda(tanh)"
    hl = nn.HybridLambda(lambda F, x: F.relu(x) * 2)
    # mxnet 1.9.1
    np.testing.assert_array_equal(hl(mx.nd.array([-1.0, 0.5])).asnumpy(), [0.0, 1.0])
    np.testing.assert_array_equal(nn.HybridLambda("relu")(mx.nd.array([-1.0])).asnumpy(), [0])
    with pytest.raises(AssertionError, match="Function name foo is not found in ndarray"):
        nn.Lambda("foo")
    with pytest.raises(ValueError, match="Unrecognized function in lambda"):
        nn.HybridLambda(3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert isinstance(seq[0:1], nn.Sequential)


def test_deprecated_and_unsupported_block_methods(tmp_path: Path) -> None:
    net = _two_dense("dep_")
    net.initialize(mx.init.One())
    f = str(tmp_path / "p.params")
    with pytest.warns(UserWarning, match="save_params is deprecated"):
        net.save_params(f)
    assert sorted(mx.nd.load(f)) == ["dense0_bias", "dense0_weight", "dense1_bias", "dense1_weight"]
    other = _two_dense("dep2_")
    with pytest.warns(UserWarning, match="load_params is deprecated"):
        other.load_params(f)
    np.testing.assert_array_equal(other[1].weight.data().asnumpy(), [[1, 1]])
    for call in (lambda: net.save("x"), lambda: net.load("x"), lambda: net.register_op_hook(print)):
        with pytest.raises(NotImplementedError, match=r"docs/migration-mxnet\.md"):
            call()


def test_blocks_in_a_list_are_not_registered() -> None:
    class Holder(mx.gluon.Block):
        def __init__(self) -> None:
            super().__init__(prefix="holder_")
            with self.name_scope():
                self.layers = [nn.Dense(2), nn.Dense(2)]

    h = Holder()
    # mxnet 1.9.1's warning; the parameters of the listed blocks are not collected
    with pytest.warns(UserWarning, match=r'"Holder.layers" is an unregistered container'):
        assert list(h.collect_params().keys()) == []
    h.register_child(h.layers[0])
    h.register_child(h.layers[1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert list(h.collect_params().keys()) == [
            "holder_dense0_weight",
            "holder_dense0_bias",
            "holder_dense1_weight",
            "holder_dense1_bias",
        ]
