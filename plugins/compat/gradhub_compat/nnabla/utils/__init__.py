"""nnabla's ``nnabla.utils``: the data pipeline :mod:`.data_iterator` (``data_iterator_simple``,
``data_iterator``, ``DataIterator``), :mod:`.data_source` (``DataSource``),
:mod:`.data_source_implements` (``CsvDataSource``) and :mod:`.data_source_loader`; the NNP files
:mod:`.save`, :mod:`.load` and :mod:`.nnp_graph` (``NnpLoader``); :mod:`.image_utils`.

Example::

    >>> import numpy as np
    >>> from gradhub_compat.nnabla.utils.data_iterator import data_iterator_simple
    >>> di = data_iterator_simple(lambda i: (np.float32(i),), 5, batch_size=2)
    >>> [di.next()[0].tolist() for _ in range(3)]
    [[0.0, 1.0], [2.0, 3.0], [4.0, 0.0]]
"""

from __future__ import annotations

import importlib
from typing import Any

_SUBMODULES = (
    "data_iterator",
    "data_source",
    "data_source_implements",
    "data_source_loader",
    "image_utils",
    "load",
    "nnp_graph",
    "rnn",
    "save",
)


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
