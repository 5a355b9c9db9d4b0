"""gradhub.parallel: the CPU kernels' loop over chunks on a few threads."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import gradhub as gh
import numpy as np
import pytest
from gradhub import parallel
from gradhub.parallel import get_num_threads, parallel_for, set_num_threads


@pytest.fixture
def threads() -> Iterator[None]:
    before = get_num_threads()
    set_num_threads(3)
    yield
    set_num_threads(before)


def test_every_chunk_runs_once_with_the_same_result_as_serial(threads: None) -> None:
    x = np.random.default_rng(0).standard_normal((64, 500))
    out = np.empty_like(x)
    calls: list[int] = []

    def body(i: int) -> None:
        calls.append(i)
        np.exp(x[i * 4 : (i + 1) * 4], out=out[i * 4 : (i + 1) * 4])

    parallel_for(16, body)
    assert sorted(calls) == list(range(16))
    np.testing.assert_array_equal(out, np.exp(x))


def test_chunks_run_on_more_than_one_thread(threads: None) -> None:
    names: set[str] = set()
    barrier = threading.Barrier(2, timeout=10)

    def body(i: int) -> None:
        names.add(threading.current_thread().name)
        if i < 2:
            barrier.wait()  # passes only if two chunks run at the same time

    parallel_for(2, body)
    assert len(names) == 2


def test_an_exception_in_a_chunk_is_raised_by_the_loop(threads: None) -> None:
    def body(i: int) -> None:
        if i == 5:
            raise KeyError("chunk five")

    with pytest.raises(KeyError, match="chunk five"):
        parallel_for(40, body)
    seen: list[int] = []
    parallel_for(4, seen.append)  # the pool still works
    assert sorted(seen) == [0, 1, 2, 3]


def test_a_loop_inside_a_chunk_runs_serially_in_its_thread(threads: None) -> None:
    inner: dict[int, list[str]] = {}

    def body(i: int) -> None:
        names: list[str] = []
        parallel_for(3, lambda j: names.append(threading.current_thread().name))
        inner[i] = names

    parallel_for(4, body)
    for names in inner.values():
        assert len(names) == 3 and len(set(names)) == 1


def test_one_thread_runs_in_order_in_the_caller() -> None:
    before = get_num_threads()
    set_num_threads(1)
    try:
        order: list[tuple[int, str]] = []
        parallel_for(5, lambda i: order.append((i, threading.current_thread().name)))
        me = threading.current_thread().name
        assert order == [(i, me) for i in range(5)]
    finally:
        set_num_threads(before)


def test_set_num_threads_checks_its_argument() -> None:
    with pytest.raises(TypeError, match=r"set_num_threads\(\): n must be an int, got float"):
        set_num_threads(2.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"set_num_threads\(\): n must be >= 1, got 0"):
        set_num_threads(0)
    assert gh.set_num_threads is set_num_threads and gh.get_num_threads is get_num_threads


def _child(env: dict[str, str], code: str) -> str:
    full = {
        k: v for k, v in os.environ.items() if k not in ("GRADHUB_NUM_THREADS", "OMP_NUM_THREADS")
    }
    full.update(env)
    res = subprocess.run(
        [sys.executable, "-c", code], env=full, capture_output=True, text=True, timeout=60
    )
    return res.stdout.strip() + res.stderr.strip()


def test_the_environment_sets_the_default() -> None:
    code = "from gradhub.parallel import get_num_threads; print(get_num_threads())"
    assert _child({"GRADHUB_NUM_THREADS": "3", "OMP_NUM_THREADS": "1"}, code) == "3"
    assert _child({"OMP_NUM_THREADS": "5"}, code) == "5"
    bad = _child({"GRADHUB_NUM_THREADS": "many"}, code)
    assert "GRADHUB_NUM_THREADS='many' is not a whole number of threads" in bad


def test_importing_starts_no_thread() -> None:
    code = (
        "import threading, gradhub, gradhub.parallel; "
        "print(sum(t.name.startswith('gradhub-parallel') for t in threading.enumerate()))"
    )
    assert _child({"GRADHUB_NUM_THREADS": "4"}, code) == "0"


def test_a_busy_pool_makes_another_threads_loop_serial(threads: None) -> None:
    started = threading.Event()
    release = threading.Event()
    other: list[str] = []

    def slow(i: int) -> None:
        started.set()
        release.wait(10)

    t = threading.Thread(target=parallel_for, args=(2, slow))
    t.start()
    assert started.wait(10)
    parallel_for(3, lambda i: other.append(threading.current_thread().name))
    release.set()
    t.join(10)
    assert other == [threading.current_thread().name] * 3


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is not available here")
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_a_forked_child_starts_its_own_pool(threads: None) -> None:
    parallel_for(4, lambda i: None)  # the parent's pool is running
    assert parallel._pool is not None
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            seen: list[int] = []
            parallel_for(6, seen.append)
            os.write(w, b"ok" if sorted(seen) == list(range(6)) else b"bad")
        finally:
            os._exit(0)
    os.close(w)
    os.waitpid(pid, 0)
    assert os.read(r, 10) == b"ok"
    os.close(r)


# -- OpenBLAS's threads ------------------------------------------------------------------------

_OPENBLAS = parallel._openblas()
needs_openblas = pytest.mark.skipif(
    _OPENBLAS is None, reason="numpy does not use an OpenBLAS found by gradhub.parallel"
)


@pytest.fixture
def openblas_two() -> Iterator[tuple[object, object]]:
    """OpenBLAS on two threads and no pool (set back afterwards)."""
    assert _OPENBLAS is not None
    get, put = _OPENBLAS
    before_threads, before_blas, before_control = get_num_threads(), get(), parallel._blas_control
    set_num_threads(1)
    put(2)
    yield get, put
    parallel._blas_control = before_control
    set_num_threads(before_threads)
    put(before_blas)


@needs_openblas
def test_the_pool_runs_openblas_on_one_thread_until_set_num_threads(openblas_two) -> None:
    get, _ = openblas_two
    set_num_threads(2)
    assert get() == 2  # the pool starts at the first loop, not before
    parallel_for(4, lambda i: None)
    assert get() == 1
    parallel_for(4, lambda i: None)
    assert get() == 1
    set_num_threads(3)  # a new pool: the count found is set back, then lowered at the next loop
    assert get() == 2
    parallel_for(4, lambda i: None)
    assert get() == 1
    set_num_threads(1)
    assert get() == 2


@needs_openblas
def test_a_count_changed_since_is_left_as_it_is(openblas_two) -> None:
    get, put = openblas_two
    set_num_threads(2)
    parallel_for(4, lambda i: None)
    put(3)  # the user's own setting, after the pool started
    set_num_threads(1)
    assert get() == 3


@needs_openblas
def test_blas_control_off_leaves_openblas_alone(openblas_two) -> None:
    get, _ = openblas_two
    parallel.set_blas_control(False)
    assert parallel.get_blas_control() is False
    set_num_threads(2)
    parallel_for(4, lambda i: None)
    assert get() == 2
    parallel.set_blas_control(True)  # with the pool running: lowered now
    assert get() == 1
    parallel.set_blas_control(False)  # and set back now
    assert get() == 2


def test_set_blas_control_checks_its_argument() -> None:
    with pytest.raises(TypeError, match=r"set_blas_control\(\): enabled must be a bool, got int"):
        parallel.set_blas_control(1)  # type: ignore[arg-type]


def test_the_environment_turns_blas_control_off() -> None:
    code = "from gradhub.parallel import get_blas_control; print(get_blas_control())"
    assert _child({"GRADHUB_BLAS_CONTROL": "0"}, code) == "False"
    assert _child({}, code) == "True"
    bad = _child({"GRADHUB_BLAS_CONTROL": "no"}, code)
    assert "GRADHUB_BLAS_CONTROL='no' must be 0 or 1" in bad


def _others_cpu_ns() -> int:
    me = threading.get_native_id()
    total = 0
    for tid in os.listdir("/proc/self/task"):
        if int(tid) != me:
            with open(f"/proc/self/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
    return total


@needs_openblas
@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="needs Linux's /proc")
def test_a_product_after_a_loop_leaves_no_openblas_thread_spinning(openblas_two) -> None:
    # Regression: a product large enough for OpenBLAS's threads (64x1024 @ 1024x10, W3's affine
    # layer) left one spinning for about 0.1 s, on the core that the pool's threads needed.
    a = np.ones((64, 1024), np.float32)
    b = np.ones((1024, 10), np.float32)
    set_num_threads(2)
    parallel_for(4, lambda i: None)
    time.sleep(0.3)  # threads of earlier products have gone to sleep
    before = _others_cpu_ns()
    a @ b
    time.sleep(0.05)
    assert _others_cpu_ns() - before < 5_000_000  # ns; with OpenBLAS on two threads: ~50 ms
