"""Run nnabla's own Python tests against ``gradhub_compat.nnabla``.

``install()`` maps ``nnabla`` and its submodules (``nnabla.functions``, ``nnabla.solvers``...) to
the layer's modules in ``sys.modules``, so that ``import nnabla as nn`` in a test file imports
the layer. A submodule the layer lacks is left unmapped (its import then fails, as for a user).
Used from a ``conftest.py`` next to a copy of the tests (see docs/migration-nnabla.md, "nnabla
1.39's own tests")::

    # conftest.py
    import os, sys
    if os.environ.get("NNABLA_LAYER"):
        sys.path.insert(0, "<checkout>/tools")
        import nnabla_peer_shim
        nnabla_peer_shim.install()
"""

from __future__ import annotations

import importlib
import sys

SUBMODULES = (
    "functions",
    "parametric_functions",
    "solvers",
    "ext_utils",
    "backward_functions",
    "parameter",
    "function",
    "initializer",
    "communicators",
    "testing",
    "logger",
    "monitor",
    "random",
    "solver",
    "config",
    "utils",
    "utils.data_iterator",
    "utils.data_source",
    "utils.data_source_implements",
    "utils.data_source_loader",
    "utils.image_utils",
    "utils.load",
    "utils.nnp_graph",
    "utils.save",
)


def install() -> list[str]:
    """Alias ``nnabla`` and its submodules to ``gradhub_compat.nnabla``; returns the names left
    unmapped (submodules the layer does not have)."""
    layer = importlib.import_module("gradhub_compat.nnabla")
    sys.modules["nnabla"] = layer
    missing = []
    for sub in SUBMODULES:
        try:
            mod = importlib.import_module(f"gradhub_compat.nnabla.{sub}")
        except ImportError:
            missing.append(sub)
            continue
        sys.modules[f"nnabla.{sub}"] = mod
        parent, _, leaf = sub.rpartition(".")
        holder = sys.modules.get(f"nnabla.{parent}") if parent else layer
        if holder is not None:
            setattr(holder, leaf, mod)
    return missing


if __name__ == "__main__":
    print("unmapped:", install())
