"""Threads: ``no_grad`` and ``context_scope`` are thread-local, independent graphs in several
threads give the same gradients as one thread, and the first use of gradhub from several threads
at once loads the plugins once, the others waiting for it. Only the core functions are loaded.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import gradhub as gh
import numpy as np
import pytest
from gradhub import plugins
from gradhub.device import current_context


@pytest.fixture(autouse=True)
def _core_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("GRADHUB_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.delenv("GRADHUB_PLUGINS", raising=False)
    plugins.reset()
    plugins.load_plugins()
    yield
    plugins.reset()


def run_threads(*targets: Callable[[], Any], timeout: float = 20.0) -> list[BaseException]:
    """Run each target in its own thread; return the exceptions they raised."""
    errors: list[BaseException] = []

    def wrap(fn: Callable[[], Any]) -> Callable[[], None]:
        def run() -> None:
            try:
                fn()
            except BaseException as e:  # reported to the test
                errors.append(e)

        return run

    threads = [threading.Thread(target=wrap(t)) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
        assert not t.is_alive(), "a thread did not finish"
    return errors


def test_no_grad_is_thread_local() -> None:
    inside = threading.Event()
    recorded = threading.Event()
    seen: dict[str, Any] = {}

    def quiet() -> None:
        with gh.no_grad():
            inside.set()
            assert recorded.wait(10)
            x = gh.Variable([1.0])
            seen["quiet"] = (gh.is_recording(), (x * 2.0).creator)

    def busy() -> None:
        assert inside.wait(10)  # the other thread is inside no_grad now
        x = gh.Variable([1.0])
        y = x * 2.0
        seen["busy"] = (gh.is_recording(), y.creator is not None)
        y.backward()
        seen["busy_grad"] = x.g
        recorded.set()

    assert run_threads(quiet, busy) == []
    assert seen["quiet"] == (False, None)
    assert seen["busy"] == (True, True)
    np.testing.assert_array_equal(seen["busy_grad"], [2.0])
    assert gh.is_recording()


def test_no_grad_in_the_main_thread_does_not_reach_workers() -> None:
    seen: list[bool] = []
    with gh.no_grad():
        assert run_threads(lambda: seen.append(gh.is_recording())) == []
        assert not gh.is_recording()
    assert seen == [True]


def test_context_scope_is_thread_local() -> None:
    ctx = gh.Context("cpu", 0, "half")  # a context other than the default
    inside = threading.Event()
    done = threading.Event()
    seen: list[gh.Context] = []

    def scoped() -> None:
        with gh.context_scope(ctx):
            inside.set()
            assert done.wait(10)
            seen.append(current_context())

    def other() -> None:
        assert inside.wait(10)
        seen.append(current_context())
        done.set()

    assert run_threads(scoped, other) == []
    assert seen == [gh.get_default_context(), ctx]


def test_independent_graphs_in_threads() -> None:
    rng = np.random.default_rng(0)
    inputs = [rng.uniform(0.5, 2.0, (16,)) for _ in range(4)]
    results: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    start = threading.Barrier(len(inputs))

    def work(k: int) -> Callable[[], None]:
        def run() -> None:
            start.wait(10)
            for _ in range(20):
                x = gh.Variable(inputs[k])
                y = ((x * x + 1.0) / x).sum()  # d/dx = 1 - 1/x^2
                y.backward()
                (g,) = gh.grad([y], [x])
                (gg,) = gh.grad([g.sum()], [x])  # 2/x^3
            results[k] = (x.g, gg.d)

        return run

    assert run_threads(*[work(k) for k in range(len(inputs))]) == []
    for k, a in enumerate(inputs):
        np.testing.assert_allclose(results[k][0], 1.0 - 1.0 / a**2, rtol=1e-12)
        np.testing.assert_allclose(results[k][1], 2.0 / a**3, rtol=1e-12)


def test_first_use_from_several_threads_loads_plugins_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Threads arriving while another thread loads the plugins wait for it (the registry is
    never seen half-filled, and no plugin is loaded twice)."""
    plugins.reset()
    loads: list[int] = []
    original = plugins.builtin_plugin

    def slow_builtin() -> Any:
        loads.append(threading.get_ident())
        time.sleep(0.3)  # a plugin that takes a while to import
        return original()

    monkeypatch.setattr(plugins, "builtin_plugin", slow_builtin)
    first = threading.Event()
    values: list[float] = []

    def user(delay: float) -> Callable[[], None]:
        def run() -> None:
            if delay:
                assert first.wait(10)
                time.sleep(delay)
            else:
                first.set()
            values.append((gh.Variable([1.5]) * 2.0).d[0])

        return run

    errors = run_threads(user(0.0), user(0.05), user(0.1))
    assert errors == []
    assert values == [3.0, 3.0, 3.0]
    assert len(loads) == 1
    # (installed entry points that autoload skipped are listed as "autoload off")
    assert [r.status for r in plugins.plugin_report() if r.status != "autoload off"] == ["loaded"]
