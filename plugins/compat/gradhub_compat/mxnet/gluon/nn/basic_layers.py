"""Gluon's basic layers (``Sequential``, ``HybridSequential``, ``Dense``, ``Dropout``,
``BatchNorm``, ``Embedding``, ``Flatten``, ``Lambda``, ``HybridLambda``), as mxnet 1.9.1:
the same parameter names (``dense0_weight``, ``batchnorm0_running_mean``), shapes (a Dense
weight is ``(units, in_units)``), initializers and deferred initialization (an unknown
``in_units``/``in_channels`` is fixed by the first forward pass).

Example::

    >>> import gradhub_compat.mxnet as mx
    >>> from gradhub_compat.mxnet.gluon import nn
    >>> net = nn.HybridSequential(prefix="mlp_")
    >>> with net.name_scope():
    ...     net.add(nn.Dense(4, activation="relu"), nn.Dense(2))
    >>> net.initialize()
    >>> net(mx.nd.ones((3, 5))).shape
    (3, 2)
    >>> [(k, v.shape) for k, v in net.collect_params().items()]  # doctest: +NORMALIZE_WHITESPACE
    [('mlp_dense0_weight', (4, 5)), ('mlp_dense0_bias', (4,)), ('mlp_dense1_weight', (2, 4)),
     ('mlp_dense1_bias', (2,))]
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from ... import ndarray as nd
from ..block import Block, HybridBlock, _indent
from ..parameter import Parameter
from .activations import Activation

__all__ = [
    "BatchNorm",
    "Dense",
    "Dropout",
    "Embedding",
    "Flatten",
    "HybridLambda",
    "HybridSequential",
    "Lambda",
    "Sequential",
]


def _children_item(seq: Any, key: Any) -> Any:
    """``seq[key]``: one child, or for a slice a new container of the same type with those."""
    layers = list(seq._children.values())[key]
    if isinstance(layers, list):
        net = type(seq)(prefix=seq._prefix)
        with net.name_scope():
            net.add(*layers)
        return net
    return layers


def _run_children(seq: Any, x: Any) -> Any:
    """``x`` through the children of ``seq`` in order."""
    for block in seq._children.values():
        x = block(x)
    return x


def _children_repr(block: Block) -> str:
    modstr = "\n".join(
        f"  ({key}): {_indent(repr(child), 2)}" for key, child in block._children.items()
    )
    return f"{block.__class__.__name__}(\n{modstr}\n)"


class Sequential(Block):
    """Blocks run one after the other (``add``, indexing, slicing gives a new Sequential of
    the same prefix, ``len``).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> from gradhub_compat.mxnet.gluon import nn
        >>> net = nn.Sequential()
        >>> net.add(nn.Dense(3), nn.Dense(1))
        >>> len(net), type(net[0]).__name__
        (2, 'Dense')
    """

    def add(self, *blocks: Block) -> None:
        """Append ``blocks`` as children."""
        for block in blocks:
            self.register_child(block)

    def forward(self, x: Any) -> Any:
        return _run_children(self, x)

    def __repr__(self) -> str:
        return _children_repr(self)

    def __getitem__(self, key: Any) -> Any:
        return _children_item(self, key)

    def __len__(self) -> int:
        return len(self._children)

    def hybridize(self, active: bool = True, **kwargs: Any) -> None:
        """Pass ``hybridize`` to the children (warns, as mxnet, when all are HybridBlocks)."""
        if self._children and all(isinstance(c, HybridBlock) for c in self._children.values()):
            warnings.warn(
                f"All children of this Sequential layer '{self.prefix}' are HybridBlocks. "
                "Consider using HybridSequential for the best performance.",
                stacklevel=2,
            )
        super().hybridize(active, **kwargs)


class HybridSequential(HybridBlock):
    """HybridBlocks run one after the other (as :class:`Sequential`; children must be
    HybridBlocks)."""

    def add(self, *blocks: HybridBlock) -> None:
        """Append ``blocks`` as children."""
        for block in blocks:
            self.register_child(block)

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return _run_children(self, x)

    def __repr__(self) -> str:
        return _children_repr(self)

    def __getitem__(self, key: Any) -> Any:
        return _children_item(self, key)

    def __len__(self) -> int:
        return len(self._children)


class Dense(HybridBlock):
    """A fully connected layer: ``y = activation(x W^T + b)``, ``weight`` of shape
    ``(units, in_units)`` (``in_units=0``: fixed by the first input), ``bias`` ``(units,)``
    (initialized by ``bias_initializer``, zeros); ``flatten`` flattens ``x`` to
    ``(batch, -1)`` first, otherwise the last axis is transformed.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> from gradhub_compat.mxnet.gluon import nn
        >>> fc = nn.Dense(2, in_units=3)
        >>> fc.weight.shape, fc.bias.shape
        ((2, 3), (2,))
    """

    def __init__(
        self,
        units: int,
        activation: str | None = None,
        use_bias: bool = True,
        flatten: bool = True,
        dtype: Any = "float32",
        weight_initializer: Any = None,
        bias_initializer: Any = "zeros",
        in_units: int = 0,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self._flatten = flatten
        with self.name_scope():
            self._units = units
            self._in_units = in_units
            self.weight = self.params.get(
                "weight",
                shape=(units, in_units),
                init=weight_initializer,
                dtype=dtype,
                allow_deferred_init=True,
            )
            if use_bias:
                self.bias: Parameter | None = self.params.get(
                    "bias",
                    shape=(units,),
                    init=bias_initializer,
                    dtype=dtype,
                    allow_deferred_init=True,
                )
            else:
                self.bias = None
            self.act = Activation(activation, prefix=activation + "_") if activation else None

    def infer_shape(self, x: Any, *args: Any) -> None:
        """``in_units`` from ``x``: the product of its axes after the first (``flatten``), or
        its last axis."""
        n_in = int(math.prod(x.shape[1:])) if self._flatten else int(x.shape[-1])
        self.weight.shape = (self._units, n_in)

    def hybrid_forward(self, F: Any, x: Any, weight: Any, bias: Any = None) -> Any:
        out = F.FullyConnected(
            x,
            weight,
            bias,
            no_bias=bias is None,
            num_hidden=self._units,
            flatten=self._flatten,
            name="fwd",
        )
        if self.act is not None:
            out = self.act(out)
        return out

    def __repr__(self) -> str:
        shape = self.weight.shape or (self._units, 0)
        act = self.act if self.act else "linear"
        return f"{self.__class__.__name__}({shape[1] if shape[1] else None} -> {shape[0]}, {act})"


class Dropout(HybridBlock):
    """In training (``mx.autograd.record()``), zeroes each element with probability ``rate``
    and scales the others by ``1 / (1 - rate)`` (``axes``: one draw shared along them); the
    identity otherwise. The mask comes from gradhub's generator (``mx.random.seed``)."""

    def __init__(self, rate: float, axes: Any = (), **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._rate = rate
        self._axes = axes

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        if self._rate > 0:
            return F.Dropout(x, p=self._rate, axes=self._axes, name="fwd", cudnn_off=False)
        return x.copy()

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(p = {self._rate}, axes={self._axes})"


class BatchNorm(HybridBlock):
    """Batch normalization over every axis but ``axis`` (``F.BatchNorm``), with the
    parameters ``gamma`` (ones; ``scale=False``: fixed at 1, no gradient), ``beta`` (zeros;
    ``center=False``: no gradient), ``running_mean`` (zeros) and ``running_var`` (ones), of shape
    ``(in_channels,)`` (``0``: fixed by the first input). In training the batch statistics are
    used and the running ones updated in place (``running = momentum * running + (1 -
    momentum) * batch``); otherwise the running statistics are used."""

    def __init__(
        self,
        axis: int = 1,
        momentum: float = 0.9,
        epsilon: float = 1e-5,
        center: bool = True,
        scale: bool = True,
        use_global_stats: bool = False,
        beta_initializer: Any = "zeros",
        gamma_initializer: Any = "ones",
        running_mean_initializer: Any = "zeros",
        running_variance_initializer: Any = "ones",
        in_channels: int = 0,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self._kwargs = {
            "axis": axis,
            "eps": epsilon,
            "momentum": momentum,
            "fix_gamma": not scale,
            "use_global_stats": use_global_stats,
        }
        if in_channels != 0:
            self.in_channels = in_channels
        self.gamma = self.params.get(
            "gamma",
            grad_req="write" if scale else "null",
            shape=(in_channels,),
            init=gamma_initializer,
            allow_deferred_init=True,
            differentiable=scale,
        )
        self.beta = self.params.get(
            "beta",
            grad_req="write" if center else "null",
            shape=(in_channels,),
            init=beta_initializer,
            allow_deferred_init=True,
            differentiable=center,
        )
        self.running_mean = self.params.get(
            "running_mean",
            grad_req="null",
            shape=(in_channels,),
            init=running_mean_initializer,
            allow_deferred_init=True,
            differentiable=False,
        )
        self.running_var = self.params.get(
            "running_var",
            grad_req="null",
            shape=(in_channels,),
            init=running_variance_initializer,
            allow_deferred_init=True,
            differentiable=False,
        )

    def infer_shape(self, x: Any, *args: Any) -> None:
        """``in_channels`` from ``x.shape[axis]``."""
        c = int(x.shape[self._kwargs["axis"]])  # type: ignore[index]
        for p in (self.gamma, self.beta, self.running_mean, self.running_var):
            p.shape = (c,)

    def cast(self, dtype: Any) -> None:
        """As mxnet: float16 keeps the parameters in float32."""
        if np.dtype(dtype).name == "float16":
            dtype = "float32"
        super().cast(dtype)

    def hybrid_forward(
        self, F: Any, x: Any, gamma: Any, beta: Any, running_mean: Any, running_var: Any
    ) -> Any:
        return F.BatchNorm(x, gamma, beta, running_mean, running_var, name="fwd", **self._kwargs)

    def __repr__(self) -> str:
        content = ", ".join(f"{k}={v!r}" for k, v in self._kwargs.items())
        c = (self.gamma.shape or (0,))[0]
        return f"{self.__class__.__name__}({content}, in_channels={c if c else None})"


class Embedding(HybridBlock):
    """Rows of ``weight`` (``(input_dim, output_dim)``) looked up by the indices of ``x``.
    ``sparse_grad=True`` raises NotImplementedError."""

    def __init__(
        self,
        input_dim: int,
        output_dim: int,
        dtype: Any = "float32",
        weight_initializer: Any = None,
        sparse_grad: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if sparse_grad:
            raise NotImplementedError(
                "gluon.nn.Embedding: sparse_grad=True (row_sparse gradients) is not supported "
                "(docs/migration-mxnet.md)"
            )
        self._kwargs = {
            "input_dim": input_dim,
            "output_dim": output_dim,
            "dtype": dtype,
            "sparse_grad": sparse_grad,
        }
        self.weight = self.params.get(
            "weight",
            shape=(input_dim, output_dim),
            init=weight_initializer,
            dtype=dtype,
            allow_deferred_init=True,
        )

    def hybrid_forward(self, F: Any, x: Any, weight: Any) -> Any:
        return F.Embedding(x, weight, name="fwd", **self._kwargs)

    def __repr__(self) -> str:
        k = self._kwargs
        return f"{self.__class__.__name__}({k['input_dim']} -> {k['output_dim']}, {k['dtype']})"


class Flatten(HybridBlock):
    """``x`` reshaped to ``(batch, -1)``."""

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return F.flatten(x)

    def __repr__(self) -> str:
        return self.__class__.__name__


def _resolve(function: Any, who: str, module: Any) -> Callable[..., Any]:
    if isinstance(function, str):
        if not hasattr(module, function):
            raise AssertionError(f"Function name {function} is not found in ndarray.")
        return getattr(module, function)  # type: ignore[no-any-return]
    if not callable(function):
        raise ValueError(
            f"{who}: Unrecognized function in lambda: {function} of type {type(function)}"
        )
    return function  # type: ignore[no-any-return]


class Lambda(Block):
    """A Block running ``function(*args)`` (a callable, or the name of an ``mx.nd`` function).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> from gradhub_compat.mxnet.gluon import nn
        >>> nn.Lambda("tanh")(mx.nd.zeros((2,))).asnumpy()
        array([0., 0.], dtype=float32)
    """

    def __init__(self, function: Any, prefix: str | None = None) -> None:
        super().__init__(prefix=prefix)
        self._func_impl = _resolve(function, "gluon.nn.Lambda", nd)
        self._func_name = getattr(self._func_impl, "__name__", repr(function))

    def forward(self, *args: Any) -> Any:
        return self._func_impl(*args)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self._func_name})"


class HybridLambda(HybridBlock):
    """A HybridBlock running ``function(F, *args)`` (or the ``F`` function of that name)."""

    def __init__(self, function: Any, prefix: str | None = None) -> None:
        super().__init__(prefix=prefix)
        if isinstance(function, str):
            _resolve(function, "gluon.nn.HybridLambda", nd)
            name = function
            self._func: Callable[..., Any] = lambda F, *args: getattr(F, name)(*args)
        elif callable(function):
            self._func = function
        else:
            raise ValueError(
                f"Unrecognized function in lambda: {function} of type {type(function)}"
            )
        self._func_name = getattr(function, "__name__", str(function))

    def hybrid_forward(self, F: Any, x: Any, *args: Any) -> Any:
        return self._func(F, x, *args)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self._func_name})"
