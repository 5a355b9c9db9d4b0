"""Random numbers: :func:`seed` and the shared :func:`generator`.

``gradhub.seed(n)`` makes a program's random draws repeatable, as ``torch.manual_seed`` and
nnabla's ``seed``: it reseeds

- the shared numpy :class:`~numpy.random.Generator` returned by :func:`generator`, which code
  without a generator of its own draws from (user code, plugins);
- every generator that a plugin adds through the hook ``gradhub_add_seeders`` (gradhub-nn-ops:
  the initializers' default generator and dropout's global one, used with ``seed=-1``); each
  seeder receives ``n`` itself.

Before any ``seed`` call, :func:`generator` is seeded from fresh OS entropy, and gradhub-nn-ops'
initializers use nnabla's fixed default (``RandomState(313)``), so models are already identical
from one fresh process to the next; dropout draws differ until a seed is set.

The generators are process-wide (shared by all threads, as PyTorch's default generator): draws
from several threads interleave in an unspecified order. Seed, then draw from one thread for
repeatable results, or pass explicit generators (``rng=`` of the parametric functions).
"""

from __future__ import annotations

import numpy as np

from .plugins import plugin_seeders

_GEN: list[np.random.Generator] = []  # [] until first use (importing changes nothing)


def generator() -> np.random.Generator:
    """The shared numpy Generator, reseeded by :func:`seed` (fresh entropy before any seed).

    Example::

        >>> import gradhub as gh
        >>> gh.seed(0)
        >>> a = gh.random.generator().random(2)
        >>> gh.seed(0)
        >>> bool((gh.random.generator().random(2) == a).all())
        True
    """
    if not _GEN:
        _GEN.append(np.random.default_rng())
    return _GEN[0]


def seed(n: int) -> None:
    """Seed every random source of gradhub and of its loaded plugins with ``n``.

    ``n`` is an integer ``>= 0`` (numpy's seeds). The shared :func:`generator` becomes
    ``numpy.random.default_rng(n)``, then each seeder that the plugins add
    (``gradhub_add_seeders``) is called with ``n``. Two fresh processes that call
    ``gradhub.seed(0)`` and then run the same program build the same parameters and draw the
    same dropout masks.

    Example::

        >>> import gradhub as gh
        >>> gh.seed(0)
        >>> gh.random.generator().integers(0, 100, 3)
        array([85, 63, 51])
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"seed: n must be an integer, got {type(n).__name__}")
    if n < 0:
        raise ValueError(f"seed: n must be >= 0, got {n}")
    n = int(n)
    _GEN[:] = [np.random.default_rng(n)]
    for _name, fn, _provider in plugin_seeders():
        fn(n)


__all__ = ["generator", "seed"]
