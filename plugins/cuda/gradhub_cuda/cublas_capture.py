"""Matrix products inside a CUDA-graph recording, through cuBLAS called directly.

CuPy refuses every cuBLAS call while a stream records (``cupy.cuda.cublas.setStream`` raises
``NotImplementedError: calling cuBLAS API during stream capture is currently unsupported``), yet
cuBLAS itself can be recorded when its handle has a workspace of its own (NVIDIA's cuBLAS guide,
"CUDA Graphs Support"). While :mod:`gradhub_cuda.capture` records, ``cupy.matmul`` and
``cupy.dot`` of two 2-d float32 or float64 arrays therefore go to :func:`gemm`: a handle of this
module (one per GPU, made with ``cublasCreate_v2`` through ctypes, with a 32 MiB workspace set by
``cublasSetWorkspace_v2``, the default size on Hopper) and ``cublasGemmEx`` with the arguments
CuPy 14 passes for the same product (``CUBLAS_COMPUTE_32F``/``_64F``, the default algorithm with
tensor ops on compute capability 8.0 and later). Other products (batched, mixed dtypes) still go
to CuPy, which refuses them, and the step runs as a plan.

Nothing here loads cuBLAS before a product is recorded.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from typing import Any

_OP_N, _OP_T = 0, 1
_CUDA_R = {"f": 0, "d": 1}  # CUDA_R_32F, CUDA_R_64F
_COMPUTE = {"f": 68, "d": 70}  # CUBLAS_COMPUTE_32F, CUBLAS_COMPUTE_64F
_GEMM_DEFAULT, _GEMM_DEFAULT_TENSOR_OP = -1, 99
_WORKSPACE = 32 * 1024 * 1024

_LIB: list[Any] = []
#: device id -> (handle, workspace memory)
_HANDLES: dict[int, tuple[ctypes.c_void_p, Any]] = {}


def _library() -> Any:
    if _LIB:
        return _LIB[0]
    errors = []
    lib = None
    for name in ("libcublas.so.13", "libcublas.so.12", ctypes.util.find_library("cublas")):
        if not name:
            continue
        try:
            lib = ctypes.CDLL(name)
            break
        except OSError as e:
            errors.append(f"{name}: {e}")
    if lib is None:
        try:
            from cuda.pathfinder import load_nvidia_dynamic_lib

            lib = ctypes.CDLL(load_nvidia_dynamic_lib("cublas").abs_path)
        except Exception as e:
            errors.append(f"cuda.pathfinder: {e}")
    if lib is None:
        raise OSError("gradhub-cuda: cuBLAS not found (" + "; ".join(errors) + ")")
    vp, i = ctypes.c_void_p, ctypes.c_int
    lib.cublasCreate_v2.argtypes = [ctypes.POINTER(vp)]
    lib.cublasSetStream_v2.argtypes = [vp, vp]
    lib.cublasSetWorkspace_v2.argtypes = [vp, vp, ctypes.c_size_t]
    lib.cublasGemmEx.argtypes = [vp, i, i, i, i, i, vp, vp, i, i, vp, i, i, vp, vp, i, i, i, i]
    for f in (lib.cublasCreate_v2, lib.cublasSetStream_v2, lib.cublasSetWorkspace_v2):
        f.restype = i
    lib.cublasGemmEx.restype = i
    _LIB.append(lib)
    return lib


def _check(status: int, what: str) -> None:
    if status != 0:
        raise RuntimeError(f"gradhub-cuda: {what} failed with cuBLAS status {status}")


def prepare(cp: Any) -> None:
    """Load cuBLAS and make this GPU's handle and workspace (before a recording: neither may
    happen inside one)."""
    _handle(cp)


def _handle(cp: Any) -> ctypes.c_void_p:
    dev = cp.cuda.Device().id
    h = _HANDLES.get(dev)
    if h is None:
        lib = _library()
        handle = ctypes.c_void_p()
        _check(lib.cublasCreate_v2(ctypes.byref(handle)), "cublasCreate_v2")
        work = cp.cuda.Memory(_WORKSPACE)  # cudaMalloc, outside every pool
        _check(
            lib.cublasSetWorkspace_v2(handle, ctypes.c_void_p(work.ptr), _WORKSPACE),
            "cublasSetWorkspace_v2",
        )
        h = _HANDLES[dev] = (handle, work)
    return h[0]


def _operand(a: Any) -> tuple[Any, int, int] | None:
    """(array, cuBLAS operation, leading dimension) reading the row-major matrix ``a`` as the
    column-major transposed matrix, without a copy where its layout allows."""
    rows, cols = a.shape
    if a.flags.c_contiguous:
        return a, _OP_N, max(cols, 1)
    if a.flags.f_contiguous:
        return a, _OP_T, max(rows, 1)
    return None


def supports(a: Any, b: Any) -> bool:
    """Whether :func:`gemm` computes ``a @ b`` (2-d, nonempty, one float32/float64 dtype)."""
    return (
        a.ndim == 2
        and b.ndim == 2
        and a.dtype == b.dtype
        and a.dtype.char in _CUDA_R
        and a.shape[1] == b.shape[0]
        and a.size > 0
        and b.size > 0
    )


def gemm(cp: Any, a: Any, b: Any) -> Any:
    """``a @ b`` of 2-d arrays by ``cublasGemmEx`` on the current stream (recordable)."""
    n, k = a.shape
    m = b.shape[1]
    dt = a.dtype.char
    oa, ob = _operand(a), _operand(b)
    if oa is None:
        a = cp.ascontiguousarray(a)
        oa = _operand(a)
    if ob is None:
        b = cp.ascontiguousarray(b)
        ob = _operand(b)
    assert oa is not None and ob is not None
    (a, ta, lda), (b, tb, ldb) = oa, ob
    c = cp.empty((n, m), dtype=a.dtype)
    lib = _library()
    handle = _handle(cp)
    _check(
        lib.cublasSetStream_v2(handle, ctypes.c_void_p(cp.cuda.get_current_stream().ptr)),
        "cublasSetStream_v2",
    )
    scalar = ctypes.c_float if dt == "f" else ctypes.c_double
    one, zero = scalar(1), scalar(0)
    major = cp.cuda.Device().compute_capability
    algo = _GEMM_DEFAULT_TENSOR_OP if int(major) >= 80 else _GEMM_DEFAULT
    # row-major C (n, m) is column-major C^T (m, n) = B^T A^T
    _check(
        lib.cublasGemmEx(
            handle,
            tb,
            ta,
            m,
            n,
            k,
            ctypes.cast(ctypes.byref(one), ctypes.c_void_p),
            ctypes.c_void_p(b.data.ptr),
            _CUDA_R[dt],
            ldb,
            ctypes.c_void_p(a.data.ptr),
            _CUDA_R[dt],
            lda,
            ctypes.cast(ctypes.byref(zero), ctypes.c_void_p),
            ctypes.c_void_p(c.data.ptr),
            _CUDA_R[dt],
            max(m, 1),
            _COMPUTE[dt],
            algo,
        ),
        "cublasGemmEx",
    )
    return c
