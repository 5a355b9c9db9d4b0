"""mxnet Gluon's data pipeline (``mx.gluon.data``), as mxnet 1.9.1: datasets
(:class:`Dataset`, :class:`SimpleDataset`, :class:`ArrayDataset`), samplers
(:class:`SequentialSampler`, :class:`RandomSampler`, :class:`BatchSampler`,
:class:`FilterSampler`, :class:`IntervalSampler`), :class:`DataLoader` and :mod:`.vision`
(docs/migration-mxnet.md, section Gluon data and recurrent layers).

Example::

    >>> import numpy as np
    >>> import gradhub_compat.mxnet as mx
    >>> from gradhub_compat.mxnet import gluon
    >>> ds = gluon.data.ArrayDataset(mx.nd.ones((4, 3)), np.arange(4))
    >>> [(x.shape, y.asnumpy().tolist()) for x, y in gluon.data.DataLoader(ds, batch_size=3)]
    [((3, 3), [0, 1, 2]), ((1, 3), [3])]
"""

from __future__ import annotations

from . import dataloader, dataset, sampler, vision
from .dataloader import DataLoader
from .dataset import ArrayDataset, Dataset, RecordFileDataset, SimpleDataset
from .sampler import (
    BatchSampler,
    FilterSampler,
    IntervalSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
)

__all__ = [
    "ArrayDataset",
    "BatchSampler",
    "DataLoader",
    "Dataset",
    "FilterSampler",
    "IntervalSampler",
    "RandomSampler",
    "RecordFileDataset",
    "Sampler",
    "SequentialSampler",
    "SimpleDataset",
    "dataloader",
    "dataset",
    "sampler",
    "vision",
]
