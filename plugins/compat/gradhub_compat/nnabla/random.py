"""nnabla's ``nnabla.random``: ``nn.random.seed(n)``, ``nn.random.prng``.

As in nnabla, the parametric functions and the initializers draw their initial values (without
``rng=``) from ``prng``, a ``numpy.random.RandomState`` seeded 313, and the random functions
(``F.rand``, ``F.randn``, ``F.randint``, ``F.dropout``, ``F.random_flip``...) with ``seed=-1``
from a global generator of their own. :func:`seed` reseeds both (``prng`` becomes
``RandomState(n)``, the same draws as nnabla's; the random functions' generator is numpy's,
so their numbers differ from nnabla's C++ generator); assigning ``nn.random.prng = rs``
replaces the parameters' generator, as in nnabla. ``nn.seed`` is :func:`seed`.

Example::

    >>> import numpy as np
    >>> import gradhub_compat.nnabla as nn
    >>> import gradhub_compat.nnabla.parametric_functions as PF
    >>> nn.random.seed(5)
    >>> h = PF.affine(nn.Variable((2, 3)), 2, name="fc")
    >>> nn.random.pseed, type(nn.random.prng).__name__
    (5, 'RandomState')
"""

from __future__ import annotations

import sys
import types
from typing import Any

import numpy as np
from gradhub_nn_ops import parametric as _parametric
from gradhub_nn_ops import stochastic as _stochastic

__all__ = ["pseed", "seed", "set_function_seed", "set_parameter_seed"]


def _check(where: str, seed_value: Any) -> int:
    if isinstance(seed_value, bool) or not isinstance(seed_value, (int, np.integer)):
        raise TypeError(f"nnabla.random.{where}: seed_value must be an int, got {seed_value!r}")
    return int(seed_value)


def set_parameter_seed(seed_value: int) -> None:
    """``prng`` (the parameters' and initializers' default generator) becomes
    ``numpy.random.RandomState(seed_value)``; ``pseed`` records the value."""
    value = _check("set_parameter_seed", seed_value)
    _parametric.seed(value)
    _module.__dict__["pseed"] = value


def set_function_seed(seed_value: int) -> None:
    """Reseed the global generator of the random functions (``seed=-1``): numpy's generator,
    so the numbers differ from nnabla's for the same seed."""
    _stochastic.seed_dropout(_check("set_function_seed", seed_value))


def seed(seed_value: int, set_function_seed: bool = True, set_parameter_seed: bool = True) -> None:
    """nnabla's ``nnabla.random.seed``: reseed the random functions' generator and/or ``prng``
    (see :func:`set_function_seed`, :func:`set_parameter_seed`)."""
    value = _check("seed", seed_value)
    if set_function_seed:
        _stochastic.seed_dropout(value)
    if set_parameter_seed:
        _parametric.seed(value)
        _module.__dict__["pseed"] = value


class _RandomModule(types.ModuleType):
    """The module, with ``prng`` read from and written to the parametric functions' generator."""

    @property
    def prng(self) -> np.random.RandomState:
        return _parametric.default_rng()

    @prng.setter
    def prng(self, rng: np.random.RandomState) -> None:
        if not isinstance(rng, np.random.RandomState):
            raise TypeError(
                f"nnabla.random.prng must be a numpy.random.RandomState, got {type(rng).__name__}"
            )
        _parametric.set_default_rng(rng)


pseed: int = 313
_module = sys.modules[__name__]
_module.__class__ = _RandomModule
