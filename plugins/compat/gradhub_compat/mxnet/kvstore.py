"""mxnet's key-value store (``mx.kv``, ``mx.kvstore``) for one process, as mxnet 1.9.1's
``local`` and ``device`` stores.

A :class:`KVStore` keeps one NDArray per key (ints or strings, not both in one store).
``push(key, value)`` sums the values pushed for a key (a list of NDArrays: the copies of a
gradient on several devices) and, without an optimizer, the sum replaces the stored value; with
one (:meth:`KVStore.set_optimizer`, mxnet's ``update_on_kvstore``) the updater of
:mod:`..optimizer` applies it to the stored value: ``updater(key, sum, stored)``.
``pull(key, out)`` copies the stored value into ``out`` (every array of a list), ``pushpull``
does both. ``local`` and ``device`` differ in mxnet only in where the sums are computed; here
both give the same numbers. Distributed stores (``dist_sync``, ``dist_async``...) raise
``NotImplementedError``: distributed training is the business of gradhub-mpi.

Example::

    >>> import gradhub_compat.mxnet as mx
    >>> kv = mx.kv.create("local")
    >>> kv.init(3, mx.nd.ones((2,)))
    >>> kv.push(3, [mx.nd.ones((2,)), mx.nd.array([2.0, 3.0])])
    >>> out = mx.nd.zeros((2,))
    >>> kv.pull(3, out=out)
    >>> out.asnumpy()
    array([3., 4.], dtype=float32)
    >>> kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.5))
    >>> kv.pushpull(3, mx.nd.array([2.0, 2.0]), out=out)
    >>> out.asnumpy()
    array([2., 3.], dtype=float32)
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from . import optimizer as opt
from .base import MXNetError
from .ndarray import NDArray

__all__ = ["KVStore", "KVStoreBase", "create"]

_DOCS = "docs/migration-mxnet.md"
_LOCAL_TYPES = ("local", "device", "nccl")


def _normalize(what: str, key: Any, value: Any, nested: bool) -> list[tuple[Any, list[NDArray]]]:
    """``[(key, [arrays])]`` from one key or a list of keys and the matching values (an NDArray,
    or with ``nested`` a list of NDArrays, per key)."""
    keys = list(key) if isinstance(key, (list, tuple)) else [key]
    if isinstance(key, (list, tuple)):
        if not isinstance(value, (list, tuple)) or len(value) != len(keys):
            raise ValueError(
                f"KVStore.{what}: {len(keys)} keys need a list of {len(keys)} values, got "
                f"{type(value).__name__}"
            )
        values = list(value)
    else:
        values = [value]
    kinds = set()
    pairs = []
    for k, v in zip(keys, values):
        if isinstance(k, bool) or not isinstance(k, (int, np.integer, str)):
            raise TypeError(
                f"KVStore.{what}: a key must be an int or a str, got {type(k).__name__}"
            )
        kinds.add(isinstance(k, str))
        arrays = list(v) if isinstance(v, (list, tuple)) else [v]
        if (isinstance(v, (list, tuple)) and not nested) or not arrays:
            raise TypeError(f"KVStore.{what}: key {k!r} takes one NDArray")
        for a in arrays:
            if not isinstance(a, NDArray):
                raise TypeError(
                    f"KVStore.{what}: the values of key {k!r} must be NDArrays, got "
                    f"{type(a).__name__}"
                )
        pairs.append((k if isinstance(k, str) else int(k), arrays))
    if len(kinds) > 1:
        raise TypeError(f"KVStore.{what}: inconsistent types of keys detected (int and str)")
    return pairs


def _write(dst: NDArray, src: np.ndarray, what: str) -> None:
    if tuple(dst.shape) != tuple(src.shape):
        raise MXNetError(
            f"KVStore.{what}: operands shape mismatch from.shape = {list(src.shape)} "
            f"to.shape = {list(dst.shape)}"
        )
    dst._arr[...] = dst._ctx.device().asarray(src.astype(dst._arr.dtype))


class KVStoreBase:
    """The base class of the stores (``mx.kv.KVStoreBase``); ``OPTIMIZER`` is the capability
    that :meth:`KVStore.is_capable` answers."""

    OPTIMIZER = "optimizer"


class KVStore(KVStoreBase):
    """A single-process key-value store of type ``name`` (``"local"``, ``"device"`` or
    ``"nccl"``, which behave the same here); create one with :func:`create`. See the module
    documentation for ``init``/``push``/``pull``; ``rank`` is 0 and ``num_workers`` 1."""

    def __init__(self, name: str = "local") -> None:
        self._type = name
        self._store: dict[Any, NDArray] = {}
        self._key_is_str: bool | None = None
        self._updater: Any = None

    @property
    def type(self) -> str:
        """The type given to :func:`create` (lower case)."""
        return self._type

    @property
    def rank(self) -> int:
        """The rank of this worker: 0 (one process)."""
        return 0

    @property
    def num_workers(self) -> int:
        """The number of workers: 1 (one process)."""
        return 1

    def is_capable(self, capability: str) -> bool:
        """Whether the store can do ``capability``: ``"optimizer"`` (updates on the store) is
        True; another name raises ``ValueError``, as mxnet."""
        if str(capability).lower() == KVStoreBase.OPTIMIZER:
            return True
        raise ValueError(f"Unknown capability: {capability}")

    def _check_key_type(self, pairs: list[tuple[Any, list[NDArray]]], what: str) -> None:
        if not pairs:
            return
        is_str = isinstance(pairs[0][0], str)
        if self._key_is_str is not None and self._key_is_str != is_str:
            raise MXNetError(
                f"KVStore.{what}: Mixed key types are not allowed (this store has "
                f"{'str' if self._key_is_str else 'int'} keys)"
            )
        self._key_is_str = is_str

    def _stored(self, key: Any, what: str) -> NDArray:
        if key not in self._store:
            raise MXNetError(f"KVStore.{what}: key {key!r} has not been inited (KVStore.init)")
        return self._store[key]

    def init(self, key: Any, value: Any) -> None:
        """Store a copy of ``value`` (an NDArray, or a list of them for a list of keys) under
        ``key``; a key initialized twice raises ``MXNetError``, as mxnet."""
        pairs = _normalize("init", key, value, nested=False)
        self._check_key_type(pairs, "init")
        for k, arrays in pairs:
            if k in self._store:
                raise MXNetError(
                    f"KVStore.init: duplicate init of key {k}. Please double check if you called "
                    "kv.init or kv.broadcast with this key multiple times"
                )
            self._store[k] = arrays[0].copy()

    def push(self, key: Any, value: Any, priority: int = 0) -> None:
        """Sum the NDArrays pushed for each key (one, or a list: the copies of a gradient) and
        write the sum into the stored value, or, after :meth:`set_optimizer`, update the stored
        value with it (``updater(key, sum, stored)``). ``priority`` has no effect."""
        pairs = _normalize("push", key, value, nested=True)
        self._check_key_type(pairs, "push")
        for k, arrays in pairs:
            stored = self._stored(k, "push")
            total = arrays[0].asnumpy().copy()
            for a in arrays[1:]:
                if tuple(a.shape) != tuple(total.shape):
                    raise MXNetError(
                        f"KVStore.push: the values pushed for key {k!r} have different shapes "
                        f"{list(total.shape)} and {list(a.shape)}"
                    )
                total = total + a.asnumpy()
            if self._updater is None:
                _write(stored, total, "push")
            else:
                if tuple(total.shape) != tuple(stored.shape):
                    _write(stored, total, "push")  # raises the shape error
                merged = NDArray(
                    stored._ctx.device().asarray(total.astype(stored._arr.dtype)), stored._ctx
                )
                self._updater(k, merged, stored)

    def pull(
        self, key: Any, out: Any = None, priority: int = 0, ignore_sparse: bool = True
    ) -> None:
        """Copy the value stored under ``key`` into ``out`` (an NDArray, or a list of them, all
        written; a list of keys takes a list of such). ``out`` is required."""
        if out is None:
            raise ValueError("KVStore.pull: out is required (the NDArrays to write into)")
        pairs = _normalize("pull", key, out, nested=True)
        self._check_key_type(pairs, "pull")
        for k, arrays in pairs:
            src = self._stored(k, "pull").asnumpy()
            for a in arrays:
                _write(a, src, "pull")

    def pushpull(self, key: Any, value: Any, out: Any = None, priority: int = 0) -> None:
        """:meth:`push` then :meth:`pull` into ``out`` (``value`` itself when ``out`` is
        None: the pushed arrays receive the sum, or the updated value)."""
        self.push(key, value, priority)
        self.pull(key, value if out is None else out, priority)

    def broadcast(self, key: Any, value: Any, out: Any, priority: int = 0) -> None:
        """:meth:`init` with ``value`` then :meth:`pull` into ``out``."""
        self.init(key, value)
        self.pull(key, out, priority)

    def row_sparse_pull(
        self, key: Any, out: Any = None, priority: int = 0, row_ids: Any = None
    ) -> None:
        """Sparse storage does not exist in this layer: raises ``NotImplementedError``."""
        raise NotImplementedError(
            f"KVStore.row_sparse_pull: sparse storage (row_sparse) is not supported ({_DOCS})"
        )

    def set_gradient_compression(self, compression_params: dict[str, Any]) -> None:
        """Gradient compression changes the pushed numbers (2-bit quantization with a residual):
        not supported, raises ``NotImplementedError``."""
        raise NotImplementedError(
            "KVStore.set_gradient_compression: gradient compression is not supported "
            f"(compression_params={compression_params!r}; {_DOCS})"
        )

    def set_optimizer(self, optimizer: opt.Optimizer) -> None:
        """Update the stored values on :meth:`push` with ``optimizer``'s updater
        (``mx.optimizer.get_updater(optimizer)``: mxnet's ``update_on_kvstore``); a new call
        replaces the updater and its states."""
        if not isinstance(optimizer, opt.Optimizer):
            raise TypeError(
                "KVStore.set_optimizer: optimizer must be an mx.optimizer.Optimizer, got "
                f"{type(optimizer).__name__}"
            )
        self._set_updater(opt.get_updater(optimizer))

    def _set_updater(self, updater: Any) -> None:
        """Use ``updater(key, merged, stored)`` on :meth:`push` (a callable)."""
        if not callable(updater):
            raise TypeError("KVStore._set_updater: updater must be callable")
        self._updater = updater

    def save_optimizer_states(
        self, fname: str | os.PathLike[str], dump_optimizer: bool = False
    ) -> None:
        """Write the updater's states (and with ``dump_optimizer`` the optimizer) to ``fname``
        in this layer's format (``Updater.get_states``: npz and JSON, not a pickle)."""
        if self._updater is None or not hasattr(self._updater, "get_states"):
            raise AssertionError(
                "KVStore.save_optimizer_states: no optimizer was set (KVStore.set_optimizer)"
            )
        with open(fname, "wb") as f:
            f.write(self._updater.get_states(dump_optimizer))

    def load_optimizer_states(self, fname: str | os.PathLike[str]) -> None:
        """Read :meth:`save_optimizer_states`' file into the updater (the saved optimizer
        replaces the updater's when it was dumped); mxnet's pickled files raise ``ValueError``
        without being read."""
        if self._updater is None or not hasattr(self._updater, "set_states"):
            raise AssertionError(
                "KVStore.load_optimizer_states: no optimizer was set (KVStore.set_optimizer)"
            )
        with open(fname, "rb") as f:
            self._updater.set_states(f.read())


def create(name: str = "local") -> KVStore:
    """A new :class:`KVStore` of type ``name`` (case-insensitive): ``"local"``, ``"device"``
    or ``"nccl"`` (one process: the same store), or an older name containing one of them
    (``"local_allreduce_cpu"``), kept as :attr:`KVStore.type` as mxnet. ``"dist_*"``,
    ``"horovod"`` and ``"byteps"`` raise ``NotImplementedError`` (distributed training is
    gradhub-mpi's business), another name ``ValueError``, a non-string ``TypeError``."""
    if not isinstance(name, str):
        raise TypeError("name must be a string")
    kind = name.lower()
    if "dist" in kind or kind in ("horovod", "byteps"):
        raise NotImplementedError(
            f"mx.kv.create: the distributed kvstore {name!r} is not supported; distributed "
            f"training is done with gradhub-mpi ({_DOCS})"
        )
    if not any(t in kind for t in _LOCAL_TYPES):
        raise ValueError(
            f"mx.kv.create: unknown kvstore type {name!r} (one process: 'local', 'device', "
            "'nccl' or a name containing one of them)"
        )
    return KVStore(kind)
