"""gradhub-compat: front-ends for programs written for nnabla, chainer and mxnet.

Installed with ``pip install gradhub-compat`` (it depends on gradhub and gradhub-nn-ops). A
program moves to gradhub by changing its import lines alone::

    import gradhub_compat.nnabla as nn                # import nnabla as nn
    import gradhub_compat.nnabla.functions as F       # import nnabla.functions as F
    from gradhub_compat import chainer                # import chainer
    import gradhub_compat.chainer.functions as F      # import chainer.functions as F
    import gradhub_compat.mxnet as mx                 # import mxnet as mx

Each layer keeps its framework's semantics (defaults, what is returned, what is accumulated, None
versus zeros) and is thin: its Variables are subclasses of :class:`gradhub.Variable` sharing the
native graph, and every derivative is computed by the native engine (:func:`gradhub.grad`,
:func:`gradhub.backward`). See ``docs/migration-nnabla.md``, ``docs/migration-chainer.md`` and
``docs/migration-mxnet.md``.

Importing this package (or a layer) changes no state; the layers are imported on first access.
The distribution registers no plugin (no entry point in ``gradhub.plugins``): the layers call
gradhub's public API and the functions that gradhub-nn-ops registers.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["chainer", "mxnet", "nnabla"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
