"""chainer's ``chainer.backends``: :mod:`~gradhub_compat.chainer.backends.cuda` (the array
transfers ``to_cpu``/``to_gpu``, ``get_array_module``, ``get_device_from_id``) over gradhub's
devices; the CPU backend is numpy. Other backends (``intel64``) raise NotImplementedError naming
the page."""

from __future__ import annotations

from typing import Any

from .._device import PAGE
from . import cuda

__all__ = ["cuda"]


def __getattr__(name: str) -> Any:
    if not name.startswith("__"):
        raise NotImplementedError(
            f"chainer.backends.{name} is not supported by gradhub (supported: cuda); see {PAGE}"
        )
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
