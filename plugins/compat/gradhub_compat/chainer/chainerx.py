"""chainer's ``chainerx`` module as a chainer installation without ChainerX has it: gradhub has
no ChainerX, so :func:`is_available` is False and :class:`ndarray` is the placeholder class of
chainer's ``chainerx`` package (making one raises RuntimeError). Programs that compare a device's
array module with ``chainerx`` (``if device.xp is chainerx:``) run their numpy branch.

Replace ``import chainerx`` by ``from gradhub_compat.chainer import chainerx``.

Example::

    >>> from gradhub_compat.chainer import chainerx
    >>> chainerx.is_available()
    False
"""

from __future__ import annotations

from typing import Any

__all__ = ["is_available", "ndarray"]


def is_available() -> bool:
    """False: gradhub has no ChainerX (as chainer built without it)."""
    return False


class ndarray:
    """The placeholder of chainer's ``chainerx.ndarray`` without ChainerX (for ``isinstance``
    checks, always False); making one raises RuntimeError, as chainer."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError("chainerx is not available.")
