"""gluon.Trainer's kvstore against mxnet 1.9.1: when a kvstore is made (several contexts, a
KVStore object) and when not (one context, kvstore=None), update_on_kvstore's default (True,
MXNET_UPDATE_ON_KVSTORE=0 makes it False) and the explicit values, the weights after three
steps of SGD (momentum, weight decay) and Adam on two contexts with different gradients,
where the optimizer states live, update()/allreduce_grads() refused on the kvstore, a stale
step, save_states/load_states from the kvstore's updater, set_data and ParameterDict.load
resetting the kvstore, _reset_kvstore, and the errors.

Every expected number was printed by mxnet 1.9.1 for the same program
(``import mxnet as mx``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gradhub_compat.mxnet as mx
import numpy as np
import pytest
from gradhub_compat.mxnet import gluon

C2 = [mx.cpu(0), mx.cpu(1)]
SGD = ("sgd", {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01})
ADAM = ("adam", {"learning_rate": 0.01})

# mxnet 1.9.1: three steps of _step() on two contexts, reduced by the kvstore
SGD_3 = [0.1536146104335785, 2.675955057144165, 0.5740047693252563]
SGD_3_STATE = [-0.4086363613605499, 0.8091540932655334, -0.2056712806224823]
# mxnet 1.9.1: one context (or kvstore=None: each context with its own gradient)
SGD_3_CTX0 = [0.7141348123550415, 1.554914951324463, 0.8542647957801819]
SGD_3_CTX1 = [0.4338746964931488, 2.1154348850250244, 0.7141348123550415]
SGD_3_CTX0_STATE = [-0.1380162388086319, 0.26791390776634216, -0.07036121934652328]


def _make(ctxs: list[Any], opt: tuple[str, dict[str, Any]] = SGD, **kw: Any) -> Any:
    x = gluon.Parameter("x", shape=(3,))
    x.initialize(ctx=ctxs, init=mx.init.Constant(1.0))
    return x, gluon.Trainer([x], opt[0], opt[1], **kw)


def _backward(x: Any) -> None:
    with mx.autograd.record():
        for i, w in enumerate(x.list_data()):
            y = (w * mx.nd.array([1.0, -2.0, 0.5], ctx=w.context) * (i + 1.0)).sum()
            y.backward()


def _step(x: Any, tr: Any) -> None:
    _backward(x)
    tr.step(2)


def _data(x: Any) -> list[np.ndarray]:
    return [d.asnumpy() for d in x.list_data()]


def _close(actual: Any, expected: Any) -> None:
    np.testing.assert_allclose(actual, expected, rtol=1e-6, atol=1e-7)


def test_two_contexts_update_on_the_kvstore(tmp_path: Path) -> None:
    x, tr = _make(C2)
    assert (tr._kvstore, tr._update_on_kvstore, tr._kv_initialized) == (None, None, False)
    for _ in range(3):
        _step(x, tr)
    assert isinstance(tr._kvstore, mx.kv.KVStore)
    assert (tr._kvstore.type, tr._update_on_kvstore, tr._kv_initialized) == ("device", True, True)
    for d in _data(x):
        _close(d, SGD_3)
    assert tr._updaters[0].states == {}  # the states live on the kvstore's updater
    _close(tr._kvstore._updater.states[0].asnumpy(), SGD_3_STATE)
    assert tr._kvstore._updater.optimizer is tr._optimizer
    assert (tr._optimizer.num_update, tr._optimizer.rescale_grad) == (3, 0.5)
    with pytest.raises(AssertionError, match=r"update\(\) when parameters are updated on kv"):
        tr.update(2)
    with pytest.raises(AssertionError, match=r"allreduce_grads\(\) when parameters are upd"):
        tr.allreduce_grads()
    tr.step(2)  # stale gradients: no warning, the kvstore updates again (mxnet 1.9.1)
    tr.save_states(tmp_path / "t.states")
    tr.load_states(tmp_path / "t.states")
    assert tr._kvstore._updater.optimizer is tr._optimizer
    assert tr._optimizer is not tr._updaters[0].optimizer
    assert tr._optimizer.num_update == 4
    assert tr._optimizer.param_dict == {0: x}
    _step(x, tr)
    for d in _data(x):
        _close(d, [-0.9800810813903809, 4.920823097229004, 0.003402918577194214])
    # set_data: the kvstore (and its momentum) is made again from the new value
    x.set_data(mx.nd.array([2.0, 2.0, 2.0]))
    _step(x, tr)
    for d in _data(x):
        _close(d, [1.8480000495910645, 2.2980000972747803, 1.9229999780654907])


def test_two_contexts_update_on_false(tmp_path: Path) -> None:
    x, tr = _make(C2, update_on_kvstore=False)
    for _ in range(3):
        _step(x, tr)
    assert (tr._kvstore.type, tr._update_on_kvstore) == ("device", False)
    for d in _data(x):
        _close(d, SGD_3)
    _close(tr._updaters[0].states[0].asnumpy(), SGD_3_STATE)
    assert tr._kvstore._updater is None
    tr.allreduce_grads()  # allowed; the gradients are stale now
    with pytest.raises(UserWarning, match=r"has not been updated by backward"):
        tr.update(2)
    with pytest.raises(UserWarning, match=r"has not been updated by backward"):
        tr.step(2)
    tr.save_states(tmp_path / "t.states")
    tr.load_states(tmp_path / "t.states")
    assert tr._optimizer is tr._updaters[0].optimizer and tr._optimizer.num_update == 3
    _step(x, tr)
    for d in _data(x):
        _close(d, [-0.36431172490119934, 3.7015178203582764, 0.3133265972137451])
    x.set_data(mx.nd.array([2.0, 2.0, 2.0]))  # the Trainer's momentum is kept
    _step(x, tr)
    for d in _data(x):
        _close(d, [1.3818663358688354, 3.221006393432617, 1.6883896589279175])


def test_what_the_kvstore_holds() -> None:
    x, tr = _make(C2, update_on_kvstore=False)
    _step(x, tr)
    o = mx.nd.zeros((3,))
    tr._kvstore.pull(0, out=o)
    # mxnet 1.9.1: the summed gradient, written into every context's gradient
    np.testing.assert_array_equal(o.asnumpy(), [3.0, -6.0, 1.5])
    for g in x.list_grad():
        np.testing.assert_array_equal(g.asnumpy(), [3.0, -6.0, 1.5])
    x, tr = _make(C2)
    _step(x, tr)
    tr._kvstore.pull(0, out=o)
    # mxnet 1.9.1: the weights; the gradients stay each context's own
    _close(o.asnumpy(), [0.8489999771118164, 1.2990000247955322, 0.9240000247955322])
    np.testing.assert_array_equal(x.list_grad()[0].asnumpy(), [1.0, -2.0, 0.5])
    np.testing.assert_array_equal(x.list_grad()[1].asnumpy(), [2.0, -4.0, 1.0])


def test_adam_on_the_kvstore_and_not(tmp_path: Path) -> None:
    for uokv, after_load, after_set in [
        (None, [0.9499997496604919, 1.050000548362732], [1.9947787523269653, 2.005221128463745]),
        (False, [0.9599997997283936, 1.0400004386901855], [1.9899998903274536, 2.009999990463257]),
    ]:
        x, tr = _make(C2, ADAM, update_on_kvstore=uokv)
        for _ in range(3):
            _step(x, tr)
        assert tr._update_on_kvstore is (uokv is None)
        for d in _data(x):
            _close(d, [0.9699998497962952, 1.0300003290176392, 0.9699998497962952])
        updater = tr._kvstore._updater if uokv is None else tr._updaters[0]
        mean, var = updater.states[0]
        _close(mean.asnumpy(), [0.40650010108947754, -0.8130002021789551, 0.20325005054473877])
        _close(var.asnumpy(), [0.006743165198713541, 0.026972660794854164, 0.0016857912996783853])
        if uokv is None:
            tr.step(2)  # stale: one more update on the kvstore
        tr.save_states(tmp_path / "a.states")
        tr.load_states(tmp_path / "a.states")
        _step(x, tr)
        for d in _data(x):
            _close(d, [after_load[0], after_load[1], after_load[0]])
        x.set_data(mx.nd.array([2.0, 2.0, 2.0]))
        _step(x, tr)
        for d in _data(x):
            _close(d, [after_set[0], after_set[1], after_set[0]])


def test_no_kvstore() -> None:
    # one context: no kvstore, whatever kvstore= says (mxnet 1.9.1)
    x, tr = _make([mx.cpu(0)])
    for _ in range(3):
        _step(x, tr)
    assert (tr._kvstore, tr._update_on_kvstore, tr._kv_initialized) == (None, None, True)
    _close(_data(x)[0], SGD_3_CTX0)
    _close(tr._updaters[0].states[0].asnumpy(), SGD_3_CTX0_STATE)
    # kvstore=None on two contexts: nothing is reduced, each copy takes its own gradient
    x, tr = _make(C2, kvstore=None)
    for _ in range(3):
        _step(x, tr)
    assert tr._kvstore is None
    _close(_data(x)[0], SGD_3_CTX0)
    _close(_data(x)[1], SGD_3_CTX1)
    tr.allreduce_grads()  # nothing to do
    # compression_params without a kvstore are not used (mxnet 1.9.1)
    x, tr = _make([mx.cpu(0)], compression_params={"type": "2bit", "threshold": 0.5})
    for _ in range(3):
        _step(x, tr)
    _close(_data(x)[0], SGD_3_CTX0)


def test_a_kvstore_object() -> None:
    kv = mx.kv.create("local")
    x, tr = _make([mx.cpu(0)], kvstore=kv)
    for _ in range(3):
        _step(x, tr)
    assert tr._kvstore is kv and tr._update_on_kvstore is True  # even on one context
    _close(_data(x)[0], SGD_3_CTX0)
    assert tr._updaters[0].states == {}
    _close(kv._updater.states[0].asnumpy(), SGD_3_CTX0_STATE)
    x.set_data(mx.nd.array([2.0, 2.0, 2.0]))
    _backward(x)
    # mxnet 1.9.1: the reset store is initialized again, which the same object refuses
    with pytest.raises(mx.MXNetError, match=r"duplicate init of key 0"):
        tr.step(2)
    x, tr = _make([mx.cpu(0)], kvstore=mx.kv.create("local"), update_on_kvstore=False)
    for _ in range(3):
        _step(x, tr)
    assert (tr._kvstore.type, tr._update_on_kvstore) == ("local", False)
    _close(_data(x)[0], SGD_3_CTX0)


def test_update_on_kvstore_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    x, tr = _make(C2, kvstore="local", update_on_kvstore=True)
    for _ in range(3):
        _step(x, tr)
    assert (tr._kvstore.type, tr._update_on_kvstore) == ("local", True)
    for d in _data(x):
        _close(d, SGD_3)
    monkeypatch.setenv("MXNET_UPDATE_ON_KVSTORE", "0")
    x, tr = _make(C2)
    _step(x, tr)
    assert (tr._kvstore.type, tr._update_on_kvstore) == ("device", False)  # mxnet 1.9.1
    x, tr = _make(C2, update_on_kvstore=True)
    _step(x, tr)
    assert (tr._kvstore.type, tr._update_on_kvstore) == ("device", True)  # mxnet 1.9.1


def test_reset_kvstore() -> None:
    x, tr = _make(C2)
    _step(x, tr)
    tr._reset_kvstore()
    assert (tr._kvstore, tr._kv_initialized, tr._params_to_init) == (None, False, [x])
    _step(x, tr)  # a new kvstore and a new momentum
    assert tr._kvstore.type == "device"
    for d in _data(x):
        _close(d, [0.6981509923934937, 1.597701072692871, 0.8480760455131531])


@pytest.mark.parametrize("kv", ["local", "device"])
def test_loaded_parameters_reset_the_kvstore(kv: str, tmp_path: Path) -> None:
    # mxnet's test_trainer_reset_kv: the step after ParameterDict.load starts from the file
    params = gluon.ParameterDict()
    x = params.get("x", shape=(10,), lr_mult=1.0)
    params.initialize(ctx=C2, init="zeros")
    trainer = gluon.Trainer(params, "sgd", {"learning_rate": 0.1}, kvstore=kv)
    params.save(str(tmp_path / "p.params"))
    for _ in range(2):
        with mx.autograd.record():
            for w in x.list_data():
                (w + 1).backward()
        trainer.step(1)
        assert trainer._kvstore.type == kv
        if _ == 0:
            params.load(str(tmp_path / "p.params"))
            # as mxnet 1.9.1's Parameter.set_data: the kvstore is dropped at once (before, it
            # was kept until the next step compared every weight with its copy)
            assert trainer._kvstore is None and not trainer._kv_initialized
    for d in _data(x):
        np.testing.assert_allclose(d, np.full(10, -0.2), rtol=1e-6)


def test_errors() -> None:
    x = gluon.Parameter("x", shape=(3,))
    x.initialize(ctx=C2)
    with pytest.raises(TypeError, match=r"kvstore must be KVStore, str or None, got int"):
        gluon.Trainer([x], "sgd", kvstore=3)
    with pytest.raises(TypeError, match=r"update_on_kvstore must be True, False or None"):
        gluon.Trainer([x], "sgd", update_on_kvstore=1)
    for name in ("dist_sync", "dist_async", "horovod"):
        with pytest.raises(NotImplementedError, match=r"gradhub-mpi.*migration-mxnet"):
            gluon.Trainer([x], "sgd", kvstore=name)
    with pytest.raises(NotImplementedError, match=r"compression_params.*migration-mxnet"):
        gluon.Trainer([x], "sgd", compression_params={"type": "2bit", "threshold": 0.5})
    y = gluon.Parameter("y", shape=(3,))
    y.initialize(ctx=[mx.cpu(0)])
    with pytest.raises(NotImplementedError, match=r"compression_params"):
        gluon.Trainer(
            [y], "sgd", kvstore=mx.kv.create("local"), compression_params={"type": "2bit"}
        )
