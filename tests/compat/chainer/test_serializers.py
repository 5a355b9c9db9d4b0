"""chainer's ``serializers.save_npz`` / ``load_npz`` in the chainer layer.

``data/chainer_net.npz`` was written by chainer 7.8.1 itself (``data/make_chainer_net.py``: a
Chain with ``l1 = L.Linear(3, 4)`` of known weights, ``bn = L.BatchNormalization(4)`` and a
ChainList ``stack`` of one ``L.Linear(2, 2, nobias=True)``). The tests read it into dicts of
named Variables, check that what the layer writes has chainer's layout (key names, dtypes,
shapes, compressed members), and the serialization protocol (``obj.serialize(serializer)``).
Refused files: their messages are asserted and the targets stay as they were.
"""

from __future__ import annotations

import io
import os
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from child_helpers import run_python
from gradhub.errors import StateFileError
from gradhub_compat import chainer
from gradhub_compat.chainer import Variable, serializers

FIXTURE = Path(__file__).parent / "data" / "chainer_net.npz"
#: chainer's keys for that Chain: parameters and persistents by their path in the hierarchy
KEYS = [
    "bn/N",
    "bn/avg_mean",
    "bn/avg_var",
    "bn/beta",
    "bn/gamma",
    "l1/W",
    "l1/b",
    "stack/0/W",
]
W = np.arange(12, dtype=np.float32).reshape(4, 3) / 10
B = np.arange(4, dtype=np.float32) - 1.5


def _targets() -> dict[str, Any]:
    """Zeroed targets with the fixture's shapes and dtypes (``bn/N`` a 0-d int64 array)."""
    with np.load(FIXTURE) as z:
        return {
            k: Variable(np.zeros_like(z[k])) if z[k].dtype.kind == "f" else np.zeros_like(z[k])
            for k in z.files
        }


def test_reads_a_file_written_by_chainer() -> None:
    with np.load(FIXTURE) as z:
        assert sorted(z.files) == KEYS
    d = _targets()
    serializers.load_npz(str(FIXTURE), d)
    np.testing.assert_array_equal(d["l1/W"].array, W)
    np.testing.assert_array_equal(d["l1/b"].array, B)
    np.testing.assert_array_equal(d["bn/avg_mean"].array, [0.5, 1.0, 1.5, 2.0])
    np.testing.assert_array_equal(d["bn/avg_var"].array, np.ones(4))
    np.testing.assert_array_equal(d["bn/gamma"].array, np.ones(4))
    np.testing.assert_array_equal(d["stack/0/W"].array, np.eye(2))
    assert d["bn/N"].dtype == np.int64 and d["bn/N"].shape == () and int(d["bn/N"]) == 0
    assert d["l1/W"].dtype == np.float32


def test_path_selects_a_child_and_values_are_written_in_place() -> None:
    """``path`` is a prefix, as chainer's (``"l1/"``; ``"l1"`` would read ``l1W``)."""
    w = Variable(np.zeros((4, 3), np.float32))
    arr = w.array
    b = np.zeros(4, np.float32)
    serializers.load_npz(str(FIXTURE), {"W": w, "b": b}, path="l1/")
    assert w.array is arr  # in place, as chainer's numpy.copyto
    np.testing.assert_array_equal(arr, W)
    np.testing.assert_array_equal(b, B)


def test_a_python_number_in_a_dict_is_replaced() -> None:
    d: dict[str, Any] = {"N": 5}
    serializers.load_npz(str(FIXTURE), d, path="bn/")
    assert d["N"] == 0 and type(d["N"]) is int


def test_written_layout_is_chainers(tmp_path: Path) -> None:
    d = _targets()
    serializers.load_npz(str(FIXTURE), d)
    out = tmp_path / "gradhub.npz"
    serializers.save_npz(str(out), d)
    with np.load(FIXTURE) as ref, np.load(out) as got:
        assert sorted(got.files) == sorted(ref.files) == KEYS
        for k in KEYS:
            assert got[k].dtype == ref[k].dtype and got[k].shape == ref[k].shape, k
            np.testing.assert_array_equal(got[k], ref[k])
    # numpy.savez_compressed by default, as chainer: every member deflated
    for info in zipfile.ZipFile(out).infolist():
        assert info.compress_type == zipfile.ZIP_DEFLATED
    assert {i.filename for i in zipfile.ZipFile(FIXTURE).infolist()} == {f"{k}.npy" for k in KEYS}
    serializers.save_npz(str(out), d, compression=False)
    assert {i.compress_type for i in zipfile.ZipFile(out).infolist()} == {zipfile.ZIP_STORED}


class _Linear:
    """A Link-like object with chainer's serialization protocol."""

    def __init__(self, w: np.ndarray) -> None:
        self.W = Variable(w)
        self.count = 3

    def serialize(self, s: Any) -> None:
        s("W", self.W.array)
        self.count = s("count", self.count)


class _Chain:
    def __init__(self) -> None:
        self.enc = _Linear(np.array([[1.0, 2.0]], np.float32))
        self.dec = _Linear(np.array([[3.0], [4.0]], np.float64))

    def serialize(self, s: Any) -> None:
        self.enc.serialize(s["enc"])
        self.dec.serialize(s["dec"])


def test_serialization_protocol(tmp_path: Path) -> None:
    net = _Chain()
    net.enc.count = 9
    assert sorted(serializers.serialize(net)) == ["dec/W", "dec/count", "enc/W", "enc/count"]
    buf = io.BytesIO()
    serializers.save_npz(buf, net)
    fresh = _Chain()
    fresh.enc.W.array[...] = 0
    fresh.dec.W.array[...] = 0
    buf.seek(0)
    serializers.load_npz(buf, fresh)
    np.testing.assert_array_equal(fresh.enc.W.array, [[1.0, 2.0]])
    np.testing.assert_array_equal(fresh.dec.W.array, [[3.0], [4.0]])
    assert fresh.dec.W.dtype == np.float64
    assert fresh.enc.count == 9 and type(fresh.enc.count) is int


def test_strict_and_ignore_names() -> None:
    extra = Variable(np.zeros(2, np.float32))
    d = {"l1/W": Variable(np.zeros((4, 3), np.float32)), "l9/W": extra}
    with pytest.raises(KeyError, match=r"chainer_net\.npz' has no entry 'l9/W'"):
        serializers.load_npz(str(FIXTURE), d)
    assert not d["l1/W"].array.any()  # checked before anything was loaded
    serializers.load_npz(str(FIXTURE), d, strict=False)
    np.testing.assert_array_equal(d["l1/W"].array, W)
    d["l1/W"].array[...] = 0
    serializers.load_npz(str(FIXTURE), d, ignore_names=["l9/W", lambda k: k == "l1/W"])
    assert not d["l1/W"].array.any()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_round_trip_in_a_fresh_process(tmp_path: Path, dtype: str) -> None:
    out = tmp_path / "m.npz"
    code = (
        "import numpy as np\n"
        "from gradhub_compat.chainer import Variable, serializers\n"
        f"w = Variable(np.linspace(-1, 1, 6, dtype='{dtype}').reshape(2, 3) / 3)\n"
        f"b = np.arange(3, dtype='{dtype}')\n"
        f"serializers.save_npz({str(out)!r}, {{'l1/W': w, 'l1/b': b}})\n"
    )
    run_python(code)
    w = Variable(np.zeros((2, 3), dtype))
    b = Variable(np.zeros(3, dtype))
    serializers.load_npz(str(out), {"W": w, "b": b}, path="l1/")
    np.testing.assert_array_equal(w.array, np.linspace(-1, 1, 6, dtype=dtype).reshape(2, 3) / 3)
    np.testing.assert_array_equal(b.array, np.arange(3))
    assert w.dtype == np.dtype(dtype)


def test_pickled_entries_are_refused(tmp_path: Path) -> None:
    """chainer writes ``None`` (an uninitialized parameter) as a pickled object array."""
    bad = tmp_path / "uninit.npz"
    np.savez(bad, **{"l1/W": np.asarray(None), "l1/b": np.ones(4, np.float32)})
    b = Variable(np.zeros(4, np.float32))
    w = Variable(np.zeros((4, 3), np.float32))
    with pytest.raises(StateFileError, match=r"uninit\.npz': entry 'l1/W' is a pickled Python"):
        serializers.load_npz(str(bad), {"l1/b": b, "l1/W": w})
    assert not b.array.any()


def test_shape_and_dtype_mismatch_are_refused() -> None:
    w = Variable(np.full((1, 3), 7.0, np.float32))
    b = Variable(np.zeros(4, np.float32))
    with pytest.raises(ValueError, match=r"entry 'l1/W' has shape \(4, 3\), .*\(1, 3\).*broadcast"):
        serializers.load_npz(str(FIXTURE), {"l1/b": b, "l1/W": w})
    assert not b.array.any() and (w.array == 7).all()
    with pytest.raises(TypeError, match=r"entry 'l1/b' has dtype float32.*int32 \(same_kind"):
        serializers.load_npz(str(FIXTURE), {"l1/b": np.zeros(4, np.int32)})


def test_unreadable_files(tmp_path: Path) -> None:
    cut = tmp_path / "cut.npz"
    cut.write_bytes(FIXTURE.read_bytes()[:300])
    with pytest.raises(StateFileError, match=r"chainer load_npz: .*cut\.npz"):
        serializers.load_npz(str(cut), {"l1/W": Variable(np.zeros((4, 3), np.float32))})
    with pytest.raises(FileNotFoundError):
        serializers.load_npz(str(tmp_path / "none.npz"), {})


def test_bad_objects_are_refused(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match=r"chainer save_npz: 'w' must be a Variable"):
        serializers.save_npz(str(tmp_path / "a.npz"), {"w": [1.0, 2.0]})
    with pytest.raises(TypeError, match="dict of named Variables or have chainer's serialize"):
        serializers.save_npz(str(tmp_path / "a.npz"), object())
    assert not (tmp_path / "a.npz").exists()


def test_save_is_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "m.npz"
    serializers.save_npz(str(out), {"w": Variable(np.ones(2, np.float32))})
    before = out.read_bytes()

    def crash(*args: object) -> None:
        raise OSError("simulated crash")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError, match="simulated crash"):
        serializers.save_npz(str(out), {"w": Variable(np.zeros(5, np.float32))})
    assert out.read_bytes() == before
    assert os.listdir(tmp_path) == ["m.npz"]


def test_module_attribute() -> None:
    assert chainer.serializers is serializers
