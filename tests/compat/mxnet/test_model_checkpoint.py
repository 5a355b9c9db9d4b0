"""mxnet's checkpoints (``mx.model``): ``save_checkpoint``, ``load_checkpoint``, ``load_params``.

``data/mlp-symbol.json`` and ``data/mlp-0003.params`` were written by mxnet 1.9.1's
``mx.model.save_checkpoint("mlp", 3, ...)`` and ``data/mlp-expected.nd`` holds the input and
mxnet's output of that checkpoint bound and run forward (``data/make_ndarray_files.py``). mxnet
1.9.1 also loaded the checkpoint these tests write with ``mx.model.load_checkpoint``.
"""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import gradhub_compat.mxnet as mx
import numpy as np
import pytest

DATA = Path(__file__).parent / "data"
MLP = str(DATA / "mlp")


def _mlp_params() -> dict[str, np.ndarray]:
    """The parameters data/make_ndarray_files.py gave the MLP (float32)."""
    return {
        "fc1_weight": np.sin(np.arange(20)).reshape(5, 4).astype(np.float32),
        "fc1_bias": np.linspace(-0.5, 0.5, 5).astype(np.float32),
        "fc2_weight": np.cos(np.arange(15)).reshape(3, 5).astype(np.float32),
        "fc2_bias": np.array([0.1, -0.2, 0.3], dtype=np.float32),
    }


def _forward_numpy(x: np.ndarray, p: dict[str, np.ndarray]) -> np.ndarray:
    """The MLP in float64: tanh(x W1^T + b1) W2^T + b2, then softmax over the last axis."""
    q = {k: v.astype(np.float64) for k, v in p.items()}
    h = np.tanh(x.astype(np.float64) @ q["fc1_weight"].T + q["fc1_bias"])
    z = h @ q["fc2_weight"].T + q["fc2_bias"]
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_load_checkpoint_written_by_mxnet() -> None:
    sym, args, aux = mx.model.load_checkpoint(MLP, 3)
    assert sym.list_arguments() == [
        "data",
        "fc1_weight",
        "fc1_bias",
        "fc2_weight",
        "fc2_bias",
        "softmax_label",
    ]
    assert aux == {}
    assert list(args) == ["fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias"]
    for k, v in _mlp_params().items():
        assert args[k].dtype == np.float32
        np.testing.assert_array_equal(args[k].asnumpy(), v)


def test_checkpoint_forward_gives_mxnet_outputs() -> None:
    sym, args, _ = mx.model.load_checkpoint(MLP, 3)
    expected = mx.nd.load(str(DATA / "mlp-expected.nd"))
    x = expected["data"]
    ex = sym.bind(mx.cpu(), dict(args, data=x, softmax_label=mx.nd.zeros((2,))), grad_req="null")
    out = ex.forward()[0].asnumpy()
    # mxnet 1.9.1's output (float32; exp and tanh may differ in the last bit)
    np.testing.assert_allclose(out, expected["output"].asnumpy(), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(out, _forward_numpy(x.asnumpy(), _mlp_params()), rtol=1e-5)


def test_save_checkpoint_writes_mxnet_files(tmp_path: Path) -> None:
    sym, args, aux = mx.model.load_checkpoint(MLP, 3)
    prefix = str(tmp_path / "mlp")
    mx.model.save_checkpoint(prefix, 3, sym, args, aux)
    # the same bytes as mxnet 1.9.1's checkpoint, and the same JSON document
    assert (tmp_path / "mlp-0003.params").read_bytes() == (DATA / "mlp-0003.params").read_bytes()
    written = json.loads((tmp_path / "mlp-symbol.json").read_text())
    assert written == json.loads((DATA / "mlp-symbol.json").read_text())


def test_round_trip_with_aux_and_executor(tmp_path: Path) -> None:
    data = mx.sym.Variable("data")
    net = mx.sym.FullyConnected(data, num_hidden=3, name="fc")
    rng = np.random.RandomState(1)
    args = {
        "fc_weight": mx.nd.array(rng.randn(3, 4), dtype="float64"),
        "fc_bias": mx.nd.array(rng.randn(3), dtype="float64"),
    }
    aux = {"moving_mean": mx.nd.array([0.25, 0.5])}
    prefix = str(tmp_path / "net")
    mx.model.save_checkpoint(prefix, 127, net, args, aux)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["net-0127.params", "net-symbol.json"]
    assert list(mx.nd.load(prefix + "-0127.params")) == [
        "arg:fc_weight",
        "arg:fc_bias",
        "aux:moving_mean",
    ]
    sym, a2, x2 = mx.model.load_checkpoint(prefix, 127)
    assert list(x2) == ["moving_mean"] and x2["moving_mean"].asnumpy().tolist() == [0.25, 0.5]
    arg2, aux2 = mx.model.load_params(prefix, 127)
    assert list(arg2) == ["fc_weight", "fc_bias"] and list(aux2) == ["moving_mean"]
    # the loaded parameters reach an executor through copy_params_from
    ex = sym.simple_bind(mx.cpu(), type_dict={"data": "float64"}, data=(2, 4))
    ex.copy_params_from(a2)
    x = rng.randn(2, 4)
    out = ex.forward(data=mx.nd.array(x, dtype="float64"))[0].asnumpy()
    w, b = args["fc_weight"].asnumpy(), args["fc_bias"].asnumpy()
    np.testing.assert_allclose(out, x @ w.T + b, rtol=1e-12)


def test_symbol_none_writes_only_params(tmp_path: Path) -> None:
    prefix = str(tmp_path / "p")
    mx.model.save_checkpoint(prefix, 5, None, {"w": mx.nd.ones((2,))}, {})
    assert [p.name for p in tmp_path.iterdir()] == ["p-0005.params"]


def test_load_params_skips_other_prefixes_and_warns_on_empty(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    prefix = str(tmp_path / "m")
    mx.nd.save(prefix + "-0001.params", {"arg:w": mx.nd.ones((1,)), "opt:s": mx.nd.zeros((1,))})
    arg, aux = mx.model.load_params(prefix, 1)
    assert list(arg) == ["w"] and aux == {}
    mx.nd.save(prefix + "-0002.params", {})
    with caplog.at_level(logging.WARNING):
        assert mx.model.load_params(prefix, 2) == ({}, {})
    assert "is empty" in caplog.text


def test_bad_files_and_arguments(tmp_path: Path) -> None:
    prefix = str(tmp_path / "m")
    mx.nd.save(prefix + "-0001.params", [mx.nd.ones((1,))])
    with pytest.raises(mx.base.MXNetError, match=r"m-0001\.params' holds 1 arrays without names"):
        mx.model.load_params(prefix, 1)
    mx.nd.save(prefix + "-0002.params", {"w": mx.nd.ones((1,))})
    with pytest.raises(mx.base.MXNetError, match="'w', whose name is not arg:NAME") as e:
        mx.model.load_params(prefix, 2)
    assert isinstance(e.value, ValueError)
    with pytest.raises(mx.base.MXNetError, match="No such file"):
        mx.model.load_params(prefix, 3)
    shutil.copy(DATA / "mlp-0003.params", prefix + "-0003.params")
    with pytest.raises(mx.base.MXNetError, match=r"m-symbol\.json'. No such file") as e:
        mx.model.load_checkpoint(prefix, 3)
    assert isinstance(e.value, FileNotFoundError)
    with pytest.raises(TypeError, match="arg_params must be a dict str -> NDArray"):
        mx.model.save_checkpoint(prefix, 0, None, {"w": np.ones(1)}, {})  # type: ignore[dict-item]
    with pytest.raises(TypeError, match="symbol must be a Symbol or None"):
        mx.model.save_checkpoint(prefix, 0, "net", {}, {})  # type: ignore[arg-type]
