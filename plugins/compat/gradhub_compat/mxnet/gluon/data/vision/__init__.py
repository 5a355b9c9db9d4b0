"""mxnet Gluon's vision data (``gluon.data.vision``), as mxnet 1.9.1: the datasets
:class:`MNIST`, :class:`FashionMNIST`, :class:`CIFAR10`, :class:`CIFAR100` (read from files
already under ``root``; nothing is downloaded) and :mod:`.transforms`.

Example::

    >>> from gradhub_compat.mxnet.gluon.data import vision
    >>> vision.transforms.ToTensor()
    ToTensor(
    <BLANKLINE>
    )
"""

from __future__ import annotations

from . import datasets, transforms
from .datasets import CIFAR10, CIFAR100, MNIST, FashionMNIST

__all__ = ["CIFAR10", "CIFAR100", "MNIST", "FashionMNIST", "datasets", "transforms"]
