"""nnabla's ``ext_utils``: ``from gradhub_compat.nnabla.ext_utils import get_extension_context``.

Example::

    >>> from gradhub_compat.nnabla.ext_utils import get_extension_context
    >>> get_extension_context("cpu")
    Context(backend='cpu', device_id=0, type_config='float')
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from gradhub.device import Context, device_index
from gradhub.device import get_extension_context as _native_context


def get_extension_context(ext_name: str, **kw: Any) -> Context:
    """The context of the extension (device) ``ext_name``: ``"cpu"``, ``"cuda"`` or ``"cudnn"``.

    Keyword arguments as nnabla: ``device_id`` (default ``"0"``), ``type_config`` (default
    ``"float"``) and ``array_class`` (recorded in the context's ``array_class``; gradhub
    allocates with the device's own allocator either way). ``"cuda"``/``"cudnn"`` need the CUDA
    plugin (distribution ``gradhub-cuda``) and a usable GPU; otherwise a
    :class:`gradhub.DeviceError` says what to install or why the device is unusable.
    """
    device_id = kw.pop("device_id", "0")
    type_config = kw.pop("type_config", "float")
    array_class = kw.pop("array_class", None)
    if kw:
        raise TypeError(
            f"get_extension_context() got unexpected keyword argument(s) {sorted(kw)}; "
            "it takes device_id, type_config and array_class"
        )
    if array_class is not None and not isinstance(array_class, str):
        raise TypeError(
            f"get_extension_context(): array_class must be a string such as 'CpuCachedArray', "
            f"got {type(array_class).__name__}"
        )
    if ext_name == "cpu":
        # nnabla's CPU backend ignores the device id: scripts written for several GPUs pass
        # device_id=args.device_id with "cpu" when run without one. Checked, then ignored.
        device_index("get_extension_context", device_id)
        device_id = 0
    ctx = _native_context(ext_name, device_id=device_id, type_config=type_config)
    return ctx if array_class is None else with_array_class(ctx, array_class)


class NnablaContext(Context):
    """A :class:`gradhub.Context` that also records nnabla's ``array_class`` (the allocator's
    name, such as ``"CpuCachedArray"``). gradhub allocates with the device's own allocator (which
    keeps its pools), so the name is recorded and has no other effect. Compared and hashed as
    the plain context."""

    array_class: str = ""


def with_array_class(ctx: Context, array_class: str) -> Context:
    """``ctx`` recording ``array_class`` (see :class:`NnablaContext`)."""
    res = NnablaContext(*ctx)
    res.array_class = array_class
    return res


def import_extension_module(ext_name: str) -> ModuleType:
    """nnabla's extension module of ``ext_name`` (``"cpu"``, ``"cuda"``, ``"cudnn"``).

    It offers what nnabla scripts call on it: ``context(device_id="0", type_config="float")``,
    ``synchronize(device_id="0")``, ``device_synchronize``, ``clear_memory_cache()`` (nothing
    to clear: the device's own allocator keeps its pools), ``get_device_count()`` and
    ``get_devices()``. A device that is not installed or not usable raises the
    :class:`gradhub.DeviceError` of :func:`get_extension_context`.
    """
    get_extension_context(ext_name)  # raises for a device not installed or not usable
    kind = "cpu" if ext_name == "cpu" else get_extension_context(ext_name).backend
    mod = ModuleType(f"gradhub_compat.nnabla.ext.{ext_name}")
    mod.__doc__ = f"nnabla's extension module {ext_name!r} on gradhub"

    def context(device_id: Any = "0", type_config: str = "float", **kw: Any) -> Context:
        return get_extension_context(ext_name, device_id=device_id, type_config=type_config, **kw)

    def _device(device_id: Any) -> Any:
        from gradhub.registry import REGISTRY

        idx = 0 if kind == "cpu" else device_index("synchronize", device_id)
        return REGISTRY.device_type(kind).get(idx)

    def synchronize(device_id: Any = "0", **kw: Any) -> None:
        _device(device_id).synchronize()

    def clear_memory_cache() -> None:
        return None

    def get_device_count() -> int:
        from gradhub.registry import REGISTRY

        count = getattr(REGISTRY.device_type(kind), "device_count", None)
        return 1 if count is None else int(count() if callable(count) else count)

    def get_devices() -> list[str]:
        return [str(i) for i in range(get_device_count())]

    for fn in (context, synchronize, clear_memory_cache, get_device_count, get_devices):
        setattr(mod, fn.__name__, fn)
    mod.device_synchronize = synchronize  # type: ignore[attr-defined]
    return mod


def list_extensions() -> list[str]:
    """The extension names usable here (installed and available device kinds and aliases)."""
    from gradhub.plugins import ensure_loaded
    from gradhub.registry import REGISTRY

    ensure_loaded()
    names = REGISTRY.usable_devices()
    names += [a for a, k in REGISTRY.device_aliases.items() if k in names]
    return sorted(names)


def context(backend: Any = None, array_class: str = "", device_id: Any = "0") -> Context:
    """nnabla's ``nn.Context(backend=None, array_class='', device_id='0')``.

    ``backend`` is nnabla's list of ``"kind:type_config"`` strings (``["cudnn:float"]``; the
    first one is used; default ``["cpu:float"]``) or one such string; the result is the context of
    :func:`get_extension_context` for that kind, type configuration and ``device_id``, recording
    ``array_class``.

    Example::

        >>> import gradhub_compat.nnabla as nn
        >>> ctx = nn.Context(backend=["cpu:float"], array_class="CpuCachedArray")
        >>> ctx.backend, ctx.type_config, ctx.array_class
        ('cpu', 'float', 'CpuCachedArray')
    """
    if backend is None:
        backend = ["cpu:float"]
    backends = [backend] if isinstance(backend, str) else list(backend)
    if not backends or not all(isinstance(b, str) for b in backends):
        raise TypeError(
            f"nnabla Context: backend must be a list of strings such as ['cpu:float'], got "
            f"{backend!r}"
        )
    kind, _, type_config = backends[0].partition(":")
    if not isinstance(array_class, str):
        raise TypeError(
            f"nnabla Context: array_class must be a string, got {type(array_class).__name__}"
        )
    return get_extension_context(
        kind, device_id=device_id, type_config=type_config or "float", array_class=array_class
    )


class _ContextType(type):
    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, tuple) and isinstance(obj, _NATIVE_CONTEXT)


_NATIVE_CONTEXT: type = Context


class NnablaContextConstructor(metaclass=_ContextType):
    """``nn.Context``: calling it is :func:`context` (nnabla's arguments); every gradhub
    context is an instance of it (``isinstance(get_extension_context("cpu"), nn.Context)``)."""

    def __new__(  # type: ignore[misc]
        cls, backend: Any = None, array_class: str = "", device_id: Any = "0"
    ) -> Context:
        return context(backend, array_class, device_id)
