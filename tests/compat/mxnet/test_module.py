"""mxnet's Module API (``mx.mod.Module``) and training callbacks (``mx.callback``).

``data/module_reference.npz`` was written by mxnet 1.9.1 running
``data/make_module_reference.py``: a symbolic MLP trained by ``Module.fit`` for 2 epochs with
SGD momentum from given parameters, without and with shuffling; the tests run the same script
on this layer and compare the parameters after training, the per-batch training accuracy, the
validation accuracy, ``score`` and ``predict``. The single-step tests compare with numpy
formulas.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import sys
from pathlib import Path
from types import ModuleType

import gradhub_compat.mxnet as mx
import numpy as np
import pytest

DATA = Path(__file__).parent / "data"


def _reference_script() -> ModuleType:
    """data/make_module_reference.py with ``import mxnet`` resolved to this layer."""
    saved = sys.modules.get("mxnet")
    sys.modules["mxnet"] = mx
    try:
        spec = importlib.util.spec_from_file_location(
            "make_module_reference", DATA / "make_module_reference.py"
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


@pytest.mark.parametrize("tag", ["plain", "shuffle"])
def test_fit_score_predict_equal_mxnet(tag: str) -> None:
    ref = np.load(DATA / "module_reference.npz", allow_pickle=False)
    script = _reference_script()
    out = script.run(shuffle=tag == "shuffle")
    for name in ("fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias", "fc3_weight", "fc3_bias"):
        got = out[f"arg_{name}"]
        np.testing.assert_allclose(got, ref[f"{tag}_arg_{name}"], rtol=1e-5, atol=1e-6)
        # training moved the parameters well beyond the tolerance
        assert np.abs(got - ref[f"init_{name}"]).max() > 1e-2
    np.testing.assert_array_equal(out["train_acc"], ref[f"{tag}_train_acc"])
    assert len(out["train_acc"]) == 14  # 7 batches (the last padded) x 2 epochs
    np.testing.assert_array_equal(out["val_acc"], ref[f"{tag}_val_acc"])
    np.testing.assert_allclose(out["score"], ref[f"{tag}_score"], rtol=1e-6)
    np.testing.assert_allclose(out["predict"], ref[f"{tag}_predict"], rtol=1e-5, atol=1e-6)
    assert out["predict"].shape == (20, 3)


def _fc_module(**kwargs) -> mx.mod.Module:
    net = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=3, name="fc")
    net = mx.sym.SoftmaxOutput(net, name="softmax")
    return mx.mod.Module(net, **kwargs)


W0 = np.array([[0.1, -0.2], [0.3, 0.4], [-0.5, 0.2]], np.float32)
B0 = np.array([0.1, 0.0, -0.1], np.float32)
X = np.array([[1.0, 2.0], [-1.0, 0.5], [0.5, -1.5], [2.0, 1.0]], np.float32)
Y = np.array([0, 2, 1, 2], np.float32)


def _softmax_grads(w: np.ndarray, b: np.ndarray, x: np.ndarray, y: np.ndarray):
    """float64: probabilities p, d/dz = p - onehot(y), grads of W, b and x."""
    z = x.astype(np.float64) @ w.T.astype(np.float64) + b
    p = np.exp(z - z.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    dz = p - np.eye(3)[y.astype(int)]
    return p, dz.T @ x, dz.sum(0), dz @ w.astype(np.float64)


def _bound(**kwargs) -> mx.mod.Module:
    mod = _fc_module(**{k: v for k, v in kwargs.items() if k == "fixed_param_names"})
    mod.bind([("data", (4, 2))], [("softmax_label", (4,))], inputs_need_grad=True)
    mod.init_params(arg_params={"fc_weight": mx.nd.array(W0), "fc_bias": mx.nd.array(B0)})
    return mod


def _batch() -> mx.io.DataBatch:
    return mx.io.DataBatch([mx.nd.array(X)], [mx.nd.array(Y)])


def test_forward_backward_outputs_and_input_grads() -> None:
    mod = _bound()
    mod.forward_backward(_batch())
    p, _, _, dx = _softmax_grads(W0, B0, X, Y)
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), p, rtol=1e-5)
    np.testing.assert_allclose(mod.get_input_grads()[0].asnumpy(), dx, rtol=1e-5, atol=1e-6)
    assert mod.get_outputs(merge_multi_context=False)[0][0] is mod.get_outputs()[0]
    assert mod.get_input_grads(merge_multi_context=False)[0][0] is mod.get_input_grads()[0]
    assert mod.output_shapes == [("softmax_output", (4, 3))]
    assert mod.output_names == ["softmax_output"]
    assert mod.data_names == ["data"] and mod.label_names == ["softmax_label"]
    assert [tuple(d) for d in mod.data_shapes] == [("data", (4, 2))]
    assert [tuple(d) for d in mod.label_shapes] == [("softmax_label", (4,))]


def test_update_is_sgd_with_rescale_and_bias_without_weight_decay() -> None:
    mod = _bound()
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.5, "wd": 0.1})
    assert mod._optimizer.rescale_grad == 0.25  # 1 / batch_size, as mxnet
    mod.forward_backward(_batch())
    mod.update()
    _, dw, db, _ = _softmax_grads(W0, B0, X, Y)
    arg, aux = mod.get_params()
    assert aux == {}
    # SGD: w -= lr * (rescale * grad + wd * w); biases get wd_mult 0 (mxnet's param_idx2name)
    np.testing.assert_allclose(
        arg["fc_weight"].asnumpy(), W0 - 0.5 * (0.25 * dw + 0.1 * W0), rtol=1e-5, atol=1e-6
    )
    np.testing.assert_allclose(arg["fc_bias"].asnumpy(), B0 - 0.5 * 0.25 * db, rtol=1e-5, atol=1e-6)


def test_fixed_params_and_lr_mult_attribute_are_not_updated() -> None:
    mod = _bound(fixed_param_names=["fc_bias"])
    mod.init_optimizer(optimizer_params={"learning_rate": 1.0})
    mod.forward_backward(_batch())
    mod.update()
    arg, _ = mod.get_params()
    np.testing.assert_array_equal(arg["fc_bias"].asnumpy(), B0)
    assert not np.allclose(arg["fc_weight"].asnumpy(), W0)
    w = mx.sym.Variable("fc_weight", lr_mult=0.0)
    net = mx.sym.SoftmaxOutput(
        mx.sym.FullyConnected(mx.sym.Variable("data"), weight=w, num_hidden=3, name="fc"),
        name="softmax",
    )
    mod = mx.mod.Module(net)
    mod.bind([("data", (4, 2))], [("softmax_label", (4,))])
    mod.init_params(arg_params={"fc_weight": mx.nd.array(W0), "fc_bias": mx.nd.array(B0)})
    mod.init_optimizer(optimizer_params={"learning_rate": 1.0})
    mod.forward_backward(_batch())
    mod.update()
    arg, _ = mod.get_params()
    np.testing.assert_array_equal(arg["fc_weight"].asnumpy(), W0)
    assert not np.allclose(arg["fc_bias"].asnumpy(), B0)


def test_init_params_rules() -> None:
    mod = _fc_module()
    with pytest.raises(AssertionError, match="call bind before"):
        mod.init_params()
    mod.bind([("data", (4, 2))], [("softmax_label", (4,))])
    with pytest.raises(RuntimeError, match="fc_bias is not presented"):
        mod.init_params(arg_params={"fc_weight": mx.nd.array(W0)})
    mod.init_params(
        initializer=mx.init.Constant(0.5),
        arg_params={"fc_weight": mx.nd.array(W0)},
        allow_missing=True,
    )
    arg, _ = mod.get_params()
    np.testing.assert_array_equal(arg["fc_weight"].asnumpy(), W0)
    np.testing.assert_array_equal(arg["fc_bias"].asnumpy(), np.zeros(3))  # a bias: zeros
    with pytest.warns(UserWarning, match="init_params call ignored"):
        mod.init_params()
    mod.init_params(initializer=mx.init.Constant(0.5), force_init=True)
    np.testing.assert_array_equal(mod.get_params()[0]["fc_weight"].asnumpy(), np.full((3, 2), 0.5))
    extra = {"fc_weight": mx.nd.array(W0), "fc_bias": mx.nd.array(B0), "z": mx.nd.ones(1)}
    mod.set_params(extra, {})  # as mxnet 1.9.1: only the module's parameters are read
    np.testing.assert_array_equal(mod.get_params()[0]["fc_bias"].asnumpy(), B0)
    with pytest.raises(ValueError, match='Find name "z" that is not in the arguments'):
        mod.set_params(extra, {}, allow_missing=True)  # mxnet 1.9.1's error
    mod.set_params(
        {"fc_weight": mx.nd.array(2 * W0), "z": mx.nd.ones(1)},
        {},
        allow_missing=True,
        allow_extra=True,
    )
    np.testing.assert_array_equal(mod.get_params()[0]["fc_weight"].asnumpy(), 2 * W0)


def test_predict_iter_predict_score_and_reshape() -> None:
    mod = _fc_module()
    it = mx.io.NDArrayIter(X[:3], Y[:3], batch_size=2)  # last batch padded by 1
    mod.bind(it.provide_data, it.provide_label, for_training=False)
    assert mod.label_shapes[0].shape == (2,)
    mod.init_params(arg_params={"fc_weight": mx.nd.array(W0), "fc_bias": mx.nd.array(B0)})
    p = _softmax_grads(W0, B0, X, Y)[0]
    out = mod.predict(it)
    assert out.shape == (3, 3)
    np.testing.assert_allclose(out.asnumpy(), p[:3], rtol=1e-5)
    per_batch = mod.predict(it, merge_batches=False)
    assert [[o.shape for o in b] for b in per_batch] == [[(2, 3)], [(1, 3)]]
    assert len(mod.predict(it, always_output_list=True)) == 1
    assert mod.predict(it, num_batch=1).shape == (2, 3)
    got = [(o[0].shape, n, b.pad) for o, n, b in mod.iter_predict(it)]
    assert got == [((2, 3), 0, 0), ((1, 3), 1, 1)]
    # score counts the padded example too (mxnet): labels [0, 2], [1, 0 (pad)]
    acc = (p[[0, 1, 2, 0]].argmax(1) == np.array([0, 2, 1, 0])).mean()
    assert mod.score(it, "acc") == [("accuracy", acc)]
    assert mod.score(it, "acc", num_batch=1)[0][1] == (p[:2].argmax(1) == Y[:2]).mean()
    # a batch of another size rebinds (mxnet's reshape) and keeps the parameters
    with pytest.warns(UserWarning, match="label_shapes don't match"):  # no labels (mxnet's)
        out4 = mod.predict(mx.nd.array(X))
    assert out4.shape == (4, 3)
    np.testing.assert_allclose(out4.asnumpy(), p, rtol=1e-5)
    assert mod.data_shapes[0].shape == (4, 2)


def test_checkpoint_with_optimizer_states_resumes_training(tmp_path: Path) -> None:
    def fitted(num_epoch: int, begin: int = 0, mod: mx.mod.Module | None = None):
        it = mx.io.NDArrayIter(X, Y, batch_size=2)
        mod = mod or _fc_module()
        mod.fit(
            it,
            num_epoch=num_epoch,
            begin_epoch=begin,
            optimizer_params={"learning_rate": 0.3, "momentum": 0.9},
            arg_params={"fc_weight": mx.nd.array(W0), "fc_bias": mx.nd.array(B0)},
        )
        return mod

    straight = fitted(2).get_params()[0]
    mod = fitted(1)
    prefix = str(tmp_path / "net")
    mod.save_checkpoint(prefix, 1, save_optimizer_states=True)
    assert sorted(os.listdir(tmp_path)) == ["net-0001.params", "net-0001.states", "net-symbol.json"]
    with open(prefix + "-0001.states", "rb") as f:
        assert not f.read(2).startswith(b"\x80")  # not a pickle
    loaded = mx.mod.Module.load(prefix, 1, load_optimizer_states=True)
    assert loaded.params_initialized
    it = mx.io.NDArrayIter(X, Y, batch_size=2)
    loaded.bind(it.provide_data, it.provide_label)
    loaded.init_optimizer(optimizer_params={"learning_rate": 0.3, "momentum": 0.9})
    with pytest.warns(UserWarning, match="init_params call ignored"):  # as mxnet
        loaded.fit(it, num_epoch=2, begin_epoch=1)
    resumed = loaded.get_params()[0]
    for k in straight:
        np.testing.assert_allclose(resumed[k].asnumpy(), straight[k].asnumpy(), rtol=1e-6)
    # without the momentum states the result differs
    plain = mx.mod.Module.load(prefix, 1)
    with pytest.warns(UserWarning, match="init_params call ignored"):
        plain.fit(
            mx.io.NDArrayIter(X, Y, batch_size=2),
            num_epoch=2,
            begin_epoch=1,
            optimizer_params={"learning_rate": 0.3, "momentum": 0.9},
        )
    assert not np.allclose(
        plain.get_params()[0]["fc_weight"].asnumpy(), straight["fc_weight"].asnumpy()
    )


def test_fit_logs_and_callbacks(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    seen: list[tuple] = []
    mod = _fc_module()
    it = mx.io.NDArrayIter(X, Y, batch_size=2)
    prefix = str(tmp_path / "cb")
    with caplog.at_level(logging.INFO):
        mod.fit(
            it,
            eval_data=mx.io.NDArrayIter(X, Y, batch_size=2),
            num_epoch=2,
            batch_end_callback=[
                lambda p: seen.append((p.epoch, p.nbatch)),
                mx.callback.Speedometer(2, frequent=1),
                mx.callback.log_train_metric(1),
            ],
            epoch_end_callback=mx.callback.do_checkpoint(prefix, period=2),
            eval_end_callback=mx.callback.LogValidationMetricsCallback(),
        )
    assert seen == [(0, 0), (0, 1), (1, 0), (1, 1)]
    text = caplog.text
    assert "Epoch[0] Train-accuracy=" in text and "Epoch[1] Validation-accuracy=" in text
    assert "Epoch[0] Time cost=" in text
    assert "Epoch[0] Batch [0-1]\tSpeed: " in text and "samples/sec\taccuracy=" in text
    assert "Iter[1] Batch[1] Train-accuracy=" in text
    assert sorted(os.listdir(tmp_path)) == ["cb-0002.params", "cb-symbol.json"]
    sym, arg, _ = mx.model.load_checkpoint(prefix, 2)
    assert sym.list_outputs() == ["softmax_output"]
    np.testing.assert_array_equal(
        arg["fc_weight"].asnumpy(), mod.get_params()[0]["fc_weight"].asnumpy()
    )


def test_errors_and_unsupported() -> None:
    with pytest.raises(ValueError, match="input with name 'x' is not found"):
        _fc_module(data_names=("x",))
    with pytest.raises(NotImplementedError, match=r"docs/migration-mxnet\.md"):
        _fc_module(context=[mx.cpu(), mx.cpu()])
    mod = _bound()
    with pytest.raises(NotImplementedError, match="kvstore"):
        mod.init_optimizer(kvstore="dist_sync")
    with pytest.raises(ValueError, match="num_epoch"):
        mod.fit(mx.io.NDArrayIter(X, Y, batch_size=4))
    with pytest.raises(AssertionError, match="init_optimizer"):
        mod.update()
    mod2 = _fc_module()
    with pytest.warns(UserWarning, match="don't match names specified by label_names"):
        mod2.bind([("data", (4, 2))], for_training=False)  # as mxnet 1.9.1
    assert mod2.label_shapes is None and mod2.output_shapes == [("softmax_output", (4, 3))]
    mod2.init_params()
    with pytest.raises(AssertionError, match="for_training=True"):
        mod2.backward()
    for name in ("BucketingModule", "SequentialModule", "PythonModule"):
        with pytest.raises(NotImplementedError, match=r"docs/migration-mxnet\.md"):
            getattr(mx.mod, name)()
    assert mx.module.Module is mx.mod.Module


def test_makeloss_regression_with_adam_equal_mxnet() -> None:
    """A MakeLoss network with a label named ``label`` (a dict label), trained with Adam and
    scored with ``"loss"``; the numbers were printed by mxnet 1.9.1 on the same inputs."""
    rng = np.random.RandomState(5)
    x = rng.randn(10, 3).astype(np.float32)
    y = rng.randn(10, 1).astype(np.float32)
    fc = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=1, name="fc")
    net = mx.sym.MakeLoss(mx.sym.square(fc - mx.sym.Variable("label")), name="loss")
    mod = mx.mod.Module(net, label_names=("label",))
    it = mx.io.NDArrayIter(x, {"label": y}, batch_size=4)
    vals: list[float] = []
    mod.fit(
        it,
        eval_metric="loss",
        num_epoch=3,
        optimizer="adam",
        optimizer_params={"learning_rate": 0.05},
        arg_params={"fc_weight": mx.nd.array([[0.1, 0.2, -0.3]]), "fc_bias": mx.nd.array([0.05])},
        batch_end_callback=lambda p: vals.append(p.eval_metric.get()[1]),
    )
    arg = mod.get_params()[0]
    # mxnet 1.9.1
    np.testing.assert_allclose(
        arg["fc_weight"].asnumpy(), [[0.02181314, -0.18113187, 0.04774307]], rtol=1e-5
    )
    np.testing.assert_allclose(arg["fc_bias"].asnumpy(), [0.3995164], rtol=1e-5)
    expected = [0.58044308, 0.61429244, 0.71620415, 0.31926259, 0.35611953, 0.4768504]
    expected += [0.34716853, 0.29531103, 0.42520463]
    np.testing.assert_allclose(vals, expected, rtol=1e-6)
    assert mod.score(it, "loss")[0][1] == pytest.approx(0.4521596034367879, rel=1e-6)
    assert mod.predict(it).shape == (10, 1)
    mod2 = mx.mod.Module(net, label_names=("label",))
    mod2.bind(it.provide_data, it.provide_label, inputs_need_grad=True)
    mod2.init_params(mx.init.Constant(0.3))
    it.reset()
    mod2.forward_backward(next(it))
    # mxnet 1.9.1
    np.testing.assert_allclose(mod2.get_input_grads()[0].asnumpy()[0], [-0.01842885] * 3, rtol=1e-5)
    np.testing.assert_allclose(
        mod2.get_outputs()[0].asnumpy()[:2].ravel(), [9.433959e-04, 1.131184e00], rtol=1e-5
    )


def test_default_initializer_optimizer_instance_and_grad_req_add() -> None:
    mod = _fc_module()
    mod.bind([("data", (4, 2))], [("softmax_label", (4,))])
    mod.init_params()  # mx.init.Uniform(0.01): weights in [-0.01, 0.01], biases zero
    arg = mod.get_params()[0]
    w = arg["fc_weight"].asnumpy()
    assert np.abs(w).max() <= 0.01 and np.abs(w).max() > 0
    np.testing.assert_array_equal(arg["fc_bias"].asnumpy(), np.zeros(3))
    with pytest.warns(UserWarning, match="rescale_grad is not normalized"):  # as mxnet
        mod.init_optimizer(optimizer=mx.optimizer.SGD(learning_rate=0.1))
    assert mod._optimizer.idx2name == {0: "fc_weight", 1: "fc_bias"}
    mod = _fc_module()
    mod.bind([("data", (4, 2))], [("softmax_label", (4,))], grad_req="add")
    mod.init_params(arg_params={"fc_weight": mx.nd.array(W0), "fc_bias": mx.nd.array(B0)})
    mod.forward_backward(_batch())
    mod.forward_backward(_batch())
    _, dw, _, _ = _softmax_grads(W0, B0, X, Y)
    np.testing.assert_allclose(
        mod._exec.grad_dict["fc_weight"].asnumpy(), 2 * dw, rtol=1e-5, atol=1e-6
    )


def test_module_load_of_mxnet_checkpoint_predicts_mxnet_output() -> None:
    """data/mlp-symbol.json and mlp-0003.params were written by mxnet 1.9.1's
    save_checkpoint; mlp-expected.nd holds an input and mxnet's output for it."""
    expected = mx.nd.load(str(DATA / "mlp-expected.nd"))
    mod = mx.mod.Module.load(str(DATA / "mlp"), 3)
    mod.bind([("data", (2, 4))], for_training=False, label_shapes=[("softmax_label", (2,))])
    out = mod.predict(expected["data"])
    np.testing.assert_allclose(out.asnumpy(), expected["output"].asnumpy(), rtol=1e-5)
