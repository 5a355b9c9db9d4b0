"""Matrix products inside a CUDA-graph recording, through cuBLAS called directly.

CuPy refuses every cuBLAS call while a stream records (``cupy.cuda.cublas.setStream`` raises
``NotImplementedError: calling cuBLAS API during stream capture is currently unsupported``), yet
cuBLAS itself can be recorded when its handle has a workspace of its own (NVIDIA's cuBLAS guide,
"CUDA Graphs Support"). While :mod:`gradhub_cuda.capture` records, ``cupy.matmul`` and
``cupy.dot`` of two 2-d float32 or float64 arrays therefore go to :func:`gemm`: a handle of this
module (one per GPU, made with ``cublasCreate_v2`` through ctypes, with a 32 MiB workspace set by
``cublasSetWorkspace_v2``, the default size on Hopper) and ``cublasGemmEx`` with the arguments
CuPy 14 passes for the same product (``CUBLAS_COMPUTE_32F``/``_64F``, the default algorithm with
tensor ops on compute capability 8.0 and later).

``cupy.matmul`` of operands with more than two dimensions (BatchMatmul; ``cupy.einsum``, whose
pairwise contractions CuPy computes as ``cupy.matmul`` of 3-d arrays) goes to
:func:`batched_gemm`: ``cublasGemmStridedBatchedEx`` with the arguments of CuPy 14's own batched
``matmul`` (C-contiguous operands, no transposition, ``CUBLAS_GEMM_DEFAULT``, the compute type
``CUBLAS_COMPUTE_32F``/``_64F`` that CuPy's ``CUDA_R_32F``/``_64F`` becomes on a handle without
TF32 math), so where CuPy calls the same routine cuBLAS runs the same kernel. Batch axes that
broadcast are read with stride 0 where one operand is a single matrix; other broadcasts are
copied to full batches first (CuPy calls ``cublasSgemmBatched`` with pointer arrays there, whose
kernel may differ in rounding). A product into ``out=`` (the generic convolution's) is computed
so and copied into ``out``. Other products (mixed or integer dtypes, empty operands, a
``(1, k) @ (k, 1)`` product, which CuPy computes as a recordable reduction kernel) still go to
CuPy; the ones it computes with cuBLAS are refused, and the step runs as a plan.

Nothing here loads cuBLAS before a product is recorded.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import math
from typing import Any

_OP_N, _OP_T = 0, 1
_CUDA_R = {"f": 0, "d": 1}  # CUDA_R_32F, CUDA_R_64F
_COMPUTE = {"f": 68, "d": 70}  # CUBLAS_COMPUTE_32F, CUBLAS_COMPUTE_64F
_GEMM_DEFAULT, _GEMM_DEFAULT_TENSOR_OP = -1, 99
_WORKSPACE = 32 * 1024 * 1024
_INT_MAX = 2**31 - 1

#: the C types of ``cublasGemmStridedBatchedEx``'s 23 arguments (cublas_api.h, CUDA 12 and 13)
_STRIDED_BATCHED_ARGTYPES: tuple[Any, ...] = (
    ctypes.c_void_p,  # cublasHandle_t handle
    ctypes.c_int,  # cublasOperation_t transa
    ctypes.c_int,  # cublasOperation_t transb
    ctypes.c_int,  # int m
    ctypes.c_int,  # int n
    ctypes.c_int,  # int k
    ctypes.c_void_p,  # const void *alpha
    ctypes.c_void_p,  # const void *A
    ctypes.c_int,  # cudaDataType Atype
    ctypes.c_int,  # int lda
    ctypes.c_longlong,  # long long int strideA
    ctypes.c_void_p,  # const void *B
    ctypes.c_int,  # cudaDataType Btype
    ctypes.c_int,  # int ldb
    ctypes.c_longlong,  # long long int strideB
    ctypes.c_void_p,  # const void *beta
    ctypes.c_void_p,  # void *C
    ctypes.c_int,  # cudaDataType Ctype
    ctypes.c_int,  # int ldc
    ctypes.c_longlong,  # long long int strideC
    ctypes.c_int,  # int batchCount
    ctypes.c_int,  # cublasComputeType_t computeType
    ctypes.c_int,  # cublasGemmAlgo_t algo
)

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
    lib.cublasGemmStridedBatchedEx.argtypes = list(_STRIDED_BATCHED_ARGTYPES)
    for f in (
        lib.cublasCreate_v2,
        lib.cublasSetStream_v2,
        lib.cublasSetWorkspace_v2,
        lib.cublasGemmEx,
        lib.cublasGemmStridedBatchedEx,
    ):
        f.restype = i
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
    """Whether :func:`gemm` computes ``a @ b`` (2-d, nonempty, one float32/float64 dtype; not
    ``(1, k) @ (k, 1)``, which CuPy computes with a reduction kernel, recordable as it is)."""
    return (
        a.ndim == 2
        and b.ndim == 2
        and a.dtype == b.dtype
        and a.dtype.char in _CUDA_R
        and a.shape[1] == b.shape[0]
        and a.size > 0
        and b.size > 0
        and (a.shape[0] != 1 or b.shape[1] != 1)
        and max(a.shape[0], a.shape[1], b.shape[1]) <= _INT_MAX
    )


def batched_layout(a_shape: tuple[int, ...], b_shape: tuple[int, ...]) -> Any:
    """How :func:`batched_gemm` computes ``matmul`` of operands shaped ``a_shape`` and
    ``b_shape`` (numpy's rules: 1-d operands promoted to matrices, batch axes broadcast), or None
    where it does not (2-d or fewer axes, a contraction or batch that does not match, nothing to
    compute, sizes past cuBLAS's ``int``).

    The layout is ``(batch, n, k, m, a_batch, b_batch, out_shape)``: the product of ``batch``
    matrices ``(n, k) @ (k, m)``; ``a_batch`` is ``"full"`` (``a`` holds every matrix of the
    batch), ``"one"`` (one matrix, read with stride 0) or ``"copy"`` (broadcast by a copy), and
    the same for ``b_batch``; ``out_shape`` is ``matmul``'s result shape.

    Example::

        >>> from gradhub_cuda.cublas_capture import batched_layout
        >>> batched_layout((4, 2, 3), (3, 5))
        ((4,), 2, 3, 5, 'full', 'one', (4, 2, 5))
        >>> batched_layout((2, 3), (3, 5)) is None   # 2-d: gemm's
        True
    """
    na, nb = len(a_shape), len(b_shape)
    if na == 0 or nb == 0 or max(na, nb) <= 2:
        return None
    sa = (1, *a_shape) if na == 1 else tuple(a_shape)
    sb = (*b_shape, 1) if nb == 1 else tuple(b_shape)
    n, k = sa[-2], sa[-1]
    m = sb[-1]
    if sb[-2] != k:
        return None
    ba, bb = sa[:-2], sb[:-2]
    nd = max(len(ba), len(bb))
    ba = (1,) * (nd - len(ba)) + ba
    bb = (1,) * (nd - len(bb)) + bb
    batch = []
    for x, y in zip(ba, bb):
        if x != y and x != 1 and y != 1:
            return None
        batch.append(y if x == 1 else x)
    count = math.prod(batch)
    if not (count and n and k and m) or max(count, n, k, m) > _INT_MAX:
        return None

    def kind(own: tuple[int, ...]) -> str:
        if own == tuple(batch):
            return "full"
        return "one" if math.prod(own) == 1 else "copy"

    out = [*batch]
    if na != 1:
        out.append(n)
    if nb != 1:
        out.append(m)
    return tuple(batch), n, k, m, kind(ba), kind(bb), tuple(out)


def supports_batched(a: Any, b: Any) -> bool:
    """Whether :func:`batched_gemm` computes ``matmul(a, b)`` (more than two axes, one
    float32/float64 dtype, a :func:`batched_layout`)."""
    return (
        a.dtype == b.dtype
        and a.dtype.char in _CUDA_R
        and batched_layout(tuple(a.shape), tuple(b.shape)) is not None
    )


def _call_setup(cp: Any, dt: str) -> tuple[Any, Any, Any, Any]:
    """cuBLAS, gradhub's handle on the current stream, and the scalars 1 and 0 of the dtype
    ``dt`` (``"f"`` or ``"d"``) for one call."""
    lib = _library()
    handle = _handle(cp)
    _check(
        lib.cublasSetStream_v2(handle, ctypes.c_void_p(cp.cuda.get_current_stream().ptr)),
        "cublasSetStream_v2",
    )
    scalar = ctypes.c_float if dt == "f" else ctypes.c_double
    return lib, handle, scalar(1), scalar(0)


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
    lib, handle, one, zero = _call_setup(cp, dt)
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


def _stack(cp: Any, x: Any, kind: str, batch: tuple[int, ...], rows: int, cols: int) -> Any:
    """``x`` as the C-contiguous matrices ``(count, rows, cols)`` that cuBLAS reads (one matrix
    where ``kind`` is ``"one"``)."""
    x = x.reshape((rows, cols) if kind == "one" else (*x.shape[:-2], rows, cols))
    if kind == "copy":
        x = cp.broadcast_to(x, (*batch, rows, cols))
    return cp.ascontiguousarray(x)


def batched_gemm(cp: Any, a: Any, b: Any) -> Any:
    """``matmul(a, b)`` with more than two axes by ``cublasGemmStridedBatchedEx`` on the current
    stream (recordable); see :func:`batched_layout` for what it computes."""
    layout = batched_layout(tuple(a.shape), tuple(b.shape))
    assert layout is not None
    batch, n, k, m, ka, kb, out_shape = layout
    count = math.prod(batch)
    dt = a.dtype.char
    a3 = _stack(cp, a if a.ndim > 1 else a.reshape(1, k), ka, batch, n, k)
    b3 = _stack(cp, b if b.ndim > 1 else b.reshape(k, 1), kb, batch, k, m)
    c = cp.empty((*batch, n, m), dtype=a.dtype)
    lib, handle, one, zero = _call_setup(cp, dt)
    # row-major C[i] (n, m) is column-major C[i]^T (m, n) = B[i]^T A[i]^T, as CuPy's matmul
    _check(
        lib.cublasGemmStridedBatchedEx(
            handle,
            _OP_N,
            _OP_N,
            m,
            n,
            k,
            ctypes.cast(ctypes.byref(one), ctypes.c_void_p),
            ctypes.c_void_p(b3.data.ptr),
            _CUDA_R[dt],
            m,
            0 if kb == "one" else k * m,
            ctypes.c_void_p(a3.data.ptr),
            _CUDA_R[dt],
            k,
            0 if ka == "one" else n * k,
            ctypes.cast(ctypes.byref(zero), ctypes.c_void_p),
            ctypes.c_void_p(c.data.ptr),
            _CUDA_R[dt],
            m,
            n * m,
            count,
            _COMPUTE[dt],
            _GEMM_DEFAULT,
        ),
        "cublasGemmStridedBatchedEx",
    )
    return c.reshape(out_shape)
