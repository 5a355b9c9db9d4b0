"""``mx.mod.Module`` with a CNN that has batch normalization (auxiliary states).

``data/cnn_module_reference.npz`` was written by mxnet 1.9.1 running
``data/make_cnn_module_reference.py``: the CNN trained by ``Module.fit`` for 2 epochs with SGD
momentum from given ``arg_params`` and ``aux_params``; the test runs the same script on this
layer and compares the parameters and moving statistics after training, the per-batch training
accuracy and ``predict``. The other tests cover ``init_params`` of the auxiliary states (the
variables' ``__init__`` attributes, as mxnet), ``get_params``/``set_params``, checkpoints with
``aux:NAME`` entries and a module reshaped for another batch size sharing the statistics.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import gradhub_compat.mxnet as mx
import numpy as np
import pytest
from gradhub_compat.mxnet import symbol as _symbol_module

DATA = Path(__file__).parent / "data"


@pytest.fixture(autouse=True)
def _fresh_names(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_symbol_module._names, "counters", {})


def _reference_script() -> ModuleType:
    """data/make_cnn_module_reference.py with ``import mxnet`` resolved to this layer."""
    saved = sys.modules.get("mxnet")
    sys.modules["mxnet"] = mx
    try:
        spec = importlib.util.spec_from_file_location(
            "make_cnn_module_reference", DATA / "make_cnn_module_reference.py"
        )
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    finally:
        if saved is None:
            del sys.modules["mxnet"]
        else:
            sys.modules["mxnet"] = saved
    return mod


def test_fit_equals_mxnet() -> None:
    ref = np.load(DATA / "cnn_module_reference.npz", allow_pickle=False)
    script = _reference_script()
    out = script.run_fit()
    for name in (*script.SHAPES, *script.AUX_SHAPES):
        key = f"arg_{name}" if name in script.SHAPES else f"aux_{name}"
        np.testing.assert_allclose(out[key], ref[f"fit_{key}"], rtol=1e-5, atol=1e-6, err_msg=key)
    for name in ("fc_weight", "bn2_gamma", "bn1_moving_mean", "bn2_moving_var"):
        key = f"arg_{name}" if name in script.SHAPES else f"aux_{name}"
        # training moved them well beyond the tolerance
        assert np.abs(out[key] - ref[f"init_{name}"]).max() > 0.05
    # a fixed gamma: set to 1 at each forward, then moved by weight decay only (as mxnet)
    assert (0.9999 < out["arg_bn1_gamma"]).all() and (out["arg_bn1_gamma"] < 1).all()
    np.testing.assert_array_equal(out["train_acc"], ref["fit_train_acc"])
    assert len(out["train_acc"]) == 10  # 5 batches x 2 epochs
    np.testing.assert_allclose(out["predict"], ref["fit_predict"], rtol=1e-5, atol=1e-6)


def _module(script: ModuleType, batch: int = 8) -> mx.mod.Module:
    mod = mx.mod.Module(script.network(), context=mx.cpu())
    mod.bind([("data", (batch, 2, 10, 10))], [("softmax_label", (batch,))])
    return mod


def test_init_get_and_set_params_with_aux_states() -> None:
    script = _reference_script()
    mod = _module(script)
    mod.init_params()
    args, auxs = mod.get_params()
    assert sorted(auxs) == sorted(script.AUX_SHAPES)
    # mxnet 1.9.1: moving_mean zeros, moving_var ones (the variables' __init__ attributes)
    np.testing.assert_array_equal(auxs["bn1_moving_mean"].asnumpy(), np.zeros(4))
    np.testing.assert_array_equal(auxs["bn2_moving_var"].asnumpy(), np.ones(6))
    np.testing.assert_array_equal(args["bn1_gamma"].asnumpy(), np.ones(4))
    init_args, init_auxs = script.initial_params()
    mod.set_params(
        {k: mx.nd.array(v) for k, v in init_args.items()},
        {k: mx.nd.array(v) for k, v in init_auxs.items()},
    )
    np.testing.assert_array_equal(
        mod._exec.aux_dict["bn2_moving_mean"].asnumpy(), init_auxs["bn2_moving_mean"]
    )
    with pytest.raises(RuntimeError, match="bn1_moving_mean is not presented"):
        mod.set_params({k: mx.nd.array(v) for k, v in init_args.items()}, {})
    # a training step changes the statistics that get_params returns
    d = script.inputs()
    batch = mx.io.DataBatch([mx.nd.array(d["train_x"][:8])], [mx.nd.array(d["train_y"][:8])])
    mod.init_optimizer(optimizer_params={"learning_rate": 0.0})
    mod.forward_backward(batch)
    mod.update()  # (get_params copies from the executor after an update, as mxnet)
    _, auxs = mod.get_params()
    assert not np.allclose(auxs["bn1_moving_mean"].asnumpy(), init_auxs["bn1_moving_mean"])
    # an inference forward leaves them
    mod.forward(batch, is_train=False)
    after = mod._exec.aux_dict["bn1_moving_mean"].asnumpy()
    np.testing.assert_array_equal(after, auxs["bn1_moving_mean"].asnumpy())


def test_checkpoint_carries_aux_states_and_predicts_the_same(tmp_path: Path) -> None:
    script = _reference_script()
    mod = _module(script)
    init_args, init_auxs = script.initial_params()
    mod.init_params(
        arg_params={k: mx.nd.array(v) for k, v in init_args.items()},
        aux_params={k: mx.nd.array(v) for k, v in init_auxs.items()},
    )
    prefix = str(tmp_path / "cnn")
    mod.save_checkpoint(prefix, 1)
    saved = mx.nd.load(f"{prefix}-0001.params")
    assert sorted(k for k in saved if k.startswith("aux:")) == [
        f"aux:{n}" for n in sorted(script.AUX_SHAPES)
    ]
    np.testing.assert_array_equal(
        saved["aux:bn2_moving_var"].asnumpy(), init_auxs["bn2_moving_var"]
    )
    sym, _, auxs = mx.model.load_checkpoint(prefix, 1)
    assert sym.list_auxiliary_states() == list(script.AUX_SHAPES)
    assert sorted(auxs) == sorted(script.AUX_SHAPES)
    d = script.inputs()
    data = mx.io.NDArrayIter(d["train_x"][:16], batch_size=8)
    want = mod.predict(data).asnumpy()
    loaded = mx.mod.Module.load(prefix, 1, context=mx.cpu())
    loaded.bind([("data", (8, 2, 10, 10))], [("softmax_label", (8,))], for_training=False)
    data.reset()
    np.testing.assert_array_equal(loaded.predict(data).asnumpy(), want)
    # mxnet 1.9.1 loading this checkpoint predicts (rounded) the same first rows
    np.testing.assert_allclose(
        want[:2],
        [
            [0.08875883, 0.21831164, 0.28668454, 0.08010472, 0.3261403],
            [0.08070272, 0.20735957, 0.26577064, 0.07386956, 0.37229747],
        ],
        rtol=1e-5,
    )


def test_reshaped_module_shares_the_aux_states() -> None:
    script = _reference_script()
    mod = _module(script)
    init_args, init_auxs = script.initial_params()
    mod.init_params(
        arg_params={k: mx.nd.array(v) for k, v in init_args.items()},
        aux_params={k: mx.nd.array(v) for k, v in init_auxs.items()},
    )
    old = mod._exec
    mod.reshape([("data", (4, 2, 10, 10))], [("softmax_label", (4,))])
    assert mod._exec is not old
    for name in script.AUX_SHAPES:
        assert mod._exec.aux_dict[name] is old.aux_dict[name]
    d = script.inputs()
    batch = mx.io.DataBatch([mx.nd.array(d["train_x"][:4])], [mx.nd.array(d["train_y"][:4])])
    mod.forward_backward(batch)
    x = d["train_x"][:4].astype(np.float64)
    assert not np.allclose(old.aux_dict["bn1_moving_mean"].asnumpy(), init_auxs["bn1_moving_mean"])
    assert x.shape == (4, 2, 10, 10)
