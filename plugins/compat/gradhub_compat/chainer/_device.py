"""chainer's device specifiers mapped onto gradhub devices (``Variable.to_device``,
``Link.to_device``).

``'@numpy'``, the ``numpy`` module and ``-1`` are the CPU; ``'@cupy:N'`` and an int ``N >= 0``
a CUDA device of the gradhub-cuda plugin (integers also as strings, ``'-1'``); a chainer
``backend.Device`` (:func:`gradhub_compat.chainer.get_device`) stands for its gradhub device;
gradhub's own names (``'cpu'``, ``'cuda:N'``, any registered device kind) and a gradhub
:class:`~gradhub.device.Device` are taken as they are. ChainerX (``'native:0'``) and iDeep
(``'@intel64'``) raise NotImplementedError.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from typing import Any, NoReturn

import numpy as np
from gradhub.device import Device, parse_device_name
from gradhub.registry import REGISTRY

PAGE = "docs/migration-chainer.md"


def _missing_attribute(
    module: str, chainer_module: str, name: str, refused: bool, supported: Iterable[str]
) -> NoReturn:
    """What a front-end module's ``__getattr__`` raises for ``name``: NotImplementedError
    naming the supported names where chainer has it (``refused``), AttributeError else."""
    if refused:
        raise NotImplementedError(
            f"{chainer_module}.{name} is not supported by gradhub (supported: "
            f"{', '.join(supported)}); see {PAGE}"
        )
    raise AttributeError(f"module {module!r} has no attribute {name!r}")


def get_device(spec: Any, where: str) -> Device:
    """The gradhub device named by chainer's device specifier ``spec`` (a chainer
    ``backend.Device`` gives the gradhub device it wraps; a string of an integer is that
    integer, as in chainer)."""
    if isinstance(spec, Device):
        return spec
    from .backend import Device as ChainerDevice

    if isinstance(spec, ChainerDevice):
        return spec.device
    if isinstance(spec, str) and spec.lstrip("+-").isdigit():
        spec = int(spec)
    if spec is np or (isinstance(spec, str) and spec == "@numpy"):
        return _device("cpu", where)
    if isinstance(spec, (int, np.integer)) and not isinstance(spec, bool):
        return _device("cpu" if spec < 0 else f"cuda:{int(spec)}", where)
    if isinstance(spec, str):
        if spec.startswith("@cupy"):
            _, _, idx = spec.partition(":")
            return _device(f"cuda:{idx or 0}", where)
        if spec in ("@intel64",) or spec.startswith("native"):
            raise NotImplementedError(
                f"{where}: the device {spec!r} (iDeep / ChainerX) is not supported by gradhub; "
                f"use '@numpy' or '@cupy:N' (see {PAGE})"
            )
        return _device(spec, where)
    raise TypeError(
        f"{where}: invalid device specifier {spec!r}; use '@numpy', '@cupy:N' or a gradhub device"
    )


def _device(name: str, where: str) -> Device:
    kind, index = parse_device_name(name)
    if kind == "cpu":
        return REGISTRY.device_type("cpu").get(index)
    from gradhub.plugins import ensure_loaded

    ensure_loaded()  # device types come with their plugins (cuda: gradhub-cuda)
    kind = REGISTRY.device_aliases.get(kind, kind)
    if kind not in REGISTRY.device_types:
        if kind == "cuda":
            raise RuntimeError(
                f"{where}: no usable gradhub CUDA device for {name!r}: gradhub-cuda is not "
                "installed (pip install gradhub-cuda, with CuPy, on a machine with a GPU), or "
                "stay on '@numpy'"
            )
        known = ", ".join(sorted(REGISTRY.device_types))
        raise ValueError(f"{where}: unknown device {name!r} (gradhub devices: {known})")
    ok, why = REGISTRY.availability(kind)
    if not ok:
        what = "CUDA device" if kind == "cuda" else "device"
        raise RuntimeError(
            f"{where}: no usable gradhub {what} for {name!r} ({why}); install gradhub-cuda "
            "with CuPy on a machine with a GPU, or stay on '@numpy'"
        )
    return REGISTRY.device_type(kind).get(index)


def send(array: Any, device: Device) -> Any:
    """``array`` on ``device`` (the array itself when already there)."""
    if array is None:
        return None
    dt = REGISTRY.by_array_type.get(type(array))
    if dt is not None and dt.device_of(array).name == device.name:
        return array
    host = array if type(array) is np.ndarray else np.asarray(_to_numpy(array))
    if device.kind == "cpu":
        return host
    with device.activate():
        return device.asarray(host)


def _to_numpy(array: Any) -> np.ndarray:
    dt = REGISTRY.by_array_type.get(type(array))
    if dt is None:
        return np.asarray(array)
    return dt.device_of(array).to_numpy(array)


def get_device_of(array: Any) -> Device:
    """The gradhub device holding ``array``."""
    dt = REGISTRY.by_array_type.get(type(array))
    if dt is None:
        raise TypeError(
            f"chainer layer: {type(array).__name__} is not an array of a gradhub device"
        )
    return dt.device_of(array)


def serialize_value(serializer: Any, name: str, value: Any) -> Any:
    """``serializer(name, value)``, a device (CuPy) array going through a host copy and the
    result back to its device (the serializers read and write numpy arrays)."""
    if (
        hasattr(value, "shape")
        and type(value) is not np.ndarray
        and not isinstance(value, np.generic)
    ):
        dev = get_device_of(value)
        return send(serializer(name, np.asarray(dev.to_numpy(value))), dev)
    return serializer(name, value)


def activate(array: Any) -> Any:
    """The context that makes the device of ``array`` current (nothing for numpy arrays and
    None), as chainer's ``using_device`` around its updates."""
    if array is None or type(array) is np.ndarray:
        return contextlib.nullcontext()
    return get_device_of(array).activate()
