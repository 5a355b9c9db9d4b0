"""chainer's ``chainer.utils``: the parts the layer provides (:mod:`.type_check`,
:class:`WalkerAlias`, :func:`force_array` and :func:`tempdir`)."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from typing import Any

import numpy as np

from .walker_alias import WalkerAlias

__all__ = ["WalkerAlias", "force_array", "tempdir"]


def force_array(x: Any, dtype: Any = None) -> Any:
    """chainer's ``utils.force_array``: a numpy scalar (or Python number) becomes a 0-d array
    (of ``dtype`` when given); an array is returned as is, or ``x.astype(dtype, copy=False)``.

    Example::

        >>> import numpy as np
        >>> from gradhub_compat.chainer import utils
        >>> utils.force_array(np.float32(2.5))
        array(2.5, dtype=float32)
    """
    if np.isscalar(x):
        return np.array(x) if dtype is None else np.array(x, dtype)
    return x if dtype is None else x.astype(dtype, copy=False)


@contextlib.contextmanager
def tempdir(**kwargs: Any) -> Iterator[str]:
    """chainer's ``utils.tempdir``: a new temporary directory (``tempfile.mkdtemp(**kwargs)``)
    for the block, removed with its contents at the end (``ignore_errors=True`` ignores
    failures of the removal).

    Example::

        >>> import os
        >>> from gradhub_compat.chainer import utils
        >>> with utils.tempdir() as d:
        ...     os.path.isdir(d)
        True
        >>> os.path.exists(d)
        False
    """
    ignore_errors = kwargs.pop("ignore_errors", False)
    path = tempfile.mkdtemp(**kwargs)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=ignore_errors)
