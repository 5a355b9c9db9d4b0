"""chainer's ``chainer.dataset.convert`` (chainer 7.8.1): :func:`concat_examples`,
:func:`to_device`, :class:`Converter` and the :func:`converter` decorator.

``concat_examples(batch, device=None, padding=None)`` turns a list of examples into arrays:
tuples into a tuple of arrays (one per position), dicts into a dict of arrays, anything else
into one array, each made by stacking along a new first axis (``xp.concatenate`` of
``a[None]``). With ``padding`` the arrays may differ in shape: the result has the elementwise
maximum shape, filled with ``padding`` outside the examples (a tuple or dict of paddings gives
one per position or key). ``device`` (chainer's specifiers: ``-1``, ``'@numpy'``,
``'@cupy:N'``, or a gradhub device) moves each array; None leaves it where it is.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gradhub.registry import REGISTRY

from .._device import get_device, get_device_of, send

__all__ = ["Converter", "concat_examples", "converter", "to_device"]


class Converter:
    """The base class of converters: ``converter(batch, device)`` gives the converted batch
    (``device`` a gradhub device or None)."""

    def __call__(self, batch: Any, device: Any) -> Any:
        raise NotImplementedError("Concrete class must implement __call__.")


class _ArbitraryCallableConverter(Converter):
    """A converter wrapping a callable; the device argument (second positional or
    ``device=``) is turned into chainer's device object first
    (:class:`gradhub_compat.chainer.backend.Device`, or None), as chainer does."""

    def __init__(self, base_callable: Any) -> None:
        if not callable(base_callable):
            raise TypeError(f"Can only wrap a callable. Actual: {type(base_callable)}")
        self.base_callable = base_callable

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if len(args) >= 2:
            args_l = list(args)
            args_l[1] = _chainer_device(args_l[1])
            args = tuple(args_l)
        elif "device" in kwargs:
            kwargs["device"] = _chainer_device(kwargs["device"])
        return self.base_callable(*args, **kwargs)


def converter() -> Any:
    """Decorator making a converter function ``f(batch, device)`` a :class:`Converter`
    (``@chainer.dataset.converter()``): its device argument arrives as chainer's device object
    (:class:`gradhub_compat.chainer.backend.Device`: ``device.send(array)``, ``device.xp``),
    or None, whatever specifier the caller gave, as in chainer.

    Example::

        >>> import numpy as np
        >>> from gradhub_compat import chainer
        >>> @chainer.dataset.converter()
        ... def first_only(batch, device):
        ...     return chainer.dataset.concat_examples([b[0] for b in batch], device)
        >>> first_only([(np.ones(2), 0)], "@numpy")
        array([[1., 1.]])
    """

    def wrap(func: Any) -> Converter:
        return _ArbitraryCallableConverter(func)

    return wrap


def _call_converter(converter: Any, batch: Any, device: Any) -> Any:
    """Call ``converter`` as chainer's updaters and evaluator do: a :class:`Converter` gets the
    device, a plain function ``-1`` for the CPU, the CUDA index for a CUDA device."""
    if isinstance(converter, Converter):
        return converter(batch, device)
    if device is None:
        return converter(batch, None)
    if device.kind == "cpu":
        return converter(batch, -1)
    if device.kind == "cuda":
        return converter(batch, device.index)
    raise RuntimeError(
        f"a converter that is not a chainer.dataset.Converter cannot send to {device.name!r}: "
        "use the chainer.dataset.converter decorator"
    )


def _chainer_device(spec: Any) -> Any:
    if spec is None:
        return None
    from ..backend import get_device as chainer_get_device

    return chainer_get_device(_get_device(spec))


def _get_device(spec: Any) -> Any:
    if spec is None:
        return None
    return get_device(spec, "chainer.dataset.convert")


def to_device(device: Any, x: Any) -> Any:
    """``x`` sent to ``device`` (chainer's specifiers; a negative int is the CPU); None leaves
    it where it is."""
    dev = _get_device(device)
    if dev is None:
        return x
    return send(x, dev)


def _is_array(a: Any) -> bool:
    return isinstance(a, np.ndarray) or type(a) in REGISTRY.by_array_type


def _xp_of(a: Any) -> tuple[Any, Any]:
    """(array module, device) of ``a`` (numpy and None for numpy arrays and scalars)."""
    if type(a) not in REGISTRY.by_array_type or isinstance(a, np.ndarray):
        return np, None
    dev = get_device_of(a)
    return dev.xp, dev


def _concat_arrays(arrays: Any, padding: Any) -> Any:
    if not _is_array(arrays[0]):
        arrays = np.asarray(arrays)
    if padding is not None:
        return _concat_arrays_with_padding(arrays, padding)
    xp, dev = _xp_of(arrays[0])
    if dev is None:
        return np.concatenate([a[None] for a in arrays])
    with dev.activate():
        return xp.concatenate([a[None] for a in arrays])


def _concat_arrays_with_padding(arrays: Any, padding: Any) -> Any:
    shape = np.array(arrays[0].shape, dtype=int)
    for array in arrays[1:]:
        if np.any(shape != array.shape):
            np.maximum(shape, array.shape, out=shape)
    full_shape = tuple(int(s) for s in np.insert(shape, 0, len(arrays)))
    xp, dev = _xp_of(arrays[0])

    def fill() -> Any:
        result = xp.full(full_shape, padding, dtype=arrays[0].dtype)
        for i in range(len(arrays)):
            src = arrays[i]
            slices = tuple(slice(dim) for dim in src.shape)
            result[(i,) + slices] = src
        return result

    if dev is None:
        return fill()
    with dev.activate():
        return fill()


def concat_examples_func(batch: Any, device: Any = None, padding: Any = None) -> Any:
    """See :data:`concat_examples` (this is the function it wraps: ``device`` a gradhub device
    or None)."""
    if not batch:
        raise ValueError("batch is empty")
    first_elem = batch[0]
    if isinstance(first_elem, tuple):
        if not isinstance(padding, tuple):
            padding = [padding] * len(first_elem)
        return tuple(
            to_device(device, _concat_arrays([example[i] for example in batch], padding[i]))
            for i in range(len(first_elem))
        )
    if isinstance(first_elem, dict):
        if not isinstance(padding, dict):
            padding = {key: padding for key in first_elem}
        return {
            key: to_device(
                device, _concat_arrays([example[key] for example in batch], padding[key])
            )
            for key in first_elem
        }
    return to_device(device, _concat_arrays(batch, padding))


#: ``concat_examples(batch, device=None, padding=None)``: chainer's default converter (a
#: :class:`Converter`; see the module docstring).
concat_examples = _ArbitraryCallableConverter(concat_examples_func)
