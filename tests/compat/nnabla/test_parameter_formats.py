"""nnabla's other parameter and solver-state formats: ``.protobuf`` (read and written),
``.nntxt``/``.prototxt`` and ``.nnp`` (read) for ``nn.load_parameters``/``nn.save_parameters``,
and ``.protobuf`` solver state files.

The reference files under ``data/`` were written by nnabla 1.39.0 (``data/make_nnp_reference.py``):
``nnp_params.protobuf`` (``nn.save_parameters`` of the MLP), ``nnp_mlp.nntxt``
(``save(..., include_params=True)``), ``nnp_mlp.nnp`` (parameters in ``.h5``), ``nnp_cnn.nnp``
(parameters in ``.protobuf``) and ``nnp_adam_states.protobuf`` (``Adam.save_states``); the
expected values are nnabla's (``nnp_reference.npz``) or the same parameters read from another
format. Files this layer writes were read by nnabla 1.39 (checked outside the test suite: the
values and the states came back equal).
"""

from __future__ import annotations

import io
from pathlib import Path

import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.solvers as S
import numpy as np
import pytest
from gradhub.errors import StateFileError
from gradhub_compat.nnabla._nnp_proto import decode, to_text
from gradhub_compat.nnabla.parameter import get_parameter_or_create

DATA = Path(__file__).parent / "data"
REF = np.load(DATA / "nnp_reference.npz")
MLP = ["mlp/fc1/affine/W", "mlp/fc1/affine/b", "mlp/fc2/affine/W", "mlp/fc2/affine/b"]
MLP_SHAPES = [(6, 5), (5,), (5, 4), (4,)]


def _params() -> dict[str, tuple[tuple[int, ...], bool, np.ndarray]]:
    return {
        k: (v.shape, v.need_grad, v.d.copy()) for k, v in nn.get_parameters(grad_only=False).items()
    }


def _load(name: str) -> dict[str, tuple[tuple[int, ...], bool, np.ndarray]]:
    nn.clear_parameters()
    nn.load_parameters(str(DATA / name))
    return _params()


@pytest.mark.parametrize("name", ["nnp_params.protobuf", "nnp_mlp.nntxt", "nnp_mlp.nnp"])
def test_nnabla_files_hold_the_same_parameters(name: str) -> None:
    got = _load(name)
    assert list(got) == MLP  # nnabla's order
    assert [s for s, _, _ in got.values()] == MLP_SHAPES
    assert all(ng for _, ng, _ in got.values())
    ref = _load("nnp_params.protobuf")
    for k in MLP:
        np.testing.assert_array_equal(got[k][2], ref[k][2])
        assert got[k][2].dtype == np.float32


def test_nnp_with_protobuf_parameters_and_batch_norm_need_grad() -> None:
    got = _load("nnp_cnn.nnp")  # nnabla 1.39: mean/var need no gradient
    assert {k: ng for k, (_, ng, _) in got.items()} == {
        "conv1/conv/W": True,
        "conv1/conv/b": True,
        "bn1/bn/beta": True,
        "bn1/bn/gamma": True,
        "bn1/bn/mean": False,
        "bn1/bn/var": False,
        "fc/affine/W": True,
        "fc/affine/b": True,
    }
    assert (got["bn1/bn/var"][2] > 0.5).all()  # |randn| + 0.5 in the script


def test_protobuf_round_trip_and_nnabla_layout(tmp_path: Path) -> None:
    nn.load_parameters(str(DATA / "nnp_params.protobuf"))
    with nn.parameter_scope("extra"):
        get_parameter_or_create("k", initializer=np.arange(6.0).reshape(2, 3), need_grad=False)
    before = _params()
    out = tmp_path / "p.protobuf"
    nn.save_parameters(str(out))
    # the bytes nnabla writes for the same parameters (its own file is the first part)
    nnabla_bytes = (DATA / "nnp_params.protobuf").read_bytes()
    assert out.read_bytes().startswith(nnabla_bytes)
    nn.clear_parameters()
    nn.load_parameters(str(out))
    after = _params()
    assert list(after) == list(before)
    for k in before:
        assert after[k][:2] == before[k][:2]
        np.testing.assert_array_equal(after[k][2], before[k][2])


def test_file_objects_with_extension() -> None:
    get_parameter_or_create("w", initializer=np.array([1.5, -2.5], np.float32))
    buf = io.BytesIO()
    nn.save_parameters(buf, extension=".protobuf")
    assert buf.tell() == 0
    nn.clear_parameters()
    nn.load_parameters(buf, extension=".protobuf")
    np.testing.assert_array_equal(nn.get_parameters()["w"].d, [1.5, -2.5])
    nn.clear_parameters()
    text = io.StringIO((DATA / "nnp_mlp.nntxt").read_text())
    nn.load_parameters(text)  # nnabla's default for file objects: ".nntxt"
    assert list(nn.get_parameters()) == MLP


def test_loading_into_existing_parameters_keeps_the_variables() -> None:
    with nn.parameter_scope("mlp"), nn.parameter_scope("fc1"), nn.parameter_scope("affine"):
        w = get_parameter_or_create("W", (6, 5))
    nn.load_parameters(str(DATA / "nnp_mlp.nnp"))
    ref = _load("nnp_params.protobuf")["mlp/fc1/affine/W"][2]
    np.testing.assert_array_equal(w.d, ref)  # the values went into the existing Variable


def test_scope_prefixes_the_names() -> None:
    with nn.parameter_scope("net"):
        nn.load_parameters(str(DATA / "nnp_params.protobuf"))
    assert list(nn.get_parameters()) == [f"net/{k}" for k in MLP]


def test_refused_formats_and_malformed_files(tmp_path: Path) -> None:
    get_parameter_or_create("w", initializer=np.ones(2, np.float32))
    for ext in (".nntxt", ".nnp"):  # nnabla writes .h5 and .protobuf parameter files only
        with pytest.raises(ValueError, match=rf"nnabla save_parameters: .*'\{ext}' is not"):
            nn.save_parameters(str(tmp_path / f"p{ext}"))
    assert list(tmp_path.iterdir()) == []
    cut = tmp_path / "cut.protobuf"
    cut.write_bytes((DATA / "nnp_params.protobuf").read_bytes()[:-7])
    with pytest.raises(StateFileError, match=r"load_parameters: .*cut\.protobuf.*not a valid"):
        nn.load_parameters(str(cut))
    bad = tmp_path / "bad.nntxt"
    bad.write_text('parameter { variable_name: "w" colour: 3 }')
    with pytest.raises(
        StateFileError, match=r"bad\.nntxt.*line 1: Parameter has no field 'colour'"
    ):
        nn.load_parameters(str(bad))
    wrong = tmp_path / "wrong.nntxt"
    wrong.write_text('parameter { variable_name: "w" shape { dim: 3 } data: 1.0 }')
    with pytest.raises(StateFileError, match=r"parameter 'w' has shape \(3,\) but 1 values"):
        nn.load_parameters(str(wrong))
    notzip = tmp_path / "n.nnp"
    notzip.write_bytes(b"PK\x03\x04 not a zip")
    with pytest.raises(StateFileError, match=r"n\.nnp' is not an \.nnp file"):
        nn.load_parameters(str(notzip))
    np.testing.assert_array_equal(nn.get_parameters()["w"].d, [1.0, 1.0])  # unchanged


def _adam_on_mlp() -> S.Adam:
    nn.load_parameters(str(DATA / "nnp_params.protobuf"))
    solver = S.Adam(0.01)
    solver.set_parameters(nn.get_parameters())
    return solver


def test_solver_states_written_by_nnabla() -> None:
    solver = _adam_on_mlp()
    solver.load_states(str(DATA / "nnp_adam_states.protobuf"))
    states = solver.get_states()
    assert list(states) == sorted(MLP)
    for k, st in states.items():
        assert st.t == 2
        for n in ("mean", "var"):
            np.testing.assert_array_equal(st.pstate[n].d, REF[f"adam/{k}/{n}"])  # nnabla 1.39


def test_solver_states_protobuf_round_trip(tmp_path: Path) -> None:
    solver = _adam_on_mlp()
    solver.load_states(str(DATA / "nnp_adam_states.protobuf"))
    out = tmp_path / "s.protobuf"
    solver.save_states(str(out))

    # the same Optimizer message as nnabla's file (nnabla orders the map entries its own way)
    def entries(raw: bytes) -> dict[tuple[str, int, str], str]:
        states = decode("Optimizer", raw).solver.states
        return {
            (e.key, e.value.t, sp.key): to_text(sp.value)
            for e in states
            for sp in e.value.state_parameter
        }

    mine = entries(out.read_bytes())
    assert len(mine) == 8
    assert mine == entries((DATA / "nnp_adam_states.protobuf").read_bytes())
    other = S.Adam(0.01)
    other.set_parameters(nn.get_parameters())
    other.load_states(str(out))
    for k, st in other.get_states().items():
        assert st.t == 2
        np.testing.assert_array_equal(st.pstate["var"].d, REF[f"adam/{k}/var"])


def test_solver_state_protobuf_errors(tmp_path: Path) -> None:
    solver = _adam_on_mlp()
    bad = tmp_path / "s.protobuf"
    bad.write_bytes(b"\x0a\xff\xff")
    with pytest.raises(StateFileError, match=r"Adam\.load_states: .*s\.protobuf.*not a valid"):
        solver.load_states(str(bad))
    fresh = S.Adam()
    fresh.set_parameters({"z": nn.Variable((3,), need_grad=True)})
    with pytest.raises(ValueError, match=r"no parameter 'mlp/fc\d/affine/[Wb]'"):
        fresh.load_states(str(DATA / "nnp_adam_states.protobuf"))
