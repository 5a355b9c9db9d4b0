"""nnabla's ``ext_utils``: ``from gradhub.compat.nnabla.ext_utils import get_extension_context``.

Example::

    >>> from gradhub.compat.nnabla.ext_utils import get_extension_context
    >>> get_extension_context("cpu")
    Context(backend='cpu', device_id=0, type_config='float')
"""

from __future__ import annotations

from typing import Any

from ...device import Context
from ...device import get_extension_context as _native_context


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
    return _native_context(ext_name, device_id=device_id, type_config=type_config)


def list_extensions() -> list[str]:
    """The extension names usable here (installed and available device kinds and aliases)."""
    from ...registry import REGISTRY, _ensure_loaded

    _ensure_loaded()
    names = REGISTRY.usable_devices()
    names += [a for a, k in REGISTRY.device_aliases.items() if k in names]
    return sorted(names)
