"""Helpers shared by the modules of :mod:`gradhub_compat.chainer._functions`: chainer's
``InvalidType`` raised by a function's ``check_type_forward``, the dtype kind and floating dtype
of an argument, an array read in Python, a constant (not differentiable) result, chainer's
``_pair``/``as_tuple``, a normalized axis, the output sizes of a convolution and a
deconvolution, the number of spatial axes of an N-d layer and the array module of an array."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import Variable
from ..functions import _arr, _dtype, _shape
from ..utils.type_check import InvalidType

_PAGE = "docs/migration-chainer.md"


def _invalid(label: str, expect: str, actual: str) -> InvalidType:
    """chainer's ``InvalidType`` of the ``check_type_forward`` of the function ``label``."""
    return InvalidType(
        expect,
        actual,
        f"\nInvalid operation is performed in: {label} (Forward)\n\nExpect: {expect}\n"
        f"Actual: {actual}",
    )


def _kind(x: Any) -> str:
    dt = _dtype(x)
    if dt is None:
        dt = np.asarray(x).dtype
    return str(np.dtype(dt).kind)


def _data(x: Any, where: str) -> Any:
    """The array of a Variable or an array (read in Python by ``where``)."""
    return _arr(x, where)


def _constant(value: Any) -> Variable:
    """A result that is not differentiable: a Variable without a creator needing no gradient."""
    return Variable(value, requires_grad=False)


def _xp_of(a: Any) -> Any:
    """numpy for a numpy array, else the module of the device array (cupy)."""
    if isinstance(a, (np.ndarray, np.generic)):
        return np
    import importlib

    return importlib.import_module(type(a).__module__.split(".")[0])


def _tuple_n(v: Any, n: int) -> tuple[int, ...]:
    """chainer's ``_pair``/``as_tuple``: an int repeated, else the sequence's ints."""
    if hasattr(v, "__getitem__"):
        return tuple(int(a) for a in v)
    return (int(v),) * n


def _fdtype(x: Any) -> Any:
    return _dtype(x) if _dtype(x) is not None else np.asarray(x).dtype


def _norm_axis(axis: int, nd: int, where: str) -> int:
    if not -nd <= axis < nd:
        raise ValueError(f"chainer F.{where}: axis {axis} is out of bounds for {nd} dimensions")
    return axis % nd


def _ntuple(v: Any, n: int, what: str, where: str) -> tuple[int, ...]:
    if isinstance(v, (int, np.integer)):
        return (int(v),) * n
    t = tuple(int(a) for a in v)
    if len(t) != n:
        raise ValueError(f"{where}: {what} must be an int or a tuple of {n} ints, got {v!r}")
    return t


def _conv_outsize(size: int, k: int, s: int, p: int, cover_all: bool = False, d: int = 1) -> int:
    """chainer's ``get_conv_outsize``."""
    dk = k + (k - 1) * (d - 1)
    if cover_all:
        return (size + p * 2 - dk + s - 1) // s + 1
    return (size + p * 2 - dk) // s + 1


def _deconv_outsize(size: int, k: int, s: int, p: int, cover_all: bool = False, d: int = 1) -> int:
    """chainer's ``get_deconv_outsize``."""
    dk = (k - 1) * d + 1
    if cover_all:
        return s * (size - 1) + dk - s + 1 - 2 * p
    return s * (size - 1) + dk - 2 * p


def _spatial(fname: str, x: Any, nd: int | None) -> int:
    """The number of spatial axes of x (N, C, ...), checked against ``nd`` (chainer's
    message)."""
    got = len(_shape(x)) - 2
    if nd is not None and got != nd:
        raise ValueError(
            f"chainer F.{fname}: the number of dimensions under channel dimension of the input "
            f"'x' should be {nd}. But the actual ndim was {got}."
        )
    if got < 1:
        raise ValueError(f"chainer F.{fname}: x must have a batch, a channel and a spatial axis")
    return got
