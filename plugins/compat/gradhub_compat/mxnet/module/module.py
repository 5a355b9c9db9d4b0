"""mxnet 1.9.1's ``mx.mod.Module``: a symbol bound to one context, trained by
:meth:`~.base_module.BaseModule.fit`.

Example::

    >>> import numpy as np
    >>> import gradhub_compat.mxnet as mx
    >>> net = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=2, name="fc")
    >>> net = mx.sym.SoftmaxOutput(net, name="softmax")
    >>> mod = mx.mod.Module(net)
    >>> it = mx.io.NDArrayIter(np.eye(4, 3), np.array([0, 1, 0, 1]), batch_size=2)
    >>> mod.bind(it.provide_data, it.provide_label)
    >>> mod.init_params(arg_params={"fc_weight": mx.nd.ones((2, 3)), "fc_bias": mx.nd.zeros(2)})
    >>> mod.init_optimizer(optimizer_params={"learning_rate": 0.5})
    >>> mod.forward_backward(next(it))
    >>> mod.update()
    >>> mod.get_params()[0]["fc_weight"].asnumpy()
    array([[1.125, 0.875, 1.   ],
           [0.875, 1.125, 1.   ]], dtype=float32)
    >>> mod.output_shapes
    [('softmax_output', (2, 2))]
"""

from __future__ import annotations

import logging
import os
import warnings
from collections import OrderedDict
from typing import Any

import numpy as np

from .. import kvstore as kvs
from .. import model as _model
from .. import optimizer as opt
from ..context import Context, cpu
from ..executor import Executor
from ..initializer import InitDesc, Uniform
from ..io import DataBatch, DataDesc
from ..ndarray import NDArray, zeros
from .base_module import (
    BaseModule,
    _check_input_names,
    _ModuleStateError,
    _parse_data_desc,
    _require,
)

__all__ = ["Module"]

_DOCS = "docs/migration-mxnet.md"


def _attr_dict(symbol: Any) -> dict[str, dict[str, str]]:
    """``symbol.attr_dict()``: the attributes of each variable (``__lr_mult__``...)."""
    if hasattr(symbol, "attr_dict"):
        return symbol.attr_dict()
    out: dict[str, dict[str, str]] = {}
    for node in symbol._topo():
        if node.op == "null" and getattr(node, "_json", None):
            out[node.name] = {k: str(v) for k, v in node._json.items()}
    return out


def _create_kvstore(kvstore: Any) -> tuple[kvs.KVStore | None, bool]:
    """mxnet 1.9.1's ``model._create_kvstore`` with one device: the kvstore to use and whether
    the update happens on it (``MXNET_UPDATE_ON_KVSTORE``, default 1, and the store)."""
    update_on_kvstore = bool(int(os.getenv("MXNET_UPDATE_ON_KVSTORE", "1")))
    kv: kvs.KVStore | None
    if kvstore is None:
        kv = None
    elif isinstance(kvstore, kvs.KVStoreBase):
        kv = kvstore  # type: ignore[assignment]
    elif isinstance(kvstore, str):
        # one device, one machine: no kvstore; 'dist_*' raises as mx.kv.create does
        kv = kvs.create(kvstore) if "dist" in kvstore else None
    else:
        raise TypeError(
            f"init_optimizer: kvstore must be KVStore, str or None, got {type(kvstore).__name__}"
        )
    if kv is None:
        update_on_kvstore = False
    else:
        update_on_kvstore &= kv.is_capable(kvs.KVStoreBase.OPTIMIZER)
    return kv, update_on_kvstore


def _copy_into(dst: NDArray, src: Any) -> None:
    """``src`` (an NDArray or numpy array of ``dst``'s shape) written into ``dst`` in
    ``dst``'s dtype (mxnet's ``copyto``)."""
    value = src.asnumpy() if isinstance(src, NDArray) else np.asarray(src)
    if tuple(value.shape) != tuple(dst.shape):
        raise ValueError(
            f"Module: cannot copy an array of shape {tuple(value.shape)} into one of shape "
            f"{tuple(dst.shape)}"
        )
    dst[:] = value.astype(dst.dtype, copy=False)


class Module(BaseModule):
    """A symbol with its parameters, bound to one context, as mxnet's ``mx.mod.Module``.

    ``data_names``/``label_names`` name the symbol's inputs (the others are parameters, except
    ``fixed_param_names``, which are not updated). :meth:`bind` allocates an executor for the
    given input shapes, :meth:`init_params` fills the parameters (``arg_params`` and the
    ``initializer``), :meth:`init_optimizer` creates the optimizer (its ``rescale_grad`` is
    ``1 / batch_size``, as mxnet), :meth:`forward`, :meth:`backward`, :meth:`update` run one
    step; ``fit``, ``score``, ``predict`` loop over a DataIter (see
    :class:`~.base_module.BaseModule`). A :class:`~..kvstore.KVStore` given to
    :meth:`init_optimizer` (or ``fit``) is used as mxnet uses it (see there). One context
    only: a list of several contexts, a distributed ``kvstore``, ``state_names``,
    ``group2ctxs`` and ``compression_params`` raise ``NotImplementedError``.
    """

    def __init__(
        self,
        symbol: Any,
        data_names: Any = ("data",),
        label_names: Any = ("softmax_label",),
        logger: Any = logging,
        context: Any = cpu(),  # noqa: B008 (mxnet's default)
        work_load_list: Any = None,
        fixed_param_names: Any = None,
        state_names: Any = None,
        group2ctxs: Any = None,
        compression_params: Any = None,
    ) -> None:
        super().__init__(logger=logger)
        from ..symbol import Symbol

        if not isinstance(symbol, Symbol):
            raise TypeError(f"Module: symbol must be a Symbol, got {type(symbol).__name__}")
        if isinstance(context, Context):
            context = [context]
        if not isinstance(context, (list, tuple)) or not all(
            isinstance(c, Context) for c in context
        ):
            raise TypeError(f"Module: context must be a Context or a list of them, got {context!r}")
        if len(context) != 1:
            raise NotImplementedError(
                f"Module: data parallelism over {len(context)} contexts is not supported; give "
                f"one context ({_DOCS})"
            )
        self._context = list(context)
        if work_load_list is None:
            work_load_list = [1] * len(self._context)
        if len(work_load_list) != len(self._context):
            raise ValueError("Module: work_load_list needs one entry per context")
        self._work_load_list = work_load_list
        for what, v in (
            ("state_names", state_names),
            ("group2ctxs", group2ctxs),
            ("compression_params", compression_params),
        ):
            if v:
                raise NotImplementedError(f"Module: {what} is not supported ({_DOCS})")
        self._symbol = symbol
        data_names = list(data_names) if data_names is not None else []
        label_names = list(label_names) if label_names is not None else []
        fixed_param_names = list(fixed_param_names) if fixed_param_names is not None else []
        _check_input_names(symbol, data_names, "data", True)
        _check_input_names(symbol, label_names, "label", False)
        _check_input_names(symbol, fixed_param_names, "fixed_param", True)
        arg_names = symbol.list_arguments()
        input_names = data_names + label_names
        self._param_names = [x for x in arg_names if x not in input_names]
        self._fixed_param_names = fixed_param_names
        self._aux_names = symbol.list_auxiliary_states()
        self._data_names = data_names
        self._label_names = label_names
        self._state_names: list[str] = []
        self._output_names = symbol.list_outputs()
        self._arg_params: dict[str, NDArray] | None = None
        self._aux_params: dict[str, NDArray] | None = None
        self._params_dirty = False
        self._optimizer: Any = None
        self._kvstore: Any = None
        self._update_on_kvstore: bool | None = None
        self._updater: Any = None
        self._preload_opt_states: str | None = None
        self._grad_req: Any = None
        self._exec: Executor | None = None
        self._grad_reqs: dict[str, str] = {}
        self._data_shapes: list[DataDesc] | None = None
        self._label_shapes: list[DataDesc] | None = None

    # -- checkpoints -------------------------------------------------------------------------
    @staticmethod
    def load(prefix: str, epoch: int, load_optimizer_states: bool = False, **kwargs: Any):
        """A Module of the checkpoint ``prefix`` at ``epoch`` (``mx.model.load_checkpoint``),
        its parameters set (bind it before use); ``load_optimizer_states`` loads
        ``prefix-%04d.states`` at ``init_optimizer``; ``kwargs`` go to :class:`Module`."""
        sym, args, auxs = _model.load_checkpoint(prefix, epoch)
        mod = Module(symbol=sym, **kwargs)
        mod._arg_params = args
        mod._aux_params = auxs
        mod.params_initialized = True
        if load_optimizer_states:
            mod._preload_opt_states = "%s-%04d.states" % (prefix, epoch)  # noqa: UP031
        return mod

    def save_checkpoint(
        self,
        prefix: str,
        epoch: int,
        save_optimizer_states: bool = False,
        remove_amp_cast: bool = True,
    ) -> None:
        """Write ``prefix-symbol.json`` and ``prefix-%04d.params`` (``mx.model``'s checkpoint
        files) and, with ``save_optimizer_states``, ``prefix-%04d.states``: the updater's
        states in ``mx.optimizer``'s byte format (npz + JSON, not mxnet's pickle)."""
        arg_params, aux_params = self.get_params()
        _model.save_checkpoint(
            prefix, epoch, self._symbol, arg_params, aux_params, remove_amp_cast=remove_amp_cast
        )
        if save_optimizer_states:
            state_name = "%s-%04d.states" % (prefix, epoch)  # noqa: UP031
            self.save_optimizer_states(state_name)
            logging.info('Saved optimizer state to "%s"', state_name)

    def save_optimizer_states(self, fname: str) -> None:
        """Write the updater's states to ``fname`` (``mx.optimizer``'s format, never pickle);
        when updating on the kvstore, the kvstore's (``KVStore.save_optimizer_states``)."""
        _require(self.optimizer_initialized, "save_optimizer_states: init_optimizer first")
        if self._update_on_kvstore:
            self._kvstore.save_optimizer_states(fname)
            return
        with open(fname, "wb") as fout:
            fout.write(self._updater.get_states())

    def load_optimizer_states(self, fname: str) -> None:
        """Load states written by :meth:`save_optimizer_states` (nothing is unpickled); when
        updating on the kvstore, into the kvstore's updater."""
        _require(self.optimizer_initialized, "load_optimizer_states: init_optimizer first")
        if self._update_on_kvstore:
            self._kvstore.load_optimizer_states(fname)
            return
        with open(fname, "rb") as f:
            self._updater.set_states(f.read())

    # -- properties --------------------------------------------------------------------------
    def _reset_bind(self) -> None:
        self.binded = False
        self._exec = None
        self._data_shapes = None
        self._label_shapes = None

    @property
    def data_names(self) -> list[str]:
        """The names of the data inputs."""
        return self._data_names

    @property
    def label_names(self) -> list[str]:
        """The names of the label inputs."""
        return self._label_names

    @property
    def output_names(self) -> list[str]:
        """The symbol's outputs (``softmax_output``...)."""
        return self._output_names

    @property
    def data_shapes(self) -> list[DataDesc]:
        """The bound data DataDescs."""
        _require(self.binded, "data_shapes: bind first")
        return self._data_shapes  # type: ignore[return-value]

    @property
    def label_shapes(self) -> list[DataDesc] | None:
        """The bound label DataDescs (None when bound without labels)."""
        _require(self.binded, "label_shapes: bind first")
        return self._label_shapes

    @property
    def output_shapes(self) -> list[tuple[str, tuple[int, ...]]]:
        """``(name, shape)`` of each output."""
        _require(self.binded, "output_shapes: bind first")
        return [(n, tuple(o.shape)) for n, o in zip(self._output_names, self._exec.outputs)]  # type: ignore[union-attr]

    # -- parameters --------------------------------------------------------------------------
    def get_params(self) -> tuple[dict[str, NDArray], dict[str, NDArray]]:
        """``(arg_params, aux_params)``: dicts name -> NDArray, copied from the executor when
        an update changed it (the same dict objects each time, as mxnet)."""
        _require(self.params_initialized, "get_params: init_params first")
        if self._params_dirty:
            self._sync_params_from_devices()
        return (self._arg_params, self._aux_params)  # type: ignore[return-value]

    def init_params(
        self,
        initializer: Any = Uniform(0.01),  # noqa: B008 (mxnet's default)
        arg_params: dict[str, NDArray] | None = None,
        aux_params: dict[str, NDArray] | None = None,
        allow_missing: bool = False,
        force_init: bool = False,
        allow_extra: bool = False,
    ) -> None:
        """Fill the parameters, as mxnet: each (in name order) is copied from ``arg_params``/
        ``aux_params`` when given there; one missing from a given dict raises
        ``RuntimeError`` (``NAME is not presented``) unless ``allow_missing``, then (and when
        the dict is None) ``initializer(InitDesc(name, attrs), array)`` fills it. Called again
        without ``force_init`` it warns and does nothing; names of ``arg_params`` that are not
        parameters raise ``ValueError`` unless ``allow_extra``."""
        if self.params_initialized and not force_init:
            warnings.warn(
                "Parameters already initialized and force_init=False. init_params call ignored.",
                stacklevel=2,
            )
            return
        _require(self.binded, "init_params: call bind before initializing the parameters")

        def _impl(name: InitDesc, arr: NDArray, cache: dict[str, NDArray] | None) -> None:
            if cache is not None:
                if name in cache:
                    cache_arr = cache[name]
                    if cache_arr is not arr:
                        _copy_into(arr, cache_arr)
                    return
                if not allow_missing:
                    raise RuntimeError(f"{name} is not presented")
                if initializer is not None:
                    initializer(name, arr)
            else:
                if initializer is None:
                    raise RuntimeError(
                        f"init_params: {name} has no value and no initializer was given"
                    )
                initializer(name, arr)

        attrs = _attr_dict(self._symbol)
        for name, arr in sorted(self._arg_params.items()):  # type: ignore[union-attr]
            _impl(InitDesc(name, attrs.get(name, None)), arr, arg_params)
        for name, arr in sorted(self._aux_params.items()):  # type: ignore[union-attr]
            _impl(InitDesc(name, attrs.get(name, None)), arr, aux_params)
        self.params_initialized = True
        self._params_dirty = False
        self._exec_set_params(self._arg_params, self._aux_params, allow_extra=allow_extra)  # type: ignore[arg-type]

    def set_params(
        self,
        arg_params: dict[str, NDArray],
        aux_params: dict[str, NDArray],
        allow_missing: bool = False,
        force_init: bool = True,
        allow_extra: bool = False,
    ) -> None:
        """Assign parameter values, as mxnet: without ``allow_missing`` through
        :meth:`init_params` (every parameter must be given), else straight into the
        executor."""
        if not allow_missing:
            self.init_params(
                initializer=None,
                arg_params=arg_params,
                aux_params=aux_params,
                allow_missing=allow_missing,
                force_init=force_init,
                allow_extra=allow_extra,
            )
            return
        if self.params_initialized and not force_init:
            warnings.warn(
                "Parameters already initialized and force_init=False. set_params call ignored.",
                stacklevel=2,
            )
            return
        self._exec_set_params(arg_params, aux_params, allow_extra=allow_extra)
        self._params_dirty = True
        self.params_initialized = True

    def _exec_set_params(
        self, arg_params: dict[str, Any], aux_params: dict[str, Any] | None, allow_extra: bool
    ) -> None:
        ex = self._exec
        assert ex is not None
        for name, value in arg_params.items():
            if name not in ex.arg_dict:
                if allow_extra:
                    continue
                raise ValueError(f'Find name "{name}" that is not in the arguments')
            _copy_into(ex.arg_dict[name], value)
        for name, value in (aux_params or {}).items():
            if name not in ex.aux_dict:
                if allow_extra:
                    continue
                raise ValueError(f'Find name "{name}" that is not in the auxiliary states')
            _copy_into(ex.aux_dict[name], value)

    def _sync_params_from_devices(self) -> None:
        ex = self._exec
        assert ex is not None
        for name, block in self._arg_params.items():  # type: ignore[union-attr]
            _copy_into(block, ex.arg_dict[name])
        for name, block in self._aux_params.items():  # type: ignore[union-attr]
            _copy_into(block, ex.aux_dict[name])
        self._params_dirty = False

    # -- binding -----------------------------------------------------------------------------
    def _new_exec(self, share: Executor | None) -> Executor:
        """An executor for the current shapes; with ``share``, the parameters (and their
        gradient arrays) and the auxiliary states are ``share``'s arrays."""
        shapes = {d.name: tuple(d.shape) for d in self._data_shapes}  # type: ignore[union-attr]
        types = {d.name: d.dtype for d in self._data_shapes}  # type: ignore[union-attr]
        for d in self._label_shapes or []:
            shapes[d.name] = tuple(d.shape)
            types[d.name] = d.dtype
        ctx = self._context[0]
        fresh = self._symbol.simple_bind(ctx, grad_req=self._grad_reqs, type_dict=types, **shapes)
        if share is None:
            return fresh
        args = dict(fresh.arg_dict)
        grads = dict(fresh.grad_dict)
        for n in self._param_names:
            args[n] = share.arg_dict[n]
            grads[n] = share.grad_dict.get(n)
        grads = {k: v for k, v in grads.items() if v is not None}
        # the auxiliary states (BatchNorm's moving statistics) are share's arrays too
        auxs = {n: share.aux_dict[n] for n in self._aux_names}
        return self._symbol.bind(ctx, args, grads, self._grad_reqs, aux_states=auxs)

    def bind(
        self,
        data_shapes: Any,
        label_shapes: Any = None,
        for_training: bool = True,
        inputs_need_grad: bool = False,
        force_rebind: bool = False,
        shared_module: Module | None = None,
        grad_req: Any = "write",
    ) -> None:
        """Allocate the executor for ``data_shapes``/``label_shapes`` (DataDescs or
        ``(name, shape)`` pairs, as a DataIter's ``provide_data``/``provide_label``), as
        mxnet: with ``for_training`` the parameters get gradient arrays (``grad_req``, a string,
        or a list/dict per argument; ``fixed_param_names`` get none), with ``inputs_need_grad``
        the data too; ``shared_module`` (bound, parameters set) shares its parameter arrays and
        optimizer. Bound already, it logs a warning and does nothing unless ``force_rebind``."""
        if force_rebind:
            self._reset_bind()
        if self.binded:
            self.logger.warning("Already bound, ignoring bind()")
            return
        if not for_training and inputs_need_grad:
            raise ValueError("bind: inputs_need_grad needs for_training=True")
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self._grad_req = grad_req
        self._data_shapes, self._label_shapes = _parse_data_desc(
            self.data_names, self.label_names, data_shapes, label_shapes
        )
        arg_names = self._symbol.list_arguments()
        reqs: dict[str, str] = {}
        if not for_training:
            reqs = dict.fromkeys(arg_names, "null")
        elif isinstance(grad_req, str):
            data_names = [d.name for d in self._data_shapes]
            for k in arg_names:
                if k in self._param_names:
                    reqs[k] = "null" if k in self._fixed_param_names else grad_req
                elif k in data_names:
                    reqs[k] = grad_req if inputs_need_grad else "null"
                else:
                    reqs[k] = "null"
        elif isinstance(grad_req, (list, tuple)):
            if len(grad_req) != len(arg_names):
                raise ValueError("bind: grad_req as a list needs one entry per argument")
            reqs = dict(zip(arg_names, grad_req))
        elif isinstance(grad_req, dict):
            reqs = {}
            for k in arg_names:
                if k in self._param_names:
                    reqs[k] = "null" if k in self._fixed_param_names else "write"
                elif k in [d.name for d in self._data_shapes]:
                    reqs[k] = "write" if inputs_need_grad else "null"
                else:
                    reqs[k] = "null"
            reqs.update(grad_req)
        else:
            raise ValueError("bind: grad_req must be in str, list, tuple, or dict")
        self._grad_reqs = reqs
        if shared_module is not None:
            if not (
                isinstance(shared_module, Module)
                and shared_module.binded
                and shared_module.params_initialized
            ):
                raise _ModuleStateError(
                    "bind: shared_module must be a bound Module with initialized parameters"
                )
            self._exec = self._new_exec(shared_module._exec)
        else:
            self._exec = self._new_exec(None)
        if shared_module is not None:
            self.params_initialized = True
            self._arg_params = shared_module._arg_params
            self._aux_params = shared_module._aux_params
        elif self.params_initialized:
            self._exec_set_params(self._arg_params, self._aux_params, allow_extra=False)  # type: ignore[arg-type]
        else:
            if self._arg_params is not None or self._aux_params is not None:
                raise _ModuleStateError("bind: parameters exist but are not initialized")
            self._arg_params = {
                n: zeros(self._exec.arg_dict[n].shape, dtype=self._exec.arg_dict[n].dtype)
                for n in self._param_names
            }
            self._aux_params = {
                n: zeros(self._exec.aux_dict[n].shape, dtype=self._exec.aux_dict[n].dtype)
                for n in self._aux_names
            }
        if shared_module is not None and shared_module.optimizer_initialized:
            self.borrow_optimizer(shared_module)
        self.binded = True

    def reshape(self, data_shapes: Any, label_shapes: Any = None) -> None:
        """Bind for new input shapes, keeping the parameter arrays (as mxnet's)."""
        _require(self.binded, "reshape: bind first")
        self._data_shapes, self._label_shapes = _parse_data_desc(
            self.data_names, self.label_names, data_shapes, label_shapes
        )
        self._exec = self._new_exec(self._exec)

    # -- optimizer ---------------------------------------------------------------------------
    def init_optimizer(
        self,
        kvstore: Any = "local",
        optimizer: Any = "sgd",
        optimizer_params: Any = (("learning_rate", 0.01),),
        force_init: bool = False,
    ) -> None:
        """Create the optimizer and its updater, as mxnet with one device: a name is created
        by ``mx.optimizer.create`` with ``optimizer_params``, ``rescale_grad=1/batch_size``
        (unless given), ``param_idx2name`` (index = position among the parameters) and the
        symbol's ``lr_mult``/``wd_mult`` attributes; an Optimizer is used as is (a
        ``rescale_grad`` other than ``1/batch_size`` warns). ``kvstore`` follows mxnet 1.9.1's
        ``model._create_kvstore`` with one device: a name (``"local"``, ``"device"``) or None
        makes no kvstore, a :class:`~..kvstore.KVStore` object is used, a distributed name
        raises ``NotImplementedError`` (as ``mx.kv.create``), another type ``TypeError``. With a
        KVStore the update happens on the store (unless ``MXNET_UPDATE_ON_KVSTORE=0``):
        ``kv.set_optimizer`` then ``kv.broadcast`` of each parameter (by name); otherwise each
        parameter is ``kv.init``-ed and the gradients are reduced on it before the local
        updater runs. Called again without ``force_init`` it logs a warning and does nothing."""
        _require(self.binded and self.params_initialized, "init_optimizer: bind and init_params")
        if self.optimizer_initialized and not force_init:
            self.logger.warning("optimizer already initialized, ignoring...")
            return
        if self._params_dirty:
            self._sync_params_from_devices()
        kv, update_on_kvstore = _create_kvstore(kvstore)
        batch_size = self._data_shapes[0].shape[  # type: ignore[index]
            max(DataDesc.get_batch_axis(getattr(self._data_shapes[0], "layout", "NCHW")), 0)  # type: ignore[index]
        ]
        rescale_grad = 1.0 / batch_size
        idx2name = dict(enumerate(self._param_names))
        if isinstance(optimizer, str):
            optimizer_params = dict(optimizer_params)
            if "rescale_grad" not in optimizer_params:
                optimizer_params["rescale_grad"] = rescale_grad
            optimizer = opt.create(optimizer, param_idx2name=idx2name, **optimizer_params)
            # mxnet passes sym=self.symbol: the variables' __lr_mult__/__wd_mult__ attributes
            attrs = _attr_dict(self._symbol)
            arg_names = self._symbol.list_arguments()
            lr_mult = {
                n: float(attrs[n]["__lr_mult__"])
                for n in arg_names
                if n in attrs and "__lr_mult__" in attrs[n]
            }
            wd_mult = {
                n: float(attrs[n]["__wd_mult__"])
                for n in arg_names
                if n in attrs and "__wd_mult__" in attrs[n]
            }
            if lr_mult:
                optimizer.set_lr_mult(lr_mult)
            if wd_mult:
                optimizer.set_wd_mult(wd_mult)
        else:
            if not isinstance(optimizer, opt.Optimizer):
                raise TypeError(
                    "init_optimizer: optimizer must be a name or an mx.optimizer.Optimizer, got "
                    f"{type(optimizer).__name__}"
                )
            if optimizer.rescale_grad != rescale_grad:
                warnings.warn(
                    "Optimizer created manually outside Module but rescale_grad is not "
                    f"normalized to 1.0/batch_size/num_workers ({optimizer.rescale_grad} vs. "
                    f"{rescale_grad}). Is this intended?",
                    stacklevel=2,
                )
            if not optimizer.idx2name:
                optimizer.idx2name = idx2name.copy()
        self._optimizer = optimizer
        self._kvstore = kv
        self._update_on_kvstore = update_on_kvstore
        self._updater = None
        if kv is not None:
            if update_on_kvstore:
                kv.set_optimizer(optimizer)
            # mxnet's model._initialize_kvstore: the store gets the parameters' values
            ex = self._exec
            assert ex is not None and self._arg_params is not None
            for name in self._param_names:
                if update_on_kvstore:
                    kv.broadcast(name, self._arg_params[name], out=[ex.arg_dict[name]])
                else:
                    kv.init(name, self._arg_params[name])
        if not update_on_kvstore:
            self._updater = opt.get_updater(optimizer)
        self.optimizer_initialized = True
        if self._preload_opt_states is not None:
            self.load_optimizer_states(self._preload_opt_states)
            self._preload_opt_states = None

    def borrow_optimizer(self, shared_module: Module) -> None:
        """Use ``shared_module``'s optimizer and updater."""
        _require(shared_module.optimizer_initialized, "borrow_optimizer: no optimizer to borrow")
        self._optimizer = shared_module._optimizer
        self._kvstore = shared_module._kvstore
        self._update_on_kvstore = shared_module._update_on_kvstore
        self._updater = shared_module._updater
        self.optimizer_initialized = True

    # -- computation -------------------------------------------------------------------------
    def forward(self, data_batch: Any, is_train: bool | None = None) -> None:
        """Copy the batch's data (and labels, when bound with labels and the batch has them)
        into the executor and run it forward (``is_train`` None: ``for_training``); a batch of
        other shapes rebinds first (:meth:`reshape`), as mxnet."""
        _require(self.binded and self.params_initialized, "forward: bind and init_params first")
        if isinstance(data_batch, list):
            raise NotImplementedError(f"forward: a list of DataBatches is not supported ({_DOCS})")
        if not isinstance(data_batch, DataBatch) and not hasattr(data_batch, "data"):
            raise TypeError(
                f"forward: data_batch must be an mx.io.DataBatch, got {type(data_batch).__name__}"
            )
        curr = tuple(tuple(i.shape) for i in self._data_shapes)  # type: ignore[union-attr]
        new = tuple(tuple(i.shape) for i in data_batch.data)
        if curr != new:
            if getattr(data_batch, "provide_data", None):
                new_dshape = data_batch.provide_data
            else:
                new_dshape = [
                    DataDesc(i.name, shape, i.dtype, i.layout)
                    for i, shape in zip(self._data_shapes, new)  # type: ignore[arg-type]
                ]
            if getattr(data_batch, "provide_label", None):
                new_lshape = data_batch.provide_label
            elif getattr(data_batch, "label", None) and self._label_shapes:
                new_lshape = [
                    DataDesc(i.name, tuple(j.shape), i.dtype, i.layout)
                    for i, j in zip(self._label_shapes, data_batch.label)
                ]
            else:
                new_lshape = None
            self.reshape(new_dshape, new_lshape)
        ex = self._exec
        assert ex is not None
        if len(data_batch.data) != len(self._data_shapes):  # type: ignore[arg-type]
            raise ValueError(
                f"forward: the batch has {len(data_batch.data)} data arrays, the module "
                f"{len(self._data_shapes)} ({[d.name for d in self._data_shapes]})"  # type: ignore[union-attr,arg-type]
            )
        for desc, src in zip(self._data_shapes, data_batch.data):  # type: ignore[arg-type]
            _copy_into(ex.arg_dict[desc.name], src)
        if self._label_shapes and getattr(data_batch, "label", None):
            for desc, src in zip(self._label_shapes, data_batch.label):
                _copy_into(ex.arg_dict[desc.name], src)
        ex.forward(is_train=self.for_training if is_train is None else is_train)

    def backward(self, out_grads: Any = None) -> None:
        """Run the executor backward (``out_grads``: head gradients of outputs that are not
        loss layers)."""
        _require(self.binded and self.params_initialized, "backward: bind and init_params first")
        _require(self.for_training, "backward: re-bind with for_training=True to run backward")
        self._exec.backward(out_grads=out_grads)  # type: ignore[union-attr]

    def update(self) -> None:
        """Apply the optimizer to every parameter that has a gradient, as mxnet's
        ``model._update_params``: one updater call with the lists of indices, gradients and
        weights (with a kvstore that does not update, each gradient is first
        ``kv.pushpull``-ed by name, priority ``-index``). When updating on the kvstore
        (``model._update_params_on_kvstore``) each gradient is ``kv.pushpull``-ed by name into
        the weight instead."""
        _require(
            self.binded and self.params_initialized and self.optimizer_initialized,
            "update: bind, init_params and init_optimizer first",
        )
        self._params_dirty = True
        ex = self._exec
        assert ex is not None
        indices, grads, weights = [], [], []
        for i, name in enumerate(self._param_names):
            g = ex.grad_dict.get(name)
            if g is None:
                continue
            if self._update_on_kvstore:
                self._kvstore.pushpull(name, [g], out=[ex.arg_dict[name]], priority=-i)
                continue
            if self._kvstore is not None:
                self._kvstore.pushpull(name, [g], priority=-i)
            indices.append(i)
            grads.append(g)
            weights.append(ex.arg_dict[name])
        if indices:
            self._updater(indices, grads, weights)

    def get_outputs(self, merge_multi_context: bool = True) -> list[NDArray]:
        """The executor's outputs (the arrays every forward writes into); with
        ``merge_multi_context=False`` a list per output of the arrays of each device (one)."""
        _require(self.binded and self.params_initialized, "get_outputs: bind and init_params")
        outs = list(self._exec.outputs)  # type: ignore[union-attr]
        return outs if merge_multi_context else [[o] for o in outs]  # type: ignore[misc]

    def get_input_grads(self, merge_multi_context: bool = True) -> list[Any]:
        """The gradients of the data inputs (bound with ``inputs_need_grad=True``)."""
        _require(
            self.binded and self.params_initialized and self.inputs_need_grad,
            "get_input_grads: bind with inputs_need_grad=True",
        )
        grads: list[Any] = [self._exec.grad_dict[d.name] for d in self._data_shapes]  # type: ignore[union-attr]
        return grads if merge_multi_context else [[g] for g in grads]

    def update_metric(self, eval_metric: Any, labels: Any, pre_sliced: bool = False) -> None:
        """``eval_metric.update_dict`` with the labels by label name and the outputs by output
        name, as mxnet."""
        if pre_sliced:
            raise NotImplementedError(f"update_metric: pre_sliced is not supported ({_DOCS})")
        names = [d.name for d in self._label_shapes] if self._label_shapes else []
        labels_ = OrderedDict(zip(names, labels or []))
        preds = OrderedDict(zip(self._output_names, self._exec.outputs))  # type: ignore[union-attr]
        eval_metric.update_dict(labels_, preds)
