"""mxnet contexts: ``mx.cpu()``, ``mx.gpu(i)``, ``mx.current_context()``.

A context names a device; ``mx.gpu(i)`` maps onto gradhub's ``cuda`` device, which needs the
CUDA plugin (distribution ``gradhub-cuda``) and a GPU. Creating a context never fails (as in
mxnet); allocating an array or binding on an unusable device raises a
:class:`gradhub.DeviceError` that says what to install or why the device is unusable.

Example::

    >>> import gradhub_compat.mxnet as mx
    >>> mx.cpu(), mx.gpu(1)
    (cpu(0), gpu(1))
"""

from __future__ import annotations

import threading
from typing import Any

from gradhub.device import CPU, Device
from gradhub.device import get_extension_context as _native_context

_KINDS = {"cpu": "cpu", "gpu": "cuda", "cpu_pinned": "cpu"}


class Context:
    """A device type (``"cpu"`` or ``"gpu"``) and id; usable as ``with mx.gpu(0):``."""

    __slots__ = ("device_id", "device_type")
    device_type: str
    device_id: int

    def __init__(self, device_type: str | Context, device_id: int = 0) -> None:
        if isinstance(device_type, Context):
            other = device_type
            device_type, device_id = other.device_type, other.device_id
        if device_type not in _KINDS:
            raise ValueError(
                f"mxnet Context: device_type must be one of {sorted(_KINDS)}, got {device_type!r}"
            )
        self.device_type = device_type
        self.device_id = int(device_id)

    def device(self) -> Device:
        """The gradhub device of this context (raises if it is not installed or usable)."""
        kind = _KINDS[self.device_type]
        if kind == "cpu":
            return CPU
        from gradhub.registry import REGISTRY

        ctx = _native_context(kind, device_id=self.device_id)
        return REGISTRY.device_type(ctx.backend).get(ctx.device_id)

    def __eq__(self, other: Any) -> bool:
        return (
            isinstance(other, Context)
            and other.device_type == self.device_type
            and other.device_id == self.device_id
        )

    def __hash__(self) -> int:
        return hash((self.device_type, self.device_id))

    def __repr__(self) -> str:
        return f"{self.device_type}({self.device_id})"

    __str__ = __repr__

    def __enter__(self) -> Context:
        _state.stack.append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        _state.stack.pop()


class _State(threading.local):
    def __init__(self) -> None:
        self.stack: list[Context] = []


_state = _State()


def cpu(device_id: int = 0) -> Context:
    """The CPU context."""
    return Context("cpu", device_id)


def gpu(device_id: int = 0) -> Context:
    """The context of GPU ``device_id`` (gradhub's ``cuda`` device)."""
    return Context("gpu", device_id)


def cpu_pinned(device_id: int = 0) -> Context:
    """The pinned-memory CPU context (the CPU in gradhub)."""
    return Context("cpu_pinned", device_id)


def current_context() -> Context:
    """The innermost ``with ctx:`` context of this thread, else ``cpu(0)``."""
    return _state.stack[-1] if _state.stack else Context("cpu", 0)


def num_gpus() -> int:
    """The number of usable GPUs (0 without the CUDA plugin or a GPU)."""
    from gradhub.plugins import ensure_loaded
    from gradhub.registry import REGISTRY

    ensure_loaded()
    dt = REGISTRY.device_types.get("cuda")
    if dt is None or not REGISTRY.availability("cuda")[0]:
        return 0
    count = getattr(dt, "count", None)
    return int(count()) if callable(count) else 1
