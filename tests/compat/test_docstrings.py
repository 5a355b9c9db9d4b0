"""The ``>>>`` examples in the docstrings of ``gradhub_compat`` and its modules run with the
standard :mod:`doctest`, one test per module (as tests of the core run the core's docstrings).

Examples may change global state; each test restores the registry (reloaded if a function, rule
or device changed), the default context, the thread's recording switches and the environment.
"""

from __future__ import annotations

import doctest
import importlib
import os
import pkgutil
from collections.abc import Iterator
from typing import Any

import gradhub
import gradhub.plugins
import gradhub_compat
import pytest
from gradhub.modes import grad_mode, set_grad_mode
from gradhub.registry import REGISTRY

FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE | doctest.DONT_ACCEPT_TRUE_FOR_1
#: Modules whose docstrings must carry examples (so that the tests cannot pass vacuously).
MUST_HAVE_EXAMPLES = ("gradhub_compat.nnabla", "gradhub_compat.chainer", "gradhub_compat.mxnet")


def _modules() -> list[str]:
    names = ["gradhub_compat"]
    names += sorted(
        m.name for m in pkgutil.walk_packages(gradhub_compat.__path__, "gradhub_compat.")
    )
    return names


def _registry_snapshot() -> tuple[Any, ...]:
    gradhub.plugins.ensure_loaded()
    return (
        {n: (id(f), id(f.rule), tuple(sorted(f.kernels))) for n, f in REGISTRY.functions.items()},
        {n: id(p) for n, p in REGISTRY.parametric.items()},
        dict(REGISTRY.device_types),
        dict(REGISTRY.device_aliases),
    )


@pytest.fixture
def _isolated() -> Iterator[None]:
    before = _registry_snapshot()
    ctx = gradhub.get_default_context()
    mode = grad_mode()
    env = dict(os.environ)
    try:
        yield
    finally:
        set_grad_mode(*mode)
        gradhub.set_default_context(ctx)
        for key in set(os.environ) - set(env):
            del os.environ[key]
        os.environ.update(env)
        if not gradhub.plugins.STATE.loaded or _registry_snapshot() != before:
            gradhub.plugins.reset()


def _module_tests(name: str) -> list[doctest.DocTest]:
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    return sorted(finder.find(module, name), key=lambda t: t.name)


@pytest.mark.parametrize("name", _modules())
@pytest.mark.usefixtures("_isolated")
def test_docstring_examples(name: str) -> None:
    out: list[str] = []
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    for test in _module_tests(name):
        runner.run(test, out=out.append, clear_globs=True)
    report = "".join(out)
    assert not report, f"docstring examples of {name} failed:\n{report}"


@pytest.mark.parametrize("name", MUST_HAVE_EXAMPLES)
def test_layer_docstrings_carry_examples(name: str) -> None:
    assert sum(len(t.examples) for t in _module_tests(name)) > 0, f"{name}: no >>> examples"
