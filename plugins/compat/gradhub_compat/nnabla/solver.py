"""nnabla's ``nnabla.solver`` module: ``import gradhub_compat.nnabla.solver as S``.

In nnabla, ``nnabla.solver`` is the module that defines the solvers and ``nnabla.solvers``
re-exports it (``nnabla.solver.Adam is nnabla.solvers.Adam``); several of nnabla's example
programs import the former. Here both give the same objects, those of
:mod:`gradhub_compat.nnabla.solvers`.

Example::

    >>> import gradhub_compat.nnabla.solver as S
    >>> import gradhub_compat.nnabla.solvers as solvers
    >>> S.Adam is solvers.Adam
    True
"""

from __future__ import annotations

from .solvers import *  # noqa: F403
from .solvers import __all__ as __all__
