"""mx.mod.Module with a kvstore against mxnet 1.9.1: a kvstore name with one device makes no
kvstore (the same numbers as a KVStore object), a KVStore object updates on the store
(``update_on_kvstore`` True: the weights after three ``fit`` epochs of SGD with momentum and of
Adam, and the store holds the weights), ``MXNET_UPDATE_ON_KVSTORE=0`` (the store only reduces:
it holds the last gradient, the local updater updates), ``save_optimizer_states`` /
``load_optimizer_states`` through the kvstore then one more epoch, ``borrow_optimizer``, and
the errors (a non-store kvstore ``TypeError``, ``dist_*`` ``NotImplementedError``).

Every expected number was printed by mxnet 1.9.1 for the same program
(``import mxnet as mx``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gradhub_compat.mxnet as mx
import numpy as np
import pytest

_rng = np.random.RandomState(0)
X = _rng.randn(8, 3).astype("float32")
Y = _rng.randn(8, 2).astype("float32")
W0 = (_rng.randn(2, 3) * 0.5).astype("float32")
B0 = np.zeros(2, "float32") + 0.1

SGD = ("sgd", {"learning_rate": 0.1, "momentum": 0.9})
ADAM = ("adam", {"learning_rate": 0.05})

# mxnet 1.9.1: three fit epochs (two batches each) with kvstore=mx.kv.create("local")
SGD_W3 = [
    [0.5707489848136902, -0.29971998929977417, -0.039521001279354095],
    [-0.024323999881744385, -0.7001810073852539, -0.35580500960350037],
]
SGD_B3 = [0.7062519788742065, -0.4302090108394623]
ADAM_W3 = [
    [-0.30567699670791626, -0.44360899925231934, -0.5597040057182312],
    [0.7133910059928894, -0.4930889904499054, -0.39735499024391174],
]
ADAM_B3 = [0.29815998673439026, -0.19002200663089752]
# mxnet 1.9.1: a new module with those weights, a new KVStore, the saved optimizer states
# loaded, then one epoch of forward_backward/update
SGD_W4 = [
    [0.7568860054016113, -0.33072200417518616, 0.27629101276397705],
    [-0.2023019939661026, -0.6939089894294739, -0.4419429898262024],
]
SGD_B4 = [0.7201979756355286, -0.44651299715042114]
ADAM_W4 = [
    [-0.19516399502754211, -0.31056299805641174, -0.39690300822257996],
    [0.5740349888801575, -0.6024590134620667, -0.38719698786735535],
]
ADAM_B4 = [0.3909350037574768, -0.3407140076160431]
# mxnet 1.9.1: two SGD-momentum epochs with a KVStore; with MXNET_UPDATE_ON_KVSTORE=0 the
# weights are the same and the store holds the last reduced gradient
SGD_W2 = [
    [0.2088650017976761, -0.4057930111885071, -0.3931860029697418],
    [0.3207629919052124, -0.5756980180740356, -0.2842159867286682],
]
LAST_GRAD = [
    [0.8634529709815979, 0.11118000000715256, -1.4403400421142578],
    [0.704177975654602, -0.32716500759124756, 0.6054120063781738],
]


def _net() -> Any:
    data = mx.sym.Variable("data")
    lab = mx.sym.Variable("lab")
    fc = mx.sym.FullyConnected(data, num_hidden=2, name="fc")
    return mx.sym.LinearRegressionOutput(fc, lab)


def _mk() -> tuple[Any, Any]:
    it = mx.io.NDArrayIter(X, Y, batch_size=4, label_name="lab")
    return it, mx.mod.Module(_net(), data_names=["data"], label_names=["lab"])


def _init() -> dict[str, Any]:
    return {"fc_weight": mx.nd.array(W0), "fc_bias": mx.nd.array(B0)}


def _fit(kvstore: Any, opt: tuple[str, dict[str, float]], epochs: int = 3) -> Any:
    it, mod = _mk()
    mod.fit(
        it,
        num_epoch=epochs,
        kvstore=kvstore,
        optimizer=opt[0],
        optimizer_params=opt[1],
        arg_params=_init(),
    )
    return mod


@pytest.mark.parametrize(
    ("opt", "w3", "b3", "w4", "b4"),
    [(SGD, SGD_W3, SGD_B3, SGD_W4, SGD_B4), (ADAM, ADAM_W3, ADAM_B3, ADAM_W4, ADAM_B4)],
)
def test_update_on_kvstore_fit_save_load(
    tmp_path: Path, opt: Any, w3: Any, b3: Any, w4: Any, b4: Any
) -> None:
    kv = mx.kv.create("local")
    mod = _fit(kv, opt)
    assert mod._kvstore is kv and mod._update_on_kvstore is True
    assert mod._updater is None  # the optimizer lives on the store
    args, _ = mod.get_params()
    np.testing.assert_allclose(args["fc_weight"].asnumpy(), w3, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(args["fc_bias"].asnumpy(), b3, rtol=1e-5, atol=1e-6)
    # the store holds the updated weights
    out = mx.nd.zeros((2, 3))
    kv.pull("fc_weight", out=out)
    np.testing.assert_allclose(out.asnumpy(), w3, rtol=1e-5, atol=1e-6)

    fname = str(tmp_path / "m.states")
    mod.save_optimizer_states(fname)
    it2, mod2 = _mk()
    mod2.bind(it2.provide_data, it2.provide_label)
    mod2.init_params(arg_params=args, aux_params={})
    mod2.init_optimizer(kvstore=mx.kv.create("local"), optimizer=opt[0], optimizer_params=opt[1])
    mod2.load_optimizer_states(fname)
    for batch in it2:
        mod2.forward_backward(batch)
        mod2.update()
    args2, _ = mod2.get_params()
    np.testing.assert_allclose(args2["fc_weight"].asnumpy(), w4, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(args2["fc_bias"].asnumpy(), b4, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("opt", [SGD, ADAM])
def test_kvstore_name_one_device_makes_none(opt: Any) -> None:
    ref = _fit(mx.kv.create("local"), opt).get_params()[0]
    for name in ("local", "device", None):
        mod = _fit(name, opt)
        assert mod._kvstore is None and mod._update_on_kvstore is False
        args, _ = mod.get_params()
        for k in ("fc_weight", "fc_bias"):
            np.testing.assert_array_equal(args[k].asnumpy(), ref[k].asnumpy())


@pytest.mark.parametrize("env", ["0", "1"])
def test_mxnet_update_on_kvstore_env(monkeypatch: pytest.MonkeyPatch, env: str) -> None:
    monkeypatch.setenv("MXNET_UPDATE_ON_KVSTORE", env)
    kv = mx.kv.create("local")
    mod = _fit(kv, SGD, epochs=2)
    assert mod._kvstore is kv
    assert mod._update_on_kvstore is (env == "1")
    np.testing.assert_allclose(
        mod.get_params()[0]["fc_weight"].asnumpy(), SGD_W2, rtol=1e-5, atol=1e-6
    )
    out = mx.nd.zeros((2, 3))
    kv.pull("fc_weight", out=out)
    np.testing.assert_allclose(
        out.asnumpy(), SGD_W2 if env == "1" else LAST_GRAD, rtol=1e-5, atol=1e-6
    )


def test_local_states_without_update_on_kvstore(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # MXNET_UPDATE_ON_KVSTORE=0: the states are the module's updater's, not the store's
    monkeypatch.setenv("MXNET_UPDATE_ON_KVSTORE", "0")
    kv = mx.kv.create("local")
    mod = _fit(kv, SGD, epochs=1)
    fname = tmp_path / "m.states"
    mod.save_optimizer_states(str(fname))
    assert fname.stat().st_size > 0
    with pytest.raises(AssertionError, match="no optimizer was set"):
        kv.save_optimizer_states(str(tmp_path / "kv.states"))
    mod.load_optimizer_states(str(fname))


def test_borrow_optimizer_shares_kvstore() -> None:
    kv = mx.kv.create("local")
    mod = _fit(kv, SGD, epochs=1)
    it, other = _mk()
    other.bind(it.provide_data, it.provide_label)
    other.init_params(arg_params=_init(), aux_params={})
    other.borrow_optimizer(mod)
    assert other._kvstore is kv and other._update_on_kvstore is True
    assert other._optimizer is mod._optimizer


def test_kvstore_errors() -> None:
    it, mod = _mk()
    mod.bind(it.provide_data, it.provide_label)
    mod.init_params(arg_params=_init(), aux_params={})
    with pytest.raises(TypeError, match="kvstore must be KVStore, str or None"):
        mod.init_optimizer(kvstore=1)
    with pytest.raises(NotImplementedError, match="dist_sync"):
        mod.init_optimizer(kvstore="dist_sync")
    assert not mod.optimizer_initialized
    with pytest.raises(NotImplementedError, match="dist_sync"):
        _fit("dist_sync", SGD, epochs=1)
