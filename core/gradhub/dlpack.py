"""Arrays of other libraries without copies: :func:`from_dlpack` (and ``Variable.__dlpack__``).

`DLPack <https://dmlc.github.io/dlpack/latest/>`_ is the array-exchange protocol of numpy,
PyTorch, JAX, CuPy and TensorFlow: an object with ``__dlpack__`` and ``__dlpack_device__``
hands its memory to another library, which wraps it without copying. gradhub's Variables export
their data that way (``torch.from_dlpack(x)``), and :func:`from_dlpack` imports.

The device is found through the device table: each registered
:class:`~gradhub.device.DeviceType` lists the DLPack device types it accepts
(``dlpack_device_types``; the CPU: 1, gradhub-cuda: 2) and imports with its array module's
``from_dlpack`` (numpy's, CuPy's), so a device plugin makes its arrays importable by declaring
them.
"""

from __future__ import annotations

from typing import Any

from .device import KNOWN_DEVICE_DISTRIBUTIONS
from .errors import DeviceError
from .plugins import ensure_loaded
from .registry import REGISTRY
from .variable import Variable, _complex_error

#: names of the DLPack device types (``DLDeviceType`` of dlpack.h), for messages
DLPACK_DEVICE_NAMES = {
    1: "CPU",
    2: "CUDA",
    3: "CUDA host",
    4: "OpenCL",
    7: "Vulkan",
    8: "Metal",
    9: "VPI",
    10: "ROCm",
    11: "ROCm host",
    13: "CUDA managed",
    14: "oneAPI",
}


def from_dlpack(obj: Any, need_grad: bool | None = None) -> Variable:
    """A Variable whose data shares memory with ``obj``, an array of another library (a
    ``torch.Tensor``, a JAX array, a numpy or CuPy array, a Variable): no copy.

    The device comes from ``obj.__dlpack_device__()``: CPU memory becomes a numpy array, CUDA
    memory a CuPy array on that GPU (with gradhub-cuda installed); a device that no installed
    plugin accepts raises a :class:`~gradhub.errors.DeviceError` naming it. ``need_grad``: None
    (default) means True for floating-point data and False otherwise (as ``gh.Variable``, which
    refuses ``need_grad=True`` on integer data). Writes through either side are seen by the
    other, as with ``torch.from_dlpack``; a PyTorch tensor that requires grad must be
    ``.detach()``-ed first (PyTorch's rule).

    Example::

        >>> import numpy as np
        >>> import gradhub as gh
        >>> a = np.arange(3.0)
        >>> x = gh.from_dlpack(a)
        >>> x.d[0] = 7.0
        >>> a
        array([7., 1., 2.])
    """
    dev_fn = getattr(obj, "__dlpack_device__", None)
    if dev_fn is None or not hasattr(obj, "__dlpack__"):
        raise TypeError(
            "from_dlpack: obj must support DLPack (have __dlpack__ and __dlpack_device__), got "
            f"{type(obj).__name__}"
        )
    dl_type, index = dev_fn()
    dl_type, index = int(dl_type), int(index)
    ensure_loaded()
    dt = None
    for candidate in REGISTRY.device_types.values():
        if dl_type in candidate.dlpack_device_types:
            dt = candidate
            break
    if dt is None:
        name = DLPACK_DEVICE_NAMES.get(dl_type, "unknown")
        dist = {2: "cuda", 3: "cuda", 13: "cuda"}.get(dl_type)
        hint = (
            f"install {KNOWN_DEVICE_DISTRIBUTIONS[dist]}"
            if dist
            else "no gradhub device plugin handles it"
        )
        raise DeviceError(
            f"from_dlpack: the array is on DLPack device type {dl_type} ({name}), index {index}, "
            f"which no installed device accepts ({hint})"
        )
    arr = dt.from_dlpack(obj, index)
    kind = arr.dtype.kind
    if kind == "c":
        raise _complex_error("from_dlpack(obj)", arr.dtype)
    if need_grad is None:
        need_grad = kind == "f"
    elif need_grad and kind != "f":
        raise TypeError(
            f"from_dlpack: need_grad=True needs floating-point data, got dtype {arr.dtype}"
        )
    return Variable.leaf(arr, bool(need_grad))


__all__ = ["DLPACK_DEVICE_NAMES", "from_dlpack"]
