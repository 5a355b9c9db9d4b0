"""PyTorch CUDA adapter: the peers' ``fw_torch`` workloads with every tensor on the GPU.

It reuses ``fw_torch.make`` unchanged: during ``make`` the adapter's ``torch`` name points at a
thin proxy whose ``from_numpy`` returns a tensor on ``cuda`` (labels, inputs and parameters alike),
and each step ends with ``torch.cuda.synchronize()`` so that the harness times finished work.
TF32 is switched off (cuBLAS and cuDNN), so that PyTorch computes in float32 as gradhub does;
PyTorch's default runs its convolutions in TF32.
Used by ``benchmarks/run.py --device cuda`` (row ``torch``, the reference of the check).
The harness hides GPUs from its children; the original ``CUDA_VISIBLE_DEVICES`` comes back from
``BENCH_CUDA_VISIBLE_DEVICES`` before torch is imported.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

if "BENCH_CUDA_VISIBLE_DEVICES" in os.environ:
    _visible = os.environ["BENCH_CUDA_VISIBLE_DEVICES"]
    if _visible == "<unset>":
        os.environ.pop("CUDA_VISIBLE_DEVICES", None)
    else:
        os.environ["CUDA_VISIBLE_DEVICES"] = _visible

import fw_torch
from fw_torch import IMPORT, to_numpy  # noqa: F401 -- part of the adapter contract

_ERR: str | None = fw_torch._ERR


def available() -> tuple[bool, str]:
    """torch importable and built with CUDA, and a GPU visible."""
    if _ERR is not None:
        return False, _ERR
    torch = fw_torch.torch
    if not torch.cuda.is_available():
        return False, f"torch {torch.__version__} sees no CUDA GPU (a CPU-only build, or no GPU)"
    return True, ""


def version() -> str:
    """torch version and the CUDA it was built with."""
    torch = fw_torch.torch
    return f"{torch.__version__} (CUDA {torch.version.cuda})"


def info() -> dict[str, Any]:
    """The GPU's name."""
    torch = fw_torch.torch
    return {"gpu": torch.cuda.get_device_name(0), "cudnn": torch.backends.cudnn.version()}


class _CudaTorch:
    """``torch`` with ``from_numpy`` placing tensors on the GPU."""

    def __init__(self, torch: Any) -> None:
        self._torch = torch

    def __getattr__(self, name: str) -> Any:
        return getattr(self._torch, name)

    def from_numpy(self, a: Any) -> Any:
        return self._torch.from_numpy(a).to("cuda")


def make(workload: str, params: dict[str, Any]) -> Callable[[], Any]:
    """``fw_torch.make`` with the data on the GPU; each step synchronises."""
    torch = fw_torch.torch
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    fw_torch.torch = _CudaTorch(torch)
    try:
        step = fw_torch.make(workload, params)
    finally:
        fw_torch.torch = torch
    sync = torch.cuda.synchronize

    def step_cuda() -> Any:
        out = step()
        sync()
        return out

    return step_cuda
