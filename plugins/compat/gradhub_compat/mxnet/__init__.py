"""The mxnet compatibility layer: ``import gradhub_compat.mxnet as mx``.

A small symbolic front end on the native engine: symbols (``mx.sym``) record a DAG; ``bind``
attaches NDArrays (``mx.nd``) and returns an :class:`Executor` whose ``forward`` evaluates the DAG
with gradhub functions and whose ``backward`` runs the native engine, writing or adding the
gradients into the bound gradient arrays per ``grad_req``. See ``docs/migration-mxnet.md``.

Supported: ``mx.sym.Variable``, ``FullyConnected``, ``Activation``, ``SoftmaxOutput``,
``MakeLoss``, ``BlockGrad``, ``Group``, symbol arithmetic, ``broadcast_add`` (``sub``, ``mul``,
``div``, ``power``, ``maximum``, ``minimum``), ``list_arguments``,
``list_outputs``, ``infer_shape``, ``bind``, ``simple_bind``; ``mx.nd.array/ones/zeros/full``;
``mx.cpu()``, ``mx.gpu(i)``; ``mx.base.MXNetError``; ``mx.sym.maximum``, ``minimum``,
``dot``, ``softmax``, the unary ``abs``, ``cos``, ``exp``, ``log``, ``relu``, ``sigmoid``,
``sin``, ``sqrt``, ``square``, ``tanh`` and ``sum``, ``mean``; ``Symbol.infer_type``,
``get_internals``, ``get_children``;
``mx.random.seed``, ``mx.nd.random.uniform``/``normal``; ``Symbol.infer_shape_partial`` and
unknown (0) dimensions, symbol composition (``sym(**symbols)``), ``Symbol.tojson``/``save``,
``mx.sym.load_json``/``load``, ``Executor.reshape``; ``mx.autograd`` (``record``, ``pause``,
``attach_grad``, ``mark_variables``, ``backward``, ``grad``) over NDArrays and the ``mx.nd``
functions ``exp``, ``log``, ``sin``, ``cos``, ``tanh``, ``sigmoid``, ``relu``, ``sqrt``,
``square``, ``abs``, ``sum``, ``mean``, ``dot``, ``FullyConnected``, ``Dropout``, ``split``;
user-defined ``mx.autograd.Function``; ``mx.test_utils`` (``assert_almost_equal`` and mxnet's
other comparison helpers); ``mx.MXNetError``. Gluon (``mx.gluon``: blocks, parameters, the
layers of ``gluon.nn``, ``gluon.loss``, ``gluon.Trainer``), ``mx.init``, ``mx.optimizer``,
``mx.lr_scheduler``, the Module API (``mx.mod.Module`` with ``mx.io.NDArrayIter``,
``mx.metric`` and ``mx.callback``), mxnet's parameter files (``mx.nd.save``/``load``,
``mx.model`` checkpoints) and the ``mx.nd`` tensor functions Gluon programs use.

Example (the first example of mxnet's ``Executor.backward`` documentation)::

    >>> import gradhub_compat.mxnet as mx
    >>> net = mx.sym.Variable("data")
    >>> net = mx.sym.FullyConnected(net, name="fc", num_hidden=6)
    >>> net = mx.sym.Activation(net, name="relu", act_type="relu")
    >>> net = mx.sym.SoftmaxOutput(net, name="softmax")
    >>> args = {"data": mx.nd.ones((1, 4)), "fc_weight": mx.nd.ones((6, 4)),
    ...         "fc_bias": mx.nd.array((1, 4, 4, 4, 5, 6)), "softmax_label": mx.nd.ones((1))}
    >>> args_grad = {"fc_weight": mx.nd.zeros((6, 4)), "fc_bias": mx.nd.zeros((6))}
    >>> texec = net.bind(ctx=mx.cpu(), args=args, args_grad=args_grad)
    >>> out = texec.forward(is_train=True)[0].copy()
    >>> out.asnumpy().round(4)
    array([[0.0038, 0.076 , 0.076 , 0.076 , 0.2066, 0.5616]], dtype=float32)
    >>> texec.backward()
    >>> texec.grad_arrays[1].asnumpy()[:2].round(4)
    array([[ 0.0038,  0.0038,  0.0038,  0.0038],
           [-0.924 , -0.924 , -0.924 , -0.924 ]], dtype=float32)
"""

from __future__ import annotations

from . import (
    autograd,
    base,
    callback,
    gluon,
    initializer,
    io,
    kvstore,
    lr_scheduler,
    metric,
    model,
    module,
    ndarray,
    optimizer,
    random,
    symbol,
    test_utils,
)
from .base import MXNetError
from .context import Context, cpu, cpu_pinned, current_context, gpu, num_gpus
from .executor import Executor
from .ndarray import NDArray

init = initializer
kv = kvstore
mod = module
nd = ndarray
sym = symbol

__all__ = [
    "Context",
    "Executor",
    "MXNetError",
    "NDArray",
    "autograd",
    "base",
    "callback",
    "cpu",
    "cpu_pinned",
    "current_context",
    "gluon",
    "gpu",
    "init",
    "initializer",
    "io",
    "kv",
    "kvstore",
    "lr_scheduler",
    "metric",
    "mod",
    "model",
    "module",
    "nd",
    "ndarray",
    "num_gpus",
    "optimizer",
    "random",
    "sym",
    "symbol",
    "test_utils",
]
