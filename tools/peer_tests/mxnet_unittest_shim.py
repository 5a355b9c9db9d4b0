"""Run mxnet 1.9.1's own Python unit tests (``tests/python/unittest/test_*.py`` of
apache/mxnet, nose-era files kept outside this repository) against ``gradhub_compat.mxnet`` or
against a real mxnet, without nose or pytest.

    python tools/peer_tests/mxnet_unittest_shim.py DIR [--layer] [test_executor test_symbol ...]

``DIR`` holds the peer's test files (by default ``test_executor.py``, ``test_symbol.py``,
``test_autograd.py``, ``test_infer_shape.py`` and ``test_operator_part.py``, the chosen tests of
``test_operator.py`` listed in docs/migration-mxnet.md). With ``--layer`` the module
``mxnet`` (and ``mxnet.ndarray``, ``mxnet.symbol``, ``mxnet.autograd``, ``mxnet.base``,
``mxnet.context``, ``mxnet.random``, ``mxnet.test_utils``, and any other ``mxnet.X`` such as
``mxnet.gluon.nn``, ``mxnet.optimizer`` or ``mxnet.module``, when ``gradhub_compat.mxnet.X``
exists) is ``gradhub_compat.mxnet``'s; without it, the installed mxnet runs.
The shim also provides what the test files import from outside the package: ``common``
(``with_seed``, ``setup_module``, ``teardown``, ``assertRaises``, ``models.mlp2``/``conv``, written
here after mxnet's ``tests/python/common``), ``nose.tools`` (``raises``, ``ok_``,
``assert_raises``...), and ``with_seed`` and
``set_env_var`` where the installed ``mxnet.test_utils`` lacks them. Every ``test_*`` function
of each file runs once; the output is one line per test (PASS or FAIL with the error) and the
totals.
"""

from __future__ import annotations

import builtins
import functools
import importlib
import importlib.abc
import importlib.util
import os
import random
import sys
import traceback
import types
from typing import Any

FILES = ["test_executor", "test_symbol", "test_autograd", "test_infer_shape", "test_operator_part"]
SUBMODULES = ("ndarray", "symbol", "autograd", "base", "context", "random", "test_utils")


class _LayerAlias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Import ``mxnet.X`` as the module ``gradhub_compat.mxnet.X`` (the same module object)."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if not fullname.startswith("mxnet.") or fullname in sys.modules:
            return None
        real = "gradhub_compat." + fullname
        try:
            found = importlib.util.find_spec(real)
        except ModuleNotFoundError:
            return None
        if found is None:
            return None
        return importlib.util.spec_from_loader(
            fullname, self, is_package=bool(found.submodule_search_locations)
        )

    def create_module(self, spec: Any) -> Any:
        return importlib.import_module("gradhub_compat." + spec.name)

    def exec_module(self, module: Any) -> None:
        sys.modules[module.__spec__.name] = module


def _alias_layer() -> None:
    sys.modules["mxnet"] = importlib.import_module("gradhub_compat.mxnet")
    for sub in SUBMODULES:
        sys.modules["mxnet." + sub] = importlib.import_module("gradhub_compat.mxnet." + sub)
    sys.meta_path.insert(0, _LayerAlias())


def _common_module(mx: Any, np: Any) -> types.ModuleType:
    common = types.ModuleType("common")

    def with_seed(seed: int | None = None) -> Any:
        def deco(f: Any) -> Any:
            @functools.wraps(f)
            def wrapped(*a: Any, **k: Any) -> Any:
                s = 1234 if seed is None else seed
                np.random.seed(s)
                random.seed(s)
                mx.random.seed(s)
                return f(*a, **k)

            return wrapped

        return deco

    def assert_raises(expected: Any, func: Any, *args: Any, **kwargs: Any) -> None:
        try:
            func(*args, **kwargs)
        except expected:
            return
        raise AssertionError(f"{func} did not raise {expected}")

    def mlp2() -> Any:
        data = mx.symbol.Variable("data")
        out = mx.symbol.FullyConnected(data=data, name="fc1", num_hidden=1000)
        out = mx.symbol.Activation(data=out, act_type="relu")
        return mx.symbol.FullyConnected(data=out, name="fc2", num_hidden=10)

    def conv() -> Any:
        s = mx.symbol
        x = s.Variable("data")
        for i in (1, 2):
            x = s.Convolution(data=x, name=f"conv{i}", num_filter=32, kernel=(3, 3), stride=(2, 2))
            x = s.BatchNorm(data=x, name=f"bn{i}")
            x = s.Activation(data=x, name=f"relu{i}", act_type="relu")
            x = s.Pooling(data=x, name=f"mp{i}", kernel=(2, 2), stride=(2, 2), pool_type="max")
        x = s.FullyConnected(data=s.Flatten(data=x, name="flatten"), name="fc2", num_hidden=10)
        return s.SoftmaxOutput(data=x, name="sm")

    common.with_seed = with_seed  # type: ignore[attr-defined]
    common.setup_module = lambda: None  # type: ignore[attr-defined]
    common.teardown = lambda: None  # type: ignore[attr-defined]
    common.teardown_module = lambda: None  # type: ignore[attr-defined]
    passthrough = lambda *a, **k: lambda f: f  # noqa: E731 (decorator factories)
    common.assert_raises_cudnn_not_satisfied = passthrough  # type: ignore[attr-defined]
    common.retry = passthrough  # type: ignore[attr-defined]
    common.xfail_when_nonstandard_decimal_separator = lambda f: f  # type: ignore[attr-defined]
    common.assertRaises = assert_raises  # type: ignore[attr-defined]
    common.models = types.SimpleNamespace(mlp2=mlp2, conv=conv)  # type: ignore[attr-defined]
    return common


def _nose_module() -> None:
    nose = types.ModuleType("nose")
    tools = types.ModuleType("nose.tools")

    def raises(*exceptions: Any) -> Any:
        def deco(f: Any) -> Any:
            @functools.wraps(f)
            def wrapped(*a: Any, **k: Any) -> None:
                try:
                    f(*a, **k)
                except exceptions:
                    return
                raise AssertionError(f"{f.__name__} did not raise {exceptions}")

            return wrapped

        return deco

    def ok_(expr: Any, msg: str | None = None) -> None:
        if not expr:
            raise AssertionError(msg)

    def eq_(a: Any, b: Any, msg: str | None = None) -> None:
        if not a == b:
            raise AssertionError(msg or f"{a!r} != {b!r}")

    def assert_raises(expected: Any, func: Any = None, *args: Any, **kwargs: Any) -> Any:
        import unittest

        return unittest.TestCase().assertRaises(expected, func, *args, **kwargs)

    tools.raises, tools.ok_, tools.eq_ = raises, ok_, eq_  # type: ignore[attr-defined]
    tools.assert_raises = assert_raises  # type: ignore[attr-defined]
    tools.__all__ = ["raises", "ok_", "eq_", "assert_raises"]  # type: ignore[attr-defined]
    nose.tools = tools  # type: ignore[attr-defined]
    sys.modules["nose"], sys.modules["nose.tools"] = nose, tools


def main(argv: list[str]) -> int:
    args = [a for a in argv if not a.startswith("--")]
    if not args:
        print(__doc__)
        return 2
    folder, files = os.path.abspath(args[0]), args[1:] or FILES
    sys.path.insert(0, folder)
    if "--layer" in argv:
        _alias_layer()
    import mxnet as mx
    import numpy as np

    common = _common_module(mx, np)
    sys.modules["common"] = common
    _nose_module()
    builtins.with_seed = common.with_seed  # type: ignore[attr-defined]
    tu = importlib.import_module("mxnet.test_utils")
    if not hasattr(tu, "set_env_var"):  # newer test text than 1.9.1's test_utils

        def set_env_var(key: str, val: str, default_val: str = "") -> str:
            prev = os.environ.get(key, default_val)
            os.environ[key] = val
            return prev

        tu.set_env_var = set_env_var
    os.environ.setdefault("MXNET_STORAGE_FALLBACK_LOG_VERBOSE", "0")
    os.chdir(os.environ.get("TMPDIR", "/tmp"))  # test_symbol_saveload writes a file
    passed = failed = 0
    for name in files:
        try:
            mod = importlib.import_module(name)
        except Exception as e:
            print(
                f"{name} IMPORT-ERROR {type(e).__name__}: "
                f"{str(e).splitlines()[0] if str(e) else ''}"
            )
            continue
        for fn_name in sorted(n for n in dir(mod) if n.startswith("test_")):
            fn = getattr(mod, fn_name)
            if not callable(fn) or getattr(fn, "__module__", name) != name:
                continue
            try:
                fn()
            except BaseException as e:
                failed += 1
                tb = traceback.extract_tb(e.__traceback__)
                where = f"{os.path.basename(tb[-1].filename)}:{tb[-1].lineno}" if tb else ""
                msg = str(e).strip().splitlines()
                print(
                    f"{name}::{fn_name} FAIL {type(e).__name__}: "
                    f"{msg[0][:160] if msg else ''} [{where}]"
                )
            else:
                passed += 1
                print(f"{name}::{fn_name} PASS")
    print(f"TOTAL pass={passed} fail={failed}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
