"""chainer 7.8.1's ``chainer/links/loss`` links not in :mod:`gradhub_compat.chainer.links` (re-
exported there): ``BinaryHierarchicalSoftmax`` and ``NegativeSampling``."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._common import host_array
from .. import Variable
from .. import functions as F
from .. import initializers as _init
from ..link import Link, Parameter

__all__ = ["BinaryHierarchicalSoftmax", "NegativeSampling"]


def _parse_tree(tree: Any) -> tuple[dict[Any, list[int]], dict[Any, list[float]], int]:
    """chainer's ``TreeParser``: the internal nodes numbered in pre-order; for each leaf, the
    path of nodes from the root and the codes (1 going left, -1 going right)."""
    paths: dict[Any, list[int]] = {}
    codes: dict[Any, list[float]] = {}
    path: list[int] = []
    code: list[float] = []
    next_id = 0
    stack: list[tuple[str, Any]] = [("node", tree)]
    while stack:  # (iterative: deep Huffman trees exceed Python's recursion limit)
        kind, node = stack.pop()
        if kind == "pop":
            path.pop()
            code.pop()
        elif kind == "right":
            code[-1] = -1.0
            stack.append(("node", node))
        elif isinstance(node, tuple):
            if len(node) != 2:
                raise ValueError("All internal nodes must have two child nodes")
            left, right = node
            path.append(next_id)
            next_id += 1
            code.append(1.0)
            stack += [("pop", None), ("right", right), ("node", left)]
        else:
            paths[node] = list(path)
            codes[node] = list(code)
    return paths, codes, next_id


class BinaryHierarchicalSoftmax(Link):
    """``BinaryHierarchicalSoftmax(in_size, tree, dtype=None)``: the hierarchical softmax loss
        over a binary tree of tuples (``((1, 2), 3)``; :meth:`create_huffman_tree` makes one from
        word counts), as chainer 7.8.1's ``links/loss/hierarchical_softmax.py``: ``W`` of shape
        (internal nodes, in_size) drawn from ``Uniform(1)``; ``loss = hsm(x, t)`` is
        ``sum_i sum_{(e, b) in path(t_i)} log(1 + exp(-b W[e] . x_i))`` (x (B, in_size) floating,
        t (B,) int32; chainer's ``InvalidType`` otherwise), a composition of gradhub functions
        (every order of gradient; chainer's is first order only).

        Example::

            >>> import numpy as np

    from ..._common import host_array
            >>> import gradhub_compat.chainer.links as L
            >>> tree = L.BinaryHierarchicalSoftmax.create_huffman_tree({0: 8, 1: 5, 2: 6, 3: 4})
            >>> tree
            ((3, 1), (2, 0))
            >>> hsm = L.BinaryHierarchicalSoftmax(2, tree)
            >>> hsm.W.array[...] = 0
            >>> hsm(np.ones((1, 2), np.float32), np.array([0], np.int32))  # 2 log 2
            variable(1.3862944)
    """

    def __init__(self, in_size: int, tree: Any, dtype: Any = None) -> None:
        super().__init__()
        from ..backend import get_dtype

        dt = get_dtype(dtype)
        paths, codes, size = _parse_tree(tree)
        n_vocab = max(paths.keys()) + 1
        self.paths = np.array([n for i in range(n_vocab) if i in paths for n in paths[i]], np.int32)
        self.codes = np.array([c for i in range(n_vocab) if i in codes for c in codes[i]], dt)
        begins = np.zeros(n_vocab + 1, np.int32)
        for i in range(n_vocab):
            begins[i + 1] = begins[i] + (len(paths[i]) if i in paths else 0)
        self.begins = begins
        self.parser_size = size
        with self.init_scope():
            self.W = Parameter(_init.Uniform(1), (size, in_size))

    @staticmethod
    def create_huffman_tree(word_counts: Any) -> Any:
        """chainer's Huffman tree of a dictionary word -> count: the two least frequent
        entries (ties broken by their order in the dictionary) are joined until one is left;
        ``{0: 8, 1: 5, 2: 6, 3: 4}`` gives ``((3, 1), (2, 0))``."""
        import heapq

        if not word_counts:
            raise ValueError("Empty vocabulary")
        q: list[tuple[Any, int, Any]] = []
        for uid, (w, c) in enumerate(word_counts.items()):
            heapq.heappush(q, (c, uid, w))
        while len(q) >= 2:
            count1, id1, word1 = heapq.heappop(q)
            count2, id2, word2 = heapq.heappop(q)
            heapq.heappush(q, (count1 + count2, min(id1, id2), (word1, word2)))
        return q[0][2]

    def forward(self, x: Any, t: Any) -> Variable:
        """The summed loss of the rows of x for the labels t."""
        from .._functions._common import _invalid

        ta = host_array(t.array if isinstance(t, Variable) else t)  # (indexes host tables)
        xs = tuple(x.shape) if hasattr(x, "shape") else np.shape(x)
        xdt = np.dtype(x.dtype if hasattr(x, "dtype") else np.asarray(x).dtype)
        ws = self.W.shape
        if (
            xdt.kind != "f"
            or len(xs) != 2
            or ta.dtype != np.int32
            or ta.ndim != 1
            or xs[0] != ta.shape[0]
            or self.W.dtype != xdt
            or ws[1] != xs[1]
        ):
            raise _invalid(
                "BinaryHierarchicalSoftmaxFunction",
                "x.dtype.kind == f, x.ndim == 2, t.dtype == int32, t.ndim == 1, "
                "x.shape[0] == t.shape[0], W.dtype == x.dtype, W.shape[1] == x.shape[1]",
                f"x {xs} {xdt}, t {ta.shape} {ta.dtype}, W {ws} {self.W.dtype}",
            )
        rows = np.concatenate(
            [np.full(self.begins[k + 1] - self.begins[k], i, np.int32) for i, k in enumerate(ta)]
            + [np.zeros(0, np.int32)]
        )
        sel = np.concatenate(
            [np.arange(self.begins[k], self.begins[k + 1]) for k in ta] + [np.zeros(0, np.intp)]
        )
        w = F.embed_id(self.paths[sel], self.W)  # (M, in_size)
        xr = F.embed_id(rows, x)  # the row of x of each path node
        wxy = F.sum(w * xr, axis=1) * F._const(self.codes[sel], w)  # (codes: host arrays)
        return F.sum(F.softplus(-wxy))


class NegativeSampling(Link):
    """``NegativeSampling(in_size, counts, sample_size, power=0.75, dtype=None)``: the
        negative sampling loss with its weight ``W`` of shape (len(counts), in_size), zeros at
        first, as chainer; the negatives are drawn by ``sampler``, chainer's
        :class:`~gradhub_compat.chainer.utils.WalkerAlias` over ``counts ** power`` (numpy's
        global generator, so a seeded run draws chainer's samples). ``forward(x, t,
        reduce="sum", *, return_samples=False)`` is ``F.negative_sampling(x, t, W,
        sampler.sample, sample_size, reduce)``.

        Example::

            >>> import numpy as np

    from ..._common import host_array
            >>> import gradhub_compat.chainer.links as L
            >>> ns = L.NegativeSampling(2, [1, 2, 3], 2)
            >>> ns(np.zeros((1, 2), np.float32), np.array([0], np.int32))
            variable(2.0794415)
    """

    def __init__(
        self,
        in_size: int,
        counts: Any,
        sample_size: int,
        power: float = 0.75,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        from ..backend import get_dtype
        from ..utils import WalkerAlias

        dt = get_dtype(dtype)
        vocab_size = len(counts)
        self.sample_size = sample_size
        p = np.array(counts, dt)
        np.power(p, dt.type(power), p)
        self.sampler = WalkerAlias(p)
        with self.init_scope():
            self.W = Parameter(0, (vocab_size, in_size))

    def forward(self, x: Any, t: Any, reduce: str = "sum", **kwargs: Any) -> Any:
        """The loss (``return_samples=True``: and the samples (B, sample_size + 1), column 0
        the labels)."""
        return_samples = kwargs.pop("return_samples", False)
        if kwargs:
            names = ", ".join(repr(k) for k in kwargs)
            raise TypeError(f"forward() got unexpected keyword argument(s) {names}")
        return F.negative_sampling(
            x,
            t,
            self.W,
            self.sampler.sample,
            self.sample_size,
            reduce=reduce,
            return_samples=return_samples,
        )
