"""The hook implementations of gradhub-cuda.

The plugin only adds: the ``cuda`` device (alias ``cudnn``) and, where measurement shows a gain,
faster kernels keyed by (function, ``cuda``) and rule kernels (faster first-order versions of
existing rules) keyed by (function, ``cuda``). It defines no functions and no backward rules, so
uninstalling it cannot change any gradient beyond rounding. Every gradhub-nn-ops function runs on
``cuda``: through a kernel of :mod:`gradhub_cuda.kernels` where one was measured faster, else its
generic ``xp`` kernel.
"""

from __future__ import annotations

from typing import Any

from gradhub import hookimpl


@hookimpl
def gradhub_add_devices(register: Any) -> None:
    """Register the ``cuda`` device type, usable or not (its availability says why not)."""
    from .device import CudaDeviceType

    register.device(CudaDeviceType(), aliases=("cudnn",))


class _Fuser:
    """:data:`gradhub_cuda.fusion.FUSER`, imported at its first use (a plan made on ``cuda``),
    not while the plugins load: gradhub's import and first call (W6) do not pay for it."""

    def accepts(self, name: str, attrs: dict[str, Any], dtype: Any) -> bool:
        from .fusion import FUSER

        return FUSER.accepts(name, attrs, dtype)

    def build(self, chain: Any) -> Any:
        from .fusion import FUSER

        return FUSER.build(chain)


@hookimpl
def gradhub_add_kernels(register: Any) -> None:
    """Register the CUDA kernels of existing functions, the rule kernels of their rules (see
    :mod:`gradhub_cuda.kernels`) and the elementwise fuser of plans (:mod:`gradhub_cuda.fusion`)."""
    from .kernels import KERNELS, RULE_KERNELS

    register.fuser("cuda", _Fuser())

    for name, kernel in KERNELS.items():
        if register.has_function(name):
            register.kernel(name, "cuda", kernel)
    for name, kernel in RULE_KERNELS.items():
        if register.has_function(name):
            register.rule_kernel(name, "cuda", kernel)
