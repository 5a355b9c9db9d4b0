"""chainer's device specifiers mapped onto gradhub devices (``Variable.to_device``,
``Link.to_device``).

``'@numpy'``, the ``numpy`` module and ``-1`` are the CPU; ``'@cupy:N'``, an int ``N >= 0`` and
gradhub's own names (``'cpu'``, ``'cuda:N'``) a CUDA device of the gradhub-cuda plugin (a
gradhub :class:`~gradhub.device.Device` is taken as it is). ChainerX (``'native:0'``,
``'cuda:N'`` in chainer's sense) and iDeep (``'@intel64'``) raise NotImplementedError.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gradhub.device import Device, parse_device_name
from gradhub.registry import REGISTRY

PAGE = "docs/migration-chainer.md"


def get_device(spec: Any, where: str) -> Device:
    """The gradhub device named by chainer's device specifier ``spec``."""
    if isinstance(spec, Device):
        return spec
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
    if kind not in ("cuda",):
        raise ValueError(f"{where}: unknown device {name!r}; use '@numpy' or '@cupy:N'")
    from gradhub.plugins import ensure_loaded

    ensure_loaded()  # the cuda device type comes with the gradhub-cuda plugin
    try:
        ok, why = REGISTRY.availability(kind)
    except Exception as e:  # no such device type registered
        ok, why = False, str(e)
    if not ok:
        raise RuntimeError(
            f"{where}: no usable gradhub CUDA device for {name!r} ({why}); install gradhub-cuda "
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
    host = array if isinstance(array, np.ndarray) else np.asarray(_to_numpy(array))
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
