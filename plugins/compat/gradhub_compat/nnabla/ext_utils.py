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

    Keyword arguments as nnabla: ``device_id`` (default ``"0"``) and ``type_config`` (default
    ``"float"``). ``"cuda"``/``"cudnn"`` need the CUDA plugin (distribution ``gradhub-cuda``) and
    a usable GPU; otherwise a :class:`gradhub.DeviceError` says what to install or why the device
    is unusable.
    """
    device_id = kw.pop("device_id", "0")
    type_config = kw.pop("type_config", "float")
    if kw:
        raise TypeError(
            f"get_extension_context() got unexpected keyword argument(s) {sorted(kw)}; "
            "it takes device_id and type_config"
        )
    if ext_name == "cpu":
        # nnabla's CPU backend ignores the device id: scripts written for several GPUs pass
        # device_id=args.device_id with "cpu" when run without one. Checked, then ignored.
        device_index("get_extension_context", device_id)
        device_id = 0
    return _native_context(ext_name, device_id=device_id, type_config=type_config)


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
