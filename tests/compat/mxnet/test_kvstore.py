"""mx.kv (mx.kvstore) against mxnet 1.9.1: init/push/pull/pushpull/broadcast with int and str
keys, lists of values summed and lists of outputs written, updates on the store
(set_optimizer: SGD with momentum and weight decay, Adam with rescale_grad, str keys), the
optimizer states saved and loaded (never a pickle), dtypes, and the errors."""

from __future__ import annotations

import pickle
from pathlib import Path

import gradhub_compat.mxnet as mx
import numpy as np
import pytest


def _np(a: mx.nd.NDArray) -> np.ndarray:
    return a.asnumpy()


def test_create_type_rank_workers() -> None:
    kv = mx.kv.create("local")
    assert mx.kv is mx.kvstore
    assert isinstance(kv, mx.kvstore.KVStore)
    # mxnet 1.9.1: local 0 1; create("Device").type == "device"
    assert (kv.type, kv.rank, kv.num_workers) == ("local", 0, 1)
    assert mx.kv.create("Device").type == "device"
    assert mx.kv.create().type == "local"
    # an older type name is a local store, its name kept (mxnet 1.9.1)
    assert mx.kv.create("local_allreduce_cpu").type == "local_allreduce_cpu"
    assert kv.is_capable("optimizer") and kv.is_capable("OPTIMIZER")
    with pytest.raises(ValueError, match=r"Unknown capability: foo"):
        kv.is_capable("foo")


def test_push_sums_a_list_and_pull_writes_every_output() -> None:
    kv = mx.kv.create("local")
    kv.init(3, mx.nd.ones((2, 3)))
    out = mx.nd.zeros((2, 3))
    kv.pull(3, out=out)
    np.testing.assert_array_equal(_np(out), np.ones((2, 3)))
    kv.push(3, [mx.nd.ones((2, 3)) * i for i in range(1, 4)])
    outs = [mx.nd.zeros((2, 3)) for _ in range(2)]
    kv.pull(3, out=outs)
    for o in outs:  # mxnet 1.9.1: 6.0 everywhere (1 + 2 + 3; no optimizer: the sum replaces)
        np.testing.assert_array_equal(_np(o), np.full((2, 3), 6.0))
    kv.push(3, mx.nd.ones((2, 3)) * 8)
    kv.pull(3, out=out)
    np.testing.assert_array_equal(_np(out), np.full((2, 3), 8.0))  # mxnet 1.9.1


def test_lists_of_keys() -> None:
    kv = mx.kv.create("local")
    kv.init([5, 7], [mx.nd.ones((2,)) * 2, mx.nd.ones((3,)) * 4])
    a, b = mx.nd.zeros((2,)), mx.nd.zeros((3,))
    kv.push([5, 7], [mx.nd.ones((2,)), mx.nd.ones((3,)) * 2])
    kv.pull([5, 7], out=[a, b])
    # mxnet 1.9.1: [1, 1] [2, 2, 2]
    np.testing.assert_array_equal(_np(a), [1.0, 1.0])
    np.testing.assert_array_equal(_np(b), [2.0, 2.0, 2.0])
    kv.push([5, 7], [[mx.nd.ones((2,)), mx.nd.ones((2,))], [mx.nd.ones((3,)) * 2] * 3])
    a2 = mx.nd.zeros((2,))
    kv.pull([5, 7], out=[[a, a2], b])
    # mxnet 1.9.1: [2, 2] [6, 6, 6]
    np.testing.assert_array_equal(_np(a), [2.0, 2.0])
    np.testing.assert_array_equal(_np(a2), [2.0, 2.0])
    np.testing.assert_array_equal(_np(b), [6.0, 6.0, 6.0])


def test_str_keys_pushpull_and_broadcast() -> None:
    kv = mx.kv.create("local")
    kv.init("w", mx.nd.array([1.0, 2.0]))
    kv.push("w", [mx.nd.array([1.0, 1.0]), mx.nd.array([2.0, 3.0])])
    o = mx.nd.zeros((2,))
    kv.pull("w", out=o)
    np.testing.assert_array_equal(_np(o), [3.0, 4.0])  # mxnet 1.9.1
    v = [mx.nd.array([1.0, 2.0]), mx.nd.array([3.0, 5.0])]
    kv.pushpull("w", v)  # no out: the pushed arrays receive the sum
    for x in v:
        np.testing.assert_array_equal(_np(x), [4.0, 7.0])  # mxnet 1.9.1
    outs = [mx.nd.zeros((2,)), mx.nd.zeros((2,))]
    kv.pushpull("w", [mx.nd.array([1.0, 2.0])], out=outs)
    for x in outs:
        np.testing.assert_array_equal(_np(x), [1.0, 2.0])  # mxnet 1.9.1
    kv5 = mx.kv.create("local")
    outs = [mx.nd.zeros((2,)), mx.nd.zeros((2,))]
    kv5.broadcast("k", mx.nd.array([1.0, 2.0]), out=outs)
    for x in outs:
        np.testing.assert_array_equal(_np(x), [1.0, 2.0])  # mxnet 1.9.1
    with pytest.raises(mx.MXNetError, match=r"duplicate init of key k"):
        kv5.broadcast("k", mx.nd.array([7.0, 2.0]), out=outs)


def test_sgd_on_the_store_int_keys() -> None:
    kv = mx.kv.create("device")
    kv.set_optimizer(mx.optimizer.create("sgd", learning_rate=0.1, momentum=0.9, wd=0.01))
    kv.init(0, mx.nd.array([1.0, 2.0, 3.0]))
    kv.init(1, mx.nd.array([0.5]))
    for _ in range(3):
        kv.push(0, [mx.nd.array([0.1, 0.2, 0.3]), mx.nd.array([1.0, -1.0, 0.5])])
        kv.push(1, mx.nd.array([0.25]))
    o, ob = mx.nd.zeros((3,)), mx.nd.zeros((1,))
    kv.pull(0, out=o)
    kv.pull(1, out=ob)
    # mxnet 1.9.1
    np.testing.assert_allclose(
        _np(o), [0.3778226375579834, 2.4372057914733887, 2.5347683429718018], rtol=1e-6
    )
    np.testing.assert_allclose(_np(ob), [0.35706740617752075], rtol=1e-6)
    states = kv._updater.states
    np.testing.assert_allclose(
        _np(states[0]), [-0.3003883361816406, 0.21108368039131165, -0.224614679813385], rtol=1e-6
    )
    np.testing.assert_allclose(_np(states[1]), [-0.06900811940431595], rtol=1e-6)
    assert kv._updater.optimizer.num_update == 3
    assert kv._updater.optimizer._index_update_count == {0: 3, 1: 3}


def test_optimizer_states_saved_and_loaded(tmp_path: Path) -> None:
    kv = mx.kv.create("device")
    kv.set_optimizer(mx.optimizer.create("sgd", learning_rate=0.1, momentum=0.9, wd=0.01))
    kv.init(0, mx.nd.array([1.0, 2.0, 3.0]))
    for _ in range(3):
        kv.push(0, [mx.nd.array([0.1, 0.2, 0.3]), mx.nd.array([1.0, -1.0, 0.5])])
    fname = tmp_path / "kv.states"
    kv.save_optimizer_states(fname, dump_optimizer=True)
    assert not fname.read_bytes().startswith(b"\x80")  # not a pickle
    kv3 = mx.kv.create("local")
    kv3.set_optimizer(mx.optimizer.create("sgd", learning_rate=0.5))
    kv3.init(0, mx.nd.array([1.0, 2.0, 3.0]))
    kv3.load_optimizer_states(fname)
    kv3.push(0, mx.nd.array([1.0, 1.0, 1.0]))
    o = mx.nd.zeros((3,))
    kv3.pull(0, out=o)
    # mxnet 1.9.1: the loaded optimizer (lr 0.1, momentum 0.9) and momentum state
    np.testing.assert_allclose(
        _np(o), [0.6286505460739136, 2.087975263595581, 2.6948468685150146], rtol=1e-6
    )
    assert (kv3._updater.optimizer.lr, kv3._updater.optimizer.momentum) == (0.1, 0.9)
    # an mxnet states file is a pickle: refused without being unpickled
    (tmp_path / "mx.states").write_bytes(pickle.dumps({0: None}))
    with pytest.raises(ValueError, match=r"never unpickles"):
        kv3.load_optimizer_states(tmp_path / "mx.states")


def test_adam_pushpull_with_rescale_grad() -> None:
    kv = mx.kv.create("local")
    kv.set_optimizer(mx.optimizer.Adam(learning_rate=0.01, rescale_grad=0.5))
    kv.init(1, mx.nd.array([[1.0, 2.0], [3.0, 4.0]]))
    outs = [mx.nd.zeros((2, 2)), mx.nd.zeros((2, 2))]
    for _ in range(2):
        kv.pushpull(
            1,
            [mx.nd.array([[1.0, 2.0], [3.0, 4.0]]), mx.nd.array([[0.5, 0.5], [-1.0, 2.0]])],
            out=outs,
        )
    for x in outs:  # mxnet 1.9.1
        np.testing.assert_allclose(
            _np(x),
            [[0.9799998998641968, 1.9799997806549072], [2.9800000190734863, 3.9800000190734863]],
            rtol=1e-6,
        )


def test_str_keys_on_the_store_and_optimizer_set_late() -> None:
    kv = mx.kv.create("local")
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=0.5))
    kv.init(["wa", "wb"], [mx.nd.array([1.0, 2.0]), mx.nd.array([3.0])])
    kv.push(["wa", "wb"], [mx.nd.array([1.0, 1.0]), mx.nd.array([2.0])])
    kv.push("wa", mx.nd.array([1.0, 0.0]))
    o = mx.nd.zeros((2,))
    kv.pull("wa", out=o)
    np.testing.assert_allclose(_np(o), [0.75, 1.850000023841858], rtol=1e-6)  # mxnet 1.9.1
    assert sorted(kv._updater.states) == ["wa", "wb"]
    assert kv._updater.optimizer._index_update_count == {"wa": 2, "wb": 1}
    # pushes before set_optimizer replace the value, after it update it (mxnet 1.9.1: [2, 1])
    kv6 = mx.kv.create("local")
    kv6.init(0, mx.nd.array([1.0, 1.0]))
    kv6.push(0, mx.nd.array([3.0, 3.0]))
    kv6.set_optimizer(mx.optimizer.SGD(learning_rate=1.0))
    kv6.push(0, mx.nd.array([1.0, 2.0]))
    kv6.pull(0, out=o)
    np.testing.assert_array_equal(_np(o), [2.0, 1.0])


def test_dtypes_are_converted() -> None:
    kv = mx.kv.create("local")
    kv.init(0, mx.nd.array([1.0, 1.0]))
    kv.push(0, mx.nd.array([1.0, 2.0], dtype="float64"))
    o = mx.nd.zeros((2,))
    kv.pull(0, out=o)
    assert o.dtype == np.float32
    np.testing.assert_array_equal(_np(o), [1.0, 2.0])  # mxnet 1.9.1
    o64 = mx.nd.zeros((2,), dtype="float64")
    kv.init(1, mx.nd.array([1.0, 1.0], dtype="float64"))
    kv.push(1, mx.nd.array([0.1, 0.2]))
    kv.pull(1, out=o64)
    # mxnet 1.9.1: the float32 values widened
    np.testing.assert_array_equal(_np(o64), [0.10000000149011612, 0.20000000298023224])


def test_errors() -> None:
    kv = mx.kv.create("local")
    kv.init(3, mx.nd.ones((2, 3)))
    with pytest.raises(mx.MXNetError, match=r"duplicate init of key 3"):
        kv.init(3, mx.nd.ones((2, 3)))
    with pytest.raises(mx.MXNetError, match=r"KVStore.pull: key 99 has not been inited"):
        kv.pull(99, out=mx.nd.zeros((2,)))
    with pytest.raises(mx.MXNetError, match=r"KVStore.push: key 99 has not been inited"):
        kv.push(99, mx.nd.zeros((2,)))
    with pytest.raises(mx.MXNetError, match=r"shape mismatch from.shape = \[3, 3\]"):
        kv.push(3, mx.nd.zeros((3, 3)))
    with pytest.raises(mx.MXNetError, match=r"KVStore.pull: operands shape mismatch"):
        kv.pull(3, out=mx.nd.zeros((3, 3)))  # mxnet 1.9.1 writes nothing and says nothing
    with pytest.raises(mx.MXNetError, match=r"Mixed key types are not allowed"):
        kv.init("w", mx.nd.ones((2,)))
    with pytest.raises(ValueError, match=r"KVStore.pull: out is required"):
        kv.pull(3)
    with pytest.raises(TypeError, match=r"inconsistent types of keys"):
        kv.push([3, "w"], [mx.nd.zeros((2, 3)), mx.nd.zeros((2,))])
    with pytest.raises(TypeError, match=r"KVStore.push: a key must be an int or a str"):
        kv.push(3.0, mx.nd.zeros((2, 3)))
    with pytest.raises(TypeError, match=r"KVStore.push: the values of key 3 must be NDArrays"):
        kv.push(3, np.zeros((2, 3)))
    with pytest.raises(TypeError, match=r"KVStore.init: key 4 takes one NDArray"):
        kv.init(4, [mx.nd.zeros((2,)), mx.nd.zeros((2,))])
    with pytest.raises(TypeError, match=r"name must be a string"):
        mx.kv.create(3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"unknown kvstore type 'foo'"):
        mx.kv.create("foo")
    for name in ("dist_sync", "dist_device_sync", "dist_async", "horovod"):
        with pytest.raises(NotImplementedError, match=r"gradhub-mpi.*migration-mxnet"):
            mx.kv.create(name)
    with pytest.raises(NotImplementedError, match=r"gradient compression.*migration-mxnet"):
        kv.set_gradient_compression({"type": "2bit", "threshold": 0.5})
    with pytest.raises(NotImplementedError, match=r"row_sparse"):
        kv.row_sparse_pull(3, out=mx.nd.zeros((2, 3)), row_ids=mx.nd.array([0]))
    with pytest.raises(AssertionError, match=r"no optimizer was set"):
        kv.save_optimizer_states("unused.states")
    with pytest.raises(TypeError, match=r"KVStore.set_optimizer: optimizer must be"):
        kv.set_optimizer("sgd")  # type: ignore[arg-type]


def test_a_custom_updater() -> None:
    # mxnet's own kvstore test: updater(key, recv, local) with ``local += recv``
    seen = []

    def updater(key: object, recv: mx.nd.NDArray, local: mx.nd.NDArray) -> None:
        seen.append(key)
        local += recv

    kv = mx.kv.create()
    kv.init(["b", "c"], [mx.nd.zeros((2, 2))] * 2)
    kv._set_updater(updater)
    devs = [mx.Context("cpu", i) for i in range(4)]
    for _ in range(3):
        kv.push(["b", "c"], [[mx.nd.ones((2, 2), d) for d in devs]] * 2)
    outs = [mx.nd.zeros((2, 2), d) for d in devs]
    kv.pull("c", out=outs)
    for o in outs:
        np.testing.assert_array_equal(o.asnumpy(), np.full((2, 2), 12.0))
        assert o.context in devs
    assert seen == ["b", "c"] * 3
