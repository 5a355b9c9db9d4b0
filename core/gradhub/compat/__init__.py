"""Compatibility layers for programs written for nnabla, chainer and mxnet.

A program moves to gradhub by changing its import lines alone::

    import gradhub.compat.nnabla as nn                # import nnabla as nn
    import gradhub.compat.nnabla.functions as F       # import nnabla.functions as F
    from gradhub.compat import chainer                # import chainer
    import gradhub.compat.chainer.functions as F      # import chainer.functions as F
    import gradhub.compat.mxnet as mx                 # import mxnet as mx

Each layer keeps its framework's semantics (defaults, what is returned, what is accumulated, None
versus zeros) and is thin: its Variables are subclasses of :class:`gradhub.Variable` sharing the
native graph, and every derivative is computed by the native engine (:func:`gradhub.grad`,
:func:`gradhub.backward`). See ``docs/migration-nnabla.md``, ``docs/migration-chainer.md`` and
``docs/migration-mxnet.md``.

Importing this package (or a layer) changes no state; the layers are imported on first access.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["chainer", "mxnet", "nnabla"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
