"""mxnet Gluon's :class:`Trainer`: applies an optimizer (``mx.optimizer``) to a set of
Parameters, as mxnet 1.9.1.

``step(batch_size)`` sets the optimizer's ``rescale_grad`` to ``scale / batch_size`` (``scale``
is the optimizer's ``rescale_grad`` at construction, 1 by default), reduces the gradients of the
copies of a parameter on several contexts through a kvstore (:mod:`..kvstore`) and updates every
parameter whose ``grad_req`` is not ``"null"`` in place.

The kvstore is made at the first ``step`` (``allreduce_grads``, ``update``, ``save_states``,
``load_states``) with mxnet 1.9.1's decisions: ``kvstore="device"``/``"local"`` with one context
makes none (``trainer._kvstore`` stays None), with several contexts ``mx.kv.create(kvstore)``; a
:class:`~..kvstore.KVStore` object is used as it is. ``update_on_kvstore=None`` becomes True
with a kvstore (False when the environment variable ``MXNET_UPDATE_ON_KVSTORE`` is 0, or with
``"local"`` when a parameter has over 16M elements): the optimizer is then set on the kvstore
(``kv.set_optimizer``), which sums the pushed gradients, updates its copy of the weights and
writes it into every context's copy; otherwise the gradients are summed on the kvstore and each
context's copy is updated by the Trainer's :class:`~..optimizer.Updater` of that context. With
``kvstore=None`` nothing is reduced: each context's copy is updated with its own gradient, as
mxnet. Parameters given as a dict or ParameterDict are taken in the sorted order of their
names (as mxnet: index ``i`` of the optimizer is the ``i``-th name), a list in its order.
Gradients are used as they are: with ``grad_req="add"`` they keep accumulating until
``zero_grad()``, as in mxnet.

``save_states``/``load_states`` write and read the optimizer states and settings in this
layer's byte format (an npz archive and a JSON record, see :mod:`..optimizer`); nothing is
pickled. A states file written by mxnet (a pickle) raises ``ValueError`` without being read.

Example::

    >>> import gradhub_compat.mxnet as mx
    >>> from gradhub_compat.mxnet import gluon
    >>> p = gluon.Parameter("w", shape=(2,))
    >>> p.initialize(mx.init.One())
    >>> trainer = gluon.Trainer([p], "sgd", {"learning_rate": 0.5})
    >>> with mx.autograd.record():
    ...     loss = (p.data() * mx.nd.array([1.0, 3.0])).sum()
    >>> loss.backward()
    >>> trainer.step(batch_size=1)
    >>> p.data().asnumpy()
    array([ 0.5, -0.5], dtype=float32)
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from .. import autograd
from .. import kvstore as kvs
from .. import optimizer as opt
from .parameter import Parameter, ParameterDict

__all__ = ["Trainer"]

_DOCS = "docs/migration-mxnet.md"


class Trainer:
    """Applies ``optimizer`` (a name of ``mx.optimizer``, with ``optimizer_params``, or an
    :class:`~..optimizer.Optimizer`) to ``params`` (a ParameterDict, a dict or a list of
    Parameters); see the module documentation. ``kvstore`` is ``"device"``, ``"local"``,
    ``"nccl"``, a :class:`~..kvstore.KVStore` or None; distributed kvstores raise
    ``NotImplementedError`` (gradhub-mpi trains on several processes), and so do
    ``compression_params`` when a kvstore is used (compressed gradients would change the
    numbers). The optimizer gets ``param_dict`` (index -> Parameter), so each Parameter's
    ``lr_mult`` and ``wd_mult`` apply.
    """

    def __init__(
        self,
        params: Any,
        optimizer: Any,
        optimizer_params: dict[str, Any] | None = None,
        kvstore: Any = "device",
        compression_params: dict[str, Any] | None = None,
        update_on_kvstore: bool | None = None,
    ) -> None:
        if isinstance(params, (dict, ParameterDict)):
            params = [params[key] for key in sorted(list(params.keys()))]
        if not isinstance(params, (list, tuple)):
            raise ValueError(
                f"First argument must be a list or dict of Parameters, got {type(params)}."
            )
        self._params: list[Parameter] = []
        self._param2idx: dict[str, int] = {}
        for i, param in enumerate(params):
            if not isinstance(param, Parameter):
                raise ValueError(
                    "First argument must be a list or dict of Parameters, got list of "
                    f"{type(param)}."
                )
            self._param2idx[param.name] = i
            self._params.append(param)
            param._trainer = self
        if isinstance(kvstore, str) and (
            "dist" in kvstore.lower() or kvstore.lower() in ("horovod", "byteps")
        ):
            raise NotImplementedError(
                f"gluon.Trainer: kvstore={kvstore!r} (distributed training) is not supported; "
                f"distributed training is done with gradhub-mpi ({_DOCS})"
            )
        if kvstore is not None and not isinstance(kvstore, (str, kvs.KVStore)):
            raise TypeError(
                f"gluon.Trainer: kvstore must be KVStore, str or None, got {type(kvstore).__name__}"
            )
        if update_on_kvstore is not None and not isinstance(update_on_kvstore, bool):
            raise TypeError(
                "gluon.Trainer: update_on_kvstore must be True, False or None, got "
                f"{type(update_on_kvstore).__name__}"
            )
        self._compression_params = compression_params
        self._contexts = self._check_contexts()
        if compression_params and (
            isinstance(kvstore, kvs.KVStore) or (kvstore is not None and len(self._contexts) > 1)
        ):
            raise NotImplementedError(
                "gluon.Trainer: compression_params (gradient compression on the kvstore) is "
                f"not supported ({_DOCS})"
            )
        self._init_optimizer(optimizer, optimizer_params if optimizer_params else {})
        self._scale = self._optimizer.rescale_grad
        self._kvstore_params: dict[str, Any] = {
            "kvstore": kvstore,
            "update_on_kvstore": update_on_kvstore,
        }
        self._kv_initialized = False
        self._kvstore: kvs.KVStore | None = None
        self._update_on_kvstore: bool | None = None
        self._distributed: bool | None = None
        self._params_to_init: list[Parameter] = []
        self._reset_kvstore()

    def _check_contexts(self) -> Any:
        contexts = None
        for param in self._params:
            ctx = param.list_ctx()
            if contexts is not None and contexts != ctx:
                raise ValueError(
                    "All Parameters must be initialized on the same set of contexts, but "
                    f"Parameter {param.name} is initialized on {ctx} while previous Parameters "
                    f"are initialized on {contexts}."
                )
            contexts = ctx
        return contexts if contexts is not None else []

    def _init_optimizer(self, optimizer: Any, optimizer_params: dict[str, Any]) -> None:
        param_dict = dict(enumerate(self._params))
        if isinstance(optimizer, opt.Optimizer):
            if optimizer_params:
                raise ValueError(
                    "gluon.Trainer: optimizer_params must be None if optimizer is an instance of "
                    "Optimizer instead of str"
                )
            self._optimizer = optimizer
            self._optimizer.param_dict = param_dict
        elif isinstance(optimizer, str):
            self._optimizer = opt.create(optimizer, param_dict=param_dict, **optimizer_params)
        else:
            raise TypeError(
                "gluon.Trainer: optimizer must be a name of mx.optimizer or an Optimizer, got "
                f"{type(optimizer).__name__}"
            )
        self._updaters = [opt.get_updater(self._optimizer) for _ in self._contexts or [None]]

    def _reset_kvstore(self) -> None:
        """Drop the kvstore (and its optimizer states when it updates): the next step makes a
        new one from the parameters' current values, as mxnet."""
        self._kv_initialized = False
        self._kvstore = None
        self._distributed = None
        self._update_on_kvstore = None
        self._params_to_init = list(self._params)

    def _create_kvstore(self) -> tuple[kvs.KVStore | None, bool]:
        # mxnet 1.9.1's model._create_kvstore
        config = self._kvstore_params["kvstore"]
        update_on_kvstore = bool(int(os.getenv("MXNET_UPDATE_ON_KVSTORE", "1")))
        kv: kvs.KVStore | None
        if config is None:
            kv = None
        elif isinstance(config, kvs.KVStore):
            kv = config
        elif len(self._contexts) == 1:
            kv = None  # one device, one machine: no kvstore
        else:
            kv = kvs.create(config)
            if config == "local":
                sizes = [int(np.prod(p.shape or ())) for p in self._params]
                if sizes and max(sizes) > 1024 * 1024 * 16:
                    update_on_kvstore = False
        if kv is None:
            update_on_kvstore = False
        return kv, update_on_kvstore

    def _init_kvstore(self) -> None:
        kv, update_on_kvstore = self._create_kvstore()
        self._distributed = False
        if self._kvstore_params["update_on_kvstore"] is not None:
            update_on_kvstore = self._kvstore_params["update_on_kvstore"]
        if kv is not None:
            if self._compression_params:
                kv.set_gradient_compression(self._compression_params)
            if update_on_kvstore:
                kv.set_optimizer(self._optimizer)
            self._kvstore = kv
            self._update_on_kvstore = update_on_kvstore
        else:
            self._kvstore = None
            self._update_on_kvstore = None
        self._kv_initialized = True

    def _init_params(self) -> None:
        """Put the initialized parameters of ``_params_to_init`` into the kvstore (context 0's
        copy, written into the others: mxnet's ``kv.broadcast``); deferred ones wait."""
        waiting = []
        if self._kvstore is not None:
            for param in self._params_to_init:
                if param._data is None:
                    waiting.append(param)
                    continue
                arrays = param.list_data()
                self._kvstore.broadcast(self._param2idx[param.name], arrays[0], arrays)
        self._params_to_init = waiting

    def _prepare_kvstore(self) -> None:
        if not self._kv_initialized:
            self._init_kvstore()
        if self._params_to_init:
            self._init_params()

    @property
    def learning_rate(self) -> float:
        """The optimizer's current learning rate."""
        return self._optimizer.learning_rate

    @property
    def optimizer(self) -> opt.Optimizer:
        """The optimizer."""
        return self._optimizer

    def set_learning_rate(self, lr: float) -> None:
        """Set the optimizer's learning rate (``UserWarning`` with an lr_scheduler, as mxnet)."""
        self._optimizer.set_learning_rate(lr)

    def _check_batch_size(self, batch_size: Any, what: str) -> float:
        if isinstance(batch_size, bool) or not isinstance(batch_size, (int, float, np.number)):
            raise TypeError(
                f"Trainer.{what}: batch_size must be a number, got {type(batch_size).__name__}"
            )
        if batch_size == 0:
            raise ValueError(f"Trainer.{what}: batch_size must not be 0")
        return self._scale / batch_size  # type: ignore[no-any-return]

    def step(self, batch_size: Any, ignore_stale_grad: bool = False) -> None:
        """One update: ``rescale_grad = scale / batch_size``, :meth:`allreduce_grads`, then
        :meth:`update`'s updates (with ``update_on_kvstore``, the kvstore's update). A parameter
        whose gradient ``backward`` has not written since the last update raises mxnet's
        ``UserWarning`` (an exception, as mxnet); with ``ignore_stale_grad=True`` such
        parameters are left as they are. As in mxnet, updates on the kvstore do not mark the
        gradients as used."""
        self._optimizer.rescale_grad = self._check_batch_size(batch_size, "step")
        self._prepare_kvstore()
        self._allreduce_grads()
        self._update(ignore_stale_grad)

    def allreduce_grads(self) -> None:
        """Sum the gradients of each parameter over its contexts on the kvstore (written into
        every copy); without a kvstore nothing is done. With ``update_on_kvstore`` it raises
        ``AssertionError``, as mxnet."""
        self._prepare_kvstore()
        if self._kvstore is not None and self._update_on_kvstore:
            raise AssertionError(
                "allreduce_grads() when parameters are updated on kvstore is not supported. Try "
                "setting `update_on_kvstore` to False when creating trainer."
            )
        self._allreduce_grads()

    def _allreduce_grads(self) -> None:
        if self._kvstore is None:
            return
        for i, param in enumerate(self._params):
            if param.grad_req == "null":
                continue
            grads = param.list_grad()
            if self._update_on_kvstore:
                self._kvstore.pushpull(i, grads, out=param.list_data())
            else:
                self._kvstore.pushpull(i, grads)

    def update(self, batch_size: Any, ignore_stale_grad: bool = False) -> None:
        """The updates of :meth:`step` without :meth:`allreduce_grads` (call it first); with
        ``update_on_kvstore`` it raises ``AssertionError``, as mxnet."""
        rescale = self._check_batch_size(batch_size, "update")
        self._prepare_kvstore()
        if self._kvstore is not None and self._update_on_kvstore:
            raise AssertionError(
                "update() when parameters are updated on kvstore is not supported. Try setting "
                "`update_on_kvstore` to False when creating trainer."
            )
        self._optimizer.rescale_grad = rescale
        self._update(ignore_stale_grad)

    def _update(self, ignore_stale_grad: bool = False) -> None:
        on_kvstore = self._kvstore is not None and bool(self._update_on_kvstore)
        updates: list[list[tuple[int, Any, Any]]] = [[] for _ in self._updaters]
        for i, param in enumerate(self._params):
            if param.grad_req == "null":
                continue
            if not ignore_stale_grad:
                for data in param.list_data():
                    if not autograd.fresh_grad(data):
                        raise UserWarning(
                            f"Trainer.step: Gradient of Parameter `{param.name}` on context "
                            f"{data.context} has not been updated by backward since last "
                            "`step`. This could mean a bug in your model that made it only use "
                            "a subset of the Parameters (Blocks) for this iteration. If you are "
                            "intentionally only using a subset, call step with "
                            "ignore_stale_grad=True to suppress this warning and skip updating "
                            "of Parameters with stale gradient"
                        )
            if on_kvstore:
                continue
            for upd, arr, grad in zip(updates, param.list_data(), param.list_grad()):
                if not ignore_stale_grad or autograd.fresh_grad(arr):
                    upd.append((i, grad, arr))
                    autograd.set_fresh_grad(arr, False)
        for updater, upd in zip(self._updaters, updates):
            if upd:
                idx, grads, arrs = zip(*upd)
                updater(list(idx), list(grads), list(arrs))

    def save_states(self, fname: str | os.PathLike[str]) -> None:
        """Write the optimizer states and settings (learning rate, update counts,
        lr_scheduler) to ``fname`` in this layer's format (not a pickle; the Parameters'
        ``lr_mult``/``wd_mult`` are not saved, as mxnet): the kvstore's updater's with
        ``update_on_kvstore``, else the first context's updater's."""
        self._prepare_kvstore()
        if self._kvstore is not None and self._update_on_kvstore:
            if self._params_to_init:
                raise AssertionError(
                    "Trainer.save_states: Cannot save trainer states when some parameters are "
                    "not yet initialized in kvstore."
                )
            self._kvstore.save_optimizer_states(fname, dump_optimizer=True)
        else:
            with open(fname, "wb") as f:
                f.write(self._updaters[0].get_states(dump_optimizer=True))

    def load_states(self, fname: str | os.PathLike[str]) -> None:
        """Read :meth:`save_states`' file into the kvstore's updater (``update_on_kvstore``)
        or every context's updater; the optimizer is replaced by the saved one (with this
        Trainer's parameters as its ``param_dict``). An mxnet states file (a pickle) raises
        ``ValueError``: it is never unpickled."""
        self._prepare_kvstore()
        if self._kvstore is not None and self._update_on_kvstore:
            self._kvstore.load_optimizer_states(fname)
            self._optimizer = self._kvstore._updater.optimizer
        else:
            with open(fname, "rb") as f:
                states = f.read()
            for updater in self._updaters:
                updater.set_states(states)
                updater.optimizer = self._updaters[0].optimizer
            self._optimizer = self._updaters[0].optimizer
        self._optimizer.param_dict = dict(enumerate(self._params))
