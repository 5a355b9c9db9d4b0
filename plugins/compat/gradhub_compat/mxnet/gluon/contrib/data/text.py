"""``mx.gluon.contrib.data.text`` of mxnet 1.9.1: ``WikiText2`` and ``WikiText103`` download
their corpora, which this layer does not do: both raise NotImplementedError naming
docs/migration-mxnet.md (build a ``gluon.data.ArrayDataset`` of the token ids instead).

Example::

    >>> from gradhub_compat.mxnet.gluon.contrib.data import text
    >>> text.WikiText2("./data", "train")
    Traceback (most recent call last):
    ...
    NotImplementedError: gluon.contrib.data.text.WikiText2: ...
"""

from __future__ import annotations

from typing import Any

__all__ = ["WikiText2", "WikiText103"]


class _WikiText:
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(
            f"gluon.contrib.data.text.{type(self).__name__}: downloading corpora is not "
            "supported by gradhub_compat.mxnet; build a gluon.data.ArrayDataset of the token "
            "ids instead (docs/migration-mxnet.md)"
        )


class WikiText2(_WikiText):
    """mxnet's WikiText-2 dataset: raises NotImplementedError (it downloads the corpus)."""


class WikiText103(_WikiText):
    """mxnet's WikiText-103 dataset: raises NotImplementedError (it downloads the corpus)."""
