"""chainer 7.8.1's ``chainer/functions/util`` functions beyond the core of
:mod:`gradhub_compat.chainer.functions` (which re-exports them): ``forget``, gradient
checkpointing on :func:`gradhub.remat.checkpoint`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gradhub.modes import is_recording
from gradhub.remat import checkpoint
from gradhub.variable import Variable as _NativeVariable

from .. import Variable, using_config
from ..functions import _out

__all__ = ["forget"]


def forget(func: Callable[..., Any], *xs: Any) -> Any:
    """``func(*xs)`` without keeping its intermediate results: chainer's ``F.forget``, on
    :func:`gradhub.checkpoint`. The forward pass keeps only the inputs; the backward pass calls
    ``func`` again (with ``chainer.config.in_recomputing`` True) and differentiates it. The array
    inputs become Variables that require a gradient; ``func`` returns a Variable or a tuple of
    Variables (else chainer's ``RuntimeError``), and a tuple of one gives that Variable, as in
    chainer. Parameters that ``func`` reads (a link's) receive their gradients too. Unlike
    chainer's, the gradients can be differentiated again (chainer raises), and random functions
    inside ``func`` (``F.dropout``) draw the same numbers in the recomputation (chainer does not
    support them).

    Example::

        >>> import numpy as np
        >>> from gradhub_compat import chainer
        >>> import gradhub_compat.chainer.functions as F
        >>> x = chainer.Variable(np.array([2.0]))
        >>> y = F.forget(lambda a, b: a * b + a, x, np.array([3.0]))
        >>> y
        variable([8.])
        >>> F.sum(y).backward(); x.grad
        array([4.])
    """
    if not callable(func):
        raise TypeError("func must be callable")
    vs = tuple(x if isinstance(x, _NativeVariable) else Variable(x, requires_grad=True) for x in xs)
    calls = [0]

    def run(*args: Any) -> tuple[Any, ...]:
        # the first call and a replay of the graph (recording off) are forward passes, the
        # others the backward pass's recomputation (chainer's two configuration flags)
        again = calls[0] > 0 and is_recording()
        calls[0] += 1
        with (
            using_config("in_recomputing", again),
            using_config("_will_recompute", not again),
        ):
            outs = func(*(_out(a) for a in args))
        if isinstance(outs, tuple):
            for i, out in enumerate(outs):
                if isinstance(out, _NativeVariable):
                    continue
                n = i + 1
                suffix = {1: "st", 2: "nd", 3: "rd"}.get(n if n < 20 else n % 10, "th")
                raise RuntimeError(
                    f"{n}{suffix} element of a returned tuple is not Variable, but is {type(out)}"
                )
            return outs
        if isinstance(outs, _NativeVariable):
            return (outs,)
        raise RuntimeError(
            f"A tuple of Variables or a Variable are expected, but {type(outs)} is returned."
        )

    res = tuple(_out(o) for o in checkpoint(run, *vs))
    return res[0] if len(res) == 1 else res
