"""nnabla's ``.h5`` parameter files: ``nn.save_parameters`` / ``nn.load_parameters``.

``data/nnabla_params.h5`` was written by nnabla 1.39.0 itself (``data/make_nnabla_params.py``:
``PF.affine`` in scope ``fc1`` with known weights, ``PF.batch_normalization`` in scope ``bn`` and a
float64 parameter ``scale``). The tests read it with the layer, and check that what the layer
writes has the same layout (dataset names, dtypes, the ``need_grad`` and ``index`` attributes and
their types), which is what nnabla's loader reads. Refused files: their messages are asserted and
the parameters stay as they were.
"""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path

import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.parametric_functions as PF
import numpy as np
import pytest
from child_helpers import run_python
from gradhub.errors import StateFileError
from gradhub_compat.nnabla.parameter import get_parameter_or_create

h5py = pytest.importorskip("h5py")

FIXTURE = Path(__file__).parent / "data" / "nnabla_params.h5"
#: the parameters of the fixture in nnabla's order (the ``index`` attribute)
NAMES = [
    "fc1/affine/W",
    "fc1/affine/b",
    "bn/bn/beta",
    "bn/bn/gamma",
    "bn/bn/mean",
    "bn/bn/var",
    "scale",
]
W = np.arange(12, dtype=np.float32).reshape(3, 4) / 10
B = np.arange(4, dtype=np.float32) - 1.5


def _datasets(path: str | Path) -> dict[str, tuple[np.ndarray, dict[str, object]]]:
    out: dict[str, tuple[np.ndarray, dict[str, object]]] = {}
    with h5py.File(path, "r") as f:

        def visit(name: str, obj: object) -> None:
            if isinstance(obj, h5py.Dataset):
                out[name] = (obj[()], dict(obj.attrs))
                assert obj.compression is None and obj.chunks is None

        f.visititems(visit)
        assert dict(f.attrs) == {}
    return out


def test_reads_a_file_written_by_nnabla() -> None:
    nn.load_parameters(str(FIXTURE))
    params = nn.get_parameters(grad_only=False)
    assert list(params) == NAMES
    np.testing.assert_array_equal(params["fc1/affine/W"].d, W)
    np.testing.assert_array_equal(params["fc1/affine/b"].d, B)
    assert params["fc1/affine/W"].d.dtype == np.float32
    np.testing.assert_array_equal(params["bn/bn/gamma"].d, np.ones((1, 4), np.float32))
    np.testing.assert_array_equal(params["bn/bn/var"].d, np.ones((1, 4), np.float32))
    np.testing.assert_array_equal(params["bn/bn/mean"].d, np.zeros((1, 4), np.float32))
    assert params["scale"].d.dtype == np.float64
    np.testing.assert_array_equal(params["scale"].d, [[1.0, 2.0], [3.0, 4.0]])
    assert {k: v.need_grad for k, v in params.items()} == {
        k: k not in ("bn/bn/mean", "bn/bn/var") for k in NAMES
    }


def test_loads_into_the_parameters_of_a_built_graph() -> None:
    x = nn.Variable.from_numpy_array(np.array([[1.0, -2.0, 0.5]], dtype=np.float32))
    with nn.parameter_scope("fc1"):
        y = PF.affine(x, 4)
    w_before = nn.get_parameters()["fc1/affine/W"]
    nn.load_parameters(str(FIXTURE))
    assert nn.get_parameters()["fc1/affine/W"] is w_before  # overwritten in place
    y.forward()
    np.testing.assert_allclose(y.d, x.d @ W + B, rtol=1e-6)


def test_loads_under_the_current_scope_and_saves_relative_names(tmp_path: Path) -> None:
    with nn.parameter_scope("net"):
        nn.load_parameters(str(FIXTURE))
        nn.save_parameters(str(tmp_path / "net.h5"))
    assert list(nn.get_parameters(grad_only=False)) == [f"net/{n}" for n in NAMES]
    assert list(_datasets(tmp_path / "net.h5")) == sorted(NAMES)  # HDF5 lists names sorted


def test_written_layout_is_nnablas(tmp_path: Path) -> None:
    """Dataset names, shapes, dtypes, attributes and attribute types equal those nnabla wrote."""
    nn.load_parameters(str(FIXTURE))
    out = tmp_path / "gradhub.h5"
    nn.save_parameters(str(out))
    ref, got = _datasets(FIXTURE), _datasets(out)
    assert set(got) == set(ref) == set(NAMES)
    for name in NAMES:
        (a, attrs), (ra, rattrs) = got[name], ref[name]
        assert a.dtype == ra.dtype and a.shape == ra.shape, name
        np.testing.assert_array_equal(a, ra)
        assert attrs == rattrs, name  # need_grad and index, same values
        assert {k: type(v) for k, v in attrs.items()} == {k: type(v) for k, v in rattrs.items()}
    assert [got[n][1]["index"] for n in NAMES] == list(range(len(NAMES)))
    assert type(got["scale"][1]["need_grad"]) is np.bool_
    assert type(got["scale"][1]["index"]) is np.int64


def test_params_argument_order_and_need_grad(tmp_path: Path) -> None:
    a = nn.Variable.from_numpy_array(np.array([1.0, 2.0], np.float32), need_grad=True)
    b = nn.Variable.from_numpy_array(np.array([3.0], np.float32), need_grad=False)
    out = tmp_path / "p.h5"
    nn.save_parameters(str(out), {"z/b": b, "a": a})
    got = _datasets(out)
    assert got["z/b"][1] == {"need_grad": False, "index": 0}
    assert got["a"][1] == {"need_grad": True, "index": 1}
    nn.load_parameters(str(out))
    assert list(nn.get_parameters(grad_only=False)) == ["z/b", "a"]  # index order, not sorted


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_round_trip_in_a_fresh_process(tmp_path: Path, dtype: str) -> None:
    out = tmp_path / "p.h5"
    code = (
        "import numpy as np, gradhub as gh, gradhub_compat.nnabla as nn\n"
        f"a = np.linspace(-1, 1, 6, dtype='{dtype}').reshape(2, 3) / 3\n"
        "w = gh.Variable(a, need_grad=True)\n"
        "n = gh.Variable(np.ones(2, 'float32'), need_grad=False)\n"
        f"nn.save_parameters({str(out)!r}, {{'enc/W': w, 'enc/n': n}})\n"
    )
    run_python(code)
    nn.load_parameters(str(out))
    params = nn.get_parameters(grad_only=False)
    assert list(params) == ["enc/W", "enc/n"]
    expected = np.linspace(-1, 1, 6, dtype=dtype).reshape(2, 3) / 3
    assert params["enc/W"].d.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(params["enc/W"].d, expected)
    assert params["enc/W"].need_grad and not params["enc/n"].need_grad


def test_file_objects_need_extension_h5() -> None:
    get_parameter_or_create("w", initializer=np.array([1.5, 2.5], np.float32))
    buf = io.BytesIO()
    nn.save_parameters(buf, extension=".h5")
    assert buf.tell() == 0  # rewound, as nnabla's file handler does
    nn.clear_parameters()
    with pytest.raises(ValueError, match=r"nnabla load_parameters: .*not (UTF-8|a valid)"):
        nn.load_parameters(buf)  # nnabla's default for file objects: extension=".nntxt"
    buf.seek(0)
    nn.parameter.load_parameters(buf, extension=".h5")
    np.testing.assert_array_equal(nn.get_parameters()["w"].d, [1.5, 2.5])


def test_the_parameter_module_has_them() -> None:
    assert nn.parameter.save_parameters is nn.save_parameters
    assert nn.parameter.load_parameters is nn.load_parameters


def test_other_formats_are_refused(tmp_path: Path) -> None:
    get_parameter_or_create("w", initializer=np.ones(2, np.float32))
    # nnabla writes .h5 and .protobuf parameter files only (see test_parameter_formats.py)
    with pytest.raises(ValueError, match=r"nnabla save_parameters: .*p\.nntxt.*'\.nntxt'"):
        nn.save_parameters(str(tmp_path / "p.nntxt"))
    assert not (tmp_path / "p.nntxt").exists()
    with pytest.raises(ValueError, match=r"nnabla load_parameters: .*'\.txt' is not supported"):
        nn.load_parameters(str(tmp_path / "m.txt"))
    with pytest.raises(NotImplementedError, match="proto and needs_proto"):
        nn.load_parameters(str(FIXTURE), needs_proto=True)


def test_truncated_and_missing_files(tmp_path: Path) -> None:
    bad = tmp_path / "cut.h5"
    bad.write_bytes(FIXTURE.read_bytes()[:1000])
    with pytest.raises(
        StateFileError, match=r"nnabla load_parameters: '.*cut\.h5' is not a readable"
    ):
        nn.load_parameters(str(bad))
    with pytest.raises(FileNotFoundError, match=r"nothere\.h5"):
        nn.load_parameters(str(tmp_path / "nothere.h5"))
    assert nn.get_parameters(grad_only=False) == {}


def _write(path: Path, build: object) -> None:
    with h5py.File(path, "w") as f:
        build(f)  # type: ignore[operator]


def test_non_numeric_and_foreign_datasets_are_refused(tmp_path: Path) -> None:
    strings = tmp_path / "s.h5"
    _write(strings, lambda f: f.create_dataset("w", data=["a", "b"], dtype=h5py.string_dtype()))
    with pytest.raises(StateFileError, match=r"s\.h5.*dataset 'w' has dtype object"):
        nn.load_parameters(str(strings))
    keras = tmp_path / "k.h5"
    _write(keras, lambda f: f.create_dataset("dense/kernel", data=np.ones(2)))
    with pytest.raises(StateFileError, match=r"k\.h5.*'dense/kernel' has no need_grad attribute"):
        nn.load_parameters(str(keras))
    assert nn.get_parameters(grad_only=False) == {}


def test_shape_mismatch_names_the_parameter_and_changes_nothing(tmp_path: Path) -> None:
    with nn.parameter_scope("fc1/affine"):
        w = get_parameter_or_create("W", initializer=np.full((3, 4), 7.0, np.float32))
        get_parameter_or_create("b", initializer=np.full((5,), 7.0, np.float32))
    with pytest.raises(ValueError, match=r"parameter 'fc1/affine/b' has shape \(5,\), .* \(4,\)"):
        nn.load_parameters(str(FIXTURE))
    np.testing.assert_array_equal(w.d, np.full((3, 4), 7.0))  # checked before anything changed
    assert list(nn.get_parameters(grad_only=False)) == ["fc1/affine/W", "fc1/affine/b"]


def test_save_is_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "p.h5"
    get_parameter_or_create("w", initializer=np.ones(2, np.float32))
    nn.save_parameters(str(out))
    before = out.read_bytes()
    get_parameter_or_create("v", initializer=np.zeros(3, np.float32))

    def crash(*args: object) -> None:
        raise OSError("simulated crash")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError, match="simulated crash"):
        nn.save_parameters(str(out))
    assert out.read_bytes() == before
    assert os.listdir(tmp_path) == ["p.h5"]  # no temporary file left


def test_without_h5py_the_message_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "h5py", None)
    with pytest.raises(ImportError, match=r"nnabla save_parameters: .*gradhub-compat\[h5\]"):
        nn.save_parameters(str(tmp_path / "p.h5"))
