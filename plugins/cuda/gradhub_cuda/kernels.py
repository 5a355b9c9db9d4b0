"""Faster CUDA kernels keyed by function name.

A kernel is added here only where a GPU measurement shows a gain over the function's generic
``xp`` kernel running on CuPy; each one is covered by the op matrix on ``cuda`` like the generic
kernels. None has been measured yet (no GPU was available when this plugin was written; see
docs/cuda.md), so the table is empty and every function runs its generic kernel on CuPy.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

KERNELS: dict[str, Callable[..., Any]] = {}
