"""NNP files of the networks nnabla-examples' mnist-collection programs export: the binary layers
of classification_bnn.py and a branching network as vae.py's.

The reference files under ``data/`` were written by nnabla 1.39.0 (``data/make_nnp_reference.py``):
``nnp_bnn.nnp`` (BinaryConnectConvolution, BatchNormalization, BinaryTanh,
BinaryWeightConvolution, BinarySigmoid, BinaryConnectAffine, BinaryWeightAffine) and
``nnp_branch.nnp`` (two affines of one input, ReLU with ``inplace=True``, Tanh, Exp, Mul2, Add2,
Mean) and ``nnp_losses.nnp`` (LeakyReLU, SquaredError), with their inputs, nnabla's outputs and
the parameter values in ``nnp_examples_reference.npz``; ``nnp_inplace.nnp`` (Add2, Mul2, Sub2,
MulScalar and ReLU called with ``inplace=True``, as classification.py's ResNet calls Add2) with
``nnp_inplace_reference.npz``. The layer must run nnabla's files to
nnabla's outputs, and write the same networks as nnabla's ``network.nntxt`` byte for byte.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path
from typing import Any

import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.functions as F
import gradhub_compat.nnabla.parametric_functions as PF
import numpy as np
import pytest
from gradhub_compat.nnabla.utils.load import load
from gradhub_compat.nnabla.utils.nnp_graph import NnpLoader
from gradhub_compat.nnabla.utils.save import save

DATA = Path(__file__).parent / "data"
REF = {
    **np.load(DATA / "nnp_examples_reference.npz"),
    **np.load(DATA / "nnp_inplace_reference.npz"),
}


def _member(path: Path | io.BytesIO, name: str) -> bytes:
    with zipfile.ZipFile(path) as z:
        return z.read(name)


def _contents(name: str, y: Any, ins: dict[str, Any]) -> dict[str, Any]:
    return {
        "networks": [{"name": name, "batch_size": 2, "outputs": {"y": y}, "names": ins}],
        "executors": [{"name": "runtime", "network": name, "data": list(ins), "output": ["y"]}],
    }


def _bnn() -> tuple[dict[str, Any], Any]:
    """The network of nnp_bnn.nnp, built with the layer's parametric functions."""
    x = nn.Variable((2, 1, 6, 6))
    h = PF.binary_connect_convolution(x, 3, (3, 3), name="bc_conv")
    h = F.binary_tanh(PF.batch_normalization(h, batch_stat=False, name="bn"))
    h = F.binary_sigmoid(PF.binary_weight_convolution(h, 2, (2, 2), pad=(1, 1), name="bw_conv"))
    h = F.binary_tanh(PF.binary_connect_affine(h, 5, name="bc_fc"))
    return {"x": x}, PF.binary_weight_affine(h, 3, name="bw_fc")


def _branch() -> tuple[dict[str, Any], Any]:
    """The network of nnp_branch.nnp: a Variable read by two functions, as vae.py's encoder."""
    x = nn.Variable((2, 4))
    h = F.relu(PF.affine(x, 6, name="enc"), inplace=True)
    mu = PF.affine(h, 3, name="mu")
    logvar = PF.affine(h, 3, name="logvar")
    return {"x": x}, F.mean(F.tanh(mu) + F.exp(0.5 * logvar) * mu)


def _losses() -> tuple[dict[str, Any], Any]:
    """The network of nnp_losses.nnp: the functions the layer records as several."""
    x = nn.Variable((2, 3))
    t = nn.Variable((2, 3))
    h = F.leaky_relu(PF.affine(x, 3, name="fc"), 0.2)
    y = F.mean(F.squared_error(h, t)) + F.sum(F.leaky_relu(x))
    return {"x": x, "t": t}, y


def _inplace() -> tuple[dict[str, Any], Any]:
    """The network of nnp_inplace.nnp: functions called with nnabla's ``inplace=True`` (the
    Add2 of classification.py's ResNet blocks), written with the flag as nnabla writes it."""
    x = nn.Variable((2, 4))
    h = F.relu(PF.affine(x, 4, name="fc1"), inplace=True)
    h = F.elu(F.add2(h, x, inplace=True))
    h = F.mul_scalar(h, 2.0, inplace=True)
    return {"x": x}, F.mean(F.sub2(h, F.mul2(h, x, inplace=True), inplace=True))


def _set_reference_parameters() -> None:
    params = nn.get_parameters(grad_only=False)
    for key in REF:
        if key.startswith("param/") and key[len("param/") :] in params:
            params[key[len("param/") :]].d = REF[key]


CASES = [("bnn", _bnn), ("branch", _branch), ("losses", _losses), ("inplace", _inplace)]


def _feed(name: str, inputs: dict[str, Any]) -> None:
    for k, v in inputs.items():
        v.d = REF[f"{k}_{name}"]


@pytest.mark.parametrize("name,build", CASES)
def test_nnabla_files_run_to_nnabla_outputs(name: str, build: Any) -> None:
    net = NnpLoader(str(DATA / f"nnp_{name}.nnp")).get_network(name)
    _feed(name, net.inputs)
    net.outputs["y"].forward()
    np.testing.assert_allclose(net.outputs["y"].d, REF[f"y_{name}"], rtol=1e-5, atol=1e-5)
    nn.clear_parameters()
    info = load([str(DATA / f"nnp_{name}.nnp")])
    ex = info.executors["runtime"]
    for v in ex.dataset_assign:
        v.variable_instance.d = REF[f"{v.name}_{name}"]
    ex.forward_target.forward()
    (out,) = [v.variable_instance for v in ex.output_assign]
    np.testing.assert_allclose(out.d, REF[f"y_{name}"], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name,build", CASES)
def test_written_text_equals_nnabla(name: str, build: Any) -> None:
    # the binary layers are written as nnabla's fused functions (not the layer's recorded
    # BinaryConnectWeight + Convolution, or the comparisons of F.binary_tanh); the functions in
    # nnabla's visiting order (depth first from the output); ReLU's inplace flag as given;
    # F.leaky_relu and F.squared_error as nnabla's single functions
    ins, y = build()
    buf = io.BytesIO()
    save(buf, _contents(name, y, ins))
    text = _member(buf, "network.nntxt").decode()
    assert text == _member(DATA / f"nnp_{name}.nnp", "network.nntxt").decode()


@pytest.mark.parametrize("name,build", CASES)
def test_written_file_runs_to_nnabla_outputs(tmp_path: Path, name: str, build: Any) -> None:
    ins, y = build()
    _set_reference_parameters()
    _feed(name, ins)
    y.forward()
    np.testing.assert_allclose(y.d, REF[f"y_{name}"], rtol=1e-5, atol=1e-5)
    path = tmp_path / f"{name}.nnp"
    save(str(path), _contents(name, y, ins))
    nn.clear_parameters()
    net = NnpLoader(str(path)).get_network(name)
    _feed(name, net.inputs)
    net.outputs["y"].forward()
    np.testing.assert_allclose(net.outputs["y"].d, REF[f"y_{name}"], rtol=1e-5, atol=1e-5)


def test_loaded_binary_layers_keep_the_straight_through_gradient() -> None:
    # the loaded BinaryConnectAffine: y = x sign(W) + b, dy/dW = x^T dy (straight through)
    x = nn.Variable((2, 4))
    w_init = np.array([[0.5, -1.0], [2.0, 0.0], [-0.3, 0.1], [1.0, -2.0]], np.float32)
    y = PF.binary_connect_affine(x, 2, name="fc")
    nn.get_parameters()["fc/bicon_affine/W"].d = w_init
    buf = io.BytesIO()
    save(buf, _contents("n", y, {"x": x}))
    nn.clear_parameters()
    net = NnpLoader(io.BytesIO(buf.getvalue()), extension=".nnp").get_network("n")
    xv = np.arange(8, dtype=np.float32).reshape(2, 4) / 8
    net.inputs["x"].d = xv
    out = net.outputs["y"]
    out.forward()
    np.testing.assert_allclose(out.d, xv @ np.where(w_init >= 0, 1.0, -1.0), rtol=1e-6)
    w = net.variables["fc/bicon_affine/W"]
    w.g = 0
    out.backward(np.ones((2, 2), np.float32))
    np.testing.assert_allclose(w.g, xv.T @ np.ones((2, 2)), rtol=1e-6)


def _types(buf: io.BytesIO) -> list[str]:
    text = _member(buf, "network.nntxt").decode()
    return [line.split('"')[1] for line in text.splitlines() if line.startswith('    type: "')]


def test_shared_intermediates_are_not_fused() -> None:
    # d = x - t read twice by d * d and once more: written as Sub2, Mul2, Add2 (a SquaredError
    # would lose the third reader); the file runs to the same values
    x = nn.Variable((2, 3))
    t = nn.Variable((2, 3))
    d = x - t
    y = d * d + d
    buf = io.BytesIO()
    save(buf, _contents("n", y, {"x": x, "t": t}))
    assert [k for k in _types(buf) if k != "Buffer" and k != "Parameter"] == [
        "Sub2",
        "Mul2",
        "Add2",
    ]
    rng = np.random.RandomState(1)
    xv, tv = rng.randn(2, 3), rng.randn(2, 3)
    net = NnpLoader(io.BytesIO(buf.getvalue()), extension=".nnp").get_network("n")
    net.inputs["x"].d, net.inputs["t"].d = xv, tv
    net.outputs["y"].forward()
    np.testing.assert_allclose(net.outputs["y"].d, (xv - tv) ** 2 + (xv - tv), rtol=1e-6)


def test_sigmoid_cross_entropy_is_written_as_its_parts() -> None:
    # nnabla's SigmoidCrossEntropy casts the target to int (0.7 counts as 0); the layer's
    # F.sigmoid_cross_entropy does not, so it is written as SoftPlus(x) - x * t, which nnabla
    # computes to the layer's values for any target
    x = nn.Variable((2, 3))
    t = nn.Variable((2, 3))
    y = F.sigmoid_cross_entropy(x, t)
    buf = io.BytesIO()
    save(buf, _contents("n", y, {"x": x, "t": t}))
    assert [k for k in _types(buf) if k != "Buffer"] == ["SoftPlus", "Mul2", "Sub2"]
    xv, tv = np.array([[-1.0, 0.0, 2.0]] * 2), np.array([[0.7, 1.0, 0.0]] * 2)
    net = NnpLoader(io.BytesIO(buf.getvalue()), extension=".nnp").get_network("n")
    net.inputs["x"].d, net.inputs["t"].d = xv, tv
    net.outputs["y"].forward()
    np.testing.assert_allclose(net.outputs["y"].d, np.log1p(np.exp(xv)) - xv * tv, rtol=1e-6)
