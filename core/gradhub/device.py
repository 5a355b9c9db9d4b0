"""Devices and contexts.

A *device type* (``cpu``, ``cuda``) is contributed by a plugin; the numpy CPU device is built in.
A :class:`Device` is one instance of a type (``cpu``, ``cuda:1``) and knows its array module
``xp``, how to move arrays onto itself and back to numpy. A :class:`Context` names the device that
new data goes to; ``set_default_context`` and ``context_scope`` choose it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from types import ModuleType
from typing import Any, NamedTuple, Protocol

import numpy as np

from .errors import CaptureUnsupported, DeviceError

#: Device kinds that gradhub knows about but does not ship, with the distribution providing them.
KNOWN_DEVICE_DISTRIBUTIONS = {"cuda": "gradhub-cuda", "cudnn": "gradhub-cuda"}


class Device:
    """One device: its kind, index and array module.

    Subclasses override :meth:`asarray` and :meth:`to_numpy` for devices whose arrays are not numpy
    arrays.
    """

    #: whether :meth:`capture` can record work (devices that set it override :meth:`capture`)
    can_capture = False

    def __init__(self, kind: str, xp: ModuleType, index: int = 0) -> None:
        self.kind = kind
        self.xp = xp
        self.index = index

    @property
    def name(self) -> str:
        """``cpu`` for the CPU, ``kind:index`` otherwise."""
        return self.kind if self.kind == "cpu" else f"{self.kind}:{self.index}"

    def asarray(self, data: Any, dtype: Any = None) -> Any:
        """Return ``data`` as an array on this device (no copy where possible)."""
        return self.xp.asarray(data, dtype=dtype)

    def to_numpy(self, array: Any) -> np.ndarray:
        """Return a numpy copy (or view, on the CPU) of an array of this device."""
        return np.asarray(array)

    def synchronize(self) -> None:
        """Wait until the device has finished its queued work."""

    def activate(self) -> AbstractContextManager[Any]:
        """A context in which kernels run on this device (for devices with several indices)."""
        return nullcontext()

    def capture(self, run: Callable[[], None]) -> DeviceGraph:
        """Record the work that ``run()`` queues on this device into a graph, without running
        it; the graph's ``launch()`` then runs all of it at once (CUDA graphs). ``run`` is
        called once, here. Devices that cannot record raise
        :class:`~gradhub.errors.CaptureUnsupported` (the default), as do devices whose ``run``
        did something a graph cannot replay (the message says what).

        Example::

            >>> import gradhub as gh
            >>> try:
            ...     gh.Variable([1.0]).device.capture(lambda: None)
            ... except gh.CaptureUnsupported as e:
            ...     print(e)
            device 'cpu' cannot record its work into a graph (it runs each kernel as it is called)
        """
        raise CaptureUnsupported(
            f"device {self.name!r} cannot record its work into a graph (it runs each kernel as "
            "it is called)"
        )

    def __repr__(self) -> str:
        return f"Device({self.name!r})"


class DeviceGraph(Protocol):
    """What :meth:`Device.capture` returns: recorded device work, replayed by :meth:`launch`."""

    def launch(self) -> bool:
        """Run the recorded work again (on the device's current queue); False when a check
        that the recorded kernels deferred (an argument read on the device, such as a label
        range) failed: the caller then runs the work without the graph, which raises the
        check's error."""
        ...


class DeviceType:
    """A kind of device, as a plugin registers it.

    ``array_types`` are the array classes living on this kind of device; :meth:`device_of` picks the
    instance an array is on; :meth:`availability` says whether the device can be used here, and why
    not.
    """

    kind: str = ""
    array_types: tuple[type, ...] = ()
    #: the DLPack device types (``DLDeviceType`` codes: 1 CPU, 2 CUDA, 10 ROCm...) whose arrays
    #: :meth:`from_dlpack` imports; :func:`gradhub.from_dlpack` picks the device type by them
    dlpack_device_types: tuple[int, ...] = ()

    def from_dlpack(self, obj: Any, index: int = 0) -> Any:
        """An array of this device's type sharing the memory of ``obj`` (an object with
        ``__dlpack__``), on the device ``index``; by default ``xp.from_dlpack`` of that device
        (numpy's, CuPy's) with the device current."""
        dev = self.get(index)
        with dev.activate():
            return dev.xp.from_dlpack(obj)

    def availability(self) -> tuple[bool, str]:
        """``(True, "")`` when usable, else ``(False, reason)``."""
        return True, ""

    def get(self, index: int = 0) -> Device:
        """The device with this index."""
        raise NotImplementedError

    def device_of(self, array: Any) -> Device:
        """The device an array of this type lives on."""
        return self.get(0)


class CpuDevice(Device):
    """The built-in numpy CPU device."""

    def __init__(self) -> None:
        super().__init__("cpu", np, 0)

    def asarray(self, data: Any, dtype: Any = None) -> np.ndarray:
        if type(data) is not np.ndarray:
            # Arrays of other devices (CuPy) know how to come back to the host.
            get = getattr(data, "get", None)
            if get is not None and not isinstance(data, (np.generic, dict)):
                data = get()
        return np.asarray(data, dtype=dtype)


class CpuDeviceType(DeviceType):
    """The numpy CPU device type, always available."""

    kind = "cpu"
    array_types = (np.ndarray,)
    dlpack_device_types = (1,)  # kDLCPU

    def __init__(self) -> None:
        self._device = CpuDevice()

    def get(self, index: int = 0) -> Device:
        if index != 0:
            raise DeviceError(f"device 'cpu:{index}': the CPU device has only index 0")
        return self._device

    def device_of(self, array: Any) -> Device:
        return self._device


CPU_TYPE = CpuDeviceType()
CPU = CPU_TYPE.get(0)


class Context(NamedTuple):
    """Where new data and computations go: a backend (device kind) and a device index.

    ``type_config`` is kept for nnabla compatibility (``"float"`` or ``"half"``). Immutable,
    compared and hashed by value.
    """

    backend: str = "cpu"
    device_id: int = 0
    type_config: str = "float"

    @property
    def device_name(self) -> str:
        return self.backend if self.backend == "cpu" else f"{self.backend}:{self.device_id}"


def parse_device_name(name: str) -> tuple[str, int]:
    """Split ``"cuda:1"`` into ``("cuda", 1)``; ``"cpu"`` gives ``("cpu", 0)``.

    Raises :class:`~gradhub.errors.DeviceError` for an empty name, an empty kind (``":0"``) and an
    index after ``:`` that is missing (``"cpu:"``) or not a non-negative integer.
    """
    if not isinstance(name, str) or not name:
        raise DeviceError(f"device name must be a non-empty string, got {name!r}")
    kind, sep, idx = name.partition(":")
    if not kind:
        raise DeviceError(f"device name {name!r}: the device kind before ':' is missing")
    if not sep:
        return kind, 0
    if not (idx.isascii() and idx.isdigit()):
        raise DeviceError(f"device name {name!r}: the index after ':' must be an integer >= 0")
    return kind, int(idx)


#: the values of ``type_config`` (nnabla's), see :class:`Context`
TYPE_CONFIGS = ("float", "half")


def device_index(func: str, device_id: Any) -> int:
    """``device_id`` as a non-negative int: an int or a string of digits (nnabla passes "0").

    Anything else raises (TypeError for another type, ValueError for a negative number or a
    string that is not digits) with a message starting with ``func``, the caller's name. A
    service for front-ends that take device ids (gradhub-compat's ``ext_utils``).
    """
    if isinstance(device_id, str):
        text = device_id.strip()
        if not (text.isascii() and text.isdigit()):
            raise ValueError(f"{func}: device_id must be a non-negative integer, got {device_id!r}")
        return int(text)
    if isinstance(device_id, bool) or not isinstance(device_id, (int, np.integer)):
        raise TypeError(
            f"{func}: device_id must be an int (or a string of digits), got "
            f"{type(device_id).__name__} {device_id!r}"
        )
    if device_id < 0:
        raise ValueError(f"{func}: device_id must be a non-negative integer, got {device_id}")
    return int(device_id)


_device_index = device_index  # the name the core's own callers use


class _ContextState(threading.local):
    stack: list[Context] | None = None


_default_context = Context()
_ctx_state = _ContextState()


class DeviceLookup(Protocol):
    """What contexts ask of the device tables (:class:`gradhub.registry.Registry` answers)."""

    def device_type(self, kind: str) -> DeviceType: ...

    def availability(self, kind: str) -> tuple[bool, str]: ...


#: The device tables that contexts resolve their backend in. The registry sits above this module
#: (it imports it), so it binds itself here when imported (:func:`bind_device_lookup`; see "Layers"
#: in docs/design.md).
_lookup: DeviceLookup | None = None


def bind_device_lookup(lookup: DeviceLookup) -> None:
    """Make ``lookup`` the device tables of contexts (gradhub.registry calls it once)."""
    global _lookup
    _lookup = lookup


def _devices() -> DeviceLookup:
    if _lookup is None:  # gradhub/__init__ imports gradhub.registry, which binds it
        raise DeviceError("no device registry is bound: import gradhub first")
    return _lookup


def current_context() -> Context:
    """The context in force in this thread: the innermost ``context_scope``, else the default."""
    stack = _ctx_state.stack
    return stack[-1] if stack else _default_context


def get_extension_context(
    ext_name: str = "cpu", device_id: int | str = 0, type_config: str = "float"
) -> Context:
    """Return the context of a device, checking that the device is installed and usable.

    ``ext_name`` is a device kind (``"cpu"``, ``"cuda"``, its alias ``"cudnn"``) or a name with an
    index (``"cuda:1"``, which takes precedence over ``device_id``). ``device_id`` is a
    non-negative int or a string of digits (as nnabla passes it); ``type_config`` is ``"float"``
    or ``"half"``.

    Raises :class:`~gradhub.errors.DeviceError` naming the distribution to install when no plugin
    provides the device, saying why the device is unusable (also when the plugin's availability
    probe itself raises: the error then names the device, its plugin distribution and the
    original error), and for a malformed name; ``ValueError``/``TypeError`` naming the argument
    for a bad ``device_id`` (``"abc"``, ``-1``, ``1.7``) or ``type_config``.

    Example::

        >>> import gradhub as gh
        >>> gh.get_extension_context("cpu")
        Context(backend='cpu', device_id=0, type_config='float')
    """
    func = "get_extension_context"
    kind, idx = parse_device_name(ext_name)
    if ":" not in ext_name:
        idx = _device_index(func, device_id)
    if not isinstance(type_config, str):
        raise TypeError(f"{func}: type_config must be a string, got {type(type_config).__name__}")
    if type_config not in TYPE_CONFIGS:
        raise ValueError(
            f"{func}: type_config must be one of {', '.join(map(repr, TYPE_CONFIGS))}, "
            f"got {type_config!r}"
        )
    devices = _devices()
    dtype_ = devices.device_type(kind)  # raises with the distribution to install
    ok, why = devices.availability(dtype_.kind)  # a probe that raises is a reason too
    if not ok:
        raise DeviceError(f"device {ext_name!r} is unusable here: {why}")
    dtype_.get(idx)  # validates the index
    return Context(dtype_.kind, idx, type_config)


def set_default_context(ctx: Context) -> None:
    """Make ``ctx`` the default context of every thread (outside ``context_scope`` blocks)."""
    global _default_context
    if not isinstance(ctx, Context):
        raise TypeError(f"set_default_context: ctx must be a Context, got {type(ctx).__name__}")
    _default_context = ctx


def get_default_context() -> Context:
    """The default context (``cpu`` unless changed by :func:`set_default_context`)."""
    return _default_context


@contextmanager
def context_scope(ctx: Context) -> Iterator[Context]:
    """Use ``ctx`` for new data in this thread inside the block."""
    if not isinstance(ctx, Context):
        raise TypeError(f"context_scope: ctx must be a Context, got {type(ctx).__name__}")
    if _ctx_state.stack is None:
        _ctx_state.stack = []
    _ctx_state.stack.append(ctx)
    try:
        yield ctx
    finally:
        _ctx_state.stack.pop()


def context_device() -> Device:
    """The device of the current context."""
    ctx = current_context()
    if ctx.backend == "cpu":
        return CPU
    return _devices().device_type(ctx.backend).get(ctx.device_id)


_TUNED: dict[str, int] = {}
#: glibc's ``libc`` (found at the first use; False where there is none: not Linux, or musl)
_glibc: Any = None


def _libc() -> Any:
    """The loaded C library when it is glibc on Linux (it has ``mallopt`` and ``malloc_trim``),
    else None; looked up once."""
    global _glibc
    if _glibc is None:
        import ctypes
        import sys

        _glibc = False
        if sys.platform.startswith("linux"):
            try:  # the symbols already loaded into the process (no search for the library)
                libc = ctypes.CDLL(None)
            except OSError:
                libc = None
            # musl has neither function
            if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim"):
                _glibc = libc
    return _glibc or None


def tune_host_allocator(
    mmap_threshold: int = 256 * 1024 * 1024, trim_threshold: int = 512 * 1024 * 1024
) -> bool:
    """Make glibc's malloc keep freed memory for reuse instead of returning it to the system.

    Every step of a network allocates fresh arrays of a few megabytes; by default glibc serves
    them with ``mmap`` and gives them back on ``free``, so the next step touches brand-new pages
    and pays a page fault for each (about 20-25% of a small CNN's step on a 2-core VM). With
    ``M_MMAP_THRESHOLD`` and ``M_TRIM_THRESHOLD`` raised, the pages stay in the process and are
    reused. The price: up to ``trim_threshold`` bytes of freed memory stay counted in the process's
    resident size. This changes the allocator of the whole process, so gradhub never does it on
    its own: call this function, or set ``GRADHUB_TUNE_MALLOC=1`` (applied when plugins load).

    Returns True when the settings were applied (Linux with glibc), False elsewhere.

    Example (at the start of a training program)::

        import gradhub as gh
        gh.tune_host_allocator()   # True on Linux/glibc
    """
    libc = _libc()
    if libc is None:
        return False
    m_trim_threshold, m_mmap_threshold = -1, -3  # from glibc's malloc.h
    ok = bool(libc.mallopt(m_mmap_threshold, int(mmap_threshold))) and bool(
        libc.mallopt(m_trim_threshold, int(trim_threshold))
    )
    if ok:
        _TUNED.update(mmap_threshold=int(mmap_threshold), trim_threshold=int(trim_threshold))
    return ok


def trim_host_heap() -> bool:
    """Give the free pages of glibc's heap back to the system (``malloc_trim(0)``), unless
    :func:`tune_host_allocator` asked glibc to keep freed memory.

    CPython's compiler needs about 70 bytes of short-lived memory per character of source, and
    glibc keeps those pages after the compile: a plan's generated code of 45,000 characters
    (a 16-layer MLP's backward schedule) left 3.8 MB of free heap in the process's resident
    size. :mod:`gradhub.plan` calls this after compiling a long generated source; it takes
    about 0.7 ms. Returns whether the call was made (False where the C library is not glibc, or
    the allocator was tuned to keep memory).

    Example::

        >>> from gradhub.device import trim_host_heap
        >>> trim_host_heap() in (True, False)
        True
    """
    libc = _libc()
    if libc is None or _TUNED:
        return False
    libc.malloc_trim(0)
    return True
