"""chainer's device objects: ``chainer.get_device``, ``chainer.using_device``,
``chainer.backend.Device`` and ``chainer.get_dtype`` (chainer 7.8.1's ``chainer/backend.py``).

A :class:`Device` wraps a gradhub device (``device.device``): ``'@numpy'`` (and the legacy
integers below 0, also as strings such as ``'-1'``) is the CPU, ``'@cupy:N'`` (and an integer
``N >= 0``) a CUDA device of the gradhub-cuda plugin. It is accepted wherever chainer takes a
device specifier (``Link.to_device``, ``StandardUpdater(device=...)``, ``Evaluator``, the
converters). ChainerX specifiers (strings without ``@``, such as ``'native:0'``) raise
RuntimeError, as chainer without ChainerX; ``'@intel64'`` raises NotImplementedError naming the
page.

Example::

    >>> import numpy as np
    >>> from gradhub_compat import chainer
    >>> device = chainer.get_device("-1")
    >>> device
    <CpuDevice (numpy)>
    >>> str(device), device.xp is np
    ('@numpy', True)
    >>> device.use()
    >>> chainer.get_dtype()
    dtype('float32')
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np
from gradhub.device import Device as _NativeDevice

from ._device import PAGE
from ._device import get_device as _native_device
from ._device import send as _send

__all__ = [
    "CpuDevice",
    "Device",
    "GpuDevice",
    "get_array_module",
    "get_array_types",
    "get_device",
    "get_device_from_array",
    "get_dtype",
    "using_device",
]


class Device:
    """chainer's ``chainer.backend.Device`` over the gradhub device ``device``: ``xp`` (the
    array module), ``name`` (``'@numpy'``, ``'@cupy:N'``; also ``str(device)``), ``send(arrays)``
    (an array or a scalar, or a tuple or list of them and None, copied to the device when
    elsewhere; another object raises TypeError),
    ``use()`` (make it the current device: nothing for the CPU) and equality by name; the
    gradhub device's other members (``kind``, ``index``, ``activate``...) are reached too.
    Without ``device`` it is the CPU, as chainer's ``backend.CpuDevice()``."""

    def __init__(self, device: _NativeDevice | None = None) -> None:
        if device is None:
            device = _native_device("@numpy", "chainer.backend.CpuDevice")
        self.device = device

    def __getattr__(self, name: str) -> Any:
        # the gradhub device's other members (kind, index, activate, asarray, to_numpy...)
        if name.startswith("_") or name == "device":
            raise AttributeError(name)
        return getattr(self.device, name)

    @property
    def xp(self) -> Any:
        """The array module of the device (numpy for the CPU)."""
        return self.device.xp

    @property
    def name(self) -> str:
        """chainer's specifier of the device: ``'@numpy'`` or ``'@cupy:N'``."""
        if self.device.kind == "cpu":
            return "@numpy"
        if self.device.kind == "cuda":
            return f"@cupy:{self.device.index}"
        return self.device.name

    @property
    def supported_array_types(self) -> tuple[type, ...]:
        """The array types of the device."""
        return (type(self.device.asarray(np.zeros(0))),)

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        if self.device.kind == "cpu":
            return "<CpuDevice (numpy)>"
        if self.device.kind == "cuda":
            return f"<GpuDevice (cupy):{self.device.index}>"
        return f"<Device {self.device.name}>"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Device) and other.name == self.name

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash(self.name)

    def send_array(self, array: Any) -> Any:
        """``array`` on this device (the array itself when it is already there)."""
        if array is None:
            return None
        if np.isscalar(array):
            array = np.asarray(array)
        if not hasattr(array, "shape") or isinstance(array, (list, tuple)):
            raise TypeError(
                f"chainer Device.send: an array cannot be made of {type(array)} (send arrays, "
                "or a tuple or list of arrays)"
            )
        return _send(array, self.device)

    def send(self, arrays: Any) -> Any:
        """Send an array, or each of a tuple or list of arrays (None kept), to this device."""
        if isinstance(arrays, (list, tuple)):
            return type(arrays)(self.send_array(a) for a in arrays)
        return self.send_array(arrays)

    def use(self) -> None:
        """Make the device current: nothing for the CPU, ``cupy.cuda.Device(N).use()`` for
        ``'@cupy:N'``."""
        if self.device.kind == "cuda":
            import cupy

            cupy.cuda.Device(self.device.index).use()

    def create_context(self) -> Any:
        """The context in which this device is current (gradhub's ``activate``)."""
        return self.device.activate()


def get_array_module(*args: Any) -> Any:
    """chainer's ``backend.get_array_module``: the array module of the arguments (arrays or
    Variables): CuPy for a gradhub-cuda array, numpy otherwise.

    Example::

        >>> import numpy as np
        >>> from gradhub_compat.chainer import backend
        >>> backend.get_array_module(np.zeros(2)) is np
        True
    """
    from .backends import cuda

    return cuda.get_array_module(*args)


def get_array_types() -> tuple[type, ...]:
    """chainer's ``chainer.get_array_types``: the array types the devices hold, numpy's
    ``ndarray`` first (then CuPy's with gradhub-cuda).

    Example::

        >>> import numpy as np
        >>> from gradhub_compat import chainer
        >>> chainer.get_array_types()[0] is np.ndarray
        True
    """
    from gradhub.registry import REGISTRY

    return tuple(dict.fromkeys([np.ndarray, *REGISTRY.by_array_type]))


def get_device_from_array(*arrays: Any) -> Device:
    """chainer's ``backend.get_device_from_array``: the :class:`Device` of the first array that
    is not a numpy array (a gradhub-cuda array: ``'@cupy:N'``), else the CPU. Variables are
    not looked into (as chainer: pass ``v.array``).

    Example::

        >>> import numpy as np
        >>> from gradhub_compat.chainer import backend
        >>> backend.get_device_from_array(np.zeros(2))
        <CpuDevice (numpy)>
    """
    from gradhub.registry import REGISTRY

    from ._device import get_device_of

    for a in arrays:
        if type(a) in REGISTRY.by_array_type and not isinstance(a, np.ndarray):
            return Device(get_device_of(a))
    return Device()


#: chainer's device classes (one class here; ``isinstance(d, CpuDevice)`` is any Device)
CpuDevice = Device
GpuDevice = Device


def get_device(device_spec: Any) -> Device:
    """chainer's ``chainer.get_device``: the :class:`Device` of ``device_spec``, which is a
    :class:`Device` (returned as is), a gradhub device, an integer (below 0: the CPU; ``N``:
    ``'@cupy:N'``), a string of an integer, ``'@numpy'`` or ``'@cupy:N'``. Other strings
    without ``@`` are ChainerX specifiers: RuntimeError, as chainer without ChainerX; another
    ``'@...'`` raises ValueError and any other object TypeError, with chainer's messages."""
    if isinstance(device_spec, Device):
        return device_spec
    if isinstance(device_spec, _NativeDevice):
        return Device(device_spec)
    where = "chainer.get_device"
    if isinstance(device_spec, (int, np.integer)) and not isinstance(device_spec, bool):
        return Device(_native_device(int(device_spec), where))
    if isinstance(device_spec, str):
        try:
            number = int(device_spec)
        except ValueError:
            pass
        else:
            return Device(_native_device(number, where))
        if device_spec.startswith("@"):
            module, colon, _ = device_spec[1:].partition(":")
            if (module == "numpy" and not colon) or (module == "cupy" and colon):
                return Device(_native_device(device_spec, where))
            if module == "intel64" and not colon:
                raise NotImplementedError(
                    f"{where}: the device '@intel64' (iDeep) is not supported by gradhub; see "
                    f"{PAGE}"
                )
            raise ValueError(
                "Device specifiers starting with '@' must be followed by a module name and "
                "depending on the module, module specific precise device specifiers. Actual: "
                f"{device_spec}"
            )
        raise RuntimeError(
            f"Tried to parse ChainerX device specifier '{device_spec}', but ChainerX is not "
            "available. Note that device specifiers without '@' prefix are assumed to be "
            "ChainerX device specifiers."
        )
    raise TypeError(
        "Device specifier must be a backend.Device, cuda.Device, chainerx.Device, integer or a "
        f"string. Actual: {type(device_spec)}"
    )


@contextlib.contextmanager
def using_device(device_spec: Any) -> Iterator[None]:
    """chainer's ``chainer.using_device``: the device of ``device_spec`` is current in the
    block (nothing changes for the CPU)."""
    with get_device(device_spec).create_context():
        yield


def get_dtype(dtype: Any = None, map_mixed16: Any = None) -> np.dtype:
    """chainer's ``chainer.get_dtype``: ``numpy.dtype(dtype)``, or for None the default dtype
    ``chainer.config.dtype`` (float32). The layer's links and initializers make float32
    parameters, so a ``chainer.config.dtype`` other than float32 raises NotImplementedError
    naming the page; ``map_mixed16`` is accepted (chainer's ``mixed16`` is not supported)."""
    if dtype is not None:
        return np.dtype(dtype)
    from . import config

    try:
        configured = config.dtype
    except AttributeError:
        return np.dtype(np.float32)
    if isinstance(configured, str) and configured == "mixed16":
        configured = None
    if configured is None or np.dtype(configured) != np.float32:
        raise NotImplementedError(
            f"chainer.get_dtype: chainer.config.dtype = {configured!r} is not supported by "
            f"gradhub's chainer layer (its links and initializers make float32 parameters); "
            f"see {PAGE}"
        )
    return np.dtype(np.float32)
