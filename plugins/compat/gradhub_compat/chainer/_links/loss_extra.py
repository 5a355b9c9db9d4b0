"""chainer 7.8.1's ``chainer/links/loss`` links ``BlackOut`` and ``CRF1d`` (re-exported by
:mod:`gradhub_compat.chainer.links`).

Example::

    >>> import numpy as np
    >>> import gradhub_compat.chainer.links as L
    >>> crf = L.CRF1d(2)
    >>> xs = [np.zeros((1, 2), np.float32), np.zeros((1, 2), np.float32)]
    >>> ys = [np.zeros(1, np.int32), np.zeros(1, np.int32)]
    >>> crf(xs, ys)  # log(4): the four label sequences score alike
    variable(1.3862944)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import Variable
from .. import functions as F
from .. import initializers as _init
from ..link import Link, Parameter
from ._common import _permutate_list

__all__ = ["BlackOut", "CRF1d"]


class BlackOut(Link):
    """``BlackOut(in_size, counts, sample_size)``: the BlackOut loss
    ``F.black_out(x, t, W, samples)`` (averaged over the batch), ``W`` of shape
    (len(counts), in_size), NaN until set (chainer's ``Parameter(shape=...)``, no
    initializer); ``samples`` (batch, sample_size) drawn by ``sampler``, chainer's
    :class:`~gradhub_compat.chainer.utils.WalkerAlias` over ``counts`` (numpy's global
    generator, so a seeded run draws chainer's samples), or the class attribute
    ``sample_data`` when it is set (chainer's hook for tests).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.links as L
        >>> bo = L.BlackOut(2, [1, 1, 1], 2)
        >>> bo.W.array[...] = 0
        >>> bo.sample_data = np.array([[1, 2]], np.int32)
        >>> bo(np.zeros((1, 2), np.float32), np.array([0], np.int32))
        variable(1.9095427)
    """

    sample_data: Any = None

    def __init__(self, in_size: int, counts: Any, sample_size: int) -> None:
        super().__init__()
        from ..utils import WalkerAlias

        vocab_size = len(counts)
        p = np.array(counts, dtype=np.float32)
        self.sampler = WalkerAlias(p)
        self.sample_size = sample_size
        with self.init_scope():
            self.W = Parameter(shape=(vocab_size, in_size))

    def forward(self, x: Any, t: Any) -> Variable:
        """``F.black_out(x, t, W, samples)`` with samples of shape (len(x), sample_size)."""
        if self.sample_data is not None:
            sample_data = self.sample_data
        else:
            sample_data = self.sampler.sample((x.shape[0], self.sample_size))
        samples = Variable(sample_data, requires_grad=False)
        return F.black_out(x, t, self.W, samples)


def _argsort_list_descent(lst: list[Any]) -> np.ndarray:
    """chainer's ``argsort_list_descent``: the order of decreasing length (numpy's default
    sort, as chainer)."""
    return np.argsort([-len(x) for x in lst]).astype(np.int32)


class CRF1d(Link):
    """``CRF1d(n_label, initial_cost=None)``: a linear-chain CRF with the transition scores
    ``cost`` (n_label, n_label) (zeros unless ``initial_cost``).

    ``forward(xs, ys, reduce='mean', transpose=False)`` is ``F.crf1d(cost, xs, ys, reduce)``
    for time-major ``xs`` (``xs[t]`` of shape (B_t, n_label), B_t not increasing) and ``ys``
    (``ys[t]`` int32 (B_t,)); ``transpose=True`` takes batch-major sequences (``xs[i]`` of
    shape (T_i, n_label)) in any order, sorts them by decreasing length (numpy's
    ``argsort``, as chainer) and transposes them (with ``reduce='no'`` the losses come in
    that sorted order, as chainer's). ``argmax(xs, transpose=False)`` is
    ``F.argmax_crf1d(cost, xs)``: ``(score, path)``; with ``transpose=True`` ``path`` is the
    list of each sequence's labels in the given order (the scores stay sorted, as chainer).
    """

    def __init__(self, n_label: int, initial_cost: Any = None) -> None:
        super().__init__()
        if initial_cost is None:
            initial_cost = _init.Zero()
        with self.init_scope():
            self.cost = Parameter(initializer=initial_cost, shape=(n_label, n_label))

    def forward(self, xs: Any, ys: Any, reduce: str = "mean", transpose: bool = False) -> Variable:
        """The negative log-likelihood of the label sequences ``ys`` (see the class)."""
        if transpose:
            indices = _argsort_list_descent(xs)
            xs = _permutate_list(xs, indices, inv=False)
            ys = _permutate_list(ys, indices, inv=False)
            trans_x = F.transpose_sequence(xs)
            trans_y = F.transpose_sequence(ys)
            return F.crf1d(self.cost, trans_x, trans_y, reduce)
        return F.crf1d(self.cost, xs, ys, reduce)

    def argmax(self, xs: Any, transpose: bool = False) -> tuple[Variable, list[Any]]:
        """The best label sequences: ``(score, path)`` (see the class)."""
        if transpose:
            indices = _argsort_list_descent(xs)
            xs = _permutate_list(xs, indices, inv=False)
            trans_x = F.transpose_sequence(xs)
            score, path = F.argmax_crf1d(self.cost, trans_x)
            path_t = F.transpose_sequence(path)
            return score, _permutate_list([p.array for p in path_t], indices, inv=True)
        return F.argmax_crf1d(self.cost, xs)
