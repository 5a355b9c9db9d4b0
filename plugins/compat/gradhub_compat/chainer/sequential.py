"""chainer's ``chainer.Sequential`` (chainer 7.8.1 ``chainer/sequential.py``).

``Sequential(*layers)``: a :class:`~gradhub_compat.chainer.link.ChainList` whose ``forward``
calls its layers (links or any callables) in turn, a tuple result being unpacked into the next
layer's arguments. Indexing, ``len``, iteration, ``in`` are over the layers; the links among them
are the children (``/0``, ``/1``... numbered among the links only, as chainer's parameter paths).

Example::

    >>> import numpy as np
    >>> from gradhub_compat import chainer
    >>> import gradhub_compat.chainer.functions as F
    >>> import gradhub_compat.chainer.links as L
    >>> np.random.seed(0)
    >>> model = chainer.Sequential(L.Linear(3, 4), F.relu, L.Linear(4, 2))
    >>> model(np.ones((1, 3), np.float32)).shape
    (1, 2)
    >>> len(model), [name for name, _ in model.namedparams()]
    (3, ['/0/W', '/0/b', '/1/W', '/1/b'])
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from typing import Any

from .link import ChainList, Link

__all__ = ["Sequential"]


class Sequential(ChainList):
    """``Sequential(*layers)``: see the module docstring. ``append``, ``extend``,
    ``insert(i, layer)``, ``remove``, ``remove_by_layer_type``, ``pop``, ``clear``, ``index``,
    ``count``, ``count_by_layer_type``, ``flatten``, ``+``/``+=``, ``seq[i] = layer``,
    ``del seq[i]``, as chainer's."""

    def __init__(self, *layers: Any) -> None:
        super().__init__()
        self._layers: list[Any] = []
        for layer in layers:
            self.append(layer)

    def __len__(self) -> int:
        return len(self._layers)

    def __getitem__(self, i: Any) -> Any:
        return self._layers[i]

    def __setitem__(self, i: Any, layer: Any) -> None:
        if i >= len(self):
            raise ValueError(f"{i} should be less than {len(self)}")
        if not callable(layer):
            raise ValueError(
                "All elements of a Sequential class should be callable. But given "
                f"{layer} is not callable."
            )
        if self._layers[i] is not layer:
            del self[i]
            self.insert(i, layer)

    def __delitem__(self, i: Any) -> None:
        layer = self._layers.pop(i)
        if isinstance(layer, Link):
            for k, link in enumerate(self._children):
                if link.name == layer.name:
                    del self._children[k]
                    break
            for j, child in enumerate(self._children[k:]):
                child.name = str(k + j)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._layers)

    def __reversed__(self) -> Iterator[Any]:
        return reversed(self._layers)

    def __contains__(self, item: Any) -> bool:
        return item in self._layers

    def __add__(self, other: Any) -> Sequential:
        if not isinstance(other, Sequential):
            raise ValueError(
                "add (+) operator supports only objects of Sequential class, but "
                f"{type(other)} is given."
            )
        ret = Sequential()
        for layer in self:
            ret.append(layer)
        for layer in other:
            ret.append(layer)
        return ret

    def __iadd__(self, other: Any) -> Sequential:
        if not isinstance(other, Sequential):
            raise ValueError(
                "add (+) operator supports only objects of Sequential class, but "
                f"{type(other)} is given."
            )
        for layer in other:
            self.append(layer)
        return self

    def forward(self, *x: Any) -> Any:
        """Call the layers in turn (a tuple result is unpacked into the next call)."""
        if not self._layers:
            raise RuntimeError("Sequential does not have any layer.")
        out: Any = x
        for layer in self._layers:
            out = layer(*out) if isinstance(out, tuple) else layer(out)
        return out

    def __str__(self) -> str:
        reps = []
        for index, layer in enumerate(self):
            if getattr(layer, "__name__", None) == "<lambda>":
                rep = inspect.getsource(layer).strip().rstrip(",")
            else:
                rep = str(layer)
            for line in f"({index}): {rep},".splitlines():
                reps.append(f"  {line}\n")
        body = "".join(reps)
        return f"{type(self).__name__}({chr(10) + body if body else ''})"

    def append(self, layer: Any) -> None:
        """Append ``layer`` (a link or a callable)."""
        self.insert(len(self), layer)

    def extend(self, sequential: Any) -> None:
        """Append each layer of ``sequential``."""
        for layer in sequential:
            self.append(layer)

    def insert(self, i: int, layer: Any) -> None:
        """Insert ``layer`` at ``i`` (IndexError out of range, ValueError when not callable);
        a link becomes a child, the children renamed ``0``, ``1``... as chainer does."""
        n = len(self._layers)
        if not (-n <= i < (n + 1)):
            raise IndexError(f"Index out of range: {i}")
        if i < 0:
            i += n
        if not callable(layer):
            raise ValueError(
                "All elements of the argument should be callable. But given "
                f"{layer} is not callable."
            )
        self._layers.insert(i, layer)
        if isinstance(layer, Link):
            if i == 0:
                self._children.insert(0, layer)
            else:
                # chainer's position rule, kept as it is: after the first link before i
                last_link_pos = 0
                for j in range(i - 1, -1, -1):
                    if isinstance(self._layers[j], Link):
                        last_link_pos = j
                self._children.insert(last_link_pos + 1, layer)
            for k, child in enumerate(self._children):
                child.name = str(k)

    def remove(self, layer: Any) -> None:
        """Remove ``layer`` (ValueError when absent)."""
        if layer not in self:
            raise ValueError(f"There is no layer object that is same as {layer}")
        del self[self.index(layer)]

    def remove_by_layer_type(self, type_name: str) -> None:
        """Remove the layers whose class name (links) or ``__name__`` is ``type_name``."""
        names = []
        for layer in self:
            name = type(layer).__name__ if isinstance(layer, Link) else layer.__name__
            names.append((name, layer))
        for name, layer in names:
            if type_name == name:
                self.remove(layer)

    def pop(self, i: int = -1) -> Any:
        """Remove and return the layer at ``i``."""
        layer = self._layers[i]
        del self[i]
        return layer

    def clear(self) -> None:
        """Remove every layer (and every child link: chainer's own ``clear`` skips every
        other child while deleting, leaving their parameters registered)."""
        self._children.clear()
        self._layers = []

    def index(self, layer: Any, start: int | None = None, end: int | None = None) -> int:
        """The position of ``layer``."""
        return self._layers[start:end].index(layer)

    def count(self, layer: Any) -> int:
        """How many times ``layer`` occurs."""
        return self._layers.count(layer)

    def count_by_layer_type(self, type_name: str) -> int:
        """How many layers have the class name (links) or ``__name__`` ``type_name``."""
        num = 0
        for layer in self._layers:
            name = type(layer).__name__ if isinstance(layer, Link) else layer.__name__
            if name == type_name:
                num += 1
        return num

    def copy(self, mode: str = "share") -> Sequential:
        """A copy (chainer's ``Sequential.copy``): the links copied with ``mode``, the other
        callables shared."""
        ret = Sequential()
        for layer in self:
            if isinstance(layer, Link):
                ret.append(layer.copy(mode))
            else:
                ret.append(layer)
        return ret

    def copyparams(self, link: Any, copy_persistent: bool = True) -> None:
        """Copy the parameters of the links of ``link`` (a Sequential) position by position."""
        if not isinstance(link, Sequential):
            raise ValueError(
                "Objects other than Sequential object cannot be copied to a Sequential object."
            )
        for idx, child in enumerate(self):
            if isinstance(child, Link):
                child.copyparams(link[idx], copy_persistent)

    def flatten(self) -> Sequential:
        """The layers of nested Sequentials brought to one level."""
        ret = Sequential()
        for layer in self:
            if isinstance(layer, Sequential):
                ret.extend(layer.flatten())
            else:
                ret.append(layer)
        return ret
