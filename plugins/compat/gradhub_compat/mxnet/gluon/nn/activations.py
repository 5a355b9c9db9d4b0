"""Gluon's activation layers (``gluon.nn.Activation``, ``LeakyReLU``, ``PReLU``, ``ELU``,
``SELU``, ``GELU``, ``Swish``), as mxnet 1.9.1.

Example::

    >>> import gradhub_compat.mxnet as mx
    >>> from gradhub_compat.mxnet.gluon import nn
    >>> nn.LeakyReLU(0.1)(mx.nd.array([-1.0, 2.0])).asnumpy()
    array([-0.1,  2. ], dtype=float32)
"""

from __future__ import annotations

from typing import Any

from ... import initializer
from ..block import HybridBlock

__all__ = ["ELU", "GELU", "SELU", "Activation", "LeakyReLU", "PReLU", "Swish"]


class Activation(HybridBlock):
    """``F.Activation(x, act_type=activation)`` (relu, sigmoid, tanh, softrelu, softsign); the
    block is named after its activation (``relu0_``), as mxnet."""

    def __init__(self, activation: str, **kwargs: Any) -> None:
        self._act_type = activation
        super().__init__(**kwargs)

    def _alias(self) -> str:
        return self._act_type

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return F.Activation(x, act_type=self._act_type, name="fwd")

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self._act_type})"


class LeakyReLU(HybridBlock):
    """``x`` for ``x > 0``, else ``alpha * x`` (``alpha >= 0``)."""

    def __init__(self, alpha: float, **kwargs: Any) -> None:
        if not alpha >= 0:
            raise AssertionError("Slope coefficient for LeakyReLU must be no less than 0.")
        super().__init__(**kwargs)
        self._alpha = alpha

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return F.LeakyReLU(x, act_type="leaky", slope=self._alpha, name="fwd")

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self._alpha})"


class PReLU(HybridBlock):
    """LeakyReLU with a learned slope ``alpha`` of shape ``(in_channels,)`` (one per channel of
    axis 1, or one for all), initialized to 0.25."""

    def __init__(self, alpha_initializer: Any = None, in_channels: int = 1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if alpha_initializer is None:
            alpha_initializer = initializer.Constant(0.25)
        with self.name_scope():
            self.alpha = self.params.get("alpha", shape=(in_channels,), init=alpha_initializer)

    def hybrid_forward(self, F: Any, x: Any, alpha: Any) -> Any:
        return F.LeakyReLU(x, gamma=alpha, act_type="prelu", name="fwd")


class ELU(HybridBlock):
    """``x`` for ``x > 0``, else ``alpha * (e^x - 1)``."""

    def __init__(self, alpha: float = 1.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._alpha = alpha

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return F.LeakyReLU(x, act_type="elu", slope=self._alpha)


class SELU(HybridBlock):
    """Scaled ELU (Klambauer et al. 2017)."""

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return F.LeakyReLU(x, act_type="selu", name="fwd")


class GELU(HybridBlock):
    """``x * Phi(x)`` (the erf form)."""

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return F.LeakyReLU(x, act_type="gelu", name="fwd")


class Swish(HybridBlock):
    """``x * sigmoid(beta * x)``."""

    def __init__(self, beta: float = 1.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._beta = beta

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return x * F.sigmoid(self._beta * x, name="fwd")
