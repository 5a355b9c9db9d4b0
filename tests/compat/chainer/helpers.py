"""Helpers shared by the tests of the chainer layer: Variables from values (float32 by default,
float64 for ``_c``), and the runs of the link tests (``test_links_*.py``): a link's output and
gradients (``_run``), their comparison with chainer's recorded numbers (``_assert_matches``) and
with central differences in float64 (``_check_fd``, ``_numeric``)."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import gradhub_compat.chainer.functions as F
import numpy as np
from gradhub_compat import chainer
from gradhub_compat.chainer import Variable


def _reference_script(name: str) -> ModuleType:
    """The reference script ``data/<name>.py`` as a module, whose cases the test runs through
    gradhub_compat (the script imports chainer only when it runs as a script)."""
    spec = importlib.util.spec_from_file_location(
        name, Path(__file__).parent / "data" / f"{name}.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _v(values: object, dtype: object = np.float32, **kw: object) -> Variable:
    return Variable(np.array(values, dtype=dtype), **kw)  # type: ignore[arg-type]


def _c(values: object, requires_grad: bool = True) -> chainer.Variable:
    return chainer.Variable(np.array(values, dtype=np.float64), requires_grad=requires_grad)


def _rand(shape: Any, seed: int) -> np.ndarray:
    return np.random.RandomState(seed).uniform(-1, 1, shape).astype(np.float32)


def _run(link: Any, *arrays: np.ndarray) -> dict[str, Any]:
    """The output, and the gradients of ``sum(y * r)`` for the inputs and every parameter."""
    xs = [chainer.Variable(a) for a in arrays]
    y = link(*xs)
    link.cleargrads()
    F.sum(y * _rand(y.shape, 100)).backward()
    out = {"y": y.array}
    for i, x in enumerate(xs):
        out[f"gx{i}"] = x.grad
    for name, p in sorted(link.namedparams()):
        out["g" + name] = p.grad
    return out


def _assert_matches(name: str, got: dict[str, Any], expected: dict[str, Any]) -> None:
    """``got`` (a case's results) holds the keys of ``expected`` (chainer's: key -> (shape,
    flat values)), float32 arrays of those shapes and values."""
    assert sorted(got) == sorted(expected)
    for key, (shape, values) in expected.items():
        a = np.asarray(got[key])
        assert a.shape == shape, key
        assert a.dtype == np.float32, key
        np.testing.assert_allclose(
            a.ravel(), values, rtol=2e-5, atol=2e-6, err_msg=f"{name}: {key}"
        )


def _to_float64(link: Any) -> None:
    for p in link.params():
        p.array = p.array.astype(np.float64)


def _numeric(f: Callable[[], float], arr: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Central differences of ``f`` with respect to each element of ``arr`` (changed in place
    and restored)."""
    num = np.zeros_like(arr)
    for i in np.ndindex(arr.shape):
        old = arr[i]
        arr[i] = old + eps
        hi = f()
        arr[i] = old - eps
        lo = f()
        arr[i] = old
        num[i] = (hi - lo) / (2 * eps)
    return num


def _check_fd(link: Any, *arrays: np.ndarray, eps: float = 1e-6) -> None:
    """The gradients of ``sum(y * r)`` (the inputs and every parameter, float64) against
    central differences."""
    _to_float64(link)
    xs = [a.astype(np.float64) for a in arrays]
    vs = [chainer.Variable(a) for a in xs]
    y = link(*vs)
    r = np.random.RandomState(0).randn(*y.shape)
    link.cleargrads()
    F.sum(y * r).backward()

    def f() -> float:
        return float(np.sum(link(*xs).array * r))

    pairs = [(v.array, v.grad) for v in vs] + [(p.array, p.grad) for p in link.params()]
    for arr, grad in pairs:
        np.testing.assert_allclose(grad, _numeric(f, arr, eps), rtol=1e-6, atol=1e-8)
