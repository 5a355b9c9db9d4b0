"""The CuPy CUDA device type.

Nothing here imports CuPy or touches a GPU at import time: :class:`CudaDeviceType` imports CuPy
when gradhub loads the plugin (once) and asks the driver how many GPUs there are the first time
someone asks whether the device is available.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from types import ModuleType
from typing import Any

import numpy as np
from gradhub.device import Device, DeviceGraph, DeviceType
from gradhub.errors import DeviceError

INSTALL_HINT = "pip install 'gradhub-cuda[cuda13]' (or [cuda12]) to get CuPy"


def _import_cupy() -> tuple[ModuleType | None, str]:
    try:
        import cupy
    except Exception as e:  # ImportError, or a CUDA library that fails to load
        return (
            None,
            f"CuPy is not installed or failed to import ({type(e).__name__}: {e}); {INSTALL_HINT}",
        )
    return cupy, ""


class CudaDevice(Device):
    """One GPU: CuPy arrays allocated from CuPy's memory pool on CuPy's default stream."""

    can_capture = True

    def __init__(self, cupy: ModuleType, index: int) -> None:
        super().__init__("cuda", cupy, index)
        self._cuda_device = cupy.cuda.Device(index)

    def asarray(self, data: Any, dtype: Any = None) -> Any:
        """Copy host data (or another GPU's array) onto this GPU; no copy if already here."""
        cp = self.xp
        if isinstance(data, cp.ndarray) and data.device.id == self.index:
            return data if dtype is None else data.astype(dtype, copy=False)
        with self._cuda_device:
            if isinstance(data, cp.ndarray):
                return cp.array(data, dtype=dtype, copy=True)
            return cp.asarray(np.asarray(data), dtype=dtype)

    def to_numpy(self, array: Any) -> np.ndarray:
        return self.xp.asnumpy(array)

    def synchronize(self) -> None:
        self._cuda_device.synchronize()

    def activate(self) -> AbstractContextManager[Any]:
        return self._cuda_device  # type: ignore[no-any-return]

    def capture(self, run: Callable[[], None]) -> DeviceGraph:
        """Record what ``run()`` launches into a CUDA graph (see :mod:`gradhub_cuda.capture`)."""
        from .capture import capture

        return capture(self.xp, self._cuda_device, run)


class CudaDeviceType(DeviceType):
    """The ``cuda`` device kind (alias ``cudnn``), backed by CuPy."""

    kind = "cuda"
    dlpack_device_types = (2,)  # kDLCUDA: gradhub.from_dlpack imports with cupy.from_dlpack

    def __init__(self, cupy: ModuleType | None = None, import_error: str = "") -> None:
        if cupy is None and not import_error:
            cupy, import_error = _import_cupy()
        self.cupy = cupy
        self._import_error = import_error
        self.array_types = (cupy.ndarray,) if cupy is not None else ()
        self._availability: tuple[bool, str] | None = None
        self._devices: dict[int, CudaDevice] = {}

    def device_count(self) -> int:
        """How many GPUs the driver reports (0 when unusable)."""
        ok, _ = self.availability()
        return int(self.cupy.cuda.runtime.getDeviceCount()) if ok else 0  # type: ignore[union-attr]

    def availability(self) -> tuple[bool, str]:
        if self._availability is None:
            self._availability = self._probe()
        return self._availability

    def _probe(self) -> tuple[bool, str]:
        cp = self.cupy
        if cp is None:
            return False, self._import_error
        rt = cp.cuda.runtime
        try:
            n = rt.getDeviceCount()
        except Exception as e:  # CUDARuntimeError: no driver, or driver too old
            return False, f"no usable CUDA driver or GPU ({type(e).__name__}: {e})"
        if n == 0:
            return False, "no GPU found by the CUDA driver"
        try:
            driver = rt.driverGetVersion()
            runtime = rt.runtimeGetVersion()
        except Exception as e:
            return False, f"cannot read the CUDA driver version ({type(e).__name__}: {e})"
        # minor version compatibility (CUDA 11 and later): a driver runs programs built with any
        # toolkit of its major version, so a 12.2 driver runs a CuPy built for 12.8; only an
        # older major version (a 12.x driver, CuPy for 13.x) cannot
        if driver // 1000 < runtime // 1000:
            return False, (
                f"the CUDA driver is too old: it supports CUDA {_ver(driver)}, CuPy (built for "
                f"CUDA {_ver(runtime)}) needs a CUDA {runtime // 1000}.x driver; upgrade the "
                f"driver or install a CuPy for CUDA {driver // 1000} (cupy-cuda{driver // 1000}x)"
            )
        return True, ""

    def get(self, index: int = 0) -> Device:
        ok, why = self.availability()
        if not ok:
            raise DeviceError(f"device 'cuda:{index}' is unusable here: {why}")
        dev = self._devices.get(index)
        if dev is None:
            n = self.device_count()
            if not 0 <= index < n:
                raise DeviceError(f"device 'cuda:{index}' does not exist: {n} GPU(s) found")
            dev = self._devices[index] = CudaDevice(self.cupy, index)  # type: ignore[arg-type]
        return dev

    def device_of(self, array: Any) -> Device:
        return self.get(int(array.device.id))


def _ver(v: int) -> str:
    return f"{v // 1000}.{(v % 1000) // 10}"
