"""Helpers shared by :mod:`gradhub_compat.chainer.links` and the modules of
:mod:`gradhub_compat.chainer._links`: the arguments of the 2-D convolutions (chainer's deferred
``(out_channels, ksize)`` form, the keyword-only ``dilate`` and ``groups``), the initialization
of a convolution's or linear layer's parameters ``W`` and ``b``, the input of a link read as a
Variable and chainer's ``permutate_list``."""

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
    _reject_kwargs(name, kwargs)
    return (*_defer_in_channels(in_channels, out_channels, ksize), dilate, groups)


def _reject_kwargs(name: str, kwargs: dict[str, Any]) -> None:
    """chainer's TypeError naming ``L.<name>`` and the keyword arguments left in ``kwargs``
    (the ones the link does not take); nothing when none is left."""
    if kwargs:
        raise TypeError(
            f"chainer L.{name} got unexpected keyword argument(s) "
            + ", ".join(repr(k) for k in kwargs)
        )


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
    (``size``,) (zeros by default, None with ``nobias``) as its parameters, in chainer's order
    (``W`` drawn first): a convolution's, or a linear layer's with ``in_size`` for
    ``in_channels``."""
    with link.init_scope():
        link.W = Parameter(_init._get_initializer(initialW))
        if in_channels is not None:
            link._initialize_params(in_channels)
        link.b = _bias_param(nobias, initial_bias, size)


def _unshaped_W_b(link: Any, initialW: Any, nobias: bool, initial_bias: Any) -> None:
    """The link's ``W`` (``initialW``) and ``b`` (``initial_bias``, zeros by default; None with
    ``nobias``) as its parameters, both unshaped until the link's ``_initialize_params`` gives
    their shapes (see :func:`_shape_W_b`)."""
    with link.init_scope():
        link.W = Parameter(_init._get_initializer(initialW))
        link.b = _bias_param(nobias, initial_bias, None)


def _shape_W_b(link: Any, W_shape: Any, b_shape: Any) -> None:
    """Shape (and draw) the link's ``W``, then its ``b`` unless it is None."""
    link.W.initialize(W_shape)
    if link.b is not None:
        link.b.initialize(b_shape)


def _permutate_list(lst: list[Any], indices: Any, inv: bool) -> list[Any]:
    """chainer's ``permutate_list``: ``lst`` reordered by ``indices`` (``ret[i] =
    lst[indices[i]]``), or by their inverse (``ret[indices[i]] = lst[i]``) with ``inv``."""
    ret: list[Any] = [None] * len(lst)
    for i, ind in enumerate(indices):
        if inv:
            ret[ind] = lst[i]
        else:
            ret[i] = lst[ind]
    return ret


def _running_decay(link: Any, finetune: bool) -> float:
    """The decay of a normalization link's running statistics in a training call: with
    ``finetune``, ``1 - 1 / N`` after counting the call in ``link.N`` (the running average
    over the calls since ``start_finetuning``), else ``link.decay``."""
    if finetune:
        link.N += 1
        return 1.0 - 1.0 / link.N
    decay: float = link.decay
    return decay


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
