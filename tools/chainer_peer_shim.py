"""Run chainer's own unit tests against ``gradhub_compat.chainer``.

``install()`` maps ``chainer`` and every public submodule of the layer
(``chainer.functions``, ``chainer.links``, ``chainer.training.extensions``,
``chainer.dataset.convert``...) to the layer's modules in ``sys.modules``, with chainer's aliases
``chainer.cuda`` (for ``chainer.backends.cuda``) and the top-level ``chainerx`` (the layer's
placeholder), so that ``import chainer`` and ``from chainer import links as L`` in a test file
import the layer. A submodule the layer lacks is left unmapped (its import then fails, as for a
user).

``install(testing_from=...)`` also loads ``chainer.testing`` (the test machinery:
``testing.parameterize``, ``testing.product``, ``attr.gpu``, ``FunctionTestCase``,
``LinkTestCase``...) from the directory of a chainer installation's ``chainer/testing``
package, executed against the layer; its submodules are imported one by one, and one that does
not import (it needs a part of chainer the layer lacks) is skipped and reported. The three
private chainer helpers that machinery calls are supplied here, test machinery only:
``utils._raise_from``, ``initializers._check_is_initializer_like`` and
``gradient_check._check_backward_with_params`` (written with the layer's public
``gradient_check.check_backward``, the parameters checked as further inputs). Used from a
``conftest.py`` next to a copy of the tests (see docs/migration-chainer.md, "chainer 7.8.1's own
tests")::

    # conftest.py
    import os, sys
    if os.environ.get("CHAINER_LAYER"):
        sys.path.insert(0, "<checkout>/tools")
        import chainer_peer_shim
        chainer_peer_shim.install(testing_from="<peer site-packages>/chainer/testing")
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import pkgutil
import sys
import types
from typing import Any

LAYER = "gradhub_compat.chainer"

# chainer.testing's modules, in the order its __init__ imports them
TESTING_MODULES = (
    "attr",
    "condition",
    "_bundle",
    "parameterized",
    "array",
    "backend",
    "helper",
    "matrix",
    "random",
    "serializer",
    "training",
    "function_link",
    "distribution_test",
    "unary_math_function_test",
)


def _alias(name: str, module: types.ModuleType) -> None:
    sys.modules[name] = module
    parent, _, child = name.rpartition(".")
    if parent in sys.modules:
        setattr(sys.modules[parent], child, module)


def install(testing_from: str | None = None) -> list[str]:
    """Alias ``chainer`` and its submodules to ``gradhub_compat.chainer``; with ``testing_from``
    (a ``chainer/testing`` directory) also load ``chainer.testing`` from there. Returns the names
    left out: layer submodules that failed to import and testing modules that did not load."""
    layer = importlib.import_module(LAYER)
    sys.modules["chainer"] = layer
    missing: list[str] = []
    for info in pkgutil.walk_packages(layer.__path__, prefix=f"{LAYER}."):
        if info.name.rpartition(".")[2].startswith("_"):
            continue  # the layer's private modules, imported by the public ones
        try:
            mod = importlib.import_module(info.name)
        except ImportError:
            missing.append(info.name)
            continue
        _alias("chainer" + info.name[len(LAYER) :], mod)
    if "chainer.backends.cuda" in sys.modules:
        _alias("chainer.cuda", sys.modules["chainer.backends.cuda"])
    if "chainer.chainerx" in sys.modules:
        sys.modules["chainerx"] = sys.modules["chainer.chainerx"]
    if testing_from is not None:
        missing += _load_testing(testing_from)
    return missing


def _raise_from(exc_type: type[BaseException], message: str, orig_exc: BaseException) -> None:
    """chainer's private ``chainer.utils._raise_from`` that ``chainer.testing.parameterize`` uses:
    raises ``exc_type`` with ``message`` and the original exception's text and traceback."""
    text = f"{message}\n\n(caused by)\n{type(orig_exc).__name__}: {orig_exc}\n"
    raise exc_type(text).with_traceback(orig_exc.__traceback__) from None


def _check_is_initializer_like(initializer: object) -> None:
    """chainer's private ``initializers._check_is_initializer_like`` that
    ``chainer.testing.LinkTestCase`` uses: TypeError unless ``initializer`` is None, callable,
    an array or a scalar."""
    import numpy as np

    if not (
        initializer is None
        or callable(initializer)
        or isinstance(initializer, np.ndarray)
        or np.isscalar(initializer)
    ):
        raise TypeError(
            f"Initializer is of wrong type: {type(initializer)}. Allowed types are Initializer, "
            "ndarray and scalar."
        )


def _check_backward_with_params(
    func: Any,
    x_data: Any,
    y_grad: Any,
    params: Any = (),
    eps: float = 1e-3,
    atol: float = 1e-5,
    rtol: float = 1e-4,
    no_grads: Any = None,
    dtype: Any = None,
    detect_nondifferentiable: bool = False,
) -> None:
    """chainer's private ``gradient_check._check_backward_with_params`` that
    ``chainer.testing.LinkTestCase.test_backward`` uses: ``func(inputs, params)`` is checked
    with the parameter arrays ``params`` as further inputs (chainer's immutable parameters),
    through the layer's public ``gradient_check.check_backward``."""
    check_backward = sys.modules["chainer.gradient_check"].check_backward
    n = len(x_data)
    if no_grads is not None:
        no_grads = list(no_grads) + [False] * len(params)
    check_backward(
        lambda *args: func(args[:n], args[n:]),
        tuple(x_data) + tuple(params),
        y_grad,
        eps=eps,
        atol=atol,
        rtol=rtol,
        no_grads=no_grads,
        dtype=dtype,
        detect_nondifferentiable=detect_nondifferentiable,
    )


def _load_testing(directory: str) -> list[str]:
    """Load the ``chainer.testing`` package from ``directory`` module by module; exports what
    chainer's ``testing/__init__.py`` exports, from the modules that loaded."""
    utils = sys.modules.get("chainer.utils")
    if utils is not None and not hasattr(utils, "_raise_from"):
        utils._raise_from = _raise_from  # type: ignore[attr-defined]
    inits = sys.modules.get("chainer.initializers")
    if inits is not None and not hasattr(inits, "_check_is_initializer_like"):
        inits._check_is_initializer_like = _check_is_initializer_like  # type: ignore[attr-defined]
    gc = sys.modules.get("chainer.gradient_check")
    if gc is not None and not hasattr(gc, "_check_backward_with_params"):
        gc._check_backward_with_params = _check_backward_with_params  # type: ignore[attr-defined]
    package = types.ModuleType("chainer.testing")
    package.__path__ = [directory]
    package.__package__ = "chainer.testing"
    _alias("chainer.testing", package)
    failed: list[str] = []
    for name in TESTING_MODULES:
        path = os.path.join(directory, f"{name}.py")
        spec = importlib.util.spec_from_file_location(f"chainer.testing.{name}", path)
        if spec is None or spec.loader is None:
            failed.append(f"chainer.testing.{name}")
            continue
        mod = importlib.util.module_from_spec(spec)
        _alias(spec.name, mod)
        try:
            spec.loader.exec_module(mod)
        except Exception:  # a module needing what the layer lacks is skipped
            del sys.modules[spec.name]
            delattr(package, name)
            failed.append(spec.name)
    # the names of chainer/testing/__init__.py
    with open(os.path.join(directory, "__init__.py"), encoding="utf-8") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 4 and parts[0] == "from" and parts[2] == "import":
                found = sys.modules.get(parts[1])
                if found is not None and hasattr(found, parts[3]):
                    setattr(package, parts[3], getattr(found, parts[3]))
    setattr(package, "run_module", lambda name, file: None)  # noqa: B010 (a module attribute)
    return failed


if __name__ == "__main__":
    print("left out:", install(*sys.argv[1:2]))
