"""``mx.gluon.contrib.data`` of mxnet 1.9.1: :class:`IntervalSampler` (the sampler of
``gluon.data``) and :mod:`.text`, whose datasets raise NotImplementedError.

Example::

    >>> from gradhub_compat.mxnet.gluon.contrib.data import IntervalSampler
    >>> list(IntervalSampler(6, interval=3, rollover=False))
    [0, 3]
"""

from __future__ import annotations

from ...data.sampler import IntervalSampler
from . import text

__all__ = ["IntervalSampler", "text"]
