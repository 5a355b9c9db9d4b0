"""mxnet 1.9.1's module API (``mx.mod``, ``mx.module``): :class:`Module` trains a symbol with
``fit``, ``score``, ``predict``; :class:`BaseModule` is its base class. ``BucketingModule``,
``SequentialModule`` and ``PythonModule`` raise ``NotImplementedError``.

Example::

    >>> import gradhub_compat.mxnet as mx
    >>> mx.mod.Module is mx.module.Module
    True
"""

from __future__ import annotations

from typing import Any

from .base_module import BaseModule
from .module import Module

__all__ = [
    "BaseModule",
    "BucketingModule",
    "Module",
    "PythonLossModule",
    "PythonModule",
    "SequentialModule",
]

_DOCS = "docs/migration-mxnet.md"


def _unsupported(name: str) -> type:
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(f"mx.mod.{name} is not supported; use mx.mod.Module ({_DOCS})")

    return type(name, (BaseModule,), {"__init__": __init__, "__doc__": f"Not supported ({_DOCS})."})


BucketingModule = _unsupported("BucketingModule")
SequentialModule = _unsupported("SequentialModule")
PythonModule = _unsupported("PythonModule")
PythonLossModule = _unsupported("PythonLossModule")
