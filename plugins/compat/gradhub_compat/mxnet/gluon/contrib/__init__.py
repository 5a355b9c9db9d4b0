"""mxnet Gluon's contributed API (``mx.gluon.contrib``), the part of it that mxnet 1.x example
programs use: :mod:`.data` (``IntervalSampler``; the text datasets, which download their
corpora, raise NotImplementedError). The other parts of mxnet 1.9.1's ``gluon.contrib``
(``nn``, ``rnn``, ``cnn``, ``estimator``) are not provided (docs/migration-mxnet.md).

Example::

    >>> from gradhub_compat.mxnet.gluon import contrib
    >>> list(contrib.data.IntervalSampler(5, interval=2))
    [0, 2, 4, 1, 3]
"""

from __future__ import annotations

from . import data

__all__ = ["data"]
