"""nnabla's NNP files: the protobuf codec (``_nnp_proto``), ``nnabla.utils.save.save``,
``nnabla.utils.nnp_graph.NnpLoader`` and ``nnabla.utils.load.load``.

The reference files under ``data/`` were written by nnabla 1.39.0
(``data/make_nnp_reference.py``): an MLP (``nnp_mlp.nnp``, ``nnp_mlp.nntxt``) and a CNN with
Convolution, BatchNormalization (inference form), ReLU, MaxPooling and Affine (``nnp_cnn.nnp``,
parameters in ``.protobuf``), with nnabla's outputs for fixed inputs (``nnp_reference.npz``).
The codec must read and write them byte for byte; the layer's graphs built from them must give
nnabla's outputs; the files the layer writes for the same networks must equal nnabla's text.
The files written by the layer for the networks of ``test_save_load_forward`` (LeNet-like,
ResNet-like and an MLP with the three losses, in all formats) were loaded by nnabla 1.39's
``NnpLoader`` and ``load`` outside the test suite: equal outputs within float32 rounding.
"""

from __future__ import annotations

import io
import pickle
import zipfile
from collections import OrderedDict
from pathlib import Path
from typing import Any

import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.functions as F
import gradhub_compat.nnabla.parametric_functions as PF
import numpy as np
import pytest
from gradhub.errors import StateFileError
from gradhub_compat.nnabla._nnp_proto import Message, decode, encode, parse_text, to_text
from gradhub_compat.nnabla.utils.load import load
from gradhub_compat.nnabla.utils.nnp_graph import NnpLoader
from gradhub_compat.nnabla.utils.save import save

DATA = Path(__file__).parent / "data"
REF = np.load(DATA / "nnp_reference.npz")


def _member(path: Path | io.BytesIO, name: str) -> bytes:
    with zipfile.ZipFile(path) as z:
        return z.read(name)


# -- the codec ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kind,raw,type_name",
    [
        ("text", _member(DATA / "nnp_cnn.nnp", "network.nntxt"), "NNablaProtoBuf"),
        ("text", (DATA / "nnp_mlp.nntxt").read_bytes(), "NNablaProtoBuf"),
        ("binary", _member(DATA / "nnp_cnn.nnp", "parameter.protobuf"), "NNablaProtoBuf"),
        ("binary", (DATA / "nnp_params.protobuf").read_bytes(), "NNablaProtoBuf"),
        ("binary", (DATA / "nnp_adam_states.protobuf").read_bytes(), "Optimizer"),
    ],
)
def test_codec_reproduces_nnabla_files(kind: str, raw: bytes, type_name: str) -> None:
    if kind == "text":
        assert to_text(parse_text(type_name, raw.decode())).encode() == raw
    else:
        assert encode(decode(type_name, raw)) == raw


def test_codec_values() -> None:
    m = Message("Function", name='a"b\\c\n\u00e9', type="Reshape", input=["x", "y"])
    m.reshape_param.shape.dim = [-1, 3, 2**40]
    m.reshape_param.inplace = True
    back = decode("Function", encode(m))
    assert back == m
    assert back.reshape_param.shape.dim == [-1, 3, 2**40]
    assert parse_text("Function", to_text(m)) == m
    # proto3: defaults are not written; an empty message is
    e = Message("Function", name="r")
    e.relu_param.inplace = False
    assert to_text(e) == 'name: "r"\nrelu_param {\n}\n'
    assert encode(e) == b"\x0a\x01r" + b"\xf2\x3f\x00"  # field 1022, wire type 2, length 0
    # floats print as the shortest float32 repr (protobuf's), doubles as repr
    p = Message("BatchNormalizationParameter", decay_rate=0.9, eps=1e-5, axes=[1])
    assert to_text(p) == "axes: 1\ndecay_rate: 0.9\neps: 1e-05\n"
    assert to_text(Message("AddScalarParameter", val=0.1)) == "val: 0.1\n"
    # the text format's other spellings: '<>', lists, comments, no ':' before a message
    t = parse_text(
        "Network",
        "# c\nname: \"n\" batch_size: 0x10 variable < name: 'v' shape { dim: [1, 2] } >",
    )
    assert (t.name, t.batch_size, t.variable[0].name, t.variable[0].shape.dim) == (
        "n",
        16,
        "v",
        [1, 2],
    )


def test_codec_skips_unknown_binary_fields() -> None:
    raw = encode(Message("Shape", dim=[2])) + b"\xf8\x07\x05" + b"\x9a\x08\x02ab"
    assert decode("Shape", raw).dim == [2]


@pytest.mark.parametrize(
    "raw,msg",
    [
        (b"\x0a\x05ab", "a length of 5 bytes past the end"),
        (b"\x08", "truncated varint"),
        (b"\x0b", "unsupported wire type 3"),
        (b"\x0a\x02\xff\xfe", "not UTF-8"),
        (b"\x08\x01", "wire type 0"),  # a string field given a varint
    ],
)
def test_codec_malformed_binary(raw: bytes, msg: str) -> None:
    if msg == "wire type 0":
        assert decode("Parameter", b"\x1d\x00\x00\x00\x00").variable_name == ""  # skipped
        with pytest.raises(ValueError, match=r"Parameter\.variable_name is a string"):
            decode("Parameter", b"\x08\x01", "f.protobuf")
        return
    with pytest.raises(ValueError, match=rf"nnabla protobuf: f\.protobuf is not a valid .*{msg}"):
        decode("Parameter", raw, "f.protobuf")


@pytest.mark.parametrize(
    "text,msg",
    [
        ('variable_name: "a', "unexpected character"),
        ("shape { dim: 1", "unexpected end of the text inside Shape"),
        ("need_grad: maybe", "expects true or false"),
        ("shape { dim: 1.5 }", "expects an integer"),
        ("shape { dim: 99999999999999999999 }", "out of the range of int64"),
        ("colour: 1", "Parameter has no field 'colour'"),
        ('variable_name: "a" variable_name: "b" data: x', "expects a number"),
        ("variable_name 3", "expected ':'"),
    ],
)
def test_codec_malformed_text(text: str, msg: str) -> None:
    with pytest.raises(ValueError, match=rf"f\.nntxt is not a valid Parameter .*{msg}"):
        parse_text("Parameter", text, "f.nntxt")


# -- files written by nnabla 1.39 --------------------------------------------------------------


@pytest.mark.parametrize(
    "file,net,key",
    [("nnp_mlp.nnp", "mlp", "mlp"), ("nnp_mlp.nntxt", "mlp", "mlp"), ("nnp_cnn.nnp", "cnn", "cnn")],
)
def test_nnabla_files_run_to_nnabla_outputs(file: str, net: str, key: str) -> None:
    nnp = NnpLoader(str(DATA / file))
    assert nnp.get_network_names() == [net]
    n = nnp.get_network(net)
    assert list(n.inputs) == ["x"] and list(n.outputs) == ["y"]
    assert n.inputs["x"].shape == REF[f"x_{key}"].shape  # the -1 batch dimension filled in
    n.inputs["x"].d = REF[f"x_{key}"]
    n.outputs["y"].forward()
    np.testing.assert_allclose(n.outputs["y"].d, REF[f"y_{key}"], rtol=1e-5, atol=1e-5)
    # the parameters are registered in the current scope, with the file's names
    assert all(n.variables[k] is v for k, v in nn.get_parameters(grad_only=False).items())
    assert n.outputs["y"].name == "y"


def test_nnabla_cnn_with_another_batch_size_and_load() -> None:
    n = NnpLoader(str(DATA / "nnp_cnn.nnp")).get_network("cnn", batch_size=1)
    assert n.inputs["x"].shape == (1, 1, 6, 6)
    n.inputs["x"].d = REF["x_cnn"][1:]
    n.outputs["y"].forward()
    np.testing.assert_allclose(n.outputs["y"].d, REF["y_cnn"][1:], rtol=1e-5, atol=1e-5)
    nn.clear_parameters()
    info = load([str(DATA / "nnp_cnn.nnp")])
    e = info.executors["runtime"]
    assert e.network is info.networks["cnn"]
    assert [v.name for v in e.dataset_assign] == ["x"] and list(e.dataset_assign.values()) == ["x"]
    assert [(v.name, t) for v, t in e.output_assign.items()] == [("y", ["", "y"])]
    assert next(iter(e.parameters.values())) == "conv1/conv/W"
    next(iter(e.dataset_assign)).variable_instance.d = REF["x_cnn"]
    e.forward_target.forward()
    y = next(iter(e.output_assign)).variable_instance
    np.testing.assert_allclose(y.d, REF["y_cnn"], rtol=1e-5, atol=1e-5)
    assert list(info.parameters)[:2] == ["conv1/conv/W", "conv1/conv/b"]


def test_load_parameter_only_and_exclude_parameter() -> None:
    info = load(str(DATA / "nnp_mlp.nnp"), parameter_only=True)
    assert not info.networks and list(info.parameters) == list(nn.get_parameters())
    w = nn.get_parameters()["mlp/fc1/affine/W"]
    w.d = np.zeros((6, 5))
    info = load(str(DATA / "nnp_mlp.nnp"), exclude_parameter=True)  # the scope's parameters
    assert info.networks["mlp"].variables["mlp/fc1/affine/W"].variable_instance is w
    net = info.networks["mlp"]
    net.inputs["x"].d = REF["x_mlp"]
    net.outputs["y"].forward()
    assert not np.allclose(net.outputs["y"].d, REF["y_mlp"], atol=1e-3)  # W is zero


def test_loader_scope_holds_the_parameters() -> None:
    scope: OrderedDict[str, Any] = OrderedDict()
    nnp = NnpLoader(str(DATA / "nnp_mlp.nnp"), scope=scope)
    assert list(scope) == [
        "mlp/fc1/affine/W",
        "mlp/fc1/affine/b",
        "mlp/fc2/affine/W",
        "mlp/fc2/affine/b",
    ]
    a = nnp.get_network("mlp", batch_size=2)
    b = nnp.get_network("mlp", batch_size=4)
    assert (
        a.variables["mlp/fc1/affine/W"]
        is b.variables["mlp/fc1/affine/W"]
        is scope["mlp/fc1/affine/W"]
    )
    with pytest.raises(KeyError, match="no network 'nope'"):
        nnp.get_network("nope")


# -- the layer's files ---------------------------------------------------------------------------


def _mlp_like_nnabla() -> tuple[Any, Any]:
    x = nn.Variable((3, 6))
    with nn.parameter_scope("mlp"):
        h = F.relu(PF.affine(x, 5, name="fc1"))
        y = F.softmax(PF.affine(h, 4, name="fc2"))
    return x, y


def _contents(name: str, batch: int, y: Any, names: dict[str, Any]) -> dict[str, Any]:
    return {
        "networks": [{"name": name, "batch_size": batch, "outputs": {"y": y}, "names": names}],
        "executors": [{"name": "runtime", "network": name, "data": list(names), "output": ["y"]}],
    }


def test_network_text_equals_nnabla() -> None:
    x, y = _mlp_like_nnabla()
    buf = io.BytesIO()
    save(buf, _contents("mlp", 3, y, {"x": x}))  # extension ".nnp" by default
    assert buf.tell() == 0
    with zipfile.ZipFile(buf) as z:
        assert z.namelist() == ["nnp_version.txt", "network.nntxt", "parameter.h5"]
        assert z.read("nnp_version.txt") == b"0.1\n"
        assert z.read("network.nntxt") == _member(DATA / "nnp_mlp.nnp", "network.nntxt")
    # with nnabla's parameter values, the .nntxt with parameters is nnabla's file byte for byte
    nn.load_parameters(str(DATA / "nnp_params.protobuf"))
    text = io.StringIO()
    save(text, _contents("mlp", 3, y, {"x": x}), extension=".nntxt", include_params=True)
    assert text.getvalue() == (DATA / "nnp_mlp.nntxt").read_text()


def test_cnn_text_equals_nnabla() -> None:
    xc = nn.Variable((2, 1, 6, 6))
    h = PF.convolution(xc, 3, (3, 3), pad=(1, 1), name="conv1")
    h = PF.batch_normalization(h, batch_stat=False, name="bn1")
    h = F.max_pooling(F.relu(h), (2, 2))
    yc = PF.affine(h, 4, name="fc")
    buf = io.BytesIO()
    save(buf, _contents("cnn", 2, yc, {"x": xc}), parameter_format=".protobuf")
    assert _member(buf, "network.nntxt") == _member(DATA / "nnp_cnn.nnp", "network.nntxt")
    assert zipfile.ZipFile(buf).namelist()[-1] == "parameter.protobuf"


def _lenet() -> tuple[dict[str, Any], Any]:
    x = nn.Variable((2, 1, 12, 12))
    h = PF.convolution(x, 4, (3, 3), pad=(1, 1), name="conv1")
    h = PF.batch_normalization(h, batch_stat=False, name="bn1")
    h = F.max_pooling(F.relu(h), (2, 2))
    h = F.leaky_relu(PF.convolution(h, 6, (3, 3), name="conv2"), 0.2)
    h = F.average_pooling(h, (2, 2))
    h = F.elu(PF.affine(h, 8, name="fc1"))
    return {"x": x}, F.softmax(PF.affine(F.tanh(h), 5, name="fc2"))


def _resish() -> tuple[dict[str, Any], Any]:
    x = nn.Variable((2, 3, 8, 8))
    h = F.relu(PF.convolution(x, 4, (3, 3), pad=(1, 1), name="c0"))
    r = PF.convolution(h, 4, (3, 3), pad=(1, 1), name="c1", with_bias=False)
    r = PF.batch_normalization(r, batch_stat=False, name="b1")
    h = F.global_average_pooling(F.relu(F.add2(h, r)))
    h = F.reshape(h, (2, 4))
    h2 = F.concatenate(h, F.sigmoid(h) * 2 + 1, axis=1)
    h2 = F.transpose(F.transpose(h2, (1, 0)), (1, 0))
    h2 = h2**2 - h2 / (F.identity(h2) + 3)
    y = F.log_softmax(PF.affine(h2, 3, name="fc"), axis=1)
    y = y + F.sum(y, axis=1, keepdims=True) + F.mean(y, axis=1, keepdims=True)
    y = y + F.broadcast(F.mean(y, axis=1, keepdims=True), (2, 3))
    y = y + F.tile(F.sum(y, axis=0, keepdims=True), (2, 1))
    d = PF.deconvolution(x, 2, (3, 3), stride=(2, 2), name="dc")
    return {"x": x}, y + F.reshape(F.mean(d, axis=(1, 2, 3)), (2, 1))


def _losses() -> tuple[dict[str, Any], Any]:
    x, t, t2 = nn.Variable((3, 6)), nn.Variable((3, 1)), nn.Variable((3, 4))
    z = PF.affine(F.relu(PF.affine(x, 5, name="fc1")), 4, name="fc2")
    y = F.mean(F.softmax_cross_entropy(z, t)) + F.mean(F.sigmoid_cross_entropy(z, t2))
    y = y + F.mean(F.squared_error(z, t2)) + F.sum(F.dropout(z, 0.0))
    return {"x": x, "t": t, "t2": t2}, y


def _bn_train() -> tuple[dict[str, Any], Any]:
    x = nn.Variable((4, 3, 2, 2))
    y = F.relu(PF.batch_normalization(x, batch_stat=True, name="bn"))
    return {"x": x}, F.add2(y, F.relu(x, inplace=True), inplace=True)


@pytest.mark.parametrize("build", [_lenet, _resish, _losses, _bn_train])
@pytest.mark.parametrize(
    "ext,kw",
    [
        (".nnp", {}),
        (".nnp", {"parameter_format": ".protobuf"}),
        (".nntxt", {"include_params": True}),
        (".protobuf", {"include_params": True}),
    ],
)
def test_save_load_forward(tmp_path: Path, build: Any, ext: str, kw: dict[str, Any]) -> None:
    rng = np.random.RandomState(0)
    ins, y = build()
    for k, v in nn.get_parameters(grad_only=False).items():
        d = rng.randn(*v.shape)
        v.d = np.abs(d) + 0.5 if k.endswith("var") else d
    for k, v in ins.items():
        v.d = rng.randint(0, 4, v.shape) if k == "t" else rng.rand(*v.shape)
    y.forward()
    name = build.__name__.strip("_")
    path = tmp_path / f"net{ext}"
    save(str(path), _contents(name, ins["x"].shape[0], y, ins), **kw)
    nn.clear_parameters()
    net = NnpLoader(str(path)).get_network(name)
    assert list(net.inputs) == list(ins)
    for k, v in ins.items():
        net.inputs[k].d = v.d
    net.outputs["y"].forward()
    np.testing.assert_allclose(net.outputs["y"].d, y.d, rtol=1e-5, atol=1e-5)


def test_batch_dimension_is_variable() -> None:
    x, y = _mlp_like_nnabla()
    text = io.StringIO()
    save(text, _contents("mlp", 3, F.reshape(y, (3, 2, 2)), {"x": x}), extension=".nntxt")
    proto = parse_text("NNablaProtoBuf", text.getvalue())
    shapes = {v.name: v.shape.dim for v in proto.network[0].variable}
    assert shapes["x"] == [-1, 6] and shapes["y"] == [-1, 2, 2]
    assert shapes["mlp/fc1/affine/W"] == [6, 5]
    assert proto.network[0].function[-1].reshape_param.shape.dim == [-1, 2, 2]
    assert not proto.parameter  # include_params=False
    text2 = io.StringIO()
    save(text2, _contents("mlp", 3, y, {"x": x}), extension=".nntxt", variable_batch_size=False)
    proto2 = parse_text("NNablaProtoBuf", text2.getvalue())
    assert proto2.network[0].variable[0].shape.dim == [3, 6]


def test_unsupported_functions_raise_and_write_nothing(tmp_path: Path) -> None:
    x = nn.Variable((2, 3))
    y = F.cumsum(x, axis=1)
    with pytest.raises(NotImplementedError, match=r"function CumSum cannot be written.*NNP files"):
        save(str(tmp_path / "n.nnp"), _contents("n", 2, y, {"x": x}))
    with pytest.raises(NotImplementedError, match="optimizers"):
        save(str(tmp_path / "n.nnp"), {"networks": [], "optimizers": [{"name": "o"}]})
    with pytest.raises(NotImplementedError, match="include_solver_state"):
        save(str(tmp_path / "n.nnp"), {"networks": []}, include_solver_state=True)
    with pytest.raises(ValueError, match=r"extension '\.h5' is not supported"):
        save(str(tmp_path / "n.h5"), {"networks": []})
    with pytest.raises(ValueError, match="z is not found in networks"):
        save(
            str(tmp_path / "n.nnp"),
            dict(
                _contents("n", 2, F.relu(x), {"x": x}),
                executors=[{"name": "e", "network": "n", "data": ["z"]}],
            ),
        )
    assert list(tmp_path.iterdir()) == []


def test_unsupported_types_in_files_raise(tmp_path: Path) -> None:
    text = (
        'network { name: "n" batch_size: 1 variable { name: "x" type: "Buffer" shape { dim: 2 } }'
        ' function { name: "f" type: "CumSum" input: "x" output: "y" cumsum_param { axis: 0 } } }'
    )
    nnp = NnpLoader(io.StringIO(text))
    with pytest.raises(NotImplementedError, match=r"'f' of type CumSum is not supported"):
        nnp.get_network("n")
    missing = text.replace('type: "CumSum" input: "x"', 'type: "ReLU" input: "q"')
    with pytest.raises(ValueError, match=r"function 'f' reads 'q', which is neither declared"):
        NnpLoader(io.StringIO(missing)).get_network("n")
    noparams = 'network { name: "n" variable { name: "W" type: "Parameter" shape { dim: 2 } } }'
    with pytest.raises(ValueError, match="parameter 'W' has no values"):
        NnpLoader(io.StringIO(noparams)).get_network("n")


class _Boom:
    def __reduce__(self) -> Any:
        return (open, ("SENTINEL", "w"))


def test_loading_executes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    payload = pickle.dumps(_Boom())
    for member in ("parameter.h5", "parameter.protobuf", "network.nntxt"):
        path = tmp_path / f"{member}.nnp"
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("nnp_version.txt", "0.1\n")
            z.writestr(member, payload)
            z.writestr("evil.pkl", payload)
        with pytest.raises(StateFileError, match=rf"{member}"):
            NnpLoader(str(path))
        with pytest.raises(StateFileError):
            nn.load_parameters(str(path))
    assert not (tmp_path / "SENTINEL").exists()
