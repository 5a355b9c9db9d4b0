"""Intra-op parallelism on the CPU: one kernel's loop over chunks, shared by a few threads.

A kernel that splits its work into independent chunks (blocks of a batch, rows of an output)
calls :func:`parallel_for`; the calling thread and up to ``get_num_threads() - 1`` pool threads
take chunks from one shared counter until none is left, so a thread that the operating system
holds back delays only the chunk it is on. numpy releases the interpreter lock inside its copies,
ufuncs and matrix products, so chunks of a few hundred microseconds of numpy work run side by
side. As PyTorch's intra-op threads, this is a per-process setting:

- the number of threads is ``GRADHUB_NUM_THREADS`` when set, else ``OMP_NUM_THREADS``, else the
  number of CPUs this process may run on; :func:`set_num_threads` changes it (``1``: every loop
  runs in the calling thread, as before);
- the pool starts at the first loop that uses it (importing this module starts nothing) and is
  started anew in a child process after ``fork``;
- a loop inside a chunk, or in a second thread while the pool is busy, runs serially in its own
  thread (no nesting, no waiting for the pool);
- an exception raised by a chunk is raised by :func:`parallel_for` once every running chunk has
  ended; chunks not started by then are skipped;
- while the pool exists, the OpenBLAS library that numpy uses runs on one thread (see below).

numpy's OpenBLAS has threads of its own for large matrix products (``OPENBLAS_NUM_THREADS``, by
default one per CPU), and they do not rest when a product ends: each spins for about 0.1 s (2**28
cycles) waiting for the next one. A single multithreaded product per step (a 64x1024 @ 1024x10
affine layer is one: OpenBLAS splits a product with ``m * n * k`` of 2**19 or more over two
threads) thus keeps a core busy for the whole step, and the pool's threads share the cores with it:
measured on 2 cores (2026-11-26, W3's step with two threads), the process used 36-40 ms of CPU per
step with OpenBLAS's threads and 19 ms without, and its kernels' loops ran at about half speed. So
when the pool starts, the count of OpenBLAS's threads is set to 1 (``openblas_set_num_threads``,
looked up in the OpenBLAS library loaded in the process), and the count it had is set back when the
pool is closed (:func:`set_num_threads`), unless something else changed it in between. OpenBLAS's
results depend on its thread count (a product on one thread may differ from the same product on two
in the last bits), so the count is not changed back and forth by the clock: it is one from the
first loop on the pool until :func:`set_num_threads`. :func:`set_blas_control` (``False``) or
``GRADHUB_BLAS_CONTROL=0`` leaves OpenBLAS alone; other BLAS libraries (MKL, Accelerate) are never
touched.

Chunks must write disjoint outputs (or combine their results after the loop): the order in which
chunks run is not fixed, so a result that depends on it would vary from call to call.

Example::

    >>> import numpy as np
    >>> from gradhub.parallel import parallel_for
    >>> x = np.arange(12.0).reshape(4, 3)
    >>> out = np.empty_like(x)
    >>> def body(i: int) -> None:
    ...     np.multiply(x[i], 2.0, out=out[i])
    >>> parallel_for(4, body)
    >>> out[:, 0]
    array([ 0.,  6., 12., 18.])
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable

__all__ = [
    "get_blas_control",
    "get_blas_threads",
    "get_num_threads",
    "parallel_for",
    "set_blas_control",
    "set_num_threads",
]

_lock = threading.Lock()
_num_threads: int | None = None
_pool: _Pool | None = None
_busy = threading.Lock()  # held while a loop uses the pool
_inside = threading.local()  # ``active`` is True in a thread running chunks


def _default_threads() -> int:
    for var in ("GRADHUB_NUM_THREADS", "OMP_NUM_THREADS"):
        raw = os.environ.get(var, "").strip()
        if raw:
            try:
                value = int(raw.split(",")[0])
            except ValueError:
                raise ValueError(
                    f"gradhub.parallel: the environment variable {var}={raw!r} is not a whole "
                    "number of threads"
                ) from None
            if value >= 1:
                return value
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not on Linux
        return max(1, os.cpu_count() or 1)


def get_num_threads() -> int:
    """The number of threads :func:`parallel_for` uses (the calling thread included).

    Example::

        >>> from gradhub.parallel import get_num_threads
        >>> get_num_threads() >= 1
        True
    """
    global _num_threads
    n = _num_threads
    if n is None:
        with _lock:
            if _num_threads is None:
                _num_threads = _default_threads()
            n = _num_threads
    return n


def set_num_threads(n: int) -> None:
    """Use ``n`` threads (the calling thread included) in every later :func:`parallel_for`.

    As ``torch.set_num_threads``; ``1`` runs every loop in the calling thread. The pool's
    threads are replaced at the next loop.

    Example::

        >>> from gradhub.parallel import get_num_threads, set_num_threads
        >>> before = get_num_threads()
        >>> set_num_threads(1)
        >>> get_num_threads()
        1
        >>> set_num_threads(before)
    """
    global _num_threads, _pool
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(
            f"gradhub.parallel.set_num_threads(): n must be an int, got {type(n).__name__}"
        )
    if n < 1:
        raise ValueError(f"gradhub.parallel.set_num_threads(): n must be >= 1, got {n}")
    with _lock:
        _num_threads = n
        old, _pool = _pool, None
        _restore_blas()
    if old is not None:
        old.close()


# -- OpenBLAS's threads ------------------------------------------------------------------------

#: Names of OpenBLAS's ``(get, set)`` thread-count functions, most specific first: numpy 2's
#: wheels bundle scipy-openblas (``scipy_openblas_..._64_``), numpy 1's ``libopenblas64_`` (suffix
#: ``64_``); a system OpenBLAS has the plain names.
_BLAS_SYMBOLS = (
    ("scipy_openblas_get_num_threads64_", "scipy_openblas_set_num_threads64_"),
    ("scipy_openblas_get_num_threads", "scipy_openblas_set_num_threads"),
    ("openblas_get_num_threads64_", "openblas_set_num_threads64_"),
    ("openblas_get_num_threads", "openblas_set_num_threads"),
)
_blas_control: bool | None = None  # None: not read yet (GRADHUB_BLAS_CONTROL)
_blas_funcs: tuple[Callable[[], int], Callable[[int], None]] | bool | None = (
    False  # False: not looked up yet; None: no OpenBLAS
)
_blas_saved: int | None = None  # OpenBLAS's count before the pool set it to 1


def _openblas_paths() -> list[str]:
    """Files of the OpenBLAS libraries loaded in this process (Linux: from ``/proc/self/maps``),
    then those bundled with numpy (its wheels' ``numpy.libs`` and ``numpy/.dylibs``)."""
    from pathlib import Path  # (imported when the pool starts, not with gradhub)

    paths: list[str] = []
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as f:
            for line in f:
                path = line.rstrip("\n").split(None, 5)[-1]
                if path.startswith("/") and "openblas" in os.path.basename(path).lower():
                    if path not in paths:
                        paths.append(path)
    except OSError:  # not on Linux
        pass
    np_mod = sys.modules.get("numpy")
    np_file = getattr(np_mod, "__file__", None)
    if np_file:
        root = Path(np_file).resolve().parent
        for folder in (root.parent / "numpy.libs", root / ".dylibs"):
            if folder.is_dir():
                for lib in sorted(folder.iterdir()):
                    if "openblas" in lib.name.lower() and str(lib) not in paths:
                        paths.append(str(lib))
    return paths


def _find_openblas() -> tuple[Callable[[], int], Callable[[int], None]] | None:
    """OpenBLAS's thread-count getter and setter, or None when numpy is not imported or no
    OpenBLAS is found (numpy with another BLAS)."""
    if "numpy" not in sys.modules:
        return None
    import ctypes  # (imported when the pool starts, not with gradhub)

    for path in _openblas_paths():
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for get_name, set_name in _BLAS_SYMBOLS:
            getter = getattr(lib, get_name, None)
            setter = getattr(lib, set_name, None)
            if getter is not None and setter is not None:
                getter.restype = ctypes.c_int
                getter.argtypes = []
                setter.restype = None
                setter.argtypes = [ctypes.c_int]
                return getter, setter
    return None


def _openblas() -> tuple[Callable[[], int], Callable[[int], None]] | None:
    global _blas_funcs
    funcs = _blas_funcs
    if funcs is False:
        funcs = _blas_funcs = _find_openblas()
    return funcs  # type: ignore[return-value]


def get_blas_threads() -> int | None:
    """The number of threads OpenBLAS (numpy's BLAS) runs its products on now, or None where
    numpy's BLAS is not an OpenBLAS that can be asked (MKL, Accelerate) or numpy is not imported.

    While the pool exists it is 1 (see :mod:`gradhub.parallel`); kernels that choose an order of
    computation by the threads a product gets ask this rather than :func:`get_num_threads`. The
    first call looks the library up (reading the process's loaded libraries once).

    Example::

        >>> from gradhub.parallel import get_blas_threads
        >>> n = get_blas_threads()
        >>> n is None or n >= 1
        True
    """
    funcs = _openblas()
    return None if funcs is None else int(funcs[0]())


def get_blas_control() -> bool:
    """Whether the pool sets OpenBLAS's thread count to 1 while it exists (see
    :mod:`gradhub.parallel`): ``GRADHUB_BLAS_CONTROL`` (``0`` or ``1``, default ``1``) until
    :func:`set_blas_control` is called.

    Example::

        >>> from gradhub.parallel import get_blas_control
        >>> isinstance(get_blas_control(), bool)
        True
    """
    global _blas_control
    on = _blas_control
    if on is None:
        raw = os.environ.get("GRADHUB_BLAS_CONTROL", "").strip()
        if raw not in ("", "0", "1"):
            raise ValueError(
                f"gradhub.parallel: the environment variable GRADHUB_BLAS_CONTROL={raw!r} must "
                "be 0 or 1"
            )
        on = _blas_control = raw != "0"
    return on


def set_blas_control(enabled: bool) -> None:
    """Let the pool set OpenBLAS's thread count to 1 while it exists (``True``, the default) or
    leave OpenBLAS's threads alone (``False``; a count already lowered by the pool is set back
    now).

    OpenBLAS's threads spin for about 0.1 s after each multithreaded product, taking the cores
    that the pool's threads run on (see :mod:`gradhub.parallel`).

    Example::

        >>> from gradhub.parallel import get_blas_control, set_blas_control
        >>> before = get_blas_control()
        >>> set_blas_control(False)
        >>> get_blas_control()
        False
        >>> set_blas_control(before)
    """
    global _blas_control
    if not isinstance(enabled, bool):
        raise TypeError(
            "gradhub.parallel.set_blas_control(): enabled must be a bool, got "
            f"{type(enabled).__name__}"
        )
    with _lock:
        _blas_control = enabled
        if not enabled:
            _restore_blas()
        elif _pool is not None:
            _lower_blas()


def _lower_blas() -> None:
    """OpenBLAS on one thread (the pool is starting); the count it had is kept. Under ``_lock``."""
    global _blas_saved
    if _blas_saved is not None or not get_blas_control():
        return
    funcs = _openblas()
    if funcs is None:
        return
    n = funcs[0]()
    if n > 1:
        funcs[1](1)
        _blas_saved = n


def _restore_blas() -> None:
    """OpenBLAS's count back to what the pool found, unless changed since. Under ``_lock``."""
    global _blas_saved
    saved, _blas_saved = _blas_saved, None
    if saved is None:
        return
    funcs = _openblas()
    if funcs is not None and funcs[0]() == 1:
        funcs[1](saved)


class _Pool:
    """``size`` daemon threads that run the chunks of one loop at a time."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.pid = os.getpid()
        self.start = threading.Condition()
        self.generation = 0
        self.closed = False
        self.job: _Job | None = None
        self.threads = [
            threading.Thread(target=self._work, name=f"gradhub-parallel-{i}", daemon=True)
            for i in range(size)
        ]
        for t in self.threads:
            t.start()

    def _work(self) -> None:
        _inside.active = True
        seen = 0
        while True:
            with self.start:
                while self.generation == seen and not self.closed:
                    self.start.wait()
                if self.closed:
                    return
                seen = self.generation
                job = self.job
            if job is not None:
                job.drain()
                job = None  # the loop's arrays are not kept alive by an idle thread

    def run(self, job: _Job) -> None:
        with self.start:
            self.job = job
            self.generation += 1
            self.start.notify_all()
        try:
            job.drain()
            job.done.wait()
        finally:
            with self.start:
                self.job = None
        if job.error is not None:
            raise job.error

    def close(self) -> None:
        with self.start:
            self.closed = True
            self.start.notify_all()


class _Job:
    """One loop: a shared counter of chunks, and how many of the started ones have ended."""

    def __init__(self, count: int, body: Callable[[int], object]) -> None:
        self.count = count
        self.body = body
        self.started = 0
        self.ended = 0
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.error: BaseException | None = None

    def drain(self) -> None:
        lock = self.lock
        while True:
            with lock:
                i = self.started
                if i >= self.count or self.error is not None:
                    return
                self.started = i + 1
            try:
                self.body(i)
            except BaseException as exc:  # raised in the caller once the loop has ended
                with lock:
                    if self.error is None:
                        self.error = exc
            with lock:
                self.ended += 1
                if self.ended == self.started and (
                    self.started >= self.count or self.error is not None
                ):
                    self.done.set()


def _reset_after_fork() -> None:
    global _pool, _busy
    _pool = None
    _busy = threading.Lock()


_fork_hook = False


def _get_pool(size: int) -> _Pool:
    global _pool, _fork_hook
    pool = _pool
    if pool is None or pool.size != size or pool.pid != os.getpid():
        with _lock:
            if not _fork_hook and hasattr(os, "register_at_fork"):
                os.register_at_fork(after_in_child=_reset_after_fork)
                _fork_hook = True
            pool = _pool
            if pool is None or pool.size != size or pool.pid != os.getpid():
                if pool is not None and pool.pid == os.getpid():
                    pool.close()
                _lower_blas()
                pool = _pool = _Pool(size)
    return pool


def parallel_for(count: int, body: Callable[[int], object]) -> None:
    """Run ``body(i)`` for every ``i`` in ``range(count)``, on up to :func:`get_num_threads`
    threads.

    ``body`` returns nothing useful (its result is dropped); chunks must not depend on one
    another. Serial (in the calling thread, in order) when ``count <= 1``, with one thread, inside
    a chunk, or while another thread's loop holds the pool.

    Example::

        >>> from gradhub.parallel import parallel_for
        >>> seen = []
        >>> parallel_for(3, seen.append)
        >>> sorted(seen)
        [0, 1, 2]
    """
    if (
        count <= 1
        or get_num_threads() <= 1
        or getattr(_inside, "active", False)
        or not _busy.acquire(blocking=False)
    ):
        for i in range(count):
            body(i)
        return
    try:
        pool = _get_pool(get_num_threads() - 1)
        _inside.active = True
        try:
            pool.run(_Job(count, body))
        finally:
            _inside.active = False
    finally:
        _busy.release()
