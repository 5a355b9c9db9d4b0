"""chainer's ``chainer.backends.cuda`` over gradhub's devices: :func:`to_cpu`, :func:`to_gpu`,
:func:`get_array_module` and :func:`get_device_from_id` (chainer 7.8.1's
``chainer/backends/cuda.py``). A CUDA device is gradhub-cuda's (``'@cupy:N'``); without it
:func:`to_gpu` and :func:`get_device_from_id` raise RuntimeError. Other members raise
NotImplementedError naming the page.

Example::

    >>> import numpy as np
    >>> from gradhub_compat.chainer.backends import cuda
    >>> a = np.ones(2, np.float32)
    >>> cuda.to_cpu(a) is a, cuda.to_cpu(None), cuda.get_array_module(a) is np
    (True, None, True)
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gradhub.registry import REGISTRY

from .._device import PAGE, _to_numpy, get_device, get_device_of, send

__all__ = ["get_array_module", "get_device_from_id", "to_cpu", "to_gpu"]


def _convert(array: Any, func: Any) -> Any:
    # chainer's _convert_arrays: an array, or a list or tuple of arrays (None kept)
    if isinstance(array, (list, tuple)):
        return type(array)(None if a is None else func(a) for a in array)
    return func(array)


def _one_to_cpu(array: Any) -> Any:
    if array is None:
        return None
    if isinstance(array, np.ndarray):
        return array
    if type(array) in REGISTRY.by_array_type:
        return _to_numpy(array)
    if np.isscalar(array):
        return np.asarray(array)
    raise TypeError(f"Array cannot be converted into an numpy.ndarray\nActual type: {type(array)}.")


def to_cpu(array: Any, stream: Any = None) -> Any:
    """``array`` (or each of a list or tuple of arrays) as a numpy array: the array itself
    when it is one, a host copy of a device array, None for None; a Variable or another
    object raises TypeError (chainer's message)."""
    return _convert(array, _one_to_cpu)


def to_gpu(array: Any, device: Any = None, stream: Any = None) -> Any:
    """``array`` (or each of a list or tuple) on the CUDA device ``device`` (an index, default
    0); RuntimeError when gradhub has no usable CUDA device."""
    index = 0 if device is None else int(getattr(device, "id", device))
    dev = get_device(f"@cupy:{index}", "chainer.backends.cuda.to_gpu")
    return _convert(array, lambda a: send(np.asarray(a) if np.isscalar(a) else a, dev))


def get_array_module(*args: Any) -> Any:
    """The array module of the arguments (arrays or Variables): the device's for a device
    array (CuPy for gradhub-cuda), numpy otherwise."""
    for a in args:
        data = getattr(a, "_data", a)
        if type(data) in REGISTRY.by_array_type and not isinstance(data, np.ndarray):
            return get_device_of(data).xp
    return np


def get_device_from_id(device_id: int | None) -> Any:
    """chainer's device object of the CUDA device ``device_id`` (``'@cupy:N'``; its ``use()``
    makes it current); RuntimeError when gradhub has no usable CUDA device."""
    from ..backend import get_device as chainer_get_device

    return chainer_get_device(f"@cupy:{0 if device_id is None else int(device_id)}")


#: chainer's ``cuda.cupy`` without CuPy: a placeholder object (no array module is it)
_NO_CUPY = object()


def _cupy() -> Any:
    """chainer's ``cuda.cupy``: the CuPy module when it imports, else a placeholder object
    (as chainer without CuPy), so ``xp is cuda.cupy`` is False for numpy."""
    try:
        import cupy
    except ImportError:
        return _NO_CUPY
    return cupy


def __getattr__(name: str) -> Any:
    if name == "cupy":
        return _cupy()
    if not name.startswith("__"):
        raise NotImplementedError(
            f"chainer.backends.cuda.{name} is not supported by gradhub (supported: "
            f"{', '.join(__all__)}); see {PAGE}"
        )
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
