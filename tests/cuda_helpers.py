"""Whether the tests that need a GPU can run here, and why not."""

from __future__ import annotations

import pytest
from gradhub import plugins
from gradhub.registry import REGISTRY


def cuda_reason() -> str:
    """Why the ``cuda`` device is not usable here ("" when it is)."""
    plugins.load_plugins() if not plugins.STATE.loaded else None
    dt = REGISTRY.device_types.get("cuda")
    if dt is None:
        return "gradhub-cuda is not installed"
    ok, why = dt.availability()
    return "" if ok else why


REASON = cuda_reason()
#: skips a test, with one reason, where no usable CUDA device exists
gpu = pytest.mark.skipif(bool(REASON), reason=f"no usable CUDA device: {REASON}")
