"""Helpers shared by :mod:`gradhub_compat.chainer.links` and the modules of
:mod:`gradhub_compat.chainer._links`: the arguments of the 2-D convolutions (chainer's deferred
``(out_channels, ksize)`` form, the keyword-only ``dilate`` and ``groups``), the initialization
of a convolution's parameters and the input of a link read as a Variable."""

from __future__ import annotations

from typing import Any

from .. import Variable, as_variable
from .. import initializers as _init
from ..link import Parameter


def _pair(x: Any) -> Any:
    return x if hasattr(x, "__getitem__") else (x, x)


def _conv2d_args(
    name: str, in_channels: Any, out_channels: Any, ksize: Any, kwargs: dict[str, Any]
) -> tuple[Any, Any, Any, Any, Any]:
    """``(in_channels, out_channels, ksize, dilate, groups)`` of L.Convolution2D /
    L.Deconvolution2D: the keyword-only ``dilate`` and ``groups`` taken from ``kwargs`` (any
    other keyword a TypeError), and ``(out_channels, ksize)`` read as the deferred
    ``(out_channels, ksize)`` form when ``ksize`` is None."""
    dilate = kwargs.pop("dilate", 1)
    groups = kwargs.pop("groups", 1)
    if kwargs:
        raise TypeError(
            f"chainer L.{name} got unexpected keyword argument(s) "
            + ", ".join(repr(k) for k in kwargs)
        )
    return (*_defer_in_channels(in_channels, out_channels, ksize), dilate, groups)


def _defer_in_channels(in_channels: Any, out_channels: Any, ksize: Any) -> tuple[Any, Any, Any]:
    """``(in_channels, out_channels, ksize)``, read as ``(out_channels, ksize)`` with the
    input channels deferred to the first call when ``ksize`` is None."""
    if ksize is None:
        return None, in_channels, out_channels
    return in_channels, out_channels, ksize


def _init_conv_params(
    link: Any, initialW: Any, in_channels: Any, nobias: bool, initial_bias: Any, size: Any
) -> None:
    """The link's ``W`` (``initialW``, shaped now unless ``in_channels`` is None) and ``b``
    (``size``,) (zeros by default, None with ``nobias``) as its parameters."""
    with link.init_scope():
        link.W = Parameter(_init._get_initializer(initialW))
        if in_channels is not None:
            link._initialize_params(in_channels)
        link.b = _bias_param(nobias, initial_bias, size)


def _input_of(link: Any, x: Any) -> Variable:
    """``x`` as a Variable, after shaping the link's deferred ``W`` from ``x.shape[1]``."""
    x = as_variable(x)
    if link.W.array is None:
        link._initialize_params(x.shape[1])
    return x


def _bias_param(nobias: bool, initial_bias: Any, size: Any) -> Parameter | None:
    if nobias:
        return None
    return Parameter(_init._get_initializer(0 if initial_bias is None else initial_bias), size)


def _check_groups(in_channels: int, out_channels: int, groups: int) -> None:
    if out_channels % groups != 0:
        raise ValueError("the number of output channels must be divisible by the number of groups")
    if in_channels % groups != 0:
        raise ValueError("the number of input channels must be divisible by the number of groups")
