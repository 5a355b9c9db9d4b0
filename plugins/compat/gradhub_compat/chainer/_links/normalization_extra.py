"""chainer 7.8.1's ``chainer/links/normalization`` links ``BatchRenormalization`` and
``DecorrelatedBatchNormalization`` (re-exported by :mod:`gradhub_compat.chainer.links`).

Both keep chainer's persistent values (their ``save_npz`` keys): ``avg_mean``, ``avg_var``
and ``N`` (with the parameters ``gamma``, ``beta``) for the first, ``avg_mean``,
``avg_projection`` and ``N`` for the second.

Example::

    >>> import numpy as np
    >>> from gradhub_compat import chainer
    >>> import gradhub_compat.chainer.links as L
    >>> bn = L.DecorrelatedBatchNormalization(2, groups=1)
    >>> with chainer.using_config("train", False):
    ...     bn(np.array([[1.0, 2.0]], np.float32))
    variable([[1., 2.]])
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import Variable, config
from .. import functions as F
from ..link import Link
from ..links import BatchNormalization
from ..serializers import NpzDeserializer
from ._common import _reject_kwargs, _running_decay

__all__ = ["BatchRenormalization", "DecorrelatedBatchNormalization"]


class BatchRenormalization(BatchNormalization):
    """``BatchRenormalization(size, rmax=1, dmax=0, decay=0.9, eps=2e-5, dtype=None,
    use_gamma=True, use_beta=True, initial_gamma=None, initial_beta=None,
    initial_avg_mean=None, initial_avg_var=None)``: batch renormalization, a
    :class:`~gradhub_compat.chainer.links.BatchNormalization` whose training mode is
    ``F.batch_renormalization`` (with the batch statistics ``mean``, ``var`` and the running
    ones, ``r = clip(sqrt(var + eps) / sqrt(avg_var + eps), 1 / rmax, rmax)``,
    ``d = clip((mean - avg_mean) / sqrt(avg_var + eps), -dmax, dmax)``,
    ``y = gamma ((x - mean) / sqrt(var + eps) r + d) + beta``, ``r`` and ``d`` constants of the
    gradient) and updates ``avg_mean``/``avg_var`` (``decay``, or ``finetune=True``'s running
    average over ``N`` calls); test mode is ``F.fixed_batch_normalization`` with them.

    As chainer 7.8.1, the constructor hands ``initial_avg_mean`` and ``initial_avg_var`` to
    ``BatchNormalization`` in the places of ``axis`` and ``initial_avg_mean``: the running mean
    starts from ``initial_avg_var`` (zeros when None), the running variance from ones, and
    ``initial_avg_mean`` is kept as ``axis`` (unused, ``size`` being given). The statistics
    are normalized over every axis but those of ``gamma``, which follow the batch axis.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.links as L
        >>> brn = L.BatchRenormalization(1, eps=0.0)
        >>> brn(np.array([[1.0], [3.0]], np.float32))
        variable([[-1.],
                  [ 1.]])
    """

    def __init__(
        self,
        size: Any,
        rmax: float = 1,
        dmax: float = 0,
        decay: float = 0.9,
        eps: float = 2e-5,
        dtype: Any = None,
        use_gamma: bool = True,
        use_beta: bool = True,
        initial_gamma: Any = None,
        initial_beta: Any = None,
        initial_avg_mean: Any = None,
        initial_avg_var: Any = None,
    ) -> None:
        # positional, as chainer 7.8.1 (see the class docstring)
        super().__init__(
            size,
            decay,
            eps,
            dtype,
            use_gamma,
            use_beta,
            initial_gamma,
            initial_beta,
            initial_avg_mean,
            initial_avg_var,
        )
        self.rmax = rmax  # maximum allowed correction of the variance
        self.dmax = dmax  # maximum allowed correction of the mean
        self.r = None
        self.d = None
        self._prev_avg_mean: Any = None
        self._prev_avg_var: Any = None

    def forward(self, x: Any, finetune: bool = False) -> Variable:  # type: ignore[override]
        """Renormalize ``x`` with the batch statistics (training mode, updating the running
        ones) or normalize it with ``avg_mean``/``avg_var`` (test mode)."""
        xp = self.xp
        xdt = x.dtype if hasattr(x, "dtype") else np.asarray(x).dtype
        gamma = self.gamma
        if gamma is None:
            gamma = xp.ones(self.avg_mean.shape, dtype=xdt)
        beta = self.beta
        if beta is None:
            beta = xp.zeros(self.avg_mean.shape, dtype=xdt)
        if not config.train:
            return F.fixed_batch_normalization(
                x, gamma, beta, self.avg_mean, self.avg_var, self.eps
            )
        decay = _running_decay(self, finetune)
        avg_mean, avg_var = self.avg_mean, self.avg_var
        update_statistics = True
        if config.in_recomputing:
            # F.forget's second pass: the statistics as they were before the first one
            if finetune:
                self.N -= 1
            avg_mean, avg_var = self._prev_avg_mean, self._prev_avg_var
            update_statistics = False
        elif getattr(config, "_will_recompute", False):
            self._prev_avg_mean = avg_mean.copy()
            self._prev_avg_var = avg_var.copy()
        return F.batch_renormalization(
            x,
            gamma,
            beta,
            self.rmax,
            self.dmax,
            self.eps,
            avg_mean,
            avg_var,
            decay,
            update_statistics=update_statistics,
        )


def _warn_old_model() -> None:
    warnings.warn(
        "Found moving statistics of old DecorrelatedBatchNormalization, whose algorithm was "
        "different from the paper.",
        stacklevel=3,
    )


def fix_avg_mean(avg_mean: np.ndarray, groups: int) -> np.ndarray:
    """A stored ``avg_mean``: (groups, C / groups), or chainer's older (C / groups,), which is
    broadcast (with a warning when ``groups != 1``)."""
    if avg_mean.ndim == 2:
        return avg_mean
    if avg_mean.ndim == 1:
        if groups != 1:
            _warn_old_model()
        return np.broadcast_to(avg_mean, (groups, *avg_mean.shape))
    raise ValueError("unexpected shape of avg_mean")


def fix_avg_projection(avg_projection: np.ndarray, groups: int) -> np.ndarray:
    """A stored ``avg_projection``: (groups, C', C'), or chainer's older (C', C')."""
    if avg_projection.ndim == 3:
        return avg_projection
    if avg_projection.ndim == 2:
        if groups != 1:
            _warn_old_model()
        return np.broadcast_to(avg_projection, (groups, *avg_projection.shape))
    raise ValueError("unexpected shape of avg_projection")


class _PatchedDeserializer:
    """A deserializer reading the keys of ``patches`` through their patch (chainer's
    ``_PatchedDeserializer``), the others as ``base``."""

    def __init__(self, base: Any, patches: dict[str, Callable[[np.ndarray], np.ndarray]]):
        self.base = base
        self.patches = patches

    def __repr__(self) -> str:
        return f"_PatchedDeserializer({self.base!r}, {self.patches!r})"

    def __getitem__(self, key: str) -> Any:
        return self.base[key]

    def __call__(self, key: str, value: Any) -> Any:
        if key not in self.patches:
            return self.base(key, value)
        arr = self.base(key, None)
        if arr is None:  # (strict=False, missing)
            return value
        arr = self.patches[key](np.asarray(arr))
        if value is None:
            return arr
        np.copyto(value, arr)  # (the persistent arrays come as host arrays)
        return value


class DecorrelatedBatchNormalization(Link):
    """``DecorrelatedBatchNormalization(size, groups=16, decay=0.9, eps=2e-5,
    dtype=numpy.float32)``: decorrelated batch normalization (ZCA whitening of each of
    ``groups`` groups of ``size / groups`` channels), no parameters; the persistent
    ``avg_mean`` (groups, C) (zeros), ``avg_projection`` (groups, C, C) (identities) and
    ``N``, ``C = size // groups``.

    Training mode: ``F.decorrelated_batch_normalization(x, groups=groups, eps=eps,
    running_mean=avg_mean, running_projection=avg_projection, decay=decay)`` (the statistics
    updated in place; ``finetune=True`` uses ``decay = 1 - 1 / N``, not while
    ``chainer.config.in_recomputing``); its gradient, chainer's, is first order only. Test
    mode: ``F.fixed_decorrelated_batch_normalization(x, avg_mean, avg_projection, groups)``.
    ``load_npz`` accepts chainer's older files, whose ``avg_mean`` (C,) and
    ``avg_projection`` (C, C) are broadcast over the groups (with chainer's warning when
    ``groups != 1``).
    """

    def __init__(
        self,
        size: int,
        groups: int = 16,
        decay: float = 0.9,
        eps: float = 2e-5,
        dtype: Any = np.float32,
    ) -> None:
        super().__init__()
        c = size // groups
        self.avg_mean = np.zeros((groups, c), dtype=dtype)
        self.register_persistent("avg_mean")
        avg_projection = np.zeros((groups, c, c), dtype=dtype)
        ar = np.arange(c)
        avg_projection[:, ar, ar] = 1
        self.avg_projection = avg_projection
        self.register_persistent("avg_projection")
        self.N = 0
        self.register_persistent("N")
        self.decay = decay
        self.eps = eps
        self.groups = groups

    def serialize(self, serializer: Any) -> None:
        """chainer's keys; a deserializer reads chainer's older statistics too."""
        if isinstance(serializer, NpzDeserializer):
            serializer = _PatchedDeserializer(
                serializer,
                {
                    "avg_mean": functools.partial(fix_avg_mean, groups=self.groups),
                    "avg_projection": functools.partial(fix_avg_projection, groups=self.groups),
                },
            )
        super().serialize(serializer)

    def forward(self, x: Any, **kwargs: Any) -> Variable:
        """``forward(x, finetune=False)``: whiten ``x`` (see the class)."""
        finetune = kwargs.pop("finetune", False)
        _reject_kwargs("DecorrelatedBatchNormalization", kwargs)
        if not config.train:
            return F.fixed_decorrelated_batch_normalization(
                x, self.avg_mean, self.avg_projection, groups=self.groups
            )
        decay = _running_decay(self, finetune)
        avg_mean: Any = self.avg_mean
        avg_projection: Any = self.avg_projection
        if config.in_recomputing:
            # F.forget's second pass: the first one updated the statistics
            if finetune:
                self.N -= 1
            avg_mean = avg_projection = None
        return F.decorrelated_batch_normalization(
            x,
            groups=self.groups,
            eps=self.eps,
            running_mean=avg_mean,
            running_projection=avg_projection,
            decay=decay,
        )

    def start_finetuning(self) -> None:
        """Restart the statistics average of ``finetune=True`` (``N = 0``)."""
        self.N = 0
