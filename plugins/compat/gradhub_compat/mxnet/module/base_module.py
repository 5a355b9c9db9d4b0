"""mxnet 1.9.1's ``BaseModule``: the training loop (:meth:`BaseModule.fit`), :meth:`score`,
:meth:`predict` and :meth:`iter_predict` over the abstract ``bind``/``forward``/``backward``/
``update`` that :class:`~.module.Module` implements.

Example::

    >>> import gradhub_compat.mxnet as mx
    >>> issubclass(mx.mod.Module, mx.mod.BaseModule)
    True
"""

from __future__ import annotations

import logging
import time
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np

from .. import metric
from ..callback import BatchEndParam
from ..context import cpu
from ..initializer import Uniform
from ..io import DataBatch, DataDesc, DataIter
from ..ndarray import NDArray, array

__all__ = ["BaseModule"]

_DOCS = "docs/migration-mxnet.md"


def _as_list(obj: Any) -> list[Any]:
    if isinstance(obj, (list, tuple)):
        return list(obj)
    return [obj]


def _check_input_names(symbol: Any, names: list[str], typename: str, throw: bool) -> None:
    """As mxnet: a name that is not an argument of ``symbol`` raises ``ValueError`` (``throw``)
    or warns, listing the arguments that are not weights, biases, gammas or betas."""
    args = symbol.list_arguments()
    for name in names:
        if name in args:
            continue
        candidates = [
            arg for arg in args if not arg.endswith(("_weight", "_bias", "_gamma", "_beta"))
        ]
        msg = (
            f"You created Module with Module(..., {typename}_names={names}) but input with name "
            f"'{name}' is not found in symbol.list_arguments(). Did you mean one of:\n\t"
            + "\n\t".join(candidates)
        )
        if throw:
            raise ValueError(msg)
        warnings.warn(msg, stacklevel=3)


def _check_names_match(data_names: list[str], data_shapes: list[Any], name: str, throw: bool):
    actual = [x[0] for x in data_shapes]
    if sorted(data_names) != sorted(actual):
        msg = (
            f"Data provided by {name}_shapes don't match names specified by {name}_names "
            f"({data_shapes} vs. {data_names})"
        )
        if throw:
            raise ValueError(msg)
        warnings.warn(msg, stacklevel=3)


def _parse_data_desc(
    data_names: list[str], label_names: list[str], data_shapes: Any, label_shapes: Any
) -> tuple[list[DataDesc], list[DataDesc] | None]:
    """``data_shapes``/``label_shapes`` as DataDescs, their names checked as mxnet does."""
    data_shapes = [x if isinstance(x, DataDesc) else DataDesc(*x) for x in data_shapes]
    _check_names_match(data_names, data_shapes, "data", True)
    if label_shapes is not None:
        label_shapes = [x if isinstance(x, DataDesc) else DataDesc(*x) for x in label_shapes]
        _check_names_match(label_names, label_shapes, "label", False)
    else:
        _check_names_match(label_names, [], "label", False)
    return data_shapes, label_shapes


def _require(cond: bool, what: str) -> None:
    if not cond:
        raise _ModuleStateError(what)


class _ModuleStateError(RuntimeError, AssertionError):
    """A module used before ``bind``/``init_params``/``init_optimizer`` (mxnet asserts)."""


class BaseModule:
    """The base class of modules, as mxnet's ``mx.mod.BaseModule``: :meth:`fit` trains,
    :meth:`score` evaluates a metric, :meth:`predict`/:meth:`iter_predict` run the network
    over an iterator, on top of the methods a subclass defines (``bind``, ``init_params``,
    ``init_optimizer``, ``forward``, ``backward``, ``update``, ``get_outputs``,
    ``update_metric``...). See :class:`~.module.Module` for an example."""

    def __init__(self, logger: Any = logging) -> None:
        self.logger = logger
        self.binded = False
        self.for_training = False
        self.inputs_need_grad = False
        self.params_initialized = False
        self.optimizer_initialized = False
        self._symbol: Any = None
        self._total_exec_bytes = 0

    # -- high level --------------------------------------------------------------------------
    def forward_backward(self, data_batch: DataBatch) -> None:
        """``forward(data_batch, is_train=True)`` then ``backward()``."""
        self.forward(data_batch, is_train=True)
        self.backward()

    def score(
        self,
        eval_data: DataIter,
        eval_metric: Any,
        num_batch: int | None = None,
        batch_end_callback: Any = None,
        score_end_callback: Any = None,
        reset: bool = True,
        epoch: int = 0,
        sparse_row_id_fn: Any = None,
    ) -> list[tuple[str, Any]]:
        """Run ``eval_data`` (reset first with ``reset``; at most ``num_batch`` batches)
        forward in prediction mode and return ``eval_metric``'s ``get_name_value()``, as
        mxnet: the metric (anything :func:`~..metric.create` takes) is reset first and sees the
        padded examples of a last batch too."""
        _require(self.binded and self.params_initialized, "score: bind and init_params first")
        if reset:
            eval_data.reset()
        if not isinstance(eval_metric, metric.EvalMetric):
            eval_metric = metric.create(eval_metric)
        eval_metric.reset()
        actual_num_batch = 0
        for nbatch, eval_batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.prepare(eval_batch, sparse_row_id_fn=sparse_row_id_fn)
            self.forward(eval_batch, is_train=False)
            self.update_metric(eval_metric, eval_batch.label)
            if batch_end_callback is not None:
                params = BatchEndParam(
                    epoch=epoch, nbatch=nbatch, eval_metric=eval_metric, locals=locals()
                )
                for callback in _as_list(batch_end_callback):
                    callback(params)
            actual_num_batch += 1
        if score_end_callback:
            params = BatchEndParam(
                epoch=epoch, nbatch=actual_num_batch, eval_metric=eval_metric, locals=locals()
            )
            for callback in _as_list(score_end_callback):
                callback(params)
        return eval_metric.get_name_value()

    def iter_predict(
        self,
        eval_data: DataIter,
        num_batch: int | None = None,
        reset: bool = True,
        sparse_row_id_fn: Any = None,
    ) -> Iterator[tuple[list[NDArray], int, DataBatch]]:
        """Yield ``(outputs, nbatch, batch)`` for each batch of ``eval_data``: the outputs
        without the batch's padding (views of the module's outputs, overwritten by the next
        batch), as mxnet."""
        _require(self.binded and self.params_initialized, "iter_predict: bind and init_params")
        if reset:
            eval_data.reset()
        for nbatch, eval_batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.prepare(eval_batch, sparse_row_id_fn=sparse_row_id_fn)
            self.forward(eval_batch, is_train=False)
            pad = eval_batch.pad or 0
            outputs = [out[0 : out.shape[0] - pad] for out in self.get_outputs()]
            yield (outputs, nbatch, eval_batch)

    def predict(
        self,
        eval_data: Any,
        num_batch: int | None = None,
        merge_batches: bool = True,
        reset: bool = True,
        always_output_list: bool = False,
        sparse_row_id_fn: Any = None,
    ) -> Any:
        """The outputs of the network over ``eval_data`` (a DataIter; an NDArray or numpy
        array is one batch, whose first output is returned), as mxnet: each batch's outputs
        without its padding, concatenated over the batches (``merge_batches``; one NDArray when
        there is one output and not ``always_output_list``), else a list per batch."""
        _require(self.binded and self.params_initialized, "predict: bind and init_params first")
        if isinstance(eval_data, (NDArray, np.ndarray)):
            if isinstance(eval_data, np.ndarray):
                eval_data = array(eval_data)
            self.forward(DataBatch([eval_data]))
            return self.get_outputs()[0]
        if not isinstance(eval_data, DataIter):
            raise ValueError("predict: eval_data must be of type NDArray or DataIter")
        if reset:
            eval_data.reset()
        output_list: list[list[NDArray]] = []
        for nbatch, eval_batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.prepare(eval_batch, sparse_row_id_fn=sparse_row_id_fn)
            self.forward(eval_batch, is_train=False)
            pad = eval_batch.pad or 0
            output_list.append([out[0 : out.shape[0] - pad].copy() for out in self.get_outputs()])
        if len(output_list) == 0:
            return output_list
        if merge_batches:
            num_outputs = len(output_list[0])
            if any(len(out) != num_outputs for out in output_list):
                raise ValueError(
                    "predict: Cannot merge batches, as num of outputs is not the same in "
                    "mini-batches"
                )
            merged = [
                array(
                    np.concatenate([out[i].asnumpy() for out in output_list], axis=0),
                    output_list[0][i].context,
                    dtype=output_list[0][i].dtype,
                )
                for i in range(num_outputs)
            ]
            if num_outputs == 1 and not always_output_list:
                return merged[0]
            return merged
        return output_list

    def fit(
        self,
        train_data: DataIter,
        eval_data: DataIter | None = None,
        eval_metric: Any = "acc",
        epoch_end_callback: Any = None,
        batch_end_callback: Any = None,
        kvstore: Any = "local",
        optimizer: Any = "sgd",
        optimizer_params: Any = (("learning_rate", 0.01),),
        eval_end_callback: Any = None,
        eval_batch_end_callback: Any = None,
        initializer: Any = Uniform(0.01),  # noqa: B008 (mxnet's default)
        arg_params: dict[str, NDArray] | None = None,
        aux_params: dict[str, NDArray] | None = None,
        allow_missing: bool = False,
        force_rebind: bool = False,
        force_init: bool = False,
        begin_epoch: int = 0,
        num_epoch: int | None = None,
        validation_metric: Any = None,
        monitor: Any = None,
        sparse_row_id_fn: Any = None,
    ) -> None:
        """Train on ``train_data`` for epochs ``begin_epoch`` to ``num_epoch - 1``, as mxnet:
        ``bind`` to its ``provide_data``/``provide_label``, ``init_params`` (``initializer``,
        ``arg_params``...), ``init_optimizer``, then per batch ``forward_backward``, ``update``
        and ``update_metric``; after each epoch it logs the training metric
        (``Epoch[E] Train-NAME=V``) and the time, calls ``epoch_end_callback(epoch, symbol,
        arg_params, aux_params)``, scores ``eval_data`` with ``validation_metric`` (default
        ``eval_metric``) and resets ``train_data``."""
        if num_epoch is None:
            raise ValueError("fit: please specify number of epochs (num_epoch)")
        if monitor is not None:
            raise NotImplementedError(f"fit: monitor (mx.mon.Monitor) is not supported ({_DOCS})")
        self.bind(
            data_shapes=train_data.provide_data,  # type: ignore[attr-defined]
            label_shapes=train_data.provide_label,  # type: ignore[attr-defined]
            for_training=True,
            force_rebind=force_rebind,
        )
        self.init_params(
            initializer=initializer,
            arg_params=arg_params,
            aux_params=aux_params,
            allow_missing=allow_missing,
            force_init=force_init,
        )
        self.init_optimizer(kvstore=kvstore, optimizer=optimizer, optimizer_params=optimizer_params)
        if validation_metric is None:
            validation_metric = eval_metric
        if not isinstance(eval_metric, metric.EvalMetric):
            eval_metric = metric.create(eval_metric)
        for epoch in range(begin_epoch, num_epoch):
            tic = time.time()
            eval_metric.reset()
            nbatch = 0
            data_iter = iter(train_data)
            end_of_batch = False
            next_data_batch = next(data_iter)
            eval_name_vals: list[tuple[str, Any]] = []
            while not end_of_batch:
                data_batch = next_data_batch
                self.forward_backward(data_batch)
                self.update()
                self.update_metric(eval_metric, data_batch.label)
                try:
                    next_data_batch = next(data_iter)
                    self.prepare(next_data_batch, sparse_row_id_fn=sparse_row_id_fn)
                except StopIteration:
                    end_of_batch = True
                if end_of_batch:
                    eval_name_vals = eval_metric.get_global_name_value()
                if batch_end_callback is not None:
                    params = BatchEndParam(
                        epoch=epoch, nbatch=nbatch, eval_metric=eval_metric, locals=locals()
                    )
                    for callback in _as_list(batch_end_callback):
                        callback(params)
                nbatch += 1
            for name, val in eval_name_vals:
                self.logger.info("Epoch[%d] Train-%s=%f", epoch, name, val)
            toc = time.time()
            self.logger.info("Epoch[%d] Time cost=%.3f", epoch, (toc - tic))
            arg_params_, aux_params_ = self.get_params()
            self.set_params(arg_params_, aux_params_)
            if epoch_end_callback is not None:
                for callback in _as_list(epoch_end_callback):
                    callback(epoch, self.symbol, arg_params_, aux_params_)
            if eval_data is not None:
                res = self.score(
                    eval_data,
                    validation_metric,
                    score_end_callback=eval_end_callback,
                    batch_end_callback=eval_batch_end_callback,
                    epoch=epoch,
                )
                for name, val in res:
                    self.logger.info("Epoch[%d] Validation-%s=%f", epoch, name, val)
            train_data.reset()

    # -- parameters ------------------------------------------------------------------------------
    def set_params(
        self,
        arg_params: dict[str, NDArray],
        aux_params: dict[str, NDArray],
        allow_missing: bool = False,
        force_init: bool = True,
        allow_extra: bool = False,
    ) -> None:
        """Assign parameter values (``init_params`` without an initializer)."""
        self.init_params(
            initializer=None,
            arg_params=arg_params,
            aux_params=aux_params,
            allow_missing=allow_missing,
            force_init=force_init,
            allow_extra=allow_extra,
        )

    def save_params(self, fname: str) -> None:
        """Write the parameters to ``fname`` (``arg:NAME``/``aux:NAME``, mxnet's NDArray file
        format, ``mx.nd.save``)."""
        from .. import ndarray_io

        arg_params, aux_params = self.get_params()
        save_dict = {f"arg:{k}": v.as_in_context(cpu()) for k, v in arg_params.items()}
        save_dict.update({f"aux:{k}": v.as_in_context(cpu()) for k, v in aux_params.items()})
        ndarray_io.save(fname, save_dict)

    def load_params(self, fname: str) -> None:
        """Read parameters written by :meth:`save_params` (or mxnet) and assign them; a name
        other than ``arg:NAME``/``aux:NAME`` raises ``ValueError``."""
        from .. import ndarray_io

        save_dict = ndarray_io.load(fname)
        if not isinstance(save_dict, dict):
            raise ValueError(f"load_params: Invalid param file {fname} (arrays without names)")
        arg_params: dict[str, NDArray] = {}
        aux_params: dict[str, NDArray] = {}
        for k, value in save_dict.items():
            arg_type, _, name = k.partition(":")
            if arg_type == "arg":
                arg_params[name] = value
            elif arg_type == "aux":
                aux_params[name] = value
            else:
                raise ValueError(f"load_params: Invalid param file {fname}")
        self.set_params(arg_params, aux_params)

    def get_states(self, merge_multi_context: bool = True) -> list[Any]:
        """The states of a stateful network (none here)."""
        _require(self.binded and self.params_initialized, "get_states: bind and init_params")
        return []

    def set_states(self, states: Any = None, value: Any = None) -> None:
        """Set states of a stateful network (none here)."""
        _require(self.binded and self.params_initialized, "set_states: bind and init_params")
        if states or value:
            raise NotImplementedError(f"set_states: state_names are not supported ({_DOCS})")

    def install_monitor(self, mon: Any) -> None:
        """Not supported (``mx.mon.Monitor``)."""
        raise NotImplementedError(f"install_monitor: mx.mon.Monitor is not supported ({_DOCS})")

    def prepare(self, data_batch: Any, sparse_row_id_fn: Any = None) -> None:
        """Prepare for a batch (nothing to do without a kvstore; ``sparse_row_id_fn`` warns, as
        mxnet)."""
        if sparse_row_id_fn is not None:
            warnings.warn(
                UserWarning("sparse_row_id_fn is not invoked for BaseModule."), stacklevel=2
            )

    # -- abstract --------------------------------------------------------------------------------
    @property
    def symbol(self) -> Any:
        """The module's symbol."""
        return self._symbol

    def _abstract(self, what: str) -> Any:
        raise NotImplementedError(f"{type(self).__name__}.{what} is not defined")

    @property
    def data_names(self) -> list[str]:
        return self._abstract("data_names")

    @property
    def output_names(self) -> list[str]:
        return self._abstract("output_names")

    @property
    def data_shapes(self) -> Any:
        return self._abstract("data_shapes")

    @property
    def label_shapes(self) -> Any:
        return self._abstract("label_shapes")

    @property
    def output_shapes(self) -> Any:
        return self._abstract("output_shapes")

    def get_params(self) -> tuple[dict[str, NDArray], dict[str, NDArray]]:
        return self._abstract("get_params")

    def init_params(self, *args: Any, **kwargs: Any) -> None:
        self._abstract("init_params")

    def forward(self, data_batch: Any, is_train: bool | None = None) -> None:
        self._abstract("forward")

    def backward(self, out_grads: Any = None) -> None:
        self._abstract("backward")

    def get_outputs(self, merge_multi_context: bool = True) -> list[NDArray]:
        return self._abstract("get_outputs")

    def get_input_grads(self, merge_multi_context: bool = True) -> list[NDArray]:
        return self._abstract("get_input_grads")

    def update(self) -> None:
        self._abstract("update")

    def update_metric(self, eval_metric: Any, labels: Any, pre_sliced: bool = False) -> None:
        self._abstract("update_metric")

    def bind(self, *args: Any, **kwargs: Any) -> None:
        self._abstract("bind")

    def init_optimizer(self, *args: Any, **kwargs: Any) -> None:
        self._abstract("init_optimizer")
