"""mxnet's NDArray files: ``mx.nd.save``, ``mx.nd.load``, ``mx.nd.load_frombuffer``.

The files under ``data/`` were written by mxnet 1.9.1 itself (``data/make_ndarray_files.py``, whose
docstring lists their content): they load here with mxnet's names, shapes, dtypes and values, and
saving what was loaded writes the same bytes again (so mxnet reads the files written here; mxnet
1.9.1 also read the files of these tests' ``save`` calls back with the same values). Damaged,
sparse and unknown content raises ``MXNetError`` naming the file.
"""

from __future__ import annotations

import struct
from pathlib import Path

import gradhub as gh
import gradhub_compat.mxnet as mx
import numpy as np
import pytest
from gradhub_compat.mxnet import ndarray_io

DATA = Path(__file__).parent / "data"
BASE = np.arange(-3, 3).reshape(2, 3)

#: mxnet 1.9.1: mx.nd.save(f, mx.nd.array([[1, 2, 3], [4, 5, 6]])) (one array, no names)
SINGLE_HEX = (
    "120100000000000000000000000000000100000000000000c9fa93f9000000000200000002000000000000000300"
    "0000000000000100000000000000000000000000803f0000004000004040000080400000a0400000c04000000000"
    "00000000"
)
#: mxnet 1.9.1: mx.nd.save(f, []) and mx.nd.save(f, {}) (mx.nd.load of it gives [])
EMPTY_HEX = "12010000000000000000000000000000" + "00" * 16


def _array_bytes(
    magic: int, shape: tuple[int, ...], flag: int, data: bytes, stype: int = 0, dev: int = 1
) -> bytes:
    """One array in the V2/V3 layout of mxnet's ``NDArray::Save``."""
    head = struct.pack("<Iii", magic, stype, len(shape)) + struct.pack(f"<{len(shape)}q", *shape)
    return head + struct.pack("<iii", dev, 0, flag) + data


def _file(*arrays: bytes, names: tuple[str, ...] = ()) -> bytes:
    """A file of the given array entries (``kMXAPINDArrayListMagic``, reserved, arrays, names)."""
    out = struct.pack("<QQQ", 0x112, 0, len(arrays)) + b"".join(arrays)
    out += struct.pack("<Q", len(names))
    for n in names:
        out += struct.pack("<Q", len(n.encode())) + n.encode()
    return out


def test_load_every_dtype_written_by_mxnet() -> None:
    loaded = mx.nd.load(str(DATA / "dtypes.nd"))
    assert isinstance(loaded, dict)
    dts = ["float16", "float32", "float64", "uint8", "int8", "int32", "int64", "bool"]
    assert list(loaded) == dts  # the file's order
    for dt in dts:
        a = loaded[dt]
        assert isinstance(a, mx.nd.NDArray) and a.context == mx.cpu(0)
        assert a.dtype == np.dtype(dt) and a.shape == (2, 3)
        if dt == "bool":
            expected = BASE != 0
        elif dt.startswith("float"):
            expected = (BASE / 4).astype(dt)
            if dt == "float32":
                expected[1] = [np.inf, -np.inf, np.nan]
        else:
            expected = BASE.astype(dt)  # uint8: -3 wraps to 253, as numpy and mxnet cast
        np.testing.assert_array_equal(a.asnumpy(), expected)
        assert a.asnumpy().dtype == np.dtype(dt)


def test_load_list_without_names() -> None:
    loaded = mx.nd.load(DATA / "list.nd")
    assert isinstance(loaded, list) and len(loaded) == 2
    np.testing.assert_array_equal(loaded[0].asnumpy(), np.arange(6).reshape(2, 3) / 2)
    assert loaded[0].dtype == np.float32
    assert loaded[1].dtype == np.int64 and loaded[1].asnumpy().tolist() == [7]


def test_load_gluon_save_parameters() -> None:
    loaded = mx.nd.load(str(DATA / "gluon.params"))
    assert list(loaded) == ["0.weight", "0.bias"]  # mxnet 1.9.1's names
    np.testing.assert_array_equal(
        loaded["0.weight"].asnumpy(), (np.arange(12).reshape(3, 4) / 10).astype(np.float32)
    )
    np.testing.assert_array_equal(loaded["0.bias"].asnumpy(), [-1, 0, 1])


def test_load_checkpoint_params_file() -> None:
    loaded = mx.nd.load(str(DATA / "mlp-0003.params"))
    assert sorted(loaded) == ["arg:fc1_bias", "arg:fc1_weight", "arg:fc2_bias", "arg:fc2_weight"]
    np.testing.assert_array_equal(
        loaded["arg:fc1_weight"].asnumpy(), np.sin(np.arange(20)).reshape(5, 4).astype(np.float32)
    )


def test_zero_dim_array_of_mxnet_default_mode() -> None:
    # mxnet 1.9.1 writes a 0-d array outside np_shape as magic V2, ndim 0, then context, dtype
    # and the element (and cannot load that file itself); the layer reads the element
    (a,) = mx.nd.load(str(DATA / "scalar_default.nd"))
    assert a.shape == () and a.dtype == np.float32 and a.asnumpy()[()] == 2.5


def test_np_shape_file_with_zero_dim_and_empty_arrays() -> None:
    a, b, c = mx.nd.load(str(DATA / "scalar_np_shape.nd"))
    assert a.shape == () and a.asnumpy()[()] == 2.5
    assert b.shape == (0, 2) and b.dtype == np.float32
    assert c.asnumpy().tolist() == [1.0, 2.0]


@pytest.mark.parametrize(
    "name",
    [
        "dtypes.nd",
        "list.nd",
        "gluon.params",
        "mlp-0003.params",
        "mlp-expected.nd",
        "scalar_np_shape.nd",
    ],
)
def test_save_writes_mxnet_bytes(name: str, tmp_path: Path) -> None:
    # saving what was loaded writes the very bytes mxnet 1.9.1 wrote
    out = tmp_path / "out.nd"
    mx.nd.save(str(out), mx.nd.load(str(DATA / name)))
    assert out.read_bytes() == (DATA / name).read_bytes()


def test_save_single_array(tmp_path: Path) -> None:
    f = tmp_path / "s.nd"
    mx.nd.save(str(f), mx.nd.array([[1, 2, 3], [4, 5, 6]]))
    assert f.read_bytes().hex() == SINGLE_HEX
    (a,) = mx.nd.load(str(f))
    assert a.asnumpy().tolist() == [[1, 2, 3], [4, 5, 6]]


@pytest.mark.parametrize("data", [[], {}])
def test_save_empty(data: object, tmp_path: Path) -> None:
    f = tmp_path / "e.nd"
    mx.nd.save(str(f), data)  # type: ignore[arg-type]
    assert f.read_bytes().hex() == EMPTY_HEX
    assert mx.nd.load(str(f)) == []


def test_round_trip_keeps_values_dtypes_and_order(tmp_path: Path) -> None:
    rng = np.random.RandomState(0)
    data = {
        "w": mx.nd.array(rng.randn(3, 4, 5), dtype="float64"),
        "é": mx.nd.array(rng.randn(2), dtype="float16"),
        "empty": mx.nd.zeros((0, 3), dtype="int32"),
        "flags": mx.nd.array([True, False, True], dtype="bool"),
        "a": mx.nd.array([-128, 127], dtype="int8"),
    }
    f = tmp_path / "r.nd"
    mx.nd.save(str(f), data)
    assert f.read_bytes()[24:28] == struct.pack("<I", ndarray_io.V2_MAGIC)
    back = mx.nd.load(str(f))
    assert list(back) == list(data)
    for k, v in data.items():
        assert back[k].dtype == v.dtype and back[k].shape == v.shape
        np.testing.assert_array_equal(back[k].asnumpy(), v.asnumpy())


def test_zero_dim_array_makes_an_np_shape_file(tmp_path: Path) -> None:
    f = tmp_path / "z.nd"
    mx.nd.save(str(f), [mx.nd.array(2.5), mx.nd.array([1, 2], dtype="int64")])
    raw = f.read_bytes()
    assert raw[24:28] == struct.pack("<I", ndarray_io.V3_MAGIC)
    # the 0-d entry: V3 magic, dense, ndim 0, cpu(0), float32, 2.5; then the V3 [1, 2]
    assert raw[24:52] == struct.pack("<Iiiiiif", 0xF993FACA, 0, 0, 1, 0, 0, 2.5)
    assert raw[52:56] == struct.pack("<I", ndarray_io.V3_MAGIC)
    a, b = mx.nd.load(str(f))
    assert a.shape == () and a.asnumpy()[()] == 2.5 and b.asnumpy().tolist() == [1, 2]


def test_load_frombuffer() -> None:
    raw = (DATA / "list.nd").read_bytes()
    for buf in (raw, bytearray(raw), memoryview(raw)):
        a, b = mx.nd.load_frombuffer(buf)
        assert a.shape == (2, 3) and b.asnumpy().tolist() == [7]
    # bytes after the names are ignored, as mxnet 1.9.1 does
    assert len(mx.nd.load_frombuffer(raw + b"xyz")) == 2
    assert mx.nd.load_frombuffer(bytes.fromhex(EMPTY_HEX)) == []


def test_loaded_arrays_own_their_memory() -> None:
    buf = bytearray(_file(_array_bytes(0xF993FAC9, (2,), 0, struct.pack("<2f", 1, 2))))
    (a,) = mx.nd.load_frombuffer(buf)
    buf[-16:-8] = b"\0" * 8  # the two elements
    assert a.asnumpy().tolist() == [1.0, 2.0]
    a[:] = 5  # writable
    assert a.asnumpy().tolist() == [5.0, 5.0]
    assert mx.nd.load_frombuffer(buf)[0].asnumpy().tolist() == [0.0, 0.0]


def test_bool_bytes_other_than_one_are_true() -> None:
    (a,) = mx.nd.load_frombuffer(_file(_array_bytes(0xF993FAC9, (3,), 7, b"\x00\x02\xff")))
    assert a.dtype == np.bool_ and a.asnumpy().tolist() == [False, True, True]


def test_gpu_context_loads_on_cpu() -> None:
    entry = _array_bytes(0xF993FAC9, (1,), 1, struct.pack("<d", 3.25), dev=2)
    (a,) = mx.nd.load_frombuffer(_file(entry))
    assert a.context == mx.cpu(0) and a.dtype == np.float64 and a.asnumpy().tolist() == [3.25]


def test_legacy_layouts() -> None:
    # V1: magic 0xF993FAC8, int32 ndim, int64 dimensions, context, dtype flag, data
    v1 = struct.pack("<Iiqq", 0xF993FAC8, 2, 1, 2) + struct.pack("<iii", 1, 0, 4)
    v1 += struct.pack("<2i", -5, 6)
    # before V1: the magic is the number of dimensions, then uint32 dimensions
    v0 = struct.pack("<II", 1, 3) + struct.pack("<iii", 1, 0, 0) + struct.pack("<3f", 1, 2, 3)
    a, b = mx.nd.load_frombuffer(_file(v1, v0))
    assert a.shape == (1, 2) and a.dtype == np.int32 and a.asnumpy().tolist() == [[-5, 6]]
    assert b.shape == (3,) and b.asnumpy().tolist() == [1.0, 2.0, 3.0]


def test_sparse_file_is_refused() -> None:
    with pytest.raises(mx.base.MXNetError, match=r"csr\.nd.*array 0 has csr storage") as e:
        mx.nd.load(str(DATA / "csr.nd"))
    assert isinstance(e.value, NotImplementedError)
    entry = _array_bytes(0xF993FAC9, (2,), 0, b"", stype=1)
    with pytest.raises(mx.base.MXNetError, match="row_sparse"):
        mx.nd.load_frombuffer(_file(entry))


def test_truncated_files_are_refused(tmp_path: Path) -> None:
    raw = (DATA / "dtypes.nd").read_bytes()
    for cut in range(len(raw)):
        with pytest.raises(mx.base.MXNetError, match="truncated"):
            mx.nd.load_frombuffer(raw[:cut])
    f = tmp_path / "cut.params"
    f.write_bytes(raw[:100])
    with pytest.raises(mx.base.MXNetError, match=r"mx\.nd\.load: file '.*cut\.params'.*truncated"):
        mx.nd.load(str(f))


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (struct.pack("<QQQQ", 0x113, 0, 0, 0), "not an mxnet NDArray file: the header is 0x113"),
        (_file(struct.pack("<I", 0xF993FACB)), "unknown magic number 0xf993facb"),
        (_file(_array_bytes(0xF993FAC9, (1,), 9, b"\0\0")), "unknown dtype flag 9"),
        (_file(_array_bytes(0xF993FAC9, (1,), 0, b"\0" * 4, stype=3)), "unknown storage type 3"),
        (_file(_array_bytes(0xF993FAC9, (1,), 0, b"\0" * 4, dev=7)), "unknown device type 7"),
        (_file(struct.pack("<Iii", 0xF993FAC9, -1, 0)), "uninitialized array"),
        (_file(struct.pack("<Iii", 0xF993FACA, 0, -1)), "unknown shape"),
        (_file(struct.pack("<Iiiq", 0xF993FACA, 0, 1, -1)), "unknown shape"),
        (_file(struct.pack("<Ii", 0xF993FAC8, 0)), "uninitialized array"),
        (
            _file(_array_bytes(0xF993FAC9, (1,), 0, b"\0" * 4), names=("a", "b")),
            "2 names for 1 arrays",
        ),
        (
            _file(_array_bytes(0xF993FAC9, (1,), 0, b"\0" * 4))[:-8]
            + struct.pack("<QQ", 1, 1)
            + b"\xff",
            "name 0 is not UTF-8",
        ),
    ],
)
def test_malformed_content_is_refused(content: bytes, message: str) -> None:
    with pytest.raises(mx.base.MXNetError, match=message) as e:
        mx.nd.load_frombuffer(content)
    assert str(e.value).startswith("mx.nd.load_frombuffer: the buffer: ")


def test_bfloat16_is_refused() -> None:
    entry = _array_bytes(0xF993FAC9, (1,), 12, b"\0\0")
    with pytest.raises(mx.base.MXNetError, match="bfloat16") as e:
        mx.nd.load_frombuffer(_file(entry))
    assert isinstance(e.value, NotImplementedError)


def test_missing_file(tmp_path: Path) -> None:
    missing = tmp_path / "nothing.params"
    with pytest.raises(mx.base.MXNetError, match=r"nothing\.params.*No such file") as e:
        mx.nd.load(str(missing))
    assert isinstance(e.value, FileNotFoundError)


def test_bad_arguments(tmp_path: Path) -> None:
    f = str(tmp_path / "x.nd")
    one = mx.nd.ones((1,))
    # mxnet 1.9.1's messages
    with pytest.raises(TypeError, match="save only accept dict str->NDArray or list of NDArray"):
        mx.nd.save(f, {1: one})  # type: ignore[dict-item]
    with pytest.raises(TypeError, match="save only accept dict str->NDArray or list of NDArray"):
        mx.nd.save(f, [one, np.ones(1)])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="data needs to either be a NDArray"):
        mx.nd.save(f, (one,))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"mx\.nd\.load: fname required to be a string"):
        mx.nd.load(3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"mx\.nd\.load_frombuffer: buf required to be bytes"):
        mx.nd.load_frombuffer("abc")  # type: ignore[arg-type]
    with pytest.raises(mx.base.MXNetError, match="array 'h' has the dtype int16") as e:
        mx.nd.save(f, {"h": mx.nd.array([1], dtype="int16")})
    assert isinstance(e.value, TypeError)


def test_save_inside_a_compiled_step_is_refused(tmp_path: Path) -> None:
    f = tmp_path / "c.nd"

    def step(x: object) -> None:
        mx.nd.save(str(f), [mx.nd.ones((2,))])

    with pytest.raises(NotImplementedError, match=r"gradhub\.compile: .*mxnet's nd\.save\(\)"):
        gh.compile(step)(gh.Variable(np.ones(2, np.float32)))
    assert not f.exists()
