"""CUDA graphs: a compiled step's kernels recorded once and replayed with one launch.

:meth:`gradhub_cuda.device.CudaDevice.capture` (called by :mod:`gradhub.capture`) runs the step
once on a side stream in capture mode (``cupy.cuda.Stream.begin_capture``/``end_capture``, CuPy's
relaxed mode, in which the memory pool may grow) and keeps the ``cupy.cuda.graph.Graph``:

* **Memory.** Every array the run allocates comes from a memory pool of the graph's own
  (``cupy.cuda.using_allocator``), kept as long as the graph: an array freed during the run is
  reused by the run only (in stream order, as the replay does), and nothing else ever gets the
  addresses the graph writes to.
* **Products.** CuPy refuses to record cuBLAS; ``cupy.matmul``/``cupy.dot`` of 2-d float
  arrays, and ``cupy.matmul`` of batched ones (BatchMatmul, Einsum's contractions), also into
  ``out=``, go to recordable cuBLAS calls of :mod:`gradhub_cuda.cublas_capture` while
  recording.
* **No host data.** Copying host data to the GPU inside a recording would replay a copy from a
  host buffer that is gone by then; while recording, ``cupy.asarray``/``cupy.array`` of host data
  raise :class:`gradhub.CaptureUnsupported` naming it (the step then runs as a plan). Reading
  device data on the host (a synchronisation) is refused by CUDA itself and reported the same way.
* **Deferred checks.** A kernel that checks its arguments on the device (SoftmaxCrossEntropy's
  label range) hands its flag to :func:`defer_check` while recording instead of reading it; each
  launch reads the flags afterwards (one synchronisation) and reports a failure, so that the
  caller runs the step without the graph, where the kernel raises its error.
* **Arrays made before.** A kernel reading a device array it made before the recording (a
  GetItem key copied to the GPU once) hands it to :func:`keep`: the graph holds it.

Launches go to the current stream (CuPy's default: the legacy stream, ordered with all other
work). Nothing here imports CuPy at import time.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from gradhub import CaptureUnsupported


class _State(threading.local):
    def __init__(self) -> None:
        #: the flags deferred by kernels while this thread records, else None
        self.deferred: list[Any] | None = None
        #: arrays made outside the recording that it reads, kept as long as the graph
        self.kept: list[Any] | None = None


_STATE = _State()


def defer_check(flag: Any) -> bool:
    """While a graph is recorded on this thread: keep ``flag`` (a device array, nonzero where a
    check failed) to be read after each launch, and return True; otherwise return False (the
    kernel reads it now).

    Example::

        >>> from gradhub_cuda.capture import defer_check
        >>> defer_check(None)   # not recording
        False
    """
    deferred = _STATE.deferred
    if deferred is None:
        return False
    deferred.append(flag)
    return True


def keep(array: Any) -> None:
    """While a graph is recorded on this thread: keep ``array`` (made outside the recording, read
    by it) alive as long as the graph; otherwise nothing.

    Example::

        >>> from gradhub_cuda.capture import keep
        >>> keep(None)   # not recording
    """
    kept = _STATE.kept
    if kept is not None:
        kept.append(array)


class CudaGraph:
    """A recorded CUDA graph with the memory pool its arrays live in and its deferred checks."""

    def __init__(
        self, graph: Any, pool: Any, flags: list[Any], device: Any, kept: list[Any] | None = None
    ) -> None:
        self.graph = graph
        self.pool = pool
        self.flags = flags
        self.device = device
        #: arrays made outside the recording that the graph reads (see :func:`keep`)
        self.kept = kept or []
        #: launches so far
        self.launches = 0

    def launch(self) -> bool:
        """Replay the graph on the current stream; False when a deferred check failed."""
        with self.device:
            self.graph.launch()
            self.launches += 1
            for flag in self.flags:
                if flag.get().any():  # one synchronisation per flag, after the whole graph
                    return False
        return True


@contextmanager
def _replaced(cp: Any, names: tuple[str, ...], make: Callable[[str, Any], Any]) -> Iterator[None]:
    """CuPy's functions ``names`` replaced by ``make(name, original)`` inside the block, and put
    back after it (also when it raises)."""
    saved = {name: getattr(cp, name) for name in names}
    for name, original in saved.items():
        setattr(cp, name, make(name, original))
    try:
        yield
    finally:
        for name, original in saved.items():
            setattr(cp, name, original)


@contextmanager
def _recordable_products(cp: Any) -> Iterator[None]:
    """``cupy.matmul``/``cupy.dot`` of 2-d float arrays, and ``cupy.matmul`` of batched ones,
    through recordable cuBLAS calls (see :mod:`gradhub_cuda.cublas_capture`; CuPy's own refuse
    to be recorded)."""
    from . import cublas_capture

    try:
        cublas_capture.prepare(cp)
    except Exception:  # no cuBLAS to call directly: products stay CuPy's (and are refused)
        yield
        return
    ndarray = cp.ndarray
    supports, gemm = cublas_capture.supports, cublas_capture.gemm
    batched = cublas_capture.supports_batched, cublas_capture.batched_gemm

    def through_gemm(name: str, original: Any) -> Any:
        def product(a: Any, b: Any, *args: Any, **kwargs: Any) -> Any:
            out = kwargs.get("out")
            if (
                not args
                and kwargs.keys() <= {"out"}
                and type(a) is ndarray
                and type(b) is ndarray
                and (out is None or type(out) is ndarray)
            ):
                c = None
                if supports(a, b):
                    c = gemm(cp, a, b)
                elif name == "matmul" and batched[0](a, b):
                    c = batched[1](cp, a, b)
                if c is not None:
                    if out is None:
                        return c
                    if out.shape == c.shape and out.dtype == c.dtype:
                        out[...] = c  # as CuPy's own product into an out it cannot write to
                        return out
            return original(a, b, *args, **kwargs)

        return product

    with _replaced(cp, ("matmul", "dot"), through_gemm):
        yield


@contextmanager
def _host_data_refused(cp: Any) -> Iterator[None]:
    """``cupy.asarray``/``cupy.array`` of host data raise while recording."""
    ndarray = cp.ndarray

    def refusing(name: str, original: Any) -> Any:
        def guarded(a: Any, *args: Any, **kwargs: Any) -> Any:
            if not isinstance(a, ndarray):
                raise CaptureUnsupported(
                    f"gradhub-cuda: a kernel copies host data to the GPU (cupy.{name} of a "
                    f"{type(a).__name__}), which a recorded CUDA graph cannot replay"
                )
            return original(a, *args, **kwargs)

        return guarded

    with _replaced(cp, ("asarray", "array"), refusing):
        yield


def capture(cp: Any, cuda_device: Any, run: Callable[[], None]) -> CudaGraph:
    """Record what ``run()`` launches on ``cuda_device`` (a ``cupy.cuda.Device``) into a
    :class:`CudaGraph` (not launched yet)."""
    pool = cp.cuda.MemoryPool()
    flags: list[Any] = []
    kept: list[Any] = []
    with cuda_device:
        stream = cp.cuda.Stream(non_blocking=True)
        # the capture stream starts after everything queued so far (the inputs' copies)
        stream.wait_event(cp.cuda.get_current_stream().record())
        with cp.cuda.using_allocator(pool.malloc), stream:
            _STATE.deferred, _STATE.kept = flags, kept
            try:
                with _recordable_products(cp):
                    stream.begin_capture()
                    try:
                        with _host_data_refused(cp):
                            run()
                    except BaseException as e:
                        try:
                            stream.end_capture()
                        except Exception:
                            pass
                        if isinstance(e, CaptureUnsupported):
                            raise
                        raise CaptureUnsupported(
                            f"gradhub-cuda: the step cannot be recorded into a CUDA graph "
                            f"({type(e).__name__}: {e})"
                        ) from e
                    try:
                        graph = stream.end_capture()
                    except Exception as e:
                        raise CaptureUnsupported(
                            f"gradhub-cuda: CUDA refused the recorded graph "
                            f"({type(e).__name__}: {e})"
                        ) from e
            finally:
                _STATE.deferred = _STATE.kept = None
    return CudaGraph(graph, pool, flags, cuda_device, kept)
