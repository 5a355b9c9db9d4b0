"""Whether the tests that need a GPU can run here, and why not."""

from __future__ import annotations

from typing import Any

import gradhub as gh
import numpy as np
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


def host_arrays(out: Any) -> list[np.ndarray]:
    """A step's result (a Variable, an array, or a tuple or list of them) as host numpy arrays."""
    import cupy

    vs = out if isinstance(out, (tuple, list)) else [out]
    return [cupy.asnumpy(v.d) if isinstance(v, gh.Variable) else np.asarray(v) for v in vs]


def agree_within(
    got: list[np.ndarray], want: list[np.ndarray], what: str, rtol: dict[Any, float]
) -> bool:
    """Whether ``got`` equals ``want`` bit for bit; asserts that each array has the other's dtype
    and shape and agrees within ``rtol[dtype]`` of its largest magnitude (exactly for a dtype
    not in ``rtol``)."""
    assert len(got) == len(want), what
    exact = True
    for k, (u, v) in enumerate(zip(got, want)):
        assert u.dtype == v.dtype and u.shape == v.shape, f"{what}: value {k}"
        if np.array_equal(u, v, equal_nan=True):
            continue
        exact = False
        tol = rtol.get(v.dtype, 0.0) * float(np.max(np.abs(v), initial=0.0))
        np.testing.assert_allclose(u, v, rtol=0, atol=tol, err_msg=f"{what}: value {k}")
    return exact
