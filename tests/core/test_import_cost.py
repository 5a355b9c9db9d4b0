"""W6, a fresh start (``import gradhub as gh, gradhub.functions as F; F.sin(gh.Variable([1.0]))``):
what it imports and what loading the plugins looks at, counted rather than timed (timings belong
in benchmarks/profile_core.py ``--mode import``; see docs/performance.md "W6 (import)").

Each module named here cost milliseconds of every start-up when something imported it at load:
``hashlib`` 3-6 ms (``gradhub_mpi.data_parallel`` imported it, through ``gradhub_mpi``'s
``__init__``), ``gradhub.plan`` with ``gradhub.capture`` 1-2 ms (only a static graph's
``forward()`` and ``gh.compile`` need them). mpi4py starts MPI: it is imported when an ``"mpi"``
communicator is made, never when gradhub-mpi's plugin loads.
"""

from __future__ import annotations

import importlib.util
import inspect
import os
import types
from collections.abc import Iterator

import gradhub as gh
import pytest
from child_helpers import run_python
from gradhub import plugins
from gradhub.registry import REGISTRY

W6 = "import gradhub as gh, gradhub.functions as F; F.sin(gh.Variable([1.0]))"
#: the same with a function of the core, where gradhub-nn-ops (which has ``sin``) is not installed
W6_CORE = "import gradhub as gh, gradhub.functions as F; F.log(gh.Variable([1.0]))"

#: modules that W6 must not import (nor any module under them)
HEAVY = (
    "hashlib",
    "mpi4py",
    "gradhub_mpi.data_parallel",
    "gradhub.plan",
    "gradhub.capture",
    "gradhub.fusion",
    "gradhub_cuda.fusion",
    "gradhub.expression",
)


def _imported_by(statement: str, env: dict[str, str]) -> list[str]:
    """The modules that ``statement`` imports in a fresh interpreter (not those the interpreter's
    start-up imported before it)."""
    code = (
        f"import sys\nbefore = set(sys.modules)\n{statement}\n"
        "print(sorted(set(sys.modules) - before))\n"
    )
    return run_python(code, env).split("\n")[-2].strip("[]").replace("'", "").split(", ")


def test_a_fresh_start_imports_no_heavy_module() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRADHUB_")}
    if importlib.util.find_spec("cupy") is not None:
        # where CuPy is installed gradhub-cuda imports it at load (docs/cuda.md), and CuPy
        # imports hashlib itself
        env["GRADHUB_BLOCK_PLUGINS"] = "gradhub-cuda"
    statement = W6 if importlib.util.find_spec("gradhub_nn_ops") is not None else W6_CORE
    modules = _imported_by(statement, env)
    assert "gradhub" in modules and "gradhub.functions" in modules, modules[:20]
    found = [m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY)]
    assert found == [], f"W6 imports {found}"


def test_the_first_forward_of_a_static_graph_imports_the_plans() -> None:
    """What ``import gradhub`` no longer imports still works on first use: ``forward()`` of a
    static graph runs through a plan from its first call on, as before."""
    code = (
        "import sys, numpy as np, gradhub as gh, gradhub.functions as F\n"
        "from gradhub import engine\n"
        "print('gradhub.plan' in sys.modules)\n"
        "x = gh.Variable(np.array([0.5, 2.0]), need_grad=True)\n"
        "y = F.sum(F.log(x))\n"
        "y.forward()\n"
        "print('gradhub.plan' in sys.modules, id(y) in engine._plans)\n"
        "x.d = np.array([1.0, 3.0]); y.forward()\n"
        "print(repr(float(y.d)), repr(float(np.log(1.0) + np.log(3.0))))\n"
        "print(gh.compile is sys.modules['gradhub.plan'].compile)\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRADHUB_")}
    out = run_python(code, env).split("\n")
    assert out[0] == "False"
    assert out[1] == "True True"
    got, want = out[2].split()
    assert abs(float(got) - float(want)) <= 1e-6 * abs(float(want))
    assert out[3] == "True"


@pytest.fixture
def _unloaded(fresh_plugins: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("GRADHUB_DISABLE_PLUGIN_AUTOLOAD", "1")
    yield


def _bulky_plugin() -> types.ModuleType:
    """A plugin module with one hook among 200 other attributes (classes, values, functions)."""
    mod = types.ModuleType("bulky_plugin")
    exec(
        "from gradhub import hookimpl\n"
        "def _fwd(xp, x):\n"
        "    return x + 1.0\n"
        "@hookimpl(specname='gradhub_add_functions')\n"
        "def add(register):\n"
        "    register.function('BulkyPlusOne', _fwd)\n",
        mod.__dict__,
    )
    for i in range(50):
        mod.__dict__[f"VALUE_{i}"] = i
        mod.__dict__[f"Class{i}"] = type(f"Class{i}", (), {})
        mod.__dict__[f"helper_{i}"] = lambda x: x
        mod.__dict__[f"NAME_{i}"] = f"name {i}"
    return mod


@pytest.mark.usefixtures("_unloaded")
def test_loading_reads_a_module_plugin_without_getattr_static(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """pluggy looks at each attribute of a plugin through ``inspect.getattr_static`` (about
    25 us each); gradhub's manager reads a plain module's attributes from its ``__dict__``. The
    hook is found all the same (under another name, through ``specname``)."""
    calls: list[str] = []
    real = inspect.getattr_static

    def counting(obj: object, attr: str, *default: object) -> object:
        if obj is mod:
            calls.append(attr)
        return real(obj, attr, *default)

    mod = _bulky_plugin()
    monkeypatch.setattr(inspect, "getattr_static", counting)
    records = plugins.load_plugins(extra=[("bulky", mod)])
    monkeypatch.setattr(inspect, "getattr_static", real)
    assert [r.status for r in records if r.name == "bulky"] == ["loaded"]
    assert REGISTRY.functions["BulkyPlusOne"].provider.module == "bulky_plugin"
    # the hook itself (pluggy binds it) and the few attributes that are neither functions nor
    # plain values (the module's loader and spec, the hookimpl marker): not 200
    assert len(calls) <= 8, calls


@pytest.mark.usefixtures("_unloaded")
def test_a_plugin_object_that_is_not_a_module_goes_through_pluggy() -> None:
    """A class (or any object) as a plugin is read by pluggy as before: its hook methods are
    found, its other attributes are not hooks."""

    class ClassPlugin:
        LIMIT = 3

        @staticmethod
        @gh.hookimpl
        def gradhub_add_functions(register: plugins.FunctionRegistrar) -> None:
            register.function("ClassPluginTwice", lambda xp, x: x * 2.0)

    records = plugins.load_plugins(extra=[("class-plugin", ClassPlugin)])
    assert [r.status for r in records if r.name == "class-plugin"] == ["loaded"]
    assert "ClassPluginTwice" in REGISTRY.functions


@pytest.mark.usefixtures("_unloaded")
def test_an_unmarked_hook_still_fails_its_plugin() -> None:
    mod = types.ModuleType("unmarked_plugin")
    exec("def gradhub_add_functions(register):\n    pass\n", mod.__dict__)
    with pytest.warns(gh.PluginLoadWarning, match="lacks the @gradhub.hookimpl marker"):
        records = plugins.load_plugins(extra=[("unmarked", mod)])
    assert [r.status for r in records if r.name == "unmarked"] == ["failed"]
