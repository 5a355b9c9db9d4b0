"""chainer's ``chainer.initializers``: fill a parameter's array in place, as chainer 7.8.1.

An initializer is a callable ``init(array)`` that writes into ``array``; :func:`generate_array`
makes an array of a shape and fills it. The random initializers draw from numpy's global
generator exactly as chainer does on the CPU (``numpy.random.normal(0, s, shape)`` and
``numpy.random.uniform(-s, s, shape)``, then cast to the array's dtype), so after the same
``numpy.random.seed`` a link gets the same initial values as in chainer, or from ``rng=`` (a
``numpy.random.RandomState``) when given.

Example::

    >>> import numpy as np
    >>> from gradhub_compat.chainer import initializers
    >>> a = initializers.generate_array(initializers.Constant(0.5), (2,), np)
    >>> a
    array([0.5, 0.5], dtype=float32)
    >>> np.random.seed(0)
    >>> w = initializers.generate_array(initializers.LeCunNormal(), (1, 4), np)
    >>> np.allclose(w, np.random.RandomState(0).normal(0, 0.5, (1, 4)))   # s = 1/sqrt(fan_in)
    True
"""

from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np

__all__ = [
    "Constant",
    "GlorotNormal",
    "GlorotUniform",
    "HeNormal",
    "HeUniform",
    "Initializer",
    "LeCunNormal",
    "LeCunUniform",
    "NaN",
    "Normal",
    "One",
    "Uniform",
    "Zero",
    "generate_array",
    "get_fans",
]


class Initializer:
    """Base of the initializers: ``init(array)`` fills ``array`` in place; ``dtype`` (or None)
    is the dtype of the arrays it makes (:func:`generate_array`)."""

    def __init__(self, dtype: Any = None) -> None:
        self.dtype = dtype

    def __call__(self, array: Any) -> None:
        raise NotImplementedError

    def _check(self, array: Any) -> None:
        if self.dtype is not None and np.dtype(array.dtype) != np.dtype(self.dtype):
            raise TypeError(
                f"chainer initializers.{type(self).__name__}: the array has dtype {array.dtype}, "
                f"the initializer {np.dtype(self.dtype)}"
            )


def get_fans(shape: tuple[int, ...]) -> tuple[int, int]:
    """``(fan_in, fan_out)`` of a weight shape ``(out, in, *kernel)``: ``in * prod(kernel)``
    and ``out * prod(kernel)``."""
    if not isinstance(shape, tuple):
        raise ValueError(f"shape must be tuple. Actual type: {type(shape)}")
    if len(shape) < 2:
        raise ValueError(f"shape must be of length >= 2. Actual shape: {shape}")
    field = math.prod(shape[2:])
    return shape[1] * field, shape[0] * field


def _xp(array: Any) -> Any:
    if isinstance(array, np.ndarray):
        return np
    import importlib

    return importlib.import_module(type(array).__module__.split(".")[0])


class Constant(Initializer):
    """Fill with ``fill_value`` (a scalar, or an array broadcast and cast to the array)."""

    fill_value: Any = None

    def __init__(self, fill_value: Any = None, dtype: Any = None) -> None:
        if fill_value is not None or type(self) is Constant:
            self.fill_value = fill_value
        if not (np.isscalar(self.fill_value) or hasattr(self.fill_value, "shape")):
            raise ValueError(
                "fill_value must be either scalar, numpy.ndarray, cupy.ndarray or chainerx.ndarray."
            )
        super().__init__(dtype)

    def __call__(self, array: Any) -> None:
        self._check(array)
        if hasattr(self.fill_value, "shape"):
            xp = _xp(array)
            array[...] = xp.asarray(self.fill_value).astype(array.dtype, copy=False)
        else:
            array[...] = self.fill_value


class Zero(Constant):
    """Fill with 0."""

    fill_value = 0.0

    def __init__(self, dtype: Any = None) -> None:
        super().__init__(None, dtype)


class One(Constant):
    """Fill with 1."""

    fill_value = 1.0

    def __init__(self, dtype: Any = None) -> None:
        super().__init__(None, dtype)


class NaN(Constant):
    """Fill with NaN (chainer's initial gradient of a parameter)."""

    fill_value = float("nan")

    def __init__(self, dtype: Any = None) -> None:
        super().__init__(None, dtype)


class Normal(Initializer):
    """Draw from N(0, ``scale``^2): ``numpy.random.normal(0, scale, shape)`` (or ``rng``)."""

    def __init__(self, scale: float = 0.05, dtype: Any = None, rng: Any = None) -> None:
        self.scale = scale
        self.rng = rng
        super().__init__(dtype)

    def __call__(self, array: Any) -> None:
        self._check(array)
        gen = self.rng if self.rng is not None else np.random
        values = gen.normal(loc=0.0, scale=self.scale, size=array.shape)
        array[...] = _xp(array).asarray(values.astype(array.dtype, copy=False))


class Uniform(Initializer):
    """Draw from U(-``scale``, ``scale``): ``numpy.random.uniform`` (or ``rng``)."""

    def __init__(self, scale: float = 0.05, dtype: Any = None, rng: Any = None) -> None:
        self.scale = scale
        self.rng = rng
        super().__init__(dtype)

    def __call__(self, array: Any) -> None:
        self._check(array)
        gen = self.rng if self.rng is not None else np.random
        values = gen.uniform(low=-self.scale, high=self.scale, size=array.shape)
        array[...] = _xp(array).asarray(values.astype(array.dtype, copy=False))


class _Scaled(Initializer):
    """``base(scale * sqrt(k / fan))``, the fan chosen by :meth:`_fan`."""

    _k = 1.0
    _base: type[Normal] | type[Uniform] = Normal

    def __init__(self, scale: float = 1.0, dtype: Any = None, rng: Any = None) -> None:
        self.scale = scale
        self.rng = rng
        super().__init__(dtype)

    def _fan(self, fan_in: int, fan_out: int) -> int:
        return fan_in

    def __call__(self, array: Any) -> None:
        self._check(array)
        fan_in, fan_out = get_fans(tuple(array.shape))
        s = self.scale * np.sqrt(self._k / self._fan(fan_in, fan_out))
        self._base(s, rng=self.rng)(array)


class LeCunNormal(_Scaled):
    """N(0, s^2), s = scale * sqrt(1 / fan_in) (chainer's default for weights)."""


class GlorotNormal(_Scaled):
    """N(0, s^2), s = scale * sqrt(2 / (fan_in + fan_out))."""

    _k = 2.0

    def _fan(self, fan_in: int, fan_out: int) -> int:
        return fan_in + fan_out


class HeNormal(_Scaled):
    """N(0, s^2), s = scale * sqrt(2 / fan) with fan ``fan_option`` ('fan_in' or 'fan_out')."""

    _k = 2.0

    def __init__(
        self, scale: float = 1.0, dtype: Any = None, fan_option: str = "fan_in", rng: Any = None
    ) -> None:
        self.fan_option = fan_option
        super().__init__(scale, dtype, rng)

    def _fan(self, fan_in: int, fan_out: int) -> int:
        if self.fan_option == "fan_in":
            return fan_in
        if self.fan_option == "fan_out":
            return fan_out
        raise ValueError("fan_option should be either 'fan_in' or 'fan_out'.")


class LeCunUniform(_Scaled):
    """U(-s, s), s = scale * sqrt(3 / fan_in)."""

    _k = 3.0
    _base = Uniform


class GlorotUniform(_Scaled):
    """U(-s, s), s = scale * sqrt(6 / (fan_in + fan_out))."""

    _k = 6.0
    _base = Uniform

    def _fan(self, fan_in: int, fan_out: int) -> int:
        return fan_in + fan_out


class HeUniform(_Scaled):
    """U(-s, s), s = scale * sqrt(6 / fan_in)."""

    _k = 6.0
    _base = Uniform


def generate_array(
    initializer: Any, shape: Any, xp: Any, dtype: Any = None, device: Any = None
) -> Any:
    """A new array of ``shape`` filled by ``initializer``; its dtype is ``dtype``, else the
    initializer's ``dtype``, else ``chainer.get_dtype()``: float32, chainer's default
    ``config.dtype`` (another ``config.dtype``, under which chainer makes parameters of that
    dtype, raises NotImplementedError naming the page); ``xp`` (numpy) makes the array,
    ``device`` (a gradhub device) receives it when given."""
    dtype_attr = getattr(initializer, "dtype", None)
    if dtype is not None and dtype_attr is not None and np.dtype(dtype) != np.dtype(dtype_attr):
        raise ValueError(f"dtype mismatch: {dtype} != {dtype_attr}")
    if dtype is None:
        dtype = dtype_attr
    if dtype is None:
        from .backend import get_dtype

        dtype = get_dtype()
    dtype = np.dtype(dtype)
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    array = np.empty(tuple(shape), dtype=dtype)
    initializer(array)
    if device is not None and device.kind != "cpu":
        with device.activate():
            return device.asarray(array)
    return array


def _get_initializer(initializer: Any) -> Any:
    """chainer's rule: None -> LeCunNormal(), an array or scalar -> Constant, else as given."""
    if initializer is None:
        return LeCunNormal()
    if np.isscalar(initializer) or hasattr(initializer, "shape"):
        return Constant(initializer)
    if not callable(initializer):
        raise TypeError(f"invalid type of initializer: {type(initializer)}")
    return initializer


# chainer's module paths of the initializers (``from chainer.initializers import constant``,
# then ``constant.Constant(1.0)``; ``normal.Normal``, ``uniform.Uniform``): this module
constant = normal = uniform = sys.modules[__name__]
