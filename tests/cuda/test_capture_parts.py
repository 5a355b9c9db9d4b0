"""The parts of gradhub_cuda's CUDA-graph recording that need no GPU (they run everywhere).

While a graph is recorded, ``cupy.asarray``/``cupy.array`` of host data raise and float
products (2-d and batched) go to :mod:`gradhub_cuda.cublas_capture`; both put CuPy's functions
back afterwards, also when the recording fails. Here a stand-in module plays CuPy.
``cublas_capture._operand`` reads a row-major matrix as cuBLAS's column-major transposed one; its
choices are checked on numpy arrays of every layout against the product they must give. The
cuBLAS calls themselves (``cublasGemmEx``, ``cublasGemmStridedBatchedEx``) are emulated on host
memory from the arguments as cuBLAS reads them, each checked against its C type. The index
checks of Embed, EmbedBackward and OneHot on ``cuda`` run with numpy playing their kernels: the
generic kernels' errors when read at once, the flags kept while recording. AveragePooling and Pad
(reflect, repeat) are checked to copy no host data.
"""

from __future__ import annotations

import ctypes
import types
from typing import Any

import gradhub as gh
import numpy as np
import pytest
from gradhub_cuda import capture, cublas_capture


class _Array(np.ndarray):
    """The stand-in's arrays (a numpy subclass, as CuPy's are their own type)."""


def _fake_cupy() -> Any:
    cp = types.SimpleNamespace(ndarray=_Array)
    cp.asarray = lambda a, *args, **kw: np.asarray(a).view(_Array)
    cp.array = lambda a, *args, **kw: np.array(a).view(_Array)
    cp.matmul = lambda a, b, *args, **kw: ("cupy.matmul", a.shape, b.shape)
    cp.dot = lambda a, b, *args, **kw: ("cupy.dot", a.shape, b.shape)
    return cp


def test_host_data_is_refused_while_recording_and_cupy_is_restored() -> None:
    cp = _fake_cupy()
    asarray, array = cp.asarray, cp.array
    device_array = np.ones(3).view(_Array)
    with capture._host_data_refused(cp):
        assert type(cp.asarray(device_array)) is _Array  # device data: CuPy's own call
        with pytest.raises(gh.CaptureUnsupported, match=r"cupy\.asarray of a ndarray"):
            cp.asarray(np.ones(3))
        with pytest.raises(gh.CaptureUnsupported, match=r"cupy\.array of a float"):
            cp.array(2.0)
    assert cp.asarray is asarray and cp.array is array
    with pytest.raises(RuntimeError), capture._host_data_refused(cp):
        raise RuntimeError("a failed recording")
    assert cp.asarray is asarray and cp.array is array


def test_products_go_to_cublas_while_recording(monkeypatch: pytest.MonkeyPatch) -> None:
    cp = _fake_cupy()
    matmul, dot = cp.matmul, cp.dot
    calls: list[Any] = []
    monkeypatch.setattr(cublas_capture, "prepare", lambda cp: None)
    monkeypatch.setattr(cublas_capture, "gemm", lambda cp, a, b: calls.append((a, b)) or "gemm")
    a = np.ones((2, 3)).view(_Array)
    b = np.ones((3, 4)).view(_Array)
    with capture._recordable_products(cp):
        assert cp.matmul(a, b) == "gemm" and cp.dot(a, b) == "gemm"
        batched = np.ones((2, 2, 3), np.int64).view(_Array)
        assert cp.matmul(batched, batched)[0] == "cupy.matmul"  # integers: CuPy's kernel
        assert cp.dot(a, b.astype(np.float32))[0] == "cupy.dot"  # mixed dtypes
        assert cp.matmul(a, b, dtype=None)[0] == "cupy.matmul"  # an argument gemm does not take
    assert len(calls) == 2
    assert cp.matmul is matmul and cp.dot is dot


def test_without_cublas_products_stay_cupys(monkeypatch: pytest.MonkeyPatch) -> None:
    cp = _fake_cupy()
    matmul = cp.matmul

    def missing(cp: Any) -> None:
        raise OSError("no cuBLAS")

    monkeypatch.setattr(cublas_capture, "prepare", missing)
    with capture._recordable_products(cp):
        assert cp.matmul is matmul


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (np.ones((0, 3)), np.ones((3, 2))),
        (np.ones((2, 3)), np.ones((4, 2))),
        (np.ones((2, 3), np.float32), np.ones((3, 2))),
        (np.ones((2, 3), np.int64), np.ones((3, 2), np.int64)),
        (np.ones((2, 2, 3)), np.ones((3, 2))),
    ],
    ids=["empty", "mismatched", "mixed dtypes", "integers", "batched"],
)
def test_supports_refuses_what_gemm_does_not_compute(a: np.ndarray, b: np.ndarray) -> None:
    assert not cublas_capture.supports(a, b)


def _column_major(x: np.ndarray, op: int, ld: int, rows: int, cols: int) -> np.ndarray:
    """The (rows x cols) matrix cuBLAS reads from x's memory with operation ``op`` and leading
    dimension ``ld`` (column-major storage)."""
    # x's memory in order: column by column if x is F-contiguous (only), else row by row
    flat = x.ravel(order="F" if (x.flags.f_contiguous and not x.flags.c_contiguous) else "C")
    stored_rows, stored_cols = (rows, cols) if op == cublas_capture._OP_N else (cols, rows)
    stored = np.array([[flat[i + j * ld] for j in range(stored_cols)] for i in range(stored_rows)])
    return stored if op == cublas_capture._OP_N else stored.T


@pytest.mark.parametrize("layout_a", ["C", "F"])
@pytest.mark.parametrize("layout_b", ["C", "F"])
@pytest.mark.parametrize(("n", "k", "m"), [(2, 3, 4), (1, 3, 2), (3, 1, 2), (2, 3, 1)])
def test_operands_read_as_the_transposed_column_major_matrices(
    layout_a: str, layout_b: str, n: int, k: int, m: int
) -> None:
    rng = np.random.default_rng(0)
    a = np.asarray(rng.standard_normal((n, k)), order=layout_a)
    b = np.asarray(rng.standard_normal((k, m)), order=layout_b)
    (_, ta, lda), (_, tb, ldb) = cublas_capture._operand(a), cublas_capture._operand(b)
    # gemm computes C^T (m x n) = op(B-memory) (m x k) @ op(A-memory) (k x n)
    bt = _column_major(b, tb, ldb, m, k)
    at = _column_major(a, ta, lda, k, n)
    np.testing.assert_allclose(bt, b.T)
    np.testing.assert_allclose(at, a.T)
    np.testing.assert_allclose((bt @ at).T, a @ b)


def test_a_strided_operand_is_not_read_in_place() -> None:
    assert cublas_capture._operand(np.ones((4, 6))[:, ::2]) is None


# -- cuBLAS calls, emulated on the CPU -------------------------------------------------------


class _Pointer:
    def __init__(self, ptr: int) -> None:
        self.ptr = ptr


class _DevArray(np.ndarray):
    """A numpy array with CuPy's ``.data.ptr`` (its host address), for the emulated cuBLAS."""

    @property
    def data(self) -> Any:  # type: ignore[override]
        return _Pointer(self.ctypes.data)


def _dev(a: Any) -> Any:
    return np.asarray(a).view(_DevArray)


def _address(p: Any) -> int:
    return int(p.value) if isinstance(p, ctypes.c_void_p) else int(p)


def _memory(address: int, dtype: Any, count: int) -> np.ndarray:
    ct = ctypes.c_float if np.dtype(dtype) == np.float32 else ctypes.c_double
    return np.ctypeslib.as_array((ct * count).from_address(address))


class _Cublas:
    """cuBLAS's ``cublasGemmEx`` and ``cublasGemmStridedBatchedEx`` computed on host memory
    from their arguments as cuBLAS reads them (column-major matrices, leading dimensions,
    operations, strides in elements), each argument checked against the C type it must have."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[Any, ...]]] = []

    def cublasSetStream_v2(self, handle: Any, stream: Any) -> int:
        return 0

    @staticmethod
    def _typed(argtypes: Any, args: tuple[Any, ...]) -> None:
        assert len(args) == len(argtypes)
        for k, (t, v) in enumerate(zip(argtypes, args)):
            if t is ctypes.c_int:
                assert type(v) is int and -(2**31) <= v < 2**31, (k, v)
            elif t is ctypes.c_longlong:
                assert type(v) is int and -(2**63) <= v < 2**63, (k, v)
            else:
                assert t is ctypes.c_void_p and isinstance(v, ctypes.c_void_p), (k, v)

    def _gemm(self, args: tuple[Any, ...], count: int, strides: tuple[int, int, int]) -> None:
        _, ta, tb, m, n, k, alpha, A, at, lda, B, bt, ldb, beta, C, ct, ldc, comp, _ = args
        assert at == bt == ct and at in (0, 1)
        dt = np.float32 if at == 0 else np.float64
        assert comp == (68 if at == 0 else 70)  # CUBLAS_COMPUTE_32F / _64F: no TF32
        size = np.dtype(dt).itemsize
        al = _memory(_address(alpha), dt, 1)[0]
        be = _memory(_address(beta), dt, 1)[0]
        assert (al, be) == (1, 0)

        def read(ptr: Any, ld: int, rows: int, cols: int, op: int, stride: int, i: int) -> Any:
            stored = (rows, cols) if op == 0 else (cols, rows)
            assert ld >= max(1, stored[0])
            flat = _memory(_address(ptr) + i * stride * size, dt, ld * (stored[1] - 1) + stored[0])
            x = np.array([[flat[r + c * ld] for c in range(stored[1])] for r in range(stored[0])])
            return x if op == 0 else x.T

        for i in range(count):
            prod = read(A, lda, m, k, ta, strides[0], i) @ read(B, ldb, k, n, tb, strides[1], i)
            assert ldc >= m
            out = _memory(_address(C) + i * strides[2] * size, dt, ldc * (n - 1) + m)
            for r in range(m):
                for c in range(n):
                    out[r + c * ldc] = prod[r, c]

    def cublasGemmEx(self, *args: Any) -> int:
        vp, i = ctypes.c_void_p, ctypes.c_int
        self._typed([vp, i, i, i, i, i, vp, vp, i, i, vp, i, i, vp, vp, i, i, i, i], args)
        self.calls.append(("cublasGemmEx", args))
        self._gemm(args, 1, (0, 0, 0))
        return 0

    def cublasGemmStridedBatchedEx(self, *args: Any) -> int:
        self._typed(cublas_capture._STRIDED_BATCHED_ARGTYPES, args)
        self.calls.append(("cublasGemmStridedBatchedEx", args))
        s_a, s_b, s_c, count = args[10], args[14], args[19], args[20]
        assert s_c >= args[3] * args[4]  # C's matrices do not overlap
        plain = args[:10] + args[11:14] + args[15:19] + args[21:]
        self._gemm(plain, count, (s_a, s_b, s_c))
        return 0


@pytest.fixture
def emulated(monkeypatch: pytest.MonkeyPatch) -> tuple[Any, _Cublas]:
    """A stand-in CuPy over :class:`_DevArray` and the emulated cuBLAS in place of the library."""
    lib = _Cublas()
    monkeypatch.setattr(cublas_capture, "_LIB", [lib])
    monkeypatch.setattr(cublas_capture, "_HANDLES", {0: (ctypes.c_void_p(1), None)})
    stream = types.SimpleNamespace(ptr=0)
    device = types.SimpleNamespace(id=0, compute_capability="90")
    cp = types.SimpleNamespace(
        ndarray=_DevArray,
        empty=lambda shape, dtype: np.empty(shape, dtype).view(_DevArray),
        ascontiguousarray=lambda x: np.ascontiguousarray(x).view(_DevArray),
        broadcast_to=lambda x, shape: np.broadcast_to(x, shape).view(_DevArray),
        cuda=types.SimpleNamespace(get_current_stream=lambda: stream, Device=lambda: device),
    )
    return cp, lib


def test_the_strided_batched_signature_has_cublas_c_types() -> None:
    t = cublas_capture._STRIDED_BATCHED_ARGTYPES
    assert len(t) == 23
    assert [k for k, c in enumerate(t) if c is ctypes.c_longlong] == [10, 14, 19]  # strides
    assert [k for k, c in enumerate(t) if c is ctypes.c_void_p] == [0, 6, 7, 11, 15, 16]


_BATCHED = [
    ((4, 2, 3), (4, 3, 5)),
    ((4, 2, 3), (3, 5)),
    ((2, 3), (4, 3, 5)),
    ((1, 2, 3), (4, 3, 2)),
    ((2, 1, 2, 3), (1, 3, 3, 2)),
    ((3,), (2, 3, 4)),
    ((2, 2, 3), (3,)),
    ((2, 1, 1), (2, 1, 1)),
    ((3, 1, 4), (3, 4, 1)),
]


@pytest.mark.parametrize(("sa", "sb"), _BATCHED, ids=[f"{a}@{b}" for a, b in _BATCHED])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_batched_gemm_computes_numpys_matmul(
    emulated: tuple[Any, _Cublas], sa: tuple[int, ...], sb: tuple[int, ...], dtype: Any
) -> None:
    cp, lib = emulated
    rng = np.random.default_rng(1)
    a = rng.standard_normal(sa).astype(dtype)
    b = rng.standard_normal(sb).astype(dtype)
    assert cublas_capture.supports_batched(_dev(a), _dev(b))
    got = cublas_capture.batched_gemm(cp, _dev(a), _dev(b))
    want = np.matmul(a, b)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5 if dtype == np.float32 else 1e-12)
    [(name, args)] = lib.calls
    assert name == "cublasGemmStridedBatchedEx"
    assert args[1] == args[2] == cublas_capture._OP_N  # C-contiguous operands, as CuPy's
    assert args[22] == cublas_capture._GEMM_DEFAULT  # CuPy's algorithm for batched products


def test_batched_gemm_reads_transposed_views_and_one_matrix_without_copies(
    emulated: tuple[Any, _Cublas],
) -> None:
    cp, lib = emulated
    rng = np.random.default_rng(2)
    a = rng.standard_normal((3, 4, 2)).swapaxes(-1, -2)  # (3, 2, 4), not contiguous
    w = rng.standard_normal((4, 5))
    got = cublas_capture.batched_gemm(cp, _dev(a), _dev(w))
    np.testing.assert_allclose(np.asarray(got), a @ w, rtol=1e-12)
    args = lib.calls[0][1]
    assert args[14] == 2 * 4 and args[10] == 0  # a: one matrix each; w: stride 0
    assert args[20] == 3


@pytest.mark.parametrize(
    ("sa", "sb"),
    [((2, 3), (3, 4)), ((3,), (3, 4)), ((2, 3, 4), (2, 5, 4)), ((0, 2, 3), (3, 2)), ((3, 4), (4,))],
    ids=["2-d", "1-d @ 2-d", "mismatched", "empty batch", "2-d @ 1-d"],
)
def test_batched_layout_leaves_what_it_does_not_compute(
    sa: tuple[int, ...], sb: tuple[int, ...]
) -> None:
    assert cublas_capture.batched_layout(sa, sb) is None


def test_batched_products_of_other_dtypes_are_not_taken() -> None:
    a = np.ones((2, 2, 3), np.float32)
    assert not cublas_capture.supports_batched(a, np.ones((2, 3, 2)))
    assert not cublas_capture.supports_batched(a.astype(np.int64), np.ones((2, 3, 2), np.int64))


@pytest.mark.parametrize("layouts", ["CC", "CF", "FC", "FF"])
def test_gemm_computes_numpys_product(emulated: tuple[Any, _Cublas], layouts: str) -> None:
    cp, lib = emulated
    rng = np.random.default_rng(3)
    a = np.asarray(rng.standard_normal((3, 4)), order=layouts[0])
    b = np.asarray(rng.standard_normal((4, 2)), order=layouts[1])
    got = cublas_capture.gemm(cp, _dev(a), _dev(b))
    np.testing.assert_allclose(np.asarray(got), a @ b, rtol=1e-12)
    assert [name for name, _ in lib.calls] == ["cublasGemmEx"]


def test_batched_products_go_to_cublas_while_recording(monkeypatch: pytest.MonkeyPatch) -> None:
    cp = _fake_cupy()
    calls: list[str] = []
    monkeypatch.setattr(cublas_capture, "prepare", lambda cp: None)
    monkeypatch.setattr(cublas_capture, "gemm", lambda cp, a, b: calls.append("gemm") or "gemm")
    monkeypatch.setattr(
        cublas_capture, "batched_gemm", lambda cp, a, b: calls.append("batched") or "batched"
    )
    a3 = np.ones((2, 2, 3)).view(_Array)
    b2 = np.ones((3, 4)).view(_Array)
    with capture._recordable_products(cp):
        assert cp.matmul(a3, b2) == "batched"
        assert cp.matmul(a3, a3.swapaxes(-1, -2)) == "batched"
        assert cp.dot(a3, b2)[0] == "cupy.dot"  # dot of n-d arrays is no batched product
        row, col = np.ones((1, 3)).view(_Array), np.ones((3, 1)).view(_Array)
        assert cp.matmul(row, col)[0] == "cupy.matmul"  # CuPy's reduction kernel: recordable
        assert cp.matmul(col, row) == "gemm"
    assert calls == ["batched", "batched", "gemm"]


# -- index checks deferred (Embed, EmbedBackward, OneHot), with numpy playing the kernels -----


class _Host(np.ndarray):
    """A flag array with CuPy's ``.get()``."""

    def get(self) -> np.ndarray:
        return np.asarray(self)


class _Xp:
    """numpy as the kernels' ``xp``, its ``zeros`` giving arrays with ``.get()``, its ``take``
    wrapping indices out of range as CuPy's does (a recorded step computes with bad ids before
    its flag is read)."""

    def __getattr__(self, name: str) -> Any:
        return getattr(np, name)

    @staticmethod
    def zeros(shape: Any, dtype: Any = float) -> Any:
        return np.zeros(shape, dtype).view(_Host)

    @staticmethod
    def take(a: Any, indices: Any, axis: Any = None) -> Any:
        return np.take(a, indices, axis=axis, mode="wrap")


def _index_check(x: Any, bound: int, bad: Any) -> None:
    x = np.asarray(x)
    with np.errstate(invalid="ignore"):
        inside = (x >= 0) & (x < bound)
        whole = np.where(inside, x, 0).astype(np.int64) == np.where(inside, x, 0)
    if not np.all(inside & whole):
        bad[0] = 1


def _one_hot_kernel(flat: Any, p: int, y: Any) -> None:
    i = np.arange(y.size)
    y[...] = (np.asarray(flat)[i // p] == i % p).reshape(y.shape)


@pytest.fixture
def index_kernels(monkeypatch: pytest.MonkeyPatch) -> Any:
    from gradhub_cuda import kernels

    monkeypatch.setattr(
        kernels, "_k", lambda: {"index_check": _index_check, "one_hot": _one_hot_kernel}
    )
    return kernels


@pytest.fixture
def recording() -> Any:
    """The deferred flags of a recording on this thread (as :func:`capture.capture` sets them)."""
    flags: list[Any] = []
    capture._STATE.deferred = flags
    yield flags
    capture._STATE.deferred = None


def _generic(name: str, *args: Any, **attrs: Any) -> Any:
    from gradhub.ops import fdef

    return fdef(name).forward(np, *args, **attrs)


@pytest.mark.parametrize(
    "ids", [np.array([[0, 4], [2, 2]]), np.array([3.0, 0.0, 1.0]), np.array([1], np.uint8)]
)
def test_embed_checks_ids_in_one_flag(index_kernels: Any, ids: np.ndarray) -> None:
    w = np.random.default_rng(4).standard_normal((5, 3))
    np.testing.assert_array_equal(index_kernels.embed(_Xp(), ids, w), _generic("Embed", ids, w))
    g = np.ones(ids.shape + (3,))
    np.testing.assert_array_equal(
        index_kernels.embed_backward(_Xp(), ids, g, shape=(5, 3)),
        _generic("EmbedBackward", ids, g, shape=(5, 3)),
    )


@pytest.mark.parametrize(
    ("ids", "message"),
    [
        (np.array([0, 5]), r"embed: ids in x0 must be in \[0, 5\), got values in \[0, 5\]"),
        (np.array([-1, 2]), r"embed: ids in x0 must be in \[0, 5\), got values in \[-1, 2\]"),
        (np.array([1.5]), r"embed: x0 must hold integer ids .* got the float value 1.5"),
        (np.array([np.nan]), r"embed: x0 must hold integer ids .* got the float value nan"),
    ],
)
def test_embed_raises_the_generic_error_unless_recording(
    index_kernels: Any, ids: np.ndarray, message: str
) -> None:
    w = np.ones((5, 2))
    with pytest.raises(ValueError, match=message):
        index_kernels.embed(_Xp(), ids, w)
    with pytest.raises(ValueError, match=message.replace("embed:", "embed_backward:")):
        index_kernels.embed_backward(_Xp(), ids, np.ones(ids.shape + (2,)), shape=(5, 2))


def test_a_recording_keeps_the_flags_instead_of_reading_them(
    index_kernels: Any, recording: list[Any]
) -> None:
    w = np.ones((5, 2))
    index_kernels.embed(_Xp(), np.array([0, 7]), w)  # no error now: after the launch
    index_kernels.embed(_Xp(), np.array([0, 4]), w)
    index_kernels.one_hot(_Xp(), np.array([[0, 3]]), shape=(2, 3))
    index_kernels.embed_backward(_Xp(), np.array([2]), np.ones((1, 2)), shape=(5, 2))
    assert [int(f[0]) for f in recording] == [1, 0, 1, 0]


def test_one_hot_checks_each_position_against_its_size(index_kernels: Any) -> None:
    x = np.array([[[0, 2], [1, 1]], [[1, 0], [0, 0]]])
    np.testing.assert_array_equal(
        index_kernels.one_hot(_Xp(), x, shape=(2, 3)), _generic("OneHot", x, shape=(2, 3))
    )
    xf = np.array([[1.0, 2.0], [0.0, 0.0]])
    got = index_kernels.one_hot(_Xp(), xf, shape=(2, 3))
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, _generic("OneHot", xf, shape=(2, 3)))
    with pytest.raises(ValueError, match=r"one_hot: x\[\.\.\., 1\] must be in \[0, 3\), got"):
        index_kernels.one_hot(_Xp(), np.array([[1, 3]]), shape=(2, 3))
    with pytest.raises(ValueError, match=r"one_hot: x must hold integer ids .* value 0.5"):
        index_kernels.one_hot(_Xp(), np.array([[0.5]]), shape=(2,))
    with pytest.raises(ValueError, match=r"one_hot: the last dim of x \(2\) must equal"):
        index_kernels.one_hot(_Xp(), np.array([[0, 1]]), shape=(2,))


# -- kernels that build their constants on the device ------------------------------------------


class _NoHostCopies(_Xp):
    """numpy as ``xp``, recording every call of ``asarray``/``array`` (a host-to-device copy
    on a GPU)."""

    def __init__(self) -> None:
        self.copies: list[str] = []

    def __getattr__(self, name: str) -> Any:
        if name in ("asarray", "array"):
            self.copies.append(name)
        return getattr(np, name)


@pytest.mark.parametrize(
    ("name", "attrs"),
    [
        ("AveragePooling", {"kernel": (2, 2), "stride": (1, 2), "pad": (1, 0)}),
        ("AveragePooling", {"kernel": (3,), "pad": (1,), "including_pad": False}),
        ("Pad", {"pad_width": (2, 3, 1, 1), "mode": "reflect"}),
        ("Pad", {"pad_width": (1, 2), "mode": "repeat"}),
    ],
)
def test_kernels_copy_no_host_data(name: str, attrs: dict[str, Any]) -> None:
    from gradhub.ops import fdef

    x = np.random.default_rng(5).standard_normal((2, 3, 4, 5))
    xp = _NoHostCopies()
    got = fdef(name).forward(xp, x, **attrs)
    assert xp.copies == []
    np.testing.assert_array_equal(got, fdef(name).forward(np, x, **attrs))
    np.testing.assert_allclose(got, fdef(name).reference(x, **attrs), rtol=1e-12)


class _GpuArray(np.ndarray):
    """An array the stand-in GPU holds."""


class _Gpu(_Xp):
    """numpy as a GPU's ``xp``: ``asarray`` of a host array (not a :class:`_GpuArray`) is a
    copy to the GPU, recorded; CuPy's ``cuda.Device().id`` is 0."""

    cuda = types.SimpleNamespace(Device=lambda: types.SimpleNamespace(id=0))

    def __init__(self) -> None:
        self.copies: list[Any] = []

    def asarray(self, a: Any, *args: Any, **kwargs: Any) -> Any:
        if not isinstance(a, _GpuArray):
            self.copies.append(np.array(a))  # a copy: the array itself may go
        return np.array(a, *args, **kwargs).view(_GpuArray)  # a copy, as on a GPU


def test_integer_keys_are_copied_to_the_gpu_once_per_array() -> None:
    from gradhub_cuda import kernels

    xp = _Gpu()
    x = np.arange(12.0).reshape(4, 3)
    key, cols = np.array([3, 0, 3]), np.array([2, 1])
    for _ in range(3):
        np.testing.assert_array_equal(kernels.get_item(xp, x, key), x[key])
        np.testing.assert_array_equal(kernels.get_item(xp, x, (slice(None), cols)), x[:, cols])
    assert [c.tolist() for c in xp.copies] == [[3, 0, 3], [2, 1]]  # once per array
    g = np.ones((3, 3))
    want = np.zeros((4, 3))
    np.add.at(want, key, g)
    np.testing.assert_array_equal(kernels.get_item_backward(xp, g, key, shape=(4, 3)), want)
    assert len(xp.copies) == 2
    key[0] = 1  # changed in place: copied again
    np.testing.assert_array_equal(kernels.get_item(xp, x, key), x[[1, 0, 3]])
    assert len(xp.copies) == 3
    n = len(kernels._KEY_COPIES)
    del key
    assert len(kernels._KEY_COPIES) == n - 1  # the copy lives as long as the host array
    mask = np.array([True, False, True, False])
    np.testing.assert_array_equal(kernels.get_item(xp, x, mask), x[mask])  # as it was
    with pytest.raises(IndexError, match="boolean index did not match"):
        kernels.get_item(xp, x, np.array([True, False]))


def test_a_recording_holds_the_key_copies_it_reads() -> None:
    from gradhub_cuda import kernels

    key = np.array([1, 1, 0])
    kept: list[Any] = []
    capture._STATE.kept = kept
    try:
        kernels.get_item(_Gpu(), np.arange(3.0), key)
    finally:
        capture._STATE.kept = None
    assert [type(a) for a in kept] == [_GpuArray] and kept[0].tolist() == [1, 1, 0]
    capture.keep(np.ones(2))  # not recording: nothing kept
    assert len(kept) == 1


def test_pads_backward_indexes_with_one_array_per_geometry() -> None:
    from gradhub_nn_ops import shape

    a = shape._host_pad_index(4, 2, 3, "reflect")
    assert a is shape._host_pad_index(4, 2, 3, "reflect") and not a.flags.writeable
    np.testing.assert_array_equal(a, [2, 1, 0, 1, 2, 3, 2, 1, 0])


class _DeviceValues(np.ndarray):
    """Arrays whose values cannot be read on the host (``bool()`` raises), as a recording
    refuses; their comparisons and reductions give such arrays too."""

    def __bool__(self) -> bool:
        raise AssertionError("a device value read on the host")

    def any(self, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        return np.asarray(np.asarray(self).any(*args, **kwargs)).view(_DeviceValues)


@pytest.mark.parametrize("zero", [False, True], ids=["no zero", "a zero"])
@pytest.mark.parametrize("axis", [None, 1, (0, 2)])
def test_prods_rule_kernel_chooses_its_formula_on_the_device(zero: bool, axis: Any) -> None:
    from gradhub_cuda import kernels

    rng = np.random.default_rng(8)
    x = rng.standard_normal((2, 3, 4))
    if zero:
        x[1, 2, 0] = 0.0
    y = x.prod(axis=axis)
    gy = rng.standard_normal(y.shape)
    generic = kernels._generic_rule("Prod")(np, [gy], [x], [x.shape], [y], [y.shape], axis=axis)
    with np.errstate(divide="ignore", invalid="ignore"):  # y / 0, not kept (CuPy: no warning)
        got = kernels.prod_backward(
            np, [gy], [x.view(_DeviceValues)], [x.shape], [y], [y.shape], axis=axis
        )
    np.testing.assert_array_equal(np.asarray(got[0]), generic[0])
    with pytest.raises(AssertionError, match="read on the host"):  # the generic rule reads it
        kernels._generic_rule("Prod")(
            np, [gy], [x.view(_DeviceValues)], [x.shape], [y], [y.shape], axis=axis
        )


def test_products_into_out_while_recording(
    emulated: tuple[Any, _Cublas], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``matmul(a, b, out=out)`` (the generic convolution's products) computed by cuBLAS and
    copied into ``out``, whatever its layout; an ``out`` of another shape goes to CuPy."""
    cp, lib = emulated
    cp.matmul = lambda a, b, *args, **kw: "cupy.matmul"
    cp.dot = lambda a, b, *args, **kw: "cupy.dot"
    monkeypatch.setattr(cublas_capture, "prepare", lambda cp: None)
    rng = np.random.default_rng(9)
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((4, 5))
    out = np.zeros((2, 3, 5)).view(_DevArray)
    transposed = np.zeros((5, 3)).T.view(_DevArray)  # not C-contiguous
    with capture._recordable_products(cp):
        assert cp.matmul(_dev(a), _dev(b), out=out) is out
        assert cp.matmul(_dev(a[0]), _dev(b), out=transposed) is transposed
        assert cp.matmul(_dev(a), _dev(b), out=np.zeros((2, 3, 4)).view(_DevArray)) == (
            "cupy.matmul"
        )
    np.testing.assert_allclose(np.asarray(out), a @ b, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(transposed), a[0] @ b, rtol=1e-12)
    assert [name for name, _ in lib.calls[:2]] == ["cublasGemmStridedBatchedEx", "cublasGemmEx"]
