"""Gluon's normalization layers besides ``BatchNorm``: ``LayerNorm``, ``InstanceNorm``,
``GroupNorm`` and ``BatchNormReLU`` (and ``ReflectionPad2D``, the padding layer that image
networks using them put before their convolutions), as mxnet 1.9.1: the same parameter names
(``layernorm0_gamma``, ``groupnorm0_beta``, ``batchnormrelu0_running_mean``), shapes,
initializers, ``grad_req`` and deferred initialization (an unknown ``in_channels`` is fixed by
the first forward pass), each running the ``F`` operator of the same name (``mx.nd.LayerNorm``,
``mx.nd.InstanceNorm``, ``mx.nd.GroupNorm``).

Example::

    >>> import gradhub_compat.mxnet as mx
    >>> from gradhub_compat.mxnet.gluon import nn
    >>> net = nn.HybridSequential(prefix="net_")
    >>> with net.name_scope():
    ...     net.add(nn.LayerNorm())
    >>> net.initialize()
    >>> net(mx.nd.array([[1.0, 3.0], [2.0, 6.0]])).asnumpy().round(3)
    array([[-1.,  1.],
           [-1.,  1.]], dtype=float32)
    >>> [(k, v.shape) for k, v in net.collect_params().items()]
    [('net_layernorm0_gamma', (2,)), ('net_layernorm0_beta', (2,))]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..block import HybridBlock
from .basic_layers import BatchNorm

__all__ = ["BatchNormReLU", "GroupNorm", "InstanceNorm", "LayerNorm", "ReflectionPad2D"]


def _norm_repr(block: Any, in_channels: bool) -> str:
    """mxnet's repr: ``Name(eps=..., axis=..., center=..., scale=...[, in_channels=C])``."""
    content = ", ".join(f"{k}={v!r}" for k, v in block._kwargs.items())
    if in_channels:
        content += f", in_channels={(block.gamma.shape or (0,))[0]}"
    return f"{block.__class__.__name__}({content})"


class _ScaleShift(HybridBlock):
    """The ``gamma`` (``gamma_initializer``, ones; ``scale=False``: ``grad_req="null"``) and
    ``beta`` (``beta_initializer``, zeros; ``center=False``: ``grad_req="null"``) parameters of
    shape ``shape``, as mxnet's normalization layers (the parameters still take part in the
    operator: a layer with ``scale=False`` multiplies by its fixed gamma)."""

    def _scale_shift(
        self,
        shape: tuple[int, ...],
        center: bool,
        scale: bool,
        beta_initializer: Any,
        gamma_initializer: Any,
    ) -> None:
        self.gamma = self.params.get(
            "gamma",
            grad_req="write" if scale else "null",
            shape=shape,
            init=gamma_initializer,
            allow_deferred_init=True,
        )
        self.beta = self.params.get(
            "beta",
            grad_req="write" if center else "null",
            shape=shape,
            init=beta_initializer,
            allow_deferred_init=True,
        )


class _AlongAxis(_ScaleShift):
    """A normalization with ``gamma`` and ``beta`` of the size of the input's axis ``axis``
    (``in_channels``, fixed by the first input when 0): LayerNorm's and InstanceNorm's."""

    def _along(
        self,
        axis: int,
        epsilon: float,
        center: bool,
        scale: bool,
        beta_initializer: Any,
        gamma_initializer: Any,
        in_channels: int,
    ) -> None:
        self._kwargs = {"eps": epsilon, "axis": axis, "center": center, "scale": scale}
        self._axis = axis
        self._epsilon = epsilon
        self._scale_shift((in_channels,), center, scale, beta_initializer, gamma_initializer)

    def infer_shape(self, x: Any, *args: Any) -> None:
        """``in_channels`` from ``x.shape[axis]``."""
        c = int(x.shape[self._axis])
        self.gamma.shape = (c,)
        self.beta.shape = (c,)

    def __repr__(self) -> str:
        return _norm_repr(self, True)


class LayerNorm(_AlongAxis):
    """Layer normalization along ``axis`` (``F.LayerNorm``):
    ``y = (x - mean) / sqrt(var + epsilon) * gamma + beta``, the (biased) statistics taken along
    ``axis`` for each position of the other axes; ``gamma`` and ``beta`` of shape
    ``(in_channels,)``, ``x.shape[axis]`` (``0``: fixed by the first input).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> from gradhub_compat.mxnet.gluon import nn
        >>> nn.LayerNorm(in_channels=8)
        LayerNorm(eps=1e-05, axis=-1, center=True, scale=True, in_channels=8)
    """

    def __init__(
        self,
        axis: int = -1,
        epsilon: float = 1e-5,
        center: bool = True,
        scale: bool = True,
        beta_initializer: Any = "zeros",
        gamma_initializer: Any = "ones",
        in_channels: int = 0,
        prefix: str | None = None,
        params: Any = None,
    ) -> None:
        super().__init__(prefix=prefix, params=params)
        self._along(axis, epsilon, center, scale, beta_initializer, gamma_initializer, in_channels)

    def hybrid_forward(self, F: Any, data: Any, gamma: Any, beta: Any) -> Any:
        return F.LayerNorm(data, gamma=gamma, beta=beta, axis=self._axis, eps=self._epsilon)


class InstanceNorm(_AlongAxis):
    """Instance normalization (``F.InstanceNorm``): each sample's each channel (axis ``axis``)
    normalized over the remaining axes, ``y = (x - mean) / sqrt(var + epsilon) * gamma + beta``;
    ``gamma`` and ``beta`` of shape ``(in_channels,)`` (``0``: fixed by the first input). As
    mxnet, ``scale`` defaults to False (gamma stays at its initial ones); an ``axis`` other than
    1 is swapped with axis 1 around the operator.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> from gradhub_compat.mxnet.gluon import nn
        >>> net = nn.InstanceNorm()
        >>> net.initialize()
        >>> net(mx.nd.array([[[1.0, 3.0]]])).asnumpy().round(3)
        array([[[-1.,  1.]]], dtype=float32)
        >>> net
        InstanceNorm(eps=1e-05, axis=1, center=True, scale=False, in_channels=1)
    """

    def __init__(
        self,
        axis: int = 1,
        epsilon: float = 1e-5,
        center: bool = True,
        scale: bool = False,
        beta_initializer: Any = "zeros",
        gamma_initializer: Any = "ones",
        in_channels: int = 0,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self._along(axis, epsilon, center, scale, beta_initializer, gamma_initializer, in_channels)

    def hybrid_forward(self, F: Any, x: Any, gamma: Any, beta: Any) -> Any:
        if self._axis == 1:
            return F.InstanceNorm(x, gamma, beta, name="fwd", eps=self._epsilon)
        x = x.swapaxes(1, self._axis)
        return F.InstanceNorm(x, gamma, beta, name="fwd", eps=self._epsilon).swapaxes(1, self._axis)


class GroupNorm(_ScaleShift):
    """Group normalization (``F.GroupNorm``, data ``(N, C, ...)``): the channels split into
    ``num_groups`` groups, each sample's each group normalized over its channels and the
    remaining axes. As mxnet 1.9.1, ``gamma`` and ``beta`` have one value per **group**, shape
    ``(num_groups,)``, known from the start (there is no ``in_channels``).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> from gradhub_compat.mxnet.gluon import nn
        >>> net = nn.GroupNorm(num_groups=2, prefix="gn_")
        >>> [(k, v.shape) for k, v in net.collect_params().items()]
        [('gn_gamma', (2,)), ('gn_beta', (2,))]
    """

    def __init__(
        self,
        num_groups: int = 1,
        epsilon: float = 1e-5,
        center: bool = True,
        scale: bool = True,
        beta_initializer: Any = "zeros",
        gamma_initializer: Any = "ones",
        prefix: str | None = None,
        params: Any = None,
    ) -> None:
        super().__init__(prefix=prefix, params=params)
        self._kwargs = {
            "eps": epsilon,
            "num_groups": num_groups,
            "center": center,
            "scale": scale,
        }
        self._num_groups = num_groups
        self._epsilon = epsilon
        self._scale_shift((num_groups,), center, scale, beta_initializer, gamma_initializer)

    def hybrid_forward(self, F: Any, data: Any, gamma: Any, beta: Any) -> Any:
        return F.GroupNorm(
            data, gamma=gamma, beta=beta, num_groups=self._num_groups, eps=self._epsilon
        )

    def __repr__(self) -> str:
        return _norm_repr(self, False)


class BatchNormReLU(BatchNorm):
    """``BatchNorm`` followed by ReLU, ``max(BatchNorm(x), 0)``: the parameters, running
    statistics, training behaviour and repr of :class:`BatchNorm` (names
    ``batchnormrelu0_gamma``...). mxnet 1.9.1 runs one fused operator
    (``contrib.BatchNormWithReLU``); here ``F.BatchNorm`` and ``F.relu`` run one after the
    other, with the same values and gradients.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> from gradhub_compat.mxnet.gluon import nn
        >>> net = nn.BatchNormReLU(in_channels=1)
        >>> net.initialize()
        >>> net(mx.nd.array([[-1.0], [2.0]])).asnumpy().round(3)  # running statistics
        array([[0.],
               [2.]], dtype=float32)
    """

    def hybrid_forward(
        self, F: Any, x: Any, gamma: Any, beta: Any, running_mean: Any, running_var: Any
    ) -> Any:
        y = F.BatchNorm(x, gamma, beta, running_mean, running_var, name="fwd", **self._kwargs)
        return F.relu(y, name="relu")


class ReflectionPad2D(HybridBlock):
    """Reflection padding of the two spatial axes of ``(N, C, H, W)`` data (``F.pad``,
    ``mode="reflect"``): ``padding`` is an int (the same width on each side of H and W) or
    mxnet's 8 values ``(0, 0, 0, 0, top, bottom, left, right)``; each width must be smaller than
    its axis.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> from gradhub_compat.mxnet.gluon import nn
        >>> nn.ReflectionPad2D(1)(mx.nd.array([[[[1.0, 2.0], [3.0, 4.0]]]])).asnumpy()
        array([[[[4., 3., 4., 3.],
                 [2., 1., 2., 1.],
                 [4., 3., 4., 3.],
                 [2., 1., 2., 1.]]]], dtype=float32)
    """

    def __init__(self, padding: Any = 0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if isinstance(padding, (int, np.integer)):
            padding = (0, 0, 0, 0, padding, padding, padding, padding)
        if len(padding) != 8:
            raise AssertionError(
                f"gluon.nn.ReflectionPad2D: padding must be an int or 8 values, got {padding!r}"
            )
        self._padding = tuple(padding)

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return F.pad(x, mode="reflect", pad_width=self._padding)
