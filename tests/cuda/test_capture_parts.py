"""The parts of gradhub_cuda's CUDA-graph recording that need no GPU (they run everywhere).

While a graph is recorded, ``cupy.asarray``/``cupy.array`` of host data raise and 2-d float
products go to :mod:`gradhub_cuda.cublas_capture`; both put CuPy's functions back afterwards,
also when the recording fails. Here a stand-in module plays CuPy. ``cublas_capture._operand``
reads a row-major matrix as cuBLAS's column-major transposed one; its choices are checked on
numpy arrays of every layout against the product they must give.
"""

from __future__ import annotations

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
        batched = np.ones((2, 2, 3)).view(_Array)
        assert cp.matmul(batched, b)[0] == "cupy.matmul"  # not 2-d: CuPy's (refused by it)
        assert cp.dot(a, b.astype(np.float32))[0] == "cupy.dot"  # mixed dtypes
        assert cp.matmul(a, b, out=None)[0] == "cupy.matmul"  # an argument gemm does not take
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
